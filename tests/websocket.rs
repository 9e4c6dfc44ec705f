//! End-to-end tests of `shootout load` on WebSocket URLs against in-process servers: the
//! flags, the JSON document's protocol, counts and close codes, and how each failure class
//! prints in the text report.

use assert_cmd::Command;
use shootout_testserver::{Breach, Delivery, WsBehavior, WsServer};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap()
}

#[test]
fn a_text_echo_run_is_counted_like_requests() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let out = shootout()
        .args([
            "load",
            "-q",
            "--json",
            "-n",
            "60",
            "-c",
            "3",
            "--pipeline",
            "2",
        ])
        .args([
            "--ws-text",
            "héllo",
            "--expect-echo",
            "--expect-length",
            "6",
        ])
        .arg(server.url("/echo"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out.stdout);
    assert_eq!(v["load"]["protocol"], "websocket");
    assert_eq!(v["load"]["pipeline"], 2);
    assert_eq!(v["requests"]["ok"], 60);
    assert_eq!(v["requests"]["failed"], 0);
    // One 101 per handshake, not one per reply.
    assert_eq!(v["status_codes"]["101"], v["connections"]["opened"]);
    assert!((1..=3).contains(&v["connections"]["opened"].as_u64().unwrap()));
    assert_eq!(server.answers(), 60);
}

/// Connections whose upgrade is still under way when the run ends show on the
/// Connections line and in the JSON document.
#[test]
fn connections_still_upgrading_at_the_end_are_reported() {
    let server = WsServer::start(WsBehavior::NoUpgrade).unwrap();
    for (format, shows) in [
        ("text", "0 opened, 0 failed, 2 still opening at the end"),
        ("json", "\"opening\": 2"),
    ] {
        let out = shootout()
            .args(["load", "-q", "--format", format, "-d", "300ms", "-c", "2"])
            .args(["--ws-text", "hi"])
            .arg(server.url("/echo"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(shows), "{format}: {stdout}");
    }
}

/// A panic in a worker (injected in this debug build) is shootout's fault: counted as
/// `generator_fault` in the report, not as the server's, and the command exits 1 asking
/// for a bug report.
#[test]
fn a_generator_fault_is_reported_apart_and_exits_non_zero() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    for (format, shows) in [
        ("json", "\"generator_fault\": 1"),
        ("ab", "Failed requests:        1"),
        ("wrk", "Generator faults (shootout's own bug): 1"),
        ("text", "1 generator_fault"),
    ] {
        let out = shootout()
            .env("SHOOTOUT_DEBUG_PANIC_AT", "3")
            .args(["load", "-q", "--format", format, "-n", "10", "-c", "1"])
            .args(["--ws-text", "hi"])
            .arg(server.url("/echo"))
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{format}: {stderr}");
        assert!(stdout.contains(shows), "{format}: {stdout}");
        assert!(
            stderr.contains("error: 1 request failed by a fault of shootout's own")
                && stderr.contains("please report it"),
            "{format}: {stderr}"
        );
    }
}

#[test]
fn a_binary_file_goes_as_one_binary_message_in_rate_mode() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("msg.bin");
    std::fs::write(&file, [0u8, 159, 146, 150, 255]).unwrap();
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let out = shootout()
        .args([
            "load", "-q", "--json", "-n", "40", "-c", "2", "--rate", "400",
        ])
        .arg("-p")
        .arg(&file)
        .args(["--expect-echo"])
        .arg(server.url("/echo"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out.stdout);
    assert_eq!(v["load"]["mode"], "rate");
    assert_eq!(v["requests"]["ok"], 40);
}

/// Each class, as the text report's Failures line names it; the close code on a line of
/// its own.
#[test]
fn each_failure_class_prints_by_name() {
    let cases = [
        (
            WsBehavior::Refuse {
                status: 403,
                after: std::time::Duration::ZERO,
            },
            "Failures ",
            "4 handshake",
        ),
        (WsBehavior::CloseAfter { after: 1 }, "Failures ", "2 closed"),
        (
            WsBehavior::CloseAfter { after: 1 },
            "WebSocket ",
            "close frames received: 2 × 1011 (server error)",
        ),
        (
            WsBehavior::Breach {
                after: 1,
                breach: Breach::Reserved,
            },
            "Failures ",
            "2 protocol",
        ),
        (WsBehavior::Drop { after: 1 }, "Failures ", "2 reset"),
    ];
    for (behavior, row, said) in cases {
        let server = WsServer::start_with(behavior.clone(), Delivery::Whole, false).unwrap();
        let out = shootout()
            .args(["load", "-q", "-n", "4", "-c", "1", "--ws-text", "x"])
            .arg(server.url("/"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("{behavior:?}: no {row} line in\n{text}"));
        assert!(line.contains(said), "{behavior:?}: {line}");
    }
}

#[test]
fn websocket_flags_name_their_rules() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let out = shootout()
        .args(["load", "-q", "-n", "1", "--http2"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ws:// and wss://"));
    let out = shootout()
        .args([
            "load",
            "-q",
            "-n",
            "1",
            "--expect-echo",
            "http://127.0.0.1:1/",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--expect-echo"));
}

#[test]
fn the_text_report_says_what_a_request_is() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let out = shootout()
        .args([
            "load",
            "-q",
            "-n",
            "8",
            "-c",
            "2",
            "--pipeline",
            "4",
            "--ws-text",
            "x",
        ])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "2 connections × 4 in flight (WebSocket: a request is a message and its reply)"
        ),
        "{text}"
    );
}

#[test]
fn hold_mode_keeps_connections_and_counts_pings() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let out = shootout()
        .args([
            "load",
            "-q",
            "--json",
            "-c",
            "5",
            "-d",
            "500ms",
            "--ws-hold",
            "100ms",
        ])
        .args(["--ws-hold-rate", "1000"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out.stdout);
    assert_eq!(v["load"]["mode"], "hold");
    assert_eq!(v["requests"]["failed"], 0);
    assert!(v["requests"]["ok"].as_u64().unwrap() >= 20, "{v}");
    assert_eq!(v["connections"]["opened"], 5, "{v}");
    assert_eq!(server.messages(), 0);
    let out = shootout()
        .args(["load", "-q", "-c", "2", "-d", "200ms", "--ws-hold", "1s"])
        .arg(server.url("/"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2 connections (WebSocket) on ")
            && text.contains("held, a request is a ping every 1 s and its pong, for 200 ms"),
        "{text}"
    );
}

/// `--ws-messages FILE`: the list's lines go as text messages, in order, with `{seq}`
/// drawn for each; the report names the list, the JSON its file, order and seed; a bad
/// template names its line; `--order` without a list, or with one message besides, is
/// refused.
#[test]
fn a_message_list_is_sent_and_every_echo_checked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chat.txt");
    std::fs::write(&file, "# chat\n{\"seq\": {seq}}\n\nhello {rand:1-6}\n").unwrap();
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let run = |extra: &[&str]| {
        shootout()
            .args(["load", "-q", "-n", "40", "-c", "2", "--expect-echo"])
            .arg("--ws-messages")
            .arg(&file)
            .args(extra)
            .arg(server.url("/echo"))
            .output()
            .unwrap()
    };
    let out = run(&["--json", "--seed", "5", "--order", "random"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out.stdout);
    assert_eq!(
        (
            v["requests"]["ok"].as_u64(),
            v["requests"]["failed"].as_u64()
        ),
        (Some(40), Some(0))
    );
    assert_eq!(v["load"]["messages_file"], file.display().to_string());
    assert_eq!(
        (v["load"]["order"].as_str(), v["load"]["seed"].as_u64()),
        (Some("random"), Some(5))
    );
    assert_eq!(server.answers(), 40);
    let text = String::from_utf8_lossy(&run(&[]).stdout).into_owned();
    assert!(
        text.contains(&format!(
            "2 messages from {} (in order) to ws://",
            file.display()
        )),
        "{text}"
    );
    // Messages of a list differ in length by design: no ab-style length mismatch.
    assert!(!text.contains("differed in length"), "{text}");
    // A server that answers each message with the one before: 2 connections, each first
    // reply right.
    let stale = WsServer::start(WsBehavior::Stale).unwrap();
    let out = shootout()
        .args([
            "load",
            "-q",
            "--json",
            "-n",
            "40",
            "-c",
            "2",
            "--expect-echo",
        ])
        .arg("--ws-messages")
        .arg(&file)
        .arg(stale.url("/echo"))
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert_eq!(
        (
            v["requests"]["ok"].as_u64(),
            v["requests"]["failed"].as_u64()
        ),
        (Some(2), Some(38))
    );

    std::fs::write(&file, "fine\nbad {rand:7-1}\n").unwrap();
    let err = String::from_utf8_lossy(&run(&[]).stderr).into_owned();
    assert!(
        err.contains(&format!("--ws-messages {}:2:", file.display()))
            && err.contains("{rand:LO-HI}"),
        "{err}"
    );
    let out = shootout()
        .args([
            "load",
            "-q",
            "-n",
            "1",
            "--order",
            "random",
            "--ws-text",
            "x",
        ])
        .arg(server.url("/echo"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--urls"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
