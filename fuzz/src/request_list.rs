//! Target `request_list`: the reader of request lists (`RequestList::parse`, `--urls`
//! and a plan's `requests`), its text read as UTF-8 (lossily). `@FILE` lines name body
//! files from a small table: `a` and `b` hold templated text, `big` 64 KiB, any other
//! name cannot be read.
//!
//! Invariants: no panic; each body file is read at most once, however often it is named,
//! and the entries naming it share one copy; the bodies read hold at most
//! `MAX_LIST_BODIES` together and the list at most `MAX_ENTRIES` entries; a list that is
//! read passes `LoadSpec::validate` (the spec's own checks agree with the reader's), and
//! every path, header value and body of it is a template; the heap grows by at most a
//! bound set by the text's length and the bodies read.

use crate::alloc;
use shootout_model::requests::{Order, RequestList, Template, MAX_ENTRIES, MAX_LIST_BODIES};
use shootout_model::{LoadSpec, Target};
use std::collections::HashMap;
use std::sync::Arc;

/// The body files a list may name.
fn body(name: &str) -> Result<Vec<u8>, String> {
    match name {
        "a" => Ok(b"{\"id\": {seq}, \"n\": {rand:1-9}}".to_vec()),
        "b" => Ok(b"x={rand:0-18446744073709551615}&y={seq}".to_vec()),
        "big" => Ok(vec![b'z'; 64 << 10]),
        _ => Err("No such file or directory (os error 2)".into()),
    }
}

/// The target (see the module).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let base = Target::parse("http://127.0.0.1:8080/").expect("a valid URL");
    // Per name: times read, bytes read.
    let mut reads: HashMap<String, (usize, usize)> = HashMap::new();
    let (parsed, grew) = alloc::peak_growth(|| {
        RequestList::parse("list.txt", &text, Some(&base), Order::Seq, 7, |name| {
            let b = body(name);
            let r = reads.entry(name.to_string()).or_default();
            r.0 += 1;
            r.1 += b.as_ref().map_or(0, Vec::len);
            b
        })
    });
    for (name, (n, _)) in &reads {
        assert_eq!(*n, 1, "body file {name:?} read {n} times");
    }
    let read: usize = reads.values().map(|r| r.1).sum();
    // The entries and their fields (each a copy of part of the text, a Vec's doubling),
    // the bodies read (and the copy each becomes), and a little for the maps.
    let bound = 16 * data.len() + 2 * read + (1 << 20);
    assert!(
        grew <= bound,
        "heap grew by {grew} bytes (bound {bound}) reading {} bytes",
        data.len()
    );
    let Ok(list) = parsed else {
        return;
    };
    assert!(!list.entries.is_empty() && list.entries.len() <= MAX_ENTRIES);
    let mut by_len: HashMap<usize, &Arc<[u8]>> = HashMap::new();
    for e in &list.entries {
        if e.body.is_empty() {
            continue;
        }
        // Bodies of one length come from one file here (`a`, `b` and `big` differ).
        let first = by_len.entry(e.body.len()).or_insert(&e.body);
        assert!(Arc::ptr_eq(first, &e.body), "a body file read twice");
        for t in [e.path.as_bytes(), &e.body[..]]
            .into_iter()
            .chain(e.headers.iter().map(|(_, v)| v.as_bytes()))
        {
            assert!(Template::parse(t).is_ok(), "{t:?} is not a template");
        }
    }
    let bodies: usize = by_len.values().map(|b| b.len()).sum();
    assert!(bodies <= MAX_LIST_BODIES);
    let mut spec = LoadSpec::new(base);
    spec.list = Some(list);
    if let Err(e) = spec.validate() {
        panic!("a list that was read fails the spec's checks: {e}");
    }
}
