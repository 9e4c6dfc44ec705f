//! [`Runner`]: the shootout's orchestration, from the first contender's start to the
//! run's final status. Contenders are brought up one after the other (setup, start, ready
//! wait — again on a new port when its port was taken — then verification); the ones up
//! are measured (see the `measure` module); then every contender gets its final status,
//! every one still up is stopped and the run is finished.
//!
//! Seams: everything that touches processes, sockets, the clock or the stop flag goes
//! through an [`Executor`] ([`Real`](super::executor::Real) in `shootout run`, a mock in
//! the tests); the store is real and written as things happen, so that what a crash or
//! Ctrl-C leaves is what the store says.

use super::bring_up::{contender_config, contender_tls, NotUp, PORT_TRIES};
use super::executor::Executor;
use super::verify::verify;
use super::{contender_key, describe, Origin};
use crate::output::Failure;
use shootout_harness::ContenderConfig;
use shootout_model::plan::{self, Launch, Plan};
use shootout_model::{ContenderStatus, RunStatus};
use shootout_report::{tenths_secs, terminal_line, terminal_text};
use shootout_store::{ContenderId, ContenderRecord, RunId, Store};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A contender that is up: where it answers, and its processes when shootout launched it.
pub(super) struct Up<P> {
    /// Its index in the plan.
    pub index: usize,
    /// Its id in the store.
    pub id: ContenderId,
    /// Where it answers, e.g. `http://127.0.0.1:8080`, and how its certificate is checked.
    pub origin: Origin,
    /// Its processes (`None` for a contender given by URL).
    pub process: Option<P>,
    /// Steps stored so far.
    pub steps: usize,
    /// How the automatic warm-up on the workload being measured went (`warmup =
    /// "auto"`), stored with each of its steps; `None`: a fixed warm-up, or none.
    pub warmed: Option<shootout_model::WarmedUp>,
}

/// One shootout: a plan, what it runs on and where it is stored.
pub(super) struct Runner<'a, E: Executor> {
    /// Does what the Runner decides.
    pub exec: E,
    /// The plan (filtered and checked).
    pub plan: &'a Plan,
    /// Each workload's body.
    pub bodies: &'a [Vec<u8>],
    /// The plan file's directory (`{plan_dir}`, the contenders' default directory).
    pub plan_dir: &'a Path,
    /// The run's directory: logs and `{tmp}` directories (`{run_dir}`).
    pub run_dir: &'a Path,
    /// Each contender's version from its plan's `version` command (`None`: asked of what
    /// serves it once it is up).
    pub versions: &'a [Option<String>],
    /// Where every contender and step is stored as it comes.
    pub store: &'a mut Store,
    /// The run, begun in the store.
    pub run_id: RunId,
}

impl<E: Executor> Runner<'_, E> {
    /// Runs the shootout; returns the run's final status, as stored. A store error ends
    /// it at once (the run is then stored as failed when it can be).
    pub(super) fn run(&mut self) -> Result<RunStatus, Failure> {
        let mut up = Vec::new();
        for index in 0..self.plan.contenders.len() {
            if self.exec.stopped() {
                break;
            }
            if let Some(u) = self.admit(index).map_err(Failure::run)? {
                up.push(u);
            }
        }
        let outcome = self.measure(&mut up);
        self.finish(up, outcome)
    }

    /// Adds contender `index` to the store, brings it up and verifies it; returns it when
    /// it is up and verified (stopped otherwise, with its status stored).
    fn admit(
        &mut self,
        index: usize,
    ) -> Result<Option<Up<E::Process>>, shootout_store::StoreError> {
        let c = &self.plan.contenders[index];
        let id = self.store.add_contender(
            self.run_id,
            &ContenderRecord {
                name: &c.name,
                command: &describe(&c.launch),
                baseline: c.baseline,
                status: ContenderStatus::Skipped,
                detail: "not started yet",
                version: self.versions[index].as_deref(),
                stdout_log: None,
                stderr_log: None,
            },
        )?;
        if matches!(c.launch, Launch::Command { .. }) {
            let tag = shootout_harness::process_tag(&contender_key(index, &c.name));
            self.store.record_process_tag(id, &tag)?;
        }
        let admitted = match self.bring_up(index) {
            Ok((origin, process)) => {
                if let (Some(p), None) = (&process, &self.versions[index]) {
                    self.record_version(index, id, p)?;
                }
                self.verified(index, id, origin, process)?
            }
            Err(not_up) => {
                let detail = not_up.to_string();
                say!("✗ {}: {}", terminal_line(&c.name), terminal_text(&detail));
                self.store.update_contender(id, not_up.status(), &detail)?;
                None
            }
        };
        record_logs(self.store, id, index, c, self.run_dir)?;
        Ok(admitted)
    }

    /// Stores the version of what serves contender `index` (a plan's `version` command,
    /// when it gave one, is kept instead): the program that listens on its port, or
    /// `unknown (why)`, which a note says too.
    fn record_version(
        &mut self,
        index: usize,
        id: ContenderId,
        process: &E::Process,
    ) -> Result<(), shootout_store::StoreError> {
        let version = self.exec.serving_version(process).unwrap_or_else(|why| {
            say!(
                "note: contender '{}': version unknown: {}",
                terminal_line(&self.plan.contenders[index].name),
                terminal_text(&why)
            );
            format!("unknown ({why})")
        });
        self.store.set_contender_version(id, &version)
    }

    /// Verifies a contender that is up, its gRPC calls resolved first by its server
    /// reflection where the plan names no schema: returns it when it passed, else stores
    /// why and stops it.
    fn verified(
        &mut self,
        index: usize,
        id: ContenderId,
        mut origin: Origin,
        mut process: Option<E::Process>,
    ) -> Result<Option<Up<E::Process>>, shootout_store::StoreError> {
        let name = &self.plan.contenders[index].name;
        let checked = self.exec.reflect(self.plan, &origin).and_then(|r| {
            origin.reflected = r;
            verify(&mut self.exec, self.plan, index, &origin, self.bodies)
        });
        match checked {
            Ok(()) => {
                say!("✓ {name}: ready and verified at {}", origin.url);
                Ok(Some(Up {
                    index,
                    id,
                    origin,
                    process,
                    steps: 0,
                    warmed: None,
                }))
            }
            Err(detail) => {
                say!(
                    "✗ {}: failed verification, not measured:\n{}",
                    terminal_line(name),
                    terminal_text(&detail)
                );
                self.store
                    .update_contender(id, ContenderStatus::VerificationFailed, &detail)?;
                if let Some(p) = process.take() {
                    self.exec.stop(p, Duration::from_secs(5));
                }
                Ok(None)
            }
        }
    }

    /// Starts contender `index` and waits until it is ready (or returns the URL of one given
    /// by URL). The port is chosen free, but another process may take it before the
    /// contender binds it (a client's ephemeral port, a server started meanwhile): then the
    /// start is tried again on a new port, at most [`PORT_TRIES`] times in all.
    pub(super) fn bring_up(&mut self, index: usize) -> Result<(Origin, Option<E::Process>), NotUp> {
        if let Launch::Url(url) = &self.plan.contenders[index].launch {
            let tls = contender_tls(self.plan, index, None, self.plan_dir, self.run_dir);
            return Ok((Origin::new(url.clone(), tls), None));
        }
        let mut tries = 1;
        loop {
            match self.bring_up_once(index) {
                Err(NotUp::Harness(e)) if tries < PORT_TRIES && e.port_taken() => {
                    say!(
                        "  {}: its port was taken before it could bind it; trying another",
                        self.plan.contenders[index].name
                    );
                    tries += 1;
                }
                other => return other,
            }
        }
    }

    /// One start of contender `index` (started by a command) on a free port: its setup,
    /// its start, the wait until it is ready; what was started is stopped if it is not.
    fn bring_up_once(&mut self, index: usize) -> Result<(Origin, Option<E::Process>), NotUp> {
        let port = self.exec.free_port().map_err(NotUp::NoPort)?;
        let (cfg, config): (ContenderConfig, _) =
            contender_config(self.plan, index, port, self.plan_dir, self.run_dir)
                .expect("a contender given by URL is not started");
        if let Some((path, text)) = config {
            std::fs::write(&path, text).map_err(|e| NotUp::Config(path, e))?;
        }
        if cfg.setup.is_some() {
            self.exec.setup(&cfg).map_err(NotUp::Harness)?;
        }
        let mut process = self.exec.start(&cfg).map_err(NotUp::Harness)?;
        match self.exec.wait_ready(&mut process) {
            Ok(took) => {
                say!(
                    "  {} ready after {} on port {port}",
                    cfg.name,
                    tenths_secs(took)
                );
                let c = &self.plan.contenders[index];
                let scheme = if c.tls.is_some() { "https" } else { "http" };
                let tls = contender_tls(self.plan, index, Some(port), self.plan_dir, self.run_dir);
                let url = format!("{scheme}://127.0.0.1:{port}");
                Ok((Origin::new(url, tls), Some(process)))
            }
            Err(e) => {
                self.exec.stop(process, Duration::from_secs(2));
                Err(NotUp::Harness(e))
            }
        }
    }

    /// After the measured phase (`outcome`: true when Ctrl-C ended it): every contender
    /// still up gets its final status and is stopped, and the run is finished.
    fn finish(
        &mut self,
        mut up: Vec<Up<E::Process>>,
        outcome: anyhow::Result<bool>,
    ) -> Result<RunStatus, Failure> {
        // Whoever is still up was measured: to the end, or until Ctrl-C (the run says which),
        // unless Ctrl-C came before its first step.
        let interrupted = matches!(outcome, Ok(true));
        for u in &up {
            let (status, detail) = match (u.steps, interrupted) {
                (0, true) => (
                    ContenderStatus::Interrupted,
                    shootout_model::shootout::INTERRUPTED_BEFORE_FIRST,
                ),
                (_, true) => (
                    ContenderStatus::Measured,
                    "measured until the run was interrupted",
                ),
                (_, false) => (ContenderStatus::Measured, ""),
            };
            self.store
                .update_contender(u.id, status, detail)
                .map_err(Failure::run)?;
        }
        for u in up.iter_mut() {
            if let Some(p) = u.process.take() {
                self.exec.stop(p, Duration::from_secs(5));
            }
        }
        let status = match &outcome {
            Ok(true) => RunStatus::Interrupted,
            Ok(false) if up.is_empty() => RunStatus::Failed,
            Ok(false) => RunStatus::Complete,
            Err(_) => RunStatus::Failed,
        };
        self.store
            .finish_run(self.run_id, status, SystemTime::now())
            .map_err(Failure::run)?;
        outcome.map_err(Failure::run)?;
        Ok(status)
    }
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
