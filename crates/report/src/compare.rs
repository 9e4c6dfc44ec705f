//! `shootout compare A B`: what changed between two stored runs. Steps are paired by
//! contender name × workload × load level; for each pair the median req/s and median p99 of
//! run A and run B, the change, and a verdict from a two-sided Mann–Whitney U test of the
//! per-repetition values ([`crate::mann_whitney`], α = [`ALPHA`]): faster, slower, no
//! significant change (noise), or not enough repetitions to tell.
//!
//! Gates for CI ([`Gates`]): `--fail-if-slower PCT` flags a pair whose median req/s dropped
//! by more than PCT percent when the drop is significant — or when the repetitions are too
//! few for the test to ever be significant, since then no test can clear it — and a contender
//! measured in A that failed in B (crashed, failed verification, …); `--fail-if-p99-above MS`
//! flags every contender × workload × level of run B whose median p99 is above MS.
//!
//! Renderings: text, Markdown, JSON (schema in `docs/report-json.md`), CSV (one record per
//! pair). Like the run reports, everything is computed from two [`StoredRun`]s only.

use crate::grid::{
    csv_record, markdown_table, md_escape, round, signed_percent, text_table, utc_seconds, Align,
};
use crate::mann_whitney;
use crate::safe::{csv_text, terminal_line};
use crate::shootout::analysis::{cell_label, median, Analysis, Cell};
use crate::shootout::RunFormat;
use serde_json::{json, Value};
use shootout_model::stored::StoredRun;
use shootout_model::{ContenderStatus, LoadLevel, RunStatus};
use std::fmt::Write;

/// The significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// What makes `shootout compare` fail (exit 1); `None` turns a gate off.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gates {
    /// Fail when a pair's median req/s dropped by more than this percentage (and the drop
    /// is significant, or the repetitions are too few to test).
    pub fail_if_slower_percent: Option<f64>,
    /// Fail when a median p99 of run B is above this many milliseconds.
    pub fail_if_p99_above_ms: Option<f64>,
}

/// The verdict on one measure of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significantly better in B (more req/s, or a lower p99).
    Faster,
    /// Significantly worse in B.
    Slower,
    /// The difference is within the noise of the repetitions.
    NoChange,
    /// So few repetitions that no outcome could be significant at [`ALPHA`].
    TooFew,
}

impl Verdict {
    /// The word in JSON and CSV.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no_significant_change",
            Verdict::TooFew => "not_enough_repetitions",
        }
    }
}

/// One measure (req/s or p99) of a pair in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Median over run A's repetitions.
    pub a: f64,
    /// Median over run B's repetitions.
    pub b: f64,
    /// `(b − a) / a` in percent; `None` when `a` is 0.
    pub percent: Option<f64>,
    /// The test's two-sided p-value.
    pub p: f64,
    /// What the test says.
    pub verdict: Verdict,
}

impl Change {
    /// Compares per-repetition values; `higher_is_better` for req/s, not for latency.
    fn of(a: &[f64], b: &[f64], higher_is_better: bool) -> Change {
        let (ma, mb) = (median(a), median(b));
        let test = mann_whitney::test(a, b);
        let p = test.map_or(1.0, |t| t.p);
        let verdict = match test {
            _ if !mann_whitney::can_be_significant(a.len(), b.len(), ALPHA) => Verdict::TooFew,
            Some(t) if t.p < ALPHA => {
                if t.b_larger() == higher_is_better {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            }
            _ => Verdict::NoChange,
        };
        Change {
            a: ma,
            b: mb,
            percent: (ma > 0.0).then(|| (mb - ma) / ma * 100.0),
            p,
            verdict,
        }
    }

    /// `slower (p=0.029)`, `no significant change (p=0.69)`, `not enough repetitions`.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            Verdict::Faster => format!("faster (p={})", p_text(self.p)),
            Verdict::Slower => format!("slower (p={})", p_text(self.p)),
            Verdict::NoChange => format!("no significant change (p={})", p_text(self.p)),
            Verdict::TooFew => "not enough repetitions".into(),
        }
    }
}

/// A p-value with two significant digits: `0.029`, `0.69`, `1`.
fn p_text(p: f64) -> String {
    if p >= 0.995 {
        "1".into()
    } else if p >= 0.1 {
        format!("{p:.2}")
    } else if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// The same contender × workload × load level in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The workload's name.
    pub workload: String,
    /// The contender's name.
    pub contender: String,
    /// The load level.
    pub level: LoadLevel,
    /// Repetitions in run A.
    pub reps_a: usize,
    /// Repetitions in run B.
    pub reps_b: usize,
    /// Median req/s.
    pub rps: Change,
    /// Median p99 latency (ms).
    pub p99: Change,
}

impl Pair {
    fn label(&self) -> String {
        cell_label(&self.contender, &self.workload, self.level)
    }
}

/// A contender × workload × load level measured in one run only.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpaired {
    /// The workload's name.
    pub workload: String,
    /// The contender's name.
    pub contender: String,
    /// The load level.
    pub level: LoadLevel,
    /// What became of the contender in the other run, when it is there but failed.
    pub failed_in_other: Option<String>,
}

/// A gate that did not pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// `slower`, `not_measured` or `p99_above`.
    pub kind: &'static str,
    /// One line for humans.
    pub message: String,
}

/// Two runs compared.
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    /// Run A (the reference).
    pub a: &'a StoredRun,
    /// Run B (the candidate).
    pub b: &'a StoredRun,
    /// The pairs, in run A's order.
    pub pairs: Vec<Pair>,
    /// Measured in A only.
    pub only_in_a: Vec<Unpaired>,
    /// Measured in B only.
    pub only_in_b: Vec<Unpaired>,
    /// What the reader must know (different machines, unfinished runs, new failures).
    pub warnings: Vec<String>,
    /// The gates asked for.
    pub gates: Gates,
    /// The gates that failed (empty: passed).
    pub violations: Vec<Violation>,
    /// The most repetitions of any cell of A, and of B.
    pub reps: (usize, usize),
}

impl<'a> Comparison<'a> {
    /// Pairs the steps of `a` and `b`, tests every pair and checks the gates.
    pub fn of(a: &'a StoredRun, b: &'a StoredRun, gates: Gates) -> Comparison<'a> {
        let (aa, ab) = (Analysis::of(a), Analysis::of(b));
        let failed_in = |run: &StoredRun, name: &str| {
            run.contenders
                .iter()
                .find(|c| c.name == name)
                .filter(|c| {
                    !matches!(
                        c.status,
                        ContenderStatus::Measured | ContenderStatus::Skipped
                    )
                })
                .map(|c| {
                    // The first line says what happened; the stderr lines after it would not fit.
                    let first = c.detail.lines().next().unwrap_or("").trim();
                    let first = first
                        .trim_end_matches(':')
                        .trim_end_matches("; last lines of its stderr");
                    let status = c.status.as_str().replace('_', " ");
                    if first.is_empty() {
                        status
                    } else {
                        format!("{status}: {first}")
                    }
                })
        };
        let mut pairs = Vec::new();
        let mut only_in_a = Vec::new();
        let mut warnings = Vec::new();
        for (w, l, ca) in aa.cells() {
            let name = aa.name(ca.contender);
            match find(&ab, name, w, l) {
                Some(cb) => {
                    if cb.failures.total() > ca.failures.total() {
                        warnings.push(format!(
                            "failures: {}: {} failed requests in run {} ({}), {} in run {}",
                            cell_label(name, w, l),
                            cb.failures.total(),
                            b.run.id,
                            cb.failures,
                            ca.failures.total(),
                            a.run.id
                        ));
                    }
                    pairs.push(pair(name, w, l, ca, cb));
                }
                None => only_in_a.push(Unpaired {
                    workload: w.to_string(),
                    contender: name.to_string(),
                    level: l,
                    failed_in_other: failed_in(b, name),
                }),
            }
        }
        let only_in_b: Vec<Unpaired> = ab
            .cells()
            .filter(|(w, l, cb)| find(&aa, ab.name(cb.contender), w, *l).is_none())
            .map(|(w, l, cb)| Unpaired {
                workload: w.to_string(),
                contender: ab.name(cb.contender).to_string(),
                level: l,
                failed_in_other: failed_in(a, ab.name(cb.contender)),
            })
            .collect();
        let (ma, mb) = (&a.run.machine, &b.run.machine);
        if (&ma.cpu_model, ma.cores, &ma.kernel, ma.memory_bytes)
            != (&mb.cpu_model, mb.cores, &mb.kernel, mb.memory_bytes)
        {
            warnings.insert(
                0,
                format!(
                    "the runs were made on different machines (run {}: {}; run {}: {}): part of any difference may be the machine's",
                    a.run.id,
                    crate::shootout::machine_line(a),
                    b.run.id,
                    crate::shootout::machine_line(b)
                ),
            );
        }
        for (run, label) in [(b, "B"), (a, "A")] {
            if run.run.status != RunStatus::Complete {
                warnings.insert(
                    0,
                    format!(
                        "run {} ({label}) is {}: only the steps it stored are compared",
                        run.run.id,
                        run.run.status.as_str()
                    ),
                );
            }
        }
        let mut c = Comparison {
            a,
            b,
            pairs,
            only_in_a,
            only_in_b,
            warnings,
            gates,
            violations: Vec::new(),
            reps: (aa.max_reps(), ab.max_reps()),
        };
        c.violations = c.check(&ab);
        c
    }

    /// True when a gate failed.
    pub fn failed(&self) -> bool {
        !self.violations.is_empty()
    }

    fn check(&self, ab: &Analysis) -> Vec<Violation> {
        let mut out = Vec::new();
        let (ida, idb) = (self.a.run.id, self.b.run.id);
        if let Some(limit) = self.gates.fail_if_slower_percent {
            for p in &self.pairs {
                let Some(change) = p.rps.percent else {
                    continue;
                };
                let drop = -change;
                if drop <= limit {
                    continue;
                }
                let why = match p.rps.verdict {
                    Verdict::Slower => format!("p={}", p_text(p.rps.p)),
                    Verdict::TooFew if p.reps_a.min(p.reps_b) == 1 => {
                        "not tested: one repetition".to_string()
                    }
                    Verdict::TooFew => format!(
                        "not tested: {} and {} repetitions are too few",
                        p.reps_a, p.reps_b
                    ),
                    Verdict::Faster | Verdict::NoChange => continue,
                };
                out.push(Violation {
                    kind: "slower",
                    message: format!(
                        "{}: req/s {:.0} → {:.0}, {} ({why})",
                        p.label(),
                        p.rps.a,
                        p.rps.b,
                        signed_percent(change)
                    ),
                });
            }
            for u in &self.only_in_a {
                if let Some(why) = &u.failed_in_other {
                    out.push(Violation {
                        kind: "not_measured",
                        message: format!(
                            "{}: measured in run {ida}, not in run {idb} ({why})",
                            cell_label(&u.contender, &u.workload, u.level)
                        ),
                    });
                }
            }
        }
        if let Some(limit) = self.gates.fail_if_p99_above_ms {
            for (w, l, c) in ab.cells() {
                if c.p99 > limit {
                    out.push(Violation {
                        kind: "p99_above",
                        message: format!(
                            "{}: p99 {:.3} ms in run {idb} (median of {}) is above {} ms",
                            cell_label(ab.name(c.contender), w, l),
                            c.p99,
                            crate::grid::plural(c.reps(), "repetition", "repetitions"),
                            limit
                        ),
                    });
                }
            }
        }
        out
    }

    /// What the gates asked for, as on the command line: `--fail-if-slower 5%`, ….
    pub fn gates_text(&self) -> Vec<String> {
        let mut g = Vec::new();
        if let Some(p) = self.gates.fail_if_slower_percent {
            g.push(format!("--fail-if-slower {p}%"));
        }
        if let Some(ms) = self.gates.fail_if_p99_above_ms {
            g.push(format!("--fail-if-p99-above {ms}"));
        }
        g
    }
}

/// The cell of contender `name` × workload `w` × level `l`, if measured.
fn find<'x>(an: &'x Analysis, name: &str, w: &str, l: LoadLevel) -> Option<&'x Cell<'x>> {
    an.cells()
        .find(|(cw, cl, c)| *cw == w && *cl == l && an.name(c.contender) == name)
        .map(|(_, _, c)| c)
}

fn pair(name: &str, w: &str, l: LoadLevel, a: &Cell, b: &Cell) -> Pair {
    Pair {
        workload: w.to_string(),
        contender: name.to_string(),
        level: l,
        reps_a: a.reps(),
        reps_b: b.reps(),
        rps: Change::of(&a.rps_values, &b.rps_values, true),
        p99: Change::of(&a.p99_values, &b.p99_values, false),
    }
}

/// The explanation printed under every comparison.
const FOOTNOTE: [&str; 3] = [
    "A and B are medians over the repetitions. Verdicts come from a two-sided Mann–Whitney U test of the per-repetition values at α = 0.05;",
    "it needs at least 4 repetitions on each side (or 3 and 5, 2 and 8) before any change can be significant: fewer say \"not enough repetitions\".",
    "For p99, lower is faster.",
];

/// Renders a comparison in `format`; the text ends with a newline.
pub fn render(format: RunFormat, c: &Comparison) -> String {
    match format {
        RunFormat::Text => text(c),
        RunFormat::Markdown => markdown(c),
        RunFormat::Json => {
            let mut s = serde_json::to_string_pretty(&json(c))
                .expect("a serde_json::Value always serializes");
            s.push('\n');
            s
        }
        RunFormat::Csv => csv(c),
    }
}

/// `run 1: demo, 2023-11-14 22:13:20 UTC, complete, up to 4 repetitions`.
fn run_line(run: &StoredRun, reps: usize) -> String {
    format!(
        "run {}: {}, {}, {}, {}",
        run.run.id,
        run.run.name,
        utc_seconds(run.run.started),
        run.run.status.as_str(),
        crate::grid::plural(reps, "repetition", "repetitions")
    )
}

const HEADER: [&str; 10] = [
    "contender",
    "level",
    "A req/s",
    "B req/s",
    "change",
    "verdict",
    "A p99 ms",
    "B p99 ms",
    "change",
    "verdict",
];

const ALIGN: [Align; 10] = [
    Align::Left,
    Align::Left,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Left,
    Align::Right,
    Align::Right,
    Align::Right,
    Align::Left,
];

fn percent_cell(p: Option<f64>) -> String {
    p.map_or("–".into(), signed_percent)
}

fn row(p: &Pair) -> Vec<String> {
    vec![
        p.contender.clone(),
        p.level.to_string(),
        format!("{:.0}", p.rps.a),
        format!("{:.0}", p.rps.b),
        percent_cell(p.rps.percent),
        p.rps.verdict_text(),
        format!("{:.3}", p.p99.a),
        format!("{:.3}", p.p99.b),
        percent_cell(p.p99.percent),
        p.p99.verdict_text(),
    ]
}

/// The pairs grouped by workload, in order.
fn by_workload<'c>(c: &'c Comparison) -> Vec<(&'c str, Vec<&'c Pair>)> {
    let mut out: Vec<(&str, Vec<&Pair>)> = Vec::new();
    for p in &c.pairs {
        match out.iter_mut().find(|(w, _)| *w == p.workload) {
            Some((_, v)) => v.push(p),
            None => out.push((&p.workload, vec![p])),
        }
    }
    out
}

fn unpaired_line(u: &Unpaired, other: &StoredRun) -> String {
    let label = cell_label(&u.contender, &u.workload, u.level);
    match &u.failed_in_other {
        Some(why) => format!("{label} (run {}: {why})", other.run.id),
        None => label,
    }
}

fn text(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Comparing run {} (A) with run {} (B)",
        c.a.run.id, c.b.run.id
    );
    let _ = writeln!(o, "  A  {}", terminal_line(&run_line(c.a, c.reps.0)));
    let _ = writeln!(o, "  B  {}", terminal_line(&run_line(c.b, c.reps.1)));
    if !c.warnings.is_empty() {
        o.push_str("\nWarnings:\n");
        for w in &c.warnings {
            let _ = writeln!(o, "  - {}", terminal_line(w));
        }
    }
    for (w, pairs) in by_workload(c) {
        let _ = writeln!(o, "\n{}", terminal_line(w));
        let rows: Vec<Vec<String>> = pairs.iter().map(|p| row(p)).collect();
        text_table(&mut o, "  ", &HEADER, &ALIGN, &rows);
    }
    if c.pairs.is_empty() {
        o.push_str("\nNo contender × workload × load level was measured in both runs.\n");
    }
    for (list, run, other) in [(&c.only_in_a, c.a, c.b), (&c.only_in_b, c.b, c.a)] {
        if !list.is_empty() {
            let _ = writeln!(o, "\nOnly in run {}:", run.run.id);
            for u in list {
                let _ = writeln!(o, "  - {}", terminal_line(&unpaired_line(u, other)));
            }
        }
    }
    o.push('\n');
    for f in FOOTNOTE {
        let _ = writeln!(o, "{f}");
    }
    o
}

fn markdown(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Comparison: run {} (A) → run {} (B)\n",
        c.a.run.id, c.b.run.id
    );
    let _ = writeln!(o, "- **A:** {}", md_escape(&run_line(c.a, c.reps.0)));
    let _ = writeln!(o, "- **B:** {}", md_escape(&run_line(c.b, c.reps.1)));
    if !c.warnings.is_empty() {
        o.push_str("\n## Warnings\n\n");
        for w in &c.warnings {
            let _ = writeln!(o, "- {}", md_escape(w));
        }
    }
    for (w, pairs) in by_workload(c) {
        let _ = writeln!(o, "\n## {}\n", md_escape(w));
        let rows: Vec<Vec<String>> = pairs.iter().map(|p| row(p)).collect();
        markdown_table(&mut o, &HEADER, &ALIGN, &rows);
    }
    if c.pairs.is_empty() {
        o.push_str("\nNo contender × workload × load level was measured in both runs.\n");
    }
    for (list, run, other) in [(&c.only_in_a, c.a, c.b), (&c.only_in_b, c.b, c.a)] {
        if !list.is_empty() {
            let _ = writeln!(o, "\n## Only in run {}\n", run.run.id);
            for u in list {
                let _ = writeln!(o, "- {}", md_escape(&unpaired_line(u, other)));
            }
        }
    }
    let gates = c.gates_text();
    if !gates.is_empty() {
        let _ = writeln!(o, "\n## Gates: {}\n", md_escape(&gates.join(" ")));
        if c.violations.is_empty() {
            o.push_str("Passed.\n");
        } else {
            for v in &c.violations {
                let _ = writeln!(o, "- **failed:** {}", md_escape(&v.message));
            }
        }
    }
    o.push_str("\n---\n\n");
    let _ = writeln!(o, "{}", md_escape(&FOOTNOTE.join(" ")));
    o
}

fn change_json(ch: &Change, decimals: i32) -> Value {
    json!({
        "a": round(ch.a, decimals),
        "b": round(ch.b, decimals),
        "change_percent": ch.percent.map(|p| round(p, 3)),
        "p_value": round(ch.p, 6),
        "verdict": ch.verdict.word(),
    })
}

fn run_json(run: &StoredRun, reps: usize) -> Value {
    json!({
        "id": run.run.id.0,
        "name": run.run.name,
        "status": run.run.status.as_str(),
        "started_utc": crate::units::rfc3339(run.run.started),
        "repetitions": reps,
    })
}

fn unpaired_json(u: &Unpaired) -> Value {
    json!({
        "workload": u.workload,
        "contender": u.contender,
        "level": crate::shootout::json::level_json(u.level),
        "failed_in_other_run": u.failed_in_other,
    })
}

/// The comparison as one JSON document (schema in `docs/report-json.md`).
pub fn json(c: &Comparison) -> Value {
    json!({
        "schema_version": crate::shootout::SCHEMA_VERSION,
        "a": run_json(c.a, c.reps.0),
        "b": run_json(c.b, c.reps.1),
        "test": "mann-whitney-u-two-sided",
        "alpha": ALPHA,
        "pairs": c.pairs.iter().map(|p| json!({
            "workload": p.workload,
            "contender": p.contender,
            "level": crate::shootout::json::level_json(p.level),
            "repetitions": { "a": p.reps_a, "b": p.reps_b },
            "rps": change_json(&p.rps, 3),
            "p99_ms": change_json(&p.p99, 3),
        })).collect::<Vec<_>>(),
        "only_in_a": c.only_in_a.iter().map(unpaired_json).collect::<Vec<_>>(),
        "only_in_b": c.only_in_b.iter().map(unpaired_json).collect::<Vec<_>>(),
        "warnings": c.warnings,
        "gates": {
            "fail_if_slower_percent": c.gates.fail_if_slower_percent,
            "fail_if_p99_above_ms": c.gates.fail_if_p99_above_ms,
            "passed": !c.failed(),
            "violations": c.violations.iter().map(|v| json!({
                "kind": v.kind,
                "message": v.message,
            })).collect::<Vec<_>>(),
        },
    })
}

/// The columns of the comparison's CSV.
pub const CSV_COLUMNS: [&str; 17] = [
    "workload",
    "contender",
    "level_kind",
    "connections",
    "rate_rps",
    "repetitions_a",
    "repetitions_b",
    "rps_a",
    "rps_b",
    "rps_change_percent",
    "rps_p_value",
    "rps_verdict",
    "p99_ms_a",
    "p99_ms_b",
    "p99_change_percent",
    "p99_p_value",
    "p99_verdict",
];

fn csv(c: &Comparison) -> String {
    let mut o = String::new();
    csv_record(
        &mut o,
        &CSV_COLUMNS
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
    );
    let opt = |p: Option<f64>| p.map_or(String::new(), |v| format!("{v:.3}"));
    for p in &c.pairs {
        let (kind, conns, rate) = match p.level {
            LoadLevel::Concurrency { connections } => ("concurrency", connections, String::new()),
            LoadLevel::Rate { rps, connections } => ("rate", connections, format!("{rps}")),
        };
        csv_record(
            &mut o,
            &[
                csv_text(&p.workload).into_owned(),
                csv_text(&p.contender).into_owned(),
                kind.into(),
                conns.to_string(),
                rate,
                p.reps_a.to_string(),
                p.reps_b.to_string(),
                format!("{:.3}", p.rps.a),
                format!("{:.3}", p.rps.b),
                opt(p.rps.percent),
                format!("{:.6}", p.rps.p),
                p.rps.verdict.word().into(),
                format!("{:.3}", p.p99.a),
                format!("{:.3}", p.p99.b),
                opt(p.p99.percent),
                format!("{:.6}", p.p99.p),
                p.p99.verdict.word().into(),
            ],
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_test_and_the_direction() {
        let a = [1000.0, 1010.0, 990.0, 1005.0];
        let slower = [800.0, 810.0, 790.0, 805.0];
        let c = Change::of(&a, &slower, true);
        assert_eq!(c.verdict, Verdict::Slower);
        assert!((c.percent.unwrap() + 20.0).abs() < 0.5);
        // For latency, larger in B is slower.
        assert_eq!(Change::of(&slower, &a, false).verdict, Verdict::Slower);
        assert_eq!(Change::of(&a, &slower, false).verdict, Verdict::Faster);
        assert_eq!(Change::of(&a, &a, true).verdict, Verdict::NoChange);
        assert_eq!(
            Change::of(&a[..1], &slower[..1], true).verdict,
            Verdict::TooFew
        );
        assert_eq!(
            Change::of(&a[..3], &slower[..3], true).verdict,
            Verdict::TooFew
        );
        let mixed = [1001.0, 995.0, 1012.0, 998.0];
        assert_eq!(Change::of(&a, &mixed, true).verdict, Verdict::NoChange);
    }

    #[test]
    fn p_values_print_with_two_significant_digits() {
        assert_eq!(p_text(1.0), "1");
        assert_eq!(p_text(0.6857), "0.69");
        assert_eq!(p_text(2.0 / 70.0), "0.029");
        assert_eq!(p_text(0.00001), "1.0e-5");
    }
}
