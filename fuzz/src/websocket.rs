//! Target `websocket`: the engine's WebSocket connection (`shootout_engine::ws::conn`)
//! fed whatever a server could send after our upgrade request: the answer head (parsed
//! by `ws::handshake::parse`) and then frames (cut by `ws::frame::Decoder`), with four
//! messages waiting for their replies.
//!
//! The first input byte chooses the read sizes; the rest is the server's bytes, in which
//! every `{ACCEPT}` is replaced by the `Sec-WebSocket-Accept` our key asks for (a fuzzer
//! cannot find a SHA-1), so inputs reach the frames. Invariants: no panic; the events
//! and the verdict are the same whatever the split; a handshake's head is at most its
//! limit; no more replies than messages; after a close nothing more is read; the pongs
//! waiting to be written stay within [`MAX_PONGS`] (here, where nothing is written, a
//! ping's pong replaces the one before it); and the heap stays within the connection's
//! stated limits (the answer head, one control frame) plus what the input makes the
//! client write (pongs, one close) — never a reply's size, since replies are checked as
//! they stream and never held.

use shootout_engine::ws::conn::{
    Connection, Event, Failure, Message, Phase, Sent, Slot, MAX_PONGS,
};
use shootout_engine::ws::frame::{Rng, TEXT};
use shootout_engine::ws::handshake::{self, Request};
use shootout_engine::Clock;
use shootout_model::Target;
use std::time::{Duration, Instant};

/// An event as compared between splits (its times left out).
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Open,
    Replied(u64, bool, bool),
    Close(u16),
}

/// What a feed led to: the events and the failure if the connection ended.
type Outcome = (Vec<Seen>, Option<Failure>);

fn run(data: &[u8], reads: &[usize]) -> (Outcome, usize) {
    let now = Instant::now();
    let target = Target::parse("ws://127.0.0.1:8765/echo").expect("a URL");
    let msg = Message {
        opcode: TEXT,
        payload: b"hello".to_vec(),
    };
    let mut rng = Rng::new(1);
    let mut c = Connection::new(Some(b"ll"));
    c.start(&Request::new(&target, &[]), &mut rng);
    let req = String::from_utf8_lossy(&c.out).into_owned();
    let key = req
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .expect("a key");
    let input = replace(data, b"{ACCEPT}", handshake::accept(key).as_bytes());
    for _ in 0..4 {
        let slot = Slot {
            clock: Clock::new(now, now, Duration::ZERO),
            drawn: None,
        };
        c.send(msg.opcode, &msg.payload, &mut rng, slot);
    }
    c.out.clear();
    let mut seen = Vec::new();
    let mut failure = None;
    let (_, grew) = crate::alloc::peak_growth(|| {
        let (mut at, mut k) = (0, 0);
        while at < input.len() && c.phase != Phase::Closed {
            let n = reads[k % reads.len()].min(input.len() - at);
            k += 1;
            let sent = Sent {
                message: &msg,
                list: None,
            };
            let r = c.feed(&input[at..at + n], sent, &mut rng, now);
            at += n;
            // Pongs of at most 131 bytes, and one close frame.
            assert!(
                c.out.len() <= (MAX_PONGS + 1) * 131,
                "{} bytes waiting to be written",
                c.out.len()
            );
            seen.extend(c.events.drain(..).map(|e| match e {
                Event::Open => Seen::Open,
                Event::Replied {
                    len,
                    matched,
                    echoed,
                    ..
                } => Seen::Replied(len, matched, echoed),
                Event::Close(code) => Seen::Close(code),
            }));
            if let Err(f) = r {
                failure = Some(f);
                return;
            }
        }
    });
    let replies = seen
        .iter()
        .filter(|s| matches!(s, Seen::Replied(..)))
        .count();
    assert!(replies <= 4, "{replies} replies to 4 messages");
    ((seen, failure), grew)
}

/// `data` with every `from` replaced by `to`.
fn replace(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut at = 0;
    while at < data.len() {
        if data[at..].starts_with(from) {
            out.extend_from_slice(to);
            at += from.len();
        } else {
            out.push(data[at]);
            at += 1;
        }
    }
    out
}

/// Target `websocket`.
pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let reads: &[usize] = match first & 3 {
        0 => &[1],
        1 => &[7, 1, 300],
        2 => &[2, 13],
        _ => &[4096, 3],
    };
    let (whole, grew_whole) = run(rest, &[rest.len().max(1)]);
    let (split, grew_split) = run(rest, reads);
    assert_eq!(
        whole, split,
        "the outcome depends on how the bytes were split"
    );
    // The answer head (16 KiB + 1), buffers, and what the input makes the client write
    // (a pong of at most 131 bytes per control frame of at least 2 bytes, one close).
    let bound = (64 << 10) + 70 * rest.len();
    for grew in [grew_whole, grew_split] {
        assert!(grew <= bound, "heap grew {grew} > {bound}");
    }
}
