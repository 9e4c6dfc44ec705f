//! The one event loop every protocol runs on: a worker thread's life (pinning, the barrier
//! where the run's clock starts, its CPU time), the loop itself (mio, epoll edge-triggered:
//! ticks, deadlines, the pacer's timer, busy polling, a read budget per event), and the
//! a connection's life every protocol shares: its [`Table`] of connections (phase counts,
//! the list of those with room), their [`Life`] (connect timing, backoff, re-opening), and
//! growing, re-opening, failing a connect and sweeping deadlines (the provided methods of
//! [`Protocol`]). A protocol plugs in through [`Protocol`]: it says what opening or closing
//! a socket, an event, a due request or a passed deadline does to its connection; everything
//! else is decided here, once.
//!
//! Per request the hot path is one `write`, one `read` (a short read proves the socket
//! drained, so no second read waits for `EAGAIN`) and a share of one `epoll_wait`; no
//! allocation, no lock, no shared atomic. Deadlines are checked by a sweep every tick (a
//! tenth of the shortest timeout, between 1 and 100 ms), which also publishes the worker's
//! live counters for progress displays.

mod left;
mod life;
pub mod pacer;
mod protocol;
mod schedule;
mod spare;
mod staged;
mod table;
mod turns;
pub(crate) mod users;

pub(crate) use life::Life;
pub(crate) use protocol::{parts, Protocol, Reads, Taken};
pub use schedule::Schedule;
pub(crate) use spare::Spare;
pub(crate) use staged::Staged;
pub(crate) use table::{Entry, Phase, Stage, Table};
pub use turns::Turns;

use crate::exchange::{Exchange, Resend};
use crate::recorder::Recorder;
use crate::sys;
use crate::transport::{Endpoint, TlsTarget, Transport};
use crate::Live;
use mio::{Events, Interest, Poll, Token};
use pacer::{Pacer, Pacing, RateStages};
use shootout_model::{Expectation, FailureKind, Record};
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What every worker of a run shares (read only).
pub struct Shared<'a> {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// TLS client config and server name for https.
    pub tls: Option<TlsTarget>,
    /// Requests in flight per connection, at most.
    pub pipeline: usize,
    /// HTTP/2 and HTTP/3: requests at once per connection, as streams.
    pub streams: usize,
    /// Worker threads of the run (`{seq}` values are unique across them).
    pub workers: usize,
    /// Keep connections open between requests.
    pub keepalive: bool,
    /// What a good answer is.
    pub expect: Expectation,
    /// Per-request deadline, from send.
    pub timeout: Duration,
    /// Connect deadline.
    pub connect_timeout: Duration,
    /// Samples to keep.
    pub record: Record,
    /// How long the run lasts, if bounded by time.
    pub duration: Option<Duration>,
    /// Wall-clock time the run's clock starts, when it was given (shards starting together).
    pub start_at: Option<std::time::SystemTime>,
    /// Workers meet here when set up (and, in rate mode, connected); the run's clock
    /// starts when all have arrived, so set-up is never counted as lateness.
    pub barrier: std::sync::Barrier,
    /// When the run started: set by the last worker to reach the barrier.
    pub started: &'a std::sync::OnceLock<Instant>,
    /// Set by the caller to end a timed run now, as if its time were up (`--until`):
    /// read at each tick.
    pub finish: &'a AtomicBool,
    /// Local addresses to connect from (see [`Shared::bind_for`]); empty: the kernel's.
    pub bind: Vec<std::net::IpAddr>,
    /// Answer heads to keep as a sample ([`crate::Heads`]); 0: none.
    pub heads: usize,
    /// Longest busy poll before sleeping (`LoadSpec::busy_poll`); zero: none.
    pub busy_poll: Duration,
    /// HTTP/3 may use UDP segmentation offload ([`crate::Control::udp_offload`]).
    pub udp_offload: bool,
    /// Rate mode: the order the workers open their connections opened ahead of need in.
    pub turns: Turns,
    /// Rate mode in stages: each stage's rate (requests a second, the run's) and length,
    /// in order (see [`RateStages`]); empty: the one rate of the worker's [`Assignment`].
    pub rate_stages: Vec<(f64, Duration)>,
}

impl Shared<'_> {
    /// The local address connection `i` of worker `worker` connects from: the run's list
    /// round robin over all its connections (worker `w` of `T` holds connections `w`,
    /// `w + T`, …), the same address each time that connection is opened again.
    pub fn bind_for(&self, worker: usize, i: usize) -> Option<std::net::IpAddr> {
        let n = self.bind.len();
        (n > 0).then(|| self.bind[(worker + i * self.workers) % n])
    }
}

/// One worker's share of the run.
#[derive(Debug, Clone, Copy)]
pub struct Assignment {
    /// Connections to drive.
    pub connections: usize,
    /// Requests to start, if bounded by count.
    pub budget: Option<u64>,
    /// Requests per second, in rate mode.
    pub rate: Option<f64>,
    /// Rate mode: when the worker's first request is due, from the start (the workers of
    /// a run, and the shards of a load, interleave their schedules).
    pub offset: Duration,
    /// Rate mode: even or Poisson (with the worker's own seed).
    pub arrival: shootout_model::Arrival,
    /// Rate mode: the most connections the worker may have open.
    pub max_connections: usize,
    /// Pin the thread to this CPU.
    pub cpu: Option<usize>,
    /// Worker number (seeds the reservoir's generator).
    pub index: usize,
}

/// What one worker hands back.
pub struct Output {
    /// Its recorder, finished.
    pub rec: Recorder,
    /// CPU time of the thread (user, system).
    pub cpu: (Duration, Duration),
    /// Wall time the thread ran.
    pub wall: Duration,
    /// When its last request ended, or the deadline.
    pub ended: Instant,
    /// Its schedule, in rate mode.
    pub schedule: Option<Schedule>,
    /// It stopped because the caller asked.
    pub interrupted: bool,
    /// The lowest number of concurrent requests per connection a server allowed below the
    /// number asked for (HTTP/2's `SETTINGS_MAX_CONCURRENT_STREAMS`), if any.
    pub streams_allowed: Option<u64>,
    /// The age of each request it had in flight when the run ended (µs; see
    /// [`shootout_model::RunResult::in_flight_at_end`]).
    pub in_flight: hdrhistogram::Histogram<u64>,
}

/// Rate mode: how many more connections may be opening than are open when requests wait
/// on the connections opening (see [`Protocol::grow`]).
const OPENING_AHEAD: usize = 8;

/// Requests sent later than this after their due time count as late.
pub(crate) const LATE: Duration = Duration::from_millis(1);

/// The longest pause before re-opening a connection the server keeps dropping.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Rate mode: a connection opened ahead of need that the server closes within this time
/// of its opening, before any request, was turned away at accept (counted as dropped, and
/// the schedule opens no more until the server answers); one closed later sat idle past
/// the server's keep-alive timeout.
pub(crate) const CLOSED_AT_ACCEPT: Duration = Duration::from_millis(100);

/// The token of the pacing timer (connections use their index).
pub(crate) const TIMER: Token = Token(usize::MAX);

/// The most reads one readiness event gets. A server that writes faster than the worker
/// reads would otherwise keep it in one connection's read loop, and no deadline of any
/// connection would fire meanwhile (ticks run between events). 16 reads of 64 KiB; an
/// ordinary event needs one or two.
pub(crate) const READS_PER_EVENT: usize = 16;

/// How often a worker copies its details for a watching view (its counters: every tick).
const DETAIL_EVERY: Duration = Duration::from_millis(100);

/// What the schedule allows next.
pub(crate) enum Dispatch {
    /// The next request is due at this instant.
    At(Instant),
    /// A request is due but every connection is busy: it waits for one.
    Blocked,
    /// No more requests are due.
    Finished,
}

/// What every worker holds whichever protocol it speaks: the poll, the pacing timer, the
/// read buffer, the recorder, the budget and the schedule.
pub(crate) struct Core<'a> {
    pub sh: &'a Shared<'a>,
    /// When the run started.
    pub start: Instant,
    /// When it ends, if bounded by time.
    pub end: Option<Instant>,
    pub poll: Poll,
    pub timer: sys::Timer,
    /// One read buffer for every connection of the worker.
    pub buf: Box<[u8]>,
    pub rec: Recorder,
    /// Requests to start, if bounded by count, and those started so far (closed loop).
    pub budget: Option<u64>,
    pub claimed: u64,
    /// Requests started and not ended.
    pub in_flight: usize,
    /// Requests a server left unprocessed (a GOAWAY), to send again on another connection
    /// (counted in [`Core::in_flight`]).
    pub resend: VecDeque<Resend>,
    /// Rate mode: the schedule (in stages: the one in force), and how far it was kept.
    pub pacer: Option<Pacer>,
    pub sched: Schedule,
    /// Rate mode in stages: each stage's schedule.
    pub staged: Option<RateStages>,
    /// Closed connections waiting to be opened again (see [`Life`]).
    pub deferred: Vec<usize>,
    /// Rate mode: closed connections with nothing queued, opened again only when a request
    /// finds no free connection ([`Protocol::grow`]).
    pub spare: Spare,
    /// Rate mode: the most connections the worker may have open (it opens more as the
    /// schedule needs them); a closed loop keeps the ones it was given.
    pub max_conns: usize,
    /// A connection was dropped before any answer since the last answer: the server is
    /// turning connections away, and no more are opened for the schedule until it answers.
    pub refusing: bool,
    /// Worker number (which local address each connection binds).
    pub index: usize,
    /// The worker's share of the run.
    pub share: Assignment,
    /// The last event's reads stopped at [`READS_PER_EVENT`] (taken by the protocol's
    /// [`Protocol::event`]).
    pub unfinished: bool,
}

impl<'a> Core<'a> {
    /// A worker's state for its share `a`; in rate mode the pacing timer is registered.
    pub fn new(sh: &'a Shared<'a>, a: Assignment) -> io::Result<Core<'a>> {
        let now = Instant::now();
        let staged = (!sh.rate_stages.is_empty())
            .then(|| RateStages::new(&sh.rate_stages, sh.workers, a.index, a.arrival));
        let core = Core {
            sh,
            start: now,
            end: None,
            poll: Poll::new()?,
            timer: sys::Timer::new()?,
            buf: vec![0u8; 64 * 1024].into_boxed_slice(),
            rec: Recorder::new(
                now,
                sh.record.reservoir,
                sh.record.all,
                0x9E37_79B9 ^ a.index as u64,
            ),
            budget: a.budget,
            claimed: 0,
            in_flight: 0,
            resend: VecDeque::new(),
            pacer: staged.as_ref().and_then(RateStages::current).or_else(|| {
                a.rate.map(|rate| Pacer {
                    rate,
                    budget: a.budget,
                    duration: sh.duration,
                    offset: a.offset,
                    arrival: a.arrival,
                    memo: None,
                    first: 0,
                })
            }),
            sched: Schedule::default(),
            staged,
            deferred: Vec::new(),
            spare: Spare::default(),
            max_conns: a.max_connections.max(a.connections),
            refusing: false,
            index: a.index,
            share: a,
            unfinished: false,
        };
        if core.pacer.is_some() {
            let fd = core.timer.fd();
            core.poll.registry().register(
                &mut mio::unix::SourceFd(&fd),
                TIMER,
                Interest::READABLE,
            )?;
        }
        Ok(core)
    }

    /// Rate mode (else a closed loop).
    pub fn paced(&self) -> bool {
        self.pacer.is_some()
    }

    /// Rate mode, a request due and no connection with room: whether one more may open
    /// (`open` are open now; `again`: it is one closed before, whose pause, if any, is
    /// over). Not while a connection waits out its pause, nor while the server turns
    /// connections away (see [`Core::refusing`]) unless it is one opened again (the next
    /// try), nor past the cap; either way the request waits for a connection, and the
    /// schedule says so.
    pub fn may_grow(&mut self, open: usize, again: bool) -> bool {
        if (self.refusing && !again) || !self.deferred.is_empty() {
            // The server turns connections away: more would only be turned away too.
            self.sched.waiting();
            return false;
        }
        if open < self.max_conns {
            self.sched.peak_connections = self.sched.peak_connections.max(open + 1);
            return true;
        }
        self.sched.capped();
        false
    }

    /// Rate mode in stages: the stage in force has no request left before its end, so
    /// the next one's schedule takes over from the requests sent so far; `None` after the
    /// last stage (or without stages).
    pub fn next_stage(&mut self) -> Option<Pacer> {
        let next = self.staged.as_mut()?.next_stage(self.sched.sent)?;
        self.pacer = Some(next);
        Some(next)
    }

    /// Closed loop: the time or the budget is spent, so no request starts any more.
    pub fn spent(&self, now: Instant) -> bool {
        self.end.is_some_and(|e| now >= e) || self.budget.is_some_and(|b| self.claimed >= b)
    }

    /// Takes one request from the budget, unless the budget or the time is spent.
    pub fn claim(&mut self, now: Instant) -> bool {
        if self.spent(now) {
            return false;
        }
        self.claimed += 1;
        true
    }

    /// A request ended at `end` with its whole answer: credited (the expectations judge
    /// it) and no longer in flight. `server` gives the answer's `server` field, asked only
    /// for the worker's first answer.
    #[inline]
    pub fn credit(&mut self, ex: &Exchange, end: Instant, server: impl FnOnce() -> Option<String>) {
        self.rec
            .credit(&ex.timing(end), ex.answer(), server, &self.sh.expect);
        self.in_flight -= 1;
    }

    /// A request ended at `end` without a good answer, as `kind`: recorded as failed and no
    /// longer in flight.
    #[inline]
    pub fn fail(&mut self, ex: &Exchange, end: Instant, kind: FailureKind) {
        self.rec.failed(&ex.timing(end), kind);
        self.in_flight -= 1;
    }

    /// A request the server did not process (it was above a GOAWAY's last stream, or
    /// refused with REFUSED_STREAM): sent again and counted as retried, each time it comes back so,
    /// while its deadline has not passed, up to [`crate::exchange::MAX_RESENDS`] times
    /// ([`Exchange::may_resend`]); after that it fails as refused, and the answer is true.
    /// The caller frees its slot.
    pub fn unprocessed(&mut self, ex: &Exchange, now: Instant) -> bool {
        if ex.may_resend(now, self.sh.timeout) {
            // Oldest first, so that the requests sent again most often go out first and
            // each waits for a few connections at most (a server that answers the first
            // streams of each connection answers them).
            let r = ex.resend();
            let at = self.resend.partition_point(|q| q.start <= r.start);
            self.resend.insert(at, r);
            self.rec.counts.retried += 1;
            false
        } else {
            self.fail(ex, now, FailureKind::Refused);
            true
        }
    }

    /// Starts connecting connection `i` (from its local address), registered under its
    /// index, with a TLS session when the target is https.
    pub fn dial(&self, i: usize) -> io::Result<Transport> {
        let from = self.sh.bind_for(self.index, i);
        Transport::connect(
            &self.sh.endpoint,
            self.sh.tls.as_ref(),
            self.poll.registry(),
            Token(i),
            from,
        )
    }

    /// Connection `i` could not be set up: counted, and retried at the next tick so that
    /// a dead server is not hammered in a tight loop.
    pub fn connect_failed(&mut self, i: usize, life: &mut Life, now: Instant) {
        self.rec.counts.connections_failed += 1;
        life.reopen_at = now;
        self.deferred.push(i);
    }

    /// Connection `i` closed and is opened again after a pause that doubles each time
    /// (see [`Life::pause`]).
    pub fn pause(&mut self, i: usize, life: &mut Life, now: Instant) {
        life.pause(now);
        self.refusing = true;
        self.deferred.push(i);
    }

    /// A connection was served (an answer, or over HTTP/2 the server's SETTINGS): its next
    /// drop pauses from scratch, and the schedule may open connections again.
    pub fn served(&mut self, life: &mut Life) {
        life.answered();
        self.refusing = false;
    }

    /// The deferred connections whose pause is over; `closed(i)` says whether `i` is still
    /// closed and when it may open (an entry opened since is dropped).
    pub fn reopen_due(
        &mut self,
        now: Instant,
        closed: impl Fn(usize) -> Option<Instant>,
    ) -> Vec<usize> {
        let mut due = Vec::new();
        for i in std::mem::take(&mut self.deferred) {
            match closed(i) {
                None => {}
                Some(at) if now < at => self.deferred.push(i),
                Some(_) => due.push(i),
            }
        }
        due
    }
}

/// Runs a worker thread's life around its event loop: pinning, the barrier where the run's
/// clock starts, the loop, the thread's CPU time, and its output. `set_up` builds the
/// protocol's worker around its [`Core`] (which holds its share `a`); in rate mode its connections are
/// opened here, before the barrier, so the schedule starts with connections ready.
pub(crate) fn host<'a, P: Protocol<'a>>(
    sh: &'a Shared<'a>,
    a: Assignment,
    stop: &AtomicBool,
    live: &Live,
    set_up: impl FnOnce(Core<'a>) -> io::Result<P>,
) -> io::Result<Output> {
    if let Some(cpu) = a.cpu {
        // Pinning is best effort: a CPU outside the allowed set is reported by the caller.
        let _ = sys::pin_thread(cpu);
    }
    let began = Instant::now();
    let cpu0 = sys::thread_cpu();
    let w = Core::new(sh, a).and_then(set_up).and_then(|mut w| {
        if w.core_ref().paced() {
            w.connect_all()?;
        }
        Ok(w)
    });
    // Every worker reaches the barrier, even one whose set-up failed, or the others wait forever.
    if sh.barrier.wait().is_leader() {
        if let Some(at) = sh.start_at {
            wait_until(at, stop);
        }
        let _ = sh.started.set(Instant::now());
    }
    sh.barrier.wait();
    let mut w = w?;
    let start = *sh.started.get().expect("set by the barrier's leader");
    let core = w.core();
    core.start = start;
    core.end = sh.duration.map(|d| start + d);
    core.rec.restart(start);
    let interrupted = drive(&mut w, stop, live)?;
    // The run ends here: what winding down takes (closes, lingering) is not its time.
    let ended = match w.core_ref().end {
        Some(end) if !interrupted => Instant::now().min(end),
        _ => Instant::now(),
    };
    // What is still in flight, aged at the run's end (before winding down closes it).
    let in_flight = left::ages(&w, ended);
    // Connections asked for that never carried anything; one the server closed after
    // its answer and that is opening again at the end carried its share.
    let opening = w.never_open() as u64;
    w.wind_down(stop);
    let streams_allowed = w.streams_allowed();
    let mut core = w.into_core();
    // Requests still in flight when the run ends are aborted.
    core.rec.counts.aborted += core.in_flight as u64;
    core.rec.counts.connections_opening += opening;
    // The last publication waits for the slot: a view's last look sees the final counts.
    live.publish(&core.rec, true, true);
    core.rec.finish();
    let cpu1 = sys::thread_cpu();
    let elapsed = ended.saturating_duration_since(start);
    // In stages: the due requests of every stage (the arrival check is of one rate's).
    let staged = core.staged.as_ref().map(|s| s.due_by(elapsed));
    let schedule = core.pacer.map(|p| Schedule {
        due: staged.unwrap_or_else(|| p.due_by(elapsed)),
        gaps: match staged {
            Some(_) => Vec::new(),
            None => core.sched.kept_gaps(&p),
        },
        peak_connections: core.sched.peak_connections.max(a.connections),
        ..core.sched
    });
    Ok(Output {
        rec: core.rec,
        cpu: (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1)),
        wall: began.elapsed(),
        ended,
        schedule,
        interrupted,
        streams_allowed,
        in_flight,
    })
}

/// Sleeps until the wall clock reaches `at` (at once when it is past), waking at least
/// every 100 ms to see whether `stop` was set. The caller bounds how far ahead `at` is.
pub fn wait_until(at: std::time::SystemTime, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match at.duration_since(std::time::SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(100))),
            _ => return,
        }
    }
}

/// Runs a worker until its share is done, the deadline passes or `stop` is set (returns
/// true then). Ticks at a tenth of the shorter deadline or [`Protocol::ticks_for`]
/// (1–100 ms), publishes progress at
/// each tick, and in rate mode arms the timer for the next due request.
fn drive<'a, P: Protocol<'a>>(p: &mut P, stop: &AtomicBool, live: &Live) -> io::Result<bool> {
    let now = Instant::now();
    if !p.core_ref().paced() {
        p.start(now);
    }
    let sh = p.core_ref().sh;
    let shortest = sh.timeout.min(sh.connect_timeout);
    let tick = (p.ticks_for().map_or(shortest, |t| t.min(shortest)) / 10)
        .clamp(Duration::from_millis(1), Duration::from_millis(100));
    let mut spin = Spin::new(sh.busy_poll, now);
    let naps = !sh.busy_poll.is_zero() && !p.core_ref().paced();
    if naps {
        sys::exact_timers();
    }
    let mut wake = Wake::new(now);
    let mut next_tick = now + tick;
    // A watching view's details (histogram, status codes) are copied at most this often.
    let mut next_detail = now;
    if live.watched() {
        p.core().rec.watch();
    }
    let mut events = Events::with_capacity(1024);
    // Connections whose reads stopped at the budget, read again at every turn.
    let mut again = Vec::new();
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let end = p.core_ref().end;
        if end.is_some_and(|e| now >= e) {
            return Ok(false);
        }
        if now >= next_tick {
            if !on_tick(p, now, live, &mut next_detail) {
                return Ok(false);
            }
            spin.window(std::mem::replace(&mut p.core().rec.least_us, u64::MAX));
            next_tick = now + tick;
        }
        if p.next_wake().is_some_and(|w| now >= w) {
            p.wake(now);
        }
        let mut wait = (next_tick - now).min(end.map_or(Duration::MAX, |e| e - now));
        if let Some(w) = p.next_wake() {
            wait = wait.min(w.saturating_duration_since(now));
        }
        let turn = turn(p, &wake, now);
        if turn == Turn::Done {
            return Ok(false);
        }
        if !again.is_empty() {
            resume(p, &mut again);
            wait = Duration::ZERO;
        }
        if let Turn::SpinUntil(due) = turn.clone() {
            if wait > Duration::ZERO {
                // Rate mode: a request due within the wake-up margin is waited for
                // without sleeping.
                let spent = poll_until(&mut p.core().poll, &mut events, due.min(now + wait))?;
                let core = p.core();
                core.rec.spun += spent;
                core.sched.spun += spent;
                deliver(p, &events, &mut again, Some(&mut wake));
                continue;
            }
        }
        let core = p.core();
        wait_for_events(
            &mut core.poll,
            &mut core.rec,
            &mut spin,
            naps,
            wait,
            now,
            &mut events,
        )?;
        deliver(p, &events, &mut again, Some(&mut wake));
    }
}

/// A tick of the worker's loop: publishes progress (a watching view's details at most
/// every [`DETAIL_EVERY`]) and lets the protocol do its timed work; false when the caller
/// has ended the run (what is in flight is then aborted, as when its time is up).
fn on_tick<'a, P: Protocol<'a>>(
    p: &mut P,
    now: Instant,
    live: &Live,
    next_detail: &mut Instant,
) -> bool {
    if p.core_ref().sh.finish.load(Ordering::Relaxed) {
        p.core().end = Some(now);
        return false;
    }
    p.tick(now);
    let detail = now >= *next_detail;
    live.publish(&p.core_ref().rec, detail, false);
    if detail {
        *next_detail = now + DETAIL_EVERY;
    }
    true
}

/// What the worker does before it waits for events.
#[derive(Debug, Clone, PartialEq)]
enum Turn {
    /// Sleep until an event, the next tick or the pacing timer (armed).
    Sleep,
    /// Rate mode: the next request is due within the wake-up margin, at this instant:
    /// wait for it without sleeping.
    SpinUntil(Instant),
    /// The share is done.
    Done,
}

/// Sends what is due (rate mode) and says how to wait for what comes next.
fn turn<'a, P: Protocol<'a>>(p: &mut P, wake: &Wake, now: Instant) -> Turn {
    if !p.core_ref().paced() {
        return if p.closed_done(now) {
            Turn::Done
        } else {
            Turn::Sleep
        };
    }
    let dispatched = pace(p, now);
    // Poisson due times are walked from the last one sent (see `Pacer::advance`).
    let c = p.core();
    if let Some(pacer) = c.pacer.as_mut() {
        pacer.advance(c.sched.sent);
    }
    match dispatched {
        Dispatch::At(due) => {
            let early = wake.early(p.core_ref().sched.spun, now);
            if due.saturating_duration_since(now) <= early {
                Turn::SpinUntil(due)
            } else {
                p.core().timer.arm(due - early);
                Turn::Sleep
            }
        }
        // Done when nothing is in flight, unless the run is bounded by time: then it
        // lasts its whole duration, so rates are per the time asked for.
        Dispatch::Finished if p.idle() && paced_done(p.core_ref()) => Turn::Done,
        Dispatch::Finished => Turn::Sleep,
        Dispatch::Blocked => {
            // Sends that go out late from here on waited for a connection.
            p.core().sched.waiting();
            Turn::Sleep
        }
    }
}

/// Rate mode: sends every request that is due to a connection with room, in schedule
/// order, after those put back. This is where a send's lag is taken, the same way for
/// every protocol: from its due time to the moment it is handed to a connection able to
/// carry it (one still opening counts it when its bytes go out). Past [`LATE`] it is
/// late, and it waited for a connection if a request fell due with no connection free
/// since the schedule was last kept ([`Schedule::waiting`], set when this returns
/// [`Dispatch::Blocked`]).
fn pace<'a, P: Protocol<'a>>(p: &mut P, now: Instant) -> Dispatch {
    let Some(mut pacer) = p.core_ref().pacer else {
        return Dispatch::Finished;
    };
    if !p.resend(now) {
        return Dispatch::Blocked;
    }
    loop {
        let core = p.core_ref();
        match pacer.next(now.saturating_duration_since(core.start), core.sched.sent) {
            // A stage ran out of requests: the next one's schedule goes on from here.
            Pacing::Stop => match p.core().next_stage() {
                Some(next) => pacer = next,
                None => return Dispatch::Finished,
            },
            Pacing::Wait(w) => {
                p.core().sched.caught_up();
                return Dispatch::At(now + w);
            }
            Pacing::Due { late } => {
                // No connection with room: the request waits, and its latency with it.
                let Some(i) = p.room(now) else {
                    return Dispatch::Blocked;
                };
                let due = p.core_ref().start + pacer.due(p.core_ref().sched.sent);
                match p.begin(i, due, now) {
                    Taken::Sent => p.core().sched.sent_now(late),
                    Taken::Queued => p.core().sched.sent += 1,
                    Taken::Refused => {}
                }
            }
        }
    }
}

/// Waits up to `wait` for events, into `events` (empty when none came): a nap or a spin
/// first where `spin` says so (see [`Spin`]), else a sleeping poll.
fn wait_for_events(
    poll: &mut Poll,
    rec: &mut Recorder,
    spin: &mut Spin,
    naps: bool,
    wait: Duration,
    now: Instant,
    events: &mut Events,
) -> io::Result<()> {
    // A closed loop whose answers take long naps instead of spinning.
    let nap = if naps && wait > Duration::ZERO {
        spin.nap(rec.least_us)
    } else {
        None
    };
    if let Some(nap) = nap {
        look(poll, events)?;
        if !events.is_empty() {
            spin.found();
            return Ok(());
        }
        if spin.may_nap() {
            let nap = nap.min(wait);
            let t0 = Instant::now();
            std::thread::sleep(nap);
            spin.napped(nap, t0.elapsed());
            return Ok(());
        }
        // The last nap found nothing: sleep until something comes.
        spin.dry();
    }
    if wait > Duration::ZERO && spin.now(now) {
        let until = Instant::now() + spin.max.min(wait);
        let spent = poll_until(poll, events, until)?;
        // Polling, found something or not, was waiting: not part of how busy the worker
        // was.
        rec.spun += spent;
        if !events.is_empty() {
            spin.found();
            return Ok(());
        }
        spin.missed(spent);
    }
    match poll.poll(events, Some(wait)) {
        Ok(()) => {}
        // Interrupted: the caller's loop comes round again (no events were kept).
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
        Err(e) => return Err(e),
    }
    if !events.is_empty() {
        spin.found();
    }
    Ok(())
}

/// One poll without sleeping: what is ready now.
fn look(poll: &mut Poll, events: &mut Events) -> io::Result<()> {
    match poll.poll(events, Some(Duration::ZERO)) {
        Err(e) if e.kind() != io::ErrorKind::Interrupted => Err(e),
        _ => Ok(()),
    }
}

/// Polls without sleeping until an event comes or `until` passes; the CPU time polling
/// took (on a CPU shared with other threads that is less than the wall-clock time, and
/// it is what is left out of how busy the worker was).
fn poll_until(poll: &mut Poll, events: &mut Events, until: Instant) -> io::Result<Duration> {
    let began = sys::thread_cpu_now();
    loop {
        look(poll, events)?;
        if !events.is_empty() || Instant::now() >= until {
            return Ok(sys::thread_cpu_now().saturating_sub(began));
        }
        std::hint::spin_loop();
    }
}

/// How early a paced worker wakes before a request is due. A sleeping thread wakes some
/// time after its timer fires (on a virtual machine whose idle CPU halted, tens of µs or
/// more), so the timer is set `margin` before the due time and the rest is waited for
/// without sleeping. The margin follows the lateness of the worker's own wake-ups: it
/// rises at once to 1.25× a late wake-up and decays by 1/64 of the gap per wake-up, within
/// [`Wake::LEAST`] and [`Wake::MOST`]. What the waiting costs is counted as spun time,
/// and kept under a quarter of the worker's time: past that, the timer is set for the due
/// time itself.
struct Wake {
    margin: Duration,
    since: Instant,
}

impl Wake {
    const LEAST: Duration = Duration::from_micros(20);
    const MOST: Duration = Duration::from_micros(250);

    fn new(since: Instant) -> Wake {
        Wake {
            margin: Duration::from_micros(50),
            since,
        }
    }

    /// How long before a due time to set the timer, `spun` having been spent waiting so
    /// far: the margin, or nothing once the waiting took a quarter of the time.
    fn early(&self, spun: Duration, now: Instant) -> Duration {
        if spun * 4 > now.saturating_duration_since(self.since) {
            Duration::ZERO
        } else {
            self.margin
        }
    }

    /// The timer fired and the thread ran `late` after the instant it was set for.
    fn woke(&mut self, late: Duration) {
        let want = (late + late / 4).clamp(Wake::LEAST, Wake::MOST);
        self.margin = if want >= self.margin {
            want
        } else {
            self.margin - (self.margin - want) / 64
        };
    }
}

/// Rate mode, nothing under way: whether the run is done — the schedule's budget is
/// spent (a run bounded by time lasts its whole duration).
fn paced_done(c: &Core) -> bool {
    c.end.is_none() || c.budget.is_some_and(|b| c.sched.sent >= b)
}

/// How a worker with busy polling on (`LoadSpec::busy_poll`) waits without being woken
/// by the server, whose CPU a wake-up costs (on a virtual machine, the most: a halted
/// CPU is woken by an interrupt between processors).
///
/// - **Spin**: it polls before sleeping while the polls that found nothing add up to at
///   most 1/32 of the time since the run began. A loaded run, whose polls find events,
///   polls before every wait; an idle or slow one spends at most about 3 % of a CPU on it.
/// - **Nap**, in a closed loop whose answers take long: a spinning worker is busy all the
///   time, so its CPU per request is the server's time per request. Where the smallest
///   latency lately (this window's answers and the last's; windows are the loop's ticks)
///   is 1000 times what a nap lasts, the worker sleeps a thousandth of it, less what its
///   naps oversleep, then takes what came in one turn: fewer reads and writes for both
///   sides, no wake-up for the server, and no answer read later than the histograms'
///   three significant digits can show. A nap that finds nothing ends the napping until
///   an event comes (an idle worker naps once per wait, not every few µs).
struct Spin {
    /// The longest poll; zero: never, and no naps.
    max: Duration,
    since: Instant,
    wasted: Duration,
    /// The smallest latency of the last window's answers (µs; `u64::MAX`: none).
    least_before: u64,
    /// How much longer than asked naps lasted (a moving average over eight; it decays
    /// by an eighth a window without a nap, so that one long preemption does not end the
    /// naps for the rest of the run).
    over: Duration,
    /// Whether the worker napped in the current window.
    napped_now: bool,
    nap: Nap,
}

/// Where a worker's naps stand.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Nap {
    /// Nap when nothing is ready.
    Ready,
    /// It just napped: a look that finds nothing makes it dry.
    Napped,
    /// The last nap found nothing: no nap until an event comes.
    Dry,
}

impl Spin {
    /// A nap shorter than this is not worth a timer (spin instead).
    const NAP_LEAST: Duration = Duration::from_micros(5);
    /// A nap is at most this share of the smallest latency lately.
    const NAP_SHARE: u64 = 1000;

    fn new(max: Duration, since: Instant) -> Spin {
        Spin {
            max,
            since,
            wasted: Duration::ZERO,
            least_before: u64::MAX,
            // What a timed sleep oversleeps on a virtual machine with exact timers, until
            // the worker's own naps say.
            over: Duration::from_micros(20),
            napped_now: false,
            nap: Nap::Ready,
        }
    }

    /// How long to nap, the answers of this window having taken at least `least_now`
    /// µs; `None`: no nap (polling off, no answer yet, answers too quick, or dry).
    fn nap(&self, least_now: u64) -> Option<Duration> {
        let least = least_now.min(self.least_before);
        if self.max.is_zero() || least == u64::MAX || self.nap == Nap::Dry {
            return None;
        }
        let ask = Duration::from_micros(least / Self::NAP_SHARE).checked_sub(self.over)?;
        (ask >= Self::NAP_LEAST).then_some(ask)
    }

    /// Whether the worker may nap now (it did not just nap in vain).
    fn may_nap(&self) -> bool {
        self.nap == Nap::Ready
    }

    /// A nap asked for `asked` took `took`.
    fn napped(&mut self, asked: Duration, took: Duration) {
        self.over = self.over - self.over / 8 + took.saturating_sub(asked) / 8;
        self.napped_now = true;
        self.nap = Nap::Napped;
    }

    /// A look after a nap found nothing.
    fn dry(&mut self) {
        self.nap = Nap::Dry;
    }

    /// Events came: naps may begin again.
    fn found(&mut self) {
        self.nap = Nap::Ready;
    }

    /// A window ended whose answers took at least `least` µs (`u64::MAX`: none came,
    /// and the window before stands).
    fn window(&mut self, least: u64) {
        if least != u64::MAX {
            self.least_before = least;
        }
        if !std::mem::take(&mut self.napped_now) {
            self.over -= self.over / 8;
        }
    }

    /// Whether to busy poll before the wait that begins at `now`.
    fn now(&self, now: Instant) -> bool {
        !self.max.is_zero() && self.wasted * 32 <= now.saturating_duration_since(self.since)
    }

    /// A busy poll that took `spent` found nothing.
    fn missed(&mut self, spent: Duration) {
        self.wasted += spent;
    }
}

/// Hands each event of a poll to its connection (the pacing timer's is cleared, and how
/// late it woke the worker goes to `wake`, in rate mode);
/// connections whose reads stopped at the budget go to `again`.
fn deliver<'a, P: Protocol<'a>>(
    p: &mut P,
    events: &Events,
    again: &mut Vec<usize>,
    mut wake: Option<&mut Wake>,
) {
    for ev in events.iter() {
        if ev.token() == TIMER {
            // How late the wake-up came after the instant the timer was set for.
            if let (Some(armed), Some(w)) = (p.core().timer.clear(), wake.as_deref_mut()) {
                w.woke(Instant::now().saturating_duration_since(armed));
            }
            continue;
        }
        let closed = ev.is_read_closed() || ev.is_error();
        let readable = ev.is_readable() || closed;
        handle(p, ev.token().0, readable, ev.is_writable(), closed, again);
    }
}

/// Reads again the connections whose reads stopped at the budget.
fn resume<'a, P: Protocol<'a>>(p: &mut P, again: &mut Vec<usize>) {
    for i in std::mem::take(again) {
        handle(p, i, true, false, false, again);
    }
}

/// One connection's readiness. A panic while handling it (a bug that bytes from the
/// server reached) is that connection's failure, not the run's: what it carried fails and
/// it is replaced, and the worker goes on.
fn handle<'a, P: Protocol<'a>>(
    p: &mut P,
    i: usize,
    readable: bool,
    writable: bool,
    closed: bool,
    again: &mut Vec<usize>,
) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.event(i, readable, writable, closed)
    }));
    match r {
        Ok(true) if !again.contains(&i) => again.push(i),
        Ok(_) => {}
        Err(_) => p.on_panic(i, Instant::now()),
    }
}

#[cfg(test)]
mod tests {
    use super::{resume, Core, Protocol, Spin, Table, Taken, Wake};
    use std::time::{Duration, Instant};

    /// A worker whose connection 2 panics when handled and whose connection 3 always has
    /// more to read; the rest of the loop is not reached.
    #[derive(Default)]
    struct Panicky {
        handled: Vec<usize>,
        panicked: Vec<usize>,
    }

    impl<'a> Protocol<'a> for Panicky {
        type Phase = Stage;
        type Conn = ();
        type Socket = ();
        fn core(&mut self) -> &mut Core<'a> {
            unreachable!()
        }
        fn core_ref(&self) -> &Core<'a> {
            unreachable!()
        }
        fn into_core(self) -> Core<'a> {
            unreachable!()
        }
        fn table(&self) -> &Table<Stage, (), ()> {
            unreachable!()
        }
        fn parts(&mut self) -> (&mut Core<'a>, &mut Table<Stage, (), ()>) {
            unreachable!()
        }
        fn new_conn(&self, _: Instant) {}
        fn with_room(&mut self) -> Option<usize> {
            None
        }
        fn begin(&mut self, _: usize, _: Instant, _: Instant) -> Taken {
            Taken::Refused
        }
        fn event(&mut self, i: usize, _: bool, _: bool, _: bool) -> bool {
            assert_ne!(i, 2, "a bug reached by a server's bytes");
            self.handled.push(i);
            i == 3
        }
        fn on_panic(&mut self, i: usize, _: Instant) {
            self.panicked.push(i);
        }
        fn fail_all(&mut self, _: usize, _: Instant, _: shootout_model::FailureKind) {}
        fn open(&mut self, _: usize, _: Instant) {}
        fn deadlines(&mut self, _: usize, _: Instant) {}
        fn each_in_flight(&self, _: &mut dyn FnMut(Instant)) {}
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Stage;

    impl super::Phase for Stage {
        const CLOSED: Stage = Stage;
        const CONNECTING: Stage = Stage;
        fn opening(self) -> bool {
            false
        }
    }

    #[test]
    fn a_panic_handling_one_connection_fails_that_connection_and_the_worker_goes_on() {
        let mut d = Panicky::default();
        let mut again = vec![1, 2, 3, 4];
        resume(&mut d, &mut again);
        assert_eq!(d.handled, vec![1, 3, 4]);
        assert_eq!(d.panicked, vec![2]);
        assert_eq!(again, vec![3], "3 had more to read");
    }

    /// The wake-up margin jumps to 1.25× a late wake-up, decays slowly, stays in its
    /// bounds, and the waiting stops once it took a quarter of the time.
    #[test]
    fn the_wake_up_margin_follows_late_wake_ups_within_its_budget() {
        let t0 = Instant::now();
        let us = Duration::from_micros;
        let mut w = Wake::new(t0);
        w.woke(us(80));
        assert_eq!(w.margin, us(100));
        w.woke(us(0));
        assert_eq!(w.margin, us(100) - (us(100) - Wake::LEAST) / 64);
        w.woke(us(10_000));
        assert_eq!(w.margin, Wake::MOST);
        assert_eq!(w.early(us(249), t0 + us(1000)), Wake::MOST);
        assert_eq!(w.early(us(251), t0 + us(1000)), Duration::ZERO);
    }

    /// Busy polling on a CPU that another busy thread shares: what it cost is the CPU
    /// time it had (about half), not the wall-clock time, or a worker that spun on a
    /// shared CPU would look less busy than it was (down to 0 %).
    #[test]
    fn busy_polling_is_counted_in_cpu_time_not_wall_clock_time() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let cpu = crate::sys::allowed_cpus()[0];
        let stop = Arc::new(AtomicBool::new(false));
        let hog = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                crate::sys::pin_thread(cpu).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        crate::sys::pin_thread(cpu).unwrap();
        let mut poll = mio::Poll::new().unwrap();
        let mut events = mio::Events::with_capacity(8);
        let began = Instant::now();
        let spent = super::poll_until(&mut poll, &mut events, began + Duration::from_millis(300));
        let wall = began.elapsed();
        stop.store(true, Ordering::Relaxed);
        hog.join().unwrap();
        let spent = spent.unwrap();
        assert!(
            spent < wall * 3 / 4,
            "{spent:?} counted for {wall:?} shared with a busy thread"
        );
    }

    /// Polls that find nothing may add up to 1/32 of the time since the start: past
    /// that, the worker sleeps at once until the time catches up.
    #[test]
    fn busy_polling_wastes_at_most_a_32nd_of_the_time() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        assert!(!Spin::new(Duration::ZERO, t0).now(t0 + ms(100)), "off");
        let mut s = Spin::new(ms(1), t0);
        assert!(s.now(t0));
        s.missed(ms(1));
        assert!(!s.now(t0 + ms(31)));
        assert!(s.now(t0 + ms(32)));
        s.missed(ms(2));
        assert!(!s.now(t0 + ms(95)));
        assert!(s.now(t0 + ms(96)));
    }

    /// A busy-polling worker naps a thousandth of the smallest latency lately, less what
    /// its naps oversleep; not before an answer came, not with polling off, not where
    /// that leaves less than 5 µs.
    #[test]
    fn a_nap_is_a_thousandth_of_the_least_latency_less_the_oversleep() {
        let us = Duration::from_micros;
        let t0 = Instant::now();
        assert_eq!(Spin::new(Duration::ZERO, t0).nap(100_000), None, "off");
        let mut s = Spin::new(us(20), t0);
        assert_eq!(s.nap(u64::MAX), None, "no answer yet");
        // 100 ms answers: 100 µs, less the 20 µs assumed before any nap.
        assert_eq!(s.nap(100_000), Some(us(80)));
        // 24 ms: 24 - 20 is under 5 µs; 25 ms is just enough.
        assert_eq!(s.nap(24_000), None);
        assert_eq!(s.nap(25_000), Some(us(5)));
        // Naps that overslept 4 µs bring the estimate down to it, an eighth at a time.
        for _ in 0..64 {
            s.napped(us(80), us(84));
        }
        assert!(s.over < us(5), "{:?}", s.over);
        assert_eq!(s.nap(24_000), Some(us(24) - s.over));
        // The last window's least latency bounds this one's until it ends.
        s.window(30_000);
        assert_eq!(s.nap(100_000), Some(us(30) - s.over));
        assert_eq!(s.nap(5_000), None, "a quick answer now");
        // A window with no answer keeps the one before.
        s.window(u64::MAX);
        assert_eq!(s.nap(u64::MAX), Some(us(30) - s.over));
        s.window(2_000);
        assert_eq!(s.nap(u64::MAX), None, "answers got quick");
    }

    /// The waiting itself: with answers of 100 ms lately, a worker that finds nothing
    /// ready naps (about 80 µs, not the second it was allowed to wait, and spins not at
    /// all); its next look finding nothing makes it dry, and it then waits as before
    /// (spin, then a sleeping poll) until an event comes, which makes naps ready again.
    #[test]
    fn a_worker_with_slow_answers_naps_then_waits_for_an_event() {
        let mut poll = mio::Poll::new().unwrap();
        let mut events = mio::Events::with_capacity(8);
        let mut socket = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        poll.registry()
            .register(&mut socket, mio::Token(7), mio::Interest::READABLE)
            .unwrap();
        let t0 = Instant::now();
        let mut rec = crate::recorder::Recorder::new(t0, 0, false, 1);
        rec.least_us = 100_000;
        let mut spin = Spin::new(Duration::from_micros(20), t0);
        let mut wait = |spin: &mut Spin, rec: &mut crate::recorder::Recorder, wait| {
            let began = Instant::now();
            super::wait_for_events(&mut poll, rec, spin, true, wait, began, &mut events).unwrap();
            (began.elapsed(), events.iter().count())
        };
        let (took, got) = wait(&mut spin, &mut rec, Duration::from_secs(1));
        assert_eq!((got, spin.nap), (0, super::Nap::Napped));
        assert!(
            took < Duration::from_millis(500),
            "slept {took:?} instead of napping"
        );
        assert_eq!(rec.spun, Duration::ZERO, "a nap is not a spin");
        let (_, got) = wait(&mut spin, &mut rec, Duration::from_millis(5));
        assert_eq!((got, spin.nap), (0, super::Nap::Dry));
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.send_to(b"x", socket.local_addr().unwrap()).unwrap();
        let (_, got) = wait(&mut spin, &mut rec, Duration::from_secs(1));
        assert_eq!((got, spin.nap), (1, super::Nap::Ready));
        // Without polling there is no nap: the same wait sleeps until its end.
        let mut off = Spin::new(Duration::ZERO, t0);
        let (took, got) = wait(&mut off, &mut rec, Duration::from_millis(50));
        assert_eq!(got, 0);
        assert!(took >= Duration::from_millis(50), "{took:?}");
    }

    /// One nap that overslept by a long preemption (2 ms) stops the naps of 100 ms
    /// answers, but not for the rest of the run: windows without a nap bring the
    /// oversleep down until a nap fits again.
    #[test]
    fn a_long_oversleep_pauses_the_naps_for_a_few_windows() {
        let us = Duration::from_micros;
        let mut s = Spin::new(us(20), Instant::now());
        s.window(100_000);
        s.napped(us(80), us(2_080));
        assert_eq!(s.nap(100_000), None, "{:?} oversleep", s.over);
        s.window(100_000);
        let windows = (1..=20)
            .find(|_| {
                s.window(100_000);
                s.nap(100_000).is_some()
            })
            .expect("naps come back");
        assert!((3..=12).contains(&windows), "{windows} windows");
        // A window with a nap in it does not decay the estimate.
        let over = s.over;
        s.napped(us(10), us(10) + over);
        s.window(100_000);
        assert_eq!(s.over, over);
    }

    /// A nap whose look finds nothing ends the naps until an event comes, so an idle
    /// worker naps once per wait, not every few µs.
    #[test]
    fn a_nap_that_finds_nothing_stops_the_naps_until_an_event_comes() {
        let us = Duration::from_micros;
        let mut s = Spin::new(us(20), Instant::now());
        assert!(s.may_nap());
        s.napped(us(80), us(100));
        assert!(!s.may_nap(), "just napped: look first");
        assert!(s.nap(100_000).is_some());
        s.dry();
        assert_eq!(s.nap(100_000), None, "dry");
        s.found();
        assert!(s.may_nap());
        assert!(s.nap(100_000).is_some());
    }
}
