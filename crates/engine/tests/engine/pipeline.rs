//! HTTP/1.1 pipelining and request lists against test servers. The hostile cases run
//! twice, with the server's bytes in one write and one byte per write, and must give the
//! same counts: answers are matched to requests in order, and when a connection fails
//! mid-pipeline each unanswered request counts once.

use crate::common;

use common::{both_ways, closed, failures, go};
use shootout_engine::{run, Control};
use shootout_model::requests::{Order, RequestList};
use shootout_model::{FailureKind, LoadSpec, Pace, Target};
use shootout_testserver::{Behavior, TestServer};
use std::time::Duration;

/// `n` requests on `c` connections (one thread), closed loop, `depth` in flight each.
fn spec(server: &TestServer, n: u64, c: usize, depth: usize) -> LoadSpec {
    let mut s = closed(&server.url("/"), n, c);
    s.pipeline = depth;
    s
}

#[test]
fn pipelined_answers_are_matched_in_order_and_counted_once() {
    let (r, server) = both_ways(Behavior::Hello, |s| spec(s, 1000, 4, 16));
    assert_eq!((r.counts.completed, r.counts.ok), (1000, 1000));
    assert_eq!(server.requests(), 1000, "no request sent twice");
    assert_eq!(r.counts.connections_opened, 4);
    assert_eq!(r.counts.body_bytes, 12_000);
    assert_eq!(r.histograms.latency.len(), 1000);
}

#[test]
fn pipelining_over_tls_matches_answers_in_order() {
    let server = TestServer::start_tls(Behavior::Chunked { trailers: true }).unwrap();
    let mut s = spec(&server, 300, 2, 8);
    s.target.tls.insecure = true;
    s.expect.body_contains = Some(b"Hello World\n".to_vec());
    let r = go(&s);
    assert_eq!((r.counts.ok, r.counts.connections_opened), (300, 2));
    assert_eq!(server.requests(), 300);
}

#[test]
fn a_budget_smaller_than_the_depth_sends_only_the_budget() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let r = go(&spec(&server, 5, 1, 16));
    assert_eq!((r.counts.ok, server.requests()), (5, 5));
}

#[test]
fn requests_behind_a_silent_close_fail_once_each() {
    // Each connection answers 3 requests, then closes without a word: of a batch of 5,
    // the 4th and 5th were written (the server may have read them) and fail.
    let close = Behavior::CloseAfter {
        requests: 3,
        header: false,
    };
    let (r, server) = both_ways(close, |s| spec(s, 50, 1, 5));
    assert_eq!(
        (r.counts.ok, failures(&r)),
        (30, vec![(FailureKind::Reset, 20)])
    );
    assert_eq!((r.counts.retried, r.counts.aborted), (0, 0));
    assert_eq!(server.answers(), 30);
}

#[test]
fn requests_behind_an_announced_close_are_sent_again() {
    // `Connection: close` on the 3rd answer: the server said it processes nothing after
    // it (RFC 9112 §9.6), so the 4th and 5th go out again on a new connection.
    let close = Behavior::CloseAfter {
        requests: 3,
        header: true,
    };
    let (r, server) = both_ways(close, |s| spec(s, 50, 1, 5));
    assert_eq!((r.counts.ok, r.counts.failed()), (50, 0));
    assert_eq!(server.answers(), 50);
    // 17 connections carry 3, 3, …, 2 answers; each but the last leaves 2 behind.
    assert_eq!(r.counts.retried, 32, "{:?}", r.counts);
    assert_eq!(r.counts.reconnects, 16);
}

#[test]
fn a_post_behind_an_announced_close_is_never_sent_twice() {
    // As above, but POSTs: the 4th and 5th of each batch were written, and a POST is
    // never sent again, so they fail as requests whose connection closed before their
    // answer. Before, they went out again on the next connection, counted as retried.
    let close = Behavior::CloseAfter {
        requests: 3,
        header: true,
    };
    let (r, server) = both_ways(close, |s| {
        let mut l = spec(s, 50, 1, 5);
        l.request.method = "POST".into();
        l
    });
    assert_eq!(
        (r.counts.ok, failures(&r)),
        (30, vec![(FailureKind::Reset, 20)])
    );
    assert_eq!((r.counts.retried, r.counts.aborted), (0, 0));
    assert_eq!((server.requests(), server.answers()), (30, 30));
    assert_eq!(r.counts.connections_opened, 10);
}

#[test]
fn behind_an_announced_close_only_idempotent_requests_are_sent_again() {
    // GET and POST in turn, 5 deep, 3 answers per connection: behind each close a POST
    // (failed, never sent twice) and a GET (sent again with the next batch). 13
    // connections answer 3, 3, …, 2; the 12 that close leave one of each behind.
    let close = Behavior::CloseAfter {
        requests: 3,
        header: true,
    };
    let (r, server) = both_ways(close, |s| {
        let mut l = spec(s, 50, 1, 5);
        l.list = Some(list(s, "GET /a\n\nPOST /b\n", Order::Seq));
        l
    });
    assert_eq!(
        (r.counts.ok, failures(&r)),
        (38, vec![(FailureKind::Reset, 12)])
    );
    assert_eq!(r.counts.retried, 12, "the GETs behind the closes");
    assert_eq!((server.requests(), server.answers()), (38, 38));
    let per: Vec<_> = r
        .targets
        .iter()
        .map(|t| (t.label.as_str(), t.completed, t.ok))
        .collect();
    assert_eq!(per, vec![("GET /a", 25, 25), ("POST /b", 25, 13)]);
}

#[test]
fn a_stall_mid_pipeline_times_out_the_requests_behind_it() {
    // Every 2nd request (server-wide) stalls past the timeout: of a batch of 4, the 1st is
    // answered, the 2nd times out, and the 3rd and 4th, written behind it and answerable
    // only after it, time out with it. The next batch starts on a new connection.
    let stall = Behavior::StallEvery {
        n: 2,
        stall: Duration::from_secs(3),
    };
    let server = TestServer::start(stall).unwrap();
    let mut s = spec(&server, 8, 1, 4);
    s.timeout = Duration::from_millis(300);
    let r = go(&s);
    assert_eq!(
        (r.counts.ok, failures(&r)),
        (2, vec![(FailureKind::Timeout, 6)])
    );
    assert_eq!(r.counts.connections_opened, 2);
}

#[test]
fn the_run_ends_with_each_queued_request_aborted_once() {
    let server = TestServer::start(Behavior::NeverAnswer).unwrap();
    let mut s = spec(&server, 1, 2, 8);
    s.requests = None;
    s.duration = Some(Duration::from_millis(300));
    let r = go(&s);
    assert_eq!((r.counts.completed, r.counts.aborted), (0, 16));
}

#[test]
fn a_get_alone_on_an_idle_connection_is_still_sent_again_once_when_pipelining() {
    // Rate mode at 2/s: each request goes out alone on a connection idle for 500 ms,
    // which the server closes as it arrives (its keep-alive timer firing at 200 ms):
    // 300 ms of margin each way, so a busy machine's late wake-up does not change it.
    let race = Behavior::RaceIdle {
        after: Duration::from_millis(200),
    };
    let (r, server) = both_ways(race, |s| {
        let mut l = spec(s, 8, 1, 4);
        l.pace = Pace::Rate(2.0);
        l
    });
    assert_eq!(
        (r.counts.ok, r.counts.failed(), r.counts.retried),
        (8, 0, 7)
    );
    assert_eq!(server.requests(), 8);
}

#[test]
fn rate_mode_writes_due_requests_behind_those_in_flight() {
    // 20 requests at 100/s on one connection with room for 8; the server takes 50 ms a
    // request. Pipelined, a due request is written at once behind those in flight and
    // waits at the server, so its latency from send grows well past 50 ms; without
    // pipelining it would wait for the connection instead, each sent alone.
    let server = TestServer::start(Behavior::StallEvery {
        n: 1,
        stall: Duration::from_millis(50),
    })
    .unwrap();
    let mut s = spec(&server, 20, 1, 8);
    s.pace = Pace::Rate(100.0);
    s.max_connections = Some(1);
    let r = go(&s);
    assert_eq!((r.counts.ok, server.requests()), (20, 20));
    assert_eq!(r.counts.connections_opened, 1);
    assert!(
        r.histograms.latency_raw.max() >= 150_000,
        "max latency from send {} µs",
        r.histograms.latency_raw.max()
    );
    // Rate mode counts from the due time: never less than from the send.
    assert!(r.histograms.latency.max() >= r.histograms.latency_raw.max());
}

fn list(server: &TestServer, text: &str, order: Order) -> RequestList {
    let base = Target::parse(&server.url("/")).unwrap();
    RequestList::parse("list.txt", text, Some(&base), order, 7, |_| {
        Ok(b"{\"n\": {seq}}".to_vec())
    })
    .unwrap()
}

const LIST: &str =
    "GET /a/{seq}\n\nGET /b/{rand:5-5}\nX-Test: fixed\n\nPOST /c\nX-N: {seq}\n@body.json\n";

#[test]
fn a_list_is_sent_in_order_with_fresh_values_and_counted_per_entry() {
    // Echo: answers of different lengths, as a list's entries have.
    let server = TestServer::start(Behavior::Echo).unwrap();
    let mut s = spec(&server, 9, 1, 1);
    s.list = Some(list(&server, LIST, Order::Seq));
    let r = go(&s);
    assert_eq!(r.counts.ok, 9);
    assert_eq!(
        r.counts.length_mismatch, 0,
        "entries differ in length by design"
    );
    let per: Vec<_> = r
        .targets
        .iter()
        .map(|t| (t.label.as_str(), t.completed, t.ok, t.latency.len()))
        .collect();
    assert_eq!(
        per,
        vec![
            ("GET /a/{seq}", 3, 3, 3),
            ("GET /b/{rand:5-5}", 3, 3, 3),
            ("POST /c", 3, 3, 3)
        ]
    );
    // {seq} counts over the whole list: /a took 0, 3, 6; X-N 1, 4, 7; the bodies 2, 5, 8.
    let head = server.last_request_head();
    assert!(head.starts_with("POST /c HTTP/1.1\r\n"), "{head}");
    assert!(head.contains("\r\nX-N: 7\r\n"), "{head}");
    assert!(head.contains("\r\nContent-Length: 8\r\n"), "{head}");
    assert_eq!(server.last_request_body_len(), 8, "{{\"n\": 8}}");
}

#[test]
fn a_random_order_is_repeatable_from_its_seed() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let per_entry = || {
        let mut s = spec(&server, 300, 2, 4);
        s.list = Some(list(&server, LIST, Order::Random));
        let r = go(&s);
        assert_eq!(r.counts.ok, 300);
        r.targets.iter().map(|t| t.completed).collect::<Vec<_>>()
    };
    let a = per_entry();
    assert_eq!(a.iter().sum::<u64>(), 300);
    assert!(a.iter().all(|&n| (50..=150).contains(&n)), "{a:?}");
    assert_eq!(a, per_entry(), "same seed, same picks");
}

#[test]
fn a_list_entry_that_could_inject_is_refused_before_any_request() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut s = spec(&server, 1, 1, 1);
    let mut l = list(&server, "GET /a\n", Order::Seq);
    l.entries[0]
        .headers
        .push(("X-A".into(), "1\r\nX-B: 2".into()));
    s.list = Some(l);
    let e = run(&s, &Control::new(1)).unwrap_err();
    assert!(e.to_string().starts_with("list.txt:1: header 'X-A'"), "{e}");
    assert_eq!(server.requests(), 0);
}
