//! [`WsServer`]: a WebSocket test server (RFC 6455, `ws://` or `wss://`) that answers
//! every message by one [`WsBehavior`], hostile ones included, and keeps truth counters
//! for the engine's tests to compare with what the client counted.
//!
//! Design: as the HTTP servers, std sockets, blocking I/O and a thread per connection.
//! The handshake is read and answered (or refused), then each client frame is read whole
//! and unmasked; data messages are reassembled, and each whole message is answered as the
//! behaviour says. Every byte the server writes goes out whole or one per `write`
//! ([`Delivery`]). A client frame that is not masked ends the connection (§5.1).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use base64::Engine as _;

use crate::conn::Stream;
use crate::net;
use crate::shared::{lock, Delivery};
use crate::tls;

/// The close code [`WsBehavior::CloseAfter`] sends: 1011, "internal error".
pub const WS_CLOSE_CODE: u16 = 1011;

/// A breach of RFC 6455 a [`WsBehavior::Breach`] server sends in place of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    /// The answer frame with its mask bit set.
    Masked,
    /// The answer frame with RSV1 set (no extension was agreed).
    Reserved,
    /// The answer frame with opcode 0x3.
    Opcode,
    /// A ping of 126 bytes (control frames hold at most 125).
    LongPing,
    /// A text answer whose payload is not UTF-8.
    BadUtf8,
    /// A continuation frame with no message begun.
    Continuation,
}

/// Every breach, for tests that try each.
pub const BREACHES: [Breach; 6] = [
    Breach::Masked,
    Breach::Reserved,
    Breach::Opcode,
    Breach::LongPing,
    Breach::BadUtf8,
    Breach::Continuation,
];

/// How a [`WsServer`] answers. Unless said otherwise, the handshake is answered with a
/// `101` carrying the right `Sec-WebSocket-Accept`, and a message with one frame of the
/// same opcode and payload (an echo); a ping is answered with a pong, and the client's
/// close with a close.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsBehavior {
    /// The echo.
    Echo,
    /// The echo, each one written this long after its message was read.
    Slow(Duration),
    /// Every answer is split into three frames (a text or binary frame and two
    /// continuations, one of them empty) with a ping of 4 bytes before the first; the
    /// client must reassemble the answer and send the pongs ([`WsServer::pongs`]).
    Fancy,
    /// Each message is answered with the one before it on its connection (the first with
    /// itself): an echo for a run that sends one message over and over, and no echo from
    /// the second message on when each message differs.
    Stale,
    /// The handshake is refused with this status (no upgrade, then the server closes),
    /// `after` the upgrade request was read (zero: at once; later, connections opened
    /// together are refused together).
    Refuse {
        /// The status, e.g. 403.
        status: u16,
        /// How long after the request.
        after: Duration,
    },
    /// A 101 whose `Sec-WebSocket-Accept` is wrong.
    BadAccept,
    /// The upgrade request is read and never answered: the connection stays open, its
    /// handshake under way, until the client closes it.
    NoUpgrade,
    /// A 101 with two `Sec-WebSocket-Accept` fields, the right one and a wrong one
    /// (RFC 6455 §11.3.3: the field must not appear twice), then echoes.
    DoubleAccept,
    /// Right after the 101, `pings` pings of 125 bytes (the first 4 their number, big
    /// endian), written without reading anything meanwhile (the socket's receive buffer
    /// is made small, so the client's pongs back up); then echoes, counting the pongs.
    PingFlood {
        /// Pings sent.
        pings: u32,
    },
    /// Echoes, but answers each ping with an empty pong and a pong whose payload differs
    /// from the ping's (its first byte inverted): pongs that answer no ping.
    WrongPong,
    /// After `after` answers on a connection, the next message read is not answered: a
    /// close frame with [`WS_CLOSE_CODE`] goes instead, and the server closes when the
    /// client's close comes ([`WsServer::unanswered`] counts the message).
    CloseAfter {
        /// Answers per connection before the close.
        after: u32,
    },
    /// After `after` answers on a connection, a close frame with 1000 (normal) goes right
    /// behind the last answer, in the same write: a goodbye with nothing outstanding
    /// unless the client sent more meanwhile.
    Goodbye {
        /// Answers per connection before the close.
        after: u32,
    },
    /// The first connection is served as [`WsBehavior::Goodbye`] (`after` answers, then a
    /// close); every later one as [`WsBehavior::NoUpgrade`] (its upgrade never answered):
    /// a client that opens its connection again after the goodbye is still opening it
    /// when the run ends, having carried its share.
    UpgradeOnce {
        /// Answers on the first connection before its close.
        after: u32,
    },
    /// Pings are answered with pongs `after` times on a connection; the next ping is
    /// answered with a close frame with 1001 (going away) instead, and counted in
    /// [`WsServer::unanswered`]: a server dropping held connections.
    CloseOnPing {
        /// Pongs per connection before the close.
        after: u32,
    },
    /// After `after` answers on a connection, the next message read is answered with this
    /// breach, and the server closes once the client does.
    Breach {
        /// Answers per connection before it.
        after: u32,
        /// What is wrong.
        breach: Breach,
    },
    /// After `after` answers on a connection, the next message read is never answered
    /// (the connection stays open until the client closes it).
    Silent {
        /// Answers per connection before the silence.
        after: u32,
    },
    /// After `after` answers on a connection, the next message read is dropped with the
    /// connection: a TCP close, no close frame.
    Drop {
        /// Answers per connection before the drop.
        after: u32,
    },
}

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    upgrades: AtomicU64,
    messages: AtomicU64,
    answers: AtomicU64,
    unanswered: AtomicU64,
    pongs: AtomicU64,
    pings: AtomicU64,
    client_closes: AtomicU64,
    unmasked: AtomicU64,
}

struct State {
    behavior: WsBehavior,
    delivery: Delivery,
    n: Counters,
    stopped: Mutex<bool>,
    live: Mutex<HashMap<u64, RawFd>>,
    live_emptied: Condvar,
}

/// A WebSocket server on `127.0.0.1` answering every message with one [`WsBehavior`].
/// Dropping it shuts every connection down and waits (up to 5 s) for its threads.
pub struct WsServer {
    state: Arc<State>,
    listener: Arc<TcpListener>,
    addr: SocketAddr,
    tls: bool,
    accept: Option<JoinHandle<()>>,
}

impl WsServer {
    /// Starts a `ws://` server on a port chosen by the OS, its bytes sent whole.
    pub fn start(behavior: WsBehavior) -> io::Result<WsServer> {
        WsServer::start_with(behavior, Delivery::Whole, false)
    }

    /// Starts a server sending its bytes as `delivery` says, over TLS (`wss://`, the
    /// self-signed certificate of [`crate::TestServer::start_tls`]) when `tls`.
    pub fn start_with(behavior: WsBehavior, delivery: Delivery, tls: bool) -> io::Result<WsServer> {
        let config = if tls {
            Some(Arc::clone(&tls::identity()?.config))
        } else {
            None
        };
        let listener = Arc::new(net::listen_loopback(0, false)?);
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            behavior,
            delivery,
            n: Counters::default(),
            stopped: Mutex::new(false),
            live: Mutex::new(HashMap::new()),
            live_emptied: Condvar::new(),
        });
        let accept = {
            let (listener, state) = (Arc::clone(&listener), Arc::clone(&state));
            thread::Builder::new()
                .name("ws-testserver-accept".into())
                .spawn(move || accept_loop(&listener, &state, config))?
        };
        Ok(WsServer {
            state,
            listener,
            addr,
            tls,
            accept: Some(accept),
        })
    }

    /// The URL of `path` on this server (`ws://` or `wss://127.0.0.1:PORT/path`).
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("{scheme}://{}{slash}{path}", self.addr)
    }

    /// Waits until every accepted connection has ended, or `timeout`; true if all did.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let live = lock(&self.state.live);
        let (live, _) = self
            .state
            .live_emptied
            .wait_timeout_while(live, timeout, |l| !l.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        live.is_empty()
    }

    fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::SeqCst)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        Self::get(&self.state.n.connections)
    }
    /// Handshakes answered with a 101 (a [`WsBehavior::BadAccept`]'s included).
    pub fn upgrades(&self) -> u64 {
        Self::get(&self.state.n.upgrades)
    }
    /// Whole data messages read.
    pub fn messages(&self) -> u64 {
        Self::get(&self.state.n.messages)
    }
    /// Answers written in full (a breach's not counted).
    pub fn answers(&self) -> u64 {
        Self::get(&self.state.n.answers)
    }
    /// Messages read that the behaviour leaves unanswered on purpose (closed on, broken
    /// on, silent on, dropped with the connection).
    pub fn unanswered(&self) -> u64 {
        Self::get(&self.state.n.unanswered)
    }
    /// Pongs the client sent.
    pub fn pongs(&self) -> u64 {
        Self::get(&self.state.n.pongs)
    }
    /// Pings the client sent.
    pub fn pings(&self) -> u64 {
        Self::get(&self.state.n.pings)
    }
    /// Close frames the client sent.
    pub fn client_closes(&self) -> u64 {
        Self::get(&self.state.n.client_closes)
    }
    /// Client frames that were not masked (each ended its connection).
    pub fn unmasked(&self) -> u64 {
        Self::get(&self.state.n.unmasked)
    }
}

impl Drop for WsServer {
    fn drop(&mut self) {
        *lock(&self.state.stopped) = true;
        net::shutdown_fd(self.listener.as_raw_fd());
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        let live = lock(&self.state.live);
        for fd in live.values() {
            net::shutdown_fd(*fd);
        }
        let _ = self
            .state
            .live_emptied
            .wait_timeout_while(live, Duration::from_secs(5), |l| !l.is_empty());
    }
}

fn accept_loop(listener: &TcpListener, state: &Arc<State>, tls: Option<Arc<rustls::ServerConfig>>) {
    let mut id = 0u64;
    loop {
        let accepted = listener.accept();
        if *lock(&state.stopped) {
            return;
        }
        let Ok((tcp, _)) = accepted else {
            thread::sleep(Duration::from_millis(10));
            continue;
        };
        id += 1;
        state.n.connections.fetch_add(1, Ordering::SeqCst);
        let _ = tcp.set_nodelay(true);
        lock(&state.live).insert(id, tcp.as_raw_fd());
        let stream = match &tls {
            None => Stream::Plain(tcp),
            Some(c) => match Stream::tls(tcp, Arc::clone(c)) {
                Ok(s) => s,
                Err(_) => {
                    leave(state, id);
                    continue;
                }
            },
        };
        let mine = Arc::clone(state);
        let spawned = thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let mut c = Conn {
                    state: &mine,
                    stream,
                    out: Vec::new(),
                    answered: 0,
                    last: Vec::new(),
                };
                let _ = c.serve();
                let _ = c.stream.tcp().shutdown(Shutdown::Both);
                leave(&mine, id);
            });
        if spawned.is_err() {
            leave(state, id);
        }
    }
}

/// Forgets connection `id` (its socket is about to close).
fn leave(state: &State, id: u64) {
    let mut live = lock(&state.live);
    live.remove(&id);
    if live.is_empty() {
        state.live_emptied.notify_all();
    }
}

/// A client frame, unmasked.
struct Frame {
    fin: bool,
    opcode: u8,
    payload: Vec<u8>,
}

struct Conn<'a> {
    state: &'a State,
    stream: Stream,
    out: Vec<u8>,
    answered: u32,
    /// The last message read ([`WsBehavior::Stale`]).
    last: Vec<u8>,
}

impl Conn<'_> {
    fn serve(&mut self) -> io::Result<()> {
        let Some(key) = self.read_handshake()? else {
            return Ok(());
        };
        let upgraded_before = self.state.n.upgrades.load(Ordering::SeqCst) > 0;
        let once = matches!(self.state.behavior, WsBehavior::UpgradeOnce { .. });
        if self.state.behavior == WsBehavior::NoUpgrade || (once && upgraded_before) {
            let mut rest = [0u8; 1024];
            while self.stream.read(&mut rest)? > 0 {}
            return Ok(());
        }
        let accept = match self.state.behavior {
            WsBehavior::Refuse { status, after } => {
                thread::sleep(after);
                let head = format!(
                    "HTTP/1.1 {status} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                self.out.extend_from_slice(head.as_bytes());
                return self.send();
            }
            WsBehavior::BadAccept => accept_of("not the key"),
            _ => accept_of(&key),
        };
        let second = match self.state.behavior {
            WsBehavior::DoubleAccept => format!("Sec-WebSocket-Accept: {}\r\n", accept_of("other")),
            _ => String::new(),
        };
        let head = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{second}\r\n"
        );
        self.out.extend_from_slice(head.as_bytes());
        self.state.n.upgrades.fetch_add(1, Ordering::SeqCst);
        if let WsBehavior::PingFlood { pings } = self.state.behavior {
            net::small_receive_buffer(self.stream.tcp());
            self.send()?;
            for i in 0..pings {
                let mut payload = [0x5a; 125];
                payload[..4].copy_from_slice(&i.to_be_bytes());
                frame(&mut self.out, 0x89, &payload);
                // Written in batches, so that a flood of pings takes few writes.
                if self.out.len() >= 64 * 1024 {
                    self.send()?;
                }
            }
        }
        self.send()?;
        self.messages()
    }

    /// Reads the upgrade request head; its `Sec-WebSocket-Key`, if it has one.
    fn read_handshake(&mut self) -> io::Result<Option<String>> {
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if head.len() > 16 * 1024 || self.stream.read(&mut b)? == 0 {
                return Ok(None);
            }
            head.push(b[0]);
        }
        let text = String::from_utf8_lossy(&head);
        Ok(text.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("sec-websocket-key")
                .then(|| value.trim().to_string())
        }))
    }

    /// Reads frames until the connection ends, answering whole messages.
    fn messages(&mut self) -> io::Result<()> {
        let mut message: Option<(u8, Vec<u8>)> = None;
        loop {
            let Some(f) = self.read_frame()? else {
                return Ok(());
            };
            match f.opcode {
                0x8 => {
                    self.state.n.client_closes.fetch_add(1, Ordering::SeqCst);
                    frame(&mut self.out, 0x88, &f.payload);
                    return self.send();
                }
                0x9 => {
                    self.state.n.pings.fetch_add(1, Ordering::SeqCst);
                    match self.state.behavior {
                        WsBehavior::CloseOnPing { after } if self.answered >= after => {
                            self.state.n.unanswered.fetch_add(1, Ordering::SeqCst);
                            frame(&mut self.out, 0x88, &1001u16.to_be_bytes());
                        }
                        WsBehavior::CloseOnPing { .. } => {
                            self.answered += 1;
                            frame(&mut self.out, 0x8A, &f.payload);
                        }
                        WsBehavior::WrongPong => {
                            let mut other = f.payload.clone();
                            match other.first_mut() {
                                Some(b) => *b = !*b,
                                None => other.push(0),
                            }
                            frame(&mut self.out, 0x8A, &[]);
                            frame(&mut self.out, 0x8A, &other);
                        }
                        _ => frame(&mut self.out, 0x8A, &f.payload),
                    }
                    self.send()?;
                }
                0xA => {
                    self.state.n.pongs.fetch_add(1, Ordering::SeqCst);
                }
                op => {
                    let (opcode, mut body) = message.take().unwrap_or((op, Vec::new()));
                    body.extend_from_slice(&f.payload);
                    if !f.fin {
                        message = Some((opcode, body));
                        continue;
                    }
                    self.state.n.messages.fetch_add(1, Ordering::SeqCst);
                    if !self.answer(opcode, &body)? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Answers one whole message; false when the connection is to end (dropped).
    fn answer(&mut self, opcode: u8, body: &[u8]) -> io::Result<bool> {
        let n = &self.state.n;
        let due = |after: u32| self.answered >= after;
        match self.state.behavior.clone() {
            WsBehavior::CloseAfter { after } if due(after) => {
                n.unanswered.fetch_add(1, Ordering::SeqCst);
                frame(&mut self.out, 0x88, &WS_CLOSE_CODE.to_be_bytes());
                self.send()?;
                return Ok(true);
            }
            WsBehavior::Breach { after, breach } if due(after) => {
                n.unanswered.fetch_add(1, Ordering::SeqCst);
                breach_frame(&mut self.out, breach, body);
                self.send()?;
                return Ok(true);
            }
            WsBehavior::Silent { after } if due(after) => {
                n.unanswered.fetch_add(1, Ordering::SeqCst);
                return Ok(true);
            }
            WsBehavior::Drop { after } if due(after) => {
                n.unanswered.fetch_add(1, Ordering::SeqCst);
                return Ok(false);
            }
            WsBehavior::Fancy => {
                frame(&mut self.out, 0x89, b"ping");
                let cut = body.len() / 2;
                frame(&mut self.out, opcode, &body[..cut]);
                frame(&mut self.out, 0x00, &[]);
                frame(&mut self.out, 0x80, &body[cut..]);
            }
            WsBehavior::Stale => {
                if self.answered == 0 {
                    self.last = body.to_vec();
                }
                frame(&mut self.out, 0x80 | opcode, &self.last);
                self.last = body.to_vec();
            }
            WsBehavior::Slow(d) => {
                thread::sleep(d);
                frame(&mut self.out, 0x80 | opcode, body);
            }
            WsBehavior::Goodbye { after } | WsBehavior::UpgradeOnce { after }
                if self.answered + 1 >= after =>
            {
                frame(&mut self.out, 0x80 | opcode, body);
                frame(&mut self.out, 0x88, &1000u16.to_be_bytes());
            }
            _ => frame(&mut self.out, 0x80 | opcode, body),
        }
        self.send()?;
        self.answered += 1;
        n.answers.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    /// Reads one client frame and unmasks it; `None` at the end of the stream or on an
    /// unmasked frame.
    fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        let mut h = [0u8; 2];
        if !self.fill(&mut h)? {
            return Ok(None);
        }
        if h[1] & 0x80 == 0 {
            self.state.n.unmasked.fetch_add(1, Ordering::SeqCst);
            return Ok(None);
        }
        let len = match h[1] & 0x7f {
            126 => {
                let mut b = [0u8; 2];
                self.stream.read_exact(&mut b)?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                self.stream.read_exact(&mut b)?;
                u64::from_be_bytes(b)
            }
            l => u64::from(l),
        };
        if len > 64 << 20 {
            return Ok(None);
        }
        let mut mask = [0u8; 4];
        self.stream.read_exact(&mut mask)?;
        let mut payload = vec![0u8; len as usize];
        self.stream.read_exact(&mut payload)?;
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
        Ok(Some(Frame {
            fin: h[0] & 0x80 != 0,
            opcode: h[0] & 0x0f,
            payload,
        }))
    }

    /// Fills `buf`; false when the stream ended before its first byte.
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        match self.stream.read(&mut buf[..1]) {
            Ok(0) => return Ok(false),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(false),
            Err(e) => return Err(e),
        }
        self.stream.read_exact(&mut buf[1..])?;
        Ok(true)
    }

    /// Writes what is waiting, whole or one byte per `write`.
    fn send(&mut self) -> io::Result<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        match self.state.delivery {
            Delivery::Whole => self.stream.write_all(&self.out)?,
            Delivery::Bytewise => {
                for b in &self.out {
                    self.stream.write_all(std::slice::from_ref(b))?;
                    self.stream.flush()?;
                    thread::yield_now();
                }
            }
        }
        self.stream.flush()?;
        self.out.clear();
        Ok(())
    }
}

/// The `Sec-WebSocket-Accept` for `key` (RFC 6455 §4.2.2).
fn accept_of(key: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64::engine::general_purpose::STANDARD.encode(h.digest().bytes())
}

/// Appends an unmasked server frame with first byte `b0`.
fn frame(out: &mut Vec<u8>, b0: u8, payload: &[u8]) {
    out.push(b0);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 0xffff => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

/// Appends `breach` in place of the answer to `body`.
fn breach_frame(out: &mut Vec<u8>, breach: Breach, body: &[u8]) {
    match breach {
        Breach::Masked => {
            out.extend_from_slice(&[0x82, 0x80 | body.len().min(125) as u8, 0, 0, 0, 0]);
            out.extend_from_slice(&body[..body.len().min(125)]);
        }
        Breach::Reserved => frame(out, 0xC2, body),
        Breach::Opcode => frame(out, 0x83, body),
        Breach::LongPing => frame(out, 0x89, &[b'p'; 126]),
        Breach::BadUtf8 => frame(out, 0x81, &[b'o', b'k', 0xff]),
        Breach::Continuation => frame(out, 0x80, body),
    }
}
