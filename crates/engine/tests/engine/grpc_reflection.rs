//! Server reflection against the test server's reflection service: the Greeter's schema
//! asked for over one connection (its import asked by name), v1alpha when v1 is not
//! served, and each broken service refused with its reason, whatever the way the
//! server's bytes were split (whole, one per write), with exact counts of questions.

use prost_reflect::DescriptorPool;
use shootout_engine::reflection::{fetch, Ask, Found, Limits, ReflectError, Version};
use shootout_model::Target;
use shootout_testserver::{Delivery, GrpcBehavior, H2Behavior, H2Server, Reflect};
use std::time::Duration;

fn server(r: Reflect, d: Delivery) -> H2Server {
    H2Server::start_with(H2Behavior::Grpc(GrpcBehavior::Reflection(r)), d, false).unwrap()
}

fn ask(server: &H2Server, ask: &Ask, limits: Limits) -> Result<Found, ReflectError> {
    let target = Target::parse(&server.url("/")).unwrap();
    fetch(&target, &[], Duration::from_secs(5), ask, limits)
}

fn greeter() -> Ask {
    Ask::Service("helloworld.Greeter".into())
}

/// Runs `check` on a fresh server with `r`, served whole and then one byte per write,
/// once the server has seen its connections end.
fn each_way(r: Reflect, check: impl Fn(&H2Server)) {
    for d in [Delivery::Whole, Delivery::Bytewise] {
        let s = server(r, d);
        check(&s);
        assert!(
            s.wait_idle(Duration::from_secs(10)),
            "{r:?} {d:?}: connections left open"
        );
    }
}

#[test]
fn the_greeter_s_schema_comes_with_its_import() {
    each_way(Reflect::Serves, |s| {
        let found = ask(s, &greeter(), Limits::default()).unwrap();
        assert_eq!(found.version, Version::V1);
        assert_eq!(found.services, ["helloworld.Greeter"]);
        let pool = DescriptorPool::decode(found.set.as_slice()).unwrap();
        let names: Vec<_> = pool.files().map(|f| f.name().to_string()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let greeter = pool.get_service_by_name("helloworld.Greeter").unwrap();
        let streams = greeter.methods().find(|m| m.name() == "SayHellos").unwrap();
        assert!(streams.is_server_streaming());
        assert_eq!(streams.output().full_name(), "helloworld.HelloReply");
        // Two questions (the service's file, then its import by name) on one connection.
        assert_eq!((s.answers(), s.connections()), (2, 1));
    });
}

#[test]
fn every_service_is_listed_and_reflection_s_own_left_out() {
    each_way(Reflect::Serves, |s| {
        let found = ask(s, &Ask::All, Limits::default()).unwrap();
        assert_eq!(found.services, ["helloworld.Greeter"]);
        // The list, the Greeter's file, its import.
        assert_eq!(s.answers(), 3);
    });
}

#[test]
fn v1alpha_is_asked_when_v1_is_not_served() {
    each_way(Reflect::AlphaOnly, |s| {
        let found = ask(s, &greeter(), Limits::default()).unwrap();
        assert_eq!(found.version, Version::V1Alpha);
        assert_eq!(found.services, ["helloworld.Greeter"]);
        // v1's refusal on its own connection, then two questions of v1alpha.
        assert_eq!((s.answers(), s.connections()), (3, 2));
    });
}

#[test]
fn a_server_without_reflection_is_named_so() {
    each_way(Reflect::Absent, |s| {
        let e = ask(s, &greeter(), Limits::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server does not serve gRPC server reflection (grpc.reflection.v1 and v1alpha: grpc.reflection.v1 grpc-status 12, UNIMPLEMENTED; grpc.reflection.v1alpha grpc-status 12, UNIMPLEMENTED)"
        );
        assert_eq!(s.answers(), 2);
    });
}

#[test]
fn broken_reflection_services_are_refused() {
    each_way(Reflect::Garbled, |s| {
        let e = ask(s, &greeter(), Limits::default()).unwrap_err();
        assert!(
            matches!(&e, ReflectError::Garbled(m) if m.contains("does not parse")),
            "{e}"
        );
        assert_eq!(s.answers(), 1);
    });
    each_way(Reflect::OtherName, |s| {
        let e = ask(s, &greeter(), Limits::default()).unwrap_err();
        assert!(
            matches!(&e, ReflectError::OtherReply { got, .. } if got.contains("other.Other")),
            "{e}"
        );
        assert_eq!(s.answers(), 1);
    });
}

#[test]
fn an_endless_chain_of_imports_stops_at_the_file_limit() {
    let limits = Limits {
        files: 5,
        ..Limits::default()
    };
    each_way(Reflect::EndlessImports, |s| {
        let e = ask(s, &greeter(), limits).unwrap_err();
        assert_eq!(e, ReflectError::TooManyFiles(5));
        // The service's file, then one question per import: the sixth file refused.
        assert_eq!(s.answers(), 6);
    });
}

#[test]
fn a_closed_port_is_named() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let target = Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let e = fetch(
        &target,
        &[],
        Duration::from_secs(2),
        &greeter(),
        Limits::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, ReflectError::Connect(m) if m.contains("cannot connect")),
        "{e}"
    );
}
