//! The measured phase of `shootout run`: warm-up, then every workload × level ×
//! repetition, contenders interleaved, each step stored as it ends.

use super::step_spec;
use super::Up;
use shootout_engine::Control;
use shootout_harness::Contender;
use shootout_model::plan::Plan;
use shootout_model::{ContenderStatus, LoadLevel, LoadSpec, RunResult, StepStatus};
use shootout_report::{terminal_line, terminal_text};
use shootout_store::{RunId, StepRecord, Store};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// The measured phase; returns true when Ctrl-C ended it.
pub(super) fn measure(
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
