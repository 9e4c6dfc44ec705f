//! `--until` and a plan's `until`: watches a running load's (or a `run` step's) live
//! counters ([`Control::detail`], ten times a second) and ends it ([`Control::finish`]) once every condition holds, after at least
//! [`LEAST`]. A percentile's interval is the order-statistic interval of the report
//! ([`certify::percentile_interval`]) on the answers so far, widened by the design effect
//! of the seconds seen (the same test of the seconds' homogeneity, over the last
//! [`WINDOW`] seconds); answers a second are the mean of the rates measured between
//! looks a second apart, with Student's t interval over them.

use shootout_analysis::capacity::{Ask, Ended, Searcher};
use shootout_analysis::certify;
use shootout_analysis::decided::SoFar;
use shootout_engine::{Control, Detail, Snapshot};
use shootout_model::until::{Condition, Figure, Reading, UntilOutcome, LEAST};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The seconds whose answers are kept for the design effect and the rate (the interval
/// itself counts every answer).
const WINDOW: usize = 60;

/// How often the counters are looked at.
const EVERY: Duration = Duration::from_millis(100);

/// The counters at one look.
struct Mark {
    at: Duration,
    ok: u64,
    latency: hdrhistogram::Histogram<u64>,
}

/// What the watch has seen: a mark about every second, the last [`WINDOW`] + 1 kept.
#[derive(Default)]
pub(crate) struct Watch {
    marks: VecDeque<Mark>,
}

impl Watch {
    /// Takes a mark when a second has passed since the last; true when it took one.
    pub(crate) fn mark(&mut self, at: Duration, ok: u64, d: &Detail) -> bool {
        if self
            .marks
            .back()
            .is_some_and(|m| at < m.at + Duration::from_secs(1))
        {
            return false;
        }
        self.marks.push_back(Mark {
            at,
            ok,
            latency: d.latency.clone(),
        });
        if self.marks.len() > WINDOW + 1 {
            self.marks.pop_front();
        }
        true
    }

    /// The seconds between marks: each one's p99 (µs, of the answers recorded between
    /// the two marks; 0 without one) and good answers a second.
    fn seconds(&self) -> (Vec<f64>, Vec<f64>) {
        self.marks
            .iter()
            .zip(self.marks.iter().skip(1))
            .map(|(a, b)| {
                let mut h = b.latency.clone();
                // Counts only grow: a mark's histogram holds the one before it.
                let p99 = match h.subtract(&a.latency) {
                    Ok(()) if !h.is_empty() => h.value_at_quantile(0.99) as f64,
                    _ => 0.0,
                };
                let rate = (b.ok - a.ok) as f64 / (b.at - a.at).as_secs_f64();
                (p99, rate)
            })
            .unzip()
    }

    /// Takes a mark when a second has passed since the last, and reads each condition.
    fn look(
        &mut self,
        at: Duration,
        ok: u64,
        d: &Detail,
        conditions: &[Condition],
    ) -> Vec<Option<Reading>> {
        self.mark(at, ok, d);
        conditions
            .iter()
            .map(|c| self.read(c, &d.latency))
            .collect()
    }

    /// The design effect of the answers at or below `at` µs over the seconds marked
    /// ([`certify::dispersion`]): 1 for independent answers.
    pub(crate) fn design_effect(&self, at: u64) -> f64 {
        let counts: Vec<(f64, f64)> = self
            .marks
            .iter()
            .zip(self.marks.iter().skip(1))
            .map(|(a, b)| {
                let n = b.latency.len().saturating_sub(a.latency.len());
                let below = b
                    .latency
                    .count_between(0, at)
                    .saturating_sub(a.latency.count_between(0, at));
                (n as f64, below as f64)
            })
            .filter(|(n, _)| *n > 0.0)
            .collect();
        certify::dispersion(&counts)
    }

    fn read(&self, c: &Condition, latency: &hdrhistogram::Histogram<u64>) -> Option<Reading> {
        match c.figure {
            Figure::Percentile(q) => {
                if latency.is_empty() {
                    return None;
                }
                let at = latency.value_at_quantile(q);
                let iv = certify::percentile_interval(latency, q, self.design_effect(at))?;
                Some(Reading {
                    value: latency.median_equivalent(at) as f64 / 1e3,
                    lo: iv.lo as f64 / 1e3,
                    hi: iv.hi as f64 / 1e3,
                    open_above: iv.open_above,
                })
            }
            Figure::Rps => {
                let rates: Vec<f64> = self
                    .marks
                    .iter()
                    .zip(self.marks.iter().skip(1))
                    .map(|(a, b)| (b.ok - a.ok) as f64 / (b.at - a.at).as_secs_f64())
                    .collect();
                let (mean, half) = certify::mean_interval(&rates)?;
                Some(Reading {
                    value: mean,
                    lo: mean - half,
                    hi: mean + half,
                    open_above: false,
                })
            }
        }
    }
}

/// Watches `control`'s load until `done` is set or every one of `conditions` holds (then
/// the load is told to finish); what it saw. The load must be watched
/// ([`Control::watch`]).
pub(crate) fn watch(
    control: &Control,
    conditions: &[Condition],
    done: &AtomicBool,
) -> UntilOutcome {
    let mut last = vec![None; conditions.len()];
    let converged = watch_until(control, done, |w, s, d| {
        last = w.look(s.elapsed, s.completed - s.failed, d, conditions);
        let held = last
            .iter()
            .zip(conditions)
            .all(|(r, c)| r.is_some_and(|r| r.holds(c)));
        (held && s.elapsed >= LEAST && w.marks.len() >= 4).then_some(s.elapsed)
    });
    UntilOutcome {
        conditions: conditions.to_vec(),
        converged,
        last,
    }
}

/// `--warmup auto` (a plan's `warmup = "auto"`): watches the warm-up's load until `done`
/// is set or its per-second series are level ([`certify::settled`]: the p99 and the good
/// answers a second of the last [`certify::SETTLE_SECONDS`] seconds show no trend), then
/// tells it to finish; when they were level, from its start. The load must be watched
/// ([`Control::watch`]) and bounded by [`shootout_model::WarmedUp::MAX`].
pub(crate) fn level_watch(control: &Control, done: &AtomicBool) -> Option<Duration> {
    watch_until(control, done, |w, s, d| {
        let level = w.mark(s.elapsed, s.completed - s.failed, d) && {
            let (p99, rate) = w.seconds();
            certify::settled(&p99, &rate)
        };
        level.then_some(s.elapsed)
    })
}

/// A capacity search's step (`load --find-max`, a plan's `find_max`): watches `control`'s load
/// until `done` is set or `searcher` ends the step ([`Searcher::ends`]: after `ask.least`, its SLOs
/// decided — met from `ask.horizon` on, the percentiles' bounds widened by the design effect of the
/// seconds seen; broken only when no answer to come by the step's deadline
/// ([`Searcher::most_answers`]) could mend it — an SLO on a journey's step on that step's live
/// counts, or on the ramp plainly passed; never when its steps run to their deadline); then tells
/// it to finish and says how it ended. `None` when the load ended first (its deadline, or a stop).
/// The load must be watched ([`Control::watch`]).
pub(crate) fn search_watch(
    control: &Control,
    done: &AtomicBool,
    searcher: &Searcher,
    ask: &Ask,
) -> Option<Ended> {
    let most = searcher.most_answers(ask, control.workers());
    watch_until(control, done, |w, now, d| {
        w.mark(now.elapsed, now.completed - now.failed, d);
        let so_far = SoFar {
            completed: now.completed,
            failed: now.failed,
            latency: &d.latency,
            steps: &d.kinds,
            labels: searcher.labels(),
            most: &most,
        };
        searcher.ends(ask, now.elapsed, &so_far, |v| w.design_effect(v))
    })
}

/// Looks at `control`'s live counters every [`EVERY`] until `done` is set, or until
/// `ends` (given the marks so far, the counters and the detail) gives its answer: then the
/// load is told to finish ([`Control::finish`]) and the answer returned. `--until`, a
/// plan's `until`, `--warmup auto` and a capacity search's steps ([`search_watch`]) end
/// their loads through it. The load must be watched ([`Control::watch`]).
pub(crate) fn watch_until<T>(
    control: &Control,
    done: &AtomicBool,
    mut ends: impl FnMut(&mut Watch, &Snapshot, &Detail) -> Option<T>,
) -> Option<T> {
    let mut w = Watch::default();
    while !done.load(Ordering::Relaxed) {
        let s = control.snapshot();
        if let (false, Some(d)) = (s.elapsed.is_zero(), control.detail()) {
            if let Some(t) = ends(&mut w, &s, &d) {
                control.finish();
                return Some(t);
            }
        }
        std::thread::sleep(EVERY);
    }
    None
}

/// Runs a warm-up of `ws` on `control`; with `auto` (`control` watched), until its
/// series are level ([`level_watch`]), its result saying how long that took
/// ([`RunResult::warm_up`](shootout_model::RunResult::warm_up)).
pub(crate) fn warm_up(
    ws: &shootout_model::LoadSpec,
    control: &Control,
    auto: bool,
) -> Result<shootout_model::RunResult, shootout_engine::EngineError> {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = auto.then(|| s.spawn(|| level_watch(control, &done)));
        let mut r = shootout_engine::run(ws, control);
        done.store(true, Ordering::Relaxed);
        let level = watcher.and_then(|w| w.join().ok());
        if let (Ok(r), Some(level)) = (&mut r, level) {
            r.warm_up = Some(shootout_model::WarmedUp {
                took: r.duration,
                level: level.is_some(),
            });
        }
        r
    })
}

/// How an automatic warm-up went, after its counts: `; auto: level after 9.2 s`, or `; ⚠
/// auto: not level after 60.0 s, measured anyway`.
pub(crate) fn warm_up_words(w: &shootout_model::WarmedUp) -> String {
    let took = w.took.as_secs_f64();
    if w.level {
        format!("; auto: level after {took:.1} s")
    } else {
        format!("; ⚠ auto: not level after {took:.1} s, measured anyway")
    }
}
