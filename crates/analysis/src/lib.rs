//! What shootout's numbers say, apart from how they are printed: a stored run's steps
//! grouped into cells of repetitions with their medians and spreads ([`cells`]), the
//! whole analysis of a stored run assembled from its cells and capacities ([`analysis`]),
//! the warnings of one load run, judged from its numbers ([`load_warnings`]), the warnings
//! a reader of a stored run must see, derived once as a typed list ([`warnings`]), the
//! statistics of one load run ([`stats`]), the significance test ([`mann_whitney`]) and
//! the changes, verdicts and gates of `shootout compare` ([`compare`]), the merge of a
//! distributed load's shards ([`merge`]), the `--fail-if` thresholds ([`threshold`]) and
//! what a workload's counts count ([`unit`]: requests, or gRPC's calls, replies, messages).
//!
//! Layers: the cells, the evidence test and the warnings' types sit lowest, the
//! capacities above them, and [`Analysis`] above those; the rankings, the headlines, the
//! thresholds and `compare` read an [`Analysis`], and nothing below it imports them.
//!
//! Seams: reads the model's read types ([`StoredRun`](shootout_model::stored::StoredRun),
//! [`RunResult`](shootout_model::RunResult)) and nothing else — no store, no terminal, no
//! format. The renderers (`shootout-report`) lay out what is computed here, one wording
//! per format; a decision such as "this cell is noisy" or "this contender was not
//! measured" is taken here only. Units: req/s (a gRPC workload's calls/s, replies/s or
//! messages/s, as [`Unit`] says), latencies in milliseconds (from the
//! model's µs histograms), server CPU in µs per completed request, memory in bytes.

pub mod analysis;
pub mod boundary;
pub mod capacities;
pub mod capacity;
pub mod cells;
pub mod certify;
pub mod combine;
pub mod compare;
pub mod decided;
pub mod evidence;
pub mod headline;
pub mod intervals;
pub mod journeys;
pub mod load_warnings;
pub mod mann_whitney;
pub mod merge;
pub mod quiet;
pub mod ranking;
pub mod special;
pub mod stats;
pub mod student;
pub mod threshold;
pub mod unit;
pub mod warnings;

pub use analysis::Analysis;
pub use cells::{median, Cell, LevelBlock, Ratio, WorkloadBlock, NOISY};
pub use unit::Unit;
pub use warnings::{CellAt, RunWarning};
