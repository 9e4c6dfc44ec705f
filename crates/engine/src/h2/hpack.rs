//! HPACK decoding (RFC 7541) of the header blocks a server sends, written for a server that
//! may be broken or hostile: a malformed block is an [`HpackError`] (the connection's
//! COMPRESSION_ERROR), never a panic; the decoded list is held to a limit while it is
//! decoded, so a small block that names one large table entry many times costs no memory
//! ([`Fields`]); and once a connection's buffers have grown, decoding allocates nothing
//! per field (a field added to the dynamic table reuses the buffer of one evicted).
//!
//! Why our own decoder: `httlib-hpack` 0.1.3, used before, panics on blocks a server can
//! send (it indexes past its buffer on a block that ends inside an integer, or a literal
//! with an indexed name and no value); `loona-hpack` builds a 257-entry hash map for every
//! Huffman-coded string (about 50 µs of CPU per nginx answer); the `h2` crate's decoder is
//! public only behind its `unstable` feature and makes a `Bytes` and a checked
//! `HeaderName` per field. Decoding is the few representations of RFC 7541 §6 and a
//! Huffman table. It is tested against `httlib-hpack`'s encoder (every representation,
//! Huffman-coded or not, with evictions), and fuzzed alone and against `loona-hpack`'s
//! decoder (`fuzz/fuzz_targets/hpack.rs`, `hpack_differential.rs`).
//!
//! Huffman strings are decoded four bits at a time by a table of 256 states × 16 steps,
//! built at compile time from the code table of RFC 7541 Appendix B: a state is a node of
//! the code tree (the bits of an unfinished code), a step says where four more bits lead
//! and which symbol they finished.

use std::collections::VecDeque;

/// The dynamic table size a server may use: the default of SETTINGS_HEADER_TABLE_SIZE
/// (RFC 9113 §6.5.2), which we never change.
pub const TABLE_SIZE: usize = 4096;

/// The largest integer accepted (2^28): four continuation bytes. No length, index or
/// table size in a block we accept comes near it.
const MAX_INT_BITS: u32 = 28;

/// Why a header block cannot be decoded. Each is a COMPRESSION_ERROR for the connection
/// (RFC 9113 §4.3): the table is out of step with the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpackError {
    /// The block ends inside a field's representation.
    #[error("the header block ends inside a field")]
    Truncated,
    /// An integer over 2^28.
    #[error("an integer in the header block is over 2^28")]
    Integer,
    /// An index that names no entry of the static or the dynamic table (0 included).
    #[error("index {0} names no table entry")]
    Index(usize),
    /// A Huffman string holds the EOS symbol, or ends in padding that is not the start
    /// of EOS or is longer than 7 bits (RFC 7541 §5.2).
    #[error("a Huffman-coded string is malformed")]
    Huffman,
    /// A dynamic table size update after a header field (RFC 7541 §4.2).
    #[error("a dynamic table size update follows a header field")]
    LateSizeUpdate,
    /// A dynamic table size update over what we allow (RFC 7541 §6.3).
    #[error("a dynamic table size update to {0} bytes, over the {TABLE_SIZE} allowed")]
    TableSize(usize),
}

pub use crate::fields::Fields;

/// One entry of the dynamic table: name and value in one buffer.
#[derive(Debug)]
struct Entry {
    bytes: Vec<u8>,
    name: usize,
}

impl Entry {
    fn field(&self) -> (&[u8], &[u8]) {
        self.bytes.split_at(self.name)
    }

    /// Its size in the table (RFC 7541 §4.1).
    fn size(&self) -> usize {
        self.bytes.len() + 32
    }
}

/// The decoding side of one connection's HPACK context.
#[derive(Debug)]
pub struct Decoder {
    /// The dynamic table, newest first.
    table: VecDeque<Entry>,
    /// Its size (RFC 7541 §4.1).
    size: usize,
    /// Its current maximum, as the server's last size update set it.
    max: usize,
    /// The most a size update may set.
    allowed: usize,
    /// Buffers of evicted entries, for the next ones.
    spare: Vec<Vec<u8>>,
    /// A Huffman-decoded name, and value.
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(TABLE_SIZE)
    }
}

impl Decoder {
    /// A decoder whose table may grow to `allowed` bytes (the SETTINGS_HEADER_TABLE_SIZE
    /// announced).
    pub fn new(allowed: usize) -> Decoder {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max: allowed,
            allowed,
            spare: Vec::new(),
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Decodes one whole header block into `out` (emptied first). On an error the
    /// decoder is out of step with the server and must not be used again.
    pub fn decode(&mut self, block: &[u8], out: &mut Fields) -> Result<(), HpackError> {
        out.clear();
        let mut p = 0;
        let mut fields = false;
        while let Some(&b) = block.get(p) {
            if b & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = integer(block, &mut p, 7)?;
                let (name, value) = field(&self.table, index)?;
                out.push(name, value);
                fields = true;
            } else if b & 0x40 != 0 {
                // Literal with incremental indexing (§6.2.1).
                self.literal(block, &mut p, 6, true, out)?;
                fields = true;
            } else if b & 0x20 != 0 {
                // Dynamic table size update (§6.3): only before the first field (§4.2).
                if fields {
                    return Err(HpackError::LateSizeUpdate);
                }
                let size = integer(block, &mut p, 5)?;
                if size > self.allowed {
                    return Err(HpackError::TableSize(size));
                }
                self.max = size;
                self.evict(0);
            } else {
                // Literal without indexing (§6.2.2) or never indexed (§6.2.3).
                self.literal(block, &mut p, 4, false, out)?;
                fields = true;
            }
        }
        Ok(())
    }

    /// Entries in the dynamic table.
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.table.len()
    }

    /// A literal field whose first byte is at `*p`, its name index in a `prefix`-bit
    /// integer (0: a literal name follows).
    fn literal(
        &mut self,
        block: &[u8],
        p: &mut usize,
        prefix: u32,
        index: bool,
        out: &mut Fields,
    ) -> Result<(), HpackError> {
        let at = integer(block, p, prefix)?;
        let name = if at == 0 {
            Some(string(block, p, &mut self.name)?)
        } else {
            None
        };
        let value = string(block, p, &mut self.value)?;
        let name = match name {
            Some(n) => n,
            None => field(&self.table, at)?.0,
        };
        out.push(name, value);
        if !index {
            return Ok(());
        }
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(name);
        let name = bytes.len();
        bytes.extend_from_slice(value);
        self.insert(Entry { bytes, name });
        Ok(())
    }

    /// Adds an entry, evicting the oldest to make room (§4.4): an entry larger than the
    /// table empties it and is not added.
    fn insert(&mut self, e: Entry) {
        let size = e.size();
        if size > self.max {
            self.evict(self.max);
            self.spare(e.bytes);
            return;
        }
        self.evict(size);
        self.size += size;
        self.table.push_front(e);
    }

    /// Evicts the oldest entries until `room` bytes more fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max {
            let Some(e) = self.table.pop_back() else {
                self.size = 0;
                return;
            };
            self.size -= e.size();
            self.spare(e.bytes);
        }
    }

    fn spare(&mut self, bytes: Vec<u8>) {
        if self.spare.len() < 8 && bytes.capacity() <= 1024 {
            self.spare.push(bytes);
        }
    }
}

/// The field at `index` (1-based: the static table, then the dynamic one).
fn field(table: &VecDeque<Entry>, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
    match index {
        0 => Err(HpackError::Index(0)),
        1..=STATIC_LEN => Ok(STATIC[index - 1]),
        _ => table
            .get(index - STATIC_LEN - 1)
            .map(Entry::field)
            .ok_or(HpackError::Index(index)),
    }
}

/// An integer with a `prefix`-bit prefix starting at `*p` (§5.1).
fn integer(block: &[u8], p: &mut usize, prefix: u32) -> Result<usize, HpackError> {
    let mask = (1u8 << prefix) - 1;
    let first = block.get(*p).ok_or(HpackError::Truncated)? & mask;
    *p += 1;
    if first < mask {
        return Ok(usize::from(first));
    }
    let mut value = usize::from(mask);
    let mut shift = 0;
    loop {
        let &b = block.get(*p).ok_or(HpackError::Truncated)?;
        *p += 1;
        if shift >= MAX_INT_BITS {
            return Err(HpackError::Integer);
        }
        value += usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
}

/// A string literal starting at `*p` (§5.2): in place, or Huffman-decoded into `scratch`.
fn string<'a>(
    block: &'a [u8],
    p: &mut usize,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8], HpackError> {
    let huffman = block.get(*p).ok_or(HpackError::Truncated)? & 0x80 != 0;
    let len = integer(block, p, 7)?;
    let bytes = block
        .get(*p..p.saturating_add(len))
        .ok_or(HpackError::Truncated)?;
    *p += len;
    if !huffman {
        return Ok(bytes);
    }
    scratch.clear();
    huffman_decode(bytes, scratch)?;
    Ok(scratch)
}

/// Decodes a Huffman-coded string (§5.2, Appendix B), appending to `out`.
pub fn huffman_decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    let mut state = 0;
    for &b in src {
        for nibble in [b >> 4, b & 0xf] {
            let step = HUFFMAN.steps[state][usize::from(nibble)];
            if step & FAIL != 0 {
                return Err(HpackError::Huffman);
            }
            if step & EMIT != 0 {
                out.push((step >> 8) as u8);
            }
            state = (step & 0xff) as usize;
        }
    }
    if HUFFMAN.accept[state] {
        Ok(())
    } else {
        Err(HpackError::Huffman)
    }
}

/// A step of the Huffman machine: bits 0–7 the next state, 8–15 the symbol finished,
/// [`EMIT`] when one was, [`FAIL`] when the bits reached EOS.
const EMIT: u32 = 1 << 16;
const FAIL: u32 = 1 << 17;

struct Machine {
    steps: [[u32; 16]; 256],
    /// States a string may end in: the bits of an unfinished code are all ones (the
    /// start of EOS) and fewer than 8.
    accept: [bool; 256],
}

static HUFFMAN: Machine = machine();

/// Builds the machine from [`CODES`]: the code tree first (256 inner nodes; a child is an
/// inner node or `LEAF | symbol`), then four bits from every node.
const fn machine() -> Machine {
    const LEAF: u16 = 0x8000;
    let mut child = [[0u16; 2]; 256];
    let mut depth = [0u8; 256];
    let mut ones = [false; 256];
    ones[0] = true;
    let mut nodes = 1;
    let mut sym = 0;
    while sym < CODES.len() {
        let (code, len) = CODES[sym];
        let mut node = 0;
        let mut i = len;
        while i > 0 {
            i -= 1;
            let bit = ((code >> i) & 1) as usize;
            if i == 0 {
                child[node][bit] = LEAF | sym as u16;
            } else {
                if child[node][bit] == 0 {
                    child[node][bit] = nodes as u16;
                    depth[nodes] = depth[node] + 1;
                    ones[nodes] = ones[node] && bit == 1;
                    nodes += 1;
                }
                node = child[node][bit] as usize;
            }
        }
        sym += 1;
    }
    let mut steps = [[0u32; 16]; 256];
    let mut accept = [false; 256];
    let mut state = 0;
    while state < 256 {
        accept[state] = ones[state] && depth[state] < 8;
        let mut nibble = 0;
        while nibble < 16 {
            let mut node = state;
            let mut step = 0u32;
            let mut k = 4;
            while k > 0 {
                k -= 1;
                let c = child[node][(nibble >> k) & 1];
                if c & LEAF != 0 {
                    let s = (c & !LEAF) as u32;
                    if s == 256 {
                        step |= FAIL;
                    } else {
                        step |= EMIT | (s << 8);
                    }
                    node = 0;
                } else {
                    node = c as usize;
                }
            }
            steps[state][nibble] = step | node as u32;
            nibble += 1;
        }
        state += 1;
    }
    Machine { steps, accept }
}

const STATIC_LEN: usize = 61;

/// The static table (RFC 7541 Appendix A).
static STATIC: [(&[u8], &[u8]); STATIC_LEN] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// The Huffman code of each symbol, 0 to 255 and EOS (256), as (code, bits) (RFC 7541
/// Appendix B).
const CODES: [(u32, u8); 257] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    (0x3fffffff, 30),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut out = Fields::new(1 << 20);
        d.decode(block, &mut out)?;
        Ok(out
            .iter()
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_huffman_coded_request_of_rfc_7541_c_4_1_decodes() {
        let block = [
            0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab,
            0x90, 0xf4, 0xff,
        ];
        let mut d = Decoder::default();
        assert_eq!(
            decode(&mut d, &block),
            Ok(pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                (":authority", "www.example.com"),
            ]))
        );
        assert_eq!(
            d.entries(),
            1,
            "the literal with indexing went into the table"
        );
        // The next block names it by index 62.
        assert_eq!(
            decode(&mut d, &[0xbe]),
            Ok(pairs(&[(":authority", "www.example.com")]))
        );
    }

    /// Blocks from another implementation's encoder, every representation with and
    /// without Huffman coding, on a small table so entries are evicted: each decodes to
    /// the list encoded.
    #[test]
    fn blocks_of_another_encoder_decode_to_the_list_it_encoded() {
        let names = [
            "server",
            "x-a",
            "content-type",
            "date",
            "set-cookie",
            "x-long-name",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for table in [0u32, 64, 256, 4096] {
            let mut enc = httlib_hpack::Encoder::with_dynamic_size(table);
            let mut d = Decoder::new(table as usize);
            for _ in 0..300 {
                let mut block = Vec::new();
                let mut want = Vec::new();
                for _ in 0..(next() % 6 + 1) {
                    let name = names[(next() % names.len() as u64) as usize];
                    let len = (next() % 40) as usize;
                    let value: String = (0..len)
                        .map(|_| char::from(b' ' + (next() % 95) as u8))
                        .collect();
                    let flags = [0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0xb, 0x14, 0x17]
                        [(next() % 12) as usize];
                    enc.encode(
                        (name.as_bytes().to_vec(), value.as_bytes().to_vec(), flags),
                        &mut block,
                    )
                    .unwrap();
                    want.push((name.to_string(), value));
                }
                assert_eq!(decode(&mut d, &block), Ok(want), "table {table}");
            }
        }
    }

    #[test]
    fn every_byte_value_survives_huffman_coding() {
        let mut enc = httlib_hpack::Encoder::default();
        let value: Vec<u8> = (0..=255).collect();
        let mut block = Vec::new();
        enc.encode((b"x".to_vec(), value.clone(), 0x3), &mut block)
            .unwrap();
        let mut out = Fields::new(4096);
        Decoder::default().decode(&block, &mut out).unwrap();
        assert_eq!(out.iter().next(), Some((&b"x"[..], &value[..])));
    }

    /// Malformed blocks a server can send: each an error, none a panic.
    #[test]
    fn malformed_blocks_are_errors() {
        use HpackError::*;
        let cases: &[(&str, &[u8], HpackError)] = &[
            ("ends inside an integer", &[0xff], Truncated),
            (
                "ends inside an integer's continuation",
                &[0xff, 0x80],
                Truncated,
            ),
            ("an indexed name and no value", &[0x41], Truncated),
            ("a name and no value", &[0x40, 0x01, b'a'], Truncated),
            (
                "a string longer than the block",
                &[0x00, 0x01, b'a', 0x05, b'a'],
                Truncated,
            ),
            ("index 0", &[0x80], Index(0)),
            ("an index past both tables", &[0xbe], Index(62)),
            (
                "a literal naming a missing index",
                &[0x7f, 0x00, 0x00],
                Index(63),
            ),
            (
                "an integer over 2^28",
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0x0f],
                Integer,
            ),
            ("a size update after a field", &[0x82, 0x20], LateSizeUpdate),
            (
                "a size update over 4096",
                &[0x3f, 0xe2, 0x1f],
                TableSize(4097),
            ),
            (
                "EOS in a Huffman string",
                &[0x00, 0x01, b'a', 0x84, 0xff, 0xff, 0xff, 0xff],
                Huffman,
            ),
            (
                "eight bits of padding",
                &[0x00, 0x01, b'a', 0x81, 0xff],
                Huffman,
            ),
            (
                "padding that is not ones",
                &[0x00, 0x01, b'a', 0x81, 0x18],
                Huffman,
            ),
        ];
        let mut wrong = Vec::new();
        for (title, block, want) in cases {
            let got = decode(&mut Decoder::default(), block);
            if got != Err(*want) {
                wrong.push(format!("{title}: {got:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The same string with ones as padding is "a".
        assert_eq!(
            decode(&mut Decoder::default(), &[0x00, 0x01, b'a', 0x81, 0x1f]),
            Ok(pairs(&[("a", "a")]))
        );
    }

    #[test]
    fn size_updates_before_the_first_field_shrink_the_table() {
        let mut d = Decoder::default();
        // A literal with indexing, name "a", value "b": 34 bytes of table.
        decode(&mut d, &[0x40, 0x01, b'a', 0x01, b'b']).unwrap();
        assert_eq!(d.entries(), 1);
        // Size 0 then 4096 (two updates are allowed at the start), then the field.
        assert_eq!(
            decode(&mut d, &[0x20, 0x3f, 0xe1, 0x1f, 0x82]),
            Ok(pairs(&[(":method", "GET")]))
        );
        assert_eq!(d.entries(), 0, "size 0 evicted the entry");
    }

    /// A small block naming one large table entry over and over decodes to a list far
    /// over the limit: the fields past the limit are counted, not kept.
    #[test]
    fn a_block_that_names_a_large_entry_many_times_keeps_no_more_than_the_limit() {
        let mut d = Decoder::default();
        let value = vec![b'v'; 4000];
        let mut block = vec![0x40, 0x01, b'x', 0x7f];
        let mut rest = value.len() - 127;
        while rest >= 0x80 {
            block.push((rest & 0x7f) as u8 | 0x80);
            rest >>= 7;
        }
        block.push(rest as u8);
        block.extend_from_slice(&value);
        let refs = 60_000;
        block.extend(std::iter::repeat_n(0xbe, refs));
        let limit = 64 * 1024;
        let mut out = Fields::new(limit);
        d.decode(&block, &mut out).unwrap();
        assert!(out.over());
        assert_eq!(out.size(), (refs + 1) * (4001 + 32));
        assert!(out.iter().count() <= limit / 4033);
        assert!(out.capacity() <= 2 * limit, "kept {} bytes", out.capacity());
    }

    #[test]
    fn an_entry_larger_than_the_table_empties_it() {
        let mut d = Decoder::new(64);
        decode(&mut d, &[0x40, 0x01, b'a', 0x01, b'b']).unwrap();
        assert_eq!(d.entries(), 1);
        let mut big = vec![0x40, 0x01, b'c', 0x20];
        big.extend_from_slice(&[b'd'; 32]);
        assert_eq!(decode(&mut d, &big).map(|l| l.len()), Ok(1));
        assert_eq!(d.entries(), 0);
        assert_eq!(decode(&mut d, &[0xbe]), Err(HpackError::Index(62)));
    }
}
