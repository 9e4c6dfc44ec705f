//! Before any worker starts: the target resolved and one connection (and TLS handshake,
//! and over HTTP/2 the server's SETTINGS) checked, so a wrong port or a dead server is one
//! clear error rather than a run full of failures.

use crate::transport::Endpoint;
use crate::{h2, tls, transport, EngineError};
use shootout_model::{LoadSpec, Protocol};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};

/// Resolves the target and checks one connection (and TLS handshake) succeeds, so a wrong
/// port or a dead server is one clear error rather than a run full of failures.
pub(crate) fn preflight(
    spec: &LoadSpec,
    tls: Option<&(
        std::sync::Arc<rustls::ClientConfig>,
        rustls::pki_types::ServerName<'static>,
    )>,
) -> Result<Endpoint, EngineError> {
    let t = &spec.target;
    let h2_check = |stream: &mut dyn ReadWrite, target: String| match spec.protocol {
        Protocol::Http2 => h2::check(stream, spec.connect_timeout)
            .map_err(|reason| EngineError::NotHttp2 { target, reason }),
        Protocol::Http1 => Ok(()),
    };
    if let Some(path) = &t.unix_socket {
        let mut s = std::os::unix::net::UnixStream::connect(path).map_err(|source| {
            EngineError::Connect {
                target: path.display().to_string(),
                source,
            }
        })?;
        let _ = s.set_read_timeout(Some(spec.connect_timeout));
        if tls.is_none() {
            h2_check(&mut s, path.display().to_string())?;
        }
        return Ok(Endpoint::Unix(path.clone()));
    }
    let mut addrs: Vec<SocketAddr> = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|source| EngineError::Resolve {
            host: t.host.clone(),
            source,
        })?
        .collect();
    if let Some(&from) = spec.bind.first() {
        addrs.retain(|a| a.is_ipv4() == from.is_ipv4());
        let Some(&to) = addrs.first() else {
            return Err(EngineError::BindFamily {
                addr: from,
                host: t.host.clone(),
                family: if from.is_ipv4() { "IPv4" } else { "IPv6" },
            });
        };
        // Every address binds (an address not of this machine fails here, not as a run
        // of connect failures); the port is left for connect, so nothing is held.
        for &ip in &spec.bind {
            transport::bound_socket(ip, to)
                .map_err(|source| EngineError::Bind { addr: ip, source })?;
        }
    }
    let connect = |addr: &SocketAddr| match spec.bind.first() {
        Some(&from) => transport::bound_socket(from, *addr)
            .and_then(|s| {
                s.connect_timeout(&(*addr).into(), spec.connect_timeout)
                    .map(|()| s)
            })
            .map(TcpStream::from),
        None => TcpStream::connect_timeout(addr, spec.connect_timeout),
    };
    let mut last = None;
    for addr in &addrs {
        match connect(addr) {
            Ok(mut stream) => {
                if let Some(tls) = tls {
                    let alpn =
                        tls::handshake(stream, tls, spec.connect_timeout, &addr.to_string())?;
                    if spec.protocol == Protocol::Http2 && alpn.as_deref() != Some(b"h2") {
                        let got = alpn.map_or("no protocol".into(), |a| {
                            String::from_utf8_lossy(&a).into_owned()
                        });
                        return Err(EngineError::NotHttp2 {
                            target: t.url.clone(),
                            reason: h2::Refusal::Alpn(got),
                        });
                    }
                } else {
                    let _ = stream.set_read_timeout(Some(spec.connect_timeout));
                    h2_check(&mut stream, addr.to_string())?;
                }
                return Ok(Endpoint::Tcp(*addr));
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    Err(match last {
        Some((addr, source)) => EngineError::Connect {
            target: addr.to_string(),
            source,
        },
        None => EngineError::Resolve {
            host: t.host.clone(),
            source: std::io::Error::other("no addresses"),
        },
    })
}

/// A blocking stream the HTTP/2 pre-flight can talk over (TCP or a unix socket).
trait ReadWrite: std::io::Read + std::io::Write {}
impl<T: std::io::Read + std::io::Write> ReadWrite for T {}
