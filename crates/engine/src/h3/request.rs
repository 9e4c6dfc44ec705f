//! HTTP/3's wire form of the run's request ([`crate::request`]), prepared once: its field
//! section ([`crate::fields::section`], the same list HTTP/2 sends) QPACK-encoded without
//! a dynamic table into a HEADERS frame, then a DATA frame for a body; and our control
//! stream's bytes.

use super::{conn, frame, qpack};
use crate::fields;
use crate::request::{HeaderError, Request};
use shootout_model::{RequestSpec, Target};

/// The request as every stream sends it: its HEADERS frame (and DATA frame for a body),
/// encoded once.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The stream's bytes: HEADERS, then DATA when there is a body.
    pub bytes: Vec<u8>,
    /// The request is a HEAD: answers have no body whatever their content-length says.
    pub head_request: bool,
    /// The request as text for `-v 2`: `GET /path HTTP/3`, then `name: value` lines.
    pub text: Vec<u8>,
    /// The TLS server name (the target's host).
    pub server_name: String,
    /// Our control stream's bytes: its type and our SETTINGS.
    pub control: Vec<u8>,
}

/// Prepares `r` for a server named `server_name` (TLS): the field section HTTP/2 sends
/// too, refused for the same connection fields, QPACK-encoded without a dynamic table.
pub fn prepare(r: &Request, server_name: &str) -> Result<Prepared, HeaderError> {
    fields::refuse_connection_fields(r, "HTTP/3", "RFC 9114 §4.2")?;
    let section = fields::section(r);
    let mut block = Vec::new();
    qpack::encode(
        section.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    let mut bytes = Vec::with_capacity(block.len() + r.body.len() + 16);
    frame::put_head(&mut bytes, frame::HEADERS, block.len());
    bytes.extend_from_slice(&block);
    if !r.body.is_empty() {
        frame::put_head(&mut bytes, frame::DATA, r.body.len());
        bytes.extend_from_slice(&r.body);
    }
    let mut control = Vec::new();
    frame::control_stream(&mut control, conn::MAX_FIELD_SECTION as u64);
    Ok(Prepared {
        bytes,
        head_request: r.head(),
        text: fields::request_text(&section, "HTTP/3"),
        server_name: server_name.to_string(),
        control,
    })
}

/// The request of `req` to `target` alone, prepared (tests that drive one connection
/// without a run).
pub fn prepare_one(target: &Target, req: &RequestSpec) -> Result<Prepared, HeaderError> {
    prepare(&Request::single(target, req)?, &target.host)
}
