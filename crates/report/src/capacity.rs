//! The capacity search's report (`shootout load --find-max`): the most the server
//! sustained within its SLOs, with the interval the search narrowed it to and what
//! limited it, what was seen of the machine, then every step (offered and achieved rate,
//! latency, errors, whether the sends left on time and why not, its verdict) with a
//! legend. Text for people, JSON for scripts (the `capacity` object of
//! `docs/load-json.md`'s capacity section). The search and the verdicts are the
//! analysis' ([`shootout_analysis::capacity`]); this lays them out, in one vocabulary
//! shared with stderr's step lines and the run's capacity tables ([`verdict_words`],
//! [`sends_words`], [`STEP_LEGEND`]).

use crate::grid::{Align, Table};
use crate::units::{round, trim_float};
use serde_json::{json, Value};
use shootout_analysis::capacity::{Basis, Capacity, Decision, Ended, Limit, Measured, Verdict};
use shootout_analysis::decided::Bound;
use shootout_analysis::load_warnings::NotKept;
use shootout_model::find_max::EndRule;
use shootout_model::threshold::{Metric, Op, Threshold};
use shootout_model::Choice;
use std::fmt::Write;

/// What a capacity report shows: the URL, the SLOs as written, the steps in the order
/// they ran, and what the search found.
pub struct CapacityReport<'a> {
    /// The URL searched.
    pub url: &'a str,
    /// What a rate counts a second: `req/s`, or `journeys/s` for a search of journeys
    /// (each rate is journeys started a second).
    pub unit: &'a str,
    /// Each SLO as the user wrote it (the condition that must hold).
    pub slos: &'a [String],
    /// Every step, in the order run.
    pub steps: &'a [Measured],
    /// The answer.
    pub capacity: &'a Capacity,
    /// How its boundary rates were decided (the highest met, the lowest broken).
    pub boundary: &'a [Decision],
    /// The search stopped before its end (Ctrl-C): the answer is what it had.
    pub interrupted: bool,
    /// What was seen of the machine: the server sharing shootout's CPUs, other processes
    /// before the search or during its steps (sentences; empty on a quiet machine).
    pub machine: &'a [String],
    /// When its steps ended: once decided, or each at its deadline (`--step-end`).
    pub end_rule: EndRule,
}

/// A rate as people read it: `7300`, `0.5` (every capacity table and sentence).
pub(crate) fn rate(r: f64) -> String {
    trim_float(round(r, 3))
}

/// Why the generator did not keep the schedule of the steps at `rate`, in words that
/// follow the evidence: its own loop when it was busy, its threads kept off a CPU when
/// they were idle most of the time.
fn generator_words(steps: &[Measured], rate: f64) -> String {
    let late: Vec<&Measured> = steps
        .iter()
        .filter(|m| m.rate == rate && m.verdict == Verdict::NotKept)
        .collect();
    let busiest = late.iter().map(|m| m.busiest_thread).fold(0.0, f64::max);
    if !late.is_empty() && late.iter().all(|m| m.late == Some(NotKept::Starved)) {
        format!(
            "the generator could not keep the schedule, though its busiest thread was busy only {:.0}% of the time: its threads waited for a CPU that the server or other processes held (pin them apart: taskset -c for the server, --cpus for shootout)",
            busiest * 100.0
        )
    } else {
        "the generator could not keep the schedule (add --threads, pin generator and server to different CPUs, or shard the load)".into()
    }
}

/// What limited the search, in words.
fn limit_words(r: &CapacityReport) -> String {
    match &r.capacity.limited_by {
        Limit::Slo(i) => format!(
            "{} did not hold",
            r.slos.get(*i).map_or("an SLO", String::as_str)
        ),
        Limit::ConnectionCap(i) => format!(
            "{} did not hold, every connection allowed busy (raise --max-connections if the server takes more requests at once)",
            r.slos.get(*i).map_or("an SLO", String::as_str)
        ),
        Limit::Generator => generator_words(
            r.steps,
            r.capacity.first_failing_rps.unwrap_or(f64::NAN),
        ),
        Limit::Ceiling => "every rate up to --to held (raise --to to search further)".into(),
    }
}

/// What limited the search at `hi`, the lowest failing rate: `p99<50ms did not hold at
/// 7650`, with what follows the SLO's words after the rate.
fn limit_at(r: &CapacityReport, hi: f64) -> String {
    let words = limit_words(r);
    let at = format!(" at {}", rate(hi));
    match words.find(" did not hold") {
        Some(i) => {
            let end = i + " did not hold".len();
            format!("{}{at}{}", &words[..end], &words[end..])
        }
        None => format!("{words}{at}"),
    }
}

/// A step's verdict in words, naming the SLO of `slos` that broke: `met`, `broke
/// p99<50ms`, `not judged` (the words of stderr's step lines and of every table).
pub fn verdict_words(slos: &[String], v: &Verdict) -> String {
    match v {
        Verdict::Met => "met".into(),
        Verdict::Broke(i) => format!("broke {}", slos.get(*i).map_or("an SLO", String::as_str)),
        Verdict::NotKept => "not judged".into(),
    }
}

/// A step's verdict in words as [`verdict_words`] says it, but `passed` for a rung of the
/// ramp that plainly passed ([`Measured::passed`]): it is not evidence that it met.
pub fn step_verdict_words(slos: &[String], m: &Measured) -> String {
    if m.passed() {
        "passed".into()
    } else {
        verdict_words(slos, &m.verdict)
    }
}

/// How a step ended, in words: `decided: met — errors ≤ 0.0999% (95% upper bound) < 0.1%` (every
/// SLO's bound that decided it, rounded away from the limit's side so the words never claim more
/// than the bound), `decided: broken — p99 ≥ 80.000 ms (at its deadline, whatever comes) ≥ 50ms`
/// (the SLO that broke, and where its figure stands at the step's deadline however the rest of the
/// step goes), `deadline: undecided` (some SLO stayed open until the step's deadline: judged on its
/// figures as they were), `passed — every SLO under half its limit` (a rung of the ramp that
/// plainly passed: not a decision), `full — ran to its deadline, as every step of a search by the
/// fixed rule`.
pub fn ended_words(slos: &[String], e: &Ended) -> String {
    let d = match e {
        Ended::Decided(d) => d,
        Ended::Deadline => return "deadline: undecided".into(),
        Ended::Full => return FULL_WORDS.into(),
        Ended::Passed => {
            return "passed — every SLO under half its limit, none clearly broken".into()
        }
    };
    let bounds: Vec<String> = d.bounds.iter().map(|b| bound_words(slos, b)).collect();
    let call = if d.met { "met" } else { "broken" };
    if bounds.is_empty() {
        // A stored step: the store keeps how it ended, not the bounds.
        return format!("decided: {call}");
    }
    format!("decided: {call} — {}", bounds.join(", "))
}

/// How a step of a search whose steps all run to their deadline ended ([`Ended::Full`]).
const FULL_WORDS: &str = "full — ran to its deadline, as every step of a search by the fixed rule";

/// The line a report of a search by the fixed rule ([`EndRule::Deadline`]) says it with.
const FIXED_RULE_LINE: &str = "Steps: each ran to its deadline, the fixed rule (step_end deadline): none ended once decided, none passed";

/// How step `m` ended as a table cell: the words of [`ended_words`] before their bounds
/// (`decided: met`, `decided: broken`, `deadline: undecided`, `passed`), with
/// `, overturned` where the step's verdict over all its answers is not what decided it
/// (answers in flight when the decision ended it turned it); `-` where not known (a step
/// stored before the store kept it).
pub(crate) fn ended_cell(slos: &[String], m: &Measured) -> String {
    m.ended.as_ref().map_or("-".into(), |e| {
        let words = ended_words(slos, e);
        let cell = words.split(" — ").next().unwrap_or_default();
        match e {
            Ended::Decided(d) if d.met != m.verdict.met() => format!("{cell}, overturned"),
            _ => cell.to_string(),
        }
    })
}

/// `errors ≤ 0.0999% (95% upper bound) < 0.1%`: the metric, its bound and the SLO's
/// limit as written.
fn bound_words(slos: &[String], b: &Bound) -> String {
    let Some(slo) = slos.get(b.slo).and_then(|t| t.parse::<Threshold>().ok()) else {
        return "an SLO".into();
    };
    let (sign, side) = if b.upper {
        ("≤", "upper")
    } else {
        ("≥", "lower")
    };
    // A met SLO's bound holds; a broken one's does not.
    let met = slo.op.holds(b.value, slo.limit);
    let value = match slo.metric {
        // Three significant figures, or as many more as keep the bound on its side of
        // the limit (0.099807 → 0.0999, 0.0999981 → 0.099999), rounded outwards.
        Metric::Errors => {
            let shown = (3..=9)
                .map(|figures| outwards(b.value, b.upper, figures))
                .find(|v| slo.op.holds(*v, slo.limit) == met)
                .unwrap_or(b.value);
            format!("{shown}%")
        }
        m => m.show(b.value),
    };
    let text = slo.text.trim();
    let at = text.find(['<', '>']).unwrap_or(text.len());
    let limit = text[at..].trim_start_matches(['<', '>', '=']).trim();
    // The SLO's own comparison when it held, its opposite when it broke.
    let op = match (slo.op, met) {
        (Op::Below, true) | (Op::AtLeast, false) => "<",
        (Op::AtMost, true) | (Op::Above, false) => "≤",
        (Op::Above, true) | (Op::AtMost, false) => ">",
        (Op::AtLeast, true) | (Op::Below, false) => "≥",
    };
    // A met SLO's bound is a one-sided 95 % bound; a broken one's is where the figure
    // stands at the step's deadline whatever comes before it.
    let how = if met {
        let level = (shootout_analysis::decided::LEVEL * 100.0).round();
        format!("{level}% {side} bound")
    } else {
        "at its deadline, whatever comes".into()
    };
    format!("{} {sign} {value} ({how}) {op} {limit}", slo.metric.name())
}

/// `v` to `figures` significant figures, rounded up (`up`) or down.
fn outwards(v: f64, up: bool, figures: i32) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(figures - 1 - v.log10().floor() as i32);
    let scaled = v * scale;
    // A bound already on those figures stays (1e-9: the float's own error).
    let r = if up {
        (scaled - 1e-9).ceil()
    } else {
        (scaled + 1e-9).floor()
    };
    r / scale
}

/// Whether a step's sends left on time, and if not why: `on time`, `late (server)`,
/// `late (cap)`, `late (shootout)`, `late (no CPU)`.
pub fn sends_words(m: &Measured) -> &'static str {
    match m.late {
        _ if m.kept => "on time",
        Some(NotKept::Server) => "late (server)",
        Some(NotKept::ConnectionCap) => "late (cap)",
        Some(NotKept::Starved) => "late (no CPU)",
        Some(NotKept::Generator) | None => "late (shootout)",
    }
}

/// The legend under every table of steps: what the `sends` and `verdict` words mean.
pub const STEP_LEGEND: [&str; 2] = [
    "sends: on time (99% of the rate sent, at most 1% more than 1 ms late), else late and why: (server) every connection was waiting on the server, (cap) the same with the cap on connections reached, (shootout) shootout's own loop was busy, (no CPU) shootout's threads waited for a CPU the server or other processes held",
    "verdict: met (every SLO held), broke SLO (the first that did not hold; when shootout sent late, latency counts from each send), not judged (shootout sent late and that alone broke an SLO: the step says nothing of the server)",
];

/// The headline: `Capacity: 7300 req/s within p99<50ms, errors<0.1% (between 7300 and
/// 7650 req/s: p99<50ms did not hold at 7650)`.
fn headline(r: &CapacityReport) -> String {
    let c = r.capacity;
    let slos = r.slos.join(", ");
    let unit = r.unit;
    match (c.max_rps, c.first_failing_rps) {
        (Some(lo), Some(hi)) => format!(
            "{} {unit} within {slos} (between {} and {} {unit}: {})",
            rate(lo),
            rate(lo),
            rate(hi),
            limit_at(r, hi)
        ),
        (Some(lo), None) => format!(
            "at least {} {unit} within {slos}: {}",
            rate(lo),
            limit_words(r)
        ),
        (None, Some(hi)) => format!(
            "below {} {unit}, the lowest rate tried: {} there (start lower: --from, or find_max's from in a plan)",
            rate(hi),
            limit_words(r)
        ),
        (None, None) => "not found: no step was measured".into(),
    }
}

/// How one boundary rate was decided, in words: `5130 req/s broke p99<50ms in 2 steps
/// (its 95% interval lay beyond the limit)`, the rate in `unit` (`req/s`, `journeys/s`).
pub(crate) fn decision_words(slos: &[String], d: &Decision, unit: &str) -> String {
    let why = match (d.basis, &d.verdict) {
        (Basis::Interval, Verdict::Met) => "every SLO's 95% interval held".to_string(),
        (Basis::Interval, _) => "its 95% interval lay beyond the limit".to_string(),
        (Basis::Pooled, Verdict::Met) => {
            "unclear, and all their requests together met every SLO".to_string()
        }
        (Basis::Pooled, _) => "unclear, and all their requests together broke it".to_string(),
        (Basis::Verdicts, _) => "the steps' verdicts".to_string(),
    };
    format!(
        "{} {unit} {} in {} steps ({why})",
        rate(d.rate),
        verdict_words(slos, &d.verdict),
        d.steps
    )
}

/// How the boundary rates were decided, as the JSON reports give it
/// (`capacity.boundary[]`).
pub(crate) fn decision_json(slos: &[String], d: &Decision) -> Value {
    json!({
        "rate": round(d.rate, 3),
        "steps": d.steps,
        "verdict": d.verdict.word(),
        "broke": match &d.verdict {
            Verdict::Broke(i) => slos.get(*i).map(|t| Value::from(t.as_str())),
            _ => None,
        },
        "decided_by": d.basis.word(),
    })
}

/// The columns of a table of steps: offered and achieved rate, latency, errors, whether
/// the schedule was kept, the verdict.
pub(crate) const STEP_HEADER: [&str; 8] = [
    "offered", "achieved", "p50 ms", "p99 ms", "p99.9 ms", "errors", "sends", "verdict",
];

/// One step as a table row under [`STEP_HEADER`].
pub(crate) fn step_row(slos: &[String], s: &Measured) -> Vec<String> {
    vec![
        rate(s.rate),
        trim_float(round(s.achieved, 1)),
        format!("{:.3}", s.p50_ms),
        format!("{:.3}", s.p99_ms),
        format!("{:.3}", s.p999_ms),
        format!("{:.3}%", s.errors_pct),
        sends_words(s).into(),
        step_verdict_words(slos, s),
    ]
}

/// The steps of a search as a table, with how long each measured and how it ended
/// (`decided: met`, `decided: broken`, `deadline: undecided`; the bounds are on stderr's
/// step lines and in the JSON).
fn steps_table(r: &CapacityReport) -> Table {
    let mut align = vec![Align::Right; STEP_HEADER.len()];
    // The words: sends and verdict.
    align[STEP_HEADER.len() - 2] = Align::Left;
    align[STEP_HEADER.len() - 1] = Align::Left;
    let mut header = STEP_HEADER.map(String::from).to_vec();
    header.extend(["s".to_string(), "ended".to_string()]);
    align.extend([Align::Right, Align::Left]);
    Table {
        header,
        align,
        rows: r
            .steps
            .iter()
            .map(|s| {
                let mut row = step_row(r.slos, s);
                row.push(format!("{:.1}", s.measured.as_secs_f64()));
                row.push(ended_cell(r.slos, s));
                row
            })
            .collect(),
    }
}

/// The text report.
pub fn capacity_text(r: &CapacityReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Capacity search of {}", crate::terminal_line(r.url));
    let _ = writeln!(o, "Capacity: {}", headline(r));
    if !r.boundary.is_empty() {
        let words: Vec<String> = r
            .boundary
            .iter()
            .map(|d| decision_words(r.slos, d, r.unit))
            .collect();
        let _ = writeln!(o, "Boundary: {}", words.join("; "));
    }
    for m in r.machine {
        let _ = writeln!(o, "Machine: {}", crate::terminal_line(m));
    }
    if r.end_rule == EndRule::Deadline {
        let _ = writeln!(o, "{FIXED_RULE_LINE}");
    }
    if r.interrupted {
        let _ = writeln!(
            o,
            "Interrupted: the search stopped early; this is what it had found."
        );
    }
    let _ = writeln!(o);
    steps_table(r).text(&mut o, "");
    let _ = writeln!(o);
    for l in STEP_LEGEND {
        let _ = writeln!(o, "{l}");
    }
    if r.steps.iter().any(|s| s.ended.is_some()) {
        let _ = writeln!(o, "{ENDED_LEGEND}");
    }
    o
}

/// What the `s` and `ended` columns of a table of steps say (`load --find-max`'s, and a
/// stored run's that kept how its steps ended).
pub(crate) const ENDED_LEGEND: &str = "s: seconds measured after the 1 s settle; ended: decided (every SLO clearly met, its one-sided 95% bound under the limit: the exact Clopper–Pearson bound of an error share, the order-statistic bound of a percentile; or one clearly broken, its bound beyond the limit: met or broken) or deadline (some SLO still open when the step had waited the answers of the fixed rule: undecided, judged on its figures) or passed (a rung of the ramp below any failing rate, left after 1 s and 100 answers with every SLO's figure under half its limit and none clearly broken: verdict passed, not met; never evidence for the capacity, and measured again in full before it may bound it) or full (ran to its deadline, as every step of a search by the fixed rule); overturned: decided one way, but the answers in flight when the decision ended the step turned its verdict the other way (the verdict stands)";

/// One step as the JSON reports give it (`capacity.steps[]`).
pub(crate) fn step_json(slos: &[String], s: &Measured) -> Value {
    json!({
        "offered_rps": round(s.rate, 3),
        "achieved_rps": round(s.achieved, 3),
        "latency_ms": {
            "p50": round(s.p50_ms, 3),
            "p99": round(s.p99_ms, 3),
            "p999": round(s.p999_ms, 3),
        },
        "errors_pct": round(s.errors_pct, 4),
        "schedule_kept": s.kept,
        "late": s.late.map(NotKept::key),
        "verdict": match &s.verdict {
            Verdict::Met if s.passed() => "passed",
            Verdict::Met => "met",
            Verdict::Broke(_) => "broke",
            Verdict::NotKept => "schedule_not_kept",
        },
        "broke": match &s.verdict {
            Verdict::Broke(i) => slos.get(*i).map(|t| Value::from(t.as_str())),
            _ => None,
        },
    })
}

/// What limited a search, as the JSON reports give it (`capacity.limited_by`).
pub(crate) fn limit_json(slos: &[String], l: &Limit) -> Value {
    match l {
        Limit::Slo(i) => json!({"kind": "slo", "slo": slos.get(*i)}),
        Limit::ConnectionCap(i) => json!({"kind": "connection_cap", "slo": slos.get(*i)}),
        Limit::Generator => json!({"kind": "generator"}),
        Limit::Ceiling => json!({"kind": "ceiling"}),
    }
}

/// One step as the JSON reports give it with how long it measured, its answers and how
/// it ended (`null` where not known: a step stored before the store kept it).
pub(crate) fn measured_step_json(slos: &[String], s: &Measured) -> Value {
    let mut v = step_json(slos, s);
    v["measured_s"] = json!(round(s.measured.as_secs_f64(), 3));
    v["answers"] = json!(s.answers);
    v["ended"] = s
        .ended
        .as_ref()
        .map_or(Value::Null, |e| ended_json(slos, e));
    v
}

/// How a step ended, as the JSON reports give it (`steps[].ended`): `{by: "decided",
/// met, bounds: [{slo, side, value}], words}` (no bounds for a stored step: the store
/// keeps how it ended, not its bounds) or `{by: "deadline", words}` or `{by: "passed",
/// words}`; a bound's value in the SLO's unit (ms for latency, % for errors, a count).
fn ended_json(slos: &[String], e: &Ended) -> Value {
    let words = ended_words(slos, e);
    match e {
        Ended::Deadline => json!({"by": "deadline", "words": words}),
        Ended::Passed => json!({"by": "passed", "words": words}),
        Ended::Full => json!({"by": "full", "words": words}),
        Ended::Decided(d) => {
            let bounds: Vec<Value> = d
                .bounds
                .iter()
                .map(|b| {
                    let ms = slos
                        .get(b.slo)
                        .and_then(|t| t.parse::<Threshold>().ok())
                        .is_some_and(|t| t.metric.is_latency());
                    json!({
                        "slo": slos.get(b.slo),
                        "side": if b.upper { "upper" } else { "lower" },
                        "value": if ms { round(b.value / 1e3, 3) } else { round(b.value, 6) },
                    })
                })
                .collect();
            json!({"by": "decided", "met": d.met, "bounds": bounds, "words": words})
        }
    }
}

/// The JSON document.
pub fn capacity_json(r: &CapacityReport) -> String {
    let c = r.capacity;
    let steps: Vec<Value> = r
        .steps
        .iter()
        .map(|s| measured_step_json(r.slos, s))
        .collect();
    let limited_by = limit_json(r.slos, &c.limited_by);
    let doc = json!({
        "url": r.url,
        "unit": r.unit,
        "slos": r.slos,
        "step_end": r.end_rule.name(),
        "interrupted": r.interrupted,
        "machine": r.machine,
        "capacity": {
            "max_rps": c.max_rps.map(|x| round(x, 3)),
            "first_failing_rps": c.first_failing_rps.map(|x| round(x, 3)),
            "interval": [c.max_rps.map(|x| round(x, 3)), c.first_failing_rps.map(|x| round(x, 3))],
            "limited_by": limited_by,
            "boundary": r.boundary.iter().map(|d| decision_json(r.slos, d)).collect::<Vec<_>>(),
            "steps": steps,
        },
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rate: f64, p99: f64, verdict: Verdict) -> Measured {
        Measured {
            rate,
            achieved: rate,
            p50_ms: p99 / 4.0,
            p99_ms: p99,
            p999_ms: p99 * 2.0,
            errors_pct: 0.0,
            kept: verdict != Verdict::NotKept,
            late: (verdict == Verdict::NotKept).then_some(NotKept::Generator),
            busiest_thread: 0.3,
            capped: false,
            verdict,
            ended: None,
            measured: std::time::Duration::from_secs(5),
            answers: 5 * rate as u64,
        }
    }

    #[test]
    fn the_headline_gives_the_capacity_its_interval_and_what_broke() {
        let slos = vec!["p99<50ms".to_string(), "errors<0.1%".to_string()];
        let steps = vec![
            step(1000.0, 3.0, Verdict::Met),
            step(2000.0, 80.0, Verdict::Broke(0)),
            step(1410.0, 20.0, Verdict::Met),
        ];
        let c = Capacity {
            max_rps: Some(1410.0),
            first_failing_rps: Some(2000.0),
            limited_by: Limit::Slo(0),
        };
        let boundary = [
            Decision {
                rate: 1410.0,
                steps: 2,
                verdict: Verdict::Met,
                basis: Basis::Interval,
            },
            Decision {
                rate: 2000.0,
                steps: 5,
                verdict: Verdict::Broke(0),
                basis: Basis::Pooled,
            },
        ];
        let r = CapacityReport {
            unit: "req/s",
            url: "http://127.0.0.1:8080/",
            slos: &slos,
            steps: &steps,
            capacity: &c,
            boundary: &boundary,
            interrupted: false,
            machine: &[],
            end_rule: EndRule::Decided,
        };
        let text = capacity_text(&r);
        assert!(
            text.contains("Boundary: 1410 req/s met in 2 steps (every SLO's 95% interval held); 2000 req/s broke p99<50ms in 5 steps (unclear, and all their requests together broke it)"),
            "{text}"
        );
        assert!(
            text.contains("Capacity: 1410 req/s within p99<50ms, errors<0.1% (between 1410 and 2000 req/s: p99<50ms did not hold at 2000)"),
            "{text}"
        );
        assert!(text.contains("broke p99<50ms"), "{text}");
        let v: Value = serde_json::from_str(&capacity_json(&r)).unwrap();
        assert_eq!(v["capacity"]["max_rps"], 1410.0);
        assert_eq!(v["capacity"]["interval"][1], 2000.0);
        assert_eq!(v["capacity"]["limited_by"]["slo"], "p99<50ms");
        assert_eq!(v["capacity"]["steps"][1]["broke"], "p99<50ms");
        assert_eq!(v["capacity"]["steps"].as_array().unwrap().len(), 3);
        let b = &v["capacity"]["boundary"];
        assert_eq!(
            (b[0]["rate"].as_f64(), b[0]["steps"].as_u64()),
            (Some(1410.0), Some(2))
        );
        assert_eq!(
            (b[0]["verdict"].as_str(), b[0]["decided_by"].as_str()),
            (Some("met"), Some("interval"))
        );
        assert_eq!(
            (b[1]["broke"].as_str(), b[1]["decided_by"].as_str()),
            (Some("p99<50ms"), Some("pooled"))
        );
    }

    /// A search whose first rate already broke its SLO said only "below 100 req/s, the
    /// lowest rate tried": it now says how to start lower.
    #[test]
    fn a_capacity_below_the_first_rate_says_how_to_start_lower() {
        let slos = vec!["p99<50ms".to_string()];
        let steps = vec![step(100.0, 280.0, Verdict::Broke(0))];
        let c = Capacity {
            max_rps: None,
            first_failing_rps: Some(100.0),
            limited_by: Limit::Slo(0),
        };
        let r = CapacityReport {
            unit: "req/s",
            url: "http://127.0.0.1:8000/",
            slos: &slos,
            steps: &steps,
            capacity: &c,
            boundary: &[],
            interrupted: false,
            machine: &[],
            end_rule: EndRule::Decided,
        };
        let text = capacity_text(&r);
        assert!(
            text.contains("Capacity: below 100 req/s, the lowest rate tried: p99<50ms did not hold there (start lower: --from, or find_max's from in a plan)\n"),
            "{text}"
        );
    }

    /// The SLO broke where every connection allowed was busy: the report says the cap
    /// held the rate back, in words and as `connection_cap`.
    #[test]
    fn an_slo_broken_at_the_connection_cap_is_told_apart() {
        let slos = vec!["p99<50ms".to_string()];
        let mut broke = step(2000.0, 80.0, Verdict::Broke(0));
        broke.capped = true;
        let steps = vec![step(1000.0, 3.0, Verdict::Met), broke];
        let found = Capacity {
            max_rps: Some(1000.0),
            first_failing_rps: Some(2000.0),
            limited_by: Limit::Slo(0),
        };
        let c = shootout_analysis::capacity::at_cap(found.clone(), &steps);
        assert_eq!(c.limited_by, Limit::ConnectionCap(0));
        // A cap reached only at a rate that met its SLOs limits nothing.
        let mut met = step(1000.0, 3.0, Verdict::Met);
        met.capped = true;
        let uncapped = [met, step(2000.0, 80.0, Verdict::Broke(0))];
        let same = shootout_analysis::capacity::at_cap(found, &uncapped);
        assert_eq!(same.limited_by, Limit::Slo(0));
        let r = CapacityReport {
            unit: "req/s",
            url: "http://127.0.0.1:8080/",
            slos: &slos,
            steps: &steps,
            capacity: &c,
            boundary: &[],
            interrupted: false,
            machine: &[],
            end_rule: EndRule::Decided,
        };
        let text = capacity_text(&r);
        assert!(!text.contains("Boundary:"), "{text}");
        assert!(
            text.contains("(between 1000 and 2000 req/s: p99<50ms did not hold at 2000, every connection allowed busy (raise --max-connections"),
            "{text}"
        );
        let v: Value = serde_json::from_str(&capacity_json(&r)).unwrap();
        assert_eq!(v["capacity"]["limited_by"]["kind"], "connection_cap");
        assert_eq!(v["capacity"]["limited_by"]["slo"], "p99<50ms");
    }

    /// A search stopped by a schedule its generator did not keep blames its own loop only
    /// when the loop was busy: at 14 % busy it says the threads waited for a CPU, in the
    /// answer and in the step's `sends` word, with the legend under the table.
    #[test]
    fn a_generator_kept_off_its_cpu_is_not_blamed_for_its_loop() {
        let slos = vec!["p99<50ms".to_string()];
        let found = Capacity {
            max_rps: Some(1000.0),
            first_failing_rps: Some(2000.0),
            limited_by: Limit::Generator,
        };
        let text = |late: NotKept, busiest_thread: f64| {
            let mut not_kept = step(2000.0, 80.0, Verdict::NotKept);
            not_kept.late = Some(late);
            not_kept.busiest_thread = busiest_thread;
            let steps = [step(1000.0, 3.0, Verdict::Met), not_kept];
            capacity_text(&CapacityReport {
                unit: "req/s",
                url: "http://127.0.0.1:8080/",
                slos: &slos,
                steps: &steps,
                capacity: &found,
                boundary: &[],
                interrupted: false,
                machine: &[],
                end_rule: EndRule::Decided,
            })
        };
        let starved = text(NotKept::Starved, 0.14);
        assert!(
            starved.contains("though its busiest thread was busy only 14% of the time: its threads waited for a CPU")
                && !starved.contains("add --threads"),
            "{starved}"
        );
        let row = starved.lines().find(|l| l.contains("not judged")).unwrap();
        assert!(row.contains("late (no CPU)"), "{row}");
        assert!(starved.contains("\nsends: on time ("), "{starved}");
        let busy = text(NotKept::Generator, 0.95);
        assert!(
            busy.contains("the generator could not keep the schedule (add --threads")
                && !busy.contains("waited for a CPU that"),
            "{busy}"
        );
        let row = busy.lines().find(|l| l.contains("not judged")).unwrap();
        assert!(row.contains("late (shootout)"), "{row}");
    }

    /// How a step ended, in words: each deciding bound with its side and the SLO's limit,
    /// the bound shown with as many figures as keep it on its side of the limit.
    #[test]
    fn a_step_says_how_it_ended() {
        use shootout_analysis::decided::{Bound, Decided};
        let slos = vec!["p99<50ms".to_string(), "errors<0.1%".to_string()];
        let decided = |met, bounds: &[(usize, f64, bool)]| {
            Ended::Decided(Decided {
                met,
                bounds: bounds
                    .iter()
                    .map(|&(slo, value, upper)| Bound { slo, value, upper })
                    .collect(),
            })
        };
        assert_eq!(
            ended_words(&slos, &decided(true, &[(0, 1_203.0, true), (1, 0.099_807_9, true)])),
            "decided: met — p99 ≤ 1.203 ms (95% upper bound) < 50ms, errors ≤ 0.0999% (95% upper bound) < 0.1%"
        );
        // Close under the limit: more figures, never rounded onto it.
        assert_eq!(
            ended_words(&slos, &decided(true, &[(1, 0.099_998_1, true)])),
            "decided: met — errors ≤ 0.099999% (95% upper bound) < 0.1%"
        );
        assert_eq!(
            ended_words(&slos, &decided(false, &[(0, 80_000.0, false)])),
            "decided: broken — p99 ≥ 80.000 ms (at its deadline, whatever comes) ≥ 50ms"
        );
        assert_eq!(
            ended_words(&slos, &decided(false, &[(1, 0.663_687_9, false)])),
            "decided: broken — errors ≥ 0.663% (at its deadline, whatever comes) ≥ 0.1%"
        );
        assert_eq!(ended_words(&slos, &Ended::Deadline), "deadline: undecided");
        assert_eq!(
            ended_words(&slos, &Ended::Full),
            "full — ran to its deadline, as every step of a search by the fixed rule"
        );
        assert_eq!(ended_json(&slos, &Ended::Full)["by"], "full");
        // A stored step: the store keeps how it ended, not its bounds.
        assert_eq!(ended_words(&slos, &decided(true, &[])), "decided: met");
        assert_eq!(ended_words(&slos, &decided(false, &[])), "decided: broken");
        // The table's cell: the words before the bounds; `-` where not known.
        // A decision the step's whole verdict turned (answers in flight when it ended)
        // says so.
        for (ended, verdict, cell) in [
            (
                Some(decided(true, &[(0, 1_203.0, true)])),
                Verdict::Met,
                "decided: met",
            ),
            (
                Some(decided(false, &[])),
                Verdict::Broke(0),
                "decided: broken",
            ),
            (
                Some(decided(true, &[])),
                Verdict::Broke(1),
                "decided: met, overturned",
            ),
            (
                Some(decided(false, &[])),
                Verdict::Met,
                "decided: broken, overturned",
            ),
            (
                Some(Ended::Deadline),
                Verdict::Broke(0),
                "deadline: undecided",
            ),
            (Some(Ended::Passed), Verdict::Met, "passed"),
            (Some(Ended::Full), Verdict::Met, "full"),
            (None, Verdict::Met, "-"),
        ] {
            let mut m = step(100.0, 2.0, verdict);
            m.ended = ended;
            assert_eq!(ended_cell(&slos, &m), cell);
        }
        let stored = ended_json(&slos, &decided(true, &[]));
        assert_eq!(
            stored,
            json!({"by": "decided", "met": true, "bounds": [], "words": "decided: met"})
        );
    }

    /// A rung of the ramp that plainly passed says `passed`, not `met`, in its verdict
    /// (table, stderr, JSON) and how it ended; a step that ended so but broke an SLO as a
    /// whole keeps its verdict.
    #[test]
    fn a_rung_that_plainly_passed_says_passed_not_met() {
        let slos = vec!["p99<50ms".to_string()];
        let mut m = step(100.0, 2.0, Verdict::Met);
        m.ended = Some(Ended::Passed);
        assert_eq!(step_verdict_words(&slos, &m), "passed");
        assert_eq!(step_row(&slos, &m)[7], "passed");
        assert_eq!(step_json(&slos, &m)["verdict"], "passed");
        let e = ended_json(&slos, &Ended::Passed);
        assert_eq!(e["by"], "passed");
        assert!(e["words"]
            .as_str()
            .unwrap()
            .starts_with("passed — every SLO under half"));
        m.ended = Some(Ended::Deadline);
        assert_eq!(step_json(&slos, &m)["verdict"], "met");
        let mut broke = step(100.0, 60.0, Verdict::Broke(0));
        broke.ended = Some(Ended::Passed);
        assert_eq!(step_verdict_words(&slos, &broke), "broke p99<50ms");
        let report = CapacityReport {
            url: "http://127.0.0.1/",
            unit: "req/s",
            slos: &slos,
            steps: &[m.clone(), {
                let mut p = m.clone();
                p.ended = Some(Ended::Passed);
                p
            }],
            capacity: &Capacity {
                max_rps: Some(100.0),
                first_failing_rps: None,
                limited_by: Limit::Ceiling,
            },
            boundary: &[],
            interrupted: false,
            machine: &[],
            end_rule: EndRule::Decided,
        };
        let text = capacity_text(&report);
        assert!(text.contains(" passed "), "{text}");
        assert!(text.contains("or passed (a rung of the ramp"), "{text}");
    }

    /// A search by the fixed rule says so: a line above its table, `step_end` in its
    /// JSON, and each step's `ended` is `full`; a search by the default rule says
    /// `decided` and has no such line.
    #[test]
    fn a_search_by_the_fixed_rule_says_so() {
        let slos = vec!["p99<50ms".to_string()];
        let mut m = step(100.0, 2.0, Verdict::Met);
        m.ended = Some(Ended::Full);
        let steps = [m];
        let capacity = Capacity {
            max_rps: Some(100.0),
            first_failing_rps: None,
            limited_by: Limit::Ceiling,
        };
        let report = |end_rule| CapacityReport {
            url: "http://127.0.0.1/",
            unit: "req/s",
            slos: &slos,
            steps: &steps,
            capacity: &capacity,
            boundary: &[],
            interrupted: false,
            machine: &[],
            end_rule,
        };
        let text = capacity_text(&report(EndRule::Deadline));
        assert!(text.contains(&format!("\n{FIXED_RULE_LINE}\n")), "{text}");
        assert!(!capacity_text(&report(EndRule::Decided)).contains("Steps: "));
        let json = |rule| -> Value { serde_json::from_str(&capacity_json(&report(rule))).unwrap() };
        let fixed = json(EndRule::Deadline);
        assert_eq!(fixed["step_end"], "deadline");
        assert_eq!(fixed["capacity"]["steps"][0]["ended"]["by"], "full");
        assert_eq!(json(EndRule::Decided)["step_end"], "decided");
    }
}
