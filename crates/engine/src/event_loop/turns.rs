//! Rate mode: the order in which the workers open the connections they open ahead of need
//! ([`Turns`]).
//!
//! A server that gives each accepted connection a worker until its request comes (gunicorn
//! sync, uWSGI, mod_wsgi) serves requests in the order it accepted their connections,
//! and it accepts them in the order they were opened. The run's schedule hands request `j`
//! to worker `j mod T`, and each worker uses its connections opened ahead in the order they
//! opened. Opened worker after worker (all of worker 0's, then all of worker 1's), the
//! server's workers would take worker 0's connections first while worker 1's requests
//! waited behind them: 64 connections at 200 req/s held requests for about 300 ms. Opened
//! in turns (worker 0's first, worker 1's first, worker 0's second, …) they are accepted
//! in the order their requests fall due.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// The turns of the connections opened ahead of need: connection `i` of worker `w` opens
/// after connection `i` of every worker before `w` and connection `i - 1` of every worker.
#[derive(Debug)]
pub struct Turns {
    /// Connections each worker opens ahead.
    counts: Vec<usize>,
    /// Turns taken so far.
    taken: AtomicUsize,
    /// A worker waited past its deadline (one failed to set up, or was not scheduled):
    /// from then on no worker waits.
    abandoned: AtomicBool,
}

impl Turns {
    /// Turns for workers opening `counts[w]` connections each.
    pub fn new(counts: Vec<usize>) -> Turns {
        Turns {
            counts,
            taken: AtomicUsize::new(0),
            abandoned: AtomicBool::new(false),
        }
    }

    /// The place of connection `i` of `worker` in the order: the connections numbered
    /// below `i` of every worker, then connection `i` of the workers before it.
    fn place(&self, worker: usize, i: usize) -> usize {
        let below: usize = self.counts.iter().map(|&c| c.min(i)).sum();
        below + self.counts[..worker].iter().filter(|&&c| c > i).count()
    }

    /// Waits for the turn of connection `i` of `worker`, at most until `deadline` (then no
    /// worker waits any more). Call [`Turns::taken`] once it is opened. Not on the hot
    /// path: once per connection opened ahead, before the run's clock starts.
    pub fn wait(&self, worker: usize, i: usize, deadline: Instant) {
        if worker >= self.counts.len() || i >= self.counts[worker] {
            return;
        }
        let place = self.place(worker, i);
        while self.taken.load(Ordering::Acquire) < place {
            if self.abandoned.load(Ordering::Relaxed) {
                return;
            }
            if Instant::now() >= deadline {
                self.abandoned.store(true, Ordering::Relaxed);
                return;
            }
            std::thread::yield_now();
        }
    }

    /// The connection whose turn it was is opened (or failed at once): the next one's turn.
    pub fn taken(&self) {
        self.taken.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    #[test]
    fn places_alternate_between_workers_and_skip_those_with_fewer() {
        let t = Turns::new(vec![3, 2, 1]);
        let order: Vec<_> = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2)]
            .iter()
            .map(|&(w, i)| t.place(w, i))
            .collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
    }

    /// Three threads, started in reverse, record their openings in the order of the turns.
    #[test]
    fn threads_open_in_turns_whatever_order_they_start_in() {
        let counts = vec![4, 4, 3];
        let t = Turns::new(counts.clone());
        let log = Mutex::new(Vec::new());
        let deadline = Instant::now() + Duration::from_secs(30);
        std::thread::scope(|s| {
            for w in (0..3).rev() {
                let (t, log, n) = (&t, &log, counts[w]);
                s.spawn(move || {
                    for i in 0..n {
                        t.wait(w, i, deadline);
                        log.lock().unwrap().push((w, i));
                        t.taken();
                    }
                });
            }
        });
        let log = log.into_inner().unwrap();
        let want: Vec<_> = (0..4)
            .flat_map(|i| (0..3).map(move |w| (w, i)))
            .filter(|&(w, i)| i < counts[w])
            .collect();
        assert_eq!(log, want);
        assert!(!t.abandoned.load(Ordering::Relaxed));
    }

    /// A worker that never opens its connections (its set-up failed) holds the others only
    /// until the deadline, and then no more.
    #[test]
    fn a_missing_worker_holds_the_others_until_the_deadline_only() {
        let t = Turns::new(vec![2, 2]);
        let deadline = Instant::now() + Duration::from_millis(20);
        t.wait(1, 0, deadline);
        assert!(Instant::now() >= deadline);
        assert!(t.abandoned.load(Ordering::Relaxed));
        // Later waits return at once, deadline or not.
        let later = Instant::now();
        t.wait(1, 1, later + Duration::from_secs(10));
        assert!(later.elapsed() < Duration::from_secs(5));
    }
}
