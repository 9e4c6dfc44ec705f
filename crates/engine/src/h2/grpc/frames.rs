//! A reply's messages as gRPC frames them on a stream (its "Length-Prefixed-Message"s): a
//! compressed flag (1 byte), a big-endian length (4 bytes), then that many bytes of
//! message, repeated, cut anywhere by the DATA frames that carry them. [`Frames::feed`]
//! takes the DATA as it arrives and checks each whole message against the method's output
//! type ([`super::wire::check`]) where it lies when it came in one piece, else in a buffer
//! kept for the slot; [`Frames::end`] says, at the end of the stream, whether what came
//! was well framed and decoded.
//!
//! A message whose flag is 1 is compressed: read only when the call asked for gzip
//! (`--grpc-compress gzip`) and the reply's `grpc-encoding` is `gzip` ([`Frames::agree`]),
//! inflated within the limit ([`super::gzip`]); any other compressed message (none
//! agreed, an unknown encoding) fails the call as `grpc_framing`.
//!
//! `--expect-echo` compares a reply with the request's message as the server read it:
//! a request sent compressed is inflated for that, once a call ([`Frames::feed`]'s `sent`
//! is the request behind its prefix, whose flag says whether it went compressed).
//!
//! A parser of a server's bytes: a length over the reply limit is refused before a byte of
//! it is kept (a prefix of 4 GiB costs nothing), the buffer never holds more than the
//! limit, and neither does an inflated message. After the first fault the rest of the
//! stream is ignored.

use super::{wire, Reply};
use shootout_model::FailureKind;

/// Buffers grown past this are dropped after their message (a large reply is rare: its
/// bytes are not kept for every later call on the slot).
const KEPT: usize = 64 * 1024;

/// The messages of one reply so far.
#[derive(Debug)]
pub struct Frames {
    /// The prefix being read, and how much of it has come.
    prefix: [u8; 5],
    have: usize,
    /// The message being read (its prefix read): its length, and its bytes so far when it
    /// did not come in one piece.
    len: Option<usize>,
    pub(super) buf: Vec<u8>,
    /// The message being read is compressed.
    compressed: bool,
    /// Compressed messages may be read: gzip was asked for and the reply's encoding is it.
    gzip: bool,
    /// The message being read, inflated.
    inflated: Vec<u8>,
    /// `--expect-echo` of a request sent compressed: its message inflated, once a call…
    request: Vec<u8>,
    /// …and whether that was done (`Some(false)`: it did not inflate within the limit).
    request_read: Option<bool>,
    /// Whole messages read.
    messages: u32,
    /// Of which decoded, as expected.
    good: u32,
    /// The most messages read: what comes after is left unread (a server stream's limit).
    cap: u32,
    /// The first fault found.
    fault: Option<FailureKind>,
    /// A message was not what the call expected ([`super::expect`]).
    unexpected: bool,
}

impl Default for Frames {
    fn default() -> Frames {
        Frames {
            prefix: [0; 5],
            have: 0,
            len: None,
            buf: Vec::new(),
            compressed: false,
            gzip: false,
            inflated: Vec::new(),
            request: Vec::new(),
            request_read: None,
            messages: 0,
            good: 0,
            cap: u32::MAX,
            fault: None,
            unexpected: false,
        }
    }
}

impl Frames {
    /// A new reply (the buffer's capacity kept, unless it grew large), read up to `cap`
    /// messages.
    pub fn begin_with(&mut self, cap: u32) {
        self.begin();
        self.cap = cap;
    }

    /// A new reply (the buffer's capacity kept, unless it grew large).
    pub fn begin(&mut self) {
        self.good = 0;
        self.cap = u32::MAX;
        self.have = 0;
        self.len = None;
        self.buf.clear();
        if self.buf.capacity() > KEPT {
            self.buf = Vec::new();
        }
        self.compressed = false;
        self.gzip = false;
        self.request_read = None;
        self.request.clear();
        if self.request.capacity() > KEPT {
            self.request = Vec::new();
        }
        self.messages = 0;
        self.fault = None;
        self.unexpected = false;
    }

    /// The reply's head said its messages may come compressed with gzip, and the call
    /// asked for that (`gzip`): compressed messages are read from now on.
    pub fn agree(&mut self, gzip: bool) {
        self.gzip = gzip;
    }

    /// A message was well formed but not what the call expected.
    pub fn unexpected(&self) -> bool {
        self.unexpected
    }

    /// Whole messages read so far.
    pub fn messages(&self) -> u32 {
        self.messages
    }

    /// Whole messages read that decoded and held what the call expects.
    pub fn good(&self) -> u32 {
        self.good
    }

    /// The cap of messages was reached: the rest is left unread.
    pub fn full(&self) -> bool {
        self.messages >= self.cap
    }

    /// The first fault found so far.
    pub fn fault(&self) -> Option<FailureKind> {
        self.fault
    }

    /// Takes a piece of the reply's DATA to the call that sent `sent` (its message behind
    /// its 5-byte prefix, compressed when the prefix's flag is 1).
    pub fn feed(&mut self, mut data: &[u8], reply: &Reply, sent: &[u8]) {
        while !data.is_empty() && self.fault.is_none() && !self.full() {
            let Some(len) = self.len else {
                let n = (5 - self.have).min(data.len());
                self.prefix[self.have..self.have + n].copy_from_slice(&data[..n]);
                self.have += n;
                data = &data[n..];
                if self.have == 5 {
                    self.have = 0;
                    self.started(reply, sent);
                }
                continue;
            };
            if self.buf.is_empty() && data.len() >= len {
                // The whole message in this piece: checked where it lies.
                self.message(&data[..len], reply, sent);
                data = &data[len..];
                self.len = None;
                continue;
            }
            let n = (len - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() == len {
                let buf = std::mem::take(&mut self.buf);
                self.message(&buf, reply, sent);
                self.buf = buf;
                self.buf.clear();
                self.len = None;
            }
        }
    }

    /// A prefix was read: its flag must be 0, or 1 where gzip was agreed
    /// ([`Frames::agree`]); its length within the limit.
    fn started(&mut self, reply: &Reply, sent: &[u8]) {
        let [flag, a, b, c, d] = self.prefix;
        let len = u32::from_be_bytes([a, b, c, d]) as usize;
        self.compressed = flag == 1;
        let agreed = flag == 0 || (flag == 1 && self.gzip);
        if !agreed || len > reply.max_message {
            self.fault = Some(FailureKind::GrpcFraming);
            return;
        }
        self.len = Some(len);
        if len == 0 {
            self.message(&[], reply, sent);
            self.len = None;
        }
    }

    /// A whole message (inflated first when compressed): it must decode as the output
    /// type, and hold what the call expects of it.
    fn message(&mut self, bytes: &[u8], reply: &Reply, sent: &[u8]) {
        if self.compressed {
            let mut inflated = std::mem::take(&mut self.inflated);
            if super::gzip::inflate(bytes, reply.max_message, &mut inflated) {
                self.checked(&inflated, reply, sent);
            } else {
                // Not gzip, or past the limit once inflated.
                self.messages = self.messages.saturating_add(1);
                self.fault = Some(FailureKind::GrpcFraming);
            }
            inflated.clear();
            if inflated.capacity() <= KEPT {
                self.inflated = inflated;
            }
            return;
        }
        self.checked(bytes, reply, sent);
    }

    /// A whole message, not compressed: checked.
    fn checked(&mut self, bytes: &[u8], reply: &Reply, sent: &[u8]) {
        self.messages = self.messages.saturating_add(1);
        if !wire::check(&reply.output, bytes) {
            self.fault = Some(FailureKind::GrpcDecode);
            return;
        }
        let met = match self.request(sent, reply) {
            Some(request) => reply.expect.met(&reply.output, bytes, request),
            // A request that does not inflate within the limit: no reply echoes it.
            None => false,
        };
        if met {
            self.good = self.good.saturating_add(1);
        } else {
            self.unexpected = true;
        }
    }

    /// The request's message (`sent`: behind its prefix) as the server read it, for
    /// `--expect-echo`: where it lies, or inflated (once a call) when its flag says it went
    /// compressed; `None` when it does not inflate within the reply limit. Without
    /// `--expect-echo` it is not read.
    fn request<'s>(&'s mut self, sent: &'s [u8], reply: &Reply) -> Option<&'s [u8]> {
        let msg = sent.get(5..).unwrap_or_default();
        if !reply.expect.echo || sent.first() != Some(&1) {
            return Some(msg);
        }
        if self.request_read.is_none() {
            let ok = super::gzip::inflate(msg, reply.max_message, &mut self.request);
            self.request_read = Some(ok);
        }
        match self.request_read {
            Some(true) => Some(self.request.as_slice()),
            _ => None,
        }
    }

    /// The stream ended: the first fault, or a message (or prefix) left unfinished, which
    /// is a length past the DATA received.
    pub fn end(&mut self) -> Option<FailureKind> {
        if self.fault.is_none() && (self.have > 0 || self.len.is_some()) {
            self.fault = Some(FailureKind::GrpcFraming);
        }
        self.fault
    }
}
