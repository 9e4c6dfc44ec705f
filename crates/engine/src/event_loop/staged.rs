//! The events of a connection that goes through [`Stage`]s over a byte stream — TCP (and
//! TLS) connect, the protocol's handshake (HTTP/2's prefaces and SETTINGS, WebSocket's
//! upgrade), then open — decided once for the protocols that have them: a connect that
//! completes starts the handshake with the first write; a connection is written when
//! writable and read when readable, and only while it is still handshaking or open (a
//! connection closed, or replaced by a new one still connecting, while its event was
//! handled is left to its own events).

use super::table::Stage;
use super::Protocol;
use crate::transport::Transport;
use std::time::Instant;

/// A protocol whose connections go connecting → handshake → open over a [`Transport`]:
/// it says what writing and reading one of them does, and what its connect completing
/// means to it; the order of those on an event is [`Staged::staged_event`]'s.
pub(crate) trait Staged<'a>: Protocol<'a, Phase = Stage, Socket = Transport> {
    /// Connection `i`'s TCP connect completed at `now` (it enters its handshake next).
    fn connected(&mut self, _i: usize, _now: Instant) {}

    /// Writes what connection `i` has to send, as far as the socket takes it.
    fn flush(&mut self, i: usize, now: Instant);

    /// Reads connection `i` (until drained or the loop's read budget is spent);
    /// `closed`: the peer closed or reset the stream, so reads go on until they say so.
    fn read(&mut self, i: usize, now: Instant, closed: bool);

    /// An event on connection `i`: its socket is `readable`, `writable`, or `closed` by
    /// the peer.
    fn staged_event(&mut self, i: usize, readable: bool, writable: bool, closed: bool) {
        let Some(c) = self.table().get(i) else { return };
        let now = Instant::now();
        match c.phase() {
            Stage::Closed => {}
            Stage::Connecting => {
                if self.tcp_connected(i, now) {
                    self.connected(i, now);
                    self.parts().1.set_phase(i, Stage::Handshake);
                    self.flush(i, now);
                    if readable && self.talking(i) {
                        self.read(i, now, closed);
                    }
                }
            }
            Stage::Handshake | Stage::Open => {
                if writable {
                    self.flush(i, now);
                }
                if readable && self.talking(i) {
                    self.read(i, now, closed);
                }
            }
        }
    }

    /// Connection `i` is handshaking or open: its socket is the one its event was for.
    fn talking(&self, i: usize) -> bool {
        matches!(self.table()[i].phase(), Stage::Handshake | Stage::Open)
    }
}
