//! Target `chunked`: chunked bodies built from structured input (sizes, extensions with
//! tokens, quoted strings and optional whitespace, trailers), valid by RFC 9112 §7.1 or
//! broken in one named way, fed in pieces and followed by a second response.
//!
//! Invariants: a valid body completes, consumes exactly its bytes (the next response is
//! left over and parses), has `body_len` equal to the sum of the chunk sizes, and finds
//! a needle exactly when the decoded body holds it (across chunk and read boundaries); a broken one is Malformed, or Closed at the end
//! of the stream when the break only makes the framing wait for more.

use arbitrary::{Arbitrary, Unstructured};
use shootout_engine::{ParseError, Progress, ResponseParser};

use crate::{tolerated, Known};

#[derive(Debug, Arbitrary)]
pub struct Body {
    chunks: Vec<Chunk>,
    last_extensions: Vec<Extension>,
    trailers: Vec<Trailer>,
    /// Other codings before chunked, and a Content-Length the framing must ignore.
    coding: u8,
    /// Search the body for a piece of itself (or for bytes it lacks).
    needle: Option<(u16, u8)>,
    pieces: Vec<u8>,
    breakage: Option<Breakage>,
}

#[derive(Debug, Arbitrary)]
struct Chunk {
    size: u16,
    fill: u8,
    leading_zeros: u8,
    upper: bool,
    extensions: Vec<Extension>,
}

#[derive(Debug, Arbitrary)]
struct Extension {
    /// Bits: whitespace before `;`, after `;`, before `=`, after `=`.
    spaces: u8,
    name: Vec<u8>,
    value: Option<Value>,
}

#[derive(Debug, Arbitrary)]
enum Value {
    Token(Vec<u8>),
    Quoted(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
struct Trailer {
    name: Vec<u8>,
    value: Vec<u8>,
}

/// One way to break the framing, applied to one chunk line.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Breakage {
    /// `5 \r\n`: whitespace before the CRLF of the size line.
    SpaceBeforeCrlf(u8),
    /// `5;\r\n`: an empty extension.
    EmptyExtension(u8),
    /// `5;a="b\r\n`: a quoted string never closed.
    OpenQuote(u8),
    /// `5\n`: a bare LF ends the size line.
    BareLf(u8),
    /// `5g\r\n`: not hex.
    NotHex(u8),
    /// Data not followed by CRLF.
    NoCrlfAfterData(u8),
    /// A size of more than 16 hex digits.
    HugeSize(u8),
    /// A chunk line with no size at all.
    NoSize(u8),
}

const TCHAR: &[u8] =
    b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn token(raw: &[u8]) -> Vec<u8> {
    let mut t: Vec<u8> = raw
        .iter()
        .take(12)
        .map(|&b| TCHAR[usize::from(b) % TCHAR.len()])
        .collect();
    if t.is_empty() {
        t.push(b'x');
    }
    t
}

fn quoted(raw: &[u8]) -> Vec<u8> {
    let mut q = vec![b'"'];
    for &b in raw.iter().take(16) {
        match b {
            b'"' | b'\\' => q.extend_from_slice(&[b'\\', b]),
            b'\t' | b' ' | 0x21..=0x7E | 0x80..=0xFF => q.push(b),
            // A quoted-pair may escape any visible character.
            _ => q.extend_from_slice(&[b'\\', b'a' + b % 26]),
        }
    }
    q.push(b'"');
    q
}

fn field_value(raw: &[u8]) -> Vec<u8> {
    let v: Vec<u8> = raw
        .iter()
        .take(24)
        .map(|&b| if (0x21..=0x7E).contains(&b) { b } else { b'v' })
        .collect();
    v
}

fn extensions(out: &mut Vec<u8>, exts: &[Extension]) {
    for e in exts.iter().take(4) {
        let ws = |bit: u8| {
            if e.spaces & bit != 0 {
                &b" \t"[..usize::from(e.spaces >> 4) % 2 + 1]
            } else {
                &b""[..]
            }
        };
        out.extend_from_slice(ws(1));
        out.push(b';');
        out.extend_from_slice(ws(2));
        out.extend_from_slice(&token(&e.name));
        if let Some(v) = &e.value {
            out.extend_from_slice(ws(4));
            out.push(b'=');
            out.extend_from_slice(ws(8));
            match v {
                Value::Token(t) => out.extend_from_slice(&token(t)),
                Value::Quoted(q) => out.extend_from_slice(&quoted(q)),
            }
        }
    }
}

/// The stream for `body`: the head, the chunked body, and a second response; also the
/// body bytes, where the first response ends and the breakage applied.
fn build(body: &Body) -> (Vec<u8>, Vec<u8>, usize, Option<Breakage>) {
    let mut out = b"HTTP/1.1 200 OK\r\n".to_vec();
    match body.coding % 3 {
        0 => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        1 => out.extend_from_slice(b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
        _ => out.extend_from_slice(b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"),
    }
    out.extend_from_slice(b"\r\n");
    let mut data = Vec::new();
    let chunks = &body.chunks[..body.chunks.len().min(8)];
    let broken = body.breakage.map(|b| {
        let at = match b {
            Breakage::SpaceBeforeCrlf(i)
            | Breakage::EmptyExtension(i)
            | Breakage::OpenQuote(i)
            | Breakage::BareLf(i)
            | Breakage::NotHex(i)
            | Breakage::NoCrlfAfterData(i)
            | Breakage::HugeSize(i)
            | Breakage::NoSize(i) => usize::from(i) % (chunks.len() + 1),
        };
        (b, at)
    });
    let mut applied = None;
    for (i, c) in chunks.iter().enumerate() {
        let size = usize::from(c.size) % 3000 + 1;
        let hex = if c.upper {
            format!("{size:X}")
        } else {
            format!("{size:x}")
        };
        let line_start = out.len();
        out.resize(out.len() + usize::from(c.leading_zeros % 4), b'0');
        out.extend_from_slice(hex.as_bytes());
        extensions(&mut out, &c.extensions);
        let crlf_at = out.len();
        out.extend_from_slice(b"\r\n");
        let chunk_data: Vec<u8> = (0..size).map(|j| c.fill.wrapping_add(j as u8)).collect();
        out.extend_from_slice(&chunk_data);
        data.extend_from_slice(&chunk_data);
        out.extend_from_slice(b"\r\n");
        if let Some((b, at)) = broken {
            if at == i {
                break_line(&mut out, b, line_start, crlf_at);
                applied = Some(b);
            }
        }
    }
    let line_start = out.len();
    out.push(b'0');
    extensions(&mut out, &body.last_extensions);
    let crlf_at = out.len();
    out.extend_from_slice(b"\r\n");
    for t in body.trailers.iter().take(4) {
        out.extend_from_slice(&token(&t.name));
        out.extend_from_slice(b": ");
        out.extend_from_slice(&field_value(&t.value));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if let Some((b, at)) = broken {
        if at == chunks.len() && !matches!(b, Breakage::NoCrlfAfterData(_)) {
            break_line(&mut out, b, line_start, crlf_at);
            applied = Some(b);
        }
    }
    let end = out.len();
    out.extend_from_slice(b"HTTP/1.1 204 No Content\r\n\r\n");
    (out, data, end, applied)
}

/// Breaks the chunk line at `start..crlf` (`crlf` is where its CRLF starts).
fn break_line(out: &mut Vec<u8>, b: Breakage, start: usize, crlf: usize) {
    match b {
        Breakage::SpaceBeforeCrlf(_) => out.insert(crlf, b' '),
        Breakage::EmptyExtension(_) => out.insert(crlf, b';'),
        Breakage::OpenQuote(_) => {
            out.splice(crlf..crlf, b";q=\"open".iter().copied());
        }
        Breakage::BareLf(_) => {
            out.remove(crlf);
        }
        Breakage::NotHex(_) => out.insert(start, b'g'),
        Breakage::NoCrlfAfterData(_) => {
            // The data's CRLF is the last two bytes written.
            let at = out.len() - 2;
            out[at] = b'X';
        }
        Breakage::HugeSize(_) => {
            out.splice(start..start, b"1000000000000000".iter().copied());
        }
        Breakage::NoSize(_) => {
            let digits = out[start..crlf]
                .iter()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            out.drain(start..start + digits);
            out.insert(start, b';');
        }
    }
}

/// Parses the stream in the pieces given; returns the first response's outcome and the
/// bytes it consumed.
fn parse(
    stream: &[u8],
    pieces: &[usize],
    needle: Option<&[u8]>,
) -> (Result<(), ParseError>, usize, u64, bool) {
    let mut p = ResponseParser::new(false, needle);
    let mut off = 0;
    let mut sizes = pieces.iter().cycle();
    while off < stream.len() {
        let end = (off + sizes.next().unwrap()).min(stream.len());
        match p.feed(&stream[off..end]) {
            Ok(Progress::NeedMore) => off = end,
            Ok(Progress::Done { consumed }) => {
                let used = off + consumed;
                // The leftover is the next response, whole.
                let (len, matched) = (p.body_len, p.matched);
                p.reset();
                assert_eq!(
                    p.feed(&stream[used..]),
                    Ok(Progress::Done {
                        consumed: stream.len() - used
                    }),
                    "the response after the chunked one"
                );
                assert_eq!(p.status, 204);
                return (Ok(()), used, len, matched);
            }
            Err(e) => return (Err(e), off, p.body_len, false),
        }
    }
    (p.eof(), off, p.body_len, false)
}

/// The target.
pub fn check(data: &[u8]) {
    let Ok(body) = Body::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let (stream, expected, end, breakage) = build(&body);
    let mut pieces: Vec<usize> = body
        .pieces
        .iter()
        .take(8)
        .map(|&s| usize::from(s))
        .filter(|&s| s > 0)
        .collect();
    if pieces.is_empty() {
        pieces.push(stream.len());
    }
    // A slice of the body (found), or bytes a short body cannot hold.
    let needle: Option<Vec<u8>> = body.needle.map(|(at, len)| {
        let len = usize::from(len % 16) + 1;
        if expected.len() >= len {
            let at = usize::from(at) % (expected.len() - len + 1);
            expected[at..at + len].to_vec()
        } else {
            b"no such bytes".to_vec()
        }
    });
    let (result, used, body_len, matched) = parse(&stream, &pieces, needle.as_deref());
    match breakage {
        None => {
            assert_eq!(
                result,
                Ok(()),
                "valid chunked body: {:?}",
                String::from_utf8_lossy(&stream)
            );
            assert_eq!(used, end, "consumed");
            assert_eq!(
                body_len,
                expected.len() as u64,
                "body_len is the sum of the chunk sizes"
            );
            if let Some(n) = &needle {
                let found = expected.windows(n.len()).any(|w| w == &n[..]);
                assert_eq!(matched, found, "needle {n:?} in the decoded body");
            }
        }
        Some(b) => {
            if result.is_ok() {
                let lax = matches!(
                    b,
                    Breakage::SpaceBeforeCrlf(_)
                        | Breakage::EmptyExtension(_)
                        | Breakage::OpenQuote(_)
                );
                if lax && tolerated(Known::LaxChunkExtension) {
                    return;
                }
                panic!("{b:?} accepted: {:?}", String::from_utf8_lossy(&stream));
            }
        }
    }
}
