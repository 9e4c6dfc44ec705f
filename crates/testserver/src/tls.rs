//! The TLS identity of test servers: one self-signed certificate for `localhost` and
//! `127.0.0.1`, made by rcgen once per process, and the rustls server configuration
//! built on it (ring provider, TLS 1.2 and 1.3, ALPN `http/1.1`).
//!
//! Seams: [`crate::TestServer::start_tls`] takes the configuration and exposes the
//! certificate so clients can trust it; [`crate::conn`] wraps each accepted socket in a
//! `rustls::ServerConnection` made from the configuration.

use std::io;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;

/// A server configuration and the certificate it presents.
pub(crate) struct Identity {
    /// rustls configuration shared by every TLS connection of every server.
    pub config: Arc<ServerConfig>,
    /// The self-signed certificate, DER.
    pub cert_der: Vec<u8>,
    /// The self-signed certificate, PEM.
    pub cert_pem: String,
}

/// The process-wide identity, made on first use.
pub(crate) fn identity() -> io::Result<&'static Identity> {
    static IDENTITY: OnceLock<Result<Identity, String>> = OnceLock::new();
    IDENTITY
        .get_or_init(|| make().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(format!("cannot make a TLS certificate: {e}")))
}

fn make() -> Result<Identity, Box<dyn std::error::Error>> {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let certified = rcgen::generate_simple_self_signed(names)?;
    let cert: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Identity {
        config: Arc::new(config),
        cert_der: cert.to_vec(),
        cert_pem: certified.cert.pem(),
    })
}
