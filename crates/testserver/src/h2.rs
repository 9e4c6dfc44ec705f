//! [`H2Server`]: an HTTP/2 test server (h2c with prior knowledge, or TLS with ALPN `h2`)
//! that answers every stream by one [`H2Behavior`], hostile ones included, and keeps
//! truth counters for the engine's tests to compare with what the client counted.
//!
//! Design: as the HTTP/1.1 server, std sockets, blocking I/O and a thread per connection.
//! Each read's frames are handled in order; the streams they complete are answered after
//! the read, in the order their requests completed, so frames the client wrote together
//! are seen together (which is how [`H2Server::max_open_streams`] sees a client that
//! opens more streams than the server allows). Header blocks are decoded and encoded with
//! `loona-hpack`, the answers' blocks with its dynamic table, so a client that loses track
//! of the table fails. Every byte goes out whole or one per `write` ([`Delivery`]).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::conn::Stream;
use crate::net;
use crate::shared::{lock, Delivery};
use crate::tls;

/// What a client sends first.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The body of every answer.
pub const H2_BODY: &[u8] = b"Hello World\n";

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;

/// RST_STREAM and GOAWAY error codes the behaviours send.
pub const INTERNAL_ERROR: u32 = 0x2;
/// The code a client ends a connection with after a bad header block.
pub const COMPRESSION_ERROR: u32 = 0x9;
/// The code a client ends a connection with after a flood.
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// Header blocks no HPACK decoder may accept (RFC 7541), for [`H2Behavior::HpackBlock`]:
/// a title and the block.
pub const HPACK_FAULTS: &[(&str, &[u8])] = &[
    ("a block that ends inside an integer", &[0xff]),
    (
        "a block that ends inside an integer's continuation",
        &[0xff, 0x80],
    ),
    ("a literal with an indexed name and no value", &[0x41]),
    (
        "a literal whose value runs past the block",
        &[0x0f, 0x0d, 0x05, b'1'],
    ),
    ("index 0", &[0x80]),
    ("an index past both tables", &[0xc8]),
    (
        "an integer over 2^28",
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0x0f],
    ),
    (
        "a table size update after a header field (RFC 7541 §4.2)",
        &[0x88, 0x20],
    ),
    (
        "a table size update over SETTINGS_HEADER_TABLE_SIZE",
        &[0x3f, 0xe2, 0x1f],
    ),
    (
        "a Huffman string holding EOS",
        &[0x88, 0x0f, 0x0d, 0x84, 0xff, 0xff, 0xff, 0xff],
    ),
    (
        "a Huffman string with 8 bits of padding",
        &[0x88, 0x0f, 0x0d, 0x81, 0xff],
    ),
];

/// The value of the table entry [`H2Behavior::HpackBomb`] names over and over: 4,000 bytes.
pub const BOMB_ENTRY: usize = 4000;
/// The stream was not processed: the client may send it again.
pub const REFUSED_STREAM: u32 = 0x7;
/// A frame of the wrong size (RFC 9113 §7).
pub const FRAME_SIZE_ERROR: u32 = 0x6;
/// A breach of the protocol (RFC 9113 §7).
pub const PROTOCOL_ERROR: u32 = 0x1;

/// Frames a client must answer with a connection error, sent right after a server's
/// preface by [`H2Behavior::AfterPreface`]: a title, the frame, and the error code of the
/// GOAWAY it calls for.
pub const EARLY_ERRORS: &[(&str, &[u8], u32)] = &[
    (
        "a SETTINGS acknowledgement with a payload (RFC 9113 §6.5)",
        &[0, 0, 6, SETTINGS, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100],
        FRAME_SIZE_ERROR,
    ),
    (
        "SETTINGS on stream 1 (RFC 9113 §6.5)",
        &[0, 0, 0, SETTINGS, 0, 0, 0, 0, 1],
        PROTOCOL_ERROR,
    ),
    (
        "a CONTINUATION with no header block under way (RFC 9113 §6.10)",
        &[0, 0, 0, CONTINUATION, END_HEADERS, 0, 0, 0, 1],
        PROTOCOL_ERROR,
    ),
];

/// How an [`H2Server`] answers. Unless said otherwise an answer is HEADERS
/// (`:status 200`, `content-length 12`, `server shootout-testserver`) and one DATA frame
/// `Hello World\n` ending the stream; SETTINGS announce nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum H2Behavior {
    /// The plain answer.
    Hello,
    /// The plain answer, each one written this long after its request was read; a
    /// connection's streams are answered one after another.
    Slow(Duration),
    /// Every feature a client must handle, on every stream: a PING first (the client must
    /// acknowledge it), an interim `103` HEADERS with padding, the final HEADERS split
    /// into HEADERS + CONTINUATION, the body in two DATA frames (the first padded), and
    /// trailers (`x-trailer: yes`) that end the stream.
    Fancy,
    /// The answer's body is `len` bytes `x` in DATA frames of 16 KiB.
    Big {
        /// Body length in bytes.
        len: usize,
    },
    /// After `after` answers on a connection, GOAWAY(NO_ERROR) naming the last answered
    /// stream; streams read after it are not answered ([`H2Server::unprocessed`]); the
    /// connection stays open until the client closes it.
    Goaway {
        /// Answers per connection before the GOAWAY.
        after: u32,
    },
    /// After `after` answers on a connection, GOAWAY(INTERNAL_ERROR) naming the highest
    /// stream read; the streams read and not answered are abandoned
    /// ([`H2Server::abandoned`]), the server closes its side, and streams read after the
    /// GOAWAY are [`H2Server::unprocessed`].
    GoawayError {
        /// Answers per connection before the GOAWAY.
        after: u32,
    },
    /// Every `n`th stream, counted server-wide in the order requests complete, gets
    /// RST_STREAM(`code`) instead of an answer ([`H2Server::resets`]).
    ResetEvery {
        /// Period.
        n: u64,
        /// Error code of the RST_STREAM.
        code: u32,
    },
    /// The first `n` streams, counted server-wide in the order requests complete, get
    /// RST_STREAM(REFUSED_STREAM) instead of an answer ([`H2Server::resets`]): not
    /// processed (RFC 9113 §8.7), so a client may send each again; the later ones are
    /// answered.
    RefuseFirst {
        /// Streams refused.
        n: u64,
    },
    /// SETTINGS_MAX_CONCURRENT_STREAMS = `limit`; each answer waits 2 ms, so streams a
    /// client opens meanwhile pile up and show in [`H2Server::max_open_streams`].
    MaxStreams {
        /// The limit announced.
        limit: u32,
    },
    /// Every `n`th stream, counted server-wide, is never answered
    /// ([`H2Server::unanswered`]).
    NeverAnswerEvery {
        /// Period.
        n: u64,
    },
    /// SETTINGS_INITIAL_WINDOW_SIZE = 0 and no WINDOW_UPDATE ever: a request body can
    /// never be sent (requests without a body are answered).
    WindowNeverOpens,
    /// Instead of answering the first request on a connection, a PING frame of 7 bytes
    /// (a FRAME_SIZE_ERROR); then reads until the client closes.
    MalformedFrame,
    /// Instead of answering the first request on a connection, HEADERS whose block names
    /// a table index that does not exist (a COMPRESSION_ERROR); then reads until the
    /// client closes.
    HpackError,
    /// Answers the preface `HTTP/1.1 400 Bad Request` and closes, as an HTTP/1.1-only
    /// server does.
    Http1,
    /// Instead of answering the first request on a connection, HEADERS (ending the stream)
    /// carrying this block, one of [`HPACK_FAULTS`]; then reads until the client closes.
    HpackBlock {
        /// The header block.
        block: Vec<u8>,
    },
    /// Every answer's header block adds (first on a connection) a table entry of
    /// [`BOMB_ENTRY`] bytes and names it `refs` times: a block of about `refs` bytes that
    /// decodes to `refs` × 4,038 bytes of header list. The block goes out in frames of
    /// 16 KiB (HEADERS, then CONTINUATION).
    HpackBomb {
        /// References to the large entry per answer.
        refs: usize,
    },
    /// On each connection, after reading the first request, `count` frames of type
    /// `kind` (PING or SETTINGS, each asking for an acknowledgement) without reading in
    /// between; then answers and reads as usual ([`H2Server::flooded`]).
    ControlFlood {
        /// Frame type: 0x6 PING, 0x4 SETTINGS.
        kind: u8,
        /// Frames per connection.
        count: u64,
    },
    /// Instead of answering the first request on a connection, HEADERS without
    /// END_HEADERS and then `frames` empty CONTINUATION frames, none ending the block,
    /// hearing the client after each write and stopping once it sent a GOAWAY; then
    /// reads until the client closes.
    ContinuationFlood {
        /// CONTINUATION frames.
        frames: u64,
    },
    /// Answers HEADERS with no content-length, then DATA frames of 16 KiB that never end
    /// the stream, until the client closes the connection.
    EndlessBody,
    /// [`crate::Behavior::App`], the small web application of journeys, over HTTP/2: its
    /// answers' statuses, fields (`set-cookie`, `location`) and bodies, with
    /// `content-length` and `server`; a `HEAD` gets no body; `/desk` answers at once.
    /// Every `nth` stream of each connection (0: none), counted in the order its requests
    /// complete, gets `fault` instead of its answer.
    App {
        /// Period, per connection (0: no fault).
        nth: u32,
        /// What the `nth` stream gets.
        fault: AppFault,
    },
    /// On each of the first `connections` connections (the engine's pre-flight is the
    /// first), `frame` right after the server's SETTINGS, in the same write (one of
    /// [`EARLY_ERRORS`]); then reads until the client closes. Later connections answer
    /// as [`H2Behavior::Hello`].
    AfterPreface {
        /// The frame.
        frame: Vec<u8>,
        /// Connections that get it.
        connections: u64,
    },
    /// Every stream is a gRPC call to `helloworld.Greeter/SayHello`, answered as the
    /// [`crate::GrpcBehavior`] says ([`crate::grpc`]).
    Grpc(crate::GrpcBehavior),
}

/// What [`H2Behavior::App`] does to the stream it picks instead of answering it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppFault {
    /// RST_STREAM with this code ([`H2Server::resets`]); the connection goes on.
    Reset(u32),
    /// GOAWAY(INTERNAL_ERROR) naming the stream, which is never answered
    /// ([`H2Server::abandoned`]); then the server closes its side.
    GoawayError,
    /// Nothing: the stream is never answered ([`H2Server::unanswered`]); the connection
    /// goes on.
    Silent,
    /// GOAWAY(NO_ERROR) naming the stream before it: it was not processed
    /// ([`H2Server::unprocessed`], as are streams read after); the connection stays open
    /// until the client closes it.
    Goaway,
}

/// The counters, the open sockets and the behaviour, shared by the server's threads.
struct State {
    behavior: H2Behavior,
    delivery: Delivery,
    connections: AtomicU64,
    /// Requests taken up for an answer, server-wide: the `k` of "every `n`th stream".
    handled: AtomicU64,
    requests: AtomicU64,
    answers: AtomicU64,
    resets: AtomicU64,
    unanswered: AtomicU64,
    cancels: AtomicU64,
    /// gRPC: request messages read (a client stream's each).
    messages: AtomicU64,
    /// gRPC: of those, messages whose compressed flag was set.
    compressed: AtomicU64,
    /// DATA frames from the client that overran a flow-control window.
    window_violations: AtomicU64,
    goaways: AtomicU64,
    unprocessed: AtomicU64,
    abandoned: AtomicU64,
    pings: AtomicU64,
    ping_acks: AtomicU64,
    flooded: AtomicU64,
    client_resets: AtomicU64,
    early_resets: AtomicU64,
    client_goodbyes: AtomicU64,
    max_open: AtomicU64,
    client_goaways: Mutex<Vec<u32>>,
    stopped: Mutex<bool>,
    live: Mutex<HashMap<u64, RawFd>>,
    live_emptied: Condvar,
}

/// An HTTP/2 server on `127.0.0.1` answering every stream with one [`H2Behavior`].
/// Dropping it shuts every connection down and waits (up to 5 s) for its threads.
pub struct H2Server {
    state: Arc<State>,
    listener: Arc<TcpListener>,
    addr: SocketAddr,
    tls: bool,
    accept: Option<JoinHandle<()>>,
}

impl H2Server {
    /// Starts an h2c server (prior knowledge) on a port chosen by the OS.
    pub fn start(behavior: H2Behavior) -> io::Result<H2Server> {
        H2Server::start_with(behavior, Delivery::Whole, false)
    }

    /// Starts a server sending its bytes as `delivery` says, over TLS (ALPN `h2`, the
    /// self-signed certificate of [`crate::TestServer::start_tls`]) when `tls`.
    pub fn start_with(behavior: H2Behavior, delivery: Delivery, tls: bool) -> io::Result<H2Server> {
        let config = if tls {
            let mut c = (*tls::identity()?.config).clone();
            c.alpn_protocols = vec![b"h2".to_vec()];
            Some(Arc::new(c))
        } else {
            None
        };
        let listener = Arc::new(net::listen_loopback(0, false)?);
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            behavior,
            delivery,
            connections: AtomicU64::new(0),
            handled: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            answers: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            unanswered: AtomicU64::new(0),
            cancels: AtomicU64::new(0),
            messages: AtomicU64::new(0),
            compressed: AtomicU64::new(0),
            window_violations: AtomicU64::new(0),
            goaways: AtomicU64::new(0),
            unprocessed: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            pings: AtomicU64::new(0),
            ping_acks: AtomicU64::new(0),
            flooded: AtomicU64::new(0),
            client_resets: AtomicU64::new(0),
            early_resets: AtomicU64::new(0),
            client_goodbyes: AtomicU64::new(0),
            max_open: AtomicU64::new(0),
            client_goaways: Mutex::new(Vec::new()),
            stopped: Mutex::new(false),
            live: Mutex::new(HashMap::new()),
            live_emptied: Condvar::new(),
        });
        let accept = {
            let (listener, state) = (Arc::clone(&listener), Arc::clone(&state));
            thread::Builder::new()
                .name("h2-testserver-accept".into())
                .spawn(move || accept_loop(&listener, &state, config))?
        };
        Ok(H2Server {
            state,
            listener,
            addr,
            tls,
            accept: Some(accept),
        })
    }

    /// The URL of `path` on this server (`http://` or `https://127.0.0.1:PORT/path`).
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("{scheme}://{}{slash}{path}", self.addr)
    }

    /// Waits until every accepted connection has ended, or `timeout`; true if all did.
    /// After the client closed its connections, the counters are then final.
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
        Self::get(&self.state.connections)
    }
    /// Requests read in full (HEADERS, and DATA up to END_STREAM).
    pub fn requests(&self) -> u64 {
        Self::get(&self.state.requests)
    }
    /// Complete answers written.
    pub fn answers(&self) -> u64 {
        Self::get(&self.state.answers)
    }
    /// RST_STREAM frames sent instead of answers.
    pub fn resets(&self) -> u64 {
        Self::get(&self.state.resets)
    }
    /// Requests read that the behaviour leaves unanswered on purpose.
    pub fn unanswered(&self) -> u64 {
        Self::get(&self.state.unanswered)
    }
    /// RST_STREAM frames the client sent (cancelled streams).
    pub fn cancels(&self) -> u64 {
        Self::get(&self.state.cancels)
    }
    /// gRPC: the request messages read, each of a client stream counted.
    pub fn messages(&self) -> u64 {
        Self::get(&self.state.messages)
    }
    /// gRPC: of [`H2Server::messages`], those whose compressed flag was set (each
    /// inflated as gzip to read its name).
    pub fn compressed_messages(&self) -> u64 {
        Self::get(&self.state.compressed)
    }
    /// DATA frames the client sent past a flow-control window the server announced (its
    /// stream's or its connection's; each frame's bytes are given back once read).
    pub fn window_violations(&self) -> u64 {
        Self::get(&self.state.window_violations)
    }
    /// GOAWAY frames sent.
    pub fn goaways(&self) -> u64 {
        Self::get(&self.state.goaways)
    }
    /// Streams read after a GOAWAY (above its last-stream-id): never processed.
    pub fn unprocessed(&self) -> u64 {
        Self::get(&self.state.unprocessed)
    }
    /// Streams at or below a GOAWAY(INTERNAL_ERROR)'s last-stream-id left unanswered.
    pub fn abandoned(&self) -> u64 {
        Self::get(&self.state.abandoned)
    }
    /// PING frames sent, and acknowledgements received.
    pub fn pings(&self) -> (u64, u64) {
        (
            Self::get(&self.state.pings),
            Self::get(&self.state.ping_acks),
        )
    }
    /// The most streams of one connection waiting for an answer at once.
    pub fn max_open_streams(&self) -> u64 {
        Self::get(&self.state.max_open)
    }
    /// The error codes of the GOAWAY frames with an error the client sent (its graceful
    /// ones, NO_ERROR, are [`H2Server::client_goodbyes`]).
    pub fn client_goaways(&self) -> Vec<u32> {
        lock(&self.state.client_goaways).clone()
    }
    /// GOAWAY(NO_ERROR) frames the client sent: graceful closes.
    pub fn client_goodbyes(&self) -> u64 {
        Self::get(&self.state.client_goodbyes)
    }
    /// Connections that carried no request and that the client ended with a TCP reset.
    pub fn early_resets(&self) -> u64 {
        Self::get(&self.state.early_resets)
    }
    /// Control frames a [`H2Behavior::ControlFlood`] wrote in full.
    pub fn flooded(&self) -> u64 {
        Self::get(&self.state.flooded)
    }
    /// Connections that carried a request and that the client ended with a TCP reset (a
    /// read failed with ECONNRESET) rather than a close.
    pub fn client_resets(&self) -> u64 {
        Self::get(&self.state.client_resets)
    }
}

impl Drop for H2Server {
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
    loop {
        let accepted = listener.accept();
        if *lock(&state.stopped) {
            return;
        }
        let Ok((tcp, _)) = accepted else {
            thread::sleep(Duration::from_millis(10));
            continue;
        };
        let id = state.connections.fetch_add(1, Ordering::SeqCst);
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
                let mut c = Conn::new(&mine, stream);
                c.nth = id;
                let served = c.serve();
                if let Err(e) = served {
                    if e.kind() == io::ErrorKind::ConnectionReset {
                        let resets = if c.highest > 0 {
                            &mine.client_resets
                        } else {
                            &mine.early_resets
                        };
                        resets.fetch_add(1, Ordering::SeqCst);
                    }
                }
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

/// What [`H2Behavior::App`] reads of a request: its method, path and cookie.
type AppHead = (String, String, Option<String>);

/// What [`H2Behavior::App`] reads of a decoded header block: `:method`, `:path`, and the
/// cookie, its crumbs joined again (RFC 9113 §8.2.3).
fn app_head(fields: Vec<(Vec<u8>, Vec<u8>)>) -> AppHead {
    let mut head: AppHead = (String::new(), String::new(), None);
    for (n, v) in fields {
        let v = String::from_utf8_lossy(&v).into_owned();
        match &n[..] {
            b":method" => head.0 = v,
            b":path" => head.1 = v,
            b"cookie" => match &mut head.2 {
                Some(c) => {
                    c.push_str("; ");
                    c.push_str(&v);
                }
                None => head.2 = Some(v),
            },
            _ => {}
        }
    }
    head
}

/// A request being read, or read and waiting for its answer.
struct Pending {
    id: u32,
    complete: bool,
    /// What [`H2Behavior::App`] reads of the request: method, path, cookie.
    head: AppHead,
    /// Its body so far (kept for gRPC calls only; a bidirectional call's, its messages
    /// not yet read).
    body: Vec<u8>,
    /// A bidirectional call's progress.
    chat: crate::grpc::Chat,
    /// What is left of its flow-control window.
    window: i64,
}

struct Conn<'a> {
    state: &'a State,
    stream: Stream,
    out: Vec<u8>,
    encoder: loona_hpack::Encoder<'static>,
    decoder: loona_hpack::Decoder<'static>,
    block: Vec<u8>,
    block_of: Option<(u32, bool)>,
    pending: Vec<Pending>,
    answered: u32,
    last_answered: u32,
    highest: u32,
    /// A GOAWAY was sent: nothing more is answered.
    gone: bool,
    /// The connection's first request was taken up.
    first_done: bool,
    /// The bomb's entry is in the client's table.
    bomb_sent: bool,
    /// The connection's number, from 0 in the order accepted.
    nth: u64,
    /// Requests taken up for an answer on this connection.
    handled_here: u32,
    /// gRPC's endless streams still open: each stream's id and its reply's DATA frame.
    endless: Vec<(u32, Vec<u8>)>,
    /// The socket's reads wait at most a millisecond (endless streams are open).
    timed: bool,
    /// What is left of the connection's flow-control window, and the window a new
    /// stream starts with (SETTINGS_INITIAL_WINDOW_SIZE).
    window: i64,
    initial_window: i64,
    /// Streams whose header block was read on this connection.
    streams_read: u32,
    /// A GOAWAY(NO_ERROR) was sent, the streams before it still served: new streams are
    /// not processed.
    draining: bool,
    /// The client's bytes read and not yet acted on (a partial frame).
    input: Vec<u8>,
    /// The client sent a GOAWAY.
    heard_goaway: bool,
}

impl<'a> Conn<'a> {
    fn new(state: &'a State, stream: Stream) -> Self {
        Conn {
            state,
            stream,
            out: Vec::new(),
            encoder: loona_hpack::Encoder::new(),
            decoder: loona_hpack::Decoder::new(),
            block: Vec::new(),
            block_of: None,
            pending: Vec::new(),
            answered: 0,
            last_answered: 0,
            highest: 0,
            gone: false,
            first_done: false,
            bomb_sent: false,
            nth: 0,
            handled_here: 0,
            endless: Vec::new(),
            timed: false,
            window: 65_535,
            initial_window: 65_535,
            streams_read: 0,
            draining: false,
            input: Vec::new(),
            heard_goaway: false,
        }
    }

    fn serve(&mut self) -> io::Result<()> {
        let behavior = self.state.behavior.clone();
        let mut preface = [0u8; 24];
        self.stream.read_exact(&mut preface)?;
        if behavior == H2Behavior::Http1 {
            self.out.extend_from_slice(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nConnection: close\r\n\r\nBad Request",
            );
            return self.send();
        }
        if preface != PREFACE {
            return Ok(());
        }
        let settings: Vec<(u16, u32)> = match behavior {
            H2Behavior::MaxStreams { limit } => vec![(0x3, limit)],
            H2Behavior::WindowNeverOpens => vec![(0x4, 0)],
            H2Behavior::Grpc(crate::GrpcBehavior::ChatWindow(w)) => vec![(0x4, w)],
            _ => vec![],
        };
        if let Some(&(_, w)) = settings.iter().find(|(id, _)| *id == 0x4) {
            self.initial_window = i64::from(w);
        }
        frame(&mut self.out, settings.len() * 6, SETTINGS, 0, 0);
        for (id, v) in settings {
            self.out.extend_from_slice(&id.to_be_bytes());
            self.out.extend_from_slice(&v.to_be_bytes());
        }
        if let H2Behavior::AfterPreface { frame, connections } = &behavior {
            if self.nth < *connections {
                self.out.extend_from_slice(frame);
                self.gone = true;
            }
        }
        self.send()?;
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            let Some(n) = self.read_or_feed(&mut chunk)? else {
                continue;
            };
            if n == 0 {
                return Ok(());
            }
            self.input.extend_from_slice(&chunk[..n]);
            self.frames()?;
            self.answer_ready(&behavior)?;
            self.send()?;
        }
    }

    /// Acts on each whole frame the client's bytes read so far hold ([`Self::frame`]),
    /// keeping a partial one for the next read.
    fn frames(&mut self) -> io::Result<()> {
        let mut used = 0;
        while self.input.len() - used >= 9 {
            let h = &self.input[used..used + 9];
            let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
            if self.input.len() - used < 9 + len {
                break;
            }
            let (kind, flags) = (h[3], h[4]);
            let id = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            let payload = self.input[used + 9..used + 9 + len].to_vec();
            used += 9 + len;
            self.frame(kind, flags, id, &payload)?;
        }
        self.input.drain(..used);
        Ok(())
    }

    /// Reads what the client has sent so far without waiting for more (at most 64 KiB),
    /// and acts on each whole frame of it ([`Self::frames`]): a flood being written hears
    /// the client's GOAWAY when it comes, however slowly the flood goes out.
    fn hear(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 4096];
        self.stream.tcp().set_nonblocking(true)?;
        let mut read = Ok(());
        for _ in 0..16 {
            match self.stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => self.input.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    read = Err(e);
                    break;
                }
            }
        }
        self.stream.tcp().set_nonblocking(false)?;
        read?;
        self.frames()
    }

    /// Writes what is waiting as [`Self::send`] does, whole or one byte per `write`,
    /// hearing the client after each write ([`Self::hear`]); once the client has sent a
    /// GOAWAY the rest is dropped, as a server does with a flood its client gave up on.
    fn send_until_goaway(&mut self) -> io::Result<()> {
        let out = std::mem::take(&mut self.out);
        let piece = match self.state.delivery {
            Delivery::Whole => out.len().max(1),
            Delivery::Bytewise => 1,
        };
        for part in out.chunks(piece) {
            self.stream.write_all(part)?;
            self.stream.flush()?;
            self.hear()?;
            if self.heard_goaway {
                break;
            }
        }
        Ok(())
    }

    /// The client reset stream `id`: counted, and nothing more is written on it.
    fn cancelled(&mut self, id: u32) {
        self.state.cancels.fetch_add(1, Ordering::SeqCst);
        self.pending.retain(|r| r.id != id);
        self.endless.retain(|(e, _)| *e != id);
    }

    /// Reads the client's next bytes into `chunk`; while endless streams are open, a read
    /// waits at most a millisecond, and each millisecond without bytes writes the next
    /// reply of every endless stream (`None`).
    fn read_or_feed(&mut self, chunk: &mut [u8]) -> io::Result<Option<usize>> {
        let feeding = !self.endless.is_empty();
        if feeding != self.timed {
            let wait = feeding.then(|| Duration::from_millis(1));
            self.stream.tcp().set_read_timeout(wait)?;
            self.timed = feeding;
        }
        match self.stream.read(chunk) {
            Ok(n) => Ok(Some(n)),
            Err(e)
                if feeding
                    && matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
            {
                for (_, reply) in &self.endless {
                    self.out.extend_from_slice(reply);
                }
                self.send()?;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Acts on one frame from the client: SETTINGS and PING acknowledged, header blocks
    /// gathered into requests, DATA into bodies, RST_STREAM and GOAWAY counted.
    fn frame(&mut self, kind: u8, flags: u8, id: u32, p: &[u8]) -> io::Result<()> {
        match kind {
            SETTINGS if flags & 1 == 0 => frame(&mut self.out, 0, SETTINGS, 1, 0),
            PING if flags & 1 == 0 => {
                frame(&mut self.out, 8, PING, 1, 0);
                self.out.extend_from_slice(p);
            }
            PING => {
                self.state.ping_acks.fetch_add(1, Ordering::SeqCst);
            }
            HEADERS | CONTINUATION => {
                if kind == HEADERS {
                    self.block_start(flags, id, p)?;
                } else {
                    self.block.extend_from_slice(p);
                }
                if flags & END_HEADERS != 0 {
                    self.header_block(id)?;
                }
            }
            DATA => self.data(flags, id, p),
            RST_STREAM => self.cancelled(id),
            GOAWAY if p.len() >= 8 => {
                self.heard_goaway = true;
                match u32::from_be_bytes([p[4], p[5], p[6], p[7]]) {
                    0 => {
                        self.state.client_goodbyes.fetch_add(1, Ordering::SeqCst);
                    }
                    code => lock(&self.state.client_goaways).push(code),
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// HEADERS: its fragment (padding and priority taken off, [`header_fragment`])
    /// starts the block of stream `id`; a frame shorter than they say ends the connection.
    fn block_start(&mut self, flags: u8, id: u32, p: &[u8]) -> io::Result<()> {
        let fragment = header_fragment(flags, p)?;
        self.block.clear();
        self.block.extend_from_slice(fragment);
        self.block_of = Some((id, flags & END_STREAM != 0));
        Ok(())
    }

    /// The header block is whole: decoded, its stream becomes a request (after a GOAWAY,
    /// one counted as unprocessed), complete when the block ended the stream.
    fn header_block(&mut self, id: u32) -> io::Result<()> {
        let (id, end) = self.block_of.take().unwrap_or((id, false));
        let fields = self
            .decoder
            .decode(&self.block)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let head = app_head(fields);
        self.highest = self.highest.max(id);
        self.chat_goaway(id);
        if self.gone || self.draining {
            self.state.unprocessed.fetch_add(1, Ordering::SeqCst);
        } else {
            self.pending.push(Pending {
                id,
                complete: end,
                head,
                body: Vec::new(),
                chat: crate::grpc::Chat::default(),
                window: self.initial_window,
            });
            if end {
                self.state.requests.fetch_add(1, Ordering::SeqCst);
            }
        }
        Ok(())
    }

    /// [`crate::GrpcBehavior::ChatGoaway`]`(k)`: at the header block of the connection's
    /// `k`th stream, GOAWAY(NO_ERROR) naming the stream before it; that stream and every
    /// later one are not processed, those before it are served to their end.
    fn chat_goaway(&mut self, id: u32) {
        let H2Behavior::Grpc(crate::GrpcBehavior::ChatGoaway(k)) = self.state.behavior else {
            return;
        };
        self.streams_read += 1;
        if self.streams_read == k && !self.draining {
            self.goaway(id.saturating_sub(2), 0);
            self.gone = false;
            self.draining = true;
        }
    }

    /// DATA: both windows opened again by its length (unless the behaviour keeps them
    /// shut), its bytes kept for gRPC, and its request complete at the stream's end.
    fn data(&mut self, flags: u8, id: u32, p: &[u8]) {
        let len = p.len() as i64;
        self.window -= len;
        let mut over = self.window < 0;
        if let Some(r) = self.pending.iter_mut().find(|r| r.id == id) {
            r.window -= len;
            over |= r.window < 0;
        }
        if over {
            self.state.window_violations.fetch_add(1, Ordering::SeqCst);
        }
        if self.state.behavior != H2Behavior::WindowNeverOpens && !p.is_empty() {
            for stream in [0, id] {
                frame(&mut self.out, 4, WINDOW_UPDATE, 0, stream);
                self.out.extend_from_slice(&(p.len() as u32).to_be_bytes());
            }
            self.window += len;
            if let Some(r) = self.pending.iter_mut().find(|r| r.id == id) {
                r.window += len;
            }
        }
        if let H2Behavior::Grpc(g) = self.state.behavior {
            if let Some(r) = self.pending.iter_mut().find(|r| r.id == id) {
                r.body.extend_from_slice(p);
            }
            if g.is_chat() {
                self.chat(id, g);
            }
        }
        if flags & END_STREAM != 0 {
            if let Some(r) = self.pending.iter_mut().find(|r| r.id == id) {
                r.complete = true;
                self.state.requests.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// A bidirectional call's messages read whole so far are answered; a call the
    /// behaviour ended is answered in full, and forgotten.
    fn chat(&mut self, id: u32, g: crate::GrpcBehavior) {
        let Some(i) = self.pending.iter().position(|r| r.id == id) else {
            return;
        };
        let r = &mut self.pending[i];
        let (read, compressed) = crate::grpc::chat(
            &mut self.out,
            &mut self.encoder,
            id,
            g,
            &mut r.body,
            &mut r.chat,
        );
        self.state.messages.fetch_add(read, Ordering::SeqCst);
        self.state
            .compressed
            .fetch_add(compressed, Ordering::SeqCst);
        if r.chat.ended {
            self.pending.remove(i);
            self.state.answers.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Answers the requests read in full, as the behaviour says.
    fn answer_ready(&mut self, behavior: &H2Behavior) -> io::Result<()> {
        let open = self.pending.iter().filter(|r| r.complete).count() as u64;
        self.state.max_open.fetch_max(open, Ordering::SeqCst);
        let ready: Vec<(u32, AppHead)> = self
            .pending
            .iter()
            .filter(|r| r.complete)
            .map(|r| (r.id, r.head.clone()))
            .collect();
        for (id, head) in ready {
            if self.gone {
                break;
            }
            let at = self.pending.iter().position(|r| r.id == id);
            let (body, mut chat) = at
                .map(|i| self.pending.remove(i))
                .map(|r| (r.body, r.chat))
                .unwrap_or_default();
            let k = self.state.handled.fetch_add(1, Ordering::SeqCst) + 1;
            self.handled_here += 1;
            let first = !std::mem::replace(&mut self.first_done, true);
            if self.before_answer(behavior, id, k, first)? {
                continue;
            }
            if let H2Behavior::App { nth, fault } = *behavior {
                if nth > 0 && self.handled_here.is_multiple_of(nth) {
                    self.app_fault(id, fault)?;
                    continue;
                }
                self.app(id, &head);
            } else {
                self.answer(id, behavior, &head.1, &body, &mut chat);
            }
            self.answered += 1;
            self.last_answered = id;
            self.after_answer(behavior)?;
        }
        Ok(())
    }

    /// What a hostile behaviour does before the answer to stream `id` (the `k`th request
    /// the server handled, the connection's `first` or not): true when it replaces the
    /// answer.
    fn before_answer(
        &mut self,
        behavior: &H2Behavior,
        id: u32,
        k: u64,
        first: bool,
    ) -> io::Result<bool> {
        match behavior {
            H2Behavior::HpackBlock { block } => {
                frame(
                    &mut self.out,
                    block.len(),
                    HEADERS,
                    END_HEADERS | END_STREAM,
                    id,
                );
                self.out.extend_from_slice(block);
                return Ok(self.give_up());
            }
            H2Behavior::ContinuationFlood { frames } => {
                frame(&mut self.out, 1, HEADERS, END_STREAM, id);
                self.out.push(0x88);
                for _ in 0..*frames {
                    frame(&mut self.out, 0, CONTINUATION, 0, id);
                }
                self.send_until_goaway()?;
                return Ok(self.give_up());
            }
            H2Behavior::ControlFlood { kind, count } if first => {
                self.send()?;
                self.flood(*kind, *count)?;
            }
            H2Behavior::EndlessBody => {
                self.state.answers.fetch_add(1, Ordering::SeqCst);
                frame(&mut self.out, 1, HEADERS, END_HEADERS, id);
                self.out.push(0x88);
                self.send()?;
                let mut chunk = Vec::new();
                frame(&mut chunk, 16_384, DATA, 0, id);
                chunk.resize(9 + 16_384, b'x');
                loop {
                    self.stream.write_all(&chunk)?;
                }
            }
            _ => {}
        }
        match *behavior {
            H2Behavior::ResetEvery { n, code } if k.is_multiple_of(n) => {
                self.reset(id, code);
                return Ok(true);
            }
            H2Behavior::RefuseFirst { n } if k <= n => {
                self.reset(id, REFUSED_STREAM);
                return Ok(true);
            }
            H2Behavior::NeverAnswerEvery { n } if k.is_multiple_of(n) => {
                self.state.unanswered.fetch_add(1, Ordering::SeqCst);
                return Ok(true);
            }
            H2Behavior::MalformedFrame => {
                frame(&mut self.out, 7, PING, 0, 0);
                self.out.extend_from_slice(&[0; 7]);
                return Ok(self.give_up());
            }
            H2Behavior::HpackError => {
                frame(&mut self.out, 1, HEADERS, END_HEADERS | END_STREAM, id);
                self.out.push(0x80 | 70);
                return Ok(self.give_up());
            }
            H2Behavior::MaxStreams { .. } => thread::sleep(Duration::from_millis(2)),
            H2Behavior::Slow(d) => thread::sleep(d),
            _ => {}
        }
        Ok(false)
    }

    /// The stream goes unanswered and the connection ends (what the behaviour wrote
    /// before is its last word): counted, and true for [`Self::before_answer`].
    fn give_up(&mut self) -> bool {
        self.state.unanswered.fetch_add(1, Ordering::SeqCst);
        self.gone = true;
        true
    }

    /// Resets stream `id` with `code` instead of answering it, counted.
    fn reset(&mut self, id: u32, code: u32) {
        self.state.resets.fetch_add(1, Ordering::SeqCst);
        frame(&mut self.out, 4, RST_STREAM, 0, id);
        self.out.extend_from_slice(&code.to_be_bytes());
    }

    /// What a behaviour does once an answer is sent: a GOAWAY after so many answers.
    fn after_answer(&mut self, behavior: &H2Behavior) -> io::Result<()> {
        match *behavior {
            H2Behavior::Goaway { after } if self.answered == after => {
                self.goaway(self.last_answered, 0);
                let left = self.pending.len() as u64;
                self.state.unprocessed.fetch_add(left, Ordering::SeqCst);
                self.pending.clear();
            }
            H2Behavior::GoawayError { after } if self.answered == after => {
                self.goaway(self.highest, INTERNAL_ERROR);
                let left = self.pending.len() as u64;
                self.state.abandoned.fetch_add(left, Ordering::SeqCst);
                self.pending.clear();
                self.send()?;
                self.stream.tcp().shutdown(Shutdown::Write)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes `count` frames of type `kind` asking for an acknowledgement, in batches,
    /// reading nothing meanwhile; counts those written in full.
    fn flood(&mut self, kind: u8, count: u64) -> io::Result<()> {
        let mut one = Vec::new();
        if kind == PING {
            frame(&mut one, 8, PING, 0, 0);
            one.extend_from_slice(b"floodacc");
        } else {
            frame(&mut one, 0, kind, 0, 0);
        }
        let batch = 1024u64;
        let many: Vec<u8> = one.repeat(batch as usize);
        let mut left = count;
        while left > 0 {
            let n = left.min(batch);
            match self.state.delivery {
                Delivery::Whole => self.stream.write_all(&many[..n as usize * one.len()])?,
                Delivery::Bytewise => {
                    for b in &many[..n as usize * one.len()] {
                        self.stream.write_all(std::slice::from_ref(b))?;
                    }
                }
            }
            self.stream.flush()?;
            self.state.flooded.fetch_add(n, Ordering::SeqCst);
            left -= n;
        }
        Ok(())
    }

    /// [`H2Behavior::App`]'s answer on stream `id` to the request `head` (method, path,
    /// cookie); counted before it is sent.
    fn app(&mut self, id: u32, head: &AppHead) {
        let a = crate::behavior::app_answer(&head.0, &head.1, head.2.as_deref());
        let (status, len) = (a.status.to_string(), a.body.len().to_string());
        let mut fields: Vec<(Vec<u8>, Vec<u8>)> = vec![
            (b":status".to_vec(), status.into_bytes()),
            (b"content-length".to_vec(), len.into_bytes()),
            (b"server".to_vec(), b"shootout-testserver".to_vec()),
        ];
        for (n, v) in &a.fields {
            fields.push((n.to_ascii_lowercase().into_bytes(), v.clone().into_bytes()));
        }
        let block = self
            .encoder
            .encode(fields.iter().map(|(n, v)| (&n[..], &v[..])));
        self.state.answers.fetch_add(1, Ordering::SeqCst);
        let bodiless = a.body.is_empty() || head.0 == "HEAD";
        let flags = if bodiless { END_STREAM } else { 0 };
        frame(&mut self.out, block.len(), HEADERS, END_HEADERS | flags, id);
        self.out.extend_from_slice(&block);
        if !bodiless {
            frame(&mut self.out, a.body.len(), DATA, END_STREAM, id);
            self.out.extend_from_slice(&a.body);
        }
    }

    /// [`H2Behavior::App`]'s `fault` on stream `id`, instead of its answer.
    fn app_fault(&mut self, id: u32, fault: AppFault) -> io::Result<()> {
        match fault {
            AppFault::Reset(code) => {
                self.state.resets.fetch_add(1, Ordering::SeqCst);
                frame(&mut self.out, 4, RST_STREAM, 0, id);
                self.out.extend_from_slice(&code.to_be_bytes());
            }
            AppFault::Silent => {
                self.state.unanswered.fetch_add(1, Ordering::SeqCst);
            }
            AppFault::GoawayError => {
                self.goaway(id, INTERNAL_ERROR);
                let left = 1 + self.pending.len() as u64;
                self.state.abandoned.fetch_add(left, Ordering::SeqCst);
                self.pending.clear();
                self.send()?;
                self.stream.tcp().shutdown(Shutdown::Write)?;
            }
            AppFault::Goaway => {
                self.goaway(id.saturating_sub(2), 0);
                let left = 1 + self.pending.len() as u64;
                self.state.unprocessed.fetch_add(left, Ordering::SeqCst);
                self.pending.clear();
            }
        }
        Ok(())
    }

    fn goaway(&mut self, last: u32, code: u32) {
        self.state.goaways.fetch_add(1, Ordering::SeqCst);
        frame(&mut self.out, 8, GOAWAY, 0, 0);
        self.out.extend_from_slice(&last.to_be_bytes());
        self.out.extend_from_slice(&code.to_be_bytes());
        self.gone = true;
    }

    /// Writes a whole answer on stream `id` to the call to `path` (a bidirectional
    /// call's end, its messages answered as they came: `chat`); counted before it is sent.
    fn answer(
        &mut self,
        id: u32,
        behavior: &H2Behavior,
        path: &str,
        body: &[u8],
        chat: &mut crate::grpc::Chat,
    ) {
        if let H2Behavior::HpackBomb { refs } = behavior {
            return self.bomb(id, *refs);
        }
        if let H2Behavior::Grpc(g) = behavior {
            return self.grpc_answer(id, *g, path, body, chat);
        }
        let body_len = match behavior {
            H2Behavior::Big { len } => *len,
            _ => H2_BODY.len(),
        };
        let len = body_len.to_string();
        let fields: [(&[u8], &[u8]); 3] = [
            (b":status", b"200"),
            (b"content-length", len.as_bytes()),
            (b"server", b"shootout-testserver"),
        ];
        let block = self.encoder.encode(fields);
        let out = &mut self.out;
        self.state.answers.fetch_add(1, Ordering::SeqCst);
        match behavior {
            H2Behavior::Fancy => {
                self.state.pings.fetch_add(1, Ordering::SeqCst);
                frame(out, 8, PING, 0, 0);
                out.extend_from_slice(b"shootout");
                let interim = self.encoder.encode([(&b":status"[..], &b"103"[..])]);
                frame(
                    out,
                    1 + interim.len() + 3,
                    HEADERS,
                    END_HEADERS | PADDED,
                    id,
                );
                out.push(3);
                out.extend_from_slice(&interim);
                out.extend_from_slice(&[0; 3]);
                let (a, b) = block.split_at(block.len() / 2);
                frame(out, a.len(), HEADERS, 0, id);
                out.extend_from_slice(a);
                frame(out, b.len(), CONTINUATION, END_HEADERS, id);
                out.extend_from_slice(b);
                frame(out, 1 + 6 + 4, DATA, PADDED, id);
                out.push(4);
                out.extend_from_slice(&H2_BODY[..6]);
                out.extend_from_slice(&[0; 4]);
                frame(out, 6, DATA, 0, id);
                out.extend_from_slice(&H2_BODY[6..]);
                let trailers = self.encoder.encode([(&b"x-trailer"[..], &b"yes"[..])]);
                frame(out, trailers.len(), HEADERS, END_HEADERS | END_STREAM, id);
                out.extend_from_slice(&trailers);
            }
            H2Behavior::Big { len } => {
                frame(out, block.len(), HEADERS, END_HEADERS, id);
                out.extend_from_slice(&block);
                let mut left = *len;
                while left > 0 {
                    let n = left.min(16_384);
                    left -= n;
                    let end = if left == 0 { END_STREAM } else { 0 };
                    frame(out, n, DATA, end, id);
                    out.resize(out.len() + n, b'x');
                }
            }
            _ => {
                frame(out, block.len(), HEADERS, END_HEADERS, id);
                out.extend_from_slice(&block);
                frame(out, H2_BODY.len(), DATA, END_STREAM, id);
                out.extend_from_slice(H2_BODY);
            }
        }
    }

    /// A gRPC call's answer on stream `id` as `g` says (a bidirectional call's end, its
    /// messages answered as they came: `chat`); counted before it is sent.
    fn grpc_answer(
        &mut self,
        id: u32,
        g: crate::GrpcBehavior,
        path: &str,
        body: &[u8],
        chat: &mut crate::grpc::Chat,
    ) {
        self.state.answers.fetch_add(1, Ordering::SeqCst);
        if g.is_chat() {
            return crate::grpc::chat_end(&mut self.out, &mut self.encoder, id, g, chat);
        }
        let read = crate::grpc::request_messages(body).len() as u64;
        self.state.messages.fetch_add(read, Ordering::SeqCst);
        let compressed = crate::grpc::compressed(body);
        self.state
            .compressed
            .fetch_add(compressed, Ordering::SeqCst);
        if g == crate::GrpcBehavior::Endless {
            self.endless.push((id, crate::grpc::reply_frame(id, body)));
        }
        crate::grpc::answer(&mut self.out, &mut self.encoder, id, g, path, body);
    }

    /// An answer whose header block names a large table entry `refs` times (encoded by
    /// hand: the other answers' encoder would lose track of its table).
    fn bomb(&mut self, id: u32, refs: usize) {
        self.state.answers.fetch_add(1, Ordering::SeqCst);
        // :status 200 (static index 8), content-length 12 (static name 28, not indexed).
        let mut block = vec![0x88, 0x0f, 0x0d, 0x02, b'1', b'2'];
        if !std::mem::replace(&mut self.bomb_sent, true) {
            // A literal with incremental indexing, name `x-bomb`, value 4,000 bytes.
            block.extend_from_slice(&[0x40, 0x06]);
            block.extend_from_slice(b"x-bomb");
            let rest = BOMB_ENTRY - 127;
            block.extend_from_slice(&[0x7f, (rest & 0x7f) as u8 | 0x80, (rest >> 7) as u8]);
            block.resize(block.len() + BOMB_ENTRY, b'b');
        }
        // Index 62: the newest entry of the dynamic table.
        block.resize(block.len() + refs, 0xbe);
        let out = &mut self.out;
        let parts: Vec<&[u8]> = block.chunks(16_384).collect();
        for (i, part) in parts.iter().enumerate() {
            let kind = if i == 0 { HEADERS } else { CONTINUATION };
            let end = if i + 1 == parts.len() { END_HEADERS } else { 0 };
            frame(out, part.len(), kind, end, id);
            out.extend_from_slice(part);
        }
        frame(out, H2_BODY.len(), DATA, END_STREAM, id);
        out.extend_from_slice(H2_BODY);
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

/// Appends a frame header.
fn frame(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// A HEADERS frame's fragment of its header block: its payload `p` without the padding
/// (PADDED: a length byte first, that many bytes last) and the priority fields
/// (PRIORITY: five bytes after the length byte). A payload shorter than they say is an
/// error (RFC 9113 §6.2: a connection error), never a panic.
fn header_fragment(flags: u8, p: &[u8]) -> io::Result<&[u8]> {
    let short = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "a HEADERS frame of {} bytes is shorter than its padding and priority",
                p.len()
            ),
        )
    };
    let mut fragment = p;
    if flags & PADDED != 0 {
        let (&pad, rest) = fragment.split_first().ok_or_else(short)?;
        let end = rest.len().checked_sub(usize::from(pad)).ok_or_else(short)?;
        fragment = &rest[..end];
    }
    if flags & PRIORITY != 0 {
        fragment = fragment.get(5..).ok_or_else(short)?;
    }
    Ok(fragment)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A HEADERS frame's padding and priority come off its fragment; a frame shorter
    /// than they say (empty and padded, padding past its end, priority cut short) is an
    /// error, not a panic.
    #[test]
    fn a_short_padded_or_prioritised_headers_frame_is_an_error_not_a_panic() {
        #[rustfmt::skip]
        let whole: [(u8, &[u8], &[u8]); 5] = [
            (0,                  b"\x82",                             b"\x82"),
            (PADDED,             b"\x02\x82\x00\x00",                 b"\x82"),
            (PADDED,             b"\x00",                             b""),
            (PRIORITY,           b"\x00\x00\x00\x01\x10\x82",         b"\x82"),
            (PADDED | PRIORITY,  b"\x01\x00\x00\x00\x01\x10\x82\x00", b"\x82"),
        ];
        for (flags, p, want) in whole {
            let got = header_fragment(flags, p).unwrap();
            assert_eq!(got, want, "{flags:#x} {p:?}");
        }
        #[rustfmt::skip]
        let short: [(u8, &[u8]); 5] = [
            (PADDED,            b""),
            (PADDED,            b"\x05\x82"),
            (PADDED,            b"\xff"),
            (PRIORITY,          b"\x00\x00\x00"),
            (PADDED | PRIORITY, b"\x01\x00\x00\x00\x01\x10"),
        ];
        for (flags, p) in short {
            let e = header_fragment(flags, p).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{flags:#x} {p:?}");
        }
    }

    /// A client's padded HEADERS frame with no payload at all ends its connection: the
    /// server closes it, counts no request and sees it end (a panic in the connection's
    /// thread would leave it counted open).
    #[test]
    fn a_short_padded_headers_frame_from_a_client_closes_its_connection() {
        let server = H2Server::start(H2Behavior::Hello).unwrap();
        let mut tcp = std::net::TcpStream::connect(server.addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut hello = PREFACE.to_vec();
        frame(&mut hello, 0, SETTINGS, 0, 0);
        frame(&mut hello, 0, HEADERS, END_HEADERS | END_STREAM | PADDED, 1);
        tcp.write_all(&hello).unwrap();
        let mut got = Vec::new();
        match tcp.read_to_end(&mut got) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}"),
        }
        assert!(server.wait_idle(Duration::from_secs(10)), "left open");
        assert_eq!((server.connections(), server.requests()), (1, 0));
    }
}
