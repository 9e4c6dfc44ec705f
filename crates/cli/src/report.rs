//! `shootout report [RUN]`: a stored run rendered from the store alone — as the terminal
//! tables `shootout run` printed when it ended (the same function renders both), as
//! Markdown, JSON or CSV, and/or as the self-contained HTML report written to a file.
//! The store is opened and the run loaded by [`crate::stored`], the thresholds judged by
//! [`crate::gates`], as every command does.

use crate::choices::choice;
use crate::output::{emit, emit_with, Failure};
use crate::stored::{load_run, open_store};
use anyhow::Context;
use clap::Args;
use shootout_report::shootout::RunFormat;
use std::path::PathBuf;

/// Flags of `shootout report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run's id, as `shootout ls` lists it; the latest run when left out.
    #[arg(value_name = "RUN", value_parser = clap::value_parser!(i64).range(1..))]
    pub run: Option<i64>,

    /// Read several runs of one plan as one: every cell's median is over the repetitions
    /// of all of them and its ± spans them (e.g. --runs 3,5 for a run and its re-run).
    /// Runs whose steps differ in length more than 1.5 times (a --quick run with a full
    /// one) are warned of as 'unlike steps', as compare warns.
    #[arg(long, value_name = "RUN,RUN,…", value_delimiter = ',', num_args = 1,
          value_parser = clap::value_parser!(i64).range(1..), conflicts_with = "run")]
    pub runs: Vec<i64>,

    /// text: the tables `shootout run` printed; markdown: GitHub tables; json: one document
    /// (docs/report-json.md); csv: one RFC 4180 record per step. Default text, or nothing
    /// when --html is given alone.
    #[arg(long, short = 'f', value_name = "FORMAT", value_parser = choice::<RunFormat>())]
    pub format: Option<RunFormat>,

    /// Write the self-contained HTML report (tables and charts, opens offline) to FILE;
    /// '-' writes it to stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// The store (SQLite).
    #[arg(long, value_name = "PATH", default_value = "shootout.db")]
    pub db: PathBuf,

    /// Exit 3 when this holds for any contender × workload × level of the run, e.g.
    /// p99>50ms, errors>0.1%, rps<20000, failed>0 (repeatable; as `run --fail-if` judges).
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
}

/// Runs `shootout report`; returns the exit code.
pub fn report(a: ReportArgs) -> Result<i32, Failure> {
    let thresholds = crate::gates::parse_thresholds(&a.fail_if)?;
    let store = open_store(&a.db)?;
    let run = if a.runs.is_empty() {
        load_run(&store, &a.db, a.run)?
    } else {
        let runs = a
            .runs
            .iter()
            .map(|&id| load_run(&store, &a.db, Some(id)))
            .collect::<Result<Vec<_>, _>>()?;
        shootout_analysis::combine::combine(runs).map_err(Failure::usage)?
    };
    // One analysis for every rendering asked and the thresholds: a store of 20,000 steps
    // takes seconds to analyse.
    let analysis = shootout_report::shootout::Analysis::of(&run);
    if let Some(path) = &a.html {
        let page = shootout_report::html::render_run_of(&analysis);
        if path.as_os_str() == "-" {
            emit(&page)?;
        } else {
            std::fs::write(path, &page)
                .with_context(|| format!("cannot write the HTML report to {}", path.display()))
                .map_err(Failure::run)?;
            say!(
                "wrote the HTML report of run {} to {}",
                std::iter::once(run.run.id)
                    .chain(run.also.iter().copied())
                    .map(|id| id.to_string())
                    .collect::<Vec<_>>()
                    .join(" + "),
                path.display()
            );
        }
    }
    match (a.format, &a.html) {
        (Some(f), _) => emit_with(|out| shootout_report::shootout::write_of(f, &analysis, out))?,
        (None, None) => emit(&shootout_report::shootout::text_of(&analysis))?,
        (None, Some(_)) => {}
    }
    let breached = crate::gates::judge_analysis(&analysis, |_| &thresholds);
    Ok(if breached {
        crate::output::THRESHOLD_FAILED
    } else {
        0
    })
}
