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
//! expectation), failed without an answer, or aborted when the run ends.

use crate::pacer::{Pacer, Pacing};
use crate::parse::{ParseError, Progress, ResponseParser};
use crate::recorder::{Recorder, Timing};
use crate::sys;
use crate::transport::{Socket, Transport};
use crate::Live;
use mio::net::{TcpStream, UnixStream};
use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use shootout_model::{Expectation, FailureKind, FirstResponse, Record};
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
pub struct Shared {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// TLS client config and server name for https.
    pub tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    /// The request bytes.
    pub request: Vec<u8>,
    /// The request is a HEAD (answers have no body).
    pub head_request: bool,
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
    /// When the run started (every worker measures from it).
    pub start: Instant,
    /// The run ends at this instant, if bounded by time.
    pub end: Option<Instant>,
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
}

/// A request retried once when a reused connection closes before any byte of its answer:
/// the server closed an idle keep-alive connection as the request went out (the request
/// was never processed, as browsers also assume). A second such close is a failure.
const LATE: Duration = Duration::from_millis(1);

struct Worker<'a> {
    sh: &'a Shared,
    poll: Poll,
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
    first_len: Option<u64>,
}

/// Runs one worker to the end of its share; `stop` ends it early.
pub fn run(sh: &Shared, a: Assignment, stop: &AtomicBool, live: &Live) -> io::Result<Output> {
    if let Some(cpu) = a.cpu {
        // Pinning is best effort: a CPU outside the allowed set is reported by the caller.
        let _ = sys::pin_thread(cpu);
    }
    let began = Instant::now();
    let cpu0 = sys::thread_cpu();
    let keep_body = sh.expect.needs_body();
    let now = Instant::now();
    let mut w = Worker {
        sh,
        poll: Poll::new()?,
        conns: (0..a.connections)
            .map(|_| Conn {
                io: None,
                phase: Phase::Closed,
                busy: false,
                parser: ResponseParser::new(sh.head_request, keep_body),
                written: 0,
                start: now,
                sent: now,
                first_byte: None,
                connect_began: now,
                connect: Duration::ZERO,
                reused: false,
                retried: false,
            })
            .collect(),
        buf: vec![0u8; 64 * 1024].into_boxed_slice(),
        rec: Recorder::new(
            sh.start,
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
            duration: sh.end.map(|e| e - sh.start),
        }),
        sched: Schedule::default(),
        idle: Vec::with_capacity(a.connections),
        deferred: Vec::new(),
        first_len: None,
    };
    if let Some(c) = w.conns.first_mut() {
        c.parser.want_server();
    }
    let interrupted = w.event_loop(stop, live)?;
    let ended = match sh.end {
        Some(end) if !interrupted => Instant::now().min(end),
        _ => Instant::now(),
    };
    for c in &w.conns {
        if c.busy {
            w.rec.counts.aborted += 1;
        }
    }
    live.publish(w.rec.counts.completed, w.rec.counts.failed());
    w.rec.finish();
    let cpu1 = sys::thread_cpu();
    let schedule = w.pacer.map(|p| Schedule {
        due: p.due_by(ended.saturating_duration_since(sh.start)),
        ..w.sched
    });
    Ok(Output {
        rec: w.rec,
        cpu: (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1)),
        wall: began.elapsed(),
        ended,
        schedule,
        interrupted,
    })
}

impl Worker<'_> {
    /// Runs until the share is done, the deadline passes or `stop` is set (returns true then).
    fn event_loop(&mut self, stop: &AtomicBool, live: &Live) -> io::Result<bool> {
        let now = Instant::now();
        for i in 0..self.conns.len() {
            if self.pacer.is_some() {
                self.open(i, now);
            } else if self.claim(now) {
                self.start_request(i, now);
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
            if self.sh.end.is_some_and(|e| now >= e) {
                return Ok(false);
            }
            if now >= next_tick {
                self.tick(now);
                live.publish(self.rec.counts.completed, self.rec.counts.failed());
                next_tick = now + tick;
            }
            let mut wait = next_tick - now;
            if let Some(end) = self.sh.end {
                wait = wait.min(end - now);
            }
            if self.pacer.is_some() {
                match self.dispatch(now) {
                    Some(w) => wait = wait.min(w),
                    None if self.in_flight == 0 && self.idle.len() == self.conns.len() => {
                        return Ok(false)
                    }
                    None => {}
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
                let readable = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                self.event(ev.token().0, readable, ev.is_writable());
            }
        }
    }

    /// Sends every request that is due and has a free connection; returns how long until
    /// the next one is due (`None`: none is due again, or all connections are busy).
    fn dispatch(&mut self, now: Instant) -> Option<Duration> {
        let pacer = self.pacer?;
        loop {
            match pacer.next(
                now.saturating_duration_since(self.sh.start),
                self.sched.sent,
            ) {
                Pacing::Stop => return None,
                Pacing::Wait(w) => return Some(w),
                Pacing::Due { late } => {
                    let Some(i) = self.idle.pop() else {
                        // No free connection: the request waits, and its latency with it.
                        return Some(Duration::from_millis(1));
                    };
                    if late > LATE {
                        self.sched.late += 1;
                    }
                    self.sched.max_lag = self.sched.max_lag.max(late);
                    let due = self.sh.start + pacer.due(self.sched.sent);
                    self.sched.sent += 1;
                    let c = &mut self.conns[i];
                    c.busy = true;
                    c.start = due;
                    c.connect = Duration::ZERO;
                    c.retried = false;
                    self.in_flight += 1;
                    self.send(i, now);
                }
            }
        }
    }

    /// Takes one request from the budget, unless the budget or the time is spent.
    fn claim(&mut self, now: Instant) -> bool {
        if self.sh.end.is_some_and(|e| now >= e) || self.budget.is_some_and(|b| self.claimed >= b) {
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
                _ => {
                    self.conns[i].phase = Phase::Idle;
                    self.idle.push(i);
                }
            }
        } else if self.claim(now) {
            self.start_request(i, now);
        } else {
            self.close(i);
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        let socket = match &self.sh.endpoint {
            Endpoint::Tcp(addr) => TcpStream::connect(*addr).map(|s| {
                let _ = s.set_nodelay(true);
                Socket::Tcp(s)
            }),
            Endpoint::Unix(path) => UnixStream::connect(path).map(Socket::Unix),
        };
        let c = &mut self.conns[i];
        c.connect_began = now;
        c.reused = false;
        let mut socket = match socket {
            Ok(s) => s,
            Err(_) => return self.connect_failed(i, now),
        };
        if self
            .poll
            .registry()
            .register(
                &mut socket,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )
            .is_err()
        {
            return self.connect_failed(i, now);
        }
        let tls = match &self.sh.tls {
            Some((cfg, name)) => match ClientConnection::new(cfg.clone(), name.clone()) {
                Ok(t) => Some(Box::new(t)),
                Err(_) => return self.connect_failed(i, now),
            },
            None => None,
        };
        c.io = Some(Transport { socket, tls });
        c.phase = Phase::Connecting;
    }

    fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
        // Closing the socket removes it from the epoll set; no deregister call needed.
        c.io = None;
        c.phase = Phase::Closed;
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

    fn event(&mut self, i: usize, readable: bool, writable: bool) {
        let Some(c) = self.conns.get(i) else { return };
        match c.phase {
            Phase::Closed => {}
            Phase::Connecting => self.on_connecting(i),
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
                    self.read(i);
                }
            }
        }
    }

    fn on_connecting(&mut self, i: usize) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        let state = c.io.as_ref().map_or(Ok(false), |io| io.socket.connected());
        match state {
            Ok(false) => {}
            Ok(true) => {
                self.rec.counts.connections_opened += 1;
                if c.busy {
                    c.connect = now.saturating_duration_since(c.connect_began);
                    self.send(i, now);
                } else {
                    c.phase = Phase::Idle;
                    self.idle.push(i);
                }
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    /// An idle connection became readable: the server closed it (keep-alive timeout) or
    /// sent bytes nobody asked for. Either way it is replaced.
    fn on_idle_readable(&mut self, i: usize) {
        let Some(io) = self.conns[i].io.as_mut() else {
            return;
        };
        match io.read(&mut self.buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Ok(n) => self.rec.counts.bytes_received += n as u64,
            Err(_) => {}
        }
        self.idle.retain(|&j| j != i);
        self.close(i);
        self.rec.counts.reconnects += 1;
        self.open(i, Instant::now());
    }

    fn send(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.sent = now;
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

    fn read(&mut self, i: usize) {
        loop {
            let c = &mut self.conns[i];
            let Some(io) = c.io.as_mut() else { return };
            let drains = io.short_read_drains();
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
                Ok(Progress::Done { consumed }) => return self.answered(i, now, consumed < n),
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
            Ok(()) => self.answered(i, now, false),
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
        let stale = c.parser.seen == 0 && c.reused && !c.retried;
        self.close(i);
        if stale {
            self.rec.counts.reconnects += 1;
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

    /// A complete answer arrived on `i`; `extra` when more bytes followed it than its
    /// framing announced (a length that lies).
    fn answered(&mut self, i: usize, now: Instant, extra: bool) {
        if extra {
            self.close(i);
            self.fail(i, now, FailureKind::Malformed);
            return self.next(i, now);
        }
        let t = self.timing(i, now);
        let c = &mut self.conns[i];
        let (status, body_len) = (c.parser.status, c.parser.body_len);
        self.rec.counts.body_bytes += body_len;
        match self.first_len {
            None => {
                self.first_len = Some(body_len);
                self.rec.first = Some(FirstResponse {
                    status,
                    server: c.parser.server.take(),
                    body_len,
                });
            }
            Some(first) if first != body_len => self.rec.counts.length_mismatch += 1,
            Some(_) => {}
        }
        let ex = &self.sh.expect;
        let failure = if !ex.status.contains(status) {
            Some(FailureKind::Status)
        } else if ex.length.is_some_and(|l| l != body_len)
            || ex
                .body_contains
                .as_ref()
                .is_some_and(|needle| !contains(&c.parser.body, needle))
        {
            Some(FailureKind::Body)
        } else {
            None
        };
        self.rec.answered(&t, status, failure);
        c.busy = false;
        c.reused = true;
        self.in_flight -= 1;
        let close = c.parser.close || !self.sh.keepalive || c.written < self.sh.request.len();
        if close {
            if self.sh.keepalive {
                self.rec.counts.reconnects += 1;
            }
            self.close(i);
        }
        self.next(i, now);
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
            if self.pacer.is_some() {
                self.open(i, now);
            } else if self.claim(now) {
                self.start_request(i, now);
            }
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}
