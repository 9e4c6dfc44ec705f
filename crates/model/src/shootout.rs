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
    /// Still running (or shootout died without a word and no shootout has looked since).
    Running,
    /// Every step was done.
    Complete,
    /// Ctrl-C or SIGTERM ended it; completed steps are kept.
    Interrupted,
    /// It could not go on (e.g. no contender could be measured).
    Failed,
    /// Its shootout died without ending it (SIGKILL, a crash, a second Ctrl-C, a full
    /// disk): a later shootout found it `running` with its owner gone and marked it so.
    /// The steps stored before are kept.
    Abandoned,
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
    /// Started (or being set up), but the run was interrupted or abandoned before any of
    /// its steps was measured.
    Interrupted,
}

/// The shootout process that owns a run, identified well enough that a later shootout
/// can tell whether it is still alive: a pid alone may have been reused, so its start
/// time comes with it, and the machine and pid namespace say whether the pid means
/// anything here at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessOwner {
    /// The host name of the machine it runs on.
    pub host: String,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`): a reboot ends every run.
    pub boot_id: String,
    /// Its pid namespace (`/proc/self/ns/pid`, e.g. `pid:[4026531836]`).
    pub pid_ns: String,
    /// Its process id.
    pub pid: u32,
    /// Its start time after boot, in clock ticks (field 22 of `/proc/PID/stat`).
    pub start_ticks: u64,
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
