//! The vocabulary of a shootout (`shootout run`): load levels, the statuses of runs, steps
//! and contenders, the server's resource samples and the machine's facts. Shared by the
//! harness (which produces samples), the store (which keeps everything) and the reports.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// One load level of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoadLevel {
    /// Closed loop with this many connections.
    Concurrency {
        /// Connections.
        connections: usize,
    },
    /// Open loop at this rate (requests per second) with this many connections.
    Rate {
        /// Requests per second.
        rps: f64,
        /// Connections.
        connections: usize,
    },
}

impl fmt::Display for LoadLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadLevel::Concurrency { connections } => write!(f, "c={connections}"),
            LoadLevel::Rate { rps, .. } => write!(f, "rate={rps}"),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running (or shootout died without a word).
    Running,
    /// Every step was done.
    Complete,
    /// Ctrl-C or SIGTERM ended it; completed steps are kept.
    Interrupted,
    /// It could not go on (e.g. no contender could be measured).
    Failed,
}

/// How a step (contender × workload × level × repetition) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Measured to its end.
    Complete,
    /// Stopped by Ctrl-C; what it measured until then is kept.
    Interrupted,
    /// The contender died during the step.
    ContenderDied,
}

/// What became of a contender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContenderStatus {
    /// Started, ready, verified, measured.
    Measured,
    /// Its setup command failed.
    SetupFailed,
    /// It exited before it was ready.
    Exited,
    /// It never answered its ready probe in time.
    NeverReady,
    /// Its answers did not meet the expectations: not measured.
    VerificationFailed,
    /// It died while being measured.
    Crashed,
    /// Skipped (`--only`, or the run was interrupted before its turn).
    Skipped,
}

/// The contender's process tree at one instant (all its processes summed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ResourceSample {
    /// Time since the step started.
    pub at: Duration,
    /// User CPU time consumed so far by the tree (live processes plus reaped children).
    pub cpu_user: Duration,
    /// System CPU time consumed so far by the tree.
    pub cpu_sys: Duration,
    /// Resident memory of all processes (bytes).
    pub rss_bytes: u64,
    /// Processes in the tree.
    pub processes: u32,
    /// Threads in the tree.
    pub threads: u32,
    /// Voluntary + involuntary context switches so far.
    pub ctx_switches: u64,
    /// Open file descriptors.
    pub fds: u32,
}

/// Facts of the machine a run was made on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineFacts {
    /// CPU model name.
    pub cpu_model: String,
    /// Online CPUs.
    pub cores: usize,
    /// Kernel release.
    pub kernel: String,
    /// Total memory (bytes).
    pub memory_bytes: u64,
    /// Versions of tools involved (shootout, contenders' binaries…).
    pub versions: BTreeMap<String, String>,
}
