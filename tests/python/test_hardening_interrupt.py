"""Issue 34, Ctrl-C beyond the simulator's ``run``: a Linux-backend run with captures leaves
no partial capture (its tcpdump files are written beside the target and moved into place only
when the run succeeded, as the simulator's are), and every command's interruption is the one
line ``interrupted`` with exit code 130 (click's own handling printed an empty line and
``aborted``).

The kernel test needs root and MPTCP, as the other Linux-backend tests do.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from kernel_testing import _kernel_environment, _nothing_left_behind  # noqa: F401
from kernel_testing import _namespaces_of, one_path
from test_hardening_engine import EXIT_BOUND_S


def _default_sigint() -> None:
    # A test runner started as a background job (`cmd &` in a script) has SIGINT ignored, and
    # an ignored SIGINT is inherited: Python would then never raise KeyboardInterrupt. The
    # command under test gets the default disposition, as in a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mptcplab.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)


def _interrupt_when(proc: subprocess.Popen[str], ready) -> tuple[float, str]:
    """Sends SIGINT once ``ready()`` holds; returns the seconds to exit and stderr."""
    deadline = time.monotonic() + 120

    def holds() -> bool:
        # The command renames folders into place while this looks at them: a folder that
        # vanished between listing and reading is "not yet".
        try:
            return bool(ready())
        except FileNotFoundError:
            return False

    while not holds():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    time.sleep(0.5)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return time.monotonic() - t0, err


def test_ctrl_c_during_a_kernel_run_with_captures_leaves_no_capture(tmp_path: Path) -> None:
    sc = one_path("10Mbit", "10ms")
    sc["duration"] = "60s"
    f = tmp_path / "sc.json"
    f.write_text(json.dumps(sc))
    caps = tmp_path / "deep" / "caps"
    proc = _start(tmp_path, "run", str(f), "--backend", "linux", "--pcap", str(caps))
    # Running once its namespaces exist (the captures start with the traffic).
    took, err = _interrupt_when(proc, lambda: bool(_namespaces_of(proc.pid)))
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted"], err
    # The namespaces are torn down before the process exits, so the bound is the kernel
    # backend's (seconds), not the simulator's; what matters here is what is left.
    assert took < 30, took
    assert not caps.exists() and not (tmp_path / "deep").exists(), sorted(p.name for p in tmp_path.rglob("*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sc.json"]


def test_ctrl_c_during_a_sweep_of_one_job_is_one_line(tmp_path: Path) -> None:
    sc = one_path("200Mbit", "10ms")
    sc["duration"] = "100000s"
    f = tmp_path / "sc.json"
    f.write_text(json.dumps(sc))
    out = tmp_path / "sw"
    proc = _start(tmp_path, "sweep", str(f), "--vary", "paths.p.delay=10ms,20ms", "--out", str(out))
    took, err = _interrupt_when(proc, lambda: (out / "sweep.json").exists())
    assert proc.returncode == 130, err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted"), err
    assert took < EXIT_BOUND_S, took


def test_ctrl_c_during_a_reproduction_is_one_line_and_keeps_its_runs(tmp_path: Path) -> None:
    # A reproduction's runs go through the sweep, whose interruption escaped as a traceback.
    out = tmp_path / "rep"
    proc = _start(tmp_path, "reproduce", "league", "--quick", "--out", str(out))
    took, err = _interrupt_when(proc, lambda: any((out / "league").rglob("runs/*.json")))
    assert proc.returncode == 130, err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    # "interrupted after N of M runs; ... kept in ..." within a sweep of its runs; a plain
    # "interrupted" if the signal came between two of its sweeps or while it drew.
    assert len(lines) == 1 and lines[0].startswith("interrupted"), err
    assert lines[0] == "interrupted" or "run the same command again" in lines[0], err
    assert took < EXIT_BOUND_S, took
