"""What the Linux backend's tests share (test_kernel_*.py): the environment check and the
check that nothing is left behind (autouse fixtures: import them into a test module), the
comparison scenarios, a one-path scenario, and finders of a run's namespaces and emulators.

Needs root, MPTCP enabled and the emulator built (scripts/setup.sh).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mptcplab.kernel import netns
from mptcplab.kernel.backend import is_linkemu, linkemu_missing, scratch_dirs_of


def _available() -> str | None:
    try:
        netns.check_environment()
    except netns.EnvironmentRefused as e:
        return str(e)
    return linkemu_missing()


@pytest.fixture(autouse=True)
def _kernel_environment() -> None:
    # CI runs as root on a kernel with MPTCP and builds the emulator in the setup: a missing
    # piece is a failure, not a reason to skip.
    problem = _available()
    assert problem is None, problem


@pytest.fixture(autouse=True, scope="module")
def _nothing_left_behind() -> Iterator[None]:
    """After every test module that imports it: no namespace (hence no veth), emulator or scratch
    directory of this process remains (a killed run's are the next run's to remove, which
    the SIGKILL test checks)."""
    yield
    assert not _namespaces_of(os.getpid()), _namespaces_of(os.getpid())
    assert not _emulators_of(os.getpid())
    assert not scratch_dirs_of(os.getpid())


KERNEL_SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "kernel"
PAYLOAD = 1448 / 1500  # payload per 1500-byte IP packet (MSS 1448 with timestamps)


def one_path(rate: str, delay: str, queue: str = "200 packets", **extra: Any) -> dict[str, Any]:
    path = {"name": "p", "rate": rate, "delay": delay, "queue": queue, **extra}
    return {
        "name": "kernel-test", "duration": "5s", "paths": [path],
        "connections": [{"name": "tcp", "kind": "tcp", "stack": "linux", "paths": ["p"], "cc": "cubic", "app": {"kind": "bulk"}}],
        "output": {"warmup": "1.5s"},
    }


def _ours() -> list[str]:
    """Namespaces of the mplab- family left by this process or by dead processes."""
    left = []
    for ns in netns.our_namespaces():
        m = netns.PREFIX_RE.match(ns)
        assert m is not None
        pid = int(m[1])
        if pid == os.getpid() or not Path(f"/proc/{pid}").exists():
            left.append(ns)
    return left


def _emulators_of(pid: int) -> list[int]:
    """Emulator processes whose parent is ``pid``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if is_linkemu(cmd) and ppid == pid:
            found.append(int(d.name))
    return found


def _namespaces_of(pid: int) -> list[str]:
    return [ns for ns in netns.our_namespaces() if ns.startswith(f"mplab-{pid}-")]
