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
        start: now,
        sent: now,
        first_byte: None,
        connect: Duration::ZERO,
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
