//! End-to-end tests of `shootout load grpc://…` against the test server's Greeter: a run's
//! JSON document, a hostile answer's class in every format, and each mistake refused
//! before the run with the flag and the fix named.

use assert_cmd::Command;
use shootout_testserver::{GrpcBehavior, H2Behavior, H2Server, GREETER_PROTO};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

fn greeter(g: GrpcBehavior) -> (H2Server, String) {
    let server = H2Server::start(H2Behavior::Grpc(g)).unwrap();
    let url = server
        .url("/helloworld.Greeter/SayHello")
        .replacen("http://", "grpc://", 1);
    (server, url)
}

#[test]
fn unary_calls_are_loaded_and_reported() {
    let (server, url) = greeter(GrpcBehavior::Greeter);
    let out = shootout()
        .args([
            "load",
            "-q",
            "--json",
            "-n",
            "50",
            "-c",
            "2",
            "--streams",
            "4",
        ])
        .args(["--proto", GREETER_PROTO, "--message", r#"{"name":"bob"}"#])
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["load"]["protocol"], "h2");
    assert_eq!(v["target"]["url"], url);
    assert_eq!(v["target"]["method"], "POST");
    assert_eq!(v["target"]["path"], "/helloworld.Greeter/SayHello");
    assert_eq!(v["requests"]["ok"], 50);
    assert_eq!(v["requests"]["failed"], 0);
    assert_eq!(v["failures"]["grpc_unavailable"], 0);
    assert_eq!(v["status_codes"]["200"], 50);
    assert_eq!(server.answers(), 50);
    // Each answer: the prefix and HelloReply { message: "hello bob" }.
    assert_eq!(v["bytes"]["body"], 50 * (5 + 11));
}

#[test]
fn a_failed_call_is_counted_under_its_status_in_every_format() {
    let (_server, url) = greeter(GrpcBehavior::TrailersOnly(14));
    for (format, shows) in [
        ("json", "\"grpc_unavailable\": 8"),
        ("text", "8 grpc_unavailable"),
    ] {
        let out = shootout()
            .args(["load", "-q", "--format", format, "-n", "8"])
            .args(["--proto", GREETER_PROTO])
            .arg(&url)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(shows), "{format}: {stdout}");
    }
}

/// A run's JSON document (a run whose every call failed exits 1, and still writes it).
fn run_json(args: &[&str], url: &str) -> serde_json::Value {
    let out = shootout()
        .args(["load", "-q", "--json", "--proto", GREETER_PROTO])
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {stderr}"
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stderr}"))
}

#[test]
fn replies_are_checked_against_expect_json_and_expect_echo() {
    let (_greeter, url) = greeter(GrpcBehavior::Greeter);
    let m = ["-n", "20", "--message", r#"{"name":"bob"}"#];
    // (flags, ok, failed as body)
    let rows: &[(&[&str], u64, u64)] = &[
        (&["--expect-json", r#"{"message":"hello bob"}"#], 20, 0),
        (&["--expect-json", r#"{"message":"hello x"}"#], 0, 20),
        (&["--expect-echo"], 0, 20),
    ];
    for &(flags, ok, body) in rows {
        let v = run_json(&[&m[..], flags].concat(), &url);
        assert_eq!(v["requests"]["ok"], ok, "{flags:?}");
        assert_eq!(v["failures"]["body"], body, "{flags:?}");
    }
    let (_echo, url) = greeter(GrpcBehavior::Echo);
    let v = run_json(&[&m[..], &["--expect-echo"]].concat(), &url);
    assert_eq!(v["requests"]["ok"], 20);
}

#[test]
fn a_message_list_draws_each_call_s_message() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("names.jsonl");
    std::fs::write(&list, "# one name a line\n{\"name\":\"{seq}\"}\n").unwrap();
    let list = list.to_str().unwrap();
    let (_greeter, url) = greeter(GrpcBehavior::Greeter);
    let v = run_json(
        &["-n", "12", "-c", "1", "--threads", "1", "--messages", list],
        &url,
    );
    assert_eq!(v["requests"]["ok"], 12);
    // Names 0 to 11: ten replies "hello N" of 7 bytes and two of 8, each behind its
    // field's 2 bytes and the 5-byte prefix.
    assert_eq!(v["bytes"]["body"], 10 * (5 + 2 + 7) + 2 * (5 + 2 + 8));
    // Each reply is checked against the message its own call sent.
    let (_echo, url) = greeter(GrpcBehavior::Echo);
    let v = run_json(
        &[
            "-n",
            "40",
            "-c",
            "2",
            "--streams",
            "4",
            "--expect-echo",
            "--messages",
            list,
        ],
        &url,
    );
    assert_eq!(v["requests"]["ok"], 40);
}

/// Each mistake: the flags, and what the error must say. Nothing is sent.
#[test]
fn mistakes_are_refused_before_the_run() {
    let (server, url) = greeter(GrpcBehavior::Greeter);
    let base = url
        .trim_end_matches("/helloworld.Greeter/SayHello")
        .to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--proto".into(), "/nonexistent/x.proto".into(), url.clone()],
            "--proto /nonexistent/x.proto: no such file",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                format!("{base}/helloworld.Greeter/Nope"),
            ],
            "helloworld.Greeter has no method \"Nope\" (it has SayHello, SayHellos, SayHelloToAll, Chat)",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                format!("{base}/helloworld.Nope/SayHello"),
            ],
            "the schema has no service \"helloworld.Nope\" (it has helloworld.Greeter)",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--grpc-stream-interval".into(),
                "10ms".into(),
                format!("{base}/helloworld.Greeter/SayHellos"),
            ],
            "--grpc-stream-interval: helloworld.Greeter/SayHellos is not bidirectional",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--grpc-stream-interval".into(),
                "0s".into(),
                format!("{base}/helloworld.Greeter/Chat"),
            ],
            "--grpc-stream-interval 0s: an interval must be more than 0",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--grpc-stream-duration".into(),
                "30s".into(),
                format!("{base}/helloworld.Greeter/Chat"),
            ],
            "--grpc-stream-duration 30s: not below -s 30s",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--grpc-stream-messages".into(),
                "3".into(),
                url.clone(),
            ],
            "--grpc-stream-messages: helloworld.Greeter/SayHello is unary",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--grpc-stream-messages".into(),
                "10001".into(),
                format!("{base}/helloworld.Greeter/SayHelloToAll"),
            ],
            "--grpc-stream-messages 10001: a client stream sends at most 10000 messages a call",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--message".into(),
                format!(r#"{{"name":"{}"}}"#, "x".repeat(10_000)),
                "--grpc-stream-messages".into(),
                "10000".into(),
                format!("{base}/helloworld.Greeter/SayHelloToAll"),
            ],
            "past the 67108864 bytes (64 MiB) a client stream sends a call",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--grpc-stream-duration".into(),
                "30s".into(),
                format!("{base}/helloworld.Greeter/SayHellos"),
            ],
            "not below -s",
        ),
        (
            vec![
                "--grpc-stream-messages".into(),
                "2".into(),
                server.url("/"),
            ],
            "--grpc-stream-messages is for gRPC calls",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--message".into(),
                r#"{"nme":"x"}"#.into(),
                url.clone(),
            ],
            "--message: not a helloworld.HelloRequest in JSON",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "--message".into(),
                r#"{"times":"many"}"#.into(),
                url.clone(),
            ],
            "times (int32)",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "-m".into(),
                "GET".into(),
                url.clone(),
            ],
            "-m: a gRPC call is a POST",
        ),
        (
            vec!["--proto".into(), GREETER_PROTO.into(), server.url("/")],
            "--proto is for gRPC calls",
        ),
        (
            vec![
                "--proto".into(),
                GREETER_PROTO.into(),
                "-d".into(),
                r#"{"name":"x"}"#.into(),
                url.clone(),
            ],
            "ghz's -d DATA is --message",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("m.jsonl");
    std::fs::write(&list, "{\"name\":\"a\"}\n{\"name\":{rand:1-9}}\n").unwrap();
    let list = list.to_str().unwrap().to_string();
    let proto = |more: &[&str]| -> Vec<String> {
        ["--proto", GREETER_PROTO]
            .iter()
            .chain(more)
            .map(|s| s.to_string())
            .chain([url.clone()])
            .collect()
    };
    let cases = cases.into_iter().chain([
        (
            proto(&["--expect-json", r#"{"mesage":"x"}"#]),
            "--expect-json: not fields of a helloworld.HelloReply in JSON",
        ),
        (
            proto(&["--expect-json", r#"{"message":1}"#]),
            "message (string)",
        ),
        (
            proto(&["--messages", list.as_str()]),
            "m.jsonl: message 2: ",
        ),
        (
            proto(&["--messages", list.as_str(), "--message", "{}"]),
            "cannot be used with",
        ),
        (
            vec!["--expect-json".into(), "{}".into(), server.url("/")],
            "--expect-json is for gRPC calls",
        ),
        (
            vec!["--messages".into(), list.clone(), server.url("/")],
            "--messages is for gRPC calls",
        ),
    ]);
    for (args, says) in cases {
        let out = shootout()
            .args(["load", "-q", "-n", "1"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert_eq!(server.requests(), 0);
}

fn stream_url(server: &H2Server, method: &str) -> String {
    server
        .url(&format!("/helloworld.Greeter/{method}"))
        .replacen("http://", "grpc://", 1)
}

#[test]
fn a_server_stream_counts_replies_and_says_so() {
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Stream(5))).unwrap();
    let url = stream_url(&server, "SayHellos");
    let v = run_json(
        &["-n", "6", "-c", "1", "--message", r#"{"name":"bob"}"#],
        &url,
    );
    assert_eq!(v["load"]["unit"], "reply");
    assert_eq!(v["requests"]["ok"], 30);
    assert_eq!(v["status_codes"]["200"], 6, "once a call");
    assert_eq!(v["stream"]["shape"], "server");
    assert_eq!(v["stream"]["calls_ok"], 6);
    assert_eq!(v["stream"]["replies"], 30);
    assert_eq!(v["stream"]["cancelled"], 0);
    assert!(v["stream"]["first_reply_ms"]["p50"].is_number());
    assert!(v["stream"]["gap_ms"]["max"].is_number());
    // The limit cancels each call after 2 replies; the text shows the replies' table.
    let out = shootout()
        .args(["load", "-q", "-n", "4", "-c", "1", "--proto", GREETER_PROTO])
        .args(["--grpc-stream-messages", "2"])
        .arg(&url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Replies (ms)"), "{text}");
    assert!(
        text.contains("4 calls ended well (4 cancelled at the client's limit), 8 replies"),
        "{text}"
    );
    assert_eq!(server.answers(), 10);
}

#[test]
fn a_client_stream_sends_its_messages() {
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Greeter)).unwrap();
    let url = stream_url(&server, "SayHelloToAll");
    let v = run_json(
        &[
            "-n",
            "5",
            "--message",
            r#"{"name":"bob"}"#,
            "--grpc-stream-messages",
            "3",
            "--expect-json",
            r#"{"message":"hello bob,bob,bob"}"#,
        ],
        &url,
    );
    assert_eq!(v["load"]["unit"], "call");
    assert_eq!(v["requests"]["ok"], 5);
    assert_eq!(v["stream"]["shape"], "client");
    assert_eq!(v["stream"]["messages_per_call"], 3);
    assert_eq!(server.messages(), 15);
    // A list's messages, in turn: each call sends the next three.
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("names.jsonl");
    std::fs::write(&list, "{\"name\":\"a\"}\n{\"name\":\"b\"}\n").unwrap();
    let v = run_json(
        &[
            "-n",
            "2",
            "-c",
            "1",
            "--threads",
            "1",
            "--messages",
            list.to_str().unwrap(),
            "--grpc-stream-messages",
            "3",
        ],
        &url,
    );
    assert_eq!(v["requests"]["ok"], 2);
    assert_eq!(server.messages(), 21);
}

#[test]
fn a_bidi_stream_matches_its_messages_and_says_so() {
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Chat)).unwrap();
    let url = stream_url(&server, "Chat");
    let v = run_json(
        &[
            "-n",
            "6",
            "-c",
            "1",
            "--message",
            r#"{"name":"bob"}"#,
            "--grpc-stream-messages",
            "4",
            "--grpc-stream-interval",
            "1ms",
            "--expect-json",
            r#"{"message":"hello bob"}"#,
        ],
        &url,
    );
    assert_eq!(v["load"]["unit"], "message");
    assert_eq!(v["requests"]["ok"], 24);
    assert_eq!(v["status_codes"]["200"], 6, "once a call");
    let st = &v["stream"];
    assert_eq!(st["shape"], "bidi");
    assert_eq!(
        [
            &st["calls_ok"],
            &st["sent"],
            &st["replies"],
            &st["unmatched"],
            &st["unanswered"]
        ],
        [6, 24, 24, 0, 0]
    );
    assert_eq!(st["messages_per_call"], 4);
    assert_eq!(server.messages(), 24);
    // The text says what the counts count; a reply past the messages fails its call.
    let (_extra, url) = {
        let s = H2Server::start(H2Behavior::Grpc(GrpcBehavior::ChatExtra)).unwrap();
        let u = stream_url(&s, "Chat");
        (s, u)
    };
    let out = shootout()
        .args(["load", "-n", "3", "-c", "1", "--proto", GREETER_PROTO])
        .args(["--grpc-stream-messages", "2"])
        .arg(&url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "bidi streaming: 0 calls ended well; 6 messages sent, 6 replies matched in order"
        ),
        "{text}"
    );
    assert!(
        text.contains("3 replies with no message outstanding"),
        "{text}"
    );
    assert!(text.contains("3 grpc_unmatched"), "{text}");
}

/// Rate mode paces calls: the text's schedule says so, and that the counts count the
/// calls' replies; the JSON's schedule names its unit.
#[test]
fn rate_mode_says_it_paces_calls() {
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Stream(3))).unwrap();
    let url = stream_url(&server, "SayHellos");
    let out = shootout()
        .args([
            "load",
            "-n",
            "20",
            "--rate",
            "200",
            "--proto",
            GREETER_PROTO,
        ])
        .arg(&url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("rate 200 calls/s, 20 calls"), "{text}");
    assert!(text.contains("target 200 calls/s, sent "), "{text}");
    assert!(
        text.contains(
            "(the schedule paces calls; the counts above count replies); 20 of 20 calls due sent"
        ),
        "{text}"
    );
    let v = run_json(&["-n", "20", "--rate", "200"], &url);
    assert_eq!(v["schedule"]["unit"], "call");
    assert_eq!(v["schedule"]["sent"], 20);
    assert_eq!(v["requests"]["ok"], 60);
}

/// A failed call's answer counts its status and its time, as a failed HTTP answer's does
/// (the text once said "Status codes none" for calls that all failed).
#[test]
fn a_failed_call_counts_its_status_and_its_time() {
    let (_server, url) = greeter(GrpcBehavior::TrailersOnly(14));
    let v = run_json(&["-n", "7"], &url);
    assert_eq!(v["failures"]["grpc_unavailable"], 7);
    assert_eq!(v["status_codes"]["200"], 7);
    assert!(v["latency_ms"]["max"].as_f64().unwrap() > 0.0);
    let out = shootout()
        .args(["load", "-q", "-n", "3", "--proto", GREETER_PROTO])
        .arg(&url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Status codes") && text.contains("200: 3"),
        "{text}"
    );
    assert!(!text.contains("Status codes  none"), "{text}");
}

/// A streaming run saved with `--save` keeps its unit and its calls: `merge` of the one
/// file prints the run's own JSON, and two shards' files add up to the fleet's calls.
#[test]
fn a_streaming_run_is_saved_and_merged_with_its_unit() {
    let server = H2Server::start(H2Behavior::Grpc(GrpcBehavior::Chat)).unwrap();
    let url = stream_url(&server, "Chat");
    let dir = tempfile::tempdir().unwrap();
    let load = |extra: &[&str], file: &std::path::Path| {
        let out = shootout()
            .args(["load", "-q", "--json", "--proto", GREETER_PROTO])
            .args([
                "--message",
                r#"{"name":"bob"}"#,
                "--grpc-stream-messages",
                "3",
            ])
            .args(extra)
            .arg("--save")
            .arg(file)
            .arg(&url)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let merged = |files: &[&std::path::Path]| {
        let out = shootout()
            .args(["merge", "--json"])
            .args(files)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let one = dir.path().join("one.json");
    let own = load(&["-n", "8", "-c", "2"], &one);
    let back = merged(&[&one]);
    assert_eq!(back["load"]["unit"], "message");
    assert_eq!(back["stream"], own["stream"], "the calls, exactly");
    assert_eq!(back["latency_ms"], own["latency_ms"]);
    let shards: Vec<std::path::PathBuf> = (0..2)
        .map(|i| {
            let file = dir.path().join(format!("shard-{i}.json"));
            load(
                &["-n", "10", "-c", "2", "--shard", &format!("{i}/2")],
                &file,
            );
            file
        })
        .collect();
    let fleet = merged(&[&shards[0], &shards[1]]);
    assert_eq!(fleet["load"]["unit"], "message");
    assert_eq!(fleet["requests"]["ok"], 30);
    assert_eq!(fleet["stream"]["calls_ok"], 10);
    assert_eq!(fleet["stream"]["sent"], 30);
    assert_eq!(fleet["stream"]["messages_per_call"], 3);
}
