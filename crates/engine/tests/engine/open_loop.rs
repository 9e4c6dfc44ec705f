//! The open loop's connections, opened as clients bring theirs: a request that finds no
//! free connection opens one and goes out once it is up; a connection the server closed
//! is not opened again until a request needs it; a free connection is reused most
//! recently freed first, so spare ones sit idle and the server may close them; those
//! opened ahead of need (`-c`) are used in the order they opened.

use crate::common;

use common::each_way_with;
use shootout_model::{LoadSpec, Pace, RunResult, Target, Warning};
use shootout_testserver::{Behavior, Delivery, TestServer};
use std::time::Duration;

/// `n` requests at `rate` per second on one thread, `c` connections opened ahead of need.
fn paced(server: &TestServer, n: u64, rate: f64, c: usize) -> LoadSpec {
    let mut s = LoadSpec::new(Target::parse(&server.url("/")).unwrap());
    s.requests = Some(n);
    s.connections = c;
    s.threads = 1;
    s.timeout = Duration::from_secs(10);
    s.pace = Pace::Rate(rate);
    s
}

/// Runs `load` against `behavior` whole, then one byte per write; each run with its
/// server, whose counters are final (every connection it accepted has ended).
fn both(
    behavior: Behavior,
    load: impl Fn(&TestServer) -> LoadSpec,
) -> [(RunResult, TestServer); 2] {
    each_way_with(
        |d: Delivery| TestServer::start_with(behavior.clone(), d).unwrap(),
        TestServer::wait_idle,
        load,
    )
}

/// A sync worker serves one connection at a time and closes it after its answer. The
/// connection opened ahead of need carries the first request, and each later request
/// opens its own: no connection is opened that no request needed, none is opened again
/// after the server closed it. Before, each connection closed was opened again at once and
/// left idle (a reconnect per request, one connection more than requests).
#[test]
fn a_sync_worker_is_given_a_request_on_each_connection_it_accepts() {
    for (r, server) in both(Behavior::SyncWorker, |s| paced(s, 8, 4.0, 1)) {
        let c = &r.counts;
        assert_eq!((c.ok, c.failed()), (8, 0), "{c:?}");
        // One opened ahead of need, seven when their requests fell due.
        assert_eq!(c.connections_opened, 8, "{c:?}");
        assert_eq!(c.reconnects, 0, "{c:?}");
        assert_eq!(server.connections(), 8 + 1, "and the pre-flight's");
        assert_eq!(server.answers(), 8);
    }
}

/// At 100 req/s, a server that closes every connection after its answer: each request
/// opens the connection it needs, exactly one per request, and no more.
#[test]
fn connections_opened_are_the_ones_the_requests_needed() {
    let close = Behavior::CloseAfter {
        requests: 1,
        header: true,
    };
    for (r, server) in both(close, |s| paced(s, 50, 100.0, 1)) {
        let c = &r.counts;
        assert_eq!((c.ok, c.failed()), (50, 0), "{c:?}");
        assert_eq!((c.connections_opened, c.reconnects), (50, 0), "{c:?}");
        assert_eq!(server.connections(), 50 + 1, "and the pre-flight's");
    }
}

/// A keep-alive server that closes a connection idle for 300 ms, a request every 100 ms,
/// eight connections opened ahead of need: the most recently freed connection carries
/// the requests (it is never idle 300 ms), the seven others sit idle until the server
/// closes them, and none is opened again. Taken in turn, each would sit 800 ms between
/// requests, be closed, and be opened again (over 20 connections).
#[test]
fn a_free_connection_is_reused_most_recently_freed_first() {
    let idle = Behavior::CloseIdle {
        after: Duration::from_millis(300),
    };
    for (r, server) in both(idle, |s| paced(s, 20, 10.0, 8)) {
        let c = &r.counts;
        assert_eq!((c.ok, c.failed(), c.reconnects), (20, 0, 0), "{c:?}");
        // Eight; one or two more where a busy machine held an answer past the next due
        // time (the request then found no free connection and opened one).
        assert!((8..=10).contains(&c.connections_opened), "{c:?}");
        // Closed after sitting idle, not at accept: no drop, no pause.
        assert_eq!(c.dropped, 0, "{c:?}");
        assert_eq!(
            server.connections(),
            c.connections_opened + 1,
            "and the pre-flight's"
        );
        assert!(
            !r.warnings
                .iter()
                .any(|w| matches!(w, Warning::Dropped { .. })),
            "{:?}",
            r.warnings
        );
    }
}

/// A server whose every other request stalls 200 ms, a request every 100 ms on connections
/// opened as needed: each stalled request is answered after the one sent 100 ms later on
/// another connection, and only those are counted (the fast ones are answered in order).
#[test]
fn requests_answered_after_later_ones_are_counted() {
    let every_other = Behavior::StallEvery {
        n: 2,
        stall: Duration::from_millis(200),
    };
    for (r, server) in both(every_other, |s| paced(s, 10, 10.0, 1)) {
        let c = &r.counts;
        assert_eq!((c.ok, c.failed()), (10, 0), "{c:?}");
        let sched = r.schedule.unwrap();
        // The stalled ones are the 2nd, 4th, … 10th; the last is overtaken by none.
        assert_eq!(server.requests(), 10);
        assert_eq!(sched.overtaken, 4, "{sched:?}");
    }
}

/// A sync worker, with connections opened as their requests fall due, answers them in the
/// order they were sent: none is counted as overtaken.
#[test]
fn a_sync_worker_answers_in_the_order_requests_were_sent() {
    for (r, _server) in both(Behavior::SyncWorker, |s| paced(s, 40, 100.0, 1)) {
        let c = &r.counts;
        assert_eq!((c.ok, c.failed(), c.reconnects), (40, 0, 0), "{c:?}");
        let sched = r.schedule.unwrap();
        assert_eq!(sched.overtaken, 0, "{sched:?}");
    }
}
