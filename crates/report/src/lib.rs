//! Renderings of one load run (`shootout load`'s output): a compact human report
//! ([`Format::Text`]), ab 2.3's report label for label ([`Format::Ab`]), wrk 4's layout
//! ([`Format::Wrk`]), a JSON document ([`Format::Json`], schema in `docs/load-json.md`),
//! CSV records ([`Format::Csv`]) and a Markdown page ([`Format::Markdown`]),
//! plus ab's `-e` percentile CSV and `-g` gnuplot TSV files. Renderings of stored shootout
//! runs are in [`shootout`] (text, Markdown, JSON, CSV: `shootout report`, and the closing
//! table of `shootout run`), [`compare`] (`shootout compare`) and [`html`] (the
//! self-contained HTML report). What the numbers say — cells, statistics, warnings,
//! verdicts — is computed in `shootout-analysis`; this crate only lays it out.
//!
//! Seams: every rendering reads only a [`LoadSpec`] (what was run) and a [`RunResult`]
//! (what was measured, histograms in microseconds) from `shootout-model`; nothing here
//! does I/O, so the same result always renders to the same bytes, whether it comes from
//! the engine or from the store. Each format is an [`Exporter`], picked by the [`Format`]
//! enum at the edge (the CLI's `--format`). The run reports read a
//! [`StoredRun`](shootout_model::stored::StoredRun) — what the store gave back, nothing else.

mod ab;
pub mod capacity;
mod ci;
mod common;
pub mod compare;
mod csv;
mod grid;
pub mod html;
mod json;
mod kinds;
mod markdown;
mod safe;
pub mod schema;
mod sentences;
pub mod shootout;
mod text;
mod units;
mod wrk;

#[cfg(test)]
mod fixtures;

use shootout_analysis::stats;
use shootout_model::{Choice, LoadSpec, RunResult};
use std::fmt;
use std::str::FromStr;

pub use ab::{ab_gnuplot_tsv, ab_percentiles_csv, AbOptions};
pub use common::{counted_unit, per_second};
pub use grid::{plural, utc_seconds};
pub use json::{json, SCHEMA_VERSION};
pub use safe::{csv_text, html_text, terminal_line, terminal_text};
pub use text::warnings;
pub use units::{human_span, ms3, plain_secs, tenths_secs};

/// A rendering of one load run, chosen with `--format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// shootout's own compact report for humans (the default).
    #[default]
    Text,
    /// ab 2.3's report, label for label, for scripts that parse ab.
    Ab,
    /// wrk 4's report (with `--latency`'s distribution), for scripts that parse wrk.
    Wrk,
    /// One JSON document; the schema is in `docs/load-json.md`.
    Json,
    /// CSV: a record for the run, then one per request list entry, journey step and
    /// journey.
    Csv,
    /// Markdown: the run's facts, latency and per-kind tables (entries, steps, journeys).
    Markdown,
}

impl Choice for Format {
    const ALL: &'static [Format] = &[
        Format::Text,
        Format::Ab,
        Format::Wrk,
        Format::Json,
        Format::Csv,
        Format::Markdown,
    ];

    fn names(self) -> &'static [&'static str] {
        match self {
            Format::Text => &["text"],
            Format::Ab => &["ab"],
            Format::Wrk => &["wrk"],
            Format::Json => &["json"],
            Format::Csv => &["csv"],
            Format::Markdown => &["markdown", "md"],
        }
    }
}

impl Format {
    /// The exporter that renders this format; `ab` is what ab's `-l` and `-S` change.
    pub fn exporter(self, ab: AbOptions) -> Box<dyn Exporter> {
        match self {
            Format::Text => Box::new(text::Text),
            Format::Ab => Box::new(ab::Ab(ab)),
            Format::Wrk => Box::new(wrk::Wrk),
            Format::Json => Box::new(json::Json),
            Format::Csv => Box::new(csv::Csv),
            Format::Markdown => Box::new(markdown::Markdown),
        }
    }

    /// True for another tool's layout (ab's, wrk's) and for CSV, which stay parseable:
    /// the run's warnings are not in them and go to stderr instead ([`warnings`]).
    pub fn warnings_apart(self) -> bool {
        matches!(self, Format::Ab | Format::Wrk | Format::Csv)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--format` value that names no format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a report format: choose one of {choices}", choices = Format::list(", "))]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Parses a format's name (case-insensitive, surrounding blanks ignored).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::named(s).ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// One rendering of a load run. Implementations are pure: same input, same bytes.
pub trait Exporter {
    /// Renders what `result` measured of the run described by `spec`; the text ends with a
    /// newline.
    fn render(&self, spec: &LoadSpec, result: &RunResult) -> String;
}

/// Renders `result` of the run `spec` in `format` (ab's with the options `ab`); the text
/// ends with a newline.
pub fn render(format: Format, ab: AbOptions, spec: &LoadSpec, result: &RunResult) -> String {
    format.exporter(ab).render(spec, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name_and_the_error_lists_the_choices() {
        for &f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string().parse::<Format>(), Ok(f));
        }
        assert_eq!(" JSON ".parse::<Format>(), Ok(Format::Json));
        let e = "xml".parse::<Format>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "'xml' is not a report format: choose one of text, ab, wrk, json, csv, markdown"
        );
        assert_eq!(Format::default(), Format::Text);
    }

    /// True when a word of `text` is how Rust or C print a non-finite float.
    fn has_nan_or_inf(text: &str) -> bool {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"))
    }

    #[test]
    fn no_format_prints_nan_or_infinity_even_for_an_empty_instant_run() {
        for (name, spec, mut result) in fixtures::all() {
            for duration in [result.duration, std::time::Duration::ZERO] {
                result.duration = duration;
                for &f in Format::ALL {
                    let out = render(f, AbOptions::default(), &spec, &result);
                    assert!(
                        !has_nan_or_inf(&out),
                        "{name} in {f} for {duration:?}:\n{out}"
                    );
                    assert!(out.ends_with('\n'), "{name} in {f}");
                }
                let side_files = ab_percentiles_csv(&result) + &ab_gnuplot_tsv(&result);
                assert!(!has_nan_or_inf(&side_files), "{name}");
            }
        }
    }

    /// The line of `text` that starts with `label`.
    fn line<'a>(text: &'a str, label: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in:\n{text}"))
    }

    #[test]
    fn load_headline_counts_good_answers_not_failed_ones() {
        // Every answer a 404: requests completed fast, and not one good answer.
        let (spec, mut r) = fixtures::closed_with_failures();
        r.counts.failures[shootout_model::FailureKind::Status] += r.counts.ok;
        r.counts.ok = 0;
        assert!(r.rps() > 100.0, "{}", r.rps());
        let all = format!("{:.2}", r.rps());

        let text = render(Format::Text, AbOptions::default(), &spec, &r);
        assert_eq!(
            line(&text, "Throughput"),
            format!("Throughput    0.00 req/s ok (good answers only; {all} req/s counting failed ones), 191.97 KiB/s received")
        );
        let doc = json(&spec, &r);
        assert_eq!(doc["rps"], 0.0);
        assert_eq!(
            doc["completed_rps"].as_f64(),
            Some((r.rps() * 1e3).round() / 1e3)
        );
        // ab and wrk keep their tools' meaning and add the rate of good answers.
        let ab = render(Format::Ab, AbOptions::default(), &spec, &r);
        assert_eq!(
            line(&ab, "Requests per second:"),
            format!("Requests per second:    {all} [#/sec] (mean)")
        );
        assert_eq!(
            line(&ab, "Good answers per sec:"),
            "Good answers per sec:   0.00 [#/sec] (mean, failed requests left out)"
        );
        let wrk = render(Format::Wrk, AbOptions::default(), &spec, &r);
        assert_eq!(
            line(&wrk, "Requests/sec:"),
            format!("Requests/sec: {all:>9}")
        );
        assert_eq!(
            line(&wrk, "Good answers/sec:"),
            "Good answers/sec:      0.00"
        );
    }

    /// One request has a time, not a rate: its report said `Throughput 2163.99 req/s`.
    #[test]
    fn one_request_reports_its_time_not_a_rate() {
        let (spec, r) = fixtures::one_request();
        assert_eq!(r.counts.completed, 1);
        let text = render(Format::Text, AbOptions::default(), &spec, &r);
        assert_eq!(
            line(&text, "Request time"),
            "Request time  0.462 ms for the one request, 180 B received (a rate needs more: -n 1000, or -d 10s)"
        );
        assert!(!text.contains("req/s"), "{text}");
    }

    #[test]
    fn the_good_answer_line_is_added_only_when_some_failed() {
        let (spec, r) = fixtures::interrupted();
        assert_eq!(r.counts.ok, r.counts.completed);
        let text = render(Format::Text, AbOptions::default(), &spec, &r);
        assert!(
            line(&text, "Throughput").contains(" req/s ok (good answers only), "),
            "{text}"
        );
        assert!(!render(Format::Ab, AbOptions::default(), &spec, &r).contains("Good answers"));
        assert!(!render(Format::Wrk, AbOptions::default(), &spec, &r).contains("Good answers"));
    }

    #[test]
    fn snapshots_of_every_format_and_side_file() {
        for (name, spec, result) in fixtures::all() {
            for &f in Format::ALL {
                insta::assert_snapshot!(
                    format!("{f}_{name}"),
                    render(f, AbOptions::default(), &spec, &result)
                );
            }
            insta::assert_snapshot!(format!("ab_e_{name}"), ab_percentiles_csv(&result));
            insta::assert_snapshot!(format!("ab_g_{name}"), ab_gnuplot_tsv(&result));
        }
    }
}
