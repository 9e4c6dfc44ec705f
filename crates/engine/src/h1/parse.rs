//! Incremental HTTP/1.1 response parsing: the head with `httparse`, the body framing by
//! hand (Content-Length, chunked with extensions and trailers, close-delimited, and the
//! bodiless cases: HEAD, 1xx, 204, 304), and an optional streaming search of the body for
//! `--expect-body-contains`.
//!
//! Limits: a head (interim responses included) of at most [`MAX_HEAD`] bytes and
//! [`MAX_HEADERS`] header lines, as common servers accept; chunk-size and trailer lines
//! follow RFC 9112 §7.1 strictly; an obs-fold in a head or a trailer reads as spaces
//! (§5.2), a bare LF ends a head line (§2.2), a bare CR is invalid. Nothing is buffered
//! beyond one head or one chunk line, plus the needle's length of body when searching,
//! however long the body.
//!
//! Framing is written here rather than taken from a crate because the hot path needs to
//! consume bytes in place from a buffer shared by all connections of a worker, keep no
//! body unless an expectation needs it, and tell apart "needs more bytes", "complete",
//! "peer closed early" and "the bytes contradict the framing" — the distinctions the
//! failure classes rest on. Interim 1xx responses are skipped, never reported.

use crate::body_search::BodySearch;
use crate::codec::decimal;

/// How a response ended, or why it cannot be one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// The bytes are not an HTTP response, or the framing is broken.
    Malformed,
    /// The peer closed the connection before the response was complete.
    Closed,
}

/// The result of feeding bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response is not complete yet: feed more.
    NeedMore,
    /// The response is complete; `consumed` bytes of the last input belonged to it.
    Done {
        /// Bytes of the input that belonged to this response.
        consumed: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading the hex size line (with optional extensions) up to CRLF.
    Size,
    /// Reading this many data bytes.
    Data(u64),
    /// Expecting the CRLF after chunk data.
    DataEnd,
    /// Reading trailer lines until an empty one; `true` once a field line was read, which
    /// a line starting with a space or tab then continues (obs-fold, RFC 9112 §5.2).
    Trailers(bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
    Done,
}

/// Longest head (or chunk-size or trailer line) accepted, in bytes.
pub const MAX_HEAD: usize = 64 * 1024;
/// Most bytes of the `Server` header kept.
const MAX_SERVER: usize = 256;
/// Most header lines in one head.
pub const MAX_HEADERS: usize = 256;
/// Header lines parsed on the fast path.
const FAST_HEADERS: usize = 64;

/// Parses one response at a time from the bytes of one connection.
#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    /// Head bytes kept across reads until the head is complete; also the line buffer of the
    /// chunked decoder.
    pending: Vec<u8>,
    head_request: bool,
    /// What `--expect-body-contains` looks for, if anything.
    search: BodySearch,
    want_server: bool,
    /// Copy the next final response's head into [`ResponseParser::head`] (`-v 2`).
    want_head: bool,
    /// Status of the final response (0 until its head is parsed).
    pub status: u16,
    /// The server closes the connection after this response.
    pub close: bool,
    /// Body bytes (decoded from chunked framing).
    pub body_len: u64,
    /// Head bytes, interim responses included.
    pub head_len: u64,
    /// The needle was found in the body (always false without a needle).
    pub matched: bool,
    /// The `Server` header, kept only when asked for.
    pub server: Option<String>,
    /// The head of a final response, as it arrived, kept only when asked for
    /// ([`ResponseParser::want_head`]).
    pub head: Option<Vec<u8>>,
    /// Bytes of this response seen so far (0: nothing arrived yet).
    pub seen: u64,
    /// Journeys: each final answer's head and its body's first bytes, kept for the
    /// user's captures and checks ([`ResponseParser::keep`]); `None` otherwise.
    pub kept: Option<Box<Kept>>,
}

/// What a parser keeps of each answer for a journey's user: the final head as it came
/// (at most [`MAX_HEAD`] bytes) and the first `body_max` bytes of the decoded body. The
/// buffers are reused from answer to answer.
#[derive(Debug, Default)]
pub struct Kept {
    /// The final response's head, status line to blank line.
    pub head: Vec<u8>,
    /// The decoded body's first bytes.
    pub body: Vec<u8>,
    /// How many body bytes to keep.
    pub body_max: usize,
}

impl crate::journey::Fields for Kept {
    fn each(&self, f: &mut dyn FnMut(&[u8], &[u8])) {
        crate::event_loop::users::Head(&self.head).each(f)
    }
}

impl ResponseParser {
    /// A parser for answers to `HEAD` (no body) or other requests; with a `needle`, each
    /// body is searched for it as it streams by ([`ResponseParser::matched`]).
    pub fn new(head_request: bool, needle: Option<&[u8]>) -> Self {
        ResponseParser {
            state: State::Head,
            pending: Vec::new(),
            head_request,
            search: BodySearch::new(needle),
            want_server: false,
            want_head: false,
            status: 0,
            close: false,
            body_len: 0,
            head_len: 0,
            matched: false,
            server: None,
            head: None,
            seen: 0,
            kept: None,
        }
    }

    /// Journeys: keep the next answers' heads and their bodies' first `body_max` bytes
    /// ([`ResponseParser::kept`]), and search their bodies for `needle` (the step's
    /// `body_contains`, rendered for its user) instead of the run's.
    pub fn keep(&mut self, body_max: usize, needle: Option<&[u8]>) {
        self.kept.get_or_insert_with(Box::default).body_max = body_max;
        self.search.set(needle);
    }

    /// Keep the `Server` header of the next response.
    pub fn want_server(&mut self) {
        self.want_server = true;
    }

    /// Keep a copy of the next final response's head (interim 1xx heads are skipped): a
    /// sample for `-v 2`, asked for a few times per run, never per request.
    pub fn want_head(&mut self) {
        self.want_head = true;
    }

    /// Gets ready for the answer to the next request, a `HEAD` (no body) or not.
    pub fn reset_for(&mut self, head_request: bool) {
        self.head_request = head_request;
        self.reset();
    }

    /// Gets ready for the next response on the same connection; buffers keep their capacity.
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.pending.clear();
        self.status = 0;
        self.close = false;
        self.body_len = 0;
        self.head_len = 0;
        self.search.reset();
        self.matched = false;
        self.seen = 0;
        if let Some(k) = self.kept.as_deref_mut() {
            k.head.clear();
            k.body.clear();
        }
    }

    /// Feeds bytes that arrived; call again with the rest when `Done` consumed less than
    /// all of them (that rest belongs to no request we sent).
    pub fn feed(&mut self, data: &[u8]) -> Result<Progress, ParseError> {
        self.seen += data.len() as u64;
        let mut i = 0;
        while i < data.len() {
            match self.state {
                State::Head => i += self.head(&data[i..])?,
                State::Length(left) => {
                    let take = left.min((data.len() - i) as u64) as usize;
                    self.body_bytes(&data[i..i + take]);
                    i += take;
                    self.state = if left == take as u64 {
                        State::Done
                    } else {
                        State::Length(left - take as u64)
                    };
                }
                State::Chunked(c) => i += self.chunked(c, &data[i..])?,
                State::UntilClose => {
                    self.body_bytes(&data[i..]);
                    i = data.len();
                }
                State::Done => break,
            }
            if self.state == State::Done {
                self.seen -= (data.len() - i) as u64;
                return Ok(Progress::Done { consumed: i });
            }
        }
        if self.state == State::Done {
            return Ok(Progress::Done { consumed: i });
        }
        Ok(Progress::NeedMore)
    }

    /// The peer closed the connection: completes a close-delimited body, else says why
    /// the response is broken.
    pub fn eof(&mut self) -> Result<(), ParseError> {
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                Ok(())
            }
            // A partial head kept without parsing: what it is decides the class, as it
            // would have had it arrived in one read.
            State::Head if !self.pending.is_empty() => match read_head(&self.pending, false) {
                Err(e) => Err(e),
                Ok(_) => Err(ParseError::Closed),
            },
            _ => Err(ParseError::Closed),
        }
    }

    fn body_bytes(&mut self, b: &[u8]) {
        self.body_len += b.len() as u64;
        self.search.feed(b);
        self.matched = self.search.matched;
        if let Some(k) = self.kept.as_deref_mut() {
            let room = k.body_max.saturating_sub(k.body.len()).min(b.len());
            k.body.extend_from_slice(&b[..room]);
        }
    }

    /// Parses the head from `pending` + `data`; returns the bytes of `data` used.
    fn head(&mut self, data: &[u8]) -> Result<usize, ParseError> {
        // Fast path: the whole head is in this read and nothing was pending.
        let (buf, from_pending): (&[u8], usize) = if self.pending.is_empty() {
            (data, 0)
        } else {
            let before = self.pending.len();
            self.pending.extend_from_slice(data);
            // Parsed again only once the blank line that ends a head may have arrived, so
            // a head trickled in small reads costs linear time, not quadratic.
            let fresh = &self.pending[before.saturating_sub(2)..];
            if self.pending.len() <= MAX_HEAD && !may_end_head(fresh) {
                return Ok(data.len());
            }
            (&self.pending, before)
        };
        match read_head(buf, self.want_server)? {
            Some((len, facts)) => {
                if self.want_head && !(100..200).contains(&facts.code) {
                    self.want_head = false;
                    self.head = Some(buf[..len].to_vec());
                }
                if let Some(k) = self.kept.as_deref_mut() {
                    if !(100..200).contains(&facts.code) {
                        k.head.clear();
                        k.head.extend_from_slice(&buf[..len]);
                    }
                }
                self.head_parsed(facts, len, from_pending)
            }
            None => {
                if from_pending == 0 {
                    self.pending.extend_from_slice(data);
                }
                Ok(data.len())
            }
        }
    }

    /// Takes a complete head of `len` bytes (of which `from_pending` were kept from earlier
    /// reads) into the parser's state; returns the bytes of this read it used.
    fn head_parsed(
        &mut self,
        facts: HeadFacts,
        len: usize,
        from_pending: usize,
    ) -> Result<usize, ParseError> {
        let HeadFacts {
            code,
            length,
            chunked,
            conn_close,
            server,
        } = facts;
        self.head_len += len as u64;
        let used = len - from_pending;
        self.pending.clear();
        if code == 101 {
            // shootout never asks to switch protocols, and cannot follow a switch: a 101 is
            // never a final answer (a proxy answering 101 must not look like a fast success).
            return Err(ParseError::Malformed);
        }
        if (100..200).contains(&code) {
            // An interim response (100 Continue, 103 Early Hints): the final one follows.
            return Ok(used);
        }
        self.status = code;
        self.close = conn_close;
        if server.is_some() {
            self.server = server;
            self.want_server = false;
        }
        self.state = if self.head_request || code == 204 || code == 304 {
            State::Done
        } else if chunked {
            State::Chunked(Chunk::Size)
        } else if let Some(l) = length {
            if l == 0 {
                State::Done
            } else {
                State::Length(l)
            }
        } else {
            self.close = true;
            State::UntilClose
        };
        Ok(used)
    }

    /// Decodes chunked framing; returns the bytes of `data` used.
    fn chunked(&mut self, c: Chunk, data: &[u8]) -> Result<usize, ParseError> {
        match c {
            Chunk::Data(left) => {
                let take = left.min(data.len() as u64) as usize;
                self.body_bytes(&data[..take]);
                self.state = State::Chunked(if left == take as u64 {
                    Chunk::DataEnd
                } else {
                    Chunk::Data(left - take as u64)
                });
                Ok(take)
            }
            Chunk::Size | Chunk::DataEnd | Chunk::Trailers(_) => {
                let Some(nl) = data.iter().position(|&b| b == b'\n') else {
                    self.pending.extend_from_slice(data);
                    if self.pending.len() > MAX_HEAD {
                        return Err(ParseError::Malformed);
                    }
                    return Ok(data.len());
                };
                self.pending.extend_from_slice(&data[..nl]);
                if self.pending.len() > MAX_HEAD {
                    return Err(ParseError::Malformed);
                }
                let line = self
                    .pending
                    .strip_suffix(b"\r")
                    .ok_or(ParseError::Malformed)?;
                let next = match c {
                    Chunk::DataEnd if line.is_empty() => State::Chunked(Chunk::Size),
                    Chunk::DataEnd => return Err(ParseError::Malformed),
                    Chunk::Trailers(_) if line.is_empty() => State::Done,
                    Chunk::Trailers(_) if field_line(line) => State::Chunked(Chunk::Trailers(true)),
                    Chunk::Trailers(true) if obs_fold(line) => {
                        State::Chunked(Chunk::Trailers(true))
                    }
                    Chunk::Trailers(_) => return Err(ParseError::Malformed),
                    _ => match chunk_size(line).ok_or(ParseError::Malformed)? {
                        0 => State::Chunked(Chunk::Trailers(false)),
                        n => State::Chunked(Chunk::Data(n)),
                    },
                };
                self.head_len += self.pending.len() as u64 + 1;
                self.pending.clear();
                self.state = next;
                Ok(nl + 1)
            }
        }
    }
}

/// Parses the response head at the start of `buf`: its length and what it says, `None`
/// while it is incomplete (and within [`MAX_HEAD`]), an error when it is not a head or
/// past the limits.
fn read_head(buf: &[u8], want_server: bool) -> Result<Option<(usize, HeadFacts)>, ParseError> {
    let mut headers = [httparse::EMPTY_HEADER; FAST_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    match head_syntax().parse_response(&mut resp, buf) {
        Err(httparse::Error::TooManyHeaders) => read_long_head(buf, want_server),
        parsed => head_outcome(parsed, buf.len(), &resp, want_server),
    }
}

/// [`read_head`] for a head of more than [`FAST_HEADERS`] lines: parsed again with room for
/// [`MAX_HEADERS`] (rare, so the common head pays for no larger array).
#[cold]
#[inline(never)]
fn read_long_head(buf: &[u8], want_server: bool) -> Result<Option<(usize, HeadFacts)>, ParseError> {
    let mut headers = [const { std::mem::MaybeUninit::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let parsed = head_syntax().parse_response_with_uninit_headers(&mut resp, buf, &mut headers);
    head_outcome(parsed, buf.len(), &resp, want_server)
}

/// httparse set as RFC 9112 §5.2 asks of a user agent: an obs-fold (a field line
/// continued on the next after a space or tab) is accepted. Its CR LF and whitespace stay
/// in the value, where every reading below takes them as whitespace: trimmed around a
/// Content-Length or a list element, and an element folded in two is no known token.
fn head_syntax() -> httparse::ParserConfig {
    let mut config = httparse::ParserConfig::default();
    config.allow_obsolete_multiline_headers_in_responses(true);
    config
}

fn head_outcome(
    parsed: httparse::Result<usize>,
    available: usize,
    resp: &httparse::Response,
    want_server: bool,
) -> Result<Option<(usize, HeadFacts)>, ParseError> {
    match parsed {
        Ok(httparse::Status::Complete(len)) if len <= MAX_HEAD => {
            Ok(Some((len, HeadFacts::of(resp, want_server)?)))
        }
        Ok(httparse::Status::Partial) if available <= MAX_HEAD => Ok(None),
        _ => Err(ParseError::Malformed),
    }
}

/// What a response head says about its framing, read from httparse's headers.
struct HeadFacts {
    code: u16,
    length: Option<u64>,
    chunked: bool,
    conn_close: bool,
    server: Option<String>,
}

impl HeadFacts {
    fn of(resp: &httparse::Response, want_server: bool) -> Result<HeadFacts, ParseError> {
        let code = resp.code.unwrap_or(0);
        if code < 100 {
            // Not a status code (RFC 9110 §15): the bytes are not an answer.
            return Err(ParseError::Malformed);
        }
        let http10 = resp.version == Some(0);
        let mut length: Option<u64> = None;
        // Transfer-Encoding present, and its final coding (empty list elements ignored,
        // RFC 9110 §5.6.1), over all its field lines.
        let mut transfer_encoding = false;
        let mut chunked = false;
        let (mut close, mut keep_alive) = (false, false);
        let mut server = None;
        for h in resp.headers.iter() {
            let name = h.name.as_bytes();
            if name.eq_ignore_ascii_case(b"content-length") {
                let v = decimal::parse(h.value).ok_or(ParseError::Malformed)?;
                if length.is_some_and(|l| l != v) {
                    return Err(ParseError::Malformed);
                }
                length = Some(v);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                // A field of empty elements only names no coding: as if absent.
                let mut codings = h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii);
                if let Some(last) = codings.rfind(|t| !t.is_empty()) {
                    transfer_encoding = true;
                    chunked = last.eq_ignore_ascii_case(b"chunked");
                }
            } else if name.eq_ignore_ascii_case(b"connection") {
                // `close` in any Connection field ends the connection (RFC 9112 §9.6).
                close |= has_token(h.value, b"close");
                keep_alive |= has_token(h.value, b"keep-alive");
            } else if want_server && name.eq_ignore_ascii_case(b"server") {
                // Kept for the report's first line only: a hostile 64 KiB value (three
                // times that once invalid UTF-8 is replaced) is cut to its first 256 bytes.
                // An obs-fold's CR LF becomes spaces (RFC 9112 §5.2).
                let kept = &h.value[..h.value.len().min(MAX_SERVER)];
                let unfolded = String::from_utf8_lossy(kept).replace(['\r', '\n'], " ");
                server = Some(unfolded);
            }
        }
        Ok(HeadFacts {
            code,
            // With a Transfer-Encoding, Content-Length does not frame the body; one whose
            // final coding is not chunked is read until the close (RFC 9112 §6.3).
            length: length.filter(|_| !transfer_encoding),
            chunked,
            conn_close: close || (http10 && !keep_alive),
            server,
        })
    }
}

/// True when `b` holds a line feed followed by another, or by CR LF: the end of a head.
fn may_end_head(b: &[u8]) -> bool {
    memchr::memchr_iter(b'\n', b).any(|i| matches!(&b[i + 1..], [b'\n', ..] | [b'\r', b'\n', ..]))
}

/// The size of a chunk from its size line without the CRLF, which RFC 9112 §7.1 spells
/// `1*HEXDIG *( BWS ";" BWS ext-name [ BWS "=" BWS ext-value ] )`; `None` when the line is
/// anything else (whitespace with no extension after it, an empty extension name, an
/// unclosed quoted value…) or the size does not fit in 60 bits.
fn chunk_size(line: &[u8]) -> Option<u64> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let (hex, ext) = line.split_at(digits);
    if digits == 0 || !chunk_extensions(ext) {
        return None;
    }
    let hex = &hex[hex.iter().take_while(|&&b| b == b'0').count()..];
    if hex.len() > 15 {
        return None;
    }
    hex.iter().try_fold(0u64, |n, &d| {
        Some(n * 16 + u64::from((d as char).to_digit(16)?))
    })
}

/// `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`.
fn chunk_extensions(mut s: &[u8]) -> bool {
    loop {
        if s.is_empty() {
            return true;
        }
        let Some(rest) = skip_ws(s).strip_prefix(b";") else {
            return false;
        };
        let rest = skip_ws(rest);
        let name = token_len(rest);
        if name == 0 {
            return false;
        }
        s = &rest[name..];
        if let Some(value) = skip_ws(s).strip_prefix(b"=") {
            let value = skip_ws(value);
            let len = if value.first() == Some(&b'"') {
                quoted_len(value)
            } else {
                token_len(value)
            };
            if len == 0 {
                return false;
            }
            s = &value[len..];
        }
    }
}

/// A trailer line: `token ":" OWS field-value OWS`, the value of visible characters,
/// spaces, tabs and obs-text (RFC 9112 §5, §7.1.2).
fn field_line(line: &[u8]) -> bool {
    let name = token_len(line);
    name > 0 && line.get(name) == Some(&b':') && field_value(&line[name + 1..])
}

/// The continuation of a field line: `1*( SP / HTAB )` then more of the value.
fn obs_fold(line: &[u8]) -> bool {
    matches!(line.first(), Some(b' ' | b'\t')) && field_value(line)
}

/// Visible characters, spaces, tabs and obs-text only (RFC 9110 §5.5).
fn field_value(v: &[u8]) -> bool {
    v.iter().all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f))
}

fn skip_ws(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

/// Length of the token (RFC 9110 §5.6.2) at the start of `s`.
fn token_len(s: &[u8]) -> usize {
    s.iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        .count()
}

/// Length of the quoted-string (RFC 9110 §5.6.4) at the start of `s`, quotes included;
/// 0 when it is not closed or holds a control character.
fn quoted_len(s: &[u8]) -> usize {
    let text = |b: u8| b == b'\t' || (b >= 0x20 && b != 0x7f);
    let mut i = 1;
    while let Some(&b) = s.get(i) {
        match b {
            b'"' => return i + 1,
            b'\\' if s.get(i + 1).is_some_and(|&c| text(c)) => i += 2,
            b'\\' => return 0,
            b if text(b) => i += 1,
            _ => return 0,
        }
    }
    0
}

fn has_token(v: &[u8], token: &[u8]) -> bool {
    v.split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journey's parser keeps the final head and at most `body_max` bytes of the
    /// decoded body, however long the body and however it is framed, and forgets both
    /// for the next answer.
    #[test]
    fn kept_answers_hold_the_head_and_only_a_prefix_of_the_body() {
        let mut p = ResponseParser::new(false, None);
        p.keep(16, None);
        let body = vec![b'y'; 1 << 20];
        let head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Length: 1048576\r\n\r\n";
        let mut input = head.to_vec();
        input.extend_from_slice(&body);
        for chunk in input.chunks(1000) {
            let _ = p.feed(chunk).unwrap();
        }
        let k = p.kept.as_deref().unwrap();
        assert!(k
            .head
            .starts_with(b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\n"));
        assert_eq!(k.body, vec![b'y'; 16]);
        assert_eq!(p.body_len, 1 << 20);
        p.reset();
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n20\r\nfghijklmnopqrstuvwxyzABCDEFGHIJK\r\n0\r\n\r\n";
        assert_eq!(
            p.feed(chunked).unwrap(),
            Progress::Done {
                consumed: chunked.len()
            }
        );
        let k = p.kept.as_deref().unwrap();
        assert_eq!(k.body, b"abcdefghijklmnop");
        assert!(k.head.starts_with(b"HTTP/1.1 200 OK\r\nTransfer-Encoding"));
    }

    /// Feeds `input` in pieces of `step` bytes; returns the parser and total consumed.
    fn feed_in_pieces(
        p: &mut ResponseParser,
        input: &[u8],
        step: usize,
    ) -> Result<usize, ParseError> {
        let mut off = 0;
        while off < input.len() {
            let end = (off + step).min(input.len());
            match p.feed(&input[off..end])? {
                Progress::Done { consumed } => return Ok(off + consumed),
                Progress::NeedMore => off = end,
            }
        }
        Ok(usize::MAX)
    }

    /// Every response must parse the same whether it arrives whole or in pieces of any
    /// size; the body is searched for `needle`.
    fn parse_with(input: &[u8], head: bool, needle: &[u8]) -> (u16, u64, bool, bool, usize) {
        let mut first = None;
        for step in [input.len().max(1), 1, 2, 3, 7] {
            let mut p = ResponseParser::new(head, Some(needle));
            let used = feed_in_pieces(&mut p, input, step).unwrap();
            let got = (p.status, p.body_len, p.matched, p.close, used);
            if let Some(f) = &first {
                assert_eq!(f, &got, "step {step}");
            }
            first = Some(got);
        }
        first.unwrap()
    }

    /// [`parse_with`] searching for the whole body expected.
    fn parse_all_ways(input: &[u8], head: bool) -> (u16, u64, bool, bool, usize) {
        parse_with(input, head, b"\xff\xfe")
    }

    #[test]
    fn content_length() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(
            parse_with(r, false, b"hello"),
            (200, 5, true, false, r.len())
        );
        assert_eq!(parse_with(r, false, b"ell"), (200, 5, true, false, r.len()));
        assert_eq!(
            parse_with(r, false, b"help"),
            (200, 5, false, false, r.len())
        );
    }

    #[test]
    fn chunked_with_extension_and_trailers() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nHello\r\n7\r\n World\n\r\n0\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n";
        // The needle spans two chunks: found however the bytes were split.
        assert_eq!(
            parse_with(r, false, b"Hello World\n"),
            (200, 12, true, false, r.len())
        );
    }

    #[test]
    fn chunked_without_trailers_and_uppercase_hex() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n";
        assert_eq!(parse_all_ways(r, false).1, 10);
    }

    #[test]
    fn bodiless_responses() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n";
        assert_eq!(
            parse_all_ways(head, true),
            (200, 0, false, false, head.len())
        );
        let r204 = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse_all_ways(r204, false).0, 204);
        let r304 = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n";
        assert_eq!(
            parse_all_ways(r304, false),
            (304, 0, false, false, r304.len())
        );
    }

    #[test]
    fn interim_responses_are_skipped() {
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(parse_with(r, false, b"ok"), (201, 2, true, false, r.len()));
    }

    #[test]
    fn http10_is_close_delimited() {
        let mut p = ResponseParser::new(false, None);
        let r = b"HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\n\r\nsome body";
        assert_eq!(p.feed(r), Ok(Progress::NeedMore));
        assert_eq!(p.feed(b" more"), Ok(Progress::NeedMore));
        assert_eq!(p.eof(), Ok(()));
        assert_eq!((p.status, p.body_len, p.close), (200, 14, true));
    }

    #[test]
    fn connection_header_decides_reuse() {
        let mut p = ResponseParser::new(false, None);
        p.feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        assert!(p.close);
        let mut p = ResponseParser::new(false, None);
        p.feed(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        assert!(!p.close);
    }

    #[test]
    fn extra_bytes_are_left_over() {
        let mut p = ResponseParser::new(false, None);
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHello World\n";
        assert_eq!(
            p.feed(r),
            Ok(Progress::Done {
                consumed: r.len() - 7
            })
        );
    }

    #[test]
    fn broken_inputs() {
        let mut p = ResponseParser::new(false, None);
        assert_eq!(
            p.feed(b"this is not http\r\n\r\n"),
            Err(ParseError::Malformed)
        );
        let mut p = ResponseParser::new(false, None);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"),
            Err(ParseError::Malformed)
        );
        let mut p = ResponseParser::new(false, None);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            Err(ParseError::Malformed)
        );
        let mut p = ResponseParser::new(false, None);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
            Err(ParseError::Malformed)
        );
        // A body shorter than its Content-Length shows as an early close.
        let mut p = ResponseParser::new(false, None);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"),
            Ok(Progress::NeedMore)
        );
        assert_eq!(p.eof(), Err(ParseError::Closed));
        // Nothing at all, then a close.
        let mut p = ResponseParser::new(false, None);
        assert_eq!(p.eof(), Err(ParseError::Closed));
    }

    #[test]
    fn reset_keeps_the_parser_reusable() {
        let mut p = ResponseParser::new(false, None);
        p.want_server();
        let r = b"HTTP/1.1 200 OK\r\nServer: x/1\r\nContent-Length: 1\r\n\r\na";
        assert_eq!(p.feed(r), Ok(Progress::Done { consumed: r.len() }));
        assert_eq!(p.server.as_deref(), Some("x/1"));
        p.reset();
        assert_eq!(p.feed(&r[..10]), Ok(Progress::NeedMore));
        assert_eq!(
            p.feed(&r[10..]),
            Ok(Progress::Done {
                consumed: r.len() - 10
            })
        );
        assert_eq!(p.seen, r.len() as u64);
    }

    /// Feeds `input` whole; the outcome.
    fn verdict(input: &[u8]) -> Result<Progress, ParseError> {
        ResponseParser::new(false, None).feed(input)
    }

    fn chunked_with(size_line: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{size_line}\r\nab\r\n0\r\n\r\n"
        )
        .into_bytes()
    }

    #[test]
    fn chunk_size_lines_follow_rfc_9112_strictly() {
        // Each row: a size line for a 2-byte chunk, and whether RFC 9112 §7.1 allows it.
        let rows: &[(&str, bool)] = &[
            ("2", true),
            ("02", true),                // leading zeros
            ("2;name", true),            // an extension without a value
            ("2;a=b;c", true),           // several
            ("2 ; a = b", true),         // BWS around ";" and "="
            ("2;a=\"q \\\" ;x\"", true), // a quoted value with an escaped quote and ";"
            ("2  ", false),              // whitespace with no extension after it
            ("2 ", false),
            (" 2", false), // whitespace before the size
            ("2;", false), // an empty extension name
            ("2; ", false),
            ("2;=b", false),
            ("2;a=", false),         // an empty value
            ("2;a=\"open", false),   // an unbalanced quote
            ("2;a=\"x\"y", false),   // bytes after the quoted value
            ("2;a b", false),        // a space inside the name
            ("2;a=\"\x01\"", false), // a control character in a quoted value
            ("0x2", false),
            ("g", false),
            ("", false),
            ("1000000000000000", false), // does not fit
        ];
        for (line, ok) in rows {
            let r = chunked_with(line);
            let got = verdict(&r);
            if *ok {
                assert_eq!(got, Ok(Progress::Done { consumed: r.len() }), "{line:?}");
            } else {
                assert_eq!(got, Err(ParseError::Malformed), "{line:?}");
            }
            // The same verdict byte by byte.
            let mut p = ResponseParser::new(false, None);
            let byte_by_byte = feed_in_pieces(&mut p, &r, 1);
            assert_eq!(byte_by_byte.is_ok(), *ok, "{line:?} byte by byte");
        }
    }

    #[test]
    fn trailer_lines_must_be_field_lines() {
        let with = |t: &str| {
            format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n{t}\r\n\r\n")
                .into_bytes()
        };
        for good in ["X-A: 1", "X-A:", "X-A:\tv \t"] {
            assert!(verdict(&with(good)).is_ok(), "{good:?}");
        }
        for bad in ["X A: 1", ": v", "X-A", " X-A: 1", "X-A: \x01"] {
            assert_eq!(verdict(&with(bad)), Err(ParseError::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn an_obs_fold_continues_a_trailer_field_but_never_starts_the_trailers() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-A: 1\r\n\t2\r\n  3\r\n\r\n";
        assert_eq!(parse_all_ways(r, false), (200, 0, false, false, r.len()));
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n  2\r\n\r\n";
        assert_eq!(verdict(r), Err(ParseError::Malformed));
        let r =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-A: 1\r\n \x01\r\n\r\n";
        assert_eq!(verdict(r), Err(ParseError::Malformed));
    }

    #[test]
    fn a_101_is_never_a_final_answer() {
        let r = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert_eq!(verdict(r), Err(ParseError::Malformed));
        let mut p = ResponseParser::new(false, None);
        assert_eq!(feed_in_pieces(&mut p, r, 1), Err(ParseError::Malformed));
    }

    fn with_headers(n: usize) -> Vec<u8> {
        let mut r = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..n {
            r.extend_from_slice(format!("X-Extra-{i}: {i}\r\n").as_bytes());
        }
        r.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
        r
    }

    #[test]
    fn heads_of_up_to_256_lines_are_accepted() {
        // Content-Length is one of the lines.
        for n in [63, 64, 65, 200, MAX_HEADERS - 1] {
            let r = with_headers(n);
            assert_eq!(
                parse_with(&r, false, b"ok"),
                (200, 2, true, false, r.len()),
                "{n}"
            );
        }
        let r = with_headers(MAX_HEADERS);
        assert_eq!(verdict(&r), Err(ParseError::Malformed));
        let mut p = ResponseParser::new(false, None);
        assert_eq!(feed_in_pieces(&mut p, &r, 5), Err(ParseError::Malformed));
    }

    #[test]
    fn a_head_over_64_kib_is_malformed() {
        let mut r = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        r.resize(MAX_HEAD + 10, b'a');
        r.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(verdict(&r), Err(ParseError::Malformed));
        let mut p = ResponseParser::new(false, None);
        assert_eq!(feed_in_pieces(&mut p, &r, 4096), Err(ParseError::Malformed));
        // Just under the limit is fine.
        let mut r = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        r.resize(MAX_HEAD - 40, b'a');
        r.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        assert!(verdict(&r).is_ok());
    }

    #[test]
    fn an_endless_body_is_searched_in_constant_memory() {
        let mut p = ResponseParser::new(false, Some(b"needle"));
        p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            .unwrap();
        let chunk = format!("2000\r\n{}\r\n", "x".repeat(0x2000));
        for _ in 0..2000 {
            assert_eq!(p.feed(chunk.as_bytes()), Ok(Progress::NeedMore));
        }
        assert_eq!(p.body_len, 2000 * 0x2000);
        assert!(!p.matched);
        assert!(p.search.kept_capacity() <= 64 && p.pending.capacity() <= 64);
        // A needle split across two reads is still found.
        p.feed(b"5\r\nxxnee\r\n").unwrap();
        p.feed(b"4\r\ndlex\r\n").unwrap();
        assert!(p.matched);
    }

    #[test]
    fn framing_follows_rfc_9112_where_the_fuzzer_found_it_did_not() {
        // Transfer-Encoding without chunked: read until the close, Content-Length ignored.
        let mut p = ResponseParser::new(false, None);
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nabcd";
        assert_eq!(p.feed(r), Ok(Progress::NeedMore));
        assert_eq!((p.eof(), p.body_len, p.close), (Ok(()), 4, true));
        // `close` in any Connection field wins over a later keep-alive.
        let mut p = ResponseParser::new(false, None);
        p.feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        assert!(p.close);
        // Empty list elements do not hide chunked.
        for te in ["chunked,", "chunked\r\nTransfer-Encoding: ,"] {
            let r =
                format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {te}\r\n\r\n2\r\nab\r\n0\r\n\r\n");
            assert_eq!(parse_all_ways(r.as_bytes(), false).1, 2, "{te:?}");
        }
        // A Transfer-Encoding of empty elements only names no coding: Content-Length frames.
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: ,\r\nContent-Length: 2\r\n\r\nab";
        assert_eq!(parse_all_ways(r, false).1, 2);
        // 000 is no status code.
        assert_eq!(
            verdict(b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n"),
            Err(ParseError::Malformed)
        );
    }

    #[test]
    fn head_len_counts_chunk_lines_split_across_reads() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n";
        let mut whole = ResponseParser::new(false, None);
        whole.feed(r).unwrap();
        let mut split = ResponseParser::new(false, None);
        assert_eq!(feed_in_pieces(&mut split, r, 1), Ok(r.len()));
        assert_eq!(split.head_len, whole.head_len);
        assert_eq!(whole.head_len + whole.body_len, r.len() as u64);
    }

    #[test]
    fn a_partial_head_that_is_not_http_is_malformed_at_the_close_however_split() {
        let junk = b"HTTP/1.1 200 OK\r\nno colon here\r\n";
        let mut whole = ResponseParser::new(false, None);
        assert_eq!(whole.feed(junk), Err(ParseError::Malformed));
        let mut split = ResponseParser::new(false, None);
        assert_eq!(split.feed(&junk[..17]), Ok(Progress::NeedMore));
        assert_eq!(split.feed(&junk[17..]), Ok(Progress::NeedMore));
        assert_eq!(split.eof(), Err(ParseError::Malformed));
        // A valid partial head cut by the close is a close.
        let mut p = ResponseParser::new(false, None);
        p.feed(b"HTTP/1.1 200 OK\r\n").unwrap();
        p.feed(b"Content-Le").unwrap();
        assert_eq!(p.eof(), Err(ParseError::Closed));
    }

    #[test]
    fn obs_fold_in_a_response_is_unfolded_not_rejected() {
        // RFC 9112 §5.2: a user agent replaces each obs-fold with spaces and reads on.
        let r = b"HTTP/1.1 200 OK\r\nX-Note: one\r\n\ttwo\r\nContent-Length:\r\n 2\r\n\r\nok";
        assert_eq!(parse_with(r, false, b"ok"), (200, 2, true, false, r.len()));
        let mut p = ResponseParser::new(false, None);
        p.want_server();
        let r = b"HTTP/1.1 200 OK\r\nServer: name\r\n  1.0\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(p.feed(r), Ok(Progress::Done { consumed: r.len() }));
        assert_eq!(p.server.as_deref(), Some("name    1.0"));
        // A folded Content-Length of two numbers is still no length.
        assert_eq!(
            verdict(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\nab"),
            Err(ParseError::Malformed)
        );
        // A whitespace-preceded first line folds nothing: still rejected (RFC 9112 §2.2).
        assert_eq!(
            verdict(b"HTTP/1.1 200 OK\r\n X-A: 1\r\nContent-Length: 0\r\n\r\n"),
            Err(ParseError::Malformed)
        );
    }

    #[test]
    fn a_huge_server_header_is_kept_to_256_bytes() {
        let mut r = b"HTTP/1.1 200 OK\r\nServer: ".to_vec();
        r.extend(std::iter::repeat_n(0xcc, 60_000));
        r.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        let mut p = ResponseParser::new(false, None);
        p.want_server();
        assert_eq!(p.feed(&r), Ok(Progress::Done { consumed: r.len() }));
        assert_eq!(
            p.server.as_ref().map(|s| s.chars().count()),
            Some(MAX_SERVER)
        );
    }
}
