//! The start barrier of a load spread over many processes (`--barrier HOST:PORT`): the
//! shards start together however late each of them comes, without agreeing on a time in
//! advance. Shard 0 is the coordinator ([`coordinator`]): it listens, and when every other
//! shard has connected and said who it is, tells each how long until the start. The others
//! are members ([`member`]): they connect (again and again, until the wait limit, while
//! shard 0 is not up yet), say who they are, and time the exchange that tells them the
//! start, so each knows the start within half its round trip and how far its clock is from
//! shard 0's ([`BarrierFacts`], in its result file). The messages are the model's
//! ([`shootout_model::barrier`]).
//!
//! Seams: [`resolve`] reads the flags into a [`BarrierPlan`]; `load` calls [`open`] before
//! its warm-up (shard 0 starts listening, so early shards are not turned away) and
//! [`Opened::meet`] after it; the start it returns goes to the engine as `--start-at`'s
//! time does.

pub mod coordinator;
pub mod member;

use shootout_model::barrier::BarrierFacts;
use shootout_model::{parse_duration, Shard};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// How long after every shard is here the load starts: time for shard 0's answers to
/// reach them all and for each to connect to the server under test.
pub const START_LEAD: Duration = Duration::from_secs(2);

// A member refuses a start further ahead than the model's bound: shard 0's must be within it.
const _: () = assert!(START_LEAD.as_nanos() <= shootout_model::barrier::MAX_START_IN.as_nanos());

/// How many times a shard asks shard 0 for the start once all are there: it keeps the
/// answer of the shortest round trip, the one least delayed on the way.
pub const ASKS: usize = 4;

/// How often a wait at the barrier looks at the stop flag (Ctrl-C, SIGTERM).
const STOP_EVERY: Duration = Duration::from_millis(100);

/// The error of a wait that Ctrl-C or SIGTERM ended.
pub const INTERRUPTED: &str = "interrupted (Ctrl-C or SIGTERM)";

/// The longest wait limit (`--barrier-wait`).
const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

/// What a shard does at the barrier.
#[derive(Debug, Clone)]
pub struct BarrierPlan {
    /// This shard.
    pub shard: Shard,
    /// Shards of another run are refused.
    pub run_id: String,
    /// How long to wait for the others, from reaching the barrier.
    pub wait: Duration,
    /// Listen (shard 0) or connect (the others).
    pub role: Role,
}

/// Shard 0 listens; the others connect.
#[derive(Debug, Clone)]
pub enum Role {
    /// Shard 0: listen on this address.
    Coordinator(SocketAddr),
    /// Another shard: connect to shard 0 here (`HOST:PORT`, resolved at each try).
    Member(String),
}

/// The barrier's flags as typed.
#[derive(Debug, Clone, Copy)]
pub struct Flags<'a> {
    /// `--barrier HOST:PORT`.
    pub barrier: Option<&'a str>,
    /// `--barrier-listen ADDR`.
    pub listen: Option<&'a str>,
    /// `--barrier-wait DURATION`.
    pub wait: &'a str,
    /// `--run-id ID`.
    pub run_id: Option<&'a str>,
}

/// The barrier the flags ask for, if any; `fingerprint` names the run when `--run-id` does
/// not. Errors name the flag and the fix.
pub fn resolve(
    f: Flags,
    shard: Option<Shard>,
    fingerprint: u64,
) -> Result<Option<BarrierPlan>, String> {
    if f.barrier.is_none() && f.listen.is_none() {
        if f.run_id.is_some() {
            return Err("--run-id names the run at a start barrier: give --barrier HOST:PORT (or --barrier-listen ADDR on shard 0)".into());
        }
        return Ok(None);
    }
    let Some(shard) = shard else {
        return Err(
            "--barrier starts the shards of one load together: give --shard I/N or --shards N too"
                .into(),
        );
    };
    let wait = parse_duration(f.wait).map_err(|e| format!("--barrier-wait: {e}"))?;
    if wait.is_zero() || wait > MAX_WAIT {
        return Err(format!(
            "--barrier-wait {}: give more than 0 and at most a day, e.g. --barrier-wait 10m",
            f.wait
        ));
    }
    let run_id = match f.run_id {
        Some(id) => {
            shootout_model::barrier::check_run_id(id).map_err(|e| format!("--run-id: {e}"))?;
            id.to_string()
        }
        None => format!("load-{fingerprint:016x}"),
    };
    let role = match (shard.index, f.listen, f.barrier) {
        (0, Some(addr), _) => Role::Coordinator(listen_addr(addr)?),
        (0, None, to) => {
            let port = port_of(to.unwrap_or_default())?;
            Role::Coordinator(SocketAddr::from(([0, 0, 0, 0], port)))
        }
        (_, _, Some(to)) => {
            port_of(to)?;
            Role::Member(to.to_string())
        }
        (i, _, None) => {
            return Err(format!(
            "--barrier-listen is for shard 0; shard {i} connects to it: give --barrier HOST:PORT"
        ))
        }
    };
    Ok(Some(BarrierPlan {
        shard,
        run_id,
        wait,
        role,
    }))
}

/// `--barrier-listen`: an address and port (`0.0.0.0:7878`, `127.0.0.1:0`, `[::]:7878`).
fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| {
        format!("--barrier-listen {text:?} is not an address and port: write e.g. 0.0.0.0:7878")
    })
}

/// The port of `--barrier HOST:PORT`.
fn port_of(text: &str) -> Result<u16, String> {
    let bad = || {
        format!("--barrier {text:?} is not HOST:PORT: write e.g. --barrier shootout-load-0.shootout-load:7878")
    };
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok(port)
}

/// A barrier opened: shard 0 listening, or a member not yet connected.
pub enum Opened {
    /// Shard 0, listening.
    Coordinator(coordinator::Coordinator),
    /// Another shard.
    Member(BarrierPlan),
}

/// What the barrier gave this shard: when to start, on its own clock, and what it measured.
#[derive(Debug, Clone, Copy)]
pub struct Met {
    /// The start, on this machine's clock.
    pub start_at: SystemTime,
    /// What was measured.
    pub facts: BarrierFacts,
}

/// Opens the barrier: shard 0 starts listening (and says where, unless `quiet`).
pub fn open(plan: &BarrierPlan, quiet: bool) -> Result<Opened, String> {
    match &plan.role {
        Role::Coordinator(addr) => {
            coordinator::Coordinator::listen(plan.clone(), *addr, quiet).map(Opened::Coordinator)
        }
        Role::Member(_) => Ok(Opened::Member(plan.clone())),
    }
}

impl Opened {
    /// Waits at the barrier until every shard is there (or the wait limit passes, or
    /// `stop` is set: [`INTERRUPTED`]) and returns the start; the error says what went
    /// wrong and which shards it concerns.
    pub fn meet(self, quiet: bool, stop: &AtomicBool) -> Result<Met, String> {
        match self {
            Opened::Coordinator(c) => c.meet(quiet, stop),
            Opened::Member(plan) => member::meet(&plan, quiet, stop),
        }
    }
}

/// The first address `host_port` resolves to.
fn resolve_addr(host_port: &str) -> std::io::Result<SocketAddr> {
    host_port.to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the name resolves to no address",
        )
    })
}

/// Whether `stop` was set.
fn stopped(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

/// `0, 2, 3`.
fn list(indexes: &[u32]) -> String {
    let v: Vec<String> = indexes.iter().map(u32::to_string).collect();
    v.join(", ")
}

/// `10m`, `2.5s`: a duration as the flags take it.
fn shown(d: Duration) -> String {
    humantime::format_duration(Duration::from_millis(d.as_millis() as u64)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags<'a>(barrier: Option<&'a str>, listen: Option<&'a str>) -> Flags<'a> {
        Flags {
            barrier,
            listen,
            wait: "10m",
            run_id: None,
        }
    }

    fn shard(i: u32) -> Option<Shard> {
        Some(Shard::new(i, 4).unwrap())
    }

    #[test]
    fn shard_0_listens_and_the_others_connect() {
        let to = Some("load-0.load:7878");
        let p = resolve(flags(to, None), shard(0), 0xab).unwrap().unwrap();
        assert!(matches!(p.role, Role::Coordinator(a) if a.to_string() == "0.0.0.0:7878"));
        assert_eq!(p.run_id, "load-00000000000000ab");
        assert_eq!(p.wait, Duration::from_secs(600));
        let p = resolve(flags(to, Some("127.0.0.1:0")), shard(0), 1)
            .unwrap()
            .unwrap();
        assert!(matches!(p.role, Role::Coordinator(a) if a.to_string() == "127.0.0.1:0"));
        let p = resolve(flags(to, None), shard(3), 1).unwrap().unwrap();
        assert!(matches!(p.role, Role::Member(ref m) if m == "load-0.load:7878"));
        let f = Flags {
            run_id: Some("job-uid-1"),
            ..flags(to, None)
        };
        assert_eq!(
            resolve(f, shard(3), 1).unwrap().unwrap().run_id,
            "job-uid-1"
        );
        assert!(resolve(flags(None, None), shard(3), 1).unwrap().is_none());
    }

    #[test]
    fn flags_that_cannot_meet_are_refused_naming_the_fix() {
        let to = Some("h:7878");
        for (f, sh, says) in [
            (flags(to, None), None, "give --shard I/N or --shards N"),
            (
                flags(None, Some("127.0.0.1:0")),
                shard(2),
                "shard 2 connects to it: give --barrier HOST:PORT",
            ),
            (flags(Some("h"), None), shard(1), "is not HOST:PORT"),
            (flags(Some(":7878"), None), shard(1), "is not HOST:PORT"),
            (flags(Some("h:0"), None), shard(0), "is not HOST:PORT"),
            (
                flags(to, Some("h:1")),
                shard(0),
                "--barrier-listen \"h:1\" is not an address",
            ),
            (
                Flags {
                    wait: "0s",
                    ..flags(to, None)
                },
                shard(1),
                "--barrier-wait 0s: give more than 0",
            ),
            (
                Flags {
                    wait: "2d",
                    ..flags(to, None)
                },
                shard(1),
                "at most a day",
            ),
            (
                Flags {
                    run_id: Some("a b"),
                    ..flags(to, None)
                },
                shard(1),
                "--run-id: run id \"a b\"",
            ),
            (
                Flags {
                    run_id: Some("x"),
                    ..flags(None, None)
                },
                shard(1),
                "--run-id names the run at a start barrier",
            ),
        ] {
            let e = resolve(f, sh, 1).unwrap_err();
            assert!(e.contains(says), "{f:?}: {e}");
        }
    }
}
