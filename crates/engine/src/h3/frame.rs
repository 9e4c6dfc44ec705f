//! HTTP/3 frames (RFC 9114 §7) and the QUIC variable-length integers they are made of
//! (RFC 9000 §16): a pull [`Reader`] that cuts a stream's bytes into frame pieces however
//! the bytes were split (a frame's payload is handed on as it arrives, never gathered
//! here, so a large DATA frame costs no memory), the decoding of the two control frames
//! a client reads (SETTINGS, GOAWAY), and the writing of ours (SETTINGS, HEADERS, DATA).
//! What a malformed frame is comes out as a typed [`FrameError`] with its HTTP/3 error
//! code; the caller decides whether the frame may come where it came.

/// Frame types (RFC 9114 §7.2).
pub const DATA: u64 = 0x0;
pub const HEADERS: u64 = 0x1;
pub const CANCEL_PUSH: u64 = 0x3;
pub const SETTINGS: u64 = 0x4;
pub const PUSH_PROMISE: u64 = 0x5;
pub const GOAWAY: u64 = 0x7;
pub const MAX_PUSH_ID: u64 = 0xd;

/// Settings (RFC 9114 §7.2.4.1, RFC 9204 §5).
pub const SETTINGS_QPACK_MAX_TABLE_CAPACITY: u64 = 0x1;
pub const SETTINGS_MAX_FIELD_SECTION_SIZE: u64 = 0x6;
pub const SETTINGS_QPACK_BLOCKED_STREAMS: u64 = 0x7;

/// Error codes (RFC 9114 §8.1, RFC 9204 §6).
pub const H3_NO_ERROR: u64 = 0x100;
pub const H3_GENERAL_PROTOCOL_ERROR: u64 = 0x101;
pub const H3_STREAM_CREATION_ERROR: u64 = 0x103;
pub const H3_CLOSED_CRITICAL_STREAM: u64 = 0x104;
pub const H3_FRAME_UNEXPECTED: u64 = 0x105;
pub const H3_FRAME_ERROR: u64 = 0x106;
pub const H3_EXCESSIVE_LOAD: u64 = 0x107;
pub const H3_ID_ERROR: u64 = 0x108;
pub const H3_SETTINGS_ERROR: u64 = 0x109;
pub const H3_MISSING_SETTINGS: u64 = 0x10a;
pub const H3_REQUEST_REJECTED: u64 = 0x10b;
pub const H3_REQUEST_CANCELLED: u64 = 0x10c;
pub const H3_MESSAGE_ERROR: u64 = 0x10e;
pub const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
pub const QPACK_ENCODER_STREAM_ERROR: u64 = 0x201;

/// The largest value a variable-length integer holds (2^62 − 1).
pub const MAX_VARINT: u64 = (1 << 62) - 1;

/// The largest SETTINGS or GOAWAY payload read: 4 KiB, room for hundreds of settings
/// (a real server sends a handful, plus a reserved one to exercise ours).
pub const MAX_CONTROL_FRAME: u64 = 4096;

/// Why a frame is not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A frame of this type where it may not come (RFC 9114 §7.2: e.g. DATA on the control
    /// stream, SETTINGS on a request stream, an HTTP/2 frame type).
    #[error("frame type {0:#x} is not allowed here")]
    Unexpected(u64),
    /// A frame whose payload does not parse as its type says (RFC 9114 §7.1).
    #[error("frame type {0:#x} is malformed")]
    Malformed(u64),
    /// A frame over the size we read of its type.
    #[error("frame type {kind:#x} of {len} bytes is over the {max} read")]
    Oversized { kind: u64, len: u64, max: u64 },
    /// SETTINGS with a setting twice or an HTTP/2 setting (RFC 9114 §7.2.4).
    #[error("SETTINGS names setting {0:#x} twice or names an HTTP/2 setting")]
    Settings(u64),
}

impl FrameError {
    /// The HTTP/3 error code that closes the connection for it.
    pub fn code(self) -> u64 {
        match self {
            FrameError::Unexpected(_) => H3_FRAME_UNEXPECTED,
            FrameError::Malformed(_) => H3_FRAME_ERROR,
            FrameError::Oversized { .. } => H3_EXCESSIVE_LOAD,
            FrameError::Settings(_) => H3_SETTINGS_ERROR,
        }
    }
}

/// Reads a variable-length integer at the start of `buf`: its value and length, `None`
/// when `buf` ends inside it.
pub fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let len = 1usize << (first >> 6);
    let bytes = buf.get(..len)?;
    let mut v = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        v = (v << 8) | u64::from(b);
    }
    Some((v, len))
}

/// Writes `v` (at most [`MAX_VARINT`]) in the shortest encoding.
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0x3f => out.push(v as u8),
        0x40..=0x3fff => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        0x4000..=0x3fff_ffff => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&((v & MAX_VARINT) | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// A frame's type and payload length at the start of `buf`, and the bytes they took;
/// `None` when `buf` ends inside them.
fn head(buf: &[u8]) -> Option<(u64, u64, usize)> {
    let (kind, a) = varint(buf)?;
    let (len, b) = varint(&buf[a..])?;
    Some((kind, len, a + b))
}

/// A piece of a frame, as the [`Reader`] cuts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A frame begins: its type and payload length.
    Begin { kind: u64, len: u64 },
    /// Some of its payload (every byte once, in order).
    Payload(&'a [u8]),
    /// Its payload is complete.
    End,
}

/// Cuts one stream's bytes into frame pieces. A frame's head (at most 16 bytes) split
/// between two reads is kept here until whole; nothing else is kept.
#[derive(Debug, Default, Clone)]
pub struct Reader {
    head: [u8; 16],
    have: usize,
    /// Payload bytes left of the frame under way, if one is.
    left: Option<u64>,
}

impl Reader {
    /// Starts over (a new stream).
    pub fn clear(&mut self) {
        self.have = 0;
        self.left = None;
    }

    /// Between frames, with no partial head kept: the stream may end here.
    pub fn at_boundary(&self) -> bool {
        self.have == 0 && self.left.is_none()
    }

    /// The next piece of `data`, which is advanced past it; `None` when `data` is spent
    /// (a partial head is kept for the next call).
    pub fn next<'a>(&mut self, data: &mut &'a [u8]) -> Option<Piece<'a>> {
        if let Some(left) = self.left {
            if left == 0 {
                self.left = None;
                return Some(Piece::End);
            }
            if data.is_empty() {
                return None;
            }
            let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
            let (payload, rest) = data.split_at(n);
            *data = rest;
            self.left = Some(left - n as u64);
            return Some(Piece::Payload(payload));
        }
        if self.have == 0 {
            if let Some((kind, len, used)) = head(data) {
                *data = &data[used..];
                self.left = Some(len);
                return Some(Piece::Begin { kind, len });
            }
        }
        // The head is split: gather it a byte at a time until it parses.
        while let Some((&b, rest)) = data.split_first() {
            self.head[self.have] = b;
            self.have += 1;
            *data = rest;
            if let Some((kind, len, _)) = head(&self.head[..self.have]) {
                self.have = 0;
                self.left = Some(len);
                return Some(Piece::Begin { kind, len });
            }
        }
        None
    }
}

/// The server's settings that matter to a client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    pub qpack_max_table_capacity: u64,
    pub qpack_blocked_streams: u64,
    /// The largest field section the server takes (unlimited when absent).
    pub max_field_section_size: Option<u64>,
}

/// Decodes a SETTINGS payload (RFC 9114 §7.2.4): pairs of variable-length integers;
/// unknown and reserved identifiers are ignored, a repeated one or an HTTP/2 one
/// (0x2 to 0x5) is an error.
pub fn settings(mut p: &[u8]) -> Result<Settings, FrameError> {
    let mut s = Settings::default();
    // The identifiers seen among those we check for repeats (the defined ones).
    let mut seen = 0u8;
    while !p.is_empty() {
        let (id, a) = varint(p).ok_or(FrameError::Malformed(SETTINGS))?;
        let (v, b) = varint(&p[a..]).ok_or(FrameError::Malformed(SETTINGS))?;
        p = &p[a + b..];
        if (0x2..=0x5).contains(&id) {
            return Err(FrameError::Settings(id));
        }
        if id <= 7 {
            let bit = 1u8 << id;
            if seen & bit != 0 {
                return Err(FrameError::Settings(id));
            }
            seen |= bit;
        }
        match id {
            SETTINGS_QPACK_MAX_TABLE_CAPACITY => s.qpack_max_table_capacity = v,
            SETTINGS_QPACK_BLOCKED_STREAMS => s.qpack_blocked_streams = v,
            SETTINGS_MAX_FIELD_SECTION_SIZE => s.max_field_section_size = Some(v),
            _ => {}
        }
    }
    Ok(s)
}

/// Decodes a GOAWAY payload (RFC 9114 §7.2.6): one variable-length integer, the first
/// request stream id the server will not process.
pub fn goaway(p: &[u8]) -> Result<u64, FrameError> {
    match varint(p) {
        Some((id, n)) if n == p.len() => Ok(id),
        _ => Err(FrameError::Malformed(GOAWAY)),
    }
}

/// Frame types an HTTP/3 stream never carries: HTTP/2's PRIORITY, PING, WINDOW_UPDATE and
/// CONTINUATION (RFC 9114 §7.2.8), an error wherever they come.
pub fn http2_only(kind: u64) -> bool {
    matches!(kind, 0x2 | 0x6 | 0x8 | 0x9)
}

/// Writes a frame's head: its type and payload length.
pub fn put_head(out: &mut Vec<u8>, kind: u64, len: usize) {
    put_varint(out, kind);
    put_varint(out, len as u64);
}

/// Our control stream's opening: the stream type (0x00) and SETTINGS saying that the
/// server may not use a dynamic QPACK table (capacity 0, no blocked streams), with the
/// largest field section we read.
pub fn control_stream(out: &mut Vec<u8>, max_field_section: u64) {
    let mut p = Vec::with_capacity(16);
    for (id, v) in [
        (SETTINGS_QPACK_MAX_TABLE_CAPACITY, 0),
        (SETTINGS_QPACK_BLOCKED_STREAMS, 0),
        (SETTINGS_MAX_FIELD_SECTION_SIZE, max_field_section),
    ] {
        put_varint(&mut p, id);
        put_varint(&mut p, v);
    }
    out.push(0x00);
    put_head(out, SETTINGS, p.len());
    out.extend_from_slice(&p);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame piece of `bytes` fed in parts of `step` bytes, payloads joined.
    fn pieces(bytes: &[u8], step: usize) -> Vec<(u64, u64, Vec<u8>)> {
        let mut r = Reader::default();
        let mut out: Vec<(u64, u64, Vec<u8>)> = Vec::new();
        for part in bytes.chunks(step) {
            let mut data = part;
            while let Some(p) = r.next(&mut data) {
                match p {
                    Piece::Begin { kind, len } => out.push((kind, len, Vec::new())),
                    Piece::Payload(b) => out.last_mut().unwrap().2.extend_from_slice(b),
                    Piece::End => {
                        let f = out.last().unwrap();
                        assert_eq!(f.1, f.2.len() as u64);
                    }
                }
            }
            assert!(data.is_empty());
        }
        assert!(r.at_boundary());
        out
    }

    #[test]
    fn varints_round_trip_in_their_shortest_form() {
        for (v, len) in [
            (0, 1),
            (63, 1),
            (64, 2),
            (16383, 2),
            (16384, 4),
            ((1 << 30) - 1, 4),
            (1 << 30, 8),
            (MAX_VARINT, 8),
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), len, "{v}");
            assert_eq!(varint(&b), Some((v, len)));
            assert_eq!(varint(&b[..len - 1]), None, "cut short");
        }
        // RFC 9000 Appendix A.1's examples.
        assert_eq!(
            varint(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]),
            Some((151_288_809_941_952_652, 8))
        );
        assert_eq!(varint(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
        assert_eq!(varint(&[0x7b, 0xbd]), Some((15_293, 2)));
        assert_eq!(
            varint(&[0x40, 0x25]),
            Some((37, 2)),
            "not the shortest form"
        );
    }

    #[test]
    fn frames_come_out_the_same_however_the_bytes_are_split() {
        let mut b = Vec::new();
        put_head(&mut b, HEADERS, 3);
        b.extend_from_slice(&[0, 0, 0xd1]);
        put_head(&mut b, 0x21, 0); // a reserved type, empty
        put_head(&mut b, DATA, 300);
        b.extend(std::iter::repeat_n(7u8, 300));
        put_varint(&mut b, 0x1f * 0x21 + 0x21); // a reserved type with a 2-byte type
        put_varint(&mut b, 70_000);
        b.extend(std::iter::repeat_n(1u8, 70_000));
        let whole = pieces(&b, b.len());
        assert_eq!(whole.len(), 4);
        assert_eq!(whole[0], (HEADERS, 3, vec![0, 0, 0xd1]));
        assert_eq!(whole[1], (0x21, 0, vec![]));
        assert_eq!((whole[2].0, whole[2].2.len()), (DATA, 300));
        assert_eq!(whole[3].2.len(), 70_000);
        for step in [1, 2, 3, 5, 7, 64, 1000] {
            assert_eq!(pieces(&b, step), whole, "in parts of {step}");
        }
        // Split at every byte in two.
        for at in 0..b.len().min(400) {
            let mut r = Reader::default();
            let mut n = 0;
            for part in [&b[..at], &b[at..]] {
                let mut d = part;
                while let Some(p) = r.next(&mut d) {
                    n += usize::from(matches!(p, Piece::Begin { .. }));
                }
            }
            assert_eq!(n, 4, "split at {at}");
        }
    }

    #[test]
    fn a_stream_cut_inside_a_frame_is_not_at_a_boundary() {
        let mut b = Vec::new();
        put_head(&mut b, DATA, 4);
        b.extend_from_slice(b"abcd");
        for at in 1..b.len() {
            let mut r = Reader::default();
            let mut d = &b[..at];
            while r.next(&mut d).is_some() {}
            assert!(!r.at_boundary(), "cut at {at}");
        }
    }

    #[test]
    fn settings_read_what_a_client_needs_and_refuse_repeats_and_http2_ids() {
        let mut p = Vec::new();
        for (id, v) in [(0x1, 4096), (0x7, 16), (0x6, 65536), (0x21, 5), (0x33, 0)] {
            put_varint(&mut p, id);
            put_varint(&mut p, v);
        }
        assert_eq!(
            settings(&p),
            Ok(Settings {
                qpack_max_table_capacity: 4096,
                qpack_blocked_streams: 16,
                max_field_section_size: Some(65536),
            })
        );
        for cut in 1..p.len() {
            // A payload cut inside a pair is malformed (unless the cut falls between pairs).
            let r = settings(&p[..cut]);
            let between = [3, 5, 10, 12].contains(&cut);
            assert_eq!(r.is_ok(), between, "cut at {cut}: {r:?}");
        }
        assert_eq!(settings(&[0x1, 0, 0x1, 0]), Err(FrameError::Settings(1)));
        assert_eq!(settings(&[0x4, 0]), Err(FrameError::Settings(4)));
        assert_eq!(settings(&[]), Ok(Settings::default()));
    }

    #[test]
    fn goaway_is_exactly_one_varint() {
        assert_eq!(goaway(&[0x40, 0x10]), Ok(16));
        assert_eq!(goaway(&[4]), Ok(4));
        assert_eq!(goaway(&[]), Err(FrameError::Malformed(GOAWAY)));
        assert_eq!(goaway(&[4, 0]), Err(FrameError::Malformed(GOAWAY)));
        assert_eq!(goaway(&[0x40]), Err(FrameError::Malformed(GOAWAY)));
    }

    #[test]
    fn our_control_stream_says_no_dynamic_table() {
        let mut b = Vec::new();
        control_stream(&mut b, 65536);
        assert_eq!(b[0], 0x00, "control stream type");
        let f = pieces(&b[1..], 1);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].0, SETTINGS);
        let s = settings(&f[0].2).unwrap();
        assert_eq!(
            (s.qpack_max_table_capacity, s.qpack_blocked_streams),
            (0, 0)
        );
        assert_eq!(s.max_field_section_size, Some(65536));
    }
}
