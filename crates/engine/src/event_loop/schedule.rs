//! How far a worker kept its open-loop schedule: requests due, sent, sent late, and of
//! those how many waited for a connection rather than for the generator itself; how late
//! every send was (a histogram of the lag); how many connections the schedule needed and
//! whether it met the cap on them; and the gaps between its first requests sent on time,
//! to check them against the arrival process asked for.

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
    /// The first [`ARRIVAL_SAMPLE`] requests that kept the schedule (see
    /// [`Schedule::sent_now`]): each one's index in it.
    pub(super) kept: Vec<u64>,
    /// The gaps between consecutive requests of that sample times the worker's rate: for
    /// Poisson arrivals kept, exponential with mean 1 (see [`Schedule::kept_gaps`]).
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
            kept: Vec::new(),
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
    /// arrival check's sample while it has room if it kept the schedule (`late` within
    /// [`LATE`]). A request queued on a connection still opening goes out later, out of
    /// turn, and is left out of the sample, as is one sent late.
    pub fn sent_now(&mut self, late: Duration) {
        self.sending(late, false);
        if late <= LATE && self.kept.len() < ARRIVAL_SAMPLE {
            self.kept.push(self.sent);
        }
        self.sent += 1;
    }

    /// The gaps between the sample's consecutive requests, in units of the schedule's mean
    /// gap (times the rate), each request taken at its due time: it went out within
    /// [`LATE`] of it, the resolution the schedule is kept to, and how far within is in the
    /// lag histogram. A gap measured between two send instants instead would test the
    /// machine's wake-up jitter, not the arrivals: at 100 requests a second, sends a few
    /// hundred µs off their due times reject the exponential, and so do the gaps of zero
    /// between sends that went out together after a stall. Where a request between two of
    /// the sample is missing (sent late, or queued on an opening connection), the gap
    /// across it is left out: it spans two draws. So the test checks the draws of the
    /// requests that kept the schedule: a generator that kept only its long gaps (late on
    /// bursts) fails it, as do draws off their distribution; how many sends were late is
    /// `late`, beside it.
    pub fn kept_gaps(&self, pacer: &Pacer) -> Vec<f64> {
        let mut walk = Pacer {
            memo: None,
            ..*pacer
        };
        let mut at = |k: u64| {
            walk.advance(k);
            walk.due(k).as_secs_f64()
        };
        let mut gaps = Vec::with_capacity(self.kept.len());
        let mut last: Option<(u64, f64)> = None;
        for &k in &self.kept {
            let t = at(k);
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
    fn kept_gaps_are_the_drawn_gaps_of_the_requests_sent_on_time() {
        let pacer = Pacer {
            arrival: Arrival::Poisson { seed: 5 },
            ..Pacer::even(100.0, None, None)
        };
        let drawn: Vec<f64> = (1..6)
            .map(|k| (pacer.due(k) - pacer.due(k - 1)).as_secs_f64() * 100.0)
            .collect();
        let close = |got: &[f64], want: &[f64]| {
            got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-9)
        };
        // On time, or within LATE of it: the drawn gaps, whatever the jitter.
        let mut s = Schedule::default();
        for us in [0, 900, 3, 1000, 0] {
            s.sent_now(Duration::from_micros(us));
        }
        let got = s.kept_gaps(&pacer);
        assert!(close(&got, &drawn[..4]), "{got:?} {drawn:?}");
        assert_eq!(s.late, 0);
        // Request 2 held 5 ms (sent late): the gaps on either side of it are left out,
        // the others kept as drawn; it counts as late.
        let mut late = Schedule::default();
        for ms in [0, 0, 5, 0, 0, 0] {
            late.sent_now(Duration::from_millis(ms));
        }
        let got = late.kept_gaps(&pacer);
        assert!(
            close(&got, &[drawn[0], drawn[3], drawn[4]]),
            "{got:?} {drawn:?}"
        );
        assert_eq!(late.late, 1);
        // The sample is bounded.
        for _ in 0..2 * ARRIVAL_SAMPLE {
            late.sent_now(Duration::ZERO);
        }
        assert_eq!(late.kept.len(), ARRIVAL_SAMPLE);
        assert_eq!(late.kept_gaps(&pacer).len(), ARRIVAL_SAMPLE - 2);
        // Request 1 queued on an opening connection (sent later, out of turn): the gaps
        // across it are left out, the one from 2 to 3 kept.
        let mut queued = Schedule::default();
        queued.sent_now(Duration::ZERO);
        queued.sent += 1;
        queued.sent_now(Duration::ZERO);
        queued.sent_now(Duration::ZERO);
        queued.sending(Duration::from_millis(40), true);
        let got = queued.kept_gaps(&pacer);
        assert!(close(&got, &drawn[2..3]), "{got:?} {drawn:?}");
    }
}
