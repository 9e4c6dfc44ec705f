//! The capacity search of a workload with `find_max`, in the measured phase of the
//! [`Runner`]: for each repetition, every contender's search advances one step at a time,
//! contenders interleaved (A B A B, as the sweep interleaves them) until each search is
//! over. The next rate of a contender is the analysis' pure function of its steps so far
//! ([`capacity::next`]); each step settles at its rate for [`capacity::SETTLE`] (not
//! stored), then measures for as long as its SLOs need ([`capacity::step_length`], at least
//! the plan's step length) and is stored with its verdict, so that a report replays the
//! search from the store. After each step comes the plan's cooldown, or after a step that
//! did not meet its SLOs a wait for the backlog it left ([`capacity::cooldown_after`]), so
//! the next step (of any contender: they may share CPUs) does not inherit it.
//! A contender that dies leaves its search where it was; Ctrl-C ends every search.

use super::executor::Executor;
use super::measure::{At, Next};
use super::runner::{Runner, Up};
use shootout_analysis::capacity::{self, Search, Step};
use shootout_model::plan::{Level, Span};
use shootout_model::search::FindMax;
use shootout_model::LoadLevel;
use std::collections::HashMap;
use std::time::Duration;

/// A step's least length when the plan counts requests (the plan refuses that with
/// `find_max`; kept so a search never runs a zero-length step).
const FLOOR: Duration = Duration::from_secs(5);

/// The most steps one search makes: [`capacity::next`] ends well before (about 30 steps
/// from 100 req/s to a million); this bounds the loop should a step go unjudged.
const MAX_STEPS: usize = 100;

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
            Span::Requests(_) => FLOOR,
        };
        let search = Search::new(find_max.from, find_max.to);
        for rep in 1..=plan.defaults.repeat {
            let mut steps: HashMap<usize, Vec<Step>> = HashMap::new();
            let mut tries: HashMap<usize, usize> = HashMap::new();
            loop {
                let mut stepped = false;
                let mut i = 0;
                while i < up.len() {
                    let index = up[i].index;
                    let so_far = steps.entry(index).or_default();
                    let tried = tries.entry(index).or_default();
                    let capacity::Next::Try(rate) = capacity::next(&search, so_far) else {
                        i += 1;
                        continue;
                    };
                    if *tried >= MAX_STEPS {
                        i += 1;
                        continue;
                    }
                    *tried += 1;
                    let k = *tried;
                    stepped = true;
                    if self.exec.stopped() {
                        return Ok(true);
                    }
                    let length = capacity::step_length(rate, &find_max.slos, floor);
                    let level = Level {
                        level: LoadLevel::Rate {
                            rps: rate,
                            connections: find_max.connections,
                        },
                        measure: Some(Span::Time(length)),
                    };
                    if self.settle(wi, &up[i], level.level)? {
                        return Ok(true);
                    }
                    let at = At {
                        level: &level,
                        rep,
                        progress: format!("capacity search step {k}"),
                        search: Some(find_max),
                    };
                    let (next, judged) = self.step(wi, &at, up, i)?;
                    match (next, &judged) {
                        (Next::Go, Some(s)) => {
                            let backlog = capacity::cooldown_after(&s.verdict, length);
                            self.exec.cooldown(plan.defaults.cooldown.max(backlog));
                            i += 1;
                        }
                        (Next::Go, None) => i += 1,
                        (Next::Left, _) => {}
                        (Next::Stop, _) => return Ok(true),
                    }
                    if let Some(step) = judged {
                        steps.entry(index).or_default().push(step);
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
