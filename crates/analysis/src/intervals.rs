//! The 95% intervals of a stored run's latency percentiles, per cell (contender × workload
//! × level): what each figure of the run's tables rests on. A cell of one repetition
//! gives its step's interval from the order statistics of the answers
//! ([`percentile_intervals`]); a cell of several gives the distribution-free interval of
//! the median over the repetitions ([`median_interval`]), which is
//! the figure the tables print, so it holds the run-to-run spread as well. The percentile
//! charts draw the repetitions merged: [`merged_intervals`] bounds those.
//!
//! Seams: reads a [`Cell`] only; the renderers lay the intervals out. Units: the
//! percentiles in milliseconds, as the cells' figures.

use crate::cells::Cell;
use crate::certify::{median_interval, percentile_intervals, Interval, PERCENTILES};
use hdrhistogram::Histogram;
use shootout_model::{Measure, SecondStats};

/// How a cell's interval was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// One repetition: the order statistics of its answers, widened by the dependence
    /// its seconds show (95%).
    Answers,
    /// Several: the order-statistic interval of the median over the repetitions, at the
    /// coverage their number allows (95% from 6 repetitions; under that, less).
    Repetitions {
        /// The repetitions.
        reps: usize,
        /// The chance the interval holds the median (0..1).
        coverage: f64,
    },
}

impl Basis {
    /// The interval's confidence (0..1).
    pub fn coverage(self) -> f64 {
        match self {
            Basis::Answers => 0.95,
            Basis::Repetitions { coverage, .. } => coverage,
        }
    }

    /// Its key in JSON: `answers` or `repetitions`.
    pub fn key(self) -> &'static str {
        match self {
            Basis::Answers => "answers",
            Basis::Repetitions { .. } => "repetitions",
        }
    }
}

/// A percentile's interval in a cell (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellInterval {
    /// Lower end (ms).
    pub lo: f64,
    /// Upper end (ms).
    pub hi: f64,
    /// Too few answers above the percentile to bound it, in one repetition at least
    /// ([`Interval::open_above`]): the upper end is the slowest answer recorded there,
    /// and the truth may lie above it.
    pub open_above: bool,
    /// How it was found.
    pub basis: Basis,
}

/// Each of [`PERCENTILES`] of the cell's latency with its interval (`None` where the cell
/// has no answers).
pub fn cell_intervals(c: &Cell) -> [Option<CellInterval>; 4] {
    let per_rep: Vec<[Option<Interval>; 4]> = c
        .steps
        .iter()
        .map(|s| percentile_intervals(&s.histogram(Measure::Latency), &s.series()))
        .collect();
    let mut out = [None; 4];
    for (i, (p, _)) in PERCENTILES.iter().enumerate() {
        let open_above = per_rep.iter().any(|r| r[i].is_some_and(|ci| ci.open_above));
        out[i] = match per_rep.as_slice() {
            [one] => one[i].map(|ci| CellInterval {
                lo: ci.lo as f64 / 1e3,
                hi: ci.hi as f64 / 1e3,
                open_above,
                basis: Basis::Answers,
            }),
            _ => {
                let figures: Vec<f64> = c
                    .steps
                    .iter()
                    .map(|s| s.histogram(Measure::Latency))
                    .filter(|h| !h.is_empty())
                    .map(|h| h.value_at_quantile(*p) as f64 / 1e3)
                    .collect();
                median_interval(&figures).map(|m| CellInterval {
                    lo: m.lo,
                    hi: m.hi,
                    open_above,
                    basis: Basis::Repetitions {
                        reps: figures.len(),
                        coverage: m.coverage,
                    },
                })
            }
        };
    }
    out
}

/// The intervals (µs) of [`PERCENTILES`] of the cell's repetitions merged (`merged`, the
/// cell's [`Cell::merged_latency`] or raw one), the seconds of every repetition taken as
/// the batches of the design effect: a difference between repetitions shows as one
/// between their seconds and widens the interval.
pub fn merged_intervals(c: &Cell, merged: &Histogram<u64>) -> [Option<Interval>; 4] {
    let seconds: Vec<SecondStats> = c
        .steps
        .iter()
        .flat_map(|s| s.series().into_owned())
        .collect();
    percentile_intervals(merged, &seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::stored::StoredStep;
    use shootout_model::LoadLevel;

    const LEVEL: LoadLevel = LoadLevel::Concurrency { connections: 10 };

    /// A step whose latencies are `values` (µs), 100 answers a second.
    fn step(values: &[u64]) -> StoredStep {
        let mut s = crate::evidence::tests::step(0, 1, &[]);
        let mut all = shootout_model::latency_histogram();
        s.result.series = values
            .chunks(100)
            .enumerate()
            .map(|(i, chunk)| {
                let mut h = shootout_model::result::second_histogram();
                for &v in chunk {
                    all.record(v).unwrap();
                    h.record(v).unwrap();
                }
                SecondStats::of(i as u32, chunk.len() as u64, 0, &h)
            })
            .collect();
        s.result.histograms.latency = all;
        s
    }

    #[test]
    fn one_repetition_gives_its_answers_interval_several_the_median_over_them() {
        // 1,001–3,000 µs, shuffled (7,919 is prime to 2,000): every second holds a spread.
        let values: Vec<u64> = (0..2_000).map(|i| 1_001 + (i * 7_919) % 2_000).collect();
        let one = step(&values);
        let cell = crate::cells::cell(0, LEVEL, vec![&one]);
        let ci = cell_intervals(&cell);
        let own = percentile_intervals(&one.result.histograms.latency, &one.result.series);
        let p50 = ci[0].unwrap();
        assert_eq!(p50.basis, Basis::Answers);
        assert_eq!(
            (p50.lo, p50.hi),
            (
                own[0].unwrap().lo as f64 / 1e3,
                own[0].unwrap().hi as f64 / 1e3
            )
        );
        // p99.9 of 2,000 answers: too few above.
        assert!(ci[3].unwrap().open_above && !ci[2].unwrap().open_above);

        // Three repetitions 1 ms apart: the range of their figures, at 75%; the cell's
        // figure (the median) inside it.
        let shifted: Vec<StoredStep> = [0, 1_000, 2_000]
            .iter()
            .map(|d| step(&values.iter().map(|v| v + d).collect::<Vec<_>>()))
            .collect();
        let cell = crate::cells::cell(0, LEVEL, shifted.iter().collect());
        let p50 = cell_intervals(&cell)[0].unwrap();
        assert_eq!(
            p50.basis,
            Basis::Repetitions {
                reps: 3,
                coverage: 0.75
            }
        );
        let figure =
            |s: &StoredStep| s.result.histograms.latency.value_at_quantile(0.5) as f64 / 1e3;
        assert_eq!((p50.lo, p50.hi), (figure(&shifted[0]), figure(&shifted[2])));
        assert!(p50.lo <= cell.p50 && cell.p50 <= p50.hi);
        // Merged, the repetitions' difference is a difference between seconds: wider than
        // one repetition's own interval.
        let merged = merged_intervals(&cell, &cell.merged_latency())[0].unwrap();
        let own = own[0].unwrap();
        assert!(
            merged.hi - merged.lo > 3 * (own.hi - own.lo),
            "{merged:?} vs {own:?}"
        );
    }
}
