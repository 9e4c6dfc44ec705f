//! `shootout load` against real servers from Debian's packages, for the cases an in-process
//! test server cannot stand for: a gunicorn whose worker processes die mid-request, an nginx
//! that closes idle keep-alive connections, a WebSocket echo server on Python's
//! `websockets` (another implementation of RFC 6455 than ours), and caddy serving HTTP/1.1,
//! HTTP/2 and HTTP/3 on one port, and hypercorn serving HTTP/3 on aioquic (two other QUIC
//! stacks than ours). `scripts/test` installs
//! them; run alone without them, each test says what is missing and passes only outside CI.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The path of `program` if installed; `None` (with a note) outside CI, a failure in CI.
fn installed(program: &str, candidates: &[&str]) -> Option<PathBuf> {
    let found = candidates.iter().map(PathBuf::from).find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is not installed: scripts/test installs it"
        );
        eprintln!("note: {program} is not installed (scripts/test installs it): test skipped");
    }
    found
}

/// A server process, stopped (SIGTERM, then SIGKILL) and reaped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the pid of a child we own and have not reaped yet.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shootout load --json` with `args`; the parsed report.
fn load_json(args: &[&str]) -> Value {
    let out = Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .arg("load")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn count(v: &Value, path: &str) -> u64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_u64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// A WSGI app whose worker process exits, unanswered, on every 5th request it handles (as an
/// OOM kill or a crash would), writing one line per request to `$CRASH_LOG` before it
/// answers or dies.
const CRASHING_APP: &str = r#"
import os, threading
lock = threading.Lock()
handled = 0

def note(word):
    fd = os.open(os.environ["CRASH_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (word + "\n").encode())
    os.fsync(fd)
    os.close(fd)

def app(environ, start_response):
    global handled
    with lock:
        handled += 1
        mine = handled
    if mine % 5 == 0:
        note("died")
        os._exit(1)
    note("answered")
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\n"]
"#;

/// Starts gunicorn on a port of the OS's choice; returns it and its port.
fn gunicorn(gunicorn: &Path, dir: &Path) -> (Server, u16) {
    std::fs::write(dir.join("crashing.py"), CRASHING_APP).unwrap();
    let workers = [
        "--worker-class",
        "gthread",
        "--workers",
        "2",
        "--threads",
        "2",
    ];
    gunicorn_with(gunicorn, dir, &workers, "crashing:app")
}

/// Starts gunicorn with `workers` (its worker flags) serving `app` from `dir`, on a port of
/// the OS's choice; returns it and its port.
fn gunicorn_with(gunicorn: &Path, dir: &Path, workers: &[&str], app: &str) -> (Server, u16) {
    let mut child = Command::new(gunicorn)
        .args(workers)
        .args(["--bind", "127.0.0.1:0", "--chdir"])
        .arg(dir)
        .arg(app)
        .env("CRASH_LOG", dir.join("log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    // gunicorn names the port it was given: "Listening at: http://127.0.0.1:PORT (pid)".
    let mut lines = BufReader::new(stderr).lines();
    let port = loop {
        let line = lines
            .next()
            .expect("gunicorn ended before it listened")
            .unwrap();
        if let Some(rest) = line.split("Listening at: http://127.0.0.1:").nth(1) {
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
    };
    // Keep draining its log so that gunicorn never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (server, port)
}

#[test]
fn a_gunicorn_worker_dying_mid_request_is_a_failure_every_time() {
    let Some(bin) = installed("gunicorn", &["/usr/bin/gunicorn"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = gunicorn(&bin, dir.path());
    let url = format!("http://127.0.0.1:{port}/");
    let r = load_json(&["-n", "400", "-c", "2", "-s", "20", &url]);
    drop(server);

    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    let died = log.lines().filter(|l| *l == "died").count() as u64;
    let answered = log.lines().filter(|l| *l == "answered").count() as u64;
    let (ok, failed) = (count(&r, "requests.ok"), count(&r, "requests.failed"));
    assert_eq!(ok + failed, 400, "every request counted once: {r}");
    assert!(died > 0, "the app never died: {log}");
    // Each death is a request the server read and never answered: a failure of ours, not a
    // request sent again in silence.
    assert!(
        failed >= died,
        "{died} requests died in the app, shootout counted {failed} failed"
    );
    assert!(ok <= answered, "{ok} ok but the app answered {answered}");
    assert_eq!(
        count(&r, "requests.retried"),
        0,
        "a busy connection never re-sends"
    );
}

/// A WSGI app that answers `ok`.
const OK_APP: &str = r#"
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
    return [b"ok\n"]
"#;

/// gunicorn's sync workers serve one connection at a time and close it after the answer;
/// a worker that accepted a connection waits on it until its request comes. The open loop
/// gives each connection it opens ahead of need (`-c 64`) a request in the order they
/// opened, the order gunicorn accepts them, and opens one more per request only when it
/// needs one: exactly one connection per request, none opened again after gunicorn closed
/// it. Before, the 64 were taken last opened first and each closed one was opened again at
/// once and left idle: 1,064 connections for 1,000 requests, a reconnect per request, and
/// requests queued behind workers held by idle connections (p99 tens of ms at 1,000 req/s
/// on a quiet machine; hundreds of ms at this rate, 64 requests at 5 ms apart).
#[test]
fn gunicorn_sync_workers_get_a_request_on_every_connection_they_accept() {
    let Some(bin) = installed("gunicorn", &["/usr/bin/gunicorn"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.py"), OK_APP).unwrap();
    let sync = ["--worker-class", "sync", "--workers", "2"];
    let (_server, port) = gunicorn_with(&bin, dir.path(), &sync, "ok:app");
    let url = format!("http://127.0.0.1:{port}/");
    let r = load_json(&[
        "-n",
        "1000",
        "-c",
        "64",
        "--threads",
        "2",
        "--rate",
        "200",
        &url,
    ]);
    assert_eq!(
        (count(&r, "requests.ok"), count(&r, "requests.failed")),
        (1000, 0),
        "{r}"
    );
    // Counts, exact whatever the machine's load: one connection per request.
    assert_eq!(count(&r, "connections.opened"), 1000, "{r}");
    assert_eq!(count(&r, "connections.reconnects"), 0, "{r}");
    // A request is served in about a millisecond after gunicorn reads it: every second
    // keeps its p99 under 50 ms (room for a busy machine's descheduled workers). Before,
    // each closed connection was opened again at once and left idle, and requests queued
    // behind workers held by it in every second; and the 64 opened ahead were opened worker
    // after worker, so gunicorn's workers took one shootout worker's connections first while
    // the other's requests waited (p99 290 ms in the first second).
    let seconds = r["series"].as_array().unwrap();
    assert!(seconds.len() >= 4, "{r}");
    for s in seconds {
        let p99 = s["p99_ms"].as_f64().unwrap();
        assert!(p99 < 50.0, "second {}: p99 {p99} ms: {r}", s["second"]);
    }
}

/// A free port on 127.0.0.1 (the OS chose it; nginx cannot be asked for port 0 and tell).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts nginx answering `ok` on `port`, closing connections idle for `keepalive`.
fn nginx(nginx: &Path, dir: &Path, port: u16, keepalive: &str) -> Server {
    let d = dir.display();
    let conf = format!(
        "worker_processes 1;
daemon off;
master_process on;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    keepalive_timeout {keepalive};
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 \"ok\\n\"; }}
    }}
}}
"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let child = Command::new(nginx)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nginx did not listen: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server
}

#[test]
fn nginx_closing_idle_keepalive_connections_is_no_failure() {
    let Some(bin) = installed("nginx", &["/usr/sbin/nginx"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = nginx(&bin, dir.path(), port, "200ms");
    // One connection, a request every 250 ms: nginx closes it while idle before almost
    // every request, and now and then just as one goes out.
    let url = format!("http://127.0.0.1:{port}/");
    let r = load_json(&["-n", "16", "-c", "1", "--rate", "4", &url]);
    assert_eq!(
        (count(&r, "requests.ok"), count(&r, "requests.failed")),
        (16, 0),
        "{r}"
    );
    // nginx closed the idle connection before almost every request: the next request
    // opened a new one (not a reconnect: none is opened before a request needs it).
    assert!(count(&r, "connections.opened") >= 8, "{r}");
    assert_eq!(count(&r, "connections.reconnects"), 0, "{r}");
}

/// nginx's http block for a plan's contender: `ok` on `{port}`, its files in `{tmp}`.
const NGINX_PLAN_CONF: &str = r#"worker_processes 1;
pid {tmp}/nginx.pid;
error_log stderr;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "ok\n"; }
    }
}
"#;

/// The usual nginx setup, whose port lives in its config file, runs: as the plan's
/// `config` (written to `{config}`), and as a file a setup writes with `{port}` in it.
/// Each is stored with nginx's version, not that of `mkdir` or `sed` before it.
#[test]
fn nginx_with_its_port_in_a_config_file_is_measured_with_its_own_version() {
    let Some(bin) = installed("nginx", &["/usr/sbin/nginx"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = NGINX_PLAN_CONF
        .replace("{port}", "@PORT@")
        .replace("{tmp}", "@TMP@");
    std::fs::write(dir.path().join("nginx.conf.in"), template).unwrap();
    let nginx = bin.display();
    let plan = format!(
        r#"name = "nginx, its port in a file"
[defaults]
warmup = 0
requests = 200
repeat = 1
cooldown = "0s"

[[contender]]
name = "config"
command = "mkdir -p {{tmp}}/logs && exec {nginx} -p {{tmp}} -c {{config}} -g 'daemon off;'"
config = """
{NGINX_PLAN_CONF}"""

[[contender]]
name = "setup"
setup = "mkdir -p {{tmp}}/logs && sed -e 's/@PORT@/{{port}}/' -e 's|@TMP@|{{tmp}}|g' {{plan_dir}}/nginx.conf.in > {{tmp}}/nginx.conf"
command = "exec {nginx} -p {{tmp}} -c {{tmp}}/nginx.conf -g 'daemon off;'"

[[workload]]
name = "ok"
expect = {{ status = 200, body_contains = "ok" }}

[load]
concurrency = [2]
"#
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let db = dir.path().join("shootout.db");
    let out = Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .arg("run")
        .arg(dir.path().join("plan.toml"))
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v = Command::new(&bin).arg("-v").output().unwrap();
    let version = String::from_utf8_lossy(&v.stderr).trim().to_string();
    assert!(version.starts_with("nginx version: nginx/"), "{version}");
    let store = shootout_store::Store::open_existing(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let contenders = store.contenders(run.id).unwrap();
    for c in &contenders {
        assert_eq!(
            c.status,
            shootout_model::ContenderStatus::Measured,
            "{}: {}\n{err}",
            c.name,
            c.detail
        );
        assert_eq!(c.version.as_deref(), Some(version.as_str()), "{}", c.name);
    }
    assert_eq!(contenders.len(), 2);
}

/// An echo server on Python's `websockets` (Debian's python3-websockets): `/echo` echoes
/// every message; `/close3` echoes three, then closes with 1001 (going away). It prints
/// its port.
const WS_ECHO: &str = r#"
import asyncio, sys, websockets

async def handler(ws, path):
    n = 0
    async for msg in ws:
        if path == "/close3" and n == 3:
            await ws.close(1001)
            return
        await ws.send(msg)
        n += 1

async def main():
    async with websockets.serve(handler, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)
        await asyncio.Future()

asyncio.run(main())
"#;

/// Starts the `websockets` echo server; returns it and its port.
fn websockets_echo(python: &Path, dir: &Path) -> (Server, u16) {
    std::fs::write(dir.join("echo.py"), WS_ECHO).unwrap();
    let mut child = Command::new(python)
        .arg(dir.join("echo.py"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let line = BufReader::new(stdout)
        .lines()
        .next()
        .expect("the echo server ended before it listened")
        .unwrap();
    let port = line.trim_start_matches("PORT ").trim().parse().unwrap();
    (server, port)
}

/// The python3 that has Debian's `websockets`, if installed.
fn python_websockets() -> Option<PathBuf> {
    let python = installed("python3", &["/usr/bin/python3"])?;
    let found = Command::new(&python)
        .args(["-c", "import websockets"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3-websockets is not installed: scripts/test installs it"
        );
        eprintln!(
            "note: python3-websockets is not installed (scripts/test installs it): test skipped"
        );
        return None;
    }
    Some(python)
}

/// Text and binary echoes, pipelined or not, every reply checked against the message.
#[test]
fn websocket_messages_to_a_python_websockets_echo_server_all_come_back() {
    let Some(python) = python_websockets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = websockets_echo(&python, dir.path());
    let url = format!("ws://127.0.0.1:{port}/echo");
    let r = load_json(&[
        "-n",
        "2000",
        "-c",
        "8",
        "--ws-text",
        "héllo wörld",
        "--expect-echo",
        &url,
    ]);
    assert_eq!(r["load"]["protocol"], "websocket");
    assert_eq!(
        (count(&r, "requests.ok"), count(&r, "requests.failed")),
        (2000, 0),
        "{r}"
    );
    let file = dir.path().join("msg.bin");
    std::fs::write(
        &file,
        (0..70_000u32).map(|i| (i % 253) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let r = load_json(&[
        "-n",
        "200",
        "-c",
        "2",
        "--pipeline",
        "4",
        "-p",
        f,
        "--expect-echo",
        &url,
    ]);
    assert_eq!(
        (count(&r, "requests.ok"), count(&r, "requests.failed")),
        (200, 0),
        "{r}"
    );
    drop(server);
}

/// The server closes after three echoes with 1001: the fourth message, outstanding, fails
/// as `closed`, once per connection, and the code is counted.
#[test]
fn a_python_websockets_server_closing_mid_run_fails_the_message_it_left() {
    let Some(python) = python_websockets() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = websockets_echo(&python, dir.path());
    let url = format!("ws://127.0.0.1:{port}/close3");
    let r = load_json(&[
        "-n",
        "40",
        "-c",
        "1",
        "--ws-text",
        "x",
        "--expect-echo",
        &url,
    ]);
    drop(server);
    assert_eq!(count(&r, "requests.ok"), 30, "{r}");
    assert_eq!(count(&r, "failures.closed"), 10, "{r}");
    assert_eq!(count(&r, "requests.close_codes.1001"), 10, "{r}");
}

/// caddy's config for [`caddy`]: HTTP/1.1, HTTP/2 and HTTP/3 on one port with TLS from its
/// own CA, `/hello` answered with 12 bytes; no admin endpoint, no redirect listener.
const CADDYFILE: &str = "{
\tadmin off
\tskip_install_trust
\tlocal_certs
\tauto_https disable_redirects
\tservers {
\t\tprotocols h1 h2 h3
\t}
}
https://127.0.0.1:PORT {
\tbind 127.0.0.1
\ttls internal
\tlog {
\t\toutput file ACCESS_LOG
\t}
\trespond /hello `Hello World
` 200
}
";

/// Starts caddy on `port` with [`CADDYFILE`], its CA and state in `dir`; returns it and
/// the PEM file of its root CA, once the port accepts and the CA exists.
fn caddy(caddy: &Path, dir: &Path, port: u16) -> (Server, PathBuf) {
    let access = dir.join("access.log");
    let text = CADDYFILE
        .replace("PORT", &port.to_string())
        .replace("ACCESS_LOG", &access.display().to_string());
    let server = caddy_with(caddy, dir, &text);
    until_caddy_answers(port);
    // It has issued the site's certificate, so its CA exists.
    let ca = dir.join("data/caddy/pki/authorities/local/root.crt");
    assert!(ca.exists(), "{}", ca.display());
    (server, ca)
}

/// Waits (20 s at most) until caddy on `port` answers over TLS, asking for `/ready` (left
/// out of the access log's counts): it listens before its internal CA has issued the
/// site's certificate, and a handshake until then ends with TLS alert internal_error.
fn until_caddy_answers(port: u16) {
    let url = format!("https://127.0.0.1:{port}/ready");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answered = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            && Command::new(assert_cmd::cargo::cargo_bin("shootout"))
                .args(["load", "-n", "1", "--insecure", &url])
                .output()
                .unwrap()
                .status
                .success();
        if answered {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "caddy did not answer over TLS in 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts caddy with the Caddyfile `text` in `dir` (its state there too).
fn caddy_with(caddy: &Path, dir: &Path, text: &str) -> Server {
    let conf = dir.join("Caddyfile");
    std::fs::write(&conf, text).unwrap();
    let child = Command::new(caddy)
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(&conf)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("HOME", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Server(child)
}

/// The README's caddy recipe for HTTP/3 (the block after `<!-- caddy-h3-recipe -->`).
fn readme_caddy_recipe() -> String {
    let readme = include_str!("../README.md");
    let after = readme
        .split("<!-- caddy-h3-recipe -->\n```\n")
        .nth(1)
        .expect("the README's caddy recipe");
    after[..after.find("```").unwrap()].to_string()
}

/// The README's HTTP/3 recipe for caddy works as written (on a free port), and without its
/// `bind` line an IP-literal URL fails the QUIC handshake with TLS alert 80, which
/// shootout explains (no SNI for an IP address; bind it, or use the host name).
#[test]
fn the_readme_caddy_recipe_serves_http3_and_without_bind_the_error_says_why() {
    let Some(bin) = installed("caddy", &["/usr/bin/caddy"]) else {
        return;
    };
    let recipe = readme_caddy_recipe();
    assert!(
        recipe.contains("https://127.0.0.1:8443 {\n\tbind 127.0.0.1\n"),
        "{recipe}"
    );
    let start = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let server = caddy_with(&bin, dir.path(), &text.replace("8443", &port.to_string()));
        until_caddy_answers(port);
        (server, dir, format!("https://127.0.0.1:{port}/"))
    };
    let (server, _dir, url) = start(&recipe);
    let r = load_json(&[
        "--http3",
        "-n",
        "50",
        "-c",
        "2",
        "--insecure",
        "--expect-length",
        "11",
        &url,
    ]);
    assert_eq!(
        (count(&r, "requests.ok"), count(&r, "requests.failed")),
        (50, 0),
        "{r}"
    );
    assert_eq!(r["load"]["protocol"], "h3", "{r}");
    drop(server);
    // Listening on every address: the handshake of an IP-literal URL names no server.
    let (server, _dir, url) = start(&recipe.replace("\tbind 127.0.0.1\n", ""));
    let out = Command::new(assert_cmd::cargo::cargo_bin("shootout"))
        .args(["load", "--http3", "-n", "1", "--insecure", &url])
        .output()
        .unwrap();
    drop(server);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    for says in [
        "TLS alert 80 (internal_error)",
        "no SNI was sent",
        "`bind 127.0.0.1`",
    ] {
        assert!(err.contains(says), "{says}: {err}");
    }
}

/// Debian's caddy serves HTTP/1.1, HTTP/2 and HTTP/3 on one port: each protocol's
/// requests are all answered with the 12-byte body, with caddy's own CA trusted through
/// `--cacert`, and caddy's access log says each came over the protocol asked for (400
/// requests logged as HTTP/3.0 for --http3, none of them over TCP).
#[test]
fn caddy_answers_every_request_over_http1_http2_and_http3_on_one_port() {
    let Some(bin) = installed("caddy", &["/usr/bin/caddy"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (_server, ca) = caddy(&bin, dir.path(), port);
    let url = format!("https://127.0.0.1:{port}/hello");
    let ca = ca.display().to_string();
    for (flags, protocol) in [
        (&[][..], "http/1.1"),
        (&["--http2", "--streams", "4"][..], "h2"),
        (&["--http3", "--streams", "4"][..], "h3"),
    ] {
        let mut args = vec!["-n", "400", "-c", "4", "--cacert", &ca];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--expect-status", "200", "--expect-length", "12", &url]);
        let r = load_json(&args);
        assert_eq!(
            (count(&r, "requests.ok"), count(&r, "requests.failed")),
            (400, 0),
            "{protocol}: {r}"
        );
        assert_eq!(r["load"]["protocol"], protocol, "{r}");
    }
    let log = std::fs::read_to_string(dir.path().join("access.log")).unwrap();
    let over = |proto: &str| {
        log.lines()
            .filter(|l| l.contains(&format!("\"proto\":\"{proto}\"")))
            .filter(|l| l.contains("\"uri\":\"/hello\""))
            .count()
    };
    assert_eq!(
        (over("HTTP/1.1"), over("HTTP/2.0"), over("HTTP/3.0")),
        (400, 400, 400),
        "requests per protocol in caddy's access log"
    );
}

/// The hypercorn and aioquic of the README's HTTP/3 recipe, in a venv of scenarios' kind
/// (`scenarios/lib/common.sh`'s `need_venv`: made once, kept in `.venvs/hypercorn-h3`).
const HYPERCORN_H3: &str = "hypercorn==0.18.0 aioquic==1.7.2";

/// The README's second HTTP/3 recipe (the block after `<!-- hypercorn-h3-recipe -->`), line
/// by line.
fn readme_hypercorn_recipe() -> Vec<String> {
    let readme = include_str!("../README.md");
    let after = readme
        .split("<!-- hypercorn-h3-recipe -->\n```sh\n")
        .nth(1)
        .expect("the README's hypercorn recipe");
    after[..after.find("```").unwrap()]
        .lines()
        .map(str::to_string)
        .collect()
}

/// The README's hypercorn recipe serves HTTP/3 as written (on a free port): its venv line
/// pins what this test installs, its certificate lines make a CA and a certificate that
/// `--cacert ca.pem` verifies, and every request of a load over HTTP/3 is answered with the
/// app's 11 bytes and logged by hypercorn as HTTP/3 (its access log, exactly 200 lines of
/// `GET / 3`; the readiness probes ask for another path).
#[test]
fn the_readme_hypercorn_recipe_serves_http3_on_aioquic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lines = readme_hypercorn_recipe();
    let (venv_line, rest) = lines.split_first().expect("a recipe");
    assert_eq!(
        venv_line,
        &format!("python3 -m venv h3 && h3/bin/pip install {HYPERCORN_H3}"),
        "the README's pins are the test's"
    );
    let (serve, make) = rest.split_last().expect("a server line");
    let venv = root.join("target/hypercorn-h3/h3");
    std::fs::create_dir_all(venv.parent().unwrap()).unwrap();
    let made = Command::new("bash")
        .arg("-c")
        .arg(format!(
            ". scenarios/lib/common.sh && need_venv {} {HYPERCORN_H3}",
            venv.display()
        ))
        .current_dir(root)
        .status()
        .unwrap();
    if !made.success() {
        assert!(
            std::env::var_os("CI").is_none(),
            "could not make the venv of {HYPERCORN_H3}"
        );
        eprintln!("note: no venv of {HYPERCORN_H3} (no python3-venv or no index): test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&venv, dir.path().join("h3")).unwrap();
    let made = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &make.join("\n")])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = free_port();
    let log = dir.path().join("access.log");
    let child = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec {} --access-logfile {}",
            serve.replace("8443", &port.to_string()),
            log.display()
        ))
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Server(child);
    let ca = dir.path().join("ca.pem");
    let ca = ca.to_str().unwrap();
    let url = format!("https://127.0.0.1:{port}/");
    // Ready when a request over HTTP/3 is answered (20 s at most: the venv's Python starts).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let probe = Command::new(assert_cmd::cargo::cargo_bin("shootout"))
            .args(["load", "--http3", "-n", "1", "-q", "--cacert", ca])
            .arg(format!("{url}ready"))
            .output()
            .unwrap();
        if probe.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "hypercorn did not answer over HTTP/3 in 20 s: {}",
            String::from_utf8_lossy(&probe.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let r = load_json(&[
        "--http3",
        "-n",
        "200",
        "-c",
        "2",
        "--streams",
        "4",
        "--cacert",
        ca,
        "--expect-length",
        "11",
        &url,
    ]);
    assert_eq!(
        (count(&r, "requests.ok"), count(&r, "requests.failed")),
        (200, 0),
        "{r}"
    );
    assert_eq!(r["load"]["protocol"], "h3", "{r}");
    let logged = std::fs::read_to_string(&log).unwrap();
    let h3 = logged
        .lines()
        .filter(|l| l.contains("\"GET / 3\" 200"))
        .count();
    let other = logged
        .lines()
        .filter(|l| l.contains("\"GET / ") && !l.contains("\"GET / 3\""))
        .count();
    assert_eq!((h3, other), (200, 0), "{logged}");
}

/// A scenario's venv lives out of the sources, in one folder (`.venvs/`, or
/// `$SHOOTOUT_VENVS`): `need_venv` makes the scenario's `.venv` a link to
/// `VENVS/SCENARIO`, and takes a venv already there with the same packages as it is,
/// installing nothing (its `pip` here is a file that fails if run).
#[test]
fn a_scenario_s_venv_is_a_link_into_the_venvs_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let venvs = tmp.path().join("venvs");
    let made = venvs.join("demo");
    std::fs::create_dir_all(made.join("bin")).unwrap();
    for (name, text) in [
        ("python", "#!/bin/sh\nexit 0\n"),
        ("pip", "#!/bin/sh\nexit 9\n"),
    ] {
        let file = made.join("bin").join(name);
        std::fs::write(&file, text).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&file, mode).unwrap();
    }
    std::fs::write(made.join(".requirements"), "flask==3.1.3\n").unwrap();
    let scenario = tmp.path().join("scenarios/demo");
    std::fs::create_dir_all(&scenario).unwrap();
    let link = scenario.join(".venv");
    let status = Command::new("bash")
        .arg("-c")
        .arg(format!(
            ". scenarios/lib/common.sh && need_venv {} flask==3.1.3",
            link.display()
        ))
        .env("SHOOTOUT_VENVS", &venvs)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_link(&link).unwrap(), made);
    // Nothing of the venv is in the scenario's folder but the link.
    let entries: Vec<_> = std::fs::read_dir(&scenario).unwrap().collect();
    assert_eq!(entries.len(), 1);
    // And git leaves the default folder alone.
    let ignore = std::fs::read_to_string(root.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "/.venvs/"), "{ignore}");
}
