//! The words the text, Markdown and JSON reports of a run share: a cell's label, the
//! "times faster" phrase, the `steps` fact, and one line per [`RunWarning`] (the HTML
//! report words the same warnings its own way, in `html/warnings.rs`). Nothing is decided
//! here: the numbers and the conditions come from `shootout-analysis`.

use crate::grid::plural;
use shootout_analysis::cells::{Ratio, WorkloadBlock};
use shootout_analysis::evidence::Difference;
use shootout_analysis::ranking::Ranking;
use shootout_analysis::{Analysis, CellAt, RunWarning};
use shootout_model::{ContenderStatus, LoadLevel, OtherLoad, RunStatus, StepStatus, Warning};

/// ab's percentile rows of the "served within" table (100 is the slowest request).
pub const SERVED_PERCENTS: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// The title of a level's "served within" table (after ab's own).
pub(crate) fn served_title(level: LoadLevel) -> String {
    format!("Percentage of the requests served within a certain time (ms), {level}")
}

/// `nginx · hello · c=8`.
pub fn cell_label(contender: &str, workload: &str, level: LoadLevel) -> String {
    format!("{contender} · {workload} · {level}")
}

/// [`cell_label`] of a warning's cell.
pub(crate) fn at_label(at: &CellAt) -> String {
    cell_label(&at.contender, &at.workload, at.level)
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

/// What the signs of a ranking line mean, printed once above the lines.
pub const RANKING_LEGEND: &str = "Ranking by good-answer req/s (≫ significantly faster by 2× or more, > significantly faster, ≈ no significant difference, ? too little evidence; 95% confidence, neighbours only)";

/// `c=120: nginx ≫ httpd ≈ handler > uwsgi` for each level of workload `w` with two or
/// more contenders.
pub(crate) fn ranking_lines(a: &Analysis, w: &WorkloadBlock) -> Vec<String> {
    w.levels
        .iter()
        .filter_map(|l| Ranking::of(w.name, l))
        .map(|r| r.line(|i| a.name(i)))
        .collect()
}

/// `("1.04 times slower", "95% interval 1.02–1.06; significantly slower")`: the ratio and
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
    let (times, low, high, word) = if d.ratio >= 1.0 {
        (d.ratio, d.low, d.high, "faster")
    } else {
        (1.0 / d.ratio, 1.0 / d.high, 1.0 / d.low, "slower")
    };
    let verdict = if d.significant() {
        format!("significantly {word}")
    } else {
        "no significant difference".to_string()
    };
    (
        format!("{times:.2} times {word}"),
        format!("95% interval {low:.2}–{high:.2}; {verdict}"),
    )
}

/// The value of the `steps` fact: `12 (2 contenders × 1 workload × 3 levels × 2
/// repetitions)` when every planned step was measured, `9 of 12 planned (…)` when not.
pub(crate) fn steps_line(a: &Analysis) -> String {
    let n = a.run.steps.len();
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

/// What a noisy cell's warning advises: pinning, unless the plan already pinned the
/// contenders and the load to CPUs.
pub(crate) fn noise_advice(pinned: bool) -> &'static str {
    if pinned {
        "add repetitions or lengthen the steps; server and load are already pinned apart"
    } else {
        "add repetitions or lengthen the steps, and pin server and load to different CPUs"
    }
}

/// The warning as one line of the text, Markdown and JSON reports.
pub(crate) fn warning_message(w: &RunWarning) -> String {
    match w {
        RunWarning::RunEnded { status, steps } => run_ended(*status, *steps),
        RunWarning::BaselineNotMeasured { marked, used } => format!(
            "the baseline {marked} was not measured: the others are compared with {used}"
        ),
        RunWarning::NotMeasured {
            contender,
            status,
            has_steps,
            ..
        } => format!("{contender} {}", not_measured(*status, *has_steps)),
        RunWarning::StepEndedEarly {
            at,
            repetition,
            status,
        } => {
            let what = match status {
                StepStatus::Interrupted => "was interrupted (Ctrl-C): it is shorter than the others",
                StepStatus::ContenderDied | StepStatus::Complete => {
                    "ended when the contender died: its numbers cover the part before"
                }
            };
            format!("{} repetition {repetition} {what}", at_label(at))
        }
        RunWarning::Load { .. } => load_message(w),
        RunWarning::Noisy {
            at,
            rps_min,
            rps_max,
            range_share,
            reps,
            pinned,
            ..
        } => format!(
            "noisy: {}: req/s ranged {rps_min:.0}–{rps_max:.0} over {reps} repetitions, {:.0}% of the median ({})",
            at_label(at),
            range_share * 100.0,
            noise_advice(*pinned)
        ),
        RunWarning::BusyMachine {
            at,
            busiest,
            found_in,
            reps,
        } => format!(
            "busy machine: {}: {}",
            at_label(at),
            busy_text(busiest, *found_in, *reps)
        ),
    }
}

/// What ran besides a cell's steps, after its label: in how many repetitions, the busiest
/// one's figures, and what to do.
pub fn busy_text(o: &OtherLoad, found_in: usize, reps: usize) -> String {
    let of = if reps > 1 {
        format!(" in {found_in} of {reps} repetitions")
    } else {
        String::new()
    };
    format!(
        "the machine was not quiet{of} ({}): measure again when nothing else runs",
        other_load_figures(o)
    )
}

/// `other processes used 0.85 CPU of the 2 watched, steal 0.0%, load average 3.10`: what
/// ran besides a step or a load, as its warning says it.
pub(crate) fn other_load_figures(o: &OtherLoad) -> String {
    let others = match o.others {
        Some(c) => format!(
            "other processes used {c:.2} CPU of the {} watched, ",
            o.cpus
        ),
        None => String::new(),
    };
    format!(
        "{others}steal {:.1}% of {}, load average {:.2}",
        o.steal * 100.0,
        plural(o.cpus as usize, "CPU", "CPUs"),
        o.load_avg
    )
}

/// How the run ended, and what the tables cover.
fn run_ended(status: RunStatus, n: usize) -> String {
    let stored = plural(n, "step", "steps");
    match status {
        RunStatus::Interrupted => format!(
            "the run was interrupted (Ctrl-C) after {stored}: the tables cover those only"
        ),
        RunStatus::Running => format!(
            "the run has no end: it is still running, or shootout died without a word; the tables cover the {stored} stored so far"
        ),
        RunStatus::Abandoned => format!(
            "the run was abandoned: its shootout died before the end (killed, or a second Ctrl-C); the tables cover the {stored} stored"
        ),
        RunStatus::Failed | RunStatus::Complete if n == 0 => {
            "the run failed: no contender could be measured".to_string()
        }
        RunStatus::Failed | RunStatus::Complete => {
            format!("the run failed before its end: the tables cover the {stored} stored")
        }
    }
}

/// What became of a contender that was not measured, after its name.
fn not_measured(status: ContenderStatus, has_steps: bool) -> &'static str {
    match status {
        ContenderStatus::Measured | ContenderStatus::Skipped => {
            "was not measured: the run ended before its turn"
        }
        ContenderStatus::SetupFailed => "was not measured: its setup failed",
        ContenderStatus::Exited => "was not measured: it exited before it was ready",
        ContenderStatus::NeverReady => "was not measured: it never became ready",
        ContenderStatus::VerificationFailed => "failed verification, not measured",
        ContenderStatus::Crashed if has_steps => {
            "crashed while being measured: the steps before are kept"
        }
        ContenderStatus::Crashed => "crashed before its first step",
        ContenderStatus::Interrupted => {
            "was not measured: the run was interrupted before its first step"
        }
    }
}

/// A load run's warning of one cell: `generator saturated: nginx · hello · c=8: …`.
fn load_message(w: &RunWarning) -> String {
    match w {
        RunWarning::Load { at, warning, .. } => format!(
            "{}: {}: {}",
            warning.kind().replace('_', " "),
            at_label(at),
            load_text(w)
        ),
        _ => String::new(),
    }
}

/// What a load run's warning of one cell says, after its kind and cell: the text of the
/// first such warning (the busiest thread for a saturated generator, the cell's totals for
/// failures) and in how many repetitions it was raised. The HTML report lists it under a
/// title for its kind.
pub(crate) fn load_text(w: &RunWarning) -> String {
    let RunWarning::Load {
        warning,
        found_in,
        reps,
        failures,
        completed,
        ..
    } = w
    else {
        return String::new();
    };
    let of = if *reps > 1 {
        format!(" (in {found_in} of {reps} repetitions)")
    } else {
        String::new()
    };
    match warning {
        Warning::GeneratorSaturated { busiest_thread } => format!(
            "its busiest thread was on a CPU {:.0}% of the step{of}: the limit may be shootout's, not the server's (give the load more CPUs with load_cpus, or pin server and load apart with server_cpus and load_cpus)",
            busiest_thread * 100.0
        ),
        Warning::Failures { .. } => format!(
            "{} of {completed} requests failed: {failures}{of}; their latency is not comparable with a healthy server's",
            failures.total(),
        ),
        _ => format!("{warning}{of}"),
    }
}
