//! `shootout ls` (the runs in the store, newest first) and the closing report of a run,
//! both read from the store only, so a report printed later is the one `run` printed.

use crate::Failure;
use anyhow::anyhow;
use clap::Args;
use shootout_store::{RunId, Store};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// Flags of `shootout ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// The store (SQLite).
    #[arg(long, value_name = "PATH", default_value = "shootout.db")]
    pub db: PathBuf,
}

/// Lists the runs; returns the exit code.
pub fn ls(a: LsArgs) -> Result<i32, Failure> {
    if !a.db.exists() {
        return Err(Failure::usage(anyhow!(
            "no store at {}: run a plan first (shootout run PLAN.toml) or give --db PATH",
            a.db.display()
        )));
    }
    let store = Store::open_existing(&a.db).map_err(Failure::run)?;
    let runs = store.runs().map_err(Failure::run)?;
    if runs.is_empty() {
        println!("no runs in {}", a.db.display());
        return Ok(0);
    }
    println!(
        "{:>4}  {:<20}  {:<11}  {:>10}  {:>5}  name",
        "id", "started (UTC)", "status", "contenders", "steps"
    );
    for r in runs {
        println!(
            "{:>4}  {:<20}  {:<11}  {:>10}  {:>5}  {}",
            r.id.0,
            utc(r.started),
            format!("{:?}", r.status).to_lowercase(),
            r.contenders,
            r.steps,
            r.name
        );
    }
    Ok(0)
}

/// The report `shootout run` prints when it ends: [`shootout_report::shootout::text`] of
/// run `id` as read back from the store — the very function `shootout report` calls, so a
/// report made later prints exactly this.
pub fn run_table(store: &Store, id: RunId) -> anyhow::Result<String> {
    let run = store
        .load_run(id)?
        .ok_or_else(|| anyhow!("run {} is not in the store", id.0))?;
    Ok(shootout_report::shootout::text(&run))
}

/// `YYYY-MM-DD HH:MM:SS` in UTC (civil-from-days, so no date crate is needed for one line).
fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01 00:00:00");
        assert_eq!(
            utc(UNIX_EPOCH + Duration::from_secs(1_795_326_661)),
            "2026-11-22 05:51:01"
        );
        assert_eq!(
            utc(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29 00:00:00"
        );
    }
}
