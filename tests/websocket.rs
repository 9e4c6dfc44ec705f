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
    assert_eq!(v["status_codes"]["101"], 60);
    assert_eq!(server.answers(), 60);
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
            WsBehavior::Refuse { status: 403 },
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
