//! The HTTP/2 connection ([`shootout_engine::h2::conn`]) against each rule RFC 9113
//! §§3–6 sets for a client receiving from a server: one case per MUST (and per SHOULD worth
//! holding to), each naming its section. HPACK decoding errors (RFC 7541) are here too, as
//! §4.3 makes every one of them a connection error.
//!
//! A case is the server's bytes (its SETTINGS preface, then the case's frames, between
//! which the client may cancel streams) and what the client must make of them:
//! - a **connection error**: `feed` returns the code, and the last frame written is the one
//!   GOAWAY that carries it (last stream 0: a client accepts no stream from the server),
//!   with nothing after it (§5.4.1);
//! - or the connection is **kept**: what it wrote in reply (a RST_STREAM for a stream error,
//!   §5.4.2; PING and SETTINGS acknowledgements; request body DATA; WINDOW_UPDATE aside),
//!   which streams were answered, failed or left unprocessed by a GOAWAY, whether it takes
//!   new streams; and it must still answer a PING fed after the case.
//!
//! As in the worker, the slot of a stream an event named is freed after each `feed`: the
//! connection has to know a closed stream without its slot.
//!
//! Where the RFC leaves the choice to the client (MAY), the case takes the stricter reading
//! the RFC allows and says so. Every case is delivered whole and one byte per `feed` call;
//! both deliveries must give the expected outcome. A panic is an outcome too (a broken
//! one). The test lists every case that disagrees before failing.

use shootout_engine::h2::conn::{ConnError, Connection, Event};
use shootout_engine::h2::frame as f;
use shootout_engine::h2::request::{prepare_one, Prepared};
use shootout_engine::Begin;
use shootout_model::{RequestSpec, Target};
use std::cell::Cell;
use std::fmt;
use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::sync::Once;
use std::time::Instant;

/// Error codes (RFC 9113 §7) beyond those the engine names.
const INTERNAL_ERROR: u32 = 0x2;
const STREAM_CLOSED: u32 = 0x5;
/// SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §6.5.2).
const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;
/// The largest flow-control window (2^31 − 1).
const MAX_WINDOW: u32 = 0x7fff_ffff;

/// Stream slots of the connection under test.
const SLOTS: usize = 4;
/// The payload of the PING that checks a kept connection still works.
const PROBE: [u8; 8] = *b"alive?!!";

/// A frame the client wrote.
#[derive(Clone, PartialEq, Eq)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

impl fmt::Debug for Frame {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.payload;
        let word = |i: usize| {
            p.get(i..i + 4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        match self.kind {
            f::RST_STREAM => write!(
                out,
                "RST_STREAM({}, {})",
                self.stream,
                word(0).map_or("?".into(), code_name)
            ),
            f::GOAWAY => write!(
                out,
                "GOAWAY(last {}, {})",
                word(0).unwrap_or(0),
                word(4).map_or("?".into(), code_name)
            ),
            f::PING => write!(
                out,
                "PING({}{:?})",
                if self.flags & f::ACK != 0 {
                    "ack, "
                } else {
                    ""
                },
                String::from_utf8_lossy(p)
            ),
            f::SETTINGS if self.flags & f::ACK != 0 => write!(out, "SETTINGS(ack)"),
            f::DATA => write!(
                out,
                "DATA({}, {} bytes{})",
                self.stream,
                p.len(),
                if self.flags & f::END_STREAM != 0 {
                    ", end"
                } else {
                    ""
                }
            ),
            k => write!(
                out,
                "frame(type {k}, stream {}, flags {:#x}, {} bytes)",
                self.stream,
                self.flags,
                p.len()
            ),
        }
    }
}

fn code_name(code: u32) -> String {
    shootout_model::h2_error_name(code).map_or_else(|| format!("{code:#x}"), str::to_string)
}

/// What a connection kept working did.
#[derive(Clone, PartialEq, Eq, Default)]
struct Kept {
    /// Frames written in reply, in order (WINDOW_UPDATE aside).
    wrote: Vec<Frame>,
    /// Streams that got their whole answer.
    answered: Vec<u32>,
    /// Streams that ended without one.
    failed: Vec<u32>,
    /// Streams a GOAWAY or a REFUSED_STREAM left unprocessed.
    unprocessed: Vec<u32>,
    /// The connection takes no new stream.
    spent: bool,
    /// How many more streams it would open now (looked at only where the case says).
    room: Option<usize>,
}

impl Kept {
    fn wrote(mut self, frames: &[Frame]) -> Self {
        self.wrote.extend_from_slice(frames);
        self
    }
    fn answered(mut self, ids: &[u32]) -> Self {
        self.answered.extend_from_slice(ids);
        self
    }
    fn failed(mut self, ids: &[u32]) -> Self {
        self.failed.extend_from_slice(ids);
        self
    }
    fn unprocessed(mut self, ids: &[u32]) -> Self {
        self.unprocessed.extend_from_slice(ids);
        self
    }
    fn spent(mut self) -> Self {
        self.spent = true;
        self
    }
    fn room(mut self, n: usize) -> Self {
        self.room = Some(n);
        self
    }
}

impl fmt::Debug for Kept {
    /// Only what happened: `kept(wrote [PING(ack, "…")], answered [1])`.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.wrote.is_empty() {
            parts.push(format!("wrote {:?}", self.wrote));
        }
        for (name, ids) in [
            ("answered", &self.answered),
            ("failed", &self.failed),
            ("unprocessed", &self.unprocessed),
        ] {
            if !ids.is_empty() {
                parts.push(format!("{name} {ids:?}"));
            }
        }
        if self.spent {
            parts.push("no new streams".into());
        }
        if let Some(n) = self.room {
            parts.push(format!("room for {n}"));
        }
        if parts.is_empty() {
            parts.push("nothing".into());
        }
        write!(out, "kept({})", parts.join(", "))
    }
}

/// What the client made of a case.
#[derive(Clone, PartialEq, Eq)]
enum Outcome {
    /// A connection error with this code, told to the server by GOAWAY.
    ConnError(u32),
    /// The connection was kept.
    Kept(Kept),
    /// Anything else, described.
    Broken(String),
}

impl fmt::Debug for Outcome {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::ConnError(code) => write!(out, "connection error {}", code_name(*code)),
            Outcome::Kept(k) => k.fmt(out),
            Outcome::Broken(what) => write!(out, "broken: {what}"),
        }
    }
}

impl From<Kept> for Outcome {
    fn from(k: Kept) -> Self {
        Outcome::Kept(k)
    }
}

fn conn(code: impl Into<u32>) -> Outcome {
    let code = code.into();
    Outcome::ConnError(code)
}

/// Nothing to do: no reply, no stream ended.
fn ignored() -> Kept {
    Kept::default()
}

/// A stream error: RST_STREAM with `code` for the stream, which fails.
fn stream_error(id: u32, code: impl Into<u32>) -> Kept {
    let code = code.into();
    ignored().wrote(&[reset(id, code)]).failed(&[id])
}

/// One thing the client does between the server's bytes.
enum Step {
    /// Bytes from the server.
    Server(Vec<u8>),
    /// The client gives up on this stream (RST_STREAM CANCEL).
    Cancel(u32),
}

struct Case {
    title: &'static str,
    /// The rule (RFC 9113 section unless another RFC is named), paraphrased.
    rule: &'static str,
    /// The server's connection preface (its SETTINGS; by default also the acknowledgement
    /// of ours).
    preface: Vec<u8>,
    /// Streams opened once the preface is in (ids 1, 3, 5, …).
    streams: usize,
    /// Request body bytes (0: a GET whose HEADERS end the stream).
    body: usize,
    steps: Vec<Step>,
    want: Outcome,
}

fn case(title: &'static str, rule: &'static str, input: Vec<u8>, want: impl Into<Outcome>) -> Case {
    Case {
        title,
        rule,
        preface: cat(&[settings(&[]), settings_ack()]),
        streams: 1,
        body: 0,
        steps: vec![Step::Server(input)],
        want: want.into(),
    }
}

impl Case {
    fn preface(mut self, bytes: Vec<u8>) -> Self {
        self.preface = bytes;
        self
    }
    fn streams(mut self, n: usize) -> Self {
        self.streams = n;
        self
    }
    fn body(mut self, n: usize) -> Self {
        self.body = n;
        self
    }
    /// Cancels stream `id` before the case's bytes arrive.
    fn cancel_first(mut self, id: u32) -> Self {
        self.steps.insert(0, Step::Cancel(id));
        self
    }
}

// Frames from the server.

fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// A frame with any header fields; `stream` is written as given (the reserved bit too).
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
    raw(f::SETTINGS, 0, 0, &p)
}

fn settings_ack() -> Vec<u8> {
    raw(f::SETTINGS, f::ACK, 0, &[])
}

fn ping(payload: &[u8; 8]) -> Vec<u8> {
    raw(f::PING, 0, 0, payload)
}

fn headers(stream: u32, flags: u8, block: &[u8]) -> Vec<u8> {
    raw(f::HEADERS, flags, stream, block)
}

fn cont(stream: u32, flags: u8, block: &[u8]) -> Vec<u8> {
    raw(f::CONTINUATION, flags, stream, block)
}

fn data(stream: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    raw(f::DATA, flags, stream, payload)
}

fn rst(stream: u32, code: impl Into<u32>) -> Vec<u8> {
    let code: u32 = code.into();
    raw(f::RST_STREAM, 0, stream, &code.to_be_bytes())
}

fn goaway(last: u32, code: impl Into<u32>) -> Vec<u8> {
    let code: u32 = code.into();
    raw(
        f::GOAWAY,
        0,
        0,
        &cat(&[last.to_be_bytes().to_vec(), code.to_be_bytes().to_vec()]),
    )
}

fn window(stream: u32, increment: u32) -> Vec<u8> {
    raw(f::WINDOW_UPDATE, 0, stream, &increment.to_be_bytes())
}

fn priority(stream: u32, depends_on: u32) -> Vec<u8> {
    let mut p = depends_on.to_be_bytes().to_vec();
    p.push(15);
    raw(f::PRIORITY, 0, stream, &p)
}

/// A whole answer with no body: `:status: 200`, END_HEADERS and END_STREAM.
fn ok(stream: u32) -> Vec<u8> {
    headers(stream, f::END_HEADERS | f::END_STREAM, &[S200])
}

/// `:status: 200` with a body to follow.
fn head200(stream: u32) -> Vec<u8> {
    headers(stream, f::END_HEADERS, &[S200])
}

// HPACK (RFC 7541), as much as the cases need.

/// `:status: 200` (static table index 8).
const S200: u8 = 0x88;
/// The first dynamic table entry (index 62).
const DYN1: u8 = 0xbe;

/// A literal field with incremental indexing and a new name (§6.2.1): it enters the
/// dynamic table.
fn lit_indexed(name: &str, value: &str) -> Vec<u8> {
    let mut out = vec![0x40, name.len() as u8];
    out.extend_from_slice(name.as_bytes());
    out.push(value.len() as u8);
    out.extend_from_slice(value.as_bytes());
    out
}

/// An integer with an N-bit prefix (§5.1), the bits above the prefix set from `pattern`.
fn int(out: &mut Vec<u8>, value: usize, prefix: u8, pattern: u8) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(pattern | value as u8);
        return;
    }
    out.push(pattern | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A literal field without indexing and a new name (§6.2.2), of any length.
fn lit_plain(name: &str, value: &str) -> Vec<u8> {
    let mut out = vec![0x00];
    for s in [name, value] {
        int(&mut out, s.len(), 7, 0);
        out.extend_from_slice(s.as_bytes());
    }
    out
}

/// A padded HEADERS payload of exactly `len` bytes: `:status: 200` and a long field, then
/// 255 bytes of padding or fewer.
fn padded_block(len: usize) -> Vec<u8> {
    let block = cat(&[vec![S200], lit_plain("x-fill", &"v".repeat(len - 268))]);
    let pad = len - 1 - block.len();
    assert!(pad <= 255, "{pad} bytes of padding");
    cat(&[vec![pad as u8], block, vec![0; pad]])
}

// Frames expected from the client.

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Frame {
    Frame {
        kind,
        flags,
        stream,
        payload: payload.to_vec(),
    }
}

fn reset(stream: u32, code: impl Into<u32>) -> Frame {
    let code: u32 = code.into();
    frame(f::RST_STREAM, 0, stream, &code.to_be_bytes())
}

fn pong(payload: &[u8; 8]) -> Frame {
    frame(f::PING, f::ACK, 0, payload)
}

fn ack() -> Frame {
    frame(f::SETTINGS, f::ACK, 0, &[])
}

/// Request body DATA: `n` bytes of the body (all `x`).
fn body(stream: u32, flags: u8, n: usize) -> Frame {
    frame(f::DATA, flags, stream, &vec![b'x'; n])
}

fn parse_frames(mut out: &[u8]) -> Vec<Frame> {
    let mut frames = Vec::new();
    while !out.is_empty() {
        assert!(out.len() >= 9, "the client wrote part of a frame header");
        let h = f::Head::parse(out[..9].try_into().expect("9 bytes"));
        assert!(out.len() >= 9 + h.len, "the client wrote part of a frame");
        frames.push(frame(h.kind, h.flags, h.stream, &out[9..9 + h.len]));
        out = &out[9 + h.len..];
    }
    frames
}

fn prepared(body: usize) -> Prepared {
    let target = Target::parse("http://127.0.0.1:8080/").unwrap();
    let req = if body == 0 {
        RequestSpec::default()
    } else {
        RequestSpec {
            method: "POST".into(),
            body: vec![b'x'; body],
            ..Default::default()
        }
    };
    prepare_one(&target, &req).unwrap()
}

/// One delivery of a case.
struct Drive {
    c: Connection,
    req: Prepared,
    now: Instant,
    one_byte: bool,
    /// The stream id of each slot, as opened.
    ids: [u32; SLOTS],
    kept: Kept,
    /// The connection said streams may open.
    ready: bool,
}

impl Drive {
    /// Feeds `bytes` whole or one byte per call; returns the error code, if any, and the
    /// frames written meanwhile.
    fn feed(&mut self, bytes: &[u8]) -> (Option<u32>, Vec<Frame>) {
        let size = if self.one_byte { 1 } else { bytes.len().max(1) };
        let mut wrote = Vec::new();
        for chunk in bytes.chunks(size) {
            let r = self.c.feed(chunk, &self.req, self.now);
            wrote.extend(parse_frames(&std::mem::take(&mut self.c.out)));
            self.take_events();
            if let Err(ConnError(code)) = r {
                return (Some(code.0), wrote);
            }
        }
        (None, wrote)
    }

    /// Records the events and, as the worker does after each read, frees the slots they
    /// name.
    fn take_events(&mut self) {
        for e in std::mem::take(&mut self.c.events) {
            let (list, slot) = match e {
                Event::Answered(s) | Event::Stopped(s) => (&mut self.kept.answered, s),
                Event::Failed(s, _) | Event::Rejected(s, _) => (&mut self.kept.failed, s),
                Event::Unprocessed(s) => (&mut self.kept.unprocessed, s),
                Event::Ready => {
                    self.ready = true;
                    continue;
                }
                Event::Reset(_) | Event::Goaway | Event::Replies(..) | Event::Echoes(..) => {
                    continue
                }
            };
            list.push(self.ids[slot]);
            self.c.free(slot);
        }
    }
}

/// The outcome of a connection error with `code`, given the frames written by the feed
/// that returned it.
fn conn_outcome(code: u32, wrote: &[Frame]) -> Outcome {
    let goaways = wrote.iter().filter(|w| w.kind == f::GOAWAY).count();
    let want = frame(
        f::GOAWAY,
        0,
        0,
        &cat(&[vec![0; 4], code.to_be_bytes().to_vec()]),
    );
    if goaways == 1 && wrote.last() == Some(&want) {
        Outcome::ConnError(code)
    } else {
        Outcome::Broken(format!(
            "connection error {} with {wrote:?} written, not one GOAWAY(last 0, {}) last",
            code_name(code),
            code_name(code)
        ))
    }
}

fn drive(case: &Case, one_byte: bool) -> Outcome {
    let mut d = Drive {
        c: Connection::new(SLOTS, None),
        req: prepared(case.body),
        now: Instant::now(),
        one_byte,
        ids: [0; SLOTS],
        kept: Kept::default(),
        ready: false,
    };
    d.c.start();
    d.c.out.clear();
    let (err, wrote) = d.feed(&case.preface);
    if let Some(code) = err {
        return conn_outcome(code, &wrote);
    }
    // §3.4: the server's preface SETTINGS is acknowledged, and streams may open.
    let ready = d.ready;
    if wrote != [ack()] || !ready {
        return Outcome::Broken(format!(
            "the server's preface got {wrote:?} (ready: {ready}), not one SETTINGS acknowledgement (§3.4)"
        ));
    }
    for _ in 0..case.streams {
        if d.c.room() == 0 {
            return Outcome::Broken("no room to open the case's streams".into());
        }
        let slot = d.c.open(&d.req, Begin::at(d.now, d.now));
        d.ids[slot] = d.c.stream(slot).id;
    }
    d.c.out.clear();
    for step in &case.steps {
        match step {
            Step::Server(bytes) => {
                let (err, wrote) = d.feed(bytes);
                if let Some(code) = err {
                    return conn_outcome(code, &wrote);
                }
                if wrote.iter().any(|w| w.kind == f::GOAWAY) {
                    return Outcome::Broken(format!("GOAWAY written with no error: {wrote:?}"));
                }
                let replies = wrote.into_iter().filter(|w| w.kind != f::WINDOW_UPDATE);
                d.kept.wrote.extend(replies);
            }
            Step::Cancel(id) => {
                let slot = d
                    .ids
                    .iter()
                    .position(|i| i == id)
                    .expect("an opened stream");
                d.c.cancel(slot);
                d.c.out.clear();
            }
        }
    }
    d.kept.spent = d.c.spent();
    if matches!(&case.want, Outcome::Kept(k) if k.room.is_some()) {
        d.kept.room = Some(d.c.room());
    }
    // A kept connection still works: a PING gets its acknowledgement.
    let (err, wrote) = d.feed(&ping(&PROBE));
    if err.is_some() || wrote != [pong(&PROBE)] {
        return Outcome::Broken(format!(
            "after {:?}, a PING got {wrote:?}{}",
            d.kept,
            err.map_or(String::new(), |c| format!(
                " and connection error {}",
                code_name(c)
            ))
        ));
    }
    Outcome::Kept(d.kept)
}

thread_local! {
    /// This thread is delivering a case: a panic becomes its outcome, not a report.
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the panic report quiet while a case is delivered (its message is the outcome).
fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let report = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !DELIVERING.with(Cell::get) {
                report(info);
            }
        }));
    });
}

fn deliver(case: &Case, one_byte: bool) -> Outcome {
    quiet_panics();
    DELIVERING.with(|d| d.set(true));
    let r = catch_unwind(AssertUnwindSafe(|| drive(case, one_byte)));
    DELIVERING.with(|d| d.set(false));
    r.unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Outcome::Broken(format!("panicked: {msg}"))
    })
}

fn table() -> Vec<Case> {
    use f::{
        CANCEL, COMPRESSION_ERROR as COMPRESSION, END_HEADERS as EH, END_STREAM as ES,
        FLOW_CONTROL_ERROR as FLOW, FRAME_SIZE_ERROR as SIZE, NO_ERROR, PADDED, PRIORITY_FLAG,
        PROTOCOL_ERROR as PROTOCOL, REFUSED_STREAM,
    };
    let big = |n: usize| vec![b'x'; n];
    vec![
        // §3.4 The connection preface.
        case(
            "an empty SETTINGS frame is a whole server preface",
            "§3.4: the server preface is a SETTINGS frame, possibly empty, and is acknowledged",
            vec![],
            ignored(),
        )
        .preface(settings(&[])),
        case(
            "a server preface that is a PING",
            "§3.4: the server's first frame MUST be SETTINGS; an invalid preface is a connection error PROTOCOL_ERROR (the GOAWAY it MAY omit is sent: stricter)",
            vec![],
            conn(PROTOCOL),
        )
        .preface(cat(&[ping(b"01234567"), settings(&[])]))
        .streams(0),
        case(
            "a server preface that is a SETTINGS acknowledgement",
            "§3.4: an acknowledgement is not the server's SETTINGS; an invalid preface is a connection error PROTOCOL_ERROR",
            vec![],
            conn(PROTOCOL),
        )
        .preface(cat(&[settings_ack(), settings(&[])]))
        .streams(0),
        case(
            "a server preface that is an HTTP/1.1 answer",
            "§3.4: an invalid preface is a connection error PROTOCOL_ERROR (its first 9 bytes also read as an oversized frame; the preface rule names the fault)",
            vec![],
            conn(PROTOCOL),
        )
        .preface(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n".to_vec())
        .streams(0),
        // §4.1 Frame format.
        case(
            "frames of unknown types are ignored",
            "§4.1, §5.5: frames of unknown type MUST be ignored and discarded",
            cat(&[raw(0xfa, 0xff, 0, b"??"), raw(0x20, 0, 1, &big(100)), ok(1)]),
            ignored().answered(&[1]),
        ),
        case(
            "unknown flags on a PING are ignored",
            "§4.1: unused flags MUST be ignored on receipt; §6.7: the PING is answered",
            raw(f::PING, 0xfe, 0, b"flagged!"),
            ignored().wrote(&[pong(b"flagged!")]),
        ),
        case(
            "unknown flags on a HEADERS are ignored",
            "§4.1: unused flags MUST be ignored on receipt",
            headers(1, EH | ES | 0xd2, &[S200]),
            ignored().answered(&[1]),
        ),
        case(
            "the reserved bit of a stream identifier is ignored",
            "§4.1: the reserved bit MUST be ignored when receiving",
            headers(0x8000_0001, EH | ES, &[S200]),
            ignored().answered(&[1]),
        ),
        case(
            "the reserved bit of a WINDOW_UPDATE increment is ignored",
            "§6.9: the increment is 31 bits after a reserved bit; §4.1: reserved bits are ignored",
            window(0, 0x8000_0001),
            ignored(),
        ),
        // §4.2 Frame size.
        case(
            "a DATA frame of 16,384 bytes is taken and the connection keeps working",
            "§4.2: every implementation MUST receive frames up to 2^14 bytes",
            cat(&[head200(1), data(1, ES, &big(16_384))]),
            ignored().answered(&[1]),
        ),
        case(
            "a HEADERS frame of 16,384 bytes is taken",
            "§4.2: every implementation MUST receive frames up to 2^14 bytes",
            headers(1, EH | ES | PADDED, &padded_block(16_384)),
            ignored().answered(&[1]),
        ),
        case(
            "a DATA frame over 16,384 bytes",
            "§4.2: a frame over our SETTINGS_MAX_FRAME_SIZE is FRAME_SIZE_ERROR; on a stream it MAY be a stream error, a connection error is chosen (stricter, §5.4.1)",
            cat(&[head200(1), data(1, ES, &big(16_385)), ping(b"too late")]),
            conn(SIZE),
        ),
        case(
            "a HEADERS frame over 16,384 bytes",
            "§4.2: a frame size error in a frame carrying a field block MUST be a connection error FRAME_SIZE_ERROR",
            headers(1, EH | ES | PADDED, &padded_block(16_385)),
            conn(SIZE),
        ),
        case(
            "a SETTINGS frame over 16,384 bytes",
            "§4.2: a frame size error in a SETTINGS frame MUST be a connection error FRAME_SIZE_ERROR",
            settings(&[(0xf000, 0); 2731]),
            conn(SIZE),
        ),
        case(
            "a padded DATA frame too short for its Pad Length",
            "§4.2: a frame too small for its mandatory fields MUST get FRAME_SIZE_ERROR (a connection error here: stricter, §5.4.1)",
            cat(&[head200(1), data(1, PADDED, &[])]),
            conn(SIZE),
        ),
        case(
            "a padded HEADERS frame too short for its Pad Length",
            "§4.2: a frame too small for its mandatory fields MUST get FRAME_SIZE_ERROR, a connection error for a field block",
            headers(1, EH | ES | PADDED, &[]),
            conn(SIZE),
        ),
        case(
            "a HEADERS frame with the PRIORITY flag too short for its priority fields",
            "§4.2: a frame too small for its mandatory fields MUST get FRAME_SIZE_ERROR, a connection error for a field block",
            headers(1, EH | ES | PRIORITY_FLAG, &[0, 0, 0, 0]),
            conn(SIZE),
        ),
        // §4.3 Field section compression and decompression.
        case(
            "a header block with index 0",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §6.1: index 0 is an error)",
            headers(1, EH | ES, &[0x80]),
            conn(COMPRESSION),
        ),
        case(
            "a header block with an index past the dynamic table",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §2.3.3)",
            headers(1, EH | ES, &[S200, DYN1]),
            conn(COMPRESSION),
        ),
        case(
            "a header block that ends inside an integer",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §5.1)",
            headers(1, EH | ES, &[S200, 0xff]),
            conn(COMPRESSION),
        ),
        case(
            "a header block whose string runs past its end",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §5.2)",
            headers(1, EH | ES, &[S200, 0x40, 0x05, b'a']),
            conn(COMPRESSION),
        ),
        case(
            "a header block with an indexed name and no value",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §6.2.1)",
            headers(1, EH | ES, &[S200, 0x5c]),
            conn(COMPRESSION),
        ),
        case(
            "a dynamic table size update after a header field",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §4.2: the update comes first in a block)",
            headers(1, EH | ES, &[S200, 0x20]),
            conn(COMPRESSION),
        ),
        case(
            "a dynamic table size update over our SETTINGS_HEADER_TABLE_SIZE",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §6.3: over the 4,096 announced)",
            headers(1, EH | ES, &[0x3f, 0xe2, 0x1f, S200]),
            conn(COMPRESSION),
        ),
        case(
            "a Huffman string with padding that is not the EOS prefix",
            "§4.3: a decoding error MUST be a connection error COMPRESSION_ERROR (RFC 7541 §5.2)",
            headers(1, EH | ES, &[S200, 0x40, 0x81, 0x00, 0x00]),
            conn(COMPRESSION),
        ),
        case(
            "a header block interrupted by a PING",
            "§4.3, §6.2: a field block's frames MUST be contiguous; anything else is a connection error PROTOCOL_ERROR",
            cat(&[headers(1, ES, &[S200]), ping(b"01234567"), cont(1, EH, &[])]),
            conn(PROTOCOL),
        ),
        case(
            "a header block continued on another stream",
            "§4.3, §6.2: a field block's frames MUST be on one stream; otherwise a connection error PROTOCOL_ERROR",
            cat(&[headers(1, ES, &[S200]), cont(3, EH, &[])]),
            conn(PROTOCOL),
        )
        .streams(2),
        case(
            "a header block interrupted by a frame of unknown type",
            "§5.5: extension frames in the middle of a field block MUST be a connection error PROTOCOL_ERROR",
            cat(&[headers(1, ES, &[S200]), raw(0xfa, 0, 1, b"?"), cont(1, EH, &[])]),
            conn(PROTOCOL),
        ),
        case(
            "a header block interrupted by a PRIORITY",
            "§6.3: PRIORITY cannot come between the frames of a field block; §6.2: a connection error PROTOCOL_ERROR",
            cat(&[headers(1, ES, &[S200]), priority(1, 0), cont(1, EH, &[])]),
            conn(PROTOCOL),
        ),
        case(
            "a header block for a stream we reset is still decoded",
            "§4.3, §5.1 (closed): a block for a reset stream MUST still be decompressed: the next block uses the table entry it added",
            cat(&[
                headers(1, EH | ES, &cat(&[vec![S200], lit_indexed("x-a", "b")])),
                headers(3, EH | ES, &[S200, DYN1]),
            ]),
            ignored().answered(&[3]),
        )
        .streams(2)
        .cancel_first(1),
        case(
            "a header block in CONTINUATION frames for a stream we reset is still decoded",
            "§4.3, §5.1 (closed), §6.10: the block is reassembled and decompressed even though discarded",
            cat(&[
                headers(1, ES, &[S200, 0x40, 0x03, b'x']),
                cont(1, 0, b"-a"),
                cont(1, EH, &[0x01, b'b']),
                headers(3, EH | ES, &[S200, DYN1]),
            ]),
            ignored().answered(&[3]),
        )
        .streams(2)
        .cancel_first(1),
        case(
            "a header block for a stream a GOAWAY left unprocessed is still decoded",
            "§6.8: after a GOAWAY, HEADERS and CONTINUATION MUST still be minimally processed for the compression state",
            cat(&[
                goaway(1, NO_ERROR),
                headers(3, EH | ES, &cat(&[vec![S200], lit_indexed("x-a", "b")])),
                headers(1, EH | ES, &[S200, DYN1]),
            ]),
            ignored().answered(&[1]).unprocessed(&[3]).spent(),
        )
        .streams(2),
        case(
            "a header block that fails its stream still updates the table",
            "§4.3: every block is decompressed; a response without :status is a stream error PROTOCOL_ERROR (§8.1.1)",
            cat(&[
                headers(1, EH | ES, &lit_indexed("x-a", "b")),
                headers(3, EH | ES, &[S200, DYN1]),
            ]),
            stream_error(1, PROTOCOL).answered(&[3]),
        )
        .streams(2),
        // §5.1 Stream states.
        case(
            "DATA on an idle stream",
            "§5.1 (idle): any frame but HEADERS or PRIORITY on an idle stream MUST be a connection error PROTOCOL_ERROR",
            data(5, ES, b"x"),
            conn(PROTOCOL),
        ),
        case(
            "HEADERS on an idle stream the client never opened",
            "§5.1.1: an unexpected stream identifier MUST be a connection error PROTOCOL_ERROR",
            ok(5),
            conn(PROTOCOL),
        ),
        case(
            "HEADERS on a server-initiated stream",
            "§5.1 (idle): HEADERS on a stream the server initiates MUST be a connection error PROTOCOL_ERROR",
            ok(2),
            conn(PROTOCOL),
        ),
        case(
            "WINDOW_UPDATE on an idle stream",
            "§5.1 (idle): any frame but HEADERS or PRIORITY on an idle stream MUST be a connection error PROTOCOL_ERROR",
            window(5, 100),
            conn(PROTOCOL),
        ),
        case(
            "PRIORITY on idle and server-initiated streams is ignored",
            "§5.1, §6.3: PRIORITY may arrive in any stream state, idle included",
            cat(&[priority(5, 0), priority(2, 1), ok(1)]),
            ignored().answered(&[1]),
        ),
        case(
            "frames on a stream we reset are ignored",
            "§5.1 (closed), §5.4.2: after our RST_STREAM, frames the server sent before seeing it MUST be taken and discarded, with no RST_STREAM in reply to its RST_STREAM",
            cat(&[
                head200(1),
                data(1, 0, b"late"),
                window(1, 100),
                priority(1, 0),
                data(1, ES, b""),
                rst(1, CANCEL),
            ]),
            ignored(),
        )
        .cancel_first(1),
        case(
            "DATA on a stream the server ended",
            "§6.1: DATA on a stream neither open nor half-closed (local) MUST be at least a stream error STREAM_CLOSED; the stream is closed, where §5.1 lets it be a connection error STREAM_CLOSED (stricter)",
            cat(&[ok(1), data(1, ES, b"late")]),
            conn(STREAM_CLOSED),
        ),
        case(
            "HEADERS on a stream the server ended",
            "§5.1 (closed, half-closed remote): frames other than WINDOW_UPDATE, PRIORITY, RST_STREAM after END_STREAM are STREAM_CLOSED; a connection error is chosen (stricter, §5.1)",
            cat(&[ok(1), ok(1)]),
            conn(STREAM_CLOSED),
        ),
        case(
            "WINDOW_UPDATE, PRIORITY and RST_STREAM on a stream the server ended are not errors",
            "§6.9: a WINDOW_UPDATE on a closed stream MUST NOT be an error; §5.1: nor a RST_STREAM or PRIORITY; §5.4.2: no RST_STREAM in reply",
            cat(&[ok(1), window(1, 100), priority(1, 0), rst(1, NO_ERROR)]),
            ignored().answered(&[1]),
        ),
        case(
            "frames on a stream after our stream error are ignored",
            "§5.4.2: the endpoint that reset a stream MUST be prepared for its frames, and SHOULD NOT send a second RST_STREAM",
            cat(&[
                headers(1, EH, &lit_indexed("x-a", "b")),
                data(1, 0, b"late"),
                headers(1, EH | ES, &[S200]),
            ]),
            stream_error(1, PROTOCOL),
        ),
        case(
            "a RST_STREAM from the server fails the stream and is not answered",
            "§6.4: the stream closes; §5.4.2: an endpoint MUST NOT send a RST_STREAM in reply to a RST_STREAM",
            rst(1, INTERNAL_ERROR),
            ignored().failed(&[1]),
        ),
        // §5.1.2 Stream concurrency.
        case(
            "SETTINGS_MAX_CONCURRENT_STREAMS bounds the streams the client opens",
            "§5.1.2: endpoints MUST NOT exceed the limit set by their peer",
            vec![],
            ignored().room(0),
        )
        .preface(cat(&[settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 1)]), settings_ack()])),
        case(
            "a raised SETTINGS_MAX_CONCURRENT_STREAMS takes effect",
            "§5.1.2, §6.5.3: a SETTINGS MUST be applied on receipt, and acknowledged",
            settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 3)]),
            ignored().wrote(&[ack()]).room(2),
        )
        .preface(cat(&[settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 1)]), settings_ack()])),
        case(
            "a SETTINGS_MAX_CONCURRENT_STREAMS of 0 is not special",
            "§6.5.2: a value of 0 SHOULD NOT be treated as special: no stream until it rises",
            settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 2)]),
            ignored().wrote(&[ack()]).room(2),
        )
        .preface(cat(&[settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 0)]), settings_ack()]))
        .streams(0),
        case(
            "a SETTINGS_MAX_CONCURRENT_STREAMS below the open streams lets them finish",
            "§5.1.2: streams over a lowered limit may complete; no new one opens over it",
            cat(&[settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 1)]), ok(3)]),
            ignored().wrote(&[ack()]).answered(&[3]).room(0),
        )
        .streams(2),
        case(
            "settings apply in order: the last value of one counts",
            "§6.5, §6.5.3: values MUST be processed in the order they appear; the last one seen is the value",
            settings(&[
                (f::SETTINGS_MAX_CONCURRENT_STREAMS, 0),
                (f::SETTINGS_MAX_CONCURRENT_STREAMS, 2),
            ]),
            ignored().wrote(&[ack()]).room(1),
        ),
        // §5.4 Error handling, §5.5 extensions.
        case(
            "a connection error ends the processing of what follows it",
            "§5.4.1: after the GOAWAY of a connection error the connection closes; nothing later is answered",
            cat(&[raw(f::PING, 0, 1, b"01234567"), ping(b"too late"), ok(1)]),
            conn(PROTOCOL),
        ),
        case(
            "unknown settings are ignored",
            "§5.5, §6.5.2: a setting with an unknown identifier MUST be ignored; §6.5.3: the SETTINGS is acknowledged",
            settings(&[(0xf00d, 7), (0x0, 1)]),
            ignored().wrote(&[ack()]),
        ),
        case(
            "an unknown error code in RST_STREAM",
            "§5.5, §7: unknown error codes MUST NOT trigger special behaviour; the stream fails as reset",
            rst(1, 0xdead_beef_u32),
            ignored().failed(&[1]),
        ),
        case(
            "an unknown error code in GOAWAY",
            "§5.5, §7: unknown error codes MUST NOT trigger special behaviour; §6.8: no new stream after GOAWAY",
            cat(&[goaway(1, 0xdead_beef_u32), ok(1)]),
            ignored().answered(&[1]).spent().room(0),
        ),
        // §6.1 DATA.
        case(
            "DATA on stream 0",
            "§6.1: DATA with stream identifier 0 MUST be a connection error PROTOCOL_ERROR",
            data(0, 0, b"x"),
            conn(PROTOCOL),
        ),
        case(
            "DATA padding as long as the payload",
            "§6.1: padding of the payload's length or more MUST be a connection error PROTOCOL_ERROR",
            cat(&[head200(1), data(1, ES | PADDED, &[4, 0, 0, 0])]),
            conn(PROTOCOL),
        ),
        case(
            "DATA padding as long as the payload, on a stream we reset",
            "§6.1: bad padding MUST be a connection error PROTOCOL_ERROR whatever the stream's state (it is frame format, and the frame counts toward flow control)",
            data(1, ES | PADDED, &[4, 0, 0, 0]),
            conn(PROTOCOL),
        )
        .cancel_first(1),
        case(
            "padded DATA and an empty DATA that ends the stream",
            "§6.1: padding is removed; an empty DATA frame with END_STREAM ends the stream",
            cat(&[
                head200(1),
                data(1, PADDED, &[3, b'a', 0, 0, 0]),
                data(1, PADDED, &[0]),
                data(1, ES, b""),
            ]),
            ignored().answered(&[1]),
        ),
        case(
            "DATA before the answer's HEADERS",
            "§8.1.1: a malformed response MUST be a stream error PROTOCOL_ERROR (§5.4.2: RST_STREAM, the connection kept)",
            data(1, ES, b"x"),
            stream_error(1, PROTOCOL),
        ),
        // §6.2 HEADERS.
        case(
            "HEADERS on stream 0",
            "§6.2: HEADERS with stream identifier 0 MUST be a connection error PROTOCOL_ERROR",
            ok(0),
            conn(PROTOCOL),
        ),
        case(
            "HEADERS padding as long as the payload",
            "§6.2: padding of the payload's length or more MUST be a connection error PROTOCOL_ERROR",
            headers(1, EH | ES | PADDED, &[2, S200]),
            conn(PROTOCOL),
        ),
        case(
            "HEADERS with priority fields and padding",
            "§6.2: the Pad Length, priority fields and padding are not part of the field block",
            headers(1, EH | ES | PADDED | PRIORITY_FLAG, &[2, 0x80, 0, 0, 3, 15, S200, 0, 0]),
            ignored().answered(&[1]),
        ),
        case(
            "a trailer section ends the stream",
            "§6.2: a HEADERS frame can carry a trailer section, here with END_STREAM",
            cat(&[
                head200(1),
                data(1, 0, b"body"),
                headers(1, EH | ES, &lit_indexed("x-trailer", "1")),
            ]),
            ignored().answered(&[1]),
        ),
        // §6.3 PRIORITY.
        case(
            "PRIORITY on stream 0",
            "§6.3: PRIORITY with stream identifier 0 MUST be a connection error PROTOCOL_ERROR",
            priority(0, 1),
            conn(PROTOCOL),
        ),
        case(
            "PRIORITY of 4 bytes on an open stream",
            "§6.3: a PRIORITY of a length other than 5 MUST be a stream error FRAME_SIZE_ERROR",
            raw(f::PRIORITY, 0, 1, &[0, 0, 0, 0]),
            stream_error(1, SIZE),
        ),
        case(
            "PRIORITY on an open stream changes nothing",
            "§6.3: PRIORITY does not affect stream state (its signals are deprecated)",
            cat(&[priority(1, 0), head200(1), priority(1, 3), data(1, ES, b"x")]),
            ignored().answered(&[1]),
        ),
        // §6.4 RST_STREAM.
        case(
            "RST_STREAM on stream 0",
            "§6.4: RST_STREAM with stream identifier 0 MUST be a connection error PROTOCOL_ERROR",
            rst(0, CANCEL),
            conn(PROTOCOL),
        ),
        case(
            "RST_STREAM on an idle stream",
            "§6.4: RST_STREAM on an idle stream MUST be a connection error PROTOCOL_ERROR",
            rst(5, CANCEL),
            conn(PROTOCOL),
        ),
        case(
            "RST_STREAM of 3 bytes",
            "§6.4: a RST_STREAM of a length other than 4 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::RST_STREAM, 0, 1, &[0, 0, 8]),
            conn(SIZE),
        ),
        case(
            "RST_STREAM of 5 bytes",
            "§6.4: a RST_STREAM of a length other than 4 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::RST_STREAM, 0, 1, &[0, 0, 0, 8, 0]),
            conn(SIZE),
        ),
        case(
            "RST_STREAM REFUSED_STREAM on an open stream",
            "§6.4: the stream closes; §5.4.2: no RST_STREAM in reply; §8.7: it was not processed, so it may be sent again",
            rst(1, REFUSED_STREAM),
            ignored().unprocessed(&[1]),
        ),
        // §6.5 SETTINGS.
        case(
            "a SETTINGS acknowledgement with a payload",
            "§6.5: an ACK with a length other than 0 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::SETTINGS, f::ACK, 0, &[0, 3, 0, 0, 0, 1]),
            conn(SIZE),
        ),
        case(
            "SETTINGS on a stream",
            "§6.5: SETTINGS with a stream identifier other than 0 MUST be a connection error PROTOCOL_ERROR",
            raw(f::SETTINGS, 0, 1, &[]),
            conn(PROTOCOL),
        ),
        case(
            "SETTINGS of 7 bytes",
            "§6.5: a SETTINGS length not a multiple of 6 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 1, 0]),
            conn(SIZE),
        ),
        case(
            "SETTINGS_ENABLE_PUSH of 1 from a server",
            "§6.5.2: a client MUST treat SETTINGS_ENABLE_PUSH set to 1 from a server as a connection error PROTOCOL_ERROR",
            settings(&[(f::SETTINGS_ENABLE_PUSH, 1)]),
            conn(PROTOCOL),
        ),
        case(
            "SETTINGS_ENABLE_PUSH of 2",
            "§6.5.2: SETTINGS_ENABLE_PUSH other than 0 or 1 MUST be a connection error PROTOCOL_ERROR",
            settings(&[(f::SETTINGS_ENABLE_PUSH, 2)]),
            conn(PROTOCOL),
        ),
        case(
            "SETTINGS_ENABLE_PUSH of 0 from a server",
            "§6.5.2: a server MAY send 0; the SETTINGS is acknowledged",
            settings(&[(f::SETTINGS_ENABLE_PUSH, 0)]),
            ignored().wrote(&[ack()]),
        ),
        case(
            "SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1",
            "§6.5.2: SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1 MUST be a connection error FLOW_CONTROL_ERROR",
            settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW + 1)]),
            conn(FLOW),
        ),
        case(
            "SETTINGS_INITIAL_WINDOW_SIZE of 2^31-1",
            "§6.5.2: the largest window is a legal value",
            settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW)]),
            ignored().wrote(&[ack()]),
        ),
        case(
            "SETTINGS_INITIAL_WINDOW_SIZE that takes an open stream's window over 2^31-1",
            "§6.9.2: a change that makes any window exceed the maximum MUST be a connection error FLOW_CONTROL_ERROR",
            cat(&[
                window(1, MAX_WINDOW - 65_535),
                settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, 65_536)]),
            ]),
            conn(FLOW),
        ),
        case(
            "SETTINGS_MAX_FRAME_SIZE of 16,383",
            "§6.5.2: SETTINGS_MAX_FRAME_SIZE below 2^14 MUST be a connection error PROTOCOL_ERROR",
            settings(&[(f::SETTINGS_MAX_FRAME_SIZE, 16_383)]),
            conn(PROTOCOL),
        ),
        case(
            "SETTINGS_MAX_FRAME_SIZE of 2^24",
            "§6.5.2: SETTINGS_MAX_FRAME_SIZE above 2^24-1 MUST be a connection error PROTOCOL_ERROR",
            settings(&[(f::SETTINGS_MAX_FRAME_SIZE, 1 << 24)]),
            conn(PROTOCOL),
        ),
        case(
            "SETTINGS_MAX_FRAME_SIZE at both ends of its range",
            "§6.5.2: 2^14 and 2^24-1 are legal values",
            cat(&[
                settings(&[(f::SETTINGS_MAX_FRAME_SIZE, (1 << 24) - 1)]),
                settings(&[(f::SETTINGS_MAX_FRAME_SIZE, 16_384)]),
            ]),
            ignored().wrote(&[ack(), ack()]),
        ),
        case(
            "SETTINGS_HEADER_TABLE_SIZE and SETTINGS_MAX_HEADER_LIST_SIZE",
            "§6.5: implementations MUST support every setting; both are applied and acknowledged",
            settings(&[(f::SETTINGS_HEADER_TABLE_SIZE, 0), (SETTINGS_MAX_HEADER_LIST_SIZE, 100)]),
            ignored().wrote(&[ack()]),
        ),
        case(
            "each SETTINGS is acknowledged once, in order, and an acknowledgement is not",
            "§6.5.3: the recipient MUST immediately send an ACK for each SETTINGS; an ACK is not acknowledged",
            cat(&[settings(&[]), settings_ack(), settings(&[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 9)])]),
            ignored().wrote(&[ack(), ack()]),
        ),
        // §6.6 PUSH_PROMISE.
        case(
            "PUSH_PROMISE with push disabled",
            "§6.6, §6.5.2: a client that set SETTINGS_ENABLE_PUSH to 0 and got the acknowledgement MUST treat PUSH_PROMISE as a connection error PROTOCOL_ERROR",
            raw(f::PUSH_PROMISE, EH, 1, &[0, 0, 0, 2, 0x82, 0x84, 0x86]),
            conn(PROTOCOL),
        ),
        case(
            "PUSH_PROMISE on stream 0",
            "§6.6: PUSH_PROMISE with stream identifier 0 MUST be a connection error PROTOCOL_ERROR",
            raw(f::PUSH_PROMISE, EH, 0, &[0, 0, 0, 2, 0x82]),
            conn(PROTOCOL),
        ),
        // §6.7 PING.
        case(
            "a PING is answered with its payload",
            "§6.7: a PING without ACK MUST be answered by a PING with ACK and an identical payload",
            ping(&[0, 1, 2, 3, 0xfc, 0xfd, 0xfe, 0xff]),
            ignored().wrote(&[pong(&[0, 1, 2, 3, 0xfc, 0xfd, 0xfe, 0xff])]),
        ),
        case(
            "a PING acknowledgement is not answered",
            "§6.7: an endpoint MUST NOT respond to a PING with the ACK flag",
            raw(f::PING, f::ACK, 0, b"an-ack!!"),
            ignored(),
        ),
        case(
            "PING on a stream",
            "§6.7: PING with a stream identifier other than 0 MUST be a connection error PROTOCOL_ERROR",
            raw(f::PING, 0, 1, b"01234567"),
            conn(PROTOCOL),
        ),
        case(
            "PING of 7 bytes",
            "§6.7: a PING of a length other than 8 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::PING, 0, 0, b"0123456"),
            conn(SIZE),
        ),
        case(
            "PING of 9 bytes",
            "§6.7: a PING of a length other than 8 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::PING, 0, 0, b"012345678"),
            conn(SIZE),
        ),
        case(
            "PING acknowledgement of 7 bytes",
            "§6.7: a PING of a length other than 8 MUST be a connection error FRAME_SIZE_ERROR, ACK or not",
            raw(f::PING, f::ACK, 0, b"0123456"),
            conn(SIZE),
        ),
        // §6.8 GOAWAY.
        case(
            "GOAWAY on a stream",
            "§6.8: GOAWAY with a stream identifier other than 0 MUST be a connection error PROTOCOL_ERROR",
            raw(f::GOAWAY, 0, 1, &[0, 0, 0, 0, 0, 0, 0, 0]),
            conn(PROTOCOL),
        ),
        case(
            "GOAWAY of 7 bytes",
            "§4.2: a frame too small for its mandatory fields MUST get FRAME_SIZE_ERROR, a connection error on stream 0",
            raw(f::GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0]),
            conn(SIZE),
        ),
        case(
            "GOAWAY leaves streams above its last stream unprocessed and lets the others finish",
            "§6.8: no new stream after GOAWAY; streams above last-stream-id were not processed and may be retried; those at or below may complete",
            cat(&[goaway(1, NO_ERROR), ok(1)]),
            ignored().answered(&[1]).unprocessed(&[3]).spent().room(0),
        )
        .streams(2),
        case(
            "a graceful GOAWAY then a lower one; a later higher one is not believed",
            "§6.8: the last GOAWAY's last-stream-id counts, and it MUST NOT increase",
            cat(&[
                goaway(MAX_WINDOW, NO_ERROR),
                goaway(1, NO_ERROR),
                goaway(3, NO_ERROR),
                ok(1),
            ]),
            ignored().answered(&[1]).unprocessed(&[3]).spent(),
        )
        .streams(2),
        case(
            "GOAWAY with debug data",
            "§6.8: opaque debug data MAY follow the error code",
            cat(&[
                raw(f::GOAWAY, 0, 0, &cat(&[vec![0, 0, 0, 1, 0, 0, 0, 2], b"overloaded".to_vec()])),
                ok(1),
            ]),
            ignored().answered(&[1]).spent(),
        ),
        // §6.9 WINDOW_UPDATE.
        case(
            "WINDOW_UPDATE of 0 on the connection",
            "§6.9: a zero increment on the connection MUST be a connection error PROTOCOL_ERROR",
            window(0, 0),
            conn(PROTOCOL),
        ),
        case(
            "WINDOW_UPDATE of 0 on a stream",
            "§6.9: a zero increment on a stream MUST be a stream error PROTOCOL_ERROR (RST_STREAM, the connection kept)",
            window(1, 0),
            stream_error(1, PROTOCOL),
        ),
        case(
            "WINDOW_UPDATE of 3 bytes",
            "§6.9: a WINDOW_UPDATE of a length other than 4 MUST be a connection error FRAME_SIZE_ERROR",
            raw(f::WINDOW_UPDATE, 0, 0, &[0, 0, 1]),
            conn(SIZE),
        ),
        case(
            "WINDOW_UPDATE that takes the connection's window over 2^31-1",
            "§6.9.1: an overflow of the connection window MUST end the connection: GOAWAY FLOW_CONTROL_ERROR",
            window(0, MAX_WINDOW),
            conn(FLOW),
        ),
        case(
            "WINDOW_UPDATE that takes a stream's window over 2^31-1",
            "§6.9.1: an overflow of a stream window MUST end that stream: RST_STREAM FLOW_CONTROL_ERROR, the connection kept",
            window(1, MAX_WINDOW),
            stream_error(1, FLOW),
        ),
        case(
            "a body waits for the stream's window and goes when a WINDOW_UPDATE opens it",
            "§6.9.1: a sender MUST NOT send DATA beyond the window; the window grows by the increment",
            window(1, 90),
            ignored().wrote(&[body(1, ES, 90)]),
        )
        .preface(cat(&[settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, 10)]), settings_ack()]))
        .body(100),
        case(
            "a smaller SETTINGS_INITIAL_WINDOW_SIZE makes a stream's window negative",
            "§6.9.2: windows change by the difference; a sender MUST track a negative window and send no DATA until it is positive",
            cat(&[settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, 10)]), window(1, 15)]),
            ignored().wrote(&[ack(), body(1, 0, 5)]),
        )
        .preface(cat(&[settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, 20)]), settings_ack()]))
        .body(100),
        case(
            "a body waits for the connection's window",
            "§6.9.1: a sender MUST NOT send DATA beyond either window; the connection's grows only by WINDOW_UPDATE",
            window(0, 10_000),
            ignored().wrote(&[body(1, ES, 70_000 - 65_535)]),
        )
        .preface(cat(&[settings(&[(f::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)]), settings_ack()]))
        .body(70_000),
        // §6.10 CONTINUATION.
        case(
            "CONTINUATION without a HEADERS",
            "§6.10: a CONTINUATION not preceded by HEADERS, PUSH_PROMISE or CONTINUATION without END_HEADERS MUST be a connection error PROTOCOL_ERROR",
            cont(1, EH, &[S200]),
            conn(PROTOCOL),
        ),
        case(
            "CONTINUATION after a HEADERS that ended its block",
            "§6.10: a CONTINUATION after END_HEADERS MUST be a connection error PROTOCOL_ERROR",
            cat(&[head200(1), cont(1, EH, &[])]),
            conn(PROTOCOL),
        ),
        case(
            "CONTINUATION on stream 0 inside a header block",
            "§6.10: CONTINUATION with stream identifier 0 MUST be a connection error PROTOCOL_ERROR",
            cat(&[headers(1, ES, &[S200]), cont(0, EH, &[])]),
            conn(PROTOCOL),
        ),
        case(
            "a sequence of CONTINUATION frames keeps the connection working",
            "§6.10: any number of CONTINUATION frames may follow; §6.2: a HEADERS with END_STREAM may be continued; the block is cut anywhere, inside a string too",
            cat(&[
                headers(1, ES, &[S200, 0x40, 0x06, b'x', b'-']),
                cont(1, 0, b"lo"),
                cont(1, 0, &[]),
                cont(1, 0, &[b'n', b'g', 0x03, b'v']),
                cont(1, EH, b"vv"),
            ]),
            ignored().answered(&[1]),
        ),
    ]
}

#[test]
fn every_case_gets_its_outcome_whole_and_byte_by_byte() {
    let cases = table();
    assert!(cases.len() >= 90, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let whole = deliver(c, false);
        let bytes = deliver(c, true);
        if whole != c.want || bytes != c.want {
            wrong.push(format!(
                "{} [{}]\n    want {:?}\n    whole {whole:?}\n    byte by byte {bytes:?}",
                c.title, c.rule, c.want
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases disagree:\n  {}",
        wrong.len(),
        cases.len(),
        wrong.join("\n  ")
    );
}

#[test]
fn case_titles_are_unique() {
    let mut titles: Vec<_> = table().iter().map(|c| c.title).collect();
    titles.sort_unstable();
    let before = titles.len();
    titles.dedup();
    assert_eq!(titles.len(), before);
}

/// What the client sends of its own: the preface and its SETTINGS first, push disabled
/// (§3.4, §6.5.2), odd stream identifiers that only grow (§5.1.1), and a dynamic table
/// size update opening the first block after the server shrank its table (§4.3.1).
#[test]
fn the_client_sends_by_the_rules() {
    let req = prepared(0);
    let now = Instant::now();
    let mut c = Connection::new(SLOTS, None);
    c.start();
    let out = std::mem::take(&mut c.out);
    assert!(out.starts_with(f::PREFACE), "the preface comes first");
    let ours = parse_frames(&out[f::PREFACE.len()..]);
    assert_eq!(ours[0].kind, f::SETTINGS, "then a SETTINGS: {ours:?}");
    let push = ours[0]
        .payload
        .chunks(6)
        .find(|p| p[..2] == f::SETTINGS_ENABLE_PUSH.to_be_bytes());
    assert_eq!(
        push.map(|p| &p[2..]),
        Some(&[0, 0, 0, 0][..]),
        "push disabled"
    );
    c.feed(&cat(&[settings(&[]), settings_ack()]), &req, now)
        .unwrap();
    c.out.clear();
    for _ in 0..3 {
        c.open(&req, Begin::at(now, now));
    }
    let ids: Vec<u32> = parse_frames(&std::mem::take(&mut c.out))
        .iter()
        .filter(|w| w.kind == f::HEADERS)
        .map(|w| w.stream)
        .collect();
    assert_eq!(ids, [1, 3, 5]);
    c.feed(&settings(&[(f::SETTINGS_HEADER_TABLE_SIZE, 0)]), &req, now)
        .unwrap();
    assert_eq!(parse_frames(&std::mem::take(&mut c.out)), [ack()]);
    c.open(&req, Begin::at(now, now));
    let next = parse_frames(&std::mem::take(&mut c.out));
    assert_eq!((next[0].kind, next[0].stream), (f::HEADERS, 7));
    assert_eq!(
        next[0].payload[0], 0x20,
        "the block starts with a size update to 0"
    );
}
