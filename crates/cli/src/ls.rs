//! `shootout ls`: the runs in the store, newest first, one line each (the store is opened
//! as every reading command opens it, in [`crate::stored`]).

use crate::output::Failure;
use clap::Args;
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
    let store = crate::stored::open_store(&a.db)?;
    let runs = store.runs().map_err(Failure::run)?;
    crate::output::emit(&listing(&a.db, &runs))?;
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
