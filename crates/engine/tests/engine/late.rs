//! One meaning of "late" for every protocol. A send's lag runs from its due time to the
//! moment the loop hands it to a connection able to carry it (open, with room for one more
//! request); past 1 ms it is late, and it waited for a connection when, since the schedule
//! was last kept, a request fell due and no connection had room. The same stall at the
//! same rate must therefore give the same schedule over HTTP/1.1, HTTP/2, HTTP/3 and
//! WebSocket: the schedule certificate, the lag percentiles and the capacity search's
//! "the generator could not keep the schedule" mean one thing whatever the protocol.

use crate::common;

use common::{closed, go};
use shootout_model::{LoadSpec, Pace, Protocol, ScheduleStats};
use shootout_testserver::{
    Behavior, Delivery, H2Behavior, H2Server, H3Behavior, H3Server, TestServer, WsBehavior,
    WsServer,
};
use std::time::Duration;

/// How long the server takes over every answer.
const STALL: Duration = Duration::from_millis(500);
/// Requests per second asked for: one every 5 ms.
const RATE: f64 = 200.0;
/// Requests in flight at most: connections (the cap) × one request each.
const ROOM: u64 = 8;
/// How long each run lasts: the third batch leaves at 2 × `STALL` (1 s) and the fourth
/// could not before 3 × `STALL`, so a server slowed by a busy machine has 400 ms of room
/// before its third batch would miss the run.
const RUN: Duration = Duration::from_millis(1400);

/// `RATE` for `RUN` on one thread: one connection opened ahead of need, the others opened
/// as requests fall due, up to `ROOM` connections of one request each.
fn paced(url: &str, protocol: Protocol) -> LoadSpec {
    let mut s = closed(url, 0, 1);
    s.requests = None;
    s.duration = Some(RUN);
    s.pace = Pace::Rate(RATE);
    s.max_connections = Some(ROOM as usize);
    s.protocol = protocol;
    s.streams = 1;
    s.timeout = Duration::from_secs(5);
    s.connect_timeout = Duration::from_secs(5);
    s
}

/// The schedule kept against a server that answers every request `STALL` after it read
/// it, over each protocol, its bytes sent as `delivery` says (HTTP/3's come in QUIC
/// packets, each sent whole).
fn schedules(delivery: Delivery) -> Vec<(Protocol, ScheduleStats)> {
    let h1 = TestServer::start_with(Behavior::StallEvery { n: 1, stall: STALL }, delivery).unwrap();
    let h2 = H2Server::start_with(H2Behavior::Slow(STALL), delivery, false).unwrap();
    let h3 = H3Server::start(H3Behavior::Slow(STALL)).unwrap();
    let ws = WsServer::start_with(WsBehavior::Slow(STALL), delivery, false).unwrap();
    let mut h3_spec = paced(&h3.url("/"), Protocol::Http3);
    h3_spec.target.tls.insecure = true;
    let mut ws_spec = paced(&ws.url("/echo"), Protocol::WebSocket);
    ws_spec.request.body = b"hello".to_vec();
    ws_spec.ws_text = true;
    let specs = [
        paced(&h1.url("/"), Protocol::Http1),
        paced(&h2.url("/"), Protocol::Http2),
        h3_spec,
        ws_spec,
    ];
    specs
        .iter()
        .map(|s| {
            let r = go(s);
            let sched = r.schedule.expect("rate mode has a schedule");
            (s.protocol, sched)
        })
        .collect()
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// `ROOM` requests go out on time; each later one waits for an answer to free a
/// connection, so they leave in batches of `ROOM` one `STALL` apart: the second batch
/// about 460 ms late, the third about 920 ms. Every late send waited for a connection
/// (none waited for the generator), and each protocol counts and measures that alike:
/// the same due, sent, late and late-for-a-connection counts, lag percentiles within
/// 50 ms of each other. Seen here: late 16 to 23 of 24 sent (HTTP/3's QUIC handshakes
/// make every connection opened for a request late), median lag 461-464 ms, largest
/// 922-943 ms. The servers' bytes come whole and one byte per write.
#[test]
fn the_same_stall_gives_the_same_schedule_over_every_protocol() {
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        same_schedule(delivery);
    }
}

fn same_schedule(delivery: Delivery) {
    let all = schedules(delivery);
    let due = (RUN.as_secs_f64() * RATE) as u64;
    // Batches leave at 0, STALL, 2 × STALL: as many as fit in the run.
    let batches = (RUN.as_millis() / STALL.as_millis()) as u64 + 1;
    for (p, s) in &all {
        let say = format!("{delivery:?} {p:?}: {s:?}");
        assert_eq!(s.due, due, "{say}");
        assert_eq!(s.sent, batches * ROOM, "{say}");
        // The first batch is on time but for connections opened as requests fell due,
        // whose handshakes (TCP, TLS and QUIC, the WebSocket upgrade) may take more than
        // a millisecond; every later send is late.
        let queued = (batches - 1) * ROOM;
        assert!(
            (queued..queued + ROOM).contains(&s.late),
            "late {}: {say}",
            s.late
        );
        assert_eq!(s.late_no_connection, s.late, "{say}");
        let second = (STALL - Duration::from_secs_f64(ROOM as f64 / RATE)).as_secs_f64() * 1e3;
        assert!(
            (ms(s.lag_p50_us) - second).abs() < 50.0,
            "median lag {} ms, {second} expected: {say}",
            ms(s.lag_p50_us)
        );
    }
    let (_, first) = &all[0];
    for (p, s) in &all[1..] {
        let say = format!("{delivery:?} {p:?} against HTTP/1.1: {s:?} / {first:?}");
        for (a, b) in [
            (s.lag_p50_us, first.lag_p50_us),
            (s.lag_p99_us, first.lag_p99_us),
            (
                s.max_lag.as_micros() as u64,
                first.max_lag.as_micros() as u64,
            ),
        ] {
            assert!((ms(a) - ms(b)).abs() < 50.0, "{say}");
        }
    }
}
