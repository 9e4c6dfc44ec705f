//! `shootout run --dry-run`: what the plan would run, started nothing.

use super::describe;
use shootout_model::find_max::EndRule;
use shootout_model::plan::{Plan, Span, Workload};
use shootout_model::threshold::Threshold;
use shootout_model::{Protocol, Wire};
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

/// What `--dry-run` prints: the contenders, the workloads, the load and the steps, and the
/// `--fail-if` thresholds.
pub(super) fn dry_run(plan: &Plan) -> String {
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
        out.push_str(&workload_line(w));
    }
    out.push_str(&load_lines(plan));
    out.push_str(&thresholds(plan));
    out
}

/// `  name: GET /path, h2 × 10 streams (expect status 200, 12 bytes)`.
fn workload_line(w: &Workload) -> String {
    if w.protocol == Protocol::WebSocket {
        return websocket_line(w);
    }
    let what = match &w.list {
        None if w.journeys.is_some() => {
            let j = w
                .journeys
                .as_ref()
                .map_or((0, ""), |j| (j.file.journeys.len(), j.source.as_str()));
            format!(
                "{} from {} (seed {})",
                plural(j.0, "journey", "journeys"),
                j.1,
                w.seed
            )
        }
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
        None => format!("{} {}{}", w.method, w.path, grpc_note(w)),
    };
    let wire = w.wire();
    let spoken = if wire == Wire::default() {
        String::new()
    } else {
        format!(", {wire}")
    };
    format!(
        "  {}: {what}{spoken} (expect status {}{}{})\n{}",
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
        search_line(w),
    )
}

/// ` (gRPC, schema by reflection at start, messages compressed with gzip)`: where a gRPC
/// workload's schema comes from and how its messages go; empty for any other workload.
fn grpc_note(w: &Workload) -> String {
    let Some(g) = &w.grpc else {
        return String::new();
    };
    let schema = match (&g.proto, &g.protoset) {
        (Some(p), _) | (None, Some(p)) => format!("schema from {}", p.display()),
        (None, None) => "schema by reflection at start".to_string(),
    };
    let gzip = if g.compress {
        ", messages compressed with gzip"
    } else {
        ""
    };
    format!(" (gRPC, {schema}{gzip})")
}

/// `  name: /path over websocket × 4 in flight, a text message of 32 bytes (expect the
/// echo, 32 bytes)`: what a WebSocket workload sends and what its replies must be.
fn websocket_line(w: &Workload) -> String {
    let sends = match (&w.message, &w.body_file, w.hold) {
        _ if w.message_list.is_some() => {
            let l = w.message_list.as_ref().map_or((0, "", false), |l| {
                (
                    l.lines.len(),
                    l.source.as_str(),
                    l.order == shootout_model::requests::Order::Random,
                )
            });
            format!(
                "{} from {}{}",
                plural(l.0, "text message", "text messages"),
                l.1,
                if l.2 { ", random order" } else { ", in turn" }
            )
        }
        (_, _, Some(h)) => format!(
            "connections held, a ping every {}{}",
            tenths_secs(h.every),
            h.open_rate
                .map_or(String::new(), |r| format!(", opened at {r}/s"))
        ),
        (Some(m), _, _) => format!("a text message of {}", plural(m.len(), "byte", "bytes")),
        (None, Some(f), _) => format!("a binary message from {}", f.display()),
        (None, None, None) => "an empty binary message".to_string(),
    };
    let e = &w.expect;
    let mut expect = Vec::new();
    if e.echo {
        expect.push("the echo".to_string());
    }
    if let Some(n) = e.length {
        expect.push(format!("{n} bytes"));
    }
    if let Some(b) = &e.body_contains {
        expect.push(format!(
            "a reply containing {:?}",
            String::from_utf8_lossy(b)
        ));
    }
    let expect = match expect.is_empty() {
        true => String::new(),
        false => format!(" (expect {})", expect.join(", ")),
    };
    format!(
        "  {}: {} over {}, {sends}{expect}\n{}",
        w.name,
        w.path,
        w.wire(),
        search_line(w)
    )
}

/// A workload's capacity search, as a line under it; empty when its levels are swept.
/// A journey workload's rates are journeys a second, a gRPC workload's calls a second; a
/// search by the fixed rule says so.
fn search_line(w: &Workload) -> String {
    let unit = match (&w.journeys, &w.grpc) {
        (Some(_), _) => "journeys/s",
        (None, Some(_)) => "calls/s",
        (None, None) => "req/s",
    };
    w.find_max.as_ref().map_or(String::new(), |f| {
        let rule = match f.end_rule {
            EndRule::Decided => "",
            EndRule::Deadline => ", each step to its deadline (the fixed rule)",
        };
        format!(
            "    capacity search within {}, from {} to {} {unit}, {} {} at the start{rule}\n",
            f.slo.join(", "),
            f.from,
            f.to,
            f.connections,
            if f.connections == 1 {
                "connection"
            } else {
                "connections"
            }
        )
    })
}

/// A span as the dry run says it: `10.0 s`, `5000 requests`.
fn span(s: Span) -> String {
    match s {
        Span::Time(t) => tenths_secs(t),
        Span::Requests(n) => format!("{n} requests"),
    }
}

/// The capacity searches of the plan's `searched` workloads, and how their steps end:
/// until decided, or each to its deadline when every search runs by the fixed rule
/// (`step_end = "deadline"`); empty without a search.
fn search_lines(plan: &Plan, searched: usize) -> String {
    let d = &plan.defaults;
    if searched == 0 {
        return String::new();
    }
    let fixed = plan
        .workloads
        .iter()
        .filter_map(|w| w.find_max.as_ref())
        .all(|f| f.end_rule == EndRule::Deadline);
    let most = d.search_step_most.map_or(String::new(), |m| {
        format!(" and at most {}", tenths_secs(m))
    });
    let ends = if fixed {
        format!("to its deadline (at least {}{most})", span(d.measure))
    } else {
        format!(
            "until its SLOs are decided (met after at least {}, broken after at least {}, its deadline at least {}{most})",
            span(d.measure),
            tenths_secs(shootout_analysis::capacity::LEAST),
            span(d.measure)
        )
    };
    format!(
        "capacity searches: {} × {} × {}, each step after {} settling {ends}, as many steps as each search needs\n",
        plural(plan.contenders.len(), "contender", "contenders"),
        plural(searched, "workload", "workloads"),
        plural(d.repeat as usize, "repetition", "repetitions"),
        tenths_secs(shootout_analysis::capacity::SETTLE),
    )
}

/// The load levels, the steps they make and, when every step is timed, about how long
/// the measurement takes.
fn load_lines(plan: &Plan) -> String {
    let d = &plan.defaults;
    let swept = plan
        .workloads
        .iter()
        .filter(|w| w.find_max.is_none())
        .count();
    let search = search_lines(plan, plan.workloads.len() - swept);
    if swept == 0 {
        return format!("\n{search}");
    }
    // A stage's own length shows beside it; the others last `d.measure`.
    let levels: Vec<String> = plan
        .levels
        .iter()
        .map(|l| match l.measure {
            Some(m) => format!("{} ({})", l.level, span(m)),
            None => l.level.to_string(),
        })
        .collect();
    let per_level = plan.contenders.len() * swept * d.repeat as usize;
    let steps = per_level * plan.levels.len();
    let mut out = format!(
        "\nload: {}\nsteps: {steps} ({} × {} × {} × {}), each {}, warm-up {}, cooldown {}\n",
        levels.join(", "),
        plural(plan.contenders.len(), "contender", "contenders"),
        plural(swept, "workload", "workloads"),
        plural(plan.levels.len(), "level", "levels"),
        plural(d.repeat as usize, "repetition", "repetitions"),
        if plan.levels.iter().all(|l| l.measure.is_some()) {
            "as its stage says".to_string()
        } else {
            span(d.measure)
        },
        match d.warmup {
            Some(_) if d.warmup_auto => format!(
                "auto (until level, at most {} s)",
                shootout_model::WarmedUp::MAX.as_secs()
            ),
            w => w.map_or("none".into(), span),
        },
        tenths_secs(d.cooldown)
    );
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
    out.push_str(&search);
    out
}

/// The `--fail-if` thresholds, for every contender and each contender's own; empty when
/// there are none.
fn thresholds(plan: &Plan) -> String {
    let d = &plan.defaults;
    let own: Vec<_> = plan
        .contenders
        .iter()
        .filter(|c| !c.fail_if.is_empty())
        .collect();
    if d.fail_if.is_empty() && own.is_empty() {
        return String::new();
    }
    let list = |ts: &[Threshold]| {
        ts.iter()
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::from(
        "\nfail if (exit 3), judged per contender × workload × level after the run:\n",
    );
    if !d.fail_if.is_empty() {
        out.push_str(&format!("  every contender: {}\n", list(&d.fail_if)));
    }
    for c in own {
        out.push_str(&format!("  {}: {}\n", c.name, list(&c.fail_if)));
    }
    out
}
