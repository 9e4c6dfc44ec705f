//! `shootout load URL`: ab's and wrk's flags, in two stages as ripgrep reads its own:
//! [`flags`] is what was typed (clap, no logic), [`resolve`] turns it into a validated
//! [`LoadSpec`](shootout_model::LoadSpec) through the model's builder. This module runs
//! the engine (after an optional warm-up), reports in the chosen format on stdout (through
//! [`crate::output::emit`]), writes the `-e`, `-g`, `--html` and `--save` files and judges the
//! `--fail-if` thresholds. [`dist`] holds the flags of a load spread over many processes,
//! [`habits`] the flags of other tools (ab, wrk, oha, hey) and the heads `-v 2` prints.

pub(crate) mod barrier;
pub(crate) mod dist;
pub(crate) mod find_max;
mod flags;
pub(crate) mod grpc;
mod habits;
mod resolve;

pub use flags::LoadArgs;
pub(crate) use habits::refused_before_parse;
pub(crate) use resolve::{read_body, read_list, read_list_text, ListText};

use crate::gates::judge;
use crate::metrics;
use crate::output::{Failure, INTERRUPTED, THRESHOLD_FAILED};
use crate::progress::{Display, Progress};
use crate::stop::stop_flag;
use anyhow::Context;
use shootout_engine::Control;
use shootout_model::{FailureKind, LoadSpec, RunResult};
use shootout_report::terminal_line;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs `shootout load`; returns the exit code.
pub fn run(mut a: LoadArgs) -> Result<i32, Failure> {
    let mut plan = resolve::plan(&a)?;
    // hey's and oha's -z is -d for whatever reads the duration given (once its note is made).
    if a.duration.is_none() {
        a.duration.clone_from(&a.z);
    }
    if !a.quiet {
        for n in &plan.notes {
            say!("note: {n}");
        }
    }
    if let Some(f) = &plan.search {
        return find_max::run(&a, f, &plan.spec, plan.format);
    }
    start_time(&plan)?;
    // Shard 0 listens from now on, so that shards quicker than its warm-up can join.
    let opened = open_barrier(&plan, a.quiet)?;
    let board = Arc::new(metrics::Board::default());
    // Served until this function returns: the command's end.
    let served = a
        .metrics_listen
        .map(|addr| metrics::start(addr, board.clone(), a.quiet))
        .transpose()
        .map_err(Failure::run)?;
    let stop = stop_flag();
    let mut warmed = None;
    if let Some(ws) = &plan.warmup {
        let (interrupted, auto) = warm_up(
            (ws, plan.warmup_auto),
            stop.clone(),
            a.quiet,
            Display::choose(a.quiet, a.no_live),
        )?;
        if interrupted {
            return Ok(INTERRUPTED);
        }
        warmed = auto;
    }
    if let Some(opened) = opened {
        if meet_barrier(&mut plan, opened, a.quiet, &stop)? {
            return Ok(INTERRUPTED);
        }
    }
    let (result, heads, other_load) = measure(&a, &plan, &board, served.is_some(), stop, warmed)?;
    conclude(&a, &plan, &result, &heads, other_load)
}

/// The measured load: the engine under the live view, feeding the metrics board (when
/// `served`), watched by the CPU and listen-queue watches and `--until`'s watcher; its
/// result with what they saw, the heads sampled, and what else ran on the CPUs.
fn measure(
    a: &LoadArgs,
    plan: &resolve::Plan,
    board: &metrics::Board,
    served: bool,
    stop: Arc<AtomicBool>,
    warmed: Option<shootout_model::WarmedUp>,
) -> Result<
    (
        RunResult,
        shootout_engine::Heads,
        Option<shootout_model::OtherLoad>,
    ),
    Failure,
> {
    let display = Display::choose(a.quiet, a.no_live);
    let spec = &plan.spec;
    let mut control = Control::with_stop(spec.threads, stop);
    control.sample_heads = plan.sample_heads;
    if served || !plan.until.is_empty() {
        control.watch();
    }
    until_start(plan, &mut control)?;
    let title = format!("load {}", terminal_line(&spec.target.url));
    let progress = Progress::start(control, spec, "load", title, display);
    board.begin(
        metrics::Labels::new(),
        progress.control.clone(),
        crate::progress::live::Names::of(spec),
    );
    let watch = watch_cpus(spec);
    let listen =
        on_this_machine(spec).then(|| shootout_harness::ListenWatch::start(tcp_port(spec)));
    let ran = AtomicBool::new(false);
    let (result, until) = std::thread::scope(|s| {
        let watcher = (!plan.until.is_empty())
            .then(|| s.spawn(|| crate::until::watch(&progress.control, &plan.until, &ran)));
        let result = shootout_engine::run(spec, &progress.control);
        ran.store(true, Ordering::Relaxed);
        (result, watcher.and_then(|w| w.join().ok()))
    });
    let other_load = watch.stop(std::time::Duration::ZERO, std::time::Duration::ZERO);
    let listen = listen.and_then(shootout_harness::ListenWatch::stop);
    board.end(result.as_ref().ok());
    let heads = progress.control.heads();
    progress.finish();
    let mut result = result.or_else(|e| engine_failure(plan, e))?;
    result.listen = listen;
    result.until = until;
    result.warm_up = warmed;
    shootout_analysis::load_warnings::refresh(&mut result, spec);
    Ok((result, heads, other_load))
}

/// The end of a measured load: the heads sampled, the report, the files asked for, the
/// result file; then the exit code: interrupted, the generator's fault, no good answer,
/// a threshold breached, or 0.
fn conclude(
    a: &LoadArgs,
    plan: &resolve::Plan,
    result: &RunResult,
    heads: &shootout_engine::Heads,
    other_load: Option<shootout_model::OtherLoad>,
) -> Result<i32, Failure> {
    let spec = &plan.spec;
    if plan.sample_heads > 0 {
        habits::print_heads(heads);
    }
    let printed = print_report(a, plan, result, other_load);
    // A file that could not be written is an error even when stdout's reader went away.
    write_files(a, spec, result)?;
    dist::save(&plan.dist, spec, Ok(result))?;
    printed?;
    let breached = judge(&plan.dist.thresholds, spec, result);
    if result.interrupted {
        return Ok(INTERRUPTED);
    }
    let faults = result.counts.failures[FailureKind::GeneratorFault];
    if let Some(line) = crate::output::generator_fault(faults) {
        say!("error: {line}");
        return Ok(1);
    }
    if let Some(line) = no_good_answer(&result.counts) {
        say!("error: {line}");
        return Ok(1);
    }
    Ok(if breached { THRESHOLD_FAILED } else { 0 })
}

/// The engine could not run the load: a shard says so in its result file, for the merge to
/// name, and the error is the user's (a bad spec, header or local address) or the run's.
fn engine_failure(
    plan: &resolve::Plan,
    e: shootout_engine::EngineError,
) -> Result<shootout_model::RunResult, Failure> {
    dist::save(&plan.dist, &plan.spec, Err(&e.to_string()))?;
    Err(match e {
        shootout_engine::EngineError::Invalid(_)
        | shootout_engine::EngineError::Header(_)
        | shootout_engine::EngineError::BindFamily { .. } => Failure::usage(e),
        shootout_engine::EngineError::Bind { .. } => {
            Failure::usage(anyhow::Error::new(e).context("-B"))
        }
        e => Failure::run(e),
    })
}

/// The report on stdout (its result, for the caller to check after the files are
/// written), the warnings apart on stderr when the format has no room for them, and a
/// busy machine's warning.
fn print_report(
    a: &LoadArgs,
    plan: &resolve::Plan,
    result: &RunResult,
    other_load: Option<shootout_model::OtherLoad>,
) -> Result<(), Failure> {
    let report = shootout_report::render(plan.format, plan.ab, &plan.spec, result);
    let printed = crate::output::emit(&report);
    if plan.format.warnings_apart() && !a.quiet {
        crate::output::to_stderr(&shootout_report::warnings(result));
    }
    if let (Some(o), false) = (other_load, a.quiet) {
        if shootout_analysis::quiet::not_quiet(&o) {
            say!(
                "warning: {}",
                shootout_report::shootout::busy_text(&o, 1, 1)
            );
        }
    }
    printed
}

/// The server listens in this machine's network namespace, where the kernel's listen-queue
/// counters are read: a loopback address over TCP. (A server elsewhere is counted by its
/// own kernel; a Unix socket's queue is not in these counters.)
fn on_this_machine(spec: &LoadSpec) -> bool {
    spec.target.unix_socket.is_none() && loopback_host(spec)
}

/// The TCP port whose accept queue the server's listeners hold: every protocol's but
/// HTTP/3's (QUIC has no accept queue) and a Unix socket's.
pub(crate) fn tcp_port(spec: &LoadSpec) -> Option<u16> {
    (spec.target.unix_socket.is_none() && spec.protocol != shootout_model::Protocol::Http3)
        .then_some(spec.target.port)
}

/// Whether the URL of `spec` names this machine: `localhost` or a loopback address.
fn loopback_host(spec: &LoadSpec) -> bool {
    let host = spec
        .target
        .host
        .trim_start_matches('[')
        .trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

/// Watches what else runs on the load's CPUs while it runs: with `--cpus`, other
/// processes' CPU time there (the server's too, which should not run there) and steal;
/// without, where the server may run anywhere and is not ours to count, steal only.
fn watch_cpus(spec: &LoadSpec) -> shootout_harness::CpuWatch {
    match &spec.cpus {
        Some(cpus) => shootout_harness::CpuWatch::start(cpus, true),
        None => shootout_harness::CpuWatch::start(&shootout_engine::sys::allowed_cpus(), false),
    }
}

/// With a start (`--start-at`, or the barrier's), checks it again (the warm-up may have
/// taken the time), waits until the engine should connect, and gives the engine the start.
fn until_start(plan: &resolve::Plan, control: &mut Control) -> Result<(), Failure> {
    if let Some(at) = plan.dist.start_at {
        start_time(plan)?;
        // The engine connects, then waits for the start; connecting only just before it
        // keeps the connections from idling (a server's keep-alive timer may close them).
        shootout_engine::wait_until(at.checked_sub(CONNECT_AHEAD).unwrap_or(at), &control.stop);
        control.start_at = Some(at);
    }
    Ok(())
}

/// Opens the start barrier, if the flags ask for one (shard 0 listens); a shard that
/// cannot writes a failed result, for the merge to name it.
fn open_barrier(plan: &resolve::Plan, quiet: bool) -> Result<Option<barrier::Opened>, Failure> {
    let Some(b) = &plan.dist.barrier else {
        return Ok(None);
    };
    match barrier::open(b, quiet) {
        Ok(opened) => Ok(Some(opened)),
        Err(why) => {
            dist::save(&plan.dist, &plan.spec, Err(&why))?;
            Err(Failure::run(anyhow::anyhow!(why)))
        }
    }
}

/// Waits at the start barrier for every other shard; the start it gives becomes the run's
/// start, and what was measured there goes into the result. A shard that meets no start
/// (the wait passed, a run that started without it) writes a failed result saying why;
/// true when Ctrl-C or SIGTERM ended the wait (the result says so too).
fn meet_barrier(
    plan: &mut resolve::Plan,
    opened: barrier::Opened,
    quiet: bool,
    stop: &AtomicBool,
) -> Result<bool, Failure> {
    match opened.meet(quiet, stop) {
        Ok(met) => {
            plan.dist.start_at = Some(met.start_at);
            plan.dist.met = Some(met.facts);
            Ok(false)
        }
        Err(why) => {
            let why = format!("start barrier: {why}");
            dist::save(&plan.dist, &plan.spec, Err(&why))?;
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(true);
            }
            Err(Failure::run(anyhow::anyhow!(why)))
        }
    }
}

/// With `--start-at` or a barrier, how long before the start the engine begins to connect.
const CONNECT_AHEAD: std::time::Duration = std::time::Duration::from_secs(2);

/// Checks that `--start-at`, if given, has not passed by more than a second; if it has,
/// the shard writes a failed result (so the merge names it) and the run is refused.
fn start_time(plan: &resolve::Plan) -> Result<(), Failure> {
    let Some(at) = plan.dist.start_at else {
        return Ok(());
    };
    if let Err(f) = dist::check_start(at, std::time::SystemTime::now()) {
        dist::save(&plan.dist, &plan.spec, Err(&format!("{:#}", f.error)))?;
        return Err(f);
    }
    Ok(())
}

/// Checks that `a` resolves into a load (as `run` would, without running it); returns the
/// whole load's spec (the fleet's, when `a` names a shard).
pub(crate) fn check(a: &LoadArgs) -> Result<LoadSpec, Failure> {
    let plan = resolve::plan(a)?;
    Ok(plan.dist.fleet.unwrap_or(plan.spec))
}

/// Runs the warm-up (not measured) and says how it went; true when Ctrl-C ended it.
fn warm_up(
    (ws, auto): (&LoadSpec, bool),
    stop: Arc<AtomicBool>,
    quiet: bool,
    display: Display,
) -> Result<(bool, Option<shootout_model::WarmedUp>), Failure> {
    let mut control = Control::with_stop(ws.threads, stop);
    if auto {
        control.watch();
    }
    let title = format!("warm-up {} (not measured)", terminal_line(&ws.target.url));
    let progress = Progress::start(control, ws, "warm-up", title, display);
    let r = crate::until::warm_up(ws, &progress.control, auto);
    progress.finish();
    let r = r.context("warm-up").map_err(Failure::run)?;
    let warmed = r.warm_up;
    if !quiet {
        say!(
            "warm-up: {} requests in {:.1} s, {} failed (not measured){}",
            r.counts.completed,
            r.duration.as_secs_f64(),
            r.counts.failed(),
            warmed.map_or(String::new(), |w| crate::until::warm_up_words(&w))
        );
    }
    Ok((r.interrupted, warmed))
}

/// Writes the files asked for: `-e` (ab's percentile CSV), `--html`, `-g` (ab's TSV).
fn write_files(a: &LoadArgs, spec: &LoadSpec, result: &RunResult) -> Result<(), Failure> {
    if let Some(path) = &a.csv {
        std::fs::write(path, shootout_report::ab_percentiles_csv(result))
            .with_context(|| format!("cannot write -e file {}", path.display()))
            .map_err(Failure::run)?;
    }
    if let Some(path) = &a.html {
        std::fs::write(path, shootout_report::html::render_load(spec, result))
            .with_context(|| format!("cannot write the HTML report {}", path.display()))
            .map_err(Failure::run)?;
    }
    if let Some(path) = &a.gnuplot {
        std::fs::write(path, shootout_report::ab_gnuplot_tsv(result))
            .with_context(|| format!("cannot write -g file {}", path.display()))
            .map_err(Failure::run)?;
    }
    Ok(())
}

/// Why a load that ran to its end measured nothing, when not one request got a good
/// answer (the report is printed all the same; the exit status says it failed).
fn no_good_answer(c: &shootout_model::Counts) -> Option<String> {
    if c.ok > 0 {
        return None;
    }
    if c.completed == 0 {
        return Some(format!(
            "no request completed ({} in flight at the end): nothing was measured; give the server more time (-d, -s) or check the URL",
            c.aborted
        ));
    }
    let mut why = c.failures.to_string();
    if c.failures[FailureKind::Status] > 0 {
        let codes: Vec<String> = c.status.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        why.push_str(&format!("; status codes {}", codes.join(", ")));
    }
    Some(format!(
        "every request failed ({} of {}: {why}): check the URL and the server, or --expect-status if these answers are right",
        c.failed(),
        c.completed
    ))
}
