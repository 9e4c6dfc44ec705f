//! What bringing a contender up needs besides the harness: its [`ContenderConfig`] (the
//! plan's contender with its placeholders filled for one port), and [`NotUp`], why it did
//! not come up. The order of the attempts (setup, start, ready wait, a retry on a new port
//! when its port was taken) is the [`Runner`](super::runner::Runner)'s.

use super::contender_key;
use shootout_harness::{ContenderConfig, HarnessError};
use shootout_model::plan::{self, Launch, Plan};
use shootout_model::ContenderStatus;
use shootout_model::TlsOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Starts of a contender whose port was taken (see [`Runner::bring_up`]).
///
/// [`Runner::bring_up`]: super::runner::Runner
pub(super) const PORT_TRIES: u32 = 3;

/// Why a contender did not come up.
#[derive(Debug)]
pub(super) enum NotUp {
    /// No free port could be found for it.
    NoPort(std::io::Error),
    /// Its `config` could not be written to this path.
    Config(PathBuf, std::io::Error),
    /// Its setup, start or ready wait failed.
    Harness(HarnessError),
}

impl NotUp {
    /// What became of the contender, as the store records it.
    pub(super) fn status(&self) -> ContenderStatus {
        match self {
            NotUp::NoPort(_) => ContenderStatus::Exited,
            NotUp::Config(..) => ContenderStatus::SetupFailed,
            NotUp::Harness(e) => e.contender_status(),
        }
    }
}

impl std::fmt::Display for NotUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotUp::NoPort(e) => write!(f, "no free port: {e}"),
            NotUp::Config(path, e) => write!(
                f,
                "cannot write its config to {}: {e} (is the run's directory writable?)",
                path.display()
            ),
            NotUp::Harness(e) => e.fmt(f),
        }
    }
}

/// The harness's configuration of contender `index` on `port`: every placeholder of its
/// command, directory, environment and setup filled (`{tmp}` is created), with its
/// `config`'s text filled likewise and the path `{config}` stands for; `None` for a
/// contender given by URL, which shootout does not start.
pub(super) fn contender_config(
    plan: &Plan,
    index: usize,
    port: u16,
    plan_dir: &Path,
    run_dir: &Path,
) -> Option<(ContenderConfig, Option<(PathBuf, String)>)> {
    let c = &plan.contenders[index];
    let (command, cwd, env, setup, config, ready_path, ready_timeout, nofile) = match &c.launch {
        Launch::Url(_) => return None,
        Launch::Command {
            command,
            cwd,
            env,
            setup,
            config,
            ready_path,
            ready_timeout,
            nofile,
        } => (
            command,
            cwd,
            env,
            setup,
            config,
            ready_path,
            ready_timeout,
            nofile,
        ),
    };
    let key = contender_key(index, &c.name);
    let tmp = run_dir.join("tmp").join(&key);
    let _ = std::fs::create_dir_all(&tmp);
    let config_path = tmp.join(plan::CONFIG_FILE);
    let plan_dir_abs = absolute(plan_dir);
    let fill = filler(plan, index, Some(port), plan_dir, run_dir);
    let config = config
        .as_ref()
        .map(|text| (config_path.clone(), fill(text)));
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
        ready_tls: c.tls.is_some(),
        cpus: plan.defaults.server_cpus.clone(),
        log_dir: run_dir.to_path_buf(),
        nofile: *nofile,
    };
    Some((cfg, config))
}

/// The plan's directory as an absolute path (as given when it cannot be resolved).
fn absolute(plan_dir: &Path) -> PathBuf {
    std::fs::canonicalize(plan_dir).unwrap_or_else(|_| plan_dir.to_path_buf())
}

/// Fills the placeholders of contender `index`'s strings: `{port}` (when it has one),
/// `{tmp}` (its own directory under the run's), `{cores}`, `{plan_dir}`, `{run_dir}`
/// and `{config}`.
fn filler(
    plan: &Plan,
    index: usize,
    port: Option<u16>,
    plan_dir: &Path,
    run_dir: &Path,
) -> impl Fn(&str) -> String {
    let tmp = run_dir
        .join("tmp")
        .join(contender_key(index, &plan.contenders[index].name));
    let config = tmp.join(plan::CONFIG_FILE).display().to_string();
    let (tmp, cores) = (tmp.display().to_string(), super::server_cores(plan));
    let (plan_dir, run_dir) = (
        absolute(plan_dir).display().to_string(),
        run_dir.display().to_string(),
    );
    move |s: &str| {
        plan::fill_placeholders(s, |name| match name {
            "port" => port.map(|p| p.to_string()),
            "tmp" => Some(tmp.clone()),
            "cores" => Some(cores.to_string()),
            "plan_dir" => Some(plan_dir.clone()),
            "run_dir" => Some(run_dir.clone()),
            "config" => Some(config.clone()),
            _ => None,
        })
    }
}

/// How contender `index` is spoken to over TLS: its `tls` with the CA file's placeholders
/// filled (`port`: the one it was started on) and a relative path taken from the plan's
/// directory; the defaults (the system's roots) when it has no `tls`.
pub(super) fn contender_tls(
    plan: &Plan,
    index: usize,
    port: Option<u16>,
    plan_dir: &Path,
    run_dir: &Path,
) -> TlsOptions {
    let Some(tls) = &plan.contenders[index].tls else {
        return TlsOptions::default();
    };
    let fill = filler(plan, index, port, plan_dir, run_dir);
    TlsOptions {
        insecure: tls.insecure,
        ca_file: tls
            .cacert
            .as_ref()
            .map(|c| plan::resolve(&absolute(plan_dir), Path::new(&fill(c)))),
    }
}
