//! Test helpers: bounded waits for processes to be gone.

use crate::procfs;
use std::time::{Duration, Instant};

/// How long the helpers wait for processes to vanish.
const GONE_WITHIN: Duration = Duration::from_secs(10);

/// The live (not zombie) processes whose process group is `pgid`.
pub(crate) fn live_in_group(pgid: i32) -> Vec<i32> {
    procfs::all_stats()
        .into_iter()
        .filter(|s| s.pgrp == pgid && !s.is_dead())
        .map(|s| s.pid)
        .collect()
}

/// Asserts that within 10 s no live process is left in group `pgid`.
pub(crate) fn assert_group_empty(pgid: i32) {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let live = live_in_group(pgid);
        if live.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            // Leave nothing behind, then fail.
            crate::launch::signal_group(pgid, libc::SIGKILL);
            panic!("processes {live:?} of group {pgid} are still alive");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts that within 10 s the process `pid` is gone (or a zombie).
pub(crate) fn assert_gone(pid: i32) {
    let deadline = Instant::now() + GONE_WITHIN;
    while procfs::stat(pid).is_some_and(|s| !s.is_dead()) {
        if Instant::now() > deadline {
            // SAFETY: kill has no memory arguments.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("process {pid} is still alive");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
