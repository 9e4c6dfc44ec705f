//! The HTML report from the outside: a golden report of a seeded synthetic run stored in an
//! in-memory store and read back (the path `shootout report` takes), every chart a
//! well-formed SVG with axis titles, a legend and a series, data strings escaped, warnings
//! before results, the one-URL page, the new views (the log2 axis of connections, p50 and
//! p99 by level, a row of timelines per level with a failures timeline only where
//! something failed, a note for one-second steps, the percentile line ending at max), the
//! charts that must not hide or mislead (equal latency lines both visible, scatter dots
//! taking turns, p99 bands, a percentile chart per level, every repetition in the
//! timelines, CPU on the CPUs allowed, median and merged figures labelled), and a real
//! browser (headless Chromium) rendering the golden report to a non-blank picture without
//! console errors, its sweep with 1, 2, 4 and 8 connections evenly spaced, two equal
//! latency lines both in colour, and the page at 390 and 1280 px without sideways scroll,
//! every chart shown whole.
//!
//! The golden file is `tests/golden/report.html`. After a deliberate change to the report,
//! regenerate it with `UPDATE_GOLDEN=1 cargo test -p shootout-report --test html` and look
//! at the diff (and at the page in a browser) before committing it.

use hdrhistogram::Histogram;
use shootout_model::{
    latency_histogram, ContenderStatus, Counts, FailureCounts, FailureKind, FirstResponse,
    GeneratorStats, LoadLevel, LoadSpec, MachineFacts, Pace, ResourceSample, RunResult, RunStatus,
    Sample, ScheduleStats, SecondStats, StepStatus, Target,
};
use shootout_report::html::{render_load, render_run};
use shootout_report::html_text as escape;
use shootout_store::{ContenderRecord, NewRun, StepRecord, Store, StoredRun};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

// ---------------------------------------------------------------------------------------
// Seeded synthetic data
// ---------------------------------------------------------------------------------------

/// The synthetic run's start: Tue Nov 14 22:13:20 2023 UTC.
fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000)
}

/// A tiny deterministic generator (a 64-bit LCG; top bits only).
struct Lcg(u64);

impl Lcg {
    /// A uniform number in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A simulated server: how long one request takes and how many it serves at once.
#[derive(Clone, Copy)]
struct Server {
    /// Service time of one request (µs).
    service_us: f64,
    /// Requests served in parallel (its capacity is `parallel / service`).
    parallel: f64,
    /// Server CPU per request (µs).
    cpu_us: f64,
    /// Resident memory at rest (MiB).
    rss_mib: f64,
}

/// What to simulate for one step.
struct StepPlan {
    server: Server,
    level: LoadLevel,
    seed: u64,
    /// Throughput multiplier of this repetition (noise between repetitions).
    luck: f64,
    /// Requests failing with a 503, one in this many (0: none).
    fail_every: u64,
    /// The generator's busiest thread's busy share.
    busiest: f64,
    /// How long the measurement lasts.
    duration: Duration,
}

/// Simulates one step the way the engine records it: every request's latency goes into
/// the histograms (µs), its second into the series, every k-th into the sample reservoir;
/// the server's CPU and RSS are sampled every 250 ms.
fn simulate(p: &StepPlan) -> (RunResult, Vec<ResourceSample>) {
    let mut rng = Lcg(p.seed);
    let secs = p.duration.as_secs_f64();
    let capacity = p.server.parallel * 1e6 / p.server.service_us * p.luck;
    let (rps, rate) = match p.level {
        LoadLevel::Concurrency { connections } => {
            let c = connections as f64;
            ((c * 1e6 / p.server.service_us).min(capacity) * 0.97, None)
        }
        LoadLevel::Rate { rps, .. } => (rps.min(capacity * 0.98), Some(rps)),
    };
    let n = (rps * secs) as u64;
    let mut latency = latency_histogram();
    let mut latency_raw = latency_histogram();
    let mut connect = latency_histogram();
    let mut waiting = latency_histogram();
    let mut processing = latency_histogram();
    let whole = secs.ceil() as usize;
    let mut seconds: Vec<(u64, u64, Histogram<u64>)> =
        (0..whole).map(|_| (0, 0, latency_histogram())).collect();
    let mut samples = Vec::new();
    let keep_every = (n / 250).max(1);
    let mut failures = FailureCounts::default();
    let mut status = BTreeMap::new();
    for i in 0..n {
        let t_us = i as f64 / rps * 1e6;
        // Queueing: closed loop waits on the other connections; in rate mode a server
        // below the target rate falls behind, and the schedule's lag grows with time.
        let base = match p.level {
            LoadLevel::Concurrency { connections } => {
                connections as f64 * 1e6 / rps.max(1.0) * 0.97
            }
            LoadLevel::Rate { .. } => {
                let rho = (rps / capacity).min(0.95);
                p.server.service_us * (1.0 + rho / (1.0 - rho) * 0.5)
            }
        };
        let u = rng.unit();
        let mut raw = base * (0.55 + 0.9 * rng.unit());
        if u > 0.99 {
            raw *= 3.0 + 5.0 * rng.unit();
        }
        if u > 0.9995 {
            raw *= 30.0;
        }
        let lag = match rate {
            Some(target) if target > rps => t_us * (1.0 - rps / target),
            _ => 0.0,
        };
        let total = (raw + lag).max(1.0) as u64;
        let raw = raw.max(1.0) as u64;
        let failed = p.fail_every > 0 && i % p.fail_every == p.fail_every / 2;
        latency.record(total).unwrap();
        latency_raw.record(raw).unwrap();
        let opened = i < 8;
        connect.record(if opened { 120 } else { 0 }).unwrap();
        waiting.record(raw * 9 / 10).unwrap();
        processing
            .record(total.saturating_sub(if opened { 120 } else { 0 }))
            .unwrap();
        let code = if failed { 503 } else { 200 };
        *status.entry(code).or_insert(0u64) += 1;
        if failed {
            failures[FailureKind::Status] += 1;
        }
        let sec = ((t_us / 1e6) as usize).min(whole - 1);
        seconds[sec].0 += 1;
        seconds[sec].1 += u64::from(failed);
        seconds[sec].2.record(total).unwrap();
        if i % keep_every == 0 {
            samples.push(Sample {
                start_us: t_us as u64,
                connect_us: if opened { 120 } else { 0 },
                waiting_us: (raw * 9 / 10) as u32,
                total_us: total.min(u64::from(u32::MAX)) as u32,
                status: code,
                failure: failed.then_some(FailureKind::Status),
            });
        }
    }
    let failed = failures.total();
    let counts = Counts {
        completed: n,
        ok: n - failed,
        failures,
        aborted: 3,
        status,
        length_mismatch: 0,
        connections_opened: 8,
        connections_failed: 0,
        reconnects: 0,
        retried: 0,
        dropped: 0,
        bytes_received: n * 7_500,
        body_bytes: n * 7_348,
        bytes_sent: n * 90,
        ..Default::default()
    };
    let series = seconds
        .iter()
        .enumerate()
        .map(|(s, (done, bad, h))| SecondStats {
            second: s as u32,
            completed: *done,
            failed: *bad,
            mean_us: if h.is_empty() { 0.0 } else { h.mean().round() },
            p50_us: h.value_at_quantile(0.5),
            p99_us: h.value_at_quantile(0.99),
            max_us: h.max(),
            histogram: Vec::new(),
        })
        .collect();
    let schedule = rate.map(|target| ScheduleStats {
        target_rps: target,
        achieved_rps: rps,
        due: (target * secs) as u64,
        sent: n,
        late: if target > rps { n / 2 } else { 0 },
        // The synthetic servers are the limit: the late requests waited for a connection.
        late_no_connection: if target > rps { n / 2 } else { 0 },
        max_lag: Duration::from_micros((secs * 1e6 * (1.0 - rps / target).max(0.0)) as u64),
        ..Default::default()
    });
    let mut result = RunResult {
        started: epoch(),
        duration: p.duration,
        counts,
        histograms: shootout_model::Histograms {
            latency,
            latency_raw,
            connect,
            waiting,
            processing,
            ..Default::default()
        },
        series,
        samples,
        first_response: Some(FirstResponse {
            status: 200,
            server: Some("synthetic/1.0".into()),
            body_len: 7_348,
        }),
        generator: GeneratorStats {
            threads: 1,
            cpu_user: Duration::from_micros(n * 9),
            cpu_sys: Duration::from_micros(n * 14),
            busiest_thread: p.busiest,
        },
        schedule,
        interrupted: false,
        warnings: Vec::new(),
        targets: Vec::new(),
        journeys: Vec::new(),
        listen: None,
        until: None,
        warm_up: None,
        stream: None,
        in_flight_at_end: None,
    };
    result.warnings = shootout_analysis::load_warnings::derive(&result, None);
    let mut cpu = 0.0;
    let resources = (0..=(secs * 4.0) as u64)
        .map(|k| {
            if k > 0 {
                cpu += rps * 0.25 * p.server.cpu_us * (0.9 + 0.2 * rng.unit());
            }
            let mib = p.server.rss_mib + k as f64 * 0.05 + 0.3 * rng.unit();
            ResourceSample {
                at: Duration::from_millis(250 * k),
                cpu_user: Duration::from_micros((cpu * 0.7) as u64),
                cpu_sys: Duration::from_micros((cpu * 0.3) as u64),
                rss_bytes: (mib * 1024.0 * 1024.0) as u64,
                processes: 1,
                threads: 4,
                ctx_switches: k * 1_000,
                fds: 20,
            }
        })
        .collect();
    (result, resources)
}

/// A contender of a synthetic run.
struct Entrant<'a> {
    name: &'a str,
    command: &'a str,
    baseline: bool,
    status: ContenderStatus,
    detail: &'a str,
    version: Option<&'a str>,
    /// `None`: not measured.
    server: Option<Server>,
}

/// A synthetic run: its contenders, workloads (name and levels), repetitions and status.
struct Scenario<'a> {
    name: &'a str,
    plan_text: &'a str,
    machine: MachineFacts,
    entrants: Vec<Entrant<'a>>,
    workloads: Vec<(&'a str, Vec<LoadLevel>, u32)>,
    status: RunStatus,
    /// Add a noisy cell, a saturated generator and failures at the top level.
    trouble: bool,
    /// How long each step's measurement lasts.
    step: Duration,
}

/// Stores a scenario in an in-memory store, step by step as `shootout run` does, and reads
/// it back whole.
fn store(s: &Scenario) -> StoredRun {
    let mut store = Store::open_in_memory().unwrap();
    let run = store
        .begin_run(&NewRun {
            name: s.name,
            plan_text: s.plan_text,
            plan_resolved: "{}",
            machine: &s.machine,
            started: epoch(),
        })
        .unwrap();
    let ids: Vec<_> = s
        .entrants
        .iter()
        .map(|e| {
            store
                .add_contender(
                    run,
                    &ContenderRecord {
                        name: e.name,
                        command: e.command,
                        baseline: e.baseline,
                        status: e.status,
                        detail: e.detail,
                        version: e.version,
                        stdout_log: None,
                        stderr_log: None,
                    },
                )
                .unwrap()
        })
        .collect();
    let mut seed = 1u64;
    let mut clock = 10u64;
    for (wi, (workload, levels, reps)) in s.workloads.iter().enumerate() {
        let top = levels.len() - 1;
        for (li, level) in levels.iter().enumerate() {
            for rep in 1..=*reps {
                for (ci, e) in s.entrants.iter().enumerate() {
                    let Some(server) = e.server else { continue };
                    seed += 1;
                    let mut luck = 1.0 + 0.05 * ((seed * 7 % 11) as f64 / 10.0 - 0.5);
                    // One noisy cell: the second contender's second repetition at the
                    // second level of the first workload lost a quarter of its throughput.
                    if s.trouble && wi == 0 && li == 1 && rep == 2 && ci == 1 {
                        luck *= 0.75;
                    }
                    let (result, resources) = simulate(&StepPlan {
                        server,
                        level: *level,
                        seed: seed * 7_919,
                        luck,
                        fail_every: if s.trouble && ci == 1 && li == top {
                            400
                        } else {
                            0
                        },
                        busiest: if s.trouble && wi == 0 && ci == 0 && li == top && rep == 1 {
                            0.96
                        } else {
                            0.4
                        },
                        duration: s.step,
                    });
                    let started = epoch() + Duration::from_secs(clock);
                    clock += 4;
                    let mut result = result;
                    result.started = started + Duration::from_millis(5);
                    store
                        .record_step(&StepRecord {
                            run,
                            contender: ids[ci],
                            workload,
                            level: *level,
                            repetition: rep,
                            started,
                            ended: started + s.step + Duration::from_millis(10),
                            status: StepStatus::Complete,
                            result: &result,
                            resources: &resources,
                            wire: Default::default(),
                            other_load: None,
                            search: None,
                        })
                        .unwrap();
                }
            }
        }
    }
    store
        .finish_run(run, s.status, epoch() + Duration::from_secs(clock + 5))
        .unwrap();
    let mut run = store.load_run(run).unwrap().unwrap();
    // What `shootout report` does with a run it reads: judge each step's warnings.
    shootout_analysis::load_warnings::refresh_stored(&mut run);
    run
}

fn machine() -> MachineFacts {
    MachineFacts {
        cpu_model: "AMD EPYC 7B13 (synthetic)".into(),
        cores: 2,
        kernel: "6.1.0-18-amd64".into(),
        memory_bytes: 24 << 30,
        versions: BTreeMap::from([
            ("shootout".into(), "0.1.0".into()),
            ("python3".into(), "3.11.2".into()),
        ]),
    }
}

const PLAN: &str = r#"# Seeded synthetic data for the golden HTML report.
name = "static file vs WSGI vs a fast server (synthetic)"

[defaults]
duration = "3s"
repeat = 3

[[contender]]
name = "http.server"
command = "python3 -m http.server {port} --bind 127.0.0.1"
baseline = true

[[contender]]
name = "wsgiref"
command = "python3 wsgi_app.py {port} 'index.html'"

[[contender]]
name = "lighttpd"
command = "lighttpd -D -f lighttpd.conf"

[[workload]]
name = "GET /index.html"
path = "/index.html"
expect = { status = 200, length = 7348 }

[load]
concurrency = [1, 2, 4, 8]
"#;

const PYTHON: Server = Server {
    service_us: 380.0,
    parallel: 1.0,
    cpu_us: 390.0,
    rss_mib: 21.5,
};
const WSGI: Server = Server {
    service_us: 420.0,
    parallel: 1.05,
    cpu_us: 410.0,
    rss_mib: 19.8,
};

/// The golden scenario: two measured contenders and one that failed verification; a
/// closed-loop sweep (3 repetitions, one noisy cell, a saturated generator, failures at
/// the top level) and an open-loop sweep whose top rate is above both servers' capacity
/// (so corrected and raw latency part ways).
fn golden_scenario() -> Scenario<'static> {
    Scenario {
        name: "static file vs WSGI vs a fast server (synthetic)",
        plan_text: PLAN,
        machine: machine(),
        entrants: vec![
            Entrant {
                name: "http.server",
                command: "python3 -m http.server 40123 --bind 127.0.0.1",
                baseline: true,
                status: ContenderStatus::Measured,
                detail: "",
                version: Some("Python 3.11.2"),
                server: Some(PYTHON),
            },
            Entrant {
                name: "wsgiref",
                command: "python3 wsgi_app.py 40124 'index.html'",
                baseline: false,
                status: ContenderStatus::Measured,
                detail: "",
                version: None,
                server: Some(WSGI),
            },
            Entrant {
                name: "lighttpd",
                command: "lighttpd -D -f lighttpd.conf",
                baseline: false,
                status: ContenderStatus::VerificationFailed,
                detail: "workload 'GET /index.html' (sequential, 20 requests on 1 connection): 0 ok, 20 failed (20 status); status codes 404: 20\n  one answer: HTTP/1.1 404 Not Found | <?xml version=\"1.0\"?> <html><title>404</title>",
                version: None,
                server: None,
            },
        ],
        workloads: vec![
            (
                "GET /index.html",
                [1, 2, 4, 8]
                    .map(|connections| LoadLevel::Concurrency { connections })
                    .to_vec(),
                3,
            ),
            (
                "GET /index.html at fixed rates",
                [500.0, 1500.0, 3500.0]
                    .map(|rps| LoadLevel::Rate {
                        rps,
                        connections: 8,
                    })
                    .to_vec(),
                2,
            ),
        ],
        status: RunStatus::Complete,
        trouble: true,
        step: Duration::from_secs(3),
    }
}

/// A one-URL load in rate mode whose schedule slipped.
fn load_fixture(rate: bool) -> (LoadSpec, RunResult) {
    let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:8080/index.html").unwrap());
    spec.connections = 8;
    spec.requests = None;
    spec.duration = Some(Duration::from_secs(3));
    let level = if rate {
        spec.pace = Pace::Rate(3_500.0);
        LoadLevel::Rate {
            rps: 3_500.0,
            connections: 8,
        }
    } else {
        LoadLevel::Concurrency { connections: 8 }
    };
    let (result, _) = simulate(&StepPlan {
        server: PYTHON,
        level,
        seed: 42,
        luck: 1.0,
        fail_every: 300,
        busiest: 0.5,
        duration: Duration::from_secs(3),
    });
    (spec, result)
}

/// A closed-loop journey run (`--journey`): readers (home, read) and writers (login, a
/// step whose name needs escaping), each step with its own latency, 1 post in 50 failed.
fn journey_fixture() -> (LoadSpec, RunResult) {
    let (mut spec, mut result) = load_fixture(false);
    let file = shootout_model::journey::parse(
        "[[journey]]\nname = \"reader\"\n[[journey.step]]\nname = \"home\"\nget = \"/\"\n\
         [[journey.step]]\nname = \"read\"\nget = \"/r\"\n\
         [[journey]]\nname = \"writer\"\n[[journey.step]]\nname = \"login\"\npost = \"/login\"\n\
         [[journey.step]]\nname = \"<post & see>\"\npost = \"/p\"\n",
        "j.toml",
        &mut |_| Err("no files here".into()),
    )
    .expect("a valid journey file");
    spec.journey = Some(shootout_model::spec::Journeys {
        source: "j.toml".into(),
        seed: 7,
        file: std::sync::Arc::new(file),
    });
    let mut rng = Lcg(9);
    let mut kind = |label: &str, n: u64, base_us: f64, failed: u64| {
        let mut latency = latency_histogram();
        for _ in 0..n {
            latency
                .record((base_us * (1.0 + 3.0 * rng.unit().powi(4))) as u64)
                .unwrap();
        }
        shootout_model::TargetStats {
            label: label.into(),
            completed: n,
            ok: n - failed,
            failures: Default::default(),
            unsent: 0,
            latency,
            busy: None,
        }
    };
    result.targets = vec![
        kind("reader › home", 3000, 400.0, 0),
        kind("reader › read", 3000, 900.0, 0),
        kind("writer › login", 1000, 1500.0, 0),
        kind("writer › <post & see>", 1000, 4000.0, 20),
    ];
    result.journeys = vec![
        kind("reader", 3000, 1400.0, 0),
        kind("writer", 1000, 6000.0, 20),
    ];
    (spec, result)
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/report.html")
}

/// Every `<svg …>…</svg>` element of a page (they are never nested).
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("every <svg> is closed") + start + 6;
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

/// Checks one chart: well-formed XML, an `<svg>` root with a title, both axis titles, a
/// legend with text, and a drawn series (a line path or points). Returns the chart title.
fn check_chart(svg: &str) -> String {
    let doc = roxmltree::Document::parse(svg)
        .unwrap_or_else(|e| panic!("not well-formed XML ({e}):\n{svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let class_has = |n: &roxmltree::Node, c: &str| {
        n.attribute("class")
            .is_some_and(|v| v.split_whitespace().any(|w| w == c))
    };
    let text_of = |n: roxmltree::Node| -> String {
        n.descendants()
            .filter(|d| d.is_text())
            .map(|d| d.text().unwrap_or(""))
            .collect()
    };
    let title = root
        .children()
        .find(|n| n.has_tag_name("title"))
        .map(text_of)
        .expect("the chart has a <title>");
    for axis in ["x", "y"] {
        let t = root
            .descendants()
            .find(|n| class_has(n, "axis-title") && class_has(n, axis))
            .unwrap_or_else(|| panic!("{title}: no {axis} axis title"));
        let words = text_of(t);
        assert!(
            words.contains('(') || words.contains("percentile"),
            "{title}: the {axis} axis title names no unit: {words}"
        );
    }
    let legend = root
        .descendants()
        .find(|n| class_has(n, "legend"))
        .unwrap_or_else(|| panic!("{title}: no legend"));
    assert!(
        legend.descendants().any(|n| n.has_tag_name("text")),
        "{title}: empty legend"
    );
    let drawn = root.descendants().any(|n| {
        (n.has_tag_name("path") && class_has(&n, "line"))
            || (class_has(&n, "points") && n.children().any(|c| c.has_tag_name("circle")))
    });
    assert!(drawn, "{title}: no series drawn");
    // Tooltips: each point carries its value in a <title>.
    for c in root.descendants().filter(|n| n.has_tag_name("circle")) {
        if c.parent().is_some_and(|p| class_has(&p, "points")) {
            assert!(
                c.children().any(|t| t.has_tag_name("title")),
                "{title}: a point without a tooltip"
            );
        }
    }
    title
}

/// True when a word of `text` is how Rust prints a non-finite float.
fn has_nan_or_inf(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"))
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[test]
fn golden_report_of_a_seeded_run() {
    let html = render_run(&store(&golden_scenario()));
    let path = golden_path();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &html).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with UPDATE_GOLDEN=1 cargo test -p shootout-report --test html",
            path.display()
        )
    });
    if html != want {
        let got_path = std::env::temp_dir().join("shootout-report-golden-got.html");
        std::fs::write(&got_path, &html).unwrap();
        let line = html
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| html.lines().count().min(want.lines().count()));
        panic!(
            "the HTML report differs from {} from line {} on (got: {}). If the change is \
             deliberate, regenerate with UPDATE_GOLDEN=1 cargo test -p shootout-report --test html",
            path.display(),
            line + 1,
            got_path.display()
        );
    }
}

#[test]
fn the_golden_report_says_what_a_reader_needs() {
    let html = render_run(&store(&golden_scenario()));
    assert!(!has_nan_or_inf(&html));
    for needle in [
        "AMD EPYC 7B13 (synthetic)",
        "2 cores",
        "6.1.0-18-amd64",
        "24.0 GiB",
        "2023-11-14 22:13:20 UTC",
        "python3 3.11.2",
        "http.server: Python 3.11.2",
        "<strong>lighttpd failed verification</strong>, not measured.",
        "status codes 404: 20",
        "The load generator was saturated",
        "Noisy measurements",
        "The open-loop schedule was not kept",
        "Requests failed",
        "% of baseline",
        "server CPU µs/req",
        "peak RSS",
        "repetitions merged, raw dashed",
        "concurrency = [1, 2, 4, 8]",
        // The fullest view: what the text report has, too.
        "<th>p90 ms</th>",
        "<th>max ms</th>",
        "Percentage of the requests served within a certain time (ms), all repetitions merged,&nbsp;c=8",
        "<th>served</th>",
        "c=8: wsgiref is",
        "times slower than http.server",
        "req/s counts good answers only",
        "55 status",
    ] {
        assert!(html.contains(needle), "the report lacks {needle:?}");
    }
    // Warnings come before any result.
    let warnings = html.find("id=\"warnings\"").unwrap();
    let first_workload = html.find("<h2>Workload:").unwrap();
    assert!(warnings < first_workload);
    // The plan comes last.
    assert!(html.rfind("<h2>Plan</h2>").unwrap() > html.rfind("<h2>Workload:").unwrap());
}

#[test]
fn every_chart_is_well_formed_svg_with_axes_legend_and_series() {
    let html = render_run(&store(&golden_scenario()));
    let charts = svgs(&html);
    // Per workload: throughput, latency, spectrum and scatter, and a small spectrum per
    // level below the top (3 + 2); then per level (4 + 3) the timelines of throughput,
    // p99, server CPU and RSS, and of failures at the two top levels, the only ones where
    // something failed.
    assert_eq!(
        charts.len(),
        2 * 4 + 3 + 2 + 7 * 4 + 2,
        "charts in the run report"
    );
    let titles: Vec<String> = charts.iter().map(|s| check_chart(s)).collect();
    for t in [
        "Throughput by load level",
        "Latency by load level",
        "Latency percentiles at c=8",
        "Latency percentiles at rate=3500, repetitions merged, raw dashed",
        "Latency percentiles, c=1",
        "Latency percentiles, rate=1500",
        "Sampled requests over time at c=8",
        "Throughput per second, c=1",
        "Throughput per second, c=2",
        "Throughput per second, rate=500",
        "Failures per second, c=8",
        "Failures per second, rate=3500",
        "p99 latency per second, c=4",
        "Server CPU, c=8",
        "Server memory (RSS), rate=1500",
    ] {
        assert!(
            titles.iter().any(|x| x.starts_with(t)),
            "no chart titled {t:?} in {titles:?}"
        );
    }
    for rate in [false, true] {
        let (spec, result) = load_fixture(rate);
        let page = render_load(&spec, &result);
        let charts = svgs(&page);
        assert_eq!(charts.len(), 4, "charts in the load report");
        for c in &charts {
            check_chart(c);
        }
    }
}

#[test]
fn a_contender_named_like_a_script_stays_text() {
    const EVIL: &str = "<script>alert(1)</script>";
    let mut s = golden_scenario();
    s.name = "</title><script>alert(0)</script>";
    s.plan_text = "name = \"</pre><script>alert(2)</script>\"\n";
    s.machine.cpu_model = "<b onmouseover=alert(3)>cpu</b>".into();
    s.machine
        .versions
        .insert("<script>".into(), "</script>".into());
    s.entrants[0].name = EVIL;
    s.entrants[0].command = "\"><script>alert(4)</script>";
    s.entrants[0].version = Some("<script>alert(5)</script>");
    s.entrants[2].detail = "stderr: <img src=x onerror=alert(6)> </pre><script>alert(7)</script>";
    s.workloads[0].0 = "</table><script>alert(8)</script>";
    let run = store(&s);
    let html = render_run(&run);
    let lower = html.to_ascii_lowercase();
    assert!(
        !lower.contains("<script"),
        "a <script> tag reached the page"
    );
    assert!(!lower.contains("<img"), "an <img> tag reached the page");
    assert!(
        !lower.contains("<b onmouseover"),
        "a <b> tag reached the page"
    );
    assert!(html.contains(&escape(EVIL)), "the name is shown, escaped");
    // The charts stay well-formed with such names in their legends and tooltips.
    for svg in svgs(&html) {
        check_chart(svg);
    }

    let (mut spec, mut result) = load_fixture(false);
    spec.target.url = "http://x/<script>alert(9)</script>".into();
    spec.target.host_header = "<script>h</script>".into();
    spec.request.method = "<script>".into();
    result.first_response = Some(FirstResponse {
        status: 200,
        server: Some("<script>alert(10)</script>".into()),
        body_len: 0,
    });
    let page = render_load(&spec, &result).to_ascii_lowercase();
    assert!(
        !page.contains("<script"),
        "a <script> tag reached the load page"
    );
    for svg in svgs(&page) {
        roxmltree::Document::parse(svg).unwrap();
    }
}

#[test]
fn an_interrupted_run_says_so_first() {
    let mut s = golden_scenario();
    s.status = RunStatus::Interrupted;
    s.workloads.truncate(1);
    let html = render_run(&store(&s));
    let warnings = html.find("id=\"warnings\"").unwrap();
    let interrupted = html.find("The run was interrupted").unwrap();
    assert!(warnings < interrupted && interrupted < html.find("<h2>Workload:").unwrap());
}

#[test]
fn a_run_without_steps_renders_and_says_so() {
    let mut s = golden_scenario();
    s.status = RunStatus::Failed;
    for e in &mut s.entrants {
        e.server = None;
        e.status = ContenderStatus::NeverReady;
        e.detail = "exited with status 1\nAddress already in use";
    }
    let html = render_run(&store(&s));
    assert!(html.contains("No step was measured"));
    assert!(html.contains("The run failed"));
    assert!(html.contains("Address already in use"));
    assert!(svgs(&html).is_empty());
    assert!(!has_nan_or_inf(&html));
}

#[test]
fn a_clean_run_has_a_no_warnings_note() {
    let mut s = golden_scenario();
    s.trouble = false;
    s.entrants.truncate(1);
    s.workloads = vec![("GET /", vec![LoadLevel::Concurrency { connections: 1 }], 1)];
    let html = render_run(&store(&s));
    assert!(html.contains("No warnings"), "{html}");
    // One level: no sweep charts, but the spectrum, scatter and timelines; nothing failed,
    // so no failures timeline.
    assert_eq!(svgs(&html).len(), 6);
    assert!(!html.contains("Failures per second"));
}

/// The chart of `html` whose title starts with `title`.
fn chart<'a>(html: &'a str, title: &str) -> &'a str {
    svgs(html)
        .into_iter()
        .find(|s| s.contains(&format!("<title>{}", escape(title))))
        .unwrap_or_else(|| panic!("no chart titled {title:?}"))
}

/// The labelled x ticks of a chart: each label and its pixel column.
fn x_tick_labels(svg: &str) -> Vec<(String, f64)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let ticks = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("ticks"))
        .expect("a ticks group");
    ticks
        .children()
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("middle"))
        .map(|n| {
            (
                n.text().unwrap_or("").to_string(),
                n.attribute("x").unwrap().parse().unwrap(),
            )
        })
        .collect()
}

/// The text of the x axis title of a chart.
fn x_axis_title(svg: &str) -> String {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .find(|n| n.attribute("class") == Some("axis-title x"))
        .and_then(|n| n.text())
        .unwrap_or("")
        .to_string()
}

#[test]
fn concurrency_levels_sit_on_a_log2_axis_and_rates_stay_linear() {
    let html = render_run(&store(&golden_scenario()));
    for title in ["Throughput by load level", "Latency by load level"] {
        let svg = chart(&html, title);
        assert!(
            x_axis_title(svg).ends_with("log2 scale"),
            "{title}: {}",
            x_axis_title(svg)
        );
        let ticks = x_tick_labels(svg);
        let labels: Vec<&str> = ticks.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(labels, ["1", "2", "4", "8"], "{title}");
        // Each doubling takes the same length (a linear axis crowds 1, 2 and 4 left).
        let gaps: Vec<f64> = ticks.windows(2).map(|w| w[1].1 - w[0].1).collect();
        for g in &gaps {
            assert!((g - gaps[0]).abs() < 0.2, "{title}: uneven gaps {gaps:?}");
        }
    }
    // The second workload's rates (500, 1500, 3500: a sevenfold span) stay linear.
    let rates = svgs(&html)
        .into_iter()
        .filter(|s| s.contains("<title>Throughput by load level"))
        .nth(1)
        .expect("the rate sweep's throughput chart");
    assert_eq!(x_axis_title(rates), "target rate (req/s)");
    let ticks = x_tick_labels(rates);
    let (a, b, c) = (ticks[0].1, ticks[1].1, ticks[2].1);
    assert!(((b - a) / (c - b) - 0.5).abs() < 0.01, "{ticks:?}");
}

#[test]
fn latency_by_level_draws_p50_and_p99_with_the_mean_in_tooltips() {
    let html = render_run(&store(&golden_scenario()));
    let svg = chart(&html, "Latency by load level");
    let doc = roxmltree::Document::parse(svg).unwrap();
    let names: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("series"))
        .filter_map(|n| n.first_child().and_then(|t| t.text()))
        .collect();
    // Drawn in reverse legend order.
    assert_eq!(
        names,
        [
            "wsgiref p99",
            "wsgiref p50",
            "http.server p99",
            "http.server p50"
        ]
    );
    assert!(svg.contains("mean "), "the tooltips give the mean");
}

#[test]
fn the_percentile_line_ends_at_the_max_point() {
    let html = render_run(&store(&golden_scenario()));
    let svg = chart(&html, "Latency percentiles at c=8");
    let doc = roxmltree::Document::parse(svg).unwrap();
    let mut checked = 0;
    for series in doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("series"))
    {
        let d = series
            .descendants()
            .find(|n| n.attribute("class") == Some("line"))
            .and_then(|n| n.attribute("d"))
            .expect("a line");
        let last: Vec<f64> = d
            .rsplit(['M', 'L'])
            .next()
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        let max = series
            .descendants()
            .find(|n| {
                n.has_tag_name("circle")
                    && n.first_child()
                        .and_then(|t| t.text())
                        .is_some_and(|t| t.contains("max:"))
            })
            .expect("a max point");
        let at = |a: &str| -> f64 { max.attribute(a).unwrap().parse().unwrap() };
        assert_eq!(last, [at("cx"), at("cy")], "the line stops short of max");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

#[test]
fn timelines_have_a_row_per_level_and_a_failures_chart_only_where_something_failed() {
    let html = render_run(&store(&golden_scenario()));
    for level in [
        "c=1",
        "c=2",
        "c=4",
        "c=8",
        "rate=500",
        "rate=1500",
        "rate=3500",
    ] {
        assert!(
            html.contains(&format!("<h4 class=\"level\">{level}</h4>")),
            "no timeline row for {level}"
        );
        chart(&html, &format!("Throughput per second, {level}"));
        chart(&html, &format!("p99 latency per second, {level}"));
        let failures = html.contains(&format!("<title>Failures per second, {level}<"));
        assert_eq!(
            failures,
            level == "c=8" || level == "rate=3500",
            "failures timeline at {level}"
        );
    }
}

#[test]
fn every_level_gets_a_percentile_chart_not_only_the_highest() {
    let html = render_run(&store(&golden_scenario()));
    // The highest level large, with the scatter; every other one small, in level order.
    for (top, below) in [
        ("c=8", &["c=1", "c=2", "c=4"][..]),
        ("rate=3500", &["rate=500", "rate=1500"][..]),
    ] {
        chart(&html, &format!("Latency percentiles at {top}"));
        let mut at = 0;
        for level in below {
            let title = format!("<title>Latency percentiles, {level}</title>");
            let found = html[at..]
                .find(&title)
                .unwrap_or_else(|| panic!("no percentile chart at {level} (in order)"));
            at += found + title.len();
            let svg = chart(&html, &format!("Latency percentiles, {level}"));
            assert!(svg.contains("width=\"340\""), "a small chart at {level}");
            assert_eq!(
                svg.matches("class=\"series\"").count(),
                if level.starts_with("rate") { 4 } else { 2 },
                "every contender (corrected and raw at a rate) at {level}"
            );
        }
    }
    assert!(!html.contains("lower levels, evenly spaced"), "all drawn");
}

#[test]
fn median_and_merged_latency_figures_say_which_they_are() {
    let html = render_run(&store(&golden_scenario()));
    let note = "Latency columns (mean to max) are medians over the repetitions of each repetition&#39;s own figure";
    // Once under each workload's table, before the first chart of merged figures.
    assert_eq!(html.matches(note).count(), 2, "{note}");
    for workload in html.split("<h2>Workload:").skip(1) {
        let table = workload.find("<th>p99 ms</th>").expect("a workload table");
        let said = workload.find(note).expect("the note in every workload");
        let merged = workload.find("repetitions merged").expect("merged figures");
        assert!(table < said && said < merged);
    }
    // Every served-within table and percentile chart says it merges the repetitions;
    // the sweep's latency chart says it draws medians.
    let served = html
        .matches("served within a certain time (ms), all repetitions merged")
        .count();
    assert_eq!(served, 4 + 3);
    for svg in svgs(&html) {
        let title = check_chart(svg);
        if title.starts_with("Latency percentiles at") {
            assert!(title.contains("repetitions merged"), "{title}");
        }
        if title.starts_with("Latency by load level") {
            assert!(title.contains("medians"), "{title}");
        }
    }
}

#[test]
fn captions_keep_the_load_level_on_the_line_of_the_word_before_it() {
    let html = render_run(&store(&golden_scenario()));
    let mut captions = 0;
    for p in html.split("<p class=\"note\">").skip(1) {
        let text = &p[..p.find("</p>").unwrap()];
        if !text.starts_with("Percentage of the requests served") {
            continue;
        }
        captions += 1;
        let level = text.rsplit([' ', ';']).next().unwrap();
        assert!(
            level.starts_with("c=") || level.starts_with("rate="),
            "{text}"
        );
        assert!(
            text.ends_with(&format!(",&nbsp;{level}")),
            "a breakable space before the level: {text}"
        );
    }
    assert_eq!(captions, 7);
}

/// The golden run with wsgiref's steps replaced by copies of http.server's: two
/// contenders with exactly the same numbers, whose lines and dots coincide.
fn twin_run() -> StoredRun {
    let mut run = store(&golden_scenario());
    let (first, second) = (run.contenders[0].id, run.contenders[1].id);
    run.steps.retain(|s| s.contender != second);
    let copies: Vec<_> = run
        .steps
        .iter()
        .filter(|s| s.contender == first)
        .map(|s| {
            let mut c = s.clone();
            c.contender = second;
            c
        })
        .collect();
    run.steps.extend(copies);
    run
}

/// The `class="series"` groups of a chart in drawing order: name, the stroke width of
/// its line, and its marks' element name and size (`r`, or a square's half width).
fn drawn_series(svg: &str) -> Vec<(String, f64, &str, f64)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let num = |n: Option<roxmltree::Node>, a: &str| -> f64 {
        n.and_then(|n| n.attribute(a))
            .map_or(0.0, |v| v.parse().unwrap())
    };
    doc.descendants()
        .filter(|n| n.attribute("class") == Some("series"))
        .map(|g| {
            let name = g.first_child().and_then(|t| t.text()).unwrap().to_string();
            let line = g
                .descendants()
                .find(|n| n.attribute("class") == Some("line"));
            let mark = g
                .descendants()
                .find(|n| n.parent().and_then(|p| p.attribute("class")) == Some("points"));
            let tag = mark.map_or("", |m| m.tag_name().name());
            let size = num(mark, "r").max(num(mark, "width") / 2.0);
            (name, num(line, "stroke-width"), tag, size)
        })
        .collect()
}

#[test]
fn equal_latency_lines_both_stay_visible() {
    let html = render_run(&twin_run());
    let svg = chart(&html, "Latency by load level");
    // The two contenders' lines do coincide…
    let paths: Vec<&str> = svg
        .split("class=\"line\" d=\"")
        .skip(1)
        .map(|p| &p[..p.find('"').unwrap()])
        .collect();
    assert_eq!(paths.len(), 4);
    assert_eq!(paths[0], paths[2], "wsgiref p99 = http.server p99");
    assert_eq!(paths[1], paths[3], "wsgiref p50 = http.server p50");
    // …so the one drawn first (under) is wider, with larger marks of another shape: its
    // colour shows as a rim around the other's.
    let drawn = drawn_series(svg);
    let (under, over) = (&drawn[0], &drawn[2]);
    assert_eq!(
        (under.0.as_str(), over.0.as_str()),
        ("wsgiref p99", "http.server p99")
    );
    assert!(under.1 >= over.1 + 2.0, "line widths: {drawn:?}");
    assert!(under.3 >= over.3 + 1.0, "mark sizes: {drawn:?}");
    assert_ne!(under.2, over.2, "mark shapes: {drawn:?}");
    // The legend shows each contender's shape, so a reader can tell which is which.
    let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
    let legend = &legend[..legend.find("</g></g>").unwrap()];
    assert!(
        legend.contains("<rect ") && legend.contains("<circle "),
        "{legend}"
    );
}

#[test]
fn scatter_dots_of_one_contender_do_not_bury_the_others() {
    let html = render_run(&twin_run());
    let svg = chart(&html, "Sampled requests over time at c=8");
    // In drawing order, each contender's dots come both before and after some of the
    // other's: neither lies wholly on top.
    let drawn: Vec<String> = drawn_series(svg).into_iter().map(|d| d.0).collect();
    let last_of = |n: &str| drawn.iter().rposition(|d| d.starts_with(n)).unwrap();
    let first_of = |n: &str| drawn.iter().position(|d| d.starts_with(n)).unwrap();
    for (a, b) in [("http.server", "wsgiref"), ("wsgiref", "http.server")] {
        assert!(
            first_of(a) < last_of(b) && first_of(b) < last_of(a),
            "{a} and {b} do not take turns: {drawn:?}"
        );
    }
    // Translucent, and every sample still drawn once.
    assert!(svg.contains("fill-opacity=\"0.55\""));
    let golden = render_run(&store(&golden_scenario()));
    let golden = chart(&golden, "Sampled requests over time at c=8");
    let dots = |svg: &str, who: &str| svg.matches(&format!("<title>{who} · t=")).count();
    assert!(dots(golden, "http.server") > 100);
    assert_eq!(dots(svg, "http.server"), dots(golden, "http.server"));
    assert_eq!(dots(svg, "wsgiref"), dots(golden, "http.server"));
}

#[test]
fn p99_lines_carry_their_spread_over_repetitions_as_a_band() {
    let html = render_run(&store(&golden_scenario()));
    let svg = chart(&html, "Latency by load level");
    assert!(
        svg.contains("Band: each p99&#39;s min–max over repetitions."),
        "the chart says what its band is"
    );
    let doc = roxmltree::Document::parse(svg).unwrap();
    let mut bands = 0;
    for g in doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("series"))
    {
        let name = g.first_child().and_then(|t| t.text()).unwrap();
        let band = g
            .descendants()
            .find(|n| n.attribute("class") == Some("band"));
        assert_eq!(band.is_some(), name.ends_with("p99"), "{name}");
        if let Some(band) = band {
            // Three repetitions that differ: the band has height.
            let ys: Vec<f64> = band
                .attribute("d")
                .unwrap()
                .split(['M', 'L', 'Z'])
                .filter_map(|p| p.split_whitespace().nth(1))
                .map(|y| y.parse().unwrap())
                .collect();
            let (lo, hi) = ys
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(*y), b.max(*y)));
            assert!(hi - lo > 1.0, "{name}: a flat band {ys:?}");
            bands += 1;
        }
        // Each p99 point's tooltip gives the range it spans.
        if name.ends_with("p99") {
            assert!(g
                .descendants()
                .filter(|n| n.has_tag_name("title"))
                .skip(1)
                .all(|t| t.text().unwrap().contains("; range ")));
        }
    }
    assert_eq!(bands, 2);
}

/// The series names of a chart, in drawing order, and the legend's entries.
fn series_and_legend(svg: &str) -> (Vec<String>, Vec<String>) {
    let names = drawn_series(svg).into_iter().map(|d| d.0).collect();
    let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
    let legend = &legend[..legend.find("</g></g>").unwrap()];
    let entries = legend
        .split("</title>")
        .filter_map(|t| t.rsplit("<title>").next())
        .filter(|t| !t.contains('<'))
        .map(str::to_string)
        .collect();
    (names, entries)
}

#[test]
fn timelines_draw_every_repetition_each_with_its_stroke() {
    let html = render_run(&store(&golden_scenario()));
    assert!(html.contains("<h3>Timelines of each level, every repetition</h3>"));
    for (level, reps) in [("c=8", 3), ("rate=1500", 2)] {
        for title in [
            "Throughput per second",
            "p99 latency per second",
            "Server CPU",
        ] {
            let svg = chart(&html, &format!("{title}, {level}"));
            let (names, legend) = series_and_legend(svg);
            let mut want: Vec<String> = Vec::new();
            for who in ["wsgiref", "http.server"] {
                for n in (1..=reps).rev() {
                    want.push(format!("{who} #{n}"));
                }
            }
            assert_eq!(names, want, "{title}, {level}");
            // The legend names each contender once; the note says which stroke is which.
            assert_eq!(legend, ["http.server #1", "wsgiref #1"], "{title}, {level}");
            let dashes: Vec<&str> = svg
                .split("class=\"line\"")
                .skip(1)
                .map(|p| {
                    let p = &p[..p.find("/>").unwrap()];
                    p.split("stroke-dasharray=\"")
                        .nth(1)
                        .map_or("", |d| &d[..d.find('"').unwrap()])
                })
                .collect();
            let solid_dashed_dotted = ["", "7 4", "2 3"];
            let mut want: Vec<&str> = solid_dashed_dotted[..reps].to_vec();
            want.reverse();
            assert_eq!(dashes, [want.clone(), want].concat(), "{title}, {level}");
        }
    }
    assert!(html.contains("#1 solid, #2 dashed, #3 dotted"));
}

#[test]
fn many_repetitions_are_drawn_up_to_five_and_the_page_says_so() {
    let mut s = golden_scenario();
    s.workloads = vec![(
        "GET /index.html",
        vec![LoadLevel::Concurrency { connections: 2 }],
        7,
    )];
    let html = render_run(&store(&s));
    assert!(
        html.contains("the first 5 of 7 repetitions drawn"),
        "says how many"
    );
    let (names, _) = series_and_legend(chart(&html, "Throughput per second, c=2"));
    assert_eq!(names.len(), 2 * 5, "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("#6") || n.ends_with("#7")));
}

/// The values of a chart's points, from their tooltips (`…: 52.3 %`).
fn tooltip_values(svg: &str, unit: &str) -> Vec<f64> {
    svg.split("</title></circle>")
        .filter_map(|t| {
            t.rsplit(": ")
                .next()?
                .strip_suffix(unit)?
                .trim()
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn server_cpu_is_scaled_to_the_cpus_the_server_was_allowed() {
    // Unpinned on 2 cores: a server busy on one core is at 50%, never past 100%.
    let html = render_run(&store(&golden_scenario()));
    assert!(html.contains("100% = the 2 CPUs the server was allowed (the machine's cores)"));
    assert!(!html.contains("CPU-bound"));
    let svg = chart(&html, "Server CPU, c=8");
    assert!(svg.contains("CPU (% of 2 CPUs allowed)"));
    let cpu = tooltip_values(svg, "%");
    assert!(cpu.len() > 20, "{cpu:?}");
    assert!(cpu.iter().all(|v| (30.0..=70.0).contains(v)), "{cpu:?}");
    // Pinned to one CPU, both servers sat at its ceiling at every closed-loop level: the
    // page says they were CPU-bound instead of drawing flat lines at 100%.
    let mut run = store(&golden_scenario());
    run.run.plan_resolved = r#"{"server_cpus":[1],"load_cpus":[0]}"#.into();
    let html = render_run(&run);
    let (closed, rate) = html
        .split_once("<h2>Workload: GET /index.html at fixed rates")
        .unwrap();
    assert!(
        closed.contains("<strong>CPU-bound</strong>: http.server and wsgiref used at least 90% of the 1 CPU they were allowed at every level"),
        "{closed}"
    );
    assert!(
        !closed.contains("<title>Server CPU, c="),
        "no CPU chart when CPU-bound"
    );
    assert!(closed.contains("<title>Server memory (RSS), c=8"));
    // At fixed rates they were not (500 req/s is a fraction of a CPU): charted, on 1 CPU.
    assert!(!rate.contains("CPU-bound"));
    let svg = chart(rate, "Server CPU, rate=500");
    assert!(svg.contains("CPU (% of 1 CPU allowed)"));
    let cpu = tooltip_values(svg, "%");
    assert!(cpu.iter().all(|v| (10.0..=35.0).contains(v)), "{cpu:?}");
}

#[test]
fn one_second_steps_get_a_note_instead_of_single_dot_timelines() {
    let mut s = golden_scenario();
    s.step = Duration::from_secs(1);
    let html = render_run(&store(&s));
    assert!(html.contains("Steps of about a second give one point per timeline"));
    assert!(!html.contains("Throughput per second"));
    assert!(!html.contains("p99 latency per second"));
    // The server's resources are sampled more often than once a second: still drawn.
    chart(&html, "Server CPU, c=8");
    for svg in svgs(&html) {
        check_chart(svg);
    }
}

#[test]
fn the_load_page_has_no_until_row_and_says_which_latency_it_scatters() {
    let (spec, result) = load_fixture(true);
    let html = render_load(&spec, &result);
    assert!(!html.contains("<dt>Until</dt>"));
    assert!(html.contains("timeout 30.0 s per request"), "{html}");
    assert!(chart(&html, "Sampled requests over time").contains("127.0.0.1:8080 (corrected)"));
    let (spec, mut result) = load_fixture(false);
    let html = render_load(&spec, &result);
    assert!(chart(&html, "Sampled requests over time").contains("(raw, closed loop)"));
    assert!(chart(&html, "Requests per second").contains("<title>failed</title>"));
    // Nothing failed: no failed line.
    for s in &mut result.series {
        s.failed = 0;
    }
    let html = render_load(&spec, &result);
    assert!(!chart(&html, "Requests per second").contains("<title>failed</title>"));
    // A one-second run: a note, not single dots.
    result.series.truncate(1);
    result.duration = Duration::from_secs(1);
    let html = render_load(&spec, &result);
    assert!(html.contains("Steps of about a second give one point per timeline"));
    assert_eq!(svgs(&html).len(), 2, "spectrum and scatter only");
}

#[test]
fn the_load_page_shows_corrected_and_raw_latency_in_rate_mode() {
    let (spec, result) = load_fixture(true);
    let html = render_load(&spec, &result);
    assert!(!has_nan_or_inf(&html));
    for needle in [
        "GET http://127.0.0.1:8080/index.html",
        "open loop at 3500 req/s",
        "<td class=\"l\">corrected</td>",
        "<td class=\"l\">raw</td>",
        "corrected (solid) vs raw (dashed)",
        "the schedule of 3500 req/s was not kept",
        "requests failed",
        "Failures</dt><dd>26 status</dd>",
        "synthetic/1.0",
    ] {
        assert!(html.contains(needle), "the load page lacks {needle:?}");
    }
    let (spec, mut result) = load_fixture(false);
    result.interrupted = true;
    let html = render_load(&spec, &result);
    assert!(html.contains("Interrupted"));
    assert!(!html.contains("<td class=\"l\">raw</td>"));
}

/// A journey run's page: a table of its steps and one of its journeys (counts, rates,
/// percentiles), a well-formed percentile chart per step and one per journey, every name
/// escaped, and the load said in users and journeys.
#[test]
fn the_load_page_of_a_journey_run_has_a_table_and_a_chart_per_step() {
    let (spec, result) = journey_fixture();
    let html = render_load(&spec, &result);
    assert!(!has_nan_or_inf(&html));
    for needle in [
        "<h2>Requests by step</h2>",
        "<h2>Journeys (ms: first step due to last answer, think times included)</h2>",
        "<td class=\"l\">reader › home</td><td>3000</td><td>3000</td><td>0</td>",
        "<td class=\"l\">writer › &lt;post &amp; see&gt;</td><td>1000</td><td>980</td><td>20</td>",
        "<td class=\"l\">writer</td><td>1000</td><td>980</td><td>20</td>",
        "journeys of j.toml: 8 users on 1 thread, closed loop",
    ] {
        assert!(html.contains(needle), "the journey page lacks {needle:?}");
    }
    assert!(!html.contains("<post & see>"), "a step's name is escaped");
    for title in [
        "Step reader › home: latency percentiles",
        "Step reader › read: latency percentiles",
        "Step writer › login: latency percentiles",
        "Step writer › <post & see>: latency percentiles",
        "Journey reader: duration percentiles",
        "Journey writer: duration percentiles",
    ] {
        check_chart(chart(&html, title));
    }
    // Without journeys, no step table and no step chart.
    let (spec, result) = load_fixture(false);
    let html = render_load(&spec, &result);
    assert!(!html.contains("Requests by step") && !html.contains("Step "));
}

// ---------------------------------------------------------------------------------------
// The browser
// ---------------------------------------------------------------------------------------

/// The first of Chromium's usual names found on the PATH.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Renders `page` with headless Chromium into `png` (a `width`×`height` viewport);
/// returns its exit success and stderr (console messages included).
fn screenshot(browser: &Path, page: &Path, png: &Path, width: u32, height: u32) -> (bool, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let err = reader.join().unwrap();
    (status.is_some_and(|s| s.success()), err)
}

/// Width, height, distinct colours and the share of pixels that are not the page's
/// background, from an 8-bit RGB or RGBA PNG (the kinds Chromium writes).
fn png_stats(bytes: &[u8]) -> (u32, u32, usize, f64) {
    let (width, height, pixels) = png_pixels(bytes);
    let colours: std::collections::BTreeSet<[u8; 3]> = pixels.iter().copied().collect();
    let mut background = BTreeMap::new();
    for px in &pixels {
        *background.entry(*px).or_insert(0u64) += 1;
    }
    let total = u64::from(width) * u64::from(height);
    let most = background.values().copied().max().unwrap_or(0);
    (
        width,
        height,
        colours.len(),
        1.0 - most as f64 / total.max(1) as f64,
    )
}

/// Width, height and the RGB pixels, row by row, of an 8-bit RGB or RGBA PNG.
fn png_pixels(bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap());
                height = u32::from_be_bytes(data[4..8].try_into().unwrap());
                assert_eq!(data[8], 8, "bit depth");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("PNG colour type {other}"),
                };
                assert_eq!(data[12], 0, "interlaced PNG");
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = width as usize * channels;
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width as usize * height as usize);
    for row in raw.chunks(stride + 1).take(height as usize) {
        let (filter, line) = (row[0], &row[1..]);
        let mut cur = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("PNG filter {other}"),
            };
            cur[i] = line[i].wrapping_add(predicted);
        }
        pixels.extend(cur.chunks(channels).map(|px| [px[0], px[1], px[2]]));
        prev = cur;
    }
    (width, height, pixels)
}

#[test]
fn chromium_renders_the_golden_report() {
    let Some(browser) = chromium() else {
        eprintln!(
            "note: chromium not found: the browser check of the HTML report is skipped \
             (scripts/test installs it with apt-get when run as root)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let html = render_run(&store(&golden_scenario()));
    std::fs::write(&page, &html).unwrap();
    let png = dir.path().join("report.png");
    let (ok, stderr) = screenshot(&browser, &page, &png, 1280, 2400);
    assert!(ok, "chromium failed:\n{stderr}");
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    let (w, h, colours, ink) = png_stats(&bytes);
    assert_eq!((w, h), (1280, 2400));
    // A blank page is one colour; the report has the palette, text and grey frames.
    assert!(colours >= 50, "only {colours} colours: a blank page?");
    assert!(
        ink > 0.05,
        "only {:.1}% of the pixels are not background",
        ink * 100.0
    );
    // The same check sees a blank page as blank (so it would catch a report that
    // renders to nothing).
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><title>blank</title>").unwrap();
    let blank_png = dir.path().join("blank.png");
    let (ok, err) = screenshot(&browser, &blank, &blank_png, 1280, 2400);
    assert!(ok, "chromium failed on a blank page:\n{err}");
    let (_, _, colours, ink) = png_stats(&std::fs::read(&blank_png).unwrap());
    assert!(
        colours < 5 && ink < 0.001,
        "a blank page read as {colours} colours, {ink} ink"
    );
    // The log2 axis as a browser draws it: the throughput sweep alone, at its own size.
    // A column through one of the first contender's dots holds several pixels of its
    // exact colour (the 2 px line holds fewer); 1, 2, 4 and 8 connections must come out
    // evenly spaced (a linear axis puts them at gaps of 1 : 2 : 4).
    let sweep = dir.path().join("sweep.html");
    std::fs::write(
        &sweep,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0;background:#fff\">{}</body></html>",
            chart(&html, "Throughput by load level")
        ),
    )
    .unwrap();
    let sweep_png = dir.path().join("sweep.png");
    let (ok, err) = screenshot(&browser, &sweep, &sweep_png, 700, 450);
    assert!(ok, "chromium failed on the sweep chart:\n{err}");
    let (w, h, pixels) = png_pixels(&std::fs::read(&sweep_png).unwrap());
    let blue = [0x00, 0x72, 0xB2];
    // Below the legend (its dot is blue too) and above the tick labels.
    let rows = 60..h as usize - 50;
    let dotted: Vec<usize> = (0..w as usize)
        .filter(|x| {
            rows.clone()
                .filter(|y| pixels[y * w as usize + x] == blue)
                .count()
                >= 3
        })
        .collect();
    let mut dots: Vec<Vec<usize>> = Vec::new();
    for x in dotted {
        match dots.last_mut() {
            Some(d) if x - d[d.len() - 1] <= 2 => d.push(x),
            _ => dots.push(vec![x]),
        }
    }
    let centres: Vec<f64> = dots
        .iter()
        .map(|d| d.iter().sum::<usize>() as f64 / d.len() as f64)
        .collect();
    assert_eq!(
        centres.len(),
        4,
        "dots of http.server at columns {centres:?}"
    );
    let gaps: Vec<f64> = centres.windows(2).map(|c| c[1] - c[0]).collect();
    for g in &gaps {
        assert!(
            (g - gaps[0]).abs() <= 3.0,
            "1, 2, 4, 8 not evenly spaced: gaps {gaps:?}"
        );
    }
    // The page has no script, so any console line (Chromium logs them as
    // `INFO:CONSOLE:1] "…"`, errors as `Uncaught …`) is a fault.
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
}

#[test]
fn chromium_shows_both_of_two_equal_latency_lines() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found: the overlap check of the HTML report is skipped");
        return;
    };
    // Two contenders with the same numbers: the second's orange must still show, as a
    // rim around the first's blue, in the plot (below the legend, which has orange too).
    let html = render_run(&twin_run());
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("latency.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0;background:#fff\">{}</body></html>",
            chart(&html, "Latency by load level")
        ),
    )
    .unwrap();
    let png = dir.path().join("latency.png");
    let (ok, err) = screenshot(&browser, &page, &png, 700, 450);
    assert!(ok, "chromium failed on the latency chart:\n{err}");
    let (w, h, pixels) = png_pixels(&std::fs::read(&png).unwrap());
    // Pixels of about that colour (edges are blended; the bands are much paler).
    let count = |rgb: [u8; 3]| {
        (80..h as usize - 50)
            .flat_map(|y| (0..w as usize).map(move |x| (x, y)))
            .filter(|(x, y)| {
                let p = pixels[y * w as usize + x];
                (0..3).all(|i| p[i].abs_diff(rgb[i]) <= 40)
            })
            .count()
    };
    let (blue, orange) = (count([0x00, 0x72, 0xB2]), count([0xE6, 0x9F, 0x00]));
    assert!(blue > 200, "the top line is drawn: {blue} blue pixels");
    assert!(
        orange > blue / 5,
        "the line underneath is hidden: {orange} orange pixels, {blue} blue"
    );
}

/// What the browser measured of a page laid out `width` px wide (see [`at_width`]).
#[derive(Debug, Default)]
struct Layout {
    /// The page's own width: `document.documentElement.scrollWidth` (px).
    scroll: f64,
    /// The viewport's width: `innerWidth` (px).
    inner: f64,
    /// Charts on the page.
    charts: usize,
    /// Charts not shown whole: hidden, tiny, or reaching past the viewport's sides.
    unseen: usize,
    /// Texts of a chart that reach past its frame (a title or label cut off).
    clipped: usize,
    /// How far the contenders table reaches past its box (px; 0 when it does not scroll).
    contenders_overflow: f64,
    /// The rendered height (px) of a capacity chart's title (in `.charts.one`); -1
    /// without one.
    one_title: f64,
    /// The same of the first chart of a grid of charts; -1 without one.
    grid_title: f64,
}

/// The script that measures the page in the frame `f` (the page itself has no script):
/// it writes a `LAYOUT key=value … END` line into the outer page.
const LAYOUT_PROBE: &str = "<script>document.getElementById('f').addEventListener('load',()=>{\
const w=document.getElementById('f').contentWindow,doc=w.document,d=doc.documentElement;\
const cs=[...doc.querySelectorAll('svg.chart')];\
const unseen=cs.filter(s=>{const r=s.getBoundingClientRect(),st=w.getComputedStyle(s);\
return !(r.width>100&&r.height>100&&r.left>=0&&r.right<=w.innerWidth+0.5&&st.display!=='none'&&st.visibility==='visible')}).length;\
let clipped=0;for(const s of cs){const vb=s.viewBox.baseVal;for(const t of s.querySelectorAll('text')){\
const b=t.getBBox();if(t.closest('[transform]'))continue;if(b.x<-0.5||b.x+b.width>vb.width+0.5)clipped++;}}\
const t=doc.querySelector('#contenders');const over=t?t.scrollWidth-t.clientWidth:-1;\
const th=q=>{const e=doc.querySelector(q+' svg.chart .chart-title');return e?e.getBoundingClientRect().height.toFixed(2):-1};\
const p=document.createElement('pre');p.textContent='LAYOUT scroll='+d.scrollWidth+' inner='+w.innerWidth+' charts='+cs.length+' unseen='+unseen+' clipped='+clipped+' contenders='+over+' one='+th('.charts.one')+' grid='+th('.charts:not(.one)')+' END';\
document.body.append(p);});</script>";

/// Lays `page` out in a frame `width` px wide (Chromium's headless window is at least
/// 500 px wide, so the width is the frame's) and measures it with [`LAYOUT_PROBE`].
fn at_width(browser: &Path, page: &str, width: u32) -> Layout {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path().join("outer.html");
    let srcdoc = page.replace('&', "&amp;").replace('"', "&quot;");
    std::fs::write(
        &outer,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe id=\"f\" style=\"border:0;display:block\" width=\"{width}\" height=\"1200\" srcdoc=\"{srcdoc}\"></iframe>{LAYOUT_PROBE}</body></html>"
        ),
    )
    .unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1400,1300",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", outer.display()))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("chromium starts");
    let dom = String::from_utf8_lossy(&out.stdout);
    let line = dom
        .split("LAYOUT ")
        .nth(2)
        .and_then(|l| l.split(" END").next())
        .unwrap_or_else(|| panic!("no layout line in Chromium's DOM:\n{dom}"));
    let mut m = Layout::default();
    for kv in line.split(' ') {
        let (k, v) = kv.split_once('=').expect("key=value");
        let v: f64 = v.parse().expect("a number");
        match k {
            "scroll" => m.scroll = v,
            "inner" => m.inner = v,
            "charts" => m.charts = v as usize,
            "unseen" => m.unseen = v as usize,
            "clipped" => m.clipped = v as usize,
            "contenders" => m.contenders_overflow = v,
            "one" => m.one_title = v,
            "grid" => m.grid_title = v,
            _ => {}
        }
    }
    m
}

/// A contender command as long as real ones get (a shell wrapper, a deep path, flags).
const LONG_COMMAND: &str = "sh -c 'exec /opt/servers/very/long/path/to/the/server/binary/gunicorn --workers=4 --bind=127.0.0.1:40124 --access-logfile=/var/tmp/shootout-access-logs-of-this-contender-for-the-run.log app:application'";

#[test]
fn the_report_fits_a_phone_and_a_desktop_with_every_chart_shown() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found: the layout check of the HTML report is skipped");
        return;
    };
    let mut scenario = golden_scenario();
    scenario.entrants[1].command = LONG_COMMAND;
    let html = render_run(&store(&scenario));
    assert!(
        html.contains("access-logfile"),
        "the long command is on the page"
    );
    let want = svgs(&html).len();
    for width in [390, 1280] {
        let m = at_width(&browser, &html, width);
        assert_eq!(m.inner, f64::from(width), "{m:?}");
        assert!(
            m.scroll <= m.inner,
            "at {width} px the page scrolls sideways: {m:?}"
        );
        assert_eq!(m.charts, want, "at {width} px: {m:?}");
        assert_eq!(
            m.unseen, 0,
            "at {width} px some charts are not shown whole: {m:?}"
        );
        assert_eq!(
            m.clipped, 0,
            "at {width} px some chart texts are cut off: {m:?}"
        );
        assert_eq!(
            m.contenders_overflow, 0.0,
            "at {width} px the contenders table scrolls sideways: {m:?}"
        );
    }
}

/// A journey run's page in a real browser, on a phone and a desktop: no sideways scroll (the
/// page's title, a URL, once widened a load page to 499 px on a 390 px phone),
/// every chart (one per step and per journey among them) shown whole.
#[test]
fn the_journey_load_page_fits_a_phone_and_a_desktop_with_every_chart_shown() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found: the layout check of the journey page is skipped");
        return;
    };
    let (spec, result) = journey_fixture();
    let html = render_load(&spec, &result);
    let want = svgs(&html).len();
    assert!(want >= 6, "a chart per step and per journey");
    for width in [390, 1280] {
        let m = at_width(&browser, &html, width);
        assert!(m.scroll <= m.inner, "at {width} px: {m:?}");
        assert_eq!(m.charts, want, "at {width} px: {m:?}");
        assert_eq!(m.unseen, 0, "at {width} px: {m:?}");
        assert_eq!(m.clipped, 0, "at {width} px: {m:?}");
    }
}

/// The golden run with a capacity search of each measured contender on a third workload,
/// stored as `shootout run` stores one (each step's verdict and how it ended, the search
/// in the resolved plan): a 50 ms SLO, steps from 1,000 to 4,000 req/s, their latency
/// the synthetic sweep's.
fn golden_with_a_search() -> StoredRun {
    use shootout_model::find_max::{SearchStep, StepEnd, Verdict};
    use shootout_model::resolved::{ResolvedFindMax, ResolvedPlan, ResolvedWorkload};
    let mut run = store(&golden_scenario());
    let plan = ResolvedPlan {
        workloads: vec![ResolvedWorkload {
            name: "GET /index.html, capacity".into(),
            find_max: Some(ResolvedFindMax {
                slo: vec!["p99<50ms".into(), "errors<0.1%".into()],
                from: 1000.0,
                to: 64000.0,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    };
    run.run.plan_resolved = plan.to_json();
    let mut id = run.steps.iter().map(|s| s.id.0).max().unwrap_or(0);
    let template: Vec<_> = run
        .steps
        .iter()
        .filter(|s| matches!(s.level, LoadLevel::Rate { .. }) && s.repetition == 1)
        .cloned()
        .collect();
    for t in &template {
        let capacity = if t.contender.0 % 2 == 0 {
            2600.0
        } else {
            3400.0
        };
        for rps in [1000.0, 2000.0, 4000.0, 3000.0, 3500.0, 3250.0, 2750.0] {
            id += 1;
            let mut s = t.clone();
            s.id = shootout_model::stored::StepId(id);
            s.workload = "GET /index.html, capacity".into();
            s.level = LoadLevel::Rate {
                rps,
                connections: 8,
            };
            let met = rps <= capacity;
            s.search = Some(SearchStep {
                verdict: Some(if met { Verdict::Met } else { Verdict::Broke(0) }),
                ended: Some(if met {
                    StepEnd::DecidedMet
                } else {
                    StepEnd::DecidedBroke
                }),
            });
            run.steps.push(s);
        }
    }
    run
}

/// The capacity chart stands alone in its row, sized as a grid's charts are: in a real
/// browser on a desktop its text is as large as theirs (within the grid's own spread of
/// widths), not stretched to the page's width (it was twice as large), and on a phone it
/// is shown whole.
#[test]
fn the_capacity_chart_s_text_is_the_size_of_the_other_charts_text() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found: the capacity chart's size check is skipped");
        return;
    };
    let html = render_run(&golden_with_a_search());
    assert!(
        html.contains("<div class=\"charts one\">"),
        "a capacity chart"
    );
    let m = at_width(&browser, &html, 1280);
    assert!(m.grid_title > 0.0 && m.one_title > 0.0, "{m:?}");
    assert!(
        m.one_title <= 1.3 * m.grid_title,
        "the capacity chart's title is {:.1} px high, the grid's {:.1}: {m:?}",
        m.one_title,
        m.grid_title
    );
    let m = at_width(&browser, &html, 390);
    assert_eq!((m.unseen, m.clipped), (0, 0), "{m:?}");
    assert!(m.scroll <= m.inner, "{m:?}");
}

/// Renders the latest run of a real store to HTML and a PNG — how `docs/report.png` was
/// made: `SHOOTOUT_DB=shootout.db SHOOTOUT_OUT=/tmp/report cargo test -p shootout-report
/// --test html -- --ignored render_a_store`, which writes `/tmp/report.html` and
/// `/tmp/report.png` (SHOOTOUT_HEIGHT sets the viewport's height, 2400 px by default).
#[test]
#[ignore = "needs SHOOTOUT_DB (a store) and SHOOTOUT_OUT (a path without extension)"]
fn render_a_store() {
    let db = std::env::var_os("SHOOTOUT_DB").expect("SHOOTOUT_DB names a store");
    let out =
        PathBuf::from(std::env::var_os("SHOOTOUT_OUT").expect("SHOOTOUT_OUT names an output"));
    let store = Store::open_existing(Path::new(&db)).unwrap();
    let id = match std::env::var("SHOOTOUT_RUN") {
        Ok(n) => shootout_store::RunId(n.parse().unwrap()),
        Err(_) => store.latest_run().unwrap().expect("a run").id,
    };
    let mut run = store.load_run(id).unwrap().unwrap();
    shootout_analysis::load_warnings::refresh_stored(&mut run);
    let html = out.with_extension("html");
    std::fs::write(&html, render_run(&run)).unwrap();
    let height = std::env::var("SHOOTOUT_HEIGHT").map_or(2400, |h| h.parse().unwrap());
    if let Some(browser) = chromium() {
        let (ok, err) = screenshot(&browser, &html, &out.with_extension("png"), 1280, height);
        assert!(ok, "{err}");
    }
}

/// Writes the synthetic pages (the golden run, and one-URL loads in rate and closed-loop
/// mode) to the directory `SHOOTOUT_OUT`, to look at them in a browser:
/// `SHOOTOUT_OUT=/tmp/pages cargo test -p shootout-report --test html -- --ignored sample_pages`.
#[test]
#[ignore = "needs SHOOTOUT_OUT (a directory)"]
fn sample_pages() {
    let dir =
        PathBuf::from(std::env::var_os("SHOOTOUT_OUT").expect("SHOOTOUT_OUT names a directory"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run.html"), render_run(&store(&golden_scenario()))).unwrap();
    for (rate, name) in [(true, "load-rate.html"), (false, "load-closed.html")] {
        let (spec, result) = load_fixture(rate);
        std::fs::write(dir.join(name), render_load(&spec, &result)).unwrap();
    }
    let (spec, result) = journey_fixture();
    std::fs::write(dir.join("load-journeys.html"), render_load(&spec, &result)).unwrap();
}
