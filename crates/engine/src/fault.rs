//! A fault injected on purpose, in debug builds only, so that tests can check what a bug
//! of shootout's is counted as (`generator_fault`, never the server's class) and how a run
//! that met one ends. `SHOOTOUT_DEBUG_PANIC_AT=N` in the environment (read once), or
//! [`panic_at`], makes the N-th WebSocket read that the process handles panic inside its
//! worker, where the event loop catches it as it would catch a real bug. Release builds
//! hold none of this: [`reached`] is compiled out of them.

#[cfg(debug_assertions)]
use std::sync::atomic::{AtomicU64, Ordering};

/// Reads left before the panic; 0: none armed.
#[cfg(debug_assertions)]
static LEFT: AtomicU64 = AtomicU64::new(0);

/// Whether the environment was read.
#[cfg(debug_assertions)]
static FROM_ENV: std::sync::Once = std::sync::Once::new();

/// Makes the `n`-th WebSocket read from now panic (debug builds only; 0 disarms).
#[doc(hidden)]
pub fn panic_at(n: u64) {
    #[cfg(debug_assertions)]
    {
        FROM_ENV.call_once(|| {});
        LEFT.store(n, Ordering::SeqCst);
    }
    #[cfg(not(debug_assertions))]
    let _ = n;
}

/// One WebSocket read: panics if it is the one armed.
#[cfg(debug_assertions)]
pub(crate) fn reached() {
    FROM_ENV.call_once(|| {
        let n = std::env::var("SHOOTOUT_DEBUG_PANIC_AT").ok();
        if let Some(n) = n.and_then(|n| n.parse().ok()) {
            LEFT.store(n, Ordering::SeqCst);
        }
    });
    let hit = LEFT
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
            left.checked_sub(1)
        })
        .is_ok_and(|before| before == 1);
    assert!(!hit, "a fault injected by SHOOTOUT_DEBUG_PANIC_AT");
}
