//! The plan of a shootout: contenders (servers to launch, or URLs already serving),
//! workloads (requests and what a good answer is) and the load (a concurrency or rate
//! sweep, or JMeter-style stages). Parsed from TOML in two stages: serde reads the file
//! (unknown keys are errors), then [`parse`] validates it into a typed [`Plan`]. Every
//! error names the file, the line, the key and the fix. Placeholders such as `{port}` stay
//! in the strings; the CLI substitutes them when it runs the plan.

use crate::shootout::LoadLevel;
use crate::spec::Expectation;
use crate::status::StatusSet;
use crate::units::{parse_cpu_list, parse_duration};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// A plan that cannot be run, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PlanError {
    /// The plan file as given.
    pub file: String,
    /// 1-based line of the offending key or table.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// How long a phase lasts: a time or a number of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// This long.
    Time(Duration),
    /// This many requests.
    Requests(u64),
}

/// Settings every step shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    /// Warm-up before each contender × workload (not measured); `None`: none.
    pub warmup: Option<Span>,
    /// Length of each measured step.
    pub measure: Span,
    /// Repetitions per step, interleaved across contenders.
    pub repeat: u32,
    /// Pause between steps.
    pub cooldown: Duration,
    /// CPUs for the contenders' process trees.
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs for shootout's load threads.
    pub load_cpus: Option<Vec<usize>>,
    /// Per-request deadline.
    pub timeout: Duration,
}

/// How a contender is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// shootout starts it.
    Command {
        /// Shell command; `{port}`, `{tmp}`, `{cores}`, `{plan_dir}` are substituted.
        command: String,
        /// Working directory, relative to the plan's directory.
        cwd: Option<PathBuf>,
        /// Extra environment variables (placeholders substituted).
        env: BTreeMap<String, String>,
        /// Shell command run before the start.
        setup: Option<String>,
        /// Path polled until it answers.
        ready_path: String,
        /// How long readiness may take.
        ready_timeout: Duration,
        /// Open-file limit to give it.
        nofile: Option<u64>,
    },
    /// Already running at this base URL (`http://127.0.0.1:8080`).
    Url(String),
}

/// One server under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contender {
    /// Unique name.
    pub name: String,
    /// How it runs.
    pub launch: Launch,
    /// The 100% of comparisons.
    pub baseline: bool,
}

/// One kind of request and what its answers must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// Unique name.
    pub name: String,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body file, relative to the plan's directory.
    pub body_file: Option<PathBuf>,
    /// Inline body.
    pub body: Option<String>,
    /// What every answer must meet.
    pub expect: Expectation,
}

/// One level of the load, with its own length when staged.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Connections, or rate and connections.
    pub level: LoadLevel,
    /// Overrides the default measured length (stages).
    pub measure: Option<Span>,
}

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Title.
    pub name: String,
    /// Shared settings.
    pub defaults: Defaults,
    /// Servers, in plan order.
    pub contenders: Vec<Contender>,
    /// Requests, in plan order.
    pub workloads: Vec<Workload>,
    /// Load levels, in order.
    pub levels: Vec<Level>,
}

impl Plan {
    /// The baseline contender's index (the one marked, else the first).
    pub fn baseline(&self) -> usize {
        self.contenders.iter().position(|c| c.baseline).unwrap_or(0)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePlan {
    name: String,
    defaults: Option<FileDefaults>,
    #[serde(default)]
    contender: Vec<Spanned<FileContender>>,
    #[serde(default)]
    workload: Vec<Spanned<FileWorkload>>,
    load: Spanned<FileLoad>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileDefaults {
    warmup: Option<Spanned<toml::Value>>,
    duration: Option<Spanned<String>>,
    requests: Option<Spanned<u64>>,
    repeat: Option<Spanned<u32>>,
    cooldown: Option<Spanned<String>>,
    server_cpus: Option<Spanned<String>>,
    load_cpus: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileContender {
    name: String,
    command: Option<String>,
    url: Option<Spanned<String>>,
    cwd: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    setup: Option<String>,
    ready: Option<FileReady>,
    #[serde(default)]
    baseline: bool,
    nofile: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileReady {
    path: Option<String>,
    timeout: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWorkload {
    name: String,
    #[serde(default = "default_method")]
    method: String,
    #[serde(default = "default_path")]
    path: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body_file: Option<String>,
    body: Option<String>,
    expect: Option<Spanned<FileExpect>>,
}

fn default_method() -> String {
    "GET".into()
}
fn default_path() -> String {
    "/".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileExpect {
    status: Option<toml::Value>,
    body_contains: Option<String>,
    length: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLoad {
    concurrency: Option<Vec<usize>>,
    rate: Option<Vec<f64>>,
    connections: Option<usize>,
    stages: Option<Vec<FileStage>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileStage {
    concurrency: usize,
    duration: String,
}

/// Parses and validates a plan's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Plan, PlanError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let err = |offset: usize, message: String| PlanError {
        file: file.to_string(),
        line: line_of(offset),
        message,
    };
    let raw: FilePlan = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        err(
            offset,
            format!(
                "{} (see docs/plan.md for every key)",
                e.message().trim_end()
            ),
        )
    })?;

    let d = raw.defaults.unwrap_or_default();
    let d = &d;
    let dur = |v: &Option<Spanned<String>>,
               key: &str,
               default: Duration|
     -> Result<Duration, PlanError> {
        match v {
            None => Ok(default),
            Some(s) => parse_duration(s.get_ref())
                .map_err(|e| err(s.span().start, format!("defaults.{key}: {e}"))),
        }
    };
    let cpus = |v: &Option<Spanned<String>>, key: &str| -> Result<Option<Vec<usize>>, PlanError> {
        v.as_ref()
            .map(|s| {
                parse_cpu_list(s.get_ref()).ok_or_else(|| {
                    err(s.span().start, format!("defaults.{key} = \"{}\" is not a CPU list: write e.g. \"1\" or \"0,2-3\"", s.get_ref()))
                })
            })
            .transpose()
    };
    let measure = match (&d.duration, &d.requests) {
        (Some(s), Some(_)) => {
            return Err(err(
                s.span().start,
                "defaults: give either duration or requests, not both".into(),
            ))
        }
        (_, Some(n)) if *n.get_ref() == 0 => {
            return Err(err(
                n.span().start,
                "defaults.requests must be at least 1".into(),
            ))
        }
        (_, Some(n)) => Span::Requests(*n.get_ref()),
        (s, None) => Span::Time(dur(s, "duration", Duration::from_secs(10))?),
    };
    let warmup = match &d.warmup {
        None => Some(Span::Time(Duration::from_secs(2))),
        Some(v) => match v.get_ref() {
            toml::Value::Integer(0) => None,
            toml::Value::Integer(n) if *n > 0 => Some(Span::Requests(*n as u64)),
            toml::Value::String(s) => match parse_duration(s) {
                Ok(d) if d.is_zero() => None,
                Ok(d) => Some(Span::Time(d)),
                Err(e) => {
                    return Err(err(
                        v.span().start,
                        format!("defaults.warmup: {e} (or a request count)"),
                    ))
                }
            },
            _ => {
                return Err(err(
                    v.span().start,
                    "defaults.warmup: write a duration (\"5s\") or a request count (1000)".into(),
                ))
            }
        },
    };
    let repeat = d.repeat.as_ref().map_or(Ok(3), |r| {
        if *r.get_ref() == 0 {
            Err(err(
                r.span().start,
                "defaults.repeat must be at least 1".into(),
            ))
        } else {
            Ok(*r.get_ref())
        }
    })?;
    let defaults = Defaults {
        warmup,
        measure,
        repeat,
        cooldown: dur(&d.cooldown, "cooldown", Duration::from_secs(1))?,
        server_cpus: cpus(&d.server_cpus, "server_cpus")?,
        load_cpus: cpus(&d.load_cpus, "load_cpus")?,
        timeout: dur(&d.timeout, "timeout", Duration::from_secs(30))?,
    };

    if raw.contender.is_empty() {
        return Err(err(
            0,
            "the plan has no [[contender]]: add at least one server to measure".into(),
        ));
    }
    let mut contenders = Vec::new();
    for c in &raw.contender {
        let at = c.span().start;
        let c = c.get_ref();
        let name = c.name.trim().to_string();
        if name.is_empty() {
            return Err(err(at, "a contender has an empty name: give it one".into()));
        }
        if contenders.iter().any(|x: &Contender| x.name == name) {
            return Err(err(
                at,
                format!("two contenders are named '{name}': names must be unique"),
            ));
        }
        let launch = match (&c.command, &c.url) {
            (Some(_), Some(_)) => {
                return Err(err(at, format!("contender '{name}' has both command and url: a contender is either launched (command) or already running (url)")))
            }
            (None, None) => {
                return Err(err(at, format!("contender '{name}' has neither command nor url: give the command that starts it, or the url where it runs")))
            }
            (None, Some(url)) => {
                let u = url.get_ref();
                if !(u.starts_with("http://") || u.starts_with("https://")) {
                    return Err(err(url.span().start, format!("contender '{name}': url '{u}' must start with http:// or https://")));
                }
                if c.cwd.is_some() || c.setup.is_some() || !c.env.is_empty() {
                    return Err(err(at, format!("contender '{name}' has a url: cwd, env and setup apply only to launched contenders")));
                }
                Launch::Url(u.trim_end_matches('/').to_string())
            }
            (Some(command), None) => {
                if !command.contains("{port}") {
                    return Err(err(at, format!("contender '{name}': the command must listen on {{port}} (a free port shootout chooses), e.g. \"python3 -m http.server {{port}} --bind 127.0.0.1\"")));
                }
                let ready = c.ready.as_ref();
                let ready_timeout = match ready.and_then(|r| r.timeout.as_ref()) {
                    None => Duration::from_secs(20),
                    Some(t) => parse_duration(t.get_ref())
                        .map_err(|e| err(t.span().start, format!("contender '{name}': ready.timeout: {e}")))?,
                };
                let ready_path = ready.and_then(|r| r.path.clone()).unwrap_or_else(|| "/".into());
                if !ready_path.starts_with('/') {
                    return Err(err(at, format!("contender '{name}': ready.path must start with / (e.g. \"/health\")")));
                }
                Launch::Command {
                    command: command.clone(),
                    cwd: c.cwd.as_ref().map(PathBuf::from),
                    env: c.env.clone(),
                    setup: c.setup.clone(),
                    ready_path,
                    ready_timeout,
                    nofile: c.nofile,
                }
            }
        };
        contenders.push(Contender {
            name,
            launch,
            baseline: c.baseline,
        });
    }
    if contenders.iter().filter(|c| c.baseline).count() > 1 {
        return Err(err(0, "more than one contender has baseline = true: mark one (or none: the first is the baseline)".into()));
    }

    if raw.workload.is_empty() {
        return Err(err(0, "the plan has no [[workload]]: add at least one request, e.g. [[workload]] name = \"home\" path = \"/\"".into()));
    }
    let mut workloads = Vec::new();
    for w in &raw.workload {
        let at = w.span().start;
        let w = w.get_ref();
        let name = w.name.trim().to_string();
        if workloads.iter().any(|x: &Workload| x.name == name) {
            return Err(err(
                at,
                format!("two workloads are named '{name}': names must be unique"),
            ));
        }
        if !w.path.starts_with('/') {
            return Err(err(
                at,
                format!("workload '{name}': path '{}' must start with /", w.path),
            ));
        }
        if w.body.is_some() && w.body_file.is_some() {
            return Err(err(
                at,
                format!("workload '{name}': give body or body_file, not both"),
            ));
        }
        let no_expect = FileExpect::default();
        let (e, e_at) = w
            .expect
            .as_ref()
            .map_or((&no_expect, at), |e| (e.get_ref(), e.span().start));
        let status = match &e.status {
            None => StatusSet::default(),
            Some(v) => status_set(v).ok_or_else(|| {
                err(e_at, format!("workload '{name}': expect.status must be a code (200), a list ([200, 302]) or a class string (\"2xx\")"))
            })?,
        };
        workloads.push(Workload {
            name,
            method: w.method.to_ascii_uppercase(),
            path: w.path.clone(),
            headers: w
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            body_file: w.body_file.as_ref().map(PathBuf::from),
            body: w.body.clone(),
            expect: Expectation {
                status,
                body_contains: e.body_contains.as_ref().map(|s| s.as_bytes().to_vec()),
                length: e.length,
            },
        });
    }

    let l = raw.load.get_ref();
    let at = raw.load.span().start;
    let given = [
        l.concurrency.is_some(),
        l.rate.is_some(),
        l.stages.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if given != 1 {
        return Err(err(
            at,
            "[load] needs exactly one of concurrency = [..], rate = [..] or stages = [..]".into(),
        ));
    }
    let mut levels = Vec::new();
    if let Some(cs) = &l.concurrency {
        for &c in cs {
            if c == 0 {
                return Err(err(at, "load.concurrency values must be at least 1".into()));
            }
            levels.push(Level {
                level: LoadLevel::Concurrency { connections: c },
                measure: None,
            });
        }
    }
    if let Some(rs) = &l.rate {
        let connections = l.connections.unwrap_or(64);
        for &r in rs {
            if !(r.is_finite() && r > 0.0) {
                return Err(err(
                    at,
                    "load.rate values must be positive requests per second".into(),
                ));
            }
            levels.push(Level {
                level: LoadLevel::Rate {
                    rps: r,
                    connections,
                },
                measure: None,
            });
        }
    }
    if let Some(stages) = &l.stages {
        for s in stages {
            let d =
                parse_duration(&s.duration).map_err(|e| err(at, format!("load.stages: {e}")))?;
            if s.concurrency == 0 {
                return Err(err(at, "load.stages concurrency must be at least 1".into()));
            }
            levels.push(Level {
                level: LoadLevel::Concurrency {
                    connections: s.concurrency,
                },
                measure: Some(Span::Time(d)),
            });
        }
    }
    if levels.is_empty() {
        return Err(err(
            at,
            "[load] lists no level: give at least one value".into(),
        ));
    }
    Ok(Plan {
        name: raw.name,
        defaults,
        contenders,
        workloads,
        levels,
    })
}

fn status_set(v: &toml::Value) -> Option<StatusSet> {
    let text = match v {
        toml::Value::Integer(c) => c.to_string(),
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| match x {
                toml::Value::Integer(c) => Some(c.to_string()),
                toml::Value::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?
            .join(","),
        _ => return None,
    };
    StatusSet::parse(&text).ok()
}

/// Resolves a path of the plan relative to the plan file's directory.
pub fn resolve(plan_dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        plan_dir.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "pastebin"
[defaults]
warmup = "1s"
duration = "2s"
repeat = 2
server_cpus = "1"
load_cpus = "0"

[[contender]]
name = "fs"
command = "gunicorn -b 127.0.0.1:{port} app:app"
ready = { path = "/health", timeout = "5s" }
baseline = true

[[contender]]
name = "theirs"
url = "http://127.0.0.1:8080/"

[[workload]]
name = "get"
path = "/content/a"
expect = { status = 200, body_contains = "junk" }

[[workload]]
name = "post"
method = "post"
body = "a=1"
expect = { status = [200, 302] }

[load]
concurrency = [1, 10]
"#;

    #[test]
    fn a_good_plan_parses() {
        let p = parse(GOOD, "plan.toml").unwrap();
        assert_eq!(p.contenders.len(), 2);
        assert_eq!(p.baseline(), 0);
        assert_eq!(
            p.contenders[1].launch,
            Launch::Url("http://127.0.0.1:8080".into())
        );
        assert_eq!(p.workloads[1].method, "POST");
        assert!(
            p.workloads[1].expect.status.contains(302)
                && !p.workloads[1].expect.status.contains(201)
        );
        assert_eq!(p.defaults.repeat, 2);
        assert_eq!(p.defaults.server_cpus, Some(vec![1]));
        assert_eq!(p.levels.len(), 2);
    }

    fn error_of(text: &str) -> String {
        parse(text, "plan.toml").unwrap_err().to_string()
    }

    #[test]
    fn every_error_names_the_line_and_the_fix() {
        let cases = [
            GOOD.replace("command = \"gunicorn", "comand = \"gunicorn"),
            GOOD.replace("127.0.0.1:{port}", "127.0.0.1:8000"),
            GOOD.replace(
                "url = \"http://127.0.0.1:8080/\"",
                "url = \"127.0.0.1:8080\"",
            ),
            GOOD.replace("duration = \"2s\"", "duration = \"2 parsecs\""),
            GOOD.replace("status = 200,", "status = true,"),
            GOOD.replace("concurrency = [1, 10]", "concurrency = [1]\nrate = [10]"),
            GOOD.replace("name = \"theirs\"", "name = \"fs\""),
            GOOD.replace("server_cpus = \"1\"", "server_cpus = \"one\""),
            GOOD.replace("repeat = 2", "repeat = 0"),
        ];
        let all: Vec<String> = cases.iter().map(|c| error_of(c)).collect();
        insta::assert_snapshot!(all.join("\n"));
    }
}
