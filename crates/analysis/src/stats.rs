//! Statistics of one load run beyond the model's `LatencySummary`: ab's and wrk's
//! sample standard deviation, wrk's "+/- Stdev" share, wrk's per-thread Req/Sec series,
//! and status-code tallies in ab's and wrk's senses.
//!
//! Inputs are the model's µs histograms and counts; outputs keep the input's unit. Every
//! function is total: empty inputs give zeros, never NaN.

use hdrhistogram::Histogram;
use shootout_model::{Counts, RunResult};

/// `num / den`, or 0 when `den` is zero (so no report ever prints NaN or infinity).
pub fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 || !num.is_finite() || !den.is_finite() {
        0.0
    } else {
        num / den
    }
}

/// Sample standard deviation (divided by n − 1, as ab and wrk compute it) of a histogram,
/// in its unit; 0 below two values.
pub fn sample_stdev(h: &Histogram<u64>) -> f64 {
    let n = h.len();
    if n < 2 {
        return 0.0;
    }
    h.stdev() * (n as f64 / (n - 1) as f64).sqrt()
}

/// Percentage (0..=100) of the recorded values within `mean ± stdev`, each value counted
/// at its bucket's median-equivalent (as `Histogram::mean` counts it). wrk's "+/- Stdev".
pub fn within_stdev_hist(h: &Histogram<u64>, mean: f64, stdev: f64) -> f64 {
    let (lo, hi) = (mean - stdev, mean + stdev);
    let inside: u64 = h
        .iter_recorded()
        .filter(|v| {
            let value = h.median_equivalent(v.value_iterated_to()) as f64;
            value >= lo && value <= hi
        })
        .map(|v| v.count_at_value())
        .sum();
    ratio(inside as f64 * 100.0, h.len() as f64)
}

/// Mean, sample standard deviation and maximum of a series of values.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 below two values.
    pub stdev: f64,
    /// Largest value (0 for no values).
    pub max: f64,
    /// Percentage (0..=100) of the values within `mean ± stdev`.
    pub within_stdev: f64,
}

impl Moments {
    /// The moments of `values` (all zero when there are none).
    pub fn of(values: &[f64]) -> Moments {
        let n = values.len() as f64;
        let mean = ratio(values.iter().sum(), n);
        let stdev = if values.len() < 2 {
            0.0
        } else {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        };
        let max = values.iter().copied().fold(0.0, f64::max);
        let inside = values
            .iter()
            .filter(|v| **v >= mean - stdev && **v <= mean + stdev)
            .count();
        Moments {
            mean,
            stdev,
            max,
            within_stdev: ratio(inside as f64 * 100.0, n),
        }
    }
}

/// Responses whose status is not 2xx: ab's "Non-2xx responses".
pub fn non_2xx(counts: &Counts) -> u64 {
    counts
        .status
        .iter()
        .filter(|(code, _)| !(200..300).contains(*code))
        .map(|(_, n)| n)
        .sum()
}

/// Responses with a status of 400 or more: wrk's "Non-2xx or 3xx responses" (wrk counts
/// `status > 399`, despite the label).
pub fn status_400_up(counts: &Counts) -> u64 {
    counts.status.range(400..).map(|(_, n)| n).sum()
}

/// Requests per second per worker thread, one value per second of the run (wrk's Req/Sec
/// row), from `result.series` divided by `threads`.
///
/// wrk samples each thread every 100 ms; we keep one merged count per second, so the
/// per-thread figure is that second's count shared evenly among the threads. Only whole
/// seconds count (the run's last, partial second would read low); a run shorter than a
/// second uses its partial seconds scaled to a full one.
pub fn per_thread_rates(result: &RunResult, threads: usize) -> Vec<f64> {
    let run_s = result.duration.as_secs_f64();
    let threads = threads.max(1) as f64;
    let (mut full, mut partial) = (Vec::new(), Vec::new());
    for s in &result.series {
        let span = (run_s - f64::from(s.second)).clamp(0.0, 1.0);
        let per_thread = s.completed as f64 / threads;
        if span >= 1.0 - 1e-9 {
            full.push(per_thread);
        } else if span > 0.0 {
            partial.push(per_thread / span);
        }
    }
    if full.is_empty() {
        partial
    } else {
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::latency_histogram;

    #[test]
    fn ratio_never_divides_by_zero() {
        assert_eq!(ratio(10.0, 4.0), 2.5);
        assert_eq!(ratio(10.0, 0.0), 0.0);
        assert_eq!(ratio(0.0, 0.0), 0.0);
    }

    #[test]
    fn within_one_stdev_of_a_known_distribution() {
        // Eight values of 10 and two of 20: mean 12, sample stdev sqrt(160/9) = 4.216, so
        // the band 7.78..16.22 holds the eight tens and not the twenties: 80%.
        let mut h = latency_histogram();
        h.record_n(10, 8).unwrap();
        h.record_n(20, 2).unwrap();
        let sd = sample_stdev(&h);
        assert!((sd - (160.0f64 / 9.0).sqrt()).abs() < 1e-9, "{sd}");
        assert!((h.mean() - 12.0).abs() < 1e-9);
        assert_eq!(within_stdev_hist(&h, h.mean(), sd), 80.0);

        let m = Moments::of(&[10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 20.0, 20.0]);
        assert_eq!((m.mean, m.max, m.within_stdev), (12.0, 20.0, 80.0));
        assert!((m.stdev - sd).abs() < 1e-9);
    }

    #[test]
    fn a_constant_distribution_is_all_within_its_zero_stdev() {
        let mut h = latency_histogram();
        h.record_n(500, 7).unwrap();
        assert_eq!(sample_stdev(&h), 0.0);
        assert_eq!(within_stdev_hist(&h, h.mean(), 0.0), 100.0);
    }

    #[test]
    fn empty_inputs_give_zeros() {
        let h = latency_histogram();
        assert_eq!(sample_stdev(&h), 0.0);
        assert_eq!(within_stdev_hist(&h, 0.0, 0.0), 0.0);
        assert_eq!(Moments::of(&[]), Moments::default());
        assert_eq!(Moments::of(&[3.0]).within_stdev, 100.0);
    }

    #[test]
    fn status_tallies() {
        let mut c = Counts::default();
        for (code, n) in [(200, 10), (204, 1), (301, 2), (404, 3), (503, 4)] {
            c.status.insert(code, n);
        }
        assert_eq!(non_2xx(&c), 9);
        assert_eq!(status_400_up(&c), 7);
    }
}
