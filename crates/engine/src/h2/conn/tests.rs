use super::*;
use crate::h2::frame::{Head, PING, RST_STREAM, SETTINGS, WINDOW_UPDATE};
use crate::h2::frame::{ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS};
use crate::h2::request::prepare_one;
use shootout_model::{RequestSpec, Target};

/// `:status: 200` (HPACK static table index 8).
const S200: u8 = 0x88;

/// A frame as on the wire.
fn raw(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_be_bytes();
    let mut out = vec![len[1], len[2], len[3], kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut p = Vec::new();
    for (id, v) in pairs {
        p.extend_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&v.to_be_bytes());
    }
    raw(SETTINGS, 0, 0, &p)
}

/// A literal header field without indexing, with a new name (RFC 7541 §6.2.2).
fn lit(name: &str, value: &str) -> Vec<u8> {
    let mut out = vec![0x00, name.len() as u8];
    out.extend_from_slice(name.as_bytes());
    out.push(value.len() as u8);
    out.extend_from_slice(value.as_bytes());
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// A request with a body of `body` bytes (a POST), or a GET.
fn request(body: usize) -> Prepared {
    let target = Target::parse("http://127.0.0.1:8080/").unwrap();
    let spec = if body == 0 {
        RequestSpec::default()
    } else {
        RequestSpec {
            method: "POST".into(),
            body: vec![b'x'; body],
            ..Default::default()
        }
    };
    prepare_one(&target, &spec).unwrap()
}

/// What a connection did with the server's bytes: its events (each named stream freed
/// after the feed, as the worker does), the frames it wrote as (kind, flags, stream,
/// payload), and the connection error that ended it, if any.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    events: Vec<Event>,
    wrote: Vec<(u8, u8, u32, Vec<u8>)>,
    error: Option<ErrorCode>,
}

/// The frames in `out`, taken.
fn frames_of(out: &mut Vec<u8>) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut got = Vec::new();
    let mut rest = &out[..];
    while !rest.is_empty() {
        let h = Head::parse(rest[..9].try_into().unwrap());
        got.push((h.kind, h.flags, h.stream, rest[9..9 + h.len].to_vec()));
        rest = &rest[9 + h.len..];
    }
    out.clear();
    got
}

/// Feeds `parts` in turn.
fn feed(c: &mut Connection, req: &Prepared, parts: &[&[u8]]) -> Seen {
    let now = Instant::now();
    let mut seen = Seen::default();
    for p in parts {
        let r = c.feed(p, req, now);
        seen.wrote.extend(frames_of(&mut c.out));
        for e in std::mem::take(&mut c.events) {
            if let Event::Answered(s) | Event::Failed(s, _) | Event::Unprocessed(s) = e {
                c.free(s);
            }
            seen.events.push(e);
        }
        if let Err(ConnError(code)) = r {
            seen.error = Some(code);
            break;
        }
    }
    seen
}

/// A connection past the server's (empty) SETTINGS, with `streams` requests of `req`
/// open (ids 1, 3, …) and nothing left to write.
fn open(streams: usize, req: &Prepared) -> Connection {
    let mut c = Connection::new(4, None);
    c.start();
    c.out.clear();
    let seen = feed(&mut c, req, &[&settings(&[])]);
    assert_eq!(seen.events, [Event::Ready]);
    let now = Instant::now();
    for _ in 0..streams {
        c.open(req, Begin::at(now, now));
    }
    c.out.clear();
    c
}

/// Feeds `input` to connections made by `make`: whole, split in two at every byte, and
/// one byte per feed. Each must see the same; returns it, and the connection fed whole.
fn every_split(make: impl Fn() -> Connection, req: &Prepared, input: &[u8]) -> (Seen, Connection) {
    let mut c = make();
    let whole = feed(&mut c, req, &[input]);
    for at in 0..=input.len() {
        let (a, b) = input.split_at(at);
        assert_eq!(feed(&mut make(), req, &[a, b]), whole, "split at {at}");
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(feed(&mut make(), req, &bytes), whole, "byte by byte");
    (whole, c)
}

#[test]
fn settings_are_acknowledged_once_and_open_the_connection() {
    let req = request(0);
    // What start writes: the preface, our SETTINGS, the connection's window opened.
    let mut c = Connection::new(4, None);
    c.start();
    assert!(c.out.starts_with(frame::PREFACE));
    let mut ours = c.out[frame::PREFACE.len()..].to_vec();
    let ours = frames_of(&mut ours);
    assert_eq!(
        ours.iter().map(|f| (f.0, f.2)).collect::<Vec<_>>(),
        [(SETTINGS, 0), (WINDOW_UPDATE, 0)]
    );
    assert_eq!(c.room(), 0, "no stream before the server's SETTINGS");
    let input = cat(&[
        &settings(&[
            (frame::SETTINGS_MAX_CONCURRENT_STREAMS, 2),
            (frame::SETTINGS_INITIAL_WINDOW_SIZE, 1000),
        ]),
        &raw(SETTINGS, ACK, 0, &[]),
    ]);
    let make = || {
        let mut c = Connection::new(4, None);
        c.start();
        c.out.clear();
        c
    };
    let (seen, c) = every_split(make, &req, &input);
    assert_eq!(seen.events, [Event::Ready]);
    assert_eq!(seen.wrote, [(SETTINGS, ACK, 0, vec![])]);
    assert_eq!(seen.error, None);
    assert_eq!((c.room(), c.max_concurrent()), (2, Some(2)));
}

#[test]
fn an_answer_in_headers_and_data_is_counted_with_its_status_and_body() {
    let req = request(0);
    let input = cat(&[
        &raw(
            HEADERS,
            END_HEADERS,
            1,
            &cat(&[&[S200], &lit("content-length", "5")]),
        ),
        &raw(DATA, 0, 1, b"hel"),
        &raw(DATA, END_STREAM, 1, b"lo"),
    ]);
    let (seen, c) = every_split(|| open(1, &req), &req, &input);
    assert_eq!(seen.events, [Event::Answered(0)]);
    let ex = &c.stream(0).exchange;
    assert_eq!((ex.status, ex.body_len), (200, 5));
    assert_eq!(c.active(), 0, "its slot is freed");
    // A body its content-length contradicts fails the stream.
    let short = cat(&[
        &raw(
            HEADERS,
            END_HEADERS,
            1,
            &cat(&[&[S200], &lit("content-length", "9")]),
        ),
        &raw(DATA, END_STREAM, 1, b"hello"),
    ]);
    let (seen, _) = every_split(|| open(1, &req), &req, &short);
    assert_eq!(seen.events, [Event::Failed(0, FailureKind::Malformed)]);
}

#[test]
fn a_header_block_continued_is_decoded_whole() {
    let req = request(0);
    let input = cat(&[
        &raw(HEADERS, END_STREAM, 1, &[S200]),
        &raw(CONTINUATION, 0, 1, &lit("x-a", "1")),
        &raw(CONTINUATION, END_HEADERS, 1, &lit("x-b", "2")),
    ]);
    let (seen, c) = every_split(|| open(1, &req), &req, &input);
    assert_eq!(seen.events, [Event::Answered(0)]);
    assert_eq!(c.stream(0).exchange.status, 200);
    // Another frame inside the block is a connection error.
    let broken = cat(&[
        &raw(HEADERS, END_STREAM, 1, &[S200]),
        &raw(PING, 0, 0, b"12345678"),
    ]);
    let (seen, _) = every_split(|| open(1, &req), &req, &broken);
    assert_eq!(seen.error, Some(frame::PROTOCOL_ERROR));
    assert_eq!(
        seen.wrote.last().map(|f| f.0),
        Some(GOAWAY),
        "GOAWAY is written last"
    );
}

#[test]
fn a_request_body_waits_for_the_servers_window_update() {
    let req = request(100);
    let make = || {
        let mut c = Connection::new(4, None);
        c.start();
        c.out.clear();
        let seen = feed(
            &mut c,
            &req,
            &[&settings(&[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 10)])],
        );
        assert_eq!(seen.events, [Event::Ready]);
        let now = Instant::now();
        c.open(&req, Begin::at(now, now));
        let wrote = frames_of(&mut c.out);
        let data: Vec<_> = wrote.iter().filter(|f| f.0 == DATA).collect();
        assert_eq!(data.len(), 1);
        assert_eq!(
            (data[0].1, data[0].3.len()),
            (0, 10),
            "10 bytes: the window"
        );
        c
    };
    let (seen, _) = every_split(make, &req, &raw(WINDOW_UPDATE, 0, 1, &90u32.to_be_bytes()));
    assert_eq!(seen.wrote, [(DATA, END_STREAM, 1, vec![b'x'; 90])]);
    assert!(seen.events.is_empty());
}

#[test]
fn our_windows_are_reopened_by_window_update_at_half() {
    let req = request(0);
    let mut c = open(1, &req);
    let now = Instant::now();
    let chunk = raw(DATA, 0, 1, &[0; frame::DEFAULT_MAX_FRAME]);
    let head = raw(HEADERS, END_HEADERS, 1, &[S200]);
    c.feed(&head, &req, now).unwrap();
    // Below half of the window once more than half of it came: 2^29 bytes and a frame.
    let frames = (RECV_WINDOW - RECV_WINDOW / 2) as usize / frame::DEFAULT_MAX_FRAME + 1;
    for _ in 1..frames {
        c.feed(&chunk, &req, now).unwrap();
    }
    assert!(c.out.is_empty(), "not before");
    c.feed(&chunk, &req, now).unwrap();
    let updates = frames_of(&mut c.out);
    let inc = ((frames * frame::DEFAULT_MAX_FRAME) as u32)
        .to_be_bytes()
        .to_vec();
    assert_eq!(
        updates,
        [
            (WINDOW_UPDATE, 0, 0, inc.clone()),
            (WINDOW_UPDATE, 0, 1, inc)
        ],
        "the connection's window, then the stream's"
    );
    assert!(c.events.is_empty(), "the stream is still open");
}

#[test]
fn rst_stream_fails_its_stream_and_is_counted_with_its_code() {
    let req = request(0);
    let input = cat(&[
        &raw(RST_STREAM, 0, 1, &frame::REFUSED_STREAM.0.to_be_bytes()),
        &raw(RST_STREAM, 0, 3, &frame::CANCEL.0.to_be_bytes()),
    ]);
    let (seen, c) = every_split(|| open(2, &req), &req, &input);
    assert_eq!(
        seen.events,
        [
            Event::Reset(frame::REFUSED_STREAM),
            Event::Unprocessed(0),
            Event::Reset(frame::CANCEL),
            Event::Failed(1, FailureKind::StreamReset),
        ]
    );
    assert_eq!(seen.error, None);
    assert_eq!(c.active(), 0);
}

#[test]
fn goaway_leaves_the_streams_above_its_last_id_to_be_sent_again() {
    let req = request(0);
    let mut p = 3u32.to_be_bytes().to_vec();
    p.extend_from_slice(&frame::NO_ERROR.0.to_be_bytes());
    let input = cat(&[
        &raw(GOAWAY, 0, 0, &p),
        &raw(HEADERS, END_HEADERS | END_STREAM, 3, &[S200]),
        &raw(HEADERS, END_HEADERS | END_STREAM, 1, &[S200]),
    ]);
    let (seen, c) = every_split(|| open(3, &req), &req, &input);
    assert_eq!(
        seen.events,
        [
            Event::Goaway,
            Event::Unprocessed(2),
            Event::Answered(1),
            Event::Answered(0)
        ]
    );
    assert!(c.spent() && c.room() == 0, "no new stream after GOAWAY");
    assert_eq!(c.goaway_code(), Some(frame::NO_ERROR));
}

#[test]
fn a_ping_is_answered_and_an_acknowledgement_is_not() {
    let req = request(0);
    let input = cat(&[
        &raw(PING, 0, 0, b"12345678"),
        &raw(PING, ACK, 0, b"87654321"),
    ]);
    let (seen, _) = every_split(|| open(0, &req), &req, &input);
    assert_eq!(seen.wrote, [(PING, ACK, 0, b"12345678".to_vec())]);
    assert!(seen.events.is_empty());
}

#[test]
fn a_header_block_that_does_not_decode_ends_the_connection_with_compression_error() {
    let req = request(0);
    // Index 0 is no entry of any table (RFC 7541 §6.1).
    let input = raw(HEADERS, END_HEADERS | END_STREAM, 1, &[0x80]);
    let (seen, _) = every_split(|| open(1, &req), &req, &input);
    assert_eq!(seen.error, Some(frame::COMPRESSION_ERROR));
    let mut goaway = 0u32.to_be_bytes().to_vec();
    goaway.extend_from_slice(&frame::COMPRESSION_ERROR.0.to_be_bytes());
    assert_eq!(seen.wrote, [(GOAWAY, 0, 0, goaway)]);
}

#[test]
fn a_frame_that_breaks_its_kinds_layout_ends_the_connection_with_its_code() {
    let req = request(0);
    for (input, code) in [
        (raw(PING, 0, 0, b"1234567"), frame::FRAME_SIZE_ERROR),
        (raw(RST_STREAM, 0, 0, &[0; 4]), frame::PROTOCOL_ERROR),
        (raw(DATA, frame::PADDED, 1, &[9, 0]), frame::PROTOCOL_ERROR),
        (
            settings(&[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31)]),
            frame::FLOW_CONTROL_ERROR,
        ),
    ] {
        let (seen, _) = every_split(|| open(1, &req), &req, &input);
        assert_eq!(seen.error, Some(code), "{input:?}");
    }
}

/// Journeys' users sharing a connection: two streams, each keeping its own answer's head
/// and body prefix (interleaved, whichever split) and sending its own body, staged for it
/// alone; a HEAD stream's answer has no body whatever its content-length.
#[test]
fn streams_keep_their_own_answers_and_send_their_own_bodies() {
    let mut req = request(0);
    req.own_bodies = true;
    let make = || {
        let mut c = Connection::new(4, None);
        c.start();
        c.out.clear();
        let seen = feed(&mut c, &req, &[&settings(&[])]);
        assert_eq!(seen.events, [Event::Ready]);
        let now = Instant::now();
        for (body, keep) in [(&b"first"[..], 3), (&b"second body"[..], 100)] {
            c.staged.clear();
            c.staged.extend_from_slice(body);
            let slot = c.open(&req, Begin::at(now, now));
            c.keep(slot, keep, None);
        }
        c
    };
    let mut c = make();
    let sent: Vec<(u8, u32, Vec<u8>)> = frames_of(&mut c.out)
        .into_iter()
        .filter(|f| f.0 == DATA)
        .map(|f| (f.0, f.2, f.3))
        .collect();
    assert_eq!(
        sent,
        [
            (DATA, 1, b"first".to_vec()),
            (DATA, 3, b"second body".to_vec())
        ]
    );
    let input = cat(&[
        &raw(
            HEADERS,
            END_HEADERS,
            3,
            &cat(&[&[S200], &lit("x-who", "three")]),
        ),
        &raw(
            HEADERS,
            END_HEADERS,
            1,
            &cat(&[&[S200], &lit("x-who", "one")]),
        ),
        &raw(DATA, 0, 1, b"abcdef"),
        &raw(DATA, END_STREAM, 3, b"the third"),
        &raw(DATA, END_STREAM, 1, b"ghi"),
    ]);
    let (seen, mut c) = every_split(
        || {
            let mut c = make();
            c.out.clear();
            c
        },
        &req,
        &input,
    );
    assert_eq!(seen.events, [Event::Answered(1), Event::Answered(0)]);
    let who = |c: &mut Connection, slot| {
        let k = c.kept(slot).0.expect("kept");
        let field = k
            .head
            .iter()
            .find(|(n, _)| *n == b"x-who")
            .map(|(_, v)| v.to_vec());
        (k.status, field, k.body.clone())
    };
    assert_eq!(
        who(&mut c, 0),
        (200, Some(b"one".to_vec()), b"abc".to_vec())
    );
    assert_eq!(
        who(&mut c, 1),
        (200, Some(b"three".to_vec()), b"the third".to_vec())
    );
    // A HEAD stream: its content-length announces a body that never comes.
    let mut head = req.clone();
    head.head_request = true;
    let mut c = Connection::new(4, None);
    c.start();
    c.out.clear();
    feed(&mut c, &head, &[&settings(&[])]);
    let now = Instant::now();
    c.open(&head, Begin::at(now, now));
    let seen = feed(
        &mut c,
        &head,
        &[&raw(
            HEADERS,
            END_HEADERS | END_STREAM,
            1,
            &cat(&[&[S200], &lit("content-length", "9")]),
        )],
    );
    assert_eq!(seen.events, [Event::Answered(0)]);
}
