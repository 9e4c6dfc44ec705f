//! The evidence that decides a rate at the capacity search's boundary ([`crate::capacity`]).
//!
//! A step's verdict says whether its SLOs held over the whole step, but a rate near the
//! capacity can meet them in one step and break them in the next: a stall, a collection,
//! a neighbour's burst. So the rates on either side of the boundary are measured more than
//! once, and the steps at a rate are decided together with the evidence the run has, as
//! the rankings decide ([`crate::evidence`]).
//!
//! Each SLO of the common kinds bounds a ratio of two counts summed over the seconds of a
//! step: `p99<50ms` bounds the share of answers at or above 50 ms (at most 1 %),
//! `errors<0.1%` the failures over the completed requests, `mean<5ms` the summed latency
//! over the answers. A judged step keeps, for every second and every SLO, the two counts
//! ([`Evidence`]). The seconds of the steps at a rate are pooled, and each SLO's ratio
//! gets a 95 % interval ([`ratio_interval`]): Student's t over the per-second counts,
//! its variance inflated for the correlation of consecutive seconds (a stall lasts more
//! than a second; a step unlike the others shows as such a correlation too), and never
//! narrower than the exact binomial interval of the pooled share. (A block bootstrap of
//! the seconds, used before, covered a known ratio in only 81–97 of 100 seeded runs: with
//! 10–20 seconds, resampling understates the spread.) The rate is decided ([`call`])
//! when every SLO's 95 % interval lies on its holding side (met), or one SLO's
//! lies wholly on its breaking side (broke). Otherwise it is unclear, and the search
//! measures the rate again, up to [`MOST_STEPS`] steps; then the pooled ratio (the point
//! estimate of all its steps) decides.
//!
//! An SLO of another kind (`max<1s`, `failed<10`, `rps>1000`, or a lower bound on
//! latency) has no per-second form, and a step judged `not_kept` says nothing of the
//! server: a rate with either is decided by its steps' verdicts, two agreeing of three
//! ([`crate::capacity`]). A step whose generator sent some requests late but was judged on
//! the server keeps its evidence: latency counts from each request's due time, so the
//! lag can only make its seconds look worse.
//!
//! Seams: reads a [`RunResult`]'s per-second histograms (kept in memory by the engine, in
//! result files and in the store); no I/O. The interval is deterministic, so a report
//! replayed from the store decides as the run did.

use crate::decided::{clopper_pearson_lower, clopper_pearson_upper};
use crate::student::t975;
use shootout_model::find_max::Verdict;
use shootout_model::threshold::{Metric, Op, Threshold};
use shootout_model::RunResult;

/// The most steps measured at one rate: a rate still unclear after them is decided by
/// its pooled ratio.
pub const MOST_STEPS: usize = 5;

/// What an SLO bounds: the ratio of its two per-second counts holds at most `bound`
/// (below it when `strict`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    bound: f64,
    strict: bool,
    /// The latency limit (µs) of a quantile SLO: its numerator counts the answers at or
    /// above it (above it when `at_limit_holds`).
    limit_us: f64,
    at_limit_holds: bool,
    metric: Metric,
}

impl Bound {
    /// The bound of `slo`; `None` for an SLO with no per-second form (the per-second
    /// counts are the whole run's, so an SLO on a journey's step has none).
    fn of(slo: &Threshold) -> Option<Bound> {
        if slo.step.is_some() {
            return None;
        }
        let below = match slo.op {
            Op::Below => true,
            Op::AtMost => false,
            Op::Above | Op::AtLeast => return None,
        };
        let (bound, strict) = match slo.metric {
            // pX < L: at most (1 − X) of the answers at or above L (pX <= L: above L).
            Metric::Quantile(q) => (1.0 - f64::from(q.min(999)) / 1000.0, false),
            Metric::Mean => (slo.limit, below),
            Metric::Errors => (slo.limit / 100.0, below),
            Metric::Max | Metric::Failed | Metric::Rps => return None,
        };
        Some(Bound {
            bound,
            strict,
            limit_us: slo.limit,
            at_limit_holds: !below,
            metric: slo.metric,
        })
    }

    /// Whether a ratio meets the bound.
    fn holds(&self, ratio: f64) -> bool {
        if self.strict {
            ratio < self.bound
        } else {
            ratio <= self.bound
        }
    }

    /// The two counts of one second: `completed` and `failed` requests, `latency` the
    /// answered ones' (µs).
    fn counts(
        &self,
        completed: u64,
        failed: u64,
        latency: &hdrhistogram::Histogram<u64>,
    ) -> (f64, f64) {
        let answers = latency.len() as f64;
        match self.metric {
            Metric::Quantile(_) => {
                let beyond: u64 = latency
                    .iter_recorded()
                    .filter(|v| {
                        let v = v.value_iterated_to() as f64;
                        if self.at_limit_holds {
                            v > self.limit_us
                        } else {
                            v >= self.limit_us
                        }
                    })
                    .map(|v| v.count_at_value())
                    .sum();
                (beyond as f64, answers)
            }
            Metric::Mean if answers > 0.0 => (latency.mean() * answers, answers),
            Metric::Errors => (failed as f64, completed as f64),
            _ => (0.0, 0.0),
        }
    }
}

/// A judged step's evidence: per second, per SLO, the two counts whose ratio the SLO
/// bounds. Empty when it cannot take part (an SLO with no per-second form, a step judged
/// `not_kept`, seconds without their histograms).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evidence {
    bounds: Vec<Bound>,
    seconds: Vec<Vec<(f64, f64)>>,
}

impl Evidence {
    /// The evidence of the step that gave `result`, judged `verdict` against `slos`.
    pub fn of(slos: &[Threshold], result: &RunResult, verdict: &Verdict) -> Evidence {
        let none = Evidence::default();
        let Some(bounds) = slos.iter().map(Bound::of).collect::<Option<Vec<_>>>() else {
            return none;
        };
        if bounds.is_empty() || *verdict == Verdict::NotKept {
            return none;
        }
        let mut seconds = Vec::with_capacity(result.series.len());
        for s in &result.series {
            let Ok(latency) = shootout_model::hdr::decode(&s.histogram) else {
                return none;
            };
            seconds.push(
                bounds
                    .iter()
                    .map(|b| b.counts(s.completed, s.failed, &latency))
                    .collect(),
            );
        }
        Evidence { bounds, seconds }
    }

    /// True when the step cannot take part.
    pub fn is_empty(&self) -> bool {
        self.seconds.is_empty()
    }
}

/// The largest lag-1 autocorrelation the interval allows for: at 0.9 the variance is
/// already inflated 19-fold.
pub const MOST_RHO: f64 = 0.9;

/// The 95 % interval of the ratio Σ num / Σ den over the seconds of a rate's steps
/// (`steps[k][t]`: second `t` of step `k`, its two counts): Student's t with n − 1 degrees
/// of freedom (n seconds in all) around the pooled ratio R, its standard error that of a
/// ratio estimator, √(Σ eₜ² / (n − 1) / n) / d̄ with eₜ = numₜ − R·denₜ and d̄ the mean
/// denominator, its variance inflated by (1 + ρ) / (1 − ρ) for the correlation of
/// consecutive seconds (AR(1); ρ the lag-1 autocorrelation of eₜ within each step,
/// clamped to [0, [`MOST_RHO`]]). When the counts are counts of events (`counts`: a
/// percentile's answers beyond its limit, an error share's failures), the interval is
/// never narrower than the exact two-sided 95 % (Clopper–Pearson) interval of Σ num
/// events in Σ den trials: the seconds may vary less than chance allows, never the
/// share. `None` with fewer than two seconds or no denominator.
pub fn ratio_interval(steps: &[Vec<(f64, f64)>], counts: bool) -> Option<(f64, f64)> {
    let all = || steps.iter().flatten();
    let n = all().count();
    let (num, den) = all().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    if n < 2 || den <= 0.0 {
        return None;
    }
    let r = num / den;
    let mean_den = den / n as f64;
    let e = |&(x, y): &(f64, f64)| x - r * y;
    let sum_sq: f64 = all().map(|s| e(s).powi(2)).sum();
    let lagged: f64 = steps
        .iter()
        .flat_map(|step| step.windows(2).map(|w| e(&w[0]) * e(&w[1])))
        .sum();
    let rho = if sum_sq > 0.0 {
        (lagged / sum_sq).clamp(0.0, MOST_RHO)
    } else {
        0.0
    };
    let variance = sum_sq / (n - 1) as f64 / n as f64 / (mean_den * mean_den);
    let half = t975((n - 1) as f64) * (variance * (1.0 + rho) / (1.0 - rho)).sqrt();
    let (mut lo, mut hi) = (r - half, r + half);
    if counts {
        let (x, trials) = (num.round() as u64, den.round() as u64);
        lo = lo.min(clopper_pearson_lower(x, trials, 0.975));
        hi = hi.max(clopper_pearson_upper(x, trials, 0.975));
    }
    Some((lo.max(0.0), hi))
}

/// How the evidence of a rate's steps decides it.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// Every SLO's interval on its holding side.
    Met,
    /// This SLO's interval wholly on its breaking side (the first such).
    Broke(usize),
    /// Neither: the verdict the pooled ratios lean to.
    Unclear(Verdict),
}

/// The call of the steps at one rate; `None` when fewer than two steps or one without
/// evidence (the verdicts decide then), or steps judged against different SLOs.
pub fn call(steps: &[&Evidence]) -> Option<Call> {
    let first = steps.first()?;
    if steps.len() < 2
        || steps
            .iter()
            .any(|e| e.is_empty() || e.bounds != first.bounds)
    {
        return None;
    }
    let bounds = &first.bounds;
    let slos = bounds.len();
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
    // The point estimate: every second of every step.
    let pooled: Vec<f64> = (0..slos)
        .map(|i| {
            let (num, den) = steps
                .iter()
                .flat_map(|e| &e.seconds)
                .fold((0.0, 0.0), |(n, d), s| (n + s[i].0, d + s[i].1));
            ratio(num, den)
        })
        .collect();
    let mut all_hold = true;
    for (i, b) in bounds.iter().enumerate() {
        let series: Vec<Vec<(f64, f64)>> = steps
            .iter()
            .map(|e| e.seconds.iter().map(|s| s[i]).collect())
            .collect();
        let counts = matches!(b.metric, Metric::Quantile(_) | Metric::Errors);
        let (low, high) = ratio_interval(&series, counts)?;
        if !b.holds(low) {
            return Some(Call::Broke(i));
        }
        all_hold &= b.holds(high);
    }
    if all_hold {
        return Some(Call::Met);
    }
    let leaning = bounds
        .iter()
        .zip(&pooled)
        .position(|(b, &p)| !b.holds(p))
        .map_or(Verdict::Met, Verdict::Broke);
    Some(Call::Unclear(leaning))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use shootout_model::result::second_histogram;
    use shootout_model::{ScheduleStats, SecondStats};
    use std::time::{Duration, SystemTime};

    fn slo(t: &str) -> Threshold {
        t.parse().unwrap()
    }

    /// A step of `slow.len()` seconds at 1,000 answers a second: in second `i`, `slow[i]`
    /// answers take 80 ms and the others 1 ms; `failed[i]` of the second's requests failed.
    pub(crate) fn step(slow: &[u64], failed: &[u64]) -> RunResult {
        let mut r = RunResult::empty(
            SystemTime::UNIX_EPOCH,
            Duration::from_secs(slow.len() as u64),
        );
        for (i, &n) in slow.iter().enumerate() {
            let mut h = second_histogram();
            h.record_n(80_000, n).unwrap();
            h.record_n(1_000, 1_000 - n).unwrap();
            let f = failed.get(i).copied().unwrap_or(0);
            r.series.push(SecondStats::of(i as u32, 1_000 + f, f, &h));
            r.histograms.latency.add(&h).unwrap();
            r.counts.completed += 1_000 + f;
            r.counts.ok += 1_000;
            r.counts.failures[shootout_model::FailureKind::Status] += f;
        }
        r.schedule = Some(ScheduleStats {
            target_rps: 1_000.0,
            achieved_rps: 1_000.0,
            due: 1_000,
            sent: 1_000,
            max_connections: 100,
            ..Default::default()
        });
        r
    }

    fn of(slos: &[Threshold], r: &RunResult) -> Evidence {
        Evidence::of(slos, r, &crate::capacity::judge(slos, r))
    }

    fn decide(slos: &[Threshold], steps: &[RunResult]) -> Option<Call> {
        let e: Vec<Evidence> = steps.iter().map(|r| of(slos, r)).collect();
        call(&e.iter().collect::<Vec<_>>())
    }

    #[test]
    fn steps_well_within_or_well_beyond_the_slo_decide_at_once() {
        let p99 = [slo("p99<50ms")];
        // 0.2 % slow in every second: p99 is 1 ms.
        let calm = step(&[2; 10], &[]);
        assert_eq!(decide(&p99, &[calm.clone(), calm.clone()]), Some(Call::Met));
        // 5 % slow: p99 is 80 ms.
        let slow = step(&[50; 10], &[]);
        assert_eq!(decide(&p99, &[slow.clone(), slow]), Some(Call::Broke(0)));
        // One step is never enough: the verdicts decide.
        assert_eq!(decide(&p99, &[calm]), None);
    }

    /// Two steps whose verdicts agree, but whose evidence sits on the edge: one more step.
    #[test]
    fn steps_near_the_bound_are_unclear_and_lean_to_their_pooled_ratio() {
        let p99 = [slo("p99<50ms")];
        // 0.8 % and 1.1 % slow overall (one second of each a burst): the pooled share is
        // 0.95 %, within 1 %, but the bursts widen its interval past it.
        let a = step(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 80], &[]);
        let b = step(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 110], &[]);
        assert_eq!(
            decide(&p99, &[a.clone(), b.clone()]),
            Some(Call::Unclear(Verdict::Met))
        );
        let c = step(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 130], &[]);
        assert_eq!(
            decide(&p99, &[b, c]),
            Some(Call::Unclear(Verdict::Broke(0)))
        );
    }

    /// A stall in one of two steps widens the interval: its seconds stray together, a
    /// correlation that inflates the variance, so the one bad step is not averaged away.
    #[test]
    fn a_step_unlike_the_other_keeps_the_rate_unclear() {
        let p99 = [slo("p99<50ms")];
        let calm = step(&[0; 10], &[]);
        let stalled = step(&[0, 0, 300, 300, 0, 0, 0, 0, 0, 0], &[]);
        assert!(matches!(
            decide(&p99, &[calm.clone(), stalled]),
            Some(Call::Unclear(_))
        ));
        assert_eq!(decide(&p99, &[calm.clone(), calm]), Some(Call::Met));
    }

    #[test]
    fn each_slo_is_judged_and_the_first_clearly_broken_one_is_named() {
        let both = [slo("p99<50ms"), slo("errors<0.1%")];
        let failing = step(&[0; 10], &[5; 10]);
        assert_eq!(
            decide(&both, &[failing.clone(), failing]),
            Some(Call::Broke(1))
        );
        let mean = [slo("mean<2ms")];
        let calm = step(&[2; 10], &[]);
        assert_eq!(decide(&mean, &[calm.clone(), calm]), Some(Call::Met));
        let slow = step(&[100; 10], &[]);
        assert_eq!(decide(&mean, &[slow.clone(), slow]), Some(Call::Broke(0)));
    }

    #[test]
    fn slos_without_a_per_second_form_and_steps_not_kept_leave_it_to_the_verdicts() {
        let calm = step(&[2; 10], &[]);
        for s in ["max<1s", "failed<10", "rps>100", "p99>1ms"] {
            assert!(of(&[slo(s)], &calm).is_empty(), "{s}");
        }
        let p99 = [slo("p99<50ms")];
        // Late sends with the SLO met: judged on the server, the evidence stays.
        let mut late = calm.clone();
        late.schedule.as_mut().unwrap().late = 500;
        assert!(!of(&p99, &late).is_empty());
        // Short of the rate for the generator's want: not kept, no evidence.
        let mut short = late.clone();
        short.schedule.as_mut().unwrap().achieved_rps = 900.0;
        assert_eq!(crate::capacity::judge(&p99, &short), Verdict::NotKept);
        assert!(of(&p99, &short).is_empty());
        let mut unread = calm.clone();
        unread.series[3].histogram.clear();
        assert!(of(&p99, &unread).is_empty());
        assert_eq!(decide(&p99, &[calm, short]), None);
    }

    /// `ratio_interval` against an independent standard-library Python implementation of
    /// the same rule (the exact binomial bounds by bisection on the binomial CDF, the t
    /// quantiles from tables: t₀.₉₇₅ = 2.262157 at 9, 3.182446 at 3, 2.776445 at 4,
    /// 2.093024 at 19, 2.022691 at 39 degrees of freedom), computed once and pinned.
    #[test]
    fn the_ratio_interval_is_students_t_widened_and_never_under_the_exact_one() {
        let steps = |rows: &[&[f64]]| -> Vec<Vec<(f64, f64)>> {
            rows.iter()
                .map(|r| r.iter().map(|&x| (x, 1_000.0)).collect())
                .collect()
        };
        let ramp: Vec<f64> = (1..=20).map(f64::from).collect();
        let jump: Vec<f64> = [0.0; 20].into_iter().chain([40.0; 20]).collect();
        #[rustfmt::skip]
        type Row = (Vec<Vec<(f64, f64)>>, bool, (f64, f64));
        let rows: [Row; 7] = [
            // 10 seconds, no correlation (ρ < 0 clamps to 0): t's lower end, the exact
            // upper end (100 of 10,000: 0.8137 %–1.2150 %).
            (
                steps(&[&[8., 12., 9., 15., 7., 11., 10., 13., 6., 9.]]),
                true,
                (0.008_004_964_906_897_498, 0.012_149_504_886_056_966),
            ),
            // Two steps of 5 s, a trend in each: ρ = 0.487 widens t.
            (
                steps(&[&[5., 6., 8., 9., 12.], &[14., 12., 11., 9., 8.]]),
                true,
                (0.005_944_313_453_854_971, 0.012_855_686_546_145_03),
            ),
            // A mean (latency summed over answers): no exact floor.
            (
                vec![vec![
                    (1_200.5, 1_000.0),
                    (1_500.0, 1_100.0),
                    (900.0, 950.0),
                    (1_300.0, 1_000.0),
                ]],
                false,
                (0.924_506_439_177_085_1, 1.495_493_560_822_915),
            ),
            // None of 20,000 beyond: seconds without spread, the exact interval alone.
            (
                steps(&[&[0.0; 10], &[0.0; 10]]),
                true,
                (0.0, 0.000_184_426_963_961_899_25),
            ),
            // 10 in every second: the same.
            (
                steps(&[&[10.0; 5]]),
                true,
                (0.007_431_046_999_441_179, 0.013_162_738_260_201_742),
            ),
            // A steady climb: ρ = 0.85.
            (
                steps(&[&ramp]),
                true,
                (0.000_776_256_849_366_576_5, 0.020_223_743_150_633_425),
            ),
            // A jump: ρ = 0.925, clamped to 0.9.
            (steps(&[&jump]), true, (0.0, 0.048_236_054_892_951_755)),
        ];
        for (series, counts, (lo, hi)) in rows {
            let (got_lo, got_hi) = ratio_interval(&series, counts).unwrap();
            assert!(
                (got_lo - lo).abs() <= 1e-9 * lo.max(1e-3) && (got_hi - hi).abs() <= 1e-9 * hi,
                "{series:?}: ({got_lo}, {got_hi}), not ({lo}, {hi})"
            );
        }
        assert_eq!(ratio_interval(&steps(&[&[1.0]]), true), None);
        assert_eq!(ratio_interval(&[vec![(0.0, 0.0); 3]], true), None);
    }

    /// A standard normal draw (Box–Muller).
    fn normal(rng: &mut rand::rngs::SmallRng) -> f64 {
        use rand::RngExt;
        let u: f64 = rng.random_range(f64::EPSILON..1.0);
        let v: f64 = rng.random();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Seeded runs of a rate measured in two steps of 10 s at 1,000 answers a second,
    /// whose share beyond the limit wanders from second to second around a known 1 %:
    /// pₜ = 1 % · exp(σ zₜ − σ²/2) with zₜ a stationary AR(1) (φ = 0.3, σ = 0.2), the
    /// answers beyond it drawn one by one. The interval covers 1 % in 95 of 100 runs.
    /// Its limit, measured with this test's seeds: where the share wanders further it
    /// covers less (σ = 0.3: 90 of 100; φ = 0.6, σ = 0.5: 81 of 100, as few as the block
    /// bootstrap's worst): two 10 s steps then hold only a few independent looks, and ρ
    /// estimated from 10 seconds is biased low.
    #[test]
    fn the_ratio_interval_covers_a_known_share_in_95_of_100_runs() {
        use rand::{RngExt, SeedableRng};
        let (p, phi, sigma) = (0.01, 0.3, 0.2);
        let mut covered = 0;
        for seed in 0..100u64 {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(0xC0FE + seed);
            let series: Vec<Vec<(f64, f64)>> = (0..2)
                .map(|_| {
                    let mut z = normal(&mut rng);
                    (0..10)
                        .map(|_| {
                            z = phi * z + (1.0 - phi * phi).sqrt() * normal(&mut rng);
                            let pt = p * (sigma * z - sigma * sigma / 2.0).exp();
                            let beyond = (0..1_000).filter(|_| rng.random::<f64>() < pt).count();
                            (beyond as f64, 1_000.0)
                        })
                        .collect()
                })
                .collect();
            let (lo, hi) = ratio_interval(&series, true).unwrap();
            covered += usize::from(lo <= p && p <= hi);
        }
        assert!(covered >= 93, "covered {covered} of 100");
    }

    #[test]
    fn the_call_is_the_same_each_time() {
        let p99 = [slo("p99<50ms")];
        let a = step(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 80], &[]);
        let b = step(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 110], &[]);
        let once = decide(&p99, &[a.clone(), b.clone()]);
        assert_eq!(decide(&p99, &[a, b]), once);
    }
}
