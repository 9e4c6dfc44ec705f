//! The journey steps and journeys of a stored run, for `shootout report`, `compare` and
//! the rankings of `run`: per workload × load level × contender, the repetitions' counts
//! summed and their histograms merged (so a step's percentiles are exact over every
//! repetition), each repetition's good answers per second and p99 kept for the test
//! [`compare`](crate::compare) applies per contender (Mann–Whitney on the repetitions),
//! and the contenders ranked per journey by good journeys per second (median over
//! repetitions).
//!
//! Seams: reads a [`StoredRun`] only, through [`StoredStep::unpacked`] (a stored step keeps
//! its histograms packed). Steps without journeys (a plain workload, a request list) are
//! left out.

use crate::cells::median;
use crate::compare::Change;
use hdrhistogram::Histogram;
use shootout_model::result::second_histogram;
use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::{per_second, FailureCounts, LatencySummary, LoadLevel, TargetStats};

/// A journey step or a journey over a cell's repetitions.
#[derive(Debug, Clone)]
pub struct Kind {
    /// `journey › step`, or the journey's name.
    pub label: String,
    /// Requests completed (journeys: ended), all repetitions.
    pub completed: u64,
    /// Of which ok.
    pub ok: u64,
    /// Failed per class, all repetitions (journeys: under their first failed step's).
    pub failures: FailureCounts,
    /// Steps failed unsent (journeys: whose first failed step was), all repetitions.
    pub unsent: u64,
    /// Latency (journeys: duration), µs, every repetition's merged.
    pub latency: Histogram<u64>,
    /// A journey's busy time (its duration less its think times), µs, every repetition's
    /// merged; `None` for a step, and for a journey unless every journey of every
    /// repetition has one (a step stored before it was measured leaves it out: a part
    /// would pass for the whole).
    pub busy: Option<Histogram<u64>>,
    /// Good answers (journeys: good journeys) per second, one per repetition.
    pub ok_per_s: Vec<f64>,
    /// p99 (ms), one per repetition that answered.
    pub p99_ms: Vec<f64>,
    /// A journey's busy time's p99 (ms), one per repetition that kept it and ended a
    /// journey.
    pub busy_p99_ms: Vec<f64>,
}

impl Kind {
    /// Failed requests (journeys).
    pub fn failed(&self) -> u64 {
        self.completed - self.ok.min(self.completed)
    }

    /// The median over repetitions of good answers (journeys) per second.
    pub fn ok_rate(&self) -> f64 {
        median(&self.ok_per_s)
    }

    /// Latency summary (ms) of the merged histogram.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary::of(&self.latency)
    }

    /// The busy time's summary (ms), when kept.
    pub fn busy_summary(&self) -> Option<LatencySummary> {
        self.busy.as_ref().map(LatencySummary::of)
    }

    fn new(t: &TargetStats) -> Kind {
        Kind {
            label: t.label.clone(),
            completed: 0,
            ok: 0,
            failures: FailureCounts::default(),
            unsent: 0,
            latency: second_histogram(),
            busy: t.busy.as_ref().map(|_| second_histogram()),
            ok_per_s: Vec::new(),
            p99_ms: Vec::new(),
            busy_p99_ms: Vec::new(),
        }
    }

    /// Adds one repetition's counts (`duration`: the step's measured length).
    fn add(&mut self, t: &TargetStats, duration: std::time::Duration) {
        self.completed = self.completed.saturating_add(t.completed);
        self.ok = self.ok.saturating_add(t.ok);
        for (a, b) in self.failures.0.iter_mut().zip(t.failures.0) {
            *a = a.saturating_add(b);
        }
        self.unsent = self.unsent.saturating_add(t.unsent);
        // Both of a step's recorder's bounds (the store checked them when read).
        let _ = self.latency.add(&t.latency);
        self.busy = match (self.busy.take(), &t.busy) {
            (Some(mut sum), Some(b)) => sum.add(b).is_ok().then_some(sum),
            _ => None,
        };
        if let Some(b) = t.busy.as_ref().filter(|b| !b.is_empty()) {
            self.busy_p99_ms
                .push(b.value_at_quantile(0.99) as f64 / 1e3);
        }
        self.ok_per_s.push(per_second(t.ok, duration));
        if !t.latency.is_empty() {
            self.p99_ms
                .push(t.latency.value_at_quantile(0.99) as f64 / 1e3);
        }
    }
}

/// One contender's journey steps and journeys at one workload and load level.
#[derive(Debug, Clone)]
pub struct Block {
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
    /// The contender's position in the run's contenders.
    pub contender: usize,
    /// Repetitions merged.
    pub repetitions: usize,
    /// The journey steps, in the journey file's order.
    pub steps: Vec<Kind>,
    /// The journeys, in the file's order.
    pub journeys: Vec<Kind>,
}

/// Every cell of `run` whose steps ran journeys, in the order first measured. Steps whose
/// steps or journeys are labelled otherwise than the cell's first (another journey file)
/// start a cell of their own rather than mixing.
pub fn blocks(run: &StoredRun) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for s in &run.steps {
        if s.result.journeys.is_empty() {
            continue;
        }
        let Some(contender) = run.contenders.iter().position(|c| c.id == s.contender) else {
            continue;
        };
        add_step(&mut out, s, contender);
    }
    out
}

fn same_labels(a: &[Kind], b: &[TargetStats]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(k, t)| k.label == t.label)
}

fn add_step(out: &mut Vec<Block>, s: &StoredStep, contender: usize) {
    let r = s.unpacked();
    let at = out.iter().position(|b| {
        b.workload == s.workload
            && b.level == s.level
            && b.contender == contender
            && same_labels(&b.steps, &r.targets)
            && same_labels(&b.journeys, &r.journeys)
    });
    let block = match at {
        Some(i) => &mut out[i],
        None => {
            out.push(Block {
                workload: s.workload.clone(),
                level: s.level,
                contender,
                repetitions: 0,
                steps: r.targets.iter().map(Kind::new).collect(),
                journeys: r.journeys.iter().map(Kind::new).collect(),
            });
            out.last_mut().expect("just pushed")
        }
    };
    block.repetitions += 1;
    for (k, t) in block.steps.iter_mut().zip(&r.targets) {
        k.add(t, r.duration);
    }
    for (k, t) in block.journeys.iter_mut().zip(&r.journeys) {
        k.add(t, r.duration);
    }
    // The busy time is shown for every journey or none (as `shootout load` does).
    if block.journeys.iter().any(|k| k.busy.is_none()) {
        for k in &mut block.journeys {
            k.busy = None;
        }
    }
}

/// The contenders of one workload and level ranked by one journey's good journeys per
/// second (median over repetitions), best first: `(contender, rate)`.
#[derive(Debug, Clone, PartialEq)]
pub struct JourneyRanking {
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
    /// The journey's name.
    pub journey: String,
    /// `(contender, good journeys per second)`, best first.
    pub order: Vec<(usize, f64)>,
}

/// One ranking per journey of each workload × level that two contenders or more ran.
pub fn rankings(blocks: &[Block]) -> Vec<JourneyRanking> {
    let mut out: Vec<JourneyRanking> = Vec::new();
    for b in blocks {
        for j in &b.journeys {
            let entry = (b.contender, j.ok_rate());
            match out
                .iter_mut()
                .find(|r| r.workload == b.workload && r.level == b.level && r.journey == j.label)
            {
                Some(r) => r.order.push(entry),
                None => out.push(JourneyRanking {
                    workload: b.workload.clone(),
                    level: b.level,
                    journey: j.label.clone(),
                    order: vec![entry],
                }),
            }
        }
    }
    out.retain(|r| r.order.len() > 1);
    for r in &mut out {
        r.order.sort_by(|a, b| b.1.total_cmp(&a.1));
    }
    out
}

/// One step (or journey) of one contender × workload × level in two runs: its good
/// answers per second and its p99, each compared as [`Change::of`] compares a contender's
/// (Mann–Whitney on the repetitions).
#[derive(Debug, Clone)]
pub struct KindChange {
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
    /// The contender's name.
    pub contender: String,
    /// The step's label (`journey › step`) or the journey's name.
    pub label: String,
    /// A journey, not a step.
    pub journey: bool,
    /// Good answers (journeys) per second, A to B.
    pub ok_rate: Change,
    /// p99 (ms), A to B.
    pub p99: Change,
    /// A journey's busy time's p99 (ms; its duration less its think times), A to B,
    /// compared as `p99` is: `None` for a step, and for a journey unless both runs kept
    /// it for every journey of every repetition.
    pub busy_p99: Option<Change>,
}

/// Every step and journey measured in both runs for the same contender name × workload ×
/// level, in run B's order.
pub fn changes(a: &StoredRun, b: &StoredRun) -> Vec<KindChange> {
    let (blocks_a, blocks_b) = (blocks(a), blocks(b));
    let name = |run: &StoredRun, i: usize| run.contenders[i].name.clone();
    let mut out = Vec::new();
    for bb in &blocks_b {
        let contender = name(b, bb.contender);
        let Some(ba) = blocks_a.iter().find(|x| {
            x.workload == bb.workload && x.level == bb.level && name(a, x.contender) == contender
        }) else {
            continue;
        };
        for (kinds_b, kinds_a, journey) in [
            (&bb.steps, &ba.steps, false),
            (&bb.journeys, &ba.journeys, true),
        ] {
            for kb in kinds_b {
                let Some(ka) = kinds_a.iter().find(|k| k.label == kb.label) else {
                    continue;
                };
                out.push(KindChange {
                    workload: bb.workload.clone(),
                    level: bb.level,
                    contender: contender.clone(),
                    label: kb.label.clone(),
                    journey,
                    ok_rate: Change::of(&ka.ok_per_s, &kb.ok_per_s, true),
                    p99: Change::of(&ka.p99_ms, &kb.p99_ms, false),
                    busy_p99: (ka.busy.is_some() && kb.busy.is_some())
                        .then(|| Change::of(&ka.busy_p99_ms, &kb.busy_p99_ms, false)),
                });
            }
        }
    }
    out
}
