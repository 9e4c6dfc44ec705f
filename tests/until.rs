//! `load --until`: a load that ends once its figures have converged, against the test
//! server; one whose conditions cannot hold in its time says so; bad conditions are
//! refused before anything runs.

mod common;

use assert_cmd::Command;
use shootout_testserver::{Behavior, TestServer};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

fn load_json(args: &[&str]) -> (serde_json::Value, std::process::Output) {
    let out = shootout()
        .args(["load", "--json", "-q"])
        .args(args)
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (doc, out)
}

/// A steady server's median is known within ±50% in a few seconds: the load ends there,
/// long before its 60 s, with the reading that held.
#[test]
fn a_load_ends_once_its_conditions_hold() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let (doc, out) = load_json(&[
        "--until",
        "p50±50%,rps±50%",
        "-d",
        "60s",
        "-c",
        "2",
        &server.url("/"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let u = &doc["until"];
    assert_eq!(u["converged"], true, "{u}");
    let after = u["after_s"].as_f64().unwrap();
    assert!((3.0..30.0).contains(&after), "{u}");
    let ran = doc["duration_s"].as_f64().unwrap();
    assert!(
        ran >= after && ran < after + 2.0,
        "ran {ran} s, converged after {after} s"
    );
    assert_eq!(doc["interrupted"], false);
    let readings = u["readings"].as_array().unwrap();
    assert_eq!(readings[0]["condition"], "p50±50%");
    assert_eq!(readings[1]["condition"], "rps±50%");
    for r in readings {
        assert_eq!(r["held"], true, "{r}");
        let [lo, hi] = [
            r["ci95"][0].as_f64().unwrap(),
            r["ci95"][1].as_f64().unwrap(),
        ];
        let v = r["value"].as_f64().unwrap();
        assert!(
            lo <= v && v <= hi && hi - v <= 0.5 * v && v - lo <= 0.5 * v,
            "{r}"
        );
    }
}

/// An interval of ±0.01% around p99.9 is not reached in 3 s: the load runs its time and
/// says it did not converge (in the text report too).
#[test]
fn a_load_whose_conditions_do_not_hold_runs_its_time_and_says_so() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let (doc, out) = load_json(&["--until", "p99.9±0.01%", "-d", "3s", &server.url("/")]);
    assert!(out.status.success());
    assert_eq!(doc["until"]["converged"], false, "{}", doc["until"]);
    assert_eq!(doc["until"]["after_s"], serde_json::Value::Null);
    assert_eq!(doc["until"]["readings"][0]["held"], false);
    assert!(doc["duration_s"].as_f64().unwrap() >= 2.9);
    let text = shootout()
        .args([
            "load",
            "-q",
            "--until",
            "p99.9±0.01%",
            "-d",
            "3s",
            &server.url("/"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("did not converge in 3.0 s: p99.9 "), "{text}");
}

#[test]
fn bad_conditions_are_refused_before_anything_runs() {
    for (args, says) in [
        (vec!["--until", "p99", "-d", "10s"], "p99±5%"),
        (vec!["--until", "p99±5%", "-n", "100"], "give -d"),
        (vec!["--until", "p99±5%", "-d", "1s"], "give -d 3s or more"),
        (
            vec![
                "--until",
                "p99±5%",
                "-d",
                "10s",
                "--find-max",
                "--slo",
                "p99<10ms",
            ],
            "drop --until or --find-max",
        ),
    ] {
        let out = shootout()
            .arg("load")
            .args(&args)
            .arg("http://127.0.0.1:9/")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A plan with `until`: `duration` and the run's store, as `shootout run` leaves them.
struct Planned {
    dir: tempfile::TempDir,
}

impl Planned {
    /// Runs a one-contender plan against `url`, each step at most `duration`, the workload's
    /// `until` as given; asserts the run succeeded.
    fn run(url: &str, duration: &str, until: &str) -> (Planned, String) {
        let dir = tempfile::tempdir().unwrap();
        let plan = format!(
            "name = \"until\"\n[defaults]\nwarmup = 0\nduration = \"{duration}\"\nrepeat = 1\ncooldown = \"0s\"\n\n[[contender]]\nname = \"hello\"\nurl = \"{}\"\n\n[[workload]]\nname = \"home\"\npath = \"/\"\nuntil = \"{until}\"\n\n[load]\nconcurrency = [2]\n",
            url.trim_end_matches('/')
        );
        std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
        let out = shootout()
            .arg("run")
            .arg(dir.path().join("plan.toml"))
            .arg("--db")
            .arg(dir.path().join("s.db"))
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}");
        (Planned { dir }, said)
    }

    /// `shootout report` of the run in `format`.
    fn report(&self, format: &str) -> String {
        let out = shootout()
            .args(["report", "-f", format, "--db"])
            .arg(self.dir.path().join("s.db"))
            .output()
            .unwrap();
        common::assert_ok(&out);
        String::from_utf8(out.stdout).unwrap()
    }

    /// `shootout report --html` of the run: the page.
    fn html(&self) -> String {
        let page = self.dir.path().join("report.html");
        let out = shootout()
            .arg("report")
            .arg("--html")
            .arg(&page)
            .arg("--db")
            .arg(self.dir.path().join("s.db"))
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read_to_string(page).unwrap()
    }
}

/// A plan step with `until` ends once its conditions hold, long before its 60 s; the
/// store keeps when, and each condition's reading; the step's line, the JSON report and
/// the CSV say it converged, and no report warns.
#[test]
fn a_plan_step_ends_once_its_conditions_hold_and_the_store_keeps_it() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let (p, said) = Planned::run(&server.url("/"), "60s", "p50±50%,rps±50%");
    assert!(said.contains(", converged after "), "{said}");
    let store = shootout_store::Store::open_existing(&p.dir.path().join("s.db")).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    let u = steps[0]
        .result
        .until
        .as_ref()
        .expect("the step's conditions");
    let after = u.converged.expect("converged").as_secs_f64();
    assert!((3.0..30.0).contains(&after), "converged after {after} s");
    assert!(steps[0].result.duration.as_secs_f64() < after + 2.0);
    let names: Vec<String> = u.conditions.iter().map(|c| c.to_string()).collect();
    assert_eq!(names, ["p50±50%", "rps±50%"]);
    assert!(u
        .last
        .iter()
        .zip(&u.conditions)
        .all(|(r, c)| r.unwrap().holds(c)));

    let doc: serde_json::Value = serde_json::from_str(&p.report("json")).unwrap();
    let step = &doc["steps"][0];
    assert_eq!(step["until"]["converged"], true, "{step}");
    // A share of the figure, within the condition's ±50 %; 0 when the interval's two
    // order statistics are one recorded value (a fast server's medians often are).
    let width = step["until"]["readings"][0]["half_width"].as_f64().unwrap();
    assert!((0.0..=0.5).contains(&width), "{width}");
    assert!(!p.report("text").contains("did not converge"));
    let csv = p.report("csv");
    let (head, row) = (csv.lines().next().unwrap(), csv.lines().nth(1).unwrap());
    let at = head.split(',').position(|c| c == "until").unwrap();
    assert_eq!(row.split(',').nth(at), Some("converged"), "{csv}");
}

/// A step whose conditions cannot hold in its 3 s runs them and says so plainly: on its
/// line, as the `not_converged` warning of every report, and in the CSV's `until`.
#[test]
fn a_plan_step_that_does_not_converge_says_so_in_every_report() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let (p, said) = Planned::run(&server.url("/"), "3s", "p99.9±0.01%");
    assert!(said.contains("⚠ did not converge in 3.0 s"), "{said}");
    let text = p.report("text");
    assert!(
        text.contains("did not converge in 3.0 s: p99.9±0.01%"),
        "{text}"
    );
    assert!(p.report("markdown").contains("did not converge in 3.0 s"));
    assert!(p.html().contains("The step did not converge in its time"));
    let doc: serde_json::Value = serde_json::from_str(&p.report("json")).unwrap();
    let step = &doc["steps"][0];
    assert_eq!(step["until"]["converged"], false, "{step}");
    assert_eq!(step["until"]["after_s"], serde_json::Value::Null);
    let kinds: Vec<&str> = step["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"not_converged"), "{kinds:?}");
    let csv = p.report("csv");
    assert!(csv.contains(",not_converged,,p99.9±0.01%="), "{csv}");
}

/// `--warmup auto`: the warm-up lasts until the last 10 s of its per-second p99 and
/// answers a second show no trend. A level server is level at the first look (about
/// 10 s); a cold cache (20 ms falling to none over 3,000 requests: some 15 s at 2
/// connections, then a jump to full speed) is not while its latency falls nor while the
/// jump is in the seconds tested, so its warm-up, as reported, is longer.
#[test]
fn an_automatic_warm_up_lasts_until_level_and_longer_on_a_cold_cache() {
    let took = |server: &TestServer| {
        let (doc, out) = load_json(&["--warmup", "auto", "-d", "3s", "-c", "2", &server.url("/")]);
        common::assert_ok(&out);
        let w = &doc["warm_up"];
        assert_eq!(w["level"], true, "{w}");
        w["took_s"].as_f64().unwrap()
    };
    let level = took(&TestServer::start(Behavior::Hello).unwrap());
    let cold = took(
        &TestServer::start(Behavior::ColdCache {
            cold: std::time::Duration::from_millis(20),
            requests: 3_000,
        })
        .unwrap(),
    );
    assert!((10.0..30.0).contains(&level), "level server: {level} s");
    assert!(
        cold > level + 3.0,
        "cold cache warmed up in {cold} s, level server in {level} s"
    );
}
