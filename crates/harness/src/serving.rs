//! What actually serves a contender, and its version: the process of the contender's
//! family that holds a socket listening on its port, found by matching the socket
//! inodes of `/proc/net/tcp` and `/proc/net/tcp6` with the links in `/proc/PID/fd`, and
//! its executable (`/proc/PID/exe`), asked for its version the way it answers.
//!
//! The command's first word says nothing reliable (`mkdir -p … && nginx …`, `sed … >
//! conf; exec caddy …`, `exec python3 …`), so the version is asked of what listens:
//! - a Python interpreter is asked what it runs: `-m MODULE` is the distribution that
//!   provides the module (`uvicorn 0.30.1 (Python 3.11.7)`), or Python itself for the
//!   standard library's (`-m http.server`: `Python 3.11.7`); a console script
//!   (`/usr/bin/gunicorn`) is its distribution's; an app's own script is run by Python;
//! - any other program is asked `--version`, then `-v` (nginx), then `version` (caddy),
//!   and when none answers with a version, its Debian package (`dpkg -S`, `dpkg-query`).
//!
//! When none of this gives an answer the version is unknown, and the error says why:
//! never the version of another program. Seams: [`crate::Contender::serving_version`]
//! calls [`serving_version`] once the contender is ready.

use crate::family::{self, Family, Search};
use crate::procfs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one question to the serving program may take.
const ASK_WITHIN: Duration = Duration::from_secs(2);

/// The process that serves: its pid, executable and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Server {
    /// Its pid.
    pub pid: i32,
    /// Its executable (`/proc/PID/exe`).
    pub exe: PathBuf,
    /// Its command line, `argv[0]` first.
    pub argv: Vec<String>,
}

/// The version of what serves `family` on `port` (see the module doc), or why it is
/// unknown.
pub(crate) fn serving_version(family: &Family, port: u16) -> Result<String, String> {
    let server = server_on(family, port)?;
    let shown = server.exe.display().to_string();
    let name = server
        .exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("python") {
        return python_version(&server)
            .map_err(|why| format!("{shown} (pid {}) did not say: {why}", server.pid));
    }
    program_version(&server.exe)
        .or_else(|| debian_package(&server.exe))
        .ok_or_else(|| {
            format!(
                "{shown} (pid {}) gave no version to --version, -v or version, and no Debian package holds it",
                server.pid
            )
        })
}

/// The process of `family` that listens on `port`: of those that hold its listening
/// socket (a server's workers share their master's), the one nearest the family's root.
pub(crate) fn server_on(family: &Family, port: u16) -> Result<Server, String> {
    let inodes = listening_inodes(port);
    if inodes.is_empty() {
        return Err(format!("nothing listens on port {port}"));
    }
    let all = procfs::all_stats();
    let members = family::members(&all, family, Search::Orphans);
    let holders: Vec<procfs::Stat> = members
        .iter()
        .filter(|s| !s.is_dead() && holds_any(s.pid, &inodes))
        .copied()
        .collect();
    let root = holders
        .iter()
        .filter(|s| !holders.iter().any(|h| h.pid == s.ppid))
        .min_by_key(|s| s.pid)
        .ok_or_else(|| {
            format!("no process of the contender's own listens on port {port} (another program serves it, e.g. a container's proxy)")
        })?;
    let link = format!("/proc/{}/exe", root.pid);
    let exe = std::fs::read_link(&link).map_err(|e| format!("cannot read {link}: {e}"))?;
    if exe.to_string_lossy().ends_with(" (deleted)") {
        return Err(format!(
            "the executable of pid {} ({}) was replaced on disk since it started",
            root.pid,
            exe.display()
        ));
    }
    let argv = procfs::cmdline_args(root.pid);
    Ok(Server {
        pid: root.pid,
        exe,
        argv,
    })
}

/// The inodes of the sockets listening on `port` (TCP over IPv4 and IPv6).
fn listening_inodes(port: u16) -> Vec<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| parse_listeners(&text, port))
        .collect()
}

/// The inodes of the sockets in state LISTEN (`0A`) on local port `port`, from the text
/// of `/proc/net/tcp` or `/proc/net/tcp6` (ports are hexadecimal there).
pub(crate) fn parse_listeners(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_ascii_whitespace().collect();
            let local = f.get(1)?;
            let (_, hex_port) = local.rsplit_once(':')?;
            let listening = *f.get(3)? == "0A";
            let on_port = u16::from_str_radix(hex_port, 16).ok()? == port;
            (listening && on_port).then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// Whether `pid` has one of the sockets `inodes` open.
fn holds_any(pid: i32, inodes: &[u64]) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    dir.filter_map(Result::ok).any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| {
            target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| inodes.contains(&n))
        })
    })
}

/// Asks the Python interpreter that serves what it runs (see the module doc).
fn python_version(server: &Server) -> Result<String, String> {
    let interpreter = interpreter_path(server);
    let mut cmd = std::process::Command::new(&interpreter);
    cmd.arg("-c")
        .arg(PYTHON_WHAT_RUNS)
        .args(server.argv.iter().skip(1));
    // Where the server found its modules, so that they are found again.
    for var in ["PYTHONPATH", "PYTHONHOME"] {
        if let Some(value) = procfs::environ_var(server.pid, var) {
            cmd.env(var, value);
        }
    }
    match crate::facts::first_line(cmd, ASK_WITHIN) {
        Some((true, line)) => Ok(line),
        Some((false, line)) => Err(line),
        None => Err(format!(
            "{} printed nothing or took over {} s",
            interpreter.display(),
            ASK_WITHIN.as_secs()
        )),
    }
}

/// The path the server's interpreter was started by, when it leads to its executable: a
/// virtual environment's `bin/python3` is a link to the system's, and only started by
/// its own path does it see the environment's packages. Else the executable itself.
fn interpreter_path(server: &Server) -> PathBuf {
    let argv0 = server.argv.first().map_or("", String::as_str);
    let same = |p: &Path| std::fs::canonicalize(p).is_ok_and(|c| c == server.exe);
    let candidates: Vec<PathBuf> = if argv0.contains('/') {
        let cwd = std::fs::read_link(format!("/proc/{}/cwd", server.pid)).unwrap_or_default();
        vec![cwd.join(argv0)]
    } else if argv0.is_empty() {
        Vec::new()
    } else {
        procfs::environ_var(server.pid, "PATH")
            .unwrap_or_default()
            .split(':')
            .filter(|d| !d.is_empty())
            .map(|d| Path::new(d).join(argv0))
            .collect()
    };
    candidates
        .into_iter()
        .find(|p| same(p))
        .unwrap_or_else(|| server.exe.clone())
}

/// Run by the serving interpreter with the server's arguments: prints what they run and
/// its version, or says why it cannot (exit 1).
const PYTHON_WHAT_RUNS: &str = r#"
import os, platform, sys
py = "Python " + platform.python_version()
args, i, module, script = sys.argv[1:], 0, None, None
while i < len(args):
    a = args[i]
    if a == "-m" and i + 1 < len(args):
        module = args[i + 1]; break
    if a.startswith("-m") and len(a) > 2:
        module = a[2:]; break
    if a.startswith("-c"):
        break
    if a in ("-X", "-W", "--check-hash-based-pycs"):
        i += 2; continue
    if a.startswith("-"):
        i += 1; continue
    script = a; break
from importlib import metadata
if module is not None:
    top = module.split(".")[0]
    if top in getattr(sys, "stdlib_module_names", ()):
        print(py); sys.exit(0)
    names = metadata.packages_distributions().get(top, [])
    if not names:
        print("no installed distribution provides the module " + top); sys.exit(1)
    print("%s %s (%s)" % (names[0], metadata.version(names[0]), py)); sys.exit(0)
if script is not None:
    name = os.path.basename(script)
    for ep in metadata.entry_points(group="console_scripts"):
        if ep.name == name:
            print("%s %s (%s)" % (ep.dist.name, ep.dist.version, py)); sys.exit(0)
print(py)
"#;

/// The first line `PROGRAM --version`, `-v` (as nginx wants) or `version` (as caddy
/// wants) prints with success within 2 s, when it holds a digit; `None` when the
/// program gives none.
pub(crate) fn program_version(program: &Path) -> Option<String> {
    ["--version", "-v", "version"].iter().find_map(|flag| {
        let mut cmd = std::process::Command::new(program);
        cmd.arg(flag);
        match crate::facts::first_line(cmd, ASK_WITHIN) {
            Some((true, line)) if line.bytes().any(|b| b.is_ascii_digit()) => Some(line),
            _ => None,
        }
    })
}

/// `PACKAGE VERSION (Debian package)` for the package that installed `exe`, when `dpkg`
/// knows one.
fn debian_package(exe: &Path) -> Option<String> {
    let mut search = std::process::Command::new("dpkg");
    search.arg("-S").arg(exe);
    let (true, line) = crate::facts::first_line(search, ASK_WITHIN)? else {
        return None;
    };
    // `nginx-light: /usr/sbin/nginx`, or `pkg:amd64: …` on multi-arch systems.
    let (package, _) = line.split_once(": ")?;
    if package.contains([',', ' ']) {
        return None; // a path claimed by several packages: which one is unknown
    }
    let mut query = std::process::Command::new("dpkg-query");
    query.args(["-W", "-f", "${Version}\\n", package]);
    match crate::facts::first_line(query, ASK_WITHIN)? {
        (true, version) => Some(format!("{package} {version} (Debian package)")),
        (false, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1184 1 00000000d50f60f1 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 00000000d50f60f1 100 0 0 10 0
   2: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 00000000d50f60f1 100 0 0 10 0
   3: garbage
";

    #[test]
    fn listening_sockets_are_read_by_port_and_state() {
        // Port 8080 is 1F90: the listener counts, the established connection does not.
        assert_eq!(parse_listeners(TCP, 8080), vec![1184]);
        assert_eq!(parse_listeners(TCP, 8081), vec![3333]);
        assert_eq!(parse_listeners(TCP, 80), Vec::<u64>::new());
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(parse_listeners(v6, 8080), vec![4444]);
    }

    #[test]
    fn a_program_that_gives_no_version_is_named_by_its_debian_package() {
        let dpkg = Path::new("/usr/bin/dpkg");
        if !dpkg.exists() {
            eprintln!("note: no dpkg here (not Debian): test skipped");
            return;
        }
        let out = std::process::Command::new("dpkg-query")
            .args(["-W", "-f", "${Version}", "dpkg"])
            .output()
            .unwrap();
        let version = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            debian_package(dpkg),
            Some(format!("dpkg {version} (Debian package)"))
        );
        // A file no package holds names none.
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("serve");
        std::fs::write(&mine, "").unwrap();
        assert_eq!(debian_package(&mine), None);
    }

    #[test]
    fn the_listener_is_found_among_the_family_only() {
        // A child that listens on a port of the OS's choosing and says which.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket, sys, time\n\
                 s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n\
                 print(s.getsockname()[1], flush=True); sys.stdin.read()",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port: u16 = line.trim().parse().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let family = Family {
            leader: pid,
            pgid: 0,
            tag: None,
            with_sub_tags: false,
        };
        let server = server_on(&family, port).unwrap();
        assert_eq!(server.pid, pid);
        let name = server
            .exe
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("python3"), "{server:?}");
        assert!(server.argv[0].ends_with("python3"), "{server:?}");
        assert_eq!(server.argv[1], "-c", "{server:?}");
        // Asked, the interpreter names itself: `-c` code is Python's.
        let v = serving_version(&family, port).unwrap();
        assert!(v.starts_with("Python 3."), "{v}");
        // A family that does not hold the socket has no server there, and says so.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mine = listener.local_addr().unwrap().port();
        let err = server_on(&family, mine).unwrap_err();
        assert!(
            err.contains(&format!(
                "no process of the contender's own listens on port {mine}"
            )),
            "{err}"
        );
        drop(listener);
        // A port nothing listens on says so. Tests running beside this one may take a
        // freed port at once: a port found taken again is left for another.
        let nothing = (0..20).find_map(|_| {
            let freed = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = freed.local_addr().unwrap().port();
            drop(freed);
            let err = server_on(&family, port).unwrap_err();
            if err == format!("nothing listens on port {port}") {
                return Some(port);
            }
            assert!(
                TcpListener::bind(("127.0.0.1", port)).is_err(),
                "port {port} is free, yet: {err}"
            );
            None
        });
        assert!(nothing.is_some(), "every freed port was taken again");
        drop(child.stdin.take());
        child.wait().unwrap();
    }
}
