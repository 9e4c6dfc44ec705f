//! Facts stored with a run: the machine's ([`machine_facts`], read from `/proc`) and the
//! version a plan's `version` command prints ([`version_of`]); the version of what serves
//! a contender without one is asked once it listens (the `serving` module).
//!
//! Seams: the CLI's orchestration calls both once, before the run begins, and hands the
//! [`MachineFacts`] to the store. Nothing here starts a contender.

use shootout_model::MachineFacts;
use std::time::{Duration, Instant};

/// What a plan's `version = "COMMAND"` prints: the first non-empty line of `sh -c COMMAND`
/// run in `dir`, within 5 s. An error says why there is none (it failed, said nothing or
/// took too long), for the note the run prints.
pub fn version_of(command: &str, dir: &std::path::Path) -> Result<String, String> {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(command).current_dir(dir);
    match first_line(cmd, Duration::from_secs(5)) {
        Some((true, line)) => Ok(line),
        Some((false, line)) => Err(format!("it failed, saying: {line}")),
        None => Err("it printed nothing, failed to start or took over 5 s".into()),
    }
}

/// Runs `cmd` with no input; `(succeeded, first non-empty line of stdout then stderr, at
/// most 120 characters)`, or `None` when it could not start, printed nothing or did not
/// end within `limit` (it is killed then).
pub(crate) fn first_line(
    mut cmd: std::process::Command,
    limit: Duration,
) -> Option<(bool, String)> {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().ok()? {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = child.wait_with_output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?
        .chars()
        .take(120)
        .collect::<String>();
    Some((status.success(), line))
}

/// Facts of this machine, read from /proc.
pub fn machine_facts() -> MachineFacts {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let mut versions = std::collections::BTreeMap::new();
    versions.insert(
        "shootout".to_string(),
        // Every crate of the workspace has shootout's version.
        env!("CARGO_PKG_VERSION").to_string(),
    );
    MachineFacts {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        memory_bytes,
        versions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    /// A program at `dir/name` running `script` (sh).
    fn program(dir: &std::path::Path, name: &str, script: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    #[test]
    fn the_first_line_a_program_prints_for_its_version() {
        use crate::serving::program_version;
        let dir = tempfile::tempdir().unwrap();
        let serve = program(
            dir.path(),
            "serve",
            "[ \"$1\" = --version ] || exit 9; echo; echo '  serve 1.2.3  '; echo built today",
        );
        assert_eq!(
            program_version(Path::new(&serve)).as_deref(),
            Some("serve 1.2.3")
        );
        // As nginx: `--version` is refused, `-v` answers on stderr.
        let nginx = program(
            dir.path(),
            "nginx",
            "[ \"$1\" = -v ] || exit 1; echo 'nginx version: nginx/1.24.0' >&2",
        );
        assert_eq!(
            program_version(Path::new(&nginx)).as_deref(),
            Some("nginx version: nginx/1.24.0")
        );
        // As caddy: only the `version` subcommand says.
        let caddy = program(
            dir.path(),
            "caddy",
            "[ \"$1\" = version ] || { echo 'unknown flag' >&2; exit 1; }; echo 'v2.6.2 h1:abc'",
        );
        assert_eq!(
            program_version(Path::new(&caddy)).as_deref(),
            Some("v2.6.2 h1:abc")
        );
        // A program that fails to say is no version, nor is an answer without a digit.
        let mute = program(dir.path(), "mute", "echo usage: mute >&2; exit 2");
        assert_eq!(program_version(Path::new(&mute)), None);
        let wordy = program(dir.path(), "wordy", "echo serving forever");
        assert_eq!(program_version(Path::new(&wordy)), None);
        assert_eq!(program_version(Path::new("/no/such/program")), None);
    }

    #[test]
    fn machine_facts_are_read_from_proc() {
        let m = machine_facts();
        assert!(!m.kernel.is_empty(), "{m:?}");
        assert!(m.memory_bytes > 0, "{m:?}");
        assert!(m.cores >= 1, "{m:?}");
        assert_eq!(m.versions["shootout"], env!("CARGO_PKG_VERSION"));
        // Not every architecture's /proc/cpuinfo has a "model name" line.
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
        if cpuinfo.contains("model name") {
            assert!(!m.cpu_model.is_empty(), "{m:?}");
        }
    }
}
