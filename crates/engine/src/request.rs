//! The requests of a run, protocol-neutral and prepared once: each is a method, a path,
//! header fields and a body ([`Request`]); a run has one, or one per entry of its request
//! list ([`Requests`]). Every protocol renders its own wire form from them: HTTP/1.1 a
//! request line and header lines (`h1::request`), HTTP/2 and HTTP/3 one field section
//! ([`crate::fields::section`]) that HPACK and QPACK encode. What every protocol needs
//! checked is checked here, once: the method and fields as `-m` and `-H` are checked
//! (tokens, no CR/LF/NUL in a value, no user framing field), and a path without spaces or
//! control characters; a protocol adds only its own rules (HTTP/2 and HTTP/3 refuse
//! HTTP/1.1's connection fields).
//!
//! A body is held once however many requests send it: a list's entries that name one body
//! file share its bytes ([`shootout_model::requests::ListEntry::body`]), and so do the
//! requests prepared from them and every wire form rendered from those.

use shootout_model::requests::Order;
use shootout_model::spec::{check_header, check_method};
use shootout_model::{LoadSpec, RequestSpec, Target};
use std::sync::Arc;

/// A request that cannot be sent as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct HeaderError(pub String);

/// One request as every protocol sends it, before any wire form.
#[derive(Debug)]
pub struct Request {
    /// The method, as given (`GET`, `POST`, …).
    pub method: String,
    /// Path and query (origin form), starting with `/`.
    pub path: String,
    /// `http` or `https`: what HTTP/2 and HTTP/3 send as `:scheme`.
    pub scheme: &'static str,
    /// The fields shootout adds where the user gave none of that name: `Host` (the
    /// target's host and port), `User-Agent`, `Accept`, in that order.
    pub ours: Vec<(&'static str, String)>,
    /// The user's fields, in order: the run's, then a list entry's (which replace the
    /// run's of the same name). Never a framing field: the Content-Length is ours, from
    /// the body.
    pub theirs: Vec<(String, String)>,
    /// The body (empty: none).
    pub body: Arc<[u8]>,
    /// A Content-Length is sent: the request has a body, or its method carries one (POST,
    /// PUT, PATCH).
    pub length: bool,
    /// The connection is kept for more requests (else HTTP/1.1 says `Connection: close`).
    pub keepalive: bool,
    /// Its path, field values and body may hold `{seq}` and `{rand:LO-HI}` values (a list
    /// entry's; the run's own request is sent as given).
    pub templated: bool,
}

impl Request {
    /// The request of `req` to `target` alone, outside a run (tests, fuzz targets and
    /// tools that drive one connection).
    pub fn single(target: &Target, req: &RequestSpec) -> Result<Request, HeaderError> {
        let mut spec = LoadSpec::new(target.clone());
        spec.request = req.clone();
        let body = Arc::from(&req.body[..]);
        one(&spec, &req.method, &target.path, &[], body, false)
    }

    /// The request of `spec` alone, as its run would send it (a gRPC call's fields when
    /// its expectation has a gRPC reply).
    pub fn of_spec(spec: &LoadSpec) -> Result<Request, HeaderError> {
        let body = Arc::from(&spec.request.body[..]);
        one(
            spec,
            &spec.request.method,
            &spec.target.path,
            &[],
            body,
            false,
        )
    }

    /// Every field in the order it is sent: ours, then the user's.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.ours
            .iter()
            .map(|(n, v)| (*n, v.as_str()))
            .chain(self.theirs.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    }

    /// The `Host` field's value (the user's first, else ours): HTTP/2's and HTTP/3's
    /// `:authority`.
    pub fn authority(&self) -> &str {
        self.fields()
            .find(|(n, _)| n.eq_ignore_ascii_case("host"))
            .map_or("", |(_, v)| v)
    }

    /// Its method is HEAD: answers have no body whatever their Content-Length says.
    pub fn head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }

    /// Its method is idempotent (RFC 9110 §9.2.2), so a request lost to a server closing
    /// an idle connection may be sent again.
    pub fn idempotent(&self) -> bool {
        ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]
            .iter()
            .any(|m| self.method.eq_ignore_ascii_case(m))
    }
}

/// Every request of a run, prepared once.
#[derive(Debug)]
pub struct Requests {
    /// The requests, in list order (one when the run has no list).
    pub kinds: Vec<Request>,
    /// Entries are picked at random…
    pub random: bool,
    /// …seeded by this (and `{rand:…}` values too).
    pub seed: u64,
}

impl Requests {
    /// The request of `spec`, or each entry of its list, checked.
    pub fn prepare(spec: &LoadSpec) -> Result<Requests, HeaderError> {
        let req = &spec.request;
        match &spec.list {
            None => Ok(Requests {
                kinds: vec![one(
                    spec,
                    &req.method,
                    &spec.target.path,
                    &[],
                    Arc::from(&req.body[..]),
                    false,
                )?],
                random: false,
                seed: 0,
            }),
            Some(list) => Ok(Requests {
                kinds: list
                    .entries
                    .iter()
                    .map(|e| {
                        let body = Arc::clone(&e.body);
                        one(spec, &e.method, &e.path, &e.headers, body, true)
                    })
                    .collect::<Result<_, _>>()?,
                random: list.order == Order::Random,
                seed: list.seed,
            }),
        }
    }
}

/// One request: `method` to `path` with the run's fields, then `extra` (a list entry's,
/// which replace the run's of the same name), and `body`.
fn one(
    spec: &LoadSpec,
    method: &str,
    path: &str,
    extra: &[(String, String)],
    body: Arc<[u8]>,
    templated: bool,
) -> Result<Request, HeaderError> {
    let req: &RequestSpec = &spec.request;
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
    let theirs: Vec<(String, String)> = req
        .headers
        .iter()
        .filter(|(n, _)| !extra.iter().any(|(e, _)| e.eq_ignore_ascii_case(n)))
        .chain(extra)
        .cloned()
        .collect();
    let given = |name: &str| theirs.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    // A gRPC call carries what gRPC clients send (grpc/grpc's `doc/PROTOCOL-HTTP2.md`): a
    // `grpc-…` user agent, no `Accept` and no `content-length` (its messages frame
    // themselves); its `content-type` and `te` are the caller's fields.
    let grpc = spec.expect.grpc.is_some();
    let mut ours = Vec::new();
    if !given("host") {
        ours.push(("Host", spec.target.host_header.clone()));
    }
    if !given("user-agent") {
        let agent = match grpc {
            true => concat!("grpc-shootout/", env!("CARGO_PKG_VERSION")),
            false => concat!("shootout/", env!("CARGO_PKG_VERSION")),
        };
        ours.push(("User-Agent", agent.to_string()));
    }
    if !given("accept") && !grpc {
        ours.push(("Accept", "*/*".to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        scheme: if spec.target.scheme.tls() {
            "https"
        } else {
            "http"
        },
        ours,
        length: !grpc && (!body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH")),
        theirs,
        body,
        keepalive: req.keepalive,
        templated,
    })
}

#[cfg(test)]
mod golden;
