//! The CSV rendering of a stored run: a header, then one record per step (every
//! repetition, in the order measured), for spreadsheets and scripts. RFC 4180: CRLF line
//! ends, fields quoted only when they hold a comma, a quote or a line break. Empty fields
//! mean "does not apply" (no rate in closed loop, no server samples for a URL contender);
//! names that a spreadsheet would run as a formula (`=…`, `+…`, `-…`, `@…`) start with `'`;
//! `baseline` is true on the steps of the contender the reports compare the others with;
//! `protocol`, `streams` and `pipeline` say how the client spoke to it (empty for steps
//! stored before shootout recorded it).

use crate::grid::csv_record;
use crate::safe::csv_text;
use crate::units::rfc3339;
use shootout_analysis::cells::{step_cpu_us, step_peak_rss};
use shootout_analysis::Analysis;
use shootout_model::stored::StoredRun;
use shootout_model::{FailureKind, LoadLevel};

/// The columns before the failure classes.
const HEAD: [&str; 14] = [
    "run_id",
    "contender",
    "workload",
    "level_kind",
    "connections",
    "rate_rps",
    "repetition",
    "status",
    "started_utc",
    "duration_s",
    "completed",
    "ok",
    "failed",
    "aborted",
];

/// The columns after them.
const TAIL: [&str; 14] = [
    "rps",
    "ok_rps",
    "mean_ms",
    "sd_ms",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "server_cpu_us_per_request",
    "peak_rss_bytes",
    "baseline",
    "protocol",
    "streams",
    "pipeline",
];

/// The columns, in order: [`HEAD`], a `fail_NAME` column per failure class, [`TAIL`].
pub fn columns() -> Vec<String> {
    crate::csv::around_failures(&HEAD, &TAIL)
}

/// The run's steps as CSV (header included).
pub fn csv(run: &StoredRun) -> String {
    let baseline = Analysis::of(run).baseline;
    let mut out = String::new();
    csv_record(&mut out, &columns());
    for s in &run.steps {
        let Some(ci) = run.contenders.iter().position(|c| c.id == s.contender) else {
            continue;
        };
        let c = &run.contenders[ci];
        let (kind, connections, rate) = match s.level {
            LoadLevel::Concurrency { connections } => ("concurrency", connections, String::new()),
            LoadLevel::Rate { rps, connections } => ("rate", connections, format!("{rps}")),
        };
        let counts = &s.result.counts;
        let l = s.latency_summary();
        let mut fields = vec![
            run.run.id.0.to_string(),
            csv_text(&c.name).into_owned(),
            csv_text(&s.workload).into_owned(),
            kind.to_string(),
            connections.to_string(),
            rate,
            s.repetition.to_string(),
            s.status.as_str().to_string(),
            rfc3339(s.started),
            format!("{:.6}", s.result.duration.as_secs_f64()),
            counts.completed.to_string(),
            counts.ok.to_string(),
            counts.failed().to_string(),
            counts.aborted.to_string(),
        ];
        fields.extend(
            FailureKind::ALL
                .iter()
                .map(|k| counts.failures[*k].to_string()),
        );
        fields.extend([
            format!("{:.3}", s.result.rps()),
            format!("{:.3}", s.result.ok_rps()),
            format!("{:.3}", l.mean),
            format!("{:.3}", l.stdev),
            format!("{:.3}", l.p50),
            format!("{:.3}", l.p90),
            format!("{:.3}", l.p99),
            format!("{:.3}", l.max),
            step_cpu_us(s).map_or(String::new(), |v| format!("{v:.3}")),
            step_peak_rss(s).map_or(String::new(), |v| v.to_string()),
            (baseline == Some(ci)).to_string(),
        ]);
        match s.wire {
            Some(w) => fields.extend([
                w.protocol.as_str().to_string(),
                w.streams.to_string(),
                w.pipeline.to_string(),
            ]),
            None => fields.extend([String::new(), String::new(), String::new()]),
        }
        csv_record(&mut out, &fields);
    }
    out
}
