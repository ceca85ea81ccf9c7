"""``--trace-kernel``: the kernel's own tracepoints around a Linux-backend run, as time series.

A run with ``--trace-kernel`` records, in a tracefs instance of its own
(``/sys/kernel/tracing/instances/mptcplab-<pid>-<n>``), from the moment its applications are
started until they finish:

* ``tcp:tcp_probe`` (every segment a TCP socket of the run receives in the established state:
  the socket's ``snd_cwnd``, ``ssthresh``, ``snd_wnd``, ``srtt``, ``rcv_wnd``, ``snd_nxt``,
  ``snd_una``; ``ssthresh`` is the tracepoint's ``tcp_current_ssthresh(sk)``, which outside a
  window reduction is max(``snd_ssthresh``, ¾ ``snd_cwnd``), not ``snd_ssthresh`` itself),
  ``tcp:tcp_rcv_space_adjust`` (every read that may resize the receive buffer)
  and ``tcp:tcp_rcvbuf_grow`` (a read that grows it: ``rcvbuf``, ``rcv_ssthresh``,
  ``window_clamp``, ``rcv_wnd``, ``inq``, ``ooo_space``, the state *before* the growth);
  filtered in the kernel to the run's server ports (``5201 + k``);
* ``mptcp:mptcp_subflow_get_send`` (the default scheduler's inputs: one event per subflow of
  the connection at every scheduling call), ``mptcp:mptcp_sendmsg_frag`` (every DSS mapping
  written, which tells which subflow the call picked) and ``mptcp:ack_update_msk`` (every
  DATA_ACK: the connection's ``snd_una`` and window end). These events carry no socket,
  port or namespace (Linux 6.18, ``include/trace/events/mptcp.h``): they are the run's as long
  as it is the only MPTCP traffic on the host.

The trace clock is ``mono`` (``CLOCK_MONOTONIC``, the clock of ``time.monotonic()``), so
times are taken from the run's time origin ``t0`` as the simulator's are. The ``uml``
backend's kernel offers :data:`UML_CLOCK`, the same clock read at no cost in virtual time
(``python/mptcplab/kernel/uml/trace-clock.patch``), and is traced with it: with ``mono`` each
event fired in process context would advance its virtual clock by 256 ns and move the run. Lost events (a
per-CPU ring buffer that overflowed) are counted from each CPU's ``stats`` and reported in
the summary (``kernel_trace.lost_events``, ``complete``), as a capture that dropped packets.

The instance is removed when the run ends, fails or is interrupted; one left by a killed run
is removed by the next run (and by ``mptcplab cleanup``). tracefs is mounted at
``/sys/kernel/tracing`` when it is not mounted anywhere. :mod:`mptcplab.kernel.trace_tables`
turns the text into tables.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mptcplab.errors import config_error
from mptcplab.kernel.netns import _alive

__all__ = [
    "EVENTS", "INSTANCE_PREFIX", "KernelTrace", "Recording", "check_available", "cleanup_stale_instances",
    "recording", "recording_if", "tracefs_root", "warn_incomplete",
]

OPTION = "--trace-kernel"

#: Instances are ``mptcplab-<pid>-<n>``: the pid tells whether the run that made one is alive.
INSTANCE_PREFIX = "mptcplab-"
_INSTANCE_RE = re.compile(r"^mptcplab-(\d+)-\d+$")
_numbers = itertools.count(1)

#: The events recorded (``<group>/<event>``), and whether the kernel can filter them by port.
EVENTS = {
    "tcp/tcp_probe": True,
    "tcp/tcp_rcv_space_adjust": True,
    "tcp/tcp_rcvbuf_grow": True,
    "mptcp/mptcp_subflow_get_send": False,
    "mptcp/mptcp_sendmsg_frag": False,
    "mptcp/ack_update_msk": False,
}

#: The trace clock of the ``uml`` backend's kernel: ``mono`` without UML's 256 ns per reading.
UML_CLOCK = "um-mono-free"

#: Where tracefs is looked for (the first is where it is mounted when it is nowhere).
TRACEFS_PLACES = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))

#: Ring buffer per CPU: 2 MiB per second of the run, at least 16 MiB, at most 512 MiB. A
#: tcp_probe entry takes 144 bytes and a scheduler entry 40 in the buffer; a 20 Mbit/s
#: connection makes about 1 700 data segments and as many ACKs a second, each one
#: tcp_probe, and one to three scheduler calls per 64 KB: under 0.6 MiB a second. A run that
#: overflows it anyway says so (``lost_events``).
BUFFER_KB_PER_S = 2048
BUFFER_KB_MIN = 16 * 1024
BUFFER_KB_MAX = 512 * 1024

_live: set[Path] = set()


def _remove_live() -> None:
    for inst in list(_live):
        _remove_instance(inst)


atexit.register(_remove_live)


def tracefs_root(mount: bool = True) -> Path | None:
    """The directory where tracefs is mounted; with ``mount``, mounts it at
    ``/sys/kernel/tracing`` when it is mounted nowhere. None when there is none."""
    for p in TRACEFS_PLACES:
        if (p / "instances").is_dir():
            return p
    if not mount:
        return None
    target = TRACEFS_PLACES[0]
    if not target.is_dir():
        return None
    p = subprocess.run(["mount", "-t", "tracefs", "nodev", str(target)], check=False, capture_output=True, text=True)
    if p.returncode != 0 or not (target / "instances").is_dir():
        return None
    return target


def check_available(backend: str, source: str | None = None) -> Path | None:
    """The tracefs directory, or :class:`~mptcplab.ConfigError` naming ``--trace-kernel``
    (exit code 2) when this run cannot be traced: the simulator, not root, no tracefs (after
    trying to mount it), or a tracepoint this kernel lacks. For the ``uml`` backend, checked on
    the host, None, or the error when its kernel was built without event tracing (the checks
    above run inside the instance, where the run is root)."""
    if backend == "sim":
        raise config_error(OPTION, "traces the kernel's tracepoints; the simulator has no kernel (use --backend linux "
                           "or uml)", source)
    if backend == "uml":
        from mptcplab.kernel.uml.kernel import SETUP_COMMAND, find_kernel

        kernel = find_kernel()
        if kernel is not None and not kernel.has_option("CONFIG_EVENT_TRACING"):
            raise config_error(OPTION, f"the UML kernel {kernel.binary} is built without event tracing "
                               f"(CONFIG_EVENT_TRACING); build one with `{SETUP_COMMAND}`", source)
        return None
    if os.geteuid() != 0:
        raise config_error(OPTION, "tracing the kernel needs root (tracefs instances are root's)", source)
    root = tracefs_root()
    if root is None:
        raise config_error(OPTION, "this host has no tracefs (not mounted at /sys/kernel/tracing, and mounting "
                           "it failed: a kernel without CONFIG_TRACING?)", source)
    missing = [e for e in EVENTS if not (root / "events" / e).is_dir()]
    if missing:
        raise config_error(OPTION, f"this kernel has no tracepoint {missing[0].replace('/', ':')} "
                           "(the kernel the backend is validated on, Linux 6.18, has them all)", source)
    return root


def _remove_instance(inst: Path) -> bool:
    """Removes a tracefs instance (``rmdir``: the kernel frees its buffers and events);
    True when it is gone."""
    try:
        (inst / "tracing_on").write_text("0")
    except OSError:
        pass
    try:
        inst.rmdir()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    _live.discard(inst)
    return True


def cleanup_stale_instances() -> list[str]:
    """Removes the tracefs instances of runs whose process is gone; returns their names.
    Touches nothing when tracefs is not mounted or this user cannot write to it."""
    root = tracefs_root(mount=False)
    if root is None or not os.access(root / "instances", os.W_OK):
        return []
    removed = []
    for inst in sorted((root / "instances").iterdir()):
        m = _INSTANCE_RE.match(inst.name)
        if m and int(m[1]) != os.getpid() and not _alive(int(m[1])) and _remove_instance(inst):
            removed.append(inst.name)
    return removed


def port_filter(ports: list[int]) -> str:
    """A tracefs filter keeping the events of sockets on the run's server ports (either end)."""
    lo, hi = min(ports), max(ports)
    return f"(sport >= {lo} && sport <= {hi}) || (dport >= {lo} && dport <= {hi})"


def _stats(inst: Path) -> list[dict[str, int]]:
    """Per CPU: ``entries``, ``overrun`` (events overwritten), ``dropped`` (events refused),
    ``commit_overrun``."""
    out = []
    for cpu in sorted((inst / "per_cpu").glob("cpu*"), key=lambda p: int(p.name[3:])):
        vals: dict[str, int] = {"cpu": int(cpu.name[3:])}
        for line in (cpu / "stats").read_text().splitlines():
            k, _, v = line.partition(":")
            key = {"entries": "entries", "overrun": "overrun", "commit overrun": "commit_overrun",
                   "dropped events": "dropped"}.get(k.strip())
            if key:
                vals[key] = int(v.strip())
        out.append(vals)
    return out


@dataclass
class KernelTrace:
    """What a traced run recorded: ``summary`` (the run summary's ``kernel_trace``) and
    ``tables`` (name → DataFrame, :mod:`mptcplab.kernel.trace_tables`)."""

    summary: dict[str, Any]
    tables: dict[str, Any] = field(default_factory=dict)

    def write(self, folder: Path) -> None:
        """Writes ``<name>.parquet`` per table and ``trace.json`` (the summary) into ``folder``."""
        folder.mkdir()
        for name, df in self.tables.items():
            try:
                df.to_parquet(folder / f"{name}.parquet", index=False)
            except OSError as e:
                e.filename = str(folder / f"{name}.parquet")
                raise
        (folder / "trace.json").write_text(json.dumps(self.summary, indent=2) + "\n")


@dataclass
class Recording:
    """A live tracefs instance (see :func:`recording`)."""

    instance: Path
    ports: list[int]
    buffer_kb: int
    other_runs: list[str]
    clock: str = "mono"

    def collect(self, sc: Any, t0: float, outputs: list[tuple[dict[str, Any], dict[str, Any]]]) -> KernelTrace:
        """Stops the recording and reads it: the tables with times from ``t0`` (the run's
        ``time.monotonic()`` origin). ``outputs`` are the applications' reports (server,
        client) per connection: the client ports of their subflows and the sender's final
        ``MPTCP_INFO`` name the run's own sockets and data sequence numbers."""
        from mptcplab.kernel import trace_tables

        conns = sc.resolved["connections"]
        # The host that sends each connection's data: the server for a download.
        sender_hosts = {k: "server" if c["direction"] == "download" else "client" for k, c in enumerate(conns)}
        ports = {p for pair in outputs for out in pair for p in out.get("client_ports", [])}
        dsns = [pair[0 if sender_hosts[k] == "server" else 1].get("mptcp", {}).get("write_seq")
                for k, pair in enumerate(outputs) if conns[k]["kind"] == "mptcp"]
        own = trace_tables.Own(client_ports=ports, dsn_refs=[d for d in dsns if d])

        (self.instance / "tracing_on").write_text("0")
        stats = _stats(self.instance)
        with open(self.instance / "trace", encoding="utf-8", errors="replace") as f:
            tables, counts, notes = trace_tables.parse(f, sc, t0, sender_hosts, own)
        lost_by_cpu = [s.get("overrun", 0) + s.get("dropped", 0) for s in stats]
        lost = sum(lost_by_cpu)
        if self.other_runs:
            notes.append(f"other Linux-backend runs were live during this one ({', '.join(self.other_runs)}): "
                         "their events on the same ports, and any MPTCP event, may be mixed in")
        summary = {
            "instance": self.instance.name,
            "clock": self.clock,
            "t0_monotonic_s": t0,
            "events": counts,
            "filter": port_filter(self.ports),
            "buffer_kb_per_cpu": self.buffer_kb,
            "lost_events": lost,
            "lost_by_cpu": lost_by_cpu,
            "complete": lost == 0,
            "notes": notes,
        }
        return KernelTrace(summary, tables)


def _clock(inst: Path) -> str:
    """``mono``, or :data:`UML_CLOCK` where the kernel offers it (the file lists the clocks)."""
    return UML_CLOCK if UML_CLOCK in (inst / "trace_clock").read_text().replace("[", " ").replace("]", " ").split() \
        else "mono"


def _buffer_kb(duration_s: float) -> int:
    return int(min(BUFFER_KB_MAX, max(BUFFER_KB_MIN, duration_s * BUFFER_KB_PER_S)))


def _other_runs() -> list[str]:
    from mptcplab.kernel import netns

    own = str(os.getpid())
    return sorted({ns.rsplit("-", 1)[0] for ns in netns.our_namespaces()
                   if (m := netns.PREFIX_RE.match(ns)) and m[1] != own and _alive(int(m[1]))})


def warn_incomplete(summary: dict[str, Any], source: str | None) -> None:
    """One line on stderr when the trace lost events."""
    if summary.get("complete", True):
        return
    where = f"{source}: " if source else ""
    print(f"warning: {where}kernel trace: {summary['lost_events']} events were lost (a per-CPU trace buffer of "
          f"{summary['buffer_kb_per_cpu']} KiB overflowed); the trace is incomplete (summary: "
          "kernel_trace.complete = false)", file=sys.stderr, flush=True)


@contextmanager
def recording_if(root: Path | None, sc: Any, server_port: int, duration_s: float) -> Iterator[Recording | None]:
    """:func:`recording` of the run's ports when ``root`` (tracefs) is given, else nothing."""
    if root is None:
        yield None
        return
    ports = [server_port + k for k in range(max(1, len(sc.resolved["connections"])))]
    mptcp = any(c["kind"] == "mptcp" for c in sc.resolved["connections"])
    with recording(root, ports, duration_s, mptcp) as rec:
        yield rec


@contextmanager
def recording(root: Path, ports: list[int], duration_s: float, mptcp: bool = True) -> Iterator[Recording]:
    """A tracefs instance recording :data:`EVENTS` (the TCP ones filtered to ``ports``, the
    MPTCP ones only with ``mptcp``) from now on, removed when the block ends, however it ends."""
    cleanup_stale_instances()
    inst = root / "instances" / f"{INSTANCE_PREFIX}{os.getpid()}-{next(_numbers)}"
    inst.mkdir()
    _live.add(inst)
    try:
        (inst / "tracing_on").write_text("0")
        clock = _clock(inst)
        (inst / "trace_clock").write_text(clock)
        kb = _buffer_kb(duration_s)
        (inst / "buffer_size_kb").write_text(str(kb))
        # The oldest events are kept and the newest refused when a buffer is full, so that a
        # run that lost events still has its start (and counts the loss as "dropped events").
        (inst / "options" / "overwrite").write_text("0")
        for event, by_port in EVENTS.items():
            if not by_port and not mptcp:
                continue  # no MPTCP connection: none of these events is the run's
            d = inst / "events" / event
            if by_port:
                (d / "filter").write_text(port_filter(ports))
            (d / "enable").write_text("1")
        rec = Recording(inst, ports, kb, _other_runs(), clock)
        (inst / "tracing_on").write_text("1")
        yield rec
    finally:
        _remove_instance(inst)
