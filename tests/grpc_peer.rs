//! End-to-end tests of what a ghz user expects besides the calls: the schema asked of the
//! server's reflection when no `--proto` or `--protoset` is given (the test server's
//! reflection service, and grpcio's own with grpcio-reflection from the grpc-servers
//! scenario's venv), `--grpc-compress gzip`, and `shootout init --grpc`.

use assert_cmd::Command;
use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server, Reflect, GREETER_PROTO};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

fn url_of(server: &H2Server, method: &str) -> String {
    server
        .url(&format!("/helloworld.Greeter/{method}"))
        .replacen("http://", "grpc://", 1)
}

fn load_json(args: &[&str], url: &str) -> (std::process::Output, serde_json::Value) {
    let out = shootout()
        .args(["load", "-q", "--json"])
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, v)
}

#[test]
fn without_a_schema_the_server_s_reflection_gives_it() {
    let server =
        H2Server::start(H2Behavior::Grpc(GrpcBehavior::Reflection(Reflect::Serves))).unwrap();
    let (out, v) = load_json(
        &[
            "-n",
            "20",
            "--message",
            r#"{"name":"bob"}"#,
            "--expect-json",
            r#"{"message":"hello bob"}"#,
        ],
        &url_of(&server, "SayHello"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["requests"]["ok"], 20);
    // The service's file and its import, then the 20 calls.
    assert_eq!(server.answers(), 22);
    // A server-streaming method of the reflected schema.
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Reflection(
        Reflect::AlphaOnly,
    )))
    .unwrap();
    let (out, v) = load_json(
        &["-n", "5", "--message", r#"{"name":"bob"}"#],
        &url_of(&server, "SayHellos"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["load"]["unit"], "reply");
}

#[test]
fn a_server_without_reflection_is_told_to_give_the_schema() {
    // (service, why, questions answered)
    let rows = [
        (Reflect::Absent, "the server does not serve gRPC server reflection (grpc.reflection.v1 and v1alpha", 2),
        (Reflect::Garbled, "a file descriptor that does not parse", 1),
        (Reflect::OtherName, "answered the file defining \"other.Other\" when asked for the file defining \"helloworld.Greeter\"", 1),
        (Reflect::EndlessImports, "gave more than 256 files", 257),
    ];
    for (r, why, questions) in rows {
        let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Reflection(r))).unwrap();
        let (out, _) = load_json(&["-n", "5"], &url_of(&server, "SayHello"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{r:?}: {err}");
        assert!(err.contains(why), "{r:?}: {err}");
        assert!(
            err.contains(
                "give --proto FILE (with --import-path DIR for its imports) or --protoset FILE"
            ),
            "{r:?}: {err}"
        );
        // Nothing was loaded: only reflection's questions were answered.
        assert_eq!(server.answers(), questions, "{r:?}");
    }
    // A server that answers every path as its Greeter: its reply is no reflection's.
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Greeter)).unwrap();
    let (out, _) = load_json(&["-n", "5"], &url_of(&server, "SayHello"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no schema for helloworld.Greeter: without --proto or --protoset, shootout asks the server's reflection, and the server's reflection sent a reply with no answer: give --proto FILE"),
        "{err}"
    );
    assert_eq!(server.answers(), 1);
}

#[test]
fn gzip_is_asked_for_and_read() {
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Gzip)).unwrap();
    let url = url_of(&server, "SayHello");
    let common = [
        "-n",
        "12",
        "--proto",
        GREETER_PROTO,
        "--message",
        r#"{"name":"bob"}"#,
        "--expect-json",
        r#"{"message":"hello bob"}"#,
    ];
    let (out, v) = load_json(&[&common[..], &["--grpc-compress", "gzip"]].concat(), &url);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["requests"]["ok"], 12);
    // Not asked for: every compressed reply is a framing fault.
    let (_, v) = load_json(&common, &url);
    assert_eq!(v["failures"]["grpc_framing"], 12, "{v}");
    let out = shootout()
        .args([
            "load",
            "-q",
            "-n",
            "1",
            "--proto",
            GREETER_PROTO,
            "--grpc-compress",
            "br",
        ])
        .arg(&url)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--grpc-compress \"br\": shootout compresses gRPC messages with gzip only: give --grpc-compress gzip"));
}

#[test]
fn init_grpc_writes_a_workload_per_unary_method() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(GREETER_PROTO, dir.path().join("helloworld.proto")).unwrap();
    shootout()
        .current_dir(dir.path())
        .args([
            "init",
            "--grpc",
            "app:server",
            "--proto",
            "helloworld.proto",
            "--out",
            "plan.toml",
        ])
        .assert()
        .success()
        .stdout("wrote plan.toml (1 gRPC workload(s))\n");
    let plan = std::fs::read_to_string(dir.path().join("plan.toml")).unwrap();
    assert!(
        plan.contains("method = \"helloworld.Greeter/SayHello\"\nproto = \"helloworld.proto\""),
        "{plan}"
    );
    assert!(
        plan.contains("#   helloworld.Greeter/SayHellos (server streaming)"),
        "{plan}"
    );
    shootout()
        .current_dir(dir.path())
        .args(["run", "plan.toml", "--dry-run"])
        .assert()
        .success();
    // Not MODULE:SERVER.
    shootout().args(["init", "--grpc", "app"]).assert().code(2);
}

/// The grpc-servers scenario's venv (made by its setup, with grpcio-reflection), or `None`
/// with a note when it cannot be made (no python3-venv, no package index).
fn grpc_venv() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let made = std::process::Command::new(root.join("scenarios/grpc-servers/setup"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let venv = root.join("scenarios/grpc-servers/.venv");
    let reflection = made
        && std::process::Command::new(venv.join("bin/python"))
            .args(["-c", "import grpc_reflection"])
            .status()
            .is_ok_and(|s| s.success());
    if !reflection {
        eprintln!("note: no venv with grpcio-reflection (scenarios/grpc-servers/setup failed: no python3-venv or no index): test skipped");
        return None;
    }
    Some(venv)
}

/// A grpcio Greeter that serves reflection: `server()` makes it (as `init --grpc` wants).
const APP: &str = r#"from concurrent import futures
import grpc
from grpc_reflection.v1alpha import reflection

protos, services = grpc.protos_and_services("helloworld.proto")


class Greeter(services.GreeterServicer):
    def SayHello(self, request, context):
        return protos.HelloReply(message="hello " + request.name)


def server():
    s = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    services.add_GreeterServicer_to_server(Greeter(), s)
    names = (protos.DESCRIPTOR.services_by_name["Greeter"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, s)
    return s
"#;

/// A process killed and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn grpcio_s_reflection_gives_the_schema_and_init_a_plan() {
    let Some(venv) = grpc_venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/grpc-servers/helloworld.proto");
    std::fs::copy(scenario, dir.path().join("helloworld.proto")).unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    let python = venv.join("bin/python3");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // grpcio serves on its own while shootout asks it.
    let launcher = "import importlib, sys; s = importlib.import_module(sys.argv[1]).server(); s.add_insecure_port('127.0.0.1:' + sys.argv[2]); s.start(); s.wait_for_termination()";
    let _server = Killed(
        std::process::Command::new(&python)
            .args(["-c", launcher, "app", &port.to_string()])
            .current_dir(dir.path())
            .spawn()
            .unwrap(),
    );
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "grpcio did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("grpc://127.0.0.1:{port}/helloworld.Greeter/SayHello");
    let (out, v) = load_json(
        &[
            "-n",
            "30",
            "-c",
            "2",
            "--message",
            r#"{"name":"bob"}"#,
            "--expect-json",
            r#"{"message":"hello bob"}"#,
        ],
        &url,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["requests"]["ok"], 30, "{v}");
    // init starts the app itself, asks its reflection, writes the schema beside the plan.
    shootout()
        .current_dir(dir.path())
        .env("VIRTUAL_ENV", &venv)
        .args(["init", "--grpc", "app:server", "--out", "plan.toml"])
        .assert()
        .success();
    let plan = std::fs::read_to_string(dir.path().join("plan.toml")).unwrap();
    assert!(plan.contains("protoset = \"plan.protoset\""), "{plan}");
    assert!(
        plan.contains("method = \"helloworld.Greeter/SayHello\""),
        "{plan}"
    );
    assert!(!plan.contains("ServerReflection"), "{plan}");
    let short = plan.replace("concurrency = [1, 4, 16, 64]", "concurrency = [2]");
    std::fs::write(dir.path().join("plan.toml"), short).unwrap();
    shootout()
        .current_dir(dir.path())
        .args(["run", "plan.toml", "--quick", "--db"])
        .arg(dir.path().join("s.db"))
        .assert()
        .success();
}
