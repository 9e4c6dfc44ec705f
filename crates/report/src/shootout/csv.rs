//! The CSV rendering of a stored run: a header, then one record per step (every
//! repetition, in the order measured), for spreadsheets and scripts. RFC 4180: CRLF line
//! ends, fields quoted only when they hold a comma, a quote or a line break. Empty fields
//! mean "does not apply" (no rate in closed loop, no server samples for a URL contender);
//! names that a spreadsheet would run as a formula (`=…`, `+…`, `-…`, `@…`) start with `'`;
//! `baseline` is true on the steps of the contender the reports compare the others with;
//! `protocol`, `streams` and `pipeline` say how the client spoke to it (empty for steps
//! stored before shootout recorded it).
//!
//! After the steps, a workload of journeys has one record per contender × level × journey
//! step (`record` = `journey_step`, `name` = `journey › step`) and per journey
//! (`journey`): every repetition's counts and failures by class added up, `unsent` the
//! step's sends that failed unsent (a journey's first failed step's), `ok_rps` the median
//! over repetitions of good ones per second (good journeys for a journey), and the
//! latency of the repetitions' merged histograms (a journey's duration, think times
//! included); the fields of one measurement (repetition, status, times, server) empty.
//! Where every journey of the contender's steps has its busy time, a `journey_busy`
//! record per journey follows: the journey's counts, the busy time's percentiles (its
//! duration less its think times).
//! A step's own record has `record` = `step` and empty `name` and `unsent`.
//!
//! A step of a plan with `until` says how its conditions went: `until` is `converged` or
//! `not_converged` (empty without conditions), `until_after_s` when they all held (s
//! from the step's start), `until_half_widths` each condition's last interval's
//! relative half-width, space-separated as `p99±5%=0.0312` (`open` when its interval
//! was open above or nothing was read).
//!
//! The last column, `unit`, says what a record's counts and rates count: `request`,
//! `call` (a gRPC workload's unary or client-streaming calls), `reply` (a server
//! stream's), `message` (a bidirectional stream's), or `journey` (a journey's records;
//! its steps' are requests).

use crate::grid::csv_record;
use crate::safe::csv_text;
use crate::units::rfc3339;
use shootout_analysis::cells::{step_cpu_us, step_peak_rss};
use shootout_analysis::journeys::{Block, Kind};
use shootout_analysis::{Analysis, Unit};
use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::{FailureKind, LatencySummary, LoadLevel};

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
const TAIL: [&str; 21] = [
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
    "record",
    "name",
    "unsent",
    "until",
    "until_after_s",
    "until_half_widths",
    "unit",
];

/// The columns, in order: [`HEAD`], a `fail_NAME` column per failure class, [`TAIL`].
pub fn columns() -> Vec<String> {
    crate::csv::around_failures(&HEAD, &TAIL)
}

/// The run's steps as CSV (header included).
pub fn csv(run: &StoredRun) -> String {
    csv_of(&Analysis::of(run))
}

/// [`csv`] of a run already analysed (`a.run`).
pub fn csv_of(a: &Analysis) -> String {
    let (run, baseline) = (a.run, a.baseline);
    let mut out = String::new();
    csv_record(&mut out, &columns());
    for s in &run.steps {
        let Some(ci) = run.contenders.iter().position(|c| c.id == s.contender) else {
            continue;
        };
        let name = &run.contenders[ci].name;
        let unit = a.unit(&s.workload);
        let record = step_record(run, s, (name, unit), baseline == Some(ci));
        csv_record(&mut out, &record);
    }
    for b in shootout_analysis::journeys::blocks(run) {
        let rows = b
            .steps
            .iter()
            .map(|k| ("journey_step", k, k.summary()))
            .chain(b.journeys.iter().map(|k| ("journey", k, k.summary())))
            .chain(
                b.journeys
                    .iter()
                    .filter_map(|k| Some(("journey_busy", k, k.busy_summary()?))),
            );
        for (record, k, latency) in rows {
            let baseline = baseline == Some(b.contender);
            let fields = journey_record(run, &b, (record, k), latency, baseline);
            csv_record(&mut out, &fields);
        }
    }
    out
}

/// The record of step `s`, of contender `contender` (the baseline or not), whose
/// workload counts `unit`s.
fn step_record(
    run: &StoredRun,
    s: &StoredStep,
    (contender, unit): (&str, Unit),
    baseline: bool,
) -> Vec<String> {
    let counts = &s.result.counts;
    let mut fields = placement(run, contender, &s.workload, s.level);
    fields.extend([
        s.repetition.to_string(),
        s.status.as_str().to_string(),
        rfc3339(s.started),
        format!("{:.6}", s.result.duration.as_secs_f64()),
        counts.completed.to_string(),
        counts.ok.to_string(),
        counts.failed().to_string(),
        counts.aborted.to_string(),
    ]);
    fields.extend(
        FailureKind::ALL
            .iter()
            .map(|k| counts.failures[*k].to_string()),
    );
    fields.extend([
        format!("{:.3}", s.result.rps()),
        format!("{:.3}", s.result.ok_rps()),
    ]);
    fields.extend(latency_fields(&s.latency_summary()));
    fields.extend([
        step_cpu_us(s).map_or(String::new(), |v| format!("{v:.3}")),
        step_peak_rss(s).map_or(String::new(), |v| v.to_string()),
        baseline.to_string(),
    ]);
    match s.wire {
        Some(w) => fields.extend([
            w.protocol.as_str().to_string(),
            w.streams.to_string(),
            w.pipeline.to_string(),
        ]),
        None => fields.extend([String::new(), String::new(), String::new()]),
    }
    fields.extend(["step".to_string(), String::new(), String::new()]);
    fields.extend(until_fields(&s.result));
    fields.push(unit.word().to_string());
    fields
}

/// The record of a journey step or a journey (`record`) `k` of block `b`, its
/// repetitions added up, with the percentiles of `latency` (its latency, or a journey's
/// busy time).
fn journey_record(
    run: &StoredRun,
    b: &Block,
    (record, k): (&str, &Kind),
    latency: LatencySummary,
    baseline: bool,
) -> Vec<String> {
    let contender = &run.contenders[b.contender].name;
    let mut fields = placement(run, contender, &b.workload, b.level);
    fields.extend(std::iter::repeat_n(String::new(), 4));
    fields.extend([
        k.completed.to_string(),
        k.ok.to_string(),
        k.failed().to_string(),
        String::new(),
    ]);
    fields.extend(k.failures.iter().map(|(_, n)| n.to_string()));
    fields.extend([String::new(), format!("{:.3}", k.ok_rate())]);
    fields.extend(latency_fields(&latency));
    fields.extend(std::iter::repeat_n(String::new(), 2));
    fields.push(baseline.to_string());
    fields.extend(std::iter::repeat_n(String::new(), 3));
    fields.extend([
        record.to_string(),
        csv_text(&k.label).into_owned(),
        k.unsent.to_string(),
    ]);
    fields.extend(std::iter::repeat_n(String::new(), 3));
    // A step's counts are its requests; a journey's and its busy time's, journeys.
    fields.push(
        if record == "journey_step" {
            "request"
        } else {
            "journey"
        }
        .to_string(),
    );
    fields
}

/// A record's first fields: the run, the contender, the workload and the level.
fn placement(run: &StoredRun, contender: &str, workload: &str, level: LoadLevel) -> Vec<String> {
    let (kind, connections, rate) = level_fields(level);
    vec![
        run.run.id.0.to_string(),
        csv_text(contender).into_owned(),
        csv_text(workload).into_owned(),
        kind.to_string(),
        connections.to_string(),
        rate,
    ]
}

/// The latency fields in ms: mean, sd, p50, p90, p99, max.
fn latency_fields(l: &LatencySummary) -> [String; 6] {
    [l.mean, l.stdev, l.p50, l.p90, l.p99, l.max].map(|ms| format!("{ms:.3}"))
}

/// A step's `until`, `until_after_s` and `until_half_widths` fields (empty without
/// conditions).
fn until_fields(r: &shootout_model::RunResult) -> [String; 3] {
    let Some(u) = &r.until else {
        return [String::new(), String::new(), String::new()];
    };
    let widths: Vec<String> = u
        .conditions
        .iter()
        .zip(&u.last)
        .map(|(c, r)| {
            let w = r.filter(|r| !r.open_above).map(|r| r.width());
            match w.filter(|w| w.is_finite()) {
                Some(w) => format!("{c}={w:.4}"),
                None => format!("{c}=open"),
            }
        })
        .collect();
    [
        if u.converged.is_some() {
            "converged"
        } else {
            "not_converged"
        }
        .to_string(),
        u.converged
            .map_or(String::new(), |d| format!("{:.3}", d.as_secs_f64())),
        widths.join(" "),
    ]
}

/// A level's `level_kind`, `connections` and `rate_rps` fields.
fn level_fields(level: LoadLevel) -> (&'static str, usize, String) {
    match level {
        LoadLevel::Concurrency { connections } => ("concurrency", connections, String::new()),
        LoadLevel::Rate { rps, connections } => ("rate", connections, format!("{rps}")),
    }
}
