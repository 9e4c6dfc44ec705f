//! Helpers shared by the command-line tests (each `tests/*.rs` is its own crate and
//! uses what it needs).
#![allow(dead_code)]

use std::process::Output;

/// Asserts that the command succeeded, showing its stderr when it did not.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The first CPU this process may run on (from `/proc/self/status`).
pub fn first_allowed_cpu() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    list.split([',', '-']).next().unwrap().parse().unwrap()
}

/// The arguments of the smallest capacity search: `load --find-max`, one step of 0.2 s at
/// 50 req/s within `p50<1s` (the URL and any other flag follow).
pub const ONE_STEP_SEARCH: [&str; 10] = [
    "load",
    "--find-max",
    "--slo",
    "p50<1s",
    "--from",
    "50",
    "--to",
    "50",
    "-d",
    "0.2s",
];
