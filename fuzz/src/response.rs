//! Target `response`: a byte stream of responses (any framing, pipelined), fed in pieces.
//!
//! Input layout: `flags`, `n`, `n` piece sizes, then the stream.
//! - `flags` bit 0: the request was HEAD; bit 1: search bodies for a needle (bits 5-7 pick it); bit 2: want the `Server`
//!   header; bit 3: expand runs in the stream (`0xFF hi lo` repeats the byte before it
//!   `hi * 256 + lo` times, so heads and lines past 64 KiB are reachable from small
//!   inputs); bit 4: piece sizes count in units of 64 bytes.
//! - `n % 9` piece sizes follow, used in a cycle (0: an empty read); `n >= 128`: keep each
//!   answer's head and the first `n % 64` bytes of its body, as a journey's step does.
//!
//! Invariants, for each way of feeding (whole, in the given pieces, byte by byte):
//! no panic; `consumed` never exceeds what was fed and is never 0 for a non-empty read;
//! an empty read changes nothing; each complete response accounts for every byte it
//! consumed (`seen == consumed == head_len + body_len`);
//! after `Done`, `reset()` and the leftover parse on; the heap grows by at most a bound
//! set by the longest head and the largest read, whatever the body; and the
//! sequence of outcomes (status, body length, close, head length, Server, needle found, error kind,
//! the kept head and body prefix) is the same whatever the split; a kept body is never longer
//! than asked nor than the body, and a kept head is the head's first bytes.

use shootout_engine::{ParseError, Progress, ResponseParser};

use crate::{alloc, tolerated, Known, MAX_HEAD};

/// Responses parsed from one stream at most (a stream of tiny responses ends there).
const MAX_RESPONSES: usize = 64;
/// Longest stream after expansion.
const MAX_STREAM: usize = 300 * 1024;
/// Longest stream that is also fed byte by byte.
const BYTEWISE_MAX: usize = 256;
/// Reads times stream length, at most: an incomplete head is parsed again on each read,
/// so a long stream in many small reads would cost quadratic time per input. A 64 KiB
/// head still arrives in 8 reads.
const READ_BUDGET: usize = 512 * 1024;

/// What bodies are searched for (flags bit 1 on; bits 5 to 7 pick one).
const NEEDLES: [&[u8]; 8] = [
    b"ok",
    b"a",
    b"hello",
    b"\r\n",
    b"0\r\n",
    b"xyzzy",
    b"HTTP/1.1",
    b"aaaa",
];

/// How a stream is parsed.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    pub head_request: bool,
    /// What the body is searched for, if anything.
    pub needle: Option<&'static [u8]>,
    pub want_server: bool,
    /// Keep each answer's head and this many bytes of its body.
    pub keep: Option<usize>,
}

/// What one response (or the end of the stream) came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A complete response.
    Done {
        status: u16,
        body_len: u64,
        close: bool,
        /// None while `Known::ChunkLineHeadLen` is tolerated.
        head_len: Option<u64>,
        consumed: u64,
        /// A hash of the `Server` value (a copy per event would weigh on the heap bound).
        server: Option<u64>,
        matched: bool,
        /// A hash of the kept head and body prefix, in keep mode.
        kept: Option<u64>,
    },
    /// A close-delimited response completed by the end of the stream.
    Eof {
        status: u16,
        body_len: u64,
        close: bool,
        /// A hash of the `Server` value (a copy per event would weigh on the heap bound).
        server: Option<u64>,
    },
    /// The stream ended in the middle of a response.
    Closed,
    /// The parser rejected the bytes.
    Malformed,
}

/// Decodes the input of the target.
pub fn decode(data: &[u8]) -> (Mode, Vec<usize>, Vec<u8>) {
    let flags = data.first().copied().unwrap_or(0);
    let mode = Mode {
        head_request: flags & 1 != 0,
        needle: (flags & 2 != 0).then(|| NEEDLES[usize::from(flags >> 5)]),
        want_server: flags & 4 != 0,
        keep: data
            .get(1)
            .filter(|&&n| n >= 128)
            .map(|&n| usize::from(n % 64)),
    };
    let n = data.get(1).map_or(0, |&n| usize::from(n % 9));
    let sizes_end = (2 + n).min(data.len());
    let unit = if flags & 16 != 0 { 64 } else { 1 };
    let mut pieces: Vec<usize> = data
        .get(2..sizes_end)
        .unwrap_or_default()
        .iter()
        .map(|&s| usize::from(s) * unit)
        .collect();
    let raw = data.get(sizes_end..).unwrap_or_default();
    let stream = if flags & 8 != 0 {
        expand(raw)
    } else {
        raw.to_vec()
    };
    let max_reads = (READ_BUDGET / stream.len().max(1)).max(4);
    let least = stream.len().div_ceil(max_reads).max(1);
    for s in pieces.iter_mut().filter(|s| **s != 0) {
        *s = (*s).max(least);
    }
    if pieces.iter().all(|&s| s == 0) {
        pieces.push(least);
    }
    (mode, pieces, stream)
}

fn expand(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() && out.len() < MAX_STREAM {
        if raw[i] == 0xFF && i + 2 < raw.len() {
            let count = usize::from(raw[i + 1]) << 8 | usize::from(raw[i + 2]);
            let byte = out.last().copied().unwrap_or(b'a');
            let count = count.min(MAX_STREAM - out.len());
            out.resize(out.len() + count, byte);
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    out.truncate(MAX_STREAM);
    out
}

/// Parses `stream` as pipelined responses, feeding it in reads of the sizes `pieces`
/// gives (cycled); checks the per-read invariants and returns the outcomes.
pub fn run(mode: Mode, stream: &[u8], pieces: &[usize]) -> Vec<Event> {
    let mut p = ResponseParser::new(mode.head_request, mode.needle);
    if mode.want_server {
        p.want_server();
    }
    if let Some(body_max) = mode.keep {
        p.keep(body_max, mode.needle);
    }
    let mut events = Vec::new();
    let mut off = 0;
    // Bytes of the current response fed so far.
    let mut fed = 0u64;
    let mut sizes = pieces.iter().cycle();
    while off < stream.len() {
        let size = *sizes.next().expect("pieces is never empty");
        let end = (off + size).min(stream.len());
        let mut read = &stream[off..end];
        off = end;
        if read.is_empty() {
            empty_read_changes_nothing(&mut p);
            continue;
        }
        // One read may hold the end of a response and the start of the next ones.
        while !read.is_empty() {
            match p.feed(read) {
                Ok(Progress::NeedMore) => {
                    fed += read.len() as u64;
                    read = &[];
                }
                Ok(Progress::Done { consumed }) => {
                    assert!(
                        consumed <= read.len(),
                        "consumed {consumed} of {}",
                        read.len()
                    );
                    assert!(consumed > 0, "a response completed on no bytes");
                    fed += consumed as u64;
                    events.push(done(&p, mode, fed));
                    read = &read[consumed..];
                    fed = 0;
                    if events.len() == MAX_RESPONSES {
                        return events;
                    }
                    p.reset();
                }
                Err(e) => {
                    assert_eq!(e, ParseError::Malformed, "feed reports only Malformed");
                    events.push(Event::Malformed);
                    return events;
                }
            }
        }
    }
    if fed > 0 {
        events.push(match p.eof() {
            Ok(()) => {
                assert_eq!(p.seen, fed, "seen counts every byte of the response");
                head_accounting(p.head_len, p.body_len, fed);
                Event::Eof {
                    status: p.status,
                    body_len: p.body_len,
                    close: p.close,
                    server: p.server.as_deref().map(hash),
                }
            }
            Err(ParseError::Closed) => Event::Closed,
            // A partial head that is not HTTP: the same verdict as had it come in one read.
            Err(ParseError::Malformed) => Event::Malformed,
        });
    }
    events
}

fn empty_read_changes_nothing(p: &mut ResponseParser) {
    let before = (p.status, p.body_len, p.head_len, p.seen, p.close);
    assert_eq!(p.feed(&[]), Ok(Progress::NeedMore), "an empty read");
    assert_eq!(before, (p.status, p.body_len, p.head_len, p.seen, p.close));
}

/// Checks that every byte consumed is head (framing lines included) or body; returns
/// `head_len` when it is compared across splits.
fn head_accounting(head_len: u64, body_len: u64, consumed: u64) -> Option<u64> {
    if tolerated(Known::ChunkLineHeadLen) {
        assert!(
            head_len + body_len <= consumed,
            "more head and body than bytes"
        );
        return None;
    }
    assert_eq!(head_len + body_len, consumed, "every byte is head or body");
    Some(head_len)
}

fn done(p: &ResponseParser, mode: Mode, consumed: u64) -> Event {
    assert_eq!(p.seen, consumed, "seen is what the response consumed");
    let head_len = head_accounting(p.head_len, p.body_len, consumed);
    assert!(
        !(100..200).contains(&p.status) || p.status == 101,
        "interim status {} reported as final",
        p.status
    );
    if mode.needle.is_none() {
        assert!(!p.matched, "matched without a needle");
    }
    if mode.head_request {
        assert_eq!(p.body_len, 0, "a body in the answer to HEAD");
    }
    let kept = mode.keep.map(|body_max| {
        let k = p.kept.as_deref().expect("keep mode keeps");
        let want = (body_max as u64).min(p.body_len);
        assert_eq!(k.body.len() as u64, want, "the kept prefix of the body");
        assert!(
            k.head.len() as u64 <= p.head_len,
            "a kept head longer than the heads read"
        );
        hash_bytes(k.head.iter().chain(&[0]).chain(&k.body))
    });
    Event::Done {
        status: p.status,
        body_len: p.body_len,
        close: p.close,
        head_len,
        consumed,
        server: p.server.as_deref().map(hash),
        matched: p.matched,
        kept,
    }
}

/// The target: decode, then parse the stream whole, in the given pieces and byte by byte,
/// and compare.
pub fn check(data: &[u8]) {
    let (mode, pieces, stream) = decode(data);
    let whole = run(mode, &stream, &[stream.len().max(1)]);
    let (split, grew) = alloc::peak_growth(|| run(mode, &stream, &pieces));
    let largest = pieces.iter().max().copied().unwrap_or(1).min(stream.len());
    // The line buffer: a head or chunk line plus one read, doubled by Vec growth; the
    // events; in keep mode the kept head (at most a head, doubled by growth) and prefix.
    let kept = mode.keep.map_or(0, |_| 2 * MAX_HEAD + 128);
    let bound = 2 * (MAX_HEAD + largest) + 64 * 1024 + kept;
    assert!(
        grew <= bound,
        "heap grew by {grew} bytes (bound {bound}) parsing {} bytes in reads of up to {largest}",
        stream.len()
    );
    same(&stream, "whole", &whole, "split", &split);
    if stream.len() <= BYTEWISE_MAX {
        let bytewise = run(mode, &stream, &[1]);
        same(&stream, "whole", &whole, "byte by byte", &bytewise);
    }
}

fn same(stream: &[u8], a_name: &str, a: &[Event], b_name: &str, b: &[Event]) {
    if a == b {
        return;
    }
    // Known: a head or line past MAX_HEAD passes in one read only.
    let malformed = a.last() == Some(&Event::Malformed) || b.last() == Some(&Event::Malformed);
    if malformed && stream.len() > MAX_HEAD && tolerated(Known::LongLineSplit) {
        return;
    }
    panic!("the outcome depends on the split:\n{a_name}: {a:?}\n{b_name}: {b:?}");
}

fn hash(s: &str) -> u64 {
    hash_bytes(s.as_bytes())
}

fn hash_bytes<'a>(bytes: impl IntoIterator<Item = &'a u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
