use super::*;
use prost::Message as _;
use prost_reflect::DynamicMessage;
use std::sync::Arc;

/// The test schema (tests/fixtures/grpc/helloworld.proto), compiled.
fn pool() -> DescriptorPool {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/grpc");
    protox::Compiler::new([dir])
        .unwrap()
        .include_imports(true)
        .open_file("helloworld.proto")
        .unwrap()
        .descriptor_pool()
}

fn reply(max_message: usize) -> Reply {
    expecting(max_message, None, false).unwrap()
}

/// A reply of SayHello that must hold `json`'s fields and, with `echo`, be the request.
fn expecting(max_message: usize, json: Option<&str>, echo: bool) -> Result<Reply, SchemaError> {
    Reply::new(
        &GrpcReply {
            schema: Arc::from(pool().encode_to_vec()),
            method: "helloworld.Greeter.SayHello".into(),
            max_message,
            json: json.map(str::to_string),
            stream: Default::default(),
            compress: false,
        },
        echo,
    )
}

/// A HelloReply from JSON, encoded.
fn hello(json: &str) -> Vec<u8> {
    let desc = pool().get_message_by_name("helloworld.HelloReply").unwrap();
    let mut de = serde_json::Deserializer::from_str(json);
    DynamicMessage::deserialize(desc, &mut de)
        .unwrap()
        .encode_to_vec()
}

fn framed(flag: u8, msg: &[u8]) -> Vec<u8> {
    let mut out = vec![flag];
    out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

#[test]
fn the_schema_must_hold_the_method() {
    let schema: Arc<[u8]> = Arc::from(pool().encode_to_vec());
    let r = |method: &str| {
        Reply::new(
            &GrpcReply {
                schema: Arc::clone(&schema),
                method: method.into(),
                max_message: 10,
                json: None,
                stream: Default::default(),
                compress: false,
            },
            false,
        )
    };
    assert_eq!(
        r("helloworld.Greeter.SayHello").unwrap().output.full_name(),
        "helloworld.HelloReply"
    );
    for bad in [
        "helloworld.Greeter.Nope",
        "helloworld.Nope.SayHello",
        "SayHello",
    ] {
        assert_eq!(r(bad).unwrap_err(), SchemaError::Method(bad.into()));
    }
    let garbage = Reply::new(
        &GrpcReply {
            schema: Arc::from(&b"\xff\xff"[..]),
            method: "a.B.C".into(),
            max_message: 1,
            json: None,
            stream: Default::default(),
            compress: false,
        },
        false,
    );
    assert!(matches!(garbage, Err(SchemaError::Descriptors(_))));
}

#[test]
fn statuses_are_decimal_codes() {
    // (value, read as)
    let rows: &[(&[u8], Status)] = &[
        (b"0", Status::Code(0)),
        (b"14", Status::Code(14)),
        (b"0014", Status::Code(14)),
        (b"4294967295", Status::Code(u32::MAX)),
        // Past u32, or past 10 digits.
        (b"4294967296", Status::Unreadable),
        (b"00000000000", Status::Unreadable),
        (b"", Status::Unreadable),
        (b"ok", Status::Unreadable),
        (b" 0", Status::Unreadable),
        (b"-1", Status::Unreadable),
        (b"1.0", Status::Unreadable),
    ];
    for (v, want) in rows {
        assert_eq!(Status::parse(v), *want, "{:?}", String::from_utf8_lossy(v));
    }
}

#[test]
fn content_types_of_grpc() {
    for ok in [
        &b"application/grpc"[..],
        b"application/grpc+proto",
        b"application/grpc;charset=x",
    ] {
        assert!(is_grpc_type(ok));
    }
    for bad in [
        &b"application/grpcx"[..],
        b"application/json",
        b"text/plain",
        b"",
        b"application/grp",
    ] {
        assert!(!is_grpc_type(bad));
    }
}

/// The decoder agrees with prost-reflect's DynamicMessage on well-formed messages and on
/// each kind of fault.
#[test]
fn the_wire_check_agrees_with_prost_reflect() {
    let out = pool().get_message_by_name("helloworld.HelloReply").unwrap();
    let good = hello(
        r#"{"message":"hello x","inner":{"data":"AAE=","ratio":0.5,"counts":{"a":1}},"codes":[1,2,3]}"#,
    );
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("a full message", good.clone()),
        ("empty", vec![]),
        // An unknown field of each wire type: skipped.
        ("unknown varint", vec![0x50, 0x96, 0x01]),
        ("unknown fixed64", vec![0x51, 1, 2, 3, 4, 5, 6, 7, 8]),
        ("unknown length", vec![0x52, 2, b'a', b'b']),
        ("unknown fixed32", vec![0x55, 1, 2, 3, 4]),
        ("unknown group", vec![0x53, 0x08, 0x01, 0x54]),
        // repeated fixed32 unpacked.
        ("codes unpacked", vec![0x1d, 1, 0, 0, 0, 0x1d, 2, 0, 0, 0]),
        // Faults.
        ("message as a varint", vec![0x08, 0x01]),
        ("string not UTF-8", vec![0x0a, 0x02, 0xff, 0xfe]),
        ("length past the end", vec![0x0a, 0x05, b'a']),
        ("a key cut short", vec![0x8a]),
        ("field number 0", vec![0x02, 0x00]),
        ("wire type 6", vec![0x0e]),
        ("wire type 7", vec![0x0f]),
        ("an end group alone", vec![0x0c]),
        ("a group never ended", vec![0x53, 0x08, 0x01]),
        ("a group ended by another number", vec![0x53, 0x5c]),
        ("inner not a message", vec![0x12, 0x02, 0x08]),
        ("packed codes cut", vec![0x1a, 0x03, 1, 2, 3]),
        ("fixed32 cut", vec![0x1d, 1, 2]),
        ("an 11-byte varint", {
            let mut v = vec![0x50];
            v.extend([0xff; 10]);
            v.push(0x01);
            v
        }),
        ("a varint over 64 bits", {
            let mut v = vec![0x50];
            v.extend([0xff; 9]);
            v.push(0x02);
            v
        }),
    ];
    for cut in 0..good.len() {
        cases.push(("a prefix", good[..cut].to_vec()));
    }
    for (what, bytes) in &cases {
        let theirs = DynamicMessage::decode(out.clone(), bytes.as_slice()).is_ok();
        assert_eq!(
            wire::check(&out, bytes),
            theirs,
            "{what}: {bytes:02x?} (prost-reflect: {theirs})"
        );
    }
}

#[test]
fn nesting_is_bounded() {
    let out = pool().get_message_by_name("helloworld.Inner").unwrap();
    // Unknown groups nested deeper than prost allows.
    let mut deep = vec![0x53; 200];
    deep.extend(vec![0x54; 200]);
    assert!(!wire::check(&out, &deep));
    let mut shallow = vec![0x53; 50];
    shallow.extend(vec![0x54; 50]);
    assert!(wire::check(&out, &shallow));
}

/// Feeds `bytes` to a new reply in pieces of `piece` bytes.
fn frames(bytes: &[u8], piece: usize, r: &Reply) -> Frames {
    let mut f = Frames::default();
    f.begin();
    for p in bytes.chunks(piece.max(1)) {
        f.feed(p, r, &[]);
    }
    f
}

#[test]
fn messages_are_read_whole_and_cut_at_every_byte() {
    let r = reply(1 << 20);
    let one = framed(0, &hello(r#"{"message":"hello you"}"#));
    let mut two = one.clone();
    two.extend_from_slice(&framed(0, &[]));
    for piece in [usize::MAX, 1, 2, 3, 7] {
        let mut f = frames(&one, piece, &r);
        assert_eq!((f.end(), f.messages()), (None, 1), "pieces of {piece}");
        let mut f = frames(&two, piece, &r);
        assert_eq!((f.end(), f.messages()), (None, 2), "pieces of {piece}");
    }
}

#[test]
fn framing_faults() {
    let r = reply(100);
    let msg = hello(r#"{"message":"hi"}"#);
    let mut huge = vec![0, 0xff, 0xff, 0xff, 0xff];
    huge.extend_from_slice(b"abc");
    let mut over = framed(0, &[b'x'; 101]);
    over.truncate(20);
    let cases: Vec<(&str, Vec<u8>, Option<FailureKind>)> = vec![
        ("a 4 GiB length", huge, Some(FailureKind::GrpcFraming)),
        ("over --max-message", over, Some(FailureKind::GrpcFraming)),
        (
            "at --max-message",
            framed(0, &{
                let mut m = vec![0x0a, 98];
                m.extend([b'x'; 98]);
                m
            }),
            None,
        ),
        (
            "compressed",
            framed(1, &msg),
            Some(FailureKind::GrpcFraming),
        ),
        ("flag 2", framed(2, &msg), Some(FailureKind::GrpcFraming)),
        (
            "a message cut short",
            framed(0, &msg)[..6].to_vec(),
            Some(FailureKind::GrpcFraming),
        ),
        (
            "a prefix cut short",
            vec![0, 0, 0],
            Some(FailureKind::GrpcFraming),
        ),
        (
            "not the output type",
            framed(0, &[0x08, 0x01]),
            Some(FailureKind::GrpcDecode),
        ),
    ];
    for (what, bytes, want) in cases {
        for piece in [usize::MAX, 1] {
            let mut f = frames(&bytes, piece, &r);
            assert_eq!(f.end(), want, "{what}, pieces of {piece}");
        }
    }
}

#[test]
fn a_large_buffer_is_not_kept_for_the_next_call() {
    let r = reply(1 << 20);
    let big = framed(0, &{
        let mut m = vec![0x0a, 0x80, 0x80, 0x04];
        m.extend(vec![b'x'; 65_536]);
        m
    });
    let mut f = frames(&big, 1000, &r);
    assert_eq!((f.end(), f.messages()), (None, 1));
    f.begin();
    assert_eq!(f.buf.capacity(), 0);
    assert_eq!((f.end(), f.messages()), (None, 0));
}

/// A call's verdict from what its stream carried.
#[test]
fn verdicts() {
    let r = reply(100);
    let msg = framed(0, &hello(r#"{"message":"hi"}"#));
    let ok = Some(Status::Code(0));
    struct Row {
        what: &'static str,
        http: u16,
        typed: bool,
        head: Option<Status>,
        trailers_only: bool,
        tail: Option<Option<Status>>,
        body: Vec<u8>,
        want: Option<FailureKind>,
    }
    let row = |what, head, trailers_only, tail, body: &[u8], want| Row {
        what,
        http: 200,
        typed: true,
        head,
        trailers_only,
        tail,
        body: body.to_vec(),
        want,
    };
    let rows = vec![
        row("ok", None, false, Some(ok), &msg, None),
        row(
            "trailers-only ok carries no message",
            ok,
            true,
            None,
            &[],
            Some(FailureKind::GrpcFraming),
        ),
        row(
            "trailers-only 14",
            Some(Status::Code(14)),
            true,
            None,
            &[],
            Some(FailureKind::GrpcUnavailable),
        ),
        row(
            "trailers 8",
            None,
            false,
            Some(Some(Status::Code(8))),
            &[],
            Some(FailureKind::GrpcResourceExhausted),
        ),
        row(
            "trailers 4 with a message",
            None,
            false,
            Some(Some(Status::Code(4))),
            &msg,
            Some(FailureKind::GrpcDeadlineExceeded),
        ),
        row(
            "a code gRPC does not define",
            None,
            false,
            Some(Some(Status::Code(99))),
            &msg,
            Some(FailureKind::GrpcUnknown),
        ),
        row(
            "no trailers",
            None,
            false,
            None,
            &msg,
            Some(FailureKind::GrpcTrailers),
        ),
        row(
            "trailers without grpc-status",
            None,
            false,
            Some(None),
            &msg,
            Some(FailureKind::GrpcTrailers),
        ),
        row(
            "head and trailers disagree",
            ok,
            false,
            Some(Some(Status::Code(13))),
            &msg,
            Some(FailureKind::GrpcTrailers),
        ),
        row("head and trailers agree", ok, false, Some(ok), &msg, None),
        row(
            "not a number",
            None,
            false,
            Some(Some(Status::Unreadable)),
            &msg,
            Some(FailureKind::GrpcTrailers),
        ),
        row(
            "two messages",
            None,
            false,
            Some(ok),
            &[msg.clone(), msg.clone()].concat(),
            Some(FailureKind::GrpcFraming),
        ),
        row(
            "a framing fault before a status",
            None,
            false,
            Some(Some(Status::Code(14))),
            &msg[..3],
            Some(FailureKind::GrpcFraming),
        ),
        Row {
            typed: false,
            ..row(
                "not application/grpc",
                None,
                false,
                Some(ok),
                &msg,
                Some(FailureKind::Malformed),
            )
        },
        // The run's status expectation (200) judges and counts the others.
        Row {
            http: 503,
            typed: false,
            ..row("HTTP 503", None, false, None, &[], None)
        },
    ];
    for r0 in rows {
        let mut c = Call::default();
        c.begin();
        c.head(r0.typed, r0.head, r0.trailers_only, false);
        c.frames.feed(&r0.body, &r, &[]);
        if let Some(t) = r0.tail {
            c.trailers(t);
        }
        assert_eq!(c.verdict(r0.http, false), r0.want, "{}", r0.what);
    }
}

/// The verdict of a good call (status 0) whose one reply is `msg`, to the request `sent`
/// (sent uncompressed), its DATA cut in pieces of `piece` bytes.
fn verdict_of(r: &Reply, msg: &[u8], sent: &[u8], piece: usize) -> Option<FailureKind> {
    verdict_to(r, msg, &framed(0, sent), piece)
}

/// [`verdict_of`] to a request given behind its prefix (`sent`: compressed or not).
fn verdict_to(r: &Reply, msg: &[u8], sent: &[u8], piece: usize) -> Option<FailureKind> {
    let mut c = Call::default();
    c.begin();
    c.head(true, None, false, false);
    for p in framed(0, msg).chunks(piece) {
        c.frames.feed(p, r, sent);
    }
    c.trailers(Some(Status::Code(0)));
    c.verdict(200, false)
}

#[test]
fn expected_fields_are_a_subset_of_the_reply_compared_as_values() {
    let r = expecting(
        1 << 20,
        Some(r#"{"message":"hello x","inner":{"ratio":0.5}}"#),
        false,
    )
    .unwrap();
    // (reply as JSON, verdict)
    let rows: &[(&str, Option<FailureKind>)] = &[
        // Every named field, and more that are not named.
        (
            r#"{"message":"hello x","inner":{"ratio":0.5,"data":"AAE="},"codes":[1]}"#,
            None,
        ),
        (
            r#"{"message":"hello y","inner":{"ratio":0.5}}"#,
            Some(FailureKind::Body),
        ),
        (
            r#"{"message":"hello x","inner":{"ratio":0.25}}"#,
            Some(FailureKind::Body),
        ),
        // A field left at its default is its default, as protobuf reads it.
        (r#"{"message":"hello x"}"#, Some(FailureKind::Body)),
    ];
    for &(json, want) in rows {
        for piece in [usize::MAX, 1] {
            assert_eq!(
                verdict_of(&r, &hello(json), &[], piece),
                want,
                "{json} in pieces of {piece}"
            );
        }
    }
    // A default named in the JSON must be a default in the reply.
    let empty = expecting(64, Some(r#"{"message":""}"#), false).unwrap();
    assert_eq!(verdict_of(&empty, &hello("{}"), &[], 64), None);
    assert_eq!(
        verdict_of(&empty, &hello(r#"{"message":"x"}"#), &[], 64),
        Some(FailureKind::Body)
    );
    // Lists and maps are compared whole; a number as JSON's string or number.
    let list = expecting(
        64,
        Some(r#"{"codes":[1,"2"],"inner":{"counts":{"a":1}}}"#),
        false,
    )
    .unwrap();
    let good = hello(r#"{"codes":[1,2],"inner":{"counts":{"a":1}}}"#);
    assert_eq!(verdict_of(&list, &good, &[], 64), None);
    for bad in [
        r#"{"codes":[1,2,3],"inner":{"counts":{"a":1}}}"#,
        r#"{"codes":[1,2],"inner":{"counts":{"a":1,"b":2}}}"#,
    ] {
        assert_eq!(
            verdict_of(&list, &hello(bad), &[], 64),
            Some(FailureKind::Body),
            "{bad}"
        );
    }
    // A failed call is counted under its status, not as an unexpected reply.
    let mut c = Call::default();
    c.begin();
    c.head(true, None, false, false);
    c.frames
        .feed(&framed(0, &hello(r#"{"message":"no"}"#)), &r, &[]);
    c.trailers(Some(Status::Code(14)));
    assert_eq!(c.verdict(200, false), Some(FailureKind::GrpcUnavailable));
}

#[test]
fn expected_json_that_does_not_fit_the_output_type_is_refused() {
    for (json, says) in [
        (r#"{"mesage":"x"}"#, "mesage"),
        (r#"{"message":1}"#, "string"),
        (r#"["x"]"#, "not a JSON object"),
        ("{", "EOF"),
    ] {
        let e = expecting(64, Some(json), false).unwrap_err().to_string();
        assert!(
            e.starts_with("--expect-json: ") && e.contains(says),
            "{json}: {e}"
        );
    }
}

#[test]
fn an_echo_is_the_request_however_it_is_encoded() {
    let r = expecting(64, None, true).unwrap();
    let sent = hello(r#"{"message":"hi","codes":[1,2]}"#);
    assert_eq!(verdict_of(&r, &sent, &sent, 1), None);
    // The same message, its fields in another order and its list unpacked.
    let mut reordered = vec![0x1d, 1, 0, 0, 0, 0x1d, 2, 0, 0, 0];
    reordered.extend_from_slice(b"\x0a\x02hi");
    assert_ne!(reordered, sent);
    assert_eq!(verdict_of(&r, &reordered, &sent, 3), None);
    for other in [r#"{"message":"ho","codes":[1,2]}"#, r#"{"message":"hi"}"#] {
        assert_eq!(
            verdict_of(&r, &hello(other), &sent, 64),
            Some(FailureKind::Body),
            "{other}"
        );
    }
    // A request that is not a reply cannot be echoed.
    assert_eq!(
        verdict_of(&r, &hello("{}"), &[0xff], 64),
        Some(FailureKind::Body)
    );
}

/// `--expect-echo` with `--grpc-compress gzip` compared the reply with the request's
/// compressed bytes, so no echo was ever one: the reply is compared with the message the
/// server read, the request inflated.
#[test]
fn an_echo_of_a_compressed_request_is_compared_with_the_request_inflated() {
    let r = expecting(64, None, true).unwrap();
    let sent = hello(r#"{"message":"hi","codes":[1,2]}"#);
    let mut compressed = Vec::new();
    gzip::framed(&sent, &mut compressed);
    assert_ne!(compressed[5..], sent[..]);
    for piece in [1, 3, 64] {
        assert_eq!(verdict_to(&r, &sent, &compressed, piece), None, "{piece}");
    }
    let other = hello(r#"{"message":"ho","codes":[1,2]}"#);
    assert_eq!(
        verdict_to(&r, &other, &compressed, 64),
        Some(FailureKind::Body)
    );
    // A request whose flag says compressed but that does not inflate: no reply echoes it.
    let bad = framed(1, &sent);
    assert_eq!(verdict_to(&r, &sent, &bad, 64), Some(FailureKind::Body));
}

#[test]
fn a_list_s_messages_are_encoded_with_their_values_drawn() {
    use shootout_model::messages::MessageList;
    use shootout_model::requests::Order;
    let input = pool()
        .get_message_by_name("helloworld.HelloRequest")
        .unwrap();
    let request = |json: &str| {
        let mut de = serde_json::Deserializer::from_str(json);
        framed(
            0,
            &DynamicMessage::deserialize(input.clone(), &mut de)
                .unwrap()
                .encode_to_vec(),
        )
    };
    let list = MessageList::parse(
        "m.jsonl",
        "{\"name\":\"fixed\"}\n{\"name\":\"u{seq}\",\"times\":{rand:5-5}}\n",
        Order::Seq,
        1,
    )
    .unwrap();
    let m = Messages::new(&input, &list).unwrap();
    let mut gen = crate::template::Gen::new(1, false, m.len(), 0, 1);
    let (mut json, mut out) = (Vec::new(), Vec::new());
    let mut sent = Vec::new();
    for _ in 0..4 {
        m.render(&mut gen, &mut json, &mut out);
        sent.push(out.clone());
    }
    assert_eq!(
        sent,
        [
            request(r#"{"name":"fixed"}"#),
            request(r#"{"name":"u0","times":5}"#),
            request(r#"{"name":"fixed"}"#),
            request(r#"{"name":"u1","times":5}"#),
        ]
    );
    // Each line is checked with its values at both ends of their ranges: a number bare
    // where a string goes, or past int32, is refused with the message's number.
    for (text, line, says) in [
        ("{\"name\":\"a\"}\n{\"name\":{seq}}\n", 2, "string"),
        ("{\"times\":{rand:1-3000000000}}\n", 1, "out of range"),
        ("{\"nme\":\"a\"}\n", 1, "nme"),
    ] {
        let list = MessageList::parse("m.jsonl", text, Order::Seq, 1).unwrap();
        let e = Messages::new(&input, &list).unwrap_err();
        assert_eq!(e.line, line, "{text}");
        assert!(e.why.contains(says), "{text}: {e}");
    }
}

/// Bidi: replies are matched to the messages sent in order; those past them are matched
/// to none, the messages past the replies are unanswered, and the verdict says which.
#[test]
fn replies_match_messages_in_order() {
    let r = reply(1024);
    let one = framed(0, &hello(r#"{"message":"hello bob"}"#));
    let mut c = Call::default();
    c.begin();
    c.sent = 2;
    // One reply of two messages: the first matched, the second unanswered.
    c.frames.feed(&one, &r, &[]);
    assert_eq!(c.matched_since(0, 0), (0, 1));
    assert_eq!((c.unmatched, c.unanswered()), (0, 1));
    assert_eq!(c.bidi_verdict(), Some(FailureKind::GrpcUnanswered));
    // Two more in one piece: the second message's reply, and one matched to none.
    c.frames.feed(&one.repeat(2), &r, &[]);
    assert_eq!(c.matched_since(1, 1), (1, 1));
    assert_eq!((c.unmatched, c.unanswered()), (1, 0));
    assert_eq!(c.bidi_verdict(), Some(FailureKind::GrpcUnmatched));
    // A third message sent later does not take a reply already counted as unmatched.
    c.sent = 3;
    c.frames.feed(&one, &r, &[]);
    assert_eq!(c.matched_since(3, 3), (3, 0));
    assert_eq!(c.unmatched, 2);
    // Every message answered once: no fault.
    c.begin();
    c.sent = 2;
    c.frames.feed(&one.repeat(2), &r, &[]);
    assert_eq!(c.matched_since(0, 0), (0, 2));
    assert_eq!(c.bidi_verdict(), None);
}

/// The verdict of a good call whose one reply is `body` (framed already), its head
/// agreeing to gzip or not, its DATA cut in pieces of `piece` bytes.
fn compressed_verdict(r: &Reply, body: &[u8], agreed: bool, piece: usize) -> Option<FailureKind> {
    let mut c = Call::default();
    c.begin();
    c.head(true, None, false, agreed);
    for p in body.chunks(piece) {
        c.frames.feed(p, r, &[]);
    }
    c.trailers(Some(Status::Code(0)));
    c.verdict(200, false)
}

#[test]
fn compressed_replies_are_read_only_when_agreed() {
    let mut r = reply(1 << 20);
    r.compress = true;
    let msg = hello(r#"{"message":"hello bob"}"#);
    let mut gz = Vec::new();
    gzip::framed(&msg, &mut gz);
    assert_eq!(gz[0], 1);
    for piece in [usize::MAX, 7, 1] {
        assert_eq!(
            compressed_verdict(&r, &gz, true, piece),
            None,
            "pieces of {piece}"
        );
        // A compressed message where none was agreed (no grpc-encoding: gzip, or the
        // call did not ask for it).
        assert_eq!(
            compressed_verdict(&r, &gz, false, piece),
            Some(FailureKind::GrpcFraming),
            "pieces of {piece}"
        );
        // An uncompressed message is read either way.
        assert_eq!(compressed_verdict(&r, &framed(0, &msg), true, piece), None);
        // Flag 1 over bytes that are not gzip.
        assert_eq!(
            compressed_verdict(&r, &framed(1, &msg), true, piece),
            Some(FailureKind::GrpcFraming)
        );
        // A flag that is neither 0 nor 1.
        assert_eq!(
            compressed_verdict(&r, &framed(2, &gz[5..]), true, piece),
            Some(FailureKind::GrpcFraming)
        );
    }
    // A compressed reply whose message is not a HelloReply once inflated.
    let mut bad = Vec::new();
    gzip::framed(&[0x0a, 0x09, b'x'], &mut bad);
    assert_eq!(
        compressed_verdict(&r, &bad, true, usize::MAX),
        Some(FailureKind::GrpcDecode)
    );
}

#[test]
fn a_gzip_bomb_fails_within_the_reply_limit() {
    // 32 MiB of one string field inflate from about 32 KiB: past a 1 MiB limit.
    let limit = 1 << 20;
    let mut r = reply(limit);
    r.compress = true;
    let mut huge = vec![0x0a, 0x80, 0x80, 0x80, 0x10];
    huge.resize(5 + (32 << 20), b'a');
    let mut bomb = Vec::new();
    gzip::framed(&huge, &mut bomb);
    drop(huge);
    assert!(bomb.len() < limit, "the bomb itself is within the limit");
    let mut c = Call::default();
    c.begin();
    c.head(true, None, false, true);
    c.frames.feed(&bomb, &r, &[]);
    assert_eq!(c.frames.fault(), Some(FailureKind::GrpcFraming));
    assert_eq!(c.frames.messages(), 1);
    // The same bytes within a limit they fit in read well (the class above is the
    // limit's).
    let mut roomy = reply(64 << 20);
    roomy.compress = true;
    let mut c = Call::default();
    c.begin();
    c.head(true, None, false, true);
    c.frames.feed(&bomb, &roomy, &[]);
    assert_eq!(c.frames.fault(), None);
}

#[test]
fn a_set_prost_reflect_fails_on_is_refused_not_a_panic() {
    use prost_reflect::prost_types::{FileDescriptorProto, FileDescriptorSet};
    // An import whose syntax is not one protobuf knows: prost-reflect 0.16.5 panics on it
    // while it words its error.
    let file = |name: &str, deps: &[&str], syntax: &str| FileDescriptorProto {
        name: Some(name.into()),
        dependency: deps.iter().map(|d| d.to_string()).collect(),
        syntax: Some(syntax.into()),
        ..Default::default()
    };
    let set = FileDescriptorSet {
        file: vec![
            file("a.proto", &["b.proto"], "proto3"),
            file("b.proto", &[], "protok3"),
        ],
    }
    .encode_to_vec();
    assert!(decode_pool(&set).is_err());
    // A good set decodes.
    assert!(decode_pool(&pool().encode_to_vec()).is_ok());
    assert!(decode_pool(b"\xff").is_err());
}
