//! gRPC server reflection on the test server ([`crate::GrpcBehavior::Reflection`]):
//! `grpc.reflection.v1` and `v1alpha`'s `ServerReflectionInfo`, answering each question
//! (a `ServerReflectionRequest` sent as the stream's message) with one
//! `ServerReflectionResponse`, as grpc/grpc's `doc/server-reflection.md` describes. The
//! schema it serves is the Greeter's, in two files: `helloworld.proto` (the service:
//! `SayHello`, and `SayHellos` streaming its replies) imports `greeting.proto` (its two
//! messages), so a client must ask for the import by name. Every message is encoded by
//! hand here, apart from any client's code. Each [`Reflect`] but [`Reflect::Serves`] and
//! [`Reflect::AlphaOnly`] breaks the service for a client to refuse.

/// How the reflection service answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reflect {
    /// v1 and v1alpha both served.
    Serves,
    /// v1 answered UNIMPLEMENTED (trailers only); v1alpha served.
    AlphaOnly,
    /// Neither served: UNIMPLEMENTED for both, as a server without reflection answers.
    Absent,
    /// The file asked for comes as bytes that are no `FileDescriptorProto`.
    Garbled,
    /// The reply says it answers a question about `other.Other`, and holds its file.
    OtherName,
    /// Each file imports another, `chain1.proto`, `chain2.proto`, …, without end.
    EndlessImports,
}

/// The paths of the service, v1's and v1alpha's.
const V1: &str = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
const V1ALPHA: &str = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

/// What a request to `path` gets: `None` for a path that is not the reflection service
/// (the Greeter answers it); `Some(Err(12))` for a version not served (its grpc-status);
/// `Some(Ok(reply))` the message answering the question in `msg`.
pub fn answer(r: Reflect, path: &str, msg: &[u8]) -> Option<Result<Vec<u8>, u32>> {
    let served = match path {
        V1 => !matches!(r, Reflect::AlphaOnly | Reflect::Absent),
        V1ALPHA => r != Reflect::Absent,
        _ => return None,
    };
    if !served {
        return Some(Err(12));
    }
    Some(Ok(reply(r, msg)))
}

/// The question of a `ServerReflectionRequest` (its field number and its string).
fn question(mut msg: &[u8]) -> Option<(u64, Vec<u8>)> {
    let mut found = None;
    while let Some(key) = super::varint(&mut msg) {
        let len = match key & 7 {
            0 => {
                super::varint(&mut msg)?;
                continue;
            }
            2 => super::varint(&mut msg)? as usize,
            _ => return None,
        };
        let value = msg.get(..len)?;
        if matches!(key >> 3, 3 | 4 | 7) {
            found = Some((key >> 3, value.to_vec()));
        }
        msg = &msg[len..];
    }
    found
}

/// The reply to the question in `msg`.
fn reply(r: Reflect, msg: &[u8]) -> Vec<u8> {
    let Some((field, value)) = question(msg) else {
        return error(3, "no question");
    };
    // original_request: the question asked (OtherName: another one).
    let original = match r {
        Reflect::OtherName => ld(4, b"other.Other"),
        _ => ld(field, &value),
    };
    let mut out = ld(2, &original);
    let files = match (field, &value[..]) {
        (7, _) => {
            let service = |name: &[u8]| ld(1, &ld(1, name));
            let list = [
                service(b"helloworld.Greeter"),
                service(b"grpc.reflection.v1.ServerReflection"),
            ]
            .concat();
            out.extend(ld(6, &list));
            return out;
        }
        _ if r == Reflect::Garbled => vec![vec![0x0a, 0x09, b'x']],
        _ if r == Reflect::OtherName => vec![other_file()],
        (4, b"helloworld.Greeter") if r == Reflect::EndlessImports => vec![chain(0)],
        (4, b"helloworld.Greeter") => vec![greeter_file()],
        (3, b"greeting.proto") => vec![greeting_file()],
        (3, name) if r == Reflect::EndlessImports => match chain_number(name) {
            Some(n) => vec![chain(n)],
            None => return error(5, "no such file"),
        },
        _ => return error(5, "not found"),
    };
    let body: Vec<u8> = files.iter().flat_map(|f| ld(1, f)).collect();
    out.extend(ld(4, &body));
    out
}

/// A `ServerReflectionResponse` holding an `ErrorResponse`.
fn error(code: u64, message: &str) -> Vec<u8> {
    ld(7, &[vi(1, code), ld(2, message.as_bytes())].concat())
}

/// `helloworld.proto`: the Greeter service, importing `greeting.proto`.
fn greeter_file() -> Vec<u8> {
    let method = |name: &[u8], streaming: bool| {
        let mut m = [
            ld(1, name),
            ld(2, b".helloworld.HelloRequest"),
            ld(3, b".helloworld.HelloReply"),
        ]
        .concat();
        if streaming {
            m.extend(vi(6, 1));
        }
        ld(2, &m)
    };
    let service = [
        ld(1, b"Greeter"),
        method(b"SayHello", false),
        method(b"SayHellos", true),
    ]
    .concat();
    [
        ld(1, b"helloworld.proto"),
        ld(2, b"helloworld"),
        ld(3, b"greeting.proto"),
        ld(6, &service),
        ld(12, b"proto3"),
    ]
    .concat()
}

/// `greeting.proto`: `HelloRequest { string name = 1; }`, `HelloReply { string message = 1; }`.
fn greeting_file() -> Vec<u8> {
    [
        ld(1, b"greeting.proto"),
        ld(2, b"helloworld"),
        ld(4, &message(b"HelloRequest", b"name")),
        ld(4, &message(b"HelloReply", b"message")),
        ld(12, b"proto3"),
    ]
    .concat()
}

/// A `DescriptorProto` of one string field, number 1.
fn message(name: &[u8], field: &[u8]) -> Vec<u8> {
    // FieldDescriptorProto: name, number 1, LABEL_OPTIONAL (1), TYPE_STRING (9), json_name.
    let f = [ld(1, field), vi(3, 1), vi(4, 1), vi(5, 9), ld(10, field)].concat();
    [ld(1, name), ld(2, &f)].concat()
}

/// `other.proto`: a service `other.Other`, no messages.
fn other_file() -> Vec<u8> {
    [
        ld(1, b"other.proto"),
        ld(2, b"other"),
        ld(6, &ld(1, b"Other")),
        ld(12, b"proto3"),
    ]
    .concat()
}

/// `chainN.proto`, importing `chain{N+1}.proto`.
fn chain(n: u64) -> Vec<u8> {
    [
        ld(1, format!("chain{n}.proto").as_bytes()),
        ld(2, format!("chain{n}").as_bytes()),
        ld(3, format!("chain{}.proto", n + 1).as_bytes()),
        ld(12, b"proto3"),
    ]
    .concat()
}

/// N of `chainN.proto`.
fn chain_number(name: &[u8]) -> Option<u64> {
    std::str::from_utf8(name)
        .ok()?
        .strip_prefix("chain")?
        .strip_suffix(".proto")?
        .parse()
        .ok()
}

/// A length-delimited field.
fn ld(field: u64, bytes: &[u8]) -> Vec<u8> {
    let mut out = varint_bytes(field << 3 | 2);
    out.extend(varint_bytes(bytes.len() as u64));
    out.extend_from_slice(bytes);
    out
}

/// A varint field.
fn vi(field: u64, v: u64) -> Vec<u8> {
    let mut out = varint_bytes(field << 3);
    out.extend(varint_bytes(v));
    out
}

fn varint_bytes(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_read_and_versions_served_as_asked() {
        let ask = ld(4, b"helloworld.Greeter");
        assert_eq!(question(&ask), Some((4, b"helloworld.Greeter".to_vec())));
        assert_eq!(
            answer(Reflect::Serves, "/helloworld.Greeter/SayHello", &ask),
            None
        );
        assert_eq!(answer(Reflect::AlphaOnly, V1, &ask), Some(Err(12)));
        assert!(matches!(
            answer(Reflect::AlphaOnly, V1ALPHA, &ask),
            Some(Ok(_))
        ));
        assert_eq!(answer(Reflect::Absent, V1ALPHA, &ask), Some(Err(12)));
        assert_eq!(chain_number(b"chain12.proto"), Some(12));
        // A question about a file not served: an error (7) alone.
        let r = reply(Reflect::Serves, &ld(3, b"nope.proto"));
        assert_eq!(top_fields(&r), [7]);
        // The Greeter's file: original_request, then file_descriptor_response (4).
        assert_eq!(top_fields(&reply(Reflect::Serves, &ask)), [2, 4]);
        assert_eq!(top_fields(&reply(Reflect::Serves, &ld(7, b""))), [2, 6]);
    }

    /// The field numbers of a message's length-delimited fields, in order.
    fn top_fields(mut b: &[u8]) -> Vec<u64> {
        let mut all = Vec::new();
        while let Some(key) = crate::grpc::varint(&mut b) {
            let len = crate::grpc::varint(&mut b).unwrap() as usize;
            all.push(key >> 3);
            b = &b[len..];
        }
        all
    }
}
