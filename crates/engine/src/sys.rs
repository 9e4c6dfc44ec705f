//! The few operating-system calls the engine needs that std does not offer: a thread's
//! own CPU time (getrusage RUSAGE_THREAD), the CPUs this process may run on, pinning a
//! thread to one of them, and raising the open-file limit for many connections.

use std::io;
use std::time::Duration;

/// User and system CPU time consumed so far by the calling thread.
pub fn thread_cpu() -> (Duration, Duration) {
    // SAFETY: getrusage writes a plain struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(ru.ru_utime), tv(ru.ru_stime))
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
pub fn pin_thread(cpu: usize) -> io::Result<()> {
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
        assert!(raise_fd_limit(4096) >= 1024);
        assert!(!allowed_cpus().is_empty());
    }
}
