//! Target `store_samples`: a step's sample reservoir as a store's file holds it (a BLOB:
//! a format byte, then the sample count and the columns deflated), read by the store's two
//! readers: the check every report makes of every step (`check_samples`, which also
//! counts the good answers by tenth of a second) and the decoder a chart uses
//! (`decode_samples`). The first input byte chooses the BLOB: even, the rest of the input
//! deflated into a BLOB of the stored format (so mutations reach the columns); odd, the
//! rest of the input as the BLOB itself (so they reach the format byte and the deflate
//! stream).
//!
//! Invariants: no panic; the two readers accept the same BLOBs and refuse the others with
//! the same words; what the check counts is what the decoded samples count
//! (`SampleTenths::of`); the heap grows by at most a bound set by the inflated length
//! (the count is believed only as far as the bytes behind it go).

use crate::alloc;
use shootout_model::stored::SampleTenths;
use shootout_store::fuzzing::{blob_of, check_samples, decode_samples};

/// The decoder keeps the inflated bytes and the samples built from them (27 bytes become
/// a 32-byte sample), the check a buffer and 4 bytes a sample: per inflated byte, a
/// few bytes; plus the buffers of the inflater.
const GROWTH_PER_BYTE: usize = 8;
const GROWTH_BASE: usize = 1 << 20;

/// The target (see the module).
pub fn check(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let blob = if mode % 2 == 0 {
        blob_of(rest)
    } else {
        rest.to_vec()
    };
    let (decoded, grew_decoding) = alloc::peak_growth(|| decode_samples(&blob));
    let (checked, grew_checking) = alloc::peak_growth(|| check_samples(&blob));
    match (&decoded, &checked) {
        (Ok(samples), Ok(counted)) => {
            assert_eq!(*counted, SampleTenths::of(samples), "the check's counts");
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "the two readers' words"),
        _ => panic!(
            "decoded {:?}, checked {:?}",
            decoded.map(|s| s.len()),
            checked
        ),
    }
    let inflated = decoded.as_ref().map_or(0, |s| 4 + s.len() * 27);
    let bound = GROWTH_BASE + GROWTH_PER_BYTE * inflated.max(blob.len() * 1032);
    assert!(
        grew_decoding <= bound && grew_checking <= bound,
        "grew {grew_decoding} decoding, {grew_checking} checking, for {} bytes (bound {bound})",
        blob.len()
    );
}
