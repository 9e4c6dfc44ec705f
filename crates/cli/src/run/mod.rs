//! `shootout run PLAN.toml`: the shootout. Starts every contender (setup, start in its own
//! process group, wait until ready), verifies its answers to every workload before anything
//! is measured, warms it up, then measures each workload × load level × repetition as a
//! step — repetitions interleaved across contenders (A B A B) so drift spreads evenly —
//! sampling the contender's process tree all along. Every step is written to the store as
//! soon as it ends; the closing table is rendered from the store, never from memory.
//!
//! Ctrl-C (or SIGTERM) ends the step in progress (stored as interrupted), or a setup or
//! ready wait in progress, stops the contenders and exits 130; a step that had not begun
//! is not stored, and a contender with no stored step is `interrupted`, not `measured`.
//! A second Ctrl-C kills the contenders' processes and exits at once; the run stays
//! `running` until the next shootout marks it `abandoned` (see the `abandoned` module).
//! Whatever a contender or its setup started, daemons included, is stopped before the
//! run ends; the run records its owner and each contender's process marker so that a
//! later shootout can find what a killed one left.
//!
//! Layout: this file reads the flags and sets the run up (store, facts, run directory);
//! `plan_load` reads the plan, `dry_run` prints it; the [`Runner`](runner::Runner)
//! (`runner`, `measure`, with `bring_up` and `verify`) orchestrates the shootout through
//! the one seam with the world, the `executor` module's trait, which the unit tests
//! (`tests`) replace with a mock.

mod bring_up;
mod dry_run;
mod executor;
mod find_max;
mod measure;
mod plan_load;
mod runner;
#[cfg(test)]
mod tests;
mod verify;

use crate::gates::judge_cells;
use crate::output::{Failure, INTERRUPTED};
use crate::progress::Display;
use crate::stop::stop_flag;
use anyhow::{anyhow, Context};
use clap::Args;
use dry_run::dry_run;
use executor::Real;
use plan_load::{load_plan, Loaded};
use runner::Runner;
use shootout_harness::{current_owner, machine_facts, owner_prefix, version_of};
use shootout_model::plan::{Launch, Plan, Span};
use shootout_model::{LoadLevel, LoadSpec, MachineFacts, Pace, Protocol, RunStatus, Target};
use shootout_store::{NewRun, Store};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Flags of `shootout run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan file (TOML; every key is described in docs/plan.md).
    pub plan: PathBuf,
    /// Measure only these contenders (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Short steps for iterating: 1 s each, one repetition, 0.5 s warm-up, no cooldown;
    /// a capacity search's steps 5 s at most.
    #[arg(long, conflicts_with = "duration")]
    pub quick: bool,
    /// Every step lasts this long, stages included (e.g. `2m` for a full-length run of a
    /// plan whose defaults are short); warm-up, repetitions and cooldown stay as planned.
    #[arg(long, value_name = "DURATION", value_parser = step_duration)]
    pub duration: Option<Duration>,
    /// Validate the plan and print what would run; start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The store (SQLite).
    #[arg(long, value_name = "PATH", default_value = "shootout.db")]
    pub db: PathBuf,
    /// No live view of the step under way (shown only when stdout is a terminal).
    #[arg(long)]
    pub no_live: bool,
    /// Exit 3 when this holds for any contender × workload × level, e.g. p99>50ms,
    /// errors>0.1%, rps<20000, failed>0 (repeatable; added to the plan's fail_if). Judged
    /// after the run, on the stored results.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
    /// Serve live metrics for Prometheus at http://ADDR/metrics while the run goes, one
    /// series per contender × workload × level: a port (on 127.0.0.1), or ADDRESS:PORT
    /// (0.0.0.0:9464 to be scraped from elsewhere); instead of the plan's metrics_listen.
    #[arg(long, value_name = "ADDR", value_parser = crate::metrics::parse_listen)]
    pub metrics_listen: Option<std::net::SocketAddr>,
}

/// `--duration`: a duration string (`90s`, `2m`), more than zero.
fn step_duration(s: &str) -> Result<Duration, String> {
    match shootout_model::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("a step must last more than 0s (e.g. 30s, 2m)".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// The machine's facts, with each contender's version as its plan's `version` command
/// prints it (`None` without one, or when it fails: then, for a contender shootout
/// starts, the version of what listens on its port is asked once it is up).
fn facts(plan: &Plan, plan_dir: &Path) -> (MachineFacts, Vec<Option<String>>) {
    let machine = machine_facts();
    let plan_dir_abs = std::fs::canonicalize(plan_dir).unwrap_or_else(|_| plan_dir.to_path_buf());
    let cores = server_cores(plan).to_string();
    let versions: Vec<Option<String>> = plan
        .contenders
        .iter()
        .map(|c| {
            let cmd = c.version.as_ref()?;
            let cmd = shootout_model::plan::fill_placeholders(cmd, |name| match name {
                "plan_dir" => Some(plan_dir_abs.display().to_string()),
                "cores" => Some(cores.clone()),
                _ => None,
            });
            version_of(&cmd, &plan_dir_abs)
                .map_err(|why| {
                    say!(
                        "note: contender '{}': no version from `{cmd}`: {why}",
                        c.name
                    )
                })
                .ok()
        })
        .collect();
    (machine, versions)
}

/// `{cores}`: the CPUs the contenders may use (the plan's `server_cpus`, else every CPU
/// shootout may use).
pub(crate) fn server_cores(plan: &Plan) -> usize {
    plan.defaults
        .server_cpus
        .as_ref()
        .map_or_else(|| shootout_engine::sys::allowed_cpus().len(), Vec::len)
}

/// The CPUs to watch for other processes during the steps: the load's and the
/// contenders' when the plan pins both, else every CPU shootout may use (where either
/// may run).
fn watched_cpus(plan: &Plan) -> Vec<usize> {
    match (&plan.defaults.load_cpus, &plan.defaults.server_cpus) {
        (Some(load), Some(server)) => {
            let mut all: Vec<usize> = load.iter().chain(server).copied().collect();
            all.sort_unstable();
            all.dedup();
            all
        }
        _ => shootout_engine::sys::allowed_cpus(),
    }
}

/// Stops, when dropped, every process still carrying this shootout's marker: what
/// contenders and setups started that outlived their stop, however the run ends.
struct Sweep;

impl Drop for Sweep {
    fn drop(&mut self) {
        let left = shootout_harness::stop_marked(
            &owner_prefix(current_owner()),
            shootout_harness::INTERRUPT_GRACE,
        );
        if !left.is_empty() {
            let pids: Vec<String> = left.iter().map(|p| p.pid.to_string()).collect();
            say!(
                "stopped {} process(es) left by contenders or setups: {}",
                left.len(),
                pids.join(", ")
            );
        }
    }
}

/// The key of contender `index` (from 0): its position and its name made file-name safe,
/// so that names that clean up alike (`a/b`, `a_b`, `a b`) get their own `{tmp}`, logs
/// and process marker.
fn contender_key(index: usize, name: &str) -> String {
    format!("{}-{}", index + 1, slug(name))
}

/// Runs `shootout run`; returns the exit code.
pub fn run(a: RunArgs) -> Result<i32, Failure> {
    let Loaded {
        plan,
        text,
        dir: plan_dir,
        bodies,
    } = load_plan(&a)?;
    if a.dry_run {
        crate::output::emit(&dry_run(&plan))?;
        return Ok(0);
    }
    let board = std::sync::Arc::new(crate::metrics::Board::default());
    // Served until this function returns: the command's end. Before the store is
    // touched, so that a port taken leaves no run behind.
    let served = a
        .metrics_listen
        .or(plan.defaults.metrics_listen)
        .map(|addr| crate::metrics::start(addr, board.clone(), false))
        .transpose()
        .map_err(Failure::run)?;
    let mut store = Store::open(&a.db).map_err(Failure::run)?;
    crate::abandoned::reclaim(&a.db, &store);
    let (machine, versions) = facts(&plan, &plan_dir);
    let run_id = store
        .begin_run(&NewRun {
            name: &plan.name,
            plan_text: &text,
            plan_resolved: &resolved_json(&plan),
            machine: &machine,
            started: SystemTime::now(),
        })
        .map_err(Failure::run)?;
    store
        .record_owner(run_id, current_owner())
        .map_err(Failure::run)?;
    let run_dir = run_dir(&a.db, run_id)?;
    say!(
        "run {}: {} (logs in {})",
        run_id.0,
        plan.name,
        run_dir.display()
    );

    let _sweep = Sweep;
    let mut runner = Runner {
        exec: Real {
            stop: stop_flag(),
            // A step is shown live or not at all: the step lines say how each went.
            live: Display::choose(false, a.no_live) == Display::Live,
            metrics: served.as_ref().map(|_| board),
            watched: watched_cpus(&plan),
        },
        plan: &plan,
        bodies: &bodies,
        plan_dir: &plan_dir,
        run_dir: &run_dir,
        versions: &versions,
        store: &mut store,
        run_id,
    };
    let status = runner.run()?;
    // The blank line goes to stderr, after the progress: stdout is exactly `shootout report`.
    say!();
    let (table, stored) = crate::stored::run_table(&store, run_id).map_err(Failure::run)?;
    crate::output::emit(&table)?;
    let breached = judge(&plan, &stored);
    let faults = stored
        .steps
        .iter()
        .map(|s| s.result.counts.failures[shootout_model::FailureKind::GeneratorFault])
        .sum();
    let fault = crate::output::generator_fault(faults);
    if let Some(line) = &fault {
        say!("error: {line}");
    }
    Ok(match status {
        RunStatus::Interrupted => INTERRUPTED,
        RunStatus::Failed => 1,
        _ if fault.is_some() => 1,
        _ if breached => crate::output::THRESHOLD_FAILED,
        _ => 0,
    })
}

/// The run's directory of logs, `.shootout/run-ID` beside the store, made and absolute
/// (setups and commands run in the plan's directory).
fn run_dir(
    db: &Path,
    run_id: shootout_model::stored::RunId,
) -> Result<std::path::PathBuf, Failure> {
    let dir = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(".shootout")
        .join(format!("run-{}", run_id.0));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the run directory {}", dir.display()))
        .map_err(Failure::run)?;
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

/// Judges every stored cell by the thresholds of its contender (the plan's `fail_if` for
/// all, `--fail-if`, and the contender's own); says on stderr, one line each, which
/// thresholds failed; true if any.
fn judge(plan: &Plan, stored: &shootout_model::stored::StoredRun) -> bool {
    let per_contender: Vec<(&str, Vec<_>)> = plan
        .contenders
        .iter()
        .map(|c| {
            let mut all = plan.defaults.fail_if.clone();
            all.extend(c.fail_if.iter().cloned());
            (c.name.as_str(), all)
        })
        .collect();
    judge_cells(stored, |name| {
        per_contender
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[][..], |(_, t)| t.as_slice())
    })
}

fn describe(l: &Launch) -> String {
    match l {
        Launch::Url(u) => u.clone(),
        Launch::Command { command, .. } => command.clone(),
    }
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The load spec of contender `ci` on workload `wi` in one step (or warm-up, or
/// verification pass), spoken as [`Plan::wire`] says.
fn step_spec(
    plan: &Plan,
    ci: usize,
    wi: usize,
    body: &[u8],
    origin: &Origin,
    level: LoadLevel,
    span: Span,
) -> anyhow::Result<LoadSpec> {
    let w = &plan.workloads[wi];
    let wire = plan.wire(ci, wi);
    let base = origin_for(&origin.url, wire.protocol);
    // A call the contender's reflection resolved (its schema not in the plan).
    let (headers, body, expect) = match origin.reflected.get(wi).and_then(Option::as_ref) {
        Some(r) => {
            let mut expect = w.expect.clone();
            expect.grpc = Some(r.reply.clone());
            (r.headers.clone(), r.body.clone(), expect)
        }
        None => (w.headers.clone(), body.to_vec(), w.expect.clone()),
    };
    let mut target = Target::parse(&format!("{base}{}", w.path)).map_err(|e| anyhow!("{e}"))?;
    target.tls = origin.tls.clone();
    let (connections, pace, max_connections) = match level {
        LoadLevel::Concurrency { connections } => (connections, Pace::Closed, None),
        LoadLevel::Rate { rps, connections } => {
            (connections, Pace::Rate(rps), plan.max_connections)
        }
    };
    let (requests, duration) = match span {
        Span::Time(d) => (None, Some(d)),
        Span::Requests(n) => (Some(n), None),
    };
    LoadSpec::builder(target)
        .request(shootout_model::RequestSpec {
            method: w.method.clone(),
            headers,
            body,
            keepalive: true,
        })
        .expect(expect)
        .pipeline(wire.pipeline)
        .list(w.list.clone())
        .connections(connections)
        .max_connections(max_connections)
        .protocol(wire.protocol, wire.streams)
        .pace(pace)
        .arrival(w.arrival)
        .bound(requests, duration)
        .cpus(plan.defaults.load_cpus.clone())
        .available_cpus(shootout_engine::sys::allowed_cpus().len())
        .timeout(plan.defaults.timeout)
        .busy_poll(plan.busy_poll(wire.protocol))
        .ws_text(w.message.is_some())
        .ws_hold(w.hold)
        .ws_messages(w.message_list.clone())
        .journey(w.journeys.clone())
        .journey_connection(w.journey_connection)
        .build()
        .map_err(|e| anyhow!("{e}"))
}

/// Where a contender answers: its base URL (`http://127.0.0.1:PORT` for one shootout
/// starts, `https://…` when it has `tls`; its `url` for one already running) and how its
/// certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Origin {
    pub url: String,
    pub tls: shootout_model::TlsOptions,
    /// Each workload's gRPC call as the contender's server reflection resolved it, once
    /// it is up (`None`, or empty, where the plan names the schema).
    pub reflected: Vec<Option<plan_load::Reflected>>,
}

impl Origin {
    /// An origin at `url` checked as `tls` says, no call resolved yet.
    pub(super) fn new(url: String, tls: shootout_model::TlsOptions) -> Origin {
        Origin {
            url,
            tls,
            reflected: Vec::new(),
        }
    }

    /// A cleartext origin, or one checked with the system's roots.
    #[cfg(test)]
    pub(super) fn plain(url: &str) -> Origin {
        Origin::new(url.to_string(), Default::default())
    }
}

/// The origin a contender is spoken to at over `protocol`: its base URL (`http://…` for
/// one shootout starts, its `url` for one already running) with the scheme of the
/// protocol, `ws://` (`wss://` over TLS) for WebSocket and `http://` (`https://`) for HTTP,
/// so that one contender serves a plan's HTTP and WebSocket workloads alike.
fn origin_for(base_url: &str, protocol: Protocol) -> String {
    let ws = protocol == Protocol::WebSocket;
    let schemes = [("http://", "ws://"), ("https://", "wss://")];
    for (http, websocket) in schemes {
        let (from, to) = if ws {
            (http, websocket)
        } else {
            (websocket, http)
        };
        if let Some(rest) = base_url.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    base_url.to_string()
}

fn resolved_json(plan: &Plan) -> String {
    shootout_model::resolved::ResolvedPlan::of(plan).to_json()
}
