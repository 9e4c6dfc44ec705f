//! `shootout init --grpc MODULE:SERVER`: a plan for a gRPC service served by grpcio, one
//! workload per unary method. SERVER is a `grpc.Server` (grpcio's thread-pool server)
//! that MODULE makes with its services added and no port, or a function of no arguments
//! that returns one; the plan's contender starts it on shootout's port with a small
//! launcher ([`LAUNCHER`]). The methods come from `--proto FILE` (compiled here) or, without
//! it, from the service itself: init starts it once on a free port of 127.0.0.1 and asks
//! its reflection service for every service and its files (the app must serve reflection,
//! grpcio-reflection's `enable_server_reflection`), which it writes beside the plan as a
//! protoset the workloads name. Streaming methods are listed in a comment, not loaded.

use super::Choices;
use crate::output::Failure;
use anyhow::{anyhow, Context};
use prost_reflect::DescriptorPool;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts MODULE's SERVER (`argv[1]`, `argv[2]`) on 127.0.0.1:PORT (`argv[3]`) and serves
/// until killed: a `grpc.Server`, or a function of no arguments that makes one.
pub const LAUNCHER: &str = "import importlib, sys; m = importlib.import_module(sys.argv[1]); s = getattr(m, sys.argv[2]); s = s if hasattr(s, 'add_insecure_port') else s(); s.add_insecure_port('127.0.0.1:' + sys.argv[3]); s.start(); s.wait_for_termination()";

/// How long the service may take to listen when init starts it.
const START: Duration = Duration::from_secs(20);

/// Where the schema comes from, as the workloads name it.
pub struct Schema {
    /// The plan's key: `proto` or `protoset`.
    pub key: &'static str,
    /// The file, as the plan names it (relative to the plan's directory when beside it).
    pub file: String,
}

/// The methods of the services a schema defines: the unary ones (`package.Service/Method`)
/// and the streaming ones, left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Methods {
    /// Unary methods: a workload each.
    pub unary: Vec<String>,
    /// Streaming methods, with their shape.
    pub streaming: Vec<(String, &'static str)>,
}

/// The methods of `services` in `pool` (every service of the pool when `None`, the
/// reflection service's own left out).
pub fn methods(pool: &DescriptorPool, services: Option<&[String]>) -> Methods {
    let mut m = Methods::default();
    for s in pool.services() {
        let name = s.full_name();
        let wanted = match services {
            Some(list) => list.iter().any(|l| l == name),
            None => !name.starts_with(shootout_engine::reflection::REFLECTION_PACKAGE),
        };
        if !wanted {
            continue;
        }
        for method in s.methods() {
            let full = format!("{name}/{}", method.name());
            match (method.is_client_streaming(), method.is_server_streaming()) {
                (false, false) => m.unary.push(full),
                (false, true) => m.streaming.push((full, "server streaming")),
                (true, false) => m.streaming.push((full, "client streaming")),
                (true, true) => m.streaming.push((full, "bidirectional")),
            }
        }
    }
    m
}

/// The plan: one contender (the app under its own grpcio server), a workload per unary
/// method, the streaming ones in a comment, the concurrency sweep.
pub fn plan_text(
    app: &str,
    python: &str,
    schema: &Schema,
    methods: &Methods,
    choices: &Choices,
) -> String {
    let (module, server) = app.split_once(':').unwrap_or((app, "server"));
    let file = super::shell_word(choices.out.as_deref().unwrap_or("plan.toml"));
    let mut o = format!(
        "# Written by `shootout init --grpc {app}`: the gRPC service {app} under grpcio,\n\
         # each unary method a workload. Run it with `shootout run {file}` (`--quick` for a\n\
         # first look, `--dry-run` to check it).\n"
    );
    o.push_str(&format!(
        "name = {}\n\n[defaults]\nwarmup = \"2s\"\nduration = \"10s\"\nrepeat = 3\ncooldown = \"1s\"\ntimeout = \"5s\"\n\n",
        super::q(&format!("init: the gRPC service {app}"))
    ));
    let command = format!(
        "exec {} -c {} {} {} {{port}}",
        super::shell_word(python),
        super::shell_word(LAUNCHER),
        super::shell_word(module),
        super::shell_word(server)
    );
    o.push_str(&format!(
        "# {app} started on 127.0.0.1 at the port shootout picks; a gRPC server answers the\n\
         # ready wait's GET with its HTTP/2 SETTINGS, which is taken for \"listening\".\n\
         [[contender]]\nname = \"grpcio\"\ncommand = {}\nbaseline = true\n\n",
        super::q(&command)
    ));
    if !methods.streaming.is_empty() {
        o.push_str(
            "# Streaming methods, not loaded by this plan (load them with `shootout load`):\n",
        );
        for (m, shape) in &methods.streaming {
            o.push_str(&format!("#   {m} ({shape})\n"));
        }
        o.push('\n');
    }
    for m in &methods.unary {
        o.push_str(&format!(
            "# The request is the empty message: write the fields the method needs, in\n\
             # protobuf's JSON mapping, and what a good reply holds (expect.json).\n\
             [[workload]]\nname = {}\nprotocol = \"grpc\"\nmethod = {}\n{} = {}\nmessage = '{{}}'\n\n",
            super::q(m),
            super::q(m),
            schema.key,
            super::q(&schema.file)
        ));
    }
    o.push_str("[load]\nconcurrency = [1, 4, 16, 64]\n");
    o
}

/// The Python that runs the app: the active virtualenv's, else `python3` on PATH.
fn python() -> String {
    match std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        Some(v) => Path::new(&v).join("bin/python3").display().to_string(),
        None => super::PY.to_string(),
    }
}

/// `shootout init --grpc MODULE:SERVER`: the plan (and, from reflection, its protoset)
/// written to `out`, or printed.
pub fn init(app: String, proto: Option<PathBuf>, out: Option<&Path>) -> Result<i32, Failure> {
    let choices = &Choices {
        out: out.map(|p| p.display().to_string()),
        slo: Vec::new(),
    };
    let app = super::app_arg("--grpc", app)?;
    let python = python();
    let (schema, methods, set) = match proto {
        Some(p) => {
            let pool = compile(&p)?;
            let file = relative_to_plan(&p, choices.out.as_deref())?;
            let schema = Schema { key: "proto", file };
            (schema, methods(&pool, None), None)
        }
        None => {
            let (pool, set, services) = reflect(&python, &app).map_err(Failure::run)?;
            let (file, path) = protoset_beside(&app, choices.out.as_deref());
            let m = methods(&pool, Some(&services));
            (
                Schema {
                    key: "protoset",
                    file,
                },
                m,
                Some((path, set)),
            )
        }
    };
    if methods.unary.is_empty() {
        return Err(Failure::run(anyhow!(
            "{app} has no unary method (streaming ones: {}): a plan loads unary methods; load streaming ones with shootout load grpc://HOST:PORT/package.Service/Method",
            methods.streaming.len()
        )));
    }
    let text = plan_text(&app, &python, &schema, &methods, choices);
    if let Some((path, set)) = set {
        write_new(&path, &set)?;
        crate::output::emit(&format!(
            "wrote {} (the schema {app}'s reflection gave)\n",
            path.display()
        ))?;
    }
    match &choices.out {
        Some(out) => {
            write_new(Path::new(out), text.as_bytes())?;
            crate::output::emit(&format!(
                "wrote {out} ({} gRPC workload(s))\n",
                methods.unary.len()
            ))?;
        }
        None => crate::output::emit(&text)?,
    }
    Ok(0)
}

/// Writes a new file (an existing one is not overwritten).
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| {
            Failure::run(anyhow!(
                "{}: {e} (choose another --out or remove it)",
                path.display()
            ))
        })?;
    f.write_all(bytes).map_err(Failure::run)
}

/// `--proto FILE` compiled (its imports beside it).
fn compile(p: &Path) -> Result<DescriptorPool, Failure> {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = p.file_name().map(Path::new).unwrap_or(p);
    let failed = |e: protox::Error| {
        Failure::usage(anyhow!(
            "--proto {}: {e} (imports are looked for beside it)",
            p.display()
        ))
    };
    let mut c = protox::Compiler::new([dir]).map_err(failed)?;
    c.include_imports(true).open_file(name).map_err(failed)?;
    Ok(c.descriptor_pool())
}

/// The `.proto` file as the plan names it: relative to the plan's directory (the
/// directory of `out`, or the current one), or absolute.
fn relative_to_plan(p: &Path, out: Option<&str>) -> Result<String, Failure> {
    let abs = p
        .canonicalize()
        .map_err(|e| Failure::usage(anyhow!("--proto {}: {e} (check the path)", p.display())))?;
    let dir = out
        .and_then(|o| Path::new(o).parent().map(Path::to_path_buf))
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let rel = dir
        .canonicalize()
        .ok()
        .and_then(|d| abs.strip_prefix(d).ok().map(Path::to_path_buf));
    Ok(rel.unwrap_or(abs).display().to_string())
}

/// The protoset's name in the plan, and its path: `STEM.protoset` beside the plan, or
/// `MODULE.protoset` in the current directory when the plan is printed.
fn protoset_beside(app: &str, out: Option<&str>) -> (String, PathBuf) {
    let module = app.split_once(':').map_or(app, |(m, _)| m);
    match out {
        Some(o) => {
            let o = Path::new(o);
            let stem = o.file_stem().map_or("plan".into(), |s| s.to_string_lossy());
            let path = o.with_file_name(format!("{stem}.protoset"));
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            (name, path)
        }
        None => {
            let name = format!("{module}.protoset");
            (name.clone(), PathBuf::from(name))
        }
    }
}

/// Starts the app on a free port, asks its reflection for every service, stops it.
fn reflect(python: &str, app: &str) -> anyhow::Result<(DescriptorPool, Vec<u8>, Vec<String>)> {
    let (module, server) = app.split_once(':').unwrap_or((app, "server"));
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut child = Command::new(python)
        .args(["-c", LAUNCHER, module, server, &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| {
            format!("cannot start {python} (install Python 3 and grpcio: pip install grpcio)")
        })?;
    let asked = listening(&mut child, port).and_then(|()| ask(port, app));
    let _ = child.kill();
    let out = child.wait_with_output().ok();
    asked.map_err(|e| {
        let said = out
            .map(|o| {
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
                    .to_string()
            })
            .filter(|l| !l.is_empty())
            .map(|l| format!(" (it said: {l})"))
            .unwrap_or_default();
        e.context(format!("{app}{said}"))
    })
}

/// Waits until the app accepts a connection on `port`, or exits, or [`START`] passes.
fn listening(child: &mut Child, port: u16) -> anyhow::Result<()> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let until = Instant::now() + START;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            return Err(anyhow!("it exited ({status}) before it listened: check that MODULE imports from this directory and SERVER is a grpc.Server (or makes one)"));
        }
        if Instant::now() > until {
            return Err(anyhow!("it did not listen within {START:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every service of the app listening on `port`, from its reflection.
fn ask(port: u16, app: &str) -> anyhow::Result<(DescriptorPool, Vec<u8>, Vec<String>)> {
    use shootout_engine::reflection::{fetch, Ask, Limits};
    let target = shootout_model::Target::parse(&format!("http://127.0.0.1:{port}/"))?;
    let found = fetch(&target, &[], Duration::from_secs(5), &Ask::All, Limits::default()).map_err(|e| {
        anyhow!("{e}: serve reflection in {app} (grpcio-reflection: reflection.enable_server_reflection(names, server)), or give its schema with --proto FILE")
    })?;
    let pool = shootout_engine::grpc::decode_pool(&found.set).map_err(|e| anyhow!("{e}"))?;
    Ok((pool, found.set, found.services))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greeter() -> DescriptorPool {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/grpc");
        let mut c = protox::Compiler::new([dir]).unwrap();
        c.include_imports(true)
            .open_file("helloworld.proto")
            .unwrap();
        c.descriptor_pool()
    }

    #[test]
    fn unary_methods_are_workloads_and_streaming_ones_a_comment() {
        let m = methods(&greeter(), None);
        assert_eq!(m.unary, ["helloworld.Greeter/SayHello"]);
        assert_eq!(m.streaming.len(), 3);
        assert_eq!(
            methods(&greeter(), Some(&["other.S".into()])),
            Methods::default()
        );
        let choices = Choices {
            out: Some("g.toml".into()),
            slo: vec![],
        };
        let schema = Schema {
            key: "proto",
            file: "helloworld.proto".into(),
        };
        let text = plan_text("app:server", "python3", &schema, &m, &choices);
        assert!(text.contains("method = \"helloworld.Greeter/SayHello\"\nproto = \"helloworld.proto\"\nmessage = '{}'"), "{text}");
        assert!(
            text.contains("#   helloworld.Greeter/Chat (bidirectional)"),
            "{text}"
        );
        assert!(text.contains("exec python3 -c 'import importlib"), "{text}");
        let plan = shootout_model::plan::parse(&text, "g.toml", &[0, 1]).unwrap();
        assert_eq!(plan.workloads.len(), 1);
        assert_eq!(plan.contenders.len(), 1);
    }

    #[test]
    fn the_protoset_goes_beside_the_plan() {
        assert_eq!(
            protoset_beside("app:server", Some("d/g.toml")),
            ("g.protoset".into(), PathBuf::from("d/g.protoset"))
        );
        assert_eq!(
            protoset_beside("my.app:server", None),
            ("my.app.protoset".into(), PathBuf::from("my.app.protoset"))
        );
    }
}
