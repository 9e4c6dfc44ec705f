//! HTTP/2 for the engine: h2c with prior knowledge for `http://`, ALPN `h2` over TLS for
//! `https://`, many concurrent streams per connection.
//!
//! Seams: [`frame`] cuts bytes into frames and writes ours; [`request`] encodes the
//! request's header list once, three ways; [`conn`] is one connection's protocol state
//! without I/O (settings, streams, flow control, header blocks decoded by [`hpack`]);
//! [`worker`] drives a worker's connections on the event loop every protocol shares
//! ([`crate::event_loop`]: the same mio loop, pacer, recorder and transport as HTTP/1.1);
//! [`check`] is the pre-flight that refuses a server that does not speak HTTP/2 before the
//! run starts.
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
pub mod hpack;
pub mod request;
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

/// Sends the preface and our SETTINGS on a blocking stream and reads the server's first
/// frame header: a server that does not speak HTTP/2 is refused here, never fallen back
/// from.
pub fn check<S: Read + Write + ?Sized>(stream: &mut S, timeout: Duration) -> Result<(), Refusal> {
    let mut c = conn::Connection::new(1, None);
    c.start();
    if stream.write_all(&c.out).is_err() {
        return Err(Refusal::Closed);
    }
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
    if h.kind() != frame::Kind::Settings || h.stream != 0 || h.ack() {
        return Err(Refusal::NotSettings);
    }
    Ok(())
}
