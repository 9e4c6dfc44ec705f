//! `shootout load grpc://HOST:PORT/package.Service/Method`: a unary, server-streaming,
//! client-streaming or bidirectional gRPC call, resolved before anything runs. The schema comes from `--proto FILE` (compiled here, in Rust, by
//! protox: no protoc needed), `--protoset FILE` (protoc's `--descriptor_set_out`) or,
//! without either, the server's own reflection service ([`shootout_engine::reflection`]); the
//! method from the URL's path; the request from `--message JSON` or `-p FILE` (protobuf's
//! JSON mapping), encoded once with prost-reflect. The call is then an HTTP/2 request like
//! any other — a POST of the message behind gRPC's 5-byte prefix, with
//! `content-type: application/grpc`, `te: trailers` and `grpc-timeout` from `-s` — and its
//! answers are checked as gRPC replies by the engine ([`GrpcReply`]). A client stream's
//! body is its N messages back to back; a bidirectional call's body is its one message,
//! sent as each falls due; a stream's limits travel in [`GrpcStream`]. Each mistake is a usage error naming the flag, the field and the fix.

use crate::bounded::{self, Bounded};
use crate::output::Failure;
use anyhow::anyhow;
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor};
use shootout_engine::grpc::{self, expect::Fields};
use shootout_model::messages::MessageList;
use shootout_model::{
    GrpcReply, GrpcStream, RequestSpec, GRPC_MAX_MESSAGE, GRPC_STREAM_MAX_BYTES,
    GRPC_STREAM_MAX_MESSAGES,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The most bytes of a protoset or a JSON message file read (as a body's limit).
const MAX_FILE: u64 = shootout_model::spec::MAX_BODY as u64;

/// `grpc://` and `grpcs://` URLs as the `http://` and `https://` URLs the call goes to
/// (HTTP/2 with prior knowledge, or TLS with ALPN h2); `None` for any other URL.
pub(super) fn http_url(url: &str) -> Option<String> {
    shootout_model::target::grpc_as_http(url)
}

/// What the user calls each setting of a call, for its errors: `load`'s flags, or a
/// plan workload's keys.
pub(crate) struct Names {
    /// The `.proto` file's.
    pub proto: &'static str,
    /// The protoset's.
    pub protoset: &'static str,
    /// The message's.
    pub message: &'static str,
    /// The list of messages'.
    pub messages: &'static str,
    /// The expected fields'.
    pub expect_json: &'static str,
    /// What names the method: the URL, or the plan's `method`.
    pub method: &'static str,
    /// Where a `.proto`'s imports are looked for.
    pub imports: &'static str,
    /// How the schema is given.
    pub schema: &'static str,
    /// A streaming call's bounds: its messages, its duration, its interval.
    pub stream: [&'static str; 3],
    /// The call's deadline.
    pub deadline: &'static str,
    /// The echo check.
    pub echo: &'static str,
}

/// `load`'s flags.
pub(crate) const FLAGS: Names = Names {
    proto: "--proto",
    protoset: "--protoset",
    message: "--message",
    messages: "--messages",
    expect_json: "--expect-json",
    method: "the URL's path",
    imports: "beside it and in each --import-path DIR",
    schema: "give --proto FILE (with --import-path DIR for its imports) or --protoset FILE",
    stream: [
        "--grpc-stream-messages",
        "--grpc-stream-duration",
        "--grpc-stream-interval",
    ],
    deadline: "-s",
    echo: "--expect-echo",
};

/// A plan workload's keys.
pub(crate) const PLAN_KEYS: Names = Names {
    proto: "proto",
    protoset: "protoset",
    message: "message",
    messages: "messages",
    expect_json: "expect.json",
    method: "method",
    imports: "beside it",
    schema: "give proto = \"FILE.proto\" or protoset = \"FILE\"",
    stream: ["stream.messages", "stream.duration", "stream.interval"],
    deadline: "timeout",
    echo: "expect.echo",
};

/// The gRPC flags as typed (or a plan workload's keys).
pub(crate) struct Flags<'a> {
    /// What they are called.
    pub names: &'a Names,
    /// `--proto`.
    pub proto: Option<&'a Path>,
    /// `--import-path`.
    pub import_path: &'a [PathBuf],
    /// `--protoset`.
    pub protoset: Option<&'a Path>,
    /// `--message`.
    pub message: Option<&'a str>,
    /// `-p`: the message's file.
    pub file: Option<&'a Path>,
    /// `--messages`: the list of messages, read.
    pub messages: Option<&'a MessageList>,
    /// `--max-message`.
    pub max_message: Option<usize>,
    /// `--expect-json`.
    pub expect_json: Option<&'a str>,
    /// The streaming flags (a plan workload's `stream` keys).
    pub stream: StreamFlags,
    /// The server to ask for the schema by reflection when neither `proto` nor
    /// `protoset` is given; `None` where it cannot be asked (not running yet).
    pub server: Option<Server<'a>>,
    /// `--grpc-compress gzip`.
    pub compress: bool,
}

/// A server whose reflection service gives the schema.
pub(crate) struct Server<'a> {
    /// Where it answers (its path unused).
    pub target: &'a shootout_model::Target,
    /// The call's metadata, sent with each question too (`-H`).
    pub headers: &'a [(String, String)],
    /// `--connect-timeout`.
    pub connect_timeout: Duration,
}

/// `load`'s flags that bear on a streaming method (a plan workload's keys).
pub(crate) struct StreamFlags {
    /// `--grpc-stream-messages`.
    pub messages: Option<u32>,
    /// `--grpc-stream-duration`.
    pub duration: Option<Duration>,
    /// `--grpc-stream-interval`.
    pub interval: Option<Duration>,
    /// `-s`: the call's deadline.
    pub deadline: Duration,
    /// `--expect-echo`.
    pub echo: bool,
}

/// A resolved call: the request to send and the reply to expect.
pub(crate) struct Call {
    /// POST of the framed message to the method's path, with gRPC's headers and `-H`'s.
    pub request: RequestSpec,
    /// What a good reply is.
    pub reply: GrpcReply,
}

/// The call of a `grpc://` URL whose path is `path`, with `headers` (`-H`, `-A`, …) and
/// the deadline `timeout` (`-s`).
pub(crate) fn call(
    a: &Flags,
    path: &str,
    headers: Vec<(String, String)>,
    timeout: Duration,
) -> Result<Call, Failure> {
    let (pool, schema) = schema(a, path)?;
    let method = method(&pool, path, a.names)?;
    let stream = streaming(&method, a)?;
    let max_message = a.max_message.unwrap_or(GRPC_MAX_MESSAGE);
    if max_message == 0 {
        return Err(usage("--max-message 0: a reply needs room for its message: give a size in bytes, e.g. 4194304 (4 MiB, the default)".into()));
    }
    let output = method.output();
    if let Some(json) = a.expect_json {
        Fields::new(&output, json).map_err(|e| {
            usage(format!(
                "{}: not fields of a {} in JSON: {e}: name the fields the reply must hold, in protobuf's JSON mapping: {}",
                a.names.expect_json,
                output.full_name(),
                fields(&output)
            ))
        })?;
    }
    // A list's messages are encoded as each call is sent (the engine's); each line is
    // checked here.
    let body = match a.messages {
        Some(list) => {
            check_list(list, &method.input(), a.names)?;
            Vec::new()
        }
        None => client_stream(
            &framed(&message(a, &method.input())?, a.compress),
            &method,
            stream,
            a.names,
        )?,
    };
    let mut fields = vec![
        ("content-type".to_string(), "application/grpc".to_string()),
        ("te".to_string(), "trailers".to_string()),
        ("grpc-timeout".to_string(), grpc_timeout(timeout)),
    ];
    if a.compress {
        for name in ["grpc-encoding", "grpc-accept-encoding"] {
            fields.push((name.to_string(), grpc::gzip::GZIP.to_string()));
        }
    }
    fields.extend(headers);
    Ok(Call {
        request: RequestSpec {
            method: "POST".into(),
            headers: fields,
            body,
            keepalive: true,
        },
        reply: GrpcReply {
            schema,
            method: method.full_name().to_string(),
            max_message,
            json: a.expect_json.map(str::to_string),
            stream,
            compress: a.compress,
        },
    })
}

/// A streaming method's limits from the flags, each checked against the method's shape;
/// a unary method takes none.
fn streaming(m: &MethodDescriptor, a: &Flags) -> Result<GrpcStream, Failure> {
    let name = format!("{}/{}", m.parent_service().full_name(), m.name());
    let (client, server) = (m.is_client_streaming(), m.is_server_streaming());
    let (f, n) = (&a.stream, a.names);
    let [messages, duration, interval] = n.stream;
    let given = [
        (messages, f.messages.is_some()),
        (duration, f.duration.is_some()),
        (interval, f.interval.is_some()),
    ];
    if !client && !server {
        refuse_first(&given, |flag| {
            format!("{flag}: {name} is unary (one message, one reply): drop {flag}, or choose a streaming method")
        })?;
        return Ok(GrpcStream::default());
    }
    if !(client && server) && f.interval.is_some() {
        return Err(usage(format!(
            "{interval}: {name} is not bidirectional: its messages are not sent on a schedule: drop {interval}"
        )));
    }
    if f.messages == Some(0) {
        return Err(usage(format!(
            "{messages} 0: a stream needs at least one message: give 1 or more"
        )));
    }
    if client && !server {
        return client_limits(&name, f, n);
    }
    if client && server && f.echo && a.messages.is_some() {
        return Err(usage(format!(
            "{}: {name}'s replies are checked against the one {}, not a list's: drop {} ({} checks each reply) or give {}",
            n.echo, n.message, n.echo, n.expect_json, n.message
        )));
    }
    if let Some(d) = f.duration.filter(|d| *d >= f.deadline) {
        return Err(usage(format!(
            "{duration} {d:?}: not below {} {:?}, the call's deadline, which would end it first as a timeout: raise {} above it (e.g. {} {}s)",
            n.deadline,
            f.deadline,
            n.deadline,
            n.deadline,
            d.as_secs() + 1
        )));
    }
    Ok(GrpcStream {
        messages: f.messages,
        duration: f.duration,
        interval: f.interval,
    })
}

/// A client stream's limits: its messages within [`GRPC_STREAM_MAX_MESSAGES`], no
/// duration, no echo (`n`: what the user calls them).
fn client_limits(name: &str, f: &StreamFlags, n: &Names) -> Result<GrpcStream, Failure> {
    let [messages, duration, _] = n.stream;
    if f.duration.is_some() {
        return Err(usage(format!(
            "{duration}: {name} is client-streaming (a stream of messages, one reply): its calls end when their messages are sent: drop it, and give {messages} N"
        )));
    }
    if let Some(k) = f.messages.filter(|&k| k > GRPC_STREAM_MAX_MESSAGES) {
        return Err(usage(format!(
            "{messages} {k}: a client stream sends at most {GRPC_STREAM_MAX_MESSAGES} messages a call: give {GRPC_STREAM_MAX_MESSAGES} or fewer"
        )));
    }
    if f.echo {
        return Err(usage(format!(
            "{}: {name}'s one reply answers a stream of messages, not one: drop {} ({} checks the reply)",
            n.echo, n.echo, n.expect_json
        )));
    }
    Ok(GrpcStream {
        messages: f.messages,
        duration: None,
        interval: None,
    })
}

/// The body of a call: the one message (`framed`), or a client stream's N of it, within
/// [`GRPC_STREAM_MAX_BYTES`].
fn client_stream(
    framed: &[u8],
    m: &MethodDescriptor,
    s: GrpcStream,
    names: &Names,
) -> Result<Vec<u8>, Failure> {
    // A bidirectional call sends its message again and again, as each falls due.
    if !m.is_client_streaming() || m.is_server_streaming() {
        return Ok(framed.to_vec());
    }
    let n = s.messages.unwrap_or(1);
    let total = framed.len().saturating_mul(n as usize);
    if total > GRPC_STREAM_MAX_BYTES {
        return Err(usage(format!(
            "{} {n}: {n} messages of {} bytes are {total} bytes, past the {GRPC_STREAM_MAX_BYTES} bytes (64 MiB) a client stream sends a call: give {} or fewer",
            names.stream[0],
            framed.len(),
            GRPC_STREAM_MAX_BYTES / framed.len().max(1)
        )));
    }
    Ok(framed.repeat(n as usize))
}

/// `msg` behind gRPC's prefix, compressed with gzip when `compress`.
fn framed(msg: &[u8], compress: bool) -> Vec<u8> {
    if !compress {
        return grpc::frame(msg);
    }
    let mut out = Vec::new();
    grpc::gzip::framed(msg, &mut out);
    out
}

/// `--grpc-compress`'s encoding: gzip, the one gRPC's clients all speak, or none.
pub(crate) fn compression(value: Option<&str>) -> Result<bool, Failure> {
    match value {
        None => Ok(false),
        Some(v) if v.eq_ignore_ascii_case(grpc::gzip::GZIP) => Ok(true),
        Some(v) => Err(usage(format!(
            "--grpc-compress {v:?}: shootout compresses gRPC messages with gzip only: give --grpc-compress gzip, or drop it to send them uncompressed"
        ))),
    }
}

/// The first of the flags `given` (name, given or not) refused with `why`'s line.
pub(super) fn refuse_first(
    given: &[(&str, bool)],
    why: impl Fn(&str) -> String,
) -> Result<(), Failure> {
    match given.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(usage(why(flag))),
        None => Ok(()),
    }
}

/// The schema: `--proto` compiled with its import paths, `--protoset` read, or the
/// server's reflection asked for the service of `path`; and its descriptors encoded for
/// the engine.
fn schema(a: &Flags, path: &str) -> Result<(DescriptorPool, Arc<[u8]>), Failure> {
    if let Some(file) = a.proto {
        let pool = compile(file, a.import_path, a.names)?;
        let bytes = pool.encode_to_vec();
        return Ok((pool, bytes.into()));
    }
    let Some(file) = a.protoset else {
        return match &a.server {
            Some(server) => reflect(server, path, a.names),
            None => Err(usage(format!(
                "a gRPC call needs its schema: {}",
                a.names.schema
            ))),
        };
    };
    let bytes = read(file, a.names.protoset)?;
    let pool = grpc::decode_pool(&bytes).map_err(|e| {
        usage(format!(
            "{} {}: not a FileDescriptorSet ({e}): write one with protoc --include_imports --descriptor_set_out=FILE, or give the .proto with {}",
            a.names.protoset,
            file.display(),
            a.names.proto
        ))
    })?;
    Ok((pool, bytes.into()))
}

/// The schema of the service `path` names, asked of the server's reflection
/// ([`shootout_engine::reflection`]); each failure says how to give the schema instead.
fn reflect(
    server: &Server,
    path: &str,
    names: &Names,
) -> Result<(DescriptorPool, Arc<[u8]>), Failure> {
    use shootout_engine::reflection::{fetch, Ask, Limits};
    let Some(service) = path
        .strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .map(|(s, _)| s)
        .filter(|s| !s.is_empty())
    else {
        return Err(usage(format!(
            "{} {path:?} names no method: write grpc://HOST:PORT/package.Service/Method",
            names.method
        )));
    };
    let ask = Ask::Service(service.to_string());
    let found = fetch(
        server.target,
        server.headers,
        server.connect_timeout,
        &ask,
        Limits::default(),
    )
    .map_err(|e| {
        Failure::run(anyhow!(
            "no schema for {service}: without {} or {}, shootout asks the server's reflection, and {e}: {}",
            names.proto,
            names.protoset,
            names.schema
        ))
    })?;
    let pool = grpc::decode_pool(&found.set)
        .map_err(|e| Failure::run(anyhow!("the schema from the server's reflection: {e}")))?;
    Ok((pool, found.set.into()))
}

/// Compiles `file`, its imports found in its own directory and then in `imports`.
fn compile(file: &Path, imports: &[PathBuf], names: &Names) -> Result<DescriptorPool, Failure> {
    if !file.is_file() {
        return Err(usage(format!(
            "{} {}: no such file (check the path)",
            names.proto,
            file.display()
        )));
    }
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut includes = vec![dir.to_path_buf()];
    includes.extend(imports.iter().cloned());
    let name = file.file_name().map(Path::new).unwrap_or(file);
    let failed = |e: protox::Error| {
        usage(format!(
            "{} {}: {e} (imports are looked for {})",
            names.proto,
            file.display(),
            names.imports
        ))
    };
    let mut compiler = protox::Compiler::new(&includes).map_err(failed)?;
    compiler
        .include_imports(true)
        .include_source_info(false)
        .open_file(name)
        .map_err(failed)?;
    Ok(compiler.descriptor_pool())
}

/// The method the URL's path names (`/package.Service/Method`), found in the schema.
fn method(pool: &DescriptorPool, path: &str, names: &Names) -> Result<MethodDescriptor, Failure> {
    let services = || {
        let names: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        if names.is_empty() {
            "it has none".to_string()
        } else {
            format!("it has {}", names.join(", "))
        }
    };
    let Some((service, name)) = path
        .strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .filter(|(s, m)| !s.is_empty() && !m.is_empty() && !m.contains('/'))
    else {
        return Err(usage(format!(
            "{} {path:?} names no method: write grpc://HOST:PORT/package.Service/Method (the schema's services: {})",
            names.method,
            services()
        )));
    };
    let Some(svc) = pool.get_service_by_name(service) else {
        return Err(usage(format!(
            "the schema has no service {service:?} ({}): check {}'s package.Service",
            services(),
            names.method
        )));
    };
    let Some(m) = svc.methods().find(|m| m.name() == name) else {
        let methods: Vec<String> = svc.methods().map(|m| m.name().to_string()).collect();
        return Err(usage(format!(
            "{service} has no method {name:?} (it has {}): check {}'s /Method",
            methods.join(", "),
            names.method
        )));
    };
    Ok(m)
}

/// The request message: `--message JSON`, or `-p FILE` holding it, encoded as `input`.
fn message(a: &Flags, input: &MessageDescriptor) -> Result<Vec<u8>, Failure> {
    let (flag, json) = match (a.message, a.file) {
        (Some(m), _) => (a.names.message.to_string(), m.to_string()),
        (None, Some(f)) => {
            let bytes = read(f, "-p")?;
            let text = String::from_utf8(bytes).map_err(|_| {
                usage(format!(
                    "-p {}: not UTF-8 text: a gRPC call's -p FILE holds its message as JSON",
                    f.display()
                ))
            })?;
            (format!("-p {}", f.display()), text)
        }
        (None, None) => (a.names.message.to_string(), "{}".to_string()),
    };
    grpc::encode(input, json.as_bytes()).map_err(|e| {
        usage(format!(
            "{flag}: not a {} in JSON: {e}: write the message in protobuf's JSON mapping with its fields: {}",
            input.full_name(),
            fields(input)
        ))
    })
}

/// Checks each message of `list` as `input` in JSON (a templated value at both ends of
/// its range: a `{seq}` or `{rand:LO-HI}` is a number, written bare or in a string).
fn check_list(list: &MessageList, input: &MessageDescriptor, names: &Names) -> Result<(), Failure> {
    grpc::Messages::new(input, list).map(drop).map_err(|e| {
        usage(format!(
            "{} {}: {e}: write one {} a line in protobuf's JSON mapping with its fields: {}",
            names.messages,
            list.source,
            input.full_name(),
            fields(input)
        ))
    })
}

/// A message type's fields, each with its type: `name (string), id (int32)`.
fn fields(m: &MessageDescriptor) -> String {
    let all: Vec<String> = m
        .fields()
        .map(|f| {
            let list = if f.is_list() { "repeated " } else { "" };
            format!("{} ({list}{:?})", f.json_name(), f.kind())
        })
        .collect();
    if all.is_empty() {
        "none ({})".to_string()
    } else {
        all.join(", ")
    }
}

/// `-s` as gRPC's `grpc-timeout` (at most 8 digits and a unit): milliseconds, or seconds
/// when that is too many digits.
pub(crate) fn grpc_timeout(t: Duration) -> String {
    let ms = t.as_millis().max(1);
    if ms <= 99_999_999 {
        format!("{ms}m")
    } else {
        format!("{}S", t.as_secs().min(99_999_999))
    }
}

/// A file of at most [`MAX_FILE`] bytes, for `flag`.
fn read(file: &Path, flag: &str) -> Result<Vec<u8>, Failure> {
    match bounded::read_file(file, MAX_FILE) {
        Ok(Bounded::Read(b)) => Ok(b),
        Ok(Bounded::TooLarge) => Err(usage(format!(
            "{flag} {}: larger than {MAX_FILE} bytes",
            file.display()
        ))),
        Err(e) => Err(usage(format!(
            "{flag} {}: cannot read it: {e} (check the path)",
            file.display()
        ))),
    }
}

fn usage(line: String) -> Failure {
    Failure::usage(anyhow!(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_urls_become_http2_urls() {
        assert_eq!(
            http_url("grpc://127.0.0.1:50051/a.B/C").as_deref(),
            Some("http://127.0.0.1:50051/a.B/C")
        );
        assert_eq!(
            http_url("GRPCS://h:1/a.B/C").as_deref(),
            Some("https://h:1/a.B/C")
        );
        assert_eq!(http_url("http://h/"), None);
        assert_eq!(http_url("h:1/a"), None);
    }

    #[test]
    fn timeouts_fit_grpc_s_eight_digits() {
        assert_eq!(grpc_timeout(Duration::from_secs(30)), "30000m");
        assert_eq!(grpc_timeout(Duration::from_micros(10)), "1m");
        assert_eq!(grpc_timeout(Duration::from_secs(200_000)), "200000S");
    }
}
