//! `--fail-if`: the thresholds as every command takes them (`load`, `merge`, `run`,
//! `report`), parsed by one grammar and judged by the analysis; each breach is one line on
//! stderr, and a breach makes the command end with
//! [`THRESHOLD_FAILED`](crate::output::THRESHOLD_FAILED).

use crate::output::Failure;
use anyhow::anyhow;
use shootout_analysis::threshold::Threshold;
use shootout_model::stored::StoredRun;
use shootout_model::{LoadSpec, RunResult};

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
    steps_named(thresholds, spec.journey.as_ref(), "--fail-if")
}

/// Each threshold of `thresholds` (given by `flag`: `--fail-if`, `--slo`) that names a
/// journey's step names one of `journeys`' steps; an error names the threshold, the
/// steps there are and the fix, before anything runs.
pub(crate) fn steps_named(
    thresholds: &[Threshold],
    journeys: Option<&shootout_model::spec::Journeys>,
    flag: &str,
) -> Result<(), Failure> {
    for t in thresholds {
        let Some(name) = &t.step else { continue };
        let Some(j) = journeys else {
            return Err(Failure::usage(anyhow!(
                "{flag} {}: a step is a journey's: give --journey FILE, or drop step:{name}:",
                t.text
            )));
        };
        if let Some(why) = shootout_model::threshold::missing_step(&j.file, name) {
            return Err(Failure::usage(anyhow!(
                "{flag} {}: {}: {why}",
                t.text,
                j.source
            )));
        }
    }
    Ok(())
}

/// Says on stderr, one line each, which thresholds `result` (of a load of `spec`)
/// breached; true if any.
pub(crate) fn judge(thresholds: &[Threshold], spec: &LoadSpec, result: &RunResult) -> bool {
    let unit = shootout_report::counted_unit(spec, result);
    let breaches = shootout_analysis::threshold::judge(thresholds, result, unit);
    for b in &breaches {
        say!("{b}");
    }
    !breaches.is_empty()
}

/// Judges every cell of a stored run by the thresholds `thresholds` gives its contender
/// (by name); says on stderr, one line each, which failed; true if any (`run`). A run
/// none of whose contenders has a threshold is not analysed again: false at once.
pub(crate) fn judge_cells<'t>(
    stored: &StoredRun,
    thresholds: impl Fn(&str) -> &'t [Threshold],
) -> bool {
    if stored
        .contenders
        .iter()
        .all(|c| thresholds(&c.name).is_empty())
    {
        return false;
    }
    judge_analysis(&shootout_analysis::Analysis::of(stored), thresholds)
}

/// [`judge_cells`] of a run already analysed (`report --fail-if`, which rendered it from
/// the same analysis).
pub(crate) fn judge_analysis<'t>(
    analysis: &shootout_analysis::Analysis,
    thresholds: impl Fn(&str) -> &'t [Threshold],
) -> bool {
    let breaches = shootout_analysis::threshold::judge_cells(analysis, thresholds);
    for b in &breaches {
        say!("{b}");
    }
    !breaches.is_empty()
}
