//! Several stored runs of one plan read as one (`shootout report --runs A,B,…`): their
//! steps pooled, so that every cell's median is over the repetitions of all the runs and its
//! `±` spans them — the spread across runs, which a single run's repetitions cannot show.
//!
//! Seams: a function of [`StoredRun`]s to a [`StoredRun`], so every renderer works on the
//! result unchanged; its steps keep their runs, so the analysis can warn of runs whose
//! steps were of unlike lengths ([`crate::RunWarning::UnlikeSteps`]). Contenders are matched by name; the first run's rows are kept, and a
//! contender only a later run has is added after them.

use shootout_model::stored::{ContenderId, RunId, StoredRun};
use shootout_model::RunStatus;

/// Why runs cannot be read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CombineError {
    /// Nothing to combine.
    #[error("no runs given: name two or more, e.g. --runs 3,5")]
    Empty,
    /// Runs of different plans measure different things.
    #[error("run {other} is of the plan '{other_name}', run {first} of '{first_name}': --runs reads runs of one plan only (shootout ls shows each run's plan)")]
    DifferentPlans {
        /// The first run.
        first: RunId,
        /// Its plan's name.
        first_name: String,
        /// The run of another plan.
        other: RunId,
        /// That plan's name.
        other_name: String,
    },
    /// The same run twice would count its steps twice.
    #[error("run {0} is given twice: each run counts once")]
    Repeated(RunId),
}

/// `runs` read as one: the first run's facts, every run's steps (repetitions numbered on
/// across the runs, in the order given), the least finished status of all.
pub fn combine(mut runs: Vec<StoredRun>) -> Result<StoredRun, CombineError> {
    if runs.is_empty() {
        return Err(CombineError::Empty);
    }
    let rest = runs.split_off(1);
    let mut out = runs.remove(0);
    for r in rest {
        if r.run.name != out.run.name {
            return Err(CombineError::DifferentPlans {
                first: out.run.id,
                first_name: out.run.name.clone(),
                other: r.run.id,
                other_name: r.run.name.clone(),
            });
        }
        if r.run.id == out.run.id || out.also.contains(&r.run.id) {
            return Err(CombineError::Repeated(r.run.id));
        }
        add(&mut out, r);
    }
    Ok(out)
}

/// Adds run `r`'s steps (and contenders new by name) to `out`.
fn add(out: &mut StoredRun, r: StoredRun) {
    out.also.push(r.run.id);
    out.run.started = out.run.started.min(r.run.started);
    out.run.ended = match (out.run.ended, r.run.ended) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    if out.run.status == RunStatus::Complete {
        out.run.status = r.run.status;
    }
    // r's contender ids → out's, by name.
    let mut id_of: Vec<(ContenderId, ContenderId)> = Vec::new();
    for c in r.contenders {
        let mine = out
            .contenders
            .iter()
            .find(|o| o.name == c.name)
            .map(|o| o.id);
        id_of.push((c.id, mine.unwrap_or(c.id)));
        if mine.is_none() {
            out.contenders.push(c);
        }
    }
    for mut s in r.steps {
        let Some(&(_, id)) = id_of.iter().find(|(theirs, _)| *theirs == s.contender) else {
            continue;
        };
        s.contender = id;
        s.repetition += out
            .steps
            .iter()
            .filter(|o| o.contender == id && o.workload == s.workload && o.level == s.level)
            .map(|o| o.repetition)
            .max()
            .unwrap_or(0);
        out.steps.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Analysis;
    use crate::evidence::tests::step;
    use shootout_model::stored::{ContenderRow, RunRow};
    use shootout_model::{ContenderStatus, MachineFacts};
    use std::time::SystemTime;

    /// Run `id` of plan `name` with contenders `a` and `b` (ids id*10, id*10+1), each
    /// measured once at `rps[i]` req/s for 3 s.
    fn run(id: i64, name: &str, rps: [u64; 2], status: RunStatus) -> StoredRun {
        let contenders: Vec<ContenderRow> = ["a", "b"]
            .iter()
            .enumerate()
            .map(|(i, n)| ContenderRow {
                id: ContenderId(id * 10 + i as i64),
                run: RunId(id),
                name: n.to_string(),
                command: String::new(),
                baseline: i == 0,
                status: ContenderStatus::Measured,
                detail: String::new(),
                version: None,
                stdout_log: None,
                stderr_log: None,
            })
            .collect();
        let steps = (0..2)
            .map(|i| step(id * 10 + i as i64, 1, &[rps[i]; 3]))
            .collect();
        StoredRun {
            run: RunRow {
                id: RunId(id),
                name: name.into(),
                plan_text: String::new(),
                plan_resolved: String::new(),
                machine: MachineFacts::default(),
                started: SystemTime::UNIX_EPOCH,
                ended: Some(SystemTime::UNIX_EPOCH),
                status,
            },
            contenders,
            steps,
            also: Vec::new(),
        }
    }

    #[test]
    fn two_runs_pool_their_repetitions_per_cell() {
        let c = combine(vec![
            run(3, "p", [1000, 2000], RunStatus::Complete),
            run(5, "p", [1200, 1800], RunStatus::Interrupted),
        ])
        .unwrap();
        assert_eq!(c.also, vec![RunId(5)]);
        assert_eq!(c.contenders.len(), 2);
        assert_eq!(c.run.status, RunStatus::Interrupted);
        let a = Analysis::of(&c);
        let cells: Vec<_> = a.cells().map(|(_, _, cell)| cell).collect();
        assert_eq!(cells.len(), 2, "one cell per contender, not per run");
        assert_eq!(cells[0].rps_values, vec![1000.0, 1200.0]);
        assert_eq!(cells[1].rps_values, vec![2000.0, 1800.0]);
        let reps: Vec<u32> = cells[0].steps.iter().map(|s| s.repetition).collect();
        assert_eq!(reps, vec![1, 2]);
        assert_eq!(cells[0].spread(), 100.0, "the spread spans both runs");
    }

    #[test]
    fn runs_of_other_plans_or_twice_the_same_are_refused() {
        let e = combine(vec![
            run(3, "p", [1, 2], RunStatus::Complete),
            run(4, "q", [1, 2], RunStatus::Complete),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("run 4 is of the plan 'q'"), "{e}");
        let e = combine(vec![
            run(3, "p", [1, 2], RunStatus::Complete),
            run(3, "p", [1, 2], RunStatus::Complete),
        ])
        .unwrap_err();
        assert_eq!(e, CombineError::Repeated(RunId(3)));
        assert_eq!(combine(Vec::new()).unwrap_err(), CombineError::Empty);
    }
}
