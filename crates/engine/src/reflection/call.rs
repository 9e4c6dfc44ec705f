//! One conversation of server reflection on one blocking HTTP/2 connection: the engine's
//! connection state machine ([`Connection`]) fed by blocking reads, one stream per
//! question, each a POST of the question behind gRPC's prefix that ends the stream, each
//! answer checked by the connection as any gRPC reply is (one message within the limit,
//! `grpc-status` 0) and kept whole for the walk to read.

use super::walk::Walk;
use super::{ReflectError, Version};
use crate::exchange::Begin;
use crate::h2::conn::{Connection, Event};
use crate::h2::grpc::{self, expect::Expect, Reply};
use crate::h2::request::Prepared;
use crate::request::Request;
use crate::{tls, EngineError};
use prost_reflect::prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};
use prost_reflect::DescriptorPool;
use shootout_model::{FailureKind, GrpcReply, LoadSpec, RequestSpec, Target};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Whether the server serves the version asked (it answered the first question).
pub(super) enum Served {
    /// It does; the walk has every answer.
    Yes,
    /// It does not: why (UNIMPLEMENTED, an HTTP status).
    No(String),
}

/// Asks `walk`'s questions of `target`'s reflection service `version` until all are
/// answered, by `until`.
pub(super) fn converse(
    target: &Target,
    headers: &[(String, String)],
    connect_timeout: Duration,
    version: Version,
    walk: &mut Walk,
    until: Instant,
) -> Result<Served, ReflectError> {
    let mut conv = Conversation::open(target, headers, connect_timeout, version, until)?;
    let mut first = true;
    while let Some((asked, question)) = walk.question() {
        match conv.call(&question, walk.room())? {
            Answer::Message(m) => walk.take(&asked, &m)?,
            Answer::NotServed(why) if first => {
                conv.close();
                return Ok(Served::No(why));
            }
            Answer::NotServed(why) => return Err(ReflectError::Failed(why)),
        }
        first = false;
    }
    conv.close();
    Ok(Served::Yes)
}

/// How a question was answered.
enum Answer {
    /// With this reply message.
    Message(Vec<u8>),
    /// As a server that does not serve the method answers.
    NotServed(String),
}

/// A blocking connection: TCP, a unix socket, or TLS over TCP.
enum Io {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Io {
    fn read_timeout(&self, t: Duration) -> io::Result<()> {
        match self {
            Io::Tcp(s) => s.set_read_timeout(Some(t)),
            Io::Unix(s) => s.set_read_timeout(Some(t)),
            Io::Tls(s) => s.sock.set_read_timeout(Some(t)),
        }
    }
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Io::Tcp(s) => s.read(buf),
            Io::Unix(s) => s.read(buf),
            Io::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Io::Tcp(s) => s.write(buf),
            Io::Unix(s) => s.write(buf),
            Io::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Io::Tcp(s) => s.flush(),
            Io::Unix(s) => s.flush(),
            Io::Tls(s) => s.flush(),
        }
    }
}

/// The conversation's connection and its one request, whose body each question replaces.
struct Conversation {
    io: Io,
    c: Connection,
    req: Prepared,
    buf: Vec<u8>,
    until: Instant,
    deadline: Duration,
}

impl Conversation {
    /// Connects, sends HTTP/2's preface and waits for the server's SETTINGS.
    fn open(
        target: &Target,
        headers: &[(String, String)],
        connect_timeout: Duration,
        version: Version,
        until: Instant,
    ) -> Result<Conversation, ReflectError> {
        let deadline = until.saturating_duration_since(Instant::now());
        let io = connect(target, connect_timeout)?;
        let mut c = Connection::new(1, None);
        c.start();
        let mut conv = Conversation {
            io,
            c,
            req: prepare(target, headers, version, deadline)?,
            buf: vec![0; 64 * 1024],
            until,
            deadline,
        };
        conv.wait(None).map_err(|e| match e {
            ReflectError::Failed(why) => ReflectError::Connect(format!(
                "{} does not speak HTTP/2 ({why}), which gRPC needs",
                target.url
            )),
            e => e,
        })?;
        Ok(conv)
    }

    /// Sends `question` on a new stream and reads its answer, a reply message of at most
    /// `max` bytes.
    fn call(&mut self, question: &[u8], max: usize) -> Result<Answer, ReflectError> {
        if self.c.room() == 0 {
            return Err(ReflectError::Failed(
                "the server allows no stream on its connection".into(),
            ));
        }
        self.req.body = grpc::frame(question);
        if let Some(reply) = self.req.grpc.as_mut() {
            reply.max_message = max;
        }
        let now = Instant::now();
        let slot = self.c.open(&self.req, Begin::at(now, now));
        self.c.keep(slot, max.saturating_add(5), None);
        let event = self.wait(Some(slot))?;
        let status = self.c.stream(slot).exchange.status;
        let answer = match event {
            Event::Answered(_) if status == 200 => {
                let kept = self.c.kept(slot).0.map(|k| &k.body[..]);
                Ok(Answer::Message(
                    kept.and_then(|b| b.get(5..)).unwrap_or_default().to_vec(),
                ))
            }
            Event::Answered(_) => Ok(Answer::NotServed(format!("HTTP status {status}"))),
            Event::Rejected(_, FailureKind::GrpcUnimplemented) => {
                Ok(Answer::NotServed("grpc-status 12, UNIMPLEMENTED".into()))
            }
            Event::Rejected(_, kind) | Event::Failed(_, kind) => Err(ReflectError::Failed(
                format!("its answer failed as {}", kind.name()),
            )),
            _ => Err(ReflectError::Failed(
                "the server did not process the call (REFUSED_STREAM, or a GOAWAY before it)"
                    .into(),
            )),
        };
        self.c.free(slot);
        answer
    }

    /// Reads until the event of `slot` (its end), or with `None` the server's first
    /// SETTINGS, writing what the connection has to send.
    fn wait(&mut self, slot: Option<usize>) -> Result<Event, ReflectError> {
        loop {
            self.flush()?;
            if let Some(e) = self.event(slot) {
                return Ok(e);
            }
            let left = self.until.saturating_duration_since(Instant::now());
            if left.is_zero() || self.io.read_timeout(left).is_err() {
                return Err(ReflectError::Deadline(self.deadline));
            }
            let n = match self.io.read(&mut self.buf) {
                Ok(0) => {
                    return Err(ReflectError::Failed(
                        "the server closed the connection".into(),
                    ))
                }
                Ok(n) => n,
                Err(e) if is_wait(&e) => continue,
                Err(e) => return Err(ReflectError::Failed(format!("reading: {e}"))),
            };
            if let Err(e) = self.c.feed(&self.buf[..n], &self.req, Instant::now()) {
                let _ = self.flush();
                return Err(ReflectError::Failed(format!(
                    "its HTTP/2 broke the protocol (GOAWAY with code {})",
                    (e.0).0
                )));
            }
        }
    }

    /// The event awaited, if it came (the others are dropped).
    fn event(&mut self, slot: Option<usize>) -> Option<Event> {
        let found = self.c.events.iter().copied().find(|e| match (slot, *e) {
            (None, Event::Ready) => true,
            (
                Some(s),
                Event::Answered(x)
                | Event::Failed(x, _)
                | Event::Rejected(x, _)
                | Event::Unprocessed(x),
            ) => s == x,
            _ => false,
        });
        self.c.events.clear();
        found
    }

    /// Writes what the connection has to send.
    fn flush(&mut self) -> Result<(), ReflectError> {
        if self.c.out.is_empty() {
            return Ok(());
        }
        let sent = self
            .io
            .write_all(&self.c.out)
            .and_then(|()| self.io.flush());
        self.c.out.clear();
        sent.map_err(|e| ReflectError::Failed(format!("writing: {e}")))
    }

    /// Ends the connection politely: GOAWAY (NO_ERROR), and TLS's close_notify.
    fn close(mut self) {
        self.c.goodbye();
        let _ = self.flush();
        if let Io::Tls(s) = &mut self.io {
            s.conn.send_close_notify();
            let _ = s.conn.complete_io(&mut s.sock);
        }
    }
}

/// A read that found nothing yet (its timeout passed, or a signal came).
fn is_wait(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// A connection to the target: its unix socket, or the first of its addresses that
/// accepts one within `timeout`, over TLS with ALPN h2 for `grpcs://`.
fn connect(target: &Target, timeout: Duration) -> Result<Io, ReflectError> {
    let fail = |e: EngineError| ReflectError::Connect(e.to_string());
    if let Some(path) = &target.unix_socket {
        return UnixStream::connect(path).map(Io::Unix).map_err(|source| {
            fail(EngineError::Connect {
                target: path.display().to_string(),
                source,
            })
        });
    }
    let addrs: Vec<SocketAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|source| {
            fail(EngineError::Resolve {
                host: target.host.clone(),
                source,
            })
        })?
        .collect();
    let mut last = io::Error::other("no addresses");
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, timeout) {
            Ok(s) => return secure(s, target, timeout),
            Err(e) => last = e,
        }
    }
    Err(fail(EngineError::Connect {
        target: format!("{}:{}", target.host, target.port),
        source: last,
    }))
}

/// The TCP connection `s` as the target speaks: plain, or TLS that chose h2.
fn secure(s: TcpStream, target: &Target, timeout: Duration) -> Result<Io, ReflectError> {
    let _ = s.set_nodelay(true);
    if !target.scheme.tls() {
        return Ok(Io::Tcp(s));
    }
    let fail = |e: EngineError| ReflectError::Connect(e.to_string());
    let config = tls::client_config(target, b"h2").map_err(fail)?;
    match tls::session(s, &config, timeout, (&target.url, &target.url)).map_err(fail)? {
        Some((conn, sock)) if conn.alpn_protocol() == Some(b"h2") => {
            Ok(Io::Tls(Box::new(rustls::StreamOwned::new(conn, sock))))
        }
        _ => Err(ReflectError::Connect(format!(
            "{} does not offer HTTP/2 over TLS (ALPN h2), which gRPC needs",
            target.url
        ))),
    }
}

/// The request every question is sent as: a gRPC call of `version`'s method with the
/// user's `headers` (its body set per question).
fn prepare(
    target: &Target,
    headers: &[(String, String)],
    version: Version,
    deadline: Duration,
) -> Result<Prepared, ReflectError> {
    let mut t = target.clone();
    t.path = version.path().to_string();
    let mut spec = LoadSpec::new(t);
    let timeout = deadline.as_millis().clamp(1, 99_999_999);
    let mut fields = vec![
        ("content-type".to_string(), "application/grpc".to_string()),
        ("te".to_string(), "trailers".to_string()),
        ("grpc-timeout".to_string(), format!("{timeout}m")),
    ];
    fields.extend(headers.iter().cloned());
    spec.request = RequestSpec {
        method: "POST".into(),
        headers: fields,
        body: Vec::new(),
        keepalive: true,
    };
    // A gRPC reply expected: the request carries gRPC's fields, not HTTP's.
    spec.expect.grpc = Some(GrpcReply {
        schema: Vec::new().into(),
        method: String::new(),
        max_message: 0,
        json: None,
        stream: Default::default(),
        compress: false,
    });
    let request = Request::of_spec(&spec).map_err(|e| ReflectError::Connect(e.to_string()))?;
    let mut prepared =
        crate::h2::request::prepare(&request).map_err(|e| ReflectError::Connect(e.to_string()))?;
    prepared.grpc = Some(any_reply()?);
    Ok(prepared)
}

/// The check of a reply as a message of a type with no fields: well framed and well
/// formed, whatever it holds (the walk decodes it as a `ServerReflectionResponse`).
fn any_reply() -> Result<Reply, ReflectError> {
    let file = FileDescriptorProto {
        name: Some("shootout/reflection.proto".into()),
        package: Some("shootout.reflection".into()),
        message_type: vec![DescriptorProto {
            name: Some("Reply".into()),
            ..Default::default()
        }],
        syntax: Some("proto3".into()),
        ..Default::default()
    };
    let pool = DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: vec![file] })
        .map_err(|e| ReflectError::Descriptors(e.to_string()))?;
    let any = pool
        .get_message_by_name("shootout.reflection.Reply")
        .ok_or_else(|| ReflectError::Descriptors("no message type for replies".into()))?;
    Ok(Reply {
        input: any.clone(),
        output: any,
        max_message: 0,
        expect: Expect {
            json: None,
            echo: false,
        },
        server_streaming: false,
        client_streaming: false,
        stream: Default::default(),
        compress: false,
    })
}
