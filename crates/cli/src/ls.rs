//! `shootout ls` (the runs in the store, newest first) and the closing report of a run,
//! both read from the store only, so a report printed later is the one `run` printed.

use crate::Failure;
use anyhow::anyhow;
use clap::Args;
use shootout_model::stored::StoredRun;
use shootout_store::{RunId, Store};
use std::path::PathBuf;

/// Flags of `shootout ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// The store (SQLite).
    #[arg(long, value_name = "PATH", default_value = "shootout.db")]
    pub db: PathBuf,
}

/// Lists the runs; returns the exit code.
pub fn ls(a: LsArgs) -> Result<i32, Failure> {
    let store = crate::report::open_store(&a.db)?;
    let runs = store.runs().map_err(Failure::run)?;
    crate::emit(&listing(&a.db, &runs))?;
    Ok(0)
}

/// The text `shootout ls` prints: a header and one line per run.
fn listing(db: &std::path::Path, runs: &[shootout_store::RunSummary]) -> String {
    if runs.is_empty() {
        return format!("no runs in {}\n", db.display());
    }
    let mut out = format!(
        "{:>4}  {:<23}  {:<11}  {:>10}  {:>5}  name\n",
        "id", "started", "status", "contenders", "steps"
    );
    for r in runs {
        out.push_str(&format!(
            "{:>4}  {:<23}  {:<11}  {:>10}  {:>5}  {}\n",
            r.id.0,
            shootout_report::utc_seconds(r.started),
            r.status.as_str(),
            r.contenders,
            r.steps,
            r.name
        ));
    }
    out
}

/// The report `shootout run` prints when it ends: [`shootout_report::shootout::text`] of
/// run `id` as read back from the store — the very function `shootout report` calls, so a
/// report made later prints exactly this — with the run read back (its thresholds are
/// judged on it).
pub fn run_table(store: &Store, id: RunId) -> anyhow::Result<(String, StoredRun)> {
    let run = store
        .load_run(id)?
        .ok_or_else(|| anyhow!("run {} is not in the store", id.0))?;
    Ok((shootout_report::shootout::text(&run), run))
}
