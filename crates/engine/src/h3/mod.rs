//! HTTP/3 for the engine: QUIC (RFC 9000) with ALPN `h3` for `https://` targets, many
//! concurrent requests per connection, on the same event loop, pacer and recorder as the
//! other protocols.
//!
//! Seams: [`frame`] cuts a stream's bytes into HTTP/3 frames and writes ours; [`qpack`]
//! decodes field sections with the static table only (our SETTINGS give the server a
//! dynamic table of capacity 0, so no section can need one) and encodes our request once;
//! [`conn`] is one connection's HTTP/3 state without I/O (requests in slots, the server's
//! control and QPACK streams, GOAWAY); [`quic`] ties one `quinn-proto` connection to its
//! UDP socket; [`udp`] sends datagrams in batches with one `sendmsg` each (GSO) and
//! receives several per `recvmsg` (GRO) where the Linux kernel has them, one per system
//! call elsewhere or with [`crate::Control::udp_offload`] off; [`worker`] is the
//! [`crate::event_loop::Protocol`] that drives a worker's connections, each over a
//! connected non-blocking UDP socket registered with the loop under the connection's
//! token, its QUIC timers kept through the loop's `next_wake`/`wake`; [`check`] refuses
//! before the run a server that does not answer QUIC with `h3` (one datagram per call:
//! a handshake has little to batch).
//!
//! Why `quinn-proto` rather than `quiche` or `quinn`: `quinn-proto` is QUIC without I/O
//! (datagrams in, datagrams and timers out), so it runs on the engine's own epoll loop
//! with no runtime, no task or waker per connection and no lock, beside the pacer and
//! every deadline, as HTTP/2 does; its TLS is rustls with ring, the same library and
//! configuration (`--insecure`, `--cacert`) as https. `quiche` is sans-I/O too but builds
//! BoringSSL with cmake and a C toolchain into every build; `quinn` is `quinn-proto` on
//! tokio, whose reactor would replace the engine's loop for this one protocol. The
//! `h3` crate needs an async runtime the same way, so HTTP/3's framing and QPACK are ours
//! (a few hundred lines, as HTTP/2's are), tested byte by byte and fuzzed
//! (`fuzz/fuzz_targets/h3.rs`), and against the `h3` crate's server in the tests.

pub mod conn;
pub mod frame;
pub mod qpack;
pub mod quic;
pub mod request;
pub mod udp;
pub mod worker;

pub use request::Prepared;

use bytes::BytesMut;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a server is not taken for an HTTP/3 server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No QUIC answer in time.
    #[error("no QUIC answer on UDP port {port} within {after:?}: the server does not speak HTTP/3 there (enable HTTP/3 on that UDP port, e.g. nginx's `listen PORT quic;`, or drop --http3)")]
    Silent { port: u16, after: Duration },
    /// An ICMP port unreachable came back: nothing listens on the UDP port.
    #[error("nothing listens on UDP port {0} (ICMP port unreachable): the server does not speak HTTP/3 there (enable HTTP/3 on that UDP port, or drop --http3)")]
    Unreachable(u16),
    /// TLS did not choose `h3`.
    #[error("TLS negotiated {0} instead of h3 (ALPN): the server does not offer HTTP/3 on this port (drop --http3)")]
    Alpn(String),
    /// The QUIC handshake failed.
    #[error("the QUIC handshake failed: {0}")]
    Handshake(String),
    /// The server ended the handshake with a TLS alert (QUIC's crypto error, RFC 9001
    /// §4.8) that a server choosing its certificate by name sends when the client named
    /// none, to a URL whose host is an IP address (no SNI is sent for one, RFC 6066 §3).
    #[error("the server ended the QUIC handshake with TLS alert {alert} ({}). The URL's host is an IP address, so no SNI was sent, and a server that chooses its certificate by name (caddy listening on every address, say) had none to choose: give the URL the host name its certificate is for (https://localhost:PORT/), or bind the server to the address (caddy: `bind 127.0.0.1` in the site's block)", alert_name(*alert))]
    NoServerName {
        /// The TLS alert (RFC 8446 §6): 40, 49, 80 or 112.
        alert: u8,
    },
    /// As [`Refusal::NoServerName`] for a URL whose host is a name, sent as SNI: the server
    /// speaks QUIC but had no certificate for that name (caddy's site address must name it).
    #[error("the server ended the QUIC handshake with TLS alert {alert} ({}) for the name {name}, sent as SNI: it speaks QUIC, and may have no certificate for that name: give the URL the name its certificate is for (caddy: the site's address)", alert_name(*alert))]
    NoCertificateFor {
        /// The TLS alert (RFC 8446 §6): 40, 49, 80 or 112.
        alert: u8,
        /// The URL's host, sent as SNI.
        name: String,
    },
}

/// The TLS alerts a server sends when it has no certificate for a handshake that named
/// no server: handshake_failure, access_denied (rustls), internal_error (Go's crypto/tls,
/// so caddy), unrecognized_name.
const NO_NAME_ALERTS: [u8; 4] = [40, 49, 80, 112];

/// A TLS alert's name (RFC 8446 §6), for the alerts of [`NO_NAME_ALERTS`].
fn alert_name(alert: u8) -> &'static str {
    match alert {
        40 => "handshake_failure",
        49 => "access_denied",
        80 => "internal_error",
        112 => "unrecognized_name",
        _ => "an alert",
    }
}

/// How a lost handshake is told: a TLS alert of [`NO_NAME_ALERTS`] is
/// [`Refusal::NoServerName`] when the server name is an IP address, else
/// [`Refusal::NoCertificateFor`] the name; anything else is said as quinn says it.
fn lost(reason: quinn_proto::ConnectionError, server_name: &str) -> Refusal {
    if let quinn_proto::ConnectionError::ConnectionClosed(close) = &reason {
        let code = u64::from(close.error_code);
        let ip = server_name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok();
        let alert = (code & 0xff) as u8;
        if (0x100..0x200).contains(&code) && NO_NAME_ALERTS.contains(&alert) {
            return if ip {
                Refusal::NoServerName { alert }
            } else {
                Refusal::NoCertificateFor {
                    alert,
                    name: server_name.to_owned(),
                }
            };
        }
    }
    Refusal::Handshake(reason.to_string())
}

/// Whether a handshake failure is the certificate's (the caller then reports it as a TLS
/// error, with the hint for self-signed certificates).
pub fn certificate_problem(r: &Refusal) -> bool {
    matches!(r, Refusal::Handshake(why) if why.contains("certificate") || why.contains("Certificate"))
}

/// Completes one QUIC handshake with `addr` on a blocking UDP socket (from `bind`, when
/// given) and checks that ALPN chose `h3`: a server that does not speak HTTP/3 is
/// refused here, before the run.
pub fn check(
    addr: SocketAddr,
    bind: Option<std::net::IpAddr>,
    tls: &Arc<rustls::ClientConfig>,
    server_name: &str,
    timeout: Duration,
) -> Result<(), Refusal> {
    let handshake = |e: String| Refusal::Handshake(e);
    let local: SocketAddr = match (bind, addr) {
        (Some(ip), _) => (ip, 0).into(),
        (None, SocketAddr::V4(_)) => ([0, 0, 0, 0], 0).into(),
        (None, SocketAddr::V6(_)) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let sock = std::net::UdpSocket::bind(local).map_err(|e| handshake(e.to_string()))?;
    sock.connect(addr).map_err(|e| handshake(e.to_string()))?;
    let client = quic::client_config(tls, timeout, false).map_err(handshake)?;
    let endpoint = Arc::new(quinn_proto::EndpointConfig::default());
    let began = Instant::now();
    let mut link = quic::Link::connect(&endpoint, &client, addr, server_name, began)
        .map_err(|e| handshake(e.to_string()))?;
    let mut send = |b: &[u8], _: Option<usize>| sock.send(b);
    let mut buf = vec![0u8; quic::MAX_DATAGRAM];
    let silent = Refusal::Silent {
        port: addr.port(),
        after: timeout,
    };
    loop {
        let now = Instant::now();
        match link.flush(now, 1, &mut send) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(Refusal::Unreachable(addr.port()))
            }
            _ => {}
        }
        if let Some(outcome) = handshake_outcome(&mut link, now, &mut send, &silent, server_name) {
            return outcome;
        }
        let deadline = began + timeout;
        if now >= deadline {
            return Err(silent);
        }
        let wake = link.timeout().map_or(deadline, |t| t.min(deadline));
        let wait = wake
            .saturating_duration_since(now)
            .max(Duration::from_millis(1));
        let _ = sock.set_read_timeout(Some(wait));
        match sock.recv(&mut buf) {
            Ok(n) => link.datagram(Instant::now(), BytesMut::from(&buf[..n]), &mut send),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(Refusal::Unreachable(addr.port()))
            }
            Err(_) => {
                let now = Instant::now();
                if link.timeout().is_some_and(|t| t <= now) {
                    link.timeout_fired(now);
                }
            }
        }
    }
}

/// The pre-flight's verdict once the handshake ended: `h3` chosen (the connection is
/// closed at once), another protocol, or the connection lost (`silent` when it timed
/// out). `None` while it goes on.
fn handshake_outcome(
    link: &mut quic::Link,
    now: Instant,
    send: &mut impl FnMut(&[u8], Option<usize>) -> std::io::Result<usize>,
    silent: &Refusal,
    server_name: &str,
) -> Option<Result<(), Refusal>> {
    while let Some(ev) = link.conn.poll() {
        match ev {
            quinn_proto::Event::Connected => {
                let alpn = alpn(&link.conn);
                link.close(now, frame::H3_NO_ERROR);
                let _ = link.flush(now, 1, send);
                return Some(match alpn {
                    Some(p) if p == b"h3" => Ok(()),
                    p => Err(Refusal::Alpn(p.map_or("no protocol".into(), |p| {
                        String::from_utf8_lossy(&p).into_owned()
                    }))),
                });
            }
            quinn_proto::Event::ConnectionLost { reason } => {
                return Some(Err(match reason {
                    quinn_proto::ConnectionError::TimedOut => silent.clone(),
                    r => lost(r, server_name),
                }))
            }
            _ => {}
        }
    }
    None
}

/// The protocol ALPN chose on a connection whose handshake completed.
pub fn alpn(conn: &quinn_proto::Connection) -> Option<Vec<u8>> {
    conn.crypto_session()
        .handshake_data()
        .and_then(|d| {
            d.downcast::<quinn_proto::crypto::rustls::HandshakeData>()
                .ok()
        })
        .and_then(|d| d.protocol)
}

#[cfg(test)]
mod lost_tests {
    use super::*;

    /// The server's close of a handshake with TLS alert `alert` (QUIC's CRYPTO_ERROR).
    fn alert(alert: u8) -> quinn_proto::ConnectionError {
        quinn_proto::ConnectionError::ConnectionClosed(quinn_proto::ConnectionClose {
            error_code: quinn_proto::TransportErrorCode::crypto(alert),
            frame_type: None,
            reason: bytes::Bytes::new(),
        })
    }

    /// caddy on every address ends a handshake with alert 80 for a name it has no site
    /// for: an IP-literal URL (no SNI) and a host name it does not serve were both "does
    /// not speak HTTP/3"; each now says which it was.
    #[test]
    fn an_alert_for_a_missing_name_says_whether_a_name_was_sent() {
        assert_eq!(
            lost(alert(80), "127.0.0.1"),
            Refusal::NoServerName { alert: 80 }
        );
        assert_eq!(
            lost(alert(112), "[::1]"),
            Refusal::NoServerName { alert: 112 }
        );
        let named = lost(alert(80), "localhost");
        assert_eq!(
            named,
            Refusal::NoCertificateFor {
                alert: 80,
                name: "localhost".into()
            }
        );
        assert!(named
            .to_string()
            .contains("TLS alert 80 (internal_error) for the name localhost"));
        // Another alert (42, bad_certificate) is said as quinn says it.
        assert!(matches!(
            lost(alert(42), "127.0.0.1"),
            Refusal::Handshake(_)
        ));
    }
}
