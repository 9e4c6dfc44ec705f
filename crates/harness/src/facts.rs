//! Facts stored with a run: the machine's ([`machine_facts`], read from `/proc`) and the
//! version a contender's program gives ([`program_version`], by running it with
//! `--version`), or the one its plan's `version` command prints ([`version_of`]).
//!
//! Seams: the CLI's orchestration calls both once, before the run begins, and hands the
//! [`MachineFacts`] to the store. Nothing here starts a contender.

use crate::contender::program_of;
use shootout_model::MachineFacts;
use std::time::{Duration, Instant};

/// The first line `PROGRAM --version` (or `-v`, as nginx wants) prints, within 2 s; `None`
/// when the program does not say.
pub fn program_version(command: &str) -> Option<String> {
    let program = program_of(command)?;
    ["--version", "-v"].iter().find_map(|flag| {
        let mut cmd = std::process::Command::new(program);
        cmd.arg(flag);
        match first_line(cmd, Duration::from_secs(2)) {
            Some((true, line)) => Some(line),
            _ => None,
        }
    })
}

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
fn first_line(mut cmd: std::process::Command, limit: Duration) -> Option<(bool, String)> {
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

    /// A program at `dir/name` running `script` (sh).
    fn program(dir: &std::path::Path, name: &str, script: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    #[test]
    fn program_versions() {
        let v = program_version("python3 -m http.server {port}").unwrap();
        assert!(v.starts_with("Python 3."), "{v}");
        assert_eq!(program_version("no-such-program-here --serve"), None);
    }

    #[test]
    fn the_first_line_a_program_prints_for_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let serve = program(
            dir.path(),
            "serve",
            "[ \"$1\" = --version ] || exit 9; echo; echo '  serve 1.2.3  '; echo built today",
        );
        assert_eq!(
            program_version(&format!("PORT=1 {serve} --port {{port}}")).as_deref(),
            Some("serve 1.2.3")
        );
        // As nginx: `--version` is refused, `-v` answers on stderr.
        let nginx = program(
            dir.path(),
            "nginx",
            "[ \"$1\" = -v ] || exit 1; echo 'nginx version: nginx/1.24.0' >&2",
        );
        assert_eq!(
            program_version(&nginx).as_deref(),
            Some("nginx version: nginx/1.24.0")
        );
        // A program that fails to say is no version, nor is shell code.
        let mute = program(dir.path(), "mute", "echo usage: mute >&2; exit 2");
        assert_eq!(program_version(&mute), None);
        assert_eq!(
            program_version(&format!("trap '' TERM; exec {serve}")),
            None
        );
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
