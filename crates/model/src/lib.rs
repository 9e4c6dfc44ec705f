//! shootout's shared vocabulary: what to load ([`LoadSpec`]), what a good answer is
//! ([`Expectation`]), and what a run measured ([`RunResult`]).
//!
//! This crate does no I/O. The engine consumes a `LoadSpec` and produces a `RunResult`;
//! reports and the store read `RunResult`s. Units live in the types: `Duration` in memory,
//! latency histograms in microseconds (named in every doc comment).

pub mod arrival_fit;
pub mod barrier;
pub mod choice;
pub mod find_max;
pub mod hdr;
pub mod histograms;
pub mod journey;
pub mod messages;
pub mod plan;
pub mod requests;
pub mod resolved;
pub mod result;
pub mod saved;
pub mod shard;
pub mod shootout;
pub mod spec;
pub mod status;
pub mod stored;
pub mod target;
pub mod threshold;
pub mod units;
pub mod until;

pub use choice::Choice;
pub use histograms::{latency_histogram, Histograms, Measure};
pub use result::{
    h2_error_name, h3_error_name, per_second, AcceptWaiting, ArrivalCheck, Counts, Ended,
    FailureCounts, FailureKind, FirstResponse, Fit, GeneratorStats, LatencySummary, ListenBlame,
    ListenQueue, QueueReading, RunResult, Sample, ScheduleStats, SecondStats, StreamStats,
    TargetStats, WarmedUp, Warning, MAX_CLOSE_CODES, MAX_RESET_CODES, OTHER_CLOSE_CODES,
    OTHER_RESET_CODES,
};
pub use saved::{Outcome, SavedError, SavedRun};
pub use shard::{Shard, ShardError};
pub use shootout::{
    ContenderStatus, LoadLevel, MachineFacts, OtherLoad, ProcessOwner, ResourceSample, RunStatus,
    StepStatus, UnknownStatus,
};
pub use spec::{
    auto_busy_poll, parse_rate_stages, parse_stages, stages_of_rates, Arrival, Expectation,
    GrpcReply, GrpcStream, Hold, JourneyConnection, LoadSpec, Pace, Protocol, RateStage, Record,
    RequestSpec, Scheme, SpecBuilder, SpecError, Stage, Target, TlsOptions, Wire, GRPC_MAX_MESSAGE,
    GRPC_STREAM_MAX_BYTES, GRPC_STREAM_MAX_MESSAGES, MAX_BUSY_POLL, MAX_MESSAGE, MAX_STREAMS,
};
pub use status::StatusSet;
pub use units::{
    parse_cpu_list, parse_duration, parse_wall_clock, DurationError, WallClockError, MAX_DURATION,
};
