//! wrk 4's report layout (as printed with `--latency`), so scripts that parse wrk keep
//! working: the thread-stats table with wrk's unit scaling and padding (`print_units` in
//! wrk.c), the latency distribution, totals, socket errors and the two rate lines.
//!
//! Inputs: a `LoadSpec` and a `RunResult` (µs histograms, per-second series). What wrk
//! cannot express (warnings, aborted requests) is not printed here: the caller shows
//! [`crate::warnings`] on stderr.

use crate::stats::{per_thread_rates, sample_stdev, status_400_up, within_stdev_hist, Moments};
use crate::units::{ratio, wrk_binary, wrk_cell, wrk_metric, wrk_time_s, wrk_time_us};
use crate::Exporter;
use shootout_model::{FailureKind, LoadSpec, RunResult};
use std::fmt::Write;

/// Appends one formatted line to a `String` (writing to a `String` cannot fail).
macro_rules! emit {
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).expect("writing to a String cannot fail")
    };
}

/// The wrk rendering.
pub struct Wrk;

impl Exporter for Wrk {
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String {
        report(spec, result)
    }
}

/// One row of wrk's thread-stats table: name, then mean, stdev and max formatted by `fmt`,
/// then the share within one stdev (`%8.2f%%`).
fn stats_row(name: &str, m: &Moments, fmt: fn(f64) -> String) -> String {
    format!(
        "    {name:<10}{}{}{}{:8.2}%",
        wrk_cell(&fmt(m.mean), 8),
        wrk_cell(&fmt(m.stdev), 10),
        wrk_cell(&fmt(m.max), 9),
        m.within_stdev
    )
}

/// The report as wrk prints it: header and thread stats, latency distribution, totals.
fn report(spec: &LoadSpec, r: &RunResult) -> String {
    let mut o = String::new();
    thread_stats(&mut o, spec, r);
    latency_distribution(&mut o, r);
    totals(&mut o, r);
    o
}

/// wrk's header ("Running … test @ …", threads and connections) and "Thread Stats" table.
fn thread_stats(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    // wrk always runs for a duration; a run bounded by a request count shows how long it took.
    let test_s = spec.duration.unwrap_or(r.duration).as_secs_f64().round();
    emit!(
        o,
        "Running {} test @ {}",
        wrk_time_s(test_s),
        spec.target.url
    );
    emit!(
        o,
        "  {} threads and {} connections",
        spec.threads,
        spec.connections
    );
    emit!(
        o,
        "  Thread Stats{:>6}{:>11}{:>8}{:>12}",
        "Avg",
        "Stdev",
        "Max",
        "+/- Stdev"
    );

    let h = &r.histograms.latency;
    let latency = if h.is_empty() {
        Moments::default()
    } else {
        let (mean, stdev) = (h.mean(), sample_stdev(h));
        Moments {
            mean,
            stdev,
            max: h.max() as f64,
            within_stdev: within_stdev_hist(h, mean, stdev),
        }
    };
    emit!(o, "{}", stats_row("Latency", &latency, wrk_time_us));
    // wrk samples each thread's request rate every 100 ms; we derive the per-thread rate
    // from the merged per-second series divided by the thread count (see per_thread_rates).
    let req_sec = Moments::of(&per_thread_rates(r, spec.threads));
    emit!(o, "{}", stats_row("Req/Sec", &req_sec, wrk_metric));
}

/// wrk's `--latency` table: p50, p75, p90 and p99.
fn latency_distribution(o: &mut String, r: &RunResult) {
    let h = &r.histograms.latency;
    emit!(o, "  Latency Distribution");
    for p in [50u32, 75, 90, 99] {
        let us = if h.is_empty() {
            0
        } else {
            h.value_at_quantile(f64::from(p) / 100.0)
        };
        emit!(o, "{p:>7}%{}", wrk_cell(&wrk_time_us(us as f64), 10));
    }
}

/// wrk's totals: requests and bytes read, socket errors, non-2xx/3xx count, rates.
fn totals(o: &mut String, r: &RunResult) {
    let c = &r.counts;
    emit!(
        o,
        "  {} requests in {}, {}B read",
        c.completed,
        wrk_time_us(r.duration.as_secs_f64() * 1e6),
        wrk_binary(c.bytes_received as f64)
    );
    // wrk's socket errors: connect, read (reset or unparsable response, and the HTTP/2
    // stream resets, refusals and connection errors, and WebSocket's refused handshakes,
    // closes and protocol errors), write (a failed send shows up as a
    // reset here, so always 0), timeout.
    let f = &c.failures;
    let (connect, read, timeout) = (
        f[FailureKind::Connect],
        f[FailureKind::Reset]
            + f[FailureKind::Malformed]
            + f[FailureKind::StreamReset]
            + f[FailureKind::Refused]
            + f[FailureKind::ConnectionError]
            + f[FailureKind::Handshake]
            + f[FailureKind::Closed]
            + f[FailureKind::Protocol],
        f[FailureKind::Timeout],
    );
    if connect + read + timeout > 0 {
        emit!(
            o,
            "  Socket errors: connect {connect}, read {read}, write 0, timeout {timeout}"
        );
    }
    let bad_status = status_400_up(c);
    if bad_status > 0 {
        emit!(o, "  Non-2xx or 3xx responses: {bad_status}");
    }
    // Not wrk's: gRPC calls that failed, by class.
    let grpc: Vec<String> = f.grpc().map(|(k, n)| format!("{n} {k}")).collect();
    if !grpc.is_empty() {
        emit!(o, "  gRPC failures: {}", grpc.join(", "));
    }
    // Not wrk's: requests failed by a bug of shootout's own, apart from the server's errors.
    let faults = f[FailureKind::GeneratorFault];
    if faults > 0 {
        emit!(o, "  Generator faults (shootout's own bug): {faults}");
    }
    // Not wrk's (wrk does not time connects): the setup of every connection opened.
    if let Some(line) = crate::common::setup_line(r) {
        emit!(o, "  {line}");
    }
    let run_s = r.duration.as_secs_f64();
    emit!(o, "Requests/sec: {:9.2}", ratio(c.completed as f64, run_s));
    // Not wrk's: wrk counts every completed request, errors included; when some failed, the
    // rate of good answers follows on a line of its own.
    if c.ok != c.completed {
        emit!(o, "Good answers/sec: {:9.2}", r.ok_rps());
    }
    emit!(
        o,
        "Transfer/sec: {:>10}B",
        wrk_binary(ratio(c.bytes_received as f64, run_s))
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn header_and_rows_line_up_like_wrk() {
        let m = Moments {
            mean: 635.91,
            stdev: 890.0,
            max: 12_920.0,
            within_stdev: 93.69,
        };
        let header = format!(
            "  Thread Stats{:>6}{:>11}{:>8}{:>12}",
            "Avg", "Stdev", "Max", "+/- Stdev"
        );
        assert_eq!(
            header,
            "  Thread Stats   Avg      Stdev     Max   +/- Stdev"
        );
        assert_eq!(
            stats_row("Latency", &m, wrk_time_us),
            "    Latency   635.91us    0.89ms  12.92ms   93.69%"
        );
        let m = Moments {
            mean: 56_200.0,
            stdev: 8_070.0,
            max: 62_000.0,
            within_stdev: 86.54,
        };
        assert_eq!(
            stats_row("Req/Sec", &m, wrk_metric),
            "    Req/Sec    56.20k     8.07k   62.00k    86.54%"
        );
    }

    #[test]
    fn socket_errors_map_our_classes() {
        let (spec, r) = fixtures::closed_with_failures();
        let out = report(&spec, &r);
        assert!(
            out.contains("  Socket errors: connect 2, read 5, write 0, timeout 3\n"),
            "{out}"
        );
        assert!(out.contains("  Non-2xx or 3xx responses: 10\n"), "{out}");
        let (spec, r) = fixtures::interrupted();
        assert!(!report(&spec, &r).contains("Socket errors"));
    }
}
