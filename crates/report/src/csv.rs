//! The CSV rendering of one load run (`--format csv`), for spreadsheets and scripts: a
//! header, a `run` record for the whole run, then one record per request list entry
//! (`target`), per journey step (`step`, named `journey › step`) and per journey
//! (`journey`: journeys that ended, their duration from the first step's due time to the
//! last answer, think times included), and per journey again (`journey_busy`: the same
//! counts, the durations less the think times between steps; absent from results that
//! did not measure them). RFC 4180, as `shootout report --format csv`:
//! CRLF line ends, fields quoted only when they must be; names a spreadsheet would run as
//! a formula start with `'`.
//!
//! Failures are counted by class for the run and for each record: a `journey` record's
//! failed journeys are each under their first failed step's class. `unsent` is a journey
//! step's sends (a journey's first failed steps) that failed before a request went out (a
//! value it needs unset, or unsafe in a header); empty in the `run` record, whose counts
//! are requests. The last column, `unit`, says what a record counts: the `run` record
//! `request`, `message` (WebSocket, gRPC bidirectional streaming), `ping`, `call` or
//! `reply` (gRPC), a `target` or `step` record `request`, a journey's `journey`.
//! Latencies are in ms with three decimals (µs resolution), from HDR histograms.

use crate::grid::csv_record;
use crate::kinds::{rows, Kind};
use crate::safe::csv_text;
use crate::Exporter;
use shootout_model::{FailureKind, LatencySummary, LoadSpec, RunResult};

/// The CSV rendering.
pub struct Csv;

impl Exporter for Csv {
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String {
        csv(spec, result)
    }
}

/// The columns before the failure classes.
const HEAD: [&str; 5] = ["kind", "name", "count", "ok", "failed"];

/// The columns after the failure classes.
const TAIL: [&str; 12] = [
    "unsent", "per_s", "ok_per_s", "min_ms", "mean_ms", "sd_ms", "p50_ms", "p90_ms", "p99_ms",
    "p999_ms", "max_ms", "unit",
];

/// The header: [`HEAD`], a `fail_NAME` column per failure class, [`TAIL`] (from `unsent`).
pub fn columns() -> Vec<String> {
    around_failures(&HEAD, &TAIL)
}

/// `head`, a `fail_NAME` column per failure class, `tail`: a header of CSV.
pub(crate) fn around_failures(head: &[&str], tail: &[&str]) -> Vec<String> {
    head.iter()
        .map(|c| c.to_string())
        .chain(
            FailureKind::ALL
                .iter()
                .map(|k| format!("fail_{}", k.name())),
        )
        .chain(tail.iter().map(|c| c.to_string()))
        .collect()
}

fn numbers(per_s: f64, ok_per_s: f64, l: LatencySummary) -> impl Iterator<Item = String> {
    [per_s, ok_per_s]
        .into_iter()
        .map(|v| format!("{v:.3}"))
        .chain(
            [l.min, l.mean, l.stdev, l.p50, l.p90, l.p99, l.p999, l.max]
                .into_iter()
                .map(|ms| format!("{ms:.3}")),
        )
}

/// What a record of `kind` counts: a request list entry's and a journey step's records
/// count requests, a journey's (and its busy time's) journeys.
fn row_unit(kind: Kind) -> &'static str {
    match kind {
        Kind::Journey | Kind::Busy => "journey",
        Kind::Target | Kind::Step => "request",
    }
}

fn csv(spec: &LoadSpec, r: &RunResult) -> String {
    let mut out = String::new();
    csv_record(&mut out, &columns());
    let c = &r.counts;
    let name = match &spec.journey {
        Some(j) => j.source.clone(),
        None => spec.target.url.clone(),
    };
    let mut run = vec![
        "run".to_string(),
        csv_text(&name).into_owned(),
        c.completed.to_string(),
        c.ok.to_string(),
        c.failed().to_string(),
    ];
    run.extend(FailureKind::ALL.iter().map(|k| c.failures[*k].to_string()));
    run.push(String::new());
    run.extend(numbers(
        r.rps(),
        r.ok_rps(),
        LatencySummary::of(&r.histograms.latency),
    ));
    run.push(crate::common::unit(spec, r).to_string());
    csv_record(&mut out, &run);
    for (kind, stats) in Kind::of(r) {
        for row in rows(r, kind, stats) {
            let mut fields = vec![
                kind.word().to_string(),
                csv_text(row.label).into_owned(),
                row.count.to_string(),
                row.ok.to_string(),
                row.failed.to_string(),
            ];
            fields.extend(row.failures.iter().map(|(_, n)| n.to_string()));
            fields.push(row.unsent.to_string());
            let ok_per_s = shootout_model::per_second(row.ok, r.duration);
            fields.extend(numbers(row.rate, ok_per_s, row.latency));
            fields.push(row_unit(kind).to_string());
            csv_record(&mut out, &fields);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    /// Every record has as many fields as the header (no field of the fixtures needs
    /// quoting but the labels with `›`, which need none either).
    #[test]
    fn every_record_has_the_header_s_fields() {
        for (name, spec, r) in fixtures::all() {
            let out = csv(&spec, &r);
            let n = columns().len();
            for line in out.split_terminator("\r\n") {
                assert_eq!(line.split(',').count(), n, "{name}: {line}");
            }
        }
    }

    /// A journey run: its steps and journeys, with their exact counts and the run's
    /// failures by class.
    #[test]
    fn a_journey_run_has_a_record_per_step_and_per_journey() {
        let (spec, r) = fixtures::journeys();
        let out = csv(&spec, &r);
        let lines: Vec<&str> = out.split_terminator("\r\n").collect();
        let heads: Vec<String> = lines
            .iter()
            .map(|l| l.split(',').take(5).collect::<Vec<_>>().join(","))
            .collect();
        assert_eq!(
            heads,
            [
                "kind,name,count,ok,failed",
                "run,j.toml,800,796,4",
                "step,reader › home,300,300,0",
                "step,reader › read,300,300,0",
                "step,writer › login,100,100,0",
                "step,writer › post,100,96,4",
                "journey,reader,300,300,0",
                "journey,writer,100,96,4",
                "journey_busy,reader,300,300,0",
                "journey_busy,writer,100,96,4",
            ]
        );
        let field = |line: usize, column: &str| {
            let at = columns().iter().position(|c| c == column).unwrap();
            lines[line].split(',').nth(at).unwrap().to_string()
        };
        // What each record counts.
        let units: Vec<String> = (1..lines.len()).map(|l| field(l, "unit")).collect();
        let mut want = vec!["request"; 5];
        want.extend(["journey"; 4]);
        assert_eq!(units, want);
        // The run's failures by class, and each step's and journey's own.
        assert_eq!(field(1, "fail_status"), "4");
        assert_eq!(field(5, "fail_status"), "4");
        assert_eq!(field(4, "fail_status"), "0");
        assert_eq!(field(7, "fail_status"), "4");
        // A journey's busy time is its duration less its 5 ms of think time.
        let ms = |line, column| field(line, column).parse::<f64>().unwrap();
        for (journey, busy) in [(6, 8), (7, 9)] {
            let (d, b) = (ms(journey, "max_ms"), ms(busy, "max_ms"));
            assert!((d - b - 5.0).abs() <= 0.01 * d, "{d} ms vs {b} ms");
        }
        assert_eq!(
            (field(1, "unsent"), field(5, "unsent")),
            ("".into(), "0".into())
        );
    }
}
