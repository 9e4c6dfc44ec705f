//! What HTTP/2 and HTTP/3 share on both sides of a field section: our request's section
//! before HPACK or QPACK encodes it ([`section`], the same list for both), the fields both
//! refuse ([`refuse_connection_fields`]) and the request as `-v 2` prints it; and once an
//! answer's section is decoded, the list ([`Fields`]), the `:status` value, and the head as
//! `-v 2` prints it.

use crate::request::{HeaderError, Request};

/// Header fields HTTP/2 and HTTP/3 forbid (RFC 9113 §8.2.2, RFC 9114 §4.2): the
/// connection's own, which they frame.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "upgrade",
    "transfer-encoding",
];

/// Refuses a request with a field HTTP/1.1's connections use and `version` (`HTTP/2`,
/// `HTTP/3`) forbids, as `rfc` says: `Connection` and its kin, and `TE` other than
/// `trailers`.
pub(crate) fn refuse_connection_fields(
    r: &Request,
    version: &str,
    rfc: &str,
) -> Result<(), HeaderError> {
    for (n, v) in &r.theirs {
        let lower = n.to_ascii_lowercase();
        if CONNECTION_SPECIFIC.contains(&lower.as_str())
            || (lower == "te" && !v.trim().eq_ignore_ascii_case("trailers"))
        {
            return Err(HeaderError(format!(
                "header '{n}' belongs to HTTP/1.1 connections and {version} forbids it ({rfc}): remove it"
            )));
        }
    }
    Ok(())
}

/// The field section of `r` as HTTP/2 and HTTP/3 send it, in order: the pseudo-header
/// fields (`:authority` from the `Host` field), then every field but `Host` with its name
/// in lower case (our `user-agent` and `accept` first, then the user's), and
/// `content-length` for a body or a method that carries one.
pub(crate) fn section(r: &Request) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = vec![
        (":method".into(), r.method.clone()),
        (":scheme".into(), r.scheme.into()),
        (":authority".into(), r.authority().to_string()),
        (":path".into(), r.path.clone()),
    ];
    for (n, v) in r.fields().filter(|(n, _)| !n.eq_ignore_ascii_case("host")) {
        fields.push((n.to_ascii_lowercase(), v.to_string()));
    }
    if r.length {
        fields.push(("content-length".into(), r.body.len().to_string()));
    }
    fields
}

/// A request's section as text for `-v 2`, as curl shows one: `GET /path HTTP/2` (the
/// `version` given), then the other fields as `name: value` lines (pseudo-headers first)
/// and a blank line.
pub(crate) fn request_text(section: &[(String, String)], version: &str) -> Vec<u8> {
    let value = |name: &str| {
        section
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    };
    let mut text = format!("{} {} {version}\r\n", value(":method"), value(":path")).into_bytes();
    for (n, v) in section
        .iter()
        .filter(|(n, _)| n != ":method" && n != ":path")
    {
        text.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    text.extend_from_slice(b"\r\n");
    text
}

/// A decoded header list, its buffers reused from block to block. Fields are kept while
/// the list's size (name + value + 32 bytes per field: RFC 9113 §6.5.2, RFC 9114
/// §4.2.2) is within the limit; past it the rest are counted, not kept, and
/// [`Fields::over`] says so.
#[derive(Debug)]
pub struct Fields {
    bytes: Vec<u8>,
    /// Per field: where its name starts, where its value starts, where it ends.
    spans: Vec<(usize, usize, usize)>,
    size: usize,
    limit: usize,
}

impl Fields {
    /// An empty list keeping at most `limit` bytes of fields (as RFC 9113 counts them).
    pub fn new(limit: usize) -> Fields {
        Fields {
            bytes: Vec::new(),
            spans: Vec::new(),
            size: 0,
            limit,
        }
    }

    /// Empties the list, keeping its buffers unless a large list made them large.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
        self.size = 0;
        if self.bytes.capacity() > 16 * 1024 {
            self.bytes.shrink_to(4096);
        }
    }

    /// The list's size as RFC 9113 §6.5.2 counts it, kept fields or not.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The bytes its buffer holds room for (tests bound the memory a hostile list takes).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// The list was over the limit: only the fields within it were kept.
    pub fn over(&self) -> bool {
        self.size > self.limit
    }

    /// The fields kept, in order, as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.spans
            .iter()
            .map(|&(n, v, e)| (&self.bytes[n..v], &self.bytes[v..e]))
    }

    /// Adds a decoded field (counted always, kept within the limit).
    pub(crate) fn push(&mut self, name: &[u8], value: &[u8]) {
        self.size = self.size.saturating_add(name.len() + value.len() + 32);
        if self.size > self.limit {
            return;
        }
        let n = self.bytes.len();
        self.bytes.extend_from_slice(name);
        let v = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.spans.push((n, v, self.bytes.len()));
    }
}

/// A journey's checks and captures read a decoded head's fields, pseudo-headers left out.
impl crate::journey::Fields for Fields {
    fn each(&self, f: &mut dyn FnMut(&[u8], &[u8])) {
        for (name, value) in self.iter().filter(|(n, _)| n.first() != Some(&b':')) {
            f(name, value);
        }
    }
}

/// An answer's head as text for `-v 2`: `HTTP/2 200` (or `HTTP/3`, as `version` says),
/// then each field but `:status` as `name: value`, and a blank line (curl's way).
pub(crate) fn head_text(version: &str, status: u16, fields: &Fields) -> Vec<u8> {
    let mut out = format!("{version} {status}\r\n").into_bytes();
    for (name, value) in fields.iter().filter(|(n, _)| n != b":status") {
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A `:status` value: three digits, 100 to 999.
pub(crate) fn parse_status(v: &[u8]) -> Option<u16> {
    match v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}
