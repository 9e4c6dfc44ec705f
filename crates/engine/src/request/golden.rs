//! Every wire form rendered from the protocol-neutral request, held byte for byte to what
//! each protocol's own builder produced before they shared it (`golden.txt`, written by
//! those builders): HTTP/1.1's bytes (built, and rendered for a list with templates),
//! HTTP/2's three HPACK blocks, table size and `-v 2` text, HTTP/3's QPACK-encoded
//! HEADERS and DATA frames, `-v 2` text and control stream.

use crate::template::Gen;
use crate::{h1, h2, h3};
use std::collections::HashMap;

use shootout_model::{LoadSpec, RequestSpec, Target};

/// Requests of every shape the builders treat apart: defaults, user fields that
/// replace ours (Host, User-Agent, Accept), names and values in QPACK's static table,
/// a value over 127 bytes (a two-byte length), a body, a method that needs a
/// Content-Length without one, HEAD, and a connection not kept.
fn cases() -> Vec<(&'static str, Target, RequestSpec)> {
    let plain = Target::parse("http://127.0.0.1:8080/a?b=1").unwrap();
    let tls = Target::parse("https://h3.test:4433/").unwrap();
    let s = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    };
    vec![
        ("get", plain.clone(), RequestSpec::default()),
        ("get-tls", tls.clone(), RequestSpec::default()),
        (
            "post-fields",
            plain.clone(),
            RequestSpec {
                method: "POST".into(),
                headers: s(&[
                    ("X-Id", "7"),
                    ("Host", "h.test"),
                    ("X-Long", &"v".repeat(300)),
                ]),
                body: b"abc".to_vec(),
                keepalive: true,
            },
        ),
        (
            "static-table",
            tls.clone(),
            RequestSpec {
                method: "PUT".into(),
                headers: s(&[
                    ("Accept", "application/json"),
                    ("Accept-Encoding", "gzip, deflate, br"),
                    ("Cache-Control", "no-cache"),
                    ("Content-Type", "application/json"),
                    ("User-Agent", "u/1"),
                ]),
                body: Vec::new(),
                keepalive: true,
            },
        ),
        (
            "head-close",
            plain.clone(),
            RequestSpec {
                method: "HEAD".into(),
                headers: s(&[("X-A", "1"), ("host", "other:81")]),
                body: Vec::new(),
                keepalive: false,
            },
        ),
        (
            "delete-body-tls",
            tls,
            RequestSpec {
                method: "DELETE".into(),
                headers: s(&[("X-Big", &"w".repeat(200))]),
                body: vec![b'z'; 200],
                keepalive: true,
            },
        ),
    ]
}

/// A list whose entries replace the run's fields, hold templates in the path, a
/// header value and a body, share one body, and name another origin's Host.
fn list_spec() -> LoadSpec {
    let text = "GET /a/{seq}\nX-R: {rand:1-9}\n\nPOST /b\nX-Run: entry\n@t\n\nPUT /c\n@t\n\nDELETE /d\nHost: h.test\n\nPATCH /e\n";
    let list = shootout_model::requests::RequestList::parse(
        "l",
        text,
        None,
        shootout_model::requests::Order::Seq,
        7,
        |_| Ok(b"id={seq}&r={rand:10-99}".to_vec()),
    )
    .unwrap();
    let mut spec = LoadSpec::new(Target::parse("http://127.0.0.1:8080/").unwrap());
    spec.request.headers = vec![
        ("X-Run".into(), "run".into()),
        ("Accept".into(), "text/plain".into()),
    ];
    spec.list = Some(list);
    spec
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The recorded forms, by `NAME FORM`.
fn golden() -> HashMap<String, String> {
    include_str!("golden.txt")
        .lines()
        .filter_map(|l| {
            if let Some(v) = l.strip_prefix("version ") {
                return Some(("version".to_string(), v.to_string()));
            }
            let mut words = l.splitn(3, ' ');
            let (name, form) = (words.next()?, words.next()?);
            Some((
                format!("{name} {form}"),
                words.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// Compares `got` with the recorded form, naming it when they differ. Our `User-Agent`
/// names shootout's version: the recorded one stands for this one (of the same length,
/// so that no encoded length changes with it).
fn same(want: &HashMap<String, String>, key: &str, got: String) {
    let w = want
        .get(key)
        .unwrap_or_else(|| panic!("no recorded form {key}"));
    let (recorded, now) = (&want["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        recorded.len(),
        now.len(),
        "record golden.txt again for this version"
    );
    let got = got
        .replace(&hex(now.as_bytes()), &hex(recorded.as_bytes()))
        .replace(now, recorded);
    assert_eq!(&got, w, "{key}");
}

#[test]
fn every_protocol_renders_what_its_own_builder_did() {
    let want = golden();
    for (name, t, req) in cases() {
        let k = |form: &str| format!("{name} {form}");
        same(&want, &k("h1"), hex(&h1::request::build(&t, &req).unwrap()));
        let h2 = h2::request::prepare_one(&t, &req).unwrap();
        same(&want, &k("h2.first"), hex(&h2.first));
        same(&want, &k("h2.indexed"), hex(&h2.indexed));
        same(&want, &k("h2.plain"), hex(&h2.plain));
        same(&want, &k("h2.table_size"), h2.table_size.to_string());
        same(&want, &k("h2.text"), hex(&h2.text));
        same(&want, &k("h2.body"), hex(&h2.body));
        same(&want, &k("h2.head"), h2.head_request.to_string());
        let h3 = h3::request::prepare_one(&t, &req).unwrap();
        same(&want, &k("h3.bytes"), hex(&h3.bytes));
        same(&want, &k("h3.text"), hex(&h3.text));
        same(&want, &k("h3.control"), hex(&h3.control));
        same(&want, &k("h3.server_name"), h3.server_name.clone());
        same(&want, &k("h3.head"), h3.head_request.to_string());
        let mut spec = LoadSpec::new(t.clone());
        spec.request = req.clone();
        let r = h1::request::Prepared::new(&super::Requests::prepare(&spec).unwrap()).unwrap();
        let mut gen = Gen::new(r.seed, r.random, r.kinds.len(), 0, 1);
        let (mut o, mut sc) = (Vec::new(), Vec::new());
        r.render(0, &mut gen, &mut o, &mut sc);
        let (head, idempotent) = (r.kinds[0].head, r.kinds[0].idempotent);
        same(
            &want,
            &k("h1.render"),
            format!("{} {head} {idempotent}", hex(&o)),
        );
    }
    let spec = list_spec();
    let r = h1::request::Prepared::new(&super::Requests::prepare(&spec).unwrap()).unwrap();
    let kinds: Vec<String> = r
        .kinds
        .iter()
        .map(|k| format!("{} {}", k.head, k.idempotent))
        .collect();
    let recorded: Vec<&str> = include_str!("golden.txt")
        .lines()
        .filter_map(|l| l.strip_prefix("list kind "))
        .collect();
    assert_eq!(kinds, recorded);
    for w in 0..2 {
        let mut gen = Gen::new(r.seed, r.random, r.kinds.len(), w, 2);
        let (mut o, mut sc) = (Vec::new(), Vec::new());
        for _ in 0..12 {
            let k = gen.pick();
            r.render(k, &mut gen, &mut o, &mut sc);
        }
        same(&want, &format!("list render{w}"), hex(&o));
    }
}
