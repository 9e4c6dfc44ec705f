//! WebSocket connections on the event loop ([`crate::event_loop`]): each connection makes
//! the opening handshake once, then carries up to `pipeline` messages at a time, each
//! recorded with its reply like a request with its answer (the same recorder, histograms
//! and failure classes). Closed loop, a reply frees its slot for the next message at once;
//! in rate mode a due message goes to any open connection with a free slot, and its
//! latency counts from its due time.
//!
//! Every message the worker starts ends exactly once: replied (ok, or failing an
//! expectation: status, length, body text, echo), failed, or aborted when the run ends.
//! The failure classes: a message outstanding when the server sends a close frame fails
//! as `closed` (the close's code is counted whatever was outstanding); when the server
//! breaks the framing, as `protocol`; when the connection ends without a close frame, as
//! `reset`; when its reply is later than the timeout, as `timeout` (the connection, stuck,
//! is replaced and its other messages fail the same way). A connection that cannot be set
//! up fails one message in a closed loop (so a run against a server that refuses every
//! handshake still ends by its count): `connect`, `handshake` (a refusal counted under its
//! status, or a 101 without a valid accept) or `malformed` (an answer that is not HTTP).
//! In rate mode those connections are replaced after a growing pause and the schedule's
//! messages wait for a connection, as over HTTP/2.
//!
//! Hold mode ([`Hold`]) sends no message: connections open (all at once, or at a rate,
//! swept at each tick), each pings when it opens and then at its interval, and a ping and
//! its pong are the unit recorded. A connection the server drops is opened again, counted
//! in `reconnects` (and its close code, if it sent one).

use super::conn::{Connection, Drawn, Event, Failure, Sent, Slot};
use super::handshake::HandshakeError;
use super::Prepared;
use crate::event_loop::{parts, Core, Entry, Protocol, Reads, Stage, Staged, Table, Taken};
use crate::linger::Closing;
use crate::recorder::{Answer, Clock, Timing};
use crate::template::{fill, Gen};
use crate::ws::frame::{self, Rng};
use shootout_model::{FailureKind, Hold};
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Where a connection is.
struct Conn {
    ws: Connection,
    /// The connection carried a reply.
    answered: bool,
    /// Hold mode: when its next ping is due.
    next_ping: Instant,
}

struct Worker<'a> {
    core: Core<'a>,
    prep: &'a Prepared,
    conns: Table<Stage, Conn>,
    /// Mask keys and handshake nonces (see [`Rng`]).
    rng: Rng,
    /// Hold mode, and how many connections it has opened so far.
    hold: Option<Hold>,
    held: usize,
    /// A message list: which message goes next and its drawn values…
    gen: Gen,
    /// …rendered here before it is framed.
    scratch: Vec<u8>,
    /// Connections closed at the end of the run, until their servers close.
    closing: Closing,
}

/// Builds the worker around its `core`.
pub(crate) fn set_up<'a>(core: Core<'a>, prep: &'a Prepared) -> io::Result<impl Protocol<'a>> {
    let a = core.share;
    let (sh, now) = (core.sh, core.start);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut w = Worker {
        core,
        prep,
        conns: Table::with_capacity(a.connections),
        rng: Rng::new(seed ^ (a.index as u64).rotate_left(32)),
        hold: prep.hold,
        held: 0,
        gen: prep.list.as_ref().map_or(Gen::new(0, false, 1, 0, 1), |l| {
            Gen::new(l.seed, l.random, l.templates.len(), a.index, sh.workers)
        }),
        scratch: Vec::new(),
        closing: Closing::default(),
    };
    for _ in 0..a.connections {
        w.add(now);
    }
    Ok(w)
}

impl<'a> Protocol<'a> for Worker<'a> {
    parts!('a, Stage, Conn, core, conns);

    fn new_conn(&self, now: Instant) -> Conn {
        Conn {
            ws: Connection::new(self.core.sh.expect.body_contains.as_deref()),
            answered: false,
            next_ping: now,
        }
    }

    fn start(&mut self, now: Instant) {
        if self.hold.is_some_and(|h| h.open_rate.is_some()) {
            return self.open_held(now);
        }
        self.held = self.conns.len();
        for i in 0..self.conns.len() {
            self.open(i, now);
        }
    }

    /// Rate mode: a connection with a free slot, kept listed while it has more.
    fn with_room(&mut self) -> Option<usize> {
        let pipeline = self.core.sh.pipeline;
        self.conns
            .with_room(|c| c.phase() == Stage::Open && c.ws.queue.len() < pipeline)
    }

    fn begin(&mut self, i: usize, due: Instant, now: Instant) -> Taken {
        self.send(i, due, now, Duration::ZERO);
        self.flush(i, now);
        Taken::Sent
    }

    fn wind_down(&mut self, stop: &AtomicBool) {
        // Each open connection says goodbye (a close frame, 1001 going away) and lingers
        // until its server closes, so servers see a close, not a broken connection. What
        // was in flight stays aborted; nothing here is counted.
        let now = Instant::now();
        for i in 0..self.conns.len() {
            if self.conns[i].phase() != Stage::Open {
                continue;
            }
            let Entry { io, c, .. } = &mut self.conns[i];
            let Some(mut io) = io.take() else { continue };
            c.ws.goodbye(&mut self.rng);
            let _ = io.write(&c.ws.out[c.ws.written.min(c.ws.out.len())..]);
            let _ = io.flush();
            self.conns.set_phase(i, Stage::Closed);
            self.closing.add(io, self.core.poll.registry(), now);
        }
        self.closing.finish(&mut self.core.buf, stop);
    }

    fn ticks_for(&self) -> Option<Duration> {
        // Pings go out at ticks: a tenth of their interval apart at most.
        self.hold.map(|h| h.every)
    }

    fn tick(&mut self, now: Instant) {
        self.sweep(now);
        if self.hold.is_some() {
            self.open_held(now);
            for i in 0..self.conns.len() {
                self.after(i, now);
            }
        }
    }

    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool {
        self.staged_event(i, readable, writable, closed);
        std::mem::take(&mut self.core.unfinished)
    }

    /// Every message outstanding on connection `i` fails as `kind`.
    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        while let Some(slot) = self.conns[i].ws.queue.pop_front() {
            self.core.rec.failed(&timing(&slot, now), kind);
            self.core.in_flight -= 1;
        }
    }

    fn each_in_flight(&self, each: &mut dyn FnMut(Instant)) {
        for i in 0..self.conns.len() {
            for slot in &self.conns[i].ws.queue {
                each(slot.clock.start);
            }
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.answered = false;
        c.next_ping = now;
        c.ws.hold = self.hold.is_some();
        c.ws.start(&self.prep.request, &mut self.rng);
        self.dial(i, now);
    }

    /// A reply later than the timeout leaves its connection stuck: the connection is
    /// replaced and its messages fail as timeouts.
    fn deadlines(&mut self, i: usize, now: Instant) {
        let timeout = self.core.sh.timeout;
        let late = self.conns[i]
            .ws
            .queue
            .front()
            .is_some_and(|s| now.saturating_duration_since(s.clock.sent) >= timeout);
        if late {
            self.fail_all(i, now, FailureKind::Timeout);
            self.close(i);
            self.replace(i, now, false);
        }
    }
}

impl<'a> Staged<'a> for Worker<'a> {
    /// Writes what connection `i` has to send, as far as the socket takes it: once it is
    /// connected (a connection replaced while its old one was handled is left to its own
    /// events).
    fn flush(&mut self, i: usize, now: Instant) {
        if !matches!(self.conns[i].phase(), Stage::Handshake | Stage::Open) {
            return;
        }
        let Entry { io, c, .. } = &mut self.conns[i];
        let Some(io) = io.as_mut() else { return };
        let sent = &mut self.core.rec.counts.bytes_sent;
        if io
            .write_out(&mut c.ws.out, &mut c.ws.written, sent)
            .is_err()
        {
            self.broken(i, now);
        }
    }

    /// Reads until the socket is drained (or the loop's read budget is spent), handling
    /// each read's bytes as they come.
    fn read(&mut self, i: usize, now: Instant, closed: bool) {
        match self.read_each(i, closed, |w, n| w.frames(i, n)) {
            // Messages that refill a drained connection start after its last read.
            Reads::Drained => self.after(i, Instant::now()),
            Reads::More => self.after(i, now),
            Reads::Closed | Reads::Failed => self.broken(i, now),
            Reads::Stopped => {}
        }
    }
}

impl Worker<'_> {
    /// Hold mode at a rate of opening: opens the connections due by now.
    fn open_held(&mut self, now: Instant) {
        let Some(rate) = self.hold.and_then(|h| h.open_rate) else {
            return;
        };
        let since = now.saturating_duration_since(self.core.start).as_secs_f64();
        let due = ((since * rate) as usize)
            .saturating_add(1)
            .min(self.conns.len());
        while self.held < due {
            self.open(self.held, now);
            self.held += 1;
        }
    }

    /// Hold mode: connection `i` pings when its interval is over and nothing is in flight.
    fn ping(&mut self, i: usize, now: Instant, every: std::time::Duration) {
        let c = &self.conns[i];
        if c.phase() != Stage::Open || !c.ws.queue.is_empty() || now < c.next_ping {
            return;
        }
        if !self.core.claim(now) {
            return;
        }
        self.core.in_flight += 1;
        let c = &mut self.conns[i];
        let (start, connect) = c.life.carried(now);
        c.life.used();
        c.next_ping = now + every;
        let slot = Slot {
            clock: Clock::new(start, now, connect),
            drawn: None,
        };
        c.ws.ping(&mut self.rng, slot);
    }

    /// Starts one message on connection `i` (it has room).
    fn send(&mut self, i: usize, start: Instant, now: Instant, connect: Duration) {
        self.core.in_flight += 1;
        let slot = Slot {
            clock: Clock::new(start, now, connect),
            drawn: None,
        };
        let c = &mut self.conns[i];
        match &self.prep.list {
            None => {
                let m = &self.prep.message;
                c.ws.send(m.opcode, &m.payload, &mut self.rng, slot);
            }
            Some(list) => {
                let kind = self.gen.pick();
                let drawn = Drawn {
                    kind: kind as u32,
                    gen: self.gen,
                };
                self.scratch.clear();
                fill(&list.templates[kind], &mut self.gen, &mut self.scratch);
                let slot = Slot {
                    drawn: Some(drawn),
                    ..slot
                };
                c.ws.send(frame::TEXT, &self.scratch, &mut self.rng, slot);
            }
        }
    }

    /// Notes that connection `i` has room (rate mode) or fills it (closed loop); in hold
    /// mode, pings it when due.
    fn refill(&mut self, i: usize, now: Instant) {
        if let Some(h) = self.hold {
            return self.ping(i, now, h.every);
        }
        let pipeline = self.core.sh.pipeline;
        let c = &self.conns[i];
        if c.phase() != Stage::Open || c.ws.queue.len() >= pipeline {
            return;
        }
        if self.core.pacer.is_some() {
            return self.conns.list(i);
        }
        while self.conns[i].ws.queue.len() < pipeline && self.core.claim(now) {
            let (start, connect) = self.conns[i].life.carried(now);
            self.send(i, start, now, connect);
        }
        self.conns[i].life.used();
    }

    /// Closed loop: the server refused the upgrade with `status`: one message fails as a
    /// handshake failure, the refusal counted as its answer (see [`Protocol::charge`]).
    fn refused(&mut self, i: usize, now: Instant, status: u16) {
        if self.core.pacer.is_some() || !self.core.claim(now) {
            return;
        }
        let t = Timing::unsent(self.conns[i].life.began, now, 0);
        self.core
            .rec
            .answered(&t, status, Some(FailureKind::Handshake));
    }

    /// Handles the `n` bytes read into the buffer for connection `i`; false when the
    /// connection is gone.
    fn frames(&mut self, i: usize, n: usize) -> bool {
        let now = Instant::now();
        let sent = Sent {
            message: &self.prep.message,
            list: self.prep.list.as_ref().map(|l| &l.templates[..]),
        };
        let c = &mut self.conns[i];
        let fed = c.ws.feed(&self.core.buf[..n], sent, &mut self.rng, now);
        self.core.rec.counts.pings_unanswered += std::mem::take(&mut c.ws.unanswered);
        self.on_events(i, now);
        if let Err(f) = fed {
            self.failed(i, now, f);
            return false;
        }
        // Closed, or replaced by a new connection still connecting.
        matches!(self.conns[i].phase(), Stage::Handshake | Stage::Open)
    }

    /// After connection `i` handled its bytes: new messages in the freed slots, and
    /// everything written.
    fn after(&mut self, i: usize, now: Instant) {
        self.refill(i, now);
        self.flush(i, now);
    }

    /// Acts on what connection `i` reported.
    fn on_events(&mut self, i: usize, now: Instant) {
        let mut events = std::mem::take(&mut self.conns[i].ws.events);
        for e in events.drain(..) {
            match e {
                Event::Open => {
                    self.conns.set_phase(i, Stage::Open);
                    let c = &mut self.conns[i];
                    let took = c.life.opened(now);
                    self.core.rec.connected(took);
                    // The handshake's 101 is counted once per connection, not per reply.
                    self.core.rec.count_status(101);
                    self.core.served(&mut c.life);
                }
                Event::Replied {
                    slot,
                    len,
                    matched,
                    echoed,
                } => self.credit(
                    i,
                    slot,
                    now,
                    Answer {
                        status: 101,
                        body_len: len,
                        matched,
                        echoed,
                    },
                ),
                Event::Close(code) => self.server_closed(i, now, code),
            }
        }
        self.conns[i].ws.events = events;
    }

    /// The reply to `slot` on connection `i` came in full.
    fn credit(&mut self, i: usize, slot: Slot, now: Instant, a: Answer) {
        let t = timing(&slot, now);
        self.core.rec.credit_reply(&t, a, &self.core.sh.expect);
        self.conns[i].answered = true;
        self.core.in_flight -= 1;
    }

    /// The server sent a close frame (ours is queued in answer): messages outstanding fail
    /// as closed; the connection is replaced.
    fn server_closed(&mut self, i: usize, now: Instant, code: u16) {
        self.core.rec.counts.count_close(code);
        self.fail_all(i, now, FailureKind::Closed);
        self.flush(i, now);
        let answered = self.conns[i].answered;
        self.close(i);
        if answered && !self.core.spent(now) && !self.core.paced() {
            self.core.rec.counts.reconnects += 1;
        }
        self.replace(i, now, !answered);
    }

    /// Connection `i` failed: the handshake was refused or bad, or the server broke the
    /// framing. Outstanding messages fail as protocol errors; a connection that never
    /// opened fails one message (closed loop).
    fn failed(&mut self, i: usize, now: Instant, f: Failure) {
        let answered = self.conns[i].answered;
        match f {
            Failure::Refused(status) => self.refused(i, now, status),
            Failure::Handshake(HandshakeError::Malformed) => {
                self.charge(i, now, FailureKind::Malformed)
            }
            Failure::Handshake(_) => self.charge(i, now, FailureKind::Handshake),
            Failure::Protocol(_) if self.conns[i].ws.queue.is_empty() => {
                self.charge(i, now, FailureKind::Protocol)
            }
            Failure::Protocol(_) => self.fail_all(i, now, FailureKind::Protocol),
        }
        self.close(i);
        self.replace(i, now, !answered);
    }

    /// Connection `i` closed or broke without a close frame. Its messages fail as reset;
    /// closed before its handshake's answer, it fails one message (closed loop) or counts
    /// as dropped (rate mode).
    fn broken(&mut self, i: usize, now: Instant) {
        if self.broke_unopened(i, now) {
            return;
        }
        let c = &self.conns[i];
        let (handshake, answered) = (c.phase() == Stage::Handshake, c.answered);
        self.fail_all(i, now, FailureKind::Reset);
        self.close(i);
        if handshake {
            return self.dropped_in_handshake(i, now);
        }
        self.lost_open(i, now, answered, false);
    }
}

/// A message's times, ending `end`.
fn timing(s: &Slot, end: Instant) -> Timing {
    s.clock.timing(end, 0)
}
