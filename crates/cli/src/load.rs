//! `shootout load URL`: ab's and wrk's flags, in two stages as ripgrep reads its own:
//! [`flags`] is what was typed (clap, no logic), [`resolve`] turns it into a validated
//! [`LoadSpec`](shootout_model::LoadSpec) through the model's builder. This module runs
//! the engine (after an optional warm-up), reports in the chosen format on stdout (through
//! [`crate::emit`]) and writes the `-e`, `-g` and `--html` files.

mod flags;
mod resolve;

pub use flags::LoadArgs;
pub(crate) use resolve::{read_body, read_list};

use crate::progress::{Bound, Progress};
use crate::{stop_flag, Failure, INTERRUPTED};
use anyhow::Context;
use shootout_engine::Control;
use shootout_model::{FailureKind, LoadSpec, RunResult};
use shootout_report::Format;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs `shootout load`; returns the exit code.
pub fn run(a: LoadArgs) -> Result<i32, Failure> {
    let plan = resolve::plan(&a)?;
    if !a.quiet {
        for n in &plan.notes {
            say!("note: {n}");
        }
    }
    let stop = stop_flag();
    if let Some(ws) = &plan.warmup {
        if warm_up(ws, stop.clone(), a.quiet)? {
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
        crate::to_stderr(&shootout_report::warnings(&result));
    }
    // A file that could not be written is an error even when stdout's reader went away.
    write_files(&a, spec, &result)?;
    printed?;
    if result.interrupted {
        return Ok(INTERRUPTED);
    }
    if let Some(line) = no_good_answer(&result.counts) {
        say!("error: {line}");
        return Ok(1);
    }
    Ok(0)
}

/// Runs the warm-up (not measured) and says how it went; true when Ctrl-C ended it.
fn warm_up(ws: &LoadSpec, stop: Arc<AtomicBool>, quiet: bool) -> Result<bool, Failure> {
    let control = Arc::new(Control::with_stop(ws.threads, stop));
    let bound = ws.requests.map_or_else(
        || Bound::Time(ws.duration.unwrap_or_default()),
        Bound::Requests,
    );
    let progress = Progress::start(control.clone(), bound, "warm-up", quiet);
    let r = shootout_engine::run(ws, &control).context("warm-up");
    progress.finish();
    let r = r.map_err(Failure::run)?;
    if !quiet {
        say!(
            "warm-up: {} requests in {:.1} s, {} failed (not measured)",
            r.counts.completed,
            r.duration.as_secs_f64(),
            r.counts.failed()
        );
    }
    Ok(r.interrupted)
}

/// Writes the files asked for: `-e` (ab's percentile CSV), `--html`, `-g` (ab's TSV).
fn write_files(a: &LoadArgs, spec: &LoadSpec, result: &RunResult) -> Result<(), Failure> {
    if let Some(path) = &a.csv {
        std::fs::write(path, shootout_report::ab_percentiles_csv(result))
            .with_context(|| format!("cannot write -e file {}", path.display()))
            .map_err(Failure::run)?;
    }
    if let Some(path) = &a.html {
        std::fs::write(path, shootout_report::html::render_load(spec, result))
            .with_context(|| format!("cannot write the HTML report {}", path.display()))
            .map_err(Failure::run)?;
    }
    if let Some(path) = &a.gnuplot {
        std::fs::write(path, shootout_report::ab_gnuplot_tsv(result))
            .with_context(|| format!("cannot write -g file {}", path.display()))
            .map_err(Failure::run)?;
    }
    Ok(())
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
