//! `shootout load --find-max --slo 'p99<50ms' URL`: the most requests per second the
//! server sustains within its SLOs. The flags become the model's [`FindMax`] through the
//! one constructor the plan's `find_max` key uses too ([`FindMax::new`]); the search is
//! the analysis' [`Searcher`], the one `shootout run` drives: it names each step (an
//! open-loop load at a rate, after a settle period at that rate that is not judged, long
//! enough to judge its SLOs and at least `-d`) and judges it; this runs what it asks for,
//! watching what else runs on the machine, then prints the report
//! ([`shootout_report::capacity`]). Ctrl-C ends the search with what it found.
//!
//! The machine: a search on CPUs the server or other processes share measures the pair,
//! not the server. So before the first step it says when the server runs on this machine
//! and shootout is not pinned apart from it (no `--cpus`), and what else ran on the CPUs
//! shootout may use while nothing of the search ran; each step is watched as `run`'s
//! steps are ([`shootout_harness::CpuWatch`]); and the answer repeats what was found.

use super::flags::LoadArgs;
use crate::output::{Failure, INTERRUPTED};
use anyhow::anyhow;
use shootout_analysis::capacity::{self, Ask, Ended, Measured, Searcher};
use shootout_engine::Control;
use shootout_model::find_max::{Asked, FindMax};
use shootout_model::{LoadSpec, OtherLoad, Pace, RunResult};
use shootout_report::capacity::{
    capacity_json, capacity_text, ended_words, step_verdict_words, CapacityReport,
};
use shootout_report::Format;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long the CPUs are watched before the first step, while nothing of the search runs.
const LOOK_BEFORE: Duration = Duration::from_millis(500);

/// The search the flags ask for, checked by the rule the plan's key follows; `None`
/// without `--find-max`. The flags only a search reads are refused without it, and the
/// flags a search sets itself are refused with it.
pub(super) fn asked(a: &LoadArgs) -> Result<Option<FindMax>, Failure> {
    let f = &a.find_max;
    let refuse = |why: String| Err(Failure::usage(anyhow!(why)));
    if !f.find_max {
        if let Some(slo) = f.slo.first() {
            return refuse(format!(
                "--slo {slo} is the condition a capacity search keeps: add --find-max to search for the most requests per second that meets it, or, to judge this load, give --fail-if the condition that fails it{}",
                fail_if_of(slo).map_or(String::new(), |t| format!(" (--fail-if '{t}')"))
            ));
        }
        if f.from.is_some() || f.to.is_some() {
            return refuse("--from and --to bound a capacity search: add --find-max and an --slo, or give this load's rate with --rate".into());
        }
        if f.step_end.is_some() {
            return refuse("--step-end says when a capacity search's steps end: add --find-max and an --slo, or drop --step-end (a single load ends at -d or -n)".into());
        }
        return Ok(None);
    }
    if a.rate.is_some() {
        return refuse("--find-max chooses the rates itself: drop --rate, and bound the search with --from and --to".into());
    }
    if a.requests.is_some() {
        return refuse("--find-max runs each step for a time: drop -n, and give each step's least length with -d".into());
    }
    if let Some(why) = unread_by_a_search(a) {
        return refuse(why);
    }
    FindMax::new(Asked::Flags, &f.slo, f.from, f.to, a.concurrency)
        .map(|search| Some(search.ending(f.step_end.unwrap_or_default())))
        .map_err(|e| Failure::usage(anyhow!(e)))
}

/// The first flag given that writes or judges one load, which a search (many loads, one
/// answer) would leave unread, with what to do instead; `None` when there is none.
fn unread_by_a_search(a: &LoadArgs) -> Option<String> {
    let d = &a.dist;
    [
        (
            a.html.is_some(),
            "--html draws one load, and a search runs many: drop --html (--format json gives every step), or search from a plan (find_max, docs/plan.md) and draw it with shootout report --html",
        ),
        (
            a.csv.is_some() || a.gnuplot.is_some(),
            "-e and -g write one load's ab files, and a search runs many: drop them (--format json gives every step)",
        ),
        (
            !d.save.is_empty(),
            "--save writes one load's result for shootout merge, and a search runs many: drop --save",
        ),
        (
            !d.fail_if.is_empty(),
            "--fail-if judges one load; a search keeps its --slo conditions and exits 0 with the rate found: drop --fail-if",
        ),
        (
            a.warmup.is_some(),
            "--warmup warms up one load; each step of a search settles 1 s at its rate before it is measured: drop --warmup",
        ),
        (
            d.shard.is_some() || d.shards.is_some() || d.barrier.is_some() || d.start_at.is_some(),
            "a capacity search runs on one machine: drop --shard, --shards, --barrier and --start-at",
        ),
    ]
    .into_iter()
    .find(|(given, _)| *given)
    .map(|(_, why)| why.to_string())
}

/// The `--fail-if` expression that fails a load where `slo` does not hold (`p99<50ms` →
/// `p99>=50ms`); `None` when `slo` has no operator.
fn fail_if_of(slo: &str) -> Option<String> {
    let i = slo.find(['<', '>'])?;
    let (metric, rest) = slo.split_at(i);
    let (op, value) = match rest.as_bytes() {
        [b'<', b'=', ..] => (">", &rest[2..]),
        [b'>', b'=', ..] => ("<", &rest[2..]),
        [b'<', ..] => (">=", &rest[1..]),
        _ => ("<=", &rest[1..]),
    };
    Some(format!("{metric}{op}{value}"))
}

/// Runs the search `f` from the load `base`; returns the exit code.
pub(super) fn run(
    a: &LoadArgs,
    f: &FindMax,
    base: &LoadSpec,
    format: Format,
) -> Result<i32, Failure> {
    if !matches!(format, Format::Text | Format::Json) {
        return Err(Failure::usage(anyhow!(
            "--find-max reports as text or json: drop --format or give --format json"
        )));
    }
    let floor = base
        .duration
        .filter(|_| a.duration.is_some())
        .unwrap_or(shootout_model::find_max::DEFAULT_STEP);
    let stop = crate::stop::stop_flag();
    let mut machine = Machine::before(base);
    if !a.quiet {
        for line in &machine.said {
            say!("note: {line}");
        }
    }
    let unit = search_unit(base);
    let mut searcher = Searcher::new(f, floor);
    if let Some(j) = &base.journey {
        searcher = searcher.journeys(&j.file);
    }
    if a.duration.is_some() {
        searcher = searcher.horizon(floor);
    }
    let judge_others = machine.judge_others;
    let interrupted = drive(
        &mut searcher,
        |wait| crate::stop::sleep_unless_stopped(wait, &stop),
        |searcher, ask| step(base, searcher, ask, &stop, judge_others),
        |n, m, other: Option<OtherLoad>| {
            machine.steps.push(other);
            if !a.quiet {
                say!("{}", step_line(n, f, m, unit));
                if let Some(o) = other.filter(shootout_analysis::quiet::not_quiet) {
                    say!("  ⚠ {}", shootout_report::shootout::busy_text(&o, 1, 1));
                }
            }
        },
    )?;
    let answer = searcher.answer();
    let said = machine.answer();
    let report = CapacityReport {
        url: &base.target.url,
        unit,
        slos: &f.slo,
        steps: searcher.measured(),
        capacity: &answer.capacity,
        boundary: &answer.boundary,
        interrupted,
        machine: &said,
        end_rule: f.end_rule,
    };
    let text = match format {
        Format::Json => capacity_json(&report),
        _ => capacity_text(&report),
    };
    crate::output::emit(&text)?;
    Ok(if interrupted { INTERRUPTED } else { 0 })
}

/// Drives `searcher` to its end: before each step after the first, the wait it asks for
/// (`rest`: true when stopped meanwhile); each step it asks for measured by `measure`
/// (`None` when stopped; with how it ended and what else it saw, `T`), judged by the
/// searcher and said
/// (`said`, with its number). True when the search was stopped before its end.
pub(crate) fn drive<T>(
    searcher: &mut Searcher,
    mut rest: impl FnMut(Duration) -> bool,
    mut measure: impl FnMut(&Searcher, Ask) -> Result<Option<(RunResult, Option<Ended>, T)>, Failure>,
    mut said: impl FnMut(usize, &Measured, T),
) -> Result<bool, Failure> {
    while let Some(ask) = searcher.next() {
        if searcher.tries() > 0 && rest(searcher.rest(false)) {
            return Ok(true);
        }
        let Some((result, ended, seen)) = measure(searcher, ask)? else {
            return Ok(true);
        };
        let verdict = searcher.judge(&result);
        let n = searcher.tries() + 1;
        let m = searcher.took(ask.rate, &result, verdict, ended);
        said(n, m, seen);
    }
    Ok(false)
}

/// What a search of `spec` paces a second: journeys started for journeys, calls for gRPC
/// (`--rate` paces calls, whatever a streaming call's counts count), else requests.
fn search_unit(spec: &LoadSpec) -> &'static str {
    if spec.journey.is_some() {
        "journeys/s"
    } else if spec.expect.grpc.is_some() {
        "calls/s"
    } else {
        "req/s"
    }
}

/// A step as stderr says it: `step 3: 400 req/s offered, 399.8 sent, p99 3.100 ms, errors 0.000% in
/// 2.4 s: broke p99<50ms (decided: broken — p99 ≥ 80.0 ms (at its deadline, whatever comes) ≥
/// 50ms)`, the verdict in the words of the report's table and how the step ended; the rates in
/// `unit` (`journeys/s` for journeys, whose latency and errors are every request's).
fn step_line(n: usize, f: &FindMax, m: &Measured, unit: &str) -> String {
    let ended = m
        .ended
        .as_ref()
        .map_or(String::new(), |e| format!(" ({})", ended_words(&f.slo, e)));
    format!(
        "step {n}: {} {unit} offered, {:.1} sent, p99 {:.3} ms, errors {:.3}% in {:.1} s: {}{ended}",
        m.rate,
        m.achieved,
        m.p99_ms,
        m.errors_pct,
        m.measured.as_secs_f64(),
        step_verdict_words(&f.slo, m)
    )
}

/// What the search knows of the machine it runs on: whether the server shares shootout's
/// CPUs, what else ran before it began, and what each step's watch saw.
struct Machine {
    /// Sentences said before the first step (and repeated in the answer).
    said: Vec<String>,
    /// Whether a step's watch can tell others' CPU time: the server is not on the watched
    /// CPUs by design (shootout pinned with `--cpus`, or the server elsewhere).
    judge_others: bool,
    /// Each judged step's watch, in order.
    steps: Vec<Option<OtherLoad>>,
}

impl Machine {
    /// Looks at the machine before the search of `base`: where the server runs, and what
    /// ran on shootout's CPUs for [`LOOK_BEFORE`].
    fn before(base: &LoadSpec) -> Machine {
        let local = local_server(base);
        let mut said = Vec::new();
        if local && base.cpus.is_none() {
            said.push("the server runs on this machine and shootout is not pinned apart from it: they share the CPUs, so the capacity found is the pair's, not the server's alone (pin the server with taskset -c and give shootout the other CPUs with --cpus)".to_string());
        }
        let cpus = base
            .cpus
            .clone()
            .unwrap_or_else(shootout_engine::sys::allowed_cpus);
        let watch = shootout_harness::CpuWatch::start(&cpus, true);
        std::thread::sleep(LOOK_BEFORE);
        if let Some(o) = watch
            .stop(Duration::ZERO, Duration::ZERO)
            .filter(shootout_analysis::quiet::not_quiet)
        {
            said.push(format!(
                "before the search, {}",
                shootout_report::shootout::busy_text(&o, 1, 1)
            ));
        }
        Machine {
            said,
            judge_others: base.cpus.is_some() || !local,
            steps: Vec::new(),
        }
    }

    /// What the answer says of the machine: what was said before, and the steps whose
    /// watch found it not quiet, with the busiest of them.
    fn answer(&self) -> Vec<String> {
        let mut out = self.said.clone();
        let busy: Vec<&OtherLoad> = self
            .steps
            .iter()
            .flatten()
            .filter(|o| shootout_analysis::quiet::not_quiet(o))
            .collect();
        if let Some(o) = shootout_analysis::quiet::busiest(busy.iter().copied()) {
            out.push(format!(
                "{} of {} steps: {}",
                busy.len(),
                self.steps.len(),
                shootout_report::shootout::busy_text(&o, 1, 1)
            ));
        }
        out
    }
}

/// Whether the server of `spec` runs on this machine: a Unix socket, a loopback address,
/// or `localhost`.
fn local_server(spec: &LoadSpec) -> bool {
    spec.target.unix_socket.is_some() || super::loopback_host(spec)
}

/// One step: a settle period at `ask.rate` (not judged), then at most `ask.length`
/// measured, ending as soon as `searcher` finds its SLOs decided after `ask.least`, or on
/// the ramp as soon as it plainly passes ([`crate::until::search_watch`], the watch a
/// plan's search steps end by too), its CPUs watched (others judged as `judge_others`
/// says). `None` when the user stopped it.
fn step(
    base: &LoadSpec,
    searcher: &Searcher,
    ask: Ask,
    stop: &Arc<AtomicBool>,
    judge_others: bool,
) -> Result<Option<Stepped>, Failure> {
    let rate = ask.rate;
    let at = |d: Duration| {
        base.to_builder()
            .pace(Pace::Rate(rate))
            .bound(None, Some(d))
            .build()
            .map_err(|e| {
                let unit = search_unit(base);
                Failure::usage(anyhow!("--find-max at {rate} {unit}: {e}"))
            })
    };
    let settle = at(capacity::SETTLE)?;
    let control = Control::with_stop(settle.threads, stop.clone());
    shootout_engine::run(&settle, &control).map_err(Failure::run)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let spec = at(ask.length)?;
    let mut control = Control::with_stop(spec.threads, stop.clone());
    control.watch();
    let cpus = spec
        .cpus
        .clone()
        .unwrap_or_else(shootout_engine::sys::allowed_cpus);
    let watch = shootout_harness::CpuWatch::start(&cpus, judge_others);
    let ran = AtomicBool::new(false);
    let (result, decided) = std::thread::scope(|s| {
        let watcher = s.spawn(|| crate::until::search_watch(&control, &ran, searcher, &ask));
        let result = shootout_engine::run(&spec, &control);
        ran.store(true, Ordering::Relaxed);
        (result, watcher.join().ok().flatten())
    });
    let mut result = result.map_err(Failure::run)?;
    let other = watch.stop(Duration::ZERO, Duration::ZERO);
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    shootout_analysis::load_warnings::refresh(&mut result, &spec);
    let ended = decided.unwrap_or_else(|| searcher.at_deadline());
    Ok(Some((result, Some(ended), other)))
}

/// A step measured: its result, how it ended and what the CPU watch saw.
type Stepped = (RunResult, Option<Ended>, Option<OtherLoad>);

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
        asked(&Cli::parse_from(all).load)
            .err()
            .map(|f| f.error.to_string())
    }

    /// A search's rates (its steps, its errors) are calls a second for gRPC: they said
    /// req/s; journeys a second for journeys; else requests.
    #[test]
    fn a_search_s_rates_are_in_what_it_paces() {
        let mut spec =
            LoadSpec::new(shootout_model::Target::parse("http://127.0.0.1:1/x").unwrap());
        assert_eq!(search_unit(&spec), "req/s");
        spec.expect.grpc = Some(shootout_model::GrpcReply {
            schema: std::sync::Arc::from(&[][..]),
            method: "p.S.M".into(),
            max_message: 1 << 20,
            json: None,
            stream: Default::default(),
            compress: false,
        });
        assert_eq!(search_unit(&spec), "calls/s");
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
        .contains("--from 10 is above --to 5"));
        assert_eq!(refused(&["--find-max", "--slo", "p99<5ms"]), None);
    }

    /// `--step-end deadline` asks for the fixed rule, `decided` (the default) for steps
    /// that end once decided; another word is refused by the parser naming both values,
    /// and the flag without --find-max names what it belongs to.
    #[test]
    fn step_end_picks_when_the_steps_end() {
        use shootout_model::find_max::EndRule;
        let rule = |extra: &[&str]| {
            let mut all = vec!["shootout", "--find-max", "--slo", "p99<5ms"];
            all.extend_from_slice(extra);
            all.push("http://127.0.0.1/");
            let f = asked(&Cli::parse_from(all).load).ok().flatten().unwrap();
            f.end_rule
        };
        assert_eq!(rule(&[]), EndRule::Decided);
        assert_eq!(rule(&["--step-end", "decided"]), EndRule::Decided);
        assert_eq!(rule(&["--step-end", "deadline"]), EndRule::Deadline);
        let Err(e) = Cli::try_parse_from(["shootout", "--step-end", "fixed", "http://x/"]) else {
            panic!("--step-end fixed parsed");
        };
        let e = e.to_string();
        assert!(
            e.contains("--step-end") && e.contains("decided") && e.contains("deadline"),
            "{e}"
        );
        let e = refused(&["--step-end", "deadline"]).unwrap();
        assert!(
            e.starts_with("--step-end says when a capacity search's steps end: add --find-max"),
            "{e}"
        );
    }

    /// The flags only a search reads are refused without --find-max, naming it (and
    /// --fail-if, which may be what was meant, with the expression turned round).
    #[test]
    fn the_flags_of_a_search_are_refused_without_it() {
        let e = refused(&["--slo", "p99<1us", "-n", "5"]).unwrap();
        assert!(
            e.contains("add --find-max") && e.contains("(--fail-if 'p99>=1us')"),
            "{e}"
        );
        let e = refused(&["--from", "10"]).unwrap();
        assert!(e.contains("add --find-max"), "{e}");
        assert_eq!(refused(&["-n", "5"]), None);
        for (slo, fail_if) in [
            ("p99<50ms", "p99>=50ms"),
            ("p99<=50ms", "p99>50ms"),
            ("rps>100", "rps<=100"),
            ("rps>=100", "rps<100"),
        ] {
            assert_eq!(fail_if_of(slo).as_deref(), Some(fail_if), "{slo}");
        }
        assert_eq!(fail_if_of("p99"), None);
    }

    /// The two ends of the range follow the plan key's rule: a rate the spec allows.
    #[test]
    fn the_bounds_follow_the_rule_of_a_rate() {
        let e = refused(&["--find-max", "--slo", "p99<5ms", "--to", "1e300"]).unwrap();
        assert_eq!(
            e,
            "--to must be from 0.001 to 1e9 requests per second, not 1e300"
        );
        let e = refused(&["--find-max", "--slo", "p99<5ms", "--from", "0.0001"]).unwrap();
        assert!(e.starts_with("--from must be from 0.001"), "{e}");
        // --from above the default highest rate raises it, as in a plan.
        assert_eq!(
            refused(&["--find-max", "--slo", "p99<5ms", "--from", "2e6"]),
            None
        );
    }

    #[test]
    fn a_server_on_this_machine_is_told_apart() {
        let spec = |url: &str| {
            LoadSpec::builder(shootout_model::Target::parse(url).unwrap())
                .build()
                .unwrap()
        };
        for (url, local) in [
            ("http://127.0.0.1:8000/", true),
            ("http://127.1.2.3/", true),
            ("http://[::1]:80/", true),
            ("http://LOCALHOST/", true),
            ("http://10.0.0.1/", false),
            ("http://example.test/", false),
        ] {
            assert_eq!(local_server(&spec(url)), local, "{url}");
        }
    }
}
