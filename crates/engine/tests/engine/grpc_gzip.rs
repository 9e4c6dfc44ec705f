//! gRPC's gzip encoding (`--grpc-compress gzip`): a call that asks for it sends its
//! message compressed and reads a compressed reply; a compressed reply where none was
//! agreed, one in an encoding not spoken, and one that inflates past the reply limit are
//! each counted once as `grpc_framing`, whole and one byte per write. A bidirectional
//! call compresses each of its messages as a unary call does. An echo of a compressed
//! call is compared with the message the server read (`--expect-echo`).

use crate::common;

use common::{both_ways_with, failures, grpc_call, h2c};
use shootout_engine::grpc::gzip;
use shootout_model::messages::MessageList;
use shootout_model::requests::Order;
use shootout_model::{FailureKind, GrpcStream, LoadSpec};
use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server};

/// `n` calls of SayHello with name `bob`, compressed with gzip and asking for gzip when
/// `compress`, every reply checked to be `hello bob`.
fn call(server: &H2Server, n: u64, compress: bool) -> LoadSpec {
    let bob = [0x0a, 3, b'b', b'o', b'b'];
    let mut body = Vec::new();
    match compress {
        true => gzip::framed(&bob, &mut body),
        false => body = [&[0, 0, 0, 0, 5][..], &bob].concat(),
    }
    let mut s = grpc_call(server, "SayHello", n, 2, 3, Default::default(), &body);
    let reply = s.expect.grpc.as_mut().unwrap();
    reply.compress = compress;
    reply.json = Some(r#"{"message":"hello bob"}"#.into());
    if compress {
        for name in ["grpc-encoding", "grpc-accept-encoding"] {
            s.request.headers.push((name.into(), "gzip".into()));
        }
    }
    s
}

#[test]
fn a_compressed_call_reads_a_compressed_reply() {
    let runs = both_ways_with(
        h2c(&H2Behavior::Grpc(GrpcBehavior::Gzip)),
        H2Server::wait_idle,
        |s| call(s, 12, true),
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        // Every reply held "hello bob": the server inflated each request to read its name.
        assert_eq!((r.counts.ok, r.counts.completed), (12, 12));
        assert_eq!(server.answers(), 12);
    }
    // The greeter that does not compress answers a compressed call plainly: read too.
    let runs = both_ways_with(
        h2c(&H2Behavior::Grpc(GrpcBehavior::Greeter)),
        H2Server::wait_idle,
        |s| call(s, 12, true),
    );
    for (r, _) in &runs {
        assert_eq!((r.counts.ok, failures(r)), (12, vec![]));
    }
}

/// `--expect-echo` with `--grpc-compress gzip` compared the reply with the request's
/// compressed bytes, so an echo service's every answer failed as `body`: the reply is
/// compared with the request's message as the server read it, inflated.
#[test]
fn an_echo_of_a_compressed_call_is_compared_with_its_message_inflated() {
    let echoed = |s: &H2Server| {
        let mut spec = call(s, 12, true);
        spec.expect.echo = true;
        spec.expect.grpc.as_mut().unwrap().json = None;
        spec
    };
    let runs = both_ways_with(
        h2c(&H2Behavior::Grpc(GrpcBehavior::EchoGzip)),
        H2Server::wait_idle,
        echoed,
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![]);
        assert_eq!((r.counts.ok, r.counts.completed), (12, 12));
        assert_eq!(server.answers(), 12);
    }
    // A compressed answer that is not the request ("hello bob" to "bob") is no echo.
    let runs = both_ways_with(
        h2c(&H2Behavior::Grpc(GrpcBehavior::Gzip)),
        H2Server::wait_idle,
        echoed,
    );
    for (r, server) in &runs {
        assert_eq!(failures(r), vec![(FailureKind::Body, 12)]);
        assert_eq!((r.counts.ok, r.counts.completed), (0, 12));
        assert_eq!(server.answers(), 12);
    }
}

#[test]
fn compressed_replies_not_agreed_or_not_readable_are_framing_faults() {
    let rows = [
        // The call did not ask for gzip.
        (GrpcBehavior::Gzip, false),
        // Flag 1 with no grpc-encoding at all.
        (GrpcBehavior::Compressed, true),
        // An encoding shootout does not speak.
        (GrpcBehavior::UnknownEncoding, true),
        // 8 MiB once inflated, past the 1 MiB limit.
        (GrpcBehavior::GzipBomb, true),
    ];
    for (g, compress) in rows {
        let runs = both_ways_with(h2c(&H2Behavior::Grpc(g)), H2Server::wait_idle, |s| {
            call(s, 9, compress)
        });
        for (r, server) in &runs {
            assert_eq!(failures(r), vec![(FailureKind::GrpcFraming, 9)], "{g:?}");
            assert_eq!((r.counts.ok, r.counts.completed), (0, 9), "{g:?}");
            assert_eq!(server.answers(), 9, "{g:?}");
        }
    }
}

/// `n` calls of the Greeter's Chat, 4 messages each, asking for gzip: the one message
/// `{"name":"bob"}` compressed, or (`list`) a list's messages, each compressed by the
/// engine.
fn chat(server: &H2Server, n: u64, list: bool) -> LoadSpec {
    let mut body = Vec::new();
    gzip::framed(&[0x0a, 3, b'b', b'o', b'b'], &mut body);
    let four = GrpcStream {
        messages: Some(4),
        duration: None,
        interval: None,
    };
    let mut s = grpc_call(server, "Chat", n, 2, 3, four, &body);
    let reply = s.expect.grpc.as_mut().unwrap();
    reply.compress = true;
    reply.json = Some(r#"{"message":"hello bob"}"#.into());
    for name in ["grpc-encoding", "grpc-accept-encoding"] {
        s.request.headers.push((name.into(), "gzip".into()));
    }
    if list {
        reply.json = None;
        s.request.body.clear();
        let text = "{\"name\":\"bob\"}\n{\"name\":\"ann\"}\n";
        s.ws_messages = Some(MessageList::parse("names", text, Order::Seq, 0).unwrap());
    }
    s
}

#[test]
fn a_bidi_call_compresses_each_message_and_reads_replies_either_way() {
    // The replies come plain (Chat) or compressed (ChatGzip); the messages from one
    // message or from a list.
    for (g, list) in [
        (GrpcBehavior::Chat, false),
        (GrpcBehavior::ChatGzip, false),
        (GrpcBehavior::ChatGzip, true),
    ] {
        let runs = both_ways_with(h2c(&H2Behavior::Grpc(g)), H2Server::wait_idle, |s| {
            chat(s, 6, list)
        });
        for (r, server) in &runs {
            let what = format!("{g:?}, list {list}");
            assert_eq!(failures(r), vec![], "{what}");
            assert_eq!((r.counts.ok, r.counts.completed), (24, 24), "{what}");
            let st = r.stream.as_deref().unwrap();
            assert_eq!((st.calls_ok, st.sent, st.replies), (6, 24, 24), "{what}");
            assert_eq!(server.messages(), 24, "{what}");
            assert_eq!(
                server.compressed_messages(),
                24,
                "{what}: every message went with its compressed flag set"
            );
        }
    }
}
