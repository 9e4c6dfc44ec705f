//! Student's t distribution for a real number of degrees of freedom (Welch's
//! approximation gives fractional ones): its two-sided p-value, from the regularized
//! incomplete beta function, and its 97.5% quantile, by bisection on that p-value.
//!
//! Seams: pure functions over [`crate::special`]; [`crate::evidence`] tests the ratio of
//! two throughputs with them.

use crate::special;

/// The two-sided p-value of `t` under Student's t with `df` degrees of freedom:
/// P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2). 1 for a NaN or a `df` that is not positive.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return 1.0;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    special::incomplete_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (the half-width, in
/// standard errors, of a two-sided 95% interval): infinite for `df` under 1e-3 or NaN.
pub fn t975(df: f64) -> f64 {
    if df.is_nan() || df < 1e-3 {
        return f64::INFINITY;
    }
    // The p-value falls as t grows: bisect for p = 0.05 between 0 and a bound past it
    // (df = 1e-3 needs t near 1e300; the loop below doubles until p is under 0.05).
    let (mut lo, mut hi) = (0.0_f64, 2.0_f64);
    while two_sided_p(hi, df) > 0.05 {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if two_sided_p(mid, df) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_match_scipy() {
        // scipy.stats.t.sf(t, df) * 2, computed once.
        for (t, df, want) in [
            (2.0, 5.0, 0.101_939_48),
            (2.0, 30.0, 0.054_625_04),
            (1.0, 1.0, 0.5),
            (3.5, 2.5, 0.052_345_55),
            (0.0, 10.0, 1.0),
            (10.0, 3.0, 0.002_128_40),
            (1.96, 1e6, 0.049_996_07),
        ] {
            let got = two_sided_p(t, df);
            assert!((got - want).abs() < 1e-6, "t {t} df {df}: {got} vs {want}");
        }
    }

    #[test]
    fn quantiles_match_scipy() {
        // scipy.stats.t.ppf(0.975, df), computed once.
        for (df, want) in [
            (1.0, 12.706_204_74),
            (2.5, 3.574_654_84),
            (4.0, 2.776_445_11),
            (30.0, 2.042_272_46),
            (1000.0, 1.962_339_08),
        ] {
            let got = t975(df);
            assert!((got - want).abs() < 1e-6, "df {df}: {got} vs {want}");
        }
        assert!(t975(0.0).is_infinite() && t975(f64::NAN).is_infinite());
    }
}
