//! End-to-end tests of `shootout report` and `shootout compare` on a store seeded with
//! deterministic synthetic runs (no timing anywhere, fixed dates): insta snapshots of every
//! text, Markdown, JSON and CSV rendering, the gates' exit codes, the JSON documents checked
//! against `docs/report-json.md`, the errors — and one real run against an in-process server
//! to pin that `shootout report` prints exactly what `shootout run` printed.
//!
//! The seeded store holds four runs of the same plan — contenders `nginx` (baseline),
//! `caddy | php-fpm, "socket"` (a name that needs escaping in Markdown and quoting in CSV)
//! and `flaky`, which fails verification; workloads `hello` and `static page` at c=1 and c=8
//! — and a rate sweep:
//!
//! 1. 4 repetitions; one noisy cell, one step with a saturated generator, one with failures.
//! 2. The same numbers as run 1, a day later.
//! 3. As run 1 with caddy 20% slower everywhere (and its latency 25% higher).
//! 4. One repetition on another kernel; caddy 20% slower, then crashed before `static page`;
//!    the run was interrupted during nginx's first `static page` step.
//! 5. `hello` at 500 and 1000 req/s, 2 repetitions; caddy cannot keep 1000 req/s.

use assert_cmd::Command;
use shootout_model::{
    latency_histogram, ContenderStatus, Counts, FailureKind, GeneratorStats, LoadLevel,
    MachineFacts, ResourceSample, RunResult, RunStatus, ScheduleStats, StepStatus,
};
use shootout_store::{ContenderRecord, NewRun, StepRecord, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

/// 2023-11-14 22:13:20 UTC plus `secs`.
fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs)
}

/// A tiny deterministic generator (a 64-bit LCG; top bits only).
struct Lcg(u64);

impl Lcg {
    /// A value in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

const CADDY: &str = "caddy | php-fpm, \"socket\"";

/// What one step measures, before jitter.
struct Shape {
    /// req/s.
    rps: f64,
    /// Typical latency (µs).
    latency_us: f64,
    /// Server CPU per request (µs).
    cpu_us: f64,
    /// Peak RSS (bytes).
    rss: u64,
}

/// The shape of contender × workload × level in run 1.
fn shape(contender: &str, workload: &str, level: LoadLevel) -> Shape {
    let nginx = contender == "nginx";
    let (cpu_us, rss) = match (nginx, workload) {
        (true, "hello") => (55.0, 12 << 20),
        (true, _) => (80.0, 12 << 20),
        (false, "hello") => (120.0, 48 << 20),
        (false, _) => (160.0, 52 << 20),
    };
    match level {
        LoadLevel::Concurrency { connections } => {
            let c = connections as f64;
            let rps = match (nginx, workload) {
                (true, "hello") => 9_000.0 + 1_500.0 * c.log2(),
                (true, _) => 6_000.0 + 1_000.0 * c.log2(),
                (false, "hello") => 7_000.0 + 1_000.0 * c.log2(),
                (false, _) => 3_000.0 + 600.0 * c.log2(),
            };
            // Closed loop: Little's law.
            Shape {
                rps,
                latency_us: c / rps * 1e6,
                cpu_us,
                rss,
            }
        }
        // Open loop: the rate asked for (caddy cannot keep 1000 req/s), the service time.
        LoadLevel::Rate { rps, .. } => Shape {
            rps: if !nginx && rps >= 1000.0 { 930.0 } else { rps },
            latency_us: cpu_us * 12.0,
            cpu_us,
            rss,
        },
    }
}

/// What varies from step to step besides the shape.
struct Step<'a> {
    seed: u64,
    jitter: f64,
    level: LoadLevel,
    start: SystemTime,
    duration: Duration,
    failures: &'a [(FailureKind, u64)],
    busiest_thread: f64,
}

/// A rate step's `until = "p99±10%"` outcome, converged after 1.6 s unless `late` (then
/// ±20% at its end), and its automatic warm-up, level after 10.2 s.
fn converging(
    late: bool,
) -> (
    Option<shootout_model::until::UntilOutcome>,
    Option<shootout_model::WarmedUp>,
) {
    use shootout_model::until::{parse_all, Reading, UntilOutcome};
    let until = UntilOutcome {
        conditions: parse_all(&["p99±10%".into()]).unwrap(),
        converged: (!late).then_some(Duration::from_millis(1_600)),
        last: vec![Some(Reading {
            value: 1.0,
            lo: 0.95,
            hi: if late { 1.2 } else { 1.05 },
            open_above: false,
        })],
    };
    let warm_up = shootout_model::WarmedUp {
        took: Duration::from_millis(10_200),
        level: true,
    };
    (Some(until), Some(warm_up))
}

/// A synthetic step: `rps` and latency jittered by `jitter` (a share), `failures` added.
fn synthetic(s: &Shape, step: &Step) -> (RunResult, Vec<ResourceSample>) {
    let Step {
        seed,
        jitter,
        level,
        start,
        duration,
        failures,
        busiest_thread,
    } = *step;
    let mut g = Lcg(seed);
    let rps = s.rps * (1.0 + jitter * (2.0 * g.unit() - 1.0));
    let completed = (rps * duration.as_secs_f64()).round() as u64;
    let mut latency = latency_histogram();
    let mut latency_raw = latency_histogram();
    let mut connect = latency_histogram();
    let mut waiting = latency_histogram();
    let mut processing = latency_histogram();
    let recorded = 2_000u64.min(completed);
    for i in 0..recorded {
        let u = g.unit();
        // A long right tail: most near the typical latency, one in fifty up to 8×.
        let factor = if i % 50 == 0 {
            2.0 + 6.0 * u
        } else {
            0.6 + 0.8 * u
        };
        let v = (s.latency_us * factor).max(1.0) as u64;
        let weight = completed / recorded + u64::from(i < completed % recorded);
        latency.record_n(v, weight).unwrap();
        latency_raw.record_n(v * 9 / 10 + 1, weight).unwrap();
        connect.record_n(0, weight).unwrap();
        waiting.record_n(v * 3 / 4, weight).unwrap();
        processing.record_n(v, weight).unwrap();
    }
    let mut counts = Counts {
        completed,
        ok: completed,
        connections_opened: 8,
        bytes_received: completed * 180,
        body_bytes: completed * 12,
        bytes_sent: completed * 40,
        ..Default::default()
    };
    for (kind, n) in failures {
        counts.failures[*kind] += n;
        counts.ok -= n;
    }
    counts.status.insert(200, counts.ok);
    let schedule = match level {
        LoadLevel::Rate { rps: target, .. } => Some(ScheduleStats {
            target_rps: target,
            achieved_rps: rps,
            due: (target * duration.as_secs_f64()) as u64,
            sent: completed,
            late: if rps < target * 0.99 {
                completed / 10
            } else {
                0
            },
            late_no_connection: if rps < target * 0.99 {
                completed / 10
            } else {
                0
            },
            max_lag: Duration::from_micros(180),
            ..Default::default()
        }),
        LoadLevel::Concurrency { .. } => None,
    };
    let mut r = RunResult {
        started: start,
        duration,
        counts,
        histograms: shootout_model::Histograms {
            latency,
            latency_raw,
            connect,
            waiting,
            processing,
            ..Default::default()
        },
        series: vec![],
        samples: vec![],
        first_response: None,
        generator: GeneratorStats {
            threads: 2,
            cpu_user: Duration::from_millis(40),
            cpu_sys: Duration::from_millis(160),
            busiest_thread,
        },
        schedule,
        interrupted: false,
        warnings: vec![],
        // At rate levels, a workload with a request list of two entries: reads and writes.
        targets: ["GET /items/{rand:1-100}", "POST /items"]
            .iter()
            .filter(|_| matches!(level, LoadLevel::Rate { .. }))
            .enumerate()
            .map(|(i, label)| {
                let mut h = latency_histogram();
                h.record((s.latency_us * (i as f64 + 1.0)) as u64).unwrap();
                shootout_model::TargetStats {
                    label: label.to_string(),
                    completed: completed / 2,
                    ok: completed / 2,
                    failures: Default::default(),
                    unsent: 0,
                    latency: h,
                    busy: None,
                }
            })
            .collect(),
        journeys: Vec::new(),
        listen: None,
        until: None,
        warm_up: None,
        stream: None,
        in_flight_at_end: None,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    let cpu_total = s.cpu_us * completed as f64;
    let resources = (0..=4u32)
        .map(|i| {
            let cpu = Duration::from_secs_f64(cpu_total * 1e-6 * f64::from(i) / 4.0);
            ResourceSample {
                at: Duration::from_millis(500 * u64::from(i)),
                cpu_user: Duration::from_secs(1) + cpu / 4,
                cpu_sys: cpu - cpu / 4,
                rss_bytes: s.rss - u64::from(4 - i) * 4096,
                processes: 2,
                threads: 3,
                ctx_switches: u64::from(i) * 1_000,
                fds: 12,
            }
        })
        .collect();
    (r, resources)
}

fn machine(kernel: &str) -> MachineFacts {
    MachineFacts {
        cpu_model: "Test CPU @ 3.0GHz".into(),
        cores: 2,
        kernel: kernel.into(),
        memory_bytes: 8 << 30,
        versions: BTreeMap::from([("shootout".into(), "0.1.0".into())]),
    }
}

/// One seeded run.
struct Seed {
    name: &'static str,
    day: u64,
    workloads: &'static [&'static str],
    levels: &'static [LoadLevel],
    reps: u32,
    /// caddy's req/s factor (its latency is divided by it).
    caddy_factor: f64,
    kernel: &'static str,
    /// Run 4: caddy crashes before `static page`, the run is interrupted there.
    crash_and_interrupt: bool,
    /// How long each step lasted (2 s but in the unlike store).
    step_secs: u64,
}

const CONCURRENCY: [LoadLevel; 2] = [
    LoadLevel::Concurrency { connections: 1 },
    LoadLevel::Concurrency { connections: 8 },
];

const RATE: [LoadLevel; 2] = [
    LoadLevel::Rate {
        rps: 500.0,
        connections: 16,
    },
    LoadLevel::Rate {
        rps: 1000.0,
        connections: 16,
    },
];

/// The plan after defaults, as `shootout run` stores it.
fn resolved(s: &Seed) -> String {
    serde_json::json!({
        "name": s.name,
        "contenders": [
            {"name": "nginx", "launch": "nginx -p {tmp} -c nginx.conf", "baseline": true},
            {"name": CADDY, "launch": "caddy run --config Caddyfile", "baseline": false},
            {"name": "flaky", "launch": "python3 flaky.py {port}", "baseline": false},
        ],
        "workloads": s.workloads.iter().map(|w| serde_json::json!({"name": w})).collect::<Vec<_>>(),
        "levels": s.levels,
        "repeat": s.reps,
    })
    .to_string()
}

fn seed_run(store: &mut Store, s: &Seed) {
    let m = machine(s.kernel);
    let t0 = s.day * 86_400;
    let resolved = resolved(s);
    let run = store
        .begin_run(&NewRun {
            name: s.name,
            plan_text: "name = \"demo\"\n",
            plan_resolved: &resolved,
            machine: &m,
            started: at(t0),
        })
        .unwrap();
    let contender = |name, baseline, command| ContenderRecord {
        name,
        command,
        baseline,
        status: ContenderStatus::Skipped,
        detail: "not started yet",
        version: None,
        stdout_log: None,
        stderr_log: None,
    };
    let nginx = store
        .add_contender(
            run,
            &ContenderRecord {
                version: Some("nginx version: nginx/1.25.3"),
                ..contender("nginx", true, "nginx -p {tmp} -c nginx.conf")
            },
        )
        .unwrap();
    let caddy = store
        .add_contender(
            run,
            &contender(CADDY, false, "caddy run --config Caddyfile"),
        )
        .unwrap();
    let flaky = store
        .add_contender(run, &contender("flaky", false, "python3 flaky.py {port}"))
        .unwrap();
    store
        .update_contender(
            flaky,
            ContenderStatus::VerificationFailed,
            "  workload 'hello' (sequential, 20 requests on 1 connection): 0 ok, 20 failed (20 status); status codes 500: 20\n    one answer: HTTP/1.1 500 Internal Server Error | oops",
        )
        .unwrap();
    let mut clock = t0 + 10;
    'steps: for (wi, workload) in s.workloads.iter().enumerate() {
        for (li, level) in s.levels.iter().enumerate() {
            for rep in 1..=s.reps {
                for (ci, id) in [(0, nginx), (1, caddy)] {
                    if s.crash_and_interrupt && wi == 1 && ci == 1 {
                        continue;
                    }
                    let name = if ci == 0 { "nginx" } else { CADDY };
                    let mut shape = shape(name, workload, *level);
                    if ci == 1 {
                        shape.rps *= s.caddy_factor;
                        shape.latency_us /= s.caddy_factor;
                    }
                    // The quirks of run 1 (and its copies), not of the rate sweep.
                    let demo = !level_is_rate(*level);
                    let noisy = demo && ci == 1 && wi == 0 && li == 1;
                    let failures: &[(FailureKind, u64)] =
                        if demo && ci == 1 && wi == 1 && li == 1 && rep == 3 {
                            &[(FailureKind::Timeout, 3), (FailureKind::Reset, 1)]
                        } else {
                            &[]
                        };
                    let saturated = demo && ci == 0 && wi == 0 && li == 1 && rep == 2;
                    let start = at(clock);
                    let interrupted = s.crash_and_interrupt && wi == 1;
                    // The same seeds in every run: run 2 repeats run 1's numbers exactly.
                    let (mut result, resources) = synthetic(
                        &shape,
                        &Step {
                            seed: (wi * 1000 + li * 100) as u64 + u64::from(rep) * 10 + ci as u64,
                            jitter: if noisy {
                                0.12
                            } else if level_is_rate(*level) {
                                0.002
                            } else {
                                0.02
                            },
                            level: *level,
                            start,
                            duration: if interrupted {
                                Duration::from_millis(700)
                            } else {
                                Duration::from_secs(s.step_secs)
                            },
                            failures,
                            busiest_thread: if saturated { 0.95 } else { 0.45 },
                        },
                    );
                    result.interrupted = interrupted;
                    if level_is_rate(*level) {
                        // The rate sweep's steps lasted `until` their p99 converged, after
                        // an automatic warm-up; caddy's second at the first rate did not.
                        let late = ci == 1 && li == 0 && rep == 2;
                        (result.until, result.warm_up) = converging(late);
                    }
                    clock += 3;
                    store
                        .record_step(&StepRecord {
                            run,
                            contender: id,
                            workload,
                            level: *level,
                            repetition: rep,
                            started: start,
                            ended: at(clock),
                            status: if interrupted {
                                StepStatus::Interrupted
                            } else {
                                StepStatus::Complete
                            },
                            result: &result,
                            resources: &resources,
                            wire: Default::default(),
                            other_load: None,
                            search: None,
                        })
                        .unwrap();
                    if interrupted {
                        break 'steps;
                    }
                }
            }
        }
    }
    if s.crash_and_interrupt {
        store.update_contender(
            caddy,
            ContenderStatus::Crashed,
            "exited during a step (exit status: 139); last lines of its stderr:\nSegmentation fault (core dumped)",
        )
        .unwrap();
        store
            .update_contender(nginx, ContenderStatus::Measured, "")
            .unwrap();
        store
            .finish_run(run, RunStatus::Interrupted, at(clock + 1))
            .unwrap();
    } else {
        for id in [nginx, caddy] {
            store
                .update_contender(id, ContenderStatus::Measured, "")
                .unwrap();
        }
        store
            .finish_run(run, RunStatus::Complete, at(clock + 2))
            .unwrap();
    }
}

fn level_is_rate(l: LoadLevel) -> bool {
    matches!(l, LoadLevel::Rate { .. })
}

/// A temporary store holding the seeded runs.
struct Seeded {
    dir: tempfile::TempDir,
}

impl Seeded {
    fn new() -> Seeded {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("shootout.db")).unwrap();
        let demo = |day, reps, caddy_factor, kernel, crash_and_interrupt| Seed {
            name: "demo",
            day,
            workloads: &["hello", "static page"],
            levels: &CONCURRENCY,
            reps,
            caddy_factor,
            kernel,
            crash_and_interrupt,
            step_secs: 2,
        };
        for s in [
            demo(1, 4, 1.0, "6.1.0-test", false),
            demo(2, 4, 1.0, "6.1.0-test", false),
            demo(3, 4, 0.8, "6.1.0-test", false),
            demo(4, 1, 0.8, "6.2.0-test", true),
            Seed {
                name: "rate sweep",
                workloads: &["hello"],
                levels: &RATE,
                reps: 2,
                ..demo(5, 2, 1.0, "6.1.0-test", false)
            },
            // A re-run of run 1 in which caddy overtakes nginx on `hello`.
            demo(6, 4, 1.5, "6.1.0-test", false),
        ] {
            seed_run(&mut store, &s);
        }
        Seeded { dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("shootout.db")
    }

    /// Runs `shootout ARGS --db DB`; returns (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = shootout()
            .args(args)
            .arg("--db")
            .arg(self.db())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// stdout of a command that must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "{args:?}\nstdout:\n{out}\nstderr:\n{err}");
        out
    }
}

#[test]
fn report_snapshots_of_every_format() {
    let s = Seeded::new();
    for run in ["1", "4", "5"] {
        for f in ["text", "markdown", "json", "csv"] {
            let out = s.ok(&["report", run, "--format", f]);
            insta::assert_snapshot!(format!("report_run{run}_{f}"), out);
        }
    }
    // No --format: text. No run: the latest (6).
    assert_eq!(s.ok(&["report", "1"]), s.ok(&["report", "1", "-f", "text"]));
    assert!(s.ok(&["report"]).starts_with("run 6: demo (complete)\n"));
}

#[test]
fn compare_snapshots_of_every_format() {
    let s = Seeded::new();
    for f in ["text", "markdown", "json", "csv"] {
        let (code, out, _) = s.run(&["compare", "1", "3", "--format", f]);
        assert_eq!(code, 0, "no gate asked: exit 0");
        insta::assert_snapshot!(format!("compare_1_3_{f}"), out);
    }
    let (_, out, _) = s.run(&["compare", "1", "4"]);
    insta::assert_snapshot!("compare_1_4_text", out);
}

#[test]
fn a_re_run_that_swaps_two_contenders_says_the_ranking_did_not_hold() {
    let s = Seeded::new();
    let (code, out, _) = s.run(&["compare", "1", "6"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("compare_1_6_swap", out);
    // hello: nginx ahead at every level in run 1, caddy in run 6, each significantly.
    let swapped = format!("nginx and {CADDY} swapped: significant in both runs");
    assert_eq!(out.matches(&swapped).count(), 2, "{out}");
    // static page: the order held.
    let held = format!("same order: nginx > {CADDY}");
    assert_eq!(out.matches(&held).count(), 2, "{out}");
    // The same plan run twice reads as one.
    let (code, out, _) = s.run(&["report", "--runs", "1,6", "-f", "json"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["run"]["also"], serde_json::json!([6]));
    let hello_c1 = &doc["results"][1];
    assert_eq!(hello_c1["repetitions"], 8, "{hello_c1}");
    let (code, _, err) = s.run(&["report", "--runs", "1,5"]);
    assert_eq!(code, 2);
    assert!(err.contains("run 5 is of the plan 'rate sweep'"), "{err}");
}

#[test]
fn identical_runs_are_no_significant_change_and_pass_the_gate() {
    let s = Seeded::new();
    let (code, out, err) = s.run(&["compare", "1", "2", "--fail-if-slower", "5%"]);
    assert_eq!(code, 0, "{out}\n{err}");
    insta::assert_snapshot!("compare_1_2_identical", out);
    assert_eq!(
        out.matches("no significant change (p=1)").count(),
        8 * 2,
        "{out}"
    );
    assert_eq!(err, "✓ run 2 passed --fail-if-slower 5% against run 1\n");
}

#[test]
fn a_run_20_percent_slower_fails_the_gate_with_exit_1() {
    let s = Seeded::new();
    let (code, out, err) = s.run(&["compare", "1", "3", "--fail-if-slower", "5%"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("1.25 times slower (") && out.contains(", p=0.029)"),
        "{out}"
    );
    insta::assert_snapshot!("compare_1_3_gate_stderr", err);
    // Only caddy's four pairs; nginx did not change.
    assert_eq!(
        err.lines().filter(|l| l.starts_with("  - ")).count(),
        4,
        "{err}"
    );
    assert!(!err.contains("nginx"), "{err}");
    // A threshold above the drop passes.
    let (code, _, err) = s.run(&["compare", "1", "3", "--fail-if-slower", "25"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_untested_drop_is_reported_not_failed_but_a_crash_still_fails_the_gate() {
    let s = Seeded::new();
    let (code, out, err) = s.run(&[
        "compare",
        "1",
        "4",
        "--fail-if-slower",
        "5%",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    insta::assert_snapshot!("compare_1_4_gate_stderr", err);
    // Run 4 has one repetition per cell and no per-second samples: its drops beyond 5%
    // cannot be tested, so they are reported and fail nothing ...
    assert!(!err.contains("req/s"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let untested = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap().starts_with("not tested: "))
        .count();
    assert!(untested > 0, "{doc}");
    // ... but caddy crashed before `static page` in run 4: that fails the gate.
    assert!(
        err.contains("not in run 4 (crashed: exited during a step"),
        "{err}"
    );
    assert_eq!(doc["gates"]["passed"], false);
    assert!(doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["rps"]["verdict"] == "not_enough_repetitions"));
    // Markdown for a pull-request comment carries the gates' outcome.
    let (code, out, _) = s.run(&[
        "compare",
        "1",
        "4",
        "--fail-if-slower",
        "5%",
        "--fail-if-p99-above",
        "4",
        "-f",
        "md",
    ]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("compare_1_4_gates_markdown", out);
}

#[test]
fn the_p99_gate_fails_on_any_median_above_the_limit() {
    let s = Seeded::new();
    let (code, _, err) = s.run(&["compare", "1", "2", "--fail-if-p99-above", "20ms"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = s.run(&["compare", "1", "2", "--fail-if-p99-above", "2"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with("error: run 2 failed --fail-if-p99-above 2: "),
        "{err}"
    );
    assert!(err.contains("is above 2 ms"), "{err}");
}

#[test]
fn a_missing_store_or_run_is_one_line_naming_the_fix_and_exit_2() {
    let s = Seeded::new();
    let missing = s.dir.path().join("nope.db");
    for args in [
        vec!["report"],
        vec!["report", "1"],
        vec!["compare", "1", "2"],
    ] {
        let out = shootout()
            .args(&args)
            .arg("--db")
            .arg(&missing)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("run a plan first"), "{err}");
        assert!(!missing.exists(), "a report must not create the store");
    }
    for args in [&["report", "9"][..], &["compare", "1", "9"]] {
        let (code, _, err) = s.run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        let db = s.db().display().to_string();
        assert_eq!(
            err,
            format!("error: run 9 is not in {db}: 'shootout ls --db {db}' lists the runs\n")
        );
    }
    let (code, _, err) = s.run(&["report", "1", "--format", "xml"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = s.run(&["compare", "1", "2", "--fail-if-slower", "lots"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a percentage"), "{err}");
}

#[test]
fn html_goes_to_the_file_and_nothing_to_stdout_unless_asked() {
    let s = Seeded::new();
    let file = s.dir.path().join("report.html");
    let (code, out, err) = s.run(&["report", "1", "--html", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
    assert!(err.contains("wrote the HTML report of run 1 to"), "{err}");
    let page = std::fs::read_to_string(&file).unwrap();
    assert!(
        page.to_ascii_lowercase().starts_with("<!doctype html"),
        "{page}"
    );
    // With --format as well, both.
    let (_, out, _) = s.run(&["report", "1", "--html", file.to_str().unwrap(), "-f", "csv"]);
    assert!(out.starts_with("run_id,contender,"), "{out}");
}

#[test]
fn csv_is_one_rfc4180_record_per_step() {
    let s = Seeded::new();
    let out = s.ok(&["report", "1", "--format", "csv"]);
    let records: Vec<&str> = out.split_terminator("\r\n").collect();
    // Header + 2 contenders × 2 workloads × 2 levels × 4 repetitions.
    assert_eq!(records.len(), 1 + 32);
    let columns = records[0].split(',').count();
    for r in &records[1..] {
        // The quoted name holds a comma and doubled quotes; everything else is plain.
        let unquoted = r.replace("\"caddy | php-fpm, \"\"socket\"\"\"", "CADDY");
        assert_eq!(unquoted.split(',').count(), columns, "{r}");
        assert!(!unquoted.contains('"'), "{r}");
    }
    assert!(!out.replace("\r\n", "").contains('\n'));
}

// ---- the JSON documents against docs/report-json.md ----

/// The schema document; its tables are the contract.
const DOC: &str = include_str!("../docs/report-json.md");

/// Checks documents against the section's table both ways; every documented field must be
/// present with a value in at least one of them.
fn check_against_doc(section: &str, docs: &[(String, serde_json::Value)]) {
    let schema = shootout_report::schema::Schema::from_markdown(DOC, Some(section)).unwrap();
    assert!(schema.fields().count() > 20, "no table under '{section}'");
    let mut seen = std::collections::BTreeSet::new();
    for (name, doc) in docs {
        match schema.check(doc) {
            Ok(values) => seen.extend(values),
            Err(problems) => panic!("{name} against docs/report-json.md: {problems:#?}"),
        }
    }
    for (path, _) in schema.fields() {
        assert!(seen.contains(path), "no document has a value for {path}");
    }
}

#[test]
fn the_json_documents_match_docs_report_json() {
    let s = Seeded::new();
    let json = |args: &[&str]| -> serde_json::Value {
        let (_, out, err) = s.run(args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}\n{err}"))
    };
    let mut reports: Vec<(String, serde_json::Value)> = ["1", "4", "5"]
        .iter()
        .map(|r| (format!("report {r}"), json(&["report", r, "-f", "json"])))
        .collect();
    let searched = capacity_store();
    let searched_json =
        |args: &[&str]| -> serde_json::Value { serde_json::from_str(&searched.ok(args)).unwrap() };
    reports.push((
        "capacity report 1".into(),
        searched_json(&["report", "1", "-f", "json"]),
    ));
    let journeys = journey_store();
    let journeys_json =
        |args: &[&str]| -> serde_json::Value { serde_json::from_str(&journeys.ok(args)).unwrap() };
    reports.push((
        "journey report 1".into(),
        journeys_json(&["report", "1", "-f", "json"]),
    ));
    let streamed = grpc_store();
    reports.push((
        "bidi gRPC report 1".into(),
        serde_json::from_str(&streamed.ok(&["report", "1", "-f", "json"])).unwrap(),
    ));
    check_against_doc("shootout report", &reports);
    let compares: Vec<(String, serde_json::Value)> = [
        &["compare", "1", "3", "-f", "json", "--fail-if-slower", "5"][..],
        &[
            "compare",
            "1",
            "4",
            "-f",
            "json",
            "--fail-if-slower",
            "5",
            "--fail-if-p99-above",
            "1",
        ],
        &["compare", "4", "1", "-f", "json"],
        // Nothing in common (exit 1, the document is printed all the same).
        &["compare", "5", "1", "-f", "json"],
        &["compare", "1", "5", "-f", "json"],
        &["compare", "5", "5", "-f", "json"],
        &["compare", "1", "6", "-f", "json"],
    ]
    .iter()
    .map(|a| (a.join(" "), json(a)))
    .chain([
        (
            "capacity compare 1 2".into(),
            searched_json(&["compare", "1", "2", "-f", "json"]),
        ),
        (
            "journey compare 1 2".into(),
            journeys_json(&["compare", "1", "2", "-f", "json"]),
        ),
        (
            "unlike compare 1 2".into(),
            serde_json::from_str(&unlike_store().ok(&["compare", "1", "2", "-f", "json"])).unwrap(),
        ),
    ])
    .collect();
    check_against_doc("shootout compare", &compares);
}

/// A store of two runs of one plan whose steps are unlike: 6 s in run 1, 20 s in run 2
/// (a short look against a full run), caddy behind nginx on `hello` in run 1 and ahead in
/// run 2.
fn unlike_store() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("shootout.db")).unwrap();
    for (day, step_secs, caddy_factor) in [(1, 6, 0.5), (2, 20, 1.5)] {
        let seed = Seed {
            name: "demo",
            day,
            workloads: &["hello"],
            levels: &CONCURRENCY,
            reps: 4,
            caddy_factor,
            kernel: "6.1.0-test",
            crash_and_interrupt: false,
            step_secs,
        };
        seed_run(&mut store, &seed);
    }
    Seeded { dir }
}

/// `compare` of a quick run with a full one: each ranking says its steps were unlike, and
/// a swap is not called an order that failed its re-run.
#[test]
fn compare_of_unlike_steps_says_so_beside_the_rankings() {
    let s = unlike_store();
    let (_, out, err) = s.run(&["compare", "1", "2"]);
    assert!(out.contains("Rankings in both runs"), "{out}\n{err}");
    assert!(
        out.contains("unlike steps (6 s in A, 20 s in B): each order is its own run's"),
        "{out}"
    );
    assert!(!out.contains("did not survive the re-run"), "{out}");
    assert!(
        out.contains("significant in both runs, each the other way: the step lengths differ"),
        "{out}"
    );
}

/// A store of two runs of a journey workload (a step served at once, one served in turn,
/// 2 ms each) on two contenders (one test server) at a rate: the report's and compare's
/// journey fields from a real run.
fn journey_store() -> Seeded {
    let server =
        shootout_testserver::TestServer::start(shootout_testserver::Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/");
    let url = url.trim_end_matches('/');
    std::fs::write(
        dir.path().join("j.toml"),
        "[[journey]]\nname = \"visit\"\n[[journey.step]]\nname = \"home\"\nget = \"/form\"\n\
         [[journey.step]]\nname = \"desk\"\nget = \"/desk?us=2000\"\n",
    )
    .unwrap();
    let plan = format!(
        "name = \"journeys\"\n[defaults]\nwarmup = 0\nduration = \"0.5s\"\nrepeat = 2\ncooldown = \"0s\"\n\
         [[contender]]\nname = \"theirs\"\nurl = \"{url}\"\n\
         [[contender]]\nname = \"again\"\nurl = \"{url}\"\n\
         [[workload]]\nname = \"visit\"\njourney = \"j.toml\"\n\
         [load]\nrate = [40]\nconnections = 4\n"
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    for _ in 0..2 {
        let out = shootout()
            .arg("run")
            .arg(dir.path().join("plan.toml"))
            .arg("--db")
            .arg(dir.path().join("shootout.db"))
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    Seeded { dir }
}

/// A store of one run of a bidirectional gRPC workload against the test server's chat:
/// its results count messages (`stream_unit`).
fn grpc_store() -> Seeded {
    let server = shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::Grpc(
        shootout_testserver::GrpcBehavior::Chat,
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("");
    let plan = format!(
        "name = \"chat\"\n[defaults]\nwarmup = 0\nrequests = 50\nrepeat = 1\ncooldown = \"0s\"\n\
         [[contender]]\nname = \"theirs\"\nurl = \"{}\"\n\
         [[workload]]\nname = \"chat\"\nprotocol = \"grpc\"\nmethod = \"helloworld.Greeter/Chat\"\n\
         proto = \"{}\"\nmessage = '{{\"name\":\"bob\"}}'\nstream = {{ messages = 3 }}\n\
         [load]\nconcurrency = [2]\n",
        url.trim_end_matches('/'),
        shootout_testserver::GREETER_PROTO
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let out = shootout()
        .arg("run")
        .arg(dir.path().join("plan.toml"))
        .arg("--db")
        .arg(dir.path().join("shootout.db"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Seeded { dir }
}

// ---- `shootout run` prints what `shootout report` prints ----

fn run_plan(dir: &Path, url: &str) -> std::process::Output {
    let plan = format!(
        "name = \"same\"\n[defaults]\nwarmup = 0\nrequests = 100\nrepeat = 2\ncooldown = \"0s\"\n\
         [[contender]]\nname = \"theirs\"\nurl = \"{url}\"\n\
         [[contender]]\nname = \"again\"\nurl = \"{url}\"\n\
         [[workload]]\nname = \"hello\"\npath = \"/\"\nexpect = {{ status = 200 }}\n\
         [load]\nconcurrency = [1, 2]\n"
    );
    std::fs::write(dir.join("plan.toml"), plan).unwrap();
    shootout()
        .arg("run")
        .arg(dir.join("plan.toml"))
        .arg("--db")
        .arg(dir.join("shootout.db"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

#[test]
fn report_later_prints_exactly_what_run_printed() {
    let server =
        shootout_testserver::TestServer::start(shootout_testserver::Behavior::Hello).unwrap();
    let url = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let out = run_plan(dir.path(), url.trim_end_matches('/'));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "run 1: same (complete)",
        "theirs (baseline)",
        "times",
        "Percentage of the requests served within a certain time (ms), c=2",
    ] {
        assert!(printed.contains(want), "{want} missing in\n{printed}");
    }
    let later = shootout()
        .args(["report", "1", "--db"])
        .arg(dir.path().join("shootout.db"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(later.status.success());
    assert_eq!(String::from_utf8(later.stdout).unwrap(), printed);
}

#[test]
fn runs_with_nothing_in_common_are_exit_1() {
    let s = Seeded::new();
    let (code, out, err) = s.run(&["compare", "5", "1"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("No contender × workload × load level was measured in both runs."));
    assert_eq!(
        err,
        "error: runs 5 and 1 have no contender × workload × load level (or capacity search) in common: nothing to compare\n"
    );
}

// ---- whose file, and read-only stores ----

/// `path`, `path-wal`, `path-shm`: the bytes of the first, and which of the three exist.
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

#[test]
fn a_sqlite_file_that_is_not_a_store_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    {
        // Someone else's database, in SQLite's default rollback-journal mode.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let before = file_state(&db);
    for args in [
        &["ls"][..],
        &["report"],
        &["report", "1"],
        &["compare", "1", "2"],
    ] {
        let out = shootout().args(args).arg("--db").arg(&db).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(
            err,
            format!(
                "error: {} is a SQLite file but not a shootout store; it was left as it was: give --db the path of a shootout store, or of a new file\n",
                db.display()
            ),
            "{args:?}"
        );
        assert_eq!(file_state(&db), before, "{args:?} changed the file");
    }
    assert_eq!(before.1, [true, false, false], "no -wal, no -shm");
}

/// How this machine can show the test a directory it cannot write, and runs `shootout
/// ARGS` that way: a read-only bind mount in a private mount namespace (`unshare -rm`),
/// else as `nobody` (`setpriv`) when root, else with the write bits removed.
fn shootout_on_read_only_dir(dir: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("shootout");
    let unshare_works = std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if unshare_works {
        return std::process::Command::new("unshare")
            .args(["-rm", "sh", "-c"])
            .arg(r#"mount --bind -o ro "$0" "$0" && touch "$0/probe" 2>/dev/null && exit 99; exec "$@""#)
            .arg(dir)
            .arg(&bin)
            .args(args)
            .output()
            .unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    if root {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args(args)
            .output()
            .unwrap()
    } else {
        std::process::Command::new(&bin)
            .args(args)
            .output()
            .unwrap()
    }
}

#[test]
fn a_store_the_user_cannot_write_can_be_listed_reported_and_compared() {
    let commands: [&[&str]; 3] = [&["ls"], &["report", "1"], &["compare", "1", "3"]];
    let writable: Vec<String> = {
        let s = Seeded::new();
        commands.iter().map(|c| s.ok(c)).collect()
    };
    let s = Seeded::new();
    let db = s.db();
    // The store as the writer left it: WAL mode, its -wal and -shm gone with the last close
    // (so SQLite, which needs the -shm, cannot make it in the read-only directory).
    assert_eq!(file_state(&db).1, [true, false, false]);
    let before = file_state(&db);
    for (args, want) in commands.iter().zip(&writable) {
        let mut full: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        full.extend(["--db".as_ref(), db.as_os_str()]);
        let out = shootout_on_read_only_dir(s.dir.path(), &full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(&String::from_utf8_lossy(&out.stdout), want, "{args:?}");
    }
    assert_eq!(file_state(&db), before);
}

// ---- names and details a terminal or a spreadsheet would run ----

/// Contender names that a spreadsheet would run as formulas, with an escape sequence and a
/// newline; a crashed contender whose stderr holds escape sequences.
const FORMULA: &str = "=cmd|' /C calc'!A0";
const DASH_NEWLINE: &str = "-x\nsecond line";
const AT_ESC: &str = "@y\u{1b}[31mred";
const ESC_STDERR: &str =
    "exited during a step (exit status: 1); last lines of its stderr:\n\u{1b}]0;pwned\u{7}\u{1b}[2Jcleared\rover";

/// A store with one run of three such contenders, one workload named with a newline too.
fn hostile_store(dir: &Path) -> PathBuf {
    let db = dir.join("hostile.db");
    let mut store = Store::open(&db).unwrap();
    let m = machine("6.1.0-test");
    let run = store
        .begin_run(&NewRun {
            name: "hostile\u{1b}[1m",
            plan_text: "",
            plan_resolved: "{}",
            machine: &m,
            started: at(0),
        })
        .unwrap();
    let level = LoadLevel::Concurrency { connections: 1 };
    let workload = "-w\u{1b}[7m\nrow";
    for (i, name) in [FORMULA, DASH_NEWLINE, AT_ESC].into_iter().enumerate() {
        let id = store
            .add_contender(
                run,
                &ContenderRecord {
                    name,
                    command: "=HYPERLINK(\"http://x\")",
                    baseline: i == 0,
                    status: ContenderStatus::Skipped,
                    detail: "",
                    version: Some("v1\u{1b}[5m"),
                    stdout_log: None,
                    stderr_log: None,
                },
            )
            .unwrap();
        let (result, resources) = synthetic(
            &shape("nginx", "hello", level),
            &Step {
                seed: i as u64,
                jitter: 0.0,
                level,
                start: at(10),
                duration: Duration::from_secs(2),
                failures: &[],
                busiest_thread: 0.4,
            },
        );
        store
            .record_step(&StepRecord {
                run,
                contender: id,
                workload,
                level,
                repetition: 1,
                started: at(10),
                ended: at(12),
                status: StepStatus::Complete,
                result: &result,
                resources: &resources,
                wire: Default::default(),
                other_load: None,
                search: None,
            })
            .unwrap();
        let (status, detail) = if i == 2 {
            (ContenderStatus::Crashed, ESC_STDERR)
        } else {
            (ContenderStatus::Measured, "")
        };
        store.update_contender(id, status, detail).unwrap();
    }
    store.finish_run(run, RunStatus::Complete, at(20)).unwrap();
    db
}

#[test]
fn escape_sequences_and_newlines_in_names_and_stderr_reach_no_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = hostile_store(dir.path());
    let report = |format: &str| {
        let out = shootout()
            .args(["report", "--format", format, "--db"])
            .arg(&db)
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    // Text shows a newline in a name escaped; Markdown, as a blank (its line breaks).
    for (format, name) in [("text", r"-x\nsecond line"), ("markdown", "-x second line")] {
        let out = report(format);
        assert!(
            !out.contains(['\u{1b}', '\u{7}', '\r']),
            "{format}: a control character reached the terminal:\n{out}"
        );
        // The stderr tail is shown, escaped, not dropped.
        assert!(
            out.contains(r"\u{1b}]0;pwned\u{7}\u{1b}[2Jcleared\r"),
            "{format}:\n{out}"
        );
        // A newline in a name or workload breaks no row and starts no line.
        assert!(out.contains(name), "{format}:\n{out}");
        assert!(
            !out.lines()
                .any(|l| l.starts_with("second line") || l.starts_with("row")),
            "{format}:\n{out}"
        );
    }
    let text = report("text");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(" c=1 ")).collect();
    assert_eq!(
        rows.len(),
        6,
        "one row per contender, in the main table and the intervals':\n{text}"
    );
    insta::assert_snapshot!("hostile_names_text", text);
}

#[test]
fn csv_cells_a_spreadsheet_would_run_are_neutralised() {
    let dir = tempfile::tempdir().unwrap();
    let db = hostile_store(dir.path());
    let out = shootout()
        .args(["report", "--format", "csv", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    // Text cells start with a quote; RFC 4180 quoting still applies to what needs it.
    for cell in [
        ",'=cmd|' /C calc'!A0,",
        "\"'-x\nsecond line\"",
        "'@y\u{1b}[31mred",
        "\"'-w\u{1b}[7m\nrow\"",
    ] {
        assert!(csv.contains(cell), "{cell:?} in:\n{csv}");
    }
    // No record starts a cell with a formula character any more.
    for record in csv.split("\r\n") {
        for cell in record.split(',') {
            assert!(!cell.starts_with(['=', '+', '@']), "{cell:?} in {record:?}");
        }
    }
    insta::assert_snapshot!("hostile_names_csv", csv);
}

// ---- capacity searches ----

/// A run whose `hello` workload was searched for capacity (`p99<20ms`, `errors<1%`):
/// nginx holds `nginx` req/s and caddy `caddy` in every search; each step follows the
/// search's own next rate, as `shootout run` stores it, two searches each, interleaved.
fn seed_capacity_run(store: &mut Store, day: u64, nginx: f64, caddy: f64) {
    seed_capacity_run_storing(store, day, nginx, caddy, &["p99<20ms", "errors<1%"]);
}

/// As [`seed_capacity_run`], the plan stored with the run giving the SLOs as `stored`.
fn seed_capacity_run_storing(store: &mut Store, day: u64, nginx: f64, caddy: f64, stored: &[&str]) {
    seed_capacity_run_by(store, (day, nginx, caddy), stored, "decided");
}

/// As [`seed_capacity_run_storing`], its steps ending by `rule` (`find_max.step_end`):
/// `decided`, or `deadline` (the second searches' steps stored as ended `full`).
fn seed_capacity_run_by(
    store: &mut Store,
    (day, nginx, caddy): (u64, f64, f64),
    stored: &[&str],
    rule: &str,
) {
    use shootout_analysis::capacity::{next, Next, Search, Step as Tried, Verdict};
    use shootout_model::find_max::{SearchStep, StepEnd};
    let resolved = serde_json::json!({
        "name": "capacity",
        "contenders": [
            {"name": "nginx", "launch": "nginx -p {tmp} -c nginx.conf", "baseline": true},
            {"name": CADDY, "launch": "caddy run --config Caddyfile", "baseline": false},
        ],
        "workloads": [{"name": "hello", "find_max": {"slo": stored, "from": 1000.0, "to": 100000.0, "step_end": rule}}],
        "levels": [],
        "repeat": 2,
    })
    .to_string();
    let t0 = day * 86_400;
    let m = machine("6.1.0-test");
    let run = store
        .begin_run(&NewRun {
            name: "capacity",
            plan_text: "name = \"capacity\"\n",
            plan_resolved: &resolved,
            machine: &m,
            started: at(t0),
        })
        .unwrap();
    let add = |store: &mut Store, name, baseline, command| {
        store
            .add_contender(
                run,
                &ContenderRecord {
                    name,
                    command,
                    baseline,
                    status: ContenderStatus::Measured,
                    detail: "",
                    version: None,
                    stdout_log: None,
                    stderr_log: None,
                },
            )
            .unwrap()
    };
    let ids = [
        add(store, "nginx", true, "nginx -p {tmp} -c nginx.conf"),
        add(store, CADDY, false, "caddy run --config Caddyfile"),
    ];
    let search = Search::new(1000.0, 100_000.0);
    let slos: Vec<shootout_model::threshold::Threshold> =
        ["p99<20ms", "errors<1%"].map(|s| s.parse().unwrap()).into();
    let mut clock = t0 + 10;
    for rep in 1..=2u32 {
        let mut tried: [Vec<Tried>; 2] = [Vec::new(), Vec::new()];
        loop {
            let mut stepped = false;
            for (ci, held) in [nginx, caddy].into_iter().enumerate() {
                let Next::Try(rate) = next(&search, &tried[ci]) else {
                    continue;
                };
                stepped = true;
                let verdict = if rate <= held {
                    Verdict::Met
                } else {
                    Verdict::Broke(0)
                };
                let level = LoadLevel::Rate {
                    rps: rate,
                    connections: 16,
                };
                let shape = Shape {
                    rps: rate.min(held),
                    latency_us: if rate <= held { 2_000.0 } else { 90_000.0 },
                    cpu_us: 60.0,
                    rss: 12 << 20,
                };
                let start = at(clock);
                let (result, resources) = synthetic(
                    &shape,
                    &Step {
                        seed: clock,
                        jitter: 0.002,
                        level,
                        start,
                        duration: Duration::from_secs(2),
                        failures: &[],
                        busiest_thread: 0.4,
                    },
                );
                clock += 3;
                // The second search of each contender kept how its steps ended (decided,
                // as a server far from its limits lets them); the first did not, as a run
                // stored before the store kept it.
                let mark = SearchStep {
                    verdict: Some(verdict.clone()),
                    ended: (rep == 2).then_some(match (rule, verdict.met()) {
                        ("deadline", _) => StepEnd::Full,
                        (_, true) => StepEnd::DecidedMet,
                        (_, false) => StepEnd::DecidedBroke,
                    }),
                };
                store
                    .record_step(&StepRecord {
                        run,
                        contender: ids[ci],
                        workload: "hello",
                        level,
                        repetition: rep,
                        started: start,
                        ended: at(clock),
                        status: StepStatus::Complete,
                        result: &result,
                        resources: &resources,
                        wire: Default::default(),
                        // Another process took a CPU during caddy's first step of its
                        // second search: the report says so.
                        other_load: (ci == 1 && rep == 2 && tried[ci].is_empty()).then_some(
                            shootout_model::OtherLoad {
                                cpus: 2,
                                others: Some(0.9),
                                contenders: 0.0,
                                interrupts: 0.0,
                                steal: 0.0,
                                load_avg: 3.0,
                            },
                        ),
                        search: Some(&mark),
                    })
                    .unwrap();
                tried[ci].push(Tried::of(rate, &slos, &result, verdict));
            }
            if !stepped {
                break;
            }
        }
    }
    store
        .finish_run(run, RunStatus::Complete, at(clock + 2))
        .unwrap();
}

/// A store with two capacity runs: run 1 (nginx 24,000 req/s, caddy 9,000) and a re-run
/// in which caddy holds 15,000.
fn capacity_store() -> Seeded {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("shootout.db")).unwrap();
    seed_capacity_run(&mut store, 1, 24_000.0, 9_000.0);
    seed_capacity_run(&mut store, 2, 24_000.0, 15_000.0);
    Seeded { dir }
}

/// A search whose SLOs stored with the run this shootout cannot read is refused by every
/// command that reads the run, naming the run and the search's first step: never a
/// report whose capacities were replayed without them.
#[test]
fn a_stored_slo_that_cannot_be_read_is_an_error_naming_the_run_and_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("shootout.db")).unwrap();
    seed_capacity_run(&mut store, 1, 24_000.0, 9_000.0);
    seed_capacity_run_storing(
        &mut store,
        2,
        24_000.0,
        9_000.0,
        &["p99 ~ 20ms", "errors<1%"],
    );
    let first = store.steps(shootout_store::RunId(2)).unwrap()[0].id.0;
    drop(store);
    let s = Seeded { dir };
    s.ok(&["report", "1"]);
    let want = format!("run 2, step {first} (workload 'hello'): the capacity search's SLOs stored with the run cannot be read (");
    for args in [
        &["report", "2"][..],
        &["report", "2", "-f", "json"],
        &["report", "--runs", "1,2"],
        &["compare", "1", "2"],
    ] {
        let (code, out, err) = s.run(args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: {err}");
    }
}

/// A search by the fixed rule (`step_end = "deadline"`) says so in its report's title
/// and JSON, its steps ended `full`; `compare` of it with a search by the default rule
/// warns that part of the change is the rule's, and of two alike does not.
#[test]
fn a_search_by_the_fixed_rule_is_said_and_compared_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("shootout.db")).unwrap();
    seed_capacity_run(&mut store, 1, 24_000.0, 9_000.0);
    let slos = ["p99<20ms", "errors<1%"];
    seed_capacity_run_by(&mut store, (2, 24_000.0, 9_000.0), &slos, "deadline");
    seed_capacity_run(&mut store, 3, 24_000.0, 9_000.0);
    drop(store);
    let s = Seeded { dir };
    let text = s.ok(&["report", "2"]);
    assert!(
        text.contains("hello: capacity within p99<20ms, errors<1%, each step to its deadline (the fixed rule)"),
        "{text}"
    );
    assert!(!s.ok(&["report", "1"]).contains("(the fixed rule)"));
    let json: serde_json::Value =
        serde_json::from_str(&s.ok(&["report", "2", "-f", "json"])).unwrap();
    let w = &json["capacities"][0];
    assert_eq!(w["step_end"], "deadline", "{w}");
    let second = &w["contenders"][0]["searches"][1]["steps"][0];
    assert_eq!(second["ended"]["by"], "full", "{second}");
    let (_, unlike, _) = s.run(&["compare", "1", "2"]);
    assert!(
        unlike.contains("unlike search rules: hello: its steps ended once their SLOs were decided in run 1, each ran to its deadline (the fixed rule) in run 2: part of any change in its capacities is the rule's"),
        "{unlike}"
    );
    let (_, alike, _) = s.run(&["compare", "1", "3"]);
    assert!(!alike.contains("unlike search rules"), "{alike}");
}

#[test]
fn capacity_reports_and_comparisons_of_every_format() {
    let s = capacity_store();
    for f in ["text", "markdown", "json"] {
        let out = s.ok(&["report", "1", "--format", f]);
        insta::assert_snapshot!(format!("capacity_report_{f}"), out);
    }
    let json: serde_json::Value =
        serde_json::from_str(&s.ok(&["report", "1", "-f", "json"])).unwrap();
    let busy: Vec<&serde_json::Value> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "busy_machine")
        .collect();
    assert_eq!(busy.len(), 1, "{}", json["warnings"]);
    let message = busy[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("busy machine: {CADDY} · hello (capacity search): the machine was not quiet in 1 of its ")),
        "{message}"
    );
    let w = &json["capacities"][0];
    assert_eq!(w["ranking"], format!("nginx ≫ {CADDY}"), "{w}");
    for (i, held) in [(0, 24_000.0), (1, 9_000.0)] {
        let c = &w["contenders"][i];
        let (lo, hi) = (
            c["interval"][0].as_f64().unwrap(),
            c["interval"][1].as_f64().unwrap(),
        );
        assert!(lo <= held && held < hi && hi / lo <= 1.06, "{c}");
    }
    let (code, out, _) = s.run(&["compare", "1", "2"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("capacity_compare_text", out);
    let v: serde_json::Value =
        serde_json::from_str(&s.ok(&["compare", "1", "2", "-f", "json"])).unwrap();
    let verdicts: Vec<&str> = v["capacities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["no_change", "more"], "{v}");
}
