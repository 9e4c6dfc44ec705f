//! The JSON rendering of a stored run: one document with the run's facts, its contenders,
//! the warnings, one entry per contender × workload × load level (`results`, medians over
//! repetitions, as in the tables) and one per step (`steps`, every repetition). Its schema
//! is the table in `docs/report-json.md`, which a test checks against this output in both
//! directions.
//!
//! Units are in the field names (`_ms`, `_s`, `_bytes`, `_us_per_request`), and a
//! result's rates in its `unit` (`req/s`, or a gRPC workload's `calls/s`, …); times keep µs
//! resolution (3 decimals in ms, 6 in s), rates 3 decimals. Nothing is ever NaN.

use super::words::{warning_message, SERVED_PERCENTS};
use crate::json::{failures_json, load_level_json as level_json};
use crate::units::{json_ms as ms, json_secs, rfc3339, round, unix_s};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};
use shootout_analysis::cells::{step_cpu_us, step_peak_rss, Cell, Ratio, WorkloadBlock};
use shootout_analysis::ranking::{rankings, Ranking};
use shootout_analysis::Analysis;
use shootout_model::stored::{StoredRun, StoredStep};
use shootout_model::{LoadLevel, Warning, Wire};

/// Version of this document's schema (and of `shootout compare`'s); raised when a field
/// changes meaning or goes away, not when one is added.
pub const SCHEMA_VERSION: u32 = 1;

/// The run as one JSON document (schema in `docs/report-json.md`).
pub fn json(run: &StoredRun) -> Value {
    json_of(&Analysis::of(run))
}

/// [`json`] of a run already analysed (`a.run`).
pub fn json_of(a: &Analysis) -> Value {
    serde_json::to_value(Document(a)).expect("a run's document is JSON")
}

/// The document as [`render`](super::render) lays it out (pretty, each object's keys in
/// the order `serde_json`'s maps keep them), written to `out` as it is made: each result
/// and each step is built, written and dropped in turn, so that a run of 20,000 steps is
/// written without its whole document in memory, as a tree or as text.
pub fn write_json(a: &Analysis, out: impl std::io::Write) -> std::io::Result<()> {
    let mut ser =
        serde_json::Serializer::with_formatter(out, serde_json::ser::PrettyFormatter::new());
    Document(a).serialize(&mut ser)?;
    ser.into_inner().write_all(b"\n")
}

/// A run's document: its results and steps made one at a time as it is serialized (see
/// [`write_json`]), its other fields ([`head`]) at once.
struct Document<'x, 'a>(&'x Analysis<'a>);

impl Serialize for Document<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let head = head(a);
        // In the order of a `serde_json::Map`'s keys, as the whole `Value` printed them.
        let mut keys: Vec<&str> = head.keys().map(String::as_str).collect();
        keys.extend(["results", "steps"]);
        keys.sort_unstable();
        let mut m = s.serialize_map(Some(keys.len()))?;
        for k in keys {
            match k {
                "results" => m.serialize_entry(k, &Each(|| results(a)))?,
                "steps" => m.serialize_entry(
                    k,
                    &Each(|| a.run.steps.iter().filter_map(|s| step_json(a.run, s))),
                )?,
                _ => m.serialize_entry(k, &head[k])?,
            }
        }
        m.end()
    }
}

/// A sequence serialized from the values its function makes, one at a time.
struct Each<F>(F);

impl<F: Fn() -> I, I: Iterator<Item = Value>> Serialize for Each<F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// The document's `results`: one per contender × workload × level, in the order measured.
fn results<'x>(a: &'x Analysis) -> impl Iterator<Item = Value> + 'x {
    a.workloads.iter().flat_map(move |w| {
        w.levels.iter().flat_map(move |l| {
            let base = a.baseline.and_then(|b| l.cell(b));
            l.cells
                .iter()
                .map(move |c| result_json(a, w, l.level, c, base))
        })
    })
}

/// The document but its `results` and `steps`.
fn head(a: &Analysis) -> Map<String, Value> {
    let run = a.run;
    let r = &run.run;
    let m = &r.machine;
    let versions: Map<String, Value> = m
        .versions
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    let contenders = contenders_json(run);
    let warnings = run_warnings_json(a);
    let (journeys, journey_rankings) = super::journeys::json(run);
    let head = json!({
        "schema_version": SCHEMA_VERSION,
        "run": {
            "id": r.id.0,
            "also": run.also.iter().map(|id| id.0).collect::<Vec<_>>(),
            "name": r.name,
            "status": r.status.as_str(),
            "started_utc": rfc3339(r.started),
            "started_unix_s": round(unix_s(r.started), 3),
            "ended_utc": r.ended.map(rfc3339),
            "duration_s": r.ended.map(|e| round(e.duration_since(r.started).unwrap_or_default().as_secs_f64(), 3)),
        },
        "machine": {
            "cpu_model": m.cpu_model,
            "cores": m.cores,
            "kernel": m.kernel,
            "memory_bytes": m.memory_bytes,
            "versions": versions,
        },
        "baseline": a.baseline.map(|b| a.name(b)),
        "contenders": contenders,
        "warnings": warnings,
        "rankings": rankings(a).iter().map(|r| ranking_json(a, r)).collect::<Vec<_>>(),
        "capacities": super::capacity::json(a),
        "journeys": journeys,
        "journey_rankings": journey_rankings,
    });
    match head {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// How the client talked to the contender: `{protocol, streams, pipeline}`, or null when
/// it was not recorded (or a cell's repetitions differ).
fn wire_json(wire: Option<Wire>) -> Value {
    wire.map_or(Value::Null, |w| {
        json!({
            "protocol": w.protocol.as_str(),
            "streams": w.streams,
            "pipeline": w.pipeline,
        })
    })
}

/// One entry of `rankings`: the order of a workload × level and the test of each step down.
pub(crate) fn ranking_json(a: &Analysis, r: &Ranking) -> Value {
    let steps: Vec<Value> = r
        .steps
        .iter()
        .zip(r.order.windows(2))
        .map(|(s, pair)| {
            let d = s.difference.as_ref();
            json!({
                "above": a.name(pair[0]),
                "below": a.name(pair[1]),
                "relation": s.relation.word(),
                "ratio": d.map(|d| round(d.ratio, 3)),
                "ci_low": d.map(|d| round(d.low, 3)),
                "ci_high": d.map(|d| round(d.high, 3)),
                "p": d.map(|d| round(d.p, 4)),
                "method": d.map(|d| d.method.word()),
            })
        })
        .collect();
    json!({
        "workload": r.workload,
        "level": level_json(r.level),
        "line": r.line(|i| a.name(i)),
        "order": r.order.iter().map(|&i| a.name(i)).collect::<Vec<_>>(),
        "steps": steps,
    })
}

/// The document's `contenders`: name, command, baseline flag, status, detail, version.
fn contenders_json(run: &StoredRun) -> Vec<Value> {
    run.contenders
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "command": c.command,
                "baseline": c.baseline,
                "status": c.status.as_str(),
                "detail": c.detail,
                "version": c.version,
            })
        })
        .collect()
}

/// The document's `warnings`: the run's warnings with their kind, words and where.
fn run_warnings_json(a: &Analysis) -> Vec<Value> {
    a.warnings
        .iter()
        .map(|w| {
            json!({
                "kind": w.kind(),
                "message": warning_message(w),
                "detail": w.detail_lines(),
                "contender": w.contender(),
                "workload": w.cell().map(|at| &at.workload),
                "level": w.cell().map(|at| at.level.to_string()),
            })
        })
        .collect()
}

/// One entry of the document's `steps` (`None` for a step of an unknown contender).
fn step_json(run: &StoredRun, s: &StoredStep) -> Option<Value> {
    let c = run.contenders.iter().find(|c| c.id == s.contender)?;
    let l = s.latency_summary();
    let counts = &s.result.counts;
    Some(json!({
        "id": s.id.0,
        "contender": c.name,
        "workload": s.workload,
        "level": level_json(s.level),
        "wire": wire_json(s.wire),
        "repetition": s.repetition,
        "status": s.status.as_str(),
        "started_utc": rfc3339(s.started),
        "duration_s": json_secs(s.result.duration),
        "rps": round(s.result.rps(), 3),
        "ok_rps": round(s.result.ok_rps(), 3),
        "requests": {
            "completed": counts.completed,
            "ok": counts.ok,
            "failed": counts.failed(),
            "aborted": counts.aborted,
        },
        "failures": failures_json(&counts.failures),
        "latency_ms": {
            "mean": ms(l.mean),
            "sd": ms(l.stdev),
            "p50": ms(l.p50),
            "p90": ms(l.p90),
            "p99": ms(l.p99),
            "max": ms(l.max),
            "ci": step_ci_json(s),
        },
        "server": {
            "cpu_us_per_request": step_cpu_us(s).map(|v| round(v, 3)),
            "peak_rss_bytes": step_peak_rss(s),
            "peak_fds": peak([s], |r| r.fds),
            "peak_threads": peak([s], |r| r.threads),
            "peak_processes": peak([s], |r| r.processes),
        },
        "warnings": s.result.warnings.iter().map(warning_json).collect::<Vec<_>>(),
        "until": crate::json::until_json(&s.result),
        "warm_up": crate::json::warm_up_json(&s.result),
        "requests_by_target": if s.result.targets.is_empty() {
            Value::Array(Vec::new())
        } else {
            crate::json::by_target_json(&s.unpacked())
        },
        "journeys": if s.result.journeys.is_empty() {
            Value::Array(Vec::new())
        } else {
            crate::json::by_journey_json(&s.unpacked())
        },
        "search": s.search.as_ref().map(|m| json!({
            "verdict": m.verdict.as_ref().map(|v| v.word()),
            "slo_index": match &m.verdict {
                Some(shootout_model::find_max::Verdict::Broke(i)) => Some(*i),
                _ => None,
            },
            "ended": m.ended.map(|e| e.word()),
        })),
    }))
}

/// A load run's warning: `{kind, message}`.
fn warning_json(w: &Warning) -> Value {
    json!({ "kind": w.kind(), "message": w.to_string() })
}

fn result_json(
    a: &Analysis,
    w: &WorkloadBlock,
    level: LoadLevel,
    c: &Cell,
    base: Option<&Cell>,
) -> Value {
    let vs = base
        .filter(|b| b.contender != c.contender)
        .and_then(|b| Ratio::of(c, b))
        .map(|r| {
            json!({
                "times": round(r.times, 3),
                "error": round(r.error, 3),
                "faster": r.faster,
            })
        });
    let merged = c.merged_latency();
    let served: Map<String, Value> = SERVED_PERCENTS
        .iter()
        .map(|p| {
            (
                p.to_string(),
                ms(merged.value_at_quantile(f64::from(*p) / 100.0) as f64 / 1e3).into(),
            )
        })
        .collect();
    json!({
        "workload": w.name,
        "contender": a.name(c.contender),
        "level": level_json(level),
        "unit": w.unit.per_second(),
        "wire": wire_json(c.wire),
        "stream_unit": c
            .steps
            .iter()
            .find_map(|s| s.result.stream.as_deref())
            .and_then(|st| super::words::stream_unit(st.shape)),
        "repetitions": c.reps(),
        "rps": {
            "median": round(c.rps, 3),
            "min": round(c.rps_min, 3),
            "max": round(c.rps_max, 3),
            "spread": round(c.spread(), 3),
            "values": c.rps_values.iter().map(|v| round(*v, 3)).collect::<Vec<_>>(),
            "noisy": c.noisy(),
        },
        "percent_of_baseline": base.filter(|b| b.rps > 0.0).map(|b| round(c.rps * 100.0 / b.rps, 3)),
        "vs_baseline": vs,
        "latency_ms": {
            "mean": ms(c.mean),
            "sd": ms(c.sd),
            "p50": ms(c.p50),
            "p90": ms(c.p90),
            "p99": ms(c.p99),
            "max": ms(c.max),
            "ci": cell_ci_json(c),
        },
        "served_within_ms": served,
        "requests": {
            "completed": c.completed,
            "ok": c.ok,
            "failed": c.failures.total(),
            "aborted": c.aborted,
        },
        "failures": failures_json(&c.failures),
        "server": {
            "cpu_us_per_request": c.cpu_us.map(|v| round(v, 3)),
            "peak_rss_bytes": c.peak_rss,
            "peak_fds": peak(c.steps.iter().copied(), |r| r.fds),
            "peak_threads": peak(c.steps.iter().copied(), |r| r.threads),
            "peak_processes": peak(c.steps.iter().copied(), |r| r.processes),
        },
    })
}

/// A cell's `latency_ms.ci`: `[lo, hi]` (ms) of each percentile the tables print,
/// `method` (`answers`: one repetition's order statistics; `repetitions`: the
/// order-statistic interval of the median over them), `coverage` (0..1) and `open_above`
/// (the percentiles whose upper end is only the slowest answer).
fn cell_ci_json(c: &Cell) -> Value {
    use super::tables::TABLE_PERCENTILES;
    let cis = shootout_analysis::intervals::cell_intervals(c);
    let mut v = Map::new();
    for (i, name) in TABLE_PERCENTILES {
        v.insert(
            name.into(),
            cis[i].map_or(Value::Null, |ci| json!([ms(ci.lo), ms(ci.hi)])),
        );
    }
    let basis = TABLE_PERCENTILES
        .iter()
        .find_map(|(i, _)| cis[*i])
        .map(|ci| ci.basis);
    v.insert("method".into(), basis.map(|b| b.key()).into());
    v.insert(
        "coverage".into(),
        basis.map(|b| round(b.coverage(), 6)).into(),
    );
    v.insert(
        "open_above".into(),
        open_above(|i| cis[i].is_some_and(|ci| ci.open_above)),
    );
    Value::Object(v)
}

/// A step's `latency_ms.ci`: `[lo, hi]` (ms) of each percentile from its answers' order
/// statistics (95%), and `open_above` as a cell's.
fn step_ci_json(s: &StoredStep) -> Value {
    use super::tables::TABLE_PERCENTILES;
    let cis = shootout_analysis::certify::percentile_intervals(
        &s.histogram(shootout_model::Measure::Latency),
        &s.series(),
    );
    let mut v = Map::new();
    for (i, name) in TABLE_PERCENTILES {
        v.insert(
            name.into(),
            cis[i].map_or(Value::Null, |ci| {
                json!([ms(ci.lo as f64 / 1e3), ms(ci.hi as f64 / 1e3)])
            }),
        );
    }
    v.insert(
        "open_above".into(),
        open_above(|i| cis[i].is_some_and(|ci| ci.open_above)),
    );
    Value::Object(v)
}

/// `open_above`: the names of the table's percentiles whose interval is open above (too
/// few answers above them to bound it), as `open(i)` says of percentile `i`.
fn open_above(open: impl Fn(usize) -> bool) -> Value {
    super::tables::TABLE_PERCENTILES
        .iter()
        .filter(|(i, _)| open(*i))
        .map(|(_, n)| Value::from(*n))
        .collect()
}

/// The largest value of one resource sampled in `steps` (whole process tree); `None`
/// without samples (a server shootout did not start).
fn peak<'a>(
    steps: impl IntoIterator<Item = &'a StoredStep>,
    what: fn(&shootout_model::ResourceSample) -> u32,
) -> Option<u32> {
    steps
        .into_iter()
        .flat_map(|s| s.resources.iter().map(what))
        .max()
}
