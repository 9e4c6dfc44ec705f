//! Closing a connection so that the server hears why: after a connection error the
//! engine has written GOAWAY with its code (RFC 9113 §5.4.1), and a plain `close` of a
//! socket with unread bytes, or one the server is still writing to, makes the kernel send
//! a TCP reset that can overtake the GOAWAY and leave the server's log with nothing
//! useful. So the socket is handed to [`Closing`]: its side is shut (after TLS
//! close_notify), it leaves the worker's poll (its token goes to the connection that
//! replaces it at once), and what the server still sends is read and dropped at each
//! tick until the server closes or [`LINGER`] passes.
//!
//! Bounded: at most [`MAX_LINGERING`] sockets per worker linger (more are closed at
//! once), each for at most [`LINGER`], drained at most [`DRAIN_PER_SWEEP`] bytes a sweep.

use crate::transport::{Socket, Transport};
use mio::Registry;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The longest a closed connection waits for the server to close its side.
pub const LINGER: Duration = Duration::from_secs(1);

/// The most sockets one worker keeps lingering.
pub const MAX_LINGERING: usize = 256;

/// The most bytes read from one lingering socket per sweep.
const DRAIN_PER_SWEEP: usize = 256 * 1024;

/// A worker's lingering sockets.
#[derive(Default)]
pub(crate) struct Closing {
    sockets: Vec<(Socket, Instant)>,
}

impl Closing {
    /// Closes `io` gracefully: TLS close_notify, our side shut, then kept until the server
    /// closes or `now + LINGER`.
    pub fn add(&mut self, mut io: Transport, registry: &Registry, now: Instant) {
        if let Some(tls) = io.tls.as_mut() {
            tls.send_close_notify();
            let _ = io.flush();
        }
        let mut socket = io.socket;
        let _ = registry.deregister(&mut socket);
        if socket.shutdown_write().is_err() || self.sockets.len() >= MAX_LINGERING {
            return;
        }
        self.sockets.push((socket, now + LINGER));
    }

    /// At the end of the run: lingers on what is left, each socket until its server
    /// closes or its time is up, waiting in `poll(2)` for their bytes; `stop` (the user's
    /// interrupt) ends it at once.
    pub fn finish(&mut self, buf: &mut [u8], stop: &std::sync::atomic::AtomicBool) {
        use std::sync::atomic::Ordering;
        let mut fds: Vec<libc::pollfd> = Vec::new();
        loop {
            let now = Instant::now();
            self.sweep(now, buf);
            if self.sockets.is_empty() || stop.load(Ordering::Relaxed) {
                return;
            }
            fds.clear();
            fds.extend(self.sockets.iter().map(|(s, _)| libc::pollfd {
                fd: s.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }));
            let until = self.sockets.iter().map(|(_, u)| *u).min().unwrap_or(now);
            // At most 50 ms at a time, so an interrupt is seen soon.
            let wait = until
                .saturating_duration_since(now)
                .min(Duration::from_millis(50));
            // SAFETY: `fds` is a live array of `fds.len()` pollfd structures we own.
            unsafe {
                libc::poll(
                    fds.as_mut_ptr(),
                    fds.len() as libc::nfds_t,
                    wait.as_millis().max(1) as libc::c_int,
                );
            }
        }
    }

    /// Reads and drops what lingering sockets received; closes those the server closed
    /// and those whose time is up.
    pub fn sweep(&mut self, now: Instant, buf: &mut [u8]) {
        self.sockets.retain_mut(|(socket, until)| {
            if now >= *until {
                return false;
            }
            let mut read = 0;
            while read < DRAIN_PER_SWEEP {
                match socket.read(buf) {
                    Ok(0) => return false,
                    Ok(n) => read += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return false,
                }
            }
            true
        });
    }
}
