//! HTTP/2 servers that attack the client: malformed and amplifying header blocks, floods
//! of control and CONTINUATION frames, a body that never ends. None may panic a worker,
//! grow its memory past the engine's stated limits, or hold a deadline back; each ends
//! the way RFC 9113 §5.4 says (GOAWAY with the right code, then a close the server reads,
//! not a reset), with exact counts, the server's bytes in one write and one per write.
//!
//! The memory bounds are measured on this test process's peak resident memory, reset
//! before each such case (`/proc/self/clear_refs`); those cases run alone, every other
//! test of the file waiting for them and they for it (one lock, [`alone`] and
//! [`beside`]), and this file is a test binary of its own, apart from the engine's others
//! (`engine/`), whose servers and runs would raise the peak beside them.

mod common;

use common::{both_ways_with, closed, failures, go, h2c};
use shootout_model::{FailureKind, LoadSpec, Protocol, RunResult};
use shootout_testserver::{
    Delivery, H2Behavior, H2Server, BOMB_ENTRY, COMPRESSION_ERROR, EARLY_ERRORS, ENHANCE_YOUR_CALM,
    HPACK_FAULTS,
};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// `n` requests over `c` connections of `streams` streams each (one thread), closed loop.
fn spec(server: &H2Server, n: u64, c: usize, streams: usize) -> LoadSpec {
    let mut s = closed(&server.url("/"), n, c);
    s.protocol = Protocol::Http2;
    s.streams = streams;
    s
}

/// Runs `load` against `behavior` served as `delivery`; returns the run with its server,
/// once the server has seen every connection end (its counters are final).
fn one_way(
    behavior: &H2Behavior,
    delivery: Delivery,
    load: impl Fn(&H2Server) -> LoadSpec,
) -> (RunResult, H2Server) {
    let server = h2c(behavior)(delivery);
    let r = go(&load(&server));
    assert!(
        server.wait_idle(Duration::from_secs(10)),
        "connections left open"
    );
    (r, server)
}

/// Served whole and byte by byte, with the same outcome.
fn both_ways(
    behavior: H2Behavior,
    load: impl Fn(&H2Server) -> LoadSpec,
) -> [(RunResult, H2Server); 2] {
    both_ways_with(h2c(&behavior), H2Server::wait_idle, load)
}

/// Held by every test of the file: the peak resident memory is the whole process's, and
/// every test's servers and runs raise it, so a memory-measured case runs alone.
static PEAK: RwLock<()> = RwLock::new(());

/// The lock of a memory-measured case: no other test of the file runs meanwhile.
fn alone() -> RwLockWriteGuard<'static, ()> {
    PEAK.write().unwrap_or_else(PoisonError::into_inner)
}

/// The lock of every other test: any number of them run together, never beside a
/// memory-measured case.
fn beside() -> RwLockReadGuard<'static, ()> {
    PEAK.read().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` alone ([`alone`]) and returns what it returned and how far the process's
/// peak resident memory rose above its resident memory before, in MiB.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let _alone = alone();
    // Writing 5 resets the peak (VmHWM) to the current resident size (Linux 4.0+).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_kib("VmRSS:");
    let out = f();
    let peak = status_kib("VmHWM:");
    (out, peak.saturating_sub(before) / 1024)
}

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap();
    line[field.len()..]
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

/// A connection error in the frames right after the server's preface, met by the
/// pre-flight connection (which reads only the first frame's head to decide whether the
/// server speaks HTTP/2): it is answered with GOAWAY and its code, then closed, never
/// reset; the run then goes on, on connections without the fault, and ends each with
/// GOAWAY(NO_ERROR).
#[test]
fn an_error_right_after_the_preface_gets_its_goaway_not_a_reset() {
    let _beside = beside();
    for (title, frame, code) in EARLY_ERRORS {
        let behavior = H2Behavior::AfterPreface {
            frame: frame.to_vec(),
            connections: 1,
        };
        for (r, server) in both_ways(behavior, |s| spec(s, 3, 1, 1)) {
            assert_eq!((r.counts.ok, r.counts.failed()), (3, 0), "{title}");
            assert_eq!(server.client_goaways(), vec![*code], "{title}");
            assert_eq!(
                (server.early_resets(), server.client_resets()),
                (0, 0),
                "{title}: closed, never reset"
            );
            assert_eq!(server.connections(), 2, "{title}");
            assert_eq!(server.client_goodbyes(), 1, "{title}: the run's end");
        }
    }
}

/// The end of a run closes every HTTP/2 connection gracefully: GOAWAY(NO_ERROR) on each,
/// the pre-flight's included, and no reset.
#[test]
fn a_run_ends_its_connections_with_goaway_no_error() {
    let _beside = beside();
    for (r, server) in both_ways(H2Behavior::Hello, |s| spec(s, 40, 2, 4)) {
        assert_eq!(r.counts.ok, 40);
        assert!(server.client_goaways().is_empty());
        assert_eq!(server.connections(), 3, "the pre-flight's and two");
        assert_eq!(server.client_goodbyes(), 3);
        assert_eq!((server.early_resets(), server.client_resets()), (0, 0));
    }
}

#[test]
fn every_malformed_hpack_block_is_a_compression_error_not_a_panic() {
    let _beside = beside();
    for (title, block) in HPACK_FAULTS {
        let behavior = H2Behavior::HpackBlock {
            block: block.to_vec(),
        };
        for (r, server) in both_ways(behavior, |s| spec(s, 3, 1, 1)) {
            assert_eq!(failures(&r), vec![(FailureKind::Malformed, 3)], "{title}");
            assert_eq!(
                server.client_goaways(),
                vec![COMPRESSION_ERROR; 3],
                "{title}: GOAWAY(COMPRESSION_ERROR) on each connection"
            );
            assert_eq!(server.client_resets(), 0, "{title}: closed, never reset");
        }
    }
}

/// A block of 16,000 references to one 4,000-byte entry decodes to 64 MB of header
/// list: over the limit the engine announces, so each stream fails as malformed (and is
/// reset), the list is not kept, and the connection carries on.
#[test]
fn a_header_list_over_the_limit_fails_its_stream_and_keeps_the_connection() {
    let refs = 16_000;
    let (runs, grew) =
        peak_growth(|| both_ways(H2Behavior::HpackBomb { refs }, |s| spec(s, 12, 1, 2)));
    for (r, server) in runs {
        let c = &r.counts;
        assert_eq!(failures(&r), vec![(FailureKind::Malformed, 12)]);
        assert_eq!(server.answers(), 12);
        // The client resets each stream; the last resets may meet the server's close.
        assert!(
            (1..=12).contains(&server.cancels()),
            "streams reset by the client: {}",
            server.cancels()
        );
        assert_eq!(c.connections_opened, 1, "the connection kept");
        assert!(server.client_goaways().is_empty());
    }
    let list = refs * (BOMB_ENTRY + 6 + 32) / (1 << 20);
    assert!(
        grew < 32,
        "peak memory rose {grew} MiB for lists of {list} MiB"
    );
}

/// 131,072 references in one block (132 KiB of frames, 530 MB of list): over the block
/// limit, a connection error (the table cannot be kept in step without decoding it).
#[test]
fn hpack_amplification_ends_the_connection_without_the_memory() {
    let refs = 128 * 1024;
    let (runs, grew) =
        peak_growth(|| both_ways(H2Behavior::HpackBomb { refs }, |s| spec(s, 3, 1, 1)));
    let [(whole, server), (bytewise, _)] = runs;
    assert_eq!(failures(&whole), vec![(FailureKind::Malformed, 3)]);
    assert_eq!(failures(&bytewise), vec![(FailureKind::Malformed, 3)]);
    // Whole, the server has written its block when the GOAWAY comes and reads it. One
    // byte per write, 132 KiB can outlast the second a closed connection lingers on a
    // busy machine, and the GOAWAY then meets a closed socket.
    assert_eq!(server.client_goaways(), vec![COMPRESSION_ERROR; 3]);
    assert_eq!(server.client_resets(), 0);
    assert!(grew < 32, "peak memory rose {grew} MiB");
}

/// Four million PINGs (68 MB) and six million SETTINGS (54 MB) from a server that reads
/// none of the acknowledgements: once the socket buffers are full and 10,000
/// acknowledgements wait, the connection ends (ENHANCE_YOUR_CALM). Whole only: one byte
/// per write would be over 100 million writes.
#[test]
fn a_ping_flood_ends_the_connection_and_memory_stays_bounded() {
    for (kind, count) in [(0x6, 4_000_000), (0x4, 6_000_000)] {
        let behavior = H2Behavior::ControlFlood { kind, count };
        let ((r, _server), grew) =
            peak_growth(|| one_way(&behavior, Delivery::Whole, |s| spec(s, 2, 1, 1)));
        assert_eq!(
            failures(&r),
            vec![(FailureKind::Malformed, 2)],
            "frame type {kind}"
        );
        assert!(grew < 32, "frame type {kind}: peak memory rose {grew} MiB");
    }
}

#[test]
fn a_small_control_flood_is_acknowledged_and_the_connection_keeps_working() {
    let _beside = beside();
    for kind in [0x6, 0x4] {
        let behavior = H2Behavior::ControlFlood { kind, count: 1000 };
        for (r, server) in both_ways(behavior, |s| spec(s, 5, 1, 1)) {
            assert_eq!(
                (r.counts.ok, r.counts.failed()),
                (5, 0),
                "frame type {kind}"
            );
            assert_eq!(server.flooded(), 1000);
            if kind == 0x6 {
                assert_eq!(server.pings().1, 1000, "every PING acknowledged");
            }
            assert_eq!(r.counts.connections_opened, 1);
        }
    }
}

/// Empty CONTINUATION frames that never end the block: the connection ends after 64
/// frames with ENHANCE_YOUR_CALM, not when the request's deadline passes. The server
/// reads the client between its writes and stops its 1,000 frames at the GOAWAY, so it
/// hears the GOAWAY however slowly its bytes go out (one per write on a busy machine can
/// outlast the second a closed connection lingers), and the close that follows is the
/// client's, read, not a reset.
#[test]
fn a_continuation_flood_ends_the_connection_at_once() {
    let _beside = beside();
    let behavior = H2Behavior::ContinuationFlood { frames: 1000 };
    for (r, server) in both_ways(behavior, |s| spec(s, 3, 1, 1)) {
        assert_eq!(failures(&r), vec![(FailureKind::Malformed, 3)]);
        assert_eq!(server.client_goaways(), vec![ENHANCE_YOUR_CALM; 3]);
        assert_eq!(server.client_resets(), 0);
    }
}

/// A body that never ends, sent as fast as the client reads it: the request's deadline
/// still fires (reads stop at a budget per event, so the sweep of deadlines runs).
#[test]
fn an_endless_body_times_out_on_time() {
    let _beside = beside();
    let timeout = Duration::from_millis(300);
    let began = Instant::now();
    let (r, _server) = one_way(&H2Behavior::EndlessBody, Delivery::Whole, |s| {
        let mut spec = spec(s, 1, 1, 1);
        spec.timeout = timeout;
        spec
    });
    assert_eq!(failures(&r), vec![(FailureKind::Timeout, 1)]);
    assert!(
        began.elapsed() < timeout * 15,
        "took {:?} for a deadline of {timeout:?}",
        began.elapsed()
    );
}
