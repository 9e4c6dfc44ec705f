//! The few socket operations std does not offer: a loopback listener with a large
//! accept backlog, `SO_LINGER` 0 for resets (and the count of bytes not sent yet, which
//! a reset would discard), and `shutdown(2)` on a raw descriptor to wake a thread
//! blocked in `accept`, `read` or `write` on it.
//!
//! Seams: [`crate::TestServer`] creates the listener and shuts descriptors down when it
//! is dropped; [`crate::conn`] sets lingering for `ResetMidBody`.

use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Backlog asked of `listen(2)`; the kernel caps it at `net.core.somaxconn`. std's
/// `TcpListener::bind` asks for 128 only, too few for a test opening 10,000 connections
/// at once.
const BACKLOG: libc::c_int = 65_535;

/// The backlog of a server slow to accept ([`crate::Behavior::SlowAccept`]): the kernel
/// queues one connection more than it.
pub(crate) const SMALL_BACKLOG: libc::c_int = 0;

/// Binds a listening socket on `127.0.0.1:port` (0: a port chosen by the OS) with
/// `SO_REUSEADDR` and a large backlog, or [`SMALL_BACKLOG`] when `small`.
pub(crate) fn listen_loopback(port: u16, small: bool) -> io::Result<TcpListener> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns; OwnedFd closes it on
    // every error path below.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `addr` is a valid sockaddr_in and the length passed is its size.
    let rc = unsafe {
        libc::bind(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let backlog = if small { SMALL_BACKLOG } else { BACKLOG };
    // SAFETY: listen(2) on a bound socket we own.
    if unsafe { libc::listen(fd, backlog) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpListener::from(owned))
}

/// Makes the next close of `stream` send RST instead of FIN (`SO_LINGER` with a zero
/// timeout), dropping any unsent data.
pub(crate) fn set_linger_zero(stream: &TcpStream) -> io::Result<()> {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `linger` is a valid struct linger and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes `stream`'s receive buffer as small as the kernel allows (`SO_RCVBUF`, a few
/// KiB), so that a peer writing while it is not read backs up soon. Best effort.
pub(crate) fn small_receive_buffer(stream: &TcpStream) {
    let _ = set_int_option(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, 1);
}

/// Bytes written to `stream` that the kernel has not sent yet (`SIOCOUTQNSD`); a reset
/// discards them. Always 0 where the kernel cannot tell.
pub(crate) fn unsent(stream: &TcpStream) -> usize {
    #[cfg(target_os = "linux")]
    {
        let mut n: libc::c_int = 0;
        // SAFETY: SIOCOUTQNSD writes one int through the pointer, which is valid.
        let rc = unsafe { libc::ioctl(stream.as_raw_fd(), libc::SIOCOUTQNSD as _, &mut n) };
        if rc == 0 {
            return usize::try_from(n).unwrap_or(0);
        }
    }
    let _ = stream;
    0
}

/// Shuts down both directions of the socket `fd`. A thread blocked on it in `accept`,
/// `read` or `write` returns at once (on Linux `accept` fails with `EINVAL`). The
/// caller must guarantee `fd` is still open and still the same socket.
pub(crate) fn shutdown_fd(fd: RawFd) {
    // SAFETY: shutdown(2) does not touch memory; the caller guarantees `fd` is valid.
    unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

fn set_int_option(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` is a valid c_int and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
