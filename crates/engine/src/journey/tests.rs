//! The user state machine driven as a connection would: answers in, requests out, with
//! exact outcomes.

use super::*;
use shootout_model::journey::{parse, JourneyFile};
use shootout_model::FailureKind;
use std::time::Duration;

const USERS: &str = "user_name,password\nann,s3cret\nbob,hunter2\n";

fn file(text: &str) -> JourneyFile {
    parse(text, "j.toml", &mut |_| Ok(USERS.as_bytes().to_vec())).unwrap()
}

fn setup(user: u64) -> Setup {
    Setup {
        seed: 1,
        user,
        seq_step: 100,
        host: "app.test".into(),
        tls: false,
        unix_start: 1_577_836_800,
        single: false,
    }
}

fn h1(u: &User) -> String {
    let mut out = Vec::new();
    u.request().write_h1(b"app.test", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn answer<'a>(status: u16, head: &'a [(&'a [u8], &'a [u8])], body: &'a [u8]) -> Answer<'a> {
    Answer {
        status,
        head,
        body,
        body_len: body.len() as u64,
        contains: None,
    }
}

const S: Duration = Duration::from_secs(1);

const WRITER: &str = r#"
[[journey]]
name = "writer"
data = "users.csv"
think = "1s"
[[journey.step]]
name = "login"
post = "/login"
form = { user = "{user_name}", password = "{password}" }
capture = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[journey.step]]
name = "post"
post = "/"
form = { content = "{rand_text:20}", csrf = "{csrf}" }
headers = { X-Csrf = "{csrf}" }
expect = { status = 302 }
capture = { paste = { header = "Location", regex = "/content/(\\w+)" } }
[[journey.step]]
name = "read back"
get = "/content/{paste}"
expect = { status = 200, body_contains = "{rand_text}" }
"#;

#[test]
fn a_writer_logs_in_posts_and_reads_back_with_cookie_and_captures() {
    let f = file(WRITER);
    let mut u = User::new(&f, setup(1));
    let mut events = Vec::new();
    let mut sink = |e: Event| events.push(e);
    // The first step is due at once; user 1 takes row 1 (bob).
    assert_eq!(
        u.start(Duration::ZERO, &mut sink),
        Next::Send {
            due: Duration::ZERO
        }
    );
    assert_eq!(
        h1(&u),
        "POST /login HTTP/1.1\r\nHost: app.test\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 25\r\n\r\npassword=hunter2&user=bob"
    );
    let head: [(&[u8], &[u8]); 1] = [(b"Set-Cookie", b"sid=abc; Path=/; HttpOnly")];
    let page = b"<form><input name=\"csrf\" value=\"tok+1/\"></form>";
    // The answer at 0.5 s: the next step is due a think time (1 s) later.
    let next = u.answer(&answer(200, &head, page), S / 2, &mut sink);
    assert_eq!(next, Next::Send { due: S * 3 / 2 });
    let req = h1(&u);
    assert!(req.starts_with("POST / HTTP/1.1\r\n"), "{req}");
    assert!(req.contains("\r\nX-Csrf: tok+1/\r\n"), "{req}");
    assert!(req.contains("\r\nCookie: sid=abc\r\n"), "{req}");
    let body = u.request().body.to_vec();
    let text = std::str::from_utf8(&body).unwrap();
    // Form fields in key order; the captured value form-encoded.
    let content = text.strip_prefix("content=").unwrap();
    let (drawn, csrf) = content.split_once('&').unwrap();
    assert_eq!(drawn.len(), 20);
    assert_eq!(csrf, "csrf=tok%2B1%2F");
    let head: [(&[u8], &[u8]); 1] = [(b"location", b"http://app.test/content/Xy9")];
    assert_eq!(
        u.answer(&answer(302, &head, b""), S * 2, &mut sink),
        Next::Send { due: S * 3 }
    );
    assert!(h1(&u).starts_with("GET /content/Xy9 HTTP/1.1\r\n"));
    assert_eq!(u.needle(), Some(drawn.as_bytes()));
    let page = format!("<pre>{drawn}</pre>");
    assert_eq!(
        u.answer(&answer(200, &[], page.as_bytes()), S * 4, &mut sink),
        Next::Start { due: S * 5 }
    );
    let ok = |step| Event::Step {
        journey: 0,
        step,
        outcome: Ok(()),
    };
    assert_eq!(
        events,
        [
            ok(0),
            ok(1),
            ok(2),
            Event::Journey {
                journey: 0,
                ok: true,
                failure: None,
                started: Duration::ZERO,
                ended: S * 4,
                // Two think times of 1 s, each from an answer to the next step's due
                // time (0.5 s → 1.5 s, 2 s → 3 s): busy 2 s of the 4.
                thought: S * 2,
            }
        ]
    );
}

#[test]
fn a_failed_step_ends_the_journey_unless_it_goes_on() {
    let f = file(WRITER);
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    let mut sink = |e: Event| events.push(e);
    u.start(Duration::ZERO, &mut sink);
    // A login page without the token: the capture fails, the journey ends.
    assert_eq!(
        u.answer(&answer(200, &[], b"no form"), S, &mut sink),
        Next::Start { due: S * 2 }
    );
    assert_eq!(
        events[0],
        Event::Step {
            journey: 0,
            step: 0,
            outcome: Err(StepFailure::Capture(0))
        }
    );
    assert!(matches!(
        events[1],
        Event::Journey {
            ok: false,
            failure: Some(StepFailure::Capture(0)),
            ..
        }
    ));
    assert_eq!(events.len(), 2);

    let text = WRITER.replace(
        "name = \"login\"",
        "name = \"login\"\non_failure = \"go on\"",
    );
    let f = file(&text);
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    let mut sink = |e: Event| events.push(e);
    u.start(Duration::ZERO, &mut sink);
    u.answer(&answer(500, &[], b""), S, &mut sink);
    // It goes on to "post", which needs {csrf}: never captured, so it fails unsent.
    assert_eq!(
        events[0],
        Event::Step {
            journey: 0,
            step: 0,
            outcome: Err(StepFailure::Status(500))
        }
    );
    assert_eq!(
        events[1],
        Event::Step {
            journey: 0,
            step: 1,
            outcome: Err(StepFailure::Unset(2))
        }
    );
    // The journey is counted under its first failed step's failure, not a later one's.
    assert!(matches!(
        events[2],
        Event::Journey {
            ok: false,
            failure: Some(StepFailure::Status(500)),
            ..
        }
    ));
}

#[test]
fn transport_failures_are_counted_under_their_class() {
    let f = file(WRITER);
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    let mut sink = |e: Event| events.push(e);
    u.start(Duration::ZERO, &mut sink);
    assert_eq!(
        u.fail(FailureKind::Timeout, S, &mut sink),
        Next::Start { due: S * 2 }
    );
    let Event::Step {
        outcome: Err(f), ..
    } = events[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!(f, StepFailure::Transport(FailureKind::Timeout));
    assert_eq!(f.kind(), Some(FailureKind::Timeout));
}

const TOKEN: &str = r#"
[[journey]]
name = "api"
[[journey.step]]
name = "token"
get = "/token"
capture = { t = { json = "/token" } }
[[journey.step]]
name = "use"
get = "/items/{t}"
headers = { Authorization = "Bearer {t}" }
"#;

#[test]
fn a_captured_crlf_never_reaches_a_header_and_is_encoded_in_a_path() {
    let f = file(TOKEN);
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    let mut sink = |e: Event| events.push(e);
    u.start(Duration::ZERO, &mut sink);
    let body = br#"{"token": "a\r\nX-Evil: 1"}"#;
    let next = u.answer(&answer(200, &[], body), S, &mut sink);
    assert_eq!(next, Next::Start { due: S });
    assert_eq!(
        events[1],
        Event::Step {
            journey: 0,
            step: 1,
            outcome: Err(StepFailure::Unsafe(0))
        }
    );
    assert_eq!(StepFailure::Unsafe(0).kind(), None);

    // In the path alone it is percent-encoded and sent.
    let f = file(&TOKEN.replace("headers = { Authorization = \"Bearer {t}\" }\n", ""));
    let mut u = User::new(&f, setup(0));
    u.start(Duration::ZERO, &mut |_| {});
    u.answer(&answer(200, &[], body), S, &mut |_| {});
    assert!(h1(&u).starts_with("GET /items/a%0D%0AX-Evil:%201 HTTP/1.1\r\n"));
}

#[test]
fn captures_read_no_further_than_their_prefix() {
    let text = r#"
[[journey]]
name = "big"
[[journey.step]]
name = "page"
get = "/"
capture = { t = { regex = "token=(\\d+)", within = 1024 } }
[[journey.step]]
name = "next"
get = "/{t}"
"#;
    let f = file(text);
    assert_eq!(f.journeys[0].prefix(0), 1024);
    // A 1 GiB answer whose token lies past the first KiB: not found, and the machine is
    // handed (and reads) only the prefix it asked for.
    let mut body = vec![b'x'; 2048];
    body[1500..1510].copy_from_slice(b"token=1234");
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    u.start(Duration::ZERO, &mut |e| events.push(e));
    let a: Answer = Answer {
        status: 200,
        head: &[],
        body: &body,
        body_len: 1 << 30,
        contains: None,
    };
    u.answer(&a, S, &mut |e| events.push(e));
    assert_eq!(
        events[0],
        Event::Step {
            journey: 0,
            step: 0,
            outcome: Err(StepFailure::Capture(0))
        }
    );
    // Within the prefix it is found.
    body[100..110].copy_from_slice(b"token=5678");
    let mut u = User::new(&f, setup(0));
    u.start(Duration::ZERO, &mut |_| {});
    let a: Answer = Answer {
        status: 200,
        head: &[],
        body: &body,
        body_len: 1 << 30,
        contains: None,
    };
    u.answer(&a, S, &mut |_| {});
    assert!(h1(&u).starts_with("GET /5678 "));
}

#[test]
fn json_expectations_and_lengths() {
    let text = r#"
[[journey]]
name = "j"
[[journey.step]]
name = "a"
get = "/"
on_failure = "go on"
expect = { json = { "/ok" = true, "/n" = 3 } }
[[journey.step]]
name = "b"
get = "/b"
expect = { length = 2 }
"#;
    let f = file(text);
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    u.start(Duration::ZERO, &mut |e| events.push(e));
    u.answer(&answer(200, &[], br#"{"ok":true,"n":4}"#), S, &mut |e| {
        events.push(e)
    });
    u.answer(&answer(200, &[], b"abc"), S, &mut |e| events.push(e));
    let outcomes: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Step { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            Err(StepFailure::Json(0)),
            Err(StepFailure::Length {
                expected: 2,
                got: 3
            })
        ]
    );
    // Keys are read in order: "/n" before "/ok".
    let mut u = User::new(&f, setup(0));
    let mut events = Vec::new();
    u.start(Duration::ZERO, &mut |e| events.push(e));
    u.answer(&answer(200, &[], br#"{"ok":true,"n":3}"#), S, &mut |e| {
        events.push(e)
    });
    u.answer(&answer(200, &[], b"ab"), S, &mut |e| events.push(e));
    assert!(matches!(events[2], Event::Journey { ok: true, .. }));
}

/// A string expectation that holds placeholders is drawn as the request is made: the
/// captured token must come back under "/token", the user's own name under "/user", and a
/// literal string with escaped braces is compared as its text.
#[test]
fn json_expectations_with_placeholders_are_drawn() {
    let text = r#"
[[journey]]
name = "j"
[[journey.step]]
name = "login"
get = "/login"
capture = { token = { json = "/token" } }
[[journey.step]]
name = "me"
get = "/me"
on_failure = "go on"
expect = { json = { "/token" = "{token}", "/user" = "u{user}", "/lit" = "{{x}}" } }
"#;
    let f = file(text);
    let outcome = |me: &[u8]| {
        let mut u = User::new(&f, setup(7));
        let mut events = Vec::new();
        u.start(Duration::ZERO, &mut |e| events.push(e));
        u.answer(&answer(200, &[], br#"{"token":"t-42"}"#), S, &mut |e| {
            events.push(e)
        });
        u.answer(&answer(200, &[], me), S, &mut |e| events.push(e));
        events
            .iter()
            .filter_map(|e| match e {
                Event::Step {
                    step: 1, outcome, ..
                } => Some(*outcome),
                _ => None,
            })
            .next()
            .expect("step 'me' ran")
    };
    assert_eq!(
        outcome(br#"{"lit":"{x}","token":"t-42","user":"u7"}"#),
        Ok(())
    );
    // Pointers are read in key order: "/lit", "/token", "/user".
    assert_eq!(
        outcome(br#"{"lit":"{x}","token":"t-43","user":"u7"}"#),
        Err(StepFailure::Json(1))
    );
    assert_eq!(
        outcome(br#"{"lit":"{x}","token":"t-42","user":"u8"}"#),
        Err(StepFailure::Json(2))
    );
    assert_eq!(
        outcome(br#"{"lit":"{{x}}","token":"t-42","user":"u7"}"#),
        Err(StepFailure::Json(0))
    );
    // A number where the drawn string is expected is not it.
    assert_eq!(
        outcome(br#"{"lit":"{x}","token":"t-42","user":7}"#),
        Err(StepFailure::Json(2))
    );
}

#[test]
fn repeat_once_and_think_times() {
    let text = r#"
[[journey]]
name = "j"
think = "pacing(10s)"
[[journey.step]]
name = "login"
post = "/login"
once = true
[[journey.step]]
name = "poll"
get = "/poll?n={seq}"
repeat = 3
"#;
    let f = file(text);
    let mut u = User::new(&f, setup(2));
    let mut events = Vec::new();
    let mut sink = |e: Event| events.push(e);
    let mut sent = Vec::new();
    let mut next = u.start(Duration::ZERO, &mut sink);
    // Answers take 1 s each; pacing starts a step every 10 s after the last one's due.
    for _ in 0..8 {
        match next {
            Next::Send { due } => {
                sent.push((
                    due.as_secs(),
                    String::from_utf8_lossy(u.request().target).into_owned(),
                ));
                next = u.answer(&answer(200, &[], b""), due + S, &mut sink);
            }
            Next::Start { due } => {
                next = u.start(due, &mut sink);
            }
            Next::Done => break,
        }
    }
    // The login once, then three polls per journey; {seq} runs 2, 102, 202, ….
    assert_eq!(
        sent,
        [
            (0, "/login".to_string()),
            (10, "/poll?n=102".to_string()),
            (20, "/poll?n=202".to_string()),
            (30, "/poll?n=302".to_string()),
            (40, "/poll?n=402".to_string()),
            (50, "/poll?n=502".to_string()),
            (60, "/poll?n=602".to_string()),
        ]
    );
}

#[test]
fn weights_share_journeys_and_steps() {
    let text = r#"
[[journey]]
name = "a"
weight = 3
[[journey.step]]
name = "x"
get = "/x"
weight = 1
[[journey.step]]
name = "y"
get = "/y"
weight = 4
[[journey]]
name = "b"
weight = 1
[[journey.step]]
get = "/b"
"#;
    let f = file(text);
    let mut u = User::new(&f, setup(0));
    let mut counts = std::collections::BTreeMap::new();
    let mut next = u.start(Duration::ZERO, &mut |_| {});
    let mut steps = 0;
    while steps < 20_000 {
        match next {
            Next::Send { .. } => {
                *counts
                    .entry(String::from_utf8_lossy(u.request().target).into_owned())
                    .or_insert(0u32) += 1;
                steps += 1;
                next = u.answer(&answer(200, &[], b""), Duration::ZERO, &mut |_| {});
            }
            Next::Start { due } => next = u.start(due, &mut |_| {}),
            Next::Done => unreachable!(),
        }
    }
    // Expected shares: b 1/4, x 3/4 × 1/5 = 3/20, y 3/4 × 4/5 = 12/20 of 20,000 steps;
    // each within 5 binomial standard deviations (at most 5 × 69).
    let near = |k: &str, p: f64| {
        let got = counts[k] as f64;
        let sd = (20_000.0 * p * (1.0 - p)).sqrt();
        assert!(
            (got - 20_000.0 * p).abs() < 5.0 * sd,
            "{k}: {got} {counts:?}"
        );
    };
    near("/b", 0.25);
    near("/x", 0.15);
    near("/y", 0.60);
}

#[test]
fn data_rows_wrap_or_stop() {
    let text = "[[journey]]\nname = \"j\"\ndata = \"users.csv\"\n[[journey.step]]\nget = \"/{user_name}\"\n";
    let f = file(text);
    let mut u = User::new(&f, setup(3));
    u.start(Duration::ZERO, &mut |_| {});
    assert!(h1(&u).starts_with("GET /bob "));
    let f = file(&text.replace(
        "data = \"users.csv\"",
        "data = \"users.csv\"\ndata_end = \"stop\"",
    ));
    let mut u = User::new(&f, setup(1));
    assert!(matches!(
        u.start(Duration::ZERO, &mut |_| {}),
        Next::Send { .. }
    ));
    let mut u = User::new(&f, setup(2));
    assert_eq!(u.start(Duration::ZERO, &mut |_| {}), Next::Done);
}

#[test]
fn a_single_journey_user_is_done_after_it() {
    let f = file(TOKEN);
    let mut s = setup(0);
    s.single = true;
    let mut u = User::new(&f, s);
    u.start(Duration::ZERO, &mut |_| {});
    u.answer(&answer(200, &[], br#"{"token":"t"}"#), S, &mut |_| {});
    assert!(h1(&u).contains("Authorization: Bearer t\r\n"));
    assert_eq!(u.answer(&answer(200, &[], b""), S, &mut |_| {}), Next::Done);
    assert_eq!(u.pending(), None);
}

#[test]
fn a_task_runs_its_steps_and_once_captures_last_the_users_life() {
    let text = r#"
[[journey]]
name = "locust"
[[journey.step]]
name = "login"
post = "/login"
once = true
capture = { token = { json = "/token" } }
[[journey.step]]
name = "list"
get = "/items?t={token}"
task = "browse"
capture = { id = { json = "/0" } }
[[journey.step]]
name = "item"
get = "/item/{id}?t={token}"
task = "browse"
"#;
    let f = file(text);
    let mut u = User::new(&f, setup(0));
    let mut sent = Vec::new();
    let mut next = u.start(Duration::ZERO, &mut |_| {});
    for _ in 0..6 {
        match next {
            Next::Send { .. } => {
                let target = String::from_utf8_lossy(u.request().target).into_owned();
                let body: &[u8] = match target.as_str() {
                    "/login" => br#"{"token":"T"}"#,
                    t if t.starts_with("/items") => b"[7]",
                    _ => b"",
                };
                sent.push(target);
                next = u.answer(&answer(200, &[], body), S, &mut |_| {});
            }
            Next::Start { due } => next = u.start(due, &mut |_| {}),
            Next::Done => unreachable!(),
        }
    }
    assert_eq!(
        sent,
        [
            "/login",
            "/items?t=T",
            "/item/7?t=T",
            "/items?t=T",
            "/item/7?t=T"
        ]
    );
}
