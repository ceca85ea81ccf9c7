"""A Linux-backend run killed with SIGKILL: its processes die with it at once (the link
emulators and both applications, through ``PR_SET_PDEATHSIG``), its namespaces and scratch
directory stay until the next run or :func:`mptcplab.kernel.cleanup.cleanup`, which removes
them and nothing else.

Needs root, MPTCP enabled and the emulator built (scripts/setup.sh); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mptcplab.errors import ConfigError, describe
from mptcplab.kernel import cleanup, netns
from mptcplab.kernel.backend import is_linkemu, linkemu_missing, scratch_dirs_of


def _unavailable() -> str | None:
    try:
        netns.check_environment()
    except netns.EnvironmentRefused as e:
        return str(e)
    return linkemu_missing()


pytestmark = pytest.mark.skipif(_unavailable() is not None, reason=str(_unavailable()))

# How long the processes of a killed run may take to go: the kernel sends the parent-death
# signal while it tears the parent down, and a SIGKILLed process exits within a scheduling
# tick or two; 2 s leaves a loaded machine's scheduler plenty.
DIE_WITHIN_S = 2.0


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _processes_of_run(run_pid: int) -> dict[int, bytes]:
    """The run's emulators (children of ``run_pid``) and applications (naming ``run_pid``)."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        cmd = _cmdline(int(d.name))
        argv = cmd.split(b"\0")
        if is_linkemu(cmd):
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == run_pid:
                found[int(d.name)] = cmd
        elif b"mptcplab.kernel.app" in argv:
            spec = json.loads(argv[argv.index(b"mptcplab.kernel.app") + 1])
            if spec.get("run_pid") == run_pid:
                found[int(d.name)] = cmd
    return found


def _alive(procs: dict[int, bytes]) -> dict[int, bytes]:
    """Those of ``procs`` still running (same command line: not a reused pid; not a zombie)."""
    out = {}
    for pid, cmd in procs.items():
        if _cmdline(pid) == cmd:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                out[pid] = cmd
    return out


def _namespaces_of(pid: int) -> list[str]:
    return [ns for ns in netns.our_namespaces() if ns.startswith(f"mplab-{pid}-")]


def _killed_run(tmp_path: Path) -> tuple[int, dict[int, bytes]]:
    """Starts a 30 s kernel run on the command line, waits until both applications are
    exchanging data, SIGKILLs it; returns its pid and its processes as they were."""
    sc = {
        "name": "killed", "duration": "30s",
        "paths": [{"name": "p", "rate": "10Mbit", "delay": "5ms", "queue": "100 packets"}],
        "connections": [{"name": "c", "kind": "mptcp", "stack": "linux", "paths": ["p"], "cc": "cubic",
                         "app": {"kind": "bulk"}}],
    }
    f = tmp_path / "killed.json"
    f.write_text(json.dumps(sc))
    p = subprocess.Popen([sys.executable, "-m", "mptcplab.cli", "run", str(f), "--backend", "linux"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        procs: dict[int, bytes] = {}
        # One emulator per path and direction pair (one here) and two applications.
        while time.monotonic() < deadline and len(procs) < 3:
            assert p.poll() is None, p.stderr.read() if p.stderr else ""
            time.sleep(0.1)
            procs = _processes_of_run(p.pid)
        assert len(procs) == 3, f"the run did not start its emulator and both applications: {procs}"
        time.sleep(1.0)  # mid-run: traffic flowing
    finally:
        p.kill()
        p.wait()
    return p.pid, procs


def test_a_killed_runs_processes_die_with_it_and_cleanup_removes_its_namespaces(tmp_path: Path) -> None:
    pid, procs = _killed_run(tmp_path)
    killed_at = time.monotonic()
    while _alive(procs) and time.monotonic() < killed_at + DIE_WITHIN_S:
        time.sleep(0.05)
    left = _alive(procs)
    print(f"run {pid}: {len(procs)} processes, all gone {time.monotonic() - killed_at:.3f} s after the SIGKILL")
    assert not left, f"alive {DIE_WITHIN_S} s after the run's SIGKILL: {left}"

    namespaces = _namespaces_of(pid)
    assert len(namespaces) == 3, "SIGKILL cannot clean up: the run's namespaces should still be there"
    assert scratch_dirs_of(pid)
    removed = cleanup.cleanup()
    print("\n".join(removed))
    for ns in namespaces:
        assert f"namespace {ns}" in removed
    assert not _namespaces_of(pid)
    assert not scratch_dirs_of(pid)


def test_cleanup_leaves_live_runs_and_other_namespaces_alone() -> None:
    dead = _dead_pid()
    keep = [f"mplab-{os.getpid()}-999-c",  # a live run's (this process)
            "mplab-keep-1-c", f"mplab-{dead}-1-x", f"mplabx-{dead}-1-c"]  # not the backend's names
    stale = f"mplab-{dead}-1-s"
    for ns in [*keep, stale]:
        netns.run(["ip", "netns", "add", ns])
    try:
        removed = cleanup.cleanup()
        assert f"namespace {stale}" in removed
        here = set(os.listdir(netns.NETNS_DIR))
        assert stale not in here
        assert all(ns in here for ns in keep), sorted(here)
    finally:
        for ns in [*keep, stale]:
            netns.run(["ip", "netns", "del", ns], check=False)


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_cleanup_without_root_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused before anything is touched, as ``error: cleanup: <message>`` (the command line
    prints it and exits with code 2, as for every ConfigError)."""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    lines: list[str] = []
    with pytest.raises(ConfigError) as e:
        cleanup.cleanup_command(lines.append)
    assert describe(e.value) == "error: cleanup: removing network namespaces needs root (run it with sudo)"
    assert not lines


def test_cleanup_with_nothing_to_remove_says_so() -> None:
    lines: list[str] = []
    cleanup.cleanup_command(lines.append)
    assert lines == ["nothing to remove"] or all(line.startswith("removed ") for line in lines)
    lines.clear()
    cleanup.cleanup_command(lines.append)
    assert lines == ["nothing to remove"]
