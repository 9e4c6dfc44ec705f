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

use crate::{stop_flag, Failure, INTERRUPTED};
use anyhow::{anyhow, Context};
use clap::Args;
use shootout_engine::Control;
use shootout_harness::{current_owner, owner_prefix, program_of, Contender, ContenderConfig};
use shootout_model::plan::{self, Launch, Plan, Span};
use shootout_model::{
    ContenderStatus, LoadLevel, LoadSpec, MachineFacts, Pace, RunResult, RunStatus, StepStatus,
    Target,
};
use shootout_report::{terminal_line, terminal_text};
use shootout_store::{ContenderId, ContenderRecord, NewRun, RunId, StepRecord, Store};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Flags of `shootout run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan file (TOML; every key is described in docs/plan.md).
    pub plan: PathBuf,
    /// Measure only these contenders (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Short steps for iterating: 1 s each, one repetition, 0.5 s warm-up, no cooldown.
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
}

/// `--duration`: a duration string (`90s`, `2m`), more than zero.
fn step_duration(s: &str) -> Result<Duration, String> {
    match shootout_model::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("a step must last more than 0s (e.g. 30s, 2m)".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// Requests of each verification pass: sequential, then concurrent.
const VERIFY_SEQUENTIAL: u64 = 20;
const VERIFY_CONCURRENT: (u64, usize) = (48, 8);

/// A contender that is up: where it answers, and its processes when shootout launched it.
struct Up {
    index: usize,
    id: ContenderId,
    base_url: String,
    process: Option<Contender>,
    /// Steps stored so far.
    steps: usize,
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
            eprintln!(
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

/// A plan read from its file, filtered and checked.
struct Loaded {
    plan: Plan,
    /// The file's text, stored as given.
    text: String,
    /// The plan file's directory.
    dir: PathBuf,
    /// Each workload's body.
    bodies: Vec<Vec<u8>>,
}

/// Loads, filters and checks the plan; reads the workloads' bodies.
fn load_plan(a: &RunArgs) -> Result<Loaded, Failure> {
    let text = std::fs::read_to_string(&a.plan).map_err(|e| {
        Failure::usage(anyhow!(
            "cannot read the plan {}: {e} (check the path)",
            a.plan.display()
        ))
    })?;
    let mut plan = plan::parse(
        &text,
        &a.plan.display().to_string(),
        &shootout_engine::sys::allowed_cpus(),
    )
    .map_err(Failure::usage)?;
    // Each connection is an open file: a level beyond the limit is refused now, not
    // found out after the contenders started.
    let most = plan.levels.iter().map(|l| match l.level {
        LoadLevel::Concurrency { connections } | LoadLevel::Rate { connections, .. } => connections,
    });
    if let Some(most) = most.max() {
        let needed = most as u64 + 64;
        let limit = shootout_engine::sys::raise_fd_limit(needed);
        if limit < needed {
            return Err(Failure::usage(anyhow!(
                "{}: {most} connections need about {needed} open files but the limit is {limit}: raise it (ulimit -n {needed}) or lower the load",
                a.plan.display()
            )));
        }
    }
    let dir = a.plan.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    if !a.only.is_empty() {
        for name in &a.only {
            if !plan.contenders.iter().any(|c| &c.name == name) {
                let names: Vec<_> = plan.contenders.iter().map(|c| c.name.as_str()).collect();
                return Err(Failure::usage(anyhow!(
                    "--only {name}: no contender has that name (the plan has: {})",
                    names.join(", ")
                )));
            }
        }
        plan.contenders.retain(|c| a.only.contains(&c.name));
    }
    if a.quick {
        let d = &mut plan.defaults;
        d.measure = Span::Time(Duration::from_secs(1));
        d.warmup = d.warmup.map(|_| Span::Time(Duration::from_millis(500)));
        d.repeat = 1;
        d.cooldown = Duration::ZERO;
        for l in &mut plan.levels {
            l.measure = None;
        }
    }
    if let Some(length) = a.duration {
        plan.defaults.measure = Span::Time(length);
        for l in &mut plan.levels {
            l.measure = None;
        }
    }
    let mut bodies = Vec::new();
    for w in &plan.workloads {
        bodies.push(match (&w.body_file, &w.body) {
            (Some(f), _) => {
                let path = plan::resolve(&dir, f);
                crate::load::read_body(&path).map_err(|e| {
                    Failure::usage(anyhow!(
                        "workload '{}': cannot read body_file {}: {e} (paths are relative to the plan's directory)",
                        w.name,
                        path.display()
                    ))
                })?
            }
            (None, Some(b)) => b.clone().into_bytes(),
            (None, None) => Vec::new(),
        });
    }
    Ok(Loaded {
        plan,
        text,
        dir,
        bodies,
    })
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
        crate::emit(&dry_run(&plan))?;
        return Ok(0);
    }
    let mut store = Store::open(&a.db).map_err(Failure::run)?;
    crate::abandoned::reclaim(&a.db, &store);
    let mut machine = machine_facts();
    let versions: Vec<Option<String>> = plan
        .contenders
        .iter()
        .map(|c| match &c.launch {
            Launch::Command { command, .. } => program_version(command),
            Launch::Url(_) => None,
        })
        .collect();
    for (c, v) in plan.contenders.iter().zip(&versions) {
        if let (Launch::Command { command, .. }, Some(v)) = (&c.launch, v) {
            if let Some(program) = program_of(command) {
                machine.versions.insert(program.to_string(), v.clone());
            }
        }
    }
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
    let run_dir =
        a.db.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .join(".shootout")
            .join(format!("run-{}", run_id.0));
    std::fs::create_dir_all(&run_dir)
        .with_context(|| format!("cannot create the run directory {}", run_dir.display()))
        .map_err(Failure::run)?;
    // Absolute: setup and commands run in the plan's directory.
    let run_dir = std::fs::canonicalize(&run_dir).unwrap_or(run_dir);
    eprintln!(
        "run {}: {} (logs in {})",
        run_id.0,
        plan.name,
        run_dir.display()
    );

    let stop = stop_flag();
    let _sweep = Sweep;
    let mut up = Vec::new();
    for (index, c) in plan.contenders.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let id = store
            .add_contender(
                run_id,
                &ContenderRecord {
                    name: &c.name,
                    command: &describe(&c.launch),
                    baseline: c.baseline,
                    status: ContenderStatus::Skipped,
                    detail: "not started yet",
                    version: versions[index].as_deref(),
                    stdout_log: None,
                    stderr_log: None,
                },
            )
            .map_err(Failure::run)?;
        if matches!(c.launch, Launch::Command { .. }) {
            let tag = shootout_harness::process_tag(&contender_key(index, &c.name));
            store.record_process_tag(id, &tag).map_err(Failure::run)?;
        }
        match bring_up(&plan, index, &plan_dir, &run_dir, &stop) {
            Ok((base_url, process)) => {
                let mut u = Up {
                    index,
                    id,
                    base_url,
                    process,
                    steps: 0,
                };
                match verify(&plan, &u, &bodies) {
                    Ok(()) => {
                        eprintln!("✓ {}: ready and verified at {}", c.name, u.base_url);
                        up.push(u);
                    }
                    Err(detail) => {
                        eprintln!(
                            "✗ {}: failed verification, not measured:\n{}",
                            terminal_line(&c.name),
                            terminal_text(&detail)
                        );
                        store
                            .update_contender(id, ContenderStatus::VerificationFailed, &detail)
                            .map_err(Failure::run)?;
                        if let Some(p) = u.process.take() {
                            p.stop(Duration::from_secs(5));
                        }
                    }
                }
            }
            Err((status, detail)) => {
                eprintln!("✗ {}: {}", terminal_line(&c.name), terminal_text(&detail));
                store
                    .update_contender(id, status, &detail)
                    .map_err(Failure::run)?;
            }
        }
        record_logs(&mut store, id, index, c, &run_dir).map_err(Failure::run)?;
    }

    let outcome = measure(&plan, &bodies, &mut store, run_id, &mut up, &stop);
    // Whoever is still up was measured: to the end, or until Ctrl-C (the run says which),
    // unless Ctrl-C came before its first step.
    let interrupted = matches!(outcome, Ok(true));
    for u in &up {
        let (status, detail) = match (u.steps, interrupted) {
            (0, true) => (
                ContenderStatus::Interrupted,
                "the run was interrupted before its first step",
            ),
            (_, true) => (
                ContenderStatus::Measured,
                "measured until the run was interrupted",
            ),
            (_, false) => (ContenderStatus::Measured, ""),
        };
        store
            .update_contender(u.id, status, detail)
            .map_err(Failure::run)?;
    }
    for u in up.iter_mut() {
        if let Some(p) = u.process.take() {
            p.stop(Duration::from_secs(5));
        }
    }
    let status = match &outcome {
        Ok(true) => RunStatus::Interrupted,
        Ok(false) if up.is_empty() => RunStatus::Failed,
        Ok(false) => RunStatus::Complete,
        Err(_) => RunStatus::Failed,
    };
    store
        .finish_run(run_id, status, SystemTime::now())
        .map_err(Failure::run)?;
    outcome.map_err(Failure::run)?;
    // The blank line goes to stderr, after the progress: stdout is exactly `shootout report`.
    eprintln!();
    crate::emit(&crate::ls::run_table(&store, run_id).map_err(Failure::run)?)?;
    Ok(match status {
        RunStatus::Interrupted => INTERRUPTED,
        RunStatus::Failed => 1,
        _ => 0,
    })
}

/// Records in the store the logs the harness captured of contender `c` (started by a
/// command), once it was started; a log that was never opened stays NULL.
fn record_logs(
    store: &mut Store,
    id: ContenderId,
    index: usize,
    c: &plan::Contender,
    run_dir: &Path,
) -> Result<(), shootout_store::StoreError> {
    if !matches!(c.launch, Launch::Command { .. }) {
        return Ok(());
    }
    let mut cfg = ContenderConfig::new(&c.name, "", 0, run_dir);
    cfg.key = contender_key(index, &c.name);
    let (stdout, stderr) = (cfg.log_path("stdout"), cfg.log_path("stderr"));
    store.set_contender_logs(
        id,
        stdout.exists().then_some(stdout.as_path()),
        stderr.exists().then_some(stderr.as_path()),
    )
}

/// The measured phase; returns true when Ctrl-C ended it.
fn measure(
    plan: &Plan,
    bodies: &[Vec<u8>],
    store: &mut Store,
    run_id: RunId,
    up: &mut Vec<Up>,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> anyhow::Result<bool> {
    let d = &plan.defaults;
    for (wi, w) in plan.workloads.iter().enumerate() {
        if let Some(warm) = d.warmup {
            for u in up.iter() {
                let spec = step_spec(
                    plan,
                    wi,
                    &bodies[wi],
                    &u.base_url,
                    plan.levels[0].level,
                    warm,
                )?;
                let r =
                    shootout_engine::run(&spec, &Control::with_stop(spec.threads, stop.clone()));
                if stop.load(Ordering::Relaxed) {
                    return Ok(true);
                }
                if let Ok(r) = r {
                    eprintln!(
                        "  warm-up {} · {}: {} requests",
                        plan.contenders[u.index].name, w.name, r.counts.completed
                    );
                }
            }
        }
        for level in &plan.levels {
            for rep in 1..=d.repeat {
                let mut i = 0;
                while i < up.len() {
                    // Nothing is stored for a step that never began.
                    if stop.load(Ordering::Relaxed) {
                        return Ok(true);
                    }
                    let u = &mut up[i];
                    let name = &plan.contenders[u.index].name;
                    let span = level.measure.unwrap_or(d.measure);
                    let spec = step_spec(plan, wi, &bodies[wi], &u.base_url, level.level, span)?;
                    let sampler = u
                        .process
                        .as_ref()
                        .map(|p| p.sampler(Duration::from_millis(100)));
                    let started = SystemTime::now();
                    let (result, died) = run_step(&spec, u.process.as_ref(), stop);
                    let resources = sampler.map(|s| s.stop()).unwrap_or_default();
                    let result = match result {
                        Ok(r) => r,
                        Err(e) => {
                            // The contender stopped answering between steps.
                            let detail = format!("{e}{}", tail(u));
                            eprintln!("✗ {}: {}", terminal_line(name), terminal_text(&detail));
                            store.update_contender(u.id, ContenderStatus::Crashed, &detail)?;
                            if let Some(p) = up.remove(i).process {
                                p.stop(Duration::from_secs(5));
                            }
                            continue;
                        }
                    };
                    let status = if died.is_some() {
                        StepStatus::ContenderDied
                    } else if result.interrupted && stop.load(Ordering::Relaxed) {
                        StepStatus::Interrupted
                    } else {
                        StepStatus::Complete
                    };
                    if status == StepStatus::Interrupted && result.counts.completed == 0 {
                        // Stopped before it measured anything: not a step.
                        return Ok(true);
                    }
                    store.record_step(&StepRecord {
                        run: run_id,
                        contender: u.id,
                        workload: &w.name,
                        level: level.level,
                        repetition: rep,
                        started,
                        ended: SystemTime::now(),
                        status,
                        result: &result,
                        resources: &resources,
                    })?;
                    if u.steps == 0 {
                        // Should shootout die now, the store already says it has steps.
                        store.update_contender(
                            u.id,
                            ContenderStatus::Measured,
                            "being measured",
                        )?;
                    }
                    u.steps += 1;
                    eprintln!(
                        "  {}",
                        step_line(name, &w.name, level.level, rep, d.repeat, &result)
                    );
                    if let Some(exit) = died {
                        let detail = format!("exited during a step ({exit}){}", tail(u));
                        eprintln!("✗ {}: {}", terminal_line(name), terminal_text(&detail));
                        store.update_contender(u.id, ContenderStatus::Crashed, &detail)?;
                        up.remove(i);
                        continue;
                    }
                    if stop.load(Ordering::Relaxed) {
                        return Ok(true);
                    }
                    i += 1;
                    cooldown(d.cooldown, stop);
                }
            }
        }
    }
    Ok(stop.load(Ordering::Relaxed))
}

fn tail(u: &Up) -> String {
    u.process
        .as_ref()
        .map(|p| p.stderr_tail(10))
        .filter(|t| !t.trim().is_empty())
        .map(|t| format!("; last lines of its stderr:\n{t}"))
        .unwrap_or_default()
}

/// Runs one step. The step stops early on Ctrl-C or as soon as the contender exits (a
/// watcher polls it every 50 ms), so a dead server does not turn the rest of the step into
/// connection failures. Returns the result and the contender's exit, if it exited.
fn run_step(
    spec: &LoadSpec,
    process: Option<&Contender>,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> (
    Result<RunResult, shootout_engine::EngineError>,
    Option<std::process::ExitStatus>,
) {
    let step_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = std::sync::atomic::AtomicBool::new(false);
    let control = Control::with_stop(spec.threads, step_stop.clone());
    std::thread::scope(|s| {
        let watcher = s.spawn(|| loop {
            if let Some(exit) = process.and_then(|p| p.exit_status()) {
                step_stop.store(true, Ordering::Relaxed);
                return Some(exit);
            }
            if stop.load(Ordering::Relaxed) {
                step_stop.store(true, Ordering::Relaxed);
            }
            if done.load(Ordering::Relaxed) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        });
        let result = shootout_engine::run(spec, &control);
        done.store(true, Ordering::Relaxed);
        let died = watcher.join().unwrap_or(None);
        (result, died)
    })
}

/// Waits out the cooldown, or less when Ctrl-C comes.
fn cooldown(d: Duration, stop: &std::sync::atomic::AtomicBool) {
    let end = Instant::now() + d;
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
}

/// Starts a contender and waits until it is ready; URL contenders are only checked.
/// Starts contender `index` and waits until it is ready (or returns the URL of one given
/// by URL). The port is chosen free, but another process may take it before the
/// contender binds it (a client's ephemeral port, a server started meanwhile): then the
/// start is tried again on a new port, at most [`PORT_TRIES`] times in all.
fn bring_up(
    plan: &Plan,
    index: usize,
    plan_dir: &Path,
    run_dir: &Path,
    stop: &AtomicBool,
) -> Result<(String, Option<Contender>), (ContenderStatus, String)> {
    let mut tries = 1;
    loop {
        match bring_up_once(plan, index, plan_dir, run_dir, stop) {
            Err((_, detail)) if tries < PORT_TRIES && port_was_taken(&detail) => {
                eprintln!(
                    "  {}: its port was taken before it could bind it; trying another",
                    plan.contenders[index].name
                );
                tries += 1;
            }
            other => return other,
        }
    }
}

/// Starts of a contender whose port was taken (see [`bring_up`]).
const PORT_TRIES: u32 = 3;

/// True when a contender's failure says its port was taken: the harness found something
/// answering there, or the server's error names EADDRINUSE (as Python, nginx, Apache and
/// most servers print it).
fn port_was_taken(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase();
    d.contains("address already in use")
        || d.contains("eaddrinuse")
        || d.contains("something already listens on")
}

fn bring_up_once(
    plan: &Plan,
    index: usize,
    plan_dir: &Path,
    run_dir: &Path,
    stop: &AtomicBool,
) -> Result<(String, Option<Contender>), (ContenderStatus, String)> {
    let c = &plan.contenders[index];
    let (command, cwd, env, setup, ready_path, ready_timeout, nofile) = match &c.launch {
        Launch::Url(url) => return Ok((url.clone(), None)),
        Launch::Command {
            command,
            cwd,
            env,
            setup,
            ready_path,
            ready_timeout,
            nofile,
        } => (command, cwd, env, setup, ready_path, ready_timeout, nofile),
    };
    let port = shootout_harness::free_port()
        .map_err(|e| (ContenderStatus::Exited, format!("no free port: {e}")))?;
    let key = contender_key(index, &c.name);
    let tmp = run_dir.join("tmp").join(&key);
    let _ = std::fs::create_dir_all(&tmp);
    let cores = plan
        .defaults
        .server_cpus
        .as_ref()
        .map_or_else(|| shootout_engine::sys::allowed_cpus().len(), Vec::len);
    let plan_dir_abs = std::fs::canonicalize(plan_dir).unwrap_or_else(|_| plan_dir.to_path_buf());
    let fill = |s: &str| {
        plan::fill_placeholders(s, |name| match name {
            "port" => Some(port.to_string()),
            "tmp" => Some(tmp.display().to_string()),
            "cores" => Some(cores.to_string()),
            "plan_dir" => Some(plan_dir_abs.display().to_string()),
            "run_dir" => Some(run_dir.display().to_string()),
            _ => None,
        })
    };
    let cfg = ContenderConfig {
        name: c.name.clone(),
        key,
        command: fill(command),
        cwd: Some(cwd.as_ref().map_or_else(
            || plan_dir_abs.clone(),
            |d| plan::resolve(&plan_dir_abs, Path::new(&fill(&d.to_string_lossy()))),
        )),
        env: env.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
        setup: setup.as_ref().map(|s| fill(s)),
        setup_timeout: Duration::from_secs(600),
        ready_host: "127.0.0.1".into(),
        port,
        ready_path: ready_path.clone(),
        ready_timeout: *ready_timeout,
        cpus: plan.defaults.server_cpus.clone(),
        log_dir: run_dir.to_path_buf(),
        nofile: *nofile,
    };
    if cfg.setup.is_some() {
        shootout_harness::run_setup(&cfg, stop)
            .map_err(|e| (e.contender_status(), e.to_string()))?;
    }
    let mut process = Contender::start(&cfg).map_err(|e| (e.contender_status(), e.to_string()))?;
    match process.wait_ready(stop) {
        Ok(took) => {
            eprintln!(
                "  {} ready after {:.1} s on port {port}",
                c.name,
                took.as_secs_f64()
            );
            Ok((format!("http://127.0.0.1:{port}"), Some(process)))
        }
        Err(e) => {
            process.stop(Duration::from_secs(2));
            Err((e.contender_status(), e.to_string()))
        }
    }
}

/// The load spec of one step (or warm-up, or verification pass).
fn step_spec(
    plan: &Plan,
    wi: usize,
    body: &[u8],
    base_url: &str,
    level: LoadLevel,
    span: Span,
) -> anyhow::Result<LoadSpec> {
    let w = &plan.workloads[wi];
    let target = Target::parse(&format!("{base_url}{}", w.path)).map_err(|e| anyhow!("{e}"))?;
    let mut spec = LoadSpec::new(target);
    spec.request.method = w.method.clone();
    spec.request.headers = w.headers.clone();
    spec.request.body = body.to_vec();
    spec.expect = w.expect.clone();
    let (connections, pace) = match level {
        LoadLevel::Concurrency { connections } => (connections, Pace::Closed),
        LoadLevel::Rate { rps, connections } => (connections, Pace::Rate(rps)),
    };
    spec.connections = connections;
    spec.pace = pace;
    (spec.requests, spec.duration) = match span {
        Span::Time(d) => (None, Some(d)),
        Span::Requests(n) => (Some(n), None),
    };
    if let Some(n) = spec.requests {
        spec.connections = spec.connections.min(n as usize);
    }
    let cpus = plan.defaults.load_cpus.clone();
    let threads = cpus
        .as_ref()
        .map_or_else(|| shootout_engine::sys::allowed_cpus().len(), Vec::len);
    spec.threads = threads.clamp(1, spec.connections);
    spec.cpus = cpus;
    spec.timeout = plan.defaults.timeout;
    Ok(spec)
}

/// Sends every workload sequentially, then concurrently; every answer must meet the
/// expectations. Returns what went wrong, with a sample answer.
fn verify(plan: &Plan, u: &Up, bodies: &[Vec<u8>]) -> Result<(), String> {
    let passes = [
        ("sequential", VERIFY_SEQUENTIAL, 1),
        ("concurrent", VERIFY_CONCURRENT.0, VERIFY_CONCURRENT.1),
    ];
    let mut problems = Vec::new();
    for (wi, w) in plan.workloads.iter().enumerate() {
        for (pass, n, c) in passes {
            let level = LoadLevel::Concurrency { connections: c };
            let spec = match step_spec(plan, wi, &bodies[wi], &u.base_url, level, Span::Requests(n))
            {
                Ok(s) => s,
                Err(e) => return Err(e.to_string()),
            };
            let r = match shootout_engine::run(&spec, &Control::new(spec.threads)) {
                Ok(r) => r,
                Err(e) => return Err(format!("workload '{}': {e}", w.name)),
            };
            if r.counts.failed() > 0 || r.counts.ok != n {
                problems.push(format!(
                    "  workload '{}' ({pass}, {n} requests on {c} connection{}): {}\n    one answer: {}",
                    w.name,
                    if c == 1 { "" } else { "s" },
                    failure_summary(&r),
                    sample_answer(&spec, &bodies[wi]),
                ));
                break;
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn failure_summary(r: &RunResult) -> String {
    let codes: Vec<String> = r
        .counts
        .status
        .iter()
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    format!(
        "{} ok, {} failed ({}); status codes {}",
        r.counts.ok,
        r.counts.failed(),
        r.counts.failures,
        if codes.is_empty() {
            "none".into()
        } else {
            codes.join(", ")
        }
    )
}

/// One answer to the workload's request, shown when verification fails: its status line
/// and the start of its body, so the user sees what the contender said instead.
fn sample_answer(spec: &LoadSpec, body: &[u8]) -> String {
    if spec.target.scheme == shootout_model::Scheme::Https {
        return "(not shown for https)".into();
    }
    let attempt = || -> std::io::Result<String> {
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(
            spec.target.host.as_str(),
            spec.target.port,
        ))?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        let mut req = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            spec.request.method, spec.target.path, spec.target.host_header
        );
        for (k, v) in &spec.request.headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        s.write_all(req.as_bytes())?;
        s.write_all(body)?;
        let mut buf = Vec::new();
        let _ = s.take(4096).read_to_end(&mut buf);
        let text = String::from_utf8_lossy(&buf);
        let status = text.lines().next().unwrap_or("(nothing)").to_string();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let body: String = body
            .chars()
            .take(200)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        Ok(format!("{status} | {}", body.trim()))
    };
    attempt().unwrap_or_else(|e| format!("(could not fetch one: {e})"))
}

fn step_line(
    contender: &str,
    workload: &str,
    level: LoadLevel,
    rep: u32,
    of: u32,
    r: &RunResult,
) -> String {
    let p99 = shootout_model::LatencySummary::of(&r.latency).p99;
    format!(
        "{contender} · {workload} · {level} · rep {rep}/{of}: {:.0} req/s, p99 {p99:.3} ms, {} failed{}",
        r.rps(),
        r.counts.failed(),
        if r.interrupted { " (interrupted)" } else { "" }
    )
}

/// The first line `PROGRAM --version` (or `-v`, as nginx wants) prints, within 2 s; `None`
/// when the program does not say.
fn program_version(command: &str) -> Option<String> {
    let program = program_of(command)?;
    ["--version", "-v"].iter().find_map(|flag| {
        let mut child = std::process::Command::new(program)
            .arg(flag)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            if let Some(st) = child.try_wait().ok()? {
                break st;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let out = child.wait_with_output().ok()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())?
            .chars()
            .take(120)
            .collect::<String>();
        status.success().then_some(line)
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

fn dry_run(plan: &Plan) -> String {
    let d = &plan.defaults;
    let mut out = format!("plan: {}\n\ncontenders:\n", plan.name);
    for (i, c) in plan.contenders.iter().enumerate() {
        let base = if i == plan.baseline() {
            " (baseline)"
        } else {
            ""
        };
        out.push_str(&format!("  {}{base}: {}\n", c.name, describe(&c.launch)));
    }
    out.push_str("\nworkloads:\n");
    for w in &plan.workloads {
        out.push_str(&format!(
            "  {}: {} {} (expect status {}{}{})\n",
            w.name,
            w.method,
            w.path,
            w.expect.status.describe(),
            w.expect
                .length
                .map_or(String::new(), |n| format!(", {n} bytes")),
            w.expect
                .body_contains
                .as_ref()
                .map_or(String::new(), |b| format!(
                    ", body containing {:?}",
                    String::from_utf8_lossy(b)
                )),
        ));
    }
    let span = |s: Span| match s {
        Span::Time(t) => format!("{:.1} s", t.as_secs_f64()),
        Span::Requests(n) => format!("{n} requests"),
    };
    // A stage's own length shows beside it; the others last `d.measure`.
    let levels: Vec<String> = plan
        .levels
        .iter()
        .map(|l| match l.measure {
            Some(m) => format!("{} ({})", l.level, span(m)),
            None => l.level.to_string(),
        })
        .collect();
    let per_level = plan.contenders.len() * plan.workloads.len() * d.repeat as usize;
    let steps = per_level * plan.levels.len();
    out.push_str(&format!(
        "\nload: {}\nsteps: {steps} ({} contenders × {} workloads × {} levels × {} repetitions), each {}, warm-up {}, cooldown {:.1} s\n",
        levels.join(", "),
        plan.contenders.len(),
        plan.workloads.len(),
        plan.levels.len(),
        d.repeat,
        if plan.levels.iter().all(|l| l.measure.is_some()) {
            "as its stage says".to_string()
        } else {
            span(d.measure)
        },
        d.warmup.map_or("none".into(), span),
        d.cooldown.as_secs_f64()
    ));
    let timed: Option<f64> = plan
        .levels
        .iter()
        .map(|l| match l.measure.unwrap_or(d.measure) {
            Span::Time(t) => Some(t.as_secs_f64() * per_level as f64),
            Span::Requests(_) => None,
        })
        .sum();
    if let Some(measuring) = timed {
        let total = measuring + d.cooldown.as_secs_f64() * steps as f64;
        out.push_str(&format!("about {total:.0} s of measurement\n"));
    }
    out
}

fn resolved_json(plan: &Plan) -> String {
    shootout_model::resolved::ResolvedPlan::of(plan).to_json()
}

/// Facts of this machine, read from /proc.
fn machine_facts() -> MachineFacts {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let mut versions = std::collections::BTreeMap::new();
    versions.insert(
        "shootout".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    );
    MachineFacts {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        memory_bytes,
        versions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_versions() {
        let v = program_version("python3 -m http.server {port}").unwrap();
        assert!(v.starts_with("Python 3."), "{v}");
        assert_eq!(program_version("no-such-program-here --serve"), None);
    }

    /// A taken port is recognised from what servers really print, and from the harness.
    #[test]
    fn a_taken_port_is_recognised() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let python = std::process::Command::new("python3")
            .args([
                "-c",
                &format!("import socket; socket.socket().bind(('127.0.0.1', {port}))"),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&python.stderr);
        assert!(port_was_taken(&stderr), "{stderr}");
        let harness = shootout_harness::HarnessError::PortInUse {
            name: "a".into(),
            addr: taken.local_addr().unwrap(),
        };
        assert!(port_was_taken(&harness.to_string()));
        assert!(port_was_taken(
            "nginx: [emerg] bind() to 127.0.0.1:8080 failed (98: Address already in use)"
        ));
        assert!(!port_was_taken(
            "contender `a` exited before it was ready (exit status: 1); ModuleNotFoundError"
        ));
    }
}
