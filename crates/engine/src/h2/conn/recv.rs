//! What a connection does with the server's bytes ([`Connection::feed`]): each frame
//! checked against the protocol and acted on — SETTINGS, flow control, header blocks and
//! their CONTINUATION, DATA against the content-length, RST_STREAM, GOAWAY, PING — with
//! the events and the frames to write that follow.

use super::{ConnError, Connection, Event, Fed, Hpack, Stream, MAX_BLOCK_FRAMES, MAX_HEADER_BLOCK};
use super::{MAX_QUEUED_CONTROL, MAX_SERVER, RECV_WINDOW};
use crate::codec::decimal::parse as parse_decimal;
use crate::fields;
use crate::h2::frame::{self, ErrorCode, Frame, Head, Kind, Setting, Settings};
use crate::h2::request::Prepared;
use shootout_model::FailureKind;
use std::time::Instant;

impl Connection {
    /// Takes bytes from the server. Events go to [`Connection::events`]; on a connection
    /// error GOAWAY is written and the error returned (the connection is finished).
    pub fn feed(&mut self, data: &[u8], req: &Prepared, now: Instant) -> Result<(), ConnError> {
        let mut reader = std::mem::take(&mut self.reader);
        let r = reader
            .feed(data, frame::DEFAULT_MAX_FRAME, |h, p| {
                self.frame(h, p, req, now).map_err(Fed::Conn)
            })
            .map_err(|e| match e {
                Fed::Conn(e) => e,
                // Before the server's SETTINGS, bytes that are not a frame are not its
                // preface (RFC 9113 §3.4).
                Fed::Oversized if !self.ready => ConnError(frame::PROTOCOL_ERROR),
                Fed::Oversized => ConnError(frame::FRAME_SIZE_ERROR),
            });
        self.reader = reader;
        if let Err(ConnError(code)) = r {
            frame::goaway(&mut self.out, code);
        }
        r
    }

    #[inline]
    fn frame(&mut self, h: Head, p: &[u8], req: &Prepared, now: Instant) -> Result<(), ConnError> {
        let kind = h.kind();
        if !self.ready && (kind != Kind::Settings || h.ack()) {
            // The server's preface is a SETTINGS frame (RFC 9113 §3.4).
            return Err(ConnError(frame::PROTOCOL_ERROR));
        }
        if let Some((stream, _)) = self.block_of {
            if kind != Kind::Continuation || h.stream != stream {
                return Err(ConnError(frame::PROTOCOL_ERROR));
            }
        }
        match frame::decode(&h, p)? {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow,
            } => self.data(stream, end_stream, data, flow, req, now),
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                fragment,
            } => self.headers(stream, end_stream, end_headers, fragment, req, now),
            Frame::Continuation {
                end_headers,
                fragment,
                ..
            } => self.continuation(end_headers, fragment, req, now),
            // A stream that is not open has nothing to reset.
            Frame::Priority {
                stream,
                well_formed: false,
            } => match self.find_known(stream) {
                Some(slot) => self.stream_error(slot, frame::FRAME_SIZE_ERROR),
                None => Ok(()),
            },
            Frame::Priority { .. } => Ok(()),
            Frame::RstStream { stream, code } => self.rst_stream(stream, code),
            Frame::Settings(s) => self.settings(s, req),
            // Push is disabled by our SETTINGS.
            Frame::PushPromise => Err(ConnError(frame::PROTOCOL_ERROR)),
            Frame::Ping { ack, payload } => {
                if !ack {
                    self.control()?;
                    frame::ping_ack(&mut self.out, payload);
                }
                Ok(())
            }
            Frame::Goaway { last, code } => self.goaway(last, code),
            Frame::WindowUpdate { stream, increment } => self.window_update(stream, increment, req),
            // Unknown frame types are ignored (RFC 9113 §4.1).
            Frame::Unknown => Ok(()),
        }
    }

    /// HEADERS: the first fragment of a header block, decoded when it is whole.
    // Called from one place per frame kind: inlined there, as before the frames
    // were typed, so that decoding costs no call.
    #[inline(always)]
    fn headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        fragment: &[u8],
        req: &Prepared,
        now: Instant,
    ) -> Result<(), ConnError> {
        // A block for a stream the server ended is an error; one for a stream we reset is
        // still decoded, to keep the table in step (RFC 9113 §4.3).
        self.find(stream)?;
        self.block.clear();
        self.block.extend_from_slice(fragment);
        self.block_of = Some((stream, end_stream));
        self.block_frames = 1;
        if end_headers {
            return self.header_block(req, now);
        }
        Ok(())
    }

    /// CONTINUATION: the next fragment of the header block under way (bounded in frames
    /// and bytes).
    fn continuation(
        &mut self,
        end_headers: bool,
        fragment: &[u8],
        req: &Prepared,
        now: Instant,
    ) -> Result<(), ConnError> {
        if self.block_of.is_none() {
            return Err(ConnError(frame::PROTOCOL_ERROR));
        }
        self.block_frames += 1;
        if self.block_frames > MAX_BLOCK_FRAMES {
            return Err(ConnError(frame::ENHANCE_YOUR_CALM));
        }
        if self.block.len() + fragment.len() > MAX_HEADER_BLOCK {
            return Err(ConnError(frame::COMPRESSION_ERROR));
        }
        self.block.extend_from_slice(fragment);
        if end_headers {
            return self.header_block(req, now);
        }
        Ok(())
    }

    /// RST_STREAM: the stream fails as reset; one the server refused (REFUSED_STREAM) it
    /// did not process (RFC 9113 §8.7), so it may be sent again, as a GOAWAY's unprocessed
    /// streams are.
    fn rst_stream(&mut self, stream: u32, code: ErrorCode) -> Result<(), ConnError> {
        self.events.push(Event::Reset(code));
        if let Some(slot) = self.find_any(stream)? {
            let event = if code == frame::REFUSED_STREAM {
                Event::Unprocessed(slot)
            } else {
                Event::Failed(slot, FailureKind::StreamReset)
            };
            self.end(slot, event);
        }
        Ok(())
    }

    /// GOAWAY: streams above its last stream id were not processed.
    fn goaway(&mut self, last: u32, code: ErrorCode) -> Result<(), ConnError> {
        // A second GOAWAY may only lower last-stream-id.
        let last = self.goaway.map_or(last, |(l, _)| l.min(last));
        self.goaway = Some((last, code));
        self.events.push(Event::Goaway);
        for slot in 0..self.streams.len() {
            let s = &self.streams[slot];
            if s.id > last && !s.done {
                self.given_up.mark(s.id);
                self.end(slot, Event::Unprocessed(slot));
            }
        }
        Ok(())
    }

    /// WINDOW_UPDATE: more room to send request bodies. On the connection a zero increment
    /// or an overflow is a connection error, on a stream the stream's (RFC 9113 §6.9,
    /// §6.9.1).
    fn window_update(
        &mut self,
        stream: u32,
        increment: u32,
        req: &Prepared,
    ) -> Result<(), ConnError> {
        let inc = i64::from(increment);
        if stream == 0 {
            if inc == 0 {
                return Err(ConnError(frame::PROTOCOL_ERROR));
            }
            self.send_window += inc;
            if self.send_window > frame::MAX_WINDOW {
                return Err(ConnError(frame::FLOW_CONTROL_ERROR));
            }
        } else if let Some(slot) = self.find_any(stream)? {
            let s = &mut self.streams[slot];
            s.send_window += inc;
            if inc == 0 {
                self.stream_error(slot, frame::PROTOCOL_ERROR)?;
            } else if s.send_window > frame::MAX_WINDOW {
                self.stream_error(slot, frame::FLOW_CONTROL_ERROR)?;
            }
        }
        self.push_bodies(req);
        Ok(())
    }

    /// For a frame that may only come on an open stream (DATA, HEADERS): the slot of the
    /// stream, `None` for one we gave up on (its frames are ignored: RFC 9113 §5.1), a
    /// STREAM_CLOSED for one the server ended or that failed without our reset, and a
    /// PROTOCOL_ERROR for a stream we never opened.
    #[inline]
    fn find(&self, id: u32) -> Result<Option<usize>, ConnError> {
        let slot = self.find_any(id)?;
        if slot.is_none() && !self.given_up.has(id) {
            return Err(ConnError(frame::STREAM_CLOSED));
        }
        Ok(slot)
    }

    /// For a frame a closed stream may still get (WINDOW_UPDATE, RST_STREAM): the slot of
    /// an open stream, `None` for a closed one, a PROTOCOL_ERROR for one never opened.
    #[inline]
    fn find_any(&self, id: u32) -> Result<Option<usize>, ConnError> {
        if id.is_multiple_of(2) || id >= self.next_id {
            return Err(ConnError(frame::PROTOCOL_ERROR));
        }
        Ok(self.streams.iter().position(|s| s.id == id && !s.done))
    }

    /// Ends the stream in `slot` with `event`.
    fn end(&mut self, slot: usize, event: Event) {
        self.streams[slot].done = true;
        self.events.push(event);
    }

    /// The slot of an open stream, if `id` names one (no error for any other id).
    fn find_known(&self, id: u32) -> Option<usize> {
        self.streams
            .iter()
            .position(|s| s.id == id && id != 0 && !s.done)
    }

    /// A stream's answer broke the protocol: RST_STREAM with `code` is written and the
    /// stream fails as malformed.
    fn stream_error(&mut self, slot: usize, code: ErrorCode) -> Result<(), ConnError> {
        self.control()?;
        let id = self.streams[slot].id;
        frame::rst_stream(&mut self.out, id, code);
        self.given_up.mark(id);
        self.end(slot, Event::Failed(slot, FailureKind::Malformed));
        Ok(())
    }

    /// Counts a control frame about to be written; too many waiting for a server that
    /// does not read them is a flood.
    fn control(&mut self) -> Result<(), ConnError> {
        if self.out.is_empty() {
            self.control = 0;
        }
        self.control += 1;
        if self.control > MAX_QUEUED_CONTROL {
            return Err(ConnError(frame::ENHANCE_YOUR_CALM));
        }
        Ok(())
    }

    /// SETTINGS: each entry applied in turn (the first fault ends the connection), then
    /// acknowledged.
    fn settings(&mut self, s: Settings, req: &Prepared) -> Result<(), ConnError> {
        if s == Settings::Ack {
            self.acked = true;
            return Ok(());
        }
        for entry in s.entries() {
            match entry? {
                Setting::HeaderTableSize(v) => {
                    let v = v as usize;
                    if v < self.encoder_table {
                        self.encoder_table = v;
                        self.size_update = Some(v);
                        if self.hpack == Hpack::Indexed && v < req.table_size {
                            self.hpack = Hpack::Plain;
                        }
                    }
                }
                Setting::MaxConcurrentStreams(v) => self.max_concurrent = Some(v.into()),
                Setting::InitialWindowSize(v) => {
                    let v = i64::from(v);
                    let delta = v - self.peer_window;
                    self.peer_window = v;
                    // Streams that ended (their slots not yet freed) have no window left to change.
                    for s in self.streams.iter_mut().filter(|s| s.id != 0 && !s.done) {
                        s.send_window += delta;
                        if s.send_window > frame::MAX_WINDOW {
                            return Err(ConnError(frame::FLOW_CONTROL_ERROR));
                        }
                    }
                }
                Setting::MaxFrameSize(v) => self.peer_max_frame = v as usize,
                Setting::EnablePush(_) | Setting::MaxHeaderListSize(_) | Setting::Unknown(_) => {}
            }
        }
        self.control()?;
        frame::settings_ack(&mut self.out);
        if !self.ready {
            self.ready = true;
            self.events.push(Event::Ready);
        }
        self.push_bodies(req);
        Ok(())
    }

    /// DATA: body bytes for a stream (`flow`: what flow control counts of the frame).
    // Called from one place per frame kind: inlined there, as before the frames
    // were typed, so that decoding costs no call.
    #[inline(always)]
    fn data(
        &mut self,
        stream: u32,
        end: bool,
        body: &[u8],
        flow: usize,
        req: &Prepared,
        now: Instant,
    ) -> Result<(), ConnError> {
        // Flow control counts the whole payload, padding included (RFC 9113 §6.9.1).
        let len = flow as i64;
        self.recv_window -= len;
        if self.recv_window < 0 {
            return Err(ConnError(frame::FLOW_CONTROL_ERROR));
        }
        if self.recv_window < RECV_WINDOW / 2 {
            frame::window_update(&mut self.out, 0, (RECV_WINDOW - self.recv_window) as u32);
            self.recv_window = RECV_WINDOW;
        }
        let Some(slot) = self.find(stream)? else {
            return Ok(());
        };
        let s = &mut self.streams[slot];
        s.exchange.arrived(now);
        s.recv_window -= len;
        if s.recv_window < 0 {
            return Err(ConnError(frame::FLOW_CONTROL_ERROR));
        }
        if !s.final_head {
            return self.stream_error(slot, frame::PROTOCOL_ERROR);
        }
        let s = &mut self.streams[slot];
        s.exchange.body(body);
        if let Some(reply) = &req.grpc {
            if reply.bidi() {
                self.echoes(slot, body, req);
            } else if self.replies(slot, body, req, end)? {
                return Ok(());
            }
        }
        let s = &mut self.streams[slot];
        if let Some(k) = s.kept.as_deref_mut() {
            let room = k.body_max.saturating_sub(k.body.len());
            k.body.extend_from_slice(&body[..body.len().min(room)]);
        }
        if !end && s.recv_window < RECV_WINDOW / 2 {
            let inc = (RECV_WINDOW - s.recv_window) as u32;
            s.recv_window = RECV_WINDOW;
            frame::window_update(&mut self.out, stream, inc);
        }
        if end {
            self.finish(slot, req);
        }
        Ok(())
    }

    /// DATA of a unary, client- or server-streaming call's answer: its messages read; a
    /// server stream's good ones reported, and the stream cancelled at its limit (true
    /// then: nothing more to do with the frame).
    fn replies(
        &mut self,
        slot: usize,
        body: &[u8],
        req: &Prepared,
        end: bool,
    ) -> Result<bool, ConnError> {
        let Some(reply) = &req.grpc else {
            return Ok(false);
        };
        let s = &mut self.streams[slot];
        let sent = Stream::body(&s.own, req);
        let before = s.grpc.frames.good();
        s.grpc.frames.feed(body, reply, sent);
        if !reply.server_streaming {
            return Ok(false);
        }
        let n = s.grpc.frames.good() - before;
        if n > 0 {
            self.events.push(Event::Replies(slot, n));
        }
        // At its limit, a stream the server has not ended is cancelled.
        if !end && self.streams[slot].grpc.frames.full() {
            self.control()?;
            self.stop(slot);
            return Ok(true);
        }
        Ok(false)
    }

    /// DATA of a bidirectional call's answer: its replies read, matched in order to the
    /// messages sent, the good matched ones reported ([`Event::Echoes`]). An echo is
    /// checked against the run's one message.
    fn echoes(&mut self, slot: usize, body: &[u8], req: &Prepared) {
        let Some(reply) = &req.grpc else { return };
        let c = &mut self.streams[slot].grpc;
        let (read, good) = (c.frames.messages(), c.frames.good());
        c.frames.feed(body, reply, &req.body);
        let (first, n) = c.matched_since(read, good);
        if n > 0 {
            self.events.push(Event::Echoes(slot, first, n));
        }
    }

    /// A header block is complete: decode it (always, to keep the HPACK table in step),
    /// then apply it to its stream.
    fn header_block(&mut self, req: &Prepared, now: Instant) -> Result<(), ConnError> {
        let (id, end_stream) = self.block_of.take().expect("a block is being read");
        self.decode_block()?;
        let block = self.read_fields(req.grpc.is_some());
        let Some(slot) = self.find(id)? else {
            return Ok(());
        };
        let s = &mut self.streams[slot];
        s.exchange.arrived(now);
        if s.final_head {
            return self.trailers(slot, end_stream, &block, req);
        }
        match block.status {
            Some(code) if !block.bad && (100..200).contains(&code) && code != 101 => {
                // An interim answer: the final one follows.
                if end_stream {
                    return self.stream_error(slot, frame::PROTOCOL_ERROR);
                }
            }
            Some(code) if !block.bad && code >= 200 => {
                self.final_head(slot, code, block, end_stream, req);
            }
            _ => return self.stream_error(slot, frame::PROTOCOL_ERROR),
        }
        Ok(())
    }

    /// Decodes the header block read into the connection's field list.
    fn decode_block(&mut self) -> Result<(), ConnError> {
        let decoded = self.decoder.decode(&self.block, &mut self.fields);
        if self.block.capacity() > 16 * 1024 {
            // A large block is rare: its buffer is not kept for every later one.
            self.block = Vec::new();
        }
        decoded.map_err(|_| ConnError(frame::COMPRESSION_ERROR))
    }

    /// What the decoded block says of its stream (`grpc`: a gRPC call's fields are read).
    #[inline]
    fn read_fields(&self, grpc: bool) -> BlockFields {
        // A list over the limit was not kept whole: its stream fails.
        let mut b = BlockFields {
            bad: self.fields.over(),
            ..BlockFields::default()
        };
        for (name, value) in self.fields.iter() {
            if name == b":status" {
                b.bad |= b.status.is_some();
                b.status = fields::parse_status(value);
                b.bad |= b.status.is_none();
            } else if name.first() == Some(&b':') {
                // A response has no other pseudo-header (RFC 9113 §8.3.2).
                b.bad = true;
            } else if name == b"content-length" {
                let v = parse_decimal(value);
                b.bad |= v.is_none() || b.length.is_some_and(|l| Some(l) != v);
                b.length = v;
            } else if grpc && name == b"content-type" {
                b.grpc_typed = crate::h2::grpc::is_grpc_type(value);
            } else if grpc && name == b"grpc-encoding" {
                b.grpc_gzip = value == crate::h2::grpc::gzip::GZIP.as_bytes();
            } else if grpc && name == b"grpc-status" {
                b.grpc_status = Some(crate::h2::grpc::Status::parse(value));
            } else if self.want_server && name == b"server" {
                let kept = &value[..value.len().min(MAX_SERVER)];
                b.server = Some(String::from_utf8_lossy(kept).into_owned());
            }
        }
        b
    }

    /// Trailers: they end the stream, and say nothing we check but a gRPC call's outcome.
    fn trailers(
        &mut self,
        slot: usize,
        end_stream: bool,
        block: &BlockFields,
        req: &Prepared,
    ) -> Result<(), ConnError> {
        if !end_stream || block.status.is_some() || block.bad {
            return self.stream_error(slot, frame::PROTOCOL_ERROR);
        }
        if req.grpc.is_some() {
            self.streams[slot].grpc.trailers(block.grpc_status);
        }
        self.finish(slot, req);
        Ok(())
    }

    /// The final answer's head, status `code`: copied where asked (`-v 2`, a journey),
    /// then the stream's answer; the stream is finished when the block ends it.
    // Called from one place: inlined there, as when it was part of header_block.
    #[inline(always)]
    fn final_head(
        &mut self,
        slot: usize,
        code: u16,
        block: BlockFields,
        end_stream: bool,
        req: &Prepared,
    ) {
        if self.sample > 0 {
            self.sample -= 1;
            let head = fields::head_text("HTTP/2", code, &self.fields);
            self.heads.push(head);
        }
        if let Some(k) = self.streams[slot].kept.as_deref_mut() {
            // The decoder's list becomes the kept head; the old one, its buffer.
            std::mem::swap(&mut k.head, &mut self.fields);
            k.status = code;
            k.body.clear();
        }
        let s = &mut self.streams[slot];
        s.exchange.status = code;
        s.length = block.length;
        s.final_head = true;
        if let Some(r) = &req.grpc {
            let gzip = r.compress && block.grpc_gzip;
            s.grpc
                .head(block.grpc_typed, block.grpc_status, end_stream, gzip);
        }
        if block.server.is_some() {
            self.server = block.server;
        }
        if end_stream {
            self.finish(slot, req);
        }
    }

    /// The stream in `slot` ended: answered, unless its body contradicts its
    /// content-length, or it is a gRPC call that failed ([`crate::h2::grpc::Call::verdict`]).
    fn finish(&mut self, slot: usize, req: &Prepared) {
        let s = &mut self.streams[slot];
        let status = s.exchange.status;
        let bodiless = s.head || status == 204 || status == 304;
        if !bodiless && s.length.is_some_and(|l| l != s.exchange.body_len) {
            self.end(slot, Event::Failed(slot, FailureKind::Malformed));
        } else if let Some(kind) = req.grpc.as_ref().and_then(|r| {
            let v = s.grpc.verdict(status, r.server_streaming);
            v.or_else(|| r.bidi().then(|| s.grpc.bidi_verdict()).flatten())
        }) {
            self.end(slot, Event::Rejected(slot, kind));
        } else {
            self.end(slot, Event::Answered(slot));
        }
        self.abort_sending(slot);
    }

    /// The server ended the stream in `slot` before our side ended (a bidirectional call
    /// with messages still to send): RST_STREAM NO_ERROR tells it no more is coming
    /// (RFC 9113 §8.1), so it need not wait for our END_STREAM.
    fn abort_sending(&mut self, slot: usize) {
        let s = &mut self.streams[slot];
        if s.half_closed || s.id == 0 {
            return;
        }
        s.half_closed = true;
        s.sending = false;
        let id = s.id;
        frame::rst_stream(&mut self.out, id, frame::NO_ERROR);
    }
}

/// What a decoded header block says of its stream.
#[derive(Default)]
struct BlockFields {
    /// `:status`, if one was readable.
    status: Option<u16>,
    /// `content-length`.
    length: Option<u64>,
    /// The block breaks the protocol (a second or unreadable `:status`, another
    /// pseudo-header, conflicting lengths, a list over the limit): its stream fails.
    bad: bool,
    /// The `server` field, cut to [`MAX_SERVER`] bytes, when the connection wants it.
    server: Option<String>,
    /// A gRPC call's `content-type` is gRPC's.
    grpc_typed: bool,
    /// A gRPC call's `grpc-status`.
    grpc_status: Option<crate::h2::grpc::Status>,
    /// A gRPC call's `grpc-encoding` is `gzip`.
    grpc_gzip: bool,
}
