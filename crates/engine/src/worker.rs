//! One worker thread: a mio (epoll, edge-triggered) event loop driving its share of the
//! connections, closed loop or paced by a [`Pacer`], recording into its own [`Recorder`].
//!
//! Per request the hot path is one `write`, one `read` (a short read proves the socket
//! drained, so no second read waits for `EAGAIN`) and a share of one `epoll_wait`; no
//! allocation, no lock, no shared atomic. Deadlines are checked by a sweep every tick
//! (a tenth of the shortest timeout, between 1 and 100 ms), which also publishes the
//! worker's live counters for progress displays.
//!
//! Every request the worker starts ends exactly once: answered (ok or failing an
//! expectation), failed without an answer, or aborted when the run ends. A request the
//! server may have read and did not answer is a failure; only an idempotent request on a
//! connection that sat idle, closed before any byte of its answer, is sent again (once, and
//! counted). Bytes that arrive when no request is waiting for them are never credited to a
//! later request: the connection is closed and the bytes count as one malformed answer in
//! place of the request it would have carried next, which is what they would have become had
//! they arrived a moment later — so the counts do not depend on how TCP split the bytes.

use crate::pacer::{Pacer, Pacing};
use crate::parse::{ParseError, Progress, ResponseParser};
use crate::recorder::{Answer, Recorder, Timing};
use crate::sys;
use crate::transport::Transport;
use crate::Live;
use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use shootout_model::{Expectation, FailureKind, Record};
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
    /// The request bytes.
    pub request: Vec<u8>,
    /// The request is a HEAD (answers have no body).
    pub head_request: bool,
    /// The method is idempotent (RFC 9110 §9.2.2), so a request lost to a server closing an
    /// idle connection may be sent again.
    pub idempotent: bool,
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
    /// Workers meet here when set up (and, in rate mode, connected); the run's clock
    /// starts when all have arrived, so set-up is never counted as lateness.
    pub barrier: std::sync::Barrier,
    /// When the run started: set by the last worker to reach the barrier.
    pub started: &'a std::sync::OnceLock<Instant>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Closed,
    Connecting,
    Idle,
    Writing,
    Reading,
}

struct Conn {
    io: Option<Transport>,
    phase: Phase,
    /// Holds a started request.
    busy: bool,
    parser: ResponseParser,
    written: usize,
    start: Instant,
    sent: Instant,
    first_byte: Option<Instant>,
    connect_began: Instant,
    /// Connect time charged to the current request.
    connect: Duration,
    /// A response already came back on this connection.
    reused: bool,
    /// The current request was already retried once on a fresh connection.
    retried: bool,
    /// The peer closed its side: the connection carries no further answer.
    peer_closed: bool,
    /// When the connection last became idle (rate mode).
    idle_at: Instant,
    /// How long the connection sat idle before the current request was sent on it.
    rested: Duration,
    /// Pause before re-opening a connection the server dropped before any answer; doubles
    /// each time it happens again, back to zero once an answer arrives.
    backoff: Duration,
    /// Not re-opened before this instant.
    reopen_at: Instant,
    /// Rate mode: bytes nobody asked for arrived on this connection while it was idle; the
    /// next request the schedule gives it is counted as their malformed answer.
    owes: bool,
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
    idle: Vec<usize>,
    deferred: Vec<usize>,
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
    live.publish(rec.counts.completed, rec.counts.failed());
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

impl EventLoop for Worker<'_> {
    fn begin(&mut self, start: Instant, end: Option<Instant>) {
        self.start = start;
        self.end = end;
        self.rec.restart(start);
    }

    fn run(&mut self, stop: &AtomicBool, live: &Live) -> io::Result<bool> {
        self.event_loop(stop, live)
    }

    fn end(mut self, _ended: Instant) -> (Recorder, Option<(Pacer, Schedule)>) {
        for c in &self.conns {
            if c.busy {
                self.rec.counts.aborted += 1;
            }
        }
        (self.rec, self.pacer.map(|p| (p, self.sched)))
    }

    fn deadline(&self) -> Option<Instant> {
        self.end
    }
}

/// Builds the worker; in rate mode also opens its connections, so the schedule starts
/// with connections ready.
fn set_up<'a>(sh: &'a Shared<'a>, a: Assignment) -> io::Result<Worker<'a>> {
    let now = Instant::now();
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
                busy: false,
                parser: ResponseParser::new(sh.head_request, sh.expect.body_contains.as_deref()),
                written: 0,
                start: now,
                sent: now,
                first_byte: None,
                connect_began: now,
                connect: Duration::ZERO,
                reused: false,
                retried: false,
                peer_closed: false,
                idle_at: now,
                rested: Duration::ZERO,
                backoff: Duration::ZERO,
                reopen_at: now,
                owes: false,
            })
            .collect(),
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
        pacer: a.rate.map(|rate| Pacer {
            rate,
            budget: a.budget,
            duration: sh.duration,
        }),
        sched: Schedule::default(),
        idle: Vec::with_capacity(a.connections),
        deferred: Vec::new(),
    };
    for c in &mut w.conns {
        c.parser.want_server();
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

    /// Runs until the share is done, the deadline passes or `stop` is set (returns true then).
    fn event_loop(&mut self, stop: &AtomicBool, live: &Live) -> io::Result<bool> {
        let now = Instant::now();
        if self.pacer.is_none() {
            for i in 0..self.conns.len() {
                if self.claim(now) {
                    self.start_request(i, now);
                }
            }
        }
        let tick = (self.sh.timeout.min(self.sh.connect_timeout) / 10)
            .clamp(Duration::from_millis(1), Duration::from_millis(100));
        let mut next_tick = now + tick;
        let mut events = Events::with_capacity(1024);
        loop {
            let now = Instant::now();
            if stop.load(Ordering::Relaxed) {
                return Ok(true);
            }
            if self.end.is_some_and(|e| now >= e) {
                return Ok(false);
            }
            if now >= next_tick {
                self.tick(now);
                live.publish(self.rec.counts.completed, self.rec.counts.failed());
                next_tick = now + tick;
            }
            let mut wait = next_tick - now;
            if let Some(end) = self.end {
                wait = wait.min(end - now);
            }
            if self.pacer.is_some() {
                match self.dispatch(now) {
                    Dispatch::At(due) => self.timer.arm(due),
                    // Done when nothing is in flight, unless the run is bounded by time: then
                    // it lasts its whole duration, so rates are per the time asked for.
                    Dispatch::Finished
                        if self.in_flight == 0
                            && (self.end.is_none()
                                || self.budget.is_some_and(|b| self.sched.sent >= b)) =>
                    {
                        return Ok(false)
                    }
                    Dispatch::Finished | Dispatch::Blocked => {}
                }
            } else if self.budget.is_some_and(|b| self.claimed >= b) && self.in_flight == 0 {
                return Ok(false);
            }
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in events.iter() {
                if ev.token() == TIMER {
                    self.timer.clear();
                    continue;
                }
                let closed = ev.is_read_closed() || ev.is_error();
                self.event(
                    ev.token().0,
                    ev.is_readable() || closed,
                    ev.is_writable(),
                    closed,
                );
            }
        }
    }

    /// Sends every request that is due and has a free connection.
    fn dispatch(&mut self, now: Instant) -> Dispatch {
        let Some(pacer) = self.pacer else {
            return Dispatch::Finished;
        };
        loop {
            match pacer.next(now.saturating_duration_since(self.start), self.sched.sent) {
                Pacing::Stop => return Dispatch::Finished,
                Pacing::Wait(w) => return Dispatch::At(now + w),
                Pacing::Due { late } => {
                    let Some(i) = self.idle.pop() else {
                        // No free connection: the request waits, and its latency with it.
                        return Dispatch::Blocked;
                    };
                    if late > LATE {
                        self.sched.late += 1;
                    }
                    self.sched.max_lag = self.sched.max_lag.max(late);
                    let due = self.start + pacer.due(self.sched.sent);
                    self.sched.sent += 1;
                    if self.conns[i].owes {
                        // This request's answer is what the connection received unasked:
                        // malformed. The connection is replaced at the schedule's pace.
                        self.conns[i].owes = false;
                        self.rec
                            .failed(&Timing::unsent(due, now), FailureKind::Malformed);
                        self.open(i, now);
                        continue;
                    }
                    let c = &mut self.conns[i];
                    c.busy = true;
                    c.start = due;
                    c.connect = Duration::ZERO;
                    c.retried = false;
                    c.rested = now.saturating_duration_since(c.idle_at);
                    self.in_flight += 1;
                    self.send(i, now);
                }
            }
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

    /// Gives connection `i` a new request (closed loop): on it if open, else on a new one.
    fn start_request(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.busy = true;
        c.start = now;
        c.connect = Duration::ZERO;
        c.retried = false;
        c.rested = Duration::ZERO;
        self.in_flight += 1;
        if c.phase == Phase::Closed {
            self.open(i, now);
        } else {
            self.send(i, now);
        }
    }

    /// What connection `i` does after its request ended.
    fn next(&mut self, i: usize, now: Instant) {
        if self.pacer.is_some() {
            match self.conns[i].phase {
                Phase::Closed => self.open(i, now),
                _ => self.park(i, now),
            }
        } else if self.claim(now) {
            self.start_request(i, now);
        } else {
            self.close(i);
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.connect_began = now;
        c.reused = false;
        c.peer_closed = false;
        match Transport::connect(self.sh, self.poll.registry(), Token(i)) {
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
    }

    /// Puts open connection `i` in the pool of idle ones (rate mode).
    fn park(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.phase = Phase::Idle;
        c.idle_at = now;
        self.idle.push(i);
    }

    fn timing(&self, i: usize, end: Instant) -> Timing {
        let c = &self.conns[i];
        Timing {
            start: c.start,
            sent: c.sent,
            first_byte: c.first_byte.unwrap_or(end),
            end,
            connect: c.connect,
        }
    }

    /// The request on `i` ended without an answer.
    fn fail(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let t = self.timing(i, now);
        self.rec.failed(&t, kind);
        self.conns[i].busy = false;
        self.in_flight -= 1;
    }

    fn connect_failed(&mut self, i: usize, now: Instant) {
        self.close(i);
        self.rec.counts.connections_failed += 1;
        if self.conns[i].busy {
            self.fail(i, now, FailureKind::Connect);
        }
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
                self.rec.counts.connections_opened += 1;
                c.connect = now.saturating_duration_since(c.connect_began);
                if readable {
                    // Edge-triggered: this edge is the only notice of those bytes.
                    return self.before_request(i, now);
                }
                if c.busy {
                    self.send(i, now);
                } else {
                    self.park(i, now);
                }
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    /// An idle connection became readable.
    fn on_idle_readable(&mut self, i: usize) {
        self.idle.retain(|&j| j != i);
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
                let c = &mut self.conns[i];
                if c.busy {
                    return self.send(i, now);
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
        if self.conns[i].busy {
            // Closed at accept, with this connection's request not sent yet: the same failure
            // as had the close come just after the send.
            return self.lost(i, now);
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
        self.close(i);
        if self.conns[i].busy {
            self.fail(i, now, FailureKind::Malformed);
        } else if self.pacer.is_some() {
            // Charged when the schedule next picks this connection: a server that greets
            // every new connection with bytes is still met at the rate asked for.
            self.conns[i].owes = true;
            self.idle.push(i);
            return;
        } else if self.claim(now) {
            self.rec
                .failed(&Timing::unsent(now, now), FailureKind::Malformed);
        }
        self.next(i, now);
    }

    fn send(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        if !c.retried {
            // A retried request keeps the time of its first send: its latency counts from it.
            c.sent = now;
        }
        c.written = 0;
        c.first_byte = None;
        c.parser.reset();
        c.phase = Phase::Writing;
        self.write(i);
    }

    fn write(&mut self, i: usize) {
        let req = &self.sh.request;
        let c = &mut self.conns[i];
        let Some(io) = c.io.as_mut() else { return };
        if c.phase == Phase::Reading {
            // TLS: send records still buffered.
            if io.flush().is_err() {
                self.lost(i, Instant::now());
            }
            return;
        }
        while c.written < req.len() {
            match io.write(&req[c.written..]) {
                Ok(n) => c.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.lost(i, Instant::now()),
            }
        }
        self.rec.counts.bytes_sent += req.len() as u64;
        c.phase = Phase::Reading;
    }

    /// Reads until the answer is complete or the socket is drained. With edge-triggered
    /// events a short read proves it drained, unless the peer also closed: that close
    /// comes with no further edge, so then reads go on until they return 0 or an error.
    fn read(&mut self, i: usize, closed: bool) {
        loop {
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
            if c.first_byte.is_none() {
                c.first_byte = Some(now);
            }
            match c.parser.feed(&self.buf[..n]) {
                Ok(Progress::NeedMore) => {}
                Ok(Progress::Done { consumed }) if consumed < n => {
                    return self.answered_with_extra(i, now)
                }
                Ok(Progress::Done { .. }) => return self.answered(i, now),
                Err(_) => {
                    self.close(i);
                    self.fail(i, now, FailureKind::Malformed);
                    return self.next(i, now);
                }
            }
            if drains && n < self.buf.len() {
                return;
            }
        }
    }

    /// The peer closed the stream while a request was in flight.
    fn eof(&mut self, i: usize) {
        let now = Instant::now();
        match self.conns[i].parser.eof() {
            Ok(()) => self.answered(i, now),
            Err(ParseError::Closed | ParseError::Malformed) => self.lost(i, now),
        }
    }

    /// The connection broke (closed, reset, write error) while a request was in flight.
    fn lost(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        let handshaking =
            c.io.as_ref()
                .and_then(|io| io.tls.as_ref())
                .is_some_and(|t| t.is_handshaking());
        // The idle-close race: the server's keep-alive timer closed the connection as the
        // request went out. Anything else (a busy connection, a byte of the answer, a
        // method that is not idempotent, a second time) is a failure.
        let raced = c.parser.seen == 0
            && c.reused
            && !c.retried
            && c.rested >= IDLE_BEFORE_RETRY
            && now.saturating_duration_since(c.sent) <= RACE_WINDOW
            && self.sh.idempotent;
        self.close(i);
        if raced {
            self.rec.counts.reconnects += 1;
            self.rec.counts.retried += 1;
            let c = &mut self.conns[i];
            c.retried = true;
            return self.open(i, now);
        }
        let kind = if handshaking {
            FailureKind::Connect
        } else {
            FailureKind::Reset
        };
        if handshaking {
            self.rec.counts.connections_failed += 1;
        }
        self.fail(i, now, kind);
        self.next(i, now);
    }

    /// A complete answer arrived on `i`, followed in the same read by bytes its framing did
    /// not announce (a second answer, a body a 204 may not have, a length that lies).
    fn answered_with_extra(&mut self, i: usize, now: Instant) {
        self.credit(i, now);
        let c = &self.conns[i];
        if c.parser.close || !self.sh.keepalive || c.written < self.sh.request.len() {
            // The connection ends here anyway: what follows would never have been read.
            self.close(i);
            return self.next(i, now);
        }
        self.unsolicited(i, now);
    }

    /// A complete answer arrived on `i`: credit it, then reuse or replace the connection.
    fn answered(&mut self, i: usize, now: Instant) {
        self.credit(i, now);
        let c = &self.conns[i];
        let close = c.parser.close
            || c.peer_closed
            || !self.sh.keepalive
            || c.written < self.sh.request.len();
        let server_closed = c.parser.close || c.peer_closed;
        if close {
            self.close(i);
        }
        self.next(i, now);
        // A keep-alive connection the server closed, replaced to go on: a reconnect.
        if close && server_closed && self.sh.keepalive && self.conns[i].phase == Phase::Connecting {
            self.rec.counts.reconnects += 1;
        }
    }

    /// Records the answer on `i` against its request, which ends.
    fn credit(&mut self, i: usize, now: Instant) {
        let t = self.timing(i, now);
        let c = &mut self.conns[i];
        let answer = Answer {
            status: c.parser.status,
            body_len: c.parser.body_len,
            matched: c.parser.matched,
        };
        let server = &mut c.parser.server;
        self.rec
            .credit(&t, answer, || server.take(), &self.sh.expect);
        c.busy = false;
        c.reused = true;
        c.backoff = Duration::ZERO;
        self.in_flight -= 1;
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
                Phase::Writing | Phase::Reading
                    if c.busy && now.saturating_duration_since(c.sent) >= self.sh.timeout =>
                {
                    self.close(i);
                    self.fail(i, now, FailureKind::Timeout);
                    self.next(i, now);
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
            if self.pacer.is_some() {
                self.open(i, now);
            } else if self.claim(now) {
                self.start_request(i, now);
            }
        }
    }
}
