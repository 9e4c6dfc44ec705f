//! The JSON rendering of one load run: a single document for machines, its schema a table
//! in `docs/load-json.md` (field, type, unit, meaning). A test parses that table and checks
//! the rendered documents against it both ways — every documented field is present with
//! its type, every rendered field is documented — so doc and output cannot drift.
//!
//! Inputs: a `LoadSpec` and a `RunResult`. Units are in the field names (`_ms`, `_s`,
//! `_rps`); the µs histograms become milliseconds. Individual samples are not included
//! (see ab's `-g` file for those).

use crate::units::{json_ms as ms, json_secs as s, ratio, rfc3339, round, unix_s};
use crate::Exporter;
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use shootout_model::Choice;
use shootout_model::{Counts, LatencySummary, LoadSpec, Pace, RunResult};
use std::collections::BTreeMap;

/// Version of the JSON document's schema; raised when a field changes meaning or goes away
/// (adding fields does not raise it). 2: `rps` counts good answers only (it counted every
/// completed request, which `completed_rps` now gives).
pub const SCHEMA_VERSION: u32 = 2;

/// The JSON rendering (pretty-printed).
pub struct Json;

impl Exporter for Json {
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String {
        let mut s = serde_json::to_string_pretty(&json(spec, result))
            .expect("a serde_json::Value always serializes");
        s.push('\n');
        s
    }
}

/// `{min, mean, stdev, p50, p90, p99, p999, max}` in ms of a µs histogram (zeros if empty).
fn summary(h: &Histogram<u64>) -> Value {
    let l = LatencySummary::of(h);
    json!({
        "min": ms(l.min),
        "mean": ms(l.mean),
        "stdev": ms(l.stdev),
        "p50": ms(l.p50),
        "p90": ms(l.p90),
        "p99": ms(l.p99),
        "p999": ms(l.p999),
        "max": ms(l.max),
    })
}

/// The document's `latency_ms`: the summary of the (corrected) latency, `ci`: each
/// percentile's 95% interval `[lo, hi]` (see `shootout_analysis::certify`), and
/// `ci_open_above`: the percentiles whose upper end is only the slowest answer recorded
/// (too few answers above them to bound it).
fn latency_json(r: &RunResult) -> Value {
    use shootout_analysis::certify::{percentile_intervals, PERCENTILES};
    let mut v = summary(&r.histograms.latency);
    let cis = percentile_intervals(&r.histograms.latency, &r.series);
    let ci: Map<String, Value> = PERCENTILES
        .iter()
        .zip(cis)
        .map(|((_, name), ci)| {
            let pair = ci.map(|c| json!([ms(c.lo as f64 / 1e3), ms(c.hi as f64 / 1e3)]));
            (name.to_string(), pair.unwrap_or(Value::Null))
        })
        .collect();
    v["ci"] = Value::Object(ci);
    v["ci_open_above"] = PERCENTILES
        .iter()
        .zip(cis)
        .filter(|(_, ci)| ci.is_some_and(|c| c.open_above))
        .map(|((_, name), _)| Value::from(*name))
        .collect();
    v
}

/// What `result` measured of the run `spec`, as one JSON document (schema in
/// `docs/load-json.md`).
pub fn json(spec: &LoadSpec, result: &RunResult) -> Value {
    let r = result;
    let c = &r.counts;
    let mut doc = json!({
        "schema_version": SCHEMA_VERSION,
        "target": target_json(spec),
        "load": load_json(spec, r),
        "interrupted": r.interrupted,
        "started_unix_s": round(unix_s(r.started), 3),
        "started_utc": rfc3339(r.started),
        "duration_s": s(r.duration),
        "rps": round(r.ok_rps(), 3),
        "completed_rps": round(r.rps(), 3),
        "requests": requests_json(c),
        "in_flight_at_end": in_flight_json(r),
        "failures": failures_json(&c.failures),
        "length_mismatch": c.length_mismatch,
        "status_codes": codes_json(&c.status),
        "bytes": bytes_json(r),
        "latency_ms": latency_json(r),
        "latency_raw_ms": summary(&r.histograms.latency_raw),
        "connection_times_ms": connection_times_json(r),
        "connections": connections_json(r),
        "generator": generator_json(r),
        "schedule": schedule_json(spec, r),
        "stream": stream_json(r),
        "until": until_json(r),
        "warm_up": warm_up_json(r),
        "level": level_json(r),
        "first_response": first_response_json(r),
        "warnings": warnings_json(r),
        "series": series_json(r),
        "requests_by_target": by_target_json(r),
    });
    if !r.journeys.is_empty() {
        doc["journeys"] = by_journey_json(r);
    }
    doc
}

/// The document's `requests`: the counts, with stream resets and close frames by code.
fn requests_json(c: &Counts) -> Value {
    json!({
        "completed": c.completed,
        "ok": c.ok,
        "failed": c.failed(),
        "aborted": c.aborted,
        "retried": c.retried,
        "stream_resets": codes_json(&c.stream_resets),
        "close_codes": codes_json(&c.close_codes),
        "pings_unanswered": c.pings_unanswered,
    })
}

/// The document's `in_flight_at_end`: the requests still in flight when the run ended,
/// those of them due and not yet sent, and how long they had waited (`age_ms`); null
/// where that is not known.
fn in_flight_json(r: &RunResult) -> Value {
    json!(r.in_flight_at_end.as_ref().map(|h| json!({
        "count": h.len(),
        "unsent": r.unsent_at_end(),
        "age_ms": summary(h),
    })))
}

/// Counts by code (status, reset or close code) as an object keyed by the code.
fn codes_json<K: ToString>(codes: &BTreeMap<K, u64>) -> Value {
    let by_code: Map<String, Value> = codes
        .iter()
        .map(|(code, n)| (code.to_string(), Value::from(*n)))
        .collect();
    Value::Object(by_code)
}

/// The document's `bytes`: received, of it body, sent, and received per second.
fn bytes_json(r: &RunResult) -> Value {
    let c = &r.counts;
    let run_s = r.duration.as_secs_f64();
    json!({
        "received": c.bytes_received,
        "body": c.body_bytes,
        "sent": c.bytes_sent,
        "received_per_s": round(ratio(c.bytes_received as f64, run_s), 3),
    })
}

/// The document's `connection_times_ms`: ab's connect, processing, waiting and total.
fn connection_times_json(r: &RunResult) -> Value {
    json!({
        "connect": summary(&r.histograms.connect),
        "processing": summary(&r.histograms.processing),
        "waiting": summary(&r.histograms.waiting),
        "total": summary(&r.histograms.latency),
    })
}

/// The document's `connections`: opened, failed, still opening, replaced, and their
/// setup time.
fn connections_json(r: &RunResult) -> Value {
    let c = &r.counts;
    json!({
        "opened": c.connections_opened,
        "failed": c.connections_failed,
        "opening": c.connections_opening,
        "reconnects": c.reconnects,
        "dropped": c.dropped,
        "goaways": c.goaways,
        "overtaken": r.schedule.map(|s| s.overtaken),
        "setup_ms": (!r.histograms.setup.is_empty()).then(|| summary(&r.histograms.setup)),
    })
}

/// The document's `first_response`: its status, `server` field and body length.
fn first_response_json(r: &RunResult) -> Value {
    json!(r.first_response.as_ref().map(|f| json!({
        "status": f.status,
        "server": f.server,
        "body_len": f.body_len,
    })))
}

/// The document's `journeys`: per journey of `--journey`'s file, those that ended, ok and
/// failed, their duration (think times included) and their duration less think times
/// (absent from results that did not measure it: older result files, stored runs);
/// empty without journeys.
pub(crate) fn by_journey_json(r: &RunResult) -> Value {
    Value::Array(
        r.journeys
            .iter()
            .map(|t| {
                let mut j = json!({
                    "journey": t.label,
                    "ended": t.completed,
                    "ok": t.ok,
                    "failed": t.failed(),
                    "failures": failures_json(&t.failures),
                    "unsent": t.unsent,
                    "duration_ms": summary(&t.latency),
                });
                if let Some(busy) = &t.busy {
                    j["duration_less_think_ms"] = summary(busy);
                }
                j
            })
            .collect(),
    )
}

/// The document's `requests_by_target`: per entry of a request list, its counts and
/// latency (empty without a list of several entries).
pub(crate) fn by_target_json(r: &RunResult) -> Value {
    Value::Array(
        r.targets
            .iter()
            .map(|t| {
                json!({
                    "target": t.label,
                    "completed": t.completed,
                    "ok": t.ok,
                    "failed": t.failed(),
                    "failures": failures_json(&t.failures),
                    "unsent": t.unsent,
                    "latency_ms": summary(&t.latency),
                })
            })
            .collect(),
    )
}

/// The document's `target`: URL, method, host, port and path.
fn target_json(spec: &LoadSpec) -> Value {
    json!({
        "url": spec.target.url,
        "method": spec.request.method,
        "host": spec.target.host,
        "port": spec.target.port,
        "path": spec.target.path,
    })
}

/// The document's `load`: what was asked (connections, threads, pace, bounds, timeout),
/// and the unit its counts count.
fn load_json(spec: &LoadSpec, r: &RunResult) -> Value {
    let (mode, rate) = match spec.pace {
        Pace::Closed if spec.ws_hold.is_some() => ("hold", None),
        Pace::Closed => ("closed", None),
        Pace::Rate(rps) => ("rate", Some(rps)),
    };
    json!({
        "connections": spec.connections,
        "threads": spec.threads,
        "mode": mode,
        "rate_rps": rate,
        "requests": spec.requests,
        "duration_s": spec.duration.map(s),
        "timeout_s": s(spec.timeout),
        "keepalive": spec.request.keepalive,
        "protocol": spec.protocol.as_str(),
        "streams": spec.streams,
        "pipeline": spec.pipeline,
        "requests_file": spec.list.as_ref().map(|l| l.source.as_str()),
        "messages_file": spec.ws_messages.as_ref().map(|m| m.source.as_str()),
        "order": spec.list.as_ref().map(|l| l.order).or(spec.ws_messages.as_ref().map(|m| m.order)).map(|o| o.name()),
        "seed": spec.list.as_ref().map(|l| l.seed).or(spec.ws_messages.as_ref().map(|m| m.seed)).or(match spec.arrival {
            shootout_model::Arrival::Poisson { seed } => Some(seed),
            shootout_model::Arrival::Even => None,
        }),
        "busy_poll_us": spec.busy_poll.as_micros() as u64,
        "unit": crate::common::unit(spec, r),
        "journey_connection": open_journeys(spec).then(|| spec.journey_connection.as_str()),
    })
}

/// Whether `spec` starts journeys on a schedule (the open model: `--rate`, or stages of
/// rates), whose new users take a connection as `--journey-connection` says.
fn open_journeys(spec: &LoadSpec) -> bool {
    spec.journey.is_some() && (matches!(spec.pace, Pace::Rate(_)) || !spec.rate_stages.is_empty())
}

/// The document's `stream`: a streaming gRPC run's calls and the timing of their
/// replies; null otherwise.
fn stream_json(r: &RunResult) -> Value {
    let Some(st) = r.stream.as_deref() else {
        return Value::Null;
    };
    let timed = |h: &Histogram<u64>| (!h.is_empty()).then(|| summary(h));
    let bidi = st.shape == "bidi";
    json!({
        "shape": st.shape,
        "calls_ok": st.calls_ok,
        "cancelled": st.cancelled,
        "replies": st.replies,
        "replies_per_s": round(ratio(st.replies as f64, r.duration.as_secs_f64()), 3),
        "messages_per_call": (st.shape != "server" && st.messages_per_call > 0).then_some(st.messages_per_call),
        "first_reply_ms": timed(&st.first_reply),
        "gap_ms": timed(&st.gaps),
        "sent": bidi.then_some(st.sent),
        "unmatched": bidi.then_some(st.unmatched),
        "unanswered": bidi.then_some(st.unanswered),
    })
}

/// The document's `generator`: the load generator's own threads and CPU.
fn generator_json(r: &RunResult) -> Value {
    let g = &r.generator;
    json!({
        "threads": g.threads,
        "cpu_s": s(g.cpu()),
        "cpu_user_s": s(g.cpu_user),
        "cpu_sys_s": s(g.cpu_sys),
        "cpu_us_per_request": round(r.cpu_us_per_request(), 3),
        "busiest_thread": round(g.busiest_thread, 4),
        "saturated": shootout_analysis::load_warnings::saturated(g),
    })
}

/// The document's `schedule`: how the open loop kept its rate (null in a closed loop).
/// An automatic warm-up's length and whether it ended level; null for a fixed warm-up
/// or none.
pub(crate) fn warm_up_json(r: &RunResult) -> Value {
    r.warm_up.map_or(Value::Null, |w| {
        json!({
            "auto": true,
            "took_s": round(w.took.as_secs_f64(), 3),
            "level": w.level,
        })
    })
}

/// `--until`'s conditions (or a plan step's `until`), whether they held (and when), and
/// each one's last reading; null without conditions.
pub(crate) fn until_json(r: &RunResult) -> Value {
    use shootout_model::until::Figure;
    let Some(u) = &r.until else {
        return Value::Null;
    };
    let readings: Vec<Value> = u
        .conditions
        .iter()
        .zip(&u.last)
        .map(|(c, r)| {
            let unit = match c.figure {
                Figure::Percentile(_) => "ms",
                Figure::Rps => "req/s",
            };
            json!({
                "condition": c.to_string(),
                "unit": unit,
                "value": r.map(|r| round(r.value, 6)),
                "ci95": r.map(|r| [round(r.lo, 6), round(r.hi, 6)]),
                "open_above": r.is_some_and(|r| r.open_above),
                "half_width": r
                    .filter(|r| !r.open_above)
                    .map(|r| r.width())
                    .filter(|w| w.is_finite())
                    .map(|w| round(w, 6)),
                "held": r.is_some_and(|r| r.holds(c)),
            })
        })
        .collect();
    json!({
        "converged": u.converged.is_some(),
        "after_s": u.converged.map(|d| round(d.as_secs_f64(), 3)),
        "readings": readings,
    })
}

fn schedule_json(spec: &LoadSpec, r: &RunResult) -> Value {
    let cert = shootout_analysis::load_warnings::certificate(r);
    r.schedule.map_or(Value::Null, |sch| {
        json!({
            "unit": crate::common::paced(spec),
            "target_rps": round(sch.target_rps, 3),
            "achieved_rps": round(sch.achieved_rps, 3),
            "due": sch.due,
            "sent": sch.sent,
            "late": sch.late,
            "late_no_connection": sch.late_no_connection,
            "max_lag_ms": ms(sch.max_lag.as_secs_f64() * 1e3),
            "lag_ms": {
                "p50": ms(sch.lag_p50_us as f64 / 1e3),
                "p99": ms(sch.lag_p99_us as f64 / 1e3),
                "p999": ms(sch.lag_p999_us as f64 / 1e3),
                "max": ms(sch.max_lag.as_secs_f64() * 1e3),
            },
            "connections": sch.connections,
            "max_connections": sch.max_connections,
            "capped": sch.capped,
            "wait_spin_s": round(sch.spun.as_secs_f64(), 6),
            "arrival": sch.arrival.process.name(),
            "arrival_fit": sch.arrival.fit.map(|f| json!({
                "n": f.n,
                "statistic": round(f.statistic, 4),
                "p": round(f.p, 6),
                "fits": f.fits(),
            })),
            "kept": cert.is_some_and(|c| c.kept),
            "not_kept_because": cert.and_then(|c| c.reason).map(|r| r.key()),
            "on_time": round(cert.map_or(0.0, |c| c.on_time), 6),
            "achieved_share": round(cert.map_or(0.0, |c| c.achieved_share), 6),
        })
    })
}

/// The document's `level`: the warm-up and drift checks of the per-second series (null
/// under 8 whole seconds).
fn level_json(r: &RunResult) -> Value {
    let trend = |t: Option<shootout_analysis::certify::Trend>| {
        t.map(|t| {
            json!({
                "z": round(t.z, 3),
                "p": round(t.p, 6),
                "change_per_s": round(t.change, 6),
            })
        })
    };
    shootout_analysis::certify::level(&r.series).map_or(Value::Null, |l| {
        json!({
            "seconds": l.seconds,
            "warm_up_seen": l.warm_up.is_some(),
            "warm_up_seconds": l.warm_up,
            "drifting": l.drifting(),
            "latency_trend": trend(l.latency),
            "throughput_trend": trend(l.throughput),
        })
    })
}

/// The document's `warnings`: `{kind, message}` each.
fn warnings_json(r: &RunResult) -> Value {
    Value::Array(
        r.warnings
            .iter()
            .map(|w| {
                // The model tags each warning with its kind (serde `tag = "kind"`).
                let kind = serde_json::to_value(w)
                    .ok()
                    .and_then(|v| v.get("kind").cloned())
                    .unwrap_or(Value::Null);
                json!({ "kind": kind, "message": w.to_string() })
            })
            .collect(),
    )
}

/// The document's `series`: one entry per second of the run.
fn series_json(r: &RunResult) -> Value {
    Value::Array(
        r.series
            .iter()
            .map(|sec| {
                json!({
                    "second": sec.second,
                    "completed": sec.completed,
                    "failed": sec.failed,
                    "mean_ms": ms(sec.mean_us / 1e3),
                    "p50_ms": ms(sec.p50_us as f64 / 1e3),
                    "p99_ms": ms(sec.p99_us as f64 / 1e3),
                    "max_ms": ms(sec.max_us as f64 / 1e3),
                })
            })
            .collect(),
    )
}

/// `{kind, connections, rate_rps}` of a load level.
pub(crate) fn load_level_json(level: shootout_model::LoadLevel) -> Value {
    use shootout_model::LoadLevel;
    match level {
        LoadLevel::Concurrency { connections } => json!({
            "kind": "concurrency",
            "connections": connections,
            "rate_rps": Value::Null,
        }),
        LoadLevel::Rate { rps, connections } => json!({
            "kind": "rate",
            "connections": connections,
            "rate_rps": round(rps, 3),
        }),
    }
}

/// `{connect, timeout, …}`: failed requests per class.
pub(crate) fn failures_json(f: &shootout_model::FailureCounts) -> Value {
    Value::Object(
        f.iter()
            .map(|(k, n)| (k.name().to_string(), n.into()))
            .collect::<Map<String, Value>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use crate::schema::Schema;

    /// The schema document; its table is the contract this test enforces.
    const DOC: &str = include_str!("../../../docs/load-json.md");

    #[test]
    fn the_doc_and_the_output_agree() {
        let schema = Schema::from_markdown(DOC, None).unwrap();
        assert!(
            schema.fields().count() > 50,
            "the doc's table was not found"
        );
        let mut seen = std::collections::BTreeSet::new();
        for (name, spec, mut result) in fixtures::all() {
            for duration in [result.duration, std::time::Duration::ZERO] {
                result.duration = duration;
                match schema.check(&json(&spec, &result)) {
                    Ok(values) => seen.extend(values),
                    Err(problems) => panic!("{name} against docs/load-json.md: {problems:#?}"),
                }
            }
        }
        // Every documented field is checked against a real value in some fixture.
        for (path, _) in schema.fields() {
            assert!(seen.contains(path), "no fixture has a value for {path}");
        }
    }

    #[test]
    fn the_fields_the_cli_promises_exist() {
        let (spec, r) = fixtures::closed_with_failures();
        let doc = json(&spec, &r);
        for path in [
            "/requests/completed",
            "/requests/ok",
            "/requests/failed",
            "/requests/aborted",
            "/failures/connect",
            "/failures/timeout",
            "/failures/reset",
            "/failures/malformed",
            "/failures/status",
            "/failures/body",
            "/status_codes/200",
            "/duration_s",
            "/rps",
            "/latency_ms/p999",
            "/latency_raw_ms/p50",
            "/connections/opened",
            "/connections/failed",
            "/generator/cpu_s",
            "/generator/cpu_us_per_request",
            "/generator/saturated",
        ] {
            assert!(doc.pointer(path).is_some(), "{path} missing");
        }
    }

    #[test]
    fn completed_is_ok_plus_failed_and_failures_add_up() {
        for (name, spec, r) in fixtures::all() {
            let doc = json(&spec, &r);
            let n = |p: &str| doc.pointer(p).and_then(Value::as_u64).unwrap();
            assert_eq!(
                n("/requests/completed"),
                n("/requests/ok") + n("/requests/failed"),
                "{name}"
            );
            let by_class: u64 = doc["failures"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert_eq!(by_class, n("/requests/failed"), "{name}");
        }
    }

    /// A journey run's schedule starts journeys: its unit says so, while its counts
    /// (`load.unit`) are still its steps' requests; other runs' schedules pace requests.
    #[test]
    fn a_journey_run_s_schedule_counts_journeys() {
        let (spec, r) = fixtures::journeys_rate();
        let doc = json(&spec, &r);
        assert_eq!(doc["schedule"]["unit"], "journey");
        assert_eq!(doc["schedule"]["sent"], 400);
        assert_eq!(doc["load"]["unit"], "request");
        // Its new users' connections, as asked; none to say of a closed model or a URL.
        assert_eq!(doc["load"]["journey_connection"], "new");
        let mut reuse = spec.clone();
        reuse.journey_connection = shootout_model::JourneyConnection::Reuse;
        assert_eq!(json(&reuse, &r)["load"]["journey_connection"], "reuse");
        let (spec, r) = fixtures::journeys();
        assert!(json(&spec, &r)["load"]["journey_connection"].is_null());
        let (spec, r) = fixtures::rate_mode();
        assert_eq!(json(&spec, &r)["schedule"]["unit"], "request");
        assert!(json(&spec, &r)["load"]["journey_connection"].is_null());
    }

    #[test]
    fn warnings_carry_kind_and_message() {
        let (spec, r) = fixtures::rate_mode();
        let doc = json(&spec, &r);
        let kinds: Vec<&str> = doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["schedule_not_kept", "generator_saturated"]);
        assert!(doc["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("the schedule of 500 req/s was not kept"));
    }
}
