//! HTTP/2 frames (RFC 9113 §4 and §6): the 9-byte frame [`Head`], each frame a server
//! sends decoded into a typed [`Frame`] by [`decode`] (its flags read by the kind they
//! belong to, padding and priority fields removed, SETTINGS read entry by entry) or
//! refused with a [`FrameError`] that names the fault and maps to its [`ErrorCode`], the
//! writers of the frames a client sends (their flags built by [`Flags`], per kind), and
//! [`Reader`], which cuts a byte stream into whole frames however TCP split it.
//!
//! Written by hand: the framing is a few fixed layouts, and the hot path wants frames
//! handed over in place from the worker's read buffer, copying only a frame that a read
//! cut in two. Decoding borrows from the payload: a [`Frame`] holds no copy.

/// What a client sends first on every connection (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types as on the wire, for code that writes raw frames (tests, hostile servers).
/// The engine reads them as a [`Kind`].
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// Flag bits as on the wire, for code that writes raw frames. Their meaning depends on
/// the frame's kind (`END_STREAM` on DATA and HEADERS and `ACK` on SETTINGS and PING are
/// the same bit), so the engine never uses them bare: it reads flags through [`Head`]'s
/// methods and [`Frame`]'s fields, and writes them through [`Flags`].
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

/// A frame's kind (RFC 9113 §6); a kind this client does not know is ignored (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    Headers,
    Priority,
    RstStream,
    Settings,
    PushPromise,
    Ping,
    Goaway,
    WindowUpdate,
    Continuation,
    Unknown(u8),
}

impl Kind {
    /// The kind of a frame whose type byte is `b`.
    pub fn of(b: u8) -> Kind {
        match b {
            DATA => Kind::Data,
            HEADERS => Kind::Headers,
            PRIORITY => Kind::Priority,
            RST_STREAM => Kind::RstStream,
            SETTINGS => Kind::Settings,
            PUSH_PROMISE => Kind::PushPromise,
            PING => Kind::Ping,
            GOAWAY => Kind::Goaway,
            WINDOW_UPDATE => Kind::WindowUpdate,
            CONTINUATION => Kind::Continuation,
            other => Kind::Unknown(other),
        }
    }

    /// Its type byte.
    pub fn byte(self) -> u8 {
        match self {
            Kind::Data => DATA,
            Kind::Headers => HEADERS,
            Kind::Priority => PRIORITY,
            Kind::RstStream => RST_STREAM,
            Kind::Settings => SETTINGS,
            Kind::PushPromise => PUSH_PROMISE,
            Kind::Ping => PING,
            Kind::Goaway => GOAWAY,
            Kind::WindowUpdate => WINDOW_UPDATE,
            Kind::Continuation => CONTINUATION,
            Kind::Unknown(b) => b,
        }
    }
}

/// The flags of a frame the client writes, built by the kind they belong to: a bit
/// shared by two kinds cannot be set under the wrong name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(u8);

impl Flags {
    /// No flag.
    pub const NONE: Flags = Flags(0);
    /// SETTINGS or PING: an acknowledgement.
    pub const ACK: Flags = Flags(ACK);

    /// DATA: the last frame of its stream or not.
    pub fn data(end_stream: bool) -> Flags {
        Flags(if end_stream { END_STREAM } else { 0 })
    }

    /// HEADERS: the last frame of its stream, the last of its header block.
    pub fn headers(end_stream: bool, end_headers: bool) -> Flags {
        Flags(Flags::data(end_stream).0 | Flags::continuation(end_headers).0)
    }

    /// CONTINUATION: the last frame of its header block or not.
    pub fn continuation(end_headers: bool) -> Flags {
        Flags(if end_headers { END_HEADERS } else { 0 })
    }

    /// The byte on the wire.
    pub fn bits(self) -> u8 {
        self.0
    }
}

/// An HTTP/2 error code (RFC 9113 §7): what a GOAWAY or RST_STREAM carries, and what a
/// connection error of ours is sent with. A server may send any 32-bit value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub u32);

impl From<ErrorCode> for u32 {
    fn from(c: ErrorCode) -> u32 {
        c.0
    }
}

impl ErrorCode {
    /// The code's name in RFC 9113 (`None` for a code it does not define).
    pub fn name(self) -> Option<&'static str> {
        shootout_model::h2_error_name(self.0)
    }
}

impl std::fmt::Display for ErrorCode {
    /// Its name, or its value in hex for a code RFC 9113 does not define.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "{:#x}", self.0),
        }
    }
}

pub const NO_ERROR: ErrorCode = ErrorCode(0x0);
pub const PROTOCOL_ERROR: ErrorCode = ErrorCode(0x1);
pub const FLOW_CONTROL_ERROR: ErrorCode = ErrorCode(0x3);
pub const STREAM_CLOSED: ErrorCode = ErrorCode(0x5);
pub const FRAME_SIZE_ERROR: ErrorCode = ErrorCode(0x6);
pub const REFUSED_STREAM: ErrorCode = ErrorCode(0x7);
pub const CANCEL: ErrorCode = ErrorCode(0x8);
pub const COMPRESSION_ERROR: ErrorCode = ErrorCode(0x9);
pub const ENHANCE_YOUR_CALM: ErrorCode = ErrorCode(0xb);

/// Settings identifiers (RFC 9113 §6.5.2).
pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
pub const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// The frame size every peer accepts, and the least a peer may announce.
pub const DEFAULT_MAX_FRAME: usize = 16_384;
/// The largest frame size a peer may announce (2^24 − 1).
pub const MAX_FRAME_LIMIT: usize = (1 << 24) - 1;
/// The largest flow-control window (2^31 − 1).
pub const MAX_WINDOW: i64 = (1 << 31) - 1;
/// The window every stream and the connection start with.
pub const DEFAULT_WINDOW: i64 = 65_535;

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Payload length in bytes.
    pub len: usize,
    /// Frame type, as on the wire (read it as [`Head::kind`]).
    pub kind: u8,
    /// Flags, as on the wire (read them through the methods named for them).
    pub flags: u8,
    /// Stream identifier (the reserved bit cleared).
    pub stream: u32,
}

impl Head {
    /// Reads a header from its 9 bytes.
    pub fn parse(b: &[u8; 9]) -> Head {
        Head {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }

    /// The frame's kind.
    pub fn kind(&self) -> Kind {
        Kind::of(self.kind)
    }

    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// DATA or HEADERS: the last frame of its stream.
    pub fn end_stream(&self) -> bool {
        matches!(self.kind(), Kind::Data | Kind::Headers) && self.has(END_STREAM)
    }

    /// SETTINGS or PING: an acknowledgement.
    pub fn ack(&self) -> bool {
        matches!(self.kind(), Kind::Settings | Kind::Ping) && self.has(ACK)
    }

    /// HEADERS or CONTINUATION: the last frame of its header block.
    pub fn end_headers(&self) -> bool {
        matches!(self.kind(), Kind::Headers | Kind::Continuation) && self.has(END_HEADERS)
    }

    /// DATA or HEADERS: a pad length leads the payload.
    fn padded(&self) -> bool {
        matches!(self.kind(), Kind::Data | Kind::Headers) && self.has(PADDED)
    }

    /// HEADERS: priority fields follow the pad length.
    fn prioritized(&self) -> bool {
        self.kind() == Kind::Headers && self.has(PRIORITY_FLAG)
    }
}

/// Why a frame's bytes cannot be what its kind says, each fault a connection error with
/// the code [`FrameError::code`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// On stream 0 where a frame belongs to a stream, or on a stream where it belongs to
    /// the connection (PROTOCOL_ERROR).
    StreamId,
    /// A length its kind does not allow, or too short for its pad length or priority
    /// fields (FRAME_SIZE_ERROR, RFC 9113 §4.2).
    Length,
    /// Padding longer than what follows the pad length (and priority fields): as long as
    /// the frame's payload, or longer (PROTOCOL_ERROR, §6.1, §6.2).
    Padding,
    /// A setting whose value is not allowed: ENABLE_PUSH other than 0 (all a server may
    /// say), MAX_FRAME_SIZE out of range (PROTOCOL_ERROR, §6.5.2).
    Setting,
    /// An initial window over 2^31 − 1 (FLOW_CONTROL_ERROR, §6.5.2).
    Window,
}

impl FrameError {
    /// The error code the connection ends with.
    pub fn code(self) -> ErrorCode {
        match self {
            FrameError::StreamId | FrameError::Padding | FrameError::Setting => PROTOCOL_ERROR,
            FrameError::Length => FRAME_SIZE_ERROR,
            FrameError::Window => FLOW_CONTROL_ERROR,
        }
    }
}

/// A frame from the server, decoded: what its kind carries, read from its payload in
/// place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// DATA (§6.1): body bytes, padding removed.
    Data {
        stream: u32,
        end_stream: bool,
        /// The body bytes.
        data: &'a [u8],
        /// What flow control counts: the whole payload, padding included (§6.9.1).
        flow: usize,
    },
    /// HEADERS (§6.2): the first fragment of a header block, padding and priority removed.
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        fragment: &'a [u8],
    },
    /// PRIORITY (§6.3): read for its errors only, priorities are not used. A length other
    /// than 5 is the stream's error (FRAME_SIZE_ERROR), not the connection's.
    Priority { stream: u32, well_formed: bool },
    /// RST_STREAM (§6.4): a stream ended by the server.
    RstStream { stream: u32, code: ErrorCode },
    /// SETTINGS (§6.5): an acknowledgement, or the server's settings.
    Settings(Settings<'a>),
    /// PUSH_PROMISE (§6.6): never allowed, as the client disables push.
    PushPromise,
    /// PING (§6.7).
    Ping { ack: bool, payload: &'a [u8; 8] },
    /// GOAWAY (§6.8): the last stream the server processes, and why it stops (debug data
    /// ignored).
    Goaway { last: u32, code: ErrorCode },
    /// WINDOW_UPDATE (§6.9) for a stream, or the connection (stream 0). A zero increment
    /// is left to the receiver: on the connection it is a connection error, on a stream
    /// the stream's.
    WindowUpdate { stream: u32, increment: u32 },
    /// CONTINUATION (§6.10): the next fragment of the header block under way.
    Continuation {
        stream: u32,
        end_headers: bool,
        fragment: &'a [u8],
    },
    /// A kind this client does not know: ignored (§4.1).
    Unknown,
}

/// The server's SETTINGS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settings<'a> {
    /// The acknowledgement of ours.
    Ack,
    /// Its settings, read one at a time by [`Settings::entries`] so that each is applied
    /// before the next is checked, in the order the server gave them.
    Entries(&'a [u8]),
}

impl<'a> Settings<'a> {
    /// The entries, each checked as it is read (none for an acknowledgement).
    pub fn entries(self) -> impl Iterator<Item = Result<Setting, FrameError>> + 'a {
        let p = match self {
            Settings::Ack => &[][..],
            Settings::Entries(p) => p,
        };
        p.chunks_exact(6).map(|pair| {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            Setting::of(id, word(pair, 2))
        })
    }
}

/// One setting (RFC 9113 §6.5.2), its value checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    HeaderTableSize(u32),
    /// Always false from a server: it may only say 0.
    EnablePush(bool),
    MaxConcurrentStreams(u32),
    /// At most [`MAX_WINDOW`].
    InitialWindowSize(u32),
    /// Between [`DEFAULT_MAX_FRAME`] and [`MAX_FRAME_LIMIT`].
    MaxFrameSize(u32),
    MaxHeaderListSize(u32),
    /// An identifier this client does not know: ignored.
    Unknown(u16),
}

impl Setting {
    /// The setting `id` with value `v`, or the fault of its value.
    fn of(id: u16, v: u32) -> Result<Setting, FrameError> {
        Ok(match id {
            SETTINGS_HEADER_TABLE_SIZE => Setting::HeaderTableSize(v),
            SETTINGS_ENABLE_PUSH if v != 0 => return Err(FrameError::Setting),
            SETTINGS_ENABLE_PUSH => Setting::EnablePush(false),
            SETTINGS_MAX_CONCURRENT_STREAMS => Setting::MaxConcurrentStreams(v),
            SETTINGS_INITIAL_WINDOW_SIZE if i64::from(v) > MAX_WINDOW => {
                return Err(FrameError::Window)
            }
            SETTINGS_INITIAL_WINDOW_SIZE => Setting::InitialWindowSize(v),
            SETTINGS_MAX_FRAME_SIZE
                if !(DEFAULT_MAX_FRAME..=MAX_FRAME_LIMIT).contains(&(v as usize)) =>
            {
                return Err(FrameError::Setting)
            }
            SETTINGS_MAX_FRAME_SIZE => Setting::MaxFrameSize(v),
            SETTINGS_MAX_HEADER_LIST_SIZE => Setting::MaxHeaderListSize(v),
            other => Setting::Unknown(other),
        })
    }
}

/// A 32-bit word of a payload, big-endian.
fn word(p: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// Decodes the frame `h` with payload `p` (exactly `h.len` bytes) into what its kind
/// carries, or the fault that makes it a connection error. Whether the frame may come
/// now (before the server's SETTINGS, inside a header block, on a stream never opened) is
/// the connection's to judge.
#[inline]
pub fn decode<'a>(h: &Head, p: &'a [u8]) -> Result<Frame<'a>, FrameError> {
    let stream = h.stream;
    let on_stream = || {
        if stream == 0 {
            Err(FrameError::StreamId)
        } else {
            Ok(())
        }
    };
    let on_connection = || {
        if stream != 0 {
            Err(FrameError::StreamId)
        } else {
            Ok(())
        }
    };
    Ok(match h.kind() {
        Kind::Data => {
            on_stream()?;
            Frame::Data {
                stream,
                end_stream: h.end_stream(),
                data: unpadded(h, p)?,
                flow: p.len(),
            }
        }
        Kind::Headers => {
            on_stream()?;
            Frame::Headers {
                stream,
                end_stream: h.end_stream(),
                end_headers: h.end_headers(),
                fragment: unpadded(h, p)?,
            }
        }
        Kind::Priority => {
            on_stream()?;
            Frame::Priority {
                stream,
                well_formed: p.len() == 5,
            }
        }
        Kind::RstStream => {
            on_stream()?;
            if p.len() != 4 {
                return Err(FrameError::Length);
            }
            Frame::RstStream {
                stream,
                code: ErrorCode(word(p, 0)),
            }
        }
        Kind::Settings => {
            on_connection()?;
            if h.ack() {
                if !p.is_empty() {
                    return Err(FrameError::Length);
                }
                Frame::Settings(Settings::Ack)
            } else if !p.len().is_multiple_of(6) {
                return Err(FrameError::Length);
            } else {
                Frame::Settings(Settings::Entries(p))
            }
        }
        Kind::PushPromise => Frame::PushPromise,
        Kind::Ping => {
            on_connection()?;
            let payload = <&[u8; 8]>::try_from(p).map_err(|_| FrameError::Length)?;
            Frame::Ping {
                ack: h.ack(),
                payload,
            }
        }
        Kind::Goaway => {
            on_connection()?;
            if p.len() < 8 {
                return Err(FrameError::Length);
            }
            Frame::Goaway {
                last: word(p, 0) & 0x7fff_ffff,
                code: ErrorCode(word(p, 4)),
            }
        }
        Kind::WindowUpdate => {
            if p.len() != 4 {
                return Err(FrameError::Length);
            }
            Frame::WindowUpdate {
                stream,
                increment: word(p, 0) & 0x7fff_ffff,
            }
        }
        Kind::Continuation => Frame::Continuation {
            stream,
            end_headers: h.end_headers(),
            fragment: p,
        },
        Kind::Unknown(_) => Frame::Unknown,
    })
}

/// The payload of a DATA or HEADERS frame without its padding (and, for HEADERS, without
/// its priority fields).
#[inline]
fn unpadded<'a>(h: &Head, payload: &'a [u8]) -> Result<&'a [u8], FrameError> {
    let mut p = payload;
    let mut pad = 0;
    if h.padded() {
        let (&n, rest) = p.split_first().ok_or(FrameError::Length)?;
        pad = usize::from(n);
        p = rest;
    }
    if h.prioritized() {
        p = p.get(5..).ok_or(FrameError::Length)?;
    }
    p.len()
        .checked_sub(pad)
        .map(|n| &p[..n])
        .ok_or(FrameError::Padding)
}

/// Appends a frame header.
pub fn head(out: &mut Vec<u8>, len: usize, kind: Kind, flags: Flags, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind.byte(), flags.bits()]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// Appends a SETTINGS frame with these `(identifier, value)` pairs.
pub fn settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    head(out, pairs.len() * 6, Kind::Settings, Flags::NONE, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a SETTINGS acknowledgement.
pub fn settings_ack(out: &mut Vec<u8>) {
    head(out, 0, Kind::Settings, Flags::ACK, 0);
}

/// Appends a WINDOW_UPDATE of `increment` (1..=2^31−1) for `stream` (0: the connection).
pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    head(out, 4, Kind::WindowUpdate, Flags::NONE, stream);
    out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
}

/// Appends a RST_STREAM.
pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
    head(out, 4, Kind::RstStream, Flags::NONE, stream);
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends a GOAWAY naming the last stream the server opened (none: 0) and a code.
pub fn goaway(out: &mut Vec<u8>, code: ErrorCode) {
    head(out, 8, Kind::Goaway, Flags::NONE, 0);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends the acknowledgement of a PING with this payload.
pub fn ping_ack(out: &mut Vec<u8>, payload: &[u8; 8]) {
    head(out, 8, Kind::Ping, Flags::ACK, 0);
    out.extend_from_slice(payload);
}

/// Cuts a byte stream into frames. Whole frames in a read are handed over where they lie;
/// only a frame cut by the end of a read is copied, to be completed by the next.
#[derive(Debug, Default)]
pub struct Reader {
    pending: Vec<u8>,
}

/// A frame whose length is over what we announced (a FRAME_SIZE_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversized;

impl Reader {
    /// Forgets a partial frame (a new connection).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// Hands each whole frame of `pending + data` to `f`, in order, and keeps a trailing
    /// partial frame. Stops at the first error `f` returns. `max` is the largest payload
    /// accepted.
    pub fn feed<E: From<Oversized>>(
        &mut self,
        mut data: &[u8],
        max: usize,
        mut f: impl FnMut(Head, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.pending.is_empty() {
            // Complete the frame begun in an earlier read, taking no more than it needs.
            if self.pending.len() < 9 {
                let take = (9 - self.pending.len()).min(data.len());
                self.pending.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.pending.len() < 9 {
                    return Ok(());
                }
            }
            let h = Head::parse(self.pending[..9].try_into().expect("9 bytes"));
            if h.len > max {
                return Err(Oversized.into());
            }
            let take = (9 + h.len - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() < 9 + h.len {
                return Ok(());
            }
            let frame = std::mem::take(&mut self.pending);
            let r = f(h, &frame[9..]);
            // The buffer goes back, keeping its capacity for the next cut frame.
            self.pending = frame;
            self.pending.clear();
            r?;
        }
        while data.len() >= 9 {
            let h = Head::parse(data[..9].try_into().expect("9 bytes"));
            if h.len > max {
                return Err(Oversized.into());
            }
            if data.len() < 9 + h.len {
                break;
            }
            f(h, &data[9..9 + h.len])?;
            data = &data[9 + h.len..];
        }
        self.pending.extend_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
