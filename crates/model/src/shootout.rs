//! The vocabulary of a shootout (`shootout run`): load levels, the statuses of runs, steps
//! and contenders, the server's resource samples and the machine's facts. Shared by the
//! harness (which produces samples), the store (which keeps everything) and the reports.
//!
//! Each status owns its word (`as_str`, [`Display`](fmt::Display), [`FromStr`]): the
//! store's columns, the JSON and CSV reports and `shootout ls` all spell it through these,
//! so a status word is written once, here. The words are part of the store's file format
//! and of the JSON schema: changing one needs a migration.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
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

/// The detail stored with a contender that was started but never measured because the
/// run was interrupted before its first step: its status says as much, so a warning shows
/// no detail lines under it.
pub const INTERRUPTED_BEFORE_FIRST: &str = "the run was interrupted before its first step";

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

/// What else ran on a step's CPUs (the load's and the contenders'): the machine was quiet
/// when other processes used little of them and the hypervisor took little. Measured from
/// `/proc/stat` at the step's start and end, less the CPU time of shootout itself and of
/// the contender's processes; the run's other contenders, up but not measured in the
/// step, are counted apart (`contenders`): they are the run's own, not strangers; so is
/// the kernel's interrupt work (`interrupts`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OtherLoad {
    /// CPUs watched.
    pub cpus: u32,
    /// CPU time other processes used on them, in CPUs (CPU-seconds per second of the
    /// step: 0.5 is half a CPU busy all along); `None` when it cannot be told apart from the
    /// server's (`shootout load` with no `--cpus`).
    pub others: Option<f64>,
    /// CPU time the run's other contenders (up, idle in this step) used, in CPUs, apart
    /// from `others`; 0 when there were none (and in steps stored before it was counted).
    #[serde(default)]
    pub contenders: f64,
    /// CPU time the kernel spent serving interrupts (`/proc/stat`'s irq and softirq) on
    /// them, in CPUs, apart from `others`: mostly the run's own traffic (loopback packets),
    /// which a kernel with tick accounting charges to no process when it comes while a CPU
    /// is idle. Not judged; 0 in steps stored before it was counted, whose `others` hold it.
    #[serde(default)]
    pub interrupts: f64,
    /// Share of the watched CPUs' time the hypervisor gave to other machines (steal), 0 to 1.
    pub steal: f64,
    /// The machine's load average over the last minute, at the step's end (our own threads
    /// included).
    pub load_avg: f64,
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

/// A word that names no status of its kind (e.g. a damaged store).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{word}' is not a {what} status")]
pub struct UnknownStatus {
    /// What kind of status was read: `run`, `step` or `contender`.
    pub what: &'static str,
    /// The word found.
    pub word: String,
}

/// Gives a status enum its fixed snake_case words: `as_str`, `ALL`, `Display` and
/// `FromStr` (exact words only: `Interrupted` is not `interrupted`).
macro_rules! status_words {
    ($ty:ident, $what:literal { $($variant:ident => $word:literal,)* }) => {
        impl $ty {
            /// Every status, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)*];

            /// The status's word, as stored and as printed in JSON and CSV.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word,)*
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = UnknownStatus;

            fn from_str(word: &str) -> Result<Self, Self::Err> {
                match word {
                    $($word => Ok($ty::$variant),)*
                    _ => Err(UnknownStatus { what: $what, word: word.to_string() }),
                }
            }
        }
    };
}

status_words!(RunStatus, "run" {
    Running => "running",
    Complete => "complete",
    Interrupted => "interrupted",
    Failed => "failed",
    Abandoned => "abandoned",
});

status_words!(StepStatus, "step" {
    Complete => "complete",
    Interrupted => "interrupted",
    ContenderDied => "contender_died",
});

status_words!(ContenderStatus, "contender" {
    Measured => "measured",
    SetupFailed => "setup_failed",
    Exited => "exited",
    NeverReady => "never_ready",
    VerificationFailed => "verification_failed",
    Crashed => "crashed",
    Skipped => "skipped",
    Interrupted => "interrupted",
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The words are serde's too: the serde form and the word must never drift apart.
    fn same_as_serde<T: Serialize + FromStr + fmt::Display + PartialEq + fmt::Debug + Copy>(
        all: &[T],
    ) where
        T::Err: fmt::Debug,
    {
        for &s in all {
            let word = s.to_string();
            assert_eq!(serde_json_like(&s), word);
            assert_eq!(word.parse::<T>().unwrap(), s);
        }
    }

    /// The serde name of a unit variant, read through TOML (the model's serde format).
    fn serde_json_like<T: Serialize>(v: &T) -> String {
        #[derive(Serialize)]
        struct Wrap<'a, T> {
            v: &'a T,
        }
        let text = toml::to_string(&Wrap { v }).unwrap();
        text.trim()
            .strip_prefix("v = \"")
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(&text)
            .to_string()
    }

    #[test]
    fn status_words_round_trip_and_match_serde() {
        same_as_serde(RunStatus::ALL);
        same_as_serde(StepStatus::ALL);
        same_as_serde(ContenderStatus::ALL);
        assert_eq!(ContenderStatus::ALL.len(), 8);
        assert_eq!(
            "contender_died".parse::<StepStatus>(),
            Ok(StepStatus::ContenderDied)
        );
        let e = "Interrupted".parse::<RunStatus>().unwrap_err();
        assert_eq!(e.to_string(), "'Interrupted' is not a run status");
    }
}
