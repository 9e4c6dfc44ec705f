//! Facts of the machine and of the contenders' programs, stored with the run.

use shootout_harness::program_of;
use shootout_model::MachineFacts;
use std::time::{Duration, Instant};

/// The first line `PROGRAM --version` (or `-v`, as nginx wants) prints, within 2 s; `None`
/// when the program does not say.
pub(super) fn program_version(command: &str) -> Option<String> {
    let program = program_of(command)?;
    ["--version", "-v"].iter().find_map(|flag| {
        let mut child = std::process::Command::new(program)
            .arg(flag)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(2);
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
        status.success().then_some(line)
    })
}

/// Facts of this machine, read from /proc.
pub(super) fn machine_facts() -> MachineFacts {
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

    #[test]
    fn program_versions() {
        let v = program_version("python3 -m http.server {port}").unwrap();
        assert!(v.starts_with("Python 3."), "{v}");
        assert_eq!(program_version("no-such-program-here --serve"), None);
    }
}
