//! shootout's load engine: turns a [`LoadSpec`] into a merged [`RunResult`].
//!
//! [`run`] resolves the target and checks it answers a connect (and a TLS handshake), then
//! starts one worker thread per share of the connections. Each worker drives its
//! connections from its own event loop and records into its own recorder; nothing is
//! shared on the hot path. When all workers end, their recorders are merged (histograms
//! added, series joined per second): facts only, the warnings are the analysis' to derive. The engine knows nothing of
//! terminals or storage: callers watch progress through [`Live`] and stop a run through
//! an `AtomicBool`.

mod body_search;
mod codec;
mod error;
mod event_loop;
mod exchange;
pub mod fault;
mod fields;
pub use h2::grpc;
mod h1;
pub mod h2;
pub mod h3;
mod heads;
pub mod journey;
mod linger;
mod live;
mod merge;
mod preflight;
mod recorder;
pub mod reflection;
mod request;
pub mod sys;
pub mod template;
mod tls;
mod transport;
pub mod ws;

pub use error::EngineError;
pub use event_loop::pacer::{Pacer, Pacing};
pub use event_loop::wait_until;
pub use exchange::Begin;
/// One HTTP/1.1 connection's state without I/O (public for its fuzz target).
pub use h1::conn as h1_connection;
pub use h1::parse::{ParseError, Progress, ResponseParser};
pub use heads::{Exchange, Heads};
pub use live::{Control, Detail, Live, Snapshot};
pub use merge::{journey_labels, kind_labels};
pub use recorder::Clock;

use event_loop::{Assignment, Output, Shared};
use shootout_model::spec::threads_for;
use shootout_model::{LoadSpec, Pace, Protocol, RunResult};
use std::time::{Duration, SystemTime};

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
    let max_connections = connection_cap(spec, connections, threads)?;
    let (prepared, alpn) = Prepared::new(spec, &requests)?;
    drop(requests);
    let tls = if spec.target.scheme.tls() {
        Some(tls::client_config(&spec.target, alpn)?)
    } else {
        None
    };
    let endpoint = preflight::preflight(spec, tls.as_ref())?;
    let shares = split(connections, threads, spec.requests);
    let shared = Shared {
        endpoint,
        tls,
        pipeline: spec.pipeline,
        streams: spec.streams,
        workers: shares.len(),
        keepalive: spec.request.keepalive,
        expect: spec.expect.clone(),
        timeout: spec.timeout,
        connect_timeout: spec.connect_timeout,
        record: spec.record,
        duration: spec.duration,
        start_at: control.start_at,
        barrier: std::sync::Barrier::new(shares.len()),
        started: &control.started,
        finish: &control.finish,
        bind: spec.bind.clone(),
        heads: control.sample_heads,
        busy_poll: spec.busy_poll,
        udp_offload: control.udp_offload,
        turns: event_loop::Turns::new(shares.iter().map(|&(c, _)| c).collect()),
        rate_stages: spec
            .rate_stages
            .iter()
            .map(|s| (s.rate, s.duration))
            .collect(),
    };
    let mut outputs = run_workers(spec, control, &shared, &prepared, &shares, max_connections)?;
    // The lowest concurrency any worker's server allowed below `spec.streams`.
    let limit = outputs.iter().filter_map(|o| o.streams_allowed).min();
    if let (Some(first), Ok(mut heads)) = (outputs.first_mut(), control.heads.lock()) {
        *heads = std::mem::take(&mut first.rec.heads);
    }
    let start = *control
        .started
        .get()
        .expect("the workers started the clock");
    let started = SystemTime::now() - start.elapsed();
    let mut result = merge::merge(spec, start, started, threads, max_connections, outputs);
    result.note_streams_limited(spec.streams as u64, limit);
    Ok(result)
}

/// Each worker's share: its connections and request budget (`shares`), and in rate mode
/// an even part of the rate, its schedule offset by its index (worker `i` of `T` sends
/// requests `i`, `i + T`, … of the run's schedule), and its part of the connection cap.
fn assignments(
    spec: &LoadSpec,
    shares: &[(usize, Option<u64>)],
    max_connections: usize,
) -> Vec<Assignment> {
    let threads = shares.len();
    let caps = split(max_connections, threads, None);
    shares
        .iter()
        .zip(caps)
        .enumerate()
        .map(|(index, (&(connections, budget), (cap, _)))| Assignment {
            connections,
            budget,
            rate: match spec.pace {
                Pace::Rate(r) => Some(r / threads as f64),
                Pace::Closed => None,
            },
            offset: match spec.pace {
                Pace::Rate(r) => spec.offset + Duration::from_secs_f64(index as f64 / r),
                Pace::Closed => Duration::ZERO,
            },
            // Each worker draws its own Poisson gaps.
            arrival: spec.arrival.part(index as u64),
            max_connections: cap,
            cpu: spec
                .cpus
                .as_ref()
                .filter(|c| !c.is_empty())
                .map(|c| c[index % c.len()]),
            index,
        })
        .collect()
}

/// Open files a run needs besides its connections (each worker's poll and timer, the
/// process's own).
const OTHER_FILES: u64 = 64;

/// The most connections the run may open, the open-file limit raised to hold them. A
/// closed loop opens its `connections`; rate mode opens more as the schedule needs them,
/// up to the spec's cap, else as many as the open-file limit allows (at most
/// [`shootout_model::spec::MAX_CONNECTIONS`]).
fn connection_cap(
    spec: &LoadSpec,
    connections: usize,
    threads: usize,
) -> Result<usize, EngineError> {
    use shootout_model::spec::MAX_CONNECTIONS;
    let wanted = match spec.pace {
        Pace::Closed => connections,
        Pace::Rate(_) => spec.max_connections.unwrap_or(MAX_CONNECTIONS),
    };
    let needed = sockets(spec, wanted, threads) as u64 + OTHER_FILES + 2 * threads as u64;
    let limit = sys::raise_fd_limit(needed);
    if limit >= needed {
        return Ok(wanted);
    }
    let fits = limit.saturating_sub(OTHER_FILES + 2 * threads as u64) as usize;
    if spec.max_connections.is_none() && matches!(spec.pace, Pace::Rate(_)) && fits >= connections {
        return Ok(fits);
    }
    Err(EngineError::FdLimit {
        connections: wanted,
        needed,
        limit,
    })
}

/// The sockets `wanted` connections open: one each, except journeys' users over HTTP/2
/// in a closed loop, `streams` of whom share a connection (each of `threads` workers
/// rounds its share up).
fn sockets(spec: &LoadSpec, wanted: usize, threads: usize) -> usize {
    let shared = spec.journey.is_some()
        && spec.protocol == Protocol::Http2
        && matches!(spec.pace, Pace::Closed);
    if shared {
        wanted.div_ceil(spec.streams.max(1)) + threads
    } else {
        wanted
    }
}

/// Starts one worker thread per share (connections, request budget) and waits for all. In
/// rate mode the rate is split evenly and each worker's schedule is offset by its index,
/// so that together they send at even intervals, as one sender would; the connection cap
/// is split as the connections are.
fn run_workers(
    spec: &LoadSpec,
    control: &Control,
    shared: &Shared,
    prep: &Prepared,
    shares: &[(usize, Option<u64>)],
    max_connections: usize,
) -> Result<Vec<Output>, EngineError> {
    let assignments = assignments(spec, shares, max_connections);
    std::thread::scope(|s| {
        let handles: Vec<_> = assignments
            .iter()
            .map(|&a| {
                let index = a.index;
                let (live, stop) = (&control.live[index], &*control.stop);
                std::thread::Builder::new()
                    .name(format!("shootout-worker-{index}"))
                    .spawn_scoped(s, move || prep.run(shared, a, stop, live))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("worker panicked"))),
                Err(e) => Err(e),
            })
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(EngineError::Worker)
}

/// What the run's protocol prepared once for the whole run, from the run's requests
/// ([`request::Requests`]): its wire form of them (or, for WebSocket, the upgrade and the
/// message). A protocol is a folder, a variant and an arm in each of the two `match`es
/// below: the one that picks it by the spec's protocol, and the one that starts its
/// workers.
enum Prepared {
    Http1(h1::request::Prepared),
    Journeys(event_loop::users::Prepared),
    Journeys2(event_loop::users::Prepared),
    Http2(h2::request::Prepared),
    Http3(h3::Prepared),
    WebSocket(ws::Prepared),
}

impl Prepared {
    /// The protocol `spec` asks for, prepared from `requests`, and the protocol TLS
    /// offers for it by ALPN (RFC 7301).
    fn new(
        spec: &LoadSpec,
        requests: &request::Requests,
    ) -> Result<(Prepared, &'static [u8]), EngineError> {
        // Over HTTP/2 and HTTP/3 a run sends one request (the spec's rules refuse a list).
        let only = &requests.kinds[0];
        if let Some(j) = &spec.journey {
            // The spec's rules keep journeys to HTTP/1.1 and HTTP/2.
            let mut p = journeys(j, &spec.stages, only, spec.target.scheme.tls());
            // Open model: a journey's new user may take an idle connection.
            p.reuse = spec.journey_connection == shootout_model::JourneyConnection::Reuse;
            if spec.protocol == Protocol::Http2 {
                // `--streams N`: N users share each connection (closed model).
                p.per_connection = spec.streams.max(1);
            }
            return Ok(match spec.protocol {
                Protocol::Http2 => (Prepared::Journeys2(p), b"h2"),
                _ => (Prepared::Journeys(p), b"http/1.1"),
            });
        }
        let chosen: (Prepared, &'static [u8]) = match spec.protocol {
            Protocol::Http1 => (
                Prepared::Http1(h1::request::Prepared::new(requests)?),
                b"http/1.1",
            ),
            Protocol::Http2 => {
                let mut p = h2::request::prepare(only)?;
                p.grpc = spec
                    .expect
                    .grpc
                    .as_ref()
                    .map(|g| grpc::Reply::new(g, spec.expect.echo))
                    .transpose()?;
                // A gRPC call's list of messages (the spec's rules keep lists to gRPC
                // over HTTP/2).
                p.messages = match (&p.grpc, &spec.ws_messages) {
                    (Some(r), Some(list)) => Some(
                        grpc::Messages::new(&r.input, list)
                            .map_err(grpc::SchemaError::Messages)?
                            .compressed(r.compress),
                    ),
                    _ => None,
                };
                (Prepared::Http2(p), b"h2")
            }
            Protocol::Http3 => (
                Prepared::Http3(h3::request::prepare(only, &spec.target.host)?),
                b"h3",
            ),
            Protocol::WebSocket => (Prepared::WebSocket(ws::Prepared::new(spec)), b"http/1.1"),
        };
        Ok(chosen)
    }

    /// Runs one worker of the protocol to the end of its share `a`.
    fn run(
        &self,
        shared: &Shared,
        a: Assignment,
        stop: &std::sync::atomic::AtomicBool,
        live: &Live,
    ) -> std::io::Result<Output> {
        use event_loop::host;
        match self {
            Prepared::Http1(r) => host(shared, a, stop, live, |c| h1::worker::set_up(c, r)),
            Prepared::Journeys(p) => host(shared, a, stop, live, |c| h1::users::set_up(c, p)),
            Prepared::Journeys2(p) => host(shared, a, stop, live, |c| h2::users::set_up(c, p)),
            Prepared::Http2(r) => host(shared, a, stop, live, |c| h2::worker::set_up(c, r)),
            Prepared::Http3(r) => host(shared, a, stop, live, |c| h3::worker::set_up(c, r)),
            Prepared::WebSocket(p) => host(shared, a, stop, live, |c| ws::worker::set_up(c, p)),
        }
    }
}

/// What journeys' users share: the file, and the header lines every request carries
/// before its step's own (the run's `Host`, `User-Agent`, `Accept` and `-H` fields), and the
/// closed model's stages.
fn journeys(
    j: &shootout_model::spec::Journeys,
    stages: &[shootout_model::Stage],
    base: &request::Request,
    tls: bool,
) -> event_loop::users::Prepared {
    let mut prelude = Vec::new();
    let mut fields = Vec::new();
    for (n, v) in base.fields() {
        prelude.extend_from_slice(n.as_bytes());
        prelude.extend_from_slice(b": ");
        prelude.extend_from_slice(v.as_bytes());
        prelude.extend_from_slice(b"\r\n");
        if !n.eq_ignore_ascii_case("host") {
            fields.push((n.to_ascii_lowercase(), v.to_string()));
        }
    }
    let unix_start = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    event_loop::users::Prepared {
        file: j.file.clone(),
        prelude,
        fields,
        host: base.authority().to_string(),
        tls,
        seed: j.seed,
        unix_start,
        stages: event_loop::users::stage_ends(stages),
        per_connection: 1,
        reuse: false,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Four workers at 1,000 req/s send 250 each, offset by 1 ms apiece so the run sends
    /// every millisecond (not four at once every 4 ms), after the shard's own offset.
    #[test]
    fn workers_interleave_their_schedules() {
        let mut spec = LoadSpec::new(shootout_model::Target::parse("http://127.0.0.1:1/").unwrap());
        spec.pace = Pace::Rate(1000.0);
        spec.offset = Duration::from_micros(250);
        let a = assignments(&spec, &split(6, 4, Some(10)), 10);
        let rates: Vec<_> = a.iter().map(|a| a.rate).collect();
        assert_eq!(rates, vec![Some(250.0); 4]);
        let offsets: Vec<_> = a.iter().map(|a| a.offset.as_micros()).collect();
        assert_eq!(offsets, vec![250, 1250, 2250, 3250]);
        let caps: Vec<_> = a.iter().map(|a| a.max_connections).collect();
        assert_eq!(caps, vec![3, 3, 2, 2]);
        spec.pace = Pace::Closed;
        let closed = assignments(&spec, &split(6, 4, Some(10)), 6);
        assert!(closed
            .iter()
            .all(|a| a.rate.is_none() && a.offset.is_zero()));
    }

    /// Journeys' users over HTTP/2 in a closed loop share connections, `streams` each:
    /// 100,000 users at 100 streams on 4 workers need 1,004 sockets, not 100,000; every
    /// other load opens a socket a connection.
    #[test]
    fn users_sharing_connections_need_a_socket_per_connection_not_per_user() {
        let text = "[[journey]]\nname = \"j\"\n[[journey.step]]\nname = \"s\"\nget = \"/\"\n";
        let file = shootout_model::journey::parse(text, "j.toml", &mut |_| Err("no".into()))
            .expect("journey file");
        let mut spec = LoadSpec::new(shootout_model::Target::parse("http://127.0.0.1:1/").unwrap());
        assert_eq!(sockets(&spec, 100_000, 4), 100_000);
        spec.journey = Some(shootout_model::spec::Journeys {
            source: "j.toml".into(),
            seed: 1,
            file: std::sync::Arc::new(file),
        });
        spec.streams = 100;
        // Over HTTP/1.1 each user holds a connection.
        assert_eq!(sockets(&spec, 100_000, 4), 100_000);
        spec.protocol = Protocol::Http2;
        assert_eq!(sockets(&spec, 100_000, 4), 1_004);
        assert_eq!(sockets(&spec, 150, 2), 4);
        // The open model opens a connection a journey in flight.
        spec.pace = Pace::Rate(1000.0);
        assert_eq!(sockets(&spec, 5_000, 4), 5_000);
    }

    #[test]
    fn split_is_even_and_complete() {
        let s = split(10, 3, Some(101));
        assert_eq!(s, vec![(4, Some(34)), (3, Some(34)), (3, Some(33))]);
        assert_eq!(split(1, 1, None), vec![(1, None)]);
    }
}
