//! The capacity search of a workload with `find_max`, in the measured phase of the
//! [`Runner`]: for each repetition, every contender's search advances one step at a time,
//! contenders interleaved (A B A B, as the sweep interleaves them) until each search is
//! over. Each contender's search is the analysis' [`Searcher`] (the one `shootout load
//! --find-max` drives too): it names the next rate and step length and judges each step;
//! each step settles at its rate for [`capacity::SETTLE`] (not stored), then measures
//! until its SLOs are decided (met only after `defaults.duration`, broken as soon as no
//! answer to come could mend it), or on the ramp it plainly passes, after at least
//! [`capacity::LEAST`] — the watch `load --find-max`'s steps end by
//! ([`crate::until::search_watch`]) — and at most the step's deadline (the fixed rule's
//! length, at least `defaults.duration`); it is stored with its verdict and how it ended,
//! so that a report replays the search from the store. After
//! each step comes the plan's cooldown, or after a step that did not meet its SLOs the
//! wait the searcher asks for its backlog ([`Searcher::rest`]), and then the wait until
//! the contenders' processes are idle ([`Runner::rest`]), so the next step (of any
//! contender: they may share CPUs) does not inherit it.
//! A contender that dies leaves its search where it was; Ctrl-C ends every search.

use super::executor::Executor;
use super::measure::{At, Next};
use super::runner::{Runner, Up};
use shootout_analysis::capacity::{self, Searcher};
use shootout_model::find_max::FindMax;
use shootout_model::plan::{Level, Span};
use shootout_model::spec::Journeys;
use shootout_model::LoadLevel;
use std::collections::HashMap;

/// A contender's search of a workload: of its journeys when it has them (rates counting
/// journeys, SLOs requests: [`Searcher::journeys`]), each step at most `most` long when
/// given (`run --quick`), and decided met only after `floor`, the plan's `duration`
/// ([`Searcher::horizon`]): the length over which the plan asks a rate to be sustained.
fn searcher(
    find_max: &FindMax,
    floor: std::time::Duration,
    most: Option<std::time::Duration>,
    journeys: Option<&Journeys>,
) -> Searcher {
    let mut s = Searcher::new(find_max, floor).horizon(floor);
    if let Some(j) = journeys {
        s = s.journeys(&j.file);
    }
    match most {
        Some(most) => s.most(most),
        None => s,
    }
}

impl<E: Executor> Runner<'_, E> {
    /// Searches each contender's capacity on workload `wi`, `repeat` times; returns true
    /// when Ctrl-C ended it.
    pub(super) fn search(
        &mut self,
        wi: usize,
        find_max: &FindMax,
        up: &mut Vec<Up<E::Process>>,
    ) -> anyhow::Result<bool> {
        let plan = self.plan;
        let floor = match plan.defaults.measure {
            Span::Time(d) => d,
            // Refused by the plan with `find_max`; kept so a search never runs a
            // zero-length step.
            Span::Requests(_) => shootout_model::find_max::DEFAULT_STEP,
        };
        let journeys = plan.workloads[wi].journeys.as_ref();
        for rep in 1..=plan.defaults.repeat {
            let mut searches: HashMap<usize, Searcher> = HashMap::new();
            loop {
                let mut stepped = false;
                let mut i = 0;
                while i < up.len() {
                    let index = up[i].index;
                    let searcher = searches.entry(index).or_insert_with(|| {
                        searcher(find_max, floor, plan.defaults.search_step_most, journeys)
                    });
                    let Some(ask) = searcher.next() else {
                        i += 1;
                        continue;
                    };
                    stepped = true;
                    if self.exec.stopped() {
                        return Ok(true);
                    }
                    let level = Level {
                        level: LoadLevel::Rate {
                            rps: ask.rate,
                            connections: find_max.connections,
                        },
                        measure: Some(Span::Time(ask.length)),
                    };
                    if self.settle(wi, &up[i], level.level)? {
                        return Ok(true);
                    }
                    let at = At {
                        level: &level,
                        rep,
                        progress: format!("capacity search step {}", searcher.tries() + 1),
                        search: Some((&*searcher, ask)),
                    };
                    let (next, judged) = self.step(wi, &at, up, i)?;
                    let was_judged = judged.is_some();
                    match judged {
                        Some((result, verdict, ended)) => {
                            searcher.took(ask.rate, &result, verdict, ended);
                        }
                        None => searcher.missed(),
                    }
                    match next {
                        Next::Go if was_judged => {
                            // The rest waits until the contenders' processes are idle
                            // too; a contender given by URL is not watched.
                            let watched = up.iter().all(|u| u.process.is_some());
                            let pause = plan.defaults.cooldown.max(searcher.rest(watched));
                            self.rest(pause, up);
                            i += 1;
                        }
                        Next::Go => i += 1,
                        Next::Left => {}
                        Next::Stop => return Ok(true),
                    }
                }
                if !stepped {
                    break;
                }
            }
        }
        Ok(self.exec.stopped())
    }

    /// Runs contender `u` at `level` for [`capacity::SETTLE`] before a search step, not
    /// stored; returns true when Ctrl-C came.
    fn settle(&mut self, wi: usize, u: &Up<E::Process>, level: LoadLevel) -> anyhow::Result<bool> {
        let spec = self.spec_of(u, wi, level, Span::Time(capacity::SETTLE))?;
        // A contender that stopped answering is found by the step that follows.
        let _ = self.exec.warm_up(&spec);
        Ok(self.exec.stopped())
    }
}
