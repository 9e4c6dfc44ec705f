//! One HTTP/2 connection as a state machine without I/O: bytes from the server go into
//! [`Connection::feed`], frames for the server come out of [`Connection::out`], and what
//! happened to each stream comes out as [`Event`]s for the worker to record. Streams live
//! in a fixed set of slots (as many as streams asked per connection), found by a scan.
//! Header blocks are decoded by [`super::hpack`], into buffers kept from block to block.
//!
//! What it keeps of the protocol (RFC 9113): the server's SETTINGS (concurrency, initial
//! window, frame size, header table size) and their acknowledgement, flow control on both
//! levels in both directions (our receive windows are large, as h2load's, and reopened by
//! WINDOW_UPDATE at half; request bodies wait for the server's windows), HPACK decoding of
//! every header block, CONTINUATION, padding, interim 1xx answers, trailers, PING, GOAWAY
//! and RST_STREAM. A frame that breaks the protocol is a connection error: GOAWAY is
//! written with its code, and every stream still open fails as malformed. A response that
//! breaks it on one stream only (no `:status`, DATA before HEADERS, a content-length the
//! DATA contradicts, a header list over [`MAX_HEADER_LIST`], a window update that
//! overflows the stream's window) fails that stream as malformed and resets it.
//!
//! Whatever a server sends, a connection's memory stays bounded: a header block over
//! [`MAX_HEADER_BLOCK`] or spread over more than [`MAX_BLOCK_FRAMES`] frames ends the
//! connection, a decoded list over [`MAX_HEADER_LIST`] is counted and not kept, and a
//! server that sends PING or SETTINGS frames faster than it reads their acknowledgements
//! has its connection ended once [`MAX_QUEUED_CONTROL`] of them wait (ENHANCE_YOUR_CALM,
//! as servers treat such floods since the 2019 HTTP/2 advisories).

use super::frame::{self, ErrorCode, Flags, FrameError, Kind, Oversized, Reader};
use super::hpack::{self, Fields};
use super::request::{table_size_update, Prepared};
use crate::exchange::{Begin, Exchange};
use shootout_model::{FailureKind, GRPC_STREAM_MAX_BYTES};
use std::time::Instant;

/// The receive window we announce for every stream and open for the connection: 2^30 − 1
/// bytes, h2load's default, so a response is rarely held back by our flow control.
pub const RECV_WINDOW: i64 = (1 << 30) - 1;

/// The largest header list accepted, as RFC 9113 §6.5.2 counts it (name + value + 32
/// bytes per field), announced as SETTINGS_MAX_HEADER_LIST_SIZE: 64 KiB, the limit common
/// among HTTP/2 implementations (nghttp2's default among them) and far above a real
/// answer's few hundred bytes. A larger list fails its stream as malformed.
pub const MAX_HEADER_LIST: usize = 64 * 1024;

/// The largest header block (all its frames) accepted: an encoded field is smaller than
/// the 32 bytes more than its name and value that it counts for in the list, so a block
/// over the list's limit cannot decode within it. A larger block ends the connection
/// (COMPRESSION_ERROR: the table cannot be kept in step without decoding it).
pub const MAX_HEADER_BLOCK: usize = MAX_HEADER_LIST;

/// The most frames one header block may span (HEADERS and its CONTINUATIONs): a block of
/// 64 KiB needs 4 frames of 16 KiB. More ends the connection (ENHANCE_YOUR_CALM), so a
/// stream of empty CONTINUATION frames cannot hold it forever.
pub const MAX_BLOCK_FRAMES: usize = 64;

/// The most control frames (acknowledgements of PING and SETTINGS, RST_STREAM) waiting to
/// be written to a server that does not read them: 10,000 (as Go's HTTP/2 server allows a
/// client), about 170 KB. One more ends the connection (ENHANCE_YOUR_CALM).
pub const MAX_QUEUED_CONTROL: usize = 10_000;

/// The highest stream id a client may open (2^31 − 1).
const MAX_STREAM_ID: u32 = 0x7fff_ffff;

/// The most bytes of a `server` field kept.
const MAX_SERVER: usize = 256;

/// What happened on the connection, in order, for the worker to act on. A stream named by
/// an event stays in its slot until the worker calls [`Connection::free`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The server's first SETTINGS arrived: streams may open.
    Ready,
    /// The stream in this slot got its whole answer.
    Answered(usize),
    /// The stream in this slot ended without a good answer.
    Failed(usize, FailureKind),
    /// The stream in this slot got its whole answer, which failed a gRPC check (its
    /// status and its time are the answer's).
    Rejected(usize, FailureKind),
    /// A server-streaming call in this slot read this many more replies, whole and as
    /// expected.
    Replies(usize, u32),
    /// A bidirectional call in this slot read replies that answer its messages from this
    /// index (0-based, in the order sent) on: this many, whole and as expected.
    Echoes(usize, u32, u32),
    /// The server-streaming call in this slot was ended by the client at its limit
    /// (RST_STREAM CANCEL written): it ended well.
    Stopped(usize),
    /// The server did not process the stream in this slot (a GOAWAY's last stream id is
    /// below it, or it was reset with REFUSED_STREAM: RFC 9113 §8.7): it may be sent
    /// again, after a GOAWAY on another connection.
    Unprocessed(usize),
    /// A RST_STREAM with this error code arrived (counted whatever its stream was).
    Reset(ErrorCode),
    /// A GOAWAY arrived.
    Goaway,
}

/// The connection broke the protocol; GOAWAY with this code has been written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnError(pub ErrorCode);

impl From<ErrorCode> for ConnError {
    fn from(code: ErrorCode) -> ConnError {
        ConnError(code)
    }
}

impl From<FrameError> for ConnError {
    fn from(e: FrameError) -> ConnError {
        ConnError(e.code())
    }
}

/// Why feeding stopped: a frame's handling failed, or a frame was over the size we allow.
enum Fed {
    Conn(ConnError),
    Oversized,
}

impl From<Oversized> for Fed {
    fn from(_: Oversized) -> Self {
        Fed::Oversized
    }
}

/// The streams a connection gave up on (reset, or left unprocessed by a GOAWAY), by id,
/// among the last [`Resets::SPAN`] it opened: the server may have sent frames on them
/// before it read the reset, and those are ignored, where frames on a stream the server
/// itself ended are an error. Allocated at the first
/// reset (512 bytes); a stream older than the span counts as reset (nothing is known).
#[derive(Debug, Default)]
struct Resets {
    bits: Option<Box<[u64; Resets::SPAN / 64]>>,
    /// The highest stream id marked.
    top: u32,
}

impl Resets {
    const SPAN: usize = 4096;

    fn slot(id: u32) -> (usize, u64) {
        let n = (id as usize / 2) % Self::SPAN;
        (n / 64, 1 << (n % 64))
    }

    fn mark(&mut self, id: u32) {
        let bits = self
            .bits
            .get_or_insert_with(|| Box::new([0; Self::SPAN / 64]));
        // Ids between the last marked and this one were not reset: clear their bits,
        // left from ids a span ago.
        let mut next = self.top.max(id.saturating_sub(2 * Self::SPAN as u32)) + 2;
        while next < id {
            let (w, b) = Self::slot(next);
            bits[w] &= !b;
            next += 2;
        }
        let (w, b) = Self::slot(id);
        bits[w] |= b;
        self.top = self.top.max(id);
    }

    fn has(&self, id: u32) -> bool {
        if id.saturating_add(2 * Self::SPAN as u32) <= self.top {
            return true;
        }
        let Some(bits) = &self.bits else {
            return false;
        };
        if id > self.top {
            return false;
        }
        let (w, b) = Self::slot(id);
        bits[w] & b != 0
    }
}

/// One stream: its request's exchange (timings and what has come back of its answer) and
/// the stream's own state.
#[derive(Debug)]
pub struct Stream {
    /// Stream id; 0 for a free slot.
    pub id: u32,
    /// The request and its answer so far (its `sent`: when its HEADERS were written; its
    /// first byte: the answer's first frame).
    pub exchange: Exchange,
    length: Option<u64>,
    final_head: bool,
    /// An event has named this stream; frames for it are ignored from now on.
    done: bool,
    send_window: i64,
    body_sent: usize,
    recv_window: i64,
    /// A gRPC call's answer so far (unused for other requests).
    grpc: crate::h2::grpc::Call,
    /// The stream's own body, when the run's bodies vary (a gRPC list's messages, a
    /// journey's steps; see [`Connection::staged`]; a bidirectional call's messages as
    /// they fall due); the run's body otherwise.
    own: Vec<u8>,
    /// More of the body is to come (a bidirectional call's side still open): its last
    /// DATA frame does not end the stream.
    sending: bool,
    /// Our END_STREAM was written.
    half_closed: bool,
    /// Its request is a HEAD: its answer has no body whatever its content-length says.
    head: bool,
    /// Journeys: what the stream keeps of its answer ([`Connection::keep`]).
    kept: Option<Box<Kept>>,
}

impl Stream {
    /// The body the stream sends: its own, or the run's.
    fn body<'a>(own: &'a [u8], req: &'a Prepared) -> &'a [u8] {
        if req.varies() || req.grpc.as_ref().is_some_and(|r| r.bidi()) {
            own
        } else {
            &req.body
        }
    }
}

/// How the next header block is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hpack {
    /// Literals that fill the server's table (the first block).
    First,
    /// Indices into what the first block put in the server's table.
    Indexed,
    /// Literals never indexed (the server's table is too small).
    Plain,
}

/// One connection's protocol state.
pub struct Connection {
    reader: Reader,
    /// Frames to send, in order.
    pub out: Vec<u8>,
    /// What happened since the worker last drained it.
    pub events: Vec<Event>,
    decoder: hpack::Decoder,
    /// The fields of the header block being decoded (their buffers reused).
    fields: Fields,
    streams: Vec<Stream>,
    active: usize,
    next_id: u32,
    ready: bool,
    goaway: Option<(u32, ErrorCode)>,
    /// The server acknowledged our SETTINGS.
    pub acked: bool,
    max_concurrent: Option<u64>,
    peer_window: i64,
    send_window: i64,
    peer_max_frame: usize,
    hpack: Hpack,
    size_update: Option<usize>,
    encoder_table: usize,
    recv_window: i64,
    block: Vec<u8>,
    block_of: Option<(u32, bool)>,
    /// Frames the header block being read has spanned.
    block_frames: usize,
    /// Control frames written to `out` since it was last empty (all written).
    control: usize,
    /// The streams we gave up on (reset, or left unprocessed by a GOAWAY), whose late
    /// frames are ignored.
    given_up: Resets,
    /// Keep the `server` field of the next final answer.
    pub want_server: bool,
    /// Final answer heads still to copy for `-v 2` (set on one connection of a run).
    pub sample: usize,
    /// Answer heads copied, as text (`HTTP/2 200`, then `name: value` lines), until the
    /// worker takes them.
    pub heads: Vec<Vec<u8>>,
    /// The `server` field kept, if asked for.
    pub server: Option<String>,
    /// When the run's bodies vary (a gRPC list's messages): the body of the next stream
    /// opened, written by the worker before [`Connection::open`], which takes it (the
    /// stream's old buffer left in its place).
    pub staged: Vec<u8>,
}

/// What a stream keeps of its answer for a journey's user: the final head's fields and
/// the body's first `body_max` bytes. The buffers are reused from answer to answer on the
/// stream's slot (the head's is swapped with the decoder's list).
#[derive(Debug)]
pub struct Kept {
    /// The final answer's status.
    pub status: u16,
    /// The final answer's fields, as decoded (at most [`MAX_HEADER_LIST`]).
    pub head: Fields,
    /// The body's first bytes.
    pub body: Vec<u8>,
    /// How many body bytes to keep.
    pub body_max: usize,
}

impl Connection {
    /// A connection for `streams` concurrent streams, searching bodies for `needle`.
    pub fn new(streams: usize, needle: Option<&[u8]>) -> Self {
        let now = Instant::now();
        Connection {
            reader: Reader::default(),
            // Grows to what one read's worth of frames needs, then keeps its capacity: at
            // 10,000 connections a fixed 16 KiB each would be 160 MB for nothing.
            out: Vec::new(),
            events: Vec::with_capacity(streams * 2 + 4),
            decoder: hpack::Decoder::default(),
            fields: Fields::new(MAX_HEADER_LIST),
            streams: (0..streams)
                .map(|_| Stream {
                    id: 0,
                    exchange: Exchange::new(needle, now),
                    length: None,
                    final_head: false,
                    done: false,
                    send_window: 0,
                    body_sent: 0,
                    recv_window: 0,
                    grpc: crate::h2::grpc::Call::default(),
                    own: Vec::new(),
                    sending: false,
                    half_closed: false,
                    head: false,
                    kept: None,
                })
                .collect(),
            active: 0,
            next_id: 1,
            ready: false,
            goaway: None,
            acked: false,
            max_concurrent: None,
            peer_window: frame::DEFAULT_WINDOW,
            send_window: frame::DEFAULT_WINDOW,
            peer_max_frame: frame::DEFAULT_MAX_FRAME,
            hpack: Hpack::First,
            size_update: None,
            encoder_table: 4096,
            recv_window: frame::DEFAULT_WINDOW,
            block: Vec::new(),
            block_of: None,
            block_frames: 0,
            control: 0,
            given_up: Resets::default(),
            want_server: false,
            server: None,
            sample: 0,
            heads: Vec::new(),
            staged: Vec::new(),
        }
    }

    /// Journeys: the stream in `slot` (just opened) keeps its answer's final head and
    /// its body's first `body_max` bytes ([`Connection::kept`]), and searches its body for
    /// `needle` (its step's `body_contains`, rendered for its user) instead of the run's.
    /// The buffers are the slot's, allocated at its first journey's stream.
    pub fn keep(&mut self, slot: usize, body_max: usize, needle: Option<&[u8]>) {
        let s = &mut self.streams[slot];
        s.kept
            .get_or_insert_with(|| {
                Box::new(Kept {
                    status: 0,
                    head: Fields::new(MAX_HEADER_LIST),
                    body: Vec::new(),
                    body_max: 0,
                })
            })
            .body_max = body_max;
        s.exchange.search.set(needle);
    }

    /// Journeys: what the stream in `slot` kept of its answer (its slot freed or not, until
    /// another stream opens in it), and the `server` field kept.
    pub fn kept(&mut self, slot: usize) -> (Option<&Kept>, &mut Option<String>) {
        let kept = self.streams.get(slot).and_then(|s| s.kept.as_deref());
        (kept, &mut self.server)
    }

    /// Starts over for a new socket: writes the preface, our SETTINGS (no push, a large
    /// stream window) and the WINDOW_UPDATE that opens the connection's window as wide.
    pub fn start(&mut self) {
        self.reader.clear();
        self.out.clear();
        self.events.clear();
        self.block.clear();
        self.block_of = None;
        self.control = 0;
        self.given_up = Resets::default();
        self.decoder = hpack::Decoder::default();
        for s in &mut self.streams {
            s.id = 0;
        }
        self.active = 0;
        self.next_id = 1;
        self.ready = false;
        self.goaway = None;
        self.acked = false;
        self.max_concurrent = None;
        self.peer_window = frame::DEFAULT_WINDOW;
        self.send_window = frame::DEFAULT_WINDOW;
        self.peer_max_frame = frame::DEFAULT_MAX_FRAME;
        self.hpack = Hpack::First;
        self.size_update = None;
        self.encoder_table = 4096;
        self.out.extend_from_slice(frame::PREFACE);
        frame::settings(
            &mut self.out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, RECV_WINDOW as u32),
                (frame::SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST as u32),
            ],
        );
        frame::window_update(
            &mut self.out,
            0,
            (RECV_WINDOW - frame::DEFAULT_WINDOW) as u32,
        );
        self.recv_window = RECV_WINDOW;
    }

    /// Streams open (answered or failed ones included until freed).
    pub fn active(&self) -> usize {
        self.active
    }

    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`, if it announced one.
    pub fn max_concurrent(&self) -> Option<u64> {
        self.max_concurrent
    }

    /// The connection takes no new stream (GOAWAY came, or the stream ids ran out): once
    /// its streams end it is closed and replaced.
    pub fn spent(&self) -> bool {
        self.goaway.is_some() || self.next_id > MAX_STREAM_ID
    }

    /// The run is over: GOAWAY with NO_ERROR is queued (RFC 9113 §6.8: the graceful
    /// close; no stream of the server's was processed, so its last stream id is 0).
    pub fn goodbye(&mut self) {
        frame::goaway(&mut self.out, frame::NO_ERROR);
    }

    /// The code of the GOAWAY received, if any.
    pub fn goaway_code(&self) -> Option<ErrorCode> {
        self.goaway.map(|(_, code)| code)
    }

    /// How many more streams may open now.
    pub fn room(&self) -> usize {
        if !self.ready || self.spent() {
            return 0;
        }
        let limit = self
            .max_concurrent
            .map_or(self.streams.len(), |m| self.streams.len().min(m as usize));
        limit.saturating_sub(self.active)
    }

    /// The stream in `slot`.
    pub fn stream(&self, slot: usize) -> &Stream {
        &self.streams[slot]
    }

    /// The exchange of the stream in `slot`, with the `server` field kept (taken by the
    /// worker for its first answer).
    #[inline]
    pub fn answered(&mut self, slot: usize) -> (&Exchange, &mut Option<String>) {
        (&self.streams[slot].exchange, &mut self.server)
    }

    /// Each open stream's request's start (a streaming call that read a reply: that
    /// reply's arrival, as its next reply's latency counts it).
    pub fn starts(&self) -> impl Iterator<Item = Instant> + '_ {
        self.streams
            .iter()
            .filter(|s| s.id != 0)
            .map(|s| s.grpc.last.unwrap_or(s.exchange.start))
    }

    /// Slots of the streams no event has named yet (those still waiting for an answer).
    pub fn open_slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.streams
            .iter()
            .enumerate()
            .filter(|(_, s)| s.id != 0 && !s.done)
            .map(|(i, _)| i)
    }

    /// Frees the slot of a stream an event named.
    pub fn free(&mut self, slot: usize) {
        let s = &mut self.streams[slot];
        if s.id != 0 {
            s.id = 0;
            self.active -= 1;
        }
    }

    /// Gives up on the stream in `slot` (its deadline passed): RST_STREAM(CANCEL) is
    /// written and the slot freed; frames still coming for it are ignored.
    pub fn cancel(&mut self, slot: usize) {
        let id = self.streams[slot].id;
        frame::rst_stream(&mut self.out, id, frame::CANCEL);
        self.given_up.mark(id);
        self.free(slot);
    }

    /// Ends the server-streaming call in `slot` at the client's limit: RST_STREAM(CANCEL)
    /// is written and [`Event::Stopped`] reported, or [`Event::Rejected`] when a reply
    /// did not hold what was expected.
    pub fn stop(&mut self, slot: usize) {
        let id = self.streams[slot].id;
        frame::rst_stream(&mut self.out, id, frame::CANCEL);
        self.given_up.mark(id);
        let event = match self.streams[slot].grpc.frames.unexpected() {
            true => Event::Rejected(slot, FailureKind::Body),
            false => Event::Stopped(slot),
        };
        self.streams[slot].done = true;
        self.events.push(event);
    }

    /// A server-streaming call in `slot` read a reply at `now`: when it read the one
    /// before (`None` for its first).
    pub fn replied(&mut self, slot: usize, now: Instant) -> Option<Instant> {
        self.streams[slot].grpc.last.replace(now)
    }

    /// When the call in `slot` read its last reply (`None`: none yet).
    pub fn last_reply(&self, slot: usize) -> Option<Instant> {
        self.streams[slot].grpc.last
    }

    /// The gRPC call in `slot` as it stands.
    pub fn call(&self, slot: usize) -> &crate::h2::grpc::Call {
        &self.streams[slot].grpc
    }

    /// Whether the bidirectional call in `slot` may still send: open, and its side not
    /// ended.
    pub fn may_send(&self, slot: usize) -> bool {
        let s = &self.streams[slot];
        s.id != 0 && !s.done && s.sending
    }

    /// Sends the bidirectional call in `slot` its next message, `framed` (behind its
    /// prefix), due at `due`; `last`: its side ends with it. The message waits for the
    /// windows as a body does. Refused (false, nothing sent) when the bytes still
    /// waiting for the windows would pass [`GRPC_STREAM_MAX_BYTES`] with it.
    pub fn send_message(
        &mut self,
        req: &Prepared,
        slot: usize,
        framed: &[u8],
        due: Instant,
        last: bool,
    ) -> bool {
        let s = &mut self.streams[slot];
        if s.body_sent == s.own.len() {
            s.own.clear();
            s.body_sent = 0;
        } else if s.body_sent > s.own.len() / 2 {
            s.own.drain(..s.body_sent);
            s.body_sent = 0;
        }
        if s.own.len() - s.body_sent + framed.len() > GRPC_STREAM_MAX_BYTES {
            return false;
        }
        s.own.extend_from_slice(framed);
        s.grpc.sent += 1;
        s.grpc.due = Some(due);
        s.sending = !last;
        self.push_body(req, slot);
        true
    }

    /// Ends the sending side of the bidirectional call in `slot`: END_STREAM goes with
    /// its last bytes, or alone when they are all written.
    pub fn close_send(&mut self, req: &Prepared, slot: usize) {
        let s = &mut self.streams[slot];
        s.sending = false;
        self.push_body(req, slot);
    }

    /// Opens a stream for `req` (there must be [`Connection::room`]): writes its HEADERS
    /// (and CONTINUATION when the block is over the server's frame size) and as much of the
    /// body as the windows allow. Returns its slot.
    pub fn open(&mut self, req: &Prepared, b: Begin) -> usize {
        let slot = self
            .streams
            .iter()
            .position(|s| s.id == 0)
            .expect("open is called only when there is room");
        let id = self.next_id;
        self.next_id += 2;
        self.active += 1;
        let s = &mut self.streams[slot];
        s.id = id;
        s.exchange.begin(b);
        s.length = None;
        s.final_head = false;
        s.done = false;
        s.send_window = self.peer_window;
        s.body_sent = 0;
        s.recv_window = RECV_WINDOW;
        s.half_closed = false;
        s.sending = false;
        if let Some(reply) = &req.grpc {
            s.grpc.begin();
            s.grpc.frames.begin_with(reply.cap());
            // A bidirectional call's messages follow as they fall due.
            if reply.bidi() {
                s.sending = true;
                s.own.clear();
            }
        }
        s.head = req.head_request;
        if req.varies() && !s.sending {
            std::mem::swap(&mut s.own, &mut self.staged);
        }
        let s = &self.streams[slot];
        let bodiless = Stream::body(&s.own, req).is_empty() && !s.sending;
        self.streams[slot].half_closed = bodiless;
        self.write_headers(req, id, bodiless);
        if !bodiless {
            self.push_body(req, slot);
        }
        slot
    }

    /// Writes the HEADERS (and CONTINUATION) frames of a new stream.
    fn write_headers(&mut self, req: &Prepared, id: u32, end_stream: bool) {
        let mut prefix = [0u8; 8];
        let mut prefix_len = 0;
        if let Some(size) = self.size_update.take() {
            let mut v = Vec::with_capacity(8);
            table_size_update(&mut v, size);
            prefix[..v.len()].copy_from_slice(&v);
            prefix_len = v.len();
        }
        let block: &[u8] = match self.hpack {
            Hpack::First if req.table_size <= self.encoder_table => {
                self.hpack = Hpack::Indexed;
                &req.first
            }
            Hpack::Indexed => &req.indexed,
            Hpack::First | Hpack::Plain => {
                self.hpack = Hpack::Plain;
                &req.plain
            }
        };
        let total = prefix_len + block.len();
        let max = self.peer_max_frame;
        if total <= max {
            frame::head(
                &mut self.out,
                total,
                Kind::Headers,
                Flags::headers(end_stream, true),
                id,
            );
            self.out.extend_from_slice(&prefix[..prefix_len]);
            self.out.extend_from_slice(block);
            return;
        }
        let mut all = Vec::with_capacity(total);
        all.extend_from_slice(&prefix[..prefix_len]);
        all.extend_from_slice(block);
        for (i, part) in all.chunks(max).enumerate() {
            let last = (i + 1) * max >= total;
            let (kind, flags) = if i == 0 {
                (Kind::Headers, Flags::headers(end_stream, last))
            } else {
                (Kind::Continuation, Flags::continuation(last))
            };
            frame::head(&mut self.out, part.len(), kind, flags, id);
            self.out.extend_from_slice(part);
        }
    }

    /// Writes as much of the body of the stream in `slot` as both windows allow; the
    /// last of it ends the stream unless more is to come (and once nothing more is, an
    /// empty DATA frame ends it when every byte is out).
    fn push_body(&mut self, req: &Prepared, slot: usize) {
        let s = &mut self.streams[slot];
        let body = Stream::body(&s.own, req);
        if s.body_sent == body.len() && !s.sending && !s.half_closed {
            frame::head(&mut self.out, 0, Kind::Data, Flags::data(true), s.id);
            s.half_closed = true;
            return;
        }
        while s.body_sent < body.len() {
            let window = s.send_window.min(self.send_window);
            if window <= 0 {
                return;
            }
            let n = (body.len() - s.body_sent)
                .min(window as usize)
                .min(self.peer_max_frame);
            let end = s.body_sent + n == body.len() && !s.sending;
            s.half_closed |= end;
            frame::head(&mut self.out, n, Kind::Data, Flags::data(end), s.id);
            self.out
                .extend_from_slice(&body[s.body_sent..s.body_sent + n]);
            s.body_sent += n;
            s.send_window -= n as i64;
            self.send_window -= n as i64;
        }
    }

    /// Sends what the windows now allow of every body still waiting.
    fn push_bodies(&mut self, req: &Prepared) {
        if req.body.is_empty() && !req.varies() {
            return;
        }
        for slot in 0..self.streams.len() {
            let s = &self.streams[slot];
            if s.id != 0 && !s.done && s.body_sent < Stream::body(&s.own, req).len() {
                self.push_body(req, slot);
            }
        }
    }
}

mod recv;
#[cfg(test)]
mod tests;
