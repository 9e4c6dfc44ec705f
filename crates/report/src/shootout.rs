//! The report of a stored shootout run (`shootout report`, and the closing table of
//! `shootout run`, which is [`text`] of the run just stored): the run's facts, the warnings,
//! then per workload a table of contenders × load levels — req/s, or a gRPC workload's
//! calls/s (median ± half the range over repetitions), % of the baseline, p50/p90/p99/max
//! (medians), failures by class, the server's CPU per request (call) and peak memory —
//! hyperfine's "times faster" line per level and ab's "served within" percentile table of
//! the repetitions' merged histograms.
//!
//! Renderings: [`text`] for terminals, [`markdown`] for GitHub (pipe tables, names
//! escaped), [`json`] (schema in `docs/report-json.md`), [`csv`] (one RFC 4180 record per
//! step). All read a [`StoredRun`] only — what the store gave back — so a report made a week
//! later is byte for byte what `shootout run` printed. Comparisons use medians, never the
//! fastest repetition. The grouping, statistics and warnings they share are computed in
//! `shootout-analysis` ([`Analysis`]); the words they share are in `words`.

pub(crate) mod capacity;
mod csv;
pub(crate) mod journeys;
pub(crate) mod json;
mod markdown;
pub(crate) mod tables;
pub(crate) mod text;
pub(crate) mod words;

use shootout_model::stored::StoredRun;
use shootout_model::Choice;
use std::fmt;
use std::str::FromStr;

pub use crate::sentences::busy_text;
pub use csv::{csv, csv_of};
pub use json::{json, json_of, write_json, SCHEMA_VERSION};
pub use markdown::{markdown, markdown_of};
pub use shootout_analysis::Analysis;
use shootout_analysis::Unit;
pub use text::{text, text_of};

/// A rendering of a stored run or a comparison, chosen with `--format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum RunFormat {
    /// Aligned tables for a terminal (the default; what `shootout run` prints at its end).
    #[default]
    Text,
    /// GitHub-flavoured Markdown: headings, pipe tables, lists.
    Markdown,
    /// One JSON document (schema in `docs/report-json.md`).
    Json,
    /// CSV, RFC 4180: a header, then one record per step (per pair for a comparison).
    Csv,
}

impl Choice for RunFormat {
    const ALL: &'static [RunFormat] = &[
        RunFormat::Text,
        RunFormat::Markdown,
        RunFormat::Json,
        RunFormat::Csv,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            RunFormat::Text => &["text"],
            RunFormat::Markdown => &["markdown", "md"],
            RunFormat::Json => &["json"],
            RunFormat::Csv => &["csv"],
        }
    }
}

impl fmt::Display for RunFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--format` value that names no format of `report` or `compare`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a format of shootout report: choose one of {choices}",
    choices = RunFormat::list(", ")
)]
pub struct UnknownRunFormat(pub String);

impl FromStr for RunFormat {
    type Err = UnknownRunFormat;

    /// Parses a format's name (`md` is short for `markdown`), ignoring case and blanks.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RunFormat::named(s).ok_or_else(|| UnknownRunFormat(s.to_string()))
    }
}

/// Renders a stored run in `format`; the text ends with a newline.
pub fn render(format: RunFormat, run: &StoredRun) -> String {
    render_of(format, &Analysis::of(run))
}

/// [`render`] of a run already analysed (`a.run`), for a command that reads the analysis
/// again (its thresholds, its HTML page) without building it twice.
pub fn render_of(format: RunFormat, a: &Analysis) -> String {
    match format {
        RunFormat::Text => text_of(a),
        RunFormat::Markdown => markdown_of(a),
        RunFormat::Json => {
            let mut out = Vec::new();
            write_json(a, &mut out).expect("writing to memory cannot fail");
            String::from_utf8(out).expect("serde_json writes UTF-8")
        }
        RunFormat::Csv => csv_of(a),
    }
}

/// [`render_of`] written to `out`; JSON as it is made ([`write_json`]: a store of 20,000
/// steps is not held whole in memory as a document), the others as rendered.
pub fn write_of(
    format: RunFormat,
    a: &Analysis,
    mut out: impl std::io::Write,
) -> std::io::Result<()> {
    match format {
        RunFormat::Json => write_json(a, out),
        other => out.write_all(render_of(other, a).as_bytes()),
    }
}

/// `Test CPU @ 3.0GHz, 2 cores, kernel 6.1.0, 8.0 GiB memory` (unknown facts left out).
pub(crate) fn machine_line(run: &StoredRun) -> String {
    let m = &run.run.machine;
    let mut parts = Vec::new();
    if !m.cpu_model.is_empty() {
        parts.push(m.cpu_model.clone());
    }
    if m.cores > 0 {
        parts.push(crate::grid::plural(m.cores, "core", "cores"));
    }
    if !m.kernel.is_empty() {
        parts.push(format!("kernel {}", m.kernel));
    }
    if m.memory_bytes > 0 {
        parts.push(format!("{} memory", crate::units::gib(m.memory_bytes)));
    }
    let polled = shootout_model::resolved::ResolvedPlan::parse(&run.run.plan_resolved)
        .and_then(|p| p.busy_poll_us)
        .filter(|&us| us > 0)
        .map(|us| format!("; the load busy-polled up to {us} µs before each sleep"));
    if parts.is_empty() {
        format!("unknown{}", polled.unwrap_or_default())
    } else {
        format!("{}{}", parts.join(", "), polled.unwrap_or_default())
    }
}

/// `nginx 1.25.3, shootout 0.1.0`, then each contender's own version text.
pub(crate) fn versions_line(run: &StoredRun) -> String {
    let mut parts: Vec<String> = run
        .run
        .machine
        .versions
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    for c in &run.contenders {
        if let Some(v) = c.version.as_deref().and_then(|v| v.lines().next()) {
            parts.push(format!("{}: {}", c.name, v.trim()));
        }
    }
    if parts.is_empty() {
        "unknown".into()
    } else {
        parts.join(", ")
    }
}

/// `2023-11-14 22:13:20 UTC, took 2 min 5 s` (or `…, not finished`).
pub(crate) fn started_line(run: &StoredRun) -> String {
    let started = crate::grid::utc_seconds(run.run.started);
    match run.run.ended {
        Some(end) => format!(
            "{started}, took {}",
            crate::units::human_span(end.duration_since(run.run.started).unwrap_or_default())
        ),
        None => format!("{started}, no end recorded"),
    }
}

/// What `±`, medians and the other columns mean, for the reports' footnote: in the unit
/// every swept workload of `a` shares (`calls/s` and `server µs/call` for gRPC calls), or
/// in requests with a line on the others' units when they differ.
pub(crate) fn footnote(a: &Analysis) -> Vec<String> {
    let unit = a.common_unit().unwrap_or_default();
    let (per_s, short, many) = (unit.per_second(), unit.short(), unit.plural());
    let mut lines = vec![
        format!("{per_s} counts good answers only (status, length and body as the workload expects): a failed answer is in the failed column, never in {per_s} or % of baseline."),
        format!("± is half the range (max − min) of {per_s} over the repetitions; a range wider than 10% of the median is flagged as noisy."),
        format!("{per_s}, latencies and server µs/{short} are medians over the repetitions; failed is their sum, by class; peak RSS the largest sample."),
        format!("server µs/{short} is the server's CPU time (user + system, whole process tree) during the step divided by the {many} completed."),
    ];
    if a.common_unit().is_none() && a.workloads.iter().any(|w| w.unit != Unit::Request) {
        lines.push("A gRPC workload's table counts its calls (a server stream's replies, a bidi stream's messages) in place of requests: its rate and server µs columns say so.".into());
    }
    lines
}

#[cfg(test)]
mod tests;
