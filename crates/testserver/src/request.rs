//! Reading request heads: finds the end of a head in the bytes received so far and
//! parses it into the few facts the behaviours need.
//!
//! Seams: [`crate::conn`] owns the socket and the buffer and calls [`head_end`] after
//! every read; once a head is complete it calls [`parse_head`] and then reads and
//! discards `content_length` body bytes itself. [`crate::behavior`] reads the parsed
//! [`Request`]. Nothing here does I/O.

use std::borrow::Cow;

/// Largest request head accepted, in bytes; a longer head is answered with 431.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// Request headers whose values the `Echo` behaviour sends back, in this order.
pub(crate) const ECHOED: [&str; 3] = ["content-type", "cookie", "x-test"];

/// What the server needs to know about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The method as sent, e.g. `GET`.
    pub method: String,
    /// The request target as sent, e.g. `/path?query`.
    pub target: String,
    /// The request line said `HTTP/1.0`.
    pub http10: bool,
    /// Length of the request body in bytes, from `Content-Length` (0 without one).
    pub content_length: u64,
    /// The connection must be closed after the answer: `Connection: close`, or an
    /// HTTP/1.0 request without `Connection: keep-alive`.
    pub close: bool,
    /// The request carried `Expect: 100-continue`.
    pub expect_continue: bool,
    /// Values of the [`ECHOED`] headers (same index), several lines joined by `, `.
    pub echoed: [Option<String>; 3],
}

impl Request {
    /// Whether the method is `HEAD`, whose answers carry no body.
    pub fn is_head(&self) -> bool {
        self.method == "HEAD"
    }

    /// The target without its query string.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

/// Why a head could not be accepted; each maps to the status the server answers with
/// before closing the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// The request line or a header line is not HTTP/1.x syntax (answered with 400).
    Malformed,
    /// The head is longer than [`MAX_HEAD`] (answered with 431).
    TooLarge,
    /// The request uses `Transfer-Encoding`, which this server does not decode
    /// (answered with 501).
    TransferEncoding,
}

impl HeadError {
    /// The status code answered for this error.
    pub fn status(self) -> u16 {
        match self {
            HeadError::Malformed => 400,
            HeadError::TooLarge => 431,
            HeadError::TransferEncoding => 501,
        }
    }
}

/// Number of bytes of empty lines (`\r\n`) before a request line, which a server
/// ignores (RFC 9112 §2.2).
pub(crate) fn leading_empty_lines(buf: &[u8]) -> usize {
    let mut n = 0;
    while buf[n..].starts_with(b"\r\n") {
        n += 2;
    }
    n
}

/// Length of the complete head at the start of `buf`, including the final blank line,
/// or `None` while the `\r\n\r\n` has not arrived yet.
pub(crate) fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a complete head (request line, header lines, blank line).
pub(crate) fn parse_head(head: &[u8]) -> Result<Request, HeadError> {
    let text: Cow<'_, str> = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let request_line = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed);
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) || target.is_empty() {
        return Err(HeadError::Malformed);
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(HeadError::Malformed),
    };

    let mut content_length: Option<u64> = None;
    let mut close_token = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    let mut echoed: [Option<String>; 3] = Default::default();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(HeadError::Malformed);
        }
        let value = value.trim_matches([' ', '\t']);
        if name.eq_ignore_ascii_case("content-length") {
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(HeadError::Malformed);
            }
            let n: u64 = value.parse().map_err(|_| HeadError::Malformed)?;
            if content_length.is_some_and(|old| old != n) {
                return Err(HeadError::Malformed);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(HeadError::TransferEncoding);
        } else if name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(|t| t.trim_matches([' ', '\t'])) {
                close_token |= token.eq_ignore_ascii_case("close");
                keep_alive_token |= token.eq_ignore_ascii_case("keep-alive");
            }
        } else if name.eq_ignore_ascii_case("expect") {
            expect_continue |= value.eq_ignore_ascii_case("100-continue");
        } else if let Some(i) = ECHOED.iter().position(|e| name.eq_ignore_ascii_case(e)) {
            match &mut echoed[i] {
                Some(old) => {
                    old.push_str(", ");
                    old.push_str(value);
                }
                slot @ None => *slot = Some(value.to_string()),
            }
        }
    }

    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        http10,
        content_length: content_length.unwrap_or(0),
        close: close_token || (http10 && !keep_alive_token),
        expect_continue,
        echoed,
    })
}

/// `tchar` of RFC 9110 §5.6.2: the bytes allowed in methods and header names.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Request, HeadError> {
        parse_head(s.as_bytes())
    }

    #[test]
    fn finds_the_end_of_a_head_only_once_complete() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: a\r\n\r"), None);
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nGET"), Some(18));
        assert_eq!(leading_empty_lines(b"\r\n\r\nGET"), 4);
        assert_eq!(leading_empty_lines(b"\r"), 0);
    }

    #[test]
    fn parses_method_target_length_and_connection() {
        let r = parse(
            "POST /a?b=1 HTTP/1.1\r\nHost: x\r\ncontent-length:  5 \r\n\
             Connection: Keep-Alive, Close\r\nX-Test: one\r\nx-test: two\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path(), "/a");
        assert_eq!(r.content_length, 5);
        assert!(r.close);
        assert!(!r.http10);
        assert_eq!(r.echoed[2].as_deref(), Some("one, two"));
    }

    #[test]
    fn http10_closes_unless_asked_to_keep_alive() {
        assert!(parse("GET / HTTP/1.0\r\n\r\n").unwrap().close);
        let r = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
        assert!(!r.close && r.http10);
        assert!(!parse("GET / HTTP/1.1\r\n\r\n").unwrap().close);
    }

    #[test]
    fn rejects_what_it_cannot_frame() {
        // Table: (head, error). Each row is one way a head is refused.
        let rows = [
            ("GET /\r\n\r\n", HeadError::Malformed), // no version
            ("GET / HTTP/2.0\r\n\r\n", HeadError::Malformed), // not HTTP/1.x
            ("GET  / HTTP/1.1\r\n\r\n", HeadError::Malformed), // double space
            ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", HeadError::Malformed),
            (
                "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
                HeadError::Malformed,
            ),
            (
                "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                HeadError::Malformed,
            ),
            (
                "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                HeadError::Malformed,
            ),
            (
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::TransferEncoding,
            ),
        ];
        for (head, err) in rows {
            assert_eq!(parse(head), Err(err), "{head:?}");
        }
    }

    #[test]
    fn notes_expect_continue() {
        let r = parse("PUT / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n");
        assert!(r.unwrap().expect_continue);
    }
}
