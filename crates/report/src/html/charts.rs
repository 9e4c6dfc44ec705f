//! The report's charts, each built as a [`Chart`] from stored numbers:
//! throughput and latency against the load level (a sweep), the latency percentile
//! spectrum, the scatter of individual requests over time, and per-second timelines of a
//! step (throughput, failures, p99, and the server's CPU and memory).
//!
//! Seams: inputs are model and store types (and the cells of `data.rs`); outputs are
//! [`Chart`]s that `svg.rs` draws. Units on the axes: req/s (a gRPC workload's calls/s,
//! replies/s or messages/s), milliseconds (histograms and
//! samples hold µs), seconds since the measurement started, % of the CPUs the server was allowed, MiB.

use super::data::{is_rate, level_value, Workload};
use super::svg::{Axis, Chart, Mark, Series, Shape, Stroke, Whisker};
use hdrhistogram::Histogram;
use shootout_analysis::certify::Interval;
use shootout_analysis::Unit;
use shootout_model::{LoadLevel, ResourceSample, RunResult, Sample};

/// Size of a main chart (px).
pub const MAIN: (f64, f64) = (600.0, 380.0);
/// Size of a small timeline chart (px; the page stretches it to its column).
pub const SMALL: (f64, f64) = (340.0, 260.0);
/// At most this many scatter points per contender (a stride through the reservoir).
pub const SCATTER_CAP: usize = 3_000;

/// A contender (or a single target, or one repetition of a contender) as the charts see
/// it: name, colour, stroke, and whether it has a legend entry.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// Legend name.
    pub name: &'a str,
    /// Colour (from the palette, by contender index).
    pub color: &'static str,
    /// How its lines are stroked in a timeline (one stroke per repetition).
    pub stroke: Stroke,
    /// Listed in the legend.
    pub legend: bool,
}

impl<'a> Who<'a> {
    /// A contender drawn solid, with a legend entry.
    pub fn new(name: &'a str, color: &'static str) -> Who<'a> {
        Who {
            name,
            color,
            stroke: Stroke::Solid,
            legend: true,
        }
    }
}

/// `1234.5` as `1234.5`, `0.41234` as `0.412`: three significant decimals for tooltips.
fn val(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let s = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Concurrency levels spanning at least this ratio go on a log2 axis (1, 2, 4, 8 evenly
/// spaced); narrower sweeps stay linear.
const LOG2_RATIO: f64 = 4.0;

/// The horizontal axis of a sweep and each level's place on it: connections on a log2
/// axis (a linear one when they span less than [`LOG2_RATIO`]), target rates linear or
/// log10 as [`Axis::fit`] decides (req/s, or calls/s for a gRPC workload of `unit`: its
/// schedule paces calls), and levels of both kinds in order as categories.
fn level_axis(levels: &[LoadLevel], unit: Unit) -> (Axis, Vec<f64>) {
    let paced = match unit {
        Unit::Request => "target rate (req/s)",
        _ => "target rate (calls/s)",
    };
    let all_closed = levels.iter().all(|l| !is_rate(*l));
    let all_rate = levels.iter().all(|l| is_rate(*l));
    if all_closed || all_rate {
        let xs: Vec<f64> = levels.iter().map(|l| level_value(*l)).collect();
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(*x), hi.max(*x))
            });
        let mut axis = if all_closed && lo > 0.0 && hi / lo >= LOG2_RATIO {
            Axis::log2("concurrency (connections)", lo, hi)
        } else if all_closed {
            Axis::fit("concurrency (connections)", xs.iter().copied(), true)
        } else {
            Axis::fit(paced, xs.iter().copied(), true)
        };
        // Few levels: label exactly those (a sweep of 1, 2, 4, 8 reads better so).
        if levels.len() <= 8 && xs.len() > 1 {
            axis.ticks = xs
                .iter()
                .map(|x| (*x, super::svg::number(*x, 1.0)))
                .collect();
        }
        (axis, xs)
    } else {
        let xs: Vec<f64> = (0..levels.len()).map(|i| i as f64).collect();
        let mut axis = Axis::linear("load level", -0.5, levels.len() as f64 - 0.5);
        axis.lo = -0.5;
        axis.hi = levels.len() as f64 - 0.5;
        axis.ticks = levels
            .iter()
            .enumerate()
            .map(|(i, l)| (i as f64, l.to_string()))
            .collect();
        (axis, xs)
    }
}

/// Chart 1: median req/s (a gRPC workload's calls/s, …: `w.unit`) against the load level,
/// one line per contender, with the min–max range over repetitions as a band (and the
/// target rate as a dotted reference in rate sweeps).
pub fn throughput(w: &Workload, who: &[Who]) -> Chart {
    let per_s = w.unit.per_second();
    let (x, xs) = level_axis(&w.levels, w.unit);
    let mut series = Vec::new();
    for c in w.contenders() {
        let mut s = Series::new(who[c].name, who[c].color);
        for cell in w.of_contender(c) {
            let i = w.level_index(cell.level).unwrap_or(0);
            s.line.push((xs[i], cell.rps));
            s.band.push((xs[i], cell.rps_min, cell.rps_max));
            s.marks.push(Mark {
                x: xs[i],
                y: cell.rps,
                tip: format!(
                    "{} · {}: {} {per_s} (median of {}; range {}–{})",
                    who[c].name,
                    cell.level,
                    val(cell.rps),
                    cell.reps(),
                    val(cell.rps_min),
                    val(cell.rps_max)
                ),
            });
        }
        series.push(s);
    }
    if w.levels.iter().all(|l| is_rate(*l)) && w.levels.len() > 1 {
        let mut target = Series::new("target rate", "#777777");
        target.stroke = Stroke::Dotted;
        target.line = w
            .levels
            .iter()
            .map(|l| (level_value(*l), level_value(*l)))
            .collect();
        series.push(target);
    }
    let y = Axis::fit(
        &format!("throughput ({per_s})"),
        series.iter().flat_map(|s| s.ys().collect::<Vec<_>>()),
        true,
    );
    Chart {
        note: String::new(),
        title: "Throughput by load level (median, band: min–max over repetitions)".into(),
        x,
        y,
        series,
        width: MAIN.0,
        height: MAIN.1,
    }
}

/// What the band of the latency sweep is, said under its title.
const P99_BAND: &str = "Band: each p99's min–max over repetitions.";

/// How much wider each contender's lines and marks are than the one drawn over it (px),
/// for at most this many steps: equal values stay visible as a coloured rim.
const UNDER_STEP: f64 = 2.0;
const UNDER_STEPS: usize = 3;

/// Gives contender number `k` (in drawing order, 0 on top) its own mark shape and a line
/// and marks wider than those of the contenders drawn over it.
fn set_apart(s: &mut Series, k: usize) {
    let under = k.min(UNDER_STEPS) as f64;
    s.shape = Shape::nth(k);
    s.width = 2.0 + UNDER_STEP * under;
    s.radius = 3.0 + UNDER_STEP / 2.0 * under;
}

/// Chart 2: median p50 (solid) and p99 (dashed) latency against the load level, one pair
/// per contender, the p99's min–max over repetitions as a band; the mean is in each
/// point's tooltip (and in the table). Contenders are set apart by mark shape and by
/// line width ([`set_apart`]), so one with the same values as another stays visible.
pub fn latency(w: &Workload, who: &[Who]) -> Chart {
    let (x, xs) = level_axis(&w.levels, w.unit);
    let mut series = Vec::new();
    for (k, c) in w.contenders().into_iter().enumerate() {
        for (label, stroke) in [("p50", Stroke::Solid), ("p99", Stroke::Dashed)] {
            let mut s = Series::new(format!("{} {label}", who[c].name), who[c].color);
            s.stroke = stroke;
            set_apart(&mut s, k);
            for cell in w.of_contender(c) {
                let i = w.level_index(cell.level).unwrap_or(0);
                let y = if label == "p50" { cell.p50 } else { cell.p99 };
                let range = if label == "p99" {
                    let (lo, hi) = min_max(&cell.p99_values);
                    s.band.push((xs[i], lo, hi));
                    format!("; range {}–{}", val(lo), val(hi))
                } else {
                    String::new()
                };
                s.line.push((xs[i], y));
                s.marks.push(Mark {
                    x: xs[i],
                    y,
                    tip: format!(
                        "{} · {}: {label} {} ms, mean {} ms (medians of {}{range})",
                        who[c].name,
                        cell.level,
                        val(y),
                        val(cell.mean),
                        cell.reps()
                    ),
                });
            }
            series.push(s);
        }
    }
    let mut chart = latency_chart(
        "Latency by load level: p50 (solid), p99 (dashed); medians",
        x,
        series,
    );
    chart.note = P99_BAND.to_string();
    chart
}

/// The smallest and largest finite value of `v` (NaN for none).
fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f64::NAN, f64::NAN), |(lo, hi), x| (lo.min(*x), hi.max(*x)))
}

/// A main-size chart of latency (ms) against `x`, its vertical axis fitted from zero.
fn latency_chart(title: &str, x: Axis, series: Vec<Series>) -> Chart {
    let y = Axis::fit(
        "latency (ms)",
        series.iter().flat_map(|s| s.ys().collect::<Vec<_>>()),
        true,
    );
    Chart {
        note: String::new(),
        title: title.to_string(),
        x,
        y,
        series,
        width: MAIN.0,
        height: MAIN.1,
    }
}

/// Percentiles labelled on the spectrum's axis, as `log10(1 / (1 - q))`.
const SPECTRUM_TICKS: [(f64, &str); 6] = [
    (0.0, "0%"),
    (1.0, "90%"),
    (2.0, "99%"),
    (3.0, "99.9%"),
    (4.0, "99.99%"),
    (5.0, "99.999%"),
];

/// One latency distribution for the spectrum: label, colour, stroke, histogram (µs).
pub struct Spectrum<'a> {
    /// Legend label.
    pub name: String,
    /// Colour.
    pub color: &'static str,
    /// Solid for corrected, dashed for raw.
    pub stroke: Stroke,
    /// The histogram (µs).
    pub hist: &'a Histogram<u64>,
    /// The 95% intervals (µs) of [`PERCENTILES`](shootout_analysis::certify::PERCENTILES),
    /// drawn as error bars (none for a line without them: a raw one).
    pub intervals: [Option<Interval>; 4],
}

/// Chart 3: latency at each percentile, HdrHistogram style: the horizontal axis is
/// `log10(1 / (1 − q))`, so 90%, 99%, 99.9%… are equally spaced; a line stops at the
/// percentile its count can resolve (`1 − 1/n`).
pub fn spectrum(title: &str, lines: &[Spectrum]) -> Chart {
    let mut series = Vec::new();
    let mut reach: f64 = 2.0;
    for l in lines {
        let mut s = Series::new(l.name.clone(), l.color);
        s.stroke = l.stroke;
        let n = l.hist.len();
        if n > 0 {
            let end = (n as f64).log10().min(5.0);
            reach = reach.max(end.ceil());
            let max = l.hist.max() as f64 / 1e3;
            let steps = (end / 0.05).ceil() as usize;
            for i in 0..steps {
                let x = i as f64 * 0.05;
                let q = 1.0 - 10f64.powf(-x);
                let ms = l.hist.value_at_quantile(q) as f64 / 1e3;
                s.line.push((x, ms));
            }
            // The line ends at the slowest request, where the max mark sits (the quantile
            // at `end` would stop it a request short, below a detached dot).
            s.line.push((end, max));
            for (x, label) in SPECTRUM_TICKS
                .iter()
                .skip(1)
                .chain([&(std::f64::consts::LOG10_2, "50%")])
            {
                if *x <= end + 1e-9 {
                    let q = 1.0 - 10f64.powf(-x);
                    let ms = l.hist.value_at_quantile(q) as f64 / 1e3;
                    s.marks.push(Mark {
                        x: *x,
                        y: ms,
                        tip: format!(
                            "{} · p{}: {} ms",
                            l.name,
                            label.trim_end_matches('%'),
                            val(ms)
                        ),
                    });
                }
            }
            s.marks.push(Mark {
                x: end,
                y: max,
                tip: format!("{} · max: {} ms ({} requests)", l.name, val(max), n),
            });
            s.whiskers = interval_whiskers(l, end);
        }
        series.push(s);
    }
    let mut x = Axis::linear("percentile (log scale of 1/(1−q))", 0.0, reach);
    x.lo = 0.0;
    x.hi = reach;
    x.ticks = SPECTRUM_TICKS
        .iter()
        .filter(|(v, _)| *v <= reach)
        .map(|(v, l)| (*v, l.to_string()))
        .collect();
    latency_chart(title, x, series)
}

/// The error bars of a spectrum line: each percentile's 95% interval at its place on the
/// axis, up to `end` (where the line stops).
fn interval_whiskers(l: &Spectrum, end: f64) -> Vec<Whisker> {
    shootout_analysis::certify::PERCENTILES
        .iter()
        .zip(l.intervals)
        .filter_map(|((p, name), ci)| {
            let ci = ci?;
            let x = -(1.0 - p).log10();
            let (lo, hi) = (ci.lo as f64 / 1e3, ci.hi as f64 / 1e3);
            let name = if *name == "p999" { "p99.9" } else { name };
            (x <= end + 1e-9).then(|| Whisker {
                x,
                lo,
                hi,
                open: ci.open_above,
                tip: format!(
                    "{} · {name} 95% interval: {} ms{}",
                    l.name,
                    crate::ci::range_ms(lo, hi, ci.open_above),
                    if ci.open_above {
                        format!(" ({})", crate::ci::OPEN_NOTE)
                    } else {
                        String::new()
                    }
                ),
            })
        })
        .collect()
}

/// Rounds in which the scatter's contenders take turns to draw their dots.
const SCATTER_ROUNDS: usize = 10;

/// Chart 4: each sampled request's latency (ms) at its start time (s), one colour per
/// contender, at most [`SCATTER_CAP`] points each (an even stride through the reservoir).
/// With several contenders, translucent dots are drawn in [`SCATTER_ROUNDS`] interleaved
/// rounds, so neither contender's dots all lie on top of the other's.
/// The legend says which latency a sample holds: corrected (from the due time) in an
/// open loop (`rate`), raw (from the send) in a closed one.
pub fn scatter(title: &str, sets: &[(Who, &[Sample])], duration: f64, rate: bool) -> Chart {
    let kind = if rate {
        "corrected"
    } else {
        "raw, closed loop"
    };
    let mut series = Vec::new();
    for (who, samples) in sets {
        let mut s = Series::new(format!("{} ({kind})", who.name), who.color);
        s.radius = 1.6;
        s.opacity = 0.55;
        if sets.len() > 1 {
            s.rounds = SCATTER_ROUNDS;
        }
        let stride = samples.len().div_ceil(SCATTER_CAP).max(1);
        for smp in samples.iter().step_by(stride) {
            let t = smp.start_us as f64 / 1e6;
            let ms = (smp.total_us.max(1)) as f64 / 1e3;
            let outcome = match smp.failure {
                Some(f) => format!("failed: {f}"),
                None if smp.status > 0 => format!("status {}", smp.status),
                None => "no response".into(),
            };
            s.marks.push(Mark {
                x: t,
                y: ms,
                tip: format!("{} · t={} s: {} ms, {outcome}", who.name, val(t), val(ms)),
            });
        }
        series.push(s);
    }
    let x = time_axis(&series, duration);
    latency_chart(title, x, series)
}

/// A per-second quantity of a load run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerSecond {
    /// Completed requests per second.
    Throughput,
    /// Failed requests per second.
    Failures,
    /// p50 latency of the second (ms).
    P50,
    /// p99 latency of the second (ms).
    P99,
}

impl PerSecond {
    /// The vertical axis of a chart of this alone, its counts a second in `per_s`.
    fn axis(self, per_s: &str) -> String {
        match self {
            PerSecond::Throughput => format!("completed ({per_s})"),
            PerSecond::Failures => format!("failed ({per_s})"),
            PerSecond::P50 | PerSecond::P99 => "latency (ms)".into(),
        }
    }
    /// Its unit: `per_s` for counts, `ms` for latency.
    fn unit(self, per_s: &str) -> &str {
        match self {
            PerSecond::Throughput | PerSecond::Failures => per_s,
            PerSecond::P50 | PerSecond::P99 => "ms",
        }
    }
    fn label(self) -> &'static str {
        match self {
            PerSecond::Throughput => "completed",
            PerSecond::Failures => "failed",
            PerSecond::P50 => "p50",
            PerSecond::P99 => "p99",
        }
    }
}

/// One line of a per-second timeline: `(x seconds, value)` from a run's series. Counts
/// are divided by the part of the second the run covered, so a last, partial second is
/// not mistaken for a drop.
fn per_second_line(r: &RunResult, what: PerSecond) -> Vec<(f64, f64)> {
    let total = r.duration.as_secs_f64();
    r.series
        .iter()
        .filter_map(|s| {
            let start = f64::from(s.second);
            let covered = (total - start).clamp(0.0, 1.0);
            // A sliver of a second past the end is too few requests to say anything.
            if covered < 0.05 {
                return None;
            }
            let y = match what {
                PerSecond::Throughput => s.completed as f64 / covered,
                PerSecond::Failures => s.failed as f64 / covered,
                PerSecond::P50 if s.completed == 0 => return None,
                PerSecond::P99 if s.completed == 0 => return None,
                PerSecond::P50 => s.p50_us as f64 / 1e3,
                PerSecond::P99 => s.p99_us as f64 / 1e3,
            };
            Some((start + covered / 2.0, y))
        })
        .collect()
}

/// How many seconds of `r` a per-second timeline draws (one point each): fewer than two
/// make a chart of single dots, which the report replaces with a note.
pub fn seconds_drawn(r: &RunResult) -> usize {
    per_second_line(r, PerSecond::Throughput).len()
}

/// A timeline of per-second quantities: one line per `(who, result, quantity)`, named
/// `who.name` in the legend (p99 dashed when quantities are mixed), counts a second in
/// `per_s` (`req/s`, or a gRPC run's `calls/s`, `replies/s`, `messages/s`).
pub fn per_second(title: &str, lines: &[(Who, &RunResult, PerSecond)], per_s: &str) -> Chart {
    let mut series = Vec::new();
    let several = lines.iter().any(|l| l.2 != lines[0].2);
    for (who, r, what) in lines {
        let mut s = Series::new(who.name, who.color);
        s.radius = 2.0;
        s.stroke = who.stroke;
        s.legend = who.legend;
        if *what == PerSecond::P99 && several {
            s.stroke = Stroke::Dashed;
        }
        s.line = per_second_line(r, *what);
        s.marks = s
            .line
            .iter()
            .map(|(x, y)| Mark {
                x: *x,
                y: *y,
                tip: format!(
                    "{} · second {}: {} {} {}",
                    who.name,
                    x.floor(),
                    what.label(),
                    val(*y),
                    what.unit(per_s)
                ),
            })
            .collect();
        series.push(s);
    }
    let axis = match lines.first() {
        None => String::new(),
        Some(l) if several && l.2.unit(per_s) == per_s => {
            let many = match per_s {
                "req/s" => "requests",
                other => other.strip_suffix("/s").unwrap_or(other),
            };
            format!("{many} ({per_s})")
        }
        Some(l) => l.2.axis(per_s),
    };
    let end = lines
        .iter()
        .map(|l| l.1.duration.as_secs_f64())
        .fold(0.0, f64::max);
    timeline_chart(title, &axis, series, end)
}

/// A quantity of the server's process tree over a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// CPU used, as % of the `cpus` CPUs the server was allowed (the derivative of
    /// cumulative user + system time): 100% is every allowed CPU busy all along.
    Cpu {
        /// The CPUs the server was allowed (its `server_cpus`, or the machine's).
        cpus: usize,
    },
    /// Resident memory (MiB).
    Rss,
}

/// A step's resource samples, placed on the measurement's clock.
#[derive(Debug, Clone, Copy)]
pub struct Sampled<'a> {
    /// Whose samples.
    pub who: Who<'a>,
    /// The samples, oldest first (`at` counts from the step's start).
    pub samples: &'a [ResourceSample],
    /// How long after the step's start the measurement started (s).
    pub offset: f64,
    /// How long the measurement lasted (s).
    pub duration: f64,
}

/// How far past the measurement's end a resource point is still drawn (s): the sampler
/// stops a moment after the load, and the server going idle then is not the measurement.
const PAST_END: f64 = 0.05;

/// CPU is not drawn over intervals shorter than this (s): /proc counts CPU time in ticks
/// of 10 ms, so a short interval reads as 0% or 200% by quantisation alone.
const SHORTEST_CPU_INTERVAL: f64 = 0.05;

/// One line of a resource timeline: `(seconds since the measurement started, value)`,
/// within the measurement.
fn resource_line(d: &Sampled, what: Resource) -> Vec<(f64, f64)> {
    // A sample taken just before the measurement began (the sampler starts first) is
    // drawn at its start.
    let t = |s: &ResourceSample| (s.at.as_secs_f64() - d.offset).max(0.0);
    let samples = d.samples;
    let line: Vec<(f64, f64)> = match what {
        Resource::Rss => samples
            .iter()
            .map(|s| (t(s), s.rss_bytes as f64 / (1024.0 * 1024.0)))
            .collect(),
        Resource::Cpu { cpus } => samples
            .windows(2)
            .filter_map(|w| {
                let dt = w[1].at.as_secs_f64() - w[0].at.as_secs_f64();
                let used = (w[1].cpu_user + w[1].cpu_sys)
                    .saturating_sub(w[0].cpu_user + w[0].cpu_sys)
                    .as_secs_f64();
                (dt >= SHORTEST_CPU_INTERVAL && t(&w[1]) <= d.duration + PAST_END).then(|| {
                    let share = used / dt / cpus.max(1) as f64;
                    ((t(&w[0]) + t(&w[1])) / 2.0, share * 100.0)
                })
            })
            .collect(),
    };
    line.into_iter()
        .filter(|(x, _)| *x <= d.duration + PAST_END)
        .collect()
}

/// A timeline of the server's CPU or memory during the measurement: one line per
/// contender.
pub fn resources(title: &str, what: Resource, lines: &[Sampled]) -> Chart {
    let (axis, unit) = match what {
        Resource::Cpu { cpus } => (
            format!(
                "CPU (% of {cpus} CPU{} allowed)",
                if cpus == 1 { "" } else { "s" }
            ),
            "%",
        ),
        Resource::Rss => ("RSS (MiB)".to_string(), "MiB"),
    };
    let mut series = Vec::new();
    for d in lines {
        let who = d.who;
        let mut s = Series::new(who.name, who.color);
        s.radius = 2.0;
        s.stroke = who.stroke;
        s.legend = who.legend;
        s.line = resource_line(d, what);
        s.marks = s
            .line
            .iter()
            .map(|(x, y)| Mark {
                x: *x,
                y: *y,
                tip: format!("{} · t={} s: {} {unit}", who.name, val(*x), val(*y)),
            })
            .collect();
        series.push(s);
    }
    let end = lines.iter().map(|d| d.duration).fold(0.0, f64::max);
    timeline_chart(title, &axis, series, end)
}

/// The share of its `cpus` allowed CPUs the server used during the measurement (0 to 1:
/// CPU time over the samples inside it, divided by their span and by `cpus`); `None`
/// without two samples a usable interval apart.
pub fn cpu_share(d: &Sampled, cpus: usize) -> Option<f64> {
    let inside: Vec<&ResourceSample> = d
        .samples
        .iter()
        .filter(|s| {
            let t = s.at.as_secs_f64() - d.offset;
            (0.0..=d.duration + PAST_END).contains(&t)
        })
        .collect();
    let (first, last) = (inside.first()?, inside.last()?);
    let span = last.at.as_secs_f64() - first.at.as_secs_f64();
    let used = (last.cpu_user + last.cpu_sys)
        .saturating_sub(first.cpu_user + first.cpu_sys)
        .as_secs_f64();
    (span >= SHORTEST_CPU_INTERVAL).then(|| used / span / cpus.max(1) as f64)
}

/// A linear axis of seconds from zero to `end` or the last point, whichever is later:
/// time is never on a log scale, even when the first sample starts a microsecond in.
fn time_axis(series: &[Series], end: f64) -> Axis {
    let last = series
        .iter()
        .flat_map(|s| s.xs().collect::<Vec<_>>())
        .filter(|x| x.is_finite())
        .fold(end, f64::max);
    // The frame ends at the last point, not at the next round tick (3.02 s, not 4 s).
    let mut axis = Axis::linear("time since the measurement started (s)", 0.0, last);
    if last > 0.0 {
        axis.hi = last;
        axis.ticks.retain(|t| t.0 <= last + 1e-9);
    }
    axis
}

/// A small timeline chart over the measurement (`end`: its length in seconds).
fn timeline_chart(title: &str, y_title: &str, series: Vec<Series>, end: f64) -> Chart {
    let x = time_axis(&series, end);
    let y = Axis::fit(
        y_title,
        series.iter().flat_map(|s| s.ys().collect::<Vec<_>>()),
        true,
    );
    Chart {
        note: String::new(),
        title: title.to_string(),
        x,
        y,
        series,
        width: SMALL.0,
        height: SMALL.1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Samples every 250 ms of a server using `cpus_busy` CPUs all along.
    fn busy(cpus_busy: f64) -> Vec<ResourceSample> {
        (0..=12)
            .map(|k| {
                let used = Duration::from_secs_f64(0.25 * k as f64 * cpus_busy);
                ResourceSample {
                    at: Duration::from_millis(250 * k),
                    cpu_user: used,
                    cpu_sys: Duration::ZERO,
                    rss_bytes: 1 << 20,
                    processes: 1,
                    threads: 1,
                    ctx_switches: 0,
                    fds: 3,
                }
            })
            .collect()
    }

    #[test]
    fn cpu_is_a_share_of_the_cpus_allowed() {
        let samples = busy(1.0);
        let d = Sampled {
            who: Who::new("s", "#000000"),
            samples: &samples,
            offset: 0.5,
            duration: 2.0,
        };
        // One CPU busy: all of one allowed CPU, half of two.
        for (cpus, want) in [(1, 1.0), (2, 0.5), (0, 1.0)] {
            let share = cpu_share(&d, cpus).unwrap();
            assert!((share - want).abs() < 1e-6, "{cpus} CPUs: {share}");
            let line = resource_line(&d, Resource::Cpu { cpus });
            assert!(!line.is_empty());
            assert!(
                line.iter().all(|p| (p.1 - want * 100.0).abs() < 1e-3),
                "{line:?}"
            );
        }
        // Nothing inside the measurement: no share.
        let early = Sampled { offset: 10.0, ..d };
        assert_eq!(cpu_share(&early, 1), None);
    }
}
