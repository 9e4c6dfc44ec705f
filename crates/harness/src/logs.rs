//! Log capture: the files a contender's (or its setup's) output goes to, and their tails.
//!
//! Logs are appended to, so repeated starts of one contender in one log directory keep
//! every run; each start writes a header line, and the tail quoted in error messages is
//! read from after that header only (never from an earlier run).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many bytes at most are read from the end of a log to find its last lines.
const TAIL_WINDOW: u64 = 64 * 1024;

/// A log file opened for a child's output, and where this run's output starts in it.
#[derive(Debug)]
pub(crate) struct Log {
    /// The file, opened for appending (handed to the child).
    pub file: File,
    /// Its path.
    pub path: PathBuf,
    /// Offset (bytes) where this run's output starts.
    pub start: u64,
}

/// Opens (creating it and its directory if needed) the log at `path` for appending and
/// writes a header line naming `what` is started.
pub(crate) fn open(path: &Path, what: &str) -> io::Result<Log> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    writeln!(file, "==> shootout: {what} (unix time {since_epoch}) <==")?;
    let start = file.metadata()?.len();
    Ok(Log {
        file,
        path: path.to_path_buf(),
        start,
    })
}

/// The last `lines` lines of the file at `path` written after offset `start` (at most the
/// last 64 KiB), without trailing blank lines; empty if the file cannot be read.
pub fn tail(path: &Path, start: u64, lines: usize) -> String {
    tail_of(path, start, lines).unwrap_or_default()
}

fn tail_of(path: &Path, start: u64, lines: usize) -> io::Result<String> {
    if lines == 0 {
        return Ok(String::new());
    }
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let from = start.max(len.saturating_sub(TAIL_WINDOW));
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.take(len - from.min(len)).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut text: &str = text.trim_end();
    if from > start {
        // The window starts mid-line: drop the partial first line.
        text = text.split_once('\n').map_or("", |(_, rest)| rest);
    }
    let all: Vec<&str> = text.lines().collect();
    Ok(all[all.len().saturating_sub(lines)..].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_reads_only_this_runs_output() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/a.stderr.log");
        let mut first = open(&path, "first").unwrap();
        writeln!(first.file, "old 1\nold 2").unwrap();
        let mut second = open(&path, "second").unwrap();
        assert_eq!(tail(&path, second.start, 5), "");
        writeln!(second.file, "new 1\nnew 2\nnew 3\n\n").unwrap();
        assert_eq!(tail(&path, second.start, 2), "new 2\nnew 3");
        assert_eq!(tail(&path, second.start, 10), "new 1\nnew 2\nnew 3");
        assert_eq!(tail(&path, second.start, 0), "");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("==> shootout: first"), "{text}");
        assert!(text.contains("old 2\n==> shootout: second"), "{text}");
    }

    #[test]
    fn tail_of_a_huge_log_drops_the_partial_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let mut log = open(&path, "big").unwrap();
        for i in 0..20_000 {
            writeln!(log.file, "line {i}").unwrap();
        }
        assert_eq!(tail(&path, log.start, 2), "line 19998\nline 19999");
        let all = tail(&path, log.start, usize::MAX);
        assert!(
            all.lines().all(|l| l.starts_with("line ")),
            "partial line kept"
        );
    }

    #[test]
    fn tail_of_a_missing_file_is_empty() {
        assert_eq!(tail(Path::new("/nonexistent/x.log"), 0, 3), "");
    }
}
