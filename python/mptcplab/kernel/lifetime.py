"""Processes of a Linux-backend run die with the run.

The run starts every process through ``ip netns exec NS CMD``, which (iproute2, outside its
batch mode) enters the namespace and executes ``CMD`` in place: the process the backend
forked becomes ``CMD``, and the backend is its parent. Two guards make it die with the
backend, even after a SIGKILL, which no cleanup code survives:

* the backend sets ``PR_SET_PDEATHSIG`` (SIGKILL) in the forked child before it executes
  ``ip`` (:func:`die_with_parent`, as ``preexec_fn``); the setting survives ``execve`` of
  a binary that is neither set-user-ID nor file-capable (``ip``, ``python``);
* a Python process of the run (the application, :mod:`mptcplab.kernel.app`) sets it again
  against its own parent at start and then checks that the run's process is still alive
  (:func:`guard`): this covers an ``ip`` that forks instead of executing (its child is not
  covered by the first guard) and a backend that died before the setting was made.

The link emulator sets ``PR_SET_PDEATHSIG`` itself (``crates/linkemu``).
"""

from __future__ import annotations

import ctypes
import signal
import sys

__all__ = ["die_with_parent", "gone", "guard"]

PR_SET_PDEATHSIG = 1

# Looked up once here, not in the forked child (where only async-signal-safe work belongs).
_prctl = ctypes.CDLL(None, use_errno=True).prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_prctl.restype = ctypes.c_int


def die_with_parent() -> None:
    """Asks the kernel to SIGKILL this process when the thread that forked it exits."""
    if _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (a zombie waiting to be reaped counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def guard(run_pid: int) -> None:
    """In a process of the run whose backend is ``run_pid``: dies with its parent from now
    on, and exits at once if the run is already gone (it died before this call)."""
    die_with_parent()
    if gone(run_pid):
        sys.exit(f"the run's process {run_pid} is gone")
