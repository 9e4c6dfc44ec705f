use super::*;

/// What a decoder makes of `input` fed in pieces of `step` bytes: data joined per
/// message, as `("msg", bytes)`, and the other items by name.
fn decode(
    input: &[u8],
    step: usize,
    limit: usize,
) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
    let mut d = Decoder::new(limit);
    let mut got = Vec::new();
    let mut data = Vec::new();
    for piece in input.chunks(step.max(1)) {
        let mut at = 0;
        loop {
            let (used, item) = d.next(&piece[at..])?;
            at += used;
            match item {
                Some(Item::Data(b)) => data.extend_from_slice(b),
                Some(Item::End { len }) => {
                    assert_eq!(len as usize, data.len(), "End counts the payload");
                    got.push(("msg".into(), std::mem::take(&mut data)));
                }
                Some(Item::Ping(c)) => got.push(("ping".into(), c.payload().to_vec())),
                Some(Item::Pong(c)) => got.push(("pong".into(), c.payload().to_vec())),
                Some(Item::Close(code)) => got.push(("close".into(), code.to_be_bytes().to_vec())),
                None if at == piece.len() => break,
                None => {}
            }
        }
    }
    Ok(got)
}

/// A server frame (unmasked).
fn frame(b0: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![b0];
    match payload.len() {
        n if n < 126 => f.push(n as u8),
        n if n <= 0xffff => {
            f.push(126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(payload);
    f
}

/// Both whole and one byte at a time.
fn both(input: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
    let whole = decode(input, input.len(), 1 << 20);
    let bytewise = decode(input, 1, 1 << 20);
    assert_eq!(whole, bytewise, "the same however the bytes are split");
    whole
}

#[test]
fn a_text_message_in_one_frame() {
    let got = both(&frame(0x81, b"hello")).unwrap();
    assert_eq!(got, vec![("msg".into(), b"hello".to_vec())]);
}

#[test]
fn every_length_form_decodes() {
    for n in [0usize, 1, 125, 126, 127, 65535, 65536, 70000] {
        let payload = vec![b'x'; n];
        let got = both(&frame(0x82, &payload)).unwrap();
        assert_eq!(got, vec![("msg".into(), payload)], "length {n}");
    }
}

/// Fragments are joined, and control frames between them are handled in place.
#[test]
fn a_fragmented_message_with_a_ping_between_its_frames() {
    let mut input = frame(0x01, "héllo ".as_bytes());
    input.extend(frame(0x89, b"are you there"));
    input.extend(frame(0x00, &[]));
    input.extend(frame(0x80, "wörld".as_bytes()));
    input.extend(frame(0x8A, b"beat"));
    input.extend(frame(0x88, &[0x03, 0xe8, b'b', b'y', b'e']));
    let got = both(&input).unwrap();
    assert_eq!(
        got,
        vec![
            ("ping".into(), b"are you there".to_vec()),
            ("msg".into(), "héllo wörld".as_bytes().to_vec()),
            ("pong".into(), b"beat".to_vec()),
            ("close".into(), 1000u16.to_be_bytes().to_vec()),
        ]
    );
}

#[test]
fn a_close_without_a_code_reads_as_1005() {
    assert_eq!(
        both(&frame(0x88, b"")).unwrap(),
        vec![("close".into(), 1005u16.to_be_bytes().to_vec())]
    );
}

/// A character cut at every possible place still checks, and a bad byte anywhere fails.
#[test]
fn utf8_is_checked_across_frames_and_reads() {
    let text = "a€𝄞ü".as_bytes();
    for cut in 0..=text.len() {
        let mut input = frame(0x01, &text[..cut]);
        input.extend(frame(0x80, &text[cut..]));
        assert_eq!(
            both(&input).unwrap(),
            vec![("msg".into(), text.to_vec())],
            "cut {cut}"
        );
    }
    // A binary message is not checked.
    assert!(both(&frame(0x82, &[0xff, 0xfe])).is_ok());
    assert_eq!(both(&frame(0x81, &[b'a', 0xff])), Err(ProtocolError::Utf8));
    // A character cut off at the message's end.
    assert_eq!(both(&frame(0x81, &[0xe2, 0x82])), Err(ProtocolError::Utf8));
    // An overlong encoding, a surrogate.
    assert_eq!(both(&frame(0x81, &[0xc0, 0xaf])), Err(ProtocolError::Utf8));
    assert_eq!(
        both(&frame(0x81, &[0xed, 0xa0, 0x80])),
        Err(ProtocolError::Utf8)
    );
}

#[test]
fn each_breach_of_the_framing_is_its_error() {
    let cases: Vec<(&str, Vec<u8>, ProtocolError)> = vec![
        (
            "masked",
            vec![0x81, 0x81, 1, 2, 3, 4, b'x'],
            ProtocolError::Masked,
        ),
        ("rsv1", frame(0xC1, b"x"), ProtocolError::Reserved),
        ("rsv3", frame(0x91, b"x"), ProtocolError::Reserved),
        ("opcode 3", frame(0x83, b"x"), ProtocolError::Opcode(3)),
        ("opcode 0xB", frame(0x8B, b""), ProtocolError::Opcode(0xB)),
        (
            "long ping",
            frame(0x89, &[0; 126]),
            ProtocolError::ControlSize,
        ),
        (
            "fragmented ping",
            frame(0x09, b""),
            ProtocolError::ControlFragmented,
        ),
        (
            "lone continuation",
            frame(0x80, b"x"),
            ProtocolError::Continuation,
        ),
        (
            "interleaved",
            [frame(0x01, b"a"), frame(0x81, b"b")].concat(),
            ProtocolError::Interleaved,
        ),
        (
            "close of one byte",
            frame(0x88, &[3]),
            ProtocolError::CloseCode,
        ),
        (
            "close code 1005",
            frame(0x88, &[0x03, 0xed]),
            ProtocolError::CloseCode,
        ),
        (
            "close code 999",
            frame(0x88, &[0x03, 0xe7]),
            ProtocolError::CloseCode,
        ),
        (
            "close reason not UTF-8",
            frame(0x88, &[0x03, 0xe8, 0xff]),
            ProtocolError::Utf8,
        ),
        (
            "top length bit",
            [vec![0x82, 127, 0x80], vec![0; 7]].concat(),
            ProtocolError::Length,
        ),
    ];
    for (name, input, want) in cases {
        assert_eq!(both(&input), Err(want), "{name}");
    }
}

/// A message over the limit fails at the frame head that passes it, before its payload
/// is read, whether in one frame or in many.
#[test]
fn a_message_over_the_limit_fails_at_its_head() {
    let head = [0x82, 127, 0, 0, 0, 0, 0x01, 0, 0, 1];
    assert_eq!(decode(&head, 1, 16 << 20), Err(ProtocolError::TooBig));
    let mut input = frame(0x02, &[0; 100]);
    input.extend(frame(0x80, &[0; 100]));
    assert_eq!(decode(&input, 1, 150), Err(ProtocolError::TooBig));
    assert!(decode(&input, 1, 200).is_ok());
}

/// Masking is its own inverse, and the frame is what RFC 6455 §5.7 shows for "Hello"
/// masked with 37 fa 21 3d.
#[test]
fn encode_masks_as_the_rfc_example() {
    let mut out = Vec::new();
    encode(&mut out, TEXT, b"Hello", [0x37, 0xfa, 0x21, 0x3d]);
    assert_eq!(
        out,
        [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    );
    for n in [0usize, 3, 8, 13, 126, 65536] {
        let payload: Vec<u8> = (0..n).map(|i| i as u8).collect();
        let mut out = Vec::new();
        encode(&mut out, BINARY, &payload, [1, 2, 3, 4]);
        let head = match n {
            0..=125 => 2,
            126..=65535 => 4,
            _ => 10,
        };
        assert_eq!(out.len(), head + 4 + n);
        let mut body = out[head + 4..].to_vec();
        apply_mask(&mut body, [1, 2, 3, 4]);
        assert_eq!(body, payload, "length {n}");
    }
}

#[test]
fn mask_keys_change_from_frame_to_frame() {
    let mut r = Rng::new(0);
    let keys: std::collections::HashSet<[u8; 4]> = (0..1000).map(|_| r.mask()).collect();
    assert!(keys.len() > 990, "{} distinct keys of 1000", keys.len());
}
