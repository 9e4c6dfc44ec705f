//! `shootout load URL`: ab's and wrk's flags, turned into a validated [`LoadSpec`], run by
//! the engine (after an optional warm-up), reported in the chosen format.

use crate::progress::{Bound, Progress};
use crate::{stop_flag, Failure, INTERRUPTED};
use anyhow::{anyhow, Context};
use clap::Args;
use shootout_engine::{sys, Control};
use shootout_model::spec::TargetError;
use shootout_model::{parse_duration, FailureKind, LoadSpec, Pace, Record, StatusSet, Target};
use shootout_report::Format;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Flags of `shootout load`. ab's short flags mean what they mean in ab; wrk's `-t4 -c100
/// -d30s` works too (with -d given, -t is a thread count).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  shootout load -n 100000 -c 100 http://localhost:8080/hello
  shootout load -d 30s -c 1000 --threads 2 http://127.0.0.1:8080/
  shootout load --rate 20000 -d 30s -c 200 http://127.0.0.1:8080/
  shootout load -p body.txt -T application/x-www-form-urlencoded -n 1000 -c 10 http://127.0.0.1:8000/
  shootout load --json -n 1000 http://127.0.0.1:8080/ | jq .latency_ms.p99")]
pub struct LoadArgs {
    /// The URL to load (http:// or https://; a missing path means /).
    pub url: String,

    /// Requests to send in all (with no -n, -d or -t: one request, as ab).
    #[arg(short = 'n', long = "requests", value_name = "N")]
    pub requests: Option<u64>,

    /// Concurrent connections.
    #[arg(
        short = 'c',
        long = "concurrency",
        value_name = "N",
        default_value_t = 1
    )]
    pub concurrency: usize,

    /// ab: time limit in seconds; wrk: threads (when -d is given). Prints how it was read.
    #[arg(short = 't', value_name = "SECS|THREADS")]
    pub t: Option<String>,

    /// How long to run: 30s, 1m, 250ms, or seconds.
    #[arg(short = 'd', long = "duration", value_name = "DURATION")]
    pub duration: Option<String>,

    /// Requests per second on a fixed schedule (open loop, latency corrected for
    /// coordinated omission).
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,

    /// Worker threads (default: the CPUs this process may run on, at most -c).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Warm up first for this long or this many requests (not measured): 5s or 1000.
    #[arg(long, value_name = "DURATION|N")]
    pub warmup: Option<String>,

    /// Accepted for ab's habit: keep-alive is the default.
    #[arg(short = 'k', long = "keepalive")]
    pub keepalive: bool,

    /// Open a new connection for every request (sends Connection: close).
    #[arg(long)]
    pub no_keepalive: bool,

    /// POST this file's contents.
    #[arg(short = 'p', value_name = "FILE", conflicts_with = "put_file")]
    pub post_file: Option<PathBuf>,

    /// PUT this file's contents.
    #[arg(short = 'u', value_name = "FILE")]
    pub put_file: Option<PathBuf>,

    /// Content-Type of the body.
    #[arg(short = 'T', long = "content-type", value_name = "TYPE")]
    pub content_type: Option<String>,

    /// Extra header, 'Name: value' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Cookie, name=value (repeatable).
    #[arg(short = 'C', long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,

    /// Per-request timeout: seconds or a duration (default 30).
    #[arg(
        short = 's',
        long = "timeout",
        value_name = "SECS",
        default_value = "30"
    )]
    pub timeout: String,

    /// Connect timeout: seconds or a duration.
    #[arg(long, value_name = "SECS", default_value = "10")]
    pub connect_timeout: String,

    /// HTTP method (default GET, or POST/PUT with -p/-u).
    #[arg(short = 'm', long = "method", value_name = "METHOD")]
    pub method: Option<String>,

    /// Send HEAD requests.
    #[arg(short = 'i', long = "head")]
    pub head: bool,

    /// Expected status codes, e.g. 200,301 or 2xx (default: any below 400).
    #[arg(long, value_name = "LIST")]
    pub expect_status: Option<String>,

    /// Every body must contain this text.
    #[arg(long, value_name = "TEXT")]
    pub expect_body_contains: Option<String>,

    /// Every body must be exactly this many bytes.
    #[arg(long, value_name = "BYTES")]
    pub expect_length: Option<u64>,

    /// Report format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "ab", "wrk", "json"])]
    pub format: String,

    /// Same as --format json.
    #[arg(long)]
    pub json: bool,

    /// Write ab's percentile CSV (-e) to this file.
    #[arg(short = 'e', value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write ab's per-request TSV (-g) to this file.
    #[arg(short = 'g', value_name = "FILE")]
    pub gnuplot: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page (charts included) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// No progress and no notes on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Connect to this unix socket (the URL still gives the path and Host).
    #[arg(long, value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,

    /// Accept any TLS certificate (self-signed servers).
    #[arg(long)]
    pub insecure: bool,

    /// Trust the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,

    /// Pin worker threads to these CPUs, e.g. 0 or 0,2-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,

    /// Accepted for wrk's habit: the latency distribution is always reported.
    #[arg(long, hide = true)]
    pub latency: bool,
}

/// How `-t` was understood.
#[derive(Debug, PartialEq, Eq)]
enum TMeaning {
    Threads(usize),
    TimeLimit(Duration),
}

/// wrk's `-t` is a thread count, ab's a time limit. With -d present the user thinks in
/// wrk's terms; otherwise ab's (where -t is the only way to give a time).
fn read_t(value: &str, duration_given: bool, threads_given: bool) -> Result<TMeaning, Failure> {
    if duration_given && !threads_given {
        let n: usize = value.parse().map_err(|_| {
            Failure::usage(anyhow!(
                "-t {value}: with -d given, -t is a thread count (wrk style): write e.g. -t 2"
            ))
        })?;
        return Ok(TMeaning::Threads(n));
    }
    parse_duration(value)
        .map(TMeaning::TimeLimit)
        .map_err(|e| Failure::usage(anyhow!("-t: {e}")))
}

fn parse_cpus(list: &str) -> Result<Vec<usize>, Failure> {
    shootout_model::parse_cpu_list(list).ok_or_else(|| {
        Failure::usage(anyhow!(
            "--cpus '{list}' is not a CPU list: write e.g. 0 or 0,2-3"
        ))
    })
}

/// What the flags add up to: the measured run's spec, the warm-up's, notes for stderr.
struct Plan {
    spec: LoadSpec,
    warmup: Option<LoadSpec>,
    format: Format,
    notes: Vec<String>,
}

fn plan(a: &LoadArgs) -> Result<Plan, Failure> {
    let mut notes = Vec::new();
    let mut target = Target::parse(&a.url).map_err(|e: TargetError| Failure::usage(e))?;
    target.unix_socket = a.unix_socket.clone();
    target.tls.insecure = a.insecure;
    target.tls.ca_file = a.cacert.clone();

    let mut duration = a
        .duration
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| Failure::usage(anyhow!("-d: {e}")))?;
    let mut threads = a.threads;
    if let Some(t) = &a.t {
        match read_t(t, duration.is_some(), threads.is_some())? {
            TMeaning::Threads(n) => {
                notes.push(format!(
                    "-t {t} read as --threads {n} (wrk style, since -d is given)"
                ));
                threads = Some(n);
            }
            TMeaning::TimeLimit(d) => {
                notes.push(format!(
                    "-t {t} read as a time limit of {} (ab style); for threads use --threads",
                    humanize(d)
                ));
                duration = Some(d);
            }
        }
    }
    let requests = match (a.requests, duration) {
        (None, None) => Some(1),
        (n, _) => n,
    };
    if requests == Some(0) {
        return Err(Failure::usage(anyhow!(
            "-n 0: the request count must be at least 1"
        )));
    }
    if a.concurrency == 0 {
        return Err(Failure::usage(anyhow!(
            "-c 0: the concurrency must be at least 1"
        )));
    }
    let mut connections = a.concurrency;
    if let Some(n) = requests {
        if (connections as u64) > n {
            notes.push(format!(
                "-c {connections} lowered to {n}: no more connections than requests (-n {n})"
            ));
            connections = n as usize;
        }
    }
    let cpus = a.cpus.as_deref().map(parse_cpus).transpose()?;
    let default_threads = cpus
        .as_ref()
        .map_or_else(|| sys::allowed_cpus().len(), Vec::len);
    let threads = threads.unwrap_or(default_threads).clamp(1, connections);
    if threads == 0 {
        return Err(Failure::usage(anyhow!(
            "--threads 0: at least one thread is needed"
        )));
    }

    let mut spec = LoadSpec::new(target);
    let body_file = a
        .post_file
        .as_ref()
        .map(|f| ("POST", f))
        .or(a.put_file.as_ref().map(|f| ("PUT", f)));
    if let Some((method, file)) = body_file {
        spec.request.body = std::fs::read(file).map_err(|e| {
            Failure::usage(anyhow!(
                "cannot read the body file '{}': {e} (check the path given to -p/-u)",
                file.display()
            ))
        })?;
        spec.request.method = method.into();
    }
    if a.head {
        spec.request.method = "HEAD".into();
    }
    if let Some(m) = &a.method {
        if m.is_empty()
            || !m
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(Failure::usage(anyhow!(
                "-m '{m}' is not an HTTP method: write e.g. -m DELETE"
            )));
        }
        spec.request.method = m.to_ascii_uppercase();
    }
    if let Some(ct) = &a.content_type {
        spec.request
            .headers
            .push(("Content-Type".into(), ct.clone()));
    }
    for h in &a.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| {
            Failure::usage(anyhow!(
                "-H '{h}' is not a header: write it as -H 'Name: value'"
            ))
        })?;
        spec.request
            .headers
            .push((name.trim().into(), value.trim().into()));
    }
    if !a.cookies.is_empty() {
        for c in &a.cookies {
            if !c.contains('=') {
                return Err(Failure::usage(anyhow!(
                    "-C '{c}' is not a cookie: write it as -C name=value"
                )));
            }
        }
        spec.request
            .headers
            .push(("Cookie".into(), a.cookies.join("; ")));
    }
    spec.request.keepalive = !a.no_keepalive;
    if let Some(list) = &a.expect_status {
        spec.expect.status =
            StatusSet::parse(list).map_err(|e| Failure::usage(anyhow!("--expect-status: {e}")))?;
    }
    spec.expect.body_contains = a
        .expect_body_contains
        .as_ref()
        .map(|s| s.as_bytes().to_vec());
    spec.expect.length = a.expect_length;
    spec.connections = connections;
    spec.threads = threads;
    spec.requests = requests;
    spec.duration = duration;
    spec.pace = match a.rate {
        Some(r) if r.is_finite() && r > 0.0 => Pace::Rate(r),
        Some(r) => {
            return Err(Failure::usage(anyhow!(
                "--rate {r}: write a positive number of requests per second"
            )))
        }
        None => Pace::Closed,
    };
    spec.timeout = parse_duration(&a.timeout).map_err(|e| Failure::usage(anyhow!("-s: {e}")))?;
    spec.connect_timeout = parse_duration(&a.connect_timeout)
        .map_err(|e| Failure::usage(anyhow!("--connect-timeout: {e}")))?;
    if spec.timeout.is_zero() || spec.connect_timeout.is_zero() {
        return Err(Failure::usage(anyhow!("timeouts must be longer than zero")));
    }
    spec.record = Record {
        all: a.gnuplot.is_some(),
        ..Record::default()
    };
    spec.cpus = cpus;

    let warmup = match &a.warmup {
        None => None,
        Some(w) => {
            let mut ws = spec.clone();
            ws.record = Record {
                reservoir: 0,
                all: false,
            };
            if let Ok(n) = w.parse::<u64>() {
                if n == 0 {
                    None
                } else {
                    ws.requests = Some(n);
                    ws.duration = None;
                    ws.connections = ws.connections.min(n as usize);
                    ws.threads = ws.threads.min(ws.connections);
                    Some(ws)
                }
            } else {
                let d = parse_duration(w)
                    .map_err(|e| Failure::usage(anyhow!("--warmup: {e} (or a request count)")))?;
                ws.duration = Some(d);
                ws.requests = None;
                Some(ws)
            }
        }
    };
    let format = if a.json {
        Format::Json
    } else {
        a.format
            .parse()
            .map_err(|e| Failure::usage(anyhow!("{e}")))?
    };
    Ok(Plan {
        spec,
        warmup,
        format,
        notes,
    })
}

fn humanize(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 && s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// Runs `shootout load`; returns the exit code.
pub fn run(a: LoadArgs) -> Result<i32, Failure> {
    let plan = plan(&a)?;
    if !a.quiet {
        for n in &plan.notes {
            eprintln!("note: {n}");
        }
    }
    let stop = stop_flag();
    if let Some(ws) = &plan.warmup {
        let control = Arc::new(Control::with_stop(ws.threads, stop.clone()));
        let bound = ws.requests.map_or_else(
            || Bound::Time(ws.duration.unwrap_or_default()),
            Bound::Requests,
        );
        let progress = Progress::start(control.clone(), bound, "warm-up", a.quiet);
        let r = shootout_engine::run(ws, &control).context("warm-up");
        progress.finish();
        let r = r.map_err(Failure::run)?;
        if !a.quiet {
            eprintln!(
                "warm-up: {} requests in {:.1} s, {} failed (not measured)",
                r.counts.completed,
                r.duration.as_secs_f64(),
                r.counts.failed()
            );
        }
        if r.interrupted {
            return Ok(INTERRUPTED);
        }
    }
    let spec = &plan.spec;
    let control = Arc::new(Control::with_stop(spec.threads, stop));
    let bound = match (spec.requests, spec.duration) {
        (Some(n), _) => Bound::Requests(n),
        (None, d) => Bound::Time(d.unwrap_or_default()),
    };
    let progress = Progress::start(control.clone(), bound, "load", a.quiet);
    let result = shootout_engine::run(spec, &control);
    progress.finish();
    let result = result.map_err(|e| match e {
        shootout_engine::EngineError::Invalid(_) | shootout_engine::EngineError::Header(_) => {
            Failure::usage(e)
        }
        e => Failure::run(e),
    })?;

    let printed = crate::emit(&shootout_report::render(plan.format, spec, &result));
    // ab's and wrk's layouts stay parseable: their warnings go to stderr instead.
    if matches!(plan.format, Format::Ab | Format::Wrk) && !a.quiet {
        eprint!("{}", shootout_report::warnings(&result));
    }
    if let Some(path) = &a.csv {
        std::fs::write(path, shootout_report::ab_percentiles_csv(&result))
            .with_context(|| format!("cannot write -e file {}", path.display()))
            .map_err(Failure::run)?;
    }
    if let Some(path) = &a.html {
        std::fs::write(path, shootout_report::html::render_load(spec, &result))
            .with_context(|| format!("cannot write the HTML report {}", path.display()))
            .map_err(Failure::run)?;
    }
    if let Some(path) = &a.gnuplot {
        std::fs::write(path, shootout_report::ab_gnuplot_tsv(&result))
            .with_context(|| format!("cannot write -g file {}", path.display()))
            .map_err(Failure::run)?;
    }
    printed?;
    if result.interrupted {
        return Ok(INTERRUPTED);
    }
    if let Some(line) = no_good_answer(&result.counts) {
        eprintln!("error: {line}");
        return Ok(1);
    }
    Ok(0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Wrap {
        #[command(flatten)]
        a: LoadArgs,
    }

    fn plan_of(args: &[&str]) -> Result<Plan, Failure> {
        let w = Wrap::try_parse_from(std::iter::once("load").chain(args.iter().copied()))
            .expect("flags parse");
        plan(&w.a)
    }

    #[test]
    fn ab_habits() {
        let p = plan_of(&["-n", "1000", "-c", "10", "-k", "http://localhost:8080"]).unwrap();
        assert_eq!(p.spec.requests, Some(1000));
        assert_eq!(p.spec.connections, 10);
        assert_eq!(p.spec.target.path, "/");
        assert_eq!(p.spec.pace, Pace::Closed);
        // no bound at all: one request, as ab
        let p = plan_of(&["http://127.0.0.1/"]).unwrap();
        assert_eq!((p.spec.requests, p.spec.duration), (Some(1), None));
    }

    #[test]
    fn t_means_what_the_user_meant() {
        // wrk: -d given, so -t is threads
        let p = plan_of(&["-t4", "-c100", "-d30s", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.spec.threads, 4);
        assert_eq!(p.spec.duration, Some(Duration::from_secs(30)));
        assert!(p.notes[0].contains("--threads 4"), "{:?}", p.notes);
        // ab: no -d, so -t is a time limit
        let p = plan_of(&["-t", "30", "-c", "10", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.spec.duration, Some(Duration::from_secs(30)));
        assert_eq!(p.spec.requests, None);
        assert!(p.notes[0].contains("time limit of 30 s"), "{:?}", p.notes);
        // -d and --threads both given: -t can only be a time limit
        let p = plan_of(&[
            "-t",
            "5",
            "--threads",
            "1",
            "-d",
            "30s",
            "http://127.0.0.1/",
        ])
        .unwrap();
        assert_eq!(
            (p.spec.threads, p.spec.duration),
            (1, Some(Duration::from_secs(5)))
        );
        assert!(plan_of(&["-t", "x", "-d", "1s", "http://127.0.0.1/"]).is_err());
    }

    #[test]
    fn bodies_headers_and_expectations() {
        let dir = std::env::temp_dir().join(format!("shootout-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("body.txt");
        std::fs::write(&body, "a=1&b=2").unwrap();
        let p = plan_of(&[
            "-p",
            body.to_str().unwrap(),
            "-T",
            "application/x-www-form-urlencoded",
            "-H",
            "X-A: 1",
            "-C",
            "s=1",
            "-C",
            "t=2",
            "--expect-status",
            "2xx",
            "--expect-body-contains",
            "Hello",
            "--expect-length",
            "12",
            "http://127.0.0.1/",
        ])
        .unwrap();
        let r = &p.spec.request;
        assert_eq!(
            (r.method.as_str(), r.body.as_slice()),
            ("POST", b"a=1&b=2".as_slice())
        );
        assert!(r.headers.contains(&("Cookie".into(), "s=1; t=2".into())));
        assert!(r.headers.contains(&("X-A".into(), "1".into())));
        assert!(p.spec.expect.status.contains(204) && !p.spec.expect.status.contains(301));
        assert_eq!(p.spec.expect.length, Some(12));
        let missing = plan_of(&["-p", "/nonexistent/body", "http://127.0.0.1/"])
            .err()
            .unwrap();
        assert_eq!(missing.code, 2);
        assert!(
            missing.error.to_string().contains("-p/-u"),
            "{}",
            missing.error
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn concurrency_never_exceeds_requests() {
        let p = plan_of(&["-n", "5", "-c", "10", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.spec.connections, 5);
        assert!(p.notes.iter().any(|n| n.contains("lowered to 5")));
    }

    #[test]
    fn rate_warmup_and_cpus() {
        let p = plan_of(&[
            "--rate",
            "500",
            "-d",
            "2s",
            "--warmup",
            "100",
            "--cpus",
            "0,2-3",
            "http://127.0.0.1/",
        ])
        .unwrap();
        assert_eq!(p.spec.pace, Pace::Rate(500.0));
        assert_eq!(p.spec.cpus, Some(vec![0, 2, 3]));
        assert_eq!(p.warmup.as_ref().unwrap().requests, Some(100));
        let p = plan_of(&["--warmup", "2s", "-n", "10", "http://127.0.0.1/"]).unwrap();
        assert_eq!(p.warmup.unwrap().duration, Some(Duration::from_secs(2)));
        assert!(plan_of(&["--rate", "0", "http://127.0.0.1/"]).is_err());
        assert!(plan_of(&["--cpus", "a", "http://127.0.0.1/"]).is_err());
    }
}
