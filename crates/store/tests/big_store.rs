//! A store of many steps is read in memory that does not grow with six decoded histograms
//! per step (1.1 MB each step, so that reading 20,000 steps needed 22 GB) nor with its
//! samples: each step keeps its histograms packed, as stored, and decodes them when asked,
//! and its samples are read again from the file when asked.
//!
//! Alone in its test binary: the process's peak resident memory (`VmHWM`) is its own.
//! `BIG_STORE_STEPS=20000 BIG_STORE_KEEP=DIR` writes a store of that many steps and keeps
//! it in DIR (as `big.db`, run 1), to measure `shootout report --db DIR/big.db` on it.

use shootout_model::{
    latency_histogram, Counts, GeneratorStats, Histograms, LatencySummary, LoadLevel, MachineFacts,
    Measure, RunResult, Sample, SecondStats, StepStatus, Wire,
};
use shootout_store::{ContenderRecord, NewRun, StepRecord, Store};
use std::time::{Duration, Instant, SystemTime};

/// Steps written and read back (`BIG_STORE_STEPS` to change it).
const STEPS: usize = 1_000;

/// The most the peak resident memory may grow per step read (bytes). The 1,000 steps below
/// grew it by 7 KiB each (the `test` profile; 20,000 steps by 4.9 KiB each, the fixed
/// part, SQLite's page cache among it, shared out thinner): their packed histograms take
/// 1 KiB, the rest of the step the others. Kept with their seconds' histograms and six
/// stand-ins of 256 bytes each, they grew it by 10.7 KiB; six decoded histograms took 1.1
/// MB a step; the reservoir of 5,000 samples kept packed would take about 30 KiB more.
const MAX_GROWTH_PER_STEP: u64 = 9 << 10;

/// A field of `/proc/self/status` in bytes (its `kB` value).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb << 10
}

/// A step of 5 s at 1,000 req/s: latencies spread from 0.2 to 40 ms over a few thousand
/// values, as a loaded server's are, a second's histogram per second, and every request
/// sampled (the reservoir keeps up to 10,000).
fn result() -> RunResult {
    let mut histograms = Histograms::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut samples = Vec::new();
    for i in 0..5_000u64 {
        // Roughly log-spread: 200 µs times 1 to 200.
        let v = 200 * (1 + (next() % 1000) * (next() % 1000) / 5_000);
        histograms.latency.record(v + 30).unwrap();
        histograms.latency_raw.record(v).unwrap();
        histograms
            .connect
            .record(if i % 50 == 0 { 150 } else { 0 })
            .unwrap();
        histograms.waiting.record(v * 3 / 4).unwrap();
        histograms.processing.record(v).unwrap();
        if i % 50 == 0 {
            histograms.setup.record(150 + next() % 100).unwrap();
        }
        samples.push(Sample {
            start_us: i * 1_000 + next() % 1_000,
            connect_us: 0,
            waiting_us: (v * 3 / 4) as u32,
            total_us: v as u32 + 30,
            status: 200,
            failure: None,
        });
    }
    let series = (0..5u32)
        .map(|s| {
            let mut h = shootout_model::result::second_histogram();
            for _ in 0..1_000 {
                h.record(200 + next() % 40_000).unwrap();
            }
            SecondStats::of(s, 1_000, 0, &h)
        })
        .collect();
    RunResult {
        started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        duration: Duration::from_secs(5),
        counts: Counts {
            completed: 5_000,
            ok: 5_000,
            connections_opened: 100,
            ..Counts::default()
        },
        histograms,
        series,
        samples,
        first_response: None,
        generator: GeneratorStats {
            threads: 1,
            cpu_user: Duration::from_millis(300),
            cpu_sys: Duration::from_millis(200),
            busiest_thread: 0.3,
        },
        schedule: None,
        interrupted: false,
        warnings: Vec::new(),
        targets: Vec::new(),
        journeys: Vec::new(),
        listen: None,
        until: None,
        warm_up: None,
        stream: None,
        in_flight_at_end: None,
    }
}

#[test]
fn a_store_of_many_steps_is_read_without_decoding_every_histogram() {
    let steps: usize = std::env::var("BIG_STORE_STEPS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(STEPS);
    let temp = tempfile::tempdir().unwrap();
    let dir = std::env::var_os("BIG_STORE_KEEP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    let mut store = Store::open(&dir.join("big.db")).unwrap();
    let machine = MachineFacts::default();
    let run = store
        .begin_run(&NewRun {
            name: "big",
            plan_text: "",
            plan_resolved: "{}",
            machine: &machine,
            started: SystemTime::UNIX_EPOCH,
        })
        .unwrap();
    let contender = store
        .add_contender(
            run,
            &ContenderRecord {
                name: "server",
                command: "server",
                baseline: true,
                status: shootout_model::ContenderStatus::Measured,
                detail: "",
                version: None,
                stdout_log: None,
                stderr_log: None,
            },
        )
        .unwrap();
    let result = result();
    let written = Instant::now();
    for i in 0..steps {
        store
            .record_step(&StepRecord {
                run,
                contender,
                workload: "w",
                level: LoadLevel::Rate {
                    rps: 1_000.0 + i as f64,
                    connections: 8,
                },
                repetition: 1,
                started: SystemTime::UNIX_EPOCH,
                ended: SystemTime::UNIX_EPOCH,
                status: StepStatus::Complete,
                result: &result,
                resources: &[],
                wire: Wire::default(),
                other_load: None,
                search: None,
            })
            .unwrap();
    }
    store
        .finish_run(
            run,
            shootout_model::RunStatus::Complete,
            SystemTime::UNIX_EPOCH,
        )
        .unwrap();
    let written = written.elapsed();
    drop(store);

    let store = Store::open_read_only(&dir.join("big.db")).unwrap();
    // Peak memory from here on: clear_refs resets VmHWM to the current resident size.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_bytes("VmRSS:");
    let read = Instant::now();
    let loaded = store.load_run(run).unwrap().unwrap();
    let read = read.elapsed();
    let peak = status_bytes("VmHWM:");
    let growth = peak.saturating_sub(before);
    let per_step = growth / steps as u64;
    let packed: usize = loaded
        .steps
        .iter()
        .map(|s| s.packed.as_ref().map_or(0, |p| p.bytes()))
        .sum();
    eprintln!(
        "{steps} steps: written in {written:.1?}, read in {read:.1?}; peak resident memory \
         grew {} KiB ({} KiB per step; packed histograms {} KiB per step)",
        growth >> 10,
        per_step >> 10,
        (packed / steps) >> 10
    );
    assert_eq!(loaded.steps.len(), steps);
    assert!(
        per_step < MAX_GROWTH_PER_STEP,
        "reading {steps} steps grew the peak resident memory by {} KiB, {} KiB per step \
         (at most {} KiB)",
        growth >> 10,
        per_step >> 10,
        MAX_GROWTH_PER_STEP >> 10
    );

    // What the reports read is what was written.
    let last = loaded.steps.last().unwrap();
    assert_eq!(
        last.latency_summary(),
        LatencySummary::of(&result.histograms.latency)
    );
    for m in Measure::ALL {
        assert_eq!(*last.histogram(m), *result.histograms.get(m), "{m:?}");
    }
    assert_eq!(&*last.samples(), &result.samples[..]);
    assert_eq!(*last.series(), result.series[..]);
    // The stand-ins are empty and small: nothing reads them as the step's.
    assert!(last.result.histograms.latency.is_empty());
    assert!(last.result.samples.is_empty());
    assert_ne!(*last.histogram(Measure::Latency), latency_histogram());
}
