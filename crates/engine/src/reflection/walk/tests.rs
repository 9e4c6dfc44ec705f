use super::*;
use prost_reflect::prost_types::{
    DescriptorProto, FileDescriptorProto, MethodDescriptorProto, ServiceDescriptorProto,
};
use prost_reflect::DescriptorPool;

/// A file `name` of package `pkg` importing `deps`, with a message `M` and, when
/// `service` is given, a service of that name with one method `Call(M) returns (M)`.
fn file(name: &str, pkg: &str, deps: &[&str], service: Option<&str>) -> Vec<u8> {
    FileDescriptorProto {
        name: Some(name.into()),
        package: Some(pkg.into()),
        dependency: deps.iter().map(|d| d.to_string()).collect(),
        message_type: vec![DescriptorProto {
            name: Some("M".into()),
            ..Default::default()
        }],
        service: service
            .map(|s| ServiceDescriptorProto {
                name: Some(s.into()),
                method: vec![MethodDescriptorProto {
                    name: Some("Call".into()),
                    input_type: Some(format!(".{pkg}.M")),
                    output_type: Some(format!(".{pkg}.M")),
                    ..Default::default()
                }],
                ..Default::default()
            })
            .into_iter()
            .collect(),
        syntax: Some("proto3".into()),
        ..Default::default()
    }
    .encode_to_vec()
}

fn limits(files: usize) -> Limits {
    Limits {
        files,
        bytes: 1 << 20,
        deadline: std::time::Duration::from_secs(1),
    }
}

#[test]
fn the_service_s_file_then_each_import_is_asked_for() {
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, bytes) = w.question().unwrap();
    assert_eq!(asked, Asked::Symbol("a.S".into()));
    assert_eq!(asked_of(&bytes), Some(asked.clone()));
    let a = file("a.proto", "a", &["b.proto"], Some("S"));
    w.take(&asked, &files_reply(Some(asked.clone()), vec![a]))
        .unwrap();
    let (asked, _) = w.question().unwrap();
    assert_eq!(asked, Asked::File("b.proto".into()));
    w.take(
        &asked,
        &files_reply(None, vec![file("b.proto", "b", &[], None)]),
    )
    .unwrap();
    assert_eq!(w.question(), None);
    let found = w.finish(Version::V1).unwrap();
    assert_eq!(found.services, ["a.S"]);
    let pool = DescriptorPool::decode(found.set.as_slice()).unwrap();
    assert_eq!(pool.files().count(), 2);
}

#[test]
fn an_import_sent_with_the_file_is_not_asked_for_again() {
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    let both = vec![
        file("a.proto", "a", &["b.proto"], Some("S")),
        file("b.proto", "b", &[], None),
    ];
    w.take(&asked, &files_reply(None, both)).unwrap();
    assert_eq!(w.question(), None);
    assert!(w.finish(Version::V1).is_ok());
}

#[test]
fn listed_services_are_each_asked_for_and_reflection_s_own_left_out() {
    let mut w = Walk::new(Ask::All, limits(8));
    let (asked, _) = w.question().unwrap();
    assert_eq!(asked, Asked::Services(String::new()));
    let list = services_reply(&["a.S", "grpc.reflection.v1.ServerReflection", "b.T"]);
    w.take(&asked, &list).unwrap();
    let (first, _) = w.question().unwrap();
    assert_eq!(first, Asked::Symbol("a.S".into()));
    w.take(
        &first,
        &files_reply(None, vec![file("a.proto", "a", &[], Some("S"))]),
    )
    .unwrap();
    let (second, _) = w.question().unwrap();
    assert_eq!(second, Asked::Symbol("b.T".into()));
    w.take(
        &second,
        &files_reply(None, vec![file("b.proto", "b", &[], Some("T"))]),
    )
    .unwrap();
    assert_eq!(w.question(), None);
    assert_eq!(w.finish(Version::V1Alpha).unwrap().services, ["a.S", "b.T"]);
}

#[test]
fn a_descriptor_that_does_not_parse_is_refused() {
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    let e = w
        .take(&asked, &files_reply(None, vec![vec![0x0a, 0x09, b'x']]))
        .unwrap_err();
    assert!(
        matches!(&e, ReflectError::Garbled(m) if m.contains("does not parse")),
        "{e}"
    );
    // Not a reply at all.
    let e = w.take(&asked, &[0xff; 7]).unwrap_err();
    assert!(matches!(e, ReflectError::Garbled(_)), "{e}");
    // A file that reads but does not make a schema (its method's type is nowhere).
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    let mut broken =
        FileDescriptorProto::decode(&file("a.proto", "a", &[], Some("S"))[..]).unwrap();
    broken.message_type.clear();
    w.take(&asked, &files_reply(None, vec![broken.encode_to_vec()]))
        .unwrap();
    assert!(matches!(
        w.finish(Version::V1).unwrap_err(),
        ReflectError::Descriptors(_)
    ));
}

#[test]
fn a_reply_for_another_name_is_refused() {
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    let other = Asked::Symbol("other.Other".into());
    let reply = files_reply(
        Some(other),
        vec![file("o.proto", "other", &[], Some("Other"))],
    );
    let e = w.take(&asked, &reply).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server's reflection answered the file defining \"other.Other\" when asked for the file defining \"a.S\""
    );
    // The same file without saying what it answers: the schema lacks the service.
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    let reply = files_reply(None, vec![file("o.proto", "other", &[], Some("Other"))]);
    w.take(&asked, &reply).unwrap();
    assert_eq!(
        w.finish(Version::V1).unwrap_err(),
        ReflectError::Missing("a.S".into())
    );
    // A file asked by name that does not come.
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    w.take(
        &asked,
        &files_reply(None, vec![file("a.proto", "a", &["b.proto"], Some("S"))]),
    )
    .unwrap();
    let (asked, _) = w.question().unwrap();
    let e = w
        .take(
            &asked,
            &files_reply(None, vec![file("c.proto", "c", &[], None)]),
        )
        .unwrap_err();
    assert!(matches!(e, ReflectError::OtherReply { .. }), "{e}");
    // A list of services where files were asked for.
    let e = w.take(&asked, &services_reply(&["a.S"])).unwrap_err();
    assert!(matches!(e, ReflectError::OtherReply { .. }), "{e}");
}

#[test]
fn an_endless_chain_of_imports_stops_at_the_limit() {
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(5));
    let mut n = 0;
    let e = loop {
        let (asked, _) = w.question().expect("every file imports the next");
        let name = format!("f{n}.proto");
        let next = format!("f{}.proto", n + 1);
        let reply = files_reply(
            None,
            vec![file(&name, &format!("p{n}"), &[&next], Some("S"))],
        );
        match w.take(&asked, &reply) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(n, 5, "five files kept, the sixth refused");
    assert_eq!(e, ReflectError::TooManyFiles(5));
    // And by bytes.
    let mut w = Walk::new(
        Ask::Service("a.S".into()),
        Limits {
            bytes: 100,
            ..limits(50)
        },
    );
    assert_eq!(w.room(), 100 + 64 * 1024);
    let (asked, _) = w.question().unwrap();
    let big = file(&"x".repeat(120), "a", &[], Some("S"));
    assert_eq!(
        w.take(&asked, &files_reply(None, vec![big])).unwrap_err(),
        ReflectError::TooLarge(100)
    );
}

#[test]
fn an_error_reply_names_what_was_asked() {
    let mut w = Walk::new(Ask::Service("a.S".into()), limits(8));
    let (asked, _) = w.question().unwrap();
    let e = w.take(&asked, &error_reply(5, "not found")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server's reflection could not give the file defining \"a.S\": not found (error 5)"
    );
}
