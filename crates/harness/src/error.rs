//! [`HarnessError`]: why a contender could not be set up, started or made ready.
//!
//! Every message names the contender, says what happened and quotes the last lines of the
//! relevant log, so that the user sees the server's own complaint without opening a file.
//! [`HarnessError::contender_status`] maps each error to the model's [`ContenderStatus`]
//! that the store records.

use shootout_model::ContenderStatus;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

/// Why a contender could not be set up, started or made ready.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The configuration cannot work (empty CPU list, unresolvable host…).
    #[error("contender `{name}`: {reason}")]
    InvalidConfig {
        /// The contender's name.
        name: String,
        /// What is wrong, in words.
        reason: String,
    },
    /// Something already answers on the contender's port before it was started: it would
    /// be measured instead of the contender.
    #[error(
        "contender `{name}`: something already listens on {addr} before the contender was \
         started (a server left over from an earlier run?); stop it or choose another port"
    )]
    PortInUse {
        /// The contender's name.
        name: String,
        /// The address that accepted a connection.
        addr: SocketAddr,
    },
    /// The setup command ended with a failure status.
    #[error(
        "contender `{name}`: its setup `{setup}` failed ({status}){}",
        tail_block("output", .output_tail, .log)
    )]
    Setup {
        /// The contender's name.
        name: String,
        /// The setup command.
        setup: String,
        /// How it ended.
        status: ExitStatus,
        /// The last lines of its output (stdout and stderr together).
        output_tail: String,
        /// Its full log.
        log: PathBuf,
        /// Its output names EADDRINUSE: it failed because its port was taken (see
        /// [`HarnessError::port_taken`]).
        port_taken: bool,
    },
    /// The setup command ran longer than its timeout and was killed.
    #[error(
        "contender `{name}`: its setup `{setup}` was still running after {:.1} s and was \
         killed{}",
        .after.as_secs_f64(),
        tail_block("output", .output_tail, .log)
    )]
    SetupTimedOut {
        /// The contender's name.
        name: String,
        /// The setup command.
        setup: String,
        /// How long it was given.
        after: Duration,
        /// The last lines of its output.
        output_tail: String,
        /// Its full log.
        log: PathBuf,
        /// Its output names EADDRINUSE: it failed because its port was taken (see
        /// [`HarnessError::port_taken`]).
        port_taken: bool,
    },
    /// A process could not be spawned, or its log files could not be created.
    #[error("contender `{name}`: {what}: {source}")]
    Spawn {
        /// The contender's name.
        name: String,
        /// What was being done, e.g. "cannot create log file /x/a.stderr.log".
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The contender exited before it answered its readiness probe.
    #[error(
        "contender `{name}` exited before it was ready ({status}){}",
        tail_block("stderr", .stderr_tail, .log)
    )]
    Exited {
        /// The contender's name.
        name: String,
        /// How it ended.
        status: ExitStatus,
        /// The last lines of its stderr.
        stderr_tail: String,
        /// Its full stderr log.
        log: PathBuf,
        /// Its output names EADDRINUSE: it failed because its port was taken (see
        /// [`HarnessError::port_taken`]).
        port_taken: bool,
    },
    /// The contender did not answer its readiness probe in time (it was left running: stop
    /// or drop it).
    #[error(
        "contender `{name}` was not ready after {:.1} s (last probe: {last_probe}); raise \
         its ready timeout or check its command and port{}",
        .waited.as_secs_f64(),
        tail_block("stderr", .stderr_tail, .log)
    )]
    NeverReady {
        /// The contender's name.
        name: String,
        /// How long it was waited for, from its start.
        waited: Duration,
        /// What the last probe got, e.g. "connection refused" or "HTTP status 503".
        last_probe: String,
        /// The last lines of its stderr.
        stderr_tail: String,
        /// Its full stderr log.
        log: PathBuf,
        /// Its output names EADDRINUSE: it failed because its port was taken (see
        /// [`HarnessError::port_taken`]).
        port_taken: bool,
    },
    /// The run was stopped (Ctrl-C, SIGTERM) while the contender was being set up or
    /// waited for; what was started was stopped.
    #[error("contender `{name}`: the run was interrupted while {during}")]
    Interrupted {
        /// The contender's name.
        name: String,
        /// What was going on, e.g. "its setup ran".
        during: &'static str,
    },
}

impl HarnessError {
    /// True when the contender (or its setup) could not have its port: something already
    /// answered there ([`HarnessError::PortInUse`]), or its output names EADDRINUSE (the
    /// `port_taken` field). Starting it again on another port may succeed.
    pub fn port_taken(&self) -> bool {
        match self {
            HarnessError::PortInUse { .. } => true,
            HarnessError::Setup { port_taken, .. }
            | HarnessError::SetupTimedOut { port_taken, .. }
            | HarnessError::Exited { port_taken, .. }
            | HarnessError::NeverReady { port_taken, .. } => *port_taken,
            HarnessError::InvalidConfig { .. }
            | HarnessError::Spawn { .. }
            | HarnessError::Interrupted { .. } => false,
        }
    }

    /// The name of the contender the error is about.
    pub fn contender(&self) -> &str {
        match self {
            HarnessError::InvalidConfig { name, .. }
            | HarnessError::PortInUse { name, .. }
            | HarnessError::Setup { name, .. }
            | HarnessError::SetupTimedOut { name, .. }
            | HarnessError::Spawn { name, .. }
            | HarnessError::Exited { name, .. }
            | HarnessError::NeverReady { name, .. }
            | HarnessError::Interrupted { name, .. } => name,
        }
    }

    /// What became of the contender, as the store records it: setup errors are
    /// `SetupFailed`, a probe timeout is `NeverReady`, a stop asked for meanwhile is
    /// `Interrupted`, everything that kept it from running
    /// (bad configuration, busy port, spawn failure, early exit) is `Exited`.
    pub fn contender_status(&self) -> ContenderStatus {
        match self {
            HarnessError::Setup { .. } | HarnessError::SetupTimedOut { .. } => {
                ContenderStatus::SetupFailed
            }
            HarnessError::NeverReady { .. } => ContenderStatus::NeverReady,
            HarnessError::Interrupted { .. } => ContenderStatus::Interrupted,
            HarnessError::InvalidConfig { .. }
            | HarnessError::PortInUse { .. }
            | HarnessError::Spawn { .. }
            | HarnessError::Exited { .. } => ContenderStatus::Exited,
        }
    }
}

/// True when a server's output says its address was taken, as Python, nginx, Apache and
/// most servers print EADDRINUSE. A server says so only in words: this is the one place
/// they are read.
pub(crate) fn names_port_taken(output: &str) -> bool {
    let o = output.to_ascii_lowercase();
    o.contains("address already in use") || o.contains("eaddrinuse")
}

/// The end of an error message quoting a log's tail, one indented line per log line.
fn tail_block(what: &str, tail: &str, log: &Path) -> String {
    if tail.trim().is_empty() {
        return format!("; its {what} was empty ({})", log.display());
    }
    let mut out = format!("; last lines of its {what} ({}):", log.display());
    for line in tail.lines() {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn exited_message_names_contender_status_and_tail() {
        let e = HarnessError::Exited {
            name: "gunicorn".into(),
            status: ExitStatus::from_raw(3 << 8),
            stderr_tail: "Traceback\nImportError: no app".into(),
            log: "/logs/gunicorn.stderr.log".into(),
            port_taken: false,
        };
        assert_eq!(
            e.to_string(),
            "contender `gunicorn` exited before it was ready (exit status: 3); last lines of \
             its stderr (/logs/gunicorn.stderr.log):\n    Traceback\n    ImportError: no app"
        );
        assert_eq!(e.contender_status(), ContenderStatus::Exited);
        assert_eq!(e.contender(), "gunicorn");
    }

    #[test]
    fn never_ready_message_says_how_long_and_what_the_probe_got() {
        let e = HarnessError::NeverReady {
            name: "a".into(),
            waited: Duration::from_millis(1500),
            last_probe: "connection refused".into(),
            stderr_tail: String::new(),
            log: "/l/a.stderr.log".into(),
            port_taken: false,
        };
        assert_eq!(
            e.to_string(),
            "contender `a` was not ready after 1.5 s (last probe: connection refused); raise \
             its ready timeout or check its command and port; its stderr was empty \
             (/l/a.stderr.log)"
        );
        assert_eq!(e.contender_status(), ContenderStatus::NeverReady);
    }

    /// A taken port is recognised from what servers really print, and from the harness;
    /// what a contender is named or what its command says does not count.
    #[test]
    fn a_taken_port_is_recognised() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let python = std::process::Command::new("python3")
            .args([
                "-c",
                &format!("import socket; socket.socket().bind(('127.0.0.1', {port}))"),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&python.stderr);
        assert!(names_port_taken(&stderr), "{stderr}");
        assert!(names_port_taken(
            "nginx: [emerg] bind() to 127.0.0.1:8080 failed (98: Address already in use)"
        ));
        assert!(!names_port_taken(
            "ModuleNotFoundError: No module named 'app'"
        ));
        let in_use = HarnessError::PortInUse {
            name: "a".into(),
            addr: taken.local_addr().unwrap(),
        };
        assert!(in_use.port_taken());
        let exited = |name: &str, port_taken| HarnessError::Exited {
            name: name.into(),
            status: ExitStatus::from_raw(1 << 8),
            stderr_tail: "OSError: [Errno 98] Address already in use".into(),
            log: "/l/a.stderr.log".into(),
            port_taken,
        };
        assert!(exited("a", true).port_taken());
        // Regression: the words were once looked for in the whole message, name included.
        assert!(!exited("eaddrinuse", false).port_taken());
        let interrupted = HarnessError::Interrupted {
            name: "something already listens on".into(),
            during: "its setup ran",
        };
        assert!(!interrupted.port_taken());
    }
}
