//! Deterministic `RunResult`s for the tests and snapshots: a closed-loop run with failures
//! of every class and several status codes, a rate-mode run whose schedule slipped (so
//! corrected and raw latency differ), a run interrupted by Ctrl-C, a run in which not
//! one request completed, and a Poisson-paced run that warms up and then drifts.
//!
//! A small recorder ([`Builder`]) fills histograms, counts, series and samples the way the
//! engine's recorder does (all times in µs), so the fixtures are internally consistent:
//! `completed = ok + failed`, `processing = total − connect`, and so on.

use shootout_model::{
    latency_histogram, Arrival, Ended, FailureKind, FirstResponse, GeneratorStats, LoadSpec, Pace,
    RunResult, Sample, ScheduleStats, SecondStats, Target,
};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The fixtures' start: Tue Nov 14 22:13:20 2023 UTC.
pub fn started() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000)
}

/// A tiny deterministic generator (a 64-bit LCG; top bits only).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Records requests like the engine's recorder does.
struct Builder {
    r: RunResult,
    seconds: Vec<(u64, u64, hdrhistogram::Histogram<u64>)>,
}

impl Builder {
    fn new(duration: Duration) -> Self {
        Builder {
            r: RunResult::empty(started(), duration),
            seconds: Vec::new(),
        }
    }

    fn second(&mut self, end_us: u64) -> &mut (u64, u64, hdrhistogram::Histogram<u64>) {
        let s = (end_us / 1_000_000) as usize;
        while self.seconds.len() <= s {
            self.seconds.push((0, 0, latency_histogram()));
        }
        &mut self.seconds[s]
    }

    /// A request answered in full. `total_us` runs from the start (due time in rate mode),
    /// `raw_us` from the send; `connect_us` is 0 on a reused connection.
    #[allow(clippy::too_many_arguments)]
    fn answered(
        &mut self,
        start_us: u64,
        connect_us: u64,
        waiting_us: u64,
        total_us: u64,
        raw_us: u64,
        status: u16,
        failure: Option<FailureKind>,
        sample: bool,
    ) {
        let r = &mut self.r;
        r.histograms.latency.record(total_us).unwrap();
        r.histograms.latency_raw.record(raw_us).unwrap();
        r.histograms.connect.record(connect_us).unwrap();
        r.histograms.waiting.record(waiting_us).unwrap();
        r.histograms
            .processing
            .record(total_us - connect_us)
            .unwrap();
        *r.counts.status.entry(status).or_default() += 1;
        self.second(start_us + total_us).2.record(total_us).unwrap();
        self.end(
            start_us, connect_us, waiting_us, total_us, status, failure, sample,
        );
    }

    /// A request that got no complete answer.
    fn failed(&mut self, start_us: u64, total_us: u64, kind: FailureKind, sample: bool) {
        self.end(start_us, 0, 0, total_us, 0, Some(kind), sample);
    }

    #[allow(clippy::too_many_arguments)]
    fn end(
        &mut self,
        start_us: u64,
        connect_us: u64,
        waiting_us: u64,
        total_us: u64,
        status: u16,
        failure: Option<FailureKind>,
        sample: bool,
    ) {
        let c = &mut self.r.counts;
        c.completed += 1;
        match failure {
            None => c.ok += 1,
            Some(k) => c.failures[k] += 1,
        }
        let sec = self.second(start_us + total_us);
        sec.0 += 1;
        sec.1 += u64::from(failure.is_some());
        if sample {
            self.r.samples.push(Sample {
                start_us,
                connect_us: connect_us as u32,
                waiting_us: waiting_us as u32,
                total_us: total_us as u32,
                status,
                failure,
            });
        }
    }

    fn finish(mut self) -> RunResult {
        self.r.series = self
            .seconds
            .iter()
            .enumerate()
            .map(|(i, (completed, failed, h))| SecondStats {
                second: i as u32,
                completed: *completed,
                failed: *failed,
                mean_us: h.mean(),
                p50_us: h.value_at_quantile(0.5),
                p99_us: h.value_at_quantile(0.99),
                max_us: if h.is_empty() { 0 } else { h.max() },
                histogram: Vec::new(),
            })
            .collect();
        self.r.samples.sort_by_key(|s| s.start_us);
        self.r.warnings = shootout_analysis::load_warnings::derive(&self.r, None);
        self.r
    }
}

/// Closed loop, 10 connections on 2 threads, 1000 requests to nginx: failures of every class
/// (2 connect, 3 timeout, 4 reset, 1 malformed, 10 status, 2 body), statuses 200/404/503,
/// 3 length mismatches, two slow outliers.
pub fn closed_with_failures() -> (LoadSpec, RunResult) {
    let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:8080/hello").unwrap());
    spec.connections = 10;
    spec.threads = 2;
    spec.requests = Some(1000);
    spec.timeout = Duration::from_secs(1);

    let mut b = Builder::new(Duration::from_millis(1234));
    let mut rng = Lcg(7);
    for i in 0..1000u64 {
        let start = i * 1234;
        let sample = i % 100 == 0 || i == 5;
        let failure = match i {
            5 | 6 => Some(FailureKind::Connect),
            610..=612 => Some(FailureKind::Timeout),
            620..=623 => Some(FailureKind::Reset),
            630 => Some(FailureKind::Malformed),
            _ => None,
        };
        match failure {
            Some(FailureKind::Connect) => b.failed(start, 120, FailureKind::Connect, sample),
            Some(FailureKind::Timeout) => b.failed(start, 1_000_000, FailureKind::Timeout, sample),
            Some(k) => b.failed(start, 800, k, sample),
            None => {
                let connect = match i {
                    0..=9 => 180 + i * 7,
                    400 | 800 => 210,
                    _ => 0,
                };
                let mut total = connect + 300 + rng.below(900);
                if i % 97 == 0 {
                    total += 12_000;
                }
                if i == 500 {
                    total = 45_000;
                }
                let waiting = total - connect - 40;
                let (status, failure) = match i {
                    100 | 300 | 501 | 700 | 900 => (404, Some(FailureKind::Status)),
                    150 | 350 | 550 | 750 | 950 => (503, Some(FailureKind::Status)),
                    222 | 444 => (200, Some(FailureKind::Body)),
                    _ => (200, None),
                };
                b.answered(
                    start, connect, waiting, total, total, status, failure, sample,
                );
            }
        }
    }
    let mut r = b.finish();
    // The ten first connections and the two re-opened, as their requests were charged.
    for us in (0..10).map(|i| 180 + i * 7).chain([210, 210]) {
        r.histograms.setup.record(us).unwrap();
    }
    let c = &mut r.counts;
    c.length_mismatch = 3;
    c.connections_opened = 12;
    c.connections_failed = 2;
    c.reconnects = 2;
    c.bytes_received = 990 * 245 + 3 * 10;
    c.body_bytes = 990 * 12 + 3 * 10;
    c.bytes_sent = 1000 * 78;
    r.first_response = Some(FirstResponse {
        status: 200,
        server: Some("nginx/1.22.1".into()),
        body_len: 12,
    });
    r.generator = GeneratorStats {
        threads: 2,
        cpu_user: Duration::from_millis(150),
        cpu_sys: Duration::from_millis(100),
        busiest_thread: 0.45,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// Open loop at 500 req/s for 2 s over https without keep-alive, POSTing 64 bytes: the
/// generator fell behind around request 400 (up to 12 ms late), so corrected latency exceeds
/// raw there; 15 requests were in flight at the end, 5 sent and 10 due and not sent.
pub fn rate_mode() -> (LoadSpec, RunResult) {
    let mut spec = LoadSpec::new(Target::parse("https://example.test:8443/api/items?x=1").unwrap());
    spec.connections = 4;
    spec.threads = 1;
    spec.requests = None;
    spec.duration = Some(Duration::from_secs(2));
    spec.pace = Pace::Rate(500.0);
    spec.timeout = Duration::from_secs(5);
    spec.request.method = "POST".into();
    spec.request.body = vec![b'x'; 64];
    spec.request.keepalive = false;

    let mut b = Builder::new(Duration::from_secs(2));
    let mut rng = Lcg(11);
    for i in 0..985u64 {
        let due = i * 2000;
        let lag = if (400..460).contains(&i) {
            (460 - i) * 200
        } else {
            0
        };
        let connect = 150 + rng.below(100);
        let raw = connect + 800 + rng.below(400);
        let total = lag + raw;
        let waiting = raw - connect - 100;
        b.answered(due, connect, waiting, total, raw, 200, None, i % 50 == 0);
    }
    let mut r = b.finish();
    // A connection per request (no keep-alive): the setups are the connects charged, and
    // the five requests in flight at the end had theirs too.
    let _ = r.histograms.setup.add(&r.histograms.connect);
    r.histograms.setup.record_n(200, 5).unwrap();
    // In flight at the end: the five sent, 21 to 29 ms old, and the ten due in the last
    // 20 ms that no connection had taken yet.
    let mut ages = shootout_model::latency_histogram();
    for i in 0..5u64 {
        ages.record(21_000 + 2_000 * i).unwrap();
    }
    for i in 0..10u64 {
        ages.record(1_000 + 2_000 * i).unwrap();
    }
    r.in_flight_at_end = Some(ages);
    let c = &mut r.counts;
    c.aborted = 5;
    c.connections_opened = 990;
    c.bytes_received = 985 * (150 + 512);
    c.body_bytes = 985 * 512;
    c.bytes_sent = 990 * (120 + 64);
    r.first_response = Some(FirstResponse {
        status: 200,
        server: None,
        body_len: 512,
    });
    r.schedule = Some(ScheduleStats {
        target_rps: 500.0,
        achieved_rps: 495.0,
        due: 1000,
        sent: 990,
        late: 60,
        late_no_connection: 0,
        max_lag: Duration::from_millis(12),
        lag_p50_us: 40,
        lag_p99_us: 3_100,
        lag_p999_us: 9_800,
        connections: 6,
        max_connections: 65_000,
        capped: false,
        spun: Duration::from_millis(48),
        arrival: Default::default(),
        overtaken: 0,
    });
    r.generator = GeneratorStats {
        threads: 1,
        cpu_user: Duration::from_millis(1100),
        cpu_sys: Duration::from_millis(760),
        busiest_thread: 0.93,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// Open loop at 100 req/s for 20.5 s with Poisson arrivals (seed 7) on one kept-alive
/// connection: the first 4 s answer 2.5 times slower (a warm-up), then latency grows 3% a
/// second (a drift). The due times are the fixture's own exponential draws, and the
/// arrival check is the Anderson–Darling test of their gaps.
pub fn poisson_drifting() -> (LoadSpec, RunResult) {
    let mut spec = LoadSpec::new(Target::parse("http://localhost:8080/").unwrap());
    spec.connections = 1;
    spec.threads = 1;
    spec.requests = None;
    spec.duration = Some(Duration::from_millis(20_500));
    spec.pace = Pace::Rate(100.0);
    spec.arrival = Arrival::Poisson { seed: 7 };

    let mut b = Builder::new(spec.duration.unwrap());
    let mut rng = Lcg(7);
    let (mut due, mut gaps) = (0.0f64, Vec::new());
    loop {
        // An exponential gap of mean 10 ms, in units of the mean.
        let gap = -(1.0 - rng.below(1 << 30) as f64 / (1u64 << 30) as f64).ln();
        if due + gap * 10_000.0 >= 20_500_000.0 {
            break;
        }
        due += gap * 10_000.0;
        gaps.push(gap);
        let second = (due / 1e6) as i32;
        let scale = if second < 4 {
            2.5
        } else {
            1.03f64.powi(second)
        };
        let raw = ((1_500 + rng.below(1_000)) as f64 * scale) as u64;
        b.answered(due as u64, 0, raw - 20, raw, raw, 200, None, false);
    }
    let mut r = b.finish();
    let n = r.counts.completed;
    r.counts.connections_opened = 1;
    r.histograms.setup.record(180).unwrap();
    r.counts.bytes_received = n * 140;
    r.counts.body_bytes = n * 12;
    r.counts.bytes_sent = n * 40;
    r.first_response = Some(FirstResponse {
        status: 200,
        server: None,
        body_len: 12,
    });
    r.schedule = Some(ScheduleStats {
        target_rps: 100.0,
        achieved_rps: n as f64 / 20.5,
        due: n,
        sent: n,
        late: 0,
        late_no_connection: 0,
        max_lag: Duration::from_micros(300),
        lag_p50_us: 20,
        lag_p99_us: 90,
        lag_p999_us: 250,
        connections: 1,
        max_connections: 65_000,
        capped: false,
        spun: Duration::from_millis(150),
        arrival: shootout_analysis::certify::arrival_check(spec.arrival, &gaps[1..]),
        overtaken: 0,
    });
    r.generator = GeneratorStats {
        threads: 1,
        cpu_user: Duration::from_millis(200),
        cpu_sys: Duration::from_millis(150),
        busiest_thread: 0.02,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// Closed loop for 30 s, stopped by Ctrl-C after 3.2 s: 12000 requests, all fine, 50 in flight.
pub fn interrupted() -> (LoadSpec, RunResult) {
    let mut spec = LoadSpec::new(Target::parse("http://localhost:3000").unwrap());
    spec.connections = 50;
    spec.threads = 2;
    spec.requests = None;
    spec.duration = Some(Duration::from_secs(30));

    let mut b = Builder::new(Duration::from_millis(3200));
    let mut rng = Lcg(3);
    for i in 0..12_000u64 {
        let start = i * 266;
        let connect = if i < 50 { 90 + rng.below(60) } else { 0 };
        let total = connect + 5_000 + rng.below(10_000);
        let waiting = total - connect - 25;
        b.answered(
            start,
            connect,
            waiting,
            total,
            total,
            200,
            None,
            i % 1000 == 0,
        );
    }
    let mut r = b.finish();
    // The fifty connections, each charged to its first request.
    let charged: Vec<(u64, u64)> = r
        .histograms
        .connect
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .filter(|(us, _)| *us > 0)
        .collect();
    for (us, n) in charged {
        r.histograms.setup.record_n(us, n).unwrap();
    }
    r.interrupted = true;
    let c = &mut r.counts;
    c.aborted = 50;
    c.connections_opened = 50;
    c.bytes_received = 12_000 * 140;
    c.body_bytes = 12_000 * 13;
    c.bytes_sent = 12_000 * 60;
    r.first_response = Some(FirstResponse {
        status: 200,
        server: Some("uvicorn".into()),
        body_len: 13,
    });
    r.generator = GeneratorStats {
        threads: 2,
        cpu_user: Duration::from_millis(600),
        cpu_sys: Duration::from_millis(420),
        busiest_thread: 0.21,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// Nothing listens: every connection attempt failed and not one request completed.
pub fn nothing_completed() -> (LoadSpec, RunResult) {
    let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:9/").unwrap());
    spec.connections = 4;
    spec.requests = Some(100);
    let mut r = Builder::new(Duration::from_millis(12)).finish();
    r.counts.connections_failed = 4;
    r.generator = GeneratorStats {
        threads: 1,
        cpu_user: Duration::from_micros(900),
        cpu_sys: Duration::from_micros(1500),
        busiest_thread: 0.2,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// Closed loop, 100 connections × 16 pipelined, 3000 requests from a list of three
/// entries in random order: 1500 reads by id, 1000 raw reads, 500 writes (10 of them 503).
pub fn list_pipelined() -> (LoadSpec, RunResult) {
    use shootout_model::requests::{ListEntry, Order, RequestList};
    use shootout_model::TargetStats;
    let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:8080/").unwrap());
    spec.connections = 100;
    spec.threads = 2;
    spec.requests = Some(3000);
    spec.pipeline = 16;
    let entry = |method: &str, path: &str, line| ListEntry {
        method: method.into(),
        path: path.into(),
        headers: Vec::new(),
        body: Default::default(),
        line,
    };
    spec.list = Some(RequestList {
        source: "requests.txt".into(),
        entries: vec![
            entry("GET", "/paste/{rand:1-10000}", 1),
            entry("GET", "/paste/{seq}/raw", 3),
            entry("POST", "/paste", 6),
        ],
        order: Order::Random,
        seed: 42,
    });
    let mut b = Builder::new(Duration::from_millis(1500));
    let mut rng = Lcg(5);
    let mut targets: Vec<(
        u64,
        u64,
        hdrhistogram::Histogram<u64>,
        shootout_model::FailureCounts,
    )> = (0..3)
        .map(|_| {
            (
                0,
                0,
                shootout_model::latency_histogram(),
                Default::default(),
            )
        })
        .collect();
    for i in 0..3000u64 {
        let kind = match i % 6 {
            0..=2 => 0,
            3 | 4 => 1,
            _ => 2,
        };
        let total = 300 + rng.below(700) + kind as u64 * 2_000;
        let failed = kind == 2 && i % 300 == 5;
        let (status, failure) = if failed {
            (503, Some(FailureKind::Status))
        } else {
            (200, None)
        };
        b.answered(
            i * 500,
            0,
            total - 50,
            total,
            total,
            status,
            failure,
            i % 100 == 0,
        );
        let t = &mut targets[kind];
        t.0 += 1;
        t.1 += u64::from(!failed);
        t.2.record(total).unwrap();
        if let Some(f) = failure {
            t.3[f] += 1;
        }
    }
    let mut r = b.finish();
    let c = &mut r.counts;
    c.connections_opened = 100;
    c.bytes_received = 3000 * 200;
    c.body_bytes = 3000 * 80;
    c.bytes_sent = 3000 * 90;
    r.first_response = Some(FirstResponse {
        status: 200,
        server: Some("nginx".into()),
        body_len: 80,
    });
    r.generator = GeneratorStats {
        threads: 2,
        cpu_user: Duration::from_millis(15),
        cpu_sys: Duration::from_millis(40),
        busiest_thread: 0.4,
    };
    let labels = spec
        .list
        .as_ref()
        .unwrap()
        .entries
        .iter()
        .map(|e| e.label());
    r.targets = labels
        .zip(targets)
        .map(|(label, (completed, ok, latency, failures))| TargetStats {
            label,
            completed,
            ok,
            failures,
            unsent: 0,
            latency,
            busy: None,
        })
        .collect();
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// WebSocket: 400 messages from a list on 4 connections, every reply an echo but for
/// four that were not.
pub fn websocket_messages() -> (LoadSpec, RunResult) {
    use shootout_model::messages::MessageList;
    use shootout_model::requests::Order;
    let mut spec = LoadSpec::new(Target::parse("ws://127.0.0.1:8765/echo").unwrap());
    spec.protocol = shootout_model::Protocol::WebSocket;
    spec.connections = 4;
    spec.threads = 1;
    spec.requests = Some(400);
    spec.expect.echo = true;
    spec.ws_messages = Some(
        MessageList::parse(
            "chat.txt",
            "{\"id\": {seq}}\nhello {rand:1-6}\n",
            Order::Seq,
            9,
        )
        .expect("a valid list"),
    );
    let mut b = Builder::new(Duration::from_millis(200));
    let mut rng = Lcg(11);
    for i in 0..400u64 {
        let total = 80 + rng.below(120);
        let failure = (i % 100 == 7).then_some(FailureKind::Body);
        b.answered(
            i * 500,
            0,
            total - 10,
            total,
            total,
            101,
            failure,
            i % 50 == 0,
        );
    }
    let mut r = b.finish();
    let c = &mut r.counts;
    c.connections_opened = 4;
    c.bytes_received = 4 * 129 + 400 * 14;
    c.body_bytes = 400 * 12;
    c.bytes_sent = 4 * 180 + 400 * 18;
    r.generator = GeneratorStats {
        threads: 1,
        cpu_user: Duration::from_millis(8),
        cpu_sys: Duration::from_millis(20),
        busiest_thread: 0.3,
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, Some(4));
    (spec, r)
}

/// `shootout load URL` with no bound: one request (as ab), answered in 0.462 ms.
pub fn one_request() -> (LoadSpec, RunResult) {
    let spec = LoadSpec::new(Target::parse("http://127.0.0.1:8000/").unwrap());
    let mut b = Builder::new(Duration::from_micros(470));
    b.answered(0, 120, 300, 462, 462, 200, None, true);
    let mut r = b.finish();
    r.counts.connections_opened = 1;
    r.counts.bytes_received = 180;
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// The journey file of [`journeys`]: readers and writers, 3 to 1.
pub const JOURNEY_FILE: &str = r#"
[[journey]]
name = "reader"
weight = 3
[[journey.step]]
name = "home"
get = "/"
[[journey.step]]
name = "read"
get = "/paste/{rand:1-100}"
[[journey]]
name = "writer"
weight = 1
[[journey.step]]
name = "login"
post = "/login"
[[journey.step]]
name = "post"
post = "/paste"
expect = { status = 302 }
"#;

/// `--journey j.toml`, closed loop: 8 users ran 400 journeys (300 readers, 100 writers),
/// 800 steps; 4 posts were answered 503, which ended their writers' journeys as failed.
/// Steps take 0.3 to 1.3 ms (a post 2 ms more); a journey lasts from its first step's
/// due time to its last answer.
pub fn journeys() -> (LoadSpec, RunResult) {
    use shootout_model::journey::parse;
    use shootout_model::spec::Journeys;
    use shootout_model::TargetStats;
    let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:8000/").unwrap());
    spec.connections = 8;
    spec.threads = 2;
    spec.requests = Some(400);
    let file = parse(JOURNEY_FILE, "j.toml", &mut |_| Err("no files here".into()))
        .expect("a valid journey file");
    spec.journey = Some(Journeys {
        source: "j.toml".into(),
        seed: 7,
        file: std::sync::Arc::new(file),
    });
    let labels = [
        "reader › home",
        "reader › read",
        "writer › login",
        "writer › post",
    ];
    let mut steps: Vec<TargetStats> = labels
        .iter()
        .map(|l| TargetStats {
            latency: shootout_model::latency_histogram(),
            ..TargetStats::new(*l)
        })
        .collect();
    let mut journeys: Vec<TargetStats> = ["reader", "writer"]
        .iter()
        .map(|l| TargetStats {
            latency: shootout_model::latency_histogram(),
            busy: Some(shootout_model::latency_histogram()),
            ..TargetStats::new(*l)
        })
        .collect();
    // Each journey's users think 5 ms between its two steps.
    const THINK: u64 = 5_000;
    let mut b = Builder::new(Duration::from_millis(800));
    let mut rng = Lcg(11);
    let mut start = 0u64;
    for i in 0..400u64 {
        let writer = i % 4 == 3;
        let first = if writer { 2 } else { 0 };
        let mut at = start;
        let mut ok = true;
        for (step, s) in steps.iter_mut().enumerate().skip(first).take(2) {
            let total = 300 + rng.below(1000) + if step == 3 { 2_000 } else { 0 };
            let failed = step == 3 && i % 100 == 3;
            let (status, failure) = match (step, failed) {
                (3, true) => (503, Some(FailureKind::Status)),
                (3, false) => (302, None),
                _ => (200, None),
            };
            b.answered(
                at,
                0,
                total - 40,
                total,
                total,
                status,
                failure,
                i % 10 == 0,
            );
            s.count(failure.map_or(Ended::Ok, Ended::Failed));
            s.latency.record(total).unwrap();
            ok &= !failed;
            at += total;
            if step == first && !failed {
                at += THINK;
            }
        }
        let j = &mut journeys[usize::from(writer)];
        j.count(if ok {
            Ended::Ok
        } else {
            Ended::Failed(FailureKind::Status)
        });
        j.latency.record(at - start).unwrap();
        let busy = j.busy.as_mut().expect("a journey's busy time");
        busy.record(at - start - THINK).unwrap();
        start += 16_000 * u64::from(i % 8 == 7);
    }
    let mut r = b.finish();
    let c = &mut r.counts;
    c.connections_opened = 8;
    c.bytes_received = 800 * 150;
    c.body_bytes = 800 * 40;
    c.bytes_sent = 800 * 80;
    r.first_response = Some(FirstResponse {
        status: 200,
        server: None,
        body_len: 40,
    });
    r.generator = GeneratorStats {
        threads: 2,
        cpu_user: Duration::from_millis(20),
        cpu_sys: Duration::from_millis(30),
        busiest_thread: 0.3,
    };
    r.targets = steps;
    r.journeys = journeys;
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// [`journeys`] in the open model: `--rate 500 -n 400 --journey-connection new`, each
/// journey a new user on a connection of its own; the schedule started 400 journeys of 400 due, 3 of them more
/// than 1 ms late, with at most 9 users at once.
pub fn journeys_rate() -> (LoadSpec, RunResult) {
    let (mut spec, mut r) = journeys();
    spec.pace = Pace::Rate(500.0);
    spec.journey_connection = shootout_model::JourneyConnection::New;
    spec.max_connections = Some(65_000);
    r.counts.connections_opened = 400;
    r.schedule = Some(ScheduleStats {
        target_rps: 500.0,
        achieved_rps: 500.0,
        due: 400,
        sent: 400,
        late: 3,
        late_no_connection: 0,
        max_lag: Duration::from_micros(1_800),
        lag_p50_us: 30,
        lag_p99_us: 900,
        lag_p999_us: 1_800,
        connections: 9,
        max_connections: 65_000,
        capped: false,
        spun: Duration::from_millis(12),
        arrival: Default::default(),
        overtaken: 0,
    });
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    (spec, r)
}

/// Every fixture with its name (used in snapshot names).
pub fn all() -> Vec<(&'static str, LoadSpec, RunResult)> {
    let named = |name, (spec, result)| (name, spec, result);
    vec![
        named("closed", closed_with_failures()),
        named("rate", rate_mode()),
        named("interrupted", interrupted()),
        named("nothing", nothing_completed()),
        named("list", list_pipelined()),
        named("websocket", websocket_messages()),
        named("poisson", poisson_drifting()),
        named("journeys", journeys()),
        named("journeys_rate", journeys_rate()),
        named("until", converged()),
        named("server_stream", server_stream()),
        named("client_stream", client_stream()),
        named("bidi_rate", bidi_rate()),
    ]
}

/// A gRPC server-streaming run: 40 calls ended well, 10 of them cancelled at the client's
/// limit, 400 replies, their first replies and the gaps between them timed.
pub fn server_stream() -> (LoadSpec, RunResult) {
    let (spec, mut r) = closed_with_failures();
    let mut s = shootout_model::StreamStats::new("server");
    s.calls_ok = 40;
    s.cancelled = 10;
    s.replies = 400;
    for us in [900, 1_100, 1_400, 2_500] {
        s.first_reply.record_n(us, 10).unwrap();
    }
    s.gaps.record_n(0, 200).unwrap();
    s.gaps.record_n(150, 160).unwrap();
    r.stream = Some(Box::new(s));
    (spec, r)
}

/// A gRPC client-streaming run: 40 calls of 3 messages each.
pub fn client_stream() -> (LoadSpec, RunResult) {
    let (spec, mut r) = closed_with_failures();
    let mut s = shootout_model::StreamStats::new("client");
    s.calls_ok = 40;
    s.messages_per_call = 3;
    r.stream = Some(Box::new(s));
    (spec, r)
}

/// A gRPC bidirectional run in rate mode: the schedule paced 197 calls of 5 messages,
/// and the counts count messages; one call ended with its last message unanswered.
pub fn bidi_rate() -> (LoadSpec, RunResult) {
    let (mut spec, mut r) = rate_mode();
    spec.target = Target::parse("http://127.0.0.1:50051/helloworld.Greeter/Chat").unwrap();
    spec.expect.grpc = Some(shootout_model::GrpcReply {
        schema: std::sync::Arc::from(&[][..]),
        method: "helloworld.Greeter.Chat".into(),
        max_message: 4 << 20,
        json: None,
        stream: shootout_model::GrpcStream {
            messages: Some(5),
            duration: None,
            interval: Some(Duration::from_millis(10)),
        },
        compress: false,
    });
    let mut s = shootout_model::StreamStats::new("bidi");
    s.calls_ok = 196;
    s.messages_per_call = 5;
    s.sent = 985;
    s.replies = 984;
    s.unanswered = 1;
    s.first_reply.record_n(1_200, 197).unwrap();
    s.gaps.record_n(10_000, 787).unwrap();
    r.stream = Some(Box::new(s));
    // As `shootout load` words a gRPC run's warnings: its schedule paced calls.
    shootout_analysis::load_warnings::in_calls(&mut r.warnings);
    (spec, r)
}

/// A closed load with `--until p99±5%,rps±2%` that converged after 6.4 s: its p99 held, its
/// rate held; and the same with a condition never read (the readings' nulls). Its
/// warm-up was automatic, level after 10.2 s.
pub fn converged() -> (LoadSpec, RunResult) {
    use shootout_model::until::{Reading, UntilOutcome};
    let (spec, mut r) = closed_with_failures();
    let conditions = shootout_model::until::parse_all(&["p99±5%,rps±2%,p50±1%".into()]).unwrap();
    r.until = Some(UntilOutcome {
        conditions,
        converged: Some(Duration::from_millis(6_400)),
        last: vec![
            Some(Reading {
                value: 2.5,
                lo: 2.45,
                hi: 2.6,
                open_above: false,
            }),
            Some(Reading {
                value: 1_000.0,
                lo: 990.0,
                hi: 1_010.0,
                open_above: false,
            }),
            None,
        ],
    });
    r.warm_up = Some(shootout_model::WarmedUp {
        took: Duration::from_millis(10_200),
        level: true,
    });
    (spec, r)
}
