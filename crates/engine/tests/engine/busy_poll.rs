//! `LoadSpec::busy_poll`: workers poll before sleeping, and still count every request
//! exactly, over HTTP/1.1 and HTTP/2; an idle run backs off instead of burning its CPU.

use crate::common;

use common::closed;
use shootout_engine::{run, Control};
use shootout_model::{Pace, Protocol, RunResult};
use shootout_testserver::{Behavior, H2Behavior, H2Server, TestServer};
use std::time::Duration;

fn busy(s: &shootout_model::LoadSpec, poll: Duration) -> RunResult {
    let mut s = s.clone();
    s.busy_poll = poll;
    run(&s, &Control::new(s.threads)).expect("run")
}

#[test]
fn a_busy_polling_closed_loop_counts_every_request_once() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let r = busy(
        &closed(&server.url("/"), 3000, 8),
        Duration::from_micros(200),
    );
    assert_eq!(r.counts.ok, 3000, "{:?}", r.counts);
    assert_eq!(r.counts.failed(), 0);
    assert_eq!(server.requests(), 3000);
}

#[test]
fn a_busy_polling_http2_run_counts_every_stream_once() {
    let server = H2Server::start(H2Behavior::Hello).unwrap();
    let mut s = closed(&server.url("/"), 3000, 4);
    s.protocol = Protocol::Http2;
    s.streams = 10;
    let r = busy(&s, Duration::from_micros(200));
    assert_eq!(r.counts.ok, 3000, "{:?}", r.counts);
    assert_eq!(r.counts.failed(), 0);
    assert_eq!(server.answers(), 3000);
}

/// 100 requests a second for a second: nearly every wait finds nothing within the poll,
/// so the worker backs off and sleeps. Polling 1 ms before each of its ~110 waits would
/// burn over 100 ms of CPU more than the same run without polling.
#[test]
fn an_idle_run_backs_off_from_busy_polling() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut s = closed(&server.url("/"), 100, 2);
    s.requests = None;
    s.pace = Pace::Rate(100.0);
    s.duration = Some(Duration::from_secs(1));
    let cpu = |r: &RunResult| r.generator.cpu_user + r.generator.cpu_sys;
    let plain = busy(&s, Duration::ZERO);
    let polled = busy(&s, Duration::from_millis(1));
    assert_eq!(polled.counts.ok, 100, "{:?}", polled.counts);
    assert!(
        cpu(&polled) < cpu(&plain) + Duration::from_millis(50),
        "{:?} of CPU polling, {:?} without",
        cpu(&polled),
        cpu(&plain)
    );
    // What polling found nothing in is waiting, not work.
    assert!(
        polled.generator.busiest_thread < plain.generator.busiest_thread + 0.03,
        "{} busy polling, {} without",
        polled.generator.busiest_thread,
        plain.generator.busiest_thread
    );
}

/// Answers that take 100 ms let a busy-polling worker nap (100 µs less what a nap
/// oversleeps) between its looks instead of spinning: every answer is still read, once,
/// and none is read sooner than it came.
#[test]
fn a_busy_polling_worker_that_naps_on_slow_answers_counts_every_request_once() {
    let stall = Duration::from_millis(100);
    let server = TestServer::start(Behavior::StallEvery { n: 1, stall }).unwrap();
    let r = busy(
        &closed(&server.url("/"), 250, 50),
        Duration::from_micros(200),
    );
    assert_eq!(r.counts.ok, 250, "{:?}", r.counts);
    assert_eq!(r.counts.failed(), 0);
    assert_eq!(server.requests(), 250);
    // In µs, to the histogram's three significant digits.
    let least = r.histograms.latency.min();
    assert!(
        least >= 99_900,
        "an answer read {least} µs after its request, sooner than the server's {stall:?}"
    );
}
