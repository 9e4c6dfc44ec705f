//! The store as the commands that read it open it: `ls`, `report`, `compare` and the
//! closing table of `run`. Opening an existing store (upgraded or reclaimed first) and
//! loading a run (its steps' warnings judged again from their numbers), each failure a
//! one-line error that names the fix (exit 2: the user asked for something that is not
//! there), and the run's table read back from the store, so a report printed later is the
//! one `run` printed.

use crate::output::Failure;
use anyhow::anyhow;
use shootout_model::stored::StoredRun;
use shootout_store::{RunId, Store, StoreError};
use std::path::Path;

/// Opens the store at `db`, which must exist, read-only: reading changes nothing, and a
/// store the user cannot write can be read. A store of an older schema is upgraded first
/// (a write) when the user may write it; otherwise the error says how to upgrade it. Runs
/// whose shootout died are then reclaimed ([`crate::abandoned::reclaim`] opens its own
/// writer only when there is one to mark).
pub fn open_store(db: &Path) -> Result<Store, Failure> {
    if !db.exists() {
        return Err(Failure::usage(anyhow!(
            "no store at {}: run a plan first (shootout run PLAN.toml) or give --db PATH",
            db.display()
        )));
    }
    let store = match Store::open_read_only(db) {
        Err(outdated @ StoreError::Outdated { .. }) => {
            Store::open_existing(db).map_err(|_| Failure::run(outdated))?
        }
        other => other.map_err(Failure::run)?,
    };
    crate::abandoned::reclaim(db, &store);
    Ok(store)
}

/// Loads run `id` (the latest when `None`) with its contenders and steps, each step's
/// warnings judged from its numbers ([`shootout_analysis::load_warnings::refresh_stored`]);
/// a run whose capacity searches' SLOs cannot be read is refused, naming the run and the
/// step ([`shootout_analysis::capacities::check`]).
pub fn load_run(store: &Store, db: &Path, id: Option<i64>) -> Result<StoredRun, Failure> {
    let id = match id {
        Some(id) => RunId(id),
        None => match store.latest_run().map_err(Failure::run)? {
            Some(r) => r.id,
            None => {
                return Err(Failure::usage(anyhow!(
                    "no runs in {}: run a plan first (shootout run PLAN.toml) or give --db PATH",
                    db.display()
                )))
            }
        },
    };
    let mut run = store.load_run(id).map_err(Failure::run)?.ok_or_else(|| {
        Failure::usage(anyhow!(
            "run {id} is not in {}: 'shootout ls --db {}' lists the runs",
            db.display(),
            db.display()
        ))
    })?;
    shootout_analysis::load_warnings::refresh_stored(&mut run);
    shootout_analysis::capacities::check(&run).map_err(Failure::run)?;
    Ok(run)
}

/// The report `shootout run` prints when it ends: [`shootout_report::shootout::text`] of
/// run `id` as read back from the store — the very function `shootout report` calls, so a
/// report made later prints exactly this — with the run read back (its thresholds are
/// judged on it).
pub fn run_table(store: &Store, id: RunId) -> anyhow::Result<(String, StoredRun)> {
    let mut run = store
        .load_run(id)?
        .ok_or_else(|| anyhow!("run {} is not in the store", id.0))?;
    shootout_analysis::load_warnings::refresh_stored(&mut run);
    shootout_analysis::capacities::check(&run)?;
    Ok((shootout_report::shootout::text(&run), run))
}
