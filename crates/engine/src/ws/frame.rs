//! RFC 6455 §5 framing: [`encode`] writes one client frame (always masked, with the key
//! the caller draws fresh for it), [`Decoder`] cuts the server's bytes into what a client
//! acts on ([`Item`]): the payload of data messages as it streams in, each message's end,
//! pings, pongs and closes.
//!
//! The decoder does no I/O and holds no message: payload bytes are handed on where they
//! lie in the caller's buffer, so a reply of any size costs no memory beyond a 14-byte
//! frame head and one control frame's 125 bytes. Everything a server may get wrong is a
//! [`ProtocolError`], found as early as the bytes allow (a masked frame, reserved bits, an
//! unknown opcode or an oversize control frame at its second head byte; an oversize
//! message at its frame head; bad UTF-8 at the byte that breaks it), never a panic.

/// Continues a fragmented message.
pub const CONTINUATION: u8 = 0x0;
/// A text message (UTF-8).
pub const TEXT: u8 = 0x1;
/// A binary message.
pub const BINARY: u8 = 0x2;
/// Ends the connection, with an optional code and reason.
pub const CLOSE: u8 = 0x8;
/// Asks for a pong with the same payload.
pub const PING: u8 = 0x9;
/// Answers a ping.
pub const PONG: u8 = 0xA;

/// The longest payload of a control frame (RFC 6455 §5.5).
pub const MAX_CONTROL: usize = 125;

/// How the server broke RFC 6455.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// A server frame with its mask bit set (§5.1: a client must fail it).
    #[error("a masked frame from the server")]
    Masked,
    /// RSV1-3 set, with no extension agreed.
    #[error("reserved bits set with no extension agreed")]
    Reserved,
    /// An opcode RFC 6455 does not define.
    #[error("unknown opcode {0:#x}")]
    Opcode(u8),
    /// A control frame with more than [`MAX_CONTROL`] bytes of payload.
    #[error("a control frame over 125 bytes")]
    ControlSize,
    /// A control frame without FIN.
    #[error("a fragmented control frame")]
    ControlFragmented,
    /// A continuation frame with no message to continue.
    #[error("a continuation frame without a message to continue")]
    Continuation,
    /// A text or binary frame while a fragmented message is unfinished.
    #[error("a new message inside a fragmented one")]
    Interleaved,
    /// A message over the limit (16 MiB unless said otherwise).
    #[error("a message over the size limit")]
    TooBig,
    /// A 64-bit payload length with its most significant bit set (§5.2).
    #[error("a frame length with its top bit set")]
    Length,
    /// A text message (or a close reason) that is not UTF-8.
    #[error("text that is not UTF-8")]
    Utf8,
    /// A close frame with one byte of payload, or a code no endpoint may send (§7.4).
    #[error("a close frame with a bad code")]
    CloseCode,
}

/// One control frame's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    len: u8,
    bytes: [u8; MAX_CONTROL],
}

impl Control {
    const EMPTY: Control = Control {
        len: 0,
        bytes: [0; MAX_CONTROL],
    };

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// What the decoder found in the server's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// Payload bytes of the message being received, in order (unmasked, and for a text
    /// message checked as UTF-8 so far).
    Data(&'a [u8]),
    /// The message being received is complete: `len` payload bytes in all.
    End {
        /// Payload bytes of the whole message.
        len: u64,
    },
    /// A ping: the client answers it with a pong carrying the same payload.
    Ping(Control),
    /// A pong and its payload (unasked pongs are allowed, §5.5.3; one answers the ping
    /// whose payload it carries).
    Pong(Control),
    /// A close frame: its code (1005, "no status", when it had none).
    Close(u16),
}

/// Where the decoder is in the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a frame head.
    Head,
    /// Reading a data frame's payload: `left` bytes to go; `fin` ends the message.
    Data { left: u64, fin: bool },
    /// Reading a control frame's payload.
    Control { opcode: u8, left: usize },
}

/// Cuts a server's bytes into [`Item`]s; see the module docs.
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
    head: [u8; 14],
    have: usize,
    /// The message being received: its opcode (text or binary), until its last frame.
    message: Option<u8>,
    /// Its payload bytes so far (frames announced).
    len: u64,
    /// The most payload bytes a message may have.
    limit: u64,
    utf8: Utf8,
    control: Control,
    /// The last data frame of a message ended: [`Item::End`] comes next.
    end: bool,
}

impl Decoder {
    /// A decoder that takes messages of at most `limit` bytes.
    pub fn new(limit: usize) -> Decoder {
        Decoder {
            state: State::Head,
            head: [0; 14],
            have: 0,
            message: None,
            len: 0,
            limit: limit as u64,
            utf8: Utf8::default(),
            control: Control::EMPTY,
            end: false,
        }
    }

    /// Back to the start of a connection's stream.
    pub fn reset(&mut self) {
        *self = Decoder::new(self.limit as usize);
    }

    /// Reads from `input`: how many bytes it used, and what they completed, if anything.
    /// Call again with the rest of the input until it returns `None` with every byte used
    /// (an item may use no byte; a frame head that completes nothing returns `None`
    /// with bytes left).
    pub fn next<'a>(
        &mut self,
        input: &'a [u8],
    ) -> Result<(usize, Option<Item<'a>>), ProtocolError> {
        if std::mem::take(&mut self.end) {
            return Ok((0, Some(self.finish()?)));
        }
        match self.state {
            State::Head => self.read_head(input),
            State::Data { left, fin } => {
                let n = usize::try_from(left).unwrap_or(usize::MAX).min(input.len());
                if n == 0 {
                    return Ok((0, None));
                }
                let chunk = &input[..n];
                if self.message == Some(TEXT) {
                    self.utf8.feed(chunk)?;
                }
                let left = left - n as u64;
                self.state = if left == 0 {
                    self.end = fin;
                    State::Head
                } else {
                    State::Data { left, fin }
                };
                Ok((n, Some(Item::Data(chunk))))
            }
            State::Control { opcode, left } => {
                let n = left.min(input.len());
                let at = usize::from(self.control.len);
                self.control.bytes[at..at + n].copy_from_slice(&input[..n]);
                self.control.len += n as u8;
                if n < left {
                    self.state = State::Control {
                        opcode,
                        left: left - n,
                    };
                    return Ok((n, None));
                }
                self.state = State::Head;
                Ok((n, Some(self.control_item(opcode)?)))
            }
        }
    }

    /// How long the frame head is, from what is read of it.
    fn head_len(&self) -> usize {
        if self.have < 2 {
            return 2;
        }
        match self.head[1] & 0x7f {
            126 => 4,
            127 => 10,
            _ => 2,
        }
    }

    /// Reads a frame head; once whole, begins its frame.
    fn read_head<'a>(
        &mut self,
        input: &'a [u8],
    ) -> Result<(usize, Option<Item<'a>>), ProtocolError> {
        let mut used = 0;
        loop {
            let need = self.head_len();
            if self.have >= need {
                break;
            }
            if used == input.len() {
                return Ok((used, None));
            }
            let take = (need - self.have).min(input.len() - used);
            self.head[self.have..self.have + take].copy_from_slice(&input[used..used + take]);
            self.have += take;
            used += take;
            if self.have == 2 {
                check_first_bytes(self.head[0], self.head[1])?;
            }
        }
        let (b0, b1) = (self.head[0], self.head[1]);
        let len = match b1 & 0x7f {
            126 => u64::from(u16::from_be_bytes([self.head[2], self.head[3]])),
            127 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&self.head[2..10]);
                let l = u64::from_be_bytes(b);
                if l >> 63 != 0 {
                    return Err(ProtocolError::Length);
                }
                l
            }
            l => u64::from(l),
        };
        self.have = 0;
        let item = self.begin(b0 & 0x80 != 0, b0 & 0x0f, len)?;
        Ok((used, item))
    }

    /// A frame's head is read: sets up for its payload. An empty control frame, or the
    /// empty last frame of a message, is an item at once.
    fn begin(
        &mut self,
        fin: bool,
        opcode: u8,
        len: u64,
    ) -> Result<Option<Item<'static>>, ProtocolError> {
        if opcode >= CLOSE {
            // `check_first_bytes` let through only defined control opcodes, with FIN,
            // of at most 125 bytes.
            self.control = Control::EMPTY;
            if len == 0 {
                return self.control_item(opcode).map(Some);
            }
            self.state = State::Control {
                opcode,
                left: len as usize,
            };
            return Ok(None);
        }
        match (opcode, self.message) {
            (CONTINUATION, None) => return Err(ProtocolError::Continuation),
            (CONTINUATION, Some(_)) => {}
            (_, Some(_)) => return Err(ProtocolError::Interleaved),
            (op, None) => {
                self.message = Some(op);
                self.len = 0;
                self.utf8 = Utf8::default();
            }
        }
        self.len = self.len.saturating_add(len);
        if self.len > self.limit {
            return Err(ProtocolError::TooBig);
        }
        if len > 0 {
            self.state = State::Data { left: len, fin };
            return Ok(None);
        }
        if fin {
            return self.finish().map(Some);
        }
        Ok(None)
    }

    /// The message's last frame ended.
    fn finish(&mut self) -> Result<Item<'static>, ProtocolError> {
        if self.message.take() == Some(TEXT) && !self.utf8.complete() {
            return Err(ProtocolError::Utf8);
        }
        Ok(Item::End { len: self.len })
    }

    /// A control frame's payload is whole.
    fn control_item(&self, opcode: u8) -> Result<Item<'static>, ProtocolError> {
        match opcode {
            PING => Ok(Item::Ping(self.control)),
            PONG => Ok(Item::Pong(self.control)),
            _ => close_code(self.control.payload()).map(Item::Close),
        }
    }
}

/// The checks a frame's first two bytes allow: no mask, no reserved bit, a defined
/// opcode, and a control frame whole (FIN) and short.
fn check_first_bytes(b0: u8, b1: u8) -> Result<(), ProtocolError> {
    if b1 & 0x80 != 0 {
        return Err(ProtocolError::Masked);
    }
    if b0 & 0x70 != 0 {
        return Err(ProtocolError::Reserved);
    }
    let opcode = b0 & 0x0f;
    match opcode {
        CONTINUATION | TEXT | BINARY => Ok(()),
        CLOSE | PING | PONG if b0 & 0x80 == 0 => Err(ProtocolError::ControlFragmented),
        CLOSE | PING | PONG if usize::from(b1 & 0x7f) > MAX_CONTROL => {
            Err(ProtocolError::ControlSize)
        }
        CLOSE | PING | PONG => Ok(()),
        other => Err(ProtocolError::Opcode(other)),
    }
}

/// A close frame's code (1005 when it has none), checked as §7.4 asks: one byte of
/// payload, a code no endpoint may send, or a reason that is not UTF-8, is an error.
pub fn close_code(payload: &[u8]) -> Result<u16, ProtocolError> {
    match payload {
        [] => Ok(1005),
        [_] => Err(ProtocolError::CloseCode),
        [a, b, reason @ ..] => {
            let code = u16::from_be_bytes([*a, *b]);
            let sendable = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
            if !sendable {
                return Err(ProtocolError::CloseCode);
            }
            std::str::from_utf8(reason).map_err(|_| ProtocolError::Utf8)?;
            Ok(code)
        }
    }
}

/// Checks UTF-8 that arrives in pieces: a character cut between two pieces is held (at
/// most 3 bytes) until the next.
#[derive(Debug, Clone, Copy, Default)]
struct Utf8 {
    pending: [u8; 4],
    n: usize,
}

impl Utf8 {
    /// Checks the next piece.
    fn feed(&mut self, mut s: &[u8]) -> Result<(), ProtocolError> {
        if self.n > 0 {
            let width = match self.pending[0] {
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let take = (width - self.n).min(s.len());
            self.pending[self.n..self.n + take].copy_from_slice(&s[..take]);
            self.n += take;
            s = &s[take..];
            match std::str::from_utf8(&self.pending[..self.n]) {
                Ok(_) => self.n = 0,
                Err(e) if e.error_len().is_none() => return Ok(()),
                Err(_) => return Err(ProtocolError::Utf8),
            }
        }
        match std::str::from_utf8(s) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                let tail = &s[e.valid_up_to()..];
                self.pending[..tail.len()].copy_from_slice(tail);
                self.n = tail.len();
                Ok(())
            }
            Err(_) => Err(ProtocolError::Utf8),
        }
    }

    /// No character is cut off.
    fn complete(&self) -> bool {
        self.n == 0
    }
}

/// Appends one whole client frame (FIN set) of `opcode` carrying `payload`, masked with
/// `mask` (RFC 6455 §5.3: every client frame is masked, with a key of its own).
pub fn encode(out: &mut Vec<u8>, opcode: u8, payload: &[u8], mask: [u8; 4]) {
    out.push(0x80 | opcode);
    let len = payload.len();
    if len < 126 {
        out.push(0x80 | len as u8);
    } else if let Ok(short) = u16::try_from(len) {
        out.push(0x80 | 126);
        out.extend_from_slice(&short.to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
    let at = out.len();
    out.extend_from_slice(payload);
    apply_mask(&mut out[at..], mask);
}

/// XORs `buf` with `mask` repeated, eight bytes at a time.
pub fn apply_mask(buf: &mut [u8], mask: [u8; 4]) {
    let m = u64::from_ne_bytes([
        mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3],
    ]);
    let mut words = buf.chunks_exact_mut(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        w.copy_from_slice(&(u64::from_ne_bytes(b) ^ m).to_ne_bytes());
    }
    for (i, b) in words.into_remainder().iter_mut().enumerate() {
        *b ^= mask[i % 4];
    }
}

/// A fast generator of mask keys and handshake nonces (xorshift64*), one per worker. Not
/// cryptographic: RFC 6455 asks for unpredictable masks to protect intermediaries that a
/// hostile page's script could poison; a load generator sends its own fixed messages to a
/// server its user chose, so a fresh key per frame from a fast generator serves the
/// framing's purpose at a fraction of a CSPRNG's cost.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from `seed` (never stuck at zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A mask key.
    pub fn mask(&mut self) -> [u8; 4] {
        (self.next_u64() as u32).to_ne_bytes()
    }
}

#[cfg(test)]
mod tests;
