//! The details a live view reads ([`Control::detail`]): after a run, what the workers
//! last published equals the run's result, class by class and code by code, and a
//! journey's step by step.

use crate::common;

use common::closed;
use shootout_engine::{run, Control};
use shootout_model::journey::parse;
use shootout_model::spec::Journeys;
use shootout_model::FailureKind;
use shootout_testserver::{Behavior, TestServer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[test]
fn live_detail_after_a_run_equals_the_results_counts() {
    let server = TestServer::start(Behavior::FailEvery { n: 3, status: 502 }).unwrap();
    let mut s = closed(&server.url("/"), 3000, 4);
    s.threads = 2;
    let mut control = Control::new(s.threads);
    control.watch();
    let done = AtomicBool::new(false);
    let (r, looks) = std::thread::scope(|sc| {
        // A reader looking all along, as a view does, holding the workers' slots often.
        let reader = sc.spawn(|| {
            let mut looks = 0u64;
            while !done.load(Ordering::Relaxed) {
                let d = control.detail().expect("watched");
                assert!(d.status.values().sum::<u64>() <= 3000);
                looks += 1;
            }
            looks
        });
        let r = run(&s, &control).expect("run");
        done.store(true, Ordering::Relaxed);
        (r, reader.join().unwrap())
    });
    assert!(looks > 0);
    let d = control.detail().expect("watched");
    assert_eq!(d.failures, r.counts.failures);
    assert_eq!(d.status, r.counts.status);
    assert_eq!(d.status.get(&502), Some(&1000));
    assert!(
        r.counts.failures[FailureKind::Status] == 1000,
        "{:?}",
        r.counts
    );
    assert_eq!(
        d.latency.len(),
        r.histograms.latency.len(),
        "every answer's latency"
    );
    assert_eq!(control.snapshot().completed, r.counts.completed);
}

#[test]
fn live_latency_includes_the_seconds_already_finished() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut s = closed(&server.url("/"), 1, 2);
    s.requests = None;
    s.duration = Some(Duration::from_millis(1300));
    let mut control = Control::new(s.threads);
    control.watch();
    let r = run(&s, &control).expect("run");
    assert!(r.series.len() >= 2, "the run spans two seconds");
    let d = control.detail().expect("watched");
    assert_eq!(d.latency.len(), r.histograms.latency.len());
    assert_eq!(d.status, r.counts.status);
}

#[test]
fn details_are_published_only_when_watched() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let s = closed(&server.url("/"), 100, 2);
    let control = Control::new(s.threads);
    let r = run(&s, &control).expect("run");
    assert_eq!(r.counts.ok, 100);
    assert!(control.detail().is_none());
}

/// Two journeys, one of two good steps and one whose only step asks for a page the test
/// application does not serve (a 404: failed), watched: what the workers last published
/// is the result's, step by step and journey by journey, counts and latencies.
#[test]
fn live_detail_tells_a_journeys_steps_apart() {
    let server = TestServer::start(Behavior::App).unwrap();
    let text = r#"
[[journey]]
name = "reader"
[[journey.step]]
name = "login"
post = "/login?user=u{user}"
[[journey.step]]
name = "form"
get = "/form"
[[journey]]
name = "lost"
[[journey.step]]
name = "missing"
get = "/no/such/page"
"#;
    let file = parse(text, "live.toml", &mut |_| Err("no files".into())).unwrap();
    let mut s = closed(&server.url("/"), 40, 4);
    s.threads = 2;
    s.journey = Some(Journeys {
        source: "live.toml".into(),
        seed: 3,
        file: std::sync::Arc::new(file),
    });
    let mut control = Control::new(s.threads);
    control.watch();
    let r = run(&s, &control).expect("run");
    let d = control.detail().expect("watched");
    assert_eq!(d.kinds.len(), 3);
    assert_eq!(d.kinds.len(), r.targets.len());
    for (live, end) in d.kinds.iter().zip(&r.targets) {
        assert_eq!(
            (live.completed, live.ok),
            (end.completed, end.ok),
            "{}",
            end.label
        );
        assert_eq!(live.latency.len(), end.latency.len(), "{}", end.label);
    }
    let missing = &d.kinds[2];
    assert!(missing.completed > 0 && missing.ok == 0, "{missing:?}");
    assert_eq!(d.journeys.len(), 2);
    for (live, end) in d.journeys.iter().zip(&r.journeys) {
        assert_eq!(
            (live.completed, live.ok),
            (end.completed, end.ok),
            "{}",
            end.label
        );
    }
}

/// [`Control::finish`] ends a timed run at once, as if its time were up: not interrupted,
/// its time the shorter one, what was in flight aborted.
#[test]
fn finish_ends_a_timed_run_as_if_its_time_were_up() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let mut s = closed(&server.url("/"), 1, 2);
    s.requests = None;
    s.duration = Some(Duration::from_secs(30));
    let control = Control::new(s.threads);
    let began = std::time::Instant::now();
    let r = std::thread::scope(|sc| {
        sc.spawn(|| {
            while control.snapshot().completed < 200 {
                std::thread::sleep(Duration::from_millis(5));
            }
            control.finish();
        });
        run(&s, &control).expect("run")
    });
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert!(r.duration < Duration::from_secs(10), "{:?}", r.duration);
    assert!(!r.interrupted);
    assert!(r.counts.completed >= 200);
    assert!(r.counts.aborted <= 2, "{:?}", r.counts);
}
