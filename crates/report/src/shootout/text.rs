//! The text rendering of a stored run: facts, warnings, then per workload the aligned
//! table, the "times faster" lines and the "served within" percentile tables. It is what
//! `shootout run` prints when it ends and what `shootout report` prints later.
//!
//! Names, versions and details come from plans and servers: each line that holds one shows
//! its control characters escaped ([`terminal_line`]), so an escape sequence in a
//! contender's stderr is not run by the terminal and a newline in a name breaks no row.

use super::capacity;
use super::tables::{cells_table, intervals_table, ratio_lines, served, INTERVALS_TITLE};
use super::words::{
    ranking_legend, ranking_lines, runs_label, served_title, steps_line, warning_message,
};
use super::{footnote, machine_line, started_line, versions_line};
use crate::safe::terminal_line;
use shootout_analysis::capacities::WorkloadCapacity;
use shootout_analysis::cells::{LevelBlock, WorkloadBlock};
use shootout_analysis::{Analysis, RunWarning, Unit};
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

/// The run as text for a terminal; ends with a newline.
pub fn text(run: &StoredRun) -> String {
    text_of(&Analysis::of(run))
}

/// [`text`] of a run already analysed (`a.run`).
pub fn text_of(a: &Analysis) -> String {
    let run = a.run;
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
        ("steps", steps_line(a)),
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
    if a.workloads.is_empty() && a.capacities.is_empty() {
        line!(o);
        line!(o, "No step was measured.");
        return o;
    }
    for w in &a.workloads {
        workload_section(&mut o, run, a, w);
    }
    for w in &a.capacities {
        capacity_section(&mut o, a, w);
    }
    line!(o);
    for f in footnote(a) {
        line!(o, "{f}");
    }
    o
}

/// A workload swept over levels: the table of cells, the intervals, the rankings and
/// ratios, what each level served, and the journeys' steps.
fn workload_section(o: &mut String, run: &StoredRun, a: &Analysis, w: &WorkloadBlock) {
    line!(o);
    line!(
        o,
        "{}{}{}",
        terminal_line(w.name),
        super::words::websocket_note(a, w),
        super::words::stream_note(w)
    );
    cells_table(a, w).text(o, "  ");
    let (intervals, note) = intervals_table(a, w);
    line!(o);
    line!(o, "  {INTERVALS_TITLE}:");
    intervals.text(o, "    ");
    line!(o, "    {}", terminal_line(&note));
    let ranking = ranking_lines(a, w);
    if !ranking.is_empty() {
        line!(o);
        line!(o, "  {}:", ranking_legend(w.unit));
        for r in ranking {
            line!(o, "    {}", terminal_line(&r));
        }
    }
    let ratios: Vec<String> = w.levels.iter().flat_map(|l| ratio_lines(a, l)).collect();
    if !ratios.is_empty() {
        line!(o);
        for r in ratios {
            line!(o, "  {}", terminal_line(&r));
        }
    }
    for l in &w.levels {
        if l.cells.len() >= 2 {
            line!(o);
            served_table(o, a, l, w.unit);
        }
    }
    for section in super::journeys::sections(run, w.name) {
        line!(o);
        line!(o, "  {}:", section.title);
        section.table.text(o, "    ");
        if !section.rankings.is_empty() {
            line!(o, "  {}:", super::journeys::RANKING_TITLE);
            for r in section.rankings {
                line!(o, "    {}", terminal_line(&r));
            }
        }
    }
}

/// A workload searched: the capacities, the order, and every step.
fn capacity_section(o: &mut String, a: &Analysis, w: &WorkloadCapacity) {
    line!(o);
    line!(o, "{}", terminal_line(&capacity::title(w)));
    if let Some(h) = capacity::headline(a, w) {
        line!(o, "  {}", terminal_line(&h));
        line!(o);
    }
    capacity::table(a, w).text(o, "  ");
    if let Some(r) = capacity::ranking(a, w) {
        line!(o);
        line!(o, "  {}:", capacity::LEGEND);
        line!(o, "    {}", terminal_line(&r));
    }
    let boundary = capacity::boundary_table(a, w);
    if !boundary.rows.is_empty() {
        line!(o);
        line!(o, "  How each search decided its boundary:");
        boundary.text(o, "    ");
    }
    line!(o);
    line!(o, "  Every step:");
    capacity::steps_table(a, w).text(o, "    ");
    for l in capacity::step_legend(w) {
        line!(o, "    {l}");
    }
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

/// ab's "Percentage of the requests served within a certain time (ms)" (of the calls, for
/// gRPC: the workload's `unit`), one column per contender, from the repetitions' merged
/// histograms.
fn served_table(o: &mut String, a: &Analysis, l: &LevelBlock, unit: Unit) {
    line!(o, "  {}", served_title(l.level, unit));
    served(a, l).text(o, "    ");
}
