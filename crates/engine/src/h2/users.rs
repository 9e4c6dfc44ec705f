//! Journeys over HTTP/2: the [`Wire`] of the users' table ([`crate::event_loop::users`],
//! which keeps the users, their timers and the life cycle). Each user has its own HTTP/2
//! connection (h2c with prior knowledge for `http://`, ALPN `h2` over TLS) and sends its
//! steps on it as streams, one at a time: a step's request is HPACK-encoded when it goes
//! out (its fields differ from step to step: literals, never indexed into the server's
//! table), its answer's decoded head and the body's first bytes are kept for the step's
//! captures and checks ([`super::conn::Kept`]), however long the body.
//!
//! What the connection meets is the step's: a RST_STREAM fails the step (as refused, or
//! as a reset stream) and keeps the connection; a step past its deadline is cancelled
//! (RST_STREAM) and the connection kept; a GOAWAY that left the step unprocessed sends it
//! once more on a new connection (counted as retried; a second time it fails as refused);
//! a connection that closes under a step fails it as reset (or as a connection error
//! after a GOAWAY with an error code), and one that closes before the server's SETTINGS
//! as a connect failure. A GOAWAY between steps spends the connection: the next step opens
//! another, as a closed idle connection does.

use super::conn::{Connection, Event};
use super::request::{literal, Prepared as Wired};
use crate::codec::decimal::digits;
use crate::event_loop::users::{Kept, Prepared, Users, Wire};
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

/// A step waiting for its connection to open.
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
    /// Sent once already, on a connection whose GOAWAY left it unprocessed.
    retried: bool,
}

/// A user's HTTP/2 connection.
pub(crate) struct H2 {
    h2: Connection,
    /// The step's request as it goes out, encoded again for each step.
    req: Wired,
    /// Bytes of `h2.out` already written.
    written: usize,
    /// The step waiting for the connection to open.
    queued: Option<Queued>,
    /// The step in flight: its stream's slot and its kind.
    stream: Option<(usize, usize)>,
    /// Sockets this connection had: a read that outlives its socket stops.
    epoch: u32,
}

impl<'a> Wire<'a> for H2 {
    type Phase = Stage;

    fn new(_: &Prepared) -> H2 {
        H2 {
            h2: Connection::new(1, None),
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
            },
            written: 0,
            queued: None,
            stream: None,
            epoch: 0,
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
            retried: false,
        });
    }

    fn flush(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        let head = w.method(i) == "HEAD";
        let tracing = w.tracing(i);
        let Entry { c, .. } = &mut w.conns[i];
        if c.wire.h2.room() == 0 {
            if c.wire.h2.spent() {
                // A GOAWAY came with the last answer: the step goes on a new connection.
                w.close(i);
                w.open(i, now);
            } else if c.wire.h2.max_concurrent() == Some(0) {
                // The server allows no stream at all.
                w.broke(i, now, FailureKind::Refused);
            }
            return;
        }
        let (Some(user), Some(q)) = (c.user.as_ref(), c.wire.queued.take()) else {
            return;
        };
        let wire = &mut c.wire;
        let r = user.request();
        encode(w.p, &r, &mut wire.req);
        wire.req.head_request = head;
        wire.h2.keep(user.prefix(), user.needle());
        let begin = Begin {
            start: q.due,
            sent: now,
            connect: q.connect,
            retried: q.retried,
        };
        let slot = wire.h2.open(&wire.req, begin);
        wire.stream = Some((slot, q.kind));
        if tracing {
            let text = request_text(w.p, &r);
            w.traced(i, text);
        }
        w.write_out(i, now);
    }

    fn take(w: &mut Users<'a, Self>, i: usize, now: Instant) -> Option<Timing> {
        let c = &mut w.conns[i].wire;
        if let Some(q) = c.queued.take() {
            return Some(Timing::ended(q.due, q.at, None, now, q.connect, q.kind));
        }
        let (slot, kind) = c.stream.take()?;
        let t = Timing {
            kind,
            ..c.h2.stream(slot).exchange.timing(now)
        };
        // Freed (a stream cancelled past its deadline is already).
        c.h2.free(slot);
        Some(t)
    }

    fn sent(&self) -> Option<Instant> {
        self.stream
            .map(|(slot, _)| self.h2.stream(slot).exchange.sent)
    }

    fn waiting(&self) -> bool {
        self.queued.is_some() || self.stream.is_some()
    }

    /// The step is cancelled (RST_STREAM, written before the user moves on: it may be
    /// done, its connection closed) and fails; the connection is kept.
    fn overdue(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        let c = &mut w.conns[i].wire;
        if let Some((slot, _)) = c.stream {
            c.h2.cancel(slot);
        }
        w.write_out(i, now);
        w.fail_step(i, now, FailureKind::Timeout);
    }

    fn kept(&mut self) -> Kept<'_> {
        /// The head of no answer.
        static NONE: crate::event_loop::users::Head<'static> = crate::event_loop::users::Head(&[]);
        let (head, body): (&dyn Fields, &[u8]) = match self.h2.kept.as_deref() {
            Some(k) => (&k.head, &k.body),
            None => (&NONE, &[]),
        };
        Kept {
            head,
            body,
            server: &mut self.h2.server,
        }
    }

    fn head_text(&mut self) -> Option<Vec<u8>> {
        let k = self.h2.kept.as_deref()?;
        Some(crate::fields::head_text("HTTP/2", k.status, &k.head))
    }
}

/// Encodes `r` into `out.plain`: the pseudo-header fields, the run's fields, the step's
/// (names in lower case) with its `Cookie`, and `content-length` for a body or a method
/// that carries one; each a literal never added to the server's table (RFC 7541 §6.2.2).
/// Its body goes into `out.body`.
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
    out.body.clear();
    out.body.extend_from_slice(r.body);
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
    /// Writes what user `i`'s connection has to send, as far as the socket takes it.
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

    /// Handles the `n` bytes read for user `i`'s connection; false once the connection
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
            // A connection error: its GOAWAY is written, the step fails as malformed.
            self.write_out(i, now);
            self.broke(i, now, FailureKind::Malformed);
            return false;
        }
        true
    }

    /// Acts on what user `i`'s connection reported.
    fn on_events(&mut self, i: usize, now: Instant) {
        let mut events = std::mem::take(&mut self.conns[i].wire.h2.events);
        for &e in &events {
            match e {
                Event::Ready => {
                    self.conns.set_phase(i, Stage::Open);
                    let c = &mut self.conns[i];
                    self.core.rec.connected(c.life.connect);
                    if let Some(q) = c.c.wire.queued.as_mut() {
                        q.connect = c.life.connect;
                    }
                    H2::flush(self, i, now);
                }
                Event::Answered(slot) => self.answered(i, slot, now),
                Event::Failed(_, kind) | Event::Rejected(_, kind) => self.fail_step(i, now, kind),
                // A journey's steps are no gRPC calls.
                Event::Replies(..) | Event::Stopped(_) => {}
                Event::Unprocessed(slot) => self.unprocessed(i, slot, now),
                Event::Reset(code) => self.core.rec.counts.count_reset(code.0),
                Event::Goaway => self.core.rec.counts.goaways += 1,
            }
        }
        events.clear();
        self.conns[i].wire.h2.events = events;
    }

    /// User `i`'s step got its whole answer (in `slot`): judged, and the user goes on.
    fn answered(&mut self, i: usize, slot: usize, now: Instant) {
        let c = &mut self.conns[i].wire;
        let Some((_, kind)) = c.stream.take() else {
            return;
        };
        let ex = &c.h2.stream(slot).exchange;
        let (t, a) = (
            Timing {
                kind,
                ..ex.timing(now)
            },
            ex.answer(),
        );
        c.h2.free(slot);
        let next = self.judged(i, now, &t, a);
        self.after(i, next, now);
    }

    /// A GOAWAY left user `i`'s step (in `slot`) unprocessed: it goes once more on a new
    /// connection, its latency still counted from when it was due; a second time it fails
    /// as refused.
    fn unprocessed(&mut self, i: usize, slot: usize, now: Instant) {
        let c = &mut self.conns[i].wire;
        let ex = &c.h2.stream(slot).exchange;
        if ex.retried {
            return self.fail_step(i, now, FailureKind::Refused);
        }
        let Some((_, kind)) = c.stream.take() else {
            return;
        };
        c.queued = Some(Queued {
            due: ex.start,
            at: now,
            kind,
            connect: ex.connect,
            retried: true,
        });
        c.h2.free(slot);
        self.core.rec.counts.retried += 1;
        self.core.rec.counts.reconnects += 1;
        self.close(i);
        self.open(i, now);
    }

    /// After a read: frames written, and a connection a GOAWAY spent closed once its step
    /// ended (the next step opens another).
    fn settle(&mut self, i: usize, now: Instant) {
        self.write_out(i, now);
        let c = &self.conns[i];
        if c.phase() == Stage::Open && c.wire.h2.spent() && c.wire.stream.is_none() {
            self.close(i);
        }
    }

    /// User `i`'s connection closed or broke: its step fails as reset, or as a connection
    /// error after a GOAWAY with an error code; before the server's SETTINGS it is a
    /// failed connect.
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
        self.broke(i, now, kind);
    }
}
