//! Target `journey_answer`: the template and capture path of a journey at run time
//! (`shootout_engine::journey::User`), fed a server's answers. The input is a sequence of
//! answers separated by `\0\0`: each a status byte, then head fields (`name:value` lines
//! split at `\n`, any bytes) up to a blank line, then the body. The journey captures from
//! a header, a cookie, a JSON pointer and a regex, and draws the captured values into a
//! path, headers, a form, a JSON body and an expectation.
//!
//! Invariants: no panic; every request the user renders has a target that starts with `/`
//! and holds no control byte, space or non-ASCII byte (drawn values are percent-encoded),
//! and header values without CR, LF or NUL (a value holding one fails its step unsent);
//! the jar never holds more than 50 cookies; the heap grows by at most a bound of the
//! input's length (captures read at most their stated prefix).

use crate::alloc;
use shootout_engine::journey::{Answer, Event, Next, Setup, User};
use shootout_model::journey::{parse, JourneyFile};
use std::sync::OnceLock;
use std::time::Duration;

const JOURNEY: &str = r#"
[[journey]]
name = "fuzz"
[[journey.step]]
name = "a"
get = "/a?n={seq}"
on_failure = "go on"
capture = { h = { header = "X-Token" }, c = { cookie = "sid" }, j = { json = "/t", within = 256 }, r = { regex = "id=([^&]*)", within = 64 } }
[[journey.step]]
name = "b"
post = "/b/{h}/{j}"
on_failure = "go on"
headers = { X-H = "{h}", X-C = "x{c}" }
form = { r = "{r}", t = "{rand_text:8}" }
expect = { body_contains = "{r}", json = { "/ok" = true } }
capture = { loc = { header = "Location", regex = "^(.*)$" } }
[[journey.step]]
name = "c"
put = "{loc}"
on_failure = "go on"
json = { a = "{j}", b = ["{c}", 1] }
"#;

fn journey() -> &'static JourneyFile {
    static FILE: OnceLock<JourneyFile> = OnceLock::new();
    FILE.get_or_init(|| parse(JOURNEY, "fuzz.toml", &mut |_| Err("none".into())).unwrap())
}

/// The target (see the module).
pub fn check(data: &[u8]) {
    let file = journey();
    let ((), grew) = alloc::peak_growth(|| drive(file, data));
    // The regexes' lazy DFA caches grow once, up to about 2 MiB each (regex's default).
    let bound = (8 << 20) + 16 * data.len();
    assert!(
        grew <= bound,
        "grew the heap by {grew} bytes for {} bytes of answers",
        data.len()
    );
}

fn drive(file: &JourneyFile, data: &[u8]) {
    let mut user = User::new(
        file,
        Setup {
            seed: 1,
            user: 0,
            seq_step: 1,
            host: "fuzz.test".into(),
            tls: false,
            unix_start: 1_700_000_000,
            single: false,
        },
    );
    let mut sink = |_: Event| {};
    let mut next = user.start(Duration::ZERO, &mut sink);
    let mut now = Duration::ZERO;
    let mut answers = answers(data);
    let mut fields: Vec<(&[u8], &[u8])> = Vec::new();
    for _ in 0..64 {
        now += Duration::from_millis(10);
        match next {
            Next::Send { .. } => {
                sent_safely(&user);
                let Some(a) = answers.next() else { return };
                let status = 100 + a.first().map_or(100, |&b| b as u16 * 2);
                let rest = a.get(1..).unwrap_or(&[]);
                let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
                    Some(i) => (&rest[..i], &rest[i + 2..]),
                    None => (rest, &[][..]),
                };
                fields.clear();
                for line in head.split(|&b| b == b'\n') {
                    let colon = line.iter().position(|&b| b == b':').unwrap_or(line.len());
                    let value = line.get(colon + 1..).unwrap_or(&[]);
                    fields.push((&line[..colon], value));
                }
                let answer = Answer {
                    status,
                    head: fields.as_slice(),
                    body: &body[..body.len().min(user.prefix())],
                    body_len: body.len() as u64,
                    contains: None,
                };
                next = user.answer(&answer, now, &mut sink);
            }
            Next::Start { due } => next = user.start(due.max(now), &mut sink),
            Next::Done => return,
        }
        assert!(user.jar().len() <= shootout_engine::journey::cookies::MAX_COOKIES);
    }
}

/// The input's answers, split at each `\0\0`.
fn answers(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(2).position(|w| w == b"\0\0") {
            Some(i) => {
                rest = Some(&r[i + 2..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

fn sent_safely(user: &User) {
    let r = user.request();
    assert_eq!(
        r.target.first(),
        Some(&b'/'),
        "{:?}",
        String::from_utf8_lossy(r.target)
    );
    assert!(
        r.target.iter().all(|&b| b > b' ' && b < 0x7f),
        "a control, space or non-ASCII byte in the target {:?}",
        String::from_utf8_lossy(r.target)
    );
    for (n, v) in r.headers() {
        assert!(!n.is_empty());
        assert!(
            !v.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0),
            "CR, LF or NUL in header {:?}: {:?}",
            String::from_utf8_lossy(n),
            String::from_utf8_lossy(v)
        );
    }
}
