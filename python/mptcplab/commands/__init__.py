"""The ``mptcplab`` command line's commands, one module per group: ``run`` (run), ``sweep``
(sweep), ``plot`` (plot), ``scenarios`` (check, scenarios, presets), ``kernel`` (compare,
validate, cleanup) and ``reproduce`` (reproduce). :mod:`mptcplab.cli` adds them to the command
group and turns errors into one line; here what several commands share.
"""

from __future__ import annotations

from typing import Any

SET_HELP = (
    "Override a scenario value: KEY.PATH=VALUE. Lists are addressed by element name or index, "
    "e.g. paths.wifi.rate=10Mbit, connections.mptcp.cc=lia, paths.0.delay=5ms. Repeatable."
)


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
