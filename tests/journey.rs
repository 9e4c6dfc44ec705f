//! `shootout journey`: `check` reads a journey file and says what it holds or where it is
//! wrong; `from-locust` translates Locustfiles (hand-written ones here; Locust's own
//! examples, from its sdist on PyPI, in the ignored test at the end).

use assert_cmd::Command;
use std::path::Path;

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
        "from locust import HttpUser, TaskSet, task\nimport time\n\nclass Tasks(TaskSet):\n    pass\n\nclass U(HttpUser):\n    @task\n    def a(self):\n        for i in range(3):\n            self.client.get(f\"/x/{i:03}\")\n        time.sleep(1)\n        self.client.get(\"http://other.test/\")\n",
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
    ] {
        assert!(
            err.contains(&format!("{shown}:{line}: ")) && err.contains(words),
            "{line} {words}:\n{err}"
        );
    }
    assert!(err.contains("4 constructs cannot be translated"), "{err}");
    assert!(!toml.exists(), "nothing is written");
}

#[test]
fn journey_check_names_the_line_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("j.toml");
    std::fs::write(
        &toml,
        "[[journey]]\nname = \"a\"\ndata = \"users.csv\"\n[[journey.step]]\nget = \"/\"\n",
    )
    .unwrap();
    let out = shootout()
        .args(["journey", "check"])
        .arg(&toml)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "{}:3: journey \"a\": data = \"users.csv\"",
            toml.display()
        )),
        "{err}"
    );
    assert!(err.contains("from the journey file's folder"), "{err}");
    // With the data file beside it, the same file reads.
    std::fs::write(dir.path().join("users.csv"), "name\nann\n").unwrap();
    let out = shootout()
        .args(["journey", "check"])
        .arg(&toml)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("data users.csv: 1 rows (name)"));
}

/// Locust's own examples (from its sdist, pinned): the ones within the supported subset
/// translate and read back; the others are refused with the line of each construct.
#[test]
#[ignore = "downloads Locust 2.20.0's sdist from PyPI with pip: cargo test --test journey -- --ignored"]
fn from_locust_on_locusts_own_examples() {
    let dir = tempfile::tempdir().unwrap();
    let got = std::process::Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "locust==2.20.0",
            "-d",
        ])
        .arg(dir.path())
        .output()
        .expect("python3 -m pip");
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    let untar = std::process::Command::new("tar")
        .arg("xzf")
        .arg(dir.path().join("locust-2.20.0.tar.gz"))
        .arg("-C")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(untar.success());
    let examples = dir.path().join("locust-2.20.0/examples");
    let run = |name: &str| {
        shootout()
            .args(["journey", "from-locust"])
            .arg(examples.join(name))
            .output()
            .unwrap()
    };
    // Within the subset: translated whole.
    let out = run("fast_http_locust.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("name = \"WebsiteUser\"") && text.contains("get = \"/stats/requests\""),
        "{text}"
    );
    // Outside it: each construct named with its line.
    let refused: &[(&str, &[u32])] = &[
        ("locustfile.py", &[15]),
        ("basic.py", &[12, 29]),
        ("dynamic_user_credentials.py", &[12, 24]),
    ];
    for (name, lines) in refused {
        let out = run(name);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8(out.stderr).unwrap();
        for l in *lines {
            assert!(err.contains(&format!("{name}:{l}: ")), "{name}:{l}\n{err}");
        }
    }
    assert!(Path::new(&examples).exists());
}
