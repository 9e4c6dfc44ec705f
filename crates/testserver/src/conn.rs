//! One connection's thread: reads requests, performs the behaviour's [`Reply`] for each,
//! and closes or resets the socket when the behaviour says so.
//!
//! Seams: [`crate::server`] accepts the socket, makes a [`Conn`] (which registers the
//! socket so a dropped server can shut it down) and runs [`Conn::serve`] on a thread of
//! its own. Parsing lives in [`crate::request`], the bytes to send in
//! [`crate::behavior`]. Blocking I/O without timeouts: a thread blocked on its socket
//! is woken by the server shutting the socket down, a stalled one by the stop signal.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ServerConnection, StreamOwned};

use crate::behavior::{self, plan, Behavior, Numbers, Reply, Then};
use crate::request::{self, HeadError, Request, MAX_HEAD};
use crate::server::Shared;

/// Bytes asked of each `read`.
const READ_CHUNK: usize = 8 * 1024;

/// Longest wait, after a clean close was started, for the client to close its side
/// (so that unread request bytes do not turn the FIN into a RST).
const LINGER: Duration = Duration::from_secs(1);

/// Pause between the 3-byte writes of a trickled head.
const TRICKLE_PAUSE: Duration = Duration::from_millis(1);

/// The filler written by `Big`, `ShortBody` and `ResetMidBody` bodies.
static FILL: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// A parsed head and its text, or why it cannot be served.
type ParsedHead = Result<(Request, String), HeadError>;

/// An accepted socket, plain or TLS.
pub(crate) enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP; the handshake happens on the first read.
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Stream {
    /// Wraps `tcp` in a server-side TLS session.
    pub fn tls(tcp: TcpStream, config: Arc<rustls::ServerConfig>) -> io::Result<Stream> {
        let session = ServerConnection::new(config).map_err(io::Error::other)?;
        Ok(Stream::Tls(Box::new(StreamOwned::new(session, tcp))))
    }

    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(tcp) => tcp,
            Stream::Tls(tls) => &tls.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

/// A registered connection. Dropping it leaves the open-connection count, unregisters
/// the socket and then closes it, in that order.
pub(crate) struct Conn {
    shared: Arc<Shared>,
    id: u64,
    counted_open: bool,
    stream: Stream,
}

impl Conn {
    /// Registers `stream` as connection `id` and counts it as open.
    pub fn new(shared: Arc<Shared>, id: u64, stream: Stream) -> Conn {
        shared.enter(id, stream.tcp().as_raw_fd());
        Conn {
            shared,
            id,
            counted_open: true,
            stream,
        }
    }

    /// Serves requests until the client closes, an I/O error happens, the behaviour
    /// closes, or the server stops.
    pub fn serve(mut self) {
        // An error only ends this connection; the client sees the close.
        let _ = self.run();
    }

    fn run(&mut self) -> io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let behavior = shared.behavior();
        let mut buf = Vec::with_capacity(READ_CHUNK);
        let mut out = Vec::with_capacity(256);
        let mut on_connection = 0;
        loop {
            let (req, head) = match self.read_head(&mut buf)? {
                None => return Ok(()),
                Some(Ok(parsed)) => parsed,
                Some(Err(err)) => {
                    behavior::refusal(err.status(), &mut out);
                    self.stream.write_all(&out)?;
                    self.stream.flush()?;
                    self.close_cleanly();
                    return Ok(());
                }
            };
            if req.expect_continue && req.content_length > 0 && *behavior != Behavior::NeverAnswer {
                self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
                self.stream.flush()?;
            }
            if !self.discard_body(&mut buf, req.content_length)? {
                return Ok(());
            }
            on_connection += 1;
            let numbers = Numbers {
                server: shared.record(head, req.content_length),
                connection: on_connection,
                accepted: self.id,
            };
            out.clear();
            let reply = plan(behavior, &req, numbers, &mut out);
            self.send(&out, &reply)?;
            match reply.then {
                Then::KeepAlive => {}
                Then::Close => {
                    self.close_cleanly();
                    return Ok(());
                }
                Then::Reset => {
                    self.leave();
                    return net_reset(self.stream.tcp());
                }
            }
        }
    }

    /// Reads until a complete head is in `buf`, removes it from `buf` and parses it
    /// (keeping its text for [`Shared::record`]). `None` when the client closed first.
    fn read_head(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<ParsedHead>> {
        let mut scanned = 0;
        loop {
            let skip = request::leading_empty_lines(buf);
            if skip > 0 {
                buf.drain(..skip);
                scanned = 0;
            }
            if let Some(end) = request::head_end(&buf[scanned..]).map(|e| e + scanned) {
                if end > MAX_HEAD {
                    return Ok(Some(Err(HeadError::TooLarge)));
                }
                let parsed = request::parse_head(&buf[..end]).map(|req| {
                    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                    (req, head)
                });
                buf.drain(..end);
                return Ok(Some(parsed));
            }
            if buf.len() > MAX_HEAD {
                return Ok(Some(Err(HeadError::TooLarge)));
            }
            scanned = buf.len().saturating_sub(3);
            if self.fill(buf)? == 0 {
                return Ok(None);
            }
        }
    }

    /// Removes `left` body bytes from the front of `buf`, reading more as needed.
    /// `false` when the client closed before the body was complete.
    fn discard_body(&mut self, buf: &mut Vec<u8>, mut left: u64) -> io::Result<bool> {
        loop {
            let have = buf.len() as u64;
            if have >= left {
                buf.drain(..left as usize);
                return Ok(true);
            }
            left -= have;
            buf.clear();
            if self.fill(buf)? == 0 {
                return Ok(false);
            }
        }
    }

    /// Appends one read's worth of bytes to `buf`; 0 at end of stream.
    fn fill(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let old = buf.len();
        buf.resize(old + READ_CHUNK, 0);
        let result = loop {
            match self.stream.read(&mut buf[old..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        buf.truncate(old + *result.as_ref().unwrap_or(&0));
        result
    }

    /// Writes one planned answer.
    fn send(&mut self, out: &[u8], reply: &Reply) -> io::Result<()> {
        if !reply.delay.is_zero() && self.shared.wait_for_stop(reply.delay) {
            return Err(io::Error::other("server stopped"));
        }
        let (trickled, rest) = out.split_at(reply.trickle);
        for piece in trickled.chunks(3) {
            self.stream.write_all(piece)?;
            self.stream.flush()?;
            std::thread::sleep(TRICKLE_PAUSE);
        }
        self.stream.write_all(rest)?;
        let mut left = reply.fill;
        while left > 0 {
            let n = left.min(FILL.len());
            self.stream.write_all(&FILL[..n])?;
            left -= n;
        }
        self.stream.flush()
    }

    /// Closes cleanly: TLS close_notify, FIN, then waits (at most [`LINGER`]) for the
    /// client's FIN while discarding what it still sends.
    fn close_cleanly(&mut self) {
        self.leave();
        if let Stream::Tls(tls) = &mut self.stream {
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
        let mut tcp = self.stream.tcp();
        let _ = tcp.shutdown(Shutdown::Write);
        let _ = tcp.set_read_timeout(Some(LINGER));
        let deadline = Instant::now() + LINGER;
        let mut scratch = [0u8; 2048];
        while Instant::now() < deadline {
            match tcp.read(&mut scratch) {
                Ok(n) if n > 0 => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
    }

    /// Stops counting this connection as open (once).
    fn leave(&mut self) {
        if self.counted_open {
            self.counted_open = false;
            self.shared.leave();
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.leave();
        // Unregister before the fields drop and the socket is closed, so the server
        // never shuts down a descriptor number that was reused.
        self.shared.unregister(self.id);
    }
}

/// Arms `SO_LINGER` 0 so that closing `tcp` (when the connection is dropped) sends RST.
fn net_reset(tcp: &TcpStream) -> io::Result<()> {
    crate::net::set_linger_zero(tcp)
}
