//! What else runs on the machine during a step: [`CpuWatch`] reads `/proc/stat` (each
//! CPU's busy, steal and total time) when a step starts and when it ends, and turns the
//! difference into an [`OtherLoad`]: the CPU time of the watched CPUs that neither shootout
//! nor the contender used, the run's other (idle) contenders' counted apart from the
//! strangers', the kernel's interrupt work (irq and softirq) counted apart too, the share
//! the hypervisor stole, and the load average. The
//! arithmetic ([`other_load`]) is a pure function of two readings, tested with tables; a
//! CPU that appears in only one reading (taken offline meanwhile) is left out.
//!
//! Seams: the CLI starts a watch around each measured step and hands it the contender's
//! CPU time (from its [`ResourceSample`](shootout_model::ResourceSample)s); the analysis
//! judges whether the machine was quiet.

use crate::accept_queue::AcceptWatch;
use shootout_model::{ListenQueue, OtherLoad};
use std::time::Duration;

/// One CPU's times since boot, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    /// Running something: user, nice, system, irq and softirq (guest time is in user).
    pub busy: u64,
    /// Of `busy`, serving interrupts: irq and softirq.
    pub interrupts: u64,
    /// Taken by the hypervisor for other machines.
    pub steal: u64,
    /// All of it: busy, idle, iowait and steal.
    pub total: u64,
}

/// `/proc/stat`'s `cpuN` lines: each CPU's number and times. Lines that do not parse are
/// left out.
pub fn parse_proc_stat(text: &str) -> Vec<(usize, CpuTicks)> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_ascii_whitespace();
            let cpu: usize = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            // user nice system idle iowait irq softirq steal (guest, guest_nice: in user, nice)
            let v: Vec<u64> = f.take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
            let [user, nice, system, idle, iowait, irq, softirq, steal] = v[..] else {
                return None;
            };
            let busy = user + nice + system + irq + softirq;
            Some((
                cpu,
                CpuTicks {
                    busy,
                    interrupts: irq + softirq,
                    steal,
                    total: busy + idle + iowait + steal,
                },
            ))
        })
        .collect()
}

/// What else ran on `cpus` between two readings of `/proc/stat`, when shootout and the
/// contender used `ours` of CPU time meanwhile and the run's idle contenders `idle`
/// (`hz` ticks a second). `others` is `None` when `judge_others` is false; a reading with
/// none of `cpus` gives `None`.
///
/// The kernel's interrupt work is no stranger's: with tick accounting (no
/// `IRQ_TIME_ACCOUNTING`), a tick that finds a CPU serving an interrupt or a softirq on its
/// idle task is counted in `/proc/stat`'s irq or softirq column and charged to no process,
/// and loopback traffic at tens of thousands of requests a second makes much of it: the
/// run's own packets. It is counted apart (`interrupts`) and taken out of the strangers'
/// time. A tick that finds one of our threads serving a softirq is charged to that thread
/// too, so it is taken out twice: the strangers' time may be under-counted by at most our
/// own interrupt ticks.
pub fn other_load(
    before: &[(usize, CpuTicks)],
    after: &[(usize, CpuTicks)],
    cpus: &[usize],
    (ours, idle, hz): (Duration, Duration, u64),
    judge_others: bool,
) -> Option<OtherLoad> {
    let (mut busy, mut interrupts, mut steal, mut total, mut n) = (0u64, 0u64, 0u64, 0u64, 0u32);
    for cpu in cpus {
        let find = |r: &[(usize, CpuTicks)]| r.iter().find(|(c, _)| c == cpu).map(|(_, t)| *t);
        let (Some(b), Some(a)) = (find(before), find(after)) else {
            continue;
        };
        busy += a.busy.saturating_sub(b.busy);
        interrupts += a.interrupts.saturating_sub(b.interrupts);
        steal += a.steal.saturating_sub(b.steal);
        total += a.total.saturating_sub(b.total);
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let ticks = |d: Duration| d.as_secs_f64() * hz.max(1) as f64;
    // Each watched CPU's ticks over the step: the step's length in ticks.
    let per_cpu = total as f64 / f64::from(n);
    let share = |x: f64| if per_cpu > 0.0 { x / per_cpu } else { 0.0 };
    // Our threads may also run on CPUs not watched: never below nothing. The interrupt
    // work and the idle contenders' time come off what is left, and are said apart.
    let interrupts = interrupts.min(busy);
    let not_ours = ((busy - interrupts) as f64 - ticks(ours)).max(0.0);
    let contenders = ticks(idle).min(not_ours);
    Some(OtherLoad {
        cpus: n,
        others: judge_others.then(|| share(not_ours - contenders)),
        contenders: share(contenders),
        interrupts: share(interrupts as f64),
        steal: if total > 0 {
            steal as f64 / total as f64
        } else {
            0.0
        },
        load_avg: 0.0,
    })
}

/// `/proc/net/netstat`'s `TcpExt` counters `ListenOverflows` and `ListenDrops` (a line of
/// names, then a line of values); `None` when they are not there.
pub fn parse_netstat(text: &str) -> Option<ListenQueue> {
    let mut lines = text.lines();
    while let Some(names) = lines.next() {
        let Some(names) = names.strip_prefix("TcpExt:") else {
            continue;
        };
        let values = lines.next()?.strip_prefix("TcpExt:")?;
        let mut found = (None, None);
        for (name, value) in names
            .split_ascii_whitespace()
            .zip(values.split_ascii_whitespace())
        {
            match name {
                "ListenOverflows" => found.0 = value.parse().ok(),
                "ListenDrops" => found.1 = value.parse().ok(),
                _ => {}
            }
        }
        let (Some(overflows), Some(drops)) = found else {
            return None;
        };
        return Some(ListenQueue {
            overflows,
            drops,
            accept: None,
        });
    }
    None
}

/// The listen-queue counters of this network namespace now.
fn read_netstat() -> Option<ListenQueue> {
    parse_netstat(&std::fs::read_to_string("/proc/net/netstat").ok()?)
}

/// A watch over the kernel's count of full listen queues during a run (this process's
/// network namespace: the server's, when it runs on this machine), and over the accept
/// queue of the server's port when one is given ([`AcceptWatch`]).
#[derive(Debug)]
pub struct ListenWatch {
    before: Option<ListenQueue>,
    accept: Option<AcceptWatch>,
}

impl ListenWatch {
    /// Reads the counters as a run starts, and samples `port`'s accept queue (a TCP port
    /// of this machine) until the watch stops.
    pub fn start(port: Option<u16>) -> ListenWatch {
        ListenWatch {
            before: read_netstat(),
            accept: port.and_then(AcceptWatch::start),
        }
    }

    /// What was counted since [`ListenWatch::start`]; `None` when the counters could not
    /// be read.
    pub fn stop(self) -> Option<ListenQueue> {
        let accept = self.accept.and_then(AcceptWatch::stop);
        let (before, after) = (self.before?, read_netstat()?);
        Some(ListenQueue {
            overflows: after.overflows.saturating_sub(before.overflows),
            drops: after.drops.saturating_sub(before.drops),
            accept,
        })
    }
}

/// `/proc/loadavg`'s first figure: the load average over the last minute.
pub fn parse_load_avg(text: &str) -> Option<f64> {
    text.split_ascii_whitespace().next()?.parse().ok()
}

/// A watch over some CPUs during a step: see the module's description.
#[derive(Debug)]
pub struct CpuWatch {
    cpus: Vec<usize>,
    before: Vec<(usize, CpuTicks)>,
    own_before: Duration,
    judge_others: bool,
}

impl CpuWatch {
    /// Starts watching `cpus`; `judge_others` false when the server's processes cannot be
    /// told from the others' (they are not ours to count).
    pub fn start(cpus: &[usize], judge_others: bool) -> CpuWatch {
        CpuWatch {
            cpus: cpus.to_vec(),
            before: read_proc_stat(),
            own_before: own_cpu(),
            judge_others,
        }
    }

    /// Ends the watch, with `contender` the CPU time the contender's processes used
    /// meanwhile and `idle` the run's other contenders'; `None` when `/proc/stat` could
    /// not be read.
    pub fn stop(self, contender: Duration, idle: Duration) -> Option<OtherLoad> {
        let after = read_proc_stat();
        let ours = own_cpu().saturating_sub(self.own_before) + contender;
        let hz = crate::procfs::clock_ticks();
        let mut o = other_load(
            &self.before,
            &after,
            &self.cpus,
            (ours, idle, hz),
            self.judge_others,
        )?;
        o.load_avg = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| parse_load_avg(&t))
            .unwrap_or(0.0);
        Some(o)
    }
}

fn read_proc_stat() -> Vec<(usize, CpuTicks)> {
    std::fs::read_to_string("/proc/stat").map_or_else(|_| Vec::new(), |t| parse_proc_stat(&t))
}

/// The CPU time (user and system) this process has used so far.
fn own_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let d = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    d(ru.ru_utime) + d(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  300 0 100 1000 0 0 0 10 0 0
cpu0 100 0 50 500 0 3 7 5 0 0
cpu1 200 0 50 500 0 0 0 5 0 0
intr 1 2 3
";

    #[test]
    fn reads_the_listen_counters_of_tcpext() {
        let text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPHPHits\nTcpExt: 0 17 19 5\nIpExt: InNoRoutes\nIpExt: 0\n";
        assert_eq!(
            parse_netstat(text),
            Some(ListenQueue {
                overflows: 17,
                drops: 19,
                accept: None,
            })
        );
        assert_eq!(parse_netstat("IpExt: A\nIpExt: 1\n"), None);
        assert_eq!(parse_netstat("TcpExt: ListenOverflows\nTcpExt: 1\n"), None);
        assert!(
            ListenWatch::start(None).stop().is_some(),
            "this kernel has them"
        );
    }

    use shootout_model::ListenBlame;

    /// Waits until the kernel has counted `n` more overflows than `since` (the counters
    /// are the network namespace's: others may add to them, never take away).
    fn overflowed(since: ListenQueue, n: u64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while read_netstat().unwrap().overflows < since.overflows + n {
            assert!(
                std::time::Instant::now() < deadline,
                "the kernel did not count the overflows"
            );
            std::thread::yield_now();
        }
    }

    /// A server that accepts nothing, its backlog of 1 filled past it: three SYNs its
    /// full queue dropped are counted, and its own queue was seen at its backlog, so the
    /// overflows are the server's.
    #[test]
    fn an_overflow_of_the_servers_own_queue_is_the_servers() {
        use crate::accept_queue::{small_backlog, Diag};
        let Ok(mut diag) = Diag::open() else {
            eprintln!("skipped: netlink sock_diag is not available here");
            return;
        };
        let server = small_backlog::listener(1);
        let port = server.local_addr().unwrap().port();
        let _held = small_backlog::fill(&server, 1, &mut diag);
        // Started on a full queue: its first sample finds it so.
        let watch = ListenWatch::start(Some(port));
        let since = read_netstat().unwrap();
        let _tries: Vec<_> = (0..3).map(|_| small_backlog::attempt(port)).collect();
        overflowed(since, 3);
        let l = watch.stop().expect("the counters");
        assert!(l.overflows >= 3 && l.drops >= 3, "{l:?}");
        let a = l.accept.expect("the server's queue sampled");
        assert_eq!((a.most, a.backlog), (2, Some(1)), "{a:?}");
        assert_eq!(a.full, a.samples);
        assert_eq!(l.blame(), ListenBlame::Server);
    }

    /// Another listener of this machine, on another port, overflows while the server's
    /// queue stays empty: the kernel counts the drops all the same, and they are said to
    /// be other processes', not the server's.
    #[test]
    fn an_overflow_while_the_servers_queue_was_empty_is_not_the_servers() {
        use crate::accept_queue::{small_backlog, Diag};
        let Ok(mut diag) = Diag::open() else {
            eprintln!("skipped: netlink sock_diag is not available here");
            return;
        };
        let server = small_backlog::listener(64);
        let port = server.local_addr().unwrap().port();
        let other = small_backlog::listener(1);
        let other_port = other.local_addr().unwrap().port();
        let _held = small_backlog::fill(&other, 1, &mut diag);
        let watch = ListenWatch::start(Some(port));
        let since = read_netstat().unwrap();
        let _tries: Vec<_> = (0..3).map(|_| small_backlog::attempt(other_port)).collect();
        overflowed(since, 3);
        let l = watch.stop().expect("the counters");
        assert!(l.overflows >= 3 && l.drops >= 3, "{l:?}");
        let a = l.accept.expect("the server's queue sampled");
        assert_eq!((a.most, a.full, a.backlog), (0, 0, Some(64)), "{a:?}");
        assert!(a.samples >= 1);
        assert_eq!(l.blame(), ListenBlame::Others);
    }

    #[test]
    fn reads_each_cpu_and_not_the_sum() {
        let r = parse_proc_stat(STAT);
        assert_eq!(
            r,
            [
                (
                    0,
                    CpuTicks {
                        busy: 160,
                        interrupts: 10,
                        steal: 5,
                        total: 665
                    }
                ),
                (
                    1,
                    CpuTicks {
                        busy: 250,
                        interrupts: 0,
                        steal: 5,
                        total: 755
                    }
                ),
            ]
        );
        assert_eq!(
            parse_proc_stat("cpu0 1 2\n"),
            [],
            "a short line is left out"
        );
        assert_eq!(parse_load_avg("0.52 0.58 0.59 2/345 6789\n"), Some(0.52));
    }

    fn t(busy: u64, steal: u64, total: u64) -> CpuTicks {
        CpuTicks {
            busy,
            interrupts: 0,
            steal,
            total,
        }
    }

    /// The kernel's interrupt work (irq and softirq ticks, charged to no process when they
    /// land on an idle CPU) counted as strangers' time flagged 145 of 281 steps of a
    /// loopback capacity run "busy machine": it is counted apart, and not judged. Two CPUs
    /// over 1 s at 100 ticks a second; each row: per CPU (busy, of it interrupts), the
    /// CPU time of ours, and the strangers' and interrupts' CPUs expected.
    #[test]
    fn interrupt_work_is_counted_apart_from_strangers() {
        for (cpus, ours_ms, others, interrupts, why) in [
            (
                [(100, 30), (40, 40)],
                700,
                0.0,
                0.7,
                "only ours and softirq on idle CPUs: quiet",
            ),
            (
                [(100, 30), (70, 40)],
                700,
                0.3,
                0.7,
                "a stranger's 30 ticks of user time besides: still seen",
            ),
            (
                [(100, 0), (100, 100)],
                1000,
                0.0,
                1.0,
                "a CPU busy with nothing but interrupts",
            ),
            (
                [(100, 50), (60, 0)],
                1000,
                0.1,
                0.5,
                "the limit: 50 softirq ticks during our thread are ours too (in its system                  time), taken out twice; a stranger's 60 ticks are said as 10 (0.1 CPU)",
            ),
        ] {
            let before = [(0, t(0, 0, 0)), (1, t(0, 0, 0))];
            let after = cpus.map(|(busy, irq)| CpuTicks {
                busy,
                interrupts: irq,
                steal: 0,
                total: 100,
            });
            let after = [(0, after[0]), (1, after[1])];
            let o = other_load(
                &before,
                &after,
                &[0, 1],
                (Duration::from_millis(ours_ms), Duration::ZERO, 100),
                true,
            )
            .unwrap();
            assert!((o.others.unwrap() - others).abs() < 1e-9, "{why}: {o:?}");
            assert!((o.interrupts - interrupts).abs() < 1e-9, "{why}: {o:?}");
            assert_eq!(o.contenders, 0.0, "{why}");
        }
        // The idle contenders' time comes off what the interrupts leave.
        let before = [(0, t(0, 0, 0))];
        let after = [(
            0,
            CpuTicks {
                busy: 90,
                interrupts: 20,
                steal: 0,
                total: 100,
            },
        )];
        let o = other_load(
            &before,
            &after,
            &[0],
            (Duration::from_millis(500), Duration::from_millis(100), 100),
            true,
        )
        .unwrap();
        assert!((o.others.unwrap() - 0.1).abs() < 1e-9, "{o:?}");
        assert!((o.contenders - 0.1).abs() < 1e-9, "{o:?}");
        assert!((o.interrupts - 0.2).abs() < 1e-9, "{o:?}");
    }

    #[test]
    fn others_are_the_busy_time_less_ours_in_cpus() {
        // Two CPUs watched over 1 s at 100 ticks a second: 200 ticks in all.
        let before = [(0, t(0, 0, 0)), (1, t(0, 0, 0)), (2, t(0, 0, 0))];
        let after = [
            (0, t(100, 0, 100)),
            (1, t(60, 10, 100)),
            (2, t(100, 0, 100)),
        ];
        // CPU 0 fully busy, CPU 1 60 % busy: 1.6 CPUs; ours 1.2 s: others 0.4 CPUs.
        let o = other_load(
            &before,
            &after,
            &[0, 1],
            (Duration::from_millis(1200), Duration::ZERO, 100),
            true,
        )
        .unwrap();
        assert_eq!(o.cpus, 2);
        assert!((o.others.unwrap() - 0.4).abs() < 1e-9, "{o:?}");
        assert_eq!(o.contenders, 0.0);
        assert!((o.steal - 0.05).abs() < 1e-9, "{o:?}");
        // Ours more than the watched CPUs' busy time (our threads ran elsewhere too): 0.
        let o = other_load(
            &before,
            &after,
            &[0, 1],
            (Duration::from_secs(3), Duration::ZERO, 100),
            true,
        )
        .unwrap();
        assert_eq!(o.others, Some(0.0));
        // Not judged: steal only.
        let o = other_load(
            &before,
            &after,
            &[1],
            (Duration::ZERO, Duration::ZERO, 100),
            false,
        )
        .unwrap();
        assert_eq!(o.others, None);
        assert!((o.steal - 0.1).abs() < 1e-9);
        // CPUs missing from a reading are left out; none left: nothing to say.
        let o = other_load(
            &before,
            &after[..1],
            &[0, 1],
            (Duration::ZERO, Duration::ZERO, 100),
            true,
        )
        .unwrap();
        assert_eq!((o.cpus, o.others), (1, Some(1.0)));
        assert_eq!(
            other_load(
                &before,
                &after,
                &[7],
                (Duration::ZERO, Duration::ZERO, 100),
                true
            ),
            None
        );
    }

    /// The run's idle contenders counted as other processes (0.3 to 0.6 CPU in nearly
    /// every step of a 12-server plan), so the machine was called busy: they are counted
    /// apart, and only the strangers' time is judged.
    #[test]
    fn idle_contenders_are_counted_apart_from_strangers() {
        let before = [(0, t(0, 0, 0)), (1, t(0, 0, 0))];
        let after = [(0, t(100, 0, 100)), (1, t(60, 0, 100))];
        // 1.6 CPUs busy: ours 1.0, the idle contenders 0.5, strangers 0.1.
        let o = other_load(
            &before,
            &after,
            &[0, 1],
            (Duration::from_secs(1), Duration::from_millis(500), 100),
            true,
        )
        .unwrap();
        assert!((o.others.unwrap() - 0.1).abs() < 1e-9, "{o:?}");
        assert!((o.contenders - 0.5).abs() < 1e-9, "{o:?}");
        // More idle time than is left (they ran on CPUs not watched too): at most that.
        let o = other_load(
            &before,
            &after,
            &[0, 1],
            (Duration::from_secs(1), Duration::from_secs(2), 100),
            true,
        )
        .unwrap();
        assert_eq!(o.others, Some(0.0));
        assert!((o.contenders - 0.6).abs() < 1e-9, "{o:?}");
    }

    /// A busy loop in another process, pinned to one CPU that the watch covers, shows as
    /// most of that CPU in others' time, read from the real `/proc/stat`. (Nothing of ours
    /// is subtracted: the tests beside this one run in this process.)
    #[test]
    fn a_busy_process_on_a_watched_cpu_is_seen() {
        let cpu = first_allowed_cpu();
        let mut child = std::process::Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset (util-linux) runs a busy loop pinned to one CPU");
        let before = read_proc_stat();
        let began = std::time::Instant::now();
        // The watch measures a span of time, not an event: a busy loop has no end to wait for.
        while began.elapsed() < Duration::from_millis(600) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let after = read_proc_stat();
        let _ = child.kill();
        let _ = child.wait();
        let hz = crate::procfs::clock_ticks();
        let o = other_load(
            &before,
            &after,
            &[cpu],
            (Duration::ZERO, Duration::ZERO, hz),
            true,
        )
        .unwrap();
        assert!(o.others.unwrap() > 0.5, "a busy loop on CPU {cpu}: {o:?}");
        // The watch itself reads the same files and gives the load average.
        let w = CpuWatch::start(&[cpu], true)
            .stop(Duration::ZERO, Duration::ZERO)
            .unwrap();
        assert!(w.cpus == 1 && w.load_avg >= 0.0, "{w:?}");
    }

    /// A CPU this process may run on (the first).
    fn first_allowed_cpu() -> usize {
        // SAFETY: sched_getaffinity fills a cpu_set_t we own.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
        (0..libc::CPU_SETSIZE as usize)
            .find(|c| ok && unsafe { libc::CPU_ISSET(*c, &set) })
            .unwrap_or(0)
    }
}
