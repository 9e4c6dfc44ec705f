//! Journeys over HTTP/1.1: the [`Wire`] of the users' table ([`crate::event_loop::users`],
//! which keeps the users, their timers and the life cycle): a user's one request in
//! flight on its kept-alive connection, written when due, its answer's head and body
//! prefix handed back. A step's answer keeps its head and the body's first bytes the
//! step's captures and checks read ([`super::parse::Kept`]), however long the body. In
//! the open model a journey's new user may take a connection an earlier journey's user
//! left kept alive and idle ([`Wire::reusable`]).

use super::conn::{Connection, Received, Slot, Then};
use super::wire::{self, Phase};
use crate::event_loop::users::{Head, Kept, Prepared, Seat, Seats, Users, Wire};
use crate::event_loop::{Entry, Protocol, Reads};
use crate::journey::Fields;
use crate::recorder;
use crate::recorder::Timing;
use shootout_model::FailureKind;
use std::io;
use std::time::Instant;

/// Builds the users around their `core`.
pub(crate) fn set_up<'a>(
    core: crate::event_loop::Core<'a>,
    p: &'a Prepared,
) -> io::Result<impl Protocol<'a>> {
    crate::event_loop::users::set_up::<Connection>(core, p)
}

impl AsMut<Connection> for Seat<'_, Connection> {
    fn as_mut(&mut self) -> &mut Connection {
        &mut self.wire
    }
}

impl<'a> Wire<'a> for Connection {
    type Phase = Phase;

    fn new(_: &Prepared, _: usize) -> Connection {
        Connection::new(1, true, None)
    }

    fn open(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        w.conns[i].wire.reopen();
        w.dial(i, now);
    }

    fn ready(w: &mut Users<'a, Self>, i: usize, readable: bool, writable: bool, closed: bool) {
        let Some(c) = w.conns.get(i) else { return };
        match c.phase() {
            Phase::Closed => {}
            Phase::Connecting => {
                w.on_connecting(i);
                // Edge-triggered: bytes or a close that came with the connect have no
                // other notice.
                match w.conns[i].phase() {
                    Phase::Writing | Phase::Reading if readable => w.read(i, closed),
                    Phase::Idle if readable => w.on_idle_readable(i),
                    _ => {}
                }
            }
            Phase::Idle if readable => w.on_idle_readable(i),
            Phase::Idle => {}
            Phase::Writing | Phase::Reading => {
                if writable {
                    w.write(i);
                }
                if readable && matches!(w.conns[i].phase(), Phase::Writing | Phase::Reading) {
                    w.read(i, closed);
                }
            }
        }
    }

    fn queue(w: &mut Users<'a, Self>, i: usize, due: Instant, now: Instant, kind: usize) {
        let method = w.method(i);
        let phase = w.conns[i].phase();
        let c = &mut w.conns[i].c;
        let Some(user) = c.user.as_ref() else { return };
        let idempotent = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(&method);
        let mut s = Slot::new(due, now, kind, method == "HEAD", idempotent);
        if phase == Phase::Idle {
            s.rested = now.saturating_duration_since(c.idle_at);
        }
        s.waited = phase != Phase::Idle;
        // The schedule's send is a journey's start (see `begin`), never a step's.
        s.scheduled = true;
        c.wire.push(s);
        c.wire.parser.keep(user.prefix(), user.needle());
    }

    fn flush(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        let tracing = w.tracing(i);
        let Entry { io, c, .. } = &mut w.conns[i];
        if io.is_none() {
            return;
        }
        let (Some(user), prelude) = (c.user.as_ref(), &w.p.prelude) else {
            return;
        };
        c.wire
            .render(now, |_, out| user.request().write_h1_with(prelude, out));
        if tracing {
            c.wire.parser.want_head();
            let head = crate::live::head_of(c.wire.unwritten()).to_vec();
            w.traced(i, head);
        }
        if !w.conns[i].wire.unwritten().is_empty() {
            w.conns.set_phase(i, Phase::Writing);
            w.write(i);
        }
    }

    fn take(w: &mut Users<'a, Self>, i: usize, now: Instant) -> Option<Timing> {
        w.conns[i].wire.pop_front().map(|s| s.timing(now))
    }

    fn sent(w: &Users<'a, Self>, i: usize) -> Option<Instant> {
        w.conns[i].wire.front().map(|s| s.clock.sent)
    }

    fn started(w: &Users<'a, Self>, i: usize) -> Option<Instant> {
        w.conns[i].wire.front().map(|s| s.clock.start)
    }

    fn waiting(&self) -> bool {
        self.busy()
    }

    fn kept<'k>(seats: &'k mut Seats<'a, Self>, i: usize) -> Kept<'k> {
        /// The head of no answer.
        static NONE: Head<'static> = Head(&[]);
        let p = &mut seats[i].c.wire.parser;
        let (head, body): (&dyn Fields, &[u8]) = match p.kept.as_deref() {
            Some(k) => (k, &k.body),
            None => (&NONE, &[]),
        };
        Kept {
            head,
            body,
            server: &mut p.server,
        }
    }

    fn head_text(seats: &mut Seats<'a, Self>, i: usize) -> Option<Vec<u8>> {
        seats[i].c.wire.parser.head.take()
    }

    /// Kept alive and idle: its last answer whole, nothing queued.
    fn reusable(phase: Phase, w: &Connection) -> bool {
        phase == Phase::Idle && !w.busy()
    }
}

impl<'a> Users<'a, Connection> {
    fn on_connecting(&mut self, i: usize) {
        let now = Instant::now();
        if !self.tcp_connected(i, now) {
            return;
        }
        let c = &mut self.conns[i];
        let connect = c.life.opened(now);
        self.core.rec.connected(connect);
        c.wire.opened(connect);
        c.idle_at = now;
        self.conns.set_phase(i, Phase::Idle);
        if self.conns[i].wire.busy() {
            Connection::flush(self, i, now);
        }
    }

    /// A connection whose user thinks became readable: the server closed it (its
    /// keep-alive timeout) or sent bytes nobody asked for. Either way it is closed; the
    /// user's next step opens another. Bytes count once as a malformed answer outside any
    /// step ([`Users::unsolicited`]).
    fn on_idle_readable(&mut self, i: usize) {
        let Some(io) = self.conns[i].io.as_mut() else {
            return;
        };
        match io.read(&mut self.core.buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Ok(n) if n > 0 => {
                // Bytes nobody asked for: the connection is not trusted further (no
                // request of the user's is charged with them).
                self.core.rec.counts.bytes_received += n as u64;
                self.unsolicited(i, Instant::now());
            }
            _ => {}
        }
        self.close(i);
    }

    /// Bytes came on user `i`'s connection after its answer, while no request of its
    /// was out: they count once, as a failed request of class `malformed` charged to no
    /// step (its next step goes out on a new connection, its own answer its own) — unless
    /// the user has no step left to send in the run (its last journey ended and the run's
    /// journeys are spent), as they would not have been read had they come a moment
    /// later.
    fn unsolicited(&mut self, i: usize, now: Instant) {
        let pending = self.conns[i]
            .user
            .as_ref()
            .is_some_and(|u| u.pending().is_some());
        if pending || !self.core.spent(now) {
            self.core.rec.failed(
                &Timing::unsent(now, now, usize::MAX),
                FailureKind::Malformed,
            );
        }
    }

    fn write(&mut self, i: usize) {
        if wire::write(&mut self.conns, i, &mut self.core.rec.counts.bytes_sent).is_err() {
            self.lost(i, Instant::now());
        }
    }

    fn read(&mut self, i: usize, closed: bool) {
        self.conns[i].wire.peer_closed |= closed;
        match self.read_each(i, closed, |w, n| w.answer_from(i, n)) {
            Reads::Closed => self.eof(i),
            Reads::Failed => self.lost(i, Instant::now()),
            Reads::Drained | Reads::More | Reads::Stopped => {}
        }
    }

    /// Hands the `n` bytes read for user `i` to its answer; false once the answer is whole
    /// or the connection failed.
    fn answer_from(&mut self, i: usize, n: usize) -> bool {
        let now = Instant::now();
        let mut at = 0;
        while at < n {
            match self.conns[i].wire.received(&self.core.buf[at..n], now) {
                Received::NeedMore => at = n,
                Received::Answered(a) => {
                    // One request in flight: bytes after its answer are nobody's.
                    self.answered(i, now, a.answer, a.then);
                    return false;
                }
                Received::Unsolicited | Received::Malformed => {
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

    fn eof(&mut self, i: usize) {
        let now = Instant::now();
        match self.conns[i].wire.eof() {
            Received::Answered(a) => self.answered(i, now, a.answer, Then::PeerClosed),
            _ => self.lost(i, now),
        }
    }

    /// The connection broke while the request was out.
    fn lost(&mut self, i: usize, now: Instant) {
        let Entry { io, life, c, .. } = &mut self.conns[i];
        let Some(io) = io.as_ref() else { return };
        let handshaking = io.tls.as_ref().is_some_and(|t| t.is_handshaking());
        if c.wire.raced(now) {
            // The server's keep-alive timer closed the connection as the request went
            // out: it goes again, once, on a new one.
            self.close(i);
            self.core.rec.counts.reconnects += 1;
            self.core.rec.counts.retried += 1;
            return self.open(i, now);
        }
        if !c.wire.reused {
            // Closed before any answer on it (its request fails, as reset): the next
            // connection waits a pause that doubles each time, as after a failed connect.
            life.pause(now);
        }
        let kind = if handshaking {
            self.core.rec.counts.connections_failed += 1;
            FailureKind::Connect
        } else {
            FailureKind::Reset
        };
        self.broke(i, now, kind);
    }

    /// The answer to user `i`'s request is whole: recorded as the user judges it, and
    /// the user goes on.
    fn answered(&mut self, i: usize, now: Instant, a: recorder::Answer, then: Then) {
        let Some(s) = self.conns[i].wire.pop_front() else {
            return;
        };
        let next = self.judged(i, now, &s.timing(now), a);
        match then {
            Then::Idle => {
                self.conns.set_phase(i, Phase::Idle);
                self.conns[i].idle_at = now;
            }
            // Bytes after the answer are nobody's: counted, and the connection closed.
            Then::Extra => {
                self.unsolicited(i, now);
                self.close(i);
            }
            Then::Close { .. } | Then::PeerClosed | Then::Next => self.close(i),
        }
        self.after(i, next, now);
    }
}
