//! The numbers behind the HTML report of a run: steps grouped per workload into cells
//! (contender × load level, over repetitions) with medians and ranges, the same rules as
//! the terminal table (`shootout.rs`): medians, never the fastest repetition; a spread over
//! 10% of the median marks a cell as noisy; the baseline is the contender marked so, else
//! the first.
//!
//! Seams: reads a [`StoredRun`] only; `mod.rs` renders tables and `charts.rs` draws from
//! what is computed here. Latencies are milliseconds here (the histograms hold µs).

use shootout_model::{LatencySummary, LoadLevel};
use shootout_store::{StoredRun, StoredStep};

/// A spread (max − min of req/s) wider than this share of the median marks a cell noisy.
pub const NOISY: f64 = 0.10;

/// The median of `v` (0 when empty); sorts `v`.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

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

/// Server CPU time per completed request (µs) over a step, from its first and last
/// resource samples; `None` without two samples or without a completed request.
pub fn server_cpu_us(step: &StoredStep) -> Option<f64> {
    let (first, last) = (step.resources.first()?, step.resources.last()?);
    let used = (last.cpu_user + last.cpu_sys).saturating_sub(first.cpu_user + first.cpu_sys);
    let done = step.result.counts.completed;
    (done > 0 && step.resources.len() >= 2).then(|| used.as_secs_f64() * 1e6 / done as f64)
}

/// One contender × workload × level over its repetitions.
#[derive(Debug, Clone)]
pub struct Cell<'a> {
    /// Index of the contender in the run's contenders.
    pub contender: usize,
    /// The load level.
    pub level: LoadLevel,
    /// Its steps, by repetition.
    pub steps: Vec<&'a StoredStep>,
    /// Median req/s.
    pub rps: f64,
    /// Slowest repetition's req/s.
    pub rps_min: f64,
    /// Fastest repetition's req/s.
    pub rps_max: f64,
    /// Median of the repetitions' mean latency (ms).
    pub mean_ms: f64,
    /// Median of the repetitions' standard deviation of latency (ms).
    pub sd_ms: f64,
    /// Median of the repetitions' p50 latency (ms).
    pub p50_ms: f64,
    /// Median of the repetitions' p99 latency (ms).
    pub p99_ms: f64,
    /// Failed requests, all repetitions.
    pub failed: u64,
    /// Median server CPU per request (µs), when resources were sampled.
    pub cpu_us: Option<f64>,
    /// Largest RSS seen (bytes), when resources were sampled.
    pub peak_rss: Option<u64>,
}

impl<'a> Cell<'a> {
    fn of(contender: usize, level: LoadLevel, mut steps: Vec<&'a StoredStep>) -> Cell<'a> {
        steps.sort_by_key(|s| s.repetition);
        let mut rps: Vec<f64> = steps.iter().map(|s| s.result.ok_rps()).collect();
        let summaries: Vec<LatencySummary> = steps
            .iter()
            .map(|s| LatencySummary::of(&s.result.latency))
            .collect();
        let mut mean: Vec<f64> = summaries.iter().map(|s| s.mean).collect();
        let mut sd: Vec<f64> = summaries.iter().map(|s| s.stdev).collect();
        let mut p50: Vec<f64> = summaries.iter().map(|s| s.p50).collect();
        let mut p99: Vec<f64> = summaries.iter().map(|s| s.p99).collect();
        let mut cpu: Vec<f64> = steps.iter().filter_map(|s| server_cpu_us(s)).collect();
        let rps_min = rps.iter().copied().fold(f64::INFINITY, f64::min);
        let rps_max = rps.iter().copied().fold(0.0, f64::max);
        Cell {
            contender,
            level,
            rps: median(&mut rps),
            rps_min: if rps_min.is_finite() { rps_min } else { 0.0 },
            rps_max,
            mean_ms: median(&mut mean),
            sd_ms: median(&mut sd),
            p50_ms: median(&mut p50),
            p99_ms: median(&mut p99),
            failed: steps.iter().map(|s| s.result.counts.failed()).sum(),
            cpu_us: (!cpu.is_empty()).then(|| median(&mut cpu)),
            peak_rss: steps
                .iter()
                .flat_map(|s| s.resources.iter().map(|r| r.rss_bytes))
                .max(),
            steps,
        }
    }

    /// Repetitions measured.
    pub fn reps(&self) -> usize {
        self.steps.len()
    }

    /// Half the range of req/s over the repetitions (the "±").
    pub fn half_range(&self) -> f64 {
        (self.rps_max - self.rps_min) / 2.0
    }

    /// More than one repetition, and req/s spread over [`NOISY`] of the median.
    pub fn noisy(&self) -> bool {
        self.reps() > 1 && self.rps > 0.0 && self.rps_max - self.rps_min > NOISY * self.rps
    }
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
                        cells.push(Cell::of(c, *level, mine));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
