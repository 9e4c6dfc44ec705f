//! Target `result_file`: the reader of result files (`SavedRun::parse`, the histograms it
//! decodes through `shootout_model::hdr`) and `merge` of what it accepts, fed forged
//! lengths, deflate bombs and counts that overflow.
//!
//! Input layout: a mode byte, then (by `mode % 3`):
//! - 0: a result file's text (bytes read as UTF-8, lossily), and those bytes through
//!   `merge`'s stream reader (`ResultScanner`), whole and in two pieces;
//! - 1: the bytes of one histogram (HdrHistogram V2, deflated or not): decoded directly,
//!   and as the `latency` histogram of a valid result file, as its journey's, as its
//!   streaming calls' first replies and gaps, and as its ages in flight at the end;
//! - 2: two result files, split at the first NUL byte, merged when both are read.
//!
//! Invariants: no panic (debug assertions on, so an overflow panics); the heap grows by
//! at most a bound set by the input's length ([`heap_bound`]), whatever a header claims;
//! a file that is read writes back to a text that reads back to the same text; a merge of
//! files that were read is a result that reads back (its counts hold the reader's checks).

use crate::alloc;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use shootout_analysis::merge::{merge, Source};
use shootout_model::saved::{Found, ResultScanner, BEGIN_MARK, MARK_WINDOW};
use shootout_model::{LoadSpec, Outcome, RunResult, SavedRun, Target, TargetStats};
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

/// The most the heap may grow while one input is read: 64 bytes per input byte (the
/// parsed structures, the base64 decoded, the text written back, each with a Vec's
/// doubling) plus 16 MiB for the histograms (each decoded one is at most 184 KiB of
/// counters, the bytes it came from at most 1 MiB, an inflated payload at most 1 MiB),
/// plus [`KIND_HEAP`] per `"label"` in the input (each request list entry, journey step
/// or journey is read into a histogram of its own, whatever its text's length) and per
/// `"busy"` (a journey's busy time, a second histogram), plus
/// [`JOURNEYS_HEAP`] per `"journeys":{` (a spec's journeys, read back as a journey file).
pub fn heap_bound(input: &[u8]) -> usize {
    let labels = input.windows(7).filter(|w| w == b"\"label\"").count();
    let busy = input.windows(6).filter(|w| w == b"\"busy\"").count();
    let specs = input.windows(12).filter(|w| w == b"\"journeys\":{").count();
    64 * input.len() + (16 << 20) + (labels + busy) * KIND_HEAP + specs * JOURNEYS_HEAP
}

/// What a spec's journeys may cost read back: at most `MAX_SAVED_KINDS` (4,096) steps,
/// each a journey file's step (its name, a `GET /` template, its expectations: under
/// 1 KiB) and its TOML text, written and parsed once, held twice (read and written back),
/// with room.
pub const JOURNEYS_HEAP: usize = 4096 * 4 * 1024;

/// What one entry of `result.targets` or `result.journeys` may cost: its histogram of 2
/// significant figures (3,328 counters of 8 bytes, 26 KiB) held at most four times at once
/// (read, written back and read again; or two files' and their merge's), with room.
pub const KIND_HEAP: usize = 4 * (32 << 10);

/// A journey step's or a journey's counts with nothing in them.
fn kind(label: &str) -> TargetStats {
    TargetStats {
        label: label.into(),
        completed: 0,
        ok: 0,
        failures: Default::default(),
        unsent: 0,
        latency: shootout_model::result::second_histogram(),
        busy: None,
    }
}

/// A valid result file with no request in it, one journey step, one journey and a
/// bidirectional stream of no calls, into whose histograms mode 1 puts its own (the
/// run's latency, the journey's duration and busy time, the stream's first replies and
/// gaps, the ages of the requests in flight at the end).
fn template() -> &'static str {
    static T: OnceLock<String> = OnceLock::new();
    T.get_or_init(|| {
        let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:8080/").expect("a valid URL"));
        // The journeys its steps and journey are of, as a journey run's file keeps them.
        let file = shootout_model::journey::parse(
            "[[journey]]\nname = \"writer\"\n[[journey.step]]\nname = \"post\"\nget = \"/\"\n",
            "j.toml",
            &mut |_| Err("no files".into()),
        )
        .expect("a valid journey file");
        spec.journey = Some(shootout_model::spec::Journeys {
            source: "j.toml".into(),
            seed: 1,
            file: std::sync::Arc::new(file),
        });
        // Its users each on a connection of their own (`spec.journeys.connection`).
        spec.journey_connection = shootout_model::JourneyConnection::New;
        SavedRun {
            shootout: "0.1.0".into(),
            shard: None,
            start_at: None,
            barrier: None,
            fleet: spec.clone(),
            spec,
            outcome: Outcome::Complete,
            result: Some(RunResult {
                targets: vec![kind("writer › post")],
                journeys: vec![TargetStats {
                    busy: Some(shootout_model::result::second_histogram()),
                    ..kind("writer")
                }],
                stream: Some(Box::new(shootout_model::StreamStats::new("bidi"))),
                in_flight_at_end: Some(shootout_model::latency_histogram()),
                ..RunResult::empty(
                    UNIX_EPOCH + Duration::from_secs(1_764_000_000),
                    Duration::from_secs(1),
                )
            }),
        }
        .to_json()
    })
}

/// The target (see the module).
pub fn check(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (_, grew) = alloc::peak_growth(|| match mode % 3 {
        0 => one(rest),
        1 => histogram(rest),
        _ => two(rest),
    });
    let bound = heap_bound(data);
    assert!(
        grew <= bound,
        "heap grew by {grew} bytes (bound {bound}) reading {} bytes",
        data.len()
    );
}

/// Reads a file; one that is read must write back to a text that reads back the same.
/// The bytes also go through `merge`'s stream reader, whole and in two pieces: the same
/// answer both ways, and a text that opens with `{` and holds no mark is one file.
fn one(bytes: &[u8]) {
    scanned(bytes);
    let text = String::from_utf8_lossy(bytes);
    let Ok(run) = SavedRun::parse(&text) else {
        return;
    };
    let written = run.to_json();
    let again = SavedRun::parse(&written)
        .unwrap_or_else(|e| panic!("a file that was read writes back unreadable: {e}"));
    assert_eq!(
        again.to_json(),
        written,
        "a second round trip changed the file"
    );
}

/// `bytes` through [`ResultScanner`], whole and cut in two where its first byte says.
fn scanned(bytes: &[u8]) {
    let scan = |pieces: &[&[u8]]| {
        let mut s = ResultScanner::new();
        for p in pieces {
            s.feed(p)?;
            assert!(s.kept() <= bytes.len() + MARK_WINDOW);
        }
        s.finish()
    };
    let whole = scan(&[bytes]);
    let cut = bytes
        .first()
        .map_or(0, |&b| usize::from(b) % (bytes.len() + 1));
    let (a, b) = bytes.split_at(cut);
    assert_eq!(scan(&[a, b]), whole, "cut at {cut}");
    if let Ok(text) = std::str::from_utf8(bytes) {
        let marks = text.contains(BEGIN_MARK);
        // The scanner's rule: the first byte that is not ASCII white space (a vertical tab
        // is not, nor any other character) opens the file.
        let opened = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
        if opened.starts_with('{') && !marks && !text.contains('\0') {
            assert_eq!(whole, Ok(Found::File(text.trim().to_string())));
        }
        if let Ok(Found::Blocks(blocks)) = &whole {
            assert!(blocks.iter().all(|(_, b)| text.contains(b.as_str())));
        }
    }
}

/// Decodes a histogram's bytes directly and as a field of a valid file.
fn histogram(bytes: &[u8]) {
    if let Ok(h) = shootout_model::hdr::decode(bytes) {
        assert!(shootout_model::hdr::total(&h).is_some());
    }
    let encoded = BASE64.encode(bytes);
    let text = template();
    // The run's latency histogram (the first), the last journey's (the last), that
    // journey's busy time, the streaming calls' first replies and gaps, and the ages of
    // the requests in flight at the end.
    for (key, at) in [
        ("latency", text.find("\"latency\":\"")),
        ("latency", text.rfind("\"latency\":\"")),
        ("busy", text.find("\"busy\":\"")),
        ("first_reply", text.find("\"first_reply\":\"")),
        ("gaps", text.find("\"gaps\":\"")),
        ("in_flight_at_end", text.find("\"in_flight_at_end\":\"")),
    ] {
        let Some(at) = at else {
            panic!("the template has {key} histograms");
        };
        let open = key.len() + 4;
        let end = text[at + open..]
            .find('"')
            .map_or(text.len(), |e| at + open + e + 1);
        let forged = format!("{}\"{key}\":\"{encoded}\"{}", &text[..at], &text[end..]);
        let _ = SavedRun::parse(&forged);
    }
}

/// Reads two files and merges them when both are read; the merge must read back.
fn two(bytes: &[u8]) {
    let split = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let (a, b) = (&bytes[..split], bytes.get(split + 1..).unwrap_or_default());
    let read = |b: &[u8], name: &str| {
        SavedRun::parse(&String::from_utf8_lossy(b)).map(|run| Source {
            name: name.into(),
            run,
        })
    };
    let (Ok(a), Ok(b)) = (read(a, "a.json"), read(b, "b.json")) else {
        return;
    };
    for partial in [false, true] {
        let Ok(m) = merge(&[a.clone(), b.clone()], partial) else {
            continue;
        };
        let saved = SavedRun {
            shootout: "0.1.0".into(),
            shard: None,
            start_at: None,
            barrier: None,
            fleet: m.spec.clone(),
            spec: m.spec,
            outcome: Outcome::Complete,
            result: Some(m.result),
        };
        if let Err(e) = SavedRun::parse(&saved.to_json()) {
            panic!("the merge of two files that were read does not read back: {e}");
        }
    }
}
