"""Reading a live socket's state: ``TCP_INFO`` of a TCP socket, and ``MPTCP_INFO`` plus
every subflow's ``TCP_INFO`` and addresses of an MPTCP socket (``SOL_MPTCP`` options of
``linux/mptcp.h``), parsed with :mod:`struct`.

``MPTCP_TCPINFO`` and ``MPTCP_SUBFLOW_ADDRS`` read a ``struct mptcp_subflow_data`` header
that the caller fills in, which :meth:`socket.socket.getsockopt` cannot do (it passes a
zeroed buffer): those two go through libc's ``getsockopt`` with :mod:`ctypes`.

A subflow's congestion control and memory are not readable through the MPTCP socket (its
``TCP_CONGESTION`` is the connection's setting, its ``SO_SNDBUF`` the connection's buffer):
:func:`diag_sockets` asks the kernel's socket diagnostics (``NETLINK_SOCK_DIAG``,
``linux/inet_diag.h``, as ``ss -tmi`` does) for every TCP socket's ``INET_DIAG_CONG`` and
``INET_DIAG_SKMEMINFO`` attributes.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
from dataclasses import dataclass
from typing import Any

__all__ = ["SOL_MPTCP", "TcpInfo", "diag_sockets", "mptcp_info", "subflows", "tcp_info"]

SOL_MPTCP = 284
MPTCP_INFO = 1
MPTCP_TCPINFO = 2
MPTCP_SUBFLOW_ADDRS = 3

# struct tcp_info up to tcpi_total_rto_time (linux/tcp.h), native alignment.
_TCP_INFO = struct.Struct("@8B 24I 4Q 6I 4Q 2I 2Q 6I 2H I")
_TCP_FIELDS = (
    "state ca_state retransmits probes backoff options wscale flags "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets last_data_sent last_ack_sent "
    "last_data_recv last_ack_recv pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss "
    "reordering rcv_rtt rcv_space total_retrans "
    "pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out "
    "delivery_rate busy_time rwnd_limited sndbuf_limited "
    "delivered delivered_ce bytes_sent bytes_retrans "
    "dsack_dups reord_seen rcv_ooopack snd_wnd rcv_wnd rehash total_rto total_rto_recoveries total_rto_time"
).split()
assert len(_TCP_FIELDS) == len(_TCP_INFO.unpack(bytes(_TCP_INFO.size)))

# struct mptcp_info (linux/mptcp.h) up to mptcpi_bytes_acked.
_MPTCP_INFO = struct.Struct("@6B I I Q Q Q 3B I Q Q Q Q")
_MPTCP_FIELDS = (
    "subflows add_addr_signal add_addr_accepted subflows_max add_addr_signal_max add_addr_accepted_max "
    "flags token write_seq snd_una rcv_nxt local_addr_used local_addr_max csum_enabled retransmits "
    "bytes_retrans bytes_sent bytes_received bytes_acked"
).split()

_SUBFLOW_DATA = struct.Struct("@4I")  # size_subflow_data, num_subflows, size_kernel, size_user
_ADDRS_SIZE = 256  # two sockaddr_storage-sized unions
MAX_SUBFLOWS = 16

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class TcpInfo:
    """The fields of ``struct tcp_info`` the results use (times in seconds, sizes in bytes)."""

    srtt_s: float
    min_rtt_s: float
    cwnd_bytes: int
    ssthresh_bytes: int | None
    # Linux `tcp_packets_in_flight`: packets_out - (sacked_out + lost_out) + retrans_out.
    in_flight_bytes: int
    bytes_sent: int
    bytes_acked: int
    bytes_received: int
    bytes_retrans: int
    data_segs_out: int
    total_retrans: int
    total_rto: int
    total_rto_recoveries: int
    rwnd_limited_s: float
    sndbuf_limited_s: float
    busy_s: float
    # The receiving side: the most the socket lets its window grow to now (``rcv_ssthresh``)
    # and the window it last offered (``rcv_wnd``, Linux 6.x's ``tcpi_rcv_wnd``).
    rcv_ssthresh_bytes: int
    rcv_wnd_bytes: int

    @staticmethod
    def parse(raw: bytes) -> TcpInfo:
        buf = raw[: _TCP_INFO.size].ljust(_TCP_INFO.size, b"\0")
        f = dict(zip(_TCP_FIELDS, _TCP_INFO.unpack(buf), strict=True))
        mss = f["snd_mss"]
        ssthresh = f["snd_ssthresh"]
        return TcpInfo(
            srtt_s=f["rtt"] / 1e6,
            min_rtt_s=f["min_rtt"] / 1e6 if f["min_rtt"] != 0xFFFFFFFF else 0.0,
            cwnd_bytes=f["snd_cwnd"] * mss,
            # 0x7fffffff is "infinite" (still in the initial slow start).
            ssthresh_bytes=None if ssthresh >= 0x7FFFFFFF else ssthresh * mss,
            in_flight_bytes=max(0, f["unacked"] - f["sacked"] - f["lost"] + f["retrans"]) * mss,
            bytes_sent=f["bytes_sent"],
            bytes_acked=f["bytes_acked"],
            bytes_received=f["bytes_received"],
            bytes_retrans=f["bytes_retrans"],
            data_segs_out=f["data_segs_out"],
            total_retrans=f["total_retrans"],
            total_rto=f["total_rto"],
            total_rto_recoveries=f["total_rto_recoveries"],
            rwnd_limited_s=f["rwnd_limited"] / 1e6,
            sndbuf_limited_s=f["sndbuf_limited"] / 1e6,
            busy_s=f["busy_time"] / 1e6,
            rcv_ssthresh_bytes=f["rcv_ssthresh"],
            rcv_wnd_bytes=f["rcv_wnd"],
        )


def tcp_info(sock: socket.socket) -> TcpInfo:
    """``TCP_INFO`` of a plain TCP socket."""
    return TcpInfo.parse(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256))


def mptcp_info(sock: socket.socket) -> dict[str, int]:
    """``MPTCP_INFO`` of an MPTCP socket (connection-level counters; empty before the
    connection is fully established)."""
    raw = sock.getsockopt(SOL_MPTCP, MPTCP_INFO, 256)
    if len(raw) < _MPTCP_INFO.size:
        return {}
    return dict(zip(_MPTCP_FIELDS, _MPTCP_INFO.unpack(raw[: _MPTCP_INFO.size]), strict=True))


def _subflow_array(sock: socket.socket, opt: int, elem: int) -> list[bytes]:
    size = _SUBFLOW_DATA.size + MAX_SUBFLOWS * elem
    buf = ctypes.create_string_buffer(_SUBFLOW_DATA.pack(_SUBFLOW_DATA.size, 0, 0, elem), size)
    optlen = ctypes.c_uint32(size)
    if _libc.getsockopt(sock.fileno(), SOL_MPTCP, opt, buf, ctypes.byref(optlen)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    _, n, _, size_user = _SUBFLOW_DATA.unpack_from(buf.raw)
    n = min(n, MAX_SUBFLOWS)
    base = _SUBFLOW_DATA.size
    return [buf.raw[base + k * size_user : base + (k + 1) * size_user] for k in range(n)]


def _sockaddr(raw: bytes) -> tuple[str, int] | None:
    family = struct.unpack_from("@H", raw)[0]
    if family != socket.AF_INET:
        return None
    port = struct.unpack_from("!H", raw, 2)[0]
    return socket.inet_ntoa(raw[4:8]), port


def subflows(sock: socket.socket) -> list[dict[str, Any]]:
    """Every subflow of an MPTCP socket: local and remote (address, port) and its
    :class:`TcpInfo`, in the kernel's subflow order."""
    infos = _subflow_array(sock, MPTCP_TCPINFO, 248)
    addrs = _subflow_array(sock, MPTCP_SUBFLOW_ADDRS, _ADDRS_SIZE)
    out = []
    for info, addr in zip(infos, addrs, strict=False):
        out.append({"local": _sockaddr(addr[:128]), "remote": _sockaddr(addr[128:]), "info": TcpInfo.parse(info)})
    return out


# linux/netlink.h, linux/sock_diag.h and linux/inet_diag.h.
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_INET_DIAG_CONG = 4
_INET_DIAG_SKMEMINFO = 7
# linux/sock_diag.h: the u32 array of INET_DIAG_SKMEMINFO, by index (SK_MEMINFO_*).
_SK_MEMINFO = {"rmem_alloc": 0, "rcvbuf": 1, "wmem_alloc": 2, "sndbuf": 3, "wmem_queued": 5}
_NLMSGHDR = struct.Struct("=IHHII")
_DIAG_REQ = struct.Struct("=BBBxI48x")  # family, protocol, extensions, states, a zero sockid
_DIAG_MSG = struct.Struct("=BBBB2s2s16s16s")  # family, state, timer, retrans, then the sockid start
_DIAG_MSG_SIZE = 72
_RTATTR = struct.Struct("=HH")


def diag_sockets(port: int) -> list[dict[str, Any]]:
    """Every IPv4 TCP socket of this network namespace with ``port`` at either end (MPTCP
    subflows included): ``{"local": (addr, port), "remote": (addr, port), "cc": name}`` and
    its memory as ``ss -m`` shows it (``skmem``): ``sndbuf`` (``sk_sndbuf``, ``tb``),
    ``wmem_queued`` (``sk_wmem_queued``, ``w``), ``wmem_alloc`` (``t``), ``rcvbuf``
    (``rb``) and ``rmem_alloc`` (``r``), in bytes (None where the kernel sent no
    ``INET_DIAG_SKMEMINFO``)."""
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG)
    try:
        ext = (1 << (_INET_DIAG_CONG - 1)) | (1 << (_INET_DIAG_SKMEMINFO - 1))
        req = _DIAG_REQ.pack(socket.AF_INET, socket.IPPROTO_TCP, ext, 0xFFFFFFFF)
        nl.send(_NLMSGHDR.pack(_NLMSGHDR.size + len(req), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, 1, 0) + req)
        out: list[dict[str, Any]] = []
        while True:
            data = nl.recv(1 << 16)
            off = 0
            while off + _NLMSGHDR.size <= len(data):
                length, kind = _NLMSGHDR.unpack_from(data, off)[:2]
                if kind == _NLMSG_DONE:
                    return out
                if kind == _NLMSG_ERROR:
                    err = -struct.unpack_from("=i", data, off + _NLMSGHDR.size)[0]
                    raise OSError(err, os.strerror(err))
                body = off + _NLMSGHDR.size
                _, _, _, _, sport, dport, src, dst = _DIAG_MSG.unpack_from(data, body)
                local = (socket.inet_ntoa(src[:4]), struct.unpack("!H", sport)[0])
                remote = (socket.inet_ntoa(dst[:4]), struct.unpack("!H", dport)[0])
                entry: dict[str, Any] = {"local": local, "remote": remote, "cc": None}
                entry.update(dict.fromkeys(_SK_MEMINFO))
                a = body + _DIAG_MSG_SIZE
                while a + _RTATTR.size <= off + length:
                    alen, atype = _RTATTR.unpack_from(data, a)
                    if alen < _RTATTR.size:
                        break
                    payload = data[a + _RTATTR.size : a + alen]
                    if atype == _INET_DIAG_CONG:
                        entry["cc"] = payload.split(b"\0", 1)[0].decode()
                    elif atype == _INET_DIAG_SKMEMINFO:
                        mem = struct.unpack_from(f"={len(payload) // 4}I", payload)
                        entry.update({k: mem[i] for k, i in _SK_MEMINFO.items() if i < len(mem)})
                    a += (alen + 3) & ~3
                if port in (local[1], remote[1]) and entry["cc"] is not None:
                    out.append(entry)
                off += (length + 3) & ~3
    finally:
        nl.close()
