//! Targets `hpack` and `hpack_differential`: the engine's HPACK decoder
//! (`shootout_engine::h2::hpack`) on header blocks a server could send.
//!
//! The input is a sequence of blocks (each a little-endian `u16` length, then its bytes),
//! decoded in order by one decoder, as a connection's blocks are.
//!
//! `hpack` invariants: no panic; a list's size (RFC 9113 §6.5.2) is at least what it
//! kept; nothing is kept past the limit; the heap grows by at most twice the limit plus
//! five times the block (the table of 4 KiB, Huffman scratch of at most 8/5 of a block,
//! the fields kept), whatever the block says.
//!
//! `hpack_differential`: the same blocks through `loona-hpack`'s decoder, with the same
//! table limit. Where both decode a block, the lists must be equal; where one refuses a
//! block the other must too, except for the two rules ours holds and loona does not or
//! the other way round: a table size update after a field (RFC 7541 §4.2: ours refuses),
//! and a block that ends in a size update with no field after it (loona refuses; RFC 7541
//! allows it). A block loona panics on is skipped. After a refusal both stop.

use shootout_engine::h2::hpack::{Decoder, Fields, HpackError, TABLE_SIZE};

/// The header list limit the targets decode with (the engine's, 64 KiB).
pub const LIMIT: usize = 64 * 1024;

/// The blocks of an input.
pub fn blocks(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while data.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
        out.push(&data[2..2 + len]);
        data = &data[2 + len..];
    }
    out
}

/// Target `hpack`.
pub fn check(data: &[u8]) {
    let mut d = Decoder::default();
    let mut fields = Fields::new(LIMIT);
    for block in blocks(data) {
        let (r, grew) = crate::alloc::peak_growth(|| d.decode(block, &mut fields));
        let bound = 2 * LIMIT + 5 * block.len() + 16 * 1024;
        assert!(
            grew <= bound,
            "heap grew {grew} > {bound} for a {} byte block",
            block.len()
        );
        let kept: usize = fields.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
        assert!(kept <= LIMIT, "kept {kept} past the limit");
        assert!(fields.size() >= kept);
        assert_eq!(fields.over(), fields.size() > LIMIT);
        if r.is_err() {
            return;
        }
    }
}

/// Target `hpack_differential`.
pub fn differential(data: &[u8]) {
    let mut ours = Decoder::default();
    let mut fields = Fields::new(usize::MAX);
    let mut loona = loona_hpack::Decoder::new();
    loona.set_max_allowed_table_size(TABLE_SIZE);
    for block in blocks(data) {
        let mine = ours.decode(block, &mut fields);
        let theirs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loona.decode(block)));
        let Ok(theirs) = theirs else {
            return;
        };
        match (mine, theirs) {
            (Ok(()), Ok(list)) => {
                let got: Vec<(&[u8], &[u8])> = fields.iter().collect();
                let want: Vec<(&[u8], &[u8])> =
                    list.iter().map(|(n, v)| (&n[..], &v[..])).collect();
                assert_eq!(got, want, "the lists differ");
            }
            (Err(_), Err(_)) => return,
            (Err(HpackError::LateSizeUpdate), Ok(_)) => return,
            (Ok(()), Err(loona_hpack::decoder::DecoderError::SizeUpdateAtEnd)) => return,
            (mine, theirs) => panic!("verdicts differ: ours {mine:?}, loona-hpack {theirs:?}"),
        }
    }
}
