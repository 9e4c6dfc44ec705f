//! What a command ends with and how it gets out: the [`Failure`] that carries an exit
//! code, the exit codes themselves, [`emit`] for a command's output on stdout, [`say!`]
//! and [`to_stderr`] for notes and errors, and [`exit_code`], which turns an outcome into
//! the process's exit code. Every subcommand writes through here and nowhere else.
//!
//! A reader that closes the pipe (`shootout ls | head -2`) ends the command quietly with
//! exit 0; any other write error (`> /dev/full`) is one line on stderr and exit 1.
//! [`Failure::output`] is the one place that tells the two apart. Notes on a stderr that
//! cannot be written never panic. [`check_output`] checks, before a run, that a file it
//! will write at its end can be written.

use std::io::Write;
use std::path::Path;

/// Writes one line to stderr through [`to_stderr`]: every note, warning and error of
/// every command goes this way, never `eprintln!` (which panics when stderr is a closed
/// pipe, as in `shootout load URL 2>&1 | head -1`).
macro_rules! say {
    () => {
        $crate::output::to_stderr("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::to_stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// A failure with the exit code it deserves.
#[derive(Debug)]
pub(crate) struct Failure {
    /// 1: the run could not be done (or a gate failed); 2: bad usage.
    pub code: i32,
    /// What went wrong and what to do.
    pub error: anyhow::Error,
}

impl Failure {
    /// Bad usage (exit 2).
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 2,
            error: error.into(),
        }
    }
    /// The run could not be done (exit 1).
    pub fn run(error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code: 1,
            error: error.into(),
        }
    }
}

impl Failure {
    /// A failed write of the command's output to stdout. A closed pipe (the reader went
    /// away: `| head`) is no failure: the command ends there, quietly, with exit 0. Any other
    /// error (a full disk, `> /dev/full`) is exit 1.
    pub fn output(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure {
                code: 0,
                error: ClosedStdout.into(),
            }
        } else {
            Failure::run(anyhow::Error::new(e).context("cannot write the output to stdout"))
        }
    }
}

/// The reader of stdout closed it: nothing to say, nothing left to do.
#[derive(Debug)]
struct ClosedStdout;

impl std::fmt::Display for ClosedStdout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed by its reader")
    }
}

impl std::error::Error for ClosedStdout {}

/// Writes `text` to stdout (locked, flushed): the one way a command writes its output.
/// See [`Failure::output`] for what a failed write becomes.
pub(crate) fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Failure::output)
}

/// Writes to stdout (buffered, locked, flushed) what `write` writes: for an output made as
/// it is written, which is not held whole in memory first. A failed write is what
/// [`emit`]'s is.
pub(crate) fn emit_with(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(Failure::output)
}

/// Writes `text` to stderr as it is. A stderr that cannot be written (a closed pipe, a
/// full disk) is not worth a panic, nor a different exit code.
pub(crate) fn to_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The exit code for a run that Ctrl-C ended.
pub(crate) const INTERRUPTED: i32 = 130;

/// The exit code of a `--fail-if` threshold that failed (`load`, `merge`, `run`, `report`).
pub(crate) const THRESHOLD_FAILED: i32 = 3;

/// The error a command that measured ends with when `faults` requests failed by a fault
/// of shootout's own (`generator_fault`: a panic caught in a worker), or `None`. Such a
/// run exits 1 however its requests went: its figures are not the server's alone.
pub(crate) fn generator_fault(faults: u64) -> Option<String> {
    (faults > 0).then(|| {
        format!(
            "{faults} request{} failed by a fault of shootout's own (generator_fault: a panic in a worker thread), not by the server: this is a bug in shootout; please report it with the command line, this output and the panic message above",
            if faults == 1 { "" } else { "s" }
        )
    })
}

/// A command's outcome as the process's exit code: a failure is one line on stderr, but
/// a stdout its reader closed ends quietly with exit 0.
pub(crate) fn exit_code(result: Result<i32, Failure>) -> i32 {
    match result {
        Ok(code) => code,
        Err(f) if f.error.is::<ClosedStdout>() => 0,
        Err(f) => {
            // Each cause once: messages that already quote their source skip it.
            let mut line = String::new();
            for cause in f.error.chain().map(|e| e.to_string()) {
                if !line.contains(&cause) {
                    if !line.is_empty() {
                        line.push_str(": ");
                    }
                    line.push_str(&cause);
                }
            }
            say!("error: {line}");
            f.code
        }
    }
}

/// clap's error as one line: the error, then its hints (`[possible values: …]`, `tip: a
/// similar subcommand exists: 'report'`), without the usage and the generic "try --help".
pub(crate) fn clap_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = lines
        .next()
        .unwrap_or("bad usage")
        .trim_start_matches("error: ")
        .to_string();
    for l in lines {
        if l.starts_with('[') || l.starts_with('<') || (l.starts_with("--") && !l.contains(' ')) {
            out.push(' ');
            out.push_str(l);
        } else if let Some(tip) = l.strip_prefix("tip: ") {
            out.push_str("; ");
            out.push_str(tip);
        }
    }
    out
}

/// Checks before the run that `flag`'s file can be written at its end: its directory
/// exists and is writable, and the path is not a directory.
pub(crate) fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let bad = |why: String| {
        Err(Failure::usage(anyhow::anyhow!(
            "{flag} {}: {why}",
            path.display()
        )))
    };
    if path.is_dir() {
        return bad("is a directory: give a file name".into());
    }
    if !dir.is_dir() {
        return bad(format!(
            "the directory {} does not exist: create it first",
            dir.display()
        ));
    }
    let writable = |p: &Path| {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::CString::new(p.as_os_str().as_bytes())
            // SAFETY: access() reads a NUL-terminated path we own.
            .is_ok_and(|c| unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0)
    };
    if !writable(dir) || (path.exists() && !writable(path)) {
        return bad("cannot be written here (permission denied): choose another path".into());
    }
    Ok(())
}
