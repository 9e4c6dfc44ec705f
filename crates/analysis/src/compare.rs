//! What changed between two stored runs (`shootout compare A B`). Steps are paired by
//! contender name × workload × load level; for each pair the median req/s and median p99 of
//! run A and run B, the change, and a verdict: faster, slower, no significant change
//! (noise), or too little evidence to tell. The req/s verdict is the rankings' test
//! ([`crate::evidence::difference`]: Mann–Whitney on the repetitions when there are enough,
//! else Student's t over the per-second good answers, with a 95% interval of the ratio
//! either way); the p99 verdict is a two-sided Mann–Whitney U test of the per-repetition
//! p99s ([`crate::mann_whitney`], α = [`ALPHA`]).
//!
//! Gates for CI ([`Gates`]): `--fail-if-slower PCT` flags a pair whose median req/s dropped
//! by more than PCT percent when the drop is significant (a drop that could not be tested is
//! a warning, [`CompareWarning::Untested`], not a failure), and a contender measured in A
//! that failed in B (crashed, failed verification, …); `--fail-if-p99-above MS` flags every
//! contender × workload × level of run B whose median p99 is above MS.
//!
//! Each contender's capacity on a workload searched in both runs is compared as well
//! ([`CapacityChange`]), from how the searches of the two runs stand to each other
//! ([`crate::capacities`]).
//!
//! Seams: computed from two [`StoredRun`]s only; the warnings and failed gates are typed
//! ([`CompareWarning`], [`Violation`]) and worded by the renderers (`shootout-report`).

use crate::analysis::Analysis;
use crate::capacities::place;
use crate::cells::{level_key, median, step_secs, unlike, Cell, LevelKey};
use crate::evidence::{difference, Method, Relation};
use crate::mann_whitney;
use crate::ranking::{stability, Stability};
use crate::unit::Unit;
use crate::warnings::CellAt;
use shootout_model::find_max::EndRule;
use shootout_model::stored::{RunId, StoredRun};
use shootout_model::{ContenderStatus, FailureCounts, LoadLevel, RunStatus, Warning, Wire};
use std::collections::HashMap;

/// The significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// What makes `shootout compare` fail (exit 1); `None` turns a gate off.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gates {
    /// Fail when a pair's median req/s dropped by more than this percentage (and the drop
    /// is significant, or the repetitions are too few to test).
    pub fail_if_slower_percent: Option<f64>,
    /// Fail when a median p99 of run B is above this many milliseconds.
    pub fail_if_p99_above_ms: Option<f64>,
}

/// The verdict on a change from run A to run B: of one measure of one pair, or of a
/// contender's capacity ([`CapacityChange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeVerdict {
    /// Significantly better in B (more req/s, or a lower p99).
    Faster,
    /// Significantly worse in B.
    Slower,
    /// The difference is within the noise of the repetitions.
    NoChange,
    /// So little evidence that no outcome could be significant at [`ALPHA`] (too few
    /// repetitions, and for req/s too few seconds as well).
    TooFew,
}

impl ChangeVerdict {
    /// The word in JSON and CSV.
    pub fn word(self) -> &'static str {
        match self {
            ChangeVerdict::Faster => "faster",
            ChangeVerdict::Slower => "slower",
            ChangeVerdict::NoChange => "no_significant_change",
            ChangeVerdict::TooFew => "not_enough_repetitions",
        }
    }
}

/// One measure (req/s or p99) of a pair in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Median over run A's repetitions.
    pub a: f64,
    /// Median over run B's repetitions.
    pub b: f64,
    /// `(b − a) / a` in percent; `None` when `a` is 0.
    pub percent: Option<f64>,
    /// The test's two-sided p-value.
    pub p: f64,
    /// What the test says.
    pub verdict: ChangeVerdict,
    /// B over A as the test estimates it, with its 95% interval (req/s only; `None` when
    /// untested): `(ratio, low, high)`.
    pub interval: Option<(f64, f64, f64)>,
    /// Which evidence decided (req/s only).
    pub method: Option<Method>,
}

impl Change {
    /// Compares per-repetition values; `higher_is_better` for req/s, not for latency.
    pub fn of(a: &[f64], b: &[f64], higher_is_better: bool) -> Change {
        let (ma, mb) = (median(a), median(b));
        let test = mann_whitney::test(a, b);
        let p = test.map_or(1.0, |t| t.p);
        let verdict = match test {
            _ if !mann_whitney::can_be_significant(a.len(), b.len(), ALPHA) => {
                ChangeVerdict::TooFew
            }
            Some(t) if t.p < ALPHA => {
                if t.b_larger() == higher_is_better {
                    ChangeVerdict::Faster
                } else {
                    ChangeVerdict::Slower
                }
            }
            _ => ChangeVerdict::NoChange,
        };
        Change {
            a: ma,
            b: mb,
            percent: (ma > 0.0).then(|| (mb - ma) / ma * 100.0),
            p,
            verdict,
            interval: None,
            method: None,
        }
    }

    /// Compares the good-answer req/s of two cells with [`difference`].
    pub fn of_rps(a: &Cell, b: &Cell) -> Change {
        let (ma, mb) = (a.rps, b.rps);
        let d = difference(a, b);
        let verdict = match d {
            None => ChangeVerdict::TooFew,
            Some(d) if !d.significant() => ChangeVerdict::NoChange,
            Some(d) if d.ratio > 1.0 => ChangeVerdict::Faster,
            Some(_) => ChangeVerdict::Slower,
        };
        Change {
            a: ma,
            b: mb,
            percent: (ma > 0.0).then(|| (mb - ma) / ma * 100.0),
            p: d.map_or(1.0, |d| d.p),
            verdict,
            interval: d.map(|d| (d.ratio, d.low, d.high)),
            method: d.map(|d| d.method),
        }
    }

    /// `(times, low, high)`: how many times faster the faster side is, as the test
    /// estimates it, and the 95% interval of that figure; `None` without an interval.
    pub fn times(&self) -> Option<(f64, f64, f64)> {
        let (ratio, low, high) = self.interval?;
        if ratio <= 0.0 || low <= 0.0 {
            return None;
        }
        Some(if ratio >= 1.0 {
            (ratio, low, high)
        } else {
            (1.0 / ratio, 1.0 / high, 1.0 / low)
        })
    }
}

/// The same contender × workload × load level in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The workload's name.
    pub workload: String,
    /// The contender's name.
    pub contender: String,
    /// The load level.
    pub level: LoadLevel,
    /// Repetitions in run A.
    pub reps_a: usize,
    /// Repetitions in run B.
    pub reps_b: usize,
    /// What the workload's counts count in run A, so what `rps` is a second (req/s, or a
    /// gRPC workload's calls/s, …).
    pub unit: Unit,
    /// Median req/s (in `unit`).
    pub rps: Change,
    /// Median p99 latency (ms).
    pub p99: Change,
}

/// A contender × workload × load level measured in one run only.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpaired {
    /// The workload's name.
    pub workload: String,
    /// The contender's name.
    pub contender: String,
    /// The load level.
    pub level: LoadLevel,
    /// What became of the contender in the other run, when it is there but failed.
    pub failed_in_other: Option<FailedIn>,
}

/// What became of a contender in a run where it was not measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedIn {
    /// Its status there (neither measured nor skipped).
    pub status: ContenderStatus,
    /// The first line of its stored detail, without a trailing `:` or
    /// `; last lines of its stderr` (the lines after it would not fit); may be empty.
    pub first_line: String,
}

/// What the reader of a comparison must know, most important first.
#[derive(Debug, Clone, PartialEq)]
pub enum CompareWarning {
    /// A run did not end complete: only the steps it stored are compared.
    Unfinished {
        /// The run.
        run: RunId,
        /// `A` or `B`.
        side: char,
        /// How it ended.
        status: RunStatus,
    },
    /// The runs' machines differ (CPU, cores, kernel or memory).
    DifferentMachines,
    /// `--fail-if-slower`: a pair's req/s dropped by more than the limit, but too little
    /// evidence to test it: reported, not failed.
    Untested {
        /// Index of the pair in [`Comparison::pairs`].
        pair: usize,
    },
    /// A pair was spoken to differently in A and in B (a contender's or a workload's
    /// `protocol`, `streams` or `pipeline` changed): part of the change is the client's.
    WireChanged {
        /// The cell.
        at: CellAt,
        /// How run A spoke to it.
        a: Wire,
        /// How run B spoke to it.
        b: Wire,
    },
    /// A pair's steps were of unlike lengths in A and in B (more than
    /// [`UNLIKE_STEPS`](crate::cells::UNLIKE_STEPS) times apart): the comparison weighs how
    /// each step began as much as the server, and a verdict that rests on tenths of a
    /// second (steps too short for the per-second test) is withdrawn
    /// ([`ChangeVerdict::TooFew`]).
    UnlikeSteps {
        /// Index of the pair in [`Comparison::pairs`].
        pair: usize,
        /// The median measured length of A's steps, in seconds.
        a_secs: f64,
        /// The same of B's.
        b_secs: f64,
        /// True when the pair's req/s verdict was withdrawn.
        withdrawn: bool,
    },
    /// A workload searched for capacity in both runs by unlike rules
    /// (`find_max.step_end`): its steps ended once decided in one run and each ran to its
    /// deadline in the other, so part of any change in its capacities is the rule's.
    SearchRules {
        /// The workload.
        workload: String,
        /// When run A's steps ended.
        a: EndRule,
        /// When run B's.
        b: EndRule,
    },
    /// A pair failed more requests in B than in A.
    MoreFailures {
        /// The cell.
        at: CellAt,
        /// B's failures by class.
        b: FailureCounts,
        /// A's failed requests.
        a_total: u64,
    },
    /// A pair's steps in one run counted what its figures leave out: requests failed by
    /// shootout's own fault, pings left unanswered, connections never opened (the first
    /// load run's warning of each such kind among the cell's repetitions; see
    /// [`unseen`]).
    Load {
        /// The cell.
        at: CellAt,
        /// The run whose steps raised it.
        run: RunId,
        /// The warning.
        warning: Warning,
    },
}

/// The warnings of `cell`'s repetitions that say what its figures leave out — requests
/// failed by shootout's own fault, pings left unanswered, connections never opened —
/// the first of each kind.
pub fn unseen(cell: &Cell) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for w in cell.steps.iter().flat_map(|s| &s.result.warnings) {
        let kind = matches!(
            w,
            Warning::GeneratorFault { .. }
                | Warning::PingsUnanswered { .. }
                | Warning::ConnectionsOpening { .. }
        );
        if kind && !out.iter().any(|o| o.kind() == w.kind()) {
            out.push(w.clone());
        }
    }
    out
}

/// A gate that did not pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// `--fail-if-slower`: the pair at this index of [`Comparison::pairs`] dropped more,
    /// significantly.
    Slower {
        /// Index of the pair.
        pair: usize,
    },
    /// `--fail-if-slower`: a cell measured in A whose contender failed in B.
    NotMeasured {
        /// Index in [`Comparison::only_in_a`].
        unpaired: usize,
    },
    /// `--fail-if-p99-above`: a cell of B whose median p99 is above the limit.
    P99Above {
        /// The cell.
        at: CellAt,
        /// Its median p99 (ms).
        p99: f64,
        /// Its repetitions.
        reps: usize,
        /// The limit (ms).
        limit: f64,
    },
}

impl Violation {
    /// `slower`, `not_measured` or `p99_above`.
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::Slower { .. } => "slower",
            Violation::NotMeasured { .. } => "not_measured",
            Violation::P99Above { .. } => "p99_above",
        }
    }
}

/// The same contender's capacity on the same workload in two runs (`shootout compare`).
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityChange {
    /// The workload's name.
    pub workload: String,
    /// The contender's name.
    pub contender: String,
    /// What its rates count a second: `req/s`, `journeys/s` for a journey workload, or
    /// `calls/s` for a gRPC workload.
    pub unit: &'static str,
    /// Run A's capacity (median of its finished searches), in `unit`.
    pub a: Option<f64>,
    /// Run B's.
    pub b: Option<f64>,
    /// `(b − a) / a` in percent; `None` when either is missing or `a` is 0.
    pub percent: Option<f64>,
    /// What the searches say: `Faster` (more capacity in B) when every search of B met a
    /// rate at or above the greatest any search of A broke, `Slower` the other way round,
    /// `NoChange` when they overlap, `TooFew` when a side has no finished search. With
    /// four searches or more on both sides, the Mann–Whitney test can also decide.
    pub verdict: ChangeVerdict,
}

/// Two runs compared.
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    /// Run A (the reference).
    pub a: &'a StoredRun,
    /// Run B (the candidate).
    pub b: &'a StoredRun,
    /// The pairs, in run A's order.
    pub pairs: Vec<Pair>,
    /// Measured in A only.
    pub only_in_a: Vec<Unpaired>,
    /// Measured in B only.
    pub only_in_b: Vec<Unpaired>,
    /// What the reader must know (unfinished runs, different machines, new failures).
    pub warnings: Vec<CompareWarning>,
    /// The gates asked for.
    pub gates: Gates,
    /// The gates that failed (empty: passed).
    pub violations: Vec<Violation>,
    /// The most repetitions of any cell of A, and of B.
    pub reps: (usize, usize),
    /// Each workload × level ranked in both runs: the two orders and the pairs that
    /// swapped.
    pub stability: Vec<Stability>,
    /// Each contender's capacity on each workload searched in both runs.
    pub capacities: Vec<CapacityChange>,
}

/// The most repetitions of any cell, or searches of any contender's capacity.
fn most_reps(a: &Analysis) -> usize {
    let searches = a
        .capacities
        .iter()
        .flat_map(|w| &w.contenders)
        .map(|c| c.searches.len());
    searches.fold(a.max_reps(), usize::max)
}

/// The capacities of `a` and `b` paired by workload and contender name, in A's order.
fn capacity_changes(a: &Analysis, b: &Analysis) -> Vec<CapacityChange> {
    let mut out = Vec::new();
    for wa in &a.capacities {
        let Some(wb) = b.capacities.iter().find(|w| w.workload == wa.workload) else {
            continue;
        };
        for ca in &wa.contenders {
            let name = a.name(ca.contender);
            let Some(cb) = wb.contenders.iter().find(|c| b.name(c.contender) == name) else {
                continue;
            };
            let verdict = match (ca.max_rps, cb.max_rps) {
                (Some(_), Some(_)) => match place(cb, ca).relation {
                    Relation::MuchFaster | Relation::Faster => ChangeVerdict::Faster,
                    _ => match place(ca, cb).relation {
                        Relation::MuchFaster | Relation::Faster => ChangeVerdict::Slower,
                        _ => ChangeVerdict::NoChange,
                    },
                },
                _ => ChangeVerdict::TooFew,
            };
            let percent = match (ca.max_rps, cb.max_rps) {
                (Some(x), Some(y)) if x > 0.0 => Some((y - x) / x * 100.0),
                _ => None,
            };
            out.push(CapacityChange {
                workload: wa.workload.to_string(),
                contender: name.to_string(),
                unit: wa.find_max.unit(),
                a: ca.max_rps,
                b: cb.max_rps,
                percent,
                verdict,
            });
        }
    }
    out
}

/// `rankings` with those of the workloads × levels whose pairs had unlike steps
/// ([`CompareWarning::UnlikeSteps`] among `warnings`) marked with the first such pair's
/// step lengths.
fn marked_unlike(
    mut rankings: Vec<Stability>,
    pairs: &[Pair],
    warnings: &[CompareWarning],
) -> Vec<Stability> {
    let mut unlike: HashMap<(&str, LevelKey), (f64, f64)> = HashMap::new();
    for w in warnings {
        if let CompareWarning::UnlikeSteps {
            pair,
            a_secs,
            b_secs,
            ..
        } = w
        {
            let p = &pairs[*pair];
            if let Some(key) = level_key(p.level) {
                unlike
                    .entry((p.workload.as_str(), key))
                    .or_insert((*a_secs, *b_secs));
            }
        }
    }
    for s in &mut rankings {
        s.unlike_steps =
            level_key(s.level).and_then(|key| unlike.get(&(s.workload.as_str(), key)).copied());
    }
    rankings
}

/// Withdraws a req/s verdict the tenths decided (tenths stand in for seconds between like
/// steps only: call it for a pair of unlike steps); true when there was one.
fn withdraw_tenths(p: &mut Pair) -> bool {
    let withdrawn = p.rps.method == Some(Method::Tenths)
        && matches!(p.rps.verdict, ChangeVerdict::Faster | ChangeVerdict::Slower);
    if withdrawn {
        p.rps.verdict = ChangeVerdict::TooFew;
    }
    withdrawn
}

impl<'a> Comparison<'a> {
    /// Pairs the steps of `a` and `b`, tests every pair and checks the gates.
    pub fn of(a: &'a StoredRun, b: &'a StoredRun, gates: Gates) -> Comparison<'a> {
        let (aa, ab) = (Analysis::of(a), Analysis::of(b));
        let (ia, ib) = (cell_index(&aa), cell_index(&ab));
        let mut pairs = Vec::new();
        let mut only_in_a = Vec::new();
        let mut cell_warnings = Vec::new();
        for (w, l, ca) in aa.cells() {
            let name = aa.name(ca.contender);
            match find(&ib, name, w, l) {
                Some(cb) => {
                    if let (Some(wa), Some(wb)) = (ca.wire, cb.wire) {
                        if wa != wb {
                            cell_warnings.push(CompareWarning::WireChanged {
                                at: cell_at(name, w, l),
                                a: wa,
                                b: wb,
                            });
                        }
                    }
                    if cb.failures.total() > ca.failures.total() {
                        cell_warnings.push(CompareWarning::MoreFailures {
                            at: cell_at(name, w, l),
                            b: cb.failures,
                            a_total: ca.failures.total(),
                        });
                    }
                    for (run, cell) in [(a.run.id, ca), (b.run.id, cb)] {
                        for warning in unseen(cell) {
                            cell_warnings.push(CompareWarning::Load {
                                at: cell_at(name, w, l),
                                run,
                                warning,
                            });
                        }
                    }
                    let (a_secs, b_secs) = (step_secs(&ca.steps), step_secs(&cb.steps));
                    let mut p = pair(name, w, l, (ca, cb), aa.unit(w));
                    if unlike(a_secs, b_secs) {
                        let withdrawn = withdraw_tenths(&mut p);
                        cell_warnings.push(CompareWarning::UnlikeSteps {
                            pair: pairs.len(),
                            a_secs,
                            b_secs,
                            withdrawn,
                        });
                    }
                    pairs.push(p);
                }
                None => only_in_a.push(unpaired(name, w, l, b)),
            }
        }
        let only_in_b: Vec<Unpaired> = ab
            .cells()
            .filter(|(w, l, cb)| find(&ia, ab.name(cb.contender), w, *l).is_none())
            .map(|(w, l, cb)| unpaired(ab.name(cb.contender), w, l, a))
            .collect();
        let rankings = marked_unlike(stability(&aa, &ab), &pairs, &cell_warnings);
        let mut c = Comparison {
            a,
            b,
            pairs,
            only_in_a,
            only_in_b,
            warnings: run_warnings(a, b)
                .into_iter()
                .chain(search_rules(&aa, &ab))
                .chain(cell_warnings)
                .collect(),
            gates,
            violations: Vec::new(),
            reps: (most_reps(&aa), most_reps(&ab)),
            stability: rankings,
            capacities: capacity_changes(&aa, &ab),
        };
        c.violations = c.check(&ab);
        c.warnings.extend(c.untested_drops());
        c
    }

    /// The pairs that dropped by more than `--fail-if-slower` without evidence to test it.
    fn untested_drops(&self) -> Vec<CompareWarning> {
        let Some(limit) = self.gates.fail_if_slower_percent else {
            return Vec::new();
        };
        self.pairs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.rps.verdict == ChangeVerdict::TooFew)
            .filter(|(_, p)| p.rps.percent.is_some_and(|change| -change > limit))
            .map(|(pair, _)| CompareWarning::Untested { pair })
            .collect()
    }

    /// True when a gate failed.
    pub fn failed(&self) -> bool {
        !self.violations.is_empty()
    }

    fn check(&self, ab: &Analysis) -> Vec<Violation> {
        let mut out = Vec::new();
        if let Some(limit) = self.gates.fail_if_slower_percent {
            for (i, p) in self.pairs.iter().enumerate() {
                let dropped = p.rps.percent.is_some_and(|change| -change > limit);
                if dropped && p.rps.verdict == ChangeVerdict::Slower {
                    out.push(Violation::Slower { pair: i });
                }
            }
            for (i, u) in self.only_in_a.iter().enumerate() {
                if u.failed_in_other.is_some() {
                    out.push(Violation::NotMeasured { unpaired: i });
                }
            }
        }
        if let Some(limit) = self.gates.fail_if_p99_above_ms {
            for (w, l, c) in ab.cells().filter(|(_, _, c)| c.p99 > limit) {
                out.push(Violation::P99Above {
                    at: cell_at(ab.name(c.contender), w, l),
                    p99: c.p99,
                    reps: c.reps(),
                    limit,
                });
            }
        }
        out
    }
}

/// The workloads searched in both runs whose steps ended by unlike rules
/// ([`CompareWarning::SearchRules`]), in A's order.
fn search_rules(a: &Analysis, b: &Analysis) -> Vec<CompareWarning> {
    a.capacities
        .iter()
        .filter_map(|wa| {
            let wb = b.capacities.iter().find(|w| w.workload == wa.workload)?;
            let (ra, rb) = (wa.find_max.step_end, wb.find_max.step_end);
            (ra != rb).then(|| CompareWarning::SearchRules {
                workload: wa.workload.to_string(),
                a: ra,
                b: rb,
            })
        })
        .collect()
}

/// The warnings about the runs themselves: unfinished runs (A first), then different
/// machines.
fn run_warnings(a: &StoredRun, b: &StoredRun) -> Vec<CompareWarning> {
    let mut out = Vec::new();
    for (run, side) in [(a, 'A'), (b, 'B')] {
        if run.run.status != RunStatus::Complete {
            out.push(CompareWarning::Unfinished {
                run: run.run.id,
                side,
                status: run.run.status,
            });
        }
    }
    let (ma, mb) = (&a.run.machine, &b.run.machine);
    if (&ma.cpu_model, ma.cores, &ma.kernel, ma.memory_bytes)
        != (&mb.cpu_model, mb.cores, &mb.kernel, mb.memory_bytes)
    {
        out.push(CompareWarning::DifferentMachines);
    }
    out
}

/// An analysis's cells by contender name, workload and level ([`cell_index`]).
type CellIndex<'x> = HashMap<(&'x str, &'x str, LevelKey), &'x Cell<'x>>;

/// The cells of `an` by contender name, workload and level, the first of each in the
/// order of its cells (a level equal to no other, a rate that is not a number, left out):
/// runs of 20,000 levels are paired without a search over one run's cells for each of
/// the other's.
fn cell_index<'x>(an: &'x Analysis) -> CellIndex<'x> {
    let mut index = CellIndex::new();
    for (w, l, c) in an.cells() {
        if let Some(key) = level_key(l) {
            index.entry((an.name(c.contender), w, key)).or_insert(c);
        }
    }
    index
}

/// The cell of contender `name` × workload `w` × level `l`, if measured.
fn find<'x>(index: &CellIndex<'x>, name: &str, w: &str, l: LoadLevel) -> Option<&'x Cell<'x>> {
    index.get(&(name, w, level_key(l)?)).copied()
}

fn cell_at(name: &str, w: &str, l: LoadLevel) -> CellAt {
    CellAt {
        contender: name.to_string(),
        workload: w.to_string(),
        level: l,
    }
}

fn pair(name: &str, w: &str, l: LoadLevel, (a, b): (&Cell, &Cell), unit: Unit) -> Pair {
    Pair {
        workload: w.to_string(),
        contender: name.to_string(),
        level: l,
        reps_a: a.reps(),
        reps_b: b.reps(),
        unit,
        rps: Change::of_rps(a, b),
        p99: Change::of(&a.p99_values, &b.p99_values, false),
    }
}

/// A cell measured in one run only; `other` is the run it is missing from.
fn unpaired(name: &str, w: &str, l: LoadLevel, other: &StoredRun) -> Unpaired {
    Unpaired {
        workload: w.to_string(),
        contender: name.to_string(),
        level: l,
        failed_in_other: failed_in(other, name),
    }
}

/// What became of contender `name` in `run`, when it is there and failed.
fn failed_in(run: &StoredRun, name: &str) -> Option<FailedIn> {
    let c = run.contenders.iter().find(|c| c.name == name)?;
    if matches!(
        c.status,
        ContenderStatus::Measured | ContenderStatus::Skipped
    ) {
        return None;
    }
    let first = c.detail.lines().next().unwrap_or("").trim();
    let first = first
        .trim_end_matches(':')
        .trim_end_matches("; last lines of its stderr");
    Some(FailedIn {
        status: c.status,
        first_line: first.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::tests::run;

    #[test]
    fn two_repetitions_conclude_from_their_seconds_and_only_a_tested_drop_fails_the_gate() {
        // The quickstart's shape: 2 repetitions of 6 s. B's `b` is 20% slower, steadily.
        let a = run(&[("a", 1000, 10), ("b", 2000, 10)], 6);
        let b = run(&[("a", 1000, 10), ("b", 1600, 10)], 6);
        let gates = Gates {
            fail_if_slower_percent: Some(5.0),
            fail_if_p99_above_ms: None,
        };
        let c = Comparison::of(&a, &b, gates);
        assert_eq!(c.pairs[0].rps.verdict, ChangeVerdict::NoChange);
        let slower = &c.pairs[1].rps;
        assert_eq!(slower.verdict, ChangeVerdict::Slower);
        assert_eq!(slower.method, Some(Method::Seconds));
        let (t, lo, hi) = slower.times().unwrap();
        assert!((t - 1.25).abs() < 0.01 && lo < t && t < hi, "{t} {lo} {hi}");
        assert_eq!(c.violations, vec![Violation::Slower { pair: 1 }]);

        // Steps of 2 s: too few seconds to test. The same drop is reported, not failed.
        let a = run(&[("a", 1000, 10), ("b", 2000, 10)], 2);
        let b = run(&[("a", 1000, 10), ("b", 1600, 10)], 2);
        let c = Comparison::of(&a, &b, gates);
        assert_eq!(c.pairs[1].rps.verdict, ChangeVerdict::TooFew);
        assert!(c.violations.is_empty());
        assert_eq!(c.warnings, vec![CompareWarning::Untested { pair: 1 }]);
    }

    /// `compare` of a `--quick` run (one step of 1 s) with a full one said "1.21 times
    /// slower (1.18–1.24, p=5.0e-4)" from tenths of a second, with no word that the steps
    /// differ. Like steps keep that verdict; unlike ones say so and withdraw it.
    #[test]
    fn a_quick_run_against_a_full_one_is_said_unlike_and_its_verdict_from_tenths_withdrawn() {
        use crate::evidence::tests::sampled;
        use shootout_model::stored::StoredStep;
        let with = |s: StoredStep| {
            let mut r = run(&[("a", 1000, 0)], 1);
            r.steps = vec![s];
            r
        };
        let gates = Gates {
            fail_if_slower_percent: Some(5.0),
            fail_if_p99_above_ms: None,
        };
        // Two quick runs: like steps, a verdict from their tenths.
        let (a, b) = (with(sampled(0, 1000, 1, 1)), with(sampled(0, 800, 1, 1)));
        let c = Comparison::of(&a, &b, gates);
        assert_eq!(c.pairs[0].rps.verdict, ChangeVerdict::Slower);
        assert_eq!(c.pairs[0].rps.method, Some(Method::Tenths));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // A quick run against one of 10 s: unlike, said, and no verdict to fail a gate on.
        let (a, b) = (with(sampled(0, 1000, 1, 1)), with(sampled(0, 800, 10, 1)));
        let c = Comparison::of(&a, &b, gates);
        assert_eq!(c.pairs[0].rps.verdict, ChangeVerdict::TooFew);
        assert!(
            c.warnings.contains(&CompareWarning::UnlikeSteps {
                pair: 0,
                a_secs: 1.0,
                b_secs: 10.0,
                withdrawn: true
            }),
            "{:?}",
            c.warnings
        );
        assert!(c.violations.is_empty(), "{:?}", c.violations);
    }

    /// The rankings of a `--quick` run and a full one are each their run's own; where the
    /// steps were unlike, the ranking entry says so (with the pair's step lengths), so a
    /// swap is not read as an order that failed its re-run. Like steps are not marked.
    #[test]
    fn a_ranking_of_unlike_steps_is_marked_with_their_lengths() {
        use crate::evidence::tests::sampled;
        let two = |secs: usize, fast: u64, slow: u64| {
            let mut r = run(&[("x", 1000, 0), ("y", 1000, 0)], 1);
            let mut y = sampled(1, slow, secs, 1);
            y.id = shootout_model::stored::StepId(2);
            r.steps = vec![sampled(0, fast, secs, 1), y];
            r
        };
        // x ahead in a quick run, y ahead in a run of 10 s steps: each significant.
        let (a, b) = (two(1, 3000, 1000), two(10, 1000, 3000));
        let c = Comparison::of(&a, &b, Gates::default());
        assert_eq!(c.stability.len(), 1);
        let s = &c.stability[0];
        assert_eq!(s.swaps.len(), 1);
        assert!(s.swaps[0].contradicts(), "{s:?}");
        assert_eq!(s.unlike_steps, Some((1.0, 10.0)));
        // Two quick runs: like steps, the swap stands unqualified.
        let (a, b) = (two(1, 3000, 1000), two(1, 1000, 3000));
        let c = Comparison::of(&a, &b, Gates::default());
        assert!(c.stability[0].swaps[0].contradicts());
        assert_eq!(c.stability[0].unlike_steps, None);
    }

    /// A contender spoken to over HTTP/1.1 in A and over HTTP/2 in B: its change may be
    /// the client's, and the comparison says so for that pair only. Steps that did not
    /// record how they were spoken to say nothing.
    #[test]
    fn a_pair_spoken_to_differently_in_a_and_b_is_a_warning() {
        let a = run(&[("a", 1000, 10), ("b", 2000, 10)], 6);
        let mut b = run(&[("a", 1000, 10), ("b", 2000, 10)], 6);
        let c = Comparison::of(&a, &b, Gates::default());
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let h2 = Wire {
            protocol: shootout_model::Protocol::Http2,
            streams: 10,
            pipeline: 1,
        };
        let mut a = a;
        for s in &mut a.steps {
            s.wire = Some(Wire::default());
        }
        let b_contender = b.contenders[1].id;
        for s in &mut b.steps {
            s.wire = Some(if s.contender == b_contender {
                h2
            } else {
                Wire::default()
            });
        }
        let c = Comparison::of(&a, &b, Gates::default());
        let changed: Vec<_> = c
            .warnings
            .iter()
            .filter_map(|w| match w {
                CompareWarning::WireChanged { at, a, b } => Some((at.contender.as_str(), *a, *b)),
                _ => None,
            })
            .collect();
        assert_eq!(changed, vec![("b", Wire::default(), h2)]);
    }

    #[test]
    fn verdicts_follow_the_test_and_the_direction() {
        let a = [1000.0, 1010.0, 990.0, 1005.0];
        let slower = [800.0, 810.0, 790.0, 805.0];
        let c = Change::of(&a, &slower, true);
        assert_eq!(c.verdict, ChangeVerdict::Slower);
        assert!((c.percent.unwrap() + 20.0).abs() < 0.5);
        // For latency, larger in B is slower.
        assert_eq!(
            Change::of(&slower, &a, false).verdict,
            ChangeVerdict::Slower
        );
        assert_eq!(
            Change::of(&a, &slower, false).verdict,
            ChangeVerdict::Faster
        );
        assert_eq!(Change::of(&a, &a, true).verdict, ChangeVerdict::NoChange);
        assert_eq!(
            Change::of(&a[..1], &slower[..1], true).verdict,
            ChangeVerdict::TooFew
        );
        assert_eq!(
            Change::of(&a[..3], &slower[..3], true).verdict,
            ChangeVerdict::TooFew
        );
        let mixed = [1001.0, 995.0, 1012.0, 998.0];
        assert_eq!(
            Change::of(&a, &mixed, true).verdict,
            ChangeVerdict::NoChange
        );
    }
}
