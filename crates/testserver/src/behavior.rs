//! The behaviours a test server can have, and the exact bytes each one answers.
//!
//! Seams: [`Behavior`] is the public choice made by a test; [`plan`] is a pure function
//! from (behaviour, parsed request, request numbers) to the bytes to send plus what to do
//! with the connection afterwards ([`Reply`]), including which of those bytes complete an
//! answer and which no request asked for (the server's truth counters); [`on_accept`]
//! and [`idle_timeout`] cover what happens before any request. [`crate::conn`] performs
//! the plan on a socket. Answers contain no date and no randomness, so the same request
//! always gets the same bytes.

use std::io::Write as _;
use std::time::Duration;

use crate::request::{Request, ECHOED};

/// The body of [`Behavior::Hello`] and of most other answers: 12 bytes.
pub const HELLO: &[u8] = b"Hello World\n";

/// Every response head (except those of `Garbage` and of interim responses) carries this
/// header line right after the status line.
pub const SERVER_HEADER: &str = "Server: shootout-testserver";

/// How a test server answers each request.
///
/// Every answer starts with a status line and the line `Server: shootout-testserver`;
/// the bytes listed below come after it (`CRLF` written as `\r\n`). Common rules:
///
/// - An answer to `HEAD` is the same head with no body bytes (`Garbage` excepted).
/// - When the request asks to close (`Connection: close`, or HTTP/1.0 without
///   `Connection: keep-alive`), a keep-alive answer gains `Connection: close` as its last
///   header and the server closes after it; an HTTP/1.0 keep-alive request gets
///   `Connection: keep-alive` instead.
/// - A request with `Expect: 100-continue` and a body is first answered with
///   `HTTP/1.1 100 Continue\r\n\r\n` (except by `NeverAnswer`).
/// - "Closes" means a clean close: TLS `close_notify` when over TLS, then FIN (over
///   [`crate::Transport::TlsWithoutCloseNotify`], FIN only).
/// - Request numbers "server-wide" count complete requests over all connections,
///   starting at 1 ([`crate::TestServer::requests`] is the latest one).
/// - "The `Hello` answer" is `HTTP/1.1 200 OK`, `Content-Length: 12`, body
///   `Hello World\n`, with the `Connection` header the request calls for (see above).
///   "The canonical `Hello` answer", sent where no request asked for one, is always
///   the same 80 bytes, the answer to `GET / HTTP/1.1` without `Connection`:
///   `HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 12\r\n\r\n`
///   then `Hello World\n`.
/// - Every behaviour sends the same bytes in both [`crate::Delivery`] modes; only the
///   number of `write`s differs.
/// - What each answer adds to the server's truth counters
///   ([`crate::TestServer::answers`], [`unsolicited`](crate::TestServer::unsolicited),
///   [`dropped`](crate::TestServer::dropped)) is given under "Counts" where it is not
///   simply "one answer per request".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behavior {
    /// `HTTP/1.1 200 OK`, `Content-Length: 12`, body `Hello World\n`; keep-alive.
    Hello,
    /// `HTTP/1.1 {status} {reason}`, `Content-Length: {body.len()}`, then `body`;
    /// keep-alive. The body is sent even for statuses that forbid one (204, 304, 1xx):
    /// use [`Behavior::NoBody`] for correct bodiless answers.
    ///
    /// Counts: one answer per request, except for a 1xx status other than 101 (an
    /// interim answer: the request stays unanswered and counts as dropped when its
    /// connection ends). When the status forbids a body (1xx, 204, 304) and a non-empty
    /// body is sent (not to `HEAD`), that body is one unsolicited occurrence.
    Fixed {
        /// Status code of every answer.
        status: u16,
        /// Body of every answer.
        body: Vec<u8>,
    },
    /// `HTTP/1.1 200 OK`, `Transfer-Encoding: chunked` (plus `Trailer: X-Trailer` when
    /// `trailers`), then the body `Hello World\n` in three chunks, one with an extension:
    /// `6\r\nHello \r\n5;ext=1\r\nWorld\r\n1\r\n\n\r\n0\r\n`, then `X-Trailer: yes\r\n`
    /// when `trailers`, then `\r\n`; keep-alive.
    Chunked {
        /// Send a trailer section after the last chunk.
        trailers: bool,
    },
    /// `HTTP/1.0 200 OK` with no `Content-Length` and no `Connection` header, body
    /// `Hello World\n`, then closes: the body is delimited by the close.
    ///
    /// Counts: one answer per request, except over
    /// [`crate::Transport::TlsWithoutCloseNotify`], where a close without TLS
    /// `close_notify` leaves the body's end unknown (RFC 8446 §6.1): no answer and no
    /// drop. A `HEAD` request, whose answer is the complete head, counts as answered.
    Http10CloseDelimited,
    /// Like `Hello`, but closes after the `requests`-th answer on each connection (a
    /// value of 0 counts as 1). With `header`, that last answer carries
    /// `Connection: close`; without, the server closes silently after writing it.
    CloseAfter {
        /// Answers per connection before the server closes it.
        requests: u32,
        /// Announce the close with `Connection: close` on the last answer.
        header: bool,
    },
    /// A sync worker (gunicorn's `sync`, one uWSGI or mod_wsgi process): one connection
    /// at a time. The server accepts a connection, waits for its request however long it
    /// takes (an idle connection holds the server meanwhile), answers it with the `Hello`
    /// answer carrying `Connection: close`, closes, and only then accepts the next;
    /// connections meanwhile wait in the kernel's accept queue.
    SyncWorker,
    /// A sync worker that keeps its connection alive (uWSGI's `--http11-socket` with one
    /// process): one connection at a time, every request on it answered with the `Hello`
    /// answer, keep-alive, until the client closes it; only then is the next accepted.
    /// Connections meanwhile wait in the kernel's accept queue, their requests unread.
    HeldWorker,
    /// Answers without body by path: `/204` gets `HTTP/1.1 204 No Content` with no
    /// further header; `/304` gets `HTTP/1.1 304 Not Modified` with
    /// `Content-Length: 100` and no body; any other path gets `Hello` (so `HEAD` gets
    /// `Content-Length: 12` and no body). The query string is ignored. Keep-alive.
    NoBody,
    /// `HTTP/1.1 100 Continue\r\n\r\n` and
    /// `HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n`, then the
    /// `Hello` answer, all in one write; keep-alive.
    Interim,
    /// Reads (and counts) requests but never answers; the connection stays open until
    /// the client closes it or the server is dropped.
    ///
    /// Counts: every request read counts as dropped when its connection ends (not
    /// before: until then the server may still answer, as far as a client can tell).
    NeverAnswer,
    /// `Hello`, after `delay`, on the first `connections` connections accepted; the
    /// later ones are read but never answered, as by a server whose workers are all held
    /// by keep-alive clients. Keep-alive.
    ///
    /// Counts: the unanswered requests count as dropped when their connection ends.
    ServeFirst {
        /// How many connections get answers.
        connections: u64,
        /// How long each answer takes.
        delay: Duration,
    },
    /// `HTTP/1.1 200 OK`, `Content-Length: 1000`, then 100 bytes `x` of body, then
    /// resets the connection (`SO_LINGER` 0 and close, so the peer gets RST).
    ///
    /// Counts: no answer and no drop (the request got a truncated answer); a `HEAD`
    /// request, whose answer is the complete head, counts as answered.
    ResetMidBody,
    /// The 20 bytes `this is not http\r\n\r\n` (no status line, no `Server`), then
    /// closes. A `HEAD` request gets the same bytes.
    ///
    /// Counts: no answer and no drop.
    Garbage,
    /// `HTTP/1.1 200 OK`, `Content-Length: 100`, then only 50 bytes `x` of body, then
    /// closes cleanly.
    ///
    /// Counts: no answer and no drop (the request got a truncated answer); a `HEAD`
    /// request, whose answer is the complete head, counts as answered.
    ShortBody,
    /// `HTTP/1.1 200 OK`, `Content-Length: 5`, then the 12 bytes `Hello World\n`: the 7
    /// bytes after the announced length are garbage in front of the next answer.
    /// Keep-alive.
    ///
    /// Counts: one answer per request (head and `Hello`), and the 7 bytes ` World\n`
    /// after it are one unsolicited occurrence (none for `HEAD`, which gets the head
    /// only).
    LongBody,
    /// The server-wide requests `n`, `2n`, … get `HTTP/1.1 {status} {reason}` with
    /// `Content-Length` and the body `{status} {reason}\n` (e.g. `502 Bad Gateway\n`);
    /// the others get `Hello`. `n == 0` never fails. Keep-alive.
    FailEvery {
        /// Period of the failures, in requests.
        n: u32,
        /// Status code of the failing answers.
        status: u16,
    },
    /// `HTTP/1.1 200 OK`, `Content-Length: {len}`, then `len` bytes `x`, written from a
    /// shared 64 KiB buffer; keep-alive.
    Big {
        /// Body length in bytes.
        len: usize,
    },
    /// The server-wide requests `n`, `2n`, … wait `stall` before getting the `Hello`
    /// answer; the others get it at once. `n == 0` never stalls. Keep-alive.
    StallEvery {
        /// Period of the stalls, in requests.
        n: u32,
        /// How long each stalled request waits before its answer.
        stall: Duration,
    },
    /// A server of known capacity: requests are served one at a time server-wide (on every
    /// connection together), each taking `service`, so the most it answers is exactly
    /// `1 / service` per second and a higher offered rate only queues. The `Hello`
    /// answer; keep-alive.
    Capacity {
        /// How long each request takes.
        service: Duration,
    },
    /// A server whose cache starts cold: request `k` (server-wide, 1-based) gets the
    /// `Hello` answer after `cold × (1 − k / requests)`, none from `requests` on, so its
    /// latency falls (and, in a closed loop, its throughput rises) through its first
    /// requests and then stays level. Keep-alive.
    ColdCache {
        /// The first request's delay.
        cold: Duration,
        /// The requests it takes to warm.
        requests: u64,
    },
    /// A server slow to accept: its listen backlog holds one connection, and it accepts
    /// one connection per `every`; further connects wait in the kernel (SYNs dropped
    /// while the queue is full are sent again after 1 s). Each accepted connection gets
    /// the `Hello` answer `delay` after each request. Keep-alive.
    SlowAccept {
        /// The pause after each connection accepted.
        every: Duration,
        /// How long each answer takes.
        delay: Duration,
    },
    /// The `Hello` answer, but the head is written 3 bytes per write with a 1 ms pause
    /// between writes (and `TCP_NODELAY`), the body in one last write. Keep-alive.
    SlowHead,
    /// `HTTP/1.1 200 OK`, `Content-Length`, and a body of lines describing the request:
    /// `method: {method}\n`, `target: {target}\n`, `body-length: {bytes}\n`, then one
    /// `{name}: {value}\n` line for each of the request headers `content-type`,
    /// `cookie`, `x-test` that was sent (in that order; repeated headers joined by
    /// `, `). Keep-alive.
    Echo,
    /// A small web application for journeys, with a session cookie and a CSRF token,
    /// kept in the requests themselves so that it holds no state (bodies are not read:
    /// values travel in query strings). Keep-alive. The session is the `sid` cookie's
    /// value (the request's `Cookie` header, `sid=NAME`); its token is `t` followed by
    /// NAME reversed.
    /// - `POST /login?user=NAME`: 200, `Set-Cookie: sid=NAME; Path=/`, body `welcome`.
    /// - `GET /form`: 200, body `<input name="csrf" value="TOKEN">` (`none` without a
    ///   session).
    /// - `POST /paste?csrf=TOKEN&text=TEXT`: 302 with `Location: /paste/TEXT` and no body
    ///   when the session's token is TOKEN, else 403 `forbidden`.
    /// - `GET /paste/TEXT`: 200 with body TEXT within a session, else 403 `forbidden`.
    /// - `GET /desk?us=N`: 200 `served`, served in turn server-wide (every `/desk` request
    ///   of every connection waits for the one before it), each taking N µs, as
    ///   [`Behavior::Capacity`] serves: a step of known capacity, `1e6 / N` a second.
    /// - anything else: 404 `none`.
    App,
    /// The `Hello` answer to each request; then, `delay` after that answer was written,
    /// the canonical `Hello` answer (80 bytes) that no request asked for; then the
    /// server reads the next request (or closes, if the request asked to close). With
    /// `delay` zero both answers go out in one write (in [`crate::Delivery::Whole`]).
    /// The wait is cut short when the server stops. Keep-alive.
    ///
    /// Counts: one answer and one unsolicited occurrence per request.
    ExtraResponse {
        /// Time between the answer and the unsolicited one.
        delay: Duration,
    },
    /// Bodiless answers that carry a body anyway. A `HEAD` request (any path) gets the
    /// `Hello` head (with `Content-Length: 12`) followed by the 12 bytes
    /// `Hello World\n`; any other method on path `/204` (query ignored) gets
    /// `HTTP/1.1 204 No Content`, the `Server` line, no `Content-Length`, the
    /// `Connection` header the request calls for, the blank line, and the same 12 bytes;
    /// any other request gets `Hello`. Head and forbidden body go out in one write (in
    /// [`crate::Delivery::Whole`]). Keep-alive.
    ///
    /// Counts: one answer per request, plus one unsolicited occurrence per forbidden
    /// body.
    BodyAfterBodiless,
    /// On accept, before reading anything, the canonical `Hello` answer (80 bytes);
    /// then the `Hello` answer to every request. So every connection carries one answer
    /// nobody asked for, ahead of the real ones. Keep-alive.
    ///
    /// Counts: one unsolicited occurrence per connection (counted as soon as its first
    /// byte is written, even if the client never sends a request), one answer per
    /// request.
    AnswerFirst,
    /// `HTTP/1.1 101 Switching Protocols`, the `Server` line, `Upgrade: websocket`,
    /// `Connection: Upgrade`, the blank line — whatever the request (no other header,
    /// no body, also to `HEAD`) — then closes.
    ///
    /// Counts: the 101 is the request's answer (nothing else follows it).
    Upgrade,
    /// The `Hello` answer with `count` more header lines `X-Extra-{i}: {i}` (`i` from 1
    /// to `count`) between the `Server` line and `Content-Length`. Keep-alive.
    ManyHeaders {
        /// Number of extra header lines.
        count: usize,
    },
    /// The server-wide requests `every`, `2*every`, … are read completely (body too);
    /// then the server waits `work` (cut short when the server stops) and closes the
    /// connection without a byte of answer, as a worker that crashed mid-request. The
    /// other requests get `Hello`. `every == 0` never drops. Keep-alive.
    ///
    /// Counts: each dropped request counts as dropped before the server's close starts
    /// (so a client that sees the close finds it counted); the others as answers.
    DropAfterRead {
        /// Period of the drops, in requests.
        every: u32,
        /// How long the server "works" on a dropped request before closing.
        work: Duration,
    },
    /// `Hello`, keep-alive, with a keep-alive timeout: when the first byte of a new
    /// request (empty lines before a request line do not count) has not arrived `after`
    /// the previous answer was written (or the connection was accepted), the server
    /// closes the connection. Once a request has started there is no timeout. A request
    /// already received (pipelined) is answered at once. Implemented with a read timeout
    /// on the socket.
    CloseIdle {
        /// Keep-alive timeout.
        after: Duration,
    },
    /// `Hello`, keep-alive, but a request that arrives on a connection after it sat idle
    /// `after` or longer since its previous answer is not answered: the server closes the
    /// connection at once, as when a keep-alive timer fires just as a request arrives. The
    /// first request of a connection is always answered.
    ///
    /// Counts: the request that met the close is not counted at all (the server never
    /// took it); the others as requests and answers.
    RaceIdle {
        /// How long a connection may sit idle before its next request meets a close.
        after: Duration,
    },
    /// Accepts each connection and closes it at once without reading a request (what
    /// the client sent is discarded while the server waits for the client's close).
    ///
    /// Counts: a connection, nothing else.
    CloseOnAccept,
    /// `HTTP/1.1 200 OK`, the `Server` line, `Transfer-Encoding: chunked`, the
    /// `Connection` header the request calls for, the blank line, then chunks of 8192
    /// bytes `x` (`2000\r\n`, 8192 `x`, `\r\n`) forever, never a last chunk: until a
    /// write fails (the client closed) or the server stops. A `HEAD` request gets the
    /// head only and the connection stays open.
    ///
    /// Counts: no answer and no drop for a body that never ends; a `HEAD` request counts
    /// as answered.
    EndlessChunked,
    /// `HTTP/1.1 200 OK`, the `Server` line, `Content-Length: 12`, the blank line and
    /// `Hello World\n`, with no `Connection` header whatever the request asks, and the
    /// connection stays open: a request's wish to close (`Connection: close`, or HTTP/1.0
    /// without keep-alive) is ignored, as by a server that keeps every connection until
    /// the client closes it. A client that reads to the close waits forever; one that
    /// reads the answer by its length is done after 80 bytes.
    KeepsOpen,
}

impl Behavior {
    /// Whether the server takes one connection at a time, accepting the next only when
    /// the one it serves has ended (a sync worker's way).
    pub fn one_at_a_time(&self) -> bool {
        matches!(self, Behavior::SyncWorker | Behavior::HeldWorker)
    }
}

/// Reason phrase sent after a status code; `Unknown` for codes not listed.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// What to do with the connection once an answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Then {
    /// Wait for the next request.
    KeepAlive,
    /// Close cleanly (TLS close_notify unless the server omits it, FIN).
    Close,
    /// Reset the connection (RST).
    Reset,
}

/// What the bytes [`plan`] wrote are to the request they answer (the unsolicited tail
/// aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// They end with a complete final answer: counted in `answers` just before the
    /// write that carries its last byte.
    Answer,
    /// They settle the request without a complete answer (garbage, a truncated or an
    /// endless body): counted neither as answered nor as dropped.
    Broken,
    /// No final answer: the request counts as dropped when its connection ends.
    Unanswered,
}

/// How to send the bytes [`plan`] wrote, besides the bytes themselves.
///
/// The stream sent is the planned bytes followed by `fill` filler bytes; offsets below
/// are into that stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reply {
    /// Wait this long before writing anything.
    pub delay: Duration,
    /// Served in turn server-wide: wait for the desk, then this long, before writing
    /// (see [`Behavior::Capacity`]).
    pub queued: Option<Duration>,
    /// Write this many leading bytes 3 at a time with a 1 ms pause between writes.
    pub trickle: usize,
    /// After the planned bytes, write this many filler bytes `x`.
    pub fill: usize,
    /// What the stream, up to its unsolicited tail, is to the request.
    pub outcome: Outcome,
    /// The last `unsolicited` bytes of the stream were asked for by no request: one
    /// unsolicited occurrence (0: none).
    pub unsolicited: usize,
    /// Wait this long (cut short by a stop) before writing the unsolicited tail; zero:
    /// the tail goes out with the bytes before it.
    pub pause: Duration,
    /// After the stream, write [`endless_chunk`] over and over until a write fails.
    pub endless: bool,
    /// The stream is a complete answer only once a clean close ends its body (no length
    /// was given): a close without TLS `close_notify` leaves it [`Outcome::Broken`].
    pub close_delimited: bool,
    /// What to do with the connection afterwards.
    pub then: Then,
}

/// One chunk of [`Behavior::EndlessChunked`]'s body: 8192 bytes `x` in chunk framing.
pub(crate) fn endless_chunk() -> Vec<u8> {
    let mut chunk = b"2000\r\n".to_vec();
    chunk.resize(chunk.len() + 8192, b'x');
    chunk.extend_from_slice(b"\r\n");
    chunk
}

/// Request numbers an answer may depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Numbers {
    /// Server-wide number of this request, 1-based.
    pub server: u64,
    /// Number of this request on its connection, 1-based.
    pub connection: u64,
    /// Server-wide number of this request's connection, in accept order, 0-based.
    pub accepted: u64,
}

/// Writes the answer to `req` into `out` (which the caller has cleared) and says how to
/// send it. One arm per [`Behavior`], naming the function that writes its bytes; those
/// functions follow, by family, in the order of the arms.
pub(crate) fn plan(b: &Behavior, req: &Request, n: Numbers, out: &mut Vec<u8>) -> Reply {
    let mut reply = Reply::answer(req);
    let r = &mut reply;
    match b {
        // The `Hello` answer: these behaviours differ before a request (on accept, idle).
        Behavior::Hello
        | Behavior::AnswerFirst
        | Behavior::CloseIdle { .. }
        | Behavior::RaceIdle { .. }
        | Behavior::CloseOnAccept => hello(out, req),
        // Well-formed answers of other shapes.
        Behavior::Fixed { status, body } => fixed(out, req, *status, body, r),
        Behavior::Chunked { trailers } => chunked(out, req, *trailers),
        Behavior::NoBody => no_body(out, req),
        Behavior::Interim => interim(out, req),
        Behavior::FailEvery { n: period, status } => {
            fail_every(out, req, every(n, *period), *status);
        }
        Behavior::Big { len } => big(out, req, *len, r),
        Behavior::Echo => echo(out, req),
        Behavior::App => r.queued = app(out, req),
        Behavior::ManyHeaders { count } => many_headers(out, req, *count),
        // What becomes of the connection after the answer.
        Behavior::KeepsOpen => keeps_open(out, req, r),
        Behavior::Http10CloseDelimited => close_delimited(out, req, r),
        Behavior::CloseAfter { requests, header } => {
            close_after(out, req, n, (*requests, *header), r);
        }
        Behavior::SyncWorker => close_after(out, req, n, (1, true), r),
        Behavior::HeldWorker => hello(out, req),
        Behavior::Upgrade => upgrade(out, r),
        // When, and whether, the answer goes out.
        Behavior::NeverAnswer => never_answer(r),
        Behavior::ServeFirst { connections, delay } => {
            serve_first(out, req, n.accepted < *connections, *delay, r);
        }
        Behavior::StallEvery { n: period, stall } => {
            let stalled = every(n, *period);
            delayed(out, req, if stalled { *stall } else { Duration::ZERO }, r);
        }
        Behavior::SlowAccept { delay, .. } => delayed(out, req, *delay, r),
        Behavior::ColdCache { cold, requests } => {
            delayed(out, req, cold_delay(*cold, *requests, n.server), r);
        }
        Behavior::Capacity { service } => queued(out, req, *service, r),
        Behavior::SlowHead => slow_head(out, req, r),
        Behavior::DropAfterRead {
            every: period,
            work,
        } => drop_after_read(out, req, every(n, *period), *work, r),
        // Framing faults: bytes that break what the head announced, or that no request
        // asked for.
        Behavior::ResetMidBody => truncated_body(out, req, (1000, 100), Then::Reset, r),
        Behavior::ShortBody => truncated_body(out, req, (100, 50), Then::Close, r),
        Behavior::Garbage => garbage(out, r),
        Behavior::LongBody => long_body(out, req, r),
        Behavior::ExtraResponse { delay } => extra_response(out, req, *delay, r),
        Behavior::BodyAfterBodiless => body_after_bodiless(out, req, r),
        Behavior::EndlessChunked => endless_chunked(out, req, r),
    }
    reply
}

impl Reply {
    /// A complete answer sent at once, then what the request asks of the connection.
    fn answer(req: &Request) -> Reply {
        Reply {
            delay: Duration::ZERO,
            queued: None,
            trickle: 0,
            fill: 0,
            outcome: Outcome::Answer,
            unsolicited: 0,
            pause: Duration::ZERO,
            endless: false,
            close_delimited: false,
            then: if req.close {
                Then::Close
            } else {
                Then::KeepAlive
            },
        }
    }
}

/// Whether the server-wide request `n.server` is one of `period`, `2 × period`, …
/// (never for a period of 0).
fn every(n: Numbers, period: u32) -> bool {
    period > 0 && n.server.is_multiple_of(u64::from(period))
}

// Well-formed answers of other shapes.

/// [`Behavior::Fixed`]: `status` and `body`, whatever the status allows.
fn fixed(out: &mut Vec<u8>, req: &Request, status: u16, body: &[u8], reply: &mut Reply) {
    simple(out, req, status, body);
    if matches!(status, 100..=199 | 204 | 304) && !req.is_head() {
        reply.unsolicited = body.len();
    }
    if (100..=199).contains(&status) && status != 101 {
        reply.outcome = Outcome::Unanswered;
    }
}

/// [`Behavior::Chunked`]: `Hello World\n` in three chunks, with a trailer if asked.
fn chunked(out: &mut Vec<u8>, req: &Request, trailers: bool) {
    status_line(out, "HTTP/1.1", 200);
    out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    if trailers {
        out.extend_from_slice(b"Trailer: X-Trailer\r\n");
    }
    end_head(out, req);
    if !req.is_head() {
        out.extend_from_slice(b"6\r\nHello \r\n5;ext=1\r\nWorld\r\n1\r\n\n\r\n0\r\n");
        if trailers {
            out.extend_from_slice(b"X-Trailer: yes\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// [`Behavior::NoBody`]: 204 or 304 by path, else `Hello`.
fn no_body(out: &mut Vec<u8>, req: &Request) {
    match req.path() {
        "/204" => {
            status_line(out, "HTTP/1.1", 204);
            end_head(out, req);
        }
        "/304" => {
            status_line(out, "HTTP/1.1", 304);
            out.extend_from_slice(b"Content-Length: 100\r\n");
            end_head(out, req);
        }
        _ => hello(out, req),
    }
}

/// [`Behavior::Interim`]: 100 and 103, then `Hello`.
fn interim(out: &mut Vec<u8>, req: &Request) {
    out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
    out.extend_from_slice(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n");
    hello(out, req);
}

/// [`Behavior::FailEvery`]: `{status} {reason}\n` when `failing`, else `Hello`.
fn fail_every(out: &mut Vec<u8>, req: &Request, failing: bool, status: u16) {
    if failing {
        let text = format!("{status} {}\n", reason(status));
        simple(out, req, status, text.as_bytes());
    } else {
        hello(out, req);
    }
}

/// [`Behavior::Big`]: the head here, the `len` body bytes as filler.
fn big(out: &mut Vec<u8>, req: &Request, len: usize, reply: &mut Reply) {
    status_line(out, "HTTP/1.1", 200);
    let _ = write!(out, "Content-Length: {len}\r\n");
    end_head(out, req);
    if !req.is_head() {
        reply.fill = len;
    }
}

/// [`Behavior::Echo`]: lines describing the request.
fn echo(out: &mut Vec<u8>, req: &Request) {
    let mut text = format!(
        "method: {}\ntarget: {}\nbody-length: {}\n",
        req.method, req.target, req.content_length
    );
    for (name, value) in ECHOED.iter().zip(&req.echoed) {
        if let Some(value) = value {
            text.push_str(&format!("{name}: {value}\n"));
        }
    }
    simple(out, req, 200, text.as_bytes());
}

/// [`Behavior::ManyHeaders`]: `Hello` with `count` more header lines.
fn many_headers(out: &mut Vec<u8>, req: &Request, count: usize) {
    status_line(out, "HTTP/1.1", 200);
    for i in 1..=count {
        let _ = write!(out, "X-Extra-{i}: {i}\r\n");
    }
    out.extend_from_slice(b"Content-Length: 12\r\n");
    end_head(out, req);
    body(out, req, HELLO);
}

// What becomes of the connection after the answer.

/// [`Behavior::KeepsOpen`]: `Hello` without a `Connection` header, kept open.
fn keeps_open(out: &mut Vec<u8>, req: &Request, reply: &mut Reply) {
    status_line(out, "HTTP/1.1", 200);
    let _ = write!(out, "Content-Length: {}\r\n\r\n", HELLO.len());
    body(out, req, HELLO);
    reply.then = Then::KeepAlive;
}

/// [`Behavior::Http10CloseDelimited`]: an HTTP/1.0 body that the close ends.
fn close_delimited(out: &mut Vec<u8>, req: &Request, reply: &mut Reply) {
    status_line(out, "HTTP/1.0", 200);
    out.extend_from_slice(b"\r\n");
    body(out, req, HELLO);
    reply.then = Then::Close;
    reply.close_delimited = !req.is_head();
}

/// [`Behavior::CloseAfter`] (and [`Behavior::SyncWorker`], one request announced):
/// `Hello`, the connection's `requests`-th one followed by a close, announced with
/// `Connection: close` when `header`.
fn close_after(
    out: &mut Vec<u8>,
    req: &Request,
    n: Numbers,
    (requests, header): (u32, bool),
    reply: &mut Reply,
) {
    if n.connection < u64::from(requests.max(1)) {
        return hello(out, req);
    }
    status_line(out, "HTTP/1.1", 200);
    out.extend_from_slice(b"Content-Length: 12\r\n");
    if header || req.close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    body(out, req, HELLO);
    reply.then = Then::Close;
}

/// [`Behavior::Upgrade`]: 101 to websocket, then a close.
fn upgrade(out: &mut Vec<u8>, reply: &mut Reply) {
    status_line(out, "HTTP/1.1", 101);
    out.extend_from_slice(b"Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    reply.then = Then::Close;
}

// When, and whether, the answer goes out.

/// [`Behavior::NeverAnswer`]: no bytes, the connection kept.
fn never_answer(reply: &mut Reply) {
    reply.then = Then::KeepAlive;
    reply.outcome = Outcome::Unanswered;
}

/// [`Behavior::ServeFirst`]: `Hello` after `delay` on a connection `served`, else nothing.
fn serve_first(out: &mut Vec<u8>, req: &Request, served: bool, delay: Duration, reply: &mut Reply) {
    if served {
        delayed(out, req, delay, reply);
    } else {
        reply.outcome = Outcome::Unanswered;
    }
}

/// `Hello` after `delay` ([`Behavior::StallEvery`], [`Behavior::SlowAccept`],
/// [`Behavior::ColdCache`]).
fn delayed(out: &mut Vec<u8>, req: &Request, delay: Duration, reply: &mut Reply) {
    reply.delay = delay;
    hello(out, req);
}

/// [`Behavior::ColdCache`]'s delay for the server-wide request `k`: `cold × (1 − k /
/// requests)`, none from `requests` on.
fn cold_delay(cold: Duration, requests: u64, k: u64) -> Duration {
    cold.mul_f64(requests.saturating_sub(k) as f64 / requests.max(1) as f64)
}

/// [`Behavior::Capacity`]: `Hello`, served in turn server-wide, each taking `service`.
fn queued(out: &mut Vec<u8>, req: &Request, service: Duration, reply: &mut Reply) {
    reply.queued = Some(service);
    hello(out, req);
}

/// [`Behavior::SlowHead`]: `Hello`, its head trickled.
fn slow_head(out: &mut Vec<u8>, req: &Request, reply: &mut Reply) {
    hello(out, req);
    reply.trickle = out.len() - if req.is_head() { 0 } else { HELLO.len() };
}

/// [`Behavior::DropAfterRead`]: when `dropped`, no answer but a close after `work`; else
/// `Hello`.
fn drop_after_read(
    out: &mut Vec<u8>,
    req: &Request,
    dropped: bool,
    work: Duration,
    reply: &mut Reply,
) {
    if dropped {
        reply.delay = work;
        reply.outcome = Outcome::Unanswered;
        reply.then = Then::Close;
    } else {
        hello(out, req);
    }
}

// Framing faults.

/// [`Behavior::ResetMidBody`], [`Behavior::ShortBody`]: a head announcing `announced`
/// body bytes, only `sent` bytes `x`, then the connection ends as `then` says.
fn truncated_body(
    out: &mut Vec<u8>,
    req: &Request,
    (announced, sent): (usize, usize),
    then: Then,
    reply: &mut Reply,
) {
    status_line(out, "HTTP/1.1", 200);
    let _ = write!(out, "Content-Length: {announced}\r\n\r\n");
    if !req.is_head() {
        out.resize(out.len() + sent, b'x');
    }
    reply.then = then;
    reply.outcome = truncated(req);
}

/// [`Behavior::Garbage`]: no HTTP at all, then a close.
fn garbage(out: &mut Vec<u8>, reply: &mut Reply) {
    out.extend_from_slice(b"this is not http\r\n\r\n");
    reply.then = Then::Close;
    reply.outcome = Outcome::Broken;
}

/// [`Behavior::LongBody`]: 12 body bytes where the head announces 5.
fn long_body(out: &mut Vec<u8>, req: &Request, reply: &mut Reply) {
    status_line(out, "HTTP/1.1", 200);
    out.extend_from_slice(b"Content-Length: 5\r\n");
    end_head(out, req);
    body(out, req, HELLO);
    if !req.is_head() {
        reply.unsolicited = HELLO.len() - 5;
    }
}

/// [`Behavior::ExtraResponse`]: `Hello`, then the canonical `Hello` unasked after `delay`.
fn extra_response(out: &mut Vec<u8>, req: &Request, delay: Duration, reply: &mut Reply) {
    hello(out, req);
    let before = out.len();
    canonical_hello(out);
    reply.unsolicited = out.len() - before;
    reply.pause = delay;
}

/// [`Behavior::BodyAfterBodiless`]: a body after a head that forbids one.
fn body_after_bodiless(out: &mut Vec<u8>, req: &Request, reply: &mut Reply) {
    if req.is_head() {
        hello(out, req);
    } else if req.path() == "/204" {
        status_line(out, "HTTP/1.1", 204);
        end_head(out, req);
    } else {
        return hello(out, req);
    }
    out.extend_from_slice(HELLO);
    reply.unsolicited = HELLO.len();
}

/// [`Behavior::EndlessChunked`]: a chunked head, then chunks until the client goes.
fn endless_chunked(out: &mut Vec<u8>, req: &Request, reply: &mut Reply) {
    status_line(out, "HTTP/1.1", 200);
    out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    end_head(out, req);
    if !req.is_head() {
        reply.endless = true;
        reply.outcome = Outcome::Broken;
    }
}

/// What a connection does once accepted, before reading anything: writes into `out`
/// (which the caller has cleared) the bytes to send unasked (one unsolicited
/// occurrence when not empty), and says whether to go on reading requests or to close.
pub(crate) fn on_accept(b: &Behavior, out: &mut Vec<u8>) -> Then {
    match b {
        Behavior::AnswerFirst => {
            canonical_hello(out);
            Then::KeepAlive
        }
        Behavior::CloseOnAccept => Then::Close,
        _ => Then::KeepAlive,
    }
}

/// How long a connection may wait for the first byte of its next request before the
/// server closes it; `None`: no limit.
/// `RaceIdle`'s idle time after which a request meets a close.
pub(crate) fn race_after(b: &Behavior) -> Option<Duration> {
    match b {
        Behavior::RaceIdle { after } => Some(*after),
        _ => None,
    }
}

pub(crate) fn idle_timeout(b: &Behavior) -> Option<Duration> {
    match b {
        Behavior::CloseIdle { after } => Some(*after),
        _ => None,
    }
}

/// A `HEAD` request's answer is a complete head; anyone else's is cut short.
fn truncated(req: &Request) -> Outcome {
    if req.is_head() {
        Outcome::Answer
    } else {
        Outcome::Broken
    }
}

/// The canonical `Hello` answer: the one to `GET / HTTP/1.1` without `Connection`.
fn canonical_hello(out: &mut Vec<u8>) {
    status_line(out, "HTTP/1.1", 200);
    out.extend_from_slice(b"Content-Length: 12\r\n\r\n");
    out.extend_from_slice(HELLO);
}

/// Writes into `out` (after clearing it) the answer to a request head that cannot be
/// served: `HTTP/1.1 {status} {reason}`, `Content-Length`, `Connection: close`, body
/// `{status} {reason}\n`.
pub(crate) fn refusal(status: u16, out: &mut Vec<u8>) {
    out.clear();
    let text = format!("{status} {}\n", reason(status));
    status_line(out, "HTTP/1.1", status);
    let _ = write!(
        out,
        "Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

/// A complete keep-alive answer with `Content-Length`.
fn simple(out: &mut Vec<u8>, req: &Request, status: u16, content: &[u8]) {
    status_line(out, "HTTP/1.1", status);
    let _ = write!(out, "Content-Length: {}\r\n", content.len());
    end_head(out, req);
    body(out, req, content);
}

/// The `Hello` answer: [`simple`] with status 200 and body `Hello World\n`.
fn hello(out: &mut Vec<u8>, req: &Request) {
    simple(out, req, 200, HELLO);
}

/// [`Behavior::App`]'s answer to `req`, and how long it takes at the server-wide desk
/// when it is served in turn (`/desk`).
fn app(out: &mut Vec<u8>, req: &Request) -> Option<Duration> {
    let a = app_answer(&req.method, &req.target, req.echoed[1].as_deref());
    status_line(out, "HTTP/1.1", a.status);
    for (n, v) in &a.fields {
        let _ = write!(out, "{n}: {v}\r\n");
    }
    let _ = write!(out, "Content-Length: {}\r\n", a.body.len());
    end_head(out, req);
    body(out, req, &a.body);
    a.desk
}

/// What [`Behavior::App`] answers, whatever the protocol carries it.
pub(crate) struct AppAnswer {
    pub status: u16,
    /// Fields besides `Server` and `Content-Length`, names as HTTP/1.1 writes them.
    pub fields: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// `/desk`: how long it takes at the server-wide desk.
    pub desk: Option<Duration>,
}

/// [`Behavior::App`]'s answer to a request with `method`, `target` and `cookie` (the
/// `Cookie` field's value, if sent).
pub(crate) fn app_answer(method: &str, target: &str, cookie: Option<&str>) -> AppAnswer {
    let sid = cookie.and_then(|c| {
        c.split(';')
            .find_map(|kv| kv.trim().strip_prefix("sid="))
            .map(str::to_string)
    });
    let token = sid
        .as_ref()
        .map(|s| format!("t{}", s.chars().rev().collect::<String>()));
    let query = |key: &str| {
        target.split_once('?').and_then(|(_, q)| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        })
    };
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    let plain = |status: u16, body: &[u8]| AppAnswer {
        status,
        fields: Vec::new(),
        body: body.to_vec(),
        desk: None,
    };
    match (method, path) {
        ("POST", "/login") => {
            let user = query("user").unwrap_or_default();
            AppAnswer {
                fields: vec![("Set-Cookie", format!("sid={user}; Path=/"))],
                ..plain(200, b"welcome")
            }
        }
        ("GET", "/form") => {
            let t = token.unwrap_or_else(|| "none".into());
            plain(
                200,
                format!("<input name=\"csrf\" value=\"{t}\">").as_bytes(),
            )
        }
        ("POST", "/paste") if token.is_some() && query("csrf") == token => {
            let text = query("text").unwrap_or_default();
            AppAnswer {
                fields: vec![("Location", format!("/paste/{text}"))],
                ..plain(302, b"")
            }
        }
        ("GET", p) if p.starts_with("/paste/") && sid.is_some() => {
            plain(200, &p.as_bytes()["/paste/".len()..])
        }
        ("POST", "/paste") | ("GET", _) if path.starts_with("/paste") => plain(403, b"forbidden"),
        ("GET", "/desk") => {
            let us = query("us").and_then(|v| v.parse().ok()).unwrap_or(0);
            AppAnswer {
                desk: Some(Duration::from_micros(us)),
                ..plain(200, b"served")
            }
        }
        _ => plain(404, b"none"),
    }
}

/// Writes the status line and the `Server` header line.
fn status_line(out: &mut Vec<u8>, version: &str, status: u16) {
    let _ = write!(
        out,
        "{version} {status} {}\r\n{SERVER_HEADER}\r\n",
        reason(status)
    );
}

/// Writes the `Connection` header the request calls for, and the blank line.
fn end_head(out: &mut Vec<u8>, req: &Request) {
    if req.close {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if req.http10 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends `content` unless the request is `HEAD`.
fn body(out: &mut Vec<u8>, req: &Request, content: &[u8]) {
    if !req.is_head() {
        out.extend_from_slice(content);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::parse_head;

    fn answer(b: &Behavior, head: &str, server: u64, connection: u64) -> (String, Reply) {
        let req = parse_head(head.as_bytes()).unwrap();
        let mut out = Vec::new();
        let numbers = Numbers {
            server,
            connection,
            accepted: 0,
        };
        let reply = plan(b, &req, numbers, &mut out);
        (String::from_utf8(out).unwrap(), reply)
    }

    const GET: &str = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

    #[test]
    fn hello_honours_head_and_close() {
        let hello = "HTTP/1.1 200 OK\r\nServer: shootout-testserver\r\nContent-Length: 12\r\n";
        let (text, reply) = answer(&Behavior::Hello, GET, 1, 1);
        assert_eq!(text, format!("{hello}\r\nHello World\n"));
        assert_eq!(reply.then, Then::KeepAlive);

        let (text, reply) = answer(
            &Behavior::Hello,
            "HEAD / HTTP/1.1\r\nConnection: close\r\n\r\n",
            1,
            1,
        );
        assert_eq!(text, format!("{hello}Connection: close\r\n\r\n"));
        assert_eq!(reply.then, Then::Close);

        let (text, _) = answer(
            &Behavior::Hello,
            "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            1,
            1,
        );
        assert_eq!(
            text,
            format!("{hello}Connection: keep-alive\r\n\r\nHello World\n")
        );
    }

    #[test]
    fn close_after_counts_per_connection() {
        let b = Behavior::CloseAfter {
            requests: 2,
            header: false,
        };
        assert_eq!(answer(&b, GET, 7, 1).1.then, Then::KeepAlive);
        let (text, reply) = answer(&b, GET, 8, 2);
        assert!(!text.contains("Connection"));
        assert_eq!(reply.then, Then::Close);
    }

    /// A cold cache's delay falls with the server-wide request number, to none.
    #[test]
    fn a_cold_cache_warms_with_the_requests_served() {
        let b = Behavior::ColdCache {
            cold: Duration::from_millis(4),
            requests: 1000,
        };
        // (request, delay): 4 ms × (1000 − k) / 1000.
        for (k, us) in [
            (1, 3996),
            (250, 3000),
            (500, 2000),
            (999, 4),
            (1000, 0),
            (5000, 0),
        ] {
            let (text, reply) = answer(&b, GET, k, 1);
            assert!(text.starts_with("HTTP/1.1 200 OK"));
            assert_eq!(reply.delay, Duration::from_micros(us), "request {k}");
        }
    }

    #[test]
    fn fail_and_stall_count_server_wide() {
        let fail = Behavior::FailEvery { n: 3, status: 502 };
        assert!(answer(&fail, GET, 2, 2).0.starts_with("HTTP/1.1 200 OK"));
        let (text, _) = answer(&fail, GET, 3, 1);
        assert!(text.starts_with("HTTP/1.1 502 Bad Gateway\r\n"));
        assert!(text.ends_with("Content-Length: 16\r\n\r\n502 Bad Gateway\n"));

        let stall = Behavior::StallEvery {
            n: 2,
            stall: Duration::from_secs(1),
        };
        assert_eq!(answer(&stall, GET, 3, 1).1.delay, Duration::ZERO);
        assert_eq!(answer(&stall, GET, 4, 1).1.delay, Duration::from_secs(1));
        let never = Behavior::FailEvery { n: 0, status: 500 };
        assert!(answer(&never, GET, 0, 1).0.starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn big_fills_and_slow_head_trickles_the_head_only() {
        let (text, reply) = answer(&Behavior::Big { len: 10 }, GET, 1, 1);
        assert!(text.ends_with("Content-Length: 10\r\n\r\n"));
        assert_eq!(reply.fill, 10);
        let (text, reply) = answer(&Behavior::SlowHead, GET, 1, 1);
        assert_eq!(reply.trickle, text.len() - 12);
    }

    #[test]
    fn counted_parts_of_the_new_behaviours() {
        let (text, reply) = answer(
            &Behavior::ExtraResponse {
                delay: Duration::from_millis(5),
            },
            GET,
            1,
            1,
        );
        assert_eq!(text.len(), 160);
        assert_eq!((reply.outcome, reply.unsolicited), (Outcome::Answer, 80));
        assert_eq!(reply.pause, Duration::from_millis(5));

        let b = Behavior::BodyAfterBodiless;
        let (text, reply) = answer(&b, "GET /204 HTTP/1.1\r\n\r\n", 1, 1);
        assert!(text.ends_with("testserver\r\n\r\nHello World\n"));
        assert_eq!(reply.unsolicited, 12);
        assert_eq!(answer(&b, GET, 1, 1).1.unsolicited, 0);

        let drop = Behavior::DropAfterRead {
            every: 2,
            work: Duration::from_secs(1),
        };
        let (text, reply) = answer(&drop, GET, 4, 1);
        assert!(text.is_empty());
        assert_eq!(
            (reply.outcome, reply.then),
            (Outcome::Unanswered, Then::Close)
        );
        assert_eq!(reply.delay, Duration::from_secs(1));
        assert_eq!(answer(&drop, GET, 3, 1).1.outcome, Outcome::Answer);

        let (_, reply) = answer(&Behavior::EndlessChunked, GET, 1, 1);
        assert!(reply.endless && reply.outcome == Outcome::Broken);
        let (_, reply) = answer(&Behavior::EndlessChunked, "HEAD / HTTP/1.1\r\n\r\n", 1, 1);
        assert!(!reply.endless && reply.outcome == Outcome::Answer);
        assert_eq!(endless_chunk().len(), 6 + 8192 + 2);

        let mut out = Vec::new();
        assert_eq!(on_accept(&Behavior::AnswerFirst, &mut out), Then::KeepAlive);
        assert_eq!(out.len(), 80);
        out.clear();
        assert_eq!(on_accept(&Behavior::CloseOnAccept, &mut out), Then::Close);
        assert!(out.is_empty());
        let after = Duration::from_millis(7);
        assert_eq!(idle_timeout(&Behavior::CloseIdle { after }), Some(after));
        assert_eq!(idle_timeout(&Behavior::Hello), None);
    }

    #[test]
    fn echo_describes_the_request() {
        let head = "POST /e?q HTTP/1.1\r\nX-Test: a\r\nCookie: c=1\r\nContent-Length: 3\r\n\r\n";
        let (text, _) = answer(&Behavior::Echo, head, 1, 1);
        let body = "method: POST\ntarget: /e?q\nbody-length: 3\ncookie: c=1\nx-test: a\n";
        assert!(text.ends_with(&format!("Content-Length: {}\r\n\r\n{body}", body.len())));
    }
}
