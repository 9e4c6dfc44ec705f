//! How many connections wait in a server's accept queue: connections whose handshake the
//! kernel completed but that the server has not taken with `accept()` yet. Requests a
//! client writes on them wait, unread, however fast the server answers the connections it
//! holds. A server whose workers each serve one connection at a time and keep it alive
//! (uWSGI's `--http11-socket` with one process) leaves new connections there for as long
//! as the one it holds stays busy.
//!
//! The length is the kernel's: `sock_diag` over netlink (what `ss -lt` shows as `Recv-Q` of a
//! listening socket), for every listening TCP socket on the port (IPv4 and IPv6; several
//! with `SO_REUSEPORT`), read by [`AcceptWatch`] every [`AcceptWatch::EVERY`] on a thread of
//! its own while a run goes. `/proc/net/tcp` holds the same figure but lists every socket of
//! the machine (each TIME_WAIT one too), megabytes a read under load; the dump asked for
//! here holds the listening sockets only.
//!
//! Each socket's limit is read with its queue (`idiag_wqueue`: its backlog, `listen()`'s
//! argument capped by `net.core.somaxconn`), so that a sample tells whether the server's
//! queue was at its limit: the kernel's count of overflows (`/proc/net/netstat`) is every
//! listener's of the machine, and only this says whether the server's were among them.
//!
//! Seams: the CLI starts a watch on the target's port around each run or step and puts its
//! [`AcceptWaiting`] into the result's `ListenQueue`; the analysis turns it into warnings.

use shootout_model::{AcceptWaiting, QueueReading};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// `SOCK_DIAG_BY_FAMILY` (linux/sock_diag.h).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `TCP_LISTEN` in the kernel's TCP states.
const TCP_LISTEN: u8 = 10;
/// `struct nlmsghdr`.
const HEADER: usize = 16;
/// `struct inet_diag_msg`: family, state, timer, retrans, the socket id (48 bytes),
/// expires, rqueue, wqueue, uid, inode.
const DIAG_MSG: usize = 72;
/// Where `idiag_rqueue` (the accept queue of a listening socket) sits in it.
const RQUEUE_AT: usize = 56;
/// Where `idiag_wqueue` (a listening socket's backlog) sits in it.
const WQUEUE_AT: usize = 60;
/// The most bytes one dump may bring before it is given up on: listening sockets are a
/// few dozen on a machine, 72 bytes each after their header.
const MOST_BYTES: usize = 4 << 20;

/// One netlink socket that asks the kernel for its listening TCP sockets.
#[derive(Debug)]
pub struct Diag {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

impl Diag {
    /// Opens the socket; an error where netlink's `sock_diag` is not available.
    pub fn open() -> io::Result<Diag> {
        // SAFETY: plain socket(2); the descriptor is owned at once.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::NETLINK_SOCK_DIAG,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // A kernel that does not answer cannot hold the watch: reads give up after 100 ms.
        let tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 100_000,
        };
        // SAFETY: setsockopt with a timeval of the size given.
        let set = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if set < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Diag {
            fd,
            seq: 0,
            buf: vec![0; 32 << 10],
        })
    }

    /// The connections waiting to be accepted on the listening TCP sockets of `port` and
    /// their backlogs, summed over IPv4 and IPv6; `None` when nothing listens there.
    pub fn waiting(&mut self, port: u16) -> io::Result<Option<QueueReading>> {
        let mut found = None;
        for family in [libc::AF_INET as u8, libc::AF_INET6 as u8] {
            self.dump(family, port, &mut found)?;
        }
        Ok(found)
    }

    fn dump(&mut self, family: u8, port: u16, found: &mut Option<QueueReading>) -> io::Result<()> {
        self.seq = self.seq.wrapping_add(1);
        let req = request(family, self.seq);
        // SAFETY: a zeroed sockaddr_nl is valid; only its family is set (the kernel: pid 0).
        let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: sendto with a buffer and an address of the sizes given.
        let sent = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                req.as_ptr().cast(),
                req.len(),
                0,
                (&to as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut read = 0usize;
        loop {
            // SAFETY: recv into a buffer we own, of its length.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    0,
                )
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let n = n as usize;
            read += n;
            if n == 0 || read > MOST_BYTES {
                return Err(io::Error::other("the kernel's socket dump did not end"));
            }
            match parse(&self.buf[..n], self.seq, port, found) {
                Ok(Dump::Done) => return Ok(()),
                Ok(Dump::More) => {}
                Err(e) => return Err(io::Error::other(e)),
            }
        }
    }
}

/// A dump request for the listening TCP sockets of `family` (`inet_diag_req_v2`).
fn request(family: u8, seq: u32) -> Vec<u8> {
    let len = HEADER + 56;
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    m.extend_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    // family, protocol, extensions, padding, the states asked for, then the socket id
    // (48 bytes, all zero: no filter; the port is matched here).
    m.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, 0, 0]);
    m.extend_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    m.resize(len, 0);
    m
}

/// Where a dump stands after a datagram.
#[derive(Debug, PartialEq, Eq)]
enum Dump {
    More,
    Done,
}

/// Reads one datagram of a dump: adds the accept queue and the backlog of each listening
/// socket on `port` to `found`. Messages of another sequence number (a late answer to an
/// earlier dump) are skipped; a message whose length does not fit is an error, never a
/// panic.
fn parse(
    mut buf: &[u8],
    seq: u32,
    port: u16,
    found: &mut Option<QueueReading>,
) -> Result<Dump, String> {
    while buf.len() >= HEADER {
        let word = |at: usize| u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        let len = word(0) as usize;
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        if len < HEADER || len > buf.len() {
            return Err(format!(
                "a message of {len} bytes in a datagram of {}",
                buf.len()
            ));
        }
        let ours = word(8) == seq;
        let body = &buf[HEADER..len];
        match kind {
            _ if !ours => {}
            k if k == libc::NLMSG_DONE as u16 => return Ok(Dump::Done),
            k if k == libc::NLMSG_ERROR as u16 => {
                let code = body
                    .get(..4)
                    .map_or(0, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
                return Err(format!(
                    "the kernel refused the socket dump: {}",
                    io::Error::from_raw_os_error(-code)
                ));
            }
            SOCK_DIAG_BY_FAMILY if body.len() >= DIAG_MSG => {
                let local = u16::from_be_bytes([body[4], body[5]]);
                if body[1] == TCP_LISTEN && local == port {
                    let at = |i: usize| {
                        u64::from(u32::from_ne_bytes([
                            body[i],
                            body[i + 1],
                            body[i + 2],
                            body[i + 3],
                        ]))
                    };
                    add_listener(found, at(RQUEUE_AT), at(WQUEUE_AT));
                }
            }
            _ => {}
        }
        // Messages are aligned to 4 bytes.
        let next = (len + 3) & !3;
        buf = buf.get(next..).unwrap_or(&[]);
    }
    Ok(Dump::More)
}

/// One listening socket's queue, `waiting` of its `backlog`, added to the port's reading.
/// At its backlog the socket is full: the kernel takes one more connection past it (its
/// test is "more than the backlog"), then turns the next away, so a queue seen at its
/// backlog was at the edge of overflowing or over it. An empty queue is never full (a
/// backlog of 0 still holds one).
fn add_listener(found: &mut Option<QueueReading>, waiting: u64, backlog: u64) {
    let r = found.get_or_insert_with(QueueReading::default);
    r.waiting += waiting;
    r.backlog += backlog;
    r.full |= waiting > 0 && waiting >= backlog;
}

/// Samples the accept queue of a port on a thread of its own until stopped.
#[derive(Debug)]
pub struct AcceptWatch {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Option<AcceptWaiting>>,
}

impl AcceptWatch {
    /// How often the queue is read.
    pub const EVERY: Duration = Duration::from_millis(10);

    /// Starts sampling `port`'s accept queue; `None` where the kernel's dump cannot be
    /// asked for (the run then says nothing of the queue).
    pub fn start(port: u16) -> Option<AcceptWatch> {
        let mut diag = Diag::open().ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("accept-watch".into())
            .spawn(move || {
                let mut w = AcceptWaiting::default();
                // At least one sample, however soon the watch is stopped.
                loop {
                    match diag.waiting(port) {
                        Ok(Some(q)) => w.add(q),
                        // Nothing listens (the server is gone or not up): not a sample.
                        Ok(None) => {}
                        Err(_) => return None,
                    }
                    if flag.load(Ordering::Relaxed) {
                        break;
                    }
                    std::thread::park_timeout(Self::EVERY);
                }
                Some(w)
            })
            .ok()?;
        Some(AcceptWatch { stop, thread })
    }

    /// Ends the watch: what it saw, `None` when the kernel stopped answering or nothing
    /// listened on the port at any sample.
    pub fn stop(self) -> Option<AcceptWaiting> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        self.thread.join().ok().flatten().filter(|w| w.samples > 0)
    }
}

/// Listeners whose backlog a test chooses, and connection attempts that do not wait for
/// their handshake: what it takes to fill a listen queue past its limit on purpose.
#[cfg(test)]
pub(crate) mod small_backlog {
    use super::Diag;
    use std::io;
    use std::net::{Ipv4Addr, TcpListener, TcpStream};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A TCP socket of 127.0.0.1's family, `flags` added to its type.
    fn socket(flags: libc::c_int) -> OwnedFd {
        // SAFETY: plain socket(2); the descriptor is owned at once.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | flags, 0) };
        assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
        // SAFETY: fd is a fresh descriptor nothing else owns.
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    /// 127.0.0.1 at `port`.
    fn loopback(port: u16) -> libc::sockaddr_in {
        // SAFETY: a zeroed sockaddr_in is valid; its family, address and port are set.
        let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        a.sin_family = libc::AF_INET as libc::sa_family_t;
        a.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
        a.sin_port = port.to_be();
        a
    }

    const ADDR_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;

    /// A listener on 127.0.0.1 (any free port) that was given `backlog` by `listen()`
    /// and accepts nothing unless asked.
    pub(crate) fn listener(backlog: i32) -> TcpListener {
        let fd = socket(libc::SOCK_CLOEXEC);
        let a = loopback(0);
        // SAFETY: bind and listen on our descriptor, with an address of the size given.
        let bound = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&a as *const libc::sockaddr_in).cast(),
                ADDR_LEN,
            )
        };
        assert_eq!(bound, 0, "bind: {}", io::Error::last_os_error());
        // SAFETY: as above.
        let listening = unsafe { libc::listen(fd.as_raw_fd(), backlog) };
        assert_eq!(listening, 0, "listen: {}", io::Error::last_os_error());
        TcpListener::from(fd)
    }

    /// Connects to `l` until its queue holds its backlog and the one more the kernel
    /// takes past it (read back through `diag`): full, so the next SYN is dropped.
    /// The connections, held open.
    pub(crate) fn fill(l: &TcpListener, backlog: u64, diag: &mut Diag) -> Vec<TcpStream> {
        let port = l.local_addr().unwrap().port();
        let held = (0..=backlog)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        // The handshake's last ACK reaches the listener a moment after connect returns.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while diag.waiting(port).unwrap().map(|r| r.waiting) != Some(backlog + 1) {
            assert!(
                std::time::Instant::now() < deadline,
                "the queue never filled"
            );
            std::thread::yield_now();
        }
        held
    }

    /// A connection attempt to 127.0.0.1's `port` that does not wait for its handshake:
    /// a full queue drops its SYN (counted by the kernel), and the kernel tries again
    /// a second later, and later, for as long as the socket is held.
    pub(crate) fn attempt(port: u16) -> OwnedFd {
        let fd = socket(libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK);
        let a = loopback(port);
        // SAFETY: connect our descriptor to an address of the size given.
        let r = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                (&a as *const libc::sockaddr_in).cast(),
                ADDR_LEN,
            )
        };
        let e = io::Error::last_os_error();
        assert!(
            r == 0 || e.raw_os_error() == Some(libc::EINPROGRESS),
            "connect: {e}"
        );
        fd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// A datagram of the kernel's shape: one listening socket's message, `rqueue`
    /// waiting of a backlog of 100.
    fn message(seq: u32, state: u8, port: u16, rqueue: u32) -> Vec<u8> {
        message_of(seq, state, port, rqueue, 100)
    }

    /// [`message`] with its backlog (`wqueue`).
    fn message_of(seq: u32, state: u8, port: u16, rqueue: u32, wqueue: u32) -> Vec<u8> {
        let len = HEADER + DIAG_MSG;
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        m.extend_from_slice(&2u16.to_ne_bytes());
        m.extend_from_slice(&seq.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        let mut body = vec![0u8; DIAG_MSG];
        body[0] = libc::AF_INET as u8;
        body[1] = state;
        body[4..6].copy_from_slice(&port.to_be_bytes());
        body[RQUEUE_AT..RQUEUE_AT + 4].copy_from_slice(&rqueue.to_ne_bytes());
        body[WQUEUE_AT..WQUEUE_AT + 4].copy_from_slice(&wqueue.to_ne_bytes());
        m.extend_from_slice(&body);
        m
    }

    fn done(seq: u32) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&20u32.to_ne_bytes());
        m.extend_from_slice(&(libc::NLMSG_DONE as u16).to_ne_bytes());
        m.extend_from_slice(&2u16.to_ne_bytes());
        m.extend_from_slice(&seq.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m
    }

    #[test]
    fn a_dump_sums_the_listeners_of_the_port_and_skips_the_rest() {
        let mut d = message(7, TCP_LISTEN, 8080, 3);
        d.extend(message(7, TCP_LISTEN, 8080, 2)); // SO_REUSEPORT: a second listener
        d.extend(message(7, TCP_LISTEN, 9090, 50)); // another port
        d.extend(message(7, 1, 8080, 9)); // not listening (ESTABLISHED)
        d.extend(message(6, TCP_LISTEN, 8080, 40)); // an earlier dump's late message
        let mut found = None;
        assert_eq!(parse(&d, 7, 8080, &mut found), Ok(Dump::More));
        assert_eq!(
            found,
            Some(QueueReading {
                waiting: 5,
                backlog: 200,
                full: false,
            })
        );
        assert_eq!(parse(&done(7), 7, 8080, &mut found), Ok(Dump::Done));
        let mut none = None;
        assert_eq!(parse(&done(7), 7, 1, &mut none), Ok(Dump::Done));
        assert_eq!(none, None);
    }

    /// A port is full when one of its listening sockets holds its backlog or more, not
    /// when the sums say so; an empty queue is never full, whatever its backlog.
    #[test]
    fn a_listening_socket_at_its_backlog_is_full() {
        let reading = |sockets: &[(u32, u32)]| {
            let mut d = Vec::new();
            for &(rqueue, wqueue) in sockets {
                d.extend(message_of(3, TCP_LISTEN, 80, rqueue, wqueue));
            }
            let mut found = None;
            parse(&d, 3, 80, &mut found).unwrap();
            found.unwrap()
        };
        let r = reading(&[(1, 1)]);
        assert_eq!((r.waiting, r.backlog, r.full), (1, 1, true));
        assert!(reading(&[(2, 1)]).full);
        assert!(!reading(&[(0, 1)]).full);
        assert!(!reading(&[(0, 0)]).full);
        assert!(reading(&[(1, 0)]).full);
        // SO_REUSEPORT: one socket full, the other empty, is full though 4 < 3 + 8.
        let r = reading(&[(4, 3), (0, 8)]);
        assert_eq!((r.waiting, r.backlog, r.full), (4, 11, true));
        assert!(!reading(&[(2, 3), (2, 3)]).full);
    }

    #[test]
    fn a_datagram_whose_lengths_do_not_fit_is_an_error_at_every_cut() {
        let whole = message(1, TCP_LISTEN, 80, 1);
        for cut in HEADER..whole.len() {
            let mut found = None;
            assert!(
                parse(&whole[..cut], 1, 80, &mut found).is_err(),
                "cut {cut}"
            );
        }
        for cut in 0..HEADER {
            assert_eq!(parse(&whole[..cut], 1, 80, &mut None), Ok(Dump::More));
        }
        let mut short = whole.clone();
        short[..4].copy_from_slice(&3u32.to_ne_bytes());
        assert!(parse(&short, 1, 80, &mut None).is_err());
    }

    /// A listener that accepts nothing: each connection made to it waits in its queue,
    /// and the kernel's count is read back exactly.
    #[test]
    fn the_kernel_counts_connections_a_listener_has_not_accepted() {
        let Ok(mut diag) = Diag::open() else {
            eprintln!("skipped: netlink sock_diag is not available here");
            return;
        };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = |diag: &mut Diag| diag.waiting(port).unwrap().map(|r| r.waiting);
        assert_eq!(waiting(&mut diag), Some(0));
        let clients: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        // The handshake's last ACK reaches the listener through loopback's softirq, at
        // most a moment after connect returns: read until the queue holds all three.
        let mut got = None;
        for _ in 0..1000 {
            got = waiting(&mut diag);
            if got == Some(3) {
                break;
            }
            std::thread::yield_now();
        }
        assert_eq!(got, Some(3));
        let (_taken, _) = listener.accept().unwrap();
        assert_eq!(waiting(&mut diag), Some(2));
        drop(clients);
        drop(listener);
        assert_eq!(diag.waiting(port).unwrap(), None);
    }

    /// The backlog `listen()` was given is read with the queue, and a queue filled to it
    /// and the one past it is seen full by every sample the watch takes.
    #[test]
    fn the_kernel_gives_the_backlog_and_a_queue_filled_to_it_is_full() {
        let Ok(mut diag) = Diag::open() else {
            eprintln!("skipped: netlink sock_diag is not available here");
            return;
        };
        let l = small_backlog::listener(3);
        let port = l.local_addr().unwrap().port();
        assert_eq!(
            diag.waiting(port).unwrap(),
            Some(QueueReading {
                waiting: 0,
                backlog: 3,
                full: false,
            })
        );
        let _held = small_backlog::fill(&l, 3, &mut diag);
        let seen = AcceptWatch::start(port).unwrap().stop().expect("a sample");
        assert_eq!((seen.most, seen.backlog), (4, Some(3)));
        assert_eq!(seen.full, seen.samples);
    }

    #[test]
    fn a_watch_samples_a_queue_that_stays_full() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let _clients: Vec<TcpStream> = (0..2)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let Ok(mut probe) = Diag::open() else {
            eprintln!("skipped: netlink sock_diag is not available here");
            return;
        };
        while probe.waiting(port).unwrap().map(|r| r.waiting) != Some(2) {
            std::thread::yield_now();
        }
        // Every sample the watch takes, its first included, finds both waiting.
        let seen = AcceptWatch::start(port).unwrap().stop().expect("a sample");
        assert!(seen.samples >= 1, "{seen:?}");
        assert_eq!(seen.most, 2);
        assert_eq!(seen.waited, seen.samples);
        assert_eq!(seen.total, 2 * seen.samples);
        // Nothing listening: no sample, so nothing said.
        drop(listener);
        drop(_clients);
        assert_eq!(AcceptWatch::start(port).unwrap().stop(), None);
    }
}
