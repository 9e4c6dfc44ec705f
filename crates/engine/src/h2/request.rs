//! The HTTP/2 request, prepared once: its header fields HPACK-encoded up front into three
//! blocks, and its body. Every stream of every connection sends one of the blocks as it is.
//!
//! The encoding is the few lines HPACK needs for a header list sent over and over (RFC 7541
//! §6.1, §6.2.1, §6.2.2), written here because no encoder crate offers "the same list on
//! every stream" as a reusable byte string: the first stream on a connection sends each
//! field as a literal with incremental indexing, which puts the list into the server's
//! dynamic table; every later stream sends one index byte per field. A server whose table
//! is too small for the list (its `SETTINGS_HEADER_TABLE_SIZE`) gets literals that are
//! never indexed. Decoding the server's answers is [`super::hpack`]'s; the tests decode our
//! blocks with another implementation, `loona-hpack`.

use crate::h1::request::HeaderError;
use shootout_model::{RequestSpec, Target};

/// The request as every stream sends it.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The header list as literals with incremental indexing (the first stream on a
    /// connection).
    pub first: Vec<u8>,
    /// The header list as indices into the dynamic table the first block filled.
    pub indexed: Vec<u8>,
    /// The header list as literals never added to a table.
    pub plain: Vec<u8>,
    /// Bytes of dynamic table the `first` block fills (RFC 7541 §4.1: name + value + 32
    /// per field).
    pub table_size: usize,
    /// The body (empty: the HEADERS frame ends the stream).
    pub body: Vec<u8>,
    /// The request is a HEAD: answers have no body whatever their content-length says.
    pub head_request: bool,
    /// The header list as text, for `-v 2`: `GET /path HTTP/2`, then `name: value` lines
    /// (the other pseudo-headers first) and a blank line, as curl shows an HTTP/2 request.
    pub text: Vec<u8>,
}

/// Header fields HTTP/2 forbids (RFC 9113 §8.2.2): the connection's own, which it frames.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "upgrade",
    "transfer-encoding",
];

/// The header list of `req` to `target`, HPACK-encoded three ways. Checks the request as
/// the HTTP/1.1 builder does, and refuses the connection-specific fields HTTP/2 forbids.
pub fn prepare(target: &Target, req: &RequestSpec) -> Result<Prepared, HeaderError> {
    check(target, req)?;
    let fields = fields(target, req);
    let (mut first, mut indexed, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    let mut table_size = 0;
    for (i, (n, v)) in fields.iter().enumerate() {
        literal(&mut first, 0x40, 6, n, v);
        literal(&mut plain, 0x00, 4, n, v);
        // The dynamic table's newest entry has index 62; the first field is the oldest.
        int(&mut indexed, 62 + fields.len() - 1 - i, 7, 0x80);
        table_size += n.len() + v.len() + 32;
    }
    let mut text = format!("{} {} HTTP/2\r\n", req.method, target.path).into_bytes();
    for (n, v) in fields
        .iter()
        .filter(|(n, _)| n != ":method" && n != ":path")
    {
        text.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    text.extend_from_slice(b"\r\n");
    Ok(Prepared {
        first,
        indexed,
        plain,
        table_size,
        body: req.body.clone(),
        head_request: req.method.eq_ignore_ascii_case("HEAD"),
        text,
    })
}

/// The request as the HTTP/1.1 builder checks it, and none of the connection-specific
/// fields HTTP/2 forbids (RFC 9113 §8.2.2).
fn check(target: &Target, req: &RequestSpec) -> Result<(), HeaderError> {
    req.validate().map_err(|e| HeaderError(e.to_string()))?;
    if target.path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(HeaderError(format!(
            "the path {:?} has a space or a control character",
            target.path
        )));
    }
    for (n, v) in &req.headers {
        let lower = n.to_ascii_lowercase();
        if CONNECTION_SPECIFIC.contains(&lower.as_str())
            || (lower == "te" && !v.trim().eq_ignore_ascii_case("trailers"))
        {
            return Err(HeaderError(format!(
                "header '{n}' belongs to HTTP/1.1 connections and HTTP/2 forbids it (RFC 9113 §8.2.2): remove it"
            )));
        }
    }
    Ok(())
}

/// The header list, in order: the pseudo-headers (`:authority` from a `Host` header when
/// given), a default `user-agent` and `accept` unless given, the user's fields (lower
/// case, `Host` left out), and `content-length` for a body or a method that carries one.
fn fields(target: &Target, req: &RequestSpec) -> Vec<(String, String)> {
    let user = |name: &str| {
        req.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    // A WebSocket URL never reaches HTTP/2 (the spec's rules); its TLS says which.
    let scheme = if target.scheme.tls() { "https" } else { "http" };
    let mut fields: Vec<(String, String)> = vec![
        (":method".into(), req.method.clone()),
        (":scheme".into(), scheme.into()),
        (
            ":authority".into(),
            user("host").unwrap_or(&target.host_header).to_string(),
        ),
        (":path".into(), target.path.clone()),
    ];
    if user("user-agent").is_none() {
        fields.push((
            "user-agent".into(),
            concat!("shootout/", env!("CARGO_PKG_VERSION")).into(),
        ));
    }
    if user("accept").is_none() {
        fields.push(("accept".into(), "*/*".into()));
    }
    for (n, v) in &req.headers {
        if !n.eq_ignore_ascii_case("host") {
            fields.push((n.to_ascii_lowercase(), v.clone()));
        }
    }
    if !req.body.is_empty() || matches!(req.method.as_str(), "POST" | "PUT" | "PATCH") {
        fields.push(("content-length".into(), req.body.len().to_string()));
    }
    fields
}

/// A literal field with a literal name (RFC 7541 §6.2): the representation's pattern and
/// prefix, then name and value as plain (not Huffman-coded) strings.
fn literal(out: &mut Vec<u8>, pattern: u8, prefix: u8, name: &str, value: &str) {
    int(out, 0, prefix, pattern);
    for s in [name, value] {
        int(out, s.len(), 7, 0);
        out.extend_from_slice(s.as_bytes());
    }
}

/// An integer with an N-bit prefix (RFC 7541 §5.1), the bits above the prefix set to
/// `bits`' (the representation's pattern).
fn int(out: &mut Vec<u8>, value: usize, prefix: u8, bits: u8) {
    let max = (1usize << prefix) - 1;
    let bits = bits & !(max as u8);
    if value < max {
        out.push(bits | value as u8);
        return;
    }
    out.push(bits | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128 + 128) as u8);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A dynamic table size update to `size` (RFC 7541 §6.3), for a server that shrank its
/// table below what the indexed block relies on.
pub fn table_size_update(out: &mut Vec<u8>, size: usize) {
    int(out, size, 5, 0x20);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(blocks: &[&[u8]]) -> Vec<Vec<(String, String)>> {
        let mut d = loona_hpack::Decoder::new();
        blocks
            .iter()
            .map(|b| {
                d.decode(b)
                    .unwrap()
                    .into_iter()
                    .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_block_decodes_to_the_same_list() {
        let t = Target::parse("http://127.0.0.1:8080/a?b=1").unwrap();
        let req = RequestSpec {
            method: "POST".into(),
            headers: vec![
                ("X-Id".into(), "7".into()),
                ("Host".into(), "h.test".into()),
                ("X-Long".into(), "v".repeat(300)),
            ],
            body: b"abc".to_vec(),
            keepalive: true,
        };
        let p = prepare(&t, &req).unwrap();
        let lists = decode(&[&p.first, &p.indexed, &p.indexed, &p.plain]);
        let want: Vec<(String, String)> = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", "h.test"),
            (":path", "/a?b=1"),
            (
                "user-agent",
                concat!("shootout/", env!("CARGO_PKG_VERSION")),
            ),
            ("accept", "*/*"),
            ("x-id", "7"),
            ("x-long", &"v".repeat(300)),
            ("content-length", "3"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        for l in &lists {
            assert_eq!(l, &want);
        }
        assert_eq!(p.indexed.len(), want.len(), "one byte per field");
        let size: usize = want.iter().map(|(n, v)| n.len() + v.len() + 32).sum();
        assert_eq!(p.table_size, size);
    }

    #[test]
    fn connection_specific_headers_are_refused() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        for (n, v) in [("Connection", "close"), ("Upgrade", "h2c"), ("TE", "gzip")] {
            let req = RequestSpec {
                headers: vec![(n.into(), v.into())],
                ..Default::default()
            };
            let e = prepare(&t, &req).unwrap_err();
            assert!(e.to_string().contains("HTTP/2 forbids"), "{e}");
        }
        let te = RequestSpec {
            headers: vec![("TE".into(), "trailers".into())],
            ..Default::default()
        };
        assert!(prepare(&t, &te).is_ok());
    }
}
