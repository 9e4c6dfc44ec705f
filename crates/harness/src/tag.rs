//! The marker every process the harness starts carries, and what a later shootout does
//! with it: [`ProcessOwner`] identities, [`owner_state`], [`stop_marked`].
//!
//! Every setup and contender gets `SHOOTOUT_TAG=<pid>.<start>/<key>` in its environment,
//! where `<pid>.<start>` names this shootout process (its pid and its start time in
//! clock ticks, so a reused pid is not mistaken for it) and `<key>` is the contender's
//! key (a setup's processes get `<pid>.<start>/<key>/setup`). Every descendant inherits
//! it through fork, exec, `setsid` and double forks, and it stays readable in
//! `/proc/PID/environ` for the process's life: that is how a daemon that left the
//! contender's process group and tree is still found, sampled and stopped.
//!
//! Why a marker rather than a cgroup per contender: cgroup v2 needs a writable, delegated
//! hierarchy, which containers and unprivileged users usually do not have (nor did the
//! machines this was written on); the marker works everywhere `/proc` does. Its limit: a
//! process that overwrites its own environment area (`setproctitle` as nginx and
//! PostgreSQL do) after leaving the tree is lost from sight; a server run in the
//! foreground (`daemon off;`) never leaves the tree.
//!
//! Seams: the CLI records [`current_owner`] and each contender's [`crate::ContenderConfig::tag`]
//! in the store; on a later start it asks [`owner_state`] about runs left `running`
//! and stops what [`stop_marked`] finds of a dead owner.

use crate::launch;
use crate::procfs::{self, Family, Search};
use shootout_model::ProcessOwner;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The environment variable that marks every process the harness starts.
pub const VAR: &str = "SHOOTOUT_TAG";

/// How often stopping looks whether the marked processes are gone.
const POLL: Duration = Duration::from_millis(10);

/// Whether the marker `value` belongs to `tag`: equal, or (with `sub_tags`) `tag/…`.
pub(crate) fn matches(value: &str, tag: &str, sub_tags: bool) -> bool {
    value == tag
        || (sub_tags
            && value
                .strip_prefix(tag)
                .is_some_and(|rest| rest.starts_with('/')))
}

/// The prefix of the markers of every process started by shootout process `owner`.
pub fn owner_prefix(owner: &ProcessOwner) -> String {
    format!("{}.{}", owner.pid, owner.start_ticks)
}

/// The marker of the processes of the contender with `key`, started by this process.
pub(crate) fn tag_of(key: &str) -> String {
    format!("{}/{key}", owner_prefix(current_owner()))
}

/// This shootout process, as the owner of what it starts.
pub fn current_owner() -> &'static ProcessOwner {
    static OWNER: OnceLock<ProcessOwner> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        ProcessOwner {
            host: host(),
            boot_id: boot_id(),
            pid_ns: pid_ns(),
            pid,
            start_ticks: procfs::stat(procfs::own_pid()).map_or(0, |s| s.starttime),
        }
    })
}

fn host() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

fn boot_id() -> String {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}

fn pid_ns() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Whether the shootout process that owns a run is still there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerState {
    /// It runs: the run is in progress.
    Alive,
    /// It is gone (its pid is free or now names another process, or the machine was
    /// rebooted since): whatever it left running is a leftover.
    Gone,
    /// It ran on another machine or in another pid namespace: nothing can be said here.
    Unknown,
}

/// Whether `owner` is still alive, as far as this process can tell.
pub fn owner_state(owner: &ProcessOwner) -> OwnerState {
    let me = current_owner();
    if owner.host != me.host || owner.host.is_empty() {
        return OwnerState::Unknown;
    }
    if owner.boot_id != me.boot_id {
        // Same machine, another boot: the owner died with the previous boot.
        return OwnerState::Gone;
    }
    if owner.pid_ns != me.pid_ns {
        return OwnerState::Unknown;
    }
    match i32::try_from(owner.pid) {
        Ok(pid) if procfs::alive(pid, owner.start_ticks) => OwnerState::Alive,
        _ => OwnerState::Gone,
    }
}

/// A process stopped by [`stop_marked`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoppedProcess {
    /// Its pid.
    pub pid: u32,
    /// Its marker (`None` for a descendant whose environment could not be read).
    pub tag: Option<String>,
    /// Its command line.
    pub command: String,
}

/// Stops every process marked `prefix` or `prefix/…` (e.g. [`owner_prefix`] of a dead
/// shootout) and their descendants: SIGTERM, up to `grace` for them to exit, then
/// SIGKILL. Returns what it found alive, in pid order.
pub fn stop_marked(prefix: &str, grace: Duration) -> Vec<StoppedProcess> {
    let family = Family {
        leader: 0,
        pgid: 0,
        tag: Some(prefix.to_string()),
        with_sub_tags: true,
    };
    let all = procfs::all_stats();
    let mut found: Vec<StoppedProcess> = procfs::members(&all, &family, Search::Everywhere)
        .into_iter()
        .filter(|s| !s.is_dead())
        .map(|s| StoppedProcess {
            pid: u32::try_from(s.pid).unwrap_or(0),
            tag: procfs::environ_tag(s.pid),
            command: procfs::cmdline(s.pid),
        })
        .collect();
    found.sort_by_key(|p| p.pid);
    stop_family(&family, Some(grace));
    found
}

/// Ends `family` with SIGTERM, up to `grace` for it to go, then SIGKILL (at once without
/// a grace); returns whether it was gone after SIGTERM. Members that appear meanwhile
/// (a daemon forking) are found again before each signal. Waits at most `grace` plus a
/// few seconds; adopted members are reaped.
pub(crate) fn stop_family(family: &Family, grace: Option<Duration>) -> bool {
    if let Some(grace) = grace {
        signal_family(family, libc::SIGTERM);
        if wait_family_gone(family, grace) {
            return true;
        }
    }
    for _ in 0..3 {
        signal_family(family, libc::SIGKILL);
        if wait_family_gone(family, Duration::from_secs(2)) {
            break;
        }
    }
    false
}

/// Sends `signal` to the family's group and to every live member.
pub(crate) fn signal_family(family: &Family, signal: i32) {
    if family.pgid > 1 {
        launch::signal_group(family.pgid, signal);
    }
    for s in procfs::members(&procfs::all_stats(), family, Search::Everywhere) {
        if !s.is_dead() && s.pid > 1 && s.pid != procfs::own_pid() {
            // SAFETY: kill has no memory arguments. The pid was seen alive a moment ago;
            // an adopted zombie keeps its pid until shootout reaps it.
            unsafe { libc::kill(s.pid, signal) };
        }
    }
}

/// Waits up to `bound` until no member of `family` is alive (zombies do not count);
/// reaps adopted members meanwhile. The leader is the caller's to observe.
fn wait_family_gone(family: &Family, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        let all = procfs::all_stats();
        let alive = procfs::members(&all, family, Search::Everywhere)
            .iter()
            .any(|s| !s.is_dead());
        launch::reap_adopted(&all);
        if !alive {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep((deadline - now).min(POLL));
    }
}

/// SIGKILLs every process marked by this shootout process, without waiting (a second
/// Ctrl-C). Returns how many were signalled.
pub(crate) fn kill_all_marked() -> usize {
    let family = Family {
        leader: 0,
        pgid: 0,
        tag: Some(owner_prefix(current_owner())),
        with_sub_tags: true,
    };
    let members = procfs::members(&procfs::all_stats(), &family, Search::Everywhere);
    let mut n = 0;
    for s in members {
        if !s.is_dead() && s.pid > 1 && s.pid != procfs::own_pid() {
            // SAFETY: kill has no memory arguments.
            unsafe { libc::kill(s.pid, libc::SIGKILL) };
            n += 1;
        }
    }
    n
}

/// The extended regular expression (for `grep -z`) that matches the environment entry of
/// `tag` and of its sub-tags: what a watchdog looks for when shootout is gone.
pub(crate) fn grep_pattern(tag: &str) -> String {
    let mut out = format!("^{VAR}=");
    for c in tag.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-') {
            out.push(c);
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out.push_str("(/.*)?$");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_match_themselves_and_their_sub_tags_only() {
        assert!(matches("1.2/a", "1.2/a", false));
        assert!(!matches("1.2/a/setup", "1.2/a", false));
        assert!(matches("1.2/a/setup", "1.2/a", true));
        assert!(matches("1.2/a", "1.2", true));
        assert!(!matches("1.2/ab", "1.2/a", true), "another contender's key");
        assert!(!matches("1.23/a", "1.2", true), "another shootout's");
    }

    #[test]
    fn the_marker_is_read_from_an_environment_block() {
        let env = b"PATH=/bin\0SHOOTOUT_TAG=12.34/1-a\0HOME=/root\0";
        assert_eq!(procfs::parse_environ_tag(env).as_deref(), Some("12.34/1-a"));
        assert_eq!(procfs::parse_environ_tag(b"PATH=/bin\0"), None);
        assert_eq!(procfs::parse_environ_tag(b""), None);
    }

    #[test]
    fn this_process_is_an_alive_owner_and_a_dead_pid_is_gone() {
        let me = current_owner().clone();
        assert_eq!(me.pid, std::process::id());
        assert!(me.start_ticks > 0 && !me.boot_id.is_empty());
        assert_eq!(owner_state(&me), OwnerState::Alive);
        // The same pid with another start time: a reused pid, not the owner.
        let reused = ProcessOwner {
            start_ticks: me.start_ticks + 1,
            ..me.clone()
        };
        assert_eq!(owner_state(&reused), OwnerState::Gone);
        let rebooted = ProcessOwner {
            boot_id: "another boot".into(),
            ..me.clone()
        };
        assert_eq!(owner_state(&rebooted), OwnerState::Gone);
        let elsewhere = ProcessOwner {
            host: "another-machine".into(),
            ..me
        };
        assert_eq!(owner_state(&elsewhere), OwnerState::Unknown);
    }

    #[test]
    fn grep_pattern_escapes_dots() {
        assert_eq!(
            grep_pattern("12.34/1-a_b"),
            "^SHOOTOUT_TAG=12\\.34/1-a_b(/.*)?$"
        );
    }
}
