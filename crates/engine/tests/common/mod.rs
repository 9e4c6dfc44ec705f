//! What the engine's test files share: a closed-loop spec, running a load with the one
//! invariant every run must keep, the failures that happened, and the outcome that must
//! not depend on how a server's bytes were split (HTTP/1.1 and HTTP/2 alike).

#![allow(dead_code)] // each test file uses its own part of this

use shootout_engine::{run, Control};
use shootout_model::{
    Counts, FailureKind, GrpcReply, GrpcStream, LoadSpec, Protocol, RunResult, StatusSet, Target,
};
use shootout_testserver::{Behavior, Delivery, H2Server, TestServer};
use std::time::Duration;

/// `n` requests on `c` connections of one thread to `url`, closed loop, 10 s timeout.
pub fn closed(url: &str, n: u64, c: usize) -> LoadSpec {
    let mut s = LoadSpec::new(Target::parse(url).unwrap());
    s.requests = Some(n);
    s.connections = c;
    s.threads = 1;
    s.timeout = Duration::from_secs(10);
    s
}

/// Runs `s`; every run must have completed = ok + failed.
pub fn go(s: &LoadSpec) -> RunResult {
    let mut r = run(s, &Control::new(s.threads)).expect("run");
    // The warnings a user sees, from the engine's facts (as `load` and `run` do).
    shootout_analysis::load_warnings::refresh(&mut r, s);
    let c = &r.counts;
    assert_eq!(c.completed, c.ok + c.failed(), "completed = ok + failed");
    r
}

/// The failure classes that happened, with their counts.
pub fn failures(r: &RunResult) -> Vec<(FailureKind, u64)> {
    r.counts.failures.iter().filter(|(_, n)| *n > 0).collect()
}

/// What must not depend on how the server's bytes were split: completed, ok, failures,
/// statuses, retried, aborted, HTTP/2 stream resets by code.
pub type Outcome = (
    u64,
    u64,
    Vec<(FailureKind, u64)>,
    Vec<(u16, u64)>,
    u64,
    u64,
    Vec<(u32, u64)>,
);

/// The [`Outcome`] of some counts.
pub fn outcome(c: &Counts) -> Outcome {
    (
        c.completed,
        c.ok,
        c.failures.iter().filter(|(_, n)| *n > 0).collect(),
        // WebSocket's 101s are one per handshake: how many connections a run opened
        // depends on timing, not on how the bytes were split (the tests count them).
        c.status
            .iter()
            .filter(|(k, _)| **k != 101)
            .map(|(k, v)| (*k, *v))
            .collect(),
        c.retried,
        c.aborted,
        c.stream_resets.iter().map(|(k, v)| (*k, *v)).collect(),
    )
}

/// Runs `load` against the HTTP/1.1 `behavior` served whole and byte by byte; asserts the
/// outcomes are equal and returns the byte-by-byte run with its server.
pub fn both_ways(
    behavior: Behavior,
    load: impl Fn(&TestServer) -> LoadSpec,
) -> (RunResult, TestServer) {
    let start = |d| TestServer::start_with(behavior.clone(), d).unwrap();
    let [_, bytewise] = both_ways_with(start, |_, _| true, load);
    bytewise
}

/// Runs `load` against a server started by `start` with its bytes whole, then one byte
/// per write; returns both runs with their servers once each server saw every connection
/// end (`idle`), so the servers' counters are final.
pub fn each_way_with<S>(
    start: impl Fn(Delivery) -> S,
    idle: impl Fn(&S, Duration) -> bool,
    load: impl Fn(&S) -> LoadSpec,
) -> [(RunResult, S); 2] {
    [Delivery::Whole, Delivery::Bytewise].map(|d| {
        let server = start(d);
        let r = go(&load(&server));
        assert!(
            idle(&server, Duration::from_secs(10)),
            "connections left open"
        );
        (r, server)
    })
}

/// [`each_way_with`], asserting that both give the same [`Outcome`].
pub fn both_ways_with<S>(
    start: impl Fn(Delivery) -> S,
    idle: impl Fn(&S, Duration) -> bool,
    load: impl Fn(&S) -> LoadSpec,
) -> [(RunResult, S); 2] {
    let runs = each_way_with(start, idle, load);
    assert_eq!(
        outcome(&runs[0].0.counts),
        outcome(&runs[1].0.counts),
        "whole (left) and byte by byte (right) differ"
    );
    runs
}

/// An h2c test server with `behavior`, bytes delivered as `d`.
pub fn h2c(behavior: &shootout_testserver::H2Behavior) -> impl Fn(Delivery) -> H2Server + '_ {
    move |d| H2Server::start_with(behavior.clone(), d, false).unwrap()
}

/// The test server's gRPC schema (its Greeter), its descriptors encoded.
pub fn schema() -> std::sync::Arc<[u8]> {
    let p = std::path::Path::new(shootout_testserver::GREETER_PROTO);
    protox::Compiler::new([p.parent().unwrap()])
        .unwrap()
        .include_imports(true)
        .open_file(p.file_name().unwrap())
        .unwrap()
        .descriptor_pool()
        .encode_to_vec()
        .into()
}

/// A gRPC spec: `n` calls of the Greeter's `method` on `c` connections of `streams` streams, bounded by `stream`,
/// each sending `body`.
pub fn grpc_call(
    server: &H2Server,
    method: &str,
    n: u64,
    c: usize,
    streams: usize,
    stream: GrpcStream,
    body: &[u8],
) -> LoadSpec {
    let mut s = closed(&server.url(&format!("/helloworld.Greeter/{method}")), n, c);
    s.protocol = Protocol::Http2;
    s.streams = streams;
    s.request.method = "POST".into();
    s.request.body = body.to_vec();
    s.request.headers = vec![
        ("content-type".into(), "application/grpc".into()),
        ("te".into(), "trailers".into()),
    ];
    s.expect.status = StatusSet::parse("200").unwrap();
    s.expect.grpc = Some(GrpcReply {
        schema: schema(),
        method: format!("helloworld.Greeter.{method}"),
        max_message: 1 << 20,
        json: None,
        stream,
        compress: false,
    });
    s
}
