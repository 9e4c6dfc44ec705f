//! [`run_setup`]: the contender's setup command (a build, a `pip install`…), run to its
//! end before the contender starts.
//!
//! It runs as `sh -c <setup>` in the contender's directory and environment, in a process
//! group of its own (see the `launch` module) watched by a watchdog, with stdout and
//! stderr together in `<key>.setup.log` and the marker `<tag>/setup` in its environment.
//! It is not pinned to the contender's CPUs. Processes it leaves running in the
//! background on success (a setup may start a database the contender needs) live on
//! until the contender is stopped: [`crate::Contender::stop`], its drop and its watchdog
//! find them by their marker, daemons included. On failure or timeout all its processes
//! are killed; when the caller's stop flag is raised (Ctrl-C), they get SIGTERM and
//! [`INTERRUPT_GRACE`] before SIGKILL.

use crate::config::ContenderConfig;
use crate::error::{names_port_taken, HarnessError};
use crate::family::{self, Family};
use crate::launch::{self, Guard, Launch};
use crate::logs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Lines of the setup's output quoted in its error.
const TAIL_LINES: usize = 20;

/// How long an interrupted setup's processes get between SIGTERM and SIGKILL.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// How often the setup's end and the stop flag are looked at.
const POLL: Duration = Duration::from_millis(10);

/// How a setup's wait ended.
enum End {
    Exited(std::process::ExitStatus),
    TimedOut,
    Interrupted,
}

/// Runs the setup command of `cfg`, if any, and waits (at most `cfg.setup_timeout`) for
/// it to succeed.
///
/// Errors: [`HarnessError::Setup`] with its exit status and the end of its output if it
/// fails, [`HarnessError::SetupTimedOut`] if it takes too long (it is then killed),
/// [`HarnessError::Interrupted`] within about 10 ms of `stop` being raised (its processes
/// are then stopped, within [`INTERRUPT_GRACE`] plus a few seconds at most),
/// [`HarnessError::Spawn`] if it cannot be started.
pub fn run_setup(cfg: &ContenderConfig, stop: &AtomicBool) -> Result<(), HarnessError> {
    let Some(setup) = &cfg.setup else {
        return Ok(());
    };
    let path = cfg.log_path("setup");
    let log = logs::open(&path, &format!("setup of `{}`: sh -c {setup:?}", cfg.name)).map_err(
        |source| HarnessError::Spawn {
            name: cfg.name.clone(),
            what: format!("cannot open the setup log {}", path.display()),
            source,
        },
    )?;
    let marker = format!("{}/setup", cfg.tag());
    let mut child = launch::spawn(Launch {
        script: setup.clone(),
        cwd: cfg.cwd.as_deref(),
        env: &cfg.env,
        stdout: &log,
        stderr: &log,
        cpus: None,
        nofile: None,
        tag: &marker,
    })
    .map_err(|source| HarnessError::Spawn {
        name: cfg.name.clone(),
        what: format!("cannot run its setup `{setup}`"),
        source,
    })?;
    let pgid = launch::pid_of(&child);
    let family = Family {
        leader: pgid,
        pgid,
        tag: Some(marker.clone()),
        with_sub_tags: false,
    };
    let reap = |child: &mut std::process::Child| {
        if launch::wait_exit(pgid, Duration::from_secs(5)).is_some() {
            let _ = child.wait();
            launch::forget(pgid);
        }
    };
    let guard = match Guard::arm(pgid, &marker) {
        Ok(guard) => guard,
        Err(source) => {
            family::stop_family(&family, None);
            reap(&mut child);
            return Err(HarnessError::Spawn {
                name: cfg.name.clone(),
                what: "cannot start the watchdog of its setup".into(),
                source,
            });
        }
    };
    let started = Instant::now();
    let end = wait(pgid, cfg.setup_timeout, stop);
    match &end {
        End::Exited(status) if status.success() => {}
        // Background processes of a failed setup are of no use to anyone.
        End::Exited(_) | End::TimedOut => {
            family::stop_family(&family, None);
        }
        End::Interrupted => {
            family::stop_family(&family, Some(INTERRUPT_GRACE));
        }
    }
    reap(&mut child);
    // What a successful setup left running is now the contender's watchdog's to guard.
    drop(guard);
    let output_tail = logs::tail(&path, log.start, TAIL_LINES);
    failure(cfg, end, started.elapsed(), output_tail, path)
}

/// What the end of a setup means: `Ok` for a success, else the error naming it.
fn failure(
    cfg: &ContenderConfig,
    end: End,
    took: Duration,
    output_tail: String,
    log: PathBuf,
) -> Result<(), HarnessError> {
    let name = cfg.name.clone();
    let setup = cfg.setup.clone().unwrap_or_default();
    let port_taken = names_port_taken(&output_tail);
    match end {
        End::Exited(status) if status.success() => Ok(()),
        End::Exited(status) => Err(HarnessError::Setup {
            name,
            setup,
            status,
            output_tail,
            log,
            port_taken,
        }),
        End::TimedOut => Err(HarnessError::SetupTimedOut {
            name,
            setup,
            after: took,
            output_tail,
            log,
            port_taken,
        }),
        End::Interrupted => Err(HarnessError::Interrupted {
            name,
            during: "its setup ran",
        }),
    }
}

/// Waits for the setup's leader to exit, at most `timeout`, watching `stop`.
fn wait(pgid: i32, timeout: Duration, stop: &AtomicBool) -> End {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = launch::leader_exit(pgid) {
            return End::Exited(status);
        }
        if stop.load(Ordering::Relaxed) {
            return End::Interrupted;
        }
        let now = Instant::now();
        if now >= deadline {
            return End::TimedOut;
        }
        std::thread::sleep((deadline - now).min(POLL));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a setup nobody interrupts.
    fn run_setup_now(cfg: &ContenderConfig) -> Result<(), HarnessError> {
        run_setup(cfg, &AtomicBool::new(false))
    }

    fn cfg(dir: &std::path::Path, setup: &str) -> ContenderConfig {
        let mut cfg = ContenderConfig::new("app", "true", 1, dir.join("logs"));
        cfg.setup = Some(setup.into());
        cfg.cwd = Some(dir.to_path_buf());
        cfg.env = vec![("GREETING".into(), "hello".into())];
        cfg
    }

    #[test]
    fn setup_runs_in_cwd_with_env_and_logs_its_output() {
        let dir = tempfile::tempdir().unwrap();
        run_setup_now(&cfg(dir.path(), "echo \"$GREETING\" > made.txt; echo done")).unwrap();
        let made = std::fs::read_to_string(dir.path().join("made.txt")).unwrap();
        assert_eq!(made, "hello\n");
        let log = std::fs::read_to_string(dir.path().join("logs/app.setup.log")).unwrap();
        assert!(log.ends_with("done\n"), "{log}");
    }

    #[test]
    fn failing_setup_names_its_exit_status_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let err = run_setup_now(&cfg(
            dir.path(),
            "echo compiling; echo 'no compiler' >&2; exit 7",
        ))
        .unwrap_err();
        match &err {
            HarnessError::Setup {
                status,
                output_tail,
                ..
            } => {
                assert_eq!(status.code(), Some(7));
                assert_eq!(output_tail, "compiling\nno compiler");
            }
            other => panic!("not a setup error: {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains("exit status: 7"), "{text}");
        assert!(text.contains("`app`"), "{text}");
    }

    #[test]
    fn slow_setup_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = cfg(
            dir.path(),
            "echo $$ > pid; sleep 30 & echo $! > child; wait",
        );
        cfg.setup_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let err = run_setup_now(&cfg).unwrap_err();
        assert!(matches!(err, HarnessError::SetupTimedOut { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let child: i32 = std::fs::read_to_string(dir.path().join("child"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        crate::testing::assert_gone(child);
    }

    #[test]
    fn no_setup_is_nothing_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ContenderConfig::new("app", "true", 1, dir.path());
        run_setup_now(&cfg).unwrap();
        assert!(!cfg.log_path("setup").exists());
    }
}
