//! The words the reports of a run share: a cell's label, the "times faster" phrase, the
//! `steps` fact, and one line per [`RunWarning`] for the text, Markdown and JSON reports
//! (each warning's sentence is worded once, in `sentences.rs`, which the HTML report reads
//! too). Nothing is decided here: the numbers and the conditions come from
//! `shootout-analysis`.

use crate::grid::at_label;
use crate::grid::plural;
use crate::sentences::{load_text, noise_advice, noisy_text, sentence};
use shootout_analysis::cells::{Ratio, WorkloadBlock};
use shootout_analysis::evidence::Difference;
use shootout_analysis::ranking::Ranking;
use shootout_analysis::{Analysis, RunWarning, Unit};
use shootout_model::{LoadLevel, Protocol};

/// What a WebSocket workload's requests are, beside its name in the run's reports, in
/// the words of `shootout load`'s report: ` (WebSocket: a request is a message and its
/// reply)`, or for held connections ` (WebSocket, connections held: a request is a ping
/// and its pong)`. Taken from the stored plan (its message kind), else from the steps
/// (every one spoken over WebSocket); empty for an HTTP workload.
pub(crate) fn websocket_note(a: &Analysis, w: &WorkloadBlock) -> &'static str {
    let stored = a.plan.as_ref().and_then(|p| {
        let rw = p.workloads.iter().find(|rw| rw.name == w.name)?;
        Some((
            rw.protocol == "websocket",
            rw.message.as_deref() == Some("hold"),
        ))
    });
    let mut cells = w.levels.iter().flat_map(|l| &l.cells);
    let (ws, hold) = stored.unwrap_or_else(|| {
        let spoken = cells.all(|c| c.wire.is_some_and(|x| x.protocol == Protocol::WebSocket));
        (spoken && !w.levels.is_empty(), false)
    });
    match (ws, hold) {
        (false, _) => "",
        (true, false) => " (WebSocket: a request is a message and its reply)",
        (true, true) => " (WebSocket, connections held: a request is a ping and its pong)",
    }
}

/// What a streaming gRPC workload's counts are, beside its name in the run's reports,
/// in the words of `shootout load`'s unit (`load.unit`): ` (gRPC bidi streaming: a
/// message and its reply count as one)`; its table's rates are in that unit (replies/s,
/// messages/s, calls/s: [`shootout_analysis::Unit`]). Taken from the stored steps' calls
/// (their shape, schema 25); empty for any other workload, and for steps stored before.
pub(crate) fn stream_note(w: &WorkloadBlock) -> &'static str {
    let shape = w
        .steps()
        .find_map(|s| s.result.stream.as_deref().map(|st| st.shape));
    stream_note_of(shape)
}

/// [`stream_note`] of a step's stream `shape`.
fn stream_note_of(shape: Option<&str>) -> &'static str {
    match shape {
        Some("server") => " (gRPC server streaming: each reply of a call counts as one)",
        Some("bidi") => " (gRPC bidi streaming: a message and its reply count as one)",
        Some("client") => " (gRPC client streaming: a call of its messages counts as one)",
        _ => "",
    }
}

/// What a streaming gRPC run's counts are, in the words of [`stream_note`] without its
/// parentheses: `gRPC bidi streaming: a message and its reply count as one`; empty for
/// any other shape.
pub(crate) fn stream_words(shape: &str) -> &'static str {
    let note = stream_note_of(Some(shape));
    note.strip_prefix(" (")
        .and_then(|n| n.strip_suffix(')'))
        .unwrap_or("")
}

/// The unit a streaming gRPC step's counts count, in the words of `shootout load`'s
/// `load.unit`: `reply` (server streaming), `message` (bidirectional: a message and its
/// reply), `call` (client streaming); `None` for any other shape.
pub(crate) fn stream_unit(shape: &str) -> Option<&'static str> {
    Unit::of_shape(shape).map(Unit::word)
}

/// ab's percentile rows of the "served within" table (100 is the slowest request).
pub const SERVED_PERCENTS: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// A workload's answer in words, names from `name`: `nginx is first at every level,
/// 28–39× http.server; a significant difference at 3 of 3 levels`.
pub(crate) fn headline_sentence<'n>(
    h: &shootout_analysis::headline::Headline,
    name: impl Fn(usize) -> &'n str,
) -> String {
    use shootout_analysis::headline::Answer;
    let times = |x: f64| {
        if x >= 10.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.2}")
        }
    };
    match &h.answer {
        Answer::Winner {
            winner,
            second,
            ratio: (low, high),
            sure,
            levels,
        } => {
            let span = if times(*low) == times(*high) {
                format!("{}×", times(*low))
            } else {
                format!("{}–{}×", times(*low), times(*high))
            };
            let second = second.map_or("the next", &name);
            match (*sure, *levels) {
                (1, 1) => format!("{} is first, {span} {second}", name(*winner)),
                (s, l) if s == l => format!(
                    "{} is first at every level, {span} {second}, significantly at all {l}",
                    name(*winner)
                ),
                (s, l) => format!(
                    "{} is ahead at {s} of {l} levels, {span} {second} there; no significant difference at the others",
                    name(*winner)
                ),
            }
        }
        Answer::Tie { levels } => format!(
            "no significant difference between the first two at any of the {} tested",
            plural(*levels, "level", "levels")
        ),
        Answer::Depends(leads) => {
            // Each level's first with its margin over the second: the answer says by how
            // much, as a winner's does.
            let each: Vec<String> = leads
                .iter()
                .map(|l| match l.ratio {
                    Some(r) => format!(
                        "{} {} ({}× {})",
                        l.level,
                        name(l.first),
                        times(r),
                        name(l.second)
                    ),
                    None => format!("{} {}", l.level, name(l.first)),
                })
                .collect();
            format!("the first depends on the level: {}", each.join(", "))
        }
        Answer::Untested => "too little evidence to rank the contenders: too few repetitions and seconds to test a difference (raise repeat, lengthen the steps, or drop --quick)".into(),
    }
}

/// The title of a level's "served within" table (after ab's own), of the workload's
/// `unit`: `Percentage of the requests served …`, or `of the calls` for gRPC.
pub(crate) fn served_title(level: LoadLevel, unit: Unit) -> String {
    format!(
        "Percentage of the {} served within a certain time (ms), {level}",
        unit.plural()
    )
}

/// `run 3`, or `runs 3, 5` for runs read as one (`shootout report --runs`).
pub(crate) fn runs_label(run: &shootout_model::stored::StoredRun) -> String {
    if run.also.is_empty() {
        return format!("run {}", run.run.id);
    }
    let ids: Vec<String> = std::iter::once(run.run.id)
        .chain(run.also.iter().copied())
        .map(|id| id.to_string())
        .collect();
    format!("runs {} (read as one)", ids.join(", "))
}

/// What the signs of a workload's ranking lines mean, printed once above them; the rate
/// in the workload's `unit` (`good-answer req/s`, `good-answer calls/s`).
pub(crate) fn ranking_legend(unit: Unit) -> String {
    format!(
        "Ranking by good-answer {} (≫ significantly faster by 2× or more, > significantly faster, ≈ no significant difference, ? too little evidence; 95% confidence for this run, neighbours only)",
        unit.per_second()
    )
}

/// `c=120: nginx ≫ httpd ≈ handler > uwsgi` for each level of workload `w` with two or
/// more contenders.
/// A line with a `?` says why there was too little evidence and what to do: `(?: 1
/// repetition of 1 s per contender; raise repeat or lengthen the steps, or drop --quick)`.
pub(crate) fn ranking_lines(a: &Analysis, w: &WorkloadBlock) -> Vec<String> {
    w.levels
        .iter()
        .filter_map(|l| Ranking::of(w.name, l).map(|r| (l, r)))
        .map(|(l, r)| {
            let line = r.line(|i| a.name(i));
            let untested = r
                .steps
                .iter()
                .any(|s| s.relation == shootout_analysis::ranking::Relation::Untested);
            if !untested {
                return line;
            }
            let reps = l.cells.iter().map(|c| c.steps.len()).min().unwrap_or(0);
            let secs = l
                .cells
                .iter()
                .flat_map(|c| c.steps.iter().map(|s| s.result.duration.as_secs_f64()))
                .fold(f64::INFINITY, f64::min);
            format!(
                "{line} (?: {} of {} s per contender; raise repeat or lengthen the steps, or drop --quick)",
                plural(reps, "repetition", "repetitions"),
                crate::units::trim_float((secs * 10.0).round() / 10.0)
            )
        })
        .collect()
}

/// `("1.04 times slower", "this run's 95% interval 1.02–1.06; significantly slower")`: the ratio and
/// the interval of the test behind the rankings (`d`, the contender over the baseline),
/// beside its verdict, so that one figure is given for both; with too little evidence to
/// test, the ratio of the medians (`r`) and what to do.
pub(crate) fn ratio_phrase(r: &Ratio, d: Option<&Difference>) -> (String, String) {
    let Some(d) = d else {
        let word = if r.faster { "faster" } else { "slower" };
        return (
            format!("{:.2} times {word}", r.times),
            "too little evidence for a 95% interval: add repetitions or lengthen the steps".into(),
        );
    };
    let (times, interval) = oriented_ratio(d.ratio, d.low, d.high);
    let verdict = if d.significant() {
        format!(
            "significantly {}",
            if d.ratio >= 1.0 { "faster" } else { "slower" }
        )
    } else {
        "no significant difference".to_string()
    };
    (
        times,
        format!("this run's 95% interval {interval}; {verdict}"),
    )
}

/// `("1.04 times slower", "1.02–1.06")`: B over A's `ratio` and its 95% interval
/// `low`–`high`, both said in the verdict's own orientation (a slower B's interval is of
/// A over B), with as many decimals as it takes for an interval that excludes 1 never to
/// print 1.00 at its near end. An interval that crosses 1 names each end's direction:
/// `1.14 times faster to 1.38 times slower`.
pub(crate) fn oriented_ratio(ratio: f64, low: f64, high: f64) -> (String, String) {
    let (times, lo, hi, word, other) = if ratio >= 1.0 {
        (ratio, low, high, "faster", "slower")
    } else {
        (1.0 / ratio, 1.0 / high, 1.0 / low, "slower", "faster")
    };
    let round = |x: f64, d: usize| (x * 10f64.powi(d as i32)).round() / 10f64.powi(d as i32);
    // The fewest decimals (2 to 6) at which `near`, an interval's end nearest 1, still
    // reads above 1 when it is above 1.
    let decimals = |near: f64| {
        (2..=6)
            .find(|&d| near == 1.0 || round(near, d) > 1.0)
            .unwrap_or(6)
    };
    if lo >= 1.0 {
        let d = decimals(lo);
        (
            format!("{times:.d$} times {word}"),
            format!("{lo:.d$}–{hi:.d$}"),
        )
    } else if hi <= 1.0 {
        // The whole interval on the other side of 1 (the estimate is not in it).
        let (near, far) = (1.0 / hi, 1.0 / lo);
        let d = decimals(near);
        (
            format!("{times:.d$} times {word}"),
            format!("{near:.d$}–{far:.d$} times {other}"),
        )
    } else {
        (
            format!("{times:.2} times {word}"),
            format!("{:.2} times {other} to {hi:.2} times {word}", 1.0 / lo),
        )
    }
}

/// The value of the `steps` fact: `12 (2 contenders × 1 workload × 3 levels × 2
/// repetitions)` when every planned step was measured, `9 of 12 planned (…)` when not.
pub(crate) fn steps_line(a: &Analysis) -> String {
    let searched = a.run.steps.iter().filter(|s| s.search.is_some()).count();
    let n = a.run.steps.len() - searched;
    let search = search_words(a, searched);
    let planned = a.plan.as_ref().map_or(0, |p| p.searched_workloads());
    if n == 0 && (searched > 0 || planned > 0) {
        return search;
    }
    let swept = sweep_line(a, n);
    if searched == 0 && planned == 0 {
        swept
    } else {
        format!("{swept}; {search}")
    }
}

/// `62 capacity search steps (2 contenders × 1 workload × 2 repetitions, as many steps as
/// each search needs)`.
fn search_words(a: &Analysis, n: usize) -> String {
    let contenders = a
        .capacities
        .iter()
        .map(|w| w.contenders.len())
        .max()
        .unwrap_or(0);
    let workloads = a
        .plan
        .as_ref()
        .map_or(a.capacities.len(), |p| p.searched_workloads());
    let reps = a.plan.as_ref().and_then(|p| p.repeat).unwrap_or(0) as usize;
    format!(
        "{n} capacity search steps ({} × {} × {}, as many steps as each search needs)",
        plural(contenders, "contender", "contenders"),
        plural(workloads, "workload", "workloads"),
        plural(reps, "repetition", "repetitions")
    )
}

/// The sweep's steps, `n`, against its planned shape.
fn sweep_line(a: &Analysis, n: usize) -> String {
    let (c, w, l, r) = a.planned_shape();
    let mut shape = format!(
        "{} × {} × {} × {}",
        plural(c, "contender", "contenders"),
        plural(w, "workload", "workloads"),
        plural(l, "level", "levels"),
        plural(r, "repetition", "repetitions")
    );
    // Runs read as one planned their steps each.
    let runs = 1 + a.run.also.len();
    if runs > 1 {
        shape.push_str(&format!(" × {runs} runs"));
    }
    let total = c * w * l * r * runs;
    if n == total {
        format!("{n} ({shape})")
    } else {
        format!("{n} of {total} planned ({shape})")
    }
}

/// The warning as one line of the text, Markdown and JSON reports: its sentence, or a
/// cell's warning after its kind and cell.
pub(crate) fn warning_message(w: &RunWarning) -> String {
    match w {
        RunWarning::Load { at, warning, .. } => format!(
            "{}: {}: {}",
            warning.kind().replace('_', " "),
            at_label(at),
            load_text(w)
        ),
        RunWarning::Noisy { at, pinned, .. } => format!(
            "noisy: {}: {} ({})",
            at_label(at),
            noisy_text(w),
            noise_advice(*pinned)
        ),
        _ => sentence(w).map(|s| s.to_string()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_analysis::headline::{Answer, Headline, Lead};

    #[test]
    fn a_headline_says_who_won_by_how_much_and_how_sure() {
        let names = ["nginx", "http.server"];
        let say = |answer| {
            headline_sentence(
                &Headline {
                    workload: "GET /".into(),
                    answer,
                },
                |i| names[i],
            )
        };
        assert_eq!(
            say(Answer::Winner {
                winner: 0,
                second: Some(1),
                ratio: (28.4, 39.1),
                sure: 3,
                levels: 3
            }),
            "nginx is first at every level, 28–39× http.server, significantly at all 3"
        );
        assert_eq!(
            say(Answer::Winner {
                winner: 1,
                second: None,
                ratio: (1.234, 1.234),
                sure: 1,
                levels: 1
            }),
            "http.server is first, 1.23× the next"
        );
        assert_eq!(
            say(Answer::Winner {
                winner: 0,
                second: Some(1),
                ratio: (1.03, 1.42),
                sure: 2,
                levels: 3
            }),
            "nginx is ahead at 2 of 3 levels, 1.03–1.42× http.server there; no significant difference at the others"
        );
        assert_eq!(
            say(Answer::Depends(vec![
                Lead {
                    level: "c=1".into(),
                    first: 0,
                    second: 1,
                    ratio: Some(1.234)
                },
                Lead {
                    level: "c=64".into(),
                    first: 1,
                    second: 0,
                    ratio: Some(31.0)
                }
            ])),
            "the first depends on the level: c=1 nginx (1.23× http.server), c=64 http.server (31× nginx)"
        );
        assert!(say(Answer::Untested).contains("drop --quick"));
        assert!(say(Answer::Tie { levels: 2 }).contains("any of the 2 levels tested"));
    }

    /// Each verdict's interval in its own orientation, said so that it cannot
    /// contradict it: `1.06 times slower (95% interval 0.88–1.38)` was of the other
    /// orientation's ends, and `1.04 times faster (1.00–1.09)` was called significant.
    #[test]
    fn ratio_intervals_are_said_in_their_verdicts_orientation_and_never_touch_one_when_clear() {
        let o = |r, lo, hi| {
            let (t, i) = oriented_ratio(r, lo, hi);
            format!("{t} ({i})")
        };
        // Faster, clear of 1: two decimals.
        assert_eq!(o(1.25, 1.21, 1.30), "1.25 times faster (1.21–1.30)");
        // Slower: the interval of A over B, ends swapped.
        assert_eq!(
            o(0.8, 1.0 / 1.3, 1.0 / 1.21),
            "1.25 times slower (1.21–1.30)"
        );
        // A low end just over 1 keeps the decimals that show it over 1.
        assert_eq!(o(1.04, 1.004, 1.09), "1.040 times faster (1.004–1.090)");
        assert_eq!(
            o(1.0 / 1.04, 1.0 / 1.09, 1.0 / 1.0004),
            "1.0400 times slower (1.0004–1.0900)"
        );
        // An interval across 1: each end in its own direction.
        assert_eq!(
            o(1.0 / 1.06, 1.0 / 1.38, 1.0 / 0.88),
            "1.06 times slower (1.14 times faster to 1.38 times slower)"
        );
        // Touching 1: printed as it is (and no verdict calls it significant).
        assert_eq!(o(1.04, 1.0, 1.09), "1.04 times faster (1.00–1.09)");
    }
}
