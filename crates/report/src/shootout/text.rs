//! The text rendering of a stored run: facts, warnings, then per workload the aligned
//! table, the "times faster" lines and the "served within" percentile tables. It is what
//! `shootout run` prints when it ends and what `shootout report` prints later.
//!
//! Names, versions and details come from plans and servers: each line that holds one shows
//! its control characters escaped ([`terminal_line`]), so an escape sequence in a
//! contender's stderr is not run by the terminal and a newline in a name breaks no row.

use super::words::{
    ranking_lines, ratio_phrase, runs_label, served_title, steps_line, warning_message,
    RANKING_LEGEND, SERVED_PERCENTS,
};
use super::{machine_line, started_line, versions_line, FOOTNOTE};
use crate::grid::{Align, Table};
use crate::safe::terminal_line;
use crate::units::{mib, ms3};
use shootout_analysis::cells::{Cell, LevelBlock, Ratio, WorkloadBlock};
use shootout_analysis::{Analysis, RunWarning};
use shootout_model::stored::StoredRun;
use std::fmt::Write;

/// Appends one formatted line (writing to a `String` cannot fail).
macro_rules! line {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).expect("writing to a String cannot fail")
    };
}

/// The header of the main table (the Markdown table spells two labels out).
const HEADER: [&str; 14] = [
    "contender",
    "level",
    "req/s",
    "± spread",
    "% of base",
    "mean ms",
    "sd ms",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "max ms",
    "failed",
    "server µs/req",
    "peak RSS",
];

/// The run as text for a terminal; ends with a newline.
pub fn text(run: &StoredRun) -> String {
    let a = Analysis::of(run);
    let mut o = String::new();
    let r = &run.run;
    line!(
        o,
        "{}: {} ({})",
        runs_label(run),
        terminal_line(&r.name),
        r.status.as_str()
    );
    let facts = [
        ("started", started_line(run)),
        ("machine", machine_line(run)),
        ("versions", versions_line(run)),
        ("steps", steps_line(&a)),
        (
            "baseline",
            a.baseline.map_or("none".into(), |b| a.name(b).to_string()),
        ),
    ];
    for (k, v) in facts {
        line!(o, "  {k:<9} {}", terminal_line(&v));
    }
    if !a.warnings.is_empty() {
        line!(o);
        warnings(&mut o, &a.warnings);
    }
    if a.workloads.is_empty() {
        line!(o);
        line!(o, "No step was measured.");
        return o;
    }
    for w in &a.workloads {
        line!(o);
        line!(o, "{}", terminal_line(w.name));
        cells_table(&a, w).text(&mut o, "  ");
        let ranking = ranking_lines(&a, w);
        if !ranking.is_empty() {
            line!(o);
            line!(o, "  {RANKING_LEGEND}:");
            for r in ranking {
                line!(o, "    {}", terminal_line(&r));
            }
        }
        let ratios: Vec<String> = w.levels.iter().flat_map(|l| ratio_lines(&a, l)).collect();
        if !ratios.is_empty() {
            line!(o);
            for r in ratios {
                line!(o, "  {}", terminal_line(&r));
            }
        }
        for l in &w.levels {
            if l.cells.len() >= 2 {
                line!(o);
                served_table(&mut o, &a, l);
            }
        }
    }
    line!(o);
    for f in FOOTNOTE {
        line!(o, "{f}");
    }
    o
}

/// The "Warnings:" block, each detail line quoted under its warning.
fn warnings(o: &mut String, warnings: &[RunWarning]) {
    line!(o, "Warnings:");
    for w in warnings {
        let detail = w.detail_lines();
        line!(
            o,
            "  - {}{}",
            terminal_line(&warning_message(w)),
            if detail.is_empty() { "" } else { ":" }
        );
        for d in &detail {
            line!(o, "      {}", terminal_line(d));
        }
    }
}

/// A workload's main table: one row per cell, level by level; names and levels left,
/// numbers right.
pub(crate) fn cells_table(a: &Analysis, w: &WorkloadBlock) -> Table {
    let mut align = vec![Align::Right; HEADER.len()];
    align[0] = Align::Left;
    align[1] = Align::Left;
    Table {
        header: HEADER.map(String::from).to_vec(),
        align,
        rows: w
            .levels
            .iter()
            .flat_map(|l| l.cells.iter().map(|c| row(a, w, l, c)))
            .collect(),
    }
}

/// A contender's name in a workload's tables: `nginx (baseline)`, and how the client
/// spoke to it when the workload's contenders were not spoken to alike:
/// `nginx-h2c (h2 × 10 streams)`.
pub(crate) fn contender_label(a: &Analysis, w: &WorkloadBlock, c: &Cell) -> String {
    let mut notes = Vec::new();
    if let Some(wire) = w.wire_label(c) {
        notes.push(wire.to_string());
    }
    if Some(c.contender) == a.baseline {
        notes.push("baseline".to_string());
    }
    let name = a.name(c.contender);
    if notes.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", notes.join(", "))
    }
}

/// One row of the main table.
fn row(a: &Analysis, w: &WorkloadBlock, l: &LevelBlock, c: &Cell) -> Vec<String> {
    let name = contender_label(a, w, c);
    let base = a.baseline.and_then(|b| l.cell(b));
    vec![
        name,
        l.level.to_string(),
        format!("{:.0}", c.rps),
        if c.reps() > 1 {
            format!("± {:.0}", c.spread())
        } else {
            "(1 rep)".into()
        },
        percent_of_base(c, base),
        format!("{:.3}", c.mean),
        format!("{:.3}", c.sd),
        format!("{:.3}", c.p50),
        format!("{:.3}", c.p90),
        format!("{:.3}", c.p99),
        format!("{:.3}", c.max),
        c.failures_text(),
        c.cpu_us.map_or("–".into(), |v| format!("{v:.1}")),
        c.peak_rss.map_or("–".into(), mib),
    ]
}

/// `97%` of the baseline's median req/s, or `–` without a baseline at this level.
pub(crate) fn percent_of_base(c: &Cell, base: Option<&Cell>) -> String {
    base.filter(|b| b.rps > 0.0)
        .map_or("–".into(), |b| format!("{:.0}%", c.rps * 100.0 / b.rps))
}

/// `c=1: wsgiref is 1.03 ± 0.07 times slower than http.server` for each non-baseline cell.
pub(crate) fn ratio_lines(a: &Analysis, l: &LevelBlock) -> Vec<String> {
    let Some(b) = a.baseline else {
        return Vec::new();
    };
    let Some(base) = l.cell(b) else {
        return Vec::new();
    };
    l.cells
        .iter()
        .filter(|c| c.contender != b)
        .filter_map(|c| {
            let r = Ratio::of(c, base)?;
            let note = if r.has_spread {
                ""
            } else {
                " (one repetition: no spread)"
            };
            Some(format!(
                "{}: {} is {} than {}{note}",
                l.level,
                a.name(c.contender),
                ratio_phrase(&r),
                a.name(b)
            ))
        })
        .collect()
}

/// ab's "Percentage of the requests served within a certain time (ms)", one column per
/// contender, from the repetitions' merged histograms.
fn served_table(o: &mut String, a: &Analysis, l: &LevelBlock) {
    line!(o, "  {}", served_title(l.level));
    served(a, l).text(o, "    ");
}

/// The percentile table: header `served`, then the contenders; rows `50%` … `100%`, in ms
/// with µs resolution; every column right-aligned.
pub(crate) fn served(a: &Analysis, l: &LevelBlock) -> Table {
    let merged: Vec<_> = l.cells.iter().map(Cell::merged_latency).collect();
    let mut header = vec!["served".to_string()];
    header.extend(l.cells.iter().map(|c| a.name(c.contender).to_string()));
    let rows = SERVED_PERCENTS
        .iter()
        .map(|p| {
            let mut r = vec![format!("{p}%")];
            r.extend(
                merged
                    .iter()
                    .map(|h| ms3(h.value_at_quantile(f64::from(*p) / 100.0) as f64)),
            );
            r
        })
        .collect();
    Table {
        align: vec![Align::Right; header.len()],
        header,
        rows,
    }
}
