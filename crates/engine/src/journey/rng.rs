//! A user's random numbers: xorshift64* seeded through splitmix64 from the run's seed and
//! the user's number, so each user's draws are its own and a run is repeatable.

use std::time::Duration;

/// One user's generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator of user `user` in a run seeded by `seed`.
    pub fn new(seed: u64, user: u64) -> Rng {
        Rng(splitmix(seed ^ splitmix(user.wrapping_add(0x9E37_79B9_7F4A_7C15))) | 1)
    }

    /// The next 64 random bits (xorshift64*).
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n` > 0), by Lemire's multiply-shift (bias below 2^-32 for the
    /// ranges used here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.bits() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            None => self.bits(),
        }
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    pub fn unit(&mut self) -> f64 {
        ((self.bits() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform between `a` and `b` inclusive, in nanoseconds.
    pub fn between(&mut self, a: Duration, b: Duration) -> Duration {
        let (a, b) = (a.as_nanos() as u64, b.as_nanos() as u64);
        Duration::from_nanos(self.range(a, b))
    }

    /// Exponential with mean `mean` (at most about 37 × the mean: the unit draw is at
    /// least 2^-53).
    pub fn exp(&mut self, mean: Duration) -> Duration {
        Duration::from_secs_f64(-self.unit().ln() * mean.as_secs_f64())
    }
}

/// splitmix64's finaliser.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range_and_users_differ() {
        let mut r = Rng::new(7, 0);
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let v = r.range(5, 7);
            assert!((5..=7).contains(&v));
            seen[(v - 5) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_ne!(Rng::new(7, 0).bits(), Rng::new(7, 1).bits());
        assert_eq!(Rng::new(7, 3).bits(), Rng::new(7, 3).bits());
    }

    #[test]
    fn exponential_mean_is_its_mean() {
        let mut r = Rng::new(1, 1);
        let n = 20_000;
        let total: f64 = (0..n)
            .map(|_| r.exp(Duration::from_secs(2)).as_secs_f64())
            .sum();
        let mean = total / n as f64;
        // The standard error of the mean is 2 s / sqrt(20,000) = 0.014 s: 5 of them.
        assert!((mean - 2.0).abs() < 0.07, "{mean}");
        let u = r.between(Duration::from_secs(1), Duration::from_secs(5));
        assert!(u >= Duration::from_secs(1) && u <= Duration::from_secs(5));
    }
}
