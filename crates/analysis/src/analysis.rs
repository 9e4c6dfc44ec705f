//! The whole analysis of a stored run ([`Analysis`]), assembled from the rooms below it:
//! its steps grouped into cells with the baseline ([`crate::cells`]), the capacities its
//! searches found ([`crate::capacities`]), its planned shape, and the warnings a reader
//! must see ([`RunWarning`]), derived here once from the cells and capacities.
//!
//! Seams: reads a [`StoredRun`] and the resolved plan stored with it; the rankings, the
//! headlines, the thresholds and `shootout compare` read an [`Analysis`], and the renderers
//! (`shootout-report`) lay it out.

use crate::capacities::{capacities, UnreadableSlo, WorkloadCapacity};
use crate::cells::{baseline, group, step_secs, unlike, Cell, WorkloadBlock};
use crate::quiet;
use crate::unit::Unit;
use crate::warnings::{CellAt, RunWarning};
use shootout_model::resolved::ResolvedPlan;
use shootout_model::stored::{RunId, StoredRun, StoredStep};
use shootout_model::{ContenderStatus, LoadLevel, OtherLoad, RunStatus, StepStatus, Warning};

/// A stored run, grouped for the reports.
#[derive(Debug, Clone)]
pub struct Analysis<'a> {
    /// The run as stored.
    pub run: &'a StoredRun,
    /// The contender the others are compared with: the plan's baseline if it was measured,
    /// else the first contender with steps.
    pub baseline: Option<usize>,
    /// The workloads in the order measured.
    pub workloads: Vec<WorkloadBlock<'a>>,
    /// The resolved plan stored with the run; `None` when it cannot be read.
    pub plan: Option<ResolvedPlan>,
    /// The warnings, most important first.
    pub warnings: Vec<RunWarning>,
    /// The capacities of the workloads searched (`find_max`), in plan order; empty when
    /// a search's stored SLOs cannot be read (`unreadable`).
    pub capacities: Vec<WorkloadCapacity<'a>>,
    /// A search whose stored SLOs cannot be read: the commands refuse such a run before
    /// they render it ([`crate::capacities::check`]), so no report shows capacities
    /// replayed without them.
    pub unreadable: Option<UnreadableSlo>,
}

impl<'a> Analysis<'a> {
    /// Groups the run's steps, picks the baseline and derives the warnings.
    pub fn of(run: &'a StoredRun) -> Analysis<'a> {
        let marked = run.contenders.iter().position(|c| c.baseline);
        let plan = ResolvedPlan::parse(&run.run.plan_resolved);
        let (capacities, unreadable) = match capacities(run, plan.as_ref()) {
            Ok(c) => (c, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let mut workloads = group(run);
        for w in &mut workloads {
            w.unit = Unit::of(plan.as_ref(), w.name, w.steps());
        }
        let mut a = Analysis {
            run,
            baseline: baseline(run, marked),
            workloads,
            capacities,
            unreadable,
            plan,
            warnings: Vec::new(),
        };
        a.warnings = derive(&a, marked);
        a
    }

    /// The name of contender `i`.
    pub fn name(&self, i: usize) -> &'a str {
        &self.run.contenders[i].name
    }

    /// Contenders with at least one step.
    pub fn measured_contenders(&self) -> usize {
        let mut seen: Vec<usize> = self.cells().map(|(_, _, c)| c.contender).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    /// Distinct load levels over all workloads.
    pub fn level_count(&self) -> usize {
        // A level equal to no other (a rate that is not a number) counts once for each.
        let mut keys = std::collections::HashSet::new();
        let mut unequal = 0;
        for l in self.workloads.iter().flat_map(|w| &w.levels) {
            match crate::cells::level_key(l.level) {
                Some(key) => {
                    keys.insert(key);
                }
                None => unequal += 1,
            }
        }
        keys.len() + unequal
    }

    /// The most repetitions of any cell.
    pub fn max_reps(&self) -> usize {
        self.cells().map(|(_, _, c)| c.reps()).max().unwrap_or(0)
    }

    /// What the counts of workload `name` count ([`Unit::Request`] for a workload not
    /// swept in this run).
    pub fn unit(&self, name: &str) -> Unit {
        self.workloads
            .iter()
            .find(|w| w.name == name)
            .map_or(Unit::Request, |w| w.unit)
    }

    /// The unit every swept workload shares, `None` when they do not share one (or none
    /// was swept): a run of gRPC workloads alone says calls/s where a mixed one says
    /// req/s and names the others' units beside them.
    pub fn common_unit(&self) -> Option<Unit> {
        let first = self.workloads.first()?.unit;
        self.workloads
            .iter()
            .all(|w| w.unit == first)
            .then_some(first)
    }

    /// Every cell with its workload and level.
    pub fn cells(&self) -> impl Iterator<Item = (&str, LoadLevel, &Cell<'a>)> {
        self.workloads.iter().flat_map(|w| {
            w.levels
                .iter()
                .flat_map(move |l| l.cells.iter().map(move |c| (w.name, l.level, c)))
        })
    }

    /// Contenders × workloads × levels × repetitions planned: the stored resolved plan's
    /// shape, or, when it does not say, the shape of the steps stored.
    pub fn planned_shape(&self) -> (usize, usize, usize, usize) {
        self.plan.as_ref().and_then(ResolvedPlan::shape).unwrap_or((
            self.measured_contenders(),
            self.workloads.len(),
            self.level_count(),
            self.max_reps(),
        ))
    }

    /// True when the plan pinned the contenders and the load to CPUs (so a noisy cell's
    /// advice is not to pin them).
    pub fn pinned(&self) -> bool {
        self.plan.as_ref().is_some_and(ResolvedPlan::pinned)
    }
}

/// The warnings of an analysed run, in the order the reports print them.
fn derive(a: &Analysis, marked: Option<usize>) -> Vec<RunWarning> {
    let mut out = Vec::new();
    if a.run.run.status != RunStatus::Complete {
        out.push(RunWarning::RunEnded {
            status: a.run.run.status,
            steps: a.run.steps.len(),
        });
    }
    if let (Some(m), Some(b)) = (marked, a.baseline) {
        if m != b {
            out.push(RunWarning::BaselineNotMeasured {
                marked: a.name(m).to_string(),
                used: a.name(b).to_string(),
            });
        }
    }
    out.extend(not_measured(a));
    out.extend(unlike_runs(a));
    out.extend(steps_ended_early(a));
    for (w, level, cell) in a.cells() {
        out.extend(load_warnings(a, w, level, cell));
    }
    out.extend(noisy(a));
    out.extend(busy_machine(a));
    out.extend(busy_searches(a));
    out
}

/// Runs read as one whose steps of a cell were of unlike lengths, judged as `compare`
/// judges a pair ([`unlike`]): one warning, at the first such cell, counting the others.
fn unlike_runs(a: &Analysis) -> Option<RunWarning> {
    if a.run.also.is_empty() {
        return None;
    }
    let mut found = a.cells().filter_map(|(w, level, cell)| {
        let runs = per_run(cell);
        let secs = || runs.iter().map(|r| r.1);
        let (short, long) = (
            secs().fold(f64::INFINITY, f64::min),
            secs().fold(0.0, f64::max),
        );
        (runs.len() > 1 && unlike(short, long)).then(|| (at(a, w, level, cell), runs))
    });
    let (first, runs) = found.next()?;
    Some(RunWarning::UnlikeSteps {
        at: first,
        runs,
        cells: 1 + found.count(),
    })
}

/// A cell's steps by run, in the order first met: the run, the median measured length of
/// its steps (seconds) and how many.
fn per_run(cell: &Cell) -> Vec<(RunId, f64, usize)> {
    let mut runs: Vec<(RunId, Vec<&StoredStep>)> = Vec::new();
    for &s in &cell.steps {
        match runs.iter_mut().find(|(r, _)| *r == s.run) {
            Some((_, steps)) => steps.push(s),
            None => runs.push((s.run, vec![s])),
        }
    }
    runs.into_iter()
        .map(|(r, steps)| (r, step_secs(&steps), steps.len()))
        .collect()
}

/// The contenders whose capacity search had a step on a machine that was not quiet.
fn busy_searches<'x>(a: &'x Analysis) -> impl Iterator<Item = RunWarning> + 'x {
    a.capacities.iter().flat_map(move |w| {
        w.contenders.iter().filter_map(move |c| {
            let steps: Vec<_> = c.searches.iter().flat_map(|s| &s.steps).collect();
            let busy: Vec<&OtherLoad> = steps
                .iter()
                .filter_map(|s| s.other_load.as_ref())
                .filter(|o| quiet::not_quiet(o))
                .collect();
            Some(RunWarning::BusySearch {
                contender: a.name(c.contender).to_string(),
                workload: w.workload.to_string(),
                busiest: quiet::busiest(busy.iter().copied())?,
                found_in: busy.len(),
                steps: steps.len(),
            })
        })
    })
}

/// The cells with a step that ran on a machine that was not quiet.
fn busy_machine<'x>(a: &'x Analysis) -> impl Iterator<Item = RunWarning> + 'x {
    a.cells().filter_map(move |(w, level, cell)| {
        let busy: Vec<&OtherLoad> = cell
            .steps
            .iter()
            .filter_map(|s| s.other_load.as_ref())
            .filter(|o| quiet::not_quiet(o))
            .collect();
        Some(RunWarning::BusyMachine {
            at: at(a, w, level, cell),
            busiest: quiet::busiest(busy.iter().copied())?,
            found_in: busy.len(),
            reps: cell.reps(),
        })
    })
}

/// Contenders that were not measured (a skipped one with steps was being measured when
/// the run stopped: nothing to say).
fn not_measured<'x>(a: &'x Analysis) -> impl Iterator<Item = RunWarning> + 'x {
    a.run.contenders.iter().filter_map(|c| {
        let has_steps = a.run.steps.iter().any(|s| s.contender == c.id);
        match c.status {
            ContenderStatus::Measured => None,
            ContenderStatus::Skipped if has_steps => None,
            status => Some(RunWarning::NotMeasured {
                contender: c.name.clone(),
                status,
                has_steps,
                detail: if status == ContenderStatus::Skipped {
                    String::new()
                } else {
                    c.detail.clone()
                },
            }),
        }
    })
}

/// The steps that did not complete, cell by cell.
fn steps_ended_early<'x>(a: &'x Analysis) -> impl Iterator<Item = RunWarning> + 'x {
    a.cells().flat_map(move |(w, level, cell)| {
        cell.steps
            .iter()
            .filter(|s| s.status != StepStatus::Complete)
            .map(move |s| RunWarning::StepEndedEarly {
                at: at(a, w, level, cell),
                repetition: s.repetition,
                status: s.status,
            })
    })
}

/// The load runs' own warnings of one cell, one per kind, in the order first raised.
fn load_warnings(a: &Analysis, w: &str, level: LoadLevel, cell: &Cell) -> Vec<RunWarning> {
    let mut kinds: Vec<(std::mem::Discriminant<Warning>, Vec<&Warning>)> = Vec::new();
    for warning in cell.steps.iter().flat_map(|s| &s.result.warnings) {
        let k = std::mem::discriminant(warning);
        match kinds.iter_mut().find(|(kk, _)| *kk == k) {
            Some((_, v)) => v.push(warning),
            None => kinds.push((k, vec![warning])),
        }
    }
    kinds
        .into_iter()
        .map(|(_, found)| RunWarning::Load {
            at: at(a, w, level, cell),
            warning: strongest(&found),
            found_in: found.len(),
            reps: cell.reps(),
            failures: cell.failures,
            completed: cell.completed,
        })
        .collect()
}

/// The warning that speaks for `found` (all of one kind): the first, except that a
/// saturated generator is reported at its busiest.
fn strongest(found: &[&Warning]) -> Warning {
    match found[0] {
        Warning::GeneratorSaturated { .. } => Warning::GeneratorSaturated {
            busiest_thread: found
                .iter()
                .filter_map(|w| match w {
                    Warning::GeneratorSaturated { busiest_thread } => Some(*busiest_thread),
                    _ => None,
                })
                .fold(0.0, f64::max),
        },
        first => first.clone(),
    }
}

/// The noisy cells.
fn noisy<'x>(a: &'x Analysis) -> impl Iterator<Item = RunWarning> + 'x {
    a.cells()
        .filter(|(_, _, cell)| cell.noisy())
        .map(move |(w, level, cell)| RunWarning::Noisy {
            at: at(a, w, level, cell),
            rps_min: cell.rps_min,
            rps_max: cell.rps_max,
            rps: cell.rps,
            range_share: cell.range_share(),
            reps: cell.reps(),
            pinned: a.pinned(),
            unit: a.unit(w),
        })
}

fn at(a: &Analysis, workload: &str, level: LoadLevel, cell: &Cell) -> CellAt {
    CellAt {
        contender: a.name(cell.contender).to_string(),
        workload: workload.to_string(),
        level,
    }
}
