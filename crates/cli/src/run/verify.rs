//! Verification of a contender before it is measured: every workload, sequentially then
//! concurrently; a failure shows one answer of the contender. The passes and the answer
//! go through the [`Executor`].

use super::executor::Executor;
use super::step_spec;
use shootout_model::plan::{Plan, Span};
use shootout_model::{LoadLevel, RunResult, Wire};

/// Requests of each verification pass: sequential, then concurrent.
const VERIFY_SEQUENTIAL: u64 = 20;
const VERIFY_CONCURRENT: (u64, usize) = (48, 8);

/// Sends every workload to contender `ci` sequentially, then concurrently, spoken as it
/// will be measured; every answer must meet the expectations. Returns what went wrong, with a sample answer.
pub(super) fn verify<E: Executor>(
    exec: &mut E,
    plan: &Plan,
    ci: usize,
    base_url: &str,
    bodies: &[Vec<u8>],
) -> Result<(), String> {
    let passes = [
        ("sequential", VERIFY_SEQUENTIAL, 1),
        ("concurrent", VERIFY_CONCURRENT.0, VERIFY_CONCURRENT.1),
    ];
    let mut problems = Vec::new();
    for (wi, w) in plan.workloads.iter().enumerate() {
        for (pass, n, c) in passes {
            let level = LoadLevel::Concurrency { connections: c };
            let spec = match step_spec(
                plan,
                ci,
                wi,
                &bodies[wi],
                base_url,
                level,
                Span::Requests(n),
            ) {
                Ok(s) => s,
                Err(e) => return Err(e.to_string()),
            };
            let r = match exec.verify_pass(&spec) {
                Ok(r) => r,
                Err(e) => return Err(format!("workload '{}': {e}", w.name)),
            };
            if r.counts.failed() > 0 || r.counts.ok != n {
                let wire = spec.wire();
                let spoken = if wire == Wire::default() {
                    String::new()
                } else {
                    format!(" over {wire}")
                };
                problems.push(format!(
                    "  workload '{}'{spoken} ({pass}, {n} requests on {c} connection{}): {}\n    one answer: {}",
                    w.name,
                    if c == 1 { "" } else { "s" },
                    failure_summary(&r),
                    exec.sample_answer(&spec, &bodies[wi]),
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
