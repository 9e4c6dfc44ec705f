//! QPACK (RFC 9204) with the static table only. Our SETTINGS give the server a dynamic
//! table of capacity 0 and no blocked streams, so every field section a server may send
//! us is decodable on its own: a section that needs the dynamic table (a Required Insert
//! Count other than 0, or any dynamic or post-base reference) is a
//! [`QpackError::Dynamic`], as RFC 9204 §2.2.3 says of a reference past the table's
//! capacity. Decoding is the five field-line representations of §4.5; integers, strings
//! and their Huffman code are HPACK's ([`crate::codec`]). A malformed section is a
//! typed error (the connection's QPACK_DECOMPRESSION_FAILED), never a panic, and the
//! decoded list is held to a limit ([`Fields`]).
//!
//! Encoding is for our one request, done once per run ([`encode`]): a field in the static
//! table is one index byte, a name in it an index and a literal value, anything else
//! literal; never Huffman (the request is encoded once, its size matters little).

use crate::codec::prefix::{decode_int, decode_string, encode_int, encode_string};
use crate::codec::CodecError;

/// Why a field section cannot be decoded (each is QPACK_DECOMPRESSION_FAILED).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QpackError {
    /// The section ends inside its prefix or a field line.
    #[error("the field section ends inside a field line")]
    Truncated,
    /// An integer over 2^28.
    #[error("an integer in the field section is over 2^28")]
    Integer,
    /// A static index past the table's 99 entries.
    #[error("static index {0} names no entry")]
    Index(usize),
    /// A reference to the dynamic table, which we gave a capacity of 0.
    #[error("the field section refers to the dynamic table, whose capacity we set to 0")]
    Dynamic,
    /// A malformed Huffman string.
    #[error("a Huffman-coded string is malformed")]
    Huffman,
}

impl From<CodecError> for QpackError {
    fn from(e: CodecError) -> QpackError {
        match e {
            CodecError::Truncated => QpackError::Truncated,
            CodecError::Integer => QpackError::Integer,
            CodecError::Huffman => QpackError::Huffman,
        }
    }
}

pub use crate::fields::Fields;

/// Decodes one encoded field section into `out` (cleared first); `scratch` holds
/// Huffman-decoded strings (its buffers reused).
pub fn decode(block: &[u8], out: &mut Fields, scratch: &mut Scratch) -> Result<(), QpackError> {
    out.clear();
    let mut p = 0;
    // The prefix (§4.5.1): Required Insert Count, then the sign bit and Delta Base.
    if decode_int(block, &mut p, 8)? != 0 {
        return Err(QpackError::Dynamic);
    }
    decode_int(block, &mut p, 7)?;
    while p < block.len() {
        let b = block[p];
        if b & 0x80 != 0 {
            // Indexed field line (§4.5.2): `1 T index(6)`.
            if b & 0x40 == 0 {
                return Err(QpackError::Dynamic);
            }
            let (n, v) = entry(decode_int(block, &mut p, 6)?)?;
            out.push(n, v);
        } else if b & 0x40 != 0 {
            // Literal with name reference (§4.5.4): `0 1 N T index(4)`, then the value.
            if b & 0x10 == 0 {
                return Err(QpackError::Dynamic);
            }
            let (n, _) = entry(decode_int(block, &mut p, 4)?)?;
            let v = decode_string(block, &mut p, 7, &mut scratch.value)?;
            out.push(n, v);
        } else if b & 0x20 != 0 {
            // Literal with literal name (§4.5.6): `0 0 1 N H len(3)`, then the value.
            let n = decode_string(block, &mut p, 3, &mut scratch.name)?;
            let v = decode_string(block, &mut p, 7, &mut scratch.value)?;
            out.push(n, v);
        } else {
            // Indexed with post-base index (`0001`) or literal with post-base name
            // reference (`0000`): both name the dynamic table.
            return Err(QpackError::Dynamic);
        }
    }
    Ok(())
}

/// Buffers for Huffman-decoded names and values, reused from field to field.
#[derive(Debug, Default)]
pub struct Scratch {
    name: Vec<u8>,
    value: Vec<u8>,
}

/// The static table's entry `i` (0-based, Appendix A).
fn entry(i: usize) -> Result<(&'static [u8], &'static [u8]), QpackError> {
    STATIC
        .get(i)
        .map(|&(n, v)| (n.as_bytes(), v.as_bytes()))
        .ok_or(QpackError::Index(i))
}

/// Encodes a field list as one field section that needs no dynamic table: the prefix
/// (Required Insert Count 0, Delta Base 0), then per field an index, a static name
/// reference with a literal value, or a literal name and value.
pub fn encode<'f>(fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>, out: &mut Vec<u8>) {
    out.extend_from_slice(&[0, 0]);
    for (n, v) in fields {
        if let Some(i) = STATIC
            .iter()
            .position(|&(sn, sv)| sn.as_bytes() == n && sv.as_bytes() == v)
        {
            encode_int(out, i, 6, 0xc0);
            continue;
        }
        match STATIC.iter().position(|&(sn, _)| sn.as_bytes() == n) {
            Some(i) => encode_int(out, i, 4, 0x50),
            None => encode_string(out, n, 3, 0x20),
        }
        encode_string(out, v, 7, 0x00);
    }
}

/// The static table (RFC 9204 Appendix A), 0-based.
const STATIC: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains",
    ),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains; preload",
    ),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    (
        "content-security-policy",
        "script-src 'none'; object-src 'none'; base-uri 'none'",
    ),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(block: &[u8]) -> Result<Vec<(String, String)>, QpackError> {
        let mut f = Fields::new(64 * 1024);
        decode(block, &mut f, &mut Scratch::default())?;
        Ok(f.iter()
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

    /// RFC 9204 Appendix B.1's first section (":path: /index.html" as a literal with a
    /// static name reference), with the prefix of an encoder that uses no table.
    #[test]
    fn the_rfcs_literal_with_a_static_name_reference() {
        let block = [
            0x00, 0x00, 0x51, 0x0b, 0x2f, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x2e, 0x68, 0x74, 0x6d,
            0x6c,
        ];
        assert_eq!(dec(&block), Ok(pairs(&[(":path", "/index.html")])));
    }

    /// Every representation without the dynamic table: indexed static (`:status: 200`),
    /// a static name with a literal value, a static name with a Huffman value (RFC 7541
    /// C.4.1's "www.example.com"), a literal name and value, a Huffman name.
    #[test]
    fn every_static_representation_decodes() {
        let mut b = vec![0x00, 0x00, 0xd9];
        // content-length (index 4) with value "12".
        b.extend_from_slice(&[0x54, 0x02, b'1', b'2']);
        // :authority (index 0), Huffman "www.example.com".
        b.extend_from_slice(&[
            0x50, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ]);
        // A literal name "x-a" and value "b".
        b.extend_from_slice(&[0x23, b'x', b'-', b'a', 0x01, b'b']);
        // A Huffman name "custom-key" (RFC 7541 C.4.3) and a plain value "v".
        b.extend_from_slice(&[
            0x2f, 0x01, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f, 0x01, b'v',
        ]);
        assert_eq!(
            dec(&b),
            Ok(pairs(&[
                (":status", "200"),
                ("content-length", "12"),
                (":authority", "www.example.com"),
                ("x-a", "b"),
                ("custom-key", "v"),
            ]))
        );
        // Cut at every byte: an error, never a panic, except where a field line ends.
        let ends = [2, 3, 7, 21, 27, b.len()];
        for cut in 0..b.len() {
            let r = dec(&b[..cut]);
            assert_eq!(r.is_ok(), ends.contains(&cut), "cut at {cut}: {r:?}");
        }
    }

    #[test]
    fn anything_that_needs_the_dynamic_table_is_refused() {
        for block in [
            &[0x01, 0x00][..],      // Required Insert Count 1
            &[0x00, 0x00, 0x80],    // indexed, dynamic
            &[0x00, 0x00, 0x10],    // indexed, post-base
            &[0x00, 0x00, 0x40, 0], // literal, dynamic name
            &[0x00, 0x00, 0x00, 0], // literal, post-base name
            &[0x00, 0x81, 0xd9],    // a negative Delta Base alone is fine
        ] {
            let r = dec(block);
            if block == [0x00, 0x81, 0xd9] {
                assert_eq!(r, Ok(pairs(&[(":status", "200")])));
            } else {
                assert_eq!(r, Err(QpackError::Dynamic), "{block:?}");
            }
        }
        assert_eq!(dec(&[0x00, 0x00, 0xff, 0x24]), Err(QpackError::Index(99)));
        assert_eq!(dec(&[0x00]), Err(QpackError::Truncated));
        assert_eq!(dec(&[]), Err(QpackError::Truncated));
        assert_eq!(
            dec(&[0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Err(QpackError::Integer)
        );
        // A Huffman string holding EOS.
        assert_eq!(
            dec(&[0x00, 0x00, 0x51, 0x84, 0xff, 0xff, 0xff, 0xff]),
            Err(QpackError::Huffman)
        );
    }

    #[test]
    fn a_list_over_the_limit_is_counted_not_kept() {
        let mut b = vec![0, 0];
        b.extend(std::iter::repeat_n(0xd9, 10));
        let mut f = Fields::new(200);
        decode(&b, &mut f, &mut Scratch::default()).unwrap();
        assert!(f.over());
        assert_eq!(f.iter().count(), 200 / (7 + 3 + 32));
    }

    #[test]
    fn our_encoding_decodes_to_the_same_list() {
        let list = [
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "127.0.0.1:8443"),
            (":path", "/a/long/path/past/the/prefix/of/fifteen"),
            ("user-agent", "shootout"),
            ("accept", "*/*"),
            ("x-custom-header-with-a-long-name", "1"),
        ];
        let mut b = Vec::new();
        encode(
            list.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
            &mut b,
        );
        assert_eq!(dec(&b), Ok(pairs(&list)));
        assert_eq!(
            &b[2..4],
            &[0xc0 | 17, 0xc0 | 23],
            "GET and https are one byte"
        );
    }

    #[test]
    fn the_table_has_its_99_entries_where_the_rfc_puts_them() {
        assert_eq!(entry(0), Ok((&b":authority"[..], &b""[..])));
        assert_eq!(entry(17), Ok((&b":method"[..], &b"GET"[..])));
        assert_eq!(entry(25), Ok((&b":status"[..], &b"200"[..])));
        assert_eq!(entry(63), Ok((&b":status"[..], &b"100"[..])));
        assert_eq!(entry(92), Ok((&b"server"[..], &b""[..])));
        assert_eq!(entry(98), Ok((&b"x-frame-options"[..], &b"sameorigin"[..])));
        assert_eq!(entry(99), Err(QpackError::Index(99)));
    }
}
