//! Parsing of human durations ("30s", "1m30s", "250ms", or a bare number of seconds as
//! ab's `-t 30` means) and CPU lists ("0,2-3", as taskset writes them), for flags and plans.

use std::time::Duration;

/// A duration that could not be understood.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{input}' is not a duration: write it as 30s, 1m30s, 250ms or a number of seconds")]
pub struct DurationError {
    /// The text as given.
    pub input: String,
}

/// Parses `30s`, `1m`, `250ms`, `1.5` (seconds) or `30` (seconds).
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let s = input.trim();
    let err = || DurationError {
        input: input.to_string(),
    };
    if s.is_empty() {
        return Err(err());
    }
    if let Ok(secs) = s.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok(Duration::from_secs_f64(secs));
        }
        return Err(err());
    }
    humantime::parse_duration(s).map_err(|_| err())
}

/// Parses `0`, `0,2-3` into CPU numbers.
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').map(str::trim) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_users_type() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("0, 2-4"), Some(vec![0, 2, 3, 4]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("one"), None);
    }
}
