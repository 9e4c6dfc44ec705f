//! shootout's load engine: turns a [`LoadSpec`] into a merged [`RunResult`].
//!
//! [`run`] resolves the target and checks it answers a connect (and a TLS handshake), then
//! starts one worker thread per share of the connections. Each worker drives its
//! connections from its own event loop and records into its own recorder; nothing is
//! shared on the hot path. When all workers end, their recorders are merged (histograms
//! added, series joined per second) and the warnings derived. The engine knows nothing of
//! terminals or storage: callers watch progress through [`Live`] and stop a run through
//! an `AtomicBool`.

pub mod h2;
mod linger;
mod pacer;
mod parse;
mod recorder;
mod request;
mod search;
pub mod sys;
mod tls;
mod transport;
mod worker;

pub use pacer::{Pacer, Pacing};
pub use parse::{ParseError, Progress, ResponseParser};
pub use worker::wait_until;

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use shootout_model::spec::threads_for;
use shootout_model::{
    Counts, FailureCounts, FirstResponse, GeneratorStats, Histograms, LoadSpec, Pace, Protocol,
    RunResult, Sample, ScheduleStats, Scheme, SecondStats, SpecError, TargetStats,
};
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use worker::{Assignment, Endpoint, Shared};

/// Why a run could not be done. Each message names the problem and what to do.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The spec breaks a rule of [`LoadSpec::validate`].
    #[error(transparent)]
    Invalid(#[from] SpecError),
    /// A header cannot be sent.
    #[error(transparent)]
    Header(#[from] request::HeaderError),
    /// The host name did not resolve.
    #[error("cannot resolve '{host}': {source} (check the host name, or use 127.0.0.1)")]
    Resolve {
        /// The host.
        host: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not one address accepted a connection.
    #[error("cannot connect to {target}: {source} (is the server running and listening there?)")]
    Connect {
        /// Address or socket path tried last.
        target: String,
        /// Why.
        source: std::io::Error,
    },
    /// TLS could not be set up.
    #[error("TLS with {target} failed: {reason}")]
    Tls {
        /// The target.
        target: String,
        /// Why, and what to do.
        reason: String,
    },
    /// Too many connections for the open-file limit.
    #[error("{connections} connections need about {needed} open files but the limit is {limit}: raise it (ulimit -n {needed}) or lower -c")]
    FdLimit {
        /// Connections asked for.
        connections: usize,
        /// Files needed.
        needed: u64,
        /// The limit in force.
        limit: u64,
    },
    /// `--http2` was asked of a server that does not speak HTTP/2 there.
    #[error("{target} does not speak HTTP/2: {reason}")]
    NotHttp2 {
        /// The address or URL tried.
        target: String,
        /// What it did instead.
        reason: h2::Refusal,
    },
    /// A worker thread could not be started or failed.
    #[error("worker thread failed: {0}")]
    Worker(std::io::Error),
    /// A local address to connect from cannot be used.
    #[error("cannot connect from the local address {addr}: {source} (give addresses of this machine; any of 127.0.0.0/8 works on loopback)")]
    Bind {
        /// The local address.
        addr: std::net::IpAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The local addresses are of another family than every address of the target.
    #[error("cannot connect from {addr} to {host}: {host} has no {family} address (give local addresses of the target's family)")]
    BindFamily {
        /// The first local address.
        addr: std::net::IpAddr,
        /// The target's host.
        host: String,
        /// `IPv4` or `IPv6`: the local addresses' family.
        family: &'static str,
    },
}

/// A sample of what went over the wire, for `-v 2` (ab's verbosity): the first request's
/// head as sent and the first answers' heads as they arrived, copied from the first
/// worker's first connection only (over HTTP/2 as text: `HTTP/2 200`, then the fields),
/// so the run pays a copy per sampled answer and one test per answer, nothing else. Asked
/// for with [`Control::sample_heads`]; read with [`Control::heads`] once the run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Heads {
    /// The first request's line and header lines, up to and including the blank line.
    pub request: Option<Vec<u8>>,
    /// The first answers' heads, in the order they came (interim 1xx heads left out).
    pub responses: Vec<Vec<u8>>,
}

/// The head of a rendered request: its bytes up to and including the blank line (all of
/// them when there is none).
fn head_of(bytes: &[u8]) -> &[u8] {
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
    fn publish(&self, rec: &recorder::Recorder, detail: bool, wait: bool) {
        self.completed
            .store(rec.counts.completed, Ordering::Relaxed);
        self.failed.store(rec.counts.failed(), Ordering::Relaxed);
        if let (true, Some(slot)) = (detail, &self.detail) {
            rec.publish(slot, wait);
        }
    }

    /// True when a view watches the details.
    fn watched(&self) -> bool {
        self.detail.is_some()
    }
}

/// How a caller watches and stops a run.
#[derive(Debug, Default)]
pub struct Control {
    /// Set to end the run early; requests in flight are counted as aborted.
    pub stop: Arc<AtomicBool>,
    live: Vec<Live>,
    started: std::sync::OnceLock<Instant>,
    /// Start the measured run's clock at this wall-clock time, once every worker is set up
    /// (and, in rate mode, connected): shards of one load on several machines start
    /// together. Past or unset: at once. The caller bounds how far ahead it is.
    pub start_at: Option<SystemTime>,
    /// Keep the heads of this many answers (and the first request's) as a sample: see
    /// [`Heads`]. 0, the default: none.
    pub sample_heads: usize,
    heads: std::sync::Mutex<Heads>,
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
            start_at: None,
            sample_heads: 0,
            heads: std::sync::Mutex::default(),
        }
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
        }
        d.status = (0u16..).zip(status).filter(|(_, n)| *n > 0).collect();
        Some(d)
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

/// Runs the load described by `spec`. `control` must have been made for at least
/// `spec.threads` workers.
pub fn run(spec: &LoadSpec, control: &Control) -> Result<RunResult, EngineError> {
    // The model's one check ([`LoadSpec::validate`]): what it guarantees (bounded
    // durations, rates, connections and threads; request fields that cannot inject) the
    // workers rely on. A library caller may hand over a spec no builder made.
    spec.validate()?;
    let requests = request::Requests::prepare(spec)?;
    let connections = spec.open_connections();
    let threads = threads_for(spec.threads, connections).min(control.live.len());
    let needed = connections as u64 + 64;
    let limit = sys::raise_fd_limit(needed);
    if limit < needed {
        return Err(EngineError::FdLimit {
            connections,
            needed,
            limit,
        });
    }
    let h2 = match spec.protocol {
        Protocol::Http2 => Some(h2::request::prepare(&spec.target, &spec.request)?),
        Protocol::Http1 => None,
    };
    let alpn: &[u8] = if h2.is_some() { b"h2" } else { b"http/1.1" };
    let tls = match spec.target.scheme {
        Scheme::Https => Some(tls::client_config(&spec.target, alpn)?),
        Scheme::Http => None,
    };
    let endpoint = preflight(spec, tls.as_ref())?;
    let shares = split(connections, threads, spec.requests);
    let shared = Shared {
        endpoint,
        tls,
        requests,
        pipeline: spec.pipeline,
        workers: shares.len(),
        keepalive: spec.request.keepalive,
        expect: spec.expect.clone(),
        timeout: spec.timeout,
        connect_timeout: spec.connect_timeout,
        record: spec.record,
        duration: spec.duration,
        offset: spec.offset,
        start_at: control.start_at,
        barrier: std::sync::Barrier::new(shares.len()),
        started: &control.started,
        bind: spec.bind.clone(),
        heads: control.sample_heads,
        busy_poll: spec.busy_poll,
    };
    let (mut outputs, limit) =
        run_workers(spec, control, &shared, h2.as_ref(), &shares, connections)?;
    if let (Some(first), Ok(mut heads)) = (outputs.first_mut(), control.heads.lock()) {
        *heads = std::mem::take(&mut first.rec.heads);
    }
    let start = *control
        .started
        .get()
        .expect("the workers started the clock");
    let started = SystemTime::now() - start.elapsed();
    let mut result = merge(spec, start, started, threads, outputs);
    result.note_streams_limited(spec.streams as u64, limit);
    Ok(result)
}

/// Starts one worker thread per share (connections, request budget) and waits for all.
/// Over HTTP/2 also returns the lowest concurrency a server allowed below `spec.streams`.
fn run_workers(
    spec: &LoadSpec,
    control: &Control,
    shared: &Shared,
    h2: Option<&h2::request::Prepared>,
    shares: &[(usize, Option<u64>)],
    connections: usize,
) -> Result<(Vec<worker::Output>, Option<u64>), EngineError> {
    std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .iter()
            .enumerate()
            .map(|(index, &(conns, budget))| {
                let a = Assignment {
                    connections: conns,
                    budget,
                    rate: match spec.pace {
                        Pace::Rate(r) => Some(r * conns as f64 / connections as f64),
                        Pace::Closed => None,
                    },
                    cpu: spec
                        .cpus
                        .as_ref()
                        .filter(|c| !c.is_empty())
                        .map(|c| c[index % c.len()]),
                    index,
                };
                let (live, stop) = (&control.live[index], &*control.stop);
                std::thread::Builder::new()
                    .name(format!("shootout-worker-{index}"))
                    .spawn_scoped(s, move || match h2 {
                        Some(req) => h2::worker::run(shared, req, spec.streams, a, stop, live),
                        None => worker::run(shared, a, stop, live).map(|o| (o, None)),
                    })
            })
            .collect();
        let mut limit: Option<u64> = None;
        let outputs = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("worker panicked"))),
                Err(e) => Err(e),
            })
            .map(|r| {
                r.map(|(o, l)| {
                    limit = match (limit, l) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    o
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((outputs, limit))
    })
    .map_err(EngineError::Worker)
}

/// Splits connections and the request budget among threads, as evenly as they go.
fn split(connections: usize, threads: usize, requests: Option<u64>) -> Vec<(usize, Option<u64>)> {
    (0..threads)
        .map(|t| {
            let conns = connections / threads + usize::from(t < connections % threads);
            let budget = requests.map(|n| {
                let (q, r) = (n / threads as u64, n % threads as u64);
                q + u64::from((t as u64) < r)
            });
            (conns, budget)
        })
        .collect()
}

/// Resolves the target and checks one connection (and TLS handshake) succeeds, so a wrong
/// port or a dead server is one clear error rather than a run full of failures.
fn preflight(
    spec: &LoadSpec,
    tls: Option<&(
        std::sync::Arc<rustls::ClientConfig>,
        rustls::pki_types::ServerName<'static>,
    )>,
) -> Result<Endpoint, EngineError> {
    let t = &spec.target;
    let h2_check = |stream: &mut dyn ReadWrite, target: String| match spec.protocol {
        Protocol::Http2 => h2::check(stream, spec.connect_timeout)
            .map_err(|reason| EngineError::NotHttp2 { target, reason }),
        Protocol::Http1 => Ok(()),
    };
    if let Some(path) = &t.unix_socket {
        let mut s = std::os::unix::net::UnixStream::connect(path).map_err(|source| {
            EngineError::Connect {
                target: path.display().to_string(),
                source,
            }
        })?;
        let _ = s.set_read_timeout(Some(spec.connect_timeout));
        if tls.is_none() {
            h2_check(&mut s, path.display().to_string())?;
        }
        return Ok(Endpoint::Unix(path.clone()));
    }
    let mut addrs: Vec<SocketAddr> = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|source| EngineError::Resolve {
            host: t.host.clone(),
            source,
        })?
        .collect();
    if let Some(&from) = spec.bind.first() {
        addrs.retain(|a| a.is_ipv4() == from.is_ipv4());
        let Some(&to) = addrs.first() else {
            return Err(EngineError::BindFamily {
                addr: from,
                host: t.host.clone(),
                family: if from.is_ipv4() { "IPv4" } else { "IPv6" },
            });
        };
        // Every address binds (an address not of this machine fails here, not as a run
        // of connect failures); the port is left for connect, so nothing is held.
        for &ip in &spec.bind {
            transport::bound_socket(ip, to)
                .map_err(|source| EngineError::Bind { addr: ip, source })?;
        }
    }
    let connect = |addr: &SocketAddr| match spec.bind.first() {
        Some(&from) => transport::bound_socket(from, *addr)
            .and_then(|s| {
                s.connect_timeout(&(*addr).into(), spec.connect_timeout)
                    .map(|()| s)
            })
            .map(TcpStream::from),
        None => TcpStream::connect_timeout(addr, spec.connect_timeout),
    };
    let mut last = None;
    for addr in &addrs {
        match connect(addr) {
            Ok(mut stream) => {
                if let Some(tls) = tls {
                    let alpn =
                        tls::handshake(stream, tls, spec.connect_timeout, &addr.to_string())?;
                    if spec.protocol == Protocol::Http2 && alpn.as_deref() != Some(b"h2") {
                        let got = alpn.map_or("no protocol".into(), |a| {
                            String::from_utf8_lossy(&a).into_owned()
                        });
                        return Err(EngineError::NotHttp2 {
                            target: t.url.clone(),
                            reason: h2::Refusal::Alpn(got),
                        });
                    }
                } else {
                    let _ = stream.set_read_timeout(Some(spec.connect_timeout));
                    h2_check(&mut stream, addr.to_string())?;
                }
                return Ok(Endpoint::Tcp(*addr));
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    Err(match last {
        Some((addr, source)) => EngineError::Connect {
            target: addr.to_string(),
            source,
        },
        None => EngineError::Resolve {
            host: t.host.clone(),
            source: std::io::Error::other("no addresses"),
        },
    })
}

/// A blocking stream the HTTP/2 pre-flight can talk over (TCP or a unix socket).
trait ReadWrite: std::io::Read + std::io::Write {}
impl<T: std::io::Read + std::io::Write> ReadWrite for T {}

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
    schedule: Option<worker::Schedule>,
    /// Each worker's table of body lengths, and its count of further lengths.
    lengths: Vec<(Vec<(u64, u64)>, u64)>,
    /// Per kind of request: completed, ok, latency (µs).
    targets: Vec<(u64, u64, Histogram<u64>)>,
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
        }
    }

    /// Adds one worker's output.
    fn add(&mut self, o: worker::Output) {
        let r = o.rec;
        let spun = r.spun;
        self.counts.merge(&r.counts);
        // Same bounds everywhere: adding cannot fail.
        let _ = self.histograms.add(&r.histograms);
        self.seconds.extend(r.series);
        self.samples.extend(r.samples);
        if let (Some(at), Some(f)) = (r.first_at, r.first) {
            if self.first.as_ref().is_none_or(|(t, _)| at < *t) {
                self.first = Some((at, f));
            }
        }
        self.lengths.push((r.lengths, r.other_lengths));
        if self.targets.is_empty() {
            self.targets = r.targets;
        } else {
            for (acc, t) in self.targets.iter_mut().zip(&r.targets) {
                acc.0 += t.0;
                acc.1 += t.1;
                // Same bounds on both sides: adding cannot fail.
                let _ = acc.2.add(&t.2);
            }
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

/// The workers' outputs as one result, its warnings derived.
fn merge(
    spec: &LoadSpec,
    start: Instant,
    started: SystemTime,
    threads: usize,
    outs: Vec<worker::Output>,
) -> RunResult {
    let mut t = Totals::new(start, threads);
    for o in outs {
        t.add(o);
    }
    t.samples.sort_by_key(|s| s.start_us);
    // ab's notion assumes one document: a list's entries differ in length by design.
    if spec.list.is_none() {
        t.counts.length_mismatch = t.length_mismatch();
    }
    let duration = t.ended.saturating_duration_since(start);
    let mut result = RunResult {
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
            }),
            _ => None,
        },
        interrupted: t.interrupted,
        warnings: Vec::new(),
        targets: match &spec.list {
            Some(list) => list
                .entries
                .iter()
                .zip(t.targets)
                .map(|(e, (completed, ok, latency))| TargetStats {
                    label: e.label(),
                    completed,
                    ok,
                    latency,
                })
                .collect(),
            None => Vec::new(),
        },
    };
    result.warn(spec);
    result
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

    #[test]
    fn split_is_even_and_complete() {
        let s = split(10, 3, Some(101));
        assert_eq!(s, vec![(4, Some(34)), (3, Some(34)), (3, Some(33))]);
        assert_eq!(split(1, 1, None), vec![(1, None)]);
    }
}
