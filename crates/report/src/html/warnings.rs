//! The HTML layout of a run's warnings: each [`RunWarning`] the analysis derived becomes
//! an `<li>` holding its sentence (worded once, in `sentences.rs`), with the page's richer
//! markup (a contender's whole detail in a `<pre>`, long lists folded in a `<details>`). The conditions are the analysis's: nothing is derived
//! again here, only grouped for the page — the run's end, the baseline, the contenders and
//! the steps first, then the load runs' warnings grouped by kind (generator saturation
//! first), the noisy cells, and the other groups.

use crate::safe::html_text;
use crate::sentences::{load_text, noise_advice, noisy_text, sentence};
use shootout_analysis::{Analysis, CellAt, RunWarning, NOISY};
use shootout_model::{ListenBlame, Warning};

/// Lists of cell warnings longer than this are folded in a `<details>`.
const FOLD: usize = 4;

/// The warnings of an analysed run, each an HTML `<li>`.
pub(super) fn run_warnings(a: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    let mut groups: Vec<(u8, &str, Vec<String>)> = Vec::new();
    let mut noisy = Vec::new();
    let mut noisy_units: Vec<&str> = Vec::new();
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
                match groups.iter_mut().find(|g| g.0 == order && g.1 == title) {
                    Some(g) => g.2.push(line),
                    None => groups.push((order, title, vec![line])),
                }
            }
            RunWarning::Noisy {
                at,
                pinned: p,
                unit,
                ..
            } => {
                pinned = *p;
                if !noisy_units.contains(&unit.per_second()) {
                    noisy_units.push(unit.per_second());
                }
                noisy.push(format!(
                    "<li>{}: {}</li>",
                    html_text(&label(at)),
                    html_text(&noisy_text(w))
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
        out.push(noisy_item(noisy, pinned, &noisy_units.join(" or ")));
    }
    out.extend(
        rest.into_iter()
            .map(|(_, title, lines)| group(title, lines)),
    );
    out
}

/// A warning about the run, the baseline, a contender or a step: its sentence, and a
/// contender's whole detail in a `<pre>`.
fn item(w: &RunWarning) -> String {
    let mut li = format!("<li>{}", sentence(w).map(|s| s.html()).unwrap_or_default());
    if let RunWarning::NotMeasured { detail, .. } = w {
        if !detail.trim().is_empty() {
            li.push_str(&format!("<pre>{}</pre>", html_text(detail.trim_end())));
        }
    }
    li + "</li>"
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
        Warning::GeneratorFault { .. } => (
            0,
            "Requests failed by a fault of shootout's own, not the server's: please report it",
        ),
        Warning::NothingCompleted => (1, "Not one request completed"),
        Warning::Failures { .. } => (2, "Requests failed"),
        Warning::ConnectFailed { .. } => (3, "Connections could not be opened"),
        Warning::SlowConnects { upgrade: false, .. } => (4, "Connections waited for a SYN retry"),
        Warning::SlowConnects { upgrade: true, .. } => (4, "Connections were slow to open"),
        Warning::Unserved { .. } => (4, "Connections left without an answer"),
        Warning::Dropped { .. } => (4, "The server dropped connections before any answer"),
        Warning::ConnectionsOpening { .. } => (4, "Connections never opened"),
        Warning::PingsUnanswered { .. } => (5, "Pings from the server went unanswered"),
        Warning::ListenOverflowed { whose, .. } => (4, listen_overflowed_title(*whose)),
        Warning::Unaccepted { .. } => (4, "Connections waited for the server to accept them"),
        Warning::Retried { .. } => (5, "Requests sent again after an idle connection closed"),
        Warning::Overtaken { .. } => (
            5,
            "Requests waited while the server was on other connections",
        ),
        Warning::ScheduleNotKept { .. } => (5, "The open-loop schedule was not kept"),
        Warning::StreamsLimited { .. } => (5, "The server allowed fewer HTTP/2 streams than asked"),
        Warning::WarmUp { .. } => (6, "The first seconds differed from the rest (a warm-up)"),
        Warning::Drifting { .. } => (7, "The figures drifted through the step"),
        Warning::NotConverged { .. } => (7, "The step did not converge in its time"),
        Warning::WarmUpNotLevel { .. } => (6, "The automatic warm-up was not level at its bound"),
    }
}

/// [`Warning::ListenOverflowed`]'s title: the server's only when its own queue was seen
/// at its backlog (the kernel's count is every listener's of the machine).
fn listen_overflowed_title(whose: ListenBlame) -> &'static str {
    match whose {
        ListenBlame::Server => "The server's listen queue overflowed",
        ListenBlame::Others => {
            "Listen queues on this machine overflowed, not the server's by its own queue"
        }
        ListenBlame::Uncertain | ListenBlame::Unmeasured => {
            "Listen queues on this machine overflowed (the server's or others')"
        }
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

/// The noisy cells under one title with the advice, their rates in `per_s` (`req/s`, or
/// a gRPC workload's `calls/s`, …).
fn noisy_item(noisy: Vec<String>, pinned: bool, per_s: &str) -> String {
    let n = noisy.len();
    let title = format!(
        "<strong>Noisy measurements</strong>: {per_s} spread more than {}% of the median over repetitions in {n} cell{} ({})",
        NOISY * 100.0,
        if n == 1 { "" } else { "s" },
        noise_advice(pinned),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The HTML title blames the server only when its own queue was seen at its backlog.
    #[test]
    fn a_listen_overflow_is_titled_the_servers_only_when_its_queue_was_full() {
        let title = |whose| {
            warning_group(&Warning::ListenOverflowed {
                overflows: 1,
                drops: 1,
                whose,
                accept: None,
            })
            .1
        };
        assert_eq!(
            title(ListenBlame::Server),
            "The server's listen queue overflowed"
        );
        for whose in [
            ListenBlame::Others,
            ListenBlame::Uncertain,
            ListenBlame::Unmeasured,
        ] {
            assert!(!title(whose).contains("server's listen queue"), "{whose:?}");
        }
    }
}
