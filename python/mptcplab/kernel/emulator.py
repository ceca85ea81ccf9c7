"""How the Linux backend's link emulators are scheduled, what the host was doing meanwhile,
and the lateness bound a run is judged by.

**Scheduling** (:class:`EmulatorSched`). The emulators share a two-core machine with two
kernel stacks and two applications. At a normal priority a frame waits whenever the
scheduler gives the CPU to one of those, for up to a time slice (milliseconds), which is
longer than a packet's time on the wire: the emulated link stops being the scenario's link,
and Linux's operating point on buffer-bound paths depends on such timing. By default every
emulator runs at ``SCHED_FIFO`` priority :data:`FIFO_PRIORITY` and on the machine's last CPU
(``sched(7)``, ``sched_setaffinity(2)``; ``crates/linkemu/src/sched.rs``): a runnable emulator
then preempts every normal task at once. 49 is just below the kernel's threaded interrupt
handlers (50), so the device work the frames need is never held back by an emulator; the
kernel's real-time throttling (95 % of each second by default) bounds what a runaway emulator
could take. A request the kernel refuses (no ``CAP_SYS_NICE``, a container without real-time
runtime) falls back to the normal priority and the run's ``emulator.sched`` says why.
``EmulatorSched.normal()`` is the other setting, for experiments on what the emulator's
timing selects.

**Host load** (:class:`HostLoad`): the 1-min load average at the run's start and the
fraction of the machine's CPU time spent busy (``/proc/stat``: all but idle and iowait)
between the run's start and end, including the run's own stacks and applications.

**Lateness bound**: a run whose emulators' 99th percentile of lateness exceeds a declared
bound (``--max-lateness``) is flagged unreliable and left out of verdicts, with the reason;
without it, the bound is :data:`mptcplab.kernel.summary.LATE_FRACTION`'s rule (see there).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FIFO_PRIORITY", "EmulatorSched", "HostLoad", "check_max_lateness"]

FIFO_PRIORITY = 49


@dataclass(frozen=True)
class EmulatorSched:
    """The emulators' scheduling: a SCHED_FIFO priority (None: normal) and a CPU (None: any)."""

    fifo: int | None = FIFO_PRIORITY
    cpu: int | None = -1
    #: Nanoseconds before each deadline the emulator polls instead of sleeping (None: its default).
    spin_ns: int | None = None

    @staticmethod
    def normal() -> EmulatorSched:
        return EmulatorSched(fifo=None, cpu=None)

    def args(self) -> list[str]:
        """The emulator's command-line arguments (a CPU of -1 is the machine's last)."""
        out = []
        if self.fifo is not None:
            out += ["--fifo", str(self.fifo)]
        if self.cpu is not None:
            cpu = self.cpu if self.cpu >= 0 else max(0, (os.cpu_count() or 1) - 1)
            out += ["--cpu", str(cpu)]
        if self.spin_ns is not None:
            out += ["--spin", str(self.spin_ns)]
        return out

    def label(self) -> str:
        return "normal" if self.fifo is None and self.cpu is None else \
            " ".join(x for x in (f"fifo{self.fifo}" if self.fifo else "", f"cpu{self.cpu}" if self.cpu is not None else "") if x)


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, or None where /proc/stat is unreadable."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    v = [int(x) for x in fields[:8]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def loadavg() -> str:
    """The 1-, 5- and 15-min load averages, as ``/proc/loadavg`` writes them ("" if unreadable)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


class HostLoad:
    """The host's load over a run: started at the run's start, read at its end."""

    def __init__(self) -> None:
        self.loadavg = loadavg()
        self._start = _cpu_times()

    def summary(self) -> dict[str, Any]:
        end = _cpu_times()
        busy = None
        if self._start and end and end[1] > self._start[1]:
            busy = round((end[0] - self._start[0]) / (end[1] - self._start[1]), 4)
        return {"loadavg": self.loadavg, "cpu_busy": busy, "cpus": os.cpu_count()}


def check_max_lateness(value: float | None, option: str = "--max-lateness") -> None:
    """Refuses a negative bound (one line naming the option)."""
    from mptcplab.errors import config_error

    if value is not None and not value >= 0:
        raise config_error(option, f"{value:g} s: a lateness bound cannot be negative")
