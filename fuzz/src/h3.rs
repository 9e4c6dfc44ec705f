//! Target `h3`: the engine's HTTP/3 state (`shootout_engine::h3::conn::Connection`: the
//! frame reader and the QPACK decoder behind it) fed whatever a server could send on a
//! request stream and on its control stream.
//!
//! The first input byte chooses the read sizes and which stream the bytes go to (a
//! request stream with two requests open, or the server's control stream, whose type
//! byte comes first); the rest is the server's bytes, fed whole and in those reads, then
//! the stream's end. Invariants: no panic; the events, the stops and the verdict (kept,
//! or the connection error's code) are the same whatever the split; and the heap stays
//! within the connection's stated limits (a 64 KiB field section, a 64 KiB decoded list,
//! a 4 KiB control frame) plus what the input itself makes the client note.

use shootout_engine::h3::conn::{Connection, Event};
use shootout_engine::Begin;
use std::time::Instant;

/// What a feed led to: every event, the streams stopped, and the error's code if the
/// connection ended.
type Outcome = (Vec<Event>, Vec<(u64, u64)>, Option<u64>);

fn run(control: bool, data: &[u8], reads: &[usize]) -> (Outcome, usize) {
    let now = Instant::now();
    let mut c = Connection::new(2, Some(b"needle"));
    c.start();
    c.open(0, Begin::at(now, now));
    c.open(4, Begin::at(now, now));
    let mut error = None;
    let (_, grew) = crate::alloc::peak_growth(|| {
        let mut at = 0;
        let mut k = 0;
        while at < data.len() {
            let n = reads[k % reads.len()].min(data.len() - at);
            k += 1;
            let part = &data[at..at + n];
            at += n;
            let r = if control {
                c.uni_data(3, part)
            } else {
                c.request_data(0, part, false, now)
            };
            if let Err(e) = r {
                error = Some(e.code);
                return;
            }
        }
        let r = if control {
            c.uni_fin(3)
        } else {
            c.request_fin(0)
        };
        error = r.err().map(|e| e.code);
    });
    let events = std::mem::take(&mut c.events);
    let stops = std::mem::take(&mut c.stops);
    ((events, stops, error), grew)
}

/// Target `h3`.
pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let control = first & 1 == 1;
    let reads: &[usize] = match first >> 1 & 3 {
        0 => &[1],
        1 => &[7, 1, 300],
        2 => &[2],
        _ => &[4096, 3],
    };
    let (whole, grew_whole) = run(control, rest, &[rest.len().max(1)]);
    let (split, grew_split) = run(control, rest, reads);
    assert_eq!(
        whole, split,
        "the outcome depends on how the bytes were split"
    );
    // 64 KiB section + 64 KiB list + Huffman scratch + a 4 KiB control frame, buffers.
    let bound = (512 << 10) + 2 * rest.len();
    for grew in [grew_whole, grew_split] {
        assert!(grew <= bound, "heap grew {grew} > {bound}");
    }
}
