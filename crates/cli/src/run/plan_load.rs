//! Reading the plan of `shootout run`: parse, filter (`--only`), shorten (`--quick`,
//! `--duration`), check the open-file limit, read the workloads' bodies.

use super::RunArgs;
use crate::output::Failure;
use anyhow::anyhow;
use shootout_model::messages::MessageList;
use shootout_model::plan::{self, GrpcWorkload, Plan, Span, Workload};
use shootout_model::spec::MAX_MESSAGE;
use shootout_model::{LoadLevel, Protocol};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A plan read from its file, filtered and checked.
pub(super) struct Loaded {
    pub(super) plan: Plan,
    /// The file's text, stored as given.
    pub(super) text: String,
    /// The plan file's directory.
    pub(super) dir: PathBuf,
    /// Each workload's body.
    pub(super) bodies: Vec<Vec<u8>>,
}

/// Loads, filters and checks the plan; reads the workloads' bodies.
pub(super) fn load_plan(a: &RunArgs) -> Result<Loaded, Failure> {
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
    let fail_if = crate::gates::parse_thresholds(&a.fail_if)?;
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
    narrow(&mut plan, a)?;
    let mut bodies = read_bodies(&plan, &dir)?;
    read_lists(&mut plan, &dir)?;
    read_grpc(&mut plan, &dir, &mut bodies)?;
    check_fail_if_steps(&plan, &fail_if, &a.plan)?;
    plan.defaults.fail_if.extend(fail_if);
    Ok(Loaded {
        plan,
        text,
        dir,
        bodies,
    })
}

/// Keeps the contenders of `--only`; shortens the steps as `--quick` or `--duration` say.
fn narrow(plan: &mut Plan, a: &RunArgs) -> Result<(), Failure> {
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
        // A quick look has no time to wait for level series or converged figures.
        d.warmup_auto = false;
        for w in &mut plan.workloads {
            w.until.clear();
        }
        d.repeat = 1;
        d.cooldown = Duration::ZERO;
        // A search's step waits at most a few seconds for its SLOs' answers.
        d.search_step_most = Some(shootout_model::plan::QUICK_SEARCH_STEP);
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
    Ok(())
}

/// Each `fail_if` threshold on a journey step (`step:NAME:`: the plan's, a contender's,
/// `--fail-if`'s) names a step of some workload's journeys (it judges the cells of those
/// workloads): checked before anything runs, the error naming the field, the steps there
/// are and the fix.
fn check_fail_if_steps(
    plan: &Plan,
    extra: &[shootout_model::threshold::Threshold],
    path: &Path,
) -> Result<(), Failure> {
    let journeys: Vec<_> = plan
        .workloads
        .iter()
        .filter_map(|w| Some((w.name.as_str(), w.journeys.as_ref()?)))
        .collect();
    let lists = [
        ("defaults.fail_if".to_string(), &plan.defaults.fail_if[..]),
        ("--fail-if".to_string(), extra),
    ]
    .into_iter()
    .chain(
        plan.contenders
            .iter()
            .map(|c| (format!("contender '{}': fail_if", c.name), &c.fail_if[..])),
    );
    for (field, thresholds) in lists {
        for t in thresholds {
            let Some(name) = &t.step else { continue };
            let missing: Vec<String> = journeys
                .iter()
                .filter_map(|(w, j)| {
                    let why = shootout_model::threshold::missing_step(&j.file, name)?;
                    Some(format!("workload '{w}' ({}): {why}", j.source))
                })
                .collect();
            if journeys.is_empty() {
                return Err(Failure::usage(anyhow!(
                    "{}: {field} {}: a step is a journey's, and no workload has journeys: give a workload journey = \"FILE\", or drop step:{name}:",
                    path.display(),
                    t.text
                )));
            }
            if missing.len() == journeys.len() {
                return Err(Failure::usage(anyhow!(
                    "{}: {field} {}: {}",
                    path.display(),
                    t.text,
                    missing.join("; ")
                )));
            }
        }
    }
    Ok(())
}

/// Reads each workload's request list (`requests`, relative to the plan's directory) into
/// the workload, checked as `--urls` lists are (paths only: each contender has its own
/// origin), and each WebSocket message list (`messages`) as `--ws-messages` lists are.
fn read_lists(plan: &mut Plan, dir: &Path) -> Result<(), Failure> {
    for w in &mut plan.workloads {
        if let Some(f) = &w.requests {
            let (path, text) = list_text(&w.name, "requests", dir, f)?;
            let list = crate::load::read_list(
                &path.display().to_string(),
                &text,
                &path,
                None,
                w.order,
                w.seed,
            )
            .map_err(|e| Failure::usage(anyhow!("workload '{}': {e}", w.name)))?;
            w.list = Some(list);
        }
        if let Some(f) = &w.messages {
            let (path, text) = list_text(&w.name, "messages", dir, f)?;
            let list = MessageList::parse(&path.display().to_string(), &text, w.order, w.seed)
                .map_err(|e| Failure::usage(anyhow!("workload '{}': messages {e}", w.name)))?;
            w.message_list = Some(list);
        }
        if let Some(f) = &w.journey {
            let path = plan::resolve(dir, f);
            // Its errors name the journey file and the line.
            let file = crate::journey::load(&path)?;
            w.journeys = Some(shootout_model::spec::Journeys {
                source: path.display().to_string(),
                seed: w.seed,
                file: std::sync::Arc::new(file),
            });
            // A search's SLO on a step names one of the file's steps.
            if let (Some(f), Some(j)) = (&w.find_max, &w.journeys) {
                crate::gates::steps_named(&f.slos, Some(j), "find_max slo")
                    .map_err(|e| Failure::usage(anyhow!("workload '{}': {}", w.name, e.error)))?;
            }
        }
    }
    Ok(())
}

/// The text of workload `name`'s list file `f` (its `key`, relative to the plan's
/// directory `dir`), read as `--urls` lists are, and its path.
fn list_text(name: &str, key: &str, dir: &Path, f: &Path) -> Result<(PathBuf, String), Failure> {
    let path = plan::resolve(dir, f);
    let text = crate::load::read_list_text(&path).map_err(|e| {
        Failure::usage(match e {
            crate::load::ListText::TooLarge => {
                anyhow!("workload '{name}': {key} {}: {e}", path.display())
            }
            e => anyhow!(
                "workload '{name}': cannot read {key} {}: {e} (paths are relative to the plan's directory)",
                path.display()
            ),
        })
    })?;
    Ok((path, text))
}

/// Each gRPC workload's call (`protocol = "grpc"`), resolved as `load`'s is: its schema
/// read (`proto` or `protoset`, relative to the plan's directory), its method found, its
/// `message` (or each of its list's) checked against the input type, `expect.json`
/// against the output type, its `stream` bounds against the method's shape; then the call's fields (gRPC's, then the workload's
/// `headers`; its `grpc-timeout` the plan's `timeout`), its body and its reply check. A
/// workload without `proto` or `protoset` is resolved at each contender's start, by its
/// server reflection ([`reflected`]).
fn read_grpc(plan: &mut Plan, dir: &Path, bodies: &mut [Vec<u8>]) -> Result<(), Failure> {
    let timeout = plan.defaults.timeout;
    for (w, body) in plan.workloads.iter_mut().zip(bodies) {
        let Some(g) = &w.grpc else { continue };
        if g.by_reflection() {
            continue;
        }
        let c = grpc_call(w, g, dir, timeout, None)?;
        w.headers = c.request.headers;
        *body = c.request.body;
        w.expect.grpc = Some(c.reply);
    }
    Ok(())
}

/// Workload `w`'s call `g`, resolved by `load`'s rules: its schema from `proto` or
/// `protoset` (relative to `dir`), or asked of `server`'s reflection; each error names the
/// workload and its key.
fn grpc_call(
    w: &Workload,
    g: &GrpcWorkload,
    dir: &Path,
    timeout: Duration,
    server: Option<crate::load::grpc::Server>,
) -> Result<crate::load::grpc::Call, Failure> {
    use crate::load::grpc::{call, Flags, PLAN_KEYS};
    let proto = g.proto.as_ref().map(|p| plan::resolve(dir, p));
    let protoset = g.protoset.as_ref().map(|p| plan::resolve(dir, p));
    let flags = Flags {
        names: &PLAN_KEYS,
        proto: proto.as_deref(),
        import_path: &[],
        protoset: protoset.as_deref(),
        message: g.message.as_deref(),
        file: None,
        messages: w.message_list.as_ref(),
        max_message: None,
        expect_json: g.expect_json.as_deref(),
        stream: crate::load::grpc::StreamFlags {
            messages: g.stream.messages,
            duration: g.stream.duration,
            interval: g.stream.interval,
            deadline: timeout,
            echo: w.expect.echo,
        },
        server,
        compress: g.compress,
    };
    call(&flags, &w.path, w.headers.clone(), timeout).map_err(|f| Failure {
        code: f.code,
        error: anyhow!("workload '{}': {:#}", w.name, f.error),
    })
}

/// A gRPC workload's call as a contender's server reflection resolved it: its fields,
/// its body and its reply check (what [`read_grpc`] writes into the plan for a workload
/// whose schema the plan names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reflected {
    /// gRPC's fields, then the workload's `headers`.
    pub headers: Vec<(String, String)>,
    /// The framed message (a client stream's messages).
    pub body: Vec<u8>,
    /// What a good reply is.
    pub reply: shootout_model::GrpcReply,
}

/// How long connecting to a contender's reflection service may take (`load`'s
/// `--connect-timeout` default).
const REFLECTION_CONNECT: Duration = Duration::from_secs(10);

/// Each workload's call resolved by the server reflection of the contender answering at
/// `url` (its certificate checked as `tls` says): `None` for the workloads that do not
/// ask for it. The error names the workload, what the reflection said, and how to give
/// the schema instead.
pub(super) fn reflected(
    plan: &Plan,
    url: &str,
    tls: &shootout_model::TlsOptions,
) -> Result<Vec<Option<Reflected>>, String> {
    let asks = |w: &Workload| w.grpc.as_ref().is_some_and(GrpcWorkload::by_reflection);
    if !plan.workloads.iter().any(asks) {
        return Ok(vec![None; plan.workloads.len()]);
    }
    let mut target = shootout_model::Target::parse(url).map_err(|e| e.to_string())?;
    target.tls = tls.clone();
    let timeout = plan.defaults.timeout;
    plan.workloads
        .iter()
        .map(|w| {
            let Some(g) = w.grpc.as_ref().filter(|g| g.by_reflection()) else {
                return Ok(None);
            };
            let server = crate::load::grpc::Server {
                target: &target,
                headers: &w.headers,
                connect_timeout: REFLECTION_CONNECT,
            };
            let c = grpc_call(w, g, Path::new("."), timeout, Some(server))
                .map_err(|f| format!("{:#}", f.error))?;
            Ok(Some(Reflected {
                headers: c.request.headers,
                body: c.request.body,
                reply: c.reply,
            }))
        })
        .collect()
}

/// Each workload's body: its `body_file` (relative to the plan's directory `dir`), its
/// `body`, its WebSocket `message`, or nothing.
fn read_bodies(plan: &Plan, dir: &Path) -> Result<Vec<Vec<u8>>, Failure> {
    let mut bodies = Vec::new();
    for w in &plan.workloads {
        let inline = w.body.as_ref().or(w.message.as_ref());
        bodies.push(match (&w.body_file, inline) {
            (Some(f), _) => {
                let path = plan::resolve(dir, f);
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
        let len = bodies.last().map_or(0, Vec::len);
        if w.protocol == Protocol::WebSocket && len > MAX_MESSAGE {
            return Err(Failure::usage(anyhow!(
                "workload '{}': body_file is {len} bytes, but a WebSocket message may be at most {MAX_MESSAGE} bytes (16 MiB): send a smaller file",
                w.name
            )));
        }
    }
    Ok(bodies)
}
