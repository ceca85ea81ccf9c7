"""The Linux backend's measurement options, shared by ``run`` and ``validate``:
``--emulator-priority`` and ``--max-lateness`` (:mod:`mptcplab.kernel.emulator`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

PRIORITY_HELP = ("How the link emulators of --backend linux are scheduled: fifo, at real-time priority (SCHED_FIFO) "
                 "on the machine's last CPU, so that the stacks beside them cannot delay a frame (falls back with a "
                 "warning where the kernel refuses); normal, as any process (for experiments on what the emulator's "
                 "timing selects).")
LATENESS_HELP = ("With --backend linux: flag a run unreliable (and leave it out of verdicts) when an emulator's 99th "
                 "percentile of lateness exceeds this duration, e.g. 200us.")


def emulator_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--max-lateness", metavar="DURATION", help=LATENESS_HELP)(f)
    return click.option("--emulator-priority", type=click.Choice(["fifo", "normal"]), default="fifo", show_default=True,
                        help=PRIORITY_HELP)(f)


def parse_emulator_options(priority: str, max_lateness: str | None, backend: str) -> tuple[Any, float | None]:
    """The :class:`~mptcplab.kernel.emulator.EmulatorSched` and the bound (seconds) the options
    ask for; refuses a negative or unreadable bound, and either option off the Linux backend."""
    from mptcplab.errors import config_error
    from mptcplab.kernel.emulator import EmulatorSched, check_max_lateness
    from mptcplab.units import parse_duration

    if backend != "linux" and (priority != "fifo" or max_lateness is not None):
        option = "--emulator-priority" if priority != "fifo" else "--max-lateness"
        raise config_error(option, f"only with --backend linux (the {backend} backend has no real-time link emulator)")
    bound = None
    if max_lateness is not None:
        text = max_lateness.strip()
        if text.startswith("-"):
            raise config_error("--max-lateness", f"{text}: a lateness bound cannot be negative")
        try:
            bound = parse_duration(text)
        except ValueError as e:
            raise config_error("--max-lateness", f"{text}: {e}") from None
        check_max_lateness(bound)
    return (EmulatorSched() if priority == "fifo" else EmulatorSched.normal()), bound
