//! Before any worker starts: the target resolved and one connection (and TLS handshake,
//! and over HTTP/2 the server's SETTINGS) checked, so a wrong port or a dead server is one
//! clear error rather than a run full of failures. Over h2c the check's connection ends
//! as any of the run's does: with GOAWAY (NO_ERROR, or the code of an error the server's
//! first frames made), never with a reset ([`h2::check`]).

use crate::transport::{Endpoint, TlsTarget};
use crate::{h2, h3, tls, transport, EngineError};
use shootout_model::{LoadSpec, Protocol};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};

/// Resolves the target and checks one connection (and TLS handshake) succeeds, so a wrong
/// port or a dead server is one clear error rather than a run full of failures.
pub(crate) fn preflight(spec: &LoadSpec, tls: Option<&TlsTarget>) -> Result<Endpoint, EngineError> {
    let t = &spec.target;
    if let Some(path) = &t.unix_socket {
        let mut s = std::os::unix::net::UnixStream::connect(path).map_err(|source| {
            EngineError::Connect {
                target: path.display().to_string(),
                source,
            }
        })?;
        let _ = s.set_read_timeout(Some(spec.connect_timeout));
        if tls.is_none() {
            h2_check(spec, &mut s, path.display().to_string())?;
        }
        return Ok(Endpoint::Unix(path.clone()));
    }
    let addrs = addresses(spec)?;
    if spec.protocol == Protocol::Http3 {
        return h3_check(spec, tls, &addrs);
    }
    let mut last = None;
    for addr in &addrs {
        match connect(spec, addr) {
            Ok(stream) => {
                check_protocol(spec, tls, stream, addr)?;
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

/// Over HTTP/2 (prior knowledge, no TLS), the server's answer to our preface.
fn h2_check(
    spec: &LoadSpec,
    stream: &mut dyn h2::Blocking,
    target: String,
) -> Result<(), EngineError> {
    match spec.protocol {
        Protocol::Http2 => {
            // The run prepared the same request before: this cannot fail (were it to, the
            // run's own refusal would say why).
            let Ok(req) = h2::request::prepare_one(&spec.target, &spec.request) else {
                return Ok(());
            };
            h2::check(stream, spec.connect_timeout, &req)
                .map_err(|reason| EngineError::NotHttp2 { target, reason })
        }
        // A WebSocket handshake is each connection's: a refusal is counted per connection.
        // HTTP/3 never comes here (it needs TLS, checked over UDP).
        Protocol::Http1 | Protocol::Http3 | Protocol::WebSocket => Ok(()),
    }
}

/// Over HTTP/3, one QUIC handshake with the first address that answers (over UDP: a
/// server that speaks HTTP/3 need not listen on TCP at all).
fn h3_check(
    spec: &LoadSpec,
    tls: Option<&TlsTarget>,
    addrs: &[SocketAddr],
) -> Result<Endpoint, EngineError> {
    let Some((config, _)) = tls else {
        return Err(EngineError::Invalid(
            shootout_model::SpecError::Http3NeedsHttps(spec.target.url.clone()),
        ));
    };
    let mut last = None;
    for addr in addrs {
        let bind = spec.bind.first().copied();
        match h3::check(*addr, bind, config, &spec.target.host, spec.connect_timeout) {
            Ok(()) => return Ok(Endpoint::Tcp(*addr)),
            // The server speaks HTTP/3 but could not choose a certificate: a TLS error.
            Err(
                reason @ (h3::Refusal::NoServerName { .. } | h3::Refusal::NoCertificateFor { .. }),
            ) => {
                return Err(EngineError::Tls {
                    target: addr.to_string(),
                    reason: reason.to_string(),
                })
            }
            Err(reason) if h3::certificate_problem(&reason) => {
                return Err(EngineError::Tls {
                    target: addr.to_string(),
                    reason: format!(
                        "{reason} (for a self-signed certificate use --insecure, or --cacert FILE)"
                    ),
                })
            }
            Err(reason) => last = Some((addr, reason)),
        }
    }
    Err(match last {
        Some((addr, reason)) => EngineError::NotHttp3 {
            target: addr.to_string(),
            reason,
        },
        None => EngineError::Resolve {
            host: spec.target.host.clone(),
            source: std::io::Error::other("no addresses"),
        },
    })
}

/// The target's addresses, those of the local addresses' family when `-B` gives some (each
/// of which must bind: an address not of this machine fails here, not as a run of connect
/// failures; the port is left for connect, so nothing is held).
fn addresses(spec: &LoadSpec) -> Result<Vec<SocketAddr>, EngineError> {
    let t = &spec.target;
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
        for &ip in &spec.bind {
            transport::bound_socket(ip, to)
                .map_err(|source| EngineError::Bind { addr: ip, source })?;
        }
    }
    Ok(addrs)
}

/// A blocking connection to `addr` (from the first local address, when given).
fn connect(spec: &LoadSpec, addr: &SocketAddr) -> std::io::Result<TcpStream> {
    match spec.bind.first() {
        Some(&from) => transport::bound_socket(from, *addr)
            .and_then(|s| {
                s.connect_timeout(&(*addr).into(), spec.connect_timeout)
                    .map(|()| s)
            })
            .map(TcpStream::from),
        None => TcpStream::connect_timeout(addr, spec.connect_timeout),
    }
}

/// The connection speaks what the run will: TLS (and over HTTP/2, `h2` chosen by ALPN),
/// or without TLS, HTTP/2's preface answered when asked for.
fn check_protocol(
    spec: &LoadSpec,
    tls: Option<&TlsTarget>,
    mut stream: TcpStream,
    addr: &SocketAddr,
) -> Result<(), EngineError> {
    let Some(tls) = tls else {
        let _ = stream.set_read_timeout(Some(spec.connect_timeout));
        return h2_check(spec, &mut stream, addr.to_string());
    };
    let alpn = tls::handshake(
        stream,
        tls,
        spec.connect_timeout,
        &addr.to_string(),
        &spec.target.url,
    )?;
    if spec.protocol == Protocol::Http2 && alpn.as_deref() != Some(b"h2") {
        let got = alpn.map_or("no protocol".into(), |a| {
            String::from_utf8_lossy(&a).into_owned()
        });
        return Err(EngineError::NotHttp2 {
            target: spec.target.url.clone(),
            reason: h2::Refusal::Alpn(got),
        });
    }
    Ok(())
}
