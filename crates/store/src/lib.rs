//! shootout's store: one SQLite file (`shootout.db` by default) that keeps every run, its
//! contenders and every measured step, so that reports can be rendered after the fact from
//! the file alone.
//!
//! A store is marked with [`APPLICATION_ID`]; every open checks it first, so shootout never
//! writes to someone else's SQLite file. Readers ([`Store::open_read_only`]) open the file
//! with `SQLITE_OPEN_READ_ONLY` and never change it.
//!
//! Seams: `shootout run` (the CLI's orchestration) writes — [`Store::begin_run`], then
//! [`Store::add_contender`], one [`Store::record_step`] per step (its own transaction, so
//! Ctrl-C or a crash keeps every step before it), [`Store::finish_run`]. `shootout report`
//! and `shootout ls` read — [`Store::runs`], [`Store::run`], [`Store::contenders`],
//! [`Store::steps`], which rebuild each step's
//! [`RunResult`](shootout_model::RunResult). The store knows the model's
//! types and nothing of the engine, the harness or the reports.
//!
//! The file is in WAL mode with `synchronous = NORMAL` (a step committed survives a crash
//! of shootout; a power cut may lose the last steps, never corrupt the file), waits up to
//! 5 s for another writer, and carries its schema version in `PRAGMA user_version`
//! (see [`SCHEMA_VERSION`]; the schema is described in `docs/store.md`). Units: instants
//! and spans are integer nanoseconds in the file, [`SystemTime`] / [`Duration`] in memory;
//! histograms hold microseconds, as in the model.

mod codec;
mod error;
mod identity;
mod schema;
mod step;

pub use error::StoreError;
pub use identity::APPLICATION_ID;
pub use schema::SCHEMA_VERSION;
pub use shootout_model::stored::{
    ContenderId, ContenderRow, RunId, RunRow, RunSummary, StepId, StoredRun, StoredStep,
    UnfinishedRun,
};
pub use step::StepRecord;

/// The readers of a step's sample reservoir as stored, for the fuzz target `store_samples`
/// (fuzz/): a store's file may come from anyone, and its BLOBs are read by these.
#[doc(hidden)]
pub mod fuzzing {
    use shootout_model::stored::SampleTenths;
    use shootout_model::Sample;

    /// Checks a reservoir's BLOB as a report reads every step's, counting its good answers
    /// by tenth.
    pub fn check_samples(blob: &[u8]) -> Result<SampleTenths, String> {
        crate::codec::check_samples(blob)
    }

    /// Decodes a reservoir's BLOB into its samples, as a chart of a few steps does.
    pub fn decode_samples(blob: &[u8]) -> Result<Vec<Sample>, String> {
        crate::codec::decode_samples(blob)
    }

    /// A BLOB of the stored format whose inflated bytes are `raw` (the sample count, then
    /// the columns).
    pub fn blob_of(raw: &[u8]) -> Vec<u8> {
        crate::codec::samples_blob_of(raw)
    }
}

use identity::{identify, Identity};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Row};
use shootout_model::{ContenderStatus, MachineFacts, ProcessOwner, RunStatus};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a statement waits for another connection's write lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The file name used when the user gives no `--db`.
pub const DEFAULT_FILE: &str = "shootout.db";

/// How an in-memory store is named in messages.
const MEMORY: &str = "<memory>";

/// A run as it begins.
#[derive(Debug, Clone, Copy)]
pub struct NewRun<'a> {
    /// The plan's name (its `name`, or the plan file's stem).
    pub name: &'a str,
    /// The plan file's text, as the user gave it.
    pub plan_text: &'a str,
    /// The plan after defaults and flags were applied, as JSON text.
    pub plan_resolved: &'a str,
    /// The machine the run is made on.
    pub machine: &'a MachineFacts,
    /// Wall-clock start of the run.
    pub started: SystemTime,
}

/// A contender as it is added to a run.
#[derive(Debug, Clone, Copy)]
pub struct ContenderRecord<'a> {
    /// Its name in the plan.
    pub name: &'a str,
    /// The command that starts it, or the URL of a server shootout does not start.
    pub command: &'a str,
    /// The others are compared with it.
    pub baseline: bool,
    /// What became of it so far (update it with [`Store::update_contender`]).
    pub status: ContenderStatus,
    /// Why it failed (exit status and stderr tail, or the verification report); may be empty.
    pub detail: &'a str,
    /// Its version text, if the plan says how to get it.
    pub version: Option<&'a str>,
    /// Where its standard output was captured.
    pub stdout_log: Option<&'a Path>,
    /// Where its standard error was captured.
    pub stderr_log: Option<&'a Path>,
}

/// An open store. Writes go through `&mut self`, one writer per process; other processes
/// (a `shootout report` during a run) may read the same file at the same time.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// The file's path as shown in messages (`<memory>` for an in-memory store).
    path: String,
    /// The file, which a step's samples are read from again when asked (`None` in memory).
    file: Option<PathBuf>,
}

impl Store {
    /// Opens (creating it if needed) the store at `path` for writing and brings its schema
    /// up to date. A database that is not a shootout store is refused before anything in it
    /// is changed.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        if path.is_dir() {
            return Err(StoreError::Directory { path: shown });
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: shown.clone(),
            source,
        })?;
        Store::init(conn, shown, Some(path))
    }

    /// Opens the store at `path`, which must exist, for writing.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.display().to_string(),
            });
        }
        Store::open(path)
    }

    /// Opens the store at `path`, which must exist, for reading only (`ls`, `report`,
    /// `compare`): nothing in the file or its schema is changed, and a store the user
    /// cannot write (a read-only mount, another user's file) can be read. A store in WAL
    /// mode needs its `-shm` index, which SQLite cannot create in a directory it may not
    /// write: such a store is then read as immutable (SQLite's `immutable=1`), unless its
    /// `-wal` file holds writes not yet in the database, which only a writer can read.
    /// A store whose schema is older than this build's is not upgraded here
    /// ([`StoreError::Outdated`]: open it for writing once).
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        if !path.exists() {
            return Err(StoreError::Missing { path: shown });
        }
        if path.is_dir() {
            return Err(StoreError::Directory { path: shown });
        }
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal = std::fs::metadata(&wal).ok();
        if wal.is_none() {
            // No writer at work: check whose file it is as an immutable file first, so that
            // someone else's WAL database does not get SQLite's -wal and -shm beside it.
            Store::read_only(path, &shown, true)?;
        }
        match Store::read_only(path, &shown, false) {
            Err(StoreError::Open { source, .. })
                if matches!(
                    source.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) =>
            {
                if wal.is_some_and(|m| m.len() > 0) {
                    return Err(StoreError::WalUnreadable { path: shown });
                }
                Store::read_only(path, &shown, true)
            }
            other => other,
        }
    }

    /// A read-only connection to `path` (as an immutable file when `immutable`), checked to
    /// be a shootout store of this build's schema.
    fn read_only(path: &Path, shown: &str, immutable: bool) -> Result<Store, StoreError> {
        let open = |source| StoreError::Open {
            path: shown.to_string(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = if immutable {
            Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .map_err(open)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open)?;
        // The first read: a file that is not SQLite, or a WAL store without its index in a
        // directory that cannot be written, fails here.
        match identify(&conn).map_err(open)? {
            Identity::Foreign => {
                return Err(StoreError::NotAStore {
                    path: shown.to_string(),
                })
            }
            Identity::Empty => {
                return Err(StoreError::Empty {
                    path: shown.to_string(),
                })
            }
            Identity::Store | Identity::Unmarked => {}
        }
        let found = schema::version(&conn).map_err(open)?;
        schema::check_version(found, shown)?;
        if found < SCHEMA_VERSION {
            return Err(StoreError::Outdated {
                path: shown.to_string(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        Ok(Store {
            conn,
            path: shown.to_string(),
            file: Some(path.to_path_buf()),
        })
    }

    /// A fresh store in memory, gone when dropped (tests, or a run that must leave no file).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: MEMORY.into(),
            source,
        })?;
        Store::init(conn, MEMORY.into(), None)
    }

    /// Sets a writer's connection up: refuses someone else's database and a newer schema
    /// before touching the file, migrates, and marks the file as a shootout store.
    fn init(mut conn: Connection, path: String, file: Option<&Path>) -> Result<Store, StoreError> {
        let open = |source| StoreError::Open {
            path: path.clone(),
            source,
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open)?;
        // The first read: a file that is not SQLite fails here.
        let identity = identify(&conn).map_err(open)?;
        if identity == Identity::Foreign {
            return Err(StoreError::NotAStore { path });
        }
        let found = schema::version(&conn).map_err(open)?;
        schema::check_version(found, &path)?;
        if file.is_some() {
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
                .map_err(open)?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open)?;
        schema::migrate(&mut conn, &path)?;
        // After the schema: a file with the id always holds shootout's tables.
        if identity != Identity::Store {
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(|source| StoreError::Sql {
                    path: path.clone(),
                    action: "mark the file as a shootout store",
                    source,
                })?;
        }
        Ok(Store {
            conn,
            path,
            file: file.map(Path::to_path_buf),
        })
    }

    /// The store's path as shown in messages.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Turns an SQLite error into a [`StoreError::Sql`] naming the file and the action.
    fn sql(&self, action: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sql {
            path: self.path.clone(),
            action,
            source,
        }
    }

    fn not_found(&self, what: String) -> StoreError {
        StoreError::NotFound {
            path: self.path.clone(),
            what,
        }
    }

    fn corrupt(&self, what: impl Into<String>, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what: what.into(),
            detail: detail.into(),
        }
    }

    /// Records a new run with status [`RunStatus::Running`] and no end.
    pub fn begin_run(&mut self, run: &NewRun) -> Result<RunId, StoreError> {
        let machine = serde_json::to_string(run.machine).expect("MachineFacts serializes");
        self.conn
            .execute(
                "INSERT INTO runs (name, plan_text, plan_resolved, machine, started_ns, status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run.name,
                    run.plan_text,
                    run.plan_resolved,
                    machine,
                    codec::ns_since_epoch(run.started),
                    RunStatus::Running.as_str(),
                ],
            )
            .map_err(self.sql("record the run"))?;
        Ok(RunId(self.conn.last_insert_rowid()))
    }

    /// Sets a run's final status and end (may be called again to correct them).
    pub fn finish_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        ended: SystemTime,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, ended_ns = ?3 WHERE id = ?1",
                params![run.0, status.as_str(), codec::ns_since_epoch(ended)],
            )
            .map_err(self.sql("record the end of the run"))?;
        if n == 0 {
            return Err(self.not_found(format!("run {run}")));
        }
        Ok(())
    }

    /// Adds a contender to a run.
    pub fn add_contender(
        &mut self,
        run: RunId,
        c: &ContenderRecord,
    ) -> Result<ContenderId, StoreError> {
        let path_text = |p: Option<&Path>| p.map(|p| p.to_string_lossy().into_owned());
        self.conn
            .execute(
                "INSERT INTO contenders
                   (run_id, name, command, baseline, status, detail, version, stdout_log, stderr_log)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    run.0,
                    c.name,
                    c.command,
                    c.baseline,
                    c.status.as_str(),
                    c.detail,
                    c.version,
                    path_text(c.stdout_log),
                    path_text(c.stderr_log),
                ],
            )
            .map_err(self.sql("record the contender"))?;
        Ok(ContenderId(self.conn.last_insert_rowid()))
    }

    /// Sets what became of a contender and why.
    pub fn update_contender(
        &mut self,
        id: ContenderId,
        status: ContenderStatus,
        detail: &str,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE contenders SET status = ?2, detail = ?3 WHERE id = ?1",
                params![id.0, status.as_str(), detail],
            )
            .map_err(self.sql("update the contender"))?;
        if n == 0 {
            return Err(self.not_found(format!("contender {}", id.0)));
        }
        Ok(())
    }

    /// Records a contender's version, known once it serves (what listens on its port).
    pub fn set_contender_version(
        &mut self,
        id: ContenderId,
        version: &str,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE contenders SET version = ?2 WHERE id = ?1",
                params![id.0, version],
            )
            .map_err(self.sql("record the contender's version"))?;
        if n == 0 {
            return Err(self.not_found(format!("contender {}", id.0)));
        }
        Ok(())
    }

    /// Records where a contender's standard output and error were captured (`None`: not
    /// captured, e.g. it was never started).
    pub fn set_contender_logs(
        &mut self,
        id: ContenderId,
        stdout_log: Option<&Path>,
        stderr_log: Option<&Path>,
    ) -> Result<(), StoreError> {
        let path_text = |p: Option<&Path>| p.map(|p| p.to_string_lossy().into_owned());
        let n = self
            .conn
            .execute(
                "UPDATE contenders SET stdout_log = ?2, stderr_log = ?3 WHERE id = ?1",
                params![id.0, path_text(stdout_log), path_text(stderr_log)],
            )
            .map_err(self.sql("record the contender's logs"))?;
        if n == 0 {
            return Err(self.not_found(format!("contender {}", id.0)));
        }
        Ok(())
    }

    /// Records which shootout process runs `run` (see [`Store::unfinished_runs`]).
    pub fn record_owner(&mut self, run: RunId, owner: &ProcessOwner) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET owner_host = ?2, owner_boot_id = ?3, owner_pid_ns = ?4,
                        owner_pid = ?5, owner_start_ticks = ?6
                 WHERE id = ?1",
                params![
                    run.0,
                    owner.host,
                    owner.boot_id,
                    owner.pid_ns,
                    owner.pid,
                    i64::try_from(owner.start_ticks).unwrap_or(i64::MAX),
                ],
            )
            .map_err(self.sql("record the run's owner"))?;
        if n == 0 {
            return Err(self.not_found(format!("run {run}")));
        }
        Ok(())
    }

    /// Records the marker the processes of contender `id` carry in their environment.
    pub fn record_process_tag(&mut self, id: ContenderId, tag: &str) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE contenders SET process_tag = ?2 WHERE id = ?1",
                params![id.0, tag],
            )
            .map_err(self.sql("record the contender's process marker"))?;
        if n == 0 {
            return Err(self.not_found(format!("contender {}", id.0)));
        }
        Ok(())
    }

    /// The runs whose status is still `running`, oldest first, with their owners.
    pub fn unfinished_runs(&self) -> Result<Vec<UnfinishedRun>, StoreError> {
        let read = self.sql("read the unfinished runs");
        let runs: Vec<UnfinishedRun> = (|| {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id, name, owner_host, owner_boot_id, owner_pid_ns, owner_pid,
                        owner_start_ticks
                 FROM runs WHERE status = ?1 ORDER BY id",
            )?;
            let rows = stmt.query_map([RunStatus::Running.as_str()], |r| {
                let owner = match (
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<u32>>(5)?,
                    r.get::<_, Option<i64>>(6)?,
                ) {
                    (Some(host), Some(boot_id), Some(pid_ns), Some(pid), Some(start)) => {
                        Some(ProcessOwner {
                            host,
                            boot_id,
                            pid_ns,
                            pid,
                            start_ticks: u64::try_from(start).unwrap_or(0),
                        })
                    }
                    _ => None,
                };
                Ok(UnfinishedRun {
                    id: RunId(r.get(0)?),
                    name: r.get(1)?,
                    owner,
                    contenders: Vec::new(),
                })
            })?;
            let mut runs = rows.collect::<rusqlite::Result<Vec<_>>>()?;
            let mut stmt = self.conn.prepare_cached(
                "SELECT name, process_tag FROM contenders WHERE run_id = ?1 ORDER BY id",
            )?;
            for run in &mut runs {
                run.contenders = stmt
                    .query_map([run.id.0], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
            }
            Ok(runs)
        })()
        .map_err(read)?;
        Ok(runs)
    }

    /// Marks `run`, left `running` by a shootout that is gone, as
    /// [`RunStatus::Abandoned`] ending at `ended`, and makes its contenders' statuses
    /// true: one with stored steps was measured (until shootout died), one without was
    /// interrupted before it was measured. Contenders whose end was recorded keep it.
    /// Returns false (and changes nothing) when the run is not `running` any more.
    pub fn abandon_run(&mut self, run: RunId, ended: SystemTime) -> Result<bool, StoreError> {
        let path = self.path.clone();
        let sql = move |source| StoreError::Sql {
            path: path.clone(),
            action: "mark the run abandoned",
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&sql)?;
        let n = tx
            .execute(
                "UPDATE runs SET status = ?2, ended_ns = ?3 WHERE id = ?1 AND status = ?4",
                params![
                    run.0,
                    RunStatus::Abandoned.as_str(),
                    codec::ns_since_epoch(ended),
                    RunStatus::Running.as_str(),
                ],
            )
            .map_err(&sql)?;
        if n == 0 {
            return Ok(false);
        }
        // Contenders still `skipped` (the word a contender has until its end is recorded)
        // or `measured` while being measured.
        let unsettled = [
            ContenderStatus::Skipped.as_str(),
            ContenderStatus::Measured.as_str(),
        ];
        for (has_steps, status, detail) in [
            (
                true,
                ContenderStatus::Measured,
                "measured until its shootout died; the run was abandoned",
            ),
            (
                false,
                ContenderStatus::Interrupted,
                "its shootout died before it was measured; the run was abandoned",
            ),
        ] {
            tx.execute(
                &format!(
                    "UPDATE contenders SET status = ?2, detail = ?3
                     WHERE run_id = ?1 AND status IN (?4, ?5)
                       AND {} EXISTS (SELECT 1 FROM steps s WHERE s.contender_id = contenders.id)",
                    if has_steps { "" } else { "NOT" }
                ),
                params![run.0, status.as_str(), detail, unsettled[0], unsettled[1]],
            )
            .map_err(&sql)?;
        }
        tx.commit().map_err(&sql)?;
        Ok(true)
    }

    /// Every run, newest first, with its counts of contenders and steps.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT r.id, r.name, r.started_ns, r.ended_ns, r.status,
                        (SELECT count(*) FROM contenders c WHERE c.run_id = r.id),
                        (SELECT count(*) FROM steps s WHERE s.run_id = r.id)
                 FROM runs r ORDER BY r.started_ns DESC, r.id DESC",
            )
            .map_err(self.sql("read the runs"))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    RunId(r.get(0)?),
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, usize>(5)?,
                    r.get::<_, usize>(6)?,
                ))
            })
            .map_err(self.sql("read the runs"))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, name, started, ended, status, contenders, steps) =
                row.map_err(self.sql("read the runs"))?;
            out.push(RunSummary {
                id,
                name,
                started: codec::time_at(started),
                ended: ended.map(codec::time_at),
                status: self.run_status(id, &status)?,
                contenders,
                steps,
            });
        }
        Ok(out)
    }

    /// One run, if the store has it.
    pub fn run(&self, id: RunId) -> Result<Option<RunRow>, StoreError> {
        self.run_where("WHERE id = ?1", params![id.0])
    }

    /// Run `id` with its contenders and steps; `None` when there is no such run.
    pub fn load_run(&self, id: RunId) -> Result<Option<StoredRun>, StoreError> {
        let Some(run) = self.run(id)? else {
            return Ok(None);
        };
        Ok(Some(StoredRun {
            run,
            contenders: self.contenders(id)?,
            steps: self.steps(id)?,
            also: Vec::new(),
        }))
    }

    /// The run started last, if any.
    pub fn latest_run(&self) -> Result<Option<RunRow>, StoreError> {
        self.run_where("ORDER BY started_ns DESC, id DESC LIMIT 1", params![])
    }

    fn run_where(
        &self,
        clause: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Option<RunRow>, StoreError> {
        let sql = format!(
            "SELECT id, name, plan_text, plan_resolved, machine, started_ns, ended_ns, status
             FROM runs {clause}"
        );
        let raw = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut stmt| {
                stmt.query_row(args, |r| {
                    Ok((
                        RunId(r.get(0)?),
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, Option<i64>>(6)?,
                        r.get::<_, String>(7)?,
                    ))
                })
                .optional()
            })
            .map_err(self.sql("read the run"))?;
        let Some((id, name, plan_text, plan_resolved, machine, started, ended, status)) = raw
        else {
            return Ok(None);
        };
        let machine = serde_json::from_str(&machine)
            .map_err(|e| self.corrupt(format!("machine facts of run {id}"), e.to_string()))?;
        Ok(Some(RunRow {
            id,
            name,
            plan_text,
            plan_resolved,
            machine,
            started: codec::time_at(started),
            ended: ended.map(codec::time_at),
            status: self.run_status(id, &status)?,
        }))
    }

    fn run_status(&self, id: RunId, word: &str) -> Result<RunStatus, StoreError> {
        word.parse::<RunStatus>()
            .map_err(|_| self.corrupt(format!("status of run {id}"), format!("'{word}'")))
    }

    /// The contenders of a run, in the order they were added.
    pub fn contenders(&self, run: RunId) -> Result<Vec<ContenderRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, run_id, name, command, baseline, status, detail, version,
                        stdout_log, stderr_log
                 FROM contenders WHERE run_id = ?1 ORDER BY id",
            )
            .map_err(self.sql("read the contenders"))?;
        let rows = stmt
            .query_map([run.0], |r: &Row| {
                Ok((
                    ContenderRow {
                        id: ContenderId(r.get(0)?),
                        run: RunId(r.get(1)?),
                        name: r.get(2)?,
                        command: r.get(3)?,
                        baseline: r.get(4)?,
                        status: ContenderStatus::Skipped,
                        detail: r.get(6)?,
                        version: r.get(7)?,
                        stdout_log: r.get::<_, Option<String>>(8)?.map(PathBuf::from),
                        stderr_log: r.get::<_, Option<String>>(9)?.map(PathBuf::from),
                    },
                    r.get::<_, String>(5)?,
                ))
            })
            .map_err(self.sql("read the contenders"))?;
        let mut out = Vec::new();
        for row in rows {
            let (mut c, status) = row.map_err(self.sql("read the contenders"))?;
            c.status = status.parse::<ContenderStatus>().map_err(|_| {
                self.corrupt(
                    format!("status of contender {}", c.id.0),
                    format!("'{status}'"),
                )
            })?;
            out.push(c);
        }
        Ok(out)
    }
}

/// `file:PATH?immutable=1`, the path percent-encoded as SQLite's URI filenames want.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests;
