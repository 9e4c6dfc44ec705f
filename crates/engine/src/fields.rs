//! What HTTP/2 and HTTP/3 share once a field section is decoded (HPACK or QPACK): the
//! decoded list ([`Fields`]), the `:status` value, and the head as `-v 2` prints it.

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
