//! HTTP/1.1 connections on the event loop ([`crate::event_loop`]): a worker's share of the
//! connections, closed loop or paced, their sockets, and each answer recorded into the
//! worker's recorder. What a connection's bytes mean (its queue, its answers, what each
//! decides) is its [`Connection`], which does no I/O; this is the I/O and the schedule.
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

use super::conn::{Answered, Connection, Received, Slot, Then};
use super::request::Prepared;
use super::wire::{self, Phase};
use crate::event_loop::{parts, Core, Entry, Protocol, Reads, Table, Taken};
use crate::recorder::Timing;
use crate::template::Gen;
use shootout_model::FailureKind;
use std::io;
use std::time::Instant;

/// Rate mode: an answer that took longer than this after its send, and came after the
/// answer to a request sent later, is counted in
/// [`crate::event_loop::Schedule::overtaken`].
const OVERTAKEN_AFTER: std::time::Duration = std::time::Duration::from_millis(10);

/// One connection: its socket and the event loop's view of it, around its protocol state.
struct Conn {
    /// The requests in flight, the bytes for them and their answers.
    h1: Connection,
    /// When the connection last became idle (rate mode).
    idle_at: Instant,
    /// Rate mode: bytes nobody asked for arrived on this connection while it was idle; the
    /// next request the schedule gives it is counted as their malformed answer.
    owes: bool,
    /// Rate mode: in the pool of connections with room for a request.
    pooled: bool,
}

impl AsMut<Connection> for Conn {
    fn as_mut(&mut self) -> &mut Connection {
        &mut self.h1
    }
}

impl Conn {
    /// Holds a started request.
    fn busy(&self) -> bool {
        self.h1.busy()
    }
}

struct Worker<'a> {
    core: Core<'a>,
    /// The run's requests, in their HTTP/1.1 wire form.
    reqs: &'a Prepared,
    conns: Table<Phase, Conn>,
    /// Rate mode: connections with room for a request (see [`Conn::pooled`]); an entry
    /// whose connection is no longer pooled is skipped when popped.
    pool: Vec<usize>,
    /// Picks each request's kind and draws its templated values.
    gen: Gen,
    /// Holds a templated body while its length is taken.
    scratch: Vec<u8>,
    /// Copy the next request rendered into the heads sample (`-v 2`).
    want_request_head: bool,
    /// Rate mode: the latest send of a request answered so far.
    last_sent_answered: Option<Instant>,
}

/// Builds the worker around its `core` (the loop's `host` opens its connections in
/// rate mode).
pub(crate) fn set_up<'a>(mut core: Core<'a>, reqs: &'a Prepared) -> io::Result<impl Protocol<'a>> {
    let a = core.share;
    let (sh, now) = (core.sh, core.start);
    let kinds = reqs.kinds.len();
    if (2..=shootout_model::requests::MAX_REPORTED_ENTRIES).contains(&kinds) {
        core.rec.per_kind(kinds);
    }
    let mut w = Worker {
        core,
        reqs,
        conns: Table::with_capacity(a.connections),
        pool: Vec::with_capacity(a.connections),
        gen: Gen::new(
            reqs.seed,
            reqs.random,
            reqs.kinds.len(),
            a.index,
            sh.workers,
        ),
        scratch: Vec::new(),
        want_request_head: false,
        last_sent_answered: None,
    };
    for _ in 0..a.connections {
        w.add(now);
    }
    // The heads sample comes from the first worker's first connection: its first request
    // and its first answers, then nothing more is copied.
    if a.index == 0 && sh.heads > 0 && a.connections > 0 {
        w.conns[0].h1.parser.want_head();
        w.want_request_head = true;
    }
    Ok(w)
}

impl<'a> Protocol<'a> for Worker<'a> {
    parts!('a, Phase, Conn, core, conns);

    fn new_conn(&self, now: Instant) -> Conn {
        let sh = self.core.sh;
        Conn {
            h1: Connection::new(
                sh.pipeline,
                sh.keepalive,
                sh.expect.body_contains.as_deref(),
            ),
            idle_at: now,
            owes: false,
            pooled: false,
        }
    }

    fn start(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            self.next(i, now);
        }
    }

    const WAITS_ON_OPENING: bool = true;

    /// The last pooled connection, taken off the pool (it stays marked pooled).
    fn with_room(&mut self) -> Option<usize> {
        while let Some(i) = self.pool.pop() {
            if self.conns[i].pooled {
                return Some(i);
            }
        }
        None
    }

    fn spare(&self, i: usize) -> bool {
        self.conns.closed(i) && !self.conns[i].busy()
    }

    fn begin(&mut self, i: usize, due: Instant, now: Instant) -> Taken {
        if self.conns[i].owes {
            // This request's answer is what the connection received unasked: malformed. The
            // connection is replaced at the schedule's pace.
            self.conns[i].owes = false;
            self.conns[i].pooled = false;
            let kind = self.gen.pick();
            self.core
                .rec
                .failed(&Timing::unsent(due, now, kind), FailureKind::Malformed);
            self.core.spare.push(i);
            return Taken::Sent;
        }
        // A connection still opening sends its queue once it is up, and counts the send
        // then.
        let queued = self.conns[i].phase() == Phase::Connecting;
        self.enqueue(i, due, now, !queued);
        if !queued {
            self.flush(i, now);
        }
        self.conns[i].pooled = false;
        let c = &self.conns[i];
        if c.h1.len() < self.core.sh.pipeline && c.phase() != Phase::Closed {
            self.pool_add(i);
        }
        if queued {
            Taken::Queued
        } else {
            Taken::Sent
        }
    }

    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool {
        self.ready(i, readable, writable, closed);
        std::mem::take(&mut self.core.unfinished)
    }

    fn on_panic(&mut self, i: usize, now: Instant) {
        self.broke(i, now, FailureKind::GeneratorFault);
    }

    /// Every request queued on `i` fails with `kind` (its connection never carried them).
    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        while let Some(s) = self.conns[i].h1.pop_front() {
            Self::failed(&mut self.core, s, now, kind);
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        self.conns[i].h1.reopen();
        self.dial(i, now);
    }

    fn close(&mut self, i: usize) {
        // Closing the socket removes it from the epoll set; no deregister call needed.
        self.conns[i].pooled = false;
        self.conns.close(i);
    }

    /// Answers come in order: the front request's deadline is the first to pass, and the
    /// connection fails with it.
    fn deadlines(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        let timeout = self.core.sh.timeout;
        if matches!(c.phase(), Phase::Writing | Phase::Reading)
            && c.h1
                .front()
                .is_some_and(|s| now.saturating_duration_since(s.clock.sent) >= timeout)
        {
            self.broke(i, now, FailureKind::Timeout);
        }
    }

    fn each_in_flight(&self, each: &mut dyn FnMut(Instant)) {
        for i in 0..self.conns.len() {
            self.conns[i].h1.starts().for_each(&mut *each);
        }
    }

    /// Its queue fails (its requests were claimed when queued).
    fn charge(&mut self, i: usize, now: Instant, kind: FailureKind) {
        self.fail_all(i, now, kind);
    }

    fn reopen(&mut self, i: usize, now: Instant) {
        self.next(i, now);
    }

    /// Those opened ahead of need are used in the order their connects completed, as
    /// near as the client can see to the order a server accepts them: a server that gives
    /// each accepted connection a worker until its request comes is given requests on
    /// those it accepted first. The workers opened theirs in turns (see
    /// `event_loop::Turns`), so across workers too they are accepted in the order the
    /// schedule uses them. (The kernel may still accept them in another order, e.g. when a
    /// thread moved between CPUs as it connected.)
    fn opened_ahead(&mut self) {
        let conns = &self.conns;
        self.pool.retain(|&i| conns[i].pooled);
        self.pool.reverse();
    }
}

impl Worker<'_> {
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

    /// Adds a request that started at `start` to connection `i`'s queue (not rendered yet);
    /// rate mode: `counted` when the schedule counted its send (else it is counted as its
    /// bytes go out).
    fn enqueue(&mut self, i: usize, start: Instant, now: Instant, counted: bool) {
        let kind = self.gen.pick();
        let k = &self.reqs.kinds[kind];
        let c = &mut self.conns[i];
        let mut s = Slot::new(start, now, kind, k.head, k.idempotent);
        if !c.busy() && c.phase() == Phase::Idle {
            s.rested = now.saturating_duration_since(c.idle_at);
        }
        s.waited = c.phase() == Phase::Connecting;
        s.scheduled = counted;
        c.h1.push(s);
        self.core.in_flight += 1;
    }

    /// What connection `i` does when it may take new work: rate mode, it waits in the pool
    /// (or is re-opened); closed loop, its queue is topped up from the budget to a batch
    /// and sent (on a new connection when it is closed), or it closes when the budget is
    /// spent.
    fn next(&mut self, i: usize, now: Instant) {
        if self.core.pacer.is_some() {
            match self.conns[i].phase() {
                // Requests wait on it (not written yet): they need it now.
                Phase::Closed if self.conns[i].busy() => self.open(i, now),
                // Opened again when a request needs it, not before.
                Phase::Closed => self.core.spare.push(i),
                Phase::Connecting => {}
                _ => self.park(i, now),
            }
            return;
        }
        let c = &self.conns[i];
        if c.phase() != Phase::Closed && c.busy() {
            return;
        }
        while self.conns[i].h1.len() < self.core.sh.pipeline && self.core.claim(now) {
            self.enqueue(i, now, now, false);
        }
        match self.conns[i].phase() {
            _ if !self.conns[i].busy() => self.close(i),
            Phase::Closed => self.open(i, now),
            Phase::Connecting => {}
            _ => self.flush(i, now),
        }
    }

    /// Rate mode: open connection `i` may take a request; idle when its queue is empty.
    fn park(&mut self, i: usize, now: Instant) {
        if !self.conns[i].busy() {
            self.conns.set_phase(i, Phase::Idle);
            self.conns[i].idle_at = now;
        }
        if self.conns[i].h1.len() < self.core.sh.pipeline {
            self.pool_add(i);
        }
    }

    /// A request ended at `now` without an answer, with failure class `kind`.
    fn failed(core: &mut Core, s: Slot, now: Instant, kind: FailureKind) {
        core.rec.failed(&s.timing(now), kind);
        core.in_flight -= 1;
    }

    /// Connection `i` failed with `kind` and is closed: its front request and every request
    /// written on it (in part or whole) — the server may have read them — fail with that
    /// class; those not written stay queued, to go out on a new connection.
    fn broke(&mut self, i: usize, now: Instant, kind: FailureKind) {
        self.close(i);
        let core = &mut self.core;
        self.conns[i]
            .h1
            .fail_written(|s| Self::failed(core, s, now, kind));
        self.next(i, now);
    }

    /// `closed`: the peer closed or reset the stream, so reads go on until they say so.
    fn ready(&mut self, i: usize, readable: bool, writable: bool, closed: bool) {
        let Some(c) = self.conns.get(i) else { return };
        match c.phase() {
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
                if readable && matches!(self.conns[i].phase(), Phase::Writing | Phase::Reading) {
                    self.read(i, closed);
                }
            }
        }
    }

    /// A connection being opened had an event; `readable`: bytes (or a close) came with it,
    /// before any request was sent.
    fn on_connecting(&mut self, i: usize, readable: bool) {
        let now = Instant::now();
        if !self.tcp_connected(i, now) {
            return;
        }
        let c = &mut self.conns[i];
        let connect = c.life.opened(now);
        self.core.rec.connected(connect);
        c.h1.opened(connect);
        c.idle_at = now;
        self.conns.set_phase(i, Phase::Idle);
        if readable {
            // Edge-triggered: this edge is the only notice of those bytes.
            return self.before_request(i, now);
        }
        if self.conns[i].busy() {
            self.flush(i, now);
        } else {
            self.park(i, now);
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
        let c = &self.conns[i];
        let unused = !c.h1.reused;
        // Rate mode: one opened ahead of need and closed after sitting idle a while was
        // not turned away at accept (a keep-alive timeout closed it, which is the server's
        // right): it waits, closed, for a request that needs it.
        let rested = self.core.pacer.is_some()
            && now.saturating_duration_since(c.idle_at) >= crate::event_loop::CLOSED_AT_ACCEPT;
        self.close(i);
        if unused && !rested {
            // Dropped before it carried any answer: re-opened after a pause that grows each
            // time, so a server that closes every connection at accept is not flooded.
            self.core.rec.counts.dropped += 1;
            self.core.pause(i, &mut self.conns[i].life, now);
        } else if self.core.pacer.is_some() {
            // Closed after serving, while idle: opened again when a request needs it.
            self.core.spare.push(i);
        } else {
            self.core.rec.counts.reconnects += 1;
            self.open(i, now);
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
        let Entry { io, c, .. } = &mut self.conns[i];
        if io.is_none() {
            return;
        }
        let (reqs, gen, scratch) = (self.reqs, &mut self.gen, &mut self.scratch);
        let (want_head, heads) = (&mut self.want_request_head, &mut self.core.rec.heads);
        let (sched, paced) = (&mut self.core.sched, self.core.pacer.is_some());
        c.h1.render(now, |s, out| {
            let before = out.len();
            reqs.render(s.kind, gen, out, scratch);
            if *want_head {
                *want_head = false;
                heads.request = Some(crate::live::head_of(&out[before..]).to_vec());
            }
            if !s.scheduled && paced {
                // Its bytes go out now: how late that is after its due time, once (a
                // request put back after its connection failed is rendered again).
                s.scheduled = true;
                sched.sending(now.saturating_duration_since(s.clock.start), s.waited);
            }
        });
        if !c.h1.unwritten().is_empty() {
            self.conns.set_phase(i, Phase::Writing);
            self.write(i);
        }
    }

    fn write(&mut self, i: usize) {
        if wire::write(&mut self.conns, i, &mut self.core.rec.counts.bytes_sent).is_err() {
            self.lost(i, Instant::now());
        }
    }

    /// Reads until the queue's answers are complete or the socket is drained. With
    /// edge-triggered events a short read proves it drained, unless the peer also closed:
    /// that close comes with no further edge, so then reads go on until they return 0 or
    /// an error. One read may complete several answers (pipelining): each is matched to
    /// the queue's front request in turn.
    fn read(&mut self, i: usize, closed: bool) {
        self.conns[i].h1.peer_closed |= closed;
        match self.read_each(i, closed, |w, n| w.answers_in(i, n)) {
            Reads::Closed => self.eof(i),
            Reads::Failed => self.lost(i, Instant::now()),
            Reads::Drained | Reads::More | Reads::Stopped => {}
        }
    }

    /// Matches the `n` bytes read for connection `i` to its queue's answers; false once
    /// the connection is closed or replaced.
    fn answers_in(&mut self, i: usize, n: usize) -> bool {
        let now = Instant::now();
        let mut at = 0;
        while at < n {
            match self.conns[i].h1.received(&self.core.buf[at..n], now) {
                Received::NeedMore => at = n,
                Received::Answered(a) => {
                    at += a.consumed;
                    if !self.answered(i, now, &a) {
                        return false;
                    }
                }
                Received::Unsolicited => {
                    self.unsolicited(i, now);
                    return false;
                }
                Received::Malformed => {
                    self.broke(i, now, FailureKind::Malformed);
                    return false;
                }
                Received::Lost => {
                    self.lost(i, now);
                    return false;
                }
            }
        }
        true
    }

    /// The peer closed the stream while requests were in flight.
    fn eof(&mut self, i: usize) {
        let now = Instant::now();
        match self.conns[i].h1.eof() {
            Received::Answered(a) => {
                if self.answered(i, now, &a) {
                    // Requests behind a close-delimited answer: the connection is gone.
                    self.lost(i, now);
                }
            }
            _ => self.lost(i, now),
        }
    }

    /// The connection broke (closed, reset, write error) while requests were in flight.
    fn lost(&mut self, i: usize, now: Instant) {
        let Entry { io, c, .. } = &mut self.conns[i];
        let Some(io) = io.as_ref() else { return };
        let handshaking = io.tls.as_ref().is_some_and(|t| t.is_handshaking());
        if c.h1.raced(now) {
            // The server's keep-alive timer closed the connection as the request went out:
            // it goes again, once.
            self.close(i);
            self.core.rec.counts.reconnects += 1;
            self.core.rec.counts.retried += 1;
            return self.open(i, now);
        }
        let kind = if handshaking {
            self.core.rec.counts.connections_failed += 1;
            FailureKind::Connect
        } else {
            FailureKind::Reset
        };
        self.broke(i, now, kind);
    }

    /// The answer to the front request of `i` is complete: credits it, then goes on with
    /// the connection as the answer decided. True when the caller may feed the rest of the
    /// read to the next request's answer.
    fn answered(&mut self, i: usize, now: Instant, a: &Answered) -> bool {
        self.credit(i, now, a);
        match a.then {
            Then::Next => {
                if self.core.pacer.is_some() && self.conns[i].h1.len() < self.core.sh.pipeline {
                    self.pool_add(i);
                }
                true
            }
            Then::Close { announced } => {
                // Requests behind it go again on a new connection (a written one that is
                // not idempotent fails as one whose connection closed before its answer).
                // Bytes after the answer would never have been read.
                self.close(i);
                let core = &mut self.core;
                let retried = self.conns[i]
                    .h1
                    .unprocessed(|s| Self::failed(core, s, now, FailureKind::Reset));
                self.core.rec.counts.retried += retried;
                self.next(i, now);
                // A keep-alive connection the server closed, replaced to go on: a reconnect.
                if announced && self.core.sh.keepalive && self.conns[i].phase() == Phase::Connecting
                {
                    self.core.rec.counts.reconnects += 1;
                }
                false
            }
            Then::Extra => {
                self.unsolicited(i, now);
                false
            }
            Then::PeerClosed => {
                // A keep-alive connection the server closed, replaced to go on: a reconnect.
                self.close(i);
                self.next(i, now);
                if self.conns[i].phase() == Phase::Connecting {
                    self.core.rec.counts.reconnects += 1;
                }
                false
            }
            Then::Idle => {
                self.next(i, now);
                false
            }
        }
    }

    /// Records the answer `a` on `i` against the request it answers, which ends.
    fn credit(&mut self, i: usize, now: Instant, a: &Answered) {
        let c = &mut self.conns[i];
        let Some(s) = c.h1.pop_front() else {
            return;
        };
        let t = s.timing(now);
        if self.core.pacer.is_some() {
            // Answers on one connection come in order: a request sent later and answered
            // first went on another.
            let overtaken = self.last_sent_answered.is_some_and(|l| l > s.clock.sent);
            if overtaken && now.saturating_duration_since(s.clock.sent) > OVERTAKEN_AFTER {
                self.core.sched.overtaken += 1;
            }
            self.last_sent_answered = Some(
                self.last_sent_answered
                    .map_or(s.clock.sent, |l| l.max(s.clock.sent)),
            );
        }
        let server = &mut c.h1.parser.server;
        self.core
            .rec
            .credit(&t, a.answer, || server.take(), &self.core.sh.expect);
        if let Some(head) = c.h1.parser.head.take() {
            self.core.rec.heads.responses.push(head);
            if self.core.rec.heads.responses.len() < self.core.sh.heads {
                c.h1.parser.want_head();
            }
        }
        self.core.served(&mut c.life);
        self.core.in_flight -= 1;
    }
}
