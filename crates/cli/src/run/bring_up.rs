//! Bringing a contender up: placeholders filled, setup, start, ready wait, and the
//! retry on a new port when its port was taken.

use super::contender_key;
use shootout_harness::{Contender, ContenderConfig};
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
) -> Result<(String, Option<Contender>), (ContenderStatus, String)> {
    let mut tries = 1;
    loop {
        match bring_up_once(plan, index, plan_dir, run_dir, stop) {
            Err((_, detail)) if tries < PORT_TRIES && port_was_taken(&detail) => {
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

/// True when a contender's failure says its port was taken: the harness found something
/// answering there, or the server's error names EADDRINUSE (as Python, nginx, Apache and
/// most servers print it).
fn port_was_taken(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase();
    d.contains("address already in use")
        || d.contains("eaddrinuse")
        || d.contains("something already listens on")
}

fn bring_up_once(
    plan: &Plan,
    index: usize,
    plan_dir: &Path,
    run_dir: &Path,
    stop: &AtomicBool,
) -> Result<(String, Option<Contender>), (ContenderStatus, String)> {
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
    let port = shootout_harness::free_port()
        .map_err(|e| (ContenderStatus::Exited, format!("no free port: {e}")))?;
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
        shootout_harness::run_setup(&cfg, stop)
            .map_err(|e| (e.contender_status(), e.to_string()))?;
    }
    let mut process = Contender::start(&cfg).map_err(|e| (e.contender_status(), e.to_string()))?;
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
            Err((e.contender_status(), e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A taken port is recognised from what servers really print, and from the harness.
    #[test]
    fn a_taken_port_is_recognised() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let python = std::process::Command::new("python3")
            .args([
                "-c",
                &format!("import socket; socket.socket().bind(('127.0.0.1', {port}))"),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&python.stderr);
        assert!(port_was_taken(&stderr), "{stderr}");
        let harness = shootout_harness::HarnessError::PortInUse {
            name: "a".into(),
            addr: taken.local_addr().unwrap(),
        };
        assert!(port_was_taken(&harness.to_string()));
        assert!(port_was_taken(
            "nginx: [emerg] bind() to 127.0.0.1:8080 failed (98: Address already in use)"
        ));
        assert!(!port_was_taken(
            "contender `a` exited before it was ready (exit status: 1); ModuleNotFoundError"
        ));
    }
}
