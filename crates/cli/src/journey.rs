//! Journey files as the commands read them.

use crate::output::Failure;
use anyhow::anyhow;
use shootout_model::journey::{self, JourneyFile};
use std::io::Read;
use std::path::Path;

/// The largest journey file read: 16 MiB.
const MAX_FILE: u64 = 16 << 20;

/// Reads a file the journey names, at most `limit` bytes.
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {limit} bytes"));
    }
    Ok(bytes)
}

/// Reads and checks a journey file, with the files it names.
pub fn load(file: &Path) -> Result<JourneyFile, Failure> {
    let shown = file.display().to_string();
    let bytes = read_limited(file, MAX_FILE)
        .map_err(|why| Failure::usage(anyhow!("cannot read the journey file {shown}: {why}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::usage(anyhow!("{shown} is not UTF-8 text: save it as UTF-8")))?;
    let limit = journey::data::MAX_DATA.max(shootout_model::spec::MAX_BODY) as u64;
    journey::parse(&text, &shown, &mut |p| read_limited(p, limit)).map_err(Failure::usage)
}
