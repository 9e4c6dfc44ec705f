//! The numbers behind the HTML report of a run: the analysis's workloads
//! ([`Cell`]s from `shootout-analysis`, so every statistic, the grouping and the baseline
//! have one definition) laid out for the charts, with the load levels sorted for their
//! axes.
//!
//! Seams: reads an [`Analysis`] only; `mod.rs` renders tables and `charts.rs` draws from
//! what is arranged here. Latencies are milliseconds here (the histograms hold µs).

use shootout_analysis::cells::{level_key, LevelKey};
use shootout_analysis::{Analysis, Unit};
use shootout_model::stored::StoredStep;
use shootout_model::LoadLevel;
use std::collections::HashMap;
use std::ops::Range;

pub use shootout_analysis::Cell;

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
    /// What its counts count (requests, or a gRPC workload's calls, replies, messages).
    pub unit: Unit,
    /// The contenders were not all spoken to alike (protocol, streams, pipelining): each
    /// row then says how its contender was (the analysis's rule, as in the other formats).
    pub mixed_wire: bool,
    /// Each level's place in `levels` and its cells' in `cells`, by level (a level equal
    /// to no other, a rate that is not a number, has neither): the tables and charts look
    /// a level up for each cell, without a search of them all (20,000 levels).
    at: HashMap<LevelKey, (usize, Range<usize>)>,
}

impl<'a> Workload<'a> {
    /// The cells of one contender, in level order.
    pub fn of_contender(&self, contender: usize) -> impl Iterator<Item = &Cell<'a>> + '_ {
        self.cells.iter().filter(move |c| c.contender == contender)
    }

    /// The cell of `contender` at `level`.
    pub fn cell(&self, contender: usize, level: LoadLevel) -> Option<&Cell<'a>> {
        self.cells_at(level)
            .iter()
            .find(|c| c.contender == contender)
    }

    /// The cells at `level`, in plan order.
    pub fn cells_at(&self, level: LoadLevel) -> &[Cell<'a>] {
        match level_key(level).and_then(|k| self.at.get(&k)) {
            Some((_, cells)) => &self.cells[cells.clone()],
            None => &[],
        }
    }

    /// The place of `level` in `levels`.
    pub fn level_index(&self, level: LoadLevel) -> Option<usize> {
        self.at.get(&level_key(level)?).map(|(i, _)| *i)
    }

    /// How the client spoke to this cell's contender, when the workload's contenders were
    /// not spoken to alike: `h2 × 10 streams`.
    pub fn wire_label(&self, cell: &Cell<'a>) -> Option<String> {
        cell.wire_label(self.mixed_wire).map(|w| w.to_string())
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
        self.top()
            .map_or_else(Vec::new, |top| self.first_steps(top))
    }

    /// The repetitions of each contender at `level`, at most the first `cap` of each, in
    /// plan order then in the order measured; each with its number (1-based, in that
    /// order) and the contender's count of repetitions.
    pub fn repetitions(&self, level: LoadLevel, cap: usize) -> Vec<Repetition<'a>> {
        self.contenders()
            .into_iter()
            .filter_map(|c| self.cell(c, level))
            .flat_map(|cell| {
                let of = cell.steps.len();
                cell.steps
                    .iter()
                    .take(cap)
                    .enumerate()
                    .map(move |(i, step)| Repetition {
                        contender: cell.contender,
                        number: i + 1,
                        of,
                        step,
                    })
            })
            .collect()
    }

    /// The first repetition of each contender at `level`, in plan order.
    pub fn first_steps(&self, level: LoadLevel) -> Vec<(usize, &'a StoredStep)> {
        self.contenders()
            .into_iter()
            .filter_map(|c| Some((c, *self.cell(c, level)?.steps.first()?)))
            .collect()
    }
}

/// One repetition of a contender at a level, as a timeline draws it.
#[derive(Debug, Clone, Copy)]
pub struct Repetition<'a> {
    /// Index of the contender in the run's contenders.
    pub contender: usize,
    /// Its number among the contender's repetitions at this level (1-based).
    pub number: usize,
    /// How many repetitions the contender has at this level.
    pub of: usize,
    /// The stored step.
    pub step: &'a StoredStep,
}

/// The run's workloads in the order they were first measured, each with its cells, levels
/// sorted: closed-loop first, then ascending by connections or rate.
pub fn workloads<'a>(a: &Analysis<'a>) -> Vec<Workload<'a>> {
    a.workloads
        .iter()
        .map(|w| {
            let mut levels: Vec<LoadLevel> = w.levels.iter().map(|l| l.level).collect();
            levels.sort_by(|a, b| {
                is_rate(*a)
                    .cmp(&is_rate(*b))
                    .then(level_value(*a).total_cmp(&level_value(*b)))
            });
            let mut blocks = HashMap::new();
            for l in &w.levels {
                if let Some(key) = level_key(l.level) {
                    blocks.entry(key).or_insert(l);
                }
            }
            let (mut cells, mut at) = (Vec::new(), HashMap::new());
            for (i, key) in levels.iter().enumerate() {
                let Some(key) = level_key(*key) else { continue };
                let Some(l) = blocks.get(&key) else { continue };
                let from = cells.len();
                cells.extend(l.cells.iter().cloned());
                at.entry(key).or_insert((i, from..cells.len()));
            }
            let mixed_wire = w.wire_mixed();
            Workload {
                name: w.name,
                levels,
                cells,
                unit: w.unit,
                mixed_wire,
                at,
            }
        })
        .collect()
}
