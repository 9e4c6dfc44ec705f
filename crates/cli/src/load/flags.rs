//! Stage 1 of `shootout load`: what was typed, as clap parsed it ([`LoadArgs`], with the
//! distribution flags [`DistArgs`] and the capacity search's [`FindMaxArgs`]), with no
//! logic of its own. [`super::resolve`] turns it into the spec; nothing else reads it.

use crate::choices::choice;
use clap::Args;
use shootout_model::requests::Order;
use shootout_report::Format;
use std::path::PathBuf;

/// Flags of `shootout load`. ab's short flags mean what they mean in ab; wrk's `-t4 -c100
/// -d30s` works too (with -d given, -t is a thread count).
#[derive(Debug, Clone, Args)]
#[command(after_help = "Flags of other tools:
  ab   -n -c -t -k -p -u -T -H -C -m -i -s -e -g -A -B -v -l -S as in ab; -r accepted
       (no socket error ends a run); -w, -X, -P refused with the way here
  wrk  -t4 -c100 -d30s, -H, --timeout 2s; --latency accepted (always shown);
       --format wrk for its report; -s script.lua refused (use --urls FILE)
  oha, hey  -z 30s is -d; --latency-correction accepted (--rate always corrects);
       -q N refused: the rate is --rate N (-q is quiet here); -disable-keepalive and
       --disable-keepalive refused: --no-keepalive; -d BODY and -D FILE refused: -p FILE
       (-d is the duration here); hey's -o csv refused: -g FILE
  wrk2 -R N refused: --rate N
  ghz  --proto, --import-path, --protoset as in ghz; -d DATA refused: --message JSON
       (-d is the duration here); -c and --rps are -c and --rate

Examples:
  shootout load -n 100000 -c 100 http://localhost:8080/hello
  shootout load -d 30s -c 1000 --threads 2 http://127.0.0.1:8080/
  shootout load --rate 20000 -d 30s -c 200 http://127.0.0.1:8080/
  shootout load -p body.json -T application/json -n 1000 -c 10 http://127.0.0.1:8000/
  shootout load --json -n 1000 http://127.0.0.1:8080/ | jq .latency_ms.p99
  shootout load --pipeline 16 -d 10s -c 100 http://127.0.0.1:8080/plaintext
  shootout load --urls requests.txt --order random -d 30s -c 50 http://127.0.0.1:8080/
  shootout load --http2 --streams 10 -c 10 -d 10s http://127.0.0.1:8080/
  shootout load --ws-messages chat.txt --expect-echo -c 64 -d 10s ws://127.0.0.1:8765/echo
  shootout load --proto hello.proto -d 10s grpc://127.0.0.1:50051/hello.Greeter/SayHello")]
#[command(group(clap::ArgGroup::new("lists").args(["urls", "ws_messages", "messages"])))]
pub struct LoadArgs {
    /// The URL to load (http:// or https://, the scheme http:// when left out; a missing
    /// path means /; ws:// or wss:// for WebSocket; grpc:// or grpcs:// and
    /// /package.Service/Method for a gRPC call).
    pub url: String,

    /// Requests to send in all (with no -n, -d or -t: one request, as ab).
    #[arg(short = 'n', long = "requests", value_name = "N")]
    pub requests: Option<u64>,

    /// Concurrent connections. With --rate or --find-max: the most opened ahead of need
    /// (before the start); the rest open as requests find no free connection.
    #[arg(
        short = 'c',
        long = "concurrency",
        value_name = "N",
        default_value_t = 1
    )]
    pub concurrency: usize,

    /// ab: time limit in seconds; wrk: threads (when -d is given). Prints how it was read.
    #[arg(short = 't', value_name = "SECS|THREADS")]
    pub t: Option<String>,

    /// How long to run: 30s, 1m, 250ms, or seconds (-z, as oha and hey write it, too).
    #[arg(short = 'd', long = "duration", value_name = "DURATION")]
    pub duration: Option<String>,

    /// End the load once it has converged: FIGURE±WIDTH%, the figure's 95% interval within
    /// WIDTH% of it on each side (p99±5%, p50±2%, rps±2%; +- for ±); repeat or
    /// comma-separate for more, all must hold. -d is then the most it may last (at least 3 s).
    #[arg(long = "until", value_name = "FIGURE±WIDTH%")]
    pub until: Vec<String>,

    /// hey's and oha's -z DURATION: -d, with a note when it runs on shootout's one
    /// connection where they open 50.
    #[arg(
        short = 'z',
        value_name = "DURATION",
        hide = true,
        conflicts_with = "duration"
    )]
    pub z: Option<String>,

    /// Requests per second on a fixed schedule (open loop, latency measured from each
    /// request's due time: the coordinated-omission correction that oha's
    /// --latency-correction asks for, always on; oha's -q N is --rate N).
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,

    /// With --rate or --find-max: the most connections open at once. A request that finds
    /// no free connection opens one, so none waits for a connection below this cap; one
    /// the server closed opens again only when a request needs it (default: as many as the
    /// open-file limit allows; the report says how many were used and whether the cap
    /// was reached). With --journey: the most users at once, each on its own connection
    /// (also spelled --max-users).
    #[arg(long, value_name = "N", visible_alias = "max-users")]
    pub max_connections: Option<usize>,

    /// Worker threads, 1 to 1024 (default: the CPUs this process may run on, at most -c).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Warm up first for this long or this many requests (not measured): 5s or 1000; auto:
    /// until the per-second p99 and throughput are level (at most 60 s).
    #[arg(long, value_name = "DURATION|N|auto")]
    pub warmup: Option<String>,

    /// Accepted for ab's habit: keep-alive is the default.
    #[arg(short = 'k', long = "keepalive")]
    pub keepalive: bool,

    /// Open a new connection for every request (sends Connection: close).
    #[arg(long)]
    pub no_keepalive: bool,

    /// POST this file's contents (at most 64 MiB).
    #[arg(short = 'p', value_name = "FILE", conflicts_with = "put_file")]
    pub post_file: Option<PathBuf>,

    /// PUT this file's contents (at most 64 MiB).
    #[arg(short = 'u', value_name = "FILE")]
    pub put_file: Option<PathBuf>,

    /// Content-Type of the body.
    #[arg(short = 'T', long = "content-type", value_name = "TYPE")]
    pub content_type: Option<String>,

    /// Extra header, 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Cookie, name=value (repeatable).
    #[arg(short = 'C', long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,

    /// Per-request timeout: seconds or a duration with its unit (30, 2s, 500ms; wrk's
    /// --timeout 2s).
    #[arg(
        short = 's',
        long = "timeout",
        value_name = "SECS",
        default_value = "30"
    )]
    pub timeout: String,

    /// Connect timeout: seconds or a duration.
    #[arg(long, value_name = "SECS", default_value = "10")]
    pub connect_timeout: String,

    /// HTTP method (default GET, or POST/PUT with -p/-u).
    #[arg(short = 'm', long = "method", value_name = "METHOD")]
    pub method: Option<String>,

    /// Send HEAD requests.
    #[arg(short = 'i', long = "head")]
    pub head: bool,

    /// Expected status codes, e.g. 200,301 or 2xx (default: any below 400).
    #[arg(long, value_name = "LIST")]
    pub expect_status: Option<String>,

    /// Every body must contain this text.
    #[arg(long, value_name = "TEXT")]
    pub expect_body_contains: Option<String>,

    /// Every body must be exactly this many bytes.
    #[arg(long, value_name = "BYTES")]
    pub expect_length: Option<u64>,

    /// Report format.
    #[arg(long, value_name = "FORMAT", default_value_t, value_parser = choice::<Format>())]
    pub format: Format,

    /// Same as --format json.
    #[arg(long)]
    pub json: bool,

    /// Write ab's percentile CSV (-e) to this file.
    #[arg(short = 'e', value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write ab's per-request TSV (-g) to this file.
    #[arg(short = 'g', value_name = "FILE")]
    pub gnuplot: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page (charts included) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// No live view, no progress and no notes on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// No live view: while the load runs, show only a progress line on stderr, as when
    /// stdout is not a terminal (the live view shows only when stdout is a terminal).
    #[arg(long)]
    pub no_live: bool,

    /// Serve live metrics for Prometheus at http://ADDR/metrics while the load runs:
    /// a port (on 127.0.0.1), or ADDRESS:PORT (0.0.0.0:9464 to be scraped from elsewhere).
    #[arg(long, value_name = "ADDR", value_parser = crate::metrics::parse_listen, conflicts_with = "find_max")]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// Connect to this unix socket (the URL still gives the path and Host).
    #[arg(long, value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,

    /// Speak HTTP/2: h2c with prior knowledge for http://, ALPN h2 for https:// (a server
    /// that does not agree is refused, never fallen back from).
    #[arg(long)]
    pub http2: bool,

    /// Speak HTTP/3 over QUIC (https:// URLs only, ALPN h3, the same --insecure and
    /// --cacert as https); --streams concurrent requests per connection. A server that
    /// does not answer QUIC with h3 is refused before the run.
    #[arg(long, conflicts_with = "http2")]
    pub http3: bool,

    /// HTTP/2 and HTTP/3: concurrent streams per connection, 1 to 10000 (h2load's -m;
    /// default 1). With --journey --http2 (closed model): N users share each connection,
    /// each step a stream of its own.
    #[arg(long, value_name = "N")]
    pub streams: Option<usize>,

    /// gRPC (grpc:// and grpcs:// URLs): the schema, a .proto file (compiled by shootout
    /// itself: no protoc needed), its imports found beside it and in each --import-path.
    /// Without --proto or --protoset the schema is asked of the server's reflection
    /// service (grpc.reflection.v1, or v1alpha) before the run.
    #[arg(long, value_name = "FILE", conflicts_with = "protoset")]
    pub proto: Option<PathBuf>,

    /// gRPC: a directory the --proto file's imports are looked for in (repeatable).
    #[arg(long, value_name = "DIR", requires = "proto")]
    pub import_path: Vec<PathBuf>,

    /// gRPC: the schema as a protoset (protoc --include_imports --descriptor_set_out=FILE).
    #[arg(long, value_name = "FILE")]
    pub protoset: Option<PathBuf>,

    /// gRPC: the request message as JSON (protobuf's JSON mapping), e.g. '{"name":"x"}'
    /// (-p FILE reads it from a file; default {}). Encoded once, checked against the
    /// method's input type before the run.
    #[arg(long, value_name = "JSON", conflicts_with_all = ["post_file", "put_file", "urls"])]
    pub message: Option<String>,

    /// gRPC: the most bytes one reply message may have (default 4194304, 4 MiB, as gRPC's
    /// own clients); a longer one fails as grpc_framing before a byte of it is kept.
    #[arg(long, value_name = "BYTES")]
    pub max_message: Option<usize>,

    /// gRPC: send the JSON messages listed in FILE, one a line (`#` starts a comment), in
    /// turn or at random (--order); `{seq}` and `{rand:LO-HI}` in a line are drawn afresh
    /// for each call, as --ws-messages draws them. Each line is checked against the
    /// method's input type before the run.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["post_file", "put_file", "urls", "message", "ws_messages"])]
    pub messages: Option<PathBuf>,

    /// gRPC: every reply must hold these fields with these values (protobuf's JSON
    /// mapping; fields not named are not checked), e.g. '{"message":"hello x"}'; a reply
    /// that does not fails as body.
    #[arg(long, value_name = "JSON")]
    pub expect_json: Option<String>,

    /// gRPC streaming: a server-streaming call is cancelled (RST_STREAM CANCEL, the
    /// client's choice, not a failure) after N replies; a client-streaming call sends N
    /// messages (the --message repeated, or the --messages list's in turn; at most 10,000
    /// and 64 MiB a call); a bidirectional call sends N messages, each matched in order
    /// to its reply.
    #[arg(long, value_name = "N")]
    pub grpc_stream_messages: Option<u32>,

    /// gRPC server streaming: a call is cancelled (RST_STREAM CANCEL, the client's
    /// choice, not a failure) this long after its send, e.g. 5s; bidirectional: a call
    /// sends messages this long, then ends its side (below -s, the call's deadline).
    #[arg(long, value_name = "DURATION")]
    pub grpc_stream_duration: Option<String>,

    /// gRPC bidirectional streaming: a call sends its messages this far apart on its own
    /// schedule, e.g. 10ms, each reply's latency counted from its message's due time
    /// (default: each message as soon as the reply to the one before arrived).
    #[arg(long, value_name = "DURATION")]
    pub grpc_stream_interval: Option<String>,
    /// gRPC: compress each message with gzip (grpc-encoding: gzip) and accept replies
    /// compressed with it (grpc-accept-encoding: gzip); off by default. A compressed reply
    /// without it fails as grpc_framing, and a reply is inflated within --max-message.
    #[arg(long, value_name = "ENCODING")]
    pub grpc_compress: Option<String>,
    /// WebSocket (ws:// and wss:// URLs): send this text as a text message (-p FILE
    /// sends the file as a binary message instead). At most 16 MiB, UTF-8.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["post_file", "put_file", "urls"])]
    pub ws_text: Option<String>,

    /// WebSocket: send the text messages listed in FILE, one a line (`#` starts a
    /// comment), in turn or at random (--order); `{seq}` and `{rand:LO-HI}` in a line
    /// are drawn afresh for each message, and --expect-echo checks each reply against the
    /// message it answers. At most 1,000,000 messages of 1 MiB, 128 MiB in all.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["post_file", "put_file", "urls", "ws_text", "ws_hold"])]
    pub ws_messages: Option<PathBuf>,

    /// WebSocket and gRPC: every reply must equal the message sent (an echo server's); a
    /// gRPC reply is compared as a message of the reply's type.
    #[arg(long)]
    pub expect_echo: bool,

    /// WebSocket: hold the -c connections instead of sending messages, each pinging at
    /// this interval (e.g. 5s); a ping and its pong are counted as a request, and a
    /// connection the server drops is opened again and counted.
    #[arg(long, value_name = "INTERVAL", conflicts_with_all = ["ws_text", "post_file", "put_file"])]
    pub ws_hold: Option<String>,

    /// With --ws-hold: open this many connections per second (default: all at the start).
    #[arg(long, value_name = "R", requires = "ws_hold")]
    pub ws_hold_rate: Option<f64>,

    /// Requests in flight per connection, 1 to 1024 (HTTP/1.1 pipelining: written
    /// together, answers matched in order; WebSocket: messages awaiting their replies).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub pipeline: usize,

    /// Send the requests listed in FILE (one `METHOD PATH` a line, optional header lines
    /// and `@body-file`) to the URL's origin, instead of the URL's path. At most 128 MiB
    /// and 1,000,000 requests; each body file at most 64 MiB, read once however often it
    /// is named, and 256 MiB for all of them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["post_file", "put_file", "method", "head"])]
    pub urls: Option<PathBuf>,

    /// Run the journeys of FILE (TOML: steps with captures, cookies, think times; see
    /// docs/journeys.md) instead of one request: -c users each run journeys back to back
    /// (-n counts journeys), or --rate R journeys start a second, each a new user (on an
    /// idle connection when one is free: --journey-connection). HTTP/1.1, or HTTP/2 with --http2 (each user on an HTTP/2 connection of
    /// its own, its steps as streams one at a time; with --streams N, N users share each
    /// connection).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["urls", "post_file", "put_file", "method", "head", "ws_messages"])]
    pub journey: Option<PathBuf>,

    /// With --journey and --rate (or --find-max, or --stages RATE/s:…): the connection
    /// each journey's new user takes: reuse (the default: an idle connection an earlier
    /// journey's user left open, else a new one; k6's arrival-rate executors keep a
    /// virtual user's connections between iterations too) or new (one of its own, opened
    /// at the journey's start and closed at its end, as each Gatling virtual user has its
    /// own: the server's connection set-up is part of every journey). Either way the user
    /// starts with no cookies and no captured values.
    #[arg(long, value_name = "HOW", value_parser = ["reuse", "new"])]
    pub journey_connection: Option<String>,

    /// With --journey, closed model: users in stages, USERS:DURATION comma-separated
    /// (10:30s,50:1m,10:30s), as a plan's stages step connections: a stage's new users
    /// begin their first journey at its start, and users a stage drops end the journey
    /// they are in. Open model: journeys started a second in stages, RATE/s:DURATION
    /// (10/s:30s,50/s:1m), each stage's at even intervals from its start. The run lasts
    /// the stages together; the report counts them as one.
    #[arg(long, value_name = "STAGES", conflicts_with_all = ["duration", "z", "t", "requests", "concurrency", "rate"])]
    pub stages: Option<String>,

    /// Order of the --urls, --ws-messages or --messages list: seq (each thread walks it in order) or
    /// random.
    #[arg(long, value_name = "ORDER", default_value_t, value_parser = choice::<Order>(), requires = "lists")]
    pub order: Order,

    /// Seed of --order random, {rand:LO-HI} values and --arrival poisson's gaps (default:
    /// from the clock, printed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// With --rate: how requests are spaced: even (at 1/R intervals, as wrk2) or poisson
    /// (exponential gaps of mean 1/R drawn from --seed, as independent users arrive; each
    /// thread and shard draws its own).
    #[arg(long, value_name = "ARRIVAL", default_value = "even", value_parser = ["even", "poisson"])]
    pub arrival: String,

    /// Accept any TLS certificate (self-signed servers).
    #[arg(long)]
    pub insecure: bool,

    /// Trust the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,

    /// Pin worker threads to these CPUs, e.g. 0 or 0,2-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,

    /// Before sleeping for want of events, poll for up to this long (e.g. 50us; at most
    /// 1ms; 0: never). Saves the server the cost of waking the generator, large on virtual
    /// machines; use it when the generator has CPUs of its own (--cpus, taskset), never
    /// when it shares them with the server. Default: 20us over HTTP/2 when pinned, else 0.
    #[arg(long, value_name = "DURATION")]
    pub busy_poll: Option<String>,

    /// ab: basic authentication, user:password (sends Authorization: Basic …; hey's -a).
    #[arg(
        short = 'A',
        long = "auth",
        value_name = "USER:PASS",
        short_alias = 'a'
    )]
    pub auth: Option<String>,

    /// ab: connect from this local address; a list or range spreads connections over
    /// them round robin (127.0.0.2, 127.0.0.1-127.0.0.8, 127.0.0.1-8, ::1): more
    /// connections to one server than one address's ports allow.
    #[arg(short = 'B', long = "bind", value_name = "ADDR")]
    pub bind: Option<String>,

    /// ab: verbosity; 2 or more prints the first request's head and the first answers'
    /// heads on stderr after the run (over HTTP/2 as curl shows them: `HTTP/2 200`).
    #[arg(short = 'v', long = "verbosity", value_name = "N")]
    pub verbosity: Option<u8>,

    /// ab: variable document lengths are no failures: never here unless --expect-length;
    /// in --format ab, "Length" failures are left out, as ab's -l does.
    #[arg(short = 'l')]
    pub lengths_vary: bool,

    /// ab: --format ab prints the connection times as min, avg and max only (ab's -S).
    #[arg(short = 'S')]
    pub no_spread: bool,

    /// Accepted for ab's habit: shootout never exits on a socket error (each is counted).
    #[arg(short = 'r', hide = true)]
    pub keep_going: bool,

    /// Accepted for wrk's habit: the latency distribution is always reported.
    #[arg(long, hide = true)]
    pub latency: bool,

    /// Accepted for oha's habit: rate mode (--rate) always corrects for coordinated
    /// omission.
    #[arg(long, hide = true)]
    pub latency_correction: bool,

    /// Refused with a pointer: ab's -w (HTML tables).
    #[arg(short = 'w', hide = true)]
    pub html_tables: bool,

    /// Refused with a pointer: ab's -X (a proxy).
    #[arg(short = 'X', hide = true, value_name = "PROXY:PORT")]
    pub proxy: Option<String>,

    /// Refused with a pointer: ab's -P (a proxy's credentials).
    #[arg(short = 'P', hide = true, value_name = "USER:PASS")]
    pub proxy_auth: Option<String>,

    /// Refused with a pointer: wrk's --script (Lua).
    #[arg(long, hide = true, value_name = "FILE")]
    pub script: Option<String>,

    /// Sharding, start time, result files and thresholds.
    #[command(flatten)]
    pub dist: DistArgs,

    /// The capacity search.
    #[command(flatten)]
    pub find_max: FindMaxArgs,
}

/// Flags of a distributed or judged load.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Distributed load and thresholds")]
pub struct DistArgs {
    /// Run shard I of N of the load (0-based): rate R/N, offset I/R, a share of -c and -n.
    #[arg(long, value_name = "I/N", conflicts_with = "shards")]
    pub shard: Option<String>,

    /// Run one of N shards; which one comes from JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs).
    #[arg(long, value_name = "N")]
    pub shards: Option<u32>,

    /// Start when every shard is there: shard 0 listens on PORT, the others connect to HOST:PORT and are told when to start.
    #[arg(long, value_name = "HOST:PORT")]
    pub barrier: Option<String>,

    /// Where shard 0 listens for the barrier (default: every address, on --barrier's port); port 0 takes a free one and says which.
    #[arg(long, value_name = "ADDR")]
    pub barrier_listen: Option<String>,

    /// How long a shard waits at the barrier for the others before failing, naming those that never came.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub barrier_wait: String,

    /// The run the shards at the barrier belong to: shards of another run are refused (default: a fingerprint of the load).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Start the measured run at this time (RFC 3339 in UTC, or Unix seconds); --barrier needs no time agreed in advance.
    #[arg(long, value_name = "TIME", conflicts_with_all = ["barrier", "barrier_listen"])]
    pub start_at: Option<String>,

    /// Write the whole result to FILE for shootout merge (repeatable): '-' prints it on stdout between markers; a directory gets shard-I-of-N.json.
    #[arg(long, value_name = "FILE")]
    pub save: Vec<PathBuf>,

    /// Exit 3 when this holds, e.g. p99>50ms, errors>0.1%, rps<20000, failed>0 (repeatable).
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
}

/// The flags of a capacity search.
#[derive(Args, Debug, Clone, Default)]
pub struct FindMaxArgs {
    /// Search for the most requests per second that meets every --slo (open-loop steps:
    /// growing from --from until one breaks an SLO, then bisecting to 5 %); -d is the
    /// least length of each step's deadline and the length a step must measure before it
    /// is decided met (the length a rate is to be sustained).
    #[arg(long)]
    pub find_max: bool,

    /// With --find-max: a condition every step must meet, in --fail-if's grammar read the
    /// other way (p99<50ms, errors<0.1%); repeat for more.
    #[arg(long, value_name = "EXPR")]
    pub slo: Vec<String>,

    /// With --find-max: the first rate tried (req/s) [default: 100].
    #[arg(long, value_name = "R")]
    pub from: Option<f64>,

    /// With --find-max: the highest rate tried (req/s) [default: 1000000, or --from if
    /// higher].
    #[arg(long, value_name = "R")]
    pub to: Option<f64>,

    /// With --find-max: when each step ends: decided (once its SLOs are decided, at the
    /// latest at its deadline) or deadline (each runs to its deadline: the fixed rule)
    /// [default: decided].
    #[arg(long, value_name = "RULE", value_parser = choice::<shootout_model::find_max::EndRule>())]
    pub step_end: Option<shootout_model::find_max::EndRule>,
}
