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
//!
//! A schedule in stages (`--stages RATE/s:DURATION,…` of journeys) is a pacer per stage
//! ([`RateStages`]): each stage's own rate from its start to its end, its first request the
//! worker's next when the stage before it ran out of due requests.

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
    /// The worker's number of this schedule's first request: request `k` is the
    /// schedule's `k - first` (a stage's schedule begins where the stage before it ended,
    /// see [`RateStages`]); 0 for a schedule of the whole run.
    pub first: u64,
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
            first: 0,
        }
    }

    /// When request `k` (the worker's number, [`Pacer::first`] or later) is due, measured
    /// from the start.
    pub fn due(&self, k: u64) -> Duration {
        self.due_within(k.saturating_sub(self.first))
    }

    /// When this schedule's request `k` (counted from its first) is due, from the start.
    fn due_within(&self, k: u64) -> Duration {
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
        let sent = sent.saturating_sub(self.first);
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

    /// Requests of this schedule due by `elapsed` (capped by the budget): what a perfect
    /// sender had sent of it.
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
            .is_some_and(|d| end == d && self.due_within(n - 1) >= d)
        {
            n -= 1;
        }
        self.budget.map_or(n, |b| n.min(b))
    }

    /// The worker's number of the first request of this schedule not due by `elapsed`:
    /// requests from [`Pacer::first`] up to it are due.
    pub fn due_end(&self, elapsed: Duration) -> u64 {
        self.first.saturating_add(self.due_by(elapsed))
    }

    /// Calls `f` with the due time (from the start) of each of the worker's requests
    /// `from..to` in order, for at most the first `most` of them; how many requests
    /// `from..to` holds. A Poisson schedule's gaps are walked once, from the memo when it
    /// is at or before `from`.
    pub fn each_due(&self, from: u64, to: u64, most: u64, f: &mut dyn FnMut(Duration)) -> u64 {
        let n = to.saturating_sub(from);
        let walk = n.min(most);
        if walk == 0 {
            return n;
        }
        let within = from.saturating_sub(self.first);
        match self.arrival {
            Arrival::Even => (0..walk).for_each(|i| f(self.due_within(within + i))),
            Arrival::Poisson { seed } => {
                let mut t = self.poisson(seed, within);
                f(self.at(t));
                for i in 1..walk {
                    t += gap(seed, within + i, self.rate);
                    f(self.at(t));
                }
            }
        }
        n
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

/// A worker's schedule in stages, each at its own rate: a [`Pacer`] per stage, from the
/// stage's start to its end (exclusive), and the one in force. When the stage in force
/// has no request left that falls before its end, the next one takes over, numbering its
/// first request with the worker's count of requests sent so far: so a worker behind
/// schedule sends the rest of a stage before the next stage's first, each counted late
/// against its own due time.
#[derive(Debug, Clone, PartialEq)]
pub struct RateStages {
    /// Each stage's schedule, in order.
    pacers: Vec<Pacer>,
    /// The stage in force.
    at: usize,
}

impl RateStages {
    /// Worker `index` of `workers`' part of `stages` (each the run's rate, in requests a
    /// second, and the stage's length, in order): in each stage an even part of the
    /// stage's rate, its first request due `index / rate` after the stage's start, so
    /// that the workers together send at the stage's intervals as one sender would (as
    /// the workers of a run at one rate do).
    pub fn new(
        stages: &[(f64, Duration)],
        workers: usize,
        index: usize,
        arrival: Arrival,
    ) -> RateStages {
        let mut start = Duration::ZERO;
        let pacers = stages
            .iter()
            .map(|&(rate, length)| {
                let p = Pacer {
                    rate: rate / workers.max(1) as f64,
                    budget: None,
                    duration: Some(start + length),
                    offset: start + Duration::from_secs_f64(index as f64 / rate),
                    arrival,
                    memo: None,
                    first: 0,
                };
                start += length;
                p
            })
            .collect();
        RateStages { pacers, at: 0 }
    }

    /// The schedule of the stage in force (the first before any ended); `None` without
    /// stages.
    pub fn current(&self) -> Option<Pacer> {
        self.pacers.get(self.at).copied()
    }

    /// The stage in force ran out of requests (its pacer said [`Pacing::Stop`]) after
    /// `sent` of the worker's: the next stage's schedule, its first request numbered
    /// `sent`, or `None` when it was the last.
    pub fn next_stage(&mut self, sent: u64) -> Option<Pacer> {
        let next = self.pacers.get_mut(self.at + 1)?;
        next.first = sent;
        self.at += 1;
        Some(*next)
    }

    /// Requests due by `elapsed` in all the stages: what a perfect sender had sent.
    pub fn due_by(&self, elapsed: Duration) -> u64 {
        self.pacers.iter().map(|p| p.due_by(elapsed)).sum()
    }

    /// Calls `f` with the due time of each request due by `elapsed` and not sent, `sent`
    /// having been sent, oldest first, for at most the first `most` of them; how many
    /// there are. The stages before the one in force sent all of theirs (a stage gives way
    /// only then); the one in force has its requests from `sent` on, and each later stage
    /// its own from its first.
    pub fn each_unsent(
        &self,
        sent: u64,
        elapsed: Duration,
        most: u64,
        f: &mut dyn FnMut(Duration),
    ) -> u64 {
        let mut unsent = 0u64;
        for (i, p) in self.pacers.iter().enumerate().skip(self.at) {
            let from = if i == self.at { sent } else { p.first };
            let left = most.saturating_sub(unsent);
            unsent = unsent.saturating_add(p.each_due(from, p.due_end(elapsed), left, f));
        }
        unsent
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
            first: 0,
        };
        let long = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(3)),
            offset: Duration::ZERO,
            arrival: Arrival::Even,
            memo: None,
            first: 0,
        };
        // Shard 1 of 4 of a 4000 req/s load: 1000 req/s, due at 0.25 ms, 1.25 ms, …
        let shard = Pacer {
            rate: 1000.0,
            budget: None,
            duration: Some(Duration::from_millis(2)),
            offset: MS / 4,
            arrival: Arrival::Even,
            memo: None,
            first: 0,
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
            first: 0,
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

    /// Due times in ms, rounded (a rate's `k / rate` in floating point is within a
    /// nanosecond of the decimal).
    fn ms(d: Duration) -> u64 {
        (d.as_secs_f64() * 1e3).round() as u64
    }

    /// The due times a perfect sender walks, `at` long after the start (every one of
    /// them due by then), stage after stage.
    fn walk(mut s: RateStages, at: Duration) -> Vec<u64> {
        let mut pacer = s.current().unwrap();
        let (mut sent, mut dues) = (0, Vec::new());
        loop {
            match pacer.next(at, sent) {
                Pacing::Due { .. } => {
                    dues.push(ms(pacer.due(sent)));
                    sent += 1;
                }
                Pacing::Stop => match s.next_stage(sent) {
                    Some(next) => pacer = next,
                    None => return dues,
                },
                Pacing::Wait(w) => panic!("waits {w:?} at {at:?}"),
            }
        }
    }

    #[test]
    fn stages_keep_each_its_own_rate_from_its_start_to_its_end() {
        let s = Duration::from_secs(1);
        // 4/s for 1 s, then 10/s for 1 s, then 2/s for 1 s.
        let stages = [(4.0, s), (10.0, s), (2.0, s)];
        let one = RateStages::new(&stages, 1, 0, Arrival::Even);
        #[rustfmt::skip]
        let all = [
            0, 250, 500, 750,                                     // stage 1: every 250 ms
            1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900, // stage 2: every 100 ms
            2000, 2500,                                           // stage 3: every 500 ms
        ];
        assert_eq!(walk(one.clone(), s * 10), all);
        // A perfect sender had sent these by each time: 4 in the first second, 10 in
        // the second (1.05 s: the first of them), 2 in the third.
        for (at, due) in [
            (0, 1),
            (999, 4),
            (1000, 5),
            (1050, 5),
            (1999, 14),
            (2000, 15),
            (3000, 16),
            (9000, 16),
        ] {
            assert_eq!(one.due_by(Duration::from_millis(at)), due, "by {at} ms");
        }
        // Two workers: each half of each stage's rate, the second offset by one interval
        // of the stage; together the one worker's due times.
        let w0 = walk(RateStages::new(&stages, 2, 0, Arrival::Even), s * 10);
        let w1 = walk(RateStages::new(&stages, 2, 1, Arrival::Even), s * 10);
        assert_eq!(w0, [0, 500, 1000, 1200, 1400, 1600, 1800, 2000]);
        assert_eq!(w1, [250, 750, 1100, 1300, 1500, 1700, 1900, 2500]);
        // Walked as time passes: at 1.05 s the first stage is spent, the second's first
        // request (the worker's fifth, number 4) is due, and its second waits 50 ms.
        let mut at = RateStages::new(&stages, 1, 0, Arrival::Even);
        let p = at.current().unwrap();
        assert_eq!(p.next(Duration::from_millis(1050), 4), Pacing::Stop);
        let next = at.next_stage(4).unwrap();
        assert_eq!(
            next.next(Duration::from_millis(1050), 4),
            Pacing::Due { late: MS * 50 }
        );
        assert_eq!(
            next.next(Duration::from_millis(1050), 5),
            Pacing::Wait(MS * 50)
        );
        // A worker behind: the first stage's last request goes first, late, and the
        // second stage's requests are numbered after it.
        assert_eq!(
            p.next(Duration::from_millis(1050), 3),
            Pacing::Due { late: MS * 300 }
        );
        assert!(at.next_stage(16).is_some() && at.next_stage(17).is_none());
    }

    /// The due times walked in order are those asked for one by one (a Poisson
    /// schedule's included), for at most `most` of them; the count is the whole range's.
    #[test]
    fn each_due_walks_the_due_times_in_order() {
        for p in [Pacer::even(1000.0, None, None), poisson(1000.0, 7)] {
            let mut got = Vec::new();
            assert_eq!(p.each_due(5, 25, 10, &mut |d| got.push(d)), 20);
            let want: Vec<Duration> = (5..15).map(|k| p.due(k)).collect();
            assert_eq!(got, want);
            assert_eq!(p.each_due(25, 5, 10, &mut |_| panic!("an empty range")), 0);
            assert_eq!(p.each_due(5, 25, 0, &mut |_| panic!("none to walk")), 20);
        }
    }

    /// In stages, the requests not sent are the rest of the stage in force and every
    /// later stage's due so far, the oldest first: at 1.5 s, 600 sent of the first
    /// second's 1,000 at 1,000 req/s, 400 are left of it and 1,001 of the second stage's
    /// 2,000 req/s (due from 1 s to 1.5 s, both ends).
    #[test]
    fn in_stages_the_unsent_are_the_stage_in_force_s_rest_and_the_later_ones() {
        let s = Duration::from_secs(1);
        let stages = [(1000.0, s), (2000.0, s)];
        let st = RateStages::new(&stages, 1, 0, Arrival::Even);
        let mut got = Vec::new();
        let unsent = st.each_unsent(600, MS * 1500, 10, &mut |d| got.push(d));
        assert_eq!(unsent, 400 + 1001);
        let first = st.current().unwrap();
        let want: Vec<Duration> = (600..610).map(|k| first.due(k)).collect();
        assert_eq!(got, want);
        assert!(
            got[0].abs_diff(MS * 600) < Duration::from_micros(1),
            "{got:?}"
        );
        let mut last = Duration::ZERO;
        let all = st.each_unsent(600, MS * 1500, u64::MAX, &mut |d| last = d);
        assert_eq!((all, last), (1401, MS * 1500));
    }
}
