//! `--until`: conditions under which a measured load has converged and may end before its
//! time: `p99±5%` holds when the 95% interval of the run's p99 lies within 5% of it on
//! each side; `rps±2%` when the 95% interval of the mean answers a second (over the
//! run's whole seconds) lies within 2% of it. One parser for the flag and the plan's
//! `until` key; what is measured against the conditions is the caller's.

use std::fmt;
use std::str::FromStr;

/// The least a load (or a plan's step) with conditions lasts, whatever its figures say.
pub const LEAST: std::time::Duration = std::time::Duration::from_secs(3);

/// The most conditions one load may give.
pub const MAX_CONDITIONS: usize = 8;

/// What a condition is about.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// A latency percentile, as a quantile (0.99 for p99).
    Percentile(f64),
    /// Good answers a second.
    Rps,
}

/// One condition: the figure's 95% interval within ±`within` (a fraction) of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Condition {
    pub figure: Figure,
    /// The interval's largest distance from the figure, relative to it (0.05 for ±5%).
    pub within: f64,
}

impl Condition {
    /// The figure's name as written (`p99`, `p99.9`, `rps`).
    pub fn name(&self) -> String {
        match self.figure {
            Figure::Percentile(q) => format!("p{}", trim(q * 100.0)),
            Figure::Rps => "rps".into(),
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}±{}%", self.name(), trim(self.within * 100.0))
    }
}

const EXAMPLE: &str = "write FIGURE±WIDTH%, e.g. p99±5% or rps±2% (+- for ±)";

impl FromStr for Condition {
    type Err = String;

    /// `p99±5%`, `p99.9±10%`, `p50+-2%`, `rps±2%`.
    fn from_str(s: &str) -> Result<Condition, String> {
        let text = s.trim();
        let (figure, width) = text
            .split_once('±')
            .or_else(|| text.split_once("+-"))
            .ok_or_else(|| format!("'{s}' has no ±: {EXAMPLE}"))?;
        let figure = match figure.trim().to_ascii_lowercase().as_str() {
            "rps" => Figure::Rps,
            f => {
                let q: f64 = f
                    .strip_prefix('p')
                    .and_then(|n| n.parse().ok())
                    .filter(|n: &f64| n.is_finite() && *n > 0.0 && *n < 100.0)
                    .ok_or_else(|| {
                        format!("'{s}': {figure} is not a percentile (p50, p99, p99.9) or rps: {EXAMPLE}")
                    })?;
                Figure::Percentile(q / 100.0)
            }
        };
        let within: f64 = width
            .trim()
            .strip_suffix('%')
            .and_then(|w| w.trim().parse().ok())
            .filter(|w: &f64| w.is_finite() && *w > 0.0 && *w <= 100.0)
            .ok_or_else(|| {
                format!("'{s}': the width must be a share above 0% and at most 100%: {EXAMPLE}")
            })?;
        Ok(Condition {
            figure,
            within: within / 100.0,
        })
    }
}

/// The conditions of `--until` as given (each flag may hold several, comma-separated),
/// or the error naming the one that is wrong.
pub fn parse_all(given: &[String]) -> Result<Vec<Condition>, String> {
    let mut out = Vec::new();
    for part in given.iter().flat_map(|g| g.split(',')) {
        out.push(part.parse::<Condition>()?);
    }
    if out.len() > MAX_CONDITIONS {
        return Err(format!(
            "{} conditions: give at most {MAX_CONDITIONS}",
            out.len()
        ));
    }
    Ok(out)
}

/// How a load with conditions ended.
#[derive(Debug, Clone, PartialEq)]
pub struct UntilOutcome {
    /// The conditions.
    pub conditions: Vec<Condition>,
    /// When every condition held (from the run's start), and the run ended there; `None`:
    /// they did not all hold before its time ran out, or it was stopped.
    pub converged: Option<std::time::Duration>,
    /// Each condition's last reading: the figure, its interval's ends (the unit of the
    /// figure: ms for a percentile, answers a second for rps), and whether it held;
    /// `None` where there was nothing to read yet.
    pub last: Vec<Option<Reading>>,
}

/// One reading of a condition's figure with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// The interval's upper end is the largest value seen: too few answers above the
    /// percentile to bound it (never held).
    pub open_above: bool,
}

impl Reading {
    /// The interval's largest distance from the value, relative to it.
    pub fn width(&self) -> f64 {
        if self.value <= 0.0 {
            return f64::INFINITY;
        }
        ((self.value - self.lo).max(self.hi - self.value)) / self.value
    }

    /// Whether it meets `c`.
    pub fn holds(&self, c: &Condition) -> bool {
        !self.open_above && self.width() <= c.within
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_read_as_written_and_say_themselves_back() {
        for (text, figure, within, shown) in [
            ("p99±5%", Figure::Percentile(0.99), 0.05, "p99±5%"),
            ("P99.9 +- 10%", Figure::Percentile(0.999), 0.10, "p99.9±10%"),
            ("p50±0.5%", Figure::Percentile(0.5), 0.005, "p50±0.5%"),
            ("rps±2%", Figure::Rps, 0.02, "rps±2%"),
        ] {
            let c: Condition = text.parse().unwrap();
            match (c.figure, figure) {
                (Figure::Percentile(got), Figure::Percentile(want)) => {
                    assert!((got - want).abs() < 1e-12, "{text}: {got}")
                }
                (got, want) => assert_eq!(got, want, "{text}"),
            }
            assert!((c.within - within).abs() < 1e-12, "{text}");
            assert_eq!(c.to_string(), shown);
        }
        let both = parse_all(&["p99±5%,rps±2%".into(), "p50±1%".into()]).unwrap();
        assert_eq!(both.len(), 3);
    }

    #[test]
    fn a_bad_condition_says_what_to_write() {
        for bad in [
            "p99",
            "p99±",
            "p99±0%",
            "p99±5",
            "q99±5%",
            "p100±5%",
            "p0±5%",
            "rps±101%",
            "p99±nan%",
        ] {
            let e = bad.parse::<Condition>().unwrap_err();
            assert!(e.contains("p99±5%"), "{bad}: {e}");
        }
        let many = vec!["p99±5%".to_string(); MAX_CONDITIONS + 1];
        assert!(parse_all(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn a_reading_holds_when_both_ends_lie_within_the_width() {
        let c: Condition = "p99±5%".parse().unwrap();
        let r = |lo, hi, open_above| Reading {
            value: 10.0,
            lo,
            hi,
            open_above,
        };
        assert!(r(9.6, 10.4, false).holds(&c));
        assert!(r(9.5, 10.5, false).holds(&c));
        assert!(!r(9.4, 10.1, false).holds(&c));
        assert!(!r(9.9, 10.6, false).holds(&c));
        assert!(!r(9.9, 10.1, true).holds(&c));
        assert!(!Reading {
            value: 0.0,
            lo: 0.0,
            hi: 0.0,
            open_above: false
        }
        .holds(&c));
    }
}
