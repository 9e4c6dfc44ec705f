//! End-to-end tests of `shootout run` and `shootout ls`: the quickstart plan, contenders
//! that fail in every way the lifecycle knows, a contender given by URL, and Ctrl-C. Each
//! test checks what was stored and that no contender process was left behind.

mod common;

use assert_cmd::Command;
use shootout_model::{ContenderStatus, LoadLevel, Protocol, RunStatus, StepStatus};
use shootout_store::Store;
use shootout_testserver::{Behavior, TestServer, WsBehavior, WsServer};
use std::path::PathBuf;
use std::process::Stdio;

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

/// Processes whose command line mentions `needle` (a test's own temp dir).
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) && !cmd.contains("cargo") && !cmd.contains("shootout run") {
            found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    found
}

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new(plan: &str) -> Case {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
        Case { dir }
    }
    fn plan(&self) -> PathBuf {
        self.dir.path().join("plan.toml")
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("shootout.db")
    }
    fn store(&self) -> Store {
        Store::open_existing(&self.db()).unwrap()
    }
    /// `shootout run PLAN --db DB`, to be given more arguments or run.
    fn run_cmd(&self) -> Command {
        let mut cmd = shootout();
        cmd.arg("run").arg(self.plan()).arg("--db").arg(self.db());
        cmd
    }
    /// Runs the plan; asserts it succeeded; returns the store.
    fn run_ok(&self) -> Store {
        let out = self.run_cmd().output().unwrap();
        common::assert_ok(&out);
        self.store()
    }
    fn no_orphans(&self) {
        let left = processes_mentioning(&self.dir.path().display().to_string());
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

const QUICK: &str = r#"
[defaults]
warmup = 0
requests = 200
repeat = 1
cooldown = "0s"
"#;

fn plan_with(contenders: &str, workload: &str) -> String {
    format!("name = \"test\"\n{QUICK}\n{contenders}\n{workload}\n[load]\nconcurrency = [2]\n")
}

const GET_INDEX: &str =
    "[[workload]]\nname = \"index\"\npath = \"/index.html\"\nexpect = { status = 200 }\n";

fn python_server(name: &str, extra: &str) -> String {
    format!(
        "[[contender]]\nname = \"{name}\"\ncommand = \"python3 -m http.server {{port}} --bind 127.0.0.1 --directory {{tmp}}\"\nsetup = \"echo hello > {{tmp}}/index.html\"\n{extra}\n"
    )
}

#[test]
fn quickstart_plan_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    let out = shootout()
        .args(["run", "plans/quickstart/plan.toml", "--quick", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in ["http.server (baseline)", "wsgiref", "% of base", "times"] {
        assert!(stdout.contains(want), "{want} missing in\n{stdout}");
    }
    let store = Store::open_existing(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 6, "2 contenders × 3 levels × 1 repetition");
    for s in &steps {
        assert_eq!(s.status, StepStatus::Complete);
        assert_eq!(s.result.counts.failed(), 0);
        assert!(s.result.counts.ok > 0);
        assert!(!s.resources.is_empty(), "server samples");
    }
    assert!(store
        .contenders(run.id)
        .unwrap()
        .iter()
        .all(|c| c.status == ContenderStatus::Measured));
    // `ls` lists it; the table printed later is the one printed now.
    let ls = shootout().args(["ls", "--db"]).arg(&db).output().unwrap();
    let ls = String::from_utf8_lossy(&ls.stdout);
    assert!(ls.contains("complete") && ls.contains("quickstart"), "{ls}");
    assert!(processes_mentioning(&dir.path().display().to_string()).is_empty());
}

#[test]
fn dry_run_starts_nothing() {
    let page = "[[workload]]\nname = \"page\"\npath = \"/p\"\nexpect = { status = 200, length = 7348, body_contains = \"marker\" }\n";
    let c = Case::new(&plan_with(&python_server("a", ""), page));
    let out = shootout()
        .args(["run", "--dry-run"])
        .arg(c.plan())
        .arg("--db")
        .arg(c.db())
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("steps: 1 (1 contender × 1 workload × 1 level × 1 repetition)"),
        "{stdout}"
    );
    // Every expectation shows, so a wrong one is seen before the run.
    assert!(
        stdout.contains("page: GET /p (expect status 200, 7348 bytes, body containing \"marker\")"),
        "{stdout}"
    );
    assert!(!c.db().exists(), "a dry run writes no store");
}

/// Every plan under `scenarios/` (each `.toml` with a contender; journey files are not
/// plans) passes a dry run: it parses, its journeys and bodies are read, and a plan
/// nothing in CI runs whole (a capacity plan, a second plan of a scenario) cannot rot
/// unseen. A dry run starts nothing and writes no store.
#[test]
fn every_scenario_plan_passes_a_dry_run() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut plans = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        for f in files {
            let f = f.unwrap().path();
            let is_plan = f.extension().is_some_and(|e| e == "toml")
                && std::fs::read_to_string(&f).is_ok_and(|t| t.contains("[[contender]]"));
            if is_plan {
                plans.push(f);
            }
        }
    }
    plans.sort();
    assert!(
        plans.iter().any(|p| p.ends_with("login-app/capacity.toml")),
        "{plans:?}"
    );
    let db = tempfile::tempdir().unwrap();
    for plan in &plans {
        let out = shootout()
            .args(["run", "--dry-run"])
            .arg(plan)
            .arg("--db")
            .arg(db.path().join("never.db"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            plan.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(!db.path().join("never.db").exists());
}

#[test]
fn a_bad_plan_is_one_line_with_the_line_number() {
    let c = Case::new(&plan_with(&python_server("a", "bogus = 1"), GET_INDEX));
    let out = shootout().arg("run").arg(c.plan()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plan.toml:")
            && err.contains("unknown field `bogus`")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// Runs a plan whose only contender fails as `extra` makes it; returns its stored status
/// and detail.
fn lone_failure(contender: &str, workload: &str) -> (Case, ContenderStatus, String) {
    let c = Case::new(&plan_with(contender, workload));
    let out = c.run_cmd().output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert!(store.steps(run.id).unwrap().is_empty());
    let contender = store.contenders(run.id).unwrap().remove(0);
    c.no_orphans();
    (c, contender.status, contender.detail)
}

#[test]
fn a_contender_that_crashes_at_start_is_reported_with_its_stderr() {
    let crash = "[[contender]]\nname = \"crash\"\ncommand = \"echo boom on {port} >&2; exit 3\"\n";
    let (_c, status, detail) = lone_failure(crash, GET_INDEX);
    assert_eq!(status, ContenderStatus::Exited);
    assert!(
        detail.contains("boom on") && detail.contains("exit status: 3"),
        "{detail}"
    );
}

#[test]
fn a_contender_that_never_becomes_ready_is_stopped() {
    let never = "[[contender]]\nname = \"never\"\ncommand = \"sleep 30 # {port}\"\nready = { timeout = \"300ms\" }\n";
    let (_c, status, _) = lone_failure(never, GET_INDEX);
    assert_eq!(status, ContenderStatus::NeverReady);
}

#[test]
fn a_failed_setup_skips_the_contender() {
    let bad = "[[contender]]\nname = \"bad\"\ncommand = \"sleep 30 # {port}\"\nsetup = \"echo no such thing >&2; exit 7\"\n";
    let (_c, status, detail) = lone_failure(bad, GET_INDEX);
    assert_eq!(status, ContenderStatus::SetupFailed);
    assert!(
        detail.contains("exit status: 7") && detail.contains("no such thing"),
        "{detail}"
    );
}

#[test]
fn a_contender_with_wrong_answers_is_not_measured_and_we_see_what_it_said() {
    let wrong =
        "[[workload]]\nname = \"missing\"\npath = \"/nope.html\"\nexpect = { status = 200 }\n";
    let (_c, status, detail) = lone_failure(&python_server("py", ""), wrong);
    assert_eq!(status, ContenderStatus::VerificationFailed);
    assert!(
        detail.contains("0 ok, 20 failed (20 status); status codes 404: 20"),
        "{detail}"
    );
    assert!(detail.contains("one answer: HTTP/1.0 404"), "{detail}");
}

#[test]
fn a_contender_that_ignores_sigterm_is_killed() {
    let stubborn = "[[contender]]\nname = \"stubborn\"\ncommand = \"trap '' TERM; exec python3 -m http.server {port} --bind 127.0.0.1 --directory {tmp}\"\nsetup = \"echo hello > {tmp}/index.html\"\n";
    let c = Case::new(&plan_with(stubborn, GET_INDEX));
    c.run_ok();
    c.no_orphans();
}

#[test]
fn a_contender_that_dies_mid_step_is_marked_crashed_and_the_run_goes_on() {
    // Serves 100 requests, then exits: past verification (68) and into the first step.
    let script = r#"
import http.server, os, sys
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        n[0] += 1
        if n[0] > 100:
            os._exit(9)
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;
    let plan = plan_with(
        &format!("{}\n[[contender]]\nname = \"dies\"\ncommand = \"python3 {{plan_dir}}/dies.py {{port}}\"\n", python_server("steady", "")),
        GET_INDEX.replace("/index.html", "/").as_str(),
    )
    .replace("requests = 200", "requests = 2000");
    let c = Case::new(&plan);
    std::fs::write(c.dir.path().join("dies.py"), script).unwrap();
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let contenders = store.contenders(run.id).unwrap();
    let dies = contenders.iter().find(|x| x.name == "dies").unwrap();
    assert_eq!(dies.status, ContenderStatus::Crashed, "{}", dies.detail);
    let steady = contenders.iter().find(|x| x.name == "steady").unwrap();
    assert_eq!(steady.status, ContenderStatus::Measured);
    let steps = store.steps(run.id).unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s.contender == dies.id && s.status == StepStatus::ContenderDied),
        "{:?}",
        steps.iter().map(|s| s.status).collect::<Vec<_>>()
    );
    c.no_orphans();
}

/// Runs a one-step plan of `workload` against the server at `url` (a URL contender);
/// returns the stored run and the step's good answers.
fn one_step_at(url: &str, workload: &str) -> (shootout_model::stored::RunRow, u64) {
    let contender = format!(
        "[[contender]]\nname = \"theirs\"\nurl = \"{}\"\n",
        url.trim_end_matches('/')
    );
    let c = Case::new(&plan_with(&contender, workload));
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    (run, steps[0].result.counts.ok)
}

#[test]
fn a_url_contender_is_measured_without_launching_anything() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let workload = "[[workload]]\nname = \"hello\"\npath = \"/\"\nexpect = { status = 200, body_contains = \"Hello\" }\n";
    let (_, ok) = one_step_at(&server.url("/"), workload);
    assert_eq!(ok, 200);
    assert_eq!(
        server.requests(),
        20 + 48 + 200,
        "verification, then the step"
    );
}

#[test]
fn an_h2_workload_is_verified_and_measured_over_http2() {
    let server =
        shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::Hello).unwrap();
    let workload = "[[workload]]\nname = \"hello\"\npath = \"/\"\nprotocol = \"h2\"\nstreams = 4\nexpect = { status = 200, body_contains = \"Hello\" }\n";
    let (run, ok) = one_step_at(&server.url("/"), workload);
    assert_eq!(ok, 200);
    // An HTTP/1.1 request would not have been answered by this server at all.
    assert_eq!(
        server.answers(),
        20 + 48 + 200,
        "verification, then the step"
    );
    let resolved = run.plan_resolved;
    assert!(resolved.contains(r#""protocol":"h2""#), "{resolved}");
}

/// A gRPC workload (`protocol = "grpc"`): its schema compiled, its message encoded and
/// its reply checked (`expect.json`) as `load`'s are, over HTTP/2; a contender whose
/// replies miss the expected fields fails verification and is not measured.
#[test]
fn a_grpc_workload_is_verified_and_measured_as_calls() {
    let greeter = shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::Grpc(
        shootout_testserver::GrpcBehavior::Greeter,
    ))
    .unwrap();
    let workload = |json: &str| {
        format!(
            "[[workload]]\nname = \"hello\"\nprotocol = \"grpc\"\nmethod = \"helloworld.Greeter/SayHello\"\n\
             proto = \"{}\"\nmessage = '{{\"name\":\"bob\"}}'\nstreams = 4\nexpect = {{ json = {{ message = \"{json}\" }} }}\n",
            shootout_testserver::GREETER_PROTO
        )
    };
    let (run, ok) = one_step_at(&greeter.url("/"), &workload("hello bob"));
    assert_eq!(ok, 200);
    assert_eq!(
        greeter.answers(),
        20 + 48 + 200,
        "verification, then the step"
    );
    assert!(
        run.plan_resolved.contains(r#""protocol":"h2""#),
        "{}",
        run.plan_resolved
    );

    let c = Case::new(&plan_with(
        &format!(
            "[[contender]]\nname = \"theirs\"\nurl = \"{}\"\n",
            greeter.url("").trim_end_matches('/')
        ),
        &workload("hello x"),
    ));
    let out = c.run_cmd().output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("failed verification") && said.contains("body"),
        "{said}"
    );
}

/// A gRPC workload without `proto` or `protoset` takes its schema from the contender's
/// server reflection once the contender is up, before its verification: two questions
/// (the service's file, then its import), then the calls as with a named schema. The dry
/// run says so; a contender that serves no reflection fails its verification, saying how
/// to give the schema instead.
#[test]
fn a_grpc_workload_without_a_schema_asks_the_contender_s_reflection() {
    use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server, Reflect};
    let workload = "[[workload]]\nname = \"hello\"\nprotocol = \"grpc\"\nmethod = \"helloworld.Greeter/SayHello\"\n\
         message = '{\"name\":\"bob\"}'\nstreams = 4\nexpect = { json = { message = \"hello bob\" } }\n";
    let server =
        H2Server::start(H2Behavior::Grpc(GrpcBehavior::Reflection(Reflect::Serves))).unwrap();
    let (run, ok) = one_step_at(&server.url("/"), workload);
    assert_eq!(ok, 200);
    assert_eq!(
        server.answers(),
        2 + 20 + 48 + 200,
        "two questions, verification, then the step"
    );
    assert!(
        run.plan_resolved.contains(r#""schema":"reflection""#),
        "{}",
        run.plan_resolved
    );

    let contender = |s: &H2Server| {
        format!(
            "[[contender]]\nname = \"theirs\"\nurl = \"{}\"\n",
            s.url("").trim_end_matches('/')
        )
    };
    let c = Case::new(&plan_with(&contender(&server), workload));
    let out = shootout()
        .args(["run", "--dry-run"])
        .arg(c.plan())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "hello: POST /helloworld.Greeter/SayHello (gRPC, schema by reflection at start)"
        ),
        "{said}"
    );

    let bare =
        H2Server::start(H2Behavior::Grpc(GrpcBehavior::Reflection(Reflect::Absent))).unwrap();
    let c = Case::new(&plan_with(&contender(&bare), workload));
    let out = c.run_cmd().output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("failed verification")
            && said.contains("workload 'hello': no schema for helloworld.Greeter: without proto or protoset, shootout asks the server's reflection"),
        "{said}"
    );
    assert_eq!(bare.answers(), 2, "v1, then v1alpha asked; no call sent");
}

/// `compress = "gzip"`: each message goes compressed with gzip and compressed replies
/// are read, as `load --grpc-compress gzip` does; the stored plan and the dry run say so.
#[test]
fn a_grpc_workload_compresses_its_messages_with_gzip() {
    use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server, GREETER_PROTO};
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Gzip)).unwrap();
    let workload = format!(
        "[[workload]]\nname = \"hello\"\nprotocol = \"grpc\"\nmethod = \"helloworld.Greeter/SayHello\"\n\
         proto = \"{GREETER_PROTO}\"\ncompress = \"gzip\"\nmessage = '{{\"name\":\"bob\"}}'\n\
         expect = {{ json = {{ message = \"hello bob\" }} }}\n"
    );
    let (run, ok) = one_step_at(&server.url("/"), &workload);
    assert_eq!(ok, 200, "every reply inflated and read as hello bob");
    assert_eq!(server.compressed_messages(), 20 + 48 + 200);
    assert!(
        run.plan_resolved.contains(r#""compress":"gzip""#),
        "{}",
        run.plan_resolved
    );
    let c = Case::new(&plan_with(
        "[[contender]]\nname = \"theirs\"\nurl = \"http://127.0.0.1:9\"\n",
        &workload,
    ));
    let out = shootout()
        .args(["run", "--dry-run"])
        .arg(c.plan())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!(
            "(gRPC, schema from {GREETER_PROTO}, messages compressed with gzip)"
        )),
        "{said}"
    );
}

/// A streaming gRPC workload (`stream = { … }`): its calls go as `load`'s do, its units
/// are its messages, and the store keeps its calls (their shape names the unit) for the
/// reports.
#[test]
fn a_bidi_grpc_workload_is_measured_in_messages_and_stored_with_its_calls() {
    let chat = shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::Grpc(
        shootout_testserver::GrpcBehavior::Chat,
    ))
    .unwrap();
    let workload = format!(
        "[[workload]]\nname = \"chat\"\nprotocol = \"grpc\"\nmethod = \"helloworld.Greeter/Chat\"\n\
         proto = \"{}\"\nmessage = '{{\"name\":\"bob\"}}'\nstreams = 4\nstream = {{ messages = 3 }}\n\
         expect = {{ json = {{ message = \"hello bob\" }} }}\n",
        shootout_testserver::GREETER_PROTO
    );
    let contender = format!(
        "[[contender]]\nname = \"theirs\"\nurl = \"{}\"\n",
        chat.url("").trim_end_matches('/')
    );
    let c = Case::new(&plan_with(&contender, &workload));
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    let r = &steps[0].result;
    assert_eq!(r.counts.ok, 600, "200 calls of 3 messages");
    let st = r.stream.as_deref().expect("the store keeps the calls");
    assert_eq!(
        (st.shape, st.calls_ok, st.sent, st.replies),
        ("bidi", 200, 600, 600)
    );
    assert_eq!(st.first_reply.len(), 200);
    // The report says what the workload's requests are.
    let out = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("chat (gRPC bidi streaming: a message and its reply count as one)"),
        "{text}"
    );
    // The JSON report names the unit of each result, the HTML report the workload's.
    let out = shootout()
        .args(["report", "--format", "json", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["stream_unit"], "message", "{doc}");
    let html = c.dir.path().join("r.html");
    shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(
            "<h2>Workload: chat (gRPC bidi streaming: a message and its reply count as one)</h2>"
        ),
        "{page}"
    );
}

/// A contender over TLS with a certificate of its own: trusted through the plan's
/// `tls.cacert` (the server's self-signed certificate, written beside the plan), every
/// request answered over https; without `tls` the same server fails verification on its
/// certificate and is not measured.
#[test]
fn a_url_contender_over_tls_is_checked_with_the_plans_ca() {
    let server = TestServer::start_tls(Behavior::Hello).unwrap();
    let workload = "[[workload]]\nname = \"hello\"\npath = \"/\"\nexpect = { status = 200, body_contains = \"Hello\" }\n";
    let url = server.url("");
    let contender = format!(
        "[[contender]]\nname = \"theirs\"\nurl = \"{url}\"\ntls = {{ cacert = \"{{plan_dir}}/ca.pem\" }}\n"
    );
    let c = Case::new(&plan_with(&contender, workload));
    std::fs::write(
        c.dir.path().join("ca.pem"),
        server.certificate_pem().unwrap(),
    )
    .unwrap();
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].result.counts.ok, 200);
    assert_eq!(server.requests(), 20 + 48 + 200);

    let untrusted = Case::new(&plan_with(
        &format!("[[contender]]\nname = \"theirs\"\nurl = \"{url}\"\n"),
        workload,
    ));
    let out = untrusted.run_cmd().output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("failed verification"), "{said}");
    assert_eq!(server.requests(), 20 + 48 + 200, "no request got through");
}

/// A contender shootout starts that serves only TLS (Python's http.server behind
/// `ssl`, a certificate made by its setup): readiness is its port accepting, since a
/// plain HTTP probe would get no answer; then it is verified and measured over
/// `https://127.0.0.1:{port}` with `tls.insecure`.
#[test]
fn a_launched_contender_with_tls_is_spoken_to_over_https() {
    let serve = "import http.server, ssl, sys\n\
        port, d = int(sys.argv[1]), sys.argv[2]\n\
        h = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=d, **k)\n\
        s = http.server.ThreadingHTTPServer(('127.0.0.1', port), h)\n\
        c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
        c.load_cert_chain(d + '/cert.pem', d + '/key.pem')\n\
        s.socket = c.wrap_socket(s.socket, server_side=True)\n\
        s.serve_forever()\n";
    let contender = "[[contender]]\nname = \"py-tls\"\n\
        command = \"python3 {plan_dir}/serve.py {port} {tmp}\"\n\
        setup = \"echo hello > {tmp}/index.html && openssl req -x509 -newkey rsa:2048 -nodes -keyout {tmp}/key.pem -out {tmp}/cert.pem -subj /CN=localhost -days 1 2>/dev/null\"\n\
        tls = { insecure = true }\n";
    let c = Case::new(&plan_with(contender, GET_INDEX));
    std::fs::write(c.dir.path().join("serve.py"), serve).unwrap();
    let out = c.run_cmd().output().unwrap();
    common::assert_ok(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("verified at https://127.0.0.1:"), "{said}");
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].result.counts.ok, 200);
    c.no_orphans();
}

/// One workload, two contenders spoken to differently: one over HTTP/2 with 4 streams (its
/// own `protocol` and `streams`), the other over HTTP/1.1 pipelined by 2. Each server
/// answers only its own protocol, so every answer counted proves which was spoken; the
/// steps store it and the report labels each contender with it.
#[test]
fn contenders_of_one_workload_are_measured_over_their_own_protocols() {
    let h2 = shootout_testserver::H2Server::start(shootout_testserver::H2Behavior::Hello).unwrap();
    let h1 = TestServer::start(Behavior::Hello).unwrap();
    let contenders = format!(
        "[[contender]]\nname = \"one\"\nurl = \"{}\"\npipeline = 2\n\n[[contender]]\nname = \"two\"\nurl = \"{}\"\nprotocol = \"h2\"\nstreams = 4\n",
        h1.url("/").trim_end_matches('/'),
        h2.url("/").trim_end_matches('/'),
    );
    let workload = "[[workload]]\nname = \"hello\"\npath = \"/\"\nexpect = { status = 200, body_contains = \"Hello\" }\n";
    let c = Case::new(&plan_with(&contenders, workload));
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let names: Vec<(shootout_model::stored::ContenderId, String)> = store
        .contenders(run.id)
        .unwrap()
        .into_iter()
        .map(|c| (c.id, c.name))
        .collect();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 2);
    for s in &steps {
        let name = &names.iter().find(|(id, _)| *id == s.contender).unwrap().1;
        let want = match name.as_str() {
            "one" => shootout_model::Wire {
                protocol: shootout_model::Protocol::Http1,
                streams: 1,
                pipeline: 2,
            },
            _ => shootout_model::Wire {
                protocol: shootout_model::Protocol::Http2,
                streams: 4,
                pipeline: 1,
            },
        };
        assert_eq!(s.wire, Some(want), "{name}");
        assert_eq!(s.result.counts.ok, 200, "{name}");
    }
    assert_eq!(
        h2.answers(),
        20 + 48 + 200,
        "verification, then the step, over h2"
    );
    assert_eq!(
        h1.requests(),
        20 + 48 + 200,
        "verification, then the step, over h1"
    );
    let out = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("one (http/1.1 × 2 pipelined, baseline)"),
        "{text}"
    );
    assert!(text.contains("two (h2 × 4 streams)"), "{text}");
    // CSV: the wire of every step, in its own columns.
    let out = shootout()
        .args(["report", "--format", "csv", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&out.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (contender, protocol, streams, pipeline) = (
        col("contender"),
        col("protocol"),
        col("streams"),
        col("pipeline"),
    );
    let mut seen = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        seen.push((f[contender], f[protocol], f[streams], f[pipeline]));
    }
    seen.sort();
    assert_eq!(
        seen,
        [("one", "http/1.1", "1", "2"), ("two", "h2", "4", "1")],
        "{csv}"
    );
    // HTML: a tag beside each name in the workload's table.
    let html = c.dir.path().join("report.html");
    let out = shootout()
        .args(["report", "--html"])
        .arg(&html)
        .arg("--db")
        .arg(c.db())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("one <span class=\"tag\">http/1.1 × 2 pipelined</span>"),
        "{page}"
    );
    assert!(
        page.contains("two <span class=\"tag\">h2 × 4 streams</span>"),
        "{page}"
    );
    let resolved = run.plan_resolved;
    assert!(
        resolved.contains(r#""name":"two","protocol":"h2","streams":4"#),
        "{resolved}"
    );
}

#[test]
fn a_contenders_version_command_is_stored_and_a_failing_one_is_a_note() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let url = server.url("/");
    let url = url.trim_end_matches('/');
    // A URL contender behind a wrapper: only its plan knows how to ask its version.
    let contenders = format!(
        "[[contender]]\nname = \"theirs\"\nurl = \"{url}\"\nversion = \"echo; echo '  serve 1.0 ' && basename {{plan_dir}}\"\n\
         [[contender]]\nname = \"broken\"\nurl = \"{url}\"\nversion = \"echo no such thing >&2; exit 3\"\n"
    );
    let workload = "[[workload]]\nname = \"hello\"\npath = \"/\"\n";
    let c = Case::new(&plan_with(&contenders, workload));
    let out = c.run_cmd().output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: contender 'broken': no version from `echo no such thing >&2; exit 3`: it failed, saying: no such thing"),
        "{err}"
    );
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let versions: Vec<Option<String>> = store
        .contenders(run.id)
        .unwrap()
        .into_iter()
        .map(|c| c.version)
        .collect();
    assert_eq!(versions, vec![Some("serve 1.0".to_string()), None]);
    // A placeholder only known once the contender runs is refused before anything starts.
    let bad = Case::new(&plan_with(
        &format!("[[contender]]\nname = \"x\"\nurl = \"{url}\"\nversion = \"serve --port {{port}} -v\"\n"),
        workload,
    ));
    let out = bad.run_cmd().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("version uses {port}, but it runs once before any contender starts"),
        "{err}"
    );
}

#[test]
fn the_version_stored_is_that_of_what_listens_not_of_the_commands_first_word() {
    // `mkdir` first, as `init --static`'s nginx; a daemon that leaves the tree, as servers
    // started by `setsid` do; a contender whose port is served by a program of another.
    let contenders = "[[contender]]\nname = \"first-word\"\ncommand = \"mkdir -p {tmp}/www && echo hi > {tmp}/www/index.html && exec python3 -m http.server {port} --bind 127.0.0.1 --directory {tmp}/www\"\n\
         [[contender]]\nname = \"daemon\"\ncommand = \"sh -c '(setsid python3 -m http.server {port} --bind 127.0.0.1 --directory {tmp} >/dev/null 2>&1 &); exec sleep 600'\"\n";
    let workload = "[[workload]]\nname = \"hello\"\npath = \"/\"\n";
    let c = Case::new(&plan_with(contenders, workload));
    let out = c.run_cmd().output().unwrap();
    common::assert_ok(&out);
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .unwrap();
    let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
    assert!(python.starts_with("Python 3."), "{python}");
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let versions: Vec<Option<String>> = store
        .contenders(run.id)
        .unwrap()
        .into_iter()
        .map(|c| c.version)
        .collect();
    assert_eq!(versions, vec![Some(python.clone()), Some(python.clone())]);
    // The first word's version is stored nowhere, not even among the machine's.
    assert_eq!(
        run.machine.versions.keys().collect::<Vec<_>>(),
        vec!["shootout"]
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains(&format!("first-word: {python}, daemon: {python}")),
        "{table}"
    );
    c.no_orphans();
}

#[test]
fn ctrl_c_keeps_completed_steps_and_leaves_no_orphan() {
    let plan = format!(
        "name = \"long\"\n[defaults]\nwarmup = 0\nduration = \"1s\"\nrepeat = 30\ncooldown = \"0s\"\n{}\n{GET_INDEX}\n[load]\nconcurrency = [1]\n",
        python_server("py", "")
    );
    let c = Case::new(&plan);
    let mut child = c.spawn_run();
    // Interrupt once two steps are stored (bounded: the plan has 30 one-second steps).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        // Read only once shootout has set the store up (its WAL file exists): a reader
        // opening the file in its first instant would take part in creating it.
        let wal = c.db().with_file_name(format!(
            "{}-wal",
            c.db().file_name().unwrap().to_string_lossy()
        ));
        let stored = wal
            .exists()
            .then(|| Store::open_existing(&c.db()).ok())
            .flatten()
            .and_then(|s| {
                let run = s.latest_run().ok()??;
                Some(s.steps(run.id).ok()?.len())
            });
        if stored.unwrap_or(0) >= 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no step stored in time"
        );
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "shootout ended early ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::yield_now();
    }
    unsafe { kill(child.id() as i32, 2) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    let steps = store.steps(run.id).unwrap();
    assert!(steps.len() >= 2 && steps.len() < 30, "{}", steps.len());
    assert!(steps[..steps.len() - 1]
        .iter()
        .all(|s| s.status == StepStatus::Complete));
    // The step in progress is kept as interrupted; when Ctrl-C came between two steps, no
    // step is made up for it: whatever is stored measured something.
    let last = steps.last().unwrap();
    assert!(
        matches!(last.status, StepStatus::Interrupted | StepStatus::Complete),
        "{:?}",
        last.status
    );
    assert!(last.result.counts.completed > 0);
    // Regression: the contender measured until Ctrl-C was left "skipped, not started yet".
    let contender = store.contenders(run.id).unwrap().remove(0);
    assert_eq!(
        contender.status,
        ContenderStatus::Measured,
        "{}",
        contender.detail
    );
    c.no_orphans();
}

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn only_rate_and_stages_in_a_dry_run() {
    let plan = |load: &str| {
        format!(
            "name = \"x\"\n{QUICK}\n{}{}{GET_INDEX}\n[load]\n{load}\n",
            python_server("a", ""),
            python_server("b", "")
        )
    };
    let dry = |plan_text: String, extra: &[&str]| {
        let c = Case::new(&plan_text);
        let out = shootout()
            .args(["run", "--dry-run"])
            .arg(c.plan())
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, _) = dry(plan("rate = [100, 200]\nconnections = 8"), &["--only", "b"]);
    assert_eq!(code, Some(0));
    // b alone: it is the baseline now.
    assert!(
        out.contains("  b (baseline): ") && !out.contains("  a"),
        "{out}"
    );
    assert!(out.contains("load: rate=100, rate=200"), "{out}");
    assert!(
        out.contains("index: GET /index.html (expect status 200)"),
        "{out}"
    );
    let stages =
        "stages = [ {concurrency = 10, duration = \"2s\"}, {concurrency = 50, duration = \"3s\"} ]";
    let (_, out, _) = dry(plan(stages), &[]);
    assert!(out.contains("load: c=10 (2.0 s), c=50 (3.0 s)"), "{out}");
    // 2 contenders × 1 workload × 1 repetition × (2 s + 3 s), no cooldown.
    assert!(out.contains("about 10 s of measurement"), "{out}");
    // --duration: every stage as long as it says, for a full-length run.
    let (code, out, _) = dry(plan(stages), &["--duration", "1m"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("load: c=10, c=50"), "{out}");
    assert!(out.contains("each 60.0 s"), "{out}");
    assert!(out.contains("about 240 s of measurement"), "{out}");
    let (code, _, err) = dry(plan(stages), &["--duration", "0s"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("more than 0s"), "{err}");
    let (code, _, err) = dry(plan(stages), &["--duration", "1m", "--quick"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot be used with"), "{err}");
    let (code, _, err) = dry(plan("concurrency = [1]"), &["--only", "zzz"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("the plan has: a, b"), "{err}");
    // A capacity search: said per workload and in place of the levels' steps.
    let search = "find_max = { slo = [\"p99<50ms\"], from = 200, to = 5000 }";
    let (code, out, _) = dry(
        plan(search).replace("requests = 200", "duration = \"2s\""),
        &[],
    );
    assert_eq!(code, Some(0));
    assert!(
        out.contains("    capacity search within p99<50ms, from 200 to 5000 req/s, 64 connections at the start"),
        "{out}"
    );
    assert!(
        out.contains("capacity searches: 2 contenders × 1 workload × 1 repetition, each step after 1.0 s settling until its SLOs are decided (met after at least 2.0 s, broken after at least 1.0 s, its deadline at least 2.0 s)"),
        "{out}"
    );
    assert!(!out.contains("steps:"), "{out}");
    // --quick: a first look, each search step at most 5 s.
    let (code, out, _) = dry(
        plan(search).replace("requests = 200", "duration = \"2s\""),
        &["--quick"],
    );
    assert_eq!(code, Some(0));
    assert!(
        out.contains("until its SLOs are decided (met after at least 1.0 s, broken after at least 1.0 s, its deadline at least 1.0 s and at most 5.0 s)"),
        "{out}"
    );
    // A search by the fixed rule says so under its workload.
    let fixed = search.replace("to = 5000 }", "to = 5000, step_end = \"deadline\" }");
    let (code, out, _) = dry(
        plan(&fixed).replace("requests = 200", "duration = \"2s\""),
        &[],
    );
    assert_eq!(code, Some(0));
    assert!(
        out.contains("64 connections at the start, each step to its deadline (the fixed rule)\n")
            && out.contains(
                "each step after 1.0 s settling to its deadline (at least 2.0 s), as many steps"
            ),
        "{out}"
    );
    // A step counted in requests cannot search.
    let (code, _, err) = dry(plan(search), &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("find_max runs each step for a time"), "{err}");
}

/// A port taken between shootout's choice and the server's bind: the contender's first
/// start fails with EADDRINUSE (as Python prints it), and shootout starts it again on
/// another port instead of giving up on it.
#[test]
fn a_taken_port_is_retried_on_another() {
    let plan = plan_with(
        "[[contender]]\nname = \"py\"\ncommand = \"if [ -e {tmp}/tried ]; then exec python3 -m http.server {port} --bind 127.0.0.1 --directory {tmp}; fi; touch {tmp}/tried; echo 'OSError: [Errno 98] Address already in use' >&2; exit 1\"\nsetup = \"echo hello > {tmp}/index.html\"\n",
        GET_INDEX,
    );
    let c = Case::new(&plan);
    let out = c.run_cmd().output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("its port was taken").count(), 1, "{err}");
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(
        store.contenders(run.id).unwrap()[0].status,
        ContenderStatus::Measured
    );
    c.no_orphans();
}

#[test]
fn the_store_names_each_contenders_log_files() {
    // Started, then crashed: both logs were captured, and its stderr is in the one named.
    let crash = "[[contender]]\nname = \"crash\"\ncommand = \"echo boom on {port} >&2; exit 3\"\n";
    let c = Case::new(&plan_with(crash, GET_INDEX));
    c.run_cmd().assert().code(1);
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let crashed = store.contenders(run.id).unwrap().remove(0);
    let (out, err) = (crashed.stdout_log.unwrap(), crashed.stderr_log.unwrap());
    assert!(out.is_file(), "{}", out.display());
    assert!(
        std::fs::read_to_string(&err).unwrap().contains("boom on"),
        "{}",
        err.display()
    );
    assert!(err.starts_with(c.dir.path().canonicalize().unwrap()));
    // A setup that failed: the contender never started, so no log is named.
    let bad =
        "[[contender]]\nname = \"bad\"\ncommand = \"sleep 30 # {port}\"\nsetup = \"exit 7\"\n";
    let (c, status, _) = lone_failure(bad, GET_INDEX);
    assert_eq!(status, ContenderStatus::SetupFailed);
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let never = store.contenders(run.id).unwrap().remove(0);
    assert_eq!((never.stdout_log, never.stderr_log), (None, None));
}

/// Processes whose environment or command line mentions `needle`: every process a
/// contender or its setup starts inherits the plan's `env`, daemons included, so a test
/// that puts its own directory there finds all of them (shootout itself is not one).
fn processes_carrying(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let read = |file: &str| {
            std::fs::read(e.path().join(file))
                .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
                .unwrap_or_default()
        };
        let (env, cmd) = (read("environ"), read("cmdline"));
        let stat = read("stat");
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        let program = cmd.split(' ').next().unwrap_or("");
        if zombie || program.ends_with("/shootout") || cmd.contains("cargo") {
            continue;
        }
        if env.contains(needle) || cmd.contains(needle) {
            found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    found
}

/// A contender that daemonises as many servers do: a subshell starts the server with
/// `setsid` and exits (the server is orphaned, in a session of its own), the command goes
/// on with `sleep`. Its setup leaves a daemon of its own behind. Both carry `MARK`.
fn daemonizing(name: &str) -> String {
    format!(
        r#"[[contender]]
name = "{name}"
command = "sh -c '(setsid python3 -m http.server {{port}} --bind 127.0.0.1 --directory {{tmp}} >/dev/null 2>&1 &); exec sleep 600'"
setup = "echo hello > {{tmp}}/index.html; (setsid sleep 600 &)"
env = {{ MARK = "{{plan_dir}}" }}
"#
    )
}

impl Case {
    /// Starts `shootout run` on the plan without waiting.
    fn spawn_run(&self) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("shootout"))
            .arg("run")
            .arg(self.plan())
            .arg("--db")
            .arg(self.db())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
    /// Waits (at most 60 s) until `cond` holds, failing if shootout ends first.
    fn wait_for(
        &self,
        child: &mut std::process::Child,
        what: &str,
        mut cond: impl FnMut() -> bool,
    ) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !cond() {
            assert!(std::time::Instant::now() < deadline, "{what}: not in time");
            if child.try_wait().unwrap().is_some() {
                let out =
                    std::mem::replace(child, std::process::Command::new("true").spawn().unwrap())
                        .wait_with_output()
                        .unwrap();
                panic!(
                    "shootout ended before {what} ({}):\n{}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    /// Steps stored so far in the latest run (0 until shootout has set the store up).
    fn steps_stored(&self) -> usize {
        let wal = self.dir.path().join("shootout.db-wal");
        wal.exists()
            .then(|| Store::open_existing(&self.db()).ok())
            .flatten()
            .and_then(|s| {
                let run = s.latest_run().ok()??;
                Some(s.steps(run.id).ok()?.len())
            })
            .unwrap_or(0)
    }
    /// Asserts that nothing carrying the case's directory is left (within 10 s: what was
    /// SIGKILLed may take a moment to vanish).
    fn nothing_left(&self) {
        let needle = self.dir.path().display().to_string();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let left = processes_carrying(&needle);
            if left.is_empty() {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "left behind: {left:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Waits (at most 30 s) for shootout to exit; returns its status and stderr.
fn exit_of(child: std::process::Child) -> (std::process::ExitStatus, String) {
    let pid = child.id() as i32;
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !waiter.is_finished() {
        if std::time::Instant::now() > deadline {
            unsafe { kill(pid, 9) };
            panic!("shootout did not exit within 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = waiter.join().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_double_forking_contender_and_setup_leave_nothing_after_a_normal_end() {
    let c = Case::new(&plan_with(&daemonizing("daemon"), GET_INDEX));
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    // The daemon is the server: it is sampled with the `sleep` that leads the group.
    let samples = &steps[0].resources;
    assert!(
        samples.iter().all(|s| s.processes == 2),
        "the server was not sampled: {samples:?}"
    );
    c.nothing_left();
}

#[test]
fn ctrl_c_and_sigterm_stop_a_double_forking_contender_and_its_setup_daemon() {
    for signal in [2, 15] {
        let plan = format!(
            "name = \"long\"\n[defaults]\nwarmup = 0\nduration = \"1s\"\nrepeat = 30\ncooldown = \"0s\"\n{}\n{GET_INDEX}\n[load]\nconcurrency = [1]\n",
            daemonizing("daemon")
        );
        let c = Case::new(&plan);
        let mut child = c.spawn_run();
        c.wait_for(&mut child, "a stored step", || c.steps_stored() >= 1);
        unsafe { kill(child.id() as i32, signal) };
        let (status, stderr) = exit_of(child);
        assert_eq!(status.code(), Some(130), "signal {signal}: {stderr}");
        let store = c.store();
        let run = store.latest_run().unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Interrupted);
        c.nothing_left();
    }
}

#[test]
fn ctrl_c_during_setup_or_the_ready_wait_stops_at_once_and_stores_no_step() {
    // A setup that would run for 10 minutes, leaving a daemon; a server that never
    // answers. Each writes a file when it has started: the signal comes after that.
    let slow_setup = "[[contender]]\nname = \"slow-setup\"\ncommand = \"python3 -m http.server {port} --bind 127.0.0.1\"\nsetup = \"(setsid sleep 600 &); touch {plan_dir}/started; sleep 600\"\nenv = { MARK = \"{plan_dir}\" }\n";
    let never_ready = "[[contender]]\nname = \"never-ready\"\ncommand = \"sh -c 'touch {plan_dir}/started; exec sleep 600' {port}\"\nready = { timeout = \"10m\" }\nenv = { MARK = \"{plan_dir}\" }\n";
    for (contender, signal) in [(slow_setup, 2), (never_ready, 15)] {
        let c = Case::new(&plan_with(contender, GET_INDEX));
        let mut child = c.spawn_run();
        let started = c.dir.path().join("started");
        c.wait_for(&mut child, "the setup or the server", || started.exists());
        let signalled = std::time::Instant::now();
        unsafe { kill(child.id() as i32, signal) };
        let (status, stderr) = exit_of(child);
        let took = signalled.elapsed();
        assert_eq!(status.code(), Some(130), "{contender}: {stderr}");
        // Within the 5 s stop grace (2 s for a setup), not at the end of the setup.
        assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
        let store = c.store();
        let run = store.latest_run().unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Interrupted);
        assert!(
            store.steps(run.id).unwrap().is_empty(),
            "a step was stored for {contender}"
        );
        let contender_row = store.contenders(run.id).unwrap().remove(0);
        assert_eq!(
            contender_row.status,
            ContenderStatus::Interrupted,
            "{}",
            contender_row.detail
        );
        c.nothing_left();
    }
}

#[test]
fn after_sigkill_the_next_shootout_stops_the_leftovers_and_marks_the_run_abandoned() {
    let plan = format!(
        "name = \"killed\"\n[defaults]\nwarmup = 0\nduration = \"1s\"\nrepeat = 30\ncooldown = \"0s\"\n{}\n{GET_INDEX}\n[load]\nconcurrency = [1]\n",
        daemonizing("daemon")
    );
    let c = Case::new(&plan);
    let mut child = c.spawn_run();
    c.wait_for(&mut child, "a stored step", || c.steps_stored() >= 1);
    // SIGKILL shootout and its watchdogs (as an OOM killer or `kill -9` of a list would):
    // nothing of shootout is left to clean up.
    let pid = child.id() as i32;
    let guards: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let ppid: i32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            (ppid == pid && String::from_utf8_lossy(&cmd).contains("shootout-guard")).then_some(p)
        })
        .collect();
    assert!(!guards.is_empty(), "no watchdog found");
    // The watchdogs first: they act as soon as shootout is gone.
    for g in guards {
        unsafe { kill(g, 9) };
    }
    unsafe { kill(pid, 9) };
    child.wait().unwrap();
    let needle = c.dir.path().display().to_string();
    let left = processes_carrying(&needle);
    assert!(
        left.iter().any(|p| p.contains("http.server")),
        "the daemon should have outlived a SIGKILLed shootout: {left:?}"
    );
    assert_eq!(
        c.store().latest_run().unwrap().unwrap().status,
        RunStatus::Running
    );

    let out = shootout()
        .arg("ls")
        .arg("--db")
        .arg(c.db())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "run 1 (killed) was abandoned: its shootout (pid {pid}) is gone; stopped"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("http.server") && stderr.contains("of contender daemon"),
        "{stderr}"
    );
    assert!(stdout.contains("abandoned"), "{stdout}");
    c.nothing_left();
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Abandoned);
    assert!(run.ended.is_some());
    // It has stored steps: measured (until shootout died), never "skipped".
    let contender = store.contenders(run.id).unwrap().remove(0);
    assert_eq!(
        contender.status,
        ContenderStatus::Measured,
        "{}",
        contender.detail
    );
    // Once marked, it is not reported again.
    let again = shootout()
        .arg("ls")
        .arg("--db")
        .arg(c.db())
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("abandoned"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn contenders_whose_names_clean_up_alike_get_their_own_tmp_and_logs() {
    // Each setup refuses a `{tmp}` another one has written to.
    let contender = |name: &str| {
        format!(
            "[[contender]]\nname = \"{name}\"\ncommand = \"python3 -m http.server {{port}} --bind 127.0.0.1 --directory {{tmp}}\"\nsetup = \"test ! -e {{tmp}}/owner && echo {name} > {{tmp}}/owner && echo hello > {{tmp}}/index.html\"\n"
        )
    };
    let contenders = ["a/b", "a_b", "a b"].map(contender).join("\n");
    let c = Case::new(&plan_with(&contenders, GET_INDEX));
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    for row in store.contenders(run.id).unwrap() {
        assert_eq!(
            row.status,
            ContenderStatus::Measured,
            "{}: {}",
            row.name,
            row.detail
        );
    }
    let run_dir = c
        .dir
        .path()
        .join(".shootout")
        .join(format!("run-{}", run.id.0));
    let mut owners: Vec<String> = std::fs::read_dir(run_dir.join("tmp"))
        .unwrap()
        .map(|d| std::fs::read_to_string(d.unwrap().path().join("owner")).unwrap())
        .collect();
    owners.sort();
    assert_eq!(owners, ["a b\n", "a/b\n", "a_b\n"]);
    let setup_logs = std::fs::read_dir(&run_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".setup.log")
        })
        .count();
    assert_eq!(setup_logs, 3);
    c.nothing_left();
}

/// Plans that panicked (exit 101), started a contender before failing, or sent their
/// fields to the server or the shell as written: each is now one line naming the file,
/// the line and the fix, exit 2, before anything starts or is stored.
#[test]
fn a_bad_plan_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let contender = format!(
        "[[contender]]\nname = \"a\"\nsetup = \"touch {m}\"\ncommand = \"touch {m}; python3 -m http.server {{port}} --bind 127.0.0.1\"\n",
        m = marker.display()
    );
    let good = plan_with(&contender, GET_INDEX);
    let cases = [
        (
            "concurrency = [2]",
            "rate = [100]\nconnections = 0",
            "load.connections must be from 1",
        ),
        (
            "path = \"/index.html\"",
            "path = \"/a\\r\\nX-Injected: 1\"",
            "control character",
        ),
        (
            "path = \"/index.html\"",
            "method = \"GET / HTTP/1.1\\r\\nX: 1\"",
            "is not an HTTP method",
        ),
        (
            "path = \"/index.html\"",
            "headers = { \"Transfer-Encoding\" = \"chunked\" }",
            "set by shootout from the body",
        ),
        (
            "--bind 127.0.0.1",
            "--bind 127.0.0.1 {bogus}",
            "unknown placeholder {bogus}",
        ),
        ("requests = 200", "duration = \"0s\"", "must be more than 0"),
        ("requests = 200", "duration = \"1e30\"", "365 days"),
        (
            "repeat = 1",
            "repeat = 1\nserver_cpus = \"1023\"",
            "names CPU 1023",
        ),
        (
            "path = \"/index.html\"",
            "body_file = \"/dev/zero\"",
            "larger than 64 MiB",
        ),
    ];
    for (from, to, hint) in cases {
        let text = good.replacen(from, to, 1);
        assert_ne!(text, good, "{from}");
        let c = Case::new(&text);
        let out = c.run_cmd().output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert_eq!(err.lines().count(), 1, "{to}: one line: {err}");
        assert!(err.contains(hint), "{to}: {err}");
        assert!(!marker.exists(), "{to}: the contender was started");
        assert!(!c.db().exists(), "{to}: a store was written");
    }
    // The same plan, unbroken, does start its contender (the marker can appear).
    let c = Case::new(&good);
    let out = shootout()
        .args(["run", "--quick"])
        .arg(c.plan())
        .arg("--db")
        .arg(c.db())
        .output()
        .unwrap();
    assert!(marker.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    c.no_orphans();
}

/// `run --duration 1e20` panicked while the flags were read, even with `--dry-run`.
#[test]
fn an_overlong_run_duration_is_a_usage_error() {
    let c = Case::new(&plan_with(&python_server("a", ""), GET_INDEX));
    for d in ["1e20", "18446744073709551615", "400days"] {
        let out = shootout()
            .args(["run", "--dry-run", "--duration", d])
            .arg(c.plan())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{d}: {err}");
        assert!(
            err.contains("--duration") && err.contains("365 days"),
            "{d}: {err}"
        );
    }
}

/// A plan of two contenders at `url` (the same server), with `fail_if` for all in
/// `[defaults]` and one of `other`'s own.
fn thresholds_plan(url: &str) -> String {
    let url = url.trim_end_matches('/');
    format!(
        "name = \"gates\"\n[defaults]\nwarmup = 0\nrequests = 100\nrepeat = 2\ncooldown = \"0s\"\nfail_if = [\"p99>30s\"]\n\
         [[contender]]\nname = \"fast\"\nurl = \"{url}\"\n\
         [[contender]]\nname = \"other\"\nurl = \"{url}\"\nfail_if = [\"rps>0\"]\n\
         [[workload]]\nname = \"hello\"\npath = \"/\"\nexpect = {{ status = 200 }}\n\
         [load]\nconcurrency = [2]\n"
    )
}

#[test]
fn run_fail_if_exits_3_after_storing_every_step_with_a_line_per_breached_cell() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let c = Case::new(&thresholds_plan(&server.url("/")));
    // `mean>=0us` holds for every cell: both contenders fail it; `rps>0` is other's own.
    let out = c
        .run_cmd()
        .args(["--fail-if", "mean>=0us"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("threshold failed"))
        .collect();
    assert_eq!(failed.len(), 3, "{err}");
    assert!(
        failed[0].starts_with("threshold failed: fast, hello, c=2: mean>=0us (mean was ")
            && failed[0].ends_with(" ms, median of 2 repetitions)"),
        "{err}"
    );
    assert!(
        failed[1].starts_with("threshold failed: other, hello, c=2: mean>=0us (mean was "),
        "{err}"
    );
    assert!(
        failed[2].starts_with("threshold failed: other, hello, c=2: rps>0 (rps was ")
            && failed[2].ends_with(" req/s, median of 2 repetitions)"),
        "{err}"
    );
    assert!(!err.contains("p99>30s"), "{err}");
    // The run was done and stored before it was judged; the report is on stdout.
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(store.steps(run.id).unwrap().len(), 4);
    assert!(String::from_utf8_lossy(&out.stdout).contains("fast"));
    // The stored run can be judged again later, by other thresholds.
    let report = |expr: &str| {
        shootout()
            .args(["report", "--fail-if", expr, "--db"])
            .arg(c.db())
            .output()
            .unwrap()
    };
    let out = report("rps>0");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.matches("threshold failed: ").count(), 2, "{err}");
    assert!(
        err.contains("threshold failed: fast, hello, c=2: rps>0 (rps was "),
        "{err}"
    );
    let out = report("p99>30s");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("fast"));
}

#[test]
fn plan_thresholds_for_all_pass_and_a_contenders_own_apply_to_it_only() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let c = Case::new(&thresholds_plan(&server.url("/")));
    // fast has only the plan's p99>30s, which a local hello server never reaches.
    let out = c.run_cmd().args(["--only", "fast"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("threshold failed"), "{err}");
    // other's own rps>0 fails it.
    let out = c.run_cmd().args(["--only", "other"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("threshold failed: other, hello, c=2: rps>0 (rps was "),
        "{err}"
    );
}

#[test]
fn run_thresholds_show_in_a_dry_run_and_a_bad_one_is_refused_before_anything_starts() {
    let c = Case::new(&thresholds_plan("http://127.0.0.1:9"));
    let out = c
        .run_cmd()
        .args(["--dry-run", "--fail-if", "errors>1%"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  every contender: p99>30s, errors>1%\n  other: rps>0\n"),
        "{stdout}"
    );
    let out = c.run_cmd().args(["--fail-if", "p99>50"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--fail-if 'p99>50': a latency needs a unit"),
        "{err}"
    );
    assert!(!c.db().exists(), "refused before the store was opened");
    let bad = thresholds_plan("http://127.0.0.1:9").replace("rps>0", "rps>fast");
    let c = Case::new(&bad);
    let out = c.run_cmd().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plan.toml:14: contender 'other': fail_if: 'rps>fast': 'fast' is not a rate"),
        "{err}"
    );
}

/// A plan's capacity search: two servers of known capacity (one request at a time, 4 and
/// 8 ms each: 250 and 125 req/s saturated) are each searched; every step is stored with
/// its verdict, the report replays the searches, finds each capacity within 15 %, ranks
/// the faster first with certainty and says how it compares with the baseline.
#[test]
fn a_plan_finds_each_contenders_capacity_and_ranks_them() {
    let service = |ms| Behavior::Capacity {
        service: std::time::Duration::from_millis(ms),
    };
    let fast = TestServer::start(service(4)).unwrap();
    let slow = TestServer::start(service(8)).unwrap();
    let contender = |name: &str, s: &TestServer, base: bool| {
        format!(
            "[[contender]]\nname = \"{name}\"\nurl = \"{}\"\nbaseline = {base}\n",
            s.url("/").trim_end_matches('/')
        )
    };
    let plan = format!(
        "name = \"capacity\"\n[defaults]\nwarmup = 0\nduration = \"0.5s\"\nrepeat = 1\ncooldown = \"0s\"\n\n{}{}\n[[workload]]\nname = \"hello\"\npath = \"/\"\n\n[load]\nmax_connections = 64\nfind_max = {{ slo = [\"p50<40ms\"], from = 60, to = 2000 }}\n",
        contender("slow", &slow, true),
        contender("fast", &fast, false),
    );
    let c = Case::new(&plan);
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert!(steps.len() >= 10, "{} steps", steps.len());
    assert!(steps
        .iter()
        .all(|s| s.search.as_ref().is_some_and(|m| m.verdict.is_some())));
    let out = shootout()
        .args(["report", "--format", "json", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["capacities"][0];
    assert_eq!(w["slo"][0], "p50<40ms", "{w}");
    assert!(
        v["results"].as_array().unwrap().is_empty(),
        "search steps are not cells"
    );
    let capacity = |i: usize, want: f64| {
        let c = &w["contenders"][i];
        let (lo, hi) = (
            c["interval"][0].as_f64().unwrap(),
            c["interval"][1].as_f64().unwrap(),
        );
        assert!(
            lo <= want * 1.15 && hi >= want * 0.85,
            "[{lo}, {hi}) for {want} req/s: {c}"
        );
        assert!(c["searches"][0]["complete"].as_bool().unwrap(), "{c}");
        // The report replays each boundary decision from the stored seconds: decided on
        // their evidence, as the run decided them.
        let boundary = c["searches"][0]["boundary"].as_array().unwrap();
        assert_eq!(boundary.len(), 2, "{c}");
        for d in boundary {
            let by = d["decided_by"].as_str().unwrap();
            assert!(by == "interval" || by == "pooled", "{d}");
        }
        c["max_rps"].as_f64().unwrap()
    };
    let (slow_max, fast_max) = (capacity(0, 125.0), capacity(1, 250.0));
    let ratio = w["contenders"][1]["vs_baseline"]["ratio"].as_f64().unwrap();
    assert!((ratio - fast_max / slow_max).abs() < 1e-3, "{w}");
    let ranking = w["ranking"].as_str().unwrap();
    assert!(
        ranking == "fast > slow" || ranking == "fast ≫ slow",
        "{ranking}"
    );
    let text = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("hello: capacity within p50<40ms"), "{text}");
    assert!(!text.contains("No step was measured"), "{text}");
    let page = c.dir.path().join("report.html");
    let out = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    common::assert_ok(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    for want in [
        "Capacity: hello: capacity within p50&lt;40ms",
        "p50 latency by offered rate",
        "SLO p50 &lt; 40 ms",
        "<h2>The answer</h2>",
        "fast sustains the most",
        &format!("fast capacity {}", fast_max.round()),
    ] {
        assert!(html.contains(want), "{want} not in the page");
    }
    // compare pairs the capacities (the run with itself: no change).
    let run_id = run.id.to_string();
    let out = shootout()
        .args(["compare", &run_id, &run_id, "--format", "json", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pairs = v["capacities"].as_array().unwrap();
    assert_eq!(pairs.len(), 2, "{v}");
    assert_eq!(pairs[1]["contender"], "fast");
    assert_eq!(pairs[1]["a_max_rps"].as_f64(), Some(fast_max));
    assert_eq!(pairs[1]["verdict"], "no_change", "{v}");
    c.no_orphans();
}

/// A WebSocket echo workload (a text message, two in flight per connection) against two
/// URL contenders of one echo server, one given as `ws://`, one as `http://` (its scheme
/// mapped): each is verified (20 messages on one connection, 48 on eight) and measured
/// (200 messages on two connections) over WebSocket, every reply checked against the
/// message; the store says websocket and the message kind.
#[test]
fn a_websocket_workload_is_verified_and_measured_in_messages() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let ws = server.url("");
    let ws = ws.trim_end_matches('/');
    let http = ws.replace("ws://", "http://");
    let contenders = format!(
        "[[contender]]\nname = \"ws\"\nurl = \"{ws}\"\n\n[[contender]]\nname = \"mapped\"\nurl = \"{http}\"\n"
    );
    let workload = "[[workload]]\nname = \"echo\"\nprotocol = \"websocket\"\npath = \"/echo\"\nmessage = \"0123456789abcdef\"\nexpect = { echo = true, length = 16 }\npipeline = 2\n";
    let c = Case::new(&plan_with(&contenders, workload));
    let out = c.run_cmd().output().unwrap();
    common::assert_ok(&out);
    // The closing table (`shootout report`) says what a request is here.
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("\necho (WebSocket: a request is a message and its reply)\n"),
        "{table}"
    );
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 2);
    for s in &steps {
        assert_eq!(s.result.counts.ok, 200);
        assert_eq!(s.result.counts.failed(), 0);
        // One 101 per handshake, not one per message: as many as the step opened.
        let opened = s.result.counts.connections_opened;
        assert!(
            opened > 0 && opened < 200,
            "{opened} connections for 200 messages"
        );
        assert_eq!(s.result.counts.status.get(&101), Some(&opened));
        let wire = s.wire.unwrap();
        assert_eq!((wire.protocol, wire.pipeline), (Protocol::WebSocket, 2));
    }
    assert_eq!(
        server.answers(),
        2 * (20 + 48 + 200),
        "verification, then the step"
    );
    assert_eq!(
        server.upgrades(),
        2 * (1 + 8 + 2),
        "one handshake per connection"
    );
    assert!(
        run.plan_resolved.contains(
            r#""message":"text","method":"GET","name":"echo","path":"/echo","pipeline":2,"protocol":"websocket""#
        ),
        "{}",
        run.plan_resolved
    );
}

/// A WebSocket workload sends a message list (`messages`, `{seq}` drawn per message):
/// measured against an echo server, every reply checked against its own message; a server
/// that answers each message with the one before fails verification (20 messages on one
/// connection: 19 not the echo). The dry run says what is sent, and the resolved plan
/// stores the kind `list`.
#[test]
fn a_websocket_workload_sends_its_message_list() {
    let echo = WsServer::start(WsBehavior::Echo).unwrap();
    let stale = WsServer::start(WsBehavior::Stale).unwrap();
    let url = |s: &WsServer| s.url("").trim_end_matches('/').to_string();
    let contenders = format!(
        "[[contender]]\nname = \"echo\"\nurl = \"{}\"\n\n[[contender]]\nname = \"stale\"\nurl = \"{}\"\n",
        url(&echo),
        url(&stale)
    );
    let workload = "[[workload]]\nname = \"chat\"\nprotocol = \"websocket\"\npath = \"/echo\"\nmessages = \"chat.txt\"\nexpect = { echo = true }\n";
    let c = Case::new(&plan_with(&contenders, workload));
    std::fs::write(
        c.dir.path().join("chat.txt"),
        "# one a line\n{\"seq\": {seq}}\nhello {seq}\n",
    )
    .unwrap();
    let dry = shootout()
        .args(["run", "--dry-run"])
        .arg(c.plan())
        .arg("--db")
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&dry);
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(
        said.contains("chat: /echo over websocket, 2 text messages from ")
            && said.contains("chat.txt, in turn (expect the echo)"),
        "{said}"
    );
    let out = c.run_cmd().output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stale: failed verification")
            && err.contains("20 messages on 1 connection): 1 ok, 19 failed (19 body)"),
        "{err}"
    );
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1, "only the echo server is measured");
    let counts = &steps[0].result.counts;
    assert_eq!((counts.ok, counts.failed()), (200, 0));
    assert_eq!(echo.answers(), 20 + 48 + 200);
    assert!(
        run.plan_resolved.contains(r#""message":"list""#),
        "{}",
        run.plan_resolved
    );
}

/// A WebSocket server that refuses the handshake fails verification, and the detail says
/// so in messages and statuses.
#[test]
fn a_refused_websocket_handshake_fails_verification() {
    let server = WsServer::start(WsBehavior::Refuse {
        status: 403,
        after: std::time::Duration::ZERO,
    })
    .unwrap();
    let contender = format!(
        "[[contender]]\nname = \"ws\"\nurl = \"{}\"\n",
        server.url("").trim_end_matches('/')
    );
    let workload = "[[workload]]\nname = \"echo\"\nprotocol = \"ws\"\npath = \"/echo\"\nmessage = \"hi\"\nexpect = { echo = true }\n";
    let (_c, status, detail) = lone_failure(&contender, workload);
    assert_eq!(status, ContenderStatus::VerificationFailed);
    assert!(
        detail.contains("workload 'echo' over websocket (sequential, 20 messages on 1 connection): 0 ok, 20 failed"),
        "{detail}"
    );
    assert!(detail.contains("status codes 403: 20"), "{detail}");
    assert!(!detail.contains("one answer"), "{detail}");
}

/// The dry run says what a WebSocket workload sends and expects; a wrong key is refused
/// by the dry run with its file and line.
#[test]
fn a_websocket_workload_in_a_dry_run() {
    let workload = "[[workload]]\nname = \"echo\"\nprotocol = \"websocket\"\npath = \"/echo\"\nmessage = \"0123456789abcdef0123456789abcdef\"\nexpect = { echo = true }\npipeline = 4\n\n[[workload]]\nname = \"held\"\nprotocol = \"websocket\"\npath = \"/echo\"\nhold = { ping = \"5s\", rate = 200 }\n";
    let c = Case::new(&plan_with(&python_server("a", ""), workload));
    let out = c.run_cmd().arg("--dry-run").output().unwrap();
    common::assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  echo: /echo over websocket × 4 in flight, a text message of 32 bytes (expect the echo)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  held: /echo over websocket, connections held, a ping every 5.0 s, opened at 200/s\n"
        ),
        "{stdout}"
    );
    let bad = workload.replace("pipeline = 4", "body = \"x\"");
    let c = Case::new(&plan_with(&python_server("a", ""), &bad));
    let out = c.run_cmd().arg("--dry-run").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plan.toml:21: workload 'echo': body is an HTTP request's: a WebSocket workload sends message = \"…\" (a text message) or body_file = \"FILE\" (a binary message)"),
        "{stderr}"
    );
    // A binary message over 16 MiB is refused when the plan's files are read.
    let big = workload.replace(
        "message = \"0123456789abcdef0123456789abcdef\"",
        "body_file = \"big.bin\"",
    );
    let c = Case::new(&plan_with(&python_server("a", ""), &big));
    let file = std::fs::File::create(c.dir.path().join("big.bin")).unwrap();
    file.set_len((16 << 20) + 1).unwrap();
    let out = c.run_cmd().arg("--dry-run").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("workload 'echo': body_file is 16777217 bytes, but a WebSocket message may be at most 16777216 bytes (16 MiB): send a smaller file"),
        "{stderr}"
    );
}

/// A held WebSocket workload (`hold`): verified by one ping on one connection, then one
/// on each of 8, and measured in pings answered by pongs.
#[test]
fn a_held_websocket_workload_is_verified_and_measured_in_pings() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let contender = format!(
        "[[contender]]\nname = \"ws\"\nurl = \"{}\"\n",
        server.url("").trim_end_matches('/')
    );
    let workload = "[[workload]]\nname = \"held\"\nprotocol = \"websocket\"\npath = \"/\"\nhold = { ping = \"100ms\" }\n";
    // 20 pings per step: a second on 2 connections.
    let plan = plan_with(&contender, workload).replace("requests = 200", "requests = 20");
    let c = Case::new(&plan);
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].result.counts.ok, 20);
    assert_eq!(steps[0].result.counts.failed(), 0);
    assert_eq!(server.messages(), 0, "no message goes to held connections");
    assert_eq!(server.upgrades(), 1 + 8 + 2, "one handshake per connection");
    assert!(server.pings() >= 1 + 8 + 20, "{} pings", server.pings());
    assert!(run.plan_resolved.contains(r#""message":"hold""#));
}

/// A launched WebSocket-only server (the standard library's, `tests/common/ws_echo.py`)
/// answers the ready wait's plain GET of `/` with 426 Upgrade Required, as Python's
/// `websockets` does: below 500, so it is ready; then it is verified and measured over
/// WebSocket, every reply the echo.
#[test]
fn a_launched_websocket_only_server_is_ready_on_its_426_and_measured() {
    let contender =
        "[[contender]]\nname = \"py-ws\"\ncommand = \"exec python3 ws_echo.py {port}\"\n";
    let workload = "[[workload]]\nname = \"echo\"\nprotocol = \"websocket\"\npath = \"/echo\"\nmessage = \"hello\"\nexpect = { echo = true, length = 5 }\n";
    let c = Case::new(&plan_with(contender, workload));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/ws_echo.py");
    std::fs::copy(script, c.dir.path().join("ws_echo.py")).unwrap();
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let contender = store.contenders(run.id).unwrap().remove(0);
    assert_eq!(contender.status, ContenderStatus::Measured);
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].result.counts.ok, 200);
    assert_eq!(steps[0].result.counts.failed(), 0);
    c.no_orphans();
}

/// A plan's search steps end as `load --find-max`'s do, and the store says how each
/// ended: against a server of known capacity (one request at a time, 4 ms each: 250
/// req/s), the ramp's rungs far below it plainly pass after 1 s and 100 answers, far fewer
/// than the 1,000 the fixed rule waits for (`errors<1%`), and the steps far above it are
/// decided broken early; the highest rate met, measured again in full, runs to its
/// deadline (`max<2s` is never met before the step's end), the fixed rule's answers.
/// The report shows how each step ended in every format and replays the same capacity.
#[test]
fn a_plans_search_steps_end_once_decided_and_the_store_says_how() {
    use shootout_model::find_max::{StepEnd, Verdict};
    let server = TestServer::start(Behavior::Capacity {
        service: std::time::Duration::from_millis(4),
    })
    .unwrap();
    let plan = format!(
        "name = \"decided\"\n[defaults]\nwarmup = 0\nduration = \"0.5s\"\nrepeat = 1\ncooldown = \"0s\"\n\n[[contender]]\nname = \"one\"\nurl = \"{}\"\n\n[[workload]]\nname = \"hello\"\npath = \"/\"\n\n[load]\nmax_connections = 64\nfind_max = {{ slo = [\"p90<40ms\", \"errors<1%\", \"max<2s\"], from = 50, to = 400 }}\n",
        server.url("/").trim_end_matches('/')
    );
    let c = Case::new(&plan);
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    // (rate, verdict, how it ended, answers) of every step, in order.
    let taken: Vec<(f64, Verdict, StepEnd, u64)> = steps
        .iter()
        .map(|s| {
            let LoadLevel::Rate { rps, .. } = s.level else {
                panic!("{:?}", s.level)
            };
            let mark = s.search.clone().unwrap();
            let ended = mark.ended.unwrap_or_else(|| panic!("{rps}: {mark:?}"));
            (rps, mark.verdict.unwrap(), ended, s.result.counts.completed)
        })
        .collect();
    let at = |rate: f64| taken.iter().filter(move |t| t.0 == rate);
    // Far below: looked at once, passed on fewer than 300 answers (the fixed rule: 1,000).
    for rate in [50.0, 100.0] {
        let once: Vec<_> = at(rate).collect();
        assert_eq!(once.len(), 1, "{rate}: {taken:?}");
        let (_, verdict, ended, answers) = once[0];
        assert_eq!(
            (verdict, ended),
            (&Verdict::Met, &StepEnd::Passed),
            "{taken:?}"
        );
        assert!((100..300).contains(answers), "{rate}: {taken:?}");
    }
    // Far above (400 req/s, 1.6 times what it holds): decided broken, early.
    let over: Vec<_> = at(400.0).collect();
    assert!(!over.is_empty(), "{taken:?}");
    for (_, verdict, ended, answers) in over {
        assert!(!verdict.met(), "{taken:?}");
        assert_eq!(ended, &StepEnd::DecidedBroke, "{taken:?}");
        assert!(*answers < 1_000, "{taken:?}");
    }
    // The boundary's met rate: met in full at least twice after any first look, each
    // step to its deadline, about the fixed rule's 1,000 answers.
    let v = report_json(&c);
    let search = &v["capacities"][0]["contenders"][0]["searches"][0];
    let max_rps = search["max_rps"].as_f64().unwrap();
    assert!((212.0..=288.0).contains(&max_rps), "{max_rps}: {taken:?}");
    let full: Vec<_> = at(max_rps)
        .filter(|t| t.2 != StepEnd::Passed && t.1.met())
        .collect();
    assert!(full.len() >= 2, "{max_rps}: {taken:?}");
    for (_, _, ended, answers) in full {
        assert_eq!(ended, &StepEnd::Deadline, "{max_rps}: {taken:?}");
        assert!(*answers >= 900, "{max_rps}: {taken:?}");
    }
    // The report says how each step ended, and its replay takes every stored step.
    let json_steps = search["steps"].as_array().unwrap();
    assert_eq!(json_steps.len(), taken.len());
    for (s, t) in json_steps.iter().zip(&taken) {
        let by = match t.2 {
            StepEnd::DecidedMet | StepEnd::DecidedBroke => "decided",
            StepEnd::Passed => "passed",
            StepEnd::Deadline => "deadline",
            StepEnd::Full => "full",
        };
        assert_eq!(s["ended"]["by"], by, "{s}");
        assert_eq!(s["answers"].as_u64(), Some(t.3), "{s}");
    }
    let text = report(&c, &[]);
    assert!(
        text.contains("decided: broken") && text.contains("deadline: undecided"),
        "{text}"
    );
    assert!(text.contains("ended: decided"), "{text}");
    let markdown = report(&c, &["--format", "markdown"]);
    assert!(markdown.contains("| s | ended |"), "{markdown}");
    let page = c.dir.path().join("report.html");
    report(&c, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(">ended<") && html.contains(">decided: broken<"),
        "{html}"
    );
    c.no_orphans();
}

/// `shootout report --format json` of the case's run.
fn report_json(c: &Case) -> serde_json::Value {
    serde_json::from_str(&report(c, &["--format", "json"])).unwrap()
}

/// `shootout report ARGS` of the case's run: its stdout.
fn report(c: &Case, args: &[&str]) -> String {
    let out = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .args(args)
        .output()
        .unwrap();
    common::assert_ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

/// A WebSocket workload searched for capacity (`find_max`): every search step is spoken
/// over WebSocket at the rate tried, each reply the echo.
#[test]
fn a_websocket_workload_is_searched_for_capacity() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let plan = format!(
        "name = \"ws capacity\"\n[defaults]\nwarmup = 0\nduration = \"0.5s\"\nrepeat = 1\ncooldown = \"0s\"\n\n\
         [[contender]]\nname = \"ws\"\nurl = \"{}\"\n\n\
         [[workload]]\nname = \"echo\"\nprotocol = \"websocket\"\npath = \"/echo\"\nmessage = \"hi\"\nexpect = {{ echo = true }}\n\
         find_max = {{ slo = [\"p99<500ms\"], from = 1000, to = 2000 }}\n\n[load]\nconnections = 4\n",
        server.url("").trim_end_matches('/')
    );
    let c = Case::new(&plan);
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert!(!steps.is_empty());
    for s in &steps {
        assert!(s.search.is_some(), "a search step");
        assert_eq!(s.wire.unwrap().protocol, Protocol::WebSocket);
        assert!(s.result.counts.ok > 0);
        assert_eq!(s.result.counts.failed(), 0);
    }
    let answered: u64 = steps.iter().map(|s| s.result.counts.ok).sum();
    assert!(server.answers() >= 20 + 48 + answered);
}

/// A journey workload searched for capacity on a step's SLO: three requests answered at
/// once, then one served in turn server-wide, 10 ms each (at most 100 journeys a
/// second). The search is bounded by the step: the report replays a capacity of at most
/// 100 journeys a second (5 % over, the resolution), every stored step that broke, broke
/// the step's SLO (its p90), never the one on all requests (their median), and one that
/// broke it ended once decided on the step's counts: more than a tenth of the desk
/// answers it could count were already slow. The dry run gives the search's rates in
/// journeys/s.
#[test]
fn a_plan_searches_a_journeys_capacity_on_a_steps_slo() {
    let server = TestServer::start(Behavior::App).unwrap();
    let journey = "[[journey]]\nname = \"visit\"\n[[journey.step]]\nname = \"home\"\nget = \"/form\"\nrepeat = 3\n[[journey.step]]\nname = \"desk\"\nget = \"/desk?us=10000\"\n";
    let plan = |slo: &str| {
        format!(
            "name = \"journeys\"\n[defaults]\nwarmup = 0\nduration = \"5s\"\nrepeat = 1\ncooldown = \"0s\"\n\n[[contender]]\nname = \"app\"\nurl = \"{}\"\n\n[[workload]]\nname = \"visit\"\njourney = \"desk.toml\"\nfind_max = {{ slo = [\"p50<40ms\", \"{slo}\"], from = 40, to = 1000 }}\n\n[load]\nconcurrency = [1]\n",
            server.url("/").trim_end_matches('/')
        )
    };
    // A step the file does not have: refused before anything runs, naming the steps.
    let c = Case::new(&plan("step:login:p50<40ms"));
    std::fs::write(c.dir.path().join("desk.toml"), journey).unwrap();
    let out = c.run_cmd().output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("workload 'visit': find_max slo step:login:p50<40ms: ")
            && err.contains(
                "desk.toml: no step is named 'login' (the steps: visit › home, visit › desk)"
            ),
        "{err}"
    );
    assert_eq!(server.requests(), 0);

    let c = Case::new(&plan("step:desk:p90<40ms"));
    std::fs::write(c.dir.path().join("desk.toml"), journey).unwrap();
    let dry = c.run_cmd().arg("--dry-run").output().unwrap();
    let dry = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry.contains(
            "capacity search within p50<40ms, step:desk:p90<40ms, from 40 to 1000 journeys/s"
        ),
        "{dry}"
    );
    c.run_ok();
    let out = shootout()
        .args(["report", "--format", "json", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["capacities"][0];
    assert_eq!(w["unit"], "journeys/s", "{w}");
    let a = &w["contenders"][0];
    let (lo, hi) = (
        a["interval"][0].as_f64().unwrap_or_else(|| panic!("{a}")),
        a["interval"][1].as_f64().unwrap_or_else(|| panic!("{a}")),
    );
    assert!(
        (40.0..=100.0 * 1.05).contains(&lo) && hi <= 200.0,
        "[{lo}, {hi}): {a}"
    );
    let steps = a["searches"][0]["steps"].as_array().unwrap();
    let broke: Vec<&serde_json::Value> = steps.iter().filter(|s| s["verdict"] == "broke").collect();
    assert!(!broke.is_empty(), "{a}");
    for s in &broke {
        assert_eq!(s["broke"], "step:desk:p90<40ms", "{s}");
    }
    // The step's SLO is decided on the step's live counts: a step far above the desk's
    // 100 a second is stored as ended once decided, before its 5 s deadline.
    assert!(broke.iter().any(|s| s["ended"]["by"] == "decided"), "{a}");
    let text = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("capacity journeys/s"), "{text}");
    assert!(!text.contains("capacity req/s"), "{text}");
}

/// A plan's `stages` step a journey workload's users as they step connections: each
/// stage is a step of its own length with its `concurrency` users, each user on its own
/// kept-alive connection running journeys back to back.
#[test]
fn a_plans_stages_step_a_journey_workloads_users() {
    let server = TestServer::start(Behavior::App).unwrap();
    let journey = "[[journey]]\nname = \"visit\"\nthink = \"pacing(100ms)\"\n[[journey.step]]\nname = \"home\"\nget = \"/form\"\n";
    let plan = format!(
        "name = \"staged\"\n[defaults]\nwarmup = 0\nrepeat = 1\ncooldown = \"0s\"\n\n[[contender]]\nname = \"app\"\nurl = \"{}\"\n\n[[workload]]\nname = \"visit\"\njourney = \"j.toml\"\n\n[load]\nstages = [ {{concurrency = 1, duration = \"500ms\"}}, {{concurrency = 3, duration = \"1s\"}} ]\n",
        server.url("/").trim_end_matches('/')
    );
    let c = Case::new(&plan);
    std::fs::write(c.dir.path().join("j.toml"), journey).unwrap();
    let store = c.run_ok();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    let got: Vec<(LoadLevel, u64)> = steps
        .iter()
        .map(|s| (s.level, s.result.counts.connections_opened))
        .collect();
    assert_eq!(
        got,
        [
            (LoadLevel::Concurrency { connections: 1 }, 1),
            (LoadLevel::Concurrency { connections: 3 }, 3)
        ]
    );
    for (s, secs) in steps.iter().zip([0.5, 1.0]) {
        let d = s.result.duration.as_secs_f64();
        assert!((d - secs).abs() < 0.2, "{d} s for a stage of {secs} s");
        // Every request was the journey's one step (stored per step).
        let t = &s.result.targets;
        assert_eq!(t.len(), 1);
        assert_eq!(
            (t[0].label.as_str(), t[0].completed),
            ("visit › home", s.result.counts.completed)
        );
    }
}

/// A plan's journey workload on two contenders: each step stores every journey step's and
/// every journey's counts and histograms (a journey's busy time among them), `run`'s
/// report shows them and ranks the contenders per journey, and `report` and `compare`
/// show them from the store.
#[test]
fn a_journey_workload_is_stored_reported_ranked_and_compared_per_step() {
    let one = TestServer::start(Behavior::App).unwrap();
    let two = TestServer::start(Behavior::App).unwrap();
    let contenders = format!(
        "[[contender]]\nname = \"one\"\nurl = \"{}\"\n\n[[contender]]\nname = \"two\"\nurl = \"{}\"\n",
        one.url("/").trim_end_matches('/'),
        two.url("/").trim_end_matches('/'),
    );
    let workload = "[[workload]]\nname = \"writers\"\njourney = \"j.toml\"\n";
    let plan = plan_with(&contenders, workload).replace("requests = 200", "requests = 20");
    let c = Case::new(&plan);
    std::fs::write(
        c.dir.path().join("j.toml"),
        "[[journey]]\nname = \"writer\"\n[[journey.step]]\nname = \"login\"\npost = \"/login?user=u{user}\"\n\
         [[journey.step]]\nname = \"form\"\nget = \"/form\"\n\
         capture = { csrf = { regex = 'name=\"csrf\" value=\"([^\"]+)\"' } }\n",
    )
    .unwrap();
    let out = c.run_cmd().output().unwrap();
    common::assert_ok(&out);
    let printed = String::from_utf8_lossy(&out.stdout).to_string();
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    assert_eq!(steps.len(), 2);
    for s in &steps {
        let r = s.unpacked();
        let kinds: Vec<(&str, u64, u64, u64, Option<u64>)> = r
            .targets
            .iter()
            .chain(&r.journeys)
            .map(|t| {
                let busy = t.busy.as_ref().map(|b| b.len());
                (t.label.as_str(), t.completed, t.ok, t.latency.len(), busy)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("writer › login", 20, 20, 20, None),
                ("writer › form", 20, 20, 20, None),
                ("writer", 20, 20, 20, Some(20))
            ]
        );
    }
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let report = shootout()
        .args(["report", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&report);
    let report = String::from_utf8_lossy(&report.stdout).to_string();
    assert_eq!(report, printed, "run's report is report's");
    let flat = squeeze(&report);
    for want in [
        "Journeys and steps at c=2 (every repetition merged; busy: a journey's duration less its think times):",
        "one journey writer 20 20 0",
        "one busy writer 20 20 0",
        "two busy writer 20 20 0",
        "two step writer › form 20 20 0",
        "Ranked by good journeys per second (median over repetitions):",
        "writer: ",
    ] {
        assert!(flat.contains(want), "{want}\n{report}");
    }
    // The run again, compared with the first: a row per step and journey.
    common::assert_ok(&c.run_cmd().output().unwrap());
    let out = shootout()
        .args(["compare", "1", "2", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let text = squeeze(&String::from_utf8_lossy(&out.stdout));
    for want in [
        "writers c=2 one step writer › login",
        "writers c=2 two journey writer",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    // Steps and journeys in report's and compare's JSON, CSV and HTML.
    let format = |cmd: &[&str], format: &str| {
        let out = shootout()
            .args(cmd)
            .args(["--format", format, "--db"])
            .arg(c.db())
            .output()
            .unwrap();
        common::assert_ok(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&format(&["report", "1"], "json")).unwrap();
    let blocks = v["journeys"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "a block per contender: {v}");
    for (b, who) in blocks.iter().zip(["one", "two"]) {
        assert_eq!(b["contender"], who, "{b}");
        assert_eq!(b["workload"], "writers", "{b}");
        let rows: Vec<(&str, u64, u64, u64)> = b["steps"]
            .as_array()
            .unwrap()
            .iter()
            .chain(b["journeys"].as_array().unwrap())
            .map(|k| {
                (
                    k["name"].as_str().unwrap(),
                    k["count"].as_u64().unwrap(),
                    k["ok"].as_u64().unwrap(),
                    k["failures"]["status"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("writer › login", 20, 20, 0),
                ("writer › form", 20, 20, 0),
                ("writer", 20, 20, 0)
            ]
        );
    }
    assert_eq!(v["journey_rankings"][0]["journey"], "writer", "{v}");
    assert_eq!(v["steps"][0]["journeys"][0]["ended"], 20, "{v}");
    for b in blocks {
        let busy = &b["journeys"][0]["duration_less_think_ms"];
        assert!(busy["p50"].as_f64().unwrap() > 0.0, "{b}");
        assert!(b["steps"][0].get("duration_less_think_ms").is_none(), "{b}");
    }
    assert!(
        v["steps"][1]["journeys"][0]["duration_less_think_ms"]["p99"].is_number(),
        "{v}"
    );
    let csv = format(&["report", "1"], "csv");
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| {
            [",journey_step,", ",journey,", ",journey_busy,"]
                .iter()
                .any(|r| l.contains(r))
        })
        .collect();
    assert_eq!(
        rows.len(),
        8,
        "a row per contender × step and journey, and per journey's busy time:\n{csv}"
    );
    assert_eq!(
        rows.iter()
            .filter(|l| l.contains(",journey_busy,writer,"))
            .count(),
        2,
        "{csv}"
    );
    assert!(
        rows.iter()
            .any(|l| l.starts_with("1,two,writers,concurrency,2,,")
                && l.ends_with(",journey_step,writer › form,0,,,,request")),
        "{csv}"
    );
    let out = shootout()
        .args(["report", "1", "--html", "-", "--db"])
        .arg(c.db())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let html = String::from_utf8(out.stdout).unwrap();
    for want in [
        "<h3>Journeys and steps at c=2 (every repetition merged; busy: a journey&#39;s duration less its think times)</h3>",
        "Step writer › login: latency percentiles",
        "Journey writer: duration percentiles",
        "two less think time",
    ] {
        assert!(html.contains(want), "{want}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&format(&["compare", "1", "2"], "json")).unwrap();
    let changes: Vec<(&str, &str, &str)> = v["journeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["contender"].as_str().unwrap(),
                k["kind"].as_str().unwrap(),
                k["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(changes.contains(&("two", "step", "writer › form")), "{v}");
    assert!(changes.contains(&("one", "journey", "writer")), "{v}");
    let csv = format(&["compare", "1", "2"], "csv");
    assert_eq!(
        csv.lines()
            .filter(|l| l.contains(",journey_step,") || l.contains(",journey,"))
            .count(),
        6,
        "{csv}"
    );
    // Each contender's journey's busy time, compared apart.
    assert_eq!(
        csv.lines().filter(|l| l.contains(",journey_busy,")).count(),
        2,
        "{csv}"
    );
}

/// A plan's `fail_if` on a journey step judges that step alone in each cell: the slow step
/// (served one at a time, 20 ms each) breaches `p50>10ms`, the fast step beside it does not,
/// though the run's p99 as a whole is over 10 ms. A step no workload's journeys have is
/// refused before anything runs, naming the field, the steps there are and the fix.
#[test]
fn a_plans_fail_if_on_a_journey_step_judges_that_step_alone() {
    let server = TestServer::start(Behavior::App).unwrap();
    let contenders = format!(
        "[[contender]]\nname = \"app\"\nurl = \"{}\"\n",
        server.url("/").trim_end_matches('/'),
    );
    let workload = "[[workload]]\nname = \"writers\"\njourney = \"j.toml\"\n";
    let plan = |fail_if: &str| {
        plan_with(&contenders, workload).replace(
            "requests = 200",
            &format!("requests = 10\nfail_if = [{fail_if}]"),
        )
    };
    let journey = "[[journey]]\nname = \"writer\"\n[[journey.step]]\nname = \"login\"\npost = \"/login?user=u{user}\"\n\
         [[journey.step]]\nname = \"slow\"\nget = \"/desk?us=20000\"\n";
    let c = Case::new(&plan(
        "\"step:login:p99>10ms\", \"step:writer › slow:p50>10ms\", \"step:login:failed>0\"",
    ));
    std::fs::write(c.dir.path().join("j.toml"), journey).unwrap();
    let out = c.run_cmd().output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("threshold failed"))
        .collect();
    assert_eq!(failed.len(), 1, "{err}");
    assert!(
        failed[0].starts_with(
            "threshold failed: app, writers, c=2: step:writer › slow:p50>10ms (p50 was "
        ),
        "{err}"
    );
    // The run as a whole is over the login step's limit: judged alone, the step is not.
    let store = c.store();
    let run = store.latest_run().unwrap().unwrap();
    let r = store.steps(run.id).unwrap()[0].unpacked().into_owned();
    assert!(
        r.histograms.latency.value_at_quantile(0.99) > 10_000,
        "the run's p99 is the slow step's"
    );
    assert_eq!(r.targets[0].label, "writer › login");

    let before = server.requests();
    for (fail_if, extra, said) in [
        (
            "\"step:logout:p99>1ms\"",
            &[][..],
            "defaults.fail_if step:logout:p99>1ms: workload 'writers' (",
        ),
        (
            "",
            &["--fail-if", "step:nope:failed>0"][..],
            "--fail-if step:nope:failed>0: workload 'writers' (",
        ),
    ] {
        let c = Case::new(&plan(fail_if));
        std::fs::write(c.dir.path().join("j.toml"), journey).unwrap();
        let out = c.run_cmd().args(extra).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(said), "{said}\n{err}");
        assert!(
            err.contains("(the steps: writer › login, writer › slow): write one of them, or its name alone, after step:"),
            "{err}"
        );
    }
    assert_eq!(server.requests(), before, "nothing ran");
}
