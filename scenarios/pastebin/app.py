"""A small pastebin in the manner of seed 001's "glue-boy", with two storage back ends.

    GET  /content/<id>   the paste as text/plain; updates the paste's "last accessed" time
    POST /               form field `content`: stores a paste, redirects to /content/<id>
    GET  /               the form

PASTE_BACKEND=fs|sqlite and PASTE_DIR=... (environment) choose the back end and where it
keeps its data. The two are feature for feature the same:

- fs: one file per paste, PASTE_DIR/pastes/<id>. "Last accessed" is the file's atime, set
  explicitly on every read (os.utime: mounts with relatime/noatime would not do it), so
  the usual UNIX tools report and clean up (`find pastes -atime +30 -delete`).
- sqlite: one table in PASTE_DIR/pastes.db, with an `accessed` column. As in the article's
  port, every request opens its own connection and closes it before answering; a read is
  two statements (UPDATE the access time, then SELECT the body). SQLite's defaults are
  kept (rollback journal, synchronous=FULL, Python's 5 s busy timeout).
  PASTE_SQLITE_WAL=1 (not in the article) switches to write-ahead logging with
  synchronous=NORMAL: a commit no longer waits for the disk, and readers do not block.
"""
import os
import secrets
import sqlite3
import time

from flask import Flask, abort, redirect, request, Response

BACKEND = os.environ.get("PASTE_BACKEND", "fs")
DIR = os.environ.get("PASTE_DIR", "data")
FILES = os.path.join(DIR, "pastes")
DB = os.path.join(DIR, "pastes.db")
WAL = os.environ.get("PASTE_SQLITE_WAL") == "1"

FORM = """<!doctype html>
<html><head><title>paste</title></head><body>
<form method="post" action="/"><textarea name="content" rows="25" cols="80"></textarea>
<p><input type="submit" value="paste"></p></form>
</body></html>
"""

SCHEMA = """CREATE TABLE IF NOT EXISTS pastes (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    created REAL NOT NULL,
    accessed REAL NOT NULL
)"""


def new_id() -> str:
    return secrets.token_hex(3)  # six hex digits, like the article's a8137a


# --- file system ---------------------------------------------------------------------------

def fs_store(content: str, paste_id: str | None = None) -> str:
    for _ in range(10):
        pid = paste_id or new_id()
        try:
            fd = os.open(os.path.join(FILES, pid), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if paste_id:
                raise
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(content)
        return pid
    raise RuntimeError("no free paste id after 10 tries")


def fs_get(pid: str) -> str | None:
    path = os.path.join(FILES, pid)
    try:
        with open(path, encoding="utf-8") as f:
            content = f.read()
            mtime = os.fstat(f.fileno()).st_mtime
    except FileNotFoundError:
        return None
    os.utime(path, (time.time(), mtime))  # last accessed = now; mtime stays the creation time
    return content


# --- SQLite --------------------------------------------------------------------------------

def connect() -> sqlite3.Connection:
    conn = sqlite3.connect(DB)
    if WAL:
        conn.execute("PRAGMA synchronous = NORMAL")  # per connection; journal_mode is kept in the file
    return conn


def sqlite_store(content: str, paste_id: str | None = None) -> str:
    conn = connect()
    try:
        for _ in range(10):
            pid = paste_id or new_id()
            now = time.time()
            try:
                with conn:  # commits
                    conn.execute(
                        "INSERT INTO pastes (id, content, created, accessed) VALUES (?, ?, ?, ?)",
                        (pid, content, now, now),
                    )
            except sqlite3.IntegrityError:
                if paste_id:
                    raise
                continue
            return pid
        raise RuntimeError("no free paste id after 10 tries")
    finally:
        conn.close()


def sqlite_get(pid: str) -> str | None:
    conn = connect()
    try:
        with conn:
            conn.execute("UPDATE pastes SET accessed = ? WHERE id = ?", (time.time(), pid))
        row = conn.execute("SELECT content FROM pastes WHERE id = ?", (pid,)).fetchone()
    finally:
        conn.close()
    return row[0] if row else None


def init(backend: str = BACKEND) -> None:
    os.makedirs(FILES if backend == "fs" else DIR, exist_ok=True)
    if backend == "sqlite":
        conn = connect()
        if WAL:
            conn.execute("PRAGMA journal_mode = WAL")
        with conn:
            conn.execute(SCHEMA)
        conn.close()


store, get = (fs_store, fs_get) if BACKEND == "fs" else (sqlite_store, sqlite_get)

app = Flask(__name__)


@app.get("/")
def form():
    return FORM


@app.post("/")
def paste():
    content = request.form.get("content", "")
    if not content:
        abort(400)
    return redirect(f"/content/{store(content)}")


@app.get("/content/<pid>")
def content(pid: str):
    if not pid.isalnum():
        abort(404)
    body = get(pid)
    if body is None:
        abort(404)
    return Response(body, mimetype="text/plain")
