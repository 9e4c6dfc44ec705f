//! Reading the HdrHistogram V2 serializations that files carry (the histograms of a result
//! file, the store's histogram BLOBs) without trusting the lengths they claim. The
//! `hdrhistogram` crate's deserializer allocates whatever payload length a header states
//! (4 GiB for a 52-byte field) and inflates a deflated payload to whatever it holds (a
//! 1 MB deflate bomb becomes 1 GiB). [`decode`] checks every length against the bytes
//! that are there and against [`MAX_HISTOGRAM_BYTES`], inflates through a bounded reader,
//! and holds the histogram's bounds to those shootout records, before the crate is handed
//! the bytes; counts that add up past `u64::MAX` are refused too.
//!
//! Seams: bytes in, a [`Histogram`] or an [`HdrError`] that says which length or count is
//! wrong and the limit it passed; no I/O.

use flate2::read::ZlibDecoder;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::io::Read;

/// The most bytes one histogram may take, deflated or not, and the most a deflated one
/// may inflate to. The widest histogram shootout records (1 µs to 1 hour at 3 significant
/// digits, [`latency_histogram`](crate::latency_histogram)) has 23,552 counters, and V2
/// writes each in at most 9 bytes: its largest serialization is 207 KiB plus a 40-byte
/// header (a test below builds it). 1 MiB leaves room for that and refuses a header that
/// claims more, or a deflate bomb, before anything of that size is allocated.
pub const MAX_HISTOGRAM_BYTES: usize = 1 << 20;

/// The highest trackable value accepted (µs): one hour, that of every histogram shootout
/// records. With [`MAX_DIGITS`] and a lowest value of at least 1 it bounds the counters
/// array the crate allocates to that of [`latency_histogram`](crate::latency_histogram)
/// (184 KiB); wider bounds are not shootout's and could ask for 50 MB per histogram.
pub const MAX_HIGHEST: u64 = 3_600_000_000;

/// The most significant digits accepted: 3, those of the latency histograms (the
/// per-second ones have 2).
pub const MAX_DIGITS: u32 = 3;

/// The cookie of an uncompressed V2 serialization.
const V2_COOKIE: u32 = 0x1c84_9313;
/// The cookie of a V2 serialization wrapped in zlib (`V2DeflateSerializer`).
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
/// Cookie, payload length, normalizing offset, digits, lowest, highest, ratio.
const V2_HEADER: usize = 40;
/// Cookie and deflated length.
const DEFLATE_HEADER: usize = 8;

/// A histogram that cannot be read; each message reads after the field's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HdrError {
    /// More bytes than a histogram may take.
    #[error("holds {0} bytes, more than the {mib} MiB a histogram may hold", mib = MAX_HISTOGRAM_BYTES >> 20)]
    TooLong(usize),
    /// A header that claims more bytes than a histogram may take.
    #[error("claims {0} bytes, more than the {mib} MiB a histogram may hold", mib = MAX_HISTOGRAM_BYTES >> 20)]
    Claims(u64),
    /// A header that claims more bytes than follow it.
    #[error("claims {claimed} bytes but holds {holds}")]
    Short {
        /// What the header claims.
        claimed: u64,
        /// What follows the header.
        holds: usize,
    },
    /// A deflated payload that inflates past the limit (a deflate bomb).
    #[error("inflates to more than the {mib} MiB a histogram may hold", mib = MAX_HISTOGRAM_BYTES >> 20)]
    Bomb,
    /// A deflated payload that does not inflate.
    #[error("does not inflate ({0})")]
    Inflate(String),
    /// Not a V2 serialization.
    #[error("is not an HdrHistogram V2 serialization (it starts with {0:#010x})")]
    Cookie(u32),
    /// Bounds wider than shootout's.
    #[error("covers {low} to {high} at {digits} significant digits, wider than any histogram shootout records (1 to {MAX_HIGHEST} µs at {MAX_DIGITS} digits)")]
    Bounds {
        /// The lowest discernible value.
        low: u64,
        /// The highest trackable value.
        high: u64,
        /// Significant digits.
        digits: u32,
    },
    /// The crate's deserializer refused it.
    #[error("does not decode ({0})")]
    Decode(String),
    /// Counts whose sum passes `u64::MAX`.
    #[error("has counts that add up past {max}", max = u64::MAX)]
    Overflow,
}

/// Reads a V2 serialization, deflated or not, checking every length first (see the
/// module). The counts of the histogram it returns add up without overflow.
pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>, HdrError> {
    if bytes.len() > MAX_HISTOGRAM_BYTES {
        return Err(HdrError::TooLong(bytes.len()));
    }
    let inflated;
    let v2 = match be_u32(bytes, 0) {
        Some(V2_COOKIE) => bytes,
        Some(V2_DEFLATE_COOKIE) => {
            let rest = bytes.get(DEFLATE_HEADER..).unwrap_or_default();
            let claimed = be_u32(bytes, 4).ok_or(HdrError::Short {
                claimed: DEFLATE_HEADER as u64,
                holds: bytes.len(),
            })?;
            let deflated = claimed_part(claimed, rest)?;
            inflated = inflate(deflated)?;
            if be_u32(&inflated, 0) != Some(V2_COOKIE) {
                return Err(HdrError::Cookie(be_u32(&inflated, 0).unwrap_or(0)));
            }
            &inflated[..]
        }
        other => return Err(HdrError::Cookie(other.unwrap_or(0))),
    };
    let header = v2.get(..V2_HEADER).ok_or(HdrError::Short {
        claimed: V2_HEADER as u64,
        holds: v2.len(),
    })?;
    let claimed = be_u32(header, 4).unwrap_or(0);
    let payload = claimed_part(claimed, &v2[V2_HEADER..])?;
    let summed = check_payload(payload)?;
    let digits = be_u32(header, 12).unwrap_or(0);
    let low = be_u64(header, 16);
    let high = be_u64(header, 24);
    if digits > MAX_DIGITS || low < 1 || high > MAX_HIGHEST {
        return Err(HdrError::Bounds { low, high, digits });
    }
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &v2[..])
        .map_err(|e| HdrError::Decode(e.to_string()))?;
    summed.ok_or(HdrError::Overflow)?;
    Ok(h)
}

/// Refuses the one number a V2 payload can hold that the crate's deserializer cannot
/// take without a panic where overflow is checked (debug builds): a run of zeros of
/// length `-i64::MIN`, which it negates (its encoding is the varint of `u64::MAX`). Any
/// other malformed payload the crate refuses with an error. Gives the sum of the counts
/// the payload sets, `None` past `u64::MAX`: summed as the numbers are read, where a walk
/// over the decoded histogram's counters would visit every one of them again.
fn check_payload(mut payload: &[u8]) -> Result<Option<u64>, HdrError> {
    let mut sum = Some(0u64);
    while !payload.is_empty() {
        // LEB128 of at most 9 bytes, the 9th taken whole, as the crate reads it.
        let mut value = 0u64;
        let mut used = 0;
        for (i, &b) in payload.iter().take(9).enumerate() {
            used = i + 1;
            if i == 8 {
                value |= u64::from(b) << 56;
                break;
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                break;
            }
        }
        if value == u64::MAX {
            return Err(HdrError::Decode(format!(
                "a run of {} zero counters",
                i64::MIN
            )));
        }
        // ZigZag: an even number is a count (a run of zeros is odd, negative).
        if value & 1 == 0 {
            sum = sum.and_then(|s| s.checked_add(value >> 1));
        }
        payload = &payload[used..];
    }
    Ok(sum)
}

/// The number of values `h` holds, or `None` when its counts add up past `u64::MAX` (the
/// crate's own total saturates there).
pub fn total(h: &Histogram<u64>) -> Option<u64> {
    h.iter_recorded()
        .try_fold(0u64, |sum, v| sum.checked_add(v.count_at_value()))
}

/// The first `claimed` bytes of `rest`, when the claim is within the limit and the bytes.
fn claimed_part(claimed: u32, rest: &[u8]) -> Result<&[u8], HdrError> {
    let n = usize::try_from(claimed).unwrap_or(usize::MAX);
    if n > MAX_HISTOGRAM_BYTES {
        return Err(HdrError::Claims(u64::from(claimed)));
    }
    rest.get(..n).ok_or(HdrError::Short {
        claimed: u64::from(claimed),
        holds: rest.len(),
    })
}

/// Inflates zlib data, reading at most one byte past the limit.
fn inflate(deflated: &[u8]) -> Result<Vec<u8>, HdrError> {
    let mut out = Vec::new();
    ZlibDecoder::new(deflated)
        .take(MAX_HISTOGRAM_BYTES as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| HdrError::Inflate(e.to_string()))?;
    if out.len() > MAX_HISTOGRAM_BYTES {
        return Err(HdrError::Bomb);
    }
    Ok(out)
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    let bytes = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// A big-endian u64 of a slice known to hold it (the V2 header).
fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency_histogram;
    use flate2::write::ZlibEncoder;
    use flate2::Compression;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
    use std::io::Write;

    fn v2(h: &Histogram<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        V2Serializer::new().serialize(h, &mut out).unwrap();
        out
    }

    fn deflated(h: &Histogram<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        V2DeflateSerializer::new().serialize(h, &mut out).unwrap();
        out
    }

    /// `inner` wrapped as V2DeflateSerializer wraps a V2 serialization.
    fn wrap(inner: &[u8]) -> Vec<u8> {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
        z.write_all(inner).unwrap();
        let z = z.finish().unwrap();
        let mut out = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
        out.extend_from_slice(&(z.len() as u32).to_be_bytes());
        out.extend_from_slice(&z);
        out
    }

    #[test]
    fn what_shootout_writes_reads_back() {
        let mut h = latency_histogram();
        for v in [0, 1, 90, 1234, 3_600_000_000] {
            h.record(v).unwrap();
        }
        for bytes in [v2(&h), deflated(&h)] {
            let back = decode(&bytes).unwrap();
            assert_eq!(back, h);
            assert_eq!(total(&back), Some(5));
        }
        let mut s = crate::result::second_histogram();
        s.record(7).unwrap();
        assert_eq!(decode(&v2(&s)).unwrap(), s);
    }

    /// The limit holds the largest histogram shootout can write: every counter of the
    /// widest histogram at the largest count V2 encodes (9 bytes each).
    #[test]
    fn the_largest_histogram_shootout_writes_fits_the_limit() {
        let mut h = latency_histogram();
        let top = h.highest_equivalent(MAX_HIGHEST);
        let mut v = 0;
        while v <= top {
            h.record_n(v, i64::MAX as u64 / 2).unwrap();
            v = h.next_non_equivalent(v);
        }
        let bytes = v2(&h);
        assert!(bytes.len() > 200 * 1024, "{}", bytes.len());
        assert!(bytes.len() <= MAX_HISTOGRAM_BYTES, "{}", bytes.len());
        assert!(deflated(&h).len() <= MAX_HISTOGRAM_BYTES);
        // Every length check passes; only its sum, past u64, is refused.
        assert_eq!(decode(&bytes).unwrap_err(), HdrError::Overflow);
        assert_eq!(
            h.distinct_values(),
            23_552,
            "the counters of the widest bounds"
        );
    }

    /// A 52-byte field whose header claimed 4 GiB made the reader allocate 4 GiB.
    #[test]
    fn a_header_claiming_4_gib_is_refused_before_allocating() {
        let mut forged = v2(&latency_histogram());
        forged[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        forged.resize(52, 0);
        assert_eq!(
            decode(&forged).unwrap_err(),
            HdrError::Claims(u64::from(u32::MAX))
        );
        let e = decode(&wrap(&forged)).unwrap_err();
        assert_eq!(e, HdrError::Claims(u64::from(u32::MAX)));
        assert!(
            e.to_string()
                .starts_with("claims 4294967295 bytes, more than the 1 MiB"),
            "{e}"
        );
        // The deflated wrapper's own length, past the bytes that follow it.
        let mut outer = deflated(&latency_histogram());
        outer[4..8].copy_from_slice(&1000u32.to_be_bytes());
        assert!(
            matches!(decode(&outer), Err(HdrError::Short { claimed: 1000, .. })),
            "{:?}",
            decode(&outer)
        );
        // A claim within the limit but past the bytes there.
        let mut short = v2(&latency_histogram());
        short[4..8].copy_from_slice(&1000u32.to_be_bytes());
        assert_eq!(
            decode(&short).unwrap_err().to_string(),
            format!("claims 1000 bytes but holds {}", short.len() - V2_HEADER)
        );
    }

    /// A 1 MB deflate bomb (a header claiming 1 GiB of zeros) was inflated in full.
    #[test]
    fn a_deflate_bomb_is_refused_past_the_limit() {
        let mut bomb = v2(&latency_histogram());
        bomb[4..8].copy_from_slice(&(1u32 << 30).to_be_bytes());
        bomb.resize(V2_HEADER + 4 * MAX_HISTOGRAM_BYTES, 0);
        let wrapped = wrap(&bomb);
        assert!(wrapped.len() < 16 * 1024, "{}", wrapped.len());
        assert_eq!(decode(&wrapped).unwrap_err(), HdrError::Bomb);
    }

    #[test]
    fn bounds_wider_than_shootout_s_and_other_cookies_are_refused() {
        let wide = Histogram::<u64>::new_with_bounds(1, u64::MAX / 2, 5).unwrap();
        let e = decode(&v2(&wide)).unwrap_err();
        assert!(matches!(e, HdrError::Bounds { digits: 5, .. }), "{e}");
        assert_eq!(decode(b"\0\0\0\0"), Err(HdrError::Cookie(0)));
        assert!(matches!(decode(b""), Err(HdrError::Cookie(0))));
        assert!(matches!(
            decode(&[0x1c, 0x84, 0x93, 0x13]),
            Err(HdrError::Short { .. })
        ));
        assert_eq!(
            decode(&vec![0; MAX_HISTOGRAM_BYTES + 1]),
            Err(HdrError::TooLong(MAX_HISTOGRAM_BYTES + 1))
        );
    }

    /// A zero run of length `i64::MIN` (found by the `result_file` fuzz target) made the
    /// crate's deserializer panic on a negation that overflows.
    #[test]
    fn a_zero_run_the_crate_cannot_negate_is_refused_not_a_panic() {
        let mut b = v2(&latency_histogram());
        b.truncate(V2_HEADER);
        let payload = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        b[4..8].copy_from_slice(&(payload.len() as u32).to_be_bytes());
        b.extend_from_slice(&payload);
        assert!(
            matches!(decode(&b), Err(HdrError::Decode(ref e)) if e.contains("zero counters")),
            "{:?}",
            decode(&b)
        );
        assert!(matches!(decode(&wrap(&b)), Err(HdrError::Decode(_))));
    }

    /// Counts past `u64::MAX` in sum: the crate's total saturates, so it would pass as
    /// `u64::MAX`.
    #[test]
    fn counts_that_add_up_past_u64_are_refused() {
        let mut h = latency_histogram();
        h.record_n(1, i64::MAX as u64).unwrap();
        h.record_n(1000, i64::MAX as u64).unwrap();
        h.record_n(5000, 10).unwrap();
        assert_eq!(decode(&v2(&h)).unwrap_err(), HdrError::Overflow);
    }
}
