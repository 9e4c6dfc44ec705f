//! The workers' outputs become one [`RunResult`]: counts and histograms added, the
//! per-second series joined second by second, the schedule summed. The warnings a reader
//! must see are the analysis' to derive (`shootout_analysis::load_warnings`), from these facts.

use crate::event_loop::{Output, Schedule};
use crate::recorder;
use hdrhistogram::serialization::Deserializer;
use shootout_model::{
    Counts, FirstResponse, GeneratorStats, Histograms, LoadSpec, Pace, RunResult, Sample,
    ScheduleStats, SecondStats, StreamStats, TargetStats,
};
use std::time::{Instant, SystemTime};

/// The workers' outputs added up, before they become one [`RunResult`].
struct Totals {
    counts: Counts,
    histograms: Histograms,
    seconds: Vec<recorder::RawSecond>,
    samples: Vec<Sample>,
    /// The earliest first response of any worker, with when it came.
    first: Option<(Instant, FirstResponse)>,
    generator: GeneratorStats,
    ended: Instant,
    interrupted: bool,
    schedule: Option<Schedule>,
    /// Each worker's table of body lengths, and its count of further lengths.
    lengths: Vec<(Vec<(u64, u64)>, u64)>,
    /// Per kind of request: completed, ok, failures, latency (µs).
    targets: Vec<TargetStats>,
    /// Per journey: ended, ok, failures, duration (µs).
    journeys: Vec<TargetStats>,
    /// A streaming gRPC run's calls and replies.
    stream: Option<Box<StreamStats>>,
    /// The ages of the requests in flight at the end (µs).
    in_flight: hdrhistogram::Histogram<u64>,
}

impl Totals {
    fn new(start: Instant, threads: usize) -> Self {
        Totals {
            counts: Counts::default(),
            histograms: Histograms::new(),
            seconds: Vec::new(),
            samples: Vec::new(),
            first: None,
            generator: GeneratorStats {
                threads,
                ..Default::default()
            },
            ended: start,
            interrupted: false,
            schedule: None,
            lengths: Vec::new(),
            targets: Vec::new(),
            journeys: Vec::new(),
            stream: None,
            in_flight: shootout_model::latency_histogram(),
        }
    }

    /// Adds one worker's output.
    fn add(&mut self, o: Output) {
        let r = o.rec;
        let spun = r.spun;
        self.counts.merge(&r.counts);
        // Same bounds everywhere: adding cannot fail.
        let _ = self.histograms.add(&r.histograms);
        let _ = self.in_flight.add(&o.in_flight);
        self.seconds.extend(r.series);
        self.samples.extend(r.samples);
        if let (Some(at), Some(f)) = (r.first_at, r.first) {
            if self.first.as_ref().is_none_or(|(t, _)| at < *t) {
                self.first = Some((at, f));
            }
        }
        self.lengths.push((r.lengths, r.other_lengths));
        add_kinds(&mut self.targets, r.targets);
        add_kinds(&mut self.journeys, r.journeys);
        match (&mut self.stream, r.stream) {
            (Some(acc), Some(s)) => acc.add(&s),
            (acc, s) => *acc = acc.take().or(s),
        }
        let g = &mut self.generator;
        g.cpu_user += o.cpu.0;
        g.cpu_sys += o.cpu.1;
        // Busy polling was waiting for events, not work.
        let worked = (o.cpu.0 + o.cpu.1).saturating_sub(spun);
        let busy = worked.as_secs_f64() / o.wall.as_secs_f64().max(1e-9);
        g.busiest_thread = g.busiest_thread.max(busy.min(1.0));
        self.ended = self.ended.max(o.ended);
        self.interrupted |= o.interrupted;
        if let Some(s) = o.schedule {
            let acc = self.schedule.get_or_insert_with(Default::default);
            acc.due += s.due;
            acc.sent += s.sent;
            acc.late += s.late;
            acc.late_no_connection += s.late_no_connection;
            acc.max_lag = acc.max_lag.max(s.max_lag);
            // Same bounds on both sides: adding cannot fail.
            let _ = acc.lag.add(&s.lag);
            acc.peak_connections += s.peak_connections;
            acc.capped |= s.capped;
            acc.spun += s.spun;
            acc.gaps.extend(s.gaps);
            acc.overtaken += s.overtaken;
        }
    }

    /// ab's "Length" failures: answers whose body length differs from the run's first.
    fn length_mismatch(&self) -> u64 {
        let first_len = self.first.as_ref().map(|(_, f)| f.body_len);
        self.lengths
            .iter()
            .map(|(table, other)| {
                other
                    + table
                        .iter()
                        .filter(|(len, _)| Some(*len) != first_len)
                        .map(|(_, n)| n)
                        .sum::<u64>()
            })
            .sum()
    }
}

/// Adds one worker's per-kind counts and histograms to the run's.
fn add_kinds(acc: &mut Vec<TargetStats>, worker: Vec<TargetStats>) {
    if acc.is_empty() {
        *acc = worker;
        return;
    }
    for (a, t) in acc.iter_mut().zip(&worker) {
        // Same bounds on both sides, and a worker's counts far below u64::MAX: adding
        // cannot fail.
        let _ = a.add(t);
    }
}

/// The workers' outputs as one result (its warnings left to the analysis).
pub(crate) fn merge(
    spec: &LoadSpec,
    start: Instant,
    started: SystemTime,
    threads: usize,
    max_connections: usize,
    outs: Vec<Output>,
) -> RunResult {
    let mut t = Totals::new(start, threads);
    for o in outs {
        t.add(o);
    }
    t.samples.sort_by_key(|s| s.start_us);
    // ab's notion assumes one document: a list's entries (of requests or messages)
    // differ in length by design.
    if spec.list.is_none() && spec.ws_messages.is_none() && spec.journey.is_none() {
        t.counts.length_mismatch = t.length_mismatch();
    }
    let duration = t.ended.saturating_duration_since(start);
    RunResult {
        started,
        duration,
        counts: t.counts,
        histograms: t.histograms,
        series: merge_seconds(t.seconds),
        samples: t.samples,
        first_response: t.first.map(|(_, f)| f),
        generator: t.generator,
        schedule: match (spec.pace, t.schedule) {
            (Pace::Rate(rate), Some(s)) => Some(ScheduleStats {
                target_rps: rate,
                achieved_rps: shootout_model::per_second(s.sent, duration),
                due: s.due,
                sent: s.sent,
                late: s.late,
                late_no_connection: s.late_no_connection,
                max_lag: s.max_lag,
                lag_p50_us: s.lag.value_at_quantile(0.5),
                lag_p99_us: s.lag.value_at_quantile(0.99),
                lag_p999_us: s.lag.value_at_quantile(0.999),
                connections: s.peak_connections as u64,
                max_connections: max_connections as u64,
                capped: s.capped,
                spun: s.spun,
                arrival: shootout_model::arrival_fit::arrival_check(spec.arrival, &s.gaps),
                overtaken: s.overtaken,
            }),
            _ => None,
        },
        interrupted: t.interrupted,
        warnings: Vec::new(),
        // Measured around the run by its caller, when the server is on this machine.
        listen: None,
        targets: labelled(kind_labels(spec).into_iter(), t.targets),
        journeys: labelled(journey_labels(spec).into_iter(), t.journeys),
        // Given by the caller that watched the run against its conditions.
        until: None,
        warm_up: None,
        stream: t.stream,
        in_flight_at_end: Some(t.in_flight),
    }
}

/// The names of the kinds of request `spec`'s run counts apart, in the workers' order:
/// a list's entries (`METHOD PATH`), or each journey's steps (`JOURNEY › STEP`); none
/// otherwise.
pub fn kind_labels(spec: &LoadSpec) -> Vec<String> {
    match (&spec.list, &spec.journey) {
        (Some(list), _) => list.entries.iter().map(|e| e.label()).collect(),
        (None, Some(j)) => j.file.step_labels(),
        (None, None) => Vec::new(),
    }
}

/// The names of `spec`'s journeys, in the file's order (none without journeys).
pub fn journey_labels(spec: &LoadSpec) -> Vec<String> {
    spec.journey.as_ref().map_or_else(Vec::new, |j| {
        j.file.journeys.iter().map(|j| j.name.clone()).collect()
    })
}

/// Per-kind counts named by `labels`, in order.
fn labelled(labels: impl Iterator<Item = String>, kinds: Vec<TargetStats>) -> Vec<TargetStats> {
    labels
        .zip(kinds)
        .map(|(label, kind)| TargetStats { label, ..kind })
        .collect()
}

/// Joins the workers' seconds: one reusable histogram, one second at a time, so memory
/// stays flat however long the run was.
fn merge_seconds(mut raw: Vec<recorder::RawSecond>) -> Vec<SecondStats> {
    raw.sort_by_key(|s| s.second);
    let mut de = Deserializer::new();
    let mut acc = recorder::second_histogram();
    let mut out = Vec::new();
    for group in raw.chunk_by(|a, b| a.second == b.second) {
        acc.reset();
        for s in group {
            if let Ok(h) = de.deserialize::<u64, _>(&mut s.histogram.as_slice()) {
                // Same bounds on both sides: adding cannot fail.
                let _ = acc.add(&h);
            }
        }
        out.push(SecondStats::of(
            group[0].second,
            group.iter().map(|s| s.completed).sum(),
            group.iter().map(|s| s.failed).sum(),
            &acc,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_second(second: u32, latencies_us: &[u64]) -> recorder::RawSecond {
        use hdrhistogram::serialization::{Serializer, V2Serializer};
        let mut h = recorder::second_histogram();
        latencies_us.iter().for_each(|&v| h.record(v).unwrap());
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&h, &mut bytes).unwrap();
        recorder::RawSecond {
            second,
            completed: latencies_us.len() as u64,
            failed: 1,
            histogram: bytes,
        }
    }

    /// Regression: merging once held a full-precision histogram per second of the run, so
    /// peak memory grew with run length. Seconds are now merged one at a time.
    #[test]
    fn seconds_of_all_workers_merge_per_second() {
        let workers = vec![
            raw_second(1, &[100, 100]),
            raw_second(0, &[10]),
            raw_second(1, &[1000, 1000, 1000]),
            raw_second(3, &[5]),
        ];
        let s = merge_seconds(workers);
        let rows: Vec<_> = s
            .iter()
            .map(|s| (s.second, s.completed, s.failed))
            .collect();
        assert_eq!(rows, vec![(0, 1, 1), (1, 5, 2), (3, 1, 1)]);
        // 2 significant figures: values within 1%.
        let near = |got: f64, want: f64| (got - want).abs() <= want / 100.0;
        assert!(
            near(s[1].p50_us as f64, 1000.0) && near(s[1].max_us as f64, 1000.0),
            "{:?}",
            s[1]
        );
        assert!(near(s[1].mean_us, 640.0), "{:?}", s[1]);
    }
}
