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

pub mod frames;
pub mod wire;

use prost_reflect::{DescriptorPool, MessageDescriptor};
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
}

/// What a good reply of the run's method is, prepared once.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The method's output type.
    pub output: MessageDescriptor,
    /// The most bytes one reply message may have (its prefix excluded).
    pub max_message: usize,
}

impl Reply {
    /// The reply of `g`'s method, its schema decoded.
    pub fn new(g: &GrpcReply) -> Result<Reply, SchemaError> {
        let pool = DescriptorPool::decode(&*g.schema)
            .map_err(|e| SchemaError::Descriptors(e.to_string()))?;
        let (service, method) = g
            .method
            .rsplit_once('.')
            .ok_or_else(|| SchemaError::Method(g.method.clone()))?;
        let method = pool
            .get_service_by_name(service)
            .and_then(|s| s.methods().find(|m| m.name() == method))
            .ok_or_else(|| SchemaError::Method(g.method.clone()))?;
        Ok(Reply {
            output: method.output(),
            max_message: g.max_message,
        })
    }
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
}

impl Call {
    /// A new call in the slot (the buffer's capacity kept).
    pub fn begin(&mut self) {
        self.typed = false;
        self.head = None;
        self.trailers_only = false;
        self.trailers = false;
        self.tail = None;
        self.frames.begin();
    }

    /// The final head's fields that gRPC reads: its `content-type`, its `grpc-status`, and
    /// whether it ended the stream.
    pub fn head(&mut self, typed: bool, status: Option<Status>, end_stream: bool) {
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
    /// unary call's one message.
    pub fn verdict(&mut self, http: u16) -> Option<FailureKind> {
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
            Status::Code(0) if self.frames.messages() != 1 => Some(FailureKind::GrpcFraming),
            Status::Code(0) => None,
            Status::Code(c) => Some(FailureKind::grpc_status(c)),
        }
    }
}

#[cfg(test)]
mod tests;
