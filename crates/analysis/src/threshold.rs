//! Verdicts of the thresholds a load must meet (`--fail-if` on `load`, `merge` and `run`,
//! and a plan's `fail_if`; the grammar is the model's
//! [`shootout_model::threshold`], re-exported here): [`judge`] returns the thresholds one
//! load breached, [`judge_cells`] those a stored shootout's cells breached, each with the
//! measured value. The CLI turns any breach into exit code 3.

use crate::analysis::Analysis;
use crate::cells::{median, Cell};
use crate::Unit;
pub use shootout_model::threshold::{Metric, Op, Threshold, ThresholdError};
use shootout_model::{LoadLevel, RunResult};
use std::fmt;

/// A threshold a run breached, with what was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    /// The threshold.
    pub threshold: Threshold,
    /// The measured value, in [`Metric::of`]'s unit.
    pub value: f64,
    /// What the run's counts count: `rps` is so many of them a second (`calls/s` for
    /// gRPC calls).
    pub unit: Unit,
}

impl Breach {
    /// The measured value as a reader wants it, `rps` in the run's unit.
    fn shown(&self) -> String {
        match self.threshold.metric {
            Metric::Rps => format!("{:.2} {}", self.value, self.unit.per_second()),
            m => m.show(self.value),
        }
    }
}

/// `threshold failed: p99>50ms (p99 was 72.143 ms)`.
impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.threshold.metric;
        if let (Some(step), true) = (&self.threshold.step, self.value.is_nan()) {
            return write!(
                f,
                "threshold failed: {} (no step named '{step}' in this run)",
                self.threshold.text
            );
        }
        write!(
            f,
            "threshold failed: {} ({} was {})",
            self.threshold.text,
            m.name(),
            self.shown()
        )
    }
}

/// The thresholds `r` breached, in the order given (one naming a step `r` does not have
/// is breached, its value NaN); `unit` is what its counts count.
pub fn judge(thresholds: &[Threshold], r: &RunResult, unit: Unit) -> Vec<Breach> {
    thresholds
        .iter()
        .filter_map(|t| {
            let Some(value) = t.value(r) else {
                return Some(Breach {
                    threshold: t.clone(),
                    value: f64::NAN,
                    unit,
                });
            };
            t.op.holds(value, t.limit).then(|| Breach {
                threshold: t.clone(),
                value,
                unit,
            })
        })
        .collect()
}

/// A threshold that a cell of a shootout (contender × workload × level) breached.
#[derive(Debug, Clone, PartialEq)]
pub struct CellBreach {
    /// The contender's name.
    pub contender: String,
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
    /// Repetitions in the cell.
    pub reps: usize,
    /// The threshold and the cell's value (see [`cell_value`]).
    pub breach: Breach,
}

/// `threshold failed: fast, hello, c=50: p99>50ms (p99 was 72.143 ms, median of 3 repetitions)`.
impl fmt::Display for CellBreach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.breach.threshold.metric;
        let over = match (m, self.reps) {
            (_, 1) => String::new(),
            (Metric::Errors | Metric::Failed, n) => format!(", over {n} repetitions"),
            (_, n) => format!(", median of {n} repetitions"),
        };
        write!(
            f,
            "threshold failed: {}, {}, {}: {} ({} was {}{over})",
            self.contender,
            self.workload,
            self.level,
            self.breach.threshold.text,
            m.name(),
            self.breach.shown()
        )
    }
}

/// `metric` of a cell: for latency and `rps`, the median over its repetitions (the figure
/// the run's tables show, which one disturbed repetition does not move); for `errors` and
/// `failed`, all repetitions together (a failure in any repetition counts: failures are
/// never noise to be voted away).
pub fn cell_value(metric: Metric, cell: &Cell) -> f64 {
    match metric {
        Metric::Failed => cell.failures.total() as f64,
        Metric::Errors => cell.failures.total() as f64 * 100.0 / cell.completed.max(1) as f64,
        m => median(
            &cell
                .steps
                .iter()
                .map(|s| m.of(&s.unpacked()))
                .collect::<Vec<_>>(),
        ),
    }
}

/// `t`'s value for a cell: [`cell_value`] for the whole run; for a journey step
/// (`step:NAME:`), the same rules over that step's counts and latency in each repetition.
/// `None` when the cell's workload has no such step (another workload's journeys, or
/// none).
pub fn threshold_value(t: &Threshold, cell: &Cell) -> Option<f64> {
    let Some(name) = &t.step else {
        return Some(cell_value(t.metric, cell));
    };
    let runs: Vec<_> = cell.steps.iter().map(|s| s.unpacked()).collect();
    let steps: Vec<_> = runs
        .iter()
        .filter_map(|r| shootout_model::threshold::step_of(r, name))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let failed: u64 = steps.iter().map(|s| s.failed()).sum();
    let completed: u64 = steps.iter().map(|s| s.completed).sum();
    Some(match t.metric {
        Metric::Failed => failed as f64,
        Metric::Errors => failed as f64 * 100.0 / completed.max(1) as f64,
        _ => median(&runs.iter().filter_map(|r| t.value(r)).collect::<Vec<_>>()),
    })
}

/// The thresholds each cell of `a` breached, in the report's order (workload, level,
/// contender); `thresholds` gives those that apply to a contender, by name. A threshold
/// on a journey step judges the cells whose workload has that step.
pub fn judge_cells<'t>(
    a: &Analysis,
    thresholds: impl Fn(&str) -> &'t [Threshold],
) -> Vec<CellBreach> {
    let mut out = Vec::new();
    for (workload, level, cell) in a.cells() {
        let contender = a.name(cell.contender);
        for t in thresholds(contender) {
            let Some(value) = threshold_value(t, cell) else {
                continue;
            };
            if t.op.holds(value, t.limit) {
                out.push(CellBreach {
                    contender: contender.to_string(),
                    workload: workload.to_string(),
                    level,
                    reps: cell.reps(),
                    breach: Breach {
                        threshold: t.clone(),
                        value,
                        unit: a.unit(workload),
                    },
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::{FailureKind, RunResult};
    use std::time::{Duration, SystemTime};

    fn t(expr: &str) -> Threshold {
        expr.parse().unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    fn result() -> RunResult {
        let mut r = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_secs(2));
        // 99 answers at 1 ms and one at 100 ms; 1 of 1000 completed failed.
        r.histograms.latency.record_n(1000, 99).unwrap();
        r.histograms.latency.record(100_000).unwrap();
        r.counts.completed = 1000;
        r.counts.ok = 999;
        r.counts.failures[FailureKind::Timeout] = 1;
        r
    }

    /// `step:NAME:` judges one journey step's counts and latency alone, by its name or
    /// `journey › step`; a name the run lacks is a breach that says so.
    #[test]
    fn a_step_threshold_judges_that_step_alone() {
        let mut r = result();
        let step = |label: &str, ms: u64, completed: u64, ok: u64| {
            let mut latency = shootout_model::latency_histogram();
            latency.record_n(ms * 1000, ok).unwrap();
            shootout_model::TargetStats {
                label: label.into(),
                completed,
                ok,
                failures: Default::default(),
                unsent: 0,
                latency,
                busy: None,
            }
        };
        r.journeys = vec![step("writer", 30, 10, 9)];
        r.targets = vec![
            step("writer › login", 20, 10, 10),
            step("writer › post", 5, 10, 9),
        ];
        let all: Vec<Threshold> = [
            "step:login:p99>10ms",
            "step:writer › post:p99>10ms",
            "step:post:failed>0",
            "step:login:failed>0",
            "step:nope:p99>1ms",
        ]
        .iter()
        .map(|e| t(e))
        .collect();
        let got: Vec<String> = judge(&all, &r, Unit::Request)
            .iter()
            .map(|b| b.to_string())
            .collect();
        assert_eq!(
            got,
            [
                "threshold failed: step:login:p99>10ms (p99 was 20.015 ms)",
                "threshold failed: step:post:failed>0 (failed was 1)",
                "threshold failed: step:nope:p99>1ms (no step named 'nope' in this run)",
            ]
        );
    }

    #[test]
    fn judging_returns_the_breached_thresholds_with_their_values() {
        let r = result();
        let all: Vec<Threshold> = [
            "p50>2ms",
            "p99>0.5ms",
            "max>=100ms",
            "errors>0.1%",
            "errors>=0.1%",
            "failed>0",
            "rps<500",
            "rps<=499.5",
            "mean<1ms",
        ]
        .iter()
        .map(|e| t(e))
        .collect();
        let breached: Vec<String> = judge(&all, &r, Unit::Request)
            .iter()
            .map(|b| b.threshold.text.clone())
            .collect();
        // p50 is 1 ms; errors are exactly 0.1%; rps is 999 / 2 s = 499.5.
        assert_eq!(
            breached,
            vec![
                "p99>0.5ms",
                "max>=100ms",
                "errors>=0.1%",
                "failed>0",
                "rps<500",
                "rps<=499.5"
            ]
        );
        let b = &judge(&[t("p99>0.5ms")], &r, Unit::Request)[0];
        assert_eq!(
            b.to_string(),
            "threshold failed: p99>0.5ms (p99 was 1.000 ms)"
        );
        let b = &judge(&[t("errors>0.01%")], &r, Unit::Request)[0];
        assert_eq!(
            b.to_string(),
            "threshold failed: errors>0.01% (errors was 0.100%)"
        );
        let b = &judge(&[t("rps<500")], &r, Unit::Request)[0];
        assert_eq!(
            b.to_string(),
            "threshold failed: rps<500 (rps was 499.50 req/s)"
        );
        // A gRPC run's rate is its calls (a server stream's replies) a second.
        for (unit, said) in [(Unit::Call, "calls/s"), (Unit::Reply, "replies/s")] {
            let b = &judge(&[t("rps<500")], &r, unit)[0];
            let want = format!("threshold failed: rps<500 (rps was 499.50 {said})");
            assert_eq!(b.to_string(), want);
        }
    }
}

#[cfg(test)]
mod cell_tests {
    use super::*;
    use crate::evidence::tests::run as measured;
    use shootout_model::stored::{StepId, StoredRun};
    use shootout_model::FailureKind;

    fn t(expr: &str) -> Threshold {
        expr.parse().unwrap()
    }

    /// Contenders `a` and `b`, each measured three times for 1 s (101, 102 and 102 good
    /// answers); every answer takes 1 ms, but `a`'s third repetition answered in 100 ms
    /// and had one timeout.
    fn run() -> StoredRun {
        let mut run = measured(&[("a", 100, 0), ("b", 100, 0)], 1);
        for c in 0..2usize {
            let mut third = run.steps[c * 2 + 1].clone();
            third.repetition = 3;
            third.id = StepId(10 + c as i64);
            run.steps.push(third);
        }
        for s in &mut run.steps {
            let slow = s.contender.0 == 0 && s.repetition == 3;
            s.result
                .histograms
                .latency
                .record_n(if slow { 100_000 } else { 1_000 }, 100)
                .unwrap();
            if slow {
                s.result.counts.failures[FailureKind::Timeout] = 1;
                s.result.counts.completed += 1;
            }
        }
        run
    }

    /// The lines of the thresholds `a`'s cells breached.
    fn breached<'t>(a: &Analysis, thresholds: impl Fn(&str) -> &'t [Threshold]) -> Vec<String> {
        judge_cells(a, thresholds)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// A `fail_if` on a journey step (a plan's, `run`'s or `report`'s) judges each cell on
    /// that step alone: its median latency over the repetitions, and its failures in all
    /// of them; a step no cell has judges nothing (the plan was checked before it ran).
    #[test]
    fn a_cell_is_judged_on_a_journey_step_alone() {
        use shootout_model::TargetStats;
        let mut run = run();
        for s in &mut run.steps {
            let a = s.contender.0 == 0;
            let third = a && s.repetition == 3;
            let step = |label: &str, ms: u64| {
                let mut t = TargetStats::new(label);
                t.latency = shootout_model::latency_histogram();
                t.latency.record_n(ms * 1000, 10).unwrap();
                t.completed = 10;
                t.ok = 10;
                t
            };
            let mut login = step("j › login", if a { 30 } else { 1 });
            if third {
                login.completed += 1;
                login.failures[FailureKind::Status] = 1;
            }
            s.result.targets = vec![login, step("j › read", 1)];
            s.result.journeys = vec![TargetStats::new("j")];
        }
        let a = Analysis::of(&run);
        let all = vec![
            t("step:login:p99>20ms"),
            t("step:login:failed>0"),
            t("step:j › read:p99>20ms"),
            t("step:nope:p99>1ms"),
        ];
        let lines = breached(&a, |_| &all);
        // The whole run's p99 (1 ms at the median) would pass; the login step's does not.
        assert_eq!(
            lines,
            vec![
                "threshold failed: a, w, c=10: step:login:p99>20ms (p99 was 30.015 ms, median of 3 repetitions)",
                "threshold failed: a, w, c=10: step:login:failed>0 (failed was 1, over 3 repetitions)",
            ]
        );
    }

    #[test]
    fn a_cell_is_judged_on_its_median_latency_and_on_every_failure() {
        let run = run();
        let a = Analysis::of(&run);
        let all = vec![t("p99>50ms"), t("failed>0"), t("errors>0.1%")];
        let b_own = vec![
            t("p99>50ms"),
            t("failed>0"),
            t("errors>0.1%"),
            t("rps<1000"),
        ];
        let lines = breached(&a, |name| if name == "b" { &b_own } else { &all });
        // a's slow repetition is outvoted for p99 (median 1 ms), not for its timeout:
        // 1 of 306 requests failed. b has its own rps threshold (median 102 req/s).
        assert_eq!(
            lines,
            vec![
                "threshold failed: a, w, c=10: failed>0 (failed was 1, over 3 repetitions)",
                "threshold failed: a, w, c=10: errors>0.1% (errors was 0.327%, over 3 repetitions)",
                "threshold failed: b, w, c=10: rps<1000 (rps was 102.00 req/s, median of 3 repetitions)",
            ]
        );
        let p99 = [t("p99>=1ms")];
        assert_eq!(
            judge_cells(&a, |_| &p99).len(),
            2,
            "both cells' median p99 is 1 ms"
        );
    }
}
