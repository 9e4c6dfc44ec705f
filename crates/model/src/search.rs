//! A capacity search as plans and the store know it: what a search asks
//! ([`FindMax`]: the SLOs that must hold and the rates it may try) and how one of its steps
//! went ([`Verdict`]). The search itself, the next rate from the steps so far, is the
//! analysis' (`shootout_analysis::capacity`); `shootout load --find-max` and `shootout run`
//! run its steps, and the store keeps each step's verdict so that a report can replay the
//! search from the stored steps alone.
//!
//! Seams: no I/O. The plan reads `find_max = { slo = [..], from = R, to = R }` through
//! [`FileFindMax::check`]; the store writes [`Verdict::word`] and reads it back with
//! [`Verdict::from_word`].

use crate::spec::{rules, Limit};
use crate::threshold::Threshold;
use serde::{Deserialize, Serialize};

/// The first rate a search tries when the user does not say (`from`), req/s.
pub const DEFAULT_FROM: f64 = 100.0;

/// The highest rate a search tries when the user does not say (`to`), req/s.
pub const DEFAULT_TO: f64 = 1_000_000.0;

/// A capacity search: the most requests per second that meets every SLO, between `from`
/// and `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct FindMax {
    /// Each SLO as the user wrote it (`p99<50ms`), in order: a verdict's
    /// [`Verdict::Broke`] index points here.
    pub slo: Vec<String>,
    /// The same, parsed: each the condition that must hold, in `--fail-if`'s grammar.
    pub slos: Vec<Threshold>,
    /// The first rate tried, req/s.
    pub from: f64,
    /// The highest rate tried, req/s.
    pub to: f64,
    /// The connections each step opens at the start (`[load] connections`); more open as
    /// the schedule needs them.
    pub connections: usize,
}

/// How one step of a search went.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// Every SLO held and the schedule was kept.
    Met,
    /// The SLO of this index (in the order given) did not hold: the first that broke.
    Broke(usize),
    /// The generator did not keep the schedule (it fell behind, or a connection cap held
    /// requests back): the step says nothing of the server.
    NotKept,
}

impl Verdict {
    /// True for [`Verdict::Met`].
    pub fn met(&self) -> bool {
        matches!(self, Verdict::Met)
    }

    /// The verdict as the store and the JSON reports write it: `met`, `broke`, `not_kept`
    /// (the SLO of `broke` is written beside it).
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Broke(_) => "broke",
            Verdict::NotKept => "not_kept",
        }
    }

    /// The verdict [`Verdict::word`] wrote, with the SLO index stored beside `broke`;
    /// `None` for a word this build does not know or a `broke` without its SLO.
    pub fn from_word(word: &str, slo: Option<usize>) -> Option<Verdict> {
        match (word, slo) {
            ("met", _) => Some(Verdict::Met),
            ("broke", Some(i)) => Some(Verdict::Broke(i)),
            ("not_kept", _) => Some(Verdict::NotKept),
            _ => None,
        }
    }
}

/// A stored step's part in a capacity search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchStep {
    /// How it went; `None` when it was not judged (interrupted, or its contender died
    /// during it): the search does not count it.
    pub verdict: Option<Verdict>,
}

/// `find_max = { .. }` as a plan file gives it.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileFindMax {
    #[serde(default)]
    slo: Vec<String>,
    from: Option<f64>,
    to: Option<f64>,
}

impl FileFindMax {
    /// The search, each key checked; an error names `key` (`load.find_max`,
    /// `workload 'api': find_max`) and says how to write it.
    pub(crate) fn check(&self, key: &str, connections: usize) -> Result<FindMax, String> {
        if self.slo.is_empty() {
            return Err(format!(
                "{key} needs at least one SLO, e.g. slo = [\"p99<50ms\", \"errors<0.1%\"]"
            ));
        }
        let slos = self
            .slo
            .iter()
            .map(|s| {
                s.parse::<Threshold>()
                    .map_err(|e| format!("{key}.slo: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rate = |v: Option<f64>, name: &str, default: f64| {
            let r = v.unwrap_or(default);
            rules::rate(r).map_err(|_| {
                format!(
                    "{key}.{name} must be {}{}, not {r}",
                    Limit::Rate.range(),
                    Limit::Rate.unit()
                )
            })
        };
        let from = rate(self.from, "from", DEFAULT_FROM)?;
        let to = rate(self.to, "to", DEFAULT_TO.max(from))?;
        if from > to {
            return Err(format!(
                "{key}: from = {from} is above to = {to}: the search grows from `from` up to `to`"
            ));
        }
        Ok(FindMax {
            slo: self.slo.clone(),
            slos,
            from,
            to,
            connections,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<FindMax, String> {
        #[derive(Deserialize)]
        struct T {
            find_max: FileFindMax,
        }
        let t: T = toml::from_str(&format!("find_max = {text}")).map_err(|e| e.to_string())?;
        t.find_max.check("load.find_max", 64)
    }

    #[test]
    fn a_search_reads_its_slos_and_bounds() {
        let f = check(r#"{ slo = ["p99<50ms", "errors<0.1%"], from = 50, to = 9000 }"#).unwrap();
        assert_eq!(f.slo, ["p99<50ms", "errors<0.1%"]);
        assert_eq!(f.slos.len(), 2);
        assert_eq!((f.from, f.to), (50.0, 9000.0));
        let d = check(r#"{ slo = ["p99<50ms"] }"#).unwrap();
        assert_eq!((d.from, d.to), (DEFAULT_FROM, DEFAULT_TO));
    }

    #[test]
    fn a_bad_search_names_its_key_and_the_fix() {
        let e = check("{ from = 10 }").unwrap_err();
        assert!(e.contains("load.find_max needs at least one SLO"), "{e}");
        let e = check(r#"{ slo = ["p99 50ms"] }"#).unwrap_err();
        assert!(e.starts_with("load.find_max.slo: "), "{e}");
        let e = check(r#"{ slo = ["p99<5ms"], from = 0 }"#).unwrap_err();
        assert!(e.contains("load.find_max.from must be"), "{e}");
        let e = check(r#"{ slo = ["p99<5ms"], from = 500, to = 100 }"#).unwrap_err();
        assert!(e.contains("from = 500 is above to = 100"), "{e}");
        let e = check(r#"{ slo = ["p99<5ms"], rate = 5 }"#).unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
    }

    #[test]
    fn verdicts_read_back_as_written() {
        for v in [Verdict::Met, Verdict::Broke(2), Verdict::NotKept] {
            let slo = match v {
                Verdict::Broke(i) => Some(i),
                _ => None,
            };
            assert_eq!(Verdict::from_word(v.word(), slo), Some(v));
        }
        assert_eq!(Verdict::from_word("broke", None), None);
        assert_eq!(Verdict::from_word("maybe", None), None);
    }
}
