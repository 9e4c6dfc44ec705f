//! Fuzz targets of the parsers of what a server sends (the HTTP/1.1 response parser
//! `shootout_engine::ResponseParser`, the HPACK decoder, the HTTP/2 connection, the HTTP/3
//! connection (frames and QPACK), the
//! WebSocket connection's handshake and frame decoder, a gRPC reply's framing and its
//! messages' decoder, a gRPC server's reflection replies) and of the
//! files a user is handed: the result-file reader (`shootout_model::SavedRun::parse`, with
//! `merge`), the request-list reader (`shootout_model::requests::RequestList::parse`), the
//! WebSocket message-list reader (`shootout_model::messages::MessageList::parse`) and
//! the plan reader (`shootout_model::plan::parse`), the journey file reader
//! (`shootout_model::journey::parse`) and a journey's templates and captures fed a server's
//! answers (`shootout_engine::journey::User`); and of what a peer on the start
//! barrier's port sends (`shootout_model::barrier`); and a store file's sample reservoirs
//! (`shootout_store`'s check and decoder).
//!
//! Each target is a plain function of the input bytes that panics when an invariant
//! breaks. The libFuzzer binaries in `fuzz_targets/` call them under coverage guidance;
//! the smoke test in `tests/` replays the corpus and a bounded number of generated inputs
//! through the same functions, so the targets never rot. See docs/fuzzing.md.

pub mod alloc;
pub mod barrier;
pub mod chunked;
pub mod grpc_reflection;
pub mod grpc_reply;
pub mod h1_connection;
pub mod h2_connection;
pub mod h3;
pub mod head_differential;
pub mod hpack;
pub mod journey_answer;
pub mod journey_file;
pub mod message_list;
pub mod plan;
pub mod request_list;
pub mod response;
pub mod result_file;
pub mod store_samples;
pub mod websocket;

/// Longest head (or chunk line) the parser accepts, in bytes.
pub const MAX_HEAD: usize = 64 * 1024;
/// Most header fields in one head the parser accepts.
pub const HEADER_LIMIT: usize = 256;

/// Deviations from RFC 9112 that are known and reported but not fixed yet. The targets
/// tolerate an input that shows one of these (so a long run hunts for new ones) unless
/// `SHOOTOUT_FUZZ_STRICT` is set. Remove an entry once the parser is fixed: the seeds in
/// `corpus/` that show it then make the smoke test fail if it comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// A head or chunk line longer than `MAX_HEAD` is accepted when it arrives in one
    /// read and rejected when it arrives in several.
    LongLineSplit,
    /// A 101 response to a request that asked for no upgrade is taken as a final,
    /// bodiless response.
    Unasked101,
    /// Status code 000 is reported as status 0, the value that means "no head yet".
    StatusZero,
    /// `Transfer-Encoding` whose last coding is not chunked, with a `Content-Length`:
    /// framed by the length instead of by the close (RFC 9112 §6.3 rule 4).
    TeNotChunkedUsesLength,
    /// Two `Connection` fields, `close` then `keep-alive`: the later one wins and the
    /// connection is taken as persistent (RFC 9112 §9.6: `close` anywhere ends it).
    ConnectionCloseOverridden,
    /// A chunk-size line with whitespace before the CRLF, an empty extension (`5;`), or
    /// an extension that is not `token [= token / quoted-string]` is accepted.
    LaxChunkExtension,
    /// A chunk line that arrives over several reads adds only its last read's bytes to
    /// `head_len`, so `head_len` depends on the split (and `head_len + body_len` falls
    /// short of the bytes consumed).
    ChunkLineHeadLen,
    /// An empty element in `Transfer-Encoding` (`chunked,` or a second, empty field
    /// line) hides the final chunked coding: the body is read until the close instead
    /// (RFC 9110 §5.6.1: empty list elements are ignored).
    TeEmptyElement,
}

/// The deviations the current parser still shows.
pub const KNOWN: &[Known] = &[];

/// True when `k` is a listed deviation and not made strict: the caller then lets the
/// input pass. `SHOOTOUT_FUZZ_STRICT=1` makes all strict, `SHOOTOUT_FUZZ_STRICT=A,B` the
/// deviations named (as in `Known`).
pub fn tolerated(k: Known) -> bool {
    KNOWN.contains(&k) && !strict(k)
}

fn strict(k: Known) -> bool {
    use std::sync::OnceLock;
    static STRICT: OnceLock<Option<String>> = OnceLock::new();
    let Some(v) = STRICT.get_or_init(|| std::env::var("SHOOTOUT_FUZZ_STRICT").ok()) else {
        return false;
    };
    v == "1" || v.split(',').any(|name| name.trim() == format!("{k:?}"))
}

/// Field values of `name` in a parsed head, in order.
pub(crate) fn values<'a>(
    headers: &'a [httparse::Header<'a>],
    name: &'a str,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    headers
        .iter()
        .filter(move |h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value)
}

/// The non-empty elements of a comma-separated list field (RFC 9110 §5.6.1), over all its
/// field lines.
pub(crate) fn list_elements<'a>(
    headers: &'a [httparse::Header<'a>],
    name: &'a str,
) -> Vec<&'a [u8]> {
    values(headers, name)
        .flat_map(|v| v.split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
        .collect()
}
