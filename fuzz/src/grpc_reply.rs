//! Target `grpc_reply`: a gRPC reply's DATA as a server could send it
//! (`shootout_engine::grpc::Frames`: 5-byte prefixes, messages checked against the
//! method's output type), for `helloworld.Greeter/SayHello` of the test schema
//! (tests/fixtures/grpc/helloworld.proto), with a reply limit of 64 bytes.
//!
//! The first input byte chooses the size of the pieces the DATA arrives in; the rest is
//! the DATA. Each reply must hold `{"message":"hello x"}` and echo the request (so well
//! formed ones are decoded and compared). Invariants: no panic; the verdict, the messages
//! counted and whether one was unexpected are the same whole and in pieces; the buffer
//! never holds more than the limit; and the message decoder (`grpc::wire::check`)
//! agrees with prost-reflect's `DynamicMessage::decode` on the whole input taken as one
//! message: both ways for the reply type without its map field (`fuzz/schema/nomap.proto`),
//! one way for the test schema's own (what the decoder accepts, prost-reflect accepts).
//! prost-reflect 0.16 reads a map entry whatever the wire type its key says (the map arm
//! of its `merge_field` reads a length without checking the wire type), where prost and
//! the decoder refuse a map field that is not length-delimited: `12 0e 41 … 1d 00 19 80
//! 00`, an `Inner` whose field 3 (`counts`) comes as a fixed32, decodes there as two
//! empty entries.
//!
//! The same DATA is then read as a server stream's replies (`SayHellos`), capped at 1 to
//! 4 replies by the first byte's high bits (`--grpc-stream-messages`): the fault, the
//! messages read and the good ones are the same whole and in pieces, never more than the
//! cap, and the good ones never more than those read.
//!
//! And read once more as the reply of a call that asked for gzip, its head agreeing
//! (`--grpc-compress gzip`, `grpc-encoding: gzip`): a message with flag 1 is inflated
//! within the limit; the verdict is the same whole and in pieces, and a reply that has a
//! message with flag 1 fails as `grpc_framing` where gzip was not agreed.

use prost_reflect::{DynamicMessage, MessageDescriptor};
use shootout_engine::grpc::{wire, Frames, Reply};
use shootout_model::GrpcReply;
use std::path::Path;
use std::sync::OnceLock;

/// The reply limit, in bytes.
const LIMIT: usize = 64;

fn reply() -> &'static Reply {
    static REPLY: OnceLock<Reply> = OnceLock::new();
    REPLY.get_or_init(|| make("SayHello"))
}

fn stream_reply() -> &'static Reply {
    static REPLY: OnceLock<Reply> = OnceLock::new();
    REPLY.get_or_init(|| make("SayHellos"))
}

fn make(method: &str) -> Reply {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/grpc");
    let pool = protox::Compiler::new([dir])
        .expect("the test schema's directory")
        .include_imports(true)
        .open_file("helloworld.proto")
        .expect("the test schema compiles")
        .descriptor_pool();
    // The reply must hold a message and echo the request: a well-formed reply is
    // decoded and compared too.
    Reply::new(
        &GrpcReply {
            schema: pool.encode_to_vec().into(),
            method: format!("helloworld.Greeter.{method}"),
            max_message: LIMIT,
            json: Some(r#"{"message":"hello x"}"#.into()),
            stream: Default::default(),
            compress: false,
        },
        true,
    )
    .expect("the test schema has the method")
}

/// The request the replies answer, behind its prefix (not compressed):
/// `HelloRequest { name: "hello x" }`.
const SENT: &[u8] = b"\x00\x00\x00\x00\x09\x0a\x07hello x";

fn gzip_reply() -> &'static Reply {
    static REPLY: OnceLock<Reply> = OnceLock::new();
    REPLY.get_or_init(|| Reply {
        compress: true,
        ..make("SayHello")
    })
}

fn feed(bytes: &[u8], piece: usize, r: &Reply) -> (Option<shootout_model::FailureKind>, u32, bool) {
    let mut f = Frames::default();
    f.begin();
    f.agree(r.compress);
    for p in bytes.chunks(piece) {
        f.feed(p, r, SENT);
    }
    (f.end(), f.messages(), f.unexpected())
}

/// The DATA read as a server stream's, capped at `cap` replies: the fault (at the end of
/// the stream, unless the cap ended it first), messages read, good ones, capped.
fn stream(
    bytes: &[u8],
    piece: usize,
    r: &Reply,
    cap: u32,
) -> (Option<shootout_model::FailureKind>, u32, u32, bool) {
    let mut f = Frames::default();
    f.begin_with(cap);
    for p in bytes.chunks(piece) {
        f.feed(p, r, SENT);
    }
    let fault = if f.full() { f.fault() } else { f.end() };
    (fault, f.messages(), f.good(), f.full())
}

pub fn check(data: &[u8]) {
    let Some((&split, bytes)) = data.split_first() else {
        return;
    };
    let r = reply();
    let whole = feed(bytes, usize::MAX, r);
    let piece = usize::from(split % 16) + 1;
    assert_eq!(whole, feed(bytes, piece, r), "pieces of {piece}");
    let cap = u32::from(split >> 4) % 4 + 1;
    let s = stream_reply();
    let streamed = stream(bytes, usize::MAX, s, cap);
    assert_eq!(
        streamed,
        stream(bytes, piece, s, cap),
        "a stream in pieces of {piece}"
    );
    assert!(
        streamed.1 <= cap && streamed.2 <= streamed.1,
        "{streamed:?}, cap {cap}"
    );
    let g = gzip_reply();
    let gz = feed(bytes, usize::MAX, g);
    assert_eq!(gz, feed(bytes, piece, g), "gzip agreed, pieces of {piece}");
    // Without gzip agreed, a first message with flag 1 is a framing fault.
    if bytes.len() >= 5 && bytes[0] == 1 {
        assert_eq!(whole.0, Some(shootout_model::FailureKind::GrpcFraming));
    }
    let theirs = DynamicMessage::decode(r.output.clone(), bytes).is_ok();
    assert!(
        !wire::check(&r.output, bytes) || theirs,
        "the decoder accepts what prost-reflect refuses: {bytes:02x?}"
    );
    let plain = no_map();
    assert_eq!(
        wire::check(plain, bytes),
        DynamicMessage::decode(plain.clone(), bytes).is_ok(),
        "the decoder and prost-reflect disagree on {bytes:02x?}"
    );
}

/// The reply type without a map field (`fuzz/schema/nomap.proto`).
fn no_map() -> &'static MessageDescriptor {
    static DESC: OnceLock<MessageDescriptor> = OnceLock::new();
    DESC.get_or_init(|| {
        protox::Compiler::new([Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")])
            .expect("the fuzz schema's directory")
            .open_file("nomap.proto")
            .expect("the fuzz schema compiles")
            .descriptor_pool()
            .get_message_by_name("nomap.HelloReply")
            .expect("the fuzz schema has HelloReply")
    })
}
