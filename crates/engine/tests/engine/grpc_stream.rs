//! Streaming gRPC calls on the engine's HTTP/2: a server stream's every reply is a unit of
//! the run (counted ok as it arrives whole and decoded), its first reply and the gaps
//! between replies timed apart; a call ended at the client's limit is cancelled
//! (RST_STREAM CANCEL) and counted as ended well; a hostile stream's replies count, and
//! its fault counts once. A client stream sends its messages and reads one reply. Each
//! whole and one byte per write, with exact counts.

use crate::common;

use common::{both_ways_with, each_way_with, failures, grpc_call as call, h2c};
use shootout_model::{FailureKind, GrpcStream, LoadSpec};
use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server};
use std::time::Duration;

/// HelloRequest { name: "bob" } behind its prefix.
const BOB: [u8; 10] = [0, 0, 0, 0, 5, 0x0a, 3, b'b', b'o', b'b'];

fn server_stream(server: &H2Server, n: u64, stream: GrpcStream) -> LoadSpec {
    call(server, "SayHellos", n, 2, 3, stream, &BOB)
}

fn grpc(g: GrpcBehavior) -> H2Behavior {
    H2Behavior::Grpc(g)
}

fn limit(messages: Option<u32>, duration: Option<Duration>) -> GrpcStream {
    GrpcStream {
        messages,
        duration,
        interval: None,
    }
}

#[test]
fn each_reply_of_a_server_stream_is_a_unit() {
    let runs = both_ways_with(
        h2c(&grpc(GrpcBehavior::Stream(5))),
        H2Server::wait_idle,
        |s| server_stream(s, 12, GrpcStream::default()),
    );
    for (r, server) in &runs {
        assert_eq!((r.counts.ok, r.counts.completed), (60, 60));
        assert_eq!(failures(r), vec![]);
        assert_eq!(server.answers(), 12);
        let st = r
            .stream
            .as_deref()
            .expect("a streaming run says how its calls went");
        assert_eq!(st.shape, "server");
        assert_eq!((st.calls_ok, st.cancelled, st.replies), (12, 0, 60));
        assert_eq!(st.first_reply.len(), 12, "one first reply a call");
        assert_eq!(st.gaps.len(), 48, "four gaps a call");
        assert_eq!(r.histograms.latency.len(), 60, "one latency a reply");
        // The calls' status, once a call.
        assert_eq!(r.counts.status.values().sum::<u64>(), 12);
        assert_eq!(
            server.cancels(),
            0,
            "streams the server ended are not reset"
        );
    }
}

#[test]
fn the_reply_limit_cancels_a_stream_as_the_client_s_choice() {
    // (server, --grpc-stream-messages, replies a call, cancelled)
    let rows = [
        (GrpcBehavior::Endless, 4, 4, true),
        (GrpcBehavior::Stream(10), 4, 4, true),
        (GrpcBehavior::Stream(3), 4, 3, false),
        // The limit reached before the server ends the stream: cancelled.
        (GrpcBehavior::Stream(4), 4, 4, true),
    ];
    for (g, n, each, cancelled) in rows {
        let runs = both_ways_with(h2c(&grpc(g)), H2Server::wait_idle, |s| {
            server_stream(s, 10, limit(Some(n), None))
        });
        for (r, server) in &runs {
            let what = format!("{g:?}, limit {n}");
            assert_eq!(failures(r), vec![], "{what}");
            assert_eq!(
                (r.counts.ok, r.counts.completed),
                (10 * each, 10 * each),
                "{what}"
            );
            let st = r.stream.as_deref().unwrap();
            let cancels = if cancelled { 10 } else { 0 };
            assert_eq!((st.calls_ok, st.cancelled), (10, cancels), "{what}");
            assert_eq!(
                server.cancels(),
                cancels,
                "{what}: RST_STREAM CANCEL a call"
            );
            assert_eq!(r.counts.stream_resets.len(), 0, "{what}: none received");
        }
    }
}

#[test]
fn the_duration_limit_ends_an_endless_stream() {
    let runs = each_way_with(
        h2c(&grpc(GrpcBehavior::Endless)),
        H2Server::wait_idle,
        |s| {
            call(
                s,
                "SayHellos",
                4,
                1,
                2,
                limit(None, Some(Duration::from_millis(60))),
                &BOB,
            )
        },
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        let st = r.stream.as_deref().unwrap();
        assert_eq!((st.calls_ok, st.cancelled), (4, 4));
        assert_eq!(server.cancels(), 4);
        // The first reply comes with the headers; more follow each millisecond.
        assert!(st.replies >= 4, "{} replies", st.replies);
        assert_eq!(r.counts.ok, st.replies);
        assert!(
            r.duration >= Duration::from_millis(120),
            "two rounds of 60 ms"
        );
    }
}

#[test]
fn a_hostile_stream_s_replies_count_and_its_fault_counts_once() {
    let rows = [
        (
            GrpcBehavior::ResetMidMessage(3),
            3,
            FailureKind::StreamReset,
        ),
        (GrpcBehavior::HugeAfter(3), 3, FailureKind::GrpcFraming),
        (GrpcBehavior::EndsAfterMessage, 1, FailureKind::GrpcTrailers),
        (GrpcBehavior::WrongType, 0, FailureKind::GrpcDecode),
    ];
    for (g, each, kind) in rows {
        let runs = both_ways_with(h2c(&grpc(g)), H2Server::wait_idle, |s| {
            server_stream(s, 8, GrpcStream::default())
        });
        for (r, server) in &runs {
            assert_eq!(failures(r), vec![(kind, 8)], "{g:?}");
            assert_eq!(
                (r.counts.ok, r.counts.completed),
                (8 * each, 8 * each + 8),
                "{g:?}"
            );
            assert_eq!(r.stream.as_deref().unwrap().calls_ok, 0, "{g:?}");
            assert_eq!(server.answers(), 8, "{g:?}");
        }
    }
}

#[test]
fn a_client_stream_sends_its_messages_and_reads_one_reply() {
    let body: Vec<u8> = BOB.repeat(3);
    let runs = both_ways_with(
        h2c(&grpc(GrpcBehavior::Greeter)),
        H2Server::wait_idle,
        |s| {
            let mut spec = call(s, "SayHelloToAll", 9, 2, 2, limit(Some(3), None), &body);
            spec.expect.grpc.as_mut().unwrap().json =
                Some(r#"{"message":"hello bob,bob,bob"}"#.into());
            spec
        },
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        assert_eq!((r.counts.ok, r.counts.completed), (9, 9));
        assert_eq!(server.messages(), 27, "three messages a call");
        let st = r.stream.as_deref().unwrap();
        assert_eq!(
            (st.shape, st.calls_ok, st.messages_per_call),
            ("client", 9, 3)
        );
    }
}
