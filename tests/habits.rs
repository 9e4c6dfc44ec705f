//! End-to-end tests of the flags other load tools' users type (ab, wrk, oha, hey): each
//! one accepted changes what it means to change, on a real test server; each refused one
//! is exit 2 with one line naming the flag and shootout's equivalent.

use assert_cmd::Command;
use shootout_testserver::{Behavior, TestServer};
use std::process::Output;

fn load(args: &[&str], url: &str) -> Output {
    Command::cargo_bin("shootout")
        .unwrap()
        .arg("load")
        .args(args)
        .arg(url)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// ab's `-A user:password` sends `Authorization: Basic …` (RFC 7617), hey's `-A` with a
/// media type its Accept header; a bare word is refused.
#[test]
fn a_sends_basic_authentication() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = load(&["-n", "2", "-A", "Aladdin:open sesame"], &server.url("/"));
    ok(&out);
    let head = server.last_request_head();
    assert!(
        head.contains("\r\nAuthorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n"),
        "{head}"
    );
    // hey's -a user:password is the same.
    let out = load(&["-n", "1", "-a", "u:p"], &server.url("/"));
    ok(&out);
    assert!(server
        .last_request_head()
        .contains("\r\nAuthorization: Basic dTpw\r\n"));
    let out = load(&["-n", "1", "-A", "text/html"], &server.url("/"));
    ok(&out);
    assert!(server
        .last_request_head()
        .contains("\r\nAccept: text/html\r\n"));
    let out = load(&["-A", "nobody"], "http://127.0.0.1:1/");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("-A user:password"));
    let out = load(
        &["-A", "a:b", "-H", "authorization: x"],
        "http://127.0.0.1:1/",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("keep one"),
        "{}",
        text(&out.stderr)
    );
}

/// ab's `-B`: connections come from the addresses given, spread round robin (the server
/// sees each of them); a family the target lacks, or an address not of this machine, is
/// refused before the run.
#[test]
fn b_binds_the_local_addresses() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = load(
        &["-n", "20", "-c", "4", "-B", "127.0.0.2"],
        &server.url("/"),
    );
    ok(&out);
    assert_eq!(
        server.peer_ips(),
        vec!["127.0.0.2".parse::<std::net::IpAddr>().unwrap()]
    );

    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = load(
        &["-n", "40", "-c", "4", "--threads", "2", "-B", "127.0.0.5-8"],
        &server.url("/"),
    );
    ok(&out);
    let seen: Vec<String> = server.peer_ips().iter().map(ToString::to_string).collect();
    assert_eq!(seen, ["127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8"]);

    let out = load(&["-n", "1", "-B", "::1"], &server.url("/"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("has no IPv6 address"),
        "{}",
        text(&out.stderr)
    );
    // TEST-NET-1: never an address of this machine.
    let out = load(&["-n", "1", "-B", "192.0.2.1"], &server.url("/"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("-B: cannot connect from the local address 192.0.2.1"));
}

/// ab's `-v 2`: the first request's head and the first answers' heads on stderr; below
/// 2, nothing of the kind.
#[test]
fn v_2_prints_the_heads() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = load(
        &["-n", "5", "-v", "2", "-H", "X-Probe: 7"],
        &server.url("/hi"),
    );
    ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("INFO: GET header == \n---\nGET /hi HTTP/1.1\n"),
        "{err}"
    );
    assert!(err.contains("X-Probe: 7\n"), "{err}");
    assert_eq!(
        err.matches("LOG: header received:\nHTTP/1.1 200").count(),
        3,
        "{err}"
    );
    let quiet = load(&["-n", "5", "-v", "1"], &server.url("/hi"));
    ok(&quiet);
    assert!(!text(&quiet.stderr).contains("header"));
}

/// `-v 2` over HTTP/2: the request's fields as sent and the first answers' heads as
/// decoded, in curl's way of showing HTTP/2 (`HTTP/2 200`, then `name: value`).
#[test]
fn v_2_prints_the_heads_over_http2() {
    let server =
        shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::Hello).unwrap();
    let out = load(
        &[
            "-n",
            "5",
            "-c",
            "1",
            "--http2",
            "-v",
            "2",
            "-H",
            "X-Probe: 7",
        ],
        &server.url("/hi"),
    );
    ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "INFO: GET header == \n---\nGET /hi HTTP/2\n:scheme: http\n:authority: 127.0.0.1:"
        ),
        "{err}"
    );
    assert!(err.contains("x-probe: 7\n"), "{err}");
    assert_eq!(
        err.matches(
            "LOG: header received:\nHTTP/2 200\ncontent-length: 12\nserver: shootout-testserver"
        )
        .count(),
        3,
        "{err}"
    );
}

/// ab's `-l` and `-S` change `--format ab` as they change ab's report; `-r`, wrk's
/// `--latency` and oha's `--latency-correction` are accepted.
#[test]
fn ab_report_flags_and_accepted_no_ops() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = load(
        &["-n", "4", "--format", "ab", "-S", "-l", "-r"],
        &server.url("/"),
    );
    ok(&out);
    let report = text(&out.stdout);
    assert!(
        report.contains("              min   avg   max\n"),
        "{report}"
    );
    assert!(!report.contains("+/-sd"), "{report}");
    for flags in [
        &["--latency"][..],
        &["--latency-correction", "--rate", "50"],
    ] {
        let mut args = vec!["-n", "2"];
        args.extend_from_slice(flags);
        ok(&load(&args, &server.url("/")));
    }
}

/// oha's and hey's `-z 1s` is `-d 1s`; wrk's `--timeout 2s` takes a unit.
#[test]
fn z_is_a_duration_and_timeout_takes_units() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let out = load(
        &["-z", "300ms", "--timeout", "2s", "--json"],
        &server.url("/"),
    );
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["requests"]["completed"].as_u64().unwrap() > 1, "{v}");
    assert_eq!(v["load"]["duration_s"].as_f64(), Some(0.3), "{v}");
    let secs = v["duration_s"].as_f64().unwrap();
    assert!((0.3..1.0).contains(&secs), "ran for the -z given: {secs}");
    // hey and oha open 50 connections for -z: the one used here is said, as -t's reading is.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-z 300ms read as -d 300ms on 1 connection (shootout's -c default; hey and oha open 50): add -c 50"),
        "{err}"
    );
    let out = load(&["-z", "300ms", "-c", "2", "--json"], &server.url("/"));
    ok(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("-z 300ms"));
}

/// Flags whose meaning cannot be kept: exit 2, one line naming the flag and the way here.
#[test]
fn refused_habits_point_to_the_equivalent() {
    let url = "http://127.0.0.1:1/";
    for (args, says) in [
        (&["-q", "100"][..], "--rate 100"),
        (&["-q200"], "--rate 200"),
        (&["-w"], "--html FILE"),
        (
            &["-X", "proxy:3128"],
            "-X proxy:3128: shootout does not send through a proxy",
        ),
        (&["-P", "u:p"], "-P: shootout does not send through a proxy"),
        (&["-s", "post.lua"], "-s post.lua: shootout runs no Lua"),
        (&["--script", "x.lua"], "--urls FILE"),
        (&["-disable-keepalive"], "--no-keepalive"),
        (&["--disable-keepalive"], "--no-keepalive"),
        (&["-m", "POST", "-d", "a=1"], "-p FILE"),
        (&["-R", "2000"], "--rate 2000"),
        (&["-o", "csv"], "-g FILE"),
    ] {
        let out = load(args, url);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Every habit flag kept in the help has its line there.
#[test]
fn help_names_the_habits() {
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .args(["load", "--help"])
        .output()
        .unwrap();
    let help = text(&out.stdout);
    for flag in [
        "-A, --auth",
        "-B, --bind",
        "-v, --verbosity",
        "-l",
        "-S",
        "Flags of other tools",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}

/// `--busy-poll` reaches the engine and the record: the JSON says how long workers polled
/// (0 when they did not), and every request is still counted.
#[test]
fn busy_poll_is_recorded_in_the_json() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let polled = load(
        &["-n", "300", "-c", "4", "--busy-poll", "50us", "--json"],
        &server.url("/"),
    );
    ok(&polled);
    let plain = load(&["-n", "300", "-c", "4", "--json"], &server.url("/"));
    ok(&plain);
    let field = |out: &Output| -> (u64, u64) {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["load"]["busy_poll_us"].as_u64().unwrap(),
            v["requests"]["ok"].as_u64().unwrap(),
        )
    };
    assert_eq!(field(&polled), (50, 300));
    assert_eq!(field(&plain), (0, 300));
}

/// `-v 2` on a journey load: one user's first journey on stderr, each step's request and
/// answer heads and the values it captured.
#[test]
fn v_2_on_a_journey_prints_one_user_s_first_journey() {
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("j.toml");
    std::fs::write(
        &file,
        "[[journey]]\nname = \"w\"\n[[journey.step]]\nname = \"login\"\npost = \"/login?user=u{user}\"\n\
         [[journey.step]]\nname = \"form\"\nget = \"/form\"\n\
         capture = { csrf = { regex = 'name=\"csrf\" value=\"([^\"]+)\"' } }\n",
    )
    .unwrap();
    let out = load(
        &[
            "-n",
            "4",
            "-c",
            "2",
            "-v",
            "2",
            "--journey",
            file.to_str().unwrap(),
        ],
        &server.url("/"),
    );
    ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("INFO: one user's first journey, step by step:\n"),
        "{err}"
    );
    assert!(
        err.contains("INFO: step w › login: POST header == \n---\nPOST /login?user=u"),
        "{err}"
    );
    assert!(
        err.contains("INFO: step w › form: GET header == \n---\nGET /form HTTP/1.1\n"),
        "{err}"
    );
    assert_eq!(err.matches("INFO: step ").count(), 2, "one journey: {err}");
    assert_eq!(
        err.matches("LOG: header received:\nHTTP/1.1 ").count(),
        2,
        "{err}"
    );
    assert_eq!(err.matches("LOG: captured {csrf} = ").count(), 1, "{err}");
}
