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

/// The text of the manifest of `shootout k8s job` with these flags and this load.
fn manifest_text(job: &[&str], load: &[&str]) -> String {
    let out = shootout()
        .args(["k8s", "job"])
        .args(job)
        .arg("--")
        .args(load)
        .output()
        .unwrap();
    common::assert_ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

/// The documents of the manifest, parsed as kubectl reads them.
fn manifest_docs(job: &[&str], load: &[&str]) -> Vec<serde_json::Value> {
    let text = manifest_text(job, load);
    text.split("\n---\n")
        .map(|doc| serde_yaml_ng::from_str(doc).unwrap_or_else(|e| panic!("{e}:\n{text}")))
        .collect()
}

/// The Job of the manifest.
fn manifest(job: &[&str], load: &[&str]) -> serde_json::Value {
    let docs = manifest_docs(job, load);
    let jobs: Vec<_> = docs.into_iter().filter(|d| d["kind"] == "Job").collect();
    assert_eq!(jobs.len(), 1);
    jobs.into_iter().next().unwrap()
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

const JOB_FLAGS: [&str; 10] = [
    "--shards",
    "4",
    "--image",
    "registry.example/shootout:0.1",
    "--cpu",
    "2",
    "--memory",
    "512Mi",
    "--results-claim",
    "load-results",
];

const JOB_LOAD: [&str; 10] = [
    "load",
    "--rate",
    "20000",
    "-d",
    "60s",
    "-c",
    "100",
    "--barrier-wait",
    "5m",
    "http://web.svc:8080/",
];

/// The arguments that follow `flag` in `args`.
fn after<'a>(args: &'a [String], flag: &str) -> Vec<&'a str> {
    args.windows(2)
        .filter(|w| w[0] == flag)
        .map(|w| w[1].as_str())
        .collect()
}

#[test]
fn the_k8s_manifest_is_an_indexed_job_with_what_a_shard_needs() {
    let docs = manifest_docs(&JOB_FLAGS, &JOB_LOAD);
    assert_eq!(docs.len(), 2, "a Service, then the Job");
    let (service, m) = (&docs[0], &docs[1]);
    assert_eq!(m["apiVersion"], "batch/v1");
    assert_eq!(m["kind"], "Job");
    let name = m["metadata"]["name"].as_str().unwrap();
    assert_eq!(name, "shootout-load");
    let spec = &m["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 4);
    assert_eq!(spec["parallelism"], 4);
    assert_eq!(spec["backoffLimitPerIndex"], 0);
    // The barrier's wait (5 min) and lead (2 s), the run (60 s) and a margin (300 s).
    assert_eq!(spec["activeDeadlineSeconds"], 302 + 60 + 300);
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
    assert_eq!(&args[..10], JOB_LOAD);
    assert_eq!(after(&args, "--shards"), ["4"]);
    assert_eq!(after(&args, "--save"), ["-", "/results"]);
    assert!(after(&args, "--start-at").is_empty(), "no time baked in");

    // The barrier: shard 0's pod by its stable name, through the headless Service whose
    // name is the pods' subdomain and whose selector picks the Job's pods.
    assert_eq!(
        after(&args, "--barrier"),
        ["shootout-load-0.shootout-load:7878"]
    );
    assert_eq!(service["apiVersion"], "v1");
    assert_eq!(service["kind"], "Service");
    assert_eq!(service["metadata"]["name"], "shootout-load");
    assert_eq!(pod["subdomain"], service["metadata"]["name"]);
    assert_eq!(service["spec"]["clusterIP"], "None");
    assert_eq!(service["spec"]["publishNotReadyAddresses"], true);
    assert_eq!(service["spec"]["ports"][0]["port"], 7878);
    assert_eq!(c["ports"][0]["containerPort"], 7878);
    for (k, v) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&labels[k], v, "{k}");
    }
    // The run id is the Job's uid, which Kubernetes puts in $(SHOOTOUT_RUN_ID).
    assert_eq!(after(&args, "--run-id"), ["$(SHOOTOUT_RUN_ID)"]);
    assert_eq!(c["env"][0]["name"], "SHOOTOUT_RUN_ID");
    assert_eq!(
        c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.labels['batch.kubernetes.io/controller-uid']"
    );

    // The results volume is mounted where --save writes.
    assert_eq!(c["volumeMounts"][0]["mountPath"], "/results");
    assert_eq!(c["volumeMounts"][0]["name"], pod["volumes"][0]["name"]);
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "load-results"
    );
}

/// The manifest holds no time: it is the same whenever it is made, and applied.
#[test]
fn the_k8s_manifest_text() {
    insta::assert_snapshot!(manifest_text(&JOB_FLAGS, &JOB_LOAD));
}

#[test]
fn with_start_in_the_manifest_bakes_a_start_time_and_has_no_service() {
    let before = SystemTime::now();
    let out = shootout()
        .args([
            "k8s",
            "job",
            "--shards",
            "4",
            "--image",
            "x",
            "--start-in",
            "30s",
            "--",
        ])
        .args([
            "load",
            "--rate",
            "20000",
            "-d",
            "60s",
            "-c",
            "100",
            "http://a/",
        ])
        .output()
        .unwrap();
    common::assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: with --start-in, a pod that starts after ")
            && err.contains("without it the pods start together on a barrier"),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("\n---\n") && !text.contains("kind: Service"));
    let m: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
    let c = &m["spec"]["template"]["spec"]["containers"][0];
    let args = strings(&c["args"]);
    assert!(after(&args, "--barrier").is_empty() && c["env"].is_null());
    // One start time for every pod, about 30 s after the manifest was made.
    let start = shootout_model::parse_wall_clock(after(&args, "--start-at")[0]).unwrap();
    let ahead = start.duration_since(before).unwrap_or_default();
    assert!(
        (Duration::from_secs(28)..=Duration::from_secs(31)).contains(&ahead),
        "{ahead:?}"
    );
    // The wait (30 s), the run (60 s) and a margin bound the job.
    let deadline = m["spec"]["activeDeadlineSeconds"].as_u64().unwrap();
    assert!((388..=391).contains(&deadline), "{deadline}");
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
            vec![
                "load",
                "--barrier",
                "a:1",
                "-d",
                "5s",
                "-c",
                "8",
                "http://a/",
            ],
            "the job sets them",
        ),
        (
            vec!["load", "--run-id", "x", "-d", "5s", "-c", "8", "http://a/"],
            "the job sets them",
        ),
        (
            vec![
                "load",
                "--barrier-wait",
                "0s",
                "-d",
                "5s",
                "-c",
                "8",
                "http://a/",
            ],
            "--barrier-wait 0s: give more than 0",
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

/// A shard's process: its stderr read line by line as it comes (for the lines that say
/// where it is), its stdout gathered.
struct ShardProcess {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
    stdout: std::thread::JoinHandle<String>,
}

impl ShardProcess {
    /// `shootout ARGS` with these variables set.
    fn spawn(args: &[String], env: &[(&str, String)]) -> ShardProcess {
        use std::io::{BufRead, Read};
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shootout"))
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            out.read_to_string(&mut s).unwrap();
            s
        });
        ShardProcess {
            child,
            lines,
            seen: Vec::new(),
            stdout,
        }
    }

    /// The next line of stderr that holds `what`: the process says it got there. Fails
    /// after a minute, or when the process ends first.
    fn wait_for(&mut self, what: &str) -> String {
        let until = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(what) {
                        return line;
                    }
                }
                Err(e) => panic!(
                    "no line with {what:?} ({e}); stderr:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Waits for the process to end: its exit code, its stderr and its stdout.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        (
            status.code(),
            self.seen.join("\n"),
            self.stdout.join().unwrap(),
        )
    }
}

/// The address in shard 0's `barrier: shard 0 of N listening on ADDR (run ID)`.
fn listening(line: &str) -> String {
    let rest = line.split("listening on ").nth(1).unwrap();
    rest.split(' ').next().unwrap().to_string()
}

/// Runs the manifest's pods as local processes, with its arguments and the index each
/// pod gets, as Kubernetes would: `$(SHOOTOUT_RUN_ID)` made the Job's uid; only shard 0's
/// address is this machine's, on a port the OS gives, where the cluster has its DNS name.
/// Returns their logs (stdout), in index order.
fn run_pods(url: &str) -> Vec<String> {
    let m = manifest(
        &["--shards", "4", "--image", "local"],
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
    let uid = "0f6c3f0e-7b7e-4c39-9a53-2f2b8f1f6a11";
    let args: Vec<String> = strings(&m["spec"]["template"]["spec"]["containers"][0]["args"])
        .iter()
        .map(|a| a.replace("$(SHOOTOUT_RUN_ID)", uid))
        .collect();
    let index = |i: u32| [("JOB_COMPLETION_INDEX", i.to_string())];
    let listen = ["--barrier-listen".to_string(), "127.0.0.1:0".into()];
    let mut pod0 = ShardProcess::spawn(&[&args[..], &listen].concat(), &index(0));
    let at = listening(&pod0.wait_for("listening on"));
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.starts_with("shootout-load-0.shootout-load:") {
                at.clone()
            } else {
                a.clone()
            }
        })
        .collect();
    let mut pods = vec![pod0];
    pods.extend((1..4).map(|i| ShardProcess::spawn(&args, &index(i))));
    pods.into_iter()
        .map(|p| {
            let (code, err, out) = p.finish();
            assert_eq!(code, Some(0), "{err}");
            out
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
            SavedRun::parse(&blocks[0].1).unwrap()
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

/// `merge /dev/zero` read until memory ran out, then read 1 GiB (1,028 MB at its peak)
/// before it refused: a NUL byte is refused where it is, in the first piece read.
#[test]
fn merge_of_dev_zero_or_a_file_past_the_limit_is_refused_quickly() {
    let started = std::time::Instant::now();
    let out = merge_of(&[Path::new("/dev/zero")], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: /dev/zero: it holds a NUL byte at byte 0, so it is neither a result file nor a log of results: give the files written by shootout load --save, or logs holding their lines between the marks\n"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A sparse file that opens as a result file is refused at its first zero, not by its
    // size (a log of results may be any size).
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let mut f = std::fs::File::create(&big).unwrap();
    std::io::Write::write_all(&mut f, b"{").unwrap();
    f.set_len(shootout_model::saved::MAX_RESULT_BYTES + 1)
        .unwrap();
    let out = merge_of(&[&big], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(&format!(
            "error: {}: it holds a NUL byte at byte 1",
            big.display()
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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

/// `load` as shard `i` of `n` of a small rate load, saving to `file`, with `extra` flags.
fn shard_args(i: u32, n: u32, url: &str, file: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "load",
        "--rate",
        "200",
        "-d",
        "1s",
        "-c",
        "4",
        "--threads",
        "1",
        "--no-live",
        "--shard",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.push(format!("{i}/{n}"));
    args.extend(["--save".into(), file.to_str().unwrap().into()]);
    args.extend(extra.iter().map(|a| a.to_string()));
    args.push(url.into());
    args
}

/// Shard 0 of `n`, listening on a port the OS gives; returns it and its address.
fn coordinator(n: u32, url: &str, file: &Path, extra: &[&str]) -> (ShardProcess, String) {
    let listen = [&["--barrier-listen", "127.0.0.1:0"], extra].concat();
    let mut s = ShardProcess::spawn(&shard_args(0, n, url, file, &listen), &[]);
    let at = listening(&s.wait_for("listening on"));
    (s, at)
}

fn saved(file: &Path) -> SavedRun {
    SavedRun::parse(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn failure(run: &SavedRun) -> &str {
    match &run.outcome {
        shootout_model::Outcome::Failed(e) => e,
        other => panic!("not failed: {other:?}"),
    }
}

#[test]
fn shards_started_one_after_another_start_together_on_the_barrier() {
    use shootout_model::saved::unix_ns;
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let n = 4;
    let run = ["--run-id", "staggered"];
    let (s0, at) = coordinator(n, &server.url("/"), &file(0), &run);
    let mut shards = vec![s0];
    for i in 1..n {
        // Each comes after a warm-up of its own, started once the one before it is at the
        // barrier: they come at least 300 ms apart.
        let extra = [&["--barrier", &at, "--warmup", "300ms"][..], &run].concat();
        let args = shard_args(i, n, &server.url("/"), &file(i), &extra);
        let mut s = ShardProcess::spawn(&args, &[]);
        s.wait_for(&format!(
            "barrier: shard {i} joined; {} of {n} shards here",
            i + 1
        ));
        shards.push(s);
    }
    for s in shards {
        let (code, err, _) = s.finish();
        assert_eq!(code, Some(0), "{err}");
    }
    let runs: Vec<SavedRun> = (0..n).map(|i| saved(&file(i))).collect();
    let facts: Vec<_> = runs.iter().map(|r| r.barrier.unwrap()).collect();
    let planned: Vec<i64> = runs.iter().map(|r| unix_ns(r.start_at.unwrap())).collect();
    let started: Vec<i64> = runs
        .iter()
        .map(|r| unix_ns(r.result.as_ref().unwrap().started))
        .collect();
    // Each shard came after the one before it, so waited less.
    for w in facts[1..].windows(2) {
        assert!(w[0].waited > w[1].waited, "{facts:?}");
    }
    assert_eq!((facts[0].skew_ns, facts[0].rtt), (0, Duration::ZERO));
    let ms = |ns: i64| ns as f64 / 1e6;
    for i in 1..n as usize {
        // The barrier's promise: shard i's start is shard 0's within half its round trip
        // (and the time between two reads of the clock).
        let half = facts[i].rtt.as_nanos() as i64 / 2 + 1_000_000;
        let off = planned[i] - planned[0];
        assert!(
            off.abs() <= half,
            "shard {i}: {} ms off, bound {} ms",
            ms(off),
            ms(half)
        );
        // One machine, one clock: the skew measured is within that bound of none.
        assert!(facts[i].skew_ns.abs() <= half, "shard {i}: {facts:?}");
    }
    // Without the barrier they would have started as far apart as they came.
    let spread = started.iter().max().unwrap() - started.iter().min().unwrap();
    let came_apart = (facts[1].waited - facts[n as usize - 1].waited).as_nanos() as i64;
    assert!(
        spread < came_apart,
        "started {} ms apart, came {} ms apart",
        ms(spread),
        ms(came_apart)
    );
    eprintln!(
        "barrier: shards came {:.1} ms apart; planned starts within {:.3} ms of shard 0's; started {:.3} ms apart; skews {:?} ns, round trips {:?}",
        ms(came_apart),
        planned.iter().map(|p| ms(p - planned[0]).abs()).fold(0.0, f64::max),
        ms(spread),
        facts.iter().map(|f| f.skew_ns).collect::<Vec<_>>(),
        facts.iter().map(|f| f.rtt).collect::<Vec<_>>()
    );
    // The merge reports what the barrier measured.
    let files: Vec<_> = (0..n).map(file).collect();
    let out = merge_of(
        &files.iter().map(|f| f.as_path()).collect::<Vec<_>>(),
        &["-q"],
    );
    common::assert_ok(&out);
    let out = merge_of(&files.iter().map(|f| f.as_path()).collect::<Vec<_>>(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: 4 shards started on shard 0's barrier: clocks within "),
        "{err}"
    );
}

#[test]
fn a_shard_that_never_comes_fails_the_barrier_naming_it() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let (mut s0, at) = coordinator(3, &server.url("/"), &file(0), &["--barrier-wait", "2s"]);
    let mut s1 = ShardProcess::spawn(
        &shard_args(1, 3, &server.url("/"), &file(1), &["--barrier", &at]),
        &[],
    );
    s1.wait_for("barrier: shard 1 joined; 2 of 3 shards here");
    s0.wait_for("barrier: 2 of 3 shards here");
    // Shard 2 never comes: shard 0 gives up after its wait and tells shard 1 why.
    let (code, err, _) = s0.finish();
    assert_eq!(code, Some(1), "{err}");
    let why = "the start barrier waited 2s for shard 2 of 3, which never came";
    assert!(
        err.contains(&format!("error: start barrier: {why}")),
        "{err}"
    );
    assert!(failure(&saved(&file(0))).contains(why));
    let (code, err, _) = s1.finish();
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(why), "{err}");
    assert!(failure(&saved(&file(1))).contains(why));
    assert_eq!(server.requests(), 0, "nothing was sent");
}

#[test]
fn a_shard_of_another_run_or_a_stranger_is_refused_and_the_right_one_still_joins() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let url = server.url("/");
    let (s0, at) = coordinator(2, &url, &file(0), &["--run-id", "run-a"]);
    let other = dir.path().join("other.json");
    let stranger = ShardProcess::spawn(
        &shard_args(1, 2, &url, &other, &["--barrier", &at, "--run-id", "run-b"]),
        &[],
    );
    let (code, err, _) = stranger.finish();
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("shard 1 is of run run-b, this barrier is of run run-a: shards of different runs never meet"),
        "{err}"
    );
    assert!(failure(&saved(&other)).contains("is of run run-b"));
    // And a load by default is its own run: the same flags, another rate, are refused.
    let mut mismatched = shard_args(1, 2, &url, &other, &["--barrier", &at]);
    mismatched[2] = "300".into();
    let (code, err, _) = ShardProcess::spawn(&mismatched, &[]).finish();
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("this barrier is of run run-a"), "{err}");
    // Strangers on the port: each gets one line saying why, and the connection closes.
    for (sent, answer) in [
        (vec![b'A'; 256], "FAIL a line longer than 256 bytes: not a shootout barrier\n"),
        (
            b"GET / HTTP/1.1\r\n".to_vec(),
            "FAIL a byte that is not printable ASCII: not a shootout barrier\n",
        ),
        (b"WHEN\n".to_vec(), "FAIL WHEN before HELLO: not a shard of shootout load\n"),
        (
            b"HELLO shootout-barrier/1 run-a 0 2\n".to_vec(),
            "FAIL shard 0 is the one listening here: is another load's shard 0 using --barrier with this address?\n",
        ),
    ] {
        use std::io::{Read, Write};
        let mut peer = std::net::TcpStream::connect(&at).unwrap();
        peer.write_all(&sent).unwrap();
        let mut got = String::new();
        peer.read_to_string(&mut got).unwrap();
        assert_eq!(got, answer);
    }
    let right = ShardProcess::spawn(
        &shard_args(
            1,
            2,
            &url,
            &file(1),
            &["--barrier", &at, "--run-id", "run-a"],
        ),
        &[],
    );
    for s in [s0, right] {
        let (code, err, _) = s.finish();
        assert_eq!(code, Some(0), "{err}");
    }
    assert!(saved(&file(1)).barrier.is_some());
}

#[test]
fn a_shard_that_comes_back_before_the_start_joins_and_after_it_fails_the_merge() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let url = server.url("/");
    // Runs of 3 s: shard 0 is still there when shard 1 restarts after the start.
    let longer = |mut args: Vec<String>| {
        assert_eq!(args[3..5], ["-d", "1s"]);
        args[4] = "3s".into();
        args
    };
    let member = |i: u32, f: &Path, at: &str| {
        ShardProcess::spawn(&longer(shard_args(i, 3, &url, f, &["--barrier", at])), &[])
    };
    let listen = ["--barrier-listen", "127.0.0.1:0"];
    let mut s0 = ShardProcess::spawn(&longer(shard_args(0, 3, &url, &file(0), &listen)), &[]);
    let at = listening(&s0.wait_for("listening on"));
    let mut first = member(1, &file(1), &at);
    first.wait_for("barrier: shard 1 joined; 2 of 3 shards here");
    // Shard 1's process dies at the barrier; its restart takes its place (2 of 3 here,
    // not 3: the first one's place was freed).
    first.child.kill().unwrap();
    first.finish();
    let mut again = member(1, &file(1), &at);
    again.wait_for("barrier: shard 1 joined; 2 of 3 shards here");
    let last = member(2, &file(2), &at);
    s0.wait_for("barrier: all 3 shards here");
    // Shard 1 restarts once more, after the start: refused, it fails.
    let late_file = dir.path().join("shard-1-restarted.json");
    let (code, err, _) = member(1, &late_file, &at).finish();
    assert_eq!(code, Some(1), "{err}");
    let refused = "started without shard 1";
    assert!(err.contains(refused), "{err}");
    assert!(failure(&saved(&late_file)).contains(refused));
    for s in [s0, again, last] {
        let (code, err, _) = s.finish();
        assert_eq!(code, Some(0), "{err}");
    }
    // The restarted shard's result fails the merge: its run was not the others'.
    let out = merge_of(&[&file(0), &late_file, &file(2)], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("shard-1-restarted.json (shard 1 failed: start barrier:")
            && err.contains(refused),
        "{err}"
    );
    let out = merge_of(&[&file(0), &file(1), &file(2)], &["-q"]);
    common::assert_ok(&out);
}

#[test]
fn ctrl_c_at_the_barrier_ends_the_wait_and_says_so_in_the_result() {
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let url = server.url("/");
    let interrupt = |s: &ShardProcess| unsafe {
        libc::kill(s.child.id() as libc::pid_t, libc::SIGINT);
    };
    // Shard 0, waiting for shard 1; shard 1 of another barrier, waiting for its shard 0.
    let (mut s0, _) = coordinator(2, &url, &file(0), &[]);
    s0.wait_for("barrier: 1 of 2 shards here");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let mut s1 = ShardProcess::spawn(
        &shard_args(1, 2, &url, &file(1), &["--barrier", &closed]),
        &[],
    );
    s1.wait_for("barrier: waiting for shard 0 at");
    for (i, s) in [(0, s0), (1, s1)] {
        interrupt(&s);
        let (code, err, _) = s.finish();
        assert_eq!(code, Some(130), "{err}");
        let run = saved(&file(i));
        assert_eq!(
            failure(&run),
            "start barrier: interrupted (Ctrl-C or SIGTERM)"
        );
    }
    assert_eq!(server.requests(), 0);
}

/// 20 connections that said nothing to shard 0's barrier made the real shard 1 fail at
/// once ("too many connections"): strangers crowded it out. Now 100 silent connections,
/// then 100 that send bytes of garbage slowly while the real shard comes, are let go of
/// to make room, and the shards meet.
#[test]
fn strangers_that_crowd_the_barrier_do_not_keep_a_shard_out() {
    use std::io::Write;
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |i: u32| dir.path().join(format!("shard-{i}.json"));
    let url = server.url("/");
    let (mut s0, at) = coordinator(2, &url, &file(0), &["--barrier-wait", "30s"]);
    s0.wait_for("barrier: 1 of 2 shards here");
    let silent: Vec<std::net::TcpStream> = (0..100)
        .map(|_| std::net::TcpStream::connect(&at).unwrap())
        .collect();
    // 100 more, each sending one printable byte of a line that never ends every 50 ms
    // (a line is cut off at 256 bytes: these would take 12 s), for at most 8 s.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slow = {
        let (at, done) = (at.clone(), done.clone());
        std::thread::spawn(move || {
            let mut peers: Vec<std::net::TcpStream> = (0..100)
                .map(|_| std::net::TcpStream::connect(&at).unwrap())
                .collect();
            let until = std::time::Instant::now() + Duration::from_secs(8);
            while std::time::Instant::now() < until
                && !done.load(std::sync::atomic::Ordering::Relaxed)
            {
                for p in &mut peers {
                    let _ = p.write_all(b"x");
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            peers.len()
        })
    };
    let s1 = ShardProcess::spawn(&shard_args(1, 2, &url, &file(1), &["--barrier", &at]), &[]);
    for s in [s0, s1] {
        let (code, err, _) = s.finish();
        assert_eq!(code, Some(0), "{err}");
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(slow.join().unwrap(), 100);
    assert!(saved(&file(1)).barrier.is_some());
    // Every silent one was told to try again, or closed, none admitted.
    for mut s in silent {
        use std::io::Read;
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = String::new();
        let _ = s.read_to_string(&mut got);
        assert!(got.is_empty() || got == "BUSY\n", "{got:?}");
    }
}

/// A false shard 0 that answered `WAIT 2 2`, `GO`, then a start 50 minutes ahead kept
/// shard 1 (`--barrier-wait 3s`) waiting until it was killed: a start further ahead than
/// a barrier announces is refused, saying why.
#[test]
fn a_start_announced_too_far_ahead_is_refused() {
    use std::io::{BufRead, Write};
    let server = TestServer::start(Behavior::Hello).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fake = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = fake.local_addr().unwrap().to_string();
    let faking = std::thread::spawn(move || {
        let (stream, _) = fake.accept().unwrap();
        let mut lines = std::io::BufReader::new(stream.try_clone().unwrap()).lines();
        let mut w = &stream;
        assert!(lines.next().unwrap().unwrap().starts_with("HELLO "));
        w.write_all(b"WAIT 2 2\nGO\n").unwrap();
        let mut asked = 0;
        while let Some(Ok(line)) = lines.next() {
            assert_eq!(line, "WHEN");
            asked += 1;
            let _ = w.write_all(b"START 3000000000000 1764000000000000000\n");
        }
        asked
    });
    let file = dir.path().join("shard-1.json");
    let mut s1 = ShardProcess::spawn(
        &shard_args(
            1,
            2,
            &server.url("/"),
            &file,
            &["--barrier", &at, "--barrier-wait", "3s"],
        ),
        &[],
    );
    let began = std::time::Instant::now();
    let line = s1.wait_for("error: start barrier:");
    let (code, err, _) = s1.finish();
    assert!(began.elapsed() < Duration::from_secs(10), "{err}");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        line.contains(
            "a start more than 10 s ahead (a barrier's start is 2 s after the last shard comes)"
        ),
        "{line}"
    );
    assert!(failure(&saved(&file)).contains("a start more than 10 s ahead"));
    assert_eq!(faking.join().unwrap(), 1);
    assert_eq!(server.requests(), 0);
}

/// Two shards of a journey load, saved and merged: the fleet's steps and journeys are the
/// sums of the shards' (each shard's file holds them), in the merged JSON with exact
/// counts.
#[test]
fn journey_shards_merge_into_the_fleet_s_steps_and_journeys() {
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let journey = dir.path().join("j.toml");
    std::fs::write(
        &journey,
        "[[journey]]\nname = \"w\"\n[[journey.step]]\nname = \"login\"\npost = \"/login?user=u{user}\"\n\
         [[journey.step]]\nname = \"form\"\nget = \"/form\"\n\
         capture = { csrf = { regex = 'name=\"csrf\" value=\"([^\"]+)\"' } }\n",
    )
    .unwrap();
    let files = [0, 1].map(|i| {
        let file = dir.path().join(format!("shard-{i}.json"));
        let shard = format!("{i}/2");
        let args = ["-n", "6", "-c", "2", "--shard", &shard, "-q", "--journey"];
        let mut args = args.to_vec();
        args.push(journey.to_str().unwrap());
        load_saved(&args, &server.url("/"), &file);
        file
    });
    assert_eq!(
        server.requests(),
        12,
        "2 steps × 6 journeys, shared by the shards"
    );
    let steps = |v: &serde_json::Value| -> Vec<(String, u64, u64)> {
        v["requests_by_target"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let n = |k: &str| t[k].as_u64().unwrap();
                (
                    t["target"].as_str().unwrap().to_string(),
                    n("completed"),
                    n("ok"),
                )
            })
            .collect()
    };
    let mut per_shard = Vec::new();
    for f in &files {
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let t = &saved["result"]["targets"];
        assert_eq!(t.as_array().map(Vec::len), Some(2), "{saved}");
        per_shard.push(t[0]["completed"].as_u64().unwrap());
    }
    assert_eq!(per_shard.iter().sum::<u64>(), 6, "{per_shard:?}");
    let out = merge_of(&[&files[0], &files[1]], &["--format", "json"]);
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        steps(&v),
        [
            ("w › login".to_string(), 6, 6),
            ("w › form".to_string(), 6, 6)
        ]
    );
    let j = &v["journeys"][0];
    assert_eq!(
        (j["journey"].as_str(), j["ended"].as_u64(), j["ok"].as_u64()),
        (Some("w"), Some(6), Some(6))
    );
    // The fleet is described by its journeys, as each shard's load was, not as
    // connections; and a run in stages by its stages, not its largest stage's users.
    let users = format!("journeys of {}: 2 users on ", journey.display());
    let out = merge_of(&[&files[0], &files[1]], &[]);
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&users), "{text}");
    let staged = dir.path().join("staged.json");
    let args = ["-q", "--stages", "1:200ms,2:200ms", "--journey"];
    let mut args = args.to_vec();
    args.push(journey.to_str().unwrap());
    load_saved(&args, &server.url("/"), &staged);
    let out = merge_of(&[&staged], &[]);
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "journeys of {}: 1 user for 200 ms, then 2 users for 200 ms on ",
            journey.display()
        )),
        "{text}"
    );
}
