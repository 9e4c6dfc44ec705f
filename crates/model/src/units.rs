//! Parsing of human durations ("30s", "1m30s", "250ms", or a bare number of seconds as
//! ab's `-t 30` means). Used by flags and, later, plan files.

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
}
