//! Raw Ethernet I/O on one interface: an `AF_PACKET` socket bound to it, non-blocking,
//! that ignores the frames it sends itself.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const ETH_P_ALL: u16 = 0x0003;
/// `<linux/if_packet.h>`: a packet socket's counters (`struct tpacket_stats`).
const PACKET_STATISTICS: libc::c_int = 6;

#[repr(C)]
struct TpacketStats {
    tp_packets: libc::c_uint,
    tp_drops: libc::c_uint,
}

/// A raw socket on one interface.
pub struct RawSocket {
    fd: OwnedFd,
    pub ifname: String,
}

fn check(rc: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(rc)
}

fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int, what: &str) -> io::Result<()> {
    // SAFETY: `v` outlives the call and its size is passed.
    let rc = unsafe {
        libc::setsockopt(fd, level, opt, (&v as *const libc::c_int).cast(), std::mem::size_of::<libc::c_int>() as u32)
    };
    check(rc, what).map(|_| ())
}

impl RawSocket {
    /// Opens a socket receiving every frame that arrives on `ifname` (bytes of socket
    /// buffer: `buf_bytes` each way).
    pub fn open(ifname: &str, buf_bytes: i32) -> io::Result<RawSocket> {
        let name = CString::new(ifname).map_err(|_| io::Error::other("interface name contains NUL"))?;
        // SAFETY: plain libc calls on a fresh descriptor we own.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::other(format!("no interface named {ifname}")));
        }
        let proto = ETH_P_ALL.to_be();
        let raw = check(
            unsafe {
                libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, proto as i32)
            },
            "socket(AF_PACKET)",
        )?;
        // SAFETY: `raw` is a new descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        set_int(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING")?;
        set_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, buf_bytes, "SO_RCVBUFFORCE")?;
        set_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, buf_bytes, "SO_SNDBUFFORCE")?;
        // The kernel's receive time of each frame, so that the emulator's own wake-up latency
        // does not add to the emulated delay.
        set_int(raw, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS")?;
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid initial value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex as i32;
        let rc = unsafe {
            libc::bind(raw, (&sll as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32)
        };
        check(rc, &format!("bind to {ifname}"))?;
        Ok(RawSocket { fd, ifname: ifname.to_string() })
    }

    /// Receives one frame into `buf`: its length and the kernel's receive time (realtime
    /// clock, ns); `None` when nothing is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Option<u64>)>> {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        let mut control = [0u64; 8];
        // SAFETY: msghdr is plain data; zeroed is a valid initial value.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: every pointer in `msg` is valid for the lengths given.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e),
            };
        }
        let mut stamp = None;
        // SAFETY: the CMSG macros walk the control buffer the kernel filled in.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        Ok(Some((n as usize, stamp)))
    }

    /// Sends one frame; false if the kernel had no room for it (the frame is lost).
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        // SAFETY: `frame` is valid for `frame.len()` bytes.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) => Ok(false),
                _ => Err(e),
            };
        }
        Ok(true)
    }

    /// Frames the kernel dropped on this socket because its receive queue was full, since the
    /// last call (`PACKET_STATISTICS`, which resets the counters when read).
    pub fn take_drops(&self) -> io::Result<u64> {
        let mut stats = TpacketStats { tp_packets: 0, tp_drops: 0 };
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: `stats` is valid for `len` bytes.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                (&mut stats as *mut TpacketStats).cast(),
                &mut len,
            )
        };
        check(rc, "PACKET_STATISTICS")?;
        Ok(stats.tp_drops as u64)
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
