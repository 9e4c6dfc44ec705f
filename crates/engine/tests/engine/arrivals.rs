//! Poisson arrivals against even ones on a server of one desk (each request served alone,
//! in arrival order, in a fixed time): the queue a Poisson schedule builds is the one
//! queueing theory predicts (M/D/1), where an even schedule builds none (D/D/1).

use crate::common;

use common::{closed, go};
use shootout_engine::Pacer;
use shootout_model::{Arrival, Pace};
use shootout_testserver::{Behavior, TestServer};
use std::time::Duration;

/// Service time of the desk.
const SERVICE: Duration = Duration::from_millis(5);
/// Offered rate: half the desk's capacity (ρ = 0.5).
const RATE: f64 = 100.0;
/// Requests per run: 10 s at the rate; the p99 is the 10th longest.
const N: u64 = 1000;

/// The 99th percentile of what an ideal desk makes of these arrivals: each request starts
/// when it arrives or when the one before it is done, whichever is later (Lindley's
/// recursion), and takes `SERVICE`.
fn desk_p99(arrivals: &[f64]) -> f64 {
    let s = SERVICE.as_secs_f64();
    let mut free = f64::MIN;
    let mut sojourn: Vec<f64> = arrivals
        .iter()
        .map(|&t| {
            free = free.max(t) + s;
            free - t
        })
        .collect();
    sojourn.sort_by(f64::total_cmp);
    sojourn[(0.99 * sojourn.len() as f64).ceil() as usize - 1]
}

#[test]
fn poisson_arrivals_queue_as_m_d_1_and_even_ones_do_not() {
    // Queueing theory: at ρ = 0.5 the M/D/1 waiting time's 99th percentile is 3.34
    // service times (Erlang's formula for the waiting time's distribution,
    // P(W ≤ t) = (1 − ρ) Σ_{k ≤ t/S} (λ(kS − t))^k / k! · e^(−λ(kS − t))), so the
    // answer's p99 is 4.34 S = 21.7 ms; D/D/1 never waits: p99 = S = 5 ms. The p99 of
    // 1,000 answers scatters around the theory's figure (2.5–97.5%: 3.5 S to 6.0 S, by
    // simulation), so the measured p99 is held to the desk's own p99 on this seed's
    // draws (the pacer's due times through Lindley's recursion), which the run can only
    // exceed by the loopback's and the threads' own delays: at most 25% and the even run's
    // overhead above S (on this machine, busy with builds: even p99 9.96 ms, Poisson
    // 22.11 ms).
    let server = TestServer::start(Behavior::Capacity { service: SERVICE }).unwrap();
    let mut spec = closed(&server.url("/"), N, 1);
    spec.pace = Pace::Rate(RATE);
    spec.max_connections = Some(64);
    let even = go(&spec);
    spec.arrival = Arrival::Poisson { seed: 2 };
    let poisson = go(&spec);
    for r in [&even, &poisson] {
        assert_eq!(r.counts.ok, N, "{:?}", r.counts);
    }
    let ms = |us: u64| us as f64 / 1e3;
    // Sends the generator itself made late (a connection was free) spread the even run's
    // answers too: said in every failure, since a machine too busy to keep the schedule
    // measures itself here, not the queue.
    let own_lag = |r: &shootout_model::RunResult| {
        r.schedule.as_ref().map_or(String::new(), |s| {
            format!(
                "{} sent late with a connection free, lag p99 {} µs",
                s.late - s.late_no_connection,
                s.lag_p99_us
            )
        })
    };
    let why = format!("even: {}; Poisson: {}", own_lag(&even), own_lag(&poisson));
    let even_p99 = ms(even.histograms.latency.value_at_quantile(0.99));
    let poisson_p99 = ms(poisson.histograms.latency.value_at_quantile(0.99));

    // The one worker's schedule: the spec's Poisson draws as worker 0 takes them.
    let pacer = Pacer {
        arrival: spec.arrival.part(0),
        budget: Some(N),
        ..Pacer::even(RATE, Some(N), None)
    };
    let arrivals: Vec<f64> = (0..N).map(|k| pacer.due(k).as_secs_f64()).collect();
    let predicted = desk_p99(&arrivals) * 1e3;
    let s = SERVICE.as_secs_f64() * 1e3;
    assert!(
        (3.0 * s..=7.0 * s).contains(&predicted),
        "this seed's draws give a p99 of {predicted:.2} ms, far from theory's 21.7 ms"
    );
    let overhead = (even_p99 - s).max(0.0);
    assert!(
        poisson_p99 >= 0.95 * predicted && poisson_p99 <= 1.25 * predicted + overhead,
        "Poisson p99 {poisson_p99:.2} ms, the desk's on these arrivals {predicted:.2} ms \
         (even p99 {even_p99:.2} ms; {why})"
    );
    // Above even's by at least half the queue's own p99 (the desk's p99 less the service):
    // a busy machine's late wake-ups lift both runs' p99, the queue only Poisson's.
    assert!(
        poisson_p99 - even_p99 >= 0.5 * (predicted - s),
        "Poisson p99 {poisson_p99:.2} ms against even {even_p99:.2} ms, the desk's \
         {predicted:.2} ms (theory: 21.7 ms against 5 ms; {why})"
    );

    // The schedule says which, and the Poisson gaps of the requests sent on time fit the
    // exponential.
    let (es, ps) = (even.schedule.unwrap(), poisson.schedule.unwrap());
    assert_eq!((es.arrival.process, es.arrival.fit), (Arrival::Even, None));
    let fit = ps.arrival.fit.expect("a Poisson run's gaps are tested");
    // The gaps between requests sent straight away and on time: those beside a request
    // queued on a connection still opening (a burst that found every connection busy) or
    // sent late are left out.
    assert!(fit.n < N && fit.n >= (N - 1) / 2, "{fit:?}");
    assert!(fit.fits(), "{fit:?}");
}
