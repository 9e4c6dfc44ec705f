//! `shootout load --find-max --slo 'p99<50ms' URL`: the most requests per second the
//! server sustains within its SLOs. The search itself is the analysis' pure function
//! ([`shootout_analysis::capacity::next`]); this runs what it asks for: each step an
//! open-loop load at the named rate, after a settle period at that rate that is not
//! judged, each step long enough to judge its SLOs (at least `-d`), then prints the
//! report ([`shootout_report::capacity`]). Ctrl-C ends the search with what it found.

use super::flags::LoadArgs;
use crate::gates::parse_slos;
use crate::output::{Failure, INTERRUPTED};
use anyhow::anyhow;
use shootout_analysis::capacity::{self, Measured, Next, Search, Step, SETTLE};
use shootout_engine::Control;
use shootout_model::{LoadSpec, Pace, RunResult};
use shootout_report::capacity::{capacity_json, capacity_text, CapacityReport};
use shootout_report::Format;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The flags of a capacity search.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FindMaxArgs {
    /// Search for the most requests per second that meets every --slo (open-loop steps:
    /// growing from --from until one breaks an SLO, then bisecting to 5 %); -d is each
    /// step's least length.
    #[arg(long)]
    pub find_max: bool,

    /// With --find-max: a condition every step must meet, in --fail-if's grammar read the
    /// other way (p99<50ms, errors<0.1%); repeat for more.
    #[arg(long, value_name = "EXPR")]
    pub slo: Vec<String>,

    /// With --find-max: the first rate tried (req/s).
    #[arg(long, value_name = "R", default_value_t = 100.0)]
    pub from: f64,

    /// With --find-max: the highest rate tried (req/s).
    #[arg(long, value_name = "R", default_value_t = 1_000_000.0)]
    pub to: f64,
}

/// Each step's least length when `-d` is not given.
const DEFAULT_STEP: Duration = Duration::from_secs(5);

/// The flags a search refuses, with what to use instead; `None` when they agree.
fn refusal(a: &LoadArgs) -> Option<String> {
    let f = &a.find_max;
    if f.slo.is_empty() {
        return Some(
            "--find-max needs at least one --slo, e.g. --slo 'p99<50ms' --slo 'errors<0.1%'".into(),
        );
    }
    if a.rate.is_some() {
        return Some("--find-max chooses the rates itself: drop --rate, and bound the search with --from and --to".into());
    }
    if a.requests.is_some() {
        return Some("--find-max runs each step for a time: drop -n, and give each step's least length with -d".into());
    }
    if !(f.from > 0.0 && f.from <= f.to && f.to.is_finite()) {
        return Some(format!(
            "--from {} --to {}: the search needs 0 < --from <= --to",
            f.from, f.to
        ));
    }
    None
}

/// Runs the search; returns the exit code.
pub(super) fn run(a: &LoadArgs, base: &LoadSpec, format: Format) -> Result<i32, Failure> {
    if let Some(why) = refusal(a) {
        return Err(Failure::usage(anyhow!(why)));
    }
    if !matches!(format, Format::Text | Format::Json) {
        return Err(Failure::usage(anyhow!(
            "--find-max reports as text or json: drop --format or give --format json"
        )));
    }
    let slos = parse_slos(&a.find_max.slo)?;
    let search = Search::new(a.find_max.from, a.find_max.to);
    let floor = base
        .duration
        .filter(|_| a.duration.is_some())
        .unwrap_or(DEFAULT_STEP);
    let stop = crate::stop::stop_flag();
    let mut measured: Vec<Measured> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut interrupted = false;
    let capacity = loop {
        let rate = match capacity::next(&search, &steps) {
            Next::Done(c) => break c,
            Next::Try(rate) => rate,
        };
        let length = capacity::step_length(rate, &slos, floor);
        if let Some(last) = measured.last() {
            let wait = capacity::cooldown_after(
                &last.verdict,
                capacity::step_length(last.rate, &slos, floor),
            );
            if crate::stop::sleep_unless_stopped(wait, &stop) {
                interrupted = true;
                break capacity::so_far(&search, &steps);
            }
        }
        let Some(result) = step(base, rate, length, &stop)? else {
            interrupted = true;
            break capacity::so_far(&search, &steps);
        };
        let kept = capacity::kept(&result);
        let verdict = capacity::judge(&slos, &result);
        let m = Measured::of(rate, &result, kept, verdict.clone());
        steps.push(Step::of(rate, &slos, &result, verdict));
        if !a.quiet {
            say!(
                "step {}: {} req/s offered, {:.1} sent, p99 {:.3} ms, errors {:.3}%: {}",
                measured.len() + 1,
                rate,
                m.achieved,
                m.p99_ms,
                m.errors_pct,
                if m.verdict == capacity::Verdict::Met {
                    "met"
                } else {
                    "not met"
                }
            );
        }
        measured.push(m);
    };
    let capacity = capacity::at_cap(capacity, &measured);
    let boundary: Vec<_> = [capacity.max_rps, capacity.first_failing_rps]
        .into_iter()
        .flatten()
        .filter_map(|rate| capacity::decision(rate, &steps))
        .collect();
    let report = CapacityReport {
        url: &base.target.url,
        slos: &a.find_max.slo,
        steps: &measured,
        capacity: &capacity,
        boundary: &boundary,
        interrupted,
    };
    let text = match format {
        Format::Json => capacity_json(&report),
        _ => capacity_text(&report),
    };
    crate::output::emit(&text)?;
    Ok(if interrupted { INTERRUPTED } else { 0 })
}

/// One step: a settle period at `rate` (not judged), then `length` measured. `None` when
/// the user stopped it.
fn step(
    base: &LoadSpec,
    rate: f64,
    length: Duration,
    stop: &Arc<AtomicBool>,
) -> Result<Option<RunResult>, Failure> {
    let at = |d: Duration| {
        base.to_builder()
            .pace(Pace::Rate(rate))
            .bound(None, Some(d))
            .build()
            .map_err(|e| Failure::usage(anyhow!("--find-max at {rate} req/s: {e}")))
    };
    for (spec, judged) in [(at(SETTLE)?, false), (at(length)?, true)] {
        let control = Control::with_stop(spec.threads, stop.clone());
        let result = shootout_engine::run(&spec, &control).map_err(Failure::run)?;
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if judged {
            return Ok(Some(result));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        load: LoadArgs,
    }

    fn refused(args: &[&str]) -> Option<String> {
        let mut all = vec!["shootout"];
        all.extend_from_slice(args);
        all.push("http://127.0.0.1/");
        refusal(&Cli::parse_from(all).load)
    }

    #[test]
    fn a_search_needs_an_slo_and_chooses_its_own_rates() {
        assert!(refused(&["--find-max"])
            .unwrap()
            .contains("needs at least one --slo"));
        assert!(refused(&["--find-max", "--slo", "p99<5ms", "--rate", "10"])
            .unwrap()
            .contains("drop --rate"));
        assert!(refused(&["--find-max", "--slo", "p99<5ms", "-n", "10"])
            .unwrap()
            .contains("drop -n"));
        assert!(refused(&[
            "--find-max",
            "--slo",
            "p99<5ms",
            "--from",
            "10",
            "--to",
            "5"
        ])
        .unwrap()
        .contains("0 < --from <= --to"));
        assert_eq!(refused(&["--find-max", "--slo", "p99<5ms"]), None);
    }
}
