//! A set of acceptable HTTP status codes, parsed from `200,301` or `2xx,304` and checked
//! with one bit test per response.

use std::fmt;

/// Status codes that count as success. Default: every code below 400.
#[derive(Clone, PartialEq, Eq)]
pub struct StatusSet {
    bits: [u64; 16],
    text: String,
}

/// A status list that could not be understood.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "'{0}' is not a status list: write codes and classes separated by commas, e.g. 200,301 or 2xx"
)]
pub struct StatusSetError(pub String);

impl StatusSet {
    /// No code accepted; add codes with [`StatusSet::insert`].
    pub fn empty() -> Self {
        StatusSet {
            bits: [0; 16],
            text: String::new(),
        }
    }

    /// Accepts `code` (100..=999).
    pub fn insert(&mut self, code: u16) {
        if code < 1024 {
            self.bits[(code / 64) as usize] |= 1 << (code % 64);
        }
    }

    /// True when `code` counts as success.
    #[inline]
    pub fn contains(&self, code: u16) -> bool {
        code < 1024 && self.bits[(code / 64) as usize] & (1 << (code % 64)) != 0
    }

    /// Parses `200,301`, `2xx`, `200-299` or a mix of them.
    pub fn parse(list: &str) -> Result<Self, StatusSetError> {
        let err = || StatusSetError(list.to_string());
        let mut set = StatusSet::empty();
        for part in list.split(',').map(str::trim) {
            let (lo, hi) = if let Some(class) = part.strip_suffix("xx").or(part.strip_suffix("XX"))
            {
                let d: u16 = class.parse().map_err(|_| err())?;
                if !(1..=9).contains(&d) {
                    return Err(err());
                }
                (d * 100, d * 100 + 99)
            } else if let Some((a, b)) = part.split_once('-') {
                (
                    a.trim().parse().map_err(|_| err())?,
                    b.trim().parse().map_err(|_| err())?,
                )
            } else {
                let c: u16 = part.parse().map_err(|_| err())?;
                (c, c)
            };
            if !(100..=999).contains(&lo) || !(100..=999).contains(&hi) || lo > hi {
                return Err(err());
            }
            (lo..=hi).for_each(|c| set.insert(c));
        }
        set.text = list.to_string();
        Ok(set)
    }

    /// How the set was given (`<400` for the default).
    pub fn describe(&self) -> &str {
        &self.text
    }
}

impl Default for StatusSet {
    fn default() -> Self {
        let mut set = StatusSet::empty();
        (100..400).for_each(|c| set.insert(c));
        set.text = "<400".to_string();
        set
    }
}

impl fmt::Debug for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StatusSet({})", self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_accepts_below_400() {
        let s = StatusSet::default();
        assert!(s.contains(200) && s.contains(304) && s.contains(399));
        assert!(!s.contains(400) && !s.contains(502));
    }

    #[test]
    fn parses_codes_classes_and_ranges() {
        let s = StatusSet::parse("200, 3xx,404-405").unwrap();
        for ok in [200, 300, 301, 399, 404, 405] {
            assert!(s.contains(ok), "{ok}");
        }
        for bad in [201, 299, 400, 406, 500] {
            assert!(!s.contains(bad), "{bad}");
        }
        assert!(StatusSet::parse("abc").is_err());
        assert!(StatusSet::parse("0xx").is_err());
        assert!(StatusSet::parse("1000").is_err());
        assert!(StatusSet::parse("300-200").is_err());
    }
}
