"""login-app: a small Flask application that users reach in steps.

A reader logs in (a form with a CSRF token kept in the session), reads their home page,
asks the JSON API for a token and lists their notes with it. A writer logs in, posts a
note through the home page's CSRF-protected form and reads it back. The session is
Flask's signed cookie and the API token is signed too, so any worker process can serve
any step; notes live in one SQLite file (write-ahead log) that every worker shares.

Passwords are compared as stored: a real application hashes them, and a hash made to be
slow (pbkdf2's 600,000 rounds take a good part of a second) would be the whole
measurement. The same app serves WSGI (`app`) and, through a2wsgi, ASGI (`asgi_app`).
"""

import csv
import hmac
import os
import secrets
import sqlite3
from html import escape

from flask import Flask, abort, g, jsonify, redirect, request, session
from itsdangerous import BadSignature, URLSafeSerializer

HERE = os.path.dirname(os.path.abspath(__file__))
DB = os.environ.get("LOGIN_APP_DB", os.path.join(HERE, "notes.db"))

app = Flask(__name__)
app.secret_key = os.environ.get("LOGIN_APP_SECRET", "login-app: not a secret")
tokens = URLSafeSerializer(app.secret_key, salt="api token")

with open(os.path.join(HERE, "users.csv"), newline="") as f:
    USERS = {row["name"]: row["password"] for row in csv.DictReader(f)}


def db():
    if "db" not in g:
        g.db = sqlite3.connect(DB, timeout=30)
        g.db.execute("PRAGMA journal_mode=WAL")
        g.db.execute("PRAGMA synchronous=NORMAL")
    return g.db


@app.teardown_appcontext
def close_db(_):
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()


def init_db():
    conn = sqlite3.connect(DB)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, text TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS notes_owner ON notes (owner, id)")
    conn.commit()
    conn.close()


def fresh_csrf():
    session["csrf"] = secrets.token_urlsafe(16)
    return session["csrf"]


def csrf_ok():
    sent = request.form.get("csrf", "")
    kept = session.get("csrf", "")
    return bool(kept) and hmac.compare_digest(sent, kept)


@app.get("/login")
def login_form():
    csrf = fresh_csrf()
    return (
        "<!doctype html><title>Log in</title><form method=post action=/login>"
        f'<input type="hidden" name="csrf" value="{csrf}">'
        '<input name="user"><input name="password" type="password"><button>Log in</button></form>'
    )


@app.post("/login")
def login():
    if not csrf_ok():
        abort(403)
    name = request.form.get("user", "")
    password = USERS.get(name)
    if password is None or not hmac.compare_digest(password, request.form.get("password", "")):
        abort(401)
    session.clear()
    session["user"] = name
    return redirect("/", 302)


def user():
    name = session.get("user")
    if name is None:
        abort(401)
    return name


@app.get("/")
def home():
    name = user()
    csrf = fresh_csrf()
    rows = db().execute(
        "SELECT id, substr(text, 1, 40) FROM notes WHERE owner = ? ORDER BY id DESC LIMIT 10", (name,)
    ).fetchall()
    items = "".join(f'<li><a href="/notes/{i}">{escape(t)}</a></li>' for i, t in rows)
    return (
        f"<!doctype html><title>Notes</title><h1>Notes of {escape(name)}</h1><ul>{items}</ul>"
        "<form method=post action=/notes>"
        f'<input type="hidden" name="csrf" value="{csrf}">'
        "<textarea name=text></textarea><button>Save</button></form>"
    )


@app.post("/notes")
def add_note():
    name = user()
    if not csrf_ok():
        abort(403)
    text = request.form.get("text", "")
    if not text or len(text) > 100_000:
        abort(400)
    conn = db()
    cur = conn.execute("INSERT INTO notes (owner, text) VALUES (?, ?)", (name, text))
    conn.commit()
    return redirect(f"/notes/{cur.lastrowid}", 302)


@app.get("/notes/<int:note>")
def read_note(note):
    name = user()
    row = db().execute("SELECT text FROM notes WHERE id = ? AND owner = ?", (note, name)).fetchone()
    if row is None:
        abort(404)
    return f"<!doctype html><title>Note {note}</title><pre>{escape(row[0])}</pre>"


@app.post("/api/token")
def api_token():
    body = request.get_json(silent=True) or {}
    name, password = str(body.get("user", "")), str(body.get("password", ""))
    if name not in USERS or not hmac.compare_digest(USERS[name], password):
        abort(401)
    return jsonify(token=tokens.dumps(name))


@app.get("/api/notes")
def api_notes():
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("Bearer "):
        abort(401)
    try:
        name = tokens.loads(auth[len("Bearer ") :])
    except BadSignature:
        abort(401)
    rows = db().execute(
        "SELECT id FROM notes WHERE owner = ? ORDER BY id DESC LIMIT 20", (name,)
    ).fetchall()
    return jsonify(user=name, notes=[r[0] for r in rows])


@app.get("/ready")
def ready():
    return "ok"


init_db()


def asgi_app_factory():
    from a2wsgi import WSGIMiddleware

    return WSGIMiddleware(app)


try:
    asgi_app = asgi_app_factory()
except ImportError:
    asgi_app = None
