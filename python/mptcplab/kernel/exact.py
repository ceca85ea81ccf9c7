"""Settings the Linux backend turns into kernel values are carried over exactly, or refused.

The backend writes some of a scenario's settings into the kernel in the kernel's own units:
route attributes (``tcp.iw`` → ``initcwnd``, ``tcp.rto_min`` → ``rto_min``), sysctls
(``idle_restart``, ``timestamps``, the buffer triples) and socket options (a fixed
``sndbuf``/``rcvbuf``). Where the kernel would round or clamp a value, the run is refused with
the key named and what is allowed, never run with something else (docs/scenarios.md, "Values
are refused, never clamped"):

* ``tcp.rto_min``: ``ip route ... rto_min`` takes whole milliseconds (iproute2's
  ``get_time_rtt`` rounds a fraction up; ``RTAX_RTO_MIN`` is a u32 of ms), and the kernel
  keeps it in jiffies (``tcp_rto_min``: ``dst_metric_rtt`` = ``msecs_to_jiffies``, which
  rounds up to the next tick of 1/HZ s). A value is exact only when it is a whole number of
  milliseconds and of ticks: a multiple of ``lcm(1 ms, 1/HZ s)`` (4 ms at HZ = 250, 1 ms at
  HZ = 1000, 10 ms at HZ = 100 or 300). HZ is the kernel's ``CONFIG_HZ``
  (:func:`kernel_hz`).
* ``tcp.iw`` and ``tcp.rto_min`` are attributes of every path's routes, shared by all
  connections: when a connection writes one, every connection must resolve to the same value.
* ``tcp.mtu`` becomes the veth links' MTU (``ip link set mtu``), which a veth takes from 68 to
  65535 B (``ETH_MIN_MTU``..``ETH_MAX_MTU``); and the kernel sizes its segments from it: a
  full segment carries ``mtu`` − 40 B of IP and TCP headers − 12 B of timestamps (when on),
  which must be the scenario's ``tcp.mss`` (1448 B by default: ``mtu = 1500`` with
  timestamps, 1488 without), or the kernel would send other packets than the simulator.
* A fixed ``sndbuf``/``rcvbuf`` (``SO_SNDBUFFORCE``/``SO_RCVBUFFORCE``): the kernel stores
  twice the value, but at least its minimum (``SOCK_MIN_SNDBUF``/``SOCK_MIN_RCVBUF``, about
  4.5 KiB and 2.3 KiB) and at most ``INT_MAX / 2`` before doubling (``sk_setsockopt``). The
  size is probed on a throwaway socket: exact when the kernel reports twice the value.

Exact without a check: ``tcp.iw`` (1..1000, stored as given; ``tcp_init_cwnd`` takes it as
long as it is not 0), the boolean sysctls, and the triples (integers of 1..INT_MAX,
already required by the scenario's validation, written as they are). Rates, delays, queues,
losses and jitter are not converted: the emulator runs the engine's own link model on the
scenario itself.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import socket
import time
from pathlib import Path
from typing import Any

from mptcplab import _core
from mptcplab.errors import config_error
from mptcplab.scenario import Scenario

__all__ = ["check_exact", "kernel_hz", "rto_min_route_ms", "rto_min_step_ns"]

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
#: HZ values Linux can be configured with (kernel/Kconfig.hz).
KNOWN_HZ = (100, 250, 300, 1000)
#: The route attributes the backend sets, and the scenario key each comes from.
ROUTE_KEYS = {"iw": "initcwnd", "rto_min": "rto_min"}
#: A veth's MTU range (ETH_MIN_MTU, ETH_MAX_MTU).
VETH_MTU = (68, 65535)
#: IPv4 + TCP headers, and the timestamps option as Linux pads it (RFC 7323: 10 B + 2 B NOPs).
HEADERS, TIMESTAMPS = 40, 12
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33
INT_MAX = 2**31 - 1


def _config_hz() -> int | None:
    """``CONFIG_HZ`` from the running kernel's configuration (``/proc/config.gz`` or
    ``/boot/config-<release>``), if either is there."""
    texts = []
    try:
        texts.append(gzip.decompress(Path("/proc/config.gz").read_bytes()).decode(errors="replace"))
    except OSError:
        pass
    try:
        texts.append(Path(f"/boot/config-{os.uname().release}").read_text(errors="replace"))
    except OSError:
        pass
    for text in texts:
        m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.M)
        if m:
            return int(m[1])
    return None


def _timer_list() -> tuple[int, int] | None:
    """(nanoseconds, jiffies) read together from ``/proc/timer_list``."""
    try:
        text = Path("/proc/timer_list").read_text(errors="replace")
    except OSError:
        return None
    now, jiffies = re.search(r"^now at (\d+) nsecs", text, re.M), re.search(r"^jiffies: (\d+)", text, re.M)
    return (int(now[1]), int(jiffies[1])) if now and jiffies else None


def _measured_hz() -> int | None:
    """HZ measured from ``/proc/timer_list`` over 0.2 s (one tick of error is 2 % at HZ = 250),
    when it is within 5 % of one of :data:`KNOWN_HZ`."""
    a = _timer_list()
    time.sleep(0.2)
    b = _timer_list()
    if a is None or b is None or b[0] <= a[0]:
        return None
    hz = (b[1] - a[1]) * NS_PER_S / (b[0] - a[0])
    best = min(KNOWN_HZ, key=lambda k: abs(k - hz))
    return best if abs(best - hz) <= 0.05 * best else None


_hz: list[int | None] = []


def kernel_hz() -> int | None:
    """The running kernel's tick rate (``CONFIG_HZ``), or None when it cannot be found."""
    if not _hz:
        _hz.append(_config_hz() or _measured_hz())
    return _hz[0]


def rto_min_step_ns(hz: int) -> int:
    """The smallest step between ``rto_min`` values the kernel keeps exactly: whole
    milliseconds (the route attribute) and whole ticks (1/HZ s), i.e. ``lcm(1 ms, 1/HZ s)``."""
    # v ns is whole ticks when v × HZ / 1e9 is an integer, i.e. when v is a multiple of
    # 1e9 / gcd(1e9, HZ) (the two reduced factors are coprime).
    return math.lcm(NS_PER_MS, NS_PER_S // math.gcd(NS_PER_S, hz))


def _fmt_ms(ns: int) -> str:
    return f"{ns // NS_PER_MS}ms"


def rto_min_route_ms(text: str, key: str, source: str | None, hz: int | None = None) -> int:
    """The ``rto_min`` route attribute (ms) for the scenario's ``tcp.rto_min`` ``text``;
    raises :class:`~mptcplab.ConfigError` at ``key`` when the kernel would not keep it exactly."""
    hz = kernel_hz() if hz is None else hz
    if hz is None:
        raise config_error(key, "cannot be set exactly: this kernel's tick rate (CONFIG_HZ) is unknown "
                           "(no /proc/config.gz, /boot/config-<release> or /proc/timer_list) (--backend linux)", source)
    ns = int(_core.parse_duration_ns(text))
    step = rto_min_step_ns(hz)
    if ns % step:
        lower, upper = ns // step * step, (ns // step + 1) * step
        nearest = f"{_fmt_ms(lower)} or {_fmt_ms(upper)}" if lower else _fmt_ms(upper)
        raise config_error(key, f"{text} would be rounded up: the kernel keeps rto_min in whole milliseconds (the "
                           f"route attribute) and whole ticks of 1/HZ s (HZ = {hz} here), so only multiples of "
                           f"{_fmt_ms(step)} are exact (nearest: {nearest}) (--backend linux)", source)
    return ns // NS_PER_MS


def _conn_key(c: dict[str, Any], k: str) -> str:
    return f"connections.{c.get('name', '?')}.{k}"


def _check_routes(sc: Scenario) -> None:
    written = sc.data.get("connections", [])
    resolved = sc.resolved["connections"]
    for k, attr in ROUTE_KEYS.items():
        if not any(k in (c.get("tcp") or {}) for c in written):
            continue
        first = resolved[0]["tcp"][k]
        for c, rc in zip(written, resolved, strict=True):
            if rc["tcp"][k] != first:
                raise config_error(_conn_key(c, f"tcp.{k}"), f"`{rc['tcp'][k]}` differs from `{first}`: it is the "
                                   f"route attribute `{attr}` of every path, the same for every connection "
                                   "(--backend linux)", sc.source)


def _check_segments(sc: Scenario) -> None:
    for c, rc in zip(sc.data.get("connections", []), sc.resolved["connections"], strict=True):
        tcp = rc["tcp"]
        mtu, mss = int(tcp["mtu"]), int(tcp["mss"])
        if not VETH_MTU[0] <= mtu <= VETH_MTU[1]:
            raise config_error(_conn_key(c, "tcp.mtu"), f"{mtu} B is outside the {VETH_MTU[0]}..{VETH_MTU[1]} B a veth link "
                               "takes (--backend linux)", sc.source)
        opts = TIMESTAMPS if tcp["timestamps"] else 0
        if mtu - HEADERS - opts != mss:
            want = mss + HEADERS + opts
            raise config_error(_conn_key(c, "tcp.mtu"), f"the kernel's segments would carry {mtu} - {HEADERS} B of headers"
                               f"{f' - {opts} B of timestamps' if opts else ''} = {mtu - HEADERS - opts} B, the "
                               f"simulator's tcp.mss = {mss} B: write tcp.mtu = {want} (--backend linux)", sc.source)


def _kept_buffer(opt: int, get: int, value: int) -> int:
    """What the kernel stores for a fixed buffer of ``value`` bytes (probed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, opt, min(value, INT_MAX))
        return s.getsockopt(socket.SOL_SOCKET, get)


def _check_buffers(sc: Scenario) -> None:
    probes = {"sndbuf": (SO_SNDBUFFORCE, socket.SO_SNDBUF), "rcvbuf": (SO_RCVBUFFORCE, socket.SO_RCVBUF)}
    for c, rc in zip(sc.data.get("connections", []), sc.resolved["connections"], strict=True):
        for k, (opt, get) in probes.items():
            if isinstance(rc[k], dict):
                continue
            value = int(_core.parse_size_bytes(rc[k]))
            if _kept_buffer(opt, get, value) == 2 * value:
                continue
            low = -(-_kept_buffer(opt, get, 1) // 2)
            high = _kept_buffer(opt, get, INT_MAX) // 2
            raise config_error(_conn_key(c, k), f"{value} B cannot be set exactly: this kernel stores a fixed buffer as "
                               f"twice the size, for sizes of {low} to {high} B only (--backend linux)", sc.source)


def check_exact(sc: Scenario) -> None:
    """Raises :class:`~mptcplab.ConfigError` for the first setting the kernel would not keep
    exactly (root needed for the buffer probe, as for the run)."""
    _check_routes(sc)
    _check_segments(sc)
    for c, rc in zip(sc.data.get("connections", []), sc.resolved["connections"], strict=True):
        if "rto_min" in (c.get("tcp") or {}):
            rto_min_route_ms(rc["tcp"]["rto_min"], _conn_key(c, "tcp.rto_min"), sc.source)
    _check_buffers(sc)
