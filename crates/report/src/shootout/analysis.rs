//! What every rendering of a stored run shares: the steps grouped into workloads × load
//! levels × contenders ([`Cell`]s of repetitions, with medians over repetitions), the
//! baseline, hyperfine's "times faster" ratio, and the warnings in the order the reports
//! print them. The renderings (text, Markdown, JSON) only lay this out; `shootout compare`
//! reuses the cells.
//!
//! Units: req/s, latencies in milliseconds (from the store's µs histograms), server CPU in
//! µs per completed request, memory in bytes.

use hdrhistogram::Histogram;
use shootout_model::resolved::ResolvedPlan;
use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::{
    latency_histogram, ContenderStatus, FailureCounts, LatencySummary, LoadLevel, RunStatus,
    StepStatus, Warning,
};

/// A range of req/s wider than this share of the median marks a cell as noisy.
pub const NOISY: f64 = 0.10;

/// ab's percentile rows of the "served within" table (100 is the slowest request).
pub const SERVED_PERCENTS: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// Lines of a contender's failure detail quoted in the warnings.
pub const DETAIL_LINES: usize = 4;

/// The median of `v` (the mean of the two middle values for an even count; 0 when empty).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One contender × workload × load level: its repetitions and their statistics.
#[derive(Debug, Clone)]
pub struct Cell<'a> {
    /// Index of the contender in the run's contenders.
    pub contender: usize,
    /// The load level.
    pub level: LoadLevel,
    /// The repetitions, in the order measured.
    pub steps: Vec<&'a StoredStep>,
    /// req/s of each repetition.
    pub rps_values: Vec<f64>,
    /// p99 latency of each repetition (ms).
    pub p99_values: Vec<f64>,
    /// Median req/s.
    pub rps: f64,
    /// Slowest repetition's req/s.
    pub rps_min: f64,
    /// Fastest repetition's req/s.
    pub rps_max: f64,
    /// Median of the repetitions' mean latency (ms).
    pub mean: f64,
    /// Median of the repetitions' standard deviation of latency (ms).
    pub sd: f64,
    /// Median of the repetitions' p50 (ms).
    pub p50: f64,
    /// Median of the repetitions' p90 (ms).
    pub p90: f64,
    /// Median of the repetitions' p99 (ms).
    pub p99: f64,
    /// Median of the repetitions' slowest request (ms).
    pub max: f64,
    /// Failed requests per class, summed over the repetitions.
    pub failures: FailureCounts,
    /// Completed requests, summed.
    pub completed: u64,
    /// Good answers, summed.
    pub ok: u64,
    /// Aborted requests (in flight at the end), summed.
    pub aborted: u64,
    /// The server's CPU per completed request (µs), median over the repetitions that have
    /// resource samples; `None` for servers shootout did not start.
    pub cpu_us: Option<f64>,
    /// The largest resident memory sampled in any repetition (bytes).
    pub peak_rss: Option<u64>,
}

impl Cell<'_> {
    /// Repetitions.
    pub fn reps(&self) -> usize {
        self.steps.len()
    }

    /// Half the range of req/s over the repetitions (what `±` means in the tables).
    pub fn spread(&self) -> f64 {
        (self.rps_max - self.rps_min) / 2.0
    }

    /// The range of req/s as a share of the median (0 with one repetition).
    pub fn range_share(&self) -> f64 {
        if self.rps > 0.0 {
            (self.rps_max - self.rps_min) / self.rps
        } else {
            0.0
        }
    }

    /// True when the range of req/s is wider than [`NOISY`] of the median.
    pub fn noisy(&self) -> bool {
        self.reps() > 1 && self.range_share() > NOISY
    }

    /// Every repetition's latency histogram (µs) merged, for the percentile table.
    pub fn merged_latency(&self) -> Histogram<u64> {
        let mut h = latency_histogram();
        for s in &self.steps {
            // Same bounds on both sides: adding cannot fail.
            let _ = h.add(&s.result.latency);
        }
        h
    }

    /// `3 timeout, 1 reset`, or `0`.
    pub fn failures_text(&self) -> String {
        self.failures.to_string()
    }
}

/// The server's CPU per completed request in one step (µs): (last − first CPU sample) /
/// completed; `None` without two samples or completed requests.
pub fn step_cpu_us(s: &StoredStep) -> Option<f64> {
    let (first, last) = (s.resources.first()?, s.resources.last()?);
    if s.resources.len() < 2 || s.result.counts.completed == 0 {
        return None;
    }
    let used = (last.cpu_user + last.cpu_sys).saturating_sub(first.cpu_user + first.cpu_sys);
    Some(used.as_secs_f64() * 1e6 / s.result.counts.completed as f64)
}

/// The largest resident memory sampled during one step (bytes).
pub fn step_peak_rss(s: &StoredStep) -> Option<u64> {
    s.resources.iter().map(|r| r.rss_bytes).max()
}

/// The cell of `steps` (one contender × workload × level, in repetition order).
pub(crate) fn cell<'a>(contender: usize, level: LoadLevel, steps: Vec<&'a StoredStep>) -> Cell<'a> {
    let summaries: Vec<LatencySummary> = steps
        .iter()
        .map(|s| LatencySummary::of(&s.result.latency))
        .collect();
    let of = |f: fn(&LatencySummary) -> f64| median(&summaries.iter().map(f).collect::<Vec<_>>());
    let rps_values: Vec<f64> = steps.iter().map(|s| s.result.ok_rps()).collect();
    let cpu: Vec<f64> = steps.iter().filter_map(|s| step_cpu_us(s)).collect();
    let mut failures = FailureCounts::default();
    for s in &steps {
        failures += &s.result.counts.failures;
    }
    Cell {
        contender,
        level,
        rps: median(&rps_values),
        rps_min: rps_values.iter().copied().fold(f64::INFINITY, f64::min),
        rps_max: rps_values.iter().copied().fold(0.0, f64::max),
        mean: of(|l| l.mean),
        sd: of(|l| l.stdev),
        p50: of(|l| l.p50),
        p90: of(|l| l.p90),
        p99: of(|l| l.p99),
        max: of(|l| l.max),
        p99_values: summaries.iter().map(|l| l.p99).collect(),
        rps_values,
        failures,
        completed: steps.iter().map(|s| s.result.counts.completed).sum(),
        ok: steps.iter().map(|s| s.result.counts.ok).sum(),
        aborted: steps.iter().map(|s| s.result.counts.aborted).sum(),
        cpu_us: (!cpu.is_empty()).then(|| median(&cpu)),
        peak_rss: steps.iter().filter_map(|s| step_peak_rss(s)).max(),
        steps,
    }
}

/// One load level of a workload: a cell per contender that has steps there, in plan order.
#[derive(Debug, Clone)]
pub struct LevelBlock<'a> {
    /// The load level.
    pub level: LoadLevel,
    /// The cells.
    pub cells: Vec<Cell<'a>>,
}

impl LevelBlock<'_> {
    /// The cell of contender `index`, if it has steps at this level.
    pub fn cell(&self, index: usize) -> Option<&Cell<'_>> {
        self.cells.iter().find(|c| c.contender == index)
    }
}

/// One workload: its load levels in the order measured.
#[derive(Debug, Clone)]
pub struct WorkloadBlock<'a> {
    /// The workload's name.
    pub name: &'a str,
    /// Its levels.
    pub levels: Vec<LevelBlock<'a>>,
}

/// hyperfine's "x ± y times faster than": the ratio of median req/s, its uncertainty
/// propagated from both cells' relative half-ranges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// How many times faster (or slower), ≥ 1.
    pub times: f64,
    /// The uncertainty of `times`.
    pub error: f64,
    /// True when the contender is faster than the baseline.
    pub faster: bool,
    /// True when either side has more than one repetition (else `error` means nothing).
    pub has_spread: bool,
}

impl Ratio {
    /// The ratio of cell `c` to the baseline cell `b`; `None` when either rate is zero.
    pub fn of(c: &Cell, b: &Cell) -> Option<Ratio> {
        if c.rps <= 0.0 || b.rps <= 0.0 {
            return None;
        }
        let r = c.rps / b.rps;
        let rel = |x: &Cell| x.spread() / x.rps;
        let err = r * (rel(c).powi(2) + rel(b).powi(2)).sqrt();
        let (times, error, faster) = if r >= 1.0 {
            (r, err, true)
        } else {
            (1.0 / r, err / (r * r), false)
        };
        Some(Ratio {
            times,
            error,
            faster,
            has_spread: c.reps() > 1 || b.reps() > 1,
        })
    }

    /// `1.03 ± 0.07 times slower than`, without the names.
    pub fn phrase(&self) -> String {
        let word = if self.faster { "faster" } else { "slower" };
        if self.has_spread {
            format!("{:.2} ± {:.2} times {word}", self.times, self.error)
        } else {
            format!("{:.2} times {word}", self.times)
        }
    }
}

/// Something the reader must know before reading the tables.
#[derive(Debug, Clone, PartialEq)]
pub struct RunWarning {
    /// A stable word for machines: `interrupted`, `not_measured`, `generator_saturated`, …
    pub kind: &'static str,
    /// One line for humans.
    pub message: String,
    /// Lines quoted after the message (a contender's stderr or verification report).
    pub detail: Vec<String>,
    /// The contender concerned, if one is.
    pub contender: Option<String>,
    /// The workload concerned, if one is.
    pub workload: Option<String>,
    /// The load level concerned, if one is.
    pub level: Option<LoadLevel>,
}

impl RunWarning {
    fn run(kind: &'static str, message: String) -> Self {
        RunWarning {
            kind,
            message,
            detail: Vec::new(),
            contender: None,
            workload: None,
            level: None,
        }
    }
}

/// A stored run, grouped for the reports.
#[derive(Debug, Clone)]
pub struct Analysis<'a> {
    /// The run as stored.
    pub run: &'a StoredRun,
    /// The contender the others are compared with: the plan's baseline if it was measured,
    /// else the first contender with steps.
    pub baseline: Option<usize>,
    /// The workloads in the order measured.
    pub workloads: Vec<WorkloadBlock<'a>>,
    /// The warnings, most important first.
    pub warnings: Vec<RunWarning>,
}

/// `nginx · hello · c=8`.
pub fn cell_label(contender: &str, workload: &str, level: LoadLevel) -> String {
    format!("{contender} · {workload} · {level}")
}

impl<'a> Analysis<'a> {
    /// Groups the run's steps and derives its warnings.
    pub fn of(run: &'a StoredRun) -> Analysis<'a> {
        let index_of = |s: &StoredStep| run.contenders.iter().position(|c| c.id == s.contender);
        let mut workloads: Vec<WorkloadBlock<'a>> = Vec::new();
        for s in &run.steps {
            if index_of(s).is_none() {
                continue;
            }
            let w = match workloads.iter().position(|w| w.name == s.workload) {
                Some(i) => i,
                None => {
                    workloads.push(WorkloadBlock {
                        name: &s.workload,
                        levels: Vec::new(),
                    });
                    workloads.len() - 1
                }
            };
            let levels = &mut workloads[w].levels;
            if !levels.iter().any(|l| l.level == s.level) {
                levels.push(LevelBlock {
                    level: s.level,
                    cells: Vec::new(),
                });
            }
        }
        for w in &mut workloads {
            for l in &mut w.levels {
                for ci in 0..run.contenders.len() {
                    let mut mine: Vec<&StoredStep> = run
                        .steps
                        .iter()
                        .filter(|s| {
                            index_of(s) == Some(ci) && s.workload == w.name && s.level == l.level
                        })
                        .collect();
                    mine.sort_by_key(|s| (s.repetition, s.id));
                    if !mine.is_empty() {
                        l.cells.push(cell(ci, l.level, mine));
                    }
                }
            }
        }
        let has_steps = |ci: usize| run.steps.iter().any(|s| index_of(s) == Some(ci));
        let marked = run.contenders.iter().position(|c| c.baseline);
        let baseline = match marked {
            Some(m) if has_steps(m) => Some(m),
            _ => (0..run.contenders.len()).find(|&i| has_steps(i)),
        };
        let mut a = Analysis {
            run,
            baseline,
            workloads,
            warnings: Vec::new(),
        };
        a.warnings = a.derive_warnings(marked);
        a
    }

    /// The name of contender `i`.
    pub fn name(&self, i: usize) -> &'a str {
        &self.run.contenders[i].name
    }

    /// Contenders with at least one step.
    pub fn measured_contenders(&self) -> usize {
        let mut seen: Vec<usize> = self
            .workloads
            .iter()
            .flat_map(|w| {
                w.levels
                    .iter()
                    .flat_map(|l| l.cells.iter().map(|c| c.contender))
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    /// Distinct load levels over all workloads.
    pub fn level_count(&self) -> usize {
        let mut levels: Vec<LoadLevel> = Vec::new();
        for l in self.workloads.iter().flat_map(|w| &w.levels) {
            if !levels.contains(&l.level) {
                levels.push(l.level);
            }
        }
        levels.len()
    }

    /// The most repetitions of any cell.
    pub fn max_reps(&self) -> usize {
        self.cells().map(|(_, _, c)| c.reps()).max().unwrap_or(0)
    }

    /// Every cell with its workload and level.
    pub fn cells(&self) -> impl Iterator<Item = (&str, LoadLevel, &Cell<'a>)> {
        self.workloads.iter().flat_map(|w| {
            w.levels
                .iter()
                .flat_map(move |l| l.cells.iter().map(move |c| (w.name, l.level, c)))
        })
    }

    /// The value of the `steps` fact: `12 (2 contenders × 1 workload × 3 levels × 2
    /// repetitions)` when every planned step was measured, `9 of 12 planned (…)` when not
    /// (the plan's shape is read from the stored resolved plan; without it, from the steps).
    pub fn steps_line(&self) -> String {
        use crate::grid::plural;
        let n = self.run.steps.len();
        let planned = ResolvedPlan::parse(&self.run.run.plan_resolved)
            .and_then(|p| p.shape())
            .unwrap_or((
                self.measured_contenders(),
                self.workloads.len(),
                self.level_count(),
                self.max_reps(),
            ));
        let (c, w, l, r) = planned;
        let shape = format!(
            "{} × {} × {} × {}",
            plural(c, "contender", "contenders"),
            plural(w, "workload", "workloads"),
            plural(l, "level", "levels"),
            plural(r, "repetition", "repetitions")
        );
        let total = c * w * l * r;
        if n == total {
            format!("{n} ({shape})")
        } else {
            format!("{n} of {total} planned ({shape})")
        }
    }

    fn derive_warnings(&self, marked: Option<usize>) -> Vec<RunWarning> {
        let run = self.run;
        let mut out = Vec::new();
        let n = run.steps.len();
        let stored = crate::grid::plural(n, "step", "steps");
        match run.run.status {
            RunStatus::Complete => {}
            RunStatus::Interrupted => out.push(RunWarning::run(
                "interrupted",
                format!(
                    "the run was interrupted (Ctrl-C) after {stored}: the tables cover those only"
                ),
            )),
            RunStatus::Running => out.push(RunWarning::run(
                "not_finished",
                format!(
                    "the run has no end: it is still running, or shootout died without a word; the tables cover the {stored} stored so far"
                ),
            )),
            RunStatus::Abandoned => out.push(RunWarning::run(
                "abandoned",
                format!(
                    "the run was abandoned: its shootout died before the end (killed, or a second Ctrl-C); the tables cover the {stored} stored"
                ),
            )),
            RunStatus::Failed => out.push(RunWarning::run(
                "run_failed",
                if n == 0 {
                    "the run failed: no contender could be measured".to_string()
                } else {
                    format!("the run failed before its end: the tables cover the {stored} stored")
                },
            )),
        }
        if let (Some(m), Some(b)) = (marked, self.baseline) {
            if m != b {
                out.push(RunWarning {
                    contender: Some(self.name(m).to_string()),
                    ..RunWarning::run(
                        "baseline_not_measured",
                        format!(
                            "the baseline {} was not measured: the others are compared with {}",
                            self.name(m),
                            self.name(b)
                        ),
                    )
                });
            }
        }
        for (ci, c) in run.contenders.iter().enumerate() {
            let has_steps = run.steps.iter().any(|s| s.contender == c.id);
            let what = match c.status {
                ContenderStatus::Measured => continue,
                // Skipped with steps: the run was stopped while it was being measured.
                ContenderStatus::Skipped if has_steps => continue,
                ContenderStatus::Skipped => {
                    "was not measured: the run ended before its turn".to_string()
                }
                ContenderStatus::SetupFailed => "was not measured: its setup failed".into(),
                ContenderStatus::Exited => "was not measured: it exited before it was ready".into(),
                ContenderStatus::NeverReady => "was not measured: it never became ready".into(),
                ContenderStatus::VerificationFailed => "failed verification, not measured".into(),
                ContenderStatus::Crashed if has_steps => {
                    "crashed while being measured: the steps before are kept".into()
                }
                ContenderStatus::Crashed => "crashed before its first step".into(),
                ContenderStatus::Interrupted => {
                    "was not measured: the run was interrupted before its first step".into()
                }
            };
            let detail: Vec<String> = if c.status == ContenderStatus::Skipped {
                Vec::new()
            } else {
                detail_lines(&c.detail)
            };
            out.push(RunWarning {
                kind: "not_measured",
                message: format!("{} {what}", self.name(ci)),
                detail,
                contender: Some(c.name.clone()),
                ..RunWarning::run("", String::new())
            });
        }
        // Steps that ended early.
        for (w, level, cell) in self.cells() {
            let name = self.name(cell.contender);
            for s in &cell.steps {
                let what = match s.status {
                    StepStatus::Complete => continue,
                    StepStatus::Interrupted => {
                        "was interrupted (Ctrl-C): it is shorter than the others"
                    }
                    StepStatus::ContenderDied => {
                        "ended when the contender died: its numbers cover the part before"
                    }
                };
                out.push(RunWarning {
                    kind: "step_ended_early",
                    message: format!(
                        "{} repetition {} {what}",
                        cell_label(name, w, level),
                        s.repetition
                    ),
                    ..self.at(name, w, level)
                });
            }
        }
        // The load runs' own warnings, one line per cell and kind.
        for (w, level, cell) in self.cells() {
            let name = self.name(cell.contender);
            let label = cell_label(name, w, level);
            let reps = cell.reps();
            let mut kinds: Vec<(&'static str, Vec<&Warning>)> = Vec::new();
            for s in &cell.steps {
                for warning in &s.result.warnings {
                    let k = warning_kind(warning);
                    match kinds.iter_mut().find(|(kk, _)| *kk == k) {
                        Some((_, v)) => v.push(warning),
                        None => kinds.push((k, vec![warning])),
                    }
                }
            }
            for (kind, found) in kinds {
                let of = if reps > 1 {
                    format!(" (in {} of {reps} repetitions)", found.len())
                } else {
                    String::new()
                };
                let message = match kind {
                    "generator_saturated" => {
                        let busiest = found
                            .iter()
                            .filter_map(|w| match w {
                                Warning::GeneratorSaturated { busiest_thread } => {
                                    Some(*busiest_thread)
                                }
                                _ => None,
                            })
                            .fold(0.0, f64::max);
                        format!(
                            "generator saturated: {label}: its busiest thread was on a CPU {:.0}% of the step{of}: the limit may be shootout's, not the server's (give the load more CPUs with load_cpus, or pin server and load apart with server_cpus and load_cpus)",
                            busiest * 100.0
                        )
                    }
                    "failures" => format!(
                        "failures: {label}: {} of {} requests failed: {}{of}; their latency is not comparable with a healthy server's",
                        cell.failures.total(),
                        cell.completed,
                        cell.failures_text()
                    ),
                    _ => format!("{}: {label}: {}{of}", kind.replace('_', " "), found[0]),
                };
                out.push(RunWarning {
                    kind,
                    message,
                    ..self.at(name, w, level)
                });
            }
        }
        let advice = noise_advice(self.run);
        for (w, level, cell) in self.cells() {
            if cell.noisy() {
                let name = self.name(cell.contender);
                out.push(RunWarning {
                    kind: "noisy",
                    message: format!(
                        "noisy: {}: req/s ranged {:.0}–{:.0} over {} repetitions, {:.0}% of the median ({})",
                        cell_label(name, w, level),
                        cell.rps_min,
                        cell.rps_max,
                        cell.reps(),
                        cell.range_share() * 100.0,
                        advice
                    ),
                    ..self.at(name, w, level)
                });
            }
        }
        out
    }

    fn at(&self, contender: &str, workload: &str, level: LoadLevel) -> RunWarning {
        RunWarning {
            contender: Some(contender.to_string()),
            workload: Some(workload.to_string()),
            level: Some(level),
            ..RunWarning::run("", String::new())
        }
    }
}

/// What a noisy cell's warning advises: pinning, unless the plan already pinned the
/// contenders and the load to CPUs (`server_cpus` and `load_cpus` in the resolved plan).
pub(crate) fn noise_advice(run: &StoredRun) -> &'static str {
    let pinned = ResolvedPlan::parse(&run.run.plan_resolved).is_some_and(|p| p.pinned());
    if pinned {
        "add repetitions or lengthen the steps; server and load are already pinned apart"
    } else {
        "add repetitions or lengthen the steps, and pin server and load to different CPUs"
    }
}

/// The first non-empty lines of a contender's detail, at most [`DETAIL_LINES`], with their
/// common indentation removed.
fn detail_lines(detail: &str) -> Vec<String> {
    let lines: Vec<&str> = detail
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(DETAIL_LINES)
        .collect();
    let indent = lines
        .iter()
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l[indent..].trim_end().to_string())
        .collect()
}

/// The `kind` a load run's warning is stored with (`generator_saturated`, …).
fn warning_kind(w: &Warning) -> &'static str {
    match w {
        Warning::GeneratorSaturated { .. } => "generator_saturated",
        Warning::ScheduleNotKept { .. } => "schedule_not_kept",
        Warning::ConnectFailed { .. } => "connect_failed",
        Warning::Failures { .. } => "failures",
        Warning::SlowConnects { .. } => "slow_connects",
        Warning::Unserved { .. } => "unserved",
        Warning::NothingCompleted => "nothing_completed",
        Warning::Retried { .. } => "retried",
        Warning::Dropped { .. } => "dropped",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0]), 3.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn failures_name_only_the_classes_that_happened() {
        let mut f = FailureCounts::default();
        assert_eq!(f.to_string(), "0");
        f[shootout_model::FailureKind::Timeout] = 3;
        f[shootout_model::FailureKind::Reset] = 1;
        assert_eq!(f.to_string(), "3 timeout, 1 reset");
    }
}
