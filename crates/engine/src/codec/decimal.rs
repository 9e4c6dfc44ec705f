//! Decimals on the wire: a Content-Length read from an answer (HTTP/1.1's header, HTTP/2's
//! and HTTP/3's field) and the numbers written into requests (a templated body's length,
//! `{seq}` and `{rand:…}` values), without allocating.

/// A decimal field value (a Content-Length), spaces around it allowed; `None` when it is
/// not one, or over 19 digits.
pub fn parse(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

/// Appends `n` in decimal, without allocating.
pub fn put(n: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(digits(n, &mut [0u8; 20]));
}

/// `n` in decimal, written at the end of `buf`.
pub fn digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_writes_every_width() {
        for n in [0, 9, 10, 12345, u64::MAX] {
            let mut out = Vec::new();
            put(n, &mut out);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    #[test]
    fn parse_takes_digits_with_spaces_around_only() {
        assert_eq!(parse(b" 42 "), Some(42));
        assert_eq!(
            parse(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        for bad in [
            &b""[..],
            b" ",
            b"+1",
            b"1 2",
            b"0x10",
            b"12345678901234567890",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
