//! One connection's thread: reads requests, performs the behaviour's [`Reply`] for each,
//! and closes or resets the socket when the behaviour says so.
//!
//! Seams: [`crate::server`] accepts the socket, makes a [`Conn`] (which registers the
//! socket so a dropped server can shut it down) and runs [`Conn::serve`] on a thread of
//! its own. Parsing lives in [`crate::request`], the bytes to send in
//! [`crate::behavior`]. Blocking I/O without timeouts (but `CloseIdle`'s keep-alive
//! timeout): a thread blocked on its socket is woken by the server shutting the socket
//! down, a stalled one by the stop signal.
//!
//! Every byte goes out through [`Conn::put`], which honours the server's
//! [`Delivery`] and updates the truth counters just before the write that carries a
//! counted byte (an answer's last byte, an unsolicited occurrence's first).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ServerConnection, StreamOwned};

use crate::behavior::{self, plan, Behavior, Numbers, Outcome, Reply, Then};
use crate::request::{self, HeadError, Request, MAX_HEAD};
use crate::shared::{Delivery, Shared};

/// Bytes asked of each `read`.
const READ_CHUNK: usize = 8 * 1024;

/// Longest wait, after a clean close was started, for the client to close its side
/// (so that unread request bytes do not turn the FIN into a RST).
const LINGER: Duration = Duration::from_secs(1);

/// Pause between the 3-byte writes of a trickled head.
const TRICKLE_PAUSE: Duration = Duration::from_millis(1);

/// The filler written by `Big`, `ShortBody` and `ResetMidBody` bodies.
static FILL: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// What waiting for the next request head ended with.
enum Head {
    /// A parsed head and its text.
    Parsed(Request, String),
    /// A head that cannot be served, and why.
    Refused(HeadError),
    /// The client closed (or the server stopped) before a head was complete.
    Closed,
    /// No byte of a new request arrived before the keep-alive timeout.
    Idle,
}

/// Which bytes of a planned stream, by offset, move the truth counters when written.
#[derive(Default)]
struct Tally {
    /// Offset of the last byte of a complete answer.
    answer_last: Option<usize>,
    /// Offset of the first byte of an unsolicited occurrence.
    unsolicited_first: Option<usize>,
}

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
    /// Requests read that have neither been answered nor settled otherwise; they
    /// count as dropped when the connection ends.
    unanswered: u64,
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
            unanswered: 0,
            stream,
        }
    }

    /// Serves requests until the client closes, an I/O error happens, the behaviour
    /// closes, or the server stops.
    pub fn serve(mut self) {
        // An error only ends this connection; the client sees the close.
        let _ = self.run();
        self.settle();
    }

    fn run(&mut self) -> io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let behavior = shared.behavior();
        let mut buf = Vec::with_capacity(READ_CHUNK);
        let mut out = Vec::with_capacity(256);
        if !self.on_accept(behavior, &mut out)? {
            return Ok(());
        }
        let idle = behavior::idle_timeout(behavior);
        let mut idle_since = Instant::now();
        let mut on_connection = 0;
        loop {
            let deadline = idle.map(|after| idle_since + after);
            let (req, head) = match self.read_head(&mut buf, deadline)? {
                Head::Parsed(req, head) => (req, head),
                Head::Closed => return Ok(()),
                Head::Idle => {
                    self.close_cleanly();
                    return Ok(());
                }
                Head::Refused(err) => {
                    behavior::refusal(err.status(), &mut out);
                    self.put(0, &out, &Tally::default())?;
                    self.stream.flush()?;
                    self.close_cleanly();
                    return Ok(());
                }
            };
            if behavior::race_after(behavior)
                .is_some_and(|after| on_connection > 0 && idle_since.elapsed() >= after)
            {
                self.close_cleanly();
                return Ok(());
            }
            if req.expect_continue && req.content_length > 0 && *behavior != Behavior::NeverAnswer {
                self.put(0, b"HTTP/1.1 100 Continue\r\n\r\n", &Tally::default())?;
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
            self.unanswered += 1;
            out.clear();
            let mut reply = plan(behavior, &req, numbers, &mut out);
            if reply.close_delimited && !self.notifies() {
                // Without close_notify the client cannot know the body ended here.
                reply.outcome = Outcome::Broken;
            }
            if reply.outcome == Outcome::Broken {
                self.unanswered -= 1;
            }
            // Settles the request once its answer is written, even if a later step
            // (a pause before unsolicited bytes) fails.
            self.send(&out, &reply)?;
            idle_since = Instant::now();
            match reply.then {
                Then::KeepAlive => {}
                Then::Close => {
                    self.close_cleanly();
                    return Ok(());
                }
                Then::Reset => {
                    self.settle();
                    self.leave();
                    return net_reset(self.stream.tcp());
                }
            }
        }
    }

    /// What the behaviour does once the connection is accepted: sends its unasked bytes,
    /// if any, and says whether to go on reading requests (else the connection is closed).
    fn on_accept(&mut self, behavior: &Behavior, out: &mut Vec<u8>) -> io::Result<bool> {
        if behavior::on_accept(behavior, out) == Then::Close {
            self.close_cleanly();
            return Ok(false);
        }
        if !out.is_empty() {
            let tally = Tally {
                unsolicited_first: Some(0),
                ..Tally::default()
            };
            self.put(0, out, &tally)?;
            self.stream.flush()?;
        }
        Ok(true)
    }

    /// Reads until a complete head is in `buf`, removes it from `buf` and parses it
    /// (keeping its text for [`Shared::record`]). With an `idle` deadline, gives up
    /// when no byte of the head has arrived by then.
    fn read_head(&mut self, buf: &mut Vec<u8>, idle: Option<Instant>) -> io::Result<Head> {
        let mut scanned = 0;
        loop {
            let skip = request::leading_empty_lines(buf);
            if skip > 0 {
                buf.drain(..skip);
                scanned = 0;
            }
            if let Some(end) = request::head_end(&buf[scanned..]).map(|e| e + scanned) {
                if end > MAX_HEAD {
                    return Ok(Head::Refused(HeadError::TooLarge));
                }
                let parsed = match request::parse_head(&buf[..end]) {
                    Ok(req) => Head::Parsed(req, String::from_utf8_lossy(&buf[..end]).into_owned()),
                    Err(err) => Head::Refused(err),
                };
                buf.drain(..end);
                return Ok(parsed);
            }
            if buf.len() > MAX_HEAD {
                return Ok(Head::Refused(HeadError::TooLarge));
            }
            scanned = buf.len().saturating_sub(3);
            let deadline = idle.filter(|_| buf.is_empty());
            match self.fill_before(buf, deadline)? {
                None => return Ok(Head::Idle),
                Some(0) => return Ok(Head::Closed),
                Some(_) => {}
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

    /// Like [`Conn::fill`], but with a `deadline` gives up (`None`) when nothing has
    /// arrived by then.
    fn fill_before(
        &mut self,
        buf: &mut Vec<u8>,
        deadline: Option<Instant>,
    ) -> io::Result<Option<usize>> {
        let Some(deadline) = deadline else {
            return self.fill(buf).map(Some);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        self.stream.tcp().set_read_timeout(Some(left))?;
        let result = self.fill(buf);
        self.stream.tcp().set_read_timeout(None)?;
        match result {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Ok(None)
            }
            other => other.map(Some),
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

    /// Writes one planned answer: the planned bytes `out`, then `reply.fill` filler
    /// bytes, then (for an endless body) chunks until a write fails.
    fn send(&mut self, out: &[u8], reply: &Reply) -> io::Result<()> {
        if !reply.delay.is_zero() && self.shared.wait_for_stop(reply.delay) {
            return Err(io::Error::other("server stopped"));
        }
        if let Some(service) = reply.queued {
            let done = self.shared.take_turn(service);
            let left = done.saturating_duration_since(std::time::Instant::now());
            if !left.is_zero() && self.shared.wait_for_stop(left) {
                return Err(io::Error::other("server stopped"));
            }
        }
        let total = out.len() + reply.fill;
        let tail = total - reply.unsolicited;
        let tally = Tally {
            answer_last: (reply.outcome == Outcome::Answer && tail > 0).then(|| tail - 1),
            unsolicited_first: (reply.unsolicited > 0).then_some(tail),
        };
        // Where the unsolicited tail must wait, if it must.
        let pause = (!reply.pause.is_zero()).then_some((tail, reply.pause));
        let (trickled, rest) = out.split_at(reply.trickle);
        for (i, piece) in trickled.chunks(3).enumerate() {
            self.put(3 * i, piece, &tally)?;
            self.stream.flush()?;
            std::thread::sleep(TRICKLE_PAUSE);
        }
        self.put_pausing(reply.trickle, rest, pause, &tally)?;
        let mut at = out.len();
        let mut left = reply.fill;
        while left > 0 {
            let n = left.min(FILL.len());
            self.put_pausing(at, &FILL[..n], pause, &tally)?;
            at += n;
            left -= n;
        }
        self.stream.flush()?;
        if reply.endless {
            // Only failure ends it: the client gone, or the socket shut down by a stop.
            let chunk = behavior::endless_chunk();
            loop {
                self.put(0, &chunk, &Tally::default())?;
            }
        }
        Ok(())
    }

    /// [`Conn::put`], first splitting `bytes` where a `pause` falls inside them and
    /// waiting there (cut short, with an error, when the server stops).
    fn put_pausing(
        &mut self,
        at: usize,
        bytes: &[u8],
        pause: Option<(usize, Duration)>,
        tally: &Tally,
    ) -> io::Result<()> {
        match pause {
            Some((offset, wait)) if (at..at + bytes.len()).contains(&offset) => {
                let (before, after) = bytes.split_at(offset - at);
                self.put(at, before, tally)?;
                self.stream.flush()?;
                if self.shared.wait_for_stop(wait) {
                    return Err(io::Error::other("server stopped"));
                }
                self.put(offset, after, tally)
            }
            _ => self.put(at, bytes, tally),
        }
    }

    /// Writes `bytes`, which sit at offset `at` of a planned stream, as the server's
    /// [`Delivery`] says: in one `write_all`, or one byte per write with a flush and a
    /// yield after each.
    fn put(&mut self, at: usize, bytes: &[u8], tally: &Tally) -> io::Result<()> {
        match self.shared.delivery() {
            Delivery::Whole => self.write_counted(at, bytes, tally),
            Delivery::Bytewise => {
                for (i, byte) in bytes.iter().enumerate() {
                    self.write_counted(at + i, std::slice::from_ref(byte), tally)?;
                    self.stream.flush()?;
                    std::thread::yield_now();
                }
                Ok(())
            }
        }
    }

    /// One `write_all`, with the counters the bytes stand for updated just before it
    /// (and an answer uncounted if the write fails; once it succeeds, the request is
    /// no longer unanswered).
    fn write_counted(&mut self, at: usize, bytes: &[u8], tally: &Tally) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let range = at..at + bytes.len();
        let answer = tally.answer_last.is_some_and(|i| range.contains(&i));
        if answer {
            self.shared.count_answer(false);
        }
        if tally.unsolicited_first.is_some_and(|i| range.contains(&i)) {
            self.shared.count_unsolicited();
        }
        let result = self.stream.write_all(bytes);
        if answer {
            match result {
                Ok(()) => self.unanswered = self.unanswered.saturating_sub(1),
                Err(_) => self.shared.count_answer(true),
            }
        }
        result
    }

    /// Whether a clean close tells the client the stream ended: always over plain TCP
    /// (the FIN does), over TLS only with `close_notify`.
    fn notifies(&self) -> bool {
        matches!(self.stream, Stream::Plain(_)) || self.shared.close_notify
    }

    /// Closes cleanly: counts the unanswered requests as dropped, TLS close_notify (unless
    /// the server omits it), FIN, then waits (at most [`LINGER`]) for the client's FIN
    /// while discarding what it still sends.
    fn close_cleanly(&mut self) {
        self.settle();
        self.leave();
        let notify = self.shared.close_notify;
        if let Stream::Tls(tls) = &mut self.stream {
            // Without close_notify nothing is left to send: every write was flushed (and a
            // flush would wait for a handshake the client has not begun).
            if notify {
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
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

    /// Counts the requests still unanswered as dropped (once each): the connection is
    /// about to end.
    fn settle(&mut self) {
        self.shared
            .count_dropped(std::mem::take(&mut self.unanswered));
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

/// Arms `SO_LINGER` 0 so that closing `tcp` (when the connection is dropped) sends RST,
/// once every byte written has left (for at most [`LINGER`]): the reset must not
/// discard bytes still queued, as it would in [`Delivery::Bytewise`], where hundreds of
/// one-byte segments can wait on the congestion window.
fn net_reset(tcp: &TcpStream) -> io::Result<()> {
    let deadline = Instant::now() + LINGER;
    while crate::net::unsent(tcp) > 0 && Instant::now() < deadline {
        std::thread::yield_now();
    }
    crate::net::set_linger_zero(tcp)
}
