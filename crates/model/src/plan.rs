//! The plan of a shootout: contenders (servers to launch, or URLs already serving),
//! workloads (requests and what a good answer is) and the load (a concurrency or rate
//! sweep, or JMeter-style stages). Parsed from TOML in two stages: serde reads the file
//! (unknown keys are errors), then [`parse`] validates it into a typed [`Plan`]. Every
//! error names the file, the line, the key and the fix. Placeholders such as `{port}` stay
//! in the strings; the CLI substitutes them when it runs the plan.

use crate::find_max::{FileFindMax, FindMax};
use crate::requests::{Order, RequestList};
use crate::shootout::LoadLevel;
use crate::spec::{
    check_header, check_method, check_path, rules, Expectation, Hold, Limit, Protocol,
    RequestError, SpecError, Target, Wire,
};
use crate::status::StatusSet;
use crate::threshold::Threshold;
use crate::units::{parse_cpu_list, parse_duration, parse_listen};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

mod grpc;
mod websocket;

pub use grpc::GrpcWorkload;

/// A plan that cannot be run, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PlanError {
    /// The plan file as given.
    pub file: String,
    /// 1-based line of the offending key or table.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// How long a phase lasts: a time or a number of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// This long.
    Time(Duration),
    /// This many requests.
    Requests(u64),
}

/// Settings every step shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    /// Warm-up before each contender × workload (not measured); `None`: none.
    pub warmup: Option<Span>,
    /// `warmup = "auto"`: the warm-up (then [`crate::WarmedUp::MAX`] long at most) ends
    /// once its per-second series are level.
    pub warmup_auto: bool,
    /// Length of each measured step.
    pub measure: Span,
    /// Repetitions per step, interleaved across contenders.
    pub repeat: u32,
    /// Pause between steps.
    pub cooldown: Duration,
    /// CPUs for the contenders' process trees.
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs for shootout's load threads.
    pub load_cpus: Option<Vec<usize>>,
    /// Per-request deadline.
    pub timeout: Duration,
    /// How long shootout's load threads poll before they sleep (`busy_poll`, at most
    /// [`crate::MAX_BUSY_POLL`]; zero: they sleep at once): see `LoadSpec::busy_poll`.
    /// `None`: not given, each step gets [`crate::auto_busy_poll`] (see
    /// [`Plan::busy_poll`]).
    pub busy_poll: Option<Duration>,
    /// Thresholds every contender's cells must meet (`fail_if`): the run exits 3 when one
    /// of them holds.
    pub fail_if: Vec<Threshold>,
    /// Serve live metrics for Prometheus at this address while the run goes
    /// (`metrics_listen`; `--metrics-listen` wins over it).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// The longest a capacity search's step measures, whatever its SLOs would wait for
    /// (`run --quick`: [`QUICK_SEARCH_STEP`]; no plan key); `None`: as long as they need.
    pub search_step_most: Option<Duration>,
}

/// The longest a capacity search's step measures under `run --quick`: a first look, its
/// steps still undecided then judged on their figures.
pub const QUICK_SEARCH_STEP: Duration = Duration::from_secs(5);

/// How a contender is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// shootout starts it.
    Command {
        /// Shell command; `{port}`, `{tmp}`, `{cores}`, `{plan_dir}` are substituted.
        command: String,
        /// Working directory, relative to the plan's directory.
        cwd: Option<PathBuf>,
        /// Extra environment variables (placeholders substituted).
        env: BTreeMap<String, String>,
        /// Shell command run before the start.
        setup: Option<String>,
        /// The text of its config file (placeholders substituted), written to `{config}`
        /// (`{tmp}/config`) before its setup: for servers whose port lives in a file.
        config: Option<String>,
        /// Path polled until it answers.
        ready_path: String,
        /// How long readiness may take.
        ready_timeout: Duration,
        /// Open-file limit to give it.
        nofile: Option<u64>,
    },
    /// Already running at this base URL (`http://127.0.0.1:8080`; `ws://` and `wss://`
    /// are taken as `http://` and `https://`: each workload's protocol picks the scheme).
    Url(String),
}

/// One server under test.
#[derive(Debug, Clone, PartialEq)]
pub struct Contender {
    /// Unique name.
    pub name: String,
    /// How it runs.
    pub launch: Launch,
    /// The 100% of comparisons.
    pub baseline: bool,
    /// A shell command whose output is the contender's version (`apache2 -v`, `python3 -c
    /// "import gunicorn; print(gunicorn.__version__)"`), run once before the run starts;
    /// `{plan_dir}` and `{cores}` are substituted. `None`: the version of the command's
    /// program (`PROGRAM --version`, else `-v`).
    pub version: Option<String>,
    /// How the client talks to this contender, where it differs from the workloads.
    pub wire: WireKeys,
    /// Thresholds this contender's cells must meet besides the defaults' (`fail_if`).
    pub fail_if: Vec<Threshold>,
    /// Spoken to over TLS with these settings (`tls`); `None`: a launched contender is
    /// spoken to in cleartext, one given by an `https://` URL with the system's roots.
    pub tls: Option<ContenderTls>,
}

/// A contender's `tls`: how its certificate is checked. A launched contender with it is
/// spoken to at `https://127.0.0.1:{port}` (every protocol over TLS: HTTP/1.1, `h2` by
/// ALPN, `wss://`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContenderTls {
    /// A PEM file of the CA certificates that signed the contender's certificate, its
    /// placeholders (`{tmp}`, `{plan_dir}`, `{run_dir}`, `{port}`) not yet filled; a
    /// relative path is the plan directory's. Read when the contender is first spoken to,
    /// so a server that makes its own CA at start (caddy's `tls internal`) can name it.
    pub cacert: Option<String>,
    /// Accept any certificate (`insecure = true`).
    pub insecure: bool,
}

/// A contender's own `protocol`, `streams` and `pipeline`: each one given overrides the
/// workload's (and `[load]`'s) for this contender, so that one workload can compare
/// a server over HTTP/1.1, pipelined and over HTTP/2. `None`: the workload's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WireKeys {
    /// `protocol`.
    pub protocol: Option<Protocol>,
    /// `streams`.
    pub streams: Option<usize>,
    /// `pipeline`.
    pub pipeline: Option<usize>,
}

impl WireKeys {
    /// True when the contender gives none of the keys.
    pub fn is_empty(&self) -> bool {
        *self == WireKeys::default()
    }
}

/// One kind of request and what its answers must be.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Unique name.
    pub name: String,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body file, relative to the plan's directory.
    pub body_file: Option<PathBuf>,
    /// Inline body.
    pub body: Option<String>,
    /// What every answer must meet.
    pub expect: Expectation,
    /// HTTP/1.1 or HTTP/2 (the workload's `protocol`, else `[load]`'s, else HTTP/1.1).
    pub protocol: Protocol,
    /// HTTP/2 streams per connection (the workload's `streams`, else `[load]`'s, else 1).
    pub streams: usize,
    /// Requests in flight per connection (`pipeline` here or in `[load]`; 1 by default).
    pub pipeline: usize,
    /// A request list file (`requests`), relative to the plan's directory: sent instead
    /// of `method`, `path` and `body`.
    pub requests: Option<PathBuf>,
    /// The order the list is taken in (`order`).
    pub order: Order,
    /// Seeds a random order and `{rand:LO-HI}` values (`seed`, 0 by default), the same for
    /// every contender.
    pub seed: u64,
    /// Rate levels: how requests are spaced (`arrival = "even"`, the default, or
    /// `"poisson"`, its gaps drawn from `seed`).
    pub arrival: crate::Arrival,
    /// The list read from `requests`: filled by whoever loads the plan's files (the model
    /// does no I/O); `None` until then.
    pub list: Option<RequestList>,
    /// A capacity search in place of the levels (`find_max` here or in `[load]`): each
    /// contender's most requests per second within the SLOs. `None`: the levels are swept.
    pub find_max: Option<FindMax>,
    /// WebSocket: the text message (`message`), sent as a text message; `None`: the
    /// body (`body_file`) goes as a binary message.
    pub message: Option<String>,
    /// WebSocket: hold the connections and ping them instead of sending messages (`hold`).
    pub hold: Option<Hold>,
    /// WebSocket: a message list file (`messages`), relative to the plan's directory:
    /// text messages sent in turn (or at random, `order`) instead of one message.
    pub messages: Option<PathBuf>,
    /// The list read from `messages`: filled by whoever loads the plan's files.
    pub message_list: Option<crate::messages::MessageList>,
    /// A journey file (`journey`), relative to the plan's directory: its users' journeys
    /// instead of one request (`seed` seeds their choices); HTTP/1.1.
    pub journey: Option<PathBuf>,
    /// The journeys read from `journey`: filled by whoever loads the plan's files.
    pub journeys: Option<crate::spec::Journeys>,
    /// The connection each new user of an open-model journey workload takes
    /// (`journey_connection`, as `load --journey-connection`): an idle one another user
    /// freed (the default), or one of its own.
    pub journey_connection: crate::spec::JourneyConnection,
    /// gRPC (`protocol = "grpc"`): the call, over HTTP/2 (`protocol` is `h2`, the
    /// method `POST`, the path the call's); whoever loads the plan's files reads its
    /// schema and sets `expect.grpc`, the headers and the body (for a schema by
    /// reflection, whoever starts each contender resolves them for it).
    pub grpc: Option<GrpcWorkload>,
    /// Each measured step lasts until these conditions hold (`until` here, else
    /// `[load]`'s), at least [`crate::until::LEAST`] and at most its duration; empty: each
    /// step lasts its duration.
    pub until: Vec<crate::until::Condition>,
}

/// One level of the load, with its own length when staged.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Connections, or rate and connections.
    pub level: LoadLevel,
    /// Overrides the default measured length (stages).
    pub measure: Option<Span>,
}

/// The connections a rate step opens at the start when `[load]` does not say
/// (`connections`); more open as the schedule needs them.
const RATE_CONNECTIONS: usize = 64;

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Title.
    pub name: String,
    /// Shared settings.
    pub defaults: Defaults,
    /// Servers, in plan order.
    pub contenders: Vec<Contender>,
    /// Requests, in plan order.
    pub workloads: Vec<Workload>,
    /// Load levels, in order.
    pub levels: Vec<Level>,
    /// Rate levels: the most connections a step may open (`[load] max_connections`); `None`:
    /// what the open-file limit allows (see `LoadSpec::max_connections`).
    pub max_connections: Option<usize>,
}

impl Plan {
    /// The baseline contender's index (the one marked, else the first).
    pub fn baseline(&self) -> usize {
        self.contenders.iter().position(|c| c.baseline).unwrap_or(0)
    }

    /// The busy poll of a step spoken over `protocol`: `[defaults] busy_poll` when given,
    /// else [`crate::auto_busy_poll`], where the generator's CPUs are its own when
    /// `load_cpus` and `server_cpus` are both given and share none.
    pub fn busy_poll(&self, protocol: Protocol) -> Duration {
        let d = &self.defaults;
        let own = match (&d.load_cpus, &d.server_cpus) {
            (Some(load), Some(server)) => !load.iter().any(|c| server.contains(c)),
            _ => false,
        };
        d.busy_poll
            .unwrap_or_else(|| crate::auto_busy_poll(protocol, own))
    }

    /// How the client talks to contender `ci` on workload `wi`: each of the contender's
    /// keys, else the workload's (which already fell back on `[load]`'s).
    pub fn wire(&self, ci: usize, wi: usize) -> Wire {
        wire_of(&self.contenders[ci].wire, &self.workloads[wi])
    }
}

impl Workload {
    /// How the client talks to a contender without wire keys of its own.
    pub fn wire(&self) -> Wire {
        Wire {
            protocol: self.protocol,
            streams: self.streams,
            pipeline: self.pipeline,
        }
    }
}

/// The one precedence rule of [`Plan::wire`]: a contender's key, else the workload's.
fn wire_of(keys: &WireKeys, w: &Workload) -> Wire {
    let own = w.wire();
    Wire {
        protocol: keys.protocol.unwrap_or(own.protocol),
        streams: keys.streams.unwrap_or(own.streams),
        pipeline: keys.pipeline.unwrap_or(own.pipeline),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePlan {
    name: String,
    defaults: Option<FileDefaults>,
    #[serde(default)]
    contender: Vec<Spanned<FileContender>>,
    #[serde(default)]
    workload: Vec<Spanned<FileWorkload>>,
    load: Spanned<FileLoad>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileDefaults {
    warmup: Option<Spanned<toml::Value>>,
    duration: Option<Spanned<String>>,
    requests: Option<Spanned<u64>>,
    repeat: Option<Spanned<u32>>,
    cooldown: Option<Spanned<String>>,
    server_cpus: Option<Spanned<String>>,
    load_cpus: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    busy_poll: Option<Spanned<String>>,
    #[serde(default)]
    fail_if: Vec<Spanned<String>>,
    metrics_listen: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileContender {
    name: String,
    command: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    cwd: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    setup: Option<Spanned<String>>,
    config: Option<Spanned<String>>,
    ready: Option<Spanned<FileReady>>,
    #[serde(default)]
    baseline: bool,
    nofile: Option<u64>,
    version: Option<Spanned<String>>,
    protocol: Option<Spanned<String>>,
    streams: Option<Spanned<usize>>,
    pipeline: Option<Spanned<usize>>,
    #[serde(default)]
    fail_if: Vec<Spanned<String>>,
    tls: Option<Spanned<FileTls>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTls {
    cacert: Option<Spanned<String>>,
    #[serde(default)]
    insecure: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileReady {
    path: Option<String>,
    timeout: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWorkload {
    name: String,
    method: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    headers: Option<Spanned<BTreeMap<String, String>>>,
    body_file: Option<String>,
    body: Option<Spanned<String>>,
    expect: Option<Spanned<FileExpect>>,
    protocol: Option<Spanned<String>>,
    streams: Option<Spanned<usize>>,
    pipeline: Option<Spanned<usize>>,
    requests: Option<Spanned<String>>,
    order: Option<Spanned<String>>,
    seed: Option<u64>,
    arrival: Option<Spanned<String>>,
    find_max: Option<Spanned<FileFindMax>>,
    message: Option<Spanned<String>>,
    messages: Option<Spanned<String>>,
    hold: Option<Spanned<websocket::FileHold>>,
    journey: Option<Spanned<String>>,
    journey_connection: Option<Spanned<String>>,
    proto: Option<Spanned<String>>,
    protoset: Option<Spanned<String>>,
    stream: Option<Spanned<grpc::FileStream>>,
    compress: Option<Spanned<String>>,
    until: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileExpect {
    status: Option<toml::Value>,
    body_contains: Option<String>,
    length: Option<u64>,
    echo: Option<bool>,
    json: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLoad {
    concurrency: Option<Spanned<Vec<usize>>>,
    rate: Option<Spanned<Vec<f64>>>,
    connections: Option<Spanned<usize>>,
    max_connections: Option<Spanned<usize>>,
    find_max: Option<Spanned<FileFindMax>>,
    stages: Option<Spanned<Vec<FileStage>>>,
    protocol: Option<Spanned<String>>,
    streams: Option<Spanned<usize>>,
    pipeline: Option<Spanned<usize>>,
    until: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileStage {
    concurrency: usize,
    duration: String,
}

/// What a plan says when protocol, streams and pipeline disagree ([`Wire::conflict`]),
/// for a workload or (`contender`) for a contender's own keys on a workload (`who`).
fn wire_message(who: &str, conflict: &SpecError, contender: bool) -> String {
    match (conflict, contender) {
        (SpecError::StreamsNeedHttp2(n), false) => {
            format!("{who}: streams = {n} needs HTTP/2: add protocol = \"h2\"")
        }
        (SpecError::StreamsNeedHttp2(n), true) => format!(
            "{who}: streams = {n} needs HTTP/2: add protocol = \"h2\" to the contender, or give it streams = 1"
        ),
        (SpecError::Http2Pipeline(_), false) => format!(
            "{who}: pipeline is HTTP/1.1's; over HTTP/2 (protocol = \"h2\") use streams, or remove pipeline"
        ),
        (SpecError::Http2Pipeline(n), true) => format!(
            "{who}: pipeline = {n} is HTTP/1.1's; over HTTP/2 (protocol = \"h2\") use streams: give the contender pipeline = 1"
        ),
        (SpecError::Http2List, false) => format!(
            "{who}: requests is HTTP/1.1's; over HTTP/2 (protocol = \"h2\") use streams, or remove requests"
        ),
        (SpecError::Http2List, true) => format!(
            "{who}: the workload's request list (requests) is sent over HTTP/1.1 only: give the contender protocol = \"http/1.1\", or use a workload without a list"
        ),
        (SpecError::WebSocketList, _) => format!(
            "{who}: a request list (requests) is sent over HTTP only: a WebSocket workload sends one message (message = \"…\" or body_file = \"FILE\"): remove requests, or the protocol = \"websocket\""
        ),
        (other, _) => format!("{who}: {other}"),
    }
}

/// A rule of the spec that the plan's `key` broke, said in terms of the key, as the `load`
/// flags say it in terms of the flag: a range the spec sets ([`SpecError::limit`]) is
/// written `KEY must be RANGE, not VALUE`, in the spec's words for the range.
fn broken_rule(key: &str, e: &SpecError) -> String {
    match (e, e.limit()) {
        (SpecError::BusyPoll(_), _) => format!(
            "{key} is too long: {} (e.g. \"50us\")",
            Limit::BusyPoll.range()
        ),
        (SpecError::Request(RequestError::Body(_)), _) => {
            format!("{key}: {e} (use a smaller body)")
        }
        (SpecError::InFlight { .. }, _) => {
            format!("{key}: {e} (lower the concurrency or the streams)")
        }
        (_, Some((limit, value))) => {
            format!(
                "{key} must be {}{}, not {value}",
                limit.range(),
                limit.unit()
            )
        }
        (_, None) => format!("{key}: {e}"),
    }
}

/// The placeholders `shootout run` substitutes in a contender's `command`, `setup`, `env`
/// values and `cwd`, written `{port}`, `{tmp}`, …
pub const PLACEHOLDERS: [&str; 6] = ["port", "tmp", "cores", "plan_dir", "run_dir", "config"];

/// The file name of a contender's `config` in its `{tmp}` directory: `{config}` is
/// `{tmp}/config`.
pub const CONFIG_FILE: &str = "config";

/// The `{name}` tokens of `s` (name of letters, digits, `_`), with their byte ranges, that
/// are not shell syntax (`${name}`). Any other brace is not one: `{ print }`, `{}`,
/// `{a,b}`, `$((x + 1))`.
fn braced_names(s: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(off) = s[i..].find('{') {
            let open = i + off;
            let rest = &s[open + 1..];
            let len = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            i = open + 1 + len;
            let closed = rest.as_bytes().get(len) == Some(&b'}');
            let shell = open > 0 && s.as_bytes()[open - 1] == b'$';
            if closed && len > 0 && !shell {
                return Some((open..open + len + 2, &rest[..len]));
            }
        }
        None
    })
}

/// The first unknown placeholder in `s`: a `{name}` whose name is not one of
/// [`PLACEHOLDERS`] and that is not shell syntax (`${name}`).
pub fn unknown_placeholder(s: &str) -> Option<&str> {
    braced_names(s)
        .find(|(_, name)| !PLACEHOLDERS.contains(name))
        .map(|(range, _)| &s[range])
}

/// `s` with each placeholder replaced by `value(name)`; shell syntax (`${port}`) and other
/// braces stay as written. The same scan as [`unknown_placeholder`], so what is checked
/// is what is filled.
pub fn fill_placeholders(s: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (range, name) in braced_names(s) {
        if let Some(v) = value(name) {
            out.push_str(&s[last..range.start]);
            out.push_str(&v);
            last = range.end;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// A duration key's value: zero allowed or not, at most [`crate::MAX_DURATION`].
fn duration_of(s: &str, key: &str, zero_ok: bool) -> Result<Duration, String> {
    match parse_duration(s) {
        Ok(d) if d.is_zero() && !zero_ok => Err(format!(
            "{key} = \"{s}\" must be more than 0 (e.g. \"10s\")"
        )),
        Ok(d) => Ok(d),
        Err(e) => Err(format!("{key}: {e}")),
    }
}

/// Parses and validates a plan's text; `file` names it in errors. `available_cpus` are the
/// CPUs this process may run on: `server_cpus` and `load_cpus` must name only those.
/// Every check is made here, before anything starts; reading is linear in the plan's size.
pub fn parse(text: &str, file: &str, available_cpus: &[usize]) -> Result<Plan, PlanError> {
    let r = Reader {
        text,
        file,
        available_cpus,
    };
    let raw: FilePlan = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        r.err(
            offset,
            format!(
                "{} (see docs/plan.md for every key)",
                e.message().trim_end()
            ),
        )
    })?;
    let raw_defaults = raw.defaults.unwrap_or_default();
    let defaults = r.defaults(&raw_defaults)?;
    let contenders = r.contenders(&raw.contender)?;
    let pipeline = r.pipeline(raw.load.get_ref().pipeline.as_ref(), "load.pipeline", 1)?;
    let workloads = r.workloads(&raw.workload, raw.load.get_ref(), pipeline)?;
    r.contender_wires(&raw.contender, &contenders, &workloads)?;
    let searched = workloads.iter().filter(|w| w.find_max.is_some()).count();
    let levels = r.levels(&raw.load, searched, workloads.len())?;
    if searched > 0 {
        r.search_span(&raw_defaults, &defaults)?;
    }
    r.until_span(
        &raw.workload,
        &raw.load,
        &raw_defaults,
        (&defaults, &workloads, &levels),
    )?;
    r.in_flight(raw.load.get_ref(), &levels, &contenders, &workloads)?;
    r.held_levels(&raw.workload, &workloads, raw.load.get_ref())?;
    let max_connections = r.max_connections(raw.load.get_ref(), searched > 0)?;
    Ok(Plan {
        name: raw.name,
        defaults,
        contenders,
        workloads,
        levels,
        max_connections,
    })
}

/// A workload's request as [`Reader::request`] checked it.
struct Request {
    /// The method, upper case.
    method: String,
    /// Path and query.
    path: String,
    /// Extra headers.
    headers: Vec<(String, String)>,
}

/// The plan's text being read, for errors that name the file and line of a key.
struct Reader<'a> {
    text: &'a str,
    file: &'a str,
    available_cpus: &'a [usize],
}

impl Reader<'_> {
    /// An error at byte `offset` of the text. Only called for the one error returned, so
    /// the line count is one scan of the text.
    fn err(&self, offset: usize, message: String) -> PlanError {
        let line = self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        PlanError {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    /// `[defaults]`, with shootout's defaults for the keys not given.
    fn defaults(&self, d: &FileDefaults) -> Result<Defaults, PlanError> {
        let measure = self.measure(d)?;
        let warmup = self.warmup(d)?;
        let repeat = d.repeat.as_ref().map_or(Ok(3), |r| {
            if *r.get_ref() == 0 {
                Err(self.err(r.span().start, "defaults.repeat must be at least 1".into()))
            } else {
                Ok(*r.get_ref())
            }
        })?;
        let server_cpus = self.cpus(&d.server_cpus, "server_cpus")?;
        let load_cpus = self.cpus(&d.load_cpus, "load_cpus")?;
        Ok(Defaults {
            warmup_auto: d
                .warmup
                .as_ref()
                .is_some_and(|v| v.get_ref().as_str() == Some("auto")),
            warmup,
            measure,
            repeat,
            cooldown: self.duration(&d.cooldown, "cooldown", Duration::from_secs(1), true)?,
            server_cpus,
            load_cpus,
            timeout: self.duration(&d.timeout, "timeout", Duration::from_secs(30), false)?,
            busy_poll: self.busy_poll(&d.busy_poll)?,
            fail_if: self.thresholds(&d.fail_if, "defaults.fail_if")?,
            metrics_listen: d
                .metrics_listen
                .as_ref()
                .map(|v| {
                    parse_listen(v.get_ref()).map_err(|why| {
                        self.err(v.span().start, format!("defaults.metrics_listen: {why}"))
                    })
                })
                .transpose()?,
            search_step_most: None,
        })
    }

    /// A `fail_if` list: each expression in `--fail-if`'s grammar (one on a journey step,
    /// `step:NAME:`, is checked against the workloads' journeys once they are read).
    fn thresholds(&self, v: &[Spanned<String>], key: &str) -> Result<Vec<Threshold>, PlanError> {
        v.iter()
            .map(|e| {
                e.get_ref()
                    .parse::<Threshold>()
                    .map_err(|why| self.err(e.span().start, format!("{key}: {why}")))
            })
            .collect()
    }

    /// A duration key of `[defaults]`, or `default` when it is not given.
    fn duration(
        &self,
        v: &Option<Spanned<String>>,
        key: &str,
        default: Duration,
        zero_ok: bool,
    ) -> Result<Duration, PlanError> {
        match v {
            None => Ok(default),
            Some(s) => duration_of(s.get_ref(), &format!("defaults.{key}"), zero_ok)
                .map_err(|m| self.err(s.span().start, m)),
        }
    }

    /// `[defaults] busy_poll`: a duration in the spec's range ([`rules::busy_poll`]).
    fn busy_poll(&self, v: &Option<Spanned<String>>) -> Result<Option<Duration>, PlanError> {
        let d = self.duration(v, "busy_poll", Duration::ZERO, true)?;
        match v {
            None => Ok(None),
            Some(s) => rules::busy_poll(d).map(Some).map_err(|e| {
                let key = format!("defaults.busy_poll = \"{}\"", s.get_ref());
                self.err(s.span().start, broken_rule(&key, &e))
            }),
        }
    }

    /// A CPU list key of `[defaults]`: valid syntax, and only CPUs this process may use.
    fn cpus(
        &self,
        v: &Option<Spanned<String>>,
        key: &str,
    ) -> Result<Option<Vec<usize>>, PlanError> {
        let Some(s) = v else { return Ok(None) };
        let list = parse_cpu_list(s.get_ref()).ok_or_else(|| {
            self.err(
                s.span().start,
                format!(
                    "defaults.{key} = \"{}\" is not a CPU list: write e.g. \"1\" or \"0,2-3\"",
                    s.get_ref()
                ),
            )
        })?;
        if let Some(cpu) = list.iter().find(|c| !self.available_cpus.contains(c)) {
            return Err(self.err(
                s.span().start,
                format!(
                    "defaults.{key} names CPU {cpu}, which this machine does not give shootout: use CPUs from {}",
                    cpu_ranges(self.available_cpus)
                ),
            ));
        }
        Ok(Some(list))
    }

    /// How long each measured step lasts: `duration` or `requests`, not both.
    fn measure(&self, d: &FileDefaults) -> Result<Span, PlanError> {
        match (&d.duration, &d.requests) {
            (Some(s), Some(_)) => Err(self.err(
                s.span().start,
                "defaults: give either duration or requests, not both".into(),
            )),
            (_, Some(n)) if *n.get_ref() == 0 => Err(self.err(
                n.span().start,
                "defaults.requests must be at least 1".into(),
            )),
            (_, Some(n)) => Ok(Span::Requests(*n.get_ref())),
            (s, None) => Ok(Span::Time(self.duration(
                s,
                "duration",
                Duration::from_secs(10),
                false,
            )?)),
        }
    }

    /// The warm-up: a duration, a request count, or none (`0`).
    fn warmup(&self, d: &FileDefaults) -> Result<Option<Span>, PlanError> {
        let Some(v) = &d.warmup else {
            return Ok(Some(Span::Time(Duration::from_secs(2))));
        };
        match v.get_ref() {
            toml::Value::String(s) if s == "auto" => Ok(Some(Span::Time(crate::WarmedUp::MAX))),
            toml::Value::Integer(0) => Ok(None),
            toml::Value::Integer(n) if *n > 0 => Ok(Some(Span::Requests(*n as u64))),
            toml::Value::String(s) => match parse_duration(s) {
                Ok(d) if d.is_zero() => Ok(None),
                Ok(d) => Ok(Some(Span::Time(d))),
                Err(e) => Err(self.err(
                    v.span().start,
                    format!("defaults.warmup: {e} (or a request count, or \"auto\")"),
                )),
            },
            _ => Err(self.err(
                v.span().start,
                "defaults.warmup: write a duration (\"5s\"), a request count (1000) or \"auto\""
                    .into(),
            )),
        }
    }

    /// Every `[[contender]]`: at least one, unique names, at most one baseline.
    fn contenders(&self, raw: &[Spanned<FileContender>]) -> Result<Vec<Contender>, PlanError> {
        if raw.is_empty() {
            return Err(self.err(
                0,
                "the plan has no [[contender]]: add at least one server to measure".into(),
            ));
        }
        let mut contenders = Vec::new();
        let mut names = HashSet::new();
        for c in raw {
            let at = c.span().start;
            let c = c.get_ref();
            let name = c.name.trim().to_string();
            if name.is_empty() {
                return Err(self.err(at, "a contender has an empty name: give it one".into()));
            }
            if !names.insert(name.clone()) {
                return Err(self.err(
                    at,
                    format!("two contenders are named '{name}': names must be unique"),
                ));
            }
            let launch = match (&c.command, &c.url) {
                (Some(_), Some(_)) => {
                    return Err(self.err(at, format!("contender '{name}' has both command and url: a contender is either launched (command) or already running (url)")))
                }
                (None, None) => {
                    return Err(self.err(at, format!("contender '{name}' has neither command nor url: give the command that starts it, or the url where it runs")))
                }
                (None, Some(url)) => self.url_launch(&name, at, c, url)?,
                (Some(command), None) => self.command_launch(&name, at, c, command)?,
            };
            let version = self.version_command(&name, c.version.as_ref())?;
            let wire = self.wire_keys(&name, c)?;
            let fail_if = self.thresholds(&c.fail_if, &format!("contender '{name}': fail_if"))?;
            let tls = self.contender_tls(&name, c.tls.as_ref(), &launch)?;
            contenders.push(Contender {
                name,
                launch,
                baseline: c.baseline,
                version,
                wire,
                fail_if,
                tls,
            });
        }
        if contenders.iter().filter(|c| c.baseline).count() > 1 {
            return Err(self.err(0, "more than one contender has baseline = true: mark one (or none: the first is the baseline)".into()));
        }
        Ok(contenders)
    }

    /// A contender's `version` command: not empty, no NUL, placeholders known before
    /// anything starts (`{plan_dir}`, `{cores}`) only.
    fn version_command(
        &self,
        name: &str,
        v: Option<&Spanned<String>>,
    ) -> Result<Option<String>, PlanError> {
        let Some(v) = v else { return Ok(None) };
        let (text, at) = (v.get_ref(), v.span().start);
        if text.trim().is_empty() {
            return Err(self.err(at, format!("contender '{name}': version is empty: give the command that prints its version, e.g. \"nginx -v\", or leave the key out")));
        }
        if text.contains('\0') {
            return Err(self.err(
                at,
                format!("contender '{name}': version contains a NUL character: remove it"),
            ));
        }
        let early = ["plan_dir", "cores"];
        if let Some((_, p)) = braced_names(text).find(|(_, p)| !early.contains(p)) {
            return Err(self.err(at, format!("contender '{name}': version uses {{{p}}}, but it runs once before any contender starts: only {{plan_dir}} and {{cores}} are known then")));
        }
        Ok(Some(text.clone()))
    }

    /// A contender's `tls`: a CA file or `insecure = true` (one of them), for a launched
    /// contender or an `https://` / `wss://` URL; the CA file's placeholders are those
    /// known when the contender starts (only `{plan_dir}` for one given by URL).
    fn contender_tls(
        &self,
        name: &str,
        tls: Option<&Spanned<FileTls>>,
        launch: &Launch,
    ) -> Result<Option<ContenderTls>, PlanError> {
        let Some(tls) = tls else { return Ok(None) };
        let at = tls.span().start;
        let t = tls.get_ref();
        let cacert = t.cacert.as_ref();
        match (cacert, t.insecure) {
            (None, false) => return Err(self.err(at, format!("contender '{name}': tls names no way to check its certificate: give cacert = \"PATH\" (the PEM file of the CA that signed it) or insecure = true"))),
            (Some(_), true) => return Err(self.err(at, format!("contender '{name}': tls has both cacert and insecure = true: insecure accepts any certificate, so the CA would go unused; keep one"))),
            _ => {}
        }
        if let Launch::Url(u) = launch {
            if !(u.starts_with("https://") || u.starts_with("wss://")) {
                return Err(self.err(at, format!("contender '{name}': tls applies to a server spoken to over TLS, and its url '{u}' is not: write https:// (or wss://), or remove tls")));
            }
        }
        if let Some(c) = cacert {
            let (text, c_at) = (c.get_ref(), c.span().start);
            if text.trim().is_empty() || text.contains('\0') {
                return Err(self.err(c_at, format!("contender '{name}': tls.cacert {text:?} is not a path: give the PEM file of the CA that signed its certificate")));
            }
            let known: &[&str] = match launch {
                Launch::Url(_) => &["plan_dir"],
                Launch::Command { .. } => &["tmp", "plan_dir", "run_dir", "port"],
            };
            if let Some((_, p)) = braced_names(text).find(|(_, p)| !known.contains(p)) {
                let known: Vec<String> = known.iter().map(|n| format!("{{{n}}}")).collect();
                return Err(self.err(c_at, format!("contender '{name}': tls.cacert uses {{{p}}}: the placeholders it may use are {}", known.join(", "))));
            }
        }
        Ok(Some(ContenderTls {
            cacert: cacert.map(|c| c.get_ref().clone()),
            insecure: t.insecure,
        }))
    }

    /// A contender already running at `url`.
    fn url_launch(
        &self,
        name: &str,
        at: usize,
        c: &FileContender,
        url: &Spanned<String>,
    ) -> Result<Launch, PlanError> {
        let u = url.get_ref();
        let url_at = url.span().start;
        if !["http://", "https://", "ws://", "wss://"]
            .iter()
            .any(|s| u.starts_with(s))
        {
            return Err(self.err(
                url_at,
                format!("contender '{name}': url '{u}' must start with http://, https://, ws:// or wss://"),
            ));
        }
        if let Err(e) = Target::parse(u) {
            return Err(self.err(url_at, format!("contender '{name}': {e}")));
        }
        if u.chars().any(|c| c.is_ascii_control() || c == ' ') {
            return Err(self.err(url_at, format!("contender '{name}': url {u:?} has a space or a control character: percent-encode it")));
        }
        if c.cwd.is_some() || c.setup.is_some() || c.config.is_some() || !c.env.is_empty() {
            return Err(self.err(at, format!("contender '{name}' has a url: cwd, env, setup and config apply only to launched contenders")));
        }
        Ok(Launch::Url(u.trim_end_matches('/').to_string()))
    }

    /// A contender shootout starts with `command`.
    fn command_launch(
        &self,
        name: &str,
        at: usize,
        c: &FileContender,
        command: &Spanned<String>,
    ) -> Result<Launch, PlanError> {
        let uses = |s: Option<&Spanned<String>>, p: &str| {
            s.is_some_and(|s| braced_names(s.get_ref()).any(|(_, n)| n == p))
        };
        // A misspelt placeholder first: `{prot}` is named as such, not as a missing {port}.
        self.check_filled_strings(name, at, c, command)?;
        let config = c.config.as_ref();
        if !(uses(Some(command), "port") || uses(c.setup.as_ref(), "port") || uses(config, "port"))
        {
            return Err(self.err(at, format!("contender '{name}': the command must listen on {{port}} (a free port shootout chooses), e.g. \"python3 -m http.server {{port}} --bind 127.0.0.1\"; for a server whose port is in its config file, give the file's text as config = \"\"\"… listen 127.0.0.1:{{port}}; …\"\"\" and its path to the command as {{config}} (e.g. \"nginx -c {{config}}\"), or write {{port}} into the file from setup")));
        }
        if config.is_none() {
            let keys = [Some(command), c.setup.as_ref(), c.cwd.as_ref()];
            if keys.iter().any(|k| uses(*k, "config"))
                || c.env
                    .values()
                    .any(|v| braced_names(v).any(|(_, n)| n == "config"))
            {
                return Err(self.err(at, format!("contender '{name}' uses {{config}} but has no config: give the file's text as config = \"\"\"…\"\"\" (written to {{tmp}}/config before its setup)")));
            }
        }
        let ready = c.ready.as_ref();
        let ready_timeout = match ready.and_then(|r| r.get_ref().timeout.as_ref()) {
            None => Duration::from_secs(20),
            Some(t) => duration_of(t.get_ref(), "ready.timeout", false)
                .map_err(|m| self.err(t.span().start, format!("contender '{name}': {m}")))?,
        };
        let ready_path = ready
            .and_then(|r| r.get_ref().path.clone())
            .unwrap_or_else(|| "/".into());
        if let Err(e) = check_path(&ready_path) {
            return Err(self.err(
                ready.map_or(at, |r| r.span().start),
                format!("contender '{name}': ready.{e}"),
            ));
        }
        Ok(Launch::Command {
            command: command.get_ref().clone(),
            cwd: c.cwd.as_ref().map(|d| PathBuf::from(d.get_ref())),
            env: c.env.clone(),
            setup: c.setup.as_ref().map(|s| s.get_ref().clone()),
            config: c.config.as_ref().map(|s| s.get_ref().clone()),
            ready_path,
            ready_timeout,
            nofile: c.nofile,
        })
    }

    /// Every string shootout fills and hands to the shell or the OS (command, setup, cwd,
    /// env): known placeholders only, no NUL, env names that are variable names.
    fn check_filled_strings(
        &self,
        name: &str,
        at: usize,
        c: &FileContender,
        command: &Spanned<String>,
    ) -> Result<(), PlanError> {
        fn key(v: &Option<Spanned<String>>, at: usize) -> (&str, usize) {
            v.as_ref()
                .map_or(("", at), |s| (s.get_ref().as_str(), s.span().start))
        }
        let (setup, setup_at) = key(&c.setup, at);
        let (cwd, cwd_at) = key(&c.cwd, at);
        let (config, config_at) = key(&c.config, at);
        let strings = [
            ("command", command.get_ref().as_str(), command.span().start),
            ("setup", setup, setup_at),
            ("cwd", cwd, cwd_at),
            ("config", config, config_at),
        ];
        let env = c.env.iter().map(|(k, v)| (k.as_str(), v.as_str(), at));
        for (key, value, key_at) in strings.into_iter().chain(env) {
            if let Some(p) = unknown_placeholder(value) {
                let known: Vec<String> = PLACEHOLDERS.iter().map(|n| format!("{{{n}}}")).collect();
                return Err(self.err(key_at, format!(
                    "contender '{name}': {key} uses the unknown placeholder {p}: the placeholders are {} (for a shell variable write ${p}; for literal braces put a space inside: {{ x }})",
                    known.join(", ")
                )));
            }
            if value.contains('\0') {
                return Err(self.err(
                    key_at,
                    format!("contender '{name}': {key} contains a NUL character: remove it"),
                ));
            }
        }
        if let Some(k) = c
            .env
            .keys()
            .find(|k| k.is_empty() || k.contains(['=', '\0']))
        {
            return Err(self.err(at, format!("contender '{name}': env name {k:?} is not a variable name: write e.g. PASTE_DIR")));
        }
        Ok(())
    }

    /// A `pipeline` key in the spec's range ([`rules::pipeline`]), else `default`.
    fn pipeline(
        &self,
        v: Option<&Spanned<usize>>,
        key: &str,
        default: usize,
    ) -> Result<usize, PlanError> {
        v.map_or(Ok(default), |p| self.rule(p, key, rules::pipeline))
    }

    /// The number at `v` checked by the spec's `rule`; a broken rule is an error at `v`'s
    /// line naming `key`.
    fn rule<T: Copy>(
        &self,
        v: &Spanned<T>,
        key: &str,
        rule: fn(T) -> Result<T, SpecError>,
    ) -> Result<T, PlanError> {
        rule(*v.get_ref()).map_err(|e| self.err(v.span().start, broken_rule(key, &e)))
    }

    /// Every `[[workload]]`: at least one, unique names.
    fn workloads(
        &self,
        raw: &[Spanned<FileWorkload>],
        load: &FileLoad,
        pipeline: usize,
    ) -> Result<Vec<Workload>, PlanError> {
        if raw.is_empty() {
            return Err(self.err(0, "the plan has no [[workload]]: add at least one request, e.g. [[workload]] name = \"home\" path = \"/\"".into()));
        }
        let mut workloads = Vec::new();
        let mut names = HashSet::new();
        for w in raw {
            let at = w.span().start;
            let w = w.get_ref();
            let name = w.name.trim().to_string();
            if name.is_empty() {
                return Err(self.err(at, "a workload has an empty name: give it one".into()));
            }
            if !names.insert(name.clone()) {
                return Err(self.err(
                    at,
                    format!("two workloads are named '{name}': names must be unique"),
                ));
            }
            workloads.push(self.workload(name, at, w, load, pipeline)?);
        }
        Ok(workloads)
    }

    /// One workload's request and expectations, each field checked before it can reach
    /// the wire: the request, what a good answer is, how it is spoken, its list's order;
    /// then whether protocol, streams, pipeline and list agree.
    fn workload(
        &self,
        name: String,
        at: usize,
        w: &FileWorkload,
        load: &FileLoad,
        pipeline: usize,
    ) -> Result<Workload, PlanError> {
        let call = match grpc::asked(w, load.protocol.as_ref()) {
            true => Some(self.grpc(&name, at, w)?),
            false => {
                self.no_grpc_keys(&name, w)?;
                None
            }
        };
        let Request {
            method,
            path,
            headers,
        } = self.request(&name, at, w, call.as_ref())?;
        let mut expect = self.expectation(&name, at, w)?;
        let (protocol, streams) = self.protocol(&name, w, load)?;
        let hold = match call {
            // A call is answered 200, whatever its outcome (that is grpc-status's).
            Some(_) => {
                expect.status = StatusSet::parse("200").unwrap_or_default();
                None
            }
            None => self.websocket(&name, at, w, load, protocol)?,
        };
        let pipeline = self.pipeline(
            w.pipeline.as_ref(),
            &format!("workload '{name}': pipeline"),
            pipeline,
        )?;
        let order = self.list_order(&name, w)?;
        let arrival = self.arrival(&name, w)?;
        let wire = Wire {
            protocol,
            streams,
            pipeline,
        };
        self.wire_agrees(&name, at, w, load, wire)?;
        let find_max = self.find_max(&name, w, load)?;
        let until = self.until(&name, w, load, find_max.is_some())?;
        self.journey_agrees(&name, w, protocol)?;
        self.shared_users_agree(&name, w, load, streams, find_max.is_some())?;
        let journey_connection = self.journey_connection(&name, w, load, find_max.is_some())?;
        Ok(Workload {
            name,
            method,
            path,
            headers,
            body_file: w.body_file.as_ref().map(PathBuf::from),
            body: w.body.as_ref().map(|b| b.get_ref().clone()),
            expect,
            protocol,
            streams,
            pipeline,
            requests: w.requests.as_ref().map(|r| PathBuf::from(r.get_ref())),
            order,
            seed: w.seed.unwrap_or(0),
            arrival,
            list: None,
            find_max,
            // A gRPC call's message is its own (JSON, encoded as its input type).
            message: match call {
                Some(_) => None,
                None => w.message.as_ref().map(|m| m.get_ref().clone()),
            },
            hold,
            messages: w.messages.as_ref().map(|m| PathBuf::from(m.get_ref())),
            message_list: None,
            journey: w.journey.as_ref().map(|j| PathBuf::from(j.get_ref())),
            journeys: None,
            journey_connection,
            grpc: call,
            until,
        })
    }

    /// A journey workload's `journey_connection`: `reuse` (the default) or `new`, for
    /// journeys started on a schedule (levels of `rate`, or a capacity search) only.
    fn journey_connection(
        &self,
        name: &str,
        w: &FileWorkload,
        load: &FileLoad,
        search: bool,
    ) -> Result<crate::spec::JourneyConnection, PlanError> {
        use crate::spec::JourneyConnection;
        let Some(how) = &w.journey_connection else {
            return Ok(JourneyConnection::Reuse);
        };
        let at = how.span().start;
        if w.journey.is_none() {
            return Err(self.err(at, format!("workload '{name}': journey_connection chooses the connection of each journey's new user: give journey = \"FILE\", or remove journey_connection")));
        }
        if load.rate.is_none() && !search {
            return Err(self.err(at, format!("workload '{name}': journey_connection chooses the open model's connections (a closed-model user keeps its connection from one journey to the next): give [load] rate = [..] or find_max, or remove journey_connection")));
        }
        match how.get_ref().as_str() {
            "reuse" => Ok(JourneyConnection::Reuse),
            "new" => Ok(JourneyConnection::New),
            other => Err(self.err(at, format!("workload '{name}': journey_connection = \"{other}\": give \"reuse\" (a connection another user freed, the default) or \"new\" (each user its own)"))),
        }
    }

    /// A workload's `until`, else `[load]`'s: conditions in `--until`'s grammar, on a
    /// workload whose levels are swept (a capacity search's steps last as each needs).
    fn until(
        &self,
        name: &str,
        w: &FileWorkload,
        load: &FileLoad,
        searched: bool,
    ) -> Result<Vec<crate::until::Condition>, PlanError> {
        let (u, key) = match (&w.until, &load.until) {
            (Some(u), _) => (u, format!("workload '{name}': until")),
            (None, Some(u)) => (u, "load.until".to_string()),
            (None, None) => return Ok(Vec::new()),
        };
        let at = u.span().start;
        if searched {
            return Err(self.err(at, format!("{key}: workload '{name}' searches its capacity (find_max), whose steps last as long as each needs: drop until, or find_max")));
        }
        crate::until::parse_all(std::slice::from_ref(u.get_ref()))
            .map_err(|e| self.err(at, format!("{key} = {:?}: {e}", u.get_ref())))
    }

    /// Steps with conditions (`until`) run for a time, the most each may last, no
    /// shorter than [`crate::until::LEAST`]: not a count of requests (`defaults.requests`),
    /// nor a `duration` or stage under it.
    fn until_span(
        &self,
        raw_workloads: &[Spanned<FileWorkload>],
        load: &Spanned<FileLoad>,
        raw_defaults: &FileDefaults,
        (d, workloads, levels): (&Defaults, &[Workload], &[Level]),
    ) -> Result<(), PlanError> {
        let Some(wi) = workloads.iter().position(|w| !w.until.is_empty()) else {
            return Ok(());
        };
        let at = raw_workloads[wi]
            .get_ref()
            .until
            .as_ref()
            .or(load.get_ref().until.as_ref())
            .map_or(0, |u| u.span().start);
        let least = crate::until::LEAST;
        if let Span::Requests(_) = d.measure {
            let at = raw_defaults
                .requests
                .as_ref()
                .map_or(at, |r| r.span().start);
            return Err(self.err(at, "until ends a step once its figures are sure enough, so a step runs for a time: give defaults.duration (the most a step may last) instead of defaults.requests".into()));
        }
        let short = |s: Span| matches!(s, Span::Time(t) if t < least);
        if short(d.measure) {
            let at = raw_defaults
                .duration
                .as_ref()
                .map_or(at, |r| r.span().start);
            return Err(self.err(at, format!("defaults.duration is the most a step with until may last, and such a step lasts at least {} s: give duration = \"{}s\" or more", least.as_secs(), least.as_secs())));
        }
        if levels.iter().any(|l| l.measure.is_some_and(short)) {
            let at = load
                .get_ref()
                .stages
                .as_ref()
                .map_or(at, |s| s.span().start);
            return Err(self.err(at, format!("load.stages: a stage is the most a step with until may last, and such a step lasts at least {} s: give each stage a duration of \"{}s\" or more", least.as_secs(), least.as_secs())));
        }
        Ok(())
    }

    /// A journey workload's keys: its steps say what to send, over HTTP/1.1.
    fn journey_agrees(
        &self,
        name: &str,
        w: &FileWorkload,
        protocol: Protocol,
    ) -> Result<(), PlanError> {
        let Some(j) = &w.journey else {
            return Ok(());
        };
        let clash = [
            ("requests", w.requests.is_some()),
            ("messages", w.messages.is_some()),
            ("method", w.method.is_some()),
            ("body", w.body.is_some()),
            ("body_file", w.body_file.is_some()),
            ("message", w.message.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given);
        if let Some((key, _)) = clash {
            return Err(self.err(
                j.span().start,
                format!("workload '{name}': a journey says what each step sends: remove {key}, or the journey"),
            ));
        }
        if !matches!(protocol, Protocol::Http1 | Protocol::Http2) {
            return Err(self.err(
                j.span().start,
                format!("workload '{name}': journeys run over HTTP/1.1 and HTTP/2 for now: give protocol = \"http/1.1\" or \"h2\" (or none)"),
            ));
        }
        Ok(())
    }

    /// A journey workload's users share HTTP/2 connections (`streams` above 1) in the
    /// closed model only: at levels of `rate` (or in a search) each journey is a new user
    /// on a connection of its own.
    fn shared_users_agree(
        &self,
        name: &str,
        w: &FileWorkload,
        load: &FileLoad,
        streams: usize,
        search: bool,
    ) -> Result<(), PlanError> {
        let (Some(j), true) = (&w.journey, streams > 1) else {
            return Ok(());
        };
        if load.rate.is_none() && !search {
            return Ok(());
        }
        Err(self.err(
            j.span().start,
            format!("workload '{name}': {streams} users share each HTTP/2 connection (streams = {streams}) in the closed model only; at levels of rate, or in a capacity search, each journey is a new user that takes a connection alone (one another user freed, or a new one): drop streams, or give [load] concurrency = [..]"),
        ))
    }

    /// A workload's capacity search: its own `find_max`, else `[load]`'s, each SLO and
    /// bound checked.
    fn find_max(
        &self,
        name: &str,
        w: &FileWorkload,
        load: &FileLoad,
    ) -> Result<Option<FindMax>, PlanError> {
        let (f, key) = match (&w.find_max, &load.find_max) {
            (Some(f), _) => (f, format!("workload '{name}': find_max")),
            (None, Some(f)) => (f, "load.find_max".to_string()),
            (None, None) => return Ok(None),
        };
        let connections = load
            .connections
            .as_ref()
            .map_or(RATE_CONNECTIONS, |c| *c.get_ref());
        let search = f
            .get_ref()
            .check(&key, connections)
            .map_err(|m| self.err(f.span().start, m))?;
        // A step's SLO judges a journey's step: the workload must run journeys (whether
        // the step is one of its file's is checked when the file is read).
        if let (Some(t), None) = (search.slos.iter().find(|t| t.step.is_some()), &w.journey) {
            let fix = if w.find_max.is_some() {
                "give the workload a journey file (journey = \"FILE\"), or drop the step: prefix"
            } else {
                "move the search into the journey workloads' own find_max, or drop the step: prefix"
            };
            return Err(self.err(
                f.span().start,
                format!("{key}.slo: '{}' judges a journey's step, and workload '{name}' runs no journey: {fix}", t.text),
            ));
        }
        Ok(Some(search))
    }

    /// A search's steps run for a time (each as long as its SLOs need, and at least the
    /// step length): a plan that counts requests per step cannot search.
    fn search_span(&self, raw: &FileDefaults, d: &Defaults) -> Result<(), PlanError> {
        if let Span::Requests(_) = d.measure {
            let at = raw.requests.as_ref().map_or(0, |r| r.span().start);
            return Err(self.err(at, "find_max runs each step for a time: give defaults.duration (each step's least length) instead of defaults.requests".into()));
        }
        Ok(())
    }

    /// A workload's method (upper case), path and headers, each checked as the spec checks
    /// them, and its body: `body` or `body_file`, an inline body within the spec's limit.
    fn request(
        &self,
        name: &str,
        at: usize,
        w: &FileWorkload,
        call: Option<&GrpcWorkload>,
    ) -> Result<Request, PlanError> {
        let key_at = |v: Option<std::ops::Range<usize>>| v.map_or(at, |s| s.start);
        let in_workload = |offset: usize| {
            move |e: RequestError| self.err(offset, format!("workload '{name}': {e}"))
        };
        // A gRPC call is a POST to its method's path (`method` names the call).
        let method = match call {
            Some(_) => "POST",
            None => w.method.as_ref().map_or("GET", |m| m.get_ref().as_str()),
        };
        check_method(method).map_err(in_workload(key_at(w.method.as_ref().map(Spanned::span))))?;
        let path = match call {
            Some(c) => format!("/{}", c.method),
            None => w
                .path
                .as_ref()
                .map_or_else(|| "/".to_string(), |p| p.get_ref().clone()),
        };
        check_path(&path).map_err(in_workload(key_at(w.path.as_ref().map(Spanned::span))))?;
        let headers: Vec<(String, String)> = w
            .headers
            .as_ref()
            .map(|h| {
                h.get_ref()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for (k, v) in &headers {
            check_header(k, v)
                .map_err(in_workload(key_at(w.headers.as_ref().map(Spanned::span))))?;
        }
        if w.body.is_some() && w.body_file.is_some() {
            return Err(self.err(
                at,
                format!("workload '{name}': give body or body_file, not both"),
            ));
        }
        if let Some(b) = &w.body {
            rules::body(b.get_ref().len()).map_err(|e| {
                let key = format!("workload '{name}'");
                self.err(b.span().start, broken_rule(&key, &e.into()))
            })?;
        }
        Ok(Request {
            method: method.to_ascii_uppercase(),
            path,
            headers,
        })
    }

    /// A workload's `arrival`: `"even"` (the default) or `"poisson"`, drawn from `seed`.
    fn arrival(&self, name: &str, w: &FileWorkload) -> Result<crate::Arrival, PlanError> {
        let Some(a) = &w.arrival else {
            return Ok(crate::Arrival::Even);
        };
        match a.get_ref().as_str() {
            "even" => Ok(crate::Arrival::Even),
            "poisson" => Ok(crate::Arrival::Poisson {
                seed: w.seed.unwrap_or(0),
            }),
            other => Err(self.err(
                a.span().start,
                format!(
                    "workload '{name}': arrival must be \"even\" or \"poisson\", not {other:?}"
                ),
            )),
        }
    }

    /// A workload's request list keys: `requests` instead of method, path and body, and
    /// the list's `order` (`seq` when not given).
    fn list_order(&self, name: &str, w: &FileWorkload) -> Result<Order, PlanError> {
        if let Some(r) = &w.requests {
            if w.method.is_some() || w.path.is_some() || w.body.is_some() || w.body_file.is_some() {
                return Err(self.err(
                    r.span().start,
                    format!("workload '{name}': requests gives each request's method, path and body: remove method, path, body and body_file"),
                ));
            }
        }
        match &w.order {
            None => Ok(Order::Seq),
            Some(o) if w.requests.is_none() && w.messages.is_none() => Err(self.err(
                o.span().start,
                format!("workload '{name}': order applies to a list: add requests = \"FILE\" (or, over WebSocket, messages = \"FILE\") or remove it"),
            )),
            Some(o) => match o.get_ref().as_str() {
                "seq" => Ok(Order::Seq),
                "random" => Ok(Order::Random),
                other => Err(self.err(
                    o.span().start,
                    format!("workload '{name}': order must be \"seq\" or \"random\", not {other:?}"),
                )),
            },
        }
    }

    /// A workload's protocol, streams, pipeline and list against [`Wire::conflict`]: an
    /// error at the streams key when more than one stream needs HTTP/2, else at the
    /// workload.
    fn wire_agrees(
        &self,
        name: &str,
        at: usize,
        w: &FileWorkload,
        load: &FileLoad,
        wire: Wire,
    ) -> Result<(), PlanError> {
        let Some(c) = wire.conflict(w.requests.is_some()) else {
            return Ok(());
        };
        let at = match c {
            SpecError::StreamsNeedHttp2(_) => w
                .streams
                .as_ref()
                .or(load.streams.as_ref())
                .map_or(at, |s| s.span().start),
            _ => at,
        };
        Err(self.err(at, wire_message(&format!("workload '{name}'"), &c, false)))
    }

    /// A workload's `protocol` and `streams`, each taken from the workload, else from
    /// `[load]`: HTTP/1.1 and 1 stream when neither says.
    fn protocol(
        &self,
        name: &str,
        w: &FileWorkload,
        load: &FileLoad,
    ) -> Result<(Protocol, usize), PlanError> {
        let protocol = match w.protocol.as_ref().or(load.protocol.as_ref()) {
            None => Protocol::Http1,
            // gRPC's calls are HTTP/2 streams.
            Some(p) if p.get_ref().eq_ignore_ascii_case("grpc") => Protocol::Http2,
            Some(p) => Protocol::parse(p.get_ref()).ok_or_else(|| {
                self.err(
                    p.span().start,
                    format!(
                        "workload '{name}': protocol = \"{}\" is not one shootout speaks: write \"http/1.1\", \"h2\", \"h3\", \"websocket\" or \"grpc\"",
                        p.get_ref()
                    ),
                )
            })?,
        };
        let streams = match w.streams.as_ref().or(load.streams.as_ref()) {
            None => 1,
            Some(s) => self.rule(s, &format!("workload '{name}': streams"), rules::streams)?,
        };
        Ok((protocol, streams))
    }

    /// A contender's own `protocol`, `streams` and `pipeline`, each checked alone (their
    /// agreement with each workload is checked by [`Reader::contender_wires`]).
    fn wire_keys(&self, name: &str, c: &FileContender) -> Result<WireKeys, PlanError> {
        let protocol = match &c.protocol {
            None => None,
            Some(p) => Some(Protocol::parse(p.get_ref()).ok_or_else(|| {
                self.err(
                    p.span().start,
                    format!(
                        "contender '{name}': protocol = \"{}\" is not one shootout speaks: write \"http/1.1\", \"h2\", \"h3\" or \"websocket\"",
                        p.get_ref()
                    ),
                )
            })?),
        };
        let streams = match &c.streams {
            None => None,
            Some(s) => {
                Some(self.rule(s, &format!("contender '{name}': streams"), rules::streams)?)
            }
        };
        let pipeline = match &c.pipeline {
            None => None,
            Some(_) => Some(self.pipeline(
                c.pipeline.as_ref(),
                &format!("contender '{name}': pipeline"),
                1,
            )?),
        };
        Ok(WireKeys {
            protocol,
            streams,
            pipeline,
        })
    }

    /// Every contender's own wire keys against every workload: the same rule as a
    /// workload's ([`Wire::conflict`]), the error at the contender's key that broke it.
    fn contender_wires(
        &self,
        raw: &[Spanned<FileContender>],
        contenders: &[Contender],
        workloads: &[Workload],
    ) -> Result<(), PlanError> {
        for (c, file) in contenders.iter().zip(raw) {
            self.contender_over_tls(file, c, workloads)?;
            if c.wire.is_empty() {
                continue;
            }
            let f = file.get_ref();
            for w in workloads {
                self.contender_websocket(file, c, w)?;
                let Some(conflict) = wire_of(&c.wire, w).conflict(w.requests.is_some()) else {
                    continue;
                };
                let key = match conflict {
                    SpecError::StreamsNeedHttp2(_) => f.streams.as_ref().map(Spanned::span),
                    _ => None,
                };
                let at = key
                    .or(f.protocol.as_ref().map(Spanned::span))
                    .or(f.pipeline.as_ref().map(Spanned::span))
                    .map_or(file.span().start, |s| s.start);
                let who = format!("contender '{}' on workload '{}'", c.name, w.name);
                return Err(self.err(at, wire_message(&who, &conflict, true)));
            }
        }
        Ok(())
    }

    /// HTTP/3 runs over TLS only: a contender spoken to over `h3` on some workload (its
    /// own `protocol`, else the workload's) must be one shootout speaks TLS to, a launched
    /// contender with `tls` or an `https://` URL; else the plan is refused here rather
    /// than the contender failing its verification.
    fn contender_over_tls(
        &self,
        file: &Spanned<FileContender>,
        c: &Contender,
        workloads: &[Workload],
    ) -> Result<(), PlanError> {
        let tls = match &c.launch {
            Launch::Url(u) => u.starts_with("https://") || u.starts_with("wss://"),
            Launch::Command { .. } => c.tls.is_some(),
        };
        let h3 = workloads
            .iter()
            .find(|w| wire_of(&c.wire, w).protocol == Protocol::Http3);
        match h3 {
            Some(w) if !tls => {
                let at = file
                    .get_ref()
                    .protocol
                    .as_ref()
                    .map_or(file.span().start, |p| p.span().start);
                let fix = match &c.launch {
                    Launch::Url(_) => "give its https:// URL",
                    Launch::Command { .. } => "give it tls = { cacert = \"PATH\" } (the CA that signed its certificate) or tls = { insecure = true }, and serve HTTPS and HTTP/3 on {port}",
                };
                Err(self.err(at, format!("contender '{}' on workload '{}' is spoken to over h3, which runs over TLS only: {fix}", c.name, w.name)))
            }
            _ => Ok(()),
        }
    }

    /// A workload's `expect` table: what a good answer is.
    fn expectation(
        &self,
        name: &str,
        at: usize,
        w: &FileWorkload,
    ) -> Result<Expectation, PlanError> {
        let no_expect = FileExpect::default();
        let (e, e_at) = w
            .expect
            .as_ref()
            .map_or((&no_expect, at), |e| (e.get_ref(), e.span().start));
        let status = match &e.status {
            None => StatusSet::default(),
            Some(v) => status_set(v).ok_or_else(|| {
                self.err(e_at, format!("workload '{name}': expect.status must be a code (200), a list ([200, 302]) or a class string (\"2xx\")"))
            })?,
        };
        Ok(Expectation {
            status,
            body_contains: e.body_contains.as_ref().map(|s| s.as_bytes().to_vec()),
            length: e.length,
            echo: e.echo.unwrap_or(false),
            grpc: None,
        })
    }

    /// `[load]`: exactly one of concurrency, rate or stages, and at least one level.
    /// The levels `[load]` lists; none when every one of the `workloads` is searched
    /// (`searched` of them have `find_max`) and `[load]` lists none.
    fn levels(
        &self,
        load: &Spanned<FileLoad>,
        searched: usize,
        workloads: usize,
    ) -> Result<Vec<Level>, PlanError> {
        let l = load.get_ref();
        let at = load.span().start;
        let given = [
            l.concurrency.is_some(),
            l.rate.is_some(),
            l.stages.is_some(),
        ]
        .iter()
        .filter(|x| **x)
        .count();
        if let (Some(f), true) = (&l.find_max, given > 0) {
            return Err(self.err(f.span().start, "load.find_max searches every workload's capacity in place of the levels: remove concurrency, rate or stages from [load], or move find_max into the [[workload]]s to search".into()));
        }
        if given == 0 && searched == workloads {
            self.rate_levels(l, searched > 0, &mut Vec::new())?;
            return Ok(Vec::new());
        }
        if given != 1 {
            return Err(self.err(
                at,
                "[load] needs exactly one of concurrency = [..], rate = [..] or stages = [..] (or find_max = { slo = [..] } to search each workload's capacity)"
                    .into(),
            ));
        }
        let mut levels = Vec::new();
        if let Some(cs) = &l.concurrency {
            for &c in cs.get_ref() {
                rules::connections(c).map_err(|e| {
                    self.err(cs.span().start, broken_rule("load.concurrency values", &e))
                })?;
                levels.push(Level {
                    level: LoadLevel::Concurrency { connections: c },
                    measure: None,
                });
            }
        }
        self.rate_levels(l, searched > 0, &mut levels)?;
        if let Some(stages) = &l.stages {
            self.stage_levels(stages, &mut levels)?;
        }
        if levels.is_empty() {
            return Err(self.err(at, "[load] lists no level: give at least one value".into()));
        }
        Ok(levels)
    }

    /// The most connections of any level, times the streams of each contender on each
    /// workload, within the spec's limit on requests in flight ([`rules::in_flight`]); an
    /// error at the `[load]` key that gave the connections.
    fn in_flight(
        &self,
        load: &FileLoad,
        levels: &[Level],
        contenders: &[Contender],
        workloads: &[Workload],
    ) -> Result<(), PlanError> {
        let connections = |l: &Level| match l.level {
            LoadLevel::Concurrency { connections } | LoadLevel::Rate { connections, .. } => {
                connections
            }
        };
        let most = levels.iter().map(connections).max().unwrap_or(1);
        for w in workloads {
            for c in contenders {
                let Err(e) = rules::in_flight(most, wire_of(&c.wire, w).streams) else {
                    continue;
                };
                let (key, at) = match (&load.concurrency, &load.connections, &load.stages) {
                    (Some(cs), _, _) => ("load.concurrency", cs.span()),
                    (_, Some(c), _) => ("load.connections", c.span()),
                    (_, _, Some(s)) => ("load.stages", s.span()),
                    _ => ("load", 0..0),
                };
                let who = match c.wire.streams {
                    Some(_) => format!("contender '{}' on workload '{}'", c.name, w.name),
                    None => format!("workload '{}'", w.name),
                };
                return Err(self.err(at.start, broken_rule(&format!("{key}: {who}"), &e)));
            }
        }
        Ok(())
    }

    /// `max_connections`: with `rate = [..]` or a search (`search`) only, in the
    /// connections' range, and no fewer
    /// than the `connections` a step opens at the start.
    fn max_connections(&self, l: &FileLoad, search: bool) -> Result<Option<usize>, PlanError> {
        let Some(m) = &l.max_connections else {
            return Ok(None);
        };
        let at = m.span().start;
        if l.rate.is_none() && !search {
            return Err(self.err(at, "load.max_connections applies to rate = [..] and find_max only, where connections open as the schedule needs them: remove it, or give rates".into()));
        }
        let max = rules::connections(*m.get_ref())
            .map_err(|e| self.err(at, broken_rule("load.max_connections", &e)))?;
        let start = l
            .connections
            .as_ref()
            .map_or(RATE_CONNECTIONS, |c| *c.get_ref());
        if max < start {
            return Err(self.err(at, format!("load.max_connections ({max}) is below the {start} connections each step opens at the start: raise it, or lower load.connections")));
        }
        Ok(Some(max))
    }

    /// `rate = [..]` and the `connections` that carry it (or a search's steps: `search`).
    fn rate_levels(
        &self,
        l: &FileLoad,
        search: bool,
        levels: &mut Vec<Level>,
    ) -> Result<(), PlanError> {
        if let Some(c) = &l.connections {
            if l.rate.is_none() && !search {
                return Err(self.err(c.span().start, "load.connections applies to rate = [..] and find_max only: remove it, or give the connections as concurrency = [..]".into()));
            }
            rules::connections(*c.get_ref()).map_err(|e| {
                let why = broken_rule("load.connections", &e);
                let why = format!("{why}: the rate is sent over these connections");
                self.err(c.span().start, why)
            })?;
        }
        let Some(rs) = &l.rate else { return Ok(()) };
        let connections = l
            .connections
            .as_ref()
            .map_or(RATE_CONNECTIONS, |c| *c.get_ref());
        for &r in rs.get_ref() {
            rules::rate(r)
                .map_err(|e| self.err(rs.span().start, broken_rule("load.rate values", &e)))?;
            levels.push(Level {
                level: LoadLevel::Rate {
                    rps: r,
                    connections,
                },
                measure: None,
            });
        }
        Ok(())
    }

    /// `stages = [..]`: concurrency levels, each with its own length.
    fn stage_levels(
        &self,
        stages: &Spanned<Vec<FileStage>>,
        levels: &mut Vec<Level>,
    ) -> Result<(), PlanError> {
        let at = stages.span().start;
        for s in stages.get_ref() {
            let d = duration_of(&s.duration, "load.stages duration", false)
                .map_err(|m| self.err(at, m))?;
            rules::connections(s.concurrency)
                .map_err(|e| self.err(at, broken_rule("load.stages concurrency", &e)))?;
            levels.push(Level {
                level: LoadLevel::Concurrency {
                    connections: s.concurrency,
                },
                measure: Some(Span::Time(d)),
            });
        }
        Ok(())
    }
}

/// `0-3,6` for a list of CPU numbers, as taskset writes it.
pub fn cpu_ranges(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn status_set(v: &toml::Value) -> Option<StatusSet> {
    let text = match v {
        toml::Value::Integer(c) => c.to_string(),
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| match x {
                toml::Value::Integer(c) => Some(c.to_string()),
                toml::Value::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?
            .join(","),
        _ => return None,
    };
    StatusSet::parse(&text).ok()
}

/// Resolves a path of the plan relative to the plan file's directory.
pub fn resolve(plan_dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        plan_dir.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "pastebin"
[defaults]
warmup = "1s"
duration = "2s"
repeat = 2
server_cpus = "1"
load_cpus = "0"

[[contender]]
name = "fs"
command = "gunicorn -b 127.0.0.1:{port} app:app"
ready = { path = "/health", timeout = "5s" }
baseline = true

[[contender]]
name = "theirs"
url = "http://127.0.0.1:8080/"

[[workload]]
name = "get"
path = "/content/a"
expect = { status = 200, body_contains = "junk" }

[[workload]]
name = "post"
method = "post"
body = "a=1"
expect = { status = [200, 302] }

[load]
concurrency = [1, 10]
"#;

    /// The CPUs the tests' plans may name.
    const CPUS: &[usize] = &[0, 1, 2, 3];

    #[test]
    fn a_good_plan_parses() {
        let p = parse(GOOD, "plan.toml", CPUS).unwrap();
        assert_eq!(p.contenders.len(), 2);
        assert_eq!(p.baseline(), 0);
        assert_eq!(
            p.contenders[1].launch,
            Launch::Url("http://127.0.0.1:8080".into())
        );
        assert_eq!(p.workloads[1].method, "POST");
        assert!(
            p.workloads[1].expect.status.contains(302)
                && !p.workloads[1].expect.status.contains(201)
        );
        assert_eq!(p.defaults.repeat, 2);
        assert_eq!(p.defaults.server_cpus, Some(vec![1]));
        assert_eq!(p.levels.len(), 2);
    }

    fn error_of(text: &str) -> String {
        parse(text, "plan.toml", CPUS).unwrap_err().to_string()
    }

    /// `warmup = "auto"`: a warm-up bounded by its most, ended by the level test; a
    /// word other than auto names the three forms.
    #[test]
    fn an_automatic_warm_up_is_bounded_by_its_most() {
        let p = parse(
            &GOOD.replace("warmup = \"1s\"", "warmup = \"auto\""),
            "plan.toml",
            CPUS,
        )
        .unwrap();
        assert!(p.defaults.warmup_auto);
        assert_eq!(p.defaults.warmup, Some(Span::Time(crate::WarmedUp::MAX)));
        let p = parse(GOOD, "plan.toml", CPUS).unwrap();
        assert!(!p.defaults.warmup_auto);
        let e = error_of(&GOOD.replace("warmup = \"1s\"", "warmup = \"automatic\""));
        assert!(
            e.contains("defaults.warmup:") && e.contains("or \"auto\""),
            "{e}"
        );
    }

    /// `until` on a workload, else `[load]`'s for every swept workload; each mistake names
    /// the key and the fix: bad syntax, a step counted in requests, a duration or stage
    /// under the least a step with conditions lasts, a capacity search.
    #[test]
    fn until_is_a_workload_or_load_key_for_steps_bounded_by_time() {
        let timed = GOOD.replace("duration = \"2s\"", "duration = \"30s\"");
        let own = timed.replace(
            "name = \"post\"\nmethod",
            "name = \"post\"\nuntil = \"p99±5%,rps±2%\"\nmethod",
        );
        let p = parse(&own, "plan.toml", CPUS).unwrap();
        assert!(p.workloads[0].until.is_empty(), "get has none");
        let names: Vec<String> = p.workloads[1].until.iter().map(|c| c.to_string()).collect();
        assert_eq!(names, ["p99±5%", "rps±2%"]);
        // [load]'s for every workload without its own.
        let both = own.replace("[load]\n", "[load]\nuntil = \"p50±1%\"\n");
        let p = parse(&both, "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads[0].until[0].to_string(), "p50±1%");
        assert_eq!(p.workloads[1].until.len(), 2, "its own wins");

        let e = error_of(&timed.replace("[load]\n", "[load]\nuntil = \"p99\"\n"));
        assert!(e.contains("load.until = \"p99\": 'p99' has no ±"), "{e}");
        assert!(e.contains("e.g. p99±5%"), "{e}");
        // Under the least: the duration is the most a step may last.
        let e = error_of(&GOOD.replace("[load]\n", "[load]\nuntil = \"p99±5%\"\n"));
        assert!(
            e.contains("defaults.duration is the most a step with until may last")
                && e.contains("give duration = \"3s\" or more"),
            "{e}"
        );
        let counted = GOOD
            .replace("duration = \"2s\"", "requests = 1000")
            .replace("name = \"get\"", "name = \"get\"\nuntil = \"p99±5%\"");
        let e = error_of(&counted);
        assert!(e.contains("instead of defaults.requests"), "{e}");
        let staged = timed
            .replace(
                "concurrency = [1, 10]",
                "stages = [{ concurrency = 1, duration = \"2s\" }]",
            )
            .replace("[load]\n", "[load]\nuntil = \"p99±5%\"\n");
        assert!(error_of(&staged).contains("load.stages: a stage is the most"));
        let searched = timed
            .replace("concurrency = [1, 10]", "")
            .replace(
                "name = \"get\"",
                "name = \"get\"\nuntil = \"p99±5%\"\nfind_max = { slo = [\"p99<5ms\"] }",
            )
            .replace(
                "name = \"post\"",
                "name = \"post\"\nfind_max = { slo = [\"p99<5ms\"] }",
            );
        let e = error_of(&searched);
        assert!(
            e.contains("workload 'get': until: workload 'get' searches its capacity (find_max)"),
            "{e}"
        );
    }

    /// A contender's `tls`: a CA file (placeholders left for the start) or `insecure`,
    /// one of them, for a launched contender or an https:// URL; each mistake is named.
    #[test]
    fn a_contender_s_tls_names_how_its_certificate_is_checked() {
        let launched =
            |tls: &str| GOOD.replace("baseline = true", &format!("baseline = true\ntls = {tls}"));
        let p = parse(
            &launched(r#"{ cacert = "{tmp}/caddy/pki/authorities/local/root.crt" }"#),
            "plan.toml",
            CPUS,
        )
        .unwrap();
        let want = ContenderTls {
            cacert: Some("{tmp}/caddy/pki/authorities/local/root.crt".into()),
            insecure: false,
        };
        assert_eq!(p.contenders[0].tls, Some(want));
        assert_eq!(p.contenders[1].tls, None);
        let p = parse(&launched("{ insecure = true }"), "plan.toml", CPUS).unwrap();
        assert!(p.contenders[0].tls.as_ref().is_some_and(|t| t.insecure));
        let resolved = crate::resolved::ResolvedPlan::of(&p).to_json();
        assert!(resolved.contains(r#""tls":"insecure""#), "{resolved}");

        let e = error_of(&launched("{ }"));
        assert!(e.contains("give cacert = \"PATH\""), "{e}");
        let e = error_of(&launched(r#"{ cacert = "ca.pem", insecure = true }"#));
        assert!(e.contains("both cacert and insecure"), "{e}");
        let e = error_of(&launched(r#"{ cacert = "{config}/ca.pem" }"#));
        assert!(
            e.contains("tls.cacert uses {config}") && e.contains("{tmp}"),
            "{e}"
        );
        let e = error_of(&launched(r#"{ ca = "ca.pem" }"#));
        assert!(e.contains("unknown field `ca`"), "{e}");
        let url = |u: &str, tls: &str| {
            GOOD.replace(
                "url = \"http://127.0.0.1:8080/\"",
                &format!("url = \"{u}\"\ntls = {tls}"),
            )
        };
        let e = error_of(&url("http://127.0.0.1:8080", "{ insecure = true }"));
        assert!(e.contains("its url 'http://127.0.0.1:8080' is not"), "{e}");
        let e = error_of(&url(
            "https://127.0.0.1:8443",
            r#"{ cacert = "{tmp}/ca.pem" }"#,
        ));
        assert!(e.contains("may use are {plan_dir}"), "{e}");
        let p = parse(
            &url(
                "https://127.0.0.1:8443",
                r#"{ cacert = "{plan_dir}/ca.pem" }"#,
            ),
            "plan.toml",
            CPUS,
        )
        .unwrap();
        assert!(p.contenders[1].tls.is_some());
    }

    /// A contender spoken to over h3 must be spoken to over TLS: the plan says so at the
    /// contender, with the fix, for a launched one without `tls` and a plain http:// URL.
    #[test]
    fn h3_needs_a_contender_spoken_to_over_tls() {
        let h3 = GOOD.replace("baseline = true", "baseline = true\nprotocol = \"h3\"");
        let e = error_of(&h3);
        assert!(
            e.contains("contender 'fs' on workload 'get' is spoken to over h3")
                && e.contains("tls = { insecure = true }"),
            "{e}"
        );
        let with_tls = h3.replace(
            "protocol = \"h3\"",
            "protocol = \"h3\"\ntls = { insecure = true }",
        );
        parse(&with_tls, "plan.toml", CPUS).unwrap();
        let url = GOOD.replace(
            "url = \"http://127.0.0.1:8080/\"",
            "url = \"http://127.0.0.1:8080/\"\nprotocol = \"h3\"",
        );
        let e = error_of(&url);
        assert!(
            e.contains("contender 'theirs'") && e.contains("give its https:// URL"),
            "{e}"
        );
    }

    #[test]
    fn metrics_listen_is_a_port_on_loopback_or_an_address_typed() {
        assert_eq!(
            parse(GOOD, "plan.toml", CPUS)
                .unwrap()
                .defaults
                .metrics_listen,
            None
        );
        let with = |v: &str| {
            GOOD.replace(
                "load_cpus = \"0\"",
                &format!("load_cpus = \"0\"\nmetrics_listen = \"{v}\""),
            )
        };
        let p = parse(&with("9464"), "plan.toml", CPUS).unwrap();
        assert_eq!(
            p.defaults.metrics_listen,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        let p = parse(&with("0.0.0.0:9464"), "plan.toml", CPUS).unwrap();
        assert_eq!(
            p.defaults.metrics_listen,
            Some("0.0.0.0:9464".parse().unwrap())
        );
        let e = error_of(&with("here"));
        assert!(
            e.contains("plan.toml:9")
                && e.contains("defaults.metrics_listen: `here` is not an address"),
            "{e}"
        );
    }

    /// nginx's usual setup: the port lives in a config file. The plan's `config` is that
    /// file, `{config}` its path; a setup that writes the port into a file is accepted too.
    #[test]
    fn a_port_in_a_config_file_is_a_way_to_listen_on_port() {
        let nginx = "command = \"nginx -p {tmp} -c {config} -g 'daemon off;'\"\n\
                     config = \"\"\"\nevents { }\nhttp { server { listen 127.0.0.1:{port}; root {plan_dir}; } }\n\"\"\"";
        let p = parse(
            &GOOD.replace("command = \"gunicorn -b 127.0.0.1:{port} app:app\"", nginx),
            "plan.toml",
            CPUS,
        )
        .unwrap();
        let Launch::Command {
            command, config, ..
        } = &p.contenders[0].launch
        else {
            panic!("{:?}", p.contenders[0].launch)
        };
        assert_eq!(command, "nginx -p {tmp} -c {config} -g 'daemon off;'");
        assert_eq!(
            config.as_deref(),
            Some("events { }\nhttp { server { listen 127.0.0.1:{port}; root {plan_dir}; } }\n")
        );
        let from_setup = "command = \"nginx -c {tmp}/nginx.conf\"\nsetup = \"sed s/PORT/{port}/ {plan_dir}/nginx.conf > {tmp}/nginx.conf\"";
        let p = parse(
            &GOOD.replace(
                "command = \"gunicorn -b 127.0.0.1:{port} app:app\"",
                from_setup,
            ),
            "plan.toml",
            CPUS,
        )
        .unwrap();
        assert!(matches!(
            &p.contenders[0].launch,
            Launch::Command { config: None, .. }
        ));
        // No {port} anywhere: the error names the way for a port in a file.
        let e = error_of(&GOOD.replace("127.0.0.1:{port}", "127.0.0.1:8000"));
        assert!(e.contains("the command must listen on {port}"), "{e}");
        assert!(e.contains("config = \"\"\"… listen 127.0.0.1:{port}; …\"\"\" and its path to the command as {config}"), "{e}");
        assert!(
            e.contains("or write {port} into the file from setup"),
            "{e}"
        );
        // A shell variable is not the placeholder.
        let e = error_of(&GOOD.replace("127.0.0.1:{port}", "127.0.0.1:${port}"));
        assert!(e.contains("the command must listen on {port}"), "{e}");
        // A misspelt {port} is named as the unknown placeholder it is.
        let e = error_of(&GOOD.replace("127.0.0.1:{port}", "127.0.0.1:{prot}"));
        assert!(
            e.contains("command uses the unknown placeholder {prot}: the placeholders are {port}"),
            "{e}"
        );
        // {config} needs a config; a URL contender takes none.
        let e = error_of(&GOOD.replace("app:app\"", "app:app -c {config}\""));
        assert!(
            e.contains("contender 'fs' uses {config} but has no config"),
            "{e}"
        );
        let e = error_of(&GOOD.replace(
            "url = \"http://127.0.0.1:8080/\"",
            "url = \"http://127.0.0.1:8080/\"\nconfig = \"x\"",
        ));
        assert!(
            e.contains("cwd, env, setup and config apply only to launched contenders"),
            "{e}"
        );
        // Its text is checked as a command's: an unknown placeholder is named.
        let e = error_of(&GOOD.replace("app:app\"", "app:app\"\nconfig = \"listen {prot};\""));
        assert!(
            e.contains("contender 'fs': config uses the unknown placeholder {prot}"),
            "{e}"
        );
    }

    /// `[defaults] busy_poll`: zero unless given (pinned apart or not), a duration up to
    /// 1 ms, kept in the resolved plan stored with the run; longer is an error naming the
    /// key and the limit.
    #[test]
    fn busy_poll_is_read_checked_and_resolved() {
        let plain = parse(GOOD, "plan.toml", CPUS).unwrap();
        assert_eq!(plain.defaults.busy_poll, None, "not given");
        assert_eq!(
            plain.busy_poll(Protocol::Http2),
            Duration::from_micros(20),
            "HTTP/2 pinned apart from the server: polled"
        );
        assert_eq!(plain.busy_poll(Protocol::Http1), Duration::ZERO);
        let shared = GOOD.replace("load_cpus = \"0\"", "load_cpus = \"1\"");
        let shared = parse(&shared, "plan.toml", CPUS).unwrap();
        assert_eq!(
            shared.busy_poll(Protocol::Http2),
            Duration::ZERO,
            "CPUs shared"
        );
        assert!(!crate::resolved::ResolvedPlan::of(&plain)
            .to_json()
            .contains("busy_poll"));
        let text = GOOD.replace(
            "load_cpus = \"0\"",
            "load_cpus = \"0\"\nbusy_poll = \"50us\"",
        );
        let polled = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(polled.defaults.busy_poll, Some(Duration::from_micros(50)));
        assert_eq!(polled.busy_poll(Protocol::Http1), Duration::from_micros(50));
        assert!(crate::resolved::ResolvedPlan::of(&polled)
            .to_json()
            .contains("\"busy_poll_us\":50"));
        let long = GOOD.replace(
            "load_cpus = \"0\"",
            "load_cpus = \"0\"\nbusy_poll = \"2ms\"",
        );
        let e = error_of(&long);
        assert!(
            e.contains("defaults.busy_poll = \"2ms\" is too long: at most 1ms"),
            "{e}"
        );
    }

    /// `theirs` of [`GOOD`] with its own wire keys (`keys`, TOML lines).
    fn with_contender_keys(text: &str, keys: &str) -> String {
        text.replace(
            "url = \"http://127.0.0.1:8080/\"",
            &format!("url = \"http://127.0.0.1:8080/\"\n{keys}"),
        )
    }

    #[test]
    fn a_contenders_protocol_streams_and_pipeline_override_the_workloads() {
        let text = with_contender_keys(
            &GOOD.replace(
                "concurrency = [1, 10]",
                "concurrency = [1, 10]\npipeline = 8",
            ),
            "protocol = \"h2\"\nstreams = 10\npipeline = 1",
        );
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        let h2 = Wire {
            protocol: Protocol::Http2,
            streams: 10,
            pipeline: 1,
        };
        let piped = Wire {
            protocol: Protocol::Http1,
            streams: 1,
            pipeline: 8,
        };
        for wi in 0..2 {
            assert_eq!(p.wire(0, wi), piped, "fs keeps [load]'s pipeline");
            assert_eq!(p.wire(1, wi), h2, "theirs speaks its own");
        }
        assert_eq!(p.contenders[0].wire, WireKeys::default());
        assert_eq!(h2.to_string(), "h2 × 10 streams");
        assert_eq!(piped.to_string(), "http/1.1 × 8 pipelined");
        // One key alone: the others stay the workload's.
        let text = with_contender_keys(GOOD, "pipeline = 16");
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(p.wire(1, 1).pipeline, 16);
        assert_eq!(p.wire(0, 1).pipeline, 1);
        // A contender back on HTTP/1.1 where the workload says h2.
        let text = with_contender_keys(
            &GOOD.replace(
                "concurrency = [1, 10]",
                "concurrency = [1]\nprotocol = \"h2\"",
            ),
            "protocol = \"http/1.1\"",
        );
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(p.wire(0, 0).protocol, Protocol::Http2);
        assert_eq!(p.wire(1, 0), Wire::default());
        // HTTP/3 wherever HTTP/2 is taken, with its streams (over TLS: an https:// URL).
        let text = with_contender_keys(GOOD, "protocol = \"h3\"\nstreams = 4")
            .replace("http://127.0.0.1:8080/", "https://127.0.0.1:8443/");
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(p.wire(1, 0).protocol, Protocol::Http3);
        assert_eq!(p.wire(1, 0).streams, 4);
        assert_eq!(p.wire(1, 0).to_string(), "h3 × 4 streams");
    }

    /// A contender's keys follow the workloads' rules, each error naming the contender,
    /// the workload when the pair disagrees, the key's line and the fix.
    #[test]
    fn contender_wire_keys_are_checked_like_a_workloads() {
        let cases = [
            with_contender_keys(GOOD, "protocol = \"spdy\""),
            with_contender_keys(GOOD, "streams = 0"),
            with_contender_keys(GOOD, "protocol = \"h2\"\nstreams = 10001"),
            with_contender_keys(GOOD, "pipeline = 1025"),
            with_contender_keys(GOOD, "streams = 10"),
            with_contender_keys(GOOD, "protocol = \"h2\"\npipeline = 16"),
            // The pipeline comes from [load], the protocol from the contender.
            with_contender_keys(
                &GOOD.replace("concurrency = [1, 10]", "concurrency = [1]\npipeline = 4"),
                "protocol = \"h2\"",
            ),
            // Back on HTTP/1.1 while the workload asks for 10 streams.
            with_contender_keys(
                &GOOD.replace(
                    "concurrency = [1, 10]",
                    "concurrency = [1]\nprotocol = \"h2\"\nstreams = 10",
                ),
                "protocol = \"h1\"",
            ),
            with_contender_keys(
                &GOOD.replace(
                    "name = \"post\"\nmethod = \"post\"\nbody = \"a=1\"",
                    "name = \"post\"\nrequests = \"reqs.txt\"",
                ),
                "protocol = \"h2\"",
            ),
        ];
        let all: Vec<String> = cases.iter().map(|c| error_of(c)).collect();
        for e in &all {
            assert_eq!(e.lines().count(), 1, "one line: {e}");
            assert!(e.contains("contender 'theirs'"), "{e}");
        }
        insta::assert_snapshot!(all.join("\n"));
    }

    #[test]
    fn protocol_and_streams_come_from_the_workload_else_from_load() {
        let text = GOOD
            .replace(
                "concurrency = [1, 10]",
                "concurrency = [1, 10]\nprotocol = \"h2\"\nstreams = 10",
            )
            .replace(
                "body = \"a=1\"",
                "body = \"a=1\"\nprotocol = \"http/1.1\"\nstreams = 1",
            );
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(
            (p.workloads[0].protocol, p.workloads[0].streams),
            (Protocol::Http2, 10)
        );
        assert_eq!(
            (p.workloads[1].protocol, p.workloads[1].streams),
            (Protocol::Http1, 1)
        );
        let p = parse(GOOD, "plan.toml", CPUS).unwrap();
        assert_eq!(
            (p.workloads[0].protocol, p.workloads[0].streams),
            (Protocol::Http1, 1)
        );
        let e = error_of(&GOOD.replace("concurrency = [1, 10]", "concurrency = [1]\nstreams = 4"));
        assert!(
            e.contains("plan.toml:") && e.contains("needs HTTP/2: add protocol = \"h2\""),
            "{e}"
        );
        let e = error_of(&GOOD.replace(
            "concurrency = [1, 10]",
            "concurrency = [1]\nprotocol = \"spdy\"",
        ));
        assert!(
            e.contains("write \"http/1.1\", \"h2\", \"h3\", \"websocket\" or \"grpc\""),
            "{e}"
        );
        for (key, want) in [
            ("pipeline = 4", "workload 'get': pipeline is HTTP/1.1's"),
            (
                "requests = \"r.txt\"",
                "workload 'get': requests is HTTP/1.1's",
            ),
        ] {
            let e = error_of(
                &GOOD
                    .replace(
                        "concurrency = [1, 10]",
                        "concurrency = [1]\nprotocol = \"h2\"",
                    )
                    .replace("path = \"/content/a\"", key),
            );
            assert!(e.contains(want) && e.contains("use streams"), "{e}");
        }
    }

    /// A journey workload names its file (read by the caller), and refuses the keys its
    /// steps hold and the protocols it does not speak yet, naming the key to remove.
    #[test]
    fn a_journey_workload_names_its_file_and_refuses_the_keys_its_steps_hold() {
        let text = GOOD.replace(
            "name = \"get\"\npath = \"/content/a\"",
            "name = \"get\"\njourney = \"users.toml\"\nseed = 3",
        );
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads[0].journey, Some(PathBuf::from("users.toml")));
        assert_eq!(p.workloads[0].seed, 3);
        assert_eq!(p.workloads[1].journey, None);
        let e = error_of(&GOOD.replace(
            "method = \"post\"",
            "journey = \"j.toml\"\nmethod = \"post\"",
        ));
        assert!(
            e.contains("workload 'post': a journey says what each step sends: remove method"),
            "{e}"
        );
        let e = error_of(&GOOD.replace(
            "name = \"get\"\npath = \"/content/a\"",
            "name = \"get\"\njourney = \"j.toml\"\nprotocol = \"h3\"",
        ));
        assert!(e.contains("journeys run over HTTP/1.1 and HTTP/2"), "{e}");
    }

    /// A journey workload's users may share HTTP/2 connections (`streams`) at levels of
    /// concurrency; at levels of rate each journey is a new user on its own connection,
    /// so `streams` there is refused, naming the workload and the fix.
    #[test]
    fn a_journey_workload_shares_connections_at_levels_of_concurrency_only() {
        let shared = GOOD.replace(
            "name = \"get\"\npath = \"/content/a\"",
            "name = \"get\"\njourney = \"j.toml\"\nprotocol = \"h2\"\nstreams = 4",
        );
        let p = parse(&shared, "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads[0].journey, Some(PathBuf::from("j.toml")));
        let e = error_of(&shared.replace("concurrency = [1, 10]", "rate = [10]"));
        assert!(
            e.contains("workload 'get': 4 users share each HTTP/2 connection")
                && e.contains("drop streams"),
            "{e}"
        );
    }

    /// `journey_connection` chooses an open-model journey workload's connections: read
    /// at levels of rate, `reuse` by default; refused with a closed model, without a
    /// journey and with another word, each naming the workload and the fix.
    #[test]
    fn journey_connection_is_an_open_model_journey_workload_s() {
        use crate::spec::JourneyConnection;
        let journey = GOOD
            .replace(
                "name = \"get\"\npath = \"/content/a\"",
                "name = \"get\"\njourney = \"j.toml\"\njourney_connection = \"new\"",
            )
            .replace("concurrency = [1, 10]", "rate = [10]");
        let p = parse(&journey, "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads[0].journey_connection, JourneyConnection::New);
        let reuse = journey.replace("journey_connection = \"new\"\n", "");
        let p = parse(&reuse, "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads[0].journey_connection, JourneyConnection::Reuse);
        let e = error_of(&journey.replace("\"new\"", "\"shared\""));
        assert!(
            e.contains("workload 'get': journey_connection = \"shared\": give \"reuse\""),
            "{e}"
        );
        let e = error_of(&journey.replace("rate = [10]", "concurrency = [1, 10]"));
        assert!(
            e.contains("workload 'get': journey_connection chooses the open model's")
                && e.contains("give [load] rate"),
            "{e}"
        );
        let e = error_of(&journey.replace("journey = \"j.toml\"\n", ""));
        assert!(e.contains("workload 'get': journey_connection chooses the connection of each journey's new user: give journey"), "{e}");
    }

    /// A search's SLO on a journey's step belongs to a journey workload: in `[load]`'s
    /// search (every workload's) or a plain workload's, it is refused, naming the SLO, the
    /// workload and the fix; in a journey workload's own search it is read.
    #[test]
    fn a_step_slo_searches_journey_workloads_only() {
        let journey = GOOD.replace(
            "name = \"get\"\npath = \"/content/a\"",
            "name = \"get\"\njourney = \"users.toml\"\nfind_max = { slo = [\"step:login:p99<200ms\", \"p99<100ms\"] }",
        );
        let p = parse(&journey, "plan.toml", CPUS).unwrap();
        let f = p.workloads[0].find_max.as_ref().unwrap();
        assert_eq!(f.slos[0].step.as_deref(), Some("login"));
        assert_eq!(f.slos[1].step, None);
        let e = error_of(&GOOD.replace(
            "expect = { status = [200, 302] }",
            "expect = { status = [200, 302] }\nfind_max = { slo = [\"step:login:p99<1s\"] }",
        ));
        assert!(
            e.contains("workload 'post': find_max.slo: 'step:login:p99<1s' judges a journey's step, and workload 'post' runs no journey: give the workload a journey file"),
            "{e}"
        );
        let e = error_of(&journey.replace(
            "concurrency = [1, 10]",
            "find_max = { slo = [\"step:login:p99<1s\"] }",
        ));
        assert!(
            e.contains("load.find_max.slo: 'step:login:p99<1s' judges a journey's step, and workload 'post' runs no journey: move the search into the journey workloads' own find_max"),
            "{e}"
        );
    }

    #[test]
    fn arrival_is_a_workload_key_seeded_by_seed() {
        let text = GOOD.replace(
            "name = \"post\"\nmethod = \"post\"",
            "name = \"post\"\narrival = \"poisson\"\nseed = 9\nmethod = \"post\"",
        );
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads[0].arrival, crate::Arrival::Even, "the default");
        assert_eq!(p.workloads[1].arrival, crate::Arrival::Poisson { seed: 9 });
        let e = error_of(&GOOD.replace("method = \"post\"", "arrival = \"bursty\""));
        assert!(
            e.contains("workload 'post': arrival must be \"even\" or \"poisson\", not \"bursty\""),
            "{e}"
        );
    }

    #[test]
    fn pipeline_and_request_lists_are_plan_keys() {
        let text = GOOD
            .replace("concurrency = [1, 10]", "concurrency = [1, 10]\npipeline = 8")
            .replace(
                "name = \"post\"\nmethod = \"post\"\nbody = \"a=1\"",
                "name = \"post\"\nrequests = \"reqs.txt\"\norder = \"random\"\nseed = 3\npipeline = 2",
            );
        let p = parse(&text, "plan.toml", CPUS).unwrap();
        let (get, post) = (&p.workloads[0], &p.workloads[1]);
        assert_eq!((get.pipeline, get.requests.as_ref()), (8, None));
        assert_eq!(post.pipeline, 2, "the workload's key wins");
        assert_eq!(post.requests, Some(PathBuf::from("reqs.txt")));
        assert_eq!((post.order, post.seed), (Order::Random, 3));
        for (bad, want) in [
            (
                GOOD.replace("concurrency = [1, 10]", "concurrency = [1]\npipeline = 0"),
                "plan.toml:33: load.pipeline must be from 1 to 1024",
            ),
            (
                GOOD.replace("method = \"post\"", "requests = \"r.txt\""),
                "workload 'post': requests gives each request's method, path and body",
            ),
            (
                GOOD.replace("method = \"post\"", "order = \"random\""),
                "workload 'post': order applies to a list: add requests = \"FILE\"",
            ),
            (
                GOOD.replace(
                    "name = \"post\"\nmethod = \"post\"\nbody = \"a=1\"",
                    "name = \"post\"\nrequests = \"r\"\norder = \"shuffled\"",
                ),
                "order must be \"seq\" or \"random\"",
            ),
        ] {
            let e = error_of(&bad);
            assert!(e.contains(want), "{e}");
        }
    }

    /// `max_connections` caps a rate sweep's connections; it goes with rates only and
    /// holds the connections each step opens at the start.
    #[test]
    fn max_connections_caps_rate_levels_only() {
        let rate = |extra: &str| {
            parse(
                &GOOD.replace("concurrency = [1, 10]", &format!("rate = [100]\n{extra}")),
                "plan.toml",
                CPUS,
            )
        };
        assert_eq!(
            rate("max_connections = 500").unwrap().max_connections,
            Some(500)
        );
        assert_eq!(rate("").unwrap().max_connections, None);
        let e = rate("connections = 8\nmax_connections = 4")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("load.max_connections (4) is below the 8 connections"),
            "{e}"
        );
        let e = rate("max_connections = 0").unwrap_err().to_string();
        assert!(e.contains("load.max_connections"), "{e}");
        let closed = GOOD.replace(
            "concurrency = [1, 10]",
            "concurrency = [1]\nmax_connections = 9",
        );
        let e = parse(&closed, "plan.toml", CPUS).unwrap_err().to_string();
        assert!(
            e.contains("applies to rate = [..] and find_max only"),
            "{e}"
        );
    }

    /// `find_max` in `[load]` searches every workload in place of the levels; in a
    /// workload, that workload only, the others swept; a search runs steps for a time.
    #[test]
    fn find_max_searches_in_place_of_the_levels() {
        let all = GOOD.replace(
            "concurrency = [1, 10]",
            "connections = 16\nmax_connections = 900\nfind_max = { slo = [\"p99<50ms\"], to = 5000 }",
        );
        let p = parse(&all, "plan.toml", CPUS).unwrap();
        assert!(p.levels.is_empty());
        assert_eq!(p.max_connections, Some(900));
        for w in &p.workloads {
            let f = w.find_max.as_ref().unwrap();
            assert_eq!((f.from, f.to, f.connections), (100.0, 5000.0, 16));
            assert_eq!(f.slo, ["p99<50ms"]);
        }
        let one = GOOD.replace(
            "expect = { status = [200, 302] }",
            "expect = { status = [200, 302] }\nfind_max = { slo = [\"errors<1%\"], from = 10 }",
        );
        let p = parse(&one, "plan.toml", CPUS).unwrap();
        assert_eq!(p.levels.len(), 2);
        assert!(p.workloads[0].find_max.is_none());
        assert_eq!(p.workloads[1].find_max.as_ref().unwrap().from, 10.0);

        let both = GOOD.replace(
            "concurrency = [1, 10]",
            "concurrency = [1, 10]\nfind_max = { slo = [\"p99<50ms\"] }",
        );
        let e = parse(&both, "plan.toml", CPUS).unwrap_err().to_string();
        assert!(
            e.contains("load.find_max searches every workload's capacity in place of the levels"),
            "{e}"
        );
        let unswept = one.replace("concurrency = [1, 10]", "");
        let e = parse(&unswept, "plan.toml", CPUS).unwrap_err().to_string();
        assert!(e.contains("or find_max = { slo = [..] }"), "{e}");
        let counted = all.replace("duration = \"2s\"", "requests = 500");
        let e = parse(&counted, "plan.toml", CPUS).unwrap_err().to_string();
        assert!(e.contains("find_max runs each step for a time"), "{e}");
        let bad = one.replace("\"errors<1%\"", "\"errors<<1%\"");
        let e = parse(&bad, "plan.toml", CPUS).unwrap_err().to_string();
        assert!(e.contains("workload 'post': find_max.slo:"), "{e}");
    }

    /// `step_end` in a search: each step once decided by default, each to its deadline
    /// with `"deadline"`, per workload as its search says; a bad word is refused naming
    /// the key, where it is, and both values.
    #[test]
    fn a_search_says_when_its_steps_end() {
        use crate::find_max::EndRule;
        let search = |end: &str| {
            GOOD.replace(
                "concurrency = [1, 10]",
                &format!("find_max = {{ slo = [\"p99<50ms\"]{end} }}"),
            )
        };
        let rule = |text: &str| {
            let p = parse(text, "plan.toml", CPUS).unwrap();
            p.workloads
                .iter()
                .map(|w| w.find_max.as_ref().map(|f| f.end_rule))
                .collect::<Vec<_>>()
        };
        assert_eq!(rule(&search("")), [Some(EndRule::Decided); 2]);
        let fixed = search(", step_end = \"deadline\"");
        assert_eq!(rule(&fixed), [Some(EndRule::Deadline); 2]);
        let own = GOOD.replace(
            "expect = { status = [200, 302] }",
            "expect = { status = [200, 302] }\nfind_max = { slo = [\"errors<1%\"], step_end = \"deadline\" }",
        );
        assert_eq!(rule(&own), [None, Some(EndRule::Deadline)]);
        let e = error_of(&search(", step_end = \"full\""));
        assert!(
            e.contains("load.find_max.step_end = \"full\" is not a rule: give \"decided\"")
                && e.contains("or \"deadline\" (each step runs to its deadline"),
            "{e}"
        );
        assert!(e.contains("plan.toml"), "{e}");
    }

    /// A gRPC workload: a POST to its method's path over HTTP/2, answered 200; each key it
    /// cannot take, or lacks, is refused with the fix, and the gRPC keys on an HTTP
    /// workload too.
    #[test]
    fn a_grpc_workload_is_a_call_over_http2() {
        let plan = |w: &str| {
            format!("name = \"g\"\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n[[workload]]\nname = \"w\"\n{w}\n[load]\nconcurrency = [1]\n")
        };
        let good = "protocol = \"grpc\"\nmethod = \"helloworld.Greeter/SayHello\"\nproto = \"hello.proto\"\nmessage = '{\"name\":\"x\"}'\nexpect = { echo = true, json = { message = \"hello x\" } }";
        let p = parse(&plan(good), "p.toml", &[0, 1]).unwrap();
        let w = &p.workloads[0];
        assert_eq!(
            (w.method.as_str(), w.path.as_str()),
            ("POST", "/helloworld.Greeter/SayHello")
        );
        assert_eq!(w.protocol, Protocol::Http2);
        assert_eq!(w.expect.status, StatusSet::parse("200").unwrap());
        assert!(w.expect.echo);
        assert_eq!(w.message, None, "a call's message is its own");
        let g = w.grpc.as_ref().unwrap();
        assert_eq!(g.method, "helloworld.Greeter/SayHello");
        assert_eq!(g.proto.as_deref(), Some(Path::new("hello.proto")));
        assert_eq!(g.message.as_deref(), Some(r#"{"name":"x"}"#));
        assert_eq!(g.expect_json.as_deref(), Some(r#"{"message":"hello x"}"#));
        assert_eq!(g.stream, crate::GrpcStream::default());
        assert!(!g.compress && !g.by_reflection());
        // Without proto or protoset, the schema comes by reflection; gzip in any case.
        let reflected = "protocol = \"grpc\"\nmethod = \"a.B/C\"\ncompress = \"GZIP\"";
        let p = parse(&plan(reflected), "p.toml", &[0, 1]).unwrap();
        let g = p.workloads[0].grpc.as_ref().unwrap();
        assert!(g.compress && g.by_reflection());
        // A streaming method's bounds.
        let chat = "protocol = \"grpc\"\nmethod = \"helloworld.Greeter/Chat\"\nproto = \"hello.proto\"\nstream = { messages = 5, duration = \"2s\", interval = \"10ms\" }";
        let p = parse(&plan(chat), "p.toml", &[0, 1]).unwrap();
        assert_eq!(
            p.workloads[0].grpc.as_ref().unwrap().stream,
            crate::GrpcStream {
                messages: Some(5),
                duration: Some(Duration::from_secs(2)),
                interval: Some(Duration::from_millis(10)),
            }
        );
        // (workload, what the error says)
        let rows = [
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\nstream = { interval = \"0s\" }", "stream.interval = \"0s\" must be more than 0"),
            ("path = \"/\"\nstream = { messages = 3 }", "stream is a gRPC call's: add protocol = \"grpc\""),
            ("protocol = \"grpc\"\nproto = \"a.proto\"", "add method = \"package.Service/Method\""),
            ("protocol = \"grpc\"\nmethod = \"SayHello\"\nproto = \"a.proto\"", "names no gRPC method"),
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\ncompress = \"br\"", "compress = \"br\": shootout compresses gRPC messages with gzip only: write compress = \"gzip\", or remove compress"),
            ("path = \"/\"\ncompress = \"gzip\"", "compress is a gRPC call's: add protocol = \"grpc\""),
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\nprotoset = \"b\"", "give proto or protoset, not both"),
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\npath = \"/x\"", "path does not apply to protocol = \"grpc\""),
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\nexpect = { status = 200 }", "expect.status does not apply"),
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\nmessage = \"{}\"\nmessages = \"m\"", "give message or messages, not both"),
            ("protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\nexpect = { json = 3 }", "expect.json is the fields the reply must hold"),
            ("path = \"/\"\nproto = \"a.proto\"", "proto is a gRPC call's: add protocol = \"grpc\""),
            ("path = \"/\"\nexpect = { json = \"{}\" }", "expect.json is a gRPC call's"),
        ];
        for (w, says) in rows {
            let e = parse(&plan(w), "p.toml", &[0, 1]).unwrap_err().to_string();
            assert!(e.contains("workload 'w': ") && e.contains(says), "{w}: {e}");
        }
        let w = "protocol = \"grpc\"\nmethod = \"a.B/C\"\nproto = \"a\"\nstream = { count = 3 }";
        let e = parse(&plan(w), "p.toml", &[0, 1]).unwrap_err().to_string();
        assert!(
            e.contains("unknown field `count`, expected one of `messages`, `duration`, `interval`"),
            "{e}"
        );
    }

    #[test]
    fn every_error_names_the_line_and_the_fix() {
        let cases = [
            GOOD.replace("command = \"gunicorn", "comand = \"gunicorn"),
            GOOD.replace("127.0.0.1:{port}", "127.0.0.1:8000"),
            GOOD.replace(
                "url = \"http://127.0.0.1:8080/\"",
                "url = \"127.0.0.1:8080\"",
            ),
            GOOD.replace("duration = \"2s\"", "duration = \"2 parsecs\""),
            GOOD.replace("status = 200,", "status = true,"),
            GOOD.replace("concurrency = [1, 10]", "concurrency = [1]\nrate = [10]"),
            GOOD.replace("name = \"theirs\"", "name = \"fs\""),
            GOOD.replace("server_cpus = \"1\"", "server_cpus = \"one\""),
            GOOD.replace("repeat = 2", "repeat = 0"),
            // Each of these panicked, or was caught only after a contender started, or
            // reached the server or the shell as written.
            GOOD.replace("duration = \"2s\"", "duration = \"1e30\""),
            GOOD.replace("duration = \"2s\"", "duration = \"0s\""),
            GOOD.replace("concurrency = [1, 10]", "rate = [100]\nconnections = 0"),
            GOOD.replace(
                "concurrency = [1, 10]",
                "concurrency = [1]\nconnections = 8",
            ),
            GOOD.replace("concurrency = [1, 10]", "rate = [1e-300]"),
            GOOD.replace(
                "concurrency = [1, 10]",
                "stages = [{ concurrency = 1, duration = \"0s\" }]",
            ),
            GOOD.replace(
                "method = \"post\"",
                "method = \"GET / HTTP/1.1\\r\\nX-Injected: 1\\r\\nX: \"",
            ),
            GOOD.replace("path = \"/content/a\"", "path = \"/a\\r\\nX-Injected: 1\""),
            GOOD.replace(
                "body = \"a=1\"",
                "body = \"a=1\"\nheaders = { \"X Bad\" = \"1\" }",
            ),
            GOOD.replace(
                "body = \"a=1\"",
                "body = \"a=1\"\nheaders = { \"X-A\" = \"1\\r\\nX-B: 2\" }",
            ),
            GOOD.replace(
                "body = \"a=1\"",
                "body = \"a=1\"\nheaders = { \"Transfer-Encoding\" = \"chunked\" }",
            ),
            GOOD.replace("app:app", "app:app --workers {bogus}"),
            GOOD.replace("server_cpus = \"1\"", "server_cpus = \"99\""),
            GOOD.replace("timeout = \"5s\"", "timeout = \"0\""),
            GOOD.replace("path = \"/health\"", "path = \"health\""),
        ];
        let all: Vec<String> = cases.iter().map(|c| error_of(c)).collect();
        for e in &all {
            assert_eq!(e.lines().count(), 1, "one line: {e}");
        }
        insta::assert_snapshot!(all.join("\n"));
    }

    /// A plan of 20,000 connections × 100 HTTP/2 streams was read, and its run failed
    /// after its contender had started: the spec's limit on requests in flight was not
    /// checked with the plan.
    #[test]
    fn connections_times_streams_over_the_in_flight_limit_is_a_plan_error() {
        let h2 = GOOD.replace(
            "concurrency = [1, 10]",
            "concurrency = [1, 10000]\nprotocol = \"h2\"\nstreams = 100",
        );
        assert!(parse(&h2, "plan.toml", CPUS).is_ok());
        assert_eq!(
            error_of(&h2.replace("10000]", "20000]")),
            "plan.toml:32: load.concurrency: workload 'get': 20000 connections × 100 streams is 2000000 requests in flight: the most is 1000000 (lower the concurrency or the streams)"
        );
        let own = GOOD
            .replace("concurrency = [1, 10]", "rate = [10]\nconnections = 10000")
            .replace(
                "url = \"http://127.0.0.1:8080/\"",
                "url = \"http://127.0.0.1:8080/\"\nprotocol = \"h2\"\nstreams = 101",
            );
        let e = error_of(&own);
        assert!(
            e.starts_with("plan.toml:35: load.connections: contender 'theirs' on workload 'get': 10000 connections × 101 streams"),
            "{e}"
        );
    }

    /// A plan with `rate` and `connections = 0` started its contender, then panicked in
    /// the engine and left the run `running`.
    #[test]
    fn rate_with_zero_connections_is_a_plan_error() {
        let e = error_of(&GOOD.replace("concurrency = [1, 10]", "rate = [100]\nconnections = 0"));
        assert!(e.starts_with("plan.toml:33: load.connections"), "{e}");
    }

    #[test]
    fn placeholders_known_unknown_and_shell_syntax() {
        for ok in [
            "serve {port} {tmp} {cores} {plan_dir} {run_dir}",
            "THREADS=$(({cores} * 25)) ${HOME} ${PORT:-1} awk '{ print $1 }' find . -exec ls {} \\;",
            "echo {a,b} {1..3} { x; } {",
        ] {
            assert_eq!(unknown_placeholder(ok), None, "{ok}");
        }
        assert_eq!(unknown_placeholder("serve {port} {bogus}"), Some("{bogus}"));
        assert_eq!(unknown_placeholder("awk '{print}'"), Some("{print}"));
        assert_eq!(unknown_placeholder("{Port}"), Some("{Port}"));
        assert_eq!(unknown_placeholder("x{{tmp_dir}}"), Some("{tmp_dir}"));
        let value = |name: &str| (name == "port").then(|| "8080".to_string());
        assert_eq!(
            fill_placeholders("serve {port} ${port} {x} { port } {port}", value),
            "serve 8080 ${port} {x} { port } 8080"
        );
    }

    /// Every plan shipped with shootout still validates.
    #[test]
    fn every_shipped_plan_validates() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut plans = vec![root.join("plans/quickstart/plan.toml")];
        for e in std::fs::read_dir(root.join("scenarios")).unwrap().flatten() {
            let plan = e.path().join("plan.toml");
            if plan.exists() {
                plans.push(plan);
            }
        }
        assert!(plans.len() > 3, "{plans:?}");
        // As on a machine with as many CPUs as the scenarios pin to.
        let cpus: Vec<usize> = (0..64).collect();
        for p in plans {
            let text = std::fs::read_to_string(&p).unwrap();
            if let Err(e) = parse(&text, &p.display().to_string(), &cpus) {
                panic!("{e}");
            }
        }
    }

    /// Plan reading was quadratic in the workloads (each name compared with every earlier
    /// one): 90,000 workloads took minutes. The names are now kept in a hash set; this
    /// plan of 100,000 workloads, its last name repeated, is read in well under a second
    /// in release builds (a few seconds in debug), and the duplicate still found.
    #[test]
    fn many_workloads_are_read_in_linear_time() {
        let n = 100_000;
        let mut text = String::from(
            "name = \"big\"\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\n",
        );
        for i in 0..n {
            text.push_str(&format!("[[workload]]\nname = \"w{i}\"\npath = \"/{i}\"\n"));
        }
        let load = "[load]\nconcurrency = [1]\n";
        let p = parse(&format!("{text}{load}"), "plan.toml", CPUS).unwrap();
        assert_eq!(p.workloads.len(), n);
        let dup = format!("{text}[[workload]]\nname = \"w7\"\n{load}");
        let e = parse(&dup, "plan.toml", CPUS).unwrap_err();
        assert_eq!(e.line, 3 * n + 5, "{e}");
        assert!(e.message.contains("two workloads are named 'w7'"), "{e}");
    }
}

/// Property tests: random and boundary values in every key that takes a number, a
/// duration or request text either give a one-line error or a plan whose values hold the
/// documented invariants. Never a panic.
#[cfg(test)]
mod properties {
    use super::*;
    use crate::units::MAX_DURATION;
    use proptest::prelude::*;

    /// `s` as a TOML string literal.
    fn q(s: &str) -> String {
        toml::Value::String(s.to_string()).to_string()
    }

    fn duration_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<f64>().prop_map(|f| f.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            "[0-9]{1,22}(\\.[0-9]{0,4})?(ns|us|ms|s|m|h|d|days|y|years)?",
            prop::sample::select(vec![
                "0",
                "0s",
                "1e20",
                "1e30",
                "1e300",
                "NaN",
                "-1",
                "inf",
                "365days",
                "366days",
                "31536000",
                "31536000.000000001",
                "18446744073709551615",
                "9999999999999999999",
                "",
                " ",
                "1ns",
            ])
            .prop_map(String::from),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            ".{0,12}",
            "[A-Za-z-]{1,8}",
            "/[a-z]{0,4}[\r\n\0 :]{0,2}[a-z]{0,4}",
            prop::sample::select(vec![
                "GET",
                "GET / HTTP/1.1\r\nX: y",
                "Content-Length",
                "transfer-encoding",
                "X Bad",
                "",
                "/",
                "a\r\nb",
                "\u{7f}",
            ])
            .prop_map(String::from),
        ]
    }

    fn rate() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<f64>().prop_map(|f| format!("{f:?}")),
            prop::sample::select(vec![
                "nan", "inf", "-inf", "0.0", "1e-300", "1e300", "0.001", "1e9"
            ])
            .prop_map(String::from),
        ]
    }

    fn count() -> impl Strategy<Value = i64> {
        prop_oneof![
            any::<i64>(),
            0i64..3,
            prop::sample::select(vec![i64::MAX, 1_000_000, 1_000_001, -1]),
        ]
    }

    #[allow(clippy::too_many_arguments)]
    fn plan_text(
        duration: &str,
        timeout: &str,
        stage: &str,
        rate: &str,
        connections: i64,
        concurrency: i64,
        method: &str,
        header: (&str, &str),
        path: &str,
        use_rate: bool,
    ) -> String {
        let load = if use_rate {
            format!("rate = [{rate}]\nconnections = {connections}")
        } else if concurrency % 2 == 0 {
            format!("concurrency = [{concurrency}]")
        } else {
            format!(
                "stages = [{{ concurrency = {concurrency}, duration = {} }}]",
                q(stage)
            )
        };
        format!(
            "name = \"p\"\n[defaults]\nduration = {}\ntimeout = {}\n[[contender]]\nname = \"a\"\ncommand = \"serve {{port}}\"\n[[workload]]\nname = \"w\"\nmethod = {}\npath = {}\nheaders = {{ {} = {} }}\n[load]\n{load}\n",
            q(duration),
            q(timeout),
            q(method),
            q(path),
            q(header.0),
            q(header.1),
        )
    }

    fn holds_invariants(p: &Plan) {
        let d = &p.defaults;
        let in_range = |t: Duration| !t.is_zero() && t <= MAX_DURATION;
        if let Span::Time(t) = d.measure {
            assert!(in_range(t), "{t:?}");
        }
        assert!(in_range(d.timeout), "{:?}", d.timeout);
        for l in &p.levels {
            let c = match l.level {
                LoadLevel::Concurrency { connections } => connections,
                LoadLevel::Rate { rps, connections } => {
                    rules::rate(rps).unwrap();
                    connections
                }
            };
            rules::connections(c).unwrap();
            if let Some(Span::Time(t)) = l.measure {
                assert!(in_range(t), "{t:?}");
            }
        }
        for w in &p.workloads {
            check_method(&w.method).unwrap();
            check_path(&w.path).unwrap();
            for (k, v) in &w.headers {
                check_header(k, v).unwrap();
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn any_plan_gives_a_clean_error_or_a_valid_plan(
            duration in duration_text(),
            timeout in duration_text(),
            stage in duration_text(),
            rate in rate(),
            connections in count(),
            concurrency in count(),
            method in text(),
            header in (text(), text()),
            path in text(),
            use_rate in any::<bool>(),
        ) {
            let t = plan_text(&duration, &timeout, &stage, &rate, connections, concurrency,
                &method, (&header.0, &header.1), &path, use_rate);
            match parse(&t, "plan.toml", &[0]) {
                Ok(p) => holds_invariants(&p),
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(e.starts_with("plan.toml:"), "{}", e);
                    prop_assert_eq!(e.lines().count(), 1, "{}", e);
                }
            }
        }
    }
}

#[cfg(test)]
mod threshold_tests {
    use super::parse;

    const PLAN: &str = "name = \"t\"\n[defaults]\nfail_if = [\"p99>50ms\", \"errors>0.1%\"]\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:8080\"\nfail_if = [\"rps<100\"]\n[[contender]]\nname = \"b\"\nurl = \"http://127.0.0.1:8081\"\n[[workload]]\nname = \"w\"\npath = \"/\"\n[load]\nconcurrency = [1]\n";

    #[test]
    fn fail_if_reads_for_all_in_defaults_and_for_one_on_a_contender() {
        let p = parse(PLAN, "plan.toml", &[0]).unwrap();
        let texts = |ts: &[crate::threshold::Threshold]| -> Vec<String> {
            ts.iter().map(|t| t.text.clone()).collect()
        };
        assert_eq!(texts(&p.defaults.fail_if), vec!["p99>50ms", "errors>0.1%"]);
        assert_eq!(texts(&p.contenders[0].fail_if), vec!["rps<100"]);
        assert!(p.contenders[1].fail_if.is_empty());
    }

    #[test]
    fn a_bad_fail_if_names_its_line_key_and_fix() {
        let bad = PLAN.replace("errors>0.1%", "errors>0.1");
        let e = parse(&bad, "plan.toml", &[0]).unwrap_err().to_string();
        assert_eq!(
            e,
            "plan.toml:3: defaults.fail_if: 'errors>0.1': errors is a share of the completed requests: write it with %, e.g. errors>0.1%"
        );
    }
}
