//! What a step takes from its answer and checks in it, reading at most the body prefix
//! the step asked for: a JSON pointer's value, a regex's match over the body's first
//! `within` bytes, a header, a cookie. A 1 GiB answer costs what its prefix costs: the
//! connection keeps only [`shootout_model::journey::Journey::prefix`] bytes of it.

use super::cookies::Jar;
use shootout_model::journey::{Capture, CaptureFrom, Regex};

/// An answer's head fields, as the protocol that read them holds them.
pub trait Fields {
    /// Calls `f` with each field's name and value, in order.
    fn each(&self, f: &mut dyn FnMut(&[u8], &[u8]));
}

impl Fields for [(&[u8], &[u8])] {
    fn each(&self, f: &mut dyn FnMut(&[u8], &[u8])) {
        for (n, v) in self {
            f(n, v)
        }
    }
}

/// The answer to a step's request, as its connection read it; `F` is how its protocol
/// holds the head's fields (a slice of name and value pairs by default).
pub struct Answer<'a, F: ?Sized = [(&'a [u8], &'a [u8])]> {
    /// The final status code.
    pub status: u16,
    /// The head's fields.
    pub head: &'a F,
    /// The body's first bytes: at least the step's prefix when the body is that long
    /// (more is ignored).
    pub body: &'a [u8],
    /// The body's whole length in bytes.
    pub body_len: u64,
    /// Whether the whole body held the step's needle ([`super::User::needle`]), when the
    /// connection searched it as the body streamed; `None`: the machine searches `body`.
    pub contains: Option<bool>,
}

/// Takes capture `c` from answer `a` into `out` (cleared first); false when the answer
/// does not hold it. `jar` is the user's, already updated from the answer.
pub fn take<F: Fields + ?Sized>(
    c: &Capture,
    a: &Answer<F>,
    jar: &Jar,
    now: i64,
    out: &mut Vec<u8>,
) -> bool {
    out.clear();
    let prefix = &a.body[..a.body.len().min(c.within)];
    match &c.from {
        CaptureFrom::Body => match &c.regex {
            Some(r) => found(r, prefix, out),
            None => false,
        },
        CaptureFrom::Json(pointer) => {
            if a.body_len > prefix.len() as u64 {
                return false; // The JSON is cut at the prefix: not a document.
            }
            let Ok(doc) = serde_json::from_slice::<serde_json::Value>(prefix) else {
                return false;
            };
            match doc.pointer(pointer) {
                Some(serde_json::Value::String(s)) => out.extend_from_slice(s.as_bytes()),
                Some(serde_json::Value::Null) | None => return false,
                Some(v) => out.extend_from_slice(v.to_string().as_bytes()),
            }
            true
        }
        CaptureFrom::Header(name) => {
            let mut value = false;
            a.head.each(&mut |n, v| {
                if !value && n.eq_ignore_ascii_case(name.as_bytes()) {
                    value = match &c.regex {
                        Some(r) => found(r, v, out),
                        None => {
                            out.extend_from_slice(v);
                            true
                        }
                    };
                }
            });
            value
        }
        CaptureFrom::Cookie(name) => match jar.get(name.as_bytes(), now) {
            None => false,
            Some(v) => match &c.regex {
                Some(r) => found(r, v, out),
                None => {
                    out.extend_from_slice(v);
                    true
                }
            },
        },
    }
}

/// The first group's match of `r` in `hay` (the whole match without groups) into `out`.
fn found(r: &Regex, hay: &[u8], out: &mut Vec<u8>) -> bool {
    if r.captures_len() > 1 {
        match r.captures(hay).and_then(|m| m.get(1)) {
            Some(m) => {
                out.extend_from_slice(m.as_bytes());
                true
            }
            None => false,
        }
    } else {
        match r.find(hay) {
            Some(m) => {
                out.extend_from_slice(m.as_bytes());
                true
            }
            None => false,
        }
    }
}
