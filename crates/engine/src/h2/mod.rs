//! HTTP/2 for the engine: h2c with prior knowledge for `http://`, ALPN `h2` over TLS for
//! `https://`, many concurrent streams per connection.
//!
//! Seams: [`frame`] cuts bytes into frames and writes ours; [`request`] encodes the
//! request's header list once, three ways; [`conn`] is one connection's protocol state
//! without I/O (settings, streams, flow control, header blocks decoded by [`hpack`]);
//! [`worker`] drives a worker's connections on the event loop every protocol shares
//! ([`crate::event_loop`]: the same mio loop, pacer, recorder and transport as HTTP/1.1);
//! [`check`] is the pre-flight that refuses a server that does not speak HTTP/2 before the
//! run starts. [`grpc`] is gRPC on these streams: a call's messages and the status in its
//! trailers, which a stream carries beside its exchange.
//!
//! Why our own framing on the existing event loop rather than the `h2` crate on a small
//! async runtime per worker: the `h2` crate needs tokio (a runtime, a reactor and a task
//! per connection, a waker per stream, `Bytes` and `http::Request`/`Response` per request)
//! while the engine's rule is no allocation per request and one epoll loop per thread that
//! also keeps the pacer's schedule and every deadline. Here a request costs the copy of a
//! prepared HEADERS frame (one byte per header field after the first stream, see
//! [`request`]) into a buffer written once per read, and an answer costs a frame parse and
//! an HPACK decode of the status and content-length. The figures that decided it (CPU per
//! request of both, measured against nginx) are in `bench/RESULTS.md`.

pub mod conn;
pub mod frame;
pub mod grpc;
pub mod hpack;
pub mod request;
pub(crate) mod users;
pub(crate) mod worker;

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// Why a server is not taken for an HTTP/2 server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// It answered the preface in HTTP/1.x.
    #[error("it answered the HTTP/2 preface in HTTP/1.x: it does not speak h2c with prior knowledge (enable HTTP/2 on this port, e.g. nginx's `listen PORT http2;`, or drop --http2)")]
    Http1,
    /// Its first frame was not SETTINGS, or its bytes are not frames.
    #[error("its first bytes are not an HTTP/2 SETTINGS frame: it does not speak HTTP/2 on this port (drop --http2)")]
    NotSettings,
    /// It closed the connection at the preface.
    #[error("it closed the connection at the HTTP/2 preface: it does not speak h2c with prior knowledge (drop --http2)")]
    Closed,
    /// TLS did not negotiate `h2`.
    #[error("TLS negotiated {0} instead of h2 (ALPN): the server does not offer HTTP/2 on this port (drop --http2)")]
    Alpn(String),
    /// No answer in time.
    #[error("no answer to the HTTP/2 preface within {0:?}")]
    Silent(Duration),
}

/// A blocking stream the pre-flight speaks over (TCP or a unix socket): its read timeout
/// can be changed, and its sending side shut.
pub trait Blocking: Read + Write {
    /// Sets the read timeout (`None`: none).
    fn read_timeout(&self, t: Option<Duration>) -> io::Result<()>;
    /// Shuts the sending side (a FIN after what was written).
    fn shut_write(&self) -> io::Result<()>;
}

impl Blocking for std::net::TcpStream {
    fn read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
    fn shut_write(&self) -> io::Result<()> {
        self.shutdown(std::net::Shutdown::Write)
    }
}

impl Blocking for std::os::unix::net::UnixStream {
    fn read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
    fn shut_write(&self) -> io::Result<()> {
        self.shutdown(std::net::Shutdown::Write)
    }
}

/// How long the pre-flight waits for more of the server's frames once the server has
/// acknowledged our SETTINGS and is quiet: frames sent right after its preface (before its
/// acknowledgement, or just after) are read, and a connection error in them answered with
/// its GOAWAY, before the polite close.
const QUIET: Duration = Duration::from_millis(20);

/// The longest the pre-flight's close takes: reading the server's first frames, then,
/// after our GOAWAY, waiting for the server to close.
const CLOSING: Duration = Duration::from_secs(1);

/// Sends the preface and our SETTINGS on a blocking stream (whose read timeout is
/// `timeout`) and reads the server's first frame header: a server that does not speak
/// HTTP/2 is refused here, never fallen back from. Then the connection is closed as a
/// client should (RFC 9113 §6.8), so the server never sees a reset: what the server sends
/// next goes through the connection's state machine ([`conn::Connection`], for `req`)
/// until it has acknowledged our SETTINGS and is then quiet for [`QUIET`], GOAWAY goes
/// with the code of a connection error found in it (else NO_ERROR), our side is shut and
/// the rest is read until the server closes, all within [`CLOSING`].
pub fn check<S: Blocking + ?Sized>(
    stream: &mut S,
    timeout: Duration,
    req: &request::Prepared,
) -> Result<(), Refusal> {
    let mut c = conn::Connection::new(1, None);
    c.start();
    if stream.write_all(&c.out).is_err() {
        return Err(Refusal::Closed);
    }
    c.out.clear();
    let mut got = [0u8; 9];
    let mut n = 0;
    let began = Instant::now();
    while n < got.len() {
        match stream.read(&mut got[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Refusal::Silent(began.elapsed().max(timeout)));
            }
            Err(_) => break,
        }
    }
    if got[..n].starts_with(b"HTTP/") {
        return Err(Refusal::Http1);
    }
    if n < got.len() {
        return Err(Refusal::Closed);
    }
    let h = frame::Head::parse(&got);
    let verdict = if h.kind() != frame::Kind::Settings || h.stream != 0 || h.ack() {
        Err(Refusal::NotSettings)
    } else {
        Ok(())
    };
    close(stream, &mut c, &got, req);
    verdict
}

/// Closes the pre-flight connection politely; see [`check`]. Errors of the socket end
/// it quietly: the verdict is already made.
fn close<S: Blocking + ?Sized>(
    stream: &mut S,
    c: &mut conn::Connection,
    first: &[u8],
    req: &request::Prepared,
) {
    let end = Instant::now() + CLOSING;
    let mut buf = vec![0u8; 16 * 1024];
    let mut fed = c.feed(first, req, Instant::now());
    while fed.is_ok() {
        // Until the acknowledgement, as long as the close may take; then a short quiet.
        let left = end.saturating_duration_since(Instant::now());
        let wait = if c.acked { left.min(QUIET) } else { left };
        if wait.is_zero() || stream.read_timeout(Some(wait)).is_err() {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => fed = c.feed(&buf[..k], req, Instant::now()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
        // Acknowledgements (SETTINGS, PING) go as the server expects them; after an
        // error, the GOAWAY goes below.
        if fed.is_ok() {
            if stream.write_all(&c.out).is_err() || stream.flush().is_err() {
                return;
            }
            c.out.clear();
        }
    }
    if fed.is_ok() {
        frame::goaway(&mut c.out, frame::NO_ERROR);
    }
    // On an error the connection wrote its GOAWAY with the error's code.
    if stream.write_all(&c.out).is_err() || stream.flush().is_err() {
        return;
    }
    let _ = stream.shut_write();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
