//! What to load: the target, the request, what counts as a good answer, and how hard and
//! how long to push. A [`LoadSpec`] is validated and typed; the engine trusts it.

use crate::status::StatusSet;
use std::path::PathBuf;
use std::time::Duration;

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain HTTP/1.1.
    Http,
    /// HTTP/1.1 over TLS (rustls).
    Https,
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
    #[error("'{url}' uses the scheme '{scheme}': shootout speaks http:// and https:// only")]
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

impl Target {
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

/// The request sent, prepared once into bytes by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    /// `GET`, `POST`, `HEAD`, …
    pub method: String,
    /// Extra headers in order; a user `Host` or `User-Agent` replaces ours.
    pub headers: Vec<(String, String)>,
    /// Body bytes (empty: no body, no Content-Length unless the method needs one).
    pub body: Vec<u8>,
    /// Reuse connections (HTTP/1.1 keep-alive). `false` sends `Connection: close`.
    pub keepalive: bool,
}

impl Default for RequestSpec {
    fn default() -> Self {
        RequestSpec {
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            keepalive: true,
        }
    }
}

/// What a good answer is. Every response is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectation {
    /// Acceptable status codes (default: < 400).
    pub status: StatusSet,
    /// The body must contain these bytes.
    pub body_contains: Option<Vec<u8>>,
    /// The body must be exactly this many bytes long.
    pub length: Option<u64>,
}

impl Expectation {
    /// True when checking needs the body bytes kept, not just counted.
    pub fn needs_body(&self) -> bool {
        self.body_contains.is_some()
    }
}

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Closed loop: each connection sends its next request when the previous one is answered.
    Closed,
    /// Open loop: this many requests per second on a fixed schedule, latency measured from
    /// each request's due time (coordinated-omission correction).
    Rate(f64),
}

/// What individual samples to keep besides the histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Size of the uniform reservoir of per-request samples (for scatter plots).
    pub reservoir: usize,
    /// Keep every request's sample (ab's `-g`); memory grows with the run.
    pub all: bool,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            reservoir: 10_000,
            all: false,
        }
    }
}

/// One load run, validated. A run ends at the first of `requests` and `duration`; at least
/// one of the two is set.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    /// Where to send.
    pub target: Target,
    /// What to send.
    pub request: RequestSpec,
    /// What a good answer is.
    pub expect: Expectation,
    /// Concurrent connections, split among threads.
    pub connections: usize,
    /// Worker threads (one event loop each).
    pub threads: usize,
    /// Stop after this many requests have completed (failed ones included).
    pub requests: Option<u64>,
    /// Stop after this long; requests in flight then are counted as aborted.
    pub duration: Option<Duration>,
    /// Closed loop or a fixed rate.
    pub pace: Pace,
    /// Per-request deadline from send to the last byte of the answer.
    pub timeout: Duration,
    /// Deadline for establishing a connection.
    pub connect_timeout: Duration,
    /// Samples to keep.
    pub record: Record,
    /// Pin worker threads to these CPUs (round robin), e.g. from `taskset`.
    pub cpus: Option<Vec<usize>>,
}

impl LoadSpec {
    /// A spec for `target` with ab's defaults: one connection, one request, 30 s timeout.
    pub fn new(target: Target) -> Self {
        LoadSpec {
            target,
            request: RequestSpec::default(),
            expect: Expectation::default(),
            connections: 1,
            threads: 1,
            requests: Some(1),
            duration: None,
            pace: Pace::Closed,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            record: Record::default(),
            cpus: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_without_trailing_slash_gets_root_path() {
        let t = Target::parse("http://localhost:8080").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("localhost", 8080, "/")
        );
        assert_eq!(t.host_header, "localhost:8080");
    }

    #[test]
    fn url_forms() {
        let t = Target::parse("127.0.0.1:9000/a/b?x=1&y").unwrap();
        assert_eq!(t.scheme, Scheme::Http);
        assert_eq!(t.path, "/a/b?x=1&y");
        let t = Target::parse("https://[::1]/").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.scheme),
            ("::1", 443, Scheme::Https)
        );
        assert_eq!(t.host_header, "[::1]");
        let t = Target::parse("http://example.test").unwrap();
        assert_eq!((t.port, t.host_header.as_str()), (80, "example.test"));
    }

    #[test]
    fn bad_urls_name_the_fix() {
        let e = Target::parse("ftp://127.0.0.1/").unwrap_err();
        assert!(e.to_string().contains("http:// and https://"), "{e}");
        let e = Target::parse("http://:80/").unwrap_err();
        assert!(e.to_string().contains("http://127.0.0.1:8080/path"), "{e}");
    }
}
