//! One WebSocket connection's protocol state, without I/O: the handshake written and its
//! answer read ([`super::handshake`]), messages framed with a fresh mask each
//! ([`Connection::send`]), the server's frames decoded ([`super::frame::Decoder`]) and
//! each reply matched, in order, to the oldest message waiting for one. Replies are
//! checked as they stream in (the echo against the message sent, the body search, the
//! decoder's UTF-8 check) and never held. Pings are answered with pongs; a close frame is
//! answered with a close and ends the connection.
//!
//! Pongs waiting to be written are bounded: a ping whose pong would follow a pong not yet
//! begun replaces it (RFC 6455 §5.5.3 lets a client answer only the latest ping), and past
//! [`MAX_PONGS`] waiting pongs a ping is left unanswered; either way the ping is counted
//! in [`Connection::unanswered`]. So a server that pings and never reads cannot grow
//! memory. In hold mode a pong answers our ping only if it carries that ping's payload.
//!
//! The worker writes [`Connection::out`] and acts on [`Connection::events`]; a failure of
//! the protocol is returned by [`Connection::feed`] and ends the connection.

use super::frame::{self, Decoder, Item, ProtocolError, Rng};
use super::handshake::{self, Answer, HandshakeError, Request};
use crate::body_search::BodySearch;
use crate::recorder::Clock;
use crate::template::{self, Gen};
use shootout_model::requests::Template;
use std::collections::VecDeque;
use std::time::Instant;

/// The message a run sends: its opcode (text or binary) and payload.
#[derive(Debug, Clone)]
pub struct Message {
    /// [`frame::TEXT`] or [`frame::BINARY`].
    pub opcode: u8,
    /// The payload.
    pub payload: Vec<u8>,
}

/// The most pongs waiting in [`Connection::out`] (not begun to be written) at once.
pub const MAX_PONGS: usize = 64;

/// The close code the client sends when the run ends (RFC 6455 §7.4.1: going away).
pub const GOING_AWAY: u16 = 1001;

/// Entry `kind` of a message list, rendered with the values `gen` (a copy of the worker's
/// generator taken before the render) draws: what its reply must echo.
#[derive(Debug, Clone, Copy)]
pub struct Drawn {
    /// The list entry.
    pub kind: u32,
    /// The generator as it was before the message's values were drawn.
    pub gen: Gen,
}

/// What replies are checked against: the run's one message, or its list's messages.
#[derive(Debug, Clone, Copy)]
pub struct Sent<'a> {
    /// The one message (no list).
    pub message: &'a Message,
    /// The list's messages, when there is one.
    pub list: Option<&'a [Template]>,
}

impl Sent<'_> {
    /// Whether `chunk`, at offset `at` of a reply, is what the message sent (`drawn`
    /// from the list, else the one message) holds there.
    fn matches(&self, drawn: Option<Drawn>, at: usize, chunk: &[u8]) -> bool {
        match (drawn, self.list) {
            (Some(d), Some(list)) => list
                .get(d.kind as usize)
                .is_some_and(|t| template::matches(t, d.gen, at, chunk)),
            _ => self.message.payload.get(at..at + chunk.len()) == Some(chunk),
        }
    }

    /// The length of the message sent.
    fn len(&self, drawn: Option<Drawn>) -> usize {
        match (drawn, self.list) {
            (Some(d), Some(list)) => list
                .get(d.kind as usize)
                .map_or(0, |t| template::len(t, d.gen)),
            _ => self.message.payload.len(),
        }
    }
}

/// A message sent and waiting for its reply.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// When it started, its frame was written and its reply first arrived; the connect
    /// (and handshake) time charged to it.
    pub clock: Clock,
    /// Drawn from a list (else the run's one message).
    pub drawn: Option<Drawn>,
}

/// Where the connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The upgrade request is written; the answer head is awaited.
    Handshake,
    /// Messages may go.
    Open,
    /// A close frame came (and ours is written): nothing more is read.
    Closed,
}

/// What the worker acts on.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// The handshake completed.
    Open,
    /// The reply to the oldest message waiting is complete.
    Replied {
        /// The message it answers.
        slot: Slot,
        /// Payload bytes of the reply.
        len: u64,
        /// The reply held `--expect-body-contains`'s text.
        matched: bool,
        /// The reply equals the message sent.
        echoed: bool,
    },
    /// The server sent a close frame with this code (1005: none).
    Close(u16),
}

/// Why a connection ends in failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The upgrade was refused with this status.
    Refused(u16),
    /// The answer was no proper handshake.
    Handshake(HandshakeError),
    /// The server broke the framing.
    Protocol(ProtocolError),
}

/// One connection's state; see the module docs.
#[derive(Debug)]
pub struct Connection {
    /// Bytes to write.
    pub out: Vec<u8>,
    /// Where the connection is.
    pub phase: Phase,
    /// Messages sent, oldest first, waiting for their replies.
    pub queue: VecDeque<Slot>,
    /// What the last [`Connection::feed`] found, for the worker.
    pub events: Vec<Event>,
    /// The answer head read so far (at most [`handshake::MAX_HEAD`] + 1 bytes).
    head: Vec<u8>,
    /// The `Sec-WebSocket-Accept` the server must send.
    accept: String,
    /// The subprotocols offered, of which the server may pick one.
    offered: Vec<String>,
    decoder: Decoder,
    search: BodySearch,
    /// A message is being received.
    receiving: bool,
    /// It came with no message waiting (a server's push): read and dropped.
    pushed: bool,
    /// How much of the message sent the reply has matched, and whether it still does.
    echo_at: usize,
    echoed: bool,
    /// Hold mode: pings are what is sent, and a pong carrying the payload of the ping
    /// waiting is its reply.
    pub hold: bool,
    /// Bytes of [`Connection::out`] already written (the worker writes from here on; the
    /// transport empties `out` and sets it back to 0 once all is written).
    pub written: usize,
    /// Pings from the server that got no pong (replaced by a later ping's, or past
    /// [`MAX_PONGS`]); the worker moves them to its counts.
    pub unanswered: u64,
    /// The last pong queued, where it starts in `out`, while nothing was queued after it.
    pong_at: Option<usize>,
    /// Pongs queued since `out` was last emptied.
    pongs: usize,
    /// The length of `out` after the last thing queued (longer than `out` now: the
    /// transport emptied it since).
    queued: usize,
    /// Hold mode: the payload of our ping waiting for its pong.
    ping: Option<[u8; 8]>,
}

impl Connection {
    /// A connection whose replies must hold `needle` (`--expect-body-contains`).
    pub fn new(needle: Option<&[u8]>) -> Connection {
        Connection {
            out: Vec::new(),
            phase: Phase::Handshake,
            queue: VecDeque::new(),
            events: Vec::new(),
            head: Vec::new(),
            accept: String::new(),
            offered: Vec::new(),
            decoder: Decoder::new(shootout_model::MAX_MESSAGE),
            search: BodySearch::new(needle),
            receiving: false,
            pushed: false,
            echo_at: 0,
            echoed: true,
            hold: false,
            written: 0,
            unanswered: 0,
            pong_at: None,
            pongs: 0,
            queued: 0,
            ping: None,
        }
    }

    /// A new socket: the upgrade request with a fresh key is written, everything else
    /// starts over.
    pub fn start(&mut self, req: &Request, rng: &mut Rng) {
        self.out.clear();
        self.queue.clear();
        self.events.clear();
        self.head.clear();
        self.decoder.reset();
        self.reply_done();
        self.written = 0;
        self.pong_at = None;
        self.pongs = 0;
        self.queued = 0;
        self.ping = None;
        self.phase = Phase::Handshake;
        let key = handshake::key([rng.next_u64(), rng.next_u64()]);
        self.accept = handshake::accept(&key);
        self.offered.clone_from(&req.offered);
        req.render(&key, &mut self.out);
    }

    /// Frames a message (`opcode`, `payload`) with a fresh mask and queues `slot` for its
    /// reply.
    pub fn send(&mut self, opcode: u8, payload: &[u8], rng: &mut Rng, slot: Slot) {
        self.tidy();
        frame::encode(&mut self.out, opcode, payload, rng.mask());
        self.queued(None);
        self.queue.push_back(slot);
    }

    /// Hold mode: sends a ping (8 random bytes of payload) with a fresh mask and queues
    /// `slot` for the pong that carries them.
    pub fn ping(&mut self, rng: &mut Rng, slot: Slot) {
        let payload = rng.next_u64().to_ne_bytes();
        self.tidy();
        frame::encode(&mut self.out, frame::PING, &payload, rng.mask());
        self.queued(None);
        self.ping = Some(payload);
        self.queue.push_back(slot);
    }

    /// The run is over: a close frame with 1001 (going away) is queued, and nothing more
    /// is read.
    pub fn goodbye(&mut self, rng: &mut Rng) {
        self.tidy();
        frame::encode(
            &mut self.out,
            frame::CLOSE,
            &GOING_AWAY.to_be_bytes(),
            rng.mask(),
        );
        self.queued(None);
        self.phase = Phase::Closed;
    }

    /// Handles bytes from the server: the answer head, then frames. Replies, the
    /// handshake's end and a close go to [`Connection::events`]; pongs and our close go
    /// to [`Connection::out`].
    pub fn feed(
        &mut self,
        input: &[u8],
        sent: Sent<'_>,
        rng: &mut Rng,
        now: Instant,
    ) -> Result<(), Failure> {
        #[cfg(debug_assertions)]
        crate::fault::reached();
        let mut at = 0;
        if self.phase == Phase::Handshake {
            match self.read_head(input)? {
                Some(rest) => at = rest,
                None => return Ok(()),
            }
        }
        while self.phase == Phase::Open {
            let (used, item) = self.decoder.next(&input[at..]).map_err(Failure::Protocol)?;
            at += used;
            match item {
                Some(item) => self.item(item, sent, rng, now),
                None if at == input.len() => break,
                None => {}
            }
        }
        Ok(())
    }

    /// Reads the answer head; once it is whole, where the frames after it start in
    /// `input`.
    fn read_head(&mut self, input: &[u8]) -> Result<Option<usize>, Failure> {
        let room = (handshake::MAX_HEAD + 1).saturating_sub(self.head.len());
        let taken = room.min(input.len());
        self.head.extend_from_slice(&input[..taken]);
        match handshake::parse(&self.head, &self.accept, &self.offered)
            .map_err(Failure::Handshake)?
        {
            None => Ok(None),
            Some(Answer::Refused { status }) => Err(Failure::Refused(status)),
            Some(Answer::Upgraded { consumed }) => {
                let extra = self.head.len() - consumed;
                self.head.clear();
                self.phase = Phase::Open;
                self.events.push(Event::Open);
                Ok(Some(taken - extra))
            }
        }
    }

    /// Acts on one decoded item.
    fn item(&mut self, item: Item, sent: Sent<'_>, rng: &mut Rng, now: Instant) {
        match item {
            Item::Data(b) => {
                self.receiving(now);
                if self.pushed {
                    return;
                }
                self.search.feed(b);
                if self.echoed {
                    let drawn = self.queue.front().and_then(|s| s.drawn);
                    self.echoed = sent.matches(drawn, self.echo_at, b);
                    self.echo_at += b.len();
                }
            }
            Item::End { len } => {
                self.receiving(now);
                let pushed = self.pushed;
                let drawn = self.queue.front().and_then(|s| s.drawn);
                let (matched, echoed) = (
                    self.search.matched,
                    self.echoed && self.echo_at == sent.len(drawn),
                );
                self.reply_done();
                if pushed {
                    return;
                }
                if let Some(slot) = self.queue.pop_front() {
                    self.events.push(Event::Replied {
                        slot,
                        len,
                        matched,
                        echoed,
                    });
                }
            }
            Item::Ping(c) => self.pong(c.payload(), rng),
            // A pong answers our ping if it carries its payload (RFC 6455 §5.5.3); any
            // other, unasked or not matching, is allowed and ignored.
            Item::Pong(c) if self.hold && self.ping.is_some_and(|p| p == c.payload()) => {
                self.ping = None;
                if let Some(mut slot) = self.queue.pop_front() {
                    slot.clock.first_byte.get_or_insert(now);
                    self.events.push(Event::Replied {
                        slot,
                        len: 0,
                        matched: false,
                        echoed: true,
                    });
                }
            }
            Item::Pong(_) => {}
            Item::Close(code) => {
                let payload = if code == 1005 {
                    Vec::new()
                } else {
                    code.to_be_bytes().to_vec()
                };
                self.tidy();
                frame::encode(&mut self.out, frame::CLOSE, &payload, rng.mask());
                self.queued(None);
                self.phase = Phase::Closed;
                self.events.push(Event::Close(code));
            }
        }
    }

    /// Answers a ping with `payload`: in place of the last pong queued if nothing follows
    /// it and none of it is written yet, else after what is queued, unless
    /// [`MAX_PONGS`] are waiting already. A ping whose pong is replaced or not queued is
    /// counted unanswered.
    fn pong(&mut self, payload: &[u8], rng: &mut Rng) {
        self.tidy();
        let at = match self.pong_at {
            Some(at) if self.written <= at => {
                self.out.truncate(at);
                self.unanswered += 1;
                at
            }
            _ if self.pongs >= MAX_PONGS => {
                self.unanswered += 1;
                return;
            }
            _ => {
                self.pongs += 1;
                self.out.len()
            }
        };
        frame::encode(&mut self.out, frame::PONG, payload, rng.mask());
        self.queued(Some(at));
    }

    /// Before something is queued: if the transport emptied `out` since the last thing
    /// queued, no pong waits in it any more.
    fn tidy(&mut self) {
        if self.out.len() < self.queued {
            self.pong_at = None;
            self.pongs = 0;
        }
    }

    /// Something was queued: a pong starting at `pong` (else anything else, after which
    /// no pong may be replaced).
    fn queued(&mut self, pong: Option<usize>) {
        self.pong_at = pong;
        self.queued = self.out.len();
    }

    /// A reply's byte arrived: the first of a message notes its time, or that nobody
    /// waits for it.
    fn receiving(&mut self, now: Instant) {
        if self.receiving {
            return;
        }
        self.receiving = true;
        match self.queue.front_mut() {
            Some(s) => {
                s.clock.first_byte.get_or_insert(now);
            }
            None => self.pushed = true,
        }
    }

    /// Ready for the next reply.
    fn reply_done(&mut self) {
        self.receiving = false;
        self.pushed = false;
        self.search.reset();
        self.echo_at = 0;
        self.echoed = true;
    }
}

#[cfg(test)]
mod tests;
