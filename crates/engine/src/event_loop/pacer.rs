//! The open-loop schedule as a pure function: given the time since the start and the
//! requests sent so far, say whether the next one is due, when, or that the run is over.
//! Request `k` (0-based) is due at `offset + k / rate` seconds; latency is measured from
//! that due time, not from when a connection was free to send it (coordinated-omission
//! correction). The offset is zero but in a shard of a load spread over several
//! processes, where it places this process's requests between the others'.

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
    /// When request 0 is due, measured from the start.
    pub offset: Duration,
}

impl Pacer {
    /// When request `k` is due, measured from the start.
    pub fn due(&self, k: u64) -> Duration {
        self.offset + Duration::from_secs_f64(k as f64 / self.rate)
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
        };
        let long = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(3)),
            offset: Duration::ZERO,
        };
        // Shard 1 of 4 of a 4000 req/s load: 1000 req/s, due at 0.25 ms, 1.25 ms, …
        let shard = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(2)),
            offset: MS / 4,
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
}
