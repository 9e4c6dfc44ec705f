//! shootout's command line: clap flags become typed specs (library crates never see
//! clap), subcommands orchestrate the engine and the reports, and errors print as one
//! line that says what to do next.
//!
//! Subcommands: `load` (one URL), `run` (a plan, stored step by step), `ls` (the runs in
//! the store), `report` (a stored run as text, Markdown, JSON, CSV or HTML) and `compare`
//! (two stored runs, with significance and CI gates). `report` and `compare` read the store
//! only.
//!
//! Subcommands for a load spread over many machines: `merge` (the result files of a
//! load's shards, as one exact report) and `k8s job` (a Kubernetes Indexed Job running a
//! load as shards).
//!
//! Exit codes: 0 done, 1 the run could not be done (a `load` in which not one request got
//! a good answer, a `run` in which no contender was measured), a `compare` gate failed or
//! the output could not be written, 2 bad usage (including a store or run that does not
//! exist, and result files `merge` refuses), 3 a `--fail-if` threshold of `load`, `merge`,
//! `run` (or a plan's `fail_if`) or `report` failed, 130 interrupted.
//!
//! Output: every command writes its report with `emit`, never `print!` (which panics when
//! stdout cannot be written); clap's help and version go the same way. A reader that
//! closes the pipe (`shootout ls | head -2`) ends the command quietly with exit 0; any
//! other write error (`> /dev/full`) is one line on stderr and exit 1. `Failure::output`
//! is the one place that tells the two apart, `exit_code` the one place that turns an
//! outcome into the exit code. SIGPIPE stays ignored, as Rust leaves it, so a closed pipe
//! is an error to handle, not a signal that kills. Notes and errors go to stderr with
//! `say!`, which never panics: a stderr that cannot be written changes nothing.

/// Writes one line to stderr through [`to_stderr`]: every note, warning and error of
/// every command goes this way, never `eprintln!` (which panics when stderr is a closed
/// pipe, as in `shootout load URL 2>&1 | head -1`).
macro_rules! say {
    () => {
        $crate::to_stderr("\n")
    };
    ($($arg:tt)*) => {
        $crate::to_stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod abandoned;
mod bounded;
mod compare;
mod docs;
mod init;
mod k8s;
mod live;
mod load;
mod ls;
mod merge;
mod progress;
mod report;
mod run;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// What `shootout --help` opens with.
const ABOUT: &str = "Benchmark web servers honestly: load one URL as ab or wrk would, or run a \
shootout of servers you name (started, verified, warmed up, measured, compared, stored).";

/// The rest of `shootout --help`: where to start.
const LONG_ABOUT: &str = "Benchmark web servers honestly: load one URL as ab or wrk would, or \
run a shootout of servers you name (started, verified, warmed up, measured, compared, \
stored).

  shootout load -c 50 -d 10s http://127.0.0.1:8080/   one URL, ab/wrk-style flags and report
  shootout run plans/quickstart/plan.toml            a shootout from a plan (docs/plan.md)
  shootout report --html report.html                 the latest run, as one HTML page

Every response is checked, every failure counted by class, and every result stored.";

#[derive(Debug, Parser)]
#[command(
    name = "shootout",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load one URL, as ab or wrk would, and report what happened.
    Load(Box<load::LoadArgs>),
    /// Run a shootout plan: start, verify, warm up and measure every contender; store it all.
    Run(run::RunArgs),
    /// List the runs in the store, newest first.
    Ls(ls::LsArgs),
    /// Report a stored run (the latest by default): text, markdown, json, csv or --html.
    Report(report::ReportArgs),
    /// Compare two stored runs: what changed, whether it is significant; gates for CI.
    Compare(compare::CompareArgs),
    /// Write a plan comparing the Python servers found here (--wsgi, --asgi), static servers or URLs.
    Init(init::InitArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs::CompletionsArgs),
    /// Print the man page of shootout or of one subcommand (roff, for man -l or man1/).
    Man(docs::ManArgs),
    /// Merge the result files of a load's shards (load --save) into one exact report.
    Merge(merge::MergeArgs),
    /// Kubernetes: print an Indexed Job that runs a load as N shards.
    K8s(k8s::K8sArgs),
}

/// A failure with the exit code it deserves.
#[derive(Debug)]
pub(crate) struct Failure {
    /// 1: the run could not be done (or a gate failed); 2: bad usage.
    pub code: i32,
    /// What went wrong and what to do.
    pub error: anyhow::Error,
}

impl Failure {
    /// Bad usage (exit 2).
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 2,
            error: error.into(),
        }
    }
    /// The run could not be done (exit 1).
    pub fn run(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 1,
            error: error.into(),
        }
    }
}

impl Failure {
    /// A failed write of the command's output to stdout. A closed pipe (the reader went
    /// away: `| head`) is no failure: the command ends there, quietly, with exit 0. Any other
    /// error (a full disk, `> /dev/full`) is exit 1.
    pub fn output(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure {
                code: 0,
                error: ClosedStdout.into(),
            }
        } else {
            Failure::run(anyhow::Error::new(e).context("cannot write the output to stdout"))
        }
    }
}

/// The reader of stdout closed it: nothing to say, nothing left to do.
#[derive(Debug)]
struct ClosedStdout;

impl std::fmt::Display for ClosedStdout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed by its reader")
    }
}

impl std::error::Error for ClosedStdout {}

/// Writes `text` to stdout (locked, flushed): the one way a command writes its output.
/// See [`Failure::output`] for what a failed write becomes.
pub(crate) fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::output)
}

/// Writes `text` to stderr as it is. A stderr that cannot be written (a closed pipe, a
/// full disk) is not worth a panic, nor a different exit code.
pub(crate) fn to_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The exit code for a run that Ctrl-C ended.
pub(crate) const INTERRUPTED: i32 = 130;

/// The process-wide stop flag, set by Ctrl-C / SIGTERM. A second signal kills every
/// contender's process group and exits at once (the store stays consistent: each step is
/// one transaction).
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    STOP.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let _ = ctrlc::set_handler(move || {
            if f.swap(true, Ordering::SeqCst) {
                live::restore();
                shootout_harness::kill_live_groups();
                std::process::exit(INTERRUPTED);
            }
        });
        flag
    })
    .clone()
}

/// Runs the command line; returns the exit code.
pub fn main() -> i32 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(refused) = load::refused_before_parse(&args) {
        return exit_code(Err(refused));
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    exit_code(match cli.command {
        Command::Load(args) => load::run(*args),
        Command::Run(args) => run::run(args),
        Command::Ls(args) => ls::ls(args),
        Command::Report(args) => report::report(args),
        Command::Compare(args) => compare::compare(args),
        Command::Init(args) => init::init(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
        Command::Merge(args) => merge::merge(args),
        Command::K8s(args) => k8s::k8s(args),
    })
}

/// A command's outcome as the process's exit code: a failure is one line on stderr, but
/// a stdout its reader closed ends quietly with exit 0.
fn exit_code(result: Result<i32, Failure>) -> i32 {
    match result {
        Ok(code) => code,
        Err(f) if f.error.is::<ClosedStdout>() => 0,
        Err(f) => {
            // Each cause once: messages that already quote their source skip it.
            let mut line = String::new();
            for cause in f.error.chain().map(|e| e.to_string()) {
                if !line.contains(&cause) {
                    if !line.is_empty() {
                        line.push_str(": ");
                    }
                    line.push_str(&cause);
                }
            }
            say!("error: {line}");
            f.code
        }
    }
}

/// Prints a clap error as one line; help and version print as usual, under the output
/// policy of every command's output.
fn clap_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let code = if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                2
            } else {
                0
            };
            // clap writes it (in colour on a terminal); a failed write is any output's.
            exit_code(e.print().map(|()| code).map_err(Failure::output))
        }
        _ => {
            say!(
                "error: {} (see '{} --help')",
                clap_line(&e.to_string()),
                help_of(std::env::args())
            );
            2
        }
    }
}

/// clap's error as one line: the error, then its hints (`[possible values: …]`, `tip: a
/// similar subcommand exists: 'report'`), without the usage and the generic "try --help".
pub(crate) fn clap_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = lines
        .next()
        .unwrap_or("bad usage")
        .trim_start_matches("error: ")
        .to_string();
    for l in lines {
        if l.starts_with('[') || l.starts_with('<') || (l.starts_with("--") && !l.contains(' ')) {
            out.push(' ');
            out.push_str(l);
        } else if let Some(tip) = l.strip_prefix("tip: ") {
            out.push_str("; ");
            out.push_str(tip);
        }
    }
    out
}

/// `shootout report` when the command line names a subcommand, else `shootout`: whose
/// `--help` to point to.
fn help_of(args: impl Iterator<Item = String>) -> String {
    use clap::CommandFactory;
    let cli = Cli::command();
    let sub = args
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| cli.get_subcommands().any(|c| c.get_name() == a));
    match sub {
        Some(s) => format!("shootout {s}"),
        None => "shootout".into(),
    }
}
