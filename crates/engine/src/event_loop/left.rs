//! What a run leaves in flight when it ends: the age of every request still unanswered,
//! from its start as its latency counts it (its due time in rate mode, else its send) to
//! the run's end, in a histogram of the latency's bounds ([`latency_histogram`]). It is
//! worked out once, after the loop, from what the worker holds anyway: nothing is kept
//! per request while the run goes. A request in flight is one a connection holds (queued
//! on one still opening, written, partly answered: [`Protocol::each_in_flight`]), one put
//! back to be sent again ([`Core::resend`]), or, in rate mode, one due that no connection
//! had taken yet. Had it been answered, its latency would have been at least its age: a
//! capacity step's verdict counts it so (`shootout_analysis::capacity`).

use super::{Core, Protocol};
use hdrhistogram::Histogram;
use shootout_model::latency_histogram;
use std::time::{Duration, Instant};

/// The most requests due and not sent whose ages a worker works out one by one, the
/// oldest: a server that held every connection of a long step at a high rate leaves
/// millions of them, and walking each (a Poisson schedule gap by gap) would keep the run
/// from ending. The younger ones beyond count as in flight for no time, a lower bound
/// still.
pub(crate) const UNSENT_AGES: u64 = 1 << 20;

/// The ages (µs) of the requests worker `p` has in flight when the run ends at `ended`
/// (before its connections are wound down). As many as [`Core::in_flight`] counts (what
/// the run reports as aborted), and in rate mode those due and not sent besides.
pub(crate) fn ages<'a, P: Protocol<'a>>(p: &P, ended: Instant) -> Histogram<u64> {
    let core = p.core_ref();
    let mut h = latency_histogram();
    let mut found = 0u64;
    let mut age = |start: Instant| {
        h.saturating_record(us(ended.saturating_duration_since(start)));
        found += 1;
    };
    for r in &core.resend {
        age(r.start);
    }
    p.each_in_flight(&mut age);
    let held = core.in_flight as u64;
    debug_assert_eq!(found, held, "each request in flight is found once");
    match found.cmp(&held) {
        std::cmp::Ordering::Equal => {}
        // A request the walk missed waited at least no time.
        std::cmp::Ordering::Less => h.saturating_record_n(0, held - found),
        // Never in a tested build; the count is what the run reports as aborted.
        std::cmp::Ordering::Greater => {
            h.reset();
            h.saturating_record_n(0, held);
        }
    }
    unsent(core, ended, &mut h);
    h
}

/// Rate mode: adds the ages of the requests due by `ended` that no connection had taken
/// yet (`due − sent` of the schedule), each from its due time, the oldest
/// [`UNSENT_AGES`] one by one and the rest as none.
fn unsent(core: &Core, ended: Instant, h: &mut Histogram<u64>) {
    let elapsed = ended.saturating_duration_since(core.start);
    let sent = core.sched.sent;
    let mut age = |due: Duration| {
        h.saturating_record(us(elapsed.saturating_sub(due)));
    };
    let unsent = match (&core.staged, &core.pacer) {
        (Some(stages), _) => stages.each_unsent(sent, elapsed, UNSENT_AGES, &mut age),
        (None, Some(p)) => p.each_due(sent, p.due_end(elapsed), UNSENT_AGES, &mut age),
        (None, None) => 0,
    };
    let rest = unsent.saturating_sub(UNSENT_AGES);
    if rest > 0 {
        h.saturating_record_n(0, rest);
    }
}

/// A span in whole µs (saturating).
fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
