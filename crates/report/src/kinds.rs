//! The per-kind tables of one load run, built once for the Markdown, HTML and CSV
//! renderings: one row per request list entry or journey step (requests), one per
//! journey (journeys that ended and their duration, think times included), and one per
//! journey again for its busy time (the same journeys' durations less the think times
//! between their steps; absent from results that did not measure it). Each row has
//! its count, ok, failed, its rate over the run and its latency percentiles (ms, from the
//! kind's HDR histogram: µs resolution, 2 significant figures).
//!
//! Each row also has its failures by class (a journey's under its first failed step's
//! class) and its unsent steps: the tables show them in a `why` column, CSV in its
//! `fail_*` fields.

use crate::grid::{Align, Table};
use shootout_model::{per_second, FailureCounts, LatencySummary, RunResult, TargetStats};

/// Which per-kind rows of a run a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A request list's entries (`--urls`).
    Target,
    /// A journey's steps (`--journey`).
    Step,
    /// The journeys (`--journey`).
    Journey,
    /// The journeys again, their durations less think times (`--journey`, when every
    /// journey has them).
    Busy,
}

impl Kind {
    /// The kinds `r` holds rows of, with those rows, in the order reports show them.
    pub fn of(r: &RunResult) -> Vec<(Kind, &[TargetStats])> {
        let mut kinds = Vec::new();
        if r.journeys.is_empty() {
            if !r.targets.is_empty() {
                kinds.push((Kind::Target, r.targets.as_slice()));
            }
        } else {
            kinds.push((Kind::Step, r.targets.as_slice()));
            kinds.push((Kind::Journey, r.journeys.as_slice()));
            if r.journeys.iter().all(|j| j.busy.is_some()) {
                kinds.push((Kind::Busy, r.journeys.as_slice()));
            }
        }
        kinds
    }

    /// The word a CSV record's `kind` field holds.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Target => "target",
            Kind::Step => "step",
            Kind::Journey => "journey",
            Kind::Busy => "journey_busy",
        }
    }

    /// The table's title.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Target => "Requests by target",
            Kind::Step => "Requests by step",
            Kind::Journey => "Journeys (ms: first step due to last answer, think times included)",
            Kind::Busy => {
                "Journeys less think time (ms: duration minus the think times between steps)"
            }
        }
    }

    /// The name of the count column: requests completed, or journeys ended.
    pub fn count(self) -> &'static str {
        match self {
            Kind::Target | Kind::Step => "completed",
            Kind::Journey | Kind::Busy => "ended",
        }
    }

    /// The name of the rate column.
    pub fn rate(self) -> &'static str {
        match self {
            Kind::Target | Kind::Step => "req/s",
            Kind::Journey | Kind::Busy => "journeys/s",
        }
    }
}

/// One row's numbers: count, ok, failed, rate over `r`'s duration, latency summary.
pub struct Row<'a> {
    /// The kind's label (`journey › step` for a step).
    pub label: &'a str,
    /// Completed requests (ended journeys).
    pub count: u64,
    /// Of which ok.
    pub ok: u64,
    /// Of which failed.
    pub failed: u64,
    /// Failed per class.
    pub failures: FailureCounts,
    /// Failed unsent (journey steps).
    pub unsent: u64,
    /// `count` per second of the run.
    pub rate: f64,
    /// Latency (a journey: its duration; [`Kind::Busy`]: its busy time), ms.
    pub latency: LatencySummary,
}

/// The rows of `kinds` as `kind` shows them, their rates over `r`'s duration.
pub fn rows<'a>(r: &RunResult, kind: Kind, kinds: &'a [TargetStats]) -> Vec<Row<'a>> {
    kinds
        .iter()
        .map(|t| Row {
            label: &t.label,
            count: t.completed,
            ok: t.ok,
            failed: t.failed(),
            failures: t.failures,
            unsent: t.unsent,
            rate: per_second(t.completed, r.duration),
            latency: LatencySummary::of(match (kind, &t.busy) {
                (Kind::Busy, Some(busy)) => busy,
                _ => &t.latency,
            }),
        })
        .collect()
}

/// Why a kind's requests (steps, journeys) failed, in words: `2 status, 1 unsent`; empty
/// when none of its `failed` failed, `unclassified` where the classes were not counted
/// (results stored or saved before they were).
pub fn why(failed: u64, failures: &FailureCounts, unsent: u64) -> String {
    let mut parts = Vec::new();
    if failures.total() > 0 {
        parts.push(failures.to_string());
    }
    if unsent > 0 {
        parts.push(format!("{unsent} unsent"));
    }
    if parts.is_empty() && failed > 0 {
        parts.push("unclassified".into());
    }
    parts.join(", ")
}

/// The table of one kind: label, count, ok, failed, why, rate, then min, mean, p50, p90,
/// p99, p99.9 and max (ms, three decimals).
pub fn table(kind: Kind, r: &RunResult, kinds: &[TargetStats]) -> Table {
    let header = [
        match kind {
            Kind::Target => "target",
            Kind::Step => "step",
            Kind::Journey | Kind::Busy => "journey",
        },
        kind.count(),
        "ok",
        "failed",
        "why",
        kind.rate(),
        "min ms",
        "mean ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
    ];
    let mut align = vec![Align::Left];
    align.resize(header.len(), Align::Right);
    align[4] = Align::Left;
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        align,
        rows: rows(r, kind, kinds)
            .into_iter()
            .map(|row| {
                let l = row.latency;
                let mut cells = vec![
                    row.label.to_string(),
                    row.count.to_string(),
                    row.ok.to_string(),
                    row.failed.to_string(),
                    why(row.failed, &row.failures, row.unsent),
                    format!("{:.2}", row.rate),
                ];
                cells.extend(
                    [l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max]
                        .iter()
                        .map(|ms| format!("{ms:.3}")),
                );
                cells
            })
            .collect(),
    }
}
