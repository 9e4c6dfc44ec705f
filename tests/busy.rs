//! A busy machine, noticed: a loop spinning on the CPU that a load (and a run's contender)
//! is pinned to must show in the step's line, the stored step and the report, and on
//! `load`'s stderr. A test binary of its own, so that the loop steals no CPU from the
//! timing-sensitive tests of the others (cargo runs test binaries one after another).

mod common;

use assert_cmd::Command;
use shootout_testserver::{Behavior, TestServer};

/// The first CPU this process may run on (from `/proc/self/status`).
fn first_allowed_cpu() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    list.split([',', '-']).next().unwrap().parse().unwrap()
}

/// A loop spinning on `cpu`, killed however the test ends.
struct Busy(std::process::Child);

impl Busy {
    fn on(cpu: usize) -> Busy {
        Busy(
            std::process::Command::new("taskset")
                .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("taskset (util-linux)"),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_busy_loop_on_the_steps_cpu_is_stored_and_warned_of_in_the_step_and_the_report() {
    let cpu = first_allowed_cpu();
    let dir = tempfile::tempdir().unwrap();
    let plan = format!(
        "name = \"busy\"\n[defaults]\nwarmup = 0\nduration = \"1s\"\nrepeat = 1\ncooldown = \"0s\"\n\
         server_cpus = \"{cpu}\"\nload_cpus = \"{cpu}\"\n\n\
         [[contender]]\nname = \"py\"\n\
         command = \"python3 -m http.server {{port}} --bind 127.0.0.1 --directory {{tmp}}\"\n\
         setup = \"echo hello > {{tmp}}/index.html\"\n\n\
         [[workload]]\nname = \"index\"\npath = \"/index.html\"\nexpect = {{ status = 200 }}\n\n\
         [load]\nconcurrency = [1]\n"
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let db = dir.path().join("shootout.db");
    // Another process spinning on the CPU that the load and the server are pinned to.
    let _busy = Busy::on(cpu);
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .arg("run")
        .arg(dir.path().join("plan.toml"))
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    common::assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let store = shootout_store::Store::open_existing(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let steps = store.steps(run.id).unwrap();
    let o = steps[0].other_load.expect("the step's CPUs were watched");
    assert_eq!(o.cpus, 1);
    // Sharing one CPU three ways, the loop gets a good part of it (0.1 is the threshold).
    assert!(o.others.unwrap() > 0.2, "{o:?}");
    assert!(
        stderr.contains("    ⚠ the machine was not quiet (other processes used "),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("busy machine: py · index · c=1: the machine was not quiet"),
        "{stdout}"
    );
}

#[test]
fn a_load_pinned_to_a_cpu_another_process_keeps_busy_is_warned_of() {
    let cpu = first_allowed_cpu();
    let s = TestServer::start(Behavior::Hello).unwrap();
    let _busy = Busy::on(cpu);
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .args(["load", "-d", "1s", "-c", "1", "--cpus", &cpu.to_string()])
        .arg(s.url("/"))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: the machine was not quiet (other processes used "),
        "{stderr}"
    );
    // The report itself (stdout) is as it always was.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not quiet"));
}

/// A capacity search pinned to a CPU another process keeps busy says so before its first
/// step (the CPUs watched while nothing of the search ran), after each step the watch
/// found not quiet, and in its answer.
#[test]
fn a_search_on_a_busy_cpu_says_so_before_it_starts_and_in_its_answer() {
    let cpu = first_allowed_cpu();
    let s = TestServer::start(Behavior::Hello).unwrap();
    let _busy = Busy::on(cpu);
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .args([
            "load",
            "--find-max",
            "--slo",
            "p50<1s",
            "--from",
            "50",
            "--to",
            "50",
            "-d",
            "0.2s",
            "--cpus",
            &cpu.to_string(),
        ])
        .arg(s.url("/"))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let before = stderr
        .find("note: before the search, the machine was not quiet (other processes used ")
        .expect(&stderr);
    let first = stderr.find("step 1: ").expect(&stderr);
    assert!(before < first, "{stderr}");
    assert!(
        stderr.contains("  ⚠ the machine was not quiet (other processes used "),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Machine: before the search, the machine was not quiet"),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("Machine: ")
            && l.contains(" steps: the machine was not quiet (other processes used ")),
        "{stdout}"
    );
}
