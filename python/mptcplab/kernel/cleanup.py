"""``mptcplab cleanup``: removes what Linux-backend runs killed with SIGKILL left behind.

A run cleans up after itself on success, error, Ctrl-C and SIGTERM, and its processes die
with it (:mod:`mptcplab.kernel.lifetime`); after a SIGKILL its namespaces and scratch
directory remain until the next run, or until this command. Only the backend's own
leftovers of runs whose process is gone are touched, found by their unique names:

* namespaces ``mplab-<pid>-<run>-{c,s,l}`` (:data:`mptcplab.kernel.netns.PREFIX_RE`), with
  every process inside them (killed first, as a run's own cleanup does);
* application processes (``python -m mptcplab.kernel.app SPEC``) whose spec names a run
  process that is gone (none should survive their parent; this catches an older version's);
* scratch directories ``<tmp>/mptcplab-kernel-<pid>-...``: directories of this user only; a
  symbolic link or another user's entry of that name is left alone (and said so), never
  followed;
* tracefs instances ``mptcplab-<pid>-<n>`` of ``--trace-kernel`` runs
  (:func:`mptcplab.kernel.trace.cleanup_stale_instances`).

Namespaces, processes and files of live runs, and anything not named so, are left alone.
The command prints one line per thing it removed (``removed ...``) and per leftover it found
but left (``left ...: why``), and nothing else.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

from mptcplab.errors import config_error
from mptcplab.kernel import lifetime, netns, trace

__all__ = ["cleanup", "cleanup_command", "cleanup_outcomes", "orphan_apps"]

APP_ARGV = [b"-m", b"mptcplab.kernel.app"]


def orphan_apps() -> list[int]:
    """Application processes of runs whose process is gone."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        k = next((i for i in range(len(argv) - 2) if argv[i:i + 2] == APP_ARGV), None)
        if k is None:
            continue
        try:
            run_pid = int(json.loads(argv[k + 2])["run_pid"])
        except (ValueError, KeyError, TypeError):
            continue
        if run_pid != os.getpid() and lifetime.gone(run_pid):
            found.append(int(d.name))
    return sorted(found)


def cleanup_outcomes() -> list[tuple[bool, str]]:
    """Removes the leftovers of dead runs (root needed); returns, per leftover found, whether
    it was removed and what it is (with why it was left, when it was)."""
    from mptcplab.kernel.backend import cleanup_stale_scratch

    outcomes = []
    for pid in orphan_apps():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        outcomes.append((True, f"process {pid} (application of a dead run)"))
    outcomes += [(True, f"namespace {ns}") for ns in netns.cleanup_stale()]
    outcomes += [(True, f"tracefs instance {name}") for name in trace.cleanup_stale_instances()]
    for d, why in cleanup_stale_scratch():
        outcomes.append((why is None, f"directory {d}" if why is None else f"{d}: {why}"))
    return outcomes


def cleanup() -> list[str]:
    """Removes the leftovers of dead runs (root needed); returns one line per thing removed."""
    return [what for removed, what in cleanup_outcomes() if removed]


def cleanup_command(echo: Callable[[str], object] = print) -> None:
    """The command: removes, and prints what it removed. Raises
    :class:`~mptcplab.ConfigError` (exit code 2) when not run as root."""
    if os.geteuid() != 0:
        raise config_error("cleanup", "removing network namespaces needs root (run it with sudo)")
    outcomes = cleanup_outcomes()
    for removed, what in outcomes:
        echo(f"removed {what}" if removed else f"left {what}")
    if not outcomes:
        echo("nothing to remove")
