//! `shootout run --dry-run`: what the plan would run, started nothing.

use super::describe;
use shootout_model::plan::{Plan, Span};
use shootout_model::threshold::Threshold;
use shootout_model::Wire;
use shootout_report::{plural, tenths_secs};

/// How contender `ci`, which has its own wire keys, is spoken to: `h2 × 10 streams`, or
/// per workload when the workloads make it differ.
fn contender_wire(plan: &Plan, ci: usize) -> String {
    let wires: Vec<String> = (0..plan.workloads.len())
        .map(|wi| plan.wire(ci, wi).to_string())
        .collect();
    if wires.iter().all(|w| *w == wires[0]) {
        return wires[0].clone();
    }
    let each: Vec<String> = plan
        .workloads
        .iter()
        .zip(&wires)
        .map(|(w, wire)| format!("{wire} on {}", w.name))
        .collect();
    each.join(", ")
}

pub(super) fn dry_run(plan: &Plan) -> String {
    let d = &plan.defaults;
    let mut out = format!("plan: {}\n\ncontenders:\n", plan.name);
    for (i, c) in plan.contenders.iter().enumerate() {
        let base = if i == plan.baseline() {
            " (baseline)"
        } else {
            ""
        };
        out.push_str(&format!("  {}{base}: {}\n", c.name, describe(&c.launch)));
        if !c.wire.is_empty() {
            out.push_str(&format!("    spoken {}\n", contender_wire(plan, i)));
        }
    }
    out.push_str("\nworkloads:\n");
    for w in &plan.workloads {
        let what = match &w.list {
            Some(l) => format!(
                "{} requests from {}{}",
                l.entries.len(),
                l.source,
                if l.order == shootout_model::requests::Order::Random {
                    format!(", random order (seed {})", l.seed)
                } else {
                    String::new()
                }
            ),
            None => format!("{} {}", w.method, w.path),
        };
        let wire = w.wire();
        let spoken = if wire == Wire::default() {
            String::new()
        } else {
            format!(", {wire}")
        };
        out.push_str(&format!(
            "  {}: {what}{spoken} (expect status {}{}{})\n",
            w.name,
            w.expect.status.describe(),
            w.expect
                .length
                .map_or(String::new(), |n| format!(", {n} bytes")),
            w.expect
                .body_contains
                .as_ref()
                .map_or(String::new(), |b| format!(
                    ", body containing {:?}",
                    String::from_utf8_lossy(b)
                )),
        ));
    }
    let span = |s: Span| match s {
        Span::Time(t) => tenths_secs(t),
        Span::Requests(n) => format!("{n} requests"),
    };
    // A stage's own length shows beside it; the others last `d.measure`.
    let levels: Vec<String> = plan
        .levels
        .iter()
        .map(|l| match l.measure {
            Some(m) => format!("{} ({})", l.level, span(m)),
            None => l.level.to_string(),
        })
        .collect();
    let per_level = plan.contenders.len() * plan.workloads.len() * d.repeat as usize;
    let steps = per_level * plan.levels.len();
    out.push_str(&format!(
        "\nload: {}\nsteps: {steps} ({} × {} × {} × {}), each {}, warm-up {}, cooldown {}\n",
        levels.join(", "),
        plural(plan.contenders.len(), "contender", "contenders"),
        plural(plan.workloads.len(), "workload", "workloads"),
        plural(plan.levels.len(), "level", "levels"),
        plural(d.repeat as usize, "repetition", "repetitions"),
        if plan.levels.iter().all(|l| l.measure.is_some()) {
            "as its stage says".to_string()
        } else {
            span(d.measure)
        },
        d.warmup.map_or("none".into(), span),
        tenths_secs(d.cooldown)
    ));
    let timed: Option<f64> = plan
        .levels
        .iter()
        .map(|l| match l.measure.unwrap_or(d.measure) {
            Span::Time(t) => Some(t.as_secs_f64() * per_level as f64),
            Span::Requests(_) => None,
        })
        .sum();
    if let Some(measuring) = timed {
        let total = measuring + d.cooldown.as_secs_f64() * steps as f64;
        out.push_str(&format!("about {total:.0} s of measurement\n"));
    }
    let own: Vec<_> = plan
        .contenders
        .iter()
        .filter(|c| !c.fail_if.is_empty())
        .collect();
    if !d.fail_if.is_empty() || !own.is_empty() {
        let list = |ts: &[Threshold]| {
            ts.iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(
            "\nfail if (exit 3), judged per contender × workload × level after the run:\n",
        );
        if !d.fail_if.is_empty() {
            out.push_str(&format!("  every contender: {}\n", list(&d.fail_if)));
        }
        for c in own {
            out.push_str(&format!("  {}: {}\n", c.name, list(&c.fail_if)));
        }
    }
    out
}
