//! The [`Runner`] against a mock [`Executor`]: no process, no socket, no sleep. The mock
//! records every call and plays a script (a Ctrl-C during one call, a contender that
//! exits or stops answering during one, ports found taken); the store is a real one in
//! memory, read back to see what a user would see.

use super::bring_up::NotUp;
use super::executor::{Ends, Executor, StepRun};
use super::runner::Runner;
use shootout_analysis::capacity::{Ask, Ended, Searcher};
use shootout_analysis::decided::SoFar;
use shootout_engine::EngineError;
use shootout_harness::{ContenderConfig, HarnessError, Idle};
use shootout_model::plan::{self, Plan};
use shootout_model::{ContenderStatus, LoadLevel, LoadSpec, MachineFacts, RunResult, RunStatus};
use shootout_store::{NewRun, RunId, Store};
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, SystemTime};

/// 2 contenders × 2 workloads × 2 levels × 2 repetitions, with a setup, a warm-up and a
/// cooldown.
const PLAN: &str = r#"
name = "mock"
[defaults]
warmup = "1s"
requests = 100
repeat = 2
cooldown = "1s"

[[contender]]
name = "a"
command = "serve-a {port}"
setup = "make a"

[[contender]]
name = "b"
command = "serve-b {port}"
setup = "make b"

[[workload]]
name = "one"
path = "/one"

[[workload]]
name = "two"
path = "/two"

[load]
concurrency = [1, 2]
"#;

/// A started contender of the mock.
struct Proc {
    name: String,
}

/// The script the mock plays, and what it saw.
#[derive(Default)]
struct Mock {
    /// Every call, in order.
    calls: Vec<String>,
    /// The stop flag.
    stopped: bool,
    /// The call during which Ctrl-C comes (its first occurrence).
    ctrl_c_at: Option<&'static str>,
    /// Requests an interrupted step completed before it ended.
    completed_when_interrupted: u64,
    /// The step during which its contender exits.
    dies_at: Option<&'static str>,
    /// The step at which its contender no longer accepts connections.
    fails_at: Option<&'static str>,
    /// The contender whose answers are all wrong.
    wrong_answers: Option<&'static str>,
    /// Starts that find their port taken, per contender.
    ports_taken: HashMap<&'static str, u32>,
    /// The last port handed out.
    port: u16,
    /// Who was started on which port.
    names: HashMap<u16, String>,
    /// The live view's title of each step, in order.
    titles: Vec<String>,
    /// The metrics' labels of each step, in order.
    labels: Vec<crate::metrics::Labels>,
    /// What else ran on the CPUs, as every step's watch says.
    other_load: Option<shootout_model::OtherLoad>,
    /// The contender whose version cannot be found.
    no_version: Option<&'static str>,
    /// The config files found in place when each setup ran, as `NAME: TEXT`.
    configs: Vec<String>,
    /// The rate each contender holds: above it, its answers take 100 ms.
    capacity: HashMap<&'static str, f64>,
    /// The requests a step above its capacity leaves in flight (75 when not given).
    backlog: Option<u64>,
}

impl Mock {
    /// Records `call`; true (and the stop flag raised) when Ctrl-C comes during it.
    fn call(&mut self, call: String) -> bool {
        let now = self.ctrl_c_at == Some(call.as_str()) && !self.stopped;
        self.calls.push(call);
        self.stopped |= now;
        now
    }

    /// `NAME PATH`: whom a spec loads, and where.
    fn target(&self, spec: &LoadSpec) -> String {
        format!("{} {}", self.names[&spec.target.port], spec.target.path)
    }

    /// A result of `n` good answers, interrupted or not.
    fn result(n: u64, interrupted: bool) -> RunResult {
        let mut r = RunResult::empty(SystemTime::now(), Duration::from_secs(1));
        r.counts.completed = n;
        r.counts.ok = n;
        r.interrupted = interrupted;
        r
    }
}

/// How a search's step that measured `r` ends, as the live watch would find it at the
/// step's end ([`Searcher::ends`]): decided, or on the ramp plainly passed, or its
/// deadline.
fn end_of(searcher: &Searcher, ask: &Ask, r: &RunResult) -> Ended {
    // At its end a step counts no more answers than it has.
    let most = shootout_analysis::decided::Most::all(r.counts.completed);
    let so_far = SoFar {
        completed: r.counts.completed,
        failed: r.counts.failed(),
        latency: &r.histograms.latency,
        steps: &[],
        labels: &[],
        most: &most,
    };
    searcher
        .ends(ask, ask.length, &so_far, |_| 1.0)
        .unwrap_or_else(|| searcher.at_deadline())
}

impl Executor for Mock {
    type Process = Proc;

    fn stopped(&self) -> bool {
        self.stopped
    }

    fn free_port(&mut self) -> std::io::Result<u16> {
        self.port = self.port.max(40000) + 1;
        self.calls.push(format!("port {}", self.port));
        Ok(self.port)
    }

    fn setup(&mut self, cfg: &ContenderConfig) -> Result<(), HarnessError> {
        assert_eq!(
            cfg.setup.as_deref(),
            Some(format!("make {}", cfg.name).as_str())
        );
        let config = cfg.log_dir.join("tmp").join(&cfg.key).join("config");
        if let Ok(text) = std::fs::read_to_string(config) {
            self.configs.push(format!("{}: {text}", cfg.name));
        }
        if self.call(format!("setup {}", cfg.name)) {
            return Err(HarnessError::Interrupted {
                name: cfg.name.clone(),
                during: "its setup ran",
            });
        }
        Ok(())
    }

    fn start(&mut self, cfg: &ContenderConfig) -> Result<Proc, HarnessError> {
        assert_eq!(cfg.command, format!("serve-{} {}", cfg.name, cfg.port));
        self.names.insert(cfg.port, cfg.name.clone());
        if let Some(n) = self
            .ports_taken
            .get_mut(cfg.name.as_str())
            .filter(|n| **n > 0)
        {
            *n -= 1;
            self.call(format!("start {} :{} (taken)", cfg.name, cfg.port));
            return Err(HarnessError::PortInUse {
                name: cfg.name.clone(),
                addr: ([127, 0, 0, 1], cfg.port).into(),
            });
        }
        self.call(format!("start {} :{}", cfg.name, cfg.port));
        Ok(Proc {
            name: cfg.name.clone(),
        })
    }

    fn wait_ready(&mut self, p: &mut Proc) -> Result<Duration, HarnessError> {
        if self.call(format!("ready {}", p.name)) {
            return Err(HarnessError::Interrupted {
                name: p.name.clone(),
                during: "it was waited for to be ready",
            });
        }
        Ok(Duration::from_millis(300))
    }

    fn serving_version(&mut self, p: &Proc) -> Result<String, String> {
        if self.no_version == Some(p.name.as_str()) {
            return Err("nothing listens on port 1".into());
        }
        Ok(format!("serve-{} 1.0", p.name))
    }

    fn verify_pass(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError> {
        let n = spec.requests.unwrap();
        let c = spec.connections;
        self.call(format!("verify {} {n}x{c}", self.target(spec)));
        let mut r = Mock::result(n, false);
        if self.wrong_answers == Some(self.names[&spec.target.port].as_str()) {
            r.counts.ok = 0;
        }
        Ok(r)
    }

    fn sample_answer(&mut self, spec: &LoadSpec, _body: &[u8]) -> String {
        self.call(format!("answer {}", self.target(spec)));
        "HTTP/1.1 500 Oops".into()
    }

    fn warm_up(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError> {
        let now = self.call(format!("warm-up {}", self.target(spec)));
        Ok(Mock::result(if now { 3 } else { 50 }, now))
    }

    /// As [`Mock::warm_up`], level after 12 s.
    fn warm_up_level(&mut self, spec: &LoadSpec) -> Result<RunResult, EngineError> {
        let mut r = self.warm_up(spec)?;
        r.warm_up = Some(shootout_model::WarmedUp {
            took: std::time::Duration::from_secs(12),
            level: true,
        });
        Ok(r)
    }

    fn step(
        &mut self,
        spec: &LoadSpec,
        p: Option<&Proc>,
        idle: &[&Proc],
        (title, labels): (String, crate::metrics::Labels),
        ends: Ends,
    ) -> StepRun {
        // The others up, never the one measured.
        assert!(idle.iter().all(|o| Some(&o.name) != p.map(|p| &p.name)));
        self.titles.push(title);
        self.labels.push(labels);
        assert_eq!(p.map(|p| &p.name), Some(&self.names[&spec.target.port]));
        let call = format!("step {} c{}", self.target(spec), spec.connections);
        let (dies, fails) = (self.dies_at == Some(&call), self.fails_at == Some(&call));
        let interrupted = self.call(call);
        let result = if fails {
            Err(EngineError::Connect {
                target: format!("127.0.0.1:{}", spec.target.port),
                source: std::io::ErrorKind::ConnectionRefused.into(),
            })
        } else if interrupted {
            Ok(Mock::result(self.completed_when_interrupted, true))
        } else {
            let mut r = Mock::result(100, dies);
            let held = self.capacity.get(self.names[&spec.target.port].as_str());
            if let (Some(&held), shootout_model::Pace::Rate(rate)) = (held, spec.pace) {
                let latency_us = if rate > held { 100_000 } else { 1_000 };
                r.histograms.latency.record_n(latency_us, 100).unwrap();
                if rate > held {
                    // Above its capacity the server is left with a backlog: 75 requests
                    // in flight at 100 answered a second.
                    r.counts.aborted = self.backlog.unwrap_or(75);
                }
            }
            Ok(r)
        };
        let ended = match (ends, &result) {
            (Ends::Search(searcher, ask), Ok(r)) => Some(end_of(searcher, &ask, r)),
            _ => None,
        };
        StepRun {
            result,
            died: dies.then(|| ExitStatus::from_raw(9)),
            resources: Vec::new(),
            other_load: self.other_load,
            ended,
        }
    }

    fn stderr_tail(&self, p: &Proc) -> String {
        format!("{} says boom", p.name)
    }

    fn stop(&mut self, p: Proc, grace: Duration) {
        self.calls
            .push(format!("stop {} {}s", p.name, grace.as_secs()));
    }

    fn kill(&mut self, p: Proc) {
        self.calls.push(format!("kill {}", p.name));
    }

    /// The plan's 1 s is `cooldown`; another wait (after a search's failed step, or the
    /// plan's own) says how long.
    fn cooldown(&mut self, pause: Duration, _contenders: &[&Self::Process]) -> Idle {
        if pause == Duration::from_secs(1) {
            self.call("cooldown".into());
        } else {
            self.call(format!("cooldown {pause:?}"));
        }
        Idle {
            more: Duration::ZERO,
            busy: 0.0,
            gave_up: false,
        }
    }
}

/// What a run left: the mock's calls, the run's status, each contender's status and
/// detail, and each stored step as `CONTENDER WORKLOAD cCONNECTIONS rREP STATUS`.
struct Outcome {
    calls: Vec<String>,
    status: RunStatus,
    contenders: Vec<(String, ContenderStatus, String)>,
    steps: Vec<String>,
    titles: Vec<String>,
    labels: Vec<crate::metrics::Labels>,
    /// What else ran on the CPUs, as stored with each step.
    other_loads: Vec<Option<shootout_model::OtherLoad>>,
    /// The automatic warm-up stored with each step.
    warm_ups: Vec<Option<shootout_model::WarmedUp>>,
    /// Each contender's stored version.
    versions: Vec<Option<String>>,
    /// The config files each setup found (see [`Mock::configs`]).
    configs: Vec<String>,
}

impl Outcome {
    fn contender(&self, name: &str) -> (ContenderStatus, &str) {
        let c = self.contenders.iter().find(|c| c.0 == name).unwrap();
        (c.1, &c.2)
    }

    /// Every contender started (`start X :PORT`) is stopped or killed afterwards.
    fn all_stopped(&self) {
        for (i, call) in self.calls.iter().enumerate() {
            let Some(name) = call.strip_prefix("start ") else {
                continue;
            };
            let (name, port) = name.split_once(' ').unwrap();
            if port.ends_with("(taken)") {
                continue;
            }
            let stopped = self.calls[i..]
                .iter()
                .any(|c| c.starts_with(&format!("stop {name} ")) || *c == format!("kill {name}"));
            assert!(stopped, "{name} was never stopped: {:#?}", self.calls);
        }
    }
}

/// A directory of its own for one test (the run's `{tmp}` directories are made in it),
/// removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("shootout-runner-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn plan() -> Plan {
    plan::parse(PLAN, "plan.toml", &[0, 1]).unwrap()
}

fn run(mock: Mock) -> Outcome {
    let plan = plan();
    run_plan(&plan, mock)
}

fn run_plan(plan: &Plan, mock: Mock) -> Outcome {
    run_versioned(plan, mock, &vec![None; plan.contenders.len()])
}

/// A run with the versions the plan's `version` commands gave.
fn run_versioned(plan: &Plan, mock: Mock, versions: &[Option<String>]) -> Outcome {
    let dir = Scratch::new();
    let mut store = Store::open_in_memory().unwrap();
    let run_id = begin(&mut store);
    let mut runner = Runner {
        exec: mock,
        plan,
        bodies: &vec![Vec::new(); plan.workloads.len()],
        plan_dir: dir.path(),
        run_dir: dir.path(),
        versions,
        store: &mut store,
        run_id,
    };
    let status = runner.run().map_err(|f| f.error).unwrap();
    let calls = std::mem::take(&mut runner.exec.calls);
    let configs = std::mem::take(&mut runner.exec.configs);
    let titles = std::mem::take(&mut runner.exec.titles);
    let labels = std::mem::take(&mut runner.exec.labels);
    assert_eq!(store.run(run_id).unwrap().unwrap().status, status);
    let contenders = store.contenders(run_id).unwrap();
    let name_of = |id| &contenders.iter().find(|c| c.id == id).unwrap().name;
    let other_loads = store
        .steps(run_id)
        .unwrap()
        .iter()
        .map(|s| s.other_load)
        .collect();
    let warm_ups = store
        .steps(run_id)
        .unwrap()
        .iter()
        .map(|s| s.result.warm_up)
        .collect();
    let steps = store
        .steps(run_id)
        .unwrap()
        .iter()
        .map(|s| {
            let level = match s.level {
                LoadLevel::Concurrency { connections } => format!("c{connections}"),
                LoadLevel::Rate { rps, .. } => format!("@{rps}"),
            };
            let status = format!("{:?}", s.status).to_lowercase();
            let (c, w, r) = (name_of(s.contender), &s.workload, s.repetition);
            let verdict = s.search.as_ref().map_or(String::new(), |m| {
                let ended = m.ended.map_or(String::new(), |e| format!(" {}", e.word()));
                let verdict = m.verdict.as_ref().map_or("unjudged", |v| v.word());
                format!(" {verdict}{ended}")
            });
            format!("{c} {w} {level} r{r} {status}{verdict}")
        })
        .collect();
    Outcome {
        calls,
        status,
        contenders: contenders
            .iter()
            .map(|c| (c.name.clone(), c.status, c.detail.clone()))
            .collect(),
        steps,
        titles,
        labels,
        other_loads,
        warm_ups,
        versions: contenders.iter().map(|c| c.version.clone()).collect(),
        configs,
    }
}

fn begin(store: &mut Store) -> RunId {
    store
        .begin_run(&NewRun {
            name: "mock",
            plan_text: PLAN,
            plan_resolved: "{}",
            machine: &MachineFacts::default(),
            started: SystemTime::now(),
        })
        .unwrap()
}

/// The calls that bring contender `name` up on `port` and verify it.
fn bring_up(name: &str, port: u16) -> Vec<String> {
    let mut calls = vec![
        format!("port {port}"),
        format!("setup {name}"),
        format!("start {name} :{port}"),
        format!("ready {name}"),
    ];
    for w in ["/one", "/two"] {
        calls.push(format!("verify {name} {w} 20x1"));
        calls.push(format!("verify {name} {w} 48x8"));
    }
    calls
}

/// Every step of the plan, in the order measured, as stored.
fn all_steps() -> Vec<String> {
    let mut steps = Vec::new();
    for w in ["one", "two"] {
        for c in [1, 2] {
            for r in [1, 2] {
                for name in ["a", "b"] {
                    steps.push(format!("{name} {w} c{c} r{r} complete"));
                }
            }
        }
    }
    steps
}

#[test]
fn each_version_is_that_of_what_serves_unless_the_plan_says_or_unknown_with_why() {
    let out = run(Mock {
        no_version: Some("b"),
        ..Mock::default()
    });
    assert_eq!(
        out.versions,
        [
            Some("serve-a 1.0".to_string()),
            Some("unknown (nothing listens on port 1)".to_string())
        ]
    );
    // A plan's `version` command that answered is kept; the one that did not is asked.
    let out = run_versioned(
        &plan(),
        Mock::default(),
        &[Some("a 2.0 from the plan".into()), None],
    );
    assert_eq!(
        out.versions,
        [
            Some("a 2.0 from the plan".to_string()),
            Some("serve-b 1.0".to_string())
        ]
    );
}

#[test]
fn a_contenders_config_is_written_with_its_port_before_its_setup_at_each_start() {
    let text = PLAN.replace(
        "command = \"serve-a {port}\"",
        "command = \"serve-a {port}\"\nconfig = \"listen 127.0.0.1:{port}; pid {tmp}/pid; include {config}.d;\"",
    );
    let plan = plan::parse(&text, "plan.toml", &[0, 1]).unwrap();
    // Its first port is taken: the config of its second start names the second port.
    let out = run_plan(
        &plan,
        Mock {
            ports_taken: HashMap::from([("a", 1)]),
            ..Mock::default()
        },
    );
    assert_eq!(out.configs.len(), 2, "{:?}", out.configs);
    let (first, second) = (&out.configs[0], &out.configs[1]);
    assert!(
        first.starts_with("a: listen 127.0.0.1:40001; pid /"),
        "{first}"
    );
    assert!(
        second.starts_with("a: listen 127.0.0.1:40002; pid /"),
        "{second}"
    );
    assert!(second.ends_with("/tmp/1-a/config.d;"), "{second}");
    assert_eq!(out.status, RunStatus::Complete);
}

#[test]
fn contenders_are_interleaved_step_by_step_and_each_step_is_stored() {
    let out = run(Mock::default());
    let mut want = bring_up("a", 40001);
    want.extend(bring_up("b", 40002));
    #[rustfmt::skip]
    let measured = [
        "warm-up a /one", "warm-up b /one",
        "step a /one c1", "cooldown", "step b /one c1", "cooldown", // c1, rep 1
        "step a /one c1", "cooldown", "step b /one c1", "cooldown", // c1, rep 2
        "step a /one c2", "cooldown", "step b /one c2", "cooldown",
        "step a /one c2", "cooldown", "step b /one c2", "cooldown",
        "warm-up a /two", "warm-up b /two",
        "step a /two c1", "cooldown", "step b /two c1", "cooldown",
        "step a /two c1", "cooldown", "step b /two c1", "cooldown",
        "step a /two c2", "cooldown", "step b /two c2", "cooldown",
        "step a /two c2", "cooldown", "step b /two c2", "cooldown",
        "stop a 5s", "stop b 5s",
    ];
    want.extend(measured.iter().map(|s| s.to_string()));
    assert_eq!(out.calls, want);
    assert_eq!(out.steps, all_steps());
    assert_eq!(out.status, RunStatus::Complete);
    assert_eq!(out.contender("a"), (ContenderStatus::Measured, ""));
    assert_eq!(out.contender("b"), (ContenderStatus::Measured, ""));
}

#[test]
fn the_live_view_titles_each_step_with_its_place_in_the_sweep() {
    let out = run(Mock::default());
    assert_eq!(out.titles.len(), 16);
    assert_eq!(out.titles[0], "step 1 of 16 · a · one · c=1 · rep 1/2");
    assert_eq!(out.titles[3], "step 4 of 16 · b · one · c=1 · rep 2/2");
    assert_eq!(out.titles[15], "step 16 of 16 · b · two · c=2 · rep 2/2");
}

/// `warmup = "auto"`: each contender's warm-up on a workload is the automatic one, and
/// how it went (the mock's: level after 12 s) is stored with each of its steps; a fixed
/// warm-up stores none.
#[test]
fn an_automatic_warm_up_is_stored_with_each_step_after_it() {
    let auto = plan::parse(
        &PLAN.replace("warmup = \"1s\"", "warmup = \"auto\""),
        "plan.toml",
        &[0, 1],
    )
    .unwrap();
    let out = run_plan(&auto, Mock::default());
    let twelve = shootout_model::WarmedUp {
        took: Duration::from_secs(12),
        level: true,
    };
    assert_eq!(out.warm_ups.len(), 16);
    assert!(
        out.warm_ups.iter().all(|w| *w == Some(twelve)),
        "{:?}",
        out.warm_ups
    );
    assert!(run(Mock::default()).warm_ups.iter().all(Option::is_none));
}

#[test]
fn what_else_ran_on_the_cpus_is_stored_with_each_step() {
    let busy = shootout_model::OtherLoad {
        cpus: 2,
        others: Some(0.9),
        contenders: 0.0,
        interrupts: 0.0,
        steal: 0.0,
        load_avg: 2.0,
    };
    let out = run(Mock {
        other_load: Some(busy),
        ..Mock::default()
    });
    assert_eq!(out.other_loads.len(), 16);
    assert!(out.other_loads.iter().all(|o| *o == Some(busy)));
    // Not watched (`/proc/stat` unreadable): stored as unknown, not as quiet.
    let out = run(Mock::default());
    assert!(out.other_loads.iter().all(Option::is_none));
}

#[test]
fn each_step_is_labelled_for_the_metrics_by_contender_workload_and_level() {
    let out = run(Mock::default());
    let label = |i: usize| -> Vec<String> {
        out.labels[i]
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    };
    assert_eq!(out.labels.len(), 16);
    assert_eq!(label(0), ["contender=a", "workload=one", "level=c=1"]);
    // Repetitions of a cell share their labels: their counts add up in one series.
    assert_eq!(label(2), label(0));
    assert_eq!(label(15), ["contender=b", "workload=two", "level=c=2"]);
}

#[test]
fn a_contender_that_exits_mid_sweep_keeps_its_steps_and_the_others_go_on() {
    let out = run(Mock {
        dies_at: Some("step a /one c2"),
        ..Mock::default()
    });
    let mut want = all_steps();
    // Its step in progress is stored as such; none of its later steps is run.
    want[4] = "a one c2 r1 contenderdied".into();
    want.retain(|s| !s.starts_with("a ") || s.starts_with("a one c1") || s.contains("died"));
    assert_eq!(out.steps, want);
    let (status, detail) = out.contender("a");
    assert_eq!(status, ContenderStatus::Crashed);
    assert_eq!(
        detail,
        "exited during a step (signal: 9 (SIGKILL)); last lines of its stderr:\na says boom"
    );
    assert_eq!(out.contender("b"), (ContenderStatus::Measured, ""));
    assert_eq!(out.status, RunStatus::Complete);
    // What is left of it is killed at once, and nothing more is asked of it.
    let killed = out.calls.iter().position(|c| c == "kill a").unwrap();
    assert_eq!(out.calls[killed - 1], "step a /one c2");
    assert!(!out.calls[killed..].iter().any(|c| c.contains(" a ")));
    assert!(out.calls[killed..].contains(&"warm-up b /two".to_string()));
    out.all_stopped();
}

#[test]
fn a_contender_that_stops_answering_is_crashed_and_stopped_without_a_step() {
    let out = run(Mock {
        fails_at: Some("step b /two c1"),
        ..Mock::default()
    });
    let mut want = all_steps();
    want.retain(|s| !s.starts_with("b two"));
    assert_eq!(out.steps, want);
    let (status, detail) = out.contender("b");
    assert_eq!(status, ContenderStatus::Crashed);
    assert!(
        detail.starts_with("cannot connect to 127.0.0.1:40002")
            && detail.ends_with("; last lines of its stderr:\nb says boom"),
        "{detail}"
    );
    assert_eq!(out.contender("a"), (ContenderStatus::Measured, ""));
    assert_eq!(out.status, RunStatus::Complete);
    let stopped = out.calls.iter().position(|c| c == "stop b 5s").unwrap();
    assert_eq!(out.calls[stopped - 1], "step b /two c1");
    out.all_stopped();
}

#[test]
fn when_every_contender_crashes_the_run_failed() {
    let mut plan = plan();
    plan.contenders.truncate(1);
    let out = run_plan(
        &plan,
        Mock {
            dies_at: Some("step a /one c1"),
            ..Mock::default()
        },
    );
    assert_eq!(out.steps, ["a one c1 r1 contenderdied"]);
    assert_eq!(out.contender("a").0, ContenderStatus::Crashed);
    assert_eq!(out.status, RunStatus::Failed);
}

/// Each contender's name, status and detail.
type Statuses<'a> = &'a [(&'a str, ContenderStatus, &'a str)];

/// Ctrl-C during each phase: what was measured before is stored, nothing after; each
/// contender gets the status a user reads today; every contender started is stopped.
#[test]
fn ctrl_c_at_every_phase() {
    use ContenderStatus::{Interrupted, Measured};
    const BEFORE_FIRST: &str = "the run was interrupted before its first step";
    const UNTIL: &str = "measured until the run was interrupted";
    let steps = all_steps();
    #[rustfmt::skip]
    let cases: [(&str, &[String], Statuses); 6] = [
        // While b's setup runs: a, up and verified, is not measured.
        ("setup b", &[], &[
            ("a", Interrupted, BEFORE_FIRST),
            ("b", Interrupted, "contender `b`: the run was interrupted while its setup ran"),
        ]),
        // While b is waited for: b is stopped at once.
        ("ready b", &[], &[
            ("a", Interrupted, BEFORE_FIRST),
            ("b", Interrupted, "contender `b`: the run was interrupted while it was waited for to be ready"),
        ]),
        // During a's verification (which goes on: it is short): b is never added.
        ("verify a /two 20x1", &[], &[("a", Interrupted, BEFORE_FIRST)]),
        // During a warm-up: the steps of the first workload are kept.
        ("warm-up b /two", &steps[..8], &[("a", Measured, UNTIL), ("b", Measured, UNTIL)]),
        // During a cooldown: the step before it is kept.
        ("cooldown", &steps[..1], &[("a", Measured, UNTIL), ("b", Interrupted, BEFORE_FIRST)]),
        // During a step that measured nothing yet: it is no step.
        ("step b /one c2", &steps[..5], &[("a", Measured, UNTIL), ("b", Measured, UNTIL)]),
    ];
    for (at, want_steps, want_contenders) in cases {
        let out = run(Mock {
            ctrl_c_at: Some(at),
            ..Mock::default()
        });
        assert_eq!(out.status, RunStatus::Interrupted, "{at}");
        assert_eq!(out.steps, want_steps, "{at}");
        let got: Vec<_> = out
            .contenders
            .iter()
            .map(|(n, s, d)| (n.as_str(), *s, d.as_str()))
            .collect();
        assert_eq!(got, want_contenders, "{at}");
        out.all_stopped();
        // After the call that saw Ctrl-C, no step, setup or start is begun.
        let seen = out.calls.iter().position(|c| c == at).unwrap();
        let after = &out.calls[seen + 1..];
        assert!(
            !after
                .iter()
                .any(|c| ["step", "setup", "start", "port", "cooldown"]
                    .iter()
                    .any(|p| c.starts_with(p))),
            "{at}: {after:?}"
        );
    }
}

#[test]
fn ctrl_c_during_a_step_keeps_what_it_measured_as_interrupted() {
    let out = run(Mock {
        ctrl_c_at: Some("step b /one c2"),
        completed_when_interrupted: 10,
        ..Mock::default()
    });
    let mut want = all_steps()[..6].to_vec();
    want[5] = "b one c2 r1 interrupted".into();
    assert_eq!(out.steps, want);
    assert_eq!(out.status, RunStatus::Interrupted);
    assert_eq!(
        out.contender("b"),
        (
            ContenderStatus::Measured,
            "measured until the run was interrupted"
        )
    );
    assert_eq!(
        &out.calls[out.calls.len() - 3..],
        ["step b /one c2", "stop a 5s", "stop b 5s"]
    );
}

#[test]
fn a_taken_port_is_retried_on_a_new_port() {
    let out = run(Mock {
        ports_taken: HashMap::from([("a", 1)]),
        ..Mock::default()
    });
    assert_eq!(
        out.calls[..6],
        [
            "port 40001",
            "setup a",
            "start a :40001 (taken)",
            "port 40002",
            "setup a",
            "start a :40002"
        ]
    );
    assert_eq!(out.steps, all_steps());
    assert_eq!(out.contender("a"), (ContenderStatus::Measured, ""));
}

#[test]
fn a_port_taken_at_every_try_gives_up_with_the_typed_error() {
    let plan = plan();
    let dir = Scratch::new();
    let mut store = Store::open_in_memory().unwrap();
    let run_id = begin(&mut store);
    let mut runner = Runner {
        exec: Mock {
            ports_taken: HashMap::from([("a", 5)]),
            ..Mock::default()
        },
        plan: &plan,
        bodies: &[Vec::new(), Vec::new()],
        plan_dir: dir.path(),
        run_dir: dir.path(),
        versions: &[None, None],
        store: &mut store,
        run_id,
    };
    let Err(NotUp::Harness(e @ HarnessError::PortInUse { .. })) = runner.bring_up(0) else {
        panic!("not a taken port");
    };
    assert_eq!(e.contender_status(), ContenderStatus::Exited);
    let starts: Vec<_> = runner
        .exec
        .calls
        .iter()
        .filter(|c| c.starts_with("start"))
        .collect();
    assert_eq!(
        starts,
        [
            "start a :40001 (taken)",
            "start a :40002 (taken)",
            "start a :40003 (taken)"
        ]
    );
    // In a run, it is stored as exited, with the error; the other contender is measured.
    let out = run(Mock {
        ports_taken: HashMap::from([("a", 3)]),
        ..Mock::default()
    });
    let (status, detail) = out.contender("a");
    assert_eq!(status, ContenderStatus::Exited);
    assert!(
        detail.contains("something already listens on 127.0.0.1:40003"),
        "{detail}"
    );
    assert_eq!(out.contender("b"), (ContenderStatus::Measured, ""));
    assert_eq!(out.steps.len(), 8, "b's steps only: {:?}", out.steps);
    assert_eq!(out.status, RunStatus::Complete);
}

#[test]
fn a_contender_that_fails_verification_is_stopped_and_not_measured() {
    let out = run(Mock {
        wrong_answers: Some("a"),
        ..Mock::default()
    });
    let (status, detail) = out.contender("a");
    assert_eq!(status, ContenderStatus::VerificationFailed);
    assert!(detail.contains("one answer: HTTP/1.1 500 Oops"), "{detail}");
    // The first pass of each workload fails; the answer is asked for right after it.
    #[rustfmt::skip]
    let want = [
        "ready a", "verify a /one 20x1", "answer a /one", "verify a /two 20x1",
        "answer a /two", "stop a 5s", "port 40002",
    ];
    assert_eq!(out.calls[3..10], want);
    assert_eq!(out.contender("b"), (ContenderStatus::Measured, ""));
    assert_eq!(out.steps.len(), 8, "b's steps only: {:?}", out.steps);
    assert_eq!(out.status, RunStatus::Complete);
    out.all_stopped();
}

/// A plan whose workloads are each searched for capacity (`find_max`), as the mock runs it.
fn search_plan() -> Plan {
    plan::parse(&search_plan_text(), "plan.toml", &[0, 1]).unwrap()
}

/// The text of [`search_plan`].
fn search_plan_text() -> String {
    PLAN.replace("requests = 100", "duration = \"2s\"")
        .replace("repeat = 2", "repeat = 1")
        .replace(
            "concurrency = [1, 2]",
            "connections = 4\nfind_max = { slo = [\"p99<50ms\"], from = 100, to = 10000 }",
        )
}

/// Each contender's search advances a step at a time, contenders interleaved; each step
/// settles first (a warm-up not stored) and is stored with its verdict; the searches end
/// within 5 % of each contender's capacity.
#[test]
fn searches_interleave_settle_and_store_each_verdict() {
    let mut mock = Mock::default();
    mock.capacity.insert("a", 1_000.0);
    mock.capacity.insert("b", 3_000.0);
    let out = run_plan(&search_plan(), mock);
    assert_eq!(out.status, RunStatus::Complete);
    for (who, held) in [("a", 1_000.0), ("b", 3_000.0)] {
        for w in ["one", "two"] {
            let mine: Vec<(f64, &str)> = out
                .steps
                .iter()
                .filter(|s| s.starts_with(&format!("{who} {w} @")))
                .map(|s| {
                    let f: Vec<&str> = s.split(' ').collect();
                    (f[2][1..].parse().unwrap(), f[5])
                })
                .collect();
            let met = mine
                .iter()
                .filter(|s| s.1 == "met")
                .map(|s| s.0)
                .fold(0.0, f64::max);
            let broke = mine
                .iter()
                .filter(|s| s.1 == "broke")
                .map(|s| s.0)
                .fold(f64::INFINITY, f64::min);
            assert!(
                met <= held && held < broke && broke / met <= 1.05,
                "{who} {w}: {mine:?}"
            );
            // The other verdict words do not appear: the mock keeps every schedule.
            assert!(
                mine.iter().all(|s| s.1 == "met" || s.1 == "broke"),
                "{mine:?}"
            );
        }
    }
    // Interleaved: a, b, a, b … while both search.
    let first: Vec<&str> = out.titles[..4]
        .iter()
        .map(|t| if t.contains(" · a · ") { "a" } else { "b" })
        .collect();
    assert_eq!(first, ["a", "b", "a", "b"], "{:?}", &out.titles[..4]);
    assert!(
        out.titles[0].starts_with("capacity search step 1 · a · one · "),
        "{}",
        out.titles[0]
    );
    // Every step settles at its rate first: a warm-up of the same contender just before;
    // after it comes the plan's cooldown, or after a step that broke its SLO the wait for
    // its backlog (75 requests at the 100 a second it answered, doubled: 1.5 s).
    let stepped = out
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.starts_with("step "));
    for ((i, c), stored) in stepped.zip(&out.steps) {
        let target = c.trim_start_matches("step ").rsplit_once(' ').unwrap().0;
        assert_eq!(out.calls[i - 1], format!("warm-up {target}"), "before {c}");
        let want = if stored.contains(" broke") {
            "cooldown 1.5s"
        } else {
            "cooldown"
        };
        assert_eq!(out.calls[i + 1], want, "after {stored}");
    }
}

/// With no cooldown in the plan and every contender started (so the rest then waits
/// for them to go idle), the wait after a broken step is its backlog's drain alone, with
/// no 1 s floor: 10 requests left at the 100 a second it answered, doubled, 200 ms; a
/// met step is followed by no wait but the idle one.
#[test]
fn a_watched_search_waits_for_a_small_backlog_without_a_floor() {
    let mut mock = Mock::default();
    mock.capacity.insert("a", 1_000.0);
    mock.capacity.insert("b", 3_000.0);
    mock.backlog = Some(10);
    let text = search_plan_text().replace("cooldown = \"1s\"", "cooldown = \"0s\"");
    let out = run_plan(&plan::parse(&text, "plan.toml", &[0, 1]).unwrap(), mock);
    assert_eq!(out.status, RunStatus::Complete);
    let stepped = out
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.starts_with("step "));
    let mut broke = 0;
    for ((i, _), stored) in stepped.zip(&out.steps) {
        let want = if stored.contains(" broke") {
            broke += 1;
            "cooldown 200ms"
        } else {
            "cooldown 0ns"
        };
        assert_eq!(out.calls[i + 1], want, "after {stored}");
    }
    assert!(broke >= 4, "{:?}", out.steps);
}

/// `shootout load --find-max` and a plan's `find_max` drive one searcher: for the same
/// evidence (a server that holds 1,000 req/s, answering in 100 ms above it, as the mock
/// does) both take the same steps in the same order, each ending the same way (the
/// store keeps how), and find the same capacity.
#[test]
fn load_and_run_take_the_same_steps_for_the_same_evidence() {
    use shootout_analysis::capacity::Searcher;
    let held = 1_000.0;
    let mut mock = Mock::default();
    mock.capacity.insert("a", held);
    mock.capacity.insert("b", held);
    let plan = search_plan();
    let out = run_plan(&plan, mock);
    let run: Vec<(f64, String, String)> = out
        .steps
        .iter()
        .filter(|s| s.starts_with("a one @"))
        .map(|s| {
            let f: Vec<&str> = s.split(' ').collect();
            (
                f[2][1..].parse().unwrap(),
                f[5].to_string(),
                f[6].to_string(),
            )
        })
        .collect();
    let find_max = plan.workloads[0].find_max.clone().unwrap();
    let mut searcher = Searcher::new(&find_max, Duration::from_secs(2));
    let mut load = Vec::new();
    let stopped = crate::load::find_max::drive(
        &mut searcher,
        |_| false,
        |searcher, ask| {
            let mut r = Mock::result(100, false);
            let latency_us = if ask.rate > held { 100_000 } else { 1_000 };
            r.histograms.latency.record_n(latency_us, 100).unwrap();
            let ended = end_of(searcher, &ask, &r);
            Ok(Some((r, Some(ended), ())))
        },
        |_, m, ()| {
            let ended = m.ended.as_ref().map_or("", |e| e.stored().word());
            load.push((m.rate, m.verdict.word().to_string(), ended.to_string()));
        },
    )
    .unwrap_or_else(|f| panic!("{}", f.error));
    assert!(!stopped);
    assert!(run.len() > 5, "{run:?}");
    assert_eq!(load, run);
    // The ramp's rungs plainly passed, and were measured again in full where they bound
    // the capacity; the steps above it were decided broken.
    let ends = |word: &str| run.iter().filter(|s| s.2 == word).count();
    assert!(ends("passed") >= 3 && ends("decided_broke") >= 2, "{run:?}");
    assert!(
        run.iter().all(|s| s.2 != "passed" || s.0 <= held),
        "{run:?}"
    );
}

/// A plan whose search asks for the fixed rule (`step_end = "deadline"`) stores every
/// step as having run to its deadline (`full`): none decided early, none passed, though
/// the same evidence ends steps early by the default rule; and the stored plan says
/// which rule ran.
#[test]
fn a_search_by_the_fixed_rule_stores_every_step_in_full() {
    let capacity = |mock: &mut Mock| {
        mock.capacity.insert("a", 1_000.0);
        mock.capacity.insert("b", 1_000.0);
    };
    let fixed = search_plan_text().replace("to = 10000 }", "to = 10000, step_end = \"deadline\" }");
    let plan = plan::parse(&fixed, "plan.toml", &[0, 1]).unwrap();
    let mut mock = Mock::default();
    capacity(&mut mock);
    let out = run_plan(&plan, mock);
    assert_eq!(out.status, RunStatus::Complete);
    assert!(out.steps.len() > 10, "{:?}", out.steps);
    for s in &out.steps {
        assert!(
            s.ends_with(" met full") || s.ends_with(" broke full"),
            "{s}"
        );
    }
    let resolved = shootout_model::resolved::ResolvedPlan::of(&plan);
    let f = resolved.workloads[0].find_max.as_ref().unwrap();
    assert_eq!(f.step_end, shootout_model::find_max::EndRule::Deadline);
    // The default rule on the same evidence ends steps early.
    let mut mock = Mock::default();
    capacity(&mut mock);
    let out = run_plan(&search_plan(), mock);
    assert!(
        out.steps.iter().any(|s| s.ends_with(" passed")),
        "{:?}",
        out.steps
    );
    assert!(
        out.steps.iter().all(|s| !s.ends_with(" full")),
        "{:?}",
        out.steps
    );
}

/// Ctrl-C during a search's step keeps the steps before it, stores that step unjudged,
/// and ends the run interrupted.
#[test]
fn ctrl_c_during_a_search_keeps_its_steps_and_judges_none_it_cut() {
    let mut mock = Mock {
        ctrl_c_at: Some("step b /one c4"),
        completed_when_interrupted: 7,
        ..Mock::default()
    };
    mock.capacity.insert("a", 1_000.0);
    mock.capacity.insert("b", 1_000.0);
    let out = run_plan(&search_plan(), mock);
    assert_eq!(out.status, RunStatus::Interrupted);
    assert_eq!(
        out.steps,
        [
            "a one @100 r1 complete met passed",
            "b one @100 r1 interrupted unjudged"
        ]
    );
}

/// A contender's origin takes the scheme of the workload's protocol, TLS kept: one URL
/// contender serves HTTP and WebSocket workloads alike; a WebSocket step spec carries the
/// text message and the hold mode.
#[test]
fn a_websocket_step_is_spoken_to_the_ws_origin_of_any_contender_url() {
    use shootout_model::Protocol;
    let cases = [
        (
            "http://127.0.0.1:8080",
            Protocol::WebSocket,
            "ws://127.0.0.1:8080",
        ),
        ("https://h:1", Protocol::WebSocket, "wss://h:1"),
        (
            "ws://127.0.0.1:8080",
            Protocol::WebSocket,
            "ws://127.0.0.1:8080",
        ),
        (
            "ws://127.0.0.1:8080",
            Protocol::Http1,
            "http://127.0.0.1:8080",
        ),
        ("wss://h:1", Protocol::Http2, "https://h:1"),
        ("http://h:1", Protocol::Http1, "http://h:1"),
    ];
    for (base, protocol, want) in cases {
        assert_eq!(
            super::origin_for(base, protocol),
            want,
            "{base} {protocol:?}"
        );
    }
    let text = "name = \"t\"\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\n\
        [[workload]]\nname = \"echo\"\nprotocol = \"websocket\"\npath = \"/echo\"\nmessage = \"hé\"\n\
        [[workload]]\nname = \"held\"\nprotocol = \"websocket\"\npath = \"/\"\nhold = { ping = \"2s\" }\n\
        [load]\nconcurrency = [3]\n";
    let p = plan::parse(text, "plan.toml", &[0]).unwrap();
    let level = LoadLevel::Concurrency { connections: 3 };
    let span = plan::Span::Requests(5);
    let echo = super::step_spec(
        &p,
        0,
        0,
        "hé".as_bytes(),
        &super::Origin::plain("http://127.0.0.1:9"),
        level,
        span,
    )
    .unwrap();
    assert_eq!(echo.target.url, "ws://127.0.0.1:9/echo");
    assert_eq!(echo.protocol, Protocol::WebSocket);
    assert!(echo.ws_text);
    assert_eq!(echo.request.body, "hé".as_bytes());
    assert_eq!(echo.ws_hold, None);
    let held = super::step_spec(
        &p,
        0,
        1,
        &[],
        &super::Origin::plain("http://127.0.0.1:9"),
        level,
        span,
    )
    .unwrap();
    assert!(!held.ws_text);
    assert_eq!(held.ws_hold.map(|h| h.every), Some(Duration::from_secs(2)));
}

/// A journey workload's `journey_connection` reaches each step's load.
#[test]
fn a_journey_workload_s_connection_choice_reaches_its_steps() {
    let text = "name = \"t\"\n[[contender]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\n\
        [[workload]]\nname = \"users\"\njourney = \"j.toml\"\njourney_connection = \"new\"\n\
        [load]\nrate = [10]\n";
    let p = plan::parse(text, "plan.toml", &[0]).unwrap();
    let level = LoadLevel::Rate {
        rps: 10.0,
        connections: 1,
    };
    let spec = super::step_spec(
        &p,
        0,
        0,
        &[],
        &super::Origin::plain("http://127.0.0.1:9"),
        level,
        plan::Span::Requests(5),
    )
    .unwrap();
    assert_eq!(
        spec.journey_connection,
        shootout_model::JourneyConnection::New
    );
}
