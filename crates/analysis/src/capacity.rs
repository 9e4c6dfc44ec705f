//! The capacity search: the most requests per second a server sustains within its SLOs,
//! as a pure function from the steps measured so far to the next rate to try (as the
//! pacer is a pure function of time). The caller runs each step (an open-loop load at the
//! rate [`next`] names), judges it ([`judge`]) and asks again, until [`next`] says
//! [`Next::Done`].
//!
//! The rule: grow the offered rate geometrically from [`Search::from`] (× [`Search::growth`])
//! until a step breaks an SLO, the generator cannot keep the schedule, or
//! [`Search::to`] is reached; then bisect (geometric midpoints) between the highest rate
//! that met every SLO and the lowest that did not, until they are within
//! [`Search::resolution`] of each other. A rate's verdict near the boundary is not taken
//! from one step: once the search is about to rest on them (a rate found by bisecting
//! between them leaves either behind), the lowest failing rate and the highest passing
//! one are measured again, and their steps decide together with the evidence the run has
//! ([`crate::boundary`]: the per-second counts behind each SLO, with a Student's t
//! interval widened for the correlation of consecutive seconds), measured again while the
//! evidence is unclear, up to [`boundary::MOST_STEPS`] steps. Where that evidence is
//! missing (an SLO with no per-second form, a step judged not kept, a store from before it
//! was kept), two agreeing verdicts of at most three decide; and two steps each decided
//! broken before its deadline (its verdict the deadline's whatever came, its seconds too
//! few for an interval), and none other, decide their rate broken. A capacity is never
//! above a rate whose schedule the generator did not keep.

use crate::boundary::{self, Call, Evidence};
pub use crate::decided::Ended;
use crate::decided::{Decided, Most, SoFar};
use crate::load_warnings::NotKept;
use hdrhistogram::Histogram;
use shootout_model::find_max::{EndRule, FindMax};
use shootout_model::journey::JourneyFile;
use shootout_model::threshold::{step_index, Threshold};
use shootout_model::RunResult;
use std::time::Duration;

/// What the search covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    /// The first rate tried, req/s.
    pub from: f64,
    /// The highest rate tried, req/s.
    pub to: f64,
    /// Each growth step multiplies the rate by this (more than 1).
    pub growth: f64,
    /// The search ends when the highest passing and the lowest failing rate are within
    /// this share of each other (0.05: 5 %).
    pub resolution: f64,
}

impl Search {
    /// From `from` to `to`, doubling, to 5 %.
    pub fn new(from: f64, to: f64) -> Search {
        Search {
            from,
            to,
            growth: 2.0,
            resolution: 0.05,
        }
    }
}

pub use shootout_model::find_max::Verdict;

/// One step measured: the rate offered, its verdict and its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Offered rate, req/s.
    pub rate: f64,
    /// How it went.
    pub verdict: Verdict,
    /// Its per-second evidence, for a rate at the boundary (may be empty).
    pub evidence: Evidence,
    /// How the search takes it: as evidence, a rung passed, or a step broken early.
    pub took: Took,
}

/// How the search takes a step, from how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Took {
    /// As evidence of its rate (its seconds, or its verdict where it has none).
    Evidence,
    /// A rung of the ramp that plainly passed ([`crate::decided::passes`]): the search
    /// moves on from it but never counts it as evidence; a rate with only such steps is
    /// measured again in full before it may bound the capacity.
    Passed,
    /// Decided broken before its deadline ([`Ended::Decided`]): its verdict is the one its
    /// deadline would have given whatever came, but its seconds are too few to weigh in an
    /// interval, so two such steps, and none other, decide their rate ([`standing_on`]).
    BrokeEarly,
}

impl Step {
    /// The step at `rate` that gave `result`, judged `verdict` against `slos`.
    pub fn of(rate: f64, slos: &[Threshold], result: &RunResult, verdict: Verdict) -> Step {
        // The seconds' answers of a step broken by its requests still in flight
        // ([`stuck_break`]) would meet the SLO it broke: it counts by its verdict alone.
        // (A step stored met before that rule keeps its evidence: a report of an older
        // store replays its search as it ran.)
        let stuck = matches!(verdict, Verdict::Broke(i)
            if slos.get(i).is_some_and(|s| broke_by_waiting_alone(s, result)));
        Step {
            rate,
            evidence: if stuck {
                Evidence::default()
            } else {
                Evidence::of(slos, result, &verdict)
            },
            verdict,
            took: Took::Evidence,
        }
    }

    /// The same step, taken as `took` says.
    pub fn taken(mut self, took: Took) -> Step {
        self.took = took;
        self
    }

    /// A rung of the ramp that plainly passed ([`Took::Passed`]).
    pub fn passed(&self) -> bool {
        self.took == Took::Passed
    }

    /// A step known by its verdict alone (no per-second evidence).
    pub fn voted(rate: f64, verdict: Verdict) -> Step {
        Step {
            rate,
            verdict,
            evidence: Evidence::default(),
            took: Took::Evidence,
        }
    }
}

/// What limited the search.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// An SLO: the index of the one the lowest failing rate broke.
    Slo(usize),
    /// The same, with the cap on connections reached at that rate: the server answered
    /// too slowly for the connections allowed (see [`at_cap`]).
    ConnectionCap(usize),
    /// The generator could not keep the schedule of the lowest failing rate.
    Generator,
    /// Every rate up to [`Search::to`] met the SLOs: the capacity is at least `to`.
    Ceiling,
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// The highest rate that met every SLO, if any did.
    pub max_rps: Option<f64>,
    /// The lowest rate that did not, if any was found: the capacity lies in
    /// `[max_rps, first_failing_rps)`.
    pub first_failing_rps: Option<f64>,
    /// What stopped it.
    pub limited_by: Limit,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Measure a step at this rate.
    Try(f64),
    /// The search is over.
    Done(Capacity),
}

/// Whether the generator kept the schedule of `result` (the one rule of
/// [`crate::load_warnings::schedule_kept`]).
pub fn kept(result: &RunResult) -> bool {
    crate::load_warnings::schedule_kept(result)
}

/// A step's verdict against `slos` (each the condition that must hold, in `--fail-if`'s
/// grammar). Latency counts from each request's due time, so a send the generator made
/// late can only make a step look worse: SLOs that held despite late sends held. A step
/// says nothing of the server ([`Verdict::NotKept`]) when the generator did not send the
/// rate offered (1 % short), or an SLO broke while it did not keep the schedule, unless
/// the SLO broke on what the server did alone (failures, or latency counted from each
/// send). Sends that waited for a connection with the cap reached are the server's doing
/// at that many connections: they are judged.
pub fn judge(slos: &[Threshold], result: &RunResult) -> Verdict {
    let cert = crate::load_warnings::certificate(result);
    // Late through the generator, whether its own loop was busy or its threads waited for
    // a CPU: either way the lag is not the server's.
    let generator = cert.is_some_and(|c| matches!(c.reason, Some(r) if r.generator()));
    let short = cert.is_some_and(|c| c.achieved_share < 0.99);
    if generator && short {
        return Verdict::NotKept;
    }
    match slos.iter().position(|s| !holds(s, result)) {
        None => Verdict::Met,
        Some(i) if generator && !broke_without_lag(&slos[i], result) => Verdict::NotKept,
        Some(i) => Verdict::Broke(i),
    }
}

/// Whether `slo` holds for `result`. An SLO on a journey's step judges that step's
/// answers alone, and holds only when the step was answered at all: a step whose every
/// request was still queued at the server when the run ended (or never sent, an earlier
/// step failing) has no latency to judge, and has not met a limit on it. A step the run
/// does not have (checked before the search, so never in practice) breaks it.
fn holds(slo: &Threshold, result: &RunResult) -> bool {
    if let Some(name) = &slo.step {
        let answered =
            shootout_model::threshold::step_of(result, name).is_some_and(|t| t.completed > 0);
        if !answered {
            return false;
        }
    }
    answers_hold(slo, result) && !stuck_break(slo, result)
}

/// Whether `slo` holds on the step's answers alone.
fn answers_hold(slo: &Threshold, result: &RunResult) -> bool {
    slo.value(result)
        .is_some_and(|v| slo.op.holds(v, slo.limit))
}

/// Whether `slo` holds on the step's answers and breaks only through its requests still
/// in flight at the end ([`stuck_break`]).
fn broke_by_waiting_alone(slo: &Threshold, result: &RunResult) -> bool {
    answers_hold(slo, result) && stuck_break(slo, result)
}

/// Whether the requests still in flight when a step ended break the latency SLO `slo` (an
/// upper limit on the whole step's latency, `p99<10ms`, `max<50ms`) that its answers
/// alone meet. Those requests have no latency, yet a server that left connections
/// unaccepted or requests unread for the rest of the step holds many of them, old ones,
/// while its few answers are fast. A request in flight for `a` would have had a latency of
/// at least `a`: with the ages the step kept ([`RunResult::in_flight_at_end`]) they count
/// beside the answers as answers that slow ([`aged_break`]); a step stored without them
/// (before shootout kept them) is judged by a bound on how many were young
/// ([`bound_break`]). A mean is not judged so (answers whose mean meets the limit, with
/// waits known only from below, may still meet it), nor an SLO on a journey's step (the
/// ages are the run's).
fn stuck_break(slo: &Threshold, result: &RunResult) -> bool {
    use shootout_model::threshold::{Metric, Op};
    let upper = matches!(slo.op, Op::Below | Op::AtMost) && slo.limit > 0.0;
    let judged = matches!(slo.metric, Metric::Quantile(_) | Metric::Max);
    if !upper || !judged || slo.step.is_some() {
        return false;
    }
    match &result.in_flight_at_end {
        Some(ages) => aged_break(slo, &result.histograms.latency, ages),
        None => bound_break(slo, result),
    }
}

/// How many values of `h` break the upper limit of `slo`: at or above it for `<`, above it
/// for `<=` (µs, to the histogram's resolution).
fn over(slo: &Threshold, h: &Histogram<u64>) -> u64 {
    use shootout_model::threshold::Op;
    let limit = slo.limit as u64;
    let within = match slo.op {
        Op::AtMost => h.count_between(0, limit),
        _ if limit == 0 => 0,
        _ => h.count_between(0, limit - 1),
    };
    h.len().saturating_sub(within)
}

/// The exact rule: the answers (`latency`) and the requests in flight at the end, each
/// counted at its age (`ages`), together. `pX<limit` breaks when more than (1 − X) of them
/// all break the limit; `max<limit` breaks with any in flight past it.
fn aged_break(slo: &Threshold, latency: &Histogram<u64>, ages: &Histogram<u64>) -> bool {
    breaks_with(slo, latency, over(slo, ages) as f64, ages.len() as f64)
}

/// The rule for a step stored without the ages of its requests in flight (an open-loop
/// step of a store from before they were kept): the schedule sends at most `rate × limit`
/// requests in the last `limit` seconds (doubled, and ten more, for drawn arrivals), so of
/// the requests in flight at the end all but that many had waited at least `limit` from
/// their due time. Counted as answers that slow, beside the answers themselves, they give
/// a lower bound of the latency over every request sent; the SLO is broken when that bound
/// breaks it. A closed loop's are not judged so.
fn bound_break(slo: &Threshold, result: &RunResult) -> bool {
    let Some(schedule) = &result.schedule else {
        return false;
    };
    let aborted = result.counts.aborted as f64;
    let young = 2.0 * schedule.target_rps * slo.limit / 1e6 + 10.0;
    let stuck = (aborted - young.ceil()).max(0.0);
    breaks_with(slo, &result.histograms.latency, stuck, aborted)
}

/// Whether the upper-limit latency SLO `slo` breaks over the answers `latency` and
/// `in_flight` requests still unanswered at the end, `slow` of which are known to have
/// waited past the limit: a percentile when the share over the limit exceeds what it
/// allows, `max` with any; never without one slow.
fn breaks_with(slo: &Threshold, latency: &Histogram<u64>, slow: f64, in_flight: f64) -> bool {
    use shootout_model::threshold::Metric;
    if slow <= 0.0 {
        return false;
    }
    match slo.metric {
        Metric::Quantile(q) => {
            let all = latency.len() as f64 + in_flight;
            over(slo, latency) as f64 + slow > (1.0 - f64::from(q) / 1000.0) * all
        }
        Metric::Max => true,
        Metric::Mean | Metric::Errors | Metric::Failed | Metric::Rps => false,
    }
}

/// Whether `slo`, broken in a step whose generator sent late, would have broken had every
/// send been on time: failures are the server's however late their requests went; a
/// latency SLO is judged again on latency from each send (the lag taken out), which can
/// only be lower; a rate of good answers depends on what was sent, so it says nothing.
/// A journey step's latency is kept from its due time only, so a step's latency SLO
/// broken while the generator was late says nothing either.
fn broke_without_lag(slo: &Threshold, result: &RunResult) -> bool {
    use shootout_model::threshold::Metric;
    match slo.metric {
        Metric::Errors | Metric::Failed if slo.step.is_some() => true,
        _ if slo.step.is_some() => false,
        Metric::Errors | Metric::Failed => true,
        Metric::Quantile(_) | Metric::Mean | Metric::Max => {
            !result.histograms.latency_raw.is_empty()
                && !slo.op.holds(slo.metric.of_sent(result), slo.limit)
        }
        Metric::Rps => false,
    }
}

/// The answers a step waits for at most, before its deadline ([`step_length`]): ten
/// beyond each latency quantile's (p99: 1,000; p99.9: 10,000), and for an error share ten
/// errors' worth at the limit (errors<0.1%: 10,000); at least 100. A step whose SLOs are
/// decided sooner ends sooner ([`crate::decided`]).
pub fn min_answers(slos: &[Threshold]) -> u64 {
    slos.iter().map(answers_for).max().unwrap_or(100).max(100)
}

/// The answers one SLO waits for at most ([`min_answers`]), at least 100.
fn answers_for(slo: &Threshold) -> u64 {
    use shootout_model::threshold::Metric;
    let n = match slo.metric {
        Metric::Quantile(q) => 10 * 1000 / u64::from(1000 - q.min(999)),
        Metric::Errors if slo.limit > 0.0 => (10.0 * 100.0 / slo.limit).ceil() as u64,
        _ => 100,
    };
    n.max(100)
}

/// A step's deadline at `rate`: long enough for each SLO to hold its [`min_answers`], and
/// at least `floor`. `per_arrival[i]` is how many answers SLO `i` gets per arrival the
/// rate counts (1 for a request, a connection's message; a journey's requests, or its
/// sends of the step an SLO names: [`Searcher::journeys`]); an SLO it leaves out gets 1.
pub fn step_length(
    rate: f64,
    slos: &[Threshold],
    per_arrival: &[f64],
    floor: std::time::Duration,
) -> std::time::Duration {
    let per = |i: usize| per_arrival.get(i).copied().unwrap_or(1.0);
    let arrivals = slos
        .iter()
        .enumerate()
        .map(|(i, slo)| answers_for(slo) as f64 / per(i).max(1e-9))
        .reduce(f64::max)
        .unwrap_or(100.0);
    let secs = arrivals / rate.max(1e-3);
    let needed = std::time::Duration::try_from_secs_f64(secs).unwrap_or(MAX_STEP);
    needed.max(floor).min(MAX_STEP)
}

/// How long each step runs at its rate before it is measured (not judged): connections
/// open and the server's queues fill to the rate's level.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// The least a step measures before its SLOs may decide it (and at least
/// [`crate::decided::least_answers`]): a second after [`SETTLE`], so that every step's
/// evidence has a whole second.
pub const LEAST: std::time::Duration = std::time::Duration::from_secs(1);

/// After a step that did not meet its SLOs, the server may still be working through the
/// requests that step left: the next step waits for them ([`cooldown_after`]), and at
/// least this long when nothing then watches the server go idle ([`Searcher::rest`]), so
/// it does not inherit the backlog.
pub const COOLDOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// The wait before the next step after a step judged `last` that gave `result`: none after
/// a step that met its SLOs. Else the time the server needs to work through what the step
/// left it (the requests in flight at its end and those that timed out, which the server may
/// still hold) at the rate it answered during the step, doubled for margin; at most the
/// step's own length (its settle period and what it measured): the search offers at most
/// twice a rate that met, so a backlog grown over the step drains in as long again. A step
/// that answered nothing waits that most.
pub fn cooldown_after(last: &Verdict, result: &RunResult) -> std::time::Duration {
    if last.met() {
        return std::time::Duration::ZERO;
    }
    let most = COOLDOWN.max(SETTLE + result.duration);
    let c = &result.counts;
    let timeouts = c.failures[shootout_model::FailureKind::Timeout];
    let answered = c.completed.saturating_sub(timeouts);
    let measured = result.duration.as_secs_f64();
    if answered == 0 || measured <= 0.0 {
        return most;
    }
    let left = c.aborted.saturating_add(timeouts) as f64;
    let drain = 2.0 * left * measured / answered as f64;
    std::time::Duration::try_from_secs_f64(drain)
        .unwrap_or(most)
        .min(most)
}

/// Room in [`Searcher::most_answers`] for a step's last tick: the engine ends a load at
/// its length, on its workers' next tick.
const MOST_SLACK: Duration = Duration::from_millis(200);

/// How far over their mean [`Searcher::most_answers`] bounds a step's arrivals, in
/// standard deviations of a Poisson count (√mean).
pub const MOST_SIGMAS: f64 = 7.0;

/// The longest step of a search, an hour: an SLO such as `errors<1e-9%` asks for more
/// answers than any step gives.
pub const MAX_STEP: std::time::Duration = std::time::Duration::from_secs(3600);

/// One step as the report shows it: the rate offered and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Offered rate, req/s.
    pub rate: f64,
    /// Requests per second sent.
    pub achieved: f64,
    /// Latency of the answered requests (from their due times), ms: median, 99th and
    /// 99.9th percentile.
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    /// Failed requests as a share of the completed ones, %.
    pub errors_pct: f64,
    /// The generator kept the schedule.
    pub kept: bool,
    /// Why the schedule was not kept (`None` when it was).
    pub late: Option<NotKept>,
    /// The busy share of the generator's busiest thread (0..1).
    pub busiest_thread: f64,
    /// Every connection allowed was open and busy when a request fell due (the cap).
    pub capped: bool,
    /// The step's verdict.
    pub verdict: Verdict,
    /// How it ended: its SLOs decided, or its deadline; `None` where not known (a step
    /// stored by `run`).
    pub ended: Option<Ended>,
    /// How long it measured (after its settle period).
    pub measured: Duration,
    /// Requests it completed (answered or failed).
    pub answers: u64,
}

impl Measured {
    /// The step plainly passed on the ramp ([`Ended::Passed`]) and met its SLOs as a whole:
    /// `passed`, not `met`, in every report.
    pub fn passed(&self) -> bool {
        self.verdict.met() && self.ended == Some(Ended::Passed)
    }

    /// The step at `rate` that gave `result`, judged `verdict`.
    pub fn of(rate: f64, result: &RunResult, verdict: Verdict) -> Measured {
        let h = &result.histograms.latency;
        let q = |q: f64| {
            if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(q) as f64 / 1e3
            }
        };
        let cert = crate::load_warnings::certificate(result);
        Measured {
            rate,
            achieved: result.schedule.map_or(0.0, |s| s.achieved_rps),
            p50_ms: q(0.5),
            p99_ms: q(0.99),
            p999_ms: q(0.999),
            errors_pct: shootout_model::threshold::Metric::Errors.of(result),
            kept: kept(result),
            late: cert.and_then(|c| c.reason),
            busiest_thread: result.generator.busiest_thread,
            capped: result.schedule.is_some_and(|s| s.capped),
            verdict,
            ended: None,
            measured: result.duration,
            answers: result.counts.completed,
        }
    }
}

/// Where a rate stands after its steps.
#[derive(Debug, Clone, PartialEq)]
enum Standing {
    /// Not measured.
    Unknown,
    /// One step, or steps whose evidence is unclear, or two verdicts that disagree: this
    /// is what the steps so far lean to, and one more step is measured.
    Tentative(Verdict),
    /// The evidence is clear, or two verdicts agree, or the rate had its
    /// [`boundary::MOST_STEPS`].
    Decided(Verdict),
}

/// On what a rate was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The evidence of its steps was clear: every SLO's 95 % interval held, or one lay
    /// wholly beyond its limit.
    Interval,
    /// The evidence stayed unclear for [`boundary::MOST_STEPS`] steps: all their seconds
    /// pooled decided.
    Pooled,
    /// The steps' verdicts, two agreeing (no per-second evidence).
    Verdicts,
}

impl Basis {
    /// `interval`, `pooled` or `verdicts`, as the JSON reports write it.
    pub fn word(self) -> &'static str {
        match self {
            Basis::Interval => "interval",
            Basis::Pooled => "pooled",
            Basis::Verdicts => "verdicts",
        }
    }
}

/// How the search decided one rate: how many steps it took, the verdict, and its basis.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The rate, req/s.
    pub rate: f64,
    /// Steps measured at it in full (not those that plainly passed on the ramp).
    pub steps: usize,
    /// What was decided.
    pub verdict: Verdict,
    /// On what.
    pub basis: Basis,
}

/// How `rate` was decided given every step; `None` while it is not (one step, or steps
/// that leave it open). A finished search's boundary rates ([`Capacity::max_rps`],
/// [`Capacity::first_failing_rps`]) are decided.
pub fn decision(rate: f64, steps: &[Step]) -> Option<Decision> {
    let (standing, basis) = standing_on(rate, steps);
    let Standing::Decided(verdict) = standing else {
        return None;
    };
    Some(Decision {
        rate,
        steps: steps
            .iter()
            .filter(|s| s.rate == rate && !s.passed())
            .count(),
        verdict,
        basis,
    })
}

/// The standing of `rate` given every step.
fn standing(rate: f64, steps: &[Step]) -> Standing {
    standing_on(rate, steps).0
}

/// The standing of `rate` given every step, and its basis: the evidence of its steps when
/// each has some ([`boundary::call`]), else their verdicts. Steps that plainly passed on
/// the ramp ([`Took::Passed`]) are no evidence: a rate with only those leans to met and
/// is measured again when it bounds the capacity.
fn standing_on(rate: f64, steps: &[Step]) -> (Standing, Basis) {
    let at: Vec<&Step> = steps
        .iter()
        .filter(|s| s.rate == rate && !s.passed())
        .collect();
    if at.is_empty() && steps.iter().any(|s| s.rate == rate) {
        return (Standing::Tentative(Verdict::Met), Basis::Verdicts);
    }
    let evidence: Vec<&Evidence> = at.iter().map(|s| &s.evidence).collect();
    let call = boundary::call(&evidence);
    // Steps each decided broken before their deadline: their seconds are too few for the
    // interval to decide, their verdicts are their deadlines'. Two such, and none other,
    // decide as two agreeing verdicts do.
    let broke_early = at.len() >= 2 && at.iter().all(|s| s.took == Took::BrokeEarly);
    if broke_early && !matches!(call, Some(Call::Met | Call::Broke(_))) {
        return (
            voted(at.iter().map(|s| &s.verdict).collect()),
            Basis::Verdicts,
        );
    }
    match call {
        Some(Call::Met) => (Standing::Decided(Verdict::Met), Basis::Interval),
        Some(Call::Broke(i)) => (Standing::Decided(Verdict::Broke(i)), Basis::Interval),
        Some(Call::Unclear(v)) if at.len() >= boundary::MOST_STEPS => {
            (Standing::Decided(v), Basis::Pooled)
        }
        Some(Call::Unclear(v)) => (Standing::Tentative(v), Basis::Pooled),
        None => (
            voted(at.iter().map(|s| &s.verdict).collect()),
            Basis::Verdicts,
        ),
    }
}

/// The standing of a rate whose steps gave the verdicts `at`: two agreeing decide.
fn voted(at: Vec<&Verdict>) -> Standing {
    let met = at.iter().filter(|v| v.met()).count();
    let failed = at.len() - met;
    // The failing verdict to report: the latest failure.
    let failure = || {
        at.iter()
            .rev()
            .find(|v| !v.met())
            .map_or(Verdict::NotKept, |v| (*v).clone())
    };
    match (met, failed) {
        (0, 0) => Standing::Unknown,
        (m, _) if m >= 2 => Standing::Decided(Verdict::Met),
        (_, f) if f >= 2 => Standing::Decided(failure()),
        (1, 0) => Standing::Tentative(Verdict::Met),
        (0, 1) => Standing::Tentative(failure()),
        // One each: a third step decides.
        _ => Standing::Tentative(Verdict::Met),
    }
}

/// The verdict a standing leans to, if measured.
fn leaning(s: &Standing) -> Option<&Verdict> {
    match s {
        Standing::Unknown => None,
        Standing::Tentative(v) | Standing::Decided(v) => Some(v),
    }
}

/// A rate rounded to three significant figures (rates people can read and type again).
fn round3(r: f64) -> f64 {
    if r <= 0.0 || !r.is_finite() {
        return r;
    }
    let scale = 10f64.powi(2 - r.log10().floor() as i32);
    (r * scale).round() / scale
}

/// The rates the growth phase tries, in order: `from`, × growth, …, ending at `to`.
fn ladder(s: &Search) -> Vec<f64> {
    let mut rates = vec![s.from.min(s.to)];
    while let Some(&last) = rates.last() {
        if last >= s.to || rates.len() > 64 {
            break;
        }
        rates.push(round3(last * s.growth).min(s.to));
    }
    rates
}

/// The next step of the search, from the steps so far (in any order).
pub fn next(search: &Search, steps: &[Step]) -> Next {
    // Growth: the first rung not met (as far as it leans) is the first failure.
    let mut passed: Option<f64> = None;
    let mut failed: Option<f64> = None;
    for rate in ladder(search) {
        match leaning(&standing(rate, steps)) {
            None => return Next::Try(rate),
            Some(v) if v.met() => passed = Some(rate),
            Some(_) => {
                failed = Some(rate);
                break;
            }
        }
    }
    // Bisection: between the highest met and the lowest failed of every rate measured.
    let mut lo = passed;
    let mut hi = failed;
    let mut measured: Vec<f64> = steps.iter().map(|s| s.rate).collect();
    measured.sort_by(f64::total_cmp);
    measured.dedup();
    for &rate in &measured {
        let Some(v) = leaning(&standing(rate, steps)).cloned() else {
            continue;
        };
        if v.met() && hi.is_none_or(|h| rate < h) {
            lo = Some(lo.map_or(rate, |l: f64| l.max(rate)));
        } else if !v.met() && lo.is_none_or(|l| rate > l) {
            hi = Some(hi.map_or(rate, |h: f64| h.min(rate)));
        }
    }
    // The boundary's two rates are decided by their evidence, or by two agreeing verdicts,
    // once the search is about to rest on them: a rate found by bisecting between them
    // leaves either behind, so a failing rate above the boundary (the ramp's first
    // failure, each failure on the way down) is measured once. A failing rate that a
    // second look turns met moves the bisection up above it; a met one that then fails,
    // down below it.
    let tentative =
        |rate: Option<f64>| rate.filter(|&r| matches!(standing(r, steps), Standing::Tentative(_)));
    if let (Some(l), Some(h)) = (lo, hi) {
        let mid = round3((l * h).sqrt());
        if h / l - 1.0 > search.resolution && mid > l && mid < h {
            return Next::Try(mid);
        }
    }
    if let Some(h) = tentative(hi) {
        return Next::Try(h);
    }
    if let Some(l) = tentative(lo) {
        return Next::Try(l);
    }
    let limited_by = match hi.map(|h| standing(h, steps)) {
        None => Limit::Ceiling,
        Some(h) => match leaning(&h) {
            Some(Verdict::Broke(i)) => Limit::Slo(*i),
            _ => Limit::Generator,
        },
    };
    Next::Done(Capacity {
        max_rps: lo,
        first_failing_rps: hi,
        limited_by,
    })
}

/// `capacity` with what limited it told apart: an SLO that broke at a rate whose
/// steps reached the cap on connections is [`Limit::ConnectionCap`] (the SLO broke
/// because requests queued for the connections allowed; more connections might have
/// carried the rate). `measured` are the search's steps.
pub fn at_cap(mut capacity: Capacity, measured: &[Measured]) -> Capacity {
    if let (Limit::Slo(i), Some(hi)) = (&capacity.limited_by, capacity.first_failing_rps) {
        let capped = measured
            .iter()
            .any(|m| m.rate == hi && !m.verdict.met() && m.capped);
        if capped {
            capacity.limited_by = Limit::ConnectionCap(*i);
        }
    }
    capacity
}

/// What a search that stopped before its end (Ctrl-C, a contender that died) had found:
/// the highest rate met below every failure, the lowest failure above it, and what broke
/// there. The answer [`next`] gives when the search is complete.
pub fn so_far(search: &Search, steps: &[Step]) -> Capacity {
    if let Next::Done(c) = next(search, steps) {
        return c;
    }
    let met = |s: &&Step| s.verdict.met() && !s.passed();
    let lo = steps.iter().filter(met).map(|s| s.rate).reduce(f64::max);
    let hi = steps
        .iter()
        .filter(|s| !s.verdict.met() && lo.is_none_or(|l| s.rate > l))
        .map(|s| s.rate)
        .reduce(f64::min);
    let limited_by = match steps.iter().rev().find(|s| Some(s.rate) == hi) {
        Some(Step {
            verdict: Verdict::Broke(i),
            ..
        }) => Limit::Slo(*i),
        Some(_) => Limit::Generator,
        None => Limit::Ceiling,
    };
    Capacity {
        max_rps: lo,
        first_failing_rps: hi,
        limited_by,
    }
}

/// The most steps one search makes: [`next`] ends well before (about 30 steps from 100
/// req/s to a million, and at most [`boundary::MOST_STEPS`] at each boundary rate); this
/// bounds a search whose steps go unjudged (a contender that dies during each).
pub const MAX_STEPS: usize = 100;

/// What a search wants of a step: the question it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// A rung of the ramp looked at for the first time, below any failing rate: the step
    /// may end as soon as it plainly passes ([`Searcher::passes`]) or is decided.
    Ramp,
    /// Any other step: it ends when its SLOs are decided ([`Searcher::decide`]) or at its
    /// deadline.
    Decide,
}

/// What a search asks to measure next: a step at `rate` for `length` at most (after a
/// settle period at the rate, [`SETTLE`], not judged), ending sooner when its SLOs are
/// decided ([`Searcher::decide`]), or on the ramp plainly pass, after `least`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ask {
    /// Offered rate, req/s.
    pub rate: f64,
    /// What the step is to tell.
    pub question: Question,
    /// The step's deadline: how long it measures when its SLOs stay open
    /// ([`step_length`]).
    pub length: Duration,
    /// The least it measures, decided or not.
    pub least: Duration,
    /// The least it measures before it may be decided met: the length the user asked
    /// steps to sustain a rate (a plan's `duration`, `load -d`), else [`Ask::least`]. A
    /// step decided broken, or a rung that plainly passes, ends after [`Ask::least`].
    pub horizon: Duration,
}

/// What a search found: its answer, what limited it and how its boundary was decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The capacity, with a cap on connections told apart ([`at_cap`]).
    pub capacity: Capacity,
    /// How its boundary rates were decided (the highest met, the lowest broken), those
    /// that were.
    pub boundary: Vec<Decision>,
    /// The search ran to its end (else it was stopped and `capacity` is what it had).
    pub complete: bool,
}

/// One capacity search as it runs, with no I/O: it says what to measure next
/// ([`Searcher::next`], and [`Searcher::rest`] before it) and what each step said
/// ([`Searcher::judge`], [`Searcher::took`]). `shootout load --find-max` and the `find_max`
/// of `shootout run` drive it, each with its own way to run a step, so both take the same
/// steps for the same evidence; a report replays a stored search through it.
#[derive(Debug, Clone)]
pub struct Searcher {
    search: Search,
    /// Each SLO as written, in order (a [`Verdict::Broke`] index points here).
    slo: Vec<String>,
    slos: Vec<Threshold>,
    /// Each step's deadline is at least this.
    floor: Duration,
    /// And at most this ([`MAX_STEP`], or less when asked: [`Searcher::most`]).
    most: Duration,
    /// The answers each SLO gets per arrival the rates count ([`step_length`]): all 1
    /// but for journeys ([`Searcher::journeys`]).
    per_arrival: Vec<f64>,
    /// The most requests one arrival sends ([`Searcher::most_answers`]): 1, or a
    /// journey's most; and of each journey step (empty without journeys).
    most_sends: u64,
    step_sends: Vec<u64>,
    /// A journey load's steps, as its live per-step counts come (`journey › step`), so
    /// that an SLO on a step is decided on that step's counts ([`SoFar::steps`]); empty
    /// otherwise.
    labels: Vec<String>,
    /// The least a step measures before it is decided met ([`LEAST`], or the length the
    /// user asked for: [`Searcher::horizon`]).
    horizon: Duration,
    /// When each step ends: once decided, or at its deadline.
    end_rule: EndRule,
    /// The judged steps, in the order taken.
    steps: Vec<Step>,
    /// The same, as the tables show them.
    measured: Vec<Measured>,
    /// Steps asked for, judged or not.
    tries: usize,
    /// The backlog's wait after the last step ([`cooldown_after`]); `None` after one
    /// that met its SLOs, or before any.
    rest: Option<Duration>,
}

impl Searcher {
    /// The search `f` asks for, each step's deadline at least `floor` and each step
    /// measuring at least [`LEAST`].
    pub fn new(f: &FindMax, floor: Duration) -> Searcher {
        Searcher {
            search: Search::new(f.from, f.to),
            slo: f.slo.clone(),
            slos: f.slos.clone(),
            floor,
            most: MAX_STEP,
            per_arrival: vec![1.0; f.slos.len()],
            most_sends: 1,
            step_sends: Vec::new(),
            labels: Vec::new(),
            horizon: LEAST,
            end_rule: f.end_rule,
            steps: Vec::new(),
            measured: Vec::new(),
            tries: 0,
            rest: None,
        }
    }

    /// The step to measure next; `None` when the search is over (its answer found, or
    /// [`MAX_STEPS`] asked for).
    pub fn next(&self) -> Option<Ask> {
        if self.tries >= MAX_STEPS {
            return None;
        }
        match next(&self.search, &self.steps) {
            Next::Try(rate) => {
                let length = step_length(rate, &self.slos, &self.per_arrival, self.floor)
                    .min(self.most.max(self.floor));
                let (least, horizon) = match self.end_rule {
                    EndRule::Decided => (LEAST.min(length), self.horizon.min(length)),
                    EndRule::Deadline => (length, length),
                };
                Some(Ask {
                    rate,
                    question: self.question(rate),
                    length,
                    least,
                    horizon,
                })
            }
            Next::Done(_) => None,
        }
    }

    /// The question a step at `rate` asks: [`Question::Ramp`] for a rung of the ramp not
    /// measured yet with no failing step at or below it, else [`Question::Decide`] (every
    /// step, when each runs to its deadline: none may pass plainly).
    fn question(&self, rate: f64) -> Question {
        let ramp = self.end_rule == EndRule::Decided
            && ladder(&self.search).contains(&rate)
            && !self
                .steps
                .iter()
                .any(|s| s.rate == rate || (s.rate <= rate && !s.verdict.met()));
        if ramp {
            Question::Ramp
        } else {
            Question::Decide
        }
    }

    /// How long to wait before the next step: after one that did not meet its SLOs, the
    /// backlog it may have left ([`cooldown_after`]), at least [`COOLDOWN`] unless the
    /// caller then also waits until the server's processes are idle (`watched`: `shootout
    /// run` watches the contenders it started); else nothing.
    pub fn rest(&self, watched: bool) -> Duration {
        match self.rest {
            None => Duration::ZERO,
            Some(drain) if watched => drain,
            Some(drain) => drain.max(COOLDOWN),
        }
    }

    /// The same search of a load of `journeys`, whose rates count journeys and whose SLOs
    /// count requests: each step's deadline holds the answers its SLOs need at the
    /// journeys' sends per journey ([`JourneyFile::sends_per_journey`]: the whole load's
    /// for an SLO on every request, its step's for one on a step), and an SLO on a step
    /// is decided on that step's live counts.
    pub fn journeys(mut self, journeys: &JourneyFile) -> Searcher {
        let sends = journeys.sends_per_journey();
        self.labels = journeys.step_labels();
        self.most_sends = journeys.most_sends_per_journey();
        self.step_sends = journeys.step_repeats();
        self.per_arrival = self
            .slos
            .iter()
            .map(|slo| match &slo.step {
                None => sends.iter().sum(),
                Some(name) => step_index(self.labels.iter().map(String::as_str), name)
                    .and_then(|i| sends.get(i).copied())
                    .unwrap_or(1.0),
            })
            .collect();
        self
    }

    /// The same search with each step's deadline at most `most` (but never under its
    /// floor): a quick look (`run --quick`), whose steps still undecided then are judged
    /// on what they measured.
    pub fn most(mut self, most: Duration) -> Searcher {
        self.most = most.min(MAX_STEP);
        self
    }

    /// The names of a journey load's steps, in the order of its live per-step counts
    /// ([`SoFar::labels`]); empty for any other load.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The same search with each step measuring at least `horizon` before it may be
    /// decided met (a plan's `duration`, a user's `-d`): a rate is said to be sustained
    /// over the length the user asked for, as the fixed rule's steps measure it (a server
    /// that stalls now and then at a rate may hold it for a second and not for ten). A
    /// step broken for certain, or a rung that plainly passes, still ends after
    /// [`LEAST`].
    pub fn horizon(mut self, horizon: Duration) -> Searcher {
        self.horizon = horizon.max(LEAST);
        self
    }

    /// The most answers a step asked as `ask`, its schedule kept by `threads` workers,
    /// can count by its deadline ([`SoFar::most`]): the arrivals its schedule has due in
    /// its length (with room for the last tick, and one more for each worker's share of
    /// the schedule rounding up), times the most requests one arrival sends: one, or a
    /// journey's most ([`JourneyFile::most_sends_per_journey`]), and for each journey step
    /// its `repeat`. Poisson arrivals (`--arrival poisson`) vary in number: the arrivals
    /// are bounded [`MOST_SIGMAS`] standard deviations over their mean, a count a step
    /// exceeds about once in 10¹² (an even schedule never comes near it).
    pub fn most_answers(&self, ask: &Ask, threads: usize) -> Most {
        let mean = ask.rate * (ask.length.as_secs_f64() + MOST_SLACK.as_secs_f64());
        let arrivals = (mean + MOST_SIGMAS * mean.max(0.0).sqrt()).ceil();
        let arrivals = if arrivals.is_finite() && arrivals < 1e15 {
            (arrivals as u64).saturating_add(threads.max(1) as u64)
        } else {
            u64::MAX / 2
        };
        Most {
            all: arrivals.saturating_mul(self.most_sends.max(1)),
            steps: self
                .step_sends
                .iter()
                .map(|&n| arrivals.saturating_mul(n))
                .collect(),
        }
    }

    /// Whether a running step that measured `so_far` is decided against the SLOs
    /// ([`crate::decided::decide`]; `deff(v)`: the design effect of the answers at or below
    /// `v` µs over its seconds so far). The caller ends the step when it is, after
    /// [`Ask::least`].
    pub fn decide(&self, so_far: &SoFar, deff: impl Fn(u64) -> f64) -> Option<Decided> {
        crate::decided::decide(&self.slos, so_far, deff)
    }

    /// Whether a ramp step ([`Question::Ramp`]) that measured `so_far` plainly passes
    /// ([`crate::decided::passes`]; `deff` as for [`Searcher::decide`]). The caller ends
    /// the step when it does, after [`Ask::least`], and says so ([`Ended::Passed`]).
    pub fn passes(&self, so_far: &SoFar, deff: impl Fn(u64) -> f64) -> bool {
        crate::decided::passes(&self.slos, so_far, deff)
    }

    /// Whether a running step asked as `ask`, `elapsed` into what it measures, with
    /// `so_far` measured, ends now, and how: decided ([`Searcher::decide`]; met only from
    /// [`Ask::horizon`] on), or on the ramp ([`Question::Ramp`]) plainly passed
    /// ([`Searcher::passes`]); never before [`Ask::least`], and never at all when the
    /// search's steps run to their deadline ([`EndRule::Deadline`]). `deff` as for
    /// [`Searcher::decide`]. The watch of a running step (`load --find-max`'s and a
    /// plan's) ends it by this.
    pub fn ends(
        &self,
        ask: &Ask,
        elapsed: Duration,
        so_far: &SoFar,
        deff: impl Fn(u64) -> f64,
    ) -> Option<Ended> {
        if self.end_rule == EndRule::Deadline || elapsed < ask.least {
            return None;
        }
        if let Some(decided) = self.decide(so_far, &deff) {
            if !decided.met || elapsed >= ask.horizon {
                return Some(Ended::Decided(decided));
            }
        }
        let ramp = ask.question == Question::Ramp;
        (ramp && self.passes(so_far, &deff)).then_some(Ended::Passed)
    }

    /// How a step that [`Searcher::ends`] did not end came to its end at its deadline:
    /// [`Ended::Full`] when every step of this search runs to it, else
    /// [`Ended::Deadline`] (some SLO still open).
    pub fn at_deadline(&self) -> Ended {
        match self.end_rule {
            EndRule::Decided => Ended::Deadline,
            EndRule::Deadline => Ended::Full,
        }
    }

    /// What a step that gave `result` says against the SLOs ([`judge`]).
    pub fn judge(&self, result: &RunResult) -> Verdict {
        judge(&self.slos, result)
    }

    /// Takes the step asked for at `rate` that gave `result`, judged `verdict` (by
    /// [`Searcher::judge`], or as stored), and how it `ended` where known; returns it as
    /// the tables show it.
    pub fn took(
        &mut self,
        rate: f64,
        result: &RunResult,
        verdict: Verdict,
        ended: Option<Ended>,
    ) -> &Measured {
        self.tries += 1;
        self.rest = (!verdict.met()).then(|| cooldown_after(&verdict, result));
        let step = Step::of(rate, &self.slos, result, verdict.clone());
        // A step that plainly passed but whose whole result broke an SLO counts as broken.
        let passed = verdict.met() && ended == Some(Ended::Passed);
        let broke_early = !verdict.met() && matches!(&ended, Some(Ended::Decided(d)) if !d.met);
        self.steps.push(step.taken(match (passed, broke_early) {
            (true, _) => Took::Passed,
            (_, true) => Took::BrokeEarly,
            _ => Took::Evidence,
        }));
        let mut m = Measured::of(rate, result, verdict);
        m.ended = ended;
        self.measured.push(m);
        &self.measured[self.measured.len() - 1]
    }

    /// A step asked for that gave nothing to judge (stopped, or its contender died): it
    /// counts against [`MAX_STEPS`].
    pub fn missed(&mut self) {
        self.tries += 1;
    }

    /// Steps asked for so far, judged or not.
    pub fn tries(&self) -> usize {
        self.tries
    }

    /// Each SLO as written, in order.
    pub fn slo(&self) -> &[String] {
        &self.slo
    }

    /// The judged steps as the tables show them, in the order taken.
    pub fn measured(&self) -> &[Measured] {
        &self.measured
    }

    /// What the search found: its answer when it is over, else what it had ([`so_far`]).
    pub fn answer(&self) -> Answer {
        let capacity = at_cap(so_far(&self.search, &self.steps), &self.measured);
        let boundary = [capacity.max_rps, capacity.first_failing_rps]
            .into_iter()
            .flatten()
            .filter_map(|rate| decision(rate, &self.steps))
            .collect();
        Answer {
            capacity,
            boundary,
            complete: matches!(next(&self.search, &self.steps), Next::Done(_)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a server whose verdict at each rate is `at(rate, nth)`
    /// (`nth`: how many steps at that rate came before), returning the steps and the end.
    fn search(s: &Search, at: impl Fn(f64, usize) -> Verdict) -> (Vec<Step>, Capacity) {
        let mut steps: Vec<Step> = Vec::new();
        for _ in 0..200 {
            match next(s, &steps) {
                Next::Try(rate) => {
                    let nth = steps.iter().filter(|st| st.rate == rate).count();
                    assert!(nth < 3, "a rate is measured at most three times: {rate}");
                    steps.push(Step::voted(rate, at(rate, nth)));
                }
                Next::Done(c) => return (steps, c),
            }
        }
        panic!("the search did not end: {steps:?}");
    }

    /// A server that holds p99 (SLO 0) up to `capacity` req/s.
    fn server(capacity: f64) -> impl Fn(f64, usize) -> Verdict {
        move |rate, _| {
            if rate <= capacity {
                Verdict::Met
            } else {
                Verdict::Broke(0)
            }
        }
    }

    #[test]
    fn a_server_of_known_capacity_is_found_within_the_resolution() {
        for capacity in [150.0, 1_000.0, 7_300.0, 123_456.0] {
            let s = Search::new(100.0, 1e6);
            let (steps, c) = search(&s, server(capacity));
            let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
            assert!(lo <= capacity && capacity < hi, "{capacity}: {c:?}");
            assert!(hi / lo - 1.0 <= s.resolution, "{capacity}: {c:?}");
            assert_eq!(c.limited_by, Limit::Slo(0));
            // The boundary was confirmed: both its rates measured twice.
            for r in [lo, hi] {
                assert!(steps.iter().filter(|st| st.rate == r).count() >= 2, "{r}");
            }
            assert!(steps.len() <= 30, "{} steps for {capacity}", steps.len());
        }
    }

    #[test]
    fn growth_doubles_from_the_first_rate_and_ends_at_the_last() {
        let s = Search::new(100.0, 1_000.0);
        let tried: Vec<f64> = {
            let mut steps = Vec::new();
            let mut tried = Vec::new();
            while let Next::Try(r) = next(&s, &steps) {
                tried.push(r);
                steps.push(Step::voted(r, Verdict::Met));
            }
            tried
        };
        assert_eq!(&tried[..5], &[100.0, 200.0, 400.0, 800.0, 1_000.0]);
        let (_, c) = search(&s, |_, _| Verdict::Met);
        assert_eq!(c.max_rps, Some(1_000.0));
        assert_eq!(c.first_failing_rps, None);
        assert_eq!(c.limited_by, Limit::Ceiling);
    }

    #[test]
    fn a_server_that_breaks_at_the_first_rate_has_no_capacity() {
        let (_, c) = search(&Search::new(100.0, 1e5), |_, _| Verdict::Broke(1));
        assert_eq!(c.max_rps, None);
        assert_eq!(c.first_failing_rps, Some(100.0));
        assert_eq!(c.limited_by, Limit::Slo(1));
    }

    /// One unlucky step (a stall) at a rate the server holds does not move the answer:
    /// the rate is measured again, and two of three decide.
    #[test]
    fn a_single_noisy_step_does_not_move_the_answer() {
        let capacity = 5_000.0;
        let noisy = |rate: f64, nth: usize| {
            if rate == 1_600.0 && nth == 0 {
                Verdict::Broke(0)
            } else {
                server(capacity)(rate, nth)
            }
        };
        let (_, c) = search(&Search::new(100.0, 1e6), noisy);
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!(lo <= capacity && capacity < hi, "{c:?}");
    }

    /// Never a capacity above a rate whose schedule the generator did not keep.
    #[test]
    fn the_generator_falling_behind_bounds_the_capacity() {
        let at = |rate: f64, _| {
            if rate > 30_000.0 {
                Verdict::NotKept
            } else {
                Verdict::Met
            }
        };
        let (_, c) = search(&Search::new(1_000.0, 1e6), at);
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!(lo <= 30_000.0 && hi > 30_000.0, "{c:?}");
        assert_eq!(c.limited_by, Limit::Generator);
    }

    /// A step stored without the ages of its requests in flight (a store from before
    /// they were kept) falls back to the bound: an open-loop step whose answers were all
    /// fast, but which ended with requests still in flight that had waited for longer
    /// than the limit (a server that left connections unaccepted), breaks a latency SLO;
    /// as many as the rate sends within the limit (doubled, and ten) may be young and do
    /// not; a closed loop's are not judged so.
    #[test]
    fn requests_still_waiting_at_the_end_break_a_latency_slo() {
        use shootout_model::ScheduleStats;
        let slo = |t: &str| t.parse::<Threshold>().unwrap();
        let step = |aborted: u64, rate: Option<f64>| {
            let mut r = RunResult::empty(
                std::time::SystemTime::UNIX_EPOCH,
                std::time::Duration::from_secs(1),
            );
            r.histograms.latency.record_n(250, 6_854).unwrap();
            r.histograms.latency_raw.record_n(250, 6_854).unwrap();
            r.counts.completed = 6_854;
            r.counts.ok = 6_854;
            r.counts.aborted = aborted;
            r.schedule = rate.map(|rate| ScheduleStats {
                target_rps: rate,
                achieved_rps: rate,
                due: 8_803,
                sent: 8_803,
                max_connections: 1_026,
                ..Default::default()
            });
            r
        };
        let p99 = [slo("p99<10ms")];
        // 8,000 req/s × 10 ms = 80, doubled and ten more: 170 may be young.
        assert_eq!(judge(&p99, &step(1_949, Some(8_000.0))), Verdict::Broke(0));
        assert_eq!(judge(&p99, &step(170, Some(8_000.0))), Verdict::Met);
        // 70 stuck of 6,854 + 240 (1 %: 70.9): not yet; 80 is.
        assert_eq!(judge(&p99, &step(240, Some(8_000.0))), Verdict::Met);
        assert_eq!(judge(&p99, &step(250, Some(8_000.0))), Verdict::Broke(0));
        assert_eq!(judge(&p99, &step(1_949, None)), Verdict::Met);
        assert_eq!(
            judge(&[slo("max<10ms")], &step(171, Some(8_000.0))),
            Verdict::Broke(0)
        );
        assert_eq!(
            judge(&[slo("errors<0.1%")], &step(1_949, Some(8_000.0))),
            Verdict::Met
        );
        // A mean is not judged so (answers that meet it, with waits that reach it,
        // meet it).
        assert_eq!(
            judge(&[slo("mean<1ms")], &step(8_000, Some(8_000.0))),
            Verdict::Met
        );
    }

    /// A step that kept the ages of its requests in flight is judged on them: its
    /// answers (6,854 at 0.25 ms) together with each request in flight counted at its age.
    /// `in_flight` is `(age in ms, how many)`.
    fn aged(in_flight: &[(u64, u64)]) -> RunResult {
        use shootout_model::ScheduleStats;
        let mut r = RunResult::empty(
            std::time::SystemTime::UNIX_EPOCH,
            std::time::Duration::from_secs(1),
        );
        r.histograms.latency.record_n(250, 6_854).unwrap();
        r.histograms.latency_raw.record_n(250, 6_854).unwrap();
        r.counts.completed = 6_854;
        r.counts.ok = 6_854;
        let mut ages = shootout_model::latency_histogram();
        for &(ms, n) in in_flight {
            ages.record_n(ms * 1000, n).unwrap();
        }
        r.counts.aborted = ages.len();
        r.in_flight_at_end = Some(ages);
        r.schedule = Some(ScheduleStats {
            target_rps: 8_000.0,
            achieved_rps: 8_000.0,
            due: 8_803,
            sent: 8_803,
            max_connections: 1_026,
            ..Default::default()
        });
        r
    }

    /// The exact rule: requests in flight count at their ages beside the answers. Against
    /// `p99<10ms`, 1 % of 6,854 answers and the requests in flight is about 70: 80 that
    /// waited 40 ms break it, 60 do not, and 1,949 that all waited under the limit (2 ms)
    /// do not either, however many; the bound would have said the opposite of both the
    /// last (1,949 in flight at 8,000 req/s: all but 170 old) and of 170 old ones (all
    /// might have been young). `max<10ms` breaks with one in flight past the limit.
    #[test]
    fn requests_in_flight_at_the_end_count_at_their_ages() {
        let slo = |t: &str| t.parse::<Threshold>().unwrap();
        let p99 = [slo("p99<10ms")];
        assert_eq!(judge(&p99, &aged(&[(40, 80)])), Verdict::Broke(0));
        assert_eq!(judge(&p99, &aged(&[(40, 60)])), Verdict::Met);
        assert_eq!(judge(&p99, &aged(&[(40, 60), (2, 1_000)])), Verdict::Met);
        // Young, however many: met, where the bound broke the same counts.
        let young = aged(&[(2, 1_949)]);
        assert_eq!(judge(&p99, &young), Verdict::Met);
        let unknown = RunResult {
            in_flight_at_end: None,
            ..young.clone()
        };
        assert_eq!(judge(&p99, &unknown), Verdict::Broke(0));
        // Old, as few as the bound let pass as young: broken, where the bound met it.
        let old = aged(&[(40, 170)]);
        assert_eq!(judge(&p99, &old), Verdict::Broke(0));
        let unknown = RunResult {
            in_flight_at_end: None,
            ..old
        };
        assert_eq!(judge(&p99, &unknown), Verdict::Met);
        // `max`: any in flight past the limit; `<=` lets the limit itself pass.
        assert_eq!(
            judge(&[slo("max<10ms")], &aged(&[(11, 1), (1, 500)])),
            Verdict::Broke(0)
        );
        assert_eq!(judge(&[slo("max<10ms")], &aged(&[(9, 500)])), Verdict::Met);
        assert_eq!(judge(&[slo("max<=10ms")], &aged(&[(10, 5)])), Verdict::Met);
        assert_eq!(
            judge(&[slo("max<10ms")], &aged(&[(10, 5)])),
            Verdict::Broke(0)
        );
        // A mean and an error share are not judged so.
        for t in ["mean<1ms", "errors<0.1%"] {
            assert_eq!(judge(&[slo(t)], &aged(&[(40, 5_000)])), Verdict::Met, "{t}");
        }
        // Broken by waiting alone: its seconds' answers are no evidence.
        let broke = aged(&[(40, 80)]);
        let step = Step::of(8_000.0, &p99, &broke, judge(&p99, &broke));
        assert!(step.evidence.is_empty());
    }

    /// After a broken step the search waits for what the step left the server, worked
    /// through at the rate the server answered, doubled; between one second and the
    /// step's own length (its second of settling and what it measured); nothing after a
    /// met step.
    #[test]
    fn a_broken_step_waits_for_the_backlog_it_left() {
        use shootout_model::FailureKind;
        let secs = Duration::from_secs;
        let step = |measured: u64, completed: u64, aborted: u64, timeouts: u64| {
            let mut r = RunResult::empty(std::time::SystemTime::UNIX_EPOCH, secs(measured));
            r.counts.completed = completed;
            r.counts.aborted = aborted;
            r.counts.failures[FailureKind::Timeout] = timeouts;
            r
        };
        let broke = Verdict::Broke(0);
        let cases = [
            // (measured s, completed, in flight at the end, timed out) -> wait
            ((4, 8_000, 0, 0), secs(0)),         // nothing left
            ((4, 8_000, 3_000, 0), secs(3)),     // 3,000 at 2,000/s, twice
            ((4, 9_000, 2_000, 1_000), secs(3)), // 1,000 timed out: 3,000 left at 2,000/s
            ((4, 8_000, 9_000, 0), secs(5)),     // at most the step: 1 s + 4 s
            ((2, 0, 500, 0), secs(3)),           // nothing answered: at most
            ((2, 500, 500, 500), secs(3)),       // every answer a timeout
        ];
        for ((measured, completed, aborted, timeouts), want) in cases {
            let r = step(measured, completed, aborted, timeouts);
            let got = cooldown_after(&broke, &r);
            let close = got.abs_diff(want) < Duration::from_millis(1);
            assert!(close, "{measured} s, {completed} completed, {aborted} in flight, {timeouts} timed out: {got:?}, want {want:?}");
        }
        assert_eq!(
            cooldown_after(&Verdict::Met, &step(4, 8_000, 9_000, 0)),
            Duration::ZERO
        );
        // A searcher waits so, and after a broken step that left nothing at least
        // COOLDOWN unless the caller then waits for the server to go idle; after a met
        // step, not at all.
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["p99<50ms".into()], Some(1_000.0), None, 1).unwrap();
        let mut s = Searcher::new(&f, Duration::from_secs(2));
        assert_eq!(
            (s.rest(false), s.rest(true)),
            (Duration::ZERO, Duration::ZERO)
        );
        s.took(2_000.0, &step(4, 8_000, 3_000, 0), broke.clone(), None);
        assert_eq!((s.rest(false), s.rest(true)), (secs(3), secs(3)));
        s.took(2_000.0, &step(4, 8_000, 0, 0), broke, None);
        assert_eq!((s.rest(false), s.rest(true)), (COOLDOWN, Duration::ZERO));
        s.took(1_000.0, &step(4, 8_000, 3_000, 0), Verdict::Met, None);
        assert_eq!(
            (s.rest(false), s.rest(true)),
            (Duration::ZERO, Duration::ZERO)
        );
    }

    /// A step whose generator sent late (5 % of sends, none waiting for a connection)
    /// says nothing of a latency SLO that broke only through the lag; one that broke on
    /// latency from each send, or an error SLO, is the server's.
    #[test]
    fn a_late_generator_leaves_the_slos_the_server_broke_alone() {
        use shootout_model::ScheduleStats;
        let slo = |t: &str| t.parse::<Threshold>().unwrap();
        let step = |due_ms: u64, sent_ms: u64, failed: u64| {
            let mut r = RunResult::empty(
                std::time::SystemTime::UNIX_EPOCH,
                std::time::Duration::from_secs(1),
            );
            for i in 0..1000u64 {
                // 2 % of the answers slow, from due time and from send.
                let (due, sent) = if i % 50 == 0 {
                    (due_ms, sent_ms)
                } else {
                    (1, 1)
                };
                r.histograms.latency.record(due * 1000).unwrap();
                r.histograms.latency_raw.record(sent * 1000).unwrap();
            }
            r.counts.completed = 1000;
            r.counts.ok = 1000 - failed;
            r.counts.failures[shootout_model::FailureKind::Reset] = failed;
            r.schedule = Some(ScheduleStats {
                target_rps: 1000.0,
                achieved_rps: 1000.0,
                due: 1000,
                sent: 1000,
                late: 50,
                late_no_connection: 0,
                max_connections: 100,
                ..Default::default()
            });
            r
        };
        let p99 = [slo("p99<50ms")];
        // Slow only from due time: the lag made it.
        assert_eq!(judge(&p99, &step(80, 5, 0)), Verdict::NotKept);
        // Slow from the send too: the server's.
        assert_eq!(judge(&p99, &step(80, 70, 0)), Verdict::Broke(0));
        // Failures are the server's however late their requests went.
        let both = [slo("p99<50ms"), slo("errors<0.1%")];
        assert_eq!(judge(&both, &step(1, 1, 5)), Verdict::Broke(1));
        // On schedule, the SLO is judged as it is.
        let mut on_time = step(80, 5, 0);
        on_time.schedule.as_mut().unwrap().late = 0;
        assert_eq!(judge(&p99, &on_time), Verdict::Broke(0));
    }

    /// An SLO on a journey's step judges that step's answers alone: the whole run's p99
    /// holds (1 slow answer in 100) while the slow step's breaks, and the step's SLO
    /// has no per-second evidence (the seconds count every request), so its rate is
    /// decided by the verdicts.
    #[test]
    fn a_step_slo_judges_the_step_alone() {
        use shootout_model::TargetStats;
        let slo = |t: &str| t.parse::<Threshold>().unwrap();
        let mut r = RunResult::empty(
            std::time::SystemTime::UNIX_EPOCH,
            std::time::Duration::from_secs(1),
        );
        let histogram = || hdrhistogram::Histogram::<u64>::new(2).unwrap();
        let mut fast = TargetStats {
            label: "j › home".into(),
            completed: 990,
            ok: 990,
            failures: Default::default(),
            unsent: 0,
            latency: histogram(),
            busy: None,
        };
        let mut slow = TargetStats {
            label: "j › slow".into(),
            completed: 10,
            ok: 10,
            failures: Default::default(),
            unsent: 0,
            latency: histogram(),
            busy: None,
        };
        for _ in 0..990 {
            fast.latency.record(1_000).unwrap();
            r.histograms.latency.record(1_000).unwrap();
        }
        for _ in 0..10 {
            slow.latency.record(80_000).unwrap();
            r.histograms.latency.record(80_000).unwrap();
        }
        r.counts.completed = 1000;
        r.counts.ok = 1000;
        r.targets = vec![fast, slow];
        r.journeys = vec![TargetStats {
            label: "j".into(),
            completed: 10,
            ok: 10,
            failures: Default::default(),
            unsent: 0,
            latency: histogram(),
            busy: None,
        }];
        let slos = [slo("p99<50ms"), slo("step:slow:p99<50ms")];
        assert_eq!(judge(&slos[..1], &r), Verdict::Met);
        assert_eq!(judge(&slos, &r), Verdict::Broke(1));
        assert_eq!(judge(&[slo("step:home:p99<50ms")], &r), Verdict::Met);
        // A step the run does not have cannot be said to hold, nor one with no answer
        // (every request of it still queued when the run ended).
        assert_eq!(judge(&[slo("step:gone:p99<50ms")], &r), Verdict::Broke(0));
        let mut unanswered = r.clone();
        unanswered.targets[1].completed = 0;
        unanswered.targets[1].ok = 0;
        unanswered.targets[1].latency.reset();
        assert_eq!(judge(&slos, &unanswered), Verdict::Broke(1));
        assert!(Evidence::of(&slos, &r, &Verdict::Broke(1)).is_empty());
    }

    #[test]
    fn steps_last_long_enough_to_judge_their_percentile() {
        let slo = |t: &str| t.parse::<Threshold>().unwrap();
        assert_eq!(min_answers(&[slo("p99<50ms")]), 1_000);
        assert_eq!(min_answers(&[slo("p99<50ms"), slo("p999<1s")]), 10_000);
        assert_eq!(min_answers(&[slo("errors<0.1%")]), 10_000);
        assert_eq!(min_answers(&[slo("p50<1ms")]), 100);
        let floor = std::time::Duration::from_secs(2);
        assert_eq!(
            step_length(100.0, &[slo("p99<50ms")], &[], floor).as_secs(),
            10
        );
        assert_eq!(
            step_length(100_000.0, &[slo("p99<50ms")], &[], floor),
            floor
        );
        // A rate or a share so small it would overflow a duration: the longest step.
        assert_eq!(
            step_length(1e-300, &[slo("errors<1e-300%")], &[], floor),
            MAX_STEP
        );
        // Five answers per arrival hold the answers in a fifth of the time.
        assert_eq!(
            step_length(20.0, &[slo("p99<50ms")], &[5.0], floor).as_secs(),
            10
        );
    }

    /// A quick look caps each step's deadline (`run --quick`), never under its floor.
    #[test]
    fn a_quick_search_caps_its_steps() {
        use shootout_model::find_max::{Asked, FindMax};
        let slo = vec!["errors<0.1%".to_string()];
        let f = FindMax::new(Asked::Flags, &slo, Some(100.0), None, 1).unwrap();
        let length = |s: Searcher| s.next().unwrap().length;
        assert_eq!(
            length(Searcher::new(&f, Duration::from_secs(1))).as_secs(),
            100
        );
        let quick = Searcher::new(&f, Duration::from_secs(1)).most(Duration::from_secs(5));
        assert_eq!(length(quick), Duration::from_secs(5));
        let floor = Searcher::new(&f, Duration::from_secs(8)).most(Duration::from_secs(5));
        assert_eq!(length(floor), Duration::from_secs(8));
    }

    /// A journey search's rates count journeys and its SLOs requests: a step holds the
    /// answers its SLOs need at the journeys' sends (9 readers of 2 steps, 1 writer of 3:
    /// 2.1 requests a journey; the writer's login 0.1), not one request a journey.
    #[test]
    fn a_journey_search_sizes_its_steps_by_the_requests_of_a_journey() {
        let file = shootout_model::journey::parse(
            "[[journey]]\nname = \"reader\"\nweight = 9\n[[journey.step]]\nname = \"home\"\nget = \"/\"\n[[journey.step]]\nname = \"read\"\nget = \"/r\"\n\
             [[journey]]\nname = \"writer\"\n[[journey.step]]\nname = \"login\"\npost = \"/login\"\n[[journey.step]]\nname = \"post\"\npost = \"/\"\n[[journey.step]]\nname = \"read\"\nget = \"/r\"\n",
            "j.toml",
            &mut |_| Err("no files".into()),
        )
        .unwrap();
        let ask = |slo: &[&str]| {
            let slo: Vec<String> = slo.iter().map(|s| s.to_string()).collect();
            let f = FindMax::new(
                shootout_model::find_max::Asked::Flags,
                &slo,
                Some(21.0),
                Some(1_000.0),
                1,
            )
            .unwrap();
            let s = Searcher::new(&f, Duration::from_secs(1)).journeys(&file);
            s.next().unwrap().length.as_secs_f64()
        };
        // p99: 1,000 answers at 21 journeys/s × 2.1 requests.
        assert!((ask(&["p99<50ms"]) - 1_000.0 / (21.0 * 2.1)).abs() < 1e-6);
        // The login's p99: 1,000 of its answers at 21 × 0.1 a second.
        let login = ask(&["p99<50ms", "step:login:p99<200ms"]);
        assert!((login - 1_000.0 / (21.0 * 0.1)).abs() < 1e-6, "{login}");
        // A step named by journey and step: the reader's read, 0.9 a journey.
        let read = ask(&["step:reader › read:p99<200ms"]);
        assert!((read - 1_000.0 / (21.0 * 0.9)).abs() < 1e-6, "{read}");
    }

    /// A search stopped midway answers with what it had: the highest rate met below the
    /// lowest failure; a finished one with what [`next`] says.
    #[test]
    fn a_search_stopped_early_answers_with_what_it_had() {
        let s = Search::new(100.0, 1e6);
        let step = Step::voted;
        let steps = [
            step(100.0, Verdict::Met),
            step(200.0, Verdict::Met),
            step(400.0, Verdict::Broke(1)),
        ];
        let c = so_far(&s, &steps);
        assert_eq!((c.max_rps, c.first_failing_rps), (Some(200.0), Some(400.0)));
        assert_eq!(c.limited_by, Limit::Slo(1));
        let c = so_far(&s, &steps[..1]);
        assert_eq!((c.max_rps, c.first_failing_rps), (Some(100.0), None));
        assert_eq!(so_far(&s, &[]).max_rps, None);
        let (all, done) = search(&s, server(1_000.0));
        assert_eq!(so_far(&s, &all), done);
    }

    /// Runs the search against a server whose steps (ten seconds of 1,000 answers each)
    /// have `slow(rate, nth)` answers a second over a p99 limit of 50 ms; returns the
    /// steps and the end.
    fn evidenced(s: &Search, slow: impl Fn(f64, usize) -> Vec<u64>) -> (Vec<Step>, Capacity) {
        let p99 = ["p99<50ms".parse::<Threshold>().unwrap()];
        let mut steps: Vec<Step> = Vec::new();
        for _ in 0..300 {
            match next(s, &steps) {
                Next::Try(rate) => {
                    let nth = steps.iter().filter(|st| st.rate == rate).count();
                    assert!(nth < boundary::MOST_STEPS, "{rate} measured again");
                    let r = crate::boundary::tests::step(&slow(rate, nth), &[]);
                    steps.push(Step::of(rate, &p99, &r, judge(&p99, &r)));
                }
                Next::Done(c) => return (steps, c),
            }
        }
        panic!("the search did not end: {steps:?}");
    }

    fn at(steps: &[Step], rate: f64) -> usize {
        steps.iter().filter(|s| s.rate == rate).count()
    }

    /// Where the evidence is clear, two steps at each boundary rate decide it.
    #[test]
    fn clear_evidence_decides_a_boundary_rate_in_two_steps() {
        let capacity = 7_300.0;
        let (steps, c) = evidenced(&Search::new(100.0, 1e6), |rate, _| {
            vec![if rate <= capacity { 2 } else { 40 }; 10]
        });
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!(lo <= capacity && capacity < hi, "{c:?}");
        assert_eq!(c.limited_by, Limit::Slo(0));
        assert_eq!((at(&steps, lo), at(&steps, hi)), (2, 2));
        for r in [lo, hi] {
            assert_eq!(decision(r, &steps).unwrap().basis, Basis::Interval);
        }
    }

    /// A server clearly within p99 < 50 ms up to 4,000 req/s and clearly not above 5,000;
    /// between, one second in ten a burst near the limit (0.8 % or 1.1 % of a step's
    /// answers, alternately).
    fn edge(rate: f64, nth: usize) -> Vec<u64> {
        let mut slow = vec![if rate <= 4_000.0 { 0 } else { 40 }; 10];
        if rate > 4_000.0 && rate <= 5_000.0 {
            slow = vec![0; 10];
            slow[9] = if nth.is_multiple_of(2) { 80 } else { 110 };
        }
        slow
    }

    /// Only the boundary's rates are measured again: each failing rate above the lowest
    /// one (the ramp's first failure, each failure on the way down) is left behind by the
    /// bisection below it, so one step tells it.
    #[test]
    fn a_failing_rate_above_the_boundary_is_measured_once() {
        for capacity in [1_000.0, 7_300.0, 123_456.0] {
            let (steps, c) = evidenced(&Search::new(100.0, 1e6), |rate, _| {
                vec![if rate <= capacity { 2 } else { 40 }; 10]
            });
            let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
            assert!(lo <= capacity && capacity < hi, "{c:?}");
            let above: Vec<f64> = steps
                .iter()
                .filter(|s| s.rate > hi)
                .map(|s| s.rate)
                .collect();
            assert!(above.len() >= 2, "{capacity}: {steps:?}");
            for r in above {
                assert_eq!(at(&steps, r), 1, "{capacity}: {r} in {steps:?}");
            }
            assert_eq!((at(&steps, lo), at(&steps, hi)), (2, 2), "{capacity}");
        }
    }

    /// A failing rate that its second look turns met (a stall in its first step) moves
    /// the search up past it, to the server's capacity.
    #[test]
    fn a_failure_a_second_look_overturns_moves_the_search_up() {
        let capacity = 5_000.0;
        let (steps, c) = evidenced(&Search::new(100.0, 1e6), |rate, nth| {
            let fails = rate > capacity || (rate == 3_200.0 && nth == 0);
            vec![if fails { 40 } else { 2 }; 10]
        });
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!(lo <= capacity && capacity < hi, "{c:?}");
        assert!(at(&steps, 3_200.0) >= 2, "{steps:?}");
    }

    /// Steps decided broken before their deadline have a second or so each: too few
    /// seconds for the interval, which leaves a rate near its limit unclear. Two such
    /// steps decide it as two agreeing verdicts do; the same steps run to their deadline,
    /// or one of them, do not.
    #[test]
    fn two_steps_broken_early_decide_their_rate() {
        let p99 = ["p99<50ms".parse::<Threshold>().unwrap()];
        // One second each, 1.3 % and 1.6 % of the answers over 50 ms.
        let steps: Vec<Step> = [13, 16]
            .into_iter()
            .map(|slow| {
                let r = crate::boundary::tests::step(&[slow], &[]);
                Step::of(2_000.0, &p99, &r, judge(&p99, &r))
            })
            .collect();
        assert_eq!(steps[0].verdict, Verdict::Broke(0));
        assert_eq!(decision(2_000.0, &steps), None, "unclear by their seconds");
        let early: Vec<Step> = steps
            .iter()
            .cloned()
            .map(|s| s.taken(Took::BrokeEarly))
            .collect();
        let d = decision(2_000.0, &early).unwrap();
        assert_eq!(
            (d.verdict, d.basis, d.steps),
            (Verdict::Broke(0), Basis::Verdicts, 2)
        );
        let one_early = [early[0].clone(), steps[1].clone()];
        assert_eq!(decision(2_000.0, &one_early), None);
        assert_eq!(decision(2_000.0, &early[..1]), None);

        // The searcher marks a step so when it was decided broken, and only then.
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["p99<50ms".into()], Some(1_000.0), None, 1).unwrap();
        let mut s = Searcher::new(&f, Duration::from_secs(2));
        let r = crate::boundary::tests::step(&[13], &[]);
        let broke = Ended::Decided(Decided {
            met: false,
            bounds: Vec::new(),
        });
        s.took(2_000.0, &r, Verdict::Broke(0), Some(broke.clone()));
        s.took(2_000.0, &r, Verdict::Broke(0), Some(Ended::Deadline));
        s.took(2_000.0, &r, Verdict::Met, Some(broke));
        let early: Vec<bool> = s.steps.iter().map(|s| s.took == Took::BrokeEarly).collect();
        assert_eq!(early, [true, false, false]);
    }

    /// Near the limit, a rate whose steps straddle it is measured again, at most
    /// MOST_STEPS times, and then its pooled evidence decides.
    #[test]
    fn unclear_evidence_is_measured_again_up_to_the_most_steps() {
        let (steps, c) = evidenced(&Search::new(1_000.0, 1e6), edge);
        // Verdicts alone would stop at three steps.
        let most = steps.iter().map(|s| at(&steps, s.rate)).max();
        assert_eq!(most, Some(boundary::MOST_STEPS));
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!((4_000.0..=5_000.0).contains(&lo) && hi > lo, "{c:?}");
    }

    /// The boundary's decisions say how many steps each took and on what basis.
    #[test]
    fn the_boundary_rates_tell_how_they_were_decided() {
        let (steps, c) = evidenced(&Search::new(1_000.0, 1e6), edge);
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        let (l, h) = (decision(lo, &steps).unwrap(), decision(hi, &steps).unwrap());
        assert_eq!((l.verdict.clone(), h.verdict.met()), (Verdict::Met, false));
        for d in [&l, &h] {
            assert_eq!(d.steps, at(&steps, d.rate));
            // Pooled only once the rate had its most steps.
            assert!(
                d.basis == Basis::Interval
                    || (d.basis == Basis::Pooled && d.steps == boundary::MOST_STEPS),
                "{d:?}"
            );
        }
        // Steps without evidence are decided by their verdicts; one step decides nothing.
        let voted = [
            Step::voted(100.0, Verdict::Met),
            Step::voted(100.0, Verdict::Met),
        ];
        assert_eq!(decision(100.0, &voted).unwrap().basis, Basis::Verdicts);
        assert_eq!(decision(100.0, &voted[..1]), None);
    }

    /// A stall in one step at a rate the server holds is outweighed by the steps that
    /// follow it: the rate is measured until the evidence decides, and holds.
    #[test]
    fn a_stall_in_one_step_is_weighed_with_the_others() {
        let capacity = 5_000.0;
        let (steps, c) = evidenced(&Search::new(100.0, 1e6), |rate, nth| {
            let mut slow = vec![if rate <= capacity { 1 } else { 40 }; 10];
            if rate == 1_600.0 && nth == 0 {
                slow[3] = 100;
                slow[4] = 100;
            }
            slow
        });
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!(lo <= capacity && capacity < hi, "{c:?}");
        assert!(at(&steps, 1_600.0) > 2, "{steps:?}");
    }

    /// A heavy stall in one step of five is not outvoted: the five steps' requests together
    /// broke p99 (the stall alone holds 1.3 % of them), so the rate is broken, where two
    /// agreeing verdicts of three would have called it met.
    #[test]
    fn a_heavy_stall_counts_with_all_the_requests_at_its_rate() {
        let (steps, c) = evidenced(&Search::new(100.0, 1e6), |rate, nth| {
            let mut slow = vec![if rate <= 5_000.0 { 0 } else { 40 }; 10];
            if rate == 1_600.0 && nth == 0 {
                slow[3] = 325;
                slow[4] = 325;
            }
            slow
        });
        assert_eq!(at(&steps, 1_600.0), boundary::MOST_STEPS, "{steps:?}");
        assert_eq!(c.first_failing_rps, Some(1_600.0), "{c:?}");
        let d = decision(1_600.0, &steps).unwrap();
        assert_eq!((d.verdict, d.basis), (Verdict::Broke(0), Basis::Pooled));
    }

    /// Each step asks its deadline (the fixed rule's answers, at least the floor) and its
    /// least (a second, or the user's `-d`); the wait after a broken step is as long as
    /// the step ran (settle and measure), not its deadline.
    /// A search driven through its [`Searcher`] against a server that holds p99<50ms up to
    /// `capacity` req/s (10 s steps at 1,000 answers a second: none slow below it, 5 % at
    /// 80 ms above it); a ramp step below the capacity plainly passes, every other step
    /// runs to its deadline. Also the questions asked, in order.
    fn driven(to: f64, capacity: f64) -> (Searcher, Vec<Question>) {
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["p99<50ms".into()], Some(100.0), Some(to), 1).unwrap();
        let mut s = Searcher::new(&f, Duration::from_secs(1));
        let mut asked = Vec::new();
        while let Some(ask) = s.next() {
            asked.push(ask.question);
            let slow = if ask.rate <= capacity { 0 } else { 50 };
            let r = crate::boundary::tests::step(&[slow; 10], &[]);
            let v = s.judge(&r);
            let ended = if ask.question == Question::Ramp && v.met() {
                Ended::Passed
            } else {
                Ended::Deadline
            };
            s.took(ask.rate, &r, v, Some(ended));
        }
        (s, asked)
    }

    /// The rungs of the ramp that plainly pass are left at once and never measured again,
    /// unless one ends up bounding the capacity: then it is measured again in full, twice,
    /// and only those steps decide it.
    #[test]
    fn a_rung_that_plainly_passed_is_measured_again_before_it_bounds_the_capacity() {
        // 100, 200, 400, 800 pass; 1,600, 1,130, 951, 872 and 835 break: 800 bounds it.
        let (s, asked) = driven(1e6, 820.0);
        let m = s.measured();
        let rates = |passed: bool| -> Vec<f64> {
            m.iter()
                .filter(|x| x.passed() == passed)
                .map(|x| x.rate)
                .collect()
        };
        assert_eq!(rates(true), [100.0, 200.0, 400.0, 800.0]);
        assert_eq!(asked.iter().filter(|q| **q == Question::Ramp).count(), 5);
        let a = s.answer();
        assert_eq!(
            (a.capacity.max_rps, a.capacity.first_failing_rps),
            (Some(800.0), Some(835.0))
        );
        // 800 was measured again in full after its pass; its decision rests on those.
        let at_800: Vec<bool> = m
            .iter()
            .filter(|x| x.rate == 800.0)
            .map(|x| x.passed())
            .collect();
        assert_eq!(at_800, [true, false, false]);
        assert_eq!((a.boundary[0].rate, a.boundary[0].steps), (800.0, 2));
        assert_eq!(a.boundary[0].basis, Basis::Interval);
        // Every rung below it, once.
        for r in [100.0, 200.0, 400.0] {
            assert_eq!(m.iter().filter(|x| x.rate == r).count(), 1, "{r}");
        }
        // Every rung up to the ceiling passes: the ceiling is measured again in full too.
        let (s, _) = driven(800.0, 1_000.0);
        let a = s.answer();
        assert_eq!(a.capacity.limited_by, Limit::Ceiling);
        assert_eq!(a.capacity.max_rps, Some(800.0));
        assert_eq!(a.boundary[0].steps, 2);
        assert_eq!(s.measured().len(), 6);
        // A search stopped on the ramp has no capacity from the passes alone.
        let mut steps = vec![Step::voted(100.0, Verdict::Met).taken(Took::Passed)];
        assert_eq!(so_far(&Search::new(100.0, 1e6), &steps).max_rps, None);
        steps.push(Step::voted(100.0, Verdict::Met));
        assert_eq!(
            so_far(&Search::new(100.0, 1e6), &steps).max_rps,
            Some(100.0)
        );
    }

    /// A rung that only passed is not measured again while the search bisects above it:
    /// a met rate found there leaves it behind. At a capacity of 1,000 req/s, 800 passes
    /// once, 1,600 breaks, and the bisection between them finds a met rate above 800 that
    /// bounds the answer on its own evidence.
    #[test]
    fn a_passed_rung_left_behind_by_a_met_rate_above_it_is_not_measured_again() {
        let (s, _) = driven(1e6, 1_000.0);
        let m = s.measured();
        let at_800: Vec<bool> = m
            .iter()
            .filter(|x| x.rate == 800.0)
            .map(|x| x.passed())
            .collect();
        assert_eq!(at_800, [true]);
        let a = s.answer();
        let lo = a.capacity.max_rps.unwrap();
        assert!(lo > 800.0 && lo <= 1_000.0, "{lo}");
        assert!(a.capacity.first_failing_rps.unwrap() / lo - 1.0 <= 0.05);
        assert!(m.iter().any(|x| x.rate == lo && !x.passed()));
    }

    /// Only a rung of the ramp not measured yet, with no failure at or below it, is asked
    /// as [`Question::Ramp`]; bisection's rates and a rung asked again are decided.
    #[test]
    fn only_a_new_rung_below_every_failure_is_a_ramp_question() {
        let (s, asked) = driven(1e6, 1_000.0);
        let rates: Vec<f64> = s.measured().iter().map(|m| m.rate).collect();
        let ramp: Vec<f64> = rates
            .iter()
            .zip(&asked)
            .filter(|(_, q)| **q == Question::Ramp)
            .map(|(r, _)| *r)
            .collect();
        assert_eq!(ramp, [100.0, 200.0, 400.0, 800.0, 1_600.0]);
        assert!(rates.len() > ramp.len());
    }

    #[test]
    fn a_step_asks_its_least_and_its_deadline() {
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["errors<0.1%".into()], Some(100.0), None, 1).unwrap();
        let floor = Duration::from_secs(5);
        let s = Searcher::new(&f, floor);
        let ask = s.next().unwrap();
        assert_eq!(
            (ask.rate, ask.length, ask.least),
            (100.0, Duration::from_secs(100), LEAST)
        );
        assert_eq!(ask.horizon, LEAST);
        // A horizon (a plan's duration, `-d`) is the least a met step measures; every
        // step may still end after its least second.
        let s = Searcher::new(&f, floor).horizon(Duration::from_secs(3));
        let ask = s.next().unwrap();
        assert_eq!((ask.least, ask.horizon), (LEAST, Duration::from_secs(3)));
        // The most answers a step counts: 100 req/s for 100 s and 0.2 s (10,020), seven
        // of a Poisson count's standard deviations over that (⌈10,020 + 7 · 100.1⌉ =
        // 10,721), and one for each worker's rounding.
        assert_eq!(s.most_answers(&ask, 1), Most::all(10_721 + 1));
        assert_eq!(s.most_answers(&ask, 4), Most::all(10_721 + 4));
        let mut s = Searcher::new(&f, floor);
        let r = RunResult::empty(
            std::time::SystemTime::UNIX_EPOCH,
            Duration::from_millis(2_500),
        );
        s.took(100.0, &r, Verdict::Broke(0), Some(Ended::Deadline));
        assert_eq!(s.rest(false), SETTLE + Duration::from_millis(2_500));
        assert_eq!(s.rest(true), s.rest(false));
        assert_eq!(s.measured()[0].ended, Some(Ended::Deadline));
    }

    /// A step decided met ends only from its horizon (a plan's `duration`, `-d`) on, so a
    /// rate is sustained over the length the fixed rule measures; one broken whatever
    /// comes ends after its least second, and one that only looks broken (a burst the
    /// rest of the step could dilute) runs on.
    #[test]
    fn a_met_step_waits_for_its_horizon_and_a_broken_one_does_not() {
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["p99<50ms".into()], Some(1_000.0), None, 1).unwrap();
        let s = Searcher::new(&f, Duration::from_secs(2)).horizon(Duration::from_secs(2));
        let ask = s.next().unwrap();
        let most = s.most_answers(&ask, 2);
        // 2 s (the fixed rule's 1,000 answers take 1 s; the floor is 2 s) and 0.2 s at
        // 1,000 req/s, seven standard deviations of a Poisson count over that (⌈2,200 +
        // 7 · 46.9⌉ = 2,529), and one for each of two workers' rounding.
        assert_eq!(most.all, 2_529 + 2);
        let at = |ms| Duration::from_millis(ms);
        // 1,000 answers at 30 ms: p99 clearly under 50 ms, not under half of it (no
        // plain pass): met, but not before the horizon.
        let mut h = shootout_model::latency_histogram();
        h.record_n(30_000, 1_000).unwrap();
        let met = SoFar {
            completed: 1_000,
            failed: 0,
            latency: &h,
            steps: &[],
            labels: &[],
            most: &most,
        };
        assert_eq!(s.ends(&ask, at(1_000), &met, |_| 1.0), None);
        assert_eq!(s.ends(&ask, at(1_999), &met, |_| 1.0), None);
        assert!(matches!(
            s.ends(&ask, at(2_000), &met, |_| 1.0),
            Some(Ended::Decided(ref d)) if d.met
        ));
        // 200 of 1,000 at 80 ms: over 1 % of the step's most (26 of 2,531) whatever
        // comes: broken after the least second.
        let (_, _, slow) = crate::decided::tests::counts(1_000, 200, 0);
        let broke = SoFar {
            latency: &slow,
            ..met
        };
        assert_eq!(s.ends(&ask, at(999), &broke, |_| 1.0), None);
        assert!(matches!(
            s.ends(&ask, LEAST, &broke, |_| 1.0),
            Some(Ended::Decided(ref d)) if !d.met
        ));
        // 20 at 80 ms: p99 is 80 ms so far, but 2,531 answers may dilute them: open.
        let (_, _, burst) = crate::decided::tests::counts(1_000, 20, 0);
        let open = SoFar {
            latency: &burst,
            ..met
        };
        assert_eq!(s.ends(&ask, at(1_500), &open, |_| 1.0), None);
    }

    /// With `step_end = "deadline"` (the fixed rule) no step ends early: a step that would
    /// be decided met after its least second (1,000 answers at 1 ms against p99<50ms) is
    /// not ended at any time, so it runs to its deadline (the fixed rule's 1,000 answers:
    /// 10 s at 100 req/s), asks that as its least, is never a ramp question, and ends
    /// `full`. By the default rule the same evidence ends it at its least second.
    #[test]
    fn by_the_deadline_rule_a_step_decided_after_a_second_runs_its_deadline() {
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["p99<50ms".into()], Some(100.0), None, 1).unwrap();
        let floor = Duration::from_secs(5);
        let mut h = shootout_model::latency_histogram();
        h.record_n(1_000, 1_000).unwrap();
        let so_far = SoFar {
            completed: 1_000,
            failed: 0,
            latency: &h,
            steps: &[],
            labels: &[],
            most: &Most::all(1_000),
        };
        let decided = Searcher::new(&f, floor);
        let ask = decided.next().unwrap();
        assert_eq!((ask.question, ask.least), (Question::Ramp, LEAST));
        let early = LEAST - Duration::from_millis(1);
        assert_eq!(decided.ends(&ask, early, &so_far, |_| 1.0), None);
        assert!(
            matches!(decided.ends(&ask, LEAST, &so_far, |_| 1.0), Some(Ended::Decided(ref d)) if d.met),
            "{:?}",
            decided.ends(&ask, LEAST, &so_far, |_| 1.0)
        );
        assert_eq!(decided.at_deadline(), Ended::Deadline);

        let fixed = Searcher::new(&f.clone().ending(EndRule::Deadline), floor);
        let ask = fixed.next().unwrap();
        assert_eq!(ask.question, Question::Decide);
        assert_eq!(
            (ask.length, ask.least, ask.horizon),
            (Duration::from_secs(10), ask.length, ask.length)
        );
        for ms in [1_000, 2_500, 9_999, 10_000, 3_600_000] {
            let at = Duration::from_millis(ms);
            assert_eq!(fixed.ends(&ask, at, &so_far, |_| 1.0), None, "{ms} ms");
        }
        assert_eq!(fixed.at_deadline(), Ended::Full);
    }

    /// A whole search by the fixed rule: every step is a question to decide, ends `full`
    /// and counts as evidence (none `passed`), and the answer brackets the capacity to the
    /// search's resolution as the default rule's does.
    #[test]
    fn a_search_by_the_deadline_rule_measures_every_step_in_full() {
        use shootout_model::find_max::{Asked, FindMax};
        let f = FindMax::new(Asked::Flags, &["p99<50ms".into()], Some(100.0), None, 1)
            .unwrap()
            .ending(EndRule::Deadline);
        let mut s = Searcher::new(&f, Duration::from_secs(1));
        while let Some(ask) = s.next() {
            assert_eq!(ask.question, Question::Decide, "{ask:?}");
            let slow = if ask.rate <= 820.0 { 0 } else { 50 };
            let r = crate::boundary::tests::step(&[slow; 10], &[]);
            let v = s.judge(&r);
            let ended = s.at_deadline();
            s.took(ask.rate, &r, v, Some(ended));
        }
        let m = s.measured();
        assert!(
            m.iter()
                .all(|x| x.ended == Some(Ended::Full) && !x.passed()),
            "{m:?}"
        );
        let c = s.answer().capacity;
        let (lo, hi) = (c.max_rps.unwrap(), c.first_failing_rps.unwrap());
        assert!(lo <= 820.0 && 820.0 < hi && hi / lo - 1.0 <= 0.05, "{c:?}");
        // The rungs below it were measured once each, in full, and are evidence.
        assert_eq!(m.iter().filter(|x| x.rate == 400.0).count(), 1);
    }

    #[test]
    fn rates_are_rounded_to_three_figures() {
        assert_eq!(round3(1414.2135), 1410.0);
        assert_eq!(round3(0.012345), 0.0123);
        assert_eq!(round3(123_456.0), 123_000.0);
    }
}
