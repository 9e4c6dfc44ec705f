//! Target `h1_connection`: one HTTP/1.1 connection's state (its queue of pipelined
//! requests over the response parser, `h1::conn`) fed a server's byte stream in pieces,
//! as the worker feeds it.
//!
//! Input layout: `flags`, then the stream. `flags` bits 0-2: requests in flight, 1 to 8;
//! bit 3: keep-alive; bit 4: the requests are HEAD; bit 5: the peer closes after the
//! stream; bits 6-7: the read size (whole, 1, 7 or 64 bytes).
//!
//! Invariants: no panic and no endless loop (each answer consumes at least one byte of a
//! non-empty read, never more than it was given); at most as many answers as requests;
//! and the answers (status, body length), in order, are the same however the stream is
//! cut into reads.

use shootout_engine::h1_connection::{Connection, Received, Slot, Then};
use std::time::Instant;

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

/// Longest stream fed (the parser's own target reaches longer heads).
const MAX_STREAM: usize = 64 * 1024;

/// The answers a connection gave, and how it ended.
#[derive(Debug, PartialEq)]
struct Outcome {
    answers: Vec<(u16, u64)>,
}

fn drive(
    stream: &[u8],
    depth: usize,
    keepalive: bool,
    head: bool,
    close: bool,
    read: usize,
) -> Outcome {
    let now = Instant::now();
    let mut c = Connection::new(depth, keepalive, None);
    for k in 0..depth {
        c.push(Slot::new(now, now, k, head, true));
    }
    c.render(now, |_, out| out.extend_from_slice(GET));
    let n = c.unwritten().len();
    c.wrote(n);
    let mut answers = Vec::new();
    let take = |c: &mut Connection,
                r: Received,
                given: usize,
                answers: &mut Vec<(u16, u64)>|
     -> Option<usize> {
        match r {
            Received::NeedMore => Some(given),
            Received::Answered(a) => {
                assert!(a.consumed <= given, "consumed {} of {given}", a.consumed);
                assert!(a.consumed > 0 || given == 0, "an answer consumed nothing");
                assert!(c.pop_front().is_some(), "an answer with no request");
                answers.push((a.answer.status, a.answer.body_len));
                assert!(answers.len() <= depth, "more answers than requests");
                match a.then {
                    Then::Next => Some(a.consumed),
                    _ => None,
                }
            }
            Received::Unsolicited | Received::Malformed | Received::Lost => None,
        }
    };
    for piece in stream.chunks(read.max(1)) {
        let mut at = 0;
        while at < piece.len() {
            let r = c.received(&piece[at..], now);
            match take(&mut c, r, piece.len() - at, &mut answers) {
                Some(k) => at += k,
                None => return Outcome { answers },
            }
        }
    }
    if close && c.busy() {
        let r = c.eof();
        take(&mut c, r, 0, &mut answers);
    }
    Outcome { answers }
}

pub fn check(data: &[u8]) {
    let Some((&flags, stream)) = data.split_first() else {
        return;
    };
    let stream = &stream[..stream.len().min(MAX_STREAM)];
    let depth = usize::from(flags & 7) + 1;
    let (keepalive, head, close) = (flags & 8 != 0, flags & 16 != 0, flags & 32 != 0);
    let read = [stream.len(), 1, 7, 64][usize::from(flags >> 6)];
    let whole = drive(stream, depth, keepalive, head, close, stream.len());
    let pieces = drive(stream, depth, keepalive, head, close, read);
    // Answers are decided by the bytes, not by how they were read: a split can only end
    // the connection at the same answer.
    assert_eq!(whole.answers, pieces.answers, "read size {read}");
}
