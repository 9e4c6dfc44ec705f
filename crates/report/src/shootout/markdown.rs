//! The Markdown rendering of a stored run, for a README, an issue or a pull request: it
//! renders on GitHub as it is — headings, pipe tables with numbers right-aligned, every
//! name and message escaped (a `|` in a contender's name stays inside its cell), stderr
//! and verification details in fenced code blocks. Same numbers as the text rendering.

use super::capacity;
use super::tables::{cells_table, intervals_table, ratio_lines, served, INTERVALS_TITLE};
use super::words::{
    ranking_legend, ranking_lines, runs_label, served_title, steps_line, warning_message,
};
use super::{footnote, machine_line, started_line, versions_line};
use crate::grid::{markdown_table, md_code_block, md_escape, Align};
use shootout_analysis::capacities::WorkloadCapacity;
use shootout_analysis::cells::WorkloadBlock;
use shootout_analysis::Analysis;
use shootout_model::stored::StoredRun;
use std::fmt::Write;

macro_rules! line {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).expect("writing to a String cannot fail")
    };
}

/// The run as GitHub-flavoured Markdown; ends with a newline.
pub fn markdown(run: &StoredRun) -> String {
    markdown_of(&Analysis::of(run))
}

/// [`markdown`] of a run already analysed (`a.run`).
pub fn markdown_of(a: &Analysis) -> String {
    let run = a.run;
    let mut o = String::new();
    let r = &run.run;
    let label = runs_label(run);
    line!(o, "# R{}: {}", &label[1..], md_escape(&r.name));
    line!(o);
    facts(&mut o, run, a);
    line!(o);
    contenders(&mut o, run);
    if !a.warnings.is_empty() {
        warnings(&mut o, a);
    }
    if a.workloads.is_empty() && a.capacities.is_empty() {
        line!(o);
        line!(o, "No step was measured.");
        return o;
    }
    for w in &a.workloads {
        workload(&mut o, a, w);
        for section in super::journeys::sections(run, w.name) {
            line!(o);
            line!(o, "### {}", md_escape(&section.title));
            line!(o);
            section.table.markdown(&mut o);
            if !section.rankings.is_empty() {
                line!(o);
                line!(o, "{}:", md_escape(super::journeys::RANKING_TITLE));
                line!(o);
                for r in section.rankings {
                    line!(o, "- {}", md_escape(&r));
                }
            }
        }
    }
    for w in &a.capacities {
        capacity_section(&mut o, a, w);
    }
    line!(o);
    line!(o, "---");
    line!(o);
    for f in footnote(a) {
        line!(o, "- {}", md_escape(&f));
    }
    o
}

/// A workload searched: the capacities, the order, and every step.
fn capacity_section(o: &mut String, a: &Analysis, w: &WorkloadCapacity) {
    line!(o);
    line!(o, "## {}", md_escape(&capacity::title(w)));
    line!(o);
    if let Some(h) = capacity::headline(a, w) {
        line!(o, "{}", md_escape(&h));
        line!(o);
    }
    capacity::table(a, w).markdown(o);
    if let Some(r) = capacity::ranking(a, w) {
        line!(o);
        line!(o, "**{}**", md_escape(&r));
        line!(o);
        line!(o, "_{}_", md_escape(capacity::LEGEND));
    }
    let boundary = capacity::boundary_table(a, w);
    if !boundary.rows.is_empty() {
        line!(o);
        line!(o, "How each search decided its boundary:");
        line!(o);
        boundary.markdown(o);
    }
    line!(o);
    line!(o, "<details><summary>Every step</summary>");
    line!(o);
    capacity::steps_table(a, w).markdown(o);
    line!(o);
    for l in capacity::step_legend(w) {
        line!(o, "_{}_", md_escape(l));
        line!(o);
    }
    line!(o, "</details>");
}

/// The run's facts as a list: status, start, machine, versions, steps and baseline.
fn facts(o: &mut String, run: &StoredRun, a: &Analysis) {
    let r = &run.run;
    for (k, v) in [
        ("status", r.status.as_str().to_string()),
        ("started", started_line(run)),
        ("machine", machine_line(run)),
        ("versions", versions_line(run)),
        ("steps", steps_line(a)),
        (
            "baseline",
            a.baseline.map_or("none".into(), |b| a.name(b).to_string()),
        ),
    ] {
        line!(o, "- **{k}:** {}", md_escape(&v));
    }
}

/// The "Contenders" section: name, command or URL, status and version of each.
fn contenders(o: &mut String, run: &StoredRun) {
    line!(o, "## Contenders");
    line!(o);
    let rows: Vec<Vec<String>> = run
        .contenders
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.command.clone(),
                c.status.as_str().replace('_', " "),
                c.version
                    .as_deref()
                    .and_then(|v| v.lines().next())
                    .unwrap_or("")
                    .to_string(),
            ]
        })
        .collect();
    markdown_table(
        o,
        &["contender", "command or URL", "status", "version"],
        &[Align::Left; 4],
        &rows,
    );
}

/// The "Warnings" section, details in code blocks.
fn warnings(o: &mut String, a: &Analysis) {
    line!(o);
    line!(o, "## Warnings");
    line!(o);
    for w in &a.warnings {
        let detail = w.detail_lines();
        line!(
            o,
            "- {}{}",
            md_escape(&warning_message(w)),
            if detail.is_empty() { "" } else { ":" }
        );
        if !detail.is_empty() {
            line!(o);
            md_code_block(o, "  ", &detail.join("\n"));
        }
    }
}

/// A workload's section: its table of cells and the ratio lines under it.
fn workload(o: &mut String, a: &Analysis, w: &WorkloadBlock) {
    line!(o);
    line!(
        o,
        "## {}{}{}",
        md_escape(w.name),
        super::words::websocket_note(a, w),
        super::words::stream_note(w)
    );
    line!(o);
    let mut table = cells_table(a, w);
    // The Markdown table spells two of the text table's labels out.
    for h in &mut table.header {
        match h.as_str() {
            "± spread" => *h = "±".into(),
            "% of base" => *h = "% of baseline".into(),
            _ => {}
        }
    }
    table.markdown(o);
    let (intervals, note) = intervals_table(a, w);
    line!(o);
    line!(o, "{INTERVALS_TITLE}:");
    line!(o);
    intervals.markdown(o);
    line!(o);
    line!(o, "_{}_", md_escape(&note));
    let ranking = ranking_lines(a, w);
    if !ranking.is_empty() {
        line!(o);
        line!(o, "{}:", md_escape(&ranking_legend(w.unit)));
        line!(o);
        for r in ranking {
            line!(o, "- {}", md_escape(&r));
        }
    }
    let ratios: Vec<String> = w.levels.iter().flat_map(|l| ratio_lines(a, l)).collect();
    if !ratios.is_empty() {
        line!(o);
        for r in ratios {
            line!(o, "- {}", md_escape(&r));
        }
    }
    served_tables(o, a, w);
}

/// A workload's "served within a certain time" tables, one per level with two or more
/// contenders.
fn served_tables(o: &mut String, a: &Analysis, w: &WorkloadBlock) {
    for l in &w.levels {
        if l.cells.len() >= 2 {
            line!(o);
            line!(o, "{}:", md_escape(&served_title(l.level, w.unit)));
            line!(o);
            served(a, l).markdown(o);
        }
    }
}
