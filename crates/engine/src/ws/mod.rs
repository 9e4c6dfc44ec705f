//! WebSocket (RFC 6455) for the engine: `ws://`, and `wss://` over the same TLS transport
//! as `https://` (ALPN `http/1.1`). Each connection makes the opening handshake once; the
//! measured unit is then a message and its reply, recorded like a request and its answer.
//!
//! Seams: [`handshake`] renders the upgrade request and parses the answer head;
//! [`frame`] encodes client frames (masked with a fresh key each) and decodes the
//! server's, checking everything a client must; [`conn`] is one connection's state
//! without I/O (handshake, replies matched in order, pings answered, close); [`worker`]
//! drives a worker's connections on the shared event loop, closed loop or paced.
//!
//! Limits, so that no server can grow memory: a reply may be at most
//! [`shootout_model::MAX_MESSAGE`] (16 MiB) and is checked as it streams in, never held;
//! a control frame is at most 125 bytes; the answer head at most
//! [`handshake::MAX_HEAD`].

pub mod conn;
pub mod frame;
pub mod handshake;
pub(crate) mod worker;

use shootout_model::LoadSpec;

/// What every connection of a run sends, prepared once: the upgrade request and the
/// message.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The upgrade request, but for its key.
    pub request: handshake::Request,
    /// The message.
    pub message: conn::Message,
    /// Hold mode: pings instead of messages.
    pub hold: Option<shootout_model::Hold>,
    /// Text messages drawn from a list instead of `message`.
    pub list: Option<List>,
}

/// A message list, prepared: each message's template, and how the next is picked.
#[derive(Debug, Clone)]
pub struct List {
    /// The messages, in list order.
    pub templates: Vec<shootout_model::requests::Template>,
    /// Picked at random (else in turn)…
    pub random: bool,
    /// …seeded by this (and `{rand:…}` values too).
    pub seed: u64,
}

impl Prepared {
    /// The request and message of `spec` (its body, as text or binary).
    pub fn new(spec: &LoadSpec) -> Prepared {
        Prepared {
            request: handshake::Request::new(&spec.target, &spec.request.headers),
            message: conn::Message {
                opcode: if spec.ws_text {
                    frame::TEXT
                } else {
                    frame::BINARY
                },
                payload: spec.request.body.clone(),
            },
            hold: spec.ws_hold,
            list: spec.ws_messages.as_ref().map(|l| List {
                templates: l.templates.clone(),
                random: l.order == shootout_model::requests::Order::Random,
                seed: l.seed,
            }),
        }
    }
}
