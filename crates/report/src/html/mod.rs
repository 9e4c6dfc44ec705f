//! The self-contained HTML report (tables and SVG charts in one file that opens offline).
//! A stub until the charts land: the signatures are the seam the CLI calls.

use shootout_model::{LoadSpec, RunResult};
use shootout_store::StoredRun;

/// The HTML report of a stored shootout run.
pub fn render_run(run: &StoredRun) -> String {
    format!("<!doctype html><title>{}</title>", escape(&run.run.name))
}

/// The HTML report of one `shootout load`.
pub fn render_load(spec: &LoadSpec, _result: &RunResult) -> String {
    format!("<!doctype html><title>{}</title>", escape(&spec.target.url))
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
