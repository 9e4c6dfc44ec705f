//! UDP segmentation offload for HTTP/3's sockets, where the kernel has it (Linux 4.18 and
//! later for sending, 5.0 for receiving): a batch of equal-sized datagrams (the last may
//! be shorter) goes out in one `sendmsg` with a `UDP_SEGMENT` control message (GSO), and
//! a socket with `UDP_GRO` set may hand back several datagrams from one sender in one
//! `recvmsg`, with their size in a `UDP_GRO` control message, which [`datagrams`] cuts
//! apart again. Whether the kernel takes `UDP_SEGMENT` is probed once per process; a
//! batch the kernel or the interface refuses (`EIO`, `EINVAL`) turns GSO off for the rest
//! of the process and is sent again one datagram per `send`, as it is where GSO is
//! missing. Every system call of HTTP/3's I/O, and so all its unsafe code, is here.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU8, Ordering};

/// The most datagrams asked of QUIC for one batch (one `sendmsg`).
pub const MAX_SEGMENTS: usize = 10;

const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// Whether the kernel takes `UDP_SEGMENT`: probed once per process, [`NO`] after a
/// refused batch.
static GSO: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether batches may be sent with GSO in this process (probed on the first call).
pub fn gso() -> bool {
    match GSO.load(Ordering::Relaxed) {
        YES => true,
        NO => false,
        _ => {
            let found = if sys::probe_gso() { YES } else { NO };
            // A refusal stored meanwhile wins over the probe.
            let _ = GSO.compare_exchange(UNKNOWN, found, Ordering::Relaxed, Ordering::Relaxed);
            GSO.load(Ordering::Relaxed) == YES
        }
    }
}

/// Asks the kernel to coalesce the datagrams `sock` receives (`UDP_GRO`); whether it
/// took it. Where it did, [`recv`] may return several datagrams at once.
pub fn enable_gro(sock: &impl AsRawFd) -> bool {
    sys::enable_gro(sock.as_raw_fd())
}

/// Sends `buf` on the connected `sock`: one datagram, or with `segment` a batch of
/// datagrams of that size (the last may be shorter), in one `sendmsg` when `gso` is
/// allowed and [`gso()`] holds, else one `send` per datagram. The bytes sent: a datagram
/// the socket has no room for is dropped (QUIC recovers it as a loss), and when all are,
/// the answer is `WouldBlock`.
pub fn send(
    sock: &impl AsRawFd,
    buf: &[u8],
    segment: Option<usize>,
    gso: bool,
) -> io::Result<usize> {
    let fd = sock.as_raw_fd();
    let seg = match segment {
        Some(s) if s > 0 && s < buf.len() => s,
        _ => return sys::send(fd, buf),
    };
    if gso && self::gso() {
        match sys::send_segments(fd, buf, seg) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL)) => {
                GSO.store(NO, Ordering::Relaxed);
            }
            done => return done,
        }
    }
    send_each(fd, buf, seg)
}

/// Sends the datagrams of a batch one `send` each; see [`send`].
fn send_each(fd: i32, buf: &[u8], seg: usize) -> io::Result<usize> {
    let mut sent = 0;
    let mut blocked = false;
    for d in buf.chunks(seg) {
        match sys::send(fd, d) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => blocked = true,
            Err(e) => return Err(e),
        }
    }
    if sent == 0 && blocked {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    Ok(sent)
}

/// Receives into `buf` from `sock`: the bytes read and the size of the datagrams they
/// hold (the bytes read, when the kernel coalesced nothing). See [`datagrams`].
pub fn recv(sock: &impl AsRawFd, buf: &mut [u8]) -> io::Result<(usize, usize)> {
    let (len, seg) = sys::recv(sock.as_raw_fd(), buf)?;
    let stride = seg.filter(|&s| s > 0 && s < len).unwrap_or(len);
    Ok((len, stride.max(1)))
}

/// The datagrams of `buf` as [`recv`] returned them: cut every `stride` bytes, the last
/// one shorter.
pub fn datagrams(buf: &[u8], stride: usize) -> std::slice::Chunks<'_, u8> {
    buf.chunks(stride.max(1))
}

#[cfg(target_os = "linux")]
mod sys {
    use std::io;
    use std::mem;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// Room for one control message of an `int` (more than a `u16` needs), aligned as
    /// `cmsghdr` must be.
    type Control = [u64; 4];

    fn cvt(n: isize) -> io::Result<usize> {
        usize::try_from(n).map_err(|_| io::Error::last_os_error())
    }

    /// Whether `getsockopt(UDP_SEGMENT)` succeeds on a fresh UDP socket.
    pub fn probe_gso() -> bool {
        // SAFETY: socket(2) takes no pointer; a negative answer is checked.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return false;
        }
        // SAFETY: `fd` is a new descriptor no one else owns; OwnedFd closes it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut val: libc::c_int = 0;
        let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `val` and `len` are live locals of the size `len` says.
        let r = unsafe {
            libc::getsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&fd),
                libc::SOL_UDP,
                libc::UDP_SEGMENT,
                (&mut val as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        r == 0
    }

    pub fn enable_gro(fd: i32) -> bool {
        let on: libc::c_int = 1;
        // SAFETY: `on` is a live `int` and the length given is its size.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_UDP,
                libc::UDP_GRO,
                (&on as *const libc::c_int).cast(),
                mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        r == 0
    }

    pub fn send(fd: i32, buf: &[u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the call.
            let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), 0) };
            match cvt(n) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                done => return done,
            }
        }
    }

    /// One `sendmsg` of `buf` with a `UDP_SEGMENT` control message of `seg`.
    pub fn send_segments(fd: i32, buf: &[u8], seg: usize) -> io::Result<usize> {
        let seg = u16::try_from(seg).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let mut control: Control = [0; 4];
        let mut iov = libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: an all-zero msghdr is a valid empty one.
        let mut msg: libc::msghdr = unsafe { mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE is arithmetic on its argument.
        msg.msg_controllen = unsafe { libc::CMSG_SPACE(mem::size_of::<u16>() as u32) } as _;
        // SAFETY: `msg` points at `control`, which is aligned for `cmsghdr` and larger than
        // CMSG_SPACE(2), so the first header and its two data bytes lie inside it; the
        // data pointer may be unaligned for u16, hence write_unaligned.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null() {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            (*cmsg).cmsg_level = libc::SOL_UDP;
            (*cmsg).cmsg_type = libc::UDP_SEGMENT;
            (*cmsg).cmsg_len = libc::CMSG_LEN(mem::size_of::<u16>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<u16>(), seg);
        }
        loop {
            // SAFETY: `msg`'s pointers (`iov` to `buf`, `control`) live through the call;
            // the kernel only reads through them.
            let n = unsafe { libc::sendmsg(fd, &msg, 0) };
            match cvt(n) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                done => return done,
            }
        }
    }

    /// One `recvmsg` into `buf`: the bytes read and the `UDP_GRO` segment size, if any.
    pub fn recv(fd: i32, buf: &mut [u8]) -> io::Result<(usize, Option<usize>)> {
        let mut control: Control = [0; 4];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: an all-zero msghdr is a valid empty one.
        let mut msg: libc::msghdr = unsafe { mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = mem::size_of::<Control>() as _;
        let len = loop {
            // SAFETY: `iov` points at `buf` and `msg_control` at `control`, both live and
            // writable for the lengths given.
            let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
            match cvt(n) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                done => break done?,
            }
        };
        let mut seg = None;
        // SAFETY: the kernel filled `msg_controllen` bytes of `control` with well-formed
        // control messages; CMSG_FIRSTHDR/NXTHDR stay within them, and the `int` of a
        // UDP_GRO message is read unaligned.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_UDP && (*cmsg).cmsg_type == libc::UDP_GRO {
                    let s = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>());
                    seg = usize::try_from(s).ok();
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        Ok((len, seg))
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use std::io;

    pub fn probe_gso() -> bool {
        false
    }

    pub fn enable_gro(_fd: i32) -> bool {
        false
    }

    pub fn send(fd: i32, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the call.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), 0) };
        usize::try_from(n).map_err(|_| io::Error::last_os_error())
    }

    pub fn send_segments(fd: i32, buf: &[u8], _seg: usize) -> io::Result<usize> {
        send(fd, buf)
    }

    pub fn recv(fd: i32, buf: &mut [u8]) -> io::Result<(usize, Option<usize>)> {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the call.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
        Ok((n, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::time::Duration;

    /// Two sockets on 127.0.0.1 connected to each other; the receiver blocks at most 5 s.
    fn pair() -> (UdpSocket, UdpSocket) {
        let a = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let b = UdpSocket::bind("127.0.0.1:0").expect("bind");
        a.connect(b.local_addr().expect("addr")).expect("connect");
        b.connect(a.local_addr().expect("addr")).expect("connect");
        b.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        (a, b)
    }

    /// A batch of 3 datagrams of 1,200 bytes and one of 500, datagram k filled with k.
    fn batch() -> Vec<u8> {
        let mut b = Vec::new();
        for (k, n) in [1200usize, 1200, 1200, 500].into_iter().enumerate() {
            b.extend(std::iter::repeat_n(k as u8, n));
        }
        b
    }

    /// Receives until `count` datagrams came: their sizes and fill bytes, and the
    /// number of `recv` calls it took.
    fn receive(b: &UdpSocket, count: usize) -> (Vec<(usize, u8)>, usize) {
        let mut buf = vec![0u8; 64 * 1024];
        let (mut got, mut calls) = (Vec::new(), 0);
        while got.len() < count {
            let (len, stride) = recv(b, &mut buf).expect("recv");
            calls += 1;
            for d in datagrams(&buf[..len], stride) {
                assert!(d.iter().all(|&x| x == d[0]), "one datagram, one fill");
                got.push((d.len(), d[0]));
            }
        }
        (got, calls)
    }

    const WANT: [(usize, u8); 4] = [(1200, 0), (1200, 1), (1200, 2), (500, 3)];

    #[test]
    fn a_gso_batch_comes_back_as_its_datagrams_through_gro() {
        if !gso() {
            eprintln!("skipped: this kernel does not take UDP_SEGMENT");
            return;
        }
        let (a, b) = pair();
        assert!(
            enable_gro(&b),
            "a kernel with UDP_SEGMENT has UDP_GRO on loopback"
        );
        let buf = batch();
        assert_eq!(send(&a, &buf, Some(1200), true).expect("send"), 4100);
        let (got, calls) = receive(&b, 4);
        assert_eq!(got, WANT);
        assert_eq!(
            calls, 1,
            "loopback hands the batch over whole to a GRO socket"
        );
    }

    #[test]
    fn without_gso_a_batch_goes_as_one_send_per_datagram() {
        let (a, b) = pair();
        let buf = batch();
        assert_eq!(send(&a, &buf, Some(1200), false).expect("send"), 4100);
        let (got, calls) = receive(&b, 4);
        assert_eq!(got, WANT);
        assert_eq!(calls, 4, "no GRO asked: one datagram per recv");
    }

    #[test]
    fn one_datagram_goes_as_it_is() {
        let (a, b) = pair();
        assert_eq!(send(&a, &[7; 300], None, true).expect("send"), 300);
        assert_eq!(send(&a, &[8; 1200], Some(1200), true).expect("send"), 1200);
        let (got, _) = receive(&b, 2);
        assert_eq!(got, [(300, 7), (1200, 8)]);
    }
}
