//! Think time between a user's steps: `"1s"` (constant), `"uniform(1s,5s)"`, `"exp(2s)"`
//! (exponential with that mean, as Tsung's and JMeter's Poisson timers) or
//! `"pacing(2s)"` (a step starts every 2 s whatever its answer took: Locust's
//! `constant_pacing`). The draw itself is the engine's, from the user's seeded generator.

use crate::units::parse_duration;
use std::time::Duration;

/// How long a user waits before its next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Think {
    /// No wait.
    #[default]
    None,
    /// Always this long.
    Constant(Duration),
    /// Uniform between the two (inclusive).
    Uniform(Duration, Duration),
    /// Exponential with this mean.
    Exp(Duration),
    /// The next step starts this long after the last one started (no wait if it is late).
    Pacing(Duration),
}

impl Think {
    /// Parses the `think` key's value.
    pub fn parse(text: &str) -> Result<Think, String> {
        let t = text.trim();
        let dur =
            |s: &str| parse_duration(s.trim()).map_err(|e| format!("think = \"{text}\": {e}"));
        let call = |f: &str| {
            t.strip_prefix(f)
                .and_then(|r| r.trim_start().strip_prefix('('))
                .and_then(|r| r.strip_suffix(')'))
        };
        let think = if let Some(args) = call("uniform") {
            let Some((a, b)) = args.split_once(',') else {
                return Err(format!(
                    "think = \"{text}\": uniform takes two times, e.g. \"uniform(1s,5s)\""
                ));
            };
            let (a, b) = (dur(a)?, dur(b)?);
            if a > b {
                return Err(format!(
                    "think = \"{text}\": the first time must not exceed the second"
                ));
            }
            Think::Uniform(a, b)
        } else if let Some(mean) = call("exp") {
            Think::Exp(dur(mean)?)
        } else if let Some(every) = call("pacing") {
            Think::Pacing(dur(every)?)
        } else if t.contains('(') {
            return Err(format!(
                "think = \"{text}\": write a time (\"1s\"), \"uniform(1s,5s)\", \"exp(2s)\" or \"pacing(2s)\""
            ));
        } else {
            Think::Constant(dur(t)?)
        };
        Ok(match think {
            Think::Constant(d) | Think::Exp(d) | Think::Pacing(d) if d.is_zero() => Think::None,
            Think::Uniform(a, b) if b.is_zero() && a.is_zero() => Think::None,
            t => t,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let s = Duration::from_secs;
        assert_eq!(Think::parse("1s"), Ok(Think::Constant(s(1))));
        assert_eq!(Think::parse("0s"), Ok(Think::None));
        assert_eq!(
            Think::parse("uniform(1s, 5s)"),
            Ok(Think::Uniform(s(1), s(5)))
        );
        assert_eq!(Think::parse("exp(2s)"), Ok(Think::Exp(s(2))));
        assert_eq!(Think::parse("pacing(3s)"), Ok(Think::Pacing(s(3))));
        assert!(Think::parse("uniform(5s,1s)")
            .unwrap_err()
            .contains("exceed"));
        assert!(Think::parse("uniform(5s)")
            .unwrap_err()
            .contains("two times"));
        assert!(Think::parse("gauss(1s)").unwrap_err().contains("exp(2s)"));
        assert!(Think::parse("soon").is_err());
    }
}
