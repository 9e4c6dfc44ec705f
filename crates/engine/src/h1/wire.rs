//! What both HTTP/1.1 workers (a request list's, [`super::worker`], and journeys' users,
//! [`super::users`]) do with a connection the same way: its phases on the loop, and
//! writing the requests its queue rendered.

use super::conn::Connection;
use crate::event_loop::Table;
use std::io;

/// Where a connection's socket is. `Writing` and `Reading` hold a non-empty queue; `Idle`
/// an empty one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No socket.
    Closed,
    /// The socket is connecting (or its TLS handshake has not begun).
    Connecting,
    /// Open, nothing in flight (rate mode: waiting for the schedule; a journey's user:
    /// thinking).
    Idle,
    /// Rendered bytes are still to be written.
    Writing,
    /// Everything written; answers awaited.
    Reading,
}

impl crate::event_loop::Phase for Phase {
    const CLOSED: Phase = Phase::Closed;
    const CONNECTING: Phase = Phase::Connecting;
    fn opening(self) -> bool {
        self == Phase::Connecting
    }
}

/// Writes what connection `i` rendered and has not written yet, as far as the socket
/// takes it, adding the bytes to `sent`; once all is written it awaits its answers
/// (`Reading`), or nothing (`Idle`). While it reads, only TLS records still buffered are
/// sent. An error: the connection broke.
pub(super) fn write<C: AsMut<Connection>>(
    conns: &mut Table<Phase, C>,
    i: usize,
    sent: &mut u64,
) -> io::Result<()> {
    let reading = conns[i].phase() == Phase::Reading;
    let c = &mut conns[i];
    let Some(io) = c.io.as_mut() else {
        return Ok(());
    };
    if reading {
        return io.flush().map(|_| ());
    }
    let h1 = c.c.as_mut();
    if !h1.write_with(|b| io.write(b), sent)? {
        return Ok(());
    }
    let phase = if h1.busy() {
        Phase::Reading
    } else {
        Phase::Idle
    };
    conns.set_phase(i, phase);
    Ok(())
}
