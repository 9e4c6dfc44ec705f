//! Where requests go and what one request may hold: the [`Target`] a URL names, and the
//! checks of a request's fields (a method, a header, a path: [`check_method`],
//! [`check_header`], [`check_path`]) and of its body's size ([`MAX_BODY`]). Below the
//! spec and the request lists, which both check their fields here; [`crate::spec`]
//! re-exports every name, so `spec::Target` is this one.

use std::path::PathBuf;

/// `http`, `https`, `ws` or `wss`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain HTTP/1.1.
    Http,
    /// HTTP/1.1 over TLS (rustls).
    Https,
    /// WebSocket over plain TCP (RFC 6455's `ws://`).
    Ws,
    /// WebSocket over TLS (`wss://`), with the same TLS settings as `https://`.
    Wss,
}

impl Scheme {
    /// Spoken over TLS: `https` and `wss`.
    pub fn tls(self) -> bool {
        matches!(self, Scheme::Https | Scheme::Wss)
    }

    /// A WebSocket URL: `ws` and `wss`.
    pub fn websocket(self) -> bool {
        matches!(self, Scheme::Ws | Scheme::Wss)
    }
}

/// TLS settings for `https://` targets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Accept any certificate (self-signed test servers).
    pub insecure: bool,
    /// Extra PEM file of trusted CA certificates.
    pub ca_file: Option<PathBuf>,
}

/// Where requests go. Built from a URL by [`Target::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as the user gave it.
    pub url: String,
    /// `http` or `https`.
    pub scheme: Scheme,
    /// Host name or address literal, without brackets (used for DNS, SNI).
    pub host: String,
    /// TCP port (the scheme's default when the URL has none).
    pub port: u16,
    /// Path and query, never empty (`/` when the URL had no path).
    pub path: String,
    /// Value of the `Host` header (host, plus `:port` when not the default).
    pub host_header: String,
    /// Connect to this unix socket instead of host:port (the URL still gives path and Host).
    pub unix_socket: Option<PathBuf>,
    /// TLS settings, used when `scheme` is https.
    pub tls: TlsOptions,
}

/// A URL that cannot be a target.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TargetError {
    /// Not a URL at all.
    #[error("'{url}' is not a URL ({reason}): write it as http://127.0.0.1:8080/path")]
    Invalid {
        /// The URL as given.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// A scheme other than http or https.
    #[error("'{url}' uses the scheme '{scheme}': shootout speaks http://, https://, ws:// and wss:// only")]
    Scheme {
        /// The URL as given.
        url: String,
        /// The scheme found.
        scheme: String,
    },
    /// No host.
    #[error("'{url}' names no host: write it as http://127.0.0.1:8080/path")]
    NoHost {
        /// The URL as given.
        url: String,
    },
}

/// `grpc://` and `grpcs://` URLs as the `http://` and `https://` URLs their calls go to
/// (HTTP/2 with prior knowledge, or TLS with ALPN h2); `None` for any other URL.
pub fn grpc_as_http(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    match scheme.to_ascii_lowercase().as_str() {
        "grpc" => Some(format!("http://{rest}")),
        "grpcs" => Some(format!("https://{rest}")),
        _ => None,
    }
}

impl Target {
    /// A target of `url`, which may be a gRPC method's (`grpc://`, `grpcs://`: see
    /// [`grpc_as_http`]); `url` stays the URL as given.
    pub fn parse_grpc(url: &str) -> Result<Target, TargetError> {
        let mut t = Target::parse(grpc_as_http(url).as_deref().unwrap_or(url))?;
        t.url = url.to_string();
        Ok(t)
    }

    /// Parses `http://host[:port][/path][?query]`; a missing scheme means `http://`, a
    /// missing path means `/` (unlike ab, which insists on the trailing slash).
    pub fn parse(input: &str) -> Result<Target, TargetError> {
        let with_scheme = if input.contains("://") {
            input.to_string()
        } else {
            format!("http://{input}")
        };
        let url = url::Url::parse(&with_scheme).map_err(|e| TargetError::Invalid {
            url: input.to_string(),
            reason: e.to_string(),
        })?;
        let scheme = match url.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            "ws" => Scheme::Ws,
            "wss" => Scheme::Wss,
            other => {
                return Err(TargetError::Scheme {
                    url: input.to_string(),
                    scheme: other.to_string(),
                })
            }
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_string(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => {
                return Err(TargetError::NoHost {
                    url: input.to_string(),
                })
            }
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let mut path = url.path().to_string();
        if path.is_empty() {
            path.push('/');
        }
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let host_header = match url.port() {
            Some(p) => format!("{}:{p}", url.host_str().unwrap_or(&host)),
            None => url.host_str().unwrap_or(&host).to_string(),
        };
        Ok(Target {
            url: input.to_string(),
            scheme,
            host,
            port,
            path,
            host_header,
            unix_socket: None,
            tls: TlsOptions::default(),
        })
    }
}

/// The largest request body shootout sends: 64 MiB (`-p`, `-u`, a plan's `body` or
/// `body_file`). Files are read with this limit, so `-p /dev/zero` is an error, not an
/// exhausted memory.
pub const MAX_BODY: usize = 64 << 20;

/// A request field that cannot be sent as given. Checked when the flags or the plan are
/// read, so nothing is sent that could carry an injected header.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    /// Not an RFC 9110 token.
    #[error("method '{0}' is not an HTTP method (letters, digits and !#$%&'*+-.^_`|~ only): write e.g. GET or DELETE")]
    Method(String),
    /// A header name that is not an RFC 9110 token.
    #[error("header name '{0}' is not a token (no spaces, colons or control characters): write e.g. X-Request-Id")]
    HeaderName(String),
    /// A header value with CR, LF, NUL or another control character.
    #[error("header '{0}' has a control character (CR, LF, NUL, ...) in its value: give the value on one line")]
    HeaderValue(String),
    /// `Content-Length` or `Transfer-Encoding` given by the user.
    #[error("header '{0}' is set by shootout from the body (Content-Length when there is one): remove it")]
    Framing(String),
    /// A path that does not start with `/`.
    #[error("path '{0}' must start with / (e.g. /index.html?q=1)")]
    PathStart(String),
    /// A path with CR, LF, a tab, NUL or another control character.
    #[error(
        "path '{0}' has a control character (CR, LF, a tab, NUL, ...): percent-encode it (%0D, %0A, %09, %00)"
    )]
    PathControl(String),
    /// A body over [`MAX_BODY`].
    #[error("the body is {0} bytes: the most shootout sends is {most} MiB", most = MAX_BODY >> 20)]
    Body(usize),
}

/// `s` as it can be shown on one line (control characters escaped), cut to 80 chars.
pub(crate) fn shown(s: &str) -> String {
    let mut out: String = s.escape_debug().take(80).collect();
    if s.escape_debug().nth(80).is_some() {
        out.push('…');
    }
    out
}

/// An RFC 9110 token: one or more of `tchar`.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A control character as HTTP forbids it in a field value or a path (HTAB excepted).
pub(crate) fn is_control(c: char) -> bool {
    c.is_ascii_control() && c != '\t'
}

/// A body's length: at most [`MAX_BODY`] (the rule [`crate::spec::rules::body`] gives).
pub fn check_body(len: usize) -> Result<usize, RequestError> {
    if len <= MAX_BODY {
        Ok(len)
    } else {
        Err(RequestError::Body(len))
    }
}

/// Checks a method: an RFC 9110 token (`GET`, `PURGE`, `M-SEARCH`).
pub fn check_method(method: &str) -> Result<(), RequestError> {
    if is_token(method) {
        Ok(())
    } else {
        Err(RequestError::Method(shown(method)))
    }
}

/// Checks one header: the name is a token other than `Content-Length` and
/// `Transfer-Encoding` (shootout owns the framing), the value has no control character.
pub fn check_header(name: &str, value: &str) -> Result<(), RequestError> {
    if !is_token(name) {
        return Err(RequestError::HeaderName(shown(name)));
    }
    if name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
    {
        return Err(RequestError::Framing(name.to_string()));
    }
    if value.chars().any(is_control) {
        return Err(RequestError::HeaderValue(name.to_string()));
    }
    Ok(())
}

/// Checks a path as a user writes it (a plan's `path` or `ready.path`): it starts with
/// `/` and has no control character, the tab included (a URL parser drops tabs and line
/// breaks without a word, so the request would not be the one written). Other characters
/// (spaces, non-ASCII) are percent-encoded when the URL is built
/// ([`crate::spec::path_target`]).
pub fn check_path(path: &str) -> Result<(), RequestError> {
    if path.chars().any(char::is_control) {
        return Err(RequestError::PathControl(shown(path)));
    }
    if !path.starts_with('/') {
        return Err(RequestError::PathStart(shown(path)));
    }
    Ok(())
}
