//! The schema and its migrations. The file's `PRAGMA user_version` is the number of
//! migration steps applied; opening a store applies the missing ones in order, each in its
//! own transaction (so a failed step leaves the file at the previous version), and refuses a
//! file from a newer shootout. `docs/store.md` describes the tables for people.
//!
//! To change the schema, append a step to [`MIGRATIONS`]; never edit a released one.

use crate::error::StoreError;
use rusqlite::{Connection, TransactionBehavior};

/// The migration steps: step `i` takes the file from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    V1,
    V2,
    V3_OWNERS,
    V4_TARGETS,
    V5_HTTP2,
    V6_WIRE,
    V7_SETUP,
    V8_SCHEDULE,
    V9_OTHER_LOAD,
    V10_SEARCH,
    V11_WEBSOCKET,
    V12_SECOND_HISTOGRAMS,
    V13_FAULTS,
    V14_IDLE_CONTENDERS,
    V15_LISTEN_QUEUE,
    V16_OVERTAKEN,
    V17_ARRIVALS,
    V18_JOURNEYS,
    V19_GRPC,
    V20_KIND_FAILURES,
    V21_UNTIL,
    V22_JOURNEY_BUSY,
    V23_ACCEPT_QUEUE,
    V24_SEARCH_ENDED,
    V25_GRPC_STREAMS,
    V26_ACCEPT_BACKLOG,
    V27_IN_FLIGHT_AT_END,
    V28_INTERRUPTS,
];

/// The schema version this build writes: the number of migration steps.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Version 2: per step, the requests sent again after an idle connection closed under them
/// (`retried`) and the connections the server dropped before any answer (`dropped`).
const V2: &str = "
ALTER TABLE steps ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
";

/// Version 1: runs, contenders, steps and the steps' children.
///
/// Times are integer nanoseconds (`*_ns`: since the Unix epoch for instants, else a span);
/// histograms are HdrHistogram V2 + deflate BLOBs of microseconds; REAL columns are NULL
/// where the value was NaN (SQLite stores NaN as NULL).
const V1: &str = "
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    plan_text     TEXT    NOT NULL,
    plan_resolved TEXT    NOT NULL,
    machine       TEXT    NOT NULL,
    started_ns    INTEGER NOT NULL,
    ended_ns      INTEGER,
    status        TEXT    NOT NULL
);
CREATE INDEX runs_started ON runs (started_ns);

CREATE TABLE contenders (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    command    TEXT    NOT NULL,
    baseline   INTEGER NOT NULL CHECK (baseline IN (0, 1)),
    status     TEXT    NOT NULL,
    detail     TEXT    NOT NULL,
    version    TEXT,
    stdout_log TEXT,
    stderr_log TEXT,
    UNIQUE (id, run_id)
);
CREATE INDEX contenders_run ON contenders (run_id, id);

CREATE TABLE steps (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    contender_id        INTEGER NOT NULL,
    workload            TEXT    NOT NULL,
    level_kind          TEXT    NOT NULL CHECK (level_kind IN ('concurrency', 'rate')),
    level_connections   INTEGER NOT NULL,
    level_rps           REAL,
    repetition          INTEGER NOT NULL CHECK (repetition >= 1),
    started_ns          INTEGER NOT NULL,
    ended_ns            INTEGER NOT NULL,
    status              TEXT    NOT NULL,
    measured_started_ns INTEGER NOT NULL,
    duration_ns         INTEGER NOT NULL,
    rps                 REAL,
    completed           INTEGER NOT NULL,
    ok                  INTEGER NOT NULL,
    aborted             INTEGER NOT NULL,
    fail_connect        INTEGER NOT NULL,
    fail_timeout        INTEGER NOT NULL,
    fail_reset          INTEGER NOT NULL,
    fail_malformed      INTEGER NOT NULL,
    fail_status         INTEGER NOT NULL,
    fail_body           INTEGER NOT NULL,
    length_mismatch     INTEGER NOT NULL,
    connections_opened  INTEGER NOT NULL,
    connections_failed  INTEGER NOT NULL,
    reconnects          INTEGER NOT NULL,
    bytes_received      INTEGER NOT NULL,
    body_bytes          INTEGER NOT NULL,
    bytes_sent          INTEGER NOT NULL,
    hist_latency        BLOB    NOT NULL,
    hist_latency_raw    BLOB    NOT NULL,
    hist_connect        BLOB    NOT NULL,
    hist_waiting        BLOB    NOT NULL,
    hist_processing     BLOB    NOT NULL,
    samples             BLOB    NOT NULL,
    gen_threads         INTEGER NOT NULL,
    gen_cpu_user_ns     INTEGER NOT NULL,
    gen_cpu_sys_ns      INTEGER NOT NULL,
    gen_busiest_thread  REAL,
    sched_target_rps    REAL,
    sched_achieved_rps  REAL,
    sched_due           INTEGER,
    sched_sent          INTEGER,
    sched_late          INTEGER,
    sched_max_lag_ns    INTEGER,
    first_status        INTEGER,
    first_server        TEXT,
    first_body_len      INTEGER,
    interrupted         INTEGER NOT NULL CHECK (interrupted IN (0, 1)),
    warnings            TEXT    NOT NULL,
    FOREIGN KEY (contender_id, run_id) REFERENCES contenders (id, run_id) ON DELETE CASCADE
);
CREATE INDEX steps_run ON steps (run_id, id);
CREATE INDEX steps_contender ON steps (contender_id);

CREATE TABLE step_status_codes (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    code    INTEGER NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (step_id, code)
);

CREATE TABLE step_seconds (
    step_id   INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    second    INTEGER NOT NULL,
    completed INTEGER NOT NULL,
    failed    INTEGER NOT NULL,
    mean_us   REAL,
    p50_us    INTEGER NOT NULL,
    p99_us    INTEGER NOT NULL,
    max_us    INTEGER NOT NULL,
    PRIMARY KEY (step_id, seq)
);

CREATE TABLE step_resources (
    step_id      INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    at_ns        INTEGER NOT NULL,
    cpu_user_ns  INTEGER NOT NULL,
    cpu_sys_ns   INTEGER NOT NULL,
    rss_bytes    INTEGER NOT NULL,
    processes    INTEGER NOT NULL,
    threads      INTEGER NOT NULL,
    ctx_switches INTEGER NOT NULL,
    fds          INTEGER NOT NULL,
    PRIMARY KEY (step_id, seq)
);
";

/// Version 3: who owns a run, and the marker of each contender's processes, so that a
/// later shootout can tell a run whose shootout died (`abandoned`) from one in progress,
/// and find what it left running. All NULL in runs stored before.
const V3_OWNERS: &str = "
ALTER TABLE runs ADD COLUMN owner_host TEXT;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_pid_ns TEXT;
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER;
ALTER TABLE contenders ADD COLUMN process_tag TEXT;
";

/// Version 4: per step of a workload with a request list, each entry's counts and latency.
const V4_TARGETS: &str = "
CREATE TABLE step_targets (
    step_id      INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    label        TEXT NOT NULL,
    completed    INTEGER NOT NULL,
    ok           INTEGER NOT NULL,
    hist_latency BLOB NOT NULL,
    PRIMARY KEY (step_id, seq)
);
";

/// Version 5: HTTP/2. Per step, the three failure classes HTTP/2 adds, the GOAWAY frames
/// received, the streams per connection asked for and the lowest concurrency a server
/// allowed below it (NULL when none was lower), and the RST_STREAM frames received per
/// error code. Zero (and 1 stream, NULL allowed) in steps stored before.
const V5_HTTP2: &str = "
ALTER TABLE steps ADD COLUMN fail_stream_reset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_refused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_connection_error INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN goaways INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN streams_asked INTEGER NOT NULL DEFAULT 1;
ALTER TABLE steps ADD COLUMN streams_allowed INTEGER;
CREATE TABLE step_stream_resets (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    code    INTEGER NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (step_id, code)
);
";

/// Version 6: how the client talked to the contender in each step: `protocol`
/// (`http/1.1` or `h2`) and `pipeline` (requests in flight per HTTP/1.1 connection), with
/// `streams_asked` now written for every step. NULL in steps stored before, which did
/// not record them.
const V6_WIRE: &str = "
ALTER TABLE steps ADD COLUMN protocol TEXT;
ALTER TABLE steps ADD COLUMN pipeline INTEGER;
";

/// Version 7: per step, the setup time of every connection opened (a histogram, NULL in
/// steps stored before), and of the requests sent late, those that waited because every
/// connection had its requests outstanding (0 before).
const V7_SETUP: &str = "
ALTER TABLE steps ADD COLUMN hist_setup BLOB;
ALTER TABLE steps ADD COLUMN sched_late_no_connection INTEGER NOT NULL DEFAULT 0;
";

/// Version 8: per rate step, how late the sends went out (the lag's median, 99th and 99.9th
/// percentile, µs), the connections the schedule used and the cap on them, whether the cap
/// was reached, and the time the generator spent waiting for due times. 0 in steps stored
/// before, which did not record them.
const V8_SCHEDULE: &str = "
ALTER TABLE steps ADD COLUMN sched_lag_p50_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sched_lag_p99_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sched_lag_p999_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sched_connections INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sched_max_connections INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sched_capped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sched_spun_ns INTEGER NOT NULL DEFAULT 0;
";

/// Version 9: per step, what else ran on the load's and the contenders' CPUs: the CPUs
/// watched, other processes' CPU time on them (in CPUs), the share stolen by the
/// hypervisor, and the load average at the step's end. NULL in steps stored before, and
/// when `/proc/stat` could not be read.
const V9_OTHER_LOAD: &str = "
ALTER TABLE steps ADD COLUMN other_cpus INTEGER;
ALTER TABLE steps ADD COLUMN other_busy REAL;
ALTER TABLE steps ADD COLUMN other_steal REAL;
ALTER TABLE steps ADD COLUMN other_load_avg REAL;
";

/// Version 10: per step of a capacity search, its verdict (`met`, `broke`, `not_kept`, or
/// `unjudged` for a step interrupted or whose contender died) and, for `broke`, the index
/// of the SLO that broke; both NULL for a step of a sweep of the plan's levels.
const V10_SEARCH: &str = "
ALTER TABLE steps ADD COLUMN search_verdict TEXT;
ALTER TABLE steps ADD COLUMN search_slo INTEGER;
";

/// Version 13: per step, requests failed by a fault of shootout's own (a caught panic,
/// `generator_fault`), WebSocket pings left without a pong, and connections still being
/// set up when the step ended. Zero in steps stored before.
const V13_FAULTS: &str = "
ALTER TABLE steps ADD COLUMN fail_generator_fault INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN pings_unanswered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN connections_opening INTEGER NOT NULL DEFAULT 0;
";

/// Version 12: each second's latency histogram (µs, HdrHistogram V2, as the engine
/// serializes it), so that a capacity search replayed from the store decides its boundary
/// rates with the per-second evidence the run had (`shootout_analysis::boundary`). NULL in
/// seconds stored before; their searches are replayed from the steps' verdicts alone.
const V12_SECOND_HISTOGRAMS: &str = "
ALTER TABLE step_seconds ADD COLUMN histogram BLOB;
";

/// Version 14: per step, the CPU time the run's other contenders (up, idle in the step)
/// used on the watched CPUs, in CPUs, counted apart from other processes' (`other_busy`,
/// which no longer holds it). NULL in steps stored before, whose `other_busy` holds both.
const V14_IDLE_CONTENDERS: &str = "
ALTER TABLE steps ADD COLUMN other_contenders REAL;
";

/// Version 15: per step, the kernel's count of connections a full listen queue turned away
/// during it (`/proc/net/netstat`, `TcpExt` `ListenOverflows` and `ListenDrops`, in the
/// network namespace of shootout and its contenders). NULL in steps stored before, and
/// when not measured (a contender given by URL, no `/proc/net/netstat`).
const V15_LISTEN_QUEUE: &str = "
ALTER TABLE steps ADD COLUMN listen_overflows INTEGER;
ALTER TABLE steps ADD COLUMN listen_drops INTEGER;
";

/// Version 16: per step of a rate, requests answered more than 10 ms after they were sent
/// and after requests sent later on other connections (HTTP/1.1; the schedule's
/// `overtaken`): a server serving one connection at a time per worker was on another. 0 in
/// steps stored before.
const V16_OVERTAKEN: &str = "
ALTER TABLE steps ADD COLUMN sched_overtaken INTEGER NOT NULL DEFAULT 0;
";

/// Version 17: per rate step, how the requests were spaced (`even` or `poisson`, and the
/// seed of Poisson gaps as its 64 bits) and, for Poisson arrivals, the Anderson–Darling
/// test of the gaps sent (gaps tested, A², p-value). NULL in steps stored before (read as
/// even, untested) and in closed-loop steps.
const V17_ARRIVALS: &str = "
ALTER TABLE steps ADD COLUMN sched_arrival TEXT;
ALTER TABLE steps ADD COLUMN sched_arrival_seed INTEGER;
ALTER TABLE steps ADD COLUMN sched_fit_n INTEGER;
ALTER TABLE steps ADD COLUMN sched_fit_a2 REAL;
ALTER TABLE steps ADD COLUMN sched_fit_p REAL;
";

/// Version 18: per step of a journey workload, each journey's counts (ended, ok) and
/// duration histogram; its steps' rows are in `step_targets`. No rows in steps stored
/// before, or without journeys.
const V18_JOURNEYS: &str = "
CREATE TABLE step_journeys (
    step_id      INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    label        TEXT NOT NULL,
    completed    INTEGER NOT NULL,
    ok           INTEGER NOT NULL,
    hist_latency BLOB NOT NULL,
    PRIMARY KEY (step_id, seq)
);
";

/// Version 19: gRPC's failure classes per step: one per status code (1 to 16, by name),
/// and a reply badly framed, one that does not decode as the method's output type, and
/// an outcome that cannot be read (trailers missing). 0 in steps stored before.
const V19_GRPC: &str = "
ALTER TABLE steps ADD COLUMN fail_grpc_cancelled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_unknown INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_invalid_argument INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_deadline_exceeded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_not_found INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_already_exists INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_permission_denied INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_resource_exhausted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_failed_precondition INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_aborted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_out_of_range INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_unimplemented INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_internal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_unavailable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_data_loss INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_unauthenticated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_framing INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_decode INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_trailers INTEGER NOT NULL DEFAULT 0;
";

/// Version 20: per request-list entry or journey step (`step_targets`) and per journey
/// (`step_journeys`), the failed requests per class (`fail_*`, as `steps` names them, gRPC's
/// included; a journey under its first failed step's class) and the journey steps that
/// failed unsent (`unsent`). Zero in rows stored before, which counted failures in total
/// only.
const V20_KIND_FAILURES: &str = "
ALTER TABLE step_targets ADD COLUMN fail_connect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_timeout INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_reset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_malformed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_status INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_body INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_stream_reset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_refused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_connection_error INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_handshake INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_closed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_protocol INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_generator_fault INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_cancelled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_unknown INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_invalid_argument INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_deadline_exceeded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_not_found INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_already_exists INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_permission_denied INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_resource_exhausted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_failed_precondition INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_aborted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_out_of_range INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_unimplemented INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_internal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_unavailable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_data_loss INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_unauthenticated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_framing INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_decode INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_trailers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN unsent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_connect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_timeout INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_reset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_malformed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_status INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_body INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_stream_reset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_refused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_connection_error INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_handshake INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_closed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_protocol INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_generator_fault INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_cancelled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_unknown INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_invalid_argument INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_deadline_exceeded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_not_found INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_already_exists INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_permission_denied INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_resource_exhausted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_failed_precondition INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_aborted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_out_of_range INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_unimplemented INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_internal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_unavailable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_data_loss INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_unauthenticated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_framing INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_decode INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_trailers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN unsent INTEGER NOT NULL DEFAULT 0;
";

/// Version 21: a step of a plan with `until`: when its conditions all held and it ended
/// (`until_converged_ns`, from its start; NULL when they did not hold before its time ran
/// out, or it had none) and each condition's last reading (`step_conditions`: as written,
/// the figure and its 95% interval — ms for a percentile, answers a second for rps —, the
/// interval open above, its largest distance from the figure relative to it, and whether
/// it held). No rows for a step without conditions, or stored before. With `warmup =
/// "auto"`, how long the warm-up before the step's contender × workload lasted
/// (`warmup_auto_ns`) and whether it ended level (`warmup_level`); NULL otherwise.
const V21_UNTIL: &str = "
ALTER TABLE steps ADD COLUMN until_converged_ns INTEGER;
ALTER TABLE steps ADD COLUMN warmup_auto_ns INTEGER;
ALTER TABLE steps ADD COLUMN warmup_level INTEGER;
CREATE TABLE step_conditions (
    step_id    INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    condition  TEXT NOT NULL,
    value      REAL,
    lo         REAL,
    hi         REAL,
    open_above INTEGER NOT NULL DEFAULT 0,
    half_width REAL,
    held       INTEGER NOT NULL,
    PRIMARY KEY (step_id, seq)
);
";

/// Version 22: per journey (`step_journeys`), its busy time: the histogram of each ended
/// journey's duration less the think times it waited between its steps (µs, HdrHistogram
/// V2 + deflate, as `hist_latency`). NULL in journeys stored before it was measured;
/// `step_targets` has no such column (a request kind or journey step has no think time).
const V22_JOURNEY_BUSY: &str = "
ALTER TABLE step_journeys ADD COLUMN hist_busy BLOB;
";

/// Version 23: per step, the server's accept queue sampled through it (the listening
/// sockets on the target's port, by the kernel's count): samples taken, samples that found
/// a connection waiting, the connections waiting summed over the samples, and the most at
/// once. NULL where it was not sampled (steps stored before, a contender given by URL).
const V23_ACCEPT_QUEUE: &str = "
ALTER TABLE steps ADD COLUMN accept_samples INTEGER;
ALTER TABLE steps ADD COLUMN accept_waited INTEGER;
ALTER TABLE steps ADD COLUMN accept_total INTEGER;
ALTER TABLE steps ADD COLUMN accept_most INTEGER;
";

/// Version 24: per step of a capacity search, how it ended (`search_ended`):
/// `decided_met` or `decided_broke` (its SLOs decided before its deadline: every one
/// clearly met, or one clearly broken), `passed` (a rung of the ramp that plainly passed,
/// measured again in full before it may bound the capacity) or `deadline` (some SLO still
/// open at its deadline). NULL for a step not judged, a sweep's step, and every step
/// stored before (those ran the fixed rule's length).
const V24_SEARCH_ENDED: &str = "
ALTER TABLE steps ADD COLUMN search_ended TEXT;
";

/// Version 25: gRPC bidirectional streaming's failure classes, per step, per request-list
/// entry or journey step and per journey: a reply with no message outstanding
/// (`fail_grpc_unmatched`) and a call ended with messages unanswered
/// (`fail_grpc_unanswered`), zero in rows stored before; and a streaming step's calls
/// (`stream_*`, `hist_stream_*`: its shape, which names the unit its counts count, its
/// counts and the histograms of its first replies and gaps), NULL for other steps and
/// before.
const V25_GRPC_STREAMS: &str = "
ALTER TABLE steps ADD COLUMN stream_shape TEXT;
ALTER TABLE steps ADD COLUMN stream_calls_ok INTEGER;
ALTER TABLE steps ADD COLUMN stream_cancelled INTEGER;
ALTER TABLE steps ADD COLUMN stream_replies INTEGER;
ALTER TABLE steps ADD COLUMN stream_messages_per_call INTEGER;
ALTER TABLE steps ADD COLUMN stream_sent INTEGER;
ALTER TABLE steps ADD COLUMN stream_unmatched INTEGER;
ALTER TABLE steps ADD COLUMN stream_unanswered INTEGER;
ALTER TABLE steps ADD COLUMN hist_stream_first_reply BLOB;
ALTER TABLE steps ADD COLUMN hist_stream_gaps BLOB;
ALTER TABLE steps ADD COLUMN fail_grpc_unmatched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_grpc_unanswered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_unmatched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_targets ADD COLUMN fail_grpc_unanswered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_unmatched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_journeys ADD COLUMN fail_grpc_unanswered INTEGER NOT NULL DEFAULT 0;
";

/// Version 26: per step, the limit of the contender's accept queue (`accept_backlog`: the
/// backlog of its listening sockets on the step's port, summed as the queue is; the
/// largest read) and the samples that found one of them with its queue at its backlog
/// (`accept_full`): whether the listen-queue overflows the kernel counted for the whole
/// machine were the contender's. NULL where the queue was not sampled and in steps stored
/// before (read: backlog unknown, never seen full).
const V26_ACCEPT_BACKLOG: &str = "
ALTER TABLE steps ADD COLUMN accept_backlog INTEGER;
ALTER TABLE steps ADD COLUMN accept_full INTEGER;
";

/// Version 27: per step, the age of each request still in flight when it ended
/// (`hist_in_flight_at_end`, a histogram as the others: from its due time in rate mode, or
/// its send, to the step's end; the requests counted in `aborted` and those due and not
/// sent). NULL in steps stored before: not known, never none.
const V27_IN_FLIGHT_AT_END: &str = "
ALTER TABLE steps ADD COLUMN hist_in_flight_at_end BLOB;
";

/// Version 28: per step, the CPU time the kernel spent serving interrupts (`/proc/stat`'s
/// irq and softirq) on the watched CPUs, in CPUs, counted apart from other processes'
/// (`other_busy`, which no longer holds it). NULL in steps stored before, whose
/// `other_busy` holds both.
const V28_INTERRUPTS: &str = "
ALTER TABLE steps ADD COLUMN other_interrupts REAL;
";

/// Version 11: WebSocket's failure classes per step (a refused or bad handshake, a close
/// frame with messages outstanding, a breach of the framing) and the close frames
/// received per close code. Zero (no rows) in steps stored before.
const V11_WEBSOCKET: &str = "
ALTER TABLE steps ADD COLUMN fail_handshake INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_closed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN fail_protocol INTEGER NOT NULL DEFAULT 0;
CREATE TABLE step_close_codes (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    code    INTEGER NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (step_id, code)
);
";

/// Reads the file's schema version (`PRAGMA user_version`).
pub(crate) fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Refuses a schema this build does not know.
pub(crate) fn check_version(found: i64, path: &str) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_string(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    if found < 0 {
        return Err(StoreError::Corrupt {
            path: path.to_string(),
            what: "schema version".into(),
            detail: format!("PRAGMA user_version is {found}"),
        });
    }
    Ok(())
}

/// Applies the missing migration steps, one transaction each. The version is read again
/// under the write lock, so two shootouts opening the same old file migrate it once.
pub(crate) fn migrate(conn: &mut Connection, path: &str) -> Result<(), StoreError> {
    let failed = |version: i64| {
        move |error| StoreError::Migrate {
            path: path.to_string(),
            version,
            error,
        }
    };
    loop {
        let found = version(conn).map_err(failed(0))?;
        check_version(found, path)?;
        if found == SCHEMA_VERSION {
            return Ok(());
        }
        let next = found + 1;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed(next))?;
        let current = version(&tx).map_err(failed(next))?;
        if current == found {
            tx.execute_batch(MIGRATIONS[found as usize])
                .map_err(failed(next))?;
            tx.pragma_update(None, "user_version", next)
                .map_err(failed(next))?;
        }
        tx.commit().map_err(failed(next))?;
    }
}
