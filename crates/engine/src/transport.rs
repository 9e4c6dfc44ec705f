//! One connection's byte stream: TCP or a unix socket, optionally wrapped in TLS (rustls).
//! The worker sees `read`/`write` and never which of them it has. A TCP connection may
//! come from a given local address ([`bound_socket`], ab's `-B`).

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use rustls::ClientConnection;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

/// A TCP socket for `to`, bound to the local address `from` (the port left to the kernel).
/// The port is chosen at connect, not at bind (`IP_BIND_ADDRESS_NO_PORT`, Linux 4.2+):
/// otherwise each bound socket holds a port of its own for any destination, and one local
/// address gives at most ~28k connections in all rather than per server address.
pub(crate) fn bound_socket(from: IpAddr, to: SocketAddr) -> io::Result<socket2::Socket> {
    let s = socket2::Socket::new(
        socket2::Domain::for_address(to),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    if from.is_ipv4() {
        use std::os::fd::AsRawFd;
        let on: libc::c_int = 1;
        // SAFETY: setsockopt reads an int we own, of the size given. An older kernel that
        // lacks the option leaves the usual behaviour, which still works.
        let _ = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
    }
    s.bind(&SocketAddr::new(from, 0).into())?;
    Ok(s)
}

/// A non-blocking connect to `to` from `from` (see [`bound_socket`]).
fn connect_from(from: IpAddr, to: SocketAddr) -> io::Result<TcpStream> {
    let s = bound_socket(from, to)?;
    s.set_nonblocking(true)?;
    match s.connect(&to.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(s.into()))
}

/// A plain socket.
pub enum Socket {
    /// TCP, with TCP_NODELAY.
    Tcp(TcpStream),
    /// A unix stream socket.
    Unix(UnixStream),
}

impl Socket {
    /// The pending connect error, or `Ok(true)` once connected, `Ok(false)` while connecting.
    pub fn connected(&self) -> io::Result<bool> {
        let (err, peer) = match self {
            Socket::Tcp(s) => (s.take_error(), s.peer_addr().map(|_| ())),
            Socket::Unix(s) => (s.take_error(), s.peer_addr().map(|_| ())),
        };
        if let Some(e) = err? {
            return Err(e);
        }
        match peer {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Socket {
    /// Shuts our side: the server reads the end of the stream after what was written.
    pub fn shutdown_write(&self) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Write),
        }
    }
}

impl std::os::fd::AsRawFd for Socket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Source for Socket {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.register(r, t, i),
            Socket::Unix(s) => s.register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.reregister(r, t, i),
            Socket::Unix(s) => s.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.deregister(r),
            Socket::Unix(s) => s.deregister(r),
        }
    }
}

/// Where connections go.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A unix socket path.
    Unix(PathBuf),
}

/// The TLS client config and the server name every connection of an https run uses.
pub type TlsTarget = (
    Arc<rustls::ClientConfig>,
    rustls::pki_types::ServerName<'static>,
);

/// What one read of a connection gave ([`Transport::read_some`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Got {
    /// `n` bytes at the start of the buffer; `drained`: the read was short where that
    /// proves the socket drained, so reading again would only find nothing.
    Bytes { n: usize, drained: bool },
    /// Nothing to read now.
    Empty,
    /// The peer closed its side.
    Closed,
    /// The connection broke.
    Failed,
}

/// A socket, and its TLS session when the target is https.
pub struct Transport {
    /// The socket.
    pub socket: Socket,
    /// The TLS session, if any.
    pub tls: Option<Box<ClientConnection>>,
}

impl Transport {
    /// Starts a non-blocking connect to the run's endpoint (from the local address `from`,
    /// when given), registered for reads and writes under `token`, with a TLS session when
    /// the target is https.
    pub fn connect(
        endpoint: &Endpoint,
        tls: Option<&TlsTarget>,
        registry: &Registry,
        token: Token,
        from: Option<IpAddr>,
    ) -> io::Result<Transport> {
        let mut socket = match endpoint {
            Endpoint::Tcp(addr) => match from {
                Some(ip) => connect_from(ip, *addr),
                None => TcpStream::connect(*addr),
            }
            .map(|s| {
                let _ = s.set_nodelay(true);
                Socket::Tcp(s)
            }),
            Endpoint::Unix(path) => UnixStream::connect(path).map(Socket::Unix),
        }?;
        registry.register(&mut socket, token, Interest::READABLE | Interest::WRITABLE)?;
        let tls = match tls {
            Some((cfg, name)) => Some(Box::new(
                ClientConnection::new(cfg.clone(), name.clone()).map_err(io::Error::other)?,
            )),
            None => None,
        };
        Ok(Transport { socket, tls })
    }

    /// Reads plaintext. `Ok(0)` means the peer closed the stream cleanly: over TLS, only
    /// after its `close_notify`. A TLS stream whose TCP connection ended without one is an
    /// error of kind `UnexpectedEof` (RFC 8446 §6.1): whatever it carried last may have
    /// been cut anywhere, so a body delimited by the close has no known end.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return self.socket.read(buf);
        };
        loop {
            match tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if tls.read_tls(&mut self.socket)? == 0 {
                // The TCP stream ended: rustls now says whether close_notify came first
                // (`Ok(0)`) or not (`UnexpectedEof`).
                return match tls.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        Err(io::ErrorKind::UnexpectedEof.into())
                    }
                    other => other,
                };
            }
            tls.process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            while tls.wants_write() {
                tls.write_tls(&mut self.socket)?;
            }
        }
    }

    /// Writes plaintext; returns the bytes taken. TLS takes all of them and sends what the
    /// socket accepts; [`Transport::flush`] sends the rest when the socket is writable.
    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return self.socket.write(data);
        };
        tls.writer().write_all(data)?;
        self.flush()?;
        Ok(data.len())
    }

    /// Writes `out[*written..]` as far as the socket takes it, adding the bytes to `sent`;
    /// once all of `out` is written it is emptied (keeping its capacity) and `*written`
    /// goes back to 0. Then sends buffered TLS records. An error: the connection broke.
    /// What a protocol whose connection keeps one output buffer writes with at each turn.
    #[inline]
    pub fn write_out(
        &mut self,
        out: &mut Vec<u8>,
        written: &mut usize,
        sent: &mut u64,
    ) -> io::Result<()> {
        while *written < out.len() {
            match self.write(&out[*written..]) {
                Ok(n) => {
                    *written += n;
                    *sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if *written == out.len() {
            *written = 0;
            out.clear();
        }
        self.flush().map(|_| ())
    }

    /// Sends buffered TLS records; true when nothing is left to send.
    pub fn flush(&mut self) -> io::Result<bool> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(true);
        };
        while tls.wants_write() {
            match tls.write_tls(&mut self.socket) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// One read into `buf`, its bytes added to `received`; `closed`: the event said the
    /// peer closed, so a short read proves nothing (that close comes with no further edge).
    /// What every protocol's read loop takes a turn with.
    #[inline]
    pub fn read_some(&mut self, buf: &mut [u8], closed: bool, received: &mut u64) -> Got {
        let drains = self.short_read_drains() && !closed;
        loop {
            return match self.read(buf) {
                Ok(0) => Got::Closed,
                Ok(n) => {
                    *received += n as u64;
                    Got::Bytes {
                        n,
                        drained: drains && n < buf.len(),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Got::Empty,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => Got::Failed,
            };
        }
    }

    /// True when a short read proves the socket drained (not so under TLS, which buffers).
    pub fn short_read_drains(&self) -> bool {
        self.tls.is_none()
    }
}
