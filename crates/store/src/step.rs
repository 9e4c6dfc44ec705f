//! Steps: one contender × workload × load level × repetition, with everything its load run
//! measured. [`Store::record_step`] writes one step and its children (status codes,
//! per-second series, resource samples) in one transaction; [`Store::steps`] reads a run's
//! steps back and rebuilds each [`RunResult`].

use crate::codec;
use crate::{ContenderId, RunId, StepId, Store, StoreError, StoredStep};
use hdrhistogram::Histogram;
use rusqlite::types::{FromSql, ToSql};
use rusqlite::{params, params_from_iter, Row, Transaction, TransactionBehavior};
use shootout_model::find_max::{SearchStep, StepEnd, Verdict};
use shootout_model::stored::{Packed, Part, SampleSource, SampleTenths, SecondsSource};
use shootout_model::until::{Condition, Reading, UntilOutcome};
use shootout_model::{
    AcceptWaiting, Arrival, ArrivalCheck, Counts, FailureCounts, FailureKind, FirstResponse, Fit,
    GeneratorStats, Histograms, ListenQueue, LoadLevel, Measure, OtherLoad, Protocol,
    ResourceSample, RunResult, Sample, ScheduleStats, SecondStats, StepStatus, StreamStats,
    TargetStats, Warning, Wire,
};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::SystemTime;

// The steps table has one column per failure class: fail_connect … fail_generator_fault,
// then gRPC's ([`GRPC_CLASSES`]), each `fail_` and the class's name ([`failure_columns`]).
const _: () = assert!(
    FailureKind::ALL.len() == 13 + GRPC_CLASSES,
    "a new failure class needs a column in the store's steps table: add a migration"
);

/// gRPC's failure classes: the last of [`FailureKind::ALL`], each in the column
/// `fail_<name>` (schema version 19; bidirectional streaming's two, version 25).
const GRPC_CLASSES: usize = 21;

/// Each failure class with its column (`fail_connect`, …), in [`FailureKind::ALL`]'s order:
/// the names of `steps` and of the tables of counted kinds.
fn failure_columns() -> &'static [(FailureKind, String)] {
    static COLUMNS: OnceLock<Vec<(FailureKind, String)>> = OnceLock::new();
    COLUMNS.get_or_init(|| {
        FailureKind::ALL
            .iter()
            .map(|&k| (k, format!("fail_{}", k.name())))
            .collect()
    })
}

/// The failure columns, in order, as a list for SQL: `fail_connect, fail_timeout, …`.
fn failure_column_list() -> String {
    let names: Vec<&str> = failure_columns().iter().map(|(_, c)| c.as_str()).collect();
    names.join(", ")
}

/// A measured step, as the orchestration hands it to the store.
#[derive(Debug, Clone, Copy)]
pub struct StepRecord<'a> {
    /// The run it belongs to.
    pub run: RunId,
    /// The contender measured (of the same run).
    pub contender: ContenderId,
    /// The workload's name in the plan.
    pub workload: &'a str,
    /// The load level.
    pub level: LoadLevel,
    /// Which repetition of this contender × workload × level (1-based).
    pub repetition: u32,
    /// Wall-clock start of the step (warm-up included, if any).
    pub started: SystemTime,
    /// Wall-clock end of the step.
    pub ended: SystemTime,
    /// How the step ended.
    pub status: StepStatus,
    /// What the load run measured.
    pub result: &'a RunResult,
    /// The contender's process tree sampled during the step, oldest first.
    pub resources: &'a [ResourceSample],
    /// How the client talked to the contender.
    pub wire: Wire,
    /// What else ran on the step's CPUs, when it could be read.
    pub other_load: Option<OtherLoad>,
    /// The step is one of a capacity search's, with its verdict; `None` for a step of a
    /// sweep of the plan's levels.
    pub search: Option<&'a SearchStep>,
}

/// The word stored for a search step that was not judged.
const UNJUDGED: &str = "unjudged";

/// The columns `search_verdict` and `search_slo` of a step.
fn search_columns(search: Option<&SearchStep>) -> (Option<&'static str>, Option<usize>) {
    match search.map(|s| &s.verdict) {
        None => (None, None),
        Some(None) => (Some(UNJUDGED), None),
        Some(Some(v)) => (
            Some(v.word()),
            match v {
                Verdict::Broke(i) => Some(*i),
                _ => None,
            },
        ),
    }
}

/// The steps table's columns for a load level: kind, connections, rate.
fn level_columns(level: LoadLevel) -> (&'static str, usize, Option<f64>) {
    match level {
        LoadLevel::Concurrency { connections } => ("concurrency", connections, None),
        LoadLevel::Rate { rps, connections } => ("rate", connections, Some(rps)),
    }
}

/// The warnings as a JSON array: each one serde-serialized (`kind` and its fields) plus
/// `message`, its text as printed.
fn warnings_json(warnings: &[Warning]) -> String {
    let all: Vec<serde_json::Value> = warnings
        .iter()
        .map(|w| {
            let mut v = serde_json::to_value(w).expect("a Warning serializes");
            if let serde_json::Value::Object(m) = &mut v {
                m.insert("message".into(), w.to_string().into());
            }
            v
        })
        .collect();
    serde_json::Value::Array(all).to_string()
}

/// A step's row of `steps` as [`Store::record_step`] writes it: each column's name and its
/// value, one [`StepRow::put`] per column.
#[derive(Default)]
struct StepRow<'a> {
    columns: Vec<(&'a str, Box<dyn ToSql + 'a>)>,
}

impl<'a> StepRow<'a> {
    fn put(&mut self, column: &'a str, value: impl ToSql + 'a) {
        self.columns.push((column, Box::new(value)));
    }

    /// Inserts the row into `steps`; the new step's id.
    fn insert(&self, tx: &Transaction) -> rusqlite::Result<i64> {
        let names: Vec<&str> = self.columns.iter().map(|(c, _)| *c).collect();
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO steps ({}) VALUES ({})",
            names.join(", "),
            marks.join(", ")
        );
        tx.prepare_cached(&sql)?
            .execute(params_from_iter(self.columns.iter().map(|(_, v)| v)))?;
        Ok(tx.last_insert_rowid())
    }
}

/// A step's histograms packed for the store (each with its column) and its request-list
/// entries' and journeys' with them: encoded before the step's transaction, so that the
/// write lock is held for the inserts only.
struct Encoded<'a> {
    histograms: Vec<(String, Vec<u8>)>,
    /// The ages of the requests in flight at the end (`None`: not known).
    in_flight: Option<Vec<u8>>,
    targets: Vec<EncodedKind<'a>>,
    journeys: Vec<EncodedKind<'a>>,
}

/// A counted kind (a request-list entry, a journey step or a journey) with its latency
/// histogram packed, and a journey's busy time packed (`None` for the others, and for a
/// journey that did not measure it).
struct EncodedKind<'a> {
    stats: &'a TargetStats,
    latency: Vec<u8>,
    busy: Option<Vec<u8>>,
}

/// The tables of counted kinds: a step's request-list entries or journey steps
/// (`step_targets`), and its journeys (`step_journeys`, which alone has `hist_busy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CountedTable {
    Targets,
    Journeys,
}

impl CountedTable {
    fn name(self) -> &'static str {
        match self {
            CountedTable::Targets => "step_targets",
            CountedTable::Journeys => "step_journeys",
        }
    }

    /// What a read of the table selects as the busy-time column: NULL where it has none.
    fn busy_column(self) -> &'static str {
        match self {
            CountedTable::Targets => "NULL",
            CountedTable::Journeys => "hist_busy",
        }
    }
}

/// The row of `steps` for `step`, its histograms as `encoded`.
fn step_row<'a>(step: &'a StepRecord, encoded: &'a Encoded) -> StepRow<'a> {
    let mut row = StepRow::default();
    put_step(&mut row, step);
    put_other_load(&mut row, step.other_load.as_ref());
    put_counts(&mut row, &step.result.counts);
    put_result(&mut row, step.result);
    put_schedule(&mut row, step.result.schedule.as_ref());
    put_stream(&mut row, step.result.stream.as_deref());
    for (column, bytes) in &encoded.histograms {
        row.put(column, bytes);
    }
    row.put("hist_in_flight_at_end", &encoded.in_flight);
    row
}

/// The columns of what was measured, when, over which wire, and how the step ended.
fn put_step<'a>(row: &mut StepRow<'a>, step: &'a StepRecord) {
    let (level_kind, level_connections, level_rps) = level_columns(step.level);
    let (search_verdict, search_slo) = search_columns(step.search);
    row.put("run_id", step.run.0);
    row.put("contender_id", step.contender.0);
    row.put("workload", step.workload);
    row.put("level_kind", level_kind);
    row.put("level_connections", level_connections);
    row.put("level_rps", level_rps);
    row.put("repetition", step.repetition);
    row.put("started_ns", codec::ns_since_epoch(step.started));
    row.put("ended_ns", codec::ns_since_epoch(step.ended));
    row.put("status", step.status.as_str());
    row.put("streams_asked", step.wire.streams);
    row.put("protocol", step.wire.protocol.as_str());
    row.put("pipeline", step.wire.pipeline);
    row.put("search_verdict", search_verdict);
    row.put("search_slo", search_slo);
    row.put(
        "search_ended",
        step.search.and_then(|s| s.ended).map(StepEnd::word),
    );
}

/// The columns of what else ran on the step's CPUs (NULL when it could not be read).
fn put_other_load(row: &mut StepRow, o: Option<&OtherLoad>) {
    row.put("other_cpus", o.map(|o| o.cpus));
    row.put("other_busy", o.and_then(|o| o.others));
    row.put("other_steal", o.map(|o| o.steal));
    row.put("other_load_avg", o.map(|o| o.load_avg));
    row.put("other_contenders", o.map(|o| o.contenders));
    row.put("other_interrupts", o.map(|o| o.interrupts));
}

/// The columns of the step's counts: one per failure class, then the connections' and
/// the bytes' (the status, reset and close codes are child rows).
fn put_counts(row: &mut StepRow, c: &Counts) {
    row.put("completed", c.completed);
    row.put("ok", c.ok);
    row.put("aborted", c.aborted);
    for (kind, column) in failure_columns() {
        row.put(column, c.failures[*kind]);
    }
    row.put("pings_unanswered", c.pings_unanswered);
    row.put("connections_opening", c.connections_opening);
    row.put("goaways", c.goaways);
    row.put("length_mismatch", c.length_mismatch);
    row.put("connections_opened", c.connections_opened);
    row.put("connections_failed", c.connections_failed);
    row.put("reconnects", c.reconnects);
    row.put("retried", c.retried);
    row.put("dropped", c.dropped);
    row.put("bytes_received", c.bytes_received);
    row.put("body_bytes", c.body_bytes);
    row.put("bytes_sent", c.bytes_sent);
}

/// The columns of the load run's result besides its counts, schedule and histograms.
fn put_result<'a>(row: &mut StepRow<'a>, r: &'a RunResult) {
    // The HTTP/2 concurrency limit is kept as its warning says it, to be said again.
    let limited = r.warnings.iter().find_map(|w| match w {
        Warning::StreamsLimited { asked, allowed } => Some((*asked, *allowed)),
        _ => None,
    });
    let first = r.first_response.as_ref();
    row.put("measured_started_ns", codec::ns_since_epoch(r.started));
    row.put("duration_ns", codec::ns(r.duration));
    row.put("rps", r.rps());
    row.put("streams_allowed", limited.map(|l| l.1));
    row.put("samples", codec::encode_samples(&r.samples));
    row.put("gen_threads", r.generator.threads);
    row.put("gen_cpu_user_ns", codec::ns(r.generator.cpu_user));
    row.put("gen_cpu_sys_ns", codec::ns(r.generator.cpu_sys));
    row.put("gen_busiest_thread", r.generator.busiest_thread);
    row.put("first_status", first.map(|f| f.status));
    row.put("first_server", first.and_then(|f| f.server.as_deref()));
    row.put("first_body_len", first.map(|f| f.body_len));
    row.put("interrupted", r.interrupted);
    row.put("warnings", warnings_json(&r.warnings));
    row.put("listen_overflows", r.listen.map(|l| l.overflows));
    row.put("listen_drops", r.listen.map(|l| l.drops));
    let accept = r.listen.and_then(|l| l.accept);
    row.put("accept_samples", accept.map(|a| a.samples));
    row.put("accept_waited", accept.map(|a| a.waited));
    row.put("accept_total", accept.map(|a| a.total));
    row.put("accept_most", accept.map(|a| a.most));
    row.put("accept_backlog", accept.and_then(|a| a.backlog));
    row.put("accept_full", accept.map(|a| a.full));
    let converged = r.until.as_ref().and_then(|u| u.converged);
    row.put("until_converged_ns", converged.map(codec::ns));
    row.put("warmup_auto_ns", r.warm_up.map(|w| codec::ns(w.took)));
    row.put("warmup_level", r.warm_up.map(|w| w.level));
}

/// The columns of a rate step's schedule (NULL, or 0 where the column is NOT NULL, for a
/// closed-loop step).
fn put_schedule(row: &mut StepRow, s: Option<&ScheduleStats>) {
    let fit = s.and_then(|s| s.arrival.fit);
    row.put("sched_target_rps", s.map(|s| s.target_rps));
    row.put("sched_achieved_rps", s.map(|s| s.achieved_rps));
    row.put("sched_due", s.map(|s| s.due));
    row.put("sched_sent", s.map(|s| s.sent));
    row.put("sched_late", s.map(|s| s.late));
    row.put(
        "sched_late_no_connection",
        s.map_or(0, |s| s.late_no_connection),
    );
    row.put("sched_max_lag_ns", s.map(|s| codec::ns(s.max_lag)));
    row.put("sched_lag_p50_us", s.map_or(0, |s| s.lag_p50_us));
    row.put("sched_lag_p99_us", s.map_or(0, |s| s.lag_p99_us));
    row.put("sched_lag_p999_us", s.map_or(0, |s| s.lag_p999_us));
    row.put("sched_connections", s.map_or(0, |s| s.connections));
    row.put("sched_max_connections", s.map_or(0, |s| s.max_connections));
    row.put("sched_capped", s.is_some_and(|s| s.capped));
    row.put("sched_spun_ns", s.map_or(0, |s| codec::ns(s.spun)));
    row.put("sched_overtaken", s.map_or(0, |s| s.overtaken));
    row.put("sched_arrival", s.map(|s| s.arrival.process.name()));
    let seed = s.and_then(|s| match s.arrival.process {
        // The seed's 64 bits as SQLite's signed integer.
        Arrival::Poisson { seed } => Some(seed as i64),
        Arrival::Even => None,
    });
    row.put("sched_arrival_seed", seed);
    row.put("sched_fit_n", fit.map(|f| f.n));
    row.put("sched_fit_a2", fit.map(|f| f.statistic));
    row.put("sched_fit_p", fit.map(|f| f.p));
}

/// The columns of a streaming gRPC step's calls: its shape (which names the unit its
/// counts count), counts and histograms; NULL for any other step.
fn put_stream(row: &mut StepRow, s: Option<&StreamStats>) {
    let hist = |h: &Histogram<u64>| codec::encode_histogram(h).ok();
    row.put("stream_shape", s.map(|s| s.shape));
    row.put("stream_calls_ok", s.map(|s| s.calls_ok));
    row.put("stream_cancelled", s.map(|s| s.cancelled));
    row.put("stream_replies", s.map(|s| s.replies));
    row.put("stream_messages_per_call", s.map(|s| s.messages_per_call));
    row.put("stream_sent", s.map(|s| s.sent));
    row.put("stream_unmatched", s.map(|s| s.unmatched));
    row.put("stream_unanswered", s.map(|s| s.unanswered));
    row.put(
        "hist_stream_first_reply",
        s.and_then(|s| hist(&s.first_reply)),
    );
    row.put("hist_stream_gaps", s.and_then(|s| hist(&s.gaps)));
}

/// The column of `steps` that holds the histogram of `measure`.
fn hist_column(measure: Measure) -> String {
    format!("hist_{}", measure.key())
}

/// Writes a step's child rows (status codes, per-second series, resource samples) in the
/// step's transaction.
fn insert_children(tx: &Transaction, id: i64, step: &StepRecord) -> rusqlite::Result<()> {
    let (c, r) = (&step.result.counts, step.result);
    let mut codes = tx.prepare_cached(
        "INSERT INTO step_status_codes (step_id, code, count) VALUES (?1, ?2, ?3)",
    )?;
    for (code, count) in &c.status {
        codes.execute(params![id, code, count])?;
    }
    let mut resets = tx.prepare_cached(
        "INSERT INTO step_stream_resets (step_id, code, count) VALUES (?1, ?2, ?3)",
    )?;
    for (code, count) in &c.stream_resets {
        resets.execute(params![id, code, count])?;
    }
    let mut closes = tx.prepare_cached(
        "INSERT INTO step_close_codes (step_id, code, count) VALUES (?1, ?2, ?3)",
    )?;
    for (code, count) in &c.close_codes {
        closes.execute(params![id, code, count])?;
    }
    let mut seconds = tx.prepare_cached(
        "INSERT INTO step_seconds
                   (step_id, seq, second, completed, failed, mean_us, p50_us, p99_us, max_us,
                    histogram)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for (seq, s) in r.series.iter().enumerate() {
        seconds.execute(params![
            id,
            seq,
            s.second,
            s.completed,
            s.failed,
            s.mean_us,
            s.p50_us,
            s.p99_us,
            s.max_us,
            (!s.histogram.is_empty()).then_some(&s.histogram)
        ])?;
    }
    let mut resources = tx.prepare_cached(
        "INSERT INTO step_resources
                   (step_id, seq, at_ns, cpu_user_ns, cpu_sys_ns, rss_bytes, processes,
                    threads, ctx_switches, fds)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for (seq, s) in step.resources.iter().enumerate() {
        resources.execute(params![
            id,
            seq,
            codec::ns(s.at),
            codec::ns(s.cpu_user),
            codec::ns(s.cpu_sys),
            s.rss_bytes,
            s.processes,
            s.threads,
            s.ctx_switches,
            s.fds
        ])?;
    }
    insert_conditions(tx, id, r.until.as_ref())
}

/// Writes a step's `until` conditions with their last readings (none without conditions).
fn insert_conditions(
    tx: &Transaction,
    id: i64,
    until: Option<&UntilOutcome>,
) -> rusqlite::Result<()> {
    let Some(u) = until else { return Ok(()) };
    let mut rows = tx.prepare_cached(
        "INSERT INTO step_conditions
                   (step_id, seq, condition, value, lo, hi, open_above, half_width, held)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for (seq, (c, r)) in u.conditions.iter().zip(&u.last).enumerate() {
        rows.execute(params![
            id,
            seq,
            c.to_string(),
            r.map(|r| r.value),
            r.map(|r| r.lo),
            r.map(|r| r.hi),
            r.is_some_and(|r| r.open_above),
            r.map(|r| r.width()).filter(|w| w.is_finite()),
            r.is_some_and(|r| r.holds(c))
        ])?;
    }
    Ok(())
}

impl Store {
    /// Records a step and its children in one transaction: after it returns, the step
    /// survives a Ctrl-C or a crash of shootout.
    pub fn record_step(&mut self, step: &StepRecord) -> Result<StepId, StoreError> {
        let encoded = self.encode(step.result)?;
        let row = step_row(step, &encoded);
        let path = &self.path;
        let failed = |source| StoreError::Sql {
            path: path.clone(),
            action: "record the step",
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        let id = row.insert(&tx).map_err(failed)?;
        insert_children(&tx, id, step).map_err(failed)?;
        insert_counted(&tx, CountedTable::Targets, id, &encoded.targets).map_err(failed)?;
        insert_counted(&tx, CountedTable::Journeys, id, &encoded.journeys).map_err(failed)?;
        tx.commit().map_err(failed)?;
        Ok(StepId(id))
    }

    /// Packs a result's histograms for the store; an error names the histogram.
    fn encode<'a>(&self, r: &'a RunResult) -> Result<Encoded<'a>, StoreError> {
        let encode = |histogram: &'static str, h| {
            codec::encode_histogram(h).map_err(|detail| StoreError::Encode {
                path: self.path.clone(),
                histogram,
                detail,
            })
        };
        let histograms = r
            .histograms
            .iter()
            .map(|(m, h)| Ok((hist_column(m), encode(m.words(), h)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let in_flight = r
            .in_flight_at_end
            .as_ref()
            .map(|h| encode("in-flight ages", h))
            .transpose()?;
        let targets = r
            .targets
            .iter()
            .map(|t| {
                Ok(EncodedKind {
                    stats: t,
                    latency: encode("request list entry latency", &t.latency)?,
                    busy: None,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let journeys = r
            .journeys
            .iter()
            .map(|t| {
                Ok(EncodedKind {
                    stats: t,
                    latency: encode("journey duration", &t.latency)?,
                    busy: t
                        .busy
                        .as_ref()
                        .map(|b| encode("journey busy time", b))
                        .transpose()?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Encoded {
            histograms,
            in_flight,
            targets,
            journeys,
        })
    }

    /// The steps of a run in the order they were recorded, each with its rebuilt
    /// [`RunResult`] and its resource samples.
    pub fn steps(&self, run: RunId) -> Result<Vec<StoredStep>, StoreError> {
        let read = "read the steps";
        let mut children = self.step_children(run)?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT * FROM steps WHERE run_id = ?1 ORDER BY id")
            .map_err(self.sql(read))?;
        let columns = column_index(&stmt);
        // Sized first: a step takes about 2 KB as read, and a vector grown by doubling
        // kept room for up to twice the steps (74 MB for 20,000, 45 MB of them used).
        let count: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM steps WHERE run_id = ?1",
                [run.0],
                |r| r.get(0),
            )
            .map_err(self.sql(read))?;
        let mut rows = stmt.query([run.0]).map_err(self.sql(read))?;
        let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        // The samples are read again from the file when asked (the reports ask for a few
        // steps' at most): a full reservoir takes about 65 KB even packed.
        let reader = self
            .file
            .clone()
            .map(|path| Arc::new(SampleReader::new(path)));
        while let Some(row) = rows.next().map_err(self.sql(read))? {
            let row = Columns {
                row,
                store: self,
                index: &columns,
            };
            out.push(self.stored_step(&row, &mut children, reader.as_ref())?);
        }
        Ok(out)
    }

    /// Rebuilds a step from its row in `steps` and its child rows (taken out of
    /// `children`), its parts checked and packed.
    fn stored_step(
        &self,
        row: &Columns,
        children: &mut StepChildren,
        reader: Option<&Arc<SampleReader>>,
    ) -> Result<StoredStep, StoreError> {
        let (mut step, streams, mut blobs) = self.step_of(row)?;
        let converged: Option<i64> = row.get("until_converged_ns")?;
        self.fill_children(&mut step, children, converged, &mut blobs)?;
        // The one warning that is a fact; the reader judges the others.
        step.result.note_streams_limited(streams.0, streams.1);
        let packed = self.packed(step.id.0, blobs, reader)?;
        step.pack(packed);
        Ok(step)
    }

    /// The child rows of a run's steps, each table read once for the whole run.
    fn step_children(&self, run: RunId) -> Result<StepChildren, StoreError> {
        Ok(StepChildren {
            status: self.step_codes(run, "step_status_codes")?,
            resets: self.step_codes(run, "step_stream_resets")?,
            closes: self.step_codes(run, "step_close_codes")?,
            conditions: self.step_conditions(run)?,
            seconds: self.step_seconds(run)?,
            targets: self.counted(run, CountedTable::Targets)?,
            journeys: self.counted(run, CountedTable::Journeys)?,
            resources: self.step_resources(run)?,
        })
    }

    /// Gives `step` its child rows, taken out of `children`: its codes, series, `until`
    /// outcome (with its `until_converged_ns`, `converged`), request list entries and
    /// journeys (their packed histograms into `blobs`) and resource samples.
    fn fill_children(
        &self,
        step: &mut StoredStep,
        children: &mut StepChildren,
        converged: Option<i64>,
        blobs: &mut Blobs,
    ) -> Result<(), StoreError> {
        let id = step.id.0;
        let result = &mut step.result;
        result.counts.status = take(&mut children.status, id).into_iter().collect();
        result.counts.stream_resets = take(&mut children.resets, id).into_iter().collect();
        result.counts.close_codes = take(&mut children.closes, id).into_iter().collect();
        result.series = take(&mut children.seconds, id);
        if let Some(rows) = children.conditions.remove(&id) {
            result.until = Some(self.until_of(id, converged, rows)?);
        }
        (result.targets, blobs.targets) = take(&mut children.targets, id)
            .into_iter()
            .map(|row| (row.stats, row.latency))
            .unzip();
        for row in take(&mut children.journeys, id) {
            result.journeys.push(row.stats);
            blobs.journeys.push(row.latency);
            blobs.busy.push(row.busy);
        }
        step.resources = take(&mut children.resources, id);
        Ok(())
    }

    /// Step `id`'s parts, checked and kept as stored: decoded, a step's six histograms
    /// take 1.1 MB, and a report of 20,000 steps would need 22 GB. Its samples and its
    /// seconds' histograms are read again from the file by `reader`, or kept (the samples
    /// packed) for a store in memory.
    fn packed(
        &self,
        id: i64,
        blobs: Blobs,
        reader: Option<&Arc<SampleReader>>,
    ) -> Result<Packed, StoreError> {
        let samples: SampleSource = match reader {
            Some(reader) => {
                let reader = reader.clone();
                Arc::new(move || reader.samples(id))
            }
            None => {
                let bytes: Arc<[u8]> = blobs.samples.into();
                Arc::new(move || codec::decode_samples(&bytes).unwrap_or_default())
            }
        };
        let seconds: Option<SecondsSource> = reader.map(|reader| {
            let reader = reader.clone();
            Arc::new(move || reader.seconds(id)) as SecondsSource
        });
        Packed::new(
            blobs.histograms,
            blobs.targets,
            blobs.journeys,
            blobs.busy,
            samples,
            seconds,
        )
        .and_then(|p| p.with_in_flight(blobs.in_flight))
        .map(|p| p.with_tenths(blobs.tenths))
        .map_err(|(part, e)| {
            let what = match part {
                Part::Measure(m) => format!("{} histogram of step {id}", m.words()),
                Part::Target => format!("request list entry latency of step {id}"),
                Part::Journey => format!("journey duration of step {id}"),
                Part::Busy => format!("journey busy time of step {id}"),
                Part::InFlight => format!("hist_in_flight_at_end of step {id}"),
            };
            self.corrupt(what, format!("it {e}"))
        })
    }

    /// A table of codes counted per step (`step_status_codes`, `step_stream_resets`,
    /// `step_close_codes`) of a run's steps, by step id, in code order.
    fn step_codes<T: FromSql>(
        &self,
        run: RunId,
        table: &str,
    ) -> Result<HashMap<i64, Vec<(T, u64)>>, StoreError> {
        self.children(
            &format!(
                "SELECT step_id, code, count FROM {table}
                 WHERE step_id IN (SELECT id FROM steps WHERE run_id = ?1) ORDER BY step_id, code"
            ),
            run,
            |r| Ok((r.get::<_, T>(1)?, r.get::<_, u64>(2)?)),
        )
    }

    /// The `until` conditions of a run's steps with their last readings, by step id, in
    /// order: each as written, and its reading (none where the condition was not read).
    fn step_conditions(&self, run: RunId) -> Result<HashMap<i64, ConditionRows>, StoreError> {
        self.children(
            "SELECT step_id, condition, value, lo, hi, open_above FROM step_conditions
             WHERE step_id IN (SELECT id FROM steps WHERE run_id = ?1) ORDER BY step_id, seq",
            run,
            |r| {
                let reading = match (r.get(2)?, r.get(3)?, r.get(4)?) {
                    (Some(value), Some(lo), Some(hi)) => Some(Reading {
                        value,
                        lo,
                        hi,
                        open_above: r.get(5)?,
                    }),
                    _ => None,
                };
                Ok((r.get::<_, String>(1)?, reading))
            },
        )
    }

    /// The per-second series of a run's steps, by step id. Each second's histogram is
    /// checked as it is read (a store is a file a user may be handed; the first damaged
    /// one in the order of the steps is named) and kept as stored by a store in memory
    /// (empty in seconds stored before schema version 12); a store's file is asked for
    /// them again when they are wanted ([`StoredStep::series`]), which keeps a run of
    /// 20,000 steps of 5 s from holding 57 MB of them (the `big_store` test's).
    fn step_seconds(&self, run: RunId) -> Result<HashMap<i64, Vec<SecondStats>>, StoreError> {
        let read = "read the steps";
        let keep = self.file.is_none();
        let mut by_step: HashMap<i64, Vec<SecondStats>> = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT step_id, second, completed, failed, mean_us, p50_us, p99_us, max_us,
                        histogram
                 FROM step_seconds
                 WHERE step_id IN (SELECT id FROM steps WHERE run_id = ?1)
                 ORDER BY step_id, seq",
            )
            .map_err(self.sql(read))?;
        let mut rows = stmt.query([run.0]).map_err(self.sql(read))?;
        while let Some(r) = rows.next().map_err(self.sql(read))? {
            let (id, mut second) = second_of(r).map_err(self.sql(read))?;
            let bytes: Option<Vec<u8>> = r.get(8).map_err(self.sql(read))?;
            let bytes = bytes.unwrap_or_default();
            if !bytes.is_empty() {
                codec::decode_histogram(&bytes).map_err(|e| {
                    self.corrupt(
                        format!("latency histogram of second {} of step {id}", second.second),
                        e,
                    )
                })?;
                if keep {
                    second.histogram = bytes;
                }
            }
            by_step.entry(id).or_default().push(second);
        }
        Ok(by_step)
    }

    /// The resource samples of a run's steps, by step id.
    fn step_resources(&self, run: RunId) -> Result<HashMap<i64, Vec<ResourceSample>>, StoreError> {
        self.children(
            "SELECT step_id, at_ns, cpu_user_ns, cpu_sys_ns, rss_bytes, processes, threads,
                    ctx_switches, fds
             FROM step_resources
             WHERE step_id IN (SELECT id FROM steps WHERE run_id = ?1) ORDER BY step_id, seq",
            run,
            |r| {
                Ok(ResourceSample {
                    at: codec::span(r.get(1)?),
                    cpu_user: codec::span(r.get(2)?),
                    cpu_sys: codec::span(r.get(3)?),
                    rss_bytes: r.get(4)?,
                    processes: r.get(5)?,
                    threads: r.get(6)?,
                    ctx_switches: r.get(7)?,
                    fds: r.get(8)?,
                })
            },
        )
    }

    /// The rows of a table of counted kinds (`step_targets`, `step_journeys`) of `run`'s
    /// steps, by step, in order: label, counts, the packed latency histogram and a
    /// journey's packed busy time (NULL before schema 22, and in `step_targets`).
    fn counted(
        &self,
        run: RunId,
        table: CountedTable,
    ) -> Result<HashMap<i64, Vec<CountedRow>>, StoreError> {
        let busy_at = 6 + FailureKind::ALL.len();
        self.children(
            &format!(
                "SELECT step_id, label, completed, ok, hist_latency, unsent, {}, {} FROM {}
                 WHERE step_id IN (SELECT id FROM steps WHERE run_id = ?1) ORDER BY step_id, seq",
                failure_column_list(),
                table.busy_column(),
                table.name(),
            ),
            run,
            |r| {
                let mut t = TargetStats {
                    label: r.get(1)?,
                    completed: r.get(2)?,
                    ok: r.get(3)?,
                    unsent: r.get(5)?,
                    latency: shootout_model::histograms::stub(),
                    failures: Default::default(),
                    busy: None,
                };
                for (i, n) in t.failures.0.iter_mut().enumerate() {
                    *n = r.get(6 + i)?;
                }
                Ok(CountedRow {
                    stats: t,
                    latency: r.get(4)?,
                    busy: r.get(busy_at)?,
                })
            },
        )
    }

    /// A step's `until` outcome from its `step_conditions` rows (condition as written,
    /// last reading) and its `until_converged_ns`.
    fn until_of(
        &self,
        id: i64,
        converged: Option<i64>,
        rows: ConditionRows,
    ) -> Result<UntilOutcome, StoreError> {
        let mut conditions = Vec::with_capacity(rows.len());
        let mut last = Vec::with_capacity(rows.len());
        for (text, reading) in rows {
            let c = text.parse::<Condition>().map_err(|e| {
                self.corrupt(format!("until condition of step {id}"), e.to_string())
            })?;
            conditions.push(c);
            last.push(reading);
        }
        Ok(UntilOutcome {
            conditions,
            converged: converged.map(codec::span),
            last,
        })
    }

    /// Reads a child table of a run's steps, grouped by step id (column 0), in query order.
    fn children<T>(
        &self,
        sql: &str,
        run: RunId,
        read: impl Fn(&Row) -> rusqlite::Result<T>,
    ) -> Result<HashMap<i64, Vec<T>>, StoreError> {
        let read_all = "read the steps";
        let mut by_step: HashMap<i64, Vec<T>> = HashMap::new();
        let mut stmt = self.conn.prepare_cached(sql).map_err(self.sql(read_all))?;
        let mut rows = stmt.query([run.0]).map_err(self.sql(read_all))?;
        while let Some(row) = rows.next().map_err(self.sql(read_all))? {
            let step: i64 = row.get(0).map_err(self.sql(read_all))?;
            let value = read(row).map_err(self.sql(read_all))?;
            by_step.entry(step).or_default().push(value);
        }
        Ok(by_step)
    }

    /// Rebuilds a step from its row in `steps` (children filled in and parts packed by the
    /// caller): the step, its HTTP/2 streams per connection (asked, and allowed when
    /// lower), and its histograms and samples as stored (the samples checked).
    #[allow(clippy::type_complexity)]
    fn step_of(&self, c: &Columns) -> Result<(StoredStep, (u64, Option<u64>), Blobs), StoreError> {
        let id: i64 = c.get("id")?;
        let level = c.level(id)?;
        let status_word: String = c.get("status")?;
        let status = status_word.parse::<StepStatus>().map_err(|_| {
            self.corrupt(format!("status of step {id}"), format!("'{status_word}'"))
        })?;
        let streams: (u64, Option<u64>) = (c.get("streams_asked")?, c.get("streams_allowed")?);
        let protocol: Option<String> = c.get("protocol")?;
        let pipeline: Option<usize> = c.get("pipeline")?;
        let wire = match (protocol, pipeline) {
            (Some(word), Some(pipeline)) => Some(Wire {
                protocol: Protocol::parse(&word).ok_or_else(|| {
                    self.corrupt(format!("protocol of step {id}"), format!("'{word}'"))
                })?,
                streams: streams.0 as usize,
                pipeline,
            }),
            _ => None,
        };
        let step = StoredStep {
            id: StepId(id),
            run: RunId(c.get("run_id")?),
            contender: ContenderId(c.get("contender_id")?),
            workload: c.get("workload")?,
            level,
            repetition: c.get("repetition")?,
            started: codec::time_at(c.get("started_ns")?),
            ended: codec::time_at(c.get("ended_ns")?),
            status,
            result: c.result(id)?,
            resources: Vec::new(),
            wire,
            other_load: c.other_load()?,
            search: c.search(id)?,
            packed: None,
        };
        Ok((step, streams, c.blobs(id)?))
    }
}

/// A row of `step_seconds` as [`Store::step_seconds`] selects it: its step's id and the
/// second, without its histogram.
fn second_of(r: &Row) -> rusqlite::Result<(i64, SecondStats)> {
    Ok((
        r.get(0)?,
        SecondStats {
            second: r.get(1)?,
            completed: r.get(2)?,
            failed: r.get(3)?,
            mean_us: r.get::<_, Option<f64>>(4)?.unwrap_or(f64::NAN),
            p50_us: r.get(5)?,
            p99_us: r.get(6)?,
            max_us: r.get(7)?,
            histogram: Vec::new(),
        },
    ))
}

/// A step's `until` conditions as stored: each as written, with its last reading.
type ConditionRows = Vec<(String, Option<Reading>)>;

/// The child rows of a run's steps, by step id, read before the steps themselves; each
/// step takes its own out ([`Store::fill_children`]).
struct StepChildren {
    status: HashMap<i64, Vec<(u16, u64)>>,
    resets: HashMap<i64, Vec<(u32, u64)>>,
    closes: HashMap<i64, Vec<(u16, u64)>>,
    conditions: HashMap<i64, ConditionRows>,
    seconds: HashMap<i64, Vec<SecondStats>>,
    targets: HashMap<i64, Vec<CountedRow>>,
    journeys: HashMap<i64, Vec<CountedRow>>,
    resources: HashMap<i64, Vec<ResourceSample>>,
}

/// A step's histograms (in [`Measure::ALL`]'s order; empty for one a step stored before it
/// was recorded) and samples, as stored, and its request list entries' and journeys'
/// latency histograms and its journeys' busy times (`None` where not stored) (filled in
/// with the step's children, [`Store::fill_children`]).
struct Blobs {
    histograms: [Vec<u8>; 6],
    /// The ages of the requests in flight at the end (NULL before schema 27: not known).
    in_flight: Option<Vec<u8>>,
    samples: Vec<u8>,
    /// The samples' good answers by tenth, counted as they were checked.
    tenths: SampleTenths,
    targets: Vec<Vec<u8>>,
    journeys: Vec<Vec<u8>>,
    busy: Vec<Option<Vec<u8>>>,
}

/// Reads steps' samples and seconds' histograms again from a store's file, through a
/// read-only connection of its own, opened when first asked. They were checked when their
/// step was read ([`Columns::blobs`], [`Store::step_seconds`]); a file that cannot be
/// read again (removed since) gives none.
struct SampleReader {
    path: PathBuf,
    store: Mutex<Option<Store>>,
}

impl SampleReader {
    fn new(path: PathBuf) -> SampleReader {
        SampleReader {
            path,
            store: Mutex::new(None),
        }
    }

    /// `read` of the store's file, opened when first asked; `None` when it cannot be.
    fn with<T>(&self, read: impl FnOnce(&Store) -> Option<T>) -> Option<T> {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        if store.is_none() {
            *store = Store::open_read_only(&self.path).ok();
        }
        read(store.as_ref()?)
    }

    /// The samples of step `id`.
    fn samples(&self, id: i64) -> Vec<Sample> {
        self.with(|store| {
            let bytes = store
                .conn
                .query_row("SELECT samples FROM steps WHERE id = ?1", [id], |r| {
                    r.get::<_, Vec<u8>>(0)
                })
                .ok()?;
            codec::decode_samples(&bytes).ok()
        })
        .unwrap_or_default()
    }

    /// The histograms of step `id`'s seconds, in order (empty bytes where a second has
    /// none).
    fn seconds(&self, id: i64) -> Vec<Vec<u8>> {
        self.with(|store| {
            let mut stmt = store
                .conn
                .prepare_cached(
                    "SELECT histogram FROM step_seconds WHERE step_id = ?1 ORDER BY seq",
                )
                .ok()?;
            let rows = stmt
                .query_map([id], |r| {
                    Ok(r.get::<_, Option<Vec<u8>>>(0)?.unwrap_or_default())
                })
                .ok()?;
            rows.collect::<rusqlite::Result<Vec<_>>>().ok()
        })
        .unwrap_or_default()
    }
}

/// Each column of a statement's rows by name, to its position: the driver finds a column
/// by name by fetching the name of every column before it, and each of the hundred-odd
/// columns of `steps` is read by name, for every step.
fn column_index(stmt: &rusqlite::Statement) -> HashMap<String, usize> {
    let mut index = HashMap::new();
    for (i, name) in stmt.column_names().into_iter().enumerate() {
        index.entry(name.to_string()).or_insert(i);
    }
    index
}

/// The columns of one row of `steps`, read by name (found in `index`, [`column_index`]);
/// errors name the store and the step.
struct Columns<'r> {
    row: &'r Row<'r>,
    store: &'r Store,
    index: &'r HashMap<String, usize>,
}

impl Columns<'_> {
    fn get<T: rusqlite::types::FromSql>(&self, name: &str) -> Result<T, StoreError> {
        match self.index.get(name) {
            Some(&i) => self.row.get(i),
            None => self.row.get(name),
        }
        .map_err(self.store.sql("read the steps"))
    }

    /// A REAL column; NaN where SQLite stored NULL for it.
    fn real(&self, name: &str) -> Result<f64, StoreError> {
        Ok(self.get::<Option<f64>>(name)?.unwrap_or(f64::NAN))
    }

    /// The step's histograms and samples as stored, the samples checked (the histograms
    /// are checked as they are packed).
    fn blobs(&self, id: i64) -> Result<Blobs, StoreError> {
        let samples: Vec<u8> = self.get("samples")?;
        let tenths = codec::check_samples(&samples)
            .map_err(|e| self.store.corrupt(format!("samples of step {id}"), e))?;
        let mut histograms: [Vec<u8>; 6] = Default::default();
        for (m, bytes) in Measure::ALL.into_iter().zip(&mut histograms) {
            let column = hist_column(m);
            // NULL in steps stored before a histogram added later was recorded.
            *bytes = if m.always_kept() {
                self.get(&column)?
            } else {
                self.get::<Option<Vec<u8>>>(&column)?.unwrap_or_default()
            };
        }
        Ok(Blobs {
            histograms,
            in_flight: self.get("hist_in_flight_at_end")?,
            samples,
            tenths,
            targets: Vec::new(),
            journeys: Vec::new(),
            busy: Vec::new(),
        })
    }

    /// What else ran on the step's CPUs; `None` for steps stored before it was recorded.
    /// A share read back from a damaged file is kept within its bounds.
    fn other_load(&self) -> Result<Option<OtherLoad>, StoreError> {
        let Some(cpus) = self.get::<Option<u32>>("other_cpus")? else {
            return Ok(None);
        };
        let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
        Ok(Some(OtherLoad {
            cpus,
            others: self.get::<Option<f64>>("other_busy")?.map(finite),
            contenders: self
                .get::<Option<f64>>("other_contenders")?
                .map_or(0.0, finite),
            interrupts: self
                .get::<Option<f64>>("other_interrupts")?
                .map_or(0.0, finite),
            steal: finite(self.real("other_steal")?).min(1.0),
            load_avg: finite(self.real("other_load_avg")?),
        }))
    }

    /// The step's part in a capacity search; `None` for a sweep's step.
    fn search(&self, id: i64) -> Result<Option<SearchStep>, StoreError> {
        let Some(word) = self.get::<Option<String>>("search_verdict")? else {
            return Ok(None);
        };
        let ended = self.search_ended(id)?;
        if word == UNJUDGED {
            return Ok(Some(SearchStep {
                verdict: None,
                ended,
            }));
        }
        let slo: Option<usize> = self.get("search_slo")?;
        let verdict = Verdict::from_word(&word, slo).ok_or_else(|| {
            self.store
                .corrupt(format!("search verdict of step {id}"), format!("'{word}'"))
        })?;
        Ok(Some(SearchStep {
            verdict: Some(verdict),
            ended,
        }))
    }

    /// How a search's step ended; `None` when not stored (not judged, or stored before
    /// schema 23).
    fn search_ended(&self, id: i64) -> Result<Option<StepEnd>, StoreError> {
        let Some(word) = self.get::<Option<String>>("search_ended")? else {
            return Ok(None);
        };
        StepEnd::from_word(&word).map(Some).ok_or_else(|| {
            self.store
                .corrupt(format!("search end of step {id}"), format!("'{word}'"))
        })
    }

    fn level(&self, id: i64) -> Result<LoadLevel, StoreError> {
        let kind: String = self.get("level_kind")?;
        let connections: usize = self.get("level_connections")?;
        match kind.as_str() {
            "concurrency" => Ok(LoadLevel::Concurrency { connections }),
            "rate" => Ok(LoadLevel::Rate {
                rps: self.real("level_rps")?,
                connections,
            }),
            other => Err(self
                .store
                .corrupt(format!("load level of step {id}"), format!("'{other}'"))),
        }
    }

    /// The counts (status codes filled in by the caller).
    fn counts(&self) -> Result<Counts, StoreError> {
        let mut failures = FailureCounts::default();
        for (k, column) in failure_columns() {
            failures[*k] = self.get(column)?;
        }
        Ok(Counts {
            completed: self.get("completed")?,
            ok: self.get("ok")?,
            failures,
            aborted: self.get("aborted")?,
            status: BTreeMap::new(),
            length_mismatch: self.get("length_mismatch")?,
            connections_opened: self.get("connections_opened")?,
            connections_failed: self.get("connections_failed")?,
            reconnects: self.get("reconnects")?,
            retried: self.get("retried")?,
            dropped: self.get("dropped")?,
            bytes_received: self.get("bytes_received")?,
            body_bytes: self.get("body_bytes")?,
            bytes_sent: self.get("bytes_sent")?,
            stream_resets: BTreeMap::new(),
            goaways: self.get("goaways")?,
            close_codes: BTreeMap::new(),
            pings_unanswered: self.get("pings_unanswered")?,
            connections_opening: self.get("connections_opening")?,
        })
    }

    fn schedule(&self, id: i64) -> Result<Option<ScheduleStats>, StoreError> {
        let Some(due) = self.get::<Option<u64>>("sched_due")? else {
            return Ok(None);
        };
        Ok(Some(ScheduleStats {
            target_rps: self.real("sched_target_rps")?,
            achieved_rps: self.real("sched_achieved_rps")?,
            due,
            sent: self.get("sched_sent")?,
            late: self.get("sched_late")?,
            late_no_connection: self.get("sched_late_no_connection")?,
            max_lag: codec::span(self.get("sched_max_lag_ns")?),
            lag_p50_us: self.get("sched_lag_p50_us")?,
            lag_p99_us: self.get("sched_lag_p99_us")?,
            lag_p999_us: self.get("sched_lag_p999_us")?,
            connections: self.get("sched_connections")?,
            max_connections: self.get("sched_max_connections")?,
            capped: self.get("sched_capped")?,
            spun: codec::span(self.get("sched_spun_ns")?),
            arrival: self.arrival(id)?,
            overtaken: self.get("sched_overtaken")?,
        }))
    }

    /// How a rate step's requests were spaced and the test of the gaps sent; even and
    /// untested in steps stored before schema 17. A fit read back from a damaged file is
    /// kept within its bounds (A² at least 0, p in 0..1).
    fn arrival(&self, id: i64) -> Result<ArrivalCheck, StoreError> {
        let process = match self.get::<Option<String>>("sched_arrival")?.as_deref() {
            None | Some("even") => Arrival::Even,
            Some("poisson") => Arrival::Poisson {
                // The seed's 64 bits, as written.
                seed: self.get::<Option<i64>>("sched_arrival_seed")?.unwrap_or(0) as u64,
            },
            Some(other) => {
                return Err(self
                    .store
                    .corrupt(format!("arrival of step {id}"), format!("'{other}'")))
            }
        };
        let Some(n) = self.get::<Option<u64>>("sched_fit_n")? else {
            return Ok(ArrivalCheck { process, fit: None });
        };
        let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
        let fit = Fit {
            n,
            statistic: finite(self.real("sched_fit_a2")?),
            p: finite(self.real("sched_fit_p")?).min(1.0),
        };
        Ok(ArrivalCheck {
            process,
            fit: Some(fit),
        })
    }

    /// The kernel's listen-queue counters and the accept queue's samples; NULL columns
    /// where they were not measured. A stored accept count that contradicts itself (more
    /// samples that waited than were taken, or found it full than found any waiting) is
    /// cut to the samples taken (that found any); steps stored before the backlog was read
    /// have none, and no sample found their queue full.
    fn listen(&self) -> Result<Option<ListenQueue>, StoreError> {
        let accept = match (
            self.get::<Option<u64>>("accept_samples")?,
            self.get::<Option<u64>>("accept_waited")?,
            self.get::<Option<u64>>("accept_total")?,
            self.get::<Option<u64>>("accept_most")?,
        ) {
            (Some(samples), Some(waited), Some(total), Some(most)) => {
                let waited = waited.min(samples);
                let backlog = self.get::<Option<u64>>("accept_backlog")?;
                let full = self.get::<Option<u64>>("accept_full")?.unwrap_or(0);
                Some(AcceptWaiting {
                    samples,
                    waited,
                    total,
                    most,
                    full: if backlog.is_some() {
                        full.min(waited)
                    } else {
                        0
                    },
                    backlog,
                })
            }
            _ => None,
        };
        Ok(
            match (
                self.get::<Option<u64>>("listen_overflows")?,
                self.get::<Option<u64>>("listen_drops")?,
            ) {
                (Some(overflows), Some(drops)) => Some(ListenQueue {
                    overflows,
                    drops,
                    accept,
                }),
                _ => None,
            },
        )
    }

    fn first_response(&self) -> Result<Option<FirstResponse>, StoreError> {
        let Some(status) = self.get::<Option<u16>>("first_status")? else {
            return Ok(None);
        };
        Ok(Some(FirstResponse {
            status,
            server: self.get("first_server")?,
            body_len: self.get("first_body_len")?,
        }))
    }

    /// The load run's result (series and warnings filled in by the caller; histograms and
    /// samples left out: the caller packs them, [`Columns::blobs`]).
    fn result(&self, id: i64) -> Result<RunResult, StoreError> {
        Ok(RunResult {
            started: codec::time_at(self.get("measured_started_ns")?),
            duration: codec::span(self.get("duration_ns")?),
            counts: self.counts()?,
            histograms: Histograms::stubs(),
            series: Vec::new(),
            samples: Vec::new(),
            first_response: self.first_response()?,
            generator: GeneratorStats {
                threads: self.get("gen_threads")?,
                cpu_user: codec::span(self.get("gen_cpu_user_ns")?),
                cpu_sys: codec::span(self.get("gen_cpu_sys_ns")?),
                busiest_thread: self.real("gen_busiest_thread")?,
            },
            schedule: self.schedule(id)?,
            interrupted: self.get("interrupted")?,
            warnings: Vec::new(),
            targets: Vec::new(),
            journeys: Vec::new(),
            listen: self.listen()?,
            // Filled from `step_conditions` by the caller.
            until: None,
            warm_up: match (
                self.get::<Option<i64>>("warmup_auto_ns")?,
                self.get::<Option<bool>>("warmup_level")?,
            ) {
                (Some(took), Some(level)) => Some(shootout_model::WarmedUp {
                    took: codec::span(took),
                    level,
                }),
                _ => None,
            },
            stream: self.stream(id)?,
            // Packed with the other histograms (see `Columns::blobs`).
            in_flight_at_end: None,
        })
    }

    /// A streaming gRPC step's calls (schema 25); `None` for any other step, and for
    /// steps stored before.
    fn stream(&self, id: i64) -> Result<Option<Box<StreamStats>>, StoreError> {
        let Some(word) = self.get::<Option<String>>("stream_shape")? else {
            return Ok(None);
        };
        let shape = ["server", "client", "bidi"]
            .into_iter()
            .find(|&k| k == word)
            .ok_or_else(|| {
                self.store
                    .corrupt(format!("stream_shape of step {id}"), format!("'{word}'"))
            })?;
        let hist = |column: &str| -> Result<Histogram<u64>, StoreError> {
            let bytes: Vec<u8> = self.get(column)?;
            let read = codec::decode_histogram(&bytes)
                .map_err(|e| self.store.corrupt(format!("{column} of step {id}"), e))?;
            let mut h = shootout_model::histograms::latency_histogram();
            h.add(&read).map_err(|e| {
                self.store
                    .corrupt(format!("{column} of step {id}"), format!("{e:?}"))
            })?;
            Ok(h)
        };
        let mut s = StreamStats::new(shape);
        s.calls_ok = self.get("stream_calls_ok")?;
        s.cancelled = self.get("stream_cancelled")?;
        s.replies = self.get("stream_replies")?;
        s.messages_per_call = self.get("stream_messages_per_call")?;
        s.sent = self.get("stream_sent")?;
        s.unmatched = self.get("stream_unmatched")?;
        s.unanswered = self.get("stream_unanswered")?;
        s.first_reply = hist("hist_stream_first_reply")?;
        s.gaps = hist("hist_stream_gaps")?;
        Ok(Some(Box::new(s)))
    }
}

/// A stored row of a counted kind: its counts (the latency and busy time left out), its
/// packed latency histogram and a journey's packed busy time (`None` where not stored).
struct CountedRow {
    stats: TargetStats,
    latency: Vec<u8>,
    busy: Option<Vec<u8>>,
}

/// Writes a step's counted kinds (its request-list entries or journey steps, or its
/// journeys) into `table`, in order, with their packed histograms (a journey's busy time
/// in `hist_busy`, NULL where not measured).
fn insert_counted(
    tx: &rusqlite::Transaction<'_>,
    table: CountedTable,
    id: i64,
    kinds: &[EncodedKind],
) -> rusqlite::Result<()> {
    let journeys = table == CountedTable::Journeys;
    let count = 7 + FailureKind::ALL.len() + usize::from(journeys);
    let marks: Vec<String> = (1..=count).map(|i| format!("?{i}")).collect();
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO {} (step_id, seq, label, completed, ok, hist_latency, unsent, {}{})
         VALUES ({})",
        table.name(),
        failure_column_list(),
        if journeys { ", hist_busy" } else { "" },
        marks.join(", "),
    ))?;
    for (seq, k) in kinds.iter().enumerate() {
        let t = k.stats;
        let mut values: Vec<&dyn rusqlite::ToSql> = vec![
            &id,
            &seq,
            &t.label,
            &t.completed,
            &t.ok,
            &k.latency,
            &t.unsent,
        ];
        values.extend(t.failures.0.iter().map(|n| n as &dyn rusqlite::ToSql));
        if journeys {
            values.push(&k.busy);
        }
        stmt.execute(values.as_slice())?;
    }
    Ok(())
}

/// Step `id`'s rows in `map`, taken out (none if it has none).
fn take<T>(map: &mut HashMap<i64, Vec<T>>, id: i64) -> Vec<T> {
    let mut rows = map.remove(&id).unwrap_or_default();
    // Kept with the step for as long as the report runs: no room for rows never read.
    rows.shrink_to_fit();
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_keep_kind_fields_and_text() {
        let json = warnings_json(&[
            Warning::NothingCompleted,
            Warning::ConnectFailed { count: 3 },
        ]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v[0]["kind"], "nothing_completed");
        assert_eq!(v[0]["message"], "not one request completed");
        assert_eq!(v[1]["kind"], "connect_failed");
        assert_eq!(v[1]["count"], 3);
        assert!(v[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("3 connection"));
        assert_eq!(warnings_json(&[]), "[]");
    }

    #[test]
    fn level_columns_name_the_kind() {
        assert_eq!(
            level_columns(LoadLevel::Concurrency { connections: 8 }),
            ("concurrency", 8, None)
        );
        assert_eq!(
            level_columns(LoadLevel::Rate {
                rps: 500.0,
                connections: 4
            }),
            ("rate", 4, Some(500.0))
        );
    }
}
