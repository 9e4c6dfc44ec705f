//! HTTP/2 connections on the event loop ([`crate::event_loop`]), the same mio loop, pacer,
//! recorder and thread host as HTTP/1.1 and WebSocket: a worker's share of the connections,
//! each carrying up to `--streams` requests at once as streams, a new one opened as soon as
//! a slot frees up (where an HTTP/1.1 pipeline sends its next batch once the last answer
//! of the previous one arrived). What the bytes mean is the connection's
//! ([`super::conn`], no I/O); this is the sockets and the schedule.
//!
//! Per read, every whole frame is handled where it lies in the read buffer, the streams it
//! ends are recorded, the freed slots get new streams (closed loop) and all the frames
//! written meanwhile leave in one write: the more streams per connection, the fewer system
//! calls per request.
//!
//! Every request ends exactly once, as over HTTP/1.1: answered, failed (timeout, reset
//! stream, refused stream, connection error, malformed, …) or aborted at the end of the
//! run. A stream whose deadline passes is cancelled (RST_STREAM) and the connection kept;
//! a stream a GOAWAY left unprocessed is sent again on another connection, and one the
//! server refused (RST_STREAM REFUSED_STREAM) on the first with room, this one included,
//! each counted as retried, each time the server leaves it so, within its deadline and
//! at most [`crate::exchange::MAX_RESENDS`] times (then it fails as refused). A connection that
//! fails before its SETTINGS arrive (refused, closed, not HTTP/2) consumes one request as
//! a failure in a closed loop, so a run against a server that never speaks HTTP/2 still
//! ends by its count.

use super::conn::{Connection, Event};
use super::request::Prepared;
use crate::event_loop::{parts, Core, Entry, Protocol, Reads, Stage, Staged, Table, Taken};
use crate::exchange::Begin;
use crate::linger::Closing;
use crate::recorder::Timing;
use crate::template::Gen;
use crate::transport::Transport;
use shootout_model::{FailureKind, GrpcStream, StreamStats, GRPC_STREAM_MAX_BYTES};
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

struct Conn {
    h2: Connection,
    /// Bytes of `h2.out` already written.
    written: usize,
    /// The connection carried an answer.
    answered: bool,
}

struct Worker<'a> {
    core: Core<'a>,
    req: &'a Prepared,
    streams: usize,
    conns: Table<Stage, Conn>,
    /// The lowest `SETTINGS_MAX_CONCURRENT_STREAMS` below `streams` a server announced.
    limit: Option<u64>,
    scratch: Vec<usize>,
    /// Connections closed after a connection error, until the server closes its side.
    closing: Closing,
    /// A gRPC list's next message and its drawn values (unused otherwise).
    gen: Gen,
    /// A templated message's text, rendered before it is encoded.
    json: Vec<u8>,
    /// Bidi: the next message due of each call sent on a schedule (`--grpc-stream-interval`).
    due: Schedule,
    /// Bidi: the message being sent, rendered.
    msg: Vec<u8>,
}

/// Bidi: the calls' next messages on their schedules, earliest first: when the message is
/// due, the connection and the slot of its call, the call's stream id and start (to know
/// a later call in the same slot), and the message's index.
type Schedule =
    std::collections::BinaryHeap<std::cmp::Reverse<(Instant, usize, usize, u32, Instant, u32)>>;

/// Builds the worker around its `core`.
pub(crate) fn set_up<'a>(core: Core<'a>, req: &'a Prepared) -> io::Result<impl Protocol<'a>> {
    let a = core.share;
    let (sh, now) = (core.sh, core.start);
    let streams = sh.streams;
    let mut w = Worker {
        core,
        req,
        streams,
        conns: Table::with_capacity(a.connections),
        limit: None,
        scratch: Vec::with_capacity(streams),
        closing: Closing::default(),
        gen: match &req.messages {
            Some(m) => Gen::new(m.seed, m.random, m.len(), a.index, sh.workers),
            None => Gen::new(0, false, 1, a.index, sh.workers),
        },
        json: Vec::new(),
        due: Schedule::new(),
        msg: Vec::new(),
    };
    if let Some(r) = &req.grpc {
        w.core.rec.stream = r.shape().map(|shape| {
            let mut s = StreamStats::new(shape);
            if r.client_streaming {
                let bounded = r.stream.duration.is_none();
                s.messages_per_call = r.stream.messages.unwrap_or(u32::from(bounded));
            }
            Box::new(s)
        });
    }
    for _ in 0..a.connections {
        w.add(now);
    }
    // The heads sample (`-v 2`) comes from the first worker's first connection, as over
    // HTTP/1.1: the request as prepared, and the first answers' heads as decoded.
    if a.index == 0 && sh.heads > 0 && a.connections > 0 {
        w.conns[0].h2.sample = sh.heads;
        w.core.rec.heads.request = Some(req.text.clone());
    }
    Ok(w)
}

impl<'a> Protocol<'a> for Worker<'a> {
    parts!('a, Stage, Conn, core, conns);

    fn new_conn(&self, _: Instant) -> Conn {
        Conn {
            h2: Connection::new(self.streams, self.core.sh.expect.body_contains.as_deref()),
            written: 0,
            answered: false,
        }
    }

    fn resend(&mut self, now: Instant) -> bool {
        while !self.core.resend.is_empty() {
            let Some(i) = self.room(now) else {
                return false;
            };
            self.resend_on(i, now);
            self.flush(i, now);
        }
        true
    }

    /// Rate mode: a connection with room for a stream, kept listed while it has more.
    fn with_room(&mut self) -> Option<usize> {
        self.conns
            .with_room(|c| c.phase() == Stage::Open && c.h2.room() > 0)
    }

    fn begin(&mut self, i: usize, due: Instant, now: Instant) -> Taken {
        self.core.in_flight += 1;
        self.stage(i);
        let slot = self.conns[i].h2.open(self.req, Begin::at(due, now));
        self.chat(i, slot);
        self.flush(i, now);
        Taken::Sent
    }

    /// Bidi: the earliest message due on a schedule.
    fn next_wake(&self) -> Option<Instant> {
        self.due.peek().map(|e| e.0 .0)
    }

    /// Bidi: the messages due are sent, each call's next one scheduled.
    fn wake(&mut self, now: Instant) {
        let mut touched = std::mem::take(&mut self.scratch);
        while let Some(&std::cmp::Reverse((due, i, slot, id, start, j))) = self.due.peek() {
            if due > now {
                break;
            }
            self.due.pop();
            let h2 = &self.conns[i].h2;
            let same = h2.may_send(slot)
                && h2.stream(slot).id == id
                && h2.stream(slot).exchange.start == start
                && h2.call(slot).sent == j;
            if same {
                self.send_next(i, slot, due);
                if !touched.contains(&i) {
                    touched.push(i);
                }
            }
        }
        for &i in &touched {
            self.flush(i, now);
        }
        touched.clear();
        self.scratch = touched;
    }

    /// Lingering sockets, then the loop's sweep.
    fn tick(&mut self, now: Instant) {
        self.closing.sweep(now, &mut self.core.buf);
        self.sweep(now);
    }

    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool {
        self.staged_event(i, readable, writable, closed);
        std::mem::take(&mut self.core.unfinished)
    }

    /// Every stream still open on connection `i` fails as `kind`.
    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let mut open = std::mem::take(&mut self.scratch);
        open.extend(self.conns[i].h2.open_slots());
        for &slot in &open {
            self.fail(i, slot, now, kind);
        }
        open.clear();
        self.scratch = open;
    }

    fn open(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.answered = false;
        c.written = 0;
        c.h2.start();
        self.dial(i, now);
    }

    fn each_in_flight(&self, each: &mut dyn FnMut(Instant)) {
        for i in 0..self.conns.len() {
            self.conns[i].h2.starts().for_each(&mut *each);
        }
    }

    /// Server streams past `--grpc-stream-duration` are ended (RST_STREAM CANCEL, no
    /// failure); streams past their deadline are cancelled (RST_STREAM) and fail; the
    /// connection is kept.
    fn deadlines(&mut self, i: usize, now: Instant) {
        self.stream_ends(i, now);
        let mut late = std::mem::take(&mut self.scratch);
        let h2 = &self.conns[i].h2;
        let timeout = self.core.sh.timeout;
        late.extend(
            h2.open_slots()
                .filter(|&s| h2.stream(s).exchange.overdue(now, timeout)),
        );
        for &slot in &late {
            self.tally(i, slot);
            let ex = &self.conns[i].h2.stream(slot).exchange;
            self.core.fail(ex, now, FailureKind::Timeout);
            self.conns[i].h2.cancel(slot);
        }
        let any = !late.is_empty();
        late.clear();
        self.scratch = late;
        if any {
            self.after(i, now);
        }
    }

    /// Each connection still open (or waiting for the server's SETTINGS) says goodbye
    /// with GOAWAY(NO_ERROR) and lingers, as those ended by an error do, until its server
    /// closes: servers read a graceful close rather than a reset. What was in flight
    /// stays aborted.
    fn wind_down(&mut self, stop: &AtomicBool) {
        let now = Instant::now();
        for i in 0..self.conns.len() {
            if !matches!(self.conns[i].phase(), Stage::Handshake | Stage::Open) {
                continue;
            }
            let Entry { io, c, .. } = &mut self.conns[i];
            let Some(mut io) = io.take() else { continue };
            c.h2.goodbye();
            let _ = io.write(&c.h2.out[c.written.min(c.h2.out.len())..]);
            let _ = io.flush();
            self.closing.add(io, self.core.poll.registry(), now);
        }
        self.closing.finish(&mut self.core.buf, stop);
    }

    fn streams_allowed(&self) -> Option<u64> {
        self.limit
    }
}

impl<'a> Staged<'a> for Worker<'a> {
    /// HTTP/2 measures a connection's connect time to here: the TCP connect.
    fn connected(&mut self, i: usize, now: Instant) {
        self.conns[i].life.opened(now);
    }

    /// Writes what connection `i` has to send, as far as the socket takes it.
    fn flush(&mut self, i: usize, now: Instant) {
        let Entry { io, c, .. } = &mut self.conns[i];
        let Some(io) = io.as_mut() else { return };
        let sent = &mut self.core.rec.counts.bytes_sent;
        if io.write_out(&mut c.h2.out, &mut c.written, sent).is_err() {
            self.broken(i, now);
        }
    }

    /// Reads until the socket is drained (or the loop's read budget is spent), handling
    /// each read's frames as they come.
    fn read(&mut self, i: usize, now: Instant, closed: bool) {
        match self.read_each(i, closed, |w, n| w.frames(i, n, now)) {
            Reads::Drained | Reads::More => self.after(i, now),
            Reads::Closed | Reads::Failed => self.broken(i, now),
            Reads::Stopped => {}
        }
    }
}

impl Worker<'_> {
    /// Notes that connection `i` may have room (rate mode) or fills it (closed loop).
    fn refill(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        if c.phase() != Stage::Open || c.h2.room() == 0 {
            return;
        }
        if self.core.pacer.is_some() {
            return self.conns.list(i);
        }
        while self.conns[i].h2.room() > 0 {
            if !self.core.resend.is_empty() {
                self.resend_on(i, now);
                continue;
            }
            if !self.core.claim(now) {
                break;
            }
            self.core.in_flight += 1;
            self.stage(i);
            let (start, connect) = self.conns[i].life.carried(now);
            let c = &mut self.conns[i];
            let slot = c.h2.open(
                self.req,
                Begin {
                    connect,
                    ..Begin::at(start, now)
                },
            );
            self.chat(i, slot);
        }
        self.conns[i].life.used();
    }

    /// Ends the server streams of connection `i` that have lasted
    /// `--grpc-stream-duration` (at the client's limit: they ended well).
    fn stream_ends(&mut self, i: usize, now: Instant) {
        let Some(d) = self
            .req
            .grpc
            .as_ref()
            .filter(|r| r.server_only())
            .and_then(|r| r.stream.duration)
        else {
            return;
        };
        let mut due = std::mem::take(&mut self.scratch);
        let h2 = &self.conns[i].h2;
        due.extend(
            h2.open_slots()
                .filter(|&s| h2.stream(s).exchange.overdue(now, d)),
        );
        for &slot in &due {
            self.conns[i].h2.stop(slot);
        }
        let any = !due.is_empty();
        due.clear();
        self.scratch = due;
        if any {
            self.on_events(i, now);
            self.after(i, now);
        }
    }

    /// Writes the next message of a gRPC list as connection `i`'s next body (nothing to do
    /// when the run sends one body).
    fn stage(&mut self, i: usize) {
        let Some(m) = &self.req.messages else { return };
        if self.bidi().is_some() {
            // Its messages are rendered as they fall due.
            return;
        }
        let out = &mut self.conns[i].h2.staged;
        match self.req.grpc.as_ref().filter(|r| r.client_streaming) {
            Some(r) => {
                let n = r.stream.messages.unwrap_or(1);
                m.render_n(n, GRPC_STREAM_MAX_BYTES, &mut self.gen, &mut self.json, out);
            }
            None => m.render(&mut self.gen, &mut self.json, out),
        }
    }

    /// Sends the oldest request the server left unprocessed on connection `i` (it has room).
    fn resend_on(&mut self, i: usize, now: Instant) {
        let r = self.core.resend.pop_front().expect("a request waits");
        // Its latency and deadline count from its first send, as a retried HTTP/1.1
        // request's do.
        let _ = now;
        self.stage(i);
        let slot = self.conns[i].h2.open(
            self.req,
            Begin {
                start: r.start,
                sent: r.sent,
                connect: r.connect,
                resent: r.resent,
            },
        );
        self.chat(i, slot);
    }

    /// Handles the `n` bytes read into the buffer for connection `i`; false when the
    /// connection is gone.
    fn frames(&mut self, i: usize, n: usize, now: Instant) -> bool {
        let handshake = self.conns[i].phase() == Stage::Handshake;
        if handshake && !self.conns[i].io.as_ref().is_some_and(alpn_h2) {
            self.core.rec.counts.connections_failed += 1;
            self.connect_failed(i, now);
            return false;
        }
        let c = &mut self.conns[i];
        c.h2.want_server = self.core.rec.first.is_none();
        let fed = c.h2.feed(&self.core.buf[..n], self.req, now);
        self.on_events(i, now);
        if fed.is_err() {
            self.protocol_error(i, now);
            return false;
        }
        self.conns[i].phase() != Stage::Closed
    }

    /// After connection `i` handled its frames: new streams on the freed slots, a spent
    /// connection replaced once its streams ended, and the frames written.
    fn after(&mut self, i: usize, now: Instant) {
        self.refill(i, now);
        let c = &self.conns[i];
        if c.phase() == Stage::Open && c.h2.spent() && c.h2.active() == 0 {
            self.flush(i, now);
            return self.retire(i, now);
        }
        self.flush(i, now);
    }

    /// Acts on what connection `i` reported.
    fn on_events(&mut self, i: usize, now: Instant) {
        let mut events = std::mem::take(&mut self.conns[i].h2.events);
        for &e in &events {
            match e {
                Event::Ready => self.ready(i, now),
                Event::Answered(slot) if self.server_streaming() => {
                    self.settle(i, slot, now, false)
                }
                Event::Answered(slot) => self.credit(i, slot, now),
                Event::Failed(slot, kind) => self.fail(i, slot, now, kind),
                Event::Rejected(slot, kind) => self.reject(i, slot, now, kind),
                Event::Replies(slot, n) => self.replies(i, slot, n, now),
                Event::Echoes(slot, first, n) => self.echoes(i, slot, first, n, now),
                Event::Stopped(slot) => self.settle(i, slot, now, true),
                Event::Unprocessed(slot) => self.unprocessed(i, slot, now),
                Event::Reset(code) => self.core.rec.counts.count_reset(code.0),
                Event::Goaway => self.core.rec.counts.goaways += 1,
            }
        }
        events.clear();
        self.conns[i].h2.events = events;
        if !self.conns[i].h2.heads.is_empty() {
            let heads = &mut self.conns[i].h2.heads;
            self.core.rec.heads.responses.append(heads);
        }
        // Requests a GOAWAY or a REFUSED_STREAM returned go out on connections with room.
        if !self.core.resend.is_empty() && self.core.pacer.is_none() {
            for j in 0..self.conns.len() {
                if j != i && self.conns[j].phase() == Stage::Open && self.conns[j].h2.room() > 0 {
                    self.refill(j, now);
                    self.flush(j, now);
                }
            }
        }
    }

    /// A GOAWAY or a REFUSED_STREAM left the stream in `slot` of connection `i`
    /// unprocessed: the loop sends it again while it may ([`Core::unprocessed`]; a bidirectional call's messages then count
    /// from its last send, as a retried request counts once), or fails it as refused, a
    /// bidirectional call's messages of that send then counted as sent and unanswered.
    fn unprocessed(&mut self, i: usize, slot: usize, now: Instant) {
        let ex = &self.conns[i].h2.stream(slot).exchange;
        if self.core.unprocessed(ex, now) {
            self.tally(i, slot);
        }
        self.conns[i].h2.free(slot);
    }

    /// The server's SETTINGS arrived on connection `i`. A server that allows no stream at
    /// all (`SETTINGS_MAX_CONCURRENT_STREAMS` = 0) refuses the connection's work: in a
    /// closed loop that is one refused request per connection, which is then replaced
    /// after a growing pause, so the run still ends by its count.
    fn ready(&mut self, i: usize, now: Instant) {
        self.conns.set_phase(i, Stage::Open);
        let c = &mut self.conns[i];
        self.core.rec.connected(c.life.connect);
        if let Some(m) = c.h2.max_concurrent().filter(|&m| m < self.streams as u64) {
            self.limit = Some(self.limit.map_or(m, |l| l.min(m)));
        }
        if c.h2.max_concurrent() == Some(0) {
            self.close(i);
            self.charge(i, now, FailureKind::Refused);
            return self.replace(i, now, true);
        }
        self.core.served(&mut c.life);
    }

    /// The stream in `slot` of connection `i` got its whole answer.
    fn credit(&mut self, i: usize, slot: usize, now: Instant) {
        let c = &mut self.conns[i];
        let (ex, server) = c.h2.answered(slot);
        let status = ex.status;
        self.core.credit(ex, now, || server.take());
        // A client stream's call: its one answer is its unit.
        if let Some(s) = self.core.rec.stream.as_deref_mut() {
            s.calls_ok += u64::from(self.core.sh.expect.status.contains(status));
        }
        c.h2.free(slot);
        c.answered = true;
    }

    /// The run calls a server-streaming method.
    fn server_streaming(&self) -> bool {
        self.req.grpc.as_ref().is_some_and(|r| r.server_streaming)
    }

    /// The call in `slot` of connection `i` read `n` more replies at `now`: each a unit of
    /// the run, its latency from the call's start (its first reply) or from the reply
    /// before; replies read at once are 0 apart.
    fn replies(&mut self, i: usize, slot: usize, n: u32, now: Instant) {
        let prev = self.conns[i].h2.replied(slot, now);
        let ex = &self.conns[i].h2.stream(slot).exchange;
        let first = match prev {
            None => Timing::ended(ex.start, ex.sent, Some(now), now, ex.connect, 0),
            Some(p) => Timing::ended(p, p, Some(now), now, Duration::ZERO, 0),
        };
        let rec = &mut self.core.rec;
        if let Some(s) = rec.stream.as_deref_mut() {
            stream_timed(s, prev.ok_or(first.start), n, now);
        }
        rec.reply(&first);
        let at_once = Timing::ended(now, now, Some(now), now, Duration::ZERO, 0);
        for _ in 1..n {
            rec.reply(&at_once);
        }
    }

    /// The run's call streams both ways: its bounds.
    fn bidi(&self) -> Option<GrpcStream> {
        self.req
            .grpc
            .as_ref()
            .filter(|r| r.bidi())
            .map(|r| r.stream)
    }

    /// Bidi: the call just opened in `slot` of connection `i` sends its first message,
    /// due at the call's start.
    fn chat(&mut self, i: usize, slot: usize) {
        if self.bidi().is_some() {
            let due = self.conns[i].h2.stream(slot).exchange.start;
            self.send_next(i, slot, due);
        }
    }

    /// Bidi: the call in `slot` of connection `i` sends its next message, due at `due`
    /// (its last when its bounds say so); on a schedule, the one after is scheduled. A
    /// message the call cannot hold ([`Connection::send_message`]) ends its side instead.
    fn send_next(&mut self, i: usize, slot: usize, due: Instant) {
        let Some(st) = self.bidi() else { return };
        let req = self.req;
        let j = self.conns[i].h2.call(slot).sent;
        let last = st.is_last(j);
        if let Some(m) = &req.messages {
            m.render(&mut self.gen, &mut self.json, &mut self.msg);
        }
        let msg = match req.messages {
            Some(_) => &self.msg,
            None => &req.body,
        };
        let h2 = &mut self.conns[i].h2;
        if !h2.send_message(req, slot, msg, due, last) {
            return h2.close_send(req, slot);
        }
        if let (false, Some(every)) = (last, st.interval) {
            let s = h2.stream(slot);
            let next = (due + every, i, slot, s.id, s.exchange.start, j + 1);
            self.due.push(std::cmp::Reverse(next));
        }
    }

    /// Bidi: the call in `slot` of connection `i` read `n` replies at `now`, matching its
    /// messages from index `first` on: each a unit, its latency from its message's due
    /// time (the first message's is the call's start, and its connect time is charged to
    /// it). Without a schedule, the next message follows at once.
    fn echoes(&mut self, i: usize, slot: usize, first: u32, n: u32, now: Instant) {
        let Some(st) = self.bidi() else { return };
        let prev = self.conns[i].h2.replied(slot, now);
        let h2 = &self.conns[i].h2;
        let ex = &h2.stream(slot).exchange;
        let (start, sent, connect) = (ex.start, ex.sent, ex.connect);
        let last_due = h2.call(slot).due.unwrap_or(start);
        let rec = &mut self.core.rec;
        if let Some(s) = rec.stream.as_deref_mut() {
            stream_timed(s, prev.ok_or(start), n, now);
        }
        for j in first..first.saturating_add(n) {
            let due = match st.interval {
                _ if j == 0 => {
                    rec.reply(&Timing::ended(start, sent, Some(now), now, connect, 0));
                    continue;
                }
                Some(every) => start.checked_add(every.saturating_mul(j)).unwrap_or(now),
                None => last_due,
            };
            rec.reply(&Timing::ended(due, due, Some(now), now, Duration::ZERO, 0));
        }
        if st.interval.is_none() {
            self.pong(i, slot, now, st);
        }
    }

    /// Bidi without a schedule: the call in `slot` of connection `i`, every message it
    /// sent answered, sends its next one now, or ends its side once its duration passed.
    fn pong(&mut self, i: usize, slot: usize, now: Instant, st: GrpcStream) {
        let h2 = &self.conns[i].h2;
        if !h2.may_send(slot) || h2.call(slot).unanswered() > 0 {
            return;
        }
        let start = h2.stream(slot).exchange.start;
        if st
            .duration
            .is_some_and(|d| now.saturating_duration_since(start) >= d)
        {
            self.conns[i].h2.close_send(self.req, slot);
        } else {
            self.send_next(i, slot, now);
        }
    }

    /// Bidi: the call in `slot` of connection `i` ends: its messages sent, its replies
    /// matched to none and its messages left unanswered are counted.
    fn tally(&mut self, i: usize, slot: usize) {
        if self.bidi().is_none() {
            return;
        }
        let c = self.conns[i].h2.call(slot);
        if let Some(s) = self.core.rec.stream.as_deref_mut() {
            s.sent += u64::from(c.sent);
            s.unmatched += u64::from(c.unmatched);
            s.unanswered += u64::from(c.unanswered());
        }
    }

    /// The server-streaming call in `slot` of connection `i` ended well at `now`: the
    /// server's OK, or the client's limit (`cancelled`). Its replies were its units.
    fn settle(&mut self, i: usize, slot: usize, now: Instant, cancelled: bool) {
        self.tally(i, slot);
        let c = &mut self.conns[i];
        let t = since_last(c, slot, now);
        let ex = &c.h2.stream(slot).exchange;
        self.core.rec.call_ended(&t, ex.answer(), cancelled, false);
        self.core.in_flight -= 1;
        c.h2.free(slot);
        c.answered = true;
    }

    /// The stream in `slot` of connection `i` got its whole answer, which failed a gRPC
    /// check as `kind`: counted once, with its status and its time (a server stream's
    /// from its last reply).
    fn reject(&mut self, i: usize, slot: usize, now: Instant, kind: FailureKind) {
        self.tally(i, slot);
        let c = &mut self.conns[i];
        let t = since_last(c, slot, now);
        let (ex, server) = c.h2.answered(slot);
        self.core
            .rec
            .credit_judged(&t, ex.answer(), || server.take(), Some(kind));
        self.core.in_flight -= 1;
        c.h2.free(slot);
        c.answered = true;
    }

    /// The stream in `slot` of connection `i` ended without a good answer.
    fn fail(&mut self, i: usize, slot: usize, now: Instant, kind: FailureKind) {
        self.tally(i, slot);
        let ex = &self.conns[i].h2.stream(slot).exchange;
        self.core.fail(ex, now, kind);
        self.conns[i].h2.free(slot);
    }

    /// The server broke the protocol on connection `i` (GOAWAY is written): its open
    /// streams fail as malformed and the connection is replaced; the old socket lingers
    /// so that the server reads the GOAWAY rather than a reset. Before its SETTINGS, in a
    /// closed loop, the bytes count as one malformed answer.
    fn protocol_error(&mut self, i: usize, now: Instant) {
        self.flush(i, now);
        let c = &self.conns[i];
        let (handshake, answered) = (c.phase() == Stage::Handshake, c.answered);
        self.fail_all(i, now, FailureKind::Malformed);
        if let Some(io) = self.conns[i].io.take() {
            self.closing.add(io, self.core.poll.registry(), now);
        }
        self.close(i);
        if handshake {
            self.charge(i, now, FailureKind::Malformed);
        }
        self.replace(i, now, !answered);
    }

    /// Connection `i` closed or broke. Its open streams fail: as a connection error after
    /// a GOAWAY with an error code, else as reset. Closed before the server's SETTINGS, it
    /// is a dropped connection (rate mode) or one failed request (closed loop).
    fn broken(&mut self, i: usize, now: Instant) {
        if self.broke_unopened(i, now) {
            return;
        }
        let c = &self.conns[i];
        let kind = match c.h2.goaway_code() {
            Some(code) if code != super::frame::NO_ERROR => FailureKind::ConnectionError,
            _ => FailureKind::Reset,
        };
        let (handshake, answered, spent) =
            (c.phase() == Stage::Handshake, c.answered, c.h2.spent());
        self.fail_all(i, now, kind);
        self.close(i);
        if handshake {
            return self.dropped_in_handshake(i, now);
        }
        self.lost_open(i, now, answered, spent);
    }
}

/// A streaming call read `n` replies at `now`: its first reply timed from its start
/// (`Err(start)`) or its gap from the reply before (`Ok(that reply)`), and the replies
/// read at once 0 apart.
fn stream_timed(s: &mut StreamStats, since: Result<Instant, Instant>, n: u32, now: Instant) {
    let us = |d: Duration| d.as_micros().min(u128::from(u32::MAX)) as u64;
    match since {
        Err(start) => s.first_reply.saturating_record(us(now - start)),
        Ok(p) => s.gaps.saturating_record(us(now - p)),
    }
    if n > 1 {
        s.gaps.saturating_record_n(0, u64::from(n - 1));
    }
    s.replies += u64::from(n);
}

/// The timings of the call in `slot` of `c` ended at `now`: from its start, or from its
/// last reply when it read one.
fn since_last(c: &Conn, slot: usize, now: Instant) -> Timing {
    let ex = &c.h2.stream(slot).exchange;
    match c.h2.last_reply(slot) {
        None => ex.timing(now),
        Some(p) => Timing::ended(p, p, Some(now), now, Duration::ZERO, 0),
    }
}

/// Over TLS, true once the handshake chose `h2` (a plain socket always passes).
pub(crate) fn alpn_h2(io: &Transport) -> bool {
    io.tls
        .as_ref()
        .is_none_or(|t| t.is_handshaking() || t.alpn_protocol() == Some(b"h2"))
}
