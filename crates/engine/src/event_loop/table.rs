//! A worker's connections as the loop keeps them, whichever protocol they speak
//! ([`Table`]): each one's phase (the protocol's own, which says for the loop whether it is
//! closed or still opening), its [`Life`], and the protocol's own state beside them. The
//! counts of connections open and opening follow every change of phase, so growth never
//! scans; in rate mode the table also lists the connections that may have room for a
//! request, most recently freed on top.

use super::Life;
use crate::transport::Transport;
use std::io;
use std::ops::{Deref, DerefMut, Index, IndexMut};
use std::time::Instant;

/// A protocol's phases of a connection, as far as the loop needs them.
pub(crate) trait Phase: Copy + Eq {
    /// No socket.
    const CLOSED: Self;
    /// Its socket is connecting.
    const CONNECTING: Self;
    /// Being set up: connecting, TLS, or the protocol's own handshake (HTTP/2's preface,
    /// WebSocket's upgrade); such a connection is failed past the connect timeout.
    fn opening(self) -> bool;
}

/// The phases of a connection that is set up in steps before it carries requests, with no
/// phase of its own while it does: HTTP/2 (TCP, TLS, then the preface and the server's
/// SETTINGS), WebSocket (then the upgrade) and HTTP/3 (its QUIC handshake is its
/// connecting; it has no handshake phase of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// No socket.
    Closed,
    /// TCP (and TLS), or QUIC's handshake, being set up.
    Connecting,
    /// The protocol's own handshake: waiting for the server's answer to it.
    Handshake,
    /// Requests may go.
    Open,
}

impl Phase for Stage {
    const CLOSED: Stage = Stage::Closed;
    const CONNECTING: Stage = Stage::Connecting;
    fn opening(self) -> bool {
        matches!(self, Stage::Connecting | Stage::Handshake)
    }
}

/// One connection: the loop's part (its phase, its [`Life`], its socket `S`: TCP, with TLS
/// over it when the target is https, unless the protocol says otherwise) and the
/// protocol's (`C`, which the entry derefs to).
pub(crate) struct Entry<P, C, S = Transport> {
    /// Changed only through [`Table::set_phase`], which keeps the counts.
    phase: P,
    /// Its opening, connect time and pause before re-opening.
    pub life: Life,
    /// In the table's list of connections with room (rate mode).
    listed: bool,
    /// It has been set up at least once (left an opening phase for an open one): a
    /// connection the server closed and that is opening again carried its share.
    was_open: bool,
    /// Its socket, while it has one.
    pub io: Option<S>,
    /// The protocol's own state of the connection.
    pub c: C,
}

impl<P: Copy, C, S> Entry<P, C, S> {
    /// Where the connection is.
    pub fn phase(&self) -> P {
        self.phase
    }
}

impl<P, C, S> Deref for Entry<P, C, S> {
    type Target = C;
    fn deref(&self) -> &C {
        &self.c
    }
}

impl<P, C, S> DerefMut for Entry<P, C, S> {
    fn deref_mut(&mut self) -> &mut C {
        &mut self.c
    }
}

/// A worker's connections, indexed by the token they are registered under.
pub(crate) struct Table<P, C, S = Transport> {
    conns: Vec<Entry<P, C, S>>,
    /// Connections whose phase is [`Phase::opening`].
    opening: usize,
    /// Connections not [`Phase::CLOSED`].
    live: usize,
    /// Rate mode: connections that may have room for a request.
    room: Vec<usize>,
}

impl<P: Phase, C, S> Table<P, C, S> {
    /// A table with room for `n` connections before it grows.
    pub fn with_capacity(n: usize) -> Table<P, C, S> {
        Table {
            conns: Vec::with_capacity(n),
            opening: 0,
            live: 0,
            room: Vec::with_capacity(n),
        }
    }

    /// Adds a closed connection whose protocol state is `c`; its index.
    pub fn push(&mut self, c: C, now: Instant) -> usize {
        self.conns.push(Entry {
            phase: P::CLOSED,
            life: Life::new(now),
            listed: false,
            was_open: false,
            io: None,
            c,
        });
        self.conns.len() - 1
    }

    /// How many connections the worker drives.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// Connection `i`, if there is one (a token the worker did not give is none).
    pub fn get(&self, i: usize) -> Option<&Entry<P, C, S>> {
        self.conns.get(i)
    }

    /// Connection `i` enters `phase`; the counts follow.
    pub fn set_phase(&mut self, i: usize, phase: P) {
        let c = &mut self.conns[i];
        self.opening = self.opening + usize::from(phase.opening()) - usize::from(c.phase.opening());
        let live = |p: P| p != P::CLOSED;
        self.live = self.live + usize::from(live(phase)) - usize::from(live(c.phase));
        c.was_open |= c.phase.opening() && !phase.opening() && live(phase);
        c.phase = phase;
    }

    /// Connection `i` has its socket `io` (connecting).
    pub fn connecting(&mut self, i: usize, io: S) {
        self.conns[i].io = Some(io);
        self.set_phase(i, P::CONNECTING);
    }

    /// Connection `i`'s socket is dropped (closing it; that takes it out of the poll).
    pub fn close(&mut self, i: usize) {
        self.conns[i].io = None;
        self.set_phase(i, P::CLOSED);
    }

    /// Connection `i` has no socket.
    pub fn closed(&self, i: usize) -> bool {
        self.conns[i].phase == P::CLOSED
    }

    /// Connection `i` is being set up.
    pub fn is_opening(&self, i: usize) -> bool {
        self.conns[i].phase.opening()
    }

    /// Connections with a socket (open or opening), and of those the ones opening.
    pub fn live(&self) -> (usize, usize) {
        (self.live, self.opening)
    }

    /// Connections being set up.
    pub fn opening(&self) -> usize {
        self.opening
    }

    /// Connections being set up that never were before: the connections asked for that
    /// carried nothing (counted once, when the run ends). One opening again after the
    /// server closed it (a server that closes each connection after its answer) is not
    /// among them.
    pub fn never_open(&self) -> usize {
        self.conns
            .iter()
            .filter(|c| c.phase.opening() && !c.was_open)
            .count()
    }

    /// Closed connection `i` may open again at this instant; `None` when it is not closed
    /// (for [`super::Core::reopen_due`]).
    pub fn reopen_at(&self, i: usize) -> Option<Instant> {
        let c = &self.conns[i];
        (c.phase == P::CLOSED).then_some(c.life.reopen_at)
    }

    /// Rate mode: connection `i` may have room for a request; listed unless it is already.
    pub fn list(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if !c.listed {
            c.listed = true;
            self.room.push(i);
        }
    }

    /// Rate mode: the most recently listed connection that `has_room` says has room for a
    /// request now, kept listed (it may have more); those on top without room are taken
    /// off the list.
    pub fn with_room(&mut self, has_room: impl Fn(&Entry<P, C, S>) -> bool) -> Option<usize> {
        while let Some(&i) = self.room.last() {
            if has_room(&self.conns[i]) {
                return Some(i);
            }
            self.room.pop();
            self.conns[i].listed = false;
        }
        None
    }

    /// Rate mode, after set-up: the connections opened ahead of need are taken in the
    /// order they began to open (the order a server accepts them); later, the most
    /// recently freed first.
    pub fn first_opened_first(&mut self) {
        self.room.sort_unstable_by(|a, b| b.cmp(a));
    }
}

impl<P: Phase, C> Table<P, C, Transport> {
    /// Connection `i`'s TCP connect completed (`Ok(false)`: not yet, or no socket).
    pub fn connected(&self, i: usize) -> io::Result<bool> {
        let io = self.conns[i].io.as_ref();
        io.map_or(Ok(false), |io| io.socket.connected())
    }

    /// Connection `i` is still connecting, or its TLS handshake is not done: it broke
    /// before it was set up.
    pub fn still_connecting(&self, i: usize) -> bool {
        let c = &self.conns[i];
        let tls = c.io.as_ref().and_then(|io| io.tls.as_ref());
        c.phase == P::CONNECTING || tls.is_some_and(|t| t.is_handshaking())
    }
}

impl<P, C, S> Index<usize> for Table<P, C, S> {
    type Output = Entry<P, C, S>;
    fn index(&self, i: usize) -> &Entry<P, C, S> {
        &self.conns[i]
    }
}

impl<P, C, S> IndexMut<usize> for Table<P, C, S> {
    fn index_mut(&mut self, i: usize) -> &mut Entry<P, C, S> {
        &mut self.conns[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum P {
        Closed,
        Connecting,
        Handshake,
        Open,
    }

    impl Phase for P {
        const CLOSED: P = P::Closed;
        const CONNECTING: P = P::Connecting;
        fn opening(self) -> bool {
            matches!(self, P::Connecting | P::Handshake)
        }
    }

    #[test]
    fn the_counts_follow_every_change_of_phase() {
        let now = Instant::now();
        let mut t: Table<P, (), ()> = Table::with_capacity(2);
        let (a, b) = (t.push((), now), t.push((), now));
        assert_eq!(t.live(), (0, 0));
        t.set_phase(a, P::Connecting);
        t.set_phase(a, P::Handshake);
        t.set_phase(b, P::Connecting);
        assert_eq!(t.live(), (2, 2));
        t.set_phase(a, P::Open);
        assert_eq!(t.live(), (2, 1));
        t.set_phase(b, P::Closed);
        t.set_phase(b, P::Closed);
        assert_eq!(t.live(), (1, 0));
        assert_eq!(t.reopen_at(b), Some(now));
        assert_eq!(t.reopen_at(a), None);
    }

    #[test]
    fn a_connection_is_listed_once_and_dropped_when_it_has_no_room() {
        let now = Instant::now();
        let mut t: Table<P, u32, ()> = Table::with_capacity(3);
        for room in [1, 0, 2] {
            let i = t.push(room, now);
            t.list(i);
            t.list(i);
        }
        assert_eq!(t.with_room(|c| c.c > 0), Some(2));
        t[2].c = 0;
        // 2 has no room left, nor has 1: both leave the list, 0 is next.
        assert_eq!(t.with_room(|c| c.c > 0), Some(0));
        t.list(2);
        assert_eq!(t.room, vec![0, 2]);
    }
}
