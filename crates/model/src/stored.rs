//! The read model: what the store gives back — runs, their contenders and steps, and the
//! ids that tie them together — as plain data. The store (`shootout-store`) fills these
//! from SQLite; the analysis and the reports read them and nothing else, so neither needs
//! the store (nor SQLite) to build.
//!
//! Seams: no I/O here. The store writes through its own borrowed records (`NewRun`,
//! `ContenderRecord`, `StepRecord`) and reads back into these types. Units: wall-clock
//! instants are [`SystemTime`]; a step's histograms hold microseconds, as in
//! [`RunResult`].

use crate::{ContenderStatus, LoadLevel, MachineFacts, ProcessOwner, ResourceSample};
use crate::{RunResult, RunStatus, StepStatus, Wire};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::time::SystemTime;

/// A run's id (its row id in the store's `runs` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

/// A step's id (its row id in the store's `steps` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepId(pub i64);

/// A contender's id within a store (its row id in `contenders`; unique across runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContenderId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Its id.
    pub id: RunId,
    /// The plan's name.
    pub name: String,
    /// The plan file's text, as the user gave it.
    pub plan_text: String,
    /// The resolved plan, as JSON text (read it with
    /// [`ResolvedPlan::parse`](crate::resolved::ResolvedPlan::parse)).
    pub plan_resolved: String,
    /// The machine the run was made on.
    pub machine: MachineFacts,
    /// Wall-clock start.
    pub started: SystemTime,
    /// Wall-clock end; `None` while running (or if shootout died without a word).
    pub ended: Option<SystemTime>,
    /// How it ended ([`RunStatus::Running`] until the store is told it finished).
    pub status: RunStatus,
}

/// One line of `shootout ls`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// The plan's name.
    pub name: String,
    /// Wall-clock start.
    pub started: SystemTime,
    /// Wall-clock end, if it ended.
    pub ended: Option<SystemTime>,
    /// How it ended.
    pub status: RunStatus,
    /// Contenders recorded.
    pub contenders: usize,
    /// Steps recorded.
    pub steps: usize,
}

/// A contender as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContenderRow {
    /// Its id.
    pub id: ContenderId,
    /// The run it belongs to.
    pub run: RunId,
    /// Its name in the plan.
    pub name: String,
    /// The command that starts it, or the URL.
    pub command: String,
    /// The others are compared with it.
    pub baseline: bool,
    /// What became of it.
    pub status: ContenderStatus,
    /// Why it failed; empty when there is nothing to say.
    pub detail: String,
    /// Its version text.
    pub version: Option<String>,
    /// Where its standard output was captured.
    pub stdout_log: Option<PathBuf>,
    /// Where its standard error was captured.
    pub stderr_log: Option<PathBuf>,
}

/// A run left `running`, as a later shootout examines it (the store's
/// `unfinished_runs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedRun {
    /// Its id.
    pub id: RunId,
    /// The plan's name.
    pub name: String,
    /// The shootout process that runs it; `None` for runs stored by an older shootout.
    pub owner: Option<ProcessOwner>,
    /// Its contenders' names and process markers, in the order they were added.
    pub contenders: Vec<(String, Option<String>)>,
}

/// A step (contender × workload × load level × repetition) as read back from the store.
#[derive(Debug, Clone)]
pub struct StoredStep {
    /// Its id.
    pub id: StepId,
    /// The run it belongs to.
    pub run: RunId,
    /// The contender measured.
    pub contender: ContenderId,
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
    /// Which repetition (1-based).
    pub repetition: u32,
    /// Wall-clock start of the step.
    pub started: SystemTime,
    /// Wall-clock end of the step.
    pub ended: SystemTime,
    /// How the step ended.
    pub status: StepStatus,
    /// What the load run measured. As the store reads it back, its warnings hold only the
    /// HTTP/2 streams limit, a fact; the reader derives the others from the numbers
    /// (`shootout_analysis::load_warnings::refresh_stored`).
    pub result: RunResult,
    /// The contender's process tree during the step, oldest first.
    pub resources: Vec<ResourceSample>,
    /// How the client talked to the contender (protocol, streams, pipeline); `None` for
    /// steps stored before shootout recorded it.
    pub wire: Option<Wire>,
    /// What else ran on the step's CPUs; `None` for steps stored before shootout
    /// recorded it, or when it could not be read.
    pub other_load: Option<crate::OtherLoad>,
    /// The step was one of a capacity search's (its level is the rate tried), with its
    /// verdict; `None` for a step of a sweep of the plan's levels.
    pub search: Option<crate::find_max::SearchStep>,
}

/// One run as the reports need it: the run, its contenders (in plan order) and its steps
/// (in the order measured), everything read from the store.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The run.
    pub run: RunRow,
    /// Its contenders.
    pub contenders: Vec<ContenderRow>,
    /// Its steps, each with its rebuilt `RunResult` and resource samples.
    pub steps: Vec<StoredStep>,
    /// The other runs whose steps were added to this one's (`shootout report --runs`);
    /// empty for a run as stored.
    pub also: Vec<RunId>,
}
