//! `--fail-if`: the thresholds as every command takes them (`load`, `merge`, `run`,
//! `report`), parsed by one grammar and judged by the analysis; each breach is one line on
//! stderr, and a breach makes the command end with
//! [`THRESHOLD_FAILED`](crate::output::THRESHOLD_FAILED).

use crate::output::Failure;
use anyhow::anyhow;
use shootout_analysis::threshold::Threshold;
use shootout_model::stored::StoredRun;
use shootout_model::RunResult;

/// `--fail-if` expressions, each checked (the same grammar on `load` and `merge`; `--slo`
/// is read by the same grammar, as the condition that must hold, where the search is
/// checked: [`shootout_model::find_max::FindMax::new`]); an error names the flag.
pub(crate) fn parse_thresholds(exprs: &[String]) -> Result<Vec<Threshold>, Failure> {
    exprs
        .iter()
        .map(|e| {
            e.parse::<Threshold>()
                .map_err(|err| Failure::usage(anyhow!("--fail-if {err}")))
        })
        .collect()
}

/// Each `--fail-if step:NAME:…` names a step of the load's journeys (its name, or
/// `journey › step`, when the name alone is ambiguous): checked before the load starts.
pub(crate) fn check_steps(
    thresholds: &[Threshold],
    spec: &shootout_model::LoadSpec,
) -> Result<(), Failure> {
    for t in thresholds {
        let Some(name) = &t.step else { continue };
        let Some(j) = &spec.journey else {
            return Err(Failure::usage(anyhow!(
                "--fail-if {}: a step is a journey's: give --journey FILE, or drop step:{name}:",
                t.text
            )));
        };
        let labels: Vec<(String, &str)> = j
            .file
            .journeys
            .iter()
            .flat_map(|j| {
                j.steps
                    .iter()
                    .map(move |s| (format!("{} › {}", j.name, s.name), s.name.as_str()))
            })
            .collect();
        let alone = labels.iter().filter(|(_, s)| s == name).count();
        if labels.iter().any(|(l, _)| l == name) || alone == 1 {
            continue;
        }
        let why = if alone > 1 {
            format!("{alone} journeys have a step '{name}': write step:JOURNEY › {name}:")
        } else {
            let names: Vec<&str> = labels.iter().map(|(l, _)| l.as_str()).collect();
            format!(
                "{} has no step '{name}' (its steps: {})",
                j.source,
                names.join(", ")
            )
        };
        return Err(Failure::usage(anyhow!("--fail-if {}: {why}", t.text)));
    }
    Ok(())
}

/// Says on stderr, one line each, which thresholds `result` breached; true if any.
pub(crate) fn judge(thresholds: &[Threshold], result: &RunResult) -> bool {
    let breaches = shootout_analysis::threshold::judge(thresholds, result);
    for b in &breaches {
        say!("{b}");
    }
    !breaches.is_empty()
}

/// Judges every cell of a stored run by the thresholds `thresholds` gives its contender
/// (by name); says on stderr, one line each, which failed; true if any (`run` and
/// `report --fail-if`).
pub(crate) fn judge_cells<'t>(
    stored: &StoredRun,
    thresholds: impl Fn(&str) -> &'t [Threshold],
) -> bool {
    let analysis = shootout_analysis::Analysis::of(stored);
    let breaches = shootout_analysis::threshold::judge_cells(&analysis, thresholds);
    for b in &breaches {
        say!("{b}");
    }
    !breaches.is_empty()
}
