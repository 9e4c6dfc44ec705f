//! The capacities a run's searches found: for each workload searched (`find_max`), each
//! contender's most requests per second within the SLOs, over its repetitions, the order
//! of the contenders with how sure each place is, and each against the baseline.
//!
//! Every figure is replayed from the stored steps and their verdicts through the search's
//! own [`Searcher`], so `shootout report` after the fact says exactly what the run found.
//! The SLOs stored with the run are read back with the grammar that checked them
//! ([`parse_slos`]); one this shootout cannot read is an error naming the run and the step
//! ([`UnreadableSlo`]), never a search replayed without it.
//!
//! How sure: a search brackets a capacity between the highest rate met and the lowest
//! that broke an SLO, each confirmed by the evidence of two steps or more
//! ([`crate::boundary`]). Contender A holds more than B
//! (`>`) when, in every repetition of both, A met a rate at or above the lowest that B
//! broke: A's least `max_rps` is at or above B's greatest `first_failing_rps`. `≫` when
//! that holds with twice the margin ([`crate::evidence::MUCH`]). With four repetitions or
//! more on both sides, the Mann–Whitney test of their capacities can also say `>` (the
//! rankings' test). Otherwise the two brackets overlap: `≈`, a tie within the search's
//! resolution and the repetitions' spread. A contender with no finished search is not
//! ranked (`?`).
//!
//! Seams: reads the stored run and its resolved plan ([`ResolvedFindMax`]); the renderers
//! lay out [`WorkloadCapacity`].

use crate::capacity::{Capacity, Decision, Ended, Limit, Measured, Searcher};
use crate::cells::{contender_of, median};
use crate::evidence::{Relation, ALPHA, MUCH};
use crate::mann_whitney;
use shootout_model::find_max::{parse_slos, FindMax};
use shootout_model::resolved::{ResolvedFindMax, ResolvedPlan};
use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::LoadLevel;
use std::time::Duration;

/// A stored search whose SLOs this shootout cannot read (stored by a shootout of another
/// grammar, or edited since): its steps' verdicts name SLOs by index and their evidence is
/// judged against them, so a report without them would change its answer silently.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("run {run}, step {step} (workload '{workload}'): the capacity search's SLOs stored with the run cannot be read ({why}): report the run with the shootout that stored it, or run the plan again")]
pub struct UnreadableSlo {
    /// The run the step belongs to.
    pub run: i64,
    /// The first stored step of the search.
    pub step: i64,
    /// The workload searched.
    pub workload: String,
    /// What the grammar said.
    pub why: String,
}

/// Every search of `run` whose SLOs cannot be read, the first of them as the error; the
/// commands that read a stored run refuse it with this before any report.
pub fn check(run: &StoredRun) -> Result<(), UnreadableSlo> {
    let Some(plan) = ResolvedPlan::parse(&run.run.plan_resolved) else {
        return Ok(());
    };
    for w in &plan.workloads {
        if let Some(f) = &w.find_max {
            search_of(run, &w.name, f)?;
        }
    }
    Ok(())
}

/// The search of workload `name` as stored (`f`), its SLOs read back; the error names the
/// run and the first of the search's stored steps.
fn search_of(run: &StoredRun, name: &str, f: &ResolvedFindMax) -> Result<FindMax, UnreadableSlo> {
    let slos = parse_slos(&f.slo).map_err(|why| {
        let first = run
            .steps
            .iter()
            .find(|s| s.workload == name && s.search.is_some());
        UnreadableSlo {
            run: first.map_or(run.run.id.0, |s| s.run.0),
            step: first.map_or(0, |s| s.id.0),
            workload: name.to_string(),
            why,
        }
    })?;
    Ok(FindMax {
        slo: f.slo.clone(),
        slos,
        from: f.from,
        to: f.to,
        connections: 0,
        end_rule: f.step_end,
    })
}

/// One search: a contender × workload × repetition.
#[derive(Debug, Clone)]
pub struct SearchRun<'a> {
    /// Which repetition (1-based).
    pub repetition: u32,
    /// Its stored steps, in the order run (unjudged ones included).
    pub steps: Vec<&'a StoredStep>,
    /// Its judged steps as the tables show them, in the order run.
    pub measured: Vec<Measured>,
    /// What it found.
    pub capacity: Capacity,
    /// How its boundary rates were decided (the highest met, the lowest broken), those
    /// that were.
    pub boundary: Vec<Decision>,
    /// The search ran to its end (else it was stopped: Ctrl-C, or its contender died,
    /// and `capacity` is what it had found).
    pub complete: bool,
}

/// One contender's capacity on a workload, over its searches.
#[derive(Debug, Clone)]
pub struct ContenderCapacity<'a> {
    /// Index of the contender in the run.
    pub contender: usize,
    /// Its searches, by repetition.
    pub searches: Vec<SearchRun<'a>>,
    /// The median over its finished searches of the highest rate met (a search that met
    /// none counts 0); `None` when no search finished.
    pub max_rps: Option<f64>,
    /// The least highest-rate-met of its finished searches (0 when one met none).
    pub low: Option<f64>,
    /// The greatest lowest-rate-broken of its finished searches; `None` when one met
    /// every rate up to the search's end (the capacity is above it) or none finished.
    pub high: Option<f64>,
    /// What limited its median search.
    pub limited_by: Option<Limit>,
}

impl ContenderCapacity<'_> {
    /// The finished searches.
    pub fn finished(&self) -> impl Iterator<Item = &SearchRun<'_>> {
        self.searches.iter().filter(|s| s.complete)
    }
}

/// One place in the order: how contender `order[i]` stands to `order[i + 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    /// How it stands to the next one down.
    pub relation: Relation,
    /// Its capacity over the next one's, as the medians say.
    pub ratio: f64,
}

/// The capacities of one workload searched.
#[derive(Debug, Clone)]
pub struct WorkloadCapacity<'a> {
    /// The workload's name.
    pub workload: &'a str,
    /// The search: the SLOs as written, and its bounds.
    pub find_max: ResolvedFindMax,
    /// Each contender with searches, in plan order.
    pub contenders: Vec<ContenderCapacity<'a>>,
    /// Indices into `contenders`, most capacity first; the unranked (no finished search)
    /// last.
    pub order: Vec<usize>,
    /// How each of `order` stands to the next (one fewer than `order`).
    pub places: Vec<Place>,
}

impl WorkloadCapacity<'_> {
    /// The entry of contender `index` (of the run), if it was searched.
    pub fn of(&self, index: usize) -> Option<&ContenderCapacity<'_>> {
        self.contenders.iter().find(|c| c.contender == index)
    }

    /// Contender `c`'s capacity against `base`'s: `(ratio, low, high)`, the ratio of
    /// medians and the least and greatest it can be given both brackets (`high` is
    /// `None` when `c`'s capacity has no upper bound). `None` when either has no finished
    /// search or the base's capacity is 0.
    pub fn against(
        c: &ContenderCapacity,
        base: &ContenderCapacity,
    ) -> Option<(f64, f64, Option<f64>)> {
        let (a, b) = (c.max_rps?, base.max_rps?);
        if b <= 0.0 {
            return None;
        }
        let low = match base.high {
            Some(h) if h > 0.0 => c.low? / h,
            _ => 0.0,
        };
        let base_low = base.low?;
        let high = match (c.high, base_low > 0.0) {
            (Some(h), true) => Some(h / base_low),
            _ => None,
        };
        Some((a / b, low, high))
    }
}

/// The workloads a run searched, in plan order, each with its contenders' capacities.
/// Empty for a run without searches (or whose stored plan cannot be read); an error when
/// a search's SLOs cannot be read ([`UnreadableSlo`]).
pub fn capacities<'a>(
    run: &'a StoredRun,
    plan: Option<&ResolvedPlan>,
) -> Result<Vec<WorkloadCapacity<'a>>, UnreadableSlo> {
    let Some(plan) = plan else {
        return Ok(Vec::new());
    };
    plan.workloads
        .iter()
        .filter_map(|w| {
            let f = w.find_max.as_ref()?;
            let name = run
                .steps
                .iter()
                .find(|s| s.workload == w.name && s.search.is_some())
                .map(|s| s.workload.as_str())?;
            Some(workload(run, name, f))
        })
        .collect()
}

/// The capacities of workload `name`, searched as `f` says.
fn workload<'a>(
    run: &'a StoredRun,
    name: &'a str,
    f: &ResolvedFindMax,
) -> Result<WorkloadCapacity<'a>, UnreadableSlo> {
    let search = search_of(run, name, f)?;
    let contenders: Vec<ContenderCapacity> = (0..run.contenders.len())
        .filter_map(|ci| contender(run, name, ci, &search))
        .collect();
    let (order, places) = rank(&contenders);
    Ok(WorkloadCapacity {
        workload: name,
        find_max: f.clone(),
        contenders,
        order,
        places,
    })
}

/// Contender `ci`'s searches of workload `name`; `None` when it has none.
fn contender<'a>(
    run: &'a StoredRun,
    name: &str,
    ci: usize,
    search: &FindMax,
) -> Option<ContenderCapacity<'a>> {
    let mine: Vec<&StoredStep> = run
        .steps
        .iter()
        .filter(|s| s.workload == name && s.search.is_some() && contender_of(run, s) == Some(ci))
        .collect();
    let mut reps: Vec<u32> = mine.iter().map(|s| s.repetition).collect();
    reps.sort_unstable();
    reps.dedup();
    if reps.is_empty() {
        return None;
    }
    let searches: Vec<SearchRun> = reps
        .into_iter()
        .map(|rep| {
            let steps: Vec<&StoredStep> = mine
                .iter()
                .copied()
                .filter(|s| s.repetition == rep)
                .collect();
            replay(rep, steps, search)
        })
        .collect();
    Some(summary(ci, searches))
}

/// One search replayed from its stored steps through the [`Searcher`], each with its
/// stored verdict (the step length plays no part in the answer).
fn replay<'a>(repetition: u32, mut steps: Vec<&'a StoredStep>, search: &FindMax) -> SearchRun<'a> {
    steps.sort_by_key(|s| s.id);
    let mut searcher = Searcher::new(search, Duration::ZERO);
    for s in &steps {
        let (Some(mark), LoadLevel::Rate { rps, .. }) = (s.search.as_ref(), s.level) else {
            continue;
        };
        let Some(verdict) = mark.verdict.clone() else {
            continue;
        };
        // A rung that plainly passed is no evidence, as in the run that took it.
        let ended = mark.ended.map(Ended::from_stored);
        searcher.took(rps, &s.unpacked(), verdict, ended);
    }
    let answer = searcher.answer();
    SearchRun {
        repetition,
        steps,
        measured: searcher.measured().to_vec(),
        capacity: answer.capacity,
        boundary: answer.boundary,
        complete: answer.complete,
    }
}

/// A contender's capacity over its searches.
fn summary(contender: usize, searches: Vec<SearchRun>) -> ContenderCapacity {
    let done: Vec<&Capacity> = searches
        .iter()
        .filter(|s| s.complete)
        .map(|s| &s.capacity)
        .collect();
    let met: Vec<f64> = done.iter().map(|c| c.max_rps.unwrap_or(0.0)).collect();
    let (max_rps, low, high, limited_by) = if done.is_empty() {
        (None, None, None, None)
    } else {
        let m = median(&met);
        let high = done
            .iter()
            .map(|c| c.first_failing_rps)
            .try_fold(0.0f64, |acc, h| h.map(|h| acc.max(h)));
        // The search whose answer is nearest the median says what limited it.
        let nearest = done
            .iter()
            .min_by(|a, b| {
                let d = |c: &&&Capacity| (c.max_rps.unwrap_or(0.0) - m).abs();
                d(a).total_cmp(&d(b))
            })
            .map(|c| c.limited_by.clone());
        (Some(m), met.iter().copied().reduce(f64::min), high, nearest)
    };
    ContenderCapacity {
        contender,
        searches,
        max_rps,
        low,
        high,
        limited_by,
    }
}

/// The contenders most capacity first (the unranked last), and how each stands to the
/// next.
fn rank(contenders: &[ContenderCapacity]) -> (Vec<usize>, Vec<Place>) {
    let mut order: Vec<usize> = (0..contenders.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |i: usize| contenders[i].max_rps.unwrap_or(f64::NEG_INFINITY);
        key(b).total_cmp(&key(a)).then(a.cmp(&b))
    });
    let places = order
        .windows(2)
        .map(|w| place(&contenders[w[0]], &contenders[w[1]]))
        .collect();
    (order, places)
}

/// How `a` (ranked above) stands to `b`.
pub(crate) fn place(a: &ContenderCapacity, b: &ContenderCapacity) -> Place {
    let (Some(ma), Some(mb)) = (a.max_rps, b.max_rps) else {
        return Place {
            relation: Relation::Untested,
            ratio: f64::NAN,
        };
    };
    let ratio = if mb > 0.0 { ma / mb } else { f64::INFINITY };
    let separated = |margin: f64| match (a.low, b.high) {
        (Some(lo), Some(hi)) => lo > 0.0 && lo >= hi * margin,
        _ => false,
    };
    let values = |c: &ContenderCapacity| -> Vec<f64> {
        c.finished()
            .map(|s| s.capacity.max_rps.unwrap_or(0.0))
            .collect()
    };
    let (va, vb) = (values(a), values(b));
    let tested = mann_whitney::can_be_significant(va.len(), vb.len(), ALPHA)
        && mann_whitney::test(&va, &vb).is_some_and(|t| t.p < ALPHA);
    let relation = if separated(MUCH) {
        Relation::MuchFaster
    } else if separated(1.0) || tested {
        Relation::Faster
    } else {
        Relation::Tie
    };
    Place { relation, ratio }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::{self, Search, Step, Verdict};

    /// A finished search that met `lo` and broke `hi` (or met up to the end).
    fn found(rep: u32, lo: f64, hi: Option<f64>) -> SearchRun<'static> {
        SearchRun {
            repetition: rep,
            steps: Vec::new(),
            measured: Vec::new(),
            capacity: Capacity {
                max_rps: Some(lo),
                first_failing_rps: hi,
                limited_by: hi.map_or(Limit::Ceiling, |_| Limit::Slo(0)),
            },
            boundary: Vec::new(),
            complete: true,
        }
    }

    fn of(ci: usize, searches: &[(f64, Option<f64>)]) -> ContenderCapacity<'static> {
        let runs = searches
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| found(i as u32 + 1, *lo, *hi))
            .collect();
        summary(ci, runs)
    }

    #[test]
    fn a_capacity_is_the_median_search_with_the_bracket_of_all() {
        let c = of(
            0,
            &[
                (1000.0, Some(1050.0)),
                (1200.0, Some(1260.0)),
                (1100.0, Some(1150.0)),
            ],
        );
        assert_eq!(c.max_rps, Some(1100.0));
        assert_eq!((c.low, c.high), (Some(1000.0), Some(1260.0)));
        assert_eq!(c.limited_by, Some(Limit::Slo(0)));
        // One search that met every rate: no upper bound.
        let open = of(1, &[(1000.0, Some(1050.0)), (5000.0, None)]);
        assert_eq!(open.high, None);
    }

    #[test]
    fn separated_brackets_rank_with_certainty_and_overlapping_ones_tie() {
        let big = of(0, &[(4000.0, Some(4200.0)), (4100.0, Some(4300.0))]);
        let half = of(1, &[(1900.0, Some(2000.0)), (1950.0, Some(2040.0))]);
        let near = of(2, &[(1980.0, Some(2080.0)), (2000.0, Some(2100.0))]);
        let (order, places) = rank(&[half.clone(), big.clone(), near.clone()]);
        // big, near, half
        assert_eq!(order, [1, 2, 0]);
        assert_eq!(
            places[0].relation,
            Relation::Faster,
            "4000 ≥ 2100 but not twice"
        );
        assert_eq!(
            places[1].relation,
            Relation::Tie,
            "1980 < 2040: the brackets overlap"
        );
        let much = of(3, &[(9000.0, Some(9400.0))]);
        assert_eq!(place(&much, &big).relation, Relation::MuchFaster);
        // A contender with no finished search is last and untested.
        let mut stopped = of(4, &[(500.0, None)]);
        stopped.searches[0].complete = false;
        let stopped = summary(4, stopped.searches);
        let (order, places) = rank(&[stopped, big]);
        assert_eq!(order, [1, 0]);
        assert_eq!(places[0].relation, Relation::Untested);
    }

    #[test]
    fn against_the_baseline_gives_the_ratio_and_what_the_brackets_allow() {
        let a = of(0, &[(3000.0, Some(3150.0))]);
        let b = of(1, &[(1000.0, Some(1050.0))]);
        let (r, lo, hi) = WorkloadCapacity::against(&a, &b).unwrap();
        assert_eq!(r, 3.0);
        assert!((lo - 3000.0 / 1050.0).abs() < 1e-9);
        assert_eq!(hi, Some(3.15));
        let zero = of(2, &[(0.0, Some(100.0))]);
        assert!(WorkloadCapacity::against(&a, &zero).is_none());
    }

    /// Two runs' capacities: B more when every search of B met a rate A broke, a tie when
    /// they overlap.
    #[test]
    fn place_decides_a_change_between_runs_as_within_one() {
        let before = of(0, &[(1000.0, Some(1050.0)), (1020.0, Some(1070.0))]);
        let after = of(0, &[(1500.0, Some(1570.0)), (1480.0, Some(1550.0))]);
        let same = of(0, &[(1040.0, Some(1090.0)), (990.0, Some(1040.0))]);
        assert_eq!(place(&after, &before).relation, Relation::Faster);
        assert_eq!(place(&before, &after).relation, Relation::Tie);
        assert_eq!(place(&same, &before).relation, Relation::Tie);
        assert_eq!(place(&before, &same).relation, Relation::Tie);
    }

    /// A stored run's searches are replayed from their steps' verdicts: a finished search
    /// gives its answer; one cut short is what it had and is not ranked; sweep steps and
    /// unjudged steps take no part.
    #[test]
    fn searches_replay_from_the_stored_verdicts() {
        use crate::evidence::tests::run;
        use shootout_model::find_max::SearchStep;
        use shootout_model::stored::StepId;
        let mut r = run(&[("fast", 10, 0), ("cut", 10, 0)], 2);
        let template = r.steps[0].clone();
        r.steps.clear();
        // The search the pure function asks for, against a server holding 1,000 req/s.
        let search = Search::new(100.0, 1e6);
        let mut judged: Vec<Step> = Vec::new();
        while let capacity::Next::Try(rate) = capacity::next(&search, &judged) {
            let verdict = if rate <= 1000.0 {
                Verdict::Met
            } else {
                Verdict::Broke(0)
            };
            judged.push(Step::voted(rate, verdict));
        }
        let stored = |contender: i64, id: usize, st: &Step, verdict: Option<Verdict>| {
            let mut s = template.clone();
            s.id = StepId(id as i64);
            s.contender = shootout_model::stored::ContenderId(contender);
            s.level = LoadLevel::Rate {
                rps: st.rate,
                connections: 8,
            };
            s.search = Some(SearchStep {
                verdict,
                ended: None,
            });
            s
        };
        for (i, st) in judged.iter().enumerate() {
            r.steps
                .push(stored(0, 100 + i, st, Some(st.verdict.clone())));
        }
        // The other contender's search: three steps, the last unjudged (Ctrl-C).
        for (i, st) in judged.iter().take(3).enumerate() {
            let verdict = (i < 2).then(|| st.verdict.clone());
            r.steps.push(stored(1, 200 + i, st, verdict));
        }
        let mut sweep = template.clone();
        sweep.id = StepId(999);
        r.steps.push(sweep);
        let plan = ResolvedPlan {
            workloads: vec![shootout_model::resolved::ResolvedWorkload {
                name: "w".into(),
                find_max: Some(ResolvedFindMax {
                    slo: vec!["p99<50ms".into()],
                    from: 100.0,
                    to: 1e6,
                    journeys: false,
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let all = capacities(&r, Some(&plan)).unwrap();
        assert_eq!(all.len(), 1);
        let w = &all[0];
        let fast = w.of(0).unwrap();
        assert!(fast.searches[0].complete);
        assert_eq!(fast.searches[0].measured.len(), judged.len());
        let (lo, hi) = (fast.max_rps.unwrap(), fast.high.unwrap());
        assert!(lo <= 1000.0 && 1000.0 < hi && hi / lo <= 1.05, "{lo} {hi}");
        let cut = w.of(1).unwrap();
        assert!(!cut.searches[0].complete);
        assert_eq!(cut.searches[0].steps.len(), 3);
        assert_eq!(cut.searches[0].measured.len(), 2);
        assert_eq!(cut.max_rps, None);
        assert_eq!(w.order, [0, 1]);
        assert_eq!(w.places[0].relation, Relation::Untested);
        // Without the plan's search, nothing is replayed.
        assert!(capacities(&r, None).unwrap().is_empty());
        // A stored SLO this shootout cannot read is an error naming the run and the
        // search's first step, not a search replayed without it.
        let mut unreadable = plan.clone();
        unreadable.workloads[0].find_max.as_mut().unwrap().slo = vec!["p99 ~ 50ms".into()];
        let e = capacities(&r, Some(&unreadable)).unwrap_err();
        assert_eq!((e.run, e.step, e.workload.as_str()), (r.run.id.0, 100, "w"));
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("run {}, step 100 (workload 'w'): the capacity search's SLOs stored with the run cannot be read (", r.run.id.0)),
            "{text}"
        );
        r.run.plan_resolved = unreadable.to_json();
        assert_eq!(check(&r), Err(e));
        r.run.plan_resolved = plan.to_json();
        assert_eq!(check(&r), Ok(()));
    }

    /// A search whose ramp rungs plainly passed replays from the store as it ran: each
    /// stored step says how it ended, so the rungs that passed stay out of the evidence
    /// (and are still `passed` in the tables), and the replay finds the run's capacity on
    /// the run's steps.
    #[test]
    fn a_search_with_passed_rungs_replays_as_it_ran() {
        use crate::capacity::Question;
        use crate::evidence::tests::run;
        use shootout_model::find_max::SearchStep;
        use shootout_model::stored::StepId;
        let mut r = run(&[("fast", 10, 0)], 2);
        let template = r.steps[0].clone();
        r.steps.clear();
        let slo = vec!["p99<50ms".to_string()];
        let f = FindMax {
            slos: parse_slos(&slo).unwrap(),
            slo,
            from: 100.0,
            to: 1e6,
            connections: 0,
            end_rule: Default::default(),
        };
        // The run: a server holding 1,000 req/s; a first look at a rung it holds passes.
        let mut searcher = Searcher::new(&f, Duration::ZERO);
        while let Some(ask) = searcher.next() {
            let verdict = if ask.rate <= 1000.0 {
                Verdict::Met
            } else {
                Verdict::Broke(0)
            };
            let ended = if ask.question == Question::Ramp && verdict.met() {
                Ended::Passed
            } else {
                Ended::Deadline
            };
            let mut s = template.clone();
            s.id = StepId(100 + r.steps.len() as i64);
            s.level = LoadLevel::Rate {
                rps: ask.rate,
                connections: 8,
            };
            s.search = Some(SearchStep {
                verdict: Some(verdict.clone()),
                ended: Some(ended.stored()),
            });
            searcher.took(ask.rate, &s.unpacked(), verdict, Some(ended));
            r.steps.push(s);
        }
        let plan = ResolvedPlan {
            workloads: vec![shootout_model::resolved::ResolvedWorkload {
                name: "w".into(),
                find_max: Some(ResolvedFindMax {
                    slo: f.slo.clone(),
                    from: f.from,
                    to: f.to,
                    journeys: false,
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let all = capacities(&r, Some(&plan)).unwrap();
        let replayed = &all[0].of(0).unwrap().searches[0];
        let ran = searcher.answer();
        assert!(ran.complete && replayed.complete);
        assert_eq!(replayed.capacity, ran.capacity);
        assert_eq!(replayed.boundary, ran.boundary);
        assert_eq!(replayed.measured, searcher.measured());
        let passed: Vec<f64> = replayed
            .measured
            .iter()
            .filter(|m| m.passed())
            .map(|m| m.rate)
            .collect();
        assert!(
            passed.len() >= 3 && passed.iter().all(|&r| r <= 1000.0),
            "{passed:?}"
        );
    }
}
