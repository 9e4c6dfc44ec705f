//! Runs whose shootout died: found, cleaned up after and marked `abandoned` by the next
//! shootout that opens the store (`run`, `ls`, `report`, `compare`).
//!
//! A run still `running` whose owner (see `shootout_harness::owner_state`) is gone was
//! ended by SIGKILL, a crash, a second Ctrl-C or a store that could not be written. What
//! its contenders and setups left running is found by the marker in their environment and
//! stopped; the run is marked `abandoned` (the store makes its contenders' statuses true);
//! one line per run on stderr says what happened. Finding and stopping need no write
//! access to the store; marking opens it for writing, and says so when it cannot.

use shootout_harness::{owner_prefix, owner_state, stop_marked, OwnerState, StoppedProcess};
use shootout_store::{Store, UnfinishedRun};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Between SIGTERM and SIGKILL for a dead run's leftovers.
const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// Looks at the `running` runs of `store` (the file at `db`), and for each whose shootout
/// is gone: stops its leftover processes, marks it `abandoned`, prints what it did.
/// Problems are printed, never fatal: they must not keep the user from their reports.
pub fn reclaim(db: &Path, store: &Store) {
    let runs = match store.unfinished_runs() {
        Ok(runs) => runs,
        Err(e) => {
            say!("warning: cannot look for abandoned runs: {e}");
            return;
        }
    };
    let mut writer: Option<Store> = None;
    for run in runs {
        let Some(owner) = &run.owner else {
            continue; // stored by an older shootout: nothing tells whether it lives
        };
        if owner_state(owner) != OwnerState::Gone {
            continue;
        }
        let stopped = stop_marked(&owner_prefix(owner), LEFTOVER_GRACE);
        let marked = match &mut writer {
            Some(w) => w.abandon_run(run.id, SystemTime::now()),
            None => Store::open(db).and_then(|mut w| {
                let done = w.abandon_run(run.id, SystemTime::now());
                writer = Some(w);
                done
            }),
        };
        let note = match marked {
            Ok(_) => String::new(),
            Err(e) => format!(" (it could not be marked abandoned: {e})"),
        };
        say!("{}{note}", describe(&run, owner.pid, &stopped));
    }
}

/// The line that tells what became of an abandoned run.
fn describe(run: &UnfinishedRun, pid: u32, stopped: &[StoppedProcess]) -> String {
    let head = format!(
        "run {} ({}) was abandoned: its shootout (pid {pid}) is gone",
        run.id, run.name
    );
    if stopped.is_empty() {
        return format!("{head}; nothing of it was left running");
    }
    let list: Vec<String> = stopped
        .iter()
        .map(|p| {
            let whose = p.tag.as_deref().and_then(|t| contender_of(run, t));
            let command: String = p.command.chars().take(60).collect();
            match whose {
                Some(name) => format!("pid {} `{command}` of contender {name}", p.pid),
                None => format!("pid {} `{command}`", p.pid),
            }
        })
        .collect();
    format!(
        "{head}; stopped {} leftover process{}: {}",
        stopped.len(),
        if stopped.len() == 1 { "" } else { "es" },
        list.join(", ")
    )
}

/// The contender of `run` whose marker `tag` is (or is a sub-marker of).
fn contender_of<'a>(run: &'a UnfinishedRun, tag: &str) -> Option<&'a str> {
    run.contenders.iter().find_map(|(name, own)| {
        let own = own.as_deref()?;
        let ok = tag == own || tag.strip_prefix(own).is_some_and(|r| r.starts_with('/'));
        ok.then_some(name.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_store::RunId;

    #[test]
    fn the_line_names_each_leftover_and_its_contender() {
        let run = UnfinishedRun {
            id: RunId(7),
            name: "daemons".into(),
            owner: None,
            contenders: vec![
                ("a/b".into(), Some("10.20/1-a_b".into())),
                ("a_b".into(), Some("10.20/2-a_b".into())),
            ],
        };
        let stopped = [
            StoppedProcess {
                pid: 31,
                tag: Some("10.20/2-a_b/setup".into()),
                command: "sleep 30".into(),
            },
            StoppedProcess {
                pid: 32,
                tag: None,
                command: "worker".into(),
            },
        ];
        assert_eq!(
            describe(&run, 10, &stopped),
            "run 7 (daemons) was abandoned: its shootout (pid 10) is gone; stopped 2 leftover \
             processes: pid 31 `sleep 30` of contender a_b, pid 32 `worker`"
        );
        assert_eq!(
            describe(&run, 10, &[]),
            "run 7 (daemons) was abandoned: its shootout (pid 10) is gone; nothing of it was \
             left running"
        );
    }
}
