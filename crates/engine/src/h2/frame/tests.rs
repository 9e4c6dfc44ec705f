use super::*;

fn head_of(kind: u8, flags: u8, stream: u32, len: usize) -> Head {
    Head {
        len,
        kind,
        flags,
        stream,
    }
}

/// Decodes a frame of `kind` with these flags on `stream`.
fn dec(kind: u8, flags: u8, stream: u32, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    decode(&head_of(kind, flags, stream, p.len()), p)
}

#[test]
fn a_flag_bit_is_read_by_the_kind_it_belongs_to() {
    // 0x1 is END_STREAM on DATA and ACK on PING: neither reads as the other.
    let data = head_of(DATA, 0x1, 1, 0);
    assert!(data.end_stream() && !data.ack());
    let ping = head_of(PING, 0x1, 0, 8);
    assert!(ping.ack() && !ping.end_stream());
    assert!(!head_of(DATA, END_HEADERS, 1, 0).end_headers());
    assert!(head_of(CONTINUATION, END_HEADERS, 1, 0).end_headers());
    assert_eq!(Kind::of(0x2a), Kind::Unknown(0x2a));
    assert_eq!(Kind::of(GOAWAY), Kind::Goaway);
    // PADDED on a PING is no pad length: its payload is read whole.
    assert_eq!(
        dec(PING, PADDED | ACK, 0, b"12345678"),
        Ok(Frame::Ping {
            ack: true,
            payload: b"12345678"
        })
    );
}

#[test]
fn flags_are_written_by_the_kind_they_belong_to() {
    assert_eq!(Flags::data(true).bits(), END_STREAM);
    assert_eq!(Flags::headers(true, true).bits(), END_STREAM | END_HEADERS);
    assert_eq!(Flags::headers(false, true).bits(), END_HEADERS);
    assert_eq!(Flags::continuation(false), Flags::NONE);
    assert_eq!(Flags::ACK.bits(), ACK);
    for b in 0..=255u8 {
        assert_eq!(Kind::of(b).byte(), b);
    }
}

#[test]
fn error_codes_have_their_names() {
    assert_eq!(COMPRESSION_ERROR.to_string(), "COMPRESSION_ERROR");
    assert_eq!(ErrorCode(0x2a).to_string(), "0x2a");
    for e in [
        FrameError::StreamId,
        FrameError::Length,
        FrameError::Padding,
        FrameError::Setting,
        FrameError::Window,
    ] {
        let want = match e {
            FrameError::Length => FRAME_SIZE_ERROR,
            FrameError::Window => FLOW_CONTROL_ERROR,
            _ => PROTOCOL_ERROR,
        };
        assert_eq!(e.code(), want, "{e:?}");
    }
}

#[test]
fn data_loses_its_padding_and_keeps_its_length_for_flow_control() {
    assert_eq!(
        dec(DATA, END_STREAM, 1, b"hi"),
        Ok(Frame::Data {
            stream: 1,
            end_stream: true,
            data: b"hi",
            flow: 2
        })
    );
    assert_eq!(
        dec(DATA, PADDED, 3, &[1, b'x', 0]),
        Ok(Frame::Data {
            stream: 3,
            end_stream: false,
            data: b"x",
            flow: 3
        })
    );
    assert_eq!(
        dec(DATA, PADDED, 1, &[3, b'x', 0]),
        Err(FrameError::Padding),
        "padding longer than what remains"
    );
    assert_eq!(
        dec(DATA, PADDED, 1, &[1, 0]),
        Ok(Frame::Data {
            stream: 1,
            end_stream: false,
            data: b"",
            flow: 2
        }),
        "padding as long as what follows the pad length leaves an empty body"
    );
    assert_eq!(
        dec(DATA, PADDED, 1, &[]),
        Err(FrameError::Length),
        "no pad length"
    );
    assert_eq!(dec(DATA, 0, 0, b"hi"), Err(FrameError::StreamId));
    // PRIORITY's flag means nothing on DATA.
    assert!(matches!(
        dec(DATA, PRIORITY_FLAG, 1, b"abc"),
        Ok(Frame::Data { data: b"abc", .. })
    ));
}

#[test]
fn headers_lose_padding_and_priority() {
    let flags = PADDED | PRIORITY_FLAG | END_HEADERS;
    assert_eq!(
        dec(HEADERS, flags, 1, &[2, 0, 0, 0, 0, 9, b'a', 0, 0]),
        Ok(Frame::Headers {
            stream: 1,
            end_stream: false,
            end_headers: true,
            fragment: b"a"
        })
    );
    assert_eq!(
        dec(HEADERS, flags, 1, &[9, 0, 0, 0, 0, 9, b'a']),
        Err(FrameError::Padding),
        "pad too long"
    );
    assert_eq!(
        dec(HEADERS, PRIORITY_FLAG, 1, &[0, 0, 0, 0]),
        Err(FrameError::Length),
        "no room for the priority fields"
    );
    assert_eq!(
        dec(HEADERS, END_STREAM, 1, b"\x88"),
        Ok(Frame::Headers {
            stream: 1,
            end_stream: true,
            end_headers: false,
            fragment: b"\x88"
        })
    );
    assert_eq!(
        dec(HEADERS, END_HEADERS, 0, b"\x88"),
        Err(FrameError::StreamId)
    );
}

#[test]
fn continuation_carries_its_fragment_whole() {
    assert_eq!(
        dec(CONTINUATION, END_HEADERS | PADDED, 5, &[3, 1, 2]),
        Ok(Frame::Continuation {
            stream: 5,
            end_headers: true,
            fragment: &[3, 1, 2]
        }),
        "CONTINUATION has no padding"
    );
}

#[test]
fn control_frames_name_their_faults() {
    assert_eq!(
        dec(RST_STREAM, 0, 3, &[0, 0, 0, 7]),
        Ok(Frame::RstStream {
            stream: 3,
            code: REFUSED_STREAM
        })
    );
    assert_eq!(dec(RST_STREAM, 0, 0, &[0; 4]), Err(FrameError::StreamId));
    assert_eq!(dec(RST_STREAM, 0, 3, &[0; 5]), Err(FrameError::Length));
    assert_eq!(dec(PING, ACK, 0, b"1234567"), Err(FrameError::Length));
    assert_eq!(dec(PING, 0, 1, b"12345678"), Err(FrameError::StreamId));
    assert_eq!(
        dec(GOAWAY, 0, 0, &[0x80, 0, 0, 5, 0, 0, 0, 0xb, 0x2a]),
        Ok(Frame::Goaway {
            last: 5,
            code: ENHANCE_YOUR_CALM
        }),
        "the reserved bit is cleared and debug data ignored"
    );
    assert_eq!(dec(GOAWAY, 0, 0, &[0; 7]), Err(FrameError::Length));
    assert_eq!(dec(GOAWAY, 0, 1, &[0; 8]), Err(FrameError::StreamId));
    assert_eq!(
        dec(WINDOW_UPDATE, 0, 0, &[0xff, 0xff, 0xff, 0xff]),
        Ok(Frame::WindowUpdate {
            stream: 0,
            increment: 0x7fff_ffff
        })
    );
    assert_eq!(
        dec(WINDOW_UPDATE, 0, 7, &[0; 4]),
        Ok(Frame::WindowUpdate {
            stream: 7,
            increment: 0
        }),
        "a zero increment is the receiver's to judge"
    );
    assert_eq!(dec(WINDOW_UPDATE, 0, 1, &[0; 3]), Err(FrameError::Length));
    assert_eq!(
        dec(PRIORITY, 0, 1, &[0; 4]),
        Ok(Frame::Priority {
            stream: 1,
            well_formed: false
        })
    );
    assert_eq!(
        dec(PRIORITY, 0, 1, &[0; 5]),
        Ok(Frame::Priority {
            stream: 1,
            well_formed: true
        })
    );
    assert_eq!(dec(PRIORITY, 0, 0, &[0; 5]), Err(FrameError::StreamId));
    assert_eq!(dec(PUSH_PROMISE, 0, 1, &[0; 4]), Ok(Frame::PushPromise));
    assert_eq!(dec(0x2a, 0xff, 9, b"anything"), Ok(Frame::Unknown));
}

#[test]
fn settings_are_read_entry_by_entry_each_checked() {
    let mut bytes = Vec::new();
    settings(
        &mut bytes,
        &[
            (SETTINGS_MAX_CONCURRENT_STREAMS, 100),
            (SETTINGS_ENABLE_PUSH, 0),
            (0x2a, 7),
            (SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31),
            (SETTINGS_MAX_FRAME_SIZE, 16_383),
        ],
    );
    let Ok(Frame::Settings(s)) = dec(SETTINGS, 0, 0, &bytes[9..]) else {
        panic!("not settings");
    };
    let got: Vec<_> = s.entries().collect();
    assert_eq!(
        got,
        [
            Ok(Setting::MaxConcurrentStreams(100)),
            Ok(Setting::EnablePush(false)),
            Ok(Setting::Unknown(0x2a)),
            Err(FrameError::Window),
            Err(FrameError::Setting),
        ]
    );
    let entry = |id: u16, v: u32| {
        let mut p = id.to_be_bytes().to_vec();
        p.extend_from_slice(&v.to_be_bytes());
        match dec(SETTINGS, 0, 0, &p) {
            Ok(Frame::Settings(s)) => s.entries().next(),
            _ => None,
        }
    };
    assert_eq!(
        entry(SETTINGS_ENABLE_PUSH, 1),
        Some(Err(FrameError::Setting))
    );
    assert_eq!(
        entry(SETTINGS_MAX_FRAME_SIZE, (1 << 24) - 1),
        Some(Ok(Setting::MaxFrameSize((1 << 24) - 1)))
    );
    assert_eq!(
        entry(SETTINGS_MAX_FRAME_SIZE, 1 << 24),
        Some(Err(FrameError::Setting))
    );
    assert_eq!(
        entry(SETTINGS_INITIAL_WINDOW_SIZE, (1 << 31) - 1),
        Some(Ok(Setting::InitialWindowSize((1 << 31) - 1)))
    );
    assert_eq!(
        entry(SETTINGS_HEADER_TABLE_SIZE, 0),
        Some(Ok(Setting::HeaderTableSize(0)))
    );
    assert_eq!(
        dec(SETTINGS, ACK, 0, &[]),
        Ok(Frame::Settings(Settings::Ack))
    );
    assert_eq!(dec(SETTINGS, ACK, 0, &[0; 6]), Err(FrameError::Length));
    assert_eq!(dec(SETTINGS, 0, 0, &[0; 5]), Err(FrameError::Length));
    assert_eq!(dec(SETTINGS, 0, 1, &[]), Err(FrameError::StreamId));
}

fn frames(parts: &[&[u8]]) -> Vec<(Head, Vec<u8>)> {
    let mut r = Reader::default();
    let mut got = Vec::new();
    for p in parts {
        r.feed::<Oversized>(p, DEFAULT_MAX_FRAME, |h, b| {
            got.push((h, b.to_vec()));
            Ok(())
        })
        .unwrap();
    }
    got
}

#[test]
fn frames_come_out_whole_however_the_bytes_were_split() {
    let mut bytes = Vec::new();
    settings(&mut bytes, &[(SETTINGS_MAX_CONCURRENT_STREAMS, 100)]);
    ping_ack(&mut bytes, b"12345678");
    window_update(&mut bytes, 3, 1000);
    let whole = frames(&[&bytes]);
    assert_eq!(whole.len(), 3);
    assert_eq!(
        (whole[0].0.kind, whole[0].1.len(), whole[1].0.flags),
        (SETTINGS, 6, ACK)
    );
    assert_eq!(
        (whole[2].0.stream, &whole[2].1[..]),
        (3, &[0, 0, 3, 232][..])
    );
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(frames(&singles), whole);
    let sevens: Vec<&[u8]> = bytes.chunks(7).collect();
    assert_eq!(frames(&sevens), whole);
}

#[test]
fn an_oversized_frame_is_refused_before_its_payload_arrives() {
    let mut bytes = Vec::new();
    head(
        &mut bytes,
        DEFAULT_MAX_FRAME + 1,
        Kind::Data,
        Flags::NONE,
        1,
    );
    let mut r = Reader::default();
    let got = r.feed::<Oversized>(&bytes, DEFAULT_MAX_FRAME, |_, _| Ok(()));
    assert_eq!(got, Err(Oversized));
}
