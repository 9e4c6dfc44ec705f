//! HTTP/1.1 connections on the event loop ([`crate::event_loop`]): a worker's share of the
//! connections, closed loop or paced, each answer parsed by a [`ResponseParser`] and
//! recorded into the worker's recorder.
//!
//! A connection carries a queue of up to `pipeline` requests (HTTP/1.1 pipelining): their
//! bytes are rendered into the connection's output buffer and written together, and
//! answers are matched to the queue in order. Closed loop, a connection sends its next
//! batch when the last answer of the previous one arrived (as wrk's pipelining does); in
//! rate mode a due request joins any open connection with room in its queue.
//!
//! Every request the worker starts ends exactly once: answered (ok or failing an
//! expectation), failed without an answer, or aborted when the run ends. A request the
//! server may have read and did not answer is a failure: when a connection fails, each of
//! its requests that was written (in part or whole) fails with the connection's failure
//! class, and those not yet written go out again on a new connection (they were never
//! sent, so this is no retry). Requests behind an answer carrying `Connection: close` were
//! not processed (RFC 9112 §9.6), so the idempotent ones among them are sent again too,
//! counted as retried; one of another method that was written fails instead (a POST is
//! never sent twice). Only an idempotent request alone on a connection that sat idle,
//! closed before any byte of its answer, is sent again after it may have been read (once,
//! and counted). Bytes that arrive when no request is waiting for them are never credited to a
//! later request: the connection is closed and the bytes count as one malformed answer in
//! place of the request it would have carried next, which is what they would have become had
//! they arrived a moment later — so the counts do not depend on how TCP split the bytes.

use super::parse::{ParseError, Progress, ResponseParser};
use crate::event_loop::pacer::Pacing;
use crate::event_loop::READS_PER_EVENT;
use crate::event_loop::{host, Assignment, Core, Dispatch, Life, Output, Protocol, Shared};
use crate::recorder::{Answer, Timing};
use crate::template::Gen;
use crate::transport::Transport;
use crate::Live;
use shootout_model::FailureKind;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Where a connection is. `Writing` and `Reading` hold a non-empty queue; `Idle` an
/// empty one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No socket.
    Closed,
    /// The socket is connecting (or its TLS handshake has not begun).
    Connecting,
    /// Open, nothing in flight (rate mode: waiting for the schedule).
    Idle,
    /// Rendered bytes are still to be written.
    Writing,
    /// Everything written; answers awaited.
    Reading,
}

/// One request in a connection's queue.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// When it started: its due time in rate mode, else when it was claimed.
    start: Instant,
    /// When its bytes were handed to the socket (the first time, if sent again).
    sent: Instant,
    /// When the first byte of its answer arrived.
    first_byte: Option<Instant>,
    /// Connect time charged to it (it waited for its connection to open).
    connect: Duration,
    /// Its kind (entry of the request list).
    kind: usize,
    /// Where its bytes start and end in the connection's output stream (bytes since the
    /// connection opened); meaningful once rendered.
    wire: (u64, u64),
    /// Already sent once on a connection that did not answer it.
    retried: bool,
    /// Rate mode: its send was counted in the schedule (how late it went out).
    scheduled: bool,
    /// Rate mode: it was given to a connection still opening, so a late send waited for
    /// a connection, not for the generator.
    waited: bool,
    /// How long its connection sat idle before it was added, alone, to the queue (zero
    /// when the connection was busy or new).
    rested: Duration,
}

struct Conn {
    io: Option<Transport>,
    phase: Phase,
    /// Requests started on this connection and not ended, oldest first.
    queue: VecDeque<Slot>,
    /// How many of the queue's front requests are rendered into this connection's output.
    rendered: usize,
    /// Bytes to write, from `out_pos` on.
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes rendered and bytes written since the connection opened.
    queued: u64,
    flushed: u64,
    parser: ResponseParser,
    /// Its opening, connect time and pause before re-opening.
    life: Life,
    /// A response already came back on this connection.
    reused: bool,
    /// The peer closed its side: the connection carries no further answer.
    peer_closed: bool,
    /// When the connection last became idle (rate mode).
    idle_at: Instant,
    /// Rate mode: bytes nobody asked for arrived on this connection while it was idle; the
    /// next request the schedule gives it is counted as their malformed answer.
    owes: bool,
    /// Rate mode: in the pool of connections with room for a request.
    pooled: bool,
}

impl Conn {
    /// Holds a started request.
    fn busy(&self) -> bool {
        !self.queue.is_empty()
    }
}

/// A connection that sat idle at least this long before a request went out on it may have
/// been closed by the server's keep-alive timer as the request left: if it closes before any
/// byte of the answer, an idempotent request is sent again once. Short enough for any real
/// keep-alive timeout; a connection busy in a closed loop never sits idle, so there a close
/// after the request is always a failure (the server may have read it).
const IDLE_BEFORE_RETRY: Duration = Duration::from_millis(100);

/// A request is sent again only when the close came this soon after the send: in the race
/// the server's close is already under way as the request arrives, while a server that
/// read the request and worked on it before closing (a worker that crashed mid-request)
/// takes longer, and its request is a failure. Many LAN round trips, with room for a busy
/// machine's scheduling.
const RACE_WINDOW: Duration = Duration::from_millis(50);

struct Worker<'a> {
    core: Core<'a>,
    conns: Vec<Conn>,
    /// Rate mode: connections with room for a request (see [`Conn::pooled`]); an entry
    /// whose connection is no longer pooled is skipped when popped.
    pool: Vec<usize>,
    /// Picks each request's kind and draws its templated values.
    gen: Gen,
    /// Holds a templated body while its length is taken.
    scratch: Vec<u8>,
    /// Copy the next request rendered into the heads sample (`-v 2`).
    want_request_head: bool,
    /// Connections being opened (in [`Phase::Connecting`]).
    opening: usize,
}

/// Runs one worker to the end of its share; `stop` ends it early.
pub fn run(sh: &Shared, a: Assignment, stop: &AtomicBool, live: &Live) -> io::Result<Output> {
    host(sh, a, stop, live, set_up)
}

/// Builds the worker; in rate mode also opens its connections, so the schedule starts
/// with connections ready.
fn set_up<'a>(sh: &'a Shared<'a>, a: Assignment) -> io::Result<Worker<'a>> {
    let now = Instant::now();
    let mut core = Core::new(sh, a)?;
    let kinds = sh.requests.kinds.len();
    if (2..=shootout_model::requests::MAX_REPORTED_ENTRIES).contains(&kinds) {
        core.rec.per_kind(kinds);
    }
    let mut w = Worker {
        core,
        conns: Vec::with_capacity(a.connections),
        pool: Vec::with_capacity(a.connections),
        gen: Gen::new(
            sh.requests.seed,
            sh.requests.random,
            sh.requests.kinds.len(),
            a.index,
            sh.workers,
        ),
        scratch: Vec::new(),
        want_request_head: false,
        opening: 0,
    };
    for _ in 0..a.connections {
        let c = w.new_conn(now);
        w.conns.push(c);
    }
    // The heads sample comes from the first worker's first connection: its first request
    // and its first answers, then nothing more is copied.
    if a.index == 0 && sh.heads > 0 {
        if let Some(c) = w.conns.first_mut() {
            c.parser.want_head();
            w.want_request_head = true;
        }
    }
    if w.core.paced() {
        w.connect_all()?;
    }
    Ok(w)
}

impl<'a> Protocol<'a> for Worker<'a> {
    fn core(&mut self) -> &mut Core<'a> {
        &mut self.core
    }

    fn core_ref(&self) -> &Core<'a> {
        &self.core
    }

    fn into_core(self) -> Core<'a> {
        self.core
    }

    fn start(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            self.next(i, now);
        }
    }

    fn dispatch(&mut self, now: Instant) -> Dispatch {
        self.due(now)
    }

    fn tick(&mut self, now: Instant) {
        self.sweep(now);
    }

    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool {
        self.ready(i, readable, writable, closed);
        std::mem::take(&mut self.core.unfinished)
    }

    fn on_panic(&mut self, i: usize, now: Instant) {
        self.broke(i, now, FailureKind::Malformed);
    }

    fn open(&mut self, i: usize, now: Instant) {
        self.connect(i, now);
    }

    fn connections(&self) -> usize {
        self.conns.len()
    }

    fn connecting(&self) -> bool {
        self.conns.iter().any(|c| c.phase == Phase::Connecting)
    }
}

impl Worker<'_> {
    /// A connection not yet opened.
    fn new_conn(&self, now: Instant) -> Conn {
        let sh = self.core.sh;
        let mut parser = ResponseParser::new(false, sh.expect.body_contains.as_deref());
        parser.want_server();
        Conn {
            io: None,
            phase: Phase::Closed,
            queue: VecDeque::with_capacity(sh.pipeline),
            rendered: 0,
            out: Vec::new(),
            out_pos: 0,
            queued: 0,
            flushed: 0,
            parser,
            life: Life::new(now),
            reused: false,
            peer_closed: false,
            idle_at: now,
            owes: false,
            pooled: false,
        }
    }

    /// Sends every request that is due and has a connection with room for it.
    fn due(&mut self, now: Instant) -> Dispatch {
        let Some(pacer) = self.core.pacer else {
            return Dispatch::Finished;
        };
        loop {
            match pacer.next(
                now.saturating_duration_since(self.core.start),
                self.core.sched.sent,
            ) {
                Pacing::Stop => return Dispatch::Finished,
                Pacing::Wait(w) => {
                    self.core.sched.caught_up();
                    return Dispatch::At(now + w);
                }
                Pacing::Due { late } => {
                    let Some(i) = self.pop_pooled().or_else(|| self.grow(now)) else {
                        // Every connection is busy and no more may open (the cap): the
                        // request waits, and its latency with it.
                        return Dispatch::Blocked;
                    };
                    let due = self.core.start + pacer.due(self.core.sched.sent);
                    self.core.sched.sent += 1;
                    if self.conns[i].owes {
                        // This request's answer is what the connection received unasked:
                        // malformed. The connection is replaced at the schedule's pace.
                        self.core.sched.sending(late, false);
                        self.conns[i].owes = false;
                        self.conns[i].pooled = false;
                        let kind = self.gen.pick();
                        self.core
                            .rec
                            .failed(&Timing::unsent(due, now, kind), FailureKind::Malformed);
                        self.connect(i, now);
                        continue;
                    }
                    self.enqueue(i, due, now);
                    // A connection still opening sends its queue once it is up.
                    if self.conns[i].phase != Phase::Connecting {
                        self.flush(i, now);
                    }
                    let c = &self.conns[i];
                    if c.queue.len() < self.core.sh.pipeline && c.phase != Phase::Closed {
                        self.conns[i].pooled = false;
                        self.pool_add(i);
                    } else {
                        self.conns[i].pooled = false;
                    }
                }
            }
        }
    }

    /// Rate mode: a request is due and no connection has room. Opens one more when the cap
    /// allows (the request goes out once it is up); `None` when it does not, or the
    /// connection failed at once. Not while the server turns connections away
    /// ([`Core::may_grow`]), nor while more are opening than are open (a connect takes a round trip; a burst
    /// of due requests doubles the connections at most once per round trip).
    fn grow(&mut self, now: Instant) -> Option<usize> {
        let open = self.conns.len() - self.opening;
        if self.opening > open {
            return None;
        }
        if !self.core.may_grow(self.conns.len()) {
            return None;
        }
        let c = self.new_conn(now);
        self.conns.push(c);
        let i = self.conns.len() - 1;
        self.connect(i, now);
        (self.conns[i].phase == Phase::Connecting).then_some(i)
    }

    /// Takes the last pooled connection off the pool (it stays marked pooled).
    fn pop_pooled(&mut self) -> Option<usize> {
        while let Some(i) = self.pool.pop() {
            if self.conns[i].pooled {
                return Some(i);
            }
        }
        None
    }

    /// Puts connection `i` in the pool, unless it is there.
    fn pool_add(&mut self, i: usize) {
        if self.conns[i].pooled {
            return;
        }
        self.conns[i].pooled = true;
        self.pool.push(i);
        if self.pool.len() > 2 * self.conns.len() + 16 {
            // Entries of connections closed since they were added: dropped, so the pool
            // stays as large as the connections however many times they are replaced.
            let conns = &self.conns;
            self.pool.retain(|&j| conns[j].pooled);
            self.pool.sort_unstable();
            self.pool.dedup();
        }
    }

    /// Adds a request that started at `start` to connection `i`'s queue (not rendered yet).
    fn enqueue(&mut self, i: usize, start: Instant, now: Instant) {
        let kind = self.gen.pick();
        let c = &mut self.conns[i];
        let mut rested = Duration::ZERO;
        if c.queue.is_empty() {
            if c.phase == Phase::Idle {
                rested = now.saturating_duration_since(c.idle_at);
            }
            c.parser.reset_for(self.core.sh.requests.kinds[kind].head);
        }
        c.queue.push_back(Slot {
            start,
            sent: now,
            first_byte: None,
            connect: Duration::ZERO,
            kind,
            wire: (0, 0),
            retried: false,
            scheduled: false,
            waited: c.phase == Phase::Connecting,
            rested,
        });
        self.core.in_flight += 1;
    }

    /// What connection `i` does when it may take new work: rate mode, it waits in the pool
    /// (or is re-opened); closed loop, its queue is topped up from the budget to a batch
    /// and sent (on a new connection when it is closed), or it closes when the budget is
    /// spent.
    fn next(&mut self, i: usize, now: Instant) {
        if self.core.pacer.is_some() {
            match self.conns[i].phase {
                Phase::Closed => self.connect(i, now),
                Phase::Connecting => {}
                _ => self.park(i, now),
            }
            return;
        }
        let c = &self.conns[i];
        if c.phase != Phase::Closed && c.busy() {
            return;
        }
        while self.conns[i].queue.len() < self.core.sh.pipeline && self.core.claim(now) {
            self.enqueue(i, now, now);
        }
        match self.conns[i].phase {
            _ if !self.conns[i].busy() => self.close(i),
            Phase::Closed => self.connect(i, now),
            Phase::Connecting => {}
            _ => self.flush(i, now),
        }
    }

    fn connect(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.life.opening(now);
        c.reused = false;
        c.peer_closed = false;
        c.rendered = 0;
        c.out.clear();
        c.out_pos = 0;
        c.queued = 0;
        c.flushed = 0;
        if let Some(front) = c.queue.front() {
            c.parser
                .reset_for(self.core.sh.requests.kinds[front.kind].head);
        }
        match self.core.dial(i) {
            Ok(io) => {
                c.io = Some(io);
                if c.phase != Phase::Connecting {
                    self.opening += 1;
                }
                c.phase = Phase::Connecting;
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.phase == Phase::Connecting {
            self.opening -= 1;
        }
        // Closing the socket removes it from the epoll set; no deregister call needed.
        c.io = None;
        c.phase = Phase::Closed;
        c.pooled = false;
    }

    /// Rate mode: open connection `i` may take a request; idle when its queue is empty.
    fn park(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        if !c.busy() {
            c.phase = Phase::Idle;
            c.idle_at = now;
        }
        if c.queue.len() < self.core.sh.pipeline {
            self.pool_add(i);
        }
    }

    fn timing(&self, s: &Slot, end: Instant) -> Timing {
        Timing {
            start: s.start,
            sent: s.sent,
            first_byte: s.first_byte.unwrap_or(end),
            end,
            connect: s.connect,
            kind: s.kind,
        }
    }

    /// The front request of `i` ended without an answer.
    fn fail_front(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let Some(s) = self.conns[i].queue.pop_front() else {
            return;
        };
        let c = &mut self.conns[i];
        c.rendered = c.rendered.saturating_sub(1);
        let t = self.timing(&s, now);
        self.core.rec.failed(&t, kind);
        self.core.in_flight -= 1;
    }

    /// Connection `i` failed with `kind` and is closed: its front request and every request
    /// written on it (in part or whole) — the server may have read them — fail with that
    /// class; those not written stay queued, to go out on a new connection.
    fn broke(&mut self, i: usize, now: Instant, kind: FailureKind) {
        self.close(i);
        self.fail_front(i, now, kind);
        while self.conns[i].rendered > 0 {
            let c = &self.conns[i];
            let written = c.queue.front().is_some_and(|s| s.wire.0 < c.flushed);
            if !written {
                break;
            }
            self.fail_front(i, now, kind);
        }
        self.conns[i].rendered = 0;
        self.next(i, now);
    }

    /// Every request queued on `i` fails with `kind` (its connection never carried them).
    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        while self.conns[i].busy() {
            self.fail_front(i, now, kind);
        }
    }

    fn connect_failed(&mut self, i: usize, now: Instant) {
        self.close(i);
        self.core.connect_failed(i, &mut self.conns[i].life, now);
        self.fail_all(i, now, FailureKind::Connect);
    }

    /// `closed`: the peer closed or reset the stream, so reads go on until they say so.
    fn ready(&mut self, i: usize, readable: bool, writable: bool, closed: bool) {
        let Some(c) = self.conns.get(i) else { return };
        match c.phase {
            Phase::Closed => {}
            Phase::Connecting => self.on_connecting(i, readable),
            Phase::Idle => {
                if readable {
                    self.on_idle_readable(i);
                }
            }
            Phase::Writing | Phase::Reading => {
                if writable {
                    self.write(i);
                }
                if readable && matches!(self.conns[i].phase, Phase::Writing | Phase::Reading) {
                    self.read(i, closed);
                }
            }
        }
    }

    /// A connection being opened had an event; `readable`: bytes (or a close) came with it,
    /// before any request was sent.
    fn on_connecting(&mut self, i: usize, readable: bool) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        let state = c.io.as_ref().map_or(Ok(false), |io| io.socket.connected());
        match state {
            Ok(false) => {}
            Ok(true) => {
                let connect = c.life.opened(now);
                self.core.rec.connected(connect);
                for s in c.queue.iter_mut() {
                    s.connect = connect;
                }
                c.phase = Phase::Idle;
                self.opening -= 1;
                c.idle_at = now;
                if readable {
                    // Edge-triggered: this edge is the only notice of those bytes.
                    return self.before_request(i, now);
                }
                if c.busy() {
                    self.flush(i, now);
                } else {
                    self.park(i, now);
                }
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    /// An idle connection became readable.
    fn on_idle_readable(&mut self, i: usize) {
        self.conns[i].pooled = false;
        self.before_request(i, Instant::now());
    }

    /// A connection with no request sent on it became readable: the server closed it (a
    /// keep-alive timeout, or a close right after accept) or sent bytes nobody asked for.
    /// Either way it is replaced; the bytes are a protocol violation.
    fn before_request(&mut self, i: usize, now: Instant) {
        let Some(io) = self.conns[i].io.as_mut() else {
            return;
        };
        let n = match io.read(&mut self.core.buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // Nothing after all (a spurious edge): carry on as if it had not come.
                if self.conns[i].busy() {
                    return self.flush(i, now);
                }
                return self.park(i, now);
            }
            Ok(n) => n,
            Err(_) => 0,
        };
        self.core.rec.counts.bytes_received += n as u64;
        if n > 0 {
            return self.unsolicited(i, now);
        }
        if self.conns[i].busy() {
            // Closed at accept, with this connection's requests not sent yet: the same
            // failure as had the close come just after the send.
            self.close(i);
            self.fail_all(i, now, FailureKind::Reset);
            return self.next(i, now);
        }
        // Closed by the server with nothing said.
        let unused = !self.conns[i].reused;
        self.close(i);
        if unused {
            // Dropped before it carried any answer: re-opened after a pause that grows each
            // time, so a server that closes every connection at accept is not flooded.
            self.core.rec.counts.dropped += 1;
            self.core.pause(i, &mut self.conns[i].life, now);
        } else {
            self.core.rec.counts.reconnects += 1;
            self.connect(i, now);
        }
    }

    /// Bytes arrived on `i` that no request asked for. The connection is closed and the
    /// bytes count once, as a malformed answer to the request the connection carries (one
    /// not sent yet) or would have carried next: had they come a moment later, that request
    /// would have received them as its answer. At the end of the run, with no request left
    /// to carry, they are not counted — as they would not have been read.
    fn unsolicited(&mut self, i: usize, now: Instant) {
        if self.conns[i].busy() {
            return self.broke(i, now, FailureKind::Malformed);
        }
        self.close(i);
        if self.core.pacer.is_some() {
            // Charged when the schedule next picks this connection: a server that greets
            // every new connection with bytes is still met at the rate asked for.
            self.conns[i].owes = true;
            self.pool_add(i);
            return;
        }
        if self.core.claim(now) {
            let kind = self.gen.pick();
            self.core
                .rec
                .failed(&Timing::unsent(now, now, kind), FailureKind::Malformed);
        }
        self.next(i, now);
    }

    /// Renders the queue's requests not yet in the output and writes.
    fn flush(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        if c.io.is_none() {
            return;
        }
        while c.rendered < c.queue.len() {
            let s = &mut c.queue[c.rendered];
            let before = c.out.len();
            self.core
                .sh
                .requests
                .render(s.kind, &mut self.gen, &mut c.out, &mut self.scratch);
            if self.want_request_head {
                self.want_request_head = false;
                self.core.rec.heads.request = Some(crate::live::head_of(&c.out[before..]).to_vec());
            }
            let len = (c.out.len() - before) as u64;
            s.wire = (c.queued, c.queued + len);
            if !s.retried {
                // A retried request keeps the time of its first send: its latency counts
                // from it.
                s.sent = now;
            }
            if !s.scheduled && self.core.pacer.is_some() {
                // Its bytes go out now: how late that is after its due time, once (a
                // request put back after its connection failed is rendered again).
                s.scheduled = true;
                self.core
                    .sched
                    .sending(now.saturating_duration_since(s.start), s.waited);
            }
            c.queued += len;
            c.rendered += 1;
        }
        if c.out_pos < c.out.len() {
            c.phase = Phase::Writing;
            self.write(i);
        }
    }

    fn write(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let Some(io) = c.io.as_mut() else { return };
        if c.phase == Phase::Reading {
            // TLS: send records still buffered.
            if io.flush().is_err() {
                self.lost(i, Instant::now());
            }
            return;
        }
        while c.out_pos < c.out.len() {
            match io.write(&c.out[c.out_pos..]) {
                Ok(n) => {
                    c.out_pos += n;
                    c.flushed += n as u64;
                    self.core.rec.counts.bytes_sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.lost(i, Instant::now()),
            }
        }
        c.out.clear();
        c.out_pos = 0;
        c.phase = if c.busy() {
            Phase::Reading
        } else {
            Phase::Idle
        };
    }

    /// Reads until the queue's answers are complete or the socket is drained. With
    /// edge-triggered events a short read proves it drained, unless the peer also closed:
    /// that close comes with no further edge, so then reads go on until they return 0 or
    /// an error. One read may complete several answers (pipelining): each is matched to
    /// the queue's front request in turn.
    fn read(&mut self, i: usize, closed: bool) {
        for _ in 0..READS_PER_EVENT {
            let c = &mut self.conns[i];
            let Some(io) = c.io.as_mut() else { return };
            let drains = io.short_read_drains() && !closed;
            c.peer_closed |= closed;
            let n = match io.read(&mut self.core.buf) {
                Ok(0) => return self.eof(i),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.lost(i, Instant::now()),
            };
            let now = Instant::now();
            self.core.rec.counts.bytes_received += n as u64;
            let mut at = 0;
            while at < n {
                let c = &mut self.conns[i];
                let Some(front) = c.queue.front_mut() else {
                    // Bytes after the last answer of the queue: nobody asked for them.
                    return self.unsolicited(i, now);
                };
                if front.wire.0 >= c.flushed {
                    // An answer to a request not written yet: the server cannot have read
                    // it, so these bytes are nobody's answer.
                    return self.unsolicited(i, now);
                }
                front.first_byte.get_or_insert(now);
                match c.parser.feed(&self.core.buf[at..n]) {
                    Ok(Progress::NeedMore) => at = n,
                    Ok(Progress::Done { consumed }) => {
                        at += consumed;
                        if !self.answered(i, now, at < n) {
                            return;
                        }
                    }
                    Err(_) => return self.broke(i, now, FailureKind::Malformed),
                }
            }
            if drains && n < self.core.buf.len() {
                return;
            }
        }
        self.core.unfinished = true;
    }

    /// The peer closed the stream while requests were in flight.
    fn eof(&mut self, i: usize) {
        let now = Instant::now();
        self.conns[i].peer_closed = true;
        match self.conns[i].parser.eof() {
            Ok(()) => {
                if self.answered(i, now, false) && self.conns[i].busy() {
                    // Requests behind a close-delimited answer: the connection is gone.
                    self.lost(i, now);
                }
            }
            Err(ParseError::Closed | ParseError::Malformed) => self.lost(i, now),
        }
    }

    /// The connection broke (closed, reset, write error) while requests were in flight.
    fn lost(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        if c.io.is_none() {
            return;
        }
        let handshaking =
            c.io.as_ref()
                .and_then(|io| io.tls.as_ref())
                .is_some_and(|t| t.is_handshaking());
        // The idle-close race: the server's keep-alive timer closed the connection as the
        // request went out. Only a request alone on a connection that sat idle qualifies;
        // anything else (a busy connection, several requests in flight, a byte of the
        // answer, a method that is not idempotent, a second time) is a failure.
        let raced = c.queue.len() == 1
            && c.queue.front().is_some_and(|s| {
                !s.retried
                    && s.rested >= IDLE_BEFORE_RETRY
                    && now.saturating_duration_since(s.sent) <= RACE_WINDOW
                    && self.core.sh.requests.kinds[s.kind].idempotent
            })
            && c.parser.seen == 0
            && c.reused;
        if raced {
            self.close(i);
            self.core.rec.counts.reconnects += 1;
            self.core.rec.counts.retried += 1;
            if let Some(s) = self.conns[i].queue.front_mut() {
                s.retried = true;
            }
            return self.connect(i, now);
        }
        let kind = if handshaking {
            self.core.rec.counts.connections_failed += 1;
            FailureKind::Connect
        } else {
            FailureKind::Reset
        };
        self.broke(i, now, kind);
    }

    /// The answer to the front request of `i` is complete; `more`: bytes after it came in
    /// the same read. Credits it, then goes on with the connection. True when the caller
    /// may feed the rest of the read to the next request's answer.
    fn answered(&mut self, i: usize, now: Instant, more: bool) -> bool {
        let written_whole = self.credit(i, now);
        let announced = self.conns[i].parser.close;
        if announced || !self.core.sh.keepalive || !written_whole {
            // The server reads nothing more on this connection: it said so, or it answered
            // before the request was written in full. Requests behind it were not
            // processed (RFC 9112 §9.6): sent again on a new connection, those written
            // counted as retried — if idempotent: a written request of another method is
            // never sent twice, and fails as one whose connection closed before its
            // answer. Bytes after the answer would never have been read.
            self.close(i);
            let (flushed, rendered) = (self.conns[i].flushed, self.conns[i].rendered);
            // One turn of the queue, in order: each request is put back unless it fails.
            for k in 0..self.conns[i].queue.len() {
                let Some(mut s) = self.conns[i].queue.pop_front() else {
                    break;
                };
                if k < rendered && s.wire.0 < flushed {
                    if !self.core.sh.requests.kinds[s.kind].idempotent {
                        let t = self.timing(&s, now);
                        self.core.rec.failed(&t, FailureKind::Reset);
                        self.core.in_flight -= 1;
                        continue;
                    }
                    s.retried = true;
                    self.core.rec.counts.retried += 1;
                }
                self.conns[i].queue.push_back(s);
            }
            self.conns[i].rendered = 0;
            self.next(i, now);
            // A keep-alive connection the server closed, replaced to go on: a reconnect.
            if announced && self.core.sh.keepalive && self.conns[i].phase == Phase::Connecting {
                self.core.rec.counts.reconnects += 1;
            }
            return false;
        }
        if let Some(front) = self.conns[i].queue.front() {
            let head = self.core.sh.requests.kinds[front.kind].head;
            self.conns[i].parser.reset_for(head);
            if self.core.pacer.is_some() && self.conns[i].queue.len() < self.core.sh.pipeline {
                self.pool_add(i);
            }
            return true;
        }
        if more {
            self.unsolicited(i, now);
            return false;
        }
        if self.conns[i].peer_closed {
            // A keep-alive connection the server closed, replaced to go on: a reconnect.
            self.close(i);
            self.next(i, now);
            if self.conns[i].phase == Phase::Connecting {
                self.core.rec.counts.reconnects += 1;
            }
            return false;
        }
        self.next(i, now);
        false
    }

    /// Records the answer on `i` against its front request, which ends. False when the
    /// request was not written in full (the server answered early).
    fn credit(&mut self, i: usize, now: Instant) -> bool {
        let Some(s) = self.conns[i].queue.pop_front() else {
            return true;
        };
        let t = self.timing(&s, now);
        let c = &mut self.conns[i];
        c.rendered = c.rendered.saturating_sub(1);
        let answer = Answer {
            status: c.parser.status,
            body_len: c.parser.body_len,
            matched: c.parser.matched,
            echoed: true,
        };
        let server = &mut c.parser.server;
        self.core
            .rec
            .credit(&t, answer, || server.take(), &self.core.sh.expect);
        if let Some(head) = c.parser.head.take() {
            self.core.rec.heads.responses.push(head);
            if self.core.rec.heads.responses.len() < self.core.sh.heads {
                c.parser.want_head();
            }
        }
        c.reused = true;
        self.core.served(&mut c.life);
        self.core.in_flight -= 1;
        s.wire.1 <= c.flushed
    }

    /// Deadlines and deferred reconnects.
    fn sweep(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.phase {
                Phase::Connecting if c.life.overdue(now, self.core.sh.connect_timeout) => {
                    self.connect_failed(i, now)
                }
                // Answers come in order: the front request's deadline is the first to pass.
                Phase::Writing | Phase::Reading
                    if c.queue.front().is_some_and(|s| {
                        now.saturating_duration_since(s.sent) >= self.core.sh.timeout
                    }) =>
                {
                    self.broke(i, now, FailureKind::Timeout);
                }
                _ => {}
            }
        }
        let conns = &self.conns;
        let due = self.core.reopen_due(now, |i| {
            (conns[i].phase == Phase::Closed).then_some(conns[i].life.reopen_at)
        });
        for i in due {
            self.next(i, now);
        }
    }
}
