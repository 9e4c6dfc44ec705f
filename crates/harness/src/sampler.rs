//! [`Sampler`]: a thread that samples a contender's process tree at a fixed interval.
//!
//! It only knows the contender's family (pid, process group and marker, copied from the
//! [`crate::Contender`]), so it never holds the contender; stop it before the contender is stopped. Each sample
//! costs about 10 µs of one core per process on the machine (see the `procfs` module):
//! intervals of a few hundred milliseconds keep it out of the measurement's way.

use crate::family::{self, Family};
use shootout_model::ResourceSample;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The shortest sampling interval.
const MIN_EVERY: Duration = Duration::from_millis(10);

/// A running sampling thread; [`Sampler::stop`] ends it and hands over the samples.
#[derive(Debug)]
pub struct Sampler {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Vec<ResourceSample>>>,
}

impl Sampler {
    /// Starts sampling the processes of `family` now and then every `every` (at least
    /// 10 ms); sample times count from this call.
    pub(crate) fn start(family: Family, every: Duration) -> Sampler {
        let every = every.max(MIN_EVERY);
        let start = Instant::now();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("shootout-sampler".into())
            .spawn(move || {
                let mut samples = Vec::new();
                let mut next = start;
                loop {
                    samples.push(family::sample(&family, start.elapsed()));
                    // Ticks stay on the grid start + k × every, skipping missed ones.
                    let now = Instant::now();
                    while next <= now {
                        next += every;
                    }
                    match stopped.recv_timeout(next - now) {
                        Err(mpsc::RecvTimeoutError::Timeout) => continue,
                        // Asked to stop (or the Sampler was dropped): one last sample.
                        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
                samples.push(family::sample(&family, start.elapsed()));
                samples
            });
        match thread {
            Ok(thread) => Sampler {
                stop: Some(stop),
                thread: Some(thread),
            },
            // No thread could be started: a sampler that collects nothing.
            Err(_) => Sampler {
                stop: None,
                thread: None,
            },
        }
    }

    /// Stops the thread (promptly: it does not finish its interval) and returns every
    /// sample, with times relative to the sampler's start, in order; the last one is taken
    /// at the stop.
    pub fn stop(mut self) -> Vec<ResourceSample> {
        self.finish()
    }

    fn finish(&mut self) -> Vec<ResourceSample> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampler_of_this_process_stops_promptly() {
        let me = i32::try_from(std::process::id()).unwrap();
        // SAFETY: getpgrp has no arguments.
        let pgid = unsafe { libc::getpgrp() };
        let family = Family {
            leader: me,
            pgid,
            tag: None,
            with_sub_tags: false,
        };
        let sampler = Sampler::start(family, Duration::from_secs(3600));
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        let samples = sampler.stop();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(samples.len(), 2, "the first and the last");
        assert!(samples[0].processes >= 1 && samples[0].rss_bytes > 0);
        assert!(samples[1].at >= Duration::from_millis(50));
    }

    #[test]
    fn dropped_sampler_ends_its_thread() {
        let nobody = Family {
            leader: -7,
            pgid: -7,
            tag: None,
            with_sub_tags: false,
        };
        let sampler = Sampler::start(nobody, Duration::from_millis(10)); // an empty tree
        drop(sampler); // joins; the test would hang otherwise
    }
}
