//! Whether the SLOs of a capacity search step are decided while it runs, so that the step
//! may end as soon as they are ([`crate::capacity`]): an SLO is clearly met when its
//! one-sided 95 % bound on the breaking side still holds (`errors<0.1%`: the error
//! share's upper bound is under 0.1 %), clearly broken when its bound on the holding side
//! is already beyond the limit, and open otherwise. A step is decided ([`decide`]) when
//! every SLO is met or one is broken, and not before it has [`least_answers`].
//!
//! Each statistic has its own function: the exact (Clopper–Pearson) bounds of a share of
//! failures ([`clopper_pearson_upper`], [`clopper_pearson_lower`]) from the quantiles of
//! the beta distribution ([`crate::special::beta_quantile`]); a percentile's bounds from the order statistics
//! of the answers ([`crate::certify::percentile_bounds`]), widened by the design effect the
//! caller measures over the seconds (as `--until` widens its intervals).
//!
//! Seams: reads the counts a caller takes from a running load ([`SoFar`]); no I/O.

use crate::certify;
use crate::special::beta_quantile;
use hdrhistogram::Histogram;
use shootout_model::find_max::StepEnd;
use shootout_model::threshold::{step_index, Metric, Op, Threshold};
use shootout_model::TargetStats;

/// The confidence of each one-sided bound.
pub const LEVEL: f64 = 0.95;

/// The exact one-sided upper `level` bound of a share from `x` events in `n` trials
/// (Clopper–Pearson): the share under which `x` or fewer events would happen with chance
/// 1 − level, Beta(x + 1, n − x)'s `level` quantile. 0 of 2,000 at 95 %: 0.150 %; 1 when
/// `x` ≥ `n` or `n` = 0.
pub fn clopper_pearson_upper(x: u64, n: u64, level: f64) -> f64 {
    if n == 0 || x >= n {
        return 1.0;
    }
    beta_quantile(level, x as f64 + 1.0, (n - x) as f64)
}

/// The exact one-sided lower `level` bound of a share from `x` events in `n` trials
/// (Clopper–Pearson): Beta(x, n − x + 1)'s 1 − `level` quantile; 0 when `x` = 0.
pub fn clopper_pearson_lower(x: u64, n: u64, level: f64) -> f64 {
    if x == 0 || n == 0 {
        return 0.0;
    }
    beta_quantile(1.0 - level, x as f64, (n - x.min(n)) as f64 + 1.0)
}

/// What a running step has measured so far.
#[derive(Debug, Clone, Copy)]
pub struct SoFar<'a> {
    /// Requests completed (answered or failed).
    pub completed: u64,
    /// Of which failed.
    pub failed: u64,
    /// Latency (µs) of the answered requests, from their due times, as the step's verdict
    /// counts it.
    pub latency: &'a Histogram<u64>,
    /// A journey load's counts per journey step so far, in the run's order (empty
    /// otherwise, or when the load keeps no live counts per step): an SLO on a step
    /// (`step:NAME:`) is decided on that step's alone.
    pub steps: &'a [TargetStats],
    /// The name of each of `steps` (`journey › step`).
    pub labels: &'a [String],
}

/// What one SLO is judged on so far: the step's answers where it names a journey step,
/// else the whole load's.
struct Counted<'a> {
    completed: u64,
    failed: u64,
    latency: &'a Histogram<u64>,
}

impl<'a> SoFar<'a> {
    /// What `slo` is judged on: the whole load's counts, or its journey step's; `None`
    /// for a step not among the live counts, or with fewer than [`least_answers`] of its
    /// own (a step SLO is decided on its own answers, as the step's verdict judges it).
    fn of(&self, slo: &Threshold) -> Option<Counted<'a>> {
        let Some(name) = &slo.step else {
            return Some(Counted {
                completed: self.completed,
                failed: self.failed,
                latency: self.latency,
            });
        };
        let i = step_index(self.labels.iter().map(String::as_str), name)?;
        let t = self.steps.get(i)?;
        (t.completed >= least_answers(std::slice::from_ref(slo))).then_some(Counted {
            completed: t.completed,
            failed: t.failed(),
            latency: &t.latency,
        })
    }
}

/// The bound that decided an SLO.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// The SLO's index in the search's list.
    pub slo: usize,
    /// The bound, in the unit of [`Metric::of`] (µs for latency, % for errors, a count
    /// for failures).
    pub value: f64,
    /// The upper bound (else the lower).
    pub upper: bool,
}

/// Where one SLO stands so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Call {
    /// Clearly met: its bound on the breaking side holds.
    Met(Bound),
    /// Clearly broken: its bound on the holding side is beyond the limit.
    Broken(Bound),
    /// Neither yet.
    Open,
}

/// Where SLO `i`, `slo`, stands given `so_far`; `deff(v)` is the design effect of the
/// answers at or below `v` µs over the seconds so far (1 for independent answers). An
/// error share is bounded exactly (Clopper–Pearson), a percentile by its order
/// statistics ([`certify::percentile_bounds`]; an upper end past the answers bounds
/// nothing). `max` and `failed` only grow as a step goes on: they can break early, never
/// be met early. `mean` and `rps` stay open (the step runs to its deadline). An SLO on a
/// journey's step is called on that step's counts alone ([`SoFar::steps`]), its
/// percentile widened by the design effect of the whole load's seconds at its value; it
/// stays open without them.
pub fn call(i: usize, slo: &Threshold, so_far: &SoFar, deff: impl Fn(u64) -> f64) -> Call {
    let Some(c) = so_far.of(slo) else {
        return Call::Open;
    };
    let h = c.latency;
    // The lower and upper bound of the metric, and whether it can be met before the end.
    let (lo, hi, can_meet) = match slo.metric {
        Metric::Errors if c.completed > 0 => {
            let (x, n) = (c.failed, c.completed);
            (
                100.0 * clopper_pearson_lower(x, n, LEVEL),
                100.0 * clopper_pearson_upper(x, n, LEVEL),
                true,
            )
        }
        Metric::Quantile(q) if !h.is_empty() => {
            let p = f64::from(q) / 1000.0;
            let Some(b) = certify::percentile_bounds(h, p, deff(h.value_at_quantile(p))) else {
                return Call::Open;
            };
            let hi = if b.open_above {
                f64::INFINITY
            } else {
                b.hi as f64
            };
            (b.lo as f64, hi, true)
        }
        Metric::Max if !h.is_empty() => (h.lowest_equivalent(h.max()) as f64, f64::INFINITY, false),
        Metric::Failed => (c.failed as f64, f64::INFINITY, false),
        _ => return Call::Open,
    };
    let below = matches!(slo.op, Op::Below | Op::AtMost);
    // The end of the bounds that could break the SLO, and the end that could keep it.
    let (worst, best) = if below { (hi, lo) } else { (lo, hi) };
    let bound = |value: f64, upper: bool| Bound {
        slo: i,
        value,
        upper,
    };
    if can_meet && worst.is_finite() && slo.op.holds(worst, slo.limit) {
        Call::Met(bound(worst, below))
    } else if best.is_finite() && !slo.op.holds(best, slo.limit) {
        Call::Broken(bound(best, !below))
    } else {
        Call::Open
    }
}

/// A step whose SLOs were decided before its deadline.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// Every SLO was clearly met (else one was clearly broken).
    pub met: bool,
    /// The bounds that decided: every SLO's when met, the broken one's when not.
    pub bounds: Vec<Bound>,
}

/// The fewest answers a step is decided on: 100, and for each percentile SLO enough that
/// some answers lie above the percentile at all (p99: 100, p99.9: 1,000).
pub fn least_answers(slos: &[Threshold]) -> u64 {
    slos.iter()
        .map(|s| match s.metric {
            Metric::Quantile(q) => 1000 / u64::from(1000 - q.min(999)),
            _ => 0,
        })
        .fold(100, u64::max)
}

/// Whether the step that measured `so_far` is decided against `slos`: one SLO clearly
/// broken (the first), or every one clearly met; `None` while any is open or the step has
/// fewer than [`least_answers`].
pub fn decide(slos: &[Threshold], so_far: &SoFar, deff: impl Fn(u64) -> f64) -> Option<Decided> {
    if so_far.completed < least_answers(slos) {
        return None;
    }
    let calls: Vec<Call> = slos
        .iter()
        .enumerate()
        .map(|(i, s)| call(i, s, so_far, &deff))
        .collect();
    if let Some(b) = calls.iter().find_map(|c| match c {
        Call::Broken(b) => Some(*b),
        _ => None,
    }) {
        return Some(Decided {
            met: false,
            bounds: vec![b],
        });
    }
    let met: Vec<Bound> = calls
        .iter()
        .filter_map(|c| match c {
            Call::Met(b) => Some(*b),
            _ => None,
        })
        .collect();
    (met.len() == slos.len()).then_some(Decided {
        met: true,
        bounds: met,
    })
}

/// The point estimate of SLO `slo`'s metric from `so_far`, in the unit of its limit (µs
/// for latency, % for errors, a count); `None` for a metric a running step does not
/// estimate (`rps`), a journey step not counted live, or a percentile with no answers
/// yet.
fn point(slo: &Threshold, so_far: &SoFar) -> Option<f64> {
    let c = so_far.of(slo)?;
    let h = c.latency;
    match slo.metric {
        Metric::Errors if c.completed > 0 => Some(100.0 * c.failed as f64 / c.completed as f64),
        Metric::Errors => Some(0.0),
        Metric::Failed => Some(c.failed as f64),
        _ if h.is_empty() => None,
        Metric::Quantile(q) => Some(h.value_at_quantile(f64::from(q) / 1000.0) as f64),
        Metric::Mean => Some(h.mean()),
        Metric::Max => Some(h.max() as f64),
        Metric::Rps => None,
    }
}

/// Whether a rung of the capacity search's ramp, looked at for the first time and below
/// any failing rate, plainly passes on what it measured so far: at least
/// [`least_answers`] (100), no SLO clearly broken ([`call`]), and every SLO's point
/// estimate within half its limit (`p99<50ms`: p99 under 25 ms; `errors<0.1%`: under
/// 0.05 %). It is not a decision: the search moves on from such a rung but never counts
/// it as evidence for the capacity ([`Ended::Passed`]). An SLO that bounds from below
/// (`rps>100`, `p50>1ms`) and `rps` never pass plainly; an SLO on a journey's step passes
/// on its step's counts, as [`call`] judges it.
pub fn passes(slos: &[Threshold], so_far: &SoFar, deff: impl Fn(u64) -> f64) -> bool {
    if slos.is_empty() || so_far.completed < least_answers(slos) {
        return false;
    }
    slos.iter().enumerate().all(|(i, slo)| {
        let below = matches!(slo.op, Op::Below | Op::AtMost);
        let half = point(slo, so_far).is_some_and(|v| v < slo.limit / 2.0);
        below && half && !matches!(call(i, slo, so_far, &deff), Call::Broken(_))
    })
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// Its SLOs were decided before its deadline.
    Decided(Decided),
    /// Its deadline passed with some SLO open: judged on its point estimates.
    Deadline,
    /// A rung of the ramp that plainly passed ([`passes`]): the search moved on, and
    /// measures it again in full before it may bound the capacity.
    Passed,
    /// It ran to its deadline as every step of its search does (the fixed rule,
    /// [`shootout_model::find_max::EndRule::Deadline`]): never looked at before, judged
    /// on its figures.
    Full,
}

impl Ended {
    /// How the store keeps it: its kind, without a decision's bounds.
    pub fn stored(&self) -> StepEnd {
        match self {
            Ended::Decided(d) if d.met => StepEnd::DecidedMet,
            Ended::Decided(_) => StepEnd::DecidedBroke,
            Ended::Deadline => StepEnd::Deadline,
            Ended::Passed => StepEnd::Passed,
            Ended::Full => StepEnd::Full,
        }
    }

    /// A step's end as the store kept it ([`Ended::stored`]): a decision comes back
    /// without its bounds, which the store does not keep.
    pub fn from_stored(e: StepEnd) -> Ended {
        let decided = |met| {
            Ended::Decided(Decided {
                met,
                bounds: Vec::new(),
            })
        };
        match e {
            StepEnd::DecidedMet => decided(true),
            StepEnd::DecidedBroke => decided(false),
            StepEnd::Deadline => Ended::Deadline,
            StepEnd::Passed => Ended::Passed,
            StepEnd::Full => Ended::Full,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want.abs().max(1e-300)
    }

    /// Clopper–Pearson one-sided 95 % bounds against scipy 1.17.1:
    /// `stats.beta.ppf(0.95, x + 1, n - x)` (upper) and `stats.beta.ppf(0.05, x, n - x + 1)`
    /// (lower).
    #[test]
    fn clopper_pearson_bounds_as_scipy_computes_them() {
        // (upper or lower, x, n, bound)
        #[rustfmt::skip]
        let rows = [
            (true,  0,    10,     0.258_865_550_893_052_2),
            // 0 of 2,000 is not under 0.1 %; 0 of 3,000 is.
            (true,  0,    2000,   0.001_496_744_895_188_283_7),
            (true,  0,    3000,   0.000_998_079_011_996_586_5),
            (true,  1,    1000,   0.004_734_993_575_499_777),
            (true,  5,    10000,  0.001_051_013_718_638_481_8),
            (true,  20,   2000,   0.014_498_062_606_976_633),
            (true,  50,   100000, 0.000_632_828_692_824_705_8),
            (true,  999,  1000,   0.999_948_708_021_091),
            (false, 1,    1000,   5.129_197_890_901_781e-5),
            (false, 5,    10000,  0.000_197_034_956_360_918_9),
            (false, 20,   2000,   0.006_636_879_397_604_511),
            (false, 50,   100000, 0.000_389_666_880_109_584_4),
            (false, 1000, 1000,   0.997_008_750_454_904_7),
        ];
        for (upper, x, n, want) in rows {
            let got = if upper {
                clopper_pearson_upper(x, n, 0.95)
            } else {
                clopper_pearson_lower(x, n, 0.95)
            };
            assert!(
                close(got, want, 1e-8),
                "{upper} {x} of {n}: {got}, not {want}"
            );
        }
        assert_eq!(clopper_pearson_lower(0, 2000, 0.95), 0.0);
        assert_eq!(clopper_pearson_upper(0, 0, 0.95), 1.0);
        assert_eq!(clopper_pearson_upper(7, 7, 0.95), 1.0);
    }

    /// The one-sided bounds of a percentile are the order statistics 1.645 standard errors
    /// either side: the median of 1,000 answers at 101..=1,100 µs has ranks ⌊500 − 1.645 ·
    /// √250⌋ = 473 and ⌈526.01⌉ + 1 = 528, the answers 573 µs and 628 µs (exact below
    /// 2,048 µs at three significant figures); a design effect of 4 doubles the distance.
    #[test]
    fn a_percentiles_one_sided_bounds_are_its_order_statistics() {
        let mut h = shootout_model::latency_histogram();
        for i in 1..=1000 {
            h.record(100 + i).unwrap();
        }
        let b = certify::percentile_bounds(&h, 0.5, 1.0).unwrap();
        assert_eq!((b.lo, b.hi, b.open_above), (573, 628, false));
        // ⌊500 − 52.02⌋ = 447, ⌈552.02⌉ + 1 = 554.
        let b = certify::percentile_bounds(&h, 0.5, 4.0).unwrap();
        assert_eq!((b.lo, b.hi), (547, 654));
    }

    fn slo(t: &str) -> Threshold {
        t.parse().unwrap()
    }

    /// `n` answers, `slow` of them at 80 ms and the rest at 1 ms, `failed` failures.
    fn counts(n: u64, slow: u64, failed: u64) -> (u64, u64, Histogram<u64>) {
        let mut h = shootout_model::latency_histogram();
        h.record_n(1_000, n - slow - failed).unwrap();
        if slow > 0 {
            // (a count of 0 would still set the histogram's max)
            h.record_n(80_000, slow).unwrap();
        }
        (n, failed, h)
    }

    fn decided(slos: &[&str], (n, failed, h): &(u64, u64, Histogram<u64>)) -> Option<Decided> {
        let slos: Vec<Threshold> = slos.iter().map(|s| slo(s)).collect();
        let so_far = SoFar {
            completed: *n,
            failed: *failed,
            latency: h,
            steps: &[],
            labels: &[],
        };
        decide(&slos, &so_far, |_| 1.0)
    }

    #[test]
    fn an_error_share_is_met_when_its_upper_bound_is_under_the_limit() {
        let errors = ["errors<0.1%"];
        // 0 of 2,000: the upper bound is 0.150 %, not under 0.1 %: open.
        assert_eq!(decided(&errors, &counts(2_000, 0, 0)), None);
        // 0 of 3,000: 0.0998 %.
        let d = decided(&errors, &counts(3_000, 0, 0)).unwrap();
        assert!(d.met && d.bounds[0].upper, "{d:?}");
        assert!(close(d.bounds[0].value, 0.099_807_9, 1e-5), "{d:?}");
        // 20 of 2,000 (1 %): the lower bound, 0.66 %, is over the limit: broken.
        let d = decided(&errors, &counts(2_000, 0, 20)).unwrap();
        assert!(!d.met && !d.bounds[0].upper, "{d:?}");
        assert!(close(d.bounds[0].value, 0.663_687_9, 1e-5), "{d:?}");
        // 3 of 2,000 (0.15 %): the lower bound 0.041 % is under 0.1 %, the upper over: open.
        assert_eq!(decided(&errors, &counts(2_000, 0, 3)), None);
    }

    #[test]
    fn a_percentile_is_decided_by_its_order_statistics() {
        let p99 = ["p99<50ms"];
        // 1,000 answers at 1 ms: the upper bound of p99 is 1 ms.
        let d = decided(&p99, &counts(1_000, 0, 0)).unwrap();
        assert!(d.met && d.bounds[0].value <= 1_001.0, "{d:?}");
        // 5 % at 80 ms: p99's lower bound is 80 ms: broken.
        let d = decided(&p99, &counts(1_000, 50, 0)).unwrap();
        assert!(!d.met && d.bounds[0].value >= 79_000.0, "{d:?}");
        // 1 % at 80 ms: p99 straddles the limit: open.
        assert_eq!(decided(&p99, &counts(1_000, 10, 0)), None);
        // Under 100 answers, p99 has none above it: nothing is decided.
        assert_eq!(decided(&p99, &counts(99, 0, 0)), None);
        // Too few answers for an upper rank (p99.9 of 2,000): not met.
        assert_eq!(decided(&["p999<50ms"], &counts(2_000, 0, 0)), None);
    }

    #[test]
    fn a_step_is_decided_when_every_slo_is_met_or_one_is_broken() {
        let both = ["p99<50ms", "errors<0.1%"];
        // p99 met, errors open: open.
        assert_eq!(decided(&both, &counts(2_000, 0, 0)), None);
        let d = decided(&both, &counts(3_000, 0, 0)).unwrap();
        assert_eq!(d.bounds.iter().map(|b| b.slo).collect::<Vec<_>>(), [0, 1]);
        // Errors open, p99 broken: broken on p99 alone.
        let d = decided(&both, &counts(2_000, 200, 0)).unwrap();
        assert_eq!((d.met, d.bounds.len(), d.bounds[0].slo), (false, 1, 0));
        // max and failed can break early, never be met early; mean stays open.
        assert!(!decided(&["max<50ms"], &counts(1_000, 1, 0)).unwrap().met);
        assert_eq!(decided(&["max<50ms"], &counts(1_000, 0, 0)), None);
        assert!(!decided(&["failed<5"], &counts(1_000, 0, 5)).unwrap().met);
        assert_eq!(decided(&["failed<5"], &counts(1_000, 0, 4)), None);
        assert_eq!(decided(&["mean<50ms"], &counts(1_000, 0, 0)), None);
        assert_eq!(least_answers(&[slo("p999<1s"), slo("errors<1%")]), 1_000);
    }

    /// The store keeps how a step ended by its kind; a decision comes back without the
    /// bounds that made it, every other end as it was.
    #[test]
    fn a_steps_end_goes_to_the_store_and_back_by_its_kind() {
        let bound = Bound {
            slo: 0,
            value: 1.0,
            upper: true,
        };
        let met = Ended::Decided(Decided {
            met: true,
            bounds: vec![bound],
        });
        let broke = Ended::Decided(Decided {
            met: false,
            bounds: vec![bound],
        });
        let rows = [
            (met, StepEnd::DecidedMet),
            (broke, StepEnd::DecidedBroke),
            (Ended::Passed, StepEnd::Passed),
            (Ended::Deadline, StepEnd::Deadline),
            (Ended::Full, StepEnd::Full),
        ];
        for (ended, kind) in rows {
            assert_eq!(ended.stored(), kind, "{ended:?}");
            let back = Ended::from_stored(kind);
            assert_eq!(back.stored(), kind);
            match (&back, &ended) {
                (Ended::Decided(b), Ended::Decided(e)) => {
                    assert_eq!((b.met, b.bounds.len()), (e.met, 0));
                }
                _ => assert_eq!(back, ended),
            }
        }
    }

    fn passed(slos: &[&str], (n, failed, h): &(u64, u64, Histogram<u64>)) -> bool {
        let slos: Vec<Threshold> = slos.iter().map(|s| slo(s)).collect();
        let so_far = SoFar {
            completed: *n,
            failed: *failed,
            latency: h,
            steps: &[],
            labels: &[],
        };
        passes(&slos, &so_far, |_| 1.0)
    }

    /// A ramp rung passes plainly when every SLO's figure is within half its limit and
    /// none is clearly broken, on 100 answers or more: far less than a decision needs
    /// (`errors<0.1%`: 2,996 clean answers).
    #[test]
    fn a_rung_passes_plainly_within_half_of_every_limit() {
        // (SLOs, answers, of which at 80 ms, failed, passes)
        #[rustfmt::skip]
        let rows: [(&[&str], u64, u64, u64, bool); 17] = [
            // 100 clean answers at 1 ms: within half of both limits.
            (&["p99<50ms", "errors<0.1%"], 100,   0, 0, true),
            (&["p99<50ms", "errors<0.1%"], 99,    0, 0, false),
            // 1 failure of 3,000 is 0.033 %, under 0.05 %; 2 of 3,000 (0.067 %) is not.
            (&["errors<0.1%"],             3_000, 0, 1, true),
            (&["errors<0.1%"],             3_000, 0, 2, false),
            // p99 at 80 ms is over 25 ms (half of 50 ms); under 60 ms's half it is not.
            (&["p99<50ms"],                1_000, 20, 0, false),
            (&["p99<200ms"],               1_000, 20, 0, true),
            (&["p99<=3ms"],                1_000, 0, 0, true),
            (&["p99<1ms"],                 1_000, 0, 0, false),
            // mean and max by their figures; max 80 ms against 100 ms is over half.
            (&["mean<5ms"],                1_000, 0, 0, true),
            (&["max<100ms"],               1_000, 1, 0, false),
            (&["max<1s"],                  1_000, 1, 0, true),
            (&["failed<10"],               1_000, 0, 4, true),
            (&["failed<10"],               1_000, 0, 5, false),
            // p99.9 needs 1,000 answers before it is looked at.
            (&["p999<50ms"],               999,   0, 0, false),
            // A lower bound, rps and a journey step's SLO never pass plainly.
            (&["p50>0.1ms"],               1_000, 0, 0, false),
            (&["rps>1"],                   1_000, 0, 0, false),
            (&["step:login:p99<1s"],       1_000, 0, 0, false),
        ];
        for (slos, n, slow, failed, want) in rows {
            assert_eq!(
                passed(slos, &counts(n, slow, failed)),
                want,
                "{slos:?} {n} answers, {slow} slow, {failed} failed"
            );
        }
        assert!(!passes(
            &[],
            &SoFar {
                completed: 1_000,
                failed: 0,
                latency: &counts(1_000, 0, 0).2,
                steps: &[],
                labels: &[],
            },
            |_| 1.0
        ));
    }

    /// An SLO on a journey's step is decided on that step's live counts alone: a slow
    /// step breaks its SLO while the whole load's p99 meets the same limit, a fast one
    /// meets it; without the step's counts, or with too few of its own, it stays open.
    #[test]
    fn a_step_slo_is_decided_on_its_step_s_counts() {
        let step = |label: &str, (n, failed, h): (u64, u64, Histogram<u64>)| TargetStats {
            completed: n,
            ok: n - failed,
            latency: h,
            ..TargetStats::new(label)
        };
        let steps = [
            step("", counts(30_000, 0, 0)),
            step("", counts(1_000, 200, 0)),
            step("", counts(50, 0, 0)),
        ];
        let labels = ["reader › home", "writer › post", "writer › read"].map(String::from);
        let (n, failed, whole) = counts(31_050, 200, 0);
        let so_far = SoFar {
            completed: n,
            failed,
            latency: &whole,
            steps: &steps,
            labels: &labels,
        };
        let slos = |t: &[&str]| t.iter().map(|s| slo(s)).collect::<Vec<_>>();
        let broke = decide(&slos(&["p99<50ms", "step:post:p99<50ms"]), &so_far, |_| 1.0);
        assert_eq!(broke.map(|d| (d.met, d.bounds[0].slo)), Some((false, 1)));
        let met = decide(&slos(&["step:home:p99<50ms"]), &so_far, |_| 1.0);
        assert!(met.is_some_and(|d| d.met));
        assert!(passes(
            &slos(&["step:reader › home:p99<50ms"]),
            &so_far,
            |_| 1.0
        ));
        // 50 answers are too few for a step's p99; an unknown step is never decided.
        assert_eq!(
            decide(&slos(&["step:writer › read:p99<50ms"]), &so_far, |_| 1.0),
            None
        );
        assert_eq!(
            decide(&slos(&["step:gone:p99<50ms"]), &so_far, |_| 1.0),
            None
        );
        let blind = SoFar {
            steps: &[],
            ..so_far
        };
        assert_eq!(
            decide(&slos(&["step:post:p99<50ms"]), &blind, |_| 1.0),
            None
        );
    }
}
