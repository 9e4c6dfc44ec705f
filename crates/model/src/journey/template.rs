//! A journey's templates: text with `{name}` (a data column or a capture), `{seq}`,
//! `{user}`, `{rand:LO-HI}`, `{rand_text:N}` and `{rand}` / `{rand_text}` (the value this
//! user drew last). `{{` and `}}` are literal braces; a `{` that does not open one of
//! these (`{"a": 1}` in a body) is literal too, so JSON bodies need no escaping.
//!
//! Parsing only splits the text and checks each placeholder's own syntax; which names
//! exist is the journey reader's to check, since it depends on the step's place.

use std::fmt;

/// The longest `{rand_text:N}`: 16 MiB (a request body is at most 64 MiB).
pub const MAX_RAND_TEXT: usize = 16 << 20;

/// How a drawn value is written where it lands. Literal text is written as given (it was
/// encoded when the file was read); only drawn values are encoded as they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// As drawn (a raw body).
    Raw,
    /// In a request target: bytes that may not appear there (controls, space, non-ASCII,
    /// `"#<>\^`{|}`) percent-encoded; `/ ? & = %` kept, so a captured path can be followed.
    Path,
    /// In a header value: a value with CR, LF or NUL is refused (a failure of the step).
    Header,
    /// In an `application/x-www-form-urlencoded` body: all but `A-Za-z0-9*-._` encoded,
    /// space as `+`.
    Form,
    /// Inside a JSON string: `"`, `\` and control characters escaped.
    Json,
}

/// Where a placeholder's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A named variable (a data column or a capture); the reader resolves it to a slot.
    Named(String),
    /// The user's running count of requests (unique per run).
    Seq,
    /// The user's number.
    User,
    /// A fresh integer in `lo..=hi`.
    Rand {
        /// Lowest value.
        lo: u64,
        /// Highest value.
        hi: u64,
    },
    /// The integer this user drew last with `{rand:LO-HI}`.
    RandLast,
    /// Fresh random text of this many bytes (`a-z0-9`).
    RandText(usize),
    /// The text this user drew last with `{rand_text:N}`.
    RandTextLast,
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal bytes, already encoded for their place.
    Lit(String),
    /// A value drawn when the request is made, encoded as said. A named source holds its
    /// slot in the journey's variables once the reader resolved it.
    Var(Source, Encoding, usize),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template {
    /// Its pieces, in order.
    pub pieces: Vec<Piece>,
}

/// A placeholder that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Template {
    /// A template of literal text only.
    pub fn literal(text: &str) -> Template {
        let mut t = Template::default();
        t.push_lit(text);
        t
    }

    /// True when nothing is drawn: the text is the same for every request.
    pub fn is_literal(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Lit(_)))
    }

    /// The literal text, when [`Template::is_literal`].
    pub fn as_literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => out.push_str(s),
                Piece::Var(..) => return None,
            }
        }
        Some(out)
    }

    /// Appends literal text, merged with a literal before it.
    pub fn push_lit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Piece::Lit(s)) = self.pieces.last_mut() {
            s.push_str(text);
        } else {
            self.pieces.push(Piece::Lit(text.to_string()));
        }
    }

    /// Appends another template's pieces.
    pub fn extend(&mut self, other: Template) {
        for p in other.pieces {
            match p {
                Piece::Lit(s) => self.push_lit(&s),
                v => self.pieces.push(v),
            }
        }
    }

    /// Parses `text`, its drawn values to be written with `enc`; `lit` encodes the literal
    /// parts (identity for most places).
    pub fn parse(
        text: &str,
        enc: Encoding,
        lit: &dyn Fn(&str) -> String,
    ) -> Result<Template, TemplateError> {
        let mut t = Template::default();
        let mut plain = String::new();
        let mut rest = text;
        while let Some(i) = rest.find(['{', '}']) {
            plain.push_str(&rest[..i]);
            let tail = &rest[i..];
            if tail.starts_with("{{") || tail.starts_with("}}") {
                plain.push_str(&tail[..1]);
                rest = &tail[2..];
                continue;
            }
            if let Some(after) = tail.strip_prefix('}') {
                plain.push('}');
                rest = after;
                continue;
            }
            match placeholder(tail)? {
                Some((source, len)) => {
                    t.push_lit(&lit(&plain));
                    plain.clear();
                    t.pieces.push(Piece::Var(source, enc, usize::MAX));
                    rest = &tail[len..];
                }
                None => {
                    plain.push('{');
                    rest = &tail[1..];
                }
            }
        }
        plain.push_str(rest);
        t.push_lit(&lit(&plain));
        Ok(t)
    }
}

/// The placeholder at the start of `s` (which starts with `{`) and its length, or `None`
/// when the brace opens no placeholder (it is then literal).
/// A variable's name: letters, digits, `_`, `-` and `.`, starting with a letter or `_`.
pub fn is_variable_name(name: &str) -> bool {
    name.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

fn placeholder(s: &str) -> Result<Option<(Source, usize)>, TemplateError> {
    let Some(end) = s[1..].find(['}', '{', '\n']).map(|e| e + 1) else {
        return Ok(None);
    };
    if !s[end..].starts_with('}') {
        return Ok(None);
    }
    let inner = &s[1..end];
    let (name, arg) = match inner.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (inner, None),
    };
    if !is_variable_name(name) {
        return Ok(None);
    }
    let source = match (name, arg) {
        ("seq", None) => Source::Seq,
        ("user", None) => Source::User,
        ("rand", None) => Source::RandLast,
        ("rand_text", None) => Source::RandTextLast,
        ("rand", Some(a)) => {
            let bad = || {
                TemplateError(format!(
                    "{{rand:{a}}} is not a range: write {{rand:LO-HI}} with LO <= HI, e.g. {{rand:1-1000}}"
                ))
            };
            let (lo, hi) = a.split_once('-').ok_or_else(bad)?;
            let lo: u64 = lo.trim().parse().map_err(|_| bad())?;
            let hi: u64 = hi.trim().parse().map_err(|_| bad())?;
            if lo > hi {
                return Err(bad());
            }
            Source::Rand { lo, hi }
        }
        ("rand_text", Some(a)) => match a.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_RAND_TEXT).contains(&n) => Source::RandText(n),
            _ => {
                return Err(TemplateError(format!(
                    "{{rand_text:{a}}}: write a length from 1 to {MAX_RAND_TEXT} bytes, e.g. {{rand_text:100}}"
                )))
            }
        },
        (n, Some(a)) => {
            return Err(TemplateError(format!(
                "{{{n}:{a}}}: only rand and rand_text take an argument; a variable is written {{{n}}}"
            )))
        }
        (n, None) => Source::Named(n.to_string()),
    };
    Ok(Some((source, end + 1)))
}

/// Percent-encodes a form field's text (`application/x-www-form-urlencoded`).
pub fn form_encode(text: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in text {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(b),
            b' ' => out.push(b'+'),
            _ => out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]),
        }
    }
}

/// Whether a byte must be percent-encoded in a request target ([`Encoding::Path`]).
pub fn path_escaped(b: u8) -> bool {
    b <= b' ' || b >= 0x7f || b"\"#<>\\^`{|}".contains(&b)
}

/// Percent-encodes what may not appear in a request target.
pub fn path_encode(text: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in text {
        if path_escaped(b) {
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.push(b);
        }
    }
}

/// Escapes text for the inside of a JSON string.
pub fn json_escape(text: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in text {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1f => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ]),
            _ => out.push(b),
        }
    }
}

/// Writes `text` encoded for `enc`; `Err(())` when a header value would carry CR, LF or
/// NUL (the request is not sent).
#[allow(clippy::result_unit_err)]
pub fn encode(text: &[u8], enc: Encoding, out: &mut Vec<u8>) -> Result<(), ()> {
    match enc {
        Encoding::Raw => out.extend_from_slice(text),
        Encoding::Path => path_encode(text, out),
        Encoding::Header => {
            if text.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(());
            }
            out.extend_from_slice(text)
        }
        Encoding::Form => form_encode(text, out),
        Encoding::Json => json_escape(text, out),
    }
    Ok(())
}

/// `text` encoded for `enc` as a string, for literal parts (which have no CR, LF or NUL
/// where that matters: the reader checked them).
pub fn encoded(text: &str, enc: Encoding) -> String {
    let mut out = Vec::with_capacity(text.len());
    let _ = encode(text.as_bytes(), enc, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Result<Template, TemplateError> {
        Template::parse(text, Encoding::Raw, &|s| s.to_string())
    }

    #[test]
    fn placeholders_and_literal_braces() {
        let t = raw("/a/{id}?n={seq}&r={rand:1-9}&{{x}}&{\"k\":1}").unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Lit("/a/".into()),
                Piece::Var(Source::Named("id".into()), Encoding::Raw, usize::MAX),
                Piece::Lit("?n=".into()),
                Piece::Var(Source::Seq, Encoding::Raw, usize::MAX),
                Piece::Lit("&r=".into()),
                Piece::Var(Source::Rand { lo: 1, hi: 9 }, Encoding::Raw, usize::MAX),
                Piece::Lit("&{x}&{\"k\":1}".into()),
            ]
        );
        let t = raw("{rand_text:12}{rand_text}{rand}{user}").unwrap();
        assert_eq!(t.pieces.len(), 4);
        assert!(raw("plain }").unwrap().is_literal());
        assert_eq!(raw("a}}b{{").unwrap().as_literal().unwrap(), "a}b{");
    }

    #[test]
    fn bad_arguments_name_the_fix() {
        assert!(raw("{rand:9-1}").unwrap_err().0.contains("LO <= HI"));
        assert!(raw("{rand:x}").is_err());
        assert!(raw("{rand_text:0}").unwrap_err().0.contains("length"));
        assert!(raw("{id:3}").unwrap_err().0.contains("written {id}"));
    }

    #[test]
    fn encodings() {
        let mut out = Vec::new();
        path_encode(b"a b/\r\n#?x=%", &mut out);
        assert_eq!(out, b"a%20b/%0D%0A%23?x=%");
        out.clear();
        form_encode(b"a b&c=d/\xc3\xa9", &mut out);
        assert_eq!(out, b"a+b%26c%3Dd%2F%C3%A9");
        out.clear();
        json_escape(b"\"a\\\n\x01", &mut out);
        assert_eq!(out, b"\\\"a\\\\\\n\\u0001");
        out.clear();
        assert!(encode(b"a\rb", Encoding::Header, &mut out).is_err());
        assert!(encode(b"a\0b", Encoding::Header, &mut out).is_err());
        assert!(encode(b"a\tb", Encoding::Header, &mut out).is_ok());
    }
}
