//! The lines several renderings of a load run print alike: the headline throughput (text
//! and HTML) and the connection setup line (text, ab and wrk). Each is built here once;
//! the renderings place it in their own layout.

use shootout_analysis::Unit;
use shootout_model::{LoadSpec, RunResult};
use std::fmt::Write;

/// What the run's counts count: `request` (HTTP), `message` (WebSocket, and gRPC
/// bidirectional streaming: a message and its reply), `ping` (WebSocket's `--ws-hold`),
/// `call` (gRPC, unary or client streaming) or `reply` (gRPC server streaming: each reply
/// of a stream).
pub fn unit(spec: &LoadSpec, r: &RunResult) -> &'static str {
    match r.stream.as_deref().map(|s| s.shape) {
        Some("server") => "reply",
        Some("bidi") => "message",
        _ if spec.expect.grpc.is_some() => "call",
        _ if spec.target.scheme.websocket() && spec.ws_hold.is_some() => "ping",
        _ if spec.target.scheme.websocket() => "message",
        _ => "request",
    }
}

/// What the open loop's schedule paces (`--rate`, `-n`): `journey` for journeys (each
/// start a new user's, whose steps the counts count), `call` for gRPC, whatever its
/// counts count (a streaming call's replies or messages), else `request`.
pub fn paced(spec: &LoadSpec) -> &'static str {
    if spec.journey.is_some() {
        "journey"
    } else if spec.expect.grpc.is_some() {
        "call"
    } else {
        "request"
    }
}

/// What a run's counts count in the stored runs' words ([`Unit`]): a gRPC run's call,
/// server stream's reply or bidirectional stream's message, else a request (WebSocket's
/// stay requests, as its notes say what a request is there). Its words name the run's
/// per-answer figures, its count line and its throughput; `--fail-if`'s `rps` says it.
pub fn counted_unit(spec: &LoadSpec, r: &RunResult) -> Unit {
    let shape = r.stream.as_deref().and_then(|s| Unit::of_shape(s.shape));
    shape
        .or(spec.expect.grpc.is_some().then_some(Unit::Call))
        .unwrap_or_default()
}

/// One of what a run's counts count ([`counted_unit`]'s word): `request`, `call`,
/// `reply` or `message`.
pub fn counted(spec: &LoadSpec, r: &RunResult) -> &'static str {
    counted_unit(spec, r).word()
}

/// What a second of a run's counts is called in its throughput ([`counted_unit`]'s):
/// `req/s`, `calls/s`, `replies/s` or `messages/s`.
pub fn per_second(spec: &LoadSpec, r: &RunResult) -> &'static str {
    counted_unit(spec, r).per_second()
}

/// The headline throughput, `per_s` its unit ([`per_second`]): good answers per second
/// (as `shootout run` counts them, so a server answering errors fast does not look fast),
/// saying so, with the rate counting failed answers too (ab's and wrk's figure) when the
/// two differ.
pub fn throughput(r: &RunResult, per_s: &str) -> String {
    let mut s = format!("{:.2} {per_s} ok (good answers only", r.ok_rps());
    if r.counts.ok != r.counts.completed {
        let _ = write!(s, "; {:.2} {per_s} counting failed ones", r.rps());
    }
    s.push(')');
    s
}

/// The setup time of every connection opened, one line for the text, ab and wrk layouts
/// (`Connection setup: 50 connections, min 0.105, mean 0.210, max 0.410 ms`), saying so
/// when they were all opened before any request waited for them (as rate mode opens them),
/// which is why every request's Connect is 0; `None` when none was recorded.
pub(crate) fn setup_line(r: &RunResult) -> Option<String> {
    if r.histograms.setup.is_empty() {
        return None;
    }
    let l = shootout_model::LatencySummary::of(&r.histograms.setup);
    let opened = crate::grid::plural(
        usize::try_from(r.histograms.setup.len()).unwrap_or(usize::MAX),
        "connection",
        "connections",
    );
    let mut line = format!(
        "Connection setup: {opened}, min {:.3}, mean {:.3}, max {:.3} ms",
        l.min, l.mean, l.max
    );
    // Rate mode opens the connections before requests fall due: none is charged to one.
    if !r.histograms.connect.is_empty() && r.histograms.connect.max() == 0 {
        line.push_str(" (opened before any request waited for them: Connect is 0)");
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::setup_line;
    use shootout_model::RunResult;
    use std::time::{Duration, SystemTime};

    #[test]
    fn connections_opened_ahead_of_their_requests_show_their_setup_and_why_connect_is_0() {
        let mut r = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_secs(1));
        assert_eq!(setup_line(&r), None, "nothing recorded, nothing said");
        // Rate mode with keep-alive: four connections opened before the first request was
        // due; the 100 requests on them waited for none.
        for us in [100, 200, 300, 1_000] {
            r.histograms.setup.record(us).unwrap();
        }
        r.histograms.connect.record_n(0, 100).unwrap();
        assert_eq!(
            setup_line(&r).unwrap(),
            "Connection setup: 4 connections, min 0.100, mean 0.400, max 1.000 ms (opened before any request waited for them: Connect is 0)"
        );
        // A closed loop charges each connect to the request that waited for it.
        r.histograms.connect.record_n(250, 4).unwrap();
        assert_eq!(
            setup_line(&r).unwrap(),
            "Connection setup: 4 connections, min 0.100, mean 0.400, max 1.000 ms"
        );
        // One request on one connection (`shootout load URL`): one connection, not "1
        // connections".
        let mut one = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_secs(1));
        one.histograms.setup.record(49).unwrap();
        one.histograms.connect.record(49).unwrap();
        assert_eq!(
            setup_line(&one).unwrap(),
            "Connection setup: 1 connection, min 0.049, mean 0.049, max 0.049 ms"
        );
    }
}
