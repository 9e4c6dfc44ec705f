//! Target `h2_connection`: the engine's HTTP/2 connection state machine
//! (`shootout_engine::h2::conn::Connection`) fed whatever a server could send after our
//! preface, with streams open.
//!
//! The first input byte chooses the streams per connection (1–8), the read sizes, and
//! whether each stream keeps its answer's head and body prefix (a journey's users,
//! [`Connection::keep`]): what each keeps stays within the prefix asked for, and keeping
//! changes no event.
//! The server's SETTINGS come first (not from the input), then that many streams open
//! (ids 1, 3, 5 …), then the rest of the input is the server's bytes, fed whole and in
//! those reads; no stream opens after (when it would depends on the reads). Invariants:
//! no panic;
//! the events and the verdict (kept, or the connection error's code) are the same
//! whatever the split; after an error a GOAWAY with that code is the last frame written;
//! and the heap stays within the connection's stated limits (a header block of 64 KiB,
//! a decoded list of 64 KiB, 10,000 queued control frames) plus what the input itself
//! can make the client write.

use shootout_engine::h2::conn::{ConnError, Connection, Event};
use shootout_engine::h2::request::{prepare_one, Prepared};
use shootout_engine::Begin;
use shootout_model::{RequestSpec, Target};
use std::time::Instant;

fn request() -> Prepared {
    let target = Target::parse("http://127.0.0.1:8080/fuzz").expect("a URL");
    prepare_one(&target, &RequestSpec::default()).expect("a request")
}

/// What a feed led to: every event, and the error if the connection ended.
type Outcome = (Vec<Event>, Option<ConnError>);

/// The body prefix a keeping connection keeps.
const KEPT: usize = 100;

fn run(
    req: &Prepared,
    (streams, keep): (usize, bool),
    data: &[u8],
    reads: &[usize],
) -> (Outcome, usize) {
    let now = Instant::now();
    let mut c = Connection::new(streams, None);
    c.start();
    // The server's preface: an empty SETTINGS.
    let ready = c.feed(&[0, 0, 0, 4, 0, 0, 0, 0, 0], req, now);
    assert_eq!(
        (ready, c.events.drain(..).collect::<Vec<_>>()),
        (Ok(()), vec![Event::Ready])
    );
    let mut slots = Vec::new();
    while c.room() > 0 {
        let slot = c.open(req, Begin::at(now, now));
        if keep {
            c.keep(slot, KEPT, Some(b"needle"));
        }
        slots.push(slot);
    }
    let mut events = Vec::new();
    let mut error = None;
    let mut at = 0;
    let mut k = 0;
    let (_, grew) = crate::alloc::peak_growth(|| {
        while at < data.len() {
            let n = reads[k % reads.len()].min(data.len() - at);
            k += 1;
            let r = c.feed(&data[at..at + n], req, now);
            at += n;
            let fresh: Vec<Event> = c.events.drain(..).collect();
            for e in fresh {
                events.push(e);
                if let Event::Answered(slot)
                | Event::Failed(slot, _)
                | Event::Rejected(slot, _)
                | Event::Stopped(slot)
                | Event::Unprocessed(slot) = e
                {
                    c.free(slot);
                }
            }
            if let Err(e) = r {
                error = Some(e);
                return;
            }
        }
    });
    for slot in slots {
        if let (Some(k), _) = c.kept(slot) {
            assert!(k.body.len() <= KEPT, "kept {} body bytes", k.body.len());
        }
    }
    if let Some(ConnError(code)) = error {
        let out = &c.out;
        assert!(out.len() >= 17, "no GOAWAY written");
        let goaway = &out[out.len() - 17..];
        assert_eq!(goaway[3], 0x7, "the last frame is a GOAWAY");
        assert_eq!(
            u32::from_be_bytes([goaway[13], goaway[14], goaway[15], goaway[16]]),
            code.0
        );
    }
    ((events, error), grew)
}

/// Target `h2_connection`.
pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let streams = usize::from(first & 7) + 1;
    let reads: &[usize] = match first >> 3 & 3 {
        0 => &[1],
        1 => &[7, 1, 300],
        2 => &[9],
        _ => &[4096, 3],
    };
    let keep = first & 0x20 != 0;
    let req = request();
    let (whole, grew_whole) = run(&req, (streams, keep), rest, &[rest.len().max(1)]);
    let (split, grew_split) = run(&req, (streams, keep), rest, reads);
    assert_eq!(
        whole, split,
        "the outcome depends on how the bytes were split"
    );
    if keep {
        let (plain, _) = run(&req, (streams, false), rest, reads);
        assert_eq!(plain, split, "keeping the answers changed what happened");
    }
    // 64 KiB block + 16 KiB frame + 64 KiB list + 170 KB control frames + the table,
    // buffers, and what the input makes the client write (window updates, resets).
    let bound = (1 << 20) + 4 * rest.len();
    for grew in [grew_whole, grew_split] {
        assert!(grew <= bound, "heap grew {grew} > {bound}");
    }
}
