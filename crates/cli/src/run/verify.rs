//! Verification of a contender before it is measured: every workload, sequentially then
//! concurrently; a failure shows one answer of the contender. The passes and the answer
//! go through the [`Executor`]. A WebSocket workload is verified the same way, by the
//! engine: each connection's handshake, then its messages and their replies checked
//! against the expectation (a held workload: each connection's first ping and its pong).

use super::executor::Executor;
use super::{step_spec, Origin};
use shootout_model::plan::{Plan, Span, Workload};
use shootout_model::{LoadLevel, Protocol, RunResult, Wire};

/// Requests of each verification pass: sequential, then concurrent.
const VERIFY_SEQUENTIAL: u64 = 20;
const VERIFY_CONCURRENT: (u64, usize) = (48, 8);

/// Sends every workload to contender `ci` sequentially, then concurrently, spoken as it
/// will be measured; every answer must meet the expectations. Returns what went wrong, with a sample answer.
pub(super) fn verify<E: Executor>(
    exec: &mut E,
    plan: &Plan,
    ci: usize,
    origin: &Origin,
    bodies: &[Vec<u8>],
) -> Result<(), String> {
    let mut problems = Vec::new();
    for (wi, w) in plan.workloads.iter().enumerate() {
        for (pass, n, c) in passes(w) {
            let level = LoadLevel::Concurrency { connections: c };
            let spec = match step_spec(plan, ci, wi, &bodies[wi], origin, level, Span::Requests(n))
            {
                Ok(s) => s,
                Err(e) => return Err(e.to_string()),
            };
            let r = match exec.verify_pass(&spec) {
                Ok(r) => r,
                Err(e) => return Err(format!("workload '{}': {e}", w.name)),
            };
            if !passed(w, &r, n) {
                let wire = spec.wire();
                let spoken = if wire == Wire::default() {
                    String::new()
                } else {
                    format!(" over {wire}")
                };
                // A WebSocket reply is not an HTTP answer: the counts say what went wrong.
                let answer = match w.protocol {
                    Protocol::WebSocket => String::new(),
                    // A journey's requests are its steps': which failed says more.
                    _ if w.journeys.is_some() => failed_steps(&r),
                    _ => format!(
                        "\n    one answer: {}",
                        exec.sample_answer(&spec, &spec.request.body)
                    ),
                };
                problems.push(format!(
                    "  workload '{}'{spoken} ({pass}, {n} {} on {c} connection{}): {}{answer}",
                    w.name,
                    unit(w),
                    if c == 1 { "" } else { "s" },
                    failure_summary(&r),
                ));
                break;
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The passes of workload `w`: name, requests, connections. Held WebSocket connections
/// ping once as they open, then every `hold.ping`: a pass sends one ping per connection.
fn passes(w: &Workload) -> [(&'static str, u64, usize); 2] {
    let (n, c) = VERIFY_CONCURRENT;
    if w.hold.is_some() {
        return [("sequential", 1, 1), ("concurrent", c as u64, c)];
    }
    [("sequential", VERIFY_SEQUENTIAL, 1), ("concurrent", n, c)]
}

/// Whether a pass of `n` requests (journeys, gRPC calls) of workload `w` went as it must:
/// every request answered as expected (every journey ended, and each of its steps was ok;
/// every streaming call ended well, nothing failed).
fn passed(w: &Workload, r: &RunResult, n: u64) -> bool {
    if r.counts.failed() > 0 {
        return false;
    }
    if w.journeys.is_some() {
        let ended: u64 = r.journeys.iter().map(|j| j.completed).sum();
        let ok: u64 = r.journeys.iter().map(|j| j.ok).sum();
        return ended == n && ok == n;
    }
    // A streaming gRPC call's counts count its replies or messages: every call ended well.
    if let Some(st) = r.stream.as_deref() {
        return st.calls_ok == n;
    }
    r.counts.ok == n
}

/// `\n    steps: writer › post 2 of 3 failed`: the steps of a journey pass that failed
/// (a step never sent for want of a value counts as failed).
fn failed_steps(r: &RunResult) -> String {
    let failed: Vec<String> = r
        .targets
        .iter()
        .filter(|t| t.failed() > 0)
        .map(|t| format!("{} {} of {} failed", t.label, t.failed(), t.completed))
        .collect();
    if failed.is_empty() {
        return String::new();
    }
    format!("\n    steps: {}", failed.join("; "))
}

/// What a pass of workload `w` counts: requests, journeys, gRPC calls, or WebSocket
/// messages or pings.
fn unit(w: &Workload) -> &'static str {
    if w.journeys.is_some() {
        return "journeys";
    }
    if w.grpc.is_some() {
        return "calls";
    }
    match (w.protocol, w.hold) {
        (Protocol::WebSocket, Some(_)) => "pings",
        (Protocol::WebSocket, None) => "messages",
        _ => "requests",
    }
}

fn failure_summary(r: &RunResult) -> String {
    let codes: Vec<String> = r
        .counts
        .status
        .iter()
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    format!(
        "{} ok, {} failed ({}); status codes {}",
        r.counts.ok,
        r.counts.failed(),
        r.counts.failures,
        if codes.is_empty() {
            "none".into()
        } else {
            codes.join(", ")
        }
    )
}
