//! Verification of a contender before it is measured: every workload, sequentially then
//! concurrently; a failure shows one answer of the contender.

use super::step_spec;
use super::Up;
use shootout_engine::Control;
use shootout_model::plan::{Plan, Span};
use shootout_model::{LoadLevel, LoadSpec, RunResult};
use std::io::{Read, Write};
use std::time::Duration;

/// Requests of each verification pass: sequential, then concurrent.
const VERIFY_SEQUENTIAL: u64 = 20;
const VERIFY_CONCURRENT: (u64, usize) = (48, 8);

/// Sends every workload sequentially, then concurrently; every answer must meet the
/// expectations. Returns what went wrong, with a sample answer.
pub(super) fn verify(plan: &Plan, u: &Up, bodies: &[Vec<u8>]) -> Result<(), String> {
    let passes = [
        ("sequential", VERIFY_SEQUENTIAL, 1),
        ("concurrent", VERIFY_CONCURRENT.0, VERIFY_CONCURRENT.1),
    ];
    let mut problems = Vec::new();
    for (wi, w) in plan.workloads.iter().enumerate() {
        for (pass, n, c) in passes {
            let level = LoadLevel::Concurrency { connections: c };
            let spec = match step_spec(plan, wi, &bodies[wi], &u.base_url, level, Span::Requests(n))
            {
                Ok(s) => s,
                Err(e) => return Err(e.to_string()),
            };
            let r = match shootout_engine::run(&spec, &Control::new(spec.threads)) {
                Ok(r) => r,
                Err(e) => return Err(format!("workload '{}': {e}", w.name)),
            };
            if r.counts.failed() > 0 || r.counts.ok != n {
                problems.push(format!(
                    "  workload '{}' ({pass}, {n} requests on {c} connection{}): {}\n    one answer: {}",
                    w.name,
                    if c == 1 { "" } else { "s" },
                    failure_summary(&r),
                    sample_answer(&spec, &bodies[wi]),
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

/// One answer to the workload's request, shown when verification fails: its status line
/// and the start of its body, so the user sees what the contender said instead.
fn sample_answer(spec: &LoadSpec, body: &[u8]) -> String {
    if spec.target.scheme == shootout_model::Scheme::Https {
        return "(not shown for https)".into();
    }
    let attempt = || -> std::io::Result<String> {
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(
            spec.target.host.as_str(),
            spec.target.port,
        ))?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        let mut req = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            spec.request.method, spec.target.path, spec.target.host_header
        );
        for (k, v) in &spec.request.headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        s.write_all(req.as_bytes())?;
        s.write_all(body)?;
        let mut buf = Vec::new();
        let _ = s.take(4096).read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf);
        let status = text.lines().next().unwrap_or("(nothing)").to_string();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let body: String = body
            .chars()
            .take(200)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        Ok(format!("{status} | {}", body.trim()))
    };
    attempt().unwrap_or_else(|e| format!("(could not fetch one: {e})"))
}
