//! One HTTP/3 connection's state without I/O (RFC 9114): the bytes QUIC delivers on each
//! stream go in ([`Connection::request_data`], [`Connection::uni_data`], and their ends
//! and resets), what happened to each request comes out as [`Event`]s, and what the
//! worker must do to a stream (stop reading it) comes out in [`Connection::stops`]. QUIC
//! itself (packets, acknowledgements, flow control, stream ids) is the worker's
//! (`quinn-proto`); here a stream is its id and its bytes.
//!
//! Requests live in a fixed set of slots (as many as streams asked per connection). The
//! server's unidirectional streams are read by their type: its control stream (SETTINGS
//! first, then GOAWAY; a second control stream, or its end, is a connection error), its
//! QPACK encoder stream (with the capacity 0 we announce, only "set capacity 0" may come),
//! its QPACK decoder stream (read and dropped: we never use a dynamic table), a push
//! stream (an error: we never allow pushes) and any other type (stopped, as RFC 9114
//! §6.2.3 says of unknown types).
//!
//! Memory per connection is bounded whatever a server sends: a field section over
//! [`MAX_FIELD_SECTION`] fails its request (it is not read into memory), a control frame
//! over [`frame::MAX_CONTROL_FRAME`] ends the connection, a body is counted and searched
//! as it passes and never kept, unknown frames are skipped as they pass, and at most
//! [`MAX_UNI`] server streams are tracked (QUIC's stream limit, which the worker sets to
//! the same, holds the server to it).

use super::frame::{self, FrameError, Piece, Reader};
use super::qpack::{self, Fields, Scratch};
use crate::codec::decimal::parse as parse_decimal;
use crate::exchange::{Begin, Exchange};
use crate::fields;
use shootout_model::FailureKind;
use std::time::Instant;

/// The largest field section (encoded) read, and the largest list decoded (RFC 9114
/// §4.2.2 counts name + value + 32 per field), announced as
/// SETTINGS_MAX_FIELD_SECTION_SIZE: 64 KiB, as HTTP/2's header list limit.
pub const MAX_FIELD_SECTION: usize = 64 * 1024;

/// The most server-initiated unidirectional streams tracked at once: control, QPACK
/// encoder and decoder, and a few of unknown type (reserved ones a server opens to
/// exercise ours). The worker gives the server the same QUIC limit.
pub const MAX_UNI: usize = 8;

/// The most bytes of a `server` field kept.
const MAX_SERVER: usize = 256;

/// What happened, in order, for the worker to act on. A slot named by an event stays
/// taken until the worker calls [`Connection::free`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The request in this slot got its whole answer.
    Answered(usize),
    /// The request in this slot ended without a good answer.
    Failed(usize, FailureKind),
    /// A GOAWAY said the server will not process the request in this slot: it may be sent
    /// again on another connection.
    Unprocessed(usize),
    /// The server reset a request stream with this HTTP/3 error code.
    Reset(u64),
    /// A GOAWAY arrived.
    Goaway,
}

/// The server broke HTTP/3: the connection is closed with this error code, and every
/// request still open fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("HTTP/3 connection error {code:#x}: {why}")]
pub struct ConnError {
    pub code: u64,
    pub why: &'static str,
}

impl ConnError {
    fn new(code: u64, why: &'static str) -> ConnError {
        ConnError { code, why }
    }
}

impl From<FrameError> for ConnError {
    fn from(e: FrameError) -> ConnError {
        let why = match e {
            FrameError::Unexpected(_) => "a frame where its type may not come",
            FrameError::Malformed(_) => "a malformed frame",
            FrameError::Oversized { .. } => "a control frame over 4 KiB",
            FrameError::Settings(_) => "a repeated or HTTP/2 setting",
        };
        ConnError::new(e.code(), why)
    }
}

/// One request stream: its exchange (timings and what has come back of its answer) and
/// the stream's own state.
#[derive(Debug)]
pub struct Stream {
    /// QUIC stream id (client-initiated bidirectional); meaningful while `open`.
    pub id: u64,
    open: bool,
    /// The request and its answer so far.
    pub exchange: Exchange,
    /// Bytes of the request written so far (the worker's, for flow control).
    pub written: usize,
    length: Option<u64>,
    final_head: bool,
    trailers: bool,
    /// An event named it; its bytes are ignored from now on.
    done: bool,
    reader: Reader,
    /// The frame under way: its type.
    kind: u64,
    /// The field section being read (bounded by [`MAX_FIELD_SECTION`]).
    block: Vec<u8>,
}

/// The type of a server's unidirectional stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Uni {
    /// Its type is not read yet (the bytes so far are in `head`).
    Unknown,
    Control,
    Encoder,
    Decoder,
    /// A type we do not read: stopped, and its bytes dropped.
    Ignored,
}

#[derive(Debug)]
struct UniStream {
    id: u64,
    kind: Uni,
    head: [u8; 8],
    have: usize,
}

/// One connection's HTTP/3 state.
pub struct Connection {
    streams: Vec<Stream>,
    active: usize,
    uni: Vec<UniStream>,
    /// The control stream's frames, and the payload of the SETTINGS or GOAWAY under way.
    control: Reader,
    control_kind: u64,
    control_buf: Vec<u8>,
    settings: Option<frame::Settings>,
    saw_control: bool,
    saw_encoder: bool,
    saw_decoder: bool,
    goaway: Option<u64>,
    fields: Fields,
    scratch: Scratch,
    /// What happened since the worker last drained it.
    pub events: Vec<Event>,
    /// Streams the worker is to stop reading (QUIC STOP_SENDING), with the code.
    pub stops: Vec<(u64, u64)>,
    /// Keep the `server` field of the next final answer.
    pub want_server: bool,
    /// The `server` field kept, if asked for.
    pub server: Option<String>,
    /// Final answer heads still to copy for `-v 2`.
    pub sample: usize,
    /// Answer heads copied, as text (`HTTP/3 200`, then `name: value` lines), until the
    /// worker takes them.
    pub heads: Vec<Vec<u8>>,
}

impl Connection {
    /// A connection for `streams` concurrent requests, searching bodies for `needle`.
    pub fn new(streams: usize, needle: Option<&[u8]>) -> Connection {
        let now = Instant::now();
        Connection {
            streams: (0..streams)
                .map(|_| Stream {
                    id: 0,
                    open: false,
                    exchange: Exchange::new(needle, now),
                    written: 0,
                    length: None,
                    final_head: false,
                    trailers: false,
                    done: false,
                    reader: Reader::default(),
                    kind: 0,
                    block: Vec::new(),
                })
                .collect(),
            active: 0,
            uni: Vec::with_capacity(MAX_UNI),
            control: Reader::default(),
            control_kind: 0,
            control_buf: Vec::new(),
            settings: None,
            saw_control: false,
            saw_encoder: false,
            saw_decoder: false,
            goaway: None,
            fields: Fields::new(MAX_FIELD_SECTION),
            scratch: Scratch::default(),
            events: Vec::with_capacity(streams * 2 + 4),
            stops: Vec::new(),
            want_server: false,
            server: None,
            sample: 0,
            heads: Vec::new(),
        }
    }

    /// Starts over for a new QUIC connection.
    pub fn start(&mut self) {
        for s in &mut self.streams {
            s.open = false;
        }
        self.active = 0;
        self.uni.clear();
        self.control.clear();
        self.control_buf.clear();
        self.settings = None;
        self.saw_control = false;
        self.saw_encoder = false;
        self.saw_decoder = false;
        self.goaway = None;
        self.events.clear();
        self.stops.clear();
    }

    /// Requests open (answered or failed ones included until freed).
    pub fn active(&self) -> usize {
        self.active
    }

    /// A GOAWAY came: no new request goes on this connection.
    pub fn spent(&self) -> bool {
        self.goaway.is_some()
    }

    /// The server's SETTINGS arrived.
    pub fn settled(&self) -> bool {
        self.settings.is_some()
    }

    /// How many more requests may open now (QUIC's stream credit aside).
    pub fn room(&self) -> usize {
        if self.spent() {
            return 0;
        }
        self.streams.len() - self.active
    }

    /// The request in `slot`.
    pub fn stream(&self, slot: usize) -> &Stream {
        &self.streams[slot]
    }

    /// The exchange of the request in `slot`, with the `server` field kept (taken by the
    /// worker for its first answer).
    #[inline]
    pub fn answered(&mut self, slot: usize) -> (&Exchange, &mut Option<String>) {
        (&self.streams[slot].exchange, &mut self.server)
    }

    /// The request in `slot`, to note how much of it was written.
    pub fn stream_mut(&mut self, slot: usize) -> &mut Stream {
        &mut self.streams[slot]
    }

    /// The slot of the open request on stream `id`.
    pub fn slot_of(&self, id: u64) -> Option<usize> {
        self.streams.iter().position(|s| s.open && s.id == id)
    }

    /// Each open request's start.
    pub fn starts(&self) -> impl Iterator<Item = Instant> + '_ {
        self.streams
            .iter()
            .filter(|s| s.open)
            .map(|s| s.exchange.start)
    }

    /// Slots of the requests no event has named yet.
    pub fn open_slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.streams
            .iter()
            .enumerate()
            .filter(|(_, s)| s.open && !s.done)
            .map(|(i, _)| i)
    }

    /// Frees the slot of a request an event named (or one given up on).
    pub fn free(&mut self, slot: usize) {
        let s = &mut self.streams[slot];
        if s.open {
            s.open = false;
            self.active -= 1;
        }
    }

    /// A request goes out on stream `id` (there must be [`Connection::room`]). Returns
    /// its slot.
    pub fn open(&mut self, id: u64, b: Begin) -> usize {
        let slot = self
            .streams
            .iter()
            .position(|s| !s.open)
            .unwrap_or_else(|| unreachable!("open is called only when there is room"));
        self.active += 1;
        let s = &mut self.streams[slot];
        s.id = id;
        s.open = true;
        s.exchange.begin(b);
        s.written = 0;
        s.length = None;
        s.final_head = false;
        s.trailers = false;
        s.done = false;
        s.reader.clear();
        s.block.clear();
        slot
    }

    fn end(&mut self, slot: usize, event: Event) {
        self.streams[slot].done = true;
        self.events.push(event);
    }

    /// The answer on the stream in `slot` broke HTTP/3 for that request only: it fails
    /// as malformed and the stream is stopped (H3_MESSAGE_ERROR).
    fn malformed(&mut self, slot: usize) {
        let id = self.streams[slot].id;
        self.stops.push((id, frame::H3_MESSAGE_ERROR));
        self.end(slot, Event::Failed(slot, FailureKind::Malformed));
    }

    /// Bytes of the answer on request stream `id`. `head_request`: answers have no body.
    pub fn request_data(
        &mut self,
        id: u64,
        mut data: &[u8],
        head_request: bool,
        now: Instant,
    ) -> Result<(), ConnError> {
        let Some(slot) = self.slot_of(id) else {
            return Ok(());
        };
        if self.streams[slot].done {
            return Ok(());
        }
        self.streams[slot].exchange.arrived(now);
        while !self.streams[slot].done {
            let Some(piece) = self.streams[slot].reader.next(&mut data) else {
                break;
            };
            match piece {
                Piece::Begin { kind, len } => self.begin(slot, kind, len)?,
                Piece::Payload(p) => {
                    let s = &mut self.streams[slot];
                    match s.kind {
                        frame::HEADERS => s.block.extend_from_slice(p),
                        frame::DATA => s.exchange.body(p),
                        _ => {}
                    }
                }
                Piece::End => {
                    if self.streams[slot].kind == frame::HEADERS {
                        self.field_section(slot, head_request)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A frame begins on the stream in `slot`: whether it may come there.
    fn begin(&mut self, slot: usize, kind: u64, len: u64) -> Result<(), ConnError> {
        let s = &mut self.streams[slot];
        s.kind = kind;
        match kind {
            frame::HEADERS => {
                if s.trailers {
                    return Err(FrameError::Unexpected(kind).into());
                }
                if len > MAX_FIELD_SECTION as u64 {
                    // Not read into memory: the request fails, the stream is stopped.
                    self.malformed(slot);
                    return Ok(());
                }
                s.block.clear();
            }
            // DATA before the final HEADERS or after trailers (RFC 9114 §4.1).
            frame::DATA if !s.final_head || s.trailers => {
                return Err(FrameError::Unexpected(kind).into())
            }
            frame::PUSH_PROMISE => {
                return Err(ConnError::new(
                    frame::H3_ID_ERROR,
                    "a push promise, which we never allowed",
                ))
            }
            frame::SETTINGS | frame::GOAWAY | frame::MAX_PUSH_ID | frame::CANCEL_PUSH => {
                return Err(FrameError::Unexpected(kind).into())
            }
            k if frame::http2_only(k) => return Err(FrameError::Unexpected(kind).into()),
            // Unknown and reserved types are skipped (RFC 9114 §9).
            _ => {}
        }
        Ok(())
    }

    /// A whole field section on the stream in `slot`: decoded and applied.
    fn field_section(&mut self, slot: usize, head_request: bool) -> Result<(), ConnError> {
        let decoded = qpack::decode(
            &self.streams[slot].block,
            &mut self.fields,
            &mut self.scratch,
        );
        if self.streams[slot].block.capacity() > 16 * 1024 {
            // A large section is rare: its buffer is not kept.
            self.streams[slot].block = Vec::new();
        }
        if decoded.is_err() {
            return Err(ConnError::new(
                frame::QPACK_DECOMPRESSION_FAILED,
                "a field section QPACK cannot decode",
            ));
        }
        let (status, length, bad, server) = self.read_fields();
        let s = &mut self.streams[slot];
        if s.final_head {
            // Trailers: nothing we check, but no pseudo-header may come (RFC 9114 §4.3).
            s.trailers = true;
            if status.is_some() || bad {
                self.malformed(slot);
            }
            return Ok(());
        }
        match status {
            Some(code) if !bad && (100..200).contains(&code) && code != 101 => {}
            Some(code) if !bad && code >= 200 => {
                if self.sample > 0 {
                    self.sample -= 1;
                    self.heads
                        .push(fields::head_text("HTTP/3", code, &self.fields));
                }
                s.exchange.status = code;
                s.length = if head_request || code == 204 || code == 304 {
                    None
                } else {
                    length
                };
                s.final_head = true;
                if server.is_some() {
                    self.server = server;
                }
            }
            // No `:status`, a bad one, 101, or a malformed field.
            _ => self.malformed(slot),
        }
        Ok(())
    }

    /// The status, content-length, whether the section is malformed, and the `server`
    /// field if wanted, from the decoded fields.
    fn read_fields(&self) -> (Option<u16>, Option<u64>, bool, Option<String>) {
        let (mut status, mut length, mut bad, mut server) = (None, None, self.fields.over(), None);
        let mut regular = false;
        for (name, value) in self.fields.iter() {
            if name == b":status" {
                bad |= status.is_some() || regular;
                status = fields::parse_status(value);
                bad |= status.is_none();
            } else if name.first() == Some(&b':') {
                // A response has no other pseudo-header (RFC 9114 §4.3.2).
                bad = true;
            } else {
                regular = true;
                if name.iter().any(u8::is_ascii_uppercase) {
                    bad = true;
                } else if name == b"content-length" {
                    let v = parse_decimal(value);
                    bad |= v.is_none() || length.is_some_and(|l| Some(l) != v);
                    length = v;
                } else if self.want_server && name == b"server" {
                    let kept = &value[..value.len().min(MAX_SERVER)];
                    server = Some(String::from_utf8_lossy(kept).into_owned());
                }
            }
        }
        (status, length, bad, server)
    }

    /// The server ended request stream `id`: the answer is whole, or it ends without one.
    pub fn request_fin(&mut self, id: u64) -> Result<(), ConnError> {
        let Some(slot) = self.slot_of(id) else {
            return Ok(());
        };
        let s = &self.streams[slot];
        if s.done {
            return Ok(());
        }
        if !s.reader.at_boundary() {
            return Err(ConnError::new(
                frame::H3_FRAME_ERROR,
                "a request stream ended inside a frame",
            ));
        }
        if !s.final_head {
            // No final status (nothing, or only interim answers).
            self.end(slot, Event::Failed(slot, FailureKind::Malformed));
        } else if s.length.is_some_and(|l| l != s.exchange.body_len) {
            self.end(slot, Event::Failed(slot, FailureKind::Malformed));
        } else {
            self.end(slot, Event::Answered(slot));
        }
        Ok(())
    }

    /// The server reset request stream `id` with `code`: counted, and the request fails
    /// (as refused for H3_REQUEST_REJECTED, which says it was not processed).
    pub fn request_reset(&mut self, id: u64, code: u64) {
        self.events.push(Event::Reset(code));
        if let Some(slot) = self.slot_of(id).filter(|&s| !self.streams[s].done) {
            let kind = if code == frame::H3_REQUEST_REJECTED {
                FailureKind::Refused
            } else {
                FailureKind::StreamReset
            };
            self.end(slot, Event::Failed(slot, kind));
        }
    }

    /// Gives up on the request in `slot` (its deadline passed): the slot is freed; the
    /// worker stops and resets the stream.
    pub fn cancel(&mut self, slot: usize) {
        self.streams[slot].done = true;
        self.free(slot);
    }

    /// Bytes on the server's unidirectional stream `id`.
    pub fn uni_data(&mut self, id: u64, mut data: &[u8]) -> Result<(), ConnError> {
        let i = match self.uni.iter().position(|u| u.id == id) {
            Some(i) => i,
            None if self.uni.len() < MAX_UNI => {
                self.uni.push(UniStream {
                    id,
                    kind: Uni::Unknown,
                    head: [0; 8],
                    have: 0,
                });
                self.uni.len() - 1
            }
            None => {
                return Err(ConnError::new(
                    frame::H3_EXCESSIVE_LOAD,
                    "more unidirectional streams than allowed",
                ))
            }
        };
        if self.uni[i].kind == Uni::Unknown {
            let u = &mut self.uni[i];
            while u.have < u.head.len() {
                let Some((&b, rest)) = data.split_first() else {
                    return Ok(());
                };
                u.head[u.have] = b;
                u.have += 1;
                data = rest;
                if let Some((kind, _)) = frame::varint(&u.head[..u.have]) {
                    self.uni_type(i, kind)?;
                    break;
                }
            }
        }
        match self.uni[i].kind {
            Uni::Control => self.control_data(data),
            // With our capacity of 0 the only instruction an encoder may send is "set
            // dynamic table capacity 0" (RFC 9204 §4.3.1: `001` and a 5-bit 0).
            Uni::Encoder if data.iter().any(|&b| b != 0x20) => Err(ConnError::new(
                frame::QPACK_ENCODER_STREAM_ERROR,
                "a QPACK encoder instruction past our capacity of 0",
            )),
            _ => Ok(()),
        }
    }

    /// The type of the server's unidirectional stream in `self.uni[i]` is known.
    fn uni_type(&mut self, i: usize, kind: u64) -> Result<(), ConnError> {
        let twice = |seen: &mut bool| {
            if std::mem::replace(seen, true) {
                Err(ConnError::new(
                    frame::H3_STREAM_CREATION_ERROR,
                    "a second control or QPACK stream",
                ))
            } else {
                Ok(())
            }
        };
        self.uni[i].kind = match kind {
            0x00 => {
                twice(&mut self.saw_control)?;
                Uni::Control
            }
            0x01 => {
                return Err(ConnError::new(
                    frame::H3_ID_ERROR,
                    "a push stream, which we never allowed",
                ))
            }
            0x02 => {
                twice(&mut self.saw_encoder)?;
                Uni::Encoder
            }
            0x03 => {
                twice(&mut self.saw_decoder)?;
                Uni::Decoder
            }
            _ => {
                self.stops
                    .push((self.uni[i].id, frame::H3_STREAM_CREATION_ERROR));
                Uni::Ignored
            }
        };
        Ok(())
    }

    /// The server's unidirectional stream `id` ended (or was reset): an error for its
    /// control and QPACK streams (RFC 9114 §6.2.1, RFC 9204 §4.2), else forgotten.
    pub fn uni_fin(&mut self, id: u64) -> Result<(), ConnError> {
        let Some(i) = self.uni.iter().position(|u| u.id == id) else {
            return Ok(());
        };
        match self.uni[i].kind {
            Uni::Control | Uni::Encoder | Uni::Decoder => Err(ConnError::new(
                frame::H3_CLOSED_CRITICAL_STREAM,
                "the server closed its control or QPACK stream",
            )),
            Uni::Unknown | Uni::Ignored => {
                self.uni.swap_remove(i);
                Ok(())
            }
        }
    }

    /// Bytes of the control stream: SETTINGS first, then GOAWAY; unknown frames skipped.
    fn control_data(&mut self, mut data: &[u8]) -> Result<(), ConnError> {
        while let Some(piece) = self.control.next(&mut data) {
            match piece {
                Piece::Begin { kind, len } => {
                    self.control_kind = kind;
                    self.control_buf.clear();
                    if self.settings.is_none() && kind != frame::SETTINGS {
                        return Err(ConnError::new(
                            frame::H3_MISSING_SETTINGS,
                            "the control stream does not begin with SETTINGS",
                        ));
                    }
                    match kind {
                        frame::SETTINGS if self.settings.is_some() => {
                            return Err(FrameError::Unexpected(kind).into())
                        }
                        frame::SETTINGS | frame::GOAWAY if len > frame::MAX_CONTROL_FRAME => {
                            return Err(FrameError::Oversized {
                                kind,
                                len,
                                max: frame::MAX_CONTROL_FRAME,
                            }
                            .into())
                        }
                        frame::DATA | frame::HEADERS | frame::PUSH_PROMISE | frame::MAX_PUSH_ID => {
                            return Err(FrameError::Unexpected(kind).into())
                        }
                        k if frame::http2_only(k) => {
                            return Err(FrameError::Unexpected(kind).into())
                        }
                        _ => {}
                    }
                }
                Piece::Payload(p) => {
                    if matches!(self.control_kind, frame::SETTINGS | frame::GOAWAY) {
                        self.control_buf.extend_from_slice(p);
                    }
                }
                Piece::End => match self.control_kind {
                    frame::SETTINGS => self.settings = Some(frame::settings(&self.control_buf)?),
                    frame::GOAWAY => {
                        let id = frame::goaway(&self.control_buf)?;
                        self.goaway_to(id)?;
                    }
                    // CANCEL_PUSH (we have no pushes to cancel) and unknown types.
                    _ => {}
                },
            }
        }
        Ok(())
    }

    /// GOAWAY: requests on stream `id` and above were not processed (RFC 9114 §5.2).
    fn goaway_to(&mut self, id: u64) -> Result<(), ConnError> {
        if !id.is_multiple_of(4) || self.goaway.is_some_and(|g| id > g) {
            return Err(ConnError::new(
                frame::H3_ID_ERROR,
                "a GOAWAY naming no request stream, or raising an earlier one",
            ));
        }
        self.goaway = Some(id);
        self.events.push(Event::Goaway);
        for slot in 0..self.streams.len() {
            let s = &self.streams[slot];
            if s.open && !s.done && s.id >= id {
                self.end(slot, Event::Unprocessed(slot));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
