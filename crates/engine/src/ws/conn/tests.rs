use super::*;
use crate::ws::frame::{apply_mask, BINARY, CLOSE, PONG, TEXT};
use shootout_model::Target;

/// A connection past its handshake's request, and the answer head that opens it.
fn started(rng: &mut Rng) -> (Connection, Vec<u8>) {
    let t = Target::parse("ws://127.0.0.1:9/echo").unwrap();
    let mut c = Connection::new(Some(b"ll"));
    c.start(&Request::new(&t, &[]), rng);
    let req = String::from_utf8(c.out.clone()).unwrap();
    let key = req
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap();
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        handshake::accept(key)
    );
    c.out.clear();
    (c, head.into_bytes())
}

fn msg(text: &str) -> Message {
    Message {
        opcode: TEXT,
        payload: text.as_bytes().to_vec(),
    }
}

fn slot(now: Instant) -> Slot {
    Slot {
        clock: Clock::new(now, now, std::time::Duration::ZERO),
        drawn: None,
    }
}

/// Feeds `input` whole or one byte at a time.
fn feed(
    c: &mut Connection,
    input: &[u8],
    m: &Message,
    rng: &mut Rng,
    bytewise: bool,
) -> Result<(), Failure> {
    let now = Instant::now();
    if bytewise {
        for b in input {
            c.feed(std::slice::from_ref(b), sent(m), rng, now)?;
        }
        Ok(())
    } else {
        c.feed(input, sent(m), rng, now)
    }
}

/// The one message `m`, no list.
fn sent(m: &Message) -> Sent<'_> {
    Sent {
        message: m,
        list: None,
    }
}

/// The server's frames after the 101, in the same read: a ping, an echo in two
/// fragments, a pushed message while nothing waits, and a close.
#[test]
fn handshake_echo_ping_and_close_whole_and_bytewise() {
    for bytewise in [false, true] {
        let mut rng = Rng::new(7);
        let (mut c, mut input) = started(&mut rng);
        let m = msg("hello");
        c.send(m.opcode, &m.payload, &mut rng, slot(Instant::now()));
        c.send(m.opcode, &m.payload, &mut rng, slot(Instant::now()));
        c.out.clear();
        input.extend_from_slice(&[0x89, 0x02, b'h', b'i']);
        input.extend_from_slice(&[0x01, 0x02, b'h', b'e', 0x80, 0x03, b'l', b'l', b'o']);
        input.extend_from_slice(&[0x81, 0x05, b'h', b'e', b'y', b'y', b'o']);
        input.extend_from_slice(&[0x81, 0x04, b'p', b'u', b's', b'h']);
        input.extend_from_slice(&[0x88, 0x02, 0x03, 0xe9]);
        feed(&mut c, &input, &m, &mut rng, bytewise).unwrap();
        let kinds: Vec<String> = c
            .events
            .iter()
            .map(|e| match e {
                Event::Open => "open".to_string(),
                Event::Replied {
                    len,
                    matched,
                    echoed,
                    ..
                } => format!("reply {len} {matched} {echoed}"),
                Event::Close(code) => format!("close {code}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "open",
                "reply 5 true true",
                "reply 5 false false",
                "close 1001"
            ],
            "bytewise {bytewise}"
        );
        assert!(c.queue.is_empty());
        assert_eq!(c.phase, Phase::Closed);
        // Out: a pong "hi" and a close 1001, masked.
        let pong = &c.out[..8];
        assert_eq!(pong[0], 0x80 | PONG);
        assert_eq!(pong[1], 0x82);
        let mut p = pong[6..8].to_vec();
        apply_mask(&mut p, [pong[2], pong[3], pong[4], pong[5]]);
        assert_eq!(p, b"hi");
        let close = &c.out[8..];
        assert_eq!(close[..2], [0x80 | CLOSE, 0x82]);
        let mut code = close[6..8].to_vec();
        apply_mask(&mut code, [close[2], close[3], close[4], close[5]]);
        assert_eq!(code, [0x03, 0xe9]);
    }
}

#[test]
fn a_sent_message_is_one_masked_frame_with_a_key_of_its_own() {
    let mut rng = Rng::new(1);
    let (mut c, _) = started(&mut rng);
    let m = Message {
        opcode: BINARY,
        payload: vec![0u8; 16],
    };
    c.send(m.opcode, &m.payload, &mut rng, slot(Instant::now()));
    c.send(m.opcode, &m.payload, &mut rng, slot(Instant::now()));
    assert_eq!(c.out.len(), 2 * (2 + 4 + 16));
    let (a, b) = (&c.out[..22], &c.out[22..]);
    assert_eq!(a[..2], [0x82, 0x90]);
    assert_ne!(a[2..6], b[2..6], "a fresh key per frame");
    // Zeros masked are the key repeated.
    assert_eq!(a[6..10], a[2..6]);
}

#[test]
fn a_refusal_is_its_status_and_a_bad_frame_its_error() {
    let mut rng = Rng::new(3);
    let m = msg("x");
    for bytewise in [false, true] {
        let (mut c, _) = started(&mut rng);
        let refused = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            feed(&mut c, refused, &m, &mut rng, bytewise),
            Err(Failure::Refused(403))
        );
        let (mut c, mut input) = started(&mut rng);
        input.extend_from_slice(&[0x81, 0x81, 0, 0, 0, 0, b'x']);
        assert_eq!(
            feed(&mut c, &input, &m, &mut rng, bytewise),
            Err(Failure::Protocol(ProtocolError::Masked))
        );
    }
}

/// Messages drawn from a list: each reply is checked against the message its slot drew
/// (`{seq}` and `{rand}` values and all), in two fragments, whole and byte by byte; a
/// reply with another message's values, or one byte short, is no echo.
#[test]
fn replies_echo_the_message_each_slot_drew_from_the_list() {
    use crate::template::{fill, Gen};
    let list = [
        Template::parse(b"id={seq} r={rand:1-1000000}").unwrap(),
        Template::parse(b"plain").unwrap(),
    ];
    for bytewise in [false, true] {
        let mut rng = Rng::new(11);
        let (mut c, mut input) = started(&mut rng);
        let mut gen = Gen::new(5, false, list.len(), 0, 1);
        let mut bodies = Vec::new();
        for _ in 0..4 {
            let kind = gen.pick();
            let drawn = Drawn {
                kind: kind as u32,
                gen,
            };
            let mut body = Vec::new();
            fill(&list[kind], &mut gen, &mut body);
            let s = Slot {
                drawn: Some(drawn),
                ..slot(Instant::now())
            };
            c.send(TEXT, &body, &mut rng, s);
            bodies.push(body);
        }
        c.out.clear();
        // Replies: the first echoed in two fragments, the second right, the third the
        // first's bytes again (other values), the fourth one byte short.
        let (a, b) = bodies[0].split_at(4);
        input.extend_from_slice(&[0x01, a.len() as u8]);
        input.extend_from_slice(a);
        input.extend_from_slice(&[0x80, b.len() as u8]);
        input.extend_from_slice(b);
        for reply in [&bodies[1][..], &bodies[0][..], &bodies[3][..4]] {
            input.extend_from_slice(&[0x81, reply.len() as u8]);
            input.extend_from_slice(reply);
        }
        let m = msg("unused");
        let sent = Sent {
            message: &m,
            list: Some(&list),
        };
        let now = Instant::now();
        if bytewise {
            for byte in &input {
                c.feed(std::slice::from_ref(byte), sent, &mut rng, now)
                    .unwrap();
            }
        } else {
            c.feed(&input, sent, &mut rng, now).unwrap();
        }
        let echoed: Vec<bool> = c
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Replied { echoed, .. } => Some(*echoed),
                _ => None,
            })
            .collect();
        assert_eq!(echoed, [true, true, false, false], "bytewise {bytewise}");
        assert_ne!(bodies[0], bodies[2], "each message draws new values");
    }
}

/// A ping of `payload`, as a server sends it (unmasked).
fn ping_frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x80 | frame::PING, payload.len() as u8];
    f.extend_from_slice(payload);
    f
}

/// The payload of the pong at the start of `out` (masked: a key, then the payload).
fn pong_payload(out: &[u8]) -> Vec<u8> {
    assert_eq!(out[0], 0x80 | PONG);
    let len = usize::from(out[1] & 0x7f);
    let mut p = out[6..6 + len].to_vec();
    apply_mask(&mut p, [out[2], out[3], out[4], out[5]]);
    p
}

/// A server that pings and reads nothing: while no byte of the last pong is written, a
/// new ping's pong takes its place (only the latest ping is answered, RFC 6455 §5.5.3),
/// so `out` holds one pong however many pings came; each one replaced is counted.
#[test]
fn pings_never_written_leave_one_pong_the_latest() {
    let mut rng = Rng::new(5);
    let (mut c, head) = started(&mut rng);
    let m = msg("x");
    feed(&mut c, &head, &m, &mut rng, false).unwrap();
    for i in 0..100_000u32 {
        feed(
            &mut c,
            &ping_frame(&i.to_be_bytes()),
            &m,
            &mut rng,
            i % 2 == 0,
        )
        .unwrap();
    }
    assert_eq!(c.unanswered, 99_999);
    assert_eq!(c.out.len(), 2 + 4 + 4, "one pong");
    assert_eq!(pong_payload(&c.out), 99_999u32.to_be_bytes());
}

/// A pong begun (a byte of it written) stays; the next ping's pong goes after it. Past
/// [`MAX_PONGS`] pongs waiting, pings are left unanswered and counted; once the transport
/// has emptied `out`, pongs go again.
#[test]
fn pongs_begun_stay_and_at_most_max_pongs_wait() {
    let mut rng = Rng::new(6);
    let (mut c, head) = started(&mut rng);
    let m = msg("x");
    feed(&mut c, &head, &m, &mut rng, false).unwrap();
    for i in 0..(MAX_PONGS as u32 + 10) {
        // Every pong so far has a byte written: none may be replaced.
        c.written = c.out.len().saturating_sub(1);
        feed(&mut c, &ping_frame(&i.to_be_bytes()), &m, &mut rng, false).unwrap();
    }
    assert_eq!(c.out.len(), MAX_PONGS * 10);
    assert_eq!(c.unanswered, 10);
    assert_eq!(pong_payload(&c.out), 0u32.to_be_bytes());
    // The transport wrote everything and emptied `out`.
    c.out.clear();
    c.written = 0;
    feed(&mut c, &ping_frame(b"next"), &m, &mut rng, false).unwrap();
    assert_eq!(pong_payload(&c.out), b"next");
    assert_eq!(c.unanswered, 10);
}

/// A message queued after a pong ends its replacing: the next pong goes after the
/// message, which is never cut.
#[test]
fn a_pong_behind_a_message_is_not_replaced_across_it() {
    let mut rng = Rng::new(8);
    let (mut c, head) = started(&mut rng);
    let m = msg("hello");
    feed(&mut c, &head, &m, &mut rng, false).unwrap();
    feed(&mut c, &ping_frame(b"a"), &m, &mut rng, false).unwrap();
    c.send(m.opcode, &m.payload, &mut rng, slot(Instant::now()));
    feed(&mut c, &ping_frame(b"b"), &m, &mut rng, false).unwrap();
    feed(&mut c, &ping_frame(b"c"), &m, &mut rng, false).unwrap();
    assert_eq!(c.unanswered, 1, "b's pong replaced by c's");
    assert_eq!(pong_payload(&c.out), b"a");
    assert_eq!(c.out.len(), 7 + (6 + 5) + 7);
    assert_eq!(pong_payload(&c.out[18..]), b"c");
}

/// Hold mode: only a pong carrying our ping's payload answers it; an empty one or one
/// of another payload is ignored.
#[test]
fn a_held_ping_is_answered_only_by_its_own_pong() {
    let mut rng = Rng::new(9);
    let (mut c, head) = started(&mut rng);
    c.hold = true;
    let m = msg("x");
    feed(&mut c, &head, &m, &mut rng, false).unwrap();
    c.events.clear();
    c.ping(&mut rng, slot(Instant::now()));
    // Our ping's payload, unmasked.
    let ours = {
        let mut p = c.out[6..14].to_vec();
        apply_mask(&mut p, [c.out[2], c.out[3], c.out[4], c.out[5]]);
        p
    };
    let pong = |p: &[u8]| {
        let mut f = vec![0x80 | PONG, p.len() as u8];
        f.extend_from_slice(p);
        f
    };
    let mut other = ours.clone();
    other[0] ^= 0xff;
    for bytewise in [false, true] {
        feed(&mut c, &pong(b""), &m, &mut rng, bytewise).unwrap();
        feed(&mut c, &pong(&other), &m, &mut rng, bytewise).unwrap();
    }
    assert!(c.events.is_empty(), "{:?}", c.events);
    assert_eq!(c.queue.len(), 1);
    feed(&mut c, &pong(&ours), &m, &mut rng, true).unwrap();
    assert!(matches!(c.events[..], [Event::Replied { len: 0, .. }]));
    assert!(c.queue.is_empty());
}
