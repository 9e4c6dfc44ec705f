//! The gRPC side of the HTTP/2 test server ([`crate::H2Server`] with
//! [`crate::H2Behavior::Grpc`]): `helloworld.Greeter/SayHello` of
//! [`GREETER_PROTO`], its messages encoded by hand (a `HelloRequest`'s `name`, field 1,
//! read; a `HelloReply` whose `message`, field 1, is `hello NAME`), answered as gRPC
//! answers (grpc/grpc's `doc/PROTOCOL-HTTP2.md`): HEADERS `:status 200`,
//! `content-type: application/grpc`; DATA, the message behind its 5-byte prefix; trailers
//! `grpc-status: 0`. Each [`GrpcBehavior`] but [`GrpcBehavior::Greeter`],
//! [`GrpcBehavior::SplitEveryByte`], [`GrpcBehavior::Echo`], [`GrpcBehavior::EchoGzip`],
//! [`GrpcBehavior::Chat`],
//! [`GrpcBehavior::ChatWindow`], [`GrpcBehavior::ChatGzip`] and
//! [`GrpcBehavior::ChatGoaway`] breaks one rule, and says the class a client must count
//! it under. The `Chat` family answers a bidirectional stream message by message, as
//! each arrives ([`chat`]), and ends it when the client ends its side ([`chat_end`]).

mod reflection;

pub use reflection::Reflect;

/// The schema the server answers (tests/fixtures/grpc/helloworld.proto).
pub const GREETER_PROTO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/grpc/helloworld.proto"
);

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
/// RST_STREAM's INTERNAL_ERROR.
const INTERNAL_ERROR: u32 = 0x2;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

/// How a gRPC call is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcBehavior {
    /// `hello NAME`, status 0: a good call.
    Greeter,
    /// The good answer with the message cut into DATA frames of one byte each (prefix
    /// included): still a good call.
    SplitEveryByte,
    /// The request's message sent back as the reply, status 0: a good call, whose reply
    /// echoes its request (a `HelloRequest` of a `name` alone reads as a `HelloReply`).
    Echo,
    /// A length prefix of 4 GiB − 1 followed by 3 bytes, then status 0: `grpc_framing`.
    HugePrefix,
    /// The good message with the compressed flag set and no `grpc-encoding`:
    /// `grpc_framing`.
    Compressed,
    /// A message whose field 1 is a number where `HelloReply` has a string:
    /// `grpc_decode`.
    WrongType,
    /// A trailers-only answer (HEADERS ending the stream) with this `grpc-status`: 14 is
    /// `grpc_unavailable`.
    TrailersOnly(u32),
    /// `grpc-status: 0` in the headers and `13` in the trailers: `grpc_trailers`.
    Disagree,
    /// `grpc-status: ok` in the trailers: `grpc_trailers`.
    NotANumber,
    /// The headers, the message, and an empty DATA frame ending the stream, no trailers:
    /// `grpc_trailers`.
    EndsAfterMessage,
    /// The headers, then an empty DATA frame ending the stream: no message, no trailers:
    /// `grpc_trailers`.
    EndsAfterHeaders,
    /// A server stream: this many `hello NAME` replies, each in its own DATA frame, then
    /// status 0: a good call of that many replies.
    Stream(u32),
    /// A server stream that never ends: `hello NAME` replies, one per stream each
    /// millisecond, until the client resets the stream (each such reset counted in
    /// [`crate::H2Server::cancels`]).
    Endless,
    /// This many good replies, then half of the next one and RST_STREAM INTERNAL_ERROR:
    /// that many replies and one `stream_reset`.
    ResetMidMessage(u32),
    /// This many good replies, then a length prefix of 4 GiB − 1 and status 0: that many
    /// replies and one `grpc_framing`.
    HugeAfter(u32),
    /// A bidirectional stream: each request message answered with `hello NAME` as soon
    /// as it is read whole (the headers go with the first), and `grpc-status: 0` once
    /// the client ends its side: a good call, every message matched by its reply.
    Chat,
    /// [`GrpcBehavior::Chat`], with one reply more than asked before the trailers: one
    /// `grpc_unmatched` a call, its messages' replies still units.
    ChatExtra,
    /// [`GrpcBehavior::Chat`] for the first `k` messages; the next one read ends the
    /// stream (`grpc-status: 0`) unanswered: `k` units and one `grpc_unanswered` a call.
    ChatEndsAfter(u32),
    /// The headers at the first message, and never a reply; `grpc-status: 0` once the
    /// client ends its side: every message unanswered (`grpc_unanswered`), or a
    /// `timeout` when the client waits for a reply before it sends more.
    ChatSilent,
    /// [`GrpcBehavior::Chat`] on streams whose initial window is this many bytes
    /// (SETTINGS_INITIAL_WINDOW_SIZE), each DATA frame's bytes given back by
    /// WINDOW_UPDATE once read: a client must cut its messages to the window
    /// ([`crate::H2Server::window_violations`] counts the frames that overran it).
    ChatWindow(u32),
    /// Server reflection served as [`Reflect`] says ([`reflection`]); every other path
    /// answered as [`GrpcBehavior::Greeter`].
    Reflection(Reflect),
    /// `grpc-encoding: gzip` and the good reply compressed with gzip (flag 1), whether
    /// or not the client accepts gzip: a good call for one that asked for it, else
    /// `grpc_framing`. (Each request message compressed with gzip is inflated, as by
    /// every greeter here.)
    Gzip,
    /// `grpc-encoding: gzip` and the request's message (inflated when it came compressed)
    /// sent back compressed with gzip (flag 1), status 0, as an echo service answers a
    /// client that asked for gzip: a good call for one that did, whose reply (inflated)
    /// echoes its request.
    EchoGzip,
    /// `grpc-encoding: snappy`, an encoding no client here speaks, and a message with
    /// flag 1: `grpc_framing`.
    UnknownEncoding,
    /// `grpc-encoding: gzip` and a message of 8 KiB that inflates to a `HelloReply` of
    /// 8 MiB, past the default limit of 4 MiB: `grpc_framing`.
    GzipBomb,
    /// [`GrpcBehavior::Chat`] with `grpc-encoding: gzip` and each reply compressed with
    /// gzip (flag 1), whether or not the client asked for it: a good call for one that
    /// did, else `grpc_framing`.
    ChatGzip,
    /// [`GrpcBehavior::Chat`] until the header block of a connection's `k`th stream:
    /// then GOAWAY(NO_ERROR) naming the stream before it, so that this stream and every
    /// later one of the connection are not processed ([`crate::H2Server::unprocessed`],
    /// their messages never read); the streams before it are served to their end.
    ChatGoaway(u32),
}

impl GrpcBehavior {
    /// One of the bidirectional family, answered message by message ([`chat`]).
    pub fn is_chat(self) -> bool {
        matches!(
            self,
            GrpcBehavior::Chat
                | GrpcBehavior::ChatExtra
                | GrpcBehavior::ChatEndsAfter(_)
                | GrpcBehavior::ChatSilent
                | GrpcBehavior::ChatWindow(_)
                | GrpcBehavior::ChatGzip
                | GrpcBehavior::ChatGoaway(_)
        )
    }
}

/// A bidirectional call's progress on the server.
#[derive(Debug, Default)]
pub(crate) struct Chat {
    /// Request messages read.
    read: u32,
    /// The answer's headers were written.
    head: bool,
    /// The server ended the stream (before the client ended its side).
    pub(crate) ended: bool,
}

/// Answers each whole message at the front of `body` (a bidirectional call's request
/// bytes so far) as `g` says, taking them out of it (a message whose compressed flag is
/// set inflated as gzip to read its name); returns how many were read, and how many of
/// those had the flag set.
pub(crate) fn chat(
    out: &mut Vec<u8>,
    encoder: &mut loona_hpack::Encoder<'static>,
    id: u32,
    g: GrpcBehavior,
    body: &mut Vec<u8>,
    c: &mut Chat,
) -> (u64, u64) {
    let (mut used, mut n, mut compressed) = (0, 0, 0);
    while !c.ended && body.len() - used >= 5 {
        let p = &body[used..];
        let flag = p[0];
        let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]) as usize;
        let Some(msg) = p.get(5..5 + len) else { break };
        used += 5 + len;
        n += 1;
        compressed += u64::from(flag == 1);
        c.read += 1;
        chat_head(out, encoder, id, g, c);
        let name = match flag {
            1 => request_name(&inflate(msg)),
            _ => request_name(msg),
        };
        match g {
            GrpcBehavior::ChatEndsAfter(k) if c.read > k => {
                trailers(out, encoder, id, b"0");
                c.ended = true;
            }
            GrpcBehavior::ChatSilent => {}
            GrpcBehavior::ChatGzip => data_frame(out, &gzipped(&hello_reply(&name)), 0, id),
            _ => data_frame(out, &prefixed(0, &hello_reply(&name)), 0, id),
        }
    }
    body.drain(..used);
    (n, compressed)
}

/// How many of the messages of a request's body have their compressed flag set.
pub(crate) fn compressed(body: &[u8]) -> u64 {
    flagged_messages(body)
        .iter()
        .filter(|(flag, _)| *flag == 1)
        .count() as u64
}

/// The client ended its side of a bidirectional call: [`GrpcBehavior::ChatExtra`]'s
/// reply more, then `grpc-status: 0`.
pub(crate) fn chat_end(
    out: &mut Vec<u8>,
    encoder: &mut loona_hpack::Encoder<'static>,
    id: u32,
    g: GrpcBehavior,
    c: &mut Chat,
) {
    chat_head(out, encoder, id, g, c);
    if g == GrpcBehavior::ChatExtra {
        data_frame(out, &prefixed(0, &hello_reply(b"again")), 0, id);
    }
    trailers(out, encoder, id, b"0");
}

/// A bidirectional answer's headers, once (with `grpc-encoding: gzip` for
/// [`GrpcBehavior::ChatGzip`]).
fn chat_head(
    out: &mut Vec<u8>,
    encoder: &mut loona_hpack::Encoder<'static>,
    id: u32,
    g: GrpcBehavior,
    c: &mut Chat,
) {
    if !std::mem::replace(&mut c.head, true) {
        let mut head: Vec<(&[u8], &[u8])> =
            vec![(b":status", b"200"), (b"content-type", b"application/grpc")];
        if g == GrpcBehavior::ChatGzip {
            head.push((b"grpc-encoding", b"gzip"));
        }
        let block = encoder.encode(head);
        block_frame(out, &block, 0, id);
    }
}

/// Trailers with `grpc-status` `status`, ending stream `id`.
fn trailers(
    out: &mut Vec<u8>,
    encoder: &mut loona_hpack::Encoder<'static>,
    id: u32,
    status: &[u8],
) {
    let block = encoder.encode([(&b"grpc-status"[..], status)]);
    block_frame(out, &block, END_STREAM, id);
}

/// The `name` (field 1) of a `HelloRequest`'s bytes; empty when it has none. Other
/// fields are skipped; a malformed message reads as far as it goes.
pub fn request_name(msg: &[u8]) -> Vec<u8> {
    let mut b = msg;
    let mut name = Vec::new();
    while let Some(key) = varint(&mut b) {
        let len = match key & 7 {
            0 => {
                if varint(&mut b).is_none() {
                    break;
                }
                continue;
            }
            1 => 8,
            5 => 4,
            2 => match varint(&mut b) {
                Some(n) => n as usize,
                None => break,
            },
            _ => break,
        };
        if b.len() < len {
            break;
        }
        if key == 0x0a {
            name = b[..len].to_vec();
        }
        b = &b[len..];
    }
    name
}

pub(crate) fn varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let (&byte, rest) = b.split_first()?;
        *b = rest;
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// A `HelloReply` whose message is `hello NAME`.
pub fn hello_reply(name: &[u8]) -> Vec<u8> {
    let text = [&b"hello "[..], name].concat();
    let mut out = vec![0x0a];
    let mut n = text.len();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(&text);
    out
}

/// `msg` behind gRPC's prefix, with compressed flag `flag`.
fn prefixed(flag: u8, msg: &[u8]) -> Vec<u8> {
    let mut out = vec![flag];
    out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

/// The messages of a request's body (each behind its prefix); a message cut short ends
/// the list.
pub fn request_messages(mut body: &[u8]) -> Vec<&[u8]> {
    let mut all = Vec::new();
    while body.len() >= 5 {
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let Some(msg) = body.get(5..5 + len) else {
            break;
        };
        all.push(msg);
        body = &body[5 + len..];
    }
    all
}

/// The messages of a request's body with their compressed flags.
fn flagged_messages(mut body: &[u8]) -> Vec<(u8, &[u8])> {
    let mut all = Vec::new();
    while body.len() >= 5 {
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let Some(msg) = body.get(5..5 + len) else {
            break;
        };
        all.push((body[0], msg));
        body = &body[5 + len..];
    }
    all
}

/// `msg` inflated (gzip), at most 1 MiB of it; what inflates, for data that is not gzip.
fn inflate(msg: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    let _ = flate2::read::GzDecoder::new(msg)
        .take(1 << 20)
        .read_to_end(&mut out);
    out
}

/// `msg` compressed with gzip behind gRPC's prefix (flag 1).
fn gzipped(msg: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = e.write_all(msg);
    prefixed(1, &e.finish().unwrap_or_default())
}

/// A `HelloReply` whose message is `hello ` and `len` bytes of `a`, compressed: about a
/// thousandth of `len`.
fn bomb(len: usize) -> Vec<u8> {
    gzipped(&hello_reply(&vec![b'a'; len]))
}

/// The name a call's request gives: its one message's, or the names of a stream of
/// messages joined with commas (a message compressed with gzip inflated first).
fn names(body: &[u8]) -> Vec<u8> {
    let each: Vec<Vec<u8>> = flagged_messages(body)
        .into_iter()
        .map(|(flag, m)| match flag {
            1 => request_name(&inflate(m)),
            _ => request_name(m),
        })
        .collect();
    match each.len() {
        0 => request_name(body.get(5..).unwrap_or_default()),
        _ => each.join(&b","[..]),
    }
}

/// The DATA frame of a server stream's reply to `body` (the [`GrpcBehavior::Endless`]
/// stream's, written again and again).
pub(crate) fn reply_frame(id: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    data_frame(&mut out, &prefixed(0, &hello_reply(&names(body))), 0, id);
    out
}

/// Writes a server stream's replies to stream `id` for `g` ([`GrpcBehavior::Stream`] and
/// the hostile streams), after its headers; true when the answer is whole.
fn stream(out: &mut Vec<u8>, id: u32, g: GrpcBehavior, body: &[u8]) -> bool {
    let k = match g {
        GrpcBehavior::Stream(k) | GrpcBehavior::ResetMidMessage(k) | GrpcBehavior::HugeAfter(k) => {
            k
        }
        GrpcBehavior::Endless => 1,
        _ => return false,
    };
    let one = reply_frame(id, body);
    for _ in 0..k {
        out.extend_from_slice(&one);
    }
    match g {
        GrpcBehavior::ResetMidMessage(_) => {
            let framed = prefixed(0, &hello_reply(&names(body)));
            data_frame(out, &framed[..framed.len() / 2], 0, id);
            head(out, 4, RST_STREAM, 0, id);
            out.extend_from_slice(&INTERNAL_ERROR.to_be_bytes());
            true
        }
        GrpcBehavior::HugeAfter(_) => {
            data_frame(out, &[0, 0xff, 0xff, 0xff, 0xff, b'a', b'b', b'c'], 0, id);
            false
        }
        // The endless stream goes on (the connection writes its next replies).
        GrpcBehavior::Endless => true,
        _ => false,
    }
}

/// What a call to `path` gets when the server serves reflection as `g` says: a
/// behaviour to answer with (the Greeter's, or a version not served), or the message of
/// a reflection reply.
fn reflected(g: GrpcBehavior, path: &str, body: &[u8]) -> Result<GrpcBehavior, Vec<u8>> {
    let GrpcBehavior::Reflection(r) = g else {
        return Ok(g);
    };
    let msg = request_messages(body).first().copied().unwrap_or_default();
    match reflection::answer(r, path, msg) {
        Some(Ok(reply)) => Err(reply),
        Some(Err(code)) => Ok(GrpcBehavior::TrailersOnly(code)),
        None => Ok(GrpcBehavior::Greeter),
    }
}

/// Writes the answer to the call to `path` on stream `id` whose request body (prefix
/// included) is `body`, header blocks encoded by `encoder`.
pub(crate) fn answer(
    out: &mut Vec<u8>,
    encoder: &mut loona_hpack::Encoder<'static>,
    id: u32,
    g: GrpcBehavior,
    path: &str,
    body: &[u8],
) {
    let (g, reply) = match reflected(g, path, body) {
        Ok(g) => (g, hello_reply(&names(body))),
        Err(reflection) => (GrpcBehavior::Greeter, reflection),
    };
    let mut head: Vec<(&[u8], &[u8])> =
        vec![(b":status", b"200"), (b"content-type", b"application/grpc")];
    if let GrpcBehavior::TrailersOnly(code) = g {
        let code = code.to_string();
        head.push((b"grpc-status", code.as_bytes()));
        let block = encoder.encode(head);
        return block_frame(out, &block, END_STREAM, id);
    }
    if g == GrpcBehavior::Disagree {
        head.push((b"grpc-status", b"0"));
    }
    match g {
        GrpcBehavior::Gzip | GrpcBehavior::GzipBomb | GrpcBehavior::EchoGzip => {
            head.push((b"grpc-encoding", b"gzip"))
        }
        GrpcBehavior::UnknownEncoding => head.push((b"grpc-encoding", b"snappy")),
        _ => {}
    }
    let block = encoder.encode(head);
    block_frame(out, &block, 0, id);
    let streamed = matches!(
        g,
        GrpcBehavior::Stream(_)
            | GrpcBehavior::Endless
            | GrpcBehavior::ResetMidMessage(_)
            | GrpcBehavior::HugeAfter(_)
    );
    if streamed && stream(out, id, g, body) {
        return;
    }
    let data = match g {
        _ if streamed => vec![],
        GrpcBehavior::HugePrefix => vec![0, 0xff, 0xff, 0xff, 0xff, b'a', b'b', b'c'],
        GrpcBehavior::Compressed | GrpcBehavior::UnknownEncoding => prefixed(1, &reply),
        GrpcBehavior::Gzip => gzipped(&reply),
        GrpcBehavior::GzipBomb => {
            static BOMB: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
            BOMB.get_or_init(|| bomb(8 << 20)).clone()
        }
        GrpcBehavior::WrongType => prefixed(0, &[0x08, 0x01]),
        GrpcBehavior::EndsAfterHeaders => vec![],
        GrpcBehavior::Echo => prefixed(0, body.get(5..).unwrap_or_default()),
        GrpcBehavior::EchoGzip => match flagged_messages(body).first() {
            Some(&(1, msg)) => gzipped(&inflate(msg)),
            Some(&(_, msg)) => gzipped(msg),
            None => gzipped(&[]),
        },
        _ => prefixed(0, &reply),
    };
    if g == GrpcBehavior::SplitEveryByte {
        for b in &data {
            data_frame(out, std::slice::from_ref(b), 0, id);
        }
    } else if !data.is_empty() {
        data_frame(out, &data, 0, id);
    }
    let status: &[u8] = match g {
        GrpcBehavior::EndsAfterHeaders | GrpcBehavior::EndsAfterMessage => {
            return data_frame(out, &[], END_STREAM, id);
        }
        GrpcBehavior::Disagree => b"13",
        GrpcBehavior::NotANumber => b"ok",
        _ => b"0",
    };
    trailers(out, encoder, id, status);
}

fn block_frame(out: &mut Vec<u8>, block: &[u8], end: u8, id: u32) {
    head(out, block.len(), HEADERS, END_HEADERS | end, id);
    out.extend_from_slice(block);
}

fn data_frame(out: &mut Vec<u8>, data: &[u8], end: u8, id: u32) {
    head(out, data.len(), DATA, end, id);
    out.extend_from_slice(data);
}

/// An HTTP/2 frame's 9-byte head.
fn head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_and_greeted() {
        // name "x", times 7, then name "bob" (the last one wins, as protobuf's).
        let req = [0x0a, 1, b'x', 0x10, 7, 0x0a, 3, b'b', b'o', b'b'];
        assert_eq!(request_name(&req), b"bob");
        assert_eq!(request_name(&[]), b"");
        assert_eq!(request_name(&[0x0a, 9, b'x']), b"");
        assert_eq!(hello_reply(b"bob"), b"\x0a\x09hello bob");
        let long = vec![b'n'; 200];
        assert_eq!(&hello_reply(&long)[..3], &[0x0a, 0xce, 0x01]);
    }

    #[test]
    fn a_chat_answers_each_whole_message_as_it_comes() {
        let bob = prefixed(0, &[0x0a, 3, b'b', b'o', b'b']);
        let mut enc = loona_hpack::Encoder::new();
        let (mut out, mut c) = (Vec::new(), Chat::default());
        // One message and half of the next: one answered, the half kept.
        let mut body = [&bob[..], &bob[..4]].concat();
        assert_eq!(
            chat(&mut out, &mut enc, 1, GrpcBehavior::Chat, &mut body, &mut c),
            (1, 0)
        );
        assert_eq!(body, &bob[..4]);
        let reply = prefixed(0, &hello_reply(b"bob"));
        assert!(out.ends_with(&reply), "the reply follows the headers");
        out.clear();
        body.extend_from_slice(&bob[4..]);
        assert_eq!(
            chat(&mut out, &mut enc, 1, GrpcBehavior::Chat, &mut body, &mut c),
            (1, 0)
        );
        assert_eq!(out.len(), 9 + reply.len(), "no second headers");
        // Ends after one: the second message read ends the stream unanswered.
        let (mut out, mut c) = (Vec::new(), Chat::default());
        let mut body = bob.repeat(3);
        let g = GrpcBehavior::ChatEndsAfter(1);
        assert_eq!(chat(&mut out, &mut enc, 1, g, &mut body, &mut c), (2, 0));
        assert!(c.ended);
        assert_eq!(body, bob, "nothing read past the end");
        // A compressed message is counted and inflated to read its name.
        let (mut out, mut c) = (Vec::new(), Chat::default());
        let mut body = gzipped(&[0x0a, 3, b'b', b'o', b'b']);
        let g = GrpcBehavior::ChatGzip;
        assert_eq!(chat(&mut out, &mut enc, 1, g, &mut body, &mut c), (1, 1));
        assert!(
            out.ends_with(&gzipped(&hello_reply(b"bob"))),
            "a gzipped hello bob"
        );
    }

    #[test]
    fn a_stream_of_names_is_greeted_at_once() {
        let one = prefixed(0, &[0x0a, 3, b'b', b'o', b'b']);
        let two = [&one[..], &prefixed(0, &[0x0a, 1, b'x'])].concat();
        assert_eq!(names(&one), b"bob");
        assert_eq!(names(&two), b"bob,x");
        assert_eq!(request_messages(&two[..two.len() - 1]).len(), 1);
        assert_eq!(names(&[]), b"");
    }
}
