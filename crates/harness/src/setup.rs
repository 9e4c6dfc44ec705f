//! [`run_setup`]: the contender's setup command (a build, a `pip install`…), run to its
//! end before the contender starts.
//!
//! It runs as `sh -c <setup>` in the contender's directory and environment, in a process
//! group of its own (see the `launch` module), with stdout and stderr together in
//! `<name>.setup.log`. It is not pinned to the contender's CPUs. Processes it leaves
//! running in the background on success are not stopped (a setup may start a database
//! the contender needs); on failure or timeout its whole group is killed.

use crate::config::ContenderConfig;
use crate::error::HarnessError;
use crate::launch::{self, Launch};
use crate::logs;
use std::time::{Duration, Instant};

/// Lines of the setup's output quoted in its error.
const TAIL_LINES: usize = 20;

/// Runs the setup command of `cfg`, if any, and waits (at most `cfg.setup_timeout`) for
/// it to succeed.
///
/// Errors: [`HarnessError::Setup`] with its exit status and the end of its output if it
/// fails, [`HarnessError::SetupTimedOut`] if it takes too long (it is then killed),
/// [`HarnessError::Spawn`] if it cannot be started.
pub fn run_setup(cfg: &ContenderConfig) -> Result<(), HarnessError> {
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
    let mut child = launch::spawn(Launch {
        script: setup.clone(),
        cwd: cfg.cwd.as_deref(),
        env: &cfg.env,
        stdout: &log,
        stderr: &log,
        cpus: None,
        nofile: None,
    })
    .map_err(|source| HarnessError::Spawn {
        name: cfg.name.clone(),
        what: format!("cannot run its setup `{setup}`"),
        source,
    })?;
    let pgid = launch::pid_of(&child);
    let started = Instant::now();
    let status = launch::wait_exit(pgid, cfg.setup_timeout);
    let failed = status.is_none_or(|s| !s.success());
    if failed {
        // Background processes of a failed setup are of no use to anyone.
        launch::signal_group(pgid, libc::SIGKILL);
    }
    if status.is_some() || launch::wait_exit(pgid, Duration::from_secs(5)).is_some() {
        let _ = child.wait();
        launch::forget(pgid);
    }
    let output_tail = || logs::tail(&path, log.start, TAIL_LINES);
    match status {
        Some(status) if status.success() => Ok(()),
        Some(status) => Err(HarnessError::Setup {
            name: cfg.name.clone(),
            setup: setup.clone(),
            status,
            output_tail: output_tail(),
            log: path.clone(),
        }),
        None => Err(HarnessError::SetupTimedOut {
            name: cfg.name.clone(),
            setup: setup.clone(),
            after: started.elapsed(),
            output_tail: output_tail(),
            log: path.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        run_setup(&cfg(dir.path(), "echo \"$GREETING\" > made.txt; echo done")).unwrap();
        let made = std::fs::read_to_string(dir.path().join("made.txt")).unwrap();
        assert_eq!(made, "hello\n");
        let log = std::fs::read_to_string(dir.path().join("logs/app.setup.log")).unwrap();
        assert!(log.ends_with("done\n"), "{log}");
    }

    #[test]
    fn failing_setup_names_its_exit_status_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let err = run_setup(&cfg(
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
        let err = run_setup(&cfg).unwrap_err();
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
        run_setup(&cfg).unwrap();
        assert!(!cfg.log_path("setup").exists());
    }
}
