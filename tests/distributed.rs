//! End-to-end tests of a load spread over many processes: the Kubernetes manifest of
//! `shootout k8s job` (parsed as YAML, held to a batch/v1 Indexed Job), its pods played
//! by local processes with the manifest's own arguments and `JOB_COMPLETION_INDEX`, their
//! logs merged as `kubectl logs … | shootout merge -` would, the merge's refusals and
//! notes, and the `--fail-if` thresholds' exit code 3.

mod common;

use assert_cmd::Command;
use hdrhistogram::Histogram;
use shootout_model::saved::blocks_in_log;
use shootout_model::{latency_histogram, RunResult, SavedRun};
use shootout_testserver::{Behavior, TestServer};
use std::path::Path;
use std::time::{Duration, SystemTime};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

/// The manifest of `shootout k8s job` with these flags and this load, parsed.
fn manifest(job: &[&str], load: &[&str]) -> serde_json::Value {
    let out = shootout()
        .args(["k8s", "job"])
        .args(job)
        .arg("--")
        .args(load)
        .output()
        .unwrap();
    common::assert_ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// `(value, count)` for every bucket of `h` that holds a value.
fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

#[test]
fn the_k8s_manifest_is_an_indexed_job_with_what_a_shard_needs() {
    let before = SystemTime::now();
    let m = manifest(
        &[
            "--shards",
            "4",
            "--image",
            "registry.example/shootout:0.1",
            "--start-in",
            "30s",
            "--cpu",
            "2",
            "--memory",
            "512Mi",
            "--results-claim",
            "load-results",
        ],
        &[
            "load",
            "--rate",
            "20000",
            "-d",
            "60s",
            "-c",
            "100",
            "http://web.svc:8080/",
        ],
    );
    assert_eq!(m["apiVersion"], "batch/v1");
    assert_eq!(m["kind"], "Job");
    let name = m["metadata"]["name"].as_str().unwrap();
    assert_eq!(name, "shootout-load");
    let spec = &m["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 4);
    assert_eq!(spec["parallelism"], 4);
    assert_eq!(spec["backoffLimitPerIndex"], 0);
    // The wait (30 s), the run (60 s) and a margin bound the job.
    let deadline = spec["activeDeadlineSeconds"].as_u64().unwrap();
    assert!((90..=400).contains(&deadline), "{deadline}");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let labels = &spec["template"]["metadata"]["labels"];
    assert_eq!(labels["shootout.dev/job"], name);
    let spread = &pod["topologySpreadConstraints"][0];
    assert_eq!(spread["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(spread["maxSkew"], 1);
    // The spread counts the job's own pods: its selector matches the template's labels.
    for (k, v) in spread["labelSelector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(&labels[k], v, "{k}");
    }
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert_eq!(c["image"], "registry.example/shootout:0.1");
    for part in ["requests", "limits"] {
        assert_eq!(c["resources"][part]["cpu"], "2", "{part}");
        assert_eq!(c["resources"][part]["memory"], "512Mi", "{part}");
    }
    let args = strings(&c["args"]);
    let after = |flag: &str| -> Vec<&str> {
        args.windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| w[1].as_str())
            .collect()
    };
    assert_eq!(
        &args[..8],
        [
            "load",
            "--rate",
            "20000",
            "-d",
            "60s",
            "-c",
            "100",
            "http://web.svc:8080/"
        ]
    );
    assert_eq!(after("--shards"), ["4"]);
    assert_eq!(after("--save"), ["-", "/results"]);
    // One start time for every pod, about 30 s after the manifest was made.
    let start = shootout_model::parse_wall_clock(after("--start-at")[0]).unwrap();
    let ahead = start.duration_since(before).unwrap_or_default();
    assert!(
        (Duration::from_secs(28)..=Duration::from_secs(31)).contains(&ahead),
        "{ahead:?}"
    );
    // The results volume is mounted where --save writes.
    assert_eq!(c["volumeMounts"][0]["mountPath"], "/results");
    assert_eq!(c["volumeMounts"][0]["name"], pod["volumes"][0]["name"]);
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "load-results"
    );
}

#[test]
fn a_load_the_shards_cannot_share_makes_no_manifest() {
    for (load, hint) in [
        (
            vec!["load", "-d", "5s", "-c", "2", "http://a/"],
            "-c 4 or more",
        ),
        (vec!["-d", "5s", "http://a/"], "starting with the word load"),
        (
            vec!["load", "--shard", "0/2", "-d", "5s", "-c", "8", "http://a/"],
            "the job sets them",
        ),
        (
            vec!["load", "-d", "5s", "-c", "8", "--bogus", "http://a/"],
            "the load after --",
        ),
    ] {
        let out = shootout()
            .args(["k8s", "job", "--shards", "4", "--image", "x", "--"])
            .args(&load)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{load:?}");
        assert!(out.stdout.is_empty(), "no manifest for {load:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(hint), "{load:?}: {err}");
    }
}

#[test]
fn load_arguments_ending_in_a_double_dash_make_no_manifest() {
    // After a `--` the pods would read the job's own --shards, --start-at and --save as
    // positional arguments: every pod would fail with `unexpected argument '--shards'`.
    for load in [
        vec!["load", "-d", "5s", "-c", "8", "http://a/", "--"],
        vec!["load", "-d", "5s", "-c", "8", "--", "http://a/"],
    ] {
        let out = shootout()
            .args(["k8s", "job", "--shards", "4", "--image", "x", "--"])
            .args(&load)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{load:?}");
        assert!(out.stdout.is_empty(), "no manifest for {load:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("remove the `--`"), "{load:?}: {err}");
    }
}

#[test]
fn a_next_line_a_c1_control_and_a_noncharacter_in_the_load_read_back_exactly() {
    // Raw in the manifest, U+0085 read back as a space, and U+0080 and U+FFFE made the
    // YAML unreadable.
    let header = "X-Note: a\u{85}b\u{80}c\u{FFFE}d é";
    let m = manifest(
        &["--shards", "2", "--image", "x"],
        &["load", "-d", "5s", "-c", "4", "-H", header, "http://a/"],
    );
    let args = strings(&m["spec"]["template"]["spec"]["containers"][0]["args"]);
    assert_eq!(
        args[..8],
        ["load", "-d", "5s", "-c", "4", "-H", header, "http://a/"]
    );
}

/// The fleet's total rate (req/s) and each shard's share of the run (s).
const RATE: f64 = 800.0;
const SECONDS: u64 = 3;

/// Runs the manifest's pods as local processes, with its arguments and the index each
/// pod gets; returns their logs (stdout), in index order.
fn run_pods(url: &str) -> Vec<String> {
    let m = manifest(
        &["--shards", "4", "--image", "local", "--start-in", "3s"],
        &[
            "load",
            "--rate",
            &RATE.to_string(),
            "-d",
            &format!("{SECONDS}s"),
            "-c",
            "8",
            "--threads",
            "1",
            url,
        ],
    );
    let args = strings(&m["spec"]["template"]["spec"]["containers"][0]["args"]);
    let bin = assert_cmd::cargo::cargo_bin("shootout");
    let pods: Vec<_> = (0..4)
        .map(|i| {
            std::process::Command::new(&bin)
                .args(&args)
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    pods.into_iter()
        .map(|p| {
            let out = p.wait_with_output().unwrap();
            common::assert_ok(&out);
            String::from_utf8(out.stdout).unwrap()
        })
        .collect()
}

#[test]
fn four_pods_of_the_manifest_merge_into_the_exact_fleet_result() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let logs = run_pods(&server.url("/"));
    let shards: Vec<SavedRun> = logs
        .iter()
        .map(|log| {
            let blocks = blocks_in_log(log);
            assert_eq!(blocks.len(), 1, "one result per pod:\n{log}");
            SavedRun::parse(blocks[0].1).unwrap()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let merged_file = dir.path().join("merged.json");
    // As `kubectl logs -l … | shootout merge -` does: every pod's log, one after another.
    let out = shootout()
        .args(["merge", "-", "--json", "--save"])
        .arg(&merged_file)
        .write_stdin(logs.concat())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let merged = SavedRun::parse(&std::fs::read_to_string(&merged_file).unwrap()).unwrap();
    let m: &RunResult = merged.result.as_ref().unwrap();
    let results: Vec<&RunResult> = shards.iter().map(|s| s.result.as_ref().unwrap()).collect();

    // Each pod ran its own shard, of the same fleet.
    let indexes: Vec<u32> = shards.iter().map(|s| s.shard.unwrap().index).collect();
    assert_eq!(indexes, vec![0, 1, 2, 3]);
    for s in &shards {
        assert_eq!(s.spec.connections, 2);
        assert_eq!(s.fleet.connections, 8);
    }

    // Completed: the sum of the shards'.
    let sum: u64 = results.iter().map(|r| r.counts.completed).sum();
    assert_eq!(m.counts.completed, sum);
    assert_eq!(report["requests"]["completed"], sum);
    assert_eq!(server.answers(), sum + m.counts.aborted);

    // The histograms: value for value those of one recorder fed every request's timings.
    // Every request is in the samples (fewer than the reservoir holds), each with the
    // microseconds its shard recorded.
    let (mut total, mut waiting, mut connect) = (
        latency_histogram(),
        latency_histogram(),
        latency_histogram(),
    );
    for r in &results {
        assert_eq!(
            r.samples.len() as u64,
            r.counts.completed,
            "every request sampled"
        );
        for s in r.samples.iter().filter(|s| s.status != 0) {
            total.record(u64::from(s.total_us)).unwrap();
            waiting.record(u64::from(s.waiting_us)).unwrap();
            connect.record(u64::from(s.connect_us)).unwrap();
        }
    }
    assert_eq!(buckets(&m.histograms.latency), buckets(&total));
    assert_eq!(buckets(&m.histograms.waiting), buckets(&waiting));
    assert_eq!(buckets(&m.histograms.connect), buckets(&connect));
    let q = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q);
    eprintln!(
        "merged {} requests: {} distinct latency buckets; p50 {} µs, p99 {} µs, p99.9 {} µs, max {} µs (one recorder: {} / {} / {} / {} µs)",
        m.counts.completed,
        buckets(&m.histograms.latency).len(),
        q(&m.histograms.latency, 0.5),
        q(&m.histograms.latency, 0.99),
        q(&m.histograms.latency, 0.999),
        m.histograms.latency.max(),
        q(&total, 0.5),
        q(&total, 0.99),
        q(&total, 0.999),
        total.max()
    );

    // Throughput over the union of the shards' windows: within 1% of the fleet's rate.
    let rps = m.rps();
    eprintln!(
        "merged throughput {rps:.2} req/s over {:.4} s (target {RATE}); per second {:?}",
        m.duration.as_secs_f64(),
        m.series.iter().map(|s| s.completed).collect::<Vec<_>>()
    );
    assert!((rps - RATE).abs() <= RATE / 100.0, "{rps} req/s");

    // Evenly spaced arrivals: shard i's requests are due at i/R + 4k/R (µs, ±1 for
    // rounding), so the fleet's are due every 1/R; each full second holds R of them.
    let period = 4e6 / RATE;
    for (i, r) in results.iter().enumerate() {
        for (k, s) in r.samples.iter().enumerate() {
            let due = i as f64 * 1e6 / RATE + k as f64 * period;
            assert!(
                (s.start_us as f64 - due).abs() <= 1.0,
                "shard {i} request {k}: {} µs, due {due}",
                s.start_us
            );
        }
    }
    let full: Vec<u64> = m
        .series
        .iter()
        .take(SECONDS as usize)
        .map(|s| s.completed)
        .collect();
    assert_eq!(full.len(), SECONDS as usize);
    for (second, n) in full.iter().enumerate() {
        assert!(
            (*n as f64 - RATE).abs() <= RATE * 0.02,
            "second {second}: {n} of {RATE}"
        );
    }
}

/// Runs `shootout load` with `args` against `url`, saving to `file`; returns stdout.
fn load_saved(args: &[&str], url: &str, file: &Path) -> String {
    let out = shootout()
        .arg("load")
        .args(args)
        .arg("--save")
        .arg(file)
        .arg(url)
        .output()
        .unwrap();
    common::assert_ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_merge_of_one_file_is_that_run_s_own_report() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for format in ["text", "ab", "wrk", "json"] {
        let file = dir.path().join(format!("{format}.json"));
        let own_html = dir.path().join("own.html");
        let merged_html = dir.path().join("merged.html");
        let own = load_saved(
            &[
                "-n",
                "300",
                "-c",
                "3",
                "--format",
                format,
                "--html",
                own_html.to_str().unwrap(),
            ],
            &server.url("/"),
            &file,
        );
        let out = shootout()
            .args(["merge", "--format", format, "--html"])
            .arg(&merged_html)
            .arg(&file)
            .output()
            .unwrap();
        common::assert_ok(&out);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), own, "{format}");
        let page = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert!(page(&own_html).contains("<svg"));
        assert_eq!(page(&merged_html), page(&own_html), "the HTML page");
    }
}

/// Two shards of a closed-loop load, saved in `dir`; returns their files.
fn two_shards(url: &str, dir: &Path) -> [std::path::PathBuf; 2] {
    [0, 1].map(|i| {
        let file = dir.join(format!("shard-{i}.json"));
        load_saved(
            &["-n", "40", "-c", "2", "--shard", &format!("{i}/2"), "-q"],
            url,
            &file,
        );
        file
    })
}

fn merge_of(files: &[&Path], extra: &[&str]) -> std::process::Output {
    shootout()
        .arg("merge")
        .args(files)
        .args(extra)
        .output()
        .unwrap()
}

/// `file` with its JSON changed by `edit`, written to `to`.
fn edited(file: &Path, to: &Path, edit: impl Fn(&mut serde_json::Value)) -> std::path::PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(to, v.to_string()).unwrap();
    to.to_path_buf()
}

#[test]
fn a_missing_shard_another_url_or_a_failed_shard_is_refused_and_a_skew_noted() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let [a, b] = two_shards(&server.url("/"), dir.path());
    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).to_string();

    let both = merge_of(&[&a, &b], &["--json"]);
    assert!(both.status.success(), "{}", stderr(&both));
    let v: serde_json::Value = serde_json::from_slice(&both.stdout).unwrap();
    assert_eq!(v["requests"]["completed"], 40);

    // A shard missing: an error naming it, unless --allow-partial.
    let alone = merge_of(&[&a], &[]);
    assert_eq!(alone.status.code(), Some(2));
    assert!(
        stderr(&alone)
            .contains("shard 1 of 2 missing: give every shard's file, or --allow-partial"),
        "{}",
        stderr(&alone)
    );
    let partial = merge_of(&[&a], &["--allow-partial", "--json"]);
    assert!(partial.status.success(), "{}", stderr(&partial));
    assert!(
        stderr(&partial).contains("note: partial merge of a load in 2 shards: shard 1 missing"),
        "{}",
        stderr(&partial)
    );

    // A shard of a load to another URL: refused, saying what differs.
    let other = edited(&b, &dir.path().join("other.json"), |v| {
        v["fleet"]["url"] = "http://127.0.0.1:1/other".into();
    });
    let refused = merge_of(&[&a, &other], &["--allow-partial"]);
    assert_eq!(refused.status.code(), Some(2));
    let e = stderr(&refused);
    assert!(
        e.contains("other.json is not a shard of the same load as")
            && e.contains("url: http://127.0.0.1:"),
        "{e}"
    );
    assert!(refused.stdout.is_empty());

    // Shards that started 3 s apart: merged, with a note.
    let late = edited(&b, &dir.path().join("late.json"), |v| {
        let ns = v["result"]["started_unix_ns"].as_i64().unwrap();
        v["result"]["started_unix_ns"] = (ns + 3_000_000_000).into();
    });
    let skewed = merge_of(&[&a, &late], &[]);
    assert!(skewed.status.success(), "{}", stderr(&skewed));
    assert!(
        stderr(&skewed).contains("late.json last)"),
        "{}",
        stderr(&skewed)
    );
    assert!(stderr(&skewed).contains("s apart ("), "{}", stderr(&skewed));

    // A shard whose server could not be reached writes a failed result; the merge names it.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let failed = dir.path().join("failed.json");
    let out = shootout()
        .args(["load", "-n", "40", "-c", "2", "--shard", "1/2", "--save"])
        .arg(&failed)
        .arg(format!("http://127.0.0.1:{closed}/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The URL differs from the other shard's, so it is given a shard of its own load.
    let failed = edited(&failed, &dir.path().join("failed-shard.json"), |v| {
        v["fleet"]["url"] = server.url("/").into();
    });
    let refused = merge_of(&[&a, &failed], &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused)
            .contains("failed-shard.json (shard 1 failed: cannot connect to 127.0.0.1:"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_breached_threshold_exits_3_with_one_line_each_on_load_and_merge() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let out = shootout()
        .args(["load", "-n", "50", "-q", "--save"])
        .arg(&file)
        .args([
            "--fail-if",
            "p50>1us",
            "--fail-if",
            "failed>0",
            "--fail-if",
            "rps<1",
            "--fail-if",
            "errors>=0%",
        ])
        .arg(server.url("/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("threshold failed"))
        .collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("threshold failed: p50>1us (p50 was "),
        "{err}"
    );
    assert_eq!(lines[1], "threshold failed: errors>=0% (errors was 0.000%)");
    // The report is printed all the same.
    assert!(String::from_utf8(out.stdout).unwrap().contains("Latency"));

    let merged = merge_of(&[&file], &["-q", "--fail-if", "max>1h"]);
    assert_eq!(merged.status.code(), Some(2), "'h' is not a unit");
    assert!(String::from_utf8_lossy(&merged.stderr)
        .contains("--fail-if 'max>1h': a latency needs a unit"));
    let merged = merge_of(&[&file], &["-q", "--fail-if", "failed>0"]);
    assert_eq!(merged.status.code(), Some(0));
    let merged = merge_of(&[&file], &["-q", "--fail-if", "rps>=0"]);
    assert_eq!(merged.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&merged.stderr).starts_with("threshold failed: rps>=0 (rps was ")
    );
}

#[test]
fn a_shard_past_its_start_time_refuses_to_run_and_says_so_in_its_result() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("late.json");
    let past = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 5;
    let out = shootout()
        .args([
            "load",
            "-n",
            "40",
            "-c",
            "2",
            "--shard",
            "1/2",
            "--start-at",
            &past.to_string(),
            "--save",
        ])
        .arg(&file)
        .arg(server.url("/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--start-at passed"), "{err}");
    assert_eq!(server.requests(), 0, "nothing was sent");
    let saved = SavedRun::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        matches!(saved.outcome, shootout_model::Outcome::Failed(ref e) if e.contains("--start-at passed"))
    );
}

/// The reader's checks (ok + failures = completed, each answer once in every latency
/// histogram and under its status, each connection in setup, the seconds adding up to
/// the counts) hold for every kind of run shootout writes: answers, failures of every
/// class, timeouts, aborted requests, a rate, pipelining, HTTP/2, and the merge of them.
#[test]
fn the_files_shootout_writes_pass_every_check_of_the_reader() {
    use shootout_testserver::{H2Behavior, H2Server, INTERNAL_ERROR};
    let dir = tempfile::tempdir().unwrap();
    let h1 = |b: Behavior| TestServer::start(b).unwrap();
    /// A run: its name, the server it loads (kept alive), its URL and load flags.
    type Case = (
        &'static str,
        Box<dyn std::any::Any>,
        String,
        Vec<&'static str>,
    );
    let servers: Vec<Case> = {
        let mut v: Vec<Case> = Vec::new();
        let mut add = |name, b: Behavior, args: Vec<&'static str>| {
            let s = h1(b);
            let url = s.url("/");
            v.push((name, Box::new(s), url, args));
        };
        add(
            "hello-rate",
            Behavior::Hello,
            vec!["--rate", "400", "-d", "1s", "-c", "4"],
        );
        add(
            "fail-every",
            Behavior::FailEvery { n: 3, status: 502 },
            vec!["-n", "60", "-c", "3"],
        );
        add("reset", Behavior::ResetMidBody, vec!["-n", "20", "-c", "2"]);
        add("garbage", Behavior::Garbage, vec!["-n", "20", "-c", "2"]);
        add(
            "timeouts",
            Behavior::StallEvery {
                n: 4,
                stall: Duration::from_millis(400),
            },
            vec!["-n", "40", "-c", "4", "-s", "100ms"],
        );
        add(
            "aborted",
            Behavior::NeverAnswer,
            vec!["-d", "300ms", "-c", "2", "-s", "10s"],
        );
        add(
            "pipelined",
            Behavior::CloseAfter {
                requests: 5,
                header: true,
            },
            vec!["-n", "100", "-c", "2", "--pipeline", "4"],
        );
        let h2 = H2Server::start(H2Behavior::ResetEvery {
            n: 7,
            code: INTERNAL_ERROR,
        })
        .unwrap();
        let url = h2.url("/");
        v.push((
            "h2",
            Box::new(h2),
            url,
            vec!["--http2", "--streams", "4", "-n", "100", "-c", "2"],
        ));
        v
    };
    let mut seen = std::collections::BTreeSet::new();
    for (name, _server, url, args) in &servers {
        let file = dir.path().join(format!("{name}.json"));
        let out = shootout()
            .arg("load")
            .args(args)
            .args(["-q", "--save"])
            .arg(&file)
            .arg(url)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let run = SavedRun::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = run.result.unwrap();
        assert!(
            r.counts.completed + r.counts.aborted > 0,
            "{name}: nothing measured"
        );
        seen.extend(
            r.counts
                .failures
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, _)| k.name()),
        );
        if r.counts.aborted > 0 {
            seen.insert("aborted");
        }
        if r.counts.reconnects > 0 {
            seen.insert("reconnects");
        }
        let merged = dir.path().join(format!("{name}-merged.json"));
        let out = merge_of(&[&file], &["-q", "--save", merged.to_str().unwrap()]);
        common::assert_ok(&out);
        SavedRun::parse(&std::fs::read_to_string(&merged).unwrap())
            .unwrap_or_else(|e| panic!("{name} merged: {e}"));
    }
    for what in [
        "status",
        "reset",
        "malformed",
        "timeout",
        "stream_reset",
        "aborted",
        "reconnects",
    ] {
        assert!(seen.contains(what), "no run had {what}: {seen:?}");
    }
}

/// `merge /dev/zero` read until memory ran out.
#[test]
fn merge_of_dev_zero_or_a_file_past_the_limit_is_refused_quickly() {
    let started = std::time::Instant::now();
    let out = merge_of(&[Path::new("/dev/zero")], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: /dev/zero: it holds more than 1 GiB, the most a result file or a log of results may hold: give the files written by shootout load --save, or the log lines between their marks\n"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // A regular file is refused by its size, before a byte is read.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(shootout_model::saved::MAX_RESULT_BYTES + 1)
        .unwrap();
    let started = std::time::Instant::now();
    let out = merge_of(&[&big], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(&format!(
            "error: {}: it holds more than 1 GiB",
            big.display()
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A forged histogram in a real file is refused by `merge`, naming the file, the field
/// and the limit (it made the reader allocate 4 GiB).
#[test]
fn merge_names_the_file_and_field_of_a_forged_histogram() {
    use base64::Engine;
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("real.json");
    load_saved(&["-n", "20", "-q"], &server.url("/"), &file);
    let mut header = 0x1c84_9313u32.to_be_bytes().to_vec();
    header.extend_from_slice(&u32::MAX.to_be_bytes());
    header.resize(52, 0);
    let forged = edited(&file, &dir.path().join("forged.json"), |v| {
        v["result"]["histograms"]["connect"] = base64::engine::general_purpose::STANDARD
            .encode(&header)
            .into();
    });
    let out = merge_of(&[&forged], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {}: result.histograms.connect claims 4294967295 bytes, more than the 1 MiB a histogram may hold: the file is damaged or not a shootout result\n",
            forged.display()
        )
    );
}
