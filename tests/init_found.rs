//! `shootout init` finds servers as the user would start them: a server's program on PATH
//! and the Python its `#!` line names, the active virtualenv's Python, then `python3`'s
//! modules; the plan says where each was found and runs each with its own Python. The
//! Pythons here are shell scripts that answer the module question as a Python with those
//! modules would (and cannot start a server, so the probe falls back to wsgiref, which the
//! real python3 runs). Alone in its test binary: it writes programs and then runs them,
//! and no other test's thread may fork while one is open for writing (ETXTBSY).

use assert_cmd::Command;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// An executable file at `path` holding `text`.
fn program(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in Python that has `module`: it prints it when asked which modules import (the
/// script given with -c names `find_spec`), and fails at anything else.
fn python_with(path: &Path, module: &str) {
    program(
        path,
        &format!("#!/bin/sh\ncase \"$2\" in *find_spec*) echo {module} ;; *) exit 1 ;; esac\n"),
    );
}

#[test]
fn init_finds_servers_by_their_program_and_the_active_virtualenv_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("tinyapp.py"),
        "def app(environ, start_response):\n    start_response('200 OK', [('Content-Length', '2')])\n    return [b'hi']\n",
    )
    .unwrap();
    // /usr/bin/gunicorn as Debian installs it: run by a Python that is not the first
    // python3 on PATH.
    let gunicorn_python = d.join("system/bin/python3.11");
    python_with(&gunicorn_python, "gunicorn");
    let gunicorn = d.join("bin/gunicorn");
    program(
        &gunicorn,
        &format!(
            "#! {}\nfrom gunicorn.app.wsgiapp import run\nrun()\n",
            gunicorn_python.display()
        ),
    );
    // An active virtualenv (not on PATH) whose Python has waitress.
    let venv = d.join("venv");
    let venv_python = venv.join("bin/python");
    python_with(&venv_python, "waitress");
    let path = std::env::join_paths(
        std::iter::once(d.join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .current_dir(d)
        .env("PATH", &path)
        .env("VIRTUAL_ENV", &venv)
        .args(["init", "--wsgi", "tinyapp:app", "--out", "mine.toml"])
        .args(["--find-max", "--slo", "p99<50ms"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let plan = std::fs::read_to_string(d.join("mine.toml")).unwrap();
    let has = |s: &str| assert!(plan.contains(s), "{s}\n{plan}");
    has("# Run it with `shootout run mine.toml`");
    has(&format!(
        "# Found: {}, run by {}.\n[[contender]]\nname = \"gunicorn-sync\"\ncommand = \"exec {} -m gunicorn ",
        gunicorn.display(),
        gunicorn_python.display(),
        gunicorn_python.display()
    ));
    has(&format!(
        "# Found: the active virtualenv's {}.\n[[contender]]\nname = \"waitress\"\ncommand = \"exec {} -m waitress ",
        venv_python.display(),
        venv_python.display()
    ));
    has("# Found: the standard library.\n[[contender]]\nname = \"wsgiref\"\ncommand = \"\"\"exec python3 ");
    has("connections = 1\nfind_max = { slo = [\"p99<50ms\"] }\n");
    // The stand-ins cannot serve: wsgiref, the first that could, gave the expectations.
    has("what wsgiref answered");
    has("expect = { status = 200, length = 2 }\n");
    Command::cargo_bin("shootout")
        .unwrap()
        .current_dir(d)
        .args(["run", "mine.toml", "--dry-run"])
        .assert()
        .success();
}
