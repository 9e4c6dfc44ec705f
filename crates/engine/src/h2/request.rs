//! HTTP/2's wire form of the run's request ([`crate::request`]), prepared once: its field
//! section HPACK-encoded up front into three blocks, and its body. Every stream of every
//! connection sends one of the blocks as it is.
//!
//! The encoding is the few lines HPACK needs for a header list sent over and over (RFC 7541
//! §6.1, §6.2.1, §6.2.2), written here because no encoder crate offers "the same list on
//! every stream" as a reusable byte string: the first stream on a connection sends each
//! field as a literal with incremental indexing, which puts the list into the server's
//! dynamic table; every later stream sends one index byte per field. A server whose table
//! is too small for the list (its `SETTINGS_HEADER_TABLE_SIZE`) gets literals that are
//! never indexed. Decoding the server's answers is [`super::hpack`]'s; the tests decode our
//! blocks with another implementation, `loona-hpack`.

use crate::codec::prefix::{encode_int, encode_string};
use crate::fields;
use crate::request::{HeaderError, Request};
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
    /// The request is a gRPC call: its answers are checked as gRPC replies.
    pub grpc: Option<crate::h2::grpc::Reply>,
    /// A gRPC call's messages from a list: each stream sends its own
    /// ([`super::conn::Connection::staged`]) instead of `body`.
    pub messages: Option<crate::h2::grpc::Messages>,
    /// Each stream sends the body staged for it ([`super::conn::Connection::staged`]),
    /// not `body`: a journey's steps, each with its own.
    pub own_bodies: bool,
}

impl Prepared {
    /// Each stream sends its own body (a gRPC list's messages, a journey's steps).
    pub fn varies(&self) -> bool {
        self.messages.is_some() || self.own_bodies
    }
}

/// The field section of `r` ([`fields::section`]), HPACK-encoded three ways. Refuses the
/// connection-specific fields HTTP/2 forbids.
pub fn prepare(r: &Request) -> Result<Prepared, HeaderError> {
    fields::refuse_connection_fields(r, "HTTP/2", "RFC 9113 §8.2.2")?;
    let section = fields::section(r);
    let (mut first, mut indexed, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    let mut table_size = 0;
    for (i, (n, v)) in section.iter().enumerate() {
        literal(&mut first, 0x40, 6, n.as_bytes(), v.as_bytes());
        literal(&mut plain, 0x00, 4, n.as_bytes(), v.as_bytes());
        // The dynamic table's newest entry has index 62; the first field is the oldest.
        encode_int(&mut indexed, 62 + section.len() - 1 - i, 7, 0x80);
        table_size += n.len() + v.len() + 32;
    }
    Ok(Prepared {
        first,
        indexed,
        plain,
        table_size,
        body: r.body.to_vec(),
        head_request: r.head(),
        text: fields::request_text(&section, "HTTP/2"),
        grpc: None,
        messages: None,
        own_bodies: false,
    })
}

/// The request of `req` to `target` alone, prepared (tests and fuzz targets that drive
/// one connection without a run).
pub fn prepare_one(target: &Target, req: &RequestSpec) -> Result<Prepared, HeaderError> {
    prepare(&Request::single(target, req)?)
}

/// A literal field with a literal name (RFC 7541 §6.2): the representation's pattern and
/// prefix, then name and value as plain (not Huffman-coded) strings.
pub(crate) fn literal(out: &mut Vec<u8>, pattern: u8, prefix: u32, name: &[u8], value: &[u8]) {
    encode_int(out, 0, prefix, pattern);
    for s in [name, value] {
        encode_string(out, s, 7, 0);
    }
}

/// A dynamic table size update to `size` (RFC 7541 §6.3), for a server that shrank its
/// table below what the indexed block relies on.
pub fn table_size_update(out: &mut Vec<u8>, size: usize) {
    encode_int(out, size, 5, 0x20);
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
        let p = prepare_one(&t, &req).unwrap();
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

    /// Regression: a gRPC call went out with `user-agent: shootout/…`, `accept: */*` and a
    /// `content-length`, which no gRPC client sends.
    #[test]
    fn a_grpc_call_carries_grpc_s_fields_and_nothing_else() {
        let t = Target::parse("http://127.0.0.1:50051/helloworld.Greeter/SayHello").unwrap();
        let mut spec = shootout_model::LoadSpec::new(t);
        spec.request = RequestSpec {
            method: "POST".into(),
            headers: vec![
                ("content-type".into(), "application/grpc".into()),
                ("te".into(), "trailers".into()),
                ("grpc-timeout".into(), "30000m".into()),
            ],
            body: vec![0, 0, 0, 0, 0],
            keepalive: true,
        };
        spec.expect.grpc = Some(shootout_model::GrpcReply {
            schema: std::sync::Arc::from(&b""[..]),
            method: "helloworld.Greeter.SayHello".into(),
            max_message: 1024,
            json: None,
            stream: Default::default(),
            compress: false,
        });
        let reqs = crate::request::Requests::prepare(&spec).unwrap();
        let p = prepare(&reqs.kinds[0]).unwrap();
        let want: Vec<(String, String)> = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", "127.0.0.1:50051"),
            (":path", "/helloworld.Greeter/SayHello"),
            (
                "user-agent",
                concat!("grpc-shootout/", env!("CARGO_PKG_VERSION")),
            ),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("grpc-timeout", "30000m"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        assert_eq!(decode(&[&p.first])[0], want);
        // A user's own agent replaces ours, as over HTTP.
        spec.request
            .headers
            .push(("User-Agent".into(), "grpc-go/1.60".into()));
        let reqs = crate::request::Requests::prepare(&spec).unwrap();
        let list = decode(&[&prepare(&reqs.kinds[0]).unwrap().first]).remove(0);
        let agents: Vec<&str> = list
            .iter()
            .filter(|(n, _)| n == "user-agent")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(agents, ["grpc-go/1.60"]);
    }

    #[test]
    fn connection_specific_headers_are_refused() {
        let t = Target::parse("http://127.0.0.1:8080/").unwrap();
        for (n, v) in [("Connection", "close"), ("Upgrade", "h2c"), ("TE", "gzip")] {
            let req = RequestSpec {
                headers: vec![(n.into(), v.into())],
                ..Default::default()
            };
            let e = prepare_one(&t, &req).unwrap_err();
            assert!(e.to_string().contains("HTTP/2 forbids"), "{e}");
        }
        let te = RequestSpec {
            headers: vec![("TE".into(), "trailers".into())],
            ..Default::default()
        };
        assert!(prepare_one(&t, &te).is_ok());
    }
}
