//! The steps of a stored run grouped into workloads × load levels × contenders
//! ([`Cell`]s of repetitions, with medians over repetitions), the baseline, and hyperfine's
//! "times faster" ratio. Every rendering of a run (text, Markdown, JSON, CSV, HTML) and
//! `shootout compare` read these cells, so every statistic has one definition.
//!
//! Seams: reads a [`StoredRun`] only; the whole analysis of a run (these cells, its
//! capacities, its warnings and its planned shape) is assembled above them in
//! [`crate::analysis`]. Units: req/s, latencies in milliseconds (from the store's µs
//! histograms), server CPU in µs per completed request, memory in bytes.

use crate::unit::Unit;
use hdrhistogram::Histogram;
use shootout_model::stored::{ContenderId, StoredRun, StoredStep};
use shootout_model::{latency_histogram, FailureCounts, LatencySummary, LoadLevel, Measure, Wire};
use std::collections::HashMap;

/// A range of req/s wider than this share of the median marks a cell as noisy.
pub const NOISY: f64 = 0.10;

/// Steps whose measured lengths differ by more than this factor are unlike (a `--quick`
/// run's 1 s steps against a full run's 10 s): a step's start weighs more in a short one.
/// `shootout compare` says so of its pairs, `shootout report --runs` of the runs it pools.
pub const UNLIKE_STEPS: f64 = 1.5;

/// The median measured length of `steps`, in seconds.
pub fn step_secs(steps: &[&StoredStep]) -> f64 {
    let secs: Vec<f64> = steps
        .iter()
        .map(|s| s.result.duration.as_secs_f64())
        .collect();
    median(&secs)
}

/// True when steps of median lengths `a` and `b` (seconds) are unlike: more than
/// [`UNLIKE_STEPS`] times apart.
pub fn unlike(a: f64, b: f64) -> bool {
    a.max(b) > UNLIKE_STEPS * a.min(b)
}

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
    /// How the client talked to the contender, when every repetition recorded the same.
    pub wire: Option<Wire>,
}

impl Cell<'_> {
    /// The label beside this cell's contender in its workload's tables: its wire when
    /// the workload's contenders were spoken to differently (`mixed`, see
    /// [`WorkloadBlock::wire_mixed`]) and it was recorded.
    pub fn wire_label(&self, mixed: bool) -> Option<Wire> {
        mixed.then_some(self.wire).flatten()
    }

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
        merged(&self.steps, Measure::Latency)
    }

    /// The raw latency histogram (µs, from each actual send) of every repetition, merged;
    /// the same as [`Cell::merged_latency`] in a closed loop.
    pub fn merged_raw_latency(&self) -> Histogram<u64> {
        merged(&self.steps, Measure::LatencyRaw)
    }

    /// `3 timeout, 1 reset`, or `0`.
    pub fn failures_text(&self) -> String {
        self.failures.to_string()
    }
}

/// The histograms of `measure` of `steps` merged into one of [`latency_histogram`]'s
/// bounds. A lone step's is that one as it is when it has those bounds: adding it to an
/// empty one would copy it, at the cost of a second histogram of 184 KiB.
fn merged(steps: &[&StoredStep], measure: Measure) -> Histogram<u64> {
    static BOUNDS: std::sync::OnceLock<(u64, u64, u8)> = std::sync::OnceLock::new();
    let bounds = BOUNDS.get_or_init(|| {
        let h = latency_histogram();
        (h.low(), h.high(), h.sigfig())
    });
    if let [one] = steps {
        let h = one.histogram(measure).into_owned();
        if (h.low(), h.high(), h.sigfig()) == *bounds {
            return h;
        }
    }
    let mut h = latency_histogram();
    for s in steps {
        // Same bounds on both sides: adding cannot fail.
        let _ = h.add(&*s.histogram(measure));
    }
    h
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
    let summaries: Vec<LatencySummary> = steps.iter().map(|s| s.latency_summary()).collect();
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
        wire: steps
            .first()
            .and_then(|s| s.wire)
            .filter(|w| steps.iter().all(|s| s.wire == Some(*w))),
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
    /// What its counts count, and so its rates ([`Unit::of`]; [`Unit::Request`] until
    /// the analysis reads the plan).
    pub unit: Unit,
    /// [`WorkloadBlock::wire_mixed`], found once when the levels were grouped: the tables
    /// ask it for every row.
    mixed: bool,
}

impl WorkloadBlock<'_> {
    /// Every step of the workload's cells.
    pub fn steps(&self) -> impl Iterator<Item = &StoredStep> {
        self.levels
            .iter()
            .flat_map(|l| &l.cells)
            .flat_map(|c| c.steps.iter().copied())
    }

    /// How the client talked to the contender of `cell`, when the workload's contenders
    /// were not all spoken to alike (a plan whose contenders set their own `protocol`,
    /// `streams` or `pipeline`): the label the tables put beside its name. `None` when
    /// every cell of the workload shares one way, or it was not recorded.
    pub fn wire_label(&self, cell: &Cell) -> Option<Wire> {
        cell.wire_label(self.wire_mixed())
    }

    /// True when the workload's contenders were not all spoken to alike.
    pub fn wire_mixed(&self) -> bool {
        self.mixed
    }

    /// [`WorkloadBlock::wire_mixed`] of the levels as they are.
    fn mixed_of(levels: &[LevelBlock]) -> bool {
        let mut cells = levels.iter().flat_map(|l| &l.cells);
        cells
            .next()
            .is_some_and(|first| cells.any(|c| c.wire != first.wire))
    }
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
}

/// Index of the step's contender among the run's contenders.
pub(crate) fn contender_of(run: &StoredRun, step: &StoredStep) -> Option<usize> {
    run.contenders.iter().position(|c| c.id == step.contender)
}

/// The contender the others are compared with: the one `marked` if it has steps, else the
/// first contender with steps.
pub(crate) fn baseline(run: &StoredRun, marked: Option<usize>) -> Option<usize> {
    let has_steps = |ci: usize| run.steps.iter().any(|s| contender_of(run, s) == Some(ci));
    match marked {
        Some(m) if has_steps(m) => Some(m),
        _ => (0..run.contenders.len()).find(|&i| has_steps(i)),
    }
}

/// The run's steps by workload (in the order first measured), then load level (in the
/// order first measured), then contender (plan order); steps of an unknown contender are
/// left out.
pub(crate) fn group(run: &StoredRun) -> Vec<WorkloadBlock<'_>> {
    let mut workloads: Vec<WorkloadBlock> = Vec::new();
    // Each level's steps with their contenders, `steps[w][l]`, gathered in one pass: a
    // search of every step for each level grows as their product (20,000 levels).
    let mut steps: Vec<Vec<Vec<(usize, &StoredStep)>>> = Vec::new();
    let mut named: HashMap<&str, usize> = HashMap::new();
    let mut at: HashMap<(usize, LevelKey), usize> = HashMap::new();
    let contenders = contender_index(run);
    for s in &run.steps {
        // A capacity search's steps are its own (crate::capacities), not cells.
        let Some(&ci) = contenders.get(&s.contender) else {
            continue;
        };
        if s.search.is_some() {
            continue;
        }
        let w = *named.entry(&s.workload).or_insert_with(|| {
            workloads.push(WorkloadBlock {
                name: &s.workload,
                levels: Vec::new(),
                unit: Unit::Request,
                mixed: false,
            });
            steps.push(Vec::new());
            workloads.len() - 1
        });
        let levels = &mut workloads[w].levels;
        let mut new_level = || {
            levels.push(LevelBlock {
                level: s.level,
                cells: Vec::new(),
            });
            steps[w].push(Vec::new());
            levels.len() - 1
        };
        // A level equal to no other (a rate that is not a number) has a block and no cells.
        let Some(key) = level_key(s.level) else {
            new_level();
            continue;
        };
        let l = *at.entry((w, key)).or_insert_with(new_level);
        steps[w][l].push((ci, s));
    }
    for (w, by_level) in workloads.iter_mut().zip(steps) {
        for (l, mine) in w.levels.iter_mut().zip(by_level) {
            l.cells = cells_of(l.level, mine);
        }
        w.mixed = WorkloadBlock::mixed_of(&w.levels);
    }
    workloads
}

/// Each contender's id with its index among the run's contenders (the first, should two
/// share an id).
fn contender_index(run: &StoredRun) -> HashMap<ContenderId, usize> {
    let mut index = HashMap::new();
    for (i, c) in run.contenders.iter().enumerate() {
        index.entry(c.id).or_insert(i);
    }
    index
}

/// A load level as a key equal for levels that are `==`: its kind, connections and rate's
/// bits (-0 as 0); `None` for a rate that is not a number, equal to no level.
pub type LevelKey = (bool, usize, u64);

/// See [`LevelKey`].
pub fn level_key(level: LoadLevel) -> Option<LevelKey> {
    match level {
        LoadLevel::Concurrency { connections } => Some((false, connections, 0)),
        LoadLevel::Rate { rps, .. } if rps.is_nan() => None,
        LoadLevel::Rate { rps, connections } => Some((true, connections, (rps + 0.0).to_bits())),
    }
}

/// The cells of one workload × level from its steps with their contenders' indices, one
/// per contender with steps there, in plan order; each cell's steps in repetition order.
fn cells_of(level: LoadLevel, mut steps: Vec<(usize, &StoredStep)>) -> Vec<Cell<'_>> {
    // Stable: steps of one contender, repetition and id keep the run's order.
    steps.sort_by_key(|(ci, s)| (*ci, s.repetition, s.id));
    let runs = steps.chunk_by(|a, b| a.0 == b.0);
    // Sized to its contenders: a level of one contender kept room for four cells (2 KB
    // each level; 42 MB of a 20,000-level run).
    let mut cells = Vec::with_capacity(runs.clone().count());
    cells.extend(runs.map(|run| cell(run[0].0, level, run.iter().map(|(_, s)| *s).collect())));
    cells
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

    /// Steps are grouped as they come: workloads and levels in the order first measured
    /// (a rate of -0 is the level of 0; one that is not a number is a level of its own,
    /// without cells), a cell per contender in plan order, its steps by repetition; a
    /// search's steps and a contender not in the run are left out.
    #[test]
    fn steps_group_into_workloads_levels_and_cells_in_order() {
        use shootout_model::find_max::SearchStep;
        use shootout_model::stored::StepId;
        let rate = |rps| LoadLevel::Rate {
            rps,
            connections: 4,
        };
        let mut run = crate::evidence::tests::run(&[("a", 100, 0), ("b", 100, 0)], 3);
        let base = run.steps[0].clone();
        let step = |id: i64, contender: i64, workload: &str, level, rep| StoredStep {
            id: StepId(id),
            contender: ContenderId(contender),
            workload: workload.into(),
            level,
            repetition: rep,
            ..base.clone()
        };
        let mut search = step(9, 0, "w", rate(1.0), 1);
        search.search = Some(SearchStep {
            verdict: None,
            ended: None,
        });
        run.steps = vec![
            step(1, 1, "w", rate(2.0), 2),
            step(2, 0, "w", rate(2.0), 1),
            step(3, 1, "w", rate(2.0), 1),
            step(4, 0, "v", rate(0.0), 1),
            step(5, 0, "w", rate(f64::NAN), 1),
            step(6, 7, "w", rate(3.0), 1),
            step(7, 0, "v", rate(-0.0), 2),
            step(8, 1, "w", LoadLevel::Concurrency { connections: 4 }, 1),
            search,
            step(10, 0, "w", rate(f64::NAN), 2),
        ];
        // Each workload's levels, each level's cells: contender and step ids.
        type Levels = Vec<(String, Vec<(usize, Vec<i64>)>)>;
        let shape: Vec<(&str, Levels)> = group(&run)
            .iter()
            .map(|w| {
                let levels = w
                    .levels
                    .iter()
                    .map(|l| {
                        let cells = l
                            .cells
                            .iter()
                            .map(|c| (c.contender, c.steps.iter().map(|s| s.id.0).collect()))
                            .collect();
                        (l.level.to_string(), cells)
                    })
                    .collect();
                (w.name, levels)
            })
            .collect();
        let want = vec![
            (
                "w",
                vec![
                    ("rate=2".to_string(), vec![(0, vec![2]), (1, vec![3, 1])]),
                    ("rate=NaN".to_string(), vec![]),
                    ("c=4".to_string(), vec![(1, vec![8])]),
                    ("rate=NaN".to_string(), vec![]),
                ],
            ),
            ("v", vec![("rate=0".to_string(), vec![(0, vec![4, 7])])]),
        ];
        assert_eq!(shape, want);
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
