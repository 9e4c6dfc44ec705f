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
//! Output: every command writes its report with `output::emit`, never `print!` (which
//! panics when stdout cannot be written), and its notes with `say!`; clap's help and
//! version go the same way; `output` holds that policy and the exit codes. SIGPIPE stays
//! ignored, as Rust leaves it, so a closed pipe is an error to handle, not a signal that
//! kills.

#[macro_use]
mod output;

mod abandoned;
mod bounded;
mod choices;
mod compare;
mod docs;
mod gates;
mod init;
mod journey;
mod k8s;
mod load;
mod ls;
mod merge;
mod metrics;
mod progress;
mod report;
mod run;
mod stop;
mod stored;
mod until;

use clap::{Parser, Subcommand};
use output::{clap_line, exit_code, Failure};

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
    /// Journeys: check a journey file, or translate a Locustfile into one.
    Journey(journey::JourneyArgs),
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
        Command::Journey(args) => journey::journey(args),
    })
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
