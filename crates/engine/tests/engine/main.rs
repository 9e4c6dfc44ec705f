//! The engine's behaviour tests, one module per subject, built as one test binary: apart,
//! each file was a test binary of its own, compiled and linked on its own. A test's name
//! is its module's and its own (`h2::every_stream_is_answered_and_counted_once`), so
//! `cargo test -p shootout-engine --test engine h2::` runs one subject's tests.
//!
//! Two files stay binaries of their own, beside this folder, since each needs its process
//! to itself: `fault.rs` arms a process-wide fault (the third WebSocket read of any worker
//! panics) and silences the process's panic hook while it runs, and `h2_hostile.rs` bounds
//! the memory of its cases by the process's peak resident size, which the other tests'
//! servers and runs would raise beside it. A new file that needs neither goes here as a
//! module.

#[path = "../common/mod.rs"]
mod common;

mod arrivals;
mod behaviors;
mod busy_poll;
mod conformance;
mod grpc_bidi;
mod grpc_gzip;
mod grpc_reflection;
mod grpc_stream;
mod grpc_unary;
mod h2;
mod h3;
mod hostile;
mod in_flight;
mod journeys;
mod late;
mod live_detail;
mod open_loop;
mod pipeline;
mod rfc9113;
mod tls;
mod ws;
