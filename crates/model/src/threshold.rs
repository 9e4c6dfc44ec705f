//! The grammar of a threshold a load must meet (`--fail-if` on `load`, `merge` and `run`,
//! and a plan's `fail_if`, one grammar): `METRIC OP VALUE`, e.g. `p99>50ms`,
//! `errors>0.1%`, `rps<20000`, `failed>0`. The expression says when the run *fails*; the
//! verdicts (which thresholds a run or a shootout's cell breached) are taken in
//! `shootout-analysis`.
//!
//! Metrics: `p50`, `p90`, `p99`, `p999`, `mean`, `max` (latency of the answered requests,
//! from the coordinated-omission-corrected histogram, with a unit: `us`, `ms` or `s`),
//! `errors` (failed requests as a share of the completed ones, with `%`), `failed` (a
//! count of failed requests) and `rps` (good answers per second over the run). Operators:
//! `>`, `>=`, `<`, `<=`. A journey's step is judged alone with `step:NAME:` before the
//! metric (`step:login:p99>200ms`; NAME is the step's name, or `journey › step`). Every
//! parse error names the expression and says how to write it.

use crate::RunResult;
use std::str::FromStr;

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A latency quantile, in thousandths (500 = median, 999 = p99.9).
    Quantile(u16),
    /// Mean latency.
    Mean,
    /// Slowest request.
    Max,
    /// Failed requests as a percentage of the completed ones.
    Errors,
    /// Failed requests, counted.
    Failed,
    /// Good answers per second.
    Rps,
}

/// The metrics' names, as written in an expression, with what each one is.
const METRICS: [(&str, Metric); 9] = [
    ("p50", Metric::Quantile(500)),
    ("p90", Metric::Quantile(900)),
    ("p99", Metric::Quantile(990)),
    ("p999", Metric::Quantile(999)),
    ("mean", Metric::Mean),
    ("max", Metric::Max),
    ("errors", Metric::Errors),
    ("failed", Metric::Failed),
    ("rps", Metric::Rps),
];

impl Metric {
    /// True for the latency metrics (written with a unit).
    pub fn is_latency(self) -> bool {
        matches!(self, Metric::Quantile(_) | Metric::Mean | Metric::Max)
    }

    /// The metric's name, as written in an expression.
    pub fn name(self) -> &'static str {
        METRICS
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("?", |(n, _)| n)
    }

    /// The metric's value for `r`: latency in µs, errors in %, failed as a count, rps in
    /// good answers per second. 0 for latency when nothing was answered.
    pub fn of(self, r: &RunResult) -> f64 {
        self.of_latency(r, &r.histograms.latency)
    }

    /// As [`Metric::of`], latency counted from each request's send instead of its due
    /// time (rate mode's [`Histograms::latency_raw`](crate::Histograms::latency_raw)): what
    /// the server took, the generator's lateness taken out.
    pub fn of_sent(self, r: &RunResult) -> f64 {
        self.of_latency(r, &r.histograms.latency_raw)
    }

    /// The metric with latencies read from `h`.
    fn of_latency(self, r: &RunResult, h: &hdrhistogram::Histogram<u64>) -> f64 {
        let latency = |f: fn(&hdrhistogram::Histogram<u64>) -> f64| {
            if h.is_empty() {
                0.0
            } else {
                f(h)
            }
        };
        match self {
            Metric::Quantile(q) => latency(match q {
                500 => |h| h.value_at_quantile(0.5) as f64,
                900 => |h| h.value_at_quantile(0.9) as f64,
                990 => |h| h.value_at_quantile(0.99) as f64,
                _ => |h| h.value_at_quantile(0.999) as f64,
            }),
            Metric::Mean => latency(|h| h.mean()),
            Metric::Max => latency(|h| h.max() as f64),
            Metric::Errors => r.counts.failed() as f64 * 100.0 / r.counts.completed.max(1) as f64,
            Metric::Failed => r.counts.failed() as f64,
            Metric::Rps => r.ok_rps(),
        }
    }

    /// `value` (in [`Metric::of`]'s unit) as a reader wants it: `72.143 ms`, `0.25%`.
    pub fn show(self, value: f64) -> String {
        match self {
            m if m.is_latency() => format!("{:.3} ms", value / 1e3),
            Metric::Errors => format!("{value:.3}%"),
            Metric::Failed => format!("{value:.0}"),
            _ => format!("{value:.2} req/s"),
        }
    }
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Above,
    /// `>=`
    AtLeast,
    /// `<`
    Below,
    /// `<=`
    AtMost,
}

impl Op {
    /// The operators, longest first (so `>=` is not read as `>`).
    const ALL: [(&'static str, Op); 4] = [
        (">=", Op::AtLeast),
        ("<=", Op::AtMost),
        (">", Op::Above),
        ("<", Op::Below),
    ];

    /// True when `value OP limit` holds.
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Above => value > limit,
            Op::AtLeast => value >= limit,
            Op::Below => value < limit,
            Op::AtMost => value <= limit,
        }
    }
}

/// One `--fail-if` expression: the run fails when `metric op limit` holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// What is measured.
    pub metric: Metric,
    /// How it is compared.
    pub op: Op,
    /// The limit, in [`Metric::of`]'s unit (µs for latency, % for errors).
    pub limit: f64,
    /// The expression as the user wrote it.
    pub text: String,
    /// `step:NAME:`: the journey step it judges alone (its name, or `journey › step`);
    /// `None`: the whole run.
    pub step: Option<String>,
}

impl Threshold {
    /// The measured value for `r` ([`Metric::of`]'s unit), of its step when it names
    /// one; `None` when `r` has no step of that name.
    pub fn value(&self, r: &RunResult) -> Option<f64> {
        let Some(name) = &self.step else {
            return Some(self.metric.of(r));
        };
        let t = step_of(r, name)?;
        let h = &t.latency;
        let latency = |v: f64| if h.is_empty() { 0.0 } else { v };
        Some(match self.metric {
            Metric::Quantile(q) => latency(h.value_at_quantile(f64::from(q) / 1000.0) as f64),
            Metric::Mean => latency(h.mean()),
            Metric::Max => latency(h.max() as f64),
            Metric::Errors => t.failed() as f64 * 100.0 / t.completed.max(1) as f64,
            Metric::Failed => t.failed() as f64,
            Metric::Rps => crate::result::per_second(t.ok, r.duration),
        })
    }
}

/// The step of `r` named `name` (`journey › step`, or the step's name alone when one step
/// has it).
pub fn step_of<'r>(r: &'r RunResult, name: &str) -> Option<&'r crate::TargetStats> {
    if r.journeys.is_empty() {
        return None;
    }
    let i = step_index(r.targets.iter().map(|t| t.label.as_str()), name)?;
    r.targets.get(i)
}

/// Where the step named `name` sits among `labels` (each `journey › step`): the label
/// itself, or the one label whose step alone has that name. The one rule for a stored
/// result ([`step_of`]) and a running step's counts (a capacity search deciding a step
/// SLO while the step runs).
pub fn step_index<'l>(labels: impl Iterator<Item = &'l str> + Clone, name: &str) -> Option<usize> {
    labels.clone().position(|l| l == name).or_else(|| {
        let mut alone = labels.enumerate().filter(|(_, l)| step_is(l, name));
        let (first, _) = alone.next()?;
        alone.next().is_none().then_some(first)
    })
}

/// Whether the step of `label` (`journey › step`) alone is named `name`.
fn step_is(label: &str, name: &str) -> bool {
    label.rsplit_once(" › ").is_some_and(|(_, s)| s == name)
}

/// Why the step `name` of a `step:NAME:` threshold is not one step of `file`, in words
/// that name the steps it has and the way to write it; `None` when it is (a step's
/// `journey › step`, or its name alone when only one journey has a step of that name).
/// Checked before anything runs, for `--fail-if` and for a search's SLOs alike.
pub fn missing_step(file: &crate::journey::JourneyFile, name: &str) -> Option<String> {
    let labels = file.step_labels();
    if step_index(labels.iter().map(String::as_str), name).is_some() {
        return None;
    }
    let alone = labels.iter().filter(|l| step_is(l, name)).count();
    Some(if alone > 1 {
        format!("{alone} journeys have a step '{name}': write step:JOURNEY › {name}:")
    } else {
        format!(
            "no step is named '{name}' (the steps: {}): write one of them, or its name alone, after step:",
            labels.join(", ")
        )
    })
}

/// An expression that is not a threshold; the message says how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    /// No comparison in it.
    #[error(
        "'{0}' has no comparison: write METRIC OP VALUE, e.g. p99>50ms, errors>0.1% or rps<20000"
    )]
    NoOperator(String),
    /// `step:` without a step name and a `:` before the metric.
    #[error(
        "'{0}': write a step's threshold as step:NAME:METRIC OP VALUE, e.g. step:login:p99>200ms"
    )]
    Step(String),
    /// An unknown metric.
    #[error("'{expr}': '{metric}' is not a metric: use one of p50, p90, p99, p999, mean, max (latency), errors (%), failed (count), rps (good answers per second)")]
    Metric {
        /// The expression.
        expr: String,
        /// The metric as written.
        metric: String,
    },
    /// A latency without a unit or with an unknown one.
    #[error("'{0}': a latency needs a unit: write e.g. p99>50ms, mean>800us or max>2s")]
    Unit(String),
    /// `errors` without `%`.
    #[error(
        "'{0}': errors is a share of the completed requests: write it with %, e.g. errors>0.1%"
    )]
    Percent(String),
    /// Not a number, negative, or a count with a fraction.
    #[error("'{expr}': '{value}' is not a {what}: write e.g. {example}")]
    Value {
        /// The expression.
        expr: String,
        /// The value as written.
        value: String,
        /// What was expected.
        what: &'static str,
        /// A valid expression of the same metric.
        example: &'static str,
    },
}

impl FromStr for Threshold {
    type Err = ThresholdError;

    /// Parses `METRIC OP VALUE` (blanks allowed around each part; metric names in any case),
    /// after `step:NAME:` for a journey's step.
    fn from_str(whole: &str) -> Result<Threshold, ThresholdError> {
        let (step, expr) = match whole.trim_start().strip_prefix("step:") {
            Some(rest) => {
                let op_at = Op::ALL
                    .iter()
                    .filter_map(|(t, _)| rest.find(t))
                    .min()
                    .unwrap_or(rest.len());
                let Some((name, _)) = rest[..op_at].rsplit_once(':') else {
                    return Err(ThresholdError::Step(whole.into()));
                };
                if name.trim().is_empty() {
                    return Err(ThresholdError::Step(whole.into()));
                }
                (Some(name.trim().to_string()), &rest[name.len() + 1..])
            }
            None => (None, whole),
        };
        let mut t = Threshold::parse(expr)?;
        t.step = step;
        t.text = whole.trim().to_string();
        Ok(t)
    }
}

impl Threshold {
    /// `METRIC OP VALUE`, for the whole run.
    fn parse(expr: &str) -> Result<Threshold, ThresholdError> {
        let (at, token, op) = Op::ALL
            .iter()
            .filter_map(|(t, op)| expr.find(t).map(|at| (at, *t, *op)))
            .min_by_key(|(at, t, _)| (*at, std::cmp::Reverse(t.len())))
            .ok_or_else(|| ThresholdError::NoOperator(expr.into()))?;
        let name = expr[..at].trim().to_ascii_lowercase();
        let value = expr[at + token.len()..].trim();
        let metric = METRICS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
            .ok_or_else(|| ThresholdError::Metric {
                expr: expr.into(),
                metric: name.clone(),
            })?;
        let bad = |what, example| ThresholdError::Value {
            expr: expr.into(),
            value: value.into(),
            what,
            example,
        };
        let number = |text: &str| {
            text.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        let limit = match metric {
            m if m.is_latency() => {
                let split = value
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .ok_or_else(|| ThresholdError::Unit(expr.into()))?;
                let scale = match value[split..].trim() {
                    "us" | "µs" => 1.0,
                    "ms" => 1e3,
                    "s" => 1e6,
                    _ => return Err(ThresholdError::Unit(expr.into())),
                };
                number(&value[..split]).ok_or_else(|| bad("duration", "p99>50ms"))? * scale
            }
            Metric::Errors => {
                let share = value
                    .strip_suffix('%')
                    .ok_or_else(|| ThresholdError::Percent(expr.into()))?;
                number(share).ok_or_else(|| bad("percentage", "errors>0.1%"))?
            }
            Metric::Failed => value
                .parse::<u64>()
                .map_err(|_| bad("count of requests", "failed>0"))?
                as f64,
            _ => number(value).ok_or_else(|| bad("rate", "rps<20000"))?,
        };
        Ok(Threshold {
            metric,
            op,
            limit,
            text: expr.trim().to_string(),
            step: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's name is one step of the file: `journey › step`, or the step's name
    /// alone when one journey has it; else the reason names the steps and the fix.
    #[test]
    fn a_step_is_named_alone_or_with_its_journey() {
        let text = "[[journey]]\nname = \"a\"\n[[journey.step]]\nname = \"login\"\nget = \"/\"\n[[journey.step]]\nname = \"read\"\nget = \"/\"\n[[journey]]\nname = \"b\"\n[[journey.step]]\nname = \"read\"\nget = \"/\"\n";
        let file = crate::journey::parse(text, "j.toml", &mut |_| Err("no files".into())).unwrap();
        for ok in ["login", "a › login", "a › read", "b › read"] {
            assert_eq!(missing_step(&file, ok), None, "{ok}");
        }
        assert_eq!(
            missing_step(&file, "read").as_deref(),
            Some("2 journeys have a step 'read': write step:JOURNEY › read:")
        );
        assert_eq!(
            missing_step(&file, "logout").as_deref(),
            Some("no step is named 'logout' (the steps: a › login, a › read, b › read): write one of them, or its name alone, after step:")
        );
    }

    /// `step:NAME:` scopes a threshold to a journey's step; the name may hold blanks and
    /// colons; without a name, or without the `:` before the metric, it says how to write it.
    #[test]
    fn a_step_scope_is_read_before_the_metric() {
        let got: Threshold = "step:read back:p99>50ms".parse().unwrap();
        assert_eq!(got.step.as_deref(), Some("read back"));
        assert_eq!((got.metric, got.limit), (Metric::Quantile(990), 50_000.0));
        assert_eq!(got.text, "step:read back:p99>50ms");
        let got: Threshold = "step:a:b:errors>1%".parse().unwrap();
        assert_eq!(got.step.as_deref(), Some("a:b"));
        for bad in ["step:p99>1ms", "step::p99>1ms"] {
            let e = bad.parse::<Threshold>().unwrap_err().to_string();
            assert!(e.contains("step:NAME:METRIC OP VALUE"), "{e}");
        }
        assert_eq!("p99>1ms".parse::<Threshold>().unwrap().step, None);
    }

    fn t(expr: &str) -> Threshold {
        expr.parse().unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    #[test]
    fn the_grammar_reads_every_metric_with_its_unit() {
        #[rustfmt::skip]
        let rows: &[(&str, Metric, Op, f64)] = &[
            ("p99>50ms",        Metric::Quantile(990), Op::Above,   50_000.0),
            (" P50 >= 1.5s ",   Metric::Quantile(500), Op::AtLeast, 1_500_000.0),
            ("p90<=800us",      Metric::Quantile(900), Op::AtMost,  800.0),
            ("p999>2µs",        Metric::Quantile(999), Op::Above,   2.0),
            ("mean>0.5ms",      Metric::Mean,          Op::Above,   500.0),
            ("max > 1 s",       Metric::Max,           Op::Above,   1_000_000.0),
            ("errors>0.1%",     Metric::Errors,        Op::Above,   0.1),
            ("failed>0",        Metric::Failed,        Op::Above,   0.0),
            ("rps<20000",       Metric::Rps,           Op::Below,   20_000.0),
        ];
        for (expr, metric, op, limit) in rows {
            let got = t(expr);
            assert_eq!((got.metric, got.op), (*metric, *op), "{expr}");
            assert!((got.limit - limit).abs() < 1e-9, "{expr}: {}", got.limit);
            assert_eq!(got.text, expr.trim());
        }
    }

    #[test]
    fn bad_expressions_say_how_to_write_them() {
        #[rustfmt::skip]
        let rows: &[(&str, &str)] = &[
            ("p99",           "write METRIC OP VALUE, e.g. p99>50ms"),
            ("",              "has no comparison"),
            ("p98>50ms",      "'p98' is not a metric: use one of p50"),
            ("latency>5ms",   "is not a metric"),
            ("p99>50",        "a latency needs a unit: write e.g. p99>50ms"),
            ("p99>50 parsecs","a latency needs a unit"),
            ("p99>ms",        "'ms' is not a duration: write e.g. p99>50ms"),
            ("errors>0.1",    "write it with %, e.g. errors>0.1%"),
            ("errors>x%",     "is not a percentage"),
            ("failed>0.5",    "is not a count of requests: write e.g. failed>0"),
            ("rps<-1",        "is not a rate: write e.g. rps<20000"),
            ("rps<NaN",       "is not a rate"),
            ("rps<",          "is not a rate"),
        ];
        for (expr, hint) in rows {
            let e = expr.parse::<Threshold>().unwrap_err().to_string();
            assert!(e.contains(hint), "{expr:?}: {e}");
            assert!(
                e.contains(&format!("'{expr}'")) || e.contains("'p98'") || e.contains("'latency'"),
                "{expr:?} named: {e}"
            );
        }
    }
}
