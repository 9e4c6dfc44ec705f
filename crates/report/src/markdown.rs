//! The Markdown rendering of one load run (`--format markdown`), for a pull request or a
//! wiki page: what ran, what came back (counts, failures by class, status codes,
//! throughput), latency (corrected and raw in rate mode), the per-kind tables — request
//! list entries, or a journey's steps and its journeys ([`crate::kinds`]) — and the
//! warnings. GitHub pipe tables; every string from the run is escaped.

use crate::grid::{md_escape, utc_seconds, Align, Table};
use crate::kinds::{table, Kind};
use crate::text::{load_line, warning_lines};
use crate::units::human_span;
use crate::Exporter;
use shootout_model::{LatencySummary, LoadSpec, Pace, RunResult};
use std::fmt::Write;

/// The Markdown rendering.
pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String {
        markdown(spec, result)
    }
}

fn markdown(spec: &LoadSpec, r: &RunResult) -> String {
    let mut o = String::new();
    let c = &r.counts;
    let _ = writeln!(
        o,
        "# shootout load {} {}\n",
        md_escape(&spec.request.method),
        md_escape(&spec.target.url)
    );
    let _ = writeln!(o, "{}\n", md_escape(&load_line(spec)));
    let mut fact = |label: &str, value: String| {
        let _ = writeln!(o, "- **{label}:** {value}");
    };
    fact(
        "Ran",
        format!("{} from {}", human_span(r.duration), utc_seconds(r.started)),
    );
    fact(
        crate::common::counted_unit(spec, r).label(),
        format!(
            "{} completed: {} ok, {} failed, {} aborted (in flight at the end)",
            c.completed,
            c.ok,
            c.failed(),
            c.aborted
        ),
    );
    if c.failed() > 0 {
        fact("Failures", md_escape(&c.failures.to_string()));
    }
    let codes: Vec<String> = c.status.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    fact(
        "Status codes",
        if codes.is_empty() {
            "none".to_string()
        } else {
            codes.join(", ")
        },
    );
    let per_s = crate::common::per_second(spec, r);
    fact(
        "Throughput",
        md_escape(&crate::common::throughput(r, per_s)),
    );
    o.push_str("\n## Latency (ms)\n\n");
    latency_table(r, matches!(spec.pace, Pace::Rate(_))).markdown(&mut o);
    for (kind, stats) in Kind::of(r) {
        let _ = writeln!(o, "\n## {}\n", md_escape(kind.title()));
        table(kind, r, stats).markdown(&mut o);
    }
    let warnings = warning_lines(r, true);
    if !warnings.is_empty() {
        o.push_str("\n## Warnings\n\n");
        for w in warnings {
            let _ = writeln!(o, "- {}", md_escape(&w));
        }
    }
    o
}

/// Latency (ms): one row, or corrected and raw in rate mode.
fn latency_table(r: &RunResult, rate: bool) -> Table {
    let row = |name: &str, h| {
        let l = LatencySummary::of(h);
        let mut cells = vec![name.to_string()];
        cells.extend(
            [l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max]
                .iter()
                .map(|ms| format!("{ms:.3}")),
        );
        cells
    };
    let rows = if rate {
        vec![
            row("corrected", &r.histograms.latency),
            row("raw", &r.histograms.latency_raw),
        ]
    } else {
        vec![row("latency", &r.histograms.latency)]
    };
    let header = ["", "min", "mean", "p50", "p90", "p99", "p99.9", "max"];
    let mut align = vec![Align::Left];
    align.resize(header.len(), Align::Right);
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        align,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    /// A journey run: a table of its steps and one of its journeys, each with exact
    /// counts, their failures by class, rates and percentiles; the run's failures by class.
    #[test]
    fn a_journey_run_has_its_step_and_journey_tables() {
        let (spec, r) = fixtures::journeys();
        let out = markdown(&spec, &r);
        assert!(out.contains("## Requests by step\n"), "{out}");
        assert!(
            out.contains("\n| reader › home | 300 | 300 | 0 |  | 375.00 |"),
            "{out}"
        );
        assert!(
            out.contains("\n| writer › post | 100 | 96 | 4 | 4 status | 125.00 |"),
            "{out}"
        );
        assert!(
            out.contains("\n| writer | 100 | 96 | 4 | 4 status | 125.00 |"),
            "{out}"
        );
        assert!(out.contains("- **Failures:** 4 status"), "{out}");
    }

    /// A request list's run has its entries' table; a plain run neither table.
    #[test]
    fn per_kind_tables_only_where_the_run_has_kinds() {
        let (spec, r) = fixtures::list_pipelined();
        let out = markdown(&spec, &r);
        assert!(out.contains("## Requests by target\n"), "{out}");
        assert!(!out.contains("## Journeys"), "{out}");
        let (spec, r) = fixtures::closed_with_failures();
        let out = markdown(&spec, &r);
        assert!(!out.contains("## Requests by"), "{out}");
    }
}
