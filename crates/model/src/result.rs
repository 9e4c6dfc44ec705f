//! What one load run measured, merged across worker threads: counts per outcome, latency
//! histograms, a per-second series, a reservoir of samples, the generator's own cost and
//! the warnings a reader must know (their types; `shootout_analysis::load_warnings`
//! derives them from the rest).
//!
//! Histograms hold **microseconds**. `latency` is corrected for coordinated omission in rate
//! mode (measured from each request's due time); `latency_raw` is always send → last byte.
//! In closed-loop runs the two are the same.

use crate::histograms::Histograms;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{AddAssign, Index, IndexMut};
use std::time::{Duration, SystemTime};

/// Why a request failed. Counted per class, never as strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The connection could not be established (refused, unreachable, fd/port exhaustion,
    /// connect timeout).
    Connect,
    /// The per-request deadline passed; the connection was closed and replaced.
    Timeout,
    /// The server closed or reset the connection mid-response. Over TLS a close without
    /// `close_notify` ends a close-delimited body this way too: its end is unknown.
    Reset,
    /// Not HTTP, bad framing, or a body length that contradicts the head.
    Malformed,
    /// A status code outside the expected set (default: ≥ 400).
    Status,
    /// The body did not meet the expectation (content or length).
    Body,
    /// HTTP/2: the server reset the stream (RST_STREAM with a code other than
    /// REFUSED_STREAM) before its answer was complete.
    StreamReset,
    /// HTTP/2: the server left the stream unprocessed (RST_STREAM REFUSED_STREAM, or a
    /// GOAWAY) once its deadline had passed or after it had been sent again 4 times.
    Refused,
    /// HTTP/2: the server ended the connection with an error (GOAWAY with an error code)
    /// while the stream was open, or closed it after such a GOAWAY.
    ConnectionError,
    /// WebSocket: the server refused the opening handshake (any status but 101, counted
    /// under its status), or answered 101 without the `Upgrade`, `Connection` and
    /// `Sec-WebSocket-Accept` RFC 6455 §4.1 requires. In a closed loop each refused
    /// connection fails one message.
    Handshake,
    /// WebSocket: the server sent a close frame while the message was waiting for its
    /// reply (its code is counted in [`Counts::close_codes`]). A close with nothing
    /// outstanding, at the end of a run or between messages, is no failure.
    Closed,
    /// WebSocket: the server broke RFC 6455 (a masked frame, reserved bits set, an unknown
    /// opcode, a control frame over 125 bytes or fragmented, a continuation without a
    /// start, a data frame inside a fragmented message, a text reply that is not UTF-8, a
    /// reply over the 16 MiB limit, a bad close code).
    Protocol,
    /// A fault of shootout's own, not the server's: handling the request's connection
    /// panicked (the panic was caught, the connection replaced). Any of these makes the
    /// run exit non-zero with a request for a bug report.
    GeneratorFault,
    /// gRPC: the call ended with status 1, CANCELLED: the call was cancelled (by the server: shootout cancels only at its deadline, counted as a timeout).
    GrpcCancelled,
    /// gRPC: the call ended with status 2, UNKNOWN: an unknown error, or a status code gRPC does not define (17 and up).
    GrpcUnknown,
    /// gRPC: the call ended with status 3, INVALID_ARGUMENT: the server found the request's message invalid.
    GrpcInvalidArgument,
    /// gRPC: the call ended with status 4, DEADLINE_EXCEEDED: the deadline (`grpc-timeout`, from `-s`) passed at the server.
    GrpcDeadlineExceeded,
    /// gRPC: the call ended with status 5, NOT_FOUND: what the call asked for was not found.
    GrpcNotFound,
    /// gRPC: the call ended with status 6, ALREADY_EXISTS: what the call would create exists already.
    GrpcAlreadyExists,
    /// gRPC: the call ended with status 7, PERMISSION_DENIED: the caller may not make the call.
    GrpcPermissionDenied,
    /// gRPC: the call ended with status 8, RESOURCE_EXHAUSTED: a quota or a limit of the server's ran out (a full queue, a rate limit, a message too large for it).
    GrpcResourceExhausted,
    /// gRPC: the call ended with status 9, FAILED_PRECONDITION: the system is not in a state the call needs.
    GrpcFailedPrecondition,
    /// gRPC: the call ended with status 10, ABORTED: the call was aborted (a conflict).
    GrpcAborted,
    /// gRPC: the call ended with status 11, OUT_OF_RANGE: the call asked for something past a valid range.
    GrpcOutOfRange,
    /// gRPC: the call ended with status 12, UNIMPLEMENTED: the server does not implement the method.
    GrpcUnimplemented,
    /// gRPC: the call ended with status 13, INTERNAL: an internal error of the server's.
    GrpcInternal,
    /// gRPC: the call ended with status 14, UNAVAILABLE: the service is unavailable (overloaded, shutting down, a proxy with no backend).
    GrpcUnavailable,
    /// gRPC: the call ended with status 15, DATA_LOSS: data was lost or corrupted.
    GrpcDataLoss,
    /// gRPC: the call ended with status 16, UNAUTHENTICATED: the call carried no valid credentials.
    GrpcUnauthenticated,
    /// gRPC: the reply's messages are not framed as gRPC frames them: a length prefix past
    /// the DATA the stream carried or past `--max-message`, or the compressed flag set
    /// when no `grpc-encoding` was agreed (or set to a value other than 0 and 1).
    GrpcFraming,
    /// gRPC: a reply message does not decode as the method's output type.
    GrpcDecode,
    /// gRPC: the call's outcome cannot be read: the stream ended without `grpc-status`
    /// (trailers missing), its value is not a number, or the headers and the trailers
    /// disagree on it; or the answer's `content-type` is not `application/grpc…`.
    GrpcTrailers,
    /// gRPC bidirectional streaming: a reply came with no message of the call's
    /// outstanding (the server answered more than it was asked); replies are matched to
    /// messages in order.
    GrpcUnmatched,
    /// gRPC bidirectional streaming: the call ended (the server's OK, or its deadline)
    /// with messages it sent unanswered.
    GrpcUnanswered,
}

/// The most distinct RST_STREAM error codes counted one by one in
/// [`Counts::stream_resets`]: RFC 9113 names 14, and a server sending made-up codes must not
/// grow the table.
pub const MAX_RESET_CODES: usize = 32;

/// Where RST_STREAM codes past [`MAX_RESET_CODES`] are counted.
pub const OTHER_RESET_CODES: u32 = u32::MAX;

/// The most distinct WebSocket close codes counted one by one in [`Counts::close_codes`].
pub const MAX_CLOSE_CODES: usize = 32;

/// Where WebSocket close codes past [`MAX_CLOSE_CODES`] are counted (no valid close code:
/// RFC 6455 §7.4 ends them at 4999).
pub const OTHER_CLOSE_CODES: u16 = u16::MAX;

/// An HTTP/2 error code's name (RFC 9113 §7), `None` for a code it does not name.
pub fn h2_error_name(code: u32) -> Option<&'static str> {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    NAMES.get(code as usize).copied()
}

/// An HTTP/3 error code's name (RFC 9114 §8.1, RFC 9204 §6), `None` for a code neither
/// names.
pub fn h3_error_name(code: u32) -> Option<&'static str> {
    const H3: [&str; 17] = [
        "H3_NO_ERROR",
        "H3_GENERAL_PROTOCOL_ERROR",
        "H3_INTERNAL_ERROR",
        "H3_STREAM_CREATION_ERROR",
        "H3_CLOSED_CRITICAL_STREAM",
        "H3_FRAME_UNEXPECTED",
        "H3_FRAME_ERROR",
        "H3_EXCESSIVE_LOAD",
        "H3_ID_ERROR",
        "H3_SETTINGS_ERROR",
        "H3_MISSING_SETTINGS",
        "H3_REQUEST_REJECTED",
        "H3_REQUEST_CANCELLED",
        "H3_REQUEST_INCOMPLETE",
        "H3_MESSAGE_ERROR",
        "H3_CONNECT_ERROR",
        "H3_VERSION_FALLBACK",
    ];
    const QPACK: [&str; 3] = [
        "QPACK_DECOMPRESSION_FAILED",
        "QPACK_ENCODER_STREAM_ERROR",
        "QPACK_DECODER_STREAM_ERROR",
    ];
    match code {
        0x100..=0x110 => H3.get(code as usize - 0x100).copied(),
        0x200..=0x202 => QPACK.get(code as usize - 0x200).copied(),
        _ => None,
    }
}

impl FailureKind {
    /// Every class, in report order.
    pub const ALL: [FailureKind; 34] = [
        FailureKind::Connect,
        FailureKind::Timeout,
        FailureKind::Reset,
        FailureKind::Malformed,
        FailureKind::Status,
        FailureKind::Body,
        FailureKind::StreamReset,
        FailureKind::Refused,
        FailureKind::ConnectionError,
        FailureKind::Handshake,
        FailureKind::Closed,
        FailureKind::Protocol,
        FailureKind::GeneratorFault,
        FailureKind::GrpcCancelled,
        FailureKind::GrpcUnknown,
        FailureKind::GrpcInvalidArgument,
        FailureKind::GrpcDeadlineExceeded,
        FailureKind::GrpcNotFound,
        FailureKind::GrpcAlreadyExists,
        FailureKind::GrpcPermissionDenied,
        FailureKind::GrpcResourceExhausted,
        FailureKind::GrpcFailedPrecondition,
        FailureKind::GrpcAborted,
        FailureKind::GrpcOutOfRange,
        FailureKind::GrpcUnimplemented,
        FailureKind::GrpcInternal,
        FailureKind::GrpcUnavailable,
        FailureKind::GrpcDataLoss,
        FailureKind::GrpcUnauthenticated,
        FailureKind::GrpcFraming,
        FailureKind::GrpcDecode,
        FailureKind::GrpcTrailers,
        FailureKind::GrpcUnmatched,
        FailureKind::GrpcUnanswered,
    ];

    /// Where gRPC's status codes start in [`FailureKind::ALL`]: code 1 (CANCELLED) is
    /// there, code 16 (UNAUTHENTICATED) 15 places on.
    const GRPC_STATUS_AT: usize = 13;

    /// One of gRPC's classes (a status code, framing, decoding, trailers).
    pub fn is_grpc(self) -> bool {
        self >= FailureKind::GrpcCancelled
    }

    /// The class of gRPC status `code` (not 0, which is success): its own for 1 to 16,
    /// [`FailureKind::GrpcUnknown`] for a code gRPC does not define, as gRPC's clients
    /// read one.
    pub fn grpc_status(code: u32) -> FailureKind {
        match code {
            1..=16 => Self::ALL[Self::GRPC_STATUS_AT + code as usize - 1],
            _ => FailureKind::GrpcUnknown,
        }
    }

    /// The lowercase name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Connect => "connect",
            FailureKind::Timeout => "timeout",
            FailureKind::Reset => "reset",
            FailureKind::Malformed => "malformed",
            FailureKind::Status => "status",
            FailureKind::Body => "body",
            FailureKind::StreamReset => "stream_reset",
            FailureKind::Refused => "refused",
            FailureKind::ConnectionError => "connection_error",
            FailureKind::Handshake => "handshake",
            FailureKind::Closed => "closed",
            FailureKind::Protocol => "protocol",
            FailureKind::GeneratorFault => "generator_fault",
            FailureKind::GrpcCancelled => "grpc_cancelled",
            FailureKind::GrpcUnknown => "grpc_unknown",
            FailureKind::GrpcInvalidArgument => "grpc_invalid_argument",
            FailureKind::GrpcDeadlineExceeded => "grpc_deadline_exceeded",
            FailureKind::GrpcNotFound => "grpc_not_found",
            FailureKind::GrpcAlreadyExists => "grpc_already_exists",
            FailureKind::GrpcPermissionDenied => "grpc_permission_denied",
            FailureKind::GrpcResourceExhausted => "grpc_resource_exhausted",
            FailureKind::GrpcFailedPrecondition => "grpc_failed_precondition",
            FailureKind::GrpcAborted => "grpc_aborted",
            FailureKind::GrpcOutOfRange => "grpc_out_of_range",
            FailureKind::GrpcUnimplemented => "grpc_unimplemented",
            FailureKind::GrpcInternal => "grpc_internal",
            FailureKind::GrpcUnavailable => "grpc_unavailable",
            FailureKind::GrpcDataLoss => "grpc_data_loss",
            FailureKind::GrpcUnauthenticated => "grpc_unauthenticated",
            FailureKind::GrpcFraming => "grpc_framing",
            FailureKind::GrpcDecode => "grpc_decode",
            FailureKind::GrpcTrailers => "grpc_trailers",
            FailureKind::GrpcUnmatched => "grpc_unmatched",
            FailureKind::GrpcUnanswered => "grpc_unanswered",
        }
    }
}

const _: () = assert!(
    FailureKind::ALL[FailureKind::GRPC_STATUS_AT] as u8 == FailureKind::GrpcCancelled as u8
        && FailureKind::ALL[FailureKind::GRPC_STATUS_AT + 15] as u8
            == FailureKind::GrpcUnauthenticated as u8,
    "gRPC's status codes lie in ALL in code order"
);

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Failed requests per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureCounts(pub [u64; FailureKind::ALL.len()]);

// Arrays implement `Default` up to 32 elements only.
impl Default for FailureCounts {
    fn default() -> Self {
        FailureCounts([0; FailureKind::ALL.len()])
    }
}

impl FailureCounts {
    /// All failures.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// gRPC's failures: `(class, count)` pairs of the classes that occurred.
    pub fn grpc(&self) -> impl Iterator<Item = (FailureKind, u64)> + '_ {
        self.iter().filter(|(k, n)| k.is_grpc() && *n > 0)
    }
    /// `(class, count)` pairs, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (FailureKind, u64)> + '_ {
        FailureKind::ALL.iter().map(move |k| (*k, self[*k]))
    }
}

/// `3 timeout, 1 reset`: the classes that occurred, or `0` when none did.
impl fmt::Display for FailureCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for (kind, n) in self.iter().filter(|(_, n)| *n > 0) {
            write!(f, "{}{n} {kind}", if any { ", " } else { "" })?;
            any = true;
        }
        if !any {
            f.write_str("0")?;
        }
        Ok(())
    }
}

impl Index<FailureKind> for FailureCounts {
    type Output = u64;
    fn index(&self, k: FailureKind) -> &u64 {
        &self.0[k as usize]
    }
}

impl IndexMut<FailureKind> for FailureCounts {
    fn index_mut(&mut self, k: FailureKind) -> &mut u64 {
        &mut self.0[k as usize]
    }
}

impl AddAssign<&FailureCounts> for FailureCounts {
    fn add_assign(&mut self, o: &FailureCounts) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

/// Counts of one run. `completed = ok + failures.total()`; `aborted` requests were in flight
/// when the run ended and are neither ok nor failed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests that ended with an answer or a failure.
    pub completed: u64,
    /// Requests whose answer met every expectation.
    pub ok: u64,
    /// Failed requests per class.
    pub failures: FailureCounts,
    /// In flight when the run ended (not failures).
    pub aborted: u64,
    /// Final responses per status code (interim 1xx never counted).
    pub status: BTreeMap<u16, u64>,
    /// Responses whose body length differed from the first response's (ab's "Length"
    /// failures; not a failure here unless `--expect-length` was given).
    pub length_mismatch: u64,
    /// Connections established.
    pub connections_opened: u64,
    /// Connection attempts that failed.
    pub connections_failed: u64,
    /// Connections the server closed between requests that were re-opened without losing a
    /// request (keep-alive limits, `Connection: close`, HTTP/1.0). In rate mode, only those
    /// opened again at once for requests left on them: one the server closed while idle is
    /// opened again when a request needs it, counted in `connections_opened` alone.
    pub reconnects: u64,
    /// Requests sent a second time, on a new connection, because the server closed a
    /// connection that had sat idle just as the request went out, before any byte of an answer
    /// (only idempotent methods; counted in `reconnects` too), or, over HTTP/2, because a
    /// GOAWAY or a RST_STREAM REFUSED_STREAM said the server had not processed their
    /// stream (any method; counted at each send, within the request's deadline and up to 4
    /// sends again).
    /// Latency counts from the first send.
    pub retried: u64,
    /// Connections the server closed before they carried any answer, while no request was on
    /// them (closed right after accept); shootout re-opens them with an increasing pause
    /// (1 ms doubling to 1 s) so a server that drops every connection is not flooded.
    pub dropped: u64,
    /// Bytes received: heads and bodies.
    pub bytes_received: u64,
    /// Body bytes received (decoded from chunked framing).
    pub body_bytes: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// HTTP/2: RST_STREAM frames received, per error code (RFC 9113 §7: 1 PROTOCOL_ERROR,
    /// 2 INTERNAL_ERROR, 7 REFUSED_STREAM, 8 CANCEL, …), whatever class the request got;
    /// over HTTP/3 the request streams the server reset, per HTTP/3 error code (RFC 9114
    /// §8.1: 0x10b H3_REQUEST_REJECTED, 0x10c H3_REQUEST_CANCELLED, …; a code over
    /// 2^32 − 1 under [`OTHER_RESET_CODES`]);
    /// past [`MAX_RESET_CODES`] distinct codes, the rest under [`OTHER_RESET_CODES`].
    pub stream_resets: BTreeMap<u32, u64>,
    /// HTTP/2 and HTTP/3: GOAWAY frames received (each ends a connection; a new one is
    /// opened).
    pub goaways: u64,
    /// WebSocket: close frames received, per close code (RFC 6455 §7.4: 1000 normal, 1001
    /// going away, 1008 policy, 1011 server error, …; 1005 when the frame had no code),
    /// whether messages were outstanding or not; past [`MAX_CLOSE_CODES`] distinct codes
    /// the rest under [`OTHER_CLOSE_CODES`].
    pub close_codes: BTreeMap<u16, u64>,
    /// WebSocket: pings from the server that got no pong: a later ping's pong replaced
    /// theirs before it was written, or too many pongs were waiting (a server that pings
    /// and does not read; RFC 6455 §5.5.3 allows answering only the latest ping).
    pub pings_unanswered: u64,
    /// Connections still being set up when the run ended (connecting, the TLS handshake,
    /// HTTP/2's preface, WebSocket's upgrade) that never were before: neither opened nor
    /// failed, they carried nothing. One opening again after the server closed it (a
    /// server that closes each connection after its answer) is not counted: it carried
    /// its share.
    pub connections_opening: u64,
}

impl Counts {
    /// Counts an HTTP/2 RST_STREAM with error `code`: by its code while fewer than
    /// [`MAX_RESET_CODES`] codes are counted, else under [`OTHER_RESET_CODES`].
    pub fn count_reset(&mut self, code: u32) {
        let resets = &mut self.stream_resets;
        let key = if resets.len() < MAX_RESET_CODES || resets.contains_key(&code) {
            code
        } else {
            OTHER_RESET_CODES
        };
        *resets.entry(key).or_default() += 1;
    }

    /// Counts a WebSocket close frame with `code`, as [`Counts::count_reset`] counts
    /// resets.
    pub fn count_close(&mut self, code: u16) {
        let closes = &mut self.close_codes;
        let key = if closes.len() < MAX_CLOSE_CODES || closes.contains_key(&code) {
            code
        } else {
            OTHER_CLOSE_CODES
        };
        *closes.entry(key).or_default() += 1;
    }

    /// Failed requests of every class.
    pub fn failed(&self) -> u64 {
        self.failures.total()
    }

    /// Adds another worker's counts.
    pub fn merge(&mut self, o: &Counts) {
        // `+` cannot fail: a worker's counts stay far below u64::MAX.
        let _ = self.combine(o, |a, b| Some(a + b));
    }

    /// Adds another run's counts (read from a file, so anything), or names the first
    /// field whose sum would pass `u64::MAX`; then nothing is changed.
    pub fn checked_merge(&mut self, o: &Counts) -> Result<(), &'static str> {
        let mut sum = self.clone();
        sum.combine(o, u64::checked_add)?;
        *self = sum;
        Ok(())
    }

    /// Adds `o` field by field with `add`; the first field `add` refuses is named.
    fn combine(
        &mut self,
        o: &Counts,
        add: fn(u64, u64) -> Option<u64>,
    ) -> Result<(), &'static str> {
        let field = |a: &mut u64, b: u64, name: &'static str| -> Result<(), &'static str> {
            *a = add(*a, b).ok_or(name)?;
            Ok(())
        };
        field(&mut self.completed, o.completed, "completed")?;
        field(&mut self.ok, o.ok, "ok")?;
        for (kind, n) in o.failures.iter() {
            field(&mut self.failures[kind], n, "failures")?;
        }
        field(&mut self.aborted, o.aborted, "aborted")?;
        for (code, n) in &o.status {
            field(self.status.entry(*code).or_default(), *n, "status")?;
        }
        field(
            &mut self.length_mismatch,
            o.length_mismatch,
            "length_mismatch",
        )?;
        field(
            &mut self.connections_opened,
            o.connections_opened,
            "connections_opened",
        )?;
        field(
            &mut self.connections_failed,
            o.connections_failed,
            "connections_failed",
        )?;
        field(&mut self.reconnects, o.reconnects, "reconnects")?;
        field(&mut self.retried, o.retried, "retried")?;
        field(&mut self.dropped, o.dropped, "dropped")?;
        field(&mut self.bytes_received, o.bytes_received, "bytes_received")?;
        field(&mut self.body_bytes, o.body_bytes, "body_bytes")?;
        field(&mut self.bytes_sent, o.bytes_sent, "bytes_sent")?;
        for (code, n) in &o.stream_resets {
            field(
                self.stream_resets.entry(*code).or_default(),
                *n,
                "stream_resets",
            )?;
        }
        for (code, n) in &o.close_codes {
            field(
                self.close_codes.entry(*code).or_default(),
                *n,
                "close_codes",
            )?;
        }
        field(
            &mut self.pings_unanswered,
            o.pings_unanswered,
            "pings_unanswered",
        )?;
        field(
            &mut self.connections_opening,
            o.connections_opening,
            "connections_opening",
        )?;
        field(&mut self.goaways, o.goaways, "goaways")
    }
}

/// Facts of the first response seen (ab's "Server Software" and "Document Length").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstResponse {
    /// Status code.
    pub status: u16,
    /// The `Server` header, if any.
    pub server: Option<String>,
    /// Body length in bytes.
    pub body_len: u64,
}

/// One request's timings (microseconds) and outcome, for scatter plots and ab's `-g`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// When the request started (its due time in rate mode), µs after the run started.
    pub start_us: u64,
    /// Time to connect when this request opened its connection, else 0 (µs).
    pub connect_us: u32,
    /// Send done → first byte of the answer (µs).
    pub waiting_us: u32,
    /// Start → last byte (µs), corrected in rate mode.
    pub total_us: u32,
    /// Status code of the final response, 0 when there was none.
    pub status: u16,
    /// The failure class, if the request failed.
    pub failure: Option<FailureKind>,
}

/// One second of the run, merged across workers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecondStats {
    /// Seconds since the run started (this second spans `[second, second + 1)`).
    pub second: u32,
    /// Requests completed in this second.
    pub completed: u64,
    /// Of which failed.
    pub failed: u64,
    /// Mean latency (µs).
    pub mean_us: f64,
    /// Median latency (µs).
    pub p50_us: u64,
    /// 99th percentile latency (µs).
    pub p99_us: u64,
    /// Slowest request (µs).
    pub max_us: u64,
    /// The second's latency histogram (µs, 2 significant figures, [`second_histogram`]),
    /// HdrHistogram V2 bytes, so the seconds of several runs can be merged exactly; empty
    /// when not kept, and in a step read back from a store's file until asked for
    /// (`StoredStep::series`).
    #[serde(skip)]
    pub histogram: Vec<u8>,
}

impl SecondStats {
    /// Second `second` of a run: `completed` requests ended in it, `failed` of them
    /// failed, and `latency` (µs) holds the answered ones' latency.
    pub fn of(second: u32, completed: u64, failed: u64, latency: &Histogram<u64>) -> Self {
        use hdrhistogram::serialization::{Serializer, V2Serializer};
        let mut histogram = Vec::new();
        // Writing into a Vec fails only for a histogram V2 cannot encode (none of ours).
        let _ = V2Serializer::new().serialize(latency, &mut histogram);
        SecondStats {
            second,
            completed,
            failed,
            mean_us: if latency.is_empty() {
                0.0
            } else {
                latency.mean()
            },
            p50_us: latency.value_at_quantile(0.5),
            p99_us: latency.value_at_quantile(0.99),
            max_us: latency.max(),
            histogram,
        }
    }
}

/// A new empty per-second latency histogram (µs): 1 µs to 1 hour, 2 significant figures,
/// a few KiB.
pub fn second_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("static histogram bounds are valid")
}

/// How far the open-loop schedule was kept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct ScheduleStats {
    /// Requests per second asked for.
    pub target_rps: f64,
    /// Requests per second sent.
    pub achieved_rps: f64,
    /// Requests that were due during the run.
    pub due: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests sent more than 1 ms after their due time (no free connection, busy generator).
    pub late: u64,
    /// Of `late`, those that waited for a connection: when they fell due, every connection
    /// had its requests outstanding, waiting on the server. The rest were late while a
    /// connection was free: the generator's own loop fell behind.
    #[serde(default)]
    pub late_no_connection: u64,
    /// Largest delay between a due time and the actual send.
    #[serde(serialize_with = "ser_ms")]
    pub max_lag: Duration,
    /// How late the sends went out (µs, sends on time counting 0): the median, the 99th
    /// and the 99.9th percentile (the largest is `max_lag`).
    #[serde(default)]
    pub lag_p50_us: u64,
    #[serde(default)]
    pub lag_p99_us: u64,
    #[serde(default)]
    pub lag_p999_us: u64,
    /// The most connections open at once (rate mode opens them as the schedule needs them).
    #[serde(default)]
    pub connections: u64,
    /// The most connections the run could open (the cap in force).
    #[serde(default)]
    pub max_connections: u64,
    /// A request fell due with every connection busy and the cap reached.
    #[serde(default)]
    pub capped: bool,
    /// Time the generator waited for due times without sleeping (the last stretch before
    /// each, so that sends leave on time), summed over its threads.
    #[serde(default, serialize_with = "ser_ms")]
    pub spun: Duration,
    /// HTTP/1.1: requests answered more than 10 ms after they were sent, and after the
    /// answer to a request the same worker sent later on another connection. A server that
    /// serves one connection at a time per worker, sitting on each it accepted until its
    /// request comes (a sync worker), answers in the order it accepted the connections:
    /// these waited while it was on another connection (or they took longer to process).
    #[serde(default)]
    pub overtaken: u64,
    /// How the requests were spaced, and how well the gaps sent fit that.
    #[serde(default)]
    pub arrival: ArrivalCheck,
}

/// How a rate run's requests were spaced, and how well the gaps between the sends fit
/// the process asked for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct ArrivalCheck {
    /// Even intervals or Poisson gaps (`even` or `poisson`).
    #[serde(serialize_with = "ser_arrival")]
    pub process: crate::Arrival,
    /// Poisson: the gaps between consecutive requests among each worker's first sent on
    /// time (within 1 ms of their due times, taken at them) tested against the
    /// exponential with the rate as its mean; `None` with even arrivals or too few sends.
    pub fit: Option<Fit>,
}

/// A goodness-of-fit test of a sample against a distribution given in full (no
/// parameter estimated from the sample).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    /// The sample's size.
    pub n: u64,
    /// The Anderson–Darling statistic A².
    pub statistic: f64,
    /// The chance of an A² at least this large were the sample drawn from the
    /// distribution (its asymptotic distribution, close for 20 values or more).
    pub p: f64,
}

impl Fit {
    /// The sample fits at the 1% level: the distribution is not rejected.
    pub fn fits(&self) -> bool {
        self.p >= 0.01
    }
}

fn ser_arrival<S: serde::Serializer>(a: &crate::Arrival, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(a.name())
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// What the generator itself cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GeneratorStats {
    /// Worker threads.
    pub threads: usize,
    /// User CPU time of the worker threads.
    pub cpu_user: Duration,
    /// System CPU time of the worker threads.
    pub cpu_sys: Duration,
    /// Largest share of wall time any worker thread spent on a CPU (0..1).
    pub busiest_thread: f64,
}

impl GeneratorStats {
    /// User + system CPU time.
    pub fn cpu(&self) -> Duration {
        self.cpu_user + self.cpu_sys
    }
}

/// Something the user must know to read the numbers right.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// A worker thread was on a CPU most of the run: the limit may be the generator's.
    GeneratorSaturated {
        /// Busy share of the busiest thread (0..1).
        busiest_thread: f64,
    },
    /// The open-loop schedule was not kept.
    ScheduleNotKept {
        /// Requests per second asked for.
        target_rps: f64,
        /// Requests per second sent.
        achieved_rps: f64,
        /// Requests sent more than 1 ms late.
        late: u64,
        /// Of those, requests that waited because every connection had its requests
        /// outstanding (the server, or too few connections, was the limit).
        #[serde(default)]
        waited: u64,
        /// The cap on connections was reached: no more could open for the waiting ones.
        #[serde(default)]
        capped: bool,
        /// Sends late with a connection free came while the generator's busiest thread
        /// was busy only this share of the time (0..1): its threads waited for a CPU that
        /// others held, and its own loop was not the cause. `None` when the loop was busy
        /// enough to be (the analysis' rule).
        #[serde(default)]
        starved: Option<f64>,
        /// The schedule was of journeys (each starts a new user), not of requests: the
        /// rates are journeys a second and the late ones journeys started late.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        journeys: bool,
        /// The schedule was of gRPC calls (`--rate` paces calls, whatever a streaming
        /// call's counts count): the rates are calls a second and the late ones calls.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        calls: bool,
    },
    /// Connections could not be opened.
    ConnectFailed {
        /// Failed attempts.
        count: u64,
    },
    /// Requests failed.
    Failures {
        /// Failed requests.
        failed: u64,
        /// Completed requests.
        completed: u64,
    },
    /// Connections took a second or more to open: the kernel retried the SYN, which
    /// happens when the server's listen backlog is full; over WebSocket (`upgrade`) the
    /// time also holds the handshake, so a server slow to accept or to upgrade shows too.
    SlowConnects {
        /// Connections that took 1 s or more.
        count: u64,
        /// The opening included the WebSocket handshake.
        upgrade: bool,
    },
    /// Not one request completed.
    NothingCompleted,
    /// Closed loop: the answers account for far fewer busy connections than were open
    /// (Little's law: busy connections = req/s × mean latency), so the server left the
    /// others waiting without an answer; the latency figures describe only the answered.
    Unserved {
        /// Connections the load kept open.
        connections: u64,
        /// Connections the answers account for: req/s × mean latency (s).
        served: f64,
        /// Completed requests per second.
        rps: f64,
        /// Mean latency of the completed requests (ms).
        mean_ms: f64,
        /// A gRPC run: the law counted its calls, `rps` calls a second and `mean_ms` a
        /// call's mean time from its start to its last reply (a unary call's latency).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        calls: bool,
    },
    /// Requests were sent a second time: the server closed an idle keep-alive connection
    /// just as they went out, or (pipelined) they were behind an answer that closed the
    /// connection, or (HTTP/2, HTTP/3) a GOAWAY or a REFUSED_STREAM said so: the server did
    /// not process them.
    Retried {
        /// Requests sent again.
        count: u64,
    },
    /// The server closed connections before any answer, with no request on them.
    Dropped {
        /// Connections dropped.
        count: u64,
    },
    /// The kernel counted connections turned away by a full listen queue during the run
    /// ([`ListenQueue`]): measured, where [`Warning::SlowConnects`] is inferred.
    ListenOverflowed {
        /// `ListenOverflows` during the run.
        overflows: u64,
        /// `ListenDrops` during the run.
        drops: u64,
        /// Whose the overflows were, by the server's own accept queue.
        whose: ListenBlame,
        /// The server's accept queue sampled meanwhile, where it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        accept: Option<AcceptWaiting>,
    },
    /// Connections waited in the server's accept queue, sampled by the kernel's count
    /// ([`AcceptWaiting`]): requests written on them waited unread while the server served
    /// the connections it held.
    Unaccepted {
        /// The most connections found waiting at once.
        most: u64,
        /// The share of samples that found one or more waiting (0 to 1).
        share: f64,
        /// How long a connection waited on average, in milliseconds (Little's law).
        mean_wait_ms: f64,
    },
    /// Rate mode, HTTP/1.1: requests answered more than 10 ms after they were sent and after
    /// requests sent later on other connections ([`ScheduleStats::overtaken`]).
    Overtaken {
        /// Requests overtaken.
        count: u64,
    },
    /// The first seconds of the run differed from the rest, in mean latency or answers
    /// per second (the analysis' warm-up test of the per-second series): a server or its
    /// caches warming up, in every figure of the run.
    WarmUp {
        /// The first seconds that differed.
        seconds: u64,
        /// Whole seconds looked at.
        of: u64,
        /// Mean latency over the first seconds, then over the rest (ms).
        latency_before_ms: f64,
        /// Mean latency over the rest (ms).
        latency_after_ms: f64,
        /// Answers per second over the first seconds.
        rps_before: f64,
        /// Answers per second over the rest.
        rps_after: f64,
        /// The test's p-value (two-sided Mann–Whitney U; the smaller of the two series').
        p: f64,
    },
    /// The per-second series has a trend through the run (after any warm-up): a leak, a
    /// cache filling, a server throttling; its figures mix its start with its end.
    Drifting {
        /// Whole seconds tested.
        seconds: u64,
        /// The mean latency's change per second (a share of its mean: 0.01 is 1% a second),
        /// when its trend is significant.
        latency_change: Option<f64>,
        /// Its Mann–Kendall p-value.
        latency_p: Option<f64>,
        /// The answers per second's change per second (share of the mean), when its trend
        /// is significant.
        throughput_change: Option<f64>,
        /// Its Mann–Kendall p-value.
        throughput_p: Option<f64>,
    },
    /// The run was to last until its conditions (`--until`, a plan's `until`) held, and
    /// its time ran out first: its figures are not as sure as asked.
    NotConverged {
        /// How long it ran (s).
        seconds: f64,
        /// Each condition that did not hold, as written (`p99±5%`), with its last
        /// interval's relative half-width (0.08 for ±8%; `None`: nothing to read, or an
        /// interval open above).
        unmet: Vec<(String, Option<f64>)>,
    },
    /// An automatic warm-up (`--warmup auto`) reached its bound ([`WarmedUp::MAX`])
    /// before the per-second series were level: the run was measured anyway.
    WarmUpNotLevel {
        /// How long the warm-up lasted (s).
        seconds: f64,
    },
    /// Requests failed by a fault of shootout's own ([`FailureKind::GeneratorFault`]), not
    /// the server's.
    GeneratorFault {
        /// Requests failed so.
        count: u64,
    },
    /// WebSocket: pings from the server got no pong ([`Counts::pings_unanswered`]).
    PingsUnanswered {
        /// Pings left unanswered.
        count: u64,
    },
    /// Connections were still being set up when the run ended
    /// ([`Counts::connections_opening`]): they never carried a request.
    ConnectionsOpening {
        /// Connections still opening.
        count: u64,
    },
    /// HTTP/2: the server allowed fewer concurrent streams per connection
    /// (`SETTINGS_MAX_CONCURRENT_STREAMS`) than were asked for, so fewer were in flight.
    StreamsLimited {
        /// Streams per connection asked for (`--streams`).
        asked: u64,
        /// The lowest limit a server announced.
        allowed: u64,
    },
}

impl Warning {
    /// The warning's stable word for machines (`generator_saturated`, …): the `kind` tag
    /// of its serde form, as stored and as printed in the JSON reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::GeneratorSaturated { .. } => "generator_saturated",
            Warning::ScheduleNotKept { .. } => "schedule_not_kept",
            Warning::ConnectFailed { .. } => "connect_failed",
            Warning::Failures { .. } => "failures",
            Warning::SlowConnects { .. } => "slow_connects",
            Warning::Unserved { .. } => "unserved",
            Warning::NothingCompleted => "nothing_completed",
            Warning::Retried { .. } => "retried",
            Warning::Dropped { .. } => "dropped",
            Warning::StreamsLimited { .. } => "streams_limited",
            Warning::ListenOverflowed { .. } => "listen_overflowed",
            Warning::Unaccepted { .. } => "unaccepted",
            Warning::Overtaken { .. } => "overtaken",
            Warning::WarmUp { .. } => "warm_up",
            Warning::Drifting { .. } => "drifting",
            Warning::NotConverged { .. } => "not_converged",
            Warning::WarmUpNotLevel { .. } => "warm_up_not_level",
            Warning::GeneratorFault { .. } => "generator_fault",
            Warning::PingsUnanswered { .. } => "pings_unanswered",
            Warning::ConnectionsOpening { .. } => "connections_opening",
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::GeneratorSaturated { busiest_thread } => write!(
                f,
                "the generator was busy {:.0}% of the run on its busiest thread: the limit may be shootout's, not the server's (add --threads, or pin server and generator to different CPUs)",
                busiest_thread * 100.0
            ),
            Warning::ScheduleNotKept { .. } => schedule_not_kept(f, self),
            Warning::ConnectFailed { count } => write!(
                f,
                "{count} connection attempts failed (server down, listen backlog full, or out of file descriptors/ports)"
            ),
            Warning::Failures { failed, completed } => write!(
                f,
                "{failed} of {completed} requests failed ({:.2}%): their latency is not comparable with a healthy server's",
                *failed as f64 * 100.0 / (*completed).max(1) as f64
            ),
            Warning::SlowConnects { count, upgrade: false } => write!(
                f,
                "{count} connections took 1 s or more to open: the server's listen backlog was likely full and the kernel retried the SYN (raise the server's backlog and net.core.somaxconn, or lower -c)"
            ),
            Warning::SlowConnects { count, upgrade: true } => write!(
                f,
                "{count} connections took 1 s or more to open and upgrade to WebSocket: the server was slow to accept them or to answer their handshakes (a full listen backlog makes the kernel retry the SYN after 1 s; a busy accept loop holds them in its queue), so fewer connections carried the load than asked (raise the server's backlog, or lower -c)"
            ),
            Warning::NothingCompleted => f.write_str("not one request completed"),
            Warning::Retried { count } => write!(
                f,
                "{count} requests were sent a second time: the server closed an idle keep-alive connection just as each went out, before answering (only GET, HEAD, OPTIONS, TRACE, PUT and DELETE are sent again), or, pipelined, they were behind an answer with Connection: close, which the server does not process past, or, over HTTP/2 and HTTP/3, the server said it had not processed them (a GOAWAY, or over HTTP/2 RST_STREAM REFUSED_STREAM); their latency counts from the first send"
            ),
            Warning::Dropped { count } => write!(
                f,
                "the server closed {count} connections before any answer, with no request on them: shootout re-opened each after a pause growing to 1 s, so fewer requests may have gone out than were due"
            ),
            Warning::ListenOverflowed { .. } => listen_overflowed(f, self),
            Warning::Unaccepted { most, share, mean_wait_ms: w } => unaccepted(f, *most, *share, *w),
            Warning::Overtaken { count } => write!(
                f,
                "{count} requests took over 10 ms and were answered after requests sent later on other connections: a server that serves one connection at a time per worker (gunicorn's sync workers, uWSGI, mod_wsgi) was held by another connection it had accepted, or these requests took longer to process"
            ),
            Warning::GeneratorFault { count } => write!(
                f,
                "{count} requests failed by a fault of shootout's own (generator_fault), not the server's: please report it"
            ),
            Warning::PingsUnanswered { count } => write!(
                f,
                "{count} pings from the server went unanswered: it pinged faster than it read our pongs (only the latest is answered)"
            ),
            Warning::ConnectionsOpening { count } => connections_opening(f, *count),
            Warning::StreamsLimited { asked, allowed } => write!(
                f,
                "the server allows {allowed} concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS), fewer than the {asked} asked for: at most {allowed} were in flight on each connection (raise the server's limit, or add connections)"
            ),
            Warning::WarmUp { seconds, of, latency_before_ms, latency_after_ms, rps_before, rps_after, p } => write!(
                f,
                "the first {seconds} s of {of} differed from the rest (mean latency {latency_before_ms:.3} ms, then {latency_after_ms:.3} ms; {rps_before:.0} answers a second, then {rps_after:.0}; Mann–Whitney {}): the server or its caches were warming up, and those seconds are in every figure (warm up before measuring: --warmup {}s or more, or a plan's warmup)",
                p_value(*p),
                seconds
            ),
            Warning::Drifting { .. } => drifting(f, self),
            Warning::WarmUpNotLevel { seconds } => write!(
                f,
                "the automatic warm-up was not level after {seconds:.0} s (answers a second or p99 still had a trend): the run was measured anyway, and may still hold a warm-up (a server that never levels drifts; a longer fixed --warmup shows whether it settles)"
            ),
            Warning::NotConverged { seconds, unmet } => not_converged(f, *seconds, unmet),
            Warning::Unserved { .. } => unserved(f, self),
        }
    }
}

/// [`Warning::Unserved`]'s sentence: Little's law in requests, or in a streaming run's
/// calls.
fn unserved(f: &mut fmt::Formatter<'_>, w: &Warning) -> fmt::Result {
    let Warning::Unserved {
        connections,
        served,
        rps,
        mean_ms,
        calls,
    } = w
    else {
        return Ok(());
    };
    let law = if *calls {
        format!("{rps:.0} calls/s × {mean_ms:.3} ms a call, from its start to its last reply")
    } else {
        format!("{rps:.0} req/s × {mean_ms:.3} ms mean latency")
    };
    write!(
        f,
        "only about {served:.0} of {connections} connections were being answered at a time ({law}, by Little's law): the others waited without an answer, so the latency shown is that of the served ones only (the server's worker or connection limit is below the concurrency; a shorter timeout turns the waits into counted failures)"
    )
}

/// [`Warning::ConnectionsOpening`]'s sentence, in the singular for one.
fn connections_opening(f: &mut fmt::Formatter<'_>, count: u64) -> fmt::Result {
    match count {
        1 => f.write_str(
            "1 connection was still opening at the end (never connected or upgraded): fewer connections carried the load than asked",
        ),
        _ => write!(
            f,
            "{count} connections were still opening at the end (never connected or upgraded): fewer connections carried the load than asked"
        ),
    }
}

/// [`Warning::ListenOverflowed`]'s sentence: the server's overflow only when its own
/// queue was seen at its backlog; else the machine's count, with what the server's queue
/// says of whose it was.
fn listen_overflowed(f: &mut fmt::Formatter<'_>, w: &Warning) -> fmt::Result {
    let &Warning::ListenOverflowed {
        overflows,
        drops,
        whose,
        accept,
    } = w
    else {
        return Ok(());
    };
    const ADVICE: &str = "raise the server's backlog and net.core.somaxconn, or accept faster";
    let counted = format!(
        "{overflows} times ({drops} connection attempts dropped, as the kernel counts them for this machine's listeners)"
    );
    let a = accept.unwrap_or_default();
    let (most, backlog) = (a.most, a.backlog.unwrap_or(0));
    match whose {
        ListenBlame::Server => write!(
            f,
            "the server's listen queue overflowed {counted}: its accept queue was seen at its backlog of {backlog} in {} of {} samples, and clients waited for SYN retries of a second or more ({ADVICE})",
            a.full, a.samples
        ),
        ListenBlame::Uncertain => write!(
            f,
            "listen queues on this machine overflowed {counted}: the server's accept queue reached {most} of its backlog of {backlog} but was not seen at it (sampled every 10 ms), so these may be the server's or other processes'; if the server's, clients waited for SYN retries of a second or more ({ADVICE})"
        ),
        ListenBlame::Others => write!(
            f,
            "listen queues on this machine overflowed {counted}, but the server's accept queue never came near its backlog of {backlog} (at most {most} waiting in {} samples, every 10 ms): the drops may be other processes' listeners', not the server's",
            a.samples
        ),
        ListenBlame::Unmeasured => write!(
            f,
            "listen queues on this machine overflowed {counted}, the server's or other processes' (its own accept queue was not sampled); if the server's, clients waited for SYN retries of a second or more ({ADVICE})"
        ),
    }
}

/// [`Warning::Unaccepted`]'s sentence.
fn unaccepted(f: &mut fmt::Formatter<'_>, most: u64, share: f64, wait_ms: f64) -> fmt::Result {
    write!(
        f,
        "connections waited for the server to accept them: {:.0}% of the samples of its accept queue held one or more (up to {most} at once), {wait_ms:.1} ms a connection on average, and requests written on them waited unread meanwhile: the server accepted slower than connections came, either because its workers each hold one connection at a time (uWSGI, gunicorn's sync workers, mod_wsgi serve the one they hold while new ones queue: fewer connections, --max-connections, or a server that multiplexes its connections) or because its CPU was busy serving (then the server is at its limit)",
        share * 100.0
    )
}

/// The schedule not kept, and why: who was late decides the advice. Connections all
/// waiting on the server mean the server (at this many connections) could not keep up; a
/// free connection and a late send mean shootout's own loop fell behind.
fn schedule_not_kept(f: &mut fmt::Formatter<'_>, w: &Warning) -> fmt::Result {
    let Warning::ScheduleNotKept {
        target_rps,
        achieved_rps,
        late,
        waited,
        capped,
        starved,
        journeys,
        calls,
    } = w
    else {
        return Ok(());
    };
    let (rate, sent) = if *journeys {
        ("journeys/s", "journeys started")
    } else if *calls {
        ("calls/s", "calls sent")
    } else {
        ("req/s", "requests sent")
    };
    write!(f, "the schedule of {target_rps:.0} {rate} was not kept: {achieved_rps:.0} {rate} {}, {late} {sent} late, ", if *journeys { "started" } else { "sent" })?;
    match (capped, starved) {
            (true, _) if *waited * 2 >= *late => write!(
                f,
                "{waited} of them because every connection was waiting on the server and the cap on connections was reached: the server could not keep up with this rate at this many connections (raise --max-connections only if it can take more requests at once; else lower --rate)"
            ),
            _ if *waited * 2 >= *late => write!(
                f,
                "{waited} of them because every connection was waiting on the server while it turned new ones away or was slow to accept them: the server could not keep up with this rate (lower --rate)"
            ),
            (_, Some(busy)) => write!(
                f,
                "{} of them while a connection was free, though shootout's busiest thread was busy only {:.0}% of the time: its threads were ready but waited for a CPU that the server or other processes held (pin server and generator to different CPUs: taskset for the server, --cpus for shootout)",
                late - waited,
                busy * 100.0
            ),
            (_, None) => write!(
                f,
                "{} of them while a connection was free: shootout's own loop fell behind (add --threads, pin server and generator to different CPUs, or lower --rate)",
                late - waited
            ),
        }
}

/// A drift through the run: which of latency and throughput moved, by how much a second.
fn drifting(f: &mut fmt::Formatter<'_>, w: &Warning) -> fmt::Result {
    let Warning::Drifting {
        seconds,
        latency_change,
        latency_p,
        throughput_change,
        throughput_p,
    } = w
    else {
        return Ok(());
    };
    let mut parts = Vec::new();
    for (what, change, p) in [
        ("latency", latency_change, latency_p),
        ("answers per second", throughput_change, throughput_p),
    ] {
        if let (Some(c), Some(p)) = (change, p) {
            parts.push(format!(
                "{what} {} {:.1}% a second (Mann–Kendall {})",
                if *c >= 0.0 { "rose" } else { "fell" },
                c.abs() * 100.0,
                p_value(*p)
            ));
        }
    }
    write!(
            f,
            "the run drifted through its {seconds} s: {}; its figures mix its start with its end (a leak, a cache filling, a server throttling: a longer run shows whether it levels off)",
            parts.join(", ")
        )
}

/// A step that did not converge: each condition unmet and how wide its interval was.
fn not_converged(
    f: &mut fmt::Formatter<'_>,
    seconds: f64,
    unmet: &[(String, Option<f64>)],
) -> fmt::Result {
    let parts: Vec<String> = unmet
        .iter()
        .map(|(c, w)| match w {
            Some(w) => format!("{c} was ±{:.1}%", w * 100.0),
            None => format!("{c} had no closed interval"),
        })
        .collect();
    write!(
            f,
            "did not converge in {seconds:.1} s: {}; its figures are less sure than asked (a longer duration, the most a step may last, lets it converge)",
            parts.join(", ")
        )
}

/// A p-value as `p 0.0123`, or `p < 0.0001` below what four decimals show.
fn p_value(p: f64) -> String {
    if p < 1e-4 {
        "p < 0.0001".to_string()
    } else {
        format!("p {p:.4}")
    }
}

/// Latency statistics in milliseconds, taken from a µs histogram.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Fastest (ms).
    pub min: f64,
    /// Mean (ms).
    pub mean: f64,
    /// Standard deviation (ms).
    pub stdev: f64,
    /// Median (ms).
    pub p50: f64,
    /// 90th percentile (ms).
    pub p90: f64,
    /// 99th percentile (ms).
    pub p99: f64,
    /// 99.9th percentile (ms).
    pub p999: f64,
    /// Slowest (ms).
    pub max: f64,
}

impl LatencySummary {
    /// Summarises a µs histogram; all zero when it is empty.
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let ms = |us: u64| us as f64 / 1e3;
        LatencySummary {
            min: ms(h.min()),
            mean: h.mean() / 1e3,
            stdev: h.stdev() / 1e3,
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}

/// How a request of a counted kind (a list entry, a journey step), or a journey, ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// A good answer (a journey: every step good).
    Ok,
    /// Failed under this class (a journey: its first failed step's).
    Failed(FailureKind),
    /// A journey step not sent: a value it needs was unset, or unsafe in a header (a
    /// journey: its first failed step was one).
    Unsent,
}

/// What one entry of a request list, one journey step or one journey measured.
#[derive(Debug, Clone)]
pub struct TargetStats {
    /// The entry as reports name it: `METHOD PATH`, templates as written; a step as
    /// `journey › step`; a journey by its name.
    pub label: String,
    /// Requests of this entry that completed (answered or failed); a step's unsent ones
    /// too; journeys that ended.
    pub completed: u64,
    /// Of which got a good answer.
    pub ok: u64,
    /// Failed requests of this entry or step per class (for a journey, each failed journey
    /// under its first failed step's class, when one was sent). With
    /// [`TargetStats::unsent`] they add up to [`TargetStats::failed`], except in results
    /// stored or saved before they were counted (all zero).
    pub failures: FailureCounts,
    /// A journey step's sends that failed unsent (a value it needs was unset, or unsafe in
    /// a header): no request, so no class; journeys: those that ended on one.
    pub unsent: u64,
    /// Latency of its answered requests (µs), as [`Histograms::latency`]; 2 significant
    /// figures.
    pub latency: Histogram<u64>,
    /// A journey's busy time (µs, 2 significant figures): each ended journey's duration
    /// less the think times it waited between its steps. `None` for a request kind or a
    /// step, and for journeys of results saved or stored before it was measured (and of a
    /// merge of shards of which one lacks it).
    pub busy: Option<Histogram<u64>>,
}

impl TargetStats {
    /// Nothing counted yet, labelled `label`, with an empty latency histogram.
    pub fn new(label: impl Into<String>) -> TargetStats {
        TargetStats {
            label: label.into(),
            completed: 0,
            ok: 0,
            failures: FailureCounts::default(),
            unsent: 0,
            latency: second_histogram(),
            busy: None,
        }
    }

    /// A journey's counts: as [`TargetStats::new`], with an empty busy-time histogram.
    pub fn journey(label: impl Into<String>) -> TargetStats {
        TargetStats {
            busy: Some(second_histogram()),
            ..TargetStats::new(label)
        }
    }

    /// Requests of this entry that failed.
    pub fn failed(&self) -> u64 {
        self.completed - self.ok
    }

    /// One request, step or journey ended as `e`. No allocation: the classes are a fixed
    /// array.
    #[inline]
    pub fn count(&mut self, e: Ended) {
        self.completed += 1;
        match e {
            Ended::Ok => self.ok += 1,
            Ended::Failed(k) => self.failures[k] += 1,
            Ended::Unsent => self.unsent += 1,
        }
    }

    /// Becomes a copy of `o`'s counts and latency, keeping its own label, without
    /// allocating (a live view's copy, ten times a second).
    pub fn set_to(&mut self, o: &TargetStats) {
        self.completed = o.completed;
        self.ok = o.ok;
        self.failures = o.failures;
        self.unsent = o.unsent;
        // Same bounds on both sides (every TargetStats' histogram is a second
        // histogram): copying cannot fail.
        let _ = self.latency.set_to(&o.latency);
        match (&mut self.busy, &o.busy) {
            (Some(a), Some(b)) => {
                let _ = a.set_to(b);
            }
            (a, b) => a.clone_from(b),
        }
    }

    /// Adds `o`'s counts and latency (same label, another worker or shard); `None` when a
    /// count would pass `u64::MAX`. The busy time is kept only when both have it (a shard
    /// without it leaves the sum without it: a part would pass for the whole).
    pub fn add(&mut self, o: &TargetStats) -> Option<()> {
        self.completed = self.completed.checked_add(o.completed)?;
        self.ok = self.ok.checked_add(o.ok)?;
        self.unsent = self.unsent.checked_add(o.unsent)?;
        for (a, b) in self.failures.0.iter_mut().zip(o.failures.0) {
            *a = a.checked_add(b)?;
        }
        match (&mut self.busy, &o.busy) {
            (Some(a), Some(b)) => a.add(b).ok()?,
            (a, _) => *a = None,
        }
        self.latency.add(&o.latency).ok()
    }
}

/// Everything one load run measured, merged across worker threads.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Wall-clock time the measured run started.
    pub started: SystemTime,
    /// From the start to the end of the run (the last answer, or the deadline).
    pub duration: Duration,
    /// Requests, failures, status codes, bytes, connections.
    pub counts: Counts,
    /// Latency, raw latency, connect, waiting, processing and connection setup (µs).
    pub histograms: Histograms,
    /// One entry per second of the run.
    pub series: Vec<SecondStats>,
    /// A uniform reservoir of samples (or every request with `Record::all`), by start time.
    pub samples: Vec<Sample>,
    /// The first response seen.
    pub first_response: Option<FirstResponse>,
    /// The generator's own cost.
    pub generator: GeneratorStats,
    /// The schedule's keeping, in rate mode.
    pub schedule: Option<ScheduleStats>,
    /// Ctrl-C (or the caller) stopped the run early.
    pub interrupted: bool,
    /// What the user must know, derived from the fields above by
    /// `shootout_analysis::load_warnings` (the HTTP/2 streams limit, a fact, is recorded
    /// here by [`RunResult::note_streams_limited`]).
    pub warnings: Vec<Warning>,
    /// Per entry of a request list of 2 to
    /// [`MAX_REPORTED_ENTRIES`](crate::requests::MAX_REPORTED_ENTRIES) entries, in list
    /// order; empty otherwise.
    pub targets: Vec<TargetStats>,
    /// Journeys (`--journey`): per journey of the file, in file order, those that ended
    /// (`completed`), those whose every step was ok (`ok`), and how long they took from
    /// their first step's due time to their last answer, think times included
    /// (`latency`, µs). Their steps are [`RunResult::targets`]. Empty without journeys.
    pub journeys: Vec<TargetStats>,
    /// What the kernel counted of full listen queues during the run, when the server ran
    /// on this machine (its network namespace); `None` when not measured (a remote
    /// server, no `/proc/net/netstat`, or results from before it was measured).
    pub listen: Option<ListenQueue>,
    /// `--until`: the conditions the run was to meet, whether it met them (and ended
    /// there) and what it read last; `None` without conditions.
    pub until: Option<crate::until::UntilOutcome>,
    /// `--warmup auto` (a plan's `warmup = "auto"`): how long the warm-up before the run
    /// lasted and whether it ended level; `None` for a fixed warm-up, or none.
    pub warm_up: Option<WarmedUp>,
    /// A streaming gRPC run: its calls and the timing of their replies; `None` otherwise.
    pub stream: Option<Box<StreamStats>>,
    /// The age of every request still in flight when the run ended (µs, in
    /// [`crate::latency_histogram`]'s bounds), from its start as its latency counts it
    /// (its due time in rate mode, else its send) to the end: those written or queued on a
    /// connection ([`Counts::aborted`]) and, in rate mode, those due that no connection had
    /// taken yet (`schedule.due − schedule.sent`). Had it been answered, a request's
    /// latency would have been at least its age. `None` where not known: results and
    /// stores from before shootout measured it (never read as none in flight).
    pub in_flight_at_end: Option<Histogram<u64>>,
}

/// What a streaming gRPC run measured of its calls, beside the units the counts count
/// (each reply of a server stream is a unit, as each message is over WebSocket; each
/// message of a bidirectional stream and its reply).
#[derive(Debug, Clone)]
pub struct StreamStats {
    /// The method's shape: `server` (one request, a stream of replies), `client` (a
    /// stream of messages, one reply) or `bidi` (a stream of messages, each answered in
    /// order by a reply).
    pub shape: &'static str,
    /// Calls that ended well (the server's OK, or cancelled by the client's limit).
    pub calls_ok: u64,
    /// Of those, calls the client cancelled (RST_STREAM CANCEL) at its limit
    /// (`--grpc-stream-messages`, `--grpc-stream-duration`): its choice, not a failure.
    pub cancelled: u64,
    /// Replies read, whole and decoded, as expected (bidi: each matched to its message).
    pub replies: u64,
    /// Client streaming: the messages each call sends (`--grpc-stream-messages`); bidi:
    /// the messages each call sends when a count bounds it (0 when a duration does).
    pub messages_per_call: u32,
    /// From each call's start (its due time in rate mode) to its first reply (µs).
    pub first_reply: Histogram<u64>,
    /// Between consecutive replies of a call (µs); 0 for replies read at once.
    pub gaps: Histogram<u64>,
    /// Bidi: messages sent.
    pub sent: u64,
    /// Bidi: replies that came with no message outstanding (each call that had one
    /// fails once as `grpc_unmatched`).
    pub unmatched: u64,
    /// Bidi: messages sent that no reply answered before their call ended (each call
    /// that left one fails once, as `grpc_unanswered` or its own fault).
    pub unanswered: u64,
}

impl StreamStats {
    /// Nothing measured yet, for a method of `shape`.
    pub fn new(shape: &'static str) -> StreamStats {
        StreamStats {
            shape,
            calls_ok: 0,
            cancelled: 0,
            replies: 0,
            messages_per_call: 0,
            first_reply: crate::histograms::latency_histogram(),
            gaps: crate::histograms::latency_histogram(),
            sent: 0,
            unmatched: 0,
            unanswered: 0,
        }
    }

    /// Adds `o`'s counts and histograms (another worker's).
    pub fn add(&mut self, o: &StreamStats) {
        self.calls_ok += o.calls_ok;
        self.cancelled += o.cancelled;
        self.replies += o.replies;
        self.messages_per_call = self.messages_per_call.max(o.messages_per_call);
        self.sent += o.sent;
        self.unmatched += o.unmatched;
        self.unanswered += o.unanswered;
        // Same bounds on both sides: adding cannot fail.
        let _ = self.first_reply.add(&o.first_reply);
        let _ = self.gaps.add(&o.gaps);
    }
}

/// How an automatic warm-up went: it lasted until the per-second series (answers a second
/// and p99) were level, at most [`WarmedUp::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarmedUp {
    /// How long it lasted.
    pub took: Duration,
    /// It ended because the series were level; false: it reached [`WarmedUp::MAX`] (or
    /// was stopped) first, and the measured run went on anyway.
    pub level: bool,
}

impl WarmedUp {
    /// The most an automatic warm-up lasts: at it, the measured run begins, flagged.
    pub const MAX: Duration = Duration::from_secs(60);
}

/// The kernel's count of connections a full listen queue turned away during a run, in the
/// network namespace shootout ran in (`/proc/net/netstat`, `TcpExt`): every listener of
/// that namespace is counted, the server's and any other. A client whose handshake is
/// dropped retries its SYN after a second, which is why connect times of a second or more
/// are the sign of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListenQueue {
    /// `ListenOverflows`: handshakes that completed when the accept queue was full.
    pub overflows: u64,
    /// `ListenDrops`: connection attempts a listener dropped (the overflows among them,
    /// and SYNs dropped for other reasons, such as memory).
    pub drops: u64,
    /// The server's accept queue sampled through the run (its listening sockets on the
    /// target's port only); absent where it was not sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<AcceptWaiting>,
}

/// Whose listen queue the kernel's counts ([`ListenQueue`]) were, told by the server's own
/// accept queue sampled meanwhile: the counts are the network namespace's, every
/// listener's together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListenBlame {
    /// The server's queue was seen at its backlog: the overflows are (at least in part)
    /// the server's.
    Server,
    /// The server's queue came past half its backlog but was not seen at it: a 10 ms
    /// sample can miss a queue full for a moment, so the overflows may be the server's.
    Uncertain,
    /// The server's queue never came past half its backlog: the overflows were other
    /// listeners' of this machine, not the server's.
    Others,
    /// The server's queue was not sampled (or its backlog not read): the counts cannot
    /// be told apart.
    Unmeasured,
}

impl ListenQueue {
    /// Whose the counted overflows were ([`ListenBlame`]).
    pub fn blame(&self) -> ListenBlame {
        match self.accept {
            Some(a) if a.full > 0 => ListenBlame::Server,
            Some(AcceptWaiting {
                backlog: Some(b),
                most,
                ..
            }) if most.saturating_mul(2) > b => ListenBlame::Uncertain,
            Some(AcceptWaiting {
                backlog: Some(_), ..
            }) => ListenBlame::Others,
            _ => ListenBlame::Unmeasured,
        }
    }
}

/// Samples of a server's accept queue: connections whose handshake the kernel completed
/// and that the server had not taken yet, read at even intervals through a run. Their
/// mean is the time-average of the queue, so by Little's law the mean time a connection
/// waited there is that mean times the run's length over the connections opened
/// ([`AcceptWaiting::mean_wait`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptWaiting {
    /// Samples taken.
    pub samples: u64,
    /// Samples that found at least one connection waiting.
    pub waited: u64,
    /// The connections waiting, summed over the samples.
    pub total: u64,
    /// The most found waiting at once.
    pub most: u64,
    /// The queue's limit: the backlog of the port's listening sockets (`listen()`'s
    /// argument, capped by `net.core.somaxconn`), summed as the queue is; the largest
    /// seen. Absent in files and stores written before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u64>,
    /// Samples that found a listening socket of the port with its queue at its backlog
    /// (or past it: the kernel takes one more before it turns connections away).
    #[serde(default)]
    pub full: u64,
}

/// One reading of a port's accept queue: the connections waiting, summed over its
/// listening sockets, their backlogs summed, and whether any socket's queue was at its
/// backlog.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueReading {
    /// Connections waiting to be accepted.
    pub waiting: u64,
    /// The backlogs of the listening sockets.
    pub backlog: u64,
    /// A listening socket's queue was at its backlog.
    pub full: bool,
}

impl AcceptWaiting {
    /// One sample of the queue.
    pub fn add(&mut self, q: QueueReading) {
        self.samples += 1;
        self.waited += u64::from(q.waiting > 0);
        self.total = self.total.saturating_add(q.waiting);
        self.most = self.most.max(q.waiting);
        self.backlog = Some(self.backlog.map_or(q.backlog, |b| b.max(q.backlog)));
        self.full += u64::from(q.full);
    }

    /// Two watches' samples together (shards of one run).
    pub fn merged(self, o: AcceptWaiting) -> AcceptWaiting {
        AcceptWaiting {
            samples: self.samples + o.samples,
            waited: self.waited + o.waited,
            total: self.total.saturating_add(o.total),
            most: self.most.max(o.most),
            backlog: match (self.backlog, o.backlog) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
            full: self.full.saturating_add(o.full),
        }
    }

    /// The mean number of connections waiting.
    pub fn mean(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.total as f64 / self.samples as f64
        }
    }

    /// How long a connection waited to be accepted on average, over a run of `duration`
    /// that opened `connections` (Little's law: the queue's mean length over the rate at
    /// which connections arrived); `None` without connections.
    pub fn mean_wait(&self, duration: Duration, connections: u64) -> Option<Duration> {
        (connections > 0 && self.samples > 0).then(|| {
            Duration::from_secs_f64(self.mean() * duration.as_secs_f64() / connections as f64)
        })
    }
}

impl RunResult {
    /// A run of `duration` from `started` that measured nothing: empty histograms and
    /// counts, no samples, no warnings (a base for results built field by field).
    pub fn empty(started: SystemTime, duration: Duration) -> Self {
        Self::with_histograms(started, duration, Histograms::new())
    }

    /// The same, with `histograms` (a reader that decoded them builds no empty ones to
    /// drop: six of 184 KiB each).
    pub fn with_histograms(
        started: SystemTime,
        duration: Duration,
        histograms: Histograms,
    ) -> Self {
        RunResult {
            started,
            duration,
            counts: Counts::default(),
            histograms,
            series: Vec::new(),
            samples: Vec::new(),
            first_response: None,
            generator: GeneratorStats::default(),
            schedule: None,
            interrupted: false,
            warnings: Vec::new(),
            targets: Vec::new(),
            journeys: Vec::new(),
            listen: None,
            until: None,
            warm_up: None,
            stream: None,
            in_flight_at_end: None,
        }
    }

    /// Requests in flight when the run ended that were not yet sent: rate mode's requests
    /// due that no connection had taken ([`RunResult::in_flight_at_end`] holds them beside
    /// [`Counts::aborted`]); 0 where the ages are not known.
    pub fn unsent_at_end(&self) -> u64 {
        self.in_flight_at_end
            .as_ref()
            .map_or(0, |h| h.len().saturating_sub(self.counts.aborted))
    }

    /// Completed requests per second of run time.
    pub fn rps(&self) -> f64 {
        per_second(self.counts.completed, self.duration)
    }

    /// Good answers (status and body as expected) per second of run time: what a
    /// comparison of servers must use, or a server answering 502 fast looks fast.
    pub fn ok_rps(&self) -> f64 {
        per_second(self.counts.ok, self.duration)
    }

    /// Generator CPU per completed request (µs).
    pub fn cpu_us_per_request(&self) -> f64 {
        self.generator.cpu().as_secs_f64() * 1e6 / self.counts.completed.max(1) as f64
    }
}

impl RunResult {
    /// HTTP/2: records the fact that a server allowed fewer concurrent streams per
    /// connection (`allowed`, the lowest announced) than were `asked` for, as
    /// [`Warning::StreamsLimited`]; nothing when it allowed as many.
    pub fn note_streams_limited(&mut self, asked: u64, allowed: Option<u64>) {
        if let Some(allowed) = allowed.filter(|&a| a < asked) {
            self.warnings
                .push(Warning::StreamsLimited { asked, allowed });
        }
    }

    /// HTTP/2: the lowest concurrency a server allowed below the streams asked for, as
    /// [`Warning::StreamsLimited`] holds it (`None` without that warning).
    pub fn streams_allowed(&self) -> Option<u64> {
        self.warnings.iter().find_map(|w| match w {
            Warning::StreamsLimited { allowed, .. } => Some(*allowed),
            _ => None,
        })
    }
}

/// `count / duration` in events per second (0 for a zero duration).
pub fn per_second(count: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        count as f64 / s
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn http3_error_codes_have_their_rfc_names() {
        assert_eq!(h3_error_name(0x100), Some("H3_NO_ERROR"));
        assert_eq!(h3_error_name(0x10c), Some("H3_REQUEST_CANCELLED"));
        assert_eq!(h3_error_name(0x110), Some("H3_VERSION_FALLBACK"));
        assert_eq!(h3_error_name(0x200), Some("QPACK_DECOMPRESSION_FAILED"));
        assert_eq!(h3_error_name(0x202), Some("QPACK_DECODER_STREAM_ERROR"));
        assert_eq!(h3_error_name(0x111), None);
        assert_eq!(h3_error_name(8), None);
    }

    /// The kernel's counts are the machine's: the server is blamed only when its own
    /// queue was seen at its backlog; a queue that stayed at half of it or under clears
    /// it, and one that was not sampled leaves it open.
    #[test]
    fn a_listen_overflow_is_the_servers_only_when_its_queue_was_seen_at_its_backlog() {
        let q = |accept| ListenQueue {
            overflows: 7,
            drops: 9,
            accept,
        };
        let seen = |most, backlog, full| {
            Some(AcceptWaiting {
                samples: 100,
                waited: 50,
                total: 200,
                most,
                backlog,
                full,
            })
        };
        assert_eq!(q(None).blame(), ListenBlame::Unmeasured);
        // Sampled before the backlog was read (an older file): no telling.
        assert_eq!(q(seen(3, None, 0)).blame(), ListenBlame::Unmeasured);
        assert_eq!(q(seen(2, Some(1), 4)).blame(), ListenBlame::Server);
        assert_eq!(q(seen(65, Some(128), 0)).blame(), ListenBlame::Uncertain);
        assert_eq!(q(seen(64, Some(128), 0)).blame(), ListenBlame::Others);
        assert_eq!(q(seen(0, Some(4096), 0)).blame(), ListenBlame::Others);
        let text = |l: ListenQueue| {
            Warning::ListenOverflowed {
                overflows: l.overflows,
                drops: l.drops,
                whose: l.blame(),
                accept: l.accept,
            }
            .to_string()
        };
        let ours = text(q(seen(2, Some(1), 4)));
        assert!(
            ours.starts_with("the server's listen queue overflowed 7 times"),
            "{ours}"
        );
        assert!(
            ours.contains("at its backlog of 1 in 4 of 100 samples"),
            "{ours}"
        );
        for l in [
            q(None),
            q(seen(65, Some(128), 0)),
            q(seen(0, Some(4096), 0)),
        ] {
            let t = text(l);
            assert!(!t.contains("the server's listen queue overflowed"), "{t}");
            assert!(
                t.starts_with("listen queues on this machine overflowed 7 times"),
                "{t}"
            );
        }
        let others = text(q(seen(0, Some(4096), 0)));
        assert!(
            others.contains("never came near its backlog of 4096")
                && others.contains("may be other processes'"),
            "{others}"
        );
        // Shards: the samples at the backlog add up; the backlog is the largest.
        let a = seen(2, Some(1), 4).unwrap();
        let b = seen(9, Some(16), 0).unwrap();
        let m = a.merged(b);
        assert_eq!((m.full, m.backlog, m.most), (4, Some(16), 9));
        assert_eq!(a.merged(AcceptWaiting::default()).backlog, Some(1));
        let mut w = AcceptWaiting::default();
        w.add(QueueReading {
            waiting: 2,
            backlog: 1,
            full: true,
        });
        w.add(QueueReading {
            waiting: 0,
            backlog: 1,
            full: false,
        });
        assert_eq!(
            (w.samples, w.waited, w.most, w.backlog, w.full),
            (2, 1, 2, Some(1), 1)
        );
    }

    #[test]
    fn reset_codes_past_the_limit_share_one_bucket() {
        let mut c = Counts::default();
        for code in 0..100u32 {
            c.count_reset(code);
        }
        c.count_reset(3);
        assert_eq!(c.stream_resets.len(), MAX_RESET_CODES + 1);
        assert_eq!(
            c.stream_resets.get(&3),
            Some(&2),
            "a known code keeps counting"
        );
        assert_eq!(
            c.stream_resets.get(&OTHER_RESET_CODES),
            Some(&(100 - MAX_RESET_CODES as u64))
        );
    }
    use super::*;
    use crate::histograms::latency_histogram;

    /// "1 connections were still opening" read as a slip: one is said as one.
    #[test]
    fn one_connection_still_opening_is_said_in_the_singular() {
        let one = Warning::ConnectionsOpening { count: 1 }.to_string();
        assert!(
            one.starts_with("1 connection was still opening at the end"),
            "{one}"
        );
        let three = Warning::ConnectionsOpening { count: 3 }.to_string();
        assert!(
            three.starts_with("3 connections were still opening at the end"),
            "{three}"
        );
    }

    #[test]
    fn warning_kinds_are_their_serde_tags() {
        let all = [
            Warning::GeneratorSaturated {
                busiest_thread: 0.95,
            },
            Warning::ScheduleNotKept {
                target_rps: 10.0,
                achieved_rps: 5.0,
                late: 2,
                waited: 1,
                capped: true,
                starved: None,
                journeys: false,
                calls: false,
            },
            Warning::ConnectFailed { count: 1 },
            Warning::Failures {
                failed: 1,
                completed: 2,
            },
            Warning::SlowConnects {
                count: 1,
                upgrade: false,
            },
            Warning::NothingCompleted,
            Warning::Unserved {
                connections: 8,
                served: 2.0,
                rps: 1.0,
                mean_ms: 2.0,
                calls: false,
            },
            Warning::Retried { count: 1 },
            Warning::Dropped { count: 1 },
            Warning::StreamsLimited {
                asked: 100,
                allowed: 1,
            },
            Warning::ListenOverflowed {
                overflows: 3,
                drops: 3,
                whose: ListenBlame::Others,
                accept: Some(AcceptWaiting {
                    samples: 4,
                    backlog: Some(8),
                    ..AcceptWaiting::default()
                }),
            },
            Warning::Unaccepted {
                most: 5,
                share: 0.5,
                mean_wait_ms: 12.0,
            },
        ];
        for w in all {
            let text = toml::to_string(&w).unwrap();
            assert!(
                text.lines()
                    .any(|l| l == format!("kind = \"{}\"", w.kind())),
                "{text}"
            );
        }
    }

    #[test]
    fn counts_merge_adds_every_field() {
        let mut a = Counts {
            completed: 3,
            ok: 2,
            ..Default::default()
        };
        a.failures[FailureKind::Status] = 1;
        a.status.insert(200, 2);
        a.status.insert(502, 1);
        a.stream_resets.insert(2, 1);
        a.goaways = 1;
        let mut b = a.clone();
        b.failures[FailureKind::Timeout] = 4;
        b.status.insert(404, 1);
        b.stream_resets.insert(7, 3);
        a.merge(&b);
        assert_eq!(a.stream_resets, BTreeMap::from([(2, 2), (7, 3)]));
        assert_eq!(a.goaways, 2);
        assert_eq!(a.completed, 6);
        assert_eq!(a.failures[FailureKind::Status], 2);
        assert_eq!(a.failures[FailureKind::Timeout], 4);
        assert_eq!(a.failed(), 6);
        assert_eq!(a.failures.to_string(), "4 timeout, 2 status");
        assert_eq!(FailureCounts::default().to_string(), "0");
        assert_eq!(a.status[&200], 4);
        assert_eq!(a.status[&404], 1);
        let mut checked = b.clone();
        checked.checked_merge(&b).unwrap();
        let mut plain = b.clone();
        plain.merge(&b);
        assert_eq!(checked, plain, "both add every field alike");
    }

    /// Counts that overflow when summed wrapped (2^64 − 10 + 100 read back as 90).
    #[test]
    fn a_checked_merge_names_the_field_that_would_overflow_and_changes_nothing() {
        let mut a = Counts {
            completed: u64::MAX - 10,
            ..Default::default()
        };
        a.status.insert(200, 5);
        let b = Counts {
            completed: 100,
            ..Default::default()
        };
        let before = a.clone();
        assert_eq!(a.checked_merge(&b), Err("completed"));
        assert_eq!(a, before);
        let mut c = Counts::default();
        c.failures[FailureKind::Reset] = u64::MAX;
        let mut d = Counts::default();
        d.failures[FailureKind::Reset] = 1;
        assert_eq!(c.checked_merge(&d), Err("failures"));
    }

    #[test]
    fn histogram_merge_keeps_every_value() {
        let mut a = latency_histogram();
        let mut b = latency_histogram();
        for v in 1..=1000 {
            a.record(v).unwrap();
            b.record(v * 1000).unwrap();
        }
        a += &b;
        assert_eq!(a.len(), 2000);
        assert_eq!(a.min(), 1);
        assert!(a.max() >= 999_000 && a.max() <= 1_001_000);
        let s = LatencySummary::of(&a);
        assert!((s.p50 - 1.0).abs() < 0.01, "{s:?}");
    }

    #[test]
    fn a_schedule_not_kept_names_the_server_or_the_generator_by_who_was_late() {
        let not_kept = |late, waited, capped| {
            Warning::ScheduleNotKept {
                target_rps: 1000.0,
                achieved_rps: 800.0,
                late,
                waited,
                capped,
                starved: None,
                journeys: false,
                calls: false,
            }
            .to_string()
        };
        // Most late sends waited for a connection with the cap reached: every one was
        // waiting on the server, and the advice is the cap.
        let server = not_kept(100, 90, true);
        assert!(
            server.contains("100 requests sent late, 90 of them because every connection was waiting on the server and the cap on connections was reached: the server could not keep up")
                && server.contains("--max-connections")
                && !server.contains("--threads"),
            "{server}"
        );
        // Below the cap, they waited for connections the server was slow to take.
        let refusing = not_kept(100, 90, false);
        assert!(
            refusing.contains("turned new ones away or was slow to accept them")
                && !refusing.contains("--max-connections"),
            "{refusing}"
        );
        // Most were late with a connection free: the generator's loop.
        let generator = not_kept(100, 10, false);
        assert!(
            generator.contains("90 of them while a connection was free: shootout's own loop fell behind (add --threads")
                && !generator.contains("waiting on the server"),
            "{generator}"
        );
        // The same, with the loop idle most of the time: its threads waited for a CPU,
        // and the loop is not blamed.
        let starved = Warning::ScheduleNotKept {
            target_rps: 1000.0,
            achieved_rps: 800.0,
            late: 100,
            waited: 10,
            capped: false,
            starved: Some(0.14),
            journeys: false,
            calls: false,
        }
        .to_string();
        assert!(
            starved.contains("90 of them while a connection was free, though shootout's busiest thread was busy only 14% of the time: its threads were ready but waited for a CPU")
                && !starved.contains("own loop fell behind")
                && !starved.contains("--threads"),
            "{starved}"
        );
        // A journey run's schedule starts journeys: its rates and late ones say so.
        let journeys = Warning::ScheduleNotKept {
            target_rps: 80.0,
            achieved_rps: 79.0,
            late: 17,
            waited: 0,
            capped: false,
            starved: None,
            journeys: true,
            calls: false,
        }
        .to_string();
        assert!(
            journeys.starts_with("the schedule of 80 journeys/s was not kept: 79 journeys/s started, 17 journeys started late, 17 of them while a connection was free")
                && !journeys.contains("req/s"),
            "{journeys}"
        );
        // A gRPC run's schedule paces calls: its rates and late ones are calls.
        let calls = Warning::ScheduleNotKept {
            target_rps: 500.0,
            achieved_rps: 495.0,
            late: 60,
            waited: 0,
            capped: false,
            starved: None,
            journeys: false,
            calls: true,
        }
        .to_string();
        assert!(
            calls.starts_with("the schedule of 500 calls/s was not kept: 495 calls/s sent, 60 calls sent late, 60 of them while a connection was free")
                && !calls.contains("req/s"),
            "{calls}"
        );
    }
}
