//! Reading `/proc`: which processes make up a contender's tree, and what they use.
//!
//! The processes of a contender (its [`Family`]) are every process in its process group,
//! every process carrying its marker in its environment (see the `tag` module), and every
//! descendant (by parent pid) of these or of the leader: a server that puts its workers
//! in sessions of their own (`setsid`) leaves the group but not the family, and a daemon
//! that forks twice is orphaned, reparented to shootout (the harness makes it the
//! subreaper, see the `launch` module) and found again by its marker.
//!
//! A sample sums over the tree: CPU time (utime + stime of each process, plus the
//! cutime + cstime of children it reaped, so time is counted once whether a worker is
//! alive or gone — except adopted orphans, which shootout reaps), resident memory (shared pages of
//! forked workers are counted once per process, as `ps` does), threads, context switches
//! (summed over each process's threads) and open file descriptors. A sample reads the
//! `stat` file of every process on the machine (about 10 µs each: 1 ms for 100
//! processes) plus a few files per tree member and thread.

use shootout_model::ResourceSample;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::time::Duration;

/// The fields of `/proc/PID/stat` the harness uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    /// Process id.
    pub pid: i32,
    /// State letter (`R`, `S`, `Z`…).
    pub state: char,
    /// Parent's pid.
    pub ppid: i32,
    /// Process group id.
    pub pgrp: i32,
    /// User CPU time of the process's threads (clock ticks).
    pub utime: u64,
    /// System CPU time (clock ticks).
    pub stime: u64,
    /// User CPU time of its reaped children (clock ticks).
    pub cutime: u64,
    /// System CPU time of its reaped children (clock ticks).
    pub cstime: u64,
    /// Threads.
    pub threads: u32,
    /// Start time after boot (clock ticks): with the pid, identifies the process.
    pub starttime: u64,
    /// Resident set size (pages).
    pub rss_pages: u64,
}

impl Stat {
    /// Whether the process has exited (a zombie waiting to be reaped, or dead).
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses the text of `/proc/PID/stat`. The command name (second field) may contain
/// spaces and parentheses, so the fields after it are found from the *last* `)`.
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    // Fields 3 (state) to 24 (rss) of proc(5), numbered from 0 here.
    let mut f = [""; 22];
    let mut it = text.get(close + 1..)?.split_ascii_whitespace();
    for slot in &mut f {
        *slot = it.next()?;
    }
    let num = |i: usize| f[i].parse::<u64>().ok();
    // cutime, cstime and rss are signed in the kernel's format; negative means nothing.
    let signed = |i: usize| f[i].parse::<i64>().ok().map(|v| v.max(0).unsigned_abs());
    Some(Stat {
        pid,
        state: f[0].chars().next()?,
        ppid: f[1].parse().ok()?,
        pgrp: f[2].parse().ok()?,
        utime: num(11)?,
        stime: num(12)?,
        cutime: signed(13)?,
        cstime: signed(14)?,
        threads: f[17].parse().ok()?,
        starttime: num(19)?,
        rss_pages: signed(21)?,
    })
}

/// Reads `/proc/PID/stat` into `buf` and parses it (`None` if the process is gone).
fn read_stat_into(pid: &str, buf: &mut String) -> Option<Stat> {
    buf.clear();
    fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .read_to_string(buf)
        .ok()?;
    parse_stat(buf)
}

/// The stat of one process, if it exists.
pub(crate) fn stat(pid: i32) -> Option<Stat> {
    read_stat_into(&pid.to_string(), &mut String::new())
}

/// The stats of every process on the machine (those that vanish meanwhile are skipped).
pub(crate) fn all_stats() -> Vec<Stat> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut buf = String::with_capacity(512);
    dir.filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let name = name.to_str()?;
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            read_stat_into(name, &mut buf)
        })
        .collect()
}

/// The members of the tree of `leader` whose process group is `pgid` (see the module
/// doc), in no particular order.
#[cfg(test)]
pub(crate) fn tree(all: &[Stat], leader: i32, pgid: i32) -> Vec<Stat> {
    closure(all, |s| s.pid == leader || s.pgrp == pgid)
}

/// Whether any process of group `pgid` is still alive (zombies do not count).
#[cfg(test)]
pub(crate) fn group_alive(all: &[Stat], pgid: i32) -> bool {
    all.iter().any(|s| s.pgrp == pgid && !s.is_dead())
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
    let me = own_pid();
    let adopter = if crate::launch::is_subreaper() { me } else { 1 };
    let marked = |s: &Stat| {
        let Some(tag) = &family.tag else {
            return false;
        };
        let look = match search {
            Search::Everywhere => s.pid != me,
            Search::Orphans => s.ppid == adopter || s.ppid == 1,
        };
        look && !s.is_dead()
            && environ_tag(s.pid)
                .is_some_and(|value| crate::tag::matches(&value, tag, family.with_sub_tags))
    };
    let found = closure(all, |s| {
        (family.leader > 0 && s.pid == family.leader)
            || (family.pgid > 1 && s.pgrp == family.pgid)
            || marked(s)
    });
    for s in &found {
        if s.ppid == me && s.pid != family.leader {
            crate::launch::note_adopted(s.pid, s.starttime);
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

/// This process's pid.
pub(crate) fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(i32::MAX)
}

/// The value of the marker variable in the environment `pid` was started with, if it
/// has one (and its environment can be read: a zombie's cannot).
pub(crate) fn environ_tag(pid: i32) -> Option<String> {
    let env = fs::read(format!("/proc/{pid}/environ")).ok()?;
    parse_environ_tag(&env)
}

/// The marker's value in the text of a `/proc/PID/environ` file (NUL-separated).
pub(crate) fn parse_environ_tag(env: &[u8]) -> Option<String> {
    parse_environ_var(env, crate::tag::VAR)
}

/// The value of the variable `name` in the text of a `/proc/PID/environ` file.
fn parse_environ_var(env: &[u8], name: &str) -> Option<String> {
    let prefix = format!("{name}=");
    env.split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// The value of the variable `name` in the environment `pid` was started with.
pub(crate) fn environ_var(pid: i32, name: &str) -> Option<String> {
    let env = fs::read(format!("/proc/{pid}/environ")).ok()?;
    parse_environ_var(&env, name)
}

/// The arguments of `pid`'s command line, `argv[0]` first (empty if unreadable).
pub(crate) fn cmdline_args(pid: i32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.strip_suffix(b"\0")
                .unwrap_or(&raw)
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The command line of `pid`, arguments separated by spaces (empty if unreadable).
pub(crate) fn cmdline(pid: i32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            String::from_utf8_lossy(&raw)
                .trim_end_matches('\0')
                .replace('\0', " ")
        })
        .unwrap_or_default()
}

/// Whether the process `pid` that started at `starttime` is still alive.
pub(crate) fn alive(pid: i32, starttime: u64) -> bool {
    stat(pid).is_some_and(|s| s.starttime == starttime && !s.is_dead())
}

/// Voluntary plus involuntary context switches of all threads of `pid` so far.
fn ctx_switches(pid: i32) -> u64 {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut buf = String::with_capacity(2048);
    let mut total = 0;
    for task in tasks.filter_map(Result::ok) {
        buf.clear();
        let read =
            fs::File::open(task.path().join("status")).and_then(|mut f| f.read_to_string(&mut buf));
        if read.is_ok() {
            total += parse_ctx_switches(&buf);
        }
    }
    total
}

/// The sum of `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` in the text of a
/// `/proc/PID/status` file.
pub(crate) fn parse_ctx_switches(status: &str) -> u64 {
    status
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(
                key,
                "voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches"
            )
            .then(|| value.trim().parse::<u64>().ok())
            .flatten()
        })
        .sum()
}

/// Open file descriptors of `pid` (0 if they cannot be listed).
fn fd_count(pid: i32) -> u32 {
    fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |dir| {
        u32::try_from(dir.filter_map(Result::ok).count()).unwrap_or(u32::MAX)
    })
}

/// `ticks` clock ticks (of `hz` per second) as a duration.
pub(crate) fn ticks(ticks: u64, hz: u64) -> Duration {
    let nanos = u128::from(ticks) * 1_000_000_000 / u128::from(hz.max(1));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// Clock ticks per second (`/proc`'s unit of CPU time).
pub(crate) fn clock_ticks() -> u64 {
    sysconf(libc::_SC_CLK_TCK, 100)
}

fn sysconf(name: libc::c_int, fallback: u64) -> u64 {
    // SAFETY: sysconf has no memory arguments.
    let v = unsafe { libc::sysconf(name) };
    u64::try_from(v).ok().filter(|&v| v > 0).unwrap_or(fallback)
}

/// A sample of the processes of `family`, stamped `at`; adopted members that exited
/// meanwhile are reaped.
pub(crate) fn sample(family: &Family, at: Duration) -> ResourceSample {
    let all = all_stats();
    let members = members(&all, family, Search::Orphans);
    crate::launch::reap_adopted(&all);
    let hz = sysconf(libc::_SC_CLK_TCK, 100);
    let page = sysconf(libc::_SC_PAGESIZE, 4096);
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
        s.ctx_switches += ctx_switches(m.pid);
        s.fds += fd_count(m.pid);
    }
    s.cpu_user = ticks(user, hz);
    s.cpu_sys = ticks(sys, hz);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(pid: i32, ppid: i32, pgrp: i32, state: char) -> Stat {
        Stat {
            pid,
            state,
            ppid,
            pgrp,
            utime: 0,
            stime: 0,
            cutime: 0,
            cstime: 0,
            threads: 1,
            starttime: 0,
            rss_pages: 0,
        }
    }

    #[test]
    fn stat_with_spaces_and_parentheses_in_the_name() {
        let text = "4242 (my (weird) server) S 1 4242 4242 0 -1 4194560 2000 0 3 0 \
                    150 30 7 2 20 0 5 0 123456 1000000 2500 18446744073709551615 1 1 0 0 0 \
                    0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
        let s = parse_stat(text).unwrap();
        assert_eq!(
            s,
            Stat {
                pid: 4242,
                state: 'S',
                ppid: 1,
                pgrp: 4242,
                utime: 150,
                stime: 30,
                cutime: 7,
                cstime: 2,
                threads: 5,
                starttime: 123456,
                rss_pages: 2500,
            }
        );
    }

    #[test]
    fn truncated_or_garbled_stat_is_refused() {
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("12 (sh) S 1 12"), None);
        assert_eq!(
            parse_stat("x (sh) S 1 12 12 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0 9"),
            None
        );
    }

    #[test]
    fn own_stat_is_readable() {
        let me = i32::try_from(std::process::id()).unwrap();
        let s = stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(s.threads >= 1 && s.rss_pages > 0);
        assert!(all_stats().iter().any(|s| s.pid == me));
    }

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

    #[test]
    fn zombies_do_not_keep_a_group_alive() {
        let all = [st(100, 1, 100, 'Z'), st(7, 1, 7, 'S')];
        assert!(!group_alive(&all, 100));
        assert!(group_alive(&[st(101, 1, 100, 'S')], 100));
    }

    #[test]
    fn context_switches_are_voluntary_plus_involuntary() {
        let status = "Name:\tpython3\nThreads:\t3\nvoluntary_ctxt_switches:\t120\n\
                      nonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(parse_ctx_switches(status), 127);
        assert_eq!(parse_ctx_switches("Name:\tx\n"), 0);
    }

    #[test]
    fn ticks_become_durations() {
        assert_eq!(ticks(250, 100), Duration::from_millis(2500));
        assert_eq!(ticks(1, 1000), Duration::from_millis(1));
        assert_eq!(ticks(5, 0), Duration::from_secs(5));
    }
}
