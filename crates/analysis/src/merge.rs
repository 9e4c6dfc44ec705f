//! One result from the saved runs of a load's shards (`shootout merge`): histograms added
//! bucket by bucket (so the merged p99 is the fleet's exact p99, not an average of
//! percentiles), counts summed, per-second series aligned on wall-clock seconds, and the
//! throughput taken over the union of the shards' windows. Before anything is added, the
//! files are checked: the same load (URL, method, request, expectations, connections, rate,
//! bounds, shard count — [`differences`] names what differs), each shard once, none
//! missing or failed (unless partial merges are allowed), and their start times within a
//! second of each other and of the agreed start (else a note).
//!
//! Seams: reads [`SavedRun`]s (parsed by the model), returns a [`Merged`] run — a
//! [`LoadSpec`] and a [`RunResult`] like any single run's, so every report of `load`
//! renders it — and the notes for the user. No I/O.

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use shootout_model::requests::RequestList;
use shootout_model::result::second_histogram;
use shootout_model::saved::unix_ns;
use shootout_model::{
    per_second, ListenQueue, LoadSpec, Outcome, Pace, Record, RunResult, SavedRun, ScheduleStats,
    SecondStats, Target, TargetStats, TlsOptions,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

/// Start times further apart than this are worth a note.
pub const START_SKEW: Duration = Duration::from_secs(1);

/// A saved run and where it came from (a file name, for messages).
#[derive(Debug, Clone)]
pub struct Source {
    /// Where the run was read from.
    pub name: String,
    /// The run.
    pub run: SavedRun,
}

/// The merged run.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The fleet's load, its threads the sum of the merged shards'.
    pub spec: LoadSpec,
    /// What the merged shards measured together.
    pub result: RunResult,
    /// How many runs were merged.
    pub runs: usize,
    /// What the user should know about the merge.
    pub notes: Vec<Note>,
}

/// Something about the merge the user should know; not an error.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The shards' start times are further apart than [`START_SKEW`].
    StartSkew {
        /// From the earliest start to the latest.
        spread: Duration,
        /// The run that started first.
        earliest: String,
        /// The run that started last.
        latest: String,
    },
    /// A run started more than [`START_SKEW`] away from the agreed start time: its clock
    /// disagrees with the others', or it started late.
    OffStart {
        /// The run.
        source: String,
        /// How far after (positive) or before (negative) the agreed time, in seconds.
        seconds: f64,
    },
    /// The shards met at a start barrier: what they measured there.
    Barrier {
        /// How many of the merged runs met it.
        runs: usize,
        /// The run whose clock was furthest from shard 0's, and by how much (its clock minus
        /// shard 0's, in nanoseconds).
        furthest: (String, i64),
        /// The run with the longest round trip to shard 0, and that round trip.
        slowest: (String, Duration),
    },
    /// Partial merge: shards left out.
    Partial {
        /// The shards that were missing.
        missing: Vec<u32>,
        /// The failed shards left out, with their errors.
        failed: Vec<(String, String)>,
        /// The fleet's shard count.
        count: u32,
    },
    /// Partial merge: a run Ctrl-C or SIGTERM ended early was merged.
    Interrupted {
        /// The run.
        source: String,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::StartSkew { spread, earliest, latest } => write!(
                f,
                "the shards started {:.3} s apart ({earliest} first, {latest} last): the per-second series mixes different moments of the load (start them together with --barrier, or keep the machines' clocks in sync with NTP for --start-at)",
                spread.as_secs_f64()
            ),
            Note::OffStart { source, seconds } => write!(
                f,
                "{source} started {:.3} s {} the agreed start time: its clock disagrees with the others' or it started late (check NTP on its machine)",
                seconds.abs(),
                if *seconds >= 0.0 { "after" } else { "before" }
            ),
            Note::Barrier { runs, furthest, slowest } => write!(
                f,
                "{runs} shards started on shard 0's barrier: clocks within {:.3} ms of shard 0's ({} {:.3} ms {}), round trips up to {:.3} ms ({}), so the starts agree within {:.3} ms",
                furthest.1.unsigned_abs() as f64 / 1e6,
                furthest.0,
                furthest.1.unsigned_abs() as f64 / 1e6,
                if furthest.1 >= 0 { "ahead" } else { "behind" },
                slowest.1.as_secs_f64() * 1e3,
                slowest.0,
                slowest.1.as_secs_f64() * 1e3,
            ),
            Note::Partial { missing, failed, count } => {
                let mut parts = Vec::new();
                if !missing.is_empty() {
                    parts.push(format!("shard {} missing", list(missing)));
                }
                for (source, error) in failed {
                    parts.push(format!("{source} failed ({error})"));
                }
                write!(
                    f,
                    "partial merge of a load in {count} shards: {}; the figures are those of the shards merged, not of the whole load",
                    parts.join(", ")
                )
            }
            Note::Interrupted { source } => write!(
                f,
                "{source} was interrupted: it measured less than its share of the load"
            ),
        }
    }
}

/// Why the runs cannot be merged; the message says what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no result to merge: give the files written by shootout load --save")]
    Nothing,
    /// Two runs of different loads.
    #[error("{other} is not a shard of the same load as {first}: {}; merge only the shards of one load", .fields.join(", "))]
    Differ {
        /// The first run.
        first: String,
        /// The run that differs.
        other: String,
        /// `url: http://a/ vs http://b/`, one per field that differs.
        fields: Vec<String>,
    },
    /// A whole (unsharded) run among others.
    #[error(
        "{0} is a whole load, not a shard (it was run without --shard or --shards): merge it alone"
    )]
    NotSharded(String),
    /// The same shard twice.
    #[error("shard {index} is given twice ({first} and {second}): give each shard's file once")]
    Duplicate {
        /// The shard's index.
        index: u32,
        /// Its first file.
        first: String,
        /// Its second file.
        second: String,
    },
    /// Shards missing.
    #[error("shard {} of {count} missing: give every shard's file, or --allow-partial to merge the others", list(.missing))]
    Missing {
        /// The missing indexes.
        missing: Vec<u32>,
        /// The shard count.
        count: u32,
    },
    /// A shard failed or was interrupted.
    #[error("{run} ({what}): run that shard again, or --allow-partial to merge the others")]
    Failed {
        /// The run.
        run: String,
        /// `shard 2 failed: cannot connect …` or `shard 2 was interrupted`.
        what: String,
    },
    /// Every run failed.
    #[error("every run failed, nothing was measured: {0}")]
    AllFailed(String),
    /// A sum past what the counts hold (`u64::MAX`), which no fleet reaches: a file was
    /// damaged or forged.
    #[error("{field} of {run} added to the runs before it passes {max}: a file is damaged or not a shootout result", max = u64::MAX)]
    Overflow {
        /// The run whose addition overflowed.
        run: String,
        /// The field, as the result file names it (`result.counts.completed`).
        field: String,
    },
}

/// `0, 2, 3`.
fn list(indexes: &[u32]) -> String {
    let v: Vec<String> = indexes.iter().map(u32::to_string).collect();
    v.join(", ")
}

/// The load a spec puts on the server: the spec with what each machine of a fleet sets its
/// own way made equal (threads, CPU pinning, the samples kept, local addresses, busy
/// polling, the schedule's offset, and how it trusts the server's certificate). Two runs are
/// shards of one load when theirs are equal and so are their [`journeys`] (a journey file,
/// read once per file, is compared by what describes it): a field added to [`LoadSpec`] is
/// part of the load until it is named here.
fn the_load(s: &LoadSpec) -> LoadSpec {
    LoadSpec {
        journey: None,
        threads: 0,
        record: Record {
            reservoir: 0,
            all: false,
        },
        cpus: None,
        offset: Duration::ZERO,
        bind: Vec::new(),
        busy_poll: Duration::ZERO,
        target: Target {
            tls: TlsOptions::default(),
            ..s.target.clone()
        },
        ..s.clone()
    }
}

/// A load's journeys as a result file keeps them: the file's name and each journey's name,
/// weight and steps; `none` without journeys. Not the seed: each shard draws its own
/// users' choices (as each sets its own threads).
fn journeys(s: &LoadSpec) -> String {
    s.journey.as_ref().map_or("none".into(), |j| {
        let each: Vec<String> = j
            .file
            .journeys
            .iter()
            .map(|j| {
                let steps: Vec<&str> = j.steps.iter().map(|s| s.name.as_str()).collect();
                format!("{} (weight {}: {})", j.name, j.weight, steps.join(", "))
            })
            .collect();
        format!("{}: {}", j.source, each.join("; "))
    })
}

/// A part of the load as messages name it, and its value as they show it.
type Shown = (&'static str, fn(&LoadSpec) -> String);

/// The parts of the load a difference is named by, in the order messages list them.
const PARTS: [Shown; 22] = [
    ("url", |s| s.target.url.clone()),
    ("unix socket", |s| format!("{:?}", s.target.unix_socket)),
    ("method", |s| s.request.method.clone()),
    ("headers", |s| format!("{:?}", s.request.headers)),
    ("body", |s| bytes(&s.request.body)),
    ("keep-alive", |s| s.request.keepalive.to_string()),
    ("expected status", |s| s.expect.status.describe().into()),
    ("expected body", |s| {
        let body = s.expect.body_contains.as_deref();
        format!("{:?}", body.map(String::from_utf8_lossy))
    }),
    ("expected length", |s| format!("{:?}", s.expect.length)),
    ("connections", |s| s.connections.to_string()),
    ("requests", |s| format!("{:?}", s.requests)),
    ("duration", |s| secs(s.duration)),
    ("rate", |s| match s.pace {
        Pace::Closed => "closed loop".to_string(),
        Pace::Rate(r) => format!("{r} req/s"),
    }),
    ("timeout", |s| secs(Some(s.timeout))),
    ("connect timeout", |s| secs(Some(s.connect_timeout))),
    ("protocol", |s| s.protocol.as_str().into()),
    ("streams", |s| s.streams.to_string()),
    ("pipeline", |s| s.pipeline.to_string()),
    ("journeys", journeys),
    ("stages", |s| format!("{:?}", s.stages)),
    ("journey connection", |s| {
        s.journey_connection.as_str().into()
    }),
    ("gRPC stream bounds", |s| {
        format!("{:?}", s.expect.grpc.as_ref().map(|g| g.stream))
    }),
];

/// `10 s`, or `none`.
fn secs(d: Option<Duration>) -> String {
    d.map_or("none".into(), |d| format!("{} s", d.as_secs_f64()))
}

/// A body's length and fingerprint, so a message can say two differ without printing them.
fn bytes(b: &[u8]) -> String {
    format!("{} bytes ({:016x})", b.len(), fnv1a(b))
}

/// A request list's source, length, fingerprint, order and seed: two lists of one name may
/// still differ.
fn request_list(l: Option<&RequestList>) -> String {
    l.map_or("none".to_string(), |l| {
        let mut h = Fnv::default();
        h.list_entries(l);
        format!(
            "{} ({} entries {:016x}, {:?} order, seed {})",
            l.source,
            l.entries.len(),
            h.0,
            l.order,
            l.seed
        )
    })
}

/// The parts in which two loads differ, each as `part: a vs b`; empty when they are one
/// load ([`the_load`] decides; [`PARTS`] and the request list name the difference).
pub fn differences(a: &LoadSpec, b: &LoadSpec) -> Vec<String> {
    if the_load(a) == the_load(b) && journeys(a) == journeys(b) {
        return Vec::new();
    }
    let shown = PARTS
        .iter()
        .map(|(part, show)| (*part, show(a), show(b)))
        .chain([(
            "request list",
            request_list(a.list.as_ref()),
            request_list(b.list.as_ref()),
        )]);
    let mut out: Vec<String> = shown
        .filter(|(_, x, y)| x != y)
        .map(|(part, x, y)| format!("{part}: {x} vs {y}"))
        .collect();
    if out.is_empty() {
        // Equal as shown, different in fact (a value shown rounded, a new field).
        out.push("another setting of the load differs (equal as shown here)".into());
    }
    out
}

/// A fingerprint of the load `s` puts on a server ([`the_load`]: what each machine sets
/// its own way left out), equal for every shard of one fleet's load as given: the start
/// barrier's run id when none is given, so shards of different loads never meet.
///
/// Hashed as it is read, never written out: bodies by their bytes, a list's entries by
/// their fields and the bytes of each distinct body once, so a list naming one 16 MiB body
/// 64 times costs one pass over 16 MiB and no memory (its text form took gigabytes).
pub fn load_fingerprint(s: &LoadSpec) -> u64 {
    use std::fmt::Write;
    let mut load = the_load(s);
    let list = load.list.take();
    let body = std::mem::take(&mut load.request.body);
    let mut h = Fnv::default();
    let _ = write!(h, "{load:?}{}", journeys(s));
    h.bytes(&body);
    if let Some(l) = list {
        let _ = write!(h, "{:?}{:?}{}", l.source, l.order, l.seed);
        h.list_entries(&l);
    }
    h.0
}

/// FNV-1a (64 bits) fed as text is written to it and bytes are given: a fingerprint that
/// holds nothing.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    }

    /// Each entry's fields, and its body's bytes the first time the list names that body
    /// (entries naming one body file share it), its place in the list after.
    fn list_entries(&mut self, l: &RequestList) {
        use std::fmt::Write;
        let mut seen: std::collections::HashMap<*const u8, usize> = Default::default();
        for e in &l.entries {
            let _ = write!(self, "{:?}{:?}{:?}{}", e.method, e.path, e.headers, e.line);
            let at = std::sync::Arc::as_ptr(&e.body).cast::<u8>();
            if let Some(i) = seen.get(&at) {
                let _ = write!(self, "same body as {i}");
            } else {
                let _ = write!(self, "body of {}", e.body.len());
                self.bytes(&e.body);
                seen.insert(at, seen.len());
            }
        }
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// FNV-1a, 64 bits: a fingerprint of a request body, so a message can say two bodies
/// differ without printing them (a hash this small needs no crate).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.bytes(bytes);
    h.0
}

/// Merges the runs of one load's shards (see the module). With `allow_partial`, missing,
/// failed and interrupted shards are notes instead of errors, and the others are merged.
pub fn merge(sources: &[Source], allow_partial: bool) -> Result<Merged, MergeError> {
    let first = sources.first().ok_or(MergeError::Nothing)?;
    check(sources)?;
    let mut notes = Vec::new();
    let mut failed = Vec::new();
    let mut included = Vec::new();
    for s in sources {
        let shard = s
            .run
            .shard
            .map_or(String::new(), |sh| format!("shard {}", sh.index));
        match &s.run.outcome {
            Outcome::Failed(e) => {
                if !allow_partial {
                    return Err(MergeError::Failed {
                        run: s.name.clone(),
                        what: format!("{shard} failed: {e}"),
                    });
                }
                failed.push((s.name.clone(), e.clone()));
            }
            Outcome::Interrupted => {
                if !allow_partial {
                    return Err(MergeError::Failed {
                        run: s.name.clone(),
                        what: format!("{shard} was interrupted"),
                    });
                }
                notes.push(Note::Interrupted {
                    source: s.name.clone(),
                });
                included.push(s);
            }
            Outcome::Complete => included.push(s),
        }
    }
    let missing = missing(sources);
    if !missing.is_empty() && !allow_partial {
        let count = first.run.shard.map_or(1, |s| s.count);
        return Err(MergeError::Missing { missing, count });
    }
    if !missing.is_empty() || !failed.is_empty() {
        notes.push(Note::Partial {
            missing,
            failed: failed.clone(),
            count: first.run.shard.map_or(1, |s| s.count),
        });
    }
    let runs: Vec<(&Source, &RunResult)> = included
        .iter()
        .filter_map(|s| s.run.result.as_ref().map(|r| (*s, r)))
        .collect();
    if runs.is_empty() {
        let why: Vec<String> = failed.iter().map(|(s, e)| format!("{s}: {e}")).collect();
        return Err(MergeError::AllFailed(why.join("; ")));
    }
    notes.extend(start_notes(&runs));
    notes.extend(barrier_note(&runs));
    let mut spec = first.run.fleet.clone();
    spec.threads = 0;
    for (s, _) in &runs {
        spec.threads = spec
            .threads
            .checked_add(s.run.spec.threads)
            .ok_or_else(|| overflow(s, "spec.threads"))?;
    }
    let mut result = add_up(&runs)?;
    let allowed = runs.iter().filter_map(|(_, r)| r.streams_allowed()).min();
    result.note_streams_limited(spec.streams as u64, allowed);
    crate::load_warnings::refresh(&mut result, &spec);
    Ok(Merged {
        spec,
        result,
        runs: runs.len(),
        notes,
    })
}

/// Every run a shard of one load, each shard once (see [`MergeError`]).
fn check(sources: &[Source]) -> Result<(), MergeError> {
    let first = &sources[0];
    if sources.len() > 1 {
        if let Some(whole) = sources.iter().find(|s| s.run.shard.is_none()) {
            return Err(MergeError::NotSharded(whole.name.clone()));
        }
    }
    // The runs that measured something have the same request list entries or journey
    // steps, and the same journeys, as the first of them: they add up one by one.
    let measured = sources.iter().find(|s| s.run.result.is_some());
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for s in sources {
        let mut fields = differences(&first.run.fleet, &s.run.fleet);
        let count = |s: &Source| s.run.shard.map_or(1, |sh| sh.count);
        if count(first) != count(s) {
            fields.push(format!("shards: {} vs {}", count(first), count(s)));
        }
        if let (Some(a), Some(b)) = (measured.and_then(|m| m.run.result.as_ref()), &s.run.result) {
            fields.extend(kinds_differ("entry or step", &a.targets, &b.targets));
            fields.extend(kinds_differ("journey", &a.journeys, &b.journeys));
        }
        if !fields.is_empty() {
            return Err(MergeError::Differ {
                first: first.name.clone(),
                other: s.name.clone(),
                fields,
            });
        }
        if let Some(sh) = s.run.shard {
            if let Some(prev) = seen.insert(sh.index, &s.name) {
                return Err(MergeError::Duplicate {
                    index: sh.index,
                    first: prev.into(),
                    second: s.name.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Where two runs' request list entries, journey steps or journeys (`what`) differ: the
/// first place their labels do, `journey 2: writer vs none`; `None` when they are the same.
fn kinds_differ(what: &str, a: &[TargetStats], b: &[TargetStats]) -> Option<String> {
    fn label(k: &[TargetStats], i: usize) -> &str {
        k.get(i).map_or("none", |t| t.label.as_str())
    }
    (0..a.len().max(b.len()))
        .find(|&i| label(a, i) != label(b, i))
        .map(|i| format!("{what} {}: {} vs {}", i + 1, label(a, i), label(b, i)))
}

/// Adds `from`'s request list entries, journey steps or journeys (`field`, as the file
/// names it) to `to`'s, one by one (the runs were checked to have the same labels): counts
/// summed, histograms merged (both in [`second_histogram`]'s bounds, as the reader puts
/// them), so the whole is exact.
fn add_kinds(
    to: &mut Vec<TargetStats>,
    from: &[TargetStats],
    src: &Source,
    field: &str,
) -> Result<(), MergeError> {
    if to.is_empty() {
        to.extend(from.iter().map(|t| TargetStats {
            latency: {
                let mut h = second_histogram();
                let _ = h.add(&t.latency);
                h
            },
            ..t.clone()
        }));
        return Ok(());
    }
    for (i, (acc, t)) in to.iter_mut().zip(from).enumerate() {
        // Counts past u64::MAX are the only way adding fails (same histogram bounds).
        acc.add(t)
            .ok_or_else(|| overflow(src, &format!("{field}[{i}]")))?;
    }
    Ok(())
}

/// The shard indexes of the fleet no run is.
fn missing(sources: &[Source]) -> Vec<u32> {
    let Some(count) = sources[0].run.shard.map(|s| s.count) else {
        return Vec::new();
    };
    let have: BTreeSet<u32> = sources
        .iter()
        .filter_map(|s| s.run.shard.map(|s| s.index))
        .collect();
    (0..count).filter(|i| !have.contains(i)).collect()
}

/// Notes on start times: spread over a second, or a second away from the agreed time.
fn start_notes(runs: &[(&Source, &RunResult)]) -> Vec<Note> {
    let mut notes = Vec::new();
    let by_start = |(_, r): &&(&Source, &RunResult)| unix_ns(r.started);
    let (earliest, latest) = match (
        runs.iter().min_by_key(by_start),
        runs.iter().max_by_key(by_start),
    ) {
        (Some(e), Some(l)) => (e, l),
        _ => return notes,
    };
    let spread = Duration::from_nanos(
        unix_ns(latest.1.started).saturating_sub(unix_ns(earliest.1.started)) as u64,
    );
    if spread > START_SKEW {
        notes.push(Note::StartSkew {
            spread,
            earliest: earliest.0.name.clone(),
            latest: latest.0.name.clone(),
        });
    }
    for (s, r) in runs {
        if let Some(at) = s.run.start_at {
            let seconds = unix_ns(r.started).saturating_sub(unix_ns(at)) as f64 / 1e9;
            if seconds.abs() > START_SKEW.as_secs_f64() {
                notes.push(Note::OffStart {
                    source: s.name.clone(),
                    seconds,
                });
            }
        }
    }
    notes
}

/// What the runs that met a start barrier measured there: the clock furthest from shard
/// 0's and the longest round trip (half of which bounds how far apart the starts were).
fn barrier_note(runs: &[(&Source, &RunResult)]) -> Option<Note> {
    let met: Vec<(&Source, shootout_model::barrier::BarrierFacts)> = runs
        .iter()
        .filter_map(|(s, _)| s.run.barrier.map(|b| (*s, b)))
        .collect();
    let furthest = met.iter().max_by_key(|(_, b)| b.skew_ns.unsigned_abs())?;
    let slowest = met.iter().max_by_key(|(_, b)| b.rtt)?;
    Some(Note::Barrier {
        runs: met.len(),
        furthest: (furthest.0.name.clone(), furthest.1.skew_ns),
        slowest: (slowest.0.name.clone(), slowest.1.rtt),
    })
}

/// The error for `field` of `s` overflowing the sum of the runs before it.
fn overflow(s: &Source, field: &str) -> MergeError {
    MergeError::Overflow {
        run: s.name.clone(),
        field: field.into(),
    }
}

/// `acc + n`, or the error naming `field` of `s` when the sum passes `u64::MAX`.
fn add(acc: &mut u64, n: u64, s: &Source, field: &str) -> Result<(), MergeError> {
    *acc = acc.checked_add(n).ok_or_else(|| overflow(s, field))?;
    Ok(())
}

/// The runs added up into one result (warnings not yet derived). Every sum is checked:
/// the counts come from files.
fn add_up(runs: &[(&Source, &RunResult)]) -> Result<RunResult, MergeError> {
    let t0 = runs
        .iter()
        .map(|(_, r)| unix_ns(r.started))
        .min()
        .unwrap_or(0);
    let first_started = runs
        .iter()
        .min_by_key(|(_, r)| unix_ns(r.started))
        .map(|(_, r)| r.started)
        .expect("at least one run");
    let mut out = RunResult::empty(first_started, union_of_windows(runs));
    let mut schedule: Option<ScheduleStats> = None;
    for (src, r) in runs {
        out.counts
            .checked_merge(&r.counts)
            .map_err(|field| overflow(src, &format!("result.counts.{field}")))?;
        // Both in latency_histogram's bounds (the file's reader puts them there).
        let _ = out.histograms.add(&r.histograms);
        let shift_us = (unix_ns(r.started).saturating_sub(t0) / 1000) as u64;
        out.samples
            .extend(r.samples.iter().map(|s| shootout_model::Sample {
                start_us: s.start_us.saturating_add(shift_us),
                ..*s
            }));
        let g = &mut out.generator;
        g.threads = g
            .threads
            .checked_add(r.generator.threads)
            .ok_or_else(|| overflow(src, "result.generator.threads"))?;
        g.cpu_user = g
            .cpu_user
            .checked_add(r.generator.cpu_user)
            .ok_or_else(|| overflow(src, "result.generator.cpu_user_ns"))?;
        g.cpu_sys = g
            .cpu_sys
            .checked_add(r.generator.cpu_sys)
            .ok_or_else(|| overflow(src, "result.generator.cpu_sys_ns"))?;
        g.busiest_thread = g.busiest_thread.max(r.generator.busiest_thread);
        if let Some(s) = r.schedule {
            let acc = schedule.get_or_insert_with(ScheduleStats::default);
            acc.target_rps += s.target_rps;
            add(&mut acc.due, s.due, src, "result.schedule.due")?;
            add(&mut acc.sent, s.sent, src, "result.schedule.sent")?;
            add(&mut acc.late, s.late, src, "result.schedule.late")?;
            add(
                &mut acc.late_no_connection,
                s.late_no_connection,
                src,
                "result.schedule.late_no_connection",
            )?;
            acc.max_lag = acc.max_lag.max(s.max_lag);
            join_lag_and_connections(acc, &s);
        }
        add_parts(&mut out, r, src)?;
        out.interrupted |= r.interrupted;
    }
    // The first response of the earliest run that had one.
    let mut by_start: Vec<&RunResult> = runs.iter().map(|(_, r)| *r).collect();
    by_start.sort_by_key(|r| unix_ns(r.started));
    out.first_response = by_start.iter().find_map(|r| r.first_response.clone());
    out.samples.sort_by_key(|s| s.start_us);
    out.schedule = schedule.map(|s| ScheduleStats {
        achieved_rps: per_second(s.sent, out.duration),
        ..s
    });
    out.series = seconds(runs, t0);
    out.in_flight_at_end = in_flight(runs)?;
    Ok(out)
}

/// The ages of the fleet's requests in flight at the end: every shard's, or unknown when
/// one did not keep them (a shard of an older shootout).
fn in_flight(runs: &[(&Source, &RunResult)]) -> Result<Option<Histogram<u64>>, MergeError> {
    let mut acc = shootout_model::latency_histogram();
    for (src, r) in runs {
        let Some(ages) = &r.in_flight_at_end else {
            return Ok(None);
        };
        acc.add(ages)
            .map_err(|_| overflow(src, "result.in_flight_at_end"))?;
    }
    Ok(Some(acc))
}

/// Adds a shard's request list entries or journey steps, its journeys, its streaming
/// calls and its listen queues' counts to the fleet's.
fn add_parts(out: &mut RunResult, r: &RunResult, src: &Source) -> Result<(), MergeError> {
    add_kinds(&mut out.targets, &r.targets, src, "result.targets")?;
    add_kinds(&mut out.journeys, &r.journeys, src, "result.journeys")?;
    if let Some(st) = r.stream.as_deref() {
        add_stream(out, st, src)?;
    }
    add_listen(&mut out.listen, r.listen, src)?;
    Ok(())
}

/// Adds a shard's streaming calls to the fleet's: counts summed, histograms merged (both
/// in the latency histogram's bounds, as the reader puts them), so the whole is exact.
fn add_stream(
    out: &mut RunResult,
    st: &shootout_model::StreamStats,
    src: &Source,
) -> Result<(), MergeError> {
    let Some(acc) = out.stream.as_deref_mut() else {
        out.stream = Some(Box::new(st.clone()));
        return Ok(());
    };
    add(
        &mut acc.calls_ok,
        st.calls_ok,
        src,
        "result.stream.calls_ok",
    )?;
    add(
        &mut acc.cancelled,
        st.cancelled,
        src,
        "result.stream.cancelled",
    )?;
    add(&mut acc.replies, st.replies, src, "result.stream.replies")?;
    add(&mut acc.sent, st.sent, src, "result.stream.sent")?;
    add(
        &mut acc.unmatched,
        st.unmatched,
        src,
        "result.stream.unmatched",
    )?;
    add(
        &mut acc.unanswered,
        st.unanswered,
        src,
        "result.stream.unanswered",
    )?;
    acc.messages_per_call = acc.messages_per_call.max(st.messages_per_call);
    for (to, from, field) in [
        (
            &mut acc.first_reply,
            &st.first_reply,
            "result.stream.first_reply",
        ),
        (&mut acc.gaps, &st.gaps, "result.stream.gaps"),
    ] {
        to.add(from).map_err(|_| overflow(src, field))?;
    }
    Ok(())
}

/// Each shard's machine counted its own listeners: the counts add up; each shard sampled
/// the accept queue of its own server: samples add up, the most is the most of any.
fn add_listen(
    out: &mut Option<ListenQueue>,
    l: Option<ListenQueue>,
    src: &Source,
) -> Result<(), MergeError> {
    let Some(l) = l else { return Ok(()) };
    let acc = out.get_or_insert_with(Default::default);
    add(
        &mut acc.overflows,
        l.overflows,
        src,
        "result.listen.overflows",
    )?;
    add(&mut acc.drops, l.drops, src, "result.listen.drops")?;
    if let Some(a) = l.accept {
        acc.accept = Some(acc.accept.map_or(a, |b| b.merged(a)));
    }
    Ok(())
}

/// A shard's schedule facts beyond the counts, joined into the fleet's. The lag
/// percentiles of the whole are not known from the shards' percentiles: the largest of
/// each is kept, an upper bound (the fleet's p99 is at most the worst shard's). The
/// connections and their caps add up; the time spent waiting adds up; one capped shard
/// caps the whole. The fleet's gaps are not kept, only each shard's test of its own: the
/// shards' process (Poisson when one drew Poisson gaps) and the test that fits worst.
fn join_lag_and_connections(acc: &mut ScheduleStats, s: &ScheduleStats) {
    if acc.arrival.process == shootout_model::Arrival::Even {
        acc.arrival.process = s.arrival.process;
    }
    acc.arrival.fit = match (acc.arrival.fit, s.arrival.fit) {
        (Some(a), Some(b)) => Some(if b.p < a.p { b } else { a }),
        (a, b) => a.or(b),
    };
    acc.lag_p50_us = acc.lag_p50_us.max(s.lag_p50_us);
    acc.lag_p99_us = acc.lag_p99_us.max(s.lag_p99_us);
    acc.lag_p999_us = acc.lag_p999_us.max(s.lag_p999_us);
    acc.connections = acc.connections.saturating_add(s.connections);
    acc.max_connections = acc.max_connections.saturating_add(s.max_connections);
    acc.capped |= s.capped;
    acc.spun = acc.spun.saturating_add(s.spun);
    acc.overtaken = acc.overtaken.saturating_add(s.overtaken);
}

/// The length of the union of the runs' windows `[started, started + duration)`: the time
/// during which some shard was loading, over which the merged throughput is taken.
fn union_of_windows(runs: &[(&Source, &RunResult)]) -> Duration {
    let mut windows: Vec<(i64, i64)> = runs
        .iter()
        .map(|(_, r)| {
            let start = unix_ns(r.started);
            let len = i64::try_from(r.duration.as_nanos()).unwrap_or(i64::MAX);
            (start, start.saturating_add(len))
        })
        .collect();
    windows.sort_unstable();
    let mut total: i64 = 0;
    let mut current: Option<(i64, i64)> = None;
    for (s, e) in windows {
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total = total.saturating_add(ce.saturating_sub(cs));
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = current {
        total = total.saturating_add(ce.saturating_sub(cs));
    }
    Duration::from_nanos(total.max(0) as u64)
}

/// The per-second series of the runs on one wall-clock timeline: second `s` of a run that
/// started `d` after the earliest is second `round(d + s)` of the merge; the seconds that
/// land together have their counts summed and their latency histograms added.
fn seconds(runs: &[(&Source, &RunResult)], t0: i64) -> Vec<SecondStats> {
    const NS: i64 = 1_000_000_000;
    let mut groups: BTreeMap<u32, Vec<&SecondStats>> = BTreeMap::new();
    for (_, r) in runs {
        let shift = unix_ns(r.started).saturating_sub(t0);
        for s in &r.series {
            let at = shift.saturating_add(i64::from(s.second) * NS);
            let second = u32::try_from(at.saturating_add(NS / 2) / NS).unwrap_or(u32::MAX);
            groups.entry(second).or_default().push(s);
        }
    }
    let mut de = Deserializer::new();
    let mut acc: Histogram<u64> = second_histogram();
    groups
        .into_iter()
        .map(|(second, group)| {
            acc.reset();
            for s in &group {
                if let Ok(h) = de.deserialize::<u64, _>(&mut s.histogram.as_slice()) {
                    // Per-second histograms share their bounds: adding cannot fail.
                    let _ = acc.add(&h);
                }
            }
            // Each run's seconds add up to its counts (the file's reader checks it) and
            // the counts' sums were checked: these sums cannot pass u64::MAX.
            SecondStats::of(
                second,
                group
                    .iter()
                    .fold(0u64, |n, s| n.saturating_add(s.completed)),
                group.iter().fold(0u64, |n, s| n.saturating_add(s.failed)),
                &acc,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_model::{Shard, Target};
    use std::time::UNIX_EPOCH;

    const T0: u64 = 1_764_000_000_000_000_000;

    /// A list naming one 16 MiB body 64 times.
    fn listed(body: u8) -> LoadSpec {
        let text = "POST /a\n@b\n\n".repeat(64);
        let list = shootout_model::requests::RequestList::parse(
            "l",
            &text,
            None,
            shootout_model::requests::Order::Seq,
            1,
            |_| Ok(vec![body; 16 << 20]),
        )
        .unwrap();
        let mut s = fleet();
        s.list = Some(list);
        s
    }

    /// The resident size's peak (VmHWM) or now (VmRSS), in KiB.
    fn status_kib(field: &str) -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = s.lines().find(|l| l.starts_with(field)).unwrap();
        let kib = line[field.len()..].trim().trim_end_matches(" kB");
        kib.parse().unwrap()
    }

    /// `shootout load --urls` naming one 16 MiB body 64 times took 4.2 GB and 25 s for
    /// `-n 1`: the fingerprint of the load (the start barrier's run id) was the hash of the
    /// spec's text, each entry's body written out as a list of numbers. Hashed as read,
    /// the peak grows by no copy of a body; the fingerprint still tells bodies apart.
    #[test]
    fn a_list_naming_one_body_many_times_is_fingerprinted_in_place() {
        let spec = listed(b'x');
        // Writing 5 resets the peak (VmHWM) to the current resident size (Linux 4.0+).
        std::fs::write("/proc/self/clear_refs", "5").unwrap();
        let before = status_kib("VmRSS:");
        let fingerprint = load_fingerprint(&spec);
        let grown_mib = status_kib("VmHWM:").saturating_sub(before) / 1024;
        assert!(grown_mib < 16, "the fingerprint took {grown_mib} MiB");
        assert_eq!(fingerprint, load_fingerprint(&listed(b'x')));
        assert_ne!(fingerprint, load_fingerprint(&listed(b'y')));
        let mut threads = listed(b'x');
        threads.threads = 7;
        assert_eq!(
            fingerprint,
            load_fingerprint(&threads),
            "a machine's own setting"
        );
    }

    fn fleet() -> LoadSpec {
        let mut s = LoadSpec::new(Target::parse("http://127.0.0.1:8080/").unwrap());
        s.connections = 4;
        s.requests = None;
        s.duration = Some(Duration::from_secs(2));
        s.pace = Pace::Rate(400.0);
        s
    }

    /// Shard `index` of `count`, started `delay_ms` after T0, its answers' latencies (µs)
    /// in its seconds 0 and 1.
    fn shard(index: u32, count: u32, delay_ms: u64, seconds: [&[u64]; 2]) -> Source {
        let sh = Shard::new(index, count).unwrap();
        let started = UNIX_EPOCH + Duration::from_nanos(T0) + Duration::from_millis(delay_ms);
        let mut r = RunResult::empty(started, Duration::from_secs(2));
        r.series = seconds
            .iter()
            .enumerate()
            .map(|(s, values)| {
                let mut h = second_histogram();
                for &v in *values {
                    r.histograms.latency.record(v).unwrap();
                    h.record(v).unwrap();
                }
                SecondStats::of(s as u32, values.len() as u64, 0, &h)
            })
            .collect();
        r.counts.completed = r.histograms.latency.len();
        r.counts.ok = r.histograms.latency.len();
        r.generator.threads = 1;
        let spec = sh.divide(&fleet()).unwrap();
        Source {
            name: format!("shard-{index}.json"),
            run: SavedRun {
                shootout: "0.1.0".into(),
                shard: Some(sh),
                start_at: Some(UNIX_EPOCH + Duration::from_nanos(T0)),
                barrier: None,
                fleet: fleet(),
                spec,
                outcome: Outcome::Complete,
                result: Some(r),
            },
        }
    }

    fn two() -> Vec<Source> {
        vec![
            shard(0, 2, 0, [&[100, 200, 300], &[1000]]),
            shard(1, 2, 300, [&[150, 250_000], &[7, 8, 9]]),
        ]
    }

    /// Each shard's journey steps and journeys, the step latencies as given (µs).
    fn with_steps(mut s: Source, login: &[u64], post: &[u64], post_ok: u64) -> Source {
        let kind = |label: &str, ok: u64, values: &[u64]| {
            let mut latency = second_histogram();
            for &v in values {
                latency.record(v).unwrap();
            }
            let mut t = TargetStats::new(label);
            t.completed = values.len() as u64;
            t.ok = ok;
            t.failures[shootout_model::FailureKind::Body] = t.completed - ok;
            t.latency = latency;
            t
        };
        let r = s.run.result.as_mut().unwrap();
        r.targets = vec![
            kind("writer › login", login.len() as u64, login),
            kind("writer › post", post_ok, post),
        ];
        let durations: Vec<u64> = login.iter().map(|v| v * 10).collect();
        r.journeys = vec![kind("writer", post_ok, &durations)];
        s
    }

    /// A streaming run's calls add up over the shards exactly (counts summed, histograms
    /// merged bucket for bucket); shards of other stream bounds are not one load, and
    /// sums past `u64::MAX` are refused naming the field.
    #[test]
    fn shards_streams_add_up_exactly() {
        let stream = |calls: u64, gaps: &[u64]| {
            let mut st = shootout_model::StreamStats::new("bidi");
            st.calls_ok = calls;
            st.sent = 5 * calls;
            st.replies = 5 * calls - 1;
            st.unanswered = 1;
            st.messages_per_call = 5;
            st.first_reply.record_n(900, calls).unwrap();
            for &g in gaps {
                st.gaps.record(g).unwrap();
            }
            Box::new(st)
        };
        let mut shards = two();
        shards[0].run.result.as_mut().unwrap().stream = Some(stream(3, &[10, 2_000]));
        shards[1].run.result.as_mut().unwrap().stream = Some(stream(4, &[7]));
        let m = merge(&shards, false).unwrap();
        let st = m.result.stream.as_deref().expect("the shards' calls");
        assert_eq!(
            (st.shape, st.calls_ok, st.sent, st.replies, st.unanswered),
            ("bidi", 7, 35, 33, 2)
        );
        assert_eq!(st.first_reply.len(), 7);
        let gaps: Vec<u64> = st
            .gaps
            .iter_recorded()
            .map(|v| v.value_iterated_to())
            .collect();
        assert_eq!(
            gaps,
            [7, 10, 2_000]
                .map(|v| st.gaps.highest_equivalent(v))
                .to_vec()
        );
        shards[1]
            .run
            .result
            .as_mut()
            .unwrap()
            .stream
            .as_mut()
            .unwrap()
            .sent = u64::MAX;
        let e = merge(&shards, false).unwrap_err().to_string();
        assert!(e.contains("result.stream.sent"), "{e}");
        // Other bounds: another load.
        let mut shards = two();
        let bounds = |s: &mut Source, n| {
            for spec in [&mut s.run.fleet, &mut s.run.spec] {
                spec.expect.grpc = Some(shootout_model::GrpcReply {
                    schema: std::sync::Arc::from(&[][..]),
                    method: "helloworld.Greeter.Chat".into(),
                    max_message: 1024,
                    json: None,
                    stream: shootout_model::GrpcStream {
                        messages: Some(n),
                        ..Default::default()
                    },
                    compress: false,
                });
            }
        };
        bounds(&mut shards[0], 5);
        bounds(&mut shards[1], 6);
        let e = merge(&shards, false).unwrap_err().to_string();
        assert!(e.contains("gRPC stream bounds"), "{e}");
    }

    /// Steps and journeys once were lost by a merge (the files did not hold them): now
    /// their counts add up and their histograms are the ones a single recorder fed every
    /// value would hold.
    #[test]
    fn shards_steps_and_journeys_add_up_exactly() {
        let [a, b]: [Source; 2] = two().try_into().ok().unwrap();
        let s = [
            with_steps(a, &[100, 200], &[300, 1000], 1),
            with_steps(b, &[150, 7, 8], &[250_000, 9], 2),
        ];
        let m = merge(&s, false).unwrap();
        let r = &m.result;
        let counts = |k: &[TargetStats]| -> Vec<(String, u64, u64)> {
            k.iter()
                .map(|t| (t.label.clone(), t.completed, t.ok))
                .collect()
        };
        let row = |l: &str, c, o| (l.to_string(), c, o);
        assert_eq!(
            counts(&r.targets),
            [row("writer › login", 5, 5), row("writer › post", 4, 3)]
        );
        assert_eq!(counts(&r.journeys), [row("writer", 5, 3)]);
        // Failures keep their class: 1 + 0 of the post steps failed on their body.
        let body = |t: &TargetStats| t.failures[shootout_model::FailureKind::Body];
        assert_eq!(
            (
                body(&r.targets[0]),
                body(&r.targets[1]),
                body(&r.journeys[0])
            ),
            (0, 1, 2)
        );
        let values = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        let mut one = second_histogram();
        for v in [300, 1000, 250_000, 9] {
            one.record(v).unwrap();
        }
        assert_eq!(values(&r.targets[1].latency), values(&one));
        let mut one = second_histogram();
        for v in [1000, 2000, 1500, 70, 80] {
            one.record(v).unwrap();
        }
        assert_eq!(values(&r.journeys[0].latency), values(&one));
    }

    /// A shard's journeys with busy times of `values` (µs), or none (a file written
    /// before they were saved).
    fn with_busy(mut s: Source, values: Option<&[u64]>) -> Source {
        let r = s.run.result.as_mut().unwrap();
        r.journeys[0].busy = values.map(|values| {
            let mut h = second_histogram();
            for &v in values {
                h.record(v).unwrap();
            }
            h
        });
        s
    }

    /// Journeys' busy times add up exactly when every shard has them; one shard without
    /// them (whichever) leaves the merge without them: a part would pass for the whole.
    #[test]
    fn busy_times_merge_only_when_every_shard_has_them() {
        let shards = |a: Option<&[u64]>, b: Option<&[u64]>| {
            let [x, y]: [Source; 2] = two().try_into().ok().unwrap();
            [
                with_busy(with_steps(x, &[100, 200], &[300, 1000], 1), a),
                with_busy(with_steps(y, &[150, 7, 8], &[250_000, 9], 2), b),
            ]
        };
        let both = merge(&shards(Some(&[900, 1800]), Some(&[60, 70, 1400])), false).unwrap();
        let busy = both.result.journeys[0].busy.as_ref().expect("both had it");
        let mut one = second_histogram();
        for v in [900, 1800, 60, 70, 1400] {
            one.record(v).unwrap();
        }
        let values = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(values(busy), values(&one));
        for (a, b) in [
            (None, Some(&[60u64, 70, 1400][..])),
            (Some(&[900, 1800][..]), None),
        ] {
            let m = merge(&shards(a, b), false).unwrap();
            assert!(m.result.journeys[0].busy.is_none(), "{a:?} + {b:?}");
            assert_eq!(m.result.journeys[0].completed, 5, "the counts still add up");
        }
    }

    /// Shards of one journey load, each read from its own file (its journeys read apart),
    /// merge into a fleet that keeps the journeys; a shard of other journeys is refused,
    /// naming them.
    #[test]
    fn shards_of_one_journey_file_merge_and_of_another_are_refused() {
        let journeys = |step: &str| {
            let text = format!(
                "[[journey]]\nname = \"writer\"\n[[journey.step]]\nname = \"login\"\nget = \"/\"\n[[journey.step]]\nname = \"{step}\"\nget = \"/\"\n"
            );
            let file = shootout_model::journey::parse(&text, "j.toml", &mut |_| Err("none".into()))
                .unwrap();
            Some(shootout_model::spec::Journeys {
                source: "j.toml".into(),
                seed: 1,
                file: std::sync::Arc::new(file),
            })
        };
        let with = |mut s: Source, step: &str| {
            for spec in [&mut s.run.fleet, &mut s.run.spec] {
                spec.journey = journeys(step);
            }
            s
        };
        let [a, b]: [Source; 2] = two().try_into().ok().unwrap();
        let s = [
            with(with_steps(a.clone(), &[1], &[2], 1), "post"),
            with(with_steps(b.clone(), &[1], &[2], 1), "post"),
        ];
        let m = merge(&s, false).unwrap();
        let j = m.spec.journey.expect("the fleet keeps its journeys");
        assert_eq!(j.file.journeys[0].steps[1].name, "post");
        let s = [
            with(with_steps(a, &[1], &[2], 1), "post"),
            with(with_steps(b, &[1], &[2], 1), "read"),
        ];
        let e = merge(&s, true).unwrap_err().to_string();
        assert!(
            e.contains("journeys: j.toml: writer (weight 1: login, post) vs j.toml: writer (weight 1: login, read)"),
            "{e}"
        );
    }

    /// Shards whose steps or journeys differ are not shards of one load.
    #[test]
    fn shards_of_other_steps_or_journeys_are_refused() {
        let [a, b]: [Source; 2] = two().try_into().ok().unwrap();
        let mut b = with_steps(b, &[1], &[2], 1);
        b.run.result.as_mut().unwrap().targets[1].label = "writer › read".into();
        let s = [with_steps(a, &[1], &[2], 1), b];
        let e = merge(&s, true).unwrap_err().to_string();
        assert!(
            e.contains("entry or step 2: writer › post vs writer › read"),
            "{e}"
        );
        let [a, b]: [Source; 2] = two().try_into().ok().unwrap();
        let e = merge(&[with_steps(a, &[1], &[2], 1), b], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("entry or step 1: writer › login vs none"), "{e}");
        assert!(e.contains("journey 1: writer vs none"), "{e}");
    }

    /// The fleet's percentile intervals come from the merged answers, not from the
    /// shards' intervals: one shard's answers are 1–2 ms, the other's 3–5 ms, so the
    /// fleet's median lies between them, where the average of the shards' intervals puts
    /// an interval that holds no answer at all.
    #[test]
    fn the_merged_intervals_are_those_of_the_merged_answers() {
        use crate::certify::{percentile_intervals, Interval};
        let fast: Vec<u64> = (0..1000).map(|i| 1_000 + i).collect();
        let slow: Vec<u64> = (0..1000).map(|i| 3_000 + 2 * i).collect();
        // Read back from result files, as `merge` reads them.
        let sources: Vec<Source> = [
            shard(0, 2, 0, [&fast, &fast]),
            shard(1, 2, 0, [&slow, &slow]),
        ]
        .into_iter()
        .map(|mut s| {
            let r = s.run.result.as_mut().unwrap();
            r.counts.status.insert(200, r.counts.ok);
            // A file holds each answer in every per-answer histogram.
            for m in shootout_model::Measure::ALL
                .into_iter()
                .filter(|m| m.per_answer())
            {
                *r.histograms.get_mut(m) = r.histograms.latency.clone();
            }
            Source {
                run: SavedRun::parse(&s.run.to_json()).unwrap(),
                ..s
            }
        })
        .collect();
        let m = merge(&sources, false).unwrap();
        let merged = percentile_intervals(&m.result.histograms.latency, &m.result.series);
        // One recorder fed every answer, second by second.
        let mut one = shootout_model::latency_histogram();
        let series: Vec<SecondStats> = (0..2)
            .map(|s| {
                let mut h = second_histogram();
                for &v in fast.iter().chain(&slow) {
                    one.record(v).unwrap();
                    h.record(v).unwrap();
                }
                SecondStats::of(s, 2000, 0, &h)
            })
            .collect();
        assert_eq!(merged, percentile_intervals(&one, &series));
        let p50 = merged[0].unwrap();
        assert!(p50.lo < 2_000 && p50.hi >= 3_000, "{p50:?}");
        // The shards' own intervals, averaged, would lie in the gap between them.
        let own = |s: &Source| {
            let r = s.run.result.as_ref().unwrap();
            percentile_intervals(&r.histograms.latency, &r.series)[0].unwrap()
        };
        let (a, b): (Interval, Interval) = (own(&sources[0]), own(&sources[1]));
        let averaged = ((a.lo + b.lo) / 2, (a.hi + b.hi) / 2);
        assert!(averaged.0 > 2_000 && averaged.1 < 3_000, "{averaged:?}");
    }

    #[test]
    fn shards_add_up_exactly_on_one_timeline() {
        let m = merge(&two(), false).unwrap();
        let r = &m.result;
        assert_eq!((m.runs, m.notes.len()), (2, 0), "{:?}", m.notes);
        assert_eq!(r.counts.completed, 9);
        assert_eq!(m.spec.connections, 4);
        assert_eq!(m.spec.threads, 2);
        // The merged histogram is the one a single recorder fed every value would hold.
        let mut one = shootout_model::latency_histogram();
        for v in [100, 200, 300, 1000, 150, 250_000, 7, 8, 9] {
            one.record(v).unwrap();
        }
        let values = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(values(&r.histograms.latency), values(&one));
        // Shard 1 started 0.3 s later: its second 0 is the fleet's second 0.
        let rows: Vec<(u32, u64)> = r.series.iter().map(|s| (s.second, s.completed)).collect();
        assert_eq!(rows, vec![(0, 5), (1, 4)]);
        assert!(r.series[0].max_us >= 249_000, "{:?}", r.series[0]);
        // Windows [0, 2) and [0.3, 2.3): 2.3 s of load.
        assert_eq!(r.duration, Duration::from_millis(2300));
        assert_eq!(r.started, two()[0].run.result.as_ref().unwrap().started);
    }

    #[test]
    fn the_barrier_note_names_the_furthest_clock_and_the_longest_round_trip() {
        use shootout_model::barrier::BarrierFacts;
        let mut s = two();
        let facts = |skew_ns, rtt_us| BarrierFacts {
            skew_ns,
            rtt: Duration::from_micros(rtt_us),
            waited: Duration::from_secs(1),
        };
        s[0].run.barrier = Some(facts(0, 0));
        s[1].run.barrier = Some(facts(-2_500_000, 400));
        let m = merge(&s, false).unwrap();
        let note = m.notes.iter().find(|n| matches!(n, Note::Barrier { .. }));
        assert_eq!(
            note.map(Note::to_string).as_deref(),
            Some("2 shards started on shard 0's barrier: clocks within 2.500 ms of shard 0's (shard-1.json 2.500 ms behind), round trips up to 0.400 ms (shard-1.json), so the starts agree within 0.400 ms")
        );
        // Runs that met no barrier get no note.
        assert!(merge(&two(), false).unwrap().notes.is_empty());
    }

    #[test]
    fn one_run_merges_into_itself() {
        let s = [two().remove(1)];
        let m = merge(&s[..], true).unwrap();
        let own = s[0].run.result.as_ref().unwrap();
        assert_eq!(m.result.counts, own.counts);
        assert_eq!(m.result.duration, own.duration);
        assert_eq!(m.result.series, own.series);
    }

    #[test]
    fn another_url_is_refused_naming_the_field_and_the_files() {
        let mut s = two();
        s[1].run.fleet.target = Target::parse("http://127.0.0.1:9090/").unwrap();
        s[1].run.fleet.pace = Pace::Rate(500.0);
        let e = merge(&s, true).unwrap_err().to_string();
        assert!(e.starts_with("shard-1.json is not a shard of the same load as shard-0.json: url: http://127.0.0.1:8080/ vs http://127.0.0.1:9090/, rate: 400 req/s vs 500 req/s;"), "{e}");
    }

    /// What each machine sets its own way is not the load; anything else that differs is,
    /// even where the values as shown are equal.
    #[test]
    fn machine_settings_are_not_the_load_and_hidden_differences_are() {
        let a = fleet();
        let mut b = fleet();
        b.threads = 7;
        b.cpus = Some(vec![1]);
        b.record.reservoir = 3;
        b.offset = Duration::from_millis(5);
        b.bind = vec!["127.0.0.2".parse().unwrap()];
        b.busy_poll = Duration::from_micros(50);
        b.target.tls.insecure = true;
        assert_eq!(differences(&a, &b), Vec::<String>::new());
        b.expect.body_contains = Some(vec![0xff]);
        let mut c = b.clone();
        c.expect.body_contains = Some(vec![0xfe]);
        assert_eq!(
            differences(&b, &c),
            ["another setting of the load differs (equal as shown here)"]
        );
    }

    #[test]
    fn shards_of_another_protocol_pipeline_or_request_list_are_refused() {
        let mut s = two();
        s[1].run.fleet.protocol = shootout_model::Protocol::Http2;
        s[1].run.fleet.streams = 8;
        let e = merge(&s, true).unwrap_err().to_string();
        assert!(
            e.contains("protocol: http/1.1 vs h2, streams: 1 vs 8;"),
            "{e}"
        );
        let mut s = two();
        s[0].run.fleet.pipeline = 16;
        let e = merge(&s, true).unwrap_err().to_string();
        assert!(e.contains("pipeline: 16 vs 1;"), "{e}");
        let list = |path: &str| {
            shootout_model::requests::RequestList::parse(
                "urls.txt",
                &format!("GET {path}\n"),
                None,
                shootout_model::requests::Order::Seq,
                0,
                |_| Ok(Vec::new()),
            )
            .unwrap()
        };
        let mut s = two();
        s[0].run.fleet.list = Some(list("/a"));
        s[1].run.fleet.list = Some(list("/b"));
        let e = merge(&s, true).unwrap_err().to_string();
        assert!(e.contains("request list: urls.txt (1 entries "), "{e}");
    }

    /// A shard's HTTP/2 server allowing fewer streams than asked is still said after the
    /// merge.
    #[test]
    fn the_lowest_streams_a_shard_was_allowed_survives_the_merge() {
        let mut s = two();
        for (src, allowed) in s.iter_mut().zip([6, 3]) {
            for spec in [&mut src.run.fleet, &mut src.run.spec] {
                spec.protocol = shootout_model::Protocol::Http2;
                spec.streams = 8;
            }
            let r = src.run.result.as_mut().unwrap();
            r.note_streams_limited(8, Some(allowed));
        }
        let m = merge(&s, false).unwrap();
        assert_eq!(m.result.streams_allowed(), Some(3));
    }

    #[test]
    fn a_missing_shard_is_an_error_unless_partial_merges_are_allowed() {
        let s = vec![
            shard(0, 4, 0, [&[1], &[2]]),
            shard(1, 4, 0, [&[1], &[2]]),
            shard(3, 4, 0, [&[1], &[2]]),
        ];
        let e = merge(&s, false).unwrap_err();
        assert_eq!(
            e,
            MergeError::Missing {
                missing: vec![2],
                count: 4
            }
        );
        assert!(e.to_string().contains("shard 2 of 4 missing"), "{e}");
        let m = merge(&s, true).unwrap();
        assert_eq!(m.result.counts.completed, 6);
        assert!(
            m.notes[0].to_string().contains("shard 2 missing"),
            "{:?}",
            m.notes
        );
    }

    #[test]
    fn a_failed_or_twice_given_shard_is_named() {
        let mut s = two();
        s[1].run.outcome = Outcome::Failed("cannot connect to 127.0.0.1:8080".into());
        s[1].run.result = None;
        let e = merge(&s, false).unwrap_err().to_string();
        assert!(
            e.starts_with("shard-1.json (shard 1 failed: cannot connect"),
            "{e}"
        );
        let m = merge(&s, true).unwrap();
        assert_eq!(m.result.counts.completed, 4);
        let mut s = two();
        s[1] = shard(0, 2, 0, [&[1], &[1]]);
        let e = merge(&s, false).unwrap_err();
        assert!(matches!(e, MergeError::Duplicate { index: 0, .. }), "{e}");
    }

    /// Counts that overflow when summed wrapped: 2^64 − 10 + 100 read back as 90.
    #[test]
    fn counts_that_overflow_when_summed_are_refused_naming_the_file_and_field() {
        let mut s = two();
        s[0].run.result.as_mut().unwrap().counts.completed = u64::MAX - 10;
        s[1].run.result.as_mut().unwrap().counts.completed = 100;
        let e = merge(&s, false).unwrap_err();
        assert_eq!(
            e,
            MergeError::Overflow {
                run: "shard-1.json".into(),
                field: "result.counts.completed".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "result.counts.completed of shard-1.json added to the runs before it passes 18446744073709551615: a file is damaged or not a shootout result"
        );
        let mut s = two();
        for src in &mut s {
            src.run.result.as_mut().unwrap().schedule = Some(ScheduleStats {
                target_rps: 1.0,
                achieved_rps: 1.0,
                due: u64::MAX / 2 + 1,
                sent: 0,
                late: 0,
                late_no_connection: 0,
                max_lag: Duration::ZERO,
                ..Default::default()
            });
        }
        let e = merge(&s, false).unwrap_err();
        assert!(
            matches!(e, MergeError::Overflow { ref field, .. } if field == "result.schedule.due"),
            "{e}"
        );
        let mut s = two();
        s[0].run.spec.threads = usize::MAX;
        let e = merge(&s, false).unwrap_err();
        assert!(
            matches!(e, MergeError::Overflow { ref field, .. } if field == "spec.threads"),
            "{e}"
        );
    }

    #[test]
    fn poisson_shards_merge_as_poisson_with_the_worst_fit() {
        let fit = |p| shootout_model::Fit {
            n: 500,
            statistic: 1.0,
            p,
        };
        let mut s = two();
        for (i, src) in s.iter_mut().enumerate() {
            src.run.result.as_mut().unwrap().schedule = Some(ScheduleStats {
                arrival: shootout_model::ArrivalCheck {
                    process: shootout_model::Arrival::Poisson {
                        seed: 10 + i as u64,
                    },
                    fit: Some(fit([0.4, 0.02][i])),
                },
                ..Default::default()
            });
        }
        let a = merge(&s, false).unwrap().result.schedule.unwrap().arrival;
        assert_eq!(a.process, shootout_model::Arrival::Poisson { seed: 10 });
        assert_eq!(a.fit, Some(fit(0.02)));
    }

    #[test]
    fn starts_apart_are_noted() {
        let s = vec![
            shard(0, 2, 0, [&[1], &[2]]),
            shard(1, 2, 2500, [&[1], &[2]]),
        ];
        let m = merge(&s, false).unwrap();
        let notes: Vec<String> = m.notes.iter().map(Note::to_string).collect();
        assert!(
            notes[0].starts_with(
                "the shards started 2.500 s apart (shard-0.json first, shard-1.json last)"
            ),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("shard-1.json started 2.500 s after the agreed start time"),
            "{notes:?}"
        );
        // Shard 1's seconds land 2.5 s later: rounded to the fleet's seconds 3 and 4 (2.5 → 3).
        let rows: Vec<u32> = m.result.series.iter().map(|s| s.second).collect();
        assert_eq!(rows, vec![0, 1, 3, 4]);
        // Windows [0, 2) and [2.5, 4.5): the half second between them loaded nothing.
        assert_eq!(m.result.duration, Duration::from_secs(4));
    }
}
