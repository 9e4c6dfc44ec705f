//! A fault of shootout's own (a panic in a worker, injected on purpose in debug builds:
//! [`shootout_engine::fault`]) is counted as `generator_fault`, never as the server's
//! `malformed`; the worker goes on. Alone in its process: the injection is process-wide.

mod common;

use common::{closed, failures, go};
use shootout_model::{FailureKind, Protocol};
use shootout_testserver::{WsBehavior, WsServer};

/// The third WebSocket read panics: the one message it would have answered fails as a
/// generator fault, its connection is replaced and the other nine go through.
#[test]
fn a_panic_in_a_worker_is_a_generator_fault_not_the_servers() {
    let server = WsServer::start(WsBehavior::Echo).unwrap();
    let mut s = closed(&server.url("/echo"), 10, 1);
    s.protocol = Protocol::WebSocket;
    s.request.body = b"hello".to_vec();
    s.ws_text = true;
    s.expect.echo = true;
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    shootout_engine::fault::panic_at(3);
    let r = go(&s);
    shootout_engine::fault::panic_at(0);
    std::panic::set_hook(quiet);
    assert_eq!(failures(&r), vec![(FailureKind::GeneratorFault, 1)]);
    assert_eq!((r.counts.ok, r.counts.completed), (9, 10));
    assert_eq!(
        server.answers(),
        10,
        "the server answered the failed one too"
    );
}
