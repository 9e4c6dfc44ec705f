//! `shootout init`: writes a plan for the common Python shootouts (a WSGI or ASGI app
//! under every server the current Python environment has, a static directory under
//! nginx, Apache and http.server, or URLs the user runs). Three steps, kept apart so that tests
//! can fake the outside world: discovery ([`discover`] asks `python3` which modules import
//! and `PATH` which programs exist), the probe ([`probe`] asks the first server for `/`
//! once, for the workload's expectations), and the pure [`plan_text`] of (template,
//! discovered servers, answers) → TOML, which the plan parser must accept. For an ASGI
//! app, the probe also asks the app itself (in-process, in the `ws` module) whether it
//! takes WebSocket connections; the plan then offers a commented WebSocket workload.

use crate::output::Failure;
use anyhow::{anyhow, Context};
use clap::Args;
use shootout_engine::{ParseError, Progress, ResponseParser};
use shootout_harness::{Contender, ContenderConfig};
use shootout_model::plan::cpu_ranges;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

mod grpc;
mod python;
mod routes;
mod ws;
pub use ws::WsRoute;

/// Flags of `shootout init`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("template").required(true).args(["wsgi", "asgi", "static_dir", "url", "grpc"])))]
pub struct InitArgs {
    /// A WSGI app, MODULE:APP (e.g. myapp:app), importable from the current directory.
    #[arg(long, value_name = "MODULE:APP")]
    pub wsgi: Option<String>,
    /// An ASGI app, MODULE:APP.
    #[arg(long, value_name = "MODULE:APP")]
    pub asgi: Option<String>,
    /// A directory of static files, served by nginx, Apache and python3 -m http.server.
    #[arg(long = "static", value_name = "DIR")]
    pub static_dir: Option<PathBuf>,
    /// Servers you run yourself (repeatable, or several after one --url).
    #[arg(long, value_name = "URL", num_args = 1..)]
    pub url: Vec<String>,
    /// A gRPC service, MODULE:SERVER: a grpcio grpc.Server that MODULE makes with its
    /// services added (no port), or a function of no arguments that returns one. A
    /// workload per unary method, from --proto or the service's own reflection.
    #[arg(long, value_name = "MODULE:SERVER", conflicts_with = "find_max")]
    pub grpc: Option<String>,
    /// With --grpc: the service's schema (else init starts the service once and asks its
    /// reflection, writing the schema beside the plan as a protoset).
    #[arg(long, value_name = "FILE", requires = "grpc")]
    pub proto: Option<PathBuf>,
    /// The path the workload GETs.
    #[arg(long, value_name = "PATH", default_value = "/")]
    pub path: String,
    /// Write the plan here instead of stdout (an existing file is not overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Plan a capacity search (the most requests per second that meets every --slo) in
    /// place of the concurrency sweep, as `shootout load --find-max` searches.
    #[arg(long, requires = "slo")]
    pub find_max: bool,
    /// With --find-max: a condition every step must meet (p99<50ms, errors<0.1%); repeat
    /// for more.
    #[arg(long, value_name = "EXPR", requires = "find_max")]
    pub slo: Vec<String>,
}

/// What the plan compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Template {
    /// A WSGI app, `MODULE:APP`.
    Wsgi(String),
    /// An ASGI app, `MODULE:APP`.
    Asgi(String),
    /// A directory of static files (absolute path).
    Static(String),
    /// Servers already running, by URL.
    Url(Vec<String>),
}

/// How a server is found in the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// `import NAME` works in the environment's python3.
    Module(&'static str),
    /// A program of one of these names is on PATH (Apache is `apache2` on Debian,
    /// `httpd` elsewhere).
    Program(&'static [&'static str]),
    /// Always there (the standard library).
    Always,
}

/// One server `init` knows: how to find it, install it and start it.
#[derive(Debug, Clone, Copy)]
pub struct Server {
    /// The contender's name in the plan.
    pub name: &'static str,
    /// How discovery finds it.
    pub probe: Probe,
    /// What installs it when it is missing.
    pub install: &'static str,
    /// The start command: `{app}`, `{module}`, `{callable}` and `{dir}` are filled here;
    /// `{port}` and `{cores}` are left for shootout.
    pub command: &'static str,
    /// Why it is sized as it is (a comment in the plan).
    pub sizing: &'static str,
}

const PY: &str = "python3";

/// The WSGI servers, in the order of the plan (the first found is the baseline and the
/// one the probe asks). wsgiref is always there and comes last: the standard library's
/// reference that every server should beat, so that a plan always has a contender.
pub const WSGI: &[Server] = &[
    Server { name: "gunicorn-sync", probe: Probe::Module("gunicorn"), install: "pip install gunicorn",
        command: "exec python3 -m gunicorn --bind 127.0.0.1:{port} --workers {cores} --worker-class sync {app}",
        sizing: "one sync worker process per core: each serves one request at a time, so more would only queue in the kernel" },
    Server { name: "gunicorn-gthread", probe: Probe::Module("gunicorn"), install: "pip install gunicorn",
        command: "exec python3 -m gunicorn --bind 127.0.0.1:{port} --workers {cores} --worker-class gthread --threads 4 {app}",
        sizing: "one process per core (the GIL lets one thread run Python at a time), 4 threads each to overlap I/O" },
    // PyPI's uWSGI (Python built in) installs `uwsgidecorators`; a `uwsgi` on PATH may be
    // Debian's, which cannot run an app without its Python plugin.
    Server { name: "uwsgi", probe: Probe::Module("uwsgidecorators"), install: "pip install uwsgi",
        command: "exec uwsgi --http11-socket 127.0.0.1:{port} --module {app} --master --processes {cores} --disable-logging --die-on-term",
        sizing: "one process per core, no threads: uWSGI's prefork model, its HTTP parser in C (an HTTP/1.1 socket, so connections are kept alive)" },
    Server { name: "waitress", probe: Probe::Module("waitress"), install: "pip install waitress",
        command: "exec python3 -m waitress --listen=127.0.0.1:{port} --threads=4 {app}",
        sizing: "waitress is one process (the GIL caps it at about one core) with its default 4 threads" },
    // start-server runs Apache in the foreground (it execs httpd -DFOREGROUND), so SIGTERM
    // stops it and its daemon processes; its error log goes to stderr, into shootout's log. Apache refuses to serve as root: started by root,
    // it must be told a user, and nobody then needs to read the app's directory and {tmp}.
    Server { name: "mod_wsgi-express", probe: Probe::Program(&["mod_wsgi-express"]), install: "pip install mod_wsgi (builds against Apache: needs apache2-dev, or httpd-devel)",
        command: "exec mod_wsgi-express start-server --host 127.0.0.1 --port {port} --processes {cores} --threads 5 --server-root {tmp}/mod_wsgi --log-to-terminal --locale C.UTF-8 $(test \"$(id -u)\" = 0 && echo --user nobody --group \"$(id -gn nobody)\") --application-type module --callable-object {callable} {module}",
        sizing: "one mod_wsgi daemon process per core (the GIL lets one thread run Python at a time), its default 5 threads each to overlap I/O, behind Apache's event MPM; its files in {tmp}/mod_wsgi, and, started by root, the app runs as nobody, who must be able to read its directory" },
    Server { name: "granian-wsgi", probe: Probe::Module("granian"), install: "pip install granian",
        command: "exec python3 -m granian --interface wsgi --host 127.0.0.1 --port {port} --workers {cores} {app}",
        sizing: "one worker process per core; its HTTP stack is Rust" },
    Server { name: "bjoern", probe: Probe::Module("bjoern"), install: "pip install bjoern (needs libev-dev)",
        command: "exec python3 -c \"import bjoern, importlib; bjoern.run(getattr(importlib.import_module('{module}'), '{callable}'), '127.0.0.1', {port})\"",
        sizing: "bjoern is one process, one thread (libev event loop): it has no worker option" },
    Server { name: "cheroot", probe: Probe::Module("cheroot"), install: "pip install cheroot",
        command: "exec python3 -m cheroot --bind 127.0.0.1:{port} {app}",
        sizing: "cheroot is one process with its default thread pool (the GIL caps it at about one core)" },
    Server { name: "wsgiref", probe: Probe::Always, install: "",
        command: "exec python3 -c \"import importlib; from wsgiref.simple_server import make_server; make_server('127.0.0.1', {port}, getattr(importlib.import_module('{module}'), '{callable}')).serve_forever()\"",
        sizing: "the standard library's reference server: one process, one request at a time; every other server should beat it" },
];

/// The ASGI servers, as [`WSGI`].
pub const ASGI: &[Server] = &[
    Server { name: "uvicorn", probe: Probe::Module("uvicorn"), install: "pip install 'uvicorn[standard]'",
        command: "exec python3 -m uvicorn --host 127.0.0.1 --port {port} --workers {cores} --no-access-log {app}",
        sizing: "one event-loop process per core (uvloop and httptools are used when installed)" },
    Server { name: "hypercorn", probe: Probe::Module("hypercorn"), install: "pip install hypercorn",
        command: "exec python3 -m hypercorn --bind 127.0.0.1:{port} --workers {cores} {app}",
        sizing: "one event-loop process per core" },
    Server { name: "granian-asgi", probe: Probe::Module("granian"), install: "pip install granian",
        command: "exec python3 -m granian --interface asgi --host 127.0.0.1 --port {port} --workers {cores} {app}",
        sizing: "one worker process per core; its HTTP stack is Rust" },
    Server { name: "daphne", probe: Probe::Module("daphne"), install: "pip install daphne",
        command: "exec python3 -m daphne -b 127.0.0.1 -p {port} {app}",
        sizing: "daphne is one process (one Twisted event loop): it has no worker option" },
];

/// The static-file servers, as [`WSGI`]; `{dir}` is the directory served.
pub const STATIC: &[Server] = &[
    Server { name: "nginx", probe: Probe::Program(&["nginx"]), install: "apt-get install nginx-light",
        command: "mkdir -p {tmp}/logs && printf 'worker_processes {cores}; pid {tmp}/nginx.pid; error_log stderr; events { } http { access_log off; server { listen 127.0.0.1:{port}; root {dir}; } }' > {tmp}/nginx.conf && exec nginx -p {tmp} -c {tmp}/nginx.conf -g 'daemon off;'",
        sizing: "one worker process per core, nginx's own rule (worker_processes auto)" },
    // Debian's apache2 or another distribution's httpd, in the foreground, from a config
    // the command writes into {tmp} (the here-document fills in nobody's group and the
    // thread counts); `-d` points ServerRoot at the first of the usual parents of
    // `modules/` (Debian's, then Arch's, then Fedora's), so `modules/mod_x.so` resolves on
    // each. Started by root, the workers run as nobody (User is ignored otherwise).
    Server { name: "apache", probe: Probe::Program(&["apache2", "httpd"]), install: "apt-get install apache2",
        command: "cat > {tmp}/httpd.conf <<EOF\n\
             Listen 127.0.0.1:{port}\n\
             ServerName localhost\n\
             PidFile {tmp}/httpd.pid\n\
             DefaultRuntimeDir {tmp}\n\
             ErrorLog /dev/stderr\n\
             User nobody\n\
             Group $(id -gn nobody)\n\
             LoadModule mpm_event_module modules/mod_mpm_event.so\n\
             <IfModule !unixd_module>\n\
             \x20   LoadModule unixd_module modules/mod_unixd.so\n\
             </IfModule>\n\
             LoadModule authz_core_module modules/mod_authz_core.so\n\
             LoadModule mime_module modules/mod_mime.so\n\
             LoadModule dir_module modules/mod_dir.so\n\
             TypesConfig /etc/mime.types\n\
             StartServers {cores}\n\
             ServerLimit {cores}\n\
             ThreadsPerChild 25\n\
             MaxRequestWorkers $(({cores} * 25))\n\
             MinSpareThreads $(({cores} * 25))\n\
             MaxSpareThreads $(({cores} * 25 + 25))\n\
             MaxConnectionsPerChild 0\n\
             KeepAlive On\n\
             MaxKeepAliveRequests 0\n\
             DocumentRoot {dir}\n\
             <Directory {dir}>\n\
             \x20   Require all granted\n\
             </Directory>\n\
             EOF\n\
             exec \"$(command -v apache2 || command -v httpd)\" -d \"$(ls -d /usr/lib/apache2 /usr/lib/httpd /usr/lib64/httpd 2>/dev/null | head -n 1)\" -f {tmp}/httpd.conf -DFOREGROUND",
        sizing: "Apache's event MPM, one process per core of 25 threads (its default ThreadsPerChild), all started at once and never reaped, so that no process is forked while measuring; keep-alive without a request cap, as nginx" },
    Server { name: "http.server", probe: Probe::Always, install: "",
        command: "exec python3 -m http.server --bind 127.0.0.1 --directory {dir} {port}",
        sizing: "Python's http.server: one process, a thread per connection (the GIL caps it at about one core)" },
];

/// What discovery found: the servers of the template that are here, and the CPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// Names (as in the tables above) of the servers present.
    pub present: Vec<&'static str>,
    /// The CPUs shootout may use (its affinity), which the plan splits between the
    /// servers and the load.
    pub cpus: Vec<usize>,
    /// Where each server of `present` was found (a server missing here runs `python3`).
    pub places: Vec<(&'static str, Place)>,
    /// The Python interpreters asked for modules, in the order asked.
    pub pythons: Vec<String>,
}

impl Found {
    /// Where server `name` was found.
    fn place(&self, name: &str) -> Option<&Place> {
        self.places.iter().find(|(n, _)| *n == name).map(|(_, p)| p)
    }

    /// The interpreter that runs server `name`'s Python (`python3` unless found elsewhere).
    fn python(&self, name: &str) -> &str {
        self.place(name)
            .and_then(|p| p.python.as_deref())
            .unwrap_or(PY)
    }
}

/// What the user asked of the plan besides its template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// The file the plan is written to (`--out`), named in its "run it with" line.
    pub out: Option<String>,
    /// A capacity search's SLOs (`--find-max --slo`); empty: the concurrency sweep.
    pub slo: Vec<String>,
}

/// The first server's answer to the workload's GET: the workload's expectations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answers {
    /// Status code.
    pub status: u16,
    /// Body length in bytes.
    pub length: usize,
    /// A short printable snippet of the body, if it has one.
    pub snippet: Option<String>,
    /// Who answered (for the plan's comment).
    pub from: String,
    /// An ASGI app's WebSocket routes that accepted a connection (empty otherwise).
    pub websocket: Vec<WsRoute>,
    /// The journey written beside the plan over the app's HTTP routes, if any.
    pub journey: Option<JourneyOffer>,
}

/// The journey file `init` writes beside the plan, as the plan's comment tells of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JourneyOffer {
    /// Its file name (in the plan's directory).
    pub file: String,
    /// The routes the app lists, and where they were read.
    pub listed: usize,
    pub source: String,
    /// Its steps that run (GETs of the pages that answered).
    pub running: usize,
}

/// The servers a template draws from.
pub fn servers(t: &Template) -> &'static [Server] {
    match t {
        Template::Wsgi(_) => WSGI,
        Template::Asgi(_) => ASGI,
        Template::Static(_) => STATIC,
        Template::Url(_) => &[],
    }
}

/// A TOML string holding `s`, quoted and escaped by the toml crate.
fn q(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// `word` as one shell word: as it is when it has only characters the shell leaves alone,
/// else in single quotes.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@,=:%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The start command of `s` for template `t`, its Python `python` (`python3` on PATH
/// unless discovery found the server's module under another interpreter).
fn command_of(s: &Server, t: &Template, python: &str) -> String {
    let (app, dir) = match t {
        Template::Wsgi(a) | Template::Asgi(a) => (a.as_str(), ""),
        Template::Static(d) => ("", d.as_str()),
        Template::Url(_) => ("", ""),
    };
    let (module, callable) = app.split_once(':').unwrap_or((app, "app"));
    let command = if python == PY {
        s.command.to_owned()
    } else {
        s.command
            .replacen("exec python3 ", &format!("exec {} ", shell_word(python)), 1)
    };
    command
        .replace("{app}", app)
        .replace("{module}", module)
        .replace("{callable}", callable)
        .replace("{dir}", dir)
}

/// The plan: one contender per server found (or per URL), the others listed with what
/// installs them, one GET workload whose expectations are `answers`.
pub fn plan_text(
    t: &Template,
    found: &Found,
    path: &str,
    answers: &Answers,
    choices: &Choices,
) -> String {
    let what = match t {
        Template::Wsgi(a) => format!("the WSGI app {a}"),
        Template::Asgi(a) => format!("the ASGI app {a}"),
        Template::Static(d) => format!("the static files of {d}"),
        Template::Url(u) if u.len() == 1 => "1 server you run".to_string(),
        Template::Url(u) => format!("{} servers you run", u.len()),
    };
    let mut o = plan_header(t, found, &what, choices);
    o.push_str(&format!("name = {}\n\n", q(&format!("init: {what}"))));
    o.push_str("[defaults]\nwarmup = \"2s\"\nduration = \"10s\"\nrepeat = 3\ncooldown = \"1s\"\n");
    if !matches!(t, Template::Url(_)) {
        o.push_str(&pinning(&found.cpus, !choices.slo.is_empty()));
    }
    o.push('\n');
    let contenders = match t {
        Template::Url(urls) => urls
            .iter()
            .enumerate()
            .map(|(i, u)| {
                format!(
                    "[[contender]]\nname = {}\nurl = {}\n",
                    q(&format!("url-{}", i + 1)),
                    q(u)
                )
            })
            .collect(),
        _ => servers(t)
            .iter()
            .filter(|s| found.present.contains(&s.name))
            .map(|s| server_contender(s, t, path, found))
            .collect::<Vec<_>>(),
    };
    for (i, c) in contenders.iter().enumerate() {
        o.push_str(c);
        if i == 0 {
            o.push_str("baseline = true\n");
        }
        o.push('\n');
    }
    o.push_str(&workload_text(path, answers));
    o.push_str(&load_text(&choices.slo));
    o
}

/// The plan's opening comments: what it measures, how to run it, and the servers of the
/// template not found here with what installs them.
fn plan_header(t: &Template, found: &Found, what: &str, choices: &Choices) -> String {
    let file = shell_word(choices.out.as_deref().unwrap_or("plan.toml"));
    // Servers are found for an app or a directory; URLs name their own.
    let under = if matches!(t, Template::Url(_)) {
        ""
    } else {
        " under every server found here"
    };
    let mut o = format!(
        "# Written by `shootout init`: {what}{under}.\n\
         # Run it with `shootout run {file}` (`--quick` for a first look, `--dry-run` to check it).\n"
    );
    let missing: Vec<&Server> = servers(t)
        .iter()
        .filter(|s| !found.present.contains(&s.name))
        .collect();
    if !missing.is_empty() {
        let pythons = if found.pythons.is_empty() {
            String::new()
        } else {
            format!(", and the modules of {}", found.pythons.join(", "))
        };
        o.push_str(&format!(
            "#\n# Not found here (looked on PATH{pythons}; install, then run `shootout init` again):\n",
        ));
        for s in &missing {
            o.push_str(&format!("#   {:<18} {}\n", s.name, s.install));
        }
    }
    o
}

/// A server found here as a contender (without its `baseline` line and closing blank).
fn server_contender(s: &Server, t: &Template, path: &str, found: &Found) -> String {
    let whence = found
        .place(s.name)
        .map(|p| format!("# Found: {}.\n", p.how))
        .unwrap_or_default();
    format!(
        "# {}; listens on 127.0.0.1 only, on the port shootout picks.\n{whence}\
         [[contender]]\nname = {}\ncommand = {}\n\
         ready = {{ path = {}, timeout = \"20s\" }}\n",
        s.sizing,
        q(s.name),
        q(&command_of(s, t, found.python(s.name))),
        q(path)
    )
}

/// The one GET workload, its expectations what `answers` says, and the load levels.
fn workload_text(path: &str, answers: &Answers) -> String {
    let mut o = format!(
        "# The expectations are what {} answered to GET {} once when this plan was written:\n\
         # every contender must answer the same.\n",
        answers.from, path
    );
    o.push_str(&format!(
        "[[workload]]\nname = {}\npath = {}\n",
        q(&format!("GET {path}")),
        q(path)
    ));
    o.push_str(&format!(
        "expect = {{ status = {}, length = {}",
        answers.status, answers.length
    ));
    if let Some(s) = &answers.snippet {
        o.push_str(&format!(", body_contains = {}", q(s)));
    }
    o.push_str(" }\n");
    o.push_str(&ws::workload_text(&answers.websocket));
    if let Some(j) = &answers.journey {
        o.push_str(&journey_workload_text(j));
    }
    o
}

/// The plan's commented journey workload over the journey file `j`.
fn journey_workload_text(j: &JourneyOffer) -> String {
    format!(
        "\n# The app lists {} route(s) ({}): {} is a journey over them that GETs the {}\n\
         # page(s) that answered, one after the other, with the routes that need a value or\n\
         # a body as commented steps. To measure the app as its users use it, edit the\n\
         # journey (docs/journeys.md), then uncomment this workload:\n\
         # [[workload]]\n# name = \"journey\"\n# journey = {}\n",
        j.listed,
        j.source,
        j.file,
        j.running,
        q(&j.file)
    )
}

/// The `[load]` table: the concurrency sweep, or with SLOs a capacity search that opens
/// connections as its requests need them (one ahead of need: a server with one worker per
/// connection blocks on idle ones held open for it).
fn load_text(slo: &[String]) -> String {
    if slo.is_empty() {
        return "\n[load]\nconcurrency = [1, 4, 16, 64]\n".into();
    }
    let slos: Vec<String> = slo.iter().map(|s| q(s)).collect();
    format!(
        "\n# A capacity search: the most requests per second at which every SLO holds, each\n\
         # step an open loop at one rate (`shootout run --quick` for a first look). One\n\
         # connection is opened ahead of need and more as requests find every one busy:\n\
         # connections held open idle would be measured with the server (a sync worker\n\
         # blocks on one while requests queue behind it).\n\
         [load]\nconnections = 1\nfind_max = {{ slo = [{}] }}\n",
        slos.join(", ")
    )
}

/// The `[defaults]` lines that keep the servers and shootout's load off each other's
/// CPUs (as the quickstart does): the load on the first half of `cpus` (at least one),
/// the servers on the rest; with one CPU they share it, and a comment says so either way.
fn pinning(cpus: &[usize], search: bool) -> String {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.len() < 2 {
        let search = if search {
            "# A capacity found so is the pair's, not the server's alone.\n"
        } else {
            ""
        };
        return format!(
            "# One CPU here: the servers and shootout's load share it, so each slows the other.\n\
             {search}# On a machine with two or more, `shootout init` pins them apart.\n"
        );
    }
    let (load, server) = cpus.split_at(cpus.len() / 2);
    let n = server.len();
    let (load, server) = (cpu_ranges(load), cpu_ranges(server));
    let workers = if n == 1 {
        "1 worker process".to_string()
    } else {
        format!("{n} worker processes")
    };
    format!(
        "# The servers' processes on CPU {server} and shootout's load on CPU {load}: on shared\n\
         # CPUs the load generator and the server slow each other down. {{cores}} counts the\n\
         # servers' CPUs, here {n}: a server sized per core below starts {workers}\n\
         # (--workers {{cores}} is --workers {n}). Delete both lines to let them share every CPU.\n\
         server_cpus = \"{server}\"\nload_cpus = \"{load}\"\n"
    )
}

/// Where discovery looks: `PATH` and the active virtualenv (`VIRTUAL_ENV`), as the user's
/// shell would start the servers.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// The `PATH` value.
    pub path: Option<std::ffi::OsString>,
    /// The active virtualenv's directory (`VIRTUAL_ENV`), if one is active.
    pub virtual_env: Option<PathBuf>,
}

impl Env {
    /// This process's environment.
    pub fn current() -> Env {
        Env {
            path: std::env::var_os("PATH"),
            virtual_env: std::env::var_os("VIRTUAL_ENV")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }
}

/// The program a Python server's package installs on PATH (its console script), whose
/// interpreter has the module: `/usr/bin/gunicorn` is run by `/usr/bin/python3` though
/// the first `python3` on PATH may be another.
fn launcher(module: &str) -> Option<&'static str> {
    Some(match module {
        "gunicorn" => "gunicorn",
        "waitress" => "waitress-serve",
        "granian" => "granian",
        "cheroot" => "cheroot",
        "uvicorn" => "uvicorn",
        "hypercorn" => "hypercorn",
        "daphne" => "daphne",
        _ => return None,
    })
}

/// The first file named `name` in a directory of `path` (a PATH value).
fn find_on_path(path: Option<&std::ffi::OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|d| d.join(name))
        .find(|f| f.is_file())
}

/// The Python interpreter named by the `#!` line of the script `file` (`#!/usr/bin/python3`,
/// `#! /venv/bin/python`, `#!/usr/bin/env python3` looked up on `path`); `None` for a
/// file that is not a Python script.
fn interpreter_of(file: &std::path::Path, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.lines().next()?;
    let mut words = line.strip_prefix("#!")?.split_whitespace();
    let first = words.next()?;
    let program = if first.ends_with("/env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        find_on_path(path, name)?
    } else {
        PathBuf::from(first)
    };
    let name = program.file_name()?.to_string_lossy();
    (name.starts_with("python") || name.starts_with("pypy")).then_some(program)
}

/// Where a server was found, for its contender's comment and command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The Python interpreter that has its module, when it is not the first `python3` on
    /// PATH (its commands run this one in place of `python3`).
    pub python: Option<String>,
    /// Where it was found, as the plan says it: `/usr/bin/gunicorn, run by /usr/bin/python3`.
    pub how: String,
}

/// Which servers of the template are here, looked for as the user would start them: a
/// server's program on PATH and the Python that runs it, then the active virtualenv's
/// Python, then the first `python3` on PATH (each Python asked once, for every module).
pub fn discover(t: &Template) -> anyhow::Result<Found> {
    let mut found = discover_in(t, &Env::current())?;
    found.cpus = shootout_engine::sys::allowed_cpus();
    Ok(found)
}

/// [`discover`] in the environment `env` (the CPUs left empty).
pub fn discover_in(t: &Template, env: &Env) -> anyhow::Result<Found> {
    let list = servers(t);
    let path = env.path.as_deref();
    let modules: Vec<&str> = list
        .iter()
        .filter_map(|s| match s.probe {
            Probe::Module(m) => Some(m),
            _ => None,
        })
        .collect();
    let mut pythons = Pythons {
        python3: find_on_path(path, PY),
        venv: env.virtual_env.as_ref().and_then(|v| {
            ["python", "python3"]
                .iter()
                .map(|n| v.join("bin").join(n))
                .find(|f| f.is_file())
        }),
        modules: &modules,
        asked: Vec::new(),
    };
    let mut present = Vec::new();
    let mut places = Vec::new();
    for s in list {
        let place = match s.probe {
            Probe::Module(m) => pythons.place(m, path),
            Probe::Program(names) => {
                names
                    .iter()
                    .find_map(|n| find_on_path(path, n))
                    .map(|f| Place {
                        python: None,
                        how: f.display().to_string(),
                    })
            }
            Probe::Always => Some(Place {
                python: None,
                how: "the standard library".into(),
            }),
        };
        if let Some(place) = place {
            present.push(s.name);
            places.push((s.name, place));
        }
    }
    if !modules.is_empty() && pythons.python3.is_none() && pythons.venv.is_none() {
        return Err(anyhow!(
            "found no {PY} on PATH to run the Python servers: install Python 3, or activate the virtualenv that has your servers"
        ));
    }
    Ok(Found {
        present,
        cpus: Vec::new(),
        places,
        pythons: pythons.asked.into_iter().map(|(p, _)| shown(&p)).collect(),
    })
}

/// The Pythons a server module may run under, each asked once which of the template's
/// modules it imports.
struct Pythons<'a> {
    /// The first `python3` on PATH.
    python3: Option<PathBuf>,
    /// The active virtualenv's Python.
    venv: Option<PathBuf>,
    /// Every module the template's servers need.
    modules: &'a [&'a str],
    /// Each Python asked, with the modules it can import.
    asked: Vec<(PathBuf, Vec<String>)>,
}

impl Pythons<'_> {
    /// Where `module` is found, looked for as the user would start its server: its program
    /// on PATH, run by the Python its `#!` line names; then the active virtualenv's
    /// Python; then the first python3 on PATH.
    fn place(&mut self, module: &str, path: Option<&std::ffi::OsStr>) -> Option<Place> {
        if let Some(f) = launcher(module).and_then(|name| find_on_path(path, name)) {
            if let Some(py) = interpreter_of(&f, path).filter(|py| self.imports(py, module)) {
                return Some(Place {
                    python: self.not_python3(&py),
                    how: format!("{}, run by {}", f.display(), py.display()),
                });
            }
        }
        if let Some(py) = self.venv.clone().filter(|py| self.imports(py, module)) {
            return Some(Place {
                python: self.not_python3(&py),
                how: format!("the active virtualenv's {}", py.display()),
            });
        }
        let py = self.python3.clone()?;
        self.imports(&py, module).then(|| Place {
            python: None,
            how: format!("{PY} ({}) imports {module}", py.display()),
        })
    }

    /// Whether `python` can import `module` (each Python run once for every module).
    fn imports(&mut self, python: &PathBuf, module: &str) -> bool {
        if !self.asked.iter().any(|(p, _)| p == python) {
            let has = importable(python, self.modules).unwrap_or_default();
            self.asked.push((python.clone(), has));
        }
        self.asked
            .iter()
            .any(|(p, has)| p == python && has.iter().any(|m| m == module))
    }

    /// `python`'s path to write in the plan, unless it is the first python3 on PATH.
    fn not_python3(&self, python: &PathBuf) -> Option<String> {
        let same = self.python3.as_ref().is_some_and(|b| {
            python == b
                || python
                    .canonicalize()
                    .ok()
                    .is_some_and(|a| b.canonicalize().ok() == Some(a))
        });
        (!same).then(|| shown(python))
    }
}

/// A path as the plan and the summary write it.
fn shown(p: &std::path::Path) -> String {
    p.display().to_string()
}

/// The modules of `modules` that `python` can import (one run of it); `None` when it
/// could not be run.
fn importable(python: &std::path::Path, modules: &[&str]) -> Option<Vec<String>> {
    let script = "import importlib.util, sys\nfor m in sys.argv[1:]:\n    if importlib.util.find_spec(m) is not None: print(m)\n";
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(modules)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_owned())
            .collect(),
    )
}

/// How long the probe waits for its answer, in all.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest answer the probe reads, head and body (its framing as sent).
const PROBE_MAX: u64 = 64 << 20;

/// Body bytes kept for the snippet.
const SNIPPET_FROM: usize = 4096;

/// The path as `shootout run` puts it on the wire: checked by the plan's rule for paths
/// (a leading `/`, no control character), then percent-encoded by the same URL parser the
/// run builds each workload's target with (a space becomes `%20`).
fn wire_path(path: &str) -> Result<String, Failure> {
    let usage = |e: String| Failure::usage(anyhow!("--path: {e}"));
    shootout_model::spec::check_path(path).map_err(|e| usage(e.to_string()))?;
    shootout_model::Target::parse(&format!("http://127.0.0.1{path}"))
        .map(|t| t.path)
        .map_err(|e| usage(e.to_string()))
}

/// Asks `addr` for `path` (as [`wire_path`] gives it) once, HTTP/1.0 without keep-alive,
/// and returns what it answered. The answer is read by its framing (Content-Length,
/// chunked or the close) with the engine's response parser, so a server that keeps the
/// connection open anyway is not waited on; all of it within `timeout`.
fn get_once(
    addr: SocketAddr,
    host: &str,
    path: &str,
    from: &str,
    timeout: Duration,
) -> anyhow::Result<Answers> {
    let what = format!("{from} (GET {path})");
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("could not connect to {what}"))?;
    let deadline = Instant::now() + timeout;
    s.set_write_timeout(Some(timeout))?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: shootout-init\r\n\r\n"
    )
    .with_context(|| format!("could not send the request to {what}"))?;
    let mut parser = ResponseParser::new(false, None);
    let mut body = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let late = || {
        anyhow!(
            "{what} did not complete its answer within {} s (check that the server answers this path, and that the answer's Content-Length is right)",
            timeout.as_secs_f64()
        )
    };
    loop {
        let Some(n) = read_within(&mut s, &mut buf, deadline, &what, late)? else {
            continue;
        };
        if n == 0 {
            match parser.eof() {
                Ok(()) => break,
                Err(ParseError::Closed) => {
                    return Err(anyhow!(
                        "{what} closed the connection before its answer was complete"
                    ))
                }
                Err(ParseError::Malformed) => {
                    return Err(anyhow!("{what} did not answer in HTTP/1.x"))
                }
            }
        }
        if feed(&mut parser, &buf[..n], &mut body).map_err(|_| {
            anyhow!("{what} sent an answer that is not HTTP/1.x or breaks its own framing")
        })? {
            break;
        }
        if parser.seen > PROBE_MAX {
            return Err(anyhow!(
                "{what} sent an answer over {} MiB: give --path a smaller resource",
                PROBE_MAX >> 20
            ));
        }
    }
    Ok(Answers {
        status: parser.status,
        length: usize::try_from(parser.body_len).unwrap_or(usize::MAX),
        snippet: snippet(&body),
        from: from.to_owned(),
        websocket: Vec::new(),
        journey: None,
    })
}

/// One read of `s` into `buf` before `deadline` (`late` past it): the bytes read (0 at the
/// end), or `None` when a signal interrupted it and it is to be tried again.
fn read_within(
    s: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
    what: &str,
    late: impl Fn() -> anyhow::Error,
) -> anyhow::Result<Option<usize>> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(late());
    }
    s.set_read_timeout(Some(left))?;
    match s.read(buf) {
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(late())
        }
        Err(e) => Err(anyhow!(e).context(format!("reading the answer of {what}"))),
    }
}

/// The first line of the body with 4 characters or more, cut to 40, outside quotes and
/// braces: a `body_contains` that JSON and HTML answers alike can keep.
fn snippet(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    text.split(['\n', '\r', '"', '\\', '{', '}'])
        .map(str::trim)
        .find(|l| l.len() >= 4)
        .map(|l| l.chars().take(40).collect::<String>().trim().to_owned())
        .filter(|l| !l.is_empty())
}

/// Feeds `data` to `parser`, keeping the first [`SNIPPET_FROM`] bytes of the decoded body
/// in `body` (fed a byte at a time until then, so each body byte is told from framing);
/// true once the answer is complete.
fn feed(parser: &mut ResponseParser, data: &[u8], body: &mut Vec<u8>) -> Result<bool, ParseError> {
    let mut at = 0;
    while at < data.len() && body.len() < SNIPPET_FROM {
        let before = parser.body_len;
        let done = matches!(parser.feed(&data[at..=at])?, Progress::Done { .. });
        if parser.body_len > before {
            body.push(data[at]);
        }
        at += 1;
        if done {
            return Ok(true);
        }
    }
    if at < data.len() {
        return Ok(matches!(parser.feed(&data[at..])?, Progress::Done { .. }));
    }
    Ok(false)
}

/// The expectations: the first URL, or the first server found started on a free port
/// (in its own process group, stopped after), asked once.
pub fn probe(t: &Template, found: &Found, path: &str) -> anyhow::Result<Answers> {
    if let Template::Url(urls) = t {
        let u = urls
            .first()
            .ok_or_else(|| anyhow!("--url needs at least one URL"))?;
        let rest = u
            .strip_prefix("http://")
            .ok_or_else(|| anyhow!("--url {u}: only http:// URLs on 127.0.0.1 or [::1]"))?;
        let hostport = rest.split('/').next().unwrap_or(rest);
        let addr: SocketAddr = hostport
            .parse()
            .map_err(|_| anyhow!("--url {u}: give the address as 127.0.0.1:PORT or [::1]:PORT"))?;
        if !addr.ip().is_loopback() {
            return Err(anyhow!(
                "--url {u}: shootout loads loopback addresses only (127.0.0.1, [::1])"
            ));
        }
        return get_once(addr, hostport, path, u, PROBE_TIMEOUT);
    }
    let present: Vec<&Server> = servers(t)
        .iter()
        .filter(|s| found.present.contains(&s.name))
        .collect();
    if present.is_empty() {
        let installs: Vec<&str> = servers(t).iter().map(|s| s.install).collect();
        return Err(anyhow!(
            "no server of this kind in this Python environment ({PY}): install one ({})",
            installs.join("; ")
        ));
    }
    // The first server that answers: one found on PATH may still be unable to run the app
    // (Debian's uWSGI without its Python plugin, say); `shootout run` will report it.
    let mut first_error = None;
    for s in present {
        match ask(s, t, path, found) {
            Ok(a) => return Ok(a),
            Err(e) => {
                say!("note: {e:#}\nnote: asking the next server");
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.expect("at least one server was asked"))
}

/// Starts server `s` on a free port as `shootout run` starts a contender (its own process
/// group and marker, the same ready wait: an answer below 500 to GET `path`), asks it once
/// for `path`, and stops it (SIGTERM, then SIGKILL after a grace).
fn ask(s: &Server, t: &Template, path: &str, found: &Found) -> anyhow::Result<Answers> {
    let port = shootout_harness::free_port()?;
    let tmp = std::env::temp_dir().join(format!("shootout-init-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cmd = command_of(s, t, found.python(s.name))
        .replace("{port}", &port.to_string())
        .replace("{cores}", &cores.to_string())
        .replace("{tmp}", &tmp.to_string_lossy());
    let mut cfg = ContenderConfig::new(s.name, cmd.clone(), port, &tmp);
    cfg.ready_path = path.to_owned();
    cfg.ready_timeout = Duration::from_secs(20);
    let result = Contender::start(&cfg)
        .with_context(|| format!("could not start {} to ask it for {path}", s.name))
        .and_then(|mut server| {
            let asked = server
                .wait_ready(&AtomicBool::new(false))
                .map_err(anyhow::Error::from)
                .and_then(|_| {
                    let addr = SocketAddr::from(([127, 0, 0, 1], port));
                    get_once(addr, &addr.to_string(), path, s.name, PROBE_TIMEOUT)
                });
            server.stop(Duration::from_secs(5));
            asked
        })
        .map_err(|e| anyhow!("{e:#}\ntry its command by hand: {cmd}"));
    if result.is_ok() {
        // Kept otherwise: the error names its logs there.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

/// `shootout init`: discovery, probe, plan; prints the plan or writes `--out`.
pub fn init(a: InitArgs) -> Result<i32, Failure> {
    if let Some(app) = a.grpc {
        return grpc::init(app, a.proto, a.out.as_deref());
    }
    // Checked before anything runs; the plan and the probe carry it as the run sends it.
    let path = wire_path(&a.path)?;
    let t = if let Some(app) = a.wsgi {
        Template::Wsgi(app_arg("--wsgi", app)?)
    } else if let Some(app) = a.asgi {
        Template::Asgi(app_arg("--asgi", app)?)
    } else if let Some(d) = a.static_dir {
        let d = d
            .canonicalize()
            .map_err(|e| Failure::usage(anyhow!("--static {}: {e}", d.display())))?;
        let d = d.to_string_lossy().into_owned();
        // The directory goes into shell commands and nginx's config unquoted.
        if !d
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@,".contains(c))
        {
            return Err(Failure::usage(anyhow!("--static {d}: use a directory whose path has only letters, digits and / . _ - + @ , (link it from such a path)")));
        }
        Template::Static(d)
    } else {
        Template::Url(a.url)
    };
    for slo in &a.slo {
        slo.parse::<shootout_model::threshold::Threshold>()
            .map_err(|e| Failure::usage(anyhow!("--slo {slo}: {e}")))?;
    }
    let choices = Choices {
        out: a.out.as_ref().map(|p| p.display().to_string()),
        slo: a.slo,
    };
    let found = discover(&t).map_err(Failure::run)?;
    let mut answers = probe(&t, &found, &path).map_err(Failure::run)?;
    if let Template::Asgi(app) = &t {
        let python = found.present.first().map_or(PY, |s| found.python(s));
        answers.websocket = ws::websocket_routes(python, app, &path).unwrap_or_else(|e| {
            say!("note: could not ask {app} for WebSocket routes: {e:#}");
            Vec::new()
        });
    }
    let journey = journey_beside(&t, &found, a.out.as_deref());
    if let Some((offer, _, _)) = &journey {
        answers.journey = Some(offer.clone());
    }
    let text = plan_text(&t, &found, &path, &answers, &choices);
    match a.out {
        Some(p) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(|e| {
                    Failure::run(anyhow!(
                        "--out {}: {e} (choose another file or remove it)",
                        p.display()
                    ))
                })?;
            f.write_all(text.as_bytes()).map_err(Failure::run)?;
            crate::output::emit(&format!(
                "wrote {} ({} contender(s))\n",
                p.display(),
                text.matches("[[contender]]").count()
            ))?;
            if let Some((offer, file, journey)) = journey {
                std::fs::write(&file, journey)
                    .map_err(|e| Failure::run(anyhow!("{}: {e}", file.display())))?;
                crate::output::emit(&format!(
                    "wrote {} (a journey of {} step(s) over the app's routes)\n",
                    file.display(),
                    offer.running
                ))?;
            }
        }
        None => crate::output::emit(&text)?,
    }
    Ok(0)
}

/// The journey over the HTTP routes of the app `t` names (WSGI or ASGI), to be written
/// beside the plan `out` as `STEM.journey.toml`: what the plan says of it, its file and
/// its text. None for other templates, an app whose routes cannot be read or that answers
/// none of them (said in a note), or a plan printed on stdout (a note says how to have it).
fn journey_beside(
    t: &Template,
    found: &Found,
    out: Option<&std::path::Path>,
) -> Option<(JourneyOffer, PathBuf, String)> {
    let (Template::Wsgi(app) | Template::Asgi(app)) = t else {
        return None;
    };
    let python = found.present.first().map_or(PY, |s| found.python(s));
    let routes = routes::http_routes(python, app, matches!(t, Template::Asgi(_)))
        .map_err(|e| say!("note: could not ask {app} for its routes: {e:#}"))
        .ok()?;
    if routes.listed == 0 {
        if let Some(out) = out {
            say!(
                "note: {app} keeps no routing table that init reads (Flask's, Starlette's, FastAPI's, Bottle's, Django's): no journey written beside {} (docs/journeys.md tells how to write one)",
                out.display()
            );
        }
        return None;
    }
    let Some(text) = routes::journey_text(app, &routes) else {
        say!(
            "note: {app} lists {} route(s), and none answered a GET without a parameter: no journey written",
            routes.listed
        );
        return None;
    };
    let Some(out) = out else {
        say!(
            "note: {app} lists {} route(s): give --out FILE, and init writes a journey over them beside the plan",
            routes.listed
        );
        return None;
    };
    let stem = out
        .file_stem()
        .map_or("plan".into(), |s| s.to_string_lossy());
    let file = out.with_file_name(format!("{stem}.journey.toml"));
    if file.exists() {
        say!(
            "note: {} exists: no journey written (remove it, or choose another --out)",
            file.display()
        );
        return None;
    }
    let offer = JourneyOffer {
        file: file.file_name()?.to_string_lossy().into_owned(),
        listed: routes.listed,
        source: routes.source.clone(),
        running: routes::steps_that_run(&routes),
    };
    Some((offer, file, text))
}

/// Checks a MODULE:APP argument: a dotted module name and an identifier.
fn app_arg(flag: &str, app: String) -> Result<String, Failure> {
    let ident = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match app.split_once(':') {
        Some((m, c)) if m.split('.').all(ident) && ident(c) => Ok(app),
        _ => Err(Failure::usage(anyhow!("{flag} {app}: give MODULE:APP, e.g. myapp:app (a dotted module name, then the callable's name)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(from: &str) -> Answers {
        Answers {
            status: 200,
            length: 26,
            snippet: Some("Hello, \"World\"".into()),
            from: from.into(),
            websocket: Vec::new(),
            journey: None,
        }
    }

    /// Every template's plan with discovery faked: these servers present, the rest listed.
    fn cases() -> Vec<(&'static str, Template, Found)> {
        vec![
            (
                "wsgi",
                Template::Wsgi("myapp:app".into()),
                Found {
                    present: vec!["gunicorn-sync", "gunicorn-gthread", "bjoern", "wsgiref"],
                    cpus: vec![0, 1],
                    ..Found::default()
                },
            ),
            (
                "asgi",
                Template::Asgi("pkg.asgi:application".into()),
                Found {
                    present: vec!["uvicorn", "daphne"],
                    cpus: vec![0, 1],
                    ..Found::default()
                },
            ),
            (
                "wsgi_mod_wsgi_express",
                Template::Wsgi("pkg.wsgi:application".into()),
                Found {
                    present: vec!["mod_wsgi-express", "wsgiref"],
                    cpus: vec![0, 1],
                    ..Found::default()
                },
            ),
            (
                "static",
                Template::Static("/srv/www".into()),
                Found {
                    present: vec!["nginx", "http.server"],
                    cpus: vec![0, 1],
                    ..Found::default()
                },
            ),
            (
                "static_apache",
                Template::Static("/srv/www".into()),
                Found {
                    present: vec!["nginx", "apache", "http.server"],
                    cpus: vec![0, 1],
                    ..Found::default()
                },
            ),
            (
                "url",
                Template::Url(vec![
                    "http://127.0.0.1:8080".into(),
                    "http://[::1]:8081/".into(),
                ]),
                Found::default(),
            ),
        ]
    }

    #[test]
    fn init_plans_match_their_snapshots() {
        for (name, t, found) in cases() {
            insta::assert_snapshot!(
                format!("plan_{name}"),
                plan_text(
                    &t,
                    &found,
                    "/",
                    &answers("the first server"),
                    &Choices::default()
                )
            );
        }
    }

    /// An ASGI app with WebSocket routes: the plan offers a commented workload for the
    /// first (an echo expected only when the probe saw one); uncommented, it parses as a
    /// WebSocket workload.
    #[test]
    fn an_asgi_app_with_websocket_routes_gets_a_commented_websocket_workload() {
        let (_, t, found) = cases().remove(1);
        let route = |path: &str, echo| WsRoute {
            path: path.into(),
            echo,
        };
        for (name, routes) in [
            (
                "asgi_websocket",
                vec![route("/ws", true), route("/chat", false)],
            ),
            ("asgi_websocket_no_echo", vec![route("/chat", false)]),
        ] {
            let a = Answers {
                websocket: routes.clone(),
                ..answers("uvicorn")
            };
            let text = plan_text(&t, &found, "/", &a, &Choices::default());
            insta::assert_snapshot!(format!("plan_{name}"), text);
            let plain = shootout_model::plan::parse(&text, "plan.toml", &[0, 1]).unwrap();
            assert_eq!(plain.workloads.len(), 1, "commented out: {text}");
            let uncommented = text
                .replace("# [[workload]]", "[[workload]]")
                .replace("\n# name = \"WebSocket", "\nname = \"WebSocket");
            let uncommented = ["protocol", "path", "message", "expect"]
                .iter()
                .fold(uncommented, |t, k| {
                    t.replace(&format!("\n# {k} = "), &format!("\n{k} = "))
                });
            let plan = shootout_model::plan::parse(&uncommented, "plan.toml", &[0, 1])
                .unwrap_or_else(|e| panic!("{e}\n{uncommented}"));
            let w = &plan.workloads[1];
            assert_eq!(w.protocol, shootout_model::Protocol::WebSocket);
            assert_eq!(w.path, routes[0].path);
            assert_eq!(w.message.as_deref(), Some(ws::PROBE_MESSAGE));
            assert_eq!(w.expect.echo, routes[0].echo);
        }
    }

    #[test]
    fn every_init_plan_passes_the_plan_parser() {
        for (name, t, found) in cases() {
            let text = plan_text(&t, &found, "/hello?x=1", &answers("x"), &Choices::default());
            let plan = shootout_model::plan::parse(&text, "plan.toml", &[0, 1])
                .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            let want = if let Template::Url(u) = &t {
                u.len()
            } else {
                found.present.len()
            };
            assert_eq!(plan.contenders.len(), want, "{name}");
        }
    }

    #[test]
    fn servers_and_load_are_pinned_apart_where_there_are_cpus_to_part() {
        let plan_on = |cpus: Vec<usize>| {
            let t = Template::Static("/srv/www".into());
            let found = Found {
                present: vec!["nginx", "http.server"],
                cpus: cpus.clone(),
                ..Found::default()
            };
            let text = plan_text(&t, &found, "/", &answers("nginx"), &Choices::default());
            let plan = shootout_model::plan::parse(&text, "plan.toml", &cpus)
                .unwrap_or_else(|e| panic!("{cpus:?}: {e}\n{text}"));
            (text, plan.defaults.server_cpus, plan.defaults.load_cpus)
        };
        // As the quickstart: the server on CPU 1, the load on CPU 0, and a comment says so.
        let (text, server, load) = plan_on(vec![0, 1]);
        assert_eq!((server, load), (Some(vec![1]), Some(vec![0])));
        assert!(
            text.contains("# The servers' processes on CPU 1 and shootout's load on CPU 0"),
            "{text}"
        );
        // Half each, from the CPUs shootout may use (its affinity, not 0..n).
        let (_, server, load) = plan_on(vec![7, 2, 3, 5]);
        assert_eq!((server, load), (Some(vec![5, 7]), Some(vec![2, 3])));
        let (text, server, load) = plan_on(vec![0, 1, 2]);
        assert_eq!((server, load), (Some(vec![1, 2]), Some(vec![0])));
        assert!(
            text.contains("server_cpus = \"1-2\"\nload_cpus = \"0\"\n"),
            "{text}"
        );
        // One CPU: nothing to part, and the plan says why.
        let (text, server, load) = plan_on(vec![0]);
        assert_eq!((server, load), (None, None));
        assert!(
            text.contains("# One CPU here: the servers and shootout's load share it"),
            "{text}"
        );
        // Servers run by the user are not started by shootout: nothing is pinned.
        let url = plan_text(
            &Template::Url(vec!["http://127.0.0.1:8080".into()]),
            &Found {
                cpus: vec![0, 1],
                ..Found::default()
            },
            "/",
            &answers("url-1"),
            &Choices::default(),
        );
        assert!(!url.contains("cpus"), "{url}");
    }

    #[test]
    fn every_server_of_every_template_makes_a_valid_plan() {
        // All present at once: each command is accepted (placeholders known, quoting sound).
        for t in [
            Template::Wsgi("a.b:app".into()),
            Template::Asgi("m:app".into()),
            Template::Static("/d".into()),
        ] {
            let found = Found {
                present: servers(&t).iter().map(|s| s.name).collect(),
                cpus: vec![0, 1],
                ..Found::default()
            };
            let text = plan_text(
                &t,
                &found,
                "/",
                &Answers {
                    snippet: None,
                    ..answers("x")
                },
                &Choices::default(),
            );
            shootout_model::plan::parse(&text, "plan.toml", &[0, 1])
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert!(!text.contains("Not found"), "{text}");
        }
    }

    #[test]
    fn missing_servers_are_listed_with_their_install_command() {
        let text = plan_text(
            &Template::Wsgi("m:app".into()),
            &Found {
                present: vec!["wsgiref"],
                cpus: vec![0, 1],
                ..Found::default()
            },
            "/",
            &answers("wsgiref"),
            &Choices::default(),
        );
        assert!(
            text.contains("#   waitress           pip install waitress"),
            "{text}"
        );
        assert!(!text.contains("#   wsgiref"), "{text}");
    }

    #[test]
    fn a_missing_apache_is_listed_with_the_apt_command() {
        let text = plan_text(
            &Template::Static("/srv/www".into()),
            &Found {
                present: vec!["http.server"],
                cpus: vec![0, 1],
                ..Found::default()
            },
            "/",
            &answers("http.server"),
            &Choices::default(),
        );
        assert!(
            text.contains("#   apache             apt-get install apache2"),
            "{text}"
        );
    }

    #[test]
    fn apache_is_found_as_apache2_or_httpd() {
        let Probe::Program(names) = STATIC.iter().find(|s| s.name == "apache").unwrap().probe
        else {
            panic!("apache is found on PATH");
        };
        let (debian, other, neither) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        std::fs::write(debian.path().join("apache2"), "").unwrap();
        std::fs::write(other.path().join("httpd"), "").unwrap();
        std::fs::write(neither.path().join("nginx"), "").unwrap();
        for (dir, want) in [(&debian, true), (&other, true), (&neither, false)] {
            let path = std::env::join_paths([neither.path(), dir.path()]).unwrap();
            let found = names.iter().any(|n| find_on_path(Some(&path), n).is_some());
            assert_eq!(found, want, "{:?}", dir.path());
        }
        assert!(names.iter().all(|n| find_on_path(None, n).is_none()));
    }

    #[test]
    fn the_probe_of_a_server_that_never_answers_ends_at_its_timeout_with_the_reason() {
        // It failed with a bare "Resource temporarily unavailable (os error 11)".
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let held = std::thread::spawn(move || listener.accept().map(|(tcp, _)| tcp));
        let e = get_once(addr, "h", "/", "the server", Duration::from_millis(300)).unwrap_err();
        let text = format!("{e:#}");
        assert!(
            text.contains("the server (GET /) did not complete its answer within 0.3 s"),
            "{text}"
        );
        assert!(!text.contains("os error"), "{text}");
        drop(held.join());
    }

    #[test]
    fn init_paths_are_checked_and_encoded_as_the_run_sends_them() {
        assert_eq!(wire_path("/hello?x=1").unwrap(), "/hello?x=1");
        assert_eq!(wire_path("/a b").unwrap(), "/a%20b");
        for bad in ["hello", "/x\r\nX-Test: 1", "/\u{7f}"] {
            let e = wire_path(bad).unwrap_err().error.to_string();
            assert!(e.starts_with("--path: path '"), "{bad:?}: {e}");
        }
    }

    /// `init --find-max --slo`: a capacity search in place of the sweep, pinned apart, that
    /// opens one connection ahead of need (64 held open idle blocked sync workers), and the
    /// "run it with" line names the file written; each server says where it was found, and
    /// one found under another Python runs with that one.
    #[test]
    fn init_find_max_plans_a_search_with_one_connection_ahead_and_names_its_file() {
        let t = Template::Wsgi("myapp:app".into());
        let found = Found {
            present: vec!["gunicorn-sync", "wsgiref"],
            cpus: vec![0, 1],
            places: vec![
                (
                    "gunicorn-sync",
                    Place {
                        python: Some("/opt/py 3/bin/python3".into()),
                        how: "/usr/local/bin/gunicorn, run by /opt/py 3/bin/python3".into(),
                    },
                ),
                (
                    "wsgiref",
                    Place {
                        python: None,
                        how: "the standard library".into(),
                    },
                ),
            ],
            pythons: vec!["/opt/py 3/bin/python3".into(), "/usr/bin/python3".into()],
        };
        let choices = Choices {
            out: Some("capacity.toml".into()),
            slo: vec!["p99<50ms".into(), "errors<0.1%".into()],
        };
        let text = plan_text(&t, &found, "/", &answers("gunicorn-sync"), &choices);
        insta::assert_snapshot!("plan_wsgi_find_max", text);
        assert!(
            text.contains("Run it with `shootout run capacity.toml`"),
            "{text}"
        );
        let plan = shootout_model::plan::parse(&text, "capacity.toml", &[0, 1])
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let search = plan.workloads[0].find_max.as_ref().expect("a search");
        assert_eq!(search.slo, choices.slo);
        assert_eq!(search.connections, 1);
        assert_eq!(plan.defaults.server_cpus, Some(vec![1]));
        let shootout_model::plan::Launch::Command { command, .. } = &plan.contenders[0].launch
        else {
            panic!("a started contender")
        };
        assert!(
            command.starts_with("exec '/opt/py 3/bin/python3' -m gunicorn "),
            "{command}"
        );
        assert!(
            text.contains("(--workers {cores} is --workers 1)"),
            "{text}"
        );
    }

    #[test]
    fn app_arg_refuses_what_is_not_module_colon_app() {
        assert!(app_arg("--wsgi", "pkg.mod:app".into()).is_ok());
        for bad in ["app", "m:", ":app", "m:app;rm -rf /", "1m:app", "m'x:app"] {
            assert!(app_arg("--wsgi", bad.into()).is_err(), "{bad}");
        }
    }
}
