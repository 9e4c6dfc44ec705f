//! The two-sided Mann–Whitney U test (Mann & Whitney, 1947; the Wilcoxon rank-sum test),
//! which `shootout compare` uses to tell a change from noise on per-repetition values.
//!
//! Why this test: repetitions of a benchmark step are few (1 to 10) and their distribution
//! is anything but normal (a noisy neighbour makes one repetition an outlier), so a rank
//! test that assumes nothing about the shape fits better than a t-test. Its price is that
//! with very few repetitions no arrangement of the values is extreme enough: the smallest
//! two-sided p-value is `2 / C(m + n, m)`, so 3 + 3 repetitions can never reach p < 0.05 and
//! 4 + 4 can ([`min_p`], [`can_be_significant`]).
//!
//! The p-value is exact (the null distribution of U counted over all `C(m + n, m)`
//! arrangements) when there are no ties and both samples have at most [`EXACT_MAX`]
//! values; otherwise it comes from the normal approximation with the tie correction of the
//! variance and a continuity correction of 0.5 — the choices of `scipy.stats.mannwhitneyu`
//! (`method="auto"`), whose documented results the tests reproduce.

/// Largest sample size for which the exact distribution is counted.
pub const EXACT_MAX: usize = 50;

/// The outcome of a test of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of `b`: the number of (a, b) pairs in which b is larger, ties counting one half.
    pub u_b: f64,
    /// `m · n / 2`: what `u_b` is on average when neither sample tends to be larger.
    pub u_mean: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// True when `p` comes from the exact distribution, false for the normal approximation.
    pub exact: bool,
}

impl MannWhitney {
    /// True when `b`'s values tend to be larger than `a`'s.
    pub fn b_larger(&self) -> bool {
        self.u_b > self.u_mean
    }
}

/// Tests whether `a` and `b` come from the same distribution (two-sided); `None` when either
/// sample is empty. Non-finite values are not expected (callers pass rates and times).
pub fn test(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return None;
    }
    let mut u_b = 0.0f64;
    for x in a {
        for y in b {
            if y > x {
                u_b += 1.0;
            } else if y == x {
                u_b += 0.5;
            }
        }
    }
    let mn = (m * n) as f64;
    let u_mean = mn / 2.0;
    let ties = tie_term(a, b);
    if ties == 0.0 && m <= EXACT_MAX && n <= EXACT_MAX {
        // Without ties U is an integer; the two tails are symmetric.
        let u_min = u_b.min(mn - u_b) as usize;
        let dist = exact_counts(m, n);
        let total: f64 = dist.iter().sum();
        let tail: f64 = dist[..=u_min].iter().sum();
        return Some(MannWhitney {
            u_b,
            u_mean,
            p: (2.0 * tail / total).min(1.0),
            exact: true,
        });
    }
    let all = (m + n) as f64;
    // Var(U) = m·n/12 · ((N + 1) − Σ(t³ − t) / (N (N − 1))), t the size of each tie group.
    let variance = mn / 12.0 * ((all + 1.0) - ties / (all * (all - 1.0)));
    let p = if variance <= 0.0 {
        // Every value is the same: nothing tells the samples apart.
        1.0
    } else {
        let z = ((u_b - u_mean).abs() - 0.5).max(0.0) / variance.sqrt();
        erfc(z / std::f64::consts::SQRT_2).min(1.0)
    };
    Some(MannWhitney {
        u_b,
        u_mean,
        p,
        exact: false,
    })
}

/// The smallest two-sided p-value samples of `m` and `n` values can give (no ties):
/// `2 / C(m + n, m)`, capped at 1.
pub fn min_p(m: usize, n: usize) -> f64 {
    if m == 0 || n == 0 {
        return 1.0;
    }
    let mut arrangements = 1.0f64;
    for i in 0..m.min(n) {
        arrangements = arrangements * (m + n - i) as f64 / (i + 1) as f64;
    }
    (2.0 / arrangements).min(1.0)
}

/// True when `m` and `n` values are enough for some outcome to be significant at `alpha`.
pub fn can_be_significant(m: usize, n: usize, alpha: f64) -> bool {
    min_p(m, n) < alpha
}

/// Σ(t³ − t) over the groups of equal values in `a` and `b` together (0 without ties).
fn tie_term(a: &[f64], b: &[f64]) -> f64 {
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    let mut term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j] == all[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        term += t * t * t - t;
        i = j;
    }
    term
}

/// How many of the `C(m + n, m)` arrangements of two samples give each value of U
/// (index = U, 0 ..= m·n). Recurrence (Mann & Whitney 1947): the largest value belongs
/// either to the first sample, beating all `n` of the second (`f(u − n; m − 1, n)`), or to
/// the second (`f(u; m, n − 1)`).
fn exact_counts(m: usize, n: usize) -> Vec<f64> {
    // prev[j] = distribution for (i − 1, j); cur[j] = for (i, j).
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]);
        for j in 1..=n {
            let mut d = vec![0.0; i * j + 1];
            for (u, count) in prev[j].iter().enumerate() {
                d[u + j] += count;
            }
            for (u, count) in cur[j - 1].iter().enumerate() {
                d[u] += count;
            }
            cur.push(d);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// The complementary error function, with fractional error below 1.2e-7 everywhere
/// (Chebyshev fit of Press et al., *Numerical Recipes*, 2nd ed., §6.2, `erfcc`).
pub(crate) fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn scipy_documentation_example_exact() {
        // scipy.stats.mannwhitneyu docs: males vs females (Conover, Practical Nonparametric
        // Statistics): U1 = 17, p = 0.1111111111111111 (exact, two-sided).
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let females = [20.0, 11.0, 17.0, 12.0];
        let r = test(&females, &males).unwrap();
        assert_eq!(r.u_b, 17.0);
        assert!(r.exact);
        assert!(close(r.p, 0.111_111_111_111_111_1, 1e-12), "{r:?}");
        assert!(r.b_larger());
        // The same test the other way round: same p, U of the other sample.
        let back = test(&males, &females).unwrap();
        assert_eq!(back.u_b, 3.0);
        assert!(close(back.p, r.p, 1e-12));
        assert!(!back.b_larger());
    }

    #[test]
    fn normal_approximation_matches_scipy_asymptotic() {
        // Same data with method="asymptotic": p = 0.11134688653314041 (continuity corrected).
        // With one tie added the approximation is taken; compare the tie-free formula first.
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let females = [20.0, 11.0, 17.0, 12.0];
        let mn = 20.0;
        let var = mn / 12.0 * 10.0;
        let z = ((17.0f64 - 10.0).abs() - 0.5) / f64::sqrt(var);
        let p = erfc(z / std::f64::consts::SQRT_2);
        assert!(close(p, 0.111_346_886_533_140_41, 1e-7), "{p}");
        // A tie (a 20 among the males) forces the approximation with the tie correction:
        // U = 16.5, Σ(t³ − t) = 6, Var = 20/12 · (10 − 6/72) = 16.5278, z = 6 / √Var = 1.47586,
        // p = erfc(z / √2) = 0.1399825 (Python's math.erfc; scipy's asymptotic method uses
        // the same formula).
        let tied = [19.0, 22.0, 16.0, 29.0, 20.0];
        let r = test(&females, &tied).unwrap();
        assert!(!r.exact);
        assert_eq!(r.u_b, 16.5);
        assert!(close(r.p, 0.139_982_523_758_397_48, 1e-7), "{r:?}");
        let _ = males;
    }

    #[test]
    fn erfc_known_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207050285, erfc(2) = 0.004677734981047266,
        // erfc(-1) = 1.842700792949715 (Abramowitz & Stegun, table 7.1).
        for (x, want) in [
            (0.0, 1.0),
            (1.0, 0.157_299_207_050_285),
            (2.0, 0.004_677_734_981_047_266),
            (-1.0, 1.842_700_792_949_715),
        ] {
            let got = erfc(x);
            assert!(
                close(got / want, 1.0, 1.2e-7),
                "erfc({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn complete_separation_gives_the_smallest_p() {
        // 4 + 4 fully separated: 2 / C(8, 4) = 2/70.
        let a = [100.0, 101.0, 102.0, 103.0];
        let b = [80.0, 81.0, 82.0, 83.0];
        let r = test(&a, &b).unwrap();
        assert_eq!(r.u_b, 0.0);
        assert!(close(r.p, 2.0 / 70.0, 1e-12), "{r:?}");
        assert!(close(min_p(4, 4), 2.0 / 70.0, 1e-12));
        // 3 + 3 fully separated: 2 / 20 = 0.1, never below 0.05.
        let r = test(&a[..3], &b[..3]).unwrap();
        assert!(close(r.p, 0.1, 1e-12));
        assert!(!can_be_significant(3, 3, 0.05));
        assert!(can_be_significant(4, 4, 0.05));
        assert!(can_be_significant(3, 5, 0.05)); // 2/56
        assert!(!can_be_significant(2, 7, 0.05)); // 2/36
        assert!(can_be_significant(2, 8, 0.05)); // 2/45
        assert!(!can_be_significant(1, 1, 0.05));
        assert_eq!(min_p(1, 1), 1.0);
        assert_eq!(min_p(0, 3), 1.0);
    }

    #[test]
    fn identical_samples_are_no_change() {
        let a = [10.0, 11.0, 12.0, 13.0];
        let r = test(&a, &a).unwrap();
        assert_eq!(r.u_b, 8.0);
        assert_eq!(r.p, 1.0);
        let same = [5.0; 4];
        assert_eq!(test(&same, &same).unwrap().p, 1.0);
        assert!(test(&[], &a).is_none());
    }

    #[test]
    fn exact_counts_add_up_to_the_arrangements() {
        for (m, n) in [(1, 1), (2, 3), (4, 4), (5, 7), (10, 10)] {
            let d = exact_counts(m, n);
            assert_eq!(d.len(), m * n + 1);
            let total: f64 = d.iter().sum();
            assert!(close(total, 2.0 / min_p(m, n), 1e-6), "{m} {n}");
            // Symmetric around m·n/2.
            for u in 0..d.len() {
                assert_eq!(d[u], d[d.len() - 1 - u]);
            }
        }
        // m = 2, n = 2: U = 0,1,2,3,4 occur 1,1,2,1,1 times.
        assert_eq!(exact_counts(2, 2), [1.0, 1.0, 2.0, 1.0, 1.0]);
    }

    #[test]
    fn a_textbook_table_value() {
        // m = n = 5: P(U ≤ 4) = 12/252 = 0.0476 (Mann & Whitney 1947, table I). With
        // U = 1 (only 6 > 5 among the pairs), P(U ≤ 1) = 2/252, two-sided 4/252.
        let d = exact_counts(5, 5);
        let le4: f64 = d[..=4].iter().sum();
        assert_eq!(le4, 12.0);
        let a = [1.0, 2.0, 3.0, 4.0, 6.0];
        let b = [5.0, 7.0, 8.0, 9.0, 10.0];
        let r = test(&a, &b).unwrap();
        assert_eq!(25.0 - r.u_b, 1.0);
        assert!(close(r.p, 4.0 / 252.0, 1e-12), "{r:?}");
    }
}
