//! A capacity search as plans and the store know it: what a search asks
//! ([`FindMax`]: the SLOs that must hold and the rates it may try) and how one of its steps
//! went ([`Verdict`]). The search itself, the next rate from the steps so far, is the
//! analysis' (`shootout_analysis::capacity`); `shootout load --find-max` and `shootout run`
//! run its steps, and the store keeps each step's verdict so that a report can replay the
//! search from the stored steps alone.
//!
//! One rule for both ways of asking: [`FindMax::new`] checks the SLOs and the bounds of
//! `shootout load --find-max --slo … --from R --to R` and of a plan's
//! `find_max = { slo = [..], from = R, to = R }` alike (the bounds by the spec's rule for a
//! rate, [`rules::rate`]), and each error names the flag or the key it came from
//! ([`Asked`]). When the steps end ([`EndRule`]: once decided, or each at its deadline) is
//! `--step-end` and the key's `step_end`, one [`Choice`] for both. The SLOs are parsed
//! there, once; a report reads the stored ones back with [`parse_slos`], the same grammar.
//!
//! Seams: no I/O. The plan reads its key through [`FileFindMax::check`], the CLI its flags;
//! the store writes [`Verdict::word`] and reads it back with [`Verdict::from_word`].

use crate::spec::{rules, Limit};
use crate::threshold::Threshold;
use crate::Choice;
use serde::{Deserialize, Serialize};

/// The first rate a search tries when the user does not say (`from`), req/s.
pub const DEFAULT_FROM: f64 = 100.0;

/// The highest rate a search tries when the user does not say (`to`), req/s.
pub const DEFAULT_TO: f64 = 1_000_000.0;

/// Each step's least length when the user does not say (`shootout load -d`, a plan's
/// `defaults.duration`; a plan that counts requests is refused with `find_max`).
pub const DEFAULT_STEP: std::time::Duration = std::time::Duration::from_secs(5);

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
    /// When each step ends: once its SLOs are decided, or at its deadline.
    pub end_rule: EndRule,
}

/// When a search's steps end (`--step-end`, a plan's `find_max.step_end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndRule {
    /// Each step ends once its SLOs are decided (or, a rung of the ramp, plainly passes),
    /// at the latest at its deadline.
    #[default]
    Decided,
    /// Each step runs to its deadline, the fixed rule: never ended early, nothing
    /// `passed`, every step judged on all it measured.
    Deadline,
}

impl EndRule {
    /// True for [`EndRule::Decided`], the default (left out of the stored plan).
    pub fn is_decided(&self) -> bool {
        *self == EndRule::Decided
    }
}

impl Choice for EndRule {
    const ALL: &'static [EndRule] = &[EndRule::Decided, EndRule::Deadline];
    fn names(self) -> &'static [&'static str] {
        match self {
            EndRule::Decided => &["decided"],
            EndRule::Deadline => &["deadline"],
        }
    }
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

/// How a capacity search's step ended, as the store keeps it and the reports say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEnd {
    /// Its SLOs were decided before its deadline: every one clearly met.
    DecidedMet,
    /// Its SLOs were decided before its deadline: one clearly broken.
    DecidedBroke,
    /// A rung of the ramp that plainly passed: the search moved on from it, and measures
    /// it again in full before it may bound the capacity.
    Passed,
    /// Its deadline passed with some SLO still open: judged on its figures.
    Deadline,
    /// It ran to its deadline because the search's steps all do ([`EndRule::Deadline`]):
    /// judged on its figures, never looked at before.
    Full,
}

impl StepEnd {
    /// Every way a step ends, in the order the docs list them.
    pub const ALL: [StepEnd; 5] = [
        StepEnd::DecidedMet,
        StepEnd::DecidedBroke,
        StepEnd::Passed,
        StepEnd::Deadline,
        StepEnd::Full,
    ];

    /// The word the store and the JSON reports write: `decided_met`, `decided_broke`,
    /// `passed`, `deadline`, `full`.
    pub fn word(self) -> &'static str {
        match self {
            StepEnd::DecidedMet => "decided_met",
            StepEnd::DecidedBroke => "decided_broke",
            StepEnd::Passed => "passed",
            StepEnd::Deadline => "deadline",
            StepEnd::Full => "full",
        }
    }

    /// The end [`StepEnd::word`] wrote; `None` for a word this build does not know.
    pub fn from_word(word: &str) -> Option<StepEnd> {
        StepEnd::ALL.into_iter().find(|e| e.word() == word)
    }
}

/// A stored step's part in a capacity search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchStep {
    /// How it went; `None` when it was not judged (interrupted, or its contender died
    /// during it): the search does not count it.
    pub verdict: Option<Verdict>,
    /// How it ended; `None` when it was not judged, or stored before the store kept it
    /// (its steps then ran the fixed rule's length).
    pub ended: Option<StepEnd>,
}

/// Where a search was asked for, so that an error names what the user wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked<'a> {
    /// `shootout load --find-max` with `--slo`, `--from` and `--to`.
    Flags,
    /// A plan's key (`load.find_max`, `workload 'api': find_max`).
    Key(&'a str),
}

impl Asked<'_> {
    /// How the error names the part `part` (`slo`, `from`, `to`): `--slo`,
    /// `load.find_max.slo`.
    fn name(self, part: &str) -> String {
        match self {
            Asked::Flags => format!("--{part}"),
            Asked::Key(key) => format!("{key}.{part}"),
        }
    }

    /// The part with its value as the user wrote it: `--from 500`, `load.find_max.from = 500`.
    fn with(self, part: &str, value: impl std::fmt::Display) -> String {
        match self {
            Asked::Flags => format!("--{part} {value}"),
            Asked::Key(_) => format!("{} = {value}", self.name(part)),
        }
    }
}

/// Each SLO of `exprs` parsed (the condition that must hold, in `--fail-if`'s grammar,
/// `step:NAME:` judging a journey's step alone); the first that does not parse is the
/// error, as the grammar words it. Whether a step's name is one of the load's steps is
/// the caller's to check, with the journeys ([`crate::threshold::missing_step`]).
pub fn parse_slos(exprs: &[String]) -> Result<Vec<Threshold>, String> {
    exprs
        .iter()
        .map(|s| s.parse::<Threshold>().map_err(|e| e.to_string()))
        .collect()
}

impl FindMax {
    /// A search for `slo` between `from` and `to` (the defaults, [`DEFAULT_FROM`] and
    /// [`DEFAULT_TO`] or `from` if higher, where not given), opening `connections` at each
    /// step's start: the one rule for the flags and the plan's key. Each SLO must parse;
    /// each bound must be a rate the spec allows ([`rules::rate`]); `from` at most `to`.
    /// An error names the flag or key (`asked`) and says how to write it.
    pub fn new(
        asked: Asked,
        slo: &[String],
        from: Option<f64>,
        to: Option<f64>,
        connections: usize,
    ) -> Result<FindMax, String> {
        if slo.is_empty() {
            return Err(match asked {
                Asked::Flags => {
                    "--find-max needs at least one --slo, e.g. --slo 'p99<50ms' --slo 'errors<0.1%'"
                        .into()
                }
                Asked::Key(key) => format!(
                    "{key} needs at least one SLO, e.g. slo = [\"p99<50ms\", \"errors<0.1%\"]"
                ),
            });
        }
        let slos = parse_slos(slo).map_err(|e| match asked {
            Asked::Flags => format!("--slo {e}"),
            Asked::Key(key) => format!("{key}.slo: {e}"),
        })?;
        let rate = |v: Option<f64>, part: &str, default: f64| {
            let r = v.unwrap_or(default);
            rules::rate(r).map_err(|_| {
                format!(
                    "{} must be {}{}, not {}",
                    asked.name(part),
                    Limit::Rate.range(),
                    Limit::Rate.unit(),
                    shown(r)
                )
            })
        };
        let from = rate(from, "from", DEFAULT_FROM)?;
        let to = rate(to, "to", DEFAULT_TO.max(from))?;
        if from > to {
            return Err(format!(
                "{} is above {}: the search grows from the first rate up to the highest",
                asked.with("from", shown(from)),
                asked.with("to", shown(to))
            ));
        }
        Ok(FindMax {
            slo: slo.to_vec(),
            slos,
            from,
            to,
            connections,
            end_rule: EndRule::Decided,
        })
    }

    /// The same search with its steps ending by `rule`.
    pub fn ending(mut self, rule: EndRule) -> FindMax {
        self.end_rule = rule;
        self
    }
}

/// The rule a plan's `step_end` names (`key`: `load.find_max`), the default without one;
/// an error names the key and the values it takes.
fn end_rule(key: &str, given: Option<&str>) -> Result<EndRule, String> {
    let Some(word) = given else {
        return Ok(EndRule::Decided);
    };
    EndRule::named(word).ok_or_else(|| {
        format!(
            "{key}.step_end = \"{word}\" is not a rule: give \"decided\" (each step ends once its SLOs are decided, the default) or \"deadline\" (each step runs to its deadline, the fixed rule)"
        )
    })
}

/// A rate as the user may have typed it: `0.0001`, `500`, `1e300` (not 300 digits).
fn shown(r: f64) -> String {
    if r == 0.0 || (1e-4..1e9).contains(&r.abs()) {
        r.to_string()
    } else {
        format!("{r:e}")
    }
}

/// `find_max = { .. }` as a plan file gives it.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileFindMax {
    #[serde(default)]
    slo: Vec<String>,
    from: Option<f64>,
    to: Option<f64>,
    step_end: Option<String>,
}

impl FileFindMax {
    /// The search, each key checked; an error names `key` (`load.find_max`,
    /// `workload 'api': find_max`) and says how to write it.
    pub(crate) fn check(&self, key: &str, connections: usize) -> Result<FindMax, String> {
        let rule = end_rule(key, self.step_end.as_deref())?;
        FindMax::new(Asked::Key(key), &self.slo, self.from, self.to, connections)
            .map(|f| f.ending(rule))
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
        assert!(
            e.contains("load.find_max.from = 500 is above load.find_max.to = 100"),
            "{e}"
        );
        let e = check(r#"{ slo = ["p99<5ms"], rate = 5 }"#).unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
    }

    /// `step_end` picks when the steps end: once decided by default, each at its
    /// deadline on request; any other word is refused naming the key and both values.
    #[test]
    fn step_end_reads_decided_or_deadline_and_refuses_the_rest() {
        let slo = r#"slo = ["p99<50ms"]"#;
        for (given, want) in [
            ("", EndRule::Decided),
            (r#", step_end = "decided""#, EndRule::Decided),
            (r#", step_end = "deadline""#, EndRule::Deadline),
            (r#", step_end = "Deadline""#, EndRule::Deadline),
        ] {
            let f = check(&format!("{{ {slo}{given} }}")).unwrap();
            assert_eq!(f.end_rule, want, "{given}");
        }
        let e = check(&format!(r#"{{ {slo}, step_end = "fixed" }}"#)).unwrap_err();
        assert_eq!(
            e,
            "load.find_max.step_end = \"fixed\" is not a rule: give \"decided\" (each step ends once its SLOs are decided, the default) or \"deadline\" (each step runs to its deadline, the fixed rule)"
        );
        let e = check(&format!("{{ {slo}, step_end = 1 }}")).unwrap_err();
        assert!(e.contains("step_end"), "{e}");
        assert_eq!(EndRule::list(", "), "decided, deadline");
    }

    /// The flags and the plan's key are one rule: the same bounds are refused or taken
    /// by both, each error naming what the user wrote.
    #[test]
    fn the_flags_and_the_key_share_one_rule() {
        let slo = ["p99<50ms".to_string()];
        for (from, to, ok) in [
            (None, Some(1e300), false),
            (Some(0.0001), None, false),
            (Some(f64::NAN), None, false),
            (None, Some(f64::INFINITY), false),
            (Some(0.001), Some(1e9), true),
            (Some(2e6), None, true),
            (None, None, true),
        ] {
            let flags = FindMax::new(Asked::Flags, &slo, from, to, 1);
            let key = FindMax::new(Asked::Key("load.find_max"), &slo, from, to, 1);
            assert_eq!(flags.is_ok(), ok, "{from:?} {to:?}: {flags:?}");
            assert_eq!(key.is_ok(), ok, "{from:?} {to:?}: {key:?}");
            if let (Ok(a), Ok(b)) = (&flags, &key) {
                assert_eq!((a.from, a.to), (b.from, b.to));
            }
        }
        let e = FindMax::new(Asked::Flags, &slo, None, Some(1e300), 1).unwrap_err();
        assert_eq!(
            e,
            "--to must be from 0.001 to 1e9 requests per second, not 1e300"
        );
        let e = FindMax::new(Asked::Key("load.find_max"), &slo, None, Some(1e300), 1).unwrap_err();
        assert_eq!(
            e,
            "load.find_max.to must be from 0.001 to 1e9 requests per second, not 1e300"
        );
        let e = FindMax::new(Asked::Flags, &slo, Some(500.0), Some(100.0), 1).unwrap_err();
        assert!(e.starts_with("--from 500 is above --to 100"), "{e}");
        let e = FindMax::new(Asked::Flags, &[], None, None, 1).unwrap_err();
        assert!(e.contains("--find-max needs at least one --slo"), "{e}");
        let e = FindMax::new(Asked::Flags, &["p99 50ms".to_string()], None, None, 1).unwrap_err();
        assert!(e.starts_with("--slo "), "{e}");
    }

    #[test]
    fn step_ends_read_back_as_written() {
        for e in StepEnd::ALL {
            assert_eq!(StepEnd::from_word(e.word()), Some(e));
        }
        assert_eq!(StepEnd::from_word("full"), Some(StepEnd::Full));
        assert_eq!(StepEnd::from_word("early"), None);
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
