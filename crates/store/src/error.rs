//! The store's errors. Every message names the store's file and what to do about it;
//! SQLite's own words are quoted and, when they have a known cause (another writer, a full
//! disk, a read-only file), followed by the fix.

use rusqlite::ErrorCode;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened as an SQLite database.
    #[error("cannot open the store {path}: {source} (check the path given to --db)")]
    Open {
        /// The store's file.
        path: String,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// `--db` named a directory (SQLite's words for it are "disk I/O error" or "unable to
    /// open database file").
    #[error("{path} is a directory, not a store: give --db a file in it, e.g. --db {}", std::path::Path::new(path).join("shootout.db").display())]
    Directory {
        /// The directory.
        path: String,
    },
    /// [`Store::open_existing`](crate::Store::open_existing) found no file.
    #[error(
        "there is no store at {path}: run `shootout run PLAN.toml` first, or give the right --db"
    )]
    Missing {
        /// The path looked at.
        path: String,
    },
    /// The file is an SQLite database, but not a shootout store (it is left unchanged).
    #[error("{path} is a SQLite file but not a shootout store; it was left as it was: give --db the path of a shootout store, or of a new file")]
    NotAStore {
        /// The file.
        path: String,
    },
    /// A read-only open found an empty file: no store yet.
    #[error("{path} is empty, not a shootout store yet: run a plan first (shootout run PLAN.toml --db {path})")]
    Empty {
        /// The file.
        path: String,
    },
    /// A read-only open found a schema older than this build's, which only a writer upgrades.
    #[error("{path} has schema {found}, older than this shootout's {known}, and a read-only open does not upgrade it: run a write command on it (shootout run PLAN.toml --db {path}) with write access to the file")]
    Outdated {
        /// The store's file.
        path: String,
        /// The file's `PRAGMA user_version`.
        found: i64,
        /// The schema this build reads ([`SCHEMA_VERSION`](crate::SCHEMA_VERSION)).
        known: i64,
    },
    /// A store in WAL mode, in a directory that cannot be written, whose `-wal` file holds
    /// writes not yet in the database: SQLite can read those only with its `-shm` index.
    #[error("{path} cannot be read without write access to its directory: its write-ahead log {path}-wal holds writes not yet in the file (open it once where it can be written, or copy it with its -wal file to a writable place)")]
    WalUnreadable {
        /// The store's file.
        path: String,
    },
    /// The file's schema is newer than this build knows.
    #[error("{path} was written by a newer shootout (schema {found}, this one knows {known}): upgrade shootout or use another --db")]
    TooNew {
        /// The store's file.
        path: String,
        /// The file's `PRAGMA user_version`.
        found: i64,
        /// The newest schema this build knows ([`SCHEMA_VERSION`](crate::SCHEMA_VERSION)).
        known: i64,
    },
    /// A migration step failed; the file keeps the schema it had before that step.
    #[error("cannot upgrade the store {path} to schema {version}: {}{}", brief(.error), migrate_hint(.error))]
    Migrate {
        /// The store's file.
        path: String,
        /// The schema version the failed step leads to.
        version: i64,
        /// SQLite's reason (quoted in the message without the migration's SQL).
        error: rusqlite::Error,
    },
    /// A read or a write failed.
    #[error("cannot {action} in the store {path}: {source}{}", hint(.source))]
    Sql {
        /// The store's file.
        path: String,
        /// What was being done ("record the step", "read the runs", …).
        action: &'static str,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// A histogram could not be serialized.
    #[error("cannot encode the {histogram} histogram of a step for the store {path}: {detail} (this is a bug in shootout: please report it)")]
    Encode {
        /// The store's file.
        path: String,
        /// Which histogram (`latency`, `connect`, …).
        histogram: &'static str,
        /// The serializer's reason.
        detail: String,
    },
    /// A value in the file cannot be what this build wrote.
    #[error("the store {path} holds a damaged {what}: {detail} (was the file edited or truncated? use another --db)")]
    Corrupt {
        /// The store's file.
        path: String,
        /// What was damaged ("latency histogram of step 12", …).
        what: String,
        /// What was wrong with it.
        detail: String,
    },
    /// An id that the store does not hold.
    #[error("the store {path} has no {what} (list the runs with `shootout ls`)")]
    NotFound {
        /// The store's file.
        path: String,
        /// What was looked for ("run 7", "contender 3").
        what: String,
    },
}

/// SQLite's reason without the statement text that rusqlite appends to syntax errors.
fn brief(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

/// What to do about a failed migration step.
fn migrate_hint(e: &rusqlite::Error) -> &'static str {
    match hint(e) {
        "" => " (is it shootout's file? keep a copy and use another --db)",
        known => known,
    }
}

/// What to do about an SQLite error, when its cause is known (with a leading space).
fn hint(e: &rusqlite::Error) -> &'static str {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            " (another shootout holds the store: wait for it to finish, or use another --db)"
        }
        Some(ErrorCode::DiskFull) => {
            " (the disk is full: free some space; the steps recorded before this one are kept)"
        }
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            " (the file or its directory is not writable: fix its permissions, or use another --db)"
        }
        Some(ErrorCode::ConstraintViolation) => {
            " (the record breaks the store's rules, e.g. a contender of another run: a bug in shootout)"
        }
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            " (the file is not a shootout store or is damaged: use another --db)"
        }
        _ => "",
    }
}
