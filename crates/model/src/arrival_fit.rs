//! The arrival check of a rate run: the Anderson–Darling test of the gaps a Poisson
//! schedule sent against the exponential it draws them from. Pure arithmetic on facts the
//! engine gathers, here so that the engine (which runs it on its own sends) and the
//! analysis share it with the model alone beneath them.

use crate::{Arrival, ArrivalCheck, Fit};

/// The fewest gaps the arrival check tests (fewer: no verdict).
pub const MIN_FIT: usize = 20;

/// The most gaps the arrival check tests: the workers' samples are thinned evenly to it.
/// With 2,000 gaps the test rejects a gap distribution whose scale is off by 10% nearly
/// always, and stays blind to the microseconds a send's lag moves it.
pub const MAX_FIT: usize = 2000;

/// The arrival check of a rate run: for Poisson arrivals, the gaps sent (in units of the
/// mean gap, from every worker) tested against the exponential of mean 1; nothing for
/// even ones.
pub fn arrival_check(process: Arrival, gaps: &[f64]) -> ArrivalCheck {
    let fit = match process {
        Arrival::Even => None,
        Arrival::Poisson { .. } => {
            let step = gaps.len().div_ceil(MAX_FIT).max(1);
            let sample: Vec<f64> = gaps.iter().step_by(step).copied().collect();
            anderson_darling_exponential(&sample)
        }
    };
    ArrivalCheck { process, fit }
}

/// The Anderson–Darling test of `sample` against the exponential distribution of mean 1
/// (given, not estimated): A² = −n − (1/n) Σ (2i − 1) [ln F(x₍ᵢ₎) + ln(1 − F(x₍ₙ₊₁₋ᵢ₎))],
/// F(x) = 1 − e^(−x), and its p-value from A²'s asymptotic distribution
/// ([`anderson_darling_p`]). `None` under [`MIN_FIT`] values or with one not finite. A
/// value of 0 (two sends at once) makes ln F(0) infinite: it is taken as 1e-300, so A² is
/// huge and the fit rejected.
pub fn anderson_darling_exponential(sample: &[f64]) -> Option<Fit> {
    if sample.len() < MIN_FIT || sample.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut x: Vec<f64> = sample.iter().map(|v| v.max(0.0)).collect();
    x.sort_by(f64::total_cmp);
    let n = x.len();
    let sum: f64 = (0..n)
        .map(|i| {
            // ln F(x) = ln(1 − e^(−x)); ln(1 − F(x)) = −x.
            let ln_f = (-(-x[i]).exp_m1()).max(1e-300).ln();
            let ln_s = -x[n - 1 - i];
            (2 * i + 1) as f64 * (ln_f + ln_s)
        })
        .sum();
    let statistic = -(n as f64) - sum / n as f64;
    Some(Fit {
        n: n as u64,
        statistic,
        p: anderson_darling_p(statistic),
    })
}

/// P(A² ≥ z) for a sample drawn from the distribution tested (every parameter given), from
/// A²'s asymptotic distribution as Marsaglia and Marsaglia approximate it (J. Stat.
/// Software 9(2), 2004: `adinf`, error under 2e-6). For 20 values or more the finite-n
/// correction they give is under 0.002 and left out.
pub fn anderson_darling_p(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    if z <= 0.0 {
        return 1.0;
    }
    let cdf = if z < 2.0 {
        (-1.2337141 / z).exp() / z.sqrt()
            * (2.00012
                + (0.247105 - (0.0649821 - (0.0347962 - (0.011672 - 0.00168691 * z) * z) * z) * z)
                    * z)
    } else {
        (-(1.0776
            - (2.30695 - (0.43424 - (0.082433 - (0.008056 - 0.0003146 * z) * z) * z) * z) * z)
            .exp())
        .exp()
    };
    (1.0 - cdf).clamp(0.0, 1.0)
}
