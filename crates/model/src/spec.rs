//! What to load: the target, the request, what counts as a good answer, and how hard and
//! how long to push. A [`LoadSpec`] is typed, and its rules live here once: a
//! [`SpecBuilder`] (from [`LoadSpec::builder`]) is how the `load` flags, a plan's steps and
//! a warm-up make a spec (connections no more than requests, the default thread count,
//! the limits), and [`LoadSpec::validate`] is the one check every spec passes before the
//! engine runs it, built here or by hand. A [`SpecError`] names the broken rule, so the
//! `load` flags can name the flag. What a valid spec guarantees is listed on
//! [`LoadSpec::validate`].

use crate::requests::RequestList;
use crate::status::StatusSet;
pub use crate::target::{
    check_header, check_method, check_path, RequestError, Scheme, Target, TargetError, TlsOptions,
    MAX_BODY,
};
use crate::target::{is_control, shown};
use crate::units::{MAX_CPU, MAX_DURATION};
use std::net::IpAddr;
use std::time::Duration;

/// The HTTP version spoken to the target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1: [`Wire::pipeline`] requests in flight per connection (1: one at a time).
    #[default]
    Http1,
    /// HTTP/2: h2c with prior knowledge for `http://`, ALPN `h2` over TLS for `https://`;
    /// [`LoadSpec::streams`] concurrent streams per connection.
    Http2,
    /// HTTP/3 over QUIC (RFC 9114) for `https://` URLs, ALPN `h3`;
    /// [`LoadSpec::streams`] concurrent requests per connection.
    Http3,
    /// WebSocket (RFC 6455) for `ws://` and `wss://`: one opening handshake per
    /// connection, then the measured unit is a message and its reply;
    /// [`LoadSpec::pipeline`] messages in flight per connection.
    WebSocket,
}

impl Protocol {
    /// The word in plans and reports: `http/1.1`, `h2` or `h3` (ALPN's names), `websocket`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http1 => "http/1.1",
            Protocol::Http2 => "h2",
            Protocol::Http3 => "h3",
            Protocol::WebSocket => "websocket",
        }
    }

    /// Reads a plan's `protocol`: `h2` (or `http/2`), `h3` (or `http/3`), `http/1.1` (or
    /// `h1`), `websocket`.
    pub fn parse(s: &str) -> Option<Protocol> {
        match s.to_ascii_lowercase().as_str() {
            "h2" | "http/2" | "http2" => Some(Protocol::Http2),
            "h3" | "http/3" | "http3" => Some(Protocol::Http3),
            "h1" | "http/1.1" | "http1" => Some(Protocol::Http1),
            "websocket" | "ws" => Some(Protocol::WebSocket),
            _ => None,
        }
    }
}

/// How the client talks to a server in one step: the protocol, the HTTP/2 streams kept in
/// flight per connection and the HTTP/1.1 requests pipelined per connection. A plan's
/// workload (or `[load]`) gives it, and a contender's own keys override it; each step
/// stores the one it was measured with, so the reports can say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    /// HTTP/1.1 or HTTP/2.
    pub protocol: Protocol,
    /// HTTP/2 streams per connection (1 over HTTP/1.1).
    pub streams: usize,
    /// HTTP/1.1 requests in flight per connection (1: not pipelined; 1 over HTTP/2).
    pub pipeline: usize,
}

impl Default for Wire {
    /// HTTP/1.1, one request at a time per connection (not pipelined).
    fn default() -> Self {
        Wire {
            protocol: Protocol::Http1,
            streams: 1,
            pipeline: 1,
        }
    }
}

impl Wire {
    /// The rule protocol, streams and pipeline must keep together, in one place for the
    /// `load` flags, a plan's workloads and its contenders: more than one stream needs
    /// HTTP/2; over HTTP/2 there is no pipelining and no request list (`list`: whether
    /// the requests come from one). `None` when they agree.
    pub fn conflict(&self, list: bool) -> Option<SpecError> {
        match self.protocol {
            Protocol::Http1 if self.streams > 1 => Some(SpecError::StreamsNeedHttp2(self.streams)),
            Protocol::Http2 | Protocol::Http3 if self.pipeline > 1 => {
                Some(SpecError::Http2Pipeline(self.pipeline))
            }
            Protocol::Http2 | Protocol::Http3 if list => Some(SpecError::Http2List),
            Protocol::WebSocket if self.streams > 1 => {
                Some(SpecError::StreamsNeedHttp2(self.streams))
            }
            Protocol::WebSocket if list => Some(SpecError::WebSocketList),
            _ => None,
        }
    }
}

impl std::fmt::Display for Wire {
    /// `http/1.1`, `http/1.1 × 16 pipelined`, `h2 × 1 stream`, `h2 × 10 streams`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.protocol {
            Protocol::Http2 => write!(
                f,
                "h2 × {} stream{}",
                self.streams,
                if self.streams == 1 { "" } else { "s" }
            ),
            Protocol::Http3 => write!(
                f,
                "h3 × {} stream{}",
                self.streams,
                if self.streams == 1 { "" } else { "s" }
            ),
            Protocol::Http1 if self.pipeline > 1 => {
                write!(f, "http/1.1 × {} pipelined", self.pipeline)
            }
            Protocol::Http1 => f.write_str("http/1.1"),
            Protocol::WebSocket if self.pipeline > 1 => {
                write!(f, "websocket × {} in flight", self.pipeline)
            }
            Protocol::WebSocket => f.write_str("websocket"),
        }
    }
}

/// The most concurrent streams per connection `--streams` may ask for.
pub const MAX_STREAMS: usize = 10_000;

/// The longest busy poll a worker may make before it sleeps (`--busy-poll`): beyond a
/// millisecond it burns a CPU on an idle run for nothing a wake-up costs.
pub const MAX_BUSY_POLL: Duration = Duration::from_millis(1);

/// The busy poll of a run that asks for none (no `--busy-poll`, no `busy_poll`): 20 µs over
/// HTTP/2 when the generator's CPUs are its own (`own_cpus`: pinned apart from the server),
/// none otherwise. Each time a worker sleeps, the server's answer has to wake it, which on
/// a virtual machine whose idle CPUs halt is an interrupt and an exit to the hypervisor
/// paid on the server's CPU. HTTP/2 answers come as many small writes, and without
/// polling nginx served shootout 0.82–0.95× the requests it served h2load; with 20 µs,
/// 0.99–1.04× at 0.96–1.04× h2load's CPU per request (bench/RESULTS.md, 2026-11-27).
/// HTTP/1.1, keep-alive or pipelined, keeps up with wrk without it (1.01–1.07×), and there
/// polling raised CPU per request to 1.24–1.30× wrk's: it stays off, as it does for any
/// generator that shares its CPUs, whose polling the server would pay for.
pub fn auto_busy_poll(protocol: Protocol, own_cpus: bool) -> Duration {
    match protocol {
        Protocol::Http2 if own_cpus => Duration::from_micros(20),
        _ => Duration::ZERO,
    }
}

/// The most requests one run may keep in flight (connections × streams): each has a slot
/// of state, so this bounds the engine's memory (measured by `bench/rss` at 10,000
/// connections × 100 streams over HTTP/2: 620 MiB resident, about 14 KB per connection
/// and 500 bytes per stream, flat over the run's length).
pub const MAX_IN_FLIGHT: usize = 1_000_000;

/// The request sent, prepared once into bytes by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    /// `GET`, `POST`, `HEAD`, …
    pub method: String,
    /// Extra headers in order; a user `Host`, `User-Agent` or `Accept` replaces ours. Never
    /// `Content-Length` or `Transfer-Encoding`: shootout sets the framing from `body`.
    pub headers: Vec<(String, String)>,
    /// Body bytes, at most [`MAX_BODY`] (empty: no body, no Content-Length unless the
    /// method needs one).
    pub body: Vec<u8>,
    /// Reuse connections (HTTP/1.1 keep-alive). `false` sends `Connection: close`.
    pub keepalive: bool,
}

impl Default for RequestSpec {
    fn default() -> Self {
        RequestSpec {
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            keepalive: true,
        }
    }
}

/// The largest WebSocket message shootout sends or accepts as a reply: 16 MiB. A reply
/// announced or grown past it is a protocol error (RFC 6455's close code 1009, "message
/// too big"); replies are checked as they stream in, never held whole, so memory stays
/// bounded whatever a server sends.
pub const MAX_MESSAGE: usize = 16 << 20;

/// The most connections one run may open (each needs an open file).
pub const MAX_CONNECTIONS: usize = 1_000_000;

/// The most requests in flight on one connection (`--pipeline`).
pub const MAX_PIPELINE: usize = 1024;

/// Most local addresses a run connects from (ab's `-B`; a /16 of loopback addresses).
pub const MAX_BIND: usize = 65_536;

/// The most worker threads one run may start.
pub const MAX_THREADS: usize = 1024;

/// The lowest rate accepted, in requests per second (one request every 1000 s).
pub const MIN_RATE: f64 = 0.001;

/// The highest rate accepted, in requests per second (one request per nanosecond).
pub const MAX_RATE: f64 = 1e9;

/// A number of a spec that must lie in a range. Each range is checked by one function of
/// [`rules`] and said in words by [`Limit::range`], once for every way a user gives the
/// number: [`LoadSpec::validate`] (so the [`SpecBuilder`]), the `load` flags and a plan's
/// keys. [`SpecError::limit`] says which limit an error broke, so a caller that knows
/// where the value came from (a flag, a plan's line) can name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Connections: 1 to [`MAX_CONNECTIONS`].
    Connections,
    /// Worker threads: 1 to [`MAX_THREADS`].
    Threads,
    /// HTTP/2 streams per connection: 1 to [`MAX_STREAMS`].
    Streams,
    /// HTTP/1.1 requests in flight per connection: 1 to [`MAX_PIPELINE`].
    Pipeline,
    /// Requests per second: [`MIN_RATE`] to [`MAX_RATE`].
    Rate,
    /// How long a worker polls before it sleeps: at most [`MAX_BUSY_POLL`].
    BusyPoll,
    /// A request body's size: at most [`MAX_BODY`] bytes.
    Body,
}

impl Limit {
    /// Every limit.
    pub const ALL: [Limit; 7] = [
        Limit::Connections,
        Limit::Threads,
        Limit::Streams,
        Limit::Pipeline,
        Limit::Rate,
        Limit::BusyPoll,
        Limit::Body,
    ];

    /// The highest value allowed, as messages write it: `1000000`, `1e9`, `1ms`, `64 MiB`.
    pub fn most(self) -> String {
        match self {
            Limit::Connections => MAX_CONNECTIONS.to_string(),
            Limit::Threads => MAX_THREADS.to_string(),
            Limit::Streams => MAX_STREAMS.to_string(),
            Limit::Pipeline => MAX_PIPELINE.to_string(),
            Limit::Rate => format!("{MAX_RATE:e}"),
            Limit::BusyPoll => format!("{MAX_BUSY_POLL:?}"),
            Limit::Body => format!("{} MiB", MAX_BODY >> 20),
        }
    }

    /// The range in words: `from 1 to 1000000`, `from 0.001 to 1e9`, `at most 1ms`.
    pub fn range(self) -> String {
        let least = match self {
            Limit::Connections | Limit::Threads | Limit::Streams | Limit::Pipeline => "1".into(),
            Limit::Rate => MIN_RATE.to_string(),
            Limit::BusyPoll | Limit::Body => return format!("at most {}", self.most()),
        };
        format!("from {least} to {}", self.most())
    }

    /// What a message writes after the range where a key's or a flag's name does not say
    /// it, with its leading space: ` requests per second` (a rate), ` requests in flight
    /// per connection` (a pipeline depth); empty for the others.
    pub fn unit(self) -> &'static str {
        match self {
            Limit::Rate => " requests per second",
            Limit::Pipeline => " requests in flight per connection",
            _ => "",
        }
    }
}

/// The spec's range rules, one function each: [`LoadSpec::validate`] calls them, and so
/// does whoever checks a value before there is a spec (each level of a plan's sweep, a
/// contender's streams). Each gives the value back when it lies in its [`Limit`]'s range,
/// else the error that names the limit.
pub mod rules {
    use super::*;

    /// Connections: 1 to [`MAX_CONNECTIONS`].
    pub fn connections(n: usize) -> Result<usize, SpecError> {
        within(n, 1..=MAX_CONNECTIONS, SpecError::Connections)
    }

    /// Worker threads: 1 to [`MAX_THREADS`].
    pub fn threads(n: usize) -> Result<usize, SpecError> {
        within(n, 1..=MAX_THREADS, SpecError::Threads)
    }

    /// HTTP/2 streams per connection: 1 to [`MAX_STREAMS`].
    pub fn streams(n: usize) -> Result<usize, SpecError> {
        within(n, 1..=MAX_STREAMS, SpecError::Streams)
    }

    /// HTTP/1.1 requests in flight per connection: 1 to [`MAX_PIPELINE`].
    pub fn pipeline(n: usize) -> Result<usize, SpecError> {
        within(n, 1..=MAX_PIPELINE, SpecError::Pipeline)
    }

    /// Requests per second: [`MIN_RATE`] to [`MAX_RATE`] (not NaN).
    pub fn rate(r: f64) -> Result<f64, SpecError> {
        within(r, MIN_RATE..=MAX_RATE, SpecError::Rate)
    }

    /// A worker's busy poll: zero to [`MAX_BUSY_POLL`].
    pub fn busy_poll(d: Duration) -> Result<Duration, SpecError> {
        within(d, Duration::ZERO..=MAX_BUSY_POLL, SpecError::BusyPoll)
    }

    /// A request body of `len` bytes: at most [`MAX_BODY`].
    pub fn body(len: usize) -> Result<usize, RequestError> {
        crate::target::check_body(len)
    }

    /// Requests in flight over a run: `connections` × `streams` at most [`MAX_IN_FLIGHT`].
    pub fn in_flight(connections: usize, streams: usize) -> Result<(), SpecError> {
        if connections.saturating_mul(streams) > MAX_IN_FLIGHT {
            return Err(SpecError::InFlight {
                connections,
                streams,
            });
        }
        Ok(())
    }

    /// `v` when `range` holds it, else `broken(v)`.
    fn within<T: PartialOrd, E>(
        v: T,
        range: std::ops::RangeInclusive<T>,
        broken: fn(T) -> E,
    ) -> Result<T, E> {
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(broken(v))
        }
    }
}

/// The request-target of a path that [`check_path`] accepts, as a workload's URL is
/// built: spaces and other characters a request-target cannot hold percent-encoded
/// (`/a b` is `/a%20b`). The one rule for a plan's `path` and its `ready.path`.
pub fn path_target(path: &str) -> Result<String, RequestError> {
    check_path(path)?;
    Target::parse(&format!("http://127.0.0.1{path}"))
        .map(|t| t.path)
        .map_err(|_| RequestError::PathControl(shown(path)))
}

impl RequestSpec {
    /// Checks the method, every header and the body's size (see [`check_method`],
    /// [`check_header`], [`MAX_BODY`]).
    pub fn validate(&self) -> Result<(), RequestError> {
        check_method(&self.method)?;
        for (name, value) in &self.headers {
            check_header(name, value)?;
        }
        rules::body(self.body.len())?;
        Ok(())
    }
}

/// A load spec the engine must not run. Each rule of [`LoadSpec::validate`] has its own
/// variant, so a caller that knows where a value came from (the `load` flags) can name it.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SpecError {
    /// The request cannot be sent as given.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A journey with a setting it cannot run with.
    #[error("--journey: {0}")]
    Journey(&'static str),
    /// A journey step with a header the protocol forbids.
    #[error("--journey: {0}")]
    JourneyHeader(String),
    /// Stages with a setting they cannot run with.
    #[error("--stages: {0}")]
    Stages(&'static str),
    /// The target's path is not a request-target (built by hand, not by [`Target::parse`]).
    #[error("the target path '{0}' has a space or a control character: percent-encode it")]
    TargetPath(String),
    /// Connections outside 1..=[`MAX_CONNECTIONS`].
    #[error("connections must be {range}, not {0}", range = Limit::Connections.range())]
    Connections(usize),
    /// A cap on connections below the connections opened at the start.
    #[error("the connection cap ({max}) is below the {connections} connections opened at the start: raise the cap or lower the connections")]
    MaxBelowConnections {
        /// The cap.
        max: usize,
        /// The connections opened at the start.
        connections: usize,
    },
    /// A cap on connections in a closed loop, whose connections are fixed.
    #[error("a connection cap applies to rate mode only, where connections open as the schedule needs them: give a rate, or drop the cap")]
    MaxConnectionsClosed,
    /// Threads outside 1..=[`MAX_THREADS`].
    #[error("threads must be {range}, not {0}", range = Limit::Threads.range())]
    Threads(usize),
    /// Neither a request count nor a duration.
    #[error("a run needs a bound: a request count or a duration")]
    NoBound,
    /// A request count of 0.
    #[error("the request count must be at least 1")]
    NoRequests,
    /// A duration or timeout of 0 or over [`MAX_DURATION`].
    #[error("{what} must be more than 0 and at most 365 days, not {}", secs(*.value))]
    Duration {
        /// `the duration`, `the timeout` or `the connect timeout`.
        what: &'static str,
        /// The value given.
        value: Duration,
    },
    /// A rate outside [`MIN_RATE`]..=[`MAX_RATE`] (or not a number).
    #[error("the rate must be {range}{unit}, not {0:?}", range = Limit::Rate.range(), unit = Limit::Rate.unit())]
    Rate(f64),
    /// A CPU number over [`MAX_CPU`].
    #[error("CPU {0} does not exist: CPUs are numbered 0 to {max}", max = MAX_CPU)]
    Cpu(usize),
    /// Streams per connection outside 1..=[`MAX_STREAMS`].
    #[error("streams per connection must be {range}, not {0}", range = Limit::Streams.range())]
    Streams(usize),
    /// A busy poll longer than [`MAX_BUSY_POLL`].
    #[error("a busy poll may last {range}, not {0:?} (e.g. 50us)", range = Limit::BusyPoll.range())]
    BusyPoll(Duration),
    /// More than one stream per connection asked of HTTP/1.1.
    #[error("{0} streams per connection need HTTP/2: add --http2 (protocol = \"h2\" in a plan)")]
    StreamsNeedHttp2(usize),
    /// Connections × streams over [`MAX_IN_FLIGHT`].
    #[error("{connections} connections × {streams} streams is {} requests in flight: the most is {max}", connections * streams, max = MAX_IN_FLIGHT)]
    InFlight {
        /// Connections asked for.
        connections: usize,
        /// Streams per connection asked for.
        streams: usize,
    },
    /// HTTP/2 asked to open a connection per request.
    #[error(
        "HTTP/2 keeps its connections open (streams are multiplexed on them): drop --no-keepalive"
    )]
    Http2NoKeepalive,
    /// HTTP/3 asked of a URL that is not `https://` (or of a unix socket).
    #[error("--http3 speaks HTTP/3 over QUIC, which always runs TLS: load an https:// URL (with --insecure or --cacert FILE for a self-signed certificate), not '{0}'")]
    Http3NeedsHttps(String),
    /// HTTP/3 asked to open a connection per request.
    #[error(
        "HTTP/3 keeps its connections open (requests are multiplexed on them): drop --no-keepalive"
    )]
    Http3NoKeepalive,
    /// Requests in flight per connection outside 1..=[`MAX_PIPELINE`].
    #[error("the pipeline depth must be {range}, not {0}", range = Limit::Pipeline.range())]
    Pipeline(usize),
    /// Pipelining asked for with connections closed after each request.
    #[error("pipelining needs keep-alive: drop the pipeline depth or keep connections open")]
    PipelineClose,
    /// A request list entry that cannot be sent (built by hand, not by
    /// [`RequestList::parse`](crate::requests::RequestList::parse)).
    #[error("{source_name}:{line}: {error}")]
    ListEntry {
        /// The list's file.
        source_name: String,
        /// The entry's line.
        line: usize,
        /// What is wrong with it.
        error: RequestError,
    },
    /// A request list with no entry.
    #[error("the request list {0} is empty")]
    EmptyList(String),
    /// A request list with more entries than
    /// [`MAX_ENTRIES`](crate::requests::MAX_ENTRIES), or bodies that hold more than
    /// [`MAX_LIST_BODIES`](crate::requests::MAX_LIST_BODIES) together (each shared body
    /// counted once).
    #[error("the request list {source_name} {what}: split it, or use fewer or smaller body files")]
    ListTooLarge {
        /// The list's file.
        source_name: String,
        /// `has 1000001 entries, more than the 1000000 a list may have`.
        what: String,
    },
    /// HTTP/1.1 pipelining asked of HTTP/2, which multiplexes streams instead.
    #[error(
        "--pipeline is HTTP/1.1's: over HTTP/2 use --streams {0} instead (streams = {0} in a plan)"
    )]
    Http2Pipeline(usize),
    /// A request list asked of HTTP/2, whose requests are encoded once for the whole run.
    #[error("--urls (a request list) is sent over HTTP/1.1 only: drop --http2, or drop --urls and load one URL")]
    Http2List,
    /// A request list asked of WebSocket, which sends one message.
    #[error("--urls (a request list) is sent over HTTP only: a WebSocket load sends one message (-p FILE or --ws-text TEXT)")]
    WebSocketList,
    /// A `ws://` or `wss://` URL with an HTTP protocol, or the WebSocket protocol with an
    /// `http://` or `https://` URL.
    #[error("'{0}': WebSocket is spoken to ws:// and wss:// URLs and HTTP to http:// and https:// ones (write the URL with the scheme of the protocol, and drop --http2 for a WebSocket)")]
    WebSocketScheme(String),
    /// An echo check, a text message or the hold mode asked of HTTP (an echo check and a
    /// message list are gRPC's too).
    #[error("--expect-echo, --ws-text, --ws-messages and --ws-hold are WebSocket's: load a ws:// or wss:// URL (or a grpc:// URL for --expect-echo and --messages)")]
    WebSocketOnly,
    /// A gRPC reply check over a protocol other than HTTP/2, which gRPC calls are streams of.
    #[error("a gRPC call is an HTTP/2 stream, not {0}: load its grpc:// or grpcs:// URL (protocol = \"grpc\" in a plan) and drop --http3")]
    GrpcNeedsHttp2(&'static str),
    /// A gRPC spec with a setting a unary call cannot run with.
    #[error("gRPC: {0}")]
    Grpc(&'static str),
    /// A hold mode that cannot be run.
    #[error("--ws-hold: {0}")]
    Hold(&'static str),
    /// A list of messages and one message besides.
    #[error("--ws-messages sends its list's messages: drop -p and --ws-text")]
    MessagesAndBody,
    /// A WebSocket message over [`MAX_MESSAGE`].
    #[error("a WebSocket message may be at most {max} bytes (16 MiB), not {0}: send a smaller file", max = MAX_MESSAGE)]
    MessageSize(usize),
    /// A text message that is not UTF-8.
    #[error("a WebSocket text message must be UTF-8: send the bytes as a binary message (-p FILE) instead")]
    TextNotUtf8,
    /// WebSocket asked to close its connections after each message.
    #[error("WebSocket keeps its connections open (one handshake each, then messages): drop --no-keepalive")]
    WebSocketNoKeepalive,
    /// More local addresses than [`MAX_BIND`].
    #[error("{0} local addresses to connect from: the most is {max}", max = MAX_BIND)]
    BindCount(usize),
    /// Local addresses asked of a unix socket target.
    #[error(
        "a unix socket has no local address to bind: drop the local addresses or the unix socket"
    )]
    BindUnix,
    /// An address no connection can come from.
    #[error("{0} cannot be a connection's local address: give an address of this machine, e.g. 127.0.0.2")]
    BindAddress(IpAddr),
    /// IPv4 and IPv6 addresses mixed: only one family can reach the target.
    #[error("local addresses {0} and {1} are of different families: give IPv4 addresses for an IPv4 target, IPv6 for IPv6")]
    BindFamilies(IpAddr, IpAddr),
}

impl SpecError {
    /// The [`Limit`] this error broke, with the value given as messages write it (`0`,
    /// `0.0`, `2ms`, `67108865 bytes`); `None` for a rule that is not a range.
    pub fn limit(&self) -> Option<(Limit, String)> {
        Some(match self {
            SpecError::Connections(n) => (Limit::Connections, n.to_string()),
            SpecError::Threads(n) => (Limit::Threads, n.to_string()),
            SpecError::Streams(n) => (Limit::Streams, n.to_string()),
            SpecError::Pipeline(n) => (Limit::Pipeline, n.to_string()),
            SpecError::Rate(r) => (Limit::Rate, format!("{r:?}")),
            SpecError::BusyPoll(d) => (Limit::BusyPoll, format!("{d:?}")),
            SpecError::Request(RequestError::Body(n)) => (Limit::Body, format!("{n} bytes")),
            _ => return None,
        })
    }
}

/// What a good answer is. Every response is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectation {
    /// Acceptable status codes (default: < 400).
    pub status: StatusSet,
    /// The body must contain these bytes.
    pub body_contains: Option<Vec<u8>>,
    /// The body must be exactly this many bytes long.
    pub length: Option<u64>,
    /// WebSocket: the reply must equal the message sent (an echo server's answer).
    pub echo: bool,
    /// gRPC: the answer is a unary call's reply, checked as gRPC's (see [`GrpcReply`]).
    pub grpc: Option<GrpcReply>,
}

/// What a gRPC call's good reply is: HTTP status 200, a `content-type` of
/// `application/grpc…`, messages framed with gRPC's 5-byte prefix (compressed flag 0, a
/// big-endian length within the DATA received and within `max_message`), each decoding
/// as the method's output type, and `grpc-status` 0 in the trailers (or in the headers of
/// a trailers-only answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcReply {
    /// The schema: an encoded `google.protobuf.FileDescriptorSet` holding the method's
    /// file and every file it imports.
    pub schema: std::sync::Arc<[u8]>,
    /// The method's full name: `package.Service.Method`.
    pub method: String,
    /// The most bytes one reply message may have (its prefix excluded): `--max-message`.
    pub max_message: usize,
    /// `--expect-json`: fields the reply must hold with these values, in protobuf's JSON
    /// mapping (a subset of the reply: fields not named are not checked; a named message
    /// field is matched the same way, a list or a map whole). A mismatch fails the call as
    /// [`FailureKind::Body`](crate::FailureKind::Body).
    pub json: Option<String>,
    /// A streaming method's limits (`--grpc-stream-messages`, `--grpc-stream-duration`);
    /// unused by a unary method.
    pub stream: GrpcStream,
    /// `--grpc-compress gzip`: the call's messages go compressed with gzip (with
    /// `grpc-encoding: gzip` and `grpc-accept-encoding: gzip`, the caller's fields), and
    /// replies compressed with it are read; without it a compressed reply fails as
    /// `grpc_framing`.
    pub compress: bool,
}

/// How a streaming gRPC call is bounded. A server-streaming call ends (cancelled with
/// RST_STREAM CANCEL, the client's choice, not a failure) after `messages` replies or
/// `duration` after its send, whichever comes first, or when the server ends it; a
/// client-streaming call sends `messages` messages (1 when `None`). A bidirectional call
/// sends `messages` messages (1 when neither bound is given), or sends for `duration`:
/// each `interval` after the one before on the call's own schedule, or, without one,
/// each as soon as the reply to the one before arrived; then it ends its side of the
/// stream and reads the replies still to come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrpcStream {
    /// Replies to read (server streaming), or messages to send (client and bidi).
    pub messages: Option<u32>,
    /// Server streaming: how long a call may last before it is cancelled; bidi: how long
    /// a call sends messages.
    pub duration: Option<std::time::Duration>,
    /// Bidi: the time between two messages' due times (`None`: each message is sent when
    /// the reply to the one before arrived).
    pub interval: Option<std::time::Duration>,
}

impl GrpcStream {
    /// Bidi: whether message `j` (0-based) of a call is its last: the count's last, or
    /// the last the duration's schedule holds (with an interval), whichever comes first;
    /// the first when neither bound is given. A duration without an interval ends the
    /// call's sending as replies come (not known here).
    pub fn is_last(&self, j: u32) -> bool {
        let counted = self.messages.is_some_and(|n| j.saturating_add(1) >= n);
        let timed = match (self.duration, self.interval) {
            (Some(d), Some(every)) => every.saturating_mul(j.saturating_add(1)) >= d,
            _ => false,
        };
        let unbounded = self.messages.is_none() && self.duration.is_none();
        counted || timed || unbounded
    }
}

/// The most messages a client-streaming call sends (`--grpc-stream-messages`).
pub const GRPC_STREAM_MAX_MESSAGES: u32 = 10_000;

/// The most bytes a client-streaming call sends, its messages' prefixes included.
pub const GRPC_STREAM_MAX_BYTES: usize = 64 << 20;

/// gRPC's default limit on a received message (grpc-go's and grpc-java's): 4 MiB.
pub const GRPC_MAX_MESSAGE: usize = 4 << 20;

impl Expectation {
    /// True when checking needs the body bytes kept, not just counted.
    pub fn needs_body(&self) -> bool {
        self.body_contains.is_some()
    }
}

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Closed loop: each connection sends its next request when the previous one is answered.
    Closed,
    /// Open loop: this many requests per second on a fixed schedule, latency measured from
    /// each request's due time (coordinated-omission correction).
    Rate(f64),
}

/// How a rate's requests are spaced in time (rate mode only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrival {
    /// At even intervals of `1 / rate` (wrk2's schedule): a deterministic arrival process.
    #[default]
    Even,
    /// Exponential gaps with `1 / rate` as their mean, drawn from this seed: a Poisson
    /// arrival process, as independent users send (Lancet's and Treadmill's schedule). Each
    /// shard and each worker draws its own gaps from the seed mixed with its index.
    Poisson {
        /// The seed of the gaps (`--seed`).
        seed: u64,
    },
}

impl Arrival {
    /// The process's name in reports: `even` or `poisson`.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Even => "even",
            Arrival::Poisson { .. } => "poisson",
        }
    }

    /// The same process for part `index` of a load (a shard, a worker): Poisson gaps
    /// drawn from a seed of its own, so the parts' gaps are independent.
    pub fn part(self, index: u64) -> Arrival {
        match self {
            Arrival::Even => Arrival::Even,
            Arrival::Poisson { seed } => Arrival::Poisson {
                seed: crate::spec::mix(seed, index),
            },
        }
    }
}

/// A seed for part `index` of a load, from the load's seed (SplitMix64's finaliser of
/// their sum: nearby seeds and indices give unrelated results).
pub fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What individual samples to keep besides the histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Size of the uniform reservoir of per-request samples (for scatter plots).
    pub reservoir: usize,
    /// Keep every request's sample (ab's `-g`); memory grows with the run.
    pub all: bool,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            reservoir: 10_000,
            all: false,
        }
    }
}

/// One load run. A run ends at the first of `requests` and `duration`; at least one of
/// the two is set. [`LoadSpec::validate`] says what else holds.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    /// Where to send.
    pub target: Target,
    /// What to send.
    pub request: RequestSpec,
    /// What a good answer is.
    pub expect: Expectation,
    /// Concurrent connections, split among threads.
    pub connections: usize,
    /// Worker threads (one event loop each).
    pub threads: usize,
    /// Rate mode: at most `connections` open ahead of need (at the start), and more open
    /// as requests find no free connection, up to this many open at once (split among
    /// threads); `None`: as many as the open-file limit
    /// allows. A request due while every connection is busy and the cap is reached waits,
    /// counted as late for want of a connection. Not kept in result files (the schedule's
    /// facts are: the connections opened and whether the cap was reached).
    pub max_connections: Option<usize>,
    /// Stop after this many requests have completed (failed ones included).
    pub requests: Option<u64>,
    /// Stop after this long; requests in flight then are counted as aborted.
    pub duration: Option<Duration>,
    /// Closed loop or a fixed rate.
    pub pace: Pace,
    /// Rate mode: how the requests are spaced (even, or Poisson from a seed).
    pub arrival: Arrival,
    /// Per-request deadline from send to the last byte of the answer.
    pub timeout: Duration,
    /// Deadline for establishing a connection.
    pub connect_timeout: Duration,
    /// Samples to keep.
    pub record: Record,
    /// Pin worker threads to these CPUs (round robin), e.g. from `taskset`.
    pub cpus: Option<Vec<usize>>,
    /// HTTP/1.1 or HTTP/2.
    pub protocol: Protocol,
    /// HTTP/2: concurrent streams per connection (h2load's `-m`), 1..=[`MAX_STREAMS`];
    /// always 1 for HTTP/1.1. A server's lower `SETTINGS_MAX_CONCURRENT_STREAMS` wins.
    pub streams: usize,
    /// Rate mode: the schedule's first request is due this long after the start, so the
    /// shards of one load interleave their requests (a shard's `index / fleet rate`, set by
    /// [`Shard::divide`](crate::shard::Shard::divide)); zero otherwise.
    pub offset: Duration,
    /// Requests in flight per connection (HTTP/1.1 pipelining): up to this many are
    /// written together and their answers matched in order; 1 is no pipelining.
    pub pipeline: usize,
    /// Requests taken from a list instead of `target`'s path with `request`'s method and
    /// body; `request`'s headers and keep-alive still apply to each.
    pub list: Option<RequestList>,
    /// Local addresses to connect from (ab's `-B`), round robin over the run's connections;
    /// empty: the kernel's choice. All of one family; at most [`MAX_BIND`].
    pub bind: Vec<IpAddr>,
    /// Before a worker sleeps for want of events, it polls without sleeping for up to this
    /// long, at most [`MAX_BUSY_POLL`] (the polls that find nothing kept under 1/32 of the
    /// run's time). Each sleep costs a wake-up, paid by whoever sends the bytes that end it,
    /// the server under test: on a virtual machine whose idle CPUs halt, an interrupt and
    /// a VM exit. Worth it when the generator has CPUs of its own; it takes CPU from a
    /// server that shares them. Zero, the default: never. Not kept in result files (a
    /// machine's setting, like `bind`).
    pub busy_poll: Duration,
    /// WebSocket: the message (`request.body`) goes as a text message (opcode 1, so it
    /// must be UTF-8); else as a binary one.
    pub ws_text: bool,
    /// WebSocket: hold connections instead of sending messages (see [`Hold`]).
    pub ws_hold: Option<Hold>,
    /// WebSocket: text messages taken from a list (in turn or at random, their templated
    /// values drawn for each) instead of `request.body`.
    pub ws_messages: Option<crate::messages::MessageList>,
    /// Journeys run instead of requests (`--journey FILE`): each connection is one user
    /// running the file's journeys, its requests chosen from its last answers. Closed
    /// loop: `connections` users, each starting its next journey when the last ends (and
    /// `requests` counts journeys); rate mode: `Pace::Rate` journeys start a second, each
    /// by a new user on a connection as [`LoadSpec::journey_connection`] says, up to
    /// `max_connections` connections at once.
    pub journey: Option<Journeys>,
    /// Closed-model journeys in stages (`--stages`): each stage's users for its time, in
    /// order, the run as long as they are together and `connections` their most (see
    /// [`SpecBuilder::stages`]). Empty: `connections` users for the whole run.
    pub stages: Vec<Stage>,
    /// Open-model journeys in stages of their own rates (`--stages RATE/s:DURATION,…`):
    /// each stage's journeys a second for its time, in order, the run as long as they are
    /// together and `pace` their mean rate over it (see [`SpecBuilder::rate_stages`]).
    /// Empty: `pace`'s one rate for the whole run.
    pub rate_stages: Vec<RateStage>,
    /// Open-model journeys: the connection each journey's new user takes
    /// (`--journey-connection`); the closed model's users keep theirs anyway.
    pub journey_connection: JourneyConnection,
}

/// The connection an open-model journey's new user takes (`--journey-connection`). Either
/// way the user is new: an empty cookie jar, no captured values; only the transport may
/// be an earlier user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JourneyConnection {
    /// A connection an earlier journey's user left open and idle (HTTP/1.1: kept alive,
    /// nothing in flight; HTTP/2: open, not spent by a GOAWAY), the most recently freed
    /// first; else a new one, within the connection cap. k6's arrival-rate executors
    /// keep a virtual user's connections from one iteration to the next in the same way.
    #[default]
    Reuse,
    /// A connection of its own, opened when the journey starts and closed when it ends
    /// (as a Gatling virtual user has its own): the server's connection set-up is part of
    /// every journey.
    New,
}

impl JourneyConnection {
    /// As `--journey-connection` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            JourneyConnection::Reuse => "reuse",
            JourneyConnection::New => "new",
        }
    }
}

/// One stage of a closed-model journey load: `users` run journeys for `duration`. Users
/// a stage adds begin their first journey at its start; those it drops end the journey
/// they are in and begin no other until a stage has them again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// Users running journeys in the stage (1 to [`MAX_CONNECTIONS`]).
    pub users: usize,
    /// How long the stage lasts (more than 0).
    pub duration: Duration,
}

/// One stage of an open-model journey load: `rate` journeys start a second for
/// `duration`, each by a new user, at even intervals from the stage's start; the next
/// stage's rate takes over at its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateStage {
    /// Journeys started a second ([`MIN_RATE`] to [`MAX_RATE`]).
    pub rate: f64,
    /// How long the stage lasts (more than 0).
    pub duration: Duration,
}

/// Whether `--stages` gives rates (`RATE/s:DURATION`, the open model's stages) rather
/// than users (`USERS:DURATION`): an entry's first part ends in `/s`.
pub fn stages_of_rates(text: &str) -> bool {
    text.split(',').any(|part| {
        part.split(':')
            .next()
            .is_some_and(|n| n.trim().ends_with("/s"))
    })
}

/// `--stages` of rates as written: `RATE/s:DURATION` entries, comma-separated
/// (`10/s:30s,50/s:1m`), each stage's journeys a second from [`MIN_RATE`] to
/// [`MAX_RATE`] and its time more than 0; an error says how to write it.
pub fn parse_rate_stages(text: &str) -> Result<Vec<RateStage>, String> {
    let example = "write RATE/s:DURATION stages of journeys a second, comma-separated, e.g. --stages 10/s:30s,50/s:1m,10/s:30s";
    let mut stages = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let Some((rate, duration)) = part.split_once(':') else {
            return Err(format!("--stages '{part}' has no ':': {example}"));
        };
        let Some(rate) = rate.trim().strip_suffix("/s") else {
            return Err(format!("--stages '{part}': give every stage as journeys a second (RATE/s), or every one as users (USERS), not both: {example}"));
        };
        let rate = rate
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|r| rules::rate(*r).is_ok())
            .ok_or_else(|| {
                format!("--stages '{part}': the rate must be a number of journeys a second from {MIN_RATE} to {MAX_RATE:e}: {example}")
            })?;
        let duration = crate::units::parse_duration(duration.trim())
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("--stages '{part}': the duration must be more than 0, as 30s, 1m or 250ms: {example}"))?;
        stages.push(RateStage { rate, duration });
    }
    Ok(stages)
}

/// `--stages` as written: `USERS:DURATION` entries, comma-separated (`10:30s,50:1m`),
/// each stage's users from 1 to [`MAX_CONNECTIONS`] and its time more than 0; an error
/// says how to write it.
pub fn parse_stages(text: &str) -> Result<Vec<Stage>, String> {
    let example = "write USERS:DURATION stages, comma-separated, e.g. --stages 10:30s,50:1m,10:30s";
    let mut stages = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let Some((users, duration)) = part.split_once(':') else {
            return Err(format!("--stages '{part}' has no ':': {example}"));
        };
        let users = users
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_CONNECTIONS).contains(n))
            .ok_or_else(|| {
                format!("--stages '{part}': the users must be a whole number from 1 to {MAX_CONNECTIONS}: {example}")
            })?;
        let duration = crate::units::parse_duration(duration.trim())
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("--stages '{part}': the duration must be more than 0, as 30s, 1m or 250ms: {example}"))?;
        stages.push(Stage { users, duration });
    }
    Ok(stages)
}

/// A journey file to run, read and checked, shared by the run's workers.
#[derive(Debug, Clone)]
pub struct Journeys {
    /// The file as the user named it.
    pub source: String,
    /// Seeds the users' random choices, think times and drawn values.
    pub seed: u64,
    /// Its journeys.
    pub file: std::sync::Arc<crate::journey::JourneyFile>,
}

/// The same file read once: two specs share it (a journey file has no equality of its
/// own: its captures' regexes have none).
impl PartialEq for Journeys {
    fn eq(&self, other: &Journeys) -> bool {
        self.source == other.source
            && self.seed == other.seed
            && std::sync::Arc::ptr_eq(&self.file, &other.file)
    }
}

/// WebSocket's connection-hold mode: "how many idle connections does it keep?". The
/// connections open (all at once, or `open_rate` per second) and are kept; each sends a
/// ping when it opens and then every `every`, and the ping and its pong are the measured
/// unit, counted like a request. A connection the server drops is opened again and counted
/// (`reconnects`; with a close frame, its code too).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hold {
    /// Time between two pings of a connection.
    pub every: Duration,
    /// Connections opened per second; `None`: all at the start.
    pub open_rate: Option<f64>,
}

/// `Duration` as seconds in `f64`'s shortest text, for messages: `0.25 s`, `10 s`. The same
/// text as `shootout_report::plain_secs`, which the model cannot call (report depends on it).
fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

impl LoadSpec {
    /// A spec for `target` with ab's defaults: one connection, one request, 30 s timeout.
    pub fn new(target: Target) -> Self {
        LoadSpec {
            target,
            request: RequestSpec::default(),
            expect: Expectation::default(),
            connections: 1,
            threads: 1,
            max_connections: None,
            requests: Some(1),
            duration: None,
            pace: Pace::Closed,
            arrival: Arrival::Even,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            record: Record::default(),
            cpus: None,
            protocol: Protocol::Http1,
            streams: 1,
            offset: Duration::ZERO,
            pipeline: 1,
            list: None,
            bind: Vec::new(),
            busy_poll: Duration::ZERO,
            ws_text: false,
            ws_hold: None,
            ws_messages: None,
            journey: None,
            stages: Vec::new(),
            rate_stages: Vec::new(),
            journey_connection: JourneyConnection::Reuse,
        }
    }

    /// How this spec talks to the server: protocol, streams and pipeline.
    pub fn wire(&self) -> Wire {
        Wire {
            protocol: self.protocol,
            streams: self.streams,
            pipeline: self.pipeline,
        }
    }

    /// Checks the spec. A spec that passes guarantees, for the engine:
    /// - `connections` is 1..=[`MAX_CONNECTIONS`], `threads` 1..=[`MAX_THREADS`];
    /// - `requests` is not `Some(0)`, and `requests` or `duration` is set;
    /// - `duration`, `timeout` and `connect_timeout` are more than zero and at most
    ///   [`MAX_DURATION`] (365 days), so `Instant::now() + d` never overflows; `offset` is
    ///   at most [`MAX_DURATION`] too;
    /// - a `Pace::Rate` is finite, from [`MIN_RATE`] to [`MAX_RATE`], so a schedule's due
    ///   times (`k / rate` seconds, for any `k` the run reaches) fit a `Duration`;
    /// - the method is a token, header names are tokens, no header value and not the
    ///   target's path has a CR, LF, NUL or other control character, the path has no
    ///   space, no header sets the framing (`Content-Length`, `Transfer-Encoding`), and the
    ///   body is at most [`MAX_BODY`] bytes;
    /// - `cpus`, when given, name CPUs from 0 to [`MAX_CPU`] (whether they are available to
    ///   the process is checked where the spec is built);
    /// - `streams` is 1..=[`MAX_STREAMS`], and more than 1 only over HTTP/2; HTTP/2 keeps
    ///   connections open (`keepalive`); connections × streams is at most
    ///   [`MAX_IN_FLIGHT`];
    /// - `pipeline` is 1..=[`MAX_PIPELINE`], and 1 without keep-alive;
    /// - a `list` has at least one entry, and each entry's method, headers, path (no
    ///   space, no control character) and body pass the same checks as the request's;
    /// - over HTTP/2, `pipeline` is 1 and there is no `list`;
    /// - `bind` holds at most [`MAX_BIND`] addresses, all IPv4 or all IPv6, none
    ///   unspecified or multicast, and none with a unix socket target.
    pub fn validate(&self) -> Result<(), SpecError> {
        rules::connections(self.connections)?;
        rules::threads(self.threads)?;
        if self.requests.is_none() && self.duration.is_none() {
            return Err(SpecError::NoBound);
        }
        if self.requests == Some(0) {
            return Err(SpecError::NoRequests);
        }
        for (what, d) in [
            ("the duration", self.duration),
            ("the timeout", Some(self.timeout)),
            ("the connect timeout", Some(self.connect_timeout)),
        ] {
            if let Some(value) = d.filter(|d| d.is_zero() || *d > MAX_DURATION) {
                return Err(SpecError::Duration { what, value });
            }
        }
        if self.offset > MAX_DURATION {
            return Err(SpecError::Duration {
                what: "the schedule offset",
                value: self.offset,
            });
        }
        if let Pace::Rate(r) = self.pace {
            rules::rate(r)?;
        }
        self.request.validate()?;
        if self.target.path.chars().any(|c| c == ' ' || is_control(c)) {
            return Err(SpecError::TargetPath(shown(&self.target.path)));
        }
        if let Some(&cpu) = self.cpus.iter().flatten().find(|&&c| c > MAX_CPU) {
            return Err(SpecError::Cpu(cpu));
        }
        if let Some(max) = self.max_connections {
            rules::connections(max)?;
            if self.pace == Pace::Closed {
                return Err(SpecError::MaxConnectionsClosed);
            }
            if max < self.connections {
                return Err(SpecError::MaxBelowConnections {
                    max,
                    connections: self.connections,
                });
            }
        }
        rules::streams(self.streams)?;
        rules::busy_poll(self.busy_poll)?;
        if self.journey.is_none() {
            // A journey's users share connections, `streams` to each: -c of them, a
            // step each in flight.
            rules::in_flight(self.connections, self.streams)?;
        }
        if self.protocol == Protocol::Http2 && !self.request.keepalive {
            return Err(SpecError::Http2NoKeepalive);
        }
        if self.protocol == Protocol::Http3 {
            if self.target.scheme != Scheme::Https || self.target.unix_socket.is_some() {
                return Err(SpecError::Http3NeedsHttps(self.target.url.clone()));
            }
            if !self.request.keepalive {
                return Err(SpecError::Http3NoKeepalive);
            }
        }
        rules::pipeline(self.pipeline)?;
        if self.pipeline > 1 && !self.request.keepalive {
            return Err(SpecError::PipelineClose);
        }
        if let Some(list) = &self.list {
            validate_list(list)?;
        }
        if let Some(e) = self.wire().conflict(self.list.is_some()) {
            return Err(e);
        }
        self.validate_websocket()?;
        self.validate_grpc()?;
        self.validate_journey()?;
        self.validate_bind()
    }

    /// The rules of a journey spec: HTTP/1.1 over kept-alive connections, one request in
    /// flight per user, no request list.
    fn validate_journey(&self) -> Result<(), SpecError> {
        if self.journey.is_none() {
            return match (self.stages.is_empty(), self.rate_stages.is_empty()) {
                (true, true) => Ok(()),
                (false, _) => Err(SpecError::Stages(
                    "stages ramp a journey's users: give --journey FILE (a plan steps connections with stages = [..])",
                )),
                (_, false) => Err(SpecError::Stages(
                    "stages of a rate (RATE/s) start journeys, and a load of URLs has none: give --journey FILE, or run each rate as a load of its own (a plan's rate = [..] steps them)",
                )),
            };
        }
        self.validate_rate_stages()?;
        if !self.stages.is_empty() {
            let why = if self.pace != Pace::Closed {
                Some("stages ramp the users of the closed model: drop --rate (or --find-max)")
            } else if self.requests.is_some() {
                Some("stages run for their times: drop -n")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(SpecError::Stages(why));
            }
        }
        let forbidden = |n: &str| {
            [
                "connection",
                "keep-alive",
                "proxy-connection",
                "upgrade",
                "transfer-encoding",
            ]
            .iter()
            .any(|f| n.eq_ignore_ascii_case(f))
        };
        let h2_header = self.journey.as_ref().and_then(|j| {
            j.file.journeys.iter().find_map(|jj| {
                jj.steps.iter().find_map(|s| {
                    let (n, _) = s.headers.iter().find(|(n, _)| forbidden(n))?;
                    Some(format!(
                        "step '{}' of journey '{}' sets '{n}', a field of HTTP/1.1 connections that HTTP/2 forbids (RFC 9113 §8.2.2): remove it from the step, or drop --http2",
                        s.name, jj.name
                    ))
                })
            })
        });
        if let (Protocol::Http2, Some(why)) = (self.protocol, h2_header) {
            return Err(SpecError::JourneyHeader(why));
        }
        let why = if !matches!(self.protocol, Protocol::Http1 | Protocol::Http2) {
            "journeys run over HTTP/1.1 and HTTP/2 for now: drop --http3 (or protocol = \"h3\" in a plan)"
        } else if self.list.is_some() {
            "a journey chooses its own requests: drop --urls"
        } else if self.pipeline > 1 {
            "a user sends its next step after the last one's answer: drop --pipeline"
        } else if self.streams > 1 && self.pace != Pace::Closed {
            "users share HTTP/2 connections in the closed model; in the open model each journey is a new user alone on its connection while it lasts: drop --streams (or --rate and --find-max)"
        } else if !self.request.keepalive {
            "each user keeps its connection open between its steps, as browsers do: drop --no-keepalive"
        } else if !self.request.body.is_empty() || self.request.method != "GET" {
            "each step says its method and body: drop -m, -p and -b"
        } else {
            return Ok(());
        };
        Err(SpecError::Journey(why))
    }

    /// The rules of stages of journeys a second: each at a rate the schedule keeps, as
    /// long as the run (and the run no longer), at even intervals, in the open model (the
    /// pace their mean), not beside stages of users, and not counted in journeys.
    fn validate_rate_stages(&self) -> Result<(), SpecError> {
        if self.rate_stages.is_empty() {
            return Ok(());
        }
        for s in &self.rate_stages {
            rules::rate(s.rate)?;
            if s.duration.is_zero() || s.duration > MAX_DURATION {
                return Err(SpecError::Duration {
                    what: "a stage's duration (--stages)",
                    value: s.duration,
                });
            }
        }
        let total = self
            .rate_stages
            .iter()
            .try_fold(Duration::ZERO, |t, s| t.checked_add(s.duration));
        let why = if !self.stages.is_empty() {
            "give every stage as journeys a second (RATE/s:DURATION) or every one as users (USERS:DURATION), not both"
        } else if !matches!(self.pace, Pace::Rate(_)) {
            "stages of journeys a second pace the open model: give them with --stages RATE/s:DURATION and no -c"
        } else if self.requests.is_some() {
            "stages run for their times: drop -n"
        } else if total.is_none() || total != self.duration {
            "the run lasts its stages together: drop -d"
        } else if self.arrival != Arrival::Even {
            "stages of journeys a second start them at even intervals for now: drop --arrival poisson"
        } else if !self.offset.is_zero() {
            "stages ramp the journeys of one process (a shard would start every stage's): drop --shard or --shards"
        } else {
            return Ok(());
        };
        Err(SpecError::Stages(why))
    }

    /// The rules of a gRPC spec: its calls are HTTP/2 streams; a reply has room for a
    /// message; a list of messages replaces the one message; a call is one request, not a
    /// journey's step.
    fn validate_grpc(&self) -> Result<(), SpecError> {
        let Some(g) = &self.expect.grpc else {
            return Ok(());
        };
        if self.protocol != Protocol::Http2 {
            return Err(SpecError::GrpcNeedsHttp2(self.protocol.as_str()));
        }
        let why = if g.max_message == 0 {
            "a reply needs room for its message: give --max-message a size in bytes, e.g. 4194304 (4 MiB, the default)"
        } else if self.ws_messages.is_some() && !self.request.body.is_empty() {
            "--messages sends its list's messages: drop --message and -p"
        } else if self.journey.is_some() {
            "a journey's steps are HTTP requests: drop --journey"
        } else {
            return Ok(());
        };
        Err(SpecError::Grpc(why))
    }

    /// The rules of a WebSocket spec: `ws://` and `wss://` go with the WebSocket
    /// protocol and nothing else does; the message is at most [`MAX_MESSAGE`] bytes and,
    /// as text, UTF-8; connections stay open; an echo check needs WebSocket.
    fn validate_websocket(&self) -> Result<(), SpecError> {
        let ws = self.protocol == Protocol::WebSocket;
        if ws != self.target.scheme.websocket() {
            return Err(SpecError::WebSocketScheme(self.target.url.clone()));
        }
        if !ws {
            // A gRPC call checks echoes and sends lists of messages too.
            let grpc = self.expect.grpc.is_some();
            return match (
                self.expect.echo && !grpc,
                self.ws_text,
                self.ws_hold,
                self.ws_messages.is_some() && !grpc,
            ) {
                (false, false, None, false) => Ok(()),
                _ => Err(SpecError::WebSocketOnly),
            };
        }
        if self.ws_messages.is_some() {
            if !self.request.body.is_empty() || self.ws_text {
                return Err(SpecError::MessagesAndBody);
            }
            if self.ws_hold.is_some() {
                return Err(SpecError::Hold(
                    "it sends pings, not messages: drop --ws-messages",
                ));
            }
        }
        if self.request.body.len() > MAX_MESSAGE {
            return Err(SpecError::MessageSize(self.request.body.len()));
        }
        if self.ws_text && std::str::from_utf8(&self.request.body).is_err() {
            return Err(SpecError::TextNotUtf8);
        }
        if !self.request.keepalive {
            return Err(SpecError::WebSocketNoKeepalive);
        }
        if let Some(h) = self.ws_hold {
            let bad_rate = h
                .open_rate
                .is_some_and(|r| !(MIN_RATE..=MAX_RATE).contains(&r));
            if h.every.is_zero() || h.every > MAX_DURATION || bad_rate {
                return Err(SpecError::Hold("the ping interval must be more than 0 and the open rate from 0.001 to 10⁹ connections per second"));
            }
            if self.pace != Pace::Closed || self.pipeline > 1 {
                return Err(SpecError::Hold("it keeps one ping in flight per connection: drop --rate and --pipeline (--ws-hold-rate paces the opening)"));
            }
            if self.expect.echo
                || self.expect.length.is_some()
                || self.expect.body_contains.is_some()
            {
                return Err(SpecError::Hold("its pongs carry no reply to check: drop --expect-echo, --expect-length and --expect-body-contains"));
            }
        }
        Ok(())
    }

    /// The rules of [`LoadSpec::bind`].
    fn validate_bind(&self) -> Result<(), SpecError> {
        let Some(first) = self.bind.first() else {
            return Ok(());
        };
        if self.bind.len() > MAX_BIND {
            return Err(SpecError::BindCount(self.bind.len()));
        }
        if self.target.unix_socket.is_some() {
            return Err(SpecError::BindUnix);
        }
        if let Some(a) = self
            .bind
            .iter()
            .find(|a| a.is_unspecified() || a.is_multicast())
        {
            return Err(SpecError::BindAddress(*a));
        }
        if let Some(b) = self.bind.iter().find(|b| b.is_ipv4() != first.is_ipv4()) {
            return Err(SpecError::BindFamilies(*first, *b));
        }
        Ok(())
    }

    /// A builder for a spec to `target`, from [`LoadSpec::new`]'s defaults.
    pub fn builder(target: Target) -> SpecBuilder {
        SpecBuilder {
            spec: LoadSpec::new(target),
            threads: None,
            available_cpus: 1,
        }
    }

    /// A builder that starts from this spec, its thread count as given (e.g. a warm-up
    /// made from the measured run, with another bound).
    pub fn to_builder(&self) -> SpecBuilder {
        SpecBuilder {
            spec: self.clone(),
            threads: Some(self.threads),
            available_cpus: 1,
        }
    }

    /// The connections a run opens: [`LoadSpec::connections`], but no more than there are
    /// requests to send (see `connections_for`).
    pub fn open_connections(&self) -> usize {
        connections_for(self.connections, self.requests)
    }
}

/// The checks of [`LoadSpec::validate`] on a request list: the same as on one request.
fn validate_list(list: &RequestList) -> Result<(), SpecError> {
    use crate::requests::{MAX_ENTRIES, MAX_LIST_BODIES};
    if list.entries.is_empty() {
        return Err(SpecError::EmptyList(list.source.clone()));
    }
    let too_large = |what: String| SpecError::ListTooLarge {
        source_name: list.source.clone(),
        what,
    };
    if list.entries.len() > MAX_ENTRIES {
        return Err(too_large(format!(
            "has {} entries, more than the {MAX_ENTRIES} a list may have",
            list.entries.len()
        )));
    }
    // Each body once, however many entries share it.
    let mut seen = std::collections::HashSet::new();
    let bodies = list
        .entries
        .iter()
        .filter(|e| seen.insert(std::sync::Arc::as_ptr(&e.body) as *const u8))
        .fold(0usize, |sum, e| sum.saturating_add(e.body.len()));
    if bodies > MAX_LIST_BODIES {
        return Err(too_large(format!(
            "has bodies of {bodies} bytes, more than the {} MiB a list's bodies may hold together",
            MAX_LIST_BODIES >> 20
        )));
    }
    for e in &list.entries {
        let request = RequestSpec {
            method: e.method.clone(),
            headers: e.headers.clone(),
            body: Vec::new(),
            keepalive: true,
        };
        let mut checked = request.validate().and_then(|()| {
            rules::body(e.body.len())?;
            check_path(&e.path)
        });
        if checked.is_ok() && e.path.contains(' ') {
            checked = Err(RequestError::PathControl(shown(&e.path)));
        }
        checked.map_err(|error| SpecError::ListEntry {
            source_name: list.source.clone(),
            line: e.line,
            error,
        })?;
    }
    Ok(())
}

/// The rule that no run opens more connections than it sends requests: `connections`
/// lowered to `requests` when that is fewer (a request count of 0 counts as 1).
fn connections_for(connections: usize, requests: Option<u64>) -> usize {
    match requests {
        Some(n) => connections.min(usize::try_from(n.max(1)).unwrap_or(usize::MAX)),
        None => connections,
    }
}

/// The rule for worker threads: at least one, at most one per connection and at most
/// [`MAX_THREADS`]. `connections` must be at least 1.
pub fn threads_for(threads: usize, connections: usize) -> usize {
    threads.clamp(1, connections.min(MAX_THREADS))
}

/// Builds a [`LoadSpec`] by the rules every spec follows, whoever writes it (the `load`
/// flags, a plan's step, a warm-up): the request count is at least 1 and the connections
/// and an explicit thread count are in range (checked in that order, before anything is
/// lowered, so an error names what was asked); then connections are lowered to the
/// request count (`connections_for`), the thread count defaults to one per CPU the run
/// may use (the pinned [`LoadSpec::cpus`], else [`SpecBuilder::available_cpus`]) and is
/// kept to [`threads_for`]; last the whole spec passes [`LoadSpec::validate`]. The model
/// does no I/O: the caller says how many CPUs are available.
#[derive(Debug, Clone)]
pub struct SpecBuilder {
    spec: LoadSpec,
    threads: Option<usize>,
    available_cpus: usize,
}

impl SpecBuilder {
    /// The request to send.
    pub fn request(mut self, request: RequestSpec) -> Self {
        self.spec.request = request;
        self
    }

    /// What a good answer is.
    pub fn expect(mut self, expect: Expectation) -> Self {
        self.spec.expect = expect;
        self
    }

    /// Connections asked for (lowered to the request count when that is fewer).
    pub fn connections(mut self, connections: usize) -> Self {
        self.spec.connections = connections;
        self
    }

    /// Rate mode: how requests are spaced (see [`LoadSpec::arrival`]).
    pub fn arrival(mut self, arrival: Arrival) -> Self {
        self.spec.arrival = arrival;
        self
    }

    /// Open-model journeys: the connection each journey's user takes.
    pub fn journey_connection(mut self, how: JourneyConnection) -> Self {
        self.spec.journey_connection = how;
        self
    }

    /// Rate mode: the most connections the run may open (see [`LoadSpec::max_connections`]).
    pub fn max_connections(mut self, max: Option<usize>) -> Self {
        self.spec.max_connections = max;
        self
    }

    /// Worker threads asked for; `None` for the default (one per CPU the run may use).
    pub fn threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        self
    }

    /// How many CPUs this process may run on: the default thread count when neither
    /// threads nor CPUs are given (1 if never said).
    pub fn available_cpus(mut self, n: usize) -> Self {
        self.available_cpus = n;
        self
    }

    /// Pin worker threads to these CPUs (and default to one thread per CPU).
    pub fn cpus(mut self, cpus: Option<Vec<usize>>) -> Self {
        self.spec.cpus = cpus;
        self
    }

    /// When the run ends: after `requests`, after `duration`, at the first of the two.
    pub fn bound(mut self, requests: Option<u64>, duration: Option<Duration>) -> Self {
        (self.spec.requests, self.spec.duration) = (requests, duration);
        self
    }

    /// Closed loop or a fixed rate.
    pub fn pace(mut self, pace: Pace) -> Self {
        self.spec.pace = pace;
        self
    }

    /// The per-request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.spec.timeout = timeout;
        self
    }

    /// How long workers poll before they sleep (checked by [`LoadSpec::validate`]).
    pub fn busy_poll(mut self, busy_poll: Duration) -> Self {
        self.spec.busy_poll = busy_poll;
        self
    }

    /// The connect timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.spec.connect_timeout = timeout;
        self
    }

    /// HTTP/1.1 or HTTP/2, and the streams per connection (1 for HTTP/1.1).
    pub fn protocol(mut self, protocol: Protocol, streams: usize) -> Self {
        (self.spec.protocol, self.spec.streams) = (protocol, streams);
        self
    }

    /// WebSocket: hold connections and ping them instead of sending messages.
    pub fn ws_hold(mut self, hold: Option<Hold>) -> Self {
        self.spec.ws_hold = hold;
        self
    }

    /// WebSocket: send the text messages of a list instead of one message.
    pub fn ws_messages(mut self, list: Option<crate::messages::MessageList>) -> Self {
        self.spec.ws_messages = list;
        self
    }

    /// WebSocket: send the message as text (else binary).
    pub fn ws_text(mut self, text: bool) -> Self {
        self.spec.ws_text = text;
        self
    }

    /// Requests in flight per connection (1: no pipelining).
    pub fn pipeline(mut self, depth: usize) -> Self {
        self.spec.pipeline = depth;
        self
    }

    /// Journeys run instead of requests.
    pub fn journey(mut self, journey: Option<Journeys>) -> Self {
        self.spec.journey = journey;
        self
    }

    /// Closed-model journeys in `stages` (none: unchanged): the run lasts their times
    /// together, with as many users as the largest stage has (set here, over any
    /// `bound` or `connections` given).
    pub fn stages(mut self, stages: Vec<Stage>) -> Self {
        if !stages.is_empty() {
            self.spec.duration = Some(stages.iter().map(|s| s.duration).sum());
            self.spec.connections = stages.iter().map(|s| s.users).max().unwrap_or(1);
        }
        self.spec.stages = stages;
        self
    }

    /// Open-model journeys in stages of their own rates (none: unchanged): the run lasts
    /// their times together, bounded by nothing else, paced at their mean rate over it
    /// (each stage's rate weighted by its time; the engine keeps each stage's own), so
    /// the schedule's target is the journeys due in all over the run's time. Set after
    /// `pace` and `bound`, which it overrides.
    pub fn rate_stages(mut self, stages: Vec<RateStage>) -> Self {
        if !stages.is_empty() {
            let total: Duration = stages.iter().map(|s| s.duration).sum();
            let journeys: f64 = stages
                .iter()
                .map(|s| s.rate * s.duration.as_secs_f64())
                .sum();
            self.spec.duration = Some(total);
            self.spec.requests = None;
            self.spec.pace = Pace::Rate(journeys / total.as_secs_f64());
        }
        self.spec.rate_stages = stages;
        self
    }

    /// Requests taken from a list.
    pub fn list(mut self, list: Option<RequestList>) -> Self {
        self.spec.list = list;
        self
    }

    /// Local addresses to connect from, round robin over the connections.
    pub fn bind(mut self, bind: Vec<IpAddr>) -> Self {
        self.spec.bind = bind;
        self
    }

    /// The samples to keep.
    pub fn record(mut self, record: Record) -> Self {
        self.spec.record = record;
        self
    }

    /// The spec, by the rules on [`SpecBuilder`].
    pub fn build(self) -> Result<LoadSpec, SpecError> {
        let SpecBuilder {
            mut spec,
            threads,
            available_cpus,
        } = self;
        if spec.requests == Some(0) {
            return Err(SpecError::NoRequests);
        }
        rules::connections(spec.connections)?;
        threads.map(rules::threads).transpose()?;
        spec.connections = spec.open_connections();
        let wanted = threads.unwrap_or_else(|| spec.cpus.as_ref().map_or(available_cpus, Vec::len));
        spec.threads = threads_for(wanted, spec.connections);
        spec.validate()?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bidirectional call's last message: the count's, the schedule's within its
    /// duration (whichever comes first), the first without either bound; unknown ahead
    /// for a duration without a schedule.
    #[test]
    fn a_bidi_call_knows_its_last_message() {
        let ms = Duration::from_millis;
        let s = |messages, duration, interval| GrpcStream {
            messages,
            duration,
            interval,
        };
        let lasts = |g: GrpcStream| (0..20).find(|&j| g.is_last(j));
        assert_eq!(lasts(s(Some(5), None, None)), Some(4));
        assert_eq!(lasts(s(None, Some(ms(40)), Some(ms(10)))), Some(3));
        assert_eq!(lasts(s(None, Some(ms(45)), Some(ms(10)))), Some(4));
        assert_eq!(lasts(s(Some(2), Some(ms(40)), Some(ms(10)))), Some(1));
        assert_eq!(lasts(s(None, None, Some(ms(10)))), Some(0));
        assert_eq!(lasts(s(None, Some(ms(40)), None)), None);
    }

    /// `--stages` reads `USERS:DURATION` entries; the builder makes the run as long as
    /// they are together, with as many users as the largest; they go with closed-model
    /// journeys only, and each refusal says what to drop.
    #[test]
    fn stages_read_and_go_with_closed_model_journeys() {
        let stages = parse_stages("10:30s, 50:1m,1:250ms").unwrap();
        let secs = |s| Duration::from_millis(s);
        assert_eq!(
            stages,
            [
                Stage {
                    users: 10,
                    duration: secs(30_000)
                },
                Stage {
                    users: 50,
                    duration: secs(60_000)
                },
                Stage {
                    users: 1,
                    duration: secs(250)
                },
            ]
        );
        for (bad, said) in [
            ("10", "'10' has no ':'"),
            ("0:1s", "'0:1s': the users must be a whole number from 1"),
            ("x:1s", "'x:1s': the users must be"),
            ("5:0s", "'5:0s': the duration must be more than 0"),
            ("5:", "'5:': the duration must be more than 0"),
        ] {
            let e = parse_stages(bad).unwrap_err();
            assert!(
                e.contains(said) && e.contains("e.g. --stages 10:30s"),
                "{bad}: {e}"
            );
        }
        let file = crate::journey::parse(
            "[[journey]]\nname = \"j\"\n[[journey.step]]\nget = \"/\"\n",
            "j.toml",
            &mut |_| Err("no files".into()),
        )
        .unwrap();
        let journeys = Journeys {
            source: "j.toml".into(),
            seed: 1,
            file: std::sync::Arc::new(file),
        };
        let base = || {
            LoadSpec::builder(Target::parse("http://127.0.0.1/").unwrap())
                .journey(Some(journeys.clone()))
                .bound(None, None)
        };
        let s = base().stages(stages.clone()).build().unwrap();
        assert_eq!((s.connections, s.duration), (50, Some(secs(90_250))));
        let refused = |b: SpecBuilder| b.build().unwrap_err().to_string();
        assert!(
            refused(base().pace(Pace::Rate(5.0)).stages(stages.clone())).contains("drop --rate")
        );
        assert!(
            refused(base().stages(stages.clone()).bound(Some(5), Some(secs(1))))
                .contains("drop -n")
        );
        let plain = LoadSpec::builder(Target::parse("http://127.0.0.1/").unwrap()).stages(stages);
        assert!(refused(plain).contains("give --journey FILE"));
    }

    /// `--stages RATE/s:DURATION` reads stages of journeys a second; the builder makes
    /// the run as long as they are together, paced at their mean rate; they go with
    /// open-model journeys at even intervals only, and each refusal says what to drop.
    #[test]
    fn stages_of_rates_read_and_go_with_open_model_journeys() {
        let ms = Duration::from_millis;
        assert!(stages_of_rates("10/s:30s,50/s:1m") && !stages_of_rates("10:30s,50:1m"));
        let stages = parse_rate_stages("4/s:1s, 10/s:1s,2/s:2s").unwrap();
        let stage = |rate, duration| RateStage { rate, duration };
        assert_eq!(
            stages,
            [
                stage(4.0, ms(1000)),
                stage(10.0, ms(1000)),
                stage(2.0, ms(2000))
            ]
        );
        for (bad, said) in [
            ("10/s", "'10/s' has no ':'"),
            (
                "10/s:1s,20:1s",
                "'20:1s': give every stage as journeys a second",
            ),
            (
                "0/s:1s",
                "'0/s:1s': the rate must be a number of journeys a second",
            ),
            ("x/s:1s", "'x/s:1s': the rate must be"),
            ("5/s:0s", "'5/s:0s': the duration must be more than 0"),
        ] {
            let e = parse_rate_stages(bad).unwrap_err();
            assert!(
                e.contains(said) && e.contains("e.g. --stages 10/s:30s"),
                "{bad}: {e}"
            );
        }
        let file = crate::journey::parse(
            "[[journey]]\nname = \"j\"\n[[journey.step]]\nget = \"/\"\n",
            "j.toml",
            &mut |_| Err("no files".into()),
        )
        .unwrap();
        let journeys = Journeys {
            source: "j.toml".into(),
            seed: 1,
            file: std::sync::Arc::new(file),
        };
        let base = || {
            LoadSpec::builder(Target::parse("http://127.0.0.1/").unwrap())
                .journey(Some(journeys.clone()))
                .bound(None, None)
        };
        // 4 + 10 + 4 journeys over 4 s: 4.5 a second.
        let s = base().rate_stages(stages.clone()).build().unwrap();
        assert_eq!(
            (s.pace, s.duration, s.requests),
            (Pace::Rate(4.5), Some(ms(4000)), None)
        );
        let refused = |b: SpecBuilder| b.build().unwrap_err().to_string();
        assert!(
            refused(base().rate_stages(stages.clone()).bound(Some(5), None)).contains("drop -n")
        );
        assert!(refused(
            base()
                .rate_stages(stages.clone())
                .bound(None, Some(ms(500)))
        )
        .contains("drop -d"));
        assert!(refused(
            base()
                .rate_stages(stages.clone())
                .arrival(Arrival::Poisson { seed: 1 })
        )
        .contains("drop --arrival poisson"));
        let users = parse_stages("2:1s").unwrap();
        assert!(refused(base().stages(users).rate_stages(stages.clone())).contains("not both"));
        let plain =
            LoadSpec::builder(Target::parse("http://127.0.0.1/").unwrap()).rate_stages(stages);
        assert!(refused(plain).contains("give --journey FILE"));
    }

    /// Journeys go over HTTP/1.1 and HTTP/2, one step at a time per user: over HTTP/2 a
    /// step with a field of HTTP/1.1's connections is refused naming the step, as is
    /// HTTP/3; `--streams` (users sharing a connection) goes with the closed model only.
    #[test]
    fn journeys_go_over_http2_one_stream_at_a_time_without_connection_fields() {
        let journeys = |text: &str| Journeys {
            source: "j.toml".into(),
            seed: 1,
            file: std::sync::Arc::new(
                crate::journey::parse(text, "j.toml", &mut |_| Err("no files".into())).unwrap(),
            ),
        };
        let plain = "[[journey]]\nname = \"j\"\n[[journey.step]]\nname = \"s\"\nget = \"/\"\n";
        let upgrade = format!("{plain}headers = {{ Upgrade = \"websocket\" }}\n");
        let paced = |text: &str, protocol, streams, pace| {
            let url = match protocol {
                Protocol::Http3 => "https://127.0.0.1/",
                _ => "http://127.0.0.1/",
            };
            LoadSpec::builder(Target::parse(url).unwrap())
                .journey(Some(journeys(text)))
                .protocol(protocol, streams)
                .pace(pace)
                .build()
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let spec = |text: &str, protocol, streams| paced(text, protocol, streams, Pace::Closed);
        assert_eq!(spec(plain, Protocol::Http2, 1), Ok(()));
        assert_eq!(spec(&upgrade, Protocol::Http1, 1), Ok(()));
        let e = spec(&upgrade, Protocol::Http2, 1).unwrap_err();
        assert!(
            e.contains("step 's' of journey 'j' sets 'Upgrade'") && e.contains("drop --http2"),
            "{e}"
        );
        assert_eq!(
            spec(plain, Protocol::Http2, 4),
            Ok(()),
            "4 users to a connection"
        );
        let e = paced(plain, Protocol::Http2, 4, Pace::Rate(10.0)).unwrap_err();
        assert!(
            e.contains("closed model") && e.contains("drop --streams"),
            "{e}"
        );
        let e = spec(plain, Protocol::Http1, 4).unwrap_err();
        assert!(e.contains("--http2"), "{e}");
        let e = spec(plain, Protocol::Http3, 1).unwrap_err();
        assert!(e.contains("drop --http3"), "{e}");
    }

    #[test]
    fn url_without_trailing_slash_gets_root_path() {
        let t = Target::parse("http://localhost:8080").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("localhost", 8080, "/")
        );
        assert_eq!(t.host_header, "localhost:8080");
    }

    #[test]
    fn url_forms() {
        let t = Target::parse("127.0.0.1:9000/a/b?x=1&y").unwrap();
        assert_eq!(t.scheme, Scheme::Http);
        assert_eq!(t.path, "/a/b?x=1&y");
        let t = Target::parse("https://[::1]/").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.scheme),
            ("::1", 443, Scheme::Https)
        );
        assert_eq!(t.host_header, "[::1]");
        let t = Target::parse("http://example.test").unwrap();
        assert_eq!((t.port, t.host_header.as_str()), (80, "example.test"));
    }

    /// A method with CR/LF was sent raw and carried an injected header.
    #[test]
    fn method_injection_is_refused() {
        assert!(check_method("GET").is_ok() && check_method("M-SEARCH").is_ok());
        for bad in [
            "GET / HTTP/1.1\r\nX-Injected: 1\r\n",
            "GE T",
            "",
            "GET\n",
            "G\0",
        ] {
            let e = check_method(bad).unwrap_err();
            assert!(matches!(e, RequestError::Method(_)), "{bad:?}");
            assert_eq!(e.to_string().lines().count(), 1, "{e}");
        }
    }

    /// Header names with spaces went out as they were; values with CR/LF too.
    #[test]
    fn header_names_must_be_tokens_and_values_one_line() {
        assert!(check_header("X-Request-Id", "a b\tc").is_ok());
        assert!(matches!(
            check_header("X Bad", "1"),
            Err(RequestError::HeaderName(_))
        ));
        assert!(matches!(
            check_header("X-A:", "1"),
            Err(RequestError::HeaderName(_))
        ));
        for v in ["1\r\nX-B: 2", "1\n", "a\0b", "\x7f"] {
            assert!(
                matches!(check_header("X-A", v), Err(RequestError::HeaderValue(_))),
                "{v:?}"
            );
        }
    }

    /// `-H 'Transfer-Encoding: chunked' -p f` sent both TE and a Content-Length.
    #[test]
    fn framing_headers_belong_to_shootout() {
        for name in ["Content-Length", "transfer-encoding", "CONTENT-LENGTH"] {
            let e = check_header(name, "5").unwrap_err();
            assert!(matches!(e, RequestError::Framing(_)), "{name}");
            assert!(
                e.to_string().contains("set by shootout from the body"),
                "{e}"
            );
        }
    }

    #[test]
    fn paths_start_with_a_slash_and_have_no_control_characters() {
        assert!(check_path("/a b?c=ä").is_ok());
        // A URL parser drops a tab without a word: `/a\tb` was requested as `/ab`.
        assert!(matches!(
            check_path("/a\tb"),
            Err(RequestError::PathControl(_))
        ));
        assert_eq!(path_target("/a b?c=ä").unwrap(), "/a%20b?c=%C3%A4");
        assert!(matches!(check_path("a"), Err(RequestError::PathStart(_))));
        let e = check_path("/a\r\nX-Injected: 1").unwrap_err();
        assert!(matches!(e, RequestError::PathControl(_)));
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }

    fn valid() -> LoadSpec {
        let mut s = LoadSpec::new(Target::parse("http://127.0.0.1:1/").unwrap());
        s.duration = Some(Duration::from_secs(1));
        s
    }

    #[test]
    fn a_valid_spec_passes_and_each_broken_invariant_fails() {
        assert_eq!(valid().validate(), Ok(()));
        type Breaks = fn(&mut LoadSpec);
        let broken: Vec<(&str, Breaks)> = vec![
            ("connections 0", |s| s.connections = 0),
            ("connections max", |s| s.connections = MAX_CONNECTIONS + 1),
            ("threads 0", |s| s.threads = 0),
            ("threads max", |s| s.threads = MAX_THREADS + 1),
            ("requests 0", |s| s.requests = Some(0)),
            ("no bound", |s| (s.requests, s.duration) = (None, None)),
            ("duration 0", |s| s.duration = Some(Duration::ZERO)),
            ("duration long", |s| s.duration = Some(MAX_DURATION * 2)),
            ("timeout 0", |s| s.timeout = Duration::ZERO),
            ("timeout long", |s| s.connect_timeout = Duration::MAX),
            ("rate 0", |s| s.pace = Pace::Rate(0.0)),
            ("rate tiny", |s| s.pace = Pace::Rate(1e-300)),
            ("rate huge", |s| s.pace = Pace::Rate(1e300)),
            ("rate nan", |s| s.pace = Pace::Rate(f64::NAN)),
            ("method", |s| s.request.method = "GET /x".into()),
            ("framing", |s| {
                s.request
                    .headers
                    .push(("Content-Length".into(), "1".into()))
            }),
            ("body", |s| s.request.body = vec![0; MAX_BODY + 1]),
            ("path", |s| s.target.path = "/a b".into()),
            ("cpus", |s| s.cpus = Some(vec![0, MAX_CPU + 1])),
            ("busy poll", |s| {
                s.busy_poll = MAX_BUSY_POLL + Duration::from_nanos(1)
            }),
            ("pipeline 0", |s| s.pipeline = 0),
            ("pipeline max", |s| s.pipeline = MAX_PIPELINE + 1),
            ("pipeline without keep-alive", |s| {
                s.pipeline = 2;
                s.request.keepalive = false;
            }),
            ("list entry", |s| {
                s.list = Some(crate::requests::RequestList {
                    source: "l".into(),
                    entries: vec![crate::requests::ListEntry {
                        method: "GET".into(),
                        path: "/a b".into(),
                        headers: Vec::new(),
                        body: Default::default(),
                        line: 1,
                    }],
                    order: Default::default(),
                    seed: 0,
                })
            }),
        ];
        for (what, breaks) in broken {
            let mut s = valid();
            breaks(&mut s);
            assert!(s.validate().is_err(), "{what}");
        }
        let mut s = valid();
        s.request.body = vec![0; MAX_BODY];
        s.pace = Pace::Rate(MAX_RATE);
        s.duration = Some(MAX_DURATION);
        assert_eq!(s.validate(), Ok(()));
    }

    fn builder() -> SpecBuilder {
        LoadSpec::builder(Target::parse("http://127.0.0.1:1/").unwrap())
    }

    #[test]
    fn the_builder_lowers_connections_to_the_requests() {
        let s = builder()
            .connections(10)
            .bound(Some(5), None)
            .build()
            .unwrap();
        assert_eq!((s.connections, s.open_connections()), (5, 5));
        let s = builder()
            .connections(10)
            .bound(None, Some(Duration::from_secs(1)))
            .build()
            .unwrap();
        assert_eq!(s.connections, 10);
        assert_eq!(connections_for(10, Some(0)), 1);
    }

    #[test]
    fn the_default_thread_count_is_one_per_cpu_and_connection() {
        let b = builder().bound(Some(100), None).available_cpus(4);
        assert_eq!(b.clone().connections(8).build().unwrap().threads, 4);
        assert_eq!(b.clone().connections(2).build().unwrap().threads, 2);
        let pinned = b.clone().connections(8).cpus(Some(vec![0, 1, 2]));
        assert_eq!(pinned.build().unwrap().threads, 3);
        let given = b.clone().connections(8).threads(Some(6));
        assert_eq!(given.build().unwrap().threads, 6);
        assert_eq!(threads_for(5000, 2000), MAX_THREADS);
        assert_eq!(builder().available_cpus(0).build().unwrap().threads, 1);
    }

    #[test]
    fn the_builder_checks_what_was_asked_before_lowering() {
        let b = builder().bound(Some(5), None);
        assert_eq!(
            b.clone().connections(0).build(),
            Err(SpecError::Connections(0))
        );
        assert_eq!(
            b.clone().connections(4).threads(Some(0)).build(),
            Err(SpecError::Threads(0))
        );
        assert_eq!(
            b.clone().connections(4000).threads(Some(1025)).build(),
            Err(SpecError::Threads(1025))
        );
        assert_eq!(
            builder().bound(Some(0), None).connections(0).build(),
            Err(SpecError::NoRequests)
        );
        // Then the whole spec: the builder refuses what validate refuses.
        let e = b.pace(Pace::Rate(0.0)).build().unwrap_err();
        assert_eq!(
            e.to_string(),
            "the rate must be from 0.001 to 1e9 requests per second, not 0.0"
        );
    }

    #[test]
    fn spec_errors_read_as_before() {
        let cases = [
            (
                SpecError::Connections(0),
                "connections must be from 1 to 1000000, not 0",
            ),
            (
                SpecError::Threads(2000),
                "threads must be from 1 to 1024, not 2000",
            ),
            (
                SpecError::Duration {
                    what: "the timeout",
                    value: Duration::ZERO,
                },
                "the timeout must be more than 0 and at most 365 days, not 0 s",
            ),
            (
                SpecError::Cpu(1024),
                "CPU 1024 does not exist: CPUs are numbered 0 to 1023",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }

    /// Each limit's message, now worded from [`Limit`], reads as it did when each spelled
    /// its own range; each rule takes its range's ends and refuses one step beyond them.
    #[test]
    fn limits_read_as_before_and_hold_their_ends() {
        let cases = [
            (
                rules::connections(0),
                "connections must be from 1 to 1000000, not 0",
            ),
            (
                rules::threads(1025),
                "threads must be from 1 to 1024, not 1025",
            ),
            (
                rules::streams(10_001),
                "streams per connection must be from 1 to 10000, not 10001",
            ),
            (
                rules::pipeline(0),
                "the pipeline depth must be from 1 to 1024, not 0",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.unwrap_err().to_string(), text);
        }
        assert_eq!(
            rules::rate(0.0).unwrap_err().to_string(),
            "the rate must be from 0.001 to 1e9 requests per second, not 0.0"
        );
        assert_eq!(
            rules::busy_poll(Duration::from_millis(2))
                .unwrap_err()
                .to_string(),
            "a busy poll may last at most 1ms, not 2ms (e.g. 50us)"
        );
        assert_eq!(
            rules::body(MAX_BODY + 1).unwrap_err().to_string(),
            "the body is 67108865 bytes: the most shootout sends is 64 MiB"
        );
        for (n, max, rule) in [
            (1, MAX_CONNECTIONS, rules::connections as fn(usize) -> _),
            (1, MAX_THREADS, rules::threads),
            (1, MAX_STREAMS, rules::streams),
            (1, MAX_PIPELINE, rules::pipeline),
        ] {
            assert_eq!((rule(n), rule(max)), (Ok(n), Ok(max)));
            assert!(rule(n - 1).is_err() && rule(max + 1).is_err());
        }
        assert!(rules::rate(MIN_RATE).is_ok() && rules::rate(MAX_RATE).is_ok());
        assert!(rules::rate(f64::NAN).is_err());
        assert_eq!(rules::busy_poll(MAX_BUSY_POLL), Ok(MAX_BUSY_POLL));
        assert_eq!(rules::body(MAX_BODY), Ok(MAX_BODY));
        assert_eq!(rules::in_flight(10_000, 100), Ok(()));
        assert!(rules::in_flight(10_000, 101).is_err());
    }

    /// Every limit's error says which limit it broke, for a caller to name its key or flag.
    #[test]
    fn every_limit_is_named_by_its_errors() {
        let broken = |l: Limit| -> SpecError {
            match l {
                Limit::Connections => rules::connections(0).unwrap_err(),
                Limit::Threads => rules::threads(0).unwrap_err(),
                Limit::Streams => rules::streams(0).unwrap_err(),
                Limit::Pipeline => rules::pipeline(0).unwrap_err(),
                Limit::Rate => rules::rate(0.0).unwrap_err(),
                Limit::BusyPoll => rules::busy_poll(Duration::from_secs(1)).unwrap_err(),
                Limit::Body => rules::body(MAX_BODY + 1).unwrap_err().into(),
            }
        };
        for l in Limit::ALL {
            let e = broken(l);
            assert_eq!(e.limit().map(|(l, _)| l), Some(l), "{e}");
            assert!(e.to_string().contains(&l.most()), "{e}");
        }
        assert_eq!(SpecError::NoBound.limit(), None);
    }

    #[test]
    fn a_connection_cap_goes_with_rate_mode_and_holds_the_first_connections() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        let spec = |pace: Pace, c: usize, max: Option<usize>| {
            LoadSpec::builder(t.clone())
                .connections(c)
                .max_connections(max)
                .bound(None, Some(Duration::from_secs(1)))
                .pace(pace)
                .build()
        };
        let rate = Pace::Rate(100.0);
        assert_eq!(spec(rate, 4, Some(4)).unwrap().max_connections, Some(4));
        assert_eq!(
            spec(rate, 8, Some(4)).unwrap_err(),
            SpecError::MaxBelowConnections {
                max: 4,
                connections: 8
            }
        );
        assert_eq!(
            spec(Pace::Closed, 1, Some(4)).unwrap_err(),
            SpecError::MaxConnectionsClosed
        );
        assert_eq!(
            spec(rate, 1, Some(MAX_CONNECTIONS + 1)).unwrap_err(),
            SpecError::Connections(MAX_CONNECTIONS + 1)
        );
    }

    #[test]
    fn bad_urls_name_the_fix() {
        let e = Target::parse("ftp://127.0.0.1/").unwrap_err();
        assert!(
            e.to_string()
                .contains("http://, https://, ws:// and wss://"),
            "{e}"
        );
        let e = Target::parse("http://:80/").unwrap_err();
        assert!(e.to_string().contains("http://127.0.0.1:8080/path"), "{e}");
    }

    /// ws:// and wss:// take their default ports and go with the WebSocket protocol only;
    /// the message's limits and kind are checked.
    #[test]
    fn websocket_specs_keep_their_rules() {
        let ws = Target::parse("ws://127.0.0.1/echo").unwrap();
        assert_eq!(
            (ws.scheme, ws.port, ws.path.as_str()),
            (Scheme::Ws, 80, "/echo")
        );
        let wss = Target::parse("wss://example.com/").unwrap();
        assert_eq!((wss.scheme.tls(), wss.port), (true, 443));
        let spec = |t: &Target, p: Protocol| {
            let mut s = LoadSpec::new(t.clone());
            s.protocol = p;
            s
        };
        assert!(spec(&ws, Protocol::WebSocket).validate().is_ok());
        let http = Target::parse("http://127.0.0.1/").unwrap();
        for (t, p) in [
            (&ws, Protocol::Http1),
            (&ws, Protocol::Http2),
            (&http, Protocol::WebSocket),
        ] {
            assert!(
                matches!(spec(t, p).validate(), Err(SpecError::WebSocketScheme(_))),
                "{p:?}"
            );
        }
        let mut s = spec(&ws, Protocol::WebSocket);
        s.request.body = vec![0xff];
        assert!(s.validate().is_ok(), "a binary message may hold any bytes");
        s.ws_text = true;
        assert_eq!(s.validate(), Err(SpecError::TextNotUtf8));
        s.ws_text = false;
        s.request.body = vec![0; MAX_MESSAGE + 1];
        assert_eq!(s.validate(), Err(SpecError::MessageSize(MAX_MESSAGE + 1)));
        let mut echo = spec(&http, Protocol::Http1);
        echo.expect.echo = true;
        assert_eq!(echo.validate(), Err(SpecError::WebSocketOnly));
        let mut s = spec(&ws, Protocol::WebSocket);
        s.pipeline = 8;
        assert!(s.validate().is_ok());
        assert_eq!(s.wire().to_string(), "websocket × 8 in flight");
        assert_eq!(Protocol::parse("websocket"), Some(Protocol::WebSocket));
        let hold = Some(Hold {
            every: Duration::from_secs(1),
            open_rate: Some(100.0),
        });
        let mut s = spec(&ws, Protocol::WebSocket);
        s.ws_hold = hold;
        assert!(s.validate().is_ok());
        s.pace = Pace::Rate(10.0);
        assert!(matches!(s.validate(), Err(SpecError::Hold(_))));
        s.pace = Pace::Closed;
        s.expect.echo = true;
        assert!(matches!(s.validate(), Err(SpecError::Hold(_))));
        let mut h = spec(&http, Protocol::Http1);
        h.ws_hold = hold;
        assert_eq!(h.validate(), Err(SpecError::WebSocketOnly));
        assert_eq!(Protocol::WebSocket.as_str(), "websocket");
    }

    /// Regression: a gRPC reply check passed the rules over HTTP/1.1 and HTTP/3, whose
    /// engines never read it, so every answer would have been judged as plain HTTP.
    #[test]
    fn a_grpc_check_needs_http2() {
        // Over TLS (grpcs://), which HTTP/3 needs too.
        let t = Target::parse("https://127.0.0.1:50051/helloworld.Greeter/SayHello").unwrap();
        let mut s = LoadSpec::new(t);
        s.protocol = Protocol::Http2;
        s.expect.grpc = Some(GrpcReply {
            schema: std::sync::Arc::from(&b""[..]),
            method: "helloworld.Greeter.SayHello".into(),
            max_message: GRPC_MAX_MESSAGE,
            json: None,
            stream: GrpcStream::default(),
            compress: false,
        });
        s.expect.echo = true;
        assert_eq!(s.validate(), Ok(()), "gRPC checks echoes over HTTP/2");
        for p in [Protocol::Http1, Protocol::Http3] {
            let mut other = s.clone();
            other.protocol = p;
            let e = other.validate().unwrap_err();
            assert_eq!(e, SpecError::GrpcNeedsHttp2(p.as_str()));
            assert!(e.to_string().contains("is an HTTP/2 stream"), "{e}");
        }
        let mut list = s.clone();
        list.ws_messages = Some(
            crate::messages::MessageList::of_lines(
                "m.jsonl",
                vec![r#"{"name":"{seq}"}"#.into()],
                crate::requests::Order::Seq,
                1,
            )
            .unwrap(),
        );
        assert_eq!(list.validate(), Ok(()));
        list.request.body = vec![0, 0, 0, 0, 0];
        assert!(matches!(list.validate(), Err(SpecError::Grpc(_))));
        let mut none = s.clone();
        none.expect.grpc.as_mut().unwrap().max_message = 0;
        assert!(matches!(none.validate(), Err(SpecError::Grpc(_))));
        // Without the gRPC check, an echo over HTTP/2 is WebSocket's alone.
        s.expect.grpc = None;
        assert_eq!(s.validate(), Err(SpecError::WebSocketOnly));
    }

    #[test]
    fn streams_are_checked_against_the_protocol_and_the_in_flight_limit() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        let h2 = |c: usize, m: usize| {
            LoadSpec::builder(t.clone())
                .connections(c)
                .bound(None, Some(Duration::from_secs(1)))
                .protocol(Protocol::Http2, m)
                .build()
        };
        assert!(h2(10_000, 100).is_ok(), "the issue's 10,000 × 100");
        assert_eq!(
            h2(10_000, 101).unwrap_err(),
            SpecError::InFlight {
                connections: 10_000,
                streams: 101
            }
        );
        assert_eq!(h2(1, 0).unwrap_err(), SpecError::Streams(0));
        assert_eq!(
            h2(1, MAX_STREAMS + 1).unwrap_err(),
            SpecError::Streams(MAX_STREAMS + 1)
        );
        let h1 = LoadSpec::builder(t.clone())
            .bound(Some(10), None)
            .protocol(Protocol::Http1, 2)
            .build();
        assert_eq!(h1.unwrap_err(), SpecError::StreamsNeedHttp2(2));
        let close = RequestSpec {
            keepalive: false,
            ..Default::default()
        };
        let no_keepalive = LoadSpec::builder(t.clone())
            .request(close)
            .bound(Some(10), None)
            .protocol(Protocol::Http2, 1)
            .build();
        assert_eq!(no_keepalive.unwrap_err(), SpecError::Http2NoKeepalive);
        let pipelined = LoadSpec::builder(t.clone())
            .bound(Some(10), None)
            .protocol(Protocol::Http2, 4)
            .pipeline(4)
            .build();
        assert_eq!(pipelined.unwrap_err(), SpecError::Http2Pipeline(4));
        let list = crate::requests::RequestList::parse(
            "urls.txt",
            "GET /a\n",
            None,
            crate::requests::Order::Seq,
            0,
            |_| Ok(Vec::new()),
        )
        .unwrap();
        let listed = LoadSpec::builder(t)
            .bound(Some(10), None)
            .protocol(Protocol::Http2, 1)
            .list(Some(list))
            .build();
        assert_eq!(listed.unwrap_err(), SpecError::Http2List);
    }
}
