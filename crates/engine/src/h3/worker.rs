//! One HTTP/3 worker thread: the engine's event loop driving its QUIC connections, each
//! over a connected non-blocking UDP socket registered under the connection's token. A
//! readiness event reads the socket's datagrams into the connection's `quinn-proto`
//! state, then hands the bytes of every readable stream to the HTTP/3 state
//! ([`super::conn`]), records the requests it ended, opens new ones on the freed slots
//! (closed loop) and sends what QUIC has to send. QUIC's timers (acknowledgement delay,
//! loss detection, idle timeout) are kept per connection, and the earliest of them is the
//! loop's [`Protocol::next_wake`].
//!
//! Every request ends exactly once, as over HTTP/2: answered, or failed as one class —
//! a timeout (its deadline passed: the stream is stopped and reset, the connection kept;
//! or QUIC's idle timeout ended the connection), a stream reset by the server (its
//! HTTP/3 code counted with the other resets; H3_REQUEST_REJECTED is a refusal), a
//! connection closed with an error code (an HTTP/3 or QUIC CONNECTION_CLOSE) or without
//! one (reset), a malformed answer (no final status, a QPACK or framing error: the
//! connection is closed with the error's code), or a failed connection (the handshake
//! failed or timed out: in a closed loop that consumes one request, as over HTTP/2).
//! Requests a GOAWAY left unprocessed are sent again on another connection and counted
//! as retried, within their deadline and at most [`crate::exchange::MAX_RESENDS`] times.
//! A lost datagram is no failure: QUIC sends it again.

use super::conn::{ConnError, Connection, Event};
use super::quic::{self, Link};
use super::udp;
use super::{frame, Prepared};
use crate::event_loop::{parts, Core, Entry, Protocol, Stage, Table, Taken};
use crate::exchange::Begin;
use crate::transport::Endpoint;
use bytes::BytesMut;
use mio::net::UdpSocket;
use mio::{Interest, Token};
use quinn_proto::{
    ClientConfig, ConnectionError, Dir, EndpointConfig, ReadError, StreamEvent, StreamId, VarInt,
};
use shootout_model::FailureKind;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most datagrams one readiness event reads before the loop turns to other
/// connections (as [`crate::event_loop::READS_PER_EVENT`] bounds TCP reads).
const DATAGRAMS_PER_EVENT: usize = 64;

/// The receive buffer datagrams are copied into for `quinn-proto` (which keeps slices of
/// them until their stream data is read): one allocation, reused once the slices of the
/// datagrams in it are dropped.
const RX_BUFFER: usize = 256 * 1024;

struct Conn {
    link: Option<Link>,
    h3: Connection,
    /// The connection carried an answer.
    answered: bool,
    /// QUIC gave no stream credit at the last try; cleared when the server gives more.
    starved: bool,
    /// When its QUIC timer fires.
    timer: Option<Instant>,
}

/// Room for requests on connection `c`: none unless it is open and has stream credit.
fn room(c: &Entry<Stage, Conn, UdpSocket>) -> usize {
    if c.phase() != Stage::Open || c.starved {
        0
    } else {
        c.h3.room()
    }
}

struct Worker<'a> {
    core: Core<'a>,
    req: &'a Prepared,
    streams: usize,
    remote: SocketAddr,
    client: ClientConfig,
    endpoint: Arc<EndpointConfig>,
    conns: Table<Stage, Conn, UdpSocket>,
    scratch: Vec<usize>,
    rx: BytesMut,
    /// The earliest QUIC timer of any connection, or one that was moved later since.
    wake: Option<Instant>,
    /// Datagrams go in batches with GSO and come in with GRO where the kernel has them.
    offload: bool,
}

/// Builds the worker around its `core`.
pub(crate) fn set_up<'a>(core: Core<'a>, req: &'a Prepared) -> io::Result<impl Protocol<'a>> {
    let a = core.share;
    let (sh, now) = (core.sh, core.start);
    let streams = sh.streams;
    let Endpoint::Tcp(remote) = sh.endpoint else {
        return Err(io::Error::other(
            "HTTP/3 needs a host and port, not a unix socket",
        ));
    };
    let Some((tls, _)) = sh.tls.as_ref() else {
        return Err(io::Error::other("HTTP/3 needs https://"));
    };
    // QUIC's idle timeout: the request deadline decides first, and an idle connection
    // between requests (rate mode) is kept as long.
    let idle = sh.timeout.max(Duration::from_secs(30));
    let offload = sh.udp_offload;
    let client = quic::client_config(tls, idle, offload).map_err(io::Error::other)?;
    let mut w = Worker {
        core,
        req,
        streams,
        remote,
        client,
        endpoint: Arc::new(EndpointConfig::default()),
        conns: Table::with_capacity(a.connections),
        scratch: Vec::with_capacity(streams),
        rx: BytesMut::with_capacity(RX_BUFFER),
        wake: None,
        offload,
    };
    for _ in 0..a.connections {
        w.add(now);
    }
    if a.index == 0 && sh.heads > 0 && a.connections > 0 {
        w.conns[0].h3.sample = sh.heads;
        w.core.rec.heads.request = Some(req.text.clone());
    }
    Ok(w)
}

impl<'a> Protocol<'a> for Worker<'a> {
    parts!('a, Stage, Conn, UdpSocket, core, conns);

    fn new_conn(&self, _: Instant) -> Conn {
        Conn {
            link: None,
            h3: Connection::new(self.streams, self.core.sh.expect.body_contains.as_deref()),
            answered: false,
            starved: false,
            timer: None,
        }
    }

    fn resend(&mut self, now: Instant) -> bool {
        while let Some(&r) = self.core.resend.front() {
            let Some(i) = self.room(now) else {
                return false;
            };
            if self.send_request(i, r.start, r.sent, r.connect, r.resent) {
                self.core.resend.pop_front();
            }
            self.flush(i, now);
        }
        true
    }

    /// Rate mode: a connection with room for a request, kept listed while it has more.
    fn with_room(&mut self) -> Option<usize> {
        self.conns.with_room(|c| room(c) > 0)
    }

    fn begin(&mut self, i: usize, due: Instant, now: Instant) -> Taken {
        if !self.send_request(i, due, now, Duration::ZERO, 0) {
            return Taken::Refused;
        }
        self.core.in_flight += 1;
        self.flush(i, now);
        Taken::Sent
    }

    fn next_wake(&self) -> Option<Instant> {
        self.wake
    }

    fn wake(&mut self, now: Instant) {
        self.timers(now);
    }

    fn event(&mut self, i: usize, readable: bool, _writable: bool, _closed: bool) -> bool {
        if readable && i < self.conns.len() && self.conns[i].phase() != Stage::Closed {
            self.receive(i, Instant::now());
        }
        std::mem::take(&mut self.core.unfinished)
    }

    /// Every request still open on connection `i` fails as `kind`.
    fn fail_all(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let mut open = std::mem::take(&mut self.scratch);
        open.extend(self.conns[i].h3.open_slots());
        for &slot in &open {
            self.fail(i, slot, now, kind);
        }
        open.clear();
        self.scratch = open;
    }

    /// Opens connection `i`: a UDP socket connected to the server (from its local
    /// address), registered under `i`, and the QUIC handshake's first datagram.
    fn open(&mut self, i: usize, now: Instant) {
        let from = self.core.sh.bind_for(self.core.index, i);
        let local: SocketAddr = match (from, self.remote) {
            (Some(ip), _) => (ip, 0).into(),
            (None, SocketAddr::V4(_)) => ([0, 0, 0, 0], 0).into(),
            (None, SocketAddr::V6(_)) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let offload = self.offload;
        let opened = UdpSocket::bind(local).and_then(|mut sock| {
            sock.connect(self.remote)?;
            if offload {
                // Where the kernel lacks GRO, datagrams come one per read.
                udp::enable_gro(&sock);
            }
            self.core
                .poll
                .registry()
                .register(&mut sock, Token(i), Interest::READABLE)?;
            let link = Link::connect(
                &self.endpoint,
                &self.client,
                self.remote,
                &self.req.server_name,
                now,
            )?;
            Ok((sock, link))
        });
        let c = &mut self.conns[i];
        c.life.opening(now);
        c.h3.start();
        c.answered = false;
        c.starved = false;
        match opened {
            Ok((sock, link)) => {
                c.link = Some(link);
                self.conns.connecting(i, sock);
                self.flush(i, now);
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    /// Drops connection `i`'s QUIC state and socket.
    fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.link = None;
        c.timer = None;
        self.conns.close(i);
    }

    fn each_in_flight(&self, each: &mut dyn FnMut(Instant)) {
        for i in 0..self.conns.len() {
            self.conns[i].h3.starts().for_each(&mut *each);
        }
    }

    /// Requests of connection `i` past their deadline fail as timeouts; their streams are
    /// stopped and reset (H3_REQUEST_CANCELLED) and the connection kept.
    fn deadlines(&mut self, i: usize, now: Instant) {
        let mut late = std::mem::take(&mut self.scratch);
        let h3 = &self.conns[i].h3;
        let timeout = self.core.sh.timeout;
        late.extend(
            h3.open_slots()
                .filter(|&s| h3.stream(s).exchange.overdue(now, timeout)),
        );
        for &slot in &late {
            let ex = &self.conns[i].h3.stream(slot).exchange;
            self.core.fail(ex, now, FailureKind::Timeout);
            let c = &mut self.conns[i].c;
            if let (Some(link), Some(id)) = (c.link.as_mut(), stream_id(c.h3.stream(slot).id)) {
                let code = VarInt::from_u32(frame::H3_REQUEST_CANCELLED as u32);
                let _ = link.conn.recv_stream(id).stop(code);
                let _ = link.conn.send_stream(id).reset(code);
            }
            c.h3.cancel(slot);
        }
        let any = !late.is_empty();
        late.clear();
        self.scratch = late;
        if any {
            self.after(i, now);
        }
    }

    /// Every open connection is closed with H3_NO_ERROR, so servers read a
    /// CONNECTION_CLOSE rather than wait out their idle timeout.
    fn wind_down(&mut self, _stop: &AtomicBool) {
        let now = Instant::now();
        for i in 0..self.conns.len() {
            if let Some(link) = self.conns[i].link.as_mut() {
                link.close(now, frame::H3_NO_ERROR);
                self.flush(i, now);
            }
            self.close(i);
        }
    }
}

impl Worker<'_> {
    /// Opens a request stream on connection `i` and writes the request; false when QUIC
    /// has no stream credit (the connection is starved until the server gives more).
    fn send_request(
        &mut self,
        i: usize,
        start: Instant,
        now: Instant,
        connect: Duration,
        resent: u8,
    ) -> bool {
        let c = &mut self.conns[i];
        let Some(link) = c.link.as_mut() else {
            return false;
        };
        let Some(id) = link.conn.streams().open(Dir::Bi) else {
            c.starved = true;
            return false;
        };
        let begin = Begin {
            start,
            sent: now,
            connect,
            resent,
        };
        let slot = c.h3.open(id.into(), begin);
        self.write_request(i, slot);
        true
    }

    /// Writes what QUIC's flow control takes of the request in `slot` of connection `i`,
    /// ending the stream once it is all written.
    fn write_request(&mut self, i: usize, slot: usize) {
        let c = &mut self.conns[i].c;
        let Some(link) = c.link.as_mut() else { return };
        let s = c.h3.stream_mut(slot);
        let Some(id) = stream_id(s.id) else { return };
        let bytes = &self.req.bytes;
        let mut send = link.conn.send_stream(id);
        if s.written < bytes.len() {
            if let Ok(n) = send.write(&bytes[s.written..]) {
                s.written += n;
            }
            if s.written == bytes.len() {
                let _ = send.finish();
            }
        }
    }

    /// Notes that connection `i` may have room (rate mode) or fills it (closed loop).
    fn refill(&mut self, i: usize, now: Instant) {
        if room(&self.conns[i]) == 0 {
            return;
        }
        if self.core.pacer.is_some() {
            return self.conns.list(i);
        }
        while room(&self.conns[i]) > 0 {
            if let Some(&r) = self.core.resend.front() {
                if !self.send_request(i, r.start, r.sent, r.connect, r.resent) {
                    break;
                }
                self.core.resend.pop_front();
                continue;
            }
            if !self.core.claim(now) {
                break;
            }
            let (start, connect) = self.conns[i].life.carried(now);
            if !self.send_request(i, start, now, connect, 0) {
                // No stream credit: the request is not taken after all.
                self.core.claimed -= 1;
                if self.conns[i].h3.active() == 0 {
                    self.no_streams(i, now);
                }
                break;
            }
            self.core.in_flight += 1;
        }
        self.conns[i].life.used();
    }

    /// Connection `i` may open no request stream at all (the server's QUIC limit on
    /// bidirectional streams is 0): in a closed loop that is one refused request per
    /// connection, which is then replaced after a growing pause (as an HTTP/2 server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` = 0), so the run still ends by its count.
    fn no_streams(&mut self, i: usize, now: Instant) {
        if let Some(link) = self.conns[i].link.as_mut() {
            link.close(now, frame::H3_NO_ERROR);
        }
        self.flush(i, now);
        self.close(i);
        self.charge(i, now, FailureKind::Refused);
        self.replace(i, now, true);
    }

    /// Sends what connection `i` has to send (in GSO batches where allowed and the kernel
    /// has it) and re-arms its timer.
    fn flush(&mut self, i: usize, now: Instant) {
        let offload = self.offload;
        let batch = if offload && udp::gso() {
            udp::MAX_SEGMENTS
        } else {
            1
        };
        let Entry { io, c, .. } = &mut self.conns[i];
        let (Some(link), Some(sock)) = (c.link.as_mut(), io.as_ref()) else {
            return;
        };
        let sent = link.flush(now, batch, &mut |b, seg| udp::send(sock, b, seg, offload));
        c.timer = link.timeout();
        if let Some(t) = c.timer {
            self.wake = Some(self.wake.map_or(t, |w| w.min(t)));
        }
        match sent {
            Ok(n) => self.core.rec.counts.bytes_sent += n,
            // ICMP said nothing listens there (or the route is gone).
            Err(_) => self.unreachable(i, now),
        }
    }

    /// The socket of connection `i` failed: a connect failure while connecting, else the
    /// connection is lost.
    fn unreachable(&mut self, i: usize, now: Instant) {
        match self.conns[i].phase() {
            Stage::Connecting | Stage::Handshake => self.connect_failed(i, now),
            Stage::Open => self.lost(i, now, ConnectionError::Reset),
            Stage::Closed => {}
        }
    }

    /// QUIC timers that are due: each connection's fires, then the earliest left is kept.
    fn timers(&mut self, now: Instant) {
        self.wake = None;
        for i in 0..self.conns.len() {
            match self.conns[i].timer {
                Some(t) if t <= now => {
                    if let Some(link) = self.conns[i].link.as_mut() {
                        link.timeout_fired(now);
                    }
                    self.process(i, now);
                }
                Some(t) => self.wake = Some(self.wake.map_or(t, |w| w.min(t))),
                None => {}
            }
        }
    }

    /// Reads connection `i`'s datagrams (at most [`DATAGRAMS_PER_EVENT`] reads, each of
    /// one datagram or of a GRO batch) into QUIC, then acts on what they brought.
    fn receive(&mut self, i: usize, now: Instant) {
        let offload = self.offload;
        for n in 0.. {
            if n == DATAGRAMS_PER_EVENT {
                self.core.unfinished = true;
                break;
            }
            let Entry { io, c, .. } = &mut self.conns[i];
            let (Some(sock), Some(link)) = (io.as_ref(), c.link.as_mut()) else {
                return;
            };
            let (len, stride) = match udp::recv(sock, &mut self.core.buf) {
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.unreachable(i, now),
            };
            self.core.rec.counts.bytes_received += len as u64;
            if self.rx.capacity() < len {
                self.rx.reserve(RX_BUFFER);
            }
            let mut send = |b: &[u8], seg| udp::send(sock, b, seg, offload);
            for d in udp::datagrams(&self.core.buf[..len], stride) {
                self.rx.extend_from_slice(d);
                link.datagram(now, self.rx.split(), &mut send);
            }
        }
        self.process(i, now);
    }

    /// Acts on connection `i`'s QUIC events, then records what ended, refills and sends.
    fn process(&mut self, i: usize, now: Instant) {
        loop {
            let Some(link) = self.conns[i].link.as_mut() else {
                return;
            };
            let Some(ev) = link.conn.poll() else { break };
            match ev {
                quinn_proto::Event::Connected => self.connected(i, now),
                quinn_proto::Event::ConnectionLost { reason } => return self.lost(i, now, reason),
                quinn_proto::Event::Stream(StreamEvent::Readable { id }) => {
                    self.read_stream(i, id, now)
                }
                quinn_proto::Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.conns[i]
                        .link
                        .as_mut()
                        .and_then(|l| l.conn.streams().accept(Dir::Uni))
                    {
                        self.read_stream(i, id, now);
                    }
                }
                quinn_proto::Event::Stream(StreamEvent::Writable { id }) => {
                    if let Some(slot) = self.conns[i].h3.slot_of(id.into()) {
                        self.write_request(i, slot);
                    }
                }
                quinn_proto::Event::Stream(StreamEvent::Available { dir: Dir::Bi }) => {
                    self.conns[i].starved = false;
                }
                _ => {}
            }
            if self.conns[i].phase() == Stage::Closed {
                return;
            }
        }
        self.on_events(i, now);
        self.stops(i);
        self.after(i, now);
    }

    /// The handshake of connection `i` completed: `h3` chosen by ALPN, our control
    /// stream opened with our SETTINGS, and requests may go.
    fn connected(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        let Some(link) = c.link.as_mut() else { return };
        if super::alpn(&link.conn).as_deref() != Some(b"h3") {
            link.close(now, frame::H3_GENERAL_PROTOCOL_ERROR);
            self.flush(i, now);
            return self.connect_failed(i, now);
        }
        if let Some(id) = link.conn.streams().open(Dir::Uni) {
            let _ = link.conn.send_stream(id).write(&self.req.control);
        }
        c.life.opened(now);
        self.conns.set_phase(i, Stage::Open);
        let c = &mut self.conns[i];
        self.core.rec.connected(c.life.connect);
        self.core.served(&mut c.life);
    }

    /// Hands stream `id`'s bytes (and its end or reset) to the HTTP/3 state.
    fn read_stream(&mut self, i: usize, id: StreamId, now: Instant) {
        let head = self.req.head_request;
        let Conn { link, h3, .. } = &mut self.conns[i].c;
        let Some(link) = link.as_mut() else { return };
        let (sid, uni) = (u64::from(id), id.dir() == Dir::Uni);
        let mut recv = link.conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return;
        };
        let mut result = Ok(());
        let mut end: Option<Option<u64>> = None;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    result = if uni {
                        h3.uni_data(sid, &chunk.bytes)
                    } else {
                        h3.request_data(sid, &chunk.bytes, head, now)
                    };
                    if result.is_err() {
                        break;
                    }
                }
                Ok(None) => {
                    end = Some(None);
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(code)) => {
                    end = Some(Some(code.into_inner()));
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        if result.is_ok() {
            result = match (end, uni) {
                (Some(_), true) => h3.uni_fin(sid),
                (Some(None), false) => h3.request_fin(sid),
                (Some(Some(code)), false) => {
                    h3.request_reset(sid, code);
                    Ok(())
                }
                (None, _) => Ok(()),
            };
        }
        if let Err(e) = result {
            self.h3_error(i, now, e);
        }
    }

    /// Streams the HTTP/3 state gave up reading are stopped (STOP_SENDING).
    fn stops(&mut self, i: usize) {
        let Conn { link, h3, .. } = &mut self.conns[i].c;
        let Some(link) = link.as_mut() else {
            h3.stops.clear();
            return;
        };
        for (id, code) in h3.stops.drain(..) {
            if let (Some(id), Ok(code)) = (stream_id(id), VarInt::from_u64(code)) {
                let _ = link.conn.recv_stream(id).stop(code);
            }
        }
    }

    /// After connection `i` handled its events: new requests on the freed slots, a
    /// connection a GOAWAY spent closed and replaced once its requests ended, and what
    /// QUIC has to send sent.
    fn after(&mut self, i: usize, now: Instant) {
        self.refill(i, now);
        let c = &mut self.conns[i];
        if c.phase() == Stage::Open && c.h3.spent() && c.h3.active() == 0 {
            if let Some(link) = c.link.as_mut() {
                link.close(now, frame::H3_NO_ERROR);
            }
            self.flush(i, now);
            return self.retire(i, now);
        }
        self.flush(i, now);
    }

    /// Acts on what connection `i`'s HTTP/3 state reported.
    fn on_events(&mut self, i: usize, now: Instant) {
        let mut events = std::mem::take(&mut self.conns[i].h3.events);
        for &e in &events {
            match e {
                Event::Answered(slot) => self.credit(i, slot, now),
                Event::Failed(slot, kind) => self.fail(i, slot, now, kind),
                Event::Unprocessed(slot) => {
                    let ex = &self.conns[i].h3.stream(slot).exchange;
                    self.core.unprocessed(ex, now);
                    self.conns[i].h3.free(slot);
                }
                Event::Reset(code) => {
                    let code = u32::try_from(code).unwrap_or(shootout_model::OTHER_RESET_CODES);
                    self.core.rec.counts.count_reset(code)
                }
                Event::Goaway => self.core.rec.counts.goaways += 1,
            }
        }
        events.clear();
        self.conns[i].h3.events = events;
        if !self.conns[i].h3.heads.is_empty() {
            let heads = &mut self.conns[i].h3.heads;
            self.core.rec.heads.responses.append(heads);
        }
        // Requests a GOAWAY returned go out on connections with room.
        if !self.core.resend.is_empty() && self.core.pacer.is_none() {
            for j in 0..self.conns.len() {
                if j != i && room(&self.conns[j]) > 0 {
                    self.refill(j, now);
                    self.flush(j, now);
                }
            }
        }
    }

    /// The request in `slot` of connection `i` got its whole answer.
    fn credit(&mut self, i: usize, slot: usize, now: Instant) {
        let c = &mut self.conns[i];
        let (ex, server) = c.h3.answered(slot);
        self.core.credit(ex, now, || server.take());
        c.h3.free(slot);
        c.answered = true;
    }

    /// The request in `slot` of connection `i` ended without a good answer.
    fn fail(&mut self, i: usize, slot: usize, now: Instant, kind: FailureKind) {
        let ex = &self.conns[i].h3.stream(slot).exchange;
        self.core.fail(ex, now, kind);
        self.conns[i].h3.free(slot);
    }

    /// The server broke HTTP/3 on connection `i`: the connection is closed with the
    /// error's code, its open requests fail as malformed, and it is replaced.
    fn h3_error(&mut self, i: usize, now: Instant, e: ConnError) {
        // What the connection reported before the error (answers among them) counts.
        self.on_events(i, now);
        if let Some(link) = self.conns[i].link.as_mut() {
            link.close(now, e.code);
        }
        self.flush(i, now);
        let answered = self.conns[i].answered;
        self.fail_all(i, now, FailureKind::Malformed);
        self.close(i);
        self.replace(i, now, !answered);
    }

    /// QUIC lost connection `i`. Before its handshake completed that is a failed
    /// connection; after, its open requests fail by the reason.
    fn lost(&mut self, i: usize, now: Instant, reason: ConnectionError) {
        if self.conns[i].phase() == Stage::Connecting {
            return self.connect_failed(i, now);
        }
        self.on_events(i, now);
        let kind = match reason {
            ConnectionError::ApplicationClosed(c)
                if c.error_code.into_inner() == frame::H3_NO_ERROR =>
            {
                FailureKind::Reset
            }
            ConnectionError::ApplicationClosed(_) | ConnectionError::ConnectionClosed(_) => {
                FailureKind::ConnectionError
            }
            ConnectionError::TimedOut => FailureKind::Timeout,
            ConnectionError::TransportError(_) => FailureKind::Malformed,
            _ => FailureKind::Reset,
        };
        let c = &self.conns[i];
        let (answered, spent) = (c.answered, c.h3.spent());
        self.fail_all(i, now, kind);
        self.close(i);
        self.lost_open(i, now, answered, spent);
    }
}

/// A QUIC stream id from its number.
fn stream_id(id: u64) -> Option<StreamId> {
    VarInt::from_u64(id).ok().map(StreamId::from)
}
