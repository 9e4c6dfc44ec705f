//! The progress line on stderr while a load runs: it observes the engine's live counters,
//! it never owns results. Shown only when stderr is a terminal and not `-q`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shootout_engine::Control;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running progress display; [`Progress::finish`] clears it.
pub struct Progress {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What bounds the run, for the bar's length.
pub enum Bound {
    /// This many requests.
    Requests(u64),
    /// This long.
    Time(Duration),
}

impl Progress {
    /// Starts watching `control` unless `quiet` or stderr is not a terminal.
    pub fn start(
        control: Arc<Control>,
        bound: Bound,
        label: &'static str,
        quiet: bool,
    ) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { done, thread: None };
        }
        let d = done.clone();
        let thread = std::thread::spawn(move || {
            let len = match bound {
                Bound::Requests(n) => n,
                Bound::Time(t) => t.as_millis() as u64,
            };
            let bar =
                ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(10));
            let style = ProgressStyle::with_template(&format!("{label} {{bar:30}} {{msg}}"))
                .expect("static template")
                .progress_chars("█▉▊▋▌▍▎▏ ");
            bar.set_style(style);
            while !d.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let s = control.snapshot();
                let secs = s.elapsed.as_secs_f64();
                let rate = s.completed as f64 / secs.max(1e-3);
                let (pos, eta) = match bound {
                    Bound::Requests(n) => {
                        let left = n.saturating_sub(s.completed) as f64 / rate.max(1e-9);
                        (s.completed, if s.completed > 0 { left } else { f64::NAN })
                    }
                    Bound::Time(t) => (
                        s.elapsed.as_millis() as u64,
                        (t.as_secs_f64() - secs).max(0.0),
                    ),
                };
                bar.set_position(pos.min(len));
                let eta = if eta.is_finite() {
                    format!("{eta:.0}s")
                } else {
                    "?".into()
                };
                bar.set_message(format!(
                    "{} done, {:.0} req/s, {} failed, {secs:.1}s elapsed, ETA {eta}",
                    s.completed, rate, s.failed
                ));
            }
            bar.finish_and_clear();
        });
        Progress {
            done,
            thread: Some(thread),
        }
    }

    /// Stops and clears the display.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
