//! One worker thread: a mio (epoll, edge-triggered) event loop driving its share of the
//! connections, closed loop or paced by a [`Pacer`], recording into its own [`Recorder`].
//!
//! Per request the hot path is one `write`, one `read` (a short read proves the socket
//! drained, so no second read waits for `EAGAIN`) and a share of one `epoll_wait`; no
//! allocation, no lock, no shared atomic. Deadlines are checked by a sweep every tick
//! (a tenth of the shortest timeout, between 1 and 100 ms), which also publishes the
//! worker's live counters for progress displays.
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

use crate::pacer::{Pacer, Pacing};
use crate::parse::{ParseError, Progress, ResponseParser};
use crate::recorder::{Answer, Recorder, Timing};
use crate::request::{Gen, Requests};
use crate::sys;
use crate::transport::Transport;
use crate::Live;
use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use shootout_model::{Expectation, FailureKind, Record};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where connections go.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A unix socket path.
    Unix(PathBuf),
}

/// What every worker of a run shares (read only).
pub struct Shared<'a> {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// TLS client config and server name for https.
    pub tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    /// The kinds of request, prepared.
    pub requests: Requests,
    /// Requests in flight per connection, at most.
    pub pipeline: usize,
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
    /// Rate mode: when each worker's first request is due, from the start.
    pub offset: Duration,
    /// Wall-clock time the run's clock starts, when it was given (shards starting together).
    pub start_at: Option<std::time::SystemTime>,
    /// Workers meet here when set up (and, in rate mode, connected); the run's clock
    /// starts when all have arrived, so set-up is never counted as lateness.
    pub barrier: std::sync::Barrier,
    /// When the run started: set by the last worker to reach the barrier.
    pub started: &'a std::sync::OnceLock<Instant>,
    /// Local addresses to connect from (see [`Shared::bind_for`]); empty: the kernel's.
    pub bind: Vec<std::net::IpAddr>,
    /// Answer heads to keep as a sample ([`crate::Heads`]); 0: none.
    pub heads: usize,
    /// Longest busy poll before sleeping (`LoadSpec::busy_poll`); zero: none.
    pub busy_poll: Duration,
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
    /// Pin the thread to this CPU.
    pub cpu: Option<usize>,
    /// Worker number (seeds the reservoir's generator).
    pub index: usize,
}

/// How far one worker kept its schedule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schedule {
    /// Requests due by the end.
    pub due: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests sent more than 1 ms after they were due.
    pub late: u64,
    /// Largest delay between due and send.
    pub max_lag: Duration,
    /// Of `late`, those sent after waiting for a connection (see [`Schedule::starved`]).
    pub late_no_connection: u64,
    /// A request fell due with no connection free, and the schedule has not caught up
    /// since.
    starved: bool,
}

impl Schedule {
    /// A request fell due and no connection had room for it: every connection had its
    /// requests outstanding. Until the schedule catches up, late sends waited for a
    /// connection (the server's pace, at this many connections, was the limit).
    pub fn starved(&mut self) {
        self.starved = true;
    }

    /// The next request is not due yet: the schedule is kept again.
    pub fn caught_up(&mut self) {
        self.starved = false;
    }

    /// A request due `late` ago goes out now (before `sent` counts it): late past
    /// [`LATE`] counts as late, and as waiting for a connection when it was starved, else
    /// as the generator's own delay.
    pub fn sending(&mut self, late: Duration) {
        if late > LATE {
            self.late += 1;
            if self.starved {
                self.late_no_connection += 1;
            }
        }
        self.max_lag = self.max_lag.max(late);
    }
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
}

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
    connect_began: Instant,
    /// How long the current connection took to open.
    connect: Duration,
    /// A response already came back on this connection.
    reused: bool,
    /// The peer closed its side: the connection carries no further answer.
    peer_closed: bool,
    /// When the connection last became idle (rate mode).
    idle_at: Instant,
    /// Pause before re-opening a connection the server dropped before any answer; doubles
    /// each time it happens again, back to zero once an answer arrives.
    backoff: Duration,
    /// Not re-opened before this instant.
    reopen_at: Instant,
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

/// Requests sent later than this after their due time count as late.
pub(crate) const LATE: Duration = Duration::from_millis(1);

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

/// The longest pause before re-opening a connection the server keeps dropping.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The token of the pacing timer (connections use their index).
pub(crate) const TIMER: Token = Token(usize::MAX);

/// What the schedule allows next.
pub(crate) enum Dispatch {
    /// The next request is due at this instant.
    At(Instant),
    /// A request is due but every connection is busy: it waits for one.
    Blocked,
    /// No more requests are due.
    Finished,
}

/// What the one event loop ([`drive`]) needs of a worker: the HTTP/1.1 worker here and
/// the HTTP/2 worker ([`crate::h2`]) both implement it, so when a run ends, how often it
/// ticks and how events reach connections are decided once for both protocols.
pub(crate) trait Driver {
    /// Closed loop, at the start: puts every connection to work (nothing when paced).
    fn begin(&mut self, now: Instant);
    /// The shared settings (their deadlines set the tick).
    fn shared(&self) -> &Shared<'_>;
    /// When the run ends, if bounded by time.
    fn end_at(&self) -> Option<Instant>;
    /// Deadlines, re-opens and the per-second series.
    fn on_tick(&mut self, now: Instant);
    /// The worker's recorder (read for the live counters at each tick).
    fn recorder(&mut self) -> &mut Recorder;
    /// Rate mode: sends what is due; `None` in a closed loop.
    fn dispatch_due(&mut self, now: Instant) -> Option<Dispatch>;
    /// Rate mode: the schedule's budget is spent and nothing is in flight.
    fn paced_done(&self) -> bool;
    /// Closed loop: nothing in flight and nothing more to send.
    fn closed_done(&mut self, now: Instant) -> bool;
    /// The pacing timer.
    fn timer(&mut self) -> &mut sys::Timer;
    /// The worker's poll.
    fn poll(&mut self) -> &mut Poll;
    /// Readiness of connection `i`. Returns true when its reads stopped at
    /// [`READS_PER_EVENT`] with bytes perhaps left: the loop reads it again after its
    /// deadlines.
    fn on_event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool;
    /// Handling connection `i` panicked: whatever it carried fails, and it is replaced.
    fn on_panic(&mut self, i: usize, now: Instant);
}

/// The most reads one readiness event gets. A server that writes faster than the worker
/// reads would otherwise keep it in one connection's read loop, and no deadline of any
/// connection would fire meanwhile (ticks run between events). 16 reads of 64 KiB; an
/// ordinary event needs one or two.
pub(crate) const READS_PER_EVENT: usize = 16;

/// How often a worker copies its details for a watching view (its counters: every tick).
const DETAIL_EVERY: Duration = Duration::from_millis(100);

/// Runs a worker until its share is done, the deadline passes or `stop` is set (returns
/// true then). Ticks at a tenth of the shorter deadline (1–100 ms), publishes progress at
/// each tick, and in rate mode arms the timer for the next due request.
pub(crate) fn drive<D: Driver>(d: &mut D, stop: &AtomicBool, live: &Live) -> io::Result<bool> {
    let now = Instant::now();
    d.begin(now);
    let sh = d.shared();
    let tick = (sh.timeout.min(sh.connect_timeout) / 10)
        .clamp(Duration::from_millis(1), Duration::from_millis(100));
    let mut spin = Spin::new(sh.busy_poll, now);
    let mut next_tick = now + tick;
    // A watching view's details (histogram, status codes) are copied at most this often.
    let mut next_detail = now;
    if live.watched() {
        d.recorder().watch();
    }
    let mut events = Events::with_capacity(1024);
    // Connections whose reads stopped at the budget, read again at every turn.
    let mut again = Vec::new();
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        if d.end_at().is_some_and(|e| now >= e) {
            return Ok(false);
        }
        if now >= next_tick {
            d.on_tick(now);
            let detail = now >= next_detail;
            live.publish(d.recorder(), detail, false);
            if detail {
                next_detail = now + DETAIL_EVERY;
            }
            next_tick = now + tick;
        }
        let mut wait = next_tick - now;
        if let Some(end) = d.end_at() {
            wait = wait.min(end - now);
        }
        match d.dispatch_due(now) {
            Some(Dispatch::At(due)) => d.timer().arm(due),
            // Done when nothing is in flight, unless the run is bounded by time: then it
            // lasts its whole duration, so rates are per the time asked for.
            Some(Dispatch::Finished) if d.paced_done() => return Ok(false),
            Some(Dispatch::Finished | Dispatch::Blocked) => {}
            None if d.closed_done(now) => return Ok(false),
            None => {}
        }
        if !again.is_empty() {
            resume(d, &mut again);
            wait = Duration::ZERO;
        }
        if wait > Duration::ZERO && spin.now(now) {
            let began = Instant::now();
            let until = began + spin.max.min(wait);
            loop {
                match d.poll().poll(&mut events, Some(Duration::ZERO)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
                if !events.is_empty() || Instant::now() >= until {
                    break;
                }
                std::hint::spin_loop();
            }
            // Polling, found something or not, was waiting: not part of how busy the
            // worker was.
            let spent = began.elapsed();
            d.recorder().spun += spent;
            if !events.is_empty() {
                deliver(d, &events, &mut again);
                continue;
            }
            spin.missed(spent);
        }
        match d.poll().poll(&mut events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        deliver(d, &events, &mut again);
    }
}

/// When a worker busy polls before sleeping (`LoadSpec::busy_poll`): while the
/// polls that found nothing add up to at most 1/32 of the time since the run began. A
/// loaded run, whose polls find events, polls before every wait; an idle or slow one
/// spends at most about 3 % of a CPU on it.
struct Spin {
    /// The longest poll; zero: never.
    max: Duration,
    since: Instant,
    wasted: Duration,
}

impl Spin {
    fn new(max: Duration, since: Instant) -> Spin {
        Spin {
            max,
            since,
            wasted: Duration::ZERO,
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

/// Hands each event of a poll to its connection (the pacing timer's is only cleared);
/// connections whose reads stopped at the budget go to `again`.
pub(crate) fn deliver<D: Driver>(d: &mut D, events: &Events, again: &mut Vec<usize>) {
    for ev in events.iter() {
        if ev.token() == TIMER {
            d.timer().clear();
            continue;
        }
        let closed = ev.is_read_closed() || ev.is_error();
        let readable = ev.is_readable() || closed;
        handle(d, ev.token().0, readable, ev.is_writable(), closed, again);
    }
}

/// Reads again the connections whose reads stopped at the budget.
pub(crate) fn resume<D: Driver>(d: &mut D, again: &mut Vec<usize>) {
    for i in std::mem::take(again) {
        handle(d, i, true, false, false, again);
    }
}

/// One connection's readiness. A panic while handling it (a bug that bytes from the
/// server reached) is that connection's failure, not the run's: what it carried fails and
/// it is replaced, and the worker goes on.
fn handle<D: Driver>(
    d: &mut D,
    i: usize,
    readable: bool,
    writable: bool,
    closed: bool,
    again: &mut Vec<usize>,
) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        d.on_event(i, readable, writable, closed)
    }));
    match r {
        Ok(true) if !again.contains(&i) => again.push(i),
        Ok(_) => {}
        Err(_) => d.on_panic(i, Instant::now()),
    }
}

struct Worker<'a> {
    sh: &'a Shared<'a>,
    /// When the run started.
    start: Instant,
    /// When it ends, if bounded by time.
    end: Option<Instant>,
    poll: Poll,
    timer: sys::Timer,
    conns: Vec<Conn>,
    buf: Box<[u8]>,
    rec: Recorder,
    budget: Option<u64>,
    claimed: u64,
    in_flight: usize,
    pacer: Option<Pacer>,
    sched: Schedule,
    /// Rate mode: connections with room for a request (see [`Conn::pooled`]); an entry
    /// whose connection is no longer pooled is skipped when popped.
    pool: Vec<usize>,
    deferred: Vec<usize>,
    /// Picks each request's kind and draws its templated values.
    gen: Gen,
    /// Holds a templated body while its length is taken.
    scratch: Vec<u8>,
    /// Worker number (which local address each connection binds).
    index: usize,
    /// Copy the next request rendered into the heads sample (`-v 2`).
    want_request_head: bool,
    /// The last event's reads stopped at [`READS_PER_EVENT`].
    unfinished: bool,
}

/// Runs one worker to the end of its share; `stop` ends it early.
pub fn run(sh: &Shared, a: Assignment, stop: &AtomicBool, live: &Live) -> io::Result<Output> {
    host(sh, a, stop, live, set_up)
}

/// A worker's event loop, whichever protocol it speaks, as [`host`] drives it.
pub(crate) trait EventLoop {
    /// The run's clock started at `start`; it ends at `end` when bounded by time.
    fn begin(&mut self, start: Instant, end: Option<Instant>);
    /// Runs until the share is done, the deadline passes or `stop` is set (true then).
    fn run(&mut self, stop: &AtomicBool, live: &Live) -> io::Result<bool>;
    /// Ends the run at `ended`: requests still in flight are counted as aborted. Returns
    /// the recorder (not yet finished) and the pacer's schedule, in rate mode.
    fn end(self, ended: Instant) -> (Recorder, Option<(Pacer, Schedule)>);
    /// When the run ends, if bounded by time.
    fn deadline(&self) -> Option<Instant>;
}

/// Runs a worker thread's life around its event loop: pinning, the barrier where the run's
/// clock starts, the thread's CPU time, and its output.
pub(crate) fn host<'a, L: EventLoop>(
    sh: &'a Shared<'a>,
    a: Assignment,
    stop: &AtomicBool,
    live: &Live,
    set_up: impl FnOnce(&'a Shared<'a>, Assignment) -> io::Result<L>,
) -> io::Result<Output> {
    if let Some(cpu) = a.cpu {
        // Pinning is best effort: a CPU outside the allowed set is reported by the caller.
        let _ = sys::pin_thread(cpu);
    }
    let began = Instant::now();
    let cpu0 = sys::thread_cpu();
    let w = set_up(sh, a);
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
    w.begin(start, sh.duration.map(|d| start + d));
    let interrupted = w.run(stop, live)?;
    let ended = match w.deadline() {
        Some(end) if !interrupted => Instant::now().min(end),
        _ => Instant::now(),
    };
    let (mut rec, paced) = w.end(ended);
    // The last publication waits for the slot: a view's last look sees the final counts.
    live.publish(&rec, true, true);
    rec.finish();
    let cpu1 = sys::thread_cpu();
    let schedule = paced.map(|(p, sched)| Schedule {
        due: p.due_by(ended.saturating_duration_since(start)),
        ..sched
    });
    Ok(Output {
        rec,
        cpu: (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1)),
        wall: began.elapsed(),
        ended,
        schedule,
        interrupted,
    })
}

impl<'a> Driver for Worker<'a> {
    fn begin(&mut self, now: Instant) {
        if self.pacer.is_none() {
            for i in 0..self.conns.len() {
                self.next(i, now);
            }
        }
    }

    fn shared(&self) -> &Shared<'_> {
        self.sh
    }

    fn end_at(&self) -> Option<Instant> {
        self.end
    }

    fn on_tick(&mut self, now: Instant) {
        self.tick(now);
    }

    fn recorder(&mut self) -> &mut Recorder {
        &mut self.rec
    }

    fn dispatch_due(&mut self, now: Instant) -> Option<Dispatch> {
        self.pacer.is_some().then(|| self.dispatch(now))
    }

    fn paced_done(&self) -> bool {
        self.in_flight == 0
            && (self.end.is_none() || self.budget.is_some_and(|b| self.sched.sent >= b))
    }

    fn closed_done(&mut self, _now: Instant) -> bool {
        self.budget.is_some_and(|b| self.claimed >= b) && self.in_flight == 0
    }

    fn timer(&mut self) -> &mut sys::Timer {
        &mut self.timer
    }

    fn poll(&mut self) -> &mut Poll {
        &mut self.poll
    }

    fn on_event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool {
        self.event(i, readable, writable, closed);
        std::mem::take(&mut self.unfinished)
    }

    fn on_panic(&mut self, i: usize, now: Instant) {
        self.broke(i, now, FailureKind::Malformed);
    }
}

impl EventLoop for Worker<'_> {
    fn begin(&mut self, start: Instant, end: Option<Instant>) {
        self.start = start;
        self.end = end;
        self.rec.restart(start);
    }

    fn run(&mut self, stop: &AtomicBool, live: &Live) -> io::Result<bool> {
        drive(self, stop, live)
    }

    fn end(mut self, _ended: Instant) -> (Recorder, Option<(Pacer, Schedule)>) {
        for c in &self.conns {
            self.rec.counts.aborted += c.queue.len() as u64;
        }
        (self.rec, self.pacer.map(|p| (p, self.sched)))
    }

    fn deadline(&self) -> Option<Instant> {
        self.end
    }
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

/// Builds the worker; in rate mode also opens its connections, so the schedule starts
/// with connections ready.
fn set_up<'a>(sh: &'a Shared<'a>, a: Assignment) -> io::Result<Worker<'a>> {
    let now = Instant::now();
    let mut rec = Recorder::new(
        now,
        sh.record.reservoir,
        sh.record.all,
        0x9E37_79B9 ^ a.index as u64,
    );
    let kinds = sh.requests.kinds.len();
    if (2..=shootout_model::requests::MAX_REPORTED_ENTRIES).contains(&kinds) {
        rec.per_kind(kinds);
    }
    let mut w = Worker {
        sh,
        start: now,
        end: None,
        poll: Poll::new()?,
        timer: sys::Timer::new()?,
        conns: (0..a.connections)
            .map(|_| Conn {
                io: None,
                phase: Phase::Closed,
                queue: VecDeque::with_capacity(sh.pipeline),
                rendered: 0,
                out: Vec::new(),
                out_pos: 0,
                queued: 0,
                flushed: 0,
                parser: ResponseParser::new(false, sh.expect.body_contains.as_deref()),
                connect_began: now,
                connect: Duration::ZERO,
                reused: false,
                peer_closed: false,
                idle_at: now,
                backoff: Duration::ZERO,
                reopen_at: now,
                owes: false,
                pooled: false,
            })
            .collect(),
        buf: vec![0u8; 64 * 1024].into_boxed_slice(),
        rec,
        budget: a.budget,
        claimed: 0,
        in_flight: 0,
        pacer: a.rate.map(|rate| Pacer {
            rate,
            budget: a.budget,
            duration: sh.duration,
            offset: sh.offset,
        }),
        sched: Schedule::default(),
        pool: Vec::with_capacity(a.connections),
        deferred: Vec::new(),
        gen: Gen::new(&sh.requests, a.index, sh.workers),
        scratch: Vec::new(),
        index: a.index,
        want_request_head: false,
        unfinished: false,
    };
    for c in &mut w.conns {
        c.parser.want_server();
    }
    // The heads sample comes from the first worker's first connection: its first request
    // and its first answers, then nothing more is copied.
    if a.index == 0 && sh.heads > 0 {
        if let Some(c) = w.conns.first_mut() {
            c.parser.want_head();
            w.want_request_head = true;
        }
    }
    if w.pacer.is_some() {
        let fd = w.timer.fd();
        w.poll
            .registry()
            .register(&mut mio::unix::SourceFd(&fd), TIMER, Interest::READABLE)?;
        w.connect_all()?;
    }
    Ok(w)
}

impl Worker<'_> {
    /// Opens every connection and waits (up to the connect timeout) until they are up;
    /// those still connecting are left to the deadline sweep.
    fn connect_all(&mut self) -> io::Result<()> {
        let now = Instant::now();
        for i in 0..self.conns.len() {
            self.open(i, now);
        }
        let deadline = now + self.sh.connect_timeout;
        let mut events = Events::with_capacity(1024);
        while self.conns.iter().any(|c| c.phase == Phase::Connecting) {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            self.poll.poll(&mut events, Some(deadline - now))?;
            for ev in events.iter() {
                let i = ev.token().0;
                if self
                    .conns
                    .get(i)
                    .is_some_and(|c| c.phase == Phase::Connecting)
                {
                    self.on_connecting(i, ev.is_readable() || ev.is_read_closed());
                }
            }
        }
        Ok(())
    }

    /// Sends every request that is due and has a connection with room for it.
    fn dispatch(&mut self, now: Instant) -> Dispatch {
        let Some(pacer) = self.pacer else {
            return Dispatch::Finished;
        };
        loop {
            match pacer.next(now.saturating_duration_since(self.start), self.sched.sent) {
                Pacing::Stop => return Dispatch::Finished,
                Pacing::Wait(w) => {
                    self.sched.caught_up();
                    return Dispatch::At(now + w);
                }
                Pacing::Due { late } => {
                    let Some(i) = self.pop_pooled() else {
                        // No connection has room: the request waits, and its latency with it.
                        self.sched.starved();
                        return Dispatch::Blocked;
                    };
                    self.sched.sending(late);
                    let due = self.start + pacer.due(self.sched.sent);
                    self.sched.sent += 1;
                    if self.conns[i].owes {
                        // This request's answer is what the connection received unasked:
                        // malformed. The connection is replaced at the schedule's pace.
                        self.conns[i].owes = false;
                        self.conns[i].pooled = false;
                        let kind = self.gen.pick();
                        self.rec
                            .failed(&Timing::unsent(due, now, kind), FailureKind::Malformed);
                        self.open(i, now);
                        continue;
                    }
                    self.enqueue(i, due, now);
                    self.flush(i, now);
                    let c = &self.conns[i];
                    if c.pooled && c.queue.len() < self.sh.pipeline && c.phase != Phase::Closed {
                        self.pool.push(i);
                    } else {
                        self.conns[i].pooled = false;
                    }
                }
            }
        }
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

    /// Takes one request from the budget, unless the budget or the time is spent.
    fn claim(&mut self, now: Instant) -> bool {
        if self.end.is_some_and(|e| now >= e) || self.budget.is_some_and(|b| self.claimed >= b) {
            return false;
        }
        self.claimed += 1;
        true
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
            c.parser.reset_for(self.sh.requests.kinds[kind].head);
        }
        c.queue.push_back(Slot {
            start,
            sent: now,
            first_byte: None,
            connect: Duration::ZERO,
            kind,
            wire: (0, 0),
            retried: false,
            rested,
        });
        self.in_flight += 1;
    }

    /// What connection `i` does when it may take new work: rate mode, it waits in the pool
    /// (or is re-opened); closed loop, its queue is topped up from the budget to a batch
    /// and sent (on a new connection when it is closed), or it closes when the budget is
    /// spent.
    fn next(&mut self, i: usize, now: Instant) {
        if self.pacer.is_some() {
            match self.conns[i].phase {
                Phase::Closed => self.open(i, now),
                Phase::Connecting => {}
                _ => self.park(i, now),
            }
            return;
        }
        let c = &self.conns[i];
        if c.phase != Phase::Closed && c.busy() {
            return;
        }
        while self.conns[i].queue.len() < self.sh.pipeline && self.claim(now) {
            self.enqueue(i, now, now);
        }
        match self.conns[i].phase {
            _ if !self.conns[i].busy() => self.close(i),
            Phase::Closed => self.open(i, now),
            Phase::Connecting => {}
            _ => self.flush(i, now),
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.connect_began = now;
        c.reused = false;
        c.peer_closed = false;
        c.rendered = 0;
        c.out.clear();
        c.out_pos = 0;
        c.queued = 0;
        c.flushed = 0;
        if let Some(front) = c.queue.front() {
            c.parser.reset_for(self.sh.requests.kinds[front.kind].head);
        }
        let from = self.sh.bind_for(self.index, i);
        match Transport::connect(self.sh, self.poll.registry(), Token(i), from) {
            Ok(io) => {
                c.io = Some(io);
                c.phase = Phase::Connecting;
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
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
        if c.queue.len() < self.sh.pipeline {
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
        self.rec.failed(&t, kind);
        self.in_flight -= 1;
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
        self.rec.counts.connections_failed += 1;
        self.fail_all(i, now, FailureKind::Connect);
        // Retried at the next tick, so a dead server is not hammered in a tight loop.
        self.deferred.push(i);
    }

    /// `closed`: the peer closed or reset the stream, so reads go on until they say so.
    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) {
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
                c.connect = now.saturating_duration_since(c.connect_began);
                self.rec.connected(c.connect);
                for s in c.queue.iter_mut() {
                    s.connect = c.connect;
                }
                c.phase = Phase::Idle;
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
        let n = match io.read(&mut self.buf) {
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
        self.rec.counts.bytes_received += n as u64;
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
            let c = &mut self.conns[i];
            c.backoff = (c.backoff * 2).clamp(Duration::from_millis(1), MAX_BACKOFF);
            c.reopen_at = now + c.backoff;
            self.rec.counts.dropped += 1;
            self.deferred.push(i);
        } else {
            self.rec.counts.reconnects += 1;
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
        if self.pacer.is_some() {
            // Charged when the schedule next picks this connection: a server that greets
            // every new connection with bytes is still met at the rate asked for.
            self.conns[i].owes = true;
            self.pool_add(i);
            return;
        }
        if self.claim(now) {
            let kind = self.gen.pick();
            self.rec
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
            self.sh
                .requests
                .render(s.kind, &mut self.gen, &mut c.out, &mut self.scratch);
            if self.want_request_head {
                self.want_request_head = false;
                self.rec.heads.request = Some(crate::head_of(&c.out[before..]).to_vec());
            }
            let len = (c.out.len() - before) as u64;
            s.wire = (c.queued, c.queued + len);
            if !s.retried {
                // A retried request keeps the time of its first send: its latency counts
                // from it.
                s.sent = now;
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
                    self.rec.counts.bytes_sent += n as u64;
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
            let n = match io.read(&mut self.buf) {
                Ok(0) => return self.eof(i),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.lost(i, Instant::now()),
            };
            let now = Instant::now();
            self.rec.counts.bytes_received += n as u64;
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
                match c.parser.feed(&self.buf[at..n]) {
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
            if drains && n < self.buf.len() {
                return;
            }
        }
        self.unfinished = true;
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
                    && self.sh.requests.kinds[s.kind].idempotent
            })
            && c.parser.seen == 0
            && c.reused;
        if raced {
            self.close(i);
            self.rec.counts.reconnects += 1;
            self.rec.counts.retried += 1;
            if let Some(s) = self.conns[i].queue.front_mut() {
                s.retried = true;
            }
            return self.open(i, now);
        }
        let kind = if handshaking {
            self.rec.counts.connections_failed += 1;
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
        if announced || !self.sh.keepalive || !written_whole {
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
                    if !self.sh.requests.kinds[s.kind].idempotent {
                        let t = self.timing(&s, now);
                        self.rec.failed(&t, FailureKind::Reset);
                        self.in_flight -= 1;
                        continue;
                    }
                    s.retried = true;
                    self.rec.counts.retried += 1;
                }
                self.conns[i].queue.push_back(s);
            }
            self.conns[i].rendered = 0;
            self.next(i, now);
            // A keep-alive connection the server closed, replaced to go on: a reconnect.
            if announced && self.sh.keepalive && self.conns[i].phase == Phase::Connecting {
                self.rec.counts.reconnects += 1;
            }
            return false;
        }
        if let Some(front) = self.conns[i].queue.front() {
            let head = self.sh.requests.kinds[front.kind].head;
            self.conns[i].parser.reset_for(head);
            if self.pacer.is_some() && self.conns[i].queue.len() < self.sh.pipeline {
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
                self.rec.counts.reconnects += 1;
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
        };
        let server = &mut c.parser.server;
        self.rec
            .credit(&t, answer, || server.take(), &self.sh.expect);
        if let Some(head) = c.parser.head.take() {
            self.rec.heads.responses.push(head);
            if self.rec.heads.responses.len() < self.sh.heads {
                c.parser.want_head();
            }
        }
        c.reused = true;
        c.backoff = Duration::ZERO;
        self.in_flight -= 1;
        s.wire.1 <= c.flushed
    }

    /// Deadlines and deferred reconnects.
    fn tick(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.phase {
                Phase::Connecting
                    if now.saturating_duration_since(c.connect_began)
                        >= self.sh.connect_timeout =>
                {
                    self.connect_failed(i, now)
                }
                // Answers come in order: the front request's deadline is the first to pass.
                Phase::Writing | Phase::Reading
                    if c.queue.front().is_some_and(|s| {
                        now.saturating_duration_since(s.sent) >= self.sh.timeout
                    }) =>
                {
                    self.broke(i, now, FailureKind::Timeout);
                }
                _ => {}
            }
        }
        for i in std::mem::take(&mut self.deferred) {
            if self.conns[i].phase != Phase::Closed {
                continue;
            }
            if now < self.conns[i].reopen_at {
                self.deferred.push(i);
                continue;
            }
            self.next(i, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{resume, Dispatch, Driver, Recorder, Shared, Spin};
    use mio::Poll;
    use std::time::{Duration, Instant};

    /// A worker whose connection 2 panics when handled and whose connection 3 always has
    /// more to read; the rest of the loop is not reached.
    #[derive(Default)]
    struct Panicky {
        handled: Vec<usize>,
        panicked: Vec<usize>,
    }

    impl Driver for Panicky {
        fn begin(&mut self, _: Instant) {}
        fn shared(&self) -> &Shared<'_> {
            unreachable!()
        }
        fn end_at(&self) -> Option<Instant> {
            None
        }
        fn on_tick(&mut self, _: Instant) {}
        fn recorder(&mut self) -> &mut Recorder {
            unreachable!()
        }
        fn dispatch_due(&mut self, _: Instant) -> Option<Dispatch> {
            None
        }
        fn paced_done(&self) -> bool {
            true
        }
        fn closed_done(&mut self, _: Instant) -> bool {
            true
        }
        fn timer(&mut self) -> &mut crate::sys::Timer {
            unreachable!()
        }
        fn poll(&mut self) -> &mut Poll {
            unreachable!()
        }
        fn on_event(&mut self, i: usize, _: bool, _: bool, _: bool) -> bool {
            assert_ne!(i, 2, "a bug reached by a server's bytes");
            self.handled.push(i);
            i == 3
        }
        fn on_panic(&mut self, i: usize, _: Instant) {
            self.panicked.push(i);
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
}
