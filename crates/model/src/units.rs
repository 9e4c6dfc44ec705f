//! Parsing of human durations ("30s", "1m30s", "250ms", or a bare number of seconds as
//! ab's `-t 30` means) and CPU lists ("0,2-3", as taskset writes them), for flags and plans.
//!
//! Every duration a user gives goes through [`parse_duration`], the one checked
//! conversion: it never panics, and what it returns is at most [`MAX_DURATION`], so
//! `Instant::now() + d` cannot overflow wherever the duration is used.

use std::time::Duration;

/// The longest duration shootout accepts anywhere (a run, a timeout, a warm-up, a
/// cooldown): 365 days. Far beyond any benchmark, and far enough from the limits of
/// `Instant` and `Duration` that adding it to the current time is always safe.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// The highest CPU number a CPU list may name (the kernel's `CPU_SETSIZE` is 1024).
pub const MAX_CPU: usize = 1023;

/// A duration that could not be understood or is out of range.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DurationError {
    /// Not a duration at all.
    #[error("'{input}' is not a duration: write it as 30s, 1m30s, 250ms or a number of seconds")]
    Invalid {
        /// The text as given.
        input: String,
    },
    /// Longer than [`MAX_DURATION`].
    #[error("'{input}' is too long: the most shootout accepts is 365 days (e.g. 30s, 10m, 2h)")]
    TooLong {
        /// The text as given.
        input: String,
    },
}

/// Parses `30s`, `1m`, `250ms`, `1.5` (seconds) or `30` (seconds): zero up to
/// [`MAX_DURATION`] inclusive. Negative, not-a-number and overlong inputs are errors, never
/// panics. Callers that need more than zero check it and name their flag or key.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let s = input.trim();
    let invalid = || DurationError::Invalid {
        input: input.to_string(),
    };
    let too_long = || DurationError::TooLong {
        input: input.to_string(),
    };
    if s.is_empty() {
        return Err(invalid());
    }
    let d = if let Ok(secs) = s.parse::<f64>() {
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(invalid());
        }
        // Anything Duration cannot hold is longer than MAX_DURATION anyway.
        Duration::try_from_secs_f64(secs).map_err(|_| too_long())?
    } else {
        humantime::parse_duration(s).map_err(|e| match e {
            humantime::DurationError::NumberOverflow => too_long(),
            _ => invalid(),
        })?
    };
    if d > MAX_DURATION {
        return Err(too_long());
    }
    Ok(d)
}

/// Parses `0`, `0,2-3` into CPU numbers (each at most [`MAX_CPU`], in the order given,
/// repeats dropped). `None` when the text is not such a list.
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    let mut seen = [false; MAX_CPU + 1];
    let mut add = |c: usize| {
        if !std::mem::replace(&mut seen[c], true) {
            cpus.push(c);
        }
    };
    let cpu = |s: &str| s.trim().parse::<usize>().ok().filter(|&c| c <= MAX_CPU);
    for part in list.split(',').map(str::trim) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (cpu(a)?, cpu(b)?);
                if a > b {
                    return None;
                }
                (a..=b).for_each(&mut add);
            }
            None => add(cpu(part)?),
        }
    }
    Some(cpus)
}

/// A wall-clock time that could not be understood.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{0}' is not a time: write it in UTC as RFC 3339, e.g. 2026-11-25T10:00:00Z, or as Unix seconds, e.g. 1795600800")]
pub struct WallClockError(pub String);

/// Parses a wall-clock time: RFC 3339 in UTC (`2026-11-25T10:00:00Z`, fractions of a
/// second allowed) or Unix seconds (`1795600800`, `1795600800.5`).
pub fn parse_wall_clock(input: &str) -> Result<std::time::SystemTime, WallClockError> {
    let s = input.trim();
    let err = || WallClockError(input.to_string());
    if let Ok(secs) = s.parse::<f64>() {
        if !(0.0..1e11).contains(&secs) {
            return Err(err());
        }
        return Ok(std::time::UNIX_EPOCH + Duration::from_secs_f64(secs));
    }
    humantime::parse_rfc3339(s).map_err(|_| err())
}

/// Where live metrics are served (`--metrics-listen`, a plan's `metrics_listen`): a port
/// alone listens on 127.0.0.1 (loopback unless another address is typed), `localhost:PORT`
/// too, else `ADDRESS:PORT`. The error names the forms that are accepted.
pub fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    let port = s.strip_prefix("localhost:").unwrap_or(s);
    if let Ok(port) = port.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    s.parse().map_err(|_| {
        format!(
            "`{s}` is not an address to listen on: give a port (9464, on 127.0.0.1) or ADDRESS:PORT (127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464 to be scraped from other machines)"
        )
    })
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
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("NaN").is_err());
        assert!(parse_duration("inf").is_err());
    }

    /// `-d 1e20`, `-d 18446744073709551615` and friends panicked in
    /// `Duration::from_secs_f64` or later in `Instant + d`; now they are errors.
    #[test]
    fn overlong_durations_are_errors_not_panics() {
        for input in [
            "1e20",
            "1e300",
            "1e30",
            "18446744073709551615",
            "9999999999999999999",
            "31536001",
            "366days",
            "99999999999999999999999h",
            "1.7976931348623157e308",
        ] {
            let e = parse_duration(input).unwrap_err();
            assert!(matches!(e, DurationError::TooLong { .. }), "{input}: {e:?}");
            assert!(e.to_string().contains("365 days"), "{e}");
        }
        assert_eq!(parse_duration("365days"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("31536000"), Ok(MAX_DURATION));
    }

    #[test]
    fn wall_clock_times_in_rfc_3339_or_unix_seconds() {
        let t = |secs: u64| std::time::UNIX_EPOCH + Duration::from_secs(secs);
        assert_eq!(
            parse_wall_clock("2026-11-25T10:00:00Z"),
            Ok(t(1_795_600_800))
        );
        assert_eq!(parse_wall_clock(" 1795600800 "), Ok(t(1_795_600_800)));
        assert_eq!(
            parse_wall_clock("1795600800.5"),
            Ok(t(1_795_600_800) + Duration::from_millis(500))
        );
        assert_eq!(
            parse_wall_clock("2026-11-25T10:00:00.25Z"),
            Ok(t(1_795_600_800) + Duration::from_millis(250))
        );
        for bad in [
            "tomorrow",
            "-1",
            "1e300",
            "NaN",
            "2026-11-25",
            "2026-13-01T00:00:00Z",
        ] {
            let e = parse_wall_clock(bad).unwrap_err();
            assert!(e.to_string().contains("2026-11-25T10:00:00Z"), "{bad}: {e}");
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("0, 2-4"), Some(vec![0, 2, 3, 4]));
        assert_eq!(parse_cpu_list("1,0,1"), Some(vec![1, 0]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("one"), None);
        assert_eq!(parse_cpu_list(""), None);
    }

    /// A range up to u64::MAX was expanded into a vector until memory ran out.
    #[test]
    fn huge_cpu_numbers_are_refused_not_expanded() {
        assert_eq!(parse_cpu_list("0-18446744073709551615"), None);
        assert_eq!(parse_cpu_list("1024"), None);
        assert_eq!(parse_cpu_list("1023").map(|c| c.len()), Some(1));
    }
}
