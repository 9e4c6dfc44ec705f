//! The engine over TLS against servers that end the stream with and without TLS
//! `close_notify`: a close-delimited body counts only when close_notify ended it (RFC 8446
//! §6.1: without it the body may have been cut anywhere); a length-framed body cut short
//! is a `reset` either way; complete answers stay answers whatever follows them. Each case
//! runs with the server's bytes in one write and one byte per write (one TLS record per
//! byte) and checks the counts against the server's own.

use crate::common;

use common::{both_ways_with, closed, failures, go};
use shootout_model::{FailureKind, LoadSpec, Pace, Protocol, RunResult};
use shootout_testserver::{Behavior, Delivery, H2Behavior, H2Server, TestServer, Transport};
use std::time::Duration;

/// `n` requests over `c` connections (one thread) to `server`, trusting any certificate.
fn spec(server: &TestServer, n: u64, c: usize) -> LoadSpec {
    let mut s = closed(&server.url("/"), n, c);
    s.target.tls.insecure = true;
    s
}

/// Runs `load` against `behavior` over `transport`, served whole and byte by byte; asserts
/// both give the same outcome and returns both runs with their servers, once each server
/// has seen every connection end (its counters are final).
fn both_ways(
    behavior: Behavior,
    transport: Transport,
    load: impl Fn(&TestServer) -> LoadSpec,
) -> [(RunResult, TestServer); 2] {
    let start = |d| TestServer::start_on_with(0, behavior.clone(), transport, d).unwrap();
    both_ways_with(start, TestServer::wait_idle, load)
}

#[test]
fn a_close_delimited_body_cut_without_close_notify_is_a_reset_not_an_answer() {
    // HTTP/1.0, no length: the body ends at the close. The server closes TCP without
    // close_notify, so nothing tells the client the body was whole. Before, the missing
    // close_notify was read as a clean end and every answer counted ok.
    for (r, server) in both_ways(
        Behavior::Http10CloseDelimited,
        Transport::TlsWithoutCloseNotify,
        |s| spec(s, 10, 2),
    ) {
        assert_eq!(
            (r.counts.ok, failures(&r)),
            (0, vec![(FailureKind::Reset, 10)])
        );
        assert_eq!((server.requests(), server.answers()), (10, 0));
        assert_eq!((r.counts.retried, r.counts.aborted), (0, 0));
    }
}

#[test]
fn a_close_delimited_body_ended_by_close_notify_is_an_answer() {
    for (r, server) in both_ways(Behavior::Http10CloseDelimited, Transport::Tls, |s| {
        spec(s, 10, 2)
    }) {
        assert_eq!((r.counts.ok, r.counts.failed()), (10, 0));
        assert_eq!(server.answers(), 10);
    }
}

#[test]
fn a_length_framed_body_cut_short_over_tls_is_a_reset_with_or_without_close_notify() {
    for transport in [Transport::Tls, Transport::TlsWithoutCloseNotify] {
        for (r, server) in both_ways(Behavior::ShortBody, transport, |s| spec(s, 8, 2)) {
            assert_eq!(
                (r.counts.ok, failures(&r)),
                (0, vec![(FailureKind::Reset, 8)]),
                "{transport:?}"
            );
            assert_eq!((server.requests(), server.answers()), (8, 0));
        }
    }
}

#[test]
fn an_idle_close_without_close_notify_costs_no_request() {
    // Paced at 20/s, each connection sits idle 50 ms between requests; the server closes
    // connections idle for 10 ms, with a bare FIN. The complete answers before it stay
    // answers, and the close is a reconnect, not a failure.
    let idle = Behavior::CloseIdle {
        after: Duration::from_millis(10),
    };
    for (r, server) in both_ways(idle, Transport::TlsWithoutCloseNotify, |s| {
        let mut l = spec(s, 6, 1);
        l.pace = Pace::Rate(20.0);
        l
    }) {
        assert_eq!((r.counts.ok, r.counts.failed()), (6, 0), "{:?}", r.counts);
        assert_eq!(server.answers(), 6);
        assert_eq!(r.counts.retried, 0);
    }
}

#[test]
fn h2_over_tls_counts_a_goaway_and_a_bare_close_as_over_tcp() {
    // After 3 answers the server sends GOAWAY(INTERNAL_ERROR) and ends TCP without
    // close_notify: the streams it abandoned fail as a connection error, those it never
    // read go out again, the answers count — as over plain TCP.
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        let runs = [false, true].map(|tls| {
            let server =
                H2Server::start_with(H2Behavior::GoawayError { after: 3 }, delivery, tls).unwrap();
            let mut s = closed(&server.url("/"), 30, 1);
            s.target.tls.insecure = true;
            s.protocol = Protocol::Http2;
            s.streams = 4;
            let r = go(&s);
            assert!(server.wait_idle(Duration::from_secs(5)));
            let c = &r.counts;
            assert_eq!(c.ok, server.answers(), "tls {tls}, {delivery:?}");
            assert_eq!(
                c.failures[FailureKind::ConnectionError],
                server.abandoned(),
                "tls {tls}, {delivery:?}"
            );
            assert_eq!(c.retried, server.unprocessed(), "tls {tls}, {delivery:?}");
            assert_eq!(c.completed, 30);
            assert_eq!(failures(&r).len(), 1, "{:?}", failures(&r));
            r.counts.ok
        });
        assert!(runs[1] > 0, "{delivery:?}: some answers over TLS");
    }
}

/// `https://` given to a plain-HTTP server failed with "Resource temporarily unavailable
/// (os error 11)", and a silent one was waited on for the whole connect timeout: the error
/// names the plain answer at once (written whole or a byte at a time: TLS rejects its
/// first byte alone), and a silent server is given up on after a fifth of the connect
/// timeout, each with the URL to give.
#[test]
fn https_to_a_plain_http_server_says_so_at_once_and_suggests_http() {
    let https = |url: String| {
        let mut s = closed(&url.replacen("http://", "https://", 1), 1, 1);
        s.target.tls.insecure = true;
        s.connect_timeout = Duration::from_secs(1);
        s
    };
    let fails = |url: String| {
        let began = std::time::Instant::now();
        let e = shootout_engine::run(&https(url), &shootout_engine::Control::new(1))
            .unwrap_err()
            .to_string();
        (e, began.elapsed())
    };
    // A server that answers anything with an HTTP/1.1 400, whole and byte by byte.
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        let answers = H2Server::start_with(H2Behavior::Http1, delivery, false).unwrap();
        let (e, _) = fails(answers.url("/"));
        let addr = answers.url("");
        let addr = addr.trim_start_matches("http://").trim_end_matches('/');
        assert_eq!(
            e,
            format!("TLS with {addr} failed: the server answered plain HTTP on an https:// URL: use http://"),
            "{delivery:?}"
        );
    }
    // A server that waits for the end of a request head, which TLS's hello never sends:
    // given up on after 0.2 s of the 1 s connect timeout.
    let waits = TestServer::start(Behavior::Hello).unwrap();
    let (e, took) = fails(waits.url("/"));
    assert_eq!(
        e,
        format!("TLS with {} failed: the server sent nothing in answer to TLS's first message within 0.2 s: a plain-HTTP server waits so for a request line, so try http:// in place of https:// (or, if the server is only slow, raise --connect-timeout: a fifth of it is given to the first answer)", waits.addr())
    );
    assert!(took < Duration::from_secs(1), "{took:?}");
}
