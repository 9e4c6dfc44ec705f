//! Journeys on the event loop: users that log in, carry a cookie and a token from one
//! answer to the next request, write and read back — against the test server's small
//! application ([`Behavior::App`]), its bytes delivered whole and one per write, with
//! exact counts; the closed model (users running journeys back to back), the open one (a
//! new user per journey on its own connection), and think times kept out of latency; and
//! the same over HTTP/2, each user on a connection of its own or users sharing one (their
//! steps streams side by side), with reset streams and GOAWAYs mid-journey.

use crate::common;

use common::{both_ways, both_ways_with, each_way_with, failures, go, h2c};
use shootout_model::journey::{parse, JourneyFile};
use shootout_model::spec::Journeys;
use shootout_model::{FailureKind, JourneyConnection, LoadSpec, Pace, Protocol, RunResult, Target};
use shootout_testserver::{AppFault, Behavior, H2Behavior, H2Server, TestServer, INTERNAL_ERROR};
use std::sync::Arc;
use std::time::Duration;

/// Log in, read the form's token (which depends on the session cookie), post with it,
/// read the post back: every step needs what an earlier answer gave.
const WRITER: &str = r#"
[[journey]]
name = "writer"
[[journey.step]]
name = "login"
post = "/login?user=u{user}"
[[journey.step]]
name = "form"
get = "/form"
capture = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[journey.step]]
name = "post"
post = "/paste?csrf={csrf}&text=x{seq}"
expect = { status = 302 }
capture = { paste = { header = "Location", regex = "/paste/(\\w+)" } }
[[journey.step]]
name = "read back"
get = "/paste/{paste}"
expect = { status = 200, body_contains = "x" }
"#;

fn journeys(text: &str) -> Journeys {
    let file: JourneyFile = parse(text, "test.toml", &mut |_| Err("no files here".into()))
        .expect("a valid journey file");
    Journeys {
        source: "test.toml".into(),
        seed: 7,
        file: Arc::new(file),
    }
}

fn spec(server: &TestServer, text: &str, users: usize, n: u64) -> LoadSpec {
    spec_at(&server.url("/"), text, users, n)
}

/// `users` users of `text` running `n` journeys against `url`, closed model, one thread.
fn spec_at(url: &str, text: &str, users: usize, n: u64) -> LoadSpec {
    let mut s = LoadSpec::new(Target::parse(url).unwrap());
    s.requests = Some(n);
    s.connections = users;
    s.threads = 1;
    s.timeout = Duration::from_secs(10);
    s.journey = Some(journeys(text));
    s
}

/// The whole journey works only if the cookie set by the login is sent back and the
/// token read from one answer goes into the next request: 12 journeys of 4 steps by 3
/// users, all ok, the same counts however the server's bytes are split.
#[test]
fn users_carry_cookies_and_captured_values_from_step_to_step() {
    let (r, server) = both_ways(Behavior::App, |s| spec(s, WRITER, 3, 12));
    assert_eq!(r.counts.completed, 48, "4 steps × 12 journeys");
    assert_eq!(r.counts.ok, 48, "{:?}", r.counts.failures);
    assert_eq!(server.requests(), 48);
    assert_eq!(r.counts.status.get(&302).copied(), Some(12));
    let j = &r.journeys;
    assert_eq!(j.len(), 1);
    assert_eq!(
        (j[0].label.as_str(), j[0].completed, j[0].ok),
        ("writer", 12, 12)
    );
    let steps: Vec<_> = r
        .targets
        .iter()
        .map(|t| (t.label.as_str(), t.completed, t.ok))
        .collect();
    assert_eq!(
        steps,
        [
            ("writer › login", 12, 12),
            ("writer › form", 12, 12),
            ("writer › post", 12, 12),
            ("writer › read back", 12, 12),
        ]
    );
    // Each user keeps its connection between its steps.
    assert_eq!(r.counts.connections_opened, 3);
}

/// Without the login, the session cookie is missing: the form's token is `none`, the
/// post is refused (403, a failed step), the journey ends there and its last step is
/// never sent.
#[test]
fn a_failed_step_ends_its_journey_and_is_counted_under_its_step() {
    let no_login = WRITER.replacen(
        "name = \"login\"\npost = \"/login?user=u{user}\"",
        "name = \"login\"\npost = \"/nowhere\"\nexpect = { status = 404 }",
        1,
    );
    assert_ne!(no_login, WRITER);
    let (r, server) = both_ways(Behavior::App, |s| spec(s, &no_login, 2, 6));
    assert_eq!(server.requests(), 18, "3 steps sent per journey");
    assert_eq!(r.counts.completed, 18);
    assert_eq!(r.counts.status.get(&403).copied(), Some(6));
    let j = &r.journeys[0];
    assert_eq!((j.completed, j.ok), (6, 0));
    let steps: Vec<_> = r.targets.iter().map(|t| (t.completed, t.ok)).collect();
    assert_eq!(steps, [(6, 6), (6, 6), (6, 0), (0, 0)]);
}

/// The open model with `--journey-connection new`: 40 journeys at 200 a second, each a
/// new user on a connection of its own, kept for its four steps.
#[test]
fn the_open_model_starts_each_journey_as_a_new_user_on_schedule() {
    let server = TestServer::start(Behavior::App).unwrap();
    let mut s = spec(&server, WRITER, 1, 40);
    s.pace = Pace::Rate(200.0);
    s.journey_connection = JourneyConnection::New;
    let r = go(&s);
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (40, 40));
    assert_eq!(r.counts.ok, 160);
    assert_eq!(r.counts.connections_opened, 40, "one connection per user");
    let sched = r.schedule.expect("a schedule");
    assert_eq!(sched.sent, 40, "the schedule's sends are journey starts");
}

/// `journeys` at `rate` a second in the open model, at most `cap` connections at once,
/// connections reused (the default).
fn open_spec(server: &TestServer, text: &str, journeys: u64, rate: f64, cap: usize) -> LoadSpec {
    let mut s = spec(server, text, 1, journeys);
    s.pace = Pace::Rate(rate);
    s.max_connections = Some(cap);
    assert_eq!(
        s.journey_connection,
        JourneyConnection::Reuse,
        "the default"
    );
    s
}

/// The open model reuses connections: 40 journeys at 200 a second, each a new user (its
/// login, token and post its own, so each needs a session of its own), all on the one
/// connection the cap allows, kept alive from one journey to the next.
#[test]
fn open_model_journeys_take_the_connection_an_earlier_user_left_idle() {
    let (r, server) = both_ways(Behavior::App, |s| open_spec(s, WRITER, 40, 200.0, 1));
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (40, 40));
    assert_eq!((r.counts.ok, server.requests()), (160, 160));
    assert_eq!(
        r.counts.connections_opened, 1,
        "one connection for every user"
    );
    assert_eq!(server.connections(), 2, "and the pre-flight's");
    assert_eq!(r.schedule.expect("a schedule").sent, 40);
}

/// Journeys that overlap (each thinks 60 ms between its two steps, one starting every
/// 5 ms) need more connections than the cap of 4: exactly 4 are opened, each carrying
/// journey after journey, and the journeys beyond wait for one (late, never failed).
#[test]
fn open_model_journeys_reuse_at_most_the_cap_of_connections() {
    let (r, server) = both_ways(Behavior::App, |s| {
        open_spec(
            s,
            &two_steps("60ms").replace("get = \"/\"", "get = \"/form\""),
            20,
            200.0,
            4,
        )
    });
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (20, 20));
    assert_eq!((r.counts.ok, server.requests()), (40, 40));
    assert_eq!(r.counts.connections_opened, 4, "the cap, each reused");
    let sched = r.schedule.expect("a schedule");
    assert_eq!((sched.sent, sched.connections), (20, 4));
    assert!(sched.capped, "journeys waited for a connection");
}

/// A reused connection carries no user's state: each journey reads a paste before it
/// logs in (403 without a session) and after (200). One connection carries all ten
/// journeys; had a user's session cookie stayed with the connection, the next journey's
/// first read would be answered 200 and fail.
#[test]
fn a_reused_connection_carries_no_cookie_of_the_user_before() {
    let text = r#"
[[journey]]
name = "visitor"
[[journey.step]]
name = "before login"
get = "/paste/a"
expect = { status = 403 }
[[journey.step]]
name = "login"
post = "/login?user=u{user}"
[[journey.step]]
name = "after login"
get = "/paste/b"
expect = { status = 200 }
"#;
    let (r, _) = both_ways(Behavior::App, |s| open_spec(s, text, 10, 200.0, 1));
    let steps: Vec<_> = r.targets.iter().map(|t| (t.completed, t.ok)).collect();
    assert_eq!(steps, [(10, 10); 3], "{:?}", failures(&r));
    assert_eq!(r.counts.status.get(&403).copied(), Some(10));
    assert_eq!(
        r.counts.connections_opened, 1,
        "every journey on one connection"
    );
}

/// Answers that close their connection (`Connection: close`) leave nothing to reuse:
/// each step of each journey opens a connection of its own, and all are ok.
#[test]
fn open_model_journeys_open_new_connections_where_the_server_closes_them() {
    let behavior = Behavior::CloseAfter {
        requests: 1,
        header: true,
    };
    let (r, server) = both_ways(behavior, |s| open_spec(s, &two_steps("0s"), 10, 200.0, 2));
    assert_eq!(
        (r.counts.completed, r.counts.ok),
        (20, 20),
        "{:?}",
        failures(&r)
    );
    assert_eq!(server.requests(), 20);
    assert_eq!(r.counts.connections_opened, 20, "one per step");
}

/// A kept connection the server closed while it sat idle (its keep-alive timeout, 40 ms,
/// shorter than the 200 ms between journeys) is not reused: each journey opens another,
/// and nothing fails.
#[test]
fn an_idle_connection_the_server_closed_is_not_reused() {
    let behavior = Behavior::CloseIdle {
        after: Duration::from_millis(40),
    };
    let text = two_steps("0s");
    let (r, server) = both_ways(behavior, |s| open_spec(s, &text, 4, 5.0, 2));
    assert_eq!(
        (r.counts.completed, r.counts.ok),
        (8, 8),
        "{:?}",
        failures(&r)
    );
    assert_eq!(server.requests(), 8);
    assert_eq!(r.counts.connections_opened, 4, "one per journey");
}

/// Think time is the user's, not the server's: a journey of two steps with 200 ms
/// between them lasts at least that, while the second step's latency, counted from when
/// it was due, leaves the wait out.
#[test]
fn think_time_is_in_the_journey_not_in_the_latency() {
    let text = r#"
[[journey]]
name = "reader"
think = "200ms"
[[journey.step]]
name = "first"
get = "/form"
[[journey.step]]
name = "second"
get = "/form"
"#;
    let server = TestServer::start(Behavior::App).unwrap();
    let r = go(&spec(&server, text, 1, 2));
    assert_eq!(r.counts.ok, 4);
    let journey = &r.journeys[0];
    // The histogram keeps two significant figures: the shortest journey's bucket.
    let shortest = journey.latency.highest_equivalent(journey.latency.min());
    assert!(shortest >= 200_000, "{shortest} µs");
    let second = &r.targets[1];
    assert!(
        second.latency.max() < 200_000,
        "{} µs: the think time was counted as latency",
        second.latency.max()
    );
}

/// A journey's busy time is its duration less the think times between its steps: three
/// steps, each answered after a 30 ms stall, with a constant 100 ms between them. Every
/// journey waits exactly 2 × 100 ms (each think time runs from an answer to the next
/// step's due time), so its busy time is its duration less 200 ms, and at least the three
/// stalls (90 ms); its duration is at least 290 ms. Four journeys, one user, whole and
/// byte by byte.
#[test]
fn a_journey_s_busy_time_is_its_duration_less_its_think_times() {
    let text = r#"
[[journey]]
name = "reader"
think = "100ms"
[[journey.step]]
get = "/a"
[[journey.step]]
get = "/b"
[[journey.step]]
get = "/c"
"#;
    let stall = Duration::from_millis(30);
    let (r, _) = both_ways(Behavior::StallEvery { n: 1, stall }, |s| {
        spec(s, text, 1, 4)
    });
    assert_eq!(r.counts.ok, 12, "{:?}", r.counts.failures);
    let j = &r.journeys[0];
    let busy = j.busy.as_ref().expect("a journey's busy time");
    assert_eq!(
        (j.latency.len(), busy.len()),
        (4, 4),
        "one of each per journey"
    );
    // Two significant figures: each bound on the bucket that holds the value.
    let low = |h: &hdrhistogram::Histogram<u64>| h.highest_equivalent(h.min());
    assert!(low(busy) >= 90_000, "{} µs: three stalls", low(busy));
    assert!(low(&j.latency) >= 290_000, "{} µs", low(&j.latency));
    // Duration − busy = 200 ms, each side within its bucket (1 % of its value).
    for q in [0.0, 0.5, 1.0] {
        let (d, b) = (
            j.latency.value_at_quantile(q) as f64,
            busy.value_at_quantile(q) as f64,
        );
        let slack = 0.01 * (d + b);
        assert!(
            (d - b - 200_000.0).abs() <= slack,
            "q {q}: duration {d} µs, busy {b} µs"
        );
    }
}

/// Two steps of `GET /` with `think` between them.
fn two_steps(think: &str) -> String {
    format!(
        r#"
[[journey]]
name = "pages"
think = "{think}"
[[journey.step]]
name = "one"
get = "/"
[[journey.step]]
name = "two"
get = "/"
"#
    )
}

/// A server whose keep-alive timeout is shorter than the users' think time closes each
/// connection while its user thinks: the user's next step opens another, as a browser
/// does, and nothing fails.
#[test]
fn a_connection_closed_while_its_user_thinks_is_opened_again_for_the_next_step() {
    let behavior = Behavior::CloseIdle {
        after: Duration::from_millis(40),
    };
    let (r, server) = both_ways(behavior, |s| spec(s, &two_steps("120ms"), 2, 4));
    assert_eq!(
        (r.counts.completed, r.counts.ok),
        (8, 8),
        "{:?}",
        r.counts.failures
    );
    assert_eq!(server.requests(), 8);
    assert_eq!(r.counts.connections_opened, 8, "one connection per step");
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (4, 4));
}

/// A server that sends an unasked answer after each of its answers, at once (one write
/// with the answer, when whole) or 20 ms later, while the user thinks (250 ms: 230 ms of
/// margin for a busy machine's late bytes): the bytes count once each as a `malformed`
/// failure charged to no step, their connection is closed, and the user's next step
/// opens another and gets its own answer. One user, three journeys of two steps: six
/// answers, every step ok; the bytes after the run's last answer come when no step is
/// left to send and are not counted (as they would not be read a moment later): five
/// malformed, six connections.
#[test]
fn bytes_sent_while_a_user_thinks_count_once_outside_any_step() {
    for delay in [Duration::ZERO, Duration::from_millis(20)] {
        let (r, server) = both_ways(Behavior::ExtraResponse { delay }, |s| {
            spec(s, &two_steps("250ms"), 1, 3)
        });
        assert_eq!(server.requests(), 6, "{delay:?}");
        let steps: Vec<_> = r.targets.iter().map(|t| (t.completed, t.ok)).collect();
        assert_eq!(steps, [(3, 3), (3, 3)], "{delay:?}: no step charged");
        assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (3, 3));
        assert_eq!(failures(&r), [(FailureKind::Malformed, 5)], "{delay:?}");
        assert_eq!((r.counts.completed, r.counts.ok), (11, 6), "{delay:?}");
        assert_eq!(r.counts.connections_opened, 6, "{delay:?}");
    }
}

/// Answers that close their connection (`Connection: close`): each step opens its own.
#[test]
fn answers_that_close_their_connection_leave_the_next_step_a_new_one() {
    let behavior = Behavior::CloseAfter {
        requests: 1,
        header: true,
    };
    let (r, _) = both_ways(behavior, |s| spec(s, &two_steps("0s"), 3, 6));
    assert_eq!((r.counts.completed, r.counts.ok), (12, 12));
    assert_eq!(r.counts.connections_opened, 12);
}

/// A step the server never answers fails as a timeout and ends its journey: the next
/// step is not sent.
#[test]
fn a_step_that_times_out_ends_its_journey() {
    let (r, server) = both_ways(Behavior::NeverAnswer, |s| {
        let mut s = spec(s, &two_steps("0s"), 1, 2);
        s.timeout = Duration::from_millis(200);
        s
    });
    assert_eq!(server.requests(), 2, "the second steps were never sent");
    assert_eq!(
        common::failures(&r),
        [(shootout_model::FailureKind::Timeout, 2)]
    );
    let steps: Vec<_> = r.targets.iter().map(|t| (t.completed, t.ok)).collect();
    assert_eq!(steps, [(2, 0), (0, 0)]);
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (2, 0));
}

/// Bytes that are not HTTP fail their step as malformed.
#[test]
fn a_malformed_answer_fails_its_step() {
    let (r, _) = both_ways(Behavior::Garbage, |s| spec(s, &two_steps("0s"), 1, 3));
    assert_eq!(
        common::failures(&r),
        [(shootout_model::FailureKind::Malformed, 3)]
    );
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (3, 0));
}

/// A server that closes every connection at accept: every step fails, and a user waits
/// a pause that doubles after each drop before it opens another connection, so the
/// server is not hammered: in 300 ms two users make a handful of attempts each (pauses of
/// 1, 2, 4, … ms), not thousands.
#[test]
fn users_of_a_server_that_drops_every_connection_back_off() {
    let server = TestServer::start(Behavior::CloseOnAccept).unwrap();
    let mut s = spec(&server, &two_steps("0s"), 2, 1);
    s.requests = None;
    s.duration = Some(Duration::from_millis(300));
    let r = go(&s);
    let failed = r.counts.failed();
    assert!(failed > 0);
    assert_eq!(r.counts.ok, 0);
    assert!(failed <= 2 * 12, "{failed} attempts in 300 ms");
    assert_eq!(r.journeys[0].ok, 0);
}

/// A capture reads at most its `within` bytes of a body of 70,000: it finds what the first
/// bytes hold, and the whole body is still read and counted.
#[test]
fn a_capture_reads_only_its_prefix_of_a_long_body() {
    let text = r#"
[[journey]]
name = "big"
[[journey.step]]
name = "page"
get = "/"
capture = { first = { regex = "x+", within = 16 } }
[[journey.step]]
name = "next"
get = "/{first}"
"#;
    let len = 70_000;
    let (r, _) = both_ways(Behavior::Big { len }, |s| spec(s, text, 1, 1));
    assert_eq!((r.counts.completed, r.counts.ok), (2, 2));
    assert_eq!(r.counts.body_bytes, 2 * len as u64);
}

/// Stages ramp the closed model's users: a stage's new users begin their first journey at
/// its start, and users a stage drops end the journey they are in and begin no other. A
/// journey of one step paced at 300 ms (each next journey due 300 ms after the last was):
/// 1 user for the first second (journeys due at 0, 0.3, 0.6, 0.9 s), 3 in the second
/// (user 0 at 1.2, 1.5, 1.8; users 1 and 2 from 1.0: 1.0, 1.3, 1.6, 1.9), 2 in the third
/// (users 0 and 1: 2.1, 2.4, 2.7 and 2.2, 2.5, 2.8; user 2's next, due at 2.2, is not
/// begun). Users are dealt to the two threads in turn.
#[test]
fn stages_ramp_the_users_up_and_down() {
    let text = "[[journey]]\nname = \"pages\"\nthink = \"pacing(300ms)\"\n[[journey.step]]\nname = \"one\"\nget = \"/form\"\n";
    let server = TestServer::start(Behavior::App).unwrap();
    let stage = |users, ms| shootout_model::Stage {
        users,
        duration: Duration::from_millis(ms),
    };
    let s = spec(&server, text, 1, 1)
        .to_builder()
        .threads(Some(2))
        .bound(None, None)
        .stages(vec![stage(1, 1000), stage(3, 1000), stage(2, 1000)])
        .build()
        .unwrap();
    assert_eq!(
        (s.connections, s.duration, s.requests),
        (3, Some(Duration::from_secs(3)), None)
    );
    let r = go(&s);
    let per_second: Vec<u64> = r.series.iter().map(|x| x.completed).collect();
    assert_eq!(per_second[..3], [4, 11, 6], "{per_second:?}");
    assert_eq!((r.counts.completed, r.counts.ok), (21, 21));
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (21, 21));
    assert_eq!(server.requests(), 21);
    assert_eq!(r.counts.connections_opened, 3);
}

/// Stages of journeys a second in the open model: each stage starts its own rate's
/// journeys at even intervals from its start, each by a new user on a connection of its
/// own. 4 a second for the first second (due at 0, 0.25, 0.5, 0.75 s), 10 in the second
/// (1.0, 1.1, …, 1.9 s), 2 in the third (2.0, 2.5 s): 16 journeys of one step, each
/// answered in the second it started, the two threads' schedules interleaved.
#[test]
fn rate_stages_start_each_stage_s_journeys_at_its_own_rate() {
    let text = "[[journey]]\nname = \"pages\"\n[[journey.step]]\nname = \"one\"\nget = \"/form\"\n";
    let server = TestServer::start(Behavior::App).unwrap();
    let stage = |rate, ms| shootout_model::RateStage {
        rate,
        duration: Duration::from_millis(ms),
    };
    let s = spec(&server, text, 2, 1)
        .to_builder()
        .threads(Some(2))
        .bound(None, None)
        .rate_stages(vec![stage(4.0, 1000), stage(10.0, 1000), stage(2.0, 1000)])
        .journey_connection(JourneyConnection::New)
        .build()
        .unwrap();
    assert_eq!(
        (s.pace, s.duration, s.requests, s.threads),
        (
            Pace::Rate(16.0 / 3.0),
            Some(Duration::from_secs(3)),
            None,
            2
        )
    );
    let r = go(&s);
    let per_second: Vec<u64> = r.series.iter().map(|x| x.completed).collect();
    assert_eq!(per_second[..3], [4, 10, 2], "{per_second:?}");
    assert_eq!((r.counts.completed, r.counts.ok), (16, 16));
    assert_eq!((r.journeys[0].completed, r.journeys[0].ok), (16, 16));
    let sched = r.schedule.expect("a schedule");
    assert_eq!(
        (sched.due, sched.sent),
        (16, 16),
        "journeys due and started"
    );
    assert_eq!(server.requests(), 16);
    assert_eq!(r.counts.connections_opened, 16, "one connection per user");
}

/// `-v 2` on a journey run: the first user's first journey, step by step — each request's
/// head as sent, each answer's head, and the values each step captured — and nothing of
/// the others' journeys, whether the server's bytes come whole or one per write.
#[test]
fn the_heads_sample_follows_one_user_s_first_journey() {
    for d in [
        shootout_testserver::Delivery::Whole,
        shootout_testserver::Delivery::Bytewise,
    ] {
        let server = TestServer::start_with(Behavior::App, d).unwrap();
        let s = spec(&server, WRITER, 2, 6);
        let mut control = shootout_engine::Control::new(1);
        control.sample_heads = 3;
        let r = shootout_engine::run(&s, &control).unwrap();
        assert_eq!(
            r.counts.ok, 24,
            "{d:?}: the sample changes nothing measured"
        );
        let heads = control.heads();
        let steps: Vec<&str> = heads.journey.iter().map(|x| x.step.as_str()).collect();
        assert_eq!(
            steps,
            [
                "writer › login",
                "writer › form",
                "writer › post",
                "writer › read back"
            ],
            "{d:?}"
        );
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let x = &heads.journey;
        assert!(
            text(&x[0].request).starts_with("POST /login?user=u"),
            "{}",
            text(&x[0].request)
        );
        assert!(text(&x[0].request).ends_with("\r\n\r\n"));
        assert!(
            text(&x[1].request).contains("\r\nCookie: "),
            "the session cookie is sent"
        );
        let status = |i: usize| text(x[i].answer.as_deref().unwrap_or_default());
        assert!(status(2).starts_with("HTTP/1.1 302"), "{}", status(2));
        assert!(status(3).starts_with("HTTP/1.1 200"), "{}", status(3));
        // What the form step captured is what the post sent; the post's capture is the
        // id the read back asked for.
        let (name, csrf) = &x[1].captured[0];
        assert_eq!(name, "csrf");
        assert!(text(&x[2].request).contains(&format!("csrf={}", text(csrf))));
        let (name, paste) = &x[2].captured[0];
        assert_eq!(name, "paste");
        assert!(text(&x[3].request).starts_with(&format!("GET /paste/{} ", text(paste))));
        assert!(x[0].captured.is_empty() && x[3].captured.is_empty());
    }
}

/// Over HTTP/2 (h2c with prior knowledge): `users` users of `text` running `n` journeys,
/// each on its own connection, its steps as streams one at a time.
fn h2_spec(server: &H2Server, text: &str, users: usize, n: u64) -> LoadSpec {
    let mut s = spec_at(&server.url("/"), text, users, n);
    s.protocol = Protocol::Http2;
    s
}

/// [`WRITER`]'s `users` running `n` journeys (as `tweak` sets the load) against the test
/// server's application over HTTP/2, every `nth` stream of a connection given `fault`
/// (0: none), run whole and one byte per write with the same outcome.
fn h2_both_ways(
    (nth, fault): (u32, AppFault),
    (users, n): (usize, u64),
    tweak: impl Fn(&mut LoadSpec),
) -> [(RunResult, H2Server); 2] {
    let load = |server: &H2Server| {
        let mut s = h2_spec(server, WRITER, users, n);
        tweak(&mut s);
        s
    };
    both_ways_with(
        h2c(&H2Behavior::App { nth, fault }),
        H2Server::wait_idle,
        load,
    )
}

/// Asserts that `n` requests completed, all ok.
fn all_ok(r: &RunResult, n: u64) {
    let c = &r.counts;
    assert_eq!((c.completed, c.ok), (n, n), "{:?}", failures(r));
}

/// (ended, ok) of the only journey.
fn journey_counts(r: &RunResult) -> (u64, u64) {
    (r.journeys[0].completed, r.journeys[0].ok)
}

/// (completed, ok) of each step, in order.
fn step_counts(r: &RunResult) -> Vec<(u64, u64)> {
    r.targets.iter().map(|t| (t.completed, t.ok)).collect()
}

/// Over HTTP/2 as over HTTP/1.1, the whole journey works only if the login's cookie goes
/// back and the form's token goes into the post: 12 journeys of 4 steps by 3 users, each
/// user on one connection of its own for all its journeys.
#[test]
fn http2_users_carry_cookies_and_captured_values_on_their_own_connections() {
    for (r, server) in h2_both_ways((0, AppFault::Goaway), (3, 12), |_| {}) {
        all_ok(&r, 48);
        assert_eq!((server.requests(), server.answers()), (48, 48));
        assert_eq!(r.counts.status.get(&302).copied(), Some(12));
        assert_eq!(step_counts(&r), [(12, 12); 4]);
        assert_eq!(journey_counts(&r), (12, 12));
        assert_eq!(r.counts.connections_opened, 3, "one connection per user");
        assert_eq!(server.connections(), 4, "and the pre-flight's");
    }
}

/// The open model over HTTP/2 with `--journey-connection new`: 40 journeys at 200 a
/// second, each a new user on a connection of its own, its four steps as four streams on
/// it.
#[test]
fn http2_open_model_starts_each_journey_as_a_new_user_with_its_own_connection() {
    let rate = |s: &mut LoadSpec| {
        s.pace = Pace::Rate(200.0);
        s.journey_connection = JourneyConnection::New;
    };
    for (r, server) in h2_both_ways((0, AppFault::Goaway), (1, 40), rate) {
        assert_eq!(journey_counts(&r), (40, 40));
        assert_eq!(step_counts(&r), [(40, 40); 4]);
        assert_eq!(server.answers(), 160);
        assert_eq!(r.counts.connections_opened, 40, "one connection per user");
        assert_eq!(server.connections(), 41, "and the pre-flight's");
        let sched = r.schedule.expect("a schedule");
        assert_eq!(sched.sent, 40, "the schedule's sends are journey starts");
    }
}

/// The open model over HTTP/2 reuses connections: 40 journeys at 200 a second, each a
/// new user with a session of its own, all on the one connection the cap allows, their
/// steps streams on it one after another.
#[test]
fn http2_open_model_journeys_take_the_connection_an_earlier_user_left_open() {
    let rate = |s: &mut LoadSpec| {
        s.pace = Pace::Rate(200.0);
        s.max_connections = Some(1);
    };
    for (r, server) in h2_both_ways((0, AppFault::Goaway), (1, 40), rate) {
        assert_eq!(journey_counts(&r), (40, 40));
        assert_eq!(step_counts(&r), [(40, 40); 4]);
        assert_eq!(server.answers(), 160);
        assert_eq!(
            r.counts.connections_opened, 1,
            "one connection for every user"
        );
        assert_eq!(server.connections(), 2, "and the pre-flight's");
    }
}

/// A RST_STREAM in place of every third answer on a connection: each journey's post is
/// reset, counted as a reset stream under the post, the journey ends there (its read back
/// never sent), and the connection goes on to carry the user's next journey.
#[test]
fn http2_a_reset_stream_fails_its_step_and_keeps_the_connection() {
    let fault = AppFault::Reset(INTERNAL_ERROR);
    for (r, server) in h2_both_ways((3, fault), (2, 6), |_| {}) {
        assert_eq!(step_counts(&r), [(6, 6), (6, 6), (6, 0), (0, 0)]);
        assert_eq!(failures(&r), [(FailureKind::StreamReset, 6)]);
        assert_eq!(r.counts.stream_resets.get(&INTERNAL_ERROR), Some(&6));
        assert_eq!(server.resets(), 6);
        assert_eq!(journey_counts(&r), (6, 0));
        assert_eq!(r.counts.connections_opened, 2);
    }
}

/// A GOAWAY with an error code in place of every fourth answer on a connection, the
/// server closing its side: each journey's read back fails as a connection error under
/// its step, and the user's next journey opens a new connection (open model: each
/// journey has its own anyway).
#[test]
fn http2_a_goaway_with_an_error_fails_the_step_it_cut_off() {
    let rate = |s: &mut LoadSpec| s.pace = Pace::Rate(100.0);
    for (r, server) in h2_both_ways((4, AppFault::GoawayError), (1, 8), rate) {
        assert_eq!(journey_counts(&r), (8, 0));
        assert_eq!(step_counts(&r), [(8, 8), (8, 8), (8, 8), (8, 0)]);
        assert_eq!(failures(&r), [(FailureKind::ConnectionError, 8)]);
        assert_eq!(
            (r.counts.goaways, server.goaways(), server.abandoned()),
            (8, 8, 8)
        );
    }
}

/// A GOAWAY that leaves a step unprocessed (every third stream of a connection): the
/// server says it never acted on it, so the user sends it once more on a new
/// connection, counted as retried, and every journey still ends well.
#[test]
fn http2_a_step_a_goaway_left_unprocessed_goes_again_on_a_new_connection() {
    for (r, server) in h2_both_ways((3, AppFault::Goaway), (1, 2), |_| {}) {
        // Connection 1: login, form, post (unprocessed); 2: post, read back, login
        // (unprocessed); 3: login, form, post (unprocessed); 4: post, read back.
        assert_eq!(step_counts(&r), [(2, 2); 4], "{:?}", failures(&r));
        assert_eq!((r.counts.retried, server.unprocessed()), (3, 3));
        assert_eq!((r.counts.goaways, server.goaways()), (3, 3));
        assert_eq!(r.counts.connections_opened, 4);
        assert_eq!(journey_counts(&r), (2, 2));
    }
}

/// A step never answered (every second stream of a connection) is cancelled at its
/// deadline with a RST_STREAM and fails as a timeout under its step; the user's
/// connection is kept for its next journey.
#[test]
fn http2_a_step_past_its_deadline_is_cancelled_and_the_connection_kept() {
    let deadline = |s: &mut LoadSpec| s.timeout = Duration::from_millis(300);
    for (r, server) in h2_both_ways((2, AppFault::Silent), (2, 4), deadline) {
        assert_eq!(step_counts(&r), [(4, 4), (4, 0), (0, 0), (0, 0)]);
        assert_eq!(failures(&r), [(FailureKind::Timeout, 4)]);
        assert_eq!((server.unanswered(), server.cancels()), (4, 4));
        assert_eq!(
            r.counts.connections_opened, 2,
            "each user's connection kept"
        );
        assert_eq!(journey_counts(&r), (4, 0));
    }
}

/// A GOAWAY after every answer (a server retiring each connection): each next step goes
/// on a new connection, whether the GOAWAY came before it was sent or after it (then it
/// was left unprocessed and goes again), and every step is ok.
#[test]
fn http2_a_goaway_between_steps_leaves_the_next_step_a_new_connection() {
    let goaway = H2Behavior::Goaway { after: 1 };
    for (r, server) in each_way_with(h2c(&goaway), H2Server::wait_idle, |s| {
        h2_spec(s, &two_steps("0s"), 2, 4)
    }) {
        all_ok(&r, 8);
        assert_eq!((server.answers(), server.goaways()), (8, 8));
        assert_eq!(step_counts(&r), [(4, 4); 2]);
        // One answer per connection; a step sent before its connection's GOAWAY came
        // went again on the next.
        assert_eq!(r.counts.connections_opened, 8);
        assert_eq!(r.counts.retried, server.unprocessed());
    }
}

/// `-v 2` over HTTP/2: the first user's first journey with its requests and answers as
/// curl shows HTTP/2 (`POST /login?… HTTP/2`, the fields in lower case, `HTTP/2 302`) and
/// the values each step captured.
#[test]
fn http2_the_heads_sample_follows_one_user_s_first_journey() {
    let server = H2Server::start(H2Behavior::App {
        nth: 0,
        fault: AppFault::Silent,
    })
    .unwrap();
    let mut control = shootout_engine::Control::new(1);
    control.sample_heads = 3;
    let r = shootout_engine::run(&h2_spec(&server, WRITER, 2, 4), &control).unwrap();
    all_ok(&r, 16);
    let heads = control.heads();
    let x = &heads.journey;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let shown: Vec<(String, String)> = x
        .iter()
        .map(|e| {
            let answer = text(e.answer.as_deref().unwrap_or_default());
            let first = |t: &str| t.lines().next().unwrap_or_default().to_string();
            (first(&text(&e.request)), first(&answer))
        })
        .collect();
    assert_eq!(shown.len(), 4, "{shown:?}");
    assert!(shown[0].0.starts_with("POST /login?user=u") && shown[0].0.ends_with(" HTTP/2"));
    assert_eq!(shown[2].1, "HTTP/2 302");
    assert!(
        text(&x[1].request).contains("\r\ncookie: sid=u"),
        "{}",
        text(&x[1].request)
    );
    assert!(text(&x[2].answer.clone().unwrap_or_default()).contains("\r\nlocation: /paste/"));
    let (name, csrf) = &x[1].captured[0];
    assert_eq!(name, "csrf");
    assert!(text(&x[2].request).contains(&format!("csrf={}", text(csrf))));
}

/// Log in, read the form's token, post a text that names the user, read it back and
/// find the user's own text: a cookie, a token or a captured id of another user sharing
/// the connection would fail the post (403) or the read back.
const OWN: &str = r#"
[[journey]]
name = "writer"
[[journey.step]]
name = "login"
post = "/login?user=u{user}"
[[journey.step]]
name = "form"
get = "/form"
capture = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[journey.step]]
name = "post"
post = "/paste?csrf={csrf}&text=u{user}x{seq}"
expect = { status = 302 }
capture = { paste = { header = "Location", regex = "/paste/(\\w+)" } }
[[journey.step]]
name = "read back"
get = "/paste/{paste}"
expect = { status = 200, body_contains = "u{user}x" }
"#;

/// `users` users of `text` running `n` journeys over HTTP/2, `share` of them to each
/// connection.
fn shared_spec(server: &H2Server, text: &str, (users, share): (usize, usize), n: u64) -> LoadSpec {
    let mut s = h2_spec(server, text, users, n);
    s.streams = share;
    s
}

/// Six users, three to a connection: each runs its journeys with its own cookie, token
/// and captured id on a connection it shares with two others, their steps streams side
/// by side; 18 journeys of 4 steps, all ok, on two connections.
#[test]
fn http2_users_sharing_a_connection_keep_their_own_cookies_and_captures() {
    let app = H2Behavior::App {
        nth: 0,
        fault: AppFault::Silent,
    };
    for (r, server) in both_ways_with(h2c(&app), H2Server::wait_idle, |s| {
        shared_spec(s, OWN, (6, 3), 18)
    }) {
        all_ok(&r, 72);
        assert_eq!((server.requests(), server.answers()), (72, 72));
        assert_eq!(step_counts(&r), [(18, 18); 4]);
        assert_eq!(journey_counts(&r), (18, 18));
        assert_eq!(
            r.counts.connections_opened, 2,
            "three users to a connection"
        );
        assert_eq!(server.connections(), 3, "and the pre-flight's");
    }
}

/// Each user's read back finds its own text, not another's: three users on one
/// connection, a journey each, all expecting user 0's text: only user 0's read back is
/// ok, so the check above can fail.
#[test]
fn http2_users_sharing_a_connection_read_back_only_their_own_answers() {
    let app = H2Behavior::App {
        nth: 0,
        fault: AppFault::Silent,
    };
    let server = H2Server::start(app).unwrap();
    let first_only = OWN.replace("body_contains = \"u{user}x\"", "body_contains = \"u0x\"");
    assert_ne!(first_only, OWN);
    let r = go(&shared_spec(&server, &first_only, (3, 3), 3));
    assert_eq!(step_counts(&r), [(3, 3), (3, 3), (3, 3), (3, 1)]);
    assert_eq!(failures(&r), [(FailureKind::Body, 2)]);
    assert_eq!(r.counts.connections_opened, 1);
}

/// A GOAWAY in place of every third answer on a connection two users share: the steps
/// it left unprocessed (the third, and the other user's if it was sent after) wait for
/// the steps the server did process to end, then go once more on a new connection, and
/// every journey ends well. Each connection answers two steps: 16 steps take 8
/// connections, 7 of them ended by a GOAWAY.
#[test]
fn http2_a_goaway_on_a_shared_connection_moves_its_users_to_a_new_one() {
    let app = H2Behavior::App {
        nth: 3,
        fault: AppFault::Goaway,
    };
    // Which steps a GOAWAY leaves unprocessed depends on when the other user's step went
    // out: the counts below do not.
    for (r, server) in each_way_with(h2c(&app), H2Server::wait_idle, |s| {
        shared_spec(s, OWN, (2, 2), 4)
    }) {
        all_ok(&r, 16);
        assert_eq!(step_counts(&r), [(4, 4); 4], "{:?}", failures(&r));
        assert_eq!(journey_counts(&r), (4, 4));
        assert_eq!(server.answers(), 16);
        assert_eq!((r.counts.goaways, server.goaways()), (7, 7));
        assert_eq!(r.counts.connections_opened, 8);
        assert_eq!(r.counts.retried, server.unprocessed());
        assert!(r.counts.retried >= 7, "{}", r.counts.retried);
    }
}

/// A server that allows two streams at once, four users on its connection: the steps
/// beyond two wait for a stream to end and go out on it; every step is ok on the one
/// connection, and the result warns that the server allowed 2 of the 4 asked.
#[test]
fn http2_users_beyond_the_server_s_streams_wait_for_one_to_end() {
    let limited = H2Behavior::MaxStreams { limit: 2 };
    for (r, server) in both_ways_with(h2c(&limited), H2Server::wait_idle, |s| {
        shared_spec(s, &two_steps("0s"), (4, 4), 12)
    }) {
        all_ok(&r, 24);
        assert_eq!(server.answers(), 24);
        assert_eq!(step_counts(&r), [(12, 12); 2]);
        assert_eq!(r.counts.connections_opened, 1);
        let most = server.max_open_streams();
        assert!((1..=2).contains(&most), "{most} streams open at once");
        assert_eq!(r.streams_allowed(), Some(2), "the report says so");
    }
}

/// A RST_STREAM in place of every third answer on a connection three users share: the
/// step it resets fails under its own step and user, the others' streams go on, and the
/// connection carries every user's next journey.
#[test]
fn http2_a_reset_stream_on_a_shared_connection_fails_one_user_s_step() {
    let fault = AppFault::Reset(INTERNAL_ERROR);
    let app = H2Behavior::App { nth: 3, fault };
    for (r, server) in each_way_with(h2c(&app), H2Server::wait_idle, |s| {
        shared_spec(s, OWN, (3, 3), 9)
    }) {
        let c = &r.counts;
        assert_eq!(failures(&r), [(FailureKind::StreamReset, server.resets())]);
        assert_eq!(c.completed, server.requests());
        assert_eq!(c.ok + server.resets(), c.completed);
        assert_eq!(journey_counts(&r).0, 9);
        assert_eq!(journey_counts(&r).0 - journey_counts(&r).1, server.resets());
        assert_eq!(c.connections_opened, 1, "the connection kept");
    }
}

/// A connection two users share, lost under them: a GOAWAY with an error code in place
/// of every third answer, the server closing its side. The step it cut off fails as a
/// connection error under its own step (its journey ends), the other user's step it left
/// unprocessed goes once more on a new connection, and every user's next steps go there.
#[test]
fn http2_a_shared_connection_lost_under_its_users_moves_them_to_a_new_one() {
    let app = H2Behavior::App {
        nth: 3,
        fault: AppFault::GoawayError,
    };
    // Which steps were in flight when it came depends on timing: the relations below do
    // not.
    for (r, server) in each_way_with(h2c(&app), H2Server::wait_idle, |s| {
        shared_spec(s, OWN, (2, 2), 6)
    }) {
        let c = &r.counts;
        let cut = server.goaways();
        assert!(cut > 0);
        assert_eq!(failures(&r), [(FailureKind::ConnectionError, cut)]);
        assert_eq!(c.goaways, cut);
        assert_eq!(c.ok, server.answers());
        assert_eq!(journey_counts(&r), (6, 6 - cut));
        // Besides the step cut off, what the server read and dropped, and what it read
        // after: each sent once more.
        assert_eq!(c.retried, server.abandoned() - cut + server.unprocessed());
        assert!(
            (cut..=cut + 1).contains(&c.connections_opened),
            "{} connections for {cut} lost",
            c.connections_opened
        );
    }
}
