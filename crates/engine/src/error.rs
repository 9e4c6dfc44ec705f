//! Why a run could not be done: one error type, each message naming the problem and what
//! to do next.

use crate::{h2, request};
use shootout_model::SpecError;

/// Why a run could not be done. Each message names the problem and what to do.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The spec breaks a rule of [`LoadSpec::validate`].
    #[error(transparent)]
    Invalid(#[from] SpecError),
    /// The gRPC schema does not hold the method called.
    #[error(transparent)]
    Grpc(#[from] crate::h2::grpc::SchemaError),
    /// A header cannot be sent.
    #[error(transparent)]
    Header(#[from] request::HeaderError),
    /// The host name did not resolve.
    #[error("cannot resolve '{host}': {source} (check the host name, or use 127.0.0.1)")]
    Resolve {
        /// The host.
        host: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not one address accepted a connection.
    #[error("cannot connect to {target}: {source} (is the server running and listening there?)")]
    Connect {
        /// Address or socket path tried last.
        target: String,
        /// Why.
        source: std::io::Error,
    },
    /// TLS could not be set up.
    #[error("TLS with {target} failed: {reason}")]
    Tls {
        /// The target.
        target: String,
        /// Why, and what to do.
        reason: String,
    },
    /// Too many connections for the open-file limit.
    #[error("{connections} connections need about {needed} open files but the limit is {limit}: raise it (ulimit -n {needed}) or ask for fewer connections (-c, or --max-connections in rate mode)")]
    FdLimit {
        /// Connections asked for.
        connections: usize,
        /// Files needed.
        needed: u64,
        /// The limit in force.
        limit: u64,
    },
    /// `--http2` was asked of a server that does not speak HTTP/2 there.
    #[error("{target} does not speak HTTP/2: {reason}")]
    NotHttp2 {
        /// The address or URL tried.
        target: String,
        /// What it did instead.
        reason: h2::Refusal,
    },
    /// `--http3` was asked of a server that does not speak HTTP/3 there.
    #[error("{target} does not speak HTTP/3: {reason}")]
    NotHttp3 {
        /// The address or URL tried.
        target: String,
        /// What it did instead.
        reason: crate::h3::Refusal,
    },
    /// A worker thread could not be started or failed.
    #[error("worker thread failed: {0}")]
    Worker(std::io::Error),
    /// A local address to connect from cannot be used.
    #[error("cannot connect from the local address {addr}: {source} (give addresses of this machine; any of 127.0.0.0/8 works on loopback)")]
    Bind {
        /// The local address.
        addr: std::net::IpAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The local addresses are of another family than every address of the target.
    #[error("cannot connect from {addr} to {host}: {host} has no {family} address (give local addresses of the target's family)")]
    BindFamily {
        /// The first local address.
        addr: std::net::IpAddr,
        /// The target's host.
        host: String,
        /// `IPv4` or `IPv6`: the local addresses' family.
        family: &'static str,
    },
}
