//! The engine over HTTP/2 against servers that behave and servers that break the
//! protocol. Each hostile case runs with the server's bytes in one write and one byte per
//! write and must give the same counts, and each checks its counts against the server's
//! own truth counters: every stream ends once, as answered or as one failure class.

use crate::common;

use common::{both_ways_with, closed, each_way_with, failures, go, h2c};
use shootout_engine::{run, Control, EngineError};
use shootout_model::{
    FailureKind, LoadSpec, Pace, Protocol, RequestSpec, RunResult, Target, Warning,
};
use shootout_testserver::{Delivery, H2Behavior, H2Server, INTERNAL_ERROR, REFUSED_STREAM};
use std::time::Duration;

/// `n` requests over `c` connections of `streams` streams each (one thread), closed loop.
fn spec(server: &H2Server, n: u64, c: usize, streams: usize) -> LoadSpec {
    let mut s = closed(&server.url("/"), n, c);
    s.protocol = Protocol::Http2;
    s.streams = streams;
    s
}

/// Runs `load` against `behavior` served whole and byte by byte.
fn each_way(
    behavior: H2Behavior,
    load: impl Fn(&H2Server) -> LoadSpec,
) -> [(RunResult, H2Server); 2] {
    each_way_with(h2c(&behavior), H2Server::wait_idle, load)
}

/// [`each_way`], asserting that both give the same outcome.
fn both_ways(
    behavior: H2Behavior,
    load: impl Fn(&H2Server) -> LoadSpec,
) -> [(RunResult, H2Server); 2] {
    both_ways_with(h2c(&behavior), H2Server::wait_idle, load)
}

#[test]
fn every_stream_is_answered_and_counted_once() {
    for (r, server) in both_ways(H2Behavior::Hello, |s| {
        let mut spec = spec(s, 200, 2, 10);
        spec.expect.body_contains = Some(b"Hello World".to_vec());
        spec.expect.length = Some(12);
        spec
    }) {
        let c = &r.counts;
        assert_eq!((c.completed, c.ok, c.failed()), (200, 200, 0));
        assert_eq!(c.status.get(&200), Some(&200));
        assert_eq!(c.body_bytes, 200 * 12);
        assert_eq!((server.requests(), server.answers()), (200, 200));
        assert_eq!(
            server.connections(),
            3,
            "the pre-flight's and the run's two"
        );
        // Both connect; the second counts as opened once its SETTINGS arrive, which can
        // be after the first carried all 200 requests.
        assert!(
            (1..=2).contains(&c.connections_opened),
            "{}",
            c.connections_opened
        );
        let first = r.first_response.as_ref().unwrap();
        assert_eq!(first.server.as_deref(), Some("shootout-testserver"));
        assert!(r
            .warnings
            .iter()
            .all(|w| !matches!(w, Warning::Failures { .. })));
    }
}

#[test]
fn continuation_padding_interim_trailers_and_ping_are_understood() {
    for (r, server) in both_ways(H2Behavior::Fancy, |s| {
        let mut spec = spec(s, 50, 1, 5);
        spec.expect.body_contains = Some(b"Hello World".to_vec());
        spec.expect.length = Some(12);
        spec
    }) {
        let c = &r.counts;
        assert_eq!((c.ok, c.failed()), (50, 0), "{:?}", c.failures);
        assert_eq!(
            c.status.keys().copied().collect::<Vec<_>>(),
            vec![200],
            "103 is interim"
        );
        let (pings, acks) = server.pings();
        assert_eq!((pings, acks), (50, 50), "every PING acknowledged");
    }
}

#[test]
fn a_body_longer_than_the_default_window_arrives_whole() {
    // 70,000 bytes: over the 65,535 a stream may receive before any WINDOW_UPDATE, in
    // five DATA frames whose lengths must add up to the content-length.
    for (r, server) in both_ways(H2Behavior::Big { len: 70_000 }, |s| {
        let mut spec = spec(s, 2, 1, 2);
        spec.expect.length = Some(70_000);
        spec
    }) {
        assert_eq!((r.counts.ok, r.counts.body_bytes), (2, 140_000));
        assert_eq!(server.answers(), 2);
    }
}

// How many streams a GOAWAY finds in flight depends on when it arrives (later when sent
// byte by byte), so the GOAWAY cases check their counts against the server's, each way.

#[test]
fn goaway_mid_run_sends_unprocessed_streams_again_once() {
    // 42 requests, 5 answers per connection: 8 GOAWAYs, each read before the last answer.
    for (r, server) in each_way(H2Behavior::Goaway { after: 5 }, |s| spec(s, 42, 1, 4)) {
        let c = &r.counts;
        assert_eq!(
            (c.completed, c.ok, c.failed()),
            (42, 42, 0),
            "{:?}",
            c.failures
        );
        assert_eq!((c.goaways, server.goaways()), (8, 8));
        assert_eq!(
            c.retried,
            server.unprocessed(),
            "every unprocessed stream sent again"
        );
        assert!(
            c.retried > 0,
            "the client had streams in flight past each GOAWAY"
        );
        assert_eq!(server.answers(), 42);
        assert_eq!(c.reconnects, 8);
    }
}

/// A server that ends every connection with GOAWAY(NO_ERROR) after N answers (nginx's
/// `keepalive_requests`) cost a request whenever a stream it had sent back met a second
/// GOAWAY on its new connection: that request failed as `refused` though the server never
/// processed it. Now it goes again, within its deadline and up to `MAX_RESENDS` times,
/// counted as retried each time.
#[test]
fn a_request_a_goaway_returns_twice_goes_again_and_is_never_refused() {
    // One connection of 6 streams, 2 answers each: the 4 or more streams every GOAWAY
    // returns lead the next connection, which answers 2 of them and returns the others a
    // second time. 2 × 10 requests.
    for (r, server) in each_way(H2Behavior::Goaway { after: 2 }, |s| spec(s, 20, 1, 6)) {
        let c = &r.counts;
        assert_eq!(
            (c.completed, c.ok, c.failed()),
            (20, 20, 0),
            "{:?}",
            c.failures
        );
        assert_eq!(c.failures[FailureKind::Refused], 0);
        assert_eq!(server.answers(), 20);
        assert_eq!(c.retried, server.unprocessed(), "each send again counted");
        // 6 sent and 2 answered on each connection while 6 or more wait (8
        // connections), then 4 sent and 2 returned, then the last 2 answered.
        assert!(c.retried >= 8 * 4 + 2, "{}", c.retried);
    }
    // N × k requests over c connections: 5 answers a connection, 3 connections of 4
    // streams, 5 × 12 requests.
    for (r, server) in each_way(H2Behavior::Goaway { after: 5 }, |s| spec(s, 60, 3, 4)) {
        let c = &r.counts;
        assert_eq!(
            (c.completed, c.ok, c.failed()),
            (60, 60, 0),
            "{:?}",
            c.failures
        );
        assert_eq!(server.answers(), 60);
        assert_eq!(c.retried, server.unprocessed());
        assert!(c.retried > 0);
    }
}

#[test]
fn goaway_with_an_error_fails_the_streams_it_abandons() {
    for (r, server) in each_way(H2Behavior::GoawayError { after: 3 }, |s| spec(s, 30, 1, 4)) {
        let c = &r.counts;
        assert_eq!(c.ok, server.answers());
        assert_eq!(c.failures[FailureKind::ConnectionError], server.abandoned());
        assert_eq!(c.retried, server.unprocessed());
        assert_eq!(c.completed, 30);
        assert_eq!(c.goaways, server.goaways());
    }
}

#[test]
fn rst_stream_on_every_fifth_stream_is_counted_by_code() {
    let behavior = H2Behavior::ResetEvery {
        n: 5,
        code: INTERNAL_ERROR,
    };
    for (r, server) in both_ways(behavior, |s| spec(s, 100, 2, 5)) {
        assert_eq!(failures(&r), vec![(FailureKind::StreamReset, 20)]);
        assert_eq!(r.counts.ok, 80);
        assert_eq!(r.counts.stream_resets.get(&INTERNAL_ERROR), Some(&20));
        assert_eq!(server.resets(), 20);
    }
    // REFUSED_STREAM: not processed, so sent again. 40 answers take 53 streams, every
    // 4th of them refused (no request twice in a row): 13 refused, each sent again.
    let refused = H2Behavior::ResetEvery {
        n: 4,
        code: REFUSED_STREAM,
    };
    for (r, server) in both_ways(refused, |s| spec(s, 40, 1, 3)) {
        assert_eq!(failures(&r), vec![]);
        assert_eq!((r.counts.completed, r.counts.ok), (40, 40));
        assert_eq!(r.counts.stream_resets.get(&REFUSED_STREAM), Some(&13));
        assert_eq!((server.resets(), r.counts.retried), (13, 13));
        assert_eq!(server.answers(), 40);
    }
}

/// A stream reset with REFUSED_STREAM was counted as refused and its request lost,
/// though the server says it did not process it (RFC 9113 §8.7): it is sent again, as a
/// GOAWAY's unprocessed streams are, counted as retried at each send, within its deadline
/// and up to MAX_RESENDS (4) times; a fifth refusal fails it as `refused`.
#[test]
fn a_refused_stream_is_sent_again_and_counted_as_retried() {
    for (r, server) in both_ways(H2Behavior::RefuseFirst { n: 7 }, |s| spec(s, 20, 1, 4)) {
        let c = &r.counts;
        assert_eq!((c.completed, c.ok, c.failed()), (20, 20, 0));
        assert_eq!(c.failures[FailureKind::Refused], 0);
        assert_eq!((c.retried, server.resets()), (7, 7));
        assert_eq!(c.stream_resets.get(&REFUSED_STREAM), Some(&7));
        assert_eq!(server.answers(), 20);
    }
    // One stream at a time: the first request is refused 5 times (sent again 4 times)
    // and fails as refused, so is the second, and the third is answered.
    for (r, server) in both_ways(H2Behavior::RefuseFirst { n: 10 }, |s| spec(s, 3, 1, 1)) {
        let c = &r.counts;
        assert_eq!(failures(&r), vec![(FailureKind::Refused, 2)]);
        assert_eq!((c.completed, c.ok), (3, 1));
        assert_eq!((c.retried, server.resets()), (8, 10));
        assert_eq!(c.stream_resets.get(&REFUSED_STREAM), Some(&10));
        assert_eq!(server.answers(), 1);
    }
}

#[test]
fn max_concurrent_streams_one_is_honoured_and_reported() {
    for (r, server) in both_ways(H2Behavior::MaxStreams { limit: 1 }, |s| spec(s, 30, 1, 8)) {
        assert_eq!((r.counts.ok, r.counts.failed()), (30, 0));
        assert_eq!(
            server.max_open_streams(),
            1,
            "never more than the server allows"
        );
        assert!(
            r.warnings.contains(&Warning::StreamsLimited {
                asked: 8,
                allowed: 1
            }),
            "{:?}",
            r.warnings
        );
    }
}

/// A server announcing `MAX_CONCURRENT_STREAMS` = 0 left a closed-loop run with a request
/// count waiting for a stream forever.
#[test]
fn max_concurrent_streams_zero_refuses_each_connection_and_the_run_ends() {
    for (r, server) in both_ways(H2Behavior::MaxStreams { limit: 0 }, |s| spec(s, 3, 1, 4)) {
        assert_eq!(failures(&r), vec![(FailureKind::Refused, 3)]);
        assert_eq!(server.requests(), 0);
        assert!(r.warnings.contains(&Warning::StreamsLimited {
            asked: 4,
            allowed: 0
        }));
    }
}

#[test]
fn a_stream_never_answered_times_out_and_is_cancelled() {
    for (r, server) in both_ways(H2Behavior::NeverAnswerEvery { n: 3 }, |s| {
        let mut spec = spec(s, 30, 1, 3);
        spec.timeout = Duration::from_millis(300);
        spec
    }) {
        assert_eq!(failures(&r), vec![(FailureKind::Timeout, 10)]);
        assert_eq!(r.counts.ok, 20);
        assert_eq!(server.unanswered(), 10);
        assert_eq!(
            server.cancels(),
            10,
            "each timed-out stream reset with CANCEL"
        );
    }
}

#[test]
fn a_window_that_never_reopens_ends_in_timeouts_not_a_hang() {
    for (r, server) in both_ways(H2Behavior::WindowNeverOpens, |s| {
        let mut spec = spec(s, 4, 1, 2);
        spec.timeout = Duration::from_millis(200);
        spec.request = RequestSpec {
            method: "POST".into(),
            body: b"a=1".to_vec(),
            ..Default::default()
        };
        spec
    }) {
        assert_eq!(failures(&r), vec![(FailureKind::Timeout, 4)]);
        assert_eq!(server.requests(), 0, "no body ever went through");
    }
}

#[test]
fn a_malformed_frame_fails_the_streams_of_its_connection() {
    for (r, server) in both_ways(H2Behavior::MalformedFrame, |s| spec(s, 6, 1, 3)) {
        assert_eq!(failures(&r), vec![(FailureKind::Malformed, 6)]);
        let codes = server.client_goaways();
        assert!(
            !codes.is_empty() && codes.iter().all(|&c| c == 0x6),
            "{codes:?}"
        );
    }
}

#[test]
fn an_hpack_error_fails_the_streams_of_its_connection() {
    for (r, server) in both_ways(H2Behavior::HpackError, |s| spec(s, 5, 1, 1)) {
        assert_eq!(failures(&r), vec![(FailureKind::Malformed, 5)]);
        assert_eq!(
            server.client_goaways(),
            vec![0x9; 5],
            "COMPRESSION_ERROR each time"
        );
    }
}

#[test]
fn a_server_that_answers_the_preface_in_http1_is_refused_before_the_run() {
    let server = H2Server::start(H2Behavior::Http1).unwrap();
    let e = run(&spec(&server, 10, 1, 1), &Control::new(1)).unwrap_err();
    assert!(matches!(e, EngineError::NotHttp2 { .. }), "{e}");
    assert!(e.to_string().contains("HTTP/1.x"), "{e}");
}

#[test]
fn an_http1_server_over_tls_is_refused_by_alpn() {
    let server =
        shootout_testserver::TestServer::start_tls(shootout_testserver::Behavior::Hello).unwrap();
    let mut s = LoadSpec::new(Target::parse(&server.url("/")).unwrap());
    s.target.tls.insecure = true;
    s.protocol = Protocol::Http2;
    let e = run(&s, &Control::new(1)).unwrap_err();
    assert!(e.to_string().contains("instead of h2"), "{e}");
}

#[test]
fn h2_over_tls_negotiates_h2_by_alpn() {
    let server = H2Server::start_with(H2Behavior::Hello, Delivery::Whole, true).unwrap();
    let mut s = spec(&server, 50, 2, 5);
    s.target.tls.insecure = true;
    let r = go(&s);
    assert_eq!((r.counts.ok, server.answers()), (50, 50));
}

/// A server that allows one stream per connection and answers each after 2 ms, at
/// 1,000 req/s: two or more streams are in flight at once, so rate mode opens
/// connections beyond the one it started with, and no request waits for one.
#[test]
fn rate_mode_opens_connections_when_every_stream_is_taken() {
    let server = H2Server::start(H2Behavior::MaxStreams { limit: 1 }).unwrap();
    let mut s = spec(&server, 300, 1, 1);
    s.pace = Pace::Rate(1000.0);
    let r = go(&s);
    assert_eq!((r.counts.ok, r.counts.failed()), (300, 0));
    let sched = r.schedule.unwrap();
    assert!(sched.connections >= 2, "{sched:?}");
    assert!(!sched.capped, "{sched:?}");
    assert_eq!(r.counts.connections_opened, sched.connections);
}

#[test]
fn rate_mode_measures_each_stream_from_its_due_time() {
    let server = H2Server::start(H2Behavior::Hello).unwrap();
    let mut s = spec(&server, 100, 2, 4);
    s.pace = Pace::Rate(500.0);
    let r = go(&s);
    assert_eq!((r.counts.ok, r.counts.failed()), (100, 0));
    let sched = r.schedule.unwrap();
    assert_eq!(sched.sent, 100);
    // 100 requests at 500/s: about 0.2 s, however fast the server is.
    assert!(r.duration >= Duration::from_millis(190), "{:?}", r.duration);
}
