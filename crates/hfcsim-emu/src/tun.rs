//! TUN devices (Documentation/networking/tuntap.rst; constants from linux/if_tun.h).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

// linux/if_tun.h: #define TUNSETIFF _IOW('T', 202, int); IFF_TUN 0x0001; IFF_NO_PI 0x1000.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// struct ifreq (linux/if.h) as TUNSETIFF reads it: the name, then the flags in the union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Open a TUN device `name` in the calling thread's namespace: whole IPv4/IPv6 packets, no
/// packet-information header, non-blocking. Closing the fd removes it (not persistent).
pub fn open(name: &str) -> io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::other(format!("{name}: interface names have at most 15 bytes")));
    }
    // SAFETY: plain open(2) of a NUL-terminated path.
    let fd = unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("/dev/net/tun: {e}")));
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays out.
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")));
    }
    Ok(fd)
}

/// Read one packet into `buf`; None when none is waiting.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: reading into a buffer we own, of its length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
        _ => Err(e),
    }
}

/// Write one whole packet.
#[inline]
pub fn write(fd: RawFd, pkt: &[u8]) -> io::Result<()> {
    // SAFETY: writing from a buffer we own, of its length.
    let n = unsafe { libc::write(fd, pkt.as_ptr().cast(), pkt.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
