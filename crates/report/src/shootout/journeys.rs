//! The journeys part of a stored run's report, built once for text and Markdown: per
//! workload and load level that ran journeys, one table of every contender's journeys and
//! steps (counts of all repetitions, good ones per second as the median over repetitions,
//! latency percentiles of the repetitions' merged histograms, in ms) and one ranking line
//! per journey, contenders ordered by good journeys per second. Where every journey of a
//! contender's steps has its busy time (its duration less its think times), a `busy` row
//! per journey gives its percentiles (a run stored before it was measured has none).

use crate::grid::{Align, Table};
use crate::units::{json_ms as ms, round};
use serde_json::{json, Value};
use shootout_analysis::journeys::{blocks, rankings, Block, JourneyRanking, Kind};
use shootout_model::stored::StoredRun;
use shootout_model::{LatencySummary, LoadLevel};

/// One workload × level's journeys.
pub(crate) struct Section {
    /// `Journeys and steps at c=8 (every repetition merged)`.
    pub title: String,
    /// Its load level.
    pub level: LoadLevel,
    /// Contender, journey or step, counts, rate, latency.
    pub table: Table,
    /// `writer: nginx 120.3/s, gunicorn 80.1/s (1.50× fewer)`, one per journey run by two
    /// contenders or more.
    pub rankings: Vec<String>,
}

/// The sections of `workload`, in the order its levels were measured; none when it ran no
/// journeys.
pub(crate) fn sections(run: &StoredRun, workload: &str) -> Vec<Section> {
    let all: Vec<Block> = blocks(run)
        .into_iter()
        .filter(|b| b.workload == workload)
        .collect();
    let mut levels: Vec<LoadLevel> = Vec::new();
    for b in &all {
        if !levels.contains(&b.level) {
            levels.push(b.level);
        }
    }
    let ranked = rankings(&all);
    let name = |i: usize| run.contenders[i].name.as_str();
    levels
        .into_iter()
        .map(|level| {
            let at: Vec<&Block> = all.iter().filter(|b| b.level == level).collect();
            let busy = at
                .iter()
                .any(|b| b.journeys.iter().any(|k| k.busy.is_some()));
            Section {
                level,
                title: format!(
                    "Journeys and steps at {level} (every repetition merged{})",
                    if busy { BUSY_NOTE } else { "" }
                ),
                table: table(&at, name),
                rankings: ranked
                    .iter()
                    .filter(|r| r.level == level)
                    .map(|r| ranking_line(r, name))
                    .collect(),
            }
        })
        .collect()
}

/// The table of one level's blocks: per contender its journeys, their busy times when
/// kept, then its journey steps.
fn table<'a>(at: &[&Block], name: impl Fn(usize) -> &'a str) -> Table {
    let mut rows = Vec::new();
    for b in at {
        let who = name(b.contender);
        rows.extend(b.journeys.iter().map(|k| row(who, "journey", k)));
        for k in &b.journeys {
            if let Some(busy) = k.busy_summary() {
                rows.push(row_of(who, BUSY, k, busy));
            }
        }
        rows.extend(b.steps.iter().map(|k| row(who, "step", k)));
    }
    let header = [
        "contender",
        "",
        "name",
        "count",
        "ok",
        "failed",
        "why",
        "ok/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
    ];
    let mut align = vec![Align::Left; 3];
    align.resize(header.len(), Align::Right);
    align[6] = Align::Left;
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        align,
        rows,
    }
}

/// `writer: nginx 120.30/s, gunicorn 80.10/s (1.50× fewer)`.
fn ranking_line<'a>(r: &JourneyRanking, name: impl Fn(usize) -> &'a str) -> String {
    let best = r.order.first().map_or(0.0, |(_, v)| *v);
    let parts: Vec<String> = r
        .order
        .iter()
        .enumerate()
        .map(|(i, (c, v))| {
            if i == 0 || *v <= 0.0 {
                format!("{} {v:.2}/s", name(*c))
            } else {
                format!("{} {v:.2}/s ({:.2}× fewer)", name(*c), best / v)
            }
        })
        .collect();
    format!("{}: {}", r.journey, parts.join(", "))
}

/// What a journey's busy-time row says it is, and what the title says of it.
const BUSY: &str = "busy";
const BUSY_NOTE: &str = "; busy: a journey's duration less its think times";

fn row(contender: &str, what: &str, k: &Kind) -> Vec<String> {
    row_of(contender, what, k, k.summary())
}

/// A row of `k`'s counts with the percentiles of `l` (its latency, or a journey's busy
/// time).
fn row_of(contender: &str, what: &str, k: &Kind, l: LatencySummary) -> Vec<String> {
    let mut cells = vec![
        contender.to_string(),
        what.to_string(),
        k.label.clone(),
        k.completed.to_string(),
        k.ok.to_string(),
        k.failed().to_string(),
        crate::kinds::why(k.failed(), &k.failures, k.unsent),
        format!("{:.2}", k.ok_rate()),
    ];
    cells.extend(
        [l.p50, l.p90, l.p99, l.max]
            .iter()
            .map(|ms| format!("{ms:.3}")),
    );
    cells
}

/// The legend under the rankings.
pub(crate) const RANKING_TITLE: &str =
    "Ranked by good journeys per second (median over repetitions)";

/// The report's `journeys` (JSON): per workload × level × contender that ran journeys,
/// every journey step's and journey's counts of all repetitions, failures by class, good
/// ones per second (median over repetitions) and latency of the merged histograms (ms);
/// and `journey_rankings`: per journey run by two contenders or more, the contenders by
/// good journeys per second.
pub(crate) fn json(run: &StoredRun) -> (Value, Value) {
    let all = blocks(run);
    let name = |i: usize| run.contenders[i].name.as_str();
    let kinds = |kinds: &[Kind]| -> Vec<Value> { kinds.iter().map(kind_json).collect() };
    let blocks: Vec<Value> = all
        .iter()
        .map(|b| {
            json!({
                "workload": b.workload,
                "level": crate::json::load_level_json(b.level),
                "contender": name(b.contender),
                "repetitions": b.repetitions,
                "steps": kinds(&b.steps),
                "journeys": kinds(&b.journeys),
            })
        })
        .collect();
    let ranked: Vec<Value> = rankings(&all)
        .iter()
        .map(|r| {
            json!({
                "workload": r.workload,
                "level": crate::json::load_level_json(r.level),
                "journey": r.journey,
                "order": r.order.iter().map(|(c, v)| json!({
                    "contender": name(*c),
                    "ok_per_s": round(*v, 3),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    (Value::Array(blocks), Value::Array(ranked))
}

/// One step's or journey's counts and latency over a cell's repetitions, and a journey's
/// busy time when kept.
fn kind_json(k: &Kind) -> Value {
    let l = k.summary();
    let mut v = json!({
        "name": k.label,
        "count": k.completed,
        "ok": k.ok,
        "failed": k.failed(),
        "failures": crate::json::failures_json(&k.failures),
        "unsent": k.unsent,
        "ok_per_s": round(k.ok_rate(), 3),
        "latency_ms": {
            "p50": ms(l.p50),
            "p90": ms(l.p90),
            "p99": ms(l.p99),
            "max": ms(l.max),
        },
    });
    if let Some(b) = k.busy_summary() {
        v["duration_less_think_ms"] = json!({
            "p50": ms(b.p50),
            "p90": ms(b.p90),
            "p99": ms(b.p99),
            "max": ms(b.max),
        });
    }
    v
}
