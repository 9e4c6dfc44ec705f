//! A contender's processes as one family: finding its members, sampling what they use,
//! and stopping them.
//!
//! The processes of a contender (its [`Family`]) are every process in its process group,
//! every process carrying its marker in its environment (see the `tag` module), and every
//! descendant (by parent pid) of these or of the leader: a server that puts its workers
//! in sessions of their own (`setsid`) leaves the group but not the family, and a daemon
//! that forks twice is orphaned, reparented to shootout (the harness makes it the
//! subreaper, see the `launch` module) and found again by its marker.
//!
//! Below it, `procfs` reads `/proc`, `tag` says what a marker is, and `launch` spawns and
//! keeps the registry of live groups and adopted processes; this module joins them, and
//! nothing below imports it.

use crate::{launch, procfs, tag};
use procfs::Stat;
use shootout_model::ResourceSample;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The members of the tree of `leader` whose process group is `pgid` (see the module
/// doc), in no particular order.
#[cfg(test)]
pub(crate) fn tree(all: &[Stat], leader: i32, pgid: i32) -> Vec<Stat> {
    closure(all, |s| s.pid == leader || s.pgrp == pgid)
}

/// The processes of one contender (or setup), as the harness knows them: the leader it
/// spawned, the leader's process group, and the marker its processes carry in their
/// environment (see the `tag` module). A daemon that calls `setsid` and forks again
/// leaves the group, and its parent's exit cuts it from the leader's tree; the marker,
/// inherited through every fork and exec, still says whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Family {
    /// The leader's pid (a non-positive pid stands for none).
    pub leader: i32,
    /// The process group (a non-positive id stands for none).
    pub pgid: i32,
    /// The marker's value, if the family has one.
    pub tag: Option<String>,
    /// Whether processes whose marker only *starts* with `tag/` belong too (a setup's
    /// processes, marked `<tag>/setup`, are stopped with the contender, not sampled).
    pub with_sub_tags: bool,
}

/// How far [`members`] looks for marked processes outside the leader's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// Only the processes reparented to shootout (the subreaper) or to init: where an
    /// orphaned daemon lands. A few environment reads per sample.
    Orphans,
    /// Every process on the machine (stopping, and recovering from a killed shootout).
    Everywhere,
}

/// The members of `family` (see [`Family`]) among `all`, with the descendants of each, in
/// no particular order. Members that shootout adopted as their subreaper are noted so that
/// they are reaped when they exit (see `launch::reap_adopted`).
pub(crate) fn members(all: &[Stat], family: &Family, search: Search) -> Vec<Stat> {
    let me = procfs::own_pid();
    let adopter = if launch::is_subreaper() { me } else { 1 };
    let marked = |s: &Stat| {
        let Some(tag) = &family.tag else {
            return false;
        };
        let look = match search {
            Search::Everywhere => s.pid != me,
            Search::Orphans => s.ppid == adopter || s.ppid == 1,
        };
        look && !s.is_dead()
            && tag::of_pid(s.pid)
                .is_some_and(|value| tag::matches(&value, tag, family.with_sub_tags))
    };
    let found = closure(all, |s| {
        (family.leader > 0 && s.pid == family.leader)
            || (family.pgid > 1 && s.pgrp == family.pgid)
            || marked(s)
    });
    for s in &found {
        if s.ppid == me && s.pid != family.leader {
            launch::note_adopted(s.pid, s.starttime);
        }
    }
    found
}

/// The processes of `all` for which `root` holds, and all their descendants.
fn closure(all: &[Stat], mut root: impl FnMut(&Stat) -> bool) -> Vec<Stat> {
    let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
    for (i, s) in all.iter().enumerate() {
        children.entry(s.ppid).or_default().push(i);
    }
    let mut in_tree = vec![false; all.len()];
    let mut todo: Vec<usize> = Vec::new();
    for (i, s) in all.iter().enumerate() {
        if root(s) {
            in_tree[i] = true;
            todo.push(i);
        }
    }
    while let Some(i) = todo.pop() {
        for &c in children.get(&all[i].pid).map_or(&[][..], Vec::as_slice) {
            if !in_tree[c] {
                in_tree[c] = true;
                todo.push(c);
            }
        }
    }
    all.iter()
        .zip(in_tree)
        .filter_map(|(s, inside)| inside.then_some(*s))
        .collect()
}

/// A sample of the processes of `family`, stamped `at`; adopted members that exited
/// meanwhile are reaped.
pub(crate) fn sample(family: &Family, at: Duration) -> ResourceSample {
    let all = procfs::all_stats();
    let members = members(&all, family, Search::Orphans);
    launch::reap_adopted(&all);
    let hz = procfs::sysconf(libc::_SC_CLK_TCK, 100);
    let page = procfs::sysconf(libc::_SC_PAGESIZE, 4096);
    let mut s = ResourceSample {
        at,
        cpu_user: Duration::ZERO,
        cpu_sys: Duration::ZERO,
        rss_bytes: 0,
        processes: 0,
        threads: 0,
        ctx_switches: 0,
        fds: 0,
    };
    let (mut user, mut sys) = (0, 0);
    for m in &members {
        user += m.utime + m.cutime;
        sys += m.stime + m.cstime;
        if m.is_dead() {
            continue;
        }
        s.rss_bytes += m.rss_pages * page;
        s.processes += 1;
        s.threads += m.threads;
        s.ctx_switches += procfs::ctx_switches(m.pid);
        s.fds += procfs::fd_count(m.pid);
    }
    s.cpu_user = procfs::ticks(user, hz);
    s.cpu_sys = procfs::ticks(sys, hz);
    s
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

/// Stops every process marked `prefix` or `prefix/…` (e.g. [`tag::owner_prefix`] of a dead
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
    let mut found: Vec<StoppedProcess> = members(&all, &family, Search::Everywhere)
        .into_iter()
        .filter(|s| !s.is_dead())
        .map(|s| StoppedProcess {
            pid: u32::try_from(s.pid).unwrap_or(0),
            tag: tag::of_pid(s.pid),
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
    for s in members(&procfs::all_stats(), family, Search::Everywhere) {
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
        let alive = members(&all, family, Search::Everywhere)
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

/// Sends SIGKILL to every process group the harness started and has not reaped yet
/// (contenders and running setups); returns how many groups were signalled.
///
/// Meant for a Ctrl-C handler thread (the `ctrlc` crate runs handlers on an ordinary
/// thread): it takes a lock, so it must not be called from an async signal handler. The
/// [`crate::Contender`]s stay valid: stopping or dropping them afterwards reaps them.
///
/// Processes that left their group (daemons) are found by their marker and killed too.
pub fn kill_live_groups() -> usize {
    let n = launch::signal_live_groups(libc::SIGKILL);
    kill_all_marked();
    n
}

/// SIGKILLs every process marked by this shootout process, without waiting (a second
/// Ctrl-C). Returns how many were signalled.
pub(crate) fn kill_all_marked() -> usize {
    let family = Family {
        leader: 0,
        pgid: 0,
        tag: Some(tag::owner_prefix(tag::current_owner())),
        with_sub_tags: true,
    };
    let members = members(&procfs::all_stats(), &family, Search::Everywhere);
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

/// How often stopping looks whether the marked processes are gone.
const POLL: Duration = Duration::from_millis(10);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::tests::st;

    #[test]
    fn tree_is_group_plus_descendants() {
        let all = [
            st(1, 0, 1, 'S'),       // init: outside
            st(100, 50, 100, 'S'),  // leader
            st(101, 100, 100, 'S'), // worker in the group
            st(102, 101, 102, 'S'), // worker that called setsid: escaped the group
            st(103, 102, 102, 'S'), // its child
            st(104, 1, 100, 'S'),   // orphan still in the group
            st(105, 1, 105, 'S'),   // unrelated
            st(106, 50, 50, 'S'),   // the leader's parent's other child: unrelated
        ];
        let mut pids: Vec<i32> = tree(&all, 100, 100).iter().map(|s| s.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, vec![100, 101, 102, 103, 104]);
    }
}
