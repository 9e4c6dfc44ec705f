//! Reading the files a user hands over (result files and logs for `merge`, request lists
//! and their bodies, `-p` bodies) with a bound on what is read, so that `/dev/zero`, a
//! FIFO or a runaway log is an error, not memory running out. A regular file's size is
//! checked before anything is read; anything else is read through `Read::take` one byte
//! past the bound.
//!
//! Seams: the bounds are the model's (each named where its format is defined); the callers
//! word the errors, naming the file, the limit and what to do.

use std::io::{self, Read};
use std::path::Path;

/// What was read: the bytes, or the fact that there were more than the bound.
pub(crate) enum Bounded {
    /// Every byte, at most the bound.
    Read(Vec<u8>),
    /// More than the bound: nothing is kept.
    TooLarge,
}

/// Reads `path` whole when it holds at most `limit` bytes.
pub(crate) fn read_file(path: &Path, limit: u64) -> io::Result<Bounded> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Ok(Bounded::TooLarge);
    }
    read(file, limit)
}

/// Reads `r` to its end when it holds at most `limit` bytes; stops one byte past it.
pub(crate) fn read(r: impl Read, limit: u64) -> io::Result<Bounded> {
    let mut out = Vec::new();
    r.take(limit.saturating_add(1)).read_to_end(&mut out)?;
    Ok(if out.len() as u64 > limit {
        Bounded::TooLarge
    } else {
        Bounded::Read(out)
    })
}

/// `64 MiB`, `1 GiB`: a limit as the messages state it (whole units).
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// `/dev/zero` never ends: the bound ends the read, quickly.
    #[test]
    fn dev_zero_is_too_large_after_the_bound() {
        let t = Instant::now();
        let got = read_file(Path::new("/dev/zero"), 1 << 20).unwrap();
        assert!(matches!(got, Bounded::TooLarge));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn a_file_at_the_bound_is_read_and_one_past_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![b'x'; 100]).unwrap();
        assert!(matches!(read_file(&p, 100).unwrap(), Bounded::Read(b) if b.len() == 100));
        assert!(matches!(read_file(&p, 99).unwrap(), Bounded::TooLarge));
        assert!(matches!(read(&b"abc"[..], 2).unwrap(), Bounded::TooLarge));
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(1 << 30), "1 GiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
