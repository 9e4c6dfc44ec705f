//! Incremental HTTP/1.1 response parsing: the head with `httparse`, the body framing by
//! hand (Content-Length, chunked with extensions and trailers, close-delimited, and the
//! bodiless cases: HEAD, 1xx, 204, 304).
//!
//! Framing is written here rather than taken from a crate because the hot path needs to
//! consume bytes in place from a buffer shared by all connections of a worker, keep no
//! body unless an expectation needs it, and tell apart "needs more bytes", "complete",
//! "peer closed early" and "the bytes contradict the framing" — the distinctions the
//! failure classes rest on. Interim 1xx responses are skipped, never reported.

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
    /// Reading trailer lines until an empty one.
    Trailers,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
    Done,
}

/// Longest head or chunk line accepted, in bytes.
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

/// Parses one response at a time from the bytes of one connection.
#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    /// Head bytes kept across reads until the head is complete; also the line buffer of the
    /// chunked decoder.
    pending: Vec<u8>,
    head_request: bool,
    keep_body: bool,
    want_server: bool,
    /// Status of the final response (0 until its head is parsed).
    pub status: u16,
    /// The server closes the connection after this response.
    pub close: bool,
    /// Body bytes (decoded from chunked framing).
    pub body_len: u64,
    /// Head bytes, interim responses included.
    pub head_len: u64,
    /// The body, kept only when asked for.
    pub body: Vec<u8>,
    /// The `Server` header, kept only when asked for.
    pub server: Option<String>,
    /// Bytes of this response seen so far (0: nothing arrived yet).
    pub seen: u64,
}

impl ResponseParser {
    /// A parser for answers to `HEAD` (no body) or other requests; `keep_body` keeps the
    /// body bytes for expectations.
    pub fn new(head_request: bool, keep_body: bool) -> Self {
        ResponseParser {
            state: State::Head,
            pending: Vec::new(),
            head_request,
            keep_body,
            want_server: false,
            status: 0,
            close: false,
            body_len: 0,
            head_len: 0,
            body: Vec::new(),
            server: None,
            seen: 0,
        }
    }

    /// Keep the `Server` header of the next response.
    pub fn want_server(&mut self) {
        self.want_server = true;
    }

    /// Gets ready for the next response on the same connection; buffers keep their capacity.
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.pending.clear();
        self.status = 0;
        self.close = false;
        self.body_len = 0;
        self.head_len = 0;
        self.body.clear();
        self.seen = 0;
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
            _ => Err(ParseError::Closed),
        }
    }

    fn body_bytes(&mut self, b: &[u8]) {
        self.body_len += b.len() as u64;
        if self.keep_body {
            self.body.extend_from_slice(b);
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
            (&self.pending, before)
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let len = match resp.parse(buf) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => {
                if buf.len() > MAX_HEAD {
                    return Err(ParseError::Malformed);
                }
                if from_pending == 0 && self.pending.is_empty() {
                    self.pending.extend_from_slice(data);
                }
                return Ok(data.len());
            }
            Err(_) => return Err(ParseError::Malformed),
        };
        let code = resp.code.unwrap_or(0);
        let http10 = resp.version == Some(0);
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut conn_close = http10;
        let mut server = None;
        for h in resp.headers.iter() {
            let name = h.name.as_bytes();
            if name.eq_ignore_ascii_case(b"content-length") {
                let v = parse_decimal(h.value).ok_or(ParseError::Malformed)?;
                if length.is_some_and(|l| l != v) {
                    return Err(ParseError::Malformed);
                }
                length = Some(v);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                chunked = last_token_is(h.value, b"chunked");
            } else if name.eq_ignore_ascii_case(b"connection") {
                if has_token(h.value, b"close") {
                    conn_close = true;
                } else if has_token(h.value, b"keep-alive") {
                    conn_close = false;
                }
            } else if self.want_server && name.eq_ignore_ascii_case(b"server") {
                server = Some(String::from_utf8_lossy(h.value).into_owned());
            }
        }
        self.head_len += len as u64;
        let used = len - from_pending;
        self.pending.clear();
        if (100..200).contains(&code) && code != 101 {
            // An interim response (100 Continue, 103 Early Hints): the final one follows.
            return Ok(used);
        }
        self.status = code;
        self.close = conn_close;
        if server.is_some() {
            self.server = server;
            self.want_server = false;
        }
        self.state = if self.head_request || code == 204 || code == 304 || code == 101 {
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
            Chunk::Size | Chunk::DataEnd | Chunk::Trailers => {
                let Some(nl) = data.iter().position(|&b| b == b'\n') else {
                    self.pending.extend_from_slice(data);
                    if self.pending.len() > MAX_HEAD {
                        return Err(ParseError::Malformed);
                    }
                    return Ok(data.len());
                };
                self.pending.extend_from_slice(&data[..nl]);
                let line = self
                    .pending
                    .strip_suffix(b"\r")
                    .ok_or(ParseError::Malformed)?;
                let next = match c {
                    Chunk::DataEnd if line.is_empty() => State::Chunked(Chunk::Size),
                    Chunk::DataEnd => return Err(ParseError::Malformed),
                    Chunk::Trailers if line.is_empty() => State::Done,
                    Chunk::Trailers => State::Chunked(Chunk::Trailers),
                    _ => {
                        let hex = line.split(|&b| b == b';').next().unwrap_or_default();
                        match parse_hex(hex).ok_or(ParseError::Malformed)? {
                            0 => State::Chunked(Chunk::Trailers),
                            n => State::Chunked(Chunk::Data(n)),
                        }
                    }
                };
                self.head_len += nl as u64 + 1;
                self.pending.clear();
                self.state = next;
                Ok(nl + 1)
            }
        }
    }
}

fn parse_decimal(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

fn parse_hex(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 15 {
        return None;
    }
    v.iter().try_fold(0u64, |n, &d| {
        let x = (d as char).to_digit(16)?;
        Some(n * 16 + u64::from(x))
    })
}

fn has_token(v: &[u8], token: &[u8]) -> bool {
    v.split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

fn last_token_is(v: &[u8], token: &[u8]) -> bool {
    v.rsplit(|&b| b == b',')
        .next()
        .is_some_and(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every response must parse the same whether it arrives whole or byte by byte.
    fn parse_all_ways(input: &[u8], head: bool) -> (u16, u64, Vec<u8>, bool, usize) {
        let mut first = None;
        for step in [input.len().max(1), 1, 2, 3, 7] {
            let mut p = ResponseParser::new(head, true);
            let used = feed_in_pieces(&mut p, input, step).unwrap();
            let got = (p.status, p.body_len, p.body.clone(), p.close, used);
            if let Some(f) = &first {
                assert_eq!(f, &got, "step {step}");
            }
            first = Some(got);
        }
        first.unwrap()
    }

    #[test]
    fn content_length() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(
            parse_all_ways(r, false),
            (200, 5, b"hello".to_vec(), false, r.len())
        );
    }

    #[test]
    fn chunked_with_extension_and_trailers() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nHello\r\n7\r\n World\n\r\n0\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n";
        let (status, len, body, close, used) = parse_all_ways(r, false);
        assert_eq!((status, len, close, used), (200, 12, false, r.len()));
        assert_eq!(body, b"Hello World\n");
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
            (200, 0, vec![], false, head.len())
        );
        let r204 = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse_all_ways(r204, false).0, 204);
        let r304 = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n";
        assert_eq!(
            parse_all_ways(r304, false),
            (304, 0, vec![], false, r304.len())
        );
    }

    #[test]
    fn interim_responses_are_skipped() {
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(
            parse_all_ways(r, false),
            (201, 2, b"ok".to_vec(), false, r.len())
        );
    }

    #[test]
    fn http10_is_close_delimited() {
        let mut p = ResponseParser::new(false, false);
        let r = b"HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\n\r\nsome body";
        assert_eq!(p.feed(r), Ok(Progress::NeedMore));
        assert_eq!(p.feed(b" more"), Ok(Progress::NeedMore));
        assert_eq!(p.eof(), Ok(()));
        assert_eq!((p.status, p.body_len, p.close), (200, 14, true));
    }

    #[test]
    fn connection_header_decides_reuse() {
        let mut p = ResponseParser::new(false, false);
        p.feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        assert!(p.close);
        let mut p = ResponseParser::new(false, false);
        p.feed(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        assert!(!p.close);
    }

    #[test]
    fn extra_bytes_are_left_over() {
        let mut p = ResponseParser::new(false, false);
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
        let mut p = ResponseParser::new(false, false);
        assert_eq!(
            p.feed(b"this is not http\r\n\r\n"),
            Err(ParseError::Malformed)
        );
        let mut p = ResponseParser::new(false, false);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"),
            Err(ParseError::Malformed)
        );
        let mut p = ResponseParser::new(false, false);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            Err(ParseError::Malformed)
        );
        let mut p = ResponseParser::new(false, false);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
            Err(ParseError::Malformed)
        );
        // A body shorter than its Content-Length shows as an early close.
        let mut p = ResponseParser::new(false, false);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"),
            Ok(Progress::NeedMore)
        );
        assert_eq!(p.eof(), Err(ParseError::Closed));
        // Nothing at all, then a close.
        let mut p = ResponseParser::new(false, false);
        assert_eq!(p.eof(), Err(ParseError::Closed));
    }

    #[test]
    fn reset_keeps_the_parser_reusable() {
        let mut p = ResponseParser::new(false, false);
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
}
