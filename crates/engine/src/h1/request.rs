//! The requests of a run, prepared once: a request (or each entry of a request list)
//! without templated values becomes the bytes every connection of every worker sends; one
//! with `{seq}` or `{rand:LO-HI}` keeps its pieces, and [`Requests::render`] appends a
//! request's bytes to a connection's output buffer with fresh values, allocating nothing.
//! [`Gen`](crate::template::Gen) picks each request's entry (in order or at random,
//! seeded) per worker.

use crate::template::{decimal, fill, Gen};
use shootout_model::requests::{Order, Template};
use shootout_model::spec::{check_header, check_method};
use shootout_model::{LoadSpec, RequestSpec, Target};
use std::collections::HashMap;
use std::sync::Arc;

/// A request that cannot be sent as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct HeaderError(pub String);

/// Builds the bytes of an HTTP/1.1 request. Headers the user gave replace ours of the same
/// name (Host, User-Agent, Accept); the framing (Content-Length) is always ours, from the
/// body. The request is checked again here ([`RequestSpec::validate`]: method and header
/// names are tokens, no CR/LF/NUL in a value, no user framing header), so nothing built
/// here can carry an injected header.
#[cfg(test)]
pub fn build(target: &Target, req: &RequestSpec) -> Result<Vec<u8>, HeaderError> {
    let (head, length) = head(target, &req.method, &target.path, &req.headers, req)?;
    let mut out = head.into_bytes();
    if length || !req.body.is_empty() {
        out.extend_from_slice(format!("Content-Length: {}\r\n", req.body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&req.body);
    Ok(out)
}

/// The request line and headers of a request (each line ending in CRLF, without the
/// Content-Length line and the blank line), and whether it carries a Content-Length.
/// `headers` are `req`'s (the run's) followed by a list entry's, which replace the run's
/// of the same name.
fn head(
    target: &Target,
    method: &str,
    path: &str,
    extra: &[(String, String)],
    req: &RequestSpec,
) -> Result<(String, bool), HeaderError> {
    req.validate().map_err(|e| HeaderError(e.to_string()))?;
    for (n, v) in extra {
        check_header(n, v).map_err(|e| HeaderError(e.to_string()))?;
    }
    check_method(method).map_err(|e| HeaderError(e.to_string()))?;
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(HeaderError(format!(
            "the path {path:?} has a space or a control character"
        )));
    }
    let headers: Vec<&(String, String)> = req
        .headers
        .iter()
        .filter(|(n, _)| !extra.iter().any(|(e, _)| e.eq_ignore_ascii_case(n)))
        .chain(extra)
        .collect();
    let user_has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut out = format!("{method} {path} HTTP/1.1\r\n");
    let mut line = |name: &str, value: &str| {
        for part in [name, ": ", value, "\r\n"] {
            out.push_str(part);
        }
    };
    if !user_has("host") {
        line("Host", &target.host_header);
    }
    if !user_has("user-agent") {
        line(
            "User-Agent",
            concat!("shootout/", env!("CARGO_PKG_VERSION")),
        );
    }
    if !user_has("accept") {
        line("Accept", "*/*");
    }
    if !req.keepalive && !user_has("connection") {
        line("Connection", "close");
    }
    for (n, v) in headers {
        line(n, v);
    }
    Ok((out, matches!(method, "POST" | "PUT" | "PATCH")))
}

/// One kind of request a run sends: the single request of a run, or one entry of a list.
#[derive(Debug)]
pub struct Kind {
    /// Its method is HEAD (answers have no body).
    pub head: bool,
    /// Its method is idempotent (RFC 9110 §9.2.2), so a request lost to a server closing
    /// an idle connection may be sent again.
    pub idempotent: bool,
    wire: Wire,
}

/// The bytes of a kind: built once, or rendered per request from templates. A body is
/// shared by every kind whose list entries share it (one body file named by many
/// entries is held once).
#[derive(Debug)]
enum Wire {
    Fixed {
        /// Request line, headers and the blank line.
        head: Vec<u8>,
        body: Arc<[u8]>,
    },
    Templated {
        /// Request line and headers.
        head: Template,
        body: Arc<Template>,
        /// Send a Content-Length (a body, or a method that needs one).
        length: bool,
    },
}

/// Every kind of request of a run, prepared once.
#[derive(Debug)]
pub struct Requests {
    /// The kinds, in list order (one when the run has no list).
    pub kinds: Vec<Kind>,
    /// Entries are picked at random…
    pub random: bool,
    /// …seeded by this (and `{rand:…}` values too).
    pub seed: u64,
}

impl Requests {
    /// Prepares the request of `spec`, or each entry of its list. Kinds without a template
    /// are built into their bytes here, once.
    pub fn prepare(spec: &LoadSpec) -> Result<Requests, HeaderError> {
        let req = &spec.request;
        // A body's template, parsed once per shared body (keyed by its address, which
        // the Arc keeps alive for as long as the map).
        let mut templates: HashMap<*const u8, (Arc<[u8]>, Arc<Template>)> = HashMap::new();
        // Only a list's entries hold templates: the run's own request is sent as given.
        let mut one = |method: &str,
                       path: &str,
                       extra: &[(String, String)],
                       body: &Arc<[u8]>,
                       templates_on: bool| {
            let (head, length) = head(&spec.target, method, path, extra, req)?;
            let length = length || !body.is_empty();
            let t = |b: &[u8]| Template::parse(b).map_err(|e| HeaderError(e.to_string()));
            let (head_t, body_t) = if templates_on {
                let body_t = match templates.get(&Arc::as_ptr(body).cast::<u8>()) {
                    Some((_, parsed)) => Arc::clone(parsed),
                    None => {
                        let parsed = Arc::new(t(body)?);
                        templates.insert(
                            Arc::as_ptr(body).cast::<u8>(),
                            (Arc::clone(body), Arc::clone(&parsed)),
                        );
                        parsed
                    }
                };
                (t(head.as_bytes())?, body_t)
            } else {
                Default::default()
            };
            let wire = if head_t.is_templated() || body_t.is_templated() {
                Wire::Templated {
                    head: head_t,
                    body: body_t,
                    length,
                }
            } else {
                let mut out = head.into_bytes();
                if length {
                    out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
                }
                out.extend_from_slice(b"\r\n");
                Wire::Fixed {
                    head: out,
                    body: Arc::clone(body),
                }
            };
            Ok(Kind {
                head: method.eq_ignore_ascii_case("HEAD"),
                idempotent: ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]
                    .iter()
                    .any(|m| method.eq_ignore_ascii_case(m)),
                wire,
            })
        };
        match &spec.list {
            None => Ok(Requests {
                kinds: vec![one(
                    &req.method,
                    &spec.target.path,
                    &[],
                    &Arc::from(&req.body[..]),
                    false,
                )?],
                random: false,
                seed: 0,
            }),
            Some(list) => Ok(Requests {
                kinds: list
                    .entries
                    .iter()
                    .map(|e| one(&e.method, &e.path, &e.headers, &e.body, true))
                    .collect::<Result<_, _>>()?,
                random: list.order == Order::Random,
                seed: list.seed,
            }),
        }
    }

    /// Appends the bytes of one request of `kind` to `out`, drawing its templated values
    /// from `gen`; `scratch` holds a templated body while its length is taken. Neither
    /// allocates once their capacity has grown to a request's size.
    pub fn render(&self, kind: usize, gen: &mut Gen, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
        match &self.kinds[kind].wire {
            Wire::Fixed { head, body } => {
                out.extend_from_slice(head);
                out.extend_from_slice(body);
            }
            Wire::Templated { head, body, length } => {
                fill(head, gen, out);
                if *length {
                    scratch.clear();
                    fill(body, gen, scratch);
                    out.extend_from_slice(b"Content-Length: ");
                    decimal(scratch.len() as u64, out);
                    out.extend_from_slice(b"\r\n\r\n");
                    out.extend_from_slice(scratch);
                } else {
                    out.extend_from_slice(b"\r\n");
                    fill(body, gen, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target::parse("http://127.0.0.1:8080/a?b=1").unwrap()
    }

    #[test]
    fn get_request_bytes() {
        let got = build(&target(), &RequestSpec::default()).unwrap();
        let want = format!(
            "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: shootout/{}\r\nAccept: */*\r\n\r\n",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }

    #[test]
    fn post_with_user_headers_and_close() {
        let req = RequestSpec {
            method: "POST".into(),
            headers: vec![
                ("Host".into(), "example.test".into()),
                ("X-A".into(), "1".into()),
            ],
            body: b"a=1".to_vec(),
            keepalive: false,
        };
        let got = String::from_utf8(build(&target(), &req).unwrap()).unwrap();
        assert!(got.starts_with("POST /a?b=1 HTTP/1.1\r\n"), "{got}");
        assert!(
            got.contains("\r\nHost: example.test\r\n") && !got.contains("127.0.0.1"),
            "{got}"
        );
        assert!(got.contains("\r\nConnection: close\r\n"), "{got}");
        assert!(
            got.ends_with("X-A: 1\r\nContent-Length: 3\r\n\r\na=1"),
            "{got}"
        );
    }

    #[test]
    fn header_injection_is_refused() {
        let req = RequestSpec {
            headers: vec![("X-A".into(), "1\r\nX-B: 2".into())],
            ..Default::default()
        };
        assert!(build(&target(), &req).is_err());
    }

    /// A method with CR/LF (from a plan) was written into the request line as it was.
    #[test]
    fn method_and_path_injection_is_refused() {
        let req = RequestSpec {
            method: "GET / HTTP/1.1\r\nX-Injected: 1\r\nX:".into(),
            ..Default::default()
        };
        assert!(build(&target(), &req).is_err());
        let mut t = target();
        t.path = "/a HTTP/1.1\r\nX-Injected: 1".into();
        assert!(build(&t, &RequestSpec::default()).is_err());
    }

    /// `-H 'Transfer-Encoding: chunked' -p f` sent TE and a Content-Length with a plain
    /// body; a user Content-Length replaced ours and could contradict the body.
    #[test]
    fn framing_headers_are_ours_alone() {
        for name in ["Transfer-Encoding", "Content-Length"] {
            let req = RequestSpec {
                method: "POST".into(),
                headers: vec![(name.into(), "chunked".into())],
                body: b"a=1".to_vec(),
                keepalive: true,
            };
            let e = build(&target(), &req).unwrap_err();
            assert!(
                e.to_string().contains("set by shootout from the body"),
                "{e}"
            );
        }
    }

    /// A list naming one 16 MiB body file 64 times reached 2 GB: each entry's request was
    /// built with its own copy of the body. The prepared kinds share the list's one copy,
    /// templated or not, and send the same bytes as before.
    #[test]
    fn kinds_of_a_list_share_their_body() {
        for (body, templated) in [(vec![b'x'; 16 << 20], false), (b"id={seq}".to_vec(), true)] {
            let text = "POST /a\n@b\n\nPUT /c\n@b\n\n".repeat(32);
            let list = shootout_model::requests::RequestList::parse(
                "l",
                &text,
                None,
                Order::Seq,
                1,
                |_| Ok(body.clone()),
            )
            .unwrap();
            let mut spec = LoadSpec::new(target());
            spec.list = Some(list);
            let r = Requests::prepare(&spec).unwrap();
            assert_eq!(r.kinds.len(), 64);
            let shared = spec.list.as_ref().unwrap().entries[0].body.clone();
            for k in &r.kinds {
                match &k.wire {
                    Wire::Fixed { body, .. } => {
                        assert!(!templated);
                        assert!(Arc::ptr_eq(body, &shared));
                    }
                    Wire::Templated { body, .. } => {
                        assert!(templated);
                        let Wire::Templated { body: first, .. } = &r.kinds[0].wire else {
                            panic!("the first kind is templated too");
                        };
                        assert!(Arc::ptr_eq(body, first));
                    }
                }
            }
            let (mut gen, mut out, mut scratch) = (
                Gen::new(r.seed, r.random, r.kinds.len(), 0, 1),
                Vec::new(),
                Vec::new(),
            );
            r.render(1, &mut gen, &mut out, &mut scratch);
            let text = String::from_utf8_lossy(&out);
            assert!(text.starts_with("PUT /c HTTP/1.1\r\n"), "{text:.80}");
            let want_body = if templated { &b"id=0"[..] } else { &body[..] };
            assert!(
                text.contains(&format!("\r\nContent-Length: {}\r\n\r\n", want_body.len())),
                "{text:.200}"
            );
            assert!(out.ends_with(want_body));
        }
    }
}
