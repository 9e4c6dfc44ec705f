//! The HTML page's capacity searches: per workload searched, the capacity table and the
//! order (as the text report has them), then a chart of latency against the offered
//! rate: one line per contender through the median of its steps at each rate, every step
//! a dot (its verdict in the tooltip), the SLO's limit as a dotted line and each
//! contender's capacity marked by a dotted vertical line in its colour. The latency drawn
//! is that of the search's first latency SLO (p99 when it has none).

use super::charts::{Who, MAIN};
use super::svg::{Axis, Chart, Mark, Series, Stroke};
use crate::safe::html_text;
use crate::shootout::capacity as words;
use shootout_analysis::capacities::{ContenderCapacity, WorkloadCapacity};
use shootout_analysis::{median, Analysis};
use shootout_model::threshold::{Metric, Threshold};
use shootout_model::LoadLevel;
use std::fmt::Write;

/// Every workload searched, each with its table, order and chart.
pub(super) fn sections(o: &mut String, a: &Analysis, who: &[Who]) {
    for w in &a.capacities {
        let _ = writeln!(o, "<h2>Capacity: {}</h2>", html_text(&words::title(w)));
        words::table(a, w).html(o);
        if let Some(r) = words::ranking(a, w) {
            let _ = writeln!(
                o,
                "<p class=\"note\">{}:</p>\n<ul class=\"ranking\"><li>{}</li></ul>",
                html_text(words::LEGEND),
                html_text(&r)
            );
        }
        let (q, _) = drawn(w);
        let _ = writeln!(
            o,
            "<p class=\"note\">The line runs through the median {} of each contender's steps at each rate; each dot is a step (hover for its verdict); the dotted horizontal line is the SLO, each dotted vertical line a contender's capacity.</p>",
            quantile_name(q)
        );
        // One chart alone in its row, sized as the grid's charts are (its text at their
        // size, not stretched to the page's width).
        let _ = writeln!(o, "<div class=\"charts one\">{}</div>", chart(w, who).svg());
        let boundary = words::boundary_table(a, w);
        if !boundary.rows.is_empty() {
            o.push_str("<p class=\"note\">How each search decided its boundary:</p>\n");
            boundary.html(o);
        }
        o.push_str("<details><summary>Every step</summary>\n");
        words::steps_table(a, w).html(o);
        for l in words::step_legend(w) {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", html_text(l));
        }
        o.push_str("</details>\n");
    }
}

/// The latency quantile a search's chart draws (thousandths) and its SLO limit in ms,
/// from its first latency SLO; p99 and no limit when it has none.
fn drawn(w: &WorkloadCapacity) -> (u16, Option<f64>) {
    w.find_max
        .slo
        .iter()
        .filter_map(|s| s.parse::<Threshold>().ok())
        .find_map(|t| match t.metric {
            Metric::Quantile(q) => Some((q, Some(t.limit / 1e3))),
            _ => None,
        })
        .unwrap_or((990, None))
}

/// `p99`, `p99.9`, `p50`.
fn quantile_name(q: u16) -> String {
    let p = f64::from(q) / 10.0;
    format!("p{}", crate::units::trim_float(p))
}

/// The chart of one workload searched.
fn chart(w: &WorkloadCapacity, who: &[Who]) -> Chart {
    let (q, limit) = drawn(w);
    let name = quantile_name(q);
    let mut series: Vec<Series> = w
        .contenders
        .iter()
        .filter_map(|c| {
            who.get(c.contender)
                .map(|p| contender_series(c, p, q, &name, w.find_max.unit()))
        })
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.ys().collect::<Vec<_>>())
        .collect();
    let y = latency_axis(&format!("{name} latency (ms)"), &ys, limit);
    for c in &w.contenders {
        let (Some(m), Some(p)) = (c.max_rps.filter(|m| *m > 0.0), who.get(c.contender)) else {
            continue;
        };
        let mut s = Series::new(format!("{} capacity {}", p.name, words::rate(m)), p.color);
        s.stroke = Stroke::Dotted;
        s.line = vec![(m, y.lo), (m, y.hi)];
        series.push(s);
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.xs().collect::<Vec<_>>())
        .collect();
    let (lo, hi) = xs
        .iter()
        .filter(|x| **x > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
    if let (Some(limit), true) = (limit, hi > 0.0) {
        let mut s = Series::new(format!("SLO {name} < {} ms", trim(limit)), "#555555");
        s.stroke = Stroke::Dotted;
        s.line = vec![(lo, limit), (hi, limit)];
        series.push(s);
    }
    let title = format!("offered rate ({})", w.find_max.unit());
    let x = if hi > 0.0 {
        Axis::log(&title, lo, hi)
    } else {
        Axis::linear(&title, 0.0, 1.0)
    };
    Chart {
        title: format!("{name} latency by offered rate"),
        note: String::new(),
        x,
        y,
        series,
        width: MAIN.0,
        height: MAIN.1,
    }
}

/// The latency axis of a search's chart, holding every latency `ys` and the SLO's
/// `limit` (ms): a log axis when they span a decade or more, so that a 50 ms limit stays
/// in sight beside steps that took seconds (on a linear 0–4,000 ms axis it lay on the
/// floor); linear from zero otherwise.
fn latency_axis(title: &str, ys: &[f64], limit: Option<f64>) -> Axis {
    let (lo, hi) = ys
        .iter()
        .copied()
        .chain(limit)
        .filter(|y| y.is_finite() && *y > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), y| (l.min(y), h.max(y)));
    if limit.is_some() && lo.is_finite() && hi / lo >= 10.0 {
        Axis::log(title, lo, hi)
    } else {
        Axis::fit(title, [0.0, hi], true)
    }
}

/// A number without trailing zeros, to three decimals.
fn trim(v: f64) -> String {
    crate::units::trim_float(crate::units::round(v, 3))
}

/// One contender's line (the median at each rate) and dots (every step), rates in `unit`.
fn contender_series(c: &ContenderCapacity, who: &Who, q: u16, name: &str, unit: &str) -> Series {
    let mut s = Series::new(who.name.to_string(), who.color);
    let mut at: Vec<(f64, Vec<f64>)> = Vec::new();
    for search in &c.searches {
        for step in &search.steps {
            let (LoadLevel::Rate { rps, .. }, Some(mark)) = (step.level, &step.search) else {
                continue;
            };
            let Some(verdict) = &mark.verdict else {
                continue;
            };
            let h = step.histogram(shootout_model::Measure::Latency);
            if h.is_empty() {
                continue;
            }
            let ms = h.value_at_quantile(f64::from(q) / 1000.0) as f64 / 1e3;
            s.marks.push(Mark {
                x: rps,
                y: ms,
                tip: format!(
                    "{} · {} {unit} · search {}: {name} {} ms, {}",
                    who.name,
                    words::rate(rps),
                    search.repetition,
                    trim(ms),
                    verdict.word()
                ),
            });
            match at.iter_mut().find(|(r, _)| *r == rps) {
                Some((_, v)) => v.push(ms),
                None => at.push((rps, vec![ms])),
            }
        }
    }
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    s.line = at.iter().map(|(r, v)| (*r, median(v))).collect();
    s.opacity = 0.6;
    s
}

#[cfg(test)]
mod tests {
    use super::super::svg::Scale;
    use super::*;

    /// A 50 ms SLO beside steps of up to 4 s: on the linear 0–4,000 ms axis the SLO's line
    /// lay on the floor, unseen; the log axis shows it well inside the frame.
    #[test]
    fn the_slo_line_shows_beside_steps_that_took_seconds() {
        let ys = [0.4, 3.0, 12.0, 48.0, 900.0, 4000.0];
        let y = latency_axis("p99 latency (ms)", &ys, Some(50.0));
        assert_eq!(y.scale, Scale::Log);
        let at = y.frac(50.0).unwrap();
        assert!((0.2..0.8).contains(&at), "{at}");
        assert!(y.frac(0.4).unwrap() >= 0.0 && y.frac(4000.0).unwrap() <= 1.0);
        // Latencies close to the limit: linear, from zero.
        let y = latency_axis("p99 latency (ms)", &[20.0, 40.0, 60.0], Some(50.0));
        assert_eq!((y.scale, y.lo), (Scale::Linear, 0.0));
    }
}
