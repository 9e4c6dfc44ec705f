//! shootout's own report of one load run: compact, aligned, for humans — what was run,
//! what came back (counts, failures by class, status codes, throughput), latency (corrected
//! and raw in rate mode), ab's connection-times and percentile tables in milliseconds with
//! µs resolution, the generator's own cost, the schedule, connections, and the warnings.
//!
//! Inputs: a `LoadSpec` and a `RunResult` (µs histograms). Every time in a table is in
//! milliseconds with three decimals, so columns compare at a glance; the unit is in each
//! table's title. [`warnings`] renders the warnings block alone, for the other formats to
//! print on stderr.

use crate::units::{bytes_iec, human_duration, ms3, ratio, secs, trim_float};
use crate::Exporter;
use hdrhistogram::Histogram;
use shootout_analysis::Unit;
use shootout_model::requests::Order;
use shootout_model::{
    Counts, FailureKind, JourneyConnection, LatencySummary, LoadSpec, Pace, Protocol, RunResult,
    TargetStats,
};
use std::fmt::Write;

/// Appends one formatted line to a `String` (writing to a `String` cannot fail).
macro_rules! emit {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).expect("writing to a String cannot fail")
    };
}

/// The text rendering.
pub struct Text;

impl Exporter for Text {
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String {
        report(spec, result)
    }
}

/// Width of the label column of `Label  value` lines.
const LABEL: usize = 14;

/// ab's percentile rows, used for the "Served within" table.
const SERVED_PERCENTS: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

fn kv(o: &mut String, label: &str, value: impl std::fmt::Display) {
    emit!(o, "{label:<LABEL$}{value}");
}

/// `1 thread`, `2 threads`.
fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A table: a title cell over the row labels, right-aligned columns two blanks apart.
fn table(o: &mut String, title: &str, heads: &[&str], rows: &[(&str, Vec<String>)]) {
    let label_w = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .chain([title.chars().count()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = heads
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .map(|(_, cells)| cells[i].chars().count())
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut head = format!("{title:<label_w$}");
    for (h, w) in heads.iter().zip(&widths) {
        let _ = write!(head, "  {h:>w$}");
    }
    emit!(o, "{head}");
    for (label, cells) in rows {
        let mut row = format!("{label:<label_w$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(row, "  {c:>w$}");
        }
        emit!(o, "{}", row.trim_end());
    }
}

/// The latency columns of one histogram, in ms.
fn latency_cells(h: &Histogram<u64>) -> Vec<String> {
    let s = LatencySummary::of(h);
    [s.min, s.mean, s.stdev, s.p50, s.p90, s.p99, s.p999, s.max]
        .iter()
        .map(|ms| format!("{ms:.3}"))
        .collect()
}

/// The 95% intervals of the (corrected) latency's percentiles, in ms: `  95% intervals:
/// p50 2.990–3.085, p90 4.872–5.191, p99 6.032–6.159, p99.9 6.200–6.243`; an upper end
/// that is only the slowest answer is marked `≥`, and the mark explained after the list.
fn intervals_line(r: &RunResult) -> String {
    use shootout_analysis::certify::{percentile_intervals, PERCENTILES};
    let cis = percentile_intervals(&r.histograms.latency, &r.series);
    let open = cis.iter().flatten().any(|ci| ci.open_above);
    let parts: Vec<String> = PERCENTILES
        .iter()
        .zip(cis)
        .filter_map(|((_, name), ci)| {
            let ci = ci?;
            let name = if *name == "p999" { "p99.9" } else { name };
            Some(format!(
                "{name} {}",
                crate::ci::range_ms(ci.lo as f64 / 1e3, ci.hi as f64 / 1e3, ci.open_above)
            ))
        })
        .collect();
    let note = if open {
        format!(" ({})", crate::ci::OPEN_NOTE)
    } else {
        String::new()
    };
    format!("  95% intervals: {}{note}", parts.join(", "))
}

/// The "served within" columns of one histogram, in ms.
fn served_cells(h: &Histogram<u64>) -> Vec<String> {
    SERVED_PERCENTS
        .iter()
        .map(|p| ms3(h.value_at_quantile(f64::from(*p) / 100.0) as f64))
        .collect()
}

/// The connection-times columns (ab's min, mean, +/-sd, median, max) of one histogram, in ms.
fn phase_cells(h: &Histogram<u64>) -> Vec<String> {
    let s = LatencySummary::of(h);
    [s.min, s.mean, s.stdev, s.p50, s.max]
        .iter()
        .map(|ms| format!("{ms:.3}"))
        .collect()
}

/// `held, a ping every 5 s, opened at 100/s`: WebSocket's hold mode.
fn hold_mode(spec: &LoadSpec) -> String {
    let Some(h) = spec.ws_hold else {
        return String::new();
    };
    let rate = h.open_rate.map_or(String::new(), |r| {
        format!(", opened at {}/s", trim_float(r))
    });
    format!(
        "held, a request is a ping every {} and its pong{rate}",
        human_duration(h.every)
    )
}

/// A WebSocket close code as the report names it: `1001 (going away)`.
fn close_name(code: u16) -> String {
    let name = match code {
        1000 => "normal",
        1001 => "going away",
        1002 => "protocol error",
        1003 => "unsupported data",
        1005 => "no code",
        1007 => "invalid data",
        1008 => "policy violation",
        1009 => "message too big",
        1010 => "extension required",
        1011 => "server error",
        1012 => "service restart",
        1013 => "try again later",
        1014 => "bad gateway",
        shootout_model::OTHER_CLOSE_CODES => return "other codes".into(),
        _ => return code.to_string(),
    };
    format!("{code} ({name})")
}

/// `10 connections on 2 threads, closed loop, 1000 requests, timeout 30 s`.
pub(crate) fn load_line(spec: &LoadSpec) -> String {
    if let Some(j) = &spec.journey {
        return journey_line(spec, &j.source);
    }
    let conns = plural(spec.connections as u64, "connection", "connections");
    let keepalive = if spec.protocol == Protocol::Http2 {
        format!(
            " × {} (HTTP/2)",
            plural(spec.streams as u64, "stream", "streams")
        )
    } else if spec.protocol == Protocol::Http3 {
        format!(
            " × {} (HTTP/3)",
            plural(spec.streams as u64, "stream", "streams")
        )
    } else if spec.protocol == Protocol::WebSocket && spec.ws_hold.is_some() {
        " (WebSocket)".to_string()
    } else if spec.protocol == Protocol::WebSocket {
        // What is counted as a request: a message and its reply.
        " (WebSocket: a request is a message and its reply)".to_string()
    } else if spec.request.keepalive {
        String::new()
    } else {
        " (Connection: close)".to_string()
    };
    let threads = plural(spec.threads as u64, "thread", "threads");
    let pipeline = if spec.pipeline > 1 && spec.protocol == Protocol::WebSocket {
        format!(" × {} in flight", spec.pipeline)
    } else if spec.pipeline > 1 {
        format!(" × {} pipelined", spec.pipeline)
    } else {
        String::new()
    };
    // A gRPC run's -n and --rate count calls (a streaming call's replies are counted
    // apart, in its Streams lines).
    let paced = if spec.expect.grpc.is_some() {
        Unit::Call
    } else {
        Unit::Request
    };
    let (one, many, per_s) = (paced.word(), paced.plural(), paced.per_second());
    let mode = match spec.pace {
        Pace::Closed if spec.ws_hold.is_some() => hold_mode(spec),
        Pace::Closed => "closed loop".to_string(),
        Pace::Rate(rps) => format!("rate {} {per_s}", trim_float(rps)),
    };
    let bound = match (spec.requests, spec.duration) {
        (Some(n), None) => plural(n, one, many),
        (None, Some(d)) => format!("for {}", human_duration(d)),
        (Some(n), Some(d)) => format!(
            "{} or {}, whichever comes first",
            plural(n, one, many),
            human_duration(d)
        ),
        (None, None) => "unbounded".to_string(),
    };
    format!(
        "{conns}{pipeline}{keepalive} on {threads}, {mode}, {bound}, timeout {}",
        human_duration(spec.timeout)
    )
}

/// The open model's users and their connections, as the Load line says them.
fn open_users(spec: &LoadSpec) -> &'static str {
    match spec.journey_connection {
        JourneyConnection::Reuse => "each a new user, on an idle connection when one is free",
        JourneyConnection::New => "each a new user on its own connection",
    }
}

/// `journeys of j.toml: 10 users on 2 threads, closed loop, 1000 journeys, timeout 30 s`;
/// over HTTP/2, `journeys of j.toml over HTTP/2 (each user on a connection of its own): …`,
/// or `(4 users share each connection, a stream each)`.
fn journey_line(spec: &LoadSpec, source: &str) -> String {
    let threads = plural(spec.threads as u64, "thread", "threads");
    let users = match spec.pace {
        // `1 user for 30 s, then 10 users for 1 min on 2 threads, …`
        Pace::Closed if !spec.stages.is_empty() => format!(
            "{} on {threads}, closed loop (each runs journeys back to back)",
            spec.stages
                .iter()
                .map(|s| format!(
                    "{} for {}",
                    plural(s.users as u64, "user", "users"),
                    human_duration(s.duration)
                ))
                .collect::<Vec<_>>()
                .join(", then ")
        ),
        Pace::Closed => format!(
            "{} on {threads}, closed loop (each runs journeys back to back)",
            plural(spec.connections as u64, "user", "users")
        ),
        // `4 journeys/s for 1 s, then 10 journeys/s for 2 s on 2 threads, …`
        Pace::Rate(_) if !spec.rate_stages.is_empty() => format!(
            "{} on {threads}, {}",
            spec.rate_stages
                .iter()
                .map(|s| format!(
                    "{} journeys/s for {}",
                    trim_float(s.rate),
                    human_duration(s.duration)
                ))
                .collect::<Vec<_>>()
                .join(", then "),
            open_users(spec)
        ),
        Pace::Rate(r) => format!(
            "{} journeys/s on {threads}, {}",
            trim_float(r),
            open_users(spec)
        ),
    };
    let bound = match (spec.requests, spec.duration) {
        (Some(n), None) => plural(n, "journey", "journeys"),
        (None, Some(d)) => format!("for {}", human_duration(d)),
        (Some(n), Some(d)) => format!(
            "{} or {}, whichever comes first",
            plural(n, "journey", "journeys"),
            human_duration(d)
        ),
        (None, None) => "unbounded".to_string(),
    };
    let over = match spec.protocol {
        Protocol::Http2 if spec.streams > 1 => format!(
            " over HTTP/2 ({} users share each connection, a stream each)",
            spec.streams
        ),
        Protocol::Http2 => " over HTTP/2 (each user on a connection of its own)".to_string(),
        _ => String::new(),
    };
    format!(
        "journeys of {source}{over}: {users}, {bound}, timeout {}",
        human_duration(spec.timeout)
    )
}

/// The warning lines, with or without the interruption note.
pub(crate) fn warning_lines(r: &RunResult, with_interrupted: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if with_interrupted && r.interrupted {
        lines.push(crate::sentences::interrupted(&secs(r.duration)).to_string());
    }
    lines.extend(r.warnings.iter().map(ToString::to_string));
    lines
}

/// The "Warnings:" block (each warning on its own `  - ` line, the interruption first when
/// the run was stopped early), or an empty string when there is nothing to say. The ab and
/// wrk renderings leave warnings out to stay parseable; print this on stderr with them.
pub fn warnings(result: &RunResult) -> String {
    block(&warning_lines(result, true))
}

fn block(lines: &[String]) -> String {
    let mut o = String::new();
    if !lines.is_empty() {
        emit!(o, "Warnings:");
        for l in lines {
            emit!(o, "  - {l}");
        }
    }
    o
}

fn report(spec: &LoadSpec, r: &RunResult) -> String {
    let mut o = String::new();
    what_ran(&mut o, spec, r);
    let words = (
        crate::common::per_second(spec, r),
        crate::common::counted_unit(spec, r).label(),
    );
    outcome(&mut o, r, spec.protocol, words);
    timings(&mut o, r, matches!(spec.pace, Pace::Rate(_)));
    streams(&mut o, r);
    by_journey(&mut o, r);
    by_target(&mut o, r);
    costs(&mut o, spec, r);
    let lines = warning_lines(r, false);
    if !lines.is_empty() {
        emit!(o);
        o.push_str(&block(&lines));
    }
    o
}

/// The interruption note, target and load.
fn what_ran(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    if r.interrupted {
        // The sentence of the warnings block, its lead as the row's name.
        let said = crate::sentences::interrupted(&secs(r.duration));
        kv(o, "Interrupted", said.rest.trim_start().to_string());
        emit!(o);
    }
    let mut target = match (&spec.list, &spec.ws_messages) {
        (Some(l), _) => list_target(l.entries.len(), "request", &l.source, l.order, spec),
        (None, Some(m)) => list_target(m.lines.len(), "message", &m.source, m.order, spec),
        (None, None) => format!("{} {}", spec.request.method, spec.target.url),
    };
    if let Some(sock) = &spec.target.unix_socket {
        let _ = write!(target, " (via unix socket {})", sock.display());
    }
    kv(o, "Target", target);
    kv(o, "Load", load_line(spec));
    emit!(o);
}

/// `3 requests from urls.txt (random order) to URL`: a list's target line, of `n`
/// requests or messages (`what`).
fn list_target(n: usize, what: &str, source: &str, order: Order, spec: &LoadSpec) -> String {
    format!(
        "{} {what}{} from {source} ({}) to {}",
        n,
        if n == 1 { "" } else { "s" },
        match order {
            Order::Seq => "in order",
            Order::Random => "random order",
        },
        spec.target.url
    )
}

/// Counts, failures by class, status codes, throughput (`per_s`: its unit). Stream
/// resets and GOAWAYs are named by `protocol`'s error codes (HTTP/2's or HTTP/3's).
fn outcome(o: &mut String, r: &RunResult, protocol: Protocol, (per_s, label): (&str, &str)) {
    request_counts(o, r, label);
    let c = &r.counts;
    if !c.stream_resets.is_empty() || c.goaways > 0 {
        stream_codes(o, c, protocol);
    }
    if !c.close_codes.is_empty() || c.pings_unanswered > 0 {
        websocket(o, c);
    }
    let codes: Vec<String> = c.status.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    kv(o, "Status codes", joined_or_none(&codes));
    throughput_line(o, r, per_s);
    emit!(o);
}

/// The requests' counts (under `label`: `Requests`, or gRPC's `Calls`, …), their failures by class, shootout's own faults and the
/// responses that differed in length.
fn request_counts(o: &mut String, r: &RunResult, label: &str) {
    let c = &r.counts;
    kv(
        o,
        label,
        format!(
            "{} completed in {}: {} ok, {} failed, {} aborted (in flight at the end)",
            c.completed,
            secs(r.duration),
            c.ok,
            c.failed(),
            c.aborted
        ),
    );
    if let Some(line) = in_flight_line(r) {
        kv(o, "In flight", line);
    }
    if c.failed() > 0 {
        kv(o, "Failures", c.failures.to_string());
    }
    let faults = c.failures[FailureKind::GeneratorFault];
    if faults > 0 {
        kv(
            o,
            "Bug",
            format!(
                "{} failed by a fault of shootout's own (generator_fault), not the server's: please report it",
                plural(faults, "request", "requests")
            ),
        );
    }
    if c.length_mismatch > 0 {
        kv(
            o,
            "Length",
            format!(
                "{} differed in length from the first response (ab counts those as failed)",
                plural(c.length_mismatch, "response", "responses")
            ),
        );
    }
}

/// `15 (10 not yet sent) at the end: waited 15.007 ms median, 29.007 ms at most`: the
/// requests still in flight when the run ended (those due and not yet sent among them,
/// in rate mode) and how long they had waited, from their start as latency counts it;
/// none when none were, or where that is not known.
fn in_flight_line(r: &RunResult) -> Option<String> {
    let h = r.in_flight_at_end.as_ref().filter(|h| !h.is_empty())?;
    let unsent = match r.unsent_at_end() {
        0 => String::new(),
        n => format!(" ({n} not yet sent)"),
    };
    Some(format!(
        "{}{unsent} at the end: waited {} ms median, {} ms at most",
        h.len(),
        ms3(h.value_at_quantile(0.5) as f64),
        ms3(h.max() as f64)
    ))
}

/// The HTTP/2 or HTTP/3 line: stream resets by `protocol`'s error codes, and GOAWAYs.
fn stream_codes(o: &mut String, c: &Counts, protocol: Protocol) {
    let resets: Vec<String> = c
        .stream_resets
        .iter()
        .map(|(code, n)| match protocol {
            Protocol::Http3 => format!("{n} × {}", h3_error_name(*code)),
            _ => format!("{n} × {}", h2_error_name(*code)),
        })
        .collect();
    let (name, resets_are) = match protocol {
        Protocol::Http3 => ("HTTP/3", "stream resets received"),
        _ => ("HTTP/2", "RST_STREAM received"),
    };
    kv(
        o,
        name,
        format!(
            "{resets_are}: {}; GOAWAY received: {}",
            joined_or_none(&resets),
            c.goaways
        ),
    );
}

/// The WebSocket line: close frames by code, and the server's pings left unanswered.
fn websocket(o: &mut String, c: &Counts) {
    let closes: Vec<String> = c
        .close_codes
        .iter()
        .map(|(code, n)| format!("{n} × {}", close_name(*code)))
        .collect();
    let mut line = format!("close frames received: {}", joined_or_none(&closes));
    if c.pings_unanswered > 0 {
        let _ = write!(
            line,
            "; {} from the server unanswered (it pinged faster than it read our pongs: only the latest is answered)",
            plural(c.pings_unanswered, "ping", "pings")
        );
    }
    kv(o, "WebSocket", line);
}

/// The throughput (`per_s`: its unit), or for a run of one request its time.
fn throughput_line(o: &mut String, r: &RunResult, per_s: &str) {
    let c = &r.counts;
    if c.completed == 1 && !r.histograms.latency.is_empty() {
        // One request has a time, not a rate: a "req/s" of one request is its time upside
        // down, and reads as the server's throughput.
        let l = shootout_model::LatencySummary::of(&r.histograms.latency);
        kv(
            o,
            "Request time",
            format!(
                "{:.3} ms for the one request, {} received (a rate needs more: -n 1000, or -d 10s)",
                l.max,
                bytes_iec(c.bytes_received as f64)
            ),
        );
    } else {
        let run_s = r.duration.as_secs_f64();
        kv(
            o,
            "Throughput",
            format!(
                "{}, {}/s received",
                crate::common::throughput(r, per_s),
                bytes_iec(ratio(c.bytes_received as f64, run_s))
            ),
        );
    }
}

/// The items joined by commas, or `none`.
fn joined_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// An HTTP/2 error code by its RFC 9113 §7 name (`INTERNAL_ERROR (2)`), or its number.
fn h2_error_name(code: u32) -> String {
    match shootout_model::h2_error_name(code) {
        Some(name) => format!("{name} ({code})"),
        None if code == shootout_model::OTHER_RESET_CODES => "other codes".to_string(),
        None => format!("code {code}"),
    }
}

/// An HTTP/3 error code by its RFC 9114 §8.1 or RFC 9204 §6 name
/// (`H3_REQUEST_CANCELLED (0x10c)`), or its number.
fn h3_error_name(code: u32) -> String {
    match shootout_model::h3_error_name(code) {
        Some(name) => format!("{name} ({code:#x})"),
        None if code == shootout_model::OTHER_RESET_CODES => "other codes".to_string(),
        None => format!("code {code:#x}"),
    }
}

/// Latency, ab's connection times and percentiles (all in ms), or a note that nothing was
/// answered. In rate mode latency and percentiles have a corrected and a raw row.
fn timings(o: &mut String, r: &RunResult, rate_mode: bool) {
    if r.histograms.latency.is_empty() {
        kv(o, "Latency", "no answers: nothing to time");
        emit!(o);
    } else {
        let heads = ["min", "mean", "stdev", "p50", "p90", "p99", "p99.9", "max"];
        if rate_mode {
            table(
                o,
                "Latency (ms)",
                &heads,
                &[
                    ("  corrected", latency_cells(&r.histograms.latency)),
                    ("  raw", latency_cells(&r.histograms.latency_raw)),
                ],
            );
            // Coordinated omission: a request sent late still waited from its due time.
            emit!(
                o,
                "  corrected: from each request's due time; raw: from its actual send (the gap is time queued before sending)"
            );
        } else {
            table(
                o,
                "Latency (ms)",
                &heads,
                &[("", latency_cells(&r.histograms.latency))],
            );
        }
        emit!(o, "{}", intervals_line(r));
        emit!(o);
        // ab's table: Total is the latency above (corrected in rate mode) and Processing is
        // Total minus Connect, as the engine records them.
        table(
            o,
            "Connection times (ms)",
            &["min", "mean", "+/-sd", "median", "max"],
            &[
                ("  Connect", phase_cells(&r.histograms.connect)),
                ("  Processing", phase_cells(&r.histograms.processing)),
                ("  Waiting", phase_cells(&r.histograms.waiting)),
                ("  Total", phase_cells(&r.histograms.latency)),
            ],
        );
        if let Some(line) = crate::common::setup_line(r) {
            emit!(o, "  {line}");
        }
        emit!(o);
        let heads = SERVED_PERCENTS.map(|p| format!("{p}%"));
        let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
        let rows = if rate_mode {
            vec![
                ("  corrected", served_cells(&r.histograms.latency)),
                ("  raw", served_cells(&r.histograms.latency_raw)),
            ]
        } else {
            vec![("", served_cells(&r.histograms.latency))]
        };
        table(o, "Served within (ms)", &heads, &rows);
        emit!(o);
    }
}

/// A streaming gRPC run: its calls, its replies (bidi: its messages, and how their replies
/// matched), and (server and bidi streaming) the `Replies (ms)` table of each call's
/// first reply and of the gaps between replies.
fn streams(o: &mut String, r: &RunResult) {
    let Some(st) = r.stream.as_deref() else {
        return;
    };
    let rate = st.replies as f64 / r.duration.as_secs_f64().max(1e-9);
    let line = match st.shape {
        "client" => format!(
            "client streaming: {} of {} messages ended well; each call is a unit of the counts above",
            plural(st.calls_ok, "call", "calls"),
            st.messages_per_call
        ),
        "bidi" => format!(
            "bidi streaming: {} ended well; {} sent, {} matched in order ({rate:.2}/s), {} with no message outstanding, {} unanswered; each message and its reply is a unit of the counts above, its latency from the message's due time",
            plural(st.calls_ok, "call", "calls"),
            plural(st.sent, "message", "messages"),
            plural(st.replies, "reply", "replies"),
            plural(st.unmatched, "reply", "replies"),
            plural(st.unanswered, "message", "messages"),
        ),
        _ => format!(
            "server streaming: {} ended well ({} cancelled at the client's limit), {} ({rate:.2} replies/s); each reply is a unit of the counts above, its latency from the call's start (the first) or the reply before",
            plural(st.calls_ok, "call", "calls"),
            st.cancelled,
            plural(st.replies, "reply", "replies"),
        ),
    };
    kv(o, "Streams", line);
    if st.shape != "client" && !st.first_reply.is_empty() {
        let heads = ["min", "mean", "stdev", "p50", "p90", "p99", "p99.9", "max"];
        let mut rows = vec![("  first reply", latency_cells(&st.first_reply))];
        if !st.gaps.is_empty() {
            rows.push(("  between replies", latency_cells(&st.gaps)));
        }
        table(o, "Replies (ms)", &heads, &rows);
    }
    emit!(o);
}

/// Per entry of a request list (or step of a journey): counts and latency (ms), when the
/// run kept them.
fn by_target(o: &mut String, r: &RunResult) {
    let title = if r.journeys.is_empty() {
        "Requests by target"
    } else {
        "Requests by step"
    };
    counted_table(o, title, "completed", &r.targets);
}

/// Per journey: how many ended, ok (every step), and how long they took, think times
/// included (ms); then how long they were busy, think times left out, when measured.
fn by_journey(o: &mut String, r: &RunResult) {
    counted_table(
        o,
        "Journeys (ms: first step due to last answer)",
        "ended",
        &r.journeys,
    );
    busy_table(o, &r.journeys);
}

/// Per journey, its durations less the think times between its steps (ms); nothing when
/// a journey lacks them (a result saved before they were measured).
fn busy_table(o: &mut String, journeys: &[TargetStats]) {
    let busy: Option<Vec<&Histogram<u64>>> = journeys.iter().map(|j| j.busy.as_ref()).collect();
    let Some(busy) = busy.filter(|b| !b.is_empty()) else {
        return;
    };
    let labels: Vec<String> = journeys.iter().map(|t| format!("  {}", t.label)).collect();
    let rows: Vec<(&str, Vec<String>)> = busy
        .iter()
        .zip(&labels)
        .map(|(h, label)| {
            let l = LatencySummary::of(h);
            let cells = [l.mean, l.p50, l.p99, l.max]
                .iter()
                .map(|ms| format!("{ms:.3}"))
                .collect();
            (label.as_str(), cells)
        })
        .collect();
    table(
        o,
        "Journeys less think time (ms)",
        &["mean ms", "p50 ms", "p99 ms", "max ms"],
        &rows,
    );
    emit!(o);
}

/// One row per labelled count (a request list's entry, a journey's step, a journey):
/// `count` (its first column's name), ok, failed, and latency (ms); nothing when empty.
fn counted_table(o: &mut String, title: &str, count: &str, kinds: &[TargetStats]) {
    if kinds.is_empty() {
        return;
    }
    let labels: Vec<String> = kinds.iter().map(|t| format!("  {}", t.label)).collect();
    let rows: Vec<(&str, Vec<String>)> = kinds
        .iter()
        .zip(&labels)
        .map(|(t, label)| {
            let l = LatencySummary::of(&t.latency);
            let mut cells = vec![
                t.completed.to_string(),
                t.ok.to_string(),
                t.failed().to_string(),
                crate::kinds::why(t.failed(), &t.failures, t.unsent),
            ];
            cells.extend(
                [l.mean, l.p50, l.p99, l.max]
                    .iter()
                    .map(|ms| format!("{ms:.3}")),
            );
            (label.as_str(), cells)
        })
        .collect();
    table(
        o,
        title,
        &[
            count, "ok", "failed", "why", "mean ms", "p50 ms", "p99 ms", "max ms",
        ],
        &rows,
    );
    emit!(o);
}

/// Connections, the schedule's keeping and the generator's own cost.
fn costs(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    let c = &r.counts;
    let mut conns = format!(
        "{} opened, {} failed",
        c.connections_opened, c.connections_failed
    );
    if c.connections_opening > 0 {
        let _ = write!(
            conns,
            ", {} still opening at the end (never connected or upgraded)",
            c.connections_opening
        );
    }
    if c.reconnects > 0 {
        let _ = write!(
            conns,
            ", {} reopened after the server closed them between requests",
            c.reconnects
        );
    }
    if let Some(n) = r.schedule.map(|s| s.overtaken).filter(|&n| n > 0) {
        let _ = write!(
            conns,
            "; {n} requests answered after requests sent later (see the warnings)"
        );
    }
    kv(o, "Connections", conns);
    schedule(o, spec, r);
    generator(o, r, spec.busy_poll, crate::common::counted(spec, r));
}

/// The open loop's schedule (and the certificate of it), `--until`'s and the automatic
/// warm-up's lines. A gRPC run's schedule paces calls: when its counts count something
/// else (a stream's replies or messages), the line says so; a journey run's starts
/// journeys, whose steps the counts count.
fn schedule(o: &mut String, spec: &LoadSpec, r: &RunResult) {
    if let Some(s) = &r.schedule {
        let (per_s, what, sent) = match crate::common::paced(spec) {
            "journey" => ("journeys/s", " journeys", "started"),
            "call" => ("calls/s", " calls", "sent"),
            _ => ("req/s", "", "sent"),
        };
        let counted = match (crate::common::paced(spec), crate::common::unit(spec, r)) {
            ("journey", _) => " (the counts above count their steps' requests)",
            (_, "reply") => " (the schedule paces calls; the counts above count replies)",
            (_, "message") => " (the schedule paces calls; the counts above count messages)",
            _ => "",
        };
        kv(
            o,
            "Schedule",
            format!(
                "target {} {per_s}, {sent} {:.2} {per_s}{counted}; {} of {}{what} due {sent}, {} late (> 1 ms; {} waiting for a free connection), max lag {} ms",
                trim_float(s.target_rps),
                s.achieved_rps,
                s.sent,
                s.due,
                s.late,
                s.late_no_connection,
                ms3(s.max_lag.as_secs_f64() * 1e6)
            ),
        );
        kv(o, "Send lag", send_lag(s));
        if let Some(c) = shootout_analysis::load_warnings::certificate(r) {
            kv(o, "Kept", kept_line(&c));
        }
        if let Some(line) = arrivals_line(&s.arrival) {
            kv(o, "Arrivals", line);
        }
    }
    if let Some(u) = &r.until {
        kv(o, "Until", until_line(u, r.duration));
    }
    if let Some(w) = &r.warm_up {
        let took = w.took.as_secs_f64();
        let line = if w.level {
            format!("auto, level after {took:.1} s (p99 and answers a second without a trend over their last 10 s)")
        } else {
            format!("auto, not level after {took:.1} s: measured anyway")
        };
        kv(o, "Warm-up", line);
    }
}

/// What the generator cost: its CPU, per request (per `one`: a gRPC run's call, reply or
/// message), and its busiest thread.
fn generator(o: &mut String, r: &RunResult, busy_poll: std::time::Duration, one: &str) {
    let g = &r.generator;
    let per_request = if r.counts.completed > 0 {
        format!("{:.2} µs per {one}", r.cpu_us_per_request())
    } else {
        format!("no {one} to share it")
    };
    let polling = if busy_poll.is_zero() {
        String::new()
    } else {
        format!(
            "; busy polling up to {} µs before each sleep",
            busy_poll.as_micros()
        )
    };
    kv(
        o,
        "Generator",
        format!(
            "{:.3} s CPU ({:.3} user + {:.3} sys), {per_request}, busiest thread {:.0}% busy{polling}",
            g.cpu().as_secs_f64(),
            g.cpu_user.as_secs_f64(),
            g.cpu_sys.as_secs_f64(),
            g.busiest_thread * 100.0
        ),
    );
}

/// `--until`'s outcome in one line: `converged after 7.2 s: p99 0.444 ms (95% 0.431–0.460,
/// ±2.9% ≤ 5%)`, or `did not converge in 30 s: …` with each condition's last reading.
fn until_line(u: &shootout_model::until::UntilOutcome, ran: std::time::Duration) -> String {
    use shootout_model::until::Figure;
    let head = match u.converged {
        Some(at) => format!("converged after {:.1} s", at.as_secs_f64()),
        None => format!("did not converge in {:.1} s", ran.as_secs_f64()),
    };
    let readings: Vec<String> = u
        .conditions
        .iter()
        .zip(&u.last)
        .map(|(c, r)| {
            let asked = trim_float(c.within * 100.0);
            let Some(r) = r else {
                return format!("{}: nothing to read (±{asked}% asked)", c.name());
            };
            let (value, lo, hi) = match c.figure {
                // Readings are in ms; `ms3` takes µs.
                Figure::Percentile(_) => (
                    format!("{} ms", ms3(r.value * 1e3)),
                    ms3(r.lo * 1e3),
                    if r.open_above {
                        format!("≥{}", ms3(r.hi * 1e3))
                    } else {
                        ms3(r.hi * 1e3)
                    },
                ),
                Figure::Rps => (
                    format!("{:.1} req/s", r.value),
                    format!("{:.1}", r.lo),
                    format!("{:.1}", r.hi),
                ),
            };
            let held = if r.holds(c) { "≤" } else { ">" };
            let width = if r.width().is_finite() && !r.open_above {
                format!("±{:.1}%", r.width() * 100.0)
            } else {
                "open".to_string()
            };
            format!(
                "{} {value} (95% {lo}–{hi}, {width} {held} {asked}%)",
                c.name()
            )
        })
        .collect();
    format!("{head}: {}", readings.join(", "))
}

/// The schedule's certificate in one line: `yes: 99.95% of sends within 1 ms of their due
/// time, 100.0% of the rate sent` or `no, the generator fell behind: …`.
fn kept_line(c: &shootout_analysis::load_warnings::Certificate) -> String {
    use shootout_analysis::load_warnings::NotKept;
    let verdict = match c.reason {
        None => "yes",
        Some(NotKept::Generator) => "no, the generator fell behind",
        Some(NotKept::Starved) => "no, the generator's threads waited for a CPU others held",
        Some(NotKept::ConnectionCap) => "no, the connection cap held sends back",
        Some(NotKept::Server) => "no, the server was slow to take connections",
    };
    format!(
        "{verdict}: {:.2}% of sends within 1 ms of their due time, {:.1}% of the rate sent",
        c.on_time * 100.0,
        c.achieved_share * 100.0
    )
}

/// Poisson arrivals and the test of the gaps sent: `Poisson; the 1024 gaps sent fit the
/// exponential (Anderson–Darling A² 0.82, p 0.47)`; none for even arrivals.
fn arrivals_line(a: &shootout_model::ArrivalCheck) -> Option<String> {
    if a.process == shootout_model::Arrival::Even {
        return None;
    }
    Some(match a.fit {
        None => "Poisson; too few sends to test their gaps".to_string(),
        Some(f) => format!(
            "Poisson; the {} gaps sent {} the exponential (Anderson–Darling A² {:.2}, p {:.2})",
            f.n,
            if f.fits() { "fit" } else { "do not fit" },
            f.statistic,
            f.p
        ),
    })
}

/// How late the sends went out and the connections the schedule used: `p50 0.004 ms,
/// p99 0.090 ms, p99.9 0.350 ms; 12 connections (cap 4096, not reached); 0.120 s spent
/// waiting for due times`.
fn send_lag(s: &shootout_model::ScheduleStats) -> String {
    let cap = if s.capped { "reached" } else { "not reached" };
    format!(
        "p50 {} ms, p99 {} ms, p99.9 {} ms; {} (cap {}, {cap}); {:.3} s spent waiting for due times",
        ms3(s.lag_p50_us as f64),
        ms3(s.lag_p99_us as f64),
        ms3(s.lag_p999_us as f64),
        plural(s.connections, "connection", "connections"),
        s.max_connections,
        s.spun.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    /// `--until`'s line says whether the load converged and each condition's last reading,
    /// held or not; a condition with nothing read says so.
    #[test]
    fn the_until_line_says_when_it_converged_and_what_it_read() {
        let (_, r) = fixtures::converged();
        let u = r.until.clone().unwrap();
        let line = until_line(&u, r.duration);
        assert_eq!(
            line,
            "converged after 6.4 s: p99 2.500 ms (95% 2.450–2.600, ±4.0% ≤ 5%), \
             rps 1000.0 req/s (95% 990.0–1010.0, ±1.0% ≤ 2%), p50: nothing to read (±1% asked)"
        );
        let mut open = u.clone();
        open.converged = None;
        open.last[0].as_mut().unwrap().open_above = true;
        let line = until_line(&open, std::time::Duration::from_secs(30));
        assert!(
            line.starts_with(
                "did not converge in 30.0 s: p99 2.500 ms (95% 2.450–≥2.600, open > 5%)"
            ),
            "{line}"
        );
    }

    #[test]
    fn load_line_names_mode_and_bound() {
        let (spec, _) = fixtures::closed_with_failures();
        assert_eq!(
            load_line(&spec),
            "10 connections on 2 threads, closed loop, 1000 requests, timeout 1 s"
        );
        let (mut spec, _) = fixtures::rate_mode();
        assert_eq!(
            load_line(&spec),
            "4 connections (Connection: close) on 1 thread, rate 500 req/s, for 2 s, timeout 5 s"
        );
        spec.requests = Some(1);
        assert!(load_line(&spec).contains("1 request or 2 s, whichever comes first"));
        // A gRPC run counts calls: -n and --rate are calls, whatever a call streams.
        spec.expect.grpc = Some(shootout_model::GrpcReply {
            schema: std::sync::Arc::from(&[][..]),
            method: "helloworld.Greeter.SayHello".into(),
            max_message: 1 << 20,
            json: None,
            stream: Default::default(),
            compress: false,
        });
        spec.requests = Some(50);
        let line = load_line(&spec);
        assert!(
            line.contains("rate 500 calls/s, 50 calls or 2 s, whichever comes first"),
            "{line}"
        );
    }

    /// A journey run over HTTP/2 says how its users hold connections: each its own, or
    /// `--streams` of them sharing each.
    #[test]
    fn a_journey_load_line_says_whether_users_share_http2_connections() {
        let (mut spec, _) = fixtures::journeys();
        assert!(load_line(&spec).starts_with("journeys of j.toml: 8 users on 2 threads"));
        spec.protocol = Protocol::Http2;
        assert!(load_line(&spec).starts_with(
            "journeys of j.toml over HTTP/2 (each user on a connection of its own): 8 users"
        ));
        spec.streams = 4;
        let line = load_line(&spec);
        assert!(
            line.starts_with("journeys of j.toml over HTTP/2 (4 users share each connection, a stream each): 8 users"),
            "{line}"
        );
    }

    /// A journey run's schedule line speaks of journeys started, not requests sent.
    #[test]
    fn a_journey_run_s_schedule_line_counts_journeys() {
        let (spec, r) = fixtures::journeys_rate();
        let out = report(&spec, &r);
        assert!(
            out.contains("Schedule      target 500 journeys/s, started 500.00 journeys/s (the counts above count their steps' requests); 400 of 400 journeys due started, 3 late"),
            "{out}"
        );
        assert!(!out.contains("req/s, sent"), "{out}");
    }

    /// A journey run in stages of rates names each stage's rate and time.
    #[test]
    fn a_journey_load_line_names_its_stages_of_rates() {
        let (mut spec, _) = fixtures::journeys_rate();
        spec.requests = None;
        spec.duration = Some(std::time::Duration::from_secs(3));
        spec.rate_stages = shootout_model::parse_rate_stages("4/s:1s,10/s:2s").unwrap();
        let line = load_line(&spec);
        assert!(
            line.starts_with("journeys of j.toml: 4 journeys/s for 1 s, then 10 journeys/s for 2 s on 2 threads, each a new user on its own connection, for 3 s"),
            "{line}"
        );
        spec.journey_connection = shootout_model::JourneyConnection::Reuse;
        let line = load_line(&spec);
        assert!(
            line.contains("10 journeys/s for 2 s on 2 threads, each a new user, on an idle connection when one is free, for 3 s"),
            "{line}"
        );
    }

    /// An HTTP/3 run says so in its load line, and its stream resets go by HTTP/3's
    /// names under HTTP/3; an HTTP/2 run's keep RST_STREAM and HTTP/2's names.
    #[test]
    fn stream_resets_are_named_by_the_protocol_that_sent_them() {
        let (mut spec, mut r) = fixtures::closed_with_failures();
        r.counts.stream_resets.insert(0x10c, 3);
        r.counts.goaways = 1;
        spec.protocol = Protocol::Http3;
        spec.streams = 4;
        assert!(load_line(&spec).starts_with("10 connections × 4 streams (HTTP/3)"));
        let out = report(&spec, &r);
        assert!(
            out.contains("HTTP/3        stream resets received: 3 × H3_REQUEST_CANCELLED (0x10c); GOAWAY received: 1\n"),
            "{out}"
        );
        spec.protocol = Protocol::Http2;
        r.counts.stream_resets.clear();
        r.counts.stream_resets.insert(8, 3);
        let out = report(&spec, &r);
        assert!(
            out.contains("HTTP/2        RST_STREAM received: 3 × CANCEL (8); GOAWAY received: 1\n"),
            "{out}"
        );
    }

    #[test]
    fn failure_breakdown_only_when_there_are_failures() {
        let (spec, r) = fixtures::closed_with_failures();
        let out = report(&spec, &r);
        assert!(
            out.contains(
                "Failures      2 connect, 3 timeout, 4 reset, 1 malformed, 10 status, 2 body\n"
            ),
            "{out}"
        );
        let (spec, r) = fixtures::interrupted();
        let out = report(&spec, &r);
        assert!(!out.contains("Failures"), "{out}");
        assert!(
            out.starts_with("Interrupted   (Ctrl-C or SIGTERM) after 3.200 s"),
            "{out}"
        );
    }

    /// Shootout's own faults, pings left unanswered and connections still opening at
    /// the end each get their words; none shows when there is none.
    #[test]
    fn generator_faults_unanswered_pings_and_opening_connections_are_said() {
        let (spec, mut r) = fixtures::closed_with_failures();
        let plain = report(&spec, &r);
        for absent in ["Bug", "unanswered", "still opening"] {
            assert!(!plain.contains(absent), "{plain}");
        }
        r.counts.failures[FailureKind::GeneratorFault] = 2;
        r.counts.completed += 2;
        r.counts.pings_unanswered = 5;
        r.counts.connections_opening = 3;
        let out = report(&spec, &r);
        for said in [
            "2 generator_fault",
            "Bug           2 requests failed by a fault of shootout's own (generator_fault), not the server's: please report it",
            "close frames received: none; 5 pings from the server unanswered",
            "12 opened, 2 failed, 3 still opening at the end (never connected or upgraded)",
        ] {
            assert!(out.contains(said), "{said}\n{out}");
        }
    }

    #[test]
    fn warnings_block_mentions_the_interruption_for_other_formats() {
        let (_, r) = fixtures::interrupted();
        assert_eq!(
            warnings(&r),
            "Warnings:\n  - interrupted (Ctrl-C or SIGTERM) after 3.200 s: the numbers cover only the part that ran\n"
        );
        let (_, mut r) = fixtures::rate_mode();
        r.warnings.clear();
        assert_eq!(warnings(&r), "");
    }

    /// The Generator line says when the workers busy-polled before sleeping.
    #[test]
    fn the_generator_line_says_when_it_busy_polled() {
        let (mut spec, r) = fixtures::rate_mode();
        let generator = |spec: &LoadSpec| {
            report(spec, &r)
                .lines()
                .find(|l| l.starts_with("Generator"))
                .unwrap()
                .to_string()
        };
        assert!(!generator(&spec).contains("busy polling"));
        spec.busy_poll = std::time::Duration::from_micros(50);
        assert!(
            generator(&spec).ends_with("; busy polling up to 50 µs before each sleep"),
            "{}",
            generator(&spec)
        );
    }

    #[test]
    fn the_connections_line_says_when_requests_were_overtaken() {
        let (spec, mut r) = fixtures::rate_mode();
        let connections = |r: &RunResult| {
            report(&spec, r)
                .lines()
                .find(|l| l.starts_with("Connections"))
                .unwrap()
                .to_string()
        };
        assert!(!connections(&r).contains("sent later"));
        r.schedule.as_mut().unwrap().overtaken = 7;
        r.warnings = shootout_analysis::load_warnings::derive(&r, None);
        let text = report(&spec, &r);
        assert!(
            text.contains("7 requests took over 10 ms and were answered after requests sent later on other connections: a server that serves one connection at a time per worker"),
            "{text}"
        );
        assert!(
            connections(&r).contains("; 7 requests answered after requests sent later"),
            "{}",
            connections(&r)
        );
    }

    #[test]
    fn tables_align_right() {
        let mut o = String::new();
        table(
            &mut o,
            "T",
            &["a", "bbb"],
            &[
                ("  x", vec!["1.000".into(), "2".into()]),
                ("  long", vec!["10.5".into(), "300".into()]),
            ],
        );
        assert_eq!(
            o,
            "T           a  bbb\n  x     1.000    2\n  long   10.5  300\n"
        );
    }
}
