//! The run reports on small in-memory runs: edge cases the seeded store of `tests/report.rs`
//! (which snapshots every format through the binary) does not reach.

use super::*;
use shootout_model::stored::{ContenderId, ContenderRow, RunId, RunRow, StepId, StoredStep};
use shootout_model::{
    latency_histogram, ContenderStatus, Counts, Histograms, LoadLevel, MachineFacts,
    ResourceSample, RunResult, RunStatus, StepStatus,
};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn at(s: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000 + s)
}

fn result(completed: u64, secs: f64, latency_us: u64) -> RunResult {
    let mut latency = latency_histogram();
    for i in 0..completed.min(1000) {
        latency.record(latency_us + i % 50).unwrap();
    }
    let mut r = RunResult {
        counts: Counts {
            completed,
            ok: completed,
            ..Default::default()
        },
        histograms: Histograms {
            latency: latency.clone(),
            latency_raw: latency,
            ..Histograms::new()
        },
        ..RunResult::empty(at(0), Duration::from_secs_f64(secs))
    };
    r.warnings = shootout_analysis::load_warnings::derive(&r, None);
    r
}

fn contender(id: i64, name: &str, baseline: bool, status: ContenderStatus) -> ContenderRow {
    ContenderRow {
        id: ContenderId(id),
        run: RunId(1),
        name: name.into(),
        command: "serve --port {port}".into(),
        baseline,
        status,
        detail: if status == ContenderStatus::Measured {
            String::new()
        } else {
            "exit status 1\nline two\n\nline three\nline four\nline five".into()
        },
        version: None,
        stdout_log: None,
        stderr_log: None,
    }
}

fn step(id: i64, contender: i64, rep: u32, completed: u64, latency_us: u64) -> StoredStep {
    StoredStep {
        id: StepId(id),
        run: RunId(1),
        contender: ContenderId(contender),
        workload: "hello".into(),
        level: LoadLevel::Concurrency { connections: 4 },
        repetition: rep,
        started: at(id as u64),
        ended: at(id as u64 + 1),
        status: StepStatus::Complete,
        result: result(completed, 1.0, latency_us),
        resources: vec![
            ResourceSample {
                at: Duration::ZERO,
                cpu_user: Duration::from_millis(10),
                cpu_sys: Duration::ZERO,
                rss_bytes: 10 << 20,
                processes: 1,
                threads: 1,
                ctx_switches: 0,
                fds: 5,
            },
            ResourceSample {
                at: Duration::from_secs(1),
                cpu_user: Duration::from_millis(510),
                cpu_sys: Duration::from_millis(500),
                rss_bytes: 12 << 20,
                processes: 1,
                threads: 1,
                ctx_switches: 9,
                fds: 5,
            },
        ],
        wire: None,
        other_load: None,
        search: None,
        packed: None,
    }
}

fn run(contenders: Vec<ContenderRow>, steps: Vec<StoredStep>) -> StoredRun {
    StoredRun {
        run: RunRow {
            id: RunId(1),
            name: "edge | cases".into(),
            plan_text: String::new(),
            plan_resolved: "{}".into(),
            machine: MachineFacts::default(),
            started: at(0),
            ended: Some(at(100)),
            status: RunStatus::Complete,
        },
        contenders,
        steps,
        also: Vec::new(),
    }
}

/// True when a word of `text` is how Rust prints a non-finite float.
fn has_nan_or_inf(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"))
}

#[test]
fn a_baseline_that_was_not_measured_gives_way_to_the_first_measured() {
    let r = run(
        vec![
            contender(1, "a", false, ContenderStatus::Measured),
            contender(2, "b", true, ContenderStatus::VerificationFailed),
        ],
        vec![step(1, 1, 1, 1000, 500)],
    );
    let a = Analysis::of(&r);
    assert_eq!(a.baseline, Some(0));
    let kinds: Vec<&str> = a.warnings.iter().map(|w| w.kind()).collect();
    assert_eq!(kinds, ["baseline_not_measured", "not_measured"]);
    // The detail's first non-empty lines, at most four.
    assert_eq!(
        a.warnings[1].detail_lines(),
        ["exit status 1", "line two", "line three", "line four"]
    );
    let t = text(&r);
    assert!(t.contains("  baseline  a\n"), "{t}");
    assert!(t.contains("  - b failed verification, not measured:\n      exit status 1\n"));
}

/// A contender that Ctrl-C left unmeasured was said twice: "b was not measured: the run
/// was interrupted before its first step:" and the same words again as its detail.
#[test]
fn a_contender_interrupted_before_its_first_step_is_said_once() {
    let mut b = contender(2, "b", false, ContenderStatus::Interrupted);
    b.detail = shootout_model::shootout::INTERRUPTED_BEFORE_FIRST.into();
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured), b],
        vec![step(1, 1, 1, 1000, 500)],
    );
    let a = Analysis::of(&r);
    let w = a
        .warnings
        .iter()
        .find(|w| w.kind() == "not_measured")
        .unwrap();
    assert!(w.detail_lines().is_empty(), "{:?}", w.detail_lines());
    let t = text(&r);
    assert_eq!(
        t.matches("interrupted before its first step").count(),
        1,
        "{t}"
    );
    assert!(
        t.contains("  - b was not measured: the run was interrupted before its first step\n"),
        "{t}"
    );
    // Another detail of an interrupted contender is still quoted.
    let mut c = contender(2, "b", false, ContenderStatus::Interrupted);
    c.detail = "contender `b`: the run was interrupted while its setup ran".into();
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured), c],
        vec![step(1, 1, 1, 1000, 500)],
    );
    assert!(
        text(&r).contains("\n      contender `b`: the run was interrupted while its setup ran\n")
    );
}

#[test]
fn server_cpu_per_request_is_the_cpu_used_over_the_completed() {
    // 1.0 s of CPU (0.51 − 0.01 user + 0.5 sys) over 1000 requests = 1000 µs.
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        vec![step(1, 1, 1, 1000, 500)],
    );
    let a = Analysis::of(&r);
    let (_, _, c) = a.cells().next().unwrap();
    assert_eq!(c.cpu_us, Some(1000.0));
    assert_eq!(c.peak_rss, Some(12 << 20));
    assert!(text(&r).contains("1000.0  12.0 MiB"));
}

#[test]
fn noisy_cells_are_flagged_above_a_tenth_of_the_median() {
    // 1000 and 1120 req/s: a range of 12% of the median 1060.
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        vec![step(1, 1, 1, 1000, 500), step(2, 1, 2, 1120, 500)],
    );
    let a = Analysis::of(&r);
    assert!(a.warnings.iter().any(|w| w.kind() == "noisy"));
    // 1000 and 1090: 8.7%, not noisy.
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        vec![step(1, 1, 1, 1000, 500), step(2, 1, 2, 1090, 500)],
    );
    assert!(Analysis::of(&r)
        .warnings
        .iter()
        .all(|w| w.kind() != "noisy"));
}

#[test]
fn a_cell_measured_on_a_busy_machine_is_warned_of_in_every_format() {
    let busy = shootout_model::OtherLoad {
        cpus: 2,
        others: Some(0.85),
        contenders: 0.0,
        interrupts: 0.0,
        steal: 0.004,
        load_avg: 3.1,
    };
    let quiet = shootout_model::OtherLoad {
        others: Some(0.01),
        ..busy
    };
    let mut steps = vec![
        step(1, 1, 1, 1000, 500),
        step(2, 1, 2, 1000, 500),
        step(3, 1, 3, 1000, 500),
    ];
    steps[0].other_load = Some(quiet);
    steps[1].other_load = Some(busy);
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        steps,
    );
    let a = Analysis::of(&r);
    let w: Vec<_> = a
        .warnings
        .iter()
        .filter(|w| w.kind() == "busy_machine")
        .collect();
    assert_eq!(w.len(), 1, "{:?}", a.warnings);
    let line = "busy machine: a · hello · c=4: the machine was not quiet in 1 of 3 repetitions (other processes used 0.85 CPU of the 2 watched, steal 0.4% of 2 CPUs, load average 3.10): measure again when nothing else runs";
    assert!(text(&r).contains(line), "{}", text(&r));
    assert!(markdown(&r).contains(line));
    assert!(json(&r).to_string().contains("\"busy_machine\""));
    let page = crate::html::render_run(&r);
    assert!(
        page.contains(
            "<li><strong>Busy machine: a · hello · c=4</strong>: the machine was not quiet in 1 of 3"
        ),
        "{page}"
    );
    // Quiet steps, and steps stored before the machine was watched, warn of nothing.
    let mut steps = vec![step(1, 1, 1, 1000, 500), step(2, 1, 2, 1000, 500)];
    steps[0].other_load = Some(quiet);
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        steps,
    );
    assert!(Analysis::of(&r)
        .warnings
        .iter()
        .all(|w| w.kind() != "busy_machine"));
}

/// Run `id` with contenders `a` and `b`, each measured `reps` times in steps of `secs`.
fn measured(id: i64, secs: u64, reps: u32) -> StoredRun {
    let contenders = vec![
        contender(1, "a", true, ContenderStatus::Measured),
        contender(2, "b", false, ContenderStatus::Measured),
    ];
    let mut steps = Vec::new();
    for c in 1..=2 {
        for rep in 1..=reps {
            let mut s = step(id * 100 + c * 10 + i64::from(rep), c, rep, 1000 * secs, 500);
            s.run = RunId(id);
            s.result.duration = Duration::from_secs(secs);
            steps.push(s);
        }
    }
    let mut r = run(contenders, steps);
    r.run.id = RunId(id);
    r
}

/// `report --runs` of a `--quick` run (steps of 1 s, one repetition) and a full one (10 s,
/// three) pooled their steps without a word, where `compare` of the same two runs warns
/// of unlike steps: every format says it, once, at the first such cell, counting the
/// others.
#[test]
fn runs_of_unlike_steps_read_as_one_are_said_so_in_every_format() {
    let pool = |runs| shootout_analysis::combine::combine(runs).unwrap();
    let r = pool(vec![measured(3, 1, 1), measured(5, 10, 3)]);
    let kinds: Vec<&str> = Analysis::of(&r).warnings.iter().map(|w| w.kind()).collect();
    assert_eq!(kinds, ["unlike_steps"]);
    let line = "unlike steps: a · hello · c=4 (and 1 more cell): 1 s × 1 repetition in run 3, 10 s × 3 repetitions in run 5: a short step weighs its start as much as the server, and the runs' steps are pooled in each median and ± (measure the runs alike: drop --quick, or give them the same duration and repeat)";
    let (t, md) = (text(&r), markdown(&r));
    assert!(t.contains(&format!("  - {line}\n")), "{t}");
    assert!(md.contains(&crate::grid::md_escape(line)), "{md}");
    let j = json(&r);
    let w = &j["warnings"][0];
    assert_eq!(
        (w["kind"].as_str(), w["message"].as_str()),
        (Some("unlike_steps"), Some(line))
    );
    let page = crate::html::render_run(&r);
    assert!(
        page.contains("<li><strong>Unlike steps: a · hello · c=4</strong> (and 1 more cell): 1 s × 1 repetition in run 3, 10 s × 3 repetitions in run 5: "),
        "{page}"
    );
    // Steps alike (within 1.5 times), or one run alone: nothing to say.
    for r in [
        pool(vec![measured(3, 8, 1), measured(5, 10, 3)]),
        measured(5, 10, 3),
    ] {
        assert!(Analysis::of(&r)
            .warnings
            .iter()
            .all(|w| w.kind() != "unlike_steps"));
    }
}

/// A generator fault, pings left unanswered and connections that never opened are stored
/// with each step; every rendering of the run says them, as `shootout load`'s report does.
#[test]
fn generator_faults_unanswered_pings_and_unopened_connections_are_said_in_every_format() {
    let mut steps = vec![step(1, 1, 1, 1000, 500), step(2, 1, 2, 1000, 500)];
    let c = &mut steps[1].result.counts;
    c.failures[shootout_model::FailureKind::GeneratorFault] = 2;
    c.completed += 2;
    c.pings_unanswered = 5;
    c.connections_opening = 3;
    let mut r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        steps,
    );
    shootout_analysis::load_warnings::refresh_stored(&mut r);
    let lines = [
        "generator fault: a · hello · c=4: 2 requests failed by a fault of shootout's own (generator_fault), not the server's: please report it (in 1 of 2 repetitions)",
        "pings unanswered: a · hello · c=4: 5 pings from the server went unanswered: it pinged faster than it read our pongs (only the latest is answered) (in 1 of 2 repetitions)",
        "connections opening: a · hello · c=4: 3 connections were still opening at the end (never connected or upgraded): fewer connections carried the load than asked (in 1 of 2 repetitions)",
    ];
    let (t, md) = (text(&r), markdown(&r));
    for line in lines {
        assert!(t.contains(line), "{line}\n{t}");
        assert!(md.contains(&crate::grid::md_escape(line)), "{line}\n{md}");
    }
    let j = json(&r);
    let kinds: Vec<&str> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    for kind in ["generator_fault", "pings_unanswered", "connections_opening"] {
        assert!(kinds.contains(&kind), "{kind}: {kinds:?}");
    }
    let second = &j["steps"][1];
    assert_eq!(second["failures"]["generator_fault"], 2, "{second}");
    let kinds: Vec<&str> = second["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"pings_unanswered"), "{second}");
    let page = crate::html::render_run(&r);
    for title in [
        "<strong>Requests failed by a fault of shootout's own, not the server's: please report it</strong>",
        "<strong>Pings from the server went unanswered</strong>",
        "<strong>Connections never opened</strong>",
    ] {
        assert!(page.contains(title), "{title}\n{page}");
    }
}

/// `compare` says them too, naming the run whose steps counted them.
#[test]
fn compare_says_generator_faults_unanswered_pings_and_unopened_connections() {
    let steps = || vec![step(1, 1, 1, 1000, 500), step(2, 1, 2, 1000, 500)];
    let mut a = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        steps(),
    );
    let mut b = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        steps(),
    );
    b.run.id = RunId(2);
    let c = &mut b.steps[0].result.counts;
    c.failures[shootout_model::FailureKind::GeneratorFault] = 2;
    c.completed += 2;
    c.pings_unanswered = 5;
    c.connections_opening = 3;
    shootout_analysis::load_warnings::refresh_stored(&mut a);
    shootout_analysis::load_warnings::refresh_stored(&mut b);
    let c = crate::compare::Comparison::of(&a, &b, Default::default());
    let lines = [
        "generator fault: a · hello · c=4 in run 2: 2 requests failed by a fault of shootout's own (generator_fault), not the server's: please report it",
        "pings unanswered: a · hello · c=4 in run 2: 5 pings from the server went unanswered",
        "connections opening: a · hello · c=4 in run 2: 3 connections were still opening at the end",
    ];
    for f in [RunFormat::Text, RunFormat::Markdown, RunFormat::Json] {
        let out = crate::compare::render(f, &c);
        for line in lines {
            let line = match f {
                RunFormat::Markdown => crate::grid::md_escape(line),
                _ => line.to_string(),
            };
            assert!(out.contains(&line), "{f}: {line}\n{out}");
        }
    }
    // Run 1 counted none.
    assert!(!crate::compare::render(RunFormat::Text, &c).contains("in run 1:"));
}

#[test]
fn no_rendering_prints_nan_even_for_empty_steps_and_runs() {
    let mut empty = step(1, 1, 1, 0, 500);
    empty.result.duration = Duration::ZERO;
    empty.resources.clear();
    let runs = [
        run(
            vec![contender(1, "a", true, ContenderStatus::Measured)],
            vec![empty],
        ),
        run(
            vec![contender(1, "a", true, ContenderStatus::NeverReady)],
            vec![],
        ),
    ];
    for r in &runs {
        for &f in RunFormat::ALL {
            let out = render(f, r);
            assert!(!has_nan_or_inf(&out), "{f}:\n{out}");
            assert!(out.ends_with('\n'), "{f}");
        }
    }
    assert!(text(&runs[1]).contains("No step was measured."));
}

#[test]
fn markdown_keeps_pipes_inside_their_cells() {
    let r = run(
        vec![
            contender(1, "x | y", true, ContenderStatus::Measured),
            contender(2, "z", false, ContenderStatus::Measured),
        ],
        vec![step(1, 1, 1, 1000, 500), step(2, 2, 1, 900, 600)],
    );
    let md = markdown(&r);
    assert!(md.starts_with("# Run 1: edge \\| cases\n"), "{md}");
    for line in md.lines().filter(|l| l.starts_with('|')) {
        // Every row of a table has as many unescaped pipes as its header.
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(
            cells == 15 || cells == 6 || cells == 5 || cells == 4,
            "{cells}: {line}"
        );
    }
    assert!(md.contains("| x \\| y (baseline) | c=4 |"), "{md}");
}

#[test]
fn formats_parse_by_name() {
    for &f in RunFormat::ALL {
        assert_eq!(f.name().parse::<RunFormat>(), Ok(f));
    }
    assert_eq!("MD".parse::<RunFormat>(), Ok(RunFormat::Markdown));
    assert_eq!(
        "xml".parse::<RunFormat>().unwrap_err().to_string(),
        "'xml' is not a format of shootout report: choose one of text, markdown, json, csv"
    );
}

/// The trap of seed 004: a server that answers a quarter of its requests with a fast 502
/// must not look faster for it. req/s and % of baseline count good answers only.
#[test]
fn failed_answers_are_not_throughput() {
    let mut bad = step(2, 2, 1, 1000, 500);
    bad.result.counts.ok = 750;
    bad.result.counts.failures[shootout_model::FailureKind::Status] = 250;
    let r = run(
        vec![
            contender(1, "good", true, ContenderStatus::Measured),
            contender(2, "fast 502", false, ContenderStatus::Measured),
        ],
        vec![step(1, 1, 1, 1000, 500), bad],
    );
    let a = Analysis::of(&r);
    let level = &a.workloads[0].levels[0];
    let cell = level.cell(1).unwrap();
    assert_eq!(cell.rps, 750.0);
    assert_eq!(cell.completed, 1000);
    let out = text(&r);
    let row = out.lines().find(|l| l.contains("fast 502 ")).unwrap();
    assert!(row.contains(" 750 ") && row.contains(" 75% "), "{row}");
    assert!(row.contains("250 status"), "{row}");
}

/// A noisy cell's advice: pinning, unless the plan already pinned server and load apart.
#[test]
fn noise_advice_knows_whether_the_plan_pinned() {
    let mut r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        vec![step(1, 1, 1, 1000, 500), step(2, 1, 2, 600, 500)],
    );
    let noisy = |r: &StoredRun| {
        text(r)
            .lines()
            .find(|l| l.contains("noisy: a"))
            .unwrap()
            .to_string()
    };
    assert!(noisy(&r).contains("and pin server and load to different CPUs"));
    r.run.plan_resolved = r#"{"server_cpus":[1],"load_cpus":[0]}"#.into();
    let line = noisy(&r);
    assert!(
        line.contains("already pinned apart") && !line.contains("and pin"),
        "{line}"
    );
    // One side pinned is not "apart".
    r.run.plan_resolved = r#"{"server_cpus":[1],"load_cpus":null}"#.into();
    assert!(noisy(&r).contains("and pin server and load to different CPUs"));
}

/// The report says when the load busy-polled (the plan's setting, stored with the run).
#[test]
fn the_report_says_when_the_load_busy_polled() {
    let mut r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        vec![step(1, 1, 1, 1000, 500)],
    );
    assert!(!text(&r).contains("busy-polled"));
    r.run.plan_resolved = r#"{"server_cpus":[1],"load_cpus":[0],"busy_poll_us":50}"#.into();
    let machine = text(&r)
        .lines()
        .find(|l| l.trim_start().starts_with("machine"))
        .unwrap()
        .to_string();
    assert!(
        machine.contains("the load busy-polled up to 50 µs before each sleep"),
        "{machine}"
    );
}

/// Each cell's percentiles come with their interval in text, Markdown and JSON: one
/// repetition's from its answers (95%), several as the median's order-statistic interval
/// at the coverage their number allows; an upper end past the answers is marked `≥`.
#[test]
fn every_format_gives_the_cells_percentile_intervals() {
    let r = run(
        vec![
            contender(1, "a", true, ContenderStatus::Measured),
            contender(2, "b", false, ContenderStatus::Measured),
        ],
        vec![
            step(1, 1, 1, 300, 500),
            step(2, 2, 1, 900, 600),
            step(3, 2, 2, 900, 700),
            step(4, 2, 3, 900, 800),
        ],
    );
    let a = Analysis::of(&r);
    let cells: Vec<_> = a.workloads[0].levels[0].cells.iter().collect();
    let cis: Vec<_> = cells
        .iter()
        .map(|c| shootout_analysis::intervals::cell_intervals(c))
        .collect();
    let one = cis[0][2].unwrap();
    assert_eq!(one.basis, shootout_analysis::intervals::Basis::Answers);
    // p99 of 300 answers: its upper rank (302) is past them; p90's (281) is not.
    assert!(one.open_above && !cis[0][1].unwrap().open_above, "{one:?}");
    let three = cis[1][0].unwrap();
    assert!((three.basis.coverage() - 0.75).abs() < 1e-12);
    let t = text(&r);
    assert!(
        t.contains("95% intervals of the latency percentiles (ms):"),
        "{t}"
    );
    for cell in cis.iter().flat_map(|c| &c[..3]) {
        assert!(t.contains(&crate::ci::cell_range(*cell)), "{t}");
    }
    assert!(t.contains("–≥") && t.contains("(75%)"), "{t}");
    assert!(
        t.contains("one repetition: 95% from the order statistics")
            && t.contains("several: the order-statistic interval of the median"),
        "{t}"
    );
    assert!(t.contains(crate::ci::OPEN_NOTE), "{t}");
    let md = markdown(&r);
    assert!(
        md.contains(&format!("| {} |", crate::ci::cell_range(cis[1][2]))),
        "{md}"
    );
    let doc = json(&r);
    let ci = &doc["results"][1]["latency_ms"]["ci"];
    assert_eq!(ci["method"], "repetitions");
    assert_eq!(ci["coverage"], 0.75);
    assert_eq!(ci["p50"][0].as_f64(), Some((three.lo * 1e3).round() / 1e3));
    assert_eq!(
        doc["results"][0]["latency_ms"]["ci"]["open_above"],
        serde_json::json!(["p99"])
    );
    assert_eq!(doc["results"][0]["latency_ms"]["ci"]["method"], "answers");
}

/// A step of a journey workload: `journeys` writers in 1 s, `ok` of them ok, each with a
/// login and a post (`post_us` each) and a duration of `post_us` + 1 ms.
fn journey_step(
    id: i64,
    contender: i64,
    rep: u32,
    journeys: u64,
    ok: u64,
    post_us: u64,
) -> StoredStep {
    let mut s = step(id, contender, rep, 2 * journeys, 500);
    let kind = |label: &str, ok: u64, us: u64| {
        let mut t = shootout_model::TargetStats::new(label);
        for i in 0..journeys {
            t.latency.record(us + i).unwrap();
        }
        t.completed = journeys;
        t.ok = ok;
        t.failures[shootout_model::FailureKind::Status] = journeys - ok;
        t
    };
    s.result.targets = vec![
        kind("writer › login", journeys, 500),
        kind("writer › post", ok, post_us),
    ];
    s.result.journeys = vec![kind("writer", ok, post_us + 1_000)];
    s
}

/// A run of a journey workload: nginx (the baseline) and gunicorn, two repetitions each,
/// gunicorn's posts twice as slow and half of them failed.
fn journey_run() -> StoredRun {
    run(
        vec![
            contender(1, "nginx", true, ContenderStatus::Measured),
            contender(2, "gunicorn", false, ContenderStatus::Measured),
        ],
        vec![
            journey_step(1, 1, 1, 10, 10, 2_000),
            journey_step(2, 2, 1, 10, 5, 4_000),
            journey_step(3, 1, 2, 10, 10, 2_000),
            journey_step(4, 2, 2, 10, 5, 4_000),
        ],
    )
}

/// `shootout report` of a journey workload: each contender's journeys and steps, counts
/// summed over the repetitions and latencies merged, and the contenders ranked per journey
/// by good journeys per second, in text and Markdown.
#[test]
fn a_journey_workload_reports_steps_and_ranks_contenders_per_journey() {
    let r = journey_run();
    let text = text::text(&r);
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = squeeze(&text);
    for want in [
        "Journeys and steps at c=4 (every repetition merged):",
        "nginx journey writer 20 20 0 10.00",
        "gunicorn journey writer 20 10 10 10 status 5.00",
        "nginx step writer › login 20 20 0 10.00",
        "gunicorn step writer › post 20 10 10 10 status 5.00",
        "Ranked by good journeys per second (median over repetitions):",
        "writer: nginx 10.00/s, gunicorn 5.00/s (2.00× fewer)",
    ] {
        assert!(flat.contains(want), "{want}\n{text}");
    }
    let md = markdown::markdown(&r);
    assert!(
        md.contains("### Journeys and steps at c=4 (every repetition merged)"),
        "{md}"
    );
    assert!(
        md.contains("| gunicorn | step | writer › post | 20 | 10 | 10 | 10 status | 5.00 |"),
        "{md}"
    );
    // A run without journeys has no such section.
    let plain = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        vec![step(1, 1, 1, 100, 500)],
    );
    assert!(!text::text(&plain).contains("Journeys and steps"));
}

/// The CSV of a journey workload: after each step's own record, one per contender ×
/// level × journey step and per journey, every repetition's counts and failures added up,
/// the fields of one measurement empty.
#[test]
fn csv_adds_a_record_per_journey_step_and_journey() {
    let out = csv(&journey_run());
    let records: Vec<&str> = out.split_terminator("\r\n").collect();
    // Header, 4 steps, then per contender 2 journey steps and 1 journey.
    assert_eq!(records.len(), 1 + 4 + 6, "{out}");
    let header: Vec<&str> = records[0].split(',').collect();
    let field = |record: &str, column: &str| -> String {
        let at = header.iter().position(|c| *c == column).unwrap();
        record.split(',').nth(at).unwrap().to_string()
    };
    for r in &records[1..] {
        assert_eq!(r.split(',').count(), header.len(), "{r}");
    }
    let kinds: Vec<(String, String, String)> = records[5..]
        .iter()
        .map(|r| (field(r, "contender"), field(r, "record"), field(r, "name")))
        .collect();
    // A step's counts are requests, a journey's journeys.
    let units: Vec<String> = records[1..].iter().map(|r| field(r, "unit")).collect();
    let mut want_units = vec!["request"; 4];
    for _ in 0..2 {
        want_units.extend(["request", "request", "journey"]);
    }
    assert_eq!(units, want_units);
    let want = |c: &str, record: &str, name: &str| (c.into(), record.into(), name.into());
    assert_eq!(
        kinds,
        [
            want("nginx", "journey_step", "writer › login"),
            want("nginx", "journey_step", "writer › post"),
            want("nginx", "journey", "writer"),
            want("gunicorn", "journey_step", "writer › login"),
            want("gunicorn", "journey_step", "writer › post"),
            want("gunicorn", "journey", "writer"),
        ]
    );
    // nginx's two repetitions added up; the fields of one measurement empty.
    let nginx_post = records[6];
    for (column, value) in [
        ("completed", "20"),
        ("ok", "20"),
        ("failed", "0"),
        ("ok_rps", "10.000"),
        ("baseline", "true"),
        ("unsent", "0"),
        ("repetition", ""),
        ("status", ""),
        ("started_utc", ""),
        ("duration_s", ""),
        ("aborted", ""),
        ("rps", ""),
        ("server_cpu_us_per_request", ""),
        ("protocol", ""),
        ("until", ""),
    ] {
        assert_eq!(field(nginx_post, column), value, "{column} in {nginx_post}");
    }
    // Every field of gunicorn's post, its failures by class among them.
    assert_eq!(
        records[9],
        "1,gunicorn,hello,concurrency,4,,,,,,20,10,10,,0,0,0,0,10,0,0,0,0,0,0,0,0,0,0,0,0,0,0,\
         0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,,5.000,4.008,0.000,4.015,4.015,4.015,4.015,,,false,,,,\
         journey_step,writer › post,0,,,,request"
    );
}

/// [`journey_run`] with each writer journey's busy time (its duration less its think
/// times) kept: `us` for every journey, nginx's and gunicorn's apart.
fn journey_run_busy() -> StoredRun {
    let mut r = journey_run();
    for s in &mut r.steps {
        let us = if s.contender.0 == 1 { 1_500 } else { 3_500 };
        let mut busy = shootout_model::result::second_histogram();
        busy.record_n(us, 10).unwrap();
        s.result.journeys[0].busy = Some(busy);
    }
    r
}

/// The summary (ms) of `n` journeys busy `us` each, as the reports print it.
fn busy_cells(us: u64) -> String {
    let mut h = shootout_model::result::second_histogram();
    h.record_n(us, 20).unwrap();
    let l = shootout_model::LatencySummary::of(&h);
    format!("{:.3} {:.3} {:.3} {:.3}", l.p50, l.p90, l.p99, l.max)
}

/// A journey workload whose journeys kept their busy time (a run stored since it is):
/// every run report shows it per contender, the repetitions merged: text, Markdown and
/// HTML a `busy` row (and a dashed line), JSON `duration_less_think_ms` (per block and
/// per step), CSV a `journey_busy` record. A run whose steps lack it (stored before)
/// shows none, nor does one where a repetition lacks it.
#[test]
fn a_journey_workloads_busy_time_is_reported_when_every_step_kept_it() {
    let r = journey_run_busy();
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text::text(&r);
    for want in [
        format!("nginx busy writer 20 20 0 10.00 {}", busy_cells(1_500)),
        format!(
            "gunicorn busy writer 20 10 10 10 status 5.00 {}",
            busy_cells(3_500)
        ),
        "busy: a journey's duration less its think times".to_string(),
    ] {
        assert!(flat(&text).contains(&want), "{want}\n{text}");
    }
    let md = markdown::markdown(&r);
    assert!(
        md.contains("| nginx | busy | writer | 20 | 20 | 0 |"),
        "{md}"
    );
    let doc = json(&r);
    let block = &doc["journeys"][0]["journeys"][0];
    assert_eq!(block["name"], "writer");
    let want_p50 = shootout_model::LatencySummary::of(&{
        let mut h = shootout_model::result::second_histogram();
        h.record(1_500).unwrap();
        h
    })
    .p50;
    assert_eq!(
        block["duration_less_think_ms"]["p50"].as_f64(),
        Some((want_p50 * 1e3).round() / 1e3)
    );
    assert!(doc["journeys"][0]["steps"][0]
        .get("duration_less_think_ms")
        .is_none());
    assert!(doc["steps"][0]["journeys"][0]["duration_less_think_ms"]["p50"].is_number());
    let out = csv(&r);
    let busy: Vec<&str> = out
        .split_terminator("\r\n")
        .filter(|l| l.contains(",journey_busy,"))
        .collect();
    assert_eq!(busy.len(), 2, "{out}");
    assert!(
        busy[0].contains(",nginx,") && busy[1].contains(",gunicorn,"),
        "{out}"
    );
    let page = crate::html::render_run(&r);
    assert!(
        page.contains("nginx less think time"),
        "no dashed busy line"
    );

    // Stored before it was measured: none anywhere.
    let old = journey_run();
    assert!(!flat(&text::text(&old)).contains("busy writer"));
    assert!(!text::text(&old).contains("think times"));
    assert!(!json(&old)["journeys"].to_string().contains("less_think"));
    assert!(!csv(&old).contains("journey_busy"));
    assert!(!crate::html::render_run(&old).contains("less think time"));
    // One of nginx's repetitions without it: nginx's merged figures leave it out (a part
    // would pass for the whole), gunicorn's keep it.
    let mut partly = journey_run_busy();
    partly.steps[2].result.journeys[0].busy = None;
    let text = flat(&text::text(&partly));
    assert!(!text.contains("nginx busy writer"), "{text}");
    assert!(text.contains("gunicorn busy writer"), "{text}");
    let doc = json(&partly);
    assert!(doc["journeys"][0]["journeys"][0]
        .get("duration_less_think_ms")
        .is_none());
    assert!(doc["journeys"][1]["journeys"][0]["duration_less_think_ms"].is_object());
    assert_eq!(csv(&partly).matches(",journey_busy,").count(), 1);
}

/// `shootout compare` of two journey runs: per step and journey, the good ones per second
/// and the p99 of A and B, each with the Mann–Whitney verdict on the repetitions (five
/// each: a post twice as slow in every repetition of B is significantly slower).
#[test]
fn compare_tests_each_step_and_journey() {
    let runs = |post_us: u64| {
        run(
            vec![contender(1, "nginx", true, ContenderStatus::Measured)],
            (1..=5)
                .map(|rep| journey_step(rep, 1, rep as u32, 10, 10, post_us + rep as u64 * 10))
                .collect(),
        )
    };
    let a = runs(2_000);
    let mut b = runs(4_000);
    b.run.id = RunId(2);
    let c = crate::compare::Comparison::of(&a, &b, Default::default());
    let out = crate::compare::render(RunFormat::Text, &c);
    let flat: String = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Journeys and steps (good ones per second and p99 ms"),
        "{out}"
    );
    assert!(
        flat.contains(
            "hello c=4 nginx step writer › login 10.00 10.00 +0.0% no significant change"
        ),
        "{out}"
    );
    assert!(
        flat.contains("hello c=4 nginx step writer › post 10.00 10.00 +0.0% no significant change"),
        "{out}"
    );
    let post = out.lines().find(|l| l.contains("writer › post")).unwrap();
    assert!(post.contains("slower (p="), "{post}");
    let md = crate::compare::render(RunFormat::Markdown, &c);
    assert!(md.contains("## Journeys and steps"), "{md}");
}

/// Two journey runs of five repetitions for `compare`, each writer journey's busy time
/// `busy_us` (plus a little per repetition) and its post `post_us`.
fn busy_runs(post_us: u64, busy_us: u64, id: i64) -> StoredRun {
    let mut r = run(
        vec![contender(1, "nginx", true, ContenderStatus::Measured)],
        (1..=5)
            .map(|rep| journey_step(rep, 1, rep as u32, 10, 10, post_us + rep as u64 * 10))
            .collect(),
    );
    for (rep, s) in r.steps.iter_mut().enumerate() {
        let mut busy = shootout_model::result::second_histogram();
        busy.record_n(busy_us + rep as u64 * 10, 10).unwrap();
        s.result.journeys[0].busy = Some(busy);
    }
    r.run.id = RunId(id);
    r
}

/// `shootout compare` of two journey runs whose journeys kept their busy time: each
/// journey's busy p99 in A and B, tested as a contender's p99 is (Mann–Whitney on the
/// repetitions), in every format compare writes. B's journeys are as long (their posts
/// as slow) but busy twice as long: the busy time is slower, significantly, where the
/// journey's duration alone says nothing of it. Runs without it show no busy rows.
#[test]
fn compare_tests_each_journey_s_busy_time() {
    let a = busy_runs(2_000, 1_500, 1);
    let b = busy_runs(2_000, 3_000, 2);
    let c = crate::compare::Comparison::of(&a, &b, Default::default());
    let text = crate::compare::render(RunFormat::Text, &c);
    let busy = text
        .lines()
        .skip_while(|l| !l.starts_with("Journeys less think time"))
        .find(|l| l.contains("writer"))
        .unwrap_or_default();
    assert!(
        busy.contains("writer") && busy.contains("slower (p="),
        "{text}"
    );
    let journey = text
        .lines()
        .find(|l| l.contains(" journey ") && l.contains("writer"))
        .unwrap();
    assert!(journey.contains("no significant change"), "{journey}");
    let doc = crate::compare::json(&c);
    let j = &doc["journeys"][2];
    assert_eq!(
        (j["kind"].as_str(), j["name"].as_str()),
        (Some("journey"), Some("writer"))
    );
    assert_eq!(j["duration_less_think_p99_ms"]["verdict"], "slower");
    assert!(doc["journeys"][0]["duration_less_think_p99_ms"].is_null());
    let csv = crate::compare::render(RunFormat::Csv, &c);
    assert_eq!(csv.matches(",journey_busy,writer").count(), 1, "{csv}");
    for format in [
        RunFormat::Text,
        RunFormat::Markdown,
        RunFormat::Json,
        RunFormat::Csv,
    ] {
        insta::assert_snapshot!(
            format!("compare_busy_{}", format.name()),
            crate::compare::render(format, &c)
        );
    }
    // Without busy times (runs stored before they were kept): no such rows.
    let (mut a, mut b) = (a, b);
    for s in a.steps.iter_mut().chain(b.steps.iter_mut()) {
        s.result.journeys[0].busy = None;
    }
    let c = crate::compare::Comparison::of(&a, &b, Default::default());
    for format in [RunFormat::Text, RunFormat::Markdown, RunFormat::Csv] {
        let out = crate::compare::render(format, &c);
        assert!(
            !out.contains("less think time") && !out.contains("journey_busy"),
            "{out}"
        );
    }
    assert!(crate::compare::json(&c)["journeys"][2]["duration_less_think_p99_ms"].is_null());
}

/// A run of one gRPC workload, `hello`: grpc-go (the baseline) and grpcio, two
/// repetitions each (grpcio's 1000 and 1200 calls, noisy), the workload marked gRPC's in
/// the stored plan as `shootout run` stores it when `marked` (a run stored before the
/// mark has none).
fn grpc_run(id: i64, marked: bool) -> StoredRun {
    let mut r = run(
        vec![
            contender(1, "grpc-go", true, ContenderStatus::Measured),
            contender(2, "grpcio", false, ContenderStatus::Measured),
        ],
        vec![
            step(1, 1, 1, 3000, 300),
            step(2, 1, 2, 3050, 310),
            step(3, 2, 1, 1000, 900),
            step(4, 2, 2, 1200, 950),
        ],
    );
    r.run.id = RunId(id);
    r.run.name = "greeter".into();
    r.run.plan_resolved = if marked {
        r#"{"workloads":[{"name":"hello","protocol":"h2","grpc":true}]}"#
    } else {
        r#"{"workloads":[{"name":"hello","protocol":"h2"}]}"#
    }
    .into();
    r
}

/// A gRPC workload's report said req/s, µs/req and "requests served" of its calls, as
/// the plan's unit was not stored: every table, heading, legend, warning, footnote and
/// JSON `unit` of it now says calls/s (and calls), in every format; a run stored before
/// the plan marked gRPC workloads reads as req/s, as it always did.
#[test]
fn a_grpc_workload_s_report_says_calls_a_second_in_every_format() {
    let r = grpc_run(1, true);
    let (t, md) = (text(&r), markdown(&r));
    let html = crate::html::render_run(&r);
    for out in [&t, &md, &html] {
        assert!(!out.contains("req/s") && !out.contains("µs/req"), "{out}");
        for said in [
            "calls/s",
            "µs/call",
            "Ranking by good-answer calls/s",
            "Percentage of the calls served within a certain time (ms)",
            "calls/s ranged 1000–1200 over 2 repetitions",
        ] {
            assert!(out.contains(said), "{said} missing in\n{out}");
        }
    }
    assert!(t.contains("divided by the calls completed."), "{t}");
    let doc = json(&r);
    for res in doc["results"].as_array().unwrap() {
        assert_eq!(res["unit"], "calls/s");
    }
    // CSV's last column says what each step's counts count.
    let last = |csv: &str| -> Vec<String> {
        let last = csv
            .lines()
            .map(|l| l.rsplit(',').next().unwrap_or_default());
        last.map(str::to_string).collect()
    };
    let units = last(&super::csv(&r));
    assert_eq!(units[0], "unit");
    assert!(
        units.len() > 1 && units[1..].iter().all(|u| u == "call"),
        "{units:?}"
    );
    let old_units = last(&super::csv(&grpc_run(1, false)));
    assert!(
        old_units[1..].iter().all(|u| u == "request"),
        "{old_units:?}"
    );
    insta::assert_snapshot!("grpc_text", t);
    insta::assert_snapshot!("grpc_markdown", md);
    insta::assert_snapshot!("grpc_json", serde_json::to_string_pretty(&doc).unwrap());
    // Stored before the mark: requests, as before.
    let old = grpc_run(1, false);
    let t = text(&old);
    assert!(t.contains("req/s") && t.contains("µs/req"), "{t}");
    assert!(!t.contains("calls"), "{t}");
    assert_eq!(json(&old)["results"][0]["unit"], "req/s");
    // Compared with a re-run: the pairs' rates are calls/s too.
    let (a, b) = (grpc_run(1, true), grpc_run(2, true));
    let c = crate::compare::Comparison::of(&a, &b, Default::default());
    for format in [RunFormat::Text, RunFormat::Markdown] {
        let out = crate::compare::render(format, &c);
        assert!(!out.contains("req/s"), "{out}");
        assert!(
            out.contains("A calls/s") && out.contains("Rankings in both runs (good-answer calls/s"),
            "{out}"
        );
    }
    let doc = crate::compare::json(&c);
    assert_eq!(doc["pairs"][0]["unit"], "calls/s");
    let pairs = last(&crate::compare::render(RunFormat::Csv, &c));
    assert_eq!(pairs[0], "unit");
    assert!(
        pairs.len() > 1 && pairs[1..].iter().all(|u| u == "call"),
        "{pairs:?}"
    );
    insta::assert_snapshot!(
        "grpc_compare_text",
        crate::compare::render(RunFormat::Text, &c)
    );
}

/// A sweep of 20 levels gets timelines for 12 of them, the lowest and the highest among
/// them, and the page says so: a row for each of a store's 20,000 levels made a page of
/// 147 MB (330 MiB to render). A sweep of fewer levels keeps a row for each.
#[test]
fn the_html_page_draws_the_timelines_of_at_most_twelve_levels() {
    let steps = (1..=20)
        .map(|i| StoredStep {
            level: LoadLevel::Concurrency { connections: i },
            ..step(i as i64, 1, 1, 1000, 500)
        })
        .collect();
    let r = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        steps,
    );
    let html = crate::html::render_run(&r);
    assert_eq!(html.matches("<h4 class=\"level\">").count(), 12, "{html}");
    assert!(
        html.contains("<h3>Timelines of 12 of the 20 levels (evenly spaced, the lowest and the highest kept), every repetition</h3>"),
        "{html}"
    );
    for kept in ["c=1<", "c=20<"] {
        assert!(
            html.contains(&format!("<h4 class=\"level\">{kept}")),
            "{kept}"
        );
    }
    let few = run(
        vec![contender(1, "a", true, ContenderStatus::Measured)],
        (1..=3)
            .map(|i| StoredStep {
                level: LoadLevel::Concurrency { connections: i },
                ..step(i as i64, 1, 1, 1000, 500)
            })
            .collect(),
    );
    let html = crate::html::render_run(&few);
    assert_eq!(html.matches("<h4 class=\"level\">").count(), 3);
    assert!(html.contains("<h3>Timelines of each level, every repetition</h3>"));
}
