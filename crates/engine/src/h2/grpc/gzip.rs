//! gRPC's `gzip` message encoding (`--grpc-compress gzip`): a message compressed behind a
//! prefix whose flag is 1 ([`framed`]), and a reply's compressed message inflated within
//! the reply limit ([`inflate`]) by flate2 (its pure-Rust miniz_oxide back end).
//!
//! A parser of a server's bytes: inflating stops at the first byte past the limit, so a
//! small message that inflates to gigabytes (a "gzip bomb") costs at most the limit in
//! memory, and is refused.

use std::io::{Read, Write};

/// The value of `grpc-encoding` (and of `grpc-accept-encoding`) for gzip.
pub const GZIP: &str = "gzip";

/// Appends `msg` compressed with gzip behind gRPC's prefix (flag 1) to `out`.
pub fn framed(msg: &[u8], out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[1, 0, 0, 0, 0]);
    let mut e = flate2::write::GzEncoder::new(&mut *out, flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = e.write_all(msg);
    let _ = e.finish();
    let len = (out.len() - at - 5) as u32;
    out[at + 1..at + 5].copy_from_slice(&len.to_be_bytes());
}

/// Inflates the gzip data `src` into `out` (cleared first); false when it is not gzip
/// data, or inflates to more than `max` bytes. `out`'s capacity never grows past `max`
/// (nor past what it had).
pub fn inflate(src: &[u8], max: usize, out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut d = flate2::bufread::GzDecoder::new(src);
    let mut chunk = [0u8; 4096];
    loop {
        let n = match d.read(&mut chunk) {
            Ok(0) => return true,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        if out.len() + n > max {
            return false;
        }
        if out.capacity() < out.len() + n {
            // Doubling, as a Vec grows, but never past the limit.
            let want = (out.capacity() * 2).max(4096).max(out.len() + n).min(max);
            out.reserve_exact(want - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_goes_and_comes_back() {
        let mut out = vec![9];
        framed(b"hello bob", &mut out);
        assert_eq!(out[..2], [9, 1]);
        let len = u32::from_be_bytes([out[2], out[3], out[4], out[5]]) as usize;
        assert_eq!(out.len(), 6 + len);
        let mut back = Vec::new();
        assert!(inflate(&out[6..], 100, &mut back));
        assert_eq!(back, b"hello bob");
        // Within the limit exactly, and one byte over it.
        assert!(inflate(&out[6..], 9, &mut back));
        assert!(!inflate(&out[6..], 8, &mut back));
        // Not gzip.
        assert!(!inflate(b"hello bob", 100, &mut back));
    }

    #[test]
    fn a_bomb_costs_no_more_than_the_limit() {
        // 64 MiB of zeros compress to about 64 KiB.
        let zeros = vec![0u8; 64 << 20];
        let mut bomb = Vec::new();
        framed(&zeros, &mut bomb);
        drop(zeros);
        assert!(bomb.len() < 200 * 1024, "{}", bomb.len());
        let limit = 1 << 20;
        let mut out = Vec::new();
        assert!(!inflate(&bomb[5..], limit, &mut out));
        assert!(out.capacity() <= limit, "{}", out.capacity());
        assert!(out.len() <= limit);
    }
}
