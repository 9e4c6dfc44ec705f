//! `shootout journey`: `check` reads a journey file and says what it holds or where it is
//! wrong; `from-locust` translates Locustfiles (hand-written ones here; Locust's own
//! examples, from its sdist on PyPI, in the ignored test); and the capacity search of
//! `shootout load --journey` judged on a step.

mod common;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn shootout() -> Command {
    Command::cargo_bin("shootout").unwrap()
}

/// A Locustfile of every construct the translator knows.
const SHOP: &str = r#"
import random
from locust import HttpUser, FastHttpUser, task, between, constant_pacing


class Buyer(HttpUser):
    """Logs in, browses, buys."""
    host = "http://shop.test"
    weight = 3
    wait_time = between(1, 2.5)

    def on_start(self):
        response = self.client.post("/login", json={"user": "ann", "n": 1})
        self.token = response.json()["token"]

    @task(4)
    def browse(self):
        with self.client.get(f"/items?page={random.randint(1, 9)}", name="items", catch_response=True) as r:
            if r.status_code != 200:
                r.failure("not 200")
            if "<ul>" not in r.text:
                r.failure("no list")
            first = r.json()["items"][0]["id"]
        self.client.get(f"/items/{first}", headers={"Authorization": f"Bearer {self.token}"})

    @task
    def buy(self):
        with self.client.post("/cart", data={"item": "7", "note": "a b"}, catch_response=True) as r:
            if r.json()["ok"] == True:
                r.success()
            else:
                r.failure("refused")


class Bot(FastHttpUser):
    wait_time = constant_pacing(2)

    @task
    def ping(self):
        self.client.get("/health", params={"full": "1"})
"#;

const SHOP_JOURNEYS: &str = r#"# Translated from shop.py by shootout journey from-locust: check it with
# shootout journey check FILE.
# line 8: Buyer's host http://shop.test is not part of a journey: give it to shootout as the URL
# line 12: on_start: Locust runs the first task right after it, a journey thinks (uniform(1s,2500ms)) after its steps too
# line 17: task browse sends 2 requests: Locust waits between tasks only, a journey thinks (uniform(1s,2500ms)) between any two steps

[[journey]]
name = "Buyer"
weight = 3
think = "uniform(1s,2500ms)"

[[journey.step]]
name = "POST /login"
post = "/login"
json = { "user" = "ann", "n" = 1 }
capture = { "token" = { "json" = "/token" } }
once = true

[[journey.step]]
name = "items"
get = "/items?page={rand:1-9}"
expect = { "status" = 200, "body_contains" = "<ul>" }
capture = { "first" = { "json" = "/items/0/id" } }
task = "browse"
weight = 4

[[journey.step]]
name = "GET /items/{first}"
get = "/items/{first}"
headers = { "Authorization" = "Bearer {token}" }
task = "browse"

[[journey.step]]
name = "POST /cart"
post = "/cart"
form = { "item" = "7", "note" = "a b" }
expect = { "json" = { "/ok" = true } }
task = "buy"

[[journey]]
name = "Bot"
weight = 1
think = "pacing(2s)"

[[journey.step]]
name = "GET /health?full=1"
get = "/health?full=1"
task = "ping"
"#;

#[test]
fn from_locust_translates_every_supported_construct() {
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("shop.py");
    std::fs::write(&py, SHOP).unwrap();
    let out = shootout()
        .args(["journey", "from-locust"])
        .arg(&py)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), SHOP_JOURNEYS);

    // -o writes the same; `journey check` reads it back.
    let toml = dir.path().join("shop.toml");
    shootout()
        .args(["journey", "from-locust"])
        .arg(&py)
        .arg("-o")
        .arg(&toml)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), SHOP_JOURNEYS);
    let out = shootout()
        .args(["journey", "check"])
        .arg(&toml)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2 journeys, all checked"), "{text}");
    assert!(
        text.contains("journey \"Buyer\": weight 3 (75% of users), think uniform(1s, 2s 500ms)"),
        "{text}"
    );
    assert!(text.contains("80% task \"browse\""), "{text}");
    assert!(
        text.contains("captures {first} from json /items/0/id"),
        "{text}"
    );
}

#[test]
fn from_locust_names_every_untranslatable_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("busy.py");
    std::fs::write(
        &py,
        "from locust import HttpUser, TaskSet, task\nimport time\n\nclass Tasks(TaskSet):\n    pass\n\nclass U(HttpUser):\n    @task\n    def a(self):\n        for i in range(3):\n            self.client.get(f\"/x/{i:03}\")\n        time.sleep(1)\n        self.client.get(\"http://other.test/\")\n\n    @task\n    def b(self):\n        with self.client.get(\"/b\", catch_response=True) as r:\n            if \"x\" not in r.text:\n                r.failure(\"no x\")\n            if \"y\" not in r.text:\n                r.failure(\"no y\")\n",
    )
    .unwrap();
    let toml = dir.path().join("busy.toml");
    let out = shootout()
        .args(["journey", "from-locust"])
        .arg(&py)
        .arg("-o")
        .arg(&toml)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    let shown = py.display().to_string();
    for (line, words) in [
        (4, "is a TaskSet"),
        (10, "`for i in range(3):`: not translated"),
        (12, "`time.sleep(1)`"),
        (13, "an absolute URL"),
        (20, "a second check of the text on one request"),
    ] {
        assert!(
            err.contains(&format!("{shown}:{line}: ")) && err.contains(words),
            "{line} {words}:\n{err}"
        );
    }
    assert!(err.contains("5 constructs cannot be translated"), "{err}");
    assert!(!toml.exists(), "nothing is written");
}

/// Each mistake through the binary: the file and line, the key, and words of the fix; the
/// data file a journey names is read beside it, with its columns.
#[test]
fn journey_check_names_the_file_line_key_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("j.toml");
    std::fs::write(dir.path().join("users.csv"), "user_name,password\nann,x\n").unwrap();
    std::fs::write(dir.path().join("ragged.csv"), "user_name\nann\nbob,extra\n").unwrap();
    let head = "[[journey]]\nname = \"a\"\n";
    let cases: &[(&str, usize, &str, &str)] = &[
        (
            "data = \"missing.csv\"\n[[journey.step]]\nget = \"/\"\n",
            3,
            "journey \"a\": data = \"missing.csv\": cannot read ",
            "fix the path (a relative one is read from the journey file's folder)",
        ),
        (
            "data = \"users.csv\"\n[[journey.step]]\npost = \"/login\"\nform = { user = \"{user_name}\", pass = \"{pass}\" }\n",
            6,
            "step \"POST /login\": form: unknown variable {pass}: not a column of users.csv (its columns: user_name, password)",
            "add a capture of that name",
        ),
        (
            "data = \"ragged.csv\"\n[[journey.step]]\nget = \"/\"\n",
            3,
            "data file ragged.csv:3: this row has 2 fields, the header 1",
            "give every row one field per column",
        ),
        (
            "weight = 0\n[[journey.step]]\nget = \"/\"\n",
            3,
            "journey \"a\": weight = 0",
            "remove it instead",
        ),
        (
            "[[journey.step]]\nget = \"/\"\ncapture = { t = { regex = \"(\" } }\n",
            5,
            "capture.t: regex '(' does not compile",
            "fix it",
        ),
        (
            "[[journey.step]]\nget = \"/{t}\"\n[[journey.step]]\nget = \"/\"\ncapture = { t = { json = \"/t\" } }\n",
            4,
            "get: {t} is used before a step captures it",
            "move the capture to an earlier step",
        ),
        (
            "[[journey.step]]\nget = \"/\"\nheaders = { X = \"{nope}\" }\n",
            5,
            "headers.X: unknown variable {nope}: the journey has no data file",
            "add a capture of that name",
        ),
        (
            "[[journey.step]]\nget = \"/\"\nexpect = { statuss = 200 }\n",
            5,
            "unknown field `statuss`",
            "expected one of `status`",
        ),
        (
            "[[journey.step]]\nget = \"/\"\nbody_file = \"b.bin\"\n",
            5,
            "body_file = \"b.bin\": cannot read ",
            "fix the path",
        ),
    ];
    for (text, line, key, fix) in cases {
        std::fs::write(&toml, format!("{head}{text}")).unwrap();
        let out = shootout()
            .args(["journey", "check"])
            .arg(&toml)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with(&format!("error: {}:{line}: ", toml.display())),
            "{text}\n{err}"
        );
        assert!(err.contains(key) && err.contains(fix), "{text}\n{err}");
        assert!(out.stdout.is_empty(), "{text}");
    }

    // With its data file beside it, a journey file reads, and check says what it holds.
    std::fs::write(
        &toml,
        format!("{head}data = \"users.csv\"\n[[journey.step]]\npost = \"/login\"\nform = {{ user = \"{{user_name}}\", pass = \"{{password}}\" }}\n"),
    )
    .unwrap();
    let out = shootout()
        .args(["journey", "check"])
        .arg(&toml)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("data users.csv: 1 row (user_name, password), user n takes row n mod rows"),
        "{text}"
    );
    assert!(
        text.contains("1. \"POST /login\": POST /login\n       body pass={password}&user={user_name}\n       Content-Type: application/x-www-form-urlencoded\n       status <400\n"),
        "{text}"
    );
}

/// Locust's own examples that use only what is translated: each becomes a journey file
/// that `journey check` reads.
const LOCUST_TRANSLATED: &[&str] = &[
    "debugging.py",
    "dispatch_test_scripts/locustfile.py",
    "fast_http_locust.py",
    "use_as_lib.py",
    "web_ui_auth.py",
];

/// Locust's other examples, each with the line of every construct that is not translated
/// (TaskSet classes and their use as tasks, loops, custom wait functions, `print`, other
/// User classes, absolute URLs, on_stop, `raise StopUser()`, ...); files that hold no
/// HttpUser class are refused at line 1.
const LOCUST_REFUSED: &[(&str, &[u32])] = &[
    ("add_command_line_argument.py", &[23, 24]),
    ("basic.py", &[12, 29]),
    ("browse_docs_sequence_test.py", &[11, 40]),
    ("browse_docs_test.py", &[11, 39]),
    ("custom_messages.py", &[70]),
    ("custom_shape/double_wave.py", &[6, 14]),
    ("custom_shape/stages.py", &[4, 12]),
    ("custom_shape/staging_user_classes.py", &[4, 12, 17]),
    ("custom_shape/step_load.py", &[6, 14]),
    ("custom_shape/wait_user_count.py", &[9, 17]),
    ("custom_wait_function.py", &[14, 32, 33, 55, 56]),
    ("custom_xmlrpc_client/server.py", &[1]),
    ("custom_xmlrpc_client/xmlrpc_locustfile.py", &[43]),
    ("debugging_advanced.py", &[12, 22]),
    ("dynamic_user_credentials.py", &[12, 25]),
    ("events.py", &[9, 22]),
    ("extend_web_ui.py", &[17, 30]),
    ("grpc/grpc_user.py", &[49]),
    ("grpc/hello_pb2.py", &[1]),
    ("grpc/hello_pb2_grpc.py", &[1]),
    ("grpc/hello_server.py", &[1]),
    ("grpc/locustfile.py", &[1]),
    ("locustfile.py", &[16]),
    ("manual_stats_reporting.py", &[59]),
    ("multiple_hosts.py", &[17, 28]),
    ("nested_inline_tasksets.py", &[13]),
    ("rest.py", &[16, 21, 31, 35, 39, 43, 50, 54, 57, 66, 70, 88]),
    (
        "sdk_session_patching/session_patch_locustfile.py",
        &[9, 11, 15, 17, 23],
    ),
    ("semaphore_wait.py", &[18]),
    ("stop_on_threshold.py", &[15, 18]),
    ("terraform/aws/plan/basic.py", &[11, 12, 16, 17, 21, 22]),
    ("test_data_management.py", &[85, 88, 95, 98, 109, 111, 117]),
    ("web_ui_cache_stats.py", &[17, 37]),
    ("worker_index.py", &[8]),
];

/// Every `.py` file under `dir`, as paths relative to it with `/`.
fn python_files(dir: &Path, under: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = format!("{under}{}", e.file_name().to_string_lossy());
        if e.file_type().unwrap().is_dir() {
            python_files(&e.path(), &format!("{name}/"), out);
        } else if name.ends_with(".py") {
            out.push(name);
        }
    }
}

/// Locust's own example Locustfiles, from its sdist on PyPI (version and hash pinned by
/// scripts/locust-examples, fetched once into the target folder): the ones within the
/// supported subset translate and read back; each of the others is refused with the line
/// of every construct that is not translated, and nothing is written.
#[test]
fn from_locust_on_locusts_own_examples() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/locust-examples");
    let got = std::process::Command::new(&script)
        .arg(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("scripts/locust-examples");
    let why = String::from_utf8_lossy(&got.stderr);
    if got.status.code() == Some(3) {
        eprintln!("skipped: Locust's example Locustfiles are not at hand: {why}");
        return;
    }
    assert!(got.status.success(), "scripts/locust-examples: {why}");
    let examples = PathBuf::from(String::from_utf8(got.stdout).unwrap().trim());

    // Every example is in one of the two lists.
    let mut found = Vec::new();
    python_files(&examples, "", &mut found);
    found.sort();
    let mut listed: Vec<String> = LOCUST_TRANSLATED
        .iter()
        .map(|n| n.to_string())
        .chain(LOCUST_REFUSED.iter().map(|(n, _)| n.to_string()))
        .collect();
    listed.sort();
    assert_eq!(found, listed);

    let out_dir = tempfile::tempdir().unwrap();
    let translate = |name: &str| {
        let out = out_dir.path().join(name.replace('/', "_") + ".toml");
        let ran = shootout()
            .args(["journey", "from-locust"])
            .arg(examples.join(name))
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        (ran, out)
    };
    for name in LOCUST_TRANSLATED {
        let (ran, out) = translate(name);
        let err = String::from_utf8_lossy(&ran.stderr);
        assert!(ran.status.success(), "{name}: {err}");
        shootout()
            .args(["journey", "check"])
            .arg(&out)
            .assert()
            .success()
            .stdout(predicates::str::contains("all checked"));
    }
    // Two translations in full: a FastHttpUser's two tasks; three users and a load shape.
    let text = |name: &str| std::fs::read_to_string(translate(name).1).unwrap();
    assert_eq!(
        text("fast_http_locust.py"),
        r#"# Translated from fast_http_locust.py by shootout journey from-locust: check it with
# shootout journey check FILE.
# line 10: WebsiteUser's host http://127.0.0.1:8089 is not part of a journey: give it to shootout as the URL

[[journey]]
name = "WebsiteUser"
weight = 1

[[journey.step]]
name = "GET /"
get = "/"
task = "index"

[[journey.step]]
name = "GET /stats/requests"
get = "/stats/requests"
task = "stats"
"#
    );
    let dispatch = text("dispatch_test_scripts/locustfile.py");
    for user in ["UserA", "UserB", "UserC"] {
        assert!(
            dispatch.contains(&format!(
                "name = \"{user}\"\nweight = 1\nthink = \"600s\"\n\n[[journey.step]]\nname = \"{user}\"\nget = \"/\"\ntask = \"get_root\"\n"
            )),
            "{dispatch}"
        );
    }
    assert!(
        dispatch
            .contains("# line 52: the load shape RampUpThenDownLoadShape is not part of a journey"),
        "{dispatch}"
    );

    let auth = text("web_ui_auth.py");
    assert!(
        auth.contains(
            "# line 41: the event listener locust_init is not part of a journey: left out\n"
        ),
        "{auth}"
    );

    for (name, lines) in LOCUST_REFUSED {
        let (ran, out) = translate(name);
        assert_eq!(ran.status.code(), Some(1), "{name}");
        assert!(!out.exists(), "{name}: nothing is written");
        let err = String::from_utf8(ran.stderr).unwrap();
        let shown = format!("{}:", examples.join(name).display());
        let mut named: Vec<u32> = err
            .lines()
            .filter_map(|l| l.strip_prefix(&shown))
            .map(|l| l.split(':').next().unwrap().parse().unwrap())
            .collect();
        named.dedup();
        assert_eq!(&named, lines, "{name}:\n{err}");
        let n = err.lines().filter(|l| l.starts_with(&shown)).count();
        assert!(
            err.contains(&format!(
                "{n} construct{} cannot be translated",
                if n == 1 { "" } else { "s" }
            )),
            "{name}:\n{err}"
        );
    }
}

/// A journey of four requests: three answered at once (`home`), then one served in turn
/// server-wide, 10 ms each (`desk`: at most 100 a second, however they arrive).
const DESK: &str = r#"
[[journey]]
name = "visit"
[[journey.step]]
name = "home"
get = "/form"
repeat = 3
[[journey.step]]
name = "desk"
get = "/desk?us=10000"
"#;

/// The capacity search on journeys: with an SLO on all requests and one on a step, the
/// step binds. Three of each journey's four requests are answered at once, so the median
/// of all requests holds at every rate; the `desk` step is served one at a time, 10 ms
/// each, so above 100 journeys a second its queue grows and its p90 breaks. The capacity
/// found is in journeys a second and at most the desk's 100 (5 % over, the search's
/// resolution), every step that broke, broke the step's SLO, and a step that broke it
/// was decided on the step's counts before its deadline: its slow answers were already
/// more than a tenth of all the desk answers the step could count.
#[test]
fn find_max_on_journeys_is_bounded_by_a_step_slo() {
    use shootout_testserver::{Behavior, TestServer};
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("desk.toml");
    std::fs::write(&file, DESK).unwrap();
    let out = shootout()
        .args(["load", "-q", "--journey"])
        .arg(&file)
        .args([
            "--find-max",
            "--slo",
            "p50<40ms",
            "--slo",
            "step:desk:p90<40ms",
            "--from",
            "40",
            "--to",
            "1000",
            "--format",
            "json",
        ])
        .arg(server.url("/"))
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unit"], "journeys/s", "{v}");
    let c = &v["capacity"];
    let lo = c["max_rps"].as_f64().unwrap_or_else(|| panic!("{c}"));
    let hi = c["first_failing_rps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{c}"));
    assert!(
        (40.0..=100.0 * 1.05).contains(&lo) && hi <= 200.0,
        "[{lo}, {hi}): {c}"
    );
    // The step's SLO binds; on a busy machine the last word at the boundary may be the
    // generator's (a step's latency broken while shootout sent late is not judged).
    let limit = &c["limited_by"];
    assert!(
        limit["slo"] == "step:desk:p90<40ms" || limit["kind"] == "generator",
        "{c}"
    );
    let steps = c["steps"].as_array().unwrap();
    let broke: Vec<&serde_json::Value> = steps.iter().filter(|s| s["verdict"] == "broke").collect();
    assert!(!broke.is_empty(), "{c}");
    // The SLO on all requests is first: a step that broke only the step's held it.
    for s in &broke {
        assert_eq!(s["broke"], "step:desk:p90<40ms", "{s}");
    }
    // The step's SLO is decided on the step's live counts: a step far above the desk's
    // 100 a second ends as soon as its p90 is past the limit whatever comes, not at its
    // deadline.
    let decided =
        |s: &&&serde_json::Value| s["ended"]["by"] == "decided" && s["ended"]["met"] == false;
    assert!(broke.iter().any(|s| decided(&s)), "{c}");
}

/// A search's SLO on a step names one of the journeys' steps, or the search does not
/// start: the error names the SLO, the file, the steps there are and the fix, and the
/// server is sent nothing.
#[test]
fn a_step_slo_names_a_step_of_the_journeys_or_nothing_runs() {
    use shootout_testserver::{Behavior, TestServer};
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("desk.toml");
    std::fs::write(&file, DESK).unwrap();
    let out = shootout()
        .args(["load", "-q", "--journey"])
        .arg(&file)
        .args(["--find-max", "--slo", "step:login:p99<200ms"])
        .arg(server.url("/"))
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "--slo step:login:p99<200ms: {}: no step is named 'login' (the steps: visit › home, visit › desk): write one of them, or its name alone, after step:",
            file.display()
        )),
        "{err}"
    );
    // Without journeys, a step's SLO has no step to judge.
    let out = shootout()
        .args(["load", "-q", "--find-max", "--slo", "step:desk:p99<200ms"])
        .arg(server.url("/"))
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--slo step:desk:p99<200ms: a step is a journey's: give --journey FILE"),
        "{err}"
    );
    assert_eq!(server.requests(), 0);
}

/// `load --journey FILE --stages USERS:DURATION,…` ramps the users of the closed model
/// (the engine's tests count what each stage ran); the report says the stages, and
/// `--stages` is refused, saying what to drop, without journeys or on a shard.
#[test]
fn load_stages_ramp_the_users_and_are_refused_where_they_cannot_run() {
    use shootout_testserver::{Behavior, TestServer};
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("desk.toml");
    std::fs::write(&file, DESK).unwrap();
    let load = |args: &[&str]| {
        shootout()
            .arg("load")
            .args(args)
            .arg(server.url("/"))
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap()
    };
    let path = file.display().to_string();
    let out = load(&["--journey", &path, "--stages", "1:300ms,2:300ms"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(": 1 user for 300 ms, then 2 users for 300 ms on ")
            && text.contains("for 600 ms, timeout"),
        "{text}"
    );
    for (args, said) in [
        (
            &["--stages", "1:1s"][..],
            "--stages: stages ramp a journey's users: give --journey FILE",
        ),
        (
            &["--journey", &path, "--stages", "2:1s", "--shard", "0/2"],
            "--stages ramps the users of one process",
        ),
        (
            &["--journey", &path, "--stages", "1:1s", "--rate", "5"],
            "cannot be used with",
        ),
    ] {
        let out = load(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

/// `load --journey FILE --stages RATE/s:DURATION,…` starts the open model's journeys in
/// stages (the engine's tests count what each stage started): the report names the
/// stages and counts the schedule in journeys, 3 due in the first stage and 6 in the
/// second; the stages of rates are refused, saying what to drop, where they cannot run.
#[test]
fn load_stages_of_rates_start_journeys_and_are_refused_where_they_cannot_run() {
    use shootout_testserver::{Behavior, TestServer};
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("desk.toml");
    std::fs::write(&file, DESK).unwrap();
    let load = |args: &[&str]| {
        shootout()
            .arg("load")
            .args(args)
            .arg(server.url("/"))
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap()
    };
    let path = file.display().to_string();
    let staged = ["--journey", &path, "--stages", "10/s:300ms,20/s:300ms"];
    let out = load(&staged);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(": 10 journeys/s for 300 ms, then 20 journeys/s for 300 ms on ")
            && text.contains("for 600 ms, timeout")
            && text.contains("Schedule      target 15 journeys/s, started "),
        "{text}"
    );
    let out = load(&[&staged[..], &["--json"]].concat());
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schedule"]["unit"], "journey", "{doc}");
    assert_eq!(doc["schedule"]["due"], 9, "{doc}");
    assert_eq!(doc["load"]["rate_rps"], 15.0, "{doc}");
    for (args, said) in [
        (
            &["--stages", "10/s:1s"][..],
            "--stages: stages of a rate (RATE/s) start journeys",
        ),
        (
            &["--journey", &path, "--stages", "10/s:1s,2:1s"],
            "'2:1s': give every stage as journeys a second (RATE/s), or every one as users",
        ),
        (
            &["--journey", &path, "--stages", "10/s:1s", "--save", "-"],
            "--stages: result files do not keep stages of journeys a second yet: drop --save",
        ),
        (
            &["--journey", &path, "--stages", "10/s:1s", "--warmup", "1s"],
            "drop --warmup",
        ),
        (
            &[
                "--journey",
                &path,
                "--stages",
                "10/s:1s",
                "--arrival",
                "poisson",
            ],
            "drop --arrival poisson",
        ),
        (
            &[
                "--journey",
                &path,
                "--stages",
                "10/s:1s",
                "--find-max",
                "--slo",
                "p99<1s",
            ],
            "a capacity search chooses its own rates",
        ),
    ] {
        let out = load(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

/// Log in, read the form's token (which needs the session cookie), post with it; the
/// steps as one inline array.
const H2_WRITER: &str = r#"[[journey]]
name = "writer"
step = [
  { name = "login", post = "/login?user=h{user}" },
  { name = "form", get = "/form", capture = { csrf = { regex = 'value="([^"]+)"' } } },
  { name = "post", post = "/paste?csrf={csrf}&text=h{seq}", expect = { status = 302 } },
]
"#;

/// `load --journey FILE --http2` runs the users over HTTP/2 (h2c with prior knowledge),
/// each on a connection of its own: against the test server's application served over
/// HTTP/2 every step of the 6 journeys is answered and ok, the server sees 2 connections
/// besides the pre-flight's per run, the text's Load line says HTTP/2 and the JSON `h2`
/// with every step's counts.
#[test]
fn load_runs_journeys_over_http2() {
    use shootout_testserver::{AppFault, H2Behavior, H2Server};
    let app = H2Behavior::App {
        nth: 0,
        fault: AppFault::Goaway,
    };
    let server = H2Server::start(app).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h2.toml");
    std::fs::write(&file, H2_WRITER).unwrap();
    let run = |format: &str| {
        let mut load = shootout();
        load.args(["load", "-q", "--http2", "--format", format]);
        load.args(["-n", "6", "-c", "2", "--journey"]).arg(&file);
        let out = load.arg(server.url("/"));
        let out = out.timeout(std::time::Duration::from_secs(60)).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{out:?}");
        out.stdout
    };
    let text = String::from_utf8(run("text")).unwrap();
    assert!(
        text.contains("h2.toml over HTTP/2 (each user on a connection of its own): 2 users"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_slice(&run("json")).unwrap();
    assert_eq!(v["load"]["protocol"], "h2", "{}", v["load"]);
    let r = &v["requests"];
    assert_eq!((&r["completed"], &r["ok"]), (&18.into(), &18.into()), "{v}");
    let steps = v["requests_by_target"].as_array().unwrap();
    let steps: Vec<String> = steps
        .iter()
        .map(|t| format!("{} {}", t["target"], t["ok"]))
        .collect();
    assert_eq!(
        steps,
        [
            r#""writer › login" 6"#,
            r#""writer › form" 6"#,
            r#""writer › post" 6"#
        ]
    );
    assert_eq!(v["journeys"][0]["ok"], 6);
    assert_eq!((server.answers(), server.connections()), (36, 6));
}

/// `load --fail-if 'step:NAME:EXPR'` judges that step alone: the step whose every answer
/// failed breaches `failed>0` (exit 3, one line), the good step beside it does not, though
/// the run as a whole failed requests; the JSON keeps the failed step's failures by class.
/// A step the journeys lack is refused before anything is sent, naming the flag, the file,
/// the steps there are and the fix.
#[test]
fn load_fail_if_on_a_step_judges_that_step_alone() {
    use shootout_testserver::{Behavior, TestServer};
    let server = TestServer::start(Behavior::App).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("j.toml");
    std::fs::write(
        &file,
        "[[journey]]\nname = \"visit\"\n[[journey.step]]\nname = \"home\"\nget = \"/form\"\n\
         [[journey.step]]\nname = \"bad\"\nget = \"/form\"\nexpect = { status = 201 }\n",
    )
    .unwrap();
    let load = |fail_if: &[&str]| {
        let mut cmd = shootout();
        cmd.args([
            "load",
            "-q",
            "-n",
            "10",
            "-c",
            "1",
            "--format",
            "json",
            "--journey",
        ])
        .arg(&file);
        for f in fail_if {
            cmd.args(["--fail-if", f]);
        }
        cmd.arg(server.url("/"))
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap()
    };
    let out = load(&["step:home:failed>0", "step:visit › home:errors>0%"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad = &v["requests_by_target"][1];
    assert_eq!(bad["target"], "visit › bad", "{v}");
    assert_eq!(bad["failed"], 10, "{bad}");
    assert_eq!(bad["failures"]["status"], 10, "{bad}");
    assert_eq!(bad["failures"]["timeout"], 0, "{bad}");
    assert_eq!(v["journeys"][0]["failures"]["status"], 10, "{v}");
    assert_eq!(
        v["requests"]["failed"], 10,
        "the run as a whole failed requests: {v}"
    );
    let out = load(&["step:home:failed>0", "step:bad:failed>0"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("threshold failed"))
        .collect();
    assert_eq!(
        failed,
        ["threshold failed: step:bad:failed>0 (failed was 10)"],
        "{err}"
    );
    let before = server.requests();
    let out = load(&["step:logout:p99>1ms"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "--fail-if step:logout:p99>1ms: {}: no step is named 'logout' (the steps: visit › home, visit › bad): write one of them, or its name alone, after step:",
            file.display()
        )),
        "{err}"
    );
    assert_eq!(server.requests(), before, "nothing was sent");
}
