//! The seam between the loop and a protocol ([`Protocol`]): what only the protocol knows
//! (opening and closing one connection's socket, room for a request, sending one, handling
//! its bytes, its requests' deadlines, its own timers) and, as provided methods, the life
//! cycle every protocol shares — growing, re-opening after a pause or when a request needs
//! it, failing a connect, sweeping the deadlines — decided here once over the protocol's
//! [`Table`] of connections.

use super::table::{Phase, Table};
use super::{deliver, resume, Core, CLOSED_AT_ACCEPT, OPENING_AHEAD};
use crate::recorder::Timing;
use crate::transport::{Got, Transport};
use mio::Events;
use shootout_model::FailureKind;
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What became of a due request handed to a connection ([`Protocol::begin`]).
pub(crate) enum Taken {
    /// It goes out now (or failed unsent, counted): its send is now.
    Sent,
    /// It waits on its connection, still opening; its send is counted when its bytes go
    /// out, as waiting for a connection.
    Queued,
    /// The connection could not take it after all (it is marked so): another is tried.
    Refused,
}

/// How [`Protocol::read_each`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// The socket is drained.
    Drained,
    /// The read budget is spent; there may be more.
    More,
    /// The peer closed the stream.
    Closed,
    /// The read failed (reset).
    Failed,
    /// The handler stopped the reads (or the connection has no socket).
    Stopped,
}

/// A protocol's table of connections.
pub(crate) type TableOf<'a, P> =
    Table<<P as Protocol<'a>>::Phase, <P as Protocol<'a>>::Conn, <P as Protocol<'a>>::Socket>;

/// A protocol's connections, as the event loop drives them. Each protocol keeps its own
/// connections (and their state machines) and a [`Core`]; the loop, the worker's life and
/// the decisions shared by every protocol are the provided methods and [`super::host`].
pub(crate) trait Protocol<'a>: Sized {
    /// The protocol's phases of a connection.
    type Phase: Phase;
    /// The protocol's own state of one connection (the loop's is beside it, in the
    /// [`Table`]).
    type Conn;
    /// A connection's socket.
    type Socket;
    /// The worker's shared state.
    fn core(&mut self) -> &mut Core<'a>;
    /// The same, to read.
    fn core_ref(&self) -> &Core<'a>;
    /// Gives up the shared state when the run ends.
    fn into_core(self) -> Core<'a>;
    /// The worker's connections.
    fn table(&self) -> &TableOf<'a, Self>;
    /// The shared state and the connections, both to change.
    fn parts(&mut self) -> (&mut Core<'a>, &mut TableOf<'a, Self>);
    /// A connection not opened yet (its protocol state).
    fn new_conn(&self, now: Instant) -> Self::Conn;
    /// Closed loop, at the start: puts every connection to work (by default, opens it).
    fn start(&mut self, now: Instant) {
        for i in 0..self.connections() {
            self.open(i, now);
        }
    }
    /// Rate mode: requests put back (their connection lost them unanswered, or a GOAWAY
    /// left them unprocessed) go out again before any new one ([`super::pace`]); false while one
    /// of them still waits for room. None by default.
    fn resend(&mut self, _now: Instant) -> bool {
        true
    }
    /// Rate mode: a request may wait on a connection still opening, written as soon as it
    /// is up (HTTP/1.1); otherwise a request waits for a connection open with room.
    const WAITS_ON_OPENING: bool = false;
    /// Rate mode: a connection with room for one more request now, if any (most recently
    /// freed first).
    fn with_room(&mut self) -> Option<usize>;
    /// Connection `i` is closed with nothing waiting on it: it may be opened again for a
    /// request (by default, when it is closed).
    fn spare(&self, i: usize) -> bool {
        self.table().closed(i)
    }
    /// Connections with a socket (open or opening), and of those the ones opening.
    fn live(&self) -> (usize, usize) {
        self.table().live()
    }
    /// Adds a connection, not opened yet; its index.
    fn add(&mut self, now: Instant) -> usize {
        let c = self.new_conn(now);
        self.parts().1.push(c, now)
    }
    /// Connection `i` is opening (it did not fail at once).
    fn is_opening(&self, i: usize) -> bool {
        self.table().is_opening(i)
    }
    /// Rate mode: a connection with room for one more request now. When there is none it
    /// opens one ([`Protocol::grow`]); the request waits for it (`None`), or on it when
    /// the protocol [`Protocol::WAITS_ON_OPENING`] (then [`Protocol::begin`] says
    /// [`Taken::Queued`]).
    fn room(&mut self, now: Instant) -> Option<usize> {
        if let Some(i) = self.with_room() {
            return Some(i);
        }
        let i = self.grow(now)?;
        Self::WAITS_ON_OPENING.then_some(i)
    }
    /// Rate mode: a request is due and no connection has room. Opens one — a closed one
    /// again, most recently closed first, or a new one — and says which, unless too many
    /// are opening already or [`Core::may_grow`] says no. One at a time when a request
    /// waits for a connection to open with room (its room will do for the next ones);
    /// when requests wait on the connections opening, one each, at most
    /// [`OPENING_AHEAD`] more than are open (a burst opens that many more per round trip).
    fn grow(&mut self, now: Instant) -> Option<usize> {
        let (live, opening) = self.live();
        let most = if Self::WAITS_ON_OPENING {
            live - opening + OPENING_AHEAD
        } else {
            1
        };
        if opening >= most {
            self.core().sched.waiting();
            return None;
        }
        // Entries of connections opened since are dropped.
        let mut spare = std::mem::take(&mut self.core().spare);
        let again = spare.ready(|i| self.spare(i));
        self.core().spare = spare;
        if !self.core().may_grow(live, again) {
            return None;
        }
        let i = match self.core().spare.pop() {
            Some(i) => i,
            None => self.add(now),
        };
        self.open(i, now);
        self.is_opening(i).then_some(i)
    }
    /// Rate mode: starts the request due at `due` on connection `i`, given by
    /// [`Protocol::room`].
    fn begin(&mut self, i: usize, due: Instant, now: Instant) -> Taken;
    /// Deadlines, re-opens and whatever else is swept at each tick (by default, the
    /// [`Protocol::sweep`]).
    fn tick(&mut self, now: Instant) {
        self.sweep(now);
    }
    /// The shortest interval [`Protocol::tick`] keeps besides the deadlines (WebSocket's
    /// hold mode: its pings), so ticks come at a tenth of it; none by default.
    fn ticks_for(&self) -> Option<Duration> {
        None
    }
    /// Readiness of connection `i`. Returns true when its reads stopped at
    /// [`super::READS_PER_EVENT`] with bytes perhaps left: the loop reads it again after its
    /// deadlines.
    fn event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) -> bool;
    /// Handling connection `i` panicked: whatever it carried fails, and it is replaced
    /// after a pause.
    fn on_panic(&mut self, i: usize, now: Instant) {
        self.fail_all(i, now, FailureKind::GeneratorFault);
        self.close(i);
        self.replace(i, now, true);
    }
    /// Every request connection `i` carries fails as `kind`.
    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind);
    /// Opens connection `i` (its phase then is an opening one, or it failed at once).
    fn open(&mut self, i: usize, now: Instant);
    /// Drops connection `i`'s socket; its phase is then [`Phase::CLOSED`].
    fn close(&mut self, i: usize) {
        self.parts().1.close(i);
    }
    /// Starts connecting connection `i` over TCP (and TLS), after the protocol made its
    /// state ready for a new connection: the usual body of [`Protocol::open`].
    fn dial(&mut self, i: usize, now: Instant)
    where
        Self: Protocol<'a, Socket = Transport>,
    {
        let (core, t) = self.parts();
        t[i].life.opening(now);
        match core.dial(i) {
            Ok(io) => t.connecting(i, io),
            Err(_) => self.connect_failed(i, now),
        }
    }
    /// Open connection `i`'s requests whose deadline passed fail as timeouts (swept at
    /// every tick).
    fn deadlines(&mut self, i: usize, now: Instant);
    /// Calls `each` with the start (the due time in rate mode, as its latency counts it)
    /// of every request the worker's connections hold, not ended: queued, written or
    /// partly answered, once each (those put back in [`Core::resend`] are not theirs).
    /// Asked once, when the run ends ([`super::left`]).
    fn each_in_flight(&self, each: &mut dyn FnMut(Instant));
    /// How many connections the worker drives.
    fn connections(&self) -> usize {
        self.table().len()
    }
    /// How many connections are still being set up (connecting, TLS, HTTP/2's preface,
    /// WebSocket's upgrade).
    fn opening(&self) -> usize {
        self.table().opening()
    }
    /// How many connections are being set up that never were before: counted when the
    /// run ends as connections that carried nothing ([`super::table::Table::never_open`]).
    fn never_open(&self) -> usize {
        self.table().never_open()
    }

    /// Closed loop: whether requests remain to be sent that a connection opened now would
    /// carry: requests wait to be sent again ([`Core::resend`]), or the time lasts and the
    /// budget holds more requests than the connections already being set up will take (each
    /// takes one at least, sent once it is set up or charged when it fails). A client opens
    /// a connection when it has a request: with two connections refused in turn, the last
    /// request's connection was opened while the other's, which would take it, was still
    /// connecting, and a run of 10 opened 11 or 12 by the timing.
    fn more(&self, now: Instant) -> bool {
        let core = self.core_ref();
        if !core.resend.is_empty() {
            return true;
        }
        if core.spent(now) {
            return false;
        }
        core.budget
            .is_none_or(|b| b.saturating_sub(core.claimed) > self.opening() as u64)
    }

    /// Connection `i` could not carry its work (it could not be set up): in a closed loop
    /// that consumes one request, failed as `kind` unsent, so that a run against a server
    /// that never opens a connection still ends by its count.
    fn charge(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let (core, t) = self.parts();
        if core.pacer.is_none() && core.claim(now) {
            core.rec
                .failed(&Timing::unsent(t[i].life.began, now, 0), kind);
        }
    }

    /// Connection `i` could not be set up (refused, TLS failed, the protocol's handshake
    /// failed, timed out): closed, counted, opened again at the next tick
    /// ([`Core::connect_failed`]), and its work [`Protocol::charge`]d as a connect failure.
    fn connect_failed(&mut self, i: usize, now: Instant) {
        self.close(i);
        let (core, t) = self.parts();
        core.connect_failed(i, &mut t[i].life, now);
        self.charge(i, now, FailureKind::Connect);
    }

    /// After connection `i` closed: a new one when work remains — after a pause that
    /// doubles each time when `pause` (it was dropped before it served), else now in a
    /// closed loop; in rate mode it is opened again when a request needs it.
    fn replace(&mut self, i: usize, now: Instant, pause: bool) {
        if !self.core_ref().paced() && !self.more(now) {
            return;
        }
        let (core, t) = self.parts();
        if pause {
            core.pause(i, &mut t[i].life, now);
        } else if core.paced() {
            core.spare.push(i);
        } else {
            self.open(i, now);
        }
    }

    /// Connection `i` broke: true when that is handled here — it was closed already, or
    /// it broke before it was set up (still connecting, or in its TLS handshake), which
    /// is a failed connect.
    fn broke_unopened(&mut self, i: usize, now: Instant) -> bool
    where
        Self: Protocol<'a, Socket = Transport>,
    {
        let t = self.table();
        if t.closed(i) {
            return true;
        }
        if t.still_connecting(i) {
            self.connect_failed(i, now);
            return true;
        }
        false
    }

    /// Connection `i` is connecting: whether its TCP connect completed (then the caller
    /// goes on with it); a failed one is a failed connect.
    fn tcp_connected(&mut self, i: usize, now: Instant) -> bool
    where
        Self: Protocol<'a, Socket = Transport>,
    {
        match self.table().connected(i) {
            Ok(done) => done,
            Err(_) => {
                self.connect_failed(i, now);
                false
            }
        }
    }

    /// Reads connection `i` until its socket is drained, or for at most
    /// [`super::READS_PER_EVENT`] reads (then [`Core::unfinished`] is set and the loop reads
    /// it again after the other connections' events), handing each read's bytes
    /// (`core.buf[..n]`) to `handle`, which says whether to go on reading (false: the
    /// connection closed, failed or was replaced). `closed`: the peer closed or reset the
    /// stream, so reads go on until they say so.
    fn read_each(
        &mut self,
        i: usize,
        closed: bool,
        mut handle: impl FnMut(&mut Self, usize) -> bool,
    ) -> Reads
    where
        Self: Protocol<'a, Socket = Transport>,
    {
        for _ in 0..super::READS_PER_EVENT {
            let (core, t) = self.parts();
            let Some(io) = t[i].io.as_mut() else {
                return Reads::Stopped;
            };
            let received = &mut core.rec.counts.bytes_received;
            let (n, drained) = match io.read_some(&mut core.buf, closed, received) {
                Got::Bytes { n, drained } => (n, drained),
                Got::Empty => return Reads::Drained,
                Got::Closed => return Reads::Closed,
                Got::Failed => return Reads::Failed,
            };
            if !handle(self, n) {
                return Reads::Stopped;
            }
            if drained {
                return Reads::Drained;
            }
        }
        self.core().unfinished = true;
        Reads::More
    }

    /// Connection `i` is spent (a GOAWAY said so and its requests all ended): closed and
    /// replaced at once, counted as a reconnect in a closed loop.
    fn retire(&mut self, i: usize, now: Instant) {
        self.close(i);
        if !self.core_ref().paced() {
            self.core().rec.counts.reconnects += 1;
        }
        self.replace(i, now, false);
    }

    /// Connection `i` (its requests failed, its socket closed) was closed by the server
    /// during the protocol's own handshake: a dropped connection in rate mode, one failed
    /// request in a closed loop; opened again after a pause.
    fn dropped_in_handshake(&mut self, i: usize, now: Instant) {
        if self.core_ref().paced() {
            self.core().rec.counts.dropped += 1;
        }
        self.charge(i, now, FailureKind::Reset);
        self.replace(i, now, true);
    }

    /// Open connection `i` (its requests failed, its socket closed) was closed by the
    /// server or broke. In a closed loop one that served (it `answered`, or a GOAWAY
    /// `spent` it) counts as a reconnect. It is replaced after a pause unless it answered,
    /// or it was opened ahead of need and sat idle past [`CLOSED_AT_ACCEPT`] (rate mode: a
    /// server's idle timeout closed it; it was not turned away).
    fn lost_open(&mut self, i: usize, now: Instant, answered: bool, spent: bool) {
        let paced = self.core_ref().paced();
        if (answered || spent) && !paced {
            self.core().rec.counts.reconnects += 1;
        }
        let rested = paced && self.table()[i].life.open_for(now) >= CLOSED_AT_ACCEPT;
        self.replace(i, now, !answered && !rested);
    }

    /// Closed connection `i`'s pause is over: in rate mode it waits for a request that
    /// needs it; in a closed loop it opens when work remains.
    fn reopen(&mut self, i: usize, now: Instant) {
        if self.core_ref().paced() {
            self.core().spare.push(i);
        } else if self.more(now) {
            self.open(i, now);
        }
    }

    /// At every tick: a connection still opening past the connect timeout failed to
    /// connect, an open one fails its requests past their deadline
    /// ([`Protocol::deadlines`]), and those whose pause is over are opened again
    /// ([`Protocol::reopen`]).
    fn sweep(&mut self, now: Instant) {
        let limit = self.core_ref().sh.connect_timeout;
        for i in 0..self.connections() {
            let c = &self.table()[i];
            if c.phase().opening() {
                if c.life.overdue(now, limit) {
                    self.connect_failed(i, now);
                }
            } else if c.phase() != Self::Phase::CLOSED {
                self.deadlines(i, now);
            }
        }
        let (core, t) = self.parts();
        for i in core.reopen_due(now, |i| t.reopen_at(i)) {
            self.reopen(i, now);
        }
    }
    /// A connection is still being set up (rate mode waits for them before the start).
    fn connecting(&self) -> bool {
        self.opening() > 0
    }

    /// Nothing under way that the run must wait for: no request in flight (a journey's
    /// user also waits out its think time).
    fn idle(&self) -> bool {
        self.core_ref().in_flight == 0
    }

    /// Closed loop: nothing under way and nothing more to send.
    fn closed_done(&mut self, now: Instant) -> bool {
        self.idle() && self.core_ref().spent(now)
    }

    /// The earliest instant a timer of the protocol's own is due (HTTP/3's QUIC timers:
    /// acknowledgement delay, loss detection, idle timeout); the loop waits no longer, and
    /// calls [`Protocol::wake`] once it has passed. The protocol keeps it (no scan here).
    fn next_wake(&self) -> Option<Instant> {
        None
    }

    /// [`Protocol::next_wake`] has passed: fire what is due.
    fn wake(&mut self, _now: Instant) {}

    /// After the loop, before the counts are final (a protocol closing gracefully uses it).
    fn wind_down(&mut self, _stop: &AtomicBool) {}

    /// See [`super::Output::streams_allowed`].
    fn streams_allowed(&self) -> Option<u64> {
        None
    }

    /// Rate mode, at set-up: opens every connection and waits (up to the connect timeout)
    /// until they are up, so the schedule starts with connections ready; those still
    /// connecting are left to the deadline sweep.
    fn connect_all(&mut self) -> io::Result<()> {
        let (sh, worker) = (self.core_ref().sh, self.core_ref().index);
        // Each opens in its turn among the workers' (see `turns`), at most a second waited.
        let turns_end = Instant::now() + sh.connect_timeout.min(Duration::from_secs(1));
        for i in 0..self.connections() {
            sh.turns.wait(worker, i, turns_end);
            self.open(i, Instant::now());
            sh.turns.taken();
        }
        let now = Instant::now();
        let deadline = now + sh.connect_timeout;
        let mut events = Events::with_capacity(1024);
        let mut again = Vec::new();
        while self.connecting() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            resume(self, &mut again);
            if self.next_wake().is_some_and(|w| now >= w) {
                self.wake(now);
            }
            let wait = if again.is_empty() {
                let until = self.next_wake().map_or(deadline, |w| w.min(deadline));
                until.saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            self.core().poll.poll(&mut events, Some(wait))?;
            deliver(self, &events, &mut again, None);
        }
        self.opened_ahead();
        Ok(())
    }

    /// Rate mode, at set-up, once the connections opened ahead of need are up: the order
    /// the schedule takes them in (by default, the order they began to open: the order a
    /// server accepts them; later, the most recently freed first).
    fn opened_ahead(&mut self) {
        self.parts().1.first_opened_first();
    }
}

/// The accessors of [`Protocol`] for a worker whose [`Core`] is its field `$core` and whose
/// [`Table`] of `$phase`s and `$conn`s is its field `$table`.
macro_rules! parts {
    ($l:lifetime, $phase:ty, $conn:ty, $core:ident, $table:ident) => {
        $crate::event_loop::parts!(
            $l,
            $phase,
            $conn,
            $crate::transport::Transport,
            $core,
            $table
        );
    };
    ($l:lifetime, $phase:ty, $conn:ty, $socket:ty, $core:ident, $table:ident) => {
        type Phase = $phase;
        type Conn = $conn;
        type Socket = $socket;
        fn core(&mut self) -> &mut $crate::event_loop::Core<$l> {
            &mut self.$core
        }
        fn core_ref(&self) -> &$crate::event_loop::Core<$l> {
            &self.$core
        }
        fn into_core(self) -> $crate::event_loop::Core<$l> {
            self.$core
        }
        fn table(&self) -> &$crate::event_loop::Table<$phase, $conn, $socket> {
            &self.$table
        }
        fn parts(
            &mut self,
        ) -> (
            &mut $crate::event_loop::Core<$l>,
            &mut $crate::event_loop::Table<$phase, $conn, $socket>,
        ) {
            (&mut self.$core, &mut self.$table)
        }
    };
}
pub(crate) use parts;
