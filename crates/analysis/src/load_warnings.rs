//! The warnings of one load run, derived from its numbers: every threshold that turns a
//! count, a histogram, the schedule or the generator's cost into a [`Warning`] lives
//! here, and [`derive`] is the one function that applies them.
//!
//! Seams: reads a [`RunResult`] (the facts the engine recorded, or the store or a result
//! file read back) and how the load was driven (closed loop at N connections, or not);
//! writes nothing but the list. The one warning that is a recorded fact, not a judgement,
//! [`Warning::StreamsLimited`] (the HTTP/2 limit a server announced, set by
//! [`RunResult::note_streams_limited`]), is carried over as found. The callers — the
//! `load` command and the Runner on a fresh result, the merge of shards on the merged
//! one, the CLI on a run read back from the store — call [`refresh`] or
//! [`refresh_stored`]; the renderers word the list and never re-derive it. Units: the
//! histograms hold microseconds.

use shootout_model::stored::StoredRun;
use shootout_model::{
    FailureKind, GeneratorStats, LoadLevel, LoadSpec, Measure, Pace, Protocol, RunResult, Warning,
};

/// The kernel's first SYN retransmission comes after 1 s (µs, with 1% slack): connect
/// times at or past it mean a full listen backlog.
pub const SYN_RETRY_US: u64 = 990_000;

/// The busy share of a worker thread above which the generator may be the bottleneck.
pub const SATURATED: f64 = 0.9;

/// Below this share of the target rate, the schedule was not kept…
const SCHEDULE_KEPT_SHARE: f64 = 0.99;
/// …nor when more than this percentage of the requests sent were late.
const SCHEDULE_LATE_PERCENT: u64 = 1;

/// The Little's-law check ([`unserved`]) looks at 4 connections or more…
const UNSERVED_MIN_CONNECTIONS: u64 = 4;
/// …and warns when fewer than half of them account for the answers…
const UNSERVED_SHARE: f64 = 0.5;
/// …once the mean latency is over this many times the generator's CPU per request.
const UNSERVED_TURNAROUND: f64 = 4.0;

/// True when a worker thread of the generator was busy more than [`SATURATED`] of the run.
pub fn saturated(g: &GeneratorStats) -> bool {
    g.busiest_thread > SATURATED
}

/// Connections waited to be accepted long enough to matter: in at least
/// [`UNACCEPTED_SHARE`] of the accept queue's samples and in [`UNACCEPTED_SAMPLES`] or more
/// (one sample that caught a connection between its handshake and its accept is chance),
/// and [`UNACCEPTED_WAIT`] or more a connection on average. A server accepting as fast as connections come has an empty
/// queue at nearly every sample.
fn unaccepted(result: &RunResult) -> Option<Warning> {
    let a = result.listen?.accept?;
    let wait = a.mean_wait(result.duration, result.counts.connections_opened)?;
    let share = a.waited as f64 / a.samples as f64;
    (share >= UNACCEPTED_SHARE && a.waited >= UNACCEPTED_SAMPLES && wait >= UNACCEPTED_WAIT)
        .then_some(Warning::Unaccepted {
            most: a.most,
            share,
            mean_wait_ms: wait.as_secs_f64() * 1e3,
        })
}

/// See [`unaccepted`].
const UNACCEPTED_SHARE: f64 = 0.05;
/// See [`unaccepted`].
const UNACCEPTED_SAMPLES: u64 = 5;
/// See [`unaccepted`].
const UNACCEPTED_WAIT: std::time::Duration = std::time::Duration::from_millis(1);

/// Every warning of `result`, most important first; `closed_loop` is the connections of a
/// closed-loop run (`None` in rate mode, where Little's law says nothing of idle
/// connections). The fact [`Warning::StreamsLimited`] already in `result` is kept, last.
pub fn derive(result: &RunResult, closed_loop: Option<u64>) -> Vec<Warning> {
    derive_for(result, closed_loop, Protocol::Http1)
}

/// [`derive`] for a run spoken in `protocol` (over WebSocket, a connection's opening holds
/// its handshake).
pub fn derive_for(
    result: &RunResult,
    closed_loop: Option<u64>,
    protocol: Protocol,
) -> Vec<Warning> {
    let mut w = counted(result);
    // Measured by the kernel, before what the connect times suggest.
    w.extend(
        result
            .listen
            .filter(|l| l.overflows > 0 || l.drops > 0)
            .map(|l| Warning::ListenOverflowed {
                overflows: l.overflows,
                drops: l.drops,
                whose: l.blame(),
                accept: l.accept,
            }),
    );
    w.extend(unaccepted(result));
    w.extend(slow_connects(result, protocol == Protocol::WebSocket));
    w.extend(schedule_not_kept(result));
    w.extend(
        result
            .schedule
            .filter(|s| s.overtaken > 0)
            .map(|s| Warning::Overtaken { count: s.overtaken }),
    );
    if saturated(&result.generator) {
        w.push(Warning::GeneratorSaturated {
            busiest_thread: result.generator.busiest_thread,
        });
    }
    w.extend(closed_loop.and_then(|c| unserved(result, c)));
    w.extend(level_warnings(result));
    w.extend(not_converged(result));
    w.extend(
        result
            .warm_up
            .filter(|u| !u.level)
            .map(|u| Warning::WarmUpNotLevel {
                seconds: u.took.as_secs_f64(),
            }),
    );
    w.extend(
        result
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::StreamsLimited { .. }))
            .cloned(),
    );
    w
}

/// Replaces `result`'s warnings with those [`derive`] finds for a run of `spec`; a gRPC
/// run's rates are worded in calls ([`in_calls`]).
pub fn refresh(result: &mut RunResult, spec: &LoadSpec) {
    let closed = (spec.pace == Pace::Closed).then_some(spec.connections as u64);
    result.warnings = derive_for(result, closed, spec.protocol);
    if spec.expect.grpc.is_some() {
        in_calls(&mut result.warnings);
    }
}

/// A gRPC run's warnings with their rates in calls a second: its schedule paced calls
/// (whatever a streaming call's counts count), and Little's law is applied to its calls
/// (a unary or client-streaming call's latency is its time from its start to its reply).
pub fn in_calls(warnings: &mut [Warning]) {
    for w in warnings {
        match w {
            Warning::ScheduleNotKept { calls, .. } | Warning::Unserved { calls, .. } => {
                *calls = true
            }
            _ => {}
        }
    }
}

/// The histograms [`derive_for`] reads: the connects' and setups' ([`slow_connects`]) and
/// the latency ([`unserved`]).
const WARNED_BY: &[Measure] = &[Measure::Connect, Measure::Setup, Measure::Latency];

/// Replaces the warnings of every step of a run read back from the store with those
/// [`derive`] finds, closed loop at a concurrency level's connections; a gRPC workload's
/// (marked so in the stored plan, or streaming) worded in calls, as its run worded them
/// ([`in_calls`]).
pub fn refresh_stored(run: &mut StoredRun) {
    let plan = shootout_model::resolved::ResolvedPlan::parse(&run.run.plan_resolved);
    let grpc: Vec<&str> = plan
        .iter()
        .flat_map(|p| &p.workloads)
        .filter(|w| w.grpc)
        .map(|w| w.name.as_str())
        .collect();
    for step in &mut run.steps {
        let closed = match step.level {
            LoadLevel::Concurrency { connections } => Some(connections as u64),
            _ => None,
        };
        let protocol = step.wire.map_or(Protocol::Http1, |w| w.protocol);
        // A step read from the store keeps its histograms packed: those the warnings read
        // (slow connects, Little's law) are decoded for this, the others left packed.
        step.result.warnings = step.with_histograms(WARNED_BY, |r| derive_for(r, closed, protocol));
        if step.result.stream.is_some() || grpc.contains(&step.workload.as_str()) {
            in_calls(&mut step.result.warnings);
        }
    }
}

/// The level checks of the per-second series ([`certify::level`](crate::certify::level)),
/// as warnings: [`Warning::WarmUp`] when the first seconds differed from the rest, with
/// each series' mean before and after; [`Warning::Drifting`] when a series has a trend
/// after them, with its change per second and p-value. Nothing under
/// [`MIN_LEVEL_SECONDS`](crate::certify::MIN_LEVEL_SECONDS) whole seconds.
pub fn level_warnings(result: &RunResult) -> Vec<Warning> {
    use crate::certify::{level, LEVEL_ALPHA};
    let Some(l) = level(&result.series) else {
        return Vec::new();
    };
    let whole = &result.series[..l.seconds];
    let mut w = Vec::new();
    if let Some(k) = l.warm_up {
        let latency: Vec<f64> = whole.iter().map(|s| s.mean_us).collect();
        let answers: Vec<f64> = whole.iter().map(|s| s.completed as f64).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let p = [&latency, &answers]
            .iter()
            .filter_map(|x| crate::mann_whitney::test(&x[..k], &x[k..]))
            .map(|m| m.p)
            .fold(1.0, f64::min);
        w.push(Warning::WarmUp {
            seconds: k as u64,
            of: l.seconds as u64,
            latency_before_ms: mean(&latency[..k]) / 1e3,
            latency_after_ms: mean(&latency[k..]) / 1e3,
            rps_before: mean(&answers[..k]),
            rps_after: mean(&answers[k..]),
            p,
        });
    }
    if l.drifting() {
        let seen = |t: Option<crate::certify::Trend>| t.filter(|t| t.p < LEVEL_ALPHA);
        let (lat, thr) = (seen(l.latency), seen(l.throughput));
        w.push(Warning::Drifting {
            seconds: (l.seconds - l.warm_up.unwrap_or(0)) as u64,
            latency_change: lat.map(|t| t.change),
            latency_p: lat.map(|t| t.p),
            throughput_change: thr.map(|t| t.change),
            throughput_p: thr.map(|t| t.p),
        });
    }
    w
}

/// [`Warning::NotConverged`] when the run had conditions (`until`) that did not all hold
/// before its time ran out; nothing for a run stopped by Ctrl-C (its end says so).
pub fn not_converged(result: &RunResult) -> Option<Warning> {
    let u = result.until.as_ref()?;
    if u.converged.is_some() || result.interrupted {
        return None;
    }
    let unmet = u
        .conditions
        .iter()
        .zip(&u.last)
        .filter(|(c, r)| !r.is_some_and(|r| r.holds(c)))
        .map(|(c, r)| {
            let width = r.filter(|r| !r.open_above).map(|r| r.width());
            (c.to_string(), width.filter(|w| w.is_finite()))
        })
        .collect();
    Some(Warning::NotConverged {
        seconds: result.duration.as_secs_f64(),
        unmet,
    })
}

/// The warnings any non-zero count raises: nothing completed, failures, failed connects,
/// dropped connections, requests sent again.
fn counted(result: &RunResult) -> Vec<Warning> {
    let c = &result.counts;
    let mut w = Vec::new();
    if c.completed == 0 {
        w.push(Warning::NothingCompleted);
    }
    if c.failed() > 0 {
        w.push(Warning::Failures {
            failed: c.failed(),
            completed: c.completed,
        });
    }
    let faults = c.failures[FailureKind::GeneratorFault];
    if faults > 0 {
        w.push(Warning::GeneratorFault { count: faults });
    }
    if c.connections_opening > 0 {
        w.push(Warning::ConnectionsOpening {
            count: c.connections_opening,
        });
    }
    if c.pings_unanswered > 0 {
        w.push(Warning::PingsUnanswered {
            count: c.pings_unanswered,
        });
    }
    if c.connections_failed > 0 {
        w.push(Warning::ConnectFailed {
            count: c.connections_failed,
        });
    }
    if c.dropped > 0 {
        w.push(Warning::Dropped { count: c.dropped });
    }
    if c.retried > 0 {
        w.push(Warning::Retried { count: c.retried });
    }
    w
}

/// Connects of [`SYN_RETRY_US`] or more: every connection's setup when recorded (rate mode
/// opens them before any request is due), else the connects charged to requests.
fn slow_connects(result: &RunResult, upgrade: bool) -> Option<Warning> {
    let h = &result.histograms;
    let slow = h
        .setup
        .count_between(SYN_RETRY_US, u64::MAX)
        .max(h.connect.count_between(SYN_RETRY_US, u64::MAX));
    (slow > 0).then_some(Warning::SlowConnects {
        count: slow,
        upgrade,
    })
}

/// Rate mode: whether the schedule was kept (see [`schedule_not_kept`]); a closed loop has
/// none to keep.
pub fn schedule_kept(result: &RunResult) -> bool {
    schedule_not_kept(result).is_none()
}

/// Rate mode: 1% short of the target, or more than 1% of the requests late, is "not kept".
fn schedule_not_kept(result: &RunResult) -> Option<Warning> {
    let s = result.schedule.as_ref()?;
    let short = s.achieved_rps < s.target_rps * SCHEDULE_KEPT_SHARE;
    let late = s.late * 100 > s.sent.max(1) * SCHEDULE_LATE_PERCENT;
    (short || late).then_some(Warning::ScheduleNotKept {
        target_rps: s.target_rps,
        achieved_rps: s.achieved_rps,
        late: s.late,
        waited: s.late_no_connection.min(s.late),
        capped: held_by_cap(s),
        starved: (late_reason(result, s) == NotKept::Starved)
            .then_some(result.generator.busiest_thread),
        // A journey run's schedule starts journeys (each a new user).
        journeys: !result.journeys.is_empty(),
        // A gRPC run's are calls: only its spec says so ([`refresh`]).
        calls: false,
    })
}

/// Every connection the run could open was open: the cap was reached, or the run was
/// measured before connections opened as the schedule needed them (no cap recorded: its
/// connections were all it had).
fn held_by_cap(s: &shootout_model::ScheduleStats) -> bool {
    s.capped || s.max_connections == 0
}

/// The busy share of the generator's busiest thread at or above which sends late with a
/// connection free are its own loop's doing (its work kept it from sending on time):
/// half its time. Below, the loop had time to spare, so a late send means its thread was
/// ready but did not run: the CPU was taken by the server or other processes sharing it
/// ([`NotKept::Starved`]).
pub const OWN_LOOP: f64 = 0.5;

/// Why a schedule was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotKept {
    /// Sends were late with a connection free, or the rate was not sent, while the
    /// generator's busiest thread was busy at least [`OWN_LOOP`] of the time (or
    /// saturated): its own loop fell behind.
    Generator,
    /// Sends were late with a connection free while the generator's busiest thread was
    /// busy less than [`OWN_LOOP`] of the time: its threads waited for a CPU that the
    /// server or other processes held.
    Starved,
    /// Sends waited for a connection with the cap on connections reached.
    ConnectionCap,
    /// Sends waited for a connection below the cap: the server turned new connections
    /// away or was slow to accept them.
    Server,
}

impl NotKept {
    /// The reason's key in JSON: `generator`, `connection_cap`, `server`.
    pub fn key(self) -> &'static str {
        match self {
            NotKept::Generator => "generator",
            NotKept::Starved => "starved",
            NotKept::ConnectionCap => "connection_cap",
            NotKept::Server => "server",
        }
    }

    /// True when the lateness was the generator's (its loop, or its threads kept off a
    /// CPU), not the server's: the lag says nothing of the server.
    pub fn generator(self) -> bool {
        matches!(self, NotKept::Generator | NotKept::Starved)
    }
}

/// How a rate run kept its schedule: whether (by the rule of [`schedule_kept`]), why not,
/// the share of sends that left within 1 ms of their due time, and the share of the rate
/// asked for that was sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Certificate {
    /// The schedule was kept.
    pub kept: bool,
    /// Why not, when it was not.
    pub reason: Option<NotKept>,
    /// Sends within 1 ms of their due time, as a share of all sends (0..1).
    pub on_time: f64,
    /// Requests per second sent over those asked for.
    pub achieved_share: f64,
}

/// Why the schedule of `result` (its stats `s`) was not kept, were it not: see
/// [`NotKept`].
fn late_reason(result: &RunResult, s: &shootout_model::ScheduleStats) -> NotKept {
    // Most late sends waited for a connection: the server's doing, unless the generator
    // was saturated (then answers it had not read yet kept its connections busy too).
    let waited = s.late_no_connection.min(s.late) * 2 >= s.late
        && s.late > 0
        && !saturated(&result.generator);
    let g = &result.generator;
    match (waited, held_by_cap(s)) {
        (true, true) => NotKept::ConnectionCap,
        (true, false) => NotKept::Server,
        // Threads measured and idle at least half the time: late for want of a CPU.
        (false, _) if g.threads > 0 && g.busiest_thread < OWN_LOOP => NotKept::Starved,
        (false, _) => NotKept::Generator,
    }
}

/// The schedule's certificate of a rate run; `None` in a closed loop.
pub fn certificate(result: &RunResult) -> Option<Certificate> {
    let s = result.schedule.as_ref()?;
    let kept = schedule_kept(result);
    let reason = (!kept).then(|| late_reason(result, s));
    Some(Certificate {
        kept,
        reason,
        on_time: (s.sent - s.late.min(s.sent)) as f64 / s.sent.max(1) as f64,
        achieved_share: if s.target_rps > 0.0 {
            s.achieved_rps / s.target_rps
        } else {
            0.0
        },
    })
}

/// Closed loop at `connections`: [`Warning::Unserved`] when req/s × mean latency (Little's
/// law: the connections busy on average) is under half of `connections`. A connection the
/// server never answers adds nothing to either factor, so the gap is invisible in every
/// other figure. On a healthy server only the generator's own turnaround between an answer
/// and the next request lowers the product, so the check is made only when the latency is
/// over 4 times the generator's CPU per request (a turnaround that long would be a
/// saturated generator, reported apart).
///
/// A streaming gRPC run counts replies or messages, several a call, each timed from the
/// reply before or from its message's due time, not from its call's start: the law is
/// applied to its calls ([`call_times`]), each busy from its start to its last reply.
fn unserved(result: &RunResult, connections: u64) -> Option<Warning> {
    let latency = &result.histograms.latency;
    if connections < UNSERVED_MIN_CONNECTIONS || latency.is_empty() {
        return None;
    }
    let (rps, mean_ms, done, calls) = match call_times(result) {
        Some((per_s, mean_ms, calls)) => (per_s, mean_ms, calls, true),
        None => (
            result.rps(),
            latency.mean() / 1e3,
            result.counts.completed,
            false,
        ),
    };
    let cpu_us = result.generator.cpu().as_secs_f64() * 1e6 / done.max(1) as f64;
    if mean_ms * 1e3 < UNSERVED_TURNAROUND * cpu_us {
        return None;
    }
    let served = rps * mean_ms / 1e3;
    (served < connections as f64 * UNSERVED_SHARE).then_some(Warning::Unserved {
        connections,
        served,
        rps,
        mean_ms,
        calls,
    })
}

/// A streaming gRPC run's calls that read a reply (server and bidirectional streaming,
/// whose counts count replies or messages): calls a second, a call's mean time from its
/// start to its last reply (ms: its first reply's time and the gaps after it), and how
/// many; `None` for a run whose counts count its calls or requests.
fn call_times(r: &RunResult) -> Option<(f64, f64, u64)> {
    let st = r.stream.as_deref().filter(|s| s.shape != "client")?;
    let calls = st.first_reply.len();
    let run_s = r.duration.as_secs_f64();
    if calls == 0 || run_s <= 0.0 {
        return None;
    }
    let busy_us = st.first_reply.mean() * calls as f64 + st.gaps.mean() * st.gaps.len() as f64;
    Some((calls as f64 / run_s, busy_us / calls as f64 / 1e3, calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::{ScheduleStats, Target};
    use std::time::{Duration, SystemTime};

    fn empty() -> RunResult {
        RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_secs(1))
    }

    /// Sends late with a connection free are the generator's own loop only when its
    /// busiest thread was busy at least half the time; at 14 % its threads waited for a
    /// CPU, and neither the certificate nor the warning blames the loop.
    #[test]
    fn late_sends_blame_the_loop_only_when_it_was_busy() {
        let late = |busiest_thread: f64| RunResult {
            generator: GeneratorStats {
                threads: 1,
                busiest_thread,
                ..Default::default()
            },
            schedule: Some(ScheduleStats {
                target_rps: 1000.0,
                achieved_rps: 1000.0,
                due: 1000,
                sent: 1000,
                late: 100,
                late_no_connection: 5,
                max_connections: 100,
                ..Default::default()
            }),
            ..empty()
        };
        for (busy, reason, blamed) in [
            (0.14, NotKept::Starved, false),
            (0.49, NotKept::Starved, false),
            (0.5, NotKept::Generator, true),
            (0.95, NotKept::Generator, true),
        ] {
            let r = late(busy);
            assert_eq!(certificate(&r).unwrap().reason, Some(reason), "{busy}");
            assert!(reason.generator());
            let w = derive(&r, None)
                .into_iter()
                .find(|w| matches!(w, Warning::ScheduleNotKept { .. }))
                .unwrap()
                .to_string();
            assert_eq!(w.contains("own loop fell behind"), blamed, "{busy}: {w}");
            assert_eq!(w.contains("waited for a CPU"), !blamed, "{busy}: {w}");
        }
        // No threads measured (a result without the generator's figures): the loop, as
        // before.
        let mut r = late(0.0);
        r.generator.threads = 0;
        assert_eq!(certificate(&r).unwrap().reason, Some(NotKept::Generator));
    }

    /// A full listen queue was guessed from connect times; the kernel's count is said.
    #[test]
    fn a_listen_queue_the_kernel_saw_overflow_is_said() {
        let mut r = RunResult::empty(std::time::SystemTime::UNIX_EPOCH, Duration::from_secs(1));
        r.counts.completed = 1;
        r.counts.ok = 1;
        assert!(derive(&r, None).is_empty());
        r.listen = Some(shootout_model::ListenQueue {
            overflows: 0,
            drops: 0,
            accept: None,
        });
        assert!(derive(&r, None).is_empty());
        r.listen = Some(shootout_model::ListenQueue {
            overflows: 4,
            drops: 5,
            accept: None,
        });
        let w = derive(&r, None);
        assert_eq!(
            w,
            [Warning::ListenOverflowed {
                overflows: 4,
                drops: 5,
                whose: shootout_model::ListenBlame::Unmeasured,
                accept: None,
            }]
        );
        // Not sampled, the server's queue cannot be told from others'.
        assert!(w[0]
            .to_string()
            .starts_with("listen queues on this machine overflowed 4 times"));
        // Its own queue seen at its backlog: the server's; never near it: others'.
        let seen = |most, full| shootout_model::AcceptWaiting {
            samples: 100,
            waited: 100,
            total: 100 * most,
            most,
            backlog: Some(1),
            full,
        };
        for (accept, whose, words) in [
            (
                seen(2, 100),
                shootout_model::ListenBlame::Server,
                "the server's listen queue overflowed 4 times",
            ),
            (
                shootout_model::AcceptWaiting {
                    waited: 0,
                    total: 0,
                    ..seen(0, 0)
                },
                shootout_model::ListenBlame::Others,
                "listen queues on this machine overflowed 4 times",
            ),
        ] {
            r.listen = Some(shootout_model::ListenQueue {
                overflows: 4,
                drops: 5,
                accept: Some(accept),
            });
            let w = derive(&r, None);
            let Some(Warning::ListenOverflowed { whose: got, .. }) = w.first() else {
                panic!("{w:?}");
            };
            assert_eq!(*got, whose);
            assert!(w[0].to_string().starts_with(words), "{}", w[0]);
        }
    }

    /// Connections that waited to be accepted are said when they waited long enough, a
    /// share of the time: by Little's law, 100 samples of 2 waiting over 10 s and 1,000
    /// connections is 20 ms a connection.
    #[test]
    fn connections_left_in_the_accept_queue_are_said_when_they_waited() {
        let mut r = RunResult::empty(std::time::SystemTime::UNIX_EPOCH, Duration::from_secs(10));
        r.counts.completed = 1000;
        r.counts.ok = 1000;
        r.counts.connections_opened = 1000;
        let with = |samples, waited, total, most| {
            let mut r = r.clone();
            r.listen = Some(shootout_model::ListenQueue {
                overflows: 0,
                drops: 0,
                accept: Some(shootout_model::AcceptWaiting {
                    samples,
                    waited,
                    total,
                    most,
                    backlog: Some(128),
                    full: 0,
                }),
            });
            derive(&r, None)
        };
        let w = with(100, 100, 200, 2);
        assert_eq!(
            w,
            [Warning::Unaccepted {
                most: 2,
                share: 1.0,
                mean_wait_ms: 20.0,
            }]
        );
        assert!(w[0].to_string().contains("100% of the samples"), "{}", w[0]);
        assert!(
            w[0].to_string().contains("20.0 ms a connection"),
            "{}",
            w[0]
        );
        // An empty queue, a queue seldom held (4 of 100 samples), and a short wait
        // (0.5 ms a connection: the next connection of a server that closes after each
        // answer) are not.
        assert!(with(100, 0, 0, 0).is_empty());
        assert!(with(100, 4, 400, 100).is_empty());
        assert!(with(100, 50, 5, 1).is_empty());
        // Four samples of ten, however long they make the wait, are chance.
        assert!(with(10, 4, 40, 10).is_empty());
        assert!(!with(10, 5, 50, 10).is_empty());
        // Without connections there is no wait to tell.
        r.counts.connections_opened = 0;
        r.listen = Some(shootout_model::ListenQueue {
            overflows: 0,
            drops: 0,
            accept: Some(shootout_model::AcceptWaiting {
                samples: 10,
                waited: 10,
                total: 10,
                most: 1,
                backlog: Some(128),
                full: 0,
            }),
        });
        assert!(derive(&r, None).is_empty());
    }

    /// Requests answered after later ones sent on other connections are said, with who
    /// holds them; none, nothing is said.
    #[test]
    fn requests_overtaken_are_said() {
        let mut r = RunResult::empty(std::time::SystemTime::UNIX_EPOCH, Duration::from_secs(1));
        r.counts.completed = 1;
        r.counts.ok = 1;
        let mut s = ScheduleStats {
            target_rps: 1.0,
            achieved_rps: 1.0,
            due: 1,
            sent: 1,
            late: 0,
            late_no_connection: 0,
            max_lag: Duration::ZERO,
            lag_p50_us: 0,
            lag_p99_us: 0,
            lag_p999_us: 0,
            connections: 1,
            max_connections: 1,
            capped: false,
            spun: Duration::ZERO,
            overtaken: 0,
            arrival: Default::default(),
        };
        r.schedule = Some(s);
        assert!(derive(&r, None).is_empty());
        s.overtaken = 3;
        r.schedule = Some(s);
        let w = derive(&r, None);
        assert_eq!(w, [Warning::Overtaken { count: 3 }]);
        assert!(w[0]
            .to_string()
            .contains("one connection at a time per worker"));
    }

    #[test]
    fn warnings_follow_the_numbers() {
        let mut r = RunResult {
            generator: GeneratorStats {
                threads: 1,
                busiest_thread: 0.95,
                ..Default::default()
            },
            schedule: Some(ScheduleStats {
                target_rps: 1000.0,
                achieved_rps: 800.0,
                due: 1000,
                sent: 800,
                late: 0,
                late_no_connection: 0,
                max_lag: Duration::ZERO,
                ..Default::default()
            }),
            ..empty()
        };
        let w = derive(&r, None);
        assert!(w.contains(&Warning::NothingCompleted));
        assert!(w
            .iter()
            .any(|w| matches!(w, Warning::ScheduleNotKept { .. })));
        assert!(w
            .iter()
            .any(|w| matches!(w, Warning::GeneratorSaturated { .. })));
        r.histograms.connect.record(1_003_000).unwrap();
        assert!(
            derive(&r, None).contains(&Warning::SlowConnects {
                count: 1,
                upgrade: false
            }),
            "{w:?}"
        );
        // Over WebSocket the opening holds the handshake: a slow upgrade is no SYN retry.
        let ws = derive_for(&r, None, Protocol::WebSocket);
        let slow = ws
            .iter()
            .find(|w| matches!(w, Warning::SlowConnects { upgrade: true, .. }))
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            slow.contains("open and upgrade to WebSocket") && !slow.contains("retried the SYN"),
            "{ws:?}"
        );
        r.histograms.connect.reset();
        r.counts.completed = 10;
        r.counts.ok = 10;
        r.generator.busiest_thread = 0.5;
        r.schedule = None;
        assert_eq!(derive(&r, None), vec![]);
    }

    /// Each rate run is certified: kept or not, why not (who was late, whether the cap
    /// was reached), the share of sends on time and of the rate sent.
    #[test]
    fn a_schedule_certificate_says_who_was_late() {
        let run = |late, waited, capped| RunResult {
            schedule: Some(ScheduleStats {
                target_rps: 1000.0,
                achieved_rps: 1000.0,
                due: 1000,
                sent: 1000,
                late,
                late_no_connection: waited,
                capped,
                max_connections: 100,
                ..Default::default()
            }),
            ..empty()
        };
        let c = certificate(&run(5, 0, false)).unwrap();
        assert_eq!((c.kept, c.reason), (true, None));
        assert!((c.on_time - 0.995).abs() < 1e-9 && (c.achieved_share - 1.0).abs() < 1e-9);
        let reason = |late, waited, capped| certificate(&run(late, waited, capped)).unwrap().reason;
        assert_eq!(reason(50, 0, false), Some(NotKept::Generator));
        assert_eq!(reason(50, 40, true), Some(NotKept::ConnectionCap));
        assert_eq!(reason(50, 40, false), Some(NotKept::Server));
        // A saturated generator left answers unread, so its connections looked busy:
        // the late sends are its own, whatever they waited for.
        let mut busy = run(50, 40, false);
        busy.generator.busiest_thread = 0.97;
        assert_eq!(certificate(&busy).unwrap().reason, Some(NotKept::Generator));
        assert_eq!(certificate(&empty()), None, "a closed loop has no schedule");
    }

    #[test]
    fn a_schedule_is_kept_within_one_percent() {
        let at = |achieved_rps, late| RunResult {
            counts: shootout_model::Counts {
                completed: 1000,
                ok: 1000,
                ..Default::default()
            },
            schedule: Some(ScheduleStats {
                target_rps: 1000.0,
                achieved_rps,
                due: 1000,
                sent: 1000,
                late,
                late_no_connection: 0,
                max_lag: Duration::ZERO,
                ..Default::default()
            }),
            ..empty()
        };
        assert_eq!(derive(&at(990.0, 10), None), vec![]);
        assert_eq!(derive(&at(989.0, 0), None).len(), 1);
        assert_eq!(derive(&at(1000.0, 11), None).len(), 1);
    }

    #[test]
    fn littles_law_finds_the_connections_left_unanswered() {
        // Little's law: 1000 answers in 1 s at 2 ms each keep 2 connections busy.
        let mut r = empty();
        r.counts.completed = 1000;
        r.counts.ok = 1000;
        r.histograms.latency.record_n(2000, 1000).unwrap();
        let unserved = |r: &RunResult, c| {
            derive(r, c).iter().find_map(|w| match w {
                Warning::Unserved { served, .. } => Some(*served),
                _ => None,
            })
        };
        // 2 of 10 connections: the other 8 were never answered.
        let served = unserved(&r, Some(10)).expect("2 of 10 connections served");
        assert!((served - 2.0).abs() < 0.01, "{served}");
        // 2 of 4 is half: not flagged; under 4 connections nothing is judged; nor in rate
        // mode.
        for connections in [Some(4), Some(3), Some(1), None] {
            assert_eq!(unserved(&r, connections), None, "c={connections:?}");
        }
        // 10 ms each: 10 connections busy of 10.
        r.histograms.latency.reset();
        r.histograms.latency.record_n(10_000, 1000).unwrap();
        assert_eq!(derive(&r, Some(10)), vec![]);
    }

    /// A bidirectional run on a schedule counts its messages, each timed from its due
    /// time to its reply: Little's law counts its calls, each busy from its start to its
    /// last reply, not the messages' short waits.
    #[test]
    fn littles_law_counts_a_stream_s_calls() {
        // 500 calls in 1 s, each of 10 messages 2 ms apart, each answered 0.1 ms after
        // it was due: as units, 5000 × 0.1 ms keep 0.5 connections busy of 10…
        let calls = |n: u64| {
            let mut r = empty();
            r.counts.completed = 10 * n;
            r.counts.ok = 10 * n;
            r.histograms.latency.record_n(100, 10 * n).unwrap();
            let mut st = shootout_model::StreamStats::new("bidi");
            st.first_reply.record_n(100, n).unwrap();
            st.gaps.record_n(2000, 9 * n).unwrap();
            r.stream = Some(Box::new(st));
            r
        };
        // …but each call lasts 18.1 ms: 9.05 calls in flight of 10.
        assert_eq!(
            derive(&calls(500), Some(10)),
            vec![],
            "every connection busy"
        );
        // 100 such calls: 1.81 in flight of 10.
        let w = derive(&calls(100), Some(10))
            .into_iter()
            .find(|w| matches!(w, Warning::Unserved { .. }))
            .expect("8 of 10 connections left without a call answered");
        assert_eq!(
            w.to_string(),
            "only about 2 of 10 connections were being answered at a time (100 calls/s × 18.100 ms a call, from its start to its last reply, by Little's law): the others waited without an answer, so the latency shown is that of the served ones only (the server's worker or connection limit is below the concurrency; a shorter timeout turns the waits into counted failures)"
        );
    }

    /// A run of `n` whole seconds (and a last partial one), second `s` holding
    /// `answers(s)` answers around `latency_us(s)` (± 10% in a fixed pattern), with its
    /// counts.
    fn run_of(n: u32, latency_us: impl Fn(u32) -> f64, answers: impl Fn(u32) -> u64) -> RunResult {
        let mut r = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_secs(n.into()));
        let wobble = [0.0, 0.1, -0.1, 0.05, -0.05];
        r.series = (0..=n)
            .map(|s| {
                let mut h = shootout_model::result::second_histogram();
                let count = answers(s);
                for i in 0..count {
                    let v = latency_us(s) * (1.0 + wobble[i as usize % wobble.len()]);
                    h.record(v as u64).unwrap();
                    r.histograms.latency.record(v as u64).unwrap();
                }
                shootout_model::SecondStats::of(s, count, 0, &h)
            })
            .collect();
        r.counts.completed = r.histograms.latency.len();
        r.counts.ok = r.counts.completed;
        r
    }

    /// A latency growing 1% a second through 30 s is a `drifting` warning that says by
    /// how much and how sure; level seconds that wobble are not; a warm-up of 6 s at
    /// three times the latency and half the answers is a `warm_up` warning with both
    /// means and the fix, and no drift after it.
    #[test]
    fn drift_and_warm_up_are_warnings_with_the_series_facts() {
        // Second-to-second noise that does not trend: a fixed pattern of ±3%.
        let noise = |s: u32| 1.0 + [0.0, 0.03, -0.02, 0.01, -0.03, 0.02, -0.01][s as usize % 7];
        let rising = run_of(30, |s| 1_000.0 * 1.01f64.powi(s as i32) * noise(s), |_| 200);
        let w = level_warnings(&rising);
        let [Warning::Drifting {
            seconds,
            latency_change: Some(change),
            latency_p: Some(p),
            throughput_change: None,
            ..
        }] = w.as_slice()
        else {
            panic!("{w:?}");
        };
        assert_eq!(*seconds, 30);
        assert!((change - 0.01).abs() < 0.002, "{change}");
        assert!(*p < 1e-4, "{p}");
        let text = w[0].to_string();
        assert!(
            text.starts_with("the run drifted through its 30 s: latency rose 1.0% a second (Mann–Kendall p < 0.0001)"),
            "{text}"
        );
        // Through derive, as every caller gets it.
        assert!(derive(&rising, None).iter().any(|w| w.kind() == "drifting"));

        let level = run_of(30, |s| 1_000.0 * noise(s), |_| 200);
        assert_eq!(level_warnings(&level), vec![]);
        // Under 8 whole seconds nothing is judged.
        assert_eq!(
            level_warnings(&run_of(7, |s| 1_000.0 * 1.1f64.powi(s as i32), |_| 200)),
            vec![]
        );

        let warm = run_of(
            30,
            |s| (if s < 6 { 3_000.0 } else { 1_000.0 }) * noise(s),
            |s| if s < 6 { 100 } else { 200 },
        );
        let w = level_warnings(&warm);
        let [Warning::WarmUp {
            seconds: 6,
            of: 30,
            latency_before_ms,
            latency_after_ms,
            rps_before,
            rps_after,
            p,
        }] = w.as_slice()
        else {
            panic!("{w:?}");
        };
        assert!((latency_before_ms - 3.0).abs() < 0.1 && (latency_after_ms - 1.0).abs() < 0.05);
        assert_eq!((*rps_before, *rps_after), (100.0, 200.0));
        assert!(*p < crate::certify::LEVEL_ALPHA, "{p}");
        let text = w[0].to_string();
        assert!(
            text.starts_with("the first 6 s of 30 differed from the rest"),
            "{text}"
        );
        assert!(text.contains("--warmup 6s or more"), "{text}");
    }

    #[test]
    fn the_streams_limit_is_a_fact_carried_over_and_a_spec_says_closed_or_not() {
        let mut r = empty();
        r.counts.completed = 1000;
        r.counts.ok = 1000;
        r.histograms.latency.record_n(2000, 1000).unwrap();
        r.note_streams_limited(8, Some(3));
        r.warnings.push(Warning::NothingCompleted);
        let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:1/").unwrap());
        spec.connections = 10;
        refresh(&mut r, &spec);
        assert_eq!(
            r.warnings.iter().map(Warning::kind).collect::<Vec<_>>(),
            ["unserved", "streams_limited"],
            "a stale warning is dropped, the fact kept"
        );
        spec.pace = Pace::Rate(1000.0);
        refresh(&mut r, &spec);
        assert_eq!(
            r.warnings,
            [Warning::StreamsLimited {
                asked: 8,
                allowed: 3
            }]
        );
    }

    /// A gRPC run's schedule paces calls and its Little's law counts calls: the warnings
    /// said req/s and requests; a spec with a gRPC reply words them in calls.
    #[test]
    fn a_grpc_run_s_warnings_say_calls() {
        let mut r = empty();
        r.counts.completed = 1000;
        r.counts.ok = 1000;
        r.histograms.latency.record_n(2000, 1000).unwrap();
        r.schedule = Some(ScheduleStats {
            target_rps: 1200.0,
            achieved_rps: 1000.0,
            due: 1200,
            sent: 1000,
            late: 200,
            late_no_connection: 0,
            ..Default::default()
        });
        let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:1/p.S/M").unwrap());
        spec.connections = 10;
        let said = |r: &RunResult| -> Vec<String> {
            r.warnings
                .iter()
                .filter(|w| {
                    matches!(
                        w,
                        Warning::ScheduleNotKept { .. } | Warning::Unserved { .. }
                    )
                })
                .map(Warning::to_string)
                .collect()
        };
        refresh(&mut r, &spec);
        let http = said(&r);
        assert_eq!(http.len(), 2, "{http:?}");
        assert!(http.iter().all(|w| w.contains("req/s")), "{http:?}");
        spec.expect.grpc = Some(shootout_model::GrpcReply {
            schema: std::sync::Arc::from(&[][..]),
            method: "p.S.M".into(),
            max_message: 1 << 20,
            json: None,
            stream: Default::default(),
            compress: false,
        });
        refresh(&mut r, &spec);
        let grpc = said(&r);
        assert_eq!(grpc.len(), 2, "{grpc:?}");
        assert!(
            grpc[0].starts_with(
                "the schedule of 1200 calls/s was not kept: 1000 calls/s sent, 200 calls sent late"
            ),
            "{grpc:?}"
        );
        assert!(
            grpc[1].contains("(1000 calls/s × 2.000 ms a call, from its start to its last reply"),
            "{grpc:?}"
        );
        assert!(grpc.iter().all(|w| !w.contains("req/s")), "{grpc:?}");
    }
}
