//! Reading `/proc`: each process's `stat`, its environment marker, its command line, and
//! the counters a sample of a contender's family sums (see the `family` module).
//!
//! A sample sums over the family: CPU time (utime + stime of each process, plus the
//! cutime + cstime of children it reaped, so time is counted once whether a worker is
//! alive or gone — except adopted orphans, which shootout reaps), resident memory (shared pages of
//! forked workers are counted once per process, as `ps` does), threads, context switches
//! (summed over each process's threads) and open file descriptors. A sample reads the
//! `stat` file of every process on the machine (about 10 µs each: 1 ms for 100
//! processes) plus a few files per member and thread.

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

/// Whether any process of group `pgid` is still alive (zombies do not count).
#[cfg(test)]
pub(crate) fn group_alive(all: &[Stat], pgid: i32) -> bool {
    all.iter().any(|s| s.pgrp == pgid && !s.is_dead())
}

/// This process's pid.
pub(crate) fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(i32::MAX)
}

/// The value of the variable `name` in the text of a `/proc/PID/environ` file.
pub(crate) fn parse_environ_var(env: &[u8], name: &str) -> Option<String> {
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
pub(crate) fn ctx_switches(pid: i32) -> u64 {
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
pub(crate) fn fd_count(pid: i32) -> u32 {
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

pub(crate) fn sysconf(name: libc::c_int, fallback: u64) -> u64 {
    // SAFETY: sysconf has no memory arguments.
    let v = unsafe { libc::sysconf(name) };
    u64::try_from(v).ok().filter(|&v| v > 0).unwrap_or(fallback)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn st(pid: i32, ppid: i32, pgrp: i32, state: char) -> Stat {
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
