//! The start barrier's messages: how the shards of one load agree on when to start
//! however late each of them comes (`shootout load --barrier`). Shard 0 listens; every other
//! shard connects and says who it is ([`Msg::Hello`]: the run, its index, the shard count);
//! shard 0 answers how many are there ([`Msg::Wait`]) and, once all are, tells each to ask
//! ([`Msg::Go`]); each asks ([`Msg::When`], a few times) and is told how long until the
//! start, with shard 0's clock ([`Msg::Start`]). That exchange is a round trip the shard
//! times, so it knows the start within half its round trip and how far its clock is from
//! shard 0's.
//! [`Msg::Fail`] refuses a shard or ends the barrier, with the reason; [`Msg::Busy`] closes a
//! connection shard 0 had no room to hear out (strangers crowding the port), and the shard
//! tries again.
//!
//! Every message is one line of printable ASCII ending in `\n`, at most [`MAX_LINE`] bytes:
//! fields separated by one space, numbers in decimal. [`read_msg`] reads one, never more
//! than [`MAX_LINE`] bytes, and [`Msg::parse`] refuses anything else: the port is open to
//! whatever reaches it, so what comes in is untrusted.
//!
//! Seams: the CLI's barrier (`crates/cli/src/load/barrier`) does the networking; the result
//! file carries what a shard measured ([`BarrierFacts`]). No I/O here beyond reading from
//! a `BufRead` it is given.

use std::fmt;
use std::io::{self, BufRead, Read};
use std::time::Duration;

/// The protocol's name and version, the second field of [`Msg::Hello`].
pub const PROTOCOL: &str = "shootout-barrier/1";

/// The longest message, in bytes, its `\n` included.
pub const MAX_LINE: usize = 256;

/// The longest run id, in bytes.
pub const MAX_RUN_ID: usize = 64;

/// The longest wait [`Msg::Start`] may announce: a start further ahead is refused. Shard 0
/// fixes the start two seconds after the last shard came (`START_LEAD` in the CLI), so
/// no answer of a shard 0 is further ahead; ten seconds leaves room for a slower lead in a
/// later version, and keeps a shard from being held past its own `--barrier-wait` by a
/// peer that announces a start an hour ahead.
pub const MAX_START_IN: Duration = Duration::from_secs(10);

/// One message of the barrier (see the module for the exchange).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// Shard → shard 0: `HELLO shootout-barrier/1 RUN INDEX COUNT`.
    Hello {
        /// The run both must belong to ([`check_run_id`]).
        run: String,
        /// This shard's index.
        index: u32,
        /// The fleet's shard count.
        count: u32,
    },
    /// Shard 0 → shard: `WAIT JOINED COUNT`, shard 0 itself counted.
    Wait {
        /// Shards at the barrier now.
        joined: u32,
        /// Shards the barrier waits for.
        count: u32,
    },
    /// Shard 0 → shard: `GO`: all are here, ask when to start.
    Go,
    /// Shard → shard 0: `WHEN`.
    When,
    /// Shard 0 → shard: `START IN_NS WALL_NS`: the start is `IN_NS` nanoseconds after this
    /// message was written, when shard 0's clock read `WALL_NS` (nanoseconds since the Unix
    /// epoch, negative before it).
    Start {
        /// Nanoseconds until the start, at most [`MAX_START_IN`].
        in_ns: u64,
        /// Shard 0's wall clock as it wrote the message, in nanoseconds since the Unix epoch.
        wall_ns: i64,
    },
    /// Shard 0 → a connection not yet admitted: `BUSY`: shard 0 closes it to make room for
    /// newer ones (the port was crowded by connections that said nothing); a shard tries
    /// again.
    Busy,
    /// Either way: `FAIL REASON`, then the connection is closed. The reason is printable
    /// ASCII, spaces included.
    Fail(String),
}

/// A line that is not a message of the barrier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MsgError {
    /// The peer closed the connection before a whole line.
    #[error("the connection was closed")]
    Closed,
    /// No `\n` within [`MAX_LINE`] bytes.
    #[error("a line longer than {MAX_LINE} bytes: not a shootout barrier")]
    TooLong,
    /// A byte that is not printable ASCII.
    #[error("a byte that is not printable ASCII: not a shootout barrier")]
    NotText,
    /// A line that is not a message, or a message with a wrong field.
    #[error("{0}: not a shootout barrier message")]
    Bad(String),
}

impl Msg {
    /// Reads one line, without its `\n` (see [`read_msg`] to read it from a stream).
    pub fn parse(line: &[u8]) -> Result<Msg, MsgError> {
        if line.len() >= MAX_LINE {
            return Err(MsgError::TooLong);
        }
        if !line.iter().all(|b| (b' '..=b'~').contains(b)) {
            return Err(MsgError::NotText);
        }
        // Printable ASCII: UTF-8 by construction.
        let text = std::str::from_utf8(line).map_err(|_| MsgError::NotText)?;
        let bad = |what: &str| MsgError::Bad(format!("{what} in {text:?}"));
        if let Some(reason) = text.strip_prefix("FAIL ") {
            return Ok(Msg::Fail(reason.to_string()));
        }
        let fields: Vec<&str> = text.split(' ').collect();
        match fields[..] {
            ["HELLO", proto, run, index, count] => {
                if proto != PROTOCOL {
                    return Err(bad(&format!("protocol {proto:?}, not {PROTOCOL}")));
                }
                check_run_id(run).map_err(|e| bad(&e))?;
                let (index, count) = (number(index)?, number(count)?);
                if index >= count {
                    return Err(bad("an index not below the count"));
                }
                Ok(Msg::Hello {
                    run: run.to_string(),
                    index,
                    count,
                })
            }
            ["WAIT", joined, count] => Ok(Msg::Wait {
                joined: number(joined)?,
                count: number(count)?,
            }),
            ["GO"] => Ok(Msg::Go),
            ["BUSY"] => Ok(Msg::Busy),
            ["WHEN"] => Ok(Msg::When),
            ["START", in_ns, wall_ns] => {
                let in_ns: u64 = number(in_ns)?;
                if in_ns > MAX_START_IN.as_nanos() as u64 {
                    return Err(bad(&format!(
                        "a start more than {} s ahead (a barrier's start is 2 s after the last shard comes)",
                        MAX_START_IN.as_secs()
                    )));
                }
                Ok(Msg::Start {
                    in_ns,
                    wall_ns: signed(wall_ns)?,
                })
            }
            _ => Err(bad("an unknown message")),
        }
    }

    /// The line that [`Msg::parse`] reads back as this message, `\n` included. A
    /// [`Msg::Fail`] reason is cut to fit and its other characters written as `?`.
    pub fn to_line(&self) -> String {
        let line = match self {
            Msg::Hello { run, index, count } => format!("HELLO {PROTOCOL} {run} {index} {count}"),
            Msg::Wait { joined, count } => format!("WAIT {joined} {count}"),
            Msg::Go => "GO".into(),
            Msg::Busy => "BUSY".into(),
            Msg::When => "WHEN".into(),
            Msg::Start { in_ns, wall_ns } => format!("START {in_ns} {wall_ns}"),
            Msg::Fail(reason) => {
                let text: String = reason
                    .chars()
                    .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
                    .take(MAX_LINE - "FAIL \n".len())
                    .collect();
                format!("FAIL {text}")
            }
        };
        line + "\n"
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.to_line().trim_end())
    }
}

/// A decimal number of at most 20 digits, no sign.
fn number<T: std::str::FromStr>(field: &str) -> Result<T, MsgError> {
    if field.is_empty() || field.len() > 20 || !field.bytes().all(|b| b.is_ascii_digit()) {
        return Err(MsgError::Bad(format!("{field:?} is not a number")));
    }
    field
        .parse()
        .map_err(|_| MsgError::Bad(format!("{field:?} is out of range")))
}

/// A decimal number with an optional `-`.
fn signed(field: &str) -> Result<i64, MsgError> {
    match field.strip_prefix('-') {
        Some(digits) => number::<i64>(digits).map(|n| -n),
        None => number(field),
    }
}

/// A run id: 1 to [`MAX_RUN_ID`] bytes of printable ASCII other than the space, so shards
/// of different runs (two jobs of one name, one applied after the other) never meet.
pub fn check_run_id(run: &str) -> Result<(), String> {
    if run.is_empty() || run.len() > MAX_RUN_ID || !run.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "run id {run:?}: give 1 to {MAX_RUN_ID} printable ASCII characters without spaces"
        ));
    }
    Ok(())
}

/// Reads one message from `r`: at most [`MAX_LINE`] bytes, up to and including its `\n`.
/// An I/O error (a read timeout) is returned as it is; a bad line as
/// [`io::ErrorKind::InvalidData`] holding its [`MsgError`]; a close before a whole line as
/// [`io::ErrorKind::UnexpectedEof`].
pub fn read_msg(r: &mut impl BufRead) -> io::Result<Msg> {
    let mut line = Vec::with_capacity(64);
    r.take(MAX_LINE as u64).read_until(b'\n', &mut line)?;
    match line.pop() {
        Some(b'\n') => Msg::parse(&line).map_err(invalid),
        _ if line.len() + 1 >= MAX_LINE => Err(invalid(MsgError::TooLong)),
        _ => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            MsgError::Closed,
        )),
    }
}

fn invalid(e: MsgError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// What a shard measured at the barrier, for its result file and the merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BarrierFacts {
    /// This shard's clock minus shard 0's, in nanoseconds, as seen at the start exchange
    /// (0 for shard 0); known within half of `rtt`.
    pub skew_ns: i64,
    /// The round trip of the start exchange (zero for shard 0): the start is known to
    /// within half of it.
    pub rtt: Duration,
    /// How long this shard waited at the barrier for the others.
    pub waited: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_reads_back_from_its_line() {
        for m in [
            Msg::Hello {
                run: "a1-b_2:x".into(),
                index: 3,
                count: 4,
            },
            Msg::Wait {
                joined: 2,
                count: 10_000,
            },
            Msg::Go,
            Msg::Busy,
            Msg::When,
            Msg::Start {
                in_ns: 2_000_000_000,
                wall_ns: -5,
            },
            Msg::Start {
                in_ns: 0,
                wall_ns: i64::MAX,
            },
            Msg::Start {
                in_ns: MAX_START_IN.as_nanos() as u64,
                wall_ns: 1,
            },
            Msg::Fail("shard 2 never came".into()),
        ] {
            let line = m.to_line();
            let mut r = line.as_bytes();
            assert_eq!(read_msg(&mut r).unwrap(), m, "{line:?}");
            assert!(r.is_empty());
        }
    }

    #[test]
    fn a_fail_reason_is_cut_and_made_printable() {
        let m = Msg::Fail(format!("é\n{}", "x".repeat(1000)));
        let line = m.to_line();
        assert_eq!(line.len(), MAX_LINE);
        let back = read_msg(&mut line.as_bytes()).unwrap();
        assert!(matches!(back, Msg::Fail(r) if r.starts_with("??xxx")));
    }

    #[test]
    fn bad_lines_are_refused_and_reads_are_bounded() {
        for bad in [
            &b"HELLO shootout-barrier/2 r 0 1"[..],
            b"HELLO shootout-barrier/1 r 1 1",
            b"HELLO shootout-barrier/1 r 1",
            b"HELLO shootout-barrier/1 r +1 2",
            b"HELLO shootout-barrier/1 r 99999999999999999999 2",
            b"HELLO  shootout-barrier/1 r 0 2",
            b"START 3600000000001 0",
            // 50 minutes ahead: it held a shard past its wait.
            b"START 3000000000000 0",
            b"START 10000000001 0",
            b"START 1 --1",
            b"START 1 -9223372036854775808",
            b"WAIT 1",
            b"GO ",
            b"go",
            b"",
            b"WHEN\r",
            b"FAIL\xff",
        ] {
            assert!(
                Msg::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        // A stream without a line end is read no further than a line's length.
        let endless = vec![b'A'; 10 * MAX_LINE];
        let mut r = &endless[..];
        let e = read_msg(&mut r).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(r.len(), 10 * MAX_LINE - MAX_LINE);
        let e = read_msg(&mut &b"GO"[..]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
