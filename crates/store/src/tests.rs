//! The store's behaviour through its public API: round trips, interrupted runs, ordering,
//! migrations and the messages of its errors.

use super::*;
use hdrhistogram::Histogram;
use shootout_model::{
    latency_histogram, FailureKind, FirstResponse, GeneratorStats, LoadLevel, Protocol,
    ResourceSample, RunResult, Sample, ScheduleStats, SecondStats, StepStatus, Wire,
};
use std::collections::BTreeMap;
use std::time::UNIX_EPOCH;

/// An instant `secs` seconds (and some nanoseconds) after 2023-11-14.
fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::new(1_700_000_000 + secs, 123_456_789)
}

fn machine() -> MachineFacts {
    MachineFacts {
        cpu_model: "Test CPU @ 3.0GHz".into(),
        cores: 2,
        kernel: "6.1.0-test".into(),
        memory_bytes: 8 << 30,
        versions: BTreeMap::from([
            ("shootout".into(), "0.1.0".into()),
            ("nginx".into(), "1.25.3".into()),
        ]),
    }
}

fn new_run<'a>(name: &'a str, machine: &'a MachineFacts, started: SystemTime) -> NewRun<'a> {
    NewRun {
        name,
        plan_text: "name = \"demo\"\n[[contender]]\nname = \"nginx\"\n",
        plan_resolved: r#"{"name":"demo","contenders":[{"name":"nginx"}]}"#,
        machine,
        started,
    }
}

fn contender(name: &str) -> ContenderRecord<'_> {
    ContenderRecord {
        name,
        command: "nginx -c conf/nginx.conf",
        baseline: false,
        status: ContenderStatus::Measured,
        detail: "",
        version: None,
        stdout_log: None,
        stderr_log: None,
    }
}

/// A result with every field set to something recognisable.
/// A plan step's `until` that did not converge: a p99 read with an interval open above,
/// answers a second that held, a p50 with nothing read.
fn until_outcome(seed: u64) -> shootout_model::until::UntilOutcome {
    use shootout_model::until::{parse_all, Reading, UntilOutcome};
    UntilOutcome {
        conditions: parse_all(&["p99.9±5%,rps±2%,p50±1%".into()]).unwrap(),
        converged: seed
            .is_multiple_of(2)
            .then(|| std::time::Duration::from_millis(6_400 + seed)),
        last: vec![
            Some(Reading {
                value: 1.25,
                lo: 1.1,
                hi: 2.5 + seed as f64,
                open_above: true,
            }),
            Some(Reading {
                value: 998.5,
                lo: 990.25,
                hi: 1006.75,
                open_above: false,
            }),
            None,
        ],
    }
}

fn synthetic_result(seed: u64) -> RunResult {
    let mut latency = latency_histogram();
    let mut latency_raw = latency_histogram();
    let mut connect = latency_histogram();
    let mut waiting = latency_histogram();
    let mut processing = latency_histogram();
    for i in 0..5_000u64 {
        let v = 100 + (i * 37 + seed) % 20_000;
        latency.record(v + 50).unwrap();
        latency_raw.record(v).unwrap();
        connect.record(if i % 100 == 0 { 300 } else { 0 }).unwrap();
        waiting.record(v * 3 / 4).unwrap();
        processing.record(v - 10).unwrap();
    }
    latency.record(2_500_000).unwrap(); // one slow outlier
    connect.record(1_001_000).unwrap(); // a SYN retry: SlowConnects
    let mut setup = latency_histogram();
    for i in 0..51u64 {
        setup.record(200 + i * 7 + seed).unwrap(); // every connection opened
    }
    let mut failures = shootout_model::FailureCounts::default();
    failures[FailureKind::Timeout] = 2;
    failures[FailureKind::Status] = 5;
    failures[FailureKind::StreamReset] = 1;
    failures[FailureKind::Refused] = 4;
    failures[FailureKind::ConnectionError] = 6;
    failures[FailureKind::Handshake] = 7;
    failures[FailureKind::Closed] = 8;
    failures[FailureKind::Protocol] = 9;
    failures[FailureKind::GeneratorFault] = 3;
    let counts = shootout_model::Counts {
        completed: 5_039,
        ok: 4_994,
        failures,
        aborted: 3,
        status: BTreeMap::from([(200, 4_994), (503, 5)]),
        length_mismatch: 1,
        connections_opened: 51,
        connections_failed: 1,
        reconnects: 4,
        retried: 3,
        dropped: 2,
        bytes_received: 1_234_567,
        body_bytes: 1_000_000,
        bytes_sent: 345_678,
        stream_resets: BTreeMap::from([(2, 1), (7, 4)]),
        goaways: 2,
        close_codes: BTreeMap::from([(1001, 8), (4000, 1)]),
        pings_unanswered: 11,
        connections_opening: 12,
    };
    let mut r = RunResult {
        started: at(seed),
        duration: Duration::new(10, 987_654_321),
        counts,
        histograms: shootout_model::Histograms {
            latency,
            latency_raw,
            connect,
            waiting,
            processing,
            setup,
        },
        series: (0..11)
            .map(|s| {
                let mut h = shootout_model::result::second_histogram();
                h.record_n(900 + u64::from(s), 440).unwrap();
                h.record(20_000 + seed).unwrap();
                SecondStats {
                    second: s,
                    completed: 450 + u64::from(s),
                    failed: u64::from(s % 3),
                    mean_us: 1234.5 + f64::from(s),
                    p50_us: 1_000 + u64::from(s),
                    p99_us: 9_000,
                    max_us: 20_000 + seed,
                    // Each second's histogram as the engine serializes it; the last
                    // second has none (as a result file may give it).
                    histogram: if s < 10 {
                        SecondStats::of(s, 0, 0, &h).histogram
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect(),
        samples: (0..1_000u64)
            .map(|i| Sample {
                start_us: i * 2_000 + seed,
                connect_us: if i % 100 == 0 { 300 } else { 0 },
                waiting_us: 700 + i as u32,
                total_us: 900 + i as u32,
                status: if i % 200 == 1 { 503 } else { 200 },
                failure: (i % 200 == 1).then_some(FailureKind::Status),
            })
            .collect(),
        first_response: Some(FirstResponse {
            status: 200,
            server: Some("nginx/1.25.3".into()),
            body_len: 612,
        }),
        generator: GeneratorStats {
            threads: 2,
            cpu_user: Duration::from_micros(1_234_567),
            cpu_sys: Duration::from_nanos(2_345_678_901),
            busiest_thread: 0.95,
        },
        schedule: Some(ScheduleStats {
            target_rps: 500.0,
            achieved_rps: 455.25,
            due: 5_500,
            sent: 5_004,
            late: 120,
            late_no_connection: 100,
            max_lag: Duration::from_micros(15_250),
            lag_p50_us: 12,
            lag_p99_us: 2_400,
            lag_p999_us: 14_000,
            connections: 17,
            max_connections: 20,
            capped: true,
            spun: Duration::from_micros(31_500),
            // A seed past i64's range: its 64 bits come back as written.
            arrival: shootout_model::ArrivalCheck {
                process: shootout_model::Arrival::Poisson {
                    seed: u64::MAX - seed,
                },
                fit: Some(shootout_model::Fit {
                    n: 1_999,
                    statistic: 0.412_5,
                    p: 0.837,
                }),
            },
            overtaken: 9,
        }),
        interrupted: false,
        warnings: vec![],
        targets: ["GET /a/{seq}", "POST /b"]
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let mut latency = shootout_model::latency_histogram();
                latency.record(1_000 * (i as u64 + 1) + seed).unwrap();
                // Every class in its own column: each entry fails once per class, and
                // its unsent steps, set apart by the seed and the entry.
                let mut t = shootout_model::TargetStats::new(*label);
                for (c, n) in t.failures.0.iter_mut().enumerate() {
                    *n = 1 + c as u64 + seed;
                }
                t.unsent = 7 + i as u64;
                t.ok = 9;
                t.completed = 9 + t.failures.total() + t.unsent;
                t.latency = latency;
                t
            })
            .collect(),
        // A journey's duration; its steps would be the targets above.
        journeys: ["writer", "reader"]
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let mut latency = shootout_model::result::second_histogram();
                latency.record(40_000 * (i as u64 + 1) + seed).unwrap();
                latency.record(90_000 + seed).unwrap();
                let mut t = shootout_model::TargetStats::journey(*label);
                t.completed = 4 + i as u64;
                t.ok = 3;
                t.failures[FailureKind::Timeout] = i as u64;
                t.unsent = 1;
                t.latency = latency;
                // Its busy time: the duration less the think times, apart from it.
                let busy = t.busy.as_mut().unwrap();
                busy.record(7_000 * (i as u64 + 1) + seed).unwrap();
                busy.record_n(21_000 + seed, 3).unwrap();
                t
            })
            .collect(),
        listen: Some(shootout_model::ListenQueue {
            overflows: 3 + seed,
            drops: 5 + seed,
            accept: seed
                .is_multiple_of(2)
                .then_some(shootout_model::AcceptWaiting {
                    samples: 400 + seed,
                    waited: 17 + seed,
                    total: 60 + seed,
                    most: 9 + seed,
                    backlog: Some(128 + seed),
                    full: 3 + seed,
                }),
        }),
        until: Some(until_outcome(seed)),
        warm_up: Some(shootout_model::WarmedUp {
            took: std::time::Duration::from_millis(12_300 + seed),
            level: seed.is_multiple_of(2),
        }),
        stream: None,
        in_flight_at_end: Some(in_flight_ages(seed)),
    };
    r.note_streams_limited(100, Some(8));
    r
}

/// The ages (µs) of a synthetic step's requests in flight at its end: its 3 aborted and
/// 4 of those due and not sent.
fn in_flight_ages(seed: u64) -> Histogram<u64> {
    let mut h = latency_histogram();
    for age in [12_000, 250_000, 1_500_000, 3, 40, 900, 77_777] {
        h.record(age + seed).unwrap();
    }
    h
}

fn resources() -> Vec<ResourceSample> {
    (0..4u64)
        .map(|i| ResourceSample {
            at: Duration::from_millis(250 * i),
            cpu_user: Duration::from_millis(100 * i),
            cpu_sys: Duration::from_nanos(40_000_001 * i),
            rss_bytes: (20 << 20) + i,
            processes: 3,
            threads: 9 + i as u32,
            ctx_switches: 1_000 * i,
            fds: 60,
        })
        .collect()
}

fn step<'a>(
    run: RunId,
    contender: ContenderId,
    repetition: u32,
    result: &'a RunResult,
    resources: &'a [ResourceSample],
) -> StepRecord<'a> {
    StepRecord {
        run,
        contender,
        workload: "hello",
        level: LoadLevel::Rate {
            rps: 500.0,
            connections: 50,
        },
        repetition,
        started: at(100 + u64::from(repetition) * 20),
        ended: at(111 + u64::from(repetition) * 20),
        status: StepStatus::Complete,
        result,
        resources,
        wire: Wire {
            protocol: Protocol::Http2,
            // As the result's warning says: 100 asked, 8 allowed.
            streams: 100,
            pipeline: 1,
        },
        other_load: Some(shootout_model::OtherLoad {
            cpus: 2,
            others: Some(0.75),
            contenders: 0.4,
            interrupts: 0.31,
            steal: 0.03,
            load_avg: 2.5,
        }),
        search: None,
    }
}

fn assert_hist_eq(name: &str, got: &Histogram<u64>, want: &Histogram<u64>) {
    assert_eq!(got.len(), want.len(), "{name}: len");
    assert_eq!(got.min(), want.min(), "{name}: min");
    assert_eq!(got.max(), want.max(), "{name}: max");
    assert_eq!(
        got.value_at_quantile(0.99),
        want.value_at_quantile(0.99),
        "{name}: p99"
    );
    assert_eq!(got, want, "{name}: counts");
}

/// A step's result as read back, its packed histograms and samples decoded.
fn read_back(s: &StoredStep) -> RunResult {
    assert!(
        s.packed.is_some(),
        "a step read back keeps its histograms packed"
    );
    let mut r = s.unpacked().into_owned();
    r.samples = s.samples().into_owned();
    r
}

/// Every field of a stored result equals the one written.
fn assert_result_eq(got: &RunResult, want: &RunResult) {
    assert_eq!(got.started, want.started);
    assert_eq!(got.duration, want.duration);
    assert_eq!(got.counts, want.counts);
    for ((m, got), (_, want)) in got.histograms.iter().zip(want.histograms.iter()) {
        assert_hist_eq(m.key(), got, want);
    }
    assert_eq!(got.series, want.series);
    assert_eq!(got.samples, want.samples);
    assert_eq!(got.first_response, want.first_response);
    assert_eq!(got.generator, want.generator);
    assert_eq!(got.schedule, want.schedule);
    assert_eq!(got.interrupted, want.interrupted);
    assert_eq!(got.warnings, want.warnings);
    assert_eq!(got.listen, want.listen);
    match (&got.in_flight_at_end, &want.in_flight_at_end) {
        (Some(got), Some(want)) => assert_hist_eq("in flight at the end", got, want),
        (got, want) => assert_eq!(got.is_some(), want.is_some(), "in flight at the end"),
    }
    assert_eq!(got.until, want.until);
    assert_eq!(got.warm_up, want.warm_up);
    assert_eq!(got.targets.len(), want.targets.len(), "targets");
    assert_eq!(got.journeys.len(), want.journeys.len(), "journeys");
    for (g, w) in got
        .targets
        .iter()
        .zip(&want.targets)
        .chain(got.journeys.iter().zip(&want.journeys))
    {
        assert_eq!(
            (&g.label, g.completed, g.ok, g.failures, g.unsent),
            (&w.label, w.completed, w.ok, w.failures, w.unsent)
        );
        assert_hist_eq(&g.label, &g.latency, &w.latency);
        let busy = format!("{} busy time", w.label);
        match (&g.busy, &w.busy) {
            (Some(got), Some(want)) => assert_hist_eq(&busy, got, want),
            (got, want) => assert_eq!(got.is_some(), want.is_some(), "{busy}"),
        }
    }
}

#[test]
fn a_step_round_trips_every_field() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let run = store.begin_run(&new_run("demo", &m, at(0))).unwrap();
    let c = store.add_contender(run, &contender("nginx")).unwrap();
    let result = synthetic_result(7);
    // The store keeps the one warning that is a fact; the reader judges the others.
    assert_eq!(
        result.warnings,
        [shootout_model::Warning::StreamsLimited {
            asked: 100,
            allowed: 8
        }]
    );
    let res = resources();
    let written = step(run, c, 1, &result, &res);
    let id = store.record_step(&written).unwrap();

    let steps = store.steps(run).unwrap();
    assert_eq!(steps.len(), 1);
    let s = &steps[0];
    assert_eq!(s.id, id);
    assert_eq!((s.run, s.contender), (run, c));
    assert_eq!(s.workload, "hello");
    assert_eq!(s.level, written.level);
    assert_eq!(s.repetition, 1);
    assert_eq!((s.started, s.ended), (written.started, written.ended));
    assert_eq!(s.status, StepStatus::Complete);
    assert_eq!(s.resources, res);
    assert_eq!(s.wire, Some(written.wire));
    assert_eq!(s.other_load, written.other_load);
    assert_result_eq(&read_back(s), &result);
}

/// Steps stored before shootout watched the other processes (schema 8), and steps
/// whose `/proc/stat` could not be read, have no other load: not a quiet machine.
#[test]
fn steps_without_a_watch_of_the_machine_read_without_one() {
    let mut store = Store::open_in_memory().unwrap();
    let run = store
        .begin_run(&new_run("demo", &machine(), at(0)))
        .unwrap();
    let c = store.add_contender(run, &contender("nginx")).unwrap();
    let result = synthetic_result(3);
    let unwatched = StepRecord {
        other_load: None,
        search: None,
        ..step(run, c, 1, &result, &[])
    };
    store.record_step(&unwatched).unwrap();
    // `shootout load` with no --cpus: others not told apart, steal still read.
    let steal_only = shootout_model::OtherLoad {
        cpus: 4,
        others: None,
        contenders: 0.0,
        interrupts: 0.0,
        steal: 0.2,
        load_avg: 0.5,
    };
    store
        .record_step(&StepRecord {
            other_load: Some(steal_only),
            search: None,
            ..step(run, c, 2, &result, &[])
        })
        .unwrap();
    let steps = store.steps(run).unwrap();
    assert_eq!(steps[0].other_load, None);
    assert_eq!(steps[1].other_load, Some(steal_only));
}

/// A store in memory with one run of one contender ("nginx") and one step of
/// [`synthetic_result`]`(3)`.
fn one_step() -> (Store, RunId) {
    one_step_of(&synthetic_result(3))
}

/// A store in memory with one run of one contender ("nginx") and one step of `result`.
fn one_step_of(result: &RunResult) -> (Store, RunId) {
    let mut store = Store::open_in_memory().unwrap();
    let run = record_one_step(&mut store, result);
    (store, run)
}

/// Records a run of one step of `result` in `store`; the run.
fn record_one_step(store: &mut Store, result: &RunResult) -> RunId {
    let run = store
        .begin_run(&new_run("demo", &machine(), at(0)))
        .unwrap();
    let c = store.add_contender(run, &contender("nginx")).unwrap();
    store.record_step(&step(run, c, 1, result, &[])).unwrap();
    run
}

/// A store file holding a run of one step of `result`, closed: its folder, path and run.
fn file_of_one_step(result: &RunResult) -> (tempfile::TempDir, std::path::PathBuf, RunId) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.db");
    let run = record_one_step(&mut Store::open(&path).unwrap(), result);
    (dir, path, run)
}

/// A second's histogram that does not decode (a forged store) is refused with the
/// second and step named; seconds stored before schema 12 have none and read back empty.
#[test]
fn second_histograms_are_checked_and_old_seconds_read_back_without_one() {
    let (store, run) = one_step();
    assert!(!store.steps(run).unwrap()[0].result.series[0]
        .histogram
        .is_empty());
    store
        .conn
        .execute_batch("UPDATE step_seconds SET histogram = NULL")
        .unwrap();
    let steps = store.steps(run).unwrap();
    assert!(steps[0]
        .result
        .series
        .iter()
        .all(|s| s.histogram.is_empty()));
    store
        .conn
        .execute_batch("UPDATE step_seconds SET histogram = x'1c849313ffffffff' WHERE seq = 4")
        .unwrap();
    let e = store.steps(run).unwrap_err().to_string();
    assert!(e.contains("latency histogram of second 4 of step"), "{e}");
}

/// Steps stored before the arrival process was recorded (schema 17) read back as even and
/// untested; a forged arrival word is refused with the step named, and a forged fit is
/// kept within its bounds.
#[test]
fn arrivals_stored_before_read_as_even_and_forged_ones_are_refused_or_bounded() {
    let (store, run) = one_step();
    let sql = |q: &str| store.conn.execute_batch(q).unwrap();
    sql("UPDATE steps SET sched_fit_a2 = -3.0, sched_fit_p = 7.5");
    let fit = store.steps(run).unwrap()[0]
        .result
        .schedule
        .unwrap()
        .arrival
        .fit;
    assert_eq!(fit.map(|f| (f.statistic, f.p)), Some((0.0, 1.0)));
    sql("UPDATE steps SET sched_arrival = NULL, sched_arrival_seed = NULL, sched_fit_n = NULL");
    let a = store.steps(run).unwrap()[0]
        .result
        .schedule
        .unwrap()
        .arrival;
    assert_eq!(a, shootout_model::ArrivalCheck::default());
    sql("UPDATE steps SET sched_arrival = 'bursty'");
    let e = store.steps(run).unwrap_err().to_string();
    assert!(
        e.contains("arrival of step") && e.contains("'bursty'"),
        "{e}"
    );
}

/// The one integer a query of the store's file gives.
fn count(store: &Store, sql: &str) -> i64 {
    store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A journey's busy time comes back exactly (count, min, max, p99, every bucket), lazily:
/// the step as read holds a stand-in, and only the unpacked result the histogram. A
/// journey without one (not measured, or stored before schema 22: NULL) reads back
/// without one, and then the step's other journeys keep theirs.
#[test]
fn journeys_busy_times_round_trip_and_null_reads_as_none() {
    let (store, run) = one_step();
    let written = synthetic_result(3);
    let s = &store.steps(run).unwrap()[0];
    let packed: Vec<bool> = s.result.journeys.iter().map(|j| j.busy.is_some()).collect();
    assert_eq!(packed, [true, true], "the packed step says which have it");
    let back = read_back(s);
    for (got, want) in back.journeys.iter().zip(&written.journeys) {
        let label = &want.label;
        let (got, want) = (got.busy.as_ref().unwrap(), want.busy.as_ref().unwrap());
        assert_eq!(got.len(), 4, "{label}");
        assert_hist_eq(label, got, want);
    }
    let writer = back.journeys[0].busy.as_ref().unwrap();
    // Recorded 7,003 µs once and 21,003 µs three times (seed 3), 2 significant figures.
    assert!(writer.equivalent(writer.min(), 7_003), "{}", writer.min());
    assert!(writer.equivalent(writer.max(), 21_003), "{}", writer.max());
    assert_eq!(writer.count_at(21_003), 3);
    assert!(writer.equivalent(writer.value_at_quantile(0.5), 21_003));
    // Nothing of it in the request list's (or journey steps') table.
    let columns = "SELECT COUNT(*) FROM pragma_table_info('step_targets') WHERE name = 'hist_busy'";
    assert_eq!(count(&store, columns), 0);

    store
        .conn
        .execute_batch("UPDATE step_journeys SET hist_busy = NULL WHERE seq = 1")
        .unwrap();
    let s = &store.steps(run).unwrap()[0];
    let back = read_back(s);
    assert!(back.journeys[0].busy.is_some());
    assert!(back.journeys[1].busy.is_none());
    assert!(s.result.journeys[1].busy.is_none());
}

/// The ages of a step's requests in flight at its end come back exactly, lazily (the
/// step as read holds a stand-in that says they are known); a step stored before them
/// (NULL) reads back as not known, never as none in flight; one known to have none keeps
/// that; forged bytes are refused with the step named.
#[test]
fn in_flight_ages_round_trip_and_null_reads_as_unknown() {
    let (store, run) = one_step();
    let s = &store.steps(run).unwrap()[0];
    assert!(
        s.result.in_flight_at_end.is_some(),
        "the packed step says so"
    );
    let ages = read_back(s).in_flight_at_end.unwrap();
    assert_eq!(ages.len(), 7);
    assert_hist_eq("in flight", &ages, &in_flight_ages(3));
    let id = s.id.0;
    store
        .conn
        .execute_batch("UPDATE steps SET hist_in_flight_at_end = NULL")
        .unwrap();
    let s = &store.steps(run).unwrap()[0];
    assert!(s.result.in_flight_at_end.is_none());
    assert!(read_back(s).in_flight_at_end.is_none());

    let mut none = synthetic_result(4);
    none.in_flight_at_end = Some(latency_histogram());
    let (store, run) = one_step_of(&none);
    let back = read_back(&store.steps(run).unwrap()[0]);
    assert_eq!(back.in_flight_at_end.map(|h| h.len()), Some(0));

    let (store, run) = one_step();
    store
        .conn
        .execute_batch("UPDATE steps SET hist_in_flight_at_end = x'1c849313ffffffff'")
        .unwrap();
    let e = store.steps(run).unwrap_err().to_string();
    assert!(
        e.contains(&format!("hist_in_flight_at_end of step {id}")),
        "{e}"
    );
}

/// A journey measured without a busy time (a result saved before it was measured) is
/// stored with NULL, and reads back without one.
#[test]
fn a_journey_without_a_busy_time_is_stored_as_null() {
    let mut result = synthetic_result(5);
    for j in &mut result.journeys {
        j.busy = None;
    }
    let (store, run) = one_step_of(&result);
    let nulls = "SELECT COUNT(*) FROM step_journeys WHERE hist_busy IS NULL";
    assert_eq!(count(&store, nulls), 2);
    let steps = store.steps(run).unwrap();
    assert_result_eq(&read_back(&steps[0]), &result);
    assert!(steps[0].result.journeys.iter().all(|j| j.busy.is_none()));
}

/// A busy time that does not decode (a damaged or forged store) is refused, the step named.
#[test]
fn a_damaged_busy_time_is_refused_with_the_step_named() {
    let (store, run) = one_step();
    let id = store.steps(run).unwrap()[0].id.0;
    store
        .conn
        .execute_batch("UPDATE step_journeys SET hist_busy = x'1c849313ffffffff' WHERE seq = 1")
        .unwrap();
    let e = store.steps(run).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains(&format!("journey busy time of step {id}")),
        "{e}"
    );
}

/// A store of schema 23 with a capacity search's step gets `search_ended`, NULL for the
/// step it held: its verdict reads back, how it ended unknown. A word this build does not
/// know is an error naming the step, not a guess.
#[test]
fn a_v23_file_gets_the_search_end_column_null() {
    use shootout_model::find_max::{SearchStep, StepEnd, Verdict};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v23.db");
    let result = synthetic_result(1);
    let run = {
        let mut store = Store::open(&path).unwrap();
        let run = store
            .begin_run(&new_run("demo", &machine(), at(0)))
            .unwrap();
        let c = store.add_contender(run, &contender("nginx")).unwrap();
        let mark = SearchStep {
            verdict: Some(Verdict::Met),
            ended: Some(StepEnd::DecidedMet),
        };
        let record = StepRecord {
            search: Some(&mark),
            ..step(run, c, 1, &result, &[])
        };
        store.record_step(&record).unwrap();
        // Back to schema 23 as it was: the columns gone, the version before.
        store
            .conn
            .execute_batch(&format!(
                "ALTER TABLE steps DROP COLUMN search_ended; {V25_UNDONE} PRAGMA user_version = 23;"
            ))
            .unwrap();
        run
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(schema::version(&store.conn).unwrap(), SCHEMA_VERSION);
    let steps = store.steps(run).unwrap();
    assert_eq!(
        steps[0].search,
        Some(SearchStep {
            verdict: Some(Verdict::Met),
            ended: None
        })
    );
    store
        .conn
        .execute_batch("UPDATE steps SET search_ended = 'sideways'")
        .unwrap();
    let e = store.steps(run).unwrap_err().to_string();
    let id = steps[0].id.0;
    assert!(e.contains(&format!("search end of step {id}")), "{e}");
    assert!(e.contains("'sideways'"), "{e}");
}

/// A step read from a store's file leaves its seconds' histograms there (they took as much
/// memory as the rest of a step): its series holds the figures, and `series()` and
/// `unpacked()` read the histograms again, as written. A store in memory keeps them.
#[test]
fn a_file_s_steps_read_their_seconds_histograms_again_when_asked() {
    let result = synthetic_result(3);
    assert!(result.series[0].histogram.len() > 8);
    assert!(result.series[10].histogram.is_empty());
    let (_dir, path, run) = file_of_one_step(&result);
    let store = Store::open_read_only(&path).unwrap();
    let steps = store.steps(run).unwrap();
    let s = &steps[0];
    assert!(s.result.series.iter().all(|x| x.histogram.is_empty()));
    assert_eq!(s.result.series.len(), result.series.len());
    assert_eq!(*s.series(), result.series[..]);
    assert_eq!(s.unpacked().series, result.series);
    let (mem, run) = one_step_of(&result);
    assert_eq!(mem.steps(run).unwrap()[0].result.series, result.series);
}

/// A file's steps carry their samples counted by tenth, as the store counted them while it
/// checked them: a report reads no reservoir again for them (here the file is gone by the
/// time they are asked for, and they are still there, while the samples are not).
#[test]
fn a_file_s_steps_keep_their_samples_counted_by_tenth() {
    let result = synthetic_result(3);
    assert!(result.samples.len() > 100);
    let (dir, path, run) = file_of_one_step(&result);
    let steps = Store::open_read_only(&path).unwrap().steps(run).unwrap();
    drop(dir);
    let want = shootout_model::stored::SampleTenths::of(&result.samples);
    assert!(want.good.iter().sum::<u32>() > 0, "{want:?}");
    assert_eq!(*steps[0].sample_tenths(), want);
    assert!(steps[0].samples().is_empty(), "the file is gone");
}

/// A store of schema 21 with a journey step gets `hist_busy`, NULL for the journeys it
/// held, which read back without a busy time.
#[test]
fn a_v21_file_gets_the_journeys_busy_column_null() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v21.db");
    let run = {
        let mut store = Store::open(&path).unwrap();
        let run = store
            .begin_run(&new_run("demo", &machine(), at(0)))
            .unwrap();
        let c = store.add_contender(run, &contender("nginx")).unwrap();
        let result = synthetic_result(2);
        store.record_step(&step(run, c, 1, &result, &[])).unwrap();
        // Back to schema 21 as it was: the column gone, the version before.
        store
            .conn
            .execute_batch(
                &format!(
                    "ALTER TABLE step_journeys DROP COLUMN hist_busy; \
                     ALTER TABLE steps DROP COLUMN accept_samples; \
                     ALTER TABLE steps DROP COLUMN accept_waited; \
                     ALTER TABLE steps DROP COLUMN accept_total; \
                     ALTER TABLE steps DROP COLUMN accept_most; \
                     ALTER TABLE steps DROP COLUMN search_ended; {V25_UNDONE} PRAGMA user_version = 21;"
                ),
            )
            .unwrap();
        run
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(schema::version(&store.conn).unwrap(), SCHEMA_VERSION);
    let steps = store.steps(run).unwrap();
    let back = read_back(&steps[0]);
    assert_eq!(back.journeys.len(), 2);
    assert!(back.journeys.iter().all(|j| j.busy.is_none()));
    assert_eq!(back.journeys[0].latency.len(), 2, "the durations are kept");
}

/// Steps stored before shootout recorded how it spoke (schema 5) have no protocol nor
/// pipeline: they read back without a wire, not as HTTP/1.1.
#[test]
fn steps_stored_before_the_wire_was_recorded_read_without_one() {
    let (store, run) = one_step();
    store
        .conn
        .execute_batch("UPDATE steps SET protocol = NULL, pipeline = NULL, streams_asked = 1")
        .unwrap();
    let steps = store.steps(run).unwrap();
    assert_eq!(steps[0].wire, None);
}

#[test]
fn a_closed_loop_step_without_optional_facts_round_trips() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let run = store.begin_run(&new_run("demo", &m, at(0))).unwrap();
    let c = store.add_contender(run, &contender("nginx")).unwrap();
    let mut result = synthetic_result(1);
    result.schedule = None;
    result.listen = None;
    result.first_response = None;
    result.samples.clear();
    result.series[0].mean_us = f64::NAN; // SQLite keeps NaN as NULL: read back as NaN
    result.interrupted = true;
    result.counts.status.clear();
    result.until = None;
    result.warm_up = None;
    let level = LoadLevel::Concurrency { connections: 8 };
    let record = StepRecord {
        level,
        status: StepStatus::Interrupted,
        ..step(run, c, 2, &result, &[])
    };
    store.record_step(&record).unwrap();

    let s = &store.steps(run).unwrap()[0];
    assert_eq!(s.level, level);
    assert_eq!(s.status, StepStatus::Interrupted);
    assert!(s.resources.is_empty());
    assert!(s.result.series[0].mean_us.is_nan());
    let mut got = read_back(s);
    let mut want = result.clone();
    got.series[0].mean_us = 0.0;
    want.series[0].mean_us = 0.0;
    assert_result_eq(&got, &want);
}

#[test]
fn a_run_row_keeps_plan_machine_and_status() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let run = store.begin_run(&new_run("demo", &m, at(0))).unwrap();
    let row = store.run(run).unwrap().unwrap();
    assert_eq!(row.name, "demo");
    assert!(row.plan_text.contains("[[contender]]"));
    assert!(row.plan_resolved.starts_with('{'));
    assert_eq!(row.machine, m);
    assert_eq!(row.started, at(0));
    assert_eq!((row.status, row.ended), (RunStatus::Running, None));

    store.finish_run(run, RunStatus::Complete, at(60)).unwrap();
    let row = store.run(run).unwrap().unwrap();
    assert_eq!((row.status, row.ended), (RunStatus::Complete, Some(at(60))));
    assert_eq!(store.run(RunId(run.0 + 1)).unwrap(), None);
}

#[test]
fn contenders_keep_their_order_and_updates() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let run = store.begin_run(&new_run("demo", &m, at(0))).unwrap();
    let a = store
        .add_contender(
            run,
            &ContenderRecord {
                baseline: true,
                version: Some("nginx version: nginx/1.25.3"),
                stdout_log: Some(Path::new("logs/nginx.out")),
                stderr_log: Some(Path::new("logs/nginx.err")),
                ..contender("nginx")
            },
        )
        .unwrap();
    let b = store
        .add_contender(
            run,
            &ContenderRecord {
                command: "http://127.0.0.1:9000/",
                status: ContenderStatus::Skipped,
                ..contender("remote")
            },
        )
        .unwrap();
    store
        .update_contender(
            b,
            ContenderStatus::VerificationFailed,
            "GET / answered 404, expected 2xx",
        )
        .unwrap();

    let rows = store.contenders(run).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, a);
    assert_eq!(rows[0].run, run);
    assert_eq!(rows[0].name, "nginx");
    assert!(rows[0].baseline);
    assert_eq!(rows[0].status, ContenderStatus::Measured);
    assert_eq!(
        rows[0].version.as_deref(),
        Some("nginx version: nginx/1.25.3")
    );
    assert_eq!(
        rows[0].stderr_log.as_deref(),
        Some(Path::new("logs/nginx.err"))
    );
    assert_eq!(rows[1].id, b);
    assert_eq!(rows[1].command, "http://127.0.0.1:9000/");
    assert!(!rows[1].baseline);
    assert_eq!(rows[1].status, ContenderStatus::VerificationFailed);
    assert_eq!(rows[1].detail, "GET / answered 404, expected 2xx");
    assert_eq!(
        (rows[1].version.clone(), rows[1].stdout_log.clone()),
        (None, None)
    );
    // A version found once the contender serves replaces the one it was added with.
    store
        .set_contender_version(b, "unknown (nothing listens on port 9000)")
        .unwrap();
    assert_eq!(
        store.contenders(run).unwrap()[1].version.as_deref(),
        Some("unknown (nothing listens on port 9000)")
    );
    let e = store
        .set_contender_version(ContenderId(99), "1.0")
        .unwrap_err();
    assert!(e.to_string().contains("no contender 99"), "{e}");

    let e = store
        .update_contender(ContenderId(99), ContenderStatus::Crashed, "")
        .unwrap_err();
    assert!(e.to_string().contains("no contender 99"), "{e}");
}

#[test]
fn runs_are_listed_newest_first_with_their_counts() {
    let mut store = Store::open_in_memory().unwrap();
    assert!(store.runs().unwrap().is_empty());
    assert_eq!(store.latest_run().unwrap(), None);
    let m = machine();
    let old = store.begin_run(&new_run("old", &m, at(0))).unwrap();
    let new = store.begin_run(&new_run("new", &m, at(1_000))).unwrap();
    // Recorded last but started in between (a clock that went back): ordered by start.
    let mid = store.begin_run(&new_run("mid", &m, at(500))).unwrap();
    let c1 = store.add_contender(old, &contender("a")).unwrap();
    store.add_contender(old, &contender("b")).unwrap();
    let result = synthetic_result(3);
    for rep in 1..=3 {
        store
            .record_step(&step(old, c1, rep, &result, &[]))
            .unwrap();
    }
    store.finish_run(old, RunStatus::Complete, at(90)).unwrap();

    let runs = store.runs().unwrap();
    let order: Vec<_> = runs.iter().map(|r| (r.id, r.name.as_str())).collect();
    assert_eq!(order, [(new, "new"), (mid, "mid"), (old, "old")]);
    let o = &runs[2];
    assert_eq!((o.contenders, o.steps), (2, 3));
    assert_eq!(
        (o.status, o.started, o.ended),
        (RunStatus::Complete, at(0), Some(at(90)))
    );
    assert_eq!((runs[0].contenders, runs[0].steps), (0, 0));
    assert_eq!(runs[0].status, RunStatus::Running);
    assert_eq!(store.latest_run().unwrap().unwrap().id, new);
    assert!(store.steps(new).unwrap().is_empty());
}

#[test]
fn an_interrupted_run_keeps_its_completed_steps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    let m = machine();
    let first = synthetic_result(11);
    let second = synthetic_result(22);
    let res = resources();
    let (run, c) = {
        let mut store = Store::open(&path).unwrap();
        let run = store.begin_run(&new_run("demo", &m, at(0))).unwrap();
        let c = store.add_contender(run, &contender("nginx")).unwrap();
        store.record_step(&step(run, c, 1, &first, &res)).unwrap();
        store.record_step(&step(run, c, 2, &second, &res)).unwrap();
        store
            .finish_run(run, RunStatus::Interrupted, at(50))
            .unwrap();
        (run, c)
    };

    let store = Store::open_existing(&path).unwrap();
    let row = store.latest_run().unwrap().unwrap();
    assert_eq!((row.id, row.status), (run, RunStatus::Interrupted));
    assert_eq!(row.ended, Some(at(50)));
    assert_eq!(row.machine, m);
    assert_eq!(store.contenders(run).unwrap()[0].id, c);
    let steps = store.steps(run).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(
        steps.iter().map(|s| s.repetition).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_result_eq(&read_back(&steps[0]), &first);
    assert_result_eq(&read_back(&steps[1]), &second);
    assert_eq!(steps[1].resources, res);
}

#[test]
fn a_step_is_kept_when_shootout_dies_before_finishing_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    let m = machine();
    let result = synthetic_result(5);
    let mut writer = Store::open(&path).unwrap();
    let run = writer.begin_run(&new_run("demo", &m, at(0))).unwrap();
    let c = writer.add_contender(run, &contender("nginx")).unwrap();
    writer.record_step(&step(run, c, 1, &result, &[])).unwrap();
    // A reader (`shootout report` during the run) sees the step while the writer is open.
    let reader = Store::open(&path).unwrap();
    assert_eq!(reader.steps(run).unwrap().len(), 1);
    std::mem::forget(writer); // no orderly close, as in a crash
    let after = Store::open(&path).unwrap();
    let summary = &after.runs().unwrap()[0];
    assert_eq!((summary.status, summary.steps), (RunStatus::Running, 1));
}

#[test]
fn a_file_store_uses_wal_and_the_current_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(schema::version(&conn).unwrap(), SCHEMA_VERSION);
}

/// The file's `PRAGMA application_id`.
fn application_id(path: &Path) -> i32 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap()
}

/// `path`, `path-wal` and `path-shm`: which exist, with the bytes of `path`.
fn file_state(path: &Path) -> (Vec<u8>, [bool; 3]) {
    let with = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p).exists()
    };
    (
        std::fs::read(path).unwrap(),
        [path.exists(), with("-wal"), with("-shm")],
    )
}

/// One of the store's ways to open a file.
type Opener = fn(&Path) -> Result<Store, StoreError>;

#[test]
fn a_new_store_carries_shootouts_application_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    drop(Store::open(&path).unwrap());
    assert_eq!(application_id(&path), APPLICATION_ID);
    assert_eq!(APPLICATION_ID.to_be_bytes(), *b"shot");
    // An empty file (`touch shootout.db`) becomes a store too.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    drop(Store::open(&empty).unwrap());
    assert_eq!(application_id(&empty), APPLICATION_ID);
}

#[test]
fn a_sqlite_file_that_is_not_a_store_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.db");
    let other_app = dir.path().join("other.db");
    {
        // Someone else's database, in the default rollback-journal mode.
        let conn = Connection::open(&notes).unwrap();
        conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hi');")
            .unwrap();
        // Another application's, in WAL mode, with its own id and even a `runs` table and a
        // version.
        let conn = Connection::open(&other_app).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA application_id = 42; PRAGMA user_version = 1;
             CREATE TABLE runs (x);",
        )
        .unwrap();
    }
    assert_eq!(file_state(&other_app).1, [true, false, false]);
    for path in [&notes, &other_app] {
        let before = file_state(path);
        let opens: [(&str, Opener); 3] = [
            ("open", Store::open),
            ("open_existing", Store::open_existing),
            ("open_read_only", Store::open_read_only),
        ];
        for (how, open) in opens {
            let e = open(path).unwrap_err();
            assert!(matches!(e, StoreError::NotAStore { .. }), "{how}: {e:?}");
            assert_eq!(
                e.to_string(),
                format!(
                    "{} is a SQLite file but not a shootout store; it was left as it was: give --db the path of a shootout store, or of a new file",
                    path.display()
                )
            );
            assert_eq!(file_state(path), before, "{how} changed {}", path.display());
        }
    }
    assert_eq!(
        file_state(&notes).1,
        [true, false, false],
        "no -wal, no -shm"
    );
}

#[test]
fn a_store_made_before_the_application_id_is_read_and_marked_when_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    let m = machine();
    {
        let mut store = Store::open(&path).unwrap();
        store.begin_run(&new_run("demo", &m, at(0))).unwrap();
        store.conn.pragma_update(None, "application_id", 0).unwrap();
    }
    assert_eq!(application_id(&path), 0);
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.runs().unwrap().len(), 1);
    drop(reader);
    assert_eq!(application_id(&path), 0, "a reader marks nothing");
    drop(Store::open(&path).unwrap());
    assert_eq!(application_id(&path), APPLICATION_ID);
}

#[test]
fn a_read_only_open_does_not_upgrade_an_older_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    {
        // A store of ours at schema 0 (its tables not made yet).
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
    }
    let before = file_state(&path);
    let e = Store::open_read_only(&path).unwrap_err();
    assert!(matches!(e, StoreError::Outdated { found: 0, .. }), "{e:?}");
    assert!(e.to_string().contains("run a write command on it"), "{e}");
    assert_eq!(file_state(&path), before);
    // A writer upgrades it.
    let store = Store::open(&path).unwrap();
    assert_eq!(schema::version(&store.conn).unwrap(), SCHEMA_VERSION);
}

#[test]
fn a_read_only_open_of_an_empty_file_says_there_is_no_store_yet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    std::fs::write(&path, b"").unwrap();
    let e = Store::open_read_only(&path).unwrap_err();
    assert!(matches!(e, StoreError::Empty { .. }), "{e:?}");
    assert!(e.to_string().contains("run a plan first"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"");
}

#[test]
fn a_read_only_open_reads_a_store_as_the_writer_left_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    let m = machine();
    let mut writer = Store::open(&path).unwrap();
    let run = writer.begin_run(&new_run("demo", &m, at(0))).unwrap();
    // While the writer is open (the WAL holds its writes), and after it closed.
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.runs().unwrap()[0].id, run);
    let e = reader.conn.execute("DELETE FROM runs", []).unwrap_err();
    assert_eq!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly),
        "{e}"
    );
    drop((reader, writer));
    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.runs().unwrap()[0].id, run);
}

#[test]
fn the_immutable_uri_escapes_what_sqlite_would_read_as_uri_syntax() {
    assert_eq!(
        immutable_uri(Path::new("/tmp/a b/x?y#z%.db")),
        "file:/tmp/a%20b/x%3Fy%23z%25.db?immutable=1"
    );
}

#[test]
fn a_failed_migration_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        // A store of ours at schema 0 that somehow holds a `runs` table already.
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.execute_batch("CREATE TABLE runs (x INTEGER);")
            .unwrap();
    }
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::Migrate { version: 1, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("other.db") && msg.contains("--db"), "{msg}");
    let conn = Connection::open(&path).unwrap();
    assert_eq!(schema::version(&conn).unwrap(), 0);
    let contenders: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'contenders'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(contenders, 0, "the failed step was rolled back");
}

#[test]
fn a_file_from_a_newer_shootout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shootout.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 4)
            .unwrap();
    }
    for open in [Store::open, Store::open_read_only] {
        let e = open(&path).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains(&format!(
                "schema {}, this one knows {SCHEMA_VERSION}",
                SCHEMA_VERSION + 4
            )),
            "{msg}"
        );
        assert!(msg.contains("upgrade shootout"), "{msg}");
        assert!(msg.contains("shootout.db"), "{msg}");
    }
    // Refused before anything was changed.
    let conn = Connection::open(&path).unwrap();
    assert_eq!(schema::version(&conn).unwrap(), SCHEMA_VERSION + 4);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.toml");
    std::fs::write(
        &path,
        "name = \"this is a plan, not a database\"\n".repeat(50),
    )
    .unwrap();
    let e = Store::open(&path).unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("cannot open the store "), "{msg}");
    assert!(msg.contains("plan.toml") && msg.contains("--db"), "{msg}");
}

/// `--db` given a directory read "disk I/O error" (or "unable to open database file"):
/// the error says it is a directory and names a file in it.
#[test]
fn a_directory_is_refused_as_one_with_a_file_in_it_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let want = format!(
        "{} is a directory, not a store: give --db a file in it, e.g. --db {}",
        dir.path().display(),
        dir.path().join("shootout.db").display()
    );
    for e in [
        Store::open(dir.path()).err().unwrap(),
        Store::open_existing(dir.path()).err().unwrap(),
        Store::open_read_only(dir.path()).err().unwrap(),
    ] {
        assert!(matches!(e, StoreError::Directory { .. }), "{e:?}");
        assert_eq!(e.to_string(), want);
    }
}

#[test]
fn a_missing_store_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nothing.db");
    let e = Store::open_existing(&path).unwrap_err();
    assert!(e.to_string().contains("shootout run"), "{e}");
    assert!(!path.exists(), "open_existing must not create the file");
    let e = Store::open(&dir.path().join("no/such/dir.db")).unwrap_err();
    assert!(matches!(e, StoreError::Open { .. }), "{e:?}");
}

#[test]
fn a_step_of_another_runs_contender_is_refused() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let a = store.begin_run(&new_run("a", &m, at(0))).unwrap();
    let b = store.begin_run(&new_run("b", &m, at(1))).unwrap();
    let ca = store.add_contender(a, &contender("nginx")).unwrap();
    let result = synthetic_result(0);
    let e = store
        .record_step(&step(b, ca, 1, &result, &[]))
        .unwrap_err();
    assert!(e.to_string().contains("cannot record the step"), "{e}");
    assert!(store.steps(b).unwrap().is_empty());
    let e = store
        .finish_run(RunId(42), RunStatus::Failed, at(2))
        .unwrap_err();
    assert!(e.to_string().contains("no run 42"), "{e}");
}

#[test]
fn docs_store_md_lists_every_table_and_column() {
    let doc = include_str!("../../../docs/store.md");
    // `### `table`` headings, then rows that start with `| `column` |`.
    let mut documented: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut table = None;
    for line in doc.lines() {
        if let Some(name) = line.strip_prefix("### `") {
            table = Some(name.trim_end_matches('`').to_string());
            documented.insert(table.clone().unwrap(), Vec::new());
        } else if let (Some(t), Some(row)) = (&table, line.strip_prefix("| `")) {
            let column = row.split('`').next().unwrap().to_string();
            documented.get_mut(t).unwrap().push(column);
        }
    }
    let store = Store::open_in_memory().unwrap();
    let mut actual: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut tables = store
        .conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    for name in tables.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let name = name.unwrap();
        let mut info = store
            .conn
            .prepare(&format!("PRAGMA table_info({name})"))
            .unwrap();
        let columns = info
            .query_map([], |r| r.get::<_, String>(1))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        actual.insert(name, columns);
    }
    assert_eq!(documented, actual, "docs/store.md is out of date");
    assert!(doc.contains(&format!("The current version is **{SCHEMA_VERSION}**")));
}

fn owner(pid: u32) -> shootout_model::ProcessOwner {
    shootout_model::ProcessOwner {
        host: "bench-1".into(),
        boot_id: "3f1c".into(),
        pid_ns: "pid:[4026531836]".into(),
        pid,
        start_ticks: 123_456,
    }
}

#[test]
fn unfinished_runs_carry_their_owner_and_markers() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let old = store.begin_run(&new_run("old", &m, at(0))).unwrap();
    store.finish_run(old, RunStatus::Complete, at(9)).unwrap();
    let legacy = store.begin_run(&new_run("legacy", &m, at(10))).unwrap();
    let run = store.begin_run(&new_run("live", &m, at(20))).unwrap();
    store.record_owner(run, &owner(4242)).unwrap();
    let a = store.add_contender(run, &contender("a")).unwrap();
    store.record_process_tag(a, "4242.123456/1-a").unwrap();
    store.add_contender(run, &contender("b")).unwrap();
    let found = store.unfinished_runs().unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].id, found[0].owner.as_ref()), (legacy, None));
    assert_eq!(found[1].id, run);
    assert_eq!(found[1].owner, Some(owner(4242)));
    assert_eq!(
        found[1].contenders,
        vec![
            ("a".to_string(), Some("4242.123456/1-a".to_string())),
            ("b".to_string(), None)
        ]
    );
}

#[test]
fn an_abandoned_run_says_which_contenders_were_measured() {
    let mut store = Store::open_in_memory().unwrap();
    let m = machine();
    let run = store.begin_run(&new_run("killed", &m, at(0))).unwrap();
    let skipped = |name| ContenderRecord {
        status: ContenderStatus::Skipped,
        detail: "not started yet",
        ..contender(name)
    };
    // Measured in part, then shootout was killed during the second's setup; the third
    // had failed verification before.
    let measured = store.add_contender(run, &skipped("measured")).unwrap();
    let result = synthetic_result(3);
    store
        .record_step(&step(run, measured, 1, &result, &[]))
        .unwrap();
    let in_setup = store.add_contender(run, &skipped("in-setup")).unwrap();
    let failed = store.add_contender(run, &skipped("failed")).unwrap();
    store
        .update_contender(failed, ContenderStatus::VerificationFailed, "wrong body")
        .unwrap();
    assert!(store.abandon_run(run, at(77)).unwrap());
    let row = store.run(run).unwrap().unwrap();
    assert_eq!(
        (row.status, row.ended),
        (RunStatus::Abandoned, Some(at(77)))
    );
    let status: Vec<_> = store
        .contenders(run)
        .unwrap()
        .into_iter()
        .map(|c| (c.id, c.status))
        .collect();
    assert_eq!(
        status,
        vec![
            (measured, ContenderStatus::Measured),
            (in_setup, ContenderStatus::Interrupted),
            (failed, ContenderStatus::VerificationFailed),
        ]
    );
    assert!(store.unfinished_runs().unwrap().is_empty());
    // Only a running run can be abandoned.
    assert!(!store.abandon_run(run, at(99)).unwrap());
    let done = store.begin_run(&new_run("done", &m, at(100))).unwrap();
    store
        .finish_run(done, RunStatus::Complete, at(101))
        .unwrap();
    assert!(!store.abandon_run(done, at(102)).unwrap());
    assert_eq!(
        store.run(done).unwrap().unwrap().status,
        RunStatus::Complete
    );
}

#[test]
fn a_v1_file_gets_the_owner_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO runs (name, plan_text, plan_resolved, machine, started_ns, status)
             VALUES ('v1', '', '{}', '{}', 0, 'running')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(schema::version(&store.conn).unwrap(), SCHEMA_VERSION);
    let found = store.unfinished_runs().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].name.as_str(), found[0].owner.as_ref()),
        ("v1", None)
    );
}

/// A store of schema 25 with a sampled accept queue gets `accept_backlog` and
/// `accept_full` NULL: its samples read back with no backlog and never full, so its
/// listen-queue overflows are not blamed on its contender; schema 27's
/// `hist_in_flight_at_end` NULL: its ages in flight read back as not known; and schema
/// 28's `other_interrupts` NULL: no interrupt work said apart, the strangers' figure as
/// it was stored.
#[test]
fn a_v25_file_gets_the_accept_backlog_columns_null() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v25.db");
    let result = synthetic_result(2);
    let (run, stored) = {
        let mut store = Store::open(&path).unwrap();
        let run = store
            .begin_run(&new_run("demo", &machine(), at(0)))
            .unwrap();
        let c = store.add_contender(run, &contender("nginx")).unwrap();
        store.record_step(&step(run, c, 1, &result, &[])).unwrap();
        store
            .conn
            .execute_batch(
                "ALTER TABLE steps DROP COLUMN accept_backlog; \
                 ALTER TABLE steps DROP COLUMN accept_full; \
                 ALTER TABLE steps DROP COLUMN hist_in_flight_at_end; \
                 ALTER TABLE steps DROP COLUMN other_interrupts; PRAGMA user_version = 25;",
            )
            .unwrap();
        (run, step(run, c, 1, &result, &[]).other_load.unwrap())
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(schema::version(&store.conn).unwrap(), SCHEMA_VERSION);
    let steps = store.steps(run).unwrap();
    // Schema 27's ages of the requests in flight: not known, never none.
    assert!(read_back(&steps[0]).in_flight_at_end.is_none());
    assert_eq!(
        steps[0].other_load,
        Some(shootout_model::OtherLoad {
            interrupts: 0.0,
            ..stored
        })
    );
    let listen = read_back(&steps[0]).listen.unwrap();
    let was = result.listen.unwrap().accept.unwrap();
    let a = listen.accept.unwrap();
    assert_eq!(
        (a.samples, a.most, a.backlog, a.full),
        (was.samples, was.most, None, 0)
    );
    assert_eq!(listen.blame(), shootout_model::ListenBlame::Unmeasured);
    // Written now, both read back.
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let c = store.add_contender(run, &contender("caddy")).unwrap();
    store.record_step(&step(run, c, 1, &result, &[])).unwrap();
    let steps = store.steps(run).unwrap();
    let a = read_back(&steps[1]).listen.unwrap().accept.unwrap();
    assert_eq!((a.backlog, a.full), (was.backlog, was.full));
    assert_eq!(steps[1].other_load, Some(stored));
}

/// A capacity search's steps keep their verdicts (the SLO that broke among them) and how
/// each ended (every way, and unknown), an unjudged step stays unjudged, and a sweep's
/// step has none.
#[test]
fn search_steps_keep_their_verdicts() {
    use shootout_model::find_max::{SearchStep, StepEnd, Verdict};
    let mut store = Store::open_in_memory().unwrap();
    let run = store
        .begin_run(&new_run("demo", &machine(), at(0)))
        .unwrap();
    let c = store.add_contender(run, &contender("nginx")).unwrap();
    let result = synthetic_result(1);
    let mark = |verdict, ended| Some(SearchStep { verdict, ended });
    let marks = [
        mark(Some(Verdict::Met), Some(StepEnd::DecidedMet)),
        mark(Some(Verdict::Broke(1)), Some(StepEnd::DecidedBroke)),
        mark(Some(Verdict::Met), Some(StepEnd::Passed)),
        mark(Some(Verdict::Broke(0)), Some(StepEnd::Deadline)),
        mark(Some(Verdict::NotKept), None),
        mark(None, None),
        None,
    ];
    for (i, mark) in marks.iter().enumerate() {
        let record = StepRecord {
            search: mark.as_ref(),
            ..step(run, c, i as u32 + 1, &result, &[])
        };
        store.record_step(&record).unwrap();
    }
    let back: Vec<_> = store
        .steps(run)
        .unwrap()
        .into_iter()
        .map(|s| s.search)
        .collect();
    assert_eq!(back, marks);
}

/// Schema 25's to 28's columns dropped again, for the tests that take a store back to a
/// version before them.
const V25_UNDONE: &str = "
ALTER TABLE steps DROP COLUMN other_interrupts;
ALTER TABLE steps DROP COLUMN hist_in_flight_at_end;
ALTER TABLE steps DROP COLUMN accept_backlog;
ALTER TABLE steps DROP COLUMN accept_full;
ALTER TABLE steps DROP COLUMN fail_grpc_unmatched;
ALTER TABLE steps DROP COLUMN fail_grpc_unanswered;
ALTER TABLE step_targets DROP COLUMN fail_grpc_unmatched;
ALTER TABLE step_targets DROP COLUMN fail_grpc_unanswered;
ALTER TABLE step_journeys DROP COLUMN fail_grpc_unmatched;
ALTER TABLE step_journeys DROP COLUMN fail_grpc_unanswered;
ALTER TABLE steps DROP COLUMN stream_shape;
ALTER TABLE steps DROP COLUMN stream_calls_ok;
ALTER TABLE steps DROP COLUMN stream_cancelled;
ALTER TABLE steps DROP COLUMN stream_replies;
ALTER TABLE steps DROP COLUMN stream_messages_per_call;
ALTER TABLE steps DROP COLUMN stream_sent;
ALTER TABLE steps DROP COLUMN stream_unmatched;
ALTER TABLE steps DROP COLUMN stream_unanswered;
ALTER TABLE steps DROP COLUMN hist_stream_first_reply;
ALTER TABLE steps DROP COLUMN hist_stream_gaps;
";
