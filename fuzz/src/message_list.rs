//! Target `message_list`: the reader of WebSocket message lists (`MessageList::parse`,
//! `--ws-messages`), its text read as UTF-8 (lossily).
//!
//! Invariants: no panic; a list that is read has 1 to `MAX_ENTRIES` messages, each a
//! non-blank line of the text that is no comment, at most `MAX_LIST_MESSAGE` bytes, whose
//! template is the line's own; it passes `LoadSpec::validate` on a `ws://` URL; the heap
//! grows by at most 8 bytes per input byte, 256 bytes per line and 64 KiB.

use crate::alloc;
use shootout_model::messages::{MessageList, MAX_LIST_MESSAGE};
use shootout_model::requests::{Order, Template, MAX_ENTRIES};
use shootout_model::{LoadSpec, Protocol, Target};

/// The target (see the module).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (parsed, grew) =
        alloc::peak_growth(|| MessageList::parse("chat.txt", &text, Order::Random, 3));
    // The lines (a copy of the text) and their pieces (another), each a Vec's doubling,
    // and per message a String, a Template and a piece or two (their headers, and the
    // doubling of the Vecs holding them): at most 1,000,000 messages are read.
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    let bound = 8 * data.len() + 256 * lines + (1 << 16);
    assert!(
        grew <= bound,
        "heap grew by {grew} bytes (bound {bound}) reading {} bytes",
        data.len()
    );
    let Ok(list) = parsed else {
        return;
    };
    assert!(!list.lines.is_empty() && list.lines.len() <= MAX_ENTRIES);
    assert_eq!(list.lines.len(), list.templates.len());
    let mut lines = text
        .lines()
        .filter(|l| !(l.trim().is_empty() || l.starts_with('#')));
    for (line, t) in list.lines.iter().zip(&list.templates) {
        assert_eq!(lines.next(), Some(line.as_str()), "the lines in file order");
        assert!(line.len() <= MAX_LIST_MESSAGE);
        assert_eq!(Template::parse(line.as_bytes()).as_ref(), Ok(t));
    }
    let mut spec = LoadSpec::new(Target::parse("ws://127.0.0.1:8765/echo").expect("a URL"));
    spec.protocol = Protocol::WebSocket;
    spec.ws_messages = Some(list);
    if let Err(e) = spec.validate() {
        panic!("a list the reader took fails the spec's checks: {e}");
    }
}
