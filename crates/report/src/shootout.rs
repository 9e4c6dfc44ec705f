//! The closing table of a shootout: per workload, contenders × load levels with req/s
//! (median ± half the range over repetitions), "% of baseline", p50/p99 (medians), failures,
//! the server's CPU per request and peak memory; then, per level, how many times faster
//! each contender was than the baseline, and warnings for noisy steps and contenders that
//! were not measured. Comparisons use medians, never the fastest repetition.
//!
//! Input is plain views of stored rows, so the store decides what a run is and this module
//! only renders it.

use shootout_model::{ContenderStatus, LatencySummary, LoadLevel, ResourceSample, RunResult};
use std::fmt::Write;

/// A contender as stored.
#[derive(Debug, Clone)]
pub struct ContenderView<'a> {
    /// Name.
    pub name: &'a str,
    /// The 100% of comparisons.
    pub baseline: bool,
    /// What became of it.
    pub status: ContenderStatus,
    /// Why it was not measured, if it was not.
    pub detail: &'a str,
}

/// One stored step.
#[derive(Debug, Clone)]
pub struct StepView<'a> {
    /// Index into the contenders.
    pub contender: usize,
    /// Workload name.
    pub workload: &'a str,
    /// Load level.
    pub level: LoadLevel,
    /// What it measured.
    pub result: &'a RunResult,
    /// The server's samples during the step.
    pub resources: &'a [ResourceSample],
}

/// A spread wider than this share of the median marks a step as noisy.
const NOISY: f64 = 0.10;

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Statistics of one contender × workload × level over its repetitions.
#[derive(Debug, Clone, Default)]
struct Cell {
    reps: usize,
    rps: f64,
    rps_min: f64,
    rps_max: f64,
    p50: f64,
    p99: f64,
    failed: u64,
    cpu_us: Option<f64>,
    peak_rss: Option<u64>,
}

fn cell(steps: &[&StepView]) -> Cell {
    let mut rps: Vec<f64> = steps.iter().map(|s| s.result.rps()).collect();
    let mut p50: Vec<f64> = steps
        .iter()
        .map(|s| LatencySummary::of(&s.result.latency).p50)
        .collect();
    let mut p99: Vec<f64> = steps
        .iter()
        .map(|s| LatencySummary::of(&s.result.latency).p99)
        .collect();
    let mut cpu: Vec<f64> = steps
        .iter()
        .filter_map(|s| {
            let (first, last) = (s.resources.first()?, s.resources.last()?);
            let used =
                (last.cpu_user + last.cpu_sys).saturating_sub(first.cpu_user + first.cpu_sys);
            (s.result.counts.completed > 0)
                .then(|| used.as_secs_f64() * 1e6 / s.result.counts.completed as f64)
        })
        .collect();
    let min = rps.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rps.iter().copied().fold(0.0, f64::max);
    Cell {
        reps: steps.len(),
        rps: median(&mut rps),
        rps_min: if min.is_finite() { min } else { 0.0 },
        rps_max: max,
        p50: median(&mut p50),
        p99: median(&mut p99),
        failed: steps.iter().map(|s| s.result.counts.failed()).sum(),
        cpu_us: (!cpu.is_empty()).then(|| median(&mut cpu)),
        peak_rss: steps
            .iter()
            .flat_map(|s| s.resources.iter().map(|r| r.rss_bytes))
            .max(),
    }
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

/// Renders the table of a run from its contenders and steps.
pub fn shootout_table(title: &str, contenders: &[ContenderView], steps: &[StepView]) -> String {
    let mut out = format!("\n{title}\n");
    let baseline = contenders.iter().position(|c| c.baseline).unwrap_or(0);
    let mut workloads: Vec<&str> = Vec::new();
    let mut levels: Vec<LoadLevel> = Vec::new();
    for s in steps {
        if !workloads.contains(&s.workload) {
            workloads.push(s.workload);
        }
        if !levels.contains(&s.level) {
            levels.push(s.level);
        }
    }
    let mut noisy = Vec::new();
    for w in &workloads {
        let _ = writeln!(out, "\n{w}");
        let header = [
            "contender",
            "level",
            "req/s",
            "± spread",
            "% of base",
            "p50 ms",
            "p99 ms",
            "failed",
            "server µs/req",
            "peak RSS",
        ];
        let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
        let mut faster = Vec::new();
        for level in &levels {
            let cells: Vec<Option<Cell>> = (0..contenders.len())
                .map(|ci| {
                    let mine: Vec<&StepView> = steps
                        .iter()
                        .filter(|s| s.contender == ci && s.workload == *w && s.level == *level)
                        .collect();
                    (!mine.is_empty()).then(|| cell(&mine))
                })
                .collect();
            let base = cells.get(baseline).cloned().flatten();
            for (ci, c) in cells.iter().enumerate() {
                let Some(c) = c else { continue };
                let spread = (c.rps_max - c.rps_min) / 2.0;
                if c.reps > 1 && c.rps > 0.0 && spread * 2.0 > NOISY * c.rps {
                    noisy.push(format!(
                        "{} · {w} · {level}: req/s ranged {:.0}–{:.0} over {} repetitions",
                        contenders[ci].name, c.rps_min, c.rps_max, c.reps
                    ));
                }
                let pct = base
                    .as_ref()
                    .filter(|b| b.rps > 0.0)
                    .map_or("–".into(), |b| format!("{:.0}%", c.rps * 100.0 / b.rps));
                let name = if ci == baseline {
                    format!("{} (baseline)", contenders[ci].name)
                } else {
                    contenders[ci].name.to_string()
                };
                rows.push(vec![
                    name,
                    level.to_string(),
                    format!("{:.0}", c.rps),
                    if c.reps > 1 {
                        format!("± {spread:.0}")
                    } else {
                        "(1 rep)".into()
                    },
                    pct,
                    format!("{:.3}", c.p50),
                    format!("{:.3}", c.p99),
                    c.failed.to_string(),
                    c.cpu_us.map_or("–".into(), |v| format!("{v:.1}")),
                    c.peak_rss.map_or("–".into(), mib),
                ]);
                if ci != baseline {
                    if let Some(b) = base.as_ref().filter(|b| b.rps > 0.0 && c.rps > 0.0) {
                        faster.push(ratio_line(
                            contenders[ci].name,
                            contenders[baseline].name,
                            *level,
                            c,
                            b,
                        ));
                    }
                }
            }
        }
        let widths: Vec<usize> = (0..header.len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    if i < 2 {
                        format!("{v:<w$}", w = widths[i])
                    } else {
                        format!("{v:>w$}", w = widths[i])
                    }
                })
                .collect();
            let _ = writeln!(out, "  {}", line.join("  ").trim_end());
        }
        if !faster.is_empty() {
            out.push('\n');
            for f in faster {
                let _ = writeln!(out, "  {f}");
            }
        }
    }
    let unmeasured: Vec<String> = contenders
        .iter()
        .filter(|c| c.status != ContenderStatus::Measured)
        .map(|c| {
            let first = c.detail.lines().next().unwrap_or("");
            format!(
                "{} was not measured to the end ({:?}): {first}",
                c.name, c.status
            )
        })
        .collect();
    if !unmeasured.is_empty() || !noisy.is_empty() {
        out.push_str("\nWarnings:\n");
        for u in unmeasured {
            let _ = writeln!(out, "  - {u}");
        }
        for n in noisy {
            let _ = writeln!(
                out,
                "  - noisy: {n} (add repetitions, or pin server and load to different CPUs)"
            );
        }
    }
    if steps.is_empty() {
        out.push_str("\nNo step was measured.\n");
    }
    out
}

/// hyperfine's "x ± y times faster than": the ratio of medians, its uncertainty from the
/// relative half-ranges of both.
fn ratio_line(name: &str, base: &str, level: LoadLevel, c: &Cell, b: &Cell) -> String {
    let r = c.rps / b.rps;
    let rel = |x: &Cell| (x.rps_max - x.rps_min) / 2.0 / x.rps;
    let err = r * (rel(c).powi(2) + rel(b).powi(2)).sqrt();
    let (word, value, e) = if r >= 1.0 {
        ("faster", r, err)
    } else {
        ("slower", 1.0 / r, err / (r * r))
    };
    if c.reps > 1 || b.reps > 1 {
        format!("{level}: {name} is {value:.2} ± {e:.2} times {word} than {base}")
    } else {
        format!(
            "{level}: {name} is {value:.2} times {word} than {base} (one repetition: no spread)"
        )
    }
}
