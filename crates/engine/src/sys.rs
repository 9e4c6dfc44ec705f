//! The few operating-system calls the engine needs that std does not offer: a thread's
//! own CPU time (getrusage RUSAGE_THREAD), the CPUs this process may run on, pinning a
//! thread to one of them, its timer slack, and raising the open-file limit for many
//! connections.

use std::io;
use std::time::Duration;

/// User and system CPU time consumed so far by the calling thread.
pub(crate) fn thread_cpu() -> (Duration, Duration) {
    // SAFETY: getrusage writes a plain struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// CPU time this thread has used (user and system together, `CLOCK_THREAD_CPUTIME_ID`,
/// nanosecond resolution): what a span of the thread's work cost, which on a shared CPU is
/// less than its wall-clock time.
pub(crate) fn thread_cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a plain struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Asks the kernel to end this thread's timed sleeps when asked, not up to 50 µs later
/// (`PR_SET_TIMERSLACK`, whose default lets it group wake-ups): a busy-polling worker's
/// naps are a thousandth of its answers' latency, tens of µs. Best effort.
pub(crate) fn exact_timers() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer and no pointer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// How many CPUs the machine has online (whatever this process may use).
pub fn online_cpus() -> usize {
    // SAFETY: sysconf reads a system value and takes no pointer.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The CPUs this process may run on (its affinity mask, e.g. as set by `taskset`).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills a cpu_set_t we own.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let ok =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }
            == 0;
    let cpus: Vec<usize> = if ok {
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    } else {
        Vec::new()
    };
    if cpus.is_empty() {
        (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
    } else {
        cpus
    }
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t with one bit set, passed by reference.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raises the soft open-file limit towards `wanted` (up to the hard limit); returns the
/// limit now in force.
pub fn raise_fd_limit(wanted: u64) -> u64 {
    // SAFETY: get/setrlimit on a struct we own.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    if lim.rlim_cur < wanted as libc::rlim_t {
        // Raising the hard limit works with privileges (root, CAP_SYS_RESOURCE); without
        // them the soft limit still goes up to the hard one below.
        let hard = libc::rlimit {
            rlim_cur: wanted as libc::rlim_t,
            rlim_max: (wanted as libc::rlim_t).max(lim.rlim_max),
        };
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &hard) } == 0 {
            return wanted;
        }
        let new = libc::rlimit {
            rlim_cur: (wanted as libc::rlim_t).min(lim.rlim_max),
            rlim_max: lim.rlim_max,
        };
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } == 0 {
            lim = new;
        }
    }
    lim.rlim_cur as u64
}

/// A one-shot timer with nanosecond resolution (timerfd), so the open-loop schedule is
/// kept to microseconds rather than to epoll's whole milliseconds: a request sent late by
/// the generator's own timer would add that lateness to its corrected latency.
pub(crate) struct Timer {
    fd: std::os::fd::OwnedFd,
    armed: Option<std::time::Instant>,
}

impl Timer {
    /// A disarmed timer; its fd becomes readable when it fires.
    pub fn new() -> io::Result<Timer> {
        use std::os::fd::FromRawFd;
        // SAFETY: timerfd_create returns a new fd or -1.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // Timer slack lets the kernel fire up to 50 µs late by default; ask for 1 ns.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        Ok(Timer {
            fd: unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) },
            armed: None,
        })
    }

    /// The fd, to register for readability.
    pub fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    /// Fires at `at` (at once if past); no system call when already armed for `at`.
    pub fn arm(&mut self, at: std::time::Instant) {
        use std::os::fd::AsRawFd;
        if self.armed == Some(at) {
            return;
        }
        let d = at
            .saturating_duration_since(std::time::Instant::now())
            .max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a valid timerfd and itimerspec.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        self.armed = Some(at);
    }

    /// Consumes a firing; returns when the timer was armed to fire.
    pub fn clear(&mut self) -> Option<std::time::Instant> {
        use std::os::fd::AsRawFd;
        let mut n = 0u64;
        // SAFETY: reads 8 bytes into a u64 we own.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
        self.armed.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_grows_with_work() {
        let (u0, s0) = thread_cpu();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (u1, s1) = thread_cpu();
        assert!(u1 + s1 > u0 + s0);
    }

    #[test]
    fn fd_limit_can_be_raised() {
        // SAFETY: get/setrlimit on structs we own. Only this test touches the limit.
        let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        let original = lim;
        let hard = lim.rlim_max.min(65_536);
        if hard <= 1024 {
            return; // nothing to raise towards on this machine
        }
        // Lower the soft limit, so the raise has something to do.
        lim.rlim_cur = 512;
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
        let got = raise_fd_limit(hard as u64);
        let mut now: libc::rlimit = unsafe { std::mem::zeroed() };
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) };
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &original) };
        assert_eq!(got, hard as u64);
        assert_eq!(now.rlim_cur, hard, "the soft limit was raised");
        assert!(!allowed_cpus().is_empty());
    }
}
