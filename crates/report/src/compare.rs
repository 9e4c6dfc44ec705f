//! The renderings of `shootout compare A B`: text, Markdown, JSON (schema in
//! `docs/report-json.md`) and CSV (one record per pair), and the words of the comparison's
//! verdicts, warnings and failed gates. What is compared — pairs of contender × workload ×
//! load level, their changes, the Mann–Whitney verdicts at α = [`ALPHA`] and the gates
//! ([`Gates`]) — is computed in `shootout-analysis` ([`Comparison::of`], re-exported here)
//! from two [`StoredRun`]s only; this module lays it out.

use crate::grid::{at_label, cell_label};
use crate::grid::{csv_record, md_escape, plural, signed_percent, utc_seconds, Align};
use crate::safe::{csv_text, terminal_line};
use crate::shootout::RunFormat;
use crate::units::round;
use serde_json::{json, Value};
use shootout_model::stored::StoredRun;
use shootout_model::LoadLevel;
use std::fmt::Write;

use shootout_analysis::compare::CapacityChange;
use shootout_analysis::ranking::{Stability, Swap};
use shootout_analysis::Unit;
use shootout_model::find_max::EndRule;

pub use shootout_analysis::compare::{
    Change, ChangeVerdict, CompareWarning, Comparison, FailedIn, Gates, Pair, Unpaired, Violation,
    ALPHA,
};

/// `slower (p=0.029)`, `1.25 times slower (1.21–1.30, p=0.029)` when the change has an
/// interval (95%), `no significant change (p=0.69)`, `too little evidence`.
pub fn verdict_text(c: &Change) -> String {
    let word = match c.verdict {
        ChangeVerdict::Faster => "faster",
        ChangeVerdict::Slower => "slower",
        ChangeVerdict::NoChange => return format!("no significant change (p={})", p_text(c.p)),
        ChangeVerdict::TooFew => return "too little evidence".into(),
    };
    match c.interval.filter(|(r, lo, _)| *r > 0.0 && *lo > 0.0) {
        Some((r, lo, hi)) => {
            let (times, interval) = crate::shootout::words::oriented_ratio(r, lo, hi);
            format!("{times} ({interval}, p={})", p_text(c.p))
        }
        None => format!("{word} (p={})", p_text(c.p)),
    }
}

/// Why a pair could not be tested: `one repetition of 3 s`, `2 and 2 repetitions`.
fn untested_why(p: &Pair) -> String {
    if p.reps_a.min(p.reps_b) == 1 {
        "one repetition, too short for its seconds to tell".to_string()
    } else {
        format!(
            "{} and {} repetitions, too short for their seconds to tell",
            p.reps_a, p.reps_b
        )
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

/// What the gates asked for, as on the command line: `--fail-if-slower 5%`, ….
pub fn gates_text(gates: &Gates) -> Vec<String> {
    let mut g = Vec::new();
    if let Some(p) = gates.fail_if_slower_percent {
        g.push(format!("--fail-if-slower {p}%"));
    }
    if let Some(ms) = gates.fail_if_p99_above_ms {
        g.push(format!("--fail-if-p99-above {ms}"));
    }
    g
}

/// `crashed: exit status 1`: what became of a contender in the run it failed in.
fn failed_in_text(f: &FailedIn) -> String {
    let status = f.status.as_str().replace('_', " ");
    if f.first_line.is_empty() {
        status
    } else {
        format!("{status}: {}", f.first_line)
    }
}

/// A warning of the comparison as one line.
pub fn warning_text(c: &Comparison, w: &CompareWarning) -> String {
    let (a, b) = (&c.a.run, &c.b.run);
    match w {
        CompareWarning::Unfinished { run, side, status } => format!(
            "run {run} ({side}) is {status}: only the steps it stored are compared"
        ),
        CompareWarning::DifferentMachines => format!(
            "the runs were made on different machines (run {}: {}; run {}: {}): part of any difference may be the machine's",
            a.id,
            crate::shootout::machine_line(c.a),
            b.id,
            crate::shootout::machine_line(c.b)
        ),
        CompareWarning::Untested { pair } => untested_text(c, &c.pairs[*pair]),
        CompareWarning::WireChanged { at, a: wa, b: wb } => format!(
            "spoken to differently: {}: {wa} in run {}, {wb} in run {}: part of the change is the client's, not the server's",
            at_label(at),
            a.id,
            b.id
        ),
        CompareWarning::UnlikeSteps {
            pair,
            a_secs,
            b_secs,
            withdrawn,
        } => unlike_steps_text(c, &c.pairs[*pair], *a_secs, *b_secs, *withdrawn),
        CompareWarning::SearchRules {
            workload,
            a: ra,
            b: rb,
        } => format!(
            "unlike search rules: {workload}: its steps {} in run {}, {} in run {}: part of any change in its capacities is the rule's, not the servers'",
            rule_words(*ra),
            a.id,
            rule_words(*rb),
            b.id
        ),
        CompareWarning::MoreFailures { at, b: fb, a_total } => format!(
            "failures: {}: {} failed requests in run {} ({fb}), {a_total} in run {}",
            at_label(at),
            fb.total(),
            b.id,
            a.id
        ),
        CompareWarning::Load { at, run, warning } => format!(
            "{}: {} in run {run}: {warning}",
            warning.kind().replace('_', " "),
            at_label(at)
        ),
    }
}

/// [`CompareWarning::Untested`] as one line.
fn untested_text(c: &Comparison, p: &Pair) -> String {
    format!(
        "not tested: {}: {} {:.0} → {:.0}, {}, beyond --fail-if-slower {}%, but {}: reported, not failed (add repetitions or lengthen the steps)",
        pair_label(p),
        p.unit.per_second(),
        p.rps.a,
        p.rps.b,
        signed_percent(p.rps.percent.unwrap_or_default()),
        c.gates.fail_if_slower_percent.unwrap_or_default(),
        untested_why(p)
    )
}

/// [`CompareWarning::UnlikeSteps`] as one line.
fn unlike_steps_text(
    c: &Comparison,
    p: &Pair,
    a_secs: f64,
    b_secs: f64,
    withdrawn: bool,
) -> String {
    format!(
        "unlike steps: {}: {}: a short step weighs its start as much as the server{} (measure both alike: drop --quick, or give both the same duration and repeat)",
        pair_label(p),
        crate::sentences::steps_in_runs(&[
            (c.a.run.id, a_secs, p.reps_a),
            (c.b.run.id, b_secs, p.reps_b)
        ]),
        if withdrawn {
            format!(
                ", so its {} verdict, from tenths of a second, is withdrawn",
                p.unit.per_second()
            )
        } else {
            String::new()
        }
    )
}

/// How a search's steps ended, for [`CompareWarning::SearchRules`].
fn rule_words(rule: EndRule) -> &'static str {
    match rule {
        EndRule::Decided => "ended once their SLOs were decided",
        EndRule::Deadline => "each ran to its deadline (the fixed rule)",
    }
}

/// A failed gate as one line.
pub fn violation_text(c: &Comparison, v: &Violation) -> String {
    let (ida, idb) = (c.a.run.id, c.b.run.id);
    match v {
        Violation::Slower { pair } => {
            let p = &c.pairs[*pair];
            format!(
                "{}: {} {:.0} → {:.0}, {} ({})",
                pair_label(p),
                p.unit.per_second(),
                p.rps.a,
                p.rps.b,
                signed_percent(p.rps.percent.unwrap_or_default()),
                verdict_text(&p.rps)
            )
        }
        Violation::NotMeasured { unpaired } => {
            let u = &c.only_in_a[*unpaired];
            let why = u
                .failed_in_other
                .as_ref()
                .map(failed_in_text)
                .unwrap_or_default();
            format!(
                "{}: measured in run {ida}, not in run {idb} ({why})",
                cell_label(&u.contender, &u.workload, u.level)
            )
        }
        Violation::P99Above {
            at,
            p99,
            reps,
            limit,
        } => format!(
            "{}: p99 {p99:.3} ms in run {idb} (median of {}) is above {limit} ms",
            at_label(at),
            plural(*reps, "repetition", "repetitions"),
        ),
    }
}

fn pair_label(p: &Pair) -> String {
    cell_label(&p.contender, &p.workload, p.level)
}

/// The explanation printed under every comparison, its rates in `per_s` (the pairs'
/// unit: `req/s`, or `calls/s` for gRPC calls; each of them when they differ).
fn footnote(per_s: &str) -> [String; 4] {
    [
        format!("A and B are medians over the repetitions. Verdicts are two-sided at α = 0.05. {per_s}: with 4 or more repetitions on each side (or 3 and 5, 2 and 8)"),
        "a Mann–Whitney U test of the repetitions; with fewer, Student's t over the per-second good answers, counting their correlation and the repetitions' spread".into(),
        "(6 full seconds per side at least); \"1.25 times slower (1.21–1.30, …)\" gives the 95% interval of the ratio of these two runs' steps. p99: a Mann–Whitney U test of the".into(),
        "repetitions' p99s, lower is faster. \"too little evidence\": no outcome could be significant; --fail-if-slower reports such a drop and does not fail.".into(),
    ]
}

/// What the comparison's rates are a second: the unit its pairs share (`req/s` when there
/// are none), or each of theirs in order first met (`req/s or calls/s`).
fn rates_word(c: &Comparison) -> String {
    let mut units: Vec<&str> = Vec::new();
    for p in &c.pairs {
        let u = p.unit.per_second();
        if !units.contains(&u) {
            units.push(u);
        }
    }
    if units.is_empty() {
        "req/s".into()
    } else {
        units.join(" or ")
    }
}

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
        plural(reps, "repetition", "repetitions")
    )
}

/// The header of a workload's table of pairs, its rates in the workload's `unit`.
fn header(unit: Unit) -> Vec<String> {
    let per_s = unit.per_second();
    let mut h: Vec<String> = vec!["contender".into(), "level".into()];
    h.push(format!("A {per_s}"));
    h.push(format!("B {per_s}"));
    h.extend(
        [
            "change", "verdict", "A p99 ms", "B p99 ms", "change", "verdict",
        ]
        .map(String::from),
    );
    h
}

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
        verdict_text(&p.rps),
        format!("{:.3}", p.p99.a),
        format!("{:.3}", p.p99.b),
        percent_cell(p.p99.percent),
        verdict_text(&p.p99),
    ]
}

/// A workload's table of pairs, its rates in the workload's unit (the first pair's: a
/// workload's pairs share it).
fn pairs_table(pairs: &[&Pair]) -> crate::grid::Table {
    crate::grid::Table {
        header: header(pairs.first().map_or(Unit::Request, |p| p.unit)),
        align: ALIGN.to_vec(),
        rows: pairs.iter().map(|p| row(p)).collect(),
    }
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
        Some(why) => format!("{label} (run {}: {})", other.run.id, failed_in_text(why)),
        None => label,
    }
}

/// The title of the section on rankings in both runs, their rates in `per_s`.
fn stability_title(per_s: &str) -> String {
    format!("Rankings in both runs (good-answer {per_s}; signs as in shootout report)")
}

/// The stability entries grouped by workload, in run A's order.
fn stability_by_workload<'c>(c: &'c Comparison) -> Vec<(&'c str, Vec<&'c Stability>)> {
    let mut out: Vec<(&str, Vec<&Stability>)> = Vec::new();
    for s in &c.stability {
        match out.iter_mut().find(|(w, _)| *w == s.workload) {
            Some((_, v)) => v.push(s),
            None => out.push((&s.workload, vec![s])),
        }
    }
    out
}

/// `c=1: same order: a > b`, or the two orders and a line per swapped pair; where the
/// level's steps were unlike in the two runs, a line says so and each swap's words weigh it.
pub fn stability_lines(s: &Stability) -> Vec<String> {
    let level = s.level.to_string();
    let strip = |line: &str| line[level.len() + 2..].to_string();
    let pad = " ".repeat(level.len());
    let mut out = if s.same() {
        vec![format!("{level}: same order: {}", strip(&s.a))]
    } else {
        vec![
            format!("{level}: changed: A {}", strip(&s.a)),
            format!("{pad}           B {}", strip(&s.b)),
        ]
    };
    if let Some((a, b)) = s.unlike_steps {
        out.push(format!(
            "{pad}  unlike steps ({} in A, {} in B): each order is its own run's; a short step weighs how it began as much as the servers",
            crate::sentences::step_secs(a),
            crate::sentences::step_secs(b)
        ));
    }
    for w in &s.swaps {
        out.push(format!(
            "{pad}  {} and {} swapped: {}",
            w.ahead_in_a,
            w.ahead_in_b,
            swap_words(w, s.unlike_steps.is_some())
        ));
    }
    out
}

/// Whether a swap matters, in words; `unlike`: the two runs' steps were of unlike lengths,
/// so a swap may be the lengths', not the servers'.
fn swap_words(w: &Swap, unlike: bool) -> &'static str {
    match (w.significant_in_a, w.significant_in_b, unlike) {
        (true, true, false) => {
            "significant in both runs, each the other way: this order did not survive the re-run"
        }
        (true, true, true) => {
            "significant in both runs, each the other way: the step lengths differ, so this is no re-run of the same measurement; run both alike to tell"
        }
        (true, false, _) => "significant in A, a tie in B",
        (false, true, _) => "a tie in A, significant in B",
        (false, false, _) => "a tie in both runs (noise)",
    }
}

/// The title of the capacities' table, in the unit of its rows' rates (`req/s`,
/// `journeys/s`, `calls/s`, or several: then the rows of a workload not in requests say
/// their unit beside its name).
fn capacity_title(rows: &[CapacityChange]) -> String {
    let first = rows.first().map_or("req/s", |k| k.unit);
    let unit = if rows.iter().all(|k| k.unit == first) {
        first.to_string()
    } else {
        let mut others: Vec<String> = Vec::new();
        for k in rows.iter().filter(|k| k.unit != "req/s") {
            let said = format!(
                "{} where the workload says ({})",
                k.unit,
                k.unit.strip_suffix("/s").unwrap_or(k.unit)
            );
            if !others.contains(&said) {
                others.push(said);
            }
        }
        format!("req/s, {}", others.join(", "))
    };
    format!("Capacity within the SLOs ({unit}, median of each run's searches; more or less when every search of one met a rate the other's broke)")
}

/// A capacity row's workload: its name, marked `(journeys)` or `(calls)` when the table
/// mixes units and its rates are not requests.
fn capacity_workload(rows: &[CapacityChange], k: &CapacityChange) -> String {
    let mixed = rows.iter().any(|o| o.unit != k.unit);
    if mixed && k.unit != "req/s" {
        format!(
            "{} ({})",
            k.workload,
            k.unit.strip_suffix("/s").unwrap_or(k.unit)
        )
    } else {
        k.workload.clone()
    }
}

/// A capacity change's verdict: `more`, `less`, `no_change` (the searches overlap) or
/// `unfinished` (a side has no finished search).
fn capacity_verdict(v: ChangeVerdict) -> &'static str {
    match v {
        ChangeVerdict::Faster => "more",
        ChangeVerdict::Slower => "less",
        ChangeVerdict::NoChange => "no_change",
        ChangeVerdict::TooFew => "unfinished",
    }
}

/// Each contender's capacity on each workload searched in both runs.
fn capacity_table(c: &Comparison) -> crate::grid::Table {
    let rate = |r: Option<f64>| r.map_or("–".into(), crate::shootout::capacity::rate);
    let rows = c
        .capacities
        .iter()
        .map(|k| {
            vec![
                capacity_workload(&c.capacities, k),
                k.contender.clone(),
                rate(k.a),
                rate(k.b),
                percent_cell(k.percent),
                capacity_verdict(k.verdict).replace('_', " "),
            ]
        })
        .collect();
    crate::grid::Table {
        header: ["workload", "contender", "A", "B", "change", "verdict"]
            .map(String::from)
            .to_vec(),
        align: vec![
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ],
        rows,
    }
}

/// The title of the journey steps' table.
const STEPS_TITLE: &str = "Journeys and steps (good ones per second and p99 ms: medians over repetitions, each tested as a contender's p99 is, Mann–Whitney on the repetitions)";

/// Every journey and step measured in both runs for the same contender × workload ×
/// level: good ones per second and p99 in A and B, the change and its verdict; `None` when
/// neither run ran journeys.
fn steps_table(c: &Comparison) -> Option<crate::grid::Table> {
    let changes = shootout_analysis::journeys::changes(c.a, c.b);
    if changes.is_empty() {
        return None;
    }
    let header = [
        "workload",
        "level",
        "contender",
        "",
        "name",
        "ok/s A",
        "ok/s B",
        "Δ",
        "verdict",
        "p99 A",
        "p99 B",
        "Δ",
        "verdict",
    ];
    let mut align = vec![Align::Left; 5];
    align.extend([Align::Right, Align::Right, Align::Right, Align::Left]);
    align.extend([Align::Right, Align::Right, Align::Right, Align::Left]);
    let rows = changes
        .iter()
        .map(|k| {
            vec![
                k.workload.clone(),
                k.level.to_string(),
                k.contender.clone(),
                if k.journey { "journey" } else { "step" }.to_string(),
                k.label.clone(),
                format!("{:.2}", k.ok_rate.a),
                format!("{:.2}", k.ok_rate.b),
                percent_cell(k.ok_rate.percent),
                verdict_text(&k.ok_rate),
                format!("{:.3}", k.p99.a),
                format!("{:.3}", k.p99.b),
                percent_cell(k.p99.percent),
                verdict_text(&k.p99),
            ]
        })
        .collect();
    Some(crate::grid::Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        align,
        rows,
    })
}

/// The title of the journeys' busy time table.
const BUSY_TITLE: &str = "Journeys less think time (p99 ms of each journey's duration less its think times: medians over repetitions, tested as a contender's p99 is)";

/// Every journey whose busy time both runs kept, for the same contender × workload ×
/// level: its p99 in A and B, the change and its verdict; `None` when there is none.
fn busy_table(c: &Comparison) -> Option<crate::grid::Table> {
    let rows: Vec<Vec<String>> = shootout_analysis::journeys::changes(c.a, c.b)
        .iter()
        .filter_map(|k| {
            let busy = k.busy_p99.as_ref()?;
            Some(vec![
                k.workload.clone(),
                k.level.to_string(),
                k.contender.clone(),
                k.label.clone(),
                format!("{:.3}", busy.a),
                format!("{:.3}", busy.b),
                percent_cell(busy.percent),
                verdict_text(busy),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let header = [
        "workload",
        "level",
        "contender",
        "journey",
        "p99 A",
        "p99 B",
        "Δ",
        "verdict",
    ];
    let mut align = vec![Align::Left; 4];
    align.extend([Align::Right, Align::Right, Align::Right, Align::Left]);
    Some(crate::grid::Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        align,
        rows,
    })
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
            let _ = writeln!(o, "  - {}", terminal_line(&warning_text(c, w)));
        }
    }
    for (w, pairs) in by_workload(c) {
        let _ = writeln!(o, "\n{}", terminal_line(w));
        pairs_table(&pairs).text(&mut o, "  ");
    }
    if let Some(t) = steps_table(c) {
        let _ = writeln!(o, "\n{STEPS_TITLE}");
        t.text(&mut o, "  ");
    }
    if let Some(t) = busy_table(c) {
        let _ = writeln!(o, "\n{BUSY_TITLE}");
        t.text(&mut o, "  ");
    }
    if !c.capacities.is_empty() {
        let _ = writeln!(o, "\n{}", capacity_title(&c.capacities));
        capacity_table(c).text(&mut o, "  ");
    }
    if c.pairs.is_empty() && c.capacities.is_empty() {
        o.push_str("\nNo contender × workload × load level was measured in both runs.\n");
    }
    if !c.stability.is_empty() {
        let _ = writeln!(o, "\n{}:", stability_title(&rates_word(c)));
        for (w, levels) in stability_by_workload(c) {
            let _ = writeln!(o, "  {}", terminal_line(w));
            for s in levels {
                for l in stability_lines(s) {
                    let _ = writeln!(o, "    {}", terminal_line(&l));
                }
            }
        }
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
    for f in footnote(&rates_word(c)) {
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
            let _ = writeln!(o, "- {}", md_escape(&warning_text(c, w)));
        }
    }
    for (w, pairs) in by_workload(c) {
        let _ = writeln!(o, "\n## {}\n", md_escape(w));
        pairs_table(&pairs).markdown(&mut o);
    }
    if let Some(t) = steps_table(c) {
        let _ = writeln!(o, "\n## {}\n", md_escape(STEPS_TITLE));
        t.markdown(&mut o);
    }
    if let Some(t) = busy_table(c) {
        let _ = writeln!(o, "\n## {}\n", md_escape(BUSY_TITLE));
        t.markdown(&mut o);
    }
    if !c.capacities.is_empty() {
        let _ = writeln!(o, "\n## {}\n", md_escape(&capacity_title(&c.capacities)));
        capacity_table(c).markdown(&mut o);
    }
    if c.pairs.is_empty() && c.capacities.is_empty() {
        o.push_str("\nNo contender × workload × load level was measured in both runs.\n");
    }
    if !c.stability.is_empty() {
        let _ = writeln!(o, "\n## {}\n", md_escape(&stability_title(&rates_word(c))));
        for (w, levels) in stability_by_workload(c) {
            let _ = writeln!(o, "- {}", md_escape(w));
            for s in levels {
                for l in stability_lines(s) {
                    let _ = writeln!(o, "  - {}", md_escape(&l));
                }
            }
        }
    }
    for (list, run, other) in [(&c.only_in_a, c.a, c.b), (&c.only_in_b, c.b, c.a)] {
        if !list.is_empty() {
            let _ = writeln!(o, "\n## Only in run {}\n", run.run.id);
            for u in list {
                let _ = writeln!(o, "- {}", md_escape(&unpaired_line(u, other)));
            }
        }
    }
    let gates = gates_text(&c.gates);
    if !gates.is_empty() {
        let _ = writeln!(o, "\n## Gates: {}\n", md_escape(&gates.join(" ")));
        if c.violations.is_empty() {
            o.push_str("Passed.\n");
        } else {
            for v in &c.violations {
                let _ = writeln!(o, "- **failed:** {}", md_escape(&violation_text(c, v)));
            }
        }
    }
    o.push_str("\n---\n\n");
    let _ = writeln!(o, "{}", md_escape(&footnote(&rates_word(c)).join(" ")));
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

/// [`change_json`] of req/s, with the interval of B over A and the method.
fn rps_change_json(ch: &Change) -> Value {
    let mut v = change_json(ch, 3);
    v["ratio"] = ch
        .interval
        .map_or(Value::Null, |(r, _, _)| round(r, 4).into());
    v["ratio_ci"] = ch.interval.map_or(Value::Null, |(_, lo, hi)| {
        json!([round(lo, 4), round(hi, 4)])
    });
    v["method"] = ch.method.map_or(Value::Null, |m| m.word().into());
    v
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
        "level": crate::json::load_level_json(u.level),
        "failed_in_other_run": u.failed_in_other.as_ref().map(failed_in_text),
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
            "level": crate::json::load_level_json(p.level),
            "repetitions": { "a": p.reps_a, "b": p.reps_b },
            "unit": p.unit.per_second(),
            "rps": rps_change_json(&p.rps),
            "p99_ms": change_json(&p.p99, 3),
        })).collect::<Vec<_>>(),
        "rankings": c.stability.iter().map(|s| json!({
            "workload": s.workload,
            "level": crate::json::load_level_json(s.level),
            "a": s.a,
            "b": s.b,
            "same": s.same(),
            "unlike_steps": s.unlike_steps.map(|(a, b)| json!({ "a_secs": a, "b_secs": b })),
            "swaps": s.swaps.iter().map(|w| json!({
                "ahead_in_a": w.ahead_in_a,
                "ahead_in_b": w.ahead_in_b,
                "significant_in_a": w.significant_in_a,
                "significant_in_b": w.significant_in_b,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "capacities": c.capacities.iter().map(|k| json!({
            "workload": k.workload,
            "contender": k.contender,
            "unit": k.unit,
            "a_max_rps": k.a.map(|x| round(x, 3)),
            "b_max_rps": k.b.map(|x| round(x, 3)),
            "change_percent": k.percent.map(|p| round(p, 3)),
            "verdict": capacity_verdict(k.verdict),
        })).collect::<Vec<_>>(),
        "journeys": shootout_analysis::journeys::changes(c.a, c.b).iter().map(|k| json!({
            "workload": k.workload,
            "contender": k.contender,
            "level": crate::json::load_level_json(k.level),
            "kind": if k.journey { "journey" } else { "step" },
            "name": k.label,
            "ok_per_s": change_json(&k.ok_rate, 3),
            "p99_ms": change_json(&k.p99, 3),
            "duration_less_think_p99_ms": k.busy_p99.as_ref().map(|b| change_json(b, 3)),
        })).collect::<Vec<_>>(),
        "only_in_a": c.only_in_a.iter().map(unpaired_json).collect::<Vec<_>>(),
        "only_in_b": c.only_in_b.iter().map(unpaired_json).collect::<Vec<_>>(),
        "warnings": c.warnings.iter().map(|w| warning_text(c, w)).collect::<Vec<_>>(),
        "gates": {
            "fail_if_slower_percent": c.gates.fail_if_slower_percent,
            "fail_if_p99_above_ms": c.gates.fail_if_p99_above_ms,
            "passed": !c.failed(),
            "violations": c.violations.iter().map(|v| json!({
                "kind": v.kind(),
                "message": violation_text(c, v),
            })).collect::<Vec<_>>(),
        },
    })
}

/// The columns of the comparison's CSV.
pub const CSV_COLUMNS: [&str; 20] = [
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
    "record",
    "name",
    "unit",
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
    // A pair's, step's or journey's two changes (req/s or good ones per second, and p99).
    let changes = |rate: &Change, p99: &Change| {
        [
            format!("{:.3}", rate.a),
            format!("{:.3}", rate.b),
            opt(rate.percent),
            format!("{:.6}", rate.p),
            rate.verdict.word().into(),
            format!("{:.3}", p99.a),
            format!("{:.3}", p99.b),
            opt(p99.percent),
            format!("{:.6}", p99.p),
            p99.verdict.word().into(),
        ]
    };
    let head = |workload: &str, contender: &str, level: LoadLevel| {
        let (kind, conns, rate) = match level {
            LoadLevel::Concurrency { connections } => ("concurrency", connections, String::new()),
            LoadLevel::Rate { rps, connections } => ("rate", connections, format!("{rps}")),
        };
        vec![
            csv_text(workload).into_owned(),
            csv_text(contender).into_owned(),
            kind.into(),
            conns.to_string(),
            rate,
        ]
    };
    for p in &c.pairs {
        let mut fields = head(&p.workload, &p.contender, p.level);
        fields.extend([p.reps_a.to_string(), p.reps_b.to_string()]);
        fields.extend(changes(&p.rps, &p.p99));
        fields.extend(["pair".to_string(), String::new(), p.unit.word().to_string()]);
        csv_record(&mut o, &fields);
    }
    for k in shootout_analysis::journeys::changes(c.a, c.b) {
        let mut fields = head(&k.workload, &k.contender, k.level);
        fields.extend([String::new(), String::new()]);
        fields.extend(changes(&k.ok_rate, &k.p99));
        let (record, unit) = if k.journey {
            ("journey", "journey")
        } else {
            ("journey_step", "request")
        };
        fields.extend([
            record.to_string(),
            csv_text(&k.label).into_owned(),
            unit.into(),
        ]);
        csv_record(&mut o, &fields);
        if let Some(busy) = &k.busy_p99 {
            // Its busy time's p99 in the p99 fields; no rate of its own.
            let mut fields = head(&k.workload, &k.contender, k.level);
            fields.extend(vec![String::new(); 7]);
            fields.extend(changes(busy, busy)[5..].iter().cloned());
            let label = csv_text(&k.label).into_owned();
            fields.extend(["journey_busy".to_string(), label, "journey".to_string()]);
            csv_record(&mut o, &fields);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    /// The capacities' title gives its rows' unit: requests, journeys, or both with the
    /// journey workloads marked.
    #[test]
    fn the_capacity_table_says_journeys_a_second_for_journey_workloads() {
        use super::{capacity_title, capacity_workload, CapacityChange};
        let row = |workload: &str, unit| CapacityChange {
            workload: workload.into(),
            contender: "gunicorn".into(),
            unit,
            a: Some(90.0),
            b: Some(99.0),
            percent: Some(10.0),
            verdict: shootout_analysis::compare::ChangeVerdict::NoChange,
        };
        let plain = [row("hello", "req/s")];
        assert!(capacity_title(&plain).starts_with("Capacity within the SLOs (req/s, "));
        assert_eq!(capacity_workload(&plain, &plain[0]), "hello");
        let journeys = [row("users", "journeys/s")];
        assert!(capacity_title(&journeys).starts_with("Capacity within the SLOs (journeys/s, "));
        assert_eq!(capacity_workload(&journeys, &journeys[0]), "users");
        let mixed = [row("hello", "req/s"), row("users", "journeys/s")];
        assert!(capacity_title(&mixed).starts_with(
            "Capacity within the SLOs (req/s, journeys/s where the workload says (journeys), "
        ));
        assert_eq!(capacity_workload(&mixed, &mixed[0]), "hello");
        assert_eq!(capacity_workload(&mixed, &mixed[1]), "users (journeys)");
        // A gRPC workload's searches pace calls.
        let calls = [row("hello", "calls/s")];
        assert!(capacity_title(&calls).starts_with("Capacity within the SLOs (calls/s, "));
        let three = [
            row("hello", "req/s"),
            row("users", "journeys/s"),
            row("greet", "calls/s"),
        ];
        assert!(capacity_title(&three).starts_with(
            "Capacity within the SLOs (req/s, journeys/s where the workload says (journeys), calls/s where the workload says (calls), "
        ));
        assert_eq!(capacity_workload(&three, &three[2]), "greet (calls)");
    }

    use super::*;

    /// A swap between a `--quick` run and a full one is not called an order that failed its
    /// re-run: the level says its steps were unlike, and the swap's words say why it may be.
    #[test]
    fn a_swap_of_unlike_steps_is_not_called_a_failed_re_run() {
        let mut s = Stability {
            workload: "hello".into(),
            level: LoadLevel::Concurrency { connections: 4 },
            a: "c=4: x > y".into(),
            b: "c=4: y > x".into(),
            swaps: vec![Swap {
                ahead_in_a: "x".into(),
                ahead_in_b: "y".into(),
                significant_in_a: true,
                significant_in_b: true,
            }],
            unlike_steps: None,
        };
        let like = stability_lines(&s).join("\n");
        assert!(like.contains("did not survive the re-run"), "{like}");
        s.unlike_steps = Some((1.0, 10.0));
        let unlike = stability_lines(&s);
        assert_eq!(unlike.len(), 4, "{unlike:?}");
        assert_eq!(
            unlike[2],
            "     unlike steps (1 s in A, 10 s in B): each order is its own run's; a short step weighs how it began as much as the servers"
        );
        assert!(!unlike[3].contains("did not survive"), "{}", unlike[3]);
        assert!(
            unlike[3].contains("no re-run of the same measurement"),
            "{}",
            unlike[3]
        );
    }

    #[test]
    fn p_values_print_with_two_significant_digits() {
        assert_eq!(p_text(1.0), "1");
        assert_eq!(p_text(0.6857), "0.69");
        assert_eq!(p_text(2.0 / 70.0), "0.029");
        assert_eq!(p_text(0.00001), "1.0e-5");
    }
}
