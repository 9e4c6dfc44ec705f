//! Whether the SLOs of a capacity search step are decided while it runs, so that the step
//! may end as soon as they are ([`crate::capacity`]). An SLO is clearly met when its
//! one-sided 95 % bound on the breaking side still holds (`errors<0.1%`: the error
//! share's upper bound is under 0.1 %). It is broken early only when it is broken
//! whatever the rest of the step brings: with the most answers the step can count by its
//! deadline ([`SoFar::most`]), every one still to come on the holding side, the figure
//! at the deadline still breaks it (`errors<0.1%` over a step of at most 20,000 answers:
//! 20 failures). An early end never gives a broken verdict the step's deadline would not
//! have given, however the failures cluster (a burst of resets in the first second of a
//! step that would dilute it over the step's length breaks nothing early). A step is
//! decided ([`decide`]) when every SLO is met or one is broken, and not before it has
//! [`least_answers`].
//!
//! Each statistic has its own function: the exact (Clopper–Pearson) bounds of a share of
//! failures ([`clopper_pearson_upper`], [`clopper_pearson_lower`]) from the quantiles of
//! the beta distribution ([`crate::special::beta_quantile`]); a percentile's bounds from the order statistics
//! of the answers ([`crate::certify::percentile_bounds`]), widened by the design effect the
//! caller measures over the seconds (as `--until` widens its intervals); the range a
//! share ([`share_at_end`]) or a percentile ([`percentile_at_end`]) can still reach by the
//! step's deadline.
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
    /// The most answers the step can count by its deadline: an error share or a
    /// percentile is broken early only if it stays broken with that many
    /// ([`share_at_end`], [`percentile_at_end`]).
    pub most: &'a Most,
}

/// The most answers a step can count by its deadline: the arrivals its schedule has due
/// by then, times the most requests one arrival sends
/// ([`crate::capacity::Searcher::most_answers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Most {
    /// Of the whole load.
    pub all: u64,
    /// Of each journey step, in the order of [`SoFar::steps`] (empty for a load without
    /// journeys; a step left out is bounded by `all`).
    pub steps: Vec<u64>,
}

impl Most {
    /// At most `all` answers, with no journey steps.
    pub fn all(all: u64) -> Most {
        Most {
            all,
            steps: Vec::new(),
        }
    }
}

/// What one SLO is judged on so far: the step's answers where it names a journey step,
/// else the whole load's.
struct Counted<'a> {
    completed: u64,
    failed: u64,
    latency: &'a Histogram<u64>,
    /// The most it can count by the step's deadline.
    most: u64,
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
                most: self.most.all,
            });
        };
        let i = step_index(self.labels.iter().map(String::as_str), name)?;
        let t = self.steps.get(i)?;
        (t.completed >= least_answers(std::slice::from_ref(slo))).then_some(Counted {
            completed: t.completed,
            failed: t.failed(),
            latency: &t.latency,
            most: self.most.steps.get(i).copied().unwrap_or(self.most.all),
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

/// Where SLO `i`, `slo`, stands given `so_far`; `deff(v)` is the design effect of the answers at or
/// below `v` µs over the seconds so far (1 for independent answers). It is met when its one-sided
/// 95 % bound on the breaking side holds: an error share's exact (Clopper–Pearson) bound, a
/// percentile's by its order statistics ([`certify::percentile_bounds`]; an upper end past the
/// answers bounds nothing). It is broken when the figure the step will have at its deadline breaks
/// it whatever comes: the least (or, for an SLO that bounds from below, the greatest) an error
/// share or a percentile can still reach with [`SoFar::most`] answers (a journey step's own)
/// ([`share_at_end`], [`percentile_at_end`]); `max` and `failed` only grow, so they are broken by
/// their figure so far, and are never met early. `mean` and `rps` stay open (the step runs to its
/// deadline). An SLO on a journey's step is called on that step's counts alone ([`SoFar::steps`]),
/// its percentile widened by the design effect of the whole load's seconds at its value; it stays
/// open without them.
pub fn call(i: usize, slo: &Threshold, so_far: &SoFar, deff: impl Fn(u64) -> f64) -> Call {
    let Some(c) = so_far.of(slo) else {
        return Call::Open;
    };
    let h = c.latency;
    let below = matches!(slo.op, Op::Below | Op::AtMost);
    // The step's figure at its deadline lies in `end` whatever comes; `bounds` are its
    // one-sided 95 % bounds so far, `None` for a metric never met early.
    let (bounds, end) = match slo.metric {
        Metric::Errors if c.completed > 0 => {
            let (x, n) = (c.failed, c.completed);
            let bounds = (
                100.0 * clopper_pearson_lower(x, n, LEVEL),
                100.0 * clopper_pearson_upper(x, n, LEVEL),
            );
            let (lo, hi) = share_at_end(x, n, c.most);
            (Some(bounds), (100.0 * lo, 100.0 * hi))
        }
        Metric::Quantile(q) if !h.is_empty() => {
            let p = f64::from(q) / 1000.0;
            let bounds = certify::percentile_bounds(h, p, deff(h.value_at_quantile(p))).map(|b| {
                let hi = if b.open_above {
                    f64::INFINITY
                } else {
                    b.hi as f64
                };
                (b.lo as f64, hi)
            });
            (bounds, percentile_at_end(h, p, c.most))
        }
        Metric::Max if !h.is_empty() => {
            let least = h.lowest_equivalent(h.max()) as f64;
            (None, (least, f64::INFINITY))
        }
        Metric::Failed => (None, (c.failed as f64, f64::INFINITY)),
        _ => return Call::Open,
    };
    let bound = |value: f64, upper: bool| Bound {
        slo: i,
        value,
        upper,
    };
    // The end of each range that could break the SLO, and the end that could keep it.
    let sides = |(lo, hi): (f64, f64)| if below { (hi, lo) } else { (lo, hi) };
    let (_, best) = sides(end);
    if best.is_finite() && !slo.op.holds(best, slo.limit) {
        return Call::Broken(bound(best, !below));
    }
    match bounds.map(sides) {
        Some((worst, _)) if worst.is_finite() && slo.op.holds(worst, slo.limit) => {
            Call::Met(bound(worst, below))
        }
        _ => Call::Open,
    }
}

/// The range an error share of `x` failures in `n` requests can still reach by a step's
/// deadline, when the step counts at most `most` requests by then: the least with every
/// request to come answered (`x` of `most`), the greatest with every one failed. With
/// `most` under `n` (a bound too low), the share so far.
pub fn share_at_end(x: u64, n: u64, most: u64) -> (f64, f64) {
    let m = most.max(n).max(1) as f64;
    let (x, n) = (x as f64, n as f64);
    (x / m, (x + m - n) / m)
}

/// The range the `p` quantile of the answers `h` counts (µs) can still reach by a step's
/// deadline, when the step counts at most `most` answers by then: the least with every
/// answer to come faster than all so far, the greatest with every one slower (infinite
/// while that many could still come). The quantile at the deadline is the answer of rank
/// about p·N of N ≤ `most` (HDR counts rank ⌈p·N⌉ or the nearest: at most a rank either
/// way), so the least is the answer so far of rank ⌊n − (1 − p)·most⌋ − 1 (0 below rank
/// 1), at the lowest value of its bucket, and the greatest the answer of rank
/// ⌈p·most⌉ + 1, at the highest value of its bucket: both hold for any bucket width the
/// step's own histogram has finer than `h`'s.
pub fn percentile_at_end(h: &Histogram<u64>, p: f64, most: u64) -> (f64, f64) {
    let n = h.len();
    let m = most.max(n) as f64;
    let low_rank = (n as f64 - (1.0 - p) * m).floor() as i64 - 1;
    let high_rank = (p * m).ceil() as i64 + 1;
    let lo = u64::try_from(low_rank)
        .ok()
        .filter(|&r| r >= 1)
        .and_then(|r| at_rank(h, r))
        .map_or(0.0, |v| h.lowest_equivalent(v) as f64);
    let hi = u64::try_from(high_rank)
        .ok()
        .filter(|&r| r <= n)
        .and_then(|r| at_rank(h, r))
        .map_or(f64::INFINITY, |v| h.highest_equivalent(v) as f64);
    (lo, hi)
}

/// The value (µs) of the answer of 1-based `rank` in `h`, in order; `None` past the last.
fn at_rank(h: &Histogram<u64>, rank: u64) -> Option<u64> {
    let mut seen = 0u64;
    h.iter_recorded().find_map(|v| {
        seen += v.count_at_value();
        (seen >= rank).then(|| v.value_iterated_to())
    })
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
pub(crate) mod tests {
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
    pub(crate) fn counts(n: u64, slow: u64, failed: u64) -> (u64, u64, Histogram<u64>) {
        let mut h = shootout_model::latency_histogram();
        h.record_n(1_000, n - slow - failed).unwrap();
        if slow > 0 {
            // (a count of 0 would still set the histogram's max)
            h.record_n(80_000, slow).unwrap();
        }
        (n, failed, h)
    }

    /// Whether `slos` are decided on the counts so far, of a step that counts at most
    /// `most` answers by its deadline.
    fn decided_of(
        slos: &[&str],
        (n, failed, h): &(u64, u64, Histogram<u64>),
        most: u64,
    ) -> Option<Decided> {
        let most = Most::all(most);
        let slos: Vec<Threshold> = slos.iter().map(|s| slo(s)).collect();
        let so_far = SoFar {
            completed: *n,
            failed: *failed,
            latency: h,
            steps: &[],
            labels: &[],
            most: &most,
        };
        decide(&slos, &so_far, |_| 1.0)
    }

    /// As [`decided_of`], the step ending now: it counts no more answers.
    fn decided(slos: &[&str], c: &(u64, u64, Histogram<u64>)) -> Option<Decided> {
        decided_of(slos, c, c.0)
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
        // 20 of 2,000 (1 %) in a step of at most 10,000: 0.2 % at least at its deadline:
        // broken.
        let d = decided_of(&errors, &counts(2_000, 0, 20), 10_000).unwrap();
        assert!(!d.met && !d.bounds[0].upper, "{d:?}");
        assert!(close(d.bounds[0].value, 0.2, 1e-12), "{d:?}");
        // The same burst in a step of up to 30,000 may end at 0.067 %: open, however sure
        // the share so far is over the limit.
        assert_eq!(decided_of(&errors, &counts(2_000, 0, 20), 30_000), None);
        // 3 of 2,000 (0.15 %) in a step that ends now: broken; with 2,000 to come: open.
        assert!(!decided(&errors, &counts(2_000, 0, 3)).unwrap().met);
        assert_eq!(decided_of(&errors, &counts(2_000, 0, 3), 4_000), None);
    }

    #[test]
    fn a_percentile_is_decided_by_its_order_statistics() {
        let p99 = ["p99<50ms"];
        // 1,000 answers at 1 ms: the upper bound of p99 is 1 ms.
        let d = decided(&p99, &counts(1_000, 0, 0)).unwrap();
        assert!(d.met && d.bounds[0].value <= 1_001.0, "{d:?}");
        // 5 % at 80 ms in a step that ends now: p99 is 80 ms: broken.
        let d = decided(&p99, &counts(1_000, 50, 0)).unwrap();
        assert!(!d.met && d.bounds[0].value >= 79_000.0, "{d:?}");
        // In a step of up to 5,000 answers, 50 slow ones may end as 1 %: open; 52 of
        // 1,000 (over 1 % of 5,000, and a rank to spare) break it whatever comes.
        assert_eq!(decided_of(&p99, &counts(1_000, 50, 0), 5_000), None);
        let d = decided_of(&p99, &counts(1_000, 52, 0), 5_000).unwrap();
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
            most: &Most::all(*n),
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
                most: &Most::all(1_000),
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
        let most = Most {
            all: n,
            steps: steps.iter().map(|t| t.completed).collect(),
        };
        let so_far = SoFar {
            completed: n,
            failed,
            latency: &whole,
            steps: &steps,
            labels: &labels,
            // The step ends now: each journey step counts no more than so far.
            most: &most,
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

    /// The range a share or a percentile can reach by a step's deadline, against counts
    /// worked by hand: 20 failures of 2,000 with up to 10,000 answers end between 20 and
    /// 8,020 of 10,000; 1,000 answers at 101..=1,100 µs with up to 2,000 end with their
    /// median between the answer of rank ⌊1,000 − 1,000⌋ − 1 (none: 0) and that of rank
    /// 1,001 (none yet: unbounded), and with up to 1,100 between ranks 449 and 551
    /// (exact below 2,048 µs).
    #[test]
    fn the_range_a_figure_can_reach_by_the_deadline() {
        assert_eq!(share_at_end(20, 2_000, 10_000), (0.002, 0.802));
        // A most under the count so far is the count so far.
        assert_eq!(share_at_end(20, 2_000, 1_000), (0.01, 0.01));
        let mut h = shootout_model::latency_histogram();
        for i in 1..=1000 {
            h.record(100 + i).unwrap();
        }
        assert_eq!(percentile_at_end(&h, 0.5, 2_000), (0.0, f64::INFINITY));
        assert_eq!(percentile_at_end(&h, 0.5, 1_100), (549.0, 651.0));
        assert_eq!(percentile_at_end(&h, 0.5, 1_000), (599.0, 601.0));
    }

    /// A tiny seeded generator (splitmix64) for the streams below.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An early break never says what the step's deadline would not: over 400 seeded
    /// steps whose failures and slow answers come in bursts (a run of resets, a stall)
    /// anywhere in the step, near the limits of `p99<50ms` and `errors<0.1%`, every
    /// prefix that [`decide`] calls broken (looked at every 100 answers, the live counts
    /// at two significant figures as the engine keeps them, the step's length known)
    /// belongs to a step whose whole answers (three figures, as the verdict reads them)
    /// break that SLO. The streams do break early too, so the check is not empty.
    #[test]
    fn an_early_break_is_the_deadline_s_verdict_whatever_the_bursts() {
        let slos: Vec<Threshold> = ["p99<50ms", "errors<0.1%"].iter().map(|s| slo(s)).collect();
        let (mut early, mut checked) = (0, 0);
        for seed in 0..400u64 {
            let mut rng = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let n = 2_000 + splitmix(&mut rng) % 20_000;
            // Bursts of failures or slow answers: where, how long, how many.
            let bursts: Vec<(u64, u64, bool)> = (0..splitmix(&mut rng) % 4)
                .map(|_| {
                    let at = splitmix(&mut rng) % n;
                    let len = 1 + splitmix(&mut rng) % (n / 40);
                    (at, len, splitmix(&mut rng).is_multiple_of(2))
                })
                .collect();
            let mut live = shootout_model::result::second_histogram();
            let mut whole = shootout_model::latency_histogram();
            let (mut failed, mut broke) = (0u64, None);
            let most = Most::all(n);
            for i in 0..n {
                let burst = bursts
                    .iter()
                    .find(|(at, len, _)| (*at..at + len).contains(&i));
                match burst {
                    Some((_, _, true)) => failed += 1,
                    Some((_, _, false)) => {
                        let v = 45_000 + splitmix(&mut rng) % 60_000;
                        live.record(v).unwrap();
                        whole.record(v).unwrap();
                    }
                    None => {
                        let v = 200 + splitmix(&mut rng) % 2_000;
                        live.record(v).unwrap();
                        whole.record(v).unwrap();
                    }
                }
                let done = i + 1;
                if broke.is_none() && done.is_multiple_of(100) {
                    let so_far = SoFar {
                        completed: done,
                        failed,
                        latency: &live,
                        steps: &[],
                        labels: &[],
                        most: &most,
                    };
                    if let Some(d) = decide(&slos, &so_far, |_| 1.0).filter(|d| !d.met) {
                        broke = Some((done, d.bounds[0].slo));
                    }
                }
            }
            let p99 = whole.value_at_quantile(0.99) as f64;
            let errors = 100.0 * failed as f64 / n as f64;
            let held = [
                slos[0].op.holds(p99, slos[0].limit),
                slos[1].op.holds(errors, slos[1].limit),
            ];
            if let Some((at, which)) = broke {
                checked += 1;
                early += usize::from(at < n);
                assert!(
                    !held[which],
                    "seed {seed}: broken at {at} of {n} on {which}, held at the end (p99 {p99} µs, errors {errors} %)"
                );
            }
        }
        assert!(
            checked > 40 && early > 20,
            "{checked} broken, {early} early"
        );
    }
}
