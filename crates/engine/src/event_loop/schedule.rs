//! How far a worker kept its open-loop schedule: requests due, sent, sent late, and of
//! those how many waited for a connection rather than for the generator itself.

use super::LATE;
use std::time::Duration;

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
    pub(super) starved: bool,
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
