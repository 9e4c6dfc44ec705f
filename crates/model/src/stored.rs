//! The read model: what the store gives back — runs, their contenders and steps, and the
//! ids that tie them together — as plain data. The store (`shootout-store`) fills these
//! from SQLite; the analysis and the reports read them and nothing else, so neither needs
//! the store (nor SQLite) to build.
//!
//! Seams: no I/O here. The store writes through its own borrowed records (`NewRun`,
//! `ContenderRecord`, `StepRecord`) and reads back into these types. Units: wall-clock
//! instants are [`SystemTime`]; a step's histograms hold microseconds, as in
//! [`RunResult`].

use crate::{latency_histogram, LatencySummary, Measure, Sample, SecondStats, TargetStats};
use crate::{ContenderStatus, LoadLevel, MachineFacts, ProcessOwner, ResourceSample};
use crate::{RunResult, RunStatus, StepStatus, Wire};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// A run's id (its row id in the store's `runs` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

/// A step's id (its row id in the store's `steps` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepId(pub i64);

/// A contender's id within a store (its row id in `contenders`; unique across runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContenderId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Its id.
    pub id: RunId,
    /// The plan's name.
    pub name: String,
    /// The plan file's text, as the user gave it.
    pub plan_text: String,
    /// The resolved plan, as JSON text (read it with
    /// [`ResolvedPlan::parse`](crate::resolved::ResolvedPlan::parse)).
    pub plan_resolved: String,
    /// The machine the run was made on.
    pub machine: MachineFacts,
    /// Wall-clock start.
    pub started: SystemTime,
    /// Wall-clock end; `None` while running (or if shootout died without a word).
    pub ended: Option<SystemTime>,
    /// How it ended ([`RunStatus::Running`] until the store is told it finished).
    pub status: RunStatus,
}

/// One line of `shootout ls`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// The plan's name.
    pub name: String,
    /// Wall-clock start.
    pub started: SystemTime,
    /// Wall-clock end, if it ended.
    pub ended: Option<SystemTime>,
    /// How it ended.
    pub status: RunStatus,
    /// Contenders recorded.
    pub contenders: usize,
    /// Steps recorded.
    pub steps: usize,
}

/// A contender as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContenderRow {
    /// Its id.
    pub id: ContenderId,
    /// The run it belongs to.
    pub run: RunId,
    /// Its name in the plan.
    pub name: String,
    /// The command that starts it, or the URL.
    pub command: String,
    /// The others are compared with it.
    pub baseline: bool,
    /// What became of it.
    pub status: ContenderStatus,
    /// Why it failed; empty when there is nothing to say.
    pub detail: String,
    /// Its version text.
    pub version: Option<String>,
    /// Where its standard output was captured.
    pub stdout_log: Option<PathBuf>,
    /// Where its standard error was captured.
    pub stderr_log: Option<PathBuf>,
}

/// A run left `running`, as a later shootout examines it (the store's
/// `unfinished_runs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedRun {
    /// Its id.
    pub id: RunId,
    /// The plan's name.
    pub name: String,
    /// The shootout process that runs it; `None` for runs stored by an older shootout.
    pub owner: Option<ProcessOwner>,
    /// Its contenders' names and process markers, in the order they were added.
    pub contenders: Vec<(String, Option<String>)>,
}

/// A step (contender × workload × load level × repetition) as read back from the store.
#[derive(Debug, Clone)]
pub struct StoredStep {
    /// Its id.
    pub id: StepId,
    /// The run it belongs to.
    pub run: RunId,
    /// The contender measured.
    pub contender: ContenderId,
    /// The workload's name.
    pub workload: String,
    /// The load level.
    pub level: LoadLevel,
    /// Which repetition (1-based).
    pub repetition: u32,
    /// Wall-clock start of the step.
    pub started: SystemTime,
    /// Wall-clock end of the step.
    pub ended: SystemTime,
    /// How the step ended.
    pub status: StepStatus,
    /// What the load run measured. As the store reads it back, its warnings hold only the
    /// HTTP/2 streams limit, a fact; the reader derives the others from the numbers
    /// (`shootout_analysis::load_warnings::refresh_stored`). When [`StoredStep::packed`]
    /// holds the step's bulky parts, its histograms, its request list entries' (or journey
    /// steps') and its journeys' histograms and its samples are left empty here, and so
    /// are its seconds' histograms in a step read from a store's file: read them with
    /// [`StoredStep::histogram`], [`StoredStep::samples`], [`StoredStep::series`] or
    /// [`StoredStep::unpacked`].
    pub result: RunResult,
    /// The contender's process tree during the step, oldest first.
    pub resources: Vec<ResourceSample>,
    /// How the client talked to the contender (protocol, streams, pipeline); `None` for
    /// steps stored before shootout recorded it.
    pub wire: Option<Wire>,
    /// What else ran on the step's CPUs; `None` for steps stored before shootout
    /// recorded it, or when it could not be read.
    pub other_load: Option<crate::OtherLoad>,
    /// The step was one of a capacity search's (its level is the rate tried), with its
    /// verdict; `None` for a step of a sweep of the plan's levels.
    pub search: Option<crate::find_max::SearchStep>,
    /// The step's histograms and samples as the store keeps them, checked when read and
    /// decoded again when asked (`None` for a step built in memory, whose `result` holds
    /// them): a report of thousands of steps keeps a few KiB per step instead of six
    /// decoded histograms of 184 KiB each.
    pub packed: Option<Packed>,
}

/// Gives a step's reservoir of samples when asked: the store reads it again from its file
/// (a full reservoir takes about 65 KB packed, so a store of 20,000 steps would hold 1.3 GB
/// of them), or decodes bytes it kept (a store in memory). Given by the store, which
/// checked the samples when it read the step.
pub type SampleSource = Arc<dyn Fn() -> Vec<Sample> + Send + Sync>;

/// The most tenths of a second [`SampleTenths`] counts (a minute): tenths stand in for
/// seconds in steps of a few seconds only.
pub const MAX_SAMPLE_TENTHS: usize = 600;

/// What the rankings' tenths of a short step need of its samples: how many requests were
/// sampled, and the good answers among them by the tenth of a second each started in (the
/// first [`MAX_SAMPLE_TENTHS`]). The store counts them as it checks a step's samples, so
/// that a report does not read every reservoir again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleTenths {
    /// Requests sampled.
    pub sampled: u64,
    /// Good answers sampled, by tenth of a second from the step's start (trailing empty
    /// tenths left out).
    pub good: Vec<u32>,
}

impl SampleTenths {
    /// Counts `samples`.
    pub fn of(samples: &[Sample]) -> SampleTenths {
        let mut t = SampleTenths {
            sampled: samples.len() as u64,
            good: Vec::new(),
        };
        for s in samples.iter().filter(|s| s.failure.is_none()) {
            if let Some(tenth) = Self::tenth(s.start_us) {
                t.count_good_in(tenth);
            }
        }
        t
    }

    /// The tenth of a second counted for a request that started `start_us` after the step
    /// began; `None` past the [`MAX_SAMPLE_TENTHS`] counted.
    pub fn tenth(start_us: u64) -> Option<u16> {
        let tenth = start_us / 100_000;
        (tenth < MAX_SAMPLE_TENTHS as u64).then_some(tenth as u16)
    }

    /// Counts a good answer sampled in `tenth` (one [`SampleTenths::tenth`] gave).
    pub fn count_good_in(&mut self, tenth: u16) {
        let tenth = usize::from(tenth);
        if self.good.len() <= tenth {
            self.good.resize(tenth + 1, 0);
        }
        self.good[tenth] = self.good[tenth].saturating_add(1);
    }
}

/// Gives the histograms of a step's seconds when asked, in the order of its series (empty
/// bytes for a second without one): the store reads them again from its file (571 bytes
/// a second in the steps of the store's `big_store` test, so its 20,000 steps of 5 s
/// would hold 57 MB of them). Given by the store, which checked them when it read the
/// step.
pub type SecondsSource = Arc<dyn Fn() -> Vec<Vec<u8>> + Send + Sync>;

/// A step's bulky parts as the store keeps them: each histogram (HdrHistogram V2 +
/// deflate, empty for one a step stored before it was recorded), each request list
/// entry's or journey step's latency histogram and each journey's duration and busy-time
/// histograms (no busy time for journeys stored before it was measured), with the step's
/// latency summary worked out once, where
/// its reservoir of samples comes from, and where its seconds' histograms do when the
/// step's series is kept without them. Every histogram was decoded once when packed, so
/// decoding it again cannot fail; the bytes are shared, so a clone costs a few pointers.
#[derive(Clone)]
pub struct Packed {
    histograms: [Arc<[u8]>; 6],
    /// The ages of the requests in flight at the end; `None` where not known.
    in_flight: Option<Arc<[u8]>>,
    targets: Vec<Arc<[u8]>>,
    journeys: Vec<Arc<[u8]>>,
    busy: Vec<Option<Arc<[u8]>>>,
    samples: SampleSource,
    /// The samples counted by tenths, where the store counted them as it checked them.
    tenths: Option<SampleTenths>,
    seconds: Option<SecondsSource>,
    latency: LatencySummary,
}

impl fmt::Debug for Packed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packed")
            .field("bytes", &self.bytes())
            .field("latency", &self.latency)
            .finish()
    }
}

/// Which of a step's packed histograms did not decode ([`Packed::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// One of the step's six.
    Measure(Measure),
    /// A request list entry's or a journey step's latency.
    Target,
    /// A journey's duration.
    Journey,
    /// A journey's busy time (its duration less its think times).
    Busy,
    /// The ages of the requests in flight at the end.
    InFlight,
}

impl Packed {
    /// Packs a step's parts: `histograms` in [`Measure::ALL`]'s order (empty bytes for an
    /// empty histogram), `targets` in the list's (or the journey steps') order, `journeys`
    /// in the journey file's, `busy` the journeys' busy times in the same order (`None`
    /// where not measured), where its `samples` come from, and where its `seconds`'
    /// histograms do (`None`: the step's series holds them). Each histogram is decoded
    /// here (checked, and the latency summarised): the error names the part and what is
    /// wrong.
    pub fn new(
        histograms: [Vec<u8>; 6],
        targets: Vec<Vec<u8>>,
        journeys: Vec<Vec<u8>>,
        busy: Vec<Option<Vec<u8>>>,
        samples: SampleSource,
        seconds: Option<SecondsSource>,
    ) -> Result<Packed, (Part, crate::hdr::HdrError)> {
        let mut latency = LatencySummary::default();
        for (m, bytes) in Measure::ALL.into_iter().zip(&histograms) {
            let h = unpack(bytes).map_err(|e| (Part::Measure(m), e))?;
            if m == Measure::Latency {
                latency = LatencySummary::of(&h);
            }
        }
        for bytes in &targets {
            unpack(bytes).map_err(|e| (Part::Target, e))?;
        }
        for bytes in &journeys {
            unpack(bytes).map_err(|e| (Part::Journey, e))?;
        }
        for bytes in busy.iter().flatten() {
            unpack(bytes).map_err(|e| (Part::Busy, e))?;
        }
        Ok(Packed {
            histograms: histograms.map(Arc::from),
            in_flight: None,
            targets: targets.into_iter().map(Arc::from).collect(),
            journeys: journeys.into_iter().map(Arc::from).collect(),
            busy: busy.into_iter().map(|b| b.map(Arc::from)).collect(),
            samples,
            tenths: None,
            seconds,
            latency,
        })
    }

    /// The same, with its samples counted by tenths (see [`StoredStep::sample_tenths`]).
    pub fn with_tenths(mut self, tenths: SampleTenths) -> Packed {
        self.tenths = Some(tenths);
        self
    }

    /// The same, with the ages of the step's requests in flight at its end (`None`: not
    /// known), checked as the others are.
    pub fn with_in_flight(
        mut self,
        bytes: Option<Vec<u8>>,
    ) -> Result<Packed, (Part, crate::hdr::HdrError)> {
        if let Some(b) = &bytes {
            unpack(b).map_err(|e| (Part::InFlight, e))?;
        }
        self.in_flight = bytes.map(Arc::from);
        Ok(self)
    }

    /// The bytes of histograms held.
    pub fn bytes(&self) -> usize {
        self.histograms.iter().map(|h| h.len()).sum::<usize>()
            + self.in_flight.as_ref().map_or(0, |h| h.len())
            + self.targets.iter().map(|h| h.len()).sum::<usize>()
            + self.journeys.iter().map(|h| h.len()).sum::<usize>()
            + self.busy.iter().flatten().map(|h| h.len()).sum::<usize>()
    }
}

/// A packed histogram decoded (empty bytes: an empty histogram). The bytes were checked
/// when packed ([`Packed::new`]), so [`Packed`]'s readers never see the error.
fn unpack(bytes: &[u8]) -> Result<Histogram<u64>, crate::hdr::HdrError> {
    if bytes.is_empty() {
        return Ok(latency_histogram());
    }
    crate::hdr::decode(bytes)
}

/// A histogram decoded again from bytes [`Packed::new`] checked.
fn unpack_checked(bytes: &[u8]) -> Histogram<u64> {
    // Checked when packed: an error cannot happen here, and would read as no values.
    unpack(bytes).unwrap_or_else(|_| latency_histogram())
}

impl StoredStep {
    /// Packs the step's histograms, request list entries' histograms, the ages of its
    /// requests in flight at its end and samples away into `packed`, leaving `result`
    /// without them (what the store does with each step it reads). A journey's busy time,
    /// and the ages, are left a stub where `packed` holds them, `None` where it does not,
    /// so that `result` still says which are known.
    pub fn pack(&mut self, packed: Packed) {
        self.result.histograms = crate::Histograms::stubs();
        for t in self
            .result
            .targets
            .iter_mut()
            .chain(&mut self.result.journeys)
        {
            t.latency = crate::histograms::stub();
        }
        for (i, t) in self.result.journeys.iter_mut().enumerate() {
            let kept = packed.busy.get(i).is_some_and(Option::is_some);
            t.busy = kept.then(crate::histograms::stub);
        }
        self.result.samples = Vec::new();
        // A stand-in where the ages are known, so that `result` still says they are.
        self.result.in_flight_at_end = packed.in_flight.as_ref().map(|_| crate::histograms::stub());
        self.packed = Some(packed);
    }

    /// The histogram of `measure` (µs): borrowed from `result` when the step is not
    /// packed, else decoded now.
    pub fn histogram(&self, measure: Measure) -> Cow<'_, Histogram<u64>> {
        match &self.packed {
            None => Cow::Borrowed(self.result.histograms.get(measure)),
            Some(p) => Cow::Owned(unpack_checked(&p.histograms[measure_index(measure)])),
        }
    }

    /// The summary of the latency histogram (ms), worked out once for a packed step.
    pub fn latency_summary(&self) -> LatencySummary {
        match &self.packed {
            None => LatencySummary::of(&self.result.histograms.latency),
            Some(p) => p.latency,
        }
    }

    /// The reservoir of samples: borrowed from `result` when the step is not packed, else
    /// read now (empty if the store's file cannot be read again).
    pub fn samples(&self) -> Cow<'_, [Sample]> {
        match &self.packed {
            None => Cow::Borrowed(&self.result.samples),
            Some(p) => Cow::Owned((p.samples)()),
        }
    }

    /// The samples counted by tenths of a second: as the store counted them, or counted
    /// now from [`StoredStep::samples`].
    pub fn sample_tenths(&self) -> Cow<'_, SampleTenths> {
        match self.packed.as_ref().and_then(|p| p.tenths.as_ref()) {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(SampleTenths::of(&self.samples())),
        }
    }

    /// `read` of the result with the histograms of `measures` decoded in it, for a reader
    /// that needs those and nothing else packed: no copy of the result is made, and the
    /// stand-ins are put back after. A histogram not in `measures` reads as empty there.
    pub fn with_histograms<R>(
        &mut self,
        measures: &[Measure],
        read: impl FnOnce(&RunResult) -> R,
    ) -> R {
        let Some(p) = &self.packed else {
            return read(&self.result);
        };
        for &m in measures {
            *self.result.histograms.get_mut(m) = unpack_checked(&p.histograms[measure_index(m)]);
        }
        let out = read(&self.result);
        for &m in measures {
            *self.result.histograms.get_mut(m) = crate::histograms::stub();
        }
        out
    }

    /// The per-second series with each second's histogram: borrowed when the step holds
    /// them, else a copy with them read now (none if the store's file cannot be read
    /// again).
    pub fn series(&self) -> Cow<'_, [SecondStats]> {
        let Some(seconds) = self.packed.as_ref().and_then(|p| p.seconds.as_ref()) else {
            return Cow::Borrowed(&self.result.series);
        };
        let mut series = self.result.series.clone();
        for (s, histogram) in series.iter_mut().zip(seconds()) {
            s.histogram = histogram;
        }
        Cow::Owned(series)
    }

    /// The result with its histograms, the ages of its requests in flight at its end, its
    /// request list entries' (or journey steps') histograms and its journeys' (their busy
    /// times included) and its seconds' histograms (not its samples:
    /// [`StoredStep::samples`]), for a reader that needs the whole of it: borrowed when the
    /// step is not packed, else a copy with them decoded.
    pub fn unpacked(&self) -> Cow<'_, RunResult> {
        let Some(p) = &self.packed else {
            return Cow::Borrowed(&self.result);
        };
        let mut r = self.result.clone();
        if p.seconds.is_some() {
            r.series = self.series().into_owned();
        }
        for m in Measure::ALL {
            *r.histograms.get_mut(m) = unpack_checked(&p.histograms[measure_index(m)]);
        }
        r.in_flight_at_end = p.in_flight.as_deref().map(unpack_checked);
        let unpacked = |kinds: &[TargetStats], packed: &[Arc<[u8]>]| {
            kinds
                .iter()
                .zip(packed)
                .map(|(t, bytes)| TargetStats {
                    latency: unpack_checked(bytes),
                    ..t.clone()
                })
                .collect()
        };
        r.targets = unpacked(&self.result.targets, &p.targets);
        r.journeys = unpacked(&self.result.journeys, &p.journeys);
        for (t, busy) in r.journeys.iter_mut().zip(&p.busy) {
            t.busy = busy.as_deref().map(unpack_checked);
        }
        Cow::Owned(r)
    }
}

/// The position of `m` in [`Measure::ALL`].
fn measure_index(m: Measure) -> usize {
    Measure::ALL
        .iter()
        .position(|&x| x == m)
        .expect("every measure is in Measure::ALL")
}

/// One run as the reports need it: the run, its contenders (in plan order) and its steps
/// (in the order measured), everything read from the store.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The run.
    pub run: RunRow,
    /// Its contenders.
    pub contenders: Vec<ContenderRow>,
    /// Its steps, each with its rebuilt `RunResult` and resource samples.
    pub steps: Vec<StoredStep>,
    /// The other runs whose steps were added to this one's (`shootout report --runs`);
    /// empty for a run as stored.
    pub also: Vec<RunId>,
}
