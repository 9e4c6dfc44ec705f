//! The Prometheus text exposition format (version 0.0.4) of what a load has done so far:
//! a pure function from [`Totals`] per series to the page `/metrics` serves, so the names,
//! units, label escaping and the histogram's cumulative buckets are tested without a
//! socket. Names follow Prometheus' conventions: a `shootout_` prefix, base units
//! (seconds), `_total` on counters, and the client libraries' `process_cpu_seconds_total`
//! for the generator's own CPU time.

use hdrhistogram::Histogram;
use shootout_model::{FailureCounts, FailureKind};
use std::fmt::Write;

/// The latency histogram's bucket bounds: the text Prometheus is given for `le`, and the
/// bound in microseconds (the engine's unit). From 100 µs to 10 s: a web server's answers
/// on loopback start well below Prometheus' default first bucket of 5 ms.
pub(crate) const BUCKETS: [(&str, u64); 16] = [
    ("0.0001", 100),
    ("0.00025", 250),
    ("0.0005", 500),
    ("0.001", 1_000),
    ("0.0025", 2_500),
    ("0.005", 5_000),
    ("0.01", 10_000),
    ("0.025", 25_000),
    ("0.05", 50_000),
    ("0.1", 100_000),
    ("0.25", 250_000),
    ("0.5", 500_000),
    ("1", 1_000_000),
    ("2.5", 2_500_000),
    ("5", 5_000_000),
    ("10", 10_000_000),
];

/// A series' labels: `(name, value)` pairs, in the order they are written (none for
/// `shootout load`; contender, workload and level for a step of `shootout run`).
pub(crate) type Labels = Vec<(&'static str, String)>;

/// What one series counted so far.
#[derive(Debug, Clone)]
pub(crate) struct Totals {
    /// Requests whose answer met every expectation.
    pub ok: u64,
    /// Requests that failed, of any class.
    pub failed: u64,
    /// Failed requests by class.
    pub failures: FailureCounts,
    /// Latency of the answered requests (µs), as the run counts it.
    pub latency: Histogram<u64>,
    /// Rate mode: requests due, sent and sent late by the schedule, of the steps that
    /// ended (the engine publishes its schedule only with the result).
    pub schedule: Option<[u64; 3]>,
    /// True while this series' step runs.
    pub active: bool,
    /// A journey run's steps (`JOURNEY › STEP`), in the run's order: ok, failed, latency.
    pub steps: Vec<Named>,
    /// A journey run's journeys: ended ok, ended failed (latency left empty).
    pub journeys: Vec<Named>,
}

/// What one journey step, or one journey, counted so far.
#[derive(Debug, Clone)]
pub(crate) struct Named {
    pub name: String,
    pub ok: u64,
    pub failed: u64,
    /// Latency of the step's answered requests (µs), as the series' latency.
    pub latency: Histogram<u64>,
}

/// One series of the page: its labels and its totals.
pub(crate) struct Series<'a> {
    pub labels: &'a Labels,
    pub totals: &'a Totals,
}

/// The page for `series`, with `cpu_seconds` as the process's CPU time.
pub(crate) fn render(series: &[Series], cpu_seconds: f64) -> String {
    let mut out = String::new();
    head(
        &mut out,
        "shootout_requests_total",
        "counter",
        "Requests that ended, by outcome (ok: the answer met every expectation).",
    );
    for s in series {
        for (outcome, n) in [("ok", s.totals.ok), ("failed", s.totals.failed)] {
            sample(
                &mut out,
                "shootout_requests_total",
                s.labels,
                Some(("outcome", outcome)),
                n,
            );
        }
    }
    head(
        &mut out,
        "shootout_request_failures_total",
        "counter",
        "Failed requests by class.",
    );
    for s in series {
        for k in FailureKind::ALL {
            let n = s.totals.failures[k];
            sample(
                &mut out,
                "shootout_request_failures_total",
                s.labels,
                Some(("class", k.name())),
                n,
            );
        }
    }
    latency(&mut out, series);
    schedule(&mut out, series);
    head(
        &mut out,
        "shootout_step_active",
        "gauge",
        "1 for the series being measured now, else 0.",
    );
    for s in series {
        sample(
            &mut out,
            "shootout_step_active",
            s.labels,
            None,
            u64::from(s.totals.active),
        );
    }
    journeys(&mut out, series);
    head(
        &mut out,
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time of this shootout process (the load generator), in seconds.",
    );
    let _ = writeln!(out, "process_cpu_seconds_total {cpu_seconds}");
    out
}

/// The latency histogram: cumulative buckets, `+Inf`, the sum (seconds) and the count.
fn latency(out: &mut String, series: &[Series]) {
    const NAME: &str = "shootout_request_duration_seconds";
    head(
        out,
        NAME,
        "histogram",
        "Latency of answered requests in seconds (in rate mode from each request's due time).",
    );
    for s in series {
        histogram(out, NAME, s.labels, &s.totals.latency);
    }
}

/// One series of the histogram `name`: its cumulative buckets, `+Inf`, sum and count.
fn histogram(out: &mut String, name: &str, l: &Labels, h: &Histogram<u64>) {
    let bucket = format!("{name}_bucket");
    for (le, bound_us) in BUCKETS {
        let n = if h.is_empty() {
            0
        } else {
            h.count_between(0, bound_us)
        };
        sample(out, &bucket, l, Some(("le", le)), n);
    }
    sample(out, &bucket, l, Some(("le", "+Inf")), h.len());
    let sum_us: u128 = h
        .iter_recorded()
        .map(|v| {
            u128::from(h.median_equivalent(v.value_iterated_to())) * u128::from(v.count_at_value())
        })
        .sum();
    let _ = writeln!(out, "{name}_sum{} {}", labels(l, None), sum_us as f64 / 1e6);
    sample(out, &format!("{name}_count"), l, None, h.len());
}

/// A journey run's series, step by step and journey by journey (declared always, with
/// samples only for journey runs).
fn journeys(out: &mut String, series: &[Series]) {
    const STEPS: &str = "shootout_journey_step_requests_total";
    const STEP_LATENCY: &str = "shootout_journey_step_duration_seconds";
    const JOURNEYS: &str = "shootout_journeys_total";
    let with = |l: &Labels, key: &'static str, name: &str| {
        let mut l = l.clone();
        l.push((key, name.to_string()));
        l
    };
    head(
        out,
        STEPS,
        "counter",
        "A journey's requests that ended, by step (JOURNEY › STEP) and outcome.",
    );
    for s in series {
        for st in &s.totals.steps {
            let l = with(s.labels, "step", &st.name);
            sample(out, STEPS, &l, Some(("outcome", "ok")), st.ok);
            sample(out, STEPS, &l, Some(("outcome", "failed")), st.failed);
        }
    }
    head(
        out,
        STEP_LATENCY,
        "histogram",
        "Latency of a journey step's answered requests in seconds (in the open model from each step's due time).",
    );
    for s in series {
        for st in &s.totals.steps {
            histogram(
                out,
                STEP_LATENCY,
                &with(s.labels, "step", &st.name),
                &st.latency,
            );
        }
    }
    head(
        out,
        JOURNEYS,
        "counter",
        "Journeys that ended, by journey and outcome (ok: every step was ok).",
    );
    for s in series {
        for j in &s.totals.journeys {
            let l = with(s.labels, "journey", &j.name);
            sample(out, JOURNEYS, &l, Some(("outcome", "ok")), j.ok);
            sample(out, JOURNEYS, &l, Some(("outcome", "failed")), j.failed);
        }
    }
}

/// The schedule's counters, for the series that have one (rate mode).
fn schedule(out: &mut String, series: &[Series]) {
    const NAME: &str = "shootout_schedule_requests_total";
    head(
        out,
        NAME,
        "counter",
        "Rate mode: requests due, sent and sent late by the schedule, counted when a step ends.",
    );
    for s in series {
        if let Some(counts) = s.totals.schedule {
            for (state, n) in ["due", "sent", "late"].into_iter().zip(counts) {
                sample(out, NAME, s.labels, Some(("state", state)), n);
            }
        }
    }
}

/// A metric's `# HELP` and `# TYPE` lines.
fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// One sample line: `name{labels,extra} value`.
fn sample(out: &mut String, name: &str, l: &Labels, extra: Option<(&str, &str)>, value: u64) {
    let _ = writeln!(out, "{name}{} {value}", labels(l, extra));
}

/// `{a="x",b="y"}`, or nothing when there are no labels.
fn labels(l: &Labels, extra: Option<(&str, &str)>) -> String {
    let all: Vec<String> = l
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .chain(extra)
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if all.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", all.join(","))
    }
}

/// A label value as the format writes it: backslash, double quote and line feed escaped.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/metrics.md names every failure class the endpoint exports (it left out
    /// WebSocket's three).
    #[test]
    fn the_docs_name_every_failure_class() {
        let docs = include_str!("../../../../docs/metrics.md");
        let row = docs
            .lines()
            .find(|l| l.starts_with("| `shootout_request_failures_total`"))
            .expect("the failures row");
        for k in shootout_model::FailureKind::ALL {
            assert!(row.contains(&format!("`{}`", k.name())), "{k}: {row}");
        }
    }
    use shootout_model::result::second_histogram;

    fn totals(latencies_us: &[u64]) -> Totals {
        let mut latency = second_histogram();
        for v in latencies_us {
            latency.record(*v).unwrap();
        }
        let mut failures = FailureCounts::default();
        failures[FailureKind::Timeout] = 2;
        Totals {
            ok: 5,
            failed: 2,
            failures,
            latency,
            schedule: None,
            active: true,
            steps: Vec::new(),
            journeys: Vec::new(),
        }
    }

    fn line<'a>(page: &'a str, start: &str) -> &'a str {
        page.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start} in\n{page}"))
    }

    #[test]
    fn buckets_are_cumulative_in_seconds_and_end_at_the_count() {
        let t = totals(&[80, 300, 300, 4_000, 20_000_000]);
        let labels = Labels::new();
        let page = render(
            &[Series {
                labels: &labels,
                totals: &t,
            }],
            1.5,
        );
        assert_eq!(
            line(
                &page,
                "shootout_request_duration_seconds_bucket{le=\"0.0001\"}"
            ),
            "shootout_request_duration_seconds_bucket{le=\"0.0001\"} 1"
        );
        assert!(page.contains("_bucket{le=\"0.0005\"} 3\n"), "{page}");
        assert!(page.contains("_bucket{le=\"0.005\"} 4\n"), "{page}");
        // 20 s is beyond the last bound: only +Inf has it.
        assert!(page.contains("_bucket{le=\"10\"} 4\n"), "{page}");
        assert!(page.contains("_bucket{le=\"+Inf\"} 5\n"), "{page}");
        assert!(
            page.contains("shootout_request_duration_seconds_count 5\n"),
            "{page}"
        );
        let sum: f64 = line(&page, "shootout_request_duration_seconds_sum ")
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // Two significant figures: each value within 1 %.
        assert!((sum - 20.00468).abs() < 0.2, "{sum}");
        assert!(page.contains("# TYPE shootout_request_duration_seconds histogram\n"));
        assert!(page.contains("process_cpu_seconds_total 1.5\n"));
    }

    #[test]
    fn requests_by_outcome_and_every_failure_class_are_counted() {
        let t = totals(&[]);
        let labels: Labels = vec![("contender", "a".into()), ("level", "c=10".into())];
        let page = render(
            &[Series {
                labels: &labels,
                totals: &t,
            }],
            0.0,
        );
        assert!(
            page.contains(
                "shootout_requests_total{contender=\"a\",level=\"c=10\",outcome=\"ok\"} 5\n"
            ),
            "{page}"
        );
        assert!(page.contains(
            "shootout_requests_total{contender=\"a\",level=\"c=10\",outcome=\"failed\"} 2\n"
        ));
        assert!(page.contains(
            "shootout_request_failures_total{contender=\"a\",level=\"c=10\",class=\"timeout\"} 2\n"
        ));
        assert_eq!(
            page.matches("shootout_request_failures_total{").count(),
            FailureKind::ALL.len()
        );
        assert!(page.contains("shootout_step_active{contender=\"a\",level=\"c=10\"} 1\n"));
        // An empty histogram is all zeros, not a missing series.
        assert!(page.contains("_bucket{contender=\"a\",level=\"c=10\",le=\"+Inf\"} 0\n"));
        // No schedule outside rate mode: the metric is declared, with no sample.
        assert!(!page.contains("shootout_schedule_requests_total{"));
    }

    #[test]
    fn the_schedule_is_given_in_rate_mode() {
        let mut t = totals(&[]);
        t.schedule = Some([100, 99, 7]);
        let labels = Labels::new();
        let page = render(
            &[Series {
                labels: &labels,
                totals: &t,
            }],
            0.0,
        );
        assert!(page.contains("shootout_schedule_requests_total{state=\"due\"} 100\n"));
        assert!(page.contains("shootout_schedule_requests_total{state=\"sent\"} 99\n"));
        assert!(page.contains("shootout_schedule_requests_total{state=\"late\"} 7\n"));
    }

    #[test]
    fn a_journey_runs_steps_and_journeys_have_their_own_series() {
        let mut t = totals(&[]);
        let mut latency = second_histogram();
        latency.record_n(2_000, 3).unwrap();
        t.steps = vec![Named {
            name: "writer › log \"in\"".into(),
            ok: 3,
            failed: 1,
            latency,
        }];
        t.journeys = vec![Named {
            name: "writer".into(),
            ok: 2,
            failed: 1,
            latency: second_histogram(),
        }];
        let labels: Labels = vec![("contender", "a".into())];
        let page = render(
            &[Series {
                labels: &labels,
                totals: &t,
            }],
            0.0,
        );
        let step = "contender=\"a\",step=\"writer › log \\\"in\\\"\"";
        for want in [
            format!("shootout_journey_step_requests_total{{{step},outcome=\"ok\"}} 3\n"),
            format!("shootout_journey_step_requests_total{{{step},outcome=\"failed\"}} 1\n"),
            format!("shootout_journey_step_duration_seconds_bucket{{{step},le=\"0.001\"}} 0\n"),
            format!("shootout_journey_step_duration_seconds_bucket{{{step},le=\"0.0025\"}} 3\n"),
            format!("shootout_journey_step_duration_seconds_count{{{step}}} 3\n"),
            "shootout_journeys_total{contender=\"a\",journey=\"writer\",outcome=\"ok\"} 2\n".into(),
            "shootout_journeys_total{contender=\"a\",journey=\"writer\",outcome=\"failed\"} 1\n"
                .into(),
        ] {
            assert!(page.contains(&want), "{want} missing from\n{page}");
        }
        // A run without journeys declares them and has no sample.
        let plain = render(
            &[Series {
                labels: &labels,
                totals: &totals(&[]),
            }],
            0.0,
        );
        assert!(plain.contains("# TYPE shootout_journeys_total counter\n"));
        assert!(!plain.contains("shootout_journeys_total{"));
    }

    #[test]
    fn label_values_are_escaped() {
        let t = totals(&[]);
        let labels: Labels = vec![("contender", "a \"b\"\\c\nd".into())];
        let page = render(
            &[Series {
                labels: &labels,
                totals: &t,
            }],
            0.0,
        );
        assert!(
            page.contains("{contender=\"a \\\"b\\\"\\\\c\\nd\",outcome=\"ok\"} 5\n"),
            "{page}"
        );
        // Every sample is one line: the newline did not break one.
        for l in page.lines().filter(|l| !l.starts_with('#')) {
            assert!(
                l.starts_with("shootout_") || l.starts_with("process_"),
                "{l}"
            );
        }
    }
}
