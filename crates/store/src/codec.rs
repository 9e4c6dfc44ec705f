//! How values of the model become SQLite values and back: instants and spans as integer
//! nanoseconds, statuses as the model's fixed snake_case words
//! (`RunStatus::as_str` and its `FromStr`, spelled once in `shootout_model::shootout`), histograms as HdrHistogram V2 + deflate
//! BLOBs, and the sample reservoir as one compact BLOB. These encodings are part of the file
//! format: changing one needs a migration.

use flate2::{read::ZlibDecoder, write::ZlibEncoder, Compression};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use shootout_model::stored::SampleTenths;
use shootout_model::{FailureKind, Sample};
use std::io::{Read, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch (negative before it; saturates in the year 2262).
pub(crate) fn ns_since_epoch(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => ns(d),
        Err(e) => -ns(e.duration()),
    }
}

/// The instant `ns` nanoseconds after the Unix epoch.
pub(crate) fn time_at(ns: i64) -> SystemTime {
    let d = Duration::from_nanos(ns.unsigned_abs());
    if ns >= 0 {
        UNIX_EPOCH + d
    } else {
        UNIX_EPOCH - d
    }
}

/// A span in nanoseconds (saturates after 292 years).
pub(crate) fn ns(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// The span of `ns` nanoseconds (a negative count, which this crate never writes, is 0).
pub(crate) fn span(ns: i64) -> Duration {
    Duration::from_nanos(ns.max(0) as u64)
}

/// The failure's code in the samples BLOB (0 is "no failure").
fn failure_code(f: Option<FailureKind>) -> u8 {
    match f {
        None => 0,
        Some(FailureKind::Connect) => 1,
        Some(FailureKind::Timeout) => 2,
        Some(FailureKind::Reset) => 3,
        Some(FailureKind::Malformed) => 4,
        Some(FailureKind::Status) => 5,
        Some(FailureKind::Body) => 6,
        Some(FailureKind::StreamReset) => 7,
        Some(FailureKind::Refused) => 8,
        Some(FailureKind::ConnectionError) => 9,
        Some(FailureKind::Handshake) => 10,
        Some(FailureKind::Closed) => 11,
        Some(FailureKind::Protocol) => 12,
        // gRPC's classes, 14 to 34, in their order in `FailureKind::ALL`.
        Some(k) => {
            1 + FailureKind::ALL
                .iter()
                .position(|&a| a == k)
                .expect("every class is in ALL") as u8
        }
    }
}

/// The failure of a code from the samples BLOB; `Err` for an unknown code.
fn failure_of(code: u8) -> Result<Option<FailureKind>, String> {
    Ok(Some(match code {
        0 => return Ok(None),
        1 => FailureKind::Connect,
        2 => FailureKind::Timeout,
        3 => FailureKind::Reset,
        4 => FailureKind::Malformed,
        5 => FailureKind::Status,
        6 => FailureKind::Body,
        7 => FailureKind::StreamReset,
        8 => FailureKind::Refused,
        9 => FailureKind::ConnectionError,
        10 => FailureKind::Handshake,
        11 => FailureKind::Closed,
        12 => FailureKind::Protocol,
        13 => FailureKind::GeneratorFault,
        14..=34 => FailureKind::ALL[usize::from(code) - 1],
        other => return Err(format!("unknown failure code {other}")),
    }))
}

/// Serializes a histogram (V2 + deflate, the format of HdrHistogram's logs).
pub(crate) fn encode_histogram(h: &Histogram<u64>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Reads a histogram written by [`encode_histogram`], every length it claims bounded
/// before anything is allocated (`shootout_model::hdr`): a store is a file a user may be
/// handed, as a result file is.
pub(crate) fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    shootout_model::hdr::decode(bytes).map_err(|e| format!("it {e}"))
}

/// Format byte of the samples BLOB.
const SAMPLES_V1: u8 = 1;

/// Bytes per sample in the samples BLOB: start 8, connect 4, waiting 4, total 4, status 2,
/// failure 1.
const SAMPLE_BYTES: usize = 23;

/// The most samples a stored step's BLOB may hold when read: 2^25 (33.5 million, 772 MB
/// decoded), above what `--gnuplot`-style runs that keep every request store (result files
/// already stop being mergeable near 25 million requests).
pub(crate) const MAX_STORED_SAMPLES: usize = 1 << 25;

/// Packs samples: a format byte (1), then zlib of `n: u32` and the columns one after the
/// other, little-endian: `start_us` as u64 deltas from the previous sample (wrapping),
/// `connect_us`, `waiting_us`, `total_us` as u32, `status` as u16, the failure as a u8
/// code (0 none, 1 connect, 2 timeout, 3 reset, 4 malformed, 5 status, 6 body).
pub(crate) fn encode_samples(samples: &[Sample]) -> Vec<u8> {
    let n = samples.len();
    let mut raw = Vec::with_capacity(4 + n * SAMPLE_BYTES);
    raw.extend_from_slice(&(n as u32).to_le_bytes());
    let mut prev = 0u64;
    for s in samples {
        raw.extend_from_slice(&s.start_us.wrapping_sub(prev).to_le_bytes());
        prev = s.start_us;
    }
    for s in samples {
        raw.extend_from_slice(&s.connect_us.to_le_bytes());
    }
    for s in samples {
        raw.extend_from_slice(&s.waiting_us.to_le_bytes());
    }
    for s in samples {
        raw.extend_from_slice(&s.total_us.to_le_bytes());
    }
    for s in samples {
        raw.extend_from_slice(&s.status.to_le_bytes());
    }
    raw.extend(samples.iter().map(|s| failure_code(s.failure)));
    samples_blob_of(&raw)
}

/// The samples BLOB whose inflated bytes are `raw`: the format's byte, then `raw`
/// deflated (zlib).
pub(crate) fn samples_blob_of(raw: &[u8]) -> Vec<u8> {
    let mut z = ZlibEncoder::new(vec![SAMPLES_V1], Compression::default());
    z.write_all(raw).expect("writing to a Vec cannot fail");
    z.finish().expect("writing to a Vec cannot fail")
}

/// Unpacks samples written by [`encode_samples`].
pub(crate) fn decode_samples(bytes: &[u8]) -> Result<Vec<Sample>, String> {
    let (&format, packed) = bytes.split_first().ok_or("empty BLOB")?;
    if format != SAMPLES_V1 {
        return Err(format!("unknown format {format}"));
    }
    // The count comes first: the rest is inflated up to what that count needs and no
    // further, and the count itself is bounded, so a forged BLOB (a deflate bomb, a count
    // of billions) costs at most MAX_STORED_SAMPLES samples of memory.
    let mut inflate = ZlibDecoder::new(packed);
    let mut head = [0u8; 4];
    inflate
        .read_exact(&mut head)
        .map_err(|_| "no sample count")?;
    let n = u32::from_le_bytes(head) as usize;
    if n > MAX_STORED_SAMPLES {
        return Err(format!(
            "{n} samples, more than the {MAX_STORED_SAMPLES} a step may hold"
        ));
    }
    let mut raw = head.to_vec();
    inflate
        .take((n * SAMPLE_BYTES) as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    if raw.len() != 4 + n * SAMPLE_BYTES {
        return Err(format!(
            "{} bytes for {n} samples, expected {}",
            raw.len(),
            4 + n * SAMPLE_BYTES
        ));
    }
    let mut cols = Columns(&raw[4..]);
    let starts = cols.take(n, u64::from_le_bytes);
    let connects = cols.take(n, u32::from_le_bytes);
    let waits = cols.take(n, u32::from_le_bytes);
    let totals = cols.take(n, u32::from_le_bytes);
    let statuses = cols.take(n, u16::from_le_bytes);
    let failures = cols.take(n, u8::from_le_bytes);
    let mut start_us = 0u64;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        start_us = start_us.wrapping_add(starts[i]);
        out.push(Sample {
            start_us,
            connect_us: connects[i],
            waiting_us: waits[i],
            total_us: totals[i],
            status: statuses[i],
            failure: failure_of(failures[i])?,
        });
    }
    Ok(out)
}

/// Checks a samples BLOB as [`decode_samples`] would read it, refusing what it refuses
/// with the same words, without building the samples: the columns are inflated through
/// one small buffer and only the starts and the failure codes looked at (a reader that
/// checks every step's reservoir and keeps none). Gives the good answers counted by tenth
/// of a second, all that a report reads of the samples but for the HTML's few steps.
pub(crate) fn check_samples(bytes: &[u8]) -> Result<SampleTenths, String> {
    let (&format, packed) = bytes.split_first().ok_or("empty BLOB")?;
    if format != SAMPLES_V1 {
        return Err(format!("unknown format {format}"));
    }
    let mut inflate = ZlibDecoder::new(packed);
    let mut head = [0u8; 4];
    inflate
        .read_exact(&mut head)
        .map_err(|_| "no sample count")?;
    let n = u32::from_le_bytes(head) as usize;
    if n > MAX_STORED_SAMPLES {
        return Err(format!(
            "{n} samples, more than the {MAX_STORED_SAMPLES} a step may hold"
        ));
    }
    count_columns(inflate.take((n * SAMPLE_BYTES) as u64 + 1), n, 16 << 10)
}

/// [`check_samples`]' reading of the `n` samples' columns, through a buffer of `buf_len`
/// bytes.
fn count_columns(mut columns: impl Read, n: usize, buf_len: usize) -> Result<SampleTenths, String> {
    // The starts are the first column (8 bytes each, from the one before), the failure
    // codes the last (a byte each): each sample's tenth is kept (4 bytes, as the inflated
    // bytes come: at most 4 bytes for each 27 read) until its code says whether it counts.
    let starts_end = n * 8;
    let codes_at = n * (SAMPLE_BYTES - 1);
    let mut buf = vec![0u8; buf_len];
    let (mut read, mut unknown) = (0usize, None);
    let mut counted = SampleTenths {
        sampled: n as u64,
        good: Vec::new(),
    };
    let mut tenths: Vec<Option<u16>> = Vec::new();
    let (mut start, mut start_us, mut start_len) = ([0u8; 8], 0u64, 0usize);
    let mut code = 0usize;
    loop {
        let got = match columns.read(&mut buf) {
            Ok(0) => break,
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        let chunk = &buf[..got];
        let mut starts = &chunk[..starts_end.saturating_sub(read).min(got)];
        // A start cut by the buffer's end is finished from the next read.
        while start_len > 0 && !starts.is_empty() {
            start[start_len] = starts[0];
            starts = &starts[1..];
            start_len = (start_len + 1) % 8;
            if start_len == 0 {
                start_us = start_us.wrapping_add(u64::from_le_bytes(start));
                tenths.push(SampleTenths::tenth(start_us));
            }
        }
        if !starts.is_empty() {
            let whole = starts.chunks_exact(8);
            let cut = whole.remainder();
            for gap in whole {
                let gap = u64::from_le_bytes(gap.try_into().expect("chunks of 8 bytes"));
                start_us = start_us.wrapping_add(gap);
                tenths.push(SampleTenths::tenth(start_us));
            }
            start[..cut.len()].copy_from_slice(cut);
            start_len = cut.len();
        }
        if read + got > codes_at {
            for &c in &chunk[codes_at.saturating_sub(read)..] {
                match failure_of(c) {
                    Ok(None) => {
                        if let Some(&Some(tenth)) = tenths.get(code) {
                            counted.count_good_in(tenth);
                        }
                    }
                    Ok(Some(_)) => {}
                    Err(_) => unknown = unknown.or(Some(c)),
                }
                code += 1;
            }
        }
        read += got;
    }
    if read != n * SAMPLE_BYTES {
        return Err(format!(
            "{} bytes for {n} samples, expected {}",
            4 + read,
            4 + n * SAMPLE_BYTES
        ));
    }
    // Kept with the step for as long as the report runs.
    counted.good.shrink_to_fit();
    match unknown {
        Some(code) => failure_of(code).map(|_| counted),
        None => Ok(counted),
    }
}

/// The columns of a samples BLOB, read front to back (lengths checked by the caller).
struct Columns<'a>(&'a [u8]);

impl Columns<'_> {
    fn take<const W: usize, T>(&mut self, n: usize, read: fn([u8; W]) -> T) -> Vec<T> {
        let (col, rest) = self.0.split_at(n * W);
        self.0 = rest;
        col.chunks_exact(W)
            .map(|c| read(c.try_into().expect("chunk of W bytes")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_round_trip_to_the_nanosecond() {
        for t in [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789),
            UNIX_EPOCH - Duration::new(5, 1),
        ] {
            assert_eq!(time_at(ns_since_epoch(t)), t);
        }
        assert_eq!(span(ns(Duration::new(3, 7))), Duration::new(3, 7));
        assert_eq!(ns(Duration::MAX), i64::MAX);
    }

    #[test]
    fn samples_round_trip_and_shrink() {
        let samples: Vec<Sample> = (0..10_000u64)
            .map(|i| Sample {
                start_us: i * 97 + (i % 7),
                connect_us: if i % 100 == 0 { 250 } else { 0 },
                waiting_us: 400 + (i % 13) as u32,
                total_us: 450 + (i % 17) as u32,
                status: if i % 50 == 0 { 503 } else { 200 },
                failure: match i % 500 {
                    0 => Some(FailureKind::Status),
                    1 => Some(FailureKind::Timeout),
                    _ => None,
                },
            })
            .collect();
        let blob = encode_samples(&samples);
        assert!(
            blob.len() < samples.len() * SAMPLE_BYTES / 4,
            "{}",
            blob.len()
        );
        assert_eq!(decode_samples(&blob).unwrap(), samples);
        assert_eq!(check_samples(&blob), Ok(SampleTenths::of(&samples)));
        assert_eq!(decode_samples(&encode_samples(&[])).unwrap(), vec![]);
        assert_eq!(
            check_samples(&encode_samples(&[])),
            Ok(SampleTenths::default())
        );
    }

    /// The check counts the good answers by tenth as the samples themselves count them:
    /// over two minutes (the tenths past the first minute left out), an odd count whose
    /// starts cross the check's buffer anywhere, failures not counted.
    #[test]
    fn the_check_counts_the_good_answers_by_tenth() {
        let samples: Vec<Sample> = (0..12_345u64)
            .map(|i| Sample {
                start_us: i * 9_721 + (i % 3) * 50_000,
                connect_us: 0,
                waiting_us: 1,
                total_us: 2,
                status: 200,
                failure: (i % 7 == 0).then_some(FailureKind::Reset),
            })
            .collect();
        let blob = encode_samples(&samples);
        let counted = check_samples(&blob).unwrap();
        assert_eq!(counted, SampleTenths::of(&samples));
        // Read a few bytes at a time, every start is cut somewhere: the same counts.
        let mut raw = Vec::new();
        ZlibDecoder::new(&blob[1..]).read_to_end(&mut raw).unwrap();
        for buf_len in [1, 3, 7, 9, 4096] {
            let cut = count_columns(&raw[4..], samples.len(), buf_len).unwrap();
            assert_eq!(cut, counted, "a buffer of {buf_len}");
        }
        assert_eq!(counted.sampled, 12_345);
        assert_eq!(
            counted.good.len(),
            shootout_model::stored::MAX_SAMPLE_TENTHS
        );
        let good_in_a_minute = samples
            .iter()
            .filter(|s| s.failure.is_none() && s.start_us < 60_000_000)
            .count() as u64;
        let sum: u64 = counted.good.iter().map(|&g| u64::from(g)).sum();
        assert_eq!(sum, good_in_a_minute);
        // Every tenth counted here: about 10 starts in each (fewer in the first, which
        // the shifted starts skip), 1 in 7 failed.
        assert!(
            counted.good.iter().all(|&g| (5..=12).contains(&g)),
            "{:?}",
            counted.good
        );
    }

    #[test]
    fn damaged_samples_are_refused() {
        let blob = encode_samples(&[Sample {
            start_us: 1,
            connect_us: 2,
            waiting_us: 3,
            total_us: 4,
            status: 200,
            failure: None,
        }]);
        assert!(decode_samples(&blob[..blob.len() - 3]).is_err());
    }

    /// A BLOB whose count says four billion samples, and one that inflates far past
    /// what its count needs: both refused without inflating more than the count allows.
    #[test]
    fn a_forged_samples_blob_is_refused_before_its_memory() {
        let forged = |raw: &[u8]| {
            let mut z = ZlibEncoder::new(vec![SAMPLES_V1], Compression::default());
            z.write_all(raw).unwrap();
            z.finish().unwrap()
        };
        let e = decode_samples(&forged(&u32::MAX.to_le_bytes())).unwrap_err();
        assert!(e.contains("more than the"), "{e}");
        // One sample announced, 64 MiB of zeros inflated after it (a 64 KiB BLOB).
        let mut bomb = 1u32.to_le_bytes().to_vec();
        bomb.resize(64 << 20, 0);
        let blob = forged(&bomb);
        assert!(blob.len() < 128 * 1024);
        let e = decode_samples(&blob).unwrap_err();
        assert!(
            e.starts_with("28 bytes"),
            "inflated no further than the count needs: {e}"
        );
        assert!(decode_samples(&[]).is_err());
        let mut other = blob.clone();
        other[0] = 9;
        assert!(decode_samples(&other).unwrap_err().contains("format 9"));
    }

    /// The check refuses what the decoder refuses, with its words: a cut BLOB, a forged
    /// count, a bomb, another format, and unknown failure codes anywhere in the column
    /// (past the check's buffer too).
    #[test]
    fn the_check_refuses_what_decoding_refuses() {
        let forged = |raw: &[u8]| {
            let mut z = ZlibEncoder::new(vec![SAMPLES_V1], Compression::default());
            z.write_all(raw).unwrap();
            z.finish().unwrap()
        };
        let n = 40_000usize;
        let with_code = |at: usize, code: u8| {
            let mut raw = (n as u32).to_le_bytes().to_vec();
            raw.resize(4 + n * SAMPLE_BYTES, 0);
            raw[4 + n * (SAMPLE_BYTES - 1) + at] = code;
            forged(&raw)
        };
        let good = with_code(7, 2);
        let mut bomb = 1u32.to_le_bytes().to_vec();
        bomb.resize(1 << 20, 0);
        let mut other = good.clone();
        other[0] = 9;
        let cases = [
            good[..good.len() - 3].to_vec(),
            forged(&u32::MAX.to_le_bytes()),
            forged(&bomb),
            forged(&[1, 0]),
            other,
            Vec::new(),
            vec![SAMPLES_V1],
            with_code(0, 35),
            with_code(n / 2, 200),
            with_code(n - 1, 99),
        ];
        for blob in &cases {
            let decoded = decode_samples(blob).map(|_| ());
            assert!(decoded.is_err());
            assert_eq!(check_samples(blob).map(|_| ()), decoded);
        }
        assert_eq!(decode_samples(&good).unwrap().len(), n);
        assert!(check_samples(&good).is_ok());
        assert_eq!(
            check_samples(&with_code(n - 1, 99)).unwrap_err(),
            "unknown failure code 99"
        );
    }

    #[test]
    fn histograms_round_trip() {
        let mut h = shootout_model::latency_histogram();
        for v in [1, 10, 999, 12_345, 3_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert!(decode_histogram(b"nope").is_err());
    }

    /// A stored histogram whose header claimed 4 GiB made the reader allocate 4 GiB.
    #[test]
    fn a_histogram_claiming_4_gib_is_refused_before_allocating() {
        let mut forged = encode_histogram(&shootout_model::latency_histogram()).unwrap();
        forged[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            decode_histogram(&forged).unwrap_err(),
            "it claims 4294967295 bytes, more than the 1 MiB a histogram may hold"
        );
    }
}
