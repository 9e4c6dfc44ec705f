//! Journeys over HTTP/2: the [`Wire`] of the users' table ([`crate::event_loop::users`],
//! which keeps the users, their timers and the life cycle). Each user has its own HTTP/2
//! connection (h2c with prior knowledge for `http://`, ALPN `h2` over TLS) and sends its
//! steps on it as streams, one at a time — or, with [`Prepared::per_connection`] users to
//! a connection, the users of a group share their host's connection, each step a stream of
//! its own beside the others' (as many at once as the server's
//! `SETTINGS_MAX_CONCURRENT_STREAMS` allows; the rest wait for a stream to end). A step's
//! request is HPACK-encoded when it goes out (its fields differ from step to step:
//! literals, never indexed into the server's table), its body staged for its stream alone;
//! each stream keeps its answer's decoded head and the body's first bytes for its step's
//! captures and checks ([`super::conn::Kept`]), however long the body, so users sharing a
//! connection never read each other's answers. In the open model a journey's new user
//! may take a connection an earlier journey's user left open, with a stream free and no
//! GOAWAY ([`Wire::reusable`]).
//!
//! What the connection meets is the step's: a RST_STREAM fails the step as a reset
//! stream and keeps the connection, but REFUSED_STREAM (not processed, RFC 9113 §8.7)
//! sends it again on the same connection; a step past its deadline is cancelled
//! (RST_STREAM) and the connection kept; a GOAWAY that left a step unprocessed sends it
//! again on a new connection once the streams the server did process have ended (each
//! send again counted as retried, within the step's deadline and at most
//! [`crate::exchange::MAX_RESENDS`] times; after that it fails as refused); a connection that closes under
//! steps fails those it carried as reset (or as a connection error after a GOAWAY with an
//! error code), and steps still waiting to be sent go on a new one; one that closes before
//! the server's SETTINGS fails every step waiting on it as a connect failure. A GOAWAY
//! between steps spends the connection: once its last stream ends it is closed, and the
//! next step opens another, as a closed idle connection does.

use super::conn::{Connection, Event};
use super::request::{literal, Prepared as Wired};
use crate::codec::decimal::digits;
use crate::event_loop::users::{Kept, Prepared, Seats, Users, Wire};
use crate::event_loop::{Core, Entry, Protocol, Reads, Stage};
use crate::exchange::Begin;
use crate::journey::{Fields, Request};
use crate::recorder::Timing;
use shootout_model::FailureKind;
use std::io;
use std::time::{Duration, Instant};

/// Builds the users around their `core`.
pub(crate) fn set_up<'a>(core: Core<'a>, p: &'a Prepared) -> io::Result<impl Protocol<'a>> {
    crate::event_loop::users::set_up::<H2>(core, p)
}

/// A step waiting to be sent: for its connection to open, or for a stream.
#[derive(Debug, Clone, Copy)]
struct Queued {
    /// When it was due (its latency counts from then).
    due: Instant,
    /// When it was queued.
    at: Instant,
    /// Its step among all steps (the recorder's kind).
    kind: usize,
    /// Connect time charged to it (it waited for its connection to open).
    connect: Duration,
    /// Sends before the one to come, each on a connection whose GOAWAY left it
    /// unprocessed.
    resent: u8,
}

/// A user's seat over HTTP/2: its step, and on a host's seat the connection its riders
/// share.
pub(crate) struct H2 {
    /// The connection (never opened on a seat that is no host: it has no stream slots).
    h2: Connection,
    /// The step's request as it goes out, encoded again for each step (on the host).
    req: Wired,
    /// Bytes of `h2.out` already written.
    written: usize,
    /// The user's step waiting to be sent.
    queued: Option<Queued>,
    /// The user's step in flight: its stream's slot on its host's connection, its kind.
    stream: Option<(usize, usize)>,
    /// The slot of the user's last answered stream, which keeps its answer.
    last: usize,
    /// Sockets this connection had: a read that outlives its socket stops.
    epoch: u32,
    /// The seat whose connection the user's steps ride on ([`Users::host`]).
    host: usize,
    /// On a host's seat: the rider whose stream is in each slot.
    riders: Vec<usize>,
}

impl<'a> Wire<'a> for H2 {
    type Phase = Stage;

    fn new(p: &Prepared, i: usize) -> H2 {
        let n = p.per_connection.max(1);
        let host = i - i % n;
        // A host's connection has a stream slot per rider; a rider's seat has none.
        let slots = if host == i { n } else { 0 };
        H2 {
            h2: Connection::new(slots, None),
            req: Wired {
                first: Vec::new(),
                indexed: Vec::new(),
                plain: Vec::new(),
                // Never within a table: every block is `plain`, as encoded per step.
                table_size: usize::MAX,
                body: Vec::new(),
                head_request: false,
                text: Vec::new(),
                // A journey's steps are HTTP; a gRPC call is `load`'s alone.
                grpc: None,
                messages: None,
                // Each step's body is its stream's own.
                own_bodies: true,
            },
            written: 0,
            queued: None,
            stream: None,
            last: 0,
            epoch: 0,
            host,
            riders: vec![usize::MAX; slots],
        }
    }

    fn open(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        let c = &mut w.conns[i].wire;
        c.written = 0;
        c.epoch = c.epoch.wrapping_add(1);
        c.h2.start();
        w.dial(i, now);
    }

    fn ready(w: &mut Users<'a, Self>, i: usize, readable: bool, writable: bool, closed: bool) {
        let now = Instant::now();
        let Some(phase) = w.conns.get(i).map(|c| c.phase()) else {
            return;
        };
        let connected = phase == Stage::Connecting;
        if connected {
            if !w.tcp_connected(i, now) {
                return;
            }
            w.conns[i].life.opened(now);
            w.conns.set_phase(i, Stage::Handshake);
        } else if phase == Stage::Closed {
            return;
        }
        if writable || connected {
            w.write_out(i, now);
        }
        if !readable || w.conns.closed(i) {
            return;
        }
        match w.read_each(i, closed, |w, n| w.frames(i, n, now)) {
            Reads::Drained | Reads::More => w.settle(i, now),
            Reads::Closed | Reads::Failed => w.broken(i, now),
            Reads::Stopped => {}
        }
    }

    fn queue(w: &mut Users<'a, Self>, i: usize, due: Instant, now: Instant, kind: usize) {
        w.conns[i].wire.queued = Some(Queued {
            due,
            at: now,
            kind,
            connect: Duration::ZERO,
            resent: 0,
        });
    }

    fn flush(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        let h = w.conns[i].wire.host;
        if !w.has_room(h, now) {
            return;
        }
        let head = w.method(i) == "HEAD";
        let tracing = w.tracing(i);
        let c = &mut w.conns[i].c;
        let Some(q) = c.wire.queued.take() else {
            return;
        };
        // Out of its seat while its request goes on its host's connection.
        let Some(user) = c.user.take() else {
            return;
        };
        let (slot, text) = {
            let r = user.request();
            let wire = &mut w.conns[h].c.wire;
            encode(w.p, &r, &mut wire.req);
            wire.req.head_request = head;
            wire.h2.staged.clear();
            wire.h2.staged.extend_from_slice(r.body);
            let begin = Begin {
                start: q.due,
                sent: now,
                connect: q.connect,
                resent: q.resent,
            };
            let slot = wire.h2.open(&wire.req, begin);
            wire.h2.keep(slot, user.prefix(), user.needle());
            wire.riders[slot] = i;
            (slot, tracing.then(|| request_text(w.p, &r)))
        };
        let c = &mut w.conns[i].c;
        c.wire.stream = Some((slot, q.kind));
        c.user = Some(user);
        if let Some(text) = text {
            w.traced(i, text);
        }
        w.write_out(h, now);
    }

    fn take(w: &mut Users<'a, Self>, i: usize, now: Instant) -> Option<Timing> {
        let c = &mut w.conns[i].wire;
        if let Some(q) = c.queued.take() {
            return Some(Timing::ended(q.due, q.at, None, now, q.connect, q.kind));
        }
        let (slot, kind) = c.stream.take()?;
        let host = c.host;
        let h2 = &mut w.conns[host].wire.h2;
        let t = Timing {
            kind,
            ..h2.stream(slot).exchange.timing(now)
        };
        // Freed (a stream cancelled past its deadline is already).
        h2.free(slot);
        Some(t)
    }

    fn sent(w: &Users<'a, Self>, i: usize) -> Option<Instant> {
        let c = &w.conns[i].wire;
        let h2 = &w.conns[c.host].wire.h2;
        c.stream.map(|(slot, _)| h2.stream(slot).exchange.sent)
    }

    fn started(w: &Users<'a, Self>, i: usize) -> Option<Instant> {
        let c = &w.conns[i].wire;
        let h2 = &w.conns[c.host].wire.h2;
        let sent = c.stream.map(|(slot, _)| h2.stream(slot).exchange.start);
        c.queued.as_ref().map(|q| q.due).or(sent)
    }

    fn waiting(&self) -> bool {
        self.queued.is_some() || self.stream.is_some()
    }

    /// The step is cancelled (RST_STREAM, written before the user moves on: it may be
    /// done, its connection closed) and fails; the connection is kept, and a step waiting
    /// for a stream takes the one freed. Should writing break the connection, its steps
    /// have failed with it.
    fn overdue(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        let h = w.conns[i].wire.host;
        if let Some((slot, _)) = w.conns[i].wire.stream {
            w.conns[h].wire.h2.cancel(slot);
        }
        let epoch = w.conns[h].wire.epoch;
        w.write_out(h, now);
        if w.conns[h].wire.epoch != epoch || w.conns.closed(h) {
            return;
        }
        w.fail_step(i, now, FailureKind::Timeout);
        w.pump(h, now);
    }

    fn kept<'k>(seats: &'k mut Seats<'a, Self>, i: usize) -> Kept<'k> {
        /// The head of no answer.
        static NONE: crate::event_loop::users::Head<'static> = crate::event_loop::users::Head(&[]);
        let (host, slot) = (seats[i].wire.host, seats[i].wire.last);
        let (kept, server) = seats[host].c.wire.h2.kept(slot);
        let (head, body): (&dyn Fields, &[u8]) = match kept {
            Some(k) => (&k.head, &k.body),
            None => (&NONE, &[]),
        };
        Kept { head, body, server }
    }

    fn head_text(seats: &mut Seats<'a, Self>, i: usize) -> Option<Vec<u8>> {
        let (host, slot) = (seats[i].wire.host, seats[i].wire.last);
        let k = seats[host].c.wire.h2.kept(slot).0?;
        Some(crate::fields::head_text("HTTP/2", k.status, &k.head))
    }

    /// Open (the server's SETTINGS came), a stream free, not spent by a GOAWAY, and no
    /// step of the seat's waiting or in flight.
    fn reusable(phase: Stage, w: &H2) -> bool {
        phase == Stage::Open
            && w.h2.room() > 0
            && !w.h2.spent()
            && w.queued.is_none()
            && w.stream.is_none()
    }
}

/// Encodes `r` into `out.plain`: the pseudo-header fields, the run's fields, the step's
/// (names in lower case) with its `Cookie`, and `content-length` for a body or a method
/// that carries one; each a literal never added to the server's table (RFC 7541 §6.2.2).
/// Its body is staged apart, for its stream alone.
fn encode(p: &Prepared, r: &Request, out: &mut Wired) {
    let b = &mut out.plain;
    b.clear();
    let scheme: &[u8] = if p.tls { b"https" } else { b"http" };
    for (n, v) in [
        (&b":method"[..], r.method.as_bytes()),
        (b":scheme", scheme),
        (b":authority", p.host.as_bytes()),
        (b":path", r.target),
    ] {
        literal(b, 0x00, 4, n, v);
    }
    for (n, v) in &p.fields {
        literal(b, 0x00, 4, n.as_bytes(), v.as_bytes());
    }
    for (n, v) in r.headers() {
        literal(b, 0x00, 4, n, v);
        // The name's bytes end where the value's length begins: lower case there only.
        let name_end = b.len() - v.len() - length_prefix(v.len());
        b[name_end - n.len()..name_end].make_ascii_lowercase();
    }
    if !r.body.is_empty() || matches!(r.method, "POST" | "PUT" | "PATCH") {
        let mut buf = [0u8; 20];
        let len = digits(r.body.len() as u64, &mut buf);
        literal(b, 0x00, 4, b"content-length", len);
    }
}

/// Bytes of an HPACK string length with a 7-bit prefix (RFC 7541 §5.1).
fn length_prefix(len: usize) -> usize {
    let mut n = 1;
    if len >= 127 {
        let mut rest = len - 127;
        n += 1;
        while rest >= 128 {
            rest >>= 7;
            n += 1;
        }
    }
    n
}

/// `-v 2`: the step's request as curl shows an HTTP/2 request.
fn request_text(p: &Prepared, r: &Request) -> Vec<u8> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut section = vec![
        (":method".to_string(), r.method.to_string()),
        (
            ":scheme".into(),
            if p.tls { "https" } else { "http" }.into(),
        ),
        (":authority".into(), p.host.clone()),
        (":path".into(), text(r.target)),
    ];
    section.extend(p.fields.iter().cloned());
    section.extend(
        r.headers()
            .map(|(n, v)| (text(n).to_ascii_lowercase(), text(v))),
    );
    crate::fields::request_text(&section, "HTTP/2")
}

impl<'a> Users<'a, H2> {
    /// Writes what host `i`'s connection has to send, as far as the socket takes it.
    fn write_out(&mut self, i: usize, now: Instant) {
        let Entry {
            io: Some(io), c, ..
        } = &mut self.conns[i]
        else {
            return;
        };
        let (c, sent) = (&mut c.wire, &mut self.core.rec.counts.bytes_sent);
        if io.write_out(&mut c.h2.out, &mut c.written, sent).is_err() {
            self.broken(i, now);
        }
    }

    /// Whether host `h`'s connection has room for a stream now. A connection a GOAWAY
    /// spent is closed once its last stream ended and another opened for the steps
    /// waiting; one whose server allows no stream at all fails them as refused.
    fn has_room(&mut self, h: usize, now: Instant) -> bool {
        let h2 = &self.conns[h].wire.h2;
        if h2.room() > 0 {
            return true;
        }
        if h2.spent() && h2.active() == 0 {
            self.close(h);
            self.open(h, now);
        } else if h2.max_concurrent() == Some(0) {
            self.broke(h, now, FailureKind::Refused);
        }
        false
    }

    /// Host `h`'s connection is open: the steps of its riders waiting for a stream go
    /// out, in seat order, while it has room.
    fn pump(&mut self, h: usize, now: Instant) {
        for u in self.riders(h) {
            if self.conns[h].phase() != Stage::Open {
                return;
            }
            if self.conns[u].wire.queued.is_some() {
                H2::flush(self, u, now);
            }
        }
    }

    /// The rider of host `h` whose step is the stream in `slot`.
    fn rider(&self, h: usize, slot: usize) -> Option<usize> {
        let u = *self.conns[h].wire.riders.get(slot)?;
        let c = self.conns.get(u)?;
        c.wire.stream.is_some_and(|(s, _)| s == slot).then_some(u)
    }

    /// Handles the `n` bytes read for host `i`'s connection; false once the connection
    /// is gone (or another socket took its place).
    fn frames(&mut self, i: usize, n: usize, now: Instant) -> bool {
        if self.conns[i].phase() == Stage::Handshake
            && !self.conns[i]
                .io
                .as_ref()
                .is_some_and(super::worker::alpn_h2)
        {
            self.connect_failed(i, now);
            return false;
        }
        let epoch = self.conns[i].wire.epoch;
        let want_server = self.core.rec.first.is_none();
        let c = &mut self.conns[i].c.wire;
        c.h2.want_server = want_server;
        let fed = c.h2.feed(&self.core.buf[..n], &c.req, now);
        self.on_events(i, now);
        if self.conns[i].wire.epoch != epoch || self.conns.closed(i) {
            return false;
        }
        if fed.is_err() {
            // A connection error: its GOAWAY is written, its steps fail as malformed
            // (unless writing it broke the connection first).
            self.write_out(i, now);
            if self.conns[i].wire.epoch == epoch && !self.conns.closed(i) {
                self.lost(i, now, FailureKind::Malformed);
            }
            return false;
        }
        true
    }

    /// Acts on what host `i`'s connection reported.
    fn on_events(&mut self, i: usize, now: Instant) {
        let mut events = std::mem::take(&mut self.conns[i].wire.h2.events);
        for &e in &events {
            match e {
                Event::Ready => self.ready_now(i, now),
                Event::Answered(slot) => self.answered(i, slot, now),
                Event::Failed(slot, kind) | Event::Rejected(slot, kind) => {
                    if let Some(u) = self.rider(i, slot) {
                        self.fail_step(u, now, kind);
                    }
                }
                // A journey's steps are no gRPC calls.
                Event::Replies(..) | Event::Echoes(..) | Event::Stopped(_) => {}
                Event::Unprocessed(slot) => self.unprocessed(i, slot, now),
                Event::Reset(code) => self.core.rec.counts.count_reset(code.0),
                Event::Goaway => self.core.rec.counts.goaways += 1,
            }
        }
        events.clear();
        self.conns[i].wire.h2.events = events;
    }

    /// The server's SETTINGS came: host `h`'s connection is open (a limit on its streams
    /// below its users noted), the steps waiting on it carry its connect time and go out.
    fn ready_now(&mut self, h: usize, now: Instant) {
        self.conns.set_phase(h, Stage::Open);
        let connect = self.conns[h].life.connect;
        self.core.rec.connected(connect);
        let share = self.p.per_connection as u64;
        if let Some(m) = self.conns[h]
            .wire
            .h2
            .max_concurrent()
            .filter(|&m| m < share)
        {
            // The users beyond wait for a stream: the report says so.
            self.limit = Some(self.limit.map_or(m, |l| l.min(m)));
        }
        for u in self.riders(h) {
            if let Some(q) = self.conns[u].c.wire.queued.as_mut() {
                q.connect = connect;
            }
        }
        self.pump(h, now);
    }

    /// The stream in `slot` of host `h`'s connection got its whole answer: its user's
    /// step is judged, and the user goes on.
    fn answered(&mut self, h: usize, slot: usize, now: Instant) {
        let Some(i) = self.rider(h, slot) else {
            return;
        };
        let c = &mut self.conns[i].wire;
        let Some((_, kind)) = c.stream.take() else {
            return;
        };
        c.last = slot;
        let h2 = &mut self.conns[h].wire.h2;
        let ex = &h2.stream(slot).exchange;
        let (t, a) = (
            Timing {
                kind,
                ..ex.timing(now)
            },
            ex.answer(),
        );
        h2.free(slot);
        let next = self.judged(i, now, &t, a);
        self.after(i, next, now);
    }

    /// A GOAWAY or a REFUSED_STREAM left the stream in `slot` of host `h`'s connection
    /// unprocessed: its step goes again (after a GOAWAY on a new connection, once the
    /// streams the server processed have ended),
    /// its latency still counted from when it was due, while it may
    /// ([`crate::exchange::Exchange::may_resend`]); else it fails as refused.
    fn unprocessed(&mut self, h: usize, slot: usize, now: Instant) {
        let Some(i) = self.rider(h, slot) else {
            return;
        };
        let h2 = &mut self.conns[h].wire.h2;
        let ex = &h2.stream(slot).exchange;
        if !ex.may_resend(now, self.core.sh.timeout) {
            return self.fail_step(i, now, FailureKind::Refused);
        }
        let (due, connect, resent) = (ex.start, ex.connect, ex.resend().resent);
        h2.free(slot);
        let c = &mut self.conns[i].wire;
        let Some((_, kind)) = c.stream.take() else {
            return;
        };
        c.queued = Some(Queued {
            due,
            at: now,
            kind,
            connect,
            resent,
        });
        self.core.rec.counts.retried += 1;
    }

    /// After a read: frames written; a connection a GOAWAY spent closed once its last
    /// stream ended (a new one opened for the steps waiting, counted as a reconnect);
    /// steps waiting for a stream sent on the room freed.
    fn settle(&mut self, h: usize, now: Instant) {
        self.write_out(h, now);
        let c = &self.conns[h];
        if c.phase() != Stage::Open {
            return;
        }
        if c.wire.h2.spent() && c.wire.h2.active() == 0 {
            self.close(h);
            self.reopen_for_waiting(h, now);
            return;
        }
        self.pump(h, now);
    }

    /// Host `h`'s connection closed with steps of its riders still waiting to be sent:
    /// they go on a new one, counted as a reconnect.
    fn reopen_for_waiting(&mut self, h: usize, now: Instant) {
        let waiting = self.riders(h).any(|u| self.conns[u].wire.queued.is_some());
        if waiting && self.conns.closed(h) {
            self.core.rec.counts.reconnects += 1;
            self.open(h, now);
        }
    }

    /// Host `h`'s connection broke, open: the steps it carried fail as `kind`, those
    /// waiting to be sent go on a new connection.
    fn lost(&mut self, h: usize, now: Instant, kind: FailureKind) {
        self.close(h);
        for u in self.riders(h) {
            if self.conns[u].wire.stream.is_some() {
                self.fail_step(u, now, kind);
            }
        }
        self.reopen_for_waiting(h, now);
    }

    /// Host `i`'s connection closed or broke: the steps it carried fail as reset, or as
    /// a connection error after a GOAWAY with an error code; before the server's
    /// SETTINGS every step waiting on it fails as a failed connect.
    fn broken(&mut self, i: usize, now: Instant) {
        if self.broke_unopened(i, now) {
            return;
        }
        if self.conns[i].phase() == Stage::Handshake {
            return self.connect_failed(i, now);
        }
        let kind = match self.conns[i].wire.h2.goaway_code() {
            Some(code) if code != super::frame::NO_ERROR => FailureKind::ConnectionError,
            _ => FailureKind::Reset,
        };
        self.lost(i, now, kind);
    }
}
