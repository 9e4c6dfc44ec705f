//! Live metrics for Prometheus: `--metrics-listen ADDR` on `shootout load` and `shootout
//! run` serves `/metrics` in Prometheus' text format while the command runs, so a team
//! sees a load on the dashboards it already has (as k6 and vegeta users do).
//!
//! Like a progress view, the [`Board`] only observes: the command tells it when a
//! measured load begins (the engine's [`Control`], watched for details) and when it
//! ends (its [`RunResult`], or nothing when it failed); a scrape reads the live counters
//! of the load under way ([`Control::snapshot`], [`Control::detail`]) on top of the
//! totals of the loads that ended. Each series (one per contender × workload × level in
//! `run`, one in `load`) only grows: repetitions add up, and a load's final result, which
//! holds everything its live counters showed, replaces them. [`expo`] writes the page,
//! [`serve`] answers the requests; warm-ups and verification passes are not measured and
//! not counted.

mod expo;
mod serve;

pub(crate) use expo::Labels;
pub(crate) use serve::Server;

use crate::progress::live::Names;
use expo::{Named, Series, Totals};
use shootout_engine::Control;
use shootout_model::result::second_histogram;
use shootout_model::{FailureCounts, RunResult};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// `--metrics-listen`: a port (on 127.0.0.1) or an address with its port, as a plan's
/// `metrics_listen` reads it (a clap value parser).
pub(crate) fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    shootout_model::units::parse_listen(s)
}

/// Starts serving `board` on `addr` and says where on stderr (unless `quiet`), with a note
/// when the address is not a loopback one (anyone who reaches it can read the metrics).
pub(crate) fn start(addr: SocketAddr, board: Arc<Board>, quiet: bool) -> anyhow::Result<Server> {
    use anyhow::Context;
    let server = Server::start(addr, board).with_context(|| {
        format!("--metrics-listen: cannot listen on {addr}: give a free port, or 0 for any")
    })?;
    if !quiet {
        if !addr.ip().is_loopback() {
            say!(
                "note: --metrics-listen {addr} is not a loopback address: whoever can reach this machine on port {} can read the metrics",
                server.addr().port()
            );
        }
        say!("metrics on http://{}/metrics", server.addr());
    }
    Ok(server)
}

/// What the metrics page shows: the totals of every series so far, and the load under way.
#[derive(Default)]
pub(crate) struct Board {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Every series met so far, with its totals of the loads that ended.
    series: Vec<(Labels, Totals)>,
    /// The load under way: its series (an index into `series`) and its control.
    current: Option<Current>,
}

struct Current {
    series: usize,
    control: Arc<Control>,
    /// The names of the journey run's steps and journeys (empty for other runs).
    names: Names,
    /// The highest ok and failed counts shown so far (the engine's counters are read one
    /// at a time: a later read never shows less than an earlier one).
    shown: (u64, u64),
}

impl Totals {
    fn new() -> Totals {
        Totals {
            ok: 0,
            failed: 0,
            failures: FailureCounts::default(),
            latency: second_histogram(),
            schedule: None,
            active: false,
            steps: Vec::new(),
            journeys: Vec::new(),
        }
    }
}

impl Board {
    /// A load of the series `labels` begins, watched through `control` (on which
    /// [`Control::watch`] was called, or the live page has no latency or classes); a
    /// journey run's steps and journeys are counted apart by their `names`.
    pub(crate) fn begin(&self, labels: Labels, control: Arc<Control>, names: Names) {
        let mut s = self.lock();
        let series = match s.series.iter().position(|(l, _)| *l == labels) {
            Some(i) => i,
            None => {
                s.series.push((labels, Totals::new()));
                s.series.len() - 1
            }
        };
        let names = if names.journeys.is_empty() {
            Names::default()
        } else {
            names
        };
        s.current = Some(Current {
            series,
            control,
            names,
            shown: (0, 0),
        });
    }

    /// The load under way ended with `result` (`None`: it failed, and its live counters
    /// as last read are kept).
    pub(crate) fn end(&self, result: Option<&RunResult>) {
        let mut s = self.lock();
        let Some(cur) = s.current.take() else {
            return;
        };
        let live = match result {
            Some(r) => final_totals(r),
            None => live_totals(&cur),
        };
        add(&mut s.series[cur.series].1, &live);
    }

    /// The metrics page as of now.
    pub(crate) fn render(&self) -> String {
        let mut s = self.lock();
        let mut shown: Vec<Totals> = s.series.iter().map(|(_, t)| t.clone()).collect();
        if let Some(cur) = &mut s.current {
            let mut live = live_totals(cur);
            live.ok = live.ok.max(cur.shown.0);
            live.failed = live.failed.max(cur.shown.1);
            cur.shown = (live.ok, live.failed);
            live.active = true;
            add(&mut shown[cur.series], &live);
        }
        let series: Vec<Series> = s
            .series
            .iter()
            .zip(&shown)
            .map(|((labels, _), totals)| Series { labels, totals })
            .collect();
        expo::render(&series, cpu_seconds())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the load under way has counted so far.
fn live_totals(cur: &Current) -> Totals {
    let snap = cur.control.snapshot();
    let mut t = Totals::new();
    t.ok = snap.completed.saturating_sub(snap.failed);
    t.failed = snap.failed;
    if let Some(d) = cur.control.detail() {
        t.failures = d.failures;
        if d.kinds.len() == cur.names.kinds.len() && d.journeys.len() == cur.names.journeys.len() {
            t.steps = named(&cur.names.kinds, &d.kinds);
            t.journeys = named(&cur.names.journeys, &d.journeys);
            for j in &mut t.journeys {
                j.latency.reset();
            }
        }
        t.latency = d.latency;
    }
    t
}

/// `tallies` named by `names`, in order.
fn named(names: &[String], tallies: &[shootout_model::TargetStats]) -> Vec<Named> {
    names
        .iter()
        .zip(tallies)
        .map(|(name, t)| Named {
            name: name.clone(),
            ok: t.ok,
            failed: t.failed(),
            latency: t.latency.clone(),
        })
        .collect()
}

/// What a load that ended counted: its result (latency at the live page's precision,
/// so that no bucket shows less than it did while the load ran).
fn final_totals(r: &RunResult) -> Totals {
    let mut t = Totals::new();
    t.ok = r.counts.ok;
    t.failed = r.counts.failed();
    t.failures = r.counts.failures;
    // Same bounds, coarser buckets holding the finer ones: adding cannot fail.
    let _ = t.latency.add(&r.histograms.latency);
    t.schedule = r.schedule.map(|s| [s.due, s.sent, s.late]);
    if !r.journeys.is_empty() {
        let of = |s: &shootout_model::TargetStats, latency: bool| {
            let mut n = Named {
                name: s.label.clone(),
                ok: s.ok,
                failed: s.failed(),
                latency: second_histogram(),
            };
            if latency {
                // Coarser buckets holding the finer ones: adding cannot fail.
                let _ = n.latency.add(&s.latency);
            }
            n
        };
        t.steps = r.targets.iter().map(|s| of(s, true)).collect();
        t.journeys = r.journeys.iter().map(|j| of(j, false)).collect();
    }
    t
}

/// Adds `from` into `to`, name by name (a name first met is appended).
fn add_named(to: &mut Vec<Named>, from: &[Named]) {
    for f in from {
        match to.iter_mut().find(|t| t.name == f.name) {
            Some(t) => {
                t.ok += f.ok;
                t.failed += f.failed;
                let _ = t.latency.add(&f.latency);
            }
            None => to.push(f.clone()),
        }
    }
}

/// Adds `b` to `a` (the schedule only where `b` has one).
fn add(a: &mut Totals, b: &Totals) {
    a.ok += b.ok;
    a.failed += b.failed;
    a.failures += &b.failures;
    let _ = a.latency.add(&b.latency);
    if let Some(bs) = b.schedule {
        let sum = a.schedule.get_or_insert([0; 3]);
        for (x, y) in sum.iter_mut().zip(bs) {
            *x += y;
        }
    }
    a.active |= b.active;
    add_named(&mut a.steps, &b.steps);
    add_named(&mut a.journeys, &b.journeys);
}

/// The CPU time (user and system, seconds) this process has used so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::{FailureKind, ScheduleStats};
    use std::time::{Duration, SystemTime};

    #[test]
    fn a_bare_port_listens_on_loopback_and_other_addresses_are_typed() {
        assert_eq!(parse_listen("9464"), Ok("127.0.0.1:9464".parse().unwrap()));
        assert_eq!(
            parse_listen("localhost:0"),
            Ok("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(
            parse_listen("[::1]:9464"),
            Ok("[::1]:9464".parse().unwrap())
        );
        assert_eq!(
            parse_listen("0.0.0.0:9464"),
            Ok("0.0.0.0:9464".parse().unwrap())
        );
        for bad in ["here", "70000", "127.0.0.1", "http://127.0.0.1:9464/"] {
            let e = parse_listen(bad).unwrap_err();
            assert!(e.contains("127.0.0.1:9464"), "{bad}: {e}");
        }
    }

    /// A result of `ok` good answers at 1 ms, `timeouts` timeouts, and a schedule.
    fn result(ok: u64, timeouts: u64) -> RunResult {
        let mut r = RunResult::empty(SystemTime::now(), Duration::from_secs(1));
        r.counts.ok = ok;
        r.counts.failures[FailureKind::Timeout] = timeouts;
        r.counts.completed = ok + timeouts;
        r.histograms.latency.record_n(1_000, ok).unwrap();
        r.schedule = Some(ScheduleStats {
            due: ok + timeouts,
            sent: ok + timeouts,
            late: 1,
            ..ScheduleStats::default()
        });
        r
    }

    fn value(page: &str, key: &str) -> u64 {
        page.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {key} in\n{page}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn repetitions_of_a_series_add_up_and_other_series_stand_apart() {
        let board = Board::default();
        let a: Labels = vec![("contender", "a".into())];
        let b: Labels = vec![("contender", "b".into())];
        for (labels, r) in [(&a, result(10, 1)), (&b, result(7, 0)), (&a, result(5, 2))] {
            board.begin(labels.clone(), Arc::new(Control::new(1)), Names::default());
            let page = board.render();
            assert!(page.contains(&format!(
                "shootout_step_active{{contender=\"{}\"}} 1",
                labels[0].1
            )));
            board.end(Some(&r));
        }
        let page = board.render();
        assert_eq!(
            value(
                &page,
                "shootout_requests_total{contender=\"a\",outcome=\"ok\"}"
            ),
            15
        );
        assert_eq!(
            value(
                &page,
                "shootout_requests_total{contender=\"a\",outcome=\"failed\"}"
            ),
            3
        );
        assert_eq!(
            value(
                &page,
                "shootout_request_failures_total{contender=\"a\",class=\"timeout\"}"
            ),
            3
        );
        assert_eq!(
            value(
                &page,
                "shootout_requests_total{contender=\"b\",outcome=\"ok\"}"
            ),
            7
        );
        assert_eq!(
            value(
                &page,
                "shootout_request_duration_seconds_count{contender=\"a\"}"
            ),
            15
        );
        assert_eq!(
            value(
                &page,
                "shootout_request_duration_seconds_bucket{contender=\"a\",le=\"0.001\"}"
            ),
            15
        );
        assert_eq!(
            value(
                &page,
                "shootout_request_duration_seconds_bucket{contender=\"a\",le=\"0.0005\"}"
            ),
            0
        );
        assert_eq!(
            value(
                &page,
                "shootout_schedule_requests_total{contender=\"a\",state=\"due\"}"
            ),
            18
        );
        assert_eq!(
            value(
                &page,
                "shootout_schedule_requests_total{contender=\"a\",state=\"late\"}"
            ),
            2
        );
        assert_eq!(value(&page, "shootout_step_active{contender=\"a\"}"), 0);
        // A load that failed keeps what its live counters showed (here nothing).
        board.begin(b.clone(), Arc::new(Control::new(1)), Names::default());
        board.end(None);
        assert_eq!(
            value(
                &board.render(),
                "shootout_requests_total{contender=\"b\",outcome=\"ok\"}"
            ),
            7
        );
    }

    /// A journey run's steps and journeys are series of their own, added up by name over
    /// the repetitions; a run that is not a journey run has none.
    #[test]
    fn a_journey_runs_steps_add_up_by_name_across_repetitions() {
        let board = Board::default();
        let names = Names {
            kinds: vec!["w › login".into()],
            journeys: vec!["w".into()],
        };
        let stats = |label: &str| {
            let mut latency = second_histogram();
            latency.record_n(3_000, 4).unwrap();
            shootout_model::TargetStats {
                label: label.into(),
                completed: 5,
                ok: 4,
                latency,
                ..shootout_model::TargetStats::new(label)
            }
        };
        for _ in 0..2 {
            board.begin(Labels::new(), Arc::new(Control::new(1)), names.clone());
            let mut r = result(4, 1);
            r.targets = vec![stats("w › login")];
            r.journeys = vec![stats("w")];
            board.end(Some(&r));
        }
        let page = board.render();
        let step = "step=\"w › login\"";
        assert_eq!(
            value(
                &page,
                &format!("shootout_journey_step_requests_total{{{step},outcome=\"ok\"}}")
            ),
            8
        );
        assert_eq!(
            value(
                &page,
                &format!("shootout_journey_step_requests_total{{{step},outcome=\"failed\"}}")
            ),
            2
        );
        assert_eq!(
            value(
                &page,
                &format!("shootout_journey_step_duration_seconds_count{{{step}}}")
            ),
            8
        );
        assert_eq!(
            value(
                &page,
                "shootout_journeys_total{journey=\"w\",outcome=\"ok\"}"
            ),
            8
        );
        // A list's entries are not journey steps.
        let other = Board::default();
        other.begin(Labels::new(), Arc::new(Control::new(1)), Names::default());
        let mut r = result(4, 1);
        r.targets = vec![stats("GET /a")];
        other.end(Some(&r));
        assert!(!other
            .render()
            .contains("shootout_journey_step_requests_total{"));
    }
}
