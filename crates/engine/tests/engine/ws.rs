//! WebSocket against in-process servers that behave and misbehave on purpose: every
//! message ends once, as an ok reply or in exactly one failure class, whatever the server
//! does and however its bytes are split (each case runs with the server's bytes whole and
//! one per write, with the same outcome); the counts are checked against the server's own.

use crate::common;

use common::{both_ways_with, closed, each_way_with, failures, go};
use shootout_model::{FailureKind, Hold, LoadSpec, Pace, Protocol};
use shootout_testserver::{Delivery, WsBehavior, WsServer, BREACHES, WS_CLOSE_CODE};
use std::time::Duration;

/// `n` messages "hello" (text) on `c` connections, closed loop, replies checked as echoes.
fn spec(server: &WsServer, n: u64, c: usize) -> LoadSpec {
    let mut s = closed(&server.url("/echo"), n, c);
    s.protocol = Protocol::WebSocket;
    s.request.body = b"hello".to_vec();
    s.ws_text = true;
    s.expect.echo = true;
    s
}

/// Runs `load` against `behavior` served whole and byte by byte: the same outcome both
/// ways; the byte-by-byte run with its server (its counters final).
fn both_ways(
    behavior: WsBehavior,
    load: impl Fn(&WsServer) -> LoadSpec,
) -> [(shootout_model::RunResult, WsServer); 2] {
    let start = |d: Delivery| WsServer::start_with(behavior.clone(), d, false).unwrap();
    both_ways_with(start, WsServer::wait_idle, load)
}

fn statuses(r: &shootout_model::RunResult) -> Vec<(u16, u64)> {
    r.counts.status.iter().map(|(k, v)| (*k, *v)).collect()
}

#[test]
fn an_echo_server_answers_every_message_once() {
    for (r, server) in both_ways(WsBehavior::Echo, |s| spec(s, 200, 4)) {
        assert_eq!((r.counts.completed, r.counts.ok), (200, 200));
        assert_eq!(failures(&r), vec![]);
        // One 101 per handshake, not one per reply.
        assert_eq!(statuses(&r), vec![(101, r.counts.connections_opened)]);
        assert_eq!((server.messages(), server.answers()), (200, 200));
        // A connection whose handshake ends after the last reply is not counted as opened.
        assert!((1..=4).contains(&r.counts.connections_opened));
        assert!(server.upgrades() >= r.counts.connections_opened);
        assert_eq!(server.unmasked(), 0, "every client frame is masked");
        assert_eq!(r.counts.body_bytes, 200 * 5);
    }
}

#[test]
fn pipelined_messages_are_matched_to_their_replies_in_order() {
    for (r, server) in both_ways(WsBehavior::Echo, |s| {
        let mut s = spec(s, 400, 2);
        s.pipeline = 8;
        s
    }) {
        assert_eq!((r.counts.ok, r.counts.failed()), (400, 0));
        assert_eq!(server.answers(), 400);
    }
}

/// Replies in three fragments with a ping before each: reassembled, every ping answered.
#[test]
fn fragmented_replies_are_reassembled_and_pings_answered() {
    for (r, server) in both_ways(WsBehavior::Fancy, |s| spec(s, 100, 2)) {
        assert_eq!((r.counts.ok, r.counts.failed()), (100, 0));
        assert_eq!(server.pongs(), 100);
    }
}

/// A binary message of 100 kB (over the 64 KiB read buffer and the 16-bit length form).
#[test]
fn a_large_binary_message_echoes() {
    for (r, _) in both_ways(WsBehavior::Echo, |s| {
        let mut s = spec(s, 3, 1);
        s.ws_text = false;
        s.request.body = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        s.expect.length = Some(100_000);
        s
    }) {
        assert_eq!((r.counts.ok, r.counts.failed()), (3, 0));
    }
}

#[test]
fn a_reply_that_is_no_echo_fails_as_body() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let mut s = spec(&server, 5, 1);
    s.expect.body_contains = Some(b"nope".to_vec());
    let r = go(&s);
    assert_eq!(failures(&r), vec![(FailureKind::Body, 5)]);
}

/// Each refused connection fails one message, counted under the refusal's status; the
/// run still ends by its count.
/// A client opens a connection when it has a message: connections refused together do not
/// each open another while the ones already connecting will take the messages left. Two
/// connections refused 50 ms after their upgrades, 3 messages: the pre-flight connection,
/// the two, and one more for the third message; a connection opened for the third while
/// the other was being refused carried nothing (5 connections).
#[test]
fn connections_refused_together_open_no_more_than_the_messages_left() {
    let refuse = WsBehavior::Refuse {
        status: 403,
        after: Duration::from_millis(50),
    };
    for (r, server) in both_ways(refuse, |s| spec(s, 3, 2)) {
        assert_eq!(failures(&r), vec![(FailureKind::Handshake, 3)]);
        assert_eq!((server.connections(), server.upgrades()), (4, 0));
    }
}

#[test]
fn a_refused_handshake_fails_one_message_per_connection_with_its_status() {
    for (r, server) in both_ways(
        WsBehavior::Refuse {
            status: 403,
            after: Duration::ZERO,
        },
        |s| spec(s, 10, 2),
    ) {
        assert_eq!(failures(&r), vec![(FailureKind::Handshake, 10)]);
        assert_eq!(statuses(&r), vec![(403, 10)]);
        // One connection per message, and the engine's pre-flight connect before them.
        assert_eq!((server.connections(), server.upgrades()), (11, 0));
        assert_eq!(server.messages(), 0);
    }
}

#[test]
fn a_101_with_the_wrong_accept_is_a_failed_handshake() {
    for (r, server) in both_ways(WsBehavior::BadAccept, |s| spec(s, 6, 1)) {
        assert_eq!(failures(&r), vec![(FailureKind::Handshake, 6)]);
        assert_eq!(server.upgrades(), 6);
        assert_eq!(server.messages(), 0, "nothing is sent on it");
    }
}

/// Two `Sec-WebSocket-Accept` fields, one right and one wrong: a failed handshake, at
/// once, for each connection (not an upgrade whose messages then time out).
#[test]
fn a_101_with_the_accept_field_twice_is_a_failed_handshake() {
    for (r, server) in both_ways(WsBehavior::DoubleAccept, |s| spec(s, 5, 1)) {
        assert_eq!(failures(&r), vec![(FailureKind::Handshake, 5)]);
        assert_eq!((r.counts.ok, r.counts.connections_opened), (0, 0));
        assert_eq!(server.upgrades(), 5);
        assert_eq!(server.messages(), 0, "nothing is sent on it");
        assert!(r.duration < Duration::from_secs(5), "{:?}", r.duration);
    }
}

/// A server that pings faster than it reads: pongs waiting to be written are bounded
/// (a later ping's pong replaces one not yet begun), every ping is either answered or
/// counted unanswered, and the messages still go through.
#[test]
fn pings_from_a_server_that_does_not_read_are_bounded_and_counted() {
    // Whole: 20,000 pings (2.6 MB of pongs against a receive buffer of a few KiB); one
    // byte per write: 1,000, which back up too.
    for (pings, delivery) in [(20_000, Delivery::Whole), (1_000, Delivery::Bytewise)] {
        let server =
            WsServer::start_with(WsBehavior::PingFlood { pings }, delivery, false).unwrap();
        let mut s = spec(&server, 2, 1);
        s.timeout = Duration::from_secs(60);
        let r = go(&s);
        let c = &r.counts;
        assert_eq!((c.ok, c.failed()), (2, 0), "{delivery:?}: {c:?}");
        // The second message went after every pong still queued, and its reply came after
        // the server read them all.
        assert_eq!(
            server.pongs() + c.pings_unanswered,
            u64::from(pings),
            "{delivery:?}"
        );
        assert!(c.pings_unanswered > 0, "{delivery:?}: none replaced");
        assert!(server.pongs() > 0, "{delivery:?}: the latest are answered");
    }
}

/// Hold mode: a pong answers the ping whose payload it carries. A server that answers
/// each ping with an empty pong and one of another payload answers none: every ping
/// times out.
#[test]
fn held_pings_answered_by_pongs_of_another_payload_time_out() {
    // Each way on its own: how many pings fit in 700 ms with their 200 ms deadlines
    // depends on the clock, not on how the bytes were split.
    let start = |d: Delivery| WsServer::start_with(WsBehavior::WrongPong, d, false).unwrap();
    for (r, server) in each_way_with(start, WsServer::wait_idle, |s| {
        let mut h = hold(s, 2, 700, 1000, None);
        h.timeout = Duration::from_millis(200);
        h
    }) {
        let c = &r.counts;
        assert_eq!(c.ok, 0, "{c:?}");
        let timeouts = c.failures[FailureKind::Timeout];
        assert!(timeouts >= 2, "{c:?}");
        assert_eq!(failures(&r), vec![(FailureKind::Timeout, timeouts)]);
        assert_eq!(server.pings(), timeouts + c.aborted);
    }
}

/// A connection the server closed after its answers and that is opening again when the
/// run ends carried its share: it is not counted as one still opening (the report's
/// "fewer connections carried the load than asked"); the server's later upgrades are
/// never answered, so the reopened one is still in its handshake at the end.
#[test]
fn a_connection_opening_again_at_the_end_carried_its_share() {
    // Each way on its own: byte by byte, a message may go before the goodbye's close
    // frame is whole, and fail as the connection's close.
    let start =
        |d: Delivery| WsServer::start_with(WsBehavior::UpgradeOnce { after: 3 }, d, false).unwrap();
    for (r, server) in each_way_with(start, WsServer::wait_idle, |s| {
        let mut l = spec(s, 1, 1);
        l.requests = None;
        l.duration = Some(Duration::from_millis(300));
        l
    }) {
        let c = &r.counts;
        assert_eq!(c.ok, 3, "{c:?}");
        assert_eq!(server.upgrades(), 1, "{c:?}");
        assert_eq!(
            (c.connections_opening, c.connections_opened),
            (0, 1),
            "{c:?}"
        );
    }
}

/// Connections whose handshake is still under way when the run ends are counted as such,
/// not lost between "opened" and "failed".
#[test]
fn connections_still_upgrading_at_the_end_are_counted() {
    for (r, server) in both_ways(WsBehavior::NoUpgrade, |s| {
        let mut l = spec(s, 1, 3);
        l.requests = None;
        l.duration = Some(Duration::from_millis(300));
        l
    }) {
        let c = &r.counts;
        assert_eq!(
            (
                c.connections_opening,
                c.connections_opened,
                c.connections_failed
            ),
            (3, 0, 0),
            "{c:?}"
        );
        assert_eq!((c.completed, c.aborted), (0, 0));
        assert_eq!(server.upgrades(), 0);
    }
}

/// Three answers, then a close frame in place of the fourth: 10 rounds on one connection.
#[test]
fn a_close_with_a_message_outstanding_fails_it_with_its_code() {
    for (r, server) in both_ways(WsBehavior::CloseAfter { after: 3 }, |s| spec(s, 40, 1)) {
        assert_eq!(r.counts.ok, 30);
        assert_eq!(failures(&r), vec![(FailureKind::Closed, 10)]);
        assert_eq!(server.unanswered(), 10);
        let codes: Vec<_> = r.counts.close_codes.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(codes, vec![(WS_CLOSE_CODE, 10)]);
        assert_eq!(
            server.client_closes(),
            10,
            "each close is answered with one"
        );
        assert_eq!(
            r.counts.reconnects, 9,
            "the last close needs no new connection"
        );
        assert_eq!(
            r.counts.connections_failed, 0,
            "a replaced connection is not a failed one"
        );
    }
}

/// A close right behind the last reply of the run finds nothing outstanding: no failure
/// (its code is counted when it is read before the run ends).
#[test]
fn a_close_at_the_end_of_a_run_is_no_failure() {
    for (r, _) in both_ways(WsBehavior::Goodbye { after: 3 }, |s| spec(s, 3, 1)) {
        assert_eq!((r.counts.ok, r.counts.failed()), (3, 0));
        assert!(r.counts.close_codes.values().all(|&n| n <= 1));
    }
}

/// Paced slowly, every connection is idle when its server says goodbye: the close costs
/// no message, the connection is replaced, and each close read is counted by its code.
#[test]
fn a_close_between_paced_messages_is_no_failure() {
    let server = WsServer::start(WsBehavior::Goodbye { after: 2 }).unwrap();
    let mut s = spec(&server, 10, 1);
    s.pace = Pace::Rate(50.0);
    let r = go(&s);
    assert_eq!((r.counts.ok, r.counts.failed()), (10, 0));
    let closes = r.counts.close_codes.get(&1000).copied().unwrap_or(0);
    assert!((4..=5).contains(&closes), "{closes} closes read");
    // Each connection the server closed is opened again for the next message, not before.
    assert_eq!(r.counts.reconnects, 0);
    assert!(
        r.counts.connections_opened >= 5,
        "{}",
        r.counts.connections_opened
    );
}

/// Every breach of the framing fails the message it came for, once, as a protocol error.
#[test]
fn each_breach_of_the_framing_is_a_protocol_error() {
    for breach in BREACHES {
        for (r, server) in both_ways(WsBehavior::Breach { after: 2, breach }, |s| spec(s, 30, 1)) {
            assert_eq!(r.counts.ok, 20, "{breach:?}");
            assert_eq!(
                failures(&r),
                vec![(FailureKind::Protocol, 10)],
                "{breach:?}"
            );
            assert_eq!(server.unanswered(), 10, "{breach:?}");
            assert_eq!(r.counts.connections_failed, 0, "{breach:?}");
        }
    }
}

#[test]
fn a_reply_that_never_comes_is_a_timeout() {
    for (r, server) in both_ways(WsBehavior::Silent { after: 2 }, |s| {
        let mut s = spec(s, 6, 1);
        s.timeout = Duration::from_millis(300);
        s
    }) {
        assert_eq!(r.counts.ok, 4);
        assert_eq!(failures(&r), vec![(FailureKind::Timeout, 2)]);
        assert_eq!(server.unanswered(), 2);
    }
}

#[test]
fn a_connection_dropped_without_a_close_frame_is_a_reset() {
    for (r, server) in both_ways(WsBehavior::Drop { after: 2 }, |s| spec(s, 30, 1)) {
        assert_eq!(r.counts.ok, 20);
        assert_eq!(failures(&r), vec![(FailureKind::Reset, 10)]);
        assert_eq!(server.unanswered(), 10);
        assert_eq!(r.counts.connections_failed, 0);
        assert!(r.counts.close_codes.is_empty());
    }
}

/// Paced: 100 messages at 500/s over two connections, all answered; the corrected
/// latency counts from each message's due time.
#[test]
fn rate_mode_sends_on_schedule() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let mut s = spec(&server, 100, 2);
    s.pace = Pace::Rate(500.0);
    let r = go(&s);
    assert_eq!((r.counts.ok, r.counts.failed()), (100, 0));
    let sched = r.schedule.as_ref().expect("rate mode keeps its schedule");
    assert_eq!(sched.sent, 100);
    assert!(r.duration >= Duration::from_millis(190), "{:?}", r.duration);
    assert!(server.wait_idle(Duration::from_secs(10)));
    assert_eq!(server.answers(), 100);
}

#[test]
fn wss_goes_through_the_tls_transport() {
    let server = WsServer::start_with(WsBehavior::Echo, Delivery::Whole, true).unwrap();
    let mut s = spec(&server, 50, 2);
    s.target.tls.insecure = true;
    let r = go(&s);
    assert_eq!((r.counts.ok, r.counts.failed()), (50, 0));
    assert!(server.url("/").starts_with("wss://"));
}

/// Hold mode: `c` connections kept for `ms` milliseconds, each pinging every `every_ms`.
fn hold(server: &WsServer, c: usize, ms: u64, every_ms: u64, open_rate: Option<f64>) -> LoadSpec {
    let mut s = closed(&server.url("/"), 1, c);
    s.protocol = Protocol::WebSocket;
    s.requests = None;
    s.duration = Some(Duration::from_millis(ms));
    s.ws_hold = Some(Hold {
        every: Duration::from_millis(every_ms),
        open_rate,
    });
    s
}

/// Held connections ping at their interval; each pong is an ok unit, each ping the server
/// read is one the client counted (answered, or in flight at the end).
#[test]
fn held_connections_ping_at_their_interval_and_are_kept() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let r = go(&hold(&server, 10, 600, 100, None));
    assert!(server.wait_idle(Duration::from_secs(10)));
    let c = &r.counts;
    assert_eq!(c.failed(), 0);
    assert_eq!((c.connections_opened, c.reconnects), (10, 0));
    // One ping at the open, then one per 100 ms: 6 or 7 each in 600 ms.
    assert!((50..=70).contains(&c.ok), "{} pongs", c.ok);
    assert_eq!(server.pings(), c.ok + c.aborted);
    assert_eq!(server.messages(), 0, "no message is sent");
}

/// An interval shorter than the event loop's usual tick (100 ms) is kept too: 20 ms on 2
/// connections for 500 ms pings about 25 times each, not 5.
#[test]
fn held_connections_ping_at_a_short_interval() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let r = go(&hold(&server, 2, 500, 20, None));
    assert!(server.wait_idle(Duration::from_secs(10)));
    let c = &r.counts;
    assert_eq!(c.failed(), 0);
    // At most 26 each (one at the open, then every 20 ms); late ticks on a busy machine
    // may lose a few, never most.
    assert!((30..=52).contains(&c.ok), "{} pongs", c.ok);
    assert_eq!(server.pings(), c.ok + c.aborted);
}

/// At the end of a run each open connection says goodbye with a close frame (1001), so
/// the server sees a close, not a broken connection: closed loop by count and by time,
/// rate mode, and held connections.
#[test]
fn every_open_connection_is_closed_with_a_close_frame_at_the_end() {
    type Load = fn(&WsServer) -> LoadSpec;
    let cases: [(&str, Load, u64); 4] = [
        ("by count", |s| spec(s, 60, 3), 3),
        (
            "by time",
            |s| {
                let mut l = spec(s, 1, 2);
                l.requests = None;
                l.duration = Some(Duration::from_millis(200));
                l
            },
            2,
        ),
        (
            "rate",
            |s| {
                let mut l = spec(s, 1, 2);
                l.requests = None;
                l.duration = Some(Duration::from_millis(200));
                l.pace = Pace::Rate(100.0);
                l
            },
            2,
        ),
        ("held", |s| hold(s, 4, 200, 50, None), 4),
    ];
    for (name, load, open) in cases {
        let server = WsServer::start(WsBehavior::Echo).unwrap();
        let r = go(&load(&server));
        assert!(server.wait_idle(Duration::from_secs(10)), "{name}");
        assert_eq!(r.counts.failed(), 0, "{name}");
        // A connection still in its handshake when the run ends (on a busy machine the
        // others may finish the count first) was never open: it gets no close frame.
        let c = &r.counts;
        assert_eq!(
            c.connections_opened + c.connections_opening,
            open,
            "{name}: {c:?}"
        );
        assert_eq!(
            server.client_closes(),
            c.connections_opened,
            "{name}: one close frame per connection open at the end"
        );
    }
}

/// Opened at 20 a second, 10 connections take about half a second to be all open.
#[test]
fn held_connections_open_at_their_rate() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let r = go(&hold(&server, 10, 300, 1000, Some(20.0)));
    // At 0, 50, …, 250 ms: 6 opened by the end of 300 ms, one ping each.
    assert!(
        (5..=7).contains(&r.counts.connections_opened),
        "{}",
        r.counts.connections_opened
    );
    assert_eq!(r.counts.ok, r.counts.connections_opened);
}

/// A server that drops held connections (a close on their third ping): each close fails
/// the ping it answered, is counted by its code, and the connection is opened again.
#[test]
fn held_connections_the_server_drops_are_counted_and_replaced() {
    let server = WsServer::start(WsBehavior::CloseOnPing { after: 2 }).unwrap();
    let r = go(&hold(&server, 2, 700, 50, None));
    assert!(server.wait_idle(Duration::from_secs(10)));
    let c = &r.counts;
    let closes = c.failures[FailureKind::Closed];
    assert!(closes >= 4, "{closes} drops");
    assert_eq!(failures(&r), vec![(FailureKind::Closed, closes)]);
    assert_eq!(closes, server.unanswered());
    assert_eq!(c.close_codes.get(&1001), Some(&closes));
    assert_eq!(c.reconnects, closes, "each dropped connection opened again");
    assert_eq!(c.ok, server.pings() - closes - c.aborted);
}

/// A message list with `{seq}`: each message differs, and each reply is checked against
/// the very message it answers. An echo server passes every one; a server that answers
/// each message with the one before it (right for a run of one repeated message) fails
/// all but each connection's first.
#[test]
fn each_reply_is_checked_against_the_message_drawn_from_the_list() {
    use shootout_model::messages::MessageList;
    use shootout_model::requests::Order;
    let list = |s: &WsServer| {
        let mut s = spec(s, 120, 1);
        s.request.body.clear();
        s.ws_text = false;
        s.ws_messages = Some(
            MessageList::parse(
                "chat.txt",
                "{\"id\": {seq}, \"n\": {rand:1-9}}\n# a comment\nping {seq}\n",
                Order::Seq,
                3,
            )
            .unwrap(),
        );
        s
    };
    for (r, server) in both_ways(WsBehavior::Echo, list) {
        assert_eq!((r.counts.ok, r.counts.failed()), (120, 0));
        assert_eq!(server.answers(), 120);
    }
    for (r, server) in both_ways(WsBehavior::Stale, list) {
        assert_eq!(failures(&r), vec![(FailureKind::Body, 119)]);
        assert_eq!((r.counts.ok, server.answers()), (1, 120));
    }
    // One message sent over and over: the stale answer is an echo every time.
    for (r, _) in both_ways(WsBehavior::Stale, |s| spec(s, 50, 1)) {
        assert_eq!((r.counts.ok, r.counts.failed()), (50, 0));
    }
}
