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
//! and stops what `family::stop_marked` finds of a dead owner.

use crate::procfs;
use shootout_model::ProcessOwner;
use std::sync::OnceLock;

/// The environment variable that marks every process the harness starts.
pub const VAR: &str = "SHOOTOUT_TAG";

/// The marker in the environment `pid` was started with, if it has one (and its
/// environment can be read: a zombie's cannot).
pub(crate) fn of_pid(pid: i32) -> Option<String> {
    procfs::environ_var(pid, VAR)
}

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
        assert_eq!(
            procfs::parse_environ_var(env, VAR).as_deref(),
            Some("12.34/1-a")
        );
        assert_eq!(procfs::parse_environ_var(b"PATH=/bin\0", VAR), None);
        assert_eq!(procfs::parse_environ_var(b"", VAR), None);
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
