//! How far a worker kept its open-loop schedule: requests due, sent, sent late, and of
//! those how many waited for a connection rather than for the generator itself; how late
//! every send was (a histogram of the lag); how many connections the schedule needed and
//! whether it met the cap on them; and the gaps between its first sends, to check them
//! against the arrival process asked for.

use super::pacer::Pacer;
use super::LATE;
use hdrhistogram::Histogram;
use std::time::Duration;

/// The longest lag the histogram tells apart (one hour, in µs); longer ones count as it.
const MAX_LAG_US: u64 = 3_600_000_000;

/// Sends whose lag is kept for the arrival check, per worker: the first ones. Enough for
/// a goodness-of-fit test to see a gap distribution off by a few percent, few enough to
/// keep it a small fixed cost (16 KiB a worker).
pub const ARRIVAL_SAMPLE: usize = 2000;

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
    /// Of the first [`ARRIVAL_SAMPLE`] requests sent the moment they fell due to a
    /// connection able to carry them (see [`Schedule::sent_now`]): each one's index in the
    /// schedule and how late it went out.
    pub(super) lags: Vec<(u64, Duration)>,
    /// The gaps between consecutive requests of that sample (each sent at its due time
    /// plus its lag) times the worker's rate: for Poisson arrivals kept, exponential with
    /// mean 1 (see [`Schedule::sent_gaps`]).
    pub gaps: Vec<f64>,
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
            lags: Vec::new(),
            gaps: Vec::new(),
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

    /// Request number `sent` goes out now, `late` after its due time, on a connection
    /// that carries it at once: counted as [`Schedule::sending`] says, sent, and kept in the
    /// arrival check's sample while it has room. A request queued on a connection still
    /// opening goes out later, out of turn, and is left out of the sample.
    pub fn sent_now(&mut self, late: Duration) {
        self.sending(late, false);
        if self.lags.len() < ARRIVAL_SAMPLE {
            self.lags.push((self.sent, late));
        }
        self.sent += 1;
    }

    /// The gaps between the sample's consecutive requests as they went out (request `k`
    /// at its due time plus its lag), in units of the schedule's mean gap (times the
    /// rate). Where a request between two of the sample is missing (queued on an opening
    /// connection), the gap across it is left out: it spans two draws.
    pub fn sent_gaps(&self, pacer: &Pacer) -> Vec<f64> {
        let mut walk = Pacer {
            memo: None,
            ..*pacer
        };
        let mut at = |k: u64, lag: Duration| {
            walk.advance(k);
            (walk.due(k) + lag).as_secs_f64()
        };
        let mut gaps = Vec::with_capacity(self.lags.len());
        let mut last: Option<(u64, f64)> = None;
        for &(k, lag) in &self.lags {
            let t = at(k, lag);
            if let Some((j, before)) = last {
                if k == j + 1 {
                    gaps.push((t - before) * pacer.rate);
                }
            }
            last = Some((k, t));
        }
        gaps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::Arrival;

    #[test]
    fn sent_gaps_are_the_drawn_gaps_when_sent_on_time_and_shorter_after_a_delay() {
        let pacer = Pacer {
            arrival: Arrival::Poisson { seed: 5 },
            ..Pacer::even(100.0, None, None)
        };
        let mut s = Schedule::default();
        for _ in 0..4 {
            s.sent_now(Duration::ZERO);
        }
        let drawn: Vec<f64> = (1..4)
            .map(|k| (pacer.due(k) - pacer.due(k - 1)).as_secs_f64() * 100.0)
            .collect();
        let got = s.sent_gaps(&pacer);
        assert_eq!(got.len(), 3);
        for (g, d) in got.iter().zip(&drawn) {
            assert!((g - d).abs() < 1e-6, "{got:?} {drawn:?}");
        }
        // Request 1 held 5 ms, 2 and 3 on time: the first gap grows by 0.5 mean gaps
        // (5 ms at 100 req/s), the second shrinks by as much.
        let mut late = Schedule::default();
        for lag in [0, 5, 0, 0] {
            late.sent_now(Duration::from_millis(lag));
        }
        let got = late.sent_gaps(&pacer);
        assert!((got[0] - drawn[0] - 0.5).abs() < 1e-6);
        assert!((got[1] - drawn[1] + 0.5).abs() < 1e-6);
        // The sample is bounded.
        for _ in 0..2 * ARRIVAL_SAMPLE {
            late.sent_now(Duration::ZERO);
        }
        assert_eq!(late.sent_gaps(&pacer).len(), ARRIVAL_SAMPLE - 1);
        // Request 1 queued on an opening connection (sent later, out of turn): the gaps
        // across it are left out, the one from 2 to 3 kept.
        let mut queued = Schedule::default();
        queued.sent_now(Duration::ZERO);
        queued.sent += 1;
        queued.sent_now(Duration::ZERO);
        queued.sent_now(Duration::ZERO);
        queued.sending(Duration::from_millis(40), true);
        let got = queued.sent_gaps(&pacer);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!((got[0] - drawn[2]).abs() < 1e-6, "{got:?} {drawn:?}");
    }
}
