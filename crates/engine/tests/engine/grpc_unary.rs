//! gRPC unary calls on the engine's HTTP/2: a good Greeter is counted ok call by call,
//! and each hostile answer of the test server's gRPC side is counted once, under the
//! class that names it, whatever the way its bytes were split (whole, one per write), in
//! a closed loop with several streams and in the open loop.

use crate::common;

use common::{both_ways_with, failures, go, grpc_call, h2c};
use shootout_model::{FailureKind, LoadSpec, Pace};
use shootout_testserver::{hello_reply, GrpcBehavior, H2Behavior, H2Server};
use std::time::Duration;

/// `n` calls of SayHello with name `bob` on `c` connections of `streams` streams.
fn call(server: &H2Server, n: u64, c: usize, streams: usize) -> LoadSpec {
    // HelloRequest { name: "bob" } behind its prefix.
    let bob = [0, 0, 0, 0, 5, 0x0a, 3, b'b', b'o', b'b'];
    grpc_call(server, "SayHello", n, c, streams, Default::default(), &bob)
}

fn greeter(g: GrpcBehavior) -> H2Behavior {
    H2Behavior::Grpc(g)
}

#[test]
fn a_good_greeter_is_ok_call_by_call() {
    for g in [GrpcBehavior::Greeter, GrpcBehavior::SplitEveryByte] {
        let runs = both_ways_with(h2c(&greeter(g)), H2Server::wait_idle, |s| call(s, 40, 2, 4));
        for (r, server) in &runs {
            assert_eq!((r.counts.ok, r.counts.completed), (40, 40), "{g:?}");
            assert_eq!(failures(r), vec![], "{g:?}");
            assert_eq!(server.answers(), 40, "{g:?}");
            let reply = hello_reply(b"bob");
            // Each answer's DATA: the prefix and the reply.
            assert_eq!(r.counts.body_bytes, 40 * (5 + reply.len() as u64), "{g:?}");
        }
    }
}

#[test]
fn each_hostile_answer_is_counted_once_under_its_class() {
    let rows = [
        (GrpcBehavior::HugePrefix, FailureKind::GrpcFraming),
        (GrpcBehavior::Compressed, FailureKind::GrpcFraming),
        (GrpcBehavior::WrongType, FailureKind::GrpcDecode),
        (GrpcBehavior::TrailersOnly(14), FailureKind::GrpcUnavailable),
        (
            GrpcBehavior::TrailersOnly(8),
            FailureKind::GrpcResourceExhausted,
        ),
        (GrpcBehavior::TrailersOnly(99), FailureKind::GrpcUnknown),
        (GrpcBehavior::Disagree, FailureKind::GrpcTrailers),
        (GrpcBehavior::NotANumber, FailureKind::GrpcTrailers),
        (GrpcBehavior::EndsAfterMessage, FailureKind::GrpcTrailers),
        (GrpcBehavior::EndsAfterHeaders, FailureKind::GrpcTrailers),
    ];
    for (g, kind) in rows {
        let runs = both_ways_with(h2c(&greeter(g)), H2Server::wait_idle, |s| call(s, 12, 2, 3));
        for (r, server) in &runs {
            assert_eq!(failures(r), vec![(kind, 12)], "{g:?}");
            assert_eq!((r.counts.ok, r.counts.completed), (0, 12), "{g:?}");
            assert_eq!(server.answers(), 12, "{g:?}");
            // The connections were kept: a failed call is the call's, not the connection's
            // (the second may still be opening when the first has made every call).
            assert!(r.counts.connections_opened <= 2, "{g:?}");
            assert_eq!(
                (r.counts.reconnects, r.counts.connections_failed),
                (0, 0),
                "{g:?}"
            );
            assert_eq!(server.connections(), 3, "{g:?}: the pre-flight's and two");
        }
    }
}

#[test]
fn a_reply_over_max_message_fails_as_framing() {
    let server = H2Server::start(greeter(GrpcBehavior::Greeter)).unwrap();
    let mut s = call(&server, 5, 1, 1);
    let reply = hello_reply(b"bob").len();
    s.expect.grpc.as_mut().unwrap().max_message = reply - 1;
    let r = go(&s);
    assert_eq!(failures(&r), vec![(FailureKind::GrpcFraming, 5)]);
    s.expect.grpc.as_mut().unwrap().max_message = reply;
    assert_eq!(go(&s).counts.ok, 5);
}

#[test]
fn a_plain_http2_answer_is_not_a_grpc_reply() {
    let server = H2Server::start(H2Behavior::Hello).unwrap();
    let r = go(&call(&server, 6, 1, 2));
    // 200 with a text body: not application/grpc.
    assert_eq!(failures(&r), vec![(FailureKind::Malformed, 6)]);
}

#[test]
fn the_open_loop_calls_on_schedule() {
    let server = H2Server::start(greeter(GrpcBehavior::Greeter)).unwrap();
    let mut s = call(&server, 200, 2, 4);
    s.requests = None;
    s.duration = Some(Duration::from_millis(500));
    s.pace = Pace::Rate(400.0);
    let r = go(&s);
    assert_eq!(failures(&r), vec![]);
    let sched = r.schedule.as_ref().expect("a rate run keeps its schedule");
    assert_eq!(r.counts.ok + r.counts.aborted, sched.sent);
    assert!(
        r.counts.ok >= 150,
        "{} calls at 400/s for 0.5 s",
        r.counts.ok
    );
}

#[test]
fn a_schema_without_the_method_is_refused_before_the_run() {
    let server = H2Server::start(greeter(GrpcBehavior::Greeter)).unwrap();
    let mut s = call(&server, 1, 1, 1);
    s.expect.grpc.as_mut().unwrap().method = "helloworld.Greeter.Nope".into();
    let e = shootout_engine::run(&s, &shootout_engine::Control::new(1)).unwrap_err();
    assert!(
        e.to_string().contains("no method helloworld.Greeter.Nope"),
        "{e}"
    );
    assert_eq!(server.requests(), 0);
}

/// `--expect-json` and `--expect-echo`: a reply that holds the fields (or echoes the
/// request) is ok; one that does not is counted once as `body`, whole and one byte per
/// write; a server that echoes fails the JSON check and passes the echo, the greeter the
/// reverse.
#[test]
fn replies_are_checked_against_the_expected_fields_and_the_echo() {
    // (server, --expect-json, --expect-echo, failed as body)
    let rows: &[(GrpcBehavior, Option<&str>, bool, bool)] = &[
        (
            GrpcBehavior::Greeter,
            Some(r#"{"message":"hello bob"}"#),
            false,
            false,
        ),
        (
            GrpcBehavior::Greeter,
            Some(r#"{"message":"hello x"}"#),
            false,
            true,
        ),
        (GrpcBehavior::Greeter, None, true, true),
        (GrpcBehavior::Echo, None, true, false),
        (
            GrpcBehavior::Echo,
            Some(r#"{"message":"bob"}"#),
            true,
            false,
        ),
        (
            GrpcBehavior::Echo,
            Some(r#"{"message":"hello bob"}"#),
            false,
            true,
        ),
    ];
    for &(g, json, echo, fails) in rows {
        let runs = both_ways_with(h2c(&greeter(g)), H2Server::wait_idle, |s| {
            let mut spec = call(s, 24, 2, 4);
            spec.expect.echo = echo;
            spec.expect.grpc.as_mut().unwrap().json = json.map(str::to_string);
            spec
        });
        let what = format!("{g:?}, {json:?}, echo {echo}");
        for (r, server) in &runs {
            assert_eq!(r.counts.completed, 24, "{what}");
            assert_eq!(server.answers(), 24, "{what}");
            let want = match fails {
                true => vec![(FailureKind::Body, 24)],
                false => vec![],
            };
            assert_eq!(failures(r), want, "{what}");
            assert_eq!(r.counts.ok, if fails { 0 } else { 24 }, "{what}");
        }
    }
}
