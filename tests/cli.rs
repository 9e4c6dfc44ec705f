//! End-to-end tests of the `shootout` binary: flags, every report format (insta snapshots
//! against a deterministic test server, timings filtered out), bad input, Ctrl-C, and scale.

mod common;

use assert_cmd::Command;
use shootout_testserver::{Behavior, TestServer};
use std::time::Duration;

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

/// A server whose answers take 5 ms: the generator idles, so no saturation warning varies.
fn slow_hello() -> TestServer {
    TestServer::start(Behavior::StallEvery {
        n: 1,
        stall: Duration::from_millis(5),
    })
    .unwrap()
}

/// Snapshot settings that replace what varies from run to run: ports, timings, rates,
/// times of day, how busy the generator was.
fn stable() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    for (re, to) in [
        (r"127\.0\.0\.1:\d+", "HOST:PORT"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "DATE"),
        (r"Server Port:\s+\d+", "Server Port:            PORT"),
        (r"(?m)^(Connect|Processing|Waiting|Total):.*$", "$1: [ms]"),
        // ab's own doubt about skewed timings comes and goes with them.
        (
            r"(?m)^(WARNING|ERROR): The median and mean.*\n.*reliable\.\n",
            "",
        ),
        (r"(?m)^(\s+\d+%\s+)\d+( \(longest request\))?$", "$1[ms]"),
        (r"(?m)^(\s+\d+%\s+)[\d.]+(us|ms|s)$", "$1[t]"),
        (r"Running \d+s test", "Running Ns test"),
        (r"\d+% busy", "N% busy"),
        (r"\b-?\d+\.\d+(e-?\d+)?", "F"),
        (r"\bF(us|ms|s)\b", "F[t]"),
        // Column padding follows the numbers' widths: alignment is pinned by the report
        // crate's snapshots of fixed data, not here.
        (r"[ ]{2,}", " "),
        (r"\d+(\.F)?(k|M|G)?B\b", "NB"),
    ] {
        s.add_filter(re, to);
    }
    s
}

fn run_format(format: &str) -> String {
    let server = slow_hello();
    let out = shootout()
        .args([
            "load",
            "-n",
            "20",
            "-c",
            "2",
            "--threads",
            "1",
            "--format",
            format,
        ])
        .arg(server.url("/hello"))
        .output()
        .unwrap();
    common::assert_ok(&out);
    assert_eq!(server.requests(), 20);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn format_text() {
    let out = run_format("text");
    stable().bind(|| insta::assert_snapshot!(out));
}

/// Regression: with stdout a pipe (and stderr too), the live view's arrival changes
/// nothing: the same report as `format_text`'s snapshot, and no escape code anywhere.
#[test]
fn load_with_stdout_not_a_terminal_prints_the_plain_report() {
    let server = slow_hello();
    let out = shootout()
        .args(["load", "-n", "20", "-c", "2", "--threads", "1"])
        .arg(server.url("/hello"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!out.stdout.contains(&0x1b), "an escape code on stdout");
    assert!(!out.stderr.contains(&0x1b), "an escape code on stderr");
    let out = String::from_utf8(out.stdout).unwrap();
    stable().bind(|| insta::assert_snapshot!("format_text", out));
}

#[test]
fn format_ab() {
    let out = run_format("ab");
    assert!(out.contains("Complete requests:      20\n"), "{out}");
    stable().bind(|| insta::assert_snapshot!(out));
}

#[test]
fn format_wrk() {
    let out = run_format("wrk");
    assert!(out.contains("20 requests in"), "{out}");
    stable().bind(|| insta::assert_snapshot!(out));
}

#[test]
fn format_json_has_the_documented_fields() {
    let out = run_format("json");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The real binary's output, held to the whole schema document (both ways).
    let schema =
        shootout_report::schema::Schema::from_markdown(include_str!("../docs/load-json.md"), None)
            .unwrap();
    if let Err(problems) = schema.check(&v) {
        panic!("the output disagrees with docs/load-json.md: {problems:#?}\n{out}");
    }
    assert_eq!(v["requests"]["completed"], 20);
    assert_eq!(v["requests"]["ok"], 20);
    assert_eq!(v["status_codes"]["200"], 20);
    assert_eq!(v["connections"]["opened"], 2);
    assert!(
        v["latency_ms"]["p50"].as_f64().unwrap() >= 5.0,
        "the 5 ms stall is measured"
    );
    // Only the shape and the counts: a 20-request run has a varying number of seconds.
    let mut v = v;
    v["series"] = serde_json::json!("[per-second rows]");
    v["generator"]["saturated"] = serde_json::json!("[bool]");
    v["target"]["port"] = serde_json::json!("[port]");
    let pretty = serde_json::to_string_pretty(&v).unwrap();
    stable().bind(|| insta::assert_snapshot!(pretty));
}

/// A journey file in `dir` for the test server's App: log in, read the form's token
/// (which needs the session cookie), post with it.
fn writer_journey(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("writer.toml");
    std::fs::write(
        &file,
        r#"
[[journey]]
name = "writer"
[[journey.step]]
name = "login"
post = "/login?user=u{user}"
[[journey.step]]
name = "form"
get = "/form"
capture = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[journey.step]]
name = "post"
post = "/paste?csrf={csrf}&text=x{seq}"
expect = { status = 302 }
"#,
    )
    .unwrap();
    file
}

/// A journey run as CSV (a record per step and per journey, exact counts) and, in the
/// same run, as an HTML page with a table and a chart per step.
#[test]
fn a_journey_run_as_csv_and_html() {
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = writer_journey(dir.path());
    let html = dir.path().join("j.html");
    let out = shootout()
        .args([
            "load",
            "-n",
            "6",
            "-c",
            "2",
            "--threads",
            "1",
            "--format",
            "csv",
        ])
        .arg("--journey")
        .arg(&file)
        .arg("--html")
        .arg(&html)
        .arg(server.url("/"))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let csv = String::from_utf8(out.stdout).unwrap();
    let heads: Vec<String> = csv
        .split_terminator("\r\n")
        .map(|l| l.split(',').take(5).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        heads[2..],
        [
            "step,writer › login,6,6,0",
            "step,writer › form,6,6,0",
            "step,writer › post,6,6,0",
            "journey,writer,6,6,0",
            "journey_busy,writer,6,6,0",
        ]
    );
    assert!(heads[1].ends_with(",18,18,0"), "{}", heads[1]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Requests by step</h2>"), "{page}");
    for step in ["login", "form", "post"] {
        assert!(
            page.contains(&format!("<title>Step writer › {step}: latency percentiles")),
            "{step}"
        );
    }
    // The journeys' busy time: a table, and a line beside each journey's duration.
    assert!(
        page.contains(
            "<h2>Journeys less think time (ms: duration minus the think times between steps)</h2>"
        ),
        "{page}"
    );
    assert!(page.contains("less think time</text>"), "{page}");
}

/// A journey run through the real binary, held to the whole schema document: its steps in
/// `requests_by_target`, its journeys in `journeys`, with exact counts.
#[test]
fn format_json_of_a_journey_run_has_the_documented_fields() {
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = writer_journey(dir.path());
    let out = shootout()
        .args([
            "load",
            "-n",
            "6",
            "-c",
            "2",
            "--threads",
            "1",
            "--format",
            "json",
        ])
        .arg("--journey")
        .arg(&file)
        .arg(server.url("/"))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let schema =
        shootout_report::schema::Schema::from_markdown(include_str!("../docs/load-json.md"), None)
            .unwrap();
    if let Err(problems) = schema.check(&v) {
        panic!("the output disagrees with docs/load-json.md: {problems:#?}\n{v:#}");
    }
    assert_eq!(server.requests(), 18, "3 steps × 6 journeys");
    let steps: Vec<(&str, u64, u64)> = v["requests_by_target"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["target"].as_str().unwrap(),
                t["completed"].as_u64().unwrap(),
                t["ok"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("writer › login", 6, 6),
            ("writer › form", 6, 6),
            ("writer › post", 6, 6)
        ]
    );
    let j = &v["journeys"][0];
    assert_eq!(
        (j["journey"].as_str(), j["ended"].as_u64(), j["ok"].as_u64()),
        (Some("writer"), Some(6), Some(6))
    );
    assert!(j["duration_ms"]["max"].as_f64().unwrap() > 0.0);
}

#[test]
fn json_flag_equals_format_json() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = shootout()
        .args(["load", "--json", "-n", "5"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["ok"], 5);
}

#[test]
fn t_is_read_as_the_user_meant_and_said_so() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = shootout()
        .args(["load", "-t2", "-c", "2", "-d", "200ms", "--json"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-t 2 read as --threads 2"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["load"]["threads"], 2);

    let out = shootout()
        .args(["load", "-t", "0.2", "-c", "1", "--json"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("read as a time limit"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["requests"]["completed"].as_u64().unwrap() > 1,
        "ran for the time limit, not one request"
    );
}

#[test]
fn post_body_headers_and_cookies_reach_the_server() {
    let server = TestServer::start(Behavior::Echo).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("post-body.txt");
    std::fs::write(&body, "title=x&content=junk").unwrap();
    let out = shootout()
        .args(["load", "-q", "--json", "-n", "3", "-p"])
        .arg(&body)
        .args(["-T", "application/x-www-form-urlencoded", "-H", "X-Test: 1", "-C", "a=1", "-C", "b=2"])
        .args(["--expect-body-contains", "method: POST\ntarget: /paste\nbody-length: 20\ncontent-type: application/x-www-form-urlencoded\ncookie: a=1; b=2\nx-test: 1\n"])
        .arg(server.url("/paste"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["ok"], 3, "{v}");
    assert!(out.stderr.is_empty(), "-q is quiet");
}

#[test]
fn a_request_list_is_sent_pipelined_and_reported_per_entry() {
    let server = TestServer::start(Behavior::Echo).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.json"), "{\"n\": {seq}}").unwrap();
    let list = dir.path().join("requests.txt");
    std::fs::write(
        &list,
        "GET /a/{rand:1-9}\n\nPOST /b\nContent-Type: application/json\n@b.json\n",
    )
    .unwrap();
    let load = |format: &str| {
        shootout()
            .args([
                "load",
                "-q",
                "--format",
                format,
                "-n",
                "40",
                "-c",
                "2",
                "--pipeline",
                "4",
            ])
            .arg("--urls")
            .arg(&list)
            .arg(server.url("/"))
            .output()
            .unwrap()
    };
    let out = load("json");
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["ok"], 40, "{v}");
    assert_eq!(v["load"]["pipeline"], 4);
    let per: Vec<(String, u64)> = v["requests_by_target"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["target"].as_str().unwrap().to_string(),
                t["ok"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per,
        vec![
            ("GET /a/{rand:1-9}".to_string(), 20),
            ("POST /b".to_string(), 20)
        ]
    );
    let text = String::from_utf8(load("text").stdout).unwrap();
    assert!(text.contains("2 connections × 4 pipelined"), "{text}");
    assert!(text.contains("Requests by target"), "{text}");
    assert_eq!(server.requests(), 80);
}

#[test]
fn expectations_turn_into_failures() {
    let server = TestServer::start(Behavior::FailEvery { n: 2, status: 503 }).unwrap();
    let out = shootout()
        .args([
            "load",
            "--json",
            "-n",
            "10",
            "--expect-status",
            "2xx",
            "--expect-body-contains",
            "Hello",
        ])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            v["requests"]["ok"].as_u64(),
            v["failures"]["status"].as_u64()
        ),
        (Some(5), Some(5))
    );
}

#[test]
fn ab_files_e_and_g() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (csv, tsv) = (dir.path().join("p.csv"), dir.path().join("g.tsv"));
    shootout()
        .args(["load", "-q", "-n", "50", "-c", "2", "-e"])
        .arg(&csv)
        .arg("-g")
        .arg(&tsv)
        .arg(server.url("/"))
        .assert()
        .success();
    let csv = std::fs::read_to_string(csv).unwrap();
    assert!(csv.starts_with("Percentage served,Time in ms\n0,"), "{csv}");
    assert_eq!(csv.lines().count(), 102);
    let tsv = std::fs::read_to_string(tsv).unwrap();
    assert!(
        tsv.starts_with("starttime\tseconds\tctime\tdtime\tttime\twait\n"),
        "{tsv}"
    );
    assert_eq!(tsv.lines().count(), 51, "one line per request");
}

#[test]
fn https_with_insecure_and_without() {
    let server = TestServer::start_tls(Behavior::Hello).unwrap();
    let out = shootout()
        .args(["load", "--json", "-n", "10", "-c", "2", "--insecure"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["ok"], 10);
    let out = shootout()
        .args(["load", "-n", "1"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--insecure") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn unix_socket() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    // A minimal server: the preflight connection, then one connection of three requests.
    let server = std::thread::spawn(move || {
        let mut served = 0;
        for stream in listener.incoming().take(2) {
            let stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut out = stream;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                if line == "\r\n" {
                    out.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nhi\n")
                        .unwrap();
                    served += 1;
                }
                line.clear();
            }
        }
        served
    });
    let out = shootout()
        .args(["load", "--json", "-n", "3", "--unix-socket"])
        .arg(&path)
        .arg("http://localhost/")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["requests"]["ok"],
        3,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.join().unwrap(), 3);
}

/// Runs `shootout` with `args`; returns (exit code, stderr).
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let out = shootout().args(args).output().unwrap();
    assert!(out.stdout.is_empty());
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn usage_errors_keep_clap_hints_and_point_to_the_right_help() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["repot"],
            &[
                "a similar subcommand exists: 'report'",
                "(see 'shootout --help')",
            ],
        ),
        (
            &["report", "--format", "yaml"],
            &[
                "[possible values: text, markdown, md, json, csv]",
                "(see 'shootout report --help')",
            ],
        ),
        (
            &["compare", "1"],
            &["<B>", "(see 'shootout compare --help')"],
        ),
        (
            &["ls", "--bogus"],
            &["'--bogus'", "(see 'shootout ls --help')"],
        ),
        (&["load"], &["<URL>", "(see 'shootout load --help')"]),
    ];
    for (args, wanted) in cases {
        let out = shootout().args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: one line\n{err}");
        for w in *wanted {
            assert!(err.contains(w), "{args:?}: no {w:?} in\n{err}");
        }
        assert!(!err.contains("load --help") || args[0] == "load", "{err}");
    }
    // The top-level help says what shootout is for, not what its module does.
    let help = shootout().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.starts_with("Benchmark web servers honestly"), "{help}");
    // One default per flag, and every example line of load's help pastes as it is.
    let help = shootout().args(["load", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(!help.contains("(default 30)"), "{help}");
    let examples = help.split("Examples:").nth(1).unwrap();
    for l in examples.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            l.trim_start().starts_with("shootout load "),
            "wrapped example: {l:?}"
        );
    }
}

#[test]
fn completions_and_man_pages_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let out = shootout().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        // Every subcommand, and a flag of load, are completed.
        for word in ["load", "run", "report", "compare", "concurrency"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let page = |args: &[&str]| {
        let out = shootout().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let top = page(&["man"]);
    assert!(top.contains(".TH shootout 1"), "{top}");
    let version = env!("CARGO_PKG_VERSION");
    for sub in ["load", "run", "ls", "report", "compare"] {
        let p = page(&["man", sub]);
        assert!(p.contains(&format!(".TH shootout-{sub} 1")), "{p}");
        assert!(p.contains(version), "{sub}: no version");
    }
    assert!(page(&["man", "load"]).contains("concurrency"));
    let bad = shootout().args(["man", "lod"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("choose one of load, run"));
}

#[test]
fn bad_input_is_one_line_naming_the_fix() {
    let refused = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}/", l.local_addr().unwrap().port())
    };
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["load", "http://[::1"],
            2,
            "write it as http://127.0.0.1:8080/path",
        ),
        (
            &["load", "ftp://127.0.0.1/"],
            2,
            "http://, https://, ws:// and wss:// only",
        ),
        (
            &["load", "--frobnicate", "http://127.0.0.1/"],
            2,
            "'--frobnicate'",
        ),
        (
            &["load", "-p", "/nonexistent/body.txt", "http://127.0.0.1/"],
            2,
            "check the path given to -p/-u",
        ),
        (
            &["load", "-H", "no colon", "http://127.0.0.1/"],
            2,
            "-H 'Name: value'",
        ),
        (
            &["load", "--busy-poll", "2ms", "http://127.0.0.1/"],
            2,
            "--busy-poll 2ms: at most 1ms (e.g. --busy-poll 50us)",
        ),
        (
            &["load", "--busy-poll", "soon", "http://127.0.0.1/"],
            2,
            "--busy-poll: 'soon' is not a duration",
        ),
        (
            &["load", "--expect-status", "abc", "http://127.0.0.1/"],
            2,
            "e.g. 200,301 or 2xx",
        ),
        (
            &["load", "-d", "soon", "http://127.0.0.1/"],
            2,
            "30s, 1m30s, 250ms",
        ),
        (&["load", &refused], 1, "is the server running"),
    ];
    for (args, code, hint) in cases {
        let (got, err) = fails(args);
        assert_eq!(got, Some(*code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(hint),
            "{args:?}: {err}"
        );
    }
    insta::assert_snapshot!(fails(&["load", "ftp://127.0.0.1/"]).1);
}

#[test]
fn ctrl_c_ends_the_run_and_still_reports() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .args(["load", "--json", "-d", "60s", "-c", "2"])
        .arg(server.url("/"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the load is under way (the server has seen requests).
    while server.requests() < 200 {
        std::thread::yield_now();
    }
    unsafe { libc_kill(child.id() as i32, 2) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert!(v["requests"]["ok"].as_u64().unwrap() >= 200);
    assert!(v["duration_s"].as_f64().unwrap() < 30.0);
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn ten_thousand_connections_from_one_thread() {
    // The server lives in this process, the generator in the child: each side holds
    // 10,000 sockets under its own open-file limit.
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = shootout()
        .args([
            "load",
            "--json",
            "-q",
            "-c",
            "10000",
            "--threads",
            "1",
            "-d",
            "4s",
        ])
        .arg(server.url("/"))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["connections"]["opened"], 10_000, "{v}");
    assert_eq!(v["requests"]["failed"], 0, "{v}");
    assert!(v["requests"]["ok"].as_u64().unwrap() >= 10_000);
    assert_eq!(
        server.connections(),
        10_001,
        "10,000 and the preflight connect"
    );
}

#[test]
fn warmup_requests_are_sent_but_not_measured() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = shootout()
        .args(["load", "--json", "--warmup", "50", "-n", "20", "-c", "2"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["completed"], 20);
    assert_eq!(server.requests(), 70);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warm-up: 50 requests"), "{err}");
}

#[test]
fn html_report_of_one_load() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("load.html");
    shootout()
        .args(["load", "-q", "-n", "50", "--html"])
        .arg(&page)
        .arg(server.url("/<b>"))
        .assert()
        .success();
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.starts_with("<!doctype html>") || html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..60]
    );
    assert!(
        html.contains("<svg") && !html.contains("/<b>"),
        "charts, and the URL escaped"
    );
}

/// A listener nobody should connect to: the command must fail before it connects.
struct Untouched(std::net::TcpListener);

impl Untouched {
    fn new() -> Untouched {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Untouched(l)
    }
    fn url(&self) -> String {
        format!("http://{}/", self.0.local_addr().unwrap())
    }
    fn assert_untouched(&self, what: &str) {
        let e = self.0.accept().map(|_| ()).unwrap_err();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::WouldBlock,
            "{what}: a connection came"
        );
    }
}

/// Runs `load` with `args` against `target`; asserts a usage error (exit 2) of one line and
/// that nothing connected; returns the line.
fn refused_before_connecting(target: &Untouched, args: &[&str]) -> String {
    let out = shootout()
        .arg("load")
        .args(args)
        .arg(target.url())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    target.assert_untouched(&format!("{args:?}"));
    err
}

/// Values that panicked (exit 101) in the flag parser or in the worker threads: each is
/// now exit 2 with one line naming the flag, before any connection.
#[test]
fn out_of_range_flags_are_usage_errors_not_panics() {
    let target = Untouched::new();
    let cases: &[(&[&str], &str)] = &[
        (&["-d", "1e20"], "-d: "),
        (&["-d", "18446744073709551615"], "-d: "),
        (&["-d", "9999999999999999999"], "-d: "),
        (&["-s", "1e300"], "-s: "),
        (&["--connect-timeout", "1e300"], "--connect-timeout: "),
        (&["--warmup", "1e20"], "--warmup: "),
        (&["-t", "1e20"], "-t: "),
        (&["-d", "0"], "-d 0: a run must last more than 0"),
        (&["-t", "0"], "-t 0: a run must last more than 0"),
        (&["--threads", "0", "-n", "10", "-c", "2"], "--threads 0"),
        (&["--cpus", "1023"], "--cpus 1023"),
        (&["--rate=1e-300", "-n", "10"], "--rate"),
        (&["-c", "99999999999"], "-c 99999999999"),
    ];
    for (args, hint) in cases {
        let err = refused_before_connecting(&target, args);
        assert!(
            err.starts_with(&format!("error: {hint}")),
            "{args:?}: {err}"
        );
    }
}

/// A method or header with CR/LF, a header name with a space, and framing headers were
/// sent as given; `-e`, `-g`, `--html` into a missing directory failed after the run and
/// `-p /dev/zero` ran out of memory. All are refused before connecting.
#[test]
fn injection_and_bad_files_are_refused_before_connecting() {
    let target = Untouched::new();
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    std::fs::write(&body, "a=1").unwrap();
    let body = body.to_str().unwrap();
    let missing = dir.path().join("no/such/out");
    let missing = missing.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["-m", "GET / HTTP/1.1\r\nX-Injected: 1\r\nX:"],
            "is not an HTTP method",
        ),
        (&["-H", "X-A: 1\r\nX-Injected: 1"], "control character"),
        (&["-H", "X Bad: 1"], "is not a token"),
        (
            &["-H", "Transfer-Encoding: chunked", "-p", body],
            "set by shootout from the body",
        ),
        (
            &["-H", "Content-Length: 99", "-p", body],
            "set by shootout from the body",
        ),
        (&["-e", missing], "does not exist"),
        (&["-g", missing], "does not exist"),
        (&["--html", missing], "does not exist"),
        (&["-p", "/dev/zero"], "larger than 64 MiB"),
    ];
    for (args, hint) in cases {
        let err = refused_before_connecting(&target, args);
        assert!(err.contains(hint), "{args:?}: {err}");
    }
}

#[test]
fn load_where_every_request_failed_exits_1_with_one_line_saying_so() {
    let server = TestServer::start(Behavior::Fixed {
        status: 404,
        body: b"not here\n".to_vec(),
    })
    .unwrap();
    for format in ["text", "json"] {
        let out = shootout()
            .args(["load", "-q", "-n", "20", "-c", "2", "--format", format])
            .arg(server.url("/missing"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}: {err}");
        assert_eq!(
            err,
            "error: every request failed (20 of 20: 20 status; status codes 404 ×20): check the URL and the server, or --expect-status if these answers are right\n"
        );
        // The report is printed all the same, and says that nothing was good.
        let report = String::from_utf8(out.stdout).unwrap();
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&report).unwrap();
            assert_eq!(
                (v["requests"]["ok"].as_u64(), v["rps"].as_f64()),
                (Some(0), Some(0.0))
            );
            assert!(v["completed_rps"].as_f64().unwrap() > 0.0, "{v}");
        } else {
            assert!(report.contains("20 completed"), "{report}");
            assert!(
                report.contains("0.00 req/s ok (good answers only; "),
                "{report}"
            );
        }
    }
    // The same server answering 200 somewhere: a good answer, exit 0.
    let ok = TestServer::start(Behavior::Hello).unwrap();
    shootout()
        .args(["load", "-q", "-n", "5"])
        .arg(ok.url("/"))
        .assert()
        .success();
}

/// A store with `runs` runs named at length, so `shootout ls` prints far more than a pipe
/// holds (64 KiB).
fn store_with_many_runs(dir: &std::path::Path, runs: usize) -> std::path::PathBuf {
    let db = dir.join("many.db");
    let mut store = shootout_store::Store::open(&db).unwrap();
    let machine = shootout_model::MachineFacts::default();
    let name = "a plan with a long name ".repeat(8);
    for i in 0..runs {
        store
            .begin_run(&shootout_store::NewRun {
                name: &format!("{name}{i}"),
                plan_text: "",
                plan_resolved: "{}",
                machine: &machine,
                started: std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i as u64),
            })
            .unwrap();
    }
    db
}

#[test]
fn ls_into_a_closed_pipe_ends_quietly_with_exit_0() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let db = store_with_many_runs(dir.path(), 2000);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .args(["ls", "--db"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -1`: read a line, then close the pipe while shootout still has ~400 KiB to write.
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("  id  started"), "{first}");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err, "", "nothing on stderr, no panic");
}

/// Runs `shootout` with stdout on /dev/full (every write fails with ENOSPC).
fn into_dev_full(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .args(args)
        .stdout(full)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn output_that_cannot_be_written_is_exit_1_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_with_many_runs(dir.path(), 3);
    let server = TestServer::start(Behavior::Hello).unwrap();
    let url = server.url("/");
    let cases: [&[&std::ffi::OsStr]; 4] = [
        &["ls".as_ref(), "--db".as_ref(), db.as_os_str()],
        &["report".as_ref(), "--db".as_ref(), db.as_os_str()],
        &[
            "load".as_ref(),
            "-q".as_ref(),
            "-n".as_ref(),
            "3".as_ref(),
            url.as_ref(),
        ],
        &[
            "load".as_ref(),
            "-q".as_ref(),
            "--json".as_ref(),
            "-n".as_ref(),
            "3".as_ref(),
            url.as_ref(),
        ],
    ];
    for args in cases {
        let (code, err) = into_dev_full(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert_eq!(
            err,
            "error: cannot write the output to stdout: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

/// Runs `shootout ARGS` with stdout on a pipe whose reader has already gone, as in
/// `shootout ARGS | head -0`: every write to stdout fails with EPIPE, whenever it comes.
/// With `stderr_too`, stderr is the same pipe (`2>&1 | head -0`). Returns the exit code
/// and what stderr said (nothing can be read when it was the pipe).
fn into_closed_pipe(args: &[&std::ffi::OsStr], stderr_too: bool) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("shootout"));
    cmd.args(args).stdout(writer.try_clone().unwrap());
    if stderr_too {
        cmd.stderr(writer);
    } else {
        drop(writer);
        cmd.stderr(std::process::Stdio::piped());
    }
    let out = cmd.output().unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn every_command_into_a_pipe_closed_before_reading_ends_quietly_with_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_with_many_runs(dir.path(), 3);
    let server = TestServer::start(Behavior::Hello).unwrap();
    let url = server.url("/");
    let db = db.as_os_str();
    let cases: [&[&std::ffi::OsStr]; 7] = [
        &["ls".as_ref(), "--db".as_ref(), db],
        &["report".as_ref(), "--db".as_ref(), db],
        &[
            "report".as_ref(),
            "--html".as_ref(),
            "-".as_ref(),
            "--db".as_ref(),
            db,
        ],
        &[
            "load".as_ref(),
            "-q".as_ref(),
            "-n".as_ref(),
            "3".as_ref(),
            url.as_ref(),
        ],
        &[
            "load".as_ref(),
            "--json".as_ref(),
            "-n".as_ref(),
            "3".as_ref(),
            url.as_ref(),
        ],
        &["--help".as_ref()],
        &["load".as_ref(), "--help".as_ref()],
    ];
    for args in cases {
        let (code, err) = into_closed_pipe(args, false);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: nothing on stderr, no panic");
    }
    assert!(
        server.requests() >= 6,
        "the loads ran before their output was refused"
    );
}

/// `shootout load -c 5 -n 3 URL 2>&1 | head -0`: the note (`-c 5 lowered to 3`) went to a
/// closed stderr and panicked (exit 101). A stderr that cannot be written changes nothing.
#[test]
fn notes_into_a_closed_stderr_are_no_panic() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let url = server.url("/");
    let cases: [&[&std::ffi::OsStr]; 2] = [
        &[
            "load".as_ref(),
            "-c".as_ref(),
            "5".as_ref(),
            "-n".as_ref(),
            "3".as_ref(),
            url.as_ref(),
        ],
        &[
            "load".as_ref(),
            "--format".as_ref(),
            "ab".as_ref(),
            "-n".as_ref(),
            "3".as_ref(),
            "http://127.0.0.1:1/".as_ref(),
        ],
    ];
    let (code, _) = into_closed_pipe(cases[0], true);
    assert_eq!(code, Some(0), "{:?}", cases[0]);
    // A load that cannot connect: its one-line error goes nowhere, its exit code stays.
    let (code, _) = into_closed_pipe(cases[1], true);
    assert_eq!(code, Some(1), "{:?}", cases[1]);
}

/// `shootout --help > /dev/full` said nothing and exited 0; `compare` into /dev/full is
/// like every other command's output.
#[test]
fn help_and_compare_that_cannot_be_written_are_exit_1_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_with_many_runs(dir.path(), 2);
    let cases: [&[&std::ffi::OsStr]; 3] = [
        &["--help".as_ref()],
        &["--version".as_ref()],
        &[
            "compare".as_ref(),
            "1".as_ref(),
            "2".as_ref(),
            "--db".as_ref(),
            db.as_os_str(),
        ],
    ];
    for args in cases {
        let (code, err) = into_dev_full(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert_eq!(
            err,
            "error: cannot write the output to stdout: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

#[test]
fn http2_load_reports_its_protocol_streams_and_resets() {
    let server =
        shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::ResetEvery {
            n: 10,
            code: shootout_testserver::INTERNAL_ERROR,
        })
        .unwrap();
    let out = shootout()
        .args(["load", "--http2", "--streams", "5", "-n", "100", "-c", "2"])
        .args(["--threads", "1", "--json", "-q", &server.url("/")])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["load"]["protocol"], "h2");
    assert_eq!(v["load"]["streams"], 5);
    assert_eq!(v["requests"]["ok"], 90);
    assert_eq!(v["failures"]["stream_reset"], 10);
    assert_eq!(v["requests"]["stream_resets"]["2"], 10);
    let text = shootout()
        .args(["load", "--http2", "--streams", "5", "-n", "20", "-c", "2"])
        .args(["--threads", "1", "-q", &server.url("/")])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("2 connections × 5 streams (HTTP/2)"),
        "{text}"
    );
    assert!(
        text.contains("RST_STREAM received: 2 × INTERNAL_ERROR (2)"),
        "{text}"
    );
}

#[test]
fn http2_against_an_http1_server_is_refused_with_the_fix() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = shootout()
        .args(["load", "--http2", "-n", "10", &server.url("/")])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not speak HTTP/2"), "{err}");
    assert!(err.contains("drop --http2"), "{err}");
}

#[test]
fn http2_with_pipeline_or_urls_is_a_usage_error_naming_both_flags() {
    let dir = tempfile::tempdir().unwrap();
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, "GET /a\n").unwrap();
    let urls = urls.to_str().unwrap();
    for (args, want) in [
        (&["--pipeline", "8"][..], ["--pipeline", "--streams"]),
        (&["--urls", urls][..], ["--urls", "--http2"]),
    ] {
        let out = shootout()
            .args(["load", "--http2", "-n", "10"])
            .args(args)
            .arg("http://127.0.0.1:9/")
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(want.iter().all(|w| err.contains(w)), "{args:?}: {err}");
    }
}

#[test]
fn streams_without_http2_is_a_usage_error_naming_the_flag() {
    let out = shootout()
        .args(["load", "--streams", "10", "-n", "10", "http://127.0.0.1:9/"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--streams 10") && err.contains("--http2"),
        "{err}"
    );
}

#[test]
fn rate_mode_reports_each_connections_setup_in_json_and_text_though_connect_is_0() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let load = |format: &str| {
        shootout()
            .args([
                "load",
                "-q",
                "--format",
                format,
                "--rate",
                "100",
                "-d",
                "0.3s",
                "-c",
                "3",
                // Three, however slow a busy machine makes an answer.
                "--max-connections",
                "3",
            ])
            .arg(server.url("/"))
            .output()
            .unwrap()
    };
    let out = load("json");
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["connections"]["opened"], 3, "{v}");
    let setup = &v["connections"]["setup_ms"];
    assert!(setup["min"].as_f64().unwrap() > 0.0, "{v}");
    assert!(setup["max"].as_f64().unwrap() >= setup["mean"].as_f64().unwrap());
    // The connections opened before any request was due: no request waited for one.
    assert_eq!(v["connection_times_ms"]["connect"]["max"], 0.0, "{v}");
    for format in ["text", "ab"] {
        let out = String::from_utf8(load(format).stdout).unwrap();
        assert!(
            out.contains("Connection setup: 3 connections, min ")
                && out.contains("(opened before any request waited for them: Connect is 0)"),
            "{format}: {out}"
        );
    }
    let wrk = String::from_utf8(load("wrk").stdout).unwrap();
    assert!(wrk.contains("  Connection setup: 3 connections"), "{wrk}");
}

/// `shootout load -q --find-max ARGS --from 60 --to 2000 --max-connections 64 --format
/// json` against a server of known capacity (one request at a time server-wide, 4 ms
/// each: at most 250 req/s, a rate a test build keeps on a busy machine) sending its bytes
/// as `delivery`; the JSON's `capacity`, its highest rate met and its lowest broken.
fn search_250(
    delivery: shootout_testserver::Delivery,
    args: &[&str],
) -> (serde_json::Value, f64, f64) {
    search_250_within(delivery, args, "60", "2000")
}

/// The same, from `from` to `to` req/s.
fn search_250_within(
    delivery: shootout_testserver::Delivery,
    args: &[&str],
    from: &str,
    to: &str,
) -> (serde_json::Value, f64, f64) {
    let server = TestServer::start_with(
        Behavior::Capacity {
            service: Duration::from_millis(4),
        },
        delivery,
    )
    .unwrap();
    let out = shootout()
        .args(["load", "-q", "--find-max"])
        .args(args)
        .args(["--from", from, "--to", to, "--max-connections", "64"])
        .args(["--format", "json"])
        .arg(server.url("/"))
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(out.status.success(), "{delivery:?}: {out:?}");
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = v["capacity"].take();
    let rate = |k: &str| c[k].as_f64().unwrap_or_else(|| panic!("{delivery:?}: {c}"));
    // None failed: the ceiling bounds it.
    let hi = c["first_failing_rps"].as_f64().unwrap_or(f64::INFINITY);
    let lo = rate("max_rps");
    (c, lo, hi)
}

/// The capacity search against a server of known capacity (250 req/s) finds it within
/// 15 %, its bytes sent whole and one byte per write.
#[test]
fn find_max_finds_a_known_capacity() {
    use shootout_testserver::Delivery;
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        let (c, lo, hi) = search_250(delivery, &["--slo", "p50<40ms", "-d", "0.5s"]);
        assert!(
            lo <= 250.0 * 1.15 && hi >= 250.0 * 0.85 && hi / lo <= 1.06,
            "{delivery:?}: [{lo}, {hi}) for 250 req/s: {c}"
        );
        assert_eq!(c["limited_by"]["slo"], "p50<40ms", "{c}");
        // Both boundary rates were decided on at least two steps, and say on what.
        let b = c["boundary"].as_array().unwrap();
        assert_eq!(b.len(), 2, "{c}");
        assert_eq!(
            (b[0]["rate"].as_f64(), b[1]["rate"].as_f64()),
            (Some(lo), Some(hi))
        );
        for d in b {
            assert!(d["steps"].as_u64().unwrap() >= 2, "{d}");
            assert!(
                ["interval", "pooled"].contains(&d["decided_by"].as_str().unwrap()),
                "{d}"
            );
        }
    }
}

/// Steps far from the capacity end as soon as their SLOs are decided, with fewer answers
/// than the fixed rule waits for (errors<1%: 1,000), and the capacity is still found
/// within 5 %: a server of known capacity (one request at a time, 4 ms each: at most 250
/// req/s), its bytes sent whole and one byte per write. Every step says how it ended.
#[test]
fn find_max_ends_a_step_once_its_slos_are_decided() {
    use shootout_testserver::Delivery;
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        let (c, lo, hi) = search_250(delivery, &["--slo", "p90<40ms", "--slo", "errors<1%"]);
        assert!(
            lo <= 250.0 * 1.05 && hi >= 250.0 * 0.95 && hi / lo <= 1.06,
            "{delivery:?}: [{lo}, {hi}) for 250 req/s: {c}"
        );
        let steps = c["steps"].as_array().unwrap();
        for s in steps {
            let by = s["ended"]["by"].as_str().unwrap_or_default();
            assert!(["decided", "deadline", "passed"].contains(&by), "{s}");
            let words = s["ended"]["words"].as_str().unwrap();
            assert!(words.starts_with(by), "{s}");
        }
        // Measured in full (not a rung that plainly passed on the ramp) below the
        // capacity: decided met, on fewer answers than the 1,000 errors<1% waits for at
        // most; at least 299 (0 failures of 298 leave the upper bound over 1 %).
        let met: Vec<&serde_json::Value> = steps
            .iter()
            .filter(|s| s["ended"]["by"] == "decided" && s["ended"]["met"] == true)
            .collect();
        assert!(met.len() >= 2, "{c}");
        for s in met {
            let answers = s["answers"].as_u64().unwrap();
            assert!((299..1_000).contains(&answers), "{answers} answers: {s}");
            let errors = &s["ended"]["bounds"][1];
            assert_eq!(
                (&errors["slo"], &errors["side"]),
                (&"errors<1%".into(), &"upper".into())
            );
            assert!(errors["value"].as_f64().unwrap() < 1.0, "{s}");
        }
        // Far above it (480 req/s, and any higher): decided broken on p90, its lower
        // bound over the limit.
        let over: Vec<&serde_json::Value> = steps
            .iter()
            .filter(|s| s["offered_rps"].as_f64().unwrap() >= 400.0)
            .collect();
        assert!(!over.is_empty(), "{c}");
        for s in over {
            assert_eq!(
                (&s["ended"]["by"], &s["ended"]["met"]),
                (&"decided".into(), &false.into()),
                "{s}"
            );
            let b = &s["ended"]["bounds"][0];
            assert_eq!(
                (&b["slo"], &b["side"]),
                (&"p90<40ms".into(), &"lower".into()),
                "{s}"
            );
            assert!(b["value"].as_f64().unwrap() >= 40.0, "{s}");
        }
    }
}

/// The rungs of the ramp far below the capacity plainly pass (every SLO under half its
/// limit, after 1 s and 100 answers: fewer than the 299 a decision on errors<1% needs)
/// and are not measured again; the highest (here the ceiling, 200 req/s, a rate the
/// server of 250 req/s holds) bounds the answer, so it is measured again in full, twice,
/// before it counts: the boundary rests on those two steps alone. Bytes whole and one
/// byte per write. The latency limit is wide (p90<2s, a hundred times what the server gives
/// at 200 req/s) so that a busy machine's slower answers still sit under half of it.
#[test]
fn find_max_measures_a_rung_that_plainly_passed_again_before_it_bounds_the_answer() {
    use shootout_testserver::Delivery;
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        let args = ["--slo", "p90<2s", "--slo", "errors<1%"];
        let (c, lo, hi) = search_250_within(delivery, &args, "50", "200");
        assert_eq!((lo, hi), (200.0, f64::INFINITY), "{c}");
        let steps = c["steps"].as_array().unwrap();
        let at = |rate: f64| -> Vec<&serde_json::Value> {
            steps
                .iter()
                .filter(|s| s["offered_rps"].as_f64() == Some(rate))
                .collect()
        };
        for rate in [50.0, 100.0] {
            let once = at(rate);
            assert_eq!(once.len(), 1, "{rate}: {c}");
            let s = once[0];
            assert_eq!(
                (&s["verdict"], &s["ended"]["by"]),
                (&"passed".into(), &"passed".into()),
                "{s}"
            );
            let answers = s["answers"].as_u64().unwrap();
            assert!((100..299).contains(&answers), "{answers} answers: {s}");
        }
        let top = at(200.0);
        assert_eq!(top[0]["ended"]["by"], "passed", "{c}");
        assert!(top.len() >= 3, "{c}");
        for s in &top[1..] {
            assert_ne!(s["ended"]["by"], "passed", "{s}");
            assert_eq!(s["verdict"], "met", "{s}");
        }
        assert_eq!(c["limited_by"]["kind"], "ceiling", "{c}");
        let b = &c["boundary"][0];
        assert_eq!(b["rate"].as_f64(), Some(200.0), "{c}");
        assert_eq!(b["steps"].as_u64(), Some(top.len() as u64 - 1), "{c}");
    }
}

/// The flags only a capacity search reads are refused without `--find-max`, naming it
/// and `--fail-if` (which judges a single load); the two ends of a search's range follow
/// the rule of a plan's `find_max` key, a rate from 0.001 to 10⁹.
#[test]
fn the_capacity_flags_are_checked_by_one_rule() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    for (args, said) in [
        (
            &["--slo", "p99<1us", "-n", "5"][..],
            "--slo p99<1us is the condition a capacity search keeps: add --find-max",
        ),
        (&["--slo", "p99<1us", "-n", "5"], "(--fail-if 'p99>=1us')"),
        (
            &["--to", "5000", "-n", "5"],
            "--from and --to bound a capacity search",
        ),
        (
            &["--find-max", "--slo", "p99<50ms", "--to", "1e300"],
            "--to must be from 0.001 to 1e9 requests per second, not 1e300",
        ),
        (
            &["--find-max", "--slo", "p99<50ms", "--from", "0.0001"],
            "--from must be from 0.001 to 1e9 requests per second, not 0.0001",
        ),
    ] {
        let out = shootout()
            .arg("load")
            .args(args)
            .arg(server.url("/"))
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing was run");
    }
    // Nothing reached the server.
    assert_eq!(server.requests(), 0);
}

/// A search of a server on this machine, shootout not pinned apart from it, says before
/// its first step and in its answer that the two share the CPUs; its steps read in one
/// vocabulary on stderr and in the table (`met`, never `not met` beside `kept no`), with
/// a legend.
#[test]
fn a_search_says_it_shares_the_cpus_and_words_its_steps_one_way() {
    let server = slow_hello();
    let search = |extra: &[String]| {
        let out = shootout()
            .args(common::ONE_STEP_SEARCH)
            .args(extra)
            .arg(server.url("/"))
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        common::assert_ok(&out);
        out
    };
    let out = search(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    let shared = "the server runs on this machine and shootout is not pinned apart from it";
    let note = err.find(&format!("note: {shared}")).expect(&err);
    let first = err.find("step 1: 50 req/s offered").expect(&err);
    assert!(note < first, "said before the first step: {err}");
    // The verdict, then how the step ended: decided, or at its deadline.
    let line = err.lines().find(|l| l.starts_with("step 1: ")).expect(&err);
    assert!(
        line.contains("errors 0.000% in ")
            && (line.contains(": met (decided: met — p50 ≤ ")
                || line.ends_with(": met (deadline: undecided)")),
        "{err}"
    );
    assert!(!err.contains("not met"), "{err}");
    assert!(text.contains(&format!("Machine: {shared}")), "{text}");
    let header = text.lines().find(|l| l.contains("offered")).expect(&text);
    assert!(
        header.contains(" sends ")
            && header.contains(" verdict ")
            && header.contains(" s ")
            && header.trim_end().ends_with(" ended")
            && !header.contains("kept"),
        "{header}"
    );
    assert!(
        // Sends on time, or late with the reason (a busy machine's CPUs are not ours).
        text.lines()
            .any(|l| (l.contains(" on time ") || l.contains(" late ("))
                && l.contains(" met ")
                && (l.trim_end().ends_with("decided: met")
                    || l.trim_end().ends_with("deadline: undecided"))),
        "{text}"
    );
    assert!(text.contains("\nsends: on time ("), "{text}");
    assert!(
        text.contains("\nverdict: met (every SLO held), broke SLO"),
        "{text}"
    );
    // Pinned apart (--cpus), the note is not said.
    let out = search(&["--cpus".into(), common::first_allowed_cpu().to_string()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(shared), "{err}");
}

/// A server that keeps serving the one connection it holds (uWSGI's way with one process)
/// leaves the others in its accept queue: the kernel's count of them is sampled through
/// the run and said (`unaccepted`). Two workers, a connection each opened ahead: the
/// first worker's is held and served; the second's waits, and so does every connection
/// that worker opens for its next requests, each request on them unread to the end.
#[test]
fn connections_left_in_the_servers_accept_queue_are_said() {
    // 50 req/s for a second on two workers, each with one connection opened ahead.
    let load = |server: &TestServer, timeout: &str| -> serde_json::Value {
        let out = shootout()
            .args([
                "load",
                "--json",
                "--rate",
                "50",
                "-c",
                "2",
                "--threads",
                "2",
            ])
            .args(["-d", "1s", "-s", timeout])
            .arg(server.url("/"))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let server = TestServer::start(Behavior::HeldWorker).unwrap();
    let v = load(&server, "30s");
    let (ok, aborted) = (
        v["requests"]["ok"].as_u64().unwrap(),
        v["requests"]["aborted"].as_u64().unwrap(),
    );
    assert!(ok >= 20 && aborted >= 20, "{v}");
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "unaccepted")
        .unwrap_or_else(|| panic!("no unaccepted warning: {v}"));
    // The queue grew with the second worker's connections, one for each of its requests:
    // "… 100% of the samples … (up to 25 at once), 476.0 ms a connection on average …".
    let m = w["message"].as_str().unwrap();
    let number_before = |end: &str| -> f64 {
        let head = &m[..m.find(end).unwrap_or_else(|| panic!("{end}: {m}"))];
        let start = head.rfind([' ', '(']).unwrap() + 1;
        head[start..].parse().unwrap()
    };
    assert!(number_before("% of the samples") >= 50.0, "{m}");
    assert!(number_before(" at once") >= (aborted - 5) as f64, "{m}");
    assert!(number_before(" ms a connection") >= 100.0, "{m}");
    // A server that takes every connection at once leaves nothing to say.
    let hello = TestServer::start(Behavior::Hello).unwrap();
    let v = load(&hello, "5s");
    assert!(!v["warnings"].to_string().contains("unaccepted"), "{v}");
}

/// The help of `compare` described the block bootstrap that Student's t replaced (and
/// said nothing of unlike steps), and the URL of `load --help` named no WebSocket scheme:
/// each now says what the command does.
#[test]
fn help_says_what_the_commands_do_now() {
    let help = |args: &[&str]| {
        let out = shootout().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        // Joined as one line: clap wraps the help at the terminal's width.
        let text = String::from_utf8(out.stdout).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let compare = help(&["compare", "--help"]);
    assert!(!compare.contains("bootstrap"), "{compare}");
    for said in [
        "with fewer, Student's t on the ratio of the mean per-second good answers",
        "which needs 6 full seconds per side; shorter steps are read by tenths of a second",
        "are said to be 'unlike steps', and a verdict that rested on tenths is withdrawn",
    ] {
        assert!(compare.contains(said), "{said:?} not in {compare}");
    }
    let load = help(&["load", "--help"]);
    let url = load.split("Options:").next().unwrap();
    assert!(
        url.contains("the scheme http:// when left out")
            && url.contains("ws:// or wss:// for WebSocket"),
        "{url}"
    );
}

/// `wss://` to a plain WebSocket server was told to "try http://", which loads no
/// WebSocket; `--db` naming a directory read "disk I/O error". Each says what to give.
#[test]
fn tls_and_store_mistakes_name_the_fix() {
    let plain = TestServer::start(Behavior::Hello).unwrap();
    let url = plain.url("/").replacen("http://", "wss://", 1);
    let (code, err) = fails(&["load", "--connect-timeout", "300ms", &url]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("try ws:// in place of wss://"), "{err}");
    assert!(!err.contains("http://"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().to_str().unwrap();
    for cmd in ["ls", "report"] {
        let (code, err) = fails(&[cmd, "--db", db]);
        assert_eq!(code, Some(1), "{cmd}: {err}");
        assert!(
            err.contains(&format!("{db} is a directory, not a store: give --db a file in it, e.g. --db {db}/shootout.db")),
            "{cmd}: {err}"
        );
    }
}

/// The README's lines that install the completions and a man page ran into "No such file
/// or directory" in a home without those folders: run as written in a fresh home, they
/// leave both files.
#[test]
fn the_readme_install_lines_work_in_a_fresh_home() {
    let readme = include_str!("../README.md");
    let block = readme
        .split("```")
        .find(|b| b.contains("shootout completions bash >"))
        .expect("the README's install block");
    let lines: Vec<&str> = block
        .lines()
        .map(|l| l.split(" #").next().unwrap().trim())
        .filter(|l| l.starts_with("mkdir ") || l.starts_with("shootout "))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let home = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("shootout");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for l in &lines {
        let out = std::process::Command::new("bash")
            .args(["-c", l])
            .env("HOME", home.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{l}: {out:?}");
    }
    let share = home.path().join(".local/share");
    let completions =
        std::fs::read_to_string(share.join("bash-completion/completions/shootout")).unwrap();
    assert!(completions.contains("concurrency"), "{completions}");
    let page = std::fs::read_to_string(share.join("man/man1/shootout-load.1")).unwrap();
    assert!(page.contains(".TH shootout-load 1"), "{page}");
}

/// `load --find-max` read --html, -e, -g, --save, --fail-if and --warmup without a word
/// and wrote or judged nothing: each is refused before anything runs, naming what to do.
#[test]
fn flags_a_capacity_search_would_leave_unread_are_refused() {
    let nobody = "http://127.0.0.1:1/";
    let cases: &[(&[&str], &str)] = &[
        (
            &["--html", "x.html"],
            "--html draws one load, and a search runs many",
        ),
        (&["-e", "x.csv"], "-e and -g write one load's ab files"),
        (&["-g", "x.tsv"], "-e and -g write one load's ab files"),
        (&["--save", "x.json"], "--save writes one load's result"),
        (&["--fail-if", "p99>1ms"], "--fail-if judges one load"),
        (&["--warmup", "2s"], "--warmup warms up one load"),
        (&["--shard", "0/2"], "a capacity search runs on one machine"),
    ];
    for (flags, said) in cases {
        let mut args = vec!["load", "--find-max", "--slo", "p99<50ms"];
        args.extend_from_slice(flags);
        args.push(nobody);
        let (code, err) = fails(&args);
        assert_eq!(code, Some(2), "{flags:?}: {err}");
        assert!(
            err.starts_with(&format!("error: {said}")),
            "{flags:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{flags:?}: {err}");
    }
}
