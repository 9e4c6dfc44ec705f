//! Whether one cell's good-answer throughput differs from another's, how sure we are, and
//! by how much: the one test behind the rankings ([`crate::ranking`]) and the stability of
//! a ranking across runs.
//!
//! The evidence a run has is of two kinds. With enough repetitions per cell (four or more
//! each, so that some arrangement can be significant at [`ALPHA`]), the test is the
//! two-sided Mann–Whitney U test of the repetitions' req/s ([`crate::mann_whitney`]), the
//! same test `shootout compare` uses. With fewer, the repetitions alone can never conclude,
//! so the per-second samples inside the steps are used: the good answers of every full
//! second, resampled with a hierarchical moving-block bootstrap — first the repetitions
//! (with replacement, so a difference between repetitions widens the interval), then
//! blocks of consecutive seconds within each (seconds are correlated: a block keeps a
//! stall and its neighbours together). The 95% interval of the ratio of means then decides:
//! an interval that excludes 1 is a significant difference. Both methods give a ratio and
//! an interval, so every verdict can be printed as "1.52 ± 0.08 times faster (95% CI
//! 1.44–1.60)".
//!
//! Seams: reads [`Cell`]s only. The bootstrap's generator is seeded with a constant, so a
//! report rendered twice from the same store is the same byte for byte.

use crate::cells::{median, Cell};
use crate::mann_whitney;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// The significance level (a 95% interval).
pub const ALPHA: f64 = 0.05;

/// Bootstrap resamples per test.
pub const RESAMPLES: usize = 2000;

/// The fewest full seconds a cell needs, over all its repetitions, for the per-second test.
pub const MIN_SECONDS: usize = 6;

/// The most tenths of a second read from one step (a minute): the tenths are the evidence
/// of steps shorter than [`MIN_SECONDS`] seconds.
const MAX_TENTHS: usize = 600;

/// The generator's seed: fixed, so that reports are reproducible.
pub(crate) const SEED: u64 = 0x0005_1070;

/// Which evidence decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The Mann–Whitney test of the repetitions' req/s (enough repetitions on both sides).
    Repetitions,
    /// The block bootstrap of the per-second good answers (too few repetitions for a rank
    /// test).
    Seconds,
    /// The same bootstrap over tenths of a second, counted from the requests sampled in
    /// each step (too few full seconds: a `--quick` step of one second).
    Tenths,
}

impl Method {
    /// `repetitions` or `seconds`, as the JSON reports say it.
    pub fn word(self) -> &'static str {
        match self {
            Method::Repetitions => "repetitions",
            Method::Seconds => "seconds",
            Method::Tenths => "tenths",
        }
    }
}

/// How cell B's good-answer throughput compares with cell A's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// B's req/s over A's: the ratio of medians of the repetitions ([`Method::Repetitions`])
    /// or of the per-second means ([`Method::Seconds`]).
    pub ratio: f64,
    /// The lower end of the 95% interval of `ratio`.
    pub low: f64,
    /// The upper end of the 95% interval of `ratio`.
    pub high: f64,
    /// The two-sided p-value (for [`Method::Seconds`], twice the share of resamples on the
    /// other side of 1, from 1/[`RESAMPLES`] to 1).
    pub p: f64,
    /// Which evidence decided.
    pub method: Method,
}

impl Difference {
    /// True when the difference is significant at [`ALPHA`]: the interval excludes 1 (an
    /// interval that touches 1 is no evidence of a difference), and with repetitions the
    /// rank test agrees, so that no verdict contradicts the interval printed with it.
    pub fn significant(&self) -> bool {
        let excludes_one = self.low > 1.0 || self.high < 1.0;
        match self.method {
            Method::Repetitions => self.p < ALPHA && excludes_one,
            Method::Seconds | Method::Tenths => excludes_one,
        }
    }

    /// How many times faster the faster side is (≥ 1), with the half-width of its interval
    /// in the same direction: `(1.52, 0.08)` for "1.52 ± 0.08 times".
    pub fn times(&self) -> (f64, f64) {
        if self.ratio >= 1.0 {
            (self.ratio, (self.high - self.low) / 2.0)
        } else {
            let (t, lo, hi) = (1.0 / self.ratio, 1.0 / self.high, 1.0 / self.low);
            (t, (hi - lo) / 2.0)
        }
    }
}

/// The good answers per second of every full second of each repetition of `cell` (the last,
/// partial second of a step is left out; so is a step whose series is empty).
pub fn seconds(cell: &Cell) -> Vec<Vec<f64>> {
    cell.steps
        .iter()
        .map(|s| {
            let full = s.result.duration.as_secs();
            s.result
                .series
                .iter()
                .filter(|x| u64::from(x.second) < full)
                .map(|x| x.completed.saturating_sub(x.failed) as f64)
                .collect::<Vec<f64>>()
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// How `b` compares with `a`; `None` when neither the repetitions nor the seconds are
/// enough to test (one repetition of under [`MIN_SECONDS`] seconds, say), or when a side
/// answered nothing.
pub fn difference(a: &Cell, b: &Cell) -> Option<Difference> {
    let (ra, rb) = (&a.rps_values, &b.rps_values);
    if mann_whitney::can_be_significant(ra.len(), rb.len(), ALPHA) {
        return by_repetitions(ra, rb);
    }
    by_seconds(&seconds(a), &seconds(b), Method::Seconds)
        .or_else(|| by_seconds(&tenths(a), &tenths(b), Method::Tenths))
}

/// The good answers of each full tenth of a second of each repetition, per second, as the
/// requests sampled in its steps count them: each sampled good answer stands for
/// `completed / sampled` requests (the sample is a uniform reservoir of all of them). The
/// last tenth is left out (requests that started in it may not have ended in the run).
pub fn tenths(cell: &Cell) -> Vec<Vec<f64>> {
    cell.steps
        .iter()
        .map(|s| {
            let r = &s.result;
            let samples = s.samples();
            let sampled = samples.len();
            // Tenths stand in only for steps of a few seconds; a step's duration comes from
            // the store (a file handed over), so the count is bounded, not allocated as read.
            let full = (r.duration.as_micros() / 100_000).min(MAX_TENTHS as u128) as usize;
            if sampled == 0 || full < 2 {
                return Vec::new();
            }
            let weight = r.counts.completed as f64 / sampled as f64;
            let mut counts = vec![0.0; full - 1];
            for x in samples.iter().filter(|x| x.failure.is_none()) {
                if let Some(c) = counts.get_mut((x.start_us / 100_000) as usize) {
                    *c += weight * 10.0;
                }
            }
            counts
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// The rank test of the repetitions, with a bootstrap interval of the ratio of medians.
fn by_repetitions(a: &[f64], b: &[f64]) -> Option<Difference> {
    let (ma, mb) = (median(a), median(b));
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let p = mann_whitney::test(a, b).map_or(1.0, |t| t.p);
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let (sa, sb) = (
                median(&resample(a, &mut rng)),
                median(&resample(b, &mut rng)),
            );
            (sa > 0.0).then(|| sb / sa)
        })
        .collect();
    let (low, high) = interval(&mut ratios)?;
    Some(Difference {
        ratio: mb / ma,
        low,
        high,
        p,
        method: Method::Repetitions,
    })
}

/// The hierarchical moving-block bootstrap of the per-second samples.
fn by_seconds(a: &[Vec<f64>], b: &[Vec<f64>], method: Method) -> Option<Difference> {
    let count = |x: &[Vec<f64>]| x.iter().map(Vec::len).sum::<usize>();
    if count(a) < MIN_SECONDS || count(b) < MIN_SECONDS {
        return None;
    }
    let (ma, mb) = (mean_of_all(a), mean_of_all(b));
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut ratios = Vec::with_capacity(RESAMPLES);
    let mut below = 0usize;
    for _ in 0..RESAMPLES {
        let (sa, sb) = (block_mean(a, &mut rng), block_mean(b, &mut rng));
        if sa > 0.0 {
            let r = sb / sa;
            below += usize::from(r < 1.0);
            ratios.push(r);
        }
    }
    let n = ratios.len().max(1) as f64;
    let (low, high) = interval(&mut ratios)?;
    let share = below as f64 / n;
    Some(Difference {
        ratio: mb / ma,
        low,
        high,
        // The resamples cannot tell a p-value under one in RESAMPLES.
        p: (2.0 * share.min(1.0 - share)).clamp(1.0 / RESAMPLES as f64, 1.0),
        method,
    })
}

/// The mean of every sample of every repetition.
fn mean_of_all(reps: &[Vec<f64>]) -> f64 {
    let n: usize = reps.iter().map(Vec::len).sum();
    reps.iter().flatten().sum::<f64>() / n.max(1) as f64
}

/// One bootstrap mean of the seconds of `reps` ([`resample_blocks`], Künsch's moving
/// blocks within each repetition).
fn block_mean(reps: &[Vec<f64>], rng: &mut SmallRng) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    let lengths: Vec<usize> = reps.iter().map(Vec::len).collect();
    resample_blocks(&lengths, rng, |rep, second| {
        sum += reps[rep][second];
        n += 1;
    });
    sum / n.max(1) as f64
}

/// One hierarchical moving-block resample of repetitions of `lengths[r]` seconds each:
/// as many repetitions as there are, drawn with replacement; from each, as many seconds
/// as it has, in blocks of ⌈n^⅓⌉ consecutive seconds (a block may start at any second
/// that leaves it whole). `take(repetition, second)` is called for each second drawn.
pub(crate) fn resample_blocks(
    lengths: &[usize],
    rng: &mut SmallRng,
    mut take: impl FnMut(usize, usize),
) {
    for _ in 0..lengths.len() {
        let rep = rng.random_range(0..lengths.len());
        let n = lengths[rep];
        if n == 0 {
            continue;
        }
        let len = (n as f64).cbrt().ceil() as usize;
        let starts = n + 1 - len;
        let mut taken = 0;
        while taken < n {
            let start = rng.random_range(0..starts);
            for second in (start..start + len).take(n - taken) {
                take(rep, second);
                taken += 1;
            }
        }
    }
}

/// `values` drawn with replacement, as many as there are.
fn resample(values: &[f64], rng: &mut SmallRng) -> Vec<f64> {
    (0..values.len())
        .map(|_| values[rng.random_range(0..values.len())])
        .collect()
}

/// The 2.5th and 97.5th percentiles of `v` (sorted in place); `None` when empty.
pub(crate) fn interval(v: &mut [f64]) -> Option<(f64, f64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some((at(ALPHA / 2.0), at(1.0 - ALPHA / 2.0)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cells::cell;
    use shootout_model::stored::{
        ContenderId, ContenderRow, RunId, RunRow, StepId, StoredRun, StoredStep,
    };
    use shootout_model::{
        ContenderStatus, LoadLevel, MachineFacts, RunResult, RunStatus, SecondStats, StepStatus,
    };
    use std::time::{Duration, SystemTime};

    /// A step whose per-second good answers are `per_second` (one full second each, the
    /// step lasting exactly that many seconds).
    pub(crate) fn step(contender: i64, rep: u32, per_second: &[u64]) -> StoredStep {
        let secs = per_second.len() as u64;
        let mut result = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_secs(secs));
        result.counts.completed = per_second.iter().sum();
        result.counts.ok = result.counts.completed;
        result.series = per_second
            .iter()
            .enumerate()
            .map(|(i, &n)| SecondStats {
                second: i as u32,
                completed: n,
                failed: 0,
                mean_us: 0.0,
                p50_us: 0,
                p99_us: 0,
                max_us: 0,
                histogram: Vec::new(),
            })
            .collect();
        StoredStep {
            id: StepId(i64::from(rep)),
            run: RunId(1),
            contender: ContenderId(contender),
            workload: "w".into(),
            level: LoadLevel::Concurrency { connections: 10 },
            repetition: rep,
            started: SystemTime::UNIX_EPOCH,
            ended: SystemTime::UNIX_EPOCH,
            status: StepStatus::Complete,
            result,
            resources: Vec::new(),
            wire: None,
            other_load: None,
            search: None,
            packed: None,
        }
    }

    /// Seconds around `center`, wobbling by `wobble` in a fixed pattern.
    pub(crate) fn around(center: u64, wobble: u64, n: usize) -> Vec<u64> {
        let pattern = [0i64, 1, -1, 2, -2, 1, 0, -1];
        (0..n)
            .map(|i| (center as i64 + pattern[i % pattern.len()] * wobble as i64) as u64)
            .collect()
    }

    /// A run of contenders `names` (ids 0, 1, …), each measured in two repetitions of
    /// `secs` seconds around the given req/s.
    pub(crate) fn run(contenders: &[(&str, u64, u64)], secs: usize) -> StoredRun {
        let rows = contenders
            .iter()
            .enumerate()
            .map(|(i, (name, _, _))| ContenderRow {
                id: ContenderId(i as i64),
                run: RunId(1),
                name: name.to_string(),
                command: String::new(),
                baseline: i == 0,
                status: ContenderStatus::Measured,
                detail: String::new(),
                version: None,
                stdout_log: None,
                stderr_log: None,
            })
            .collect();
        let mut steps = Vec::new();
        for (i, &(_, rps, wobble)) in contenders.iter().enumerate() {
            for rep in 1..=2u32 {
                let mut s = step(i as i64, rep, &around(rps + u64::from(rep), wobble, secs));
                s.id = StepId((i * 2) as i64 + i64::from(rep));
                steps.push(s);
            }
        }
        StoredRun {
            run: RunRow {
                id: RunId(1),
                name: "plan".into(),
                plan_text: String::new(),
                plan_resolved: String::new(),
                machine: MachineFacts::default(),
                started: SystemTime::UNIX_EPOCH,
                ended: None,
                status: RunStatus::Complete,
            },
            contenders: rows,
            steps,
            also: Vec::new(),
        }
    }

    fn diff(a: &[StoredStep], b: &[StoredStep]) -> Option<Difference> {
        let ca = cell(
            0,
            LoadLevel::Concurrency { connections: 10 },
            a.iter().collect(),
        );
        let cb = cell(
            1,
            LoadLevel::Concurrency { connections: 10 },
            b.iter().collect(),
        );
        difference(&ca, &cb)
    }

    #[test]
    fn two_repetitions_of_clearly_different_servers_are_told_apart_by_their_seconds() {
        // Two repetitions each can never be significant in a rank test; 4 s of per-second
        // samples each are enough to see a 20% gap between steady servers.
        let a = [
            step(0, 1, &around(1000, 10, 4)),
            step(0, 2, &around(1010, 10, 4)),
        ];
        let b = [
            step(1, 1, &around(1200, 10, 4)),
            step(1, 2, &around(1190, 10, 4)),
        ];
        let d = diff(&a, &b).expect("enough seconds");
        assert_eq!(d.method, Method::Seconds);
        assert!(d.significant(), "{d:?}");
        assert!(d.low > 1.1 && d.high < 1.3, "{d:?}");
        let (times, err) = d.times();
        assert!((times - 1.19).abs() < 0.02 && err < 0.05, "{times} ± {err}");
    }

    /// One repetition of one second (`--quick`): its tenths, counted from the sampled
    /// requests (`rps` answers, every `every`-th of them sampled, spread over the second).
    fn quick(contender: i64, rps: u64, every: u64) -> StoredStep {
        sampled(contender, rps, 1, every)
    }

    /// One repetition of `secs` seconds at `rps` answers a second, every `every`-th of
    /// them sampled, spread evenly over its seconds.
    pub(crate) fn sampled(contender: i64, rps: u64, secs: usize, every: u64) -> StoredStep {
        let mut s = step(contender, 1, &vec![rps; secs]);
        s.result.samples = (0..rps * secs as u64)
            .step_by(every as usize)
            .map(|i| shootout_model::Sample {
                start_us: i * 1_000_000 / rps,
                connect_us: 0,
                waiting_us: 0,
                total_us: 0,
                status: 200,
                failure: None,
            })
            .collect();
        s
    }

    /// A 39× gap in one second each is certain from the requests themselves; with no
    /// sampled requests there is nothing to test.
    #[test]
    fn a_large_gap_in_one_quick_second_is_told_from_its_requests() {
        let d = diff(&[quick(0, 57_000, 10)], &[quick(1, 1_460, 1)]).expect("tenths");
        assert_eq!(d.method, Method::Tenths);
        assert!(d.significant(), "{d:?}");
        assert!(d.high < 1.0 / 30.0, "{d:?}");
        let same = diff(&[quick(0, 1_000, 1)], &[quick(1, 1_000, 1)]).expect("tenths");
        assert!(!same.significant(), "{same:?}");
        assert_eq!(
            diff(&[step(0, 1, &[57_000])], &[step(1, 1, &[1_460])]),
            None,
            "no seconds, no samples"
        );
        // A forged store's step of a year allocates a minute of tenths, not a year's.
        let mut long = quick(0, 1_000, 1);
        long.result.duration = Duration::from_secs(365 * 86_400);
        let a = cell(0, LoadLevel::Concurrency { connections: 10 }, vec![&long]);
        assert_eq!(tenths(&a)[0].len(), MAX_TENTHS - 1);
    }

    #[test]
    fn equal_servers_are_a_tie() {
        let a = [
            step(0, 1, &around(1000, 30, 5)),
            step(0, 2, &around(1000, 30, 5)),
        ];
        let b = [
            step(1, 1, &around(1005, 30, 5)),
            step(1, 2, &around(995, 30, 5)),
        ];
        let d = diff(&a, &b).expect("enough seconds");
        assert!(!d.significant(), "{d:?}");
        assert!(d.low < 1.0 && d.high > 1.0);
    }

    #[test]
    fn a_baseline_whose_repetitions_disagree_is_no_ground_for_a_verdict() {
        // The baseline's two repetitions are steady inside but 30% apart; B sits between
        // them. Seconds alone would call B different from either repetition's mean; the
        // resampled repetitions widen the interval over 1.
        let a = [
            step(0, 1, &around(1000, 5, 5)),
            step(0, 2, &around(1300, 5, 5)),
        ];
        let b = [
            step(1, 1, &around(1200, 5, 5)),
            step(1, 2, &around(1210, 5, 5)),
        ];
        let d = diff(&a, &b).expect("enough seconds");
        assert!(!d.significant(), "{d:?}");
    }

    #[test]
    fn enough_repetitions_use_the_rank_test() {
        let reps = |c: i64, v: u64| -> Vec<StoredStep> {
            (1..=5)
                .map(|r| step(c, r, &[v + u64::from(r) * 3; 2]))
                .collect()
        };
        let d = diff(&reps(0, 1000), &reps(1, 1500)).expect("five repetitions");
        assert_eq!(d.method, Method::Repetitions);
        assert!(d.significant() && d.p < 0.05, "{d:?}");
        assert!((d.ratio - 1.5).abs() < 0.01);
        let d = diff(&reps(0, 1000), &reps(1, 1000)).expect("five repetitions");
        assert!(!d.significant());
    }

    /// `1.04 times faster (95% interval 1.00–1.09; significantly faster)`: the rank test's
    /// p under 0.05 with a bootstrap interval whose low end is 1 was called significant.
    #[test]
    fn an_interval_that_touches_one_is_not_significant_whatever_the_rank_test_says() {
        let d = |low: f64, high: f64| Difference {
            ratio: 1.04,
            low,
            high,
            p: 0.008,
            method: Method::Repetitions,
        };
        assert!(!d(1.0, 1.09).significant());
        assert!(!d(0.97, 1.09).significant());
        assert!(d(1.001, 1.09).significant());
        let seconds = Difference {
            method: Method::Seconds,
            ..d(1.0, 1.09)
        };
        assert!(!seconds.significant());
    }

    #[test]
    fn too_little_evidence_is_no_verdict() {
        let a = [step(0, 1, &[1000, 1000])];
        let b = [step(1, 1, &[2000, 2000])];
        assert_eq!(diff(&a, &b), None);
        let dead = [step(1, 1, &[0; 8])];
        assert_eq!(diff(&[step(0, 1, &[5; 8])], &dead), None);
    }

    #[test]
    fn the_partial_last_second_is_left_out() {
        let mut s = step(0, 1, &[100, 100, 100]);
        s.result.duration = Duration::from_millis(2500);
        let c = cell(0, LoadLevel::Concurrency { connections: 10 }, vec![&s]);
        assert_eq!(seconds(&c), vec![vec![100.0, 100.0]]);
    }

    #[test]
    fn a_report_rendered_twice_says_the_same() {
        let a = [
            step(0, 1, &around(1000, 40, 4)),
            step(0, 2, &around(1040, 40, 4)),
        ];
        let b = [
            step(1, 1, &around(1080, 40, 4)),
            step(1, 2, &around(1060, 40, 4)),
        ];
        assert_eq!(diff(&a, &b), diff(&a, &b));
    }
}
