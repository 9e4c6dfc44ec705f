//! TLS client setup (rustls with the ring provider): trust the Mozilla roots plus an
//! optional CA file, or nothing at all with `insecure` for self-signed test servers.

use crate::EngineError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use shootout_model::Target;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// Builds the client config and server name for `target`, offering `alpn` (`http/1.1`
/// or `h2`).
pub fn client_config(
    target: &Target,
    alpn: &[u8],
) -> Result<(Arc<ClientConfig>, ServerName<'static>), EngineError> {
    let err = |reason: String| EngineError::Tls {
        target: target.url.clone(),
        reason,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| err(e.to_string()))?;
    let mut config = if target.tls.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)))
            .with_no_client_auth()
    } else {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        if let Some(path) = &target.tls.ca_file {
            let file = std::fs::File::open(path)
                .map_err(|e| err(format!("cannot read CA file {}: {e}", path.display())))?;
            for cert in rustls_pemfile::certs(&mut BufReader::new(file)) {
                let cert = cert.map_err(|e| err(format!("bad PEM in {}: {e}", path.display())))?;
                roots
                    .add(cert)
                    .map_err(|e| err(format!("bad certificate in {}: {e}", path.display())))?;
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = vec![alpn.to_vec()];
    let name = ServerName::try_from(target.host.clone()).map_err(|e| {
        err(format!(
            "'{}' is not a valid TLS server name: {e}",
            target.host
        ))
    })?;
    Ok((Arc::new(config), name))
}

/// Completes one handshake on a blocking stream, so a certificate problem is one clear
/// error before the run rather than a run of failed connections. Returns the protocol ALPN
/// chose, if any. `url` is the URL as the user gave it (`https://`, `wss://`, `grpcs://`):
/// an error that suggests dropping TLS names its plain scheme.
pub fn handshake(
    stream: TcpStream,
    tls: &(Arc<ClientConfig>, ServerName<'static>),
    timeout: Duration,
    target: &str,
    url: &str,
) -> Result<Option<Vec<u8>>, EngineError> {
    let Some((mut conn, mut stream)) = session(stream, tls, timeout, (target, url))? else {
        return Ok(None);
    };
    let alpn = conn.alpn_protocol().map(<[u8]>::to_vec);
    conn.send_close_notify();
    let _ = conn.complete_io(&mut stream);
    Ok(alpn)
}

/// The share of the connect timeout a handshake waits for the server's first answer: a
/// TLS server answers a ClientHello at once (within a round trip and a key exchange), while
/// a plain-HTTP server given an `https://` URL waits, silent, for a request line that the
/// hello never ends. So that mistake is told in 2 s (of the default 10), not 10; a server
/// that is only slow has the rest of the timeout once its first byte came, and a user
/// who raises `--connect-timeout` raises this wait with it.
pub const FIRST_ANSWER_SHARE: u32 = 5;

/// How long a handshake waits for the server's first byte ([`FIRST_ANSWER_SHARE`]).
pub fn first_answer(timeout: Duration) -> Duration {
    timeout / FIRST_ANSWER_SHARE
}

/// A TLS session on a blocking stream (whose read and write timeouts become `timeout`),
/// its handshake complete; `None` when the server offers none of our ALPN protocols. The
/// server's first answer is awaited [`first_answer`] of `timeout` at most. `target` names
/// the server in errors, `url` as [`handshake`] says.
pub fn session(
    stream: TcpStream,
    (config, name): &(Arc<ClientConfig>, ServerName<'static>),
    timeout: Duration,
    (target, url): (&str, &str),
) -> Result<Option<(rustls::ClientConnection, TcpStream)>, EngineError> {
    let err = |reason: String| EngineError::Tls {
        target: target.to_string(),
        reason,
    };
    let wait = first_answer(timeout);
    let _ = stream.set_read_timeout(Some(wait));
    let _ = stream.set_write_timeout(Some(timeout));
    let mut conn = rustls::ClientConnection::new(config.clone(), name.clone())
        .map_err(|e| err(e.to_string()))?;
    let mut stream = Heard {
        stream,
        first: Vec::new(),
        rest: timeout,
    };
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(&mut stream) {
            stream.hear_out(wait);
            if let Some(why) = plain_http(&stream.first, &e, wait, url) {
                return Err(err(why));
            }
            let no_alpn = e
                .get_ref()
                .and_then(|e| e.downcast_ref::<rustls::Error>())
                .is_some_and(|e| {
                    *e == rustls::Error::AlertReceived(
                        rustls::AlertDescription::NoApplicationProtocol,
                    )
                });
            if no_alpn {
                // The server offers none of our protocols: the caller says which it wanted.
                return Ok(None);
            }
            let hint = if e.to_string().contains("certificate") {
                " (for a self-signed certificate use --insecure, or --cacert FILE)"
            } else {
                ""
            };
            return Err(err(format!("{e}{hint}")));
        }
    }
    Ok(Some((conn, stream.stream)))
}

/// The stream of a handshake, keeping the first bytes the server sent: an answer in plain
/// HTTP is told by them. Its read timeout becomes `rest` once the first byte came.
struct Heard {
    stream: TcpStream,
    first: Vec<u8>,
    rest: Duration,
}

/// How many of the server's first bytes [`Heard`] keeps: a TLS record's header, or
/// `HTTP/`.
const FIRST: usize = 5;

impl Read for Heard {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.stream.read(buf)?;
        if self.first.is_empty() && n > 0 {
            let _ = self.stream.set_read_timeout(Some(self.rest));
        }
        let keep = n.min(FIRST.saturating_sub(self.first.len()));
        self.first.extend_from_slice(&buf[..keep]);
        Ok(n)
    }
}

impl Heard {
    /// After a failed handshake whose first bytes open no TLS record: reads on until
    /// [`FIRST`] are kept (or the server closes, or `wait` passes), so that an answer
    /// written a byte at a time (TLS rejects its first byte alone) is told as the same
    /// answer written whole.
    fn hear_out(&mut self, wait: Duration) {
        if self.first.first().is_none_or(|b| (20..=24).contains(b)) {
            return;
        }
        let _ = self.stream.set_read_timeout(Some(wait));
        let mut byte = [0u8; 1];
        while self.first.len() < FIRST {
            if !matches!(self.read(&mut byte), Ok(1)) {
                break;
            }
        }
    }
}

impl Write for Heard {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

/// Why a handshake that failed with `e`, the server having sent `first`, looks like an
/// `https://` URL given to a plain-HTTP server: it answered in HTTP (`HTTP/` where a TLS
/// record was due) or with other bytes that open no TLS record, or sent nothing at all
/// within `timeout` (its [`first_answer`] wait) or before closing (a plain server waits
/// for a request line that the TLS hello never ends). The advice names the plain scheme
/// of `url`'s ([`plain_scheme`]). `None` otherwise.
fn plain_http(first: &[u8], e: &std::io::Error, timeout: Duration, url: &str) -> Option<String> {
    use std::io::ErrorKind;
    let (plain, tls) = plain_scheme(url);
    if first.starts_with(b"HTTP/") {
        let a = if tls.starts_with('h') { "an" } else { "a" };
        return Some(format!(
            "the server answered plain HTTP on {a} {tls} URL: use {plain}"
        ));
    }
    // A TLS record opens with its content type, 20 to 24 (RFC 8446 §5.1); anything else
    // (Python's http.server answers a hello it cannot read with a bare HTML page) is not TLS.
    if let Some(&b) = first.first() {
        if (20..=24).contains(&b) {
            return None;
        }
        return Some(format!(
            "the server answered with bytes that are not TLS (\"{}\"): it may speak plain HTTP on this port (try {plain} in place of {tls})",
            first.escape_ascii()
        ));
    }
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Some(format!(
            "the server sent nothing in answer to TLS's first message within {:.1} s: a plain-HTTP server waits so for a request line, so try {plain} in place of {tls} (or, if the server is only slow, raise --connect-timeout: a fifth of it is given to the first answer)",
            timeout.as_secs_f64()
        )),
        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => Some(format!(
            "the server closed the connection without a TLS answer: it may speak plain HTTP on this port (try {plain} in place of {tls})"
        )),
        _ => None,
    }
}

/// The scheme of `url` without TLS and with it: `ws://` for a `wss://` URL, `grpc://` for
/// a `grpcs://` one, else `http://` for `https://`.
fn plain_scheme(url: &str) -> (&'static str, &'static str) {
    let scheme = url.split_once("://").map_or("", |(s, _)| s);
    if scheme.eq_ignore_ascii_case("wss") {
        ("ws://", "wss://")
    } else if scheme.eq_ignore_ascii_case("grpcs") {
        ("grpc://", "grpcs://")
    } else {
        ("http://", "https://")
    }
}

/// Accepts any certificate; signatures are still checked against the presented one.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's http.server answers a TLS hello with a bare HTML page (no status line):
    /// the error was rustls' "received corrupt message of type InvalidContentType".
    #[test]
    fn bytes_that_open_no_tls_record_are_said_to_be_plain() {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidData, "corrupt message");
        let t = Duration::from_secs(1);
        let html = plain_http(b"<!DOC", &e, t, "https://127.0.0.1/").unwrap();
        assert!(
            html.starts_with("the server answered with bytes that are not TLS (\"<!DOC\")")
                && html.contains("try http://"),
            "{html}"
        );
        assert_eq!(
            plain_http(b"HTTP/", &e, t, "https://127.0.0.1/").unwrap(),
            "the server answered plain HTTP on an https:// URL: use http://"
        );
        // A TLS alert record (21) is TLS: its own error stands.
        assert_eq!(
            plain_http(&[21, 3, 3, 0, 2], &e, t, "https://127.0.0.1/"),
            None
        );
    }

    /// `wss://` given to a plain WebSocket server was told to try `http://`, a URL that
    /// loads no WebSocket: the advice keeps the protocol and drops only TLS.
    #[test]
    fn the_advice_names_the_plain_scheme_of_the_url_given() {
        let t = Duration::from_secs(1);
        let quiet = std::io::Error::from(std::io::ErrorKind::WouldBlock);
        let closed = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        for (url, want) in [
            ("wss://127.0.0.1:8765/echo", "try ws:// in place of wss://"),
            ("WSS://127.0.0.1:8765/", "try ws:// in place of wss://"),
            (
                "grpcs://127.0.0.1:50051/a.B/C",
                "try grpc:// in place of grpcs://",
            ),
            ("https://127.0.0.1/", "try http:// in place of https://"),
        ] {
            for (first, e) in [
                (&b""[..], &quiet),
                (&b""[..], &closed),
                (&b"<!DOC"[..], &closed),
            ] {
                let why = plain_http(first, e, t, url).unwrap();
                assert!(why.contains(want), "{url}: {why}");
            }
        }
        let why = plain_http(b"HTTP/", &closed, t, "wss://127.0.0.1/").unwrap();
        assert_eq!(
            why,
            "the server answered plain HTTP on a wss:// URL: use ws://"
        );
    }

    /// The first answer is awaited a fifth of the connect timeout: 2 s of the default 10.
    #[test]
    fn the_first_answer_is_awaited_a_fifth_of_the_connect_timeout() {
        assert_eq!(
            first_answer(Duration::from_secs(10)),
            Duration::from_secs(2)
        );
        assert_eq!(
            first_answer(Duration::from_millis(500)),
            Duration::from_millis(100)
        );
    }
}
