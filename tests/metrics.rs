//! `--metrics-listen` end to end: `shootout load` and `shootout run` against in-process test
//! servers, scraped over HTTP while they run, as Prometheus would scrape them. Each page
//! must parse as Prometheus' text format, its counters may only grow from one scrape to
//! the next, and the final report holds at least what the last scrape showed.

mod common;

use shootout_testserver::{Behavior, TestServer};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A server slow enough (2 ms an answer) that a load lasts a while for few requests.
fn server() -> TestServer {
    TestServer::start(Behavior::StallEvery {
        n: 1,
        stall: Duration::from_millis(2),
    })
    .unwrap()
}

/// Starts `shootout ARGS`; returns it, the metrics address it printed on stderr, and a
/// channel that gets all of its stderr once it ends.
fn start(args: &[&str]) -> (Child, SocketAddr, mpsc::Receiver<String>) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (addr_tx, addr_rx) = mpsc::channel();
    let (all_tx, all_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in stderr.lines() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix("metrics on http://") {
                let _ = addr_tx.send(rest.trim_end_matches("/metrics").to_string());
            }
            all.push_str(&line);
            all.push('\n');
        }
        let _ = all_tx.send(all);
    });
    let Ok(addr) = addr_rx.recv_timeout(Duration::from_secs(60)) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no metrics address on stderr: {:?}", all_rx.recv());
    };
    (child, addr.parse().unwrap(), all_rx)
}

/// GET /metrics; the body, or `None` once the command has stopped serving.
fn scrape(addr: SocketAddr) -> Option<String> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: shootout\r\n\r\n")
        .ok()?;
    let mut answer = String::new();
    c.read_to_string(&mut answer).ok()?;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("\r\nContent-Type: text/plain; version=0.0.4"));
    Some(answer.split_once("\r\n\r\n").unwrap().1.to_string())
}

/// A page parsed: each sample's `name{labels}` and value. Asserts what Prometheus' parser
/// would: every sample belongs to a metric declared by `# TYPE` before it, its labels are
/// well formed, its value a number; and, per histogram, cumulative buckets that end at
/// `+Inf` equal to `_count`.
fn parse(page: &str) -> BTreeMap<String, f64> {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = BTreeMap::new();
    for line in page.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            types.insert(name.into(), kind.into());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let name = key.split('{').next().unwrap();
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|b| types.get(*b).is_some_and(|k| k == "histogram"))
            })
            .unwrap_or(name);
        assert!(types.contains_key(base), "{name} has no # TYPE before it");
        if let Some(labels) = key.strip_prefix(name) {
            if !labels.is_empty() {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
                for pair in labels[1..labels.len() - 1].split("\",") {
                    let (k, v) = pair.split_once("=\"").unwrap_or_else(|| panic!("{line}"));
                    assert!(
                        k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                        "{line}"
                    );
                    assert!(!v.contains('\n'), "{line}");
                }
            }
        }
        let v: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        assert!(samples.insert(key.to_string(), v).is_none(), "{key} twice");
    }
    check_histograms(&samples);
    samples
}

/// Buckets in `le` order never decrease, and `+Inf` is the count (of every histogram the
/// page has: none before the first load begins).
fn check_histograms(samples: &BTreeMap<String, f64>) {
    let mut buckets: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (key, v) in samples {
        let Some((series, le)) = key.split_once("_bucket{").and_then(|(n, rest)| {
            let (labels, le) = rest.rsplit_once("le=\"")?;
            Some((
                format!("{n}{{{labels}"),
                le.trim_end_matches("\"}").to_string(),
            ))
        }) else {
            continue;
        };
        let le = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().unwrap()
        };
        buckets.entry(series).or_default().push((le, *v));
    }
    for (series, mut b) in buckets {
        b.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert!(b.windows(2).all(|w| w[0].1 <= w[1].1), "{series}: {b:?}");
        let count_key = format!(
            "{}_count{}",
            series
                .split('{')
                .next()
                .unwrap()
                .trim_end_matches("_bucket"),
            series
                .split_once('{')
                .map(|(_, l)| l.trim_end_matches(','))
                .filter(|l| !l.is_empty())
                .map(|l| format!("{{{l}}}"))
                .unwrap_or_default()
        );
        assert_eq!(
            Some(&b.last().unwrap().1),
            samples.get(&count_key),
            "{count_key}"
        );
    }
}

/// Scrapes `addr` until the command stops serving (at most 600 times); returns the pages,
/// parsed, that showed a request.
fn scrape_while_it_runs(addr: SocketAddr) -> Vec<BTreeMap<String, f64>> {
    let mut pages = Vec::new();
    for _ in 0..600 {
        let Some(page) = scrape(addr) else { break };
        let parsed = parse(&page);
        if parsed
            .iter()
            .any(|(k, v)| k.starts_with("shootout_requests_total") && *v > 0.0)
        {
            assert!(parsed.keys().any(|k| k.contains("_bucket{")), "{page}");
            pages.push(parsed);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    pages
}

/// Every counter of `later` is at least what `earlier` showed.
fn grew(earlier: &BTreeMap<String, f64>, later: &BTreeMap<String, f64>) {
    for (key, v) in earlier {
        if key.starts_with("shootout_step_active") {
            continue;
        }
        let now = later
            .get(key)
            .unwrap_or_else(|| panic!("{key} went missing"));
        assert!(now >= v, "{key} went from {v} to {now}");
    }
}

#[test]
fn a_load_is_scraped_while_it_runs_and_its_counters_only_grow() {
    let s = server();
    let url = s.url("/");
    let (child, addr, stderr) = start(&[
        "load",
        "-d",
        "3s",
        "-c",
        "2",
        "--json",
        "--metrics-listen",
        "127.0.0.1:0",
        &url,
    ]);
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    let pages = scrape_while_it_runs(addr);
    let out = child.wait_with_output().unwrap();
    let stderr = stderr.recv().unwrap();
    assert!(out.status.success(), "{stderr}");
    assert!(
        pages.len() >= 2,
        "scraped {} pages with requests",
        pages.len()
    );
    for w in pages.windows(2) {
        grew(&w[0], &w[1]);
    }
    let (first, last) = (&pages[0], pages.last().unwrap());
    let ok = "shootout_requests_total{outcome=\"ok\"}";
    assert!(last[ok] > first[ok], "the load went on between scrapes");
    assert!(pages.iter().any(|p| p["shootout_step_active"] == 1.0));
    assert!(last["process_cpu_seconds_total"] > 0.0);
    // The report holds at least what the last scrape saw.
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let final_ok = report["requests"]["ok"].as_f64().unwrap();
    let final_failed = report["requests"]["failed"].as_f64().unwrap();
    assert!(final_ok >= last[ok], "{final_ok} < {}", last[ok]);
    assert!(final_failed >= last["shootout_requests_total{outcome=\"failed\"}"]);
    assert!(last["shootout_request_duration_seconds_count"] > 0.0);
    // It stopped serving when the command ended.
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_run_is_scraped_with_a_series_per_contender_workload_and_level() {
    let s = server();
    let dir = tempfile::tempdir().unwrap();
    let plan = format!(
        "name = \"m\"\n[defaults]\nwarmup = 0\nduration = \"1500ms\"\nrepeat = 1\ncooldown = \"0s\"\n\n\
         [[contender]]\nname = \"theirs\"\nurl = \"{}\"\n\n\
         [[workload]]\nname = \"index\"\npath = \"/\"\nexpect = {{ status = 200 }}\n\n[load]\nconcurrency = [2]\n",
        s.url("/").trim_end_matches('/')
    );
    let plan_path = dir.path().join("plan.toml");
    std::fs::write(&plan_path, plan).unwrap();
    let db = dir.path().join("shootout.db");
    let (child, addr, stderr) = start(&[
        "run",
        plan_path.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--metrics-listen",
        "0",
    ]);
    assert!(
        addr.ip().is_loopback(),
        "a bare port listens on loopback: {addr}"
    );
    let pages = scrape_while_it_runs(addr);
    let out = child.wait_with_output().unwrap();
    let stderr = stderr.recv().unwrap();
    assert!(out.status.success(), "{stderr}");
    assert!(!pages.is_empty(), "{stderr}");
    for w in pages.windows(2) {
        grew(&w[0], &w[1]);
    }
    let series = "contender=\"theirs\",workload=\"index\",level=\"c=2\"";
    let last = pages.last().unwrap();
    let ok = last[&format!("shootout_requests_total{{{series},outcome=\"ok\"}}")];
    assert!(ok > 0.0);
    let store = shootout_store::Store::open_existing(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let stored = store.steps(run.id).unwrap()[0].result.counts.ok;
    assert!(stored as f64 >= ok, "{stored} < {ok}");
}

#[test]
fn a_bad_address_is_refused_with_the_forms_that_work() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .args(["load", "--metrics-listen", "here", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics-listen") && err.contains("127.0.0.1:9464"),
        "{err}"
    );
}

#[test]
fn a_plan_may_ask_for_the_metrics_and_the_flag_wins() {
    let s = server();
    let dir = tempfile::tempdir().unwrap();
    // A port already taken, for the plan to ask for.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let plan = format!(
        "name = \"m\"\n[defaults]\nwarmup = 0\nrequests = 20\nrepeat = 1\ncooldown = \"0s\"\nmetrics_listen = \"{port}\"\n\n\
         [[contender]]\nname = \"theirs\"\nurl = \"{}\"\n\n\
         [[workload]]\nname = \"index\"\npath = \"/\"\nexpect = {{ status = 200 }}\n\n[load]\nconcurrency = [1]\n",
        s.url("/").trim_end_matches('/')
    );
    let plan_path = dir.path().join("plan.toml");
    std::fs::write(&plan_path, &plan).unwrap();
    let db = dir.path().join("shootout.db");
    let run = |extra: &[&str]| {
        Command::new(assert_cmd::cargo::cargo_bin("shootout"))
            .arg("run")
            .arg(&plan_path)
            .arg("--db")
            .arg(&db)
            .args(extra)
            .output()
            .unwrap()
    };
    // The plan's port is taken: the run says so, naming the flag, and measures nothing.
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "--metrics-listen: cannot listen on 127.0.0.1:{port}"
        )),
        "{err}"
    );
    assert_eq!(s.requests(), 0, "{err}");
    assert!(!db.exists(), "no run was begun: {err}");
    // The flag wins over the plan.
    let out = run(&["--metrics-listen", "127.0.0.1:0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("metrics on http://127.0.0.1:"), "{err}");
}
