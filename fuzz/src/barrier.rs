//! Target `barrier`: the reader of the start barrier's messages
//! (`shootout_model::barrier::read_msg`, with `Msg::parse`) on whatever a peer on shard
//! 0's port, or a shard 0 that is not one, may send: the input is read message after
//! message, as a connection's reader reads them, past refused lines too.
//!
//! Invariants: no panic; each read takes at most `MAX_LINE` bytes and at least one, and a
//! message read ends at its line's end; every message read writes back (`Msg::to_line`) as
//! one line of at most `MAX_LINE` bytes that reads back as the same message; a `HELLO`'s
//! index is below its count and its run id passes `check_run_id`; a `START` is at most
//! `MAX_START_IN` ahead; the heap grows by at most a few lines' worth per read, whatever
//! the input's length.

use crate::alloc;
use shootout_model::barrier::{check_run_id, read_msg, Msg, MAX_LINE, MAX_START_IN};
use std::io::ErrorKind;

/// The most the heap may grow while one message is read and checked: the line, the
/// message's text, the line written back and the error, each at most a line.
const READ_BOUND: usize = 8 * MAX_LINE + 1024;

/// The target (see the module).
pub fn check(data: &[u8]) {
    let mut rest = data;
    while !rest.is_empty() {
        let before = rest.len();
        let (read, grew) = alloc::peak_growth(|| {
            let read = read_msg(&mut rest);
            if let Ok(m) = &read {
                holds(m);
            }
            read
        });
        assert!(
            grew <= READ_BOUND,
            "heap grew by {grew} bytes reading one message"
        );
        let taken = before - rest.len();
        assert!((1..=MAX_LINE).contains(&taken), "a read took {taken} bytes");
        match read {
            Ok(_) => assert_eq!(data[data.len() - before + taken - 1], b'\n'),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => assert!(rest.is_empty()),
            Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}"),
        }
    }
}

/// A message's own invariants, and its round trip through its line.
fn holds(m: &Msg) {
    match m {
        Msg::Hello { run, index, count } => {
            assert!(index < count);
            assert!(check_run_id(run).is_ok(), "{run:?}");
        }
        Msg::Start { in_ns, .. } => assert!(*in_ns <= MAX_START_IN.as_nanos() as u64),
        _ => {}
    }
    let line = m.to_line();
    assert!(line.len() <= MAX_LINE, "{line:?}");
    let back = read_msg(&mut line.as_bytes())
        .unwrap_or_else(|e| panic!("{m:?} wrote {line:?}, which reads as {e}"));
    assert_eq!(&back, m, "{line:?}");
}
