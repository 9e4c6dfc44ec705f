//! How a caller watches and stops a run: [`Control`] (the stop flag, the start time, the
//! heads sample), each worker's [`Live`] counters published at its ticks, and the
//! [`Snapshot`] and [`Detail`] a progress view reads from them.

use crate::heads::Heads;
use crate::recorder;
use hdrhistogram::Histogram;
use shootout_model::{FailureCounts, TargetStats};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The head of a rendered request: its bytes up to and including the blank line (all of
/// them when there is none).
pub(crate) fn head_of(bytes: &[u8]) -> &[u8] {
    memchr::memmem::find(bytes, b"\r\n\r\n").map_or(bytes, |at| &bytes[..at + 4])
}

/// Live counters of one worker, published every tick (not per request) for progress views;
/// with [`Control::watch`] also its details, at most every 100 ms.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Live {
    completed: AtomicU64,
    failed: AtomicU64,
    /// Failures by class, status codes and latencies, when a view watches.
    detail: Option<Mutex<recorder::Published>>,
}

impl Live {
    /// Publishes `rec`'s counters, and its details too when `detail` and a view watches
    /// (waiting for the slot only when `wait`).
    pub(crate) fn publish(&self, rec: &recorder::Recorder, detail: bool, wait: bool) {
        self.completed
            .store(rec.counts.completed, Ordering::Relaxed);
        self.failed.store(rec.counts.failed(), Ordering::Relaxed);
        if let (true, Some(slot)) = (detail, &self.detail) {
            rec.publish(slot, wait);
        }
    }

    /// True when a view watches the details.
    pub(crate) fn watched(&self) -> bool {
        self.detail.is_some()
    }
}

/// How a caller watches and stops a run.
#[derive(Debug, Default)]
pub struct Control {
    /// Set to end the run early; requests in flight are counted as aborted.
    pub stop: Arc<AtomicBool>,
    pub(crate) live: Vec<Live>,
    pub(crate) started: std::sync::OnceLock<Instant>,
    /// Set by [`Control::finish`].
    pub(crate) finish: AtomicBool,
    /// Start the measured run's clock at this wall-clock time, once every worker is set up
    /// (and, in rate mode, connected): shards of one load on several machines start
    /// together. Past or unset: at once. The caller bounds how far ahead it is.
    pub start_at: Option<SystemTime>,
    /// Keep the heads of this many answers (and the first request's) as a sample: see
    /// [`Heads`]. 0, the default: none.
    pub sample_heads: usize,
    /// HTTP/3 sends and receives batches of datagrams with UDP segmentation offload (GSO
    /// and GRO) where the kernel has it; the default. False: one datagram per system
    /// call, as where the kernel lacks it.
    pub udp_offload: bool,
    pub(crate) heads: std::sync::Mutex<Heads>,
}

/// A running load's details so far, summed over the workers (see [`Control::detail`]).
#[derive(Debug, Clone)]
pub struct Detail {
    /// Failed requests per class.
    pub failures: FailureCounts,
    /// Final responses per status code.
    pub status: BTreeMap<u16, u64>,
    /// Latency (µs, two significant figures) of the answered requests, as the run's
    /// latency counts it (from the intended send time in rate mode).
    pub latency: Histogram<u64>,
    /// Per kind of request, in the run's order (a journey's steps, a list's entries): empty
    /// without kinds, or with more than [`crate::recorder::LIVE_KINDS`]. Labels are left
    /// empty: the caller knows the names.
    pub kinds: Vec<TargetStats>,
    /// Per journey, in the file's order (as `kinds`): journeys ended, ok, failed by class,
    /// and their durations.
    pub journeys: Vec<TargetStats>,
}

/// Adds `from` (one worker's) into `sums`, grown to its length.
fn add_up(sums: &mut Vec<TargetStats>, from: &[TargetStats]) {
    if sums.len() < from.len() {
        sums.resize_with(from.len(), || TargetStats::new(""));
    }
    for (sum, f) in sums.iter_mut().zip(from) {
        // A live view's counts stay far below u64::MAX; a sum that would not is left as
        // it was.
        let _ = sum.add(f);
    }
}

/// Progress of a running load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// Requests completed so far.
    pub completed: u64,
    /// Of which failed.
    pub failed: u64,
    /// Time since the measured run started (zero before).
    pub elapsed: Duration,
}

impl Control {
    /// A control for a run with up to `threads` workers.
    pub fn new(threads: usize) -> Self {
        Self::with_stop(threads, Arc::default())
    }

    /// A control whose stop flag is shared (e.g. with a Ctrl-C handler).
    pub fn with_stop(threads: usize, stop: Arc<AtomicBool>) -> Self {
        Control {
            stop,
            live: (0..threads.max(1)).map(|_| Live::default()).collect(),
            started: std::sync::OnceLock::new(),
            finish: AtomicBool::new(false),
            start_at: None,
            sample_heads: 0,
            udp_offload: true,
            heads: std::sync::Mutex::default(),
        }
    }

    /// Ends the run now as if its time were up (not as a stop: the run is not
    /// interrupted): each worker ends at its next tick (within 100 ms), aborting what is
    /// in flight, and the run's time and rates are those of its shorter length.
    pub fn finish(&self) {
        self.finish.store(true, Ordering::Relaxed);
    }

    /// The heads sampled by the last run (see [`Control::sample_heads`]).
    pub fn heads(&self) -> Heads {
        self.heads.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// Asks the workers to publish their details too ([`Control::detail`]), for a live
    /// view: each copies them at most every 100 ms from its tick, never per request.
    pub fn watch(&mut self) {
        for l in &mut self.live {
            l.detail = Some(Mutex::default());
        }
    }

    /// The details as of each worker's last publication; `None` unless [`Control::watch`]
    /// was called. Each worker's slot is held only while it is added.
    pub fn detail(&self) -> Option<Detail> {
        let mut d = Detail {
            failures: FailureCounts::default(),
            status: BTreeMap::new(),
            latency: recorder::second_histogram(),
            kinds: Vec::new(),
            journeys: Vec::new(),
        };
        let mut status = [0u64; 1000];
        for l in &self.live {
            let p = l.detail.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
            d.failures += &p.failures;
            for (sum, n) in status.iter_mut().zip(p.status.iter()) {
                *sum += n;
            }
            // Same bounds on both sides: adding cannot fail.
            let _ = d.latency.add(&p.latency);
            add_up(&mut d.kinds, &p.kinds);
            add_up(&mut d.journeys, &p.journeys);
        }
        d.status = (0u16..).zip(status).filter(|(_, n)| *n > 0).collect();
        Some(d)
    }

    /// How many workers this control was made for (the load's threads, at least 1): each
    /// keeps its own share of an open loop's schedule.
    pub fn workers(&self) -> usize {
        self.live.len()
    }

    /// The counters as of the last tick of each worker.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            completed: self
                .live
                .iter()
                .map(|l| l.completed.load(Ordering::Relaxed))
                .sum(),
            failed: self
                .live
                .iter()
                .map(|l| l.failed.load(Ordering::Relaxed))
                .sum(),
            elapsed: self.started.get().map_or(Duration::ZERO, |s| s.elapsed()),
        }
    }
}
