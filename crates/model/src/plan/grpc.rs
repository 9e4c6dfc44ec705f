//! A plan's gRPC workloads (`protocol = "grpc"`): a call of `method`
//! (`package.Service/Method`) with the schema from `proto` or `protoset` (relative to the
//! plan's directory) or, without either, from each contender's server reflection once it
//! has started, its messages compressed with gzip or not (`compress`), the request from `message` (JSON) or a list of them (`messages`),
//! a streaming method's bounds (`stream = { messages, duration, interval }`, as `load`'s
//! `--grpc-stream-*` flags), and what a good reply holds (`expect.json`, `expect.echo`). The call is an HTTP/2
//! stream (`streams` as for `h2`); the files are read and the messages checked against
//! the schema by whoever loads the plan's files (the model does no I/O). Each refusal
//! names the workload, the key and the fix, at the key's line.

use super::{FileWorkload, PlanError, Reader};
use std::path::PathBuf;
use toml::Spanned;

/// What a gRPC workload calls, before its files are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcWorkload {
    /// `method`: `package.Service/Method`.
    pub method: String,
    /// `proto`: a `.proto` file (its imports beside it).
    pub proto: Option<PathBuf>,
    /// `protoset`: protoc's `--descriptor_set_out` file.
    pub protoset: Option<PathBuf>,
    /// `message`: the request in protobuf's JSON mapping (none with `messages`; `{}`
    /// without either).
    pub message: Option<String>,
    /// `expect.json`: fields the reply must hold, as JSON.
    pub expect_json: Option<String>,
    /// `stream`: a streaming method's bounds (checked against the method's shape once
    /// its schema is read).
    pub stream: crate::GrpcStream,
    /// `compress = "gzip"`: each message compressed with gzip, replies compressed with it
    /// read (`load`'s `--grpc-compress gzip`).
    pub compress: bool,
}

impl GrpcWorkload {
    /// Neither `proto` nor `protoset`: the schema is asked of each contender's server
    /// reflection once it has started (a plan is read before its contenders start).
    pub fn by_reflection(&self) -> bool {
        self.proto.is_none() && self.protoset.is_none()
    }
}

/// A workload's `stream` table as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileStream {
    messages: Option<u32>,
    duration: Option<String>,
    interval: Option<String>,
}

/// Where a key was given, if it was.
fn span<T>(key: &Option<Spanned<T>>) -> Option<Span> {
    key.as_ref().map(Spanned::span)
}

/// Whether the workload (or `[load]`, `load_protocol`) says `protocol = "grpc"`.
pub(super) fn asked(w: &FileWorkload, load_protocol: Option<&Spanned<String>>) -> bool {
    w.protocol
        .as_ref()
        .or(load_protocol)
        .is_some_and(|p| p.get_ref().eq_ignore_ascii_case("grpc"))
}

impl Reader<'_> {
    /// The gRPC keys of a workload that is not gRPC's are refused.
    pub(super) fn no_grpc_keys(&self, name: &str, w: &FileWorkload) -> Result<(), PlanError> {
        let given = [
            ("proto", w.proto.as_ref().map(Spanned::span)),
            ("protoset", w.protoset.as_ref().map(Spanned::span)),
            ("stream", w.stream.as_ref().map(Spanned::span)),
            ("compress", w.compress.as_ref().map(Spanned::span)),
            (
                "expect.json",
                w.expect
                    .as_ref()
                    .filter(|e| e.get_ref().json.is_some())
                    .map(Spanned::span),
            ),
        ];
        match given.into_iter().find_map(|(k, s)| Some((k, s?))) {
            Some((key, span)) => Err(self.err(
                span.start,
                format!("workload '{name}': {key} is a gRPC call's: add protocol = \"grpc\" (and method = \"package.Service/Method\"), or remove {key}"),
            )),
            None => Ok(()),
        }
    }

    /// A gRPC workload's call: its method, schema and message, the HTTP keys it cannot
    /// take refused.
    pub(super) fn grpc(
        &self,
        name: &str,
        at: usize,
        w: &FileWorkload,
    ) -> Result<GrpcWorkload, PlanError> {
        let err = |span: Option<Span>, why: String| {
            self.err(
                span.map_or(at, |s| s.start),
                format!("workload '{name}': {why}"),
            )
        };
        let method = grpc_method(w, &err)?;
        refuse_http_keys(w, &err)?;
        let (proto, protoset) = grpc_schema(w, &err)?;
        if let (Some(m), Some(_)) = (&w.message, &w.messages) {
            return Err(err(
                Some(m.span()),
                "give message or messages, not both".into(),
            ));
        }
        Ok(GrpcWorkload {
            method,
            proto,
            protoset,
            message: w.message.as_ref().map(|m| m.get_ref().clone()),
            expect_json: expect_json(w, &err)?,
            stream: stream(w, &err)?,
            compress: compress(w, &err)?,
        })
    }
}

/// The workload's `stream` bounds: its durations read (more than 0).
fn stream(w: &FileWorkload, err: &KeyError) -> Result<crate::GrpcStream, PlanError> {
    let Some(st) = &w.stream else {
        return Ok(crate::GrpcStream::default());
    };
    let span = Some(st.span());
    let f = st.get_ref();
    let read = |v: &Option<String>, key: &str| {
        v.as_deref()
            .map(|d| super::duration_of(d, key, false))
            .transpose()
            .map_err(|e| err(span.clone(), e))
    };
    Ok(crate::GrpcStream {
        messages: f.messages,
        duration: read(&f.duration, "stream.duration")?,
        interval: read(&f.interval, "stream.interval")?,
    })
}

/// The workload's `compress`: `"gzip"` (any case), the one encoding shootout speaks.
fn compress(w: &FileWorkload, err: &KeyError) -> Result<bool, PlanError> {
    match &w.compress {
        None => Ok(false),
        Some(c) if c.get_ref().eq_ignore_ascii_case("gzip") => Ok(true),
        Some(c) => Err(err(
            Some(c.span()),
            format!("compress = \"{}\": shootout compresses gRPC messages with gzip only: write compress = \"gzip\", or remove compress to send them uncompressed", c.get_ref()),
        )),
    }
}

/// Where in the plan's text a key was given.
type Span = std::ops::Range<usize>;

/// The error of a workload's key: where it was given (the workload's line if `None`), and
/// why it is refused with the fix.
type KeyError<'a> = dyn Fn(Option<Span>, String) -> PlanError + 'a;

/// The workload's `method`, checked as `package.Service/Method` (a leading `/` dropped).
fn grpc_method(w: &FileWorkload, err: &KeyError) -> Result<String, PlanError> {
    let Some(m) = &w.method else {
        return Err(err(None, "protocol = \"grpc\" calls a method: add method = \"package.Service/Method\", e.g. method = \"helloworld.Greeter/SayHello\"".into()));
    };
    let method = m.get_ref().trim_start_matches('/').to_string();
    let well_formed = method
        .split_once('/')
        .is_some_and(|(s, f)| !s.is_empty() && !f.is_empty() && !f.contains('/'))
        && !method.bytes().any(|b| b <= b' ' || b == 0x7f);
    if !well_formed {
        return Err(err(Some(m.span()), format!("method = \"{}\" names no gRPC method: write it as \"package.Service/Method\", e.g. \"helloworld.Greeter/SayHello\"", m.get_ref())));
    }
    Ok(method)
}

/// Refuses the keys of an HTTP request a gRPC call does not take, each with what to write
/// instead.
fn refuse_http_keys(w: &FileWorkload, err: &KeyError) -> Result<(), PlanError> {
    let http_keys = [
        ("path", span(&w.path), "the path is the method's"),
        (
            "body",
            span(&w.body),
            "the request is message = '{…}' (JSON)",
        ),
        (
            "requests",
            span(&w.requests),
            "a list is messages = \"FILE\"",
        ),
        (
            "journey",
            span(&w.journey),
            "a journey's steps are HTTP requests",
        ),
        ("hold", span(&w.hold), "hold is WebSocket's"),
    ];
    if let Some((key, span, why)) = http_keys.into_iter().find_map(|(k, s, y)| Some((k, s?, y))) {
        return Err(err(
            Some(span),
            format!("{key} does not apply to protocol = \"grpc\" ({why}): remove {key}"),
        ));
    }
    if w.body_file.is_some() {
        return Err(err(None, "body_file does not apply to protocol = \"grpc\" (the request is message = '{…}', JSON): remove body_file".into()));
    }
    if let Some(e) = &w.expect {
        let x = e.get_ref();
        let http = [
            ("status", x.status.is_some()),
            ("body_contains", x.body_contains.is_some()),
            ("length", x.length.is_some()),
        ];
        if let Some((key, _)) = http.into_iter().find(|(_, g)| *g) {
            return Err(err(Some(e.span()), format!("expect.{key} does not apply to protocol = \"grpc\" (a call is answered 200 and judged by its grpc-status): check the reply with expect.json or expect.echo")));
        }
    }
    Ok(())
}

/// The call's schema: `proto` or `protoset`, not both; neither: each contender's server
/// reflection, asked once it has started.
fn grpc_schema(
    w: &FileWorkload,
    err: &KeyError,
) -> Result<(Option<PathBuf>, Option<PathBuf>), PlanError> {
    match (&w.proto, &w.protoset) {
        (Some(p), None) => Ok((Some(PathBuf::from(p.get_ref())), None)),
        (None, Some(p)) => Ok((None, Some(PathBuf::from(p.get_ref())))),
        (Some(_), Some(p)) => Err(err(
            Some(p.span()),
            "give proto or protoset, not both".into(),
        )),
        (None, None) => Ok((None, None)),
    }
}

/// `expect.json` as JSON text: a table converted, a string as written.
fn expect_json(w: &FileWorkload, err: &KeyError) -> Result<Option<String>, PlanError> {
    match w.expect.as_ref().and_then(|e| e.get_ref().json.as_ref()) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(v @ toml::Value::Table(_)) => Ok(Some(serde_json::to_string(v).map_err(|e| {
            err(
                w.expect.as_ref().map(Spanned::span),
                format!("expect.json: {e}"),
            )
        })?)),
        Some(_) => Err(err(w.expect.as_ref().map(Spanned::span), "expect.json is the fields the reply must hold: write a table, expect = { json = { message = \"hello x\" } }, or a JSON string".into())),
    }
}
