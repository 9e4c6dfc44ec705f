//! The measured phase of the [`Runner`]: for each workload, a warm-up of every contender
//! up, then every level × repetition × contender as a step — contenders interleaved (A B
//! A B) so that drift spreads evenly — each stored as soon as it ends, with a cooldown
//! after it. A contender that exits or stops answering is marked crashed and leaves the
//! sweep; the others go on. Ctrl-C ends the step in progress (stored as interrupted if it
//! measured anything); nothing is stored after it.

use super::executor::{Ends, Executor, StepRun};
use super::runner::{Runner, Up};
use super::step_spec;
use shootout_analysis::capacity::{Ask, Ended, Searcher, Verdict};
use shootout_model::find_max::SearchStep;
use shootout_model::plan::{Level, Span};
use shootout_model::{ContenderStatus, LoadLevel, LoadSpec, RunResult, StepStatus};
use shootout_report::{terminal_line, terminal_text};
use shootout_store::StepRecord;
use std::time::{Duration, SystemTime};

/// What comes after a step.
pub(super) enum Next {
    /// The next contender (after the cooldown).
    Go,
    /// The contender left the sweep: the next one takes its place, without a cooldown.
    Left,
    /// Ctrl-C: the measured phase ends.
    Stop,
}

impl<E: Executor> Runner<'_, E> {
    /// The measured phase; returns true when Ctrl-C ended it.
    pub(super) fn measure(&mut self, up: &mut Vec<Up<E::Process>>) -> anyhow::Result<bool> {
        let plan = self.plan;
        let d = &plan.defaults;
        // Step n of all: as planned when the phase begins (a contender that leaves
        // takes its steps with it, so the last step may come before the last number).
        let swept = plan.workloads.iter().filter(|w| w.find_max.is_none());
        let all = swept.count() * plan.levels.len() * d.repeat as usize * up.len();
        let mut n = 0;
        for wi in 0..plan.workloads.len() {
            if self.warm_up(wi, up)? {
                return Ok(true);
            }
            if let Some(find_max) = &plan.workloads[wi].find_max {
                if self.search(wi, find_max, up)? {
                    return Ok(true);
                }
                continue;
            }
            for level in &plan.levels {
                for rep in 1..=d.repeat {
                    let mut i = 0;
                    while i < up.len() {
                        // Nothing is stored for a step that never began.
                        if self.exec.stopped() {
                            return Ok(true);
                        }
                        n += 1;
                        let at = At {
                            level,
                            rep,
                            progress: format!("step {n} of {all}"),
                            search: None,
                        };
                        match self.step(wi, &at, up, i)?.0 {
                            Next::Go => {
                                i += 1;
                                self.rest(d.cooldown, up);
                            }
                            Next::Left => {}
                            Next::Stop => return Ok(true),
                        }
                    }
                }
            }
        }
        Ok(self.exec.stopped())
    }

    /// Warms up every contender up on workload `wi` (at the first level), if the plan
    /// says so; returns true when Ctrl-C came.
    fn warm_up(&mut self, wi: usize, up: &mut [Up<E::Process>]) -> anyhow::Result<bool> {
        let plan = self.plan;
        let Some(warm) = plan.defaults.warmup else {
            return Ok(false);
        };
        for u in up {
            let level = match &plan.workloads[wi].find_max {
                Some(f) => LoadLevel::Rate {
                    rps: f.from,
                    connections: f.connections,
                },
                None => plan.levels[0].level,
            };
            let spec = self.spec_of(u, wi, level, warm)?;
            let r = if plan.defaults.warmup_auto {
                self.exec.warm_up_level(&spec)
            } else {
                self.exec.warm_up(&spec)
            };
            if self.exec.stopped() {
                return Ok(true);
            }
            u.warmed = r.as_ref().ok().and_then(|r| r.warm_up);
            if let Ok(r) = r {
                say!(
                    "  warm-up {} · {}: {}",
                    plan.contenders[u.index].name,
                    plan.workloads[wi].name,
                    warm_up_words(&spec, &r)
                );
            }
        }
        Ok(false)
    }

    /// The load spec of contender `u` on workload `wi` at `level`, lasting `span`.
    pub(super) fn spec_of(
        &self,
        u: &Up<E::Process>,
        wi: usize,
        level: LoadLevel,
        span: Span,
    ) -> anyhow::Result<LoadSpec> {
        step_spec(
            self.plan,
            u.index,
            wi,
            &self.bodies[wi],
            &u.origin,
            level,
            span,
        )
    }

    /// Measures `up[i]` on workload `wi` as `at` says, and stores the step; with its
    /// result, verdict and how it ended when it was one of a search's and was judged (by
    /// the search).
    pub(super) fn step(
        &mut self,
        wi: usize,
        at: &At,
        up: &mut Vec<Up<E::Process>>,
        i: usize,
    ) -> anyhow::Result<(Next, Option<Judged>)> {
        let plan = self.plan;
        let (d, w) = (&plan.defaults, &plan.workloads[wi]);
        let (level, rep) = (at.level, at.rep);
        let u = &up[i];
        let name = &plan.contenders[u.index].name;
        let span = level.measure.unwrap_or(d.measure);
        let spec = self.spec_of(u, wi, level.level, span)?;
        let started = SystemTime::now();
        let StepRun {
            result,
            died,
            resources,
            other_load,
            ended,
        } = self.execute(&spec, at, wi, up, i);
        let u = &mut up[i];
        let mut result = match result {
            Ok(r) => r,
            Err(e) => return Ok((self.left_the_run(up, i, &e.to_string(), false)?, None)),
        };
        result.warm_up = u.warmed;
        shootout_analysis::load_warnings::refresh(&mut result, &spec);
        let status = step_status(died.is_some(), &result, self.exec.stopped());
        if status == StepStatus::Interrupted && result.counts.completed == 0 {
            // Stopped before it measured anything: not a step.
            return Ok((Next::Stop, None));
        }
        // A search's step is judged only when it ran its course.
        let complete = status == StepStatus::Complete;
        let ended = ended.filter(|_| complete);
        let search = at.search.map(|(f, _)| SearchStep {
            verdict: complete.then(|| f.judge(&result)),
            ended: ended.as_ref().map(Ended::stored),
        });
        self.store.record_step(&StepRecord {
            run: self.run_id,
            contender: u.id,
            workload: &w.name,
            level: level.level,
            repetition: rep,
            started,
            ended: SystemTime::now(),
            status,
            result: &result,
            resources: &resources,
            wire: spec.wire(),
            other_load,
            search: search.as_ref(),
        })?;
        self.count_step(u)?;
        let verdict = search.and_then(|s| s.verdict);
        let per_s = shootout_report::per_second(&spec, &result);
        let mut line = step_line(name, &w.name, (level.level, rep, d.repeat), &result, per_s);
        if let (Some(v), Some((f, _))) = (&verdict, at.search) {
            line.push_str(&search_words(f.slo(), v, ended.as_ref()));
        }
        say_step(line, other_load);
        if let Some(exit) = died {
            let why = format!("exited during a step ({exit})");
            return Ok((self.left_the_run(up, i, &why, true)?, None));
        }
        let next = if self.exec.stopped() {
            Next::Stop
        } else {
            Next::Go
        };
        Ok((next, verdict.map(|v| (result, v, ended))))
    }

    /// Runs the step `spec` of contender `up[i]` on workload `wi`, the other contenders
    /// idle, under a title that says where the run is.
    fn execute(
        &mut self,
        spec: &LoadSpec,
        at: &At,
        wi: usize,
        up: &[Up<E::Process>],
        i: usize,
    ) -> StepRun {
        let plan = self.plan;
        let (d, w, level) = (&plan.defaults, &plan.workloads[wi], at.level);
        let name = &plan.contenders[up[i].index].name;
        let title = format!(
            "{} · {} · {} · {} · rep {}/{}",
            at.progress,
            terminal_line(name),
            terminal_line(&w.name),
            level.level,
            at.rep,
            d.repeat
        );
        let idle: Vec<&E::Process> = up
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .filter_map(|(_, o)| o.process.as_ref())
            .collect();
        let ends = match at.search {
            Some((searcher, ask)) => Ends::Search(searcher, ask),
            None => Ends::Until(&w.until),
        };
        self.exec.step(
            spec,
            up[i].process.as_ref(),
            &idle,
            (title, labels(name, &w.name, level.level)),
            ends,
        )
    }

    /// The contender `up[i]` exited during a step (`died`: killed, whatever is left of it)
    /// or stopped answering between steps (stopped, with 5 s to go): it is reported as
    /// crashed, with `why` and its log's tail, and left out of the rest of the run.
    fn left_the_run(
        &mut self,
        up: &mut Vec<Up<E::Process>>,
        i: usize,
        why: &str,
        died: bool,
    ) -> anyhow::Result<Next> {
        let u = &mut up[i];
        let name = &self.plan.contenders[u.index].name;
        let detail = format!("{why}{}", self.tail(u));
        self.crashed(name, u, &detail)?;
        match up.remove(i).process {
            Some(p) if died => self.exec.kill(p),
            Some(p) => self.exec.stop(p, Duration::from_secs(5)),
            None => {}
        }
        Ok(Next::Left)
    }

    /// Counts a step of contender `u` stored; after its first, the store says it is being
    /// measured (should shootout die now, the store already says it has steps).
    fn count_step(&mut self, u: &mut Up<E::Process>) -> anyhow::Result<()> {
        if u.steps == 0 {
            self.store
                .update_contender(u.id, ContenderStatus::Measured, "being measured")?;
        }
        u.steps += 1;
        Ok(())
    }

    /// Says and stores that contender `u` crashed.
    fn crashed(
        &mut self,
        name: &str,
        u: &Up<E::Process>,
        detail: &str,
    ) -> Result<(), shootout_store::StoreError> {
        say!("✗ {}: {}", terminal_line(name), terminal_text(detail));
        self.store
            .update_contender(u.id, ContenderStatus::Crashed, detail)
    }

    /// The end of a crash's detail: the last lines of the contender's stderr, if any.
    fn tail(&self, u: &Up<E::Process>) -> String {
        u.process
            .as_ref()
            .map(|p| self.exec.stderr_tail(p))
            .filter(|t| !t.trim().is_empty())
            .map(|t| format!("; last lines of its stderr:\n{t}"))
            .unwrap_or_default()
    }
}

/// Where a step stands: its level (and length: a search step's deadline), its
/// repetition, its place in the run as the live view says it (`step 3 of 12`), and the
/// search it belongs to with what the search asked of it, if any.
pub(super) struct At<'p> {
    pub(super) level: &'p Level,
    pub(super) rep: u32,
    pub(super) progress: String,
    pub(super) search: Option<(&'p Searcher, Ask)>,
}

/// A search's step judged: what it measured, its verdict and how it ended.
pub(super) type Judged = (RunResult, Verdict, Option<Ended>);

/// The end of a search step's line: its verdict and how it ended, `: met (decided:
/// met — errors ≤ 0.0999% (95% upper bound) < 0.1%)`, in the words of `load
/// --find-max`'s step lines; `passed` for a rung that plainly passed.
fn search_words(slos: &[String], v: &Verdict, ended: Option<&Ended>) -> String {
    use shootout_report::capacity::{ended_words, verdict_words};
    let passed = v.met() && ended == Some(&Ended::Passed);
    let verdict = if passed {
        "passed".to_string()
    } else {
        verdict_words(slos, v)
    };
    match ended {
        Some(e) => format!(": {verdict} ({})", ended_words(slos, e)),
        None => format!(": {verdict}"),
    }
}

/// How a warm-up of `spec` went: `1200 requests in 2.0 s` (gRPC's calls, replies or
/// messages), with the failed and those still in flight at its end when there were any; a
/// warm-up that got no answer says so, and why that matters.
fn warm_up_words(spec: &LoadSpec, r: &RunResult) -> String {
    let c = &r.counts;
    let mut words = format!(
        "{} {} in {:.1} s",
        c.completed,
        shootout_report::counted_unit(spec, r).plural(),
        r.duration.as_secs_f64()
    );
    if c.failed() > 0 {
        words.push_str(&format!(", {} failed", c.failed()));
    }
    if c.aborted > 0 {
        words.push_str(&format!(", {} in flight at its end", c.aborted));
    }
    if let Some(w) = &r.warm_up {
        words.push_str(&crate::until::warm_up_words(w));
    }
    if c.ok == 0 {
        words.push_str(": ⚠ not one good answer, so the server was not warmed up (a longer warm-up, or a look at the server, before trusting the steps)");
    }
    words
}

/// A step's series in the metrics: its contender, workload and level.
fn labels(contender: &str, workload: &str, level: LoadLevel) -> crate::metrics::Labels {
    vec![
        ("contender", contender.to_string()),
        ("workload", workload.to_string()),
        ("level", level.to_string()),
    ]
}

/// Says how a step went (`line`) and, below, that the machine was not quiet, when it was not.
impl<E: Executor> Runner<'_, E> {
    /// The pause after a step: at least `pause`, then until every contender up is idle
    /// (the step's backlog must not run during the next contender's step, on CPUs they
    /// may share); a wait of a second or more past `pause` is said.
    pub(super) fn rest(&mut self, pause: Duration, up: &[Up<E::Process>]) {
        let contenders: Vec<&E::Process> = up.iter().filter_map(|u| u.process.as_ref()).collect();
        let idle = self.exec.cooldown(pause, &contenders);
        if self.exec.stopped() {
            return;
        }
        if idle.gave_up {
            say!(
                "  the contenders' processes still used {:.0}% of a CPU {:.1} s after the pause: the next step shares the CPUs with that work",
                idle.busy * 100.0,
                idle.more.as_secs_f64()
            );
        } else if idle.more >= Duration::from_secs(1) {
            say!(
                "  waited {:.1} s more for the contenders' processes to go idle (the last step's backlog)",
                idle.more.as_secs_f64()
            );
        }
    }
}

fn say_step(line: String, other_load: Option<shootout_model::OtherLoad>) {
    say!("  {line}");
    if let Some(o) = other_load.filter(shootout_analysis::quiet::not_quiet) {
        say!("    ⚠ {}", shootout_report::shootout::busy_text(&o, 1, 1));
    }
}

/// A step's line as it ends: its rate in `per_s` (`req/s`, or a gRPC workload's unit).
fn step_line(
    contender: &str,
    workload: &str,
    (level, rep, of): (LoadLevel, u32, u32),
    r: &RunResult,
    per_s: &str,
) -> String {
    let p99 = shootout_model::LatencySummary::of(&r.histograms.latency).p99;
    let until = match r.until.as_ref().map(|u| u.converged) {
        None => String::new(),
        Some(Some(at)) => format!(", converged after {:.1} s", at.as_secs_f64()),
        Some(None) if r.interrupted => String::new(),
        Some(None) => format!(", ⚠ did not converge in {:.1} s", r.duration.as_secs_f64()),
    };
    format!(
        "{contender} · {workload} · {level} · rep {rep}/{of}: {:.0} {per_s}, p99 {p99:.3} ms, {} failed{until}{}",
        r.rps(),
        r.counts.failed(),
        if r.interrupted { " (interrupted)" } else { "" }
    )
}

/// How a step ended: its contender died, Ctrl-C or SIGTERM stopped it (the run is
/// `stopped`), or it ran its course.
fn step_status(died: bool, result: &RunResult, stopped: bool) -> StepStatus {
    if died {
        StepStatus::ContenderDied
    } else if result.interrupted && stopped {
        StepStatus::Interrupted
    } else {
        StepStatus::Complete
    }
}

#[cfg(test)]
mod tests {
    use super::warm_up_words;
    use shootout_model::{FailureKind, LoadSpec, RunResult, Target};
    use std::time::{Duration, SystemTime};

    /// A warm-up that got no good answer says the server was not warmed up, rather than
    /// a bare `0 requests` that reads as a figure.
    #[test]
    fn a_warm_up_without_a_good_answer_says_so() {
        let spec = LoadSpec::new(Target::parse("http://127.0.0.1:1/").unwrap());
        let mut r = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_millis(500));
        r.counts.completed = 50;
        r.counts.ok = 50;
        assert_eq!(warm_up_words(&spec, &r), "50 requests in 0.5 s");
        // A gRPC server stream's warm-up counts its replies.
        let mut replies = r.clone();
        let stream = shootout_model::result::StreamStats::new("server");
        replies.stream = Some(Box::new(stream));
        assert_eq!(warm_up_words(&spec, &replies), "50 replies in 0.5 s");
        r.counts.ok = 0;
        r.counts.failures[FailureKind::Timeout] = 50;
        r.counts.aborted = 3;
        assert_eq!(
            warm_up_words(&spec, &r),
            "50 requests in 0.5 s, 50 failed, 3 in flight at its end: ⚠ not one good answer, so the server was not warmed up (a longer warm-up, or a look at the server, before trusting the steps)"
        );
        let nothing = RunResult::empty(SystemTime::UNIX_EPOCH, Duration::from_millis(500));
        assert!(warm_up_words(&spec, &nothing)
            .starts_with("0 requests in 0.5 s: ⚠ not one good answer"));
    }
}
