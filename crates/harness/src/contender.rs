//! [`Contender`]: a started server process tree, from spawn to stop.
//!
//! `start` spawns `sh -c "exec <command>"` (or `sh -c "<command>"` when it uses shell
//! syntax, see [`shell_script`]) as the leader of a new process group (see
//! the `launch` module for the parent-death signal, pinning and file limit), with its
//! output in `<key>.stdout.log` / `<key>.stderr.log` and its marker in its environment
//! (see the `tag` module). `wait_ready` probes it until it answers (or until the caller's
//! stop flag is raised); `sample` and `sampler` measure its processes — its tree plus the
//! daemons it started that left it; `stop` ends all of them, and what its setup left
//! running, politely (SIGTERM, a grace period, then SIGKILL) and reaps them; dropping an
//! unstopped contender kills them. Nothing here knows about load, verification or storage: the CLI's
//! orchestration calls these steps in order and the engine never sees a `Contender`.

use crate::config::ContenderConfig;
use crate::error::{names_port_taken, HarnessError};
use crate::family::{self, Family};
use crate::launch::{self, Guard, Launch};
use crate::logs;
use crate::probe;
use crate::sampler::Sampler;
use shootout_model::ResourceSample;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Lines of stderr quoted in errors.
const TAIL_LINES: usize = 20;
/// Pause between two readiness probes.
const PROBE_EVERY: Duration = Duration::from_millis(50);
/// The longest one probe may take (the process is checked for an exit between probes).
const PROBE_MAX: Duration = Duration::from_secs(2);
/// The longest the helper test waits for SIGKILLed processes to vanish.
#[cfg(test)]
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long `start` tries to connect to the port to find out whether it is taken.
const PORT_CHECK: Duration = Duration::from_millis(200);

/// A started contender: the leader of its own process group, and everything under it.
#[derive(Debug)]
pub struct Contender {
    name: String,
    child: Child,
    /// The leader's pid, which is also the process group id.
    pid: i32,
    /// Its processes: the group, the leader's tree and the marked (exact tag only: its
    /// setup's leftovers are stopped with it but not sampled).
    family: Family,
    addrs: Vec<SocketAddr>,
    host: String,
    path: String,
    /// See [`ContenderConfig::ready_tls`].
    tls: bool,
    ready_timeout: Duration,
    started: Instant,
    stdout_log: PathBuf,
    stderr_log: PathBuf,
    /// Where this start's output begins in the stderr log.
    stderr_start: u64,
    /// Set once the leader is reaped (by `stop` or `drop`).
    reaped: bool,
    /// Kills the group if shootout dies; disarmed when the tree is stopped.
    guard: Option<Guard>,
}

/// How [`Contender::stop`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopOutcome {
    /// The leader had already exited before the stop (it crashed or quit by itself).
    pub already_exited: bool,
    /// The whole tree was gone within the grace period after SIGTERM.
    pub exited_after_term: bool,
    /// SIGKILL had to be sent.
    pub killed: bool,
    /// The leader's exit status (`None` only if it could not be reaped in time).
    pub status: Option<ExitStatus>,
}

impl Contender {
    /// Starts the contender of `cfg` (without waiting for it to be ready; its setup must
    /// have been run with [`crate::run_setup`] before).
    ///
    /// Fails with [`HarnessError::PortInUse`] if something already accepts connections on
    /// the probe address: it would otherwise be measured in the contender's place.
    pub fn start(cfg: &ContenderConfig) -> Result<Contender, HarnessError> {
        let tag = cfg.tag();
        if cfg.command.trim().is_empty() {
            return Err(cfg.invalid("the command is empty"));
        }
        let (addrs, host) = cfg.probe_target()?;
        let path = cfg.probe_path()?;
        let cpus = cfg.cpu_set()?;
        for &addr in &addrs {
            if TcpStream::connect_timeout(&addr, PORT_CHECK).is_ok() {
                return Err(HarnessError::PortInUse {
                    name: cfg.name.clone(),
                    addr,
                });
            }
        }
        let script = shell_script(&cfg.command);
        let header = format!("starting `{}`: sh -c {script:?}", cfg.name);
        let open = |kind: &str| {
            let path = cfg.log_path(kind);
            logs::open(&path, &header).map_err(|source| HarnessError::Spawn {
                name: cfg.name.clone(),
                what: format!("cannot open the log {}", path.display()),
                source,
            })
        };
        let stdout = open("stdout")?;
        let stderr = open("stderr")?;
        let started = Instant::now();
        let child = launch::spawn(Launch {
            script,
            cwd: cfg.cwd.as_deref(),
            env: &cfg.env,
            stdout: &stdout,
            stderr: &stderr,
            cpus,
            nofile: cfg.nofile,
            tag: &tag,
        })
        .map_err(|source| HarnessError::Spawn {
            name: cfg.name.clone(),
            what: format!("cannot start `{}`", cfg.command),
            source,
        })?;
        let pid = launch::pid_of(&child);
        let mut contender = Contender {
            name: cfg.name.clone(),
            pid,
            family: Family {
                leader: pid,
                pgid: pid,
                tag: Some(tag.clone()),
                with_sub_tags: false,
            },
            child,
            addrs,
            host,
            path,
            tls: cfg.ready_tls,
            ready_timeout: cfg.ready_timeout,
            started,
            stdout_log: stdout.path,
            stderr_log: stderr.path,
            stderr_start: stderr.start,
            reaped: false,
            guard: None,
        };
        // On failure the contender is dropped here, which kills it.
        contender.guard =
            Some(
                Guard::arm(contender.pid, &tag).map_err(|source| HarnessError::Spawn {
                    name: cfg.name.clone(),
                    what: "cannot start its watchdog process".into(),
                    source,
                })?,
            );
        Ok(contender)
    }

    /// Probes the contender every ~50 ms (TCP connect, then `GET ready_path`) until it
    /// answers a status below 500 (over TLS: until it accepts a connection), and returns
    /// the time from its start until then.
    ///
    /// Errors: [`HarnessError::Exited`] if it exits meanwhile, [`HarnessError::NeverReady`]
    /// if `ready_timeout` (counted from the start) passes, [`HarnessError::Interrupted`]
    /// within one probe's time (at most 2 s) once `stop` is raised; the contender is left
    /// running in the last two cases, to be stopped or dropped.
    pub fn wait_ready(&mut self, stop: &AtomicBool) -> Result<Duration, HarnessError> {
        let deadline = self.started + self.ready_timeout;
        let mut last_probe = String::from("none made");
        loop {
            if let Some(status) = self.exit_status() {
                return Err(self.exited(status));
            }
            if stop.load(Ordering::Relaxed) {
                return Err(HarnessError::Interrupted {
                    name: self.name.clone(),
                    during: "it was waited for to be ready",
                });
            }
            let now = Instant::now();
            if now >= deadline {
                let stderr_tail = self.stderr_tail(TAIL_LINES);
                return Err(HarnessError::NeverReady {
                    name: self.name.clone(),
                    waited: now - self.started,
                    last_probe,
                    port_taken: names_port_taken(&stderr_tail),
                    stderr_tail,
                    log: self.stderr_log.clone(),
                });
            }
            let budget = (deadline - now).min(PROBE_MAX);
            let path = (!self.tls).then_some(self.path.as_str());
            match probe::probe(&self.addrs, &self.host, path, budget) {
                // A port that speaks only HTTP/2, or TLS, answers too: the path is asked
                // as it will be measured by the verification that follows.
                Ok(probe::Answer::Http2Only)
                | Ok(probe::Answer::Listening)
                | Ok(probe::Answer::Status(0..=499)) => {
                    // An answer from a process that is exiting (e.g. it failed to bind
                    // and something else holds the port) does not count.
                    if let Some(status) = self.exit_status() {
                        return Err(self.exited(status));
                    }
                    return Ok(self.started.elapsed());
                }
                Ok(probe::Answer::Status(status)) => last_probe = format!("HTTP status {status}"),
                Err(e) => last_probe = e.to_string(),
            }
            let left = deadline.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(PROBE_EVERY));
        }
    }

    fn exited(&self, status: ExitStatus) -> HarnessError {
        let stderr_tail = self.stderr_tail(TAIL_LINES);
        HarnessError::Exited {
            name: self.name.clone(),
            status,
            port_taken: names_port_taken(&stderr_tail),
            stderr_tail,
            log: self.stderr_log.clone(),
        }
    }

    /// The contender's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The leader's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The process group id of the tree (equal to the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pid
    }

    /// How the leader exited, or `None` while it runs. The leader is not reaped (that
    /// happens in [`Contender::stop`]), so asking again gives the same answer.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        if self.reaped {
            return None;
        }
        launch::leader_exit(self.pid)
    }

    /// The time the contender was started.
    pub fn started_at(&self) -> Instant {
        self.started
    }

    /// Path of the stdout log.
    pub fn stdout_log(&self) -> &Path {
        &self.stdout_log
    }

    /// Path of the stderr log.
    pub fn stderr_log(&self) -> &Path {
        &self.stderr_log
    }

    /// The last `lines` lines the contender wrote to stderr since this start.
    pub fn stderr_tail(&self, lines: usize) -> String {
        logs::tail(&self.stderr_log, self.stderr_start, lines)
    }

    /// One sample of all its processes (group members, marked processes and their
    /// descendants), stamped with the time elapsed since `since`.
    pub fn sample(&self, since: Instant) -> ResourceSample {
        family::sample(&self.family, since.elapsed())
    }

    /// The version of what serves it: the program of its processes that listens on its
    /// port, asked the way it answers (see the `serving` module), or why it is unknown.
    /// Ask once it is ready: it spawns the program for a moment.
    pub fn serving_version(&self) -> Result<String, String> {
        let port = self.addrs.first().map_or(0, SocketAddr::port);
        crate::serving::serving_version(&self.family, port)
    }

    /// The marker its processes carry (see [`ContenderConfig::tag`]).
    pub fn tag(&self) -> &str {
        self.family.tag.as_deref().unwrap_or("")
    }

    /// Starts a thread that samples the tree every `every` (at least 10 ms) until
    /// [`Sampler::stop`]; sample times are relative to the sampler's start. Stop the
    /// sampler before stopping the contender.
    pub fn sampler(&self, every: Duration) -> Sampler {
        Sampler::start(self.family.clone(), every)
    }

    /// Ends all its processes: SIGTERM to the process group, to descendants that left it
    /// and to every process carrying its marker (its daemons, what its setup left
    /// running), up to `grace` for all of them to exit, then SIGKILL; reaps the leader
    /// and adopted processes. Takes at most `grace` plus a few seconds.
    pub fn stop(mut self, grace: Duration) -> StopOutcome {
        self.shutdown(Some(grace))
    }

    /// Stops everything (politely if `grace` is given) and reaps the leader.
    fn shutdown(&mut self, grace: Option<Duration>) -> StopOutcome {
        let mut outcome = StopOutcome {
            already_exited: self.exit_status().is_some(),
            exited_after_term: false,
            killed: false,
            status: None,
        };
        if self.reaped {
            return outcome;
        }
        let everything = Family {
            with_sub_tags: true,
            ..self.family.clone()
        };
        outcome.exited_after_term = family::stop_family(&everything, grace);
        outcome.killed = !outcome.exited_after_term;
        self.guard = None;
        if launch::leader_exit(self.pid).is_some() {
            outcome.status = self.child.wait().ok();
            self.reaped = true;
            launch::forget(self.pid);
        }
        outcome
    }
}

impl Drop for Contender {
    /// An unstopped contender is killed (SIGKILL to the whole tree) and reaped.
    fn drop(&mut self) {
        if !self.reaped {
            self.shutdown(None);
        }
    }
}

/// Shell builtins and keywords: a command starting with one is shell code, not a program.
const BUILTINS: [&str; 12] = [
    "trap", "cd", "export", "ulimit", "set", "source", ".", "exec", "if", "for", "while", "umask",
];

/// The program a contender's command runs: its first word after variable assignments,
/// unless that word is shell code (`trap …; exec …`), where no single program is named.
pub fn program_of(command: &str) -> Option<&str> {
    let word = command.split_whitespace().find(|w| !w.contains('='))?;
    (!BUILTINS.contains(&word)).then_some(word)
}

/// The script `sh -c` runs. A simple command gets `exec` so the server itself leads the
/// group (and gets the parent-death signal); a command with shell syntax (`;`, `&&`, `|`,
/// a builtin such as `trap` or `cd` first) keeps its shell, which `exec` would break.
fn shell_script(command: &str) -> String {
    let first = command.split_whitespace().next().unwrap_or("");
    let syntax = has_unquoted(command, &[';', '&', '|', '\n', '(', ')', '`'])
        || BUILTINS.contains(&first)
        || first.contains('=');
    if syntax {
        command.to_string()
    } else {
        format!("exec {command}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::free_port;
    use crate::procfs;
    use crate::testing::{assert_gone, assert_group_empty, live_in_group};
    use std::os::unix::process::ExitStatusExt;

    const READY_WITHIN: Duration = Duration::from_secs(20);
    /// A stop flag nobody raises.
    static NO_STOP: AtomicBool = AtomicBool::new(false);

    fn cfg(dir: &Path, name: &str, command: &str) -> ContenderConfig {
        let mut cfg = ContenderConfig::new(name, command, free_port().unwrap(), dir.join("logs"));
        cfg.cwd = Some(dir.to_path_buf());
        cfg.ready_timeout = READY_WITHIN;
        cfg
    }

    fn http_server(dir: &Path) -> ContenderConfig {
        let mut c = cfg(dir, "py", "");
        c.command = format!("python3 -m http.server {} --bind 127.0.0.1", c.port);
        c
    }

    #[test]
    fn python_http_server_gets_ready_is_sampled_and_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let mut contender = Contender::start(&http_server(dir.path())).unwrap();
        let took = contender.wait_ready(&NO_STOP).unwrap();
        assert!(took < READY_WITHIN);
        let sample = contender.sample(contender.started_at());
        assert!(sample.rss_bytes > 0, "{sample:?}");
        assert!(sample.threads >= 1 && sample.processes == 1, "{sample:?}");
        assert!(sample.fds >= 3, "{sample:?}"); // stdin, stdout, stderr, the listener
        assert!(sample.at >= took);
        let pgid = contender.pgid();
        assert_eq!(contender.pid(), u32::try_from(pgid).unwrap());
        let outcome = contender.stop(Duration::from_secs(5));
        assert!(outcome.exited_after_term && !outcome.killed, "{outcome:?}");
        assert!(!outcome.already_exited);
        assert_eq!(outcome.status.and_then(|s| s.signal()), Some(libc::SIGTERM));
        assert_group_empty(pgid);
    }

    #[test]
    fn the_version_is_asked_of_the_program_that_listens_not_the_first_word() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), "py", "");
        // Shell code first: `mkdir` (and `sh`) would answer with their own versions.
        c.command = format!(
            "mkdir -p {0}/x && cd {0}/x && exec python3 -m http.server {1} --bind 127.0.0.1",
            dir.path().display(),
            c.port
        );
        let mut contender = Contender::start(&c).unwrap();
        contender.wait_ready(&NO_STOP).unwrap();
        let version = contender.serving_version().unwrap();
        let python = std::process::Command::new("python3")
            .arg("--version")
            .output()
            .unwrap();
        let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
        assert_eq!(version, python);
        contender.stop(Duration::from_secs(5));
    }

    #[test]
    fn a_contender_that_does_not_listen_itself_has_no_version() {
        // Something else answers on its port (as a container's proxy would): unknown.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(dir.path(), "elsewhere", "sleep 30");
        let contender = Contender::start(&c).unwrap();
        let err = crate::serving::serving_version(
            &contender.family,
            listener.local_addr().unwrap().port(),
        )
        .unwrap_err();
        assert!(
            err.contains("no process of the contender's own listens"),
            "{err}"
        );
        let err = contender.serving_version().unwrap_err();
        assert_eq!(err, format!("nothing listens on port {}", c.port));
    }

    #[test]
    fn sleeper_is_never_ready_and_is_killed_by_drop() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), "sleeper", "sleep 30");
        c.ready_timeout = Duration::from_millis(300);
        let mut contender = Contender::start(&c).unwrap();
        let started = Instant::now();
        let err = contender.wait_ready(&NO_STOP).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3));
        match &err {
            HarnessError::NeverReady {
                waited, last_probe, ..
            } => {
                assert!(*waited >= Duration::from_millis(300));
                assert!(last_probe.contains("cannot connect"), "{last_probe}");
            }
            other => panic!("not NeverReady: {other}"),
        }
        assert!(contender.exit_status().is_none(), "left running");
        let pgid = contender.pgid();
        drop(contender);
        assert_group_empty(pgid);
    }

    #[test]
    fn exit_at_start_reports_status_and_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(
            dir.path(),
            "boom",
            "sh -c 'echo starting; echo boom >&2; exit 3'",
        );
        let mut contender = Contender::start(&c).unwrap();
        let err = contender.wait_ready(&NO_STOP).unwrap_err();
        match &err {
            HarnessError::Exited {
                status,
                stderr_tail,
                ..
            } => {
                assert_eq!(status.code(), Some(3));
                assert_eq!(stderr_tail, "boom");
            }
            other => panic!("not Exited: {other}"),
        }
        assert!(err.to_string().contains("boom"), "{err}");
        let outcome = contender.stop(Duration::from_secs(1));
        assert!(outcome.already_exited, "{outcome:?}");
        assert_eq!(outcome.status.and_then(|s| s.code()), Some(3));
        let stdout = std::fs::read_to_string(c.log_path("stdout")).unwrap();
        assert!(stdout.ends_with("\nstarting\n"), "{stdout}");
    }

    #[test]
    fn term_ignoring_tree_is_killed_after_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        // The ignored SIGTERM is inherited by the sleep child as well.
        let c = cfg(
            dir.path(),
            "stubborn",
            "sh -c 'trap \"\" TERM; sleep 30 & wait'",
        );
        let contender = Contender::start(&c).unwrap();
        let pgid = contender.pgid();
        wait_for(|| live_in_group(pgid).len() == 2);
        let started = Instant::now();
        let outcome = contender.stop(Duration::from_millis(200));
        assert!(outcome.killed && !outcome.exited_after_term, "{outcome:?}");
        assert_eq!(outcome.status.and_then(|s| s.signal()), Some(libc::SIGKILL));
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_group_empty(pgid);
    }

    #[test]
    fn whole_tree_is_sampled_and_stopped_including_setsid_escapees() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(
            dir.path(),
            "forks",
            "sh -c 'sleep 30 & sleep 30 & setsid sleep 30 & echo $! > escaped; wait'",
        );
        let contender = Contender::start(&c).unwrap();
        let pgid = contender.pgid();
        let escaped_file = dir.path().join("escaped");
        let escaped = || -> Option<i32> {
            std::fs::read_to_string(&escaped_file)
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        // Until `setsid` has run, the forked child is still in the group.
        wait_for(|| {
            escaped()
                .and_then(procfs::stat)
                .is_some_and(|s| s.pgrp != pgid && s.pgrp == s.pid)
        });
        let escaped = escaped().unwrap();
        wait_for(|| contender.sample(Instant::now()).processes == 4);
        let sample = contender.sample(Instant::now());
        assert_eq!(sample.processes, 4, "sh + 3 sleeps: {sample:?}");
        assert_eq!(sample.threads, 4, "{sample:?}");
        assert_eq!(live_in_group(pgid).len(), 3);
        let outcome = contender.stop(Duration::from_secs(5));
        assert!(outcome.exited_after_term, "{outcome:?}");
        assert_group_empty(pgid);
        assert_gone(escaped);
    }

    #[test]
    fn sampler_collects_increasing_samples() {
        let dir = tempfile::tempdir().unwrap();
        // Burns CPU so that the counters move.
        let c = cfg(dir.path(), "busy", "sh -c 'while :; do :; done'");
        let contender = Contender::start(&c).unwrap();
        let sampler = contender.sampler(Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(300));
        let samples = sampler.stop();
        assert!(samples.len() >= 4, "{} samples", samples.len());
        assert!(samples.windows(2).all(|w| w[0].at < w[1].at), "{samples:?}");
        assert!(samples.windows(2).all(|w| w[0].cpu_user <= w[1].cpu_user));
        let last = samples.last().unwrap();
        assert!(last.at >= Duration::from_millis(250), "{last:?}");
        assert!(last.cpu_user + last.cpu_sys > Duration::ZERO, "{last:?}");
        assert!(samples.iter().all(|s| s.processes == 1));
        contender.stop(Duration::from_secs(2));
    }

    #[test]
    fn pinned_contender_runs_on_the_given_cpu_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), "pinned", "sh -c 'sleep 30 & wait'");
        c.cpus = Some(vec![0]);
        let contender = Contender::start(&c).unwrap();
        let pgid = contender.pgid();
        wait_for(|| live_in_group(pgid).len() == 2);
        for pid in live_in_group(pgid) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(str::trim);
            assert_eq!(cpus, Some("0"), "pid {pid}");
        }
    }

    #[test]
    fn busy_port_is_refused_before_starting() {
        let dir = tempfile::tempdir().unwrap();
        let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = cfg(dir.path(), "late", "sleep 30");
        c.port = squatter.local_addr().unwrap().port();
        let err = Contender::start(&c).unwrap_err();
        assert!(matches!(err, HarnessError::PortInUse { .. }), "{err}");
        assert!(!c.log_path("stderr").exists(), "nothing was started");
    }

    #[test]
    fn contender_outlives_the_thread_that_started_it() {
        // The parent-death signal follows the forking *thread*: spawns go through one
        // long-lived thread so that a short-lived caller thread does not kill its servers.
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(dir.path(), "orphan", "sleep 30");
        let contender = std::thread::spawn(move || Contender::start(&c).unwrap())
            .join()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(contender.exit_status(), None);
        let pgid = contender.pgid();
        let outcome = contender.stop(Duration::from_secs(2));
        assert!(outcome.exited_after_term, "{outcome:?}");
        assert_group_empty(pgid);
    }

    /// The helper process of the two tests below: when `SHOOTOUT_HARNESS_HELPER` is set,
    /// it plays shootout itself, as told by that variable.
    #[test]
    #[ignore = "helper process of the parent-death and Ctrl-C tests"]
    fn helper_process() {
        let Ok(task) = std::env::var("SHOOTOUT_HARNESS_HELPER") else {
            return;
        };
        let (mode, dir) = task.split_once(':').unwrap();
        let dir = Path::new(dir);
        let first = Contender::start(&cfg(dir, "first", "sleep 30")).unwrap();
        let second = Contender::start(&cfg(dir, "second", "sh -c 'sleep 30 & wait'")).unwrap();
        let third = Contender::start(&cfg(dir, "third", DAEMONIZES)).unwrap();
        let daemon = daemon_pid(dir, "daemon.pid");
        let pids = format!("{} {} {}", first.pgid(), second.pgid(), third.pgid());
        std::fs::write(dir.join("pids"), pids).unwrap();
        match mode {
            // Dies without stopping anything, as a crash or `kill -9` would.
            "crash" => std::process::exit(0),
            "ctrl-c" => {
                assert_eq!(crate::kill_live_groups(), 3);
                // The daemon left the group: only its marker found it.
                let deadline = Instant::now() + KILL_WAIT;
                while procfs::stat(daemon).is_some_and(|s| !s.is_dead()) {
                    assert!(Instant::now() < deadline, "the daemon survived");
                    std::thread::sleep(Duration::from_millis(10));
                }
                drop(third);
                let died = |c: &Contender| launch::wait_exit(c.pid, KILL_WAIT).is_some();
                assert!(died(&first) && died(&second));
                let outcome = first.stop(Duration::ZERO);
                assert!(outcome.already_exited, "{outcome:?}");
                assert_eq!(outcome.status.and_then(|s| s.signal()), Some(libc::SIGKILL));
                drop(second);
                std::fs::write(dir.join("done"), "ok").unwrap();
            }
            other => panic!("unknown helper mode {other}"),
        }
    }

    /// Runs `helper_process` in a child test process in `mode`; returns the pgids of the
    /// three contenders it started (the daemon's pid is in `daemon.pid`).
    fn run_helper(mode: &str, dir: &Path) -> Vec<i32> {
        let mut helper = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "contender::tests::helper_process",
                "--ignored",
                "--test-threads=1",
                "--quiet",
            ])
            .env(
                "SHOOTOUT_HARNESS_HELPER",
                format!("{mode}:{}", dir.display()),
            )
            .stdout(std::fs::File::create(dir.join("helper.out")).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = helper.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = helper.kill();
                let _ = helper.wait();
                panic!("helper process did not finish");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let out = std::fs::read_to_string(dir.join("helper.out")).unwrap_or_default();
        assert!(status.success(), "helper failed ({status}):\n{out}");
        std::fs::read_to_string(dir.join("pids"))
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    }

    #[test]
    fn contender_dies_with_a_crashed_shootout() {
        let dir = tempfile::tempdir().unwrap();
        let pgids = run_helper("crash", dir.path());
        assert_eq!(pgids.len(), 3);
        // PR_SET_PDEATHSIG kills each leader, the guard the `sleep` child of the second.
        for &pgid in &pgids {
            assert_group_empty(pgid);
        }
        // The third's guard finds its double-forked daemon by its marker.
        assert_gone(daemon_pid(dir.path(), "daemon.pid"));
    }

    #[test]
    fn kill_live_groups_kills_every_started_contender() {
        let dir = tempfile::tempdir().unwrap();
        let pgids = run_helper("ctrl-c", dir.path());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("done")).unwrap(),
            "ok"
        );
        for pgid in pgids {
            assert_group_empty(pgid);
        }
    }

    /// A contender that starts a daemon the way servers do (a subshell forks, the child
    /// calls `setsid`, the subshell exits: the daemon is orphaned, in a session of its
    /// own) and writes its pid to `daemon.pid`, then goes on in the foreground.
    const DAEMONIZES: &str =
        "sh -c '(setsid sleep 30 & echo $! > daemon.pid.tmp; mv daemon.pid.tmp daemon.pid); exec sleep 30'";

    /// The pid written to `file` in `dir`, once it is there (at most 10 s).
    fn daemon_pid(dir: &Path, file: &str) -> i32 {
        let path = dir.join(file);
        let mut pid = None;
        wait_for(|| {
            pid = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| t.trim().parse().ok());
            pid.is_some()
        });
        pid.unwrap()
    }

    #[test]
    fn double_forking_daemon_is_sampled_and_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let contender = Contender::start(&cfg(dir.path(), "daemonizes", DAEMONIZES)).unwrap();
        let daemon = daemon_pid(dir.path(), "daemon.pid");
        let me = procfs::own_pid();
        // Orphaned, it is reparented to this process (the subreaper), outside the group
        // and the leader's tree, once `setsid` has made it a group of its own.
        wait_for(|| procfs::stat(daemon).is_some_and(|s| s.ppid == me && s.pgrp == daemon));
        let stat = procfs::stat(daemon).unwrap();
        assert_ne!(stat.pgrp, contender.pgid());
        let sample = contender.sample(Instant::now());
        assert_eq!(sample.processes, 2, "the leader and its daemon: {sample:?}");
        let samples = contender.sampler(Duration::from_millis(10)).stop();
        assert!(samples.iter().all(|s| s.processes == 2), "{samples:?}");
        let outcome = contender.stop(Duration::from_secs(5));
        assert!(outcome.exited_after_term, "{outcome:?}");
        assert_gone(daemon);
        // Reaped: not even a zombie is left.
        assert!(procfs::stat(daemon).is_none_or(|s| s.ppid != me || !s.is_dead()));
    }

    #[test]
    fn what_a_setup_leaves_running_is_stopped_with_the_contender_but_not_sampled() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), "with-db", "sleep 30");
        c.setup = Some(
            "(setsid sleep 30 & echo $! > db.pid.tmp; mv db.pid.tmp db.pid); sleep 30 & echo $! > bg.pid"
                .into(),
        );
        crate::run_setup(&c, &NO_STOP).unwrap();
        let db = daemon_pid(dir.path(), "db.pid");
        let bg = daemon_pid(dir.path(), "bg.pid");
        assert!(procfs::alive(db, procfs::stat(db).unwrap().starttime));
        let contender = Contender::start(&c).unwrap();
        assert_eq!(contender.sample(Instant::now()).processes, 1);
        contender.stop(Duration::from_secs(5));
        assert_gone(db);
        assert_gone(bg);
    }

    #[test]
    fn setup_is_interrupted_at_once_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), "slow-build", "sleep 30");
        c.setup =
            Some("(setsid sleep 30 & echo $! > d.pid.tmp; mv d.pid.tmp d.pid); sleep 60".into());
        let stop = AtomicBool::new(false);
        let (err, took, daemon) = std::thread::scope(|s| {
            let stopper = s.spawn(|| {
                let daemon = daemon_pid(dir.path(), "d.pid");
                stop.store(true, Ordering::Relaxed);
                (daemon, Instant::now())
            });
            let err = crate::run_setup(&c, &stop).unwrap_err();
            let (daemon, raised) = stopper.join().unwrap();
            (err, raised.elapsed(), daemon)
        });
        assert!(matches!(err, HarnessError::Interrupted { .. }), "{err}");
        assert_eq!(
            err.contender_status(),
            shootout_model::ContenderStatus::Interrupted
        );
        assert!(took < crate::INTERRUPT_GRACE, "took {took:?}");
        assert_gone(daemon);
    }

    #[test]
    fn ready_wait_is_interrupted_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(dir.path(), "never", "sleep 30");
        let mut contender = Contender::start(&c).unwrap();
        let stop = AtomicBool::new(false);
        let (err, took) = std::thread::scope(|s| {
            let stopper = s.spawn(|| {
                stop.store(true, Ordering::Relaxed);
                Instant::now()
            });
            let err = contender.wait_ready(&stop).unwrap_err();
            (err, stopper.join().unwrap().elapsed())
        });
        assert!(matches!(err, HarnessError::Interrupted { .. }), "{err}");
        assert!(took < Duration::from_secs(1), "took {took:?}");
        let pgid = contender.pgid();
        contender.stop(Duration::from_secs(2));
        assert_group_empty(pgid);
    }

    /// Waits (at most 10 s) for `cond`.
    fn wait_for(mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(Instant::now() < deadline, "condition not met within 10 s");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// True when one of `chars` appears outside quotes (shell quoting: '…', "…", \x).
fn has_unquoted(command: &str, chars: &[char]) -> bool {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in command.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ if !single && !double && chars.contains(&c) => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod script_tests {
    use super::shell_script;

    #[test]
    fn the_program_of_a_command() {
        use super::program_of;
        assert_eq!(program_of("PORT=1 gunicorn -w 4 app:app"), Some("gunicorn"));
        assert_eq!(program_of("trap '' TERM; exec python3"), None);
        assert_eq!(program_of(""), None);
    }

    #[test]
    fn exec_only_for_simple_commands() {
        #[rustfmt::skip]
        let rows = [
            // a server command: the server leads the group
            ("gunicorn -w 4 -b 127.0.0.1:80 app:app", "exec gunicorn -w 4 -b 127.0.0.1:80 app:app"),
            // a builtin first: `exec trap` would not run
            ("trap '' TERM; exec python3 -m http.server", "trap '' TERM; exec python3 -m http.server"),
            // a list of commands
            ("cd app && ./serve", "cd app && ./serve"),
            // a pipeline
            ("./serve | tee log", "./serve | tee log"),
            // an assignment in front
            ("PORT=80 ./serve", "PORT=80 ./serve"),
            // shell syntax inside quotes belongs to the program
            ("python3 -c 'import a; a.run()'", "exec python3 -c 'import a; a.run()'"),
            ("sh -c \"sleep 1 & wait\"", "exec sh -c \"sleep 1 & wait\""),
        ];
        for (command, want) in rows {
            assert_eq!(shell_script(command), want, "{command}");
        }
    }
}
