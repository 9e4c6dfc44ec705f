//! Each warning's sentence, worded once for every format: how a stored run ended, a
//! baseline or a contender not measured, a step that ended early, a noisy cell, a load
//! run's warning within a cell, and a load run stopped early. The text, Markdown and JSON
//! reports print a [`Sentence`] as it is; the HTML report escapes it, sets its lead in
//! bold and ends it with a period ([`Sentence::html`]). A load run's own warnings are
//! worded by the model ([`Warning`]'s `Display`), read alike by every format.
//!
//! Seams: reads the analysis's [`RunWarning`]s and nothing decides here; the layout
//! (lists, groups, folding) is each renderer's.

use crate::grid::at_label;
use crate::grid::plural;
use crate::safe::html_text;
use shootout_analysis::{CellAt, RunWarning};
use shootout_model::stored::RunId;
use shootout_model::{ContenderStatus, OtherLoad, RunStatus, StepStatus, Warning};
use std::fmt;

/// A warning in words: the `lead` says what happened, the `rest` (which begins with its
/// own separator) why it matters or what the tables cover.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sentence {
    /// What happened (set in bold by the HTML report).
    pub lead: String,
    /// The rest, separator first (`: …`, ` (…) …`), possibly empty.
    pub rest: String,
    /// The lead begins with a name (a contender's, a cell's), never capitalized.
    pub named: bool,
}

impl fmt::Display for Sentence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.lead, self.rest)
    }
}

impl Sentence {
    fn new(lead: impl Into<String>, rest: impl Into<String>) -> Self {
        Sentence {
            lead: lead.into(),
            rest: rest.into(),
            named: false,
        }
    }

    fn named(lead: impl Into<String>, rest: impl Into<String>) -> Self {
        Sentence {
            named: true,
            ..Sentence::new(lead, rest)
        }
    }

    /// The sentence as HTML: escaped, the lead in `<strong>` (its first letter capitalized
    /// unless it is a name), ended with a period.
    pub fn html(&self) -> String {
        let lead = if self.named {
            self.lead.clone()
        } else {
            let mut chars = self.lead.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        };
        format!(
            "<strong>{}</strong>{}.",
            html_text(&lead),
            html_text(&self.rest)
        )
    }
}

/// The sentence of a warning about the run, the baseline, a contender or a step; `None`
/// for a cell's warning ([`load_text`], [`noisy_text`]), which the reports place by cell.
pub(crate) fn sentence(w: &RunWarning) -> Option<Sentence> {
    Some(match w {
        RunWarning::RunEnded { status, steps } => run_ended(*status, *steps),
        RunWarning::BaselineNotMeasured { marked, used } => Sentence::new(
            format!("the baseline {marked} was not measured"),
            format!(": the others are compared with {used}"),
        ),
        RunWarning::NotMeasured {
            contender,
            status,
            has_steps,
            ..
        } => {
            let (what, why) = not_measured(*status, *has_steps);
            Sentence::named(format!("{contender} {what}"), why)
        }
        RunWarning::UnlikeSteps { at, runs, cells } => unlike_steps(at, runs, *cells),
        RunWarning::StepEndedEarly {
            at,
            repetition,
            status,
        } => Sentence::named(
            format!("{} repetition {repetition}", at_label(at)),
            match status {
                StepStatus::Interrupted => {
                    " was interrupted (Ctrl-C or SIGTERM): its numbers cover only the part that ran"
                }
                StepStatus::ContenderDied | StepStatus::Complete => {
                    " ended when the contender died: its numbers cover the part before"
                }
            },
        ),
        RunWarning::BusyMachine {
            at,
            busiest,
            found_in,
            reps,
        } => Sentence::new(
            format!("busy machine: {}", at_label(at)),
            format!(": {}", busy_text(busiest, *found_in, *reps)),
        ),
        RunWarning::BusySearch {
            contender,
            workload,
            busiest,
            found_in,
            steps,
        } => Sentence::new(
            format!("busy machine: {contender} · {workload} (capacity search)"),
            format!(
                ": the machine was not quiet in {found_in} of its {steps} steps ({}): measure again when nothing else runs",
                other_load_figures(busiest)
            ),
        ),
        RunWarning::Load { .. } | RunWarning::Noisy { .. } => return None,
    })
}

/// Runs read as one measured `cells` cells, the first `at`, in steps of unlike lengths.
fn unlike_steps(at: &CellAt, runs: &[(RunId, f64, usize)], cells: usize) -> Sentence {
    let more = if cells > 1 {
        let more = cells - 1;
        format!(
            " (and {more} more {})",
            if more == 1 { "cell" } else { "cells" }
        )
    } else {
        String::new()
    };
    Sentence::new(
        format!("unlike steps: {}", at_label(at)),
        format!(
            "{more}: {}: a short step weighs its start as much as the server, and the runs' steps are pooled in each median and ± (measure the runs alike: drop --quick, or give them the same duration and repeat)",
            steps_in_runs(runs)
        ),
    )
}

/// A step's length in seconds, to the tenth: `1 s`, `6.5 s`.
pub(crate) fn step_secs(secs: f64) -> String {
    format!(
        "{} s",
        crate::units::trim_float((secs * 10.0).round() / 10.0)
    )
}

/// `1 s × 1 repetition in run 3, 10 s × 3 repetitions in run 5`: a cell's steps in each
/// run by their median length (to a tenth of a second), as `compare` and `report --runs`
/// say unlike steps.
pub(crate) fn steps_in_runs(runs: &[(RunId, f64, usize)]) -> String {
    runs.iter()
        .map(|(run, secs, n)| {
            format!(
                "{} × {} in run {run}",
                step_secs(*secs),
                plural(*n, "repetition", "repetitions")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What ran besides a cell's steps (or a step, or a load), after its label: in how many
/// repetitions, the busiest one's figures, and what to do.
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

/// The kernel's interrupt work on the watched CPUs, in CPUs, from which it is said beside
/// the strangers' time: enough to have made a quiet step look busy had it been counted.
const INTERRUPTS_SAID: f64 = 0.05;

/// `other processes used 0.85 CPU of the 2 watched (besides the run's idle contenders'
/// 0.40 and the kernel's interrupt work of 0.31, mostly for the measured traffic), steal
/// 0.0% of 2 CPUs, load average 3.10`: what ran besides.
fn other_load_figures(o: &OtherLoad) -> String {
    // The run's idle contenders are its own, and the kernel's interrupt work mostly the
    // run's own packets: said apart, never judged.
    let mut besides = Vec::new();
    if o.contenders >= 0.005 {
        besides.push(format!("the run's idle contenders' {:.2}", o.contenders));
    }
    if o.interrupts >= INTERRUPTS_SAID {
        besides.push(format!(
            "the kernel's interrupt work of {:.2}, mostly for the measured traffic",
            o.interrupts
        ));
    }
    let aside = if besides.is_empty() {
        String::new()
    } else {
        format!(" (besides {})", besides.join(" and "))
    };
    let others = match o.others {
        Some(c) => format!(
            "other processes used {c:.2} CPU of the {} watched{aside}, ",
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
fn run_ended(status: RunStatus, n: usize) -> Sentence {
    let stored = plural(n, "step", "steps");
    match status {
        RunStatus::Interrupted => Sentence::new(
            "the run was interrupted",
            format!(" (Ctrl-C or SIGTERM) after {stored}: the tables cover those only"),
        ),
        RunStatus::Running => Sentence::new(
            "the run never finished",
            format!(": it was still running when this report was made, or shootout died without a word; the tables cover the {stored} stored so far"),
        ),
        RunStatus::Abandoned => Sentence::new(
            "the run was abandoned",
            format!(": its shootout died before the end (killed, or a second Ctrl-C); the tables cover the {stored} stored"),
        ),
        RunStatus::Failed | RunStatus::Complete if n == 0 => {
            Sentence::new("the run failed", ": no contender could be measured")
        }
        RunStatus::Failed | RunStatus::Complete => Sentence::new(
            "the run failed before its end",
            format!(": the tables cover the {stored} stored"),
        ),
    }
}

/// What became of a contender that was not measured, after its name, and why.
fn not_measured(status: ContenderStatus, has_steps: bool) -> (&'static str, &'static str) {
    match status {
        ContenderStatus::Measured | ContenderStatus::Skipped => {
            ("was not measured", ": the run ended before its turn")
        }
        ContenderStatus::SetupFailed => ("was not measured", ": its setup failed"),
        ContenderStatus::Exited => ("was not measured", ": it exited before it was ready"),
        ContenderStatus::NeverReady => ("was not measured", ": it never became ready"),
        // As the Runner says it when it happens.
        ContenderStatus::VerificationFailed => ("failed verification", ", not measured"),
        ContenderStatus::Crashed if has_steps => (
            "crashed while being measured",
            ": the steps before are kept",
        ),
        ContenderStatus::Crashed => ("crashed before its first step", ""),
        ContenderStatus::Interrupted => (
            "was not measured",
            ": the run was interrupted before its first step",
        ),
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

/// What a noisy cell's warning says after its cell: `req/s ranged 900–1100 over 3
/// repetitions, 20% of the median` (`calls/s ranged …` for gRPC calls).
pub(crate) fn noisy_text(w: &RunWarning) -> String {
    let RunWarning::Noisy {
        rps_min,
        rps_max,
        range_share,
        reps,
        unit,
        ..
    } = w
    else {
        return String::new();
    };
    format!(
        "{} ranged {rps_min:.0}–{rps_max:.0} over {reps} repetitions, {:.0}% of the median",
        unit.per_second(),
        range_share * 100.0
    )
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

/// A load run stopped early (Ctrl-C or SIGTERM) after `span` (as the format writes
/// durations).
pub(crate) fn interrupted(span: &str) -> Sentence {
    Sentence::new(
        "interrupted",
        format!(" (Ctrl-C or SIGTERM) after {span}: the numbers cover only the part that ran"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::LoadLevel;

    #[test]
    fn html_escapes_bolds_the_lead_and_capitalizes_only_our_own_words() {
        let run = sentence(&RunWarning::RunEnded {
            status: RunStatus::Interrupted,
            steps: 3,
        })
        .unwrap();
        assert_eq!(
            run.to_string(),
            "the run was interrupted (Ctrl-C or SIGTERM) after 3 steps: the tables cover those only"
        );
        assert_eq!(
            run.html(),
            "<strong>The run was interrupted</strong> (Ctrl-C or SIGTERM) after 3 steps: the tables cover those only."
        );
        let step = sentence(&RunWarning::StepEndedEarly {
            at: CellAt {
                contender: "<nginx>".into(),
                workload: "hello".into(),
                level: LoadLevel::Concurrency { connections: 8 },
            },
            repetition: 2,
            status: StepStatus::ContenderDied,
        })
        .unwrap();
        assert_eq!(
            step.html(),
            "<strong>&lt;nginx&gt; · hello · c=8 repetition 2</strong> ended when the contender died: its numbers cover the part before."
        );
    }

    #[test]
    fn a_contender_that_crashed_says_whether_its_steps_are_kept() {
        let crashed = |has_steps| {
            sentence(&RunWarning::NotMeasured {
                contender: "uwsgi".into(),
                status: ContenderStatus::Crashed,
                has_steps,
                detail: String::new(),
            })
            .unwrap()
            .to_string()
        };
        assert_eq!(
            crashed(true),
            "uwsgi crashed while being measured: the steps before are kept"
        );
        assert_eq!(crashed(false), "uwsgi crashed before its first step");
    }

    /// The kernel's interrupt work (mostly the run's own packets) is said beside the
    /// strangers' time when it is enough to have mattered, with the idle contenders' or
    /// alone; a little of it is not said.
    #[test]
    fn the_kernels_interrupt_work_is_said_apart_when_notable() {
        let o = OtherLoad {
            cpus: 2,
            others: Some(0.12),
            contenders: 0.4,
            interrupts: 0.31,
            steal: 0.0,
            load_avg: 2.0,
        };
        let said = |o: OtherLoad| busy_text(&o, 1, 1);
        assert_eq!(
            said(o),
            "the machine was not quiet (other processes used 0.12 CPU of the 2 watched \
             (besides the run's idle contenders' 0.40 and the kernel's interrupt work of 0.31, \
             mostly for the measured traffic), steal 0.0% of 2 CPUs, load average 2.00): \
             measure again when nothing else runs"
        );
        let alone = OtherLoad {
            contenders: 0.0,
            ..o
        };
        assert!(said(alone).contains(
            "0.12 CPU of the 2 watched (besides the kernel's interrupt work of 0.31, mostly \
             for the measured traffic), steal"
        ));
        let little = OtherLoad {
            interrupts: 0.04,
            ..alone
        };
        assert!(said(little).contains("0.12 CPU of the 2 watched, steal"));
    }
}
