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
//! Integers, string literals and the Huffman code are [`crate::codec`]'s, shared with
//! QPACK.

use crate::codec::prefix::{decode_int, decode_string};
use crate::codec::CodecError;
use std::collections::VecDeque;

/// The dynamic table size a server may use: the default of SETTINGS_HEADER_TABLE_SIZE
/// (RFC 9113 §6.5.2), which we never change.
pub const TABLE_SIZE: usize = 4096;

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

impl From<CodecError> for HpackError {
    fn from(e: CodecError) -> HpackError {
        match e {
            CodecError::Truncated => HpackError::Truncated,
            CodecError::Integer => HpackError::Integer,
            CodecError::Huffman => HpackError::Huffman,
        }
    }
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
                let index = decode_int(block, &mut p, 7)?;
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
                let size = decode_int(block, &mut p, 5)?;
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
        let at = decode_int(block, p, prefix)?;
        let name = if at == 0 {
            Some(decode_string(block, p, 7, &mut self.name)?)
        } else {
            None
        };
        let value = decode_string(block, p, 7, &mut self.value)?;
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
