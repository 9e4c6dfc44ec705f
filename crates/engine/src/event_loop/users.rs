//! Journeys' users on the event loop, whatever the protocol: each connection carries one
//! user ([`crate::journey::User`]), which chooses its next request from its last answer,
//! waits out its think time, and keeps its cookies and captured values. The user decides
//! what and when; the protocol's [`Wire`] is the I/O — the socket, the one request in
//! flight, the answer's head and body prefix handed back — and the loop's life cycle
//! decides the rest (pacing, growth, deadlines), as for every protocol. HTTP/1.1 plugs in
//! in `h1/users.rs`, HTTP/2 in `h2/users.rs`: one table of users, not one per protocol.
//!
//! - **Closed model** (no rate): the worker's connections are its users, each running
//!   journeys back to back; the budget (`-n`) counts journeys started.
//!   With stages (`--stages`), user `n` (of the run) runs journeys in the stages that
//!   have more than `n` users: it begins its first at the start of the first such stage,
//!   and one that ends in a stage without it is its last (its connection closed) until a
//!   stage has it again.
//! - **Open model** (`--rate`): the schedule starts journeys; each is a new user (an empty
//!   cookie jar, no values), up to the connection cap at once. With
//!   [`Prepared::reuse`] it takes a connection an earlier journey's user left idle, the
//!   most recently freed first ([`Wire::reusable`] says which are), and only when none is
//!   free opens one; without, its connection is its own, opened when the journey starts
//!   and closed when it ends. The schedule's lag is that of journey starts; each step's
//!   latency counts from when it was due (its journey's start plus the think times), so a
//!   slow server never hides behind a user's waiting.
//!
//! A connection the server closes between steps (its keep-alive timeout, often shorter
//! than a user's think time, or an HTTP/2 GOAWAY) is opened again when the user's next
//! step is due, as a browser would.
//!
//! Over HTTP/2 users may share connections ([`Prepared::per_connection`], closed model):
//! the table still has a seat per user, and users `h` to `h + n − 1` (`h` a multiple of
//! `n`) ride on the connection of seat `h`, their host ([`Users::host`]), each step a
//! stream of its own on it. Only a host's seat has a socket, a phase and a token; what
//! concerns a connection (opening, a failed connect, deadlines, a break) reaches every
//! rider of its host ([`Users::riders`]); a user's step, its timers and its journey stay
//! its own.
//!
//! `-v 2` (a heads sample asked for): the first worker follows its first user through its
//! first journey, copying each request's head, each answer's head and the values the step
//! captured into the recorder's sample ([`crate::heads::Exchange`]); a test of a flag per
//! request, nothing else, once that journey ended.

use super::{parts, Core, Phase, Protocol, Table, Taken};
use crate::journey::{Answer, Event, Fields, Next, Setup, User};
use crate::recorder::{self, Timing};
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

/// What the run prepared for its users: the journeys, and the fields every request
/// carries before its step's own (`Host`, `User-Agent`, `Accept`, `-H`).
pub struct Prepared {
    /// The journeys.
    pub file: std::sync::Arc<JourneyFile>,
    /// HTTP/1.1: whole header lines, each ending in CRLF.
    pub prelude: Vec<u8>,
    /// HTTP/2: the same fields but `Host` (the `:authority`), names in lower case.
    pub fields: Vec<(String, String)>,
    /// The `Host` field's value (the cookie jar's host, HTTP/2's `:authority`).
    pub host: String,
    /// Requests go over TLS (`Secure` cookies are sent; HTTP/2's `:scheme` is https).
    pub tls: bool,
    /// Seeds the users' generators.
    pub seed: u64,
    /// Unix seconds at the run's start (cookie dates).
    pub unix_start: i64,
    /// Closed model in stages: each stage's users and when it ends (from the run's
    /// start), in order ([`stage_ends`]); empty: every user for the whole run.
    pub stages: Vec<(usize, Duration)>,
    /// HTTP/2: the users that share each connection, each step a stream (1: every user
    /// on a connection of its own).
    pub per_connection: usize,
    /// Open model: a journey's new user takes a connection an earlier one left idle, if
    /// one is free (else every journey opens its own and closes it at its end).
    pub reuse: bool,
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

/// One user and its connection `W`.
pub(crate) struct Seat<'j, W> {
    pub wire: W,
    /// `None` in the open model between two users of the slot.
    pub user: Option<User<'j>>,
    /// In a journey (started, not ended).
    active: bool,
    /// Timer entries with another generation are stale.
    gen: u32,
    /// When the connection last became idle.
    pub idle_at: Instant,
}

/// What an answer left for its user's checks and captures, borrowed from the connection.
pub(crate) struct Kept<'k> {
    /// The final answer's header fields.
    pub head: &'k dyn Fields,
    /// The body's first bytes (as many as the step's captures and checks read).
    pub body: &'k [u8],
    /// The answer's `server` field, when the recorder asked for it.
    pub server: &'k mut Option<String>,
}

/// The seats of a worker's users, over the protocol `W`.
pub(crate) type Seats<'a, W> = Table<<W as Wire<'a>>::Phase, Seat<'a, W>>;

/// What a protocol does for its users' connections: the I/O of one request at a time
/// per user. Its functions take the whole table ([`Users`]), whose shared steps they
/// call. `i` is a user's seat; the functions of a connection (opening, readiness) get
/// its host's ([`Users::host`]).
pub(crate) trait Wire<'a>: Sized + 'a {
    /// The protocol's phases of a connection.
    type Phase: Phase;
    /// Seat `i`'s state (its connection, not opened, when it is a host).
    fn new(p: &Prepared, i: usize) -> Self;
    /// Opens user `i`'s connection: its state made ready for a new socket, then dialled.
    fn open(w: &mut Users<'a, Self>, i: usize, now: Instant);
    /// Readiness of user `i`'s connection (not the think timer's).
    fn ready(w: &mut Users<'a, Self>, i: usize, readable: bool, writable: bool, closed: bool);
    /// User `i`'s request (of step `kind`; its method is [`Users::method`]), due at
    /// `due`, is queued on its connection at `now`; [`Wire::flush`] writes it once the
    /// connection is open.
    fn queue(w: &mut Users<'a, Self>, i: usize, due: Instant, now: Instant, kind: usize);
    /// Writes user `i`'s queued request (its connection is open).
    fn flush(w: &mut Users<'a, Self>, i: usize, now: Instant);
    /// Takes user `i`'s request (queued or sent): its timing, had it ended at `now`.
    fn take(w: &mut Users<'a, Self>, i: usize, now: Instant) -> Option<Timing>;
    /// When user `i`'s request in flight was written, if it was.
    fn sent(w: &Users<'a, Self>, i: usize) -> Option<Instant>;
    /// When user `i`'s request in flight (queued or sent) started, as its latency counts
    /// it (its due time), if it has one.
    fn started(w: &Users<'a, Self>, i: usize) -> Option<Instant>;
    /// A request waits on this connection.
    fn waiting(&self) -> bool;
    /// The request in flight on user `i`'s connection passed its deadline: it fails,
    /// and (by default) the connection with it.
    fn overdue(w: &mut Users<'a, Self>, i: usize, now: Instant) {
        w.broke(i, now, FailureKind::Timeout);
    }
    /// What user `i`'s last answer left for it.
    fn kept<'k>(seats: &'k mut Seats<'a, Self>, i: usize) -> Kept<'k>;
    /// `-v 2`: user `i`'s last answer's head as text.
    fn head_text(seats: &mut Seats<'a, Self>, i: usize) -> Option<Vec<u8>>;
    /// Open model: a connection in `phase`, its user gone, could carry a new user's first
    /// step at once (open, nothing in flight, not closing).
    fn reusable(phase: Self::Phase, w: &Self) -> bool;
}

/// One worker's users, over the protocol `W`.
pub(crate) struct Users<'a, W: Wire<'a>> {
    pub core: Core<'a>,
    pub p: &'a Prepared,
    pub conns: Table<W::Phase, Seat<'a, W>>,
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
    /// Users sharing HTTP/2 connections: the fewest concurrent streams a server allowed
    /// below the users per connection ([`Protocol::streams_allowed`]).
    pub limit: Option<u64>,
}

/// Builds the users around their `core`.
pub(crate) fn set_up<'a, W: Wire<'a>>(
    mut core: Core<'a>,
    p: &'a Prepared,
) -> io::Result<Users<'a, W>> {
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
    let mut w = Users {
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
        limit: None,
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

/// An answer head's fields, read from its bytes as kept (status line first, then
/// `name: value` lines): HTTP/1.1's head as it came.
pub(crate) struct Head<'b>(pub &'b [u8]);

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

impl<'a, W: Wire<'a>> Protocol<'a> for Users<'a, W> {
    parts!('a, W::Phase, Seat<'a, W>, core, conns);

    /// A slot with no user yet.
    fn new_conn(&self, now: Instant) -> Seat<'a, W> {
        Seat {
            // It is pushed next (`Protocol::add`).
            wire: W::new(self.p, self.conns.len()),
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

    /// A journey is a new user: on a connection an earlier user left idle, the most
    /// recently listed first, when connections are reused ([`Users::done`] lists them);
    /// else none has room for it, and it opens its own.
    fn with_room(&mut self) -> Option<usize> {
        if !self.p.reuse {
            return None;
        }
        self.conns
            .with_room(|c| c.user.is_none() && W::reusable(c.phase(), &c.wire))
    }

    /// Drops connection `i`'s socket. Open model: a slot without a user (its journey
    /// ended, its connection was kept, and the server closed it since) is spare for the
    /// next journey that finds no idle connection.
    fn close(&mut self, i: usize) {
        self.conns.close(i);
        if self.core.paced() && self.conns[i].user.is_none() {
            self.core.spare.push(i);
        }
    }

    fn spare(&self, i: usize) -> bool {
        self.conns.closed(i) && self.conns[i].user.is_none()
    }

    /// Open model: the journey due at `due` starts now as a new user on connection `i`
    /// (opening, or idle after an earlier user's journey): the schedule's send is the
    /// journey's start. Its first request goes out when the connection is up, its latency
    /// counted from `due`, connecting included, as a new visitor's first page is.
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
        W::ready(self, i, readable, writable, closed);
        std::mem::take(&mut self.core.unfinished)
    }

    fn on_panic(&mut self, i: usize, now: Instant) {
        if i < self.conns.len() {
            self.broke(i, now, FailureKind::GeneratorFault);
        }
    }

    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        for u in self.riders(i) {
            self.fail_step(u, now, kind);
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        W::open(self, i, now);
    }

    /// The requests on host `i`'s connection past their deadline fail (see
    /// [`Wire::overdue`]).
    fn deadlines(&mut self, i: usize, now: Instant) {
        let timeout = self.core.sh.timeout;
        for u in self.riders(i) {
            if W::sent(self, u).is_some_and(|s| now.saturating_duration_since(s) >= timeout) {
                W::overdue(self, u, now);
            }
        }
    }

    /// The connection could not be opened: the requests waiting on it fail, and its
    /// next opening waits a pause that doubles with each failure (see
    /// [`crate::event_loop::Life::pause`]), so a server that is down or turns
    /// connections away is not hammered in a tight loop.
    fn connect_failed(&mut self, i: usize, now: Instant) {
        self.close(i);
        self.core.rec.counts.connections_failed += 1;
        self.conns[i].life.pause(now);
        for u in self.riders(i) {
            self.fail_step(u, now, FailureKind::Connect);
        }
    }

    /// Each user's request in flight (a user thinking has none).
    fn each_in_flight(&self, each: &mut dyn FnMut(Instant)) {
        for i in 0..self.conns.len() {
            if let Some(start) = W::started(self, i) {
                each(start);
            }
        }
    }

    /// Users thinking are under way too: the run waits for their journeys.
    fn idle(&self) -> bool {
        self.active == 0
    }

    fn next_wake(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse(t)| t.0)
    }

    fn streams_allowed(&self) -> Option<u64> {
        self.limit
    }

    fn wake(&mut self, now: Instant) {
        while let Some(&Reverse((at, i, gen, due))) = self.timers.peek() {
            if at > now {
                self.think.arm(at);
                break;
            }
            self.timers.pop();
            if self.conns[i].gen == gen {
                self.fire(i, at, now, due);
            }
        }
    }
}

impl<'a, W: Wire<'a>> Users<'a, W> {
    /// The seat whose connection user `i` rides on: the first of its group of
    /// [`Prepared::per_connection`] (its own seat when every user has a connection).
    pub(crate) fn host(&self, i: usize) -> usize {
        match self.p.per_connection {
            0 | 1 => i,
            n => i - i % n,
        }
    }

    /// The users riding on host `h`'s connection (`h` alone when every user has one).
    pub(crate) fn riders(&self, h: usize) -> std::ops::Range<usize> {
        h..(h + self.p.per_connection.max(1)).min(self.conns.len())
    }

    /// User `i` holds its connection no longer (its journeys are over, or its stage
    /// dropped it): the connection is closed, unless a user sharing it is in a journey.
    fn leave(&mut self, i: usize) {
        let h = self.host(i);
        if self.riders(h).all(|u| !self.conns[u].active) {
            self.close(h);
        }
    }

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
                    self.leave(i);
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
    pub(crate) fn after(&mut self, i: usize, next: Next, now: Instant) {
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
                    thought,
                    ..
                } => {
                    let how = failure.map_or(shootout_model::Ended::Ok, |f| f.ended());
                    let took = ended.saturating_sub(started);
                    self.core
                        .rec
                        .journey_ended(journey, how, took, took.saturating_sub(thought));
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
        let (due, what) = match next {
            Next::Send { due } => (due, Due::Step),
            Next::Start { due } => (due, Due::Journey),
            Next::Done => return self.done(i),
        };
        let at = self.core.start + due;
        if at <= now {
            self.fire(i, at, now, what);
        } else {
            self.later(i, at, what);
        }
    }

    /// Does `what`, due at `at`, for user `i`.
    fn fire(&mut self, i: usize, at: Instant, now: Instant, what: Due) {
        match what {
            Due::Step => self.send(i, at, now),
            Due::Journey => self.begin_journey(i, at, now),
            Due::Open => {
                let h = self.host(i);
                if self.conns.closed(h) && self.conns[i].wire.waiting() {
                    self.open(h, now);
                }
            }
        }
    }

    /// User `i` has no journey left (closed model), or its one journey ended (open
    /// model: the slot is free for the next user, its connection kept for it when
    /// connections are reused and it is idle, else closed).
    fn done(&mut self, i: usize) {
        if std::mem::replace(&mut self.conns[i].active, false) {
            self.active -= 1;
        }
        if !self.core.paced() {
            return self.leave(i);
        }
        self.conns[i].user = None;
        let c = &self.conns[i];
        if self.p.reuse && W::reusable(c.phase(), &c.wire) {
            self.conns.list(i);
        } else {
            self.leave(i);
            self.core.spare.push(i);
        }
    }

    /// User `i`'s request, due at `due`, goes out (on its connection, opened first if
    /// need be).
    fn send(&mut self, i: usize, due: Instant, now: Instant) {
        let Some((journey, step)) = self.conns[i].user.as_ref().and_then(|u| u.pending()) else {
            return;
        };
        let h = self.host(i);
        let (phase, reopen_at) = (self.conns[h].phase(), self.conns[h].life.reopen_at);
        W::queue(self, i, due, now, self.first_step[journey] + step);
        self.core.in_flight += 1;
        if phase == W::Phase::CLOSED {
            if now >= reopen_at {
                self.open(h, now);
            } else {
                self.later(i, reopen_at, Due::Open);
            }
        } else if !phase.opening() {
            W::flush(self, i, now);
        }
    }

    /// The method of user `i`'s pending step.
    pub(crate) fn method(&self, i: usize) -> &'a str {
        let p: &'a Prepared = self.p;
        match self.conns[i].user.as_ref().and_then(|u| u.pending()) {
            Some((j, step)) => p.file.journeys[j].steps[step].method.as_str(),
            None => "GET",
        }
    }

    /// `-v 2`: user `i`'s request is followed (the first user's first journey).
    pub(crate) fn tracing(&self, i: usize) -> bool {
        self.trace && i == 0
    }

    /// `-v 2`: user `i`'s request, its head as `request`, goes into the heads sample
    /// under its step's name.
    pub(crate) fn traced(&mut self, i: usize, request: Vec<u8>) {
        let Some((j, step)) = self.conns[i].user.as_ref().and_then(|u| u.pending()) else {
            return;
        };
        let j = &self.p.file.journeys[j];
        self.core.rec.heads.journey.push(crate::heads::Exchange {
            step: format!("{} › {}", j.name, j.steps[step].name),
            request,
            ..Default::default()
        });
    }

    /// User `i`'s connection broke with `kind`: it is closed, the requests of every user
    /// riding on it fail, and the users go on.
    pub(crate) fn broke(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let h = self.host(i);
        self.close(h);
        for u in self.riders(h) {
            self.fail_step(u, now, kind);
        }
    }

    /// User `i`'s request in flight (if any) fails with `kind`.
    pub(crate) fn fail_step(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let Some(t) = W::take(self, i, now) else {
            return;
        };
        self.core.rec.failed(&t, kind);
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

    /// The answer `a` to user `i`'s request (taken: its timing `t`) is whole: recorded as
    /// the user judges it. The caller settles the connection, then hands the user's next
    /// move to [`Users::after`].
    pub(crate) fn judged(
        &mut self,
        i: usize,
        now: Instant,
        t: &Timing,
        a: recorder::Answer,
    ) -> Next {
        let at = self.since(now);
        self.core.in_flight -= 1;
        let h = self.host(i);
        self.core.served(&mut self.conns[h].life);
        // Out of its seat while it reads what its answer left (on its host's, perhaps).
        let Some(mut user) = self.conns[i].user.take() else {
            return Next::Done;
        };
        let needle = user.needle().is_some();
        let pending = user.pending();
        let events = &mut self.events;
        let next = {
            let k = W::kept(&mut self.conns, i);
            let answer = Answer {
                status: a.status,
                head: k.head,
                body: k.body,
                body_len: a.body_len,
                contains: needle.then_some(a.matched),
            };
            user.answer(&answer, at, &mut |e| events.push(e))
        };
        if self.trace && i == 0 {
            // The answer's head, and what the step captured from it.
            if let (Some(x), Some((j, step))) = (self.core.rec.heads.journey.last_mut(), pending) {
                x.answer = W::head_text(&mut self.conns, i);
                x.captured = self.p.file.journeys[j].steps[step]
                    .captures
                    .iter()
                    .filter_map(|cap| Some((cap.name.clone(), user.var(j, cap.slot)?.to_vec())))
                    .collect();
            }
        }
        self.conns[i].user = Some(user);
        let failure = outcome(&mut self.events);
        let server = W::kept(&mut self.conns, i).server;
        self.core.rec.credit_judged(t, a, || server.take(), failure);
        next
    }
}
