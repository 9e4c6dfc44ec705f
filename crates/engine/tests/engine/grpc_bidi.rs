//! Bidirectional gRPC calls on the engine's HTTP/2: a call sends its messages (each as
//! the reply to the one before arrives, or on its own schedule), each reply is matched in
//! order to a message and the pair is a unit of the run; a reply with no message
//! outstanding, and a call ended with messages unanswered, fail the call once under
//! their own classes, counted exactly; the server's flow-control windows hold for long
//! streams. Each whole and one byte per write.

use crate::common;

use common::{both_ways_with, each_way_with, failures, grpc_call as call, h2c};
use shootout_model::{FailureKind, GrpcStream, LoadSpec, RunResult, StreamStats};
use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server};
use std::time::Duration;

/// HelloRequest { name: "bob" } behind its prefix.
const BOB: [u8; 10] = [0, 0, 0, 0, 5, 0x0a, 3, b'b', b'o', b'b'];

/// `n` calls of the Greeter's Chat on 2 connections of 2 streams, each sending `body`.
fn chat(server: &H2Server, n: u64, stream: GrpcStream, body: &[u8]) -> LoadSpec {
    call(server, "Chat", n, 2, 2, stream, body)
}

fn grpc(g: GrpcBehavior) -> H2Behavior {
    H2Behavior::Grpc(g)
}

/// `n` messages a call, `every` ms apart on a schedule (or each after the reply before).
fn count(n: u32, every: Option<u64>) -> GrpcStream {
    GrpcStream {
        messages: Some(n),
        duration: None,
        interval: every.map(Duration::from_millis),
    }
}

fn stats(r: &RunResult) -> &StreamStats {
    r.stream
        .as_deref()
        .expect("a streaming run says how its calls went")
}

#[test]
fn each_message_and_its_reply_is_a_unit() {
    // Each message after the reply before, and on a schedule 2 ms apart.
    for stream in [count(5, None), count(5, Some(2))] {
        let runs = both_ways_with(h2c(&grpc(GrpcBehavior::Chat)), H2Server::wait_idle, |s| {
            let mut spec = chat(s, 8, stream, &BOB);
            spec.expect.grpc.as_mut().unwrap().json = Some(r#"{"message":"hello bob"}"#.into());
            spec
        });
        for (r, server) in &runs {
            let what = format!("{stream:?}");
            assert_eq!(failures(r), vec![], "{what}");
            assert_eq!((r.counts.ok, r.counts.completed), (40, 40), "{what}");
            assert_eq!(
                r.histograms.latency.len(),
                40,
                "{what}: one latency a message"
            );
            let st = stats(r);
            assert_eq!(st.shape, "bidi");
            assert_eq!(
                (
                    st.calls_ok,
                    st.sent,
                    st.replies,
                    st.unmatched,
                    st.unanswered
                ),
                (8, 40, 40, 0, 0),
                "{what}"
            );
            assert_eq!(st.messages_per_call, 5);
            assert_eq!(st.first_reply.len(), 8, "{what}: one first reply a call");
            assert_eq!(st.gaps.len(), 32, "{what}: four gaps a call");
            assert_eq!(
                r.counts.status.values().sum::<u64>(),
                8,
                "{what}: a status a call"
            );
            assert_eq!(server.messages(), 40, "{what}");
            assert_eq!(server.answers(), 8, "{what}");
            assert_eq!(
                server.cancels(),
                0,
                "{what}: each call ended its side itself"
            );
        }
    }
}

#[test]
fn a_schedule_s_duration_bounds_its_messages_exactly() {
    // 40 ms at 10 ms apart: messages due at 0, 10, 20 and 30 ms.
    let stream = GrpcStream {
        messages: None,
        duration: Some(Duration::from_millis(40)),
        interval: Some(Duration::from_millis(10)),
    };
    let runs = both_ways_with(h2c(&grpc(GrpcBehavior::Chat)), H2Server::wait_idle, |s| {
        chat(s, 4, stream, &BOB)
    });
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        assert_eq!(r.counts.ok, 16);
        assert_eq!(server.messages(), 16);
        assert_eq!(stats(r).messages_per_call, 0, "a duration bounds them");
        assert!(
            r.duration >= Duration::from_millis(30),
            "the last message was due 30 ms after the first: {:?}",
            r.duration
        );
    }
}

#[test]
fn without_a_schedule_a_duration_sends_until_it_passes() {
    let stream = GrpcStream {
        messages: None,
        duration: Some(Duration::from_millis(30)),
        interval: None,
    };
    let runs = each_way_with(h2c(&grpc(GrpcBehavior::Chat)), H2Server::wait_idle, |s| {
        chat(s, 4, stream, &BOB)
    });
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        let st = stats(r);
        assert!(st.sent >= 4, "{} messages", st.sent);
        assert_eq!((st.replies, st.unanswered), (st.sent, 0));
        assert_eq!(r.counts.ok, st.sent);
        assert_eq!(server.messages(), st.sent);
        assert!(r.duration >= Duration::from_millis(30));
    }
}

#[test]
fn a_hostile_chat_fails_each_call_once_under_its_class() {
    // (server, bounds, units a call, class, replies matched to none a call, messages
    // unanswered a call, resets written a call)
    let rows = [
        (
            GrpcBehavior::ChatExtra,
            count(3, None),
            3,
            FailureKind::GrpcUnmatched,
            1,
            0,
            0,
        ),
        (
            GrpcBehavior::ChatEndsAfter(2),
            count(5, None),
            2,
            FailureKind::GrpcUnanswered,
            0,
            1,
            // The server ended the stream with our side open: RST_STREAM NO_ERROR.
            1,
        ),
        (
            GrpcBehavior::ChatSilent,
            count(3, Some(1)),
            0,
            FailureKind::GrpcUnanswered,
            0,
            3,
            0,
        ),
    ];
    for (g, stream, each, kind, unmatched, unanswered, resets) in rows {
        let runs = both_ways_with(h2c(&grpc(g)), H2Server::wait_idle, |s| {
            chat(s, 8, stream, &BOB)
        });
        for (r, server) in &runs {
            assert_eq!(failures(r), vec![(kind, 8)], "{g:?}");
            assert_eq!(
                (r.counts.ok, r.counts.completed),
                (8 * each, 8 * each + 8),
                "{g:?}"
            );
            let st = stats(r);
            assert_eq!(
                (st.calls_ok, st.unmatched, st.unanswered),
                (0, 8 * unmatched, 8 * unanswered),
                "{g:?}"
            );
            assert_eq!(
                st.sent,
                server.messages(),
                "{g:?}: every message sent was read"
            );
            assert_eq!(server.cancels(), 8 * resets, "{g:?}");
        }
    }
}

#[test]
fn a_reply_that_never_comes_times_the_call_out_with_its_message_unanswered() {
    let runs = both_ways_with(
        h2c(&grpc(GrpcBehavior::ChatSilent)),
        H2Server::wait_idle,
        |s| {
            let mut spec = chat(s, 4, count(3, None), &BOB);
            spec.timeout = Duration::from_millis(200);
            spec
        },
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![(FailureKind::Timeout, 4)]);
        let st = stats(r);
        // Each call waits for the reply to its first message before it sends a second.
        assert_eq!((st.sent, st.unanswered), (4, 4));
        assert_eq!(server.messages(), 4);
        assert_eq!(server.cancels(), 4, "RST_STREAM CANCEL at the deadline");
    }
}

#[test]
fn long_streams_keep_to_the_server_s_windows() {
    // HelloRequest { name: 1,000 × "x" }: 1,003 bytes, 1,008 framed, over a stream
    // window of 1,000 bytes: each message in two DATA frames, the second after the
    // server gave the first one's bytes back. 200 messages on one connection pass its
    // window of 65,535 bytes three times over.
    let mut body = vec![0, 0, 0, 0x03, 0xeb, 0x0a, 0xe8, 0x07];
    body.resize(8 + 1000, b'x');
    let runs = both_ways_with(
        h2c(&grpc(GrpcBehavior::ChatWindow(1000))),
        H2Server::wait_idle,
        |s| {
            let mut spec = call(s, "Chat", 4, 1, 2, count(50, None), &body);
            spec.expect.grpc.as_mut().unwrap().json =
                Some(format!(r#"{{"message":"hello {}"}}"#, "x".repeat(1000)));
            spec
        },
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        assert_eq!(r.counts.ok, 200);
        assert_eq!(server.messages(), 200);
        assert_eq!(server.window_violations(), 0, "no DATA past a window");
        assert!(
            r.counts.bytes_sent > 3 * 65_535,
            "{} bytes",
            r.counts.bytes_sent
        );
    }
}

/// Rate mode paces calls, whatever they stream: the schedule's figures are calls, the
/// counts' units the messages (bidi) or replies (server streaming) the calls carried.
#[test]
fn rate_mode_paces_calls_and_counts_their_units() {
    let rows = [
        (GrpcBehavior::Chat, "Chat", count(3, None), 3),
        (
            GrpcBehavior::Stream(4),
            "SayHellos",
            GrpcStream::default(),
            4,
        ),
    ];
    for (g, method, stream, each) in rows {
        let server = H2Server::start(grpc(g)).unwrap();
        let mut spec = call(&server, method, 20, 2, 2, stream, &BOB);
        spec.pace = shootout_model::Pace::Rate(200.0);
        let r = common::go(&spec);
        let sched = r.schedule.expect("rate mode keeps a schedule");
        assert_eq!((sched.due, sched.sent), (20, 20), "{method}: calls");
        assert_eq!(failures(&r), vec![], "{method}");
        assert_eq!(r.counts.ok, 20 * each, "{method}: units");
        assert_eq!(r.stream.as_deref().unwrap().calls_ok, 20, "{method}");
    }
}

/// A GOAWAY that leaves a call unprocessed: the call is sent again once on a new
/// connection, and its messages count once, those of the send that ended it. The server
/// here processes one call a connection: at the header block of each connection's second
/// stream it sends GOAWAY naming the first, so every call but the first is left
/// unprocessed once and then answered in full.
#[test]
fn a_call_a_goaway_left_unprocessed_counts_its_messages_once() {
    let runs = both_ways_with(
        h2c(&grpc(GrpcBehavior::ChatGoaway(2))),
        H2Server::wait_idle,
        |s| call(s, "Chat", 4, 1, 1, count(3, None), &BOB),
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        assert_eq!((r.counts.ok, r.counts.completed), (12, 12));
        assert_eq!(r.counts.retried, 3, "every call but the first");
        assert_eq!((server.goaways(), server.unprocessed()), (3, 3));
        let st = stats(r);
        assert_eq!(
            (
                st.calls_ok,
                st.sent,
                st.replies,
                st.unmatched,
                st.unanswered
            ),
            (4, 12, 12, 0, 0)
        );
        assert_eq!(server.messages(), 12, "each message read once");
    }
}

/// A call a GOAWAY leaves unprocessed after it was sent again as often as it may (4 more
/// times) fails as refused: the message it sent that last time counts as sent and
/// unanswered (before, it counted in neither). Here every connection's first stream is
/// left unprocessed.
#[test]
fn a_call_refused_by_two_goaways_counts_its_message_unanswered() {
    let runs = both_ways_with(
        h2c(&grpc(GrpcBehavior::ChatGoaway(1))),
        H2Server::wait_idle,
        |s| call(s, "Chat", 4, 1, 1, count(3, None), &BOB),
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![(FailureKind::Refused, 4)]);
        assert_eq!(
            (r.counts.ok, r.counts.completed, r.counts.retried),
            (0, 4, 16)
        );
        assert_eq!((server.goaways(), server.unprocessed()), (20, 20));
        assert_eq!(server.messages(), 0, "no message was read");
        let st = stats(r);
        // Each call's first message, the one of its last send; the next waits for its
        // reply.
        assert_eq!((st.calls_ok, st.sent, st.unanswered), (0, 4, 4));
    }
}
