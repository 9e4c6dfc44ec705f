//! The opening handshake (RFC 6455 §4): the client's upgrade request, rendered once per
//! run around a per-connection key ([`Request`]), and the server's answer, parsed without
//! I/O as its bytes arrive ([`parse`]): a `101` with `Upgrade: websocket`, `Connection:
//! Upgrade` and the `Sec-WebSocket-Accept` that matches the key opens the connection;
//! any other status is a refusal, counted under that status; anything else is a failed
//! handshake. The head is bounded ([`MAX_HEAD`]), so a server that never ends it cannot
//! grow memory.

use base64::Engine as _;
use shootout_model::Target;

/// The GUID RFC 6455 §1.3 joins to the key.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The longest answer head read (bytes); past it the handshake fails.
pub const MAX_HEAD: usize = 16 * 1024;

/// The most header fields an answer head may carry.
const MAX_FIELDS: usize = 64;

/// The upgrade request, rendered once: the bytes before and after the key.
#[derive(Debug, Clone)]
pub struct Request {
    before: Vec<u8>,
    after: Vec<u8>,
    /// The subprotocols offered (`Sec-WebSocket-Protocol`, comma-separated, in every
    /// field given): the server may pick one of these, or none.
    pub offered: Vec<String>,
}

impl Request {
    /// The request for `target` with the user's `headers` (a `Host` of theirs replaces
    /// ours; `Sec-WebSocket-Protocol` and the rest go as given).
    pub fn new(target: &Target, headers: &[(String, String)]) -> Request {
        let host = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("host"))
            .map_or(target.host_header.as_str(), |(_, v)| v.as_str());
        let before = format!(
            "GET {} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ",
            target.path
        );
        let mut after = String::from("\r\n");
        for (n, v) in headers {
            if !n.eq_ignore_ascii_case("host") {
                after.push_str(&format!("{n}: {v}\r\n"));
            }
        }
        after.push_str("\r\n");
        let offered = headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-protocol"))
            .flat_map(|(_, v)| v.split(','))
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        Request {
            before: before.into_bytes(),
            after: after.into_bytes(),
            offered,
        }
    }

    /// Appends the request with `key` to `out`.
    pub fn render(&self, key: &str, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.before);
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&self.after);
    }
}

/// A `Sec-WebSocket-Key`: 16 random bytes in base64.
pub fn key(random: [u64; 2]) -> String {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&random[0].to_ne_bytes());
    b[8..].copy_from_slice(&random[1].to_ne_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The `Sec-WebSocket-Accept` a server must answer `key` with (§4.2.2).
pub fn accept(key: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(key.as_bytes());
    h.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(h.digest().bytes())
}

/// What the server's answer head said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `101` with everything §4.1 asks: the head was `consumed` bytes, frames follow.
    Upgraded {
        /// Bytes of the head.
        consumed: usize,
    },
    /// Another status: the server refused the upgrade.
    Refused {
        /// The status.
        status: u16,
    },
}

/// Why an answer head is not a handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    /// Not an HTTP/1.1 answer head.
    #[error("the answer is not an HTTP head")]
    Malformed,
    /// A head longer than [`MAX_HEAD`].
    #[error("the answer head is over {MAX_HEAD} bytes")]
    TooLong,
    /// A 101 without `Upgrade: websocket` or `Connection: Upgrade`.
    #[error("a 101 without Upgrade: websocket and Connection: Upgrade")]
    NotUpgrade,
    /// A 101 whose `Sec-WebSocket-Accept` is missing, does not match the key, or comes
    /// more than once (RFC 6455 §11.3.3: it must not appear twice, and joined its values
    /// are not the one expected).
    #[error("Sec-WebSocket-Accept is missing, repeated or does not match the key")]
    Accept,
    /// A 101 that agreed to an extension the client did not offer.
    #[error("an extension was agreed that the client did not offer")]
    Extension,
    /// A 101 that picked a subprotocol the client did not offer (RFC 6455 §4.1: the
    /// client must fail the connection).
    #[error("the server picked a subprotocol the client did not offer")]
    Subprotocol,
}

/// Parses the answer head at the start of `buf` against the `expected` accept value and
/// the subprotocols `offered`: `None` while it is incomplete.
pub fn parse(
    buf: &[u8],
    expected: &str,
    offered: &[String],
) -> Result<Option<Answer>, HandshakeError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut r = httparse::Response::new(&mut fields);
    let consumed = match r.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(HandshakeError::TooLong)
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(HandshakeError::TooLong),
        Err(_) => return Err(HandshakeError::Malformed),
    };
    if consumed > MAX_HEAD {
        return Err(HandshakeError::TooLong);
    }
    let status = r.code.ok_or(HandshakeError::Malformed)?;
    if status != 101 {
        return Ok(Some(Answer::Refused { status }));
    }
    let (mut upgrade, mut connection) = (false, false);
    // The accept fields seen, and whether the one seen matched: a second fails.
    let (mut accepts, mut accepted) = (0u32, false);
    for h in r.headers.iter() {
        let v = h.value;
        if h.name.eq_ignore_ascii_case("upgrade") {
            upgrade |= v.eq_ignore_ascii_case(b"websocket");
        } else if h.name.eq_ignore_ascii_case("connection") {
            connection |= v
                .split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"upgrade"));
        } else if h.name.eq_ignore_ascii_case("sec-websocket-accept") {
            accepts += 1;
            accepted = v.trim_ascii() == expected.as_bytes();
        } else if h.name.eq_ignore_ascii_case("sec-websocket-extensions") {
            return Err(HandshakeError::Extension);
        } else if h.name.eq_ignore_ascii_case("sec-websocket-protocol") {
            // One subprotocol, one the client offered.
            let picked = std::str::from_utf8(v).map(str::trim);
            if !picked.is_ok_and(|p| offered.iter().any(|o| o == p)) {
                return Err(HandshakeError::Subprotocol);
            }
        }
    }
    if !upgrade || !connection {
        return Err(HandshakeError::NotUpgrade);
    }
    if accepts != 1 || !accepted {
        return Err(HandshakeError::Accept);
    }
    Ok(Some(Answer::Upgraded { consumed }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6455 §1.3's example: this key is answered with this accept value.
    #[test]
    fn the_accept_of_the_rfc_example() {
        assert_eq!(
            accept("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(key([1, 2]).len(), 24);
    }

    #[test]
    fn the_request_carries_the_key_and_the_users_headers() {
        let t = Target::parse("ws://example.com:8765/chat?room=1").unwrap();
        let headers = vec![
            ("Sec-WebSocket-Protocol".to_string(), "chat".to_string()),
            ("host".to_string(), "other".to_string()),
        ];
        let mut out = Vec::new();
        Request::new(&t, &headers).render("KEY", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "GET /chat?room=1 HTTP/1.1\r\nHost: other\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: KEY\r\nSec-WebSocket-Protocol: chat\r\n\r\n"
        );
    }

    const GOOD: &str = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
    const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

    /// Every prefix of a good head is incomplete; the whole is an upgrade, with the
    /// frames after it left alone.
    #[test]
    fn a_good_answer_byte_by_byte() {
        for n in 0..GOOD.len() {
            assert_eq!(
                parse(&GOOD.as_bytes()[..n], ACCEPT, &[]),
                Ok(None),
                "prefix {n}"
            );
        }
        let mut with_frame = GOOD.as_bytes().to_vec();
        with_frame.extend_from_slice(&[0x81, 0x01, b'x']);
        assert_eq!(
            parse(&with_frame, ACCEPT, &[]),
            Ok(Some(Answer::Upgraded {
                consumed: GOOD.len()
            }))
        );
    }

    #[test]
    fn refusals_and_bad_answers() {
        let refused = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            parse(refused, ACCEPT, &[]),
            Ok(Some(Answer::Refused { status: 403 }))
        );
        let wrong_accept = GOOD.replace(ACCEPT, "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        assert_eq!(
            parse(wrong_accept.as_bytes(), ACCEPT, &[]),
            Err(HandshakeError::Accept)
        );
        // The field twice, one right and one wrong, in either order; or right twice.
        for extra in ["AAAAAAAAAAAAAAAAAAAAAAAAAAA=", ACCEPT] {
            let field = format!("Sec-WebSocket-Accept: {extra}\r\n");
            let after = GOOD.replace("\r\n\r\n", &format!("\r\n{field}\r\n"));
            let before = GOOD.replace(
                "Upgrade: WebSocket\r\n",
                &format!("Upgrade: WebSocket\r\n{field}"),
            );
            for twice in [after, before] {
                assert_eq!(
                    parse(twice.as_bytes(), ACCEPT, &[]),
                    Err(HandshakeError::Accept),
                    "{twice}"
                );
            }
        }
        let no_upgrade = GOOD.replace("Upgrade: WebSocket\r\n", "");
        assert_eq!(
            parse(no_upgrade.as_bytes(), ACCEPT, &[]),
            Err(HandshakeError::NotUpgrade)
        );
        let extension = GOOD.replace(
            "\r\n\r\n",
            "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
        );
        assert_eq!(
            parse(extension.as_bytes(), ACCEPT, &[]),
            Err(HandshakeError::Extension)
        );
        assert_eq!(
            parse(b"\x81\x05hello", ACCEPT, &[]),
            Err(HandshakeError::Malformed)
        );
        let endless = format!("HTTP/1.1 101 OK\r\nX: {}", "y".repeat(MAX_HEAD));
        assert_eq!(
            parse(endless.as_bytes(), ACCEPT, &[]),
            Err(HandshakeError::TooLong)
        );
    }

    /// The server may pick one of the subprotocols offered, or none; one not offered, or
    /// any when none was, fails the handshake (RFC 6455 §4.1).
    #[test]
    fn a_subprotocol_must_be_one_offered() {
        let t = Target::parse("ws://example.com/chat").unwrap();
        let headers = vec![(
            "Sec-WebSocket-Protocol".to_string(),
            "chat.v2, chat".to_string(),
        )];
        let offered = Request::new(&t, &headers).offered;
        assert_eq!(offered, ["chat.v2", "chat"]);
        let picked = |p: &str| {
            GOOD.replace(
                "\r\n\r\n",
                &format!("\r\nSec-WebSocket-Protocol: {p}\r\n\r\n"),
            )
        };
        let upgraded = |h: &str| Ok(Some(Answer::Upgraded { consumed: h.len() }));
        assert_eq!(parse(GOOD.as_bytes(), ACCEPT, &offered), upgraded(GOOD));
        let chat = picked("chat");
        assert_eq!(parse(chat.as_bytes(), ACCEPT, &offered), upgraded(&chat));
        let other = picked("superchat");
        assert_eq!(
            parse(other.as_bytes(), ACCEPT, &offered),
            Err(HandshakeError::Subprotocol)
        );
        assert_eq!(
            parse(chat.as_bytes(), ACCEPT, &[]),
            Err(HandshakeError::Subprotocol),
            "none offered"
        );
        let both = picked("chat.v2, chat");
        assert_eq!(
            parse(both.as_bytes(), ACCEPT, &offered),
            Err(HandshakeError::Subprotocol),
            "one, not a list"
        );
    }
}
