//! A list of requests for one origin (`--urls FILE`, a plan workload's `requests`), read
//! from a text format close to vegeta's HTTP targets, and the templated values its paths,
//! header values and bodies may hold (`{seq}`, `{rand:LO-HI}`).
//!
//! Seams: no I/O here. [`RequestList::parse`] takes the file's text and a closure that
//! reads `@body` files, so the CLI decides where files come from and this module checks
//! every field once, with the same checks as `-m` and `-H` ([`check_method`],
//! [`check_header`]); an error names the file and line and the fix. The engine turns each
//! entry's [`Template`] pieces into bytes per request.

use crate::target::{check_header, check_method, RequestError, Target, MAX_BODY};
use std::collections::HashMap;
use std::sync::Arc;

/// The most entries a list may have.
pub const MAX_ENTRIES: usize = 1_000_000;

/// The most bytes a list file may hold: [`MAX_ENTRIES`] entries of 128 bytes each (a
/// request line and a header or two). A longer file cannot be a list shootout accepts
/// whole, and reading `/dev/zero` or a FIFO stops here instead of at the end of memory.
pub const MAX_LIST_BYTES: u64 = 128 << 20;

/// The most bytes the body files of one list may hold together, each file counted once
/// however often it is named: four bodies of the largest size ([`MAX_BODY`], 64 MiB).
/// The bodies stay in memory for the whole run, shared by every entry that names them
/// and by the requests built from them, so this bounds what a list can take.
pub const MAX_LIST_BODIES: usize = 256 << 20;

/// Lists up to this many entries get per-entry counts and latency in the reports; longer
/// lists are reported as a whole.
pub const MAX_REPORTED_ENTRIES: usize = 256;

/// One piece of a templated text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes sent as they are.
    Text(Vec<u8>),
    /// `{seq}`: a counter, unique within the run (0, 1, 2, … over all threads).
    Seq,
    /// `{rand:LO-HI}`: a number drawn uniformly from `lo..=hi` (inclusive).
    Rand {
        /// Smallest value.
        lo: u64,
        /// Largest value.
        hi: u64,
    },
}

/// A text with templated values, split into pieces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template(pub Vec<Piece>);

/// A `{rand:…}` that is not `{rand:LO-HI}` with `LO <= HI`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a template: write {{rand:LO-HI}} with whole numbers LO <= HI, e.g. {{rand:1-1000}}")]
pub struct TemplateError(pub String);

impl Template {
    /// Splits `text` at `{seq}` and `{rand:LO-HI}`; any other brace is text (a JSON body
    /// stays as it is). A `{rand:` that does not close into `LO-HI` is an error.
    pub fn parse(text: &[u8]) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            if rest.starts_with(b"{seq}") {
                pieces.push(Piece::Text(std::mem::take(&mut lit)));
                pieces.push(Piece::Seq);
                i += 5;
            } else if rest.starts_with(b"{rand:") {
                let end = rest.iter().position(|&b| b == b'}');
                let inner = end.map(|e| &rest[6..e]);
                let range = inner.and_then(|r| {
                    let r = std::str::from_utf8(r).ok()?;
                    let (lo, hi) = r.split_once('-')?;
                    let (lo, hi) = (lo.parse::<u64>().ok()?, hi.parse::<u64>().ok()?);
                    (lo <= hi).then_some((lo, hi))
                });
                let Some((lo, hi)) = range else {
                    let shown = &rest[..end.map_or(rest.len().min(24), |e| e + 1)];
                    return Err(TemplateError(String::from_utf8_lossy(shown).into_owned()));
                };
                pieces.push(Piece::Text(std::mem::take(&mut lit)));
                pieces.push(Piece::Rand { lo, hi });
                i += end.unwrap_or(rest.len()) + 1;
            } else {
                lit.push(text[i]);
                i += 1;
            }
        }
        pieces.push(Piece::Text(lit));
        pieces.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
        Ok(Template(pieces))
    }

    /// True when the text has a templated value (else it is the same for every request).
    pub fn is_templated(&self) -> bool {
        self.0.iter().any(|p| !matches!(p, Piece::Text(_)))
    }
}

/// The order entries are sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Each thread walks the list from the top, over and over.
    #[default]
    Seq,
    /// Each request picks an entry at random (seeded by [`RequestList::seed`]).
    Random,
}

impl std::fmt::Display for Order {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(crate::Choice::name(*self))
    }
}

impl crate::Choice for Order {
    const ALL: &'static [Order] = &[Order::Seq, Order::Random];
    fn names(self) -> &'static [&'static str] {
        match self {
            Order::Seq => &["seq"],
            Order::Random => &["random"],
        }
    }
}

/// One request of a list. Its fields passed the checks of `-m` and `-H`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// The method, upper-cased.
    pub method: String,
    /// Path and query, starting with `/` (may hold templates).
    pub path: String,
    /// Headers of this entry, added after the run's own (one of the same name replaces
    /// the run's); values may hold templates.
    pub headers: Vec<(String, String)>,
    /// The body (may hold templates); empty when none. Entries that name the same body
    /// file share one copy.
    pub body: Arc<[u8]>,
    /// The line the entry starts on (1-based).
    pub line: usize,
}

impl ListEntry {
    /// How reports name the entry: `METHOD PATH`, templates as written.
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// A list of requests for one origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestList {
    /// Where it was read from, as the user named it.
    pub source: String,
    /// The entries, in file order (at least one).
    pub entries: Vec<ListEntry>,
    /// Sequential or random.
    pub order: Order,
    /// Seeds the random order and `{rand:…}` values, so a run can be repeated.
    pub seed: u64,
}

/// A list that cannot be read; shown as `FILE:LINE: what is wrong (the fix)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}:{line}: {message}")]
pub struct ListError {
    /// The file.
    pub source_name: String,
    /// The line (1-based; 0 for the file as a whole).
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl RequestList {
    /// Reads a list: entries separated by blank lines (optional), each a line `METHOD
    /// PATH` (or `METHOD URL` of `base`'s origin, when there is one), then optional `Name: value` header
    /// lines and one `@FILE` body line, read by `read_body` (its error text is shown)
    /// once per file however often it is named, the entries naming it sharing the bytes;
    /// the files hold at most [`MAX_LIST_BODIES`] together. Lines starting with `#` are
    /// comments.
    pub fn parse(
        source: &str,
        text: &str,
        base: Option<&Target>,
        order: Order,
        seed: u64,
        mut read_body: impl FnMut(&str) -> Result<Vec<u8>, String>,
    ) -> Result<RequestList, ListError> {
        let err = |line: usize, message: String| ListError {
            source_name: source.to_string(),
            line,
            message,
        };
        let mut r = ListReader {
            entries: Vec::new(),
            bodies: HashMap::new(),
            body_bytes: 0,
            open: false,
            read_body: &mut read_body,
        };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let read = if line.is_empty() {
                r.open = false;
                Ok(())
            } else if line.starts_with('#') {
                Ok(())
            } else if let Some(file) = line.strip_prefix('@') {
                r.body_line(file.trim())
            } else if !is_request_line(line) {
                r.header_line(line)
            } else {
                r.request_line(line, n + 1, base)
            };
            read.map_err(|message| err(n + 1, message))?;
        }
        let entries = r.entries;
        if entries.is_empty() {
            return Err(err(
                0,
                "no request in the list: write one per line, e.g. GET /items/1".into(),
            ));
        }
        Ok(RequestList {
            source: source.to_string(),
            entries,
            order,
            seed,
        })
    }
}

/// A request line is `METHOD PATH` (or `METHOD URL`); a line with a colon that is not one
/// is a header line.
fn is_request_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (first, second) = (words.next().unwrap_or_default(), words.next());
    !line.contains(':')
        || (!first.contains(':') && second.is_some_and(|w| w.starts_with('/') || w.contains("://")))
}

/// What [`RequestList::parse`] has read so far; each line's method returns what is wrong
/// with the line, for the caller to name its number.
struct ListReader<'f, F> {
    entries: Vec<ListEntry>,
    /// Each body file read once, by the name the list gives it…
    bodies: HashMap<String, Arc<[u8]>>,
    /// …and their total (bytes).
    body_bytes: usize,
    /// The entry being read takes header and body lines until a blank line.
    open: bool,
    read_body: &'f mut F,
}

impl<F: FnMut(&str) -> Result<Vec<u8>, String>> ListReader<'_, F> {
    /// The entry a header or body line belongs to, or `orphan` as the error.
    fn open_entry(&mut self, orphan: impl FnOnce() -> String) -> Result<&mut ListEntry, String> {
        let open = self.open;
        self.entries.last_mut().filter(|_| open).ok_or_else(orphan)
    }

    /// `@FILE`: the open entry's body, each file read once and all bounded together.
    fn body_line(&mut self, name: &str) -> Result<(), String> {
        let entry = self
            .open_entry(|| "a body line (@FILE) must follow a request line (METHOD PATH)".into())?;
        if !entry.body.is_empty() {
            return Err("a request has one body line: remove the second".into());
        }
        let body = match self.bodies.get(name) {
            Some(body) => Arc::clone(body),
            None => self.read_new_body(name)?,
        };
        if let Some(entry) = self.entries.last_mut() {
            entry.body = body;
        }
        Ok(())
    }

    /// Reads body file `name` the first time the list names it, within [`MAX_BODY`] and,
    /// with the others, [`MAX_LIST_BODIES`].
    fn read_new_body(&mut self, name: &str) -> Result<Arc<[u8]>, String> {
        let body = (self.read_body)(name)
            .map_err(|e| format!("cannot read the body file '{name}': {e}"))?;
        if body.len() > MAX_BODY {
            return Err(RequestError::Body(body.len()).to_string());
        }
        self.body_bytes = self.body_bytes.saturating_add(body.len());
        if self.body_bytes > MAX_LIST_BODIES {
            return Err(format!(
                "with '{name}' the list's body files hold {} bytes, more than the {} MiB a list's bodies may hold together: use fewer or smaller body files (a file named again is not counted again)",
                self.body_bytes,
                MAX_LIST_BODIES >> 20
            ));
        }
        Template::parse(&body).map_err(|e| format!("in the body file: {e}"))?;
        let body: Arc<[u8]> = body.into();
        self.bodies.insert(name.to_string(), Arc::clone(&body));
        Ok(body)
    }

    /// `Name: value`: a header of the open entry.
    fn header_line(&mut self, line: &str) -> Result<(), String> {
        let entry = self.open_entry(|| {
            format!("'{line}' looks like a header line, but no request line (METHOD PATH) comes before it")
        })?;
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let (name, value) = (name.trim(), value.trim());
        check_header(name, value).map_err(|e| e.to_string())?;
        Template::parse(value.as_bytes()).map_err(|e| e.to_string())?;
        entry.headers.push((name.to_string(), value.to_string()));
        Ok(())
    }

    /// `METHOD PATH` (or `METHOD URL` of `base`'s origin): a new entry, open.
    fn request_line(
        &mut self,
        line: &str,
        line_no: usize,
        base: Option<&Target>,
    ) -> Result<(), String> {
        if self.entries.len() >= MAX_ENTRIES {
            return Err(format!(
                "a list holds at most {MAX_ENTRIES} requests: split it"
            ));
        }
        let mut words = line.split_whitespace();
        let (method, target) = (words.next().unwrap_or_default(), words.next());
        check_method(method).map_err(|e| e.to_string())?;
        let Some(target) = target else {
            return Err(format!(
                "'{line}' has no path: write it as METHOD PATH, e.g. GET /items/1"
            ));
        };
        if let Some(extra) = words.next() {
            return Err(format!("'{extra}' after the path: write METHOD PATH only (a space in a path is written %20)"));
        }
        let path = path_of(target, base)?;
        Template::parse(path.as_bytes()).map_err(|e| e.to_string())?;
        self.entries.push(ListEntry {
            method: method.to_ascii_uppercase(),
            path,
            headers: Vec::new(),
            body: Arc::default(),
            line: line_no,
        });
        self.open = true;
        Ok(())
    }
}

impl RequestList {
    /// True when the run draws random numbers: a random order or a `{rand:…}` value (the
    /// seed then decides what is sent).
    /// A body shared by many entries is read once.
    pub fn draws(&self) -> bool {
        let rand = |t: &[u8]| {
            Template::parse(t).is_ok_and(|t| t.0.iter().any(|p| matches!(p, Piece::Rand { .. })))
        };
        let mut bodies = std::collections::HashSet::new();
        self.order == Order::Random
            || self.entries.iter().any(|e| {
                rand(e.path.as_bytes())
                    || (bodies.insert(Arc::as_ptr(&e.body).cast::<u8>()) && rand(&e.body))
                    || e.headers.iter().any(|(_, v)| rand(v.as_bytes()))
            })
    }
}

/// The path of a request line's target: a path starting with `/`, or a URL of `base`'s
/// origin (its path and query). No control character; non-ASCII is refused (write it
/// percent-encoded).
fn path_of(target: &str, base: Option<&Target>) -> Result<String, String> {
    if target.chars().any(|c| c.is_control() || !c.is_ascii()) {
        return Err(format!(
            "the path {:?} has a control or non-ASCII character: percent-encode it (%0A, %C3%A4)",
            target
        ));
    }
    if target.starts_with('/') {
        return Ok(target.to_string());
    }
    if !target.contains("://") {
        return Err(format!(
            "'{target}' is not a path: write it starting with /, e.g. /items/1"
        ));
    }
    // A URL: same scheme, host and port as the run's, or it is another origin. Its path
    // is taken as written (the URL parser would percent-encode the braces of templates).
    let Some(base) = base else {
        return Err(format!(
            "'{target}' is a URL: in a plan each contender has its own origin, so write the path only (e.g. /items/1)"
        ));
    };
    let other = Target::parse(target).map_err(|e| e.to_string())?;
    if (other.scheme, other.host.as_str(), other.port)
        != (base.scheme, base.host.as_str(), base.port)
    {
        return Err(format!(
            "'{target}' is not on {}: a list is for one origin; write paths (/items/1) or URLs of that origin",
            base.url
        ));
    }
    let after_scheme = &target[target.find("://").map_or(0, |i| i + 3)..];
    Ok(after_scheme
        .find('/')
        .map_or_else(|| "/".to_string(), |i| after_scheme[i..].to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Target {
        Target::parse("http://127.0.0.1:8080/").unwrap()
    }

    fn parse(text: &str) -> Result<RequestList, ListError> {
        RequestList::parse(
            "list.txt",
            text,
            Some(&base()),
            Order::Seq,
            1,
            |f| match f {
                "body.json" => Ok(b"{\"id\": {seq}}".to_vec()),
                "bad.json" => Ok(b"{rand:9-1}".to_vec()),
                _ => Err("No such file".into()),
            },
        )
    }

    #[test]
    fn entries_headers_and_bodies() {
        let l = parse(
            "# reads\nGET /items/{rand:1-1000}\nX-Trace: {seq}\n\nPOST http://127.0.0.1:8080/items?a=1\nContent-Type: application/json\n@body.json\nHEAD /\n",
        )
        .unwrap();
        let got: Vec<_> = l
            .entries
            .iter()
            .map(|e| (e.label(), e.line, e.headers.len(), e.body.len()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("GET /items/{rand:1-1000}".to_string(), 2, 1, 0),
                ("POST /items?a=1".to_string(), 5, 1, 13),
                ("HEAD /".to_string(), 8, 0, 0),
            ]
        );
    }

    /// Every field is checked as `-m` and `-H` check theirs, and the error names the line.
    #[test]
    fn each_bad_line_is_named_with_its_fix() {
        for (text, want) in [
            ("GET /a\nX Bad: 1\n", "list.txt:2: header name 'X Bad'"),
            (
                "GET /a\nContent-Length: 3\n",
                "list.txt:2: header 'Content-Length' is set by shootout",
            ),
            ("G(T /a\n", "list.txt:1: method 'G(T'"),
            ("GET\n", "list.txt:1: 'GET' has no path"),
            ("GET /a HTTP/1.1\n", "list.txt:1: 'HTTP/1.1' after the path"),
            ("GET a\n", "list.txt:1: 'a' is not a path"),
            (
                "GET http://127.0.0.1:9/a\n",
                "list.txt:1: 'http://127.0.0.1:9/a' is not on",
            ),
            ("X-A: 1\n", "list.txt:1: 'X-A: 1' looks like a header line"),
            (
                "GET /a\n\nX-A: 1\n",
                "list.txt:3: 'X-A: 1' looks like a header",
            ),
            ("@body.json\n", "list.txt:1: a body line"),
            (
                "POST /a\n@nope\n",
                "list.txt:2: cannot read the body file 'nope': No such file",
            ),
            (
                "POST /a\n@bad.json\n",
                "list.txt:2: in the body file: '{rand:9-1}' is not a template",
            ),
            (
                "GET /a/{rand:x}\n",
                "list.txt:1: '{rand:x}' is not a template",
            ),
            ("GET /a\u{7f}\n", "list.txt:1: the path"),
            ("# nothing\n\n", "list.txt:0: no request in the list"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    /// A 1 KB list naming one 16 MiB body file 64 times reached 2 GB: each file named
    /// is read once, and its entries share the bytes.
    #[test]
    fn a_body_file_named_64_times_is_read_once_and_shared() {
        let mut reads = 0;
        let l = RequestList::parse(
            "list.txt",
            &"POST /upload\n@big.bin\n\n".repeat(64),
            None,
            Order::Seq,
            1,
            |_| {
                reads += 1;
                Ok(vec![b'x'; 16 << 20])
            },
        )
        .unwrap();
        assert_eq!(reads, 1);
        assert_eq!(l.entries.len(), 64);
        assert!(l
            .entries
            .iter()
            .all(|e| Arc::ptr_eq(&e.body, &l.entries[0].body)));
    }

    /// The body files of a list hold at most `MAX_LIST_BODIES` together, each counted
    /// once.
    #[test]
    fn body_files_past_their_total_are_refused() {
        // Five files of 64 MiB, each named twice: the fifth passes 256 MiB.
        let text: String = (0..5)
            .map(|i| format!("POST /{i}\n@body-{i}\n\nPUT /{i}\n@body-{i}\n\n"))
            .collect();
        let e = RequestList::parse("list.txt", &text, None, Order::Seq, 1, |_| {
            Ok(vec![0; MAX_BODY])
        })
        .unwrap_err();
        assert_eq!(e.line, 26, "{e}");
        assert!(
            e.to_string().starts_with(&format!(
                "list.txt:26: with 'body-4' the list's body files hold {} bytes, more than the 256 MiB",
                5 * MAX_BODY
            )),
            "{e}"
        );
    }

    #[test]
    fn templates_split_into_pieces_and_other_braces_are_text() {
        let t = Template::parse(b"/a/{seq}/{rand:5-7}?{x}").unwrap();
        assert_eq!(
            t.0,
            vec![
                Piece::Text(b"/a/".to_vec()),
                Piece::Seq,
                Piece::Text(b"/".to_vec()),
                Piece::Rand { lo: 5, hi: 7 },
                Piece::Text(b"?{x}".to_vec()),
            ]
        );
        assert!(t.is_templated());
        assert!(!Template::parse(b"{\"a\": 1}").unwrap().is_templated());
        for bad in [
            "{rand:}",
            "{rand:1-}",
            "{rand:3-2}",
            "{rand:1-2",
            "{rand:-1-2}",
        ] {
            assert!(Template::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
