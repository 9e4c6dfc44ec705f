//! shootout's contender lifecycle: set up, start, wait until ready, sample, stop.
//!
//! A contender is a server command from a plan (placeholders already substituted by the
//! caller) described by a [`ContenderConfig`]. The life of one contender:
//!
//! ```text
//! run_setup ─► Contender::start ─► wait_ready ─► (verify, warm up, measure: not here)
//!                                      │            sample() / sampler() all along
//!                                      ▼
//!                                 stop(grace)  ── or drop: SIGKILL, never an orphan
//! ```
//!
//! Each contender runs as `sh -c "exec <command>"` in a process group of its own, with a
//! marker in its environment that every descendant inherits (see the `tag` module). Its
//! processes — group members, their descendants, and daemons that left the tree with
//! `setsid` and a double fork, found by the marker — are what is sampled and what is
//! stopped, with whatever its setup left running. Their death is tied to shootout's: by
//! `PR_SET_PDEATHSIG` for the leader and by a watchdog process for the rest (see the
//! `launch` module), and a Ctrl-C handler can call [`kill_live_groups`]. If even the
//! watchdog is gone, a later shootout finds what is left by the marker
//! ([`owner_state`], [`stop_marked`]).
//!
//! Around the lifecycle, the facts stored with a run ([`machine_facts`], from `/proc`;
//! [`Contender::serving_version`], the version of what listens on a contender's port) and, when a contender's verification
//! fails, one of its answers to show ([`sample_answer`]).
//!
//! Seams: the CLI's orchestration drives this crate and hands the [`ResourceSample`]s
//! (from `shootout-model`) to the store. The harness never imports the engine nor the
//! engine the harness: the readiness probe and the sample answer here are a dozen lines
//! of hand-written HTTP each. Errors are typed ([`HarnessError`]); the one fact read
//! from a server's words, that its port was taken, is a field of the error
//! ([`HarnessError::port_taken`]).
//! Linux only (`/proc`, `prctl`, `sched_setaffinity`).
//!
//! [`ResourceSample`]: shootout_model::ResourceSample

mod accept_queue;
mod answer;
mod config;
mod contender;
mod error;
mod facts;
mod family;
mod idle;
mod launch;
mod logs;
mod others;
mod probe;
mod procfs;
mod sampler;
mod serving;
mod setup;
mod tag;
#[cfg(test)]
mod testing;

pub use accept_queue::AcceptWatch;
pub use answer::sample_answer;
pub use config::{process_tag, ContenderConfig};
pub use contender::{program_of, Contender, StopOutcome};
pub use error::HarnessError;
pub use facts::{machine_facts, version_of};
pub use family::{kill_live_groups, stop_marked, StoppedProcess};
pub use idle::{wait_idle, Idle};
pub use others::{other_load, parse_netstat, parse_proc_stat, CpuTicks, CpuWatch, ListenWatch};
pub use sampler::Sampler;
pub use setup::{run_setup, INTERRUPT_GRACE};
pub use tag::{current_owner, owner_prefix, owner_state, OwnerState};

use std::io;
use std::net::{Ipv4Addr, TcpListener};

/// A TCP port that is free on 127.0.0.1 right now (the OS picks it: bind to port 0, read
/// the port, close). Another process could take it before the contender binds it;
/// [`Contender::start`] refuses a port that already answers.
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_can_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Contender>();
        send_sync::<Sampler>();
        send_sync::<HarnessError>();
        send_sync::<ContenderConfig>();
    }

    #[test]
    fn free_port_is_an_ephemeral_port() {
        // (Binding it again would race with the other tests' listeners.)
        let port = free_port().unwrap();
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
        let range: Vec<u16> = range
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert!(
            (range[0]..=range[1]).contains(&port),
            "{port} not in {range:?}"
        );
    }
}
