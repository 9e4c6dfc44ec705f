//! Whether a message's bytes decode as a protobuf message type ([`check`]), read the way
//! a protobuf decoder reads them (prost's, which prost-reflect's `DynamicMessage` uses)
//! without building the message: every field's key and value well formed, a known
//! field's wire type one its type allows (a repeated number packed or not), its string
//! UTF-8, its message (or group, or map entry) decoding in turn as its own type, unknown
//! fields skipped. Nothing is allocated; nesting past [`MAX_DEPTH`] is refused, as
//! prost refuses it.
//!
//! A parser of a server's bytes: every length is checked against what is left before it
//! is used.

use prost_reflect::{Kind, MessageDescriptor};

/// The deepest nesting of messages and groups accepted (prost's recursion limit).
pub const MAX_DEPTH: u32 = 100;

/// Wire types (protobuf encoding).
const VARINT: u64 = 0;
const I64: u64 = 1;
const LEN: u64 = 2;
const SGROUP: u64 = 3;
const EGROUP: u64 = 4;
const I32: u64 = 5;

/// Whether `bytes` decode as a message of type `desc`.
pub fn check(desc: &MessageDescriptor, mut bytes: &[u8]) -> bool {
    fields(Some(desc), &mut bytes, 0, None)
}

/// Reads fields of `desc` (`None`: an unknown group's, all skipped) until the bytes end
/// or, inside a group, until the group's end (`group`: its field number).
fn fields(desc: Option<&MessageDescriptor>, b: &mut &[u8], depth: u32, group: Option<u32>) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    while !b.is_empty() {
        let Some(key) = varint(b) else { return false };
        let (number, wt) = (key >> 3, key & 7);
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return false;
        }
        let number = number as u32;
        if wt == EGROUP {
            return group == Some(number);
        }
        let field = desc.and_then(|d| d.get_field(number));
        let ok = match field {
            None => skip(wt, b, depth, number),
            Some(f) => value(&f.kind(), f.is_list(), f.is_group(), wt, b, depth, number),
        };
        if !ok {
            return false;
        }
    }
    group.is_none()
}

/// A known field's value of wire type `wt`.
fn value(
    kind: &Kind,
    list: bool,
    is_group: bool,
    wt: u64,
    b: &mut &[u8],
    depth: u32,
    number: u32,
) -> bool {
    let scalar = match kind {
        Kind::Message(m) if is_group => {
            return wt == SGROUP && fields(Some(m), b, depth + 1, Some(number));
        }
        Kind::Message(m) => {
            return wt == LEN
                && take_len(b)
                    .is_some_and(|mut inner| fields(Some(m), &mut inner, depth + 1, None));
        }
        Kind::String => {
            return wt == LEN && take_len(b).is_some_and(|s| std::str::from_utf8(s).is_ok());
        }
        Kind::Bytes => return wt == LEN && take_len(b).is_some(),
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => I64,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => I32,
        _ => VARINT,
    };
    if wt == scalar {
        return skip(wt, b, depth, number);
    }
    // A repeated number may come packed: its values back to back in one length.
    if wt == LEN && list {
        let Some(mut packed) = take_len(b) else {
            return false;
        };
        while !packed.is_empty() {
            if !skip(scalar, &mut packed, depth, number) {
                return false;
            }
        }
        return true;
    }
    false
}

/// Skips a value of wire type `wt` (a group to its end).
fn skip(wt: u64, b: &mut &[u8], depth: u32, number: u32) -> bool {
    match wt {
        VARINT => varint(b).is_some(),
        I64 => take(b, 8).is_some(),
        I32 => take(b, 4).is_some(),
        LEN => take_len(b).is_some(),
        SGROUP => fields(None, b, depth + 1, Some(number)),
        _ => false,
    }
}

/// A varint of at most 10 bytes that fits in 64 bits.
fn varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let (&byte, rest) = b.split_first()?;
        *b = rest;
        if i == 9 && byte > 1 {
            return None;
        }
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// The next `n` bytes.
fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if b.len() < n {
        return None;
    }
    let (head, rest) = b.split_at(n);
    *b = rest;
    Some(head)
}

/// A length-delimited value: a varint length, then that many bytes.
fn take_len<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = varint(b)?;
    take(b, usize::try_from(n).ok()?)
}
