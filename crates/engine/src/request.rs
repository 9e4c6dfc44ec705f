//! The request, prepared once into bytes that every connection of every worker sends.

use shootout_model::RequestSpec;
use shootout_model::Target;

/// A request that cannot be sent as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct HeaderError(pub String);

/// Builds the bytes of an HTTP/1.1 request. Headers the user gave replace ours of the same
/// name (Host, User-Agent, Accept); the framing (Content-Length) is always ours, from the
/// body. The request is checked again here ([`RequestSpec::validate`]: method and header
/// names are tokens, no CR/LF/NUL in a value, no user framing header), so nothing built
/// here can carry an injected header.
pub fn build(target: &Target, req: &RequestSpec) -> Result<Vec<u8>, HeaderError> {
    req.validate().map_err(|e| HeaderError(e.to_string()))?;
    if target.path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(HeaderError(format!(
            "the path {:?} has a space or a control character",
            target.path
        )));
    }
    let user_has = |name: &str| {
        req.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let mut out = format!("{} {} HTTP/1.1\r\n", req.method, target.path).into_bytes();
    let mut line = |name: &str, value: &str| {
        for part in [name.as_bytes(), b": ", value.as_bytes(), b"\r\n"] {
            out.extend_from_slice(part);
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
    for (n, v) in &req.headers {
        line(n, v);
    }
    let needs_length =
        !req.body.is_empty() || matches!(req.method.as_str(), "POST" | "PUT" | "PATCH");
    if needs_length {
        line("Content-Length", &req.body.len().to_string());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&req.body);
    Ok(out)
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
}
