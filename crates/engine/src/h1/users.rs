//! Journeys over HTTP/1.1 on the event loop: each connection carries one user
//! ([`crate::journey::User`]), which chooses its next request from its last answer, waits
//! out its think time, and keeps its cookies and captured values. The user decides what
//! and when; this is the I/O — the socket, the one request in flight, the answer's head and
//! body prefix handed back — and the loop's life cycle decides the rest (pacing, growth,
//! deadlines), as for every protocol.
//!
//! - **Closed model** (no rate): the worker's connections are its users, each running
//!   journeys back to back; the budget (`-n`) counts journeys started.
//!   With stages (`--stages`), user `n` (of the run) runs journeys in the stages that
//!   have more than `n` users: it begins its first at the start of the first such stage,
//!   and one that ends in a stage without it is its last (its connection closed) until a
//!   stage has it again.
//! - **Open model** (`--rate`): the schedule starts journeys; each is a new user on a
//!   connection of its own, opened when the journey starts and closed when it ends, up to
//!   the connection cap at once. The schedule's lag is that of journey starts; each step's
//!   latency counts from when it was due (its journey's start plus the think times), so a
//!   slow server never hides behind a user's waiting.
//!
//! A connection the server closes between steps (its keep-alive timeout, often shorter
//! than a user's think time) is opened again when the user's next step is due, as a
//! browser would. A step's answer keeps its head and the body's first bytes the step's
//! captures and checks read ([`super::parse::Kept`]), however long the body.
//!
//! `-v 2` (a heads sample asked for): the first worker follows its first user through its
//! first journey, copying each request's head, each answer's head and the values the step
//! captured into the recorder's sample ([`crate::heads::Exchange`]); a test of a flag per
//! request, nothing else, once that journey ended.

use super::conn::{Connection, Received, Slot, Then};
use super::wire::{self, Phase};
use crate::event_loop::{parts, Core, Entry, Protocol, Reads, Table, Taken};
use crate::journey::{Answer, Event, Fields, Next, Setup, User};
use crate::recorder;
use crate::sys;
use mio::{Interest, Token};
use shootout_model::journey::JourneyFile;
use shootout_model::FailureKind;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::time::{Duration, Instant};

/// The token of the think-time timer (the pacing timer's is `usize::MAX`).
const THINK: usize = usize::MAX - 1;

/// What the run prepared for its users: the journeys, and the header lines every request
/// carries before its step's own (`Host`, `User-Agent`, `Accept`, `-H`).
pub struct Prepared {
    /// The journeys.
    pub file: std::sync::Arc<JourneyFile>,
    /// Whole header lines, each ending in CRLF.
    pub prelude: Vec<u8>,
    /// The `Host` field's value (the cookie jar's host).
    pub host: String,
    /// Requests go over TLS (`Secure` cookies are sent).
    pub tls: bool,
    /// Seeds the users' generators.
    pub seed: u64,
    /// Unix seconds at the run's start (cookie dates).
    pub unix_start: i64,
    /// Closed model in stages: each stage's users and when it ends (from the run's
    /// start), in order ([`stage_ends`]); empty: every user for the whole run.
    pub stages: Vec<(usize, Duration)>,
}

/// `stages` as [`Prepared::stages`] holds them: each stage's users and its end.
pub fn stage_ends(stages: &[shootout_model::Stage]) -> Vec<(usize, Duration)> {
    let mut end = Duration::ZERO;
    stages
        .iter()
        .map(|s| {
            end += s.duration;
            (s.users, end)
        })
        .collect()
}

/// What a timer of a user's fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// Its next step.
    Step,
    /// Its next journey (closed model).
    Journey,
    /// Its connection may be opened again after a failed connect.
    Open,
}

/// One user and its connection.
struct Conn<'j> {
    h1: Connection,
    /// `None` in the open model between two users of the slot.
    user: Option<User<'j>>,
    /// In a journey (started, not ended).
    active: bool,
    /// Timer entries with another generation are stale.
    gen: u32,
    /// When the connection last became idle.
    idle_at: Instant,
}

impl<'j> AsMut<Connection> for Conn<'j> {
    fn as_mut(&mut self) -> &mut Connection {
        &mut self.h1
    }
}

struct Worker<'a> {
    core: Core<'a>,
    p: &'a Prepared,
    conns: Table<Phase, Conn<'a>>,
    /// Users' due steps and journeys: (when, connection, generation, what).
    timers: BinaryHeap<Reverse<(Instant, usize, u32, Due)>>,
    think: sys::Timer,
    /// Index of each journey's first step among all steps (the recorder's kinds).
    first_step: Vec<usize>,
    /// What a user reported during one call.
    events: Vec<Event>,
    /// Users in a journey.
    active: usize,
    /// Users this worker made (their numbers: `index + made × workers`).
    made: u64,
    /// `-v 2`: the first worker follows its first user (connection 0) through its first
    /// journey, into the recorder's heads sample; false once that journey ended.
    trace: bool,
}

/// Builds the users around their `core`.
pub(crate) fn set_up<'a>(mut core: Core<'a>, p: &'a Prepared) -> io::Result<impl Protocol<'a>> {
    let a = core.share;
    let now = core.start;
    let trace = a.index == 0 && core.sh.heads > 0;
    let mut first_step = Vec::with_capacity(p.file.journeys.len());
    let mut steps = 0;
    for j in &p.file.journeys {
        first_step.push(steps);
        steps += j.steps.len();
    }
    core.rec.per_kind(steps);
    core.rec.per_journey(p.file.journeys.len());
    let think = sys::Timer::new()?;
    let fd = think.fd();
    core.poll.registry().register(
        &mut mio::unix::SourceFd(&fd),
        Token(THINK),
        Interest::READABLE,
    )?;
    let mut w = Worker {
        core,
        p,
        conns: Table::with_capacity(a.connections),
        timers: BinaryHeap::new(),
        think,
        first_step,
        events: Vec::new(),
        active: 0,
        made: 0,
        trace,
    };
    if !w.core.paced() {
        for _ in 0..a.connections {
            let user = Some(w.new_user(false));
            let i = w.add(now);
            w.conns[i].user = user;
        }
    }
    Ok(w)
}

/// Takes the outcome of the step that was sent, the first event a user reports when
/// handed its answer or failure: its failure class, if it failed.
fn outcome(events: &mut Vec<Event>) -> Option<FailureKind> {
    match events.first() {
        Some(&Event::Step { outcome, .. }) => {
            events.remove(0);
            outcome.err().and_then(|f| f.kind())
        }
        _ => None,
    }
}

/// An answer head's fields, read from its bytes as kept (status line first).
struct Head<'b>(&'b [u8]);

impl Fields for Head<'_> {
    fn each(&self, f: &mut dyn FnMut(&[u8], &[u8])) {
        for line in self.0.split(|&b| b == b'\n').skip(1) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let value = line[colon + 1..].trim_ascii();
            f(&line[..colon], value);
        }
    }
}

impl<'a> Protocol<'a> for Worker<'a> {
    parts!('a, Phase, Conn<'a>, core, conns);

    /// A slot with no user yet.
    fn new_conn(&self, now: Instant) -> Conn<'a> {
        Conn {
            h1: Connection::new(1, true, None),
            user: None,
            active: false,
            gen: 0,
            idle_at: now,
        }
    }

    /// Closed model: every user begins its first journey.
    fn start(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            self.begin_journey(i, now, now);
        }
    }

    const WAITS_ON_OPENING: bool = true;

    /// A journey is a new user on a connection of its own: none has room for it.
    fn with_room(&mut self) -> Option<usize> {
        None
    }

    fn spare(&self, i: usize) -> bool {
        self.conns.closed(i) && self.conns[i].user.is_none()
    }

    /// Open model: the journey due at `due` starts now as a new user on connection `i`
    /// (opening): the schedule's send is the journey's start. Its first request goes out
    /// when the connection is up, its latency counted from `due`, connecting included, as
    /// a new visitor's first page is.
    fn begin(&mut self, i: usize, due: Instant, now: Instant) -> Taken {
        let user = self.new_user(true);
        self.conns[i].user = Some(user);
        self.begin_journey(i, due, now);
        Taken::Sent
    }

    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool {
        if i == THINK {
            self.think.clear();
            self.wake(Instant::now());
            return false;
        }
        self.ready(i, readable, writable, closed);
        std::mem::take(&mut self.core.unfinished)
    }

    fn on_panic(&mut self, i: usize, now: Instant) {
        if i < self.conns.len() {
            self.broke(i, now, FailureKind::GeneratorFault);
        }
    }

    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        self.fail_step(i, now, kind);
    }

    fn open(&mut self, i: usize, now: Instant) {
        self.conns[i].h1.reopen();
        self.dial(i, now);
    }

    /// The request past its deadline fails, and its connection with it.
    fn deadlines(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        let timeout = self.core.sh.timeout;
        if matches!(c.phase(), Phase::Writing | Phase::Reading)
            && c.h1
                .front()
                .is_some_and(|s| now.saturating_duration_since(s.sent) >= timeout)
        {
            self.broke(i, now, FailureKind::Timeout)
        }
    }

    /// The connection could not be opened: the request waiting on it fails, and the
    /// user's next connection waits a pause that doubles with each failure (see
    /// [`crate::event_loop::Life::pause`]), so a server that is down or turns
    /// connections away is not hammered in a tight loop.
    fn connect_failed(&mut self, i: usize, now: Instant) {
        self.close(i);
        self.core.rec.counts.connections_failed += 1;
        self.conns[i].life.pause(now);
        self.fail_step(i, now, FailureKind::Connect);
    }

    /// Users thinking are under way too: the run waits for their journeys.
    fn idle(&self) -> bool {
        self.active == 0
    }

    fn next_wake(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse(t)| t.0)
    }

    fn wake(&mut self, now: Instant) {
        while let Some(&Reverse((at, i, gen, due))) = self.timers.peek() {
            if at > now {
                self.think.arm(at);
                break;
            }
            self.timers.pop();
            if self.conns[i].gen != gen {
                continue;
            }
            match due {
                Due::Step => self.send(i, at, now),
                Due::Journey => self.begin_journey(i, at, now),
                Due::Open => {
                    if self.conns[i].phase() == Phase::Closed && self.conns[i].h1.busy() {
                        self.open(i, now);
                    }
                }
            }
        }
    }
}

impl<'a> Worker<'a> {
    /// A new user; `single`: it runs one journey (the open model's).
    fn new_user(&mut self, single: bool) -> User<'a> {
        let sh = self.core.sh;
        let number = self.core.index as u64 + self.made * sh.workers as u64;
        self.made += 1;
        User::new(
            &self.p.file,
            Setup {
                seed: self.p.seed,
                user: number,
                // Above any user's number: each user's `{seq}` values are its own.
                seq_step: 1 << 32,
                host: self.p.host.clone(),
                tls: self.p.tls,
                unix_start: self.p.unix_start,
                single,
            },
        )
    }

    /// Run time of `at`, as the users count it.
    fn since(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.core.start)
    }

    /// Waits for `at` to do `due` for user `i`.
    fn later(&mut self, i: usize, at: Instant, due: Due) {
        let gen = self.conns[i].gen;
        self.timers.push(Reverse((at, i, gen, due)));
        if self.timers.peek().is_some_and(|Reverse(t)| t.0 == at) {
            self.think.arm(at);
        }
    }

    /// Closed model: user `i` begins its next journey at `due`, if the budget allows and
    /// its stage has it (else it waits for the next stage that does); else it is done.
    /// Open model: the journey of the user just put on `i`.
    fn begin_journey(&mut self, i: usize, due: Instant, now: Instant) {
        if !self.core.paced() {
            match self.staged(i, self.since(due)) {
                None => return self.done(i),
                Some(at) if at > self.since(due) => {
                    // Away until then: its connection is not held open meanwhile.
                    self.close(i);
                    return self.later(i, self.core.start + at, Due::Journey);
                }
                Some(_) => {}
            }
            if !self.core.claim(now) {
                return self.done(i);
            }
        }
        let at = self.since(due);
        let c = &mut self.conns[i].c;
        let Some(user) = c.user.as_mut() else { return };
        c.active = true;
        self.active += 1;
        let events = &mut self.events;
        let next = user.start(at, &mut |e| events.push(e));
        self.after(i, next, now);
    }

    /// Closed model: the run time at or after `at` when user `i` (of this worker) may
    /// begin a journey: `at` itself when its stage has it, else the start of the next
    /// stage that does; `None` when no stage from `at` on has it. User `i` is the run's
    /// user `index + i × workers` (users are dealt to workers in turn), and a stage of
    /// N users has users 0 to N − 1.
    fn staged(&self, i: usize, at: Duration) -> Option<Duration> {
        let stages = &self.p.stages;
        if stages.is_empty() {
            return Some(at);
        }
        let number = self.core.index + i * self.core.sh.workers;
        let mut start = Duration::ZERO;
        for &(users, end) in stages {
            if at < end && number < users {
                return Some(at.max(start));
            }
            start = end;
        }
        None
    }

    /// Records what user `i` reported (its answered step's outcome is recorded by the
    /// caller), then does what it asks next.
    fn after(&mut self, i: usize, next: Next, now: Instant) {
        // The buffer is put back after, so no answer allocates.
        let mut events = std::mem::take(&mut self.events);
        for e in events.drain(..) {
            match e {
                Event::Step { journey, step, .. } => {
                    self.core.rec.unsent_step(self.first_step[journey] + step)
                }
                Event::Journey {
                    journey,
                    failure,
                    started,
                    ended,
                    ..
                } => {
                    let how = failure.map_or(shootout_model::Ended::Ok, |f| f.ended());
                    self.core
                        .rec
                        .journey_ended(journey, how, ended.saturating_sub(started));
                    if std::mem::replace(&mut self.conns[i].active, false) {
                        self.active -= 1;
                    }
                    // `-v 2` follows one journey.
                    self.trace &= i != 0;
                }
            }
        }
        self.events = events;
        self.conns[i].gen = self.conns[i].gen.wrapping_add(1);
        match next {
            Next::Send { due } => {
                let at = self.core.start + due;
                if at <= now {
                    self.send(i, at, now);
                } else {
                    self.later(i, at, Due::Step);
                }
            }
            Next::Start { due } => {
                let at = self.core.start + due;
                if at <= now {
                    self.begin_journey(i, at, now);
                } else {
                    self.later(i, at, Due::Journey);
                }
            }
            Next::Done => self.done(i),
        }
    }

    /// User `i` has no journey left (closed model), or its one journey ended (open
    /// model: the slot is free for the next user).
    fn done(&mut self, i: usize) {
        if std::mem::replace(&mut self.conns[i].active, false) {
            self.active -= 1;
        }
        self.close(i);
        if self.core.paced() {
            self.conns[i].user = None;
            self.core.spare.push(i);
        }
    }

    /// User `i`'s request, due at `due`, goes out (on its connection, opened first if
    /// need be).
    fn send(&mut self, i: usize, due: Instant, now: Instant) {
        let (phase, reopen_at) = (self.conns[i].phase(), self.conns[i].life.reopen_at);
        let c = &mut self.conns[i].c;
        let Some(user) = c.user.as_ref() else { return };
        let Some((journey, step)) = user.pending() else {
            return;
        };
        let method = self.p.file.journeys[journey].steps[step].method.as_str();
        let kind = self.first_step[journey] + step;
        let idempotent = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(&method);
        let mut s = Slot::new(due, now, kind, method == "HEAD", idempotent);
        if phase == Phase::Idle {
            s.rested = now.saturating_duration_since(c.idle_at);
        }
        s.waited = phase != Phase::Idle;
        // The schedule's send is a journey's start (see `begin`), never a step's.
        s.scheduled = true;
        c.h1.push(s);
        c.h1.parser.keep(user.prefix(), user.needle());
        self.core.in_flight += 1;
        match phase {
            Phase::Closed if now >= reopen_at => self.open(i, now),
            Phase::Closed => self.later(i, reopen_at, Due::Open),
            Phase::Connecting => {}
            _ => self.flush(i, now),
        }
    }

    /// The connection broke with `kind`: its request fails, and the user goes on.
    fn broke(&mut self, i: usize, now: Instant, kind: FailureKind) {
        self.close(i);
        self.fail_step(i, now, kind);
    }

    /// User `i`'s request in flight (if any) fails with `kind`.
    fn fail_step(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let Some(s) = self.conns[i].h1.pop_front() else {
            return;
        };
        self.core.rec.failed(&s.timing(now), kind);
        self.core.in_flight -= 1;
        let at = self.since(now);
        let c = &mut self.conns[i];
        let Some(user) = c.user.as_mut() else { return };
        let events = &mut self.events;
        let next = user.fail(kind, at, &mut |e| events.push(e));
        // The failed step itself is recorded above, as a request.
        outcome(&mut self.events);
        self.after(i, next, now);
    }

    fn ready(&mut self, i: usize, readable: bool, writable: bool, closed: bool) {
        let Some(c) = self.conns.get(i) else { return };
        match c.phase() {
            Phase::Closed => {}
            Phase::Connecting => {
                self.on_connecting(i);
                // Edge-triggered: bytes or a close that came with the connect have no
                // other notice.
                match self.conns[i].phase() {
                    Phase::Writing | Phase::Reading if readable => self.read(i, closed),
                    Phase::Idle if readable => self.on_idle_readable(i),
                    _ => {}
                }
            }
            Phase::Idle if readable => self.on_idle_readable(i),
            Phase::Idle => {}
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

    fn on_connecting(&mut self, i: usize) {
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
        if self.conns[i].h1.busy() {
            self.flush(i, now);
        }
    }

    /// A connection whose user thinks became readable: the server closed it (its
    /// keep-alive timeout) or sent bytes nobody asked for. Either way it is closed; the
    /// user's next step opens another.
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
            }
            _ => {}
        }
        self.close(i);
    }

    fn flush(&mut self, i: usize, now: Instant) {
        let Entry { io, c, .. } = &mut self.conns[i];
        if io.is_none() {
            return;
        }
        let (Some(user), prelude) = (c.user.as_ref(), &self.p.prelude) else {
            return;
        };
        c.h1.render(now, |_, out| user.request().write_h1_with(prelude, out));
        if self.trace && i == 0 {
            if let Some((j, step)) = user.pending() {
                let j = &self.p.file.journeys[j];
                self.core.rec.heads.journey.push(crate::heads::Exchange {
                    step: format!("{} › {}", j.name, j.steps[step].name),
                    request: crate::live::head_of(c.h1.unwritten()).to_vec(),
                    ..Default::default()
                });
                c.h1.parser.want_head();
            }
        }
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

    fn read(&mut self, i: usize, closed: bool) {
        self.conns[i].h1.peer_closed |= closed;
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
            match self.conns[i].h1.received(&self.core.buf[at..n], now) {
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
        match self.conns[i].h1.eof() {
            Received::Answered(a) => self.answered(i, now, a.answer, Then::PeerClosed),
            _ => self.lost(i, now),
        }
    }

    /// The connection broke while the request was out.
    fn lost(&mut self, i: usize, now: Instant) {
        let Entry { io, life, c, .. } = &mut self.conns[i];
        let Some(io) = io.as_ref() else { return };
        let handshaking = io.tls.as_ref().is_some_and(|t| t.is_handshaking());
        if c.h1.raced(now) {
            // The server's keep-alive timer closed the connection as the request went
            // out: it goes again, once, on a new one.
            self.close(i);
            self.core.rec.counts.reconnects += 1;
            self.core.rec.counts.retried += 1;
            return self.open(i, now);
        }
        if !c.h1.reused {
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
        let at = self.since(now);
        let c = &mut self.conns[i];
        let Some(s) = c.h1.pop_front() else { return };
        self.core.in_flight -= 1;
        self.core.served(&mut c.life);
        let c = &mut c.c;
        let Some(user) = c.user.as_mut() else { return };
        let kept = c.h1.parser.kept.as_deref();
        let (head, body) = kept.map_or((&[][..], &[][..]), |k| (&k.head[..], &k.body[..]));
        let needle = user.needle().is_some();
        let answer = Answer {
            status: a.status,
            head: &Head(head),
            body,
            body_len: a.body_len,
            contains: needle.then_some(a.matched),
        };
        let pending = user.pending();
        let events = &mut self.events;
        let next = user.answer(&answer, at, &mut |e| events.push(e));
        if self.trace && i == 0 {
            // The answer's head, and what the step captured from it.
            if let (Some(x), Some((j, step))) = (self.core.rec.heads.journey.last_mut(), pending) {
                x.answer = c.h1.parser.head.take();
                x.captured = self.p.file.journeys[j].steps[step]
                    .captures
                    .iter()
                    .filter_map(|cap| Some((cap.name.clone(), user.var(j, cap.slot)?.to_vec())))
                    .collect();
            }
        }
        let failure = outcome(&mut self.events);
        let server = &mut c.h1.parser.server;
        self.core
            .rec
            .credit_judged(&s.timing(now), a, || server.take(), failure);
        match then {
            Then::Idle => {
                self.conns.set_phase(i, Phase::Idle);
                self.conns[i].idle_at = now;
            }
            // Bytes after the answer (`Extra`) are nobody's: the connection is closed.
            Then::Close { .. } | Then::PeerClosed | Then::Extra | Then::Next => self.close(i),
        }
        self.after(i, next, now);
    }
}
