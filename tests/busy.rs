//! A busy machine, noticed: a loop spinning on the CPU that a load (and a run's contender)
//! is pinned to must show in the step's line, the stored step and the report, and on
//! `load`'s stderr. A test binary of its own, so that the loop steals no CPU from the
//! timing-sensitive tests of the others (cargo runs test binaries one after another).

mod common;

use assert_cmd::Command;
use shootout_testserver::{Behavior, TestServer};

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
    let cpu = common::first_allowed_cpu();
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
    let cpu = common::first_allowed_cpu();
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
    let cpu = common::first_allowed_cpu();
    let s = TestServer::start(Behavior::Hello).unwrap();
    let _busy = Busy::on(cpu);
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .args(common::ONE_STEP_SEARCH)
        .args(["--cpus", &cpu.to_string()])
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

/// The run's other contenders, idle while one is measured, were counted as other processes
/// (0.3 to 0.6 CPU in nearly every step of a 12-server plan). A contender whose tree keeps
/// a loop spinning while it waits: its time in the other contender's steps is counted as
/// the run's own (`contenders`), apart from strangers'.
#[test]
fn an_idle_contenders_cpu_is_counted_apart_from_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let py = "python3 -m http.server {port} --bind 127.0.0.1 --directory {tmp}";
    let plan = format!(
        "name = \"idle\"\n[defaults]\nwarmup = 0\nduration = \"1s\"\nrepeat = 1\ncooldown = \"0s\"\n\n\
         [[contender]]\nname = \"quiet\"\ncommand = \"{py}\"\nsetup = \"echo hello > {{tmp}}/index.html\"\n\n\
         [[contender]]\nname = \"spinner\"\n\
         command = \"sh -c 'while :; do :; done & exec {py}'\"\nsetup = \"echo hello > {{tmp}}/index.html\"\n\n\
         [[workload]]\nname = \"index\"\npath = \"/index.html\"\nexpect = {{ status = 200 }}\n\n\
         [load]\nconcurrency = [1]\n"
    );
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let db = dir.path().join("shootout.db");
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .arg("run")
        .arg(dir.path().join("plan.toml"))
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    common::assert_ok(&out);
    let store = shootout_store::Store::open_existing(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let contenders = store.contenders(run.id).unwrap();
    let quiet = contenders.iter().find(|c| c.name == "quiet").unwrap().id;
    let steps = store.steps(run.id).unwrap();
    let step = steps.iter().find(|s| s.contender == quiet).unwrap();
    let o = step.other_load.expect("the step's CPUs were watched");
    // The spinning loop gets a good part of a CPU on any machine (0.1 is the threshold).
    assert!(o.contenders > 0.2, "{o:?}");
}

/// A full listen queue was guessed from connect times of a second: the kernel's count
/// (`ListenOverflows`, `ListenDrops`) is read around the load and said in every format.
/// A server with a backlog of one that accepts a connection every 100 ms, met by four
/// connections at once, whole and one byte per write: the kernel completes the four
/// handshakes before the server takes one, its queue holds two, and the others overflow
/// it once; their retries a second later find it empty (four, not more: each load waits
/// for one round of retries, not the several that eight took, 75 s for this test against
/// 6 s). (The counters are the network namespace's: other listeners' overflows would
/// add to them, never take away, so the count is asserted as at least one.)
#[test]
fn a_listen_queue_that_overflowed_is_counted_by_the_kernel_and_said() {
    use shootout_testserver::Delivery;
    for delivery in [Delivery::Whole, Delivery::Bytewise] {
        let s = TestServer::start_with(
            Behavior::SlowAccept {
                every: std::time::Duration::from_millis(100),
                delay: std::time::Duration::ZERO,
            },
            delivery,
        )
        .unwrap();
        let out = Command::cargo_bin("shootout")
            .unwrap()
            .args(["load", "-c", "4", "-n", "8", "--json"])
            .arg(s.url("/"))
            .output()
            .unwrap();
        common::assert_ok(&out);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let w = json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == "listen_overflowed")
            .unwrap_or_else(|| panic!("{}", json["warnings"]));
        let times: u64 = w["message"]
            .as_str()
            .unwrap()
            .strip_prefix("the server's listen queue overflowed ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{w}"));
        assert!(times >= 1, "{w}");
        // And in the text report.
        let out = Command::cargo_bin("shootout")
            .unwrap()
            .args(["load", "-c", "4", "-n", "8"])
            .arg(s.url("/"))
            .output()
            .unwrap();
        common::assert_ok(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("the server's listen queue overflowed "),
            "{text}"
        );
    }
}

/// A listener of this test's own, on another port than the server's, with a backlog of
/// one and nothing accepting: filled, then met by connection attempts that do not wait
/// for their handshake. The kernel drops their SYNs and counts each drop, then the
/// retries it sends 1 s and 3 s later, for as long as the attempts are held.
struct Overflowing {
    _listener: std::net::TcpListener,
    _held: Vec<std::net::TcpStream>,
    _tries: Vec<std::os::fd::OwnedFd>,
}

impl Overflowing {
    fn start() -> Overflowing {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let socket = |flags| {
            // SAFETY: plain socket(2); the descriptor is owned at once.
            let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | flags, 0) };
            assert!(fd >= 0, "{}", std::io::Error::last_os_error());
            // SAFETY: fd is a fresh descriptor nothing else owns.
            unsafe { OwnedFd::from_raw_fd(fd) }
        };
        let addr = |port: u16| {
            // SAFETY: a zeroed sockaddr_in is valid; its family, address and port are set.
            let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            a.sin_family = libc::AF_INET as libc::sa_family_t;
            a.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            a.sin_port = port.to_be();
            a
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let fd = socket(libc::SOCK_CLOEXEC);
        let a = addr(0);
        // SAFETY: bind and listen on our descriptor, with an address of the size given.
        unsafe {
            assert_eq!(
                libc::bind(fd.as_raw_fd(), (&a as *const libc::sockaddr_in).cast(), len),
                0
            );
            assert_eq!(libc::listen(fd.as_raw_fd(), 1), 0);
        }
        let listener = std::net::TcpListener::from(fd);
        let port = listener.local_addr().unwrap().port();
        // The backlog, and the one more the kernel takes past it.
        let held = (0..2)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let tries = (0..4)
            .map(|_| {
                let fd = socket(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK);
                let a = addr(port);
                // SAFETY: connect our descriptor to an address of the size given.
                let r = unsafe {
                    libc::connect(fd.as_raw_fd(), (&a as *const libc::sockaddr_in).cast(), len)
                };
                let e = std::io::Error::last_os_error();
                assert!(r == 0 || e.raw_os_error() == Some(libc::EINPROGRESS), "{e}");
                fd
            })
            .collect();
        Overflowing {
            _listener: listener,
            _held: held,
            _tries: tries,
        }
    }
}

/// The kernel's overflow count is the whole machine's: another listener overflowing
/// during a load while the server's own accept queue stays empty is said to be other
/// processes', and the server's listen queue is not said to have overflowed.
#[test]
fn a_listen_overflow_elsewhere_is_not_blamed_on_the_server() {
    let s = TestServer::start(Behavior::Hello).unwrap();
    // Its SYNs are retried 1 s and 3 s on: within the 3 s load.
    let _other = Overflowing::start();
    let out = Command::cargo_bin("shootout")
        .unwrap()
        .args(["load", "-c", "1", "-d", "3s", "--json"])
        .arg(s.url("/"))
        .output()
        .unwrap();
    common::assert_ok(&out);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "listen_overflowed")
        .unwrap_or_else(|| panic!("{}", json["warnings"]));
    let message = w["message"].as_str().unwrap();
    assert!(
        message.starts_with("listen queues on this machine overflowed ")
            && message.contains("never came near its backlog")
            && message.contains("may be other processes'"),
        "{message}"
    );
    assert!(
        !message.contains("the server's listen queue overflowed"),
        "{message}"
    );
}
