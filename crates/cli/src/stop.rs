//! The process-wide stop flag of `load` and `run`: Ctrl-C or SIGTERM asks the running
//! command to stop; a second signal ends everything at once.

use crate::output::INTERRUPTED;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The process-wide stop flag, set by Ctrl-C / SIGTERM. A second signal kills every
/// contender's process group and exits at once (the store stays consistent: each step is
/// one transaction).
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    STOP.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let _ = ctrlc::set_handler(move || {
            if f.swap(true, Ordering::SeqCst) {
                crate::progress::live::restore();
                shootout_harness::kill_live_groups();
                std::process::exit(INTERRUPTED);
            }
        });
        flag
    })
    .clone()
}

/// Sleeps `d`, waking every 100 ms to see whether `stop` was set; true when it was.
pub(crate) fn sleep_unless_stopped(d: std::time::Duration, stop: &AtomicBool) -> bool {
    let until = std::time::Instant::now() + d;
    loop {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(100)));
    }
}
