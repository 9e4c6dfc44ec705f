//! The shootout's one seam with the world: [`Executor`], every action of the
//! [`Runner`](super::runner::Runner) that starts, loads, samples, stops or waits, and
//! [`Real`], the implementation that does them with the harness and the engine.
//!
//! The Runner decides what happens in which order and what is stored; an executor only
//! does what it is told and says how it went. The unit tests replace [`Real`] with a mock
//! that records the calls, so interleaving, crashes, Ctrl-C and retries are tested without
//! a process or a socket. The stop flag (Ctrl-C, SIGTERM) is read through the executor
//! too: [`Executor::stopped`].

use crate::metrics::{Board, Labels};
use crate::progress::{Display, Progress};
use shootout_analysis::capacity::{Ask, Ended, Searcher};
use shootout_engine::{Control, EngineError};
use shootout_harness::{Contender, ContenderConfig, CpuWatch, HarnessError, Idle, ListenWatch};
use shootout_model::plan::Plan;
use shootout_model::until::Condition;
use shootout_model::{LoadSpec, OtherLoad, ResourceSample, RunResult};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How one measured step went.
pub(super) struct StepRun {
    /// What the engine measured, or why it could not.
    pub result: Result<RunResult, EngineError>,
    /// The contender's exit, when it exited during the step.
    pub died: Option<ExitStatus>,
    /// The contender's processes sampled during the step (none for a contender given by URL).
    pub resources: Vec<ResourceSample>,
    /// What else ran on the step's CPUs, when `/proc/stat` could be read.
    pub other_load: Option<OtherLoad>,
    /// How a capacity search's step ended: its SLOs decided, plainly passed on the ramp,
    /// or its deadline; `None` for a sweep's step.
    pub ended: Option<Ended>,
}

/// What may end a step before its length.
#[derive(Clone, Copy)]
pub(super) enum Ends<'a> {
    /// A sweep's step: the plan's `until` conditions, once they all hold (after at least
    /// [`LEAST`](shootout_model::until::LEAST)); none: the step runs its length.
    Until(&'a [Condition]),
    /// A capacity search's step, after its least length: its SLOs decided, or on the ramp
    /// plainly passed ([`crate::until::search_watch`], as `load --find-max`'s steps).
    Search(&'a Searcher, Ask),
}

/// Every action of a shootout on the world, in the order the Runner calls them for one
/// contender: a free port, its setup, its start, the ready wait, its version, the verification passes
/// (and one sample answer if they fail), warm-ups and steps, cooldowns, its stop.
pub(super) trait Executor {
    /// A started contender's processes.
    type Process;
    /// True once Ctrl-C (or SIGTERM) asked the run to stop.
    fn stopped(&self) -> bool;
    /// A port that is free right now.
    fn free_port(&mut self) -> std::io::Result<u16>;
    /// Runs the contender's setup to its end (ends early when the run is stopped).
    fn setup(&mut self, cfg: &ContenderConfig) -> Result<(), HarnessError>;
    /// Starts the contender, without waiting for it.
    fn start(&mut self, cfg: &ContenderConfig) -> Result<Self::Process, HarnessError>;
    /// Waits until the contender answers; returns the time since its start.
    fn wait_ready(&mut self, process: &mut Self::Process) -> Result<Duration, HarnessError>;
    /// The version of what serves the contender (the program listening on its port), or
    /// why it is unknown.
    fn serving_version(&mut self, process: &Self::Process) -> Result<String, String>;
    /// Each workload's gRPC call resolved by the server reflection of the contender at
    /// `origin` where the plan names no schema (`None` for the others; nothing is asked
    /// when no workload needs it); the error says which workload and why.
    fn reflect(
        &mut self,
        plan: &Plan,
        origin: &super::Origin,
    ) -> Result<Vec<Option<super::plan_load::Reflected>>, String> {
        let url = super::origin_for(&origin.url, shootout_model::Protocol::Http2);
        super::plan_load::reflected(plan, &url, &origin.tls)
    }
    /// One verification pass (not ended by the stop flag: it is short).
    fn verify_pass(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError>;
    /// One answer to the spec's request, to show when verification failed.
    fn sample_answer(&mut self, spec: &LoadSpec, body: &[u8]) -> String;
    /// A warm-up (ends early when the run is stopped).
    fn warm_up(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError>;
    /// An automatic warm-up (`warmup = "auto"`): [`Executor::warm_up`] that ends once its
    /// per-second series are level, its result's `warm_up` saying when.
    fn warm_up_level(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError>;
    /// A measured step, sampling the contender's processes all along; ends early when
    /// the run is stopped or the contender exits. `title` names it in the live view,
    /// `labels` in the metrics (contender, workload, level). `idle` are the run's other
    /// contenders up meanwhile: their CPU time is counted apart from strangers'. The step
    /// ends sooner as `ends` says: `until`'s conditions all hold (its result saying how
    /// they went), or a search's SLOs are decided (its [`StepRun::ended`] saying how).
    fn step(
        &mut self,
        spec: &LoadSpec,
        process: Option<&Self::Process>,
        idle: &[&Self::Process],
        named: (String, Labels),
        ends: Ends,
    ) -> StepRun;
    /// The last lines the contender wrote to stderr.
    fn stderr_tail(&self, process: &Self::Process) -> String;
    /// Stops the contender's processes: SIGTERM, `grace`, then SIGKILL.
    fn stop(&mut self, process: Self::Process, grace: Duration);
    /// Kills what is left of a contender that exited by itself (SIGKILL, no grace).
    fn kill(&mut self, process: Self::Process);
    /// Waits `pause` between two steps, then until `contenders` are idle (a bounded
    /// time, [`shootout_harness::wait_idle`]), or less when the run is stopped.
    fn cooldown(&mut self, pause: Duration, contenders: &[&Self::Process]) -> Idle;
}

/// The executor of `shootout run`: the harness starts and stops contenders, the engine
/// loads them, the process-wide stop flag ends what it can.
pub(super) struct Real {
    /// Raised by Ctrl-C or SIGTERM.
    pub stop: Arc<AtomicBool>,
    /// Show each step in the live view.
    pub live: bool,
    /// Where `--metrics-listen` reads the steps from, if it was given.
    pub metrics: Option<Arc<Board>>,
    /// The CPUs watched for other processes during each step: the load's and the
    /// contenders' (every CPU shootout may use, unless both are pinned).
    pub watched: Vec<usize>,
}

impl Executor for Real {
    type Process = Contender;

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn free_port(&mut self) -> std::io::Result<u16> {
        shootout_harness::free_port()
    }

    fn setup(&mut self, cfg: &ContenderConfig) -> Result<(), HarnessError> {
        shootout_harness::run_setup(cfg, &self.stop)
    }

    fn start(&mut self, cfg: &ContenderConfig) -> Result<Contender, HarnessError> {
        Contender::start(cfg)
    }

    fn wait_ready(&mut self, process: &mut Contender) -> Result<Duration, HarnessError> {
        process.wait_ready(&self.stop)
    }

    fn serving_version(&mut self, process: &Contender) -> Result<String, String> {
        process.serving_version()
    }

    fn verify_pass(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError> {
        shootout_engine::run(spec, &Control::new(spec.threads))
    }

    fn sample_answer(&mut self, spec: &LoadSpec, body: &[u8]) -> String {
        shootout_harness::sample_answer(spec, body)
    }

    fn warm_up(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError> {
        shootout_engine::run(spec, &Control::with_stop(spec.threads, self.stop.clone()))
    }

    fn warm_up_level(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError> {
        let mut control = Control::with_stop(spec.threads, self.stop.clone());
        control.watch();
        crate::until::warm_up(spec, &control, true)
    }

    fn step(
        &mut self,
        spec: &LoadSpec,
        process: Option<&Contender>,
        idle: &[&Contender],
        (title, labels): (String, Labels),
        ends: Ends,
    ) -> StepRun {
        let sampler = process.map(|p| p.sampler(Duration::from_millis(100)));
        // A contender given by URL runs in processes that are not ours to count: its CPU
        // time cannot be told from the others'; steal still can.
        let watch = CpuWatch::start(&self.watched, process.is_some());
        let began = Instant::now();
        let idle_cpu =
            |samples: &[ResourceSample]| -> Duration { samples.iter().map(sample_cpu).sum() };
        let idle_before: Vec<ResourceSample> = idle.iter().map(|p| p.sample(began)).collect();
        // The contender runs here: the kernel's listen-queue counters are its, and so is
        // the accept queue of its port.
        let listen = process.map(|_| ListenWatch::start(crate::load::tcp_port(spec)));
        let display = if self.live {
            Display::Live
        } else {
            Display::Nothing
        };
        let metrics = self.metrics.as_deref().map(|b| (b, labels));
        let (mut result, died, ended) =
            run_step(spec, (process, &self.stop), (title, display), metrics, ends);
        if let Ok(r) = &mut result {
            r.listen = listen.and_then(ListenWatch::stop);
        }
        let resources = sampler.map(|s| s.stop()).unwrap_or_default();
        let idle_after: Vec<ResourceSample> = idle.iter().map(|p| p.sample(began)).collect();
        let idle_used: Duration = idle_cpu(&idle_after);
        let other_load = watch.stop(
            tree_cpu(&resources),
            idle_used.saturating_sub(idle_cpu(&idle_before)),
        );
        StepRun {
            result,
            died,
            resources,
            other_load,
            ended,
        }
    }

    fn stderr_tail(&self, process: &Contender) -> String {
        process.stderr_tail(10)
    }

    fn stop(&mut self, process: Contender, grace: Duration) {
        process.stop(grace);
    }

    fn kill(&mut self, process: Contender) {
        // Dropping an unstopped contender kills its processes and reaps them.
        drop(process);
    }

    fn cooldown(&mut self, pause: Duration, contenders: &[&Contender]) -> Idle {
        shootout_harness::wait_idle(contenders, pause, &self.stop)
    }
}

/// The CPU time (user and system) the contender's processes used between the first and
/// the last of `samples`.
fn tree_cpu(samples: &[ResourceSample]) -> Duration {
    match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => sample_cpu(b).saturating_sub(sample_cpu(a)),
        _ => Duration::ZERO,
    }
}

/// A sample's CPU time so far, user and system.
fn sample_cpu(s: &ResourceSample) -> Duration {
    s.cpu_user + s.cpu_sys
}

/// Runs one step. The step stops early on Ctrl-C or as soon as the contender exits (a
/// watcher polls it every 50 ms), so a dead server does not turn the rest of the step into
/// connection failures; with `until`'s conditions, once they hold ([`crate::until::watch`]);
/// a search's, once it is decided ([`crate::until::search_watch`]). Returns the result,
/// the contender's exit, if it exited, and how a search's step ended.
fn run_step(
    spec: &LoadSpec,
    (process, stop): (Option<&Contender>, &AtomicBool),
    (title, display): (String, Display),
    metrics: Option<(&Board, Labels)>,
    ends: Ends,
) -> (
    Result<RunResult, EngineError>,
    Option<ExitStatus>,
    Option<Ended>,
) {
    let step_stop = Arc::new(AtomicBool::new(false));
    let done = AtomicBool::new(false);
    let mut control = Control::with_stop(spec.threads, step_stop.clone());
    let until = match ends {
        Ends::Until(until) => until,
        Ends::Search(..) => &[],
    };
    if metrics.is_some() || !matches!(ends, Ends::Until([])) {
        control.watch();
    }
    let progress = Progress::start(control, spec, "step", title, display);
    let board = metrics.map(|(board, labels)| {
        board.begin(
            labels,
            progress.control.clone(),
            crate::progress::live::Names::of(spec),
        );
        board
    });
    let (result, died, ended) = std::thread::scope(|s| {
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
        let converging = (!until.is_empty())
            .then(|| s.spawn(|| crate::until::watch(&progress.control, until, &done)));
        let deciding = match ends {
            Ends::Search(searcher, ask) => {
                let (control, done) = (&progress.control, &done);
                let w = s.spawn(move || crate::until::search_watch(control, done, searcher, &ask));
                Some((w, searcher.at_deadline()))
            }
            Ends::Until(_) => None,
        };
        let mut result = shootout_engine::run(spec, &progress.control);
        if let Some(b) = board {
            b.end(result.as_ref().ok());
        }
        done.store(true, Ordering::Relaxed);
        let died = watcher.join().unwrap_or(None);
        let outcome = converging.and_then(|w| w.join().ok());
        if let Ok(r) = &mut result {
            r.until = outcome;
        }
        // Not ended by its watch before the load ended: its deadline passed.
        let ended = deciding.map(|(w, late)| w.join().ok().flatten().unwrap_or(late));
        (result, died, ended)
    });
    progress.finish();
    (result, died, ended)
}
