//! A run's capacity searches as its reports show them: per workload searched, the
//! capacity of each contender (the median of its searches, the bracket of all of them,
//! what limited it, against the baseline), the order with how sure each place is
//! (`nginx > caddy ≈ httpd`), and every step of every search. The figures and the
//! verdicts are the analysis' ([`shootout_analysis::capacities`]); this builds the tables
//! once, and each format lays them out.

pub(crate) use crate::capacity::rate;
use crate::capacity::{
    decision_json, decision_words, ended_cell, limit_json, measured_step_json, step_row,
    ENDED_LEGEND, STEP_HEADER, STEP_LEGEND,
};
use crate::grid::{Align, Table};
use crate::units::round;
use serde_json::{json, Value};
use shootout_analysis::capacities::{ContenderCapacity, WorkloadCapacity};
use shootout_analysis::capacity::Limit;
use shootout_analysis::ranking::Relation;
use shootout_analysis::Analysis;
use shootout_model::find_max::EndRule;
use shootout_model::Choice;

/// The section's title: `api: capacity within p99<50ms, errors<0.1%`, and `, each step
/// to its deadline (the fixed rule)` after it for a search whose steps all ran so
/// (`find_max.step_end = "deadline"`).
pub(crate) fn title(w: &WorkloadCapacity) -> String {
    let rule = match w.find_max.step_end {
        EndRule::Decided => "",
        EndRule::Deadline => ", each step to its deadline (the fixed rule)",
    };
    format!(
        "{}: capacity within {}{rule}",
        w.workload,
        w.find_max.slo.join(", ")
    )
}

/// What limited a search, in a few words.
pub(crate) fn limit_words(slo: &[String], l: Option<&Limit>) -> String {
    match l {
        Some(Limit::Slo(i)) => format!("{} broke", slo.get(*i).map_or("an SLO", String::as_str)),
        Some(Limit::ConnectionCap(i)) => format!(
            "{} broke at the connection cap",
            slo.get(*i).map_or("an SLO", String::as_str)
        ),
        Some(Limit::Generator) => "the generator".into(),
        Some(Limit::Ceiling) => "the search's end (raise to)".into(),
        None => "–".into(),
    }
}

/// `7300`, `≥ 1000000` (every rate met), `< 100` (the first rate broke) or `–` (no
/// search finished).
fn capacity_cell(c: &ContenderCapacity) -> String {
    match (c.max_rps, c.high) {
        (Some(m), None) => format!("≥ {}", rate(m)),
        (Some(m), Some(h)) if m <= 0.0 => format!("< {}", rate(h)),
        (Some(m), Some(_)) => rate(m),
        _ => "–".into(),
    }
}

/// `7000–7650`: the least rate met and the greatest broken over the searches.
fn bracket_cell(c: &ContenderCapacity) -> String {
    match (c.low, c.high) {
        (Some(lo), Some(hi)) => format!("{}–{}", rate(lo), rate(hi)),
        (Some(lo), None) => format!("{}–", rate(lo)),
        _ => "–".into(),
    }
}

/// `97%` of the baseline's capacity, or `–`.
fn percent_cell(w: &WorkloadCapacity, c: &ContenderCapacity, base: Option<usize>) -> String {
    let Some(b) = base.and_then(|b| w.of(b)) else {
        return "–".into();
    };
    WorkloadCapacity::against(c, b).map_or("–".into(), |(r, _, _)| format!("{:.0}%", r * 100.0))
}

/// The searches of a contender: `3` or `2 of 3 finished`.
fn searches_cell(c: &ContenderCapacity) -> String {
    let done = c.finished().count();
    if done == c.searches.len() {
        done.to_string()
    } else {
        format!("{done} of {} finished", c.searches.len())
    }
}

/// The capacity table: one row per contender, in plan order.
pub(crate) fn table(a: &Analysis, w: &WorkloadCapacity) -> Table {
    let capacity = format!("capacity {}", w.find_max.unit());
    let header = [
        "contender",
        capacity.as_str(),
        "met–broke",
        "vs base",
        "limited by",
        "searches",
    ];
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    align[4] = Align::Left;
    let rows = w
        .contenders
        .iter()
        .map(|c| {
            let mut name = a.name(c.contender).to_string();
            if Some(c.contender) == a.baseline {
                name.push_str(" (baseline)");
            }
            vec![
                name,
                capacity_cell(c),
                bracket_cell(c),
                percent_cell(w, c, a.baseline),
                limit_words(&w.find_max.slo, c.limited_by.as_ref()),
                searches_cell(c),
            ]
        })
        .collect();
    Table {
        header: header.map(String::from).to_vec(),
        align,
        rows,
    }
}

/// The order, most capacity first: `nginx > caddy ≈ httpd` (`?` where a contender has no
/// finished search).
pub(crate) fn ranking(a: &Analysis, w: &WorkloadCapacity) -> Option<String> {
    if w.order.len() < 2 {
        return None;
    }
    let mut line = a.name(w.contenders[w.order[0]].contender).to_string();
    for (place, &next) in w.places.iter().zip(&w.order[1..]) {
        line.push_str(&format!(
            " {} {}",
            place.relation.sign(),
            a.name(w.contenders[next].contender)
        ));
    }
    Some(line)
}

/// The answer a page opens with for a workload searched: `nginx sustains the most, 23600
/// req/s within p99<20ms, errors<1%: 2.71× caddy (every search of nginx met a rate
/// caddy's broke)`; `None` with fewer than two contenders ranked.
pub(crate) fn headline(a: &Analysis, w: &WorkloadCapacity) -> Option<String> {
    let (first, second) = (w.order.first()?, w.order.get(1)?);
    let (c1, c2) = (&w.contenders[*first], &w.contenders[*second]);
    let place = w.places.first()?;
    let (n1, n2) = (a.name(c1.contender), a.name(c2.contender));
    let slo = w.find_max.slo.join(", ");
    let how = match place.relation {
        Relation::MuchFaster | Relation::Faster => {
            format!("every search of {n1} met a rate {n2}'s broke")
        }
        Relation::Tie => format!("not told apart from {n2}: their searches overlap"),
        Relation::Untested => "a search did not finish".to_string(),
    };
    let m = c1.max_rps?;
    if m <= 0.0 {
        return Some(format!(
            "no contender met {slo} at the first rate tried, {} {}",
            rate(w.find_max.from),
            w.find_max.unit()
        ));
    }
    let times = if place.ratio.is_finite() {
        format!("{:.2}× {n2}", place.ratio)
    } else {
        format!("{n2} met no rate")
    };
    Some(format!(
        "{n1} sustains the most, {} {} within {slo}: {times} ({how})",
        rate(m),
        w.find_max.unit()
    ))
}

/// Every step of every search: contender, repetition, offered and achieved rate, latency,
/// errors, whether the schedule was kept, and the verdict; where the store kept how the
/// steps ended, how long each measured and how it ended too (as `load --find-max`'s
/// table says them).
pub(crate) fn steps_table(a: &Analysis, w: &WorkloadCapacity) -> Table {
    let ended = ended_known(w);
    let mut header: Vec<String> = ["contender", "rep"]
        .into_iter()
        .chain(STEP_HEADER)
        .map(String::from)
        .collect();
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    // The words: sends and verdict.
    align[header.len() - 2] = Align::Left;
    align[header.len() - 1] = Align::Left;
    if ended {
        header.extend(["s".to_string(), "ended".to_string()]);
        align.extend([Align::Right, Align::Left]);
    }
    let mut rows = Vec::new();
    for c in &w.contenders {
        for s in &c.searches {
            for m in &s.measured {
                let mut row = vec![a.name(c.contender).to_string(), s.repetition.to_string()];
                row.extend(step_row(&w.find_max.slo, m));
                if ended {
                    row.push(format!("{:.1}", m.measured.as_secs_f64()));
                    row.push(ended_cell(&w.find_max.slo, m));
                }
                rows.push(row);
            }
        }
    }
    Table {
        header,
        align,
        rows,
    }
}

/// Whether the store kept how any step of `w`'s searches ended (not in runs stored
/// before it did).
fn ended_known(w: &WorkloadCapacity) -> bool {
    w.contenders
        .iter()
        .flat_map(|c| &c.searches)
        .flat_map(|s| &s.measured)
        .any(|m| m.ended.is_some())
}

/// The legend under the table of every step ([`steps_table`]): what its words say, and
/// its `s` and `ended` columns when it has them.
pub(crate) fn step_legend(w: &WorkloadCapacity) -> Vec<&'static str> {
    let mut lines = STEP_LEGEND.to_vec();
    if ended_known(w) {
        lines.push(ENDED_LEGEND);
    }
    lines
}

/// How each search's boundary rates were decided: contender, repetition, and in words
/// the rate, its verdict, its steps and on what (`22600 req/s broke p99<50ms in 5 steps
/// (unclear, and all their requests together broke it)`).
pub(crate) fn boundary_table(a: &Analysis, w: &WorkloadCapacity) -> Table {
    let mut rows = Vec::new();
    for c in &w.contenders {
        for s in &c.searches {
            for d in &s.boundary {
                rows.push(vec![
                    a.name(c.contender).to_string(),
                    s.repetition.to_string(),
                    decision_words(&w.find_max.slo, d, w.find_max.unit()),
                ]);
            }
        }
    }
    Table {
        header: ["contender", "rep", "boundary rate, as decided"]
            .map(String::from)
            .to_vec(),
        align: vec![Align::Left, Align::Right, Align::Left],
        rows,
    }
}

/// The legend under the ranking.
pub(crate) const LEGEND: &str = "capacity: the median of each contender's searches; met–broke: the least rate met and the greatest broken over them; \">\": every search of the first met a rate the other's broke (\"≫\": with twice the margin), \"≈\": the searches overlap, \"?\": a search did not finish";

/// The capacities as JSON: per workload, the SLOs, the order, and per contender its
/// capacity, bracket, ratio to the baseline and every search with its steps.
pub(crate) fn json(a: &Analysis) -> Value {
    let all: Vec<Value> = a
        .capacities
        .iter()
        .map(|w| {
            let contenders: Vec<Value> = w
                .contenders
                .iter()
                .map(|c| contender_json(a, w, c))
                .collect();
            json!({
                "workload": w.workload,
                "slo": w.find_max.slo,
                "from": w.find_max.from,
                "to": w.find_max.to,
                "unit": w.find_max.unit(),
                "step_end": w.find_max.step_end.name(),
                "ranking": ranking(a, w),
                "contenders": contenders,
            })
        })
        .collect();
    Value::Array(all)
}

/// One contender's capacity as JSON.
fn contender_json(a: &Analysis, w: &WorkloadCapacity, c: &ContenderCapacity) -> Value {
    let vs = a
        .baseline
        .and_then(|b| w.of(b))
        .and_then(|b| WorkloadCapacity::against(c, b))
        .map(|(r, lo, hi)| json!({"ratio": round(r, 4), "low": round(lo, 4), "high": hi.map(|h| round(h, 4))}));
    let slo = &w.find_max.slo;
    let searches: Vec<Value> = c
        .searches
        .iter()
        .map(|s| {
            let steps: Vec<Value> = s
                .measured
                .iter()
                .map(|m| measured_step_json(slo, m))
                .collect();
            json!({
                "repetition": s.repetition,
                "complete": s.complete,
                "max_rps": s.capacity.max_rps.map(|x| round(x, 3)),
                "first_failing_rps": s.capacity.first_failing_rps.map(|x| round(x, 3)),
                "limited_by": limit_json(slo, &s.capacity.limited_by),
                "boundary": s.boundary.iter().map(|d| decision_json(slo, d)).collect::<Vec<_>>(),
                "steps": steps,
            })
        })
        .collect();
    json!({
        "contender": a.name(c.contender),
        "max_rps": c.max_rps.map(|x| round(x, 3)),
        "interval": [c.low.map(|x| round(x, 3)), c.high.map(|x| round(x, 3))],
        "limited_by": c.limited_by.as_ref().map(|l| limit_json(slo, l)),
        "vs_baseline": vs,
        "searches": searches,
    })
}
