//! The self-contained HTML report: one file, tables and inline SVG charts, no script, no
//! network — it opens offline and prints. [`render_run`] renders a stored shootout, the
//! fullest view of it: run facts, warnings first, then per workload the ranking, the table
//! (p50, p90, p99 and max, medians over repetitions, and a note saying so), the "times
//! slower" lines, the sweep charts, the percentile spectrum and scatter of the highest
//! level, a small spectrum per other level, the "served within" tables (repetitions
//! merged) and one row of timelines per load level (12 levels at most, evenly spaced),
//! every repetition drawn, server CPU as a share of the CPUs the server was allowed (or
//! a "CPU-bound" note); then the footnotes and the plan text. [`render_load`] renders
//! one `shootout load` (facts, warnings, percentile spectrum, scatter, timeline).
//!
//! Seams: inputs are a [`StoredRun`] read from the store, or a [`LoadSpec`] and its
//! [`RunResult`]; the output is a `String`, the same bytes for the same input (no clock, no
//! randomness, no hash-map order), so a golden file pins it. The CLI writes it to a file.
//! Every string that comes from a plan, a server's answer or a contender's output goes
//! through [`html_text`](crate::safe::html_text) before it reaches the page; the page
//! contains no `<script>`.
//!
//! The words, lines and tables every run report shares come from where they are built once
//! (`shootout::words`, `shootout::tables`, the footnotes; `common` for a load run's lines),
//! laid out here as HTML.
//! Inside: `data.rs` arranges the analysis's cells (medians over repetitions) for the
//! charts, `warnings.rs` words the analysis's warnings, `charts.rs` turns numbers into
//! charts, `svg.rs` draws a chart as SVG text.

mod capacity;
mod charts;
mod data;
mod svg;
mod warnings;

use crate::safe::html_text;
use crate::shootout::tables::{percent_of_base, ratio_lines, served};
use crate::shootout::words;
use crate::units::{html_span, mib_or_gib};
use charts::{PerSecond, Resource, Sampled, Spectrum, Who};
use data::{workloads, Workload};
use shootout_analysis::cells::{LevelBlock, WorkloadBlock};
use shootout_analysis::certify::percentile_intervals;
use shootout_analysis::{Analysis, Unit};
use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::{
    ContenderStatus, LatencySummary, LoadLevel, LoadSpec, Pace, RunResult, RunStatus,
};
use std::fmt::Write;
use std::time::SystemTime;
use svg::Stroke;

/// The page's style sheet: readable tables, charts in a wrapping grid, warnings that stand
/// out, a layout that prints.
const STYLE: &str = "
:root{color-scheme:light}
body{margin:0;background:#f4f4f1;color:#1d1d1d;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}
main{max-width:1240px;margin:0 auto;padding:20px}
h1{font-size:26px;margin:4px 0 2px;overflow-wrap:anywhere}
h2{font-size:20px;margin:28px 0 10px;border-bottom:2px solid #d9d9d4;padding-bottom:4px}
h3{font-size:16px;margin:18px 0 8px}
.sub{color:#555;margin:0 0 12px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0;background:#fff;border:1px solid #ddd;border-radius:4px;padding:10px 14px}
dl.facts dt{color:#555}
dl.facts dd{margin:0}
section.warnings{background:#fff4e6;border:1px solid #f0c89a;border-left:5px solid #D55E00;border-radius:4px;padding:6px 16px;margin:16px 0}
section.warnings h2{border:0;margin:6px 0;font-size:18px}
section.warnings ul{margin:4px 0 8px;padding-left:20px}
section.warnings summary{cursor:pointer}
section.headline{background:#eef3fb;border:1px solid #b9cbe8;border-left:5px solid #0072B2;border-radius:4px;padding:6px 16px;margin:16px 0;font-size:17px}
section.headline h2{border:0;margin:6px 0;font-size:18px}
section.headline ul{margin:4px 0 8px;padding-left:20px}
section.ok{background:#eef7f1;border:1px solid #bfdcc9;border-left:5px solid #009E73;border-radius:4px;padding:8px 16px;margin:16px 0}
.tw{max-width:100%;overflow-x:auto;margin:6px 0 14px}
table{border-collapse:collapse;background:#fff;border:1px solid #ddd;font-variant-numeric:tabular-nums;font-size:14px;width:100%}
th,td{padding:4px 7px;border-bottom:1px solid #ececec;text-align:right;white-space:nowrap}
th{background:#efefeb;font-weight:600;white-space:normal;vertical-align:bottom}
th.l,td.l{text-align:left}
td.l code{white-space:pre-wrap;overflow-wrap:anywhere}
#contenders td{white-space:normal}
tr.group td{border-top:2px solid #d0d0cb}
td.bad{color:#b23c00;font-weight:600}
.noisy{color:#b23c00}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.tag{font-size:12px;color:#555;border:1px solid #bbb;border-radius:8px;padding:0 6px;margin-left:6px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:16px;margin:8px 0}
.charts.small{grid-template-columns:repeat(auto-fit,minmax(270px,1fr))}
.charts.one{grid-template-columns:minmax(0,720px)}
.served{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:0 16px}
svg.chart{background:#fff;border:1px solid #d6d6d6;border-radius:4px;width:100%;height:auto}
ul.ratios,ul.ranking,ul.footnotes{margin:4px 0 12px;padding-left:20px}
ul.footnotes{color:#555;font-size:13px}
.note{color:#555;font-size:13px;margin:2px 0 8px}
pre{background:#fff;border:1px solid #ddd;border-radius:4px;padding:10px 12px;overflow:auto;white-space:pre-wrap;font-size:13px}
code{font-size:13px}
footer{color:#777;font-size:12px;margin:30px 0 10px}
@media print{body{background:#fff}svg.chart{break-inside:avoid}}
@media (max-width:600px){.charts,.charts.small,.served{grid-template-columns:1fr}}
";

/// The page's head and the opening of its body.
fn open_page(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        html_text(title)
    )
}

/// The end of the page, with a footer saying where the numbers come from.
fn close_page(o: &mut String, source: &str) {
    let _ = write!(
        o,
        "<footer>Made by shootout {source}: no script, no network; hover over a point for its value.</footer>\n</main>\n</body>\n</html>\n"
    );
}

/// A wall-clock instant as `2023-11-14 22:13:20 UTC`.
fn utc(t: SystemTime) -> String {
    crate::utc_seconds(t)
}

/// `x` with `decimals`, or `–` when not finite.
fn num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "–".into()
    }
}

/// A colour swatch (colours come from the palette, never from data).
fn swatch(color: &str) -> String {
    format!("<span class=\"sw\" style=\"background:{color}\"></span>")
}

/// What became of a contender, in words (the status's own word where it says enough).
fn contender_status(s: ContenderStatus) -> &'static str {
    match s {
        ContenderStatus::Measured | ContenderStatus::Skipped => s.as_str(),
        ContenderStatus::SetupFailed => "its setup failed",
        ContenderStatus::Exited => "it exited before it was ready",
        ContenderStatus::NeverReady => "it never became ready",
        ContenderStatus::VerificationFailed => "its answers failed verification",
        ContenderStatus::Crashed => "it died while being measured",
        ContenderStatus::Interrupted => "the run was interrupted before it was measured",
    }
}

/// How a run ended, in words (the status's own word where it says enough).
fn run_status(s: RunStatus) -> &'static str {
    match s {
        RunStatus::Running => "running (or shootout died without a word)",
        RunStatus::Abandoned => "abandoned (shootout died before its end)",
        RunStatus::Complete | RunStatus::Interrupted | RunStatus::Failed => s.as_str(),
    }
}

/// One `<dt>`/`<dd>` pair; `value` is HTML (escape data before).
fn fact(o: &mut String, label: &str, value: &str) {
    let _ = writeln!(o, "<dt>{label}</dt><dd>{value}</dd>");
}

/// The warnings block, or a short green note when there is nothing to say.
fn warnings_section(o: &mut String, items: &[String]) {
    if items.is_empty() {
        o.push_str("<section class=\"ok\" id=\"warnings\">No warnings: every contender was measured, no step was noisy, the generator kept up.</section>\n");
        return;
    }
    let _ = writeln!(
        o,
        "<section class=\"warnings\" id=\"warnings\"><h2>⚠ Warnings ({})</h2><ul>",
        items.len()
    );
    for i in items {
        o.push_str(i);
        o.push('\n');
    }
    o.push_str("</ul></section>\n");
}

/// The answer first: per workload, who won, by how much and how sure (or that it was a
/// tie, depends on the level, or could not be told).
fn headline_section(o: &mut String, a: &Analysis) {
    let lines = shootout_analysis::headline::headlines(a);
    let searched: Vec<(&str, String)> = a
        .capacities
        .iter()
        .filter_map(|w| Some((w.workload, crate::shootout::capacity::headline(a, w)?)))
        .collect();
    if lines.is_empty() && searched.is_empty() {
        return;
    }
    o.push_str("<section class=\"headline\" id=\"answer\"><h2>The answer</h2><ul>\n");
    let sentences = lines
        .iter()
        .map(|h| {
            let sentence = crate::shootout::words::headline_sentence(h, |i| a.name(i));
            (h.workload.as_str(), sentence)
        })
        .chain(searched.iter().map(|(w, s)| (*w, s.clone())));
    for (workload, sentence) in sentences {
        let _ = writeln!(
            o,
            "<li><strong>{}</strong>: {}</li>",
            html_text(workload),
            html_text(&sentence)
        );
    }
    o.push_str("</ul></section>\n");
}

/// The HTML report of a stored shootout run.
pub fn render_run(run: &StoredRun) -> String {
    render_run_of(&Analysis::of(run))
}

/// [`render_run`] of a run already analysed (`a.run`).
pub fn render_run_of(a: &Analysis) -> String {
    let run = a.run;
    let r = &run.run;
    let ws = workloads(a);
    let who: Vec<Who> = run
        .contenders
        .iter()
        .enumerate()
        .map(|(i, c)| Who::new(&c.name, svg::color(i)))
        .collect();
    let mut o = open_page(&format!("shootout: {}", r.name));
    let _ = writeln!(o, "<h1>{}</h1>", html_text(&r.name));
    let _ = writeln!(
        o,
        "<p class=\"sub\">shootout {} · {} · started {}</p>",
        html_text(&crate::shootout::words::runs_label(run)),
        run_status(r.status),
        utc(r.started)
    );

    headline_section(&mut o, a);
    run_facts(&mut o, run);
    warnings_section(&mut o, &warnings::run_warnings(a));

    let base = a.baseline.unwrap_or(0);
    contenders_table(&mut o, run, &who, base);

    if ws.is_empty() && a.capacities.is_empty() {
        o.push_str("<p>No step was measured: there is nothing to chart.</p>\n");
    }
    for w in &ws {
        if let Some(b) = a.workloads.iter().find(|b| b.name == w.name) {
            workload_section(&mut o, a, b, w, &who, base);
        }
        journey_sections(&mut o, run, w.name, &who);
    }
    capacity::sections(&mut o, a, &who);
    if !ws.is_empty() {
        o.push_str("<ul class=\"footnotes\">\n");
        for f in crate::shootout::footnote(a) {
            let _ = writeln!(o, "<li>{}</li>", html_text(&f));
        }
        o.push_str("</ul>\n");
    }

    o.push_str("<h2>Plan</h2>\n");
    let _ = writeln!(o, "<pre>{}</pre>", html_text(r.plan_text.trim_end()));
    close_page(&mut o, "from its store");
    o
}

/// The run's facts: plan, status, dates, machine, versions.
fn run_facts(o: &mut String, run: &StoredRun) {
    let r = &run.run;
    o.push_str("<dl class=\"facts\">\n");
    fact(o, "Plan", &html_text(&r.name));
    fact(
        o,
        "Status",
        &format!(
            "{} ({} step{} stored)",
            run_status(r.status),
            run.steps.len(),
            if run.steps.len() == 1 { "" } else { "s" }
        ),
    );
    let when = match r.ended {
        Some(end) => format!(
            "{} → {} ({})",
            utc(r.started),
            utc(end),
            html_span(end.duration_since(r.started).unwrap_or_default())
        ),
        None => format!("{} → not ended", utc(r.started)),
    };
    fact(o, "Date", &when);
    let m = &r.machine;
    fact(
        o,
        "Machine",
        &format!(
            "{} · {} core{} · Linux {} · {} memory",
            html_text(if m.cpu_model.is_empty() {
                "unknown CPU"
            } else {
                &m.cpu_model
            }),
            m.cores,
            if m.cores == 1 { "" } else { "s" },
            html_text(if m.kernel.is_empty() { "?" } else { &m.kernel }),
            mib_or_gib(m.memory_bytes)
        ),
    );
    if let Some(us) = shootout_model::resolved::ResolvedPlan::parse(&r.plan_resolved)
        .and_then(|p| p.busy_poll_us)
        .filter(|&us| us > 0)
    {
        fact(
            o,
            "Load",
            &format!("busy-polled up to {us} µs before each sleep (its CPUs were its own)"),
        );
    }
    let mut versions: Vec<String> = m
        .versions
        .iter()
        .map(|(k, v)| format!("{} {}", html_text(k), html_text(v)))
        .collect();
    for c in &run.contenders {
        if let Some(v) = c.version.as_deref().filter(|v| !v.trim().is_empty()) {
            versions.push(format!("{}: {}", html_text(&c.name), html_text(v.trim())));
        }
    }
    if !versions.is_empty() {
        fact(o, "Versions", &versions.join(" · "));
    }
    o.push_str("</dl>\n");
}

/// The contenders with their commands and what became of them; `base` is tagged baseline.
fn contenders_table(o: &mut String, run: &StoredRun, who: &[Who], base: usize) {
    o.push_str("<h2>Contenders</h2>\n<div class=\"tw\" id=\"contenders\"><table><tr><th class=\"l\">contender</th><th class=\"l\">command or URL</th><th class=\"l\">status</th></tr>\n");
    for (i, c) in run.contenders.iter().enumerate() {
        let _ = writeln!(
            o,
            "<tr><td class=\"l\">{}{}{}</td><td class=\"l\"><code>{}</code></td><td class=\"l\">{}</td></tr>",
            swatch(who[i].color),
            html_text(&c.name),
            if i == base {
                "<span class=\"tag\">baseline</span>"
            } else {
                ""
            },
            html_text(&c.command),
            contender_status(c.status)
        );
    }
    o.push_str("</table></div>\n");
}

/// One workload: its ranking, its table and "times slower" lines, its sweep charts, its
/// spectrum and scatter at the highest level, the "served within" tables per level, and
/// one row of timelines per level, 12 at most (every repetition). `b` is the analysis's
/// block of the workload `w` lays out for the charts.
fn workload_section(
    o: &mut String,
    a: &Analysis,
    b: &WorkloadBlock,
    w: &Workload,
    who: &[Who],
    base: usize,
) {
    workload_heading(o, a, b, w, who, base);
    workload_table(o, w, who, base);
    let (intervals, note) = crate::shootout::tables::intervals_table(a, b);
    let _ = writeln!(
        o,
        "<p class=\"note\">{}:</p>",
        html_text(crate::shootout::tables::INTERVALS_TITLE)
    );
    intervals.html(o);
    let _ = writeln!(o, "<p class=\"note\">{}</p>", html_text(&note));
    // The analysis's level blocks, in the page's level order.
    let mut by_level = std::collections::HashMap::new();
    for l in &b.levels {
        if let Some(key) = shootout_analysis::cells::level_key(l.level) {
            by_level.entry(key).or_insert(l);
        }
    }
    let blocks: Vec<&LevelBlock> = w
        .levels
        .iter()
        .filter_map(|level| {
            by_level
                .get(&shootout_analysis::cells::level_key(*level)?)
                .copied()
        })
        .collect();
    let ratios: Vec<String> = blocks.iter().flat_map(|l| ratio_lines(a, l)).collect();
    if !ratios.is_empty() {
        o.push_str("<ul class=\"ratios\">\n");
        for r in ratios {
            let _ = writeln!(o, "<li>{}</li>", html_text(&r));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("<div class=\"charts\">\n");
    if w.levels.len() > 1 {
        o.push_str(&charts::throughput(w, who).svg());
        o.push('\n');
        o.push_str(&charts::latency(w, who).svg());
        o.push('\n');
    }
    if let Some(top) = w.top() {
        top_level_charts(o, w, who, top);
    }
    o.push_str("</div>\n");
    level_spectra(o, w, who);
    let compared: Vec<&&LevelBlock> = blocks.iter().filter(|l| l.cells.len() >= 2).collect();
    if !compared.is_empty() {
        o.push_str("<div class=\"served\">\n");
        for l in compared {
            let _ = writeln!(
                o,
                "<div><p class=\"note\">{}</p>",
                served_caption(l.level, b.unit)
            );
            served(a, l).html(o);
            o.push_str("</div>\n");
        }
        o.push_str("</div>\n");
    }
    timelines(o, a, w, who);
}

/// A workload's heading, what its % of baseline compares with, and its ranking.
fn workload_heading(
    o: &mut String,
    a: &Analysis,
    b: &WorkloadBlock,
    w: &Workload,
    who: &[Who],
    base: usize,
) {
    let unit = words::stream_note(b);
    let _ = writeln!(
        o,
        "<h2>Workload: {}{}</h2>",
        html_text(w.name),
        html_text(unit)
    );
    let _ = writeln!(
        o,
        "<p class=\"note\">% of baseline compares medians with {}.{}</p>",
        html_text(who.get(base).map_or("the first contender", |w| w.name)),
        if w.levels.iter().any(|l| data::is_rate(*l)) {
            " At fixed rates, latency is corrected for coordinated omission: it runs from each request's due time, so a server that falls behind shows the wait."
        } else {
            ""
        }
    );
    let ranking = words::ranking_lines(a, b);
    if !ranking.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">{}:</p>\n<ul class=\"ranking\">",
            html_text(&words::ranking_legend(b.unit))
        );
        for r in ranking {
            let _ = writeln!(o, "<li>{}</li>", html_text(&r));
        }
        o.push_str("</ul>\n");
    }
}

/// What the workload table's latency columns are, and how they differ from the merged
/// distributions of the percentile charts and "served within" tables.
const MEDIAN_OR_MERGED: &str = "Latency columns (mean to max) are medians over the repetitions of each repetition's own figure; the percentile charts and the \"served within\" tables merge every repetition's requests into one distribution, so their p99 and max can differ from these.";

/// The caption of a "served within" table (of the workload's `unit`), as HTML: it says the
/// repetitions are merged, and the load level stays on one line with the word before it
/// (a narrow column must not leave `c=1` alone on a line).
fn served_caption(level: LoadLevel, unit: Unit) -> String {
    let title = words::served_title(level, unit);
    let head = title
        .strip_suffix(&level.to_string())
        .map_or(title.as_str(), |h| h.trim_end_matches([',', ' ']));
    format!(
        "{}, all repetitions merged,&nbsp;{}",
        html_text(head),
        html_text(&level.to_string())
    )
}

/// A workload's table: one row per contender and load level, medians over repetitions;
/// its rate and CPU columns in the workload's unit (`req/s`, or gRPC's `calls/s`, …).
fn workload_table(o: &mut String, w: &Workload, who: &[Who], base: usize) {
    let _ = writeln!(
        o,
        "<div class=\"tw\"><table>\n<tr><th class=\"l\">contender</th><th class=\"l\">level</th><th>reps</th><th>{}</th><th>±</th><th>% of baseline</th><th>mean ms</th><th>sd ms</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th><th>failed</th><th>server CPU µs/{}</th><th>peak RSS</th></tr>",
        w.unit.per_second(),
        w.unit.short()
    );
    for level in &w.levels {
        let base_cell = w.cell(base, *level);
        let mut first = true;
        for cell in w.cells_at(*level) {
            let c = cell.contender;
            let noisy = if cell.noisy() {
                " <span class=\"noisy\" title=\"spread over 10% of the median\">⚠ noisy</span>"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "<tr{}><td class=\"l\">{}{}{}{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}{noisy}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td></tr>",
                if first { " class=\"group\"" } else { "" },
                swatch(who[c].color),
                html_text(who[c].name),
                w.wire_label(cell).map_or(String::new(), |l| format!(" <span class=\"tag\">{}</span>", html_text(&l))),
                if c == base { "<span class=\"tag\">baseline</span>" } else { "" },
                level,
                cell.reps(),
                num(cell.rps, 0),
                if cell.reps() > 1 { format!("± {}", num(cell.spread(), 0)) } else { "(1 rep)".into() },
                percent_of_base(cell, base_cell),
                num(cell.mean, 3),
                num(cell.sd, 3),
                num(cell.p50, 3),
                num(cell.p90, 3),
                num(cell.p99, 3),
                num(cell.max, 3),
                if cell.failures.total() > 0 { " class=\"bad\"" } else { "" },
                html_text(&cell.failures_text()),
                cell.cpu_us.map_or("–".into(), |v| num(v, 1)),
                cell.peak_rss.map_or("–".into(), mib_or_gib),
            );
            first = false;
        }
    }
    o.push_str("</table></div>\n");
    let _ = writeln!(o, "<p class=\"note\">{}</p>", html_text(MEDIAN_OR_MERGED));
}

/// The latency spectrum of every contender at `level`, each contender's repetitions
/// merged into one distribution (corrected solid and raw dashed at a fixed rate).
fn spectrum_at(w: &Workload, who: &[Who], level: LoadLevel, title: &str) -> svg::Chart {
    let rate = data::is_rate(level);
    let merged: Vec<_> = w
        .contenders()
        .into_iter()
        .filter_map(|c| w.cell(c, level).map(|cell| (c, cell)))
        .map(|(c, cell)| {
            let corrected = cell.merged_latency();
            let intervals = shootout_analysis::intervals::merged_intervals(cell, &corrected);
            (c, corrected, cell.merged_raw_latency(), intervals)
        })
        .collect();
    let mut lines = Vec::new();
    for (c, corrected, raw, intervals) in &merged {
        lines.push(Spectrum {
            name: if rate {
                format!("{} corrected", who[*c].name)
            } else {
                who[*c].name.to_string()
            },
            color: who[*c].color,
            stroke: Stroke::Solid,
            hist: corrected,
            intervals: *intervals,
        });
        if rate {
            lines.push(Spectrum {
                name: format!("{} raw", who[*c].name),
                color: who[*c].color,
                stroke: Stroke::Dashed,
                hist: raw,
                intervals: [None; 4],
            });
        }
    }
    charts::spectrum(title, &lines)
}

/// At most this many small percentile charts per workload: with more levels, that many
/// are picked evenly, the lowest and the highest kept.
const MAX_LEVEL_SPECTRA: usize = 8;

/// At most `cap` of `all`, evenly spaced, the first and the last kept.
fn pick_evenly<T: Copy>(all: &[T], cap: usize) -> Vec<T> {
    if all.len() <= cap {
        return all.to_vec();
    }
    if cap < 2 {
        return all.iter().rev().take(cap).copied().collect();
    }
    (0..cap)
        .map(|i| all[i * (all.len() - 1) / (cap - 1)])
        .collect()
}

/// One small percentile chart per load level below the highest (drawn large above), so
/// a reader follows the tail from level to level; at most [`MAX_LEVEL_SPECTRA`].
fn level_spectra(o: &mut String, w: &Workload, who: &[Who]) {
    let below = &w.levels[..w.levels.len().saturating_sub(1)];
    if below.is_empty() {
        return;
    }
    let shown = pick_evenly(below, MAX_LEVEL_SPECTRA);
    o.push_str("<h3>Latency percentiles at each level</h3>\n<p class=\"note\">Each contender's repetitions merged, as in the chart of the highest level above");
    if below.iter().any(|l| data::is_rate(*l)) {
        o.push_str("; corrected latency solid, raw dashed");
    }
    if shown.len() < below.len() {
        let _ = write!(
            o,
            "; {} of the {} lower levels, evenly spaced",
            shown.len(),
            below.len()
        );
    }
    o.push_str(".</p>\n<div class=\"charts small\">\n");
    for level in shown {
        let mut c = spectrum_at(w, who, level, &format!("Latency percentiles, {level}"));
        (c.width, c.height) = charts::SMALL;
        o.push_str(&c.svg());
        o.push('\n');
    }
    o.push_str("</div>\n");
}

/// The latency spectrum (repetitions merged) and the sampled-requests scatter of a
/// workload's top load level.
fn top_level_charts(o: &mut String, w: &Workload, who: &[Who], top: LoadLevel) {
    let rate = data::is_rate(top);
    let title = if rate {
        format!("Latency percentiles at {top}, repetitions merged, raw dashed")
    } else {
        format!("Latency percentiles at {top}, repetitions merged")
    };
    o.push_str(&spectrum_at(w, who, top, &title).svg());
    o.push('\n');
    let tops = w.top_steps();
    let samples: Vec<_> = tops.iter().map(|(c, s)| (who[*c], s.samples())).collect();
    let sets: Vec<(Who, &[shootout_model::Sample])> =
        samples.iter().map(|(w, s)| (*w, &s[..])).collect();
    let longest = tops
        .iter()
        .map(|(_, s)| s.result.duration.as_secs_f64())
        .fold(0.0, f64::max);
    o.push_str(
        &charts::scatter(
            &format!("Sampled requests over time at {top}, repetition 1"),
            &sets,
            longest,
            rate,
        )
        .svg(),
    );
    o.push('\n');
}

/// What replaces the per-second charts of steps too short to draw a line.
const TOO_SHORT: &str = "Steps of about a second give one point per timeline, not a line: lengthen the steps (duration) to see how throughput and latency move within one.";

/// At most this many repetitions of each contender are drawn in a timeline (one stroke
/// each, [`Stroke::REPETITIONS`]).
const MAX_REPS_DRAWN: usize = 5;

/// A server that used at least this share of its allowed CPUs, at every level, was
/// CPU-bound.
const CPU_BOUND: f64 = 0.9;

/// The CPUs the run's servers were allowed: its `server_cpus`, or the machine's cores;
/// and how the page names where that came from.
fn server_cpus(a: &Analysis) -> (usize, &'static str) {
    match a.plan.as_ref().and_then(|p| p.server_cpus.as_ref()) {
        Some(cpus) => (cpus.len().max(1), "its server_cpus"),
        None => (a.run.run.machine.cores.max(1), "the machine's cores"),
    }
}

/// One repetition's resource samples, placed on its measurement's clock.
fn sampled<'a>(step: &'a StoredStep, who: Who<'a>) -> Sampled<'a> {
    Sampled {
        who,
        samples: &step.resources,
        offset: step
            .result
            .started
            .duration_since(step.started)
            .map_or(0.0, |d| d.as_secs_f64()),
        duration: step.result.duration.as_secs_f64(),
    }
}

/// The contenders with resource samples in `w`, and of those the ones that used at least
/// [`CPU_BOUND`] of their `cpus` CPUs at every level (median over repetitions), each
/// with its lowest share.
fn cpu_bound(w: &Workload, who: &[Who], cpus: usize) -> (usize, Vec<(usize, f64)>) {
    let mut sampled_contenders = 0;
    let mut bound = Vec::new();
    for c in w.contenders() {
        let shares: Vec<Option<f64>> = w
            .levels
            .iter()
            .map(|level| {
                let cell = w.cell(c, *level)?;
                let each: Vec<f64> = cell
                    .steps
                    .iter()
                    .filter_map(|s| charts::cpu_share(&sampled(s, who[c]), cpus))
                    .collect();
                (!each.is_empty()).then(|| shootout_analysis::cells::median(&each))
            })
            .collect();
        if shares.iter().all(Option::is_none) {
            continue;
        }
        sampled_contenders += 1;
        let lowest = shares
            .iter()
            .map(|s| s.unwrap_or(0.0))
            .fold(f64::INFINITY, f64::min);
        if lowest >= CPU_BOUND {
            bound.push((c, lowest));
        }
    }
    (sampled_contenders, bound)
}

/// The note that says which servers were CPU-bound at every level; `all` when every
/// sampled one was (its CPU is then not charted: a flat line at the ceiling says less).
fn cpu_bound_note(o: &mut String, who: &[Who], bound: &[(usize, f64)], cpus: usize, all: bool) {
    if bound.is_empty() {
        return;
    }
    let names: Vec<&str> = bound.iter().map(|(c, _)| who[*c].name).collect();
    let lowest = bound.iter().map(|b| b.1).fold(f64::INFINITY, f64::min);
    let _ = writeln!(
        o,
        "<p class=\"note\"><strong>CPU-bound</strong>: {} used at least {}% of the {cpus} CPU{} {} allowed at every level (lowest {}%){}</p>",
        html_text(&names.join(" and ")),
        num(CPU_BOUND * 100.0, 0),
        if cpus == 1 { "" } else { "s" },
        if names.len() == 1 { "it was" } else { "they were" },
        num(lowest * 100.0, 0),
        if all {
            ": the server CPU timelines are left out, they would be flat lines at the ceiling."
        } else {
            "."
        }
    );
}

/// The per-second timelines of a workload, one row per load level, every repetition
/// (up to [`MAX_REPS_DRAWN`]): throughput, failures (only where something failed), p99
/// latency and, where sampled, the server's CPU (unless every server was CPU-bound) and
/// memory.
fn timelines(o: &mut String, a: &Analysis, w: &Workload, who: &[Who]) {
    let (cpus, from) = server_cpus(a);
    let (sampled_contenders, bound) = cpu_bound(w, who, cpus);
    let all_bound = sampled_contenders > 0 && bound.len() == sampled_contenders;
    let most = w.cells.iter().map(|c| c.reps()).max().unwrap_or(0);
    let shown = pick_evenly(&w.levels, MAX_TIMELINE_LEVELS);
    let _ = writeln!(
        o,
        "<h3>Timelines of {}, {}</h3>\n<p class=\"note\">Per second of the measurement, one line per contender and repetition (#1 solid, #2 dashed, #3 dotted, #4 dash-dot, #5 long dashes){}; server CPU is the derivative of the process tree's user + system time, 100% = the {cpus} CPU{} the server was allowed ({from}).</p>",
        if shown.len() < w.levels.len() {
            format!(
                "{} of the {} levels (evenly spaced, the lowest and the highest kept)",
                shown.len(),
                w.levels.len()
            )
        } else {
            "each level".to_string()
        },
        if most > MAX_REPS_DRAWN {
            "the first repetitions"
        } else {
            "every repetition"
        },
        if most > MAX_REPS_DRAWN {
            format!(", the first {MAX_REPS_DRAWN} of {most} repetitions drawn to keep the charts readable")
        } else {
            String::new()
        },
        if cpus == 1 { "" } else { "s" },
    );
    cpu_bound_note(o, who, &bound, cpus, all_bound);
    for level in shown {
        timeline_row(o, w, who, level, (!all_bound).then_some(cpus));
    }
}

/// At most this many levels of a workload get a row of timelines: with more, that many
/// are picked evenly, the lowest and the highest kept (a row for each of 20,000 levels
/// made a page of 147 MB that no browser reads).
const MAX_TIMELINE_LEVELS: usize = 12;

/// One level's row of timelines, a line per contender and repetition; `cpus`: the CPUs
/// the servers were allowed, `None` to leave the CPU chart out.
fn timeline_row(o: &mut String, w: &Workload, who: &[Who], level: LoadLevel, cpus: Option<usize>) {
    let reps = w.repetitions(level, MAX_REPS_DRAWN);
    let names: Vec<String> = reps
        .iter()
        .map(|r| match r.of {
            1 => who[r.contender].name.to_string(),
            _ => format!("{} #{}", who[r.contender].name, r.number),
        })
        .collect();
    let whos: Vec<Who> = reps
        .iter()
        .zip(&names)
        .map(|(r, name)| Who {
            name,
            color: who[r.contender].color,
            stroke: Stroke::REPETITIONS[(r.number - 1) % Stroke::REPETITIONS.len()],
            legend: r.number == 1,
        })
        .collect();
    let _ = writeln!(o, "<h4 class=\"level\">{level}</h4>");
    let per = |what: PerSecond| -> Vec<(Who, &RunResult, PerSecond)> {
        reps.iter()
            .zip(&whos)
            .map(|(r, who)| (*who, &r.step.result, what))
            .collect()
    };
    let drawn = reps
        .iter()
        .any(|r| charts::seconds_drawn(&r.step.result) >= 2);
    let failed = reps
        .iter()
        .any(|r| r.step.result.series.iter().any(|x| x.failed > 0));
    let sampled: Vec<Sampled> = reps
        .iter()
        .zip(&whos)
        .filter(|(r, _)| !r.step.resources.is_empty())
        .map(|(r, who)| sampled(r.step, *who))
        .collect();
    if !drawn {
        let _ = writeln!(o, "<p class=\"note\">{TOO_SHORT}</p>");
    }
    o.push_str("<div class=\"charts small\">\n");
    if drawn {
        let mut wanted = vec![("Throughput per second", PerSecond::Throughput)];
        if failed {
            wanted.push(("Failures per second", PerSecond::Failures));
        }
        wanted.push(("p99 latency per second", PerSecond::P99));
        for (title, what) in wanted {
            let chart = charts::per_second(
                &format!("{title}, {level}"),
                &per(what),
                w.unit.per_second(),
            );
            o.push_str(&chart.svg());
            o.push('\n');
        }
    }
    if !sampled.is_empty() {
        let cpu = cpus.map(|cpus| ("Server CPU", Resource::Cpu { cpus }));
        for (title, what) in cpu
            .into_iter()
            .chain([("Server memory (RSS)", Resource::Rss)])
        {
            o.push_str(&charts::resources(&format!("{title}, {level}"), what, &sampled).svg());
            o.push('\n');
        }
    }
    o.push_str("</div>\n");
    if sampled.is_empty() {
        o.push_str("<p class=\"note\">No server CPU or memory samples (a contender given by URL is not sampled).</p>\n");
    }
}

/// A latency table row: min, mean, p50, p90, p99, p99.9, max in ms.
fn latency_row(o: &mut String, label: &str, h: &hdrhistogram::Histogram<u64>) {
    let s = LatencySummary::of(h);
    let _ = writeln!(
        o,
        "<tr><td class=\"l\">{label}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        num(s.min, 3),
        num(s.mean, 3),
        num(s.p50, 3),
        num(s.p90, 3),
        num(s.p99, 3),
        num(s.p999, 3),
        num(s.max, 3)
    );
}

/// The HTML report of one `shootout load`.
pub fn render_load(spec: &LoadSpec, result: &RunResult) -> String {
    let r = result;
    let rate = matches!(spec.pace, Pace::Rate(_));
    let mut o = open_page(&format!("shootout load {}", spec.target.url));
    let _ = writeln!(
        o,
        "<h1>{} {}</h1>",
        html_text(&spec.request.method),
        html_text(&spec.target.url)
    );
    let _ = writeln!(
        o,
        "<p class=\"sub\">shootout load · started {}</p>",
        utc(r.started)
    );
    o.push_str("<dl class=\"facts\">\n");
    load_setting_facts(&mut o, spec, r);
    let counted = (
        crate::common::per_second(spec, r),
        crate::common::counted(spec, r),
    );
    load_outcome_facts(
        &mut o,
        r,
        counted,
        crate::common::counted_unit(spec, r).label(),
    );
    o.push_str("</dl>\n");
    load_warnings(&mut o, r);
    load_latency_table(&mut o, r, rate);
    load_kinds(&mut o, r);
    load_charts(&mut o, spec, r, rate);
    close_page(&mut o, "load");
    o
}

/// A load page's per-kind tables (a request list's entries, or a journey's steps and its
/// journeys: count, ok, failed, rate, latency percentiles) and, for a journey run, a
/// percentile chart per step and one of the journeys' durations.
fn load_kinds(o: &mut String, r: &RunResult) {
    use crate::kinds::{table, Kind};
    for (kind, stats) in Kind::of(r) {
        let _ = writeln!(o, "<h2>{}</h2>", html_text(kind.title()));
        table(kind, r, stats).html(o);
        if matches!(kind, Kind::Target | Kind::Busy) {
            continue;
        }
        o.push_str("<div class=\"charts\">\n");
        for (i, t) in stats.iter().enumerate() {
            let journey = kind == Kind::Journey;
            let line = Spectrum {
                name: if journey { "duration" } else { "latency" }.into(),
                color: svg::color(i),
                stroke: Stroke::Solid,
                hist: &t.latency,
                intervals: [None; 4],
            };
            match (journey, &t.busy) {
                (true, Some(busy)) => {
                    let less = Spectrum {
                        name: "less think time".into(),
                        color: line.color,
                        stroke: Stroke::Dashed,
                        hist: busy,
                        intervals: [None; 4],
                    };
                    kind_chart(o, journey, &t.label, &[line, less]);
                }
                _ => kind_chart(o, journey, &t.label, &[line]),
            }
        }
        o.push_str("</div>\n");
    }
}

/// The percentile chart of one journey step's latency (or one journey's duration), a
/// line each in `lines` (a load's one; a stored run's, one per contender).
fn kind_chart(o: &mut String, journey: bool, label: &str, lines: &[Spectrum]) {
    let title = if journey {
        format!("Journey {label}: duration percentiles")
    } else {
        format!("Step {label}: latency percentiles")
    };
    o.push_str(&charts::spectrum(&title, lines).svg());
    o.push('\n');
}

/// A contender's line on a stored run's chart of a journey step's latency (or a journey's
/// duration), and a dashed one of a journey's busy time when kept.
fn contender_lines<'a>(
    k: &'a shootout_analysis::journeys::Kind,
    w: &Who,
) -> impl Iterator<Item = Spectrum<'a>> {
    let line = |name: String, stroke, hist| Spectrum {
        name,
        color: w.color,
        stroke,
        hist,
        intervals: [None; 4],
    };
    let solid = line(w.name.to_string(), Stroke::Solid, &k.latency);
    let busy = k.busy.as_ref().map(|b| {
        let name = format!("{} less think time", w.name);
        line(name, Stroke::Dashed, b)
    });
    std::iter::once(solid).chain(busy)
}

/// A stored run's journeys in `workload`: per level, the table of every contender's
/// journeys and steps (the text and Markdown reports' table), the rankings, and a
/// percentile chart per journey and per step, a line per contender (its repetitions'
/// histograms merged; a dashed one of a journey's busy time, when kept).
fn journey_sections(o: &mut String, run: &StoredRun, workload: &str, who: &[Who]) {
    let blocks: Vec<_> = shootout_analysis::journeys::blocks(run)
        .into_iter()
        .filter(|b| b.workload == workload)
        .collect();
    for section in crate::shootout::journeys::sections(run, workload) {
        let _ = writeln!(o, "<h3>{}</h3>", html_text(&section.title));
        section.table.html(o);
        if !section.rankings.is_empty() {
            let _ = writeln!(
                o,
                "<p class=\"note\">{}:</p>\n<ul class=\"ranking\">",
                html_text(crate::shootout::journeys::RANKING_TITLE)
            );
            for r in &section.rankings {
                let _ = writeln!(o, "<li>{}</li>", html_text(r));
            }
            o.push_str("</ul>\n");
        }
        let at: Vec<_> = blocks.iter().filter(|b| section.level == b.level).collect();
        let Some(first) = at.first() else { continue };
        o.push_str("<div class=\"charts\">\n");
        for (journey, kinds) in [(true, &first.journeys), (false, &first.steps)] {
            for k in kinds.iter() {
                let lines: Vec<Spectrum> = at
                    .iter()
                    .filter_map(|b| {
                        let mine = if journey { &b.journeys } else { &b.steps };
                        Some((
                            mine.iter().find(|x| x.label == k.label)?,
                            who.get(b.contender)?,
                        ))
                    })
                    .flat_map(|(mine, w)| contender_lines(mine, w))
                    .collect();
                kind_chart(o, journey, &k.label, &lines);
            }
        }
        o.push_str("</div>\n");
    }
}

/// The facts of a load page that say what was asked (load, request bound, timeout) and
/// how long it ran.
fn load_setting_facts(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    let pace = match spec.pace {
        Pace::Closed => "closed loop (each connection sends when answered)".to_string(),
        // A gRPC run's schedule paces calls.
        Pace::Rate(rps) => format!(
            "open loop at {} {} (latency from each due time)",
            num(rps, 0),
            match crate::common::paced(spec) {
                "call" => "calls/s",
                _ => "req/s",
            }
        ),
    };
    let load = if spec.journey.is_some() {
        // Users and journeys, as the text report says them.
        html_text(&crate::text::load_line(spec))
    } else {
        format!(
            "{} connection{} on {} thread{}{}, {pace}{}; timeout {} per {}",
            spec.connections,
            if spec.connections == 1 { "" } else { "s" },
            spec.threads,
            if spec.threads == 1 { "" } else { "s" },
            if spec.request.keepalive {
                ""
            } else {
                " (Connection: close)"
            },
            spec.requests
                .map_or(String::new(), |n| format!(", up to {n} requests")),
            html_span(spec.timeout),
            crate::common::paced(spec)
        )
    };
    fact(o, "Load", &load);
    fact(
        o,
        "Ran",
        &format!("{} from {}", html_span(r.duration), utc(r.started)),
    );
}

/// The facts of a load page that say what came back: requests (under `label`: gRPC's
/// `Calls`, …), failures, status codes,
/// server, throughput (in `per_s`) and the generator's own cost (per `one`: request, or a
/// gRPC run's call, reply or message).
fn load_outcome_facts(o: &mut String, r: &RunResult, (per_s, one): (&str, &str), label: &str) {
    let c = &r.counts;
    fact(
        o,
        label,
        &format!(
            "{} completed: {} ok, {} failed, {} aborted (in flight at the end)",
            c.completed,
            c.ok,
            c.failed(),
            c.aborted
        ),
    );
    if c.failed() > 0 {
        fact(o, "Failures", &c.failures.to_string());
    }
    let codes: Vec<String> = c.status.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    fact(
        o,
        "Status codes",
        &if codes.is_empty() {
            "none".to_string()
        } else {
            codes.join(", ")
        },
    );
    if let Some(f) = &r.first_response {
        if let Some(server) = &f.server {
            fact(o, "Server", &html_text(server));
        }
    }
    fact(
        o,
        "Throughput",
        &format!(
            "{}, {}/s received",
            crate::common::throughput(r, per_s),
            mib_or_gib(if r.duration.is_zero() {
                0
            } else {
                (c.bytes_received as f64 / r.duration.as_secs_f64()) as u64
            })
        ),
    );
    if let Some(st) = r.stream.as_deref() {
        fact(o, "Unit", &html_text(words::stream_words(st.shape)));
    }
    fact(
        o,
        "Generator",
        &format!(
            "{} µs CPU per {one}, busiest thread {}% busy",
            num(r.cpu_us_per_request(), 1),
            num(r.generator.busiest_thread * 100.0, 0)
        ),
    );
    schedule_facts(o, r);
}

/// Rate mode: whether the schedule was kept (the analysis' certificate), how late the
/// sends went out, and the connections it used.
fn schedule_facts(o: &mut String, r: &RunResult) {
    use shootout_analysis::load_warnings::{certificate, NotKept};
    let (Some(s), Some(c)) = (&r.schedule, certificate(r)) else {
        return;
    };
    let verdict = match c.reason {
        None => "kept",
        Some(NotKept::Generator) => "not kept: the generator fell behind",
        Some(NotKept::Starved) => "not kept: the generator's threads waited for a CPU others held",
        Some(NotKept::ConnectionCap) => "not kept: the connection cap held sends back",
        Some(NotKept::Server) => "not kept: the server was slow to take connections",
    };
    fact(
        o,
        "Schedule",
        &format!(
            "{verdict}; {}% of sends within 1 ms of their due time, {}% of the rate sent",
            num(c.on_time * 100.0, 2),
            num(c.achieved_share * 100.0, 1)
        ),
    );
    fact(
        o,
        "Send lag",
        &format!(
            "p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms; {} connection{} (cap {}, {})",
            num(s.lag_p50_us as f64 / 1e3, 3),
            num(s.lag_p99_us as f64 / 1e3, 3),
            num(s.lag_p999_us as f64 / 1e3, 3),
            num(s.max_lag.as_secs_f64() * 1e3, 3),
            s.connections,
            if s.connections == 1 { "" } else { "s" },
            s.max_connections,
            if s.capped { "reached" } else { "not reached" }
        ),
    );
}

/// A load page's warnings section (or its "no warnings" line).
fn load_warnings(o: &mut String, r: &RunResult) {
    let mut items: Vec<String> = Vec::new();
    if r.interrupted {
        let sentence = crate::sentences::interrupted(&html_span(r.duration));
        items.push(format!("<li>{}</li>", sentence.html()));
    }
    for w in &r.warnings {
        items.push(format!("<li>{}</li>", html_text(&w.to_string())));
    }
    if items.is_empty() {
        o.push_str("<section class=\"ok\" id=\"warnings\">No warnings: the generator kept up and every request succeeded.</section>\n");
    } else {
        warnings_section(o, &items);
    }
}

/// A load page's latency table: corrected and raw rows for an open loop, one row else.
fn load_latency_table(o: &mut String, r: &RunResult, rate: bool) {
    o.push_str("<h2>Latency (ms)</h2>\n<div class=\"tw\"><table><tr><th class=\"l\"></th><th>min</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
    if rate {
        latency_row(o, "corrected", &r.histograms.latency);
        interval_row(o, r);
        latency_row(o, "raw", &r.histograms.latency_raw);
    } else {
        latency_row(o, "latency", &r.histograms.latency);
        interval_row(o, r);
    }
    o.push_str("</table></div>\n");
    if percentile_intervals(&r.histograms.latency, &r.series)
        .iter()
        .flatten()
        .any(|ci| ci.open_above)
    {
        let _ = writeln!(
            o,
            "<p class=\"note\">{}</p>",
            html_text(crate::ci::OPEN_NOTE)
        );
    }
    if rate {
        o.push_str("<p class=\"note\">corrected: from each request's due time; raw: from its actual send (the gap is time queued before sending).</p>\n");
    }
}

/// The row under a load page's (corrected) latency: each percentile's 95% interval,
/// blank under min, mean and max.
fn interval_row(o: &mut String, r: &RunResult) {
    let cells: Vec<String> = percentile_intervals(&r.histograms.latency, &r.series)
        .iter()
        .map(|ci| {
            ci.map_or("–".into(), |c| {
                html_text(&crate::ci::range_ms(
                    c.lo as f64 / 1e3,
                    c.hi as f64 / 1e3,
                    c.open_above,
                ))
            })
        })
        .collect();
    let _ = writeln!(
        o,
        "<tr class=\"ci\"><td class=\"l\">95% interval</td><td></td><td></td><td>{}</td><td></td></tr>",
        cells.join("</td><td>")
    );
}

/// A load page's charts: the latency spectrum, the sampled requests and the timelines
/// ([`load_timelines`]).
fn load_charts(o: &mut String, spec: &LoadSpec, r: &RunResult, rate: bool) {
    let target = Who::new(&spec.target.host_header, svg::color(0));
    let mut lines = vec![Spectrum {
        name: if rate {
            "corrected".into()
        } else {
            "latency".into()
        },
        color: svg::color(0),
        stroke: Stroke::Solid,
        hist: &r.histograms.latency,
        intervals: percentile_intervals(&r.histograms.latency, &r.series),
    }];
    if rate {
        lines.push(Spectrum {
            name: "raw".into(),
            color: svg::color(1),
            stroke: Stroke::Dashed,
            hist: &r.histograms.latency_raw,
            intervals: [None; 4],
        });
    }
    o.push_str("<div class=\"charts\">\n");
    let title = if rate {
        "Latency percentiles, corrected (solid) vs raw (dashed), with 95% intervals"
    } else {
        "Latency percentiles, with 95% intervals"
    };
    o.push_str(&charts::spectrum(title, &lines).svg());
    o.push('\n');
    o.push_str(
        &charts::scatter(
            "Sampled requests over time",
            &[(target, r.samples.as_slice())],
            r.duration.as_secs_f64(),
            rate,
        )
        .svg(),
    );
    o.push_str("\n</div>\n<h3>Timeline</h3>\n");
    load_timelines(o, r, crate::common::per_second(spec, r));
}

/// A load page's timelines: requests (and failures, when something failed) a second, in
/// `per_s` (`req/s`, or a gRPC run's `calls/s`, …), and latency per second, or a note when
/// the run was too short for a line.
fn load_timelines(o: &mut String, r: &RunResult, per_s: &str) {
    if charts::seconds_drawn(r) < 2 {
        let _ = writeln!(o, "<p class=\"note\">{TOO_SHORT}</p>");
        return;
    }
    o.push_str("<div class=\"charts\">\n");
    let mut requests = vec![(
        Who::new("completed", svg::color(0)),
        r,
        PerSecond::Throughput,
    )];
    if r.series.iter().any(|s| s.failed > 0) {
        requests.push((Who::new("failed", svg::color(4)), r, PerSecond::Failures));
    }
    // The load page has two timelines: they get the main charts' size.
    let main = |mut c: svg::Chart| {
        (c.width, c.height) = charts::MAIN;
        c.svg()
    };
    let title = match per_s {
        "calls/s" => "Calls per second",
        "replies/s" => "Replies per second",
        "messages/s" => "Messages per second",
        _ => "Requests per second",
    };
    o.push_str(&main(charts::per_second(title, &requests, per_s)));
    o.push('\n');
    let p50 = Who::new("p50", svg::color(0));
    let p99 = Who::new("p99", svg::color(1));
    o.push_str(&main(charts::per_second(
        "Latency per second",
        &[(p50, r, PerSecond::P50), (p99, r, PerSecond::P99)],
        per_s,
    )));
    o.push_str("\n</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_follow_the_civil_calendar() {
        // (seconds since the epoch, expected)
        let cases = [
            (0, "1970-01-01 00:00:00 UTC"),
            (1_700_000_000, "2023-11-14 22:13:20 UTC"),
            (951_782_400, "2000-02-29 00:00:00 UTC"), // a leap day of a century year
            (4_107_542_399, "2100-02-28 23:59:59 UTC"), // 2100 is not a leap year
        ];
        for (secs, want) in cases {
            assert_eq!(
                utc(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)),
                want
            );
        }
    }

    /// Many levels get a bounded number of small charts, spread over the sweep.
    #[test]
    fn percentile_charts_per_level_are_bounded_and_keep_both_ends() {
        let levels: Vec<u32> = (1..=20).collect();
        let shown = pick_evenly(&levels, MAX_LEVEL_SPECTRA);
        assert_eq!(shown.len(), MAX_LEVEL_SPECTRA);
        assert_eq!((shown[0], shown[MAX_LEVEL_SPECTRA - 1]), (1, 20));
        assert!(shown.windows(2).all(|w| w[0] < w[1]), "{shown:?}");
        assert_eq!(pick_evenly(&levels[..3], MAX_LEVEL_SPECTRA), [1, 2, 3]);
    }

    /// A load page gives each percentile's interval under the latency, marks an upper end
    /// past the answers `≥` with its note, and draws the intervals as error bars on the
    /// percentile chart (an open one with an arrowhead).
    #[test]
    fn a_load_page_gives_the_intervals_as_a_row_and_error_bars() {
        let (spec, r) = crate::fixtures::closed_with_failures();
        let cis = percentile_intervals(&r.histograms.latency, &r.series);
        assert!(cis[3].unwrap().open_above && !cis[0].unwrap().open_above);
        let page = render_load(&spec, &r);
        let p999 = cis[3].unwrap();
        let cell = html_text(&crate::ci::range_ms(
            p999.lo as f64 / 1e3,
            p999.hi as f64 / 1e3,
            true,
        ));
        assert!(page.contains("<td class=\"l\">95% interval</td>"), "{page}");
        assert!(page.contains(&format!("<td>{cell}</td>")), "{page}");
        assert!(page.contains(&html_text(crate::ci::OPEN_NOTE)));
        assert_eq!(
            page.matches("<g class=\"whiskers\"").count(),
            1,
            "one line has bars"
        );
        // The line stops at the percentile its count resolves: p99's bar is drawn.
        let p99 = cis[2].unwrap();
        let p99 = crate::ci::range_ms(p99.lo as f64 / 1e3, p99.hi as f64 / 1e3, false);
        assert!(
            page.contains(&format!(
                "latency · p99 95% interval: {} ms",
                html_text(&p99)
            )),
            "{page}"
        );
    }

    /// A rate run's page certifies its schedule and gives the send lag and connections.
    #[test]
    fn a_rate_page_says_whether_the_schedule_was_kept() {
        let (spec, r) = crate::fixtures::rate_mode();
        let page = render_load(&spec, &r);
        assert!(
            page.contains("not kept: the generator fell behind; 93.94% of sends within 1 ms"),
            "{page}"
        );
        assert!(page.contains("p50 0.040 ms, p99 3.100 ms, p99.9 9.800 ms, max 12.000 ms; 6 connections (cap 65000, not reached)"));
        let (spec, r) = crate::fixtures::closed_with_failures();
        assert!(!render_load(&spec, &r).contains("Send lag"));
    }

    /// A streaming run's page says what its counts count, in their rate's unit too.
    #[test]
    fn a_streaming_page_names_its_unit() {
        let (spec, r) = crate::fixtures::bidi_rate();
        let page = render_load(&spec, &r);
        assert!(
            page.contains(
                "<dt>Unit</dt><dd>gRPC bidi streaming: a message and its reply count as one</dd>"
            ),
            "{page}"
        );
        assert!(
            page.contains("492.50 messages/s ok (good answers only)"),
            "{page}"
        );
        // Its timeline and generator say messages, not requests.
        assert!(
            page.contains("Messages per second") && page.contains("µs CPU per message"),
            "{page}"
        );
        let (spec, r) = crate::fixtures::closed_with_failures();
        let page = render_load(&spec, &r);
        assert!(
            !page.contains("<dt>Unit</dt>") && page.contains(" req/s ok "),
            "{page}"
        );
    }
}
