use super::*;

const USERS: &str = "user_name,password\nann,secret1\nbob,secret2\n";

fn files(path: &Path) -> Result<Vec<u8>, String> {
    match path.file_name().and_then(|n| n.to_str()) {
        Some("users.csv") => Ok(USERS.as_bytes().to_vec()),
        Some("body.bin") => Ok(b"\x00\x01binary".to_vec()),
        _ => Err("No such file or directory".into()),
    }
}

fn read(text: &str) -> Result<JourneyFile, JourneyError> {
    parse(text, "dir/j.toml", &mut files)
}

fn error(text: &str) -> JourneyError {
    read(text).unwrap_err()
}

const PASTEBIN: &str = r#"
[[journey]]
name = "reader"
weight = 9
think = "exp(2s)"
[[journey.step]]
name = "home"
get = "/"
expect = { status = 200, body_contains = "Pastebin" }
[[journey.step]]
name = "read"
get = "/content/{rand:1-100}"

[[journey]]
name = "writer"
weight = 1
data = "users.csv"
[[journey.step]]
name = "login"
post = "/login"
form = { user = "{user_name}", password = "{password}" }
capture = { csrf = { regex = 'name="csrf" value="([^"]+)"' } }
[[journey.step]]
name = "post"
post = "/"
form = { content = "{rand_text:12000}", csrf = "{csrf}" }
expect = { status = 302 }
capture = { paste = { header = "Location", regex = "/content/(\\w+)" } }
[[journey.step]]
name = "read back"
get = "/content/{paste}"
expect = { status = 200, body_contains = "{rand_text}" }
"#;

#[test]
fn the_pastebin_journeys_read_whole() {
    let f = read(PASTEBIN).unwrap();
    assert_eq!(f.journeys.len(), 2);
    let reader = &f.journeys[0];
    assert_eq!((reader.name.as_str(), reader.weight), ("reader", 9));
    assert_eq!(reader.think, Think::Exp(std::time::Duration::from_secs(2)));
    assert_eq!(reader.segments, [Segment::One(0), Segment::One(1)]);
    assert!(reader.steps[0].expect.status.contains(200));
    assert!(!reader.steps[0].expect.status.contains(404));
    let writer = &f.journeys[1];
    assert_eq!(writer.vars, ["user_name", "password", "csrf", "paste"]);
    let data = writer.data.as_ref().unwrap();
    assert_eq!(data.table.rows.len(), 2);
    assert_eq!(data.end, DataEnd::Wrap);
    let login = &writer.steps[0];
    assert_eq!(login.method, "POST");
    assert_eq!(login.line, 18);
    let Body::Template(form) = &login.body else {
        panic!("form body")
    };
    assert_eq!(
        form.pieces,
        vec![
            Piece::Lit("password=".into()),
            Piece::Var(Source::Named("password".into()), Encoding::Form, 1),
            Piece::Lit("&user=".into()),
            Piece::Var(Source::Named("user_name".into()), Encoding::Form, 0),
        ]
    );
    assert_eq!(login.headers[0].0, "Content-Type");
    assert_eq!(login.captures[0].from, CaptureFrom::Body);
    assert_eq!(login.captures[0].within, DEFAULT_WITHIN);
    assert_eq!(writer.prefix(0), DEFAULT_WITHIN);
    let post = &writer.steps[1];
    assert_eq!(
        post.captures[0].from,
        CaptureFrom::Header("Location".into())
    );
    assert_eq!(writer.prefix(1), 0);
    let back = &writer.steps[2];
    assert_eq!(
        back.target.pieces[1],
        Piece::Var(Source::Named("paste".into()), Encoding::Path, 3)
    );
}

#[test]
fn step_keys_bodies_groups_and_defaults() {
    let f = read(
        r#"
[[journey]]
name = "api"
think = "uniform(1s,2s)"
data = "users.csv"
data_end = "stop"
[[journey.step]]
method = "purge"
path = "/cache"
headers = { Authorization = "Bearer {password}" }
once = true
[[journey.step]]
put = "/item/{seq}"
json = { name = "{user_name}\"", n = 3, tags = ["a", "{user}"] }
capture = { id = { json = "/id", within = 100 } }
on_failure = "go on"
repeat = 3
[[journey.step]]
name = "a"
get = "/a/{id}"
weight = 3
capture = { x = { cookie = "sid" } }
[[journey.step]]
name = "b"
get = "/b"
weight = 1
body_file = "body.bin"
[[journey.step]]
get = "/after/{x}"
expect = { status = "2xx,304", length = 5, json = { "/ok" = true }, within = 10 }
"#,
    )
    .unwrap();
    let j = &f.journeys[0];
    assert_eq!(j.data.as_ref().unwrap().end, DataEnd::Stop);
    assert_eq!(
        j.segments,
        [
            Segment::One(0),
            Segment::One(1),
            Segment::Choice(vec![vec![2], vec![3]]),
            Segment::One(4)
        ]
    );
    assert_eq!(j.steps[0].method, "PURGE");
    assert!(j.steps[0].once);
    assert_eq!(j.steps[1].name, "PUT /item/{seq}");
    assert_eq!((j.steps[1].repeat, j.steps[1].go_on), (3, true));
    let Body::Template(json) = &j.steps[1].body else {
        panic!("json body")
    };
    assert_eq!(json.pieces[0], Piece::Lit("{\"n\":3,\"name\":\"".into()));
    assert_eq!(
        json.pieces[2],
        Piece::Lit("\\\"\",\"tags\":[\"a\",\"".into())
    );
    assert_eq!(j.prefix(1), 100);
    assert_eq!(j.steps[2].weight, Some(3));
    assert_eq!(j.steps[3].body, Body::Bytes(b"\x00\x01binary".to_vec()));
    let e = &j.steps[4].expect;
    assert!(e.status.contains(304) && e.status.contains(201) && !e.status.contains(302));
    assert_eq!(e.length, Some(5));
    assert_eq!(
        e.json,
        [(
            "/ok".to_string(),
            JsonWant::Value(serde_json::Value::Bool(true))
        )]
    );
    assert_eq!(j.prefix(4), 10);
}

/// A string expected under a JSON pointer is a template: with placeholders it is drawn
/// per request; without them (escaped braces included) it is its text.
#[test]
fn json_expectations_hold_placeholders() {
    let f = read("[[journey]]\nname = \"a\"\ndata = \"users.csv\"\n[[journey.step]]\nget = \"/\"\nexpect = { json = { \"/u\" = \"{user_name}\", \"/v\" = \"{{x}}\", \"/n\" = 3 } }\n").unwrap();
    let e = &f.journeys[0].steps[0].expect;
    assert_eq!(e.json[0], ("/n".into(), JsonWant::Value(3.into())));
    let JsonWant::Text(t) = &e.json[1].1 else {
        panic!("{:?}", e.json)
    };
    assert!(!t.is_literal());
    assert_eq!(e.json[2], ("/v".into(), JsonWant::Value("{x}".into())));
}

/// Each mistake: the line it is on and words of its fix.
#[test]
fn every_mistake_names_line_key_and_fix() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "add a [[journey]]"),
        ("[[journey]]\nname = \"a\"\n", 1, "has no step"),
        ("[[journey]]\nname = \"a\"\nweight = 0\n[[journey.step]]\nget = \"/\"\n", 3, "weight 0 never runs"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nweight = 0\n", 5, "weight 0 is never chosen"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/{nope}\"\n", 4, "get: unknown variable {nope}: the journey has no data file"),
        ("[[journey]]\nname = \"a\"\ndata = \"users.csv\"\n[[journey.step]]\nget = \"/{pass}\"\n", 5, "get: unknown variable {pass}: not a column of users.csv (its columns: user_name, password)"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/{t}\"\n[[journey.step]]\nget = \"/\"\ncapture = { t = { json = \"/t\" } }\n", 4, "get: {t} is used before a step captures it"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\ncapture = { t = { regex = \"(\" } }\n", 5, "does not compile"),
        ("[[journey]]\nname = \"a\"\ndata = \"missing.csv\"\n[[journey.step]]\nget = \"/\"\n", 3, "No such file"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nbogus = 1\n", 5, "unknown field `bogus`"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"x\"\n", 4, "get = \"x\": the path must start with /"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\npost = \"/\"\n", 3, "says its request once"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nbody = \"x\"\nform = { a = \"b\" }\n", 6, "one of body, form"),
        ("[[journey]]\nname = \"a\"\nthink = \"soon\"\n[[journey.step]]\nget = \"/\"\n", 3, "think"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\n[[journey.step]]\nget = \"/\"\n", 5, "two steps are named \"GET /\""),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\n[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\n", 6, "taken by an earlier journey"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/{rand_text}\"\n", 4, "get: {rand_text} reuses the last {rand_text:N}, and none is drawn before it"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nheaders = { \"Content-Length\" = \"3\" }\n", 5, "Content-Length"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\ncapture = { seq = { json = \"/a\" } }\n", 5, "templates' own"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\ncapture = { t = { json = \"a\" } }\n", 5, "write \"/a\""),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\ncapture = { t = { regex = \"a\", within = 0 } }\n", 5, "from 1 to"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nexpect = { status = \"abc\" }\n", 5, "not a status list"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\non_failure = \"skip\"\n", 5, "\"go on\""),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nrepeat = 0\n", 5, "repeat = 0"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nbody_file = \"nope.bin\"\n", 5, "body_file"),
        ("[[journey]]\nname = \"a\"\ndata_end = \"stop\"\n[[journey.step]]\nget = \"/\"\n", 3, "data_end without data"),
        ("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nexpect = { json = { \"/u\" = \"{who}\" } }\n", 5, "expect.json.\"/u\": unknown variable {who}"),
    ];
    for (text, line, words) in cases {
        let e = error(text);
        assert_eq!(e.file, "dir/j.toml", "{text}");
        assert!(e.message.contains(words), "{text}\n{}", e.message);
        assert_eq!(e.line, *line, "{text}\n{}", e.message);
    }
}

#[test]
fn alternatives_do_not_see_each_others_captures_but_later_steps_do() {
    let group = "[[journey]]\nname = \"a\"\n[[journey.step]]\nname = \"x\"\nget = \"/\"\nweight = 1\ncapture = { t = { json = \"/t\" } }\n[[journey.step]]\nname = \"y\"\nget = \"/{t}\"\nweight = 1\n";
    assert!(error(group).message.contains("used before"));
    let after = "[[journey]]\nname = \"a\"\n[[journey.step]]\nname = \"x\"\nget = \"/\"\nweight = 1\ncapture = { t = { json = \"/t\" } }\n[[journey.step]]\nname = \"y\"\nget = \"/\"\nweight = 1\n[[journey.step]]\nget = \"/{t}\"\n";
    assert!(read(after).is_ok());
}

#[test]
fn data_file_errors_name_both_files() {
    let e = parse(
        "[[journey]]\nname = \"a\"\ndata = \"bad.csv\"\n[[journey.step]]\nget = \"/\"\n",
        "j.toml",
        &mut |_| Ok(b"a,b\n1\n".to_vec()),
    )
    .unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("data file bad.csv:2"), "{}", e.message);
}

#[test]
fn tasks_are_alternatives_of_several_steps() {
    let f = read(
        r#"
[[journey]]
name = "locust"
[[journey.step]]
name = "login"
post = "/login"
once = true
capture = { token = { json = "/token" } }
[[journey.step]]
name = "index"
get = "/"
task = "index"
weight = 2
capture = { id = { json = "/id" } }
[[journey.step]]
name = "item"
get = "/item/{id}?t={token}"
task = "index"
[[journey.step]]
name = "about"
get = "/about"
task = "about"
"#,
    )
    .unwrap();
    let j = &f.journeys[0];
    assert_eq!(
        j.segments,
        [Segment::One(0), Segment::Choice(vec![vec![1, 2], vec![3]])]
    );
    assert_eq!(j.steps[2].task.as_deref(), Some("index"));
    // A task's later step may not see another task's captures.
    let e = error(
        "[[journey]]\nname = \"a\"\n[[journey.step]]\nname = \"x\"\nget = \"/\"\ntask = \"x\"\ncapture = { t = { json = \"/t\" } }\n[[journey.step]]\nname = \"y\"\nget = \"/{t}\"\ntask = \"y\"\n",
    );
    assert!(e.message.contains("used before"), "{}", e.message);
    let e = error(
        "[[journey]]\nname = \"a\"\n[[journey.step]]\nname = \"x\"\nget = \"/\"\ntask = \"x\"\n[[journey.step]]\nname = \"y\"\nget = \"/\"\ntask = \"x\"\nweight = 2\n",
    );
    assert_eq!(e.line, 11);
    assert!(e.message.contains("first step only"), "{}", e.message);
    let e = error("[[journey]]\nname = \"a\"\n[[journey.step]]\nget = \"/\"\nonce = true\n");
    assert!(e.message.contains("every step has once"), "{}", e.message);
}

/// A journey's share of the weights, a step's repeat and its alternative's share of its
/// group each scale the sends a journey makes of a step, in the run's order of steps.
#[test]
fn sends_per_journey_weigh_journeys_alternatives_and_repeats() {
    let f = read(
        r#"
[[journey]]
name = "reader"
weight = 3
[[journey.step]]
name = "home"
get = "/"
repeat = 2
[[journey.step]]
name = "a"
get = "/a"
weight = 3
[[journey.step]]
name = "b"
get = "/b"
weight = 1
[[journey]]
name = "writer"
[[journey.step]]
name = "index"
get = "/"
task = "index"
weight = 2
[[journey.step]]
name = "item"
get = "/item"
task = "index"
[[journey.step]]
name = "about"
get = "/about"
task = "about"
"#,
    )
    .unwrap();
    let got = f.sends_per_journey();
    let want = [
        1.5,
        0.5625,
        0.1875,
        0.25 * 2.0 / 3.0,
        0.25 * 2.0 / 3.0,
        0.25 / 3.0,
    ];
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{got:?}");
    }
    // Every journey of the pastebin file sends each of its steps once: 9 readers × 2
    // steps and 1 writer × 3 steps in 10 journeys.
    let sum: f64 = read(PASTEBIN).unwrap().sends_per_journey().iter().sum();
    assert!((sum - 2.1).abs() < 1e-12, "{sum}");
    // The most one journey sends: a reader sends home twice and one of a and b (3), a
    // writer index and item, or about (2); each step at most its repeat.
    assert_eq!(f.most_sends_per_journey(), 3);
    assert_eq!(f.step_repeats(), [2, 1, 1, 1, 1, 1]);
    assert_eq!(read(PASTEBIN).unwrap().most_sends_per_journey(), 3);
}
