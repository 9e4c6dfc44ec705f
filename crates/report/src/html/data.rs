//! The numbers behind the HTML report of a run: steps grouped per workload into the
//! terminal table's cells ([`Cell`], from `shootout::analysis`, so every statistic has one
//! definition), with the load levels sorted for the charts' axes; the baseline is the
//! contender marked so, else the first.
//!
//! Seams: reads a [`StoredRun`] only; `mod.rs` renders tables and `charts.rs` draws from
//! what is computed here. Latencies are milliseconds here (the histograms hold µs).

use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::LoadLevel;

pub use crate::shootout::analysis::{Cell, NOISY};

/// The load level's value on a sweep's axis: connections, or requests per second.
pub fn level_value(level: LoadLevel) -> f64 {
    match level {
        LoadLevel::Concurrency { connections } => connections as f64,
        LoadLevel::Rate { rps, .. } => rps,
    }
}

/// True for an open-loop (rate) level, where corrected and raw latency differ.
pub fn is_rate(level: LoadLevel) -> bool {
    matches!(level, LoadLevel::Rate { .. })
}

/// One workload of a run: its levels (ascending) and cells.
#[derive(Debug, Clone)]
pub struct Workload<'a> {
    /// The workload's name in the plan.
    pub name: &'a str,
    /// Its load levels, closed-loop first, then ascending by connections or rate.
    pub levels: Vec<LoadLevel>,
    /// Its cells, by level then by contender.
    pub cells: Vec<Cell<'a>>,
}

impl<'a> Workload<'a> {
    /// The cells of one contender, in level order.
    pub fn of_contender(&self, contender: usize) -> impl Iterator<Item = &Cell<'a>> + '_ {
        self.cells.iter().filter(move |c| c.contender == contender)
    }

    /// The cell of `contender` at `level`.
    pub fn cell(&self, contender: usize, level: LoadLevel) -> Option<&Cell<'a>> {
        self.cells
            .iter()
            .find(|c| c.contender == contender && c.level == level)
    }

    /// The highest load level (the last one).
    pub fn top(&self) -> Option<LoadLevel> {
        self.levels.last().copied()
    }

    /// The contenders with a step in this workload, in plan order.
    pub fn contenders(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.cells.iter().map(|c| c.contender).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The first repetition of each contender at the highest level, in plan order.
    pub fn top_steps(&self) -> Vec<(usize, &'a StoredStep)> {
        let Some(top) = self.top() else {
            return Vec::new();
        };
        self.contenders()
            .into_iter()
            .filter_map(|c| Some((c, *self.cell(c, top)?.steps.first()?)))
            .collect()
    }
}

/// Index of the step's contender among the run's contenders.
pub fn contender_of(run: &StoredRun, step: &StoredStep) -> Option<usize> {
    run.contenders.iter().position(|c| c.id == step.contender)
}

/// The contender the others are compared with: the one marked baseline, else the first.
pub fn baseline(run: &StoredRun) -> usize {
    run.contenders.iter().position(|c| c.baseline).unwrap_or(0)
}

/// The run's workloads in the order they were first measured, each with its cells.
pub fn workloads(run: &StoredRun) -> Vec<Workload<'_>> {
    let mut names: Vec<&str> = Vec::new();
    for s in &run.steps {
        if !names.contains(&s.workload.as_str()) {
            names.push(&s.workload);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let steps: Vec<(usize, &StoredStep)> = run
                .steps
                .iter()
                .filter(|s| s.workload == name)
                .filter_map(|s| Some((contender_of(run, s)?, s)))
                .collect();
            let mut levels: Vec<LoadLevel> = Vec::new();
            for (_, s) in &steps {
                if !levels.contains(&s.level) {
                    levels.push(s.level);
                }
            }
            levels.sort_by(|a, b| {
                is_rate(*a)
                    .cmp(&is_rate(*b))
                    .then(level_value(*a).total_cmp(&level_value(*b)))
            });
            let mut cells = Vec::new();
            for level in &levels {
                for c in 0..run.contenders.len() {
                    let mine: Vec<&StoredStep> = steps
                        .iter()
                        .filter(|(ci, s)| *ci == c && s.level == *level)
                        .map(|(_, s)| *s)
                        .collect();
                    if !mine.is_empty() {
                        cells.push(crate::shootout::analysis::cell(c, *level, mine));
                    }
                }
            }
            Workload {
                name,
                levels,
                cells,
            }
        })
        .collect()
}
