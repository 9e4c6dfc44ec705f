//! In-process HTTP/1.1, HTTP/2 and WebSocket test servers that behave, and misbehave, on
//! purpose.
//!
//! The engine's tests and the binary's end-to-end tests start a [`TestServer`] on
//! `127.0.0.1` with a port from the OS, point the load generator at it, and check that
//! every failure class is counted exactly: resets, short and long bodies, garbage,
//! stalls, closes, error statuses, unsolicited answers, dropped requests. Each
//! [`Behavior`] documents the exact bytes it sends; answers carry no date, so they are
//! the same byte for byte on every run. A [`Delivery`] mode sends those bytes whole or
//! one per `write`, so a client can be checked to count the same however TCP splits
//! them, and the server's truth counters ([`TestServer::answers`],
//! [`TestServer::unsolicited`], [`TestServer::dropped`], …) say what the client should
//! have counted.
//!
//! Design: std sockets, blocking I/O, one small-stack thread per connection, a listen
//! backlog large enough for 10,000 simultaneous connects. Dropping the server shuts
//! every socket down and joins its work, so nothing outlives a test.
//!
//! Seams: `request` parses heads, `behavior` turns a request into bytes (pure),
//! `conn` drives one socket, `server` accepts and keeps the counters, `tls` makes
//! the self-signed identity, `net` holds the raw socket calls std lacks. `h2` is the
//! HTTP/2 server ([`H2Server`], [`H2Behavior`]), with its own truth counters; `ws` the
//! WebSocket server ([`WsServer`], [`WsBehavior`]), with its own.
//!
//! ```
//! use std::io::{Read, Write};
//! use shootout_testserver::{Behavior, TestServer};
//!
//! let server = TestServer::start(Behavior::Hello).unwrap();
//! let mut tcp = std::net::TcpStream::connect(server.addr()).unwrap();
//! tcp.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
//! let mut answer = String::new();
//! tcp.read_to_string(&mut answer).unwrap();
//! assert!(answer.ends_with("\r\n\r\nHello World\n"));
//! assert_eq!(server.requests(), 1);
//! ```

mod behavior;
mod conn;
mod grpc;
mod h2;
mod h3;
mod net;
mod request;
mod server;
mod shared;
mod tls;
mod ws;

pub use behavior::{reason, Behavior, HELLO, SERVER_HEADER};
pub use grpc::{hello_reply, request_messages, request_name, GrpcBehavior, Reflect, GREETER_PROTO};
pub use h2::{
    AppFault, H2Behavior, H2Server, BOMB_ENTRY, COMPRESSION_ERROR, EARLY_ERRORS, ENHANCE_YOUR_CALM,
    FRAME_SIZE_ERROR, H2_BODY, HPACK_FAULTS, INTERNAL_ERROR, PROTOCOL_ERROR, REFUSED_STREAM,
};
pub use h3::{H3Behavior, H3Server};
pub use server::{TestServer, Transport};
pub use shared::Delivery;
pub use ws::{Breach, WsBehavior, WsServer, BREACHES, WS_CLOSE_CODE};
