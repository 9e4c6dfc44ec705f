//! The live view end to end: `shootout load` with stdout on a pseudo-terminal (util-linux
//! `script`), sized 100 × 30 as a user's window would be.

use shootout_testserver::{Behavior, TestServer};
use std::process::Command;
use std::time::Duration;

/// Runs `shootout load ARGS URL` on a pseudo-terminal; returns all it wrote there.
fn on_a_terminal(args: &str, server: &TestServer) -> String {
    let bin = assert_cmd::cargo::cargo_bin("shootout");
    let cmd = format!(
        "stty rows 30 cols 100; {} load {args} {}",
        bin.display(),
        server.url("/")
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("util-linux's `script` runs commands on a pseudo-terminal");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A server slow enough (2 ms an answer) that a 0.6 s load is drawn a few times.
fn server() -> TestServer {
    TestServer::start(Behavior::StallEvery {
        n: 1,
        stall: Duration::from_millis(2),
    })
    .unwrap()
}

const ENTER: &str = "\x1b[?1049h";
const LEAVE: &str = "\x1b[?1049l";

#[test]
fn the_live_view_leaves_the_screen_before_the_report_prints() {
    let s = server();
    let out = on_a_terminal("-d 600ms -c 2", &s);
    let (enter, leave) = (out.find(ENTER), out.rfind(LEAVE));
    let report = out.rfind("Requests ").expect("the report");
    assert!(enter.is_some() && leave.is_some(), "{out:?}");
    assert!(enter < leave && leave < Some(report), "{out:?}");
    // The view was drawn: its boxes, with figures (words are drawn one by one: the
    // cursor skips the blanks between them).
    let view = &out[enter.unwrap()..leave.unwrap()];
    for part in ["Latency", "histogram", "Failures", "req/s", "200", "≤"] {
        assert!(
            view.contains(part),
            "{part} missing from the view: {view:?}"
        );
    }
}

#[test]
fn quiet_on_a_terminal_draws_nothing() {
    let s = server();
    let out = on_a_terminal("-q -d 300ms -c 2", &s);
    assert!(!out.contains('\x1b'), "{out:?}");
    assert!(out.contains("Requests "), "{out:?}");
}

#[test]
fn no_live_on_a_terminal_gives_the_progress_line_only() {
    let s = server();
    let out = on_a_terminal("--no-live -d 300ms -c 2", &s);
    assert!(!out.contains(ENTER), "{out:?}");
    assert!(out.contains("Requests "), "{out:?}");
}
