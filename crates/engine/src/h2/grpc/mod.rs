//! gRPC over the engine's HTTP/2 ([`crate::h2`]): a unary call is an HTTP/2 request
//! (POST to `/package.Service/Method`, `content-type: application/grpc`, `te: trailers`, its
//! body the message behind gRPC's 5-byte prefix) prepared once like any other, and its
//! answer is checked here as gRPC's (grpc/grpc's `doc/PROTOCOL-HTTP2.md`): the stream's
//! [`Call`] reads the reply's messages as they arrive ([`frames`]), checks each against
//! the method's output type ([`wire`]) and, when the stream ends, gives the one verdict
//! ([`Call::verdict`]) from the HTTP status, the content type, the framing, the decoding
//! and `grpc-status` (in the trailers, or the headers of a trailers-only answer).
//!
//! Seams: [`Reply`] is made once per run from the spec's [`GrpcReply`] (the schema's
//! descriptors decoded, the method's output type found); the HTTP/2 connection keeps one
//! [`Call`] per stream slot and feeds it the fields and the DATA of its answer. Nothing
//! here does I/O or allocates per call once a slot's buffer has grown.

pub mod expect;
pub mod frames;
pub mod gzip;
pub mod wire;

use crate::template::{self, Gen};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use shootout_model::messages::MessageList;
use shootout_model::requests::{Order, Template};
use shootout_model::{FailureKind, GrpcReply};

pub use frames::Frames;

/// Why a run's gRPC reply cannot be checked (the spec's schema does not hold its method).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SchemaError {
    /// The descriptors do not decode.
    #[error("the gRPC schema does not decode as a FileDescriptorSet: {0}")]
    Descriptors(String),
    /// No such method in them.
    #[error("the gRPC schema has no method {0}: name it as package.Service/Method")]
    Method(String),
    /// `--expect-json` does not fit the method's output type.
    #[error("--expect-json: {0}")]
    Expect(String),
    /// A list's message does not fit the method's input type.
    #[error("--messages: {0}")]
    Messages(MessageError),
}

/// What a good reply of the run's method is, prepared once.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The method's input type.
    pub input: MessageDescriptor,
    /// The method's output type.
    pub output: MessageDescriptor,
    /// The most bytes one reply message may have (its prefix excluded).
    pub max_message: usize,
    /// What its message must hold besides (`--expect-json`, `--expect-echo`).
    pub expect: expect::Expect,
    /// The method answers with a stream of replies (each a unit of the run).
    pub server_streaming: bool,
    /// The method reads a stream of messages (its calls send several).
    pub client_streaming: bool,
    /// A streaming call's limits.
    pub stream: shootout_model::GrpcStream,
    /// The call asked for gzip (`--grpc-compress gzip`): replies compressed with it are
    /// read.
    pub compress: bool,
}

impl Reply {
    /// The most replies a call reads before it is cancelled (`u32::MAX`: no limit; a
    /// bidirectional call reads every reply, those past its messages counted).
    pub fn cap(&self) -> u32 {
        match (self.server_only(), self.stream.messages) {
            (true, Some(n)) => n,
            _ => u32::MAX,
        }
    }

    /// The method streams both ways: messages on the call's schedule, each answered in
    /// order by a reply.
    pub fn bidi(&self) -> bool {
        self.client_streaming && self.server_streaming
    }

    /// The method streams replies to one request.
    pub fn server_only(&self) -> bool {
        self.server_streaming && !self.client_streaming
    }

    /// The method's shape, as the report names it; `None` for a unary method.
    pub fn shape(&self) -> Option<&'static str> {
        match (self.client_streaming, self.server_streaming) {
            (false, false) => None,
            (false, true) => Some("server"),
            (true, false) => Some("client"),
            (true, true) => Some("bidi"),
        }
    }
}

impl Reply {
    /// The reply of `g`'s method, its schema decoded; `echo`: it must be the request.
    pub fn new(g: &GrpcReply, echo: bool) -> Result<Reply, SchemaError> {
        let pool = decode_pool(&g.schema).map_err(SchemaError::Descriptors)?;
        let (service, method) = g
            .method
            .rsplit_once('.')
            .ok_or_else(|| SchemaError::Method(g.method.clone()))?;
        let method = pool
            .get_service_by_name(service)
            .and_then(|s| s.methods().find(|m| m.name() == method))
            .ok_or_else(|| SchemaError::Method(g.method.clone()))?;
        let output = method.output();
        let json = g
            .json
            .as_deref()
            .map(|j| expect::Fields::new(&output, j))
            .transpose()
            .map_err(SchemaError::Expect)?;
        Ok(Reply {
            input: method.input(),
            output,
            max_message: g.max_message,
            expect: expect::Expect { json, echo },
            server_streaming: method.is_server_streaming(),
            client_streaming: method.is_client_streaming(),
            stream: g.stream,
            compress: g.compress,
        })
    }
}

/// Decodes an encoded `FileDescriptorSet` (a protoset, a reflection's files: bytes from a
/// file or a server) as prost-reflect's `DescriptorPool::decode` does, with its panic
/// caught: on some malformed sets it panics (an index out of range while it words the
/// error of an invalid file, prost-reflect 0.16.5; found by the `grpc_reflection` fuzz
/// target) where it should refuse them. The panic is an error here, its message kept off
/// stderr (the panic hook is set aside while it decodes).
pub fn decode_pool(bytes: &[u8]) -> Result<DescriptorPool, String> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let decoded = std::panic::catch_unwind(|| DescriptorPool::decode(bytes));
    std::panic::set_hook(hook);
    match decoded {
        Ok(Ok(pool)) => Ok(pool),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("a file descriptor that prost-reflect cannot read (it failed on it)".into()),
    }
}

/// The message `json` (protobuf's JSON mapping, the whole of it) encoded as a message of
/// type `input`; the error is the JSON's or the type's complaint.
pub fn encode(input: &MessageDescriptor, json: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    encode_framed(input, json, &mut out)?;
    out.drain(..5);
    Ok(out)
}

/// Appends the message `json` encoded as `input` behind gRPC's 5-byte prefix (not
/// compressed) to `out`.
pub fn encode_framed(
    input: &MessageDescriptor,
    json: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    use prost::Message as _;
    let mut de = serde_json::Deserializer::from_slice(json);
    let msg = DynamicMessage::deserialize(input.clone(), &mut de)
        .and_then(|m| de.end().map(|()| m))
        .map_err(|e| e.to_string())?;
    let len = msg.encoded_len();
    out.reserve(5 + len);
    out.push(0);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    msg.encode(out).map_err(|e| e.to_string())
}

/// A list's messages (`--messages`), prepared for the method's input type: a line that
/// draws no value is encoded once, here; a line with `{seq}` or `{rand:LO-HI}` is
/// rendered and encoded for each call ([`Messages::render`]), which costs a JSON parse
/// and an encoding per call.
#[derive(Debug, Clone)]
pub struct Messages {
    input: MessageDescriptor,
    each: Vec<Entry>,
    /// Each message compressed with gzip (`--grpc-compress gzip`).
    gzip: bool,
    /// Picked at random (else in turn)…
    pub random: bool,
    /// …seeded by this (and `{rand:…}` values too).
    pub seed: u64,
}

/// One message of a list.
#[derive(Debug, Clone)]
struct Entry {
    /// Its template, when it draws values.
    template: Option<Template>,
    /// The message behind its prefix; for a template, with its lowest values (sent should
    /// a draw not encode: only a `{seq}` past its field's range, after 2³¹ calls for an
    /// int32, could).
    framed: Vec<u8>,
}

/// A list's message that does not encode as the method's input type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message {line}: {why}")]
pub struct MessageError {
    /// Its number in the list (1-based, comments and blank lines not counted).
    pub line: usize,
    /// The JSON's or the type's complaint.
    pub why: String,
}

impl Messages {
    /// The messages of `list` as `input`, each checked: a template with its values at
    /// both ends of their ranges.
    pub fn new(input: &MessageDescriptor, list: &MessageList) -> Result<Messages, MessageError> {
        let mut each = Vec::with_capacity(list.templates.len());
        let mut text = Vec::new();
        for (i, t) in list.templates.iter().enumerate() {
            let err = |why| MessageError { line: i + 1, why };
            let mut framed = Vec::new();
            text.clear();
            template::fill_bound(t, false, &mut text);
            encode_framed(input, &text, &mut framed).map_err(err)?;
            if t.is_templated() {
                text.clear();
                template::fill_bound(t, true, &mut text);
                encode_framed(input, &text, &mut Vec::new()).map_err(err)?;
            }
            each.push(Entry {
                template: t.is_templated().then(|| t.clone()),
                framed,
            });
        }
        Ok(Messages {
            input: input.clone(),
            gzip: false,
            each,
            random: list.order == Order::Random,
            seed: list.seed,
        })
    }

    /// The same list with each message compressed with gzip when `gzip` (those that draw
    /// no value compressed once, here; the others as each call renders them).
    pub fn compressed(mut self, on: bool) -> Messages {
        self.gzip = on;
        if on {
            for e in &mut self.each {
                let plain = std::mem::take(&mut e.framed);
                gzip::framed(plain.get(5..).unwrap_or_default(), &mut e.framed);
            }
        }
        self
    }

    /// How many messages the list holds.
    pub fn len(&self) -> usize {
        self.each.len()
    }

    /// Whether it holds none (never, once made: a list has at least one).
    pub fn is_empty(&self) -> bool {
        self.each.is_empty()
    }

    /// Writes the next message, its values drawn from `gen`, behind its prefix into `out`
    /// (`json`: a buffer for its text).
    pub fn render(&self, gen: &mut Gen, json: &mut Vec<u8>, out: &mut Vec<u8>) {
        out.clear();
        self.append(gen, json, out);
    }

    /// Writes the next `n` messages, one after the other, into `out` (a client stream's),
    /// stopping before one that would take `out` past `max` bytes (at least one written).
    pub fn render_n(
        &self,
        n: u32,
        max: usize,
        gen: &mut Gen,
        json: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) {
        out.clear();
        for _ in 0..n.max(1) {
            let at = out.len();
            self.append(gen, json, out);
            if out.len() > max && at > 0 {
                out.truncate(at);
                return;
            }
        }
    }

    /// Appends the next message behind its prefix to `out`.
    fn append(&self, gen: &mut Gen, json: &mut Vec<u8>, out: &mut Vec<u8>) {
        let e = &self.each[gen.pick()];
        let Some(t) = &e.template else {
            return out.extend_from_slice(&e.framed);
        };
        json.clear();
        template::fill(t, gen, json);
        let at = out.len();
        if encode_framed(&self.input, json, out).is_err() {
            out.truncate(at);
            out.extend_from_slice(&e.framed);
        } else if self.gzip {
            let plain = out.split_off(at + 5);
            out.truncate(at);
            gzip::framed(&plain, out);
        }
    }
}

/// `msg` behind gRPC's 5-byte prefix (not compressed).
pub fn frame(msg: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(5 + msg.len());
    body.push(0);
    body.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    body.extend_from_slice(msg);
    body
}

/// A `grpc-status` field as read: a code, or a value that is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A decimal code (0: OK).
    Code(u32),
    /// Not a decimal number (or past `u32`).
    Unreadable,
}

impl Status {
    /// Reads a `grpc-status` value: ASCII digits, at most 10 of them.
    pub fn parse(v: &[u8]) -> Status {
        if v.is_empty() || v.len() > 10 || !v.iter().all(u8::is_ascii_digit) {
            return Status::Unreadable;
        }
        v.iter()
            .try_fold(0u32, |n, &d| {
                n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
            })
            .map_or(Status::Unreadable, Status::Code)
    }
}

/// Whether a `content-type` is gRPC's: `application/grpc`, alone or followed by `+` (a
/// format: `+proto`) or `;` (parameters).
pub fn is_grpc_type(v: &[u8]) -> bool {
    let Some(rest) = v.strip_prefix(b"application/grpc") else {
        return false;
    };
    matches!(rest.first(), None | Some(b'+' | b';'))
}

/// One call's answer as it arrives on its stream.
#[derive(Debug, Default)]
pub struct Call {
    /// The final head's `content-type` is gRPC's.
    typed: bool,
    /// `grpc-status` in the final head.
    head: Option<Status>,
    /// The final head ended the stream (a trailers-only answer).
    trailers_only: bool,
    /// Trailers arrived.
    trailers: bool,
    /// `grpc-status` in the trailers.
    tail: Option<Status>,
    /// The reply's messages.
    pub frames: Frames,
    /// When its last reply was read (server streaming).
    pub last: Option<std::time::Instant>,
    /// Bidi: the messages sent (queued on the stream), in order.
    pub sent: u32,
    /// Bidi: the replies read past the messages sent (matched to none).
    pub unmatched: u32,
    /// Bidi: the due time of the last message sent.
    pub due: Option<std::time::Instant>,
}

impl Call {
    /// A new call in the slot (the buffer's capacity kept).
    pub fn begin(&mut self) {
        self.typed = false;
        self.head = None;
        self.trailers_only = false;
        self.trailers = false;
        self.tail = None;
        self.last = None;
        self.sent = 0;
        self.unmatched = 0;
        self.due = None;
        self.frames.begin();
    }

    /// Bidi: the replies read since `before` whole messages were, matched in order to the
    /// messages sent: the first matched reply's index and how many of those were good
    /// (as expected); those past the messages sent are counted unmatched.
    pub fn matched_since(&mut self, before: u32, good_before: u32) -> (u32, u32) {
        let read = self.frames.messages();
        let matched_end = read.min(self.sent).max(before);
        self.unmatched = self.unmatched.saturating_add(read - matched_end);
        let good = self.frames.good() - good_before;
        (before, good.min(matched_end - before))
    }

    /// Bidi: the messages sent that no reply matched (yet).
    pub fn unanswered(&self) -> u32 {
        self.sent.saturating_sub(self.frames.messages())
    }

    /// Bidi: after the stream's own [`Call::verdict`] found nothing, a reply past the
    /// messages sent, or a message left unanswered, fails the call.
    pub fn bidi_verdict(&self) -> Option<FailureKind> {
        if self.unmatched > 0 {
            Some(FailureKind::GrpcUnmatched)
        } else if self.unanswered() > 0 {
            Some(FailureKind::GrpcUnanswered)
        } else {
            None
        }
    }

    /// The final head's fields that gRPC reads: its `content-type`, its `grpc-status`,
    /// whether it ended the stream, and whether its messages may come compressed with
    /// gzip (the call asked for it and its `grpc-encoding` is `gzip`).
    pub fn head(&mut self, typed: bool, status: Option<Status>, end_stream: bool, gzip: bool) {
        self.frames.agree(gzip);
        self.typed = typed;
        self.head = status;
        self.trailers_only = end_stream;
    }

    /// The trailers' `grpc-status`.
    pub fn trailers(&mut self, status: Option<Status>) {
        self.trailers = true;
        self.tail = status;
    }

    /// The stream ended with HTTP status `http`: `None` when the call succeeded (or its
    /// HTTP status is not 200, which the run's status expectation judges and counts under
    /// its code), else the class it failed under. Checked in this order: the content
    /// type, the messages' framing and decoding, a readable outcome, the outcome, and a
    /// unary call's one message (a server stream's any number), and what they hold
    /// (`--expect-json`, `--expect-echo`).
    pub fn verdict(&mut self, http: u16, streaming: bool) -> Option<FailureKind> {
        if http != 200 {
            return None;
        }
        if !self.typed {
            return Some(FailureKind::Malformed);
        }
        if let Some(fault) = self.frames.end() {
            return Some(fault);
        }
        let status = match (self.trailers_only, self.head, self.trailers, self.tail) {
            (true, Some(s), _, _) => s,
            // Headers and trailers that disagree: which one is the outcome is unknown.
            (false, Some(h), true, Some(t)) if h != t => return Some(FailureKind::GrpcTrailers),
            (false, _, true, Some(t)) => t,
            _ => return Some(FailureKind::GrpcTrailers),
        };
        match status {
            Status::Unreadable => Some(FailureKind::GrpcTrailers),
            Status::Code(0) if !streaming && self.frames.messages() != 1 => {
                Some(FailureKind::GrpcFraming)
            }
            Status::Code(0) if self.frames.unexpected() => Some(FailureKind::Body),
            Status::Code(0) => None,
            Status::Code(c) => Some(FailureKind::grpc_status(c)),
        }
    }
}

#[cfg(test)]
mod tests;
