"""What the Linux backend can run: every scenario setting it cannot honour is refused with
the key and the reason, never replaced by something else.

A setting counts when the scenario writes it: an unset ``scheduler`` runs the kernel's only
scheduler (``default``), while ``scheduler = "minrtt"`` is refused. The stack model's keys
(buffer accounting, window updates, MPTCP-level retransmission, joins, option sizes) are
checked on their resolved values, since the simulator runs what they resolve to: a scenario
meant for both backends selects ``stack = "linux"``, which gives every one of them Linux's
value.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mptcplab import _core
from mptcplab.errors import config_error
from mptcplab.scenario import Scenario

__all__ = ["KERNEL_CC", "LINUX_MODEL", "LINUX_RECOVERY", "LINUX_TCP", "buffer_triples", "check_kernel_cc", "check_supported",
           "host_jitter_ns"]

#: Congestion controls the scenario schema names that upstream Linux has as a per-socket choice.
KERNEL_CC = ("reno", "cubic", "bbr")
#: TCP settings the backend applies (sysctl, route attribute or link MTU).
_TCP_KEYS = {"mtu", "iw", "rto_min", "idle_restart", "timestamps", "metrics"}
#: Loss recovery as this kernel does it (`net.ipv4.tcp_recovery` = 1, RACK with TLP, and PRR,
#: which Linux cannot switch off): accepted when written with these values, refused otherwise.
LINUX_RECOVERY = {"recovery": "rack_tlp", "prr": True}
#: Other TCP keys with the one value this kernel has, and why: accepted when written with
#: that value, refused otherwise.
LINUX_TCP: dict[str, tuple[Any, str]] = {
    "quickack": (True, "Linux's receiver enters quick-ACK mode (tcp_enter_quickack_mode)"),
    "delack_count": ("bytes", "Linux acknowledges at once when more than one segment's worth of bytes arrived since "
                     "its last ACK (__tcp_ack_snd_check)"),
    "ooo_ack": ("compressed", "Linux compresses the ACKs of out-of-order data (SACK compression, since 4.18)"),
    "cwnd_limited": ("linux", "Linux counts the congestion window as used by tcp_cwnd_validate's rule"),
    "cwnd_unit": ("packets", "Linux counts the congestion window in packets (tcp_snd_cwnd)"),
    "tso_defer": (True, "Linux defers small segmentation-offload units (tcp_tso_should_defer)"),
    "sndbuf_check": ("linux", "Linux grows a send buffer after every skb sent while the writer waits for space "
                     "(tcp_check_space, since 5.18)"),
    "cwv": (True, "Linux decays an application-limited window (tcp_cwnd_application_limited)"),
    "pacing_mss": ("mss_cache", "Linux scales the pacing rate by mss_cache, the MSS without per-segment options "
                   "(tcp_update_pacing_rate)"),
    "slow_start_bound": ("below", "Linux stays in slow start while cwnd < ssthresh (tcp_in_slow_start)"),
    "rtt_sample": ("first", "Linux samples the smoothed RTT from the first segment an ACK covers "
                   "(tcp_clean_rtx_queue's first_ackt)"),
}
#: Connection keys of the stack model with the one value this kernel has, and why. A key
#: absent from the resolved scenario (a schema without it) is not checked.
LINUX_MODEL: dict[str, tuple[Any, str]] = {
    "buffer_accounting": ("truesize", "Linux charges each segment's skb truesize against the buffers"),
    "window_update": ("all_subflows", "Linux sends the window update on every subflow when the application reads"),
    "right_edge": ("connection", "a Linux MPTCP subflow may shrink the window it offers; only the connection's right "
                   "edge never moves left (mptcp_established_options_dss, mptcp_set_rwin)"),
    "mptcp_retransmit": (True, "Linux always runs the MPTCP-level retransmission timer"),
    "join": ("fully_established", "the backend's path manager has `subflow` endpoints on the client, which opens its "
             "extra subflows once the connection is fully established"),
    "option_sizes": ("linux", "Linux sizes its MPTCP options as the kernel does"),
    "rcvbuf_window": ("free", "a Linux receiver advertises the free space of its buffer (`__mptcp_space`)"),
    "window_tail": ("fill", "Linux MPTCP hands a subflow data up to the last byte of the peer's window "
                    "(`mptcp_check_allowed_size`)"),
    "drs_rtt": ("smallest", "this kernel paces receive-buffer auto-tuning by the smallest RTT of the subflows "
                "delivering data (its buffer grows as that rule's does)"),
    "data_frags": ("pages", "Linux MPTCP keeps written data in 32 KB page fragments and hands a subflow whole "
                   "fragments (`mptcp_sendmsg`, `__subflow_push_pending`)"),
    "writer": ("poll", "the kernel backends' application polls for space, then writes up to 64 KiB per send() "
               "(app.write makes it a loop of blocking send() calls instead)"),
    "scaling_ratio": ("subflow_min", "a Linux 6.18 MPTCP socket takes the smallest scaling ratio of its subflows "
                      "when the application reads (`mptcp_rcv_space_adjust`)"),
    "window_rounding": ("scaled", "Linux offers the handshake's window rounded down to the MSS and later windows in "
                        "units of the window scale (`tcp_select_initial_window`, `__tcp_select_window`)"),
}
#: The smallest value Linux 7.3 accepts in each field of ``net.ipv4.tcp_rmem``
#: (``tcp_min_rcvbuf`` in ``net/ipv4/sysctl_net_ipv4.c``): the ``uml`` backend's limit, for a
#: UML kernel after the 6.18 series (6.18's handler takes anything from 1, ``SYSCTL_ONE``).
UML_TCP_MIN_RCVBUF = 4096


def _uml_min_rcvbuf() -> tuple[int, str]:
    """The ``uml`` backend's ``tcp_rmem`` floor and the kernel it is for: 1 B for a UML kernel
    of the 6.18 series or older, :data:`UML_TCP_MIN_RCVBUF` otherwise (also when none is built
    yet: the default kernel is 7.3). Inside the instance (the run checks the scenario again
    there) the kernel is the one running."""
    from mptcplab.kernel.uml.kernel import find_kernel

    try:
        inside = "User Mode Linux" in Path("/proc/cpuinfo").read_text()
    except OSError:
        inside = False
    if inside:
        release = os.uname().release
    else:
        k = find_kernel()
        release = str(k.info.get("kernel_release", "")) if k else ""
    try:
        major, minor = (int(x) for x in release.split(".")[:2])
    except ValueError:
        return UML_TCP_MIN_RCVBUF, "7.3"
    return (1 if (major, minor) <= (6, 18) else UML_TCP_MIN_RCVBUF), release
#: Keys of :data:`LINUX_MODEL` that concern the MPTCP level only (not checked for TCP).
_MPTCP_ONLY = {"window_update", "right_edge", "mptcp_retransmit", "join", "option_sizes", "window_tail", "drs_rtt",
               "scaling_ratio", "data_frags"}


def host_jitter_ns(data: dict[str, Any], resolved: dict[str, Any]) -> int | None:
    """The host processing delay the ``uml`` backend's emulators add (ns): the ``host_jitter``
    the scenario's connections write (checked equal by :func:`check_supported`), or None when
    none writes it (the UML kernel's hosts then take no time)."""
    for c, rc in zip(data.get("connections", []), resolved["connections"], strict=True):
        if "host_jitter" in c:
            return int(_core.parse_duration_ns(rc["host_jitter"]))
    return None


def check_kernel_cc(sc: Scenario) -> None:
    """Raises :class:`ConfigError` for a congestion control this kernel cannot set: the
    probe sets it on a throwaway socket (as root, the kernel loads a missing module)."""
    import socket

    for c, rc in zip(sc.data.get("connections", []), sc.resolved["connections"], strict=True):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, rc["cc"].encode())
            except OSError as e:
                try:
                    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
                        have = f.read().strip()
                except OSError:
                    have = "unknown"
                raise config_error(_conn_key(c, "cc"), f"this kernel cannot set `{rc['cc']}` ({e.strerror}; available: "
                                   f"{have}) (--backend linux)", sc.source) from None


def _conn_key(c: dict[str, Any], k: str) -> str:
    return f"connections.{c.get('name', '?')}.{k}"


def check_supported(sc: Scenario, backend: str = "linux") -> None:
    """Raises :class:`ConfigError` naming the first setting the backend (``linux``, or ``uml``,
    which also honours a written ``host_jitter``) cannot honour."""
    err = _first_unsupported(sc.data, sc.resolved, backend)
    if err is not None:
        key, why = err
        raise config_error(key, f"{why} (--backend {backend})", sc.source)


def _first_unsupported(data: dict[str, Any], resolved: dict[str, Any], backend: str = "linux") -> tuple[str, str] | None:
    if data.get("links"):
        return "links", "general [[links]] topologies are not supported; use two-host [[paths]]"
    if len(resolved["paths"]) > 8:
        return "paths", "at most 8 paths (the kernel path manager's subflow limit)"
    for i, p in enumerate(resolved["paths"]):
        for at, spec in ((f"paths[{i}]", p), (f"paths[{i}].up", p.get("up") or {}), (f"paths[{i}].down", p.get("down") or {})):
            if spec.get("queue_at") == "host":
                return f"{at}.queue_at", ("the link emulator is a router between the namespaces; a queue in the sending "
                                          "host (with TCP small queues acting on it) is not emulated")
    jitter = host_jitter_ns(data, resolved)
    mptcp_sets: list[tuple[str, ...]] = []
    sysctl_values: dict[str, Any] = {}
    for c, rc in zip(data.get("connections", []), resolved["connections"], strict=True):
        if c.get("routes"):
            return _conn_key(c, "routes"), "routes over [[links]] are not supported; use paths"
        paths = rc["paths"]
        if len(set(paths)) != len(paths):
            return _conn_key(c, "paths"), "a path listed twice (several subflows on one path) is not supported"
        if rc["kind"] == "tcp" and len(paths) != 1:
            return _conn_key(c, "paths"), "a TCP connection uses exactly one path"
        if c.get("stack") == "linux-v0.9x":
            return _conn_key(c, "stack"), ("the out-of-tree multipath-tcp.org v0.9x stack is not this kernel's (upstream "
                                           "Linux MPTCP); use stack = \"linux\"")
        sched = c.get("scheduler")
        if rc["kind"] == "mptcp" and sched is not None and sched != "default":
            return _conn_key(c, "scheduler"), f"upstream Linux has only the `default` scheduler, not `{sched}`"
        for k, (linux, why) in LINUX_MODEL.items():
            if k in rc and rc[k] != linux and (rc["kind"] == "mptcp" or k not in _MPTCP_ONLY):
                hint = "" if k in c else "; set stack = \"linux\" for Linux's value of every such key"
                return _conn_key(c, k), f"{why}; `{_show(rc[k])}` is not available (need `{_show(linux)}`){hint}"
        if c.get("after") is not None:
            return _conn_key(c, "after"), ("the backend starts every connection at its `start`; a connection started "
                                           "by another's close is not supported")
        if "host_jitter" in c and backend != "uml":
            return _conn_key(c, "host_jitter"), "the kernel's hosts have their own timing; it cannot be set"
        if backend == "uml" and isinstance(rc["rcvbuf"], dict):
            floor, release = _uml_min_rcvbuf()
            for k in ("min", "default", "max"):
                if int(_core.parse_size_bytes(rc["rcvbuf"][k])) < floor:
                    return _conn_key(c, f"rcvbuf.{k}"), (
                        f"`{rc['rcvbuf'][k]}` is below {floor} B, which the UML kernel (Linux {release}) refuses "
                        "in net.ipv4.tcp_rmem (`tcp_min_rcvbuf`; the host's 6.18 takes it)")
        if backend == "uml" and jitter is not None and (
            "host_jitter" not in c or _core.parse_duration_ns(rc["host_jitter"]) != jitter
        ):
            return _conn_key(c, "host_jitter"), ("the link emulators delay every frame of a path by one host_jitter; "
                                                 "when a connection writes it, every connection must write the same")
        cc = rc["cc"]
        if cc not in KERNEL_CC:
            return _conn_key(c, "cc"), f"upstream Linux has no `{cc}` congestion control; use one of {', '.join(KERNEL_CC)}"
        for k in ("cc_params", "sched_params"):
            if c.get(k):
                return _conn_key(c, k), "algorithm parameters are kernel-wide module settings and are not changed"
        written_tcp = c.get("tcp") or {}
        for k, linux in LINUX_RECOVERY.items():
            if k in written_tcp and written_tcp[k] != linux:
                return _conn_key(c, f"tcp.{k}"), (f"Linux recovers losses with RACK-TLP and PRR (tcp.recovery = "
                                                   f"\"rack_tlp\", tcp.prr = true); `{written_tcp[k]}` is not available")
        for k, (linux, why) in LINUX_TCP.items():
            if k in written_tcp and written_tcp[k] != linux:
                return _conn_key(c, f"tcp.{k}"), f"{why}; `{_show(written_tcp[k])}` is not available (need `{_show(linux)}`)"
        for k in written_tcp:
            if k not in _TCP_KEYS and k not in LINUX_RECOVERY and k not in LINUX_TCP:
                return _conn_key(c, f"tcp.{k}"), f"cannot be set per connection on Linux (supported: {', '.join(sorted(_TCP_KEYS))})"
        tcp = rc["tcp"]
        for k in ("idle_restart", "timestamps", "mtu", "metrics"):
            if k in tcp and sysctl_values.setdefault(k, tcp[k]) != tcp[k]:
                return _conn_key(c, f"tcp.{k}"), "is a per-namespace setting and must be the same for every connection"
        for k, sysctl in (("sndbuf", "tcp_wmem"), ("rcvbuf", "tcp_rmem")):
            buf = rc[k]
            if isinstance(buf, dict) and sysctl_values.setdefault(k, buf) != buf:
                return _conn_key(c, k), (f"an auto-tuned triple is the namespaces' net.ipv4.{sysctl} "
                                         "and must be the same for every connection (or give a fixed size)")
        if rc["kind"] == "mptcp":
            mptcp_sets.append(tuple(paths))
            if len(set(mptcp_sets)) > 1:
                return _conn_key(c, "paths"), "every MPTCP connection must use the same paths (the path manager is per namespace)"
    return None


def _show(v: Any) -> str:
    return json.dumps(v) if isinstance(v, bool) else str(v)


def buffer_triples(resolved: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The auto-tuned buffer triples of the scenario (``{"sndbuf": {...}, "rcvbuf": {...}}``,
    each present when a connection has one), in the resolved spelling; :func:`check_supported`
    ensures there is at most one of each."""
    out: dict[str, dict[str, str]] = {}
    for rc in resolved["connections"]:
        for k in ("sndbuf", "rcvbuf"):
            if isinstance(rc[k], dict):
                out.setdefault(k, rc[k])
    return out


def resolved_connections(sc: Scenario) -> list[dict[str, Any]]:
    """The resolved connections, with the keys the scenario wrote marked."""
    return [dict(rc, written=c) for c, rc in zip(sc.data.get("connections", []), sc.resolved["connections"], strict=True)]


