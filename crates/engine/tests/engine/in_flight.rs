//! The requests still in flight when a load ends, each with its age: from its due time
//! (rate mode) or its start (closed loop) to the end, whether a connection holds it or it
//! was due with none free. Against servers that read requests and never answer, every
//! request of the run is in flight at its end, and its age is known from the schedule.

use crate::common::{closed, each_way_with, h2c};
use hdrhistogram::Histogram;
use shootout_model::{LoadSpec, Pace, Protocol, RunResult, Target};
use shootout_testserver::{Behavior, Delivery, H2Behavior, H2Server, TestServer};
use std::time::Duration;

const MS: u64 = 1_000;

/// 100 req/s for 1 s on one thread, one connection opened ahead of need, at most `cap`.
fn paced(server: &TestServer, cap: usize) -> LoadSpec {
    let mut s = LoadSpec::new(Target::parse(&server.url("/")).unwrap());
    s.requests = None;
    s.duration = Some(Duration::from_secs(1));
    s.connections = 1;
    s.max_connections = Some(cap);
    s.threads = 1;
    s.timeout = Duration::from_secs(10);
    s.pace = Pace::Rate(100.0);
    s
}

/// Runs `load` against a server that never answers, its bytes whole, then one by one.
fn never_answered(load: impl Fn(&TestServer) -> LoadSpec) -> [(RunResult, TestServer); 2] {
    each_way_with(
        |d: Delivery| TestServer::start_with(Behavior::NeverAnswer, d).unwrap(),
        TestServer::wait_idle,
        load,
    )
}

/// The ages a run keeps, in µs.
fn ages(r: &RunResult) -> &Histogram<u64> {
    r.in_flight_at_end.as_ref().expect("the engine keeps them")
}

/// How many ages within 2 ms of `us`.
fn near(h: &Histogram<u64>, us: u64) -> u64 {
    h.count_between(us.saturating_sub(2 * MS), us + 2 * MS)
}

/// Request `k` was due at `10k` ms of a 1 s run: at its end it had waited `1000 − 10k`
/// ms, 10 ms to 1 s, one each (the request due at 1 s falls after the end). With a
/// connection for each, they are in flight on them (the last ones may still wait for the
/// loop on a busy machine); with 30 at most, 30 are and the 70 others were due with none
/// free: in flight all the same, aged from their due times.
#[test]
fn every_request_left_unanswered_is_in_flight_at_the_end_with_its_age() {
    for (cap, least) in [(200, 90), (30, 30)] {
        for (r, server) in never_answered(|s| paced(s, cap)) {
            let c = &r.counts;
            let sched = r.schedule.unwrap();
            assert_eq!(c.completed, 0, "cap {cap}: {c:?}");
            assert_eq!((sched.due, sched.sent), (100, c.aborted), "cap {cap}");
            assert!(
                (least..=cap as u64).contains(&c.aborted),
                "cap {cap}: {c:?}"
            );
            assert!(server.requests() <= c.aborted, "cap {cap}");
            let h = ages(&r);
            assert_eq!(h.len(), 100, "cap {cap}");
            assert_eq!(r.unsent_at_end(), 100 - c.aborted, "cap {cap}");
            for k in 0..100 {
                let age = (1000 - 10 * k) * MS;
                assert_eq!(
                    near(h, age),
                    1,
                    "cap {cap}: the request due at {} ms",
                    10 * k
                );
            }
            assert_eq!(h.count_between(0, 5 * MS), 0, "cap {cap}: none younger");
        }
    }
}

/// A closed loop's requests in flight are aged from their start: three connections that
/// each sent one request at the start of a 500 ms run, never answered.
#[test]
fn a_closed_loop_s_requests_in_flight_are_aged_from_their_start() {
    for (r, _server) in never_answered(|s| {
        let mut spec = closed(&s.url("/"), 0, 3);
        spec.requests = None;
        spec.duration = Some(Duration::from_millis(500));
        spec
    }) {
        assert_eq!((r.counts.completed, r.counts.aborted), (0, 3));
        let h = ages(&r);
        assert_eq!((h.len(), r.unsent_at_end()), (3, 0));
        // Started as the run did (a busy machine may start them a little later).
        assert_eq!(h.count_between(300 * MS, 500 * MS), 3, "{h:?}");
    }
}

/// Over HTTP/2 the streams left open are in flight: 2 connections × 4 streams, none
/// answered, each aged from its start.
#[test]
fn http2_streams_left_open_are_in_flight_with_their_ages() {
    let never = H2Behavior::NeverAnswerEvery { n: 1 };
    let runs = each_way_with(h2c(&never), H2Server::wait_idle, |s| {
        let mut spec = closed(&s.url("/"), 0, 2);
        spec.requests = None;
        spec.duration = Some(Duration::from_millis(500));
        spec.protocol = Protocol::Http2;
        spec.streams = 4;
        spec
    });
    for (r, server) in runs {
        assert_eq!((r.counts.completed, r.counts.aborted), (0, 8));
        assert_eq!(server.unanswered(), 8);
        let h = ages(&r);
        assert_eq!(h.len(), 8);
        assert_eq!(h.count_between(300 * MS, 500 * MS), 8, "{h:?}");
    }
}
