//! `shootout compare A B`: what changed from run A to run B, pair by pair (contender ×
//! workload × load level), with a significance verdict, and the gates CI uses to fail a
//! build (`--fail-if-slower`, `--fail-if-p99-above`: exit 1, the failures listed on stderr).
//! The comparison itself is `shootout_report::compare`; this module reads flags and the
//! store and picks the exit code.

use crate::choices::choice;
use crate::output::{emit, Failure};
use crate::stored::{load_run, open_store};
use anyhow::anyhow;
use clap::Args;
use shootout_report::compare::{self, Comparison, Gates};
use shootout_report::shootout::RunFormat;
use std::path::PathBuf;

/// Flags of `shootout compare`.
#[derive(Debug, Args)]
#[command(after_long_help = GATE_RULES)]
pub struct CompareArgs {
    /// Run A, the reference (as `shootout ls` lists it).
    #[arg(value_name = "A", value_parser = clap::value_parser!(i64).range(1..))]
    pub a: i64,

    /// Run B, compared with A.
    #[arg(value_name = "B", value_parser = clap::value_parser!(i64).range(1..))]
    pub b: i64,

    /// text, markdown, json (docs/report-json.md) or csv (one record per pair).
    #[arg(long, short = 'f', value_name = "FORMAT", default_value_t, value_parser = choice::<RunFormat>())]
    pub format: RunFormat,

    /// Exit 1 when a contender's median req/s dropped by more than PCT percent ('5%' or
    /// '5') and the drop is significant or could not be tested (rules: --help).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub fail_if_slower: Option<f64>,

    /// Exit 1 when a median p99 latency of run B is above MS milliseconds ('20' or '20ms').
    #[arg(long, value_name = "MS", value_parser = parse_ms)]
    pub fail_if_p99_above: Option<f64>,

    /// The store (SQLite).
    #[arg(long, value_name = "PATH", default_value = "shootout.db")]
    pub db: PathBuf,
}

/// The rules of the gates, printed by `shootout compare --help`.
const GATE_RULES: &str = "\
How the verdicts and gates work:
  Steps of A and B are paired by contender name × workload × load level. For each pair,
  the median req/s and median p99 of each run are compared, two-sided at alpha = 0.05:
  'faster', 'slower' or 'no significant change' (noise). req/s: with 4 or more
  repetitions on each side (3 and 5, or 2 and 8, also do), a Mann-Whitney U test of the
  repetitions; with fewer, Student's t on the ratio of the mean per-second good answers
  inside the steps (consecutive seconds' correlation counted, and the spread between
  repetitions when it is larger), which needs 6 full seconds per side; shorter steps are
  read by tenths of a second. Steps whose lengths differ more than 1.5 times between the
  runs (a --quick run against a full one) are said to be 'unlike steps', and a verdict
  that rested on tenths is withdrawn; the rankings of such a level say so too (each
  order is its own run's, and a swap is no failed re-run). A significant change reads
  '1.25 times slower (1.21–1.30, p=...)': the ratio and its 95% interval.
  p99: a Mann-Whitney U test of the repetitions' p99s. Without enough evidence for any
  outcome to be significant, the verdict is 'too little evidence'.

  --fail-if-slower PCT fails (exit 1) when, for any pair, the median req/s of B is more
  than PCT percent below A's AND the test says 'slower'. A drop the test calls noise does
  not fail; a drop that could not be tested is reported ('not tested: ...') and does not
  fail either. It also fails when a contender measured in A failed in B (crashed, failed
  verification, never became ready...).

  --fail-if-p99-above MS fails when the median p99 of any contender × workload × level of
  run B is above MS milliseconds.

  Exit codes: 0 no gate failed, 1 a gate failed (each failure listed on stderr) or the runs
  have nothing in common, 2 bad usage (no such store or run).";

/// `5%`, `5`, `2.5 %` → 5.0, 5.0, 2.5 (strictly between 0 and 100).
fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage: write e.g. 5% or 2.5"))?;
    if v > 0.0 && v < 100.0 {
        Ok(v)
    } else {
        Err(format!(
            "'{s}': the percentage must be above 0 and below 100"
        ))
    }
}

/// `20`, `20ms`, `1.5 ms` → milliseconds (positive).
fn parse_ms(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches("ms")
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of milliseconds: write e.g. 20 or 2.5ms"))?;
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(format!("'{s}': the limit must be above 0 ms"))
    }
}

/// Runs `shootout compare`; returns the exit code.
pub fn compare(a: CompareArgs) -> Result<i32, Failure> {
    let fmt = a.format;
    let store = open_store(&a.db)?;
    let run_a = load_run(&store, &a.db, Some(a.a))?;
    let run_b = load_run(&store, &a.db, Some(a.b))?;
    let gates = Gates {
        fail_if_slower_percent: a.fail_if_slower,
        fail_if_p99_above_ms: a.fail_if_p99_above,
    };
    let c = Comparison::of(&run_a, &run_b, gates);
    emit(&compare::render(fmt, &c))?;
    if c.pairs.is_empty() && c.capacities.is_empty() {
        return Err(Failure::run(anyhow!(
            "runs {} and {} have no contender × workload × load level (or capacity search) in common: nothing to compare",
            a.a,
            a.b
        )));
    }
    let asked = compare::gates_text(&c.gates).join(" ");
    if c.failed() {
        say!(
            "error: run {} failed {asked}: {} against run {}:",
            a.b,
            failures(c.violations.len()),
            a.a
        );
        for v in &c.violations {
            say!("  - {}", compare::violation_text(&c, v));
        }
        return Ok(1);
    }
    if !asked.is_empty() {
        say!("✓ run {} passed {asked} against run {}", a.b, a.a);
        for w in &c.warnings {
            if matches!(w, compare::CompareWarning::Untested { .. }) {
                say!("  - {}", compare::warning_text(&c, w));
            }
        }
    }
    Ok(0)
}

/// `1 failure`, `3 failures`.
fn failures(n: usize) -> String {
    format!("{n} failure{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_and_milliseconds() {
        assert_eq!(parse_percent("5%"), Ok(5.0));
        assert_eq!(parse_percent(" 2.5 % "), Ok(2.5));
        assert_eq!(parse_percent("5"), Ok(5.0));
        assert!(parse_percent("0%").is_err());
        assert!(parse_percent("150").is_err());
        assert!(parse_percent("five")
            .unwrap_err()
            .contains("not a percentage"));
        assert_eq!(parse_ms("20"), Ok(20.0));
        assert_eq!(parse_ms("1.5 ms"), Ok(1.5));
        assert!(parse_ms("-1").is_err());
        assert!(parse_ms("fast").is_err());
    }
}
