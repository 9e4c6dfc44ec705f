//! Target `head_differential`: the verdict of the parser on a response head against
//! `httparse` (with room for 1024 fields) and a model of RFC 9112's framing rules.
//!
//! httparse is set as the parser sets it (obs-fold accepted, RFC 9112 §5.2).
//! The input is the head bytes. Where the two legitimately differ, and how:
//! - more than `HEADER_LIMIT` fields: the parser rejects the head (Malformed);
//! - a head longer than `MAX_HEAD` that is still incomplete: the parser rejects it;
//! - 1xx other than 101 is interim: the parser consumes it, reports nothing and waits
//!   for the final response (NeedMore, status 0);
//! - 101: never final, since no request asks for an upgrade (Malformed);
//! - status 000: not final as status 0, which means no head yet;
//! - checks on top of the syntax: a `Content-Length` that is not 1*DIGIT, or two that
//!   differ, is Malformed (with `Transfer-Encoding` beside it, either verdict is fine:
//!   the length is ignored there); more than 19 digits may be rejected;
//! - framing (request not HEAD): 204, 304 and HEAD answers end with the head; the last
//!   transfer coding chunked means chunked; another transfer coding means close-delimited;
//!   else `Content-Length`; else close-delimited (then `close` is set);
//! - `close`: a `close` option in any `Connection` field, or HTTP/1.0 without `keep-alive`.
//!
//! Everything else must agree exactly: complete vs incomplete vs error, status code, and
//! the bytes consumed.

use shootout_engine::{ParseError, Progress, ResponseParser};

use crate::{list_elements, tolerated, values, Known, HEADER_LIMIT, MAX_HEAD};

/// What a head should come to, in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// The response ends with its head.
    Bodiless,
    Chunked,
    Length(u64),
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Interim: consumed, and the final response is still to come.
    Interim,
    Final {
        status: u16,
        close: bool,
        framing: Framing,
    },
    Malformed,
    /// Either Malformed or the verdict given (a legitimate choice of the parser).
    MalformedOr(Option<Framing>),
}

/// The target.
pub fn check(data: &[u8]) {
    let mut headers = vec![httparse::EMPTY_HEADER; 1024];
    let mut resp = httparse::Response::new(&mut headers);
    match syntax().parse_response(&mut resp, data) {
        Ok(httparse::Status::Complete(len)) => {
            let head = &data[..len];
            for head_request in [true, false] {
                let verdict = model(&resp, head_request);
                compare(head, len, head_request, verdict, &resp);
            }
        }
        Ok(httparse::Status::Partial) => {
            let mut p = ResponseParser::new(false, None);
            let got = p.feed(data);
            let too_many = {
                let mut few = [httparse::EMPTY_HEADER; HEADER_LIMIT];
                matches!(
                    syntax().parse_response(&mut httparse::Response::new(&mut few), data),
                    Err(httparse::Error::TooManyHeaders)
                )
            };
            if data.len() > MAX_HEAD || too_many {
                assert!(
                    got == Err(ParseError::Malformed) || got == Ok(Progress::NeedMore),
                    "{got:?}"
                );
            } else {
                assert_eq!(got, Ok(Progress::NeedMore), "httparse says incomplete");
            }
        }
        Err(e) => {
            let mut p = ResponseParser::new(false, None);
            assert_eq!(
                p.feed(data),
                Err(ParseError::Malformed),
                "httparse says {e:?}"
            );
        }
    }
}

/// httparse as the parser sets it: obs-fold in a response accepted (RFC 9112 §5.2).
fn syntax() -> httparse::ParserConfig {
    let mut config = httparse::ParserConfig::default();
    config.allow_obsolete_multiline_headers_in_responses(true);
    config
}

fn model(resp: &httparse::Response<'_, '_>, head_request: bool) -> Verdict {
    if resp.headers.len() > HEADER_LIMIT {
        return Verdict::Malformed;
    }
    let code = resp.code.expect("a complete head has a code");
    let http10 = resp.version == Some(0);
    // Content-Length: every field line 1*DIGIT, all equal.
    let mut length = None;
    let mut bad_length = false;
    let mut maybe_bad_length = false;
    for v in values(resp.headers, "content-length") {
        let v = v.trim_ascii();
        if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
            bad_length = true;
            continue;
        }
        if v.len() > 19 {
            maybe_bad_length = true;
            continue;
        }
        let n = v.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        if length.is_some_and(|l| l != n) {
            bad_length = true;
        }
        length = Some(n);
    }
    let codings = list_elements(resp.headers, "transfer-encoding");
    let has_te = !codings.is_empty();
    if bad_length && !has_te {
        return Verdict::Malformed;
    }
    let connection = list_elements(resp.headers, "connection");
    let close_option = connection.iter().any(|t| t.eq_ignore_ascii_case(b"close"));
    let keep_alive = connection
        .iter()
        .any(|t| t.eq_ignore_ascii_case(b"keep-alive"));
    let mut close = close_option || (http10 && !keep_alive);
    if code < 100 {
        // Not a status code (RFC 9110 §15).
        return Verdict::Malformed;
    }
    if (100..200).contains(&code) && code != 101 {
        return if bad_length || maybe_bad_length {
            Verdict::MalformedOr(None)
        } else {
            Verdict::Interim
        };
    }
    if code == 101 {
        return Verdict::Malformed;
    }
    let framing = if head_request || code == 204 || code == 304 {
        Framing::Bodiless
    } else if has_te {
        if codings.last().unwrap().eq_ignore_ascii_case(b"chunked") {
            Framing::Chunked
        } else {
            Framing::UntilClose
        }
    } else if let Some(n) = length {
        if n == 0 {
            Framing::Bodiless
        } else {
            Framing::Length(n)
        }
    } else if maybe_bad_length {
        return Verdict::MalformedOr(None);
    } else {
        Framing::UntilClose
    };
    if framing == Framing::UntilClose {
        close = true;
    }
    if bad_length || maybe_bad_length {
        return Verdict::MalformedOr(Some(framing));
    }
    Verdict::Final {
        status: code,
        close,
        framing,
    }
}

fn compare(
    head: &[u8],
    len: usize,
    head_request: bool,
    verdict: Verdict,
    resp: &httparse::Response<'_, '_>,
) {
    let mut p = ResponseParser::new(head_request, None);
    let got = p.feed(head);
    let ctx = || {
        format!(
            "head_request={head_request} head={:?}",
            String::from_utf8_lossy(head)
        )
    };
    let code = resp.code.unwrap_or(0);
    match verdict {
        Verdict::Malformed => {
            if got != Err(ParseError::Malformed) {
                if code == 101 && tolerated(Known::Unasked101) {
                    return;
                }
                panic!("expected Malformed, got {got:?}; {}", ctx());
            }
        }
        Verdict::MalformedOr(_) if got == Err(ParseError::Malformed) => {}
        Verdict::MalformedOr(None) => {
            assert_eq!(got, Ok(Progress::NeedMore), "{}", ctx());
        }
        Verdict::Interim => {
            assert_eq!(got, Ok(Progress::NeedMore), "interim; {}", ctx());
            assert_eq!(p.status, 0, "interim status kept; {}", ctx());
            assert_eq!(p.head_len, len as u64, "{}", ctx());
        }
        Verdict::MalformedOr(Some(framing)) => {
            check_final(&mut p, got, len, code, None, framing, resp, &ctx);
        }
        Verdict::Final {
            status,
            close,
            framing,
        } => {
            check_final(&mut p, got, len, status, Some(close), framing, resp, &ctx);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_final(
    p: &mut ResponseParser,
    got: Result<Progress, ParseError>,
    len: usize,
    status: u16,
    close: Option<bool>,
    framing: Framing,
    resp: &httparse::Response<'_, '_>,
    ctx: &dyn Fn() -> String,
) {
    let http10_te =
        resp.version == Some(0) && !list_elements(resp.headers, "transfer-encoding").is_empty();
    let te_with_length = framing == Framing::UntilClose
        && !list_elements(resp.headers, "transfer-encoding").is_empty()
        && values(resp.headers, "content-length").next().is_some();
    if te_with_length && tolerated(Known::TeNotChunkedUsesLength) {
        return;
    }
    if status == 0 {
        if tolerated(Known::StatusZero) {
            return;
        }
        panic!("status 000 final, reported as 0 (no head yet); {}", ctx());
    }
    let te_empty = values(resp.headers, "transfer-encoding")
        .any(|v| v.split(|&b| b == b',').any(|t| t.trim_ascii().is_empty()));
    if te_empty && tolerated(Known::TeEmptyElement) {
        return;
    }
    match framing {
        Framing::Bodiless => {
            assert_eq!(
                got,
                Ok(Progress::Done { consumed: len }),
                "bodiless; {}",
                ctx()
            );
        }
        Framing::Chunked | Framing::Length(_) | Framing::UntilClose => {
            assert_eq!(got, Ok(Progress::NeedMore), "{framing:?}; {}", ctx());
        }
    }
    assert_eq!(p.status, status, "{}", ctx());
    assert_eq!(p.head_len, len as u64, "{}", ctx());
    if let Some(close) = close {
        if p.close != close && !http10_te {
            let overridden = close
                && list_elements(resp.headers, "connection")
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(b"keep-alive"));
            if !(overridden && tolerated(Known::ConnectionCloseOverridden)) {
                panic!("close is {}, expected {close}; {}", p.close, ctx());
            }
        }
    }
    // The framing shows in what completes the response.
    match framing {
        Framing::Bodiless => {}
        Framing::UntilClose => {
            assert!(p.close, "close-delimited but not closing; {}", ctx());
            assert_eq!(p.feed(b"abc"), Ok(Progress::NeedMore), "{}", ctx());
            assert_eq!(p.eof(), Ok(()), "close-delimited; {}", ctx());
            assert_eq!(p.body_len, 3, "{}", ctx());
        }
        Framing::Chunked => {
            let end = b"1\r\nx\r\n0\r\n\r\nHTTP";
            assert_eq!(
                p.feed(end),
                Ok(Progress::Done {
                    consumed: end.len() - 4
                }),
                "chunked; {}",
                ctx()
            );
            assert_eq!(p.body_len, 1, "{}", ctx());
        }
        Framing::Length(n) => {
            if n <= 1 << 16 {
                let mut body = vec![b'x'; n as usize + 4];
                body[n as usize..].copy_from_slice(b"HTTP");
                assert_eq!(
                    p.feed(&body),
                    Ok(Progress::Done {
                        consumed: n as usize
                    }),
                    "length {n}; {}",
                    ctx()
                );
                assert_eq!(p.body_len, n, "{}", ctx());
            } else {
                assert_eq!(p.feed(b"xyz"), Ok(Progress::NeedMore), "{}", ctx());
                assert_eq!(p.eof(), Err(ParseError::Closed), "{}", ctx());
            }
        }
    }
}
