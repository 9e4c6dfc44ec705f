//! [`Shared`]: the state a server's handle, accept thread and connection threads share
//! (counters, the last request, the registry of open sockets), and [`Delivery`], how
//! connections hand their bytes to the kernel.
//!
//! Seams: [`crate::server`] makes one `Shared` per server and reads its counters;
//! [`crate::conn`] updates them. Neither of those modules imports the other's state, so
//! the dependency runs one way: server → conn → shared.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::behavior::Behavior;

/// How the server hands its bytes to the kernel; see [`crate::TestServer::start_with`].
///
/// A client must count the same things however TCP splits what it receives. Both modes
/// send the same bytes; they differ in the number of `write`s. Accepted sockets have
/// `TCP_NODELAY` in both modes, so a write is not held back waiting for the one before
/// it to be acknowledged (the kernel may still merge small writes that queue up behind
/// each other, so a client's reads can still return several bytes at a time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Delivery {
    /// Each planned write in one `write` call: a whole answer, or an answer and the
    /// bytes that go with it, as each [`Behavior`] describes.
    #[default]
    Whole,
    /// Every byte the server sends (answers, interim answers, `100 Continue`, refusals,
    /// unsolicited bytes, filler and chunks) in a `write` of its own, each followed by a
    /// flush and a `thread::yield_now()`, never a sleep. The pacing that behaviours do
    /// on purpose stays: `SlowHead` still pauses 1 ms after every 3 bytes of head, and
    /// delays and stalls are unchanged.
    Bytewise,
}

/// State shared by a server's handle, accept thread and connection threads.
pub(crate) struct Shared {
    pub(crate) behavior: Behavior,
    pub(crate) delivery: Delivery,
    /// A TLS connection's clean close sends `close_notify` before the FIN.
    pub(crate) close_notify: bool,
    pub(crate) requests: AtomicU64,
    pub(crate) answers: AtomicU64,
    pub(crate) unsolicited: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) connections: AtomicU64,
    pub(crate) open: AtomicU64,
    pub(crate) max_open: AtomicU64,
    /// Head and body length of the latest complete request.
    pub(crate) last: Mutex<(String, usize)>,
    pub(crate) stopped: Mutex<bool>,
    pub(crate) stop: Condvar,
    /// Open connections: id → socket descriptor.
    pub(crate) live: Mutex<HashMap<u64, RawFd>>,
    pub(crate) live_emptied: Condvar,
    /// Every distinct address connections came from.
    pub(crate) peers: Mutex<std::collections::BTreeSet<std::net::IpAddr>>,
    /// [`Behavior::Capacity`]: when the one desk is free again.
    pub(crate) desk: Mutex<Option<std::time::Instant>>,
}

impl Shared {
    pub(crate) fn new(behavior: Behavior, delivery: Delivery, close_notify: bool) -> Shared {
        Shared {
            behavior,
            delivery,
            close_notify,
            requests: AtomicU64::new(0),
            answers: AtomicU64::new(0),
            unsolicited: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            open: AtomicU64::new(0),
            max_open: AtomicU64::new(0),
            last: Mutex::new((String::new(), 0)),
            stopped: Mutex::new(false),
            stop: Condvar::new(),
            live: Mutex::new(HashMap::new()),
            live_emptied: Condvar::new(),
            peers: Mutex::default(),
            desk: Mutex::new(None),
        }
    }

    /// Takes the next turn at the desk for `service`: returns when this request is done.
    /// Turns follow each other exactly `service` apart however late a thread wakes, so the
    /// throughput is exactly one per `service` while requests queue.
    pub(crate) fn take_turn(&self, service: std::time::Duration) -> std::time::Instant {
        let now = std::time::Instant::now();
        let mut free = self.desk.lock().unwrap_or_else(|e| e.into_inner());
        let done = free.map_or(now, |f| f.max(now)) + service;
        *free = Some(done);
        done
    }

    /// The server's behaviour.
    pub fn behavior(&self) -> &Behavior {
        &self.behavior
    }

    /// How the server sends its bytes.
    pub fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// Counts one answer written, or (`undo`) takes back one whose last write failed.
    pub fn count_answer(&self, undo: bool) {
        if undo {
            self.answers.fetch_sub(1, Ordering::SeqCst);
        } else {
            self.answers.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Counts one occurrence of unsolicited bytes.
    pub fn count_unsolicited(&self) {
        self.unsolicited.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts `n` requests read and never answered.
    pub fn count_dropped(&self, n: u64) {
        if n > 0 {
            self.dropped.fetch_add(n, Ordering::SeqCst);
        }
    }

    /// Records a complete request and returns its server-wide number, 1-based.
    pub fn record(&self, head: String, body_len: u64) -> u64 {
        let mut last = lock(&self.last);
        *last = (head, usize::try_from(body_len).unwrap_or(usize::MAX));
        self.requests.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Waits `timeout` or until the server stops; `true` if it stopped.
    pub fn wait_for_stop(&self, timeout: Duration) -> bool {
        let stopped = lock(&self.stopped);
        let (stopped, _) = self
            .stop
            .wait_timeout_while(stopped, timeout, |stopped| !*stopped)
            .unwrap_or_else(PoisonError::into_inner);
        *stopped
    }

    /// Registers the open connection `id` on socket `fd`.
    pub fn enter(&self, id: u64, fd: RawFd) {
        let open = self.open.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_open.fetch_max(open, Ordering::SeqCst);
        lock(&self.live).insert(id, fd);
    }

    /// Stops counting one connection as open.
    pub fn leave(&self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }

    /// Forgets connection `id`; its socket is about to be closed.
    pub fn unregister(&self, id: u64) {
        let mut live = lock(&self.live);
        live.remove(&id);
        if live.is_empty() {
            self.live_emptied.notify_all();
        }
    }
}

/// Locks `mutex`, ignoring poisoning: the data stays meaningful after a panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
