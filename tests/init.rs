//! End-to-end tests of `shootout init`: a plan for a tiny WSGI app, and one for a static
//! directory, with the servers this machine has (wsgiref and http.server at least; nginx,
//! Apache and mod_wsgi-express where installed), checked by `run --dry-run`, then run with
//! `--quick` with every contender verified and measured; the flags' errors; and the
//! probe's request and its reading of the answer, against in-process test servers.

use assert_cmd::Command;
use shootout_testserver::{Behavior, TestServer};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

const APP: &str = "def app(environ, start_response):\n    body = b'Hello from a tiny WSGI app\\n'\n    start_response('200 OK', [('Content-Type', 'text/plain'), ('Content-Length', str(len(body)))])\n    return [body]\n";

/// Whether a program of this name is on PATH (as `init` looks for nginx, Apache and
/// mod_wsgi-express).
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// A temporary directory that Apache's workers can read: started by root (as in CI), they
/// and mod_wsgi's daemons run as nobody.
fn readable_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `run --dry-run` accepts the plan in `dir`; then a short `--quick` run (the sweep cut to
/// its first level keeps it to seconds) measures every contender, each verified first.
fn runs_quick_with_every_contender_measured(dir: &std::path::Path, plan: &str) {
    shootout()
        .current_dir(dir)
        .args(["run", "plan.toml", "--dry-run"])
        .assert()
        .success();
    let short = plan.replace("concurrency = [1, 4, 16, 64]", "concurrency = [2]");
    std::fs::write(dir.join("plan.toml"), short).unwrap();
    let db = dir.join("s.db");
    shootout()
        .current_dir(dir)
        .args(["run", "plan.toml", "--quick", "--db"])
        .arg(&db)
        .assert()
        .success();
    let out = shootout()
        .args(["report", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let contenders = doc["contenders"].as_array().unwrap();
    assert_eq!(contenders.len(), plan.matches("[[contender]]").count());
    for c in contenders {
        assert_eq!(c["status"], "measured", "{c}");
    }
}

#[test]
fn init_wsgi_plan_runs_quick_with_every_contender_measured() {
    let dir = readable_tempdir();
    std::fs::write(dir.path().join("tinyapp.py"), APP).unwrap();
    shootout()
        .current_dir(dir.path())
        .args(["init", "--wsgi", "tinyapp:app", "--out", "plan.toml"])
        .assert()
        .success();
    let plan = std::fs::read_to_string(dir.path().join("plan.toml")).unwrap();
    // The probe's answer became the workload's expectations.
    assert!(plan.contains("expect = { status = 200, length = 27, body_contains = \"Hello from a tiny WSGI app\" }"), "{plan}");
    assert!(plan.contains("name = \"wsgiref\""), "{plan}");
    // mod_wsgi-express is a contender wherever it is installed (PyPI's mod_wsgi), and then
    // runs Apache, which must answer as the others and stop with the run.
    assert_eq!(
        plan.contains("name = \"mod_wsgi-express\""),
        on_path("mod_wsgi-express"),
        "{plan}"
    );
    runs_quick_with_every_contender_measured(dir.path(), &plan);
}

#[test]
fn init_static_plan_runs_quick_with_every_contender_measured() {
    let dir = readable_tempdir();
    let www = dir.path().join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(
        www.join("index.html"),
        "<h1>Hello from a static file</h1>\n",
    )
    .unwrap();
    shootout()
        .current_dir(dir.path())
        .args(["init", "--static", "www", "--out", "plan.toml"])
        .assert()
        .success();
    let plan = std::fs::read_to_string(dir.path().join("plan.toml")).unwrap();
    assert!(
        plan.contains("expect = { status = 200, length = 34, body_contains = \"<h1>Hello from a static file</h1>\" }"),
        "{plan}"
    );
    // nginx and Apache where they are installed, http.server always; each serves the same bytes.
    for (name, here) in [
        ("nginx", on_path("nginx")),
        ("apache", on_path("apache2") || on_path("httpd")),
        ("http.server", true),
    ] {
        assert_eq!(
            plan.contains(&format!("name = \"{name}\"")),
            here,
            "{name}: {plan}"
        );
    }
    runs_quick_with_every_contender_measured(dir.path(), &plan);
}

#[test]
fn init_refuses_an_app_that_is_not_module_colon_app() {
    shootout()
        .args(["init", "--wsgi", "tinyapp"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("give MODULE:APP"));
}

#[test]
fn init_refuses_a_url_off_loopback() {
    shootout()
        .args(["init", "--url", "http://192.0.2.1:80/"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("loopback"));
}

#[test]
fn init_slo_goes_with_find_max_and_is_checked_before_anything_runs() {
    shootout()
        .args(["init", "--url", "http://127.0.0.1:1/", "--slo", "p99<50ms"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--find-max"));
    shootout()
        .args([
            "init",
            "--url",
            "http://127.0.0.1:1/",
            "--find-max",
            "--slo",
            "p99<<5",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--slo p99<<5: "));
}

#[test]
fn init_wants_one_template() {
    shootout().args(["init"]).assert().code(2);
}

#[test]
fn init_asgi_without_any_asgi_server_says_what_to_install() {
    // This machine's python3 has no ASGI server outside the scenario's venv; when it
    // has one, the probe starts it instead and this case does not apply.
    let none_here = std::process::Command::new("python3")
        .args(["-c", "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ['uvicorn', 'hypercorn', 'granian', 'daphne']))"])
        .status()
        .unwrap();
    if !none_here.success() {
        eprintln!("skipped: python3 has an ASGI server");
        return;
    }
    shootout()
        .args(["init", "--asgi", "m:app"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("pip install hypercorn"));
}

/// `shootout init --url` for `server` with `--path path`.
fn init_url(server: &TestServer, path: &str) -> std::process::Output {
    shootout()
        .args(["init", "--url", &server.url("/"), "--path", path])
        .output()
        .unwrap()
}

#[test]
fn init_refuses_a_path_that_would_inject_a_header_before_anything_runs() {
    // CR/LF in --path went into the probe's request line and added a header to it.
    let server = TestServer::start(Behavior::Echo).unwrap();
    for path in ["/x\r\nX-Test: injected", "/x\ny", "/x\u{1b}[31m"] {
        let out = init_url(&server, path);
        assert_eq!(out.status.code(), Some(2), "{path:?}");
        assert!(out.stdout.is_empty(), "no plan for {path:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--path") && err.contains("percent-encode"),
            "{path:?}: {err}"
        );
    }
    let out = init_url(&server, "hello");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must start with /"));
    assert_eq!(server.connections(), 0, "nothing was sent");
}

#[test]
fn init_sends_a_path_with_a_space_percent_encoded_as_the_run_will() {
    // A space made the probe's request line malformed, and the plan was written anyway.
    let server = TestServer::start(Behavior::Echo).unwrap();
    let out = init_url(&server, "/a b?q=x y");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        server
            .last_request_head()
            .starts_with("GET /a%20b?q=x%20y HTTP/1.0\r\n"),
        "{}",
        server.last_request_head()
    );
    let plan = String::from_utf8(out.stdout).unwrap();
    assert!(plan.contains("path = \"/a%20b?q=x%20y\""), "{plan}");
    assert!(plan.contains("expect = { status = 200,"), "{plan}");
}

#[test]
fn init_reads_the_probe_answer_by_its_length_from_a_server_that_keeps_the_connection_open() {
    // The probe read until the close: it waited 10 s, then failed with a bare
    // "Resource temporarily unavailable (os error 11)".
    let server = TestServer::start(Behavior::KeepsOpen).unwrap();
    let out = init_url(&server, "/");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let plan = String::from_utf8(out.stdout).unwrap();
    assert!(
        plan.contains("expect = { status = 200, length = 12, body_contains = \"Hello World\" }"),
        "{plan}"
    );
}

#[test]
fn init_measures_a_chunked_answer_by_its_decoded_body() {
    // Read to the close, the chunk framing was counted as body and cut the snippet short.
    let server = TestServer::start(Behavior::Chunked { trailers: true }).unwrap();
    let out = init_url(&server, "/");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let plan = String::from_utf8(out.stdout).unwrap();
    assert!(
        plan.contains("expect = { status = 200, length = 12, body_contains = \"Hello World\" }"),
        "{plan}"
    );
}

/// A Flask app (Debian's python3-flask): two pages, a form, a page that needs a login (a
/// redirect), and one with a parameter.
const FLASK_APP: &str = r#"
from flask import Flask, redirect, request
app = Flask(__name__)

@app.get("/")
def index():
    return "Welcome to the notes"

@app.get("/about")
def about():
    return "About the notes"

@app.route("/login", methods=["GET", "POST"])
def login():
    if request.method == "POST":
        return redirect("/")
    return '<form method="post"><input name="user"></form>'

@app.get("/mine")
def mine():
    return redirect("/login")

@app.get("/notes/<int:note_id>")
def note(note_id):
    return f"note {note_id}"
"#;

/// `init --wsgi --out` reads a Flask app's routes and writes a journey beside the plan:
/// the four pages without a parameter, each expected to answer as it did (the redirect
/// too), the form's POST and the page with a parameter commented. Uncommented, the
/// plan's journey workload runs every step on every contender.
#[test]
fn init_wsgi_writes_a_journey_over_a_flask_apps_routes_that_a_run_measures() {
    let flask = std::process::Command::new("python3")
        .args(["-c", "import flask"])
        .status()
        .is_ok_and(|s| s.success());
    if !flask {
        eprintln!("skipped: python3 has no Flask (scripts/test installs python3-flask)");
        return;
    }
    let dir = readable_tempdir();
    std::fs::write(dir.path().join("notes.py"), FLASK_APP).unwrap();
    let out = shootout()
        .current_dir(dir.path())
        .args(["init", "--wsgi", "notes:app", "--out", "plan.toml"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("wrote plan.journey.toml (a journey of 4 step(s) over the app's routes)"),
        "{said}"
    );
    let journey = std::fs::read_to_string(dir.path().join("plan.journey.toml")).unwrap();
    for step in [
        "get = \"/\"\nexpect = { status = 200 }",
        "get = \"/about\"\nexpect = { status = 200 }",
        "get = \"/login\"\nexpect = { status = 200 }",
        "get = \"/mine\"\nexpect = { status = 302 }",
        "# POST /login: give it the body the app takes.",
        "# GET /notes/{note_id}: {note_id} needs a value.",
    ] {
        assert!(journey.contains(step), "{step}:\n{journey}");
    }
    let plan = std::fs::read_to_string(dir.path().join("plan.toml")).unwrap();
    assert!(
        plan.contains("# [[workload]]\n# name = \"journey\"\n# journey = \"plan.journey.toml\"\n"),
        "{plan}"
    );
    let uncommented = plan
        .replace(
            "# [[workload]]\n# name = \"journey\"\n# journey =",
            "[[workload]]\nname = \"journey\"\njourney =",
        )
        .replace("concurrency = [1, 4, 16, 64]", "concurrency = [2]");
    std::fs::write(dir.path().join("plan.toml"), &uncommented).unwrap();
    let db = dir.path().join("s.db");
    shootout()
        .current_dir(dir.path())
        .args(["run", "plan.toml", "--quick", "--db"])
        .arg(&db)
        .assert()
        .success();
    let out = shootout()
        .args(["report", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    for step in ["GET /about", "GET /mine"] {
        assert!(report.contains(step), "{step}:\n{report}");
    }
}

/// `init --wsgi --out` of an app that keeps no routing table init reads (a bare WSGI
/// callable) wrote no journey and said nothing, though the docs promise one beside the
/// plan: a note says why there is none.
#[test]
fn init_of_an_app_without_routes_says_why_no_journey_was_written() {
    let dir = readable_tempdir();
    std::fs::write(dir.path().join("tinyapp.py"), APP).unwrap();
    let out = shootout()
        .current_dir(dir.path())
        .args(["init", "--wsgi", "tinyapp:app", "--out", "plan.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("note: tinyapp:app keeps no routing table that init reads")
            && said.contains("no journey written beside plan.toml"),
        "{said}"
    );
    assert!(dir.path().join("plan.toml").is_file());
    assert!(!dir.path().join("plan.journey.toml").exists());
}
