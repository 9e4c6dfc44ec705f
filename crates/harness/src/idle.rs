//! Waiting between two steps until the contenders' processes are idle.
//!
//! A step that overloads a server leaves it work after the load stops: requests queued
//! in its sockets, connections to close, a backlog of threads. When contenders share
//! CPUs (a plan pins them all to the same ones) and their steps are interleaved, that
//! work runs during the next contender's step, which then measures two servers at once.
//! A fixed pause does not fit every backlog (a server offered four times its capacity
//! for two seconds has eight seconds of work queued), so the pause after a step lasts
//! at least the plan's cooldown and then until the contenders' processes together used
//! at most [`QUIET_SHARE`] of one CPU over the last [`WINDOW`], or [`MOST`] more.

use crate::Contender;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The span over which the contenders' CPU time is read.
pub const WINDOW: Duration = Duration::from_millis(200);
/// The share of one CPU under which the contenders count as idle: 5 %, 10 ms of CPU
/// time in a 200 ms window (an idle server's timers and housekeeping stay far under it).
pub const QUIET_SHARE: f64 = 0.05;
/// The longest wait past the least one: a contender that is never idle (a busy loop of
/// its own) costs each pause this much, and the wait says so.
pub const MOST: Duration = Duration::from_secs(15);

/// How a wait went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Idle {
    /// How long it waited past the least wait for the contenders to go idle.
    pub more: Duration,
    /// The share of one CPU the contenders used in the window that ended the wait.
    pub busy: f64,
    /// True when they were not seen idle: still busy after [`MOST`], or the run was
    /// stopped first.
    pub gave_up: bool,
}

/// Waits at least `least`, then until `contenders` are idle together (at most [`MOST`]
/// longer); ends early once `stop` is raised. Without contenders (all given by URL)
/// it waits `least`.
pub fn wait_idle(contenders: &[&Contender], least: Duration, stop: &AtomicBool) -> Idle {
    let began = Instant::now();
    let cpu = || -> Duration {
        contenders
            .iter()
            .map(|c| {
                let s = c.sample(began);
                s.cpu_user + s.cpu_sys
            })
            .sum()
    };
    // The least wait's last window is the first one read: an idle server costs no
    // time past `least`.
    pause(least.saturating_sub(WINDOW), stop);
    if contenders.is_empty() {
        pause(least.min(WINDOW), stop);
        return Idle {
            more: Duration::ZERO,
            busy: 0.0,
            gave_up: false,
        };
    }
    let least_end = began + least;
    let mut first = true;
    loop {
        let from = Instant::now();
        let before = cpu();
        pause(WINDOW, stop);
        let span = from.elapsed();
        let busy = cpu().saturating_sub(before).as_secs_f64()
            / span.max(Duration::from_millis(1)).as_secs_f64();
        let now = Instant::now();
        // The first window is the least wait's last: idle there, nothing more was waited
        // (its sleep's few ms of overshoot are not a wait for the contenders).
        let more = if first {
            Duration::ZERO
        } else {
            now.saturating_duration_since(least_end)
        };
        first = false;
        let stopped = stop.load(Ordering::Relaxed);
        if (busy <= QUIET_SHARE && now >= least_end) || stopped || more >= MOST {
            return Idle {
                more,
                busy,
                gave_up: stopped || busy > QUIET_SHARE,
            };
        }
    }
}

/// Sleeps `d` in slices, ending early once `stop` is raised.
fn pause(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep(Duration::from_millis(20).min(end - now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{free_port, ContenderConfig};

    static NO_STOP: AtomicBool = AtomicBool::new(false);

    fn start(dir: &std::path::Path, name: &str, command: &str) -> Contender {
        let mut cfg = ContenderConfig::new(name, command, free_port().unwrap(), dir.join("logs"));
        cfg.cwd = Some(dir.to_path_buf());
        Contender::start(&cfg).unwrap()
    }

    /// A contender still working off its backlog holds the pause until its work is done;
    /// an idle one costs nothing past the least wait.
    #[test]
    fn the_pause_lasts_until_the_contenders_work_is_done() {
        let dir = tempfile::tempdir().unwrap();
        // Busy for a while (a shell loop, well over the least wait on any machine), then
        // it leaves a mark and sleeps: the server that drained its backlog.
        let busy = start(
            dir.path(),
            "busy",
            "i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done; touch drained; exec sleep 120",
        );
        let idle = start(dir.path(), "idle", "exec sleep 120");
        let least = Duration::from_millis(300);
        let waited = wait_idle(&[&busy, &idle], least, &NO_STOP);
        assert!(!waited.gave_up, "{waited:?}");
        assert!(waited.busy <= QUIET_SHARE, "{waited:?}");
        assert!(
            dir.path().join("drained").exists(),
            "ended before the work: {waited:?}"
        );
        assert!(waited.more > Duration::ZERO, "{waited:?}");
        // Now both are idle: the pause is the least wait, read in its last window.
        let t = Instant::now();
        let again = wait_idle(&[&busy, &idle], least, &NO_STOP);
        assert_eq!(again.more, Duration::ZERO, "{again:?}");
        assert!(t.elapsed() >= least, "{:?}", t.elapsed());
        busy.stop(Duration::from_secs(5));
        idle.stop(Duration::from_secs(5));
    }

    /// A stop ends the wait at once, busy contender or not, and the wait says it did not
    /// see them idle.
    #[test]
    fn a_stop_ends_the_wait_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let spin = start(dir.path(), "spin", "while :; do :; done");
        let stop = AtomicBool::new(true);
        let t = Instant::now();
        let waited = wait_idle(&[&spin], Duration::from_secs(30), &stop);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(waited.gave_up, "{waited:?}");
        spin.stop(Duration::from_secs(5));
    }
}
