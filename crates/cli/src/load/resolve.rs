//! Stage 2 of `shootout load`: what was typed ([`LoadArgs`]) resolved into the measured
//! run's [`LoadSpec`] and the warm-up's. Each function resolves one concern: the run's
//! bounds and what `-t` meant, the request (body files read here), the expectations, the
//! CPU list (against the CPUs this process may use), the output files (checked before
//! the run), the warm-up and the format. The spec itself is made by the model's
//! [`SpecBuilder`](shootout_model::SpecBuilder), which owns the spec's rules; this module
//! only says which flag a broken rule came from. Every error is a one-line usage error
//! (exit 2) naming the flag.

use super::flags::LoadArgs;
use super::habits;
use crate::bounded::{self, Bounded};
use crate::output::Failure;
use anyhow::anyhow;
use shootout_engine::sys;
use shootout_model::messages::MessageList;
use shootout_model::requests::{Order, RequestList, MAX_ENTRIES, MAX_LIST_BYTES};
use shootout_model::spec::{
    check_header, check_method, Journeys, Limit, SpecError, TargetError, MAX_BODY,
};
use shootout_model::{
    parse_duration, Arrival, Expectation, GrpcReply, JourneyConnection, LoadSpec, Pace, Protocol,
    Record, RequestSpec, StatusSet, Target,
};
use shootout_report::{plain_secs, Format};
use std::path::Path;
use std::time::Duration;

/// What the flags add up to: the measured run's spec, the warm-up's, notes for stderr.
pub(super) struct Plan {
    /// The measured run.
    pub spec: LoadSpec,
    /// The warm-up run before it, if any (not measured).
    pub warmup: Option<LoadSpec>,
    /// `--warmup auto`: the warm-up (bounded by [`WarmedUp::MAX`](shootout_model::WarmedUp::MAX))
    /// ends once its per-second series are level.
    pub warmup_auto: bool,
    /// How to report it.
    pub format: Format,
    /// How flags were read or adjusted, for stderr (`-t` read as threads, `-c` lowered).
    pub notes: Vec<String>,
    /// Sharding, start time, result files and thresholds ([`super::dist`]).
    pub dist: super::dist::Dist,
    /// ab's `-l` and `-S`, for `--format ab`.
    pub ab: shootout_report::AbOptions,
    /// Answer heads to sample and print (`-v 2`); 0: none.
    pub sample_heads: usize,
    /// The capacity search asked for (`--find-max`), checked; `None` for one load.
    pub search: Option<shootout_model::find_max::FindMax>,
    /// `--until`: the conditions that end the load early, checked (empty: none).
    pub until: Vec<shootout_model::until::Condition>,
}

/// `--until`'s conditions, checked against the run's bounds: a load that ends when it has
/// converged is bounded by time (`-d`, the most it may last), not by a count.
fn until(a: &LoadArgs, spec: &LoadSpec) -> Result<Vec<shootout_model::until::Condition>, Failure> {
    let conditions = shootout_model::until::parse_all(&a.until)
        .map_err(|e| Failure::usage(anyhow!("--until {e}")))?;
    if conditions.is_empty() {
        return Ok(conditions);
    }
    let least = shootout_model::until::LEAST;
    match (spec.requests, spec.duration) {
        (Some(_), _) => Err(Failure::usage(anyhow!(
            "--until ends a load bounded by time: give -d (the most it may last) and drop -n"
        ))),
        (None, Some(d)) if d < least => Err(Failure::usage(anyhow!(
            "--until: -d {} is shorter than the {} s a load with conditions lasts at least: give -d {}s or more",
            plain_secs(d),
            least.as_secs(),
            least.as_secs()
        ))),
        _ => Ok(conditions),
    }
}

/// Resolves the flags into the plan of the run.
pub(super) fn plan(a: &LoadArgs) -> Result<Plan, Failure> {
    if let Some(refused) = habits::refusal(a) {
        return Err(refused);
    }
    let search = super::find_max::asked(a)?;
    let mut notes = Vec::new();
    let spec = spec(a, search.as_ref(), &mut notes)?;
    if let Some(n) = spec.requests.filter(|&n| (a.concurrency as u64) > n) {
        notes.push(format!(
            "-c {} lowered to {n}: no more connections than requests (-n {n})",
            a.concurrency
        ));
    }
    if let Some(f) = &search {
        crate::gates::steps_named(&f.slos, spec.journey.as_ref(), "--slo")?;
    }
    let (spec, dist) = super::dist::resolve(&a.dist, spec, |k| std::env::var(k).ok())?;
    if !spec.stages.is_empty() && dist.shard.is_some() {
        return Err(Failure::usage(anyhow!(
            "--stages ramps the users of one process (a shard would run every stage's users): drop --shard or --shards"
        )));
    }
    rate_stages_alone(a, &spec, search.is_some(), dist.shard.is_some())?;
    let warmup = warmup(a, &spec)?;
    let format = if a.json { Format::Json } else { a.format };
    let until = until(a, &spec)?;
    if search.is_some() && !until.is_empty() {
        return Err(Failure::usage(anyhow!(
            "--until ends one load; a capacity search's steps last as long as each needs: drop --until or --find-max"
        )));
    }
    Ok(Plan {
        spec,
        warmup_auto: warmup.is_some() && a.warmup.as_deref() == Some("auto"),
        warmup,
        format,
        notes,
        dist,
        ab: shootout_report::AbOptions {
            lengths_vary: a.lengths_vary,
            no_spread: a.no_spread,
        },
        sample_heads: habits::sample_heads(a),
        search,
        until,
    })
}

/// The spec of the whole load the flags describe (before it is divided among shards);
/// each flag is checked in the order a user reads them, so the first mistake is named.
fn spec(
    a: &LoadArgs,
    search: Option<&shootout_model::find_max::FindMax>,
    notes: &mut Vec<String>,
) -> Result<LoadSpec, Failure> {
    let (target, is_grpc) = target(a)?;
    let messages = message_list(a, notes)?;
    let grpc = grpc(a, &target, is_grpc, messages.as_ref())?;
    let bounds = bounds(a, notes)?;
    let cpus = a.cpus.as_deref().map(parse_cpus).transpose()?;
    let protocol = match grpc {
        Some(_) => Protocol::Http2,
        None => protocol(a, &target),
    };
    let busy_poll = busy_poll(a.busy_poll.as_deref(), protocol, cpus.is_some())?;
    check_outputs(a)?;
    let list = request_list(a, &target, notes)?;
    let arrival = arrival(a, notes)?;
    let (users, rates) = stages(a)?;
    LoadSpec::builder(target.clone())
        .pipeline(a.pipeline)
        .list(list)
        .journey(journey(a, notes)?)
        .request(match &grpc {
            Some(g) => g.request.clone(),
            None => request(a, target.scheme.websocket())?,
        })
        .expect(expectation(a, grpc.map(|g| g.reply))?)
        .connections(a.concurrency)
        .max_connections(max_connections(a)?)
        .threads(bounds.threads)
        .bound(bounds.requests, bounds.duration)
        // After the bounds and -c: the stages set the run's length and its users.
        .stages(users)
        // A capacity search's steps are paced: its base spec is, at the first rate.
        .pace(
            a.rate
                .or(search.map(|f| f.from))
                .map_or(Pace::Closed, Pace::Rate),
        )
        // After the bounds and the pace: stages of rates set the run's length and pace.
        .rate_stages(rates)
        .arrival(arrival)
        .journey_connection(journey_connection(a)?)
        .protocol(protocol, a.streams.unwrap_or(1))
        .ws_text(a.ws_text.is_some())
        .ws_hold(ws_hold(a)?)
        .ws_messages(messages)
        .timeout(timeout("-s", &a.timeout)?)
        .connect_timeout(timeout("--connect-timeout", &a.connect_timeout)?)
        .record(Record {
            all: a.gnuplot.is_some(),
            ..Record::default()
        })
        .cpus(cpus)
        .busy_poll(busy_poll)
        .bind(
            a.bind
                .as_deref()
                .map(habits::bind_list)
                .transpose()?
                .unwrap_or_default(),
        )
        .available_cpus(sys::allowed_cpus().len())
        .build()
        .map_err(spec_error)
}

/// The server the URL names, and whether it names a gRPC method: a `grpc://` (`grpcs://`)
/// URL goes to its `http://` (`https://`) URL over HTTP/2, and keeps its own for reports.
fn target(a: &LoadArgs) -> Result<(Target, bool), Failure> {
    let grpc_url = super::grpc::http_url(&a.url);
    let url = grpc_url.as_deref().unwrap_or(&a.url);
    let mut target = Target::parse(url).map_err(|e: TargetError| Failure::usage(e))?;
    target.url = a.url.clone();
    target.unix_socket = a.unix_socket.clone();
    target.tls.insecure = a.insecure;
    target.tls.ca_file = a.cacert.clone();
    Ok((target, grpc_url.is_some()))
}

/// The gRPC call a gRPC URL asks for; without one, the gRPC flags are refused.
fn grpc(
    a: &LoadArgs,
    target: &Target,
    is_grpc: bool,
    messages: Option<&MessageList>,
) -> Result<Option<super::grpc::Call>, Failure> {
    if is_grpc {
        return grpc_call(a, target, messages).map(Some);
    }
    super::grpc::refuse_first(&grpc_flags(a), |flag| {
        format!("{flag} is for gRPC calls: give the method's URL, grpc://HOST:PORT/package.Service/Method (grpcs:// over TLS)")
    })?;
    Ok(None)
}

/// The gRPC call of a `grpc://` URL whose path is `path` ([`super::grpc`]), HTTP's flags
/// it cannot honour refused.
fn grpc_call(
    a: &LoadArgs,
    target: &Target,
    messages: Option<&MessageList>,
) -> Result<super::grpc::Call, Failure> {
    let http_only = [
        ("--http3", a.http3),
        ("-m", a.method.is_some()),
        ("-i", a.head),
        ("-u", a.put_file.is_some()),
        ("-T", a.content_type.is_some()),
        ("--urls", a.urls.is_some()),
        ("--journey", a.journey.is_some()),
        ("--ws-text", a.ws_text.is_some()),
        ("--ws-messages", a.ws_messages.is_some()),
        ("--expect-status", a.expect_status.is_some()),
    ];
    super::grpc::refuse_first(&http_only, |flag| {
        format!("{flag}: a gRPC call is a POST of its message over HTTP/2, answered 200 with the outcome in grpc-status: drop {flag}")
    })?;
    let deadline = timeout("-s", &a.timeout)?;
    let stream = super::grpc::StreamFlags {
        messages: a.grpc_stream_messages,
        duration: a
            .grpc_stream_duration
            .as_deref()
            .map(|d| timeout("--grpc-stream-duration", d))
            .transpose()?,
        interval: a
            .grpc_stream_interval
            .as_deref()
            .map(|d| interval("--grpc-stream-interval", d))
            .transpose()?,
        deadline,
        echo: a.expect_echo,
    };
    let headers = headers(a)?;
    let server = super::grpc::Server {
        target,
        headers: &headers,
        connect_timeout: timeout("--connect-timeout", &a.connect_timeout)?,
    };
    let flags = super::grpc::Flags {
        names: &super::grpc::FLAGS,
        proto: a.proto.as_deref(),
        import_path: &a.import_path,
        protoset: a.protoset.as_deref(),
        message: a.message.as_deref(),
        file: a.post_file.as_deref(),
        messages,
        max_message: a.max_message,
        expect_json: a.expect_json.as_deref(),
        stream,
        server: Some(server),
        compress: super::grpc::compression(a.grpc_compress.as_deref())?,
    };
    super::grpc::call(&flags, &target.path, headers.clone(), deadline)
}

/// The gRPC flags, each given or not.
fn grpc_flags(a: &LoadArgs) -> [(&'static str, bool); 10] {
    [
        ("--proto", a.proto.is_some()),
        ("--protoset", a.protoset.is_some()),
        ("--message", a.message.is_some()),
        ("--messages", a.messages.is_some()),
        ("--max-message", a.max_message.is_some()),
        ("--expect-json", a.expect_json.is_some()),
        ("--grpc-stream-messages", a.grpc_stream_messages.is_some()),
        ("--grpc-stream-duration", a.grpc_stream_duration.is_some()),
        ("--grpc-stream-interval", a.grpc_stream_interval.is_some()),
        ("--grpc-compress", a.grpc_compress.is_some()),
    ]
}

/// `--busy-poll DURATION` as a duration (its limit is the spec's rule); when not given,
/// [`shootout_model::auto_busy_poll`] for `protocol`, the generator's CPUs being its own
/// when pinned with `--cpus` (`pinned`) or by `taskset` (fewer CPUs allowed than online).
fn busy_poll(value: Option<&str>, protocol: Protocol, pinned: bool) -> Result<Duration, Failure> {
    match value {
        Some(v) => parse_duration(v).map_err(|e| Failure::usage(anyhow!("--busy-poll: {e}"))),
        None => {
            let own = pinned || sys::allowed_cpus().len() < sys::online_cpus();
            Ok(shootout_model::auto_busy_poll(protocol, own))
        }
    }
}

/// `--ws-hold` and `--ws-hold-rate`.
fn ws_hold(a: &LoadArgs) -> Result<Option<shootout_model::Hold>, Failure> {
    let Some(every) = &a.ws_hold else {
        return Ok(None);
    };
    let every = parse_duration(every).map_err(|e| Failure::usage(anyhow!("--ws-hold: {e}")))?;
    Ok(Some(shootout_model::Hold {
        every,
        open_rate: a.ws_hold_rate,
    }))
}

/// `--max-connections`, in the connections' range (checked here so that the error names
/// this flag, not -c).
fn max_connections(a: &LoadArgs) -> Result<Option<usize>, Failure> {
    a.max_connections
        .map(|m| {
            shootout_model::spec::rules::connections(m).map_err(|_| {
                Failure::usage(anyhow!(
                    "--max-connections {m}: the connection cap must be {}",
                    Limit::Connections.range()
                ))
            })
        })
        .transpose()
}

/// A rule of the spec the flags broke, said in terms of the flag that broke it; a range
/// in the spec's words ([`Limit::range`]).
fn spec_error(e: SpecError) -> Failure {
    Failure::usage(match e {
        SpecError::NoRequests => anyhow!("-n 0: the request count must be at least 1"),
        SpecError::Connections(c) => {
            anyhow!("-c {c}: the concurrency must be {}", Limit::Connections.range())
        }
        SpecError::Threads(n) => {
            anyhow!("--threads {n}: the number of threads must be {}", Limit::Threads.range())
        }
        SpecError::Rate(r) => anyhow!(
            "--rate {r}: write a number of requests per second {}",
            Limit::Rate.range()
        ),
        SpecError::Streams(n) => anyhow!(
            "--streams {n}: the streams per connection must be {}",
            Limit::Streams.range()
        ),
        SpecError::StreamsNeedHttp2(n) => {
            anyhow!("--streams {n}: more than one stream per connection needs --http2")
        }
        SpecError::Http2NoKeepalive => anyhow!(
            "--no-keepalive with --http2: HTTP/2 multiplexes streams on open connections; drop --no-keepalive"
        ),
        SpecError::Pipeline(n) => anyhow!(
            "--pipeline {n}: the requests in flight per connection must be {}",
            Limit::Pipeline.range()
        ),
        SpecError::BusyPoll(d) => anyhow!(
            "--busy-poll {d:?}: {} (e.g. --busy-poll 50us)",
            Limit::BusyPoll.range()
        ),
        e @ SpecError::InFlight { .. } => anyhow!("{e} (lower -c or --streams)"),
        SpecError::MaxBelowConnections { max, connections } => anyhow!(
            "--max-connections {max} is below -c {connections}: -c connections open at the start, and the cap must hold them"
        ),
        SpecError::MaxConnectionsClosed => anyhow!(
            "--max-connections applies to rate mode (--rate), where connections open as the schedule needs them; without --rate, -c is the number of connections"
        ),
        SpecError::PipelineClose => anyhow!(
            "--pipeline with --no-keepalive: pipelining needs connections kept open; drop one of the two"
        ),
        e @ (SpecError::BindCount(_)
        | SpecError::BindUnix
        | SpecError::BindAddress(_)
        | SpecError::BindFamilies(..)) => anyhow!("-B: {e}"),
        e => anyhow::Error::new(e),
    })
}

/// When the run ends, and the threads asked for: `-n`, `-d`, `--threads`, and `-t` read
/// as wrk or ab would (a note says which). With no bound at all: one request, as ab.
struct Bounds {
    /// `-n`, or 1 when nothing bounds the run.
    requests: Option<u64>,
    /// `-d`, or `-t` read as a time limit.
    duration: Option<Duration>,
    /// `--threads`, or `-t` read as a thread count; `None` for the builder's default.
    threads: Option<usize>,
}

/// Reads the bounds and threads from the flags (see [`Bounds`]).
fn bounds(a: &LoadArgs, notes: &mut Vec<String>) -> Result<Bounds, Failure> {
    // -z is hey's and oha's -d (clap refuses both at once).
    let (flag, given) = match &a.z {
        Some(z) => ("-z", Some(z)),
        None => ("-d", a.duration.as_ref()),
    };
    let mut duration = given.map(|d| run_length(flag, d)).transpose()?;
    if let Some(z) = &a.z {
        // hey and oha run -z on 50 connections unless told; here -c is 1 unless told.
        if a.concurrency == 1 && a.rate.is_none() && !a.find_max.find_max {
            notes.push(format!(
                "-z {z} read as -d {z} on 1 connection (shootout's -c default; hey and oha open 50): add -c 50 to load as they do"
            ));
        }
    }
    let mut threads = a.threads;
    if let Some(t) = &a.t {
        match read_t(t, duration.is_some(), threads.is_some())? {
            TMeaning::Threads(n) => {
                notes.push(format!(
                    "-t {t} read as --threads {n} (wrk style, since -d is given)"
                ));
                threads = Some(n);
            }
            TMeaning::TimeLimit(d) => {
                notes.push(format!(
                    "-t {t} read as a time limit of {} (ab style); for threads use --threads",
                    plain_secs(d)
                ));
                duration = Some(d);
            }
        }
    }
    let requests = match (a.requests, duration) {
        // Stages give the run its length.
        (None, None) if a.stages.is_some() => None,
        (None, None) => Some(1),
        (n, _) => n,
    };
    Ok(Bounds {
        requests,
        duration,
        threads,
    })
}

/// The request: the method (`-m`, `-i`, or POST/PUT with a body), the body file (`-p`,
/// `-u`), the headers (`-T`, `-H`, `-C`, in that order) and keep-alive.
fn request(a: &LoadArgs, websocket: bool) -> Result<RequestSpec, Failure> {
    let mut request = RequestSpec::default();
    let body_file = a
        .post_file
        .as_ref()
        .map(|f| ("POST", f))
        .or(a.put_file.as_ref().map(|f| ("PUT", f)));
    if let Some((method, file)) = body_file {
        request.body = read_body(file).map_err(|e| {
            Failure::usage(anyhow!(
                "cannot read the body file '{}': {e} (check the path given to -p/-u)",
                file.display()
            ))
        })?;
        request.method = method.into();
    }
    if a.head {
        request.method = "HEAD".into();
    }
    if let Some(m) = &a.method {
        check_method(m).map_err(|e| Failure::usage(anyhow!("-m: {e}")))?;
        request.method = m.to_ascii_uppercase();
    }
    if let Some(text) = &a.ws_text {
        request.body = text.as_bytes().to_vec();
    }
    if websocket {
        // The opening handshake is a GET whatever carries the message (-p).
        request.method = "GET".into();
    }
    request.headers = headers(a)?;
    request.keepalive = !a.no_keepalive;
    Ok(request)
}

/// The protocol the URL and flags ask for: WebSocket for ws:// and wss:// (the spec's
/// rules refuse --http2 and --http3 with them), else HTTP/3 with --http3, HTTP/2 with
/// --http2, else HTTP/1.1.
fn protocol(a: &LoadArgs, target: &shootout_model::Target) -> Protocol {
    if target.scheme.websocket() && !a.http2 && !a.http3 {
        Protocol::WebSocket
    } else if a.http3 {
        Protocol::Http3
    } else if a.http2 {
        Protocol::Http2
    } else {
        Protocol::Http1
    }
}

/// `-T`, then every `-H`, then the `-C` cookies joined into one Cookie header, then `-A`.
fn headers(a: &LoadArgs) -> Result<Vec<(String, String)>, Failure> {
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(ct) = &a.content_type {
        check_header("Content-Type", ct).map_err(|e| Failure::usage(anyhow!("-T: {e}")))?;
        headers.push(("Content-Type".into(), ct.clone()));
    }
    for h in &a.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| {
            Failure::usage(anyhow!(
                "-H {h:?} is not a header: write it as -H 'Name: value'"
            ))
        })?;
        let (name, value) = (name.trim(), value.trim());
        check_header(name, value).map_err(|e| Failure::usage(anyhow!("-H: {e}")))?;
        headers.push((name.into(), value.into()));
    }
    if !a.cookies.is_empty() {
        if let Some(c) = a.cookies.iter().find(|c| !c.contains('=')) {
            return Err(Failure::usage(anyhow!(
                "-C {c:?} is not a cookie: write it as -C name=value"
            )));
        }
        let cookies = a.cookies.join("; ");
        check_header("Cookie", &cookies).map_err(|e| Failure::usage(anyhow!("-C: {e}")))?;
        headers.push(("Cookie".into(), cookies));
    }
    if let Some(v) = &a.auth {
        let (name, value) = habits::basic_auth(v)
            .or_else(|| habits::accept_header(v))
            .ok_or_else(|| habits::bad_auth(v))?;
        if headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
            return Err(Failure::usage(anyhow!(
                "-A with -H '{name}: …': both set the {name} header; keep one"
            )));
        }
        check_header(&name, &value).map_err(|e| Failure::usage(anyhow!("-A: {e}")))?;
        headers.push((name, value));
    }
    Ok(headers)
}

/// `--ws-messages FILE` (WebSocket's text messages) or `--messages FILE` (gRPC's JSON
/// ones): the list of messages, read and checked, with `--order` and `--seed`; a note
/// gives the seed when it matters.
fn message_list(a: &LoadArgs, notes: &mut Vec<String>) -> Result<Option<MessageList>, Failure> {
    let (flag, path, each) = match (&a.ws_messages, &a.messages) {
        (Some(p), _) => (
            "--ws-messages",
            p,
            "one text message a line (send binary with -p FILE)",
        ),
        (None, Some(p)) => ("--messages", p, "one JSON message a line"),
        (None, None) => return Ok(None),
    };
    let text = read_list_text(path).map_err(|e| {
        let why = match e {
            ListText::Unreadable(e) => format!("cannot read it: {e} (check the path)"),
            ListText::NotUtf8 => format!("it is not UTF-8 text: write {each}"),
            too_large => too_large.to_string(),
        };
        Failure::usage(anyhow!("{flag} {}: {why}", path.display()))
    })?;
    let seed = a.seed.unwrap_or_else(clock_seed);
    let list = MessageList::parse(&path.display().to_string(), &text, a.order, seed)
        .map_err(|e| Failure::usage(anyhow!("{flag} {e}")))?;
    let draws = list.templates.iter().any(|t| t.is_templated());
    if a.seed.is_none() && (draws || a.order == Order::Random) {
        notes.push(format!(
            "random values seeded with --seed {seed} (give it to repeat them)"
        ));
    }
    Ok(Some(list))
}

/// `--urls FILE`: the list, read and checked (body files relative to the list's
/// directory), with `--order` and `--seed`; a note gives the seed when it matters.
fn request_list(
    a: &LoadArgs,
    target: &Target,
    notes: &mut Vec<String>,
) -> Result<Option<RequestList>, Failure> {
    let Some(path) = &a.urls else {
        return Ok(None);
    };
    let text = read_list_text(path).map_err(|e| {
        let why = match e {
            ListText::Unreadable(e) => format!("cannot read it: {e} (check the path)"),
            ListText::NotUtf8 => {
                "it is not UTF-8 text: write one request a line, e.g. GET /items/1".into()
            }
            too_large => too_large.to_string(),
        };
        Failure::usage(anyhow!("--urls {}: {why}", path.display()))
    })?;
    let order = a.order;
    let seed = a.seed.unwrap_or_else(clock_seed);
    let list = read_list(
        &path.display().to_string(),
        &text,
        path,
        Some(target),
        order,
        seed,
    )
    .map_err(|e| Failure::usage(anyhow!("--urls {e}")))?;
    if a.seed.is_none() && list.draws() {
        notes.push(format!(
            "random values seeded with --seed {seed} (give it to repeat them)"
        ));
    }
    Ok(Some(list))
}

/// The stages of the users and those of the journeys started a second (one of the two
/// empty).
type Stages = (Vec<shootout_model::Stage>, Vec<shootout_model::RateStage>);

/// `--stages`: the stages of the users (`USERS:DURATION`, the closed model), or of the
/// journeys started a second (`RATE/s:DURATION`, the open model); none without it.
fn stages(a: &LoadArgs) -> Result<Stages, Failure> {
    let Some(text) = a.stages.as_deref() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let stages = if shootout_model::stages_of_rates(text) {
        shootout_model::parse_rate_stages(text).map(|r| (Vec::new(), r))
    } else {
        shootout_model::parse_stages(text).map(|u| (u, Vec::new()))
    };
    stages.map_err(|e| Failure::usage(anyhow!(e)))
}

/// Stages of journeys a second are the whole load's schedule: not with a capacity
/// search (which chooses its rates), a warm-up (which would run them too), a result file
/// (which does not keep them yet) or a shard (which would start every stage's journeys).
fn rate_stages_alone(
    a: &LoadArgs,
    spec: &LoadSpec,
    search: bool,
    shard: bool,
) -> Result<(), Failure> {
    if spec.rate_stages.is_empty() {
        return Ok(());
    }
    let why = if search {
        "a capacity search chooses its own rates: drop --stages or --find-max"
    } else if a.warmup.is_some() {
        "the stages are the whole schedule (a first stage at a low rate warms the server up): drop --warmup"
    } else if !a.dist.save.is_empty() {
        "result files do not keep stages of journeys a second yet: drop --save (or run each rate as a load of its own, --rate R -d T --save)"
    } else if shard {
        "stages ramp the journeys of one process (a shard would start every stage's): drop --shard or --shards"
    } else {
        return Ok(());
    };
    Err(Failure::usage(anyhow!("--stages: {why}")))
}

/// `--journey FILE`: the journeys, read and checked with the files they name, and the
/// seed of their users' choices (a note gives it when drawn from the clock).
fn journey(a: &LoadArgs, notes: &mut Vec<String>) -> Result<Option<Journeys>, Failure> {
    let Some(path) = &a.journey else {
        return Ok(None);
    };
    let file = crate::journey::load(path)?;
    let seed = a.seed.unwrap_or_else(clock_seed);
    if a.seed.is_none() {
        notes.push(format!(
            "journeys seeded with --seed {seed} (give it to repeat their choices)"
        ));
    }
    Ok(Some(Journeys {
        source: path.display().to_string(),
        seed,
        file: std::sync::Arc::new(file),
    }))
}

/// Why a list file's text could not be read.
#[derive(Debug)]
pub(crate) enum ListText {
    /// The file could not be read.
    Unreadable(std::io::Error),
    /// It is longer than [`MAX_LIST_BYTES`].
    TooLarge,
    /// It is not UTF-8.
    NotUtf8,
}

impl std::fmt::Display for ListText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListText::Unreadable(e) => write!(f, "{e}"),
            ListText::TooLarge => write!(
                f,
                "it holds more than {}, the most a request list may hold ({MAX_ENTRIES} requests): split it",
                bounded::size(MAX_LIST_BYTES)
            ),
            // The words of `read_to_string`, which read lists before.
            ListText::NotUtf8 => f.write_str("stream did not contain valid UTF-8"),
        }
    }
}

/// The text of the list file at `path`: at most [`MAX_LIST_BYTES`] (read no further),
/// UTF-8.
pub(crate) fn read_list_text(path: &Path) -> Result<String, ListText> {
    match bounded::read_file(path, MAX_LIST_BYTES).map_err(ListText::Unreadable)? {
        Bounded::TooLarge => Err(ListText::TooLarge),
        Bounded::Read(bytes) => String::from_utf8(bytes).map_err(|_| ListText::NotUtf8),
    }
}

/// Reads the list at `path` (named `source` in errors), its `@body` files relative to its
/// directory and bounded as `-p` bodies are; URL entries must be of `target`'s origin
/// (with none, as in a plan, only paths are accepted).
pub(crate) fn read_list(
    source: &str,
    text: &str,
    path: &Path,
    target: Option<&Target>,
    order: Order,
    seed: u64,
) -> Result<RequestList, shootout_model::requests::ListError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    RequestList::parse(source, text, target, order, seed, |file| {
        read_body(&dir.join(file)).map_err(|e| e.to_string())
    })
}

/// `--arrival` (with its `--seed`): Poisson needs a rate; `--seed` seeds something. A
/// note gives a seed drawn from the clock.
fn arrival(a: &LoadArgs, notes: &mut Vec<String>) -> Result<Arrival, Failure> {
    let paced = a.rate.is_some()
        || a.find_max.find_max
        || a.stages
            .as_deref()
            .is_some_and(shootout_model::stages_of_rates);
    let lists =
        a.urls.is_some() || a.ws_messages.is_some() || a.messages.is_some() || a.journey.is_some();
    if a.arrival != "poisson" {
        if a.seed.is_some() && !lists {
            return Err(Failure::usage(anyhow!("--seed seeds --order random, {{rand:LO-HI}} values and --arrival poisson: give it with --urls, --ws-messages, --messages or --arrival poisson, or leave it out")));
        }
        return Ok(Arrival::Even);
    }
    if !paced {
        return Err(Failure::usage(anyhow!("--arrival poisson spaces the requests of a rate: give --rate R (or --find-max), or leave --arrival out for a closed loop")));
    }
    let seed = a.seed.unwrap_or_else(clock_seed);
    if a.seed.is_none() {
        notes.push(format!(
            "Poisson arrivals drawn with --seed {seed} (give it to repeat them)"
        ));
    }
    Ok(Arrival::Poisson { seed })
}

/// `--journey-connection reuse|new`: the connection an open-model journey's new user
/// takes (reuse by default). Refused where no journey starts as a new user: without
/// `--journey`, and in the closed model, whose users keep their connections anyway.
fn journey_connection(a: &LoadArgs) -> Result<JourneyConnection, Failure> {
    let Some(how) = a.journey_connection.as_deref() else {
        return Ok(JourneyConnection::default());
    };
    let paced = a.rate.is_some()
        || a.find_max.find_max
        || a.stages
            .as_deref()
            .is_some_and(shootout_model::stages_of_rates);
    if a.journey.is_none() {
        return Err(Failure::usage(anyhow!("--journey-connection chooses the connection of each journey's new user: give --journey FILE with --rate R, or leave it out")));
    }
    if !paced {
        return Err(Failure::usage(anyhow!("--journey-connection chooses the open model's connections (a closed-model user keeps its connection from one journey to the next): give --rate R (or --find-max, or --stages RATE/s:DURATION), or leave it out")));
    }
    Ok(match how {
        "new" => JourneyConnection::New,
        _ => JourneyConnection::Reuse,
    })
}

/// A seed from the clock, for runs not given one.
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_000)
}

/// What a good answer is: `--expect-status`, `--expect-body-contains`, `--expect-length`.
fn expectation(a: &LoadArgs, grpc: Option<GrpcReply>) -> Result<Expectation, Failure> {
    let mut expect = Expectation::default();
    if grpc.is_some() {
        // A gRPC answer is 200 whatever the call's outcome (that is grpc-status's).
        expect.status = StatusSet::parse("200").map_err(|e| Failure::usage(anyhow!(e)))?;
    }
    expect.grpc = grpc;
    if let Some(list) = &a.expect_status {
        expect.status =
            StatusSet::parse(list).map_err(|e| Failure::usage(anyhow!("--expect-status: {e}")))?;
    }
    expect.body_contains = a
        .expect_body_contains
        .as_ref()
        .map(|s| s.as_bytes().to_vec());
    expect.length = a.expect_length;
    expect.echo = a.expect_echo;
    Ok(expect)
}

/// The warm-up: the measured run's spec, bounded by `--warmup` (a request count or a
/// duration; 0 of either is no warm-up; `auto`, [`WarmedUp::MAX`](shootout_model::WarmedUp::MAX)
/// at most), keeping no samples. A run in stages of users is warmed up by its first
/// stage's users for the warm-up's bound, not by its stages (which would last their
/// own time, or refuse a count of journeys).
fn warmup(a: &LoadArgs, spec: &LoadSpec) -> Result<Option<LoadSpec>, Failure> {
    let Some(w) = &a.warmup else {
        return Ok(None);
    };
    let mut builder = spec.to_builder().record(Record {
        reservoir: 0,
        all: false,
    });
    if let Some(first) = spec.stages.first() {
        builder = builder.stages(Vec::new()).connections(first.users);
    }
    let builder = if w == "auto" {
        builder.bound(None, Some(shootout_model::WarmedUp::MAX))
    } else if let Ok(n) = w.parse::<u64>() {
        if n == 0 {
            return Ok(None);
        }
        builder.bound(Some(n), None)
    } else {
        let d = parse_duration(w)
            .map_err(|e| Failure::usage(anyhow!("--warmup: {e} (or a request count, or auto)")))?;
        if d.is_zero() {
            return Ok(None);
        }
        builder.bound(None, Some(d))
    };
    builder.build().map(Some).map_err(spec_error)
}

/// Checks the files of `-e`, `-g` and `--html` before the run (see [`crate::output::check_output`]).
fn check_outputs(a: &LoadArgs) -> Result<(), Failure> {
    for (flag, path) in [("-e", &a.csv), ("-g", &a.gnuplot), ("--html", &a.html)] {
        if let Some(path) = path {
            crate::output::check_output(flag, path)?;
        }
    }
    Ok(())
}

/// How `-t` was understood.
#[derive(Debug, PartialEq, Eq)]
enum TMeaning {
    Threads(usize),
    TimeLimit(Duration),
}

/// wrk's `-t` is a thread count, ab's a time limit. With -d present the user thinks in
/// wrk's terms; otherwise ab's (where -t is the only way to give a time).
fn read_t(value: &str, duration_given: bool, threads_given: bool) -> Result<TMeaning, Failure> {
    if duration_given && !threads_given {
        let n: usize = value.parse().map_err(|_| {
            Failure::usage(anyhow!(
                "-t {value}: with -d given, -t is a thread count (wrk style): write e.g. -t 2"
            ))
        })?;
        return Ok(TMeaning::Threads(n));
    }
    run_length("-t", value).map(TMeaning::TimeLimit)
}

/// A run's length given to `flag` (`-d`, `-t`): more than 0, at most 365 days.
fn run_length(flag: &str, value: &str) -> Result<Duration, Failure> {
    match parse_duration(value) {
        Ok(d) if d.is_zero() => Err(Failure::usage(anyhow!(
            "{flag} {value}: a run must last more than 0 (e.g. {flag} 30s)"
        ))),
        Ok(d) => Ok(d),
        Err(e) => Err(Failure::usage(anyhow!("{flag}: {e}"))),
    }
}

/// A timeout given to `flag`: more than 0, at most 365 days.
fn timeout(flag: &str, value: &str) -> Result<Duration, Failure> {
    match parse_duration(value) {
        Ok(d) if d.is_zero() => Err(Failure::usage(anyhow!(
            "{flag} {value}: a timeout must be more than 0 (e.g. {flag} 30)"
        ))),
        Ok(d) => Ok(d),
        Err(e) => Err(Failure::usage(anyhow!("{flag}: {e}"))),
    }
}

/// A time between two events (`--grpc-stream-interval`): more than 0.
fn interval(flag: &str, value: &str) -> Result<Duration, Failure> {
    match parse_duration(value) {
        Ok(d) if d.is_zero() => Err(Failure::usage(anyhow!(
            "{flag} {value}: an interval must be more than 0: give one (e.g. {flag} 10ms), or drop it to send each message as soon as the reply to the one before arrived"
        ))),
        Ok(d) => Ok(d),
        Err(e) => Err(Failure::usage(anyhow!("{flag}: {e}"))),
    }
}

/// `--cpus`: a CPU list naming only CPUs this process may run on.
fn parse_cpus(list: &str) -> Result<Vec<usize>, Failure> {
    let cpus = shootout_model::parse_cpu_list(list).ok_or_else(|| {
        Failure::usage(anyhow!(
            "--cpus '{list}' is not a CPU list: write e.g. 0 or 0,2-3"
        ))
    })?;
    let allowed = sys::allowed_cpus();
    if let Some(cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        let allowed: Vec<String> = allowed.iter().map(usize::to_string).collect();
        return Err(Failure::usage(anyhow!(
            "--cpus {list}: CPU {cpu} is not available to shootout (it may use {})",
            allowed.join(",")
        )));
    }
    Ok(cpus)
}

/// Reads a request body: at most [`MAX_BODY`] bytes (64 MiB), so `-p /dev/zero` is an
/// error rather than memory running out.
pub(crate) fn read_body(path: &Path) -> std::io::Result<Vec<u8>> {
    match bounded::read_file(path, MAX_BODY as u64)? {
        Bounded::Read(body) => Ok(body),
        Bounded::TooLarge => Err(std::io::Error::other(format!(
            "it is larger than {}, the most shootout sends",
            Limit::Body.most()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::path::PathBuf;

    #[derive(Debug, Parser)]
    struct Wrap {
        #[command(flatten)]
        a: LoadArgs,
    }

    fn plan_of(args: &[&str]) -> Result<Plan, Failure> {
        let w = Wrap::try_parse_from(std::iter::once("load").chain(args.iter().copied()))
            .expect("flags parse");
        plan(&w.a)
    }

    #[test]
    fn ab_habits() {
        let p = plan_of(&["-n", "1000", "-c", "10", "-k", "http://localhost:8080"]).unwrap();
        assert_eq!(p.spec.requests, Some(1000));
        assert_eq!(p.spec.connections, 10);
        assert_eq!(p.spec.target.path, "/");
        assert_eq!(p.spec.pace, Pace::Closed);
        // no bound at all: one request, as ab
        let p = plan_of(&["http://127.0.0.1/"]).unwrap();
        assert_eq!((p.spec.requests, p.spec.duration), (Some(1), None));
    }

    #[test]
    fn t_means_what_the_user_meant() {
        // wrk: -d given, so -t is threads
        let p = plan_of(&["-t4", "-c100", "-d30s", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.spec.threads, 4);
        assert_eq!(p.spec.duration, Some(Duration::from_secs(30)));
        assert!(p.notes[0].contains("--threads 4"), "{:?}", p.notes);
        // ab: no -d, so -t is a time limit
        let p = plan_of(&["-t", "30", "-c", "10", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.spec.duration, Some(Duration::from_secs(30)));
        assert_eq!(p.spec.requests, None);
        assert!(p.notes[0].contains("time limit of 30 s"), "{:?}", p.notes);
        // -d and --threads both given: -t can only be a time limit
        let p = plan_of(&[
            "-t",
            "5",
            "--threads",
            "1",
            "-d",
            "30s",
            "http://127.0.0.1/",
        ])
        .unwrap();
        assert_eq!(
            (p.spec.threads, p.spec.duration),
            (1, Some(Duration::from_secs(5)))
        );
        assert!(plan_of(&["-t", "x", "-d", "1s", "http://127.0.0.1/"]).is_err());
    }

    #[test]
    fn bodies_headers_and_expectations() {
        let dir = std::env::temp_dir().join(format!("shootout-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("body.txt");
        std::fs::write(&body, "a=1&b=2").unwrap();
        let p = plan_of(&[
            "-p",
            body.to_str().unwrap(),
            "-T",
            "application/x-www-form-urlencoded",
            "-H",
            "X-A: 1",
            "-C",
            "s=1",
            "-C",
            "t=2",
            "--expect-status",
            "2xx",
            "--expect-body-contains",
            "Hello",
            "--expect-length",
            "12",
            "http://127.0.0.1/",
        ])
        .unwrap();
        let r = &p.spec.request;
        assert_eq!(
            (r.method.as_str(), r.body.as_slice()),
            ("POST", b"a=1&b=2".as_slice())
        );
        assert!(r.headers.contains(&("Cookie".into(), "s=1; t=2".into())));
        assert!(r.headers.contains(&("X-A".into(), "1".into())));
        assert!(p.spec.expect.status.contains(204) && !p.spec.expect.status.contains(301));
        assert_eq!(p.spec.expect.length, Some(12));
        let missing = plan_of(&["-p", "/nonexistent/body", "http://127.0.0.1/"])
            .err()
            .unwrap();
        assert_eq!(missing.code, 2);
        assert!(
            missing.error.to_string().contains("-p/-u"),
            "{}",
            missing.error
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn concurrency_never_exceeds_requests() {
        let p = plan_of(&["-n", "5", "-c", "10", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.spec.connections, 5);
        assert!(p.notes.iter().any(|n| n.contains("lowered to 5")));
    }

    #[test]
    fn rate_warmup_and_cpus() {
        let cpu = sys::allowed_cpus()[0].to_string();
        let p = plan_of(&[
            "--rate",
            "500",
            "-d",
            "2s",
            "--warmup",
            "100",
            "--cpus",
            &cpu,
            "http://127.0.0.1/",
        ])
        .unwrap();
        assert_eq!(p.spec.pace, Pace::Rate(500.0));
        assert_eq!(p.spec.cpus, Some(vec![sys::allowed_cpus()[0]]));
        assert_eq!(p.warmup.as_ref().unwrap().requests, Some(100));
        let p = plan_of(&["--warmup", "2s", "-n", "10", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.warmup.unwrap().duration, Some(Duration::from_secs(2)));
        assert!(plan_of(&["--rate", "0", "http://127.0.0.1/"]).is_err());
        assert!(plan_of(&["--cpus", "a", "http://127.0.0.1/"]).is_err());
    }

    #[test]
    fn arrival_poisson_needs_a_rate_and_draws_from_the_seed() {
        let url = "http://127.0.0.1/";
        let rate = ["--rate", "100", "-d", "5s", "--arrival", "poisson"];
        let p = plan_of(&[&rate[..], &["--seed", "4", url]].concat()).unwrap();
        assert_eq!(p.spec.arrival, Arrival::Poisson { seed: 4 });
        assert!(
            p.notes.is_empty(),
            "a seed given is not noted: {:?}",
            p.notes
        );
        let p = plan_of(&[&rate[..], &[url]].concat()).unwrap();
        assert!(matches!(p.spec.arrival, Arrival::Poisson { .. }));
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("Poisson arrivals drawn with --seed")),
            "{:?}",
            p.notes
        );
        let p = plan_of(&["--rate", "100", "-d", "5s", url]).unwrap();
        assert_eq!(p.spec.arrival, Arrival::Even, "the default");
        let e = error_of(&["--arrival", "poisson", "-c", "4", url]);
        assert!(
            e.contains("--arrival poisson spaces the requests of a rate"),
            "{e}"
        );
        let e = error_of(&["--seed", "3", url]);
        assert!(e.starts_with("--seed seeds"), "{e}");
    }

    fn error_of(args: &[&str]) -> String {
        let f = plan_of(args).err().expect("an error");
        assert_eq!(f.code, 2, "{args:?}: {}", f.error);
        let e = format!("{:#}", f.error);
        assert_eq!(e.lines().count(), 1, "{args:?}: one line: {e}");
        e
    }

    /// `-d 0`, `-t 0` and a warm-up of `0s` gave an empty report and exit 0; `--threads 0`
    /// and `-t 0` as wrk's thread count were quietly read as 1.
    #[test]
    fn zero_lengths_and_zero_threads_are_errors() {
        let url = "http://127.0.0.1/";
        assert!(error_of(&["-d", "0", url]).contains("-d 0: a run must last more than 0"));
        assert!(error_of(&["-t", "0", url]).contains("-t 0: a run must last more than 0"));
        assert!(error_of(&["-s", "0", url]).contains("-s 0: a timeout must be more than 0"));
        assert!(error_of(&["--threads", "0", "-c", "4", url]).contains("--threads 0"));
        assert!(error_of(&["-t", "0", "-d", "1s", url]).contains("--threads 0"));
        assert!(error_of(&["--threads", "1025", "-c", "4000", url]).contains("from 1 to 1024"));
        assert!(plan_of(&["--warmup", "0s", url]).unwrap().warmup.is_none());
    }

    /// `-d 1e20`, `-s 1e300`, `--warmup 1e20` and friends panicked (exit 101).
    #[test]
    fn overlong_numbers_are_errors_naming_the_flag() {
        let url = "http://127.0.0.1/";
        for (flag, value) in [
            ("-d", "1e20"),
            ("-d", "18446744073709551615"),
            ("-d", "9999999999999999999"),
            ("-t", "1e20"),
            ("-s", "1e300"),
            ("--connect-timeout", "1e300"),
            ("--warmup", "1e20"),
        ] {
            let e = error_of(&[flag, value, url]);
            assert!(
                e.starts_with(&format!("{flag}: ")) && e.contains("365 days"),
                "{e}"
            );
        }
        for rate in ["1e-300", "1e300", "NaN", "0", "-1"] {
            let e = error_of(&[&format!("--rate={rate}"), url]);
            assert!(e.starts_with("--rate"), "{e}");
        }
        assert!(error_of(&["-c", "18446744073709551615", url]).contains("-c 18446744073709551615"));
    }

    /// `--cpus 99` was ignored by the engine; now only CPUs this process may use pass.
    #[test]
    fn cpus_not_available_are_refused() {
        let e = error_of(&["--cpus", "1023", "http://127.0.0.1/"]);
        assert!(e.contains("CPU 1023 is not available"), "{e}");
        let e = error_of(&["--cpus", "0-99999", "http://127.0.0.1/"]);
        assert!(e.contains("is not a CPU list"), "{e}");
    }

    /// A plan's or the flags' method, header names and values could carry CR/LF or
    /// spaces to the server; framing headers contradicted the body shootout sends.
    #[test]
    fn request_fields_are_checked_when_the_flags_are_read() {
        let url = "http://127.0.0.1/";
        for (args, hint) in [
            (
                vec!["-m", "GET / HTTP/1.1\r\nX-Injected: 1\r\nX:"],
                "-m: method",
            ),
            (
                vec!["-H", "X Bad: 1"],
                "-H: header name 'X Bad' is not a token",
            ),
            (
                vec!["-H", "X-A: 1\r\nX-B: 2"],
                "-H: header 'X-A' has a control character",
            ),
            (
                vec!["-H", "Transfer-Encoding: chunked"],
                "set by shootout from the body",
            ),
            (
                vec!["-H", "content-length: 3"],
                "set by shootout from the body",
            ),
            (
                vec!["-T", "text/plain\r\nX-B: 2"],
                "-T: header 'Content-Type'",
            ),
            (vec!["-C", "a=1\nb"], "-C: header 'Cookie'"),
        ] {
            let mut all = args.clone();
            all.push(url);
            let e = error_of(&all);
            assert!(e.contains(hint), "{args:?}: {e}");
        }
    }

    /// `-e`, `-g` and `--html` into a missing directory failed after the whole run.
    #[test]
    fn output_files_are_checked_before_the_run() {
        let dir = tempfile_dir("outputs");
        let missing = dir.join("no/such/dir/out.csv");
        let missing = missing.to_str().unwrap();
        for flag in ["-e", "-g", "--html"] {
            let e = error_of(&[flag, missing, "http://127.0.0.1/"]);
            assert!(
                e.starts_with(&format!("{flag} ")) && e.contains("does not exist"),
                "{e}"
            );
        }
        let e = error_of(&["-e", dir.to_str().unwrap(), "http://127.0.0.1/"]);
        assert!(e.contains("is a directory"), "{e}");
        let ok = dir.join("out.csv");
        assert!(plan_of(&["-e", ok.to_str().unwrap(), "http://127.0.0.1/"]).is_ok());
        assert!(!ok.exists(), "checking writes nothing");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn pipeline_depth_is_checked_naming_the_flag() {
        let url = "http://127.0.0.1/";
        assert_eq!(
            plan_of(&["--pipeline", "16", url]).unwrap().spec.pipeline,
            16
        );
        assert!(error_of(&["--pipeline", "0", url]).starts_with("--pipeline 0: "));
        assert!(error_of(&["--pipeline", "1025", url]).contains("from 1 to 1024"));
        let e = error_of(&["--pipeline", "2", "--no-keepalive", url]);
        assert!(e.contains("pipelining needs connections kept open"), "{e}");
    }

    /// A list is read and checked when the flags are: each bad line is named with its fix,
    /// with the checks `-m` and `-H` use; body files are read beside the list.
    #[test]
    fn request_lists_are_read_and_checked_with_the_flags() {
        let dir = tempfile_dir("urls");
        let list = dir.join("list.txt");
        std::fs::write(dir.join("b.json"), "{\"id\": {seq}}").unwrap();
        std::fs::write(
            &list,
            "GET /a/{seq}\n\nPOST /b\nContent-Type: application/json\n@b.json\n",
        )
        .unwrap();
        let l = list.to_str().unwrap();
        let url = "http://127.0.0.1/";
        let p = plan_of(&["--urls", l, "--order", "random", "--seed", "9", url]).unwrap();
        let got = p.spec.list.unwrap();
        assert_eq!(
            (got.entries.len(), got.order, got.seed),
            (2, Order::Random, 9)
        );
        assert_eq!(&*got.entries[1].body, b"{\"id\": {seq}}");
        assert!(
            p.notes.is_empty(),
            "a seed given is not noted: {:?}",
            p.notes
        );
        let p = plan_of(&["--urls", l, "--order", "random", url]).unwrap();
        assert!(
            p.notes.iter().any(|n| n.contains("--seed")),
            "{:?}",
            p.notes
        );
        let p = plan_of(&["--urls", l, url]).unwrap();
        assert!(p.notes.is_empty(), "nothing random: {:?}", p.notes);

        std::fs::write(
            &list,
            "GET /a\nX-A: 1\r\n\nGET /b\nTransfer-Encoding: chunked\n",
        )
        .unwrap();
        let e = error_of(&["--urls", l, url]);
        assert!(
            e.starts_with(&format!(
                "--urls {l}:5: header 'Transfer-Encoding' is set by shootout"
            )),
            "{e}"
        );
        let e = error_of(&["--urls", "/no/such/list", url]);
        assert!(e.contains("cannot read it"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// `--urls /dev/zero` read 1 GB, then died.
    #[test]
    fn a_request_list_is_bounded_and_dev_zero_refused() {
        let url = "http://127.0.0.1/";
        let e = error_of(&["--urls", "/dev/zero", url]);
        assert_eq!(
            e,
            "--urls /dev/zero: it holds more than 128 MiB, the most a request list may hold (1000000 requests): split it"
        );
    }

    /// A 1 KB list naming one 16 MiB body file 64 times reached 2 GB: the file is read
    /// once and every entry shares it.
    #[test]
    fn a_body_file_named_64_times_is_read_once_and_shared() {
        let dir = tempfile_dir("shared-body");
        std::fs::write(dir.join("big.bin"), vec![b'x'; 16 << 20]).unwrap();
        let list = dir.join("list.txt");
        std::fs::write(
            &list,
            "POST /upload
@big.bin

"
            .repeat(64),
        )
        .unwrap();
        assert!(std::fs::metadata(&list).unwrap().len() < 2048);
        let p = plan_of(&["--urls", list.to_str().unwrap(), "http://127.0.0.1/"]).unwrap();
        let l = p.spec.list.unwrap();
        assert_eq!(l.entries.len(), 64);
        assert!(l
            .entries
            .iter()
            .all(|e| std::sync::Arc::ptr_eq(&e.body, &l.entries[0].body)));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// `-p /dev/zero` was read until memory ran out.
    #[test]
    fn bodies_are_bounded() {
        let e = error_of(&["-p", "/dev/zero", "http://127.0.0.1/"]);
        assert!(e.contains("larger than 64 MiB"), "{e}");
        let dir = tempfile_dir("bodies");
        let (at, over) = (dir.join("at"), dir.join("over"));
        // Sparse files: the limit is read, not written.
        std::fs::File::create(&at)
            .unwrap()
            .set_len(MAX_BODY as u64)
            .unwrap();
        std::fs::File::create(&over)
            .unwrap()
            .set_len(MAX_BODY as u64 + 1)
            .unwrap();
        assert_eq!(read_body(&at).unwrap().len(), MAX_BODY);
        assert!(read_body(&over).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The in-flight limit's words are the spec's; the fix names the flags.
    #[test]
    fn too_many_requests_in_flight_name_the_flags() {
        let e = error_of(&[
            "-c",
            "10000",
            "--http2",
            "--streams",
            "101",
            "-d",
            "1s",
            "http://127.0.0.1/",
        ]);
        assert_eq!(e, "10000 connections × 101 streams is 1010000 requests in flight: the most is 1000000 (lower -c or --streams)");
    }

    /// --http3 loads an https:// URL over QUIC with --streams; any other URL is refused
    /// naming the fix, and --http2 with it is refused by the flags.
    #[test]
    fn http3_is_for_https_urls() {
        let p = plan_of(&[
            "--http3",
            "--streams",
            "8",
            "-n",
            "10",
            "https://127.0.0.1/",
        ])
        .unwrap();
        assert_eq!((p.spec.protocol, p.spec.streams), (Protocol::Http3, 8));
        let e = error_of(&["--http3", "-n", "10", "http://127.0.0.1/"]);
        assert!(e.contains("load an https:// URL"), "{e}");
        let e = error_of(&["--http3", "--no-keepalive", "-n", "1", "https://127.0.0.1/"]);
        assert!(e.contains("drop --no-keepalive"), "{e}");
        assert!(
            Wrap::try_parse_from(["load", "--http3", "--http2", "https://127.0.0.1/"]).is_err()
        );
    }

    /// Without --busy-poll, a generator pinned apart by --cpus polls 20 µs over HTTP/2
    /// (where the server pays for its wake-ups) and not over HTTP/1.1; --busy-poll says
    /// otherwise either way, 0 included.
    #[test]
    fn busy_polling_is_on_by_itself_over_http2_when_pinned_and_as_asked_otherwise() {
        let poll = |args: &[&str]| {
            let mut all = vec!["--cpus", "0", "-d", "1s"];
            all.extend_from_slice(args);
            all.push("http://127.0.0.1/");
            plan_of(&all).unwrap().spec.busy_poll
        };
        assert_eq!(poll(&[]), Duration::ZERO, "HTTP/1.1");
        assert_eq!(poll(&["--http2"]), Duration::from_micros(20));
        assert_eq!(poll(&["--http2", "--busy-poll", "0"]), Duration::ZERO);
        assert_eq!(poll(&["--busy-poll", "50us"]), Duration::from_micros(50));
    }

    /// `--max-connections` errors name it (not -c), and say what it goes with.
    #[test]
    fn a_connection_cap_error_names_its_flag() {
        let with = |extra: &[&str]| {
            let mut args = vec!["-d", "1s"];
            args.extend_from_slice(extra);
            args.push("http://127.0.0.1/");
            error_of(&args)
        };
        assert_eq!(
            with(&["--rate", "10", "--max-connections", "0"]),
            "--max-connections 0: the connection cap must be from 1 to 1000000"
        );
        assert!(with(&["--rate", "10", "-c", "8", "--max-connections", "4"])
            .starts_with("--max-connections 4 is below -c 8"));
        assert!(
            with(&["--max-connections", "4"]).starts_with("--max-connections applies to rate mode")
        );
    }

    /// A plan with `line` added to its `[section]`, each section given once.
    fn plan_with(section: &str, line: &str) -> String {
        let mut sections = [
            ("defaults", String::new()),
            (
                "contender",
                "name = \"a\"\nurl = \"http://127.0.0.1:1\"\n".into(),
            ),
            ("workload", "name = \"w\"\n".into()),
            ("load", String::new()),
        ];
        for (name, body) in &mut sections {
            if *name == section {
                body.push_str(line);
                body.push('\n');
            }
        }
        if !line.starts_with("concurrency") && !line.starts_with("rate") {
            sections[3].1.push_str("concurrency = [1]\n");
        }
        let mut text = String::from("name = \"limits\"\n");
        for (name, body) in sections {
            let header = match name {
                "contender" | "workload" => format!("[[{name}]]"),
                _ => format!("[{name}]"),
            };
            text.push_str(&format!("{header}\n{body}"));
        }
        text
    }

    /// A limit of the spec is written once: the `load` flag and the plan key that give
    /// the same number are refused with the same range, the spec's ([`Limit::range`]),
    /// each naming itself (the plan key at its line). The pairs are derived from
    /// [`Limit::ALL`], so a new limit must say here which flag and key give it.
    #[test]
    fn every_limit_reads_the_same_for_its_flag_and_its_plan_key() {
        let url = "http://127.0.0.1/";
        let dir = tempfile_dir("limits");
        let big = dir.join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_BODY as u64 + 1)
            .unwrap();
        let big = big.to_str().unwrap().to_string();
        let big_body = format!("body = \"{}\"", "a".repeat(MAX_BODY + 1));
        for limit in Limit::ALL {
            // The flags that give the number out of range, and the plan's `[section]`
            // line that does (none: plans give no thread count; each step takes the
            // default).
            let (flags, key): (Vec<&str>, Option<(&str, &str)>) = match limit {
                Limit::Connections => (vec!["-c", "0"], Some(("load", "concurrency = [0]"))),
                Limit::Threads => (vec!["--threads", "0"], None),
                Limit::Streams => (
                    vec!["--http2", "--streams", "0"],
                    Some(("load", "streams = 0")),
                ),
                Limit::Pipeline => (vec!["--pipeline", "0"], Some(("load", "pipeline = 0"))),
                Limit::Rate => (vec!["--rate", "0"], Some(("load", "rate = [0.0]"))),
                Limit::BusyPoll => (
                    vec!["--busy-poll", "2ms"],
                    Some(("defaults", "busy_poll = \"2ms\"")),
                ),
                Limit::Body => (vec!["-p", &big], Some(("workload", &big_body))),
            };
            // A body's limit is said as its most: "larger than 64 MiB, the most ...".
            let range = match limit {
                Limit::Body => limit.most(),
                _ => limit.range(),
            };
            let flag = flags[flags.len() - 2];
            let e = error_of(&[flags.as_slice(), &[url]].concat());
            assert!(e.contains(flag) && e.contains(&range), "{limit:?}: {e}");
            let Some((section, line)) = key else { continue };
            let text = plan_with(section, line);
            let e = shootout_model::plan::parse(&text, "plan.toml", &[0]).unwrap_err();
            let at = text.lines().position(|l| l == line).unwrap() + 1;
            let name = line.split(" = ").next().unwrap();
            assert_eq!(e.line, at, "{limit:?}: {e}");
            assert!(
                e.message.contains(name) && e.message.contains(&range),
                "{limit:?}: {e}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A journey file of one step in a folder of its own (removed when the folder is
    /// dropped); the folder and the file's path.
    fn journey_file() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.toml");
        let text = "[[journey]]\nname = \"j\"\n[[journey.step]]\nname = \"s\"\nget = \"/\"\n";
        std::fs::write(&path, text).unwrap();
        (dir, path.display().to_string())
    }

    /// `--warmup` with stages of users warms up with the first stage's users for the
    /// warm-up's bound. The warm-up's spec kept the stages: a count was refused as if
    /// `-n` (never given) had been, and a time ran the stages' own ramp.
    #[test]
    fn a_warm_up_before_stages_of_users_runs_the_first_stage_s_users() {
        let (_dir, path) = journey_file();
        let with = |warm: &str| {
            let args = [
                "--journey",
                &path,
                "--stages",
                "3:1s,8:2s",
                "--warmup",
                warm,
            ];
            let args: Vec<&str> = args.into_iter().chain(["http://127.0.0.1:1/"]).collect();
            plan_of(&args).unwrap_or_else(|f| panic!("--warmup {warm}: {:#}", f.error))
        };
        let p = with("40");
        assert_eq!(p.spec.stages.len(), 2, "the measured run keeps its stages");
        let w = p.warmup.expect("a warm-up");
        assert!(w.stages.is_empty(), "{:?}", w.stages);
        assert_eq!((w.connections, w.requests, w.duration), (3, Some(40), None));
        let w = with("2s").warmup.expect("a warm-up");
        assert!(w.stages.is_empty(), "{:?}", w.stages);
        let two = Some(Duration::from_secs(2));
        assert_eq!((w.connections, w.requests, w.duration), (3, None, two));
        let w = with("auto").warmup.expect("a warm-up");
        assert_eq!((w.stages.len(), w.connections), (0, 3));
    }

    /// `--journey-connection`: reuse unless `new` is asked for, and refused where no
    /// journey starts as a new user (no journeys, or the closed model), saying what to do.
    #[test]
    fn journey_connection_is_the_open_model_s_and_reuse_by_default() {
        let (_dir, path) = journey_file();
        let url = "http://127.0.0.1:1/";
        let open = ["--journey", &path, "--rate", "10", "-n", "5"];
        let p = plan_of(&[&open[..], &[url][..]].concat()).unwrap();
        assert_eq!(p.spec.journey_connection, JourneyConnection::Reuse);
        let new = ["--journey-connection", "new"];
        let p = plan_of(&[&open[..], &new[..], &[url][..]].concat()).unwrap();
        assert_eq!(p.spec.journey_connection, JourneyConnection::New);
        let closed = ["--journey", &path, "-n", "5"];
        for (args, fix) in [
            (
                vec!["--rate", "10", "-n", "5"],
                "give --journey FILE with --rate R",
            ),
            (closed.to_vec(), "give --rate R"),
        ] {
            let Err(f) = plan_of(&[&args[..], &new[..], &[url][..]].concat()) else {
                panic!("{args:?} --journey-connection new: accepted");
            };
            let e = format!("{:#}", f.error);
            assert!(e.contains(fix), "{e}");
            assert_eq!(f.code, 2);
        }
    }

    fn tempfile_dir(what: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("shootout-cli-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Random and boundary values in every flag that takes a number, a duration or
    /// request text: a one-line usage error or a spec that validates. Never a panic.
    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn number() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<f64>().prop_map(|f| f.to_string()),
                any::<u64>().prop_map(|n| n.to_string()),
                any::<i64>().prop_map(|n| n.to_string()),
                "[0-9]{1,22}(\\.[0-9]{0,4})?(ns|ms|s|m|h|d|y)?",
                prop::sample::select(vec![
                    "0",
                    "0s",
                    "1",
                    "1e20",
                    "1e300",
                    "NaN",
                    "inf",
                    "-1",
                    "",
                    "18446744073709551615",
                    "9999999999999999999",
                    "31536000",
                    "365days",
                    "1024",
                    "1025",
                    "1000000",
                    "1000001",
                ])
                .prop_map(String::from),
            ]
        }

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                ".{0,10}",
                "[A-Za-z-]{1,6}: ?[ -~]{0,6}",
                prop::sample::select(vec![
                    "X Bad: 1",
                    "X-A: 1\r\nX-B: 2",
                    "Transfer-Encoding: chunked",
                    "Content-Length: 1",
                    "GET / HTTP/1.1\r\n",
                    "\0",
                ])
                .prop_map(String::from),
            ]
        }

        fn flag() -> impl Strategy<Value = (&'static str, String)> {
            let numeric = prop::sample::select(vec![
                "-n",
                "-c",
                "-t",
                "-d",
                "--rate",
                "--threads",
                "--warmup",
                "-s",
                "--connect-timeout",
                "--expect-length",
                "--cpus",
                "--pipeline",
            ]);
            let textual = prop::sample::select(vec!["-m", "-H", "-T", "-C"]);
            prop_oneof![(numeric, number()), (textual, text())]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn any_flags_give_a_clean_error_or_a_valid_spec(
                flags in prop::collection::vec(flag(), 0..5)
            ) {
                let mut args = vec!["load".to_string()];
                for (f, v) in &flags {
                    args.push(format!("{f}={v}"));
                }
                args.push("http://127.0.0.1:1/".into());
                // clap refuses some values itself (a negative -n): those are usage errors too.
                let Ok(w) = Wrap::try_parse_from(&args) else { return Ok(()) };
                match plan(&w.a) {
                    Ok(p) => {
                        prop_assert_eq!(p.spec.validate(), Ok(()));
                        if let Some(ws) = &p.warmup {
                            prop_assert_eq!(ws.validate(), Ok(()));
                        }
                    }
                    Err(f) => {
                        prop_assert_eq!(f.code, 2);
                        let e = format!("{:#}", f.error);
                        prop_assert_eq!(e.lines().count(), 1, "{}", e);
                    }
                }
            }
        }
    }
}
