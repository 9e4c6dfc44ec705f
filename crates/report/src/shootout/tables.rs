//! The tables of a run report, built once from the analysis and laid out by each format
//! (aligned text, Markdown pipes, HTML): a workload's main table, the percentile table of
//! a level, and the "times faster" lines. The cells hold plain text; escaping belongs to
//! the layout.

use super::words::{ratio_phrase, SERVED_PERCENTS};
use crate::grid::{Align, Table};
use crate::units::{mib, ms3};
use shootout_analysis::cells::{Cell, LevelBlock, Ratio, WorkloadBlock};
use shootout_analysis::{Analysis, Unit};

/// The header of the main table (the Markdown table spells two labels out), its rate and
/// CPU columns in the workload's unit: `req/s` and `server µs/req`, or for gRPC calls
/// `calls/s` and `server µs/call`.
fn header(unit: Unit) -> Vec<String> {
    [
        "contender",
        "level",
        unit.per_second(),
        "± spread",
        "% of base",
        "mean ms",
        "sd ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "failed",
    ]
    .iter()
    .map(|h| h.to_string())
    .chain([
        format!("server µs/{}", unit.short()),
        "peak RSS".to_string(),
    ])
    .collect()
}

/// A workload's main table: one row per cell, level by level; names and levels left,
/// numbers right.
pub(crate) fn cells_table(a: &Analysis, w: &WorkloadBlock) -> Table {
    let header = header(w.unit);
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    align[1] = Align::Left;
    Table {
        header,
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

/// The percentiles the main table prints, by their index in
/// [`PERCENTILES`](shootout_analysis::certify::PERCENTILES), with their column labels.
pub(crate) const TABLE_PERCENTILES: [(usize, &str); 3] = [(0, "p50"), (1, "p90"), (2, "p99")];

/// A workload's interval table: one row per cell, the interval of each percentile the
/// main table prints (`0.431–0.460`, its coverage in brackets when under 95%, `≥` before
/// an upper end that is only the slowest answer), and the note that says how they were
/// found (to print under it).
pub(crate) fn intervals_table(a: &Analysis, w: &WorkloadBlock) -> (Table, String) {
    use shootout_analysis::intervals::cell_intervals;
    let mut header = vec!["contender".to_string(), "level".to_string()];
    header.extend(TABLE_PERCENTILES.iter().map(|(_, n)| format!("{n} ms")));
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    align[1] = Align::Left;
    let (mut bases, mut open) = (Vec::new(), false);
    let rows = w
        .levels
        .iter()
        .flat_map(|l| l.cells.iter().map(move |c| (l, c)))
        .map(|(l, c)| {
            let cis = cell_intervals(c);
            let mut row = vec![contender_label(a, w, c), l.level.to_string()];
            for (i, _) in TABLE_PERCENTILES {
                bases.extend(cis[i].map(|ci| ci.basis));
                open |= cis[i].is_some_and(|ci| ci.open_above);
                row.push(crate::ci::cell_range(cis[i]));
            }
            row
        })
        .collect();
    let mut note = crate::ci::basis_note(bases);
    if open {
        note = format!("{note}; {}", crate::ci::OPEN_NOTE);
    }
    (
        Table {
            header,
            align,
            rows,
        },
        note,
    )
}

/// The title over a workload's interval table.
pub(crate) const INTERVALS_TITLE: &str = "95% intervals of the latency percentiles (ms)";

/// `97%` of the baseline's median rate (req/s, or the workload's unit), or `–` without a baseline at this level.
pub(crate) fn percent_of_base(c: &Cell, base: Option<&Cell>) -> String {
    base.filter(|b| b.rps > 0.0)
        .map_or("–".into(), |b| format!("{:.0}%", c.rps * 100.0 / b.rps))
}

/// `c=1: wsgiref is 1.04 times slower than http.server (this run's 95% interval 1.02–1.06;
/// significantly slower)` for each non-baseline cell (see [`ratio_phrase`]).
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
            let d = shootout_analysis::evidence::difference(base, c);
            let (ratio, interval) = ratio_phrase(&r, d.as_ref());
            Some(format!(
                "{}: {} is {ratio} than {} ({interval})",
                l.level,
                a.name(c.contender),
                a.name(b)
            ))
        })
        .collect()
}

/// The percentile table: header `served`, then the contenders; rows `50%` … `100%` (of
/// the level's requests, or the workload's unit), in ms
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
