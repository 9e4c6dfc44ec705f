//! How far a worker kept its open-loop schedule: requests due, sent, sent late, and of
//! those how many waited for a connection rather than for the generator itself; how late
//! every send was (a histogram of the lag); how many connections the schedule needed and
//! whether it met the cap on them.

use super::LATE;
use hdrhistogram::Histogram;
use std::time::Duration;

/// The longest lag the histogram tells apart (one hour, in µs); longer ones count as it.
const MAX_LAG_US: u64 = 3_600_000_000;

/// A histogram of send lags, in µs, three significant figures.
pub fn lag_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LAG_US, 3).expect("static bounds are valid")
}

/// How far one worker kept its schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Requests due by the end.
    pub due: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests sent more than 1 ms after they were due.
    pub late: u64,
    /// Largest delay between due and send.
    pub max_lag: Duration,
    /// Of `late`, those sent after waiting for a connection (see [`Schedule::waiting`]).
    pub late_no_connection: u64,
    /// How late each send was, in µs (sends on time count as 0).
    pub lag: Histogram<u64>,
    /// The most connections open at once.
    pub peak_connections: usize,
    /// A request fell due with every connection busy and no more allowed (the cap).
    pub capped: bool,
    /// Time spent waiting for due times without sleeping (the last stretch before each;
    /// see the event loop's wake-up margin).
    pub spun: Duration,
    /// Requests answered more than 10 ms after they were sent, and after the answer to a
    /// request the worker sent later on another connection (HTTP/1.1). A server that serves
    /// one connection at a time per worker and sits on each it accepted until its request
    /// comes serves requests in the order it accepted their connections, not the order
    /// they were sent: these waited while it was on another connection (or they took
    /// longer to process).
    pub overtaken: u64,
    /// A request fell due with no connection free, and the schedule has not caught up
    /// since.
    pub(super) starved: bool,
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            due: 0,
            sent: 0,
            late: 0,
            max_lag: Duration::ZERO,
            late_no_connection: 0,
            lag: lag_histogram(),
            peak_connections: 0,
            capped: false,
            spun: Duration::ZERO,
            overtaken: 0,
            starved: false,
        }
    }
}

impl Schedule {
    /// A request fell due and no connection had room for it: every connection had its
    /// requests outstanding, a new one was still opening, or the server was turning
    /// connections away. Until the schedule catches up, late sends waited for a connection
    /// (the server's pace, or its accepting, was the limit), not for the generator.
    pub fn waiting(&mut self) {
        self.starved = true;
    }

    /// As [`Schedule::waiting`], with the cap on connections reached: the cap held the
    /// schedule back.
    pub fn capped(&mut self) {
        self.capped = true;
        self.starved = true;
    }

    /// The next request is not due yet: the schedule is kept again.
    pub fn caught_up(&mut self) {
        self.starved = false;
    }

    /// A request due `late` ago goes out now (before `sent` counts it): late past
    /// [`LATE`] counts as late, and as waiting for a connection when it `waited` for one
    /// (it was given to a connection still opening) or the schedule is starved, else as
    /// the generator's own delay.
    pub fn sending(&mut self, late: Duration, waited: bool) {
        if late > LATE {
            self.late += 1;
            if waited || self.starved {
                self.late_no_connection += 1;
            }
        }
        self.max_lag = self.max_lag.max(late);
        let us = u64::try_from(late.as_micros()).unwrap_or(MAX_LAG_US);
        self.lag.saturating_record(us.min(MAX_LAG_US));
    }
}
