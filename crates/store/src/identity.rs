//! Whose file is this? A shootout store carries [`APPLICATION_ID`] in SQLite's
//! `PRAGMA application_id` (set when the store is created), so that shootout never adds its
//! tables to, or switches to WAL, a database that belongs to something else. Stores made
//! before the id existed are recognised by their schema version and their `runs` table, and
//! receive the id the next time they are opened for writing.

use rusqlite::Connection;

/// The `PRAGMA application_id` of a shootout store: the ASCII bytes `shot`.
pub const APPLICATION_ID: i32 = 0x7368_6f74;

/// What a file opened as a store turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// A store with shootout's id.
    Store,
    /// A shootout store made before the id was set: schema version 1 or more, a `runs`
    /// table, application id 0.
    Unmarked,
    /// No table and no version: a new (or emptied) file, free to become a store.
    Empty,
    /// Someone else's database.
    Foreign,
}

/// Reads the file's id, version and tables (reads only: nothing is written).
pub(crate) fn identify(conn: &Connection) -> rusqlite::Result<Identity> {
    let id: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    if id == APPLICATION_ID {
        return Ok(Identity::Store);
    }
    if id != 0 {
        return Ok(Identity::Foreign);
    }
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let objects: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    let runs: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
        [],
        |r| r.get(0),
    )?;
    Ok(match (version, objects, runs) {
        (0, 0, _) => Identity::Empty,
        (v, _, 1) if v >= 1 => Identity::Unmarked,
        _ => Identity::Foreign,
    })
}
