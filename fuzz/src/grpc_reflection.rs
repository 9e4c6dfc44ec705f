//! Target `grpc_reflection`: the replies of a server's reflection service as a server
//! could send them (`shootout_engine::reflection::walk::Walk`: each a
//! `ServerReflectionResponse`, its files `FileDescriptorProto`s), to a walk asking for the
//! service `a.S` (the first input byte even) or for every service (odd), within 4 files
//! and 4096 bytes of them.
//!
//! The rest of the input is the replies, each a 2-byte big-endian length and that many
//! bytes (cut short at the end), given to the walk's questions in turn. Invariants: no
//! panic; never more than 4 files nor 4096 bytes kept; no more questions than files
//! allowed and services listed can cause (a walk ends); and a schema the walk finishes
//! with decodes and holds every service it names.

use shootout_engine::reflection::walk::Walk;
use shootout_engine::reflection::{Ask, Limits, Version};
use std::time::Duration;

const LIMITS: Limits = Limits {
    files: 4,
    bytes: 4096,
    deadline: Duration::from_secs(1),
};

pub fn check(data: &[u8]) {
    let Some((&mode, mut rest)) = data.split_first() else {
        return;
    };
    let ask = match mode % 2 {
        0 => Ask::Service("a.S".into()),
        _ => Ask::All,
    };
    let mut w = Walk::new(ask, LIMITS);
    // The list may name up to 1000 services, each a question; then the imports.
    let mut questions = 0;
    while let Some((asked, _)) = w.question() {
        questions += 1;
        assert!(
            questions <= 1 + 1000 + LIMITS.files,
            "the walk does not end"
        );
        let Some((n, tail)) = rest.split_first_chunk::<2>() else {
            return;
        };
        let n = usize::from(u16::from_be_bytes(*n)).min(tail.len());
        let (reply, tail) = tail.split_at(n);
        rest = tail;
        let taken = w.take(&asked, reply);
        let (files, bytes) = w.kept();
        assert!(
            files <= LIMITS.files && bytes <= LIMITS.bytes,
            "{files} files, {bytes} bytes"
        );
        if taken.is_err() {
            return;
        }
    }
    if let Ok(found) = w.finish(Version::V1) {
        let pool =
            shootout_engine::grpc::decode_pool(&found.set).expect("a finished schema decodes");
        for s in &found.services {
            assert!(
                pool.get_service_by_name(s).is_some(),
                "{s} named but not defined"
            );
        }
    }
}
