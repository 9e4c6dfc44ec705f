//! CPU per header block of the engine's HPACK decoder against `httlib-hpack`'s, on the
//! block nginx sends with every answer (`:status 200` indexed; `server`, `date`,
//! `content-type`, `content-length` as literals with indexed names and Huffman-coded
//! values). Run: `cargo run --release -p shootout-engine --example hpack_decode`.

use shootout_engine::h2::hpack::{Decoder, Fields};
use std::time::Instant;

fn main() {
    let mut enc = httlib_hpack::Encoder::default();
    let mut block = Vec::new();
    for (name, value) in [
        (":status", "200"),
        ("server", "nginx/1.22.1"),
        ("date", "Thu, 26 Nov 2026 12:50:01 GMT"),
        ("content-type", "text/plain"),
        ("content-length", "12"),
    ] {
        let field = (
            name.as_bytes().to_vec(),
            value.as_bytes().to_vec(),
            0x2 | 0x10,
        );
        enc.encode(field, &mut block).expect("a field");
    }
    let n = 2_000_000;
    for round in 1..=3 {
        // httlib-hpack decodes from a buffer it consumes: both decoders get a copy.
        let mut theirs = httlib_hpack::Decoder::with_dynamic_size(4096);
        let mut list = Vec::with_capacity(16);
        let t = Instant::now();
        for _ in 0..n {
            list.clear();
            let mut b = block.clone();
            theirs.decode(&mut b, &mut list).expect("a block");
            std::hint::black_box(&list);
        }
        let theirs_ns = t.elapsed().as_nanos() as f64 / n as f64;
        let mut ours = Decoder::default();
        let mut fields = Fields::new(64 * 1024);
        let t = Instant::now();
        for _ in 0..n {
            let b = block.clone();
            ours.decode(&b, &mut fields).expect("a block");
            std::hint::black_box(&fields);
        }
        let ours_ns = t.elapsed().as_nanos() as f64 / n as f64;
        println!(
            "round {round}: a {}-byte block: httlib-hpack {theirs_ns:.0} ns, shootout {ours_ns:.0} ns",
            block.len()
        );
    }
}
