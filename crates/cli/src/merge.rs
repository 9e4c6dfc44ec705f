//! `shootout merge FILE…`: one result from the result files of a load's shards (written by
//! `load --save`), or from logs holding them between markers (`kubectl logs … | shootout
//! merge -`). Reads the files, lets the analysis merge them
//! ([`shootout_analysis::merge`]), says its notes on stderr, renders the merged run with
//! the renderers of `load` (text, ab, wrk, json, `--html`), optionally saves it, and
//! judges the `--fail-if` thresholds on the whole fleet (exit 3 when one fails). Each
//! input is read as a stream: one result is at most
//! [`MAX_RESULT_BYTES`](shootout_model::saved::MAX_RESULT_BYTES), a log of them any
//! length, and an input that is not text is refused at its first byte.

use crate::choices::choice;
use crate::gates::{judge, parse_thresholds};
use crate::load::dist::write_saved;
use crate::output::Failure;
use crate::output::THRESHOLD_FAILED;
use anyhow::Context;
use clap::Args;
use shootout_analysis::merge::{merge as merge_runs, Source};
use shootout_model::saved::{Found, ResultScanner, ScanError};
use shootout_model::{Outcome, SavedRun};
use shootout_report::{AbOptions, Format};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Flags of `shootout merge`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  shootout merge shard-0.json shard-1.json shard-2.json shard-3.json
  shootout merge results/*.json --fail-if 'p99>50ms' --fail-if 'errors>0.1%'
  kubectl logs -l shootout.dev/job=shootout-load --tail=-1 | shootout merge -")]
pub struct MergeArgs {
    /// Result files (load --save), or logs holding results between markers; '-' reads stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Report format.
    #[arg(long, value_name = "FORMAT", default_value_t, value_parser = choice::<Format>())]
    pub format: Format,

    /// Same as --format json.
    #[arg(long)]
    pub json: bool,

    /// Also write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write the merged result to FILE (a result file, as load --save writes).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// Merge the shards that are there when some are missing, failed or were interrupted.
    #[arg(long)]
    pub allow_partial: bool,

    /// Exit 3 when this holds for the whole fleet, e.g. p99>50ms, errors>0.1% (repeatable).
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,

    /// No notes on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Runs `shootout merge`; returns the exit code.
pub fn merge(a: MergeArgs) -> Result<i32, Failure> {
    let thresholds = parse_thresholds(&a.fail_if)?;
    let format = if a.json { Format::Json } else { a.format };
    let mut sources = Vec::new();
    for file in &a.files {
        sources.extend(read(file)?);
    }
    let merged = merge_runs(&sources, a.allow_partial).map_err(Failure::usage)?;
    if !a.quiet {
        say!(
            "merged {} of {} result{}",
            merged.runs,
            sources.len(),
            if sources.len() == 1 { "" } else { "s" }
        );
        for n in &merged.notes {
            say!("note: {n}");
        }
    }
    let printed = crate::output::emit(&shootout_report::render(
        format,
        AbOptions::default(),
        &merged.spec,
        &merged.result,
    ));
    if format.warnings_apart() && !a.quiet {
        crate::output::to_stderr(&shootout_report::warnings(&merged.result));
    }
    if let Some(path) = &a.html {
        std::fs::write(
            path,
            shootout_report::html::render_load(&merged.spec, &merged.result),
        )
        .with_context(|| format!("cannot write the HTML report {}", path.display()))
        .map_err(Failure::run)?;
    }
    if let Some(path) = &a.save {
        let saved = SavedRun {
            shootout: env!("CARGO_PKG_VERSION").into(),
            shard: None,
            start_at: None,
            barrier: None,
            fleet: merged.spec.clone(),
            spec: merged.spec.clone(),
            outcome: if merged.result.interrupted {
                Outcome::Interrupted
            } else {
                Outcome::Complete
            },
            result: Some(merged.result.clone()),
        };
        write_saved(std::slice::from_ref(path), &saved)?;
    }
    printed?;
    Ok(if judge(&thresholds, &merged.spec, &merged.result) {
        THRESHOLD_FAILED
    } else {
        0
    })
}

/// The runs in `file`: one result file, or every result between markers in a log. The
/// input is read as a stream ([`ResultScanner`]): a log of any length in bounded memory,
/// one result up to [`MAX_RESULT_BYTES`](shootout_model::saved::MAX_RESULT_BYTES), and an
/// input that is not text refused at its first byte that is not.
fn read(file: &Path) -> Result<Vec<Source>, Failure> {
    let stdin = file.as_os_str() == "-";
    let name = if stdin {
        "stdin".to_string()
    } else {
        file.display().to_string()
    };
    let found = if stdin {
        scan(std::io::stdin().lock())
    } else {
        std::fs::File::open(file).and_then(scan)
    }
    .with_context(|| format!("cannot read {}", file.display()))
    .map_err(Failure::usage)?
    .map_err(|e| {
        Failure::usage(anyhow::anyhow!(
            "{name}: {e}: give the files written by shootout load --save, or logs holding their lines between the marks"
        ))
    })?;
    let parse = |name: String, text: &str| {
        let run = SavedRun::parse(text)
            .with_context(|| name.clone())
            .map_err(Failure::usage)?;
        Ok(Source { name, run })
    };
    match found {
        Found::File(text) => Ok(vec![parse(name, &text)?]),
        Found::Blocks(blocks) => blocks
            .into_iter()
            .map(|(line, json)| parse(format!("{name}:{line}"), &json))
            .collect(),
    }
}

/// Reads `r` to its end through a [`ResultScanner`], stopping at the first byte it refuses.
fn scan(mut r: impl Read) -> std::io::Result<Result<Found, ScanError>> {
    let mut scanner = ResultScanner::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(scanner.finish()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Err(e) = scanner.feed(&buf[..n]) {
            return Ok(Err(e));
        }
    }
}
