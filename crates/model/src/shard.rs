//! One load spread over several processes (machines, Kubernetes pods): a [`Shard`] is one
//! process's place in the fleet, and [`Shard::divide`] the one rule for its share of a
//! [`LoadSpec`]: the rate `R / N` with its schedule offset by `index / R` (so the fleet's
//! requests are due every `1 / R` seconds, shard after shard), the connections and the
//! request count divided with the remainder given to the first shards, the same duration.
//!
//! Seams: the `load` flags say which shard a process is (`--shard I/N`, or
//! `JOB_COMPLETION_INDEX` with `--shards N`); the saved result file carries it; the merge
//! checks that every shard of the fleet is there.

use crate::spec::{LoadSpec, Pace, SpecError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The most shards one load may be spread over.
pub const MAX_SHARDS: u32 = 10_000;

/// Shard `index` of `count` (0-based, as Kubernetes numbers an Indexed Job's pods).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// This process's number, from 0 to `count - 1`.
    pub index: u32,
    /// How many processes share the load, 1 to [`MAX_SHARDS`].
    pub count: u32,
}

/// A shard that cannot be, or a load that cannot be divided into shards.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShardError {
    /// Not `I/N`.
    #[error("'{0}' is not a shard: write it as INDEX/COUNT, counting from 0, e.g. 0/4 for the first of four")]
    Syntax(String),
    /// A count of 0 or over [`MAX_SHARDS`].
    #[error("{0} shards: the count must be from 1 to {max}", max = MAX_SHARDS)]
    Count(u32),
    /// An index not below the count.
    #[error("shard {index} of {count} does not exist: shards are numbered 0 to {}", count - 1)]
    Index {
        /// The index given.
        index: u32,
        /// The count given.
        count: u32,
    },
    /// Fewer connections than shards: some shard would have none.
    #[error("{connections} connections cannot be shared by {count} shards: give at least one per shard (-c {count} or more)")]
    Connections {
        /// The fleet's connections.
        connections: usize,
        /// Shards.
        count: u32,
    },
    /// Fewer requests than shards: some shard would send none.
    #[error("{requests} requests cannot be shared by {count} shards: give at least one per shard (-n {count} or more)")]
    Requests {
        /// The fleet's request count.
        requests: u64,
        /// Shards.
        count: u32,
    },
    /// The shard's share broke a rule of the spec (a rate under the minimum).
    #[error("a shard's share of the load is not a valid load: {0}")]
    Spec(#[from] SpecError),
}

impl Shard {
    /// Shard `index` of `count`, checked.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if !(1..=MAX_SHARDS).contains(&count) {
            return Err(ShardError::Count(count));
        }
        if index >= count {
            return Err(ShardError::Index { index, count });
        }
        Ok(Shard { index, count })
    }

    /// Parses `I/N` (`0/4` is the first of four).
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(text.to_string());
        let (i, n) = text.trim().split_once('/').ok_or_else(syntax)?;
        let index = i.trim().parse().map_err(|_| syntax())?;
        let count = n.trim().parse().map_err(|_| syntax())?;
        Shard::new(index, count)
    }

    /// This shard's part of `total` things: `total / count`, plus one for each of the
    /// first `total % count` shards, so the parts add up to `total`.
    pub fn part(&self, total: u64) -> u64 {
        let (n, i) = (u64::from(self.count), u64::from(self.index));
        total / n + u64::from(i < total % n)
    }

    /// This shard's share of the fleet's load `fleet`: see the module's rule. The share's
    /// threads are the fleet's, kept to no more than its connections.
    pub fn divide(&self, fleet: &LoadSpec) -> Result<LoadSpec, ShardError> {
        // Checked for the fleet, not this shard: a load some shard cannot share is refused
        // by every shard, so the fleet fails as one.
        let rate = matches!(fleet.pace, Pace::Rate(_));
        // Rate mode opens connections as the schedule needs them: a shard with no share of
        // the first ones starts with one.
        let connections = (self.part(fleet.connections as u64) as usize).max(usize::from(rate));
        if fleet.connections < self.count as usize && !rate {
            return Err(ShardError::Connections {
                connections: fleet.connections,
                count: self.count,
            });
        }
        let requests = match fleet.requests {
            Some(n) if n < u64::from(self.count) => {
                return Err(ShardError::Requests {
                    requests: n,
                    count: self.count,
                })
            }
            n => n.map(|n| self.part(n)),
        };
        let (pace, offset) = match fleet.pace {
            Pace::Closed => (Pace::Closed, Duration::ZERO),
            // The fleet's request k·N + index is this shard's request k, due at
            // (k·N + index) / R = index / R + k / (R / N).
            Pace::Rate(r) => (
                Pace::Rate(r / f64::from(self.count)),
                Duration::from_secs_f64(f64::from(self.index) / r),
            ),
        };
        // The cap is shared as the connections are, and holds this shard's first ones.
        let max_connections = fleet
            .max_connections
            .map(|m| (self.part(m as u64) as usize).max(connections));
        let mut spec = fleet
            .to_builder()
            .connections(connections)
            .max_connections(max_connections)
            .bound(requests, fleet.duration)
            .pace(pace)
            .build()?;
        spec.offset = offset;
        // Each shard draws its own Poisson gaps.
        spec.arrival = fleet.arrival.part(u64::from(self.index));
        spec.validate()?;
        Ok(spec)
    }
}

/// `I/N`, as `--shard` takes it.
impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Target;

    fn fleet(connections: usize, requests: Option<u64>, pace: Pace) -> LoadSpec {
        let mut s = LoadSpec::new(Target::parse("http://127.0.0.1:1/").unwrap());
        s.connections = connections;
        s.threads = 2;
        s.requests = requests;
        s.duration = Some(Duration::from_secs(10));
        s.pace = pace;
        s
    }

    #[test]
    fn shards_parse_and_refuse_what_cannot_be() {
        assert_eq!(Shard::parse("0/4"), Ok(Shard { index: 0, count: 4 }));
        assert_eq!(Shard::parse(" 3 / 4 ").unwrap().to_string(), "3/4");
        assert_eq!(
            Shard::parse("4/4"),
            Err(ShardError::Index { index: 4, count: 4 })
        );
        assert_eq!(Shard::parse("0/0"), Err(ShardError::Count(0)));
        assert_eq!(Shard::parse("0/10001"), Err(ShardError::Count(10_001)));
        for bad in ["", "1", "a/4", "1/b", "-1/4", "1/4/2"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(matches!(e, ShardError::Syntax(_)), "{bad}: {e}");
            assert!(e.to_string().contains("e.g. 0/4"), "{e}");
        }
    }

    #[test]
    fn parts_add_up_with_the_remainder_on_the_first_shards() {
        let parts: Vec<u64> = (0..4).map(|i| Shard::new(i, 4).unwrap().part(10)).collect();
        assert_eq!(parts, vec![3, 3, 2, 2]);
        for total in [0, 1, 7, 1000, 1001] {
            for n in 1..=7 {
                let sum: u64 = (0..n).map(|i| Shard::new(i, n).unwrap().part(total)).sum();
                assert_eq!(sum, total, "{total} over {n}");
            }
        }
    }

    /// Rate mode: fewer first connections than shards still runs (each shard starts with
    /// one and opens more as its schedule needs them); the cap is shared too. A closed loop
    /// is still refused: its connections are all it has.
    #[test]
    fn rate_shards_start_with_a_connection_each_and_share_the_cap() {
        let mut f = fleet(1, None, Pace::Rate(60_000.0));
        f.max_connections = Some(10);
        let shards: Vec<LoadSpec> = (0..6)
            .map(|i| Shard::new(i, 6).unwrap().divide(&f).unwrap())
            .collect();
        let conns: Vec<usize> = shards.iter().map(|s| s.connections).collect();
        assert_eq!(conns, vec![1; 6]);
        let caps: Vec<Option<usize>> = shards.iter().map(|s| s.max_connections).collect();
        assert_eq!(
            caps,
            vec![Some(2), Some(2), Some(2), Some(2), Some(1), Some(1)]
        );
        let closed = fleet(1, None, Pace::Closed);
        assert!(matches!(
            Shard::new(0, 6).unwrap().divide(&closed),
            Err(ShardError::Connections { .. })
        ));
    }

    #[test]
    fn a_rate_is_divided_and_each_shard_offset_so_the_fleet_interleaves() {
        let f = fleet(10, None, Pace::Rate(4000.0));
        let shards: Vec<LoadSpec> = (0..4)
            .map(|i| Shard::new(i, 4).unwrap().divide(&f).unwrap())
            .collect();
        let conns: Vec<usize> = shards.iter().map(|s| s.connections).collect();
        assert_eq!(conns, vec![3, 3, 2, 2]);
        // Shard i's request k is due at i/4000 + k/1000 s: the fleet's request 4k + i.
        let mut due: Vec<Duration> = Vec::new();
        for s in &shards {
            assert_eq!(s.pace, Pace::Rate(1000.0));
            assert_eq!(s.duration, f.duration);
            due.extend((0..5).map(|k| s.offset + Duration::from_secs_f64(k as f64 / 1000.0)));
        }
        due.sort();
        for (n, d) in due.iter().enumerate() {
            let want = n as f64 / 4000.0;
            assert!((d.as_secs_f64() - want).abs() < 1e-9, "request {n}: {d:?}");
        }
    }

    #[test]
    fn requests_are_divided_and_too_few_refused() {
        let f = fleet(8, Some(10), Pace::Closed);
        let s = Shard::new(1, 3).unwrap().divide(&f).unwrap();
        assert_eq!(
            (s.requests, s.connections, s.offset),
            (Some(3), 3, Duration::ZERO)
        );
        assert_eq!(s.threads, 2);
        let few = Shard::new(0, 4)
            .unwrap()
            .divide(&fleet(3, None, Pace::Closed));
        let e = few.unwrap_err();
        assert!(e.to_string().contains("-c 4 or more"), "{e}");
        let e = Shard::new(0, 20)
            .unwrap()
            .divide(&fleet(40, Some(10), Pace::Closed))
            .unwrap_err();
        assert!(e.to_string().contains("-n 20 or more"), "{e}");
    }
}
