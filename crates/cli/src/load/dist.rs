//! The flags of `shootout load` that spread one load over many processes and judge it:
//! `--shard I/N` (or `JOB_COMPLETION_INDEX` with `--shards N`, as a Kubernetes Indexed Job
//! gives each pod), `--barrier` (the shards start together when all are there, see
//! [`super::barrier`]) or `--start-at` (at a time agreed in advance), `--save` and
//! `--fail-if`. [`DistArgs`] is what was
//! typed; [`resolve`] turns it, with the spec of the whole load, into this process's share
//! ([`Shard::divide`](shootout_model::Shard::divide), the model's one rule) and the
//! [`Dist`] settings the run needs. [`save`] writes the result file; the merge reads it.

use super::barrier::{self, BarrierPlan};
pub use super::flags::DistArgs;
use crate::gates::parse_thresholds;
use crate::output::Failure;
use anyhow::{anyhow, Context};
use shootout_analysis::threshold::Threshold;
use shootout_model::barrier::BarrierFacts;
use shootout_model::saved::in_log_block;
use shootout_model::{parse_wall_clock, LoadSpec, Outcome, RunResult, SavedRun, Shard};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The environment variable a Kubernetes Indexed Job sets to each pod's index.
pub const INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

/// How far ahead `--start-at` may be.
const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

/// How long past `--start-at` a shard may still start (its clock and its set-up).
const LATE_START: Duration = Duration::from_secs(1);

/// What the distribution flags resolve to.
#[derive(Debug, Clone, Default)]
pub struct Dist {
    /// This process's shard, if the load is spread.
    pub shard: Option<Shard>,
    /// The whole load, as given (the spec is this process's share of it).
    pub fleet: Option<LoadSpec>,
    /// When to start (`--start-at`, or the barrier's start once met).
    pub start_at: Option<SystemTime>,
    /// The start barrier to meet, if any.
    pub barrier: Option<BarrierPlan>,
    /// What this shard measured at the barrier, once met.
    pub met: Option<BarrierFacts>,
    /// Where to write the result.
    pub save: Vec<PathBuf>,
    /// The thresholds to judge the run by.
    pub thresholds: Vec<Threshold>,
}

/// Resolves the flags, reading `JOB_COMPLETION_INDEX` through `env`; returns this
/// process's spec (the fleet's `spec` divided, when sharded) and the settings.
pub fn resolve(
    a: &DistArgs,
    spec: LoadSpec,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(LoadSpec, Dist), Failure> {
    let usage = |e: anyhow::Error| Failure::usage(e);
    let shard = match (&a.shard, a.shards) {
        (Some(text), _) => {
            Some(Shard::parse(text).map_err(|e| usage(anyhow!("--shard {text}: {e}")))?)
        }
        (None, Some(count)) => {
            let index = env(INDEX_VAR).ok_or_else(|| {
                usage(anyhow!(
                    "--shards {count} needs {INDEX_VAR} (set by a Kubernetes Indexed Job) to know which shard this is: set it, or give --shard I/{count}"
                ))
            })?;
            let index: u32 = index.trim().parse().map_err(|_| {
                usage(anyhow!(
                    "{INDEX_VAR}={index:?} is not a shard index: it must be a number from 0 to {}",
                    count.saturating_sub(1)
                ))
            })?;
            Some(Shard::new(index, count).map_err(|e| usage(anyhow!("--shards {count}: {e}")))?)
        }
        (None, None) => None,
    };
    // Whether the time has passed is checked when the run is about to start (`load`
    // writes a failed result then, for the merge to name this shard).
    let start_at = a
        .start_at
        .as_deref()
        .map(|t| parse_wall_clock(t).map_err(|e| usage(anyhow!("--start-at: {e}"))))
        .transpose()?;
    let thresholds = parse_thresholds(&a.fail_if)?;
    crate::gates::check_steps(&thresholds, &spec)?;
    for path in a
        .save
        .iter()
        .filter(|p| p.as_os_str() != "-" && !p.is_dir())
    {
        crate::output::check_output("--save", path)?;
    }
    let flags = barrier::Flags {
        barrier: a.barrier.as_deref(),
        listen: a.barrier_listen.as_deref(),
        wait: &a.barrier_wait,
        run_id: a.run_id.as_deref(),
    };
    let fingerprint = shootout_analysis::merge::load_fingerprint(&spec);
    let barrier = barrier::resolve(flags, shard, fingerprint).map_err(|e| usage(anyhow!(e)))?;
    let (spec, fleet) = match shard {
        Some(sh) => {
            let share = sh
                .divide(&spec)
                .map_err(|e| usage(anyhow!("shard {sh}: {e}")))?;
            (share, Some(spec))
        }
        None => (spec, None),
    };
    Ok((
        spec,
        Dist {
            shard,
            fleet,
            start_at,
            barrier,
            met: None,
            save: a.save.clone(),
            thresholds,
        },
    ))
}

/// A start time is usable `now` when it has not passed by more than a second and is at
/// most a day ahead.
pub fn check_start(at: SystemTime, now: SystemTime) -> Result<(), Failure> {
    match at.duration_since(now) {
        Ok(ahead) if ahead > MAX_WAIT => Err(Failure::usage(anyhow!(
            "--start-at is {:.0} s from now: the most shootout waits is a day (check the time and its time zone: it is read as UTC)",
            ahead.as_secs_f64()
        ))),
        Ok(_) => Ok(()),
        Err(past) if past.duration() > LATE_START => Err(Failure::usage(anyhow!(
            "--start-at passed {:.1} s ago: this shard would start after the others; give a later time, or start the shards on a barrier instead (--barrier HOST:PORT), which needs no time agreed in advance",
            past.duration().as_secs_f64()
        ))),
        Err(_) => Ok(()),
    }
}

/// Writes the run's result (or its failure) to every `--save` target.
pub fn save(dist: &Dist, spec: &LoadSpec, result: Result<&RunResult, &str>) -> Result<(), Failure> {
    if dist.save.is_empty() {
        return Ok(());
    }
    let outcome = match result {
        Ok(r) if r.interrupted => Outcome::Interrupted,
        Ok(_) => Outcome::Complete,
        Err(e) => Outcome::Failed(e.to_string()),
    };
    let saved = SavedRun {
        shootout: env!("CARGO_PKG_VERSION").into(),
        shard: dist.shard,
        start_at: dist.start_at,
        barrier: dist.met,
        fleet: dist.fleet.clone().unwrap_or_else(|| spec.clone()),
        spec: spec.clone(),
        outcome,
        result: result.ok().cloned(),
    };
    write_saved(&dist.save, &saved)
}

/// Writes `saved` to each target: `-` is stdout between markers, a directory gets
/// `shard-I-of-N.json` (or `result.json`), anything else is a file path.
pub(crate) fn write_saved(targets: &[PathBuf], saved: &SavedRun) -> Result<(), Failure> {
    let json = saved.to_json();
    let stdout = |t: &&PathBuf| t.as_os_str() == "-";
    // Files first: a file that could not be written is an error even when stdout's reader
    // went away.
    for target in targets.iter().filter(|t| !stdout(t)) {
        let path = if target.is_dir() {
            target.join(file_name(saved.shard))
        } else {
            target.clone()
        };
        std::fs::write(&path, format!("{json}\n"))
            .with_context(|| format!("cannot write the result file {}", path.display()))
            .map_err(Failure::run)?;
    }
    if targets.iter().any(|t| stdout(&t)) {
        crate::output::emit(&in_log_block(&json))?;
    }
    Ok(())
}

/// The name of a result file in a `--save` directory.
fn file_name(shard: Option<Shard>) -> PathBuf {
    PathBuf::from(match shard {
        Some(s) => format!("shard-{}-of-{}.json", s.index, s.count),
        None => "result.json".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::{Pace, Target};

    fn fleet() -> LoadSpec {
        LoadSpec::builder(Target::parse("http://127.0.0.1:1/").unwrap())
            .connections(10)
            .bound(None, Some(Duration::from_secs(5)))
            .pace(Pace::Rate(1000.0))
            .build()
            .unwrap()
    }

    fn args(shard: Option<&str>, shards: Option<u32>) -> DistArgs {
        DistArgs {
            shard: shard.map(String::from),
            shards,
            barrier: None,
            barrier_listen: None,
            barrier_wait: "10m".into(),
            run_id: None,
            start_at: None,
            save: Vec::new(),
            fail_if: Vec::new(),
        }
    }

    #[test]
    fn the_index_comes_from_the_flag_or_the_job_s_environment() {
        let none = |_: &str| None;
        let (spec, d) = resolve(&args(Some("1/4"), None), fleet(), none).unwrap();
        assert_eq!(d.shard, Some(Shard::new(1, 4).unwrap()));
        assert_eq!((spec.connections, spec.pace), (3, Pace::Rate(250.0)));
        assert_eq!(d.fleet.unwrap().connections, 10);
        let env = |k: &str| (k == INDEX_VAR).then(|| "3".to_string());
        let (spec, d) = resolve(&args(None, Some(4)), fleet(), env).unwrap();
        assert_eq!(d.shard, Some(Shard::new(3, 4).unwrap()));
        assert_eq!(spec.offset, Duration::from_millis(3));
        let e = resolve(&args(None, Some(4)), fleet(), none).err().unwrap();
        assert!(
            e.error.to_string().contains("needs JOB_COMPLETION_INDEX"),
            "{}",
            e.error
        );
        let bad = |_: &str| Some("x".to_string());
        let e = resolve(&args(None, Some(4)), fleet(), bad).err().unwrap();
        assert!(e.error.to_string().contains("from 0 to 3"), "{}", e.error);
        let e = resolve(&args(Some("4/4"), None), fleet(), none)
            .err()
            .unwrap();
        assert!(
            e.error
                .to_string()
                .starts_with("--shard 4/4: shard 4 of 4 does not exist"),
            "{}",
            e.error
        );
        // Rate mode: more shards than connections run, each with one to start with; a
        // closed loop's connections are all it has, so it is refused.
        let (spec, _) = resolve(&args(Some("10/11"), None), fleet(), none).unwrap();
        assert_eq!(spec.connections, 1);
        let mut closed = fleet();
        closed.pace = Pace::Closed;
        let e = resolve(&args(Some("0/11"), None), closed, none)
            .err()
            .unwrap();
        assert!(e.error.to_string().contains("-c 11 or more"), "{}", e.error);
        assert!(resolve(&args(Some("0/11"), None), fleet(), none).is_ok());
    }

    #[test]
    fn a_start_time_long_past_or_far_ahead_is_refused() {
        let now = SystemTime::now();
        assert!(check_start(now + Duration::from_secs(30), now).is_ok());
        assert!(check_start(now - Duration::from_millis(900), now).is_ok());
        let e = check_start(now - Duration::from_secs(3), now)
            .err()
            .unwrap();
        assert!(
            e.error.to_string().contains("passed 3.0 s ago"),
            "{}",
            e.error
        );
        let e = check_start(now + Duration::from_secs(2 * 24 * 3600), now)
            .err()
            .unwrap();
        assert!(e.error.to_string().contains("a day"), "{}", e.error);
    }
}
