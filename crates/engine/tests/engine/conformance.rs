//! The response parser against a table of HTTP/1.1 conformance cases, each with the
//! verdict a load generator must reach and the RFC 9112 / 9110 rule behind it.
//!
//! The table covers the ground of the strict response cases of llhttp's test suite
//! (`test/response/`: connection, content-length, finish, invalid, pipelining, sample,
//! transfer-encoding) with inputs of our own, plus the rules those leave out. Where
//! llhttp's strict mode is stricter than the RFC, or parses protocols that are not HTTP,
//! the RFC decides and the case's rule says so.
//!
//! Every case is delivered whole and one byte per read, each followed by the peer's close
//! when a response is still open ([`ResponseParser::eof`]); both deliveries must give the
//! expected verdicts. The test lists every case that disagrees before failing.

use shootout_engine::{ParseError, Progress, ResponseParser};

/// What the parser must conclude about one response of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Complete by its framing: the final status, the body bytes (decoded), and whether
    /// the connection ends after it.
    Answer { status: u16, body: u64, close: bool },
    /// A close-delimited body, complete when the peer closed.
    AtClose { status: u16, body: u64 },
    /// Not an HTTP/1.1 response, or framing the bytes contradict.
    Malformed,
    /// The peer closed before the framing said the response was complete.
    Cut,
}

use Verdict::{Cut, Malformed};

const fn ok(status: u16, body: u64) -> Verdict {
    Verdict::Answer {
        status,
        body,
        close: false,
    }
}

const fn ok_close(status: u16, body: u64) -> Verdict {
    Verdict::Answer {
        status,
        body,
        close: true,
    }
}

const fn at_close(status: u16, body: u64) -> Verdict {
    Verdict::AtClose { status, body }
}

struct Case {
    /// What the case shows.
    title: &'static str,
    /// The rule that decides the verdict.
    rule: &'static str,
    /// The request was HEAD.
    head: bool,
    input: Vec<u8>,
    /// The verdicts of the responses in the stream, in order.
    want: Vec<Verdict>,
    /// Bytes left unread after an answer that closes the connection: they belong to no
    /// response (RFC 9112 §6.3, §9.6); what the engine counts them as is its own rule.
    rest: usize,
}

fn case(title: &'static str, rule: &'static str, input: &[u8], want: &[Verdict]) -> Case {
    Case {
        title,
        rule,
        head: false,
        input: input.to_vec(),
        want: want.to_vec(),
        rest: 0,
    }
}

impl Case {
    fn head(mut self) -> Case {
        self.head = true;
        self
    }

    fn rest(mut self, n: usize) -> Case {
        self.rest = n;
        self
    }
}

/// Feeds `input` in reads of `step` bytes as a load generator does: after each complete
/// response the parser is reset for the next one, an answer that closes the connection
/// ends the stream, and the peer's close ends whatever response is still open.
/// Returns the verdicts and the bytes left unread.
fn deliver(input: &[u8], head: bool, step: usize) -> (Vec<Verdict>, usize) {
    let mut p = ResponseParser::new(head, None);
    let mut out = Vec::new();
    let mut off = 0;
    while off < input.len() {
        let end = (off + step).min(input.len());
        let mut at = off;
        while at < end {
            match p.feed(&input[at..end]) {
                Err(_) => {
                    out.push(Malformed);
                    return (out, 0);
                }
                Ok(Progress::NeedMore) => at = end,
                Ok(Progress::Done { consumed }) => {
                    assert!(consumed > 0 || p.seen > 0, "a response of no bytes");
                    at += consumed;
                    out.push(Verdict::Answer {
                        status: p.status,
                        body: p.body_len,
                        close: p.close,
                    });
                    if p.close {
                        return (out, input.len() - at);
                    }
                    p.reset();
                }
            }
        }
        off = end;
    }
    // The peer closes. Between two responses that ends the stream quietly.
    if p.seen == 0 && !out.is_empty() {
        return (out, 0);
    }
    out.push(match p.eof() {
        Ok(()) => Verdict::AtClose {
            status: p.status,
            body: p.body_len,
        },
        Err(ParseError::Closed) => Cut,
        Err(ParseError::Malformed) => Malformed,
    });
    (out, 0)
}

const CL0: &[u8] = b"Content-Length: 0\r\n\r\n";

/// `HTTP/1.1 200 OK` with the given header lines (each ending in CRLF) and body.
fn resp(lines: &str, body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\n{lines}\r\n{body}").into_bytes()
}

fn chunked(body: &str) -> Vec<u8> {
    resp("Transfer-Encoding: chunked\r\n", body)
}

fn with_fields(n: usize) -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 1..n {
        r.extend_from_slice(format!("X-Field-{i}: {i}\r\n").as_bytes());
    }
    r.extend_from_slice(b"Content-Length: 1\r\n\r\n!");
    r
}

fn table() -> Vec<Case> {
    let mut long_head = b"HTTP/1.1 200 OK\r\nX-Padding: ".to_vec();
    long_head.resize(64 * 1024 + 1, b'p');
    long_head.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    let mut three = Vec::new();
    for (status, body) in [
        ("200 OK", "one"),
        ("201 Created", "two!"),
        ("202 Accepted", ""),
    ] {
        three.extend_from_slice(
            format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    }
    vec![
        // --- The status line (RFC 9112 §4; llhttp: invalid, sample).
        case(
            "a plain status line and a sized body",
            "RFC 9112 §4, §6.3 ¶6: Content-Length frames the body",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nfive!",
            &[ok(200, 5)],
        ),
        case(
            "no reason phrase and no space after the code",
            "RFC 9112 §4: a client SHOULD ignore the reason phrase; llhttp accepts it too",
            b"HTTP/1.1 302\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
            &[ok(302, 0)],
        ),
        case(
            "an empty reason phrase after the space",
            "RFC 9112 §4: reason-phrase is optional",
            b"HTTP/1.1 204 \r\n\r\n",
            &[ok(204, 0)],
        ),
        case(
            "a reason phrase that starts with a space",
            "RFC 9112 §4: reason-phrase allows SP",
            b"HTTP/1.1 200  All good\r\nContent-Length: 0\r\n\r\n",
            &[ok(200, 0)],
        ),
        case(
            "a reason phrase in UTF-8",
            "RFC 9112 §4: reason-phrase allows obs-text",
            "HTTP/1.1 503 Indisponibilité\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                .as_bytes(),
            &[ok_close(503, 0)],
        ),
        case(
            "two spaces between version and code",
            "RFC 9112 §4: exactly one SP after the version",
            b"HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a tab between version and code",
            "RFC 9112 §4: the separator is SP",
            b"HTTP/1.1\t404 Not Found\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a bare CR before the status line",
            "RFC 9112 §2.2: a bare CR is invalid",
            b"\rHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a one-digit status code",
            "RFC 9112 §4: status-code = 3DIGIT",
            b"HTTP/1.1 5 Oops\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a four-digit status code",
            "RFC 9112 §4: status-code = 3DIGIT",
            b"HTTP/1.1 2000 OK\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a letter inside the status code",
            "RFC 9112 §4: status-code = 3DIGIT",
            b"HTTP/1.1 2o0 OK\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "status 000",
            "RFC 9110 §15: codes run from 100; 000 is no answer",
            b"HTTP/1.1 000 None\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "status 099",
            "RFC 9110 §15: codes below 100 are no answer",
            b"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "status 600 is an answer, if an unexpected one",
            "RFC 9110 §15: a client SHOULD treat an invalid 3-digit code like a 5xx",
            b"HTTP/1.1 600 Odd\r\nContent-Length: 2\r\n\r\nno",
            &[ok(600, 2)],
        ),
        case(
            "HTTP name misspelt",
            "RFC 9112 §2.3: HTTP-name = %s\"HTTP\"",
            b"HTPT/1.1 200 OK\r\n\r\n",
            &[Malformed],
        ),
        case(
            "HTTP name with extra letters",
            "RFC 9112 §2.3: HTTP-name = %s\"HTTP\"",
            b"HTTPS/1.1 200 OK\r\n\r\n",
            &[Malformed],
        ),
        case(
            "HTTP name in lower case",
            "RFC 9112 §2.3: HTTP-name is case-sensitive",
            b"http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "another protocol's status line",
            "RFC 9112 §2.3: only HTTP answers HTTP (llhttp also parses RTSP and ICE)",
            b"RTSP/1.0 200 OK\r\nCSeq: 1\r\n\r\n",
            &[Malformed],
        ),
        case(
            "two-digit major version",
            "RFC 9112 §2.3: HTTP-version = HTTP-name \"/\" DIGIT \".\" DIGIT",
            b"HTTP/01.1 200 OK\r\n\r\n",
            &[Malformed],
        ),
        case(
            "two-digit minor version",
            "RFC 9112 §2.3: one DIGIT each side of the dot",
            b"HTTP/1.10 200 OK\r\n\r\n",
            &[Malformed],
        ),
        case(
            "another major version",
            "RFC 9110 §2.5: a major version we do not speak is not HTTP/1.1",
            b"HTTP/3.0 200 OK\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "HTTP/0.9 in a status line",
            "RFC 9112 §2.3, Appendix C.1: 0.9 had no status line (llhttp accepts it)",
            b"HTTP/0.9 200 OK\r\n\r\n",
            &[Malformed],
        ),
        case(
            "an empty line before the status line",
            "RFC 9112 §2.2's robustness for a stray CRLF; llhttp skips it too",
            b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
            &[ok(200, 1)],
        ),
        // --- Field lines (RFC 9112 §2.2, §5; RFC 9110 §5.5; llhttp: invalid, sample).
        case(
            "whitespace around field values",
            "RFC 9112 §5.1: OWS around the value is not part of it",
            b"HTTP/1.1 200 OK\r\nX-One:\t padded \t\r\nContent-Length:  3  \r\n\r\nabc",
            &[ok(200, 3)],
        ),
        case(
            "an empty field value",
            "RFC 9110 §5.5: field-value may be empty",
            b"HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Spaces:   \r\nContent-Length: 1\r\n\r\n.",
            &[ok(200, 1)],
        ),
        case(
            "field names of unusual token characters",
            "RFC 9110 §5.6.2: tchar includes _ . $ ! and friends",
            b"HTTP/1.1 200 OK\r\nX_Trace.Id: 7\r\n$Weird!~: y\r\n.dotted: z\r\nContent-Length: 0\r\n\r\n",
            &[ok(200, 0)],
        ),
        case(
            "whitespace between field name and colon",
            "RFC 9112 §5.1: no whitespace is allowed there",
            b"HTTP/1.1 200 OK\r\nContent-Length : 3\r\n\r\nabc",
            &[Malformed],
        ),
        case(
            "a space inside a field name",
            "RFC 9110 §5.1: field-name = token",
            b"HTTP/1.1 200 OK\r\nde-DE Content-Language: de\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a field line without a colon",
            "RFC 9112 §5: field-line = field-name \":\" OWS field-value OWS",
            b"HTTP/1.1 200 OK\r\nNoColonHere\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a whitespace-preceded line right after the status line",
            "RFC 9112 §2.2: reject it or ignore the line; we reject",
            b"HTTP/1.1 200 OK\r\n Folded: no\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a whitespace-preceded line, and the peer closes",
            "RFC 9112 §2.2: invalid however the head ends",
            b"HTTP/1.1 200 OK\r\n Host: example",
            &[Malformed],
        ),
        case(
            "obs-fold inside a field value",
            "RFC 9112 §5.2: a user agent MUST replace obs-fold with SP and go on",
            b"HTTP/1.1 200 OK\r\nX-Long: first part\r\n  second part\r\nContent-Length: 2\r\n\r\nok",
            &[ok(200, 2)],
        ),
        case(
            "obs-fold carrying the Content-Length value",
            "RFC 9112 §5.2: unfolded, the value is \" 4\"",
            b"HTTP/1.1 200 OK\r\nContent-Length:\r\n 4\r\n\r\nfour",
            &[ok(200, 4)],
        ),
        case(
            "a bare CR between two field lines",
            "RFC 9112 §2.2: a bare CR is invalid",
            b"HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "bare LF line ends throughout the head",
            "RFC 9112 §2.2: a recipient MAY take LF as a line end (llhttp's strict mode does not)",
            b"HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 2\n\nhi",
            &[ok(200, 2)],
        ),
        case(
            "bare LF line ends, close-delimited",
            "RFC 9112 §2.2 (LF as a line end), §6.3 ¶8 (read until close)",
            b"HTTP/1.1 200 OK\nConnection: close\n\nthe rest",
            &[at_close(200, 8)],
        ),
        case(
            "a NUL in a field value",
            "RFC 9110 §5.5: NUL in a value is invalid; we reject",
            b"HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a NUL in a field name",
            "RFC 9110 §5.1: field-name = token",
            b"HTTP/1.1 200 OK\r\nX\0A: 1\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a control character in a field value",
            "RFC 9110 §5.5: field-vchar excludes CTLs other than HTAB",
            b"HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n",
            &[Malformed],
        ),
        case(
            "256 field lines",
            "our limit: heads of up to 256 field lines",
            &with_fields(256),
            &[ok(200, 1)],
        ),
        case(
            "257 field lines",
            "our limit: more than 256 field lines is no answer we accept",
            &with_fields(257),
            &[Malformed],
        ),
        case(
            "a head longer than 64 KiB",
            "our limit: heads of up to 64 KiB",
            &long_head,
            &[Malformed],
        ),
        // --- Content-Length (RFC 9112 §6.3, RFC 9110 §8.6; llhttp: content-length).
        case(
            "leading zeros in Content-Length",
            "RFC 9110 §8.6: Content-Length = 1*DIGIT",
            b"HTTP/1.1 200 OK\r\nContent-Length: 0003\r\n\r\nabc",
            &[ok(200, 3)],
        ),
        case(
            "tabs around Content-Length, and the body cut by the close",
            "RFC 9112 §5.1 (OWS), §8: a sized body cut short is incomplete",
            b"HTTP/1.1 200 OK\r\nContent-Length:\t12\t\r\n\r\nonly this",
            &[Cut],
        ),
        case(
            "Content-Length past 64 bits",
            "RFC 9112 §6.3 ¶5: an invalid Content-Length is unrecoverable",
            b"HTTP/1.1 200 OK\r\nContent-Length: 123456789012345678901234\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a negative Content-Length",
            "RFC 9110 §8.6: 1*DIGIT has no sign",
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            &[Malformed],
        ),
        case(
            "a signed Content-Length",
            "RFC 9110 §8.6: 1*DIGIT has no sign",
            b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nab",
            &[Malformed],
        ),
        case(
            "an empty Content-Length",
            "RFC 9110 §8.6: 1*DIGIT",
            b"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
            &[Malformed],
        ),
        case(
            "two Content-Length lines that agree",
            "RFC 9110 §8.6: the same value repeated MAY be taken as one",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
            &[ok(200, 2)],
        ),
        case(
            "two Content-Length lines that differ",
            "RFC 9112 §6.3 ¶5: unrecoverable framing",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 4\r\n\r\nokok",
            &[Malformed],
        ),
        case(
            "a Content-Length list of one value twice",
            "RFC 9110 §8.6: a recipient MAY reject \"2, 2\"; strict, we do",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok",
            &[Malformed],
        ),
        case(
            "a Content-Length list of two values",
            "RFC 9112 §6.3 ¶5: unrecoverable framing",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok!",
            &[Malformed],
        ),
        case(
            "a field named like Content-Length but longer",
            "RFC 9110 §5.1: names match whole; chunked frames",
            b"HTTP/1.1 200 OK\r\nContent-Length-Extra: 0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            &[ok(200, 3)],
        ),
        case(
            "Content-Length with chunked Transfer-Encoding",
            "RFC 9112 §6.3 ¶3: Transfer-Encoding overrides Content-Length",
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
            &[ok(200, 2)],
        ),
        case(
            "Content-Length with a Transfer-Encoding not ending in chunked",
            "RFC 9112 §6.3 ¶4: read until the close, Content-Length ignored",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nabcdef",
            &[at_close(200, 6)],
        ),
        case(
            "an invalid Content-Length beside chunked Transfer-Encoding",
            "RFC 9112 §6.3 ¶3: both together ought to be an error; a valid length is overridden, one that is no length at all we reject",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: lots\r\n\r\n1\r\nz\r\n0\r\n\r\n",
            &[Malformed],
        ),
        // --- Transfer-Encoding (RFC 9112 §6.1, §6.3, §7; llhttp: transfer-encoding).
        case(
            "a chunked body",
            "RFC 9112 §7.1",
            &chunked("4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n"),
            &[ok(200, 9)],
        ),
        case(
            "the coding name in upper case",
            "RFC 9112 §7: transfer-coding names are case-insensitive",
            &resp("Transfer-Encoding: CHUNKED\r\n", "2\r\nhi\r\n0\r\n\r\n"),
            &[ok(200, 2)],
        ),
        case(
            "chunked after another coding",
            "RFC 9112 §6.3 ¶4: chunked is the final coding",
            &resp("Transfer-Encoding: gzip, chunked\r\n", "3\r\n\x1f\x7f\x08\r\n0\r\n\r\n"),
            &[ok(200, 3)],
        ),
        case(
            "chunked before another coding",
            "RFC 9112 §6.3 ¶4: chunked not final, so read until the close",
            &resp("Transfer-Encoding: chunked, br\r\n", "raw bytes"),
            &[at_close(200, 9)],
        ),
        case(
            "chunked in one field line, another coding in a later one",
            "RFC 9110 §5.3: the lines join into one list; its last coding is not chunked",
            &resp(
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
                "2\r\nhi\r\n0\r\n\r\n",
            ),
            &[at_close(200, 12)],
        ),
        case(
            "another coding in one field line, chunked in a later one",
            "RFC 9110 §5.3: the joined list ends in chunked",
            &resp(
                "Transfer-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n",
                "1\r\nx\r\n0\r\n\r\n",
            ),
            &[ok(200, 1)],
        ),
        case(
            "an unknown coding that contains the word chunked",
            "RFC 9112 §6.3 ¶4: \"chunkedchunked\" is not chunked",
            &resp("Transfer-Encoding: chunkedchunked\r\n", "2\r\nhi\r\n0\r\n\r\n"),
            &[at_close(200, 12)],
        ),
        case(
            "chunked named twice",
            "RFC 9112 §6.3 ¶4: the final coding is chunked, which frames the message",
            &resp("Transfer-Encoding: chunked, chunked\r\n", "2\r\nhi\r\n0\r\n\r\n"),
            &[ok(200, 2)],
        ),
        case(
            "empty list elements around chunked",
            "RFC 9110 §5.6.1: empty elements are ignored",
            &resp("Transfer-Encoding: , chunked ,\r\n", "2\r\nhi\r\n0\r\n\r\n"),
            &[ok(200, 2)],
        ),
        case(
            "an empty Transfer-Encoding with Content-Length",
            "RFC 9110 §5.6.1: a list of no elements names no coding, so Content-Length frames (llhttp rejects it)",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\nContent-Length: 5\r\n\r\nhello",
            &[ok(200, 5)],
        ),
        // --- Chunked framing (RFC 9112 §7.1; llhttp: transfer-encoding, sample).
        case(
            "chunk extensions with and without values",
            "RFC 9112 §7.1.1: chunk-ext = *( BWS \";\" BWS ext-name [ BWS \"=\" BWS ext-val ] )",
            &chunked("3;name;k=v\r\nabc\r\n2;x-only\r\nde\r\n0;last=yes\r\n\r\n"),
            &[ok(200, 5)],
        ),
        case(
            "a quoted extension value holding a semicolon",
            "RFC 9112 §7.1.1: ext-val may be a quoted-string",
            &chunked("3;note=\"a; b\";plain=c\r\nabc\r\n0\r\n\r\n"),
            &[ok(200, 3)],
        ),
        case(
            "an unclosed quoted extension value",
            "RFC 9112 §7.1.1 and RFC 9110 §5.6.4: a quoted-string ends with DQUOTE",
            &chunked("3;note=\"open\r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "words after the size with no semicolon",
            "RFC 9112 §7.1: an extension starts with \";\"",
            &chunked("3 junk\r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "a semicolon with no extension name",
            "RFC 9112 §7.1.1: ext-name = token",
            &chunked("3;\r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "spaces after the chunk size",
            "RFC 9112 §7.1: BWS only before \";\"",
            &chunked("3  \r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "spaces after the last chunk's size",
            "RFC 9112 §7.1: last-chunk = 1*(\"0\") [ chunk-ext ] CRLF",
            &chunked("3\r\nabc\r\n0 \r\n\r\n"),
            &[Malformed],
        ),
        case(
            "chunk sizes in upper-case hex with leading zeros",
            "RFC 9112 §7.1: chunk-size = 1*HEXDIG",
            &chunked("00A\r\n0123456789\r\n000\r\n\r\n"),
            &[ok(200, 10)],
        ),
        case(
            "a 0x prefix on the size",
            "RFC 9112 §7.1: chunk-size = 1*HEXDIG",
            &chunked("0x3\r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "a chunk size past 64 bits",
            "RFC 9112 §7.1: a recipient MUST anticipate and reject sizes that overflow",
            &chunked("10000000000000000\r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "chunk data longer than its size",
            "RFC 9112 §7.1: chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF",
            &chunked("2\r\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "a chunk-size line ended by a bare LF",
            "RFC 9112 §7.1: chunk lines end in CRLF",
            &chunked("3\nabc\r\n0\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "a chunk holding a line feed",
            "RFC 9112 §7.1: chunk-data is any octets",
            &chunked("1\r\n\n\r\n0\r\n\r\n"),
            &[ok(200, 1)],
        ),
        case(
            "trailer fields after the last chunk",
            "RFC 9112 §7.1.2: trailer-section = *( field-line CRLF )",
            &chunked("2\r\nhi\r\n0\r\nX-Checksum: 42\r\nX-Other:\r\n\r\n"),
            &[ok(200, 2)],
        ),
        case(
            "obs-fold inside a trailer field",
            "RFC 9112 §5.2: trailers are field lines too; the fold reads as spaces",
            &chunked("2\r\nhi\r\n0\r\nX-Digest: part one\r\n\tpart two\r\n\r\n"),
            &[ok(200, 2)],
        ),
        case(
            "a trailer section that starts with whitespace",
            "RFC 9112 §5.2: a fold continues a field line; with none before, it is invalid",
            &chunked("2\r\nhi\r\n0\r\n X-Digest: 1\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "a trailer line that is not a field",
            "RFC 9112 §7.1.2: trailer lines are field lines",
            &chunked("2\r\nhi\r\n0\r\nnot a field\r\n\r\n"),
            &[Malformed],
        ),
        case(
            "a chunked body cut inside a chunk",
            "RFC 9112 §8: the close before the last chunk leaves it incomplete",
            &chunked("a\r\nhalf"),
            &[Cut],
        ),
        case(
            "a chunked body cut before the final CRLF",
            "RFC 9112 §7.1: the message ends after the trailer section's CRLF",
            &chunked("2\r\nhi\r\n0\r\n"),
            &[Cut],
        ),
        // --- Connection (RFC 9112 §9.3, §9.6; llhttp: connection).
        case(
            "HTTP/1.1 persists by default",
            "RFC 9112 §9.3",
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            &[ok(200, 0)],
        ),
        case(
            "Connection: close",
            "RFC 9112 §9.6",
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
            &[ok_close(200, 1)],
        ),
        case(
            "close among other options, in any case",
            "RFC 9110 §7.6.1: connection options are case-insensitive tokens in a list",
            b"HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n",
            &[ok_close(200, 0)],
        ),
        case(
            "an option that only starts with close",
            "RFC 9110 §7.6.1: \"closed\" is another option",
            b"HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n",
            &[ok(200, 0)],
        ),
        case(
            "Proxy-Connection: close is not Connection",
            "RFC 9110 §7.6.1: only Connection carries options",
            b"HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 2\r\n\r\nhi",
            &[ok(200, 2)],
        ),
        case(
            "bytes after a closing answer are not a response",
            "RFC 9112 §9.6: the answer with close is the last one on the connection",
            b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\n",
            &[ok_close(204, 0)],
        )
        .rest(17),
        case(
            "a closing sized answer followed by junk",
            "RFC 9112 §6.3: a client MUST NOT take extra data for a response",
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabcdefgh",
            &[ok_close(200, 3)],
        )
        .rest(5),
        case(
            "HTTP/1.0 closes by default",
            "RFC 9112 §9.3: 1.0 persists only with keep-alive",
            b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi",
            &[ok_close(200, 2)],
        ),
        case(
            "HTTP/1.0 with keep-alive",
            "RFC 9112 §9.3, Appendix C.2.2",
            b"HTTP/1.0 301 Moved\r\nLocation: /\r\nPragma:\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            &[ok(301, 0)],
        ),
        case(
            "HTTP/1.0 with keep-alive and no length",
            "RFC 9112 §6.3 ¶8: no framing, so read until the close",
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nHTTP/1.0 200 OK",
            &[at_close(200, 15)],
        ),
        case(
            "HTTP/1.0 204 with keep-alive, then the next answer",
            "RFC 9112 §6.3 ¶1: a 204 ends with its head",
            b"HTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\nHTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n!",
            &[ok(204, 0), ok(200, 1)],
        ),
        case(
            "an Upgrade field on a 200 with no framing",
            "RFC 9110 §7.8: only a 101 switches; the body runs until the close",
            b"HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\ndata",
            &[at_close(200, 4)],
        ),
        case(
            "an Upgrade field on a sized 200",
            "RFC 9110 §7.8: only a 101 switches",
            b"HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 4\r\n\r\ndata",
            &[ok(200, 4)],
        ),
        // --- Bodiless and interim answers (RFC 9112 §6.3 ¶1, RFC 9110 §15.2).
        case(
            "a 204 with a Content-Length, then the next answer",
            "RFC 9112 §6.3 ¶1: a 204 has no body whatever its fields",
            b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1",
            &[ok(204, 0), ok(200, 1)],
        ),
        case(
            "a 304 with chunked Transfer-Encoding",
            "RFC 9112 §6.3 ¶1: a 304 has no body",
            b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
            &[ok(304, 0)],
        ),
        case(
            "answers to HEAD with Content-Length, pipelined",
            "RFC 9112 §6.3 ¶1: an answer to HEAD has no body",
            b"HTTP/1.1 200 OK\r\nContent-Length: 321\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 654\r\n\r\n",
            &[ok(200, 0), ok(200, 0)],
        )
        .head(),
        case(
            "an answer to HEAD with chunked Transfer-Encoding",
            "RFC 9112 §6.3 ¶1: an answer to HEAD has no body",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            &[ok(200, 0)],
        )
        .head(),
        case(
            "100 Continue before the final answer",
            "RFC 9110 §15.2: a 1xx is interim; the final answer follows",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            &[ok(200, 2)],
        ),
        case(
            "two interim answers with fields",
            "RFC 9110 §15.2: any number of 1xx may precede the final answer",
            b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            &[ok(204, 0)],
        ),
        case(
            "an interim answer, then the close",
            "RFC 9110 §15.2: a 1xx is never the answer",
            b"HTTP/1.1 100 Continue\r\n\r\n",
            &[Cut],
        ),
        case(
            "101 Switching Protocols",
            "RFC 9110 §15.2.2: we never ask to switch; a 101 is no final answer",
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n",
            &[Malformed],
        ),
        case(
            "101 with a Content-Length and bytes after",
            "RFC 9110 §15.2.2: a 101 is no final answer, whatever follows (llhttp frames it and pauses)",
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nContent-Length: 4\r\n\r\nbodyPRI * HTTP/2.0",
            &[Malformed],
        ),
        // --- Finish: how the close ends a response (RFC 9112 §6.3, §8; llhttp: finish).
        case(
            "a head with no framing ends at the close",
            "RFC 9112 §6.3 ¶8: no length, so the close delimits an empty body",
            b"HTTP/1.1 200 OK\r\n\r\n",
            &[at_close(200, 0)],
        ),
        case(
            "a close-delimited body",
            "RFC 9112 §6.3 ¶8",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nConnection: close\r\n\r\n<a>\n <b/>\n</a>",
            &[at_close(200, 14)],
        ),
        case(
            "a 404 with no fields",
            "RFC 9112 §6.3 ¶8",
            b"HTTP/1.1 404 Not Found\r\n\r\n",
            &[at_close(404, 0)],
        ),
        case(
            "a sized body cut by the close",
            "RFC 9112 §8: fewer octets than Content-Length is incomplete",
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345",
            &[Cut],
        ),
        case(
            "a status line cut by the close",
            "RFC 9112 §8: an incomplete head is no response",
            b"HTTP/1.1 20",
            &[Cut],
        ),
        case(
            "a head cut by the close before its blank line",
            "RFC 9112 §8: an incomplete head is no response",
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n",
            &[Cut],
        ),
        // --- Pipelining: answers back to back in one stream (RFC 9112 §9.3.2).
        case(
            "three sized answers back to back",
            "RFC 9112 §9.3.2: answers come in request order",
            &three,
            &[ok(200, 3), ok(201, 4), ok(202, 0)],
        ),
        case(
            "chunked, sized, then close-delimited",
            "RFC 9112 §6.3: each answer's framing says where the next begins",
            &[
                chunked("1\r\na\r\n0\r\n\r\n"),
                resp("Content-Length: 2\r\n", "bc"),
                resp("", "tail"),
            ]
            .concat(),
            &[ok(200, 1), ok(200, 2), at_close(200, 4)],
        ),
        case(
            "an empty line between pipelined answers",
            "RFC 9112 §2.2's robustness for a stray CRLF (as llhttp)",
            &[resp("Content-Length: 1\r\n", "a\r\n"), resp("Content-Length: 1\r\n", "b")].concat(),
            &[ok(200, 1), ok(200, 1)],
        ),
        case(
            "a sized answer, then a head cut by the close",
            "RFC 9112 §8",
            &[resp("Content-Length: 1\r\n", "a"), b"HTTP/1.1 200 OK\r\nConte".to_vec()].concat(),
            &[ok(200, 1), Cut],
        ),
        case(
            "a sized answer, then bytes that are no head",
            "RFC 9112 §4: every answer starts with a status line",
            &[resp("Content-Length: 1\r\n", "a"), b"garbage\r\n\r\n".to_vec()].concat(),
            &[ok(200, 1), Malformed],
        ),
        case(
            "Content-Length 0 then the next answer at once",
            "RFC 9112 §6.3 ¶6: a zero length ends the answer with its head",
            &[&b"HTTP/1.1 200 OK\r\n"[..], CL0, b"HTTP/1.1 202 Accepted\r\n", CL0].concat(),
            &[ok(200, 0), ok(202, 0)],
        ),
    ]
}

#[test]
fn every_case_gets_its_verdict_whole_and_byte_by_byte() {
    let cases = table();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let whole = deliver(&c.input, c.head, c.input.len().max(1));
        let bytes = deliver(&c.input, c.head, 1);
        let want = (c.want.clone(), c.rest);
        if whole != want || bytes != want {
            wrong.push(format!(
                "{} [{}]\n    want {want:?}\n    whole {whole:?}\n    byte by byte {bytes:?}",
                c.title, c.rule
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases disagree:\n  {}",
        wrong.len(),
        cases.len(),
        wrong.join("\n  ")
    );
}

#[test]
fn case_titles_are_unique() {
    let cases = table();
    let mut titles: Vec<_> = cases.iter().map(|c| c.title).collect();
    titles.sort_unstable();
    let before = titles.len();
    titles.dedup();
    assert_eq!(titles.len(), before);
}
