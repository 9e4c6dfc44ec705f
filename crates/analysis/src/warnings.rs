//! The warnings of a stored run: what the reader must know before reading the tables —
//! how the run ended, a baseline that was not measured, contenders not measured, steps
//! that ended early, the load runs' own warnings (one per cell and kind) and noisy cells.
//! Each is a [`RunWarning`] carrying the data its wording needs; they are derived once,
//! with the rest of a run's analysis ([`crate::analysis`]), and the renderers (text,
//! Markdown, JSON, HTML) word them, one function per format, and never re-derive a
//! condition.
//!
//! Seams: types only, over the model's; [`RunWarning::kind`] is the stable word for
//! machines (the JSON's `kind`).

use shootout_model::stored::RunId;
use shootout_model::{
    ContenderStatus, FailureCounts, LoadLevel, OtherLoad, RunStatus, StepStatus, Warning,
};

/// Lines of a contender's failure detail the text reports quote.
pub(crate) const DETAIL_LINES: usize = 4;

/// Where a cell's warning applies: contender × workload × load level.
#[derive(Debug, Clone, PartialEq)]
pub struct CellAt {
    /// The contender's name.
    pub contender: String,
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
}

/// Something the reader must know before reading the tables, most important first.
// `Load` carries a cell's failures per class (32 counters); a run has a few warnings, so
// the size is not worth a box at every use.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum RunWarning {
    /// The run did not end complete (`status` is never [`RunStatus::Complete`]).
    RunEnded {
        /// How it ended.
        status: RunStatus,
        /// Steps stored.
        steps: usize,
    },
    /// The contender marked as baseline has no step: the others are compared with another.
    BaselineNotMeasured {
        /// The contender the plan marked.
        marked: String,
        /// The contender used instead.
        used: String,
    },
    /// A contender was not measured, or not to the end.
    NotMeasured {
        /// Its name.
        contender: String,
        /// What became of it (never [`ContenderStatus::Measured`]).
        status: ContenderStatus,
        /// True when some of its steps were stored before it stopped.
        has_steps: bool,
        /// Why, as stored (exit status, stderr tail, verification report); empty when
        /// there is nothing to say (a skipped contender).
        detail: String,
    },
    /// Runs read as one (`shootout report --runs`) measured cells with steps of unlike
    /// lengths (more than [`UNLIKE_STEPS`](crate::cells::UNLIKE_STEPS) times apart: a
    /// `--quick` run with a full one), as `shootout compare` says of a pair: the cells'
    /// medians and `±` pool unlike measurements.
    UnlikeSteps {
        /// The first such cell.
        at: CellAt,
        /// Its steps in each run, in the order the runs were given: the run, the median
        /// measured length of its steps in seconds, and how many steps.
        runs: Vec<(RunId, f64, usize)>,
        /// Cells so measured, this one included.
        cells: usize,
    },
    /// One repetition of a cell ended before its time.
    StepEndedEarly {
        /// The cell.
        at: CellAt,
        /// Which repetition (1-based).
        repetition: u32,
        /// How it ended (never [`StepStatus::Complete`]).
        status: StepStatus,
    },
    /// A load run's own warning, once per cell and kind.
    Load {
        /// The cell.
        at: CellAt,
        /// The first such warning of the cell's repetitions; for a saturated generator, the
        /// busiest thread of any repetition.
        warning: Warning,
        /// Repetitions that raised it.
        found_in: usize,
        /// Repetitions of the cell.
        reps: usize,
        /// The cell's failed requests by class, summed over its repetitions.
        failures: FailureCounts,
        /// The cell's completed requests, summed.
        completed: u64,
    },
    /// The repetitions of a cell disagree by more than [`NOISY`](crate::NOISY) of the
    /// median req/s.
    Noisy {
        /// The cell.
        at: CellAt,
        /// Slowest repetition's req/s.
        rps_min: f64,
        /// Fastest repetition's req/s.
        rps_max: f64,
        /// Median req/s.
        rps: f64,
        /// The range as a share of the median.
        range_share: f64,
        /// Repetitions.
        reps: usize,
        /// True when the plan already pinned server and load to different CPUs.
        pinned: bool,
        /// What the rates count a second (req/s, or the workload's gRPC unit).
        unit: crate::unit::Unit,
    },
    /// Other processes (or the hypervisor) took the CPUs of the cell's steps: the machine
    /// was not quiet (see [`crate::quiet`]).
    BusyMachine {
        /// The cell.
        at: CellAt,
        /// What ran besides, in the busiest such repetition.
        busiest: OtherLoad,
        /// Repetitions that were not quiet.
        found_in: usize,
        /// Repetitions of the cell.
        reps: usize,
    },
    /// Other processes (or the hypervisor) took the CPUs of steps of a contender's
    /// capacity search (its steps are no cells: each is a rate of its own).
    BusySearch {
        /// The contender's name.
        contender: String,
        /// The workload searched.
        workload: String,
        /// What ran besides, in the busiest such step.
        busiest: OtherLoad,
        /// Steps that were not quiet.
        found_in: usize,
        /// Steps of its searches.
        steps: usize,
    },
}

impl RunWarning {
    /// A stable word for machines: `interrupted`, `not_measured`, `generator_saturated`, …
    pub fn kind(&self) -> &'static str {
        match self {
            RunWarning::RunEnded { status, .. } => match status {
                RunStatus::Interrupted => "interrupted",
                RunStatus::Running => "not_finished",
                RunStatus::Abandoned => "abandoned",
                RunStatus::Failed | RunStatus::Complete => "run_failed",
            },
            RunWarning::BaselineNotMeasured { .. } => "baseline_not_measured",
            RunWarning::NotMeasured { .. } => "not_measured",
            RunWarning::UnlikeSteps { .. } => "unlike_steps",
            RunWarning::StepEndedEarly { .. } => "step_ended_early",
            RunWarning::Load { warning, .. } => warning.kind(),
            RunWarning::Noisy { .. } => "noisy",
            RunWarning::BusyMachine { .. } | RunWarning::BusySearch { .. } => "busy_machine",
        }
    }

    /// The contender concerned, if one is.
    pub fn contender(&self) -> Option<&str> {
        match self {
            RunWarning::RunEnded { .. } => None,
            RunWarning::BaselineNotMeasured { marked, .. } => Some(marked),
            RunWarning::NotMeasured { contender, .. }
            | RunWarning::BusySearch { contender, .. } => Some(contender),
            _ => self.cell().map(|at| at.contender.as_str()),
        }
    }

    /// The cell concerned, if one is.
    pub fn cell(&self) -> Option<&CellAt> {
        match self {
            RunWarning::StepEndedEarly { at, .. }
            | RunWarning::Load { at, .. }
            | RunWarning::Noisy { at, .. }
            | RunWarning::BusyMachine { at, .. } => Some(at),
            _ => None,
        }
    }

    /// The first non-empty lines of a contender's detail, at most four, with
    /// their common indentation removed; empty for other warnings, and for a detail that
    /// only repeats what the warning's sentence says (interrupted before its first step).
    pub fn detail_lines(&self) -> Vec<String> {
        match self {
            RunWarning::NotMeasured { detail, .. }
                if detail.trim() == shootout_model::shootout::INTERRUPTED_BEFORE_FIRST =>
            {
                Vec::new()
            }
            RunWarning::NotMeasured { detail, .. } => detail_lines(detail),
            _ => Vec::new(),
        }
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
