//! HTTP/2 frames (RFC 9113 §4 and §6): the 9-byte frame header with its [`Kind`] and
//! flags read by name, the error [`Code`]s, one type per control frame a server sends
//! ([`RstStream`], [`Ping`], [`Goaway`], [`WindowUpdate`], [`Priority`]) that decodes its
//! payload to a `Result` naming the fault, the writers of the frames a client sends, and
//! [`Reader`], which cuts a byte stream into whole frames however TCP split it.
//!
//! Written by hand: the framing is a few fixed layouts, and the hot path wants frames
//! handed over in place from the worker's read buffer, copying only a frame that a read
//! cut in two.

/// What a client sends first on every connection (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types, as on the wire (see [`Kind`]).
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

/// Flags, as on the wire: their meaning depends on the frame's kind (`END_STREAM` on DATA
/// and HEADERS, `ACK` on SETTINGS and PING share a bit), so a received frame's flags are
/// read through [`Head`]'s named methods.
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
}

/// An HTTP/2 error code (RFC 9113 §7): what a GOAWAY or RST_STREAM carries, and what a
/// connection error of ours is sent with. A server may send any 32-bit value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code(pub u32);

impl From<Code> for u32 {
    fn from(c: Code) -> u32 {
        c.0
    }
}

impl Code {
    /// The code's name in RFC 9113 (`None` for a code it does not define).
    pub fn name(self) -> Option<&'static str> {
        shootout_model::h2_error_name(self.0)
    }
}

pub const NO_ERROR: Code = Code(0x0);
pub const PROTOCOL_ERROR: Code = Code(0x1);
pub const FLOW_CONTROL_ERROR: Code = Code(0x3);
pub const FRAME_SIZE_ERROR: Code = Code(0x6);
pub const STREAM_CLOSED: Code = Code(0x5);
pub const REFUSED_STREAM: Code = Code(0x7);
pub const CANCEL: Code = Code(0x8);
pub const COMPRESSION_ERROR: Code = Code(0x9);
pub const ENHANCE_YOUR_CALM: Code = Code(0xb);

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
    /// Frame type.
    pub kind: u8,
    /// Flags.
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
}

/// A 32-bit word of a payload, big-endian.
fn word(p: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// RST_STREAM (RFC 9113 §6.4): a stream ended by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RstStream {
    pub code: Code,
}

impl RstStream {
    /// On stream 0: PROTOCOL_ERROR; a length other than 4: FRAME_SIZE_ERROR.
    pub fn decode(h: &Head, p: &[u8]) -> Result<RstStream, Code> {
        if h.stream == 0 {
            return Err(PROTOCOL_ERROR);
        }
        if p.len() != 4 {
            return Err(FRAME_SIZE_ERROR);
        }
        Ok(RstStream {
            code: Code(word(p, 0)),
        })
    }
}

/// PING (RFC 9113 §6.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ping<'a> {
    pub ack: bool,
    pub payload: &'a [u8; 8],
}

impl<'a> Ping<'a> {
    /// Not on stream 0: PROTOCOL_ERROR; a length other than 8: FRAME_SIZE_ERROR.
    pub fn decode(h: &Head, p: &'a [u8]) -> Result<Ping<'a>, Code> {
        if h.stream != 0 {
            return Err(PROTOCOL_ERROR);
        }
        let payload = <&[u8; 8]>::try_from(p).map_err(|_| FRAME_SIZE_ERROR)?;
        Ok(Ping {
            ack: h.ack(),
            payload,
        })
    }
}

/// GOAWAY (RFC 9113 §6.8): the last stream the server processes, and why it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Goaway {
    pub last: u32,
    pub code: Code,
}

impl Goaway {
    /// Not on stream 0: PROTOCOL_ERROR; shorter than 8 bytes: FRAME_SIZE_ERROR (debug
    /// data after them is ignored).
    pub fn decode(h: &Head, p: &[u8]) -> Result<Goaway, Code> {
        if h.stream != 0 {
            return Err(PROTOCOL_ERROR);
        }
        if p.len() < 8 {
            return Err(FRAME_SIZE_ERROR);
        }
        Ok(Goaway {
            last: word(p, 0) & 0x7fff_ffff,
            code: Code(word(p, 4)),
        })
    }
}

/// WINDOW_UPDATE (RFC 9113 §6.9). A zero increment is left to the receiver: on the
/// connection it is a connection error, on a stream the stream's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowUpdate {
    pub increment: u32,
}

impl WindowUpdate {
    /// A length other than 4: FRAME_SIZE_ERROR.
    pub fn decode(p: &[u8]) -> Result<WindowUpdate, Code> {
        if p.len() != 4 {
            return Err(FRAME_SIZE_ERROR);
        }
        Ok(WindowUpdate {
            increment: word(p, 0) & 0x7fff_ffff,
        })
    }
}

/// PRIORITY (RFC 9113 §6.3): read for its errors only, priorities are not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Well formed.
    Fine,
    /// A length other than 5: the stream's error (FRAME_SIZE_ERROR), not the connection's.
    WrongLength,
}

impl Priority {
    /// On stream 0: PROTOCOL_ERROR.
    pub fn decode(h: &Head, p: &[u8]) -> Result<Priority, Code> {
        if h.stream == 0 {
            return Err(PROTOCOL_ERROR);
        }
        Ok(if p.len() == 5 {
            Priority::Fine
        } else {
            Priority::WrongLength
        })
    }
}

/// Appends a frame header.
pub fn head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// Appends a SETTINGS frame with these `(identifier, value)` pairs.
pub fn settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    head(out, pairs.len() * 6, SETTINGS, 0, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a SETTINGS acknowledgement.
pub fn settings_ack(out: &mut Vec<u8>) {
    head(out, 0, SETTINGS, ACK, 0);
}

/// Appends a WINDOW_UPDATE of `increment` (1..=2^31−1) for `stream` (0: the connection).
pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    head(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
}

/// Appends a RST_STREAM.
pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: Code) {
    head(out, 4, RST_STREAM, 0, stream);
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends a GOAWAY naming the last stream the server opened (none: 0) and a code.
pub fn goaway(out: &mut Vec<u8>, code: Code) {
    head(out, 8, GOAWAY, 0, 0);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends the acknowledgement of a PING with this payload.
pub fn ping_ack(out: &mut Vec<u8>, payload: &[u8; 8]) {
    head(out, 8, PING, ACK, 0);
    out.extend_from_slice(payload);
}

/// The payload of a DATA or HEADERS frame without its padding (and, for HEADERS, without
/// its priority fields). Errs with the code of the fault: FRAME_SIZE_ERROR for a frame
/// too short for its pad length or priority fields (RFC 9113 §4.2), PROTOCOL_ERROR for
/// padding as long as what remains (§6.1, §6.2).
pub fn unpadded<'a>(h: &Head, payload: &'a [u8]) -> Result<&'a [u8], Code> {
    let mut p = payload;
    let mut pad = 0;
    if h.has(PADDED) {
        let (&n, rest) = p.split_first().ok_or(FRAME_SIZE_ERROR)?;
        pad = usize::from(n);
        p = rest;
    }
    if h.kind == HEADERS && h.has(PRIORITY_FLAG) {
        p = p.get(5..).ok_or(FRAME_SIZE_ERROR)?;
    }
    p.len()
        .checked_sub(pad)
        .map(|n| &p[..n])
        .ok_or(PROTOCOL_ERROR)
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
mod tests {
    use super::*;

    fn head_of(kind: u8, flags: u8, stream: u32, len: usize) -> Head {
        Head {
            len,
            kind,
            flags,
            stream,
        }
    }

    #[test]
    fn a_flag_bit_is_read_by_the_kind_it_belongs_to() {
        // 0x1 is END_STREAM on DATA and ACK on PING: neither reads as the other.
        let data = head_of(DATA, 0x1, 1, 0);
        assert!(data.end_stream() && !data.ack());
        let ping = head_of(PING, 0x1, 0, 8);
        assert!(ping.ack() && !ping.end_stream());
        assert!(!head_of(DATA, END_HEADERS, 1, 0).end_headers());
        assert!(head_of(CONTINUATION, END_HEADERS, 1, 0).end_headers());
        assert_eq!(Kind::of(0x2a), Kind::Unknown(0x2a));
        assert_eq!(Kind::of(GOAWAY), Kind::Goaway);
    }

    #[test]
    fn each_control_frame_names_its_fault() {
        let rst = head_of(RST_STREAM, 0, 3, 4);
        assert_eq!(
            RstStream::decode(&rst, &[0, 0, 0, 7]),
            Ok(RstStream {
                code: REFUSED_STREAM
            })
        );
        assert_eq!(
            RstStream::decode(&head_of(RST_STREAM, 0, 0, 4), &[0; 4]),
            Err(PROTOCOL_ERROR)
        );
        assert_eq!(RstStream::decode(&rst, &[0; 5]), Err(FRAME_SIZE_ERROR));
        let ping = head_of(PING, ACK, 0, 8);
        assert_eq!(Ping::decode(&ping, b"12345678").map(|p| p.ack), Ok(true));
        assert_eq!(Ping::decode(&ping, b"1234567"), Err(FRAME_SIZE_ERROR));
        assert_eq!(
            Ping::decode(&head_of(PING, 0, 1, 8), b"12345678"),
            Err(PROTOCOL_ERROR)
        );
        let g = Goaway::decode(
            &head_of(GOAWAY, 0, 0, 9),
            &[0x80, 0, 0, 5, 0, 0, 0, 0xb, 0x2a],
        );
        assert_eq!(
            g,
            Ok(Goaway {
                last: 5,
                code: ENHANCE_YOUR_CALM
            }),
            "the reserved bit is cleared and debug data ignored"
        );
        assert_eq!(
            Goaway::decode(&head_of(GOAWAY, 0, 0, 7), &[0; 7]),
            Err(FRAME_SIZE_ERROR)
        );
        assert_eq!(
            WindowUpdate::decode(&[0xff, 0xff, 0xff, 0xff]),
            Ok(WindowUpdate {
                increment: 0x7fff_ffff
            })
        );
        assert_eq!(WindowUpdate::decode(&[0; 3]), Err(FRAME_SIZE_ERROR));
        let prio = head_of(PRIORITY, 0, 1, 4);
        assert_eq!(Priority::decode(&prio, &[0; 4]), Ok(Priority::WrongLength));
        assert_eq!(
            Priority::decode(&head_of(PRIORITY, 0, 0, 5), &[0; 5]),
            Err(PROTOCOL_ERROR)
        );
    }

    fn frames(parts: &[&[u8]]) -> Vec<(Head, Vec<u8>)> {
        let mut r = Reader::default();
        let mut got = Vec::new();
        for p in parts {
            r.feed::<Oversized>(p, DEFAULT_MAX_FRAME, |h, b| {
                got.push((h, b.to_vec()));
                Ok(())
            })
            .unwrap();
        }
        got
    }

    #[test]
    fn frames_come_out_whole_however_the_bytes_were_split() {
        let mut bytes = Vec::new();
        settings(&mut bytes, &[(SETTINGS_MAX_CONCURRENT_STREAMS, 100)]);
        ping_ack(&mut bytes, b"12345678");
        window_update(&mut bytes, 3, 1000);
        let whole = frames(&[&bytes]);
        assert_eq!(whole.len(), 3);
        assert_eq!(
            (whole[0].0.kind, whole[0].1.len(), whole[1].0.flags),
            (SETTINGS, 6, ACK)
        );
        assert_eq!(
            (whole[2].0.stream, &whole[2].1[..]),
            (3, &[0, 0, 3, 232][..])
        );
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(frames(&singles), whole);
        let sevens: Vec<&[u8]> = bytes.chunks(7).collect();
        assert_eq!(frames(&sevens), whole);
    }

    #[test]
    fn an_oversized_frame_is_refused_before_its_payload_arrives() {
        let mut bytes = Vec::new();
        head(&mut bytes, DEFAULT_MAX_FRAME + 1, DATA, 0, 1);
        let mut r = Reader::default();
        let got = r.feed::<Oversized>(&bytes, DEFAULT_MAX_FRAME, |_, _| Ok(()));
        assert_eq!(got, Err(Oversized));
    }

    #[test]
    fn padding_and_priority_are_stripped() {
        let h = Head {
            len: 0,
            kind: HEADERS,
            flags: PADDED | PRIORITY_FLAG,
            stream: 1,
        };
        assert_eq!(unpadded(&h, &[2, 0, 0, 0, 0, 9, b'a', 0, 0]), Ok(&b"a"[..]));
        assert_eq!(
            unpadded(&h, &[9, 0, 0, 0, 0, 9, b'a']),
            Err(PROTOCOL_ERROR),
            "pad too long"
        );
        let d = Head {
            kind: DATA,
            flags: PADDED,
            ..h
        };
        assert_eq!(unpadded(&d, &[1, b'x', 0]), Ok(&b"x"[..]));
        assert_eq!(unpadded(&d, &[]), Err(FRAME_SIZE_ERROR), "no pad length");
        assert_eq!(
            unpadded(&h, &[0, 0, 0, 0]),
            Err(FRAME_SIZE_ERROR),
            "no priority"
        );
    }
}
