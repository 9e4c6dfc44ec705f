//! One HTTP/1.1 connection's protocol state, without I/O: the queue of requests in flight
//! (pipelined or not), the bytes rendered for them and how many of those were written, the
//! answers parsed across reads by a [`ResponseParser`] and matched to the queue in order,
//! and what each answer decides for the connection (go on, close, bytes nobody asked for).
//!
//! The worker ([`super::worker`]) renders requests with [`Connection::render`], writes
//! [`Connection::unwritten`] and reports it with [`Connection::wrote`], hands each read's
//! bytes to [`Connection::received`] (one answer per call, so the bytes are read where they
//! lie, never copied) and acts on what comes back: it records answers, closes and re-opens
//! sockets, and keeps the schedule. Nothing here allocates per request.

use super::parse::{Progress, ResponseParser};
use crate::recorder::{Answer, Clock, Timing};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A connection that sat idle at least this long before a request went out on it may have
/// been closed by the server's keep-alive timer as the request left: if it closes before any
/// byte of the answer, an idempotent request is sent again once. Short enough for any real
/// keep-alive timeout; a connection busy in a closed loop never sits idle, so there a close
/// after the request is always a failure (the server may have read it).
pub(crate) const IDLE_BEFORE_RETRY: Duration = Duration::from_millis(100);

/// A request is sent again only when the close came this soon after the send: in the race
/// the server's close is already under way as the request arrives, while a server that
/// read the request and worked on it before closing (a worker that crashed mid-request)
/// takes longer, and its request is a failure. Many LAN round trips, with room for a busy
/// machine's scheduling.
pub(crate) const RACE_WINDOW: Duration = Duration::from_millis(50);

/// One request in a connection's queue.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// When it started, was sent and first answered; the connect time charged to it.
    pub clock: Clock,
    /// Its kind (entry of the request list).
    pub kind: usize,
    /// Its method is HEAD: its answer has no body.
    pub head: bool,
    /// Its method is idempotent: it may be sent again after it may have been read.
    pub idempotent: bool,
    /// Where its bytes start and end in the connection's output stream (bytes since the
    /// connection opened); meaningful once rendered.
    pub wire: (u64, u64),
    /// Already sent once on a connection that did not answer it.
    pub retried: bool,
    /// Rate mode: its send was counted in the schedule (how late it went out).
    pub scheduled: bool,
    /// Rate mode: it was given to a connection still opening, so a late send waited for
    /// a connection, not for the generator.
    pub waited: bool,
    /// How long its connection sat idle before it was added, alone, to the queue (zero
    /// when the connection was busy or new).
    pub rested: Duration,
}

impl Slot {
    /// A request of `kind` that started at `start`, queued at `now`.
    pub fn new(start: Instant, now: Instant, kind: usize, head: bool, idempotent: bool) -> Slot {
        Slot {
            clock: Clock::new(start, now, Duration::ZERO),
            kind,
            head,
            idempotent,
            wire: (0, 0),
            retried: false,
            scheduled: false,
            waited: false,
            rested: Duration::ZERO,
        }
    }

    /// Its timings, had it ended at `end`.
    pub fn timing(&self, end: Instant) -> Timing {
        self.clock.timing(end, self.kind)
    }
}

/// What the bytes handed to [`Connection::received`] came to, one answer at a time.
#[derive(Debug, Clone, Copy)]
pub enum Received {
    /// Every byte was taken; the answer under way needs more.
    NeedMore,
    /// The front request's answer is complete.
    Answered(Answered),
    /// Bytes that no written request asked for (none waits, or the front one is not
    /// written yet): the connection is done, and they count as one malformed answer.
    Unsolicited,
    /// The bytes are not an answer: the connection broke (malformed).
    Malformed,
    /// The peer closed before the answer under way was whole.
    Lost,
}

/// A complete answer. The request it answers is still the queue's front: the caller
/// takes it with [`Connection::pop_front`] before anything else (so that the request is
/// copied out of the queue once, as it ends).
#[derive(Debug, Clone, Copy)]
pub struct Answered {
    /// Bytes of the input that belonged to it.
    pub consumed: usize,
    /// What came back.
    pub answer: Answer,
    /// What it means for the connection.
    pub then: Then,
}

/// What an answer decides for its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// More requests wait: the rest of the input goes to the next answer.
    Next,
    /// The server reads nothing more here: it said so (`announced`), the run does not keep
    /// connections alive, or it answered before the request was written whole. The
    /// requests behind it were not processed ([`Connection::unprocessed`]).
    Close {
        /// The answer carried `Connection: close` (or was close-delimited).
        announced: bool,
    },
    /// Bytes came after the last awaited answer: nobody asked for them.
    Extra,
    /// The last awaited answer, and the peer closed its side.
    PeerClosed,
    /// The last awaited answer: the connection may take new work.
    Idle,
}

/// One HTTP/1.1 connection's protocol state.
#[derive(Debug)]
pub struct Connection {
    /// Requests started on this connection and not ended, oldest first.
    queue: VecDeque<Slot>,
    /// How many of the queue's front requests are rendered into the output.
    rendered: usize,
    /// Bytes to write, from `out_pos` on.
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes rendered and bytes written since the connection opened.
    queued: u64,
    flushed: u64,
    /// Parses the answer under way.
    pub parser: ResponseParser,
    /// A response already came back on this connection.
    pub reused: bool,
    /// The peer closed its side: the connection carries no further answer.
    pub peer_closed: bool,
    /// Connections are kept open between requests.
    keepalive: bool,
}

impl Connection {
    /// A connection for up to `pipeline` requests in flight, keeping connections alive or
    /// not, whose answers' bodies are searched for `needle`.
    pub fn new(pipeline: usize, keepalive: bool, needle: Option<&[u8]>) -> Connection {
        let mut parser = ResponseParser::new(false, needle);
        parser.want_server();
        Connection {
            queue: VecDeque::with_capacity(pipeline),
            rendered: 0,
            out: Vec::new(),
            out_pos: 0,
            queued: 0,
            flushed: 0,
            parser,
            reused: false,
            peer_closed: false,
            keepalive,
        }
    }

    /// Starts over on a new socket: nothing rendered or written, the queue kept (its
    /// requests go out on it).
    pub fn reopen(&mut self) {
        self.reused = false;
        self.peer_closed = false;
        self.rendered = 0;
        self.out.clear();
        self.out_pos = 0;
        self.queued = 0;
        self.flushed = 0;
        if let Some(front) = self.queue.front() {
            self.parser.reset_for(front.head);
        }
    }

    /// Holds a started request.
    pub fn busy(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Requests in the queue.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Each queued request's start, oldest first.
    pub fn starts(&self) -> impl Iterator<Item = Instant> + '_ {
        self.queue.iter().map(|s| s.clock.start)
    }

    /// The oldest request in the queue.
    pub fn front(&self) -> Option<&Slot> {
        self.queue.front()
    }

    /// Adds a request to the queue (not rendered yet).
    pub fn push(&mut self, s: Slot) {
        if self.queue.is_empty() {
            self.parser.reset_for(s.head);
        }
        self.queue.push_back(s);
    }

    /// The connection opened after `connect`: charged to every request waiting for it.
    pub fn opened(&mut self, connect: Duration) {
        for s in self.queue.iter_mut() {
            s.clock.connect = connect;
        }
    }

    /// Renders the queue's requests not yet in the output: `put` appends one request's
    /// bytes (and does what its send means for the schedule).
    pub fn render(&mut self, now: Instant, mut put: impl FnMut(&mut Slot, &mut Vec<u8>)) {
        while self.rendered < self.queue.len() {
            let s = &mut self.queue[self.rendered];
            let before = self.out.len();
            put(s, &mut self.out);
            let len = (self.out.len() - before) as u64;
            s.wire = (self.queued, self.queued + len);
            if !s.retried {
                // A retried request keeps the time of its first send: its latency counts
                // from it.
                s.clock.sent = now;
            }
            self.queued += len;
            self.rendered += 1;
        }
    }

    /// The rendered bytes not written yet.
    pub fn unwritten(&self) -> &[u8] {
        &self.out[self.out_pos..]
    }

    /// `n` bytes of [`Connection::unwritten`] were written. Once all are, the buffer is
    /// emptied (keeping its capacity).
    pub fn wrote(&mut self, n: usize) {
        self.out_pos += n;
        self.flushed += n as u64;
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
    }

    /// Hands what is rendered and not yet written to `write` (the socket's), as far as it
    /// takes it, adding the bytes to `sent`: true once all is written, false when the
    /// socket would block; an error of `write` is the connection's.
    pub fn write_with(
        &mut self,
        mut write: impl FnMut(&[u8]) -> std::io::Result<usize>,
        sent: &mut u64,
    ) -> std::io::Result<bool> {
        while !self.unwritten().is_empty() {
            match write(self.unwritten()) {
                Ok(n) => {
                    self.wrote(n);
                    *sent += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Takes bytes that arrived, up to the end of the answer under way: call again with
    /// the rest when an answer comes back with bytes left over.
    #[inline]
    pub fn received(&mut self, bytes: &[u8], now: Instant) -> Received {
        let Some(front) = self.queue.front_mut() else {
            // Bytes after the last answer of the queue: nobody asked for them.
            return Received::Unsolicited;
        };
        if front.wire.0 >= self.flushed {
            // An answer to a request not written yet: the server cannot have read it, so
            // these bytes are nobody's answer.
            return Received::Unsolicited;
        }
        front.clock.first_byte.get_or_insert(now);
        match self.parser.feed(bytes) {
            Ok(Progress::NeedMore) => Received::NeedMore,
            Ok(Progress::Done { consumed }) => self.complete(consumed, consumed < bytes.len()),
            Err(_) => Received::Malformed,
        }
    }

    /// The peer closed its side while requests were in flight: completes a
    /// close-delimited answer, else the answer under way is lost.
    #[inline]
    pub fn eof(&mut self) -> Received {
        self.peer_closed = true;
        match self.parser.eof() {
            Ok(()) => self.complete(0, false),
            Err(_) => Received::Lost,
        }
    }

    /// The front request's answer is whole; `more`: bytes came after it.
    #[inline]
    fn complete(&mut self, consumed: usize, more: bool) -> Received {
        let Some(answered) = self.queue.front() else {
            return Received::Lost;
        };
        let written_whole = answered.wire.1 <= self.flushed;
        self.reused = true;
        let p = &self.parser;
        let answer = Answer {
            status: p.status,
            body_len: p.body_len,
            matched: p.matched,
            echoed: true,
        };
        let then = if p.close || !self.keepalive || !written_whole {
            Then::Close { announced: p.close }
        } else if let Some(next) = self.queue.get(1) {
            self.parser.reset_for(next.head);
            Then::Next
        } else if more {
            Then::Extra
        } else if self.peer_closed {
            Then::PeerClosed
        } else {
            Then::Idle
        };
        Received::Answered(Answered {
            consumed,
            answer,
            then,
        })
    }

    /// After [`Then::Close`]: the requests behind the answer were not processed (RFC 9112
    /// §9.6) and stay queued for a new connection, those written marked as retried — if
    /// idempotent: a written request of another method is never sent twice and goes to
    /// `fail` instead. Returns how many were marked retried.
    pub fn unprocessed(&mut self, mut fail: impl FnMut(Slot)) -> u64 {
        let (flushed, rendered) = (self.flushed, self.rendered);
        let mut retried = 0;
        // One turn of the queue, in order: each request is put back unless it fails.
        for k in 0..self.queue.len() {
            let Some(mut s) = self.queue.pop_front() else {
                break;
            };
            if k < rendered && s.wire.0 < flushed {
                if !s.idempotent {
                    fail(s);
                    continue;
                }
                s.retried = true;
                retried += 1;
            }
            self.queue.push_back(s);
        }
        self.rendered = 0;
        retried
    }

    /// Takes the front request off the queue (it ends, answered or not).
    pub fn pop_front(&mut self) -> Option<Slot> {
        let s = self.queue.pop_front()?;
        self.rendered = self.rendered.saturating_sub(1);
        Some(s)
    }

    /// The connection failed: its front request and every request written on it (in part
    /// or whole) — the server may have read them — go to `fail`; those not written stay
    /// queued, to go out on a new connection.
    pub fn fail_written(&mut self, mut fail: impl FnMut(Slot)) {
        if let Some(s) = self.pop_front() {
            fail(s);
        }
        while self.rendered > 0 && self.queue.front().is_some_and(|s| s.wire.0 < self.flushed) {
            if let Some(s) = self.pop_front() {
                fail(s);
            }
        }
        self.rendered = 0;
    }

    /// The idle-close race: the server's keep-alive timer closed the connection as the
    /// request went out. Only a request alone on a connection that sat idle qualifies;
    /// anything else (a busy connection, several requests in flight, a byte of the answer,
    /// a method that is not idempotent, a second time) is a failure. When it qualifies the
    /// request is marked retried, to go out again.
    pub fn raced(&mut self, now: Instant) -> bool {
        let fresh = self.parser.seen == 0 && self.reused;
        let alone = self.queue.len() == 1;
        match self.queue.front_mut() {
            Some(s)
                if fresh
                    && alone
                    && !s.retried
                    && s.rested >= IDLE_BEFORE_RETRY
                    && now.saturating_duration_since(s.clock.sent) <= RACE_WINDOW
                    && s.idempotent =>
            {
                s.retried = true;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
