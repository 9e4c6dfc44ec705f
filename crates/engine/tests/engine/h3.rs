//! The engine over HTTP/3 against the `h3` crate's server and against servers that break
//! the protocol on purpose: every request ends once, as answered or as one failure
//! class, and the counts are checked against the server's own.

use crate::common;

use common::{closed, failures, go};
use shootout_engine::{run, Control, EngineError};
use shootout_model::{FailureKind, LoadSpec, Pace, Protocol};
use shootout_testserver::{H3Behavior, H3Server};
use std::time::Duration;

/// `n` requests over `c` connections of `streams` streams each (one thread), closed
/// loop, trusting the server's self-signed certificate.
fn spec(server: &H3Server, n: u64, c: usize, streams: usize) -> LoadSpec {
    let mut s = closed(&server.url("/"), n, c);
    s.protocol = Protocol::Http3;
    s.streams = streams;
    s.target.tls.insecure = true;
    s.connect_timeout = Duration::from_secs(5);
    s
}

fn server(b: H3Behavior) -> H3Server {
    H3Server::start(b).unwrap()
}

#[test]
fn every_request_is_answered_and_counted_once_over_one_connection() {
    let s = server(H3Behavior::Hello);
    let mut sp = spec(&s, 100, 1, 1);
    sp.expect.body_contains = Some(b"Hello World".to_vec());
    sp.expect.length = Some(12);
    let r = go(&sp);
    let c = &r.counts;
    assert_eq!((c.completed, c.ok, c.failed()), (100, 100, 0));
    assert_eq!(c.status.get(&200), Some(&100));
    assert_eq!(c.body_bytes, 100 * 12);
    assert_eq!(s.answers(), 100);
    assert_eq!(s.connections(), 2, "the pre-flight's and the run's");
    assert_eq!(c.connections_opened, 1);
}

#[test]
fn many_streams_over_several_connections_and_threads() {
    let s = server(H3Behavior::Hello);
    let mut sp = spec(&s, 1000, 4, 10);
    sp.threads = 2;
    let r = go(&sp);
    let c = &r.counts;
    assert_eq!((c.completed, c.ok, c.failed()), (1000, 1000, 0));
    assert_eq!(c.status.get(&200), Some(&1000));
    assert_eq!(s.answers(), 1000);
    assert_eq!(c.connections_opened, 4);
    assert_eq!(s.connections(), 5);
    assert_eq!(c.aborted, 0);
}

#[test]
fn the_hand_written_answer_is_counted_the_same() {
    let s = server(H3Behavior::RawHello);
    let r = go(&spec(&s, 50, 2, 5));
    assert_eq!((r.counts.ok, r.counts.failed()), (50, 0));
    assert_eq!(r.counts.body_bytes, 50 * 12);
    assert_eq!(s.answers(), 50);
}

#[test]
fn rate_mode_sends_on_schedule() {
    let s = server(H3Behavior::Hello);
    let mut sp = spec(&s, 200, 2, 4);
    sp.pace = Pace::Rate(1000.0);
    let r = go(&sp);
    let c = &r.counts;
    assert_eq!((c.completed, c.ok, c.failed()), (200, 200, 0));
    assert_eq!(s.answers(), 200);
    let sched = r.schedule.as_ref().expect("rate mode has a schedule");
    assert_eq!(sched.sent, 200);
}

#[test]
fn a_stream_reset_fails_its_request_and_counts_its_code() {
    let code = 0x10c; // H3_REQUEST_CANCELLED
    let s = server(H3Behavior::ResetOdd(code));
    let r = go(&spec(&s, 10, 1, 1));
    let c = &r.counts;
    assert_eq!((c.completed, c.ok), (10, 5));
    assert_eq!(failures(&r), vec![(FailureKind::StreamReset, 5)]);
    assert_eq!(c.stream_resets.get(&(code as u32)), Some(&5));
    assert_eq!((s.resets(), s.answers()), (5, 5));
}

#[test]
fn a_request_goaway_left_unprocessed_is_sent_again_once() {
    // Each connection answers 3, then GOAWAY at the 4th: 10 answers take 4 connections,
    // and the 4th request of each of the first 3 goes again as the first of the next.
    let s = server(H3Behavior::GoawayAfter(3));
    let r = go(&spec(&s, 10, 1, 1));
    let c = &r.counts;
    assert_eq!((c.completed, c.ok, c.failed()), (10, 10, 0));
    assert_eq!((c.goaways, c.retried), (3, 3));
    assert_eq!(s.goaways(), 3);
    assert_eq!(s.answers(), 10);
    assert_eq!(c.connections_opened, 4);
}

#[test]
fn a_connection_closed_with_an_error_fails_what_it_carried() {
    let s = server(H3Behavior::CloseAfter {
        answers: 2,
        code: 0x102,
    });
    let r = go(&spec(&s, 5, 1, 1));
    let c = &r.counts;
    assert_eq!((c.completed, c.ok), (5, 4));
    assert_eq!(failures(&r), vec![(FailureKind::ConnectionError, 1)]);
    assert_eq!((s.closes(), s.answers()), (1, 4));
    assert_eq!(c.connections_opened, 2);
}

#[test]
fn an_answer_without_a_final_status_is_malformed() {
    for b in [H3Behavior::InterimOnly, H3Behavior::NoStatus] {
        let s = server(b);
        let r = go(&spec(&s, 6, 1, 2));
        assert_eq!(r.counts.ok, 0, "{b:?}");
        assert_eq!(failures(&r), vec![(FailureKind::Malformed, 6)], "{b:?}");
        assert_eq!(s.requests(), 6, "{b:?}");
        // A stream's error keeps the connection.
        assert_eq!(r.counts.connections_opened, 1, "{b:?}");
    }
}

#[test]
fn a_field_section_that_needs_the_dynamic_table_ends_the_connection() {
    let s = server(H3Behavior::DynamicQpack);
    let r = go(&spec(&s, 4, 1, 1));
    assert_eq!(failures(&r), vec![(FailureKind::Malformed, 4)]);
    assert_eq!(s.requests(), 4);
    assert_eq!(r.counts.connections_opened, 4, "one connection per error");
}

#[test]
fn a_server_that_never_answers_times_out() {
    let s = server(H3Behavior::Silent);
    let mut sp = spec(&s, 3, 1, 3);
    sp.timeout = Duration::from_millis(300);
    let r = go(&sp);
    assert_eq!(failures(&r), vec![(FailureKind::Timeout, 3)]);
    assert_eq!(s.requests(), 3);
    assert_eq!(r.counts.connections_opened, 1, "the connection is kept");
}

/// QUIC's idle timeout (the server's 300 ms, well under the 10 s request deadline) ends
/// a connection whose server went quiet: its requests fail as timeouts then, not at
/// their deadline.
#[test]
fn the_quic_idle_timeout_fails_the_requests_it_ends_as_timeouts() {
    let s = server(H3Behavior::SilentIdle(300));
    let r = go(&spec(&s, 2, 1, 2));
    assert_eq!(failures(&r), vec![(FailureKind::Timeout, 2)]);
    assert_eq!(s.requests(), 2);
    assert_eq!(r.counts.connections_opened, 1);
    assert!(r.duration < Duration::from_secs(5), "{:?}", r.duration);
}

#[test]
fn a_server_that_allows_no_stream_refuses_one_request_per_connection() {
    let s = server(H3Behavior::NoStreams);
    let r = go(&spec(&s, 3, 1, 4));
    assert_eq!(failures(&r), vec![(FailureKind::Refused, 3)]);
    assert_eq!(s.requests(), 0);
    assert_eq!(r.counts.connections_opened, 3, "one connection per refusal");
}

#[test]
fn heads_are_shown_as_curl_shows_http3() {
    let s = server(H3Behavior::Hello);
    let sp = spec(&s, 3, 1, 1);
    let mut control = Control::new(1);
    control.sample_heads = 2;
    run(&sp, &control).unwrap();
    let heads = control.heads();
    let req = String::from_utf8_lossy(heads.request.as_deref().unwrap()).into_owned();
    assert!(req.starts_with("GET / HTTP/3\r\n"), "{req}");
    let first = String::from_utf8_lossy(&heads.responses[0]).into_owned();
    assert!(first.starts_with("HTTP/3 200\r\n"), "{first}");
    assert!(first.contains("content-length: 12\r\n"), "{first}");
}

#[test]
fn without_udp_offload_every_request_is_answered_one_datagram_per_call() {
    let s = server(H3Behavior::Hello);
    let sp = spec(&s, 300, 2, 10);
    let mut control = Control::new(1);
    control.udp_offload = false;
    let r = run(&sp, &control).unwrap();
    let c = &r.counts;
    assert_eq!((c.completed, c.ok, c.failed()), (300, 300, 0));
    assert_eq!(c.body_bytes, 300 * 12);
    assert_eq!(s.answers(), 300);
    assert_eq!(c.connections_opened, 2);
}

#[test]
fn a_server_that_does_not_speak_http3_is_refused_before_the_run() {
    // Nothing on the UDP port: ICMP says so.
    let free = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let mut sp = closed(&format!("https://127.0.0.1:{port}/"), 1, 1);
    sp.protocol = Protocol::Http3;
    sp.target.tls.insecure = true;
    sp.connect_timeout = Duration::from_millis(500);
    let e = run(&sp, &Control::new(1)).unwrap_err();
    assert!(matches!(e, EngineError::NotHttp3 { .. }), "{e}");
    assert!(e.to_string().contains("drop --http3"), "{e}");
    // A UDP socket that swallows everything: no answer in time.
    let mute = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = mute.local_addr().unwrap().port();
    sp.target = shootout_model::Target::parse(&format!("https://127.0.0.1:{port}/")).unwrap();
    sp.target.tls.insecure = true;
    let e = run(&sp, &Control::new(1)).unwrap_err();
    assert!(e.to_string().contains("no QUIC answer"), "{e}");
}

#[test]
fn an_untrusted_certificate_is_a_tls_error_naming_the_fix() {
    let s = server(H3Behavior::Hello);
    let mut sp = spec(&s, 1, 1, 1);
    sp.target.tls.insecure = false;
    let e = run(&sp, &Control::new(1)).unwrap_err();
    assert!(matches!(e, EngineError::Tls { .. }), "{e}");
    assert!(e.to_string().contains("--insecure"), "{e}");
}

/// caddy's `https://127.0.0.1:8443 { tls internal }` on a wildcard UDP socket: an
/// IP-literal URL sends no SNI, the server has no certificate to choose and ends the
/// handshake with a TLS alert. The error was "does not speak HTTP/3: … error 80"; it says
/// why and what to try, and the same server answers a URL with its host name.
#[test]
fn a_server_that_needs_a_name_refuses_an_ip_literal_url_and_the_error_says_why() {
    let s = server(H3Behavior::NeedsServerName);
    let sp = spec(&s, 2, 1, 1);
    let e = run(&sp, &Control::new(1)).unwrap_err();
    assert!(matches!(e, EngineError::Tls { .. }), "{e}");
    let text = e.to_string();
    for says in [
        "TLS alert 49 (access_denied)",
        "The URL's host is an IP address, so no SNI was sent",
        "https://localhost:PORT/",
        "`bind 127.0.0.1`",
    ] {
        assert!(text.contains(says), "{says}: {text}");
    }
    assert!(!text.contains("does not speak HTTP/3"), "{text}");
    let mut by_name = spec(&s, 2, 1, 1);
    by_name.target =
        shootout_model::Target::parse(&format!("https://localhost:{}/", s.addr().port())).unwrap();
    by_name.target.tls.insecure = true;
    let r = go(&by_name);
    assert_eq!((r.counts.completed, r.counts.ok), (2, 2));
}

#[test]
fn http3_needs_an_https_url() {
    let mut sp = closed("http://127.0.0.1:1/", 1, 1);
    sp.protocol = Protocol::Http3;
    let e = run(&sp, &Control::new(1)).unwrap_err();
    assert!(e.to_string().contains("https://"), "{e}");
}
