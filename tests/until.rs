//! `load --until`: a load that ends once its figures have converged, against the test
//! server; one whose conditions cannot hold in its time says so; bad conditions are
//! refused before anything runs.

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
