//! Integers with an N-bit prefix (RFC 7541 §5.1) and the string literals built on them
//! (§5.2), as HPACK and QPACK both write them: QPACK's field lines use prefixes of 3 to 8
//! bits, HPACK's of 4 to 7, and the Huffman flag is always the bit above a string's
//! length prefix.

use super::{huffman, CodecError};

/// The largest integer accepted (2^28): four continuation bytes. No length, index or
/// table size in a block we accept comes near it.
const MAX_INT_BITS: u32 = 28;

/// Reads an integer with a `prefix`-bit prefix (1 to 8) starting at `*p`, and moves `*p`
/// past it.
pub fn decode_int(block: &[u8], p: &mut usize, prefix: u32) -> Result<usize, CodecError> {
    let mask = ((1u16 << prefix) - 1) as u8;
    let first = block.get(*p).ok_or(CodecError::Truncated)? & mask;
    *p += 1;
    if first < mask {
        return Ok(usize::from(first));
    }
    let mut value = usize::from(mask);
    let mut shift = 0;
    loop {
        let &b = block.get(*p).ok_or(CodecError::Truncated)?;
        *p += 1;
        if shift >= MAX_INT_BITS {
            return Err(CodecError::Integer);
        }
        value += usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
}

/// Writes `value` with a `prefix`-bit prefix (1 to 8), the bits above the prefix taken
/// from `flags` (the representation's pattern).
pub fn encode_int(out: &mut Vec<u8>, value: usize, prefix: u32, flags: u8) {
    let max = (1usize << prefix) - 1;
    let flags = flags & !(max as u8);
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 0x80 {
        out.push(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// Reads a string literal at `*p` whose length has a `prefix`-bit prefix (1 to 7) and
/// whose Huffman flag is the bit above it: the bytes in place, or Huffman-decoded into
/// `scratch`.
pub fn decode_string<'a>(
    block: &'a [u8],
    p: &mut usize,
    prefix: u32,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8], CodecError> {
    let huffman = block.get(*p).ok_or(CodecError::Truncated)? & (1 << prefix) != 0;
    let len = decode_int(block, p, prefix)?;
    let bytes = block
        .get(*p..p.saturating_add(len))
        .ok_or(CodecError::Truncated)?;
    *p += len;
    if !huffman {
        return Ok(bytes);
    }
    scratch.clear();
    huffman::decode(bytes, scratch)?;
    Ok(scratch)
}

/// Writes a string literal, not Huffman-coded: its length with a `prefix`-bit prefix (1
/// to 7; the bits above it from `flags`, the Huffman flag clear), then its bytes.
pub fn encode_string(out: &mut Vec<u8>, s: &[u8], prefix: u32, flags: u8) {
    encode_int(out, s.len(), prefix, flags & !(1 << prefix));
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7541 C.1.1-C.1.3: 10 with a 5-bit prefix, 1337 with a 5-bit prefix, 42 on an
    /// octet boundary; and a value at each prefix's edge.
    #[test]
    fn integers_of_rfc_7541_appendix_c_1() {
        let cases: [(usize, u32, &[u8]); 6] = [
            (10, 5, &[0x0a]),
            (1337, 5, &[0x1f, 0x9a, 0x0a]),
            (42, 8, &[0x2a]),
            (255, 8, &[0xff, 0x00]),
            (127, 7, &[0x7f, 0x00]),
            (126, 7, &[0x7e]),
        ];
        for (value, prefix, bytes) in cases {
            let mut out = Vec::new();
            encode_int(&mut out, value, prefix, 0);
            assert_eq!(out, bytes, "{value} with a {prefix}-bit prefix");
            let mut p = 0;
            assert_eq!(decode_int(bytes, &mut p, prefix), Ok(value));
            assert_eq!(p, bytes.len());
        }
    }

    /// The flags above the prefix are kept, the prefix's own bits never taken from them.
    #[test]
    fn flags_fill_the_bits_above_the_prefix_only() {
        let mut out = Vec::new();
        encode_int(&mut out, 3, 6, 0xff);
        assert_eq!(out, [0xc3]);
    }

    #[test]
    fn a_truncated_or_huge_integer_is_an_error() {
        assert_eq!(decode_int(&[], &mut 0, 7), Err(CodecError::Truncated));
        assert_eq!(
            decode_int(&[0x7f, 0x80], &mut 0, 7),
            Err(CodecError::Truncated)
        );
        let huge = [0x7f, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(decode_int(&huge, &mut 0, 7), Err(CodecError::Integer));
    }

    /// RFC 7541 C.4.1's Huffman-coded "www.example.com", and the same string plain.
    #[test]
    fn strings_plain_and_huffman_coded() {
        let coded = [
            0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        let mut scratch = Vec::new();
        let mut p = 0;
        assert_eq!(
            decode_string(&coded, &mut p, 7, &mut scratch),
            Ok(&b"www.example.com"[..])
        );
        let mut plain = Vec::new();
        encode_string(&mut plain, b"www.example.com", 7, 0);
        assert_eq!(plain[0], 15);
        let mut p = 0;
        assert_eq!(
            decode_string(&plain, &mut p, 7, &mut scratch),
            Ok(&b"www.example.com"[..])
        );
        assert_eq!(
            decode_string(&plain[..5], &mut 0, 7, &mut scratch),
            Err(CodecError::Truncated)
        );
    }
}
