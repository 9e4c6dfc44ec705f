//! HTTP/1.1's wire form of the run's requests ([`crate::request`]), rendered once: a
//! request (or each entry of a request list) without templated values becomes the bytes
//! every connection of every worker sends; one with `{seq}` or `{rand:LO-HI}` keeps its
//! pieces, and [`Prepared::render`] appends a request's bytes to a connection's output
//! buffer with fresh values, allocating nothing. [`Gen`](crate::template::Gen) picks each
//! request's entry (in order or at random, seeded) per worker.

use crate::codec::decimal;
use crate::request::{HeaderError, Request, Requests};
use crate::template::{fill, Gen};
use shootout_model::requests::Template;
use std::collections::HashMap;
use std::sync::Arc;

/// The bytes of an HTTP/1.1 request, for tests: the request of `req` to `target`.
#[cfg(test)]
pub fn build(
    target: &shootout_model::Target,
    req: &shootout_model::RequestSpec,
) -> Result<Vec<u8>, HeaderError> {
    let requests = Requests {
        kinds: vec![Request::single(target, req)?],
        random: false,
        seed: 0,
    };
    let p = Prepared::new(&requests)?;
    let mut out = Vec::new();
    p.render(
        0,
        &mut Gen::new(0, false, 1, 0, 1),
        &mut out,
        &mut Vec::new(),
    );
    Ok(out)
}

/// The request line and header lines of `r` (each ending in CRLF, without the
/// Content-Length line and the blank line). Our fields come first, then `Connection:
/// close` when the connection is not kept (and the user gave no `Connection`), then the
/// user's.
fn head(r: &Request) -> String {
    let mut out = format!("{} {} HTTP/1.1\r\n", r.method, r.path);
    let mut line = |name: &str, value: &str| {
        for part in [name, ": ", value, "\r\n"] {
            out.push_str(part);
        }
    };
    for (n, v) in &r.ours {
        line(n, v);
    }
    if !r.keepalive
        && !r
            .theirs
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("connection"))
    {
        line("Connection", "close");
    }
    for (n, v) in &r.theirs {
        line(n, v);
    }
    out
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
/// the request's own, shared by every kind whose list entries share it (one body file
/// named by many entries is held once).
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

/// Every kind of request of a run, in HTTP/1.1's wire form.
#[derive(Debug)]
pub struct Prepared {
    /// The kinds, in list order (one when the run has no list).
    pub kinds: Vec<Kind>,
    /// Entries are picked at random…
    pub random: bool,
    /// …seeded by this (and `{rand:…}` values too).
    pub seed: u64,
}

impl Prepared {
    /// Renders each of `requests`. Kinds without a template are built into their bytes
    /// here, once; a templated body is parsed once however many kinds send it.
    pub fn new(requests: &Requests) -> Result<Prepared, HeaderError> {
        // A body's template, parsed once per shared body (keyed by its address, which
        // the Arc keeps alive for as long as the map).
        let mut templates: HashMap<*const u8, (Arc<[u8]>, Arc<Template>)> = HashMap::new();
        let t = |b: &[u8]| Template::parse(b).map_err(|e| HeaderError(e.to_string()));
        let mut kinds = Vec::with_capacity(requests.kinds.len());
        for r in &requests.kinds {
            let head = head(r);
            let (head_t, body_t) = if r.templated {
                let key = Arc::as_ptr(&r.body).cast::<u8>();
                let body_t = match templates.get(&key) {
                    Some((_, parsed)) => Arc::clone(parsed),
                    None => {
                        let parsed = Arc::new(t(&r.body)?);
                        templates.insert(key, (Arc::clone(&r.body), Arc::clone(&parsed)));
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
                    length: r.length,
                }
            } else {
                let mut out = head.into_bytes();
                if r.length {
                    out.extend_from_slice(b"Content-Length: ");
                    decimal::put(r.body.len() as u64, &mut out);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"\r\n");
                Wire::Fixed {
                    head: out,
                    body: Arc::clone(&r.body),
                }
            };
            kinds.push(Kind {
                head: r.head(),
                idempotent: r.idempotent(),
                wire,
            });
        }
        Ok(Prepared {
            kinds,
            random: requests.random,
            seed: requests.seed,
        })
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
                    decimal::put(scratch.len() as u64, out);
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
    use shootout_model::requests::Order;
    use shootout_model::{LoadSpec, RequestSpec, Target};

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
            let r = Prepared::new(&Requests::prepare(&spec).unwrap()).unwrap();
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
