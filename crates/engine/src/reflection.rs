//! gRPC server reflection: a call's schema asked of the server itself, before the run,
//! when neither `--proto` nor `--protoset` gives it. shootout speaks
//! `grpc.reflection.v1.ServerReflection/ServerReflectionInfo` (and `v1alpha`'s, when a
//! server answers v1 with UNIMPLEMENTED), as grpc/grpc's `doc/server-reflection.md`
//! describes it: the file that defines the service, then each file it imports not yet
//! had, until every import is had ([`walk`]).
//!
//! One HTTP/2 connection (TLS with ALPN h2 for `grpcs://`) carries the whole
//! conversation, one stream per question: each question is sent as a unary call's one
//! message and its stream half-closed, which reflection servers answer with one reply
//! and the end of the stream ([`call`]). The connection is the engine's own HTTP/2 state
//! machine ([`crate::h2::conn`]) driven by blocking reads, as the pre-flight drives it,
//! and each answer is checked as a gRPC reply is (framing, `grpc-status`).
//!
//! Bounded: at most [`Limits::files`] files and [`Limits::bytes`] bytes of them, each
//! reply within what is left of that budget, the whole within [`Limits::deadline`].

mod call;
pub mod walk;

use shootout_model::Target;
use std::time::{Duration, Instant};

pub use walk::{Ask, REFLECTION_PACKAGE};

/// How far a conversation may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most files kept.
    pub files: usize,
    /// The most bytes of files kept.
    pub bytes: usize,
    /// The longest the whole conversation may take.
    pub deadline: Duration,
}

impl Default for Limits {
    /// 256 files, 16 MiB of them, 10 seconds: far above what a service's schema needs
    /// (a service on Google's APIs imports a few dozen files of a few KiB).
    fn default() -> Limits {
        Limits {
            files: 256,
            bytes: 16 << 20,
            deadline: Duration::from_secs(10),
        }
    }
}

/// The version of the reflection service that answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `grpc.reflection.v1`.
    V1,
    /// `grpc.reflection.v1alpha`.
    V1Alpha,
}

impl Version {
    /// The path of its one method.
    pub fn path(self) -> &'static str {
        match self {
            Version::V1 => "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            Version::V1Alpha => "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        }
    }

    /// Its package's name.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "grpc.reflection.v1",
            Version::V1Alpha => "grpc.reflection.v1alpha",
        }
    }
}

/// What the server's reflection gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The schema: an encoded `google.protobuf.FileDescriptorSet` of every file had.
    pub set: Vec<u8>,
    /// The services asked for that the schema holds (for [`Ask::All`], the services the
    /// server listed, reflection's own left out).
    pub services: Vec<String>,
    /// The version that answered.
    pub version: Version,
}

/// Why the schema could not be had from the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReflectError {
    /// No connection, or no HTTP/2 over it.
    #[error("{0}")]
    Connect(String),
    /// Neither version is served.
    #[error(
        "the server does not serve gRPC server reflection (grpc.reflection.v1 and v1alpha: {0})"
    )]
    Unsupported(String),
    /// A call of the conversation failed (its gRPC status, a reset, a closed connection).
    #[error("the server's reflection failed: {0}")]
    Failed(String),
    /// The server's reflection answered with an error.
    #[error("the server's reflection could not give {asked}: {message} (error {code})")]
    NotFound {
        /// What was asked.
        asked: String,
        /// Its error code.
        code: i32,
        /// Its message (at most 200 characters).
        message: String,
    },
    /// A reply to another question than the one asked.
    #[error("the server's reflection answered {got} when asked for {asked}")]
    OtherReply {
        /// What was asked.
        asked: String,
        /// What the reply answered.
        got: String,
    },
    /// A reply that is not what the protocol says.
    #[error("the server's reflection sent {0}")]
    Garbled(String),
    /// More files than [`Limits::files`].
    #[error("the server's reflection gave more than {0} files")]
    TooManyFiles(usize),
    /// More bytes of files than [`Limits::bytes`].
    #[error("the server's reflection gave more than {0} bytes of files")]
    TooLarge(usize),
    /// The conversation took longer than [`Limits::deadline`].
    #[error("the server's reflection did not answer within {0:?}")]
    Deadline(Duration),
    /// The files do not make a schema.
    #[error("the files the server's reflection gave do not make a schema: {0}")]
    Descriptors(String),
    /// The files do not define the service asked for.
    #[error("the files the server's reflection gave do not define {0}")]
    Missing(String),
}

/// Asks the server at `target` (its host, port, scheme and TLS settings; its path
/// unused) for the schema `ask` asks for, within `limits`, each question carrying
/// `headers` (the call's metadata: a server may want its credentials); connections are
/// given `connect_timeout`. v1 first; v1alpha when the server does not serve v1.
pub fn fetch(
    target: &Target,
    headers: &[(String, String)],
    connect_timeout: Duration,
    ask: &Ask,
    limits: Limits,
) -> Result<Found, ReflectError> {
    let until = Instant::now() + limits.deadline;
    let mut refused = Vec::new();
    for version in [Version::V1, Version::V1Alpha] {
        let mut walk = walk::Walk::new(ask.clone(), limits);
        match call::converse(target, headers, connect_timeout, version, &mut walk, until)? {
            call::Served::Yes => return walk.finish(version),
            call::Served::No(why) => refused.push(format!("{} {why}", version.name())),
        }
    }
    Err(ReflectError::Unsupported(refused.join("; ")))
}
