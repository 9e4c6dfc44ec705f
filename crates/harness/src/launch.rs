//! Spawning shell commands in their own process group, and the registry of live groups.
//!
//! Every process the harness starts (setups and contenders) is `sh -c ...` in a new
//! process group whose id is the leader's pid, with stdin from `/dev/null` and its output
//! in log files. In the child, between fork and exec, it also gets:
//! - `PR_SET_PDEATHSIG(SIGKILL)`: the kernel kills the leader when its parent dies, so a
//!   crashed or `kill -9`ed shootout does not leave a server running. The kernel's
//!   "parent" is the *thread* that forked, so every spawn happens on one dedicated thread
//!   that lives as long as the process ([`spawner`]): a caller may start contenders from
//!   any short-lived thread. The signal reaches the leader only; its children see their
//!   parent die, see [`Guard`]; `family::kill_live_groups` covers a Ctrl-C.
//! - the CPU affinity and RLIMIT_NOFILE asked for, inherited by every descendant.
//!
//! - the marker `SHOOTOUT_TAG` in its environment (see the `tag` module), inherited by
//!   every descendant.
//!
//! A contender's children are not reached by the parent-death signal (a dead master's
//! workers may well go on serving), so each contender also gets a [`Guard`]: a tiny
//! watchdog process that kills the whole group, and every process carrying the
//! contender's marker, when shootout's end closes a pipe.
//!
//! The first spawn also makes shootout a child subreaper (`PR_SET_CHILD_SUBREAPER`): a
//! daemon that forks twice to leave its parent is reparented to shootout instead of init,
//! where sampling finds it (by its marker) without a scan of the whole machine. A
//! subreaper must reap what it adopts: members of a contender seen with shootout as their
//! parent are noted ([`note_adopted`]) and reaped once they exit ([`reap_adopted`]); the
//! harness's own children (leaders, watchdogs) and anything else this process spawns are
//! never touched, so their owners' `wait` keeps working.
//!
//! Leaders are never reaped before their group is finished with: a zombie leader keeps
//! its pid, hence the group id, from being reused, so signalling `-pgid` can never hit an
//! unrelated process. [`leader_exit`] therefore observes exits with `WNOWAIT`.
//!
//! Seams: [`crate::Contender`] and [`crate::run_setup`] use this module; the CLI calls
//! `family::kill_live_groups` from its Ctrl-C handler.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::logs::Log;

/// The process groups started by the harness whose leader has not been reaped yet.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Processes adopted by shootout as subreaper that belong to a contender: (pid, start
/// time), to be reaped when they exit.
static ADOPTED: Mutex<Vec<(i32, u64)>> = Mutex::new(Vec::new());

/// Whether `PR_SET_CHILD_SUBREAPER` is in effect for this process.
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// The longest a caller waits for the spawner thread to answer.
const SPAWN_WAIT: Duration = Duration::from_secs(30);

/// Sends `signal` to every process group the harness started and has not reaped yet
/// (contenders and running setups); returns how many groups were signalled. Takes a
/// lock: not for an async signal handler.
pub(crate) fn signal_live_groups(signal: i32) -> usize {
    let live = lock_live();
    for &pgid in live.iter() {
        signal_group(pgid, signal);
    }
    live.len()
}

/// Whether this process is a child subreaper (set at the first spawn).
pub(crate) fn is_subreaper() -> bool {
    SUBREAPER.load(Ordering::Relaxed)
}

/// Notes that `pid` (started at `starttime`), a child of shootout that the harness did not
/// spawn, belongs to a contender: it is reaped when it exits.
pub(crate) fn note_adopted(pid: i32, starttime: u64) {
    let mut adopted = ADOPTED.lock().unwrap_or_else(|p| p.into_inner());
    if !adopted.contains(&(pid, starttime)) {
        adopted.push((pid, starttime));
    }
}

/// Reaps the noted adopted processes that have exited (zombies among `all`) and forgets
/// those that are gone.
pub(crate) fn reap_adopted(all: &[crate::procfs::Stat]) {
    let me = crate::procfs::own_pid();
    let live = lock_live().clone();
    let mut adopted = ADOPTED.lock().unwrap_or_else(|p| p.into_inner());
    adopted.retain(|&(pid, start)| {
        let Some(s) = all.iter().find(|s| s.pid == pid) else {
            return false; // gone (reaped, or it was never ours to reap)
        };
        if s.starttime != start || s.ppid != me || live.contains(&pid) {
            return s.starttime == start;
        }
        if !s.is_dead() {
            return true;
        }
        // SAFETY: waitpid on one zombie child of ours that the harness adopted (pid and
        // start time checked above); no memory is passed besides a null status pointer.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        false
    });
}

fn lock_live() -> MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes `pgid` from the live groups (its leader is being reaped).
pub(crate) fn forget(pgid: i32) {
    lock_live().retain(|&g| g != pgid);
}

/// What to run and how.
pub(crate) struct Launch<'a> {
    /// The script given to `sh -c`.
    pub script: String,
    /// Working directory.
    pub cwd: Option<&'a Path>,
    /// Extra environment variables.
    pub env: &'a [(String, String)],
    /// Where stdout goes.
    pub stdout: &'a Log,
    /// Where stderr goes (may be the same log as stdout).
    pub stderr: &'a Log,
    /// CPU affinity of the child and its descendants.
    pub cpus: Option<libc::cpu_set_t>,
    /// Soft RLIMIT_NOFILE of the child (capped at the hard limit).
    pub nofile: Option<u64>,
    /// The marker's value (the `SHOOTOUT_TAG` variable), see the `tag` module.
    pub tag: &'a str,
}

/// Spawns `launch` as the leader of a new process group (see the module doc) and records
/// the group as live. The group id is the returned child's pid.
pub(crate) fn spawn(launch: Launch<'_>) -> io::Result<Child> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&launch.script)
        .stdin(Stdio::null())
        .stdout(launch.stdout.file.try_clone()?)
        .stderr(launch.stderr.file.try_clone()?)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .env(crate::tag::VAR, launch.tag)
        .process_group(0);
    if let Some(cwd) = launch.cwd {
        cmd.current_dir(cwd);
    }
    let parent = std::process::id();
    let cpus = launch.cpus;
    let nofile = launch.nofile;
    // SAFETY: the closure runs in the forked child before exec; it only makes
    // async-signal-safe system calls and does not allocate (the CPU set was built before).
    unsafe {
        cmd.pre_exec(move || in_child(parent, cpus.as_ref(), nofile));
    }
    let (reply_to, reply) = mpsc::channel();
    spawner()
        .send((cmd, reply_to))
        .map_err(|_| io::Error::other("the harness's spawner thread is gone"))?;
    reply
        .recv_timeout(SPAWN_WAIT)
        .map_err(|_| io::Error::other("the harness's spawner thread did not answer"))?
}

/// Runs in the child between fork and exec: parent-death signal, affinity, file limit.
fn in_child(parent: u32, cpus: Option<&libc::cpu_set_t>, nofile: Option<u64>) -> io::Result<()> {
    // SAFETY: plain system calls with valid arguments.
    unsafe {
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        // The parent may have died before prctl: then nobody would ever signal us.
        // (No allocation here: an OS error code, not a message.)
        if u32::try_from(libc::getppid()).ok() != Some(parent) {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        if let Some(set) = cpus {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(want) = nofile {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                return Err(io::Error::last_os_error());
            }
            lim.rlim_cur = want.min(lim.rlim_max);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

type Job = (Command, mpsc::Sender<io::Result<Child>>);

/// The channel to the thread that forks every child (it lives as long as the process, so
/// that the parent-death signal fires only when the process dies).
fn spawner() -> &'static mpsc::Sender<Job> {
    static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        // SAFETY: prctl with integer arguments only.
        let subreaper = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
        SUBREAPER.store(subreaper, Ordering::Relaxed);
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("shootout-spawner".into())
            .spawn(move || {
                for (mut cmd, reply_to) in rx {
                    let result = cmd.spawn();
                    if let Ok(child) = &result {
                        lock_live().push(pid_of(child));
                    }
                    if let Err(mpsc::SendError(Ok(mut child))) = reply_to.send(result) {
                        // The caller gave up waiting: nobody owns this child, end it.
                        let pgid = pid_of(&child);
                        signal_group(pgid, libc::SIGKILL);
                        if wait_exit(pgid, Duration::from_secs(5)).is_some() {
                            let _ = child.wait();
                        }
                        forget(pgid);
                    }
                }
            })
            .expect("cannot start the harness's spawner thread");
        jobs
    })
}

/// A watchdog for one process group: a `sh` sleeping on a pipe whose only writer is
/// shootout. When shootout dies, however it dies, the kernel closes the pipe and the
/// watchdog SIGKILLs the whole group (the parent-death signal reaches the leader only),
/// then every process whose environment holds the marker it was given (`grep -z` over
/// `/proc/*/environ`, a few rounds, for daemons that fork meanwhile). Disarmed (killed
/// without a word, then reaped) when dropped.
#[derive(Debug)]
pub(crate) struct Guard {
    child: Child,
    /// The pipe's write end; never written, only closed (by shootout's death).
    tripwire: Option<std::process::ChildStdin>,
}

impl Guard {
    /// Starts a watchdog for group `pgid` and the processes marked `tag` (or `tag/…`), in
    /// a process group of its own.
    pub(crate) fn arm(pgid: i32, tag: &str) -> io::Result<Guard> {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(GUARD_SCRIPT)
            .arg("shootout-guard")
            .arg(pgid.to_string())
            .arg(crate::tag::grep_pattern(tag))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let tripwire = child.stdin.take();
        Ok(Guard { child, tripwire })
    }
}

/// The watchdog's script: `$1` is the group, `$2` the `grep -E` pattern of the marker.
const GUARD_SCRIPT: &str = r#"read _tripwire
kill -KILL -"$1" 2>/dev/null
round=0
while [ $round -lt 5 ]; do
  found=$(grep -lzE -e "$2" /proc/[0-9]*/environ 2>/dev/null)
  [ -z "$found" ] && break
  for f in $found; do
    p=${f#/proc/}
    kill -KILL "${p%/environ}" 2>/dev/null
  done
  round=$((round + 1))
done"#;

impl Drop for Guard {
    fn drop(&mut self) {
        // Killed before its pipe is closed, it never fires. It is not reaped yet, so its
        // pid cannot have been reused.
        let pid = pid_of(&self.child);
        // SAFETY: kill has no memory arguments.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        if wait_exit(pid, Duration::from_secs(5)).is_some() {
            let _ = self.child.wait();
        }
        drop(self.tripwire.take());
    }
}

/// The pid of `child` as libc wants it.
pub(crate) fn pid_of(child: &Child) -> i32 {
    i32::try_from(child.id()).expect("pids fit in i32")
}

/// Sends `signal` to every process of group `pgid` (errors such as ESRCH are ignored).
pub(crate) fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill with a negative pid signals a process group; no memory involved.
        unsafe { libc::kill(-pgid, signal) };
    }
}

/// How the child `pid` ended, if it has, without reaping it (`waitid` with `WNOWAIT`).
pub(crate) fn leader_exit(pid: i32) -> Option<ExitStatus> {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return None;
    };
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it in.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a siginfo_t owned by this frame.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc != 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        // SAFETY: waitid succeeded, so the child fields are those of a SIGCHLD siginfo.
        let (from, status) = unsafe { (info.si_pid(), info.si_status()) };
        if from == 0 {
            return None; // still running
        }
        let raw = match info.si_code {
            libc::CLD_EXITED => (status & 0xff) << 8,
            libc::CLD_DUMPED => status | 0x80,
            _ => status, // CLD_KILLED
        };
        return Some(ExitStatus::from_raw(raw));
    }
}

/// Polls [`leader_exit`] every 10 ms for up to `bound`.
pub(crate) fn wait_exit(pid: i32, bound: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = leader_exit(pid) {
            return Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(10)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs;

    fn launch_in(dir: &Path, script: &str) -> Child {
        let log = logs::open(&dir.join("t.log"), "test").unwrap();
        spawn(Launch {
            script: script.into(),
            cwd: Some(dir),
            env: &[("SHOOTOUT_TEST_VAR".into(), "forty two".into())],
            stdout: &log,
            stderr: &log,
            cpus: None,
            nofile: Some(64),
            tag: "test",
        })
        .unwrap()
    }

    #[test]
    fn exit_is_observed_without_reaping_then_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = launch_in(dir.path(), "exit 5");
        let pid = pid_of(&child);
        assert!(lock_live().contains(&pid));
        let status = wait_exit(pid, Duration::from_secs(10)).expect("sh exits");
        assert_eq!(status.code(), Some(5));
        // Not reaped: still visible, and observing again gives the same answer.
        assert!(Path::new(&format!("/proc/{pid}")).exists());
        assert_eq!(leader_exit(pid).and_then(|s| s.code()), Some(5));
        assert_eq!(child.wait().unwrap().code(), Some(5));
        forget(pid);
        assert!(!lock_live().contains(&pid));
    }

    #[test]
    fn killed_leader_reports_its_signal() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = launch_in(dir.path(), "exec sleep 30");
        let pid = pid_of(&child);
        assert_eq!(leader_exit(pid), None);
        signal_group(pid, libc::SIGKILL);
        let status = wait_exit(pid, Duration::from_secs(10)).expect("killed");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        child.wait().unwrap();
        forget(pid);
    }

    #[test]
    fn guard_kills_the_group_when_its_pipe_closes() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = launch_in(dir.path(), "exec sleep 30");
        let pid = pid_of(&child);
        let mut guard = Guard::arm(pid, "no-such-marker").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(leader_exit(pid), None, "an armed guard does nothing");
        drop(guard.tripwire.take()); // what shootout's death does
        let status = wait_exit(pid, Duration::from_secs(10)).expect("killed by the guard");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        drop(guard);
        child.wait().unwrap();
        forget(pid);
    }

    #[test]
    fn dropped_guard_stays_silent() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = launch_in(dir.path(), "exec sleep 30");
        let pid = pid_of(&child);
        let guard = Guard::arm(pid, "no-such-marker").unwrap();
        let guard_pid = pid_of(&guard.child);
        drop(guard);
        assert!(
            !Path::new(&format!("/proc/{guard_pid}")).exists(),
            "guard reaped"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(leader_exit(pid), None, "the group lives on");
        signal_group(pid, libc::SIGKILL);
        assert!(wait_exit(pid, Duration::from_secs(10)).is_some());
        child.wait().unwrap();
        forget(pid);
    }

    #[test]
    fn child_gets_group_cwd_env_and_file_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = launch_in(
            dir.path(),
            "echo \"$SHOOTOUT_TEST_VAR|$(pwd)|$(ulimit -n)|$(cut -d' ' -f5 /proc/$$/stat)|$$\"",
        );
        let pid = pid_of(&child);
        assert!(wait_exit(pid, Duration::from_secs(10)).is_some());
        child.wait().unwrap();
        forget(pid);
        let text = std::fs::read_to_string(dir.path().join("t.log")).unwrap();
        let line = text.lines().last().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        assert_eq!(
            line,
            format!("forty two|{}|64|{pid}|{pid}", cwd.display()),
            "env|cwd|nofile|pgid|pid"
        );
    }
}
