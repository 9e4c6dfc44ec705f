//! A shard other than 0 at the start barrier: it connects to shard 0 (again every
//! [`RETRY`] while shard 0 is not up yet; after losing it before the start, or being told
//! `BUSY` by a shard 0 crowded by strangers, again after a wait that doubles each time, up
//! to [`MAX_BACKOFF`]), says who it is, and waits. When shard 0 says `GO` it asks `WHEN`
//! ([`ASKS`] times) and times each answer: shard 0 wrote it within that round trip, so
//! taking the middle of the shortest puts the start within half that round trip of shard
//! 0's, and the clock shard 0 sent says how far this machine's clock is from its own (as
//! NTP keeps the sample of the shortest round trip). Everything it waits for is bounded by
//! the wait limit (a start announced more than `MAX_START_IN` ahead is refused), and by
//! Ctrl-C.

use super::{resolve_addr, shown, stopped, BarrierPlan, Met, Role, ASKS, INTERRUPTED, STOP_EVERY};
use shootout_model::barrier::{read_msg, BarrierFacts, Msg, MAX_LINE};
use shootout_model::saved::unix_ns;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

/// How often to try shard 0 again while it cannot be reached.
const RETRY: Duration = Duration::from_millis(200);

/// The longest wait before joining again after losing shard 0 or being told `BUSY`
/// several times in a row (the waits double from [`RETRY`]).
const MAX_BACKOFF: Duration = Duration::from_millis(3200);

/// The wait before joining again after `losses` sessions in a row ended without a start.
fn backoff(losses: u32) -> Duration {
    RETRY
        .saturating_mul(1 << losses.saturating_sub(1).min(16))
        .min(MAX_BACKOFF)
}

/// The longest a connection attempt may take.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);

/// How long the rest of a line may take once its first byte came.
const LINE_WITHIN: Duration = Duration::from_secs(5);

/// How long a write to shard 0 may block.
const WRITE_WITHIN: Duration = Duration::from_secs(5);

/// How a session with shard 0 ended without a start.
enum Ended {
    /// Shard 0 refused this shard, or the barrier failed: the reason.
    Refused(String),
    /// The connection was lost before the start: try again.
    Lost(String),
    /// The wait limit passed.
    Timeout,
    /// Ctrl-C or SIGTERM.
    Stopped,
}

/// Waits at shard 0's barrier (see the module); the error says why there is no start.
pub fn meet(plan: &BarrierPlan, quiet: bool, stop: &AtomicBool) -> Result<Met, String> {
    let Role::Member(to) = &plan.role else {
        return Err("shard 0 listens; it does not connect".into());
    };
    let began = Instant::now();
    let deadline = began + plan.wait;
    let timeout = || {
        format!(
            "waited {} at the start barrier and shard 0 at {to} did not start the load: some shard never came (shard 0's log names it), or give a longer --barrier-wait",
            shown(plan.wait)
        )
    };
    let mut losses = 0u32;
    loop {
        let stream = connect(to, deadline, plan.wait, quiet, stop)?;
        match session(plan, &stream, deadline, quiet, stop, &mut losses) {
            Ok((start_at, skew_ns, rtt)) => {
                let facts = BarrierFacts {
                    skew_ns,
                    rtt,
                    waited: began.elapsed(),
                };
                if !quiet {
                    say!(
                        "barrier: all here; this clock is {:.3} ms {} shard 0's (round trip {:.3} ms)",
                        skew_ns.unsigned_abs() as f64 / 1e6,
                        if skew_ns >= 0 { "ahead of" } else { "behind" },
                        rtt.as_secs_f64() * 1e3
                    );
                }
                return Ok(Met { start_at, facts });
            }
            Err(Ended::Refused(why)) => return Err(format!("shard 0 at {to}: {why}")),
            Err(Ended::Timeout) => return Err(timeout()),
            Err(Ended::Stopped) => return Err(INTERRUPTED.into()),
            Err(Ended::Lost(e)) => {
                losses += 1;
                let again = backoff(losses);
                if Instant::now() + again >= deadline {
                    return Err(timeout());
                }
                if !quiet {
                    say!(
                        "barrier: lost shard 0 at {to} before the start ({e}); joining again in {}",
                        shown(again)
                    );
                }
                if crate::stop::sleep_unless_stopped(again, stop) {
                    return Err(INTERRUPTED.into());
                }
            }
        }
    }
}

/// Connects to shard 0 at `to`, trying again every [`RETRY`] until `deadline`.
fn connect(
    to: &str,
    deadline: Instant,
    wait: Duration,
    quiet: bool,
    stop: &AtomicBool,
) -> Result<TcpStream, String> {
    let mut said = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let tried = resolve_addr(to).and_then(|addr| {
            TcpStream::connect_timeout(&addr, left.clamp(Duration::from_millis(1), CONNECT_WITHIN))
        });
        match tried {
            Ok(stream) => return Ok(stream),
            Err(e) if Instant::now() + RETRY >= deadline => {
                return Err(format!(
                    "shard 0 at {to} could not be reached in {} ({e}): check that shard 0 runs and that --barrier names it, or give a longer --barrier-wait",
                    shown(wait)
                ))
            }
            Err(e) => {
                if !said && !quiet {
                    say!("barrier: waiting for shard 0 at {to} ({e})");
                    said = true;
                }
                if crate::stop::sleep_unless_stopped(RETRY, stop) {
                    return Err(INTERRUPTED.into());
                }
            }
        }
    }
}

/// One connection to shard 0: `HELLO`, then its answers until the start; returns the start
/// on this machine's clock, this clock minus shard 0's (ns) and the round trip.
fn session(
    plan: &BarrierPlan,
    stream: &TcpStream,
    deadline: Instant,
    quiet: bool,
    stop: &AtomicBool,
    losses: &mut u32,
) -> Result<(SystemTime, i64, Duration), Ended> {
    let lost = |e: std::io::Error| Ended::Lost(e.to_string());
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_WITHIN));
    let mut reader = BufReader::with_capacity(MAX_LINE, stream.try_clone().map_err(lost)?);
    let hello = Msg::Hello {
        run: plan.run_id.clone(),
        index: plan.shard.index,
        count: plan.shard.count,
    };
    send(stream, &hello).map_err(lost)?;
    loop {
        next_line(stream, &mut reader, deadline, stop)?;
        let msg = read_msg(&mut reader).map_err(read_error)?;
        if let Msg::Wait { .. } = msg {
            // Heard out: a loss from now on starts the waits afresh.
            *losses = 0;
        }
        match msg {
            Msg::Wait { joined, count } if !quiet => say!(
                "barrier: shard {} joined; {joined} of {count} shards here",
                plan.shard.index
            ),
            Msg::Wait { .. } => {}
            Msg::Go => return ask(stream, &mut reader, deadline, stop),
            other => return Err(unexpected(other)),
        }
    }
}

/// Asks shard 0 for the start [`ASKS`] times, timing each answer, and keeps the one of
/// the shortest round trip: the start within half of it.
fn ask(
    stream: &TcpStream,
    reader: &mut BufReader<TcpStream>,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<(SystemTime, i64, Duration), Ended> {
    let mut best: Option<(SystemTime, i64, Duration)> = None;
    for _ in 0..ASKS {
        let asked = Instant::now();
        send(stream, &Msg::When).map_err(|e| Ended::Lost(e.to_string()))?;
        next_line(stream, reader, deadline, stop)?;
        match read_msg(reader).map_err(read_error)? {
            Msg::Start { in_ns, wall_ns } => {
                let answer = start(in_ns, wall_ns, asked.elapsed());
                best = match best {
                    Some(b) if b.2 <= answer.2 => Some(b),
                    _ => Some(answer),
                };
            }
            other => return Err(unexpected(other)),
        }
    }
    best.ok_or_else(|| Ended::Lost("no answer".into()))
}

/// A message a shard does not expect from shard 0: its refusal, or a protocol error.
fn unexpected(m: Msg) -> Ended {
    match m {
        Msg::Fail(why) => Ended::Refused(why),
        Msg::Busy => {
            Ended::Lost("it was busy: connections that said nothing crowded its port".into())
        }
        other => Ended::Refused(format!("it sent {other}, not what a barrier answers")),
    }
}

/// What a failed read of shard 0's next line means.
fn read_error(e: std::io::Error) -> Ended {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Ended::Lost(format!(
            "part of a line, then nothing for {}",
            shown(LINE_WITHIN)
        )),
        ErrorKind::InvalidData => Ended::Refused(e.to_string()),
        _ => Ended::Lost(e.to_string()),
    }
}

/// Waits for the first byte of shard 0's next line (looking at `stop` meanwhile), then
/// gives the rest of the line [`LINE_WITHIN`] to come.
fn next_line(
    stream: &TcpStream,
    reader: &mut BufReader<TcpStream>,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<(), Ended> {
    let lost = |e: std::io::Error| Ended::Lost(e.to_string());
    loop {
        if stopped(stop) {
            return Err(Ended::Stopped);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Ended::Timeout);
        }
        stream
            .set_read_timeout(Some(left.min(STOP_EVERY)))
            .map_err(lost)?;
        match reader.fill_buf() {
            // Data, or the close (which read_msg reports).
            Ok(_) => break,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(lost(e)),
        }
    }
    stream.set_read_timeout(Some(LINE_WITHIN)).map_err(lost)
}

/// The start and the clocks' difference from shard 0's `START in_ns wall_ns`, received now,
/// `rtt` after asking: shard 0 wrote it, on average, half the round trip ago.
fn start(in_ns: u64, wall_ns: i64, rtt: Duration) -> (SystemTime, i64, Duration) {
    let now = SystemTime::now();
    let half = rtt / 2;
    let written = now.checked_sub(half).unwrap_or(now);
    let skew_ns = unix_ns(written).saturating_sub(wall_ns);
    let start_at = now + Duration::from_nanos(in_ns).saturating_sub(half);
    (start_at, skew_ns, rtt)
}

/// Writes `m` on `stream`.
fn send(mut stream: &TcpStream, m: &Msg) -> std::io::Result<()> {
    stream.write_all(m.to_line().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joining_again_waits_longer_each_time_up_to_a_bound() {
        let ms = |n| backoff(n).as_millis();
        assert_eq!(
            [ms(1), ms(2), ms(3), ms(4), ms(5), ms(6), ms(40)],
            [200, 400, 800, 1600, 3200, 3200, 3200]
        );
    }
}
