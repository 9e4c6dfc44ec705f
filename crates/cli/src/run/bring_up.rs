//! Bringing a contender up: placeholders filled, setup, start, ready wait, and the
//! retry on a new port when its port was taken.

use super::contender_key;
use shootout_harness::{Contender, ContenderConfig, HarnessError};
use shootout_model::plan::{self, Launch, Plan};
use shootout_model::ContenderStatus;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Starts a contender and waits until it is ready; URL contenders are only checked.
/// Starts contender `index` and waits until it is ready (or returns the URL of one given
/// by URL). The port is chosen free, but another process may take it before the
/// contender binds it (a client's ephemeral port, a server started meanwhile): then the
/// start is tried again on a new port, at most [`PORT_TRIES`] times in all.
pub(super) fn bring_up(
    plan: &Plan,
    index: usize,
    plan_dir: &Path,
    run_dir: &Path,
    stop: &AtomicBool,
) -> Result<(String, Option<Contender>), NotUp> {
    let mut tries = 1;
    loop {
        match bring_up_once(plan, index, plan_dir, run_dir, stop) {
            Err(NotUp::Harness(e)) if tries < PORT_TRIES && e.port_taken() => {
                eprintln!(
                    "  {}: its port was taken before it could bind it; trying another",
                    plan.contenders[index].name
                );
                tries += 1;
            }
            other => return other,
        }
    }
}

/// Starts of a contender whose port was taken (see [`bring_up`]).
const PORT_TRIES: u32 = 3;

/// Why a contender did not come up.
#[derive(Debug)]
pub(super) enum NotUp {
    /// No free port could be found for it.
    NoPort(std::io::Error),
    /// Its setup, start or ready wait failed.
    Harness(HarnessError),
}

impl NotUp {
    /// What became of the contender, as the store records it.
    pub(super) fn status(&self) -> ContenderStatus {
        match self {
            NotUp::NoPort(_) => ContenderStatus::Exited,
            NotUp::Harness(e) => e.contender_status(),
        }
    }
}

impl std::fmt::Display for NotUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotUp::NoPort(e) => write!(f, "no free port: {e}"),
            NotUp::Harness(e) => e.fmt(f),
        }
    }
}

fn bring_up_once(
    plan: &Plan,
    index: usize,
    plan_dir: &Path,
    run_dir: &Path,
    stop: &AtomicBool,
) -> Result<(String, Option<Contender>), NotUp> {
    let c = &plan.contenders[index];
    let (command, cwd, env, setup, ready_path, ready_timeout, nofile) = match &c.launch {
        Launch::Url(url) => return Ok((url.clone(), None)),
        Launch::Command {
            command,
            cwd,
            env,
            setup,
            ready_path,
            ready_timeout,
            nofile,
        } => (command, cwd, env, setup, ready_path, ready_timeout, nofile),
    };
    let port = shootout_harness::free_port().map_err(NotUp::NoPort)?;
    let key = contender_key(index, &c.name);
    let tmp = run_dir.join("tmp").join(&key);
    let _ = std::fs::create_dir_all(&tmp);
    let cores = plan
        .defaults
        .server_cpus
        .as_ref()
        .map_or_else(|| shootout_engine::sys::allowed_cpus().len(), Vec::len);
    let plan_dir_abs = std::fs::canonicalize(plan_dir).unwrap_or_else(|_| plan_dir.to_path_buf());
    let fill = |s: &str| {
        plan::fill_placeholders(s, |name| match name {
            "port" => Some(port.to_string()),
            "tmp" => Some(tmp.display().to_string()),
            "cores" => Some(cores.to_string()),
            "plan_dir" => Some(plan_dir_abs.display().to_string()),
            "run_dir" => Some(run_dir.display().to_string()),
            _ => None,
        })
    };
    let cfg = ContenderConfig {
        name: c.name.clone(),
        key,
        command: fill(command),
        cwd: Some(cwd.as_ref().map_or_else(
            || plan_dir_abs.clone(),
            |d| plan::resolve(&plan_dir_abs, Path::new(&fill(&d.to_string_lossy()))),
        )),
        env: env.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
        setup: setup.as_ref().map(|s| fill(s)),
        setup_timeout: Duration::from_secs(600),
        ready_host: "127.0.0.1".into(),
        port,
        ready_path: ready_path.clone(),
        ready_timeout: *ready_timeout,
        cpus: plan.defaults.server_cpus.clone(),
        log_dir: run_dir.to_path_buf(),
        nofile: *nofile,
    };
    if cfg.setup.is_some() {
        shootout_harness::run_setup(&cfg, stop).map_err(NotUp::Harness)?;
    }
    let mut process = Contender::start(&cfg).map_err(NotUp::Harness)?;
    match process.wait_ready(stop) {
        Ok(took) => {
            eprintln!(
                "  {} ready after {:.1} s on port {port}",
                c.name,
                took.as_secs_f64()
            );
            Ok((format!("http://127.0.0.1:{port}"), Some(process)))
        }
        Err(e) => {
            process.stop(Duration::from_secs(2));
            Err(NotUp::Harness(e))
        }
    }
}
