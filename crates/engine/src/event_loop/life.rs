//! What every protocol's connection goes through the same way: it is opened (connect
//! time measured from here), it may fail to open or be dropped before any answer (then it
//! waits before the next try, a pause that doubles each time up to [`MAX_BACKOFF`] and
//! returns to zero once an answer arrives), and it is opened again when its pause is over
//! (the worker's sweep, [`super::Core::reopen_due`]).

use super::MAX_BACKOFF;
use std::time::{Duration, Instant};

/// One connection's opening and re-opening.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Life {
    /// When the current connection began to open.
    pub began: Instant,
    /// How long the current connection took to open.
    pub connect: Duration,
    /// Pause before re-opening a connection the server dropped before any answer.
    pub backoff: Duration,
    /// Not re-opened before this instant.
    pub reopen_at: Instant,
    /// No request went on the current connection yet.
    fresh: bool,
}

impl Life {
    pub fn new(now: Instant) -> Life {
        Life {
            began: now,
            connect: Duration::ZERO,
            backoff: Duration::ZERO,
            reopen_at: now,
            fresh: true,
        }
    }

    /// A connection begins to open.
    pub fn opening(&mut self, now: Instant) {
        self.began = now;
        self.fresh = true;
    }

    /// When a closed loop's request sent on it `now` started, and the connect time it
    /// carries: the first ones on a new connection waited for it, so they start at its
    /// opening and carry its connect time; later ones start now, with none.
    pub fn carried(&self, now: Instant) -> (Instant, Duration) {
        if self.fresh {
            (self.began, self.connect)
        } else {
            (now, Duration::ZERO)
        }
    }

    /// Requests went on it: later ones carry no connect time.
    pub fn used(&mut self) {
        self.fresh = false;
    }

    /// It is open (TCP connected): its connect time is now known.
    pub fn opened(&mut self, now: Instant) -> Duration {
        self.connect = now.saturating_duration_since(self.began);
        self.connect
    }

    /// It is still opening past `limit`.
    pub fn overdue(&self, now: Instant, limit: Duration) -> bool {
        now.saturating_duration_since(self.began) >= limit
    }

    /// How long it has been open (since its connect completed).
    pub fn open_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.began + self.connect)
    }

    /// It was dropped before an answer: the pause before the next try doubles (at least
    /// 1 ms, at most [`MAX_BACKOFF`]).
    pub fn pause(&mut self, now: Instant) {
        self.backoff = (self.backoff * 2).clamp(Duration::from_millis(1), MAX_BACKOFF);
        self.reopen_at = now + self.backoff;
    }

    /// An answer arrived: the server serves this connection, the next drop starts over.
    pub fn answered(&mut self) {
        self.backoff = Duration::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_up_to_the_limit_and_an_answer_resets_it() {
        let t0 = Instant::now();
        let mut l = Life::new(t0);
        let pauses: Vec<_> = (0..12)
            .map(|_| {
                l.pause(t0);
                l.reopen_at - t0
            })
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(&pauses[..4], &[ms(1), ms(2), ms(4), ms(8)]);
        assert_eq!(pauses[11], MAX_BACKOFF);
        l.answered();
        l.pause(t0);
        assert_eq!(l.reopen_at - t0, ms(1));
    }

    #[test]
    fn connect_time_counts_from_the_opening() {
        let t0 = Instant::now();
        let mut l = Life::new(t0);
        l.opening(t0 + Duration::from_millis(5));
        assert_eq!(
            l.opened(t0 + Duration::from_millis(12)),
            Duration::from_millis(7)
        );
        assert!(!l.overdue(t0 + Duration::from_millis(10), Duration::from_millis(6)));
        assert!(l.overdue(t0 + Duration::from_millis(11), Duration::from_millis(6)));
    }
}
