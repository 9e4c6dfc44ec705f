//! In-process HTTP/3 test servers on `127.0.0.1` (UDP, port 0), on `quinn` in a thread
//! of their own with a one-thread tokio runtime. [`H3Behavior::Hello`] is served by the
//! `h3` crate (an HTTP/3 implementation the engine did not write: its SETTINGS, QPACK
//! encoding and framing); every other behaviour writes HTTP/3 bytes by hand on quinn's
//! streams, so that it can break the protocol on purpose. Each server counts what it
//! did (connections, requests read, answers, resets, GOAWAYs, closes), so tests check
//! the engine's counts against the server's own.

use bytes::Bytes;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What an HTTP/3 test server does with each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H3Behavior {
    /// 200 with `Hello World!` (12 bytes) and its content-length, served by the `h3`
    /// crate.
    Hello,
    /// The same answer written by hand.
    RawHello,
    /// Requests are numbered server-wide as they arrive; the odd ones are reset
    /// (RESET_STREAM) with this HTTP/3 error code, the even ones answered.
    ResetOdd(u64),
    /// Each connection answers this many requests, then sends GOAWAY naming the next
    /// request's stream: that request and any later one on the connection are left
    /// unprocessed.
    GoawayAfter(u64),
    /// Each connection answers `answers` requests, then closes with the application
    /// error `code` (CONNECTION_CLOSE) at the next.
    CloseAfter { answers: u64, code: u64 },
    /// Each request gets only an interim 103 answer, then the stream ends.
    InterimOnly,
    /// Each request gets HEADERS without `:status`, then the stream ends.
    NoStatus,
    /// Each request gets HEADERS whose field section refers to the dynamic table (the
    /// client allowed none).
    DynamicQpack,
    /// The handshake completes and requests are read, never answered.
    Silent,
    /// As [`H3Behavior::Silent`], with a QUIC idle timeout of this many milliseconds:
    /// once the requests are acknowledged nothing more is sent, and the connection ends
    /// silently when the idle timeout passes.
    SilentIdle(u32),
    /// The server allows no request stream at all (QUIC's initial limit on
    /// bidirectional streams is 0).
    NoStreams,
    /// As [`H3Behavior::Hello`] for a handshake that names the server (SNI); one that names
    /// none has no certificate and is refused with a TLS alert, as a server choosing its
    /// certificate by name refuses a client that connects to an IP address (caddy on a
    /// wildcard UDP socket sends internal_error; rustls sends access_denied).
    NeedsServerName,
    /// The answer written by hand, each one this long after its request was read; a
    /// connection's streams are answered one after another.
    Slow(std::time::Duration),
}

/// A certificate resolver that answers only a handshake naming a server.
#[derive(Debug)]
struct ByName(Arc<dyn rustls::server::ResolvesServerCert>);

impl rustls::server::ResolvesServerCert for ByName {
    fn resolve(
        &self,
        hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        hello.server_name()?;
        self.0.resolve(hello)
    }
}

/// What a server did, counted as it did it.
#[derive(Debug, Default)]
struct Stats {
    connections: AtomicU64,
    requests: AtomicU64,
    answers: AtomicU64,
    resets: AtomicU64,
    goaways: AtomicU64,
    closes: AtomicU64,
}

/// A running HTTP/3 test server; it stops when dropped.
pub struct H3Server {
    addr: SocketAddr,
    endpoint: quinn::Endpoint,
    stats: Arc<Stats>,
}

/// The answer of [`H3Behavior::RawHello`]: HEADERS (`:status: 200` as a static index,
/// `content-length: 12` as a static name with a literal value), then DATA.
const HELLO_ANSWER: &[u8] = &[
    0x01, 0x07, 0x00, 0x00, 0xd9, 0x54, 0x02, b'1', b'2', //
    0x00, 0x0c, b'H', b'e', b'l', b'l', b'o', b' ', b'W', b'o', b'r', b'l', b'd', b'!',
];

/// HEADERS with only `:status: 103` (static index 24).
const INTERIM: &[u8] = &[0x01, 0x03, 0x00, 0x00, 0xd8];

/// HEADERS with `content-type: text/plain` (static index 53) and no `:status`.
const NO_STATUS: &[u8] = &[0x01, 0x03, 0x00, 0x00, 0xf5];

/// HEADERS whose only field line is an index into the dynamic table.
const DYNAMIC: &[u8] = &[0x01, 0x03, 0x00, 0x00, 0x80];

impl H3Server {
    /// Starts a server with `behavior` on `127.0.0.1`, port 0.
    pub fn start(behavior: H3Behavior) -> io::Result<H3Server> {
        let identity = crate::tls::identity()?;
        let mut tls = (*identity.config).clone();
        tls.alpn_protocols = vec![b"h3".to_vec()];
        if behavior == H3Behavior::NeedsServerName {
            tls.cert_resolver = Arc::new(ByName(tls.cert_resolver.clone()));
        }
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
            .map_err(|e| io::Error::other(e.to_string()))?;
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let mut transport = quinn::TransportConfig::default();
        match behavior {
            H3Behavior::NoStreams => {
                transport.max_concurrent_bidi_streams(0u32.into());
            }
            H3Behavior::SilentIdle(ms) => {
                transport.max_idle_timeout(Some(quinn::VarInt::from_u32(ms).into()));
            }
            _ => {}
        }
        config.transport_config(Arc::new(transport));
        let stats = Arc::new(Stats::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let st = stats.clone();
        std::thread::Builder::new()
            .name("h3-testserver".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    let endpoint = match quinn::Endpoint::server(config, ([127, 0, 0, 1], 0).into())
                    {
                        Ok(e) => e,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = tx.send(Ok(endpoint.clone()));
                    while let Some(incoming) = endpoint.accept().await {
                        let st = st.clone();
                        tokio::spawn(async move {
                            if let Ok(conn) = incoming.await {
                                st.connections.fetch_add(1, Ordering::SeqCst);
                                match behavior {
                                    H3Behavior::Hello | H3Behavior::NeedsServerName => {
                                        serve_h3(conn, st).await
                                    }
                                    b => serve_raw(conn, b, st).await,
                                }
                            }
                        });
                    }
                });
            })?;
        let endpoint = rx
            .recv()
            .map_err(|_| io::Error::other("the HTTP/3 test server did not start"))??;
        let addr = endpoint.local_addr()?;
        Ok(H3Server {
            addr,
            endpoint,
            stats,
        })
    }

    /// `https://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    /// The UDP address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The certificate it presents, PEM (for `--cacert`).
    pub fn cert_pem(&self) -> String {
        crate::tls::identity()
            .map(|i| i.cert_pem.clone())
            .unwrap_or_default()
    }

    /// Connections whose handshake completed.
    pub fn connections(&self) -> u64 {
        self.stats.connections.load(Ordering::SeqCst)
    }

    /// Requests read (headers, or the whole stream for the hand-written behaviours).
    pub fn requests(&self) -> u64 {
        self.stats.requests.load(Ordering::SeqCst)
    }

    /// Answers written whole.
    pub fn answers(&self) -> u64 {
        self.stats.answers.load(Ordering::SeqCst)
    }

    /// Request streams reset.
    pub fn resets(&self) -> u64 {
        self.stats.resets.load(Ordering::SeqCst)
    }

    /// GOAWAY frames sent.
    pub fn goaways(&self) -> u64 {
        self.stats.goaways.load(Ordering::SeqCst)
    }

    /// Connections closed with an error code.
    pub fn closes(&self) -> u64 {
        self.stats.closes.load(Ordering::SeqCst)
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        self.endpoint.close(0u32.into(), b"");
    }
}

/// Serves a connection with the `h3` crate: 200 `Hello World!` to every request.
async fn serve_h3(conn: quinn::Connection, st: Arc<Stats>) {
    let Ok(mut h3c) =
        h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await
    else {
        return;
    };
    while let Ok(Some(resolver)) = h3c.accept().await {
        let st = st.clone();
        tokio::spawn(async move {
            let Ok((_req, mut stream)) = resolver.resolve_request().await else {
                return;
            };
            st.requests.fetch_add(1, Ordering::SeqCst);
            let Ok(resp) = http::Response::builder()
                .status(200)
                .header("content-length", "12")
                .body(())
            else {
                return;
            };
            if stream.send_response(resp).await.is_err() {
                return;
            }
            if stream
                .send_data(Bytes::from_static(b"Hello World!"))
                .await
                .is_err()
            {
                return;
            }
            if stream.finish().await.is_ok() {
                st.answers.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
}

/// Serves a connection by hand: our control stream with empty SETTINGS, then each
/// request stream in the order they open, read to its end and handled by `b`.
async fn serve_raw(conn: quinn::Connection, b: H3Behavior, st: Arc<Stats>) {
    let Ok(mut control) = conn.open_uni().await else {
        return;
    };
    if control.write_all(&[0x00, 0x04, 0x00]).await.is_err() {
        return;
    }
    let mut answered = 0u64;
    // Streams never answered are kept open (a dropped stream would end it).
    let mut held = Vec::new();
    let mut gone_away = false;
    while let Ok((mut send, mut recv)) = conn.accept_bi().await {
        if recv.read_to_end(64 * 1024).await.is_err() {
            continue;
        }
        let n = st.requests.fetch_add(1, Ordering::SeqCst);
        if let H3Behavior::Slow(d) = b {
            tokio::time::sleep(d).await;
        }
        let answer: &[u8] = match b {
            H3Behavior::ResetOdd(code) if n % 2 == 1 => {
                let _ = send.reset(quinn::VarInt::from_u64(code).unwrap_or(0u32.into()));
                st.resets.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            H3Behavior::GoawayAfter(k) if answered >= k => {
                if !gone_away {
                    gone_away = true;
                    let id = u64::from(send.id());
                    let mut frame = vec![0x07];
                    let mut v = Vec::new();
                    varint(&mut v, id);
                    frame.push(v.len() as u8);
                    frame.extend_from_slice(&v);
                    let _ = control.write_all(&frame).await;
                    st.goaways.fetch_add(1, Ordering::SeqCst);
                }
                held.push(send);
                continue;
            }
            H3Behavior::CloseAfter { answers, code } if answered >= answers => {
                conn.close(quinn::VarInt::from_u64(code).unwrap_or(0u32.into()), b"");
                st.closes.fetch_add(1, Ordering::SeqCst);
                return;
            }
            H3Behavior::Silent | H3Behavior::SilentIdle(_) => {
                held.push(send);
                continue;
            }
            H3Behavior::InterimOnly => INTERIM,
            H3Behavior::NoStatus => NO_STATUS,
            H3Behavior::DynamicQpack => DYNAMIC,
            _ => HELLO_ANSWER,
        };
        if send.write_all(answer).await.is_ok() && send.finish().is_ok() {
            answered += 1;
            if answer == HELLO_ANSWER {
                st.answers.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    drop(held);
}

/// A QUIC variable-length integer (RFC 9000 §16), at most 2^30 − 1 here.
fn varint(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0x3f => out.push(v as u8),
        0x40..=0x3fff => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        _ => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
    }
}
