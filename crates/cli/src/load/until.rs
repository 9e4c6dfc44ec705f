//! `--until`: watches a running load's live counters ([`Control::detail`], ten times a
//! second) and ends it ([`Control::finish`]) once every condition holds, after at least
//! [`LEAST`]. A percentile's interval is the order-statistic interval of the report
//! ([`certify::percentile_interval`]) on the answers so far, widened by the design effect
//! of the seconds seen (the same test of the seconds' homogeneity, over the last
//! [`WINDOW`] seconds); answers a second are the mean of the rates measured between
//! looks a second apart, with Student's t interval over them.

use shootout_analysis::certify;
use shootout_engine::{Control, Detail};
use shootout_model::until::{Condition, Figure, Reading, UntilOutcome};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The least a load with conditions lasts, whatever its figures say.
pub(crate) const LEAST: Duration = Duration::from_secs(3);

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
struct Watch {
    marks: VecDeque<Mark>,
}

impl Watch {
    /// Takes a mark when a second has passed since the last, and reads each condition.
    fn look(
        &mut self,
        at: Duration,
        ok: u64,
        d: &Detail,
        conditions: &[Condition],
    ) -> Vec<Option<Reading>> {
        if self
            .marks
            .back()
            .is_none_or(|m| at >= m.at + Duration::from_secs(1))
        {
            self.marks.push_back(Mark {
                at,
                ok,
                latency: d.latency.clone(),
            });
            if self.marks.len() > WINDOW + 1 {
                self.marks.pop_front();
            }
        }
        conditions
            .iter()
            .map(|c| self.read(c, &d.latency))
            .collect()
    }

    fn read(&self, c: &Condition, latency: &hdrhistogram::Histogram<u64>) -> Option<Reading> {
        match c.figure {
            Figure::Percentile(q) => {
                if latency.is_empty() {
                    return None;
                }
                let at = latency.value_at_quantile(q);
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
                let deff = certify::dispersion(&counts);
                let iv = certify::percentile_interval(latency, q, deff)?;
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
    let mut w = Watch::default();
    let mut last = vec![None; conditions.len()];
    while !done.load(Ordering::Relaxed) {
        let s = control.snapshot();
        if let (false, Some(d)) = (s.elapsed.is_zero(), control.detail()) {
            last = w.look(s.elapsed, s.completed - s.failed, &d, conditions);
            let held = last
                .iter()
                .zip(conditions)
                .all(|(r, c)| r.is_some_and(|r| r.holds(c)));
            if held && s.elapsed >= LEAST && w.marks.len() >= 4 {
                control.finish();
                return UntilOutcome {
                    conditions: conditions.to_vec(),
                    converged: Some(s.elapsed),
                    last,
                };
            }
        }
        std::thread::sleep(EVERY);
    }
    UntilOutcome {
        conditions: conditions.to_vec(),
        converged: None,
        last,
    }
}
