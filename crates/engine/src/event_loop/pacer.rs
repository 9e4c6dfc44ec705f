//! The open-loop schedule as a pure function: given the time since the start and the
//! requests sent so far, say whether the next one is due, when, or that the run is over.
//! Even arrivals: request `k` (0-based) is due at `offset + k / rate` seconds. Poisson
//! arrivals: at `offset + g₀ + … + g_k`, each gap `g_i` exponential with mean `1 / rate`,
//! drawn from the seed and `i` alone (a counter-based generator), so a due time depends on
//! nothing but the seed and `k`. Latency is measured from the due time, not from when a
//! connection was free to send it (coordinated-omission correction), and so is the lag.
//! The offset is zero but in a shard of a load spread over several processes, or a worker
//! of several, where it places this sender's requests between the others'.
//!
//! A Poisson due time is a sum over all gaps before it; [`Pacer::advance`] remembers the
//! last one worked out, so that walking the schedule in order costs one gap per request.
//! The memo is only a shortcut: every answer is the same with or without it.

use shootout_model::spec::mix;
use shootout_model::Arrival;
use std::time::Duration;

/// What the worker should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// Request number `sent` is due; it was due `late` ago.
    Due {
        /// How long ago it fell due.
        late: Duration,
    },
    /// Nothing is due for this long.
    Wait(Duration),
    /// No more requests are due: the budget is spent or the next one falls after the end.
    Stop,
}

/// A fixed-rate schedule for one worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacer {
    /// Requests per second.
    pub rate: f64,
    /// Requests to send in all, if bounded by count.
    pub budget: Option<u64>,
    /// End of the schedule, if bounded by time.
    pub duration: Option<Duration>,
    /// When request 0 is due, measured from the start (even arrivals); the start of the
    /// first gap (Poisson).
    pub offset: Duration,
    /// Even intervals or Poisson gaps (from this worker's own seed).
    pub arrival: Arrival,
    /// Poisson: request `.0` is due `.1` seconds after `offset` (see [`Pacer::advance`]).
    pub memo: Option<(u64, f64)>,
}

/// Gap `i` of a Poisson schedule of `rate` drawn from `seed`, in seconds: `-ln(1 - u) /
/// rate` with `u` uniform on [0, 1) in 53 bits, from `seed` and `i` alone. At most 36.7
/// mean gaps (`u` at its largest).
pub fn gap(seed: u64, i: u64, rate: f64) -> f64 {
    let u = (mix(seed, i) >> 11) as f64 / (1u64 << 53) as f64;
    -(1.0 - u).ln() / rate
}

impl Pacer {
    /// An even schedule (no memo).
    pub fn even(rate: f64, budget: Option<u64>, duration: Option<Duration>) -> Pacer {
        Pacer {
            rate,
            budget,
            duration,
            offset: Duration::ZERO,
            arrival: Arrival::Even,
            memo: None,
        }
    }

    /// When request `k` is due, measured from the start.
    pub fn due(&self, k: u64) -> Duration {
        let after = match self.arrival {
            Arrival::Even => k as f64 / self.rate,
            Arrival::Poisson { seed } => self.poisson(seed, k),
        };
        self.at(after)
    }

    /// Poisson: seconds from `offset` to request `k`'s due time, summed from the memo
    /// when it is at or before `k`, else from the first gap (the same sum either way:
    /// the same gaps added in the same order).
    fn poisson(&self, seed: u64, k: u64) -> f64 {
        let (mut i, mut t) = match self.memo {
            Some((j, t)) if j <= k => (j, t),
            _ => (0, gap(seed, 0, self.rate)),
        };
        while i < k {
            i += 1;
            t += gap(seed, i, self.rate);
        }
        t
    }

    /// Remembers when request `sent` is due, so that asking for it and the ones after it
    /// costs one gap each (Poisson; nothing to remember for even arrivals). Call it as
    /// requests go out.
    pub fn advance(&mut self, sent: u64) {
        if let Arrival::Poisson { seed } = self.arrival {
            if self.memo.is_none_or(|(j, _)| j != sent) {
                self.memo = Some((sent, self.poisson(seed, sent)));
            }
        }
    }

    /// The next step, after `sent` requests and `elapsed` since the start.
    pub fn next(&self, elapsed: Duration, sent: u64) -> Pacing {
        if self.budget.is_some_and(|b| sent >= b) {
            return Pacing::Stop;
        }
        let due = self.due(sent);
        if self.duration.is_some_and(|d| due >= d) {
            return Pacing::Stop;
        }
        match elapsed.checked_sub(due) {
            Some(late) => Pacing::Due { late },
            None => Pacing::Wait(due - elapsed),
        }
    }

    /// Requests due by `elapsed` (capped by the budget): what a perfect sender had sent.
    pub fn due_by(&self, elapsed: Duration) -> u64 {
        let end = self.duration.map_or(elapsed, |d| d.min(elapsed));
        if let Arrival::Poisson { seed } = self.arrival {
            return self.poisson_due_by(seed, end);
        }
        let Some(since_first) = end.checked_sub(self.offset) else {
            return 0;
        };
        let mut n = (since_first.as_secs_f64() * self.rate).floor() as u64 + 1;
        // Due times are half-open at the end: request k due exactly at `duration` is not sent.
        if self
            .duration
            .is_some_and(|d| end == d && self.due(n - 1) >= d)
        {
            n -= 1;
        }
        self.budget.map_or(n, |b| n.min(b))
    }

    /// Poisson: requests due by `end` (due at `end` counts, but for the schedule's end,
    /// which is exclusive), capped by the budget; walked from the memo when its request
    /// counts, else from the first.
    fn poisson_due_by(&self, seed: u64, end: Duration) -> u64 {
        let counts = |after: f64| {
            let due = self.at(after);
            if self.duration == Some(end) {
                due < end
            } else {
                due <= end
            }
        };
        let cap = self.budget.unwrap_or(u64::MAX);
        let (mut k, mut t) = match self.memo {
            Some((j, t)) if counts(t) => (j, t),
            _ => (0, gap(seed, 0, self.rate)),
        };
        if !counts(t) {
            return 0;
        }
        while k + 1 < cap {
            let next = t + gap(seed, k + 1, self.rate);
            if !counts(next) {
                break;
            }
            (k, t) = (k + 1, next);
        }
        (k + 1).min(cap)
    }

    /// `after` seconds past the offset, as time from the start. A sum of gaps past
    /// `Duration`'s range (never reached by a validated spec) is as good as never.
    fn at(&self, after: f64) -> Duration {
        self.offset
            .saturating_add(Duration::try_from_secs_f64(after).unwrap_or(Duration::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn schedule_table() {
        let p = Pacer {
            rate: 1000.0,
            budget: Some(5),
            duration: Some(Duration::from_secs(1)),
            offset: Duration::ZERO,
            arrival: Arrival::Even,
            memo: None,
        };
        let long = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(3)),
            offset: Duration::ZERO,
            arrival: Arrival::Even,
            memo: None,
        };
        // Shard 1 of 4 of a 4000 req/s load: 1000 req/s, due at 0.25 ms, 1.25 ms, …
        let shard = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(2)),
            offset: MS / 4,
            arrival: Arrival::Even,
            memo: None,
        };
        #[rustfmt::skip]
        let rows: &[(&str, Pacer, Duration, u64, Pacing)] = &[
            // the first request is due at once
            ("start",                p,    Duration::ZERO, 0, Pacing::Due { late: Duration::ZERO }),
            // one sent at t=0: the next is due 1 ms later
            ("second waits",         p,    Duration::ZERO, 1, Pacing::Wait(MS)),
            // a little later: wait the rest
            ("part of the gap",      p,    MS / 4,         1, Pacing::Wait(MS * 3 / 4)),
            // behind schedule: request 2 was due at 2 ms, it is 5 ms: 3 ms late
            ("behind is late",       p,    MS * 5,         2, Pacing::Due { late: MS * 3 }),
            // five sent: the budget is spent, whatever the time
            ("budget spent",         p,    MS,             5, Pacing::Stop),
            // request 3 is due at 3 ms = the end: not sent (the end is exclusive)
            ("due at the end",       long, MS * 3,         3, Pacing::Stop),
            // request 2 is due at 2 ms, before the 3 ms end
            ("last one in time",     long, MS * 2,         2, Pacing::Due { late: Duration::ZERO }),
            // a shard's first request waits for its offset
            ("offset first",         shard, Duration::ZERO, 0, Pacing::Wait(MS / 4)),
            // request 1 is due at 1.25 ms
            ("offset second",        shard, MS,            1, Pacing::Wait(MS / 4)),
            // request 2 would be due at 2.25 ms, after the 2 ms end
            ("offset past the end",  shard, MS * 2,        2, Pacing::Stop),
        ];
        for (name, pacer, elapsed, sent, want) in rows {
            assert_eq!(pacer.next(*elapsed, *sent), *want, "{name}");
        }
    }

    #[test]
    fn due_by_counts_what_a_perfect_sender_sent() {
        let p = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(10)),
            offset: Duration::ZERO,
            arrival: Arrival::Even,
            memo: None,
        };
        assert_eq!(p.due_by(Duration::ZERO), 1);
        assert_eq!(p.due_by(MS * 5 / 2), 3);
        assert_eq!(p.due_by(Duration::from_secs(1)), 10);
        let b = Pacer {
            budget: Some(4),
            ..p
        };
        assert_eq!(b.due_by(Duration::from_secs(1)), 4);
        // Offset by 0.5 ms: nothing due before it, then one every ms (0.5, 1.5, …, 9.5).
        let o = Pacer {
            offset: MS / 2,
            ..p
        };
        assert_eq!(o.due_by(MS / 4), 0);
        assert_eq!(o.due_by(MS / 2), 1);
        assert_eq!(o.due_by(Duration::from_secs(1)), 10);
    }

    fn poisson(rate: f64, seed: u64) -> Pacer {
        Pacer {
            arrival: Arrival::Poisson { seed },
            ..Pacer::even(rate, None, None)
        }
    }

    #[test]
    fn poisson_due_times_are_the_running_sum_of_the_drawn_gaps() {
        let p = poisson(1000.0, 7);
        let mut sum = 0.0;
        for k in 0..50 {
            sum += gap(7, k, 1000.0);
            assert_eq!(p.due(k), Duration::from_secs_f64(sum), "request {k}");
        }
        // Pinned: the first gap of seed 7 at 1000 req/s (a change of generator shows).
        assert_eq!(format!("{:.9}", gap(7, 0, 1000.0)), "0.000494017");
        // Another seed, other gaps.
        assert_ne!(poisson(1000.0, 8).due(0), p.due(0));
    }

    #[test]
    fn the_memo_changes_no_answer() {
        let p = poisson(500.0, 3);
        let mut walked = p;
        for k in 0..200 {
            walked.advance(k);
            assert_eq!(walked.due(k), p.due(k));
            assert_eq!(walked.due(k + 5), p.due(k + 5));
            // Behind the memo: summed from the first gap again.
            assert_eq!(walked.due(k / 2), p.due(k / 2));
            let at = p.due(k) + MS / 10;
            assert_eq!(walked.next(at, k), p.next(at, k));
            assert_eq!(walked.due_by(at), p.due_by(at));
        }
    }

    #[test]
    fn poisson_schedule_table() {
        let p = Pacer {
            duration: Some(Duration::from_secs(1)),
            budget: Some(1000),
            ..poisson(1000.0, 11)
        };
        let (d0, d1) = (p.due(0), p.due(1));
        #[rustfmt::skip]
        let rows: &[(&str, Duration, u64, Pacing)] = &[
            // the first request waits for its drawn gap
            ("first waits its gap",   Duration::ZERO, 0, Pacing::Wait(d0)),
            // at its due time it goes
            ("first on time",         d0,             0, Pacing::Due { late: Duration::ZERO }),
            // the second is due one more gap later
            ("second waits",          d0,             1, Pacing::Wait(d1 - d0)),
            // late by 3 ms against its own drawn due time
            ("late against its draw", d1 + MS * 3,    1, Pacing::Due { late: MS * 3 }),
            // the budget still ends it
            ("budget spent",          d0,             1000, Pacing::Stop),
        ];
        for (name, elapsed, sent, want) in rows {
            assert_eq!(p.next(*elapsed, *sent), *want, "{name}");
        }
        // Due by a time: those whose draws fall at or before it.
        for k in [0, 1, 10, 200] {
            assert_eq!(p.due_by(p.due(k)), k + 1, "at request {k}'s due time");
        }
        assert_eq!(p.due_by(d0 - Duration::from_nanos(1)), 0);
    }

    #[test]
    fn poisson_gaps_have_the_rate_as_their_mean() {
        // 20,000 gaps at 250 req/s: mean 4 ms, standard deviation 4 ms, so the mean of
        // 20,000 is within 4 / sqrt(20,000) = 0.028 ms at one standard error; 4 of them
        // (0.11 ms) is a bound this seed is inside. The run's due count over 60 s is the
        // rate times the time within a few standard deviations (sqrt(15,000) = 122).
        let n = 20_000;
        let mean = (0..n).map(|i| gap(42, i, 250.0)).sum::<f64>() / n as f64;
        assert!((mean - 0.004).abs() < 0.000_11, "{mean}");
        let p = Pacer {
            duration: Some(Duration::from_secs(60)),
            ..poisson(250.0, 42)
        };
        let due = p.due_by(Duration::from_secs(60)) as f64;
        assert!((due - 15_000.0).abs() < 4.0 * 122.0, "{due}");
    }
}
