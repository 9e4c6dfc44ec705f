//! [`TestServer`]: the listener, its accept thread, the counters tests read, and the
//! stop sequence run when the handle is dropped.
//!
//! Seams: tests hold a `TestServer`; the accept thread hands each socket to a
//! [`crate::conn::Conn`] on a thread of its own. Connection threads report through
//! [`crate::shared::Shared`]: counters, the last request, and the registry of open sockets that the
//! stop sequence shuts down so that every thread ends without timeouts or polling.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::behavior::Behavior;
use crate::conn::{Conn, Stream};
use crate::net;
use crate::shared::{lock, Delivery, Shared};
use crate::tls::{self, Identity};

/// Stack of a plain connection thread: small, so 10,000 connections stay cheap.
const PLAIN_STACK: usize = 64 * 1024;

/// Stack of a TLS connection thread: the handshake needs more.
const TLS_STACK: usize = 256 * 1024;

/// Longest wait, when a server is dropped, for its connection threads to end.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Whether a server speaks plain HTTP or HTTPS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Plain HTTP/1.1 over TCP.
    Plain,
    /// HTTP/1.1 over TLS with a self-signed certificate for `localhost` and `127.0.0.1`.
    Tls,
    /// As `Tls`, but every close the behaviour makes ends the TCP connection (FIN)
    /// without TLS `close_notify`, as a careless server or an attacker cutting the
    /// stream would: a client cannot tell where a close-delimited body ended.
    TlsWithoutCloseNotify,
}

/// An HTTP/1.1 server on `127.0.0.1` answering every request with one [`Behavior`].
///
/// Dropping it stops accepting, shuts down every open connection and waits (up to 5 s)
/// for all its threads to end.
///
/// # Truth counters
///
/// [`requests`](TestServer::requests), [`answers`](TestServer::answers),
/// [`unsolicited`](TestServer::unsolicited), [`dropped`](TestServer::dropped) and
/// [`connections`](TestServer::connections) count server-wide, for the engine's tests to
/// compare with what the client counted. Each one is updated *before* the bytes (or the
/// close) it stands for are handed to the kernel, so once a client has received an
/// answer, an unsolicited byte or a close, the matching count already includes it. The
/// converse does not hold: bytes written to a connection the client has already given
/// up on are counted but never read. Every request read ends up in exactly one of
/// `answers`, `dropped`, or "broken" (a request settled with bytes that are no complete
/// answer: `Garbage`, a truncated body, an endless body), so once every connection has
/// ended ([`wait_idle`](TestServer::wait_idle)),
/// `requests == answers + dropped + broken`.
pub struct TestServer {
    shared: Arc<Shared>,
    listener: Arc<TcpListener>,
    addr: SocketAddr,
    tls: Option<&'static Identity>,
    accept: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a plain HTTP server on `127.0.0.1` with a port chosen by the OS.
    pub fn start(behavior: Behavior) -> io::Result<TestServer> {
        TestServer::start_on(0, behavior, Transport::Plain)
    }

    /// Starts a plain HTTP server on `127.0.0.1` with a port chosen by the OS, sending
    /// its bytes as `delivery` says.
    pub fn start_with(behavior: Behavior, delivery: Delivery) -> io::Result<TestServer> {
        TestServer::start_on_with(0, behavior, Transport::Plain, delivery)
    }

    /// Starts an HTTPS server on `127.0.0.1` with a port chosen by the OS; see
    /// [`TestServer::certificate_der`] for the certificate to trust.
    pub fn start_tls(behavior: Behavior) -> io::Result<TestServer> {
        TestServer::start_on(0, behavior, Transport::Tls)
    }

    /// Starts a server on `127.0.0.1:port` (0: a port chosen by the OS).
    pub fn start_on(port: u16, behavior: Behavior, transport: Transport) -> io::Result<TestServer> {
        TestServer::start_on_with(port, behavior, transport, Delivery::Whole)
    }

    /// Starts a server on `127.0.0.1:port` (0: a port chosen by the OS) that sends its
    /// bytes as `delivery` says. Over TLS, [`Delivery::Bytewise`] makes one TLS record
    /// per byte.
    pub fn start_on_with(
        port: u16,
        behavior: Behavior,
        transport: Transport,
        delivery: Delivery,
    ) -> io::Result<TestServer> {
        let tls = match transport {
            Transport::Plain => None,
            Transport::Tls | Transport::TlsWithoutCloseNotify => Some(tls::identity()?),
        };
        let slow = matches!(behavior, Behavior::SlowAccept { .. });
        let listener = Arc::new(net::listen_loopback(port, slow)?);
        let addr = listener.local_addr()?;
        let close_notify = transport != Transport::TlsWithoutCloseNotify;
        let shared = Arc::new(Shared::new(behavior, delivery, close_notify));
        let accept = {
            let listener = Arc::clone(&listener);
            let shared = Arc::clone(&shared);
            let config = tls.map(|identity| Arc::clone(&identity.config));
            thread::Builder::new()
                .name("testserver-accept".into())
                .stack_size(PLAIN_STACK)
                .spawn(move || accept_loop(&listener, &shared, config))?
        };
        Ok(TestServer {
            shared,
            listener,
            addr,
            tls,
            accept: Some(accept),
        })
    }

    /// The address the server listens on (`127.0.0.1` and its port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL of `path` on this server, e.g. `http://127.0.0.1:PORT/path` (`https`
    /// over TLS). A `/` is put in front of `path` when it has none.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("{scheme}://{}{slash}{path}", self.addr)
    }

    /// Complete requests (head and body) received so far, over all connections.
    /// Heads refused with 400, 431 or 501 and requests whose body never arrived in full
    /// are not counted.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Complete final answers the server has written in reply to a request: one per
    /// request answered. Counted just before the `write` that carries the answer's last
    /// byte, and uncounted again if that write fails (so a failing write may show one
    /// extra for an instant). Not counted: interim answers (`100 Continue`, `103`, a
    /// `Fixed` 1xx other than 101), refusals of unframeable heads (400, 431, 501),
    /// unsolicited answers, and the broken ones: `Garbage`, the truncated bodies of
    /// `ShortBody` and `ResetMidBody`, the endless body of `EndlessChunked`, the
    /// close-delimited body of `Http10CloseDelimited` over
    /// [`Transport::TlsWithoutCloseNotify`] (a `HEAD` request's complete head counts,
    /// though). Upgrade's `101` counts: it is the final
    /// word on its request. Error statuses (`FailEvery`, `Fixed`) count like any other.
    pub fn answers(&self) -> u64 {
        self.shared.answers.load(Ordering::SeqCst)
    }

    /// Occurrences of bytes no request asked for, one per occurrence whatever its
    /// length: `ExtraResponse`'s second answer, `AnswerFirst`'s answer on accept,
    /// `BodyAfterBodiless`'s forbidden body, the 7 bytes past `LongBody`'s announced
    /// length, and a body `Fixed` sends with a status that forbids one (1xx, 204, 304).
    /// Counted just before the `write` that carries the occurrence's first byte (so a
    /// client that has seen any of it finds it counted), and not uncounted if a write
    /// fails.
    pub fn unsolicited(&self) -> u64 {
        self.shared.unsolicited.load(Ordering::SeqCst)
    }

    /// Requests read completely that never got a final answer, counted when that is
    /// settled: `DropAfterRead`'s dropped requests just before the server's close
    /// starts; the requests of `NeverAnswer`, of `ServeFirst`'s unserved connections and
    /// those answered by a `Fixed` 1xx (other than 101) when their connection ends,
    /// whoever ends it (client close, server stop, an error); likewise a request whose
    /// answer could not be written in full because the client went away, or whose
    /// delayed answer was cut short by the server stopping. Requests the server never
    /// read (pipelined behind a close, or a head refused) are not counted.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::SeqCst)
    }

    /// Connections accepted so far, counted when the server accepts them (a connection
    /// still in the kernel's accept queue is not counted yet).
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Waits until no accepted connection is open any more (each has ended and
    /// settled its counts), or `timeout` passes; `true` if none is open. After a client
    /// has closed all its connections this makes the counters final, except for
    /// connections the server had not accepted yet. A connection the server closes
    /// stays open here until the client closes too, or for at most 1 s after the
    /// server's close.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let live = lock(&self.shared.live);
        let (live, _) = self
            .shared
            .live_emptied
            .wait_timeout_while(live, timeout, |live| !live.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        live.is_empty()
    }

    /// Highest number of connections open at the same time so far. A connection counts
    /// from its accept until the server closes it or sees the client's close, so a
    /// client that closes and reconnects at once may briefly be counted twice.
    pub fn max_concurrent(&self) -> u64 {
        self.shared.max_open.load(Ordering::SeqCst)
    }

    /// Every distinct address the accepted connections came from, in order.
    pub fn peer_ips(&self) -> Vec<std::net::IpAddr> {
        lock(&self.shared.peers).iter().copied().collect()
    }

    /// Body length, in bytes, of the latest complete request (its `Content-Length`).
    pub fn last_request_body_len(&self) -> usize {
        lock(&self.shared.last).1
    }

    /// The head of the latest complete request as received: request line and header
    /// lines, each ending in `\r\n`, then the empty line (non-UTF-8 bytes replaced).
    /// Empty before the first request.
    pub fn last_request_head(&self) -> String {
        lock(&self.shared.last).0.clone()
    }

    /// The server's self-signed certificate (DER) to add to a client's trusted roots;
    /// `None` for a plain server. Valid for `localhost` and `127.0.0.1`.
    pub fn certificate_der(&self) -> Option<&[u8]> {
        self.tls.map(|identity| identity.cert_der.as_slice())
    }

    /// The same certificate as [`TestServer::certificate_der`], PEM-encoded.
    pub fn certificate_pem(&self) -> Option<&str> {
        self.tls.map(|identity| identity.cert_pem.as_str())
    }
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("url", &self.url("/"))
            .field("behavior", &self.shared.behavior)
            .field("delivery", &self.shared.delivery)
            .finish_non_exhaustive()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        *lock(&self.shared.stopped) = true;
        self.shared.stop.notify_all();
        // Wakes the accept thread: on Linux a blocked accept fails with EINVAL.
        net::shutdown_fd(self.listener.as_raw_fd());
        if self.shared.behavior.one_at_a_time() {
            // The accept thread serves the connection it accepted: it ends with it.
            for fd in lock(&self.shared.live).values() {
                net::shutdown_fd(*fd);
            }
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        // No new connections now. Every registered descriptor is still open: a
        // connection unregisters under this lock before closing its socket.
        let live = lock(&self.shared.live);
        for fd in live.values() {
            net::shutdown_fd(*fd);
        }
        let _ = self
            .shared
            .live_emptied
            .wait_timeout_while(live, STOP_WAIT, |live| !live.is_empty());
    }
}

/// Accepts connections until the server stops, one thread each.
fn accept_loop(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    loop {
        let accepted = listener.accept();
        if *lock(&shared.stopped) {
            return;
        }
        let tcp = match accepted {
            Ok((tcp, peer)) => {
                lock(&shared.peers).insert(peer.ip());
                tcp
            }
            Err(e) => {
                if !matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                ) {
                    // Out of descriptors or memory: let connections end, then retry.
                    thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
        };
        let id = shared.connections.fetch_add(1, Ordering::SeqCst);
        let _ = tcp.set_nodelay(true);
        let (stream, stack) = match &tls {
            None => (Stream::Plain(tcp), PLAIN_STACK),
            Some(config) => match Stream::tls(tcp, Arc::clone(config)) {
                Ok(stream) => (stream, TLS_STACK),
                Err(_) => continue,
            },
        };
        let conn = Conn::new(Arc::clone(shared), id, stream);
        if shared.behavior.one_at_a_time() {
            // One connection at a time: the next is accepted once this one is done.
            conn.serve();
            continue;
        }
        // If the thread cannot be made, the closure and the Conn in it are dropped,
        // which unregisters and closes the socket.
        let _ = thread::Builder::new()
            .stack_size(stack)
            .spawn(move || conn.serve());
        if let Behavior::SlowAccept { every, .. } = shared.behavior {
            // The pause is the behaviour: connects meanwhile wait in the kernel.
            thread::sleep(every);
        }
    }
}
