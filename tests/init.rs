//! End-to-end tests of `shootout init`: a plan for a tiny WSGI app with the servers this
//! machine has (wsgiref at least), checked by `run --dry-run`, then run with `--quick`
//! with every contender verified and measured; and the flags' errors.

use assert_cmd::Command;

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

const APP: &str = "def app(environ, start_response):\n    body = b'Hello from a tiny WSGI app\\n'\n    start_response('200 OK', [('Content-Type', 'text/plain'), ('Content-Length', str(len(body)))])\n    return [body]\n";

#[test]
fn init_wsgi_plan_runs_quick_with_every_contender_measured() {
    let dir = tempfile::tempdir().unwrap();
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
    shootout()
        .current_dir(dir.path())
        .args(["run", "plan.toml", "--dry-run"])
        .assert()
        .success();
    // A short run: the sweep cut to its first level keeps the test to seconds.
    let short = plan.replace("concurrency = [1, 4, 16, 64]", "concurrency = [2]");
    std::fs::write(dir.path().join("plan.toml"), short).unwrap();
    let db = dir.path().join("s.db");
    shootout()
        .current_dir(dir.path())
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
