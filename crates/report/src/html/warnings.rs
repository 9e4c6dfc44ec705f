//! The HTML wording of a run's warnings: each [`RunWarning`] the analysis derived becomes
//! an `<li>`, with the page's richer markup (a contender's whole detail in a `<pre>`, long
//! lists folded in a `<details>`). The conditions are the analysis's: nothing is derived
//! again here, only grouped for the page — the run's end, the baseline, the contenders and
//! the steps first, then the load runs' warnings grouped by kind (generator saturation
//! first), the noisy cells, and the other groups.

use super::{contender_status, num};
use crate::safe::html_text;
use crate::shootout::words::load_text;
use shootout_analysis::{Analysis, CellAt, RunWarning, NOISY};
use shootout_model::{RunStatus, StepStatus, Warning};

/// Lists of cell warnings longer than this are folded in a `<details>`.
const FOLD: usize = 4;

/// The warnings of an analysed run, each an HTML `<li>`.
pub(super) fn run_warnings(a: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    let mut groups: Vec<(u8, &str, Vec<String>)> = Vec::new();
    let mut noisy = Vec::new();
    let mut pinned = false;
    for w in &a.warnings {
        match w {
            RunWarning::Load { at, warning, .. } => {
                let (order, title) = warning_group(warning);
                let line = format!(
                    "<li>{}: {}</li>",
                    html_text(&label(at)),
                    html_text(&load_text(w))
                );
                match groups.iter_mut().find(|g| g.0 == order) {
                    Some(g) => g.2.push(line),
                    None => groups.push((order, title, vec![line])),
                }
            }
            RunWarning::Noisy {
                at,
                rps_min,
                rps_max,
                rps,
                reps,
                pinned: p,
                ..
            } => {
                pinned = *p;
                noisy.push(format!(
                    "<li>{}: req/s ranged {}–{} over {reps} repetitions (median {})</li>",
                    html_text(&label(at)),
                    num(*rps_min, 0),
                    num(*rps_max, 0),
                    num(*rps, 0)
                ));
            }
            other => out.push(item(other)),
        }
    }
    groups.sort_by_key(|g| g.0);
    let (first, rest): (Vec<_>, Vec<_>) = groups.into_iter().partition(|g| g.0 == 0);
    out.extend(
        first
            .into_iter()
            .map(|(_, title, lines)| group(title, lines)),
    );
    if !noisy.is_empty() {
        out.push(noisy_item(noisy, pinned));
    }
    out.extend(
        rest.into_iter()
            .map(|(_, title, lines)| group(title, lines)),
    );
    out
}

/// A warning about the run, the baseline, a contender or a step.
fn item(w: &RunWarning) -> String {
    match w {
        RunWarning::RunEnded { status, .. } => run_ended(*status).to_string(),
        RunWarning::BaselineNotMeasured { marked, used } => format!(
            "<li><strong>The baseline {} was not measured</strong>: the others are compared with {}.</li>",
            html_text(marked),
            html_text(used)
        ),
        RunWarning::NotMeasured {
            contender,
            status,
            detail,
            ..
        } => {
            let mut li = format!(
                "<li><strong>{} was not measured to the end</strong>: {}.",
                html_text(contender),
                contender_status(*status)
            );
            if !detail.trim().is_empty() {
                li.push_str(&format!("<pre>{}</pre>", html_text(detail.trim_end())));
            }
            li + "</li>"
        }
        RunWarning::StepEndedEarly {
            at,
            repetition,
            status,
        } => {
            let what = match status {
                StepStatus::Interrupted => "stopped by Ctrl-C: it covers only the part that ran",
                StepStatus::ContenderDied | StepStatus::Complete => {
                    "the contender died during this step"
                }
            };
            format!(
                "<li><strong>{} · rep {repetition}</strong>: {what}.</li>",
                html_text(&label(at))
            )
        }
        RunWarning::BusyMachine {
            at,
            busiest,
            found_in,
            reps,
        } => format!(
            "<li><strong>Busy machine · {}</strong>: {}.</li>",
            html_text(&label(at)),
            html_text(&crate::shootout::words::busy_text(busiest, *found_in, *reps))
        ),
        RunWarning::Load { .. } | RunWarning::Noisy { .. } => String::new(),
    }
}

/// How the run ended.
fn run_ended(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Interrupted => "<li><strong>The run was interrupted</strong> (Ctrl-C or SIGTERM): only the steps measured before it are here; the last one may be partial.</li>",
        RunStatus::Running => "<li><strong>The run never finished</strong>: it was still running when this report was made, or shootout died without a word. The steps stored so far are here.</li>",
        RunStatus::Abandoned => "<li><strong>The run was abandoned</strong>: its shootout died before the end (killed, or a second Ctrl-C). The steps stored before are here.</li>",
        RunStatus::Failed | RunStatus::Complete => "<li><strong>The run failed</strong>: it could not go on (see the contenders below).</li>",
    }
}

/// `name · workload · c=8`.
fn label(at: &CellAt) -> String {
    format!("{} · {} · {}", at.contender, at.workload, at.level)
}

/// The order and title of a group of load warnings.
fn warning_group(w: &Warning) -> (u8, &'static str) {
    match w {
        Warning::GeneratorSaturated { .. } => (
            0,
            "The load generator was saturated: these numbers may measure shootout, not the server",
        ),
        Warning::NothingCompleted => (1, "Not one request completed"),
        Warning::Failures { .. } => (2, "Requests failed"),
        Warning::ConnectFailed { .. } => (3, "Connections could not be opened"),
        Warning::SlowConnects { .. } => (4, "Connections waited for a SYN retry"),
        Warning::Unserved { .. } => (4, "Connections left without an answer"),
        Warning::Dropped { .. } => (4, "The server dropped connections before any answer"),
        Warning::Retried { .. } => (5, "Requests sent again after an idle connection closed"),
        Warning::ScheduleNotKept { .. } => (5, "The open-loop schedule was not kept"),
        Warning::StreamsLimited { .. } => (5, "The server allowed fewer HTTP/2 streams than asked"),
    }
}

/// A group of load warnings under its title; a long list folds (no script needed).
fn group(title: &str, lines: Vec<String>) -> String {
    let n = lines.len();
    let cells = format!("{n} cell{}", if n == 1 { "" } else { "s" });
    if n > FOLD {
        format!(
            "<li><details><summary><strong>{title}</strong> ({cells}; open for the list)</summary><ul>{}</ul></details></li>",
            lines.concat()
        )
    } else {
        format!(
            "<li><strong>{title}</strong> ({cells}):<ul>{}</ul></li>",
            lines.concat()
        )
    }
}

/// The noisy cells under one title with the advice.
fn noisy_item(noisy: Vec<String>, pinned: bool) -> String {
    let n = noisy.len();
    let title = format!(
        "<strong>Noisy measurements</strong>: req/s spread more than {}% of the median over repetitions in {n} cell{} ({})",
        NOISY * 100.0,
        if n == 1 { "" } else { "s" },
        crate::shootout::words::noise_advice(pinned),
    );
    if n > FOLD {
        format!(
            "<li><details><summary>{title}; open for the list</summary><ul>{}</ul></details></li>",
            noisy.concat()
        )
    } else {
        format!("<li>{title}:<ul>{}</ul></li>", noisy.concat())
    }
}
