//! One QUIC connection as `quinn-proto` keeps it, tied to the UDP socket it talks over:
//! datagrams read from the socket go in ([`Link::datagram`]), datagrams to send come out
//! ([`Link::flush`]), and its timer is [`Link::timeout`]. Each link has an endpoint of its
//! own (quinn-proto's connection-id routing has one connection to route to), so a
//! connected socket per connection is all the demultiplexing there is.
//!
//! Sends are batches of up to [`super::udp::MAX_SEGMENTS`] datagrams when the caller
//! sends them with segmentation offload (GSO, see [`super::udp`]), else one datagram per
//! send. A send the socket refuses for want of buffer space drops what it carried: QUIC
//! recovers it as a loss.

use bytes::BytesMut;
use quinn_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig,
    EndpointEvent, IdleTimeout, TransportConfig, VarInt,
};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest UDP payload read (a datagram's whole size: QUIC never sends more than
/// the path's MTU, 1,200 to 1,500 bytes, but a datagram is read whole or truncated).
pub const MAX_DATAGRAM: usize = 64 * 1024;

/// The client's QUIC settings for a run: TLS with ALPN `h3` (the run's TLS
/// configuration), no 0-RTT, no datagrams, the server allowed [`super::conn::MAX_UNI`]
/// unidirectional streams and no bidirectional ones, and an idle timeout of `idle`;
/// `batches`: [`Link::flush`] may be handed several datagrams at once (for GSO).
pub fn client_config(
    tls: &Arc<rustls::ClientConfig>,
    idle: Duration,
    batches: bool,
) -> Result<ClientConfig, String> {
    let crypto = quinn_proto::crypto::rustls::QuicClientConfig::try_from(tls.clone())
        .map_err(|e| format!("TLS configuration unfit for QUIC: {e}"))?;
    let mut transport = TransportConfig::default();
    let idle_ms = u32::try_from(idle.as_millis()).unwrap_or(u32::MAX);
    transport
        .max_concurrent_bidi_streams(VarInt::from_u32(0))
        .max_concurrent_uni_streams(VarInt::from_u32(super::conn::MAX_UNI as u32))
        .max_idle_timeout(Some(IdleTimeout::from(VarInt::from_u32(idle_ms))))
        .datagram_receive_buffer_size(None)
        .enable_segmentation_offload(batches)
        .mtu_discovery_config(None);
    let mut config = ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// A QUIC connection and its endpoint.
pub struct Link {
    endpoint: Endpoint,
    handle: ConnectionHandle,
    /// The connection: streams, events, state.
    pub conn: Connection,
    remote: SocketAddr,
    /// The datagrams being built for sending.
    out: Vec<u8>,
}

impl Link {
    /// Starts a connection to `remote`, naming `server` for TLS.
    pub fn connect(
        endpoint: &Arc<EndpointConfig>,
        client: &ClientConfig,
        remote: SocketAddr,
        server: &str,
        now: Instant,
    ) -> io::Result<Link> {
        let mut ep = Endpoint::new(endpoint.clone(), None, false, None);
        let (handle, conn) = ep
            .connect(now, client.clone(), remote, server)
            .map_err(io::Error::other)?;
        Ok(Link {
            endpoint: ep,
            handle,
            conn,
            remote,
            out: Vec::with_capacity(1500 * super::udp::MAX_SEGMENTS),
        })
    }

    /// A datagram from the server. A datagram the endpoint answers itself (a stateless
    /// reset, a version negotiation) is sent with `send` (see [`Link::flush`]).
    pub fn datagram(
        &mut self,
        now: Instant,
        data: BytesMut,
        send: &mut impl FnMut(&[u8], Option<usize>) -> io::Result<usize>,
    ) {
        self.out.clear();
        match self
            .endpoint
            .handle(now, self.remote, None, None, data, &mut self.out)
        {
            Some(DatagramEvent::ConnectionEvent(_, event)) => {
                self.conn.handle_event(event);
            }
            Some(DatagramEvent::Response(t)) => {
                let _ = send(&self.out[..t.size], t.segment_size);
            }
            Some(DatagramEvent::NewConnection(incoming)) => self.endpoint.ignore(incoming),
            None => {}
        }
        self.endpoint_events();
    }

    /// The connection's timer fired.
    pub fn timeout_fired(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        self.endpoint_events();
    }

    /// Events between the connection and its endpoint (connection ids).
    fn endpoint_events(&mut self) {
        while let Some(ev) = self.conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(self.handle, ev) {
                self.conn.handle_event(back);
            }
        }
    }

    /// Sends every datagram the connection has ready, in batches of up to `batch`
    /// datagrams: `send` gets the bytes and, for a batch of several, the size of each
    /// datagram but the last (which may be shorter), and answers the bytes it sent. The
    /// bytes sent.
    pub fn flush(
        &mut self,
        now: Instant,
        batch: usize,
        send: &mut impl FnMut(&[u8], Option<usize>) -> io::Result<usize>,
    ) -> io::Result<u64> {
        let mut sent = 0;
        loop {
            self.out.clear();
            let Some(t) = self.conn.poll_transmit(now, batch.max(1), &mut self.out) else {
                break;
            };
            match send(&self.out[..t.size], t.segment_size) {
                Ok(n) => sent += n as u64,
                // No room in the socket's buffer: the datagrams are lost, and recovered so.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        self.endpoint_events();
        Ok(sent)
    }

    /// When the connection's timer fires next.
    pub fn timeout(&mut self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Closes the connection with `code` (its CONNECTION_CLOSE is sent at the next
    /// [`Link::flush`]).
    pub fn close(&mut self, now: Instant, code: u64) {
        if !self.conn.is_closed() {
            let code = VarInt::from_u64(code).unwrap_or(VarInt::from_u32(0));
            self.conn.close(now, code, bytes::Bytes::new());
        }
    }
}

impl Drop for Link {
    /// The endpoint forgets the connection (it is dropped without waiting out its
    /// draining period: its socket goes with it).
    fn drop(&mut self) {
        let _ = self
            .endpoint
            .handle_event(self.handle, EndpointEvent::drained());
    }
}
