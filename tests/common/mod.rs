//! Helpers shared by the command-line tests (each `tests/*.rs` is its own crate and
//! uses what it needs).
#![allow(dead_code)]

use std::process::Output;

/// Asserts that the command succeeded, showing its stderr when it did not.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
