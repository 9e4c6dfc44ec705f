//! The connection state fed server bytes whole and one byte at a time: the same events
//! either way.

use super::*;
use crate::h3::frame::{put_head, put_varint};

const REQ: u64 = 0;

fn section(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut b = Vec::new();
    qpack::encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut b,
    );
    b
}

fn headers(out: &mut Vec<u8>, fields: &[(&str, &str)]) {
    let s = section(fields);
    put_head(out, frame::HEADERS, s.len());
    out.extend_from_slice(&s);
}

fn data(out: &mut Vec<u8>, body: &[u8]) {
    put_head(out, frame::DATA, body.len());
    out.extend_from_slice(body);
}

/// A connection with one request open on stream 0, fed `bytes` in parts of `step`, then
/// the stream's end when `fin`.
fn feed(bytes: &[u8], step: usize, fin: bool) -> (Connection, Result<(), ConnError>) {
    let mut c = Connection::new(2, Some(b"World"));
    let now = Instant::now();
    c.open(REQ, Begin::at(now, now));
    for part in bytes.chunks(step.max(1)) {
        if let Err(e) = c.request_data(REQ, part, false, now) {
            return (c, Err(e));
        }
    }
    let r = if fin { c.request_fin(REQ) } else { Ok(()) };
    (c, r)
}

/// [`feed`] whole and byte by byte, asserting both give the same events and result.
fn both(bytes: &[u8], fin: bool) -> (Connection, Result<(), ConnError>) {
    let (whole, r1) = feed(bytes, bytes.len(), fin);
    let (split, r2) = feed(bytes, 1, fin);
    assert_eq!(whole.events, split.events);
    assert_eq!(r1, r2);
    (whole, r1)
}

#[test]
fn an_answer_with_a_body_is_answered_with_its_status_and_length() {
    let mut b = Vec::new();
    headers(&mut b, &[(":status", "200"), ("content-length", "12")]);
    data(&mut b, b"Hello ");
    put_head(&mut b, 0x21, 3); // a reserved frame type, skipped
    b.extend_from_slice(b"xyz");
    data(&mut b, b"World!");
    let (c, r) = both(&b, true);
    assert_eq!(r, Ok(()));
    assert_eq!(c.events, vec![Event::Answered(0)]);
    let s = &c.stream(0).exchange;
    assert_eq!((s.status, s.body_len, s.search.matched), (200, 12, true));
    // Split at every byte in two: the same.
    for at in 0..b.len() {
        let mut c = Connection::new(1, None);
        let now = Instant::now();
        c.open(REQ, Begin::at(now, now));
        c.request_data(REQ, &b[..at], false, now).unwrap();
        c.request_data(REQ, &b[at..], false, now).unwrap();
        c.request_fin(REQ).unwrap();
        assert_eq!(c.events, vec![Event::Answered(0)], "split at {at}");
    }
}

#[test]
fn interim_answers_and_trailers_are_read_past() {
    let mut b = Vec::new();
    headers(&mut b, &[(":status", "103"), ("link", "</a>")]);
    headers(&mut b, &[(":status", "204")]);
    headers(&mut b, &[("x-trailer", "1")]);
    let (c, r) = both(&b, true);
    assert_eq!(r, Ok(()));
    assert_eq!(c.events, vec![Event::Answered(0)]);
    assert_eq!(c.stream(0).exchange.status, 204);
}

#[test]
fn an_answer_without_a_final_status_is_malformed() {
    // Only an interim answer, then the end.
    let mut b = Vec::new();
    headers(&mut b, &[(":status", "100")]);
    let (c, r) = both(&b, true);
    assert_eq!(r, Ok(()));
    assert_eq!(c.events, vec![Event::Failed(0, FailureKind::Malformed)]);
    // HEADERS without `:status`: the stream is stopped with H3_MESSAGE_ERROR.
    let mut b = Vec::new();
    headers(&mut b, &[("content-type", "text/plain")]);
    let (c, r) = both(&b, true);
    assert_eq!(r, Ok(()));
    assert_eq!(c.events, vec![Event::Failed(0, FailureKind::Malformed)]);
    assert_eq!(c.stops, vec![(REQ, frame::H3_MESSAGE_ERROR)]);
    // Nothing at all.
    let (c, _) = both(&[], true);
    assert_eq!(c.events, vec![Event::Failed(0, FailureKind::Malformed)]);
}

#[test]
fn a_body_that_contradicts_its_content_length_is_malformed() {
    let mut b = Vec::new();
    headers(&mut b, &[(":status", "200"), ("content-length", "5")]);
    data(&mut b, b"four");
    let (c, _) = both(&b, true);
    assert_eq!(c.events, vec![Event::Failed(0, FailureKind::Malformed)]);
}

#[test]
fn broken_framing_and_qpack_are_connection_errors() {
    let code = |b: &[u8], fin: bool| both(b, fin).1.map_err(|e| e.code);
    // DATA before HEADERS.
    let mut b = Vec::new();
    data(&mut b, b"x");
    assert_eq!(code(&b, false), Err(frame::H3_FRAME_UNEXPECTED));
    // A field section that needs the dynamic table.
    let mut b = Vec::new();
    put_head(&mut b, frame::HEADERS, 3);
    b.extend_from_slice(&[0x00, 0x00, 0x80]);
    assert_eq!(code(&b, false), Err(frame::QPACK_DECOMPRESSION_FAILED));
    // Garbage QPACK.
    let mut b = Vec::new();
    put_head(&mut b, frame::HEADERS, 2);
    b.extend_from_slice(&[0x00, 0x7f]);
    assert_eq!(code(&b, false), Err(frame::QPACK_DECOMPRESSION_FAILED));
    // SETTINGS and HTTP/2's PING on a request stream.
    for kind in [frame::SETTINGS, 0x6] {
        let mut b = Vec::new();
        put_head(&mut b, kind, 0);
        assert_eq!(code(&b, false), Err(frame::H3_FRAME_UNEXPECTED));
    }
    // A push promise.
    let mut b = Vec::new();
    put_head(&mut b, frame::PUSH_PROMISE, 0);
    assert_eq!(code(&b, false), Err(frame::H3_ID_ERROR));
    // The stream ends inside a frame.
    let mut b = Vec::new();
    headers(&mut b, &[(":status", "200")]);
    put_head(&mut b, frame::DATA, 10);
    b.extend_from_slice(b"abc");
    assert_eq!(code(&b, true), Err(frame::H3_FRAME_ERROR));
}

#[test]
fn an_oversized_field_section_fails_its_request_unread() {
    let mut b = Vec::new();
    put_head(&mut b, frame::HEADERS, MAX_FIELD_SECTION + 1);
    b.extend_from_slice(&[0; 100]);
    let (c, r) = both(&b, false);
    assert_eq!(r, Ok(()));
    assert_eq!(c.events, vec![Event::Failed(0, FailureKind::Malformed)]);
    assert!(c.stream(0).block.capacity() < 1024, "not read into memory");
}

#[test]
fn a_reset_fails_its_request_and_counts_its_code() {
    let mut c = Connection::new(2, None);
    let now = Instant::now();
    c.open(0, Begin::at(now, now));
    c.open(4, Begin::at(now, now));
    c.request_reset(0, frame::H3_REQUEST_CANCELLED);
    c.request_reset(4, frame::H3_REQUEST_REJECTED);
    assert_eq!(
        c.events,
        vec![
            Event::Reset(frame::H3_REQUEST_CANCELLED),
            Event::Failed(0, FailureKind::StreamReset),
            Event::Reset(frame::H3_REQUEST_REJECTED),
            Event::Failed(1, FailureKind::Refused),
        ]
    );
}

/// The server's control stream: type, SETTINGS, a reserved frame, then GOAWAY(4).
fn control(goaway: u64) -> Vec<u8> {
    let mut b = vec![0x00];
    let mut s = Vec::new();
    for (id, v) in [(0x1, 0), (0x6, 16384), (0x2a, 7)] {
        put_varint(&mut s, id);
        put_varint(&mut s, v);
    }
    put_head(&mut b, frame::SETTINGS, s.len());
    b.extend_from_slice(&s);
    put_head(&mut b, 0x21, 2);
    b.extend_from_slice(b"zz");
    let mut g = Vec::new();
    put_varint(&mut g, goaway);
    put_head(&mut b, frame::GOAWAY, g.len());
    b.extend_from_slice(&g);
    b
}

#[test]
fn goaway_leaves_the_requests_at_and_above_its_id_unprocessed() {
    let b = control(4);
    for step in [b.len(), 1] {
        let mut c = Connection::new(3, None);
        let now = Instant::now();
        for id in [0, 4, 8] {
            c.open(id, Begin::at(now, now));
        }
        for part in b.chunks(step) {
            c.uni_data(3, part).unwrap();
        }
        assert!(c.settled() && c.spent());
        assert_eq!(c.room(), 0);
        assert_eq!(
            c.events,
            vec![Event::Goaway, Event::Unprocessed(1), Event::Unprocessed(2)],
            "in parts of {step}"
        );
    }
}

#[test]
fn the_control_stream_is_held_to_the_rules() {
    let err = |b: &[u8]| {
        let mut c = Connection::new(1, None);
        c.uni_data(3, b).map_err(|e| e.code)
    };
    // Not SETTINGS first.
    let mut b = vec![0x00];
    put_head(&mut b, frame::GOAWAY, 1);
    b.push(0);
    assert_eq!(err(&b), Err(frame::H3_MISSING_SETTINGS));
    // SETTINGS twice.
    let mut b = vec![0x00];
    put_head(&mut b, frame::SETTINGS, 0);
    put_head(&mut b, frame::SETTINGS, 0);
    assert_eq!(err(&b), Err(frame::H3_FRAME_UNEXPECTED));
    // A GOAWAY id that is no request stream's, and one that rises.
    assert_eq!(err(&control(5)), Err(frame::H3_ID_ERROR));
    let mut b = control(8);
    put_head(&mut b, frame::GOAWAY, 1);
    b.push(12);
    assert_eq!(err(&b), Err(frame::H3_ID_ERROR));
    // An oversized SETTINGS.
    let mut b = vec![0x00];
    put_head(&mut b, frame::SETTINGS, 5000);
    assert_eq!(err(&b), Err(frame::H3_EXCESSIVE_LOAD));
    // A push stream.
    assert_eq!(err(&[0x01]), Err(frame::H3_ID_ERROR));
    // A second control stream, and the control stream's end.
    let mut c = Connection::new(1, None);
    c.uni_data(3, &[0x00]).unwrap();
    assert_eq!(
        c.uni_data(7, &[0x00]).map_err(|e| e.code),
        Err(frame::H3_STREAM_CREATION_ERROR)
    );
    assert_eq!(
        c.uni_fin(3).map_err(|e| e.code),
        Err(frame::H3_CLOSED_CRITICAL_STREAM)
    );
}

#[test]
fn qpack_streams_and_unknown_streams() {
    let mut c = Connection::new(1, None);
    // The encoder may only set the capacity to 0.
    c.uni_data(7, &[0x02, 0x20]).unwrap();
    assert_eq!(
        c.uni_data(7, &[0x3f, 0x01]).map_err(|e| e.code),
        Err(frame::QPACK_ENCODER_STREAM_ERROR)
    );
    // The decoder's bytes are dropped; an unknown type (here a two-byte reserved one) is
    // stopped and forgotten at its end.
    let mut c = Connection::new(1, None);
    c.uni_data(11, &[0x03, 0x80, 0x01]).unwrap();
    c.uni_data(15, &[0x40]).unwrap();
    c.uni_data(15, &[0x21, 1, 2, 3]).unwrap();
    assert_eq!(c.stops, vec![(15, frame::H3_STREAM_CREATION_ERROR)]);
    c.uni_fin(15).unwrap();
    // Too many streams at once.
    let mut c = Connection::new(1, None);
    for i in 0..MAX_UNI as u64 {
        c.uni_data(3 + 4 * i, &[0x21]).unwrap();
    }
    assert_eq!(
        c.uni_data(999, &[0x21]).map_err(|e| e.code),
        Err(frame::H3_EXCESSIVE_LOAD)
    );
}

#[test]
fn heads_are_sampled_as_curl_shows_http3() {
    let mut b = Vec::new();
    headers(&mut b, &[(":status", "200"), ("server", "test")]);
    let mut c = Connection::new(1, None);
    c.sample = 1;
    c.want_server = true;
    let now = Instant::now();
    c.open(REQ, Begin::at(now, now));
    c.request_data(REQ, &b, false, now).unwrap();
    c.request_fin(REQ).unwrap();
    assert_eq!(
        c.heads,
        vec![b"HTTP/3 200\r\nserver: test\r\n\r\n".to_vec()]
    );
    assert_eq!(c.server.as_deref(), Some("test"));
}
