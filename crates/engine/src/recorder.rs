//! The per-worker recorder: everything one worker thread measured, kept without locks or
//! allocation per request, merged with the other workers' recorders when the run ends.
//!
//! Histograms hold microseconds. Per-second latency histograms are serialized (HdrHistogram
//! V2, a few hundred bytes) when their second ends, so memory grows by a few hundred bytes
//! a second, not with the number of requests.
//!
//! For a live view a recorder can also [`publish`](Recorder::publish) what it counted so
//! far into a [`Published`] slot: the worker calls it from its tick (at most ten times a
//! second), never per request, and a busy slot is skipped rather than waited for.

use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use shootout_model::{
    Counts, Ended, Expectation, FailureCounts, FailureKind, FirstResponse, Histograms, Sample,
    TargetStats,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Timings of one request.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// When the request started: its due time in rate mode, else when its connection began
    /// connecting (new connection) or when it was sent (reused connection).
    pub start: Instant,
    /// When its bytes were handed to the socket.
    pub sent: Instant,
    /// When the first byte of the answer arrived (`end` when nothing arrived).
    pub first_byte: Instant,
    /// When it ended.
    pub end: Instant,
    /// Time to connect, when this request opened its connection.
    pub connect: Duration,
    /// Its kind (entry of the request list; 0 without one).
    pub kind: usize,
}

/// A request's clock while it is out, kept alike by every protocol's request slot: when
/// it started (its due time in rate mode, else when it was claimed), when its bytes were
/// handed to the socket (the first time, if sent again), when the first byte of its
/// answer arrived, and the connect time charged to it (it waited for its connection to
/// open). [`Clock::timing`] ends it.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub start: Instant,
    pub sent: Instant,
    pub first_byte: Option<Instant>,
    pub connect: Duration,
}

impl Clock {
    /// Started at `start`, sent at `sent`, charged `connect`; nothing answered yet.
    #[inline]
    pub fn new(start: Instant, sent: Instant, connect: Duration) -> Clock {
        Clock {
            start,
            sent,
            first_byte: None,
            connect,
        }
    }

    /// Its timings, had it ended at `end`, as a request of `kind`.
    #[inline]
    pub fn timing(&self, end: Instant, kind: usize) -> Timing {
        Timing::ended(
            self.start,
            self.sent,
            self.first_byte,
            end,
            self.connect,
            kind,
        )
    }
}

impl Timing {
    /// A request that ended at `end`: the one rule for its first byte (`end` when nothing
    /// of an answer arrived), for every protocol's request slot.
    #[inline]
    pub fn ended(
        start: Instant,
        sent: Instant,
        first_byte: Option<Instant>,
        end: Instant,
        connect: Duration,
        kind: usize,
    ) -> Timing {
        Timing {
            start,
            sent,
            first_byte: first_byte.unwrap_or(end),
            end,
            connect,
            kind,
        }
    }

    /// A request that started at `start` and ended at `end` without being sent: charged
    /// with bytes its connection received unasked.
    pub fn unsent(start: Instant, end: Instant, kind: usize) -> Timing {
        Timing {
            start,
            sent: end,
            first_byte: end,
            end,
            connect: Duration::ZERO,
            kind,
        }
    }
}

/// What came back for one request, as the expectations judge it.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    /// Status of the final response.
    pub status: u16,
    /// Body bytes.
    pub body_len: u64,
    /// The body held `--expect-body-contains`'s text.
    pub matched: bool,
    /// WebSocket: the reply equals the message sent (always true over HTTP).
    pub echoed: bool,
}

/// One second of one worker: counts and its latency histogram, serialized.
#[derive(Debug, Clone)]
pub struct RawSecond {
    /// Seconds since the run started.
    pub second: u32,
    /// Requests completed in this second.
    pub completed: u64,
    /// Of which failed.
    pub failed: u64,
    /// V2-serialized latency histogram (µs) of the answered requests.
    pub histogram: Vec<u8>,
}

/// What one worker measured.
pub struct Recorder {
    run_start: Instant,
    /// Counts; `status` is filled from `status_codes` by [`Recorder::finish`].
    pub counts: Counts,
    status_codes: Box<[u64; 1000]>,
    /// Latency from start (due time in rate mode), from send, connect, send → first byte,
    /// total − connect, and the setup of every connection opened (see
    /// [`Recorder::connected`]), µs.
    pub histograms: Histograms,
    second: u32,
    second_hist: Histogram<u64>,
    second_completed: u64,
    second_failed: u64,
    /// Finished seconds.
    pub series: Vec<RawSecond>,
    /// Reservoir (or every request) of samples.
    pub samples: Vec<Sample>,
    reservoir: usize,
    keep_all: bool,
    seen: u64,
    rng: u64,
    /// The first response's facts.
    pub first: Option<FirstResponse>,
    /// When the first response arrived (the run's first is the earliest of the workers').
    pub first_at: Option<Instant>,
    /// Answers per body length, for ab's "Length" failures: the first [`LENGTHS`] distinct
    /// lengths seen, and in `other_lengths` the answers of any further length.
    pub lengths: Vec<(u64, u64)>,
    /// Answers whose length did not fit in `lengths`.
    pub other_lengths: u64,
    /// Per kind of request (when the run reports them): completed, ok, failed per class,
    /// latency (µs); unlabelled (the merge names them).
    pub targets: Vec<TargetStats>,
    /// Per journey (`--journey`): ended, ok, failed per class of its first failed step,
    /// duration (µs); unlabelled.
    pub journeys: Vec<TargetStats>,
    /// A sample of heads for `-v 2` (see [`crate::heads::Heads`]); empty unless asked for.
    pub heads: crate::heads::Heads,
    /// Time spent busy polling (see `LoadSpec::busy_poll`): CPU the thread used
    /// waiting for events, left out of how busy it was.
    pub spun: std::time::Duration,
    /// The smallest latency of an answer since the worker's loop last took it (µs;
    /// `u64::MAX`: none): how long a busy-polling worker may nap (`event_loop::Spin`).
    pub least_us: u64,
    /// When a live view watches: the latencies (µs) of the finished seconds, added up at
    /// each second's end, so that a publication costs two small histogram copies.
    seconds_done: Option<Histogram<u64>>,
    /// A streaming gRPC run's calls and the timing of their replies.
    pub stream: Option<Box<shootout_model::StreamStats>>,
}

/// One worker's counts as of its last publication, for a live view (see
/// [`Recorder::publish`]).
#[derive(Debug)]
pub struct Published {
    /// Failed requests per class.
    pub failures: FailureCounts,
    /// Final responses per status code (index = code, 999 for any above).
    pub status: Box<[u64; 1000]>,
    /// Latency (µs, two significant figures) of the answered requests.
    pub latency: Histogram<u64>,
    /// Per kind of request (a journey's steps, a list's entries), when there are at most
    /// [`LIVE_KINDS`]: what each counted so far (labels left empty).
    pub kinds: Vec<TargetStats>,
    /// Per journey, when there are at most [`LIVE_KINDS`]: what each counted so far
    /// (labels left empty).
    pub journeys: Vec<TargetStats>,
}

/// The most kinds of request a live view is told apart: a journey's steps, a short list;
/// a longer list is watched as a whole (copying thousands of histograms ten times a second
/// would cost the worker more than the view is worth).
pub const LIVE_KINDS: usize = 64;

impl Default for Published {
    fn default() -> Self {
        Published {
            failures: FailureCounts::default(),
            status: Box::new([0; 1000]),
            latency: second_histogram(),
            kinds: Vec::new(),
            journeys: Vec::new(),
        }
    }
}

/// Copies `from` into `to` when there are at most [`LIVE_KINDS`] of them (allocated at the
/// first publication only); leaves `to` empty otherwise.
fn copy_live(to: &mut Vec<TargetStats>, from: &[TargetStats]) {
    if from.len() > LIVE_KINDS {
        return;
    }
    to.resize_with(from.len(), || TargetStats::new(""));
    for (t, f) in to.iter_mut().zip(from) {
        t.set_to(f);
    }
}

/// Distinct body lengths counted per worker (a linear scan: usually one entry).
pub const LENGTHS: usize = 16;

pub use shootout_model::result::second_histogram;

fn us(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u32::MAX)) as u64
}

impl Recorder {
    /// A recorder for a run that started at `run_start`, keeping `reservoir` samples (or
    /// all of them).
    pub fn new(run_start: Instant, reservoir: usize, keep_all: bool, seed: u64) -> Self {
        Recorder {
            run_start,
            counts: Counts::default(),
            status_codes: Box::new([0; 1000]),
            histograms: Histograms::new(),
            second: 0,
            second_hist: second_histogram(),
            second_completed: 0,
            second_failed: 0,
            series: Vec::new(),
            samples: Vec::with_capacity(if keep_all {
                1 << 16
            } else {
                reservoir.min(1 << 16)
            }),
            reservoir,
            keep_all,
            seen: 0,
            rng: seed | 1,
            first: None,
            first_at: None,
            lengths: Vec::with_capacity(LENGTHS),
            other_lengths: 0,
            targets: Vec::new(),
            journeys: Vec::new(),
            heads: crate::heads::Heads::default(),
            spun: std::time::Duration::ZERO,
            least_us: u64::MAX,
            seconds_done: None,
            stream: None,
        }
    }

    /// Keeps what [`Recorder::publish`] needs (called before the run when a view watches).
    pub fn watch(&mut self) {
        self.seconds_done = Some(second_histogram());
    }

    /// Copies the counts so far into `slot` (a view reads it). With `wait` false a slot the
    /// view holds right now is skipped: the worker never waits for a reader mid-run.
    pub fn publish(&self, slot: &std::sync::Mutex<Published>, wait: bool) {
        let mut p = match (wait, slot.try_lock()) {
            (_, Ok(p)) => p,
            (true, Err(_)) => slot.lock().unwrap_or_else(|e| e.into_inner()),
            (false, Err(_)) => return,
        };
        p.failures = self.counts.failures;
        p.status.copy_from_slice(&self.status_codes[..]);
        // Same bounds on all sides: copying and adding cannot fail.
        match &self.seconds_done {
            Some(done) => {
                let _ = p.latency.set_to(done);
            }
            None => p.latency.reset(),
        }
        let _ = p.latency.add(&self.second_hist);
        copy_live(&mut p.kinds, &self.targets);
        copy_live(&mut p.journeys, &self.journeys);
    }

    /// Counts each of `kinds` kinds of request apart (none when `kinds` is 0).
    pub fn per_kind(&mut self, kinds: usize) {
        self.targets = (0..kinds).map(|_| TargetStats::new("")).collect();
    }

    /// Counts each of `journeys` journeys apart.
    pub fn per_journey(&mut self, journeys: usize) {
        self.journeys = (0..journeys).map(|_| TargetStats::journey("")).collect();
    }

    /// Journey `j` ended as `how` (ok, or as its first failed step), `took` after its
    /// first step was due, of which it was `busy` (its think times left out).
    pub fn journey_ended(&mut self, j: usize, how: Ended, took: Duration, busy: Duration) {
        if let Some(e) = self.journeys.get_mut(j) {
            e.count(how);
            e.latency.saturating_record(us(took));
            if let Some(b) = e.busy.as_mut() {
                b.saturating_record(us(busy));
            }
        }
    }

    /// Measures from `run_start` on (set once the run's clock starts).
    pub fn restart(&mut self, run_start: Instant) {
        self.run_start = run_start;
    }

    /// Counts an answer of `len` body bytes.
    pub fn count_length(&mut self, len: u64) {
        if let Some(e) = self.lengths.iter_mut().find(|e| e.0 == len) {
            e.1 += 1;
        } else if self.lengths.len() < LENGTHS {
            self.lengths.push((len, 1));
        } else {
            self.other_lengths += 1;
        }
    }

    /// A request answered in full, judged against `expect`; the first answer of the worker
    /// is kept with its `server` field (asked for only then).
    pub fn credit(
        &mut self,
        t: &Timing,
        a: Answer,
        server: impl FnOnce() -> Option<String>,
        expect: &Expectation,
    ) {
        let failure = self.judge(t, a, server, expect);
        self.answered(t, a.status, failure);
    }

    /// A request answered in full and judged by its caller (a journey's step, by its own
    /// expectations): `failure` is its class, if it failed.
    pub fn credit_judged(
        &mut self,
        t: &Timing,
        a: Answer,
        server: impl FnOnce() -> Option<String>,
        failure: Option<FailureKind>,
    ) {
        self.note(t, a, server);
        self.answered(t, a.status, failure);
    }

    /// A journey's step that could not be sent (a value it needs is unset, or unsafe in a
    /// header): failed in its kind's count, never a request.
    pub fn unsent_step(&mut self, kind: usize) {
        if let Some(k) = self.targets.get_mut(kind) {
            k.count(Ended::Unsent);
        }
    }

    /// A WebSocket reply answered in full, judged as [`Recorder::credit`] judges an
    /// answer; its status (the handshake's 101) is not counted again: that is counted
    /// once per connection ([`Recorder::count_status`]).
    pub fn credit_reply(&mut self, t: &Timing, a: Answer, expect: &Expectation) {
        let failure = self.judge(t, a, || None, expect);
        self.record(t, a.status, failure, false);
    }

    /// Counts a final response with `status` that is no request's answer (a WebSocket
    /// handshake's 101).
    pub fn count_status(&mut self, status: u16) {
        self.status_codes[(status as usize).min(999)] += 1;
    }

    /// The failure class `a` earns against `expect`, if any; counts its length, and keeps
    /// the worker's first answer.
    fn judge(
        &mut self,
        t: &Timing,
        a: Answer,
        server: impl FnOnce() -> Option<String>,
        expect: &Expectation,
    ) -> Option<FailureKind> {
        self.note(t, a, server);
        if !expect.status.contains(a.status) {
            Some(FailureKind::Status)
        } else if expect.length.is_some_and(|l| l != a.body_len)
            || (expect.body_contains.is_some() && !a.matched)
            || (expect.echo && !a.echoed)
        {
            Some(FailureKind::Body)
        } else {
            None
        }
    }

    /// Counts an answer's body, and keeps the worker's first answer.
    fn note(&mut self, t: &Timing, a: Answer, server: impl FnOnce() -> Option<String>) {
        self.counts.body_bytes += a.body_len;
        if self.first.is_none() {
            self.first_at = Some(t.end);
            self.first = Some(FirstResponse {
                status: a.status,
                server: server(),
                body_len: a.body_len,
            });
        }
        self.count_length(a.body_len);
    }

    /// A connection opened after `took` (TCP connect, and the TLS handshake over https):
    /// counted, and its setup time recorded whether or not a request waited for it.
    pub fn connected(&mut self, took: Duration) {
        self.counts.connections_opened += 1;
        self.histograms.setup.saturating_record(us(took));
    }

    /// A request answered in full; `failure` is `Some` when the answer failed an expectation.
    pub fn answered(&mut self, t: &Timing, status: u16, failure: Option<FailureKind>) {
        self.record(t, status, failure, true);
    }

    /// An answer's timings and outcome; its status counted when `count`.
    fn record(&mut self, t: &Timing, status: u16, failure: Option<FailureKind>, count: bool) {
        let total = us(t.end.saturating_duration_since(t.start));
        self.least_us = self.least_us.min(total);
        let raw = us(t.end.saturating_duration_since(t.sent));
        let connect = us(t.connect);
        let waiting = us(t.first_byte.saturating_duration_since(t.sent));
        let h = &mut self.histograms;
        h.latency.saturating_record(total);
        h.latency_raw.saturating_record(raw);
        h.connect.saturating_record(connect);
        h.waiting.saturating_record(waiting);
        h.processing
            .saturating_record(total.saturating_sub(connect));
        if count {
            self.count_status(status);
        }
        self.roll(t.end);
        self.second_hist.saturating_record(total);
        if let Some(k) = self.targets.get_mut(t.kind) {
            k.latency.saturating_record(total);
        }
        self.end(t, total, status, failure);
    }

    /// A server stream's reply, the unit of its run: ok, its latency from `t.start` (the
    /// call's start for its first reply, the previous reply for the next) to `t.end`.
    pub fn reply(&mut self, t: &Timing) {
        self.record(t, 200, None, false);
    }

    /// A streaming call ended well (`cancelled`: at the client's limit), answered with
    /// `a`: its status and body counted once for the call; its units were its replies
    /// (server streaming) or this one answer (client streaming, `unit`).
    pub fn call_ended(&mut self, t: &Timing, a: Answer, cancelled: bool, unit: bool) {
        if let Some(s) = self.stream.as_deref_mut() {
            s.calls_ok += 1;
            s.cancelled += u64::from(cancelled);
        }
        self.note(t, a, || None);
        if unit {
            self.answered(t, a.status, None);
        } else {
            self.count_status(a.status);
        }
    }

    /// A request that got no complete answer.
    pub fn failed(&mut self, t: &Timing, kind: FailureKind) {
        let total = us(t.end.saturating_duration_since(t.start));
        self.roll(t.end);
        self.end(t, total, 0, Some(kind));
    }

    fn end(&mut self, t: &Timing, total_us: u64, status: u16, failure: Option<FailureKind>) {
        self.counts.completed += 1;
        self.second_completed += 1;
        if let Some(k) = self.targets.get_mut(t.kind) {
            k.count(failure.map_or(Ended::Ok, Ended::Failed));
        }
        match failure {
            None => self.counts.ok += 1,
            Some(k) => {
                self.counts.failures[k] += 1;
                self.second_failed += 1;
            }
        }
        self.sample(Sample {
            start_us: us(t.start.saturating_duration_since(self.run_start)),
            connect_us: us(t.connect) as u32,
            waiting_us: us(t.first_byte.saturating_duration_since(t.sent)) as u32,
            total_us: total_us as u32,
            status,
            failure,
        });
    }

    /// Uniform reservoir sampling (Vitter's algorithm R) with a xorshift generator.
    fn sample(&mut self, s: Sample) {
        self.seen += 1;
        if self.keep_all || self.samples.len() < self.reservoir {
            self.samples.push(s);
            return;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let j = self.rng % self.seen;
        if (j as usize) < self.reservoir {
            self.samples[j as usize] = s;
        }
    }

    /// Closes the current second when `now` is past it.
    fn roll(&mut self, now: Instant) {
        let second = now.saturating_duration_since(self.run_start).as_secs() as u32;
        if second != self.second {
            self.flush_second();
            self.second = second;
        }
    }

    fn flush_second(&mut self) {
        if self.second_completed == 0 {
            return;
        }
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&self.second_hist, &mut bytes)
            .expect("serializing into a Vec cannot fail");
        if let Some(done) = &mut self.seconds_done {
            // Same bounds on both sides: adding cannot fail.
            let _ = done.add(&self.second_hist);
        }
        self.series.push(RawSecond {
            second: self.second,
            completed: self.second_completed,
            failed: self.second_failed,
            histogram: bytes,
        });
        self.second_hist.reset();
        self.second_completed = 0;
        self.second_failed = 0;
    }

    /// Ends recording: flushes the last second and fills `counts.status`.
    pub fn finish(&mut self) {
        self.flush_second();
        let mut map = BTreeMap::new();
        for (code, &n) in self.status_codes.iter().enumerate() {
            if n > 0 {
                map.insert(code as u16, n);
            }
        }
        self.counts.status = map;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(start: Instant, ms: u64) -> Timing {
        let end = start + Duration::from_millis(ms);
        Timing {
            start,
            sent: start,
            first_byte: end,
            end,
            connect: Duration::ZERO,
            kind: 0,
        }
    }

    #[test]
    fn outcomes_add_up_and_seconds_roll() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, 3, false, 7);
        r.answered(&timing(t0, 5), 200, None);
        r.answered(
            &timing(t0 + Duration::from_millis(1500), 5),
            502,
            Some(FailureKind::Status),
        );
        r.failed(
            &timing(t0 + Duration::from_millis(2490), 10),
            FailureKind::Timeout,
        );
        r.answered(&timing(t0 + Duration::from_millis(2600), 1), 200, None);
        r.answered(&timing(t0 + Duration::from_millis(2700), 1), 200, None);
        r.finish();
        let c = &r.counts;
        assert_eq!((c.completed, c.ok, c.failed()), (5, 3, 2));
        assert_eq!(c.status.get(&200), Some(&3));
        assert_eq!(c.status.get(&502), Some(&1));
        assert_eq!(r.histograms.latency.len(), 4, "the timeout has no latency");
        let seconds: Vec<_> = r
            .series
            .iter()
            .map(|s| (s.second, s.completed, s.failed))
            .collect();
        assert_eq!(seconds, vec![(0, 1, 0), (1, 1, 1), (2, 3, 1)]);
        assert_eq!(r.samples.len(), 3, "reservoir bound");
    }

    #[test]
    fn reservoir_is_uniform_enough() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, 100, false, 42);
        for i in 0..10_000u64 {
            r.answered(&timing(t0 + Duration::from_micros(i), 1), 200, None);
        }
        let late = r.samples.iter().filter(|s| s.start_us >= 5_000).count();
        assert!(
            (30..=70).contains(&late),
            "{late} of 100 from the second half"
        );
    }
}
