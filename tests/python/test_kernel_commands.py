"""The command line on the Linux backend: cleanup after SIGTERM and after SIGKILL, compare,
both backends' captures with one tshark command, a sweep on the kernel (one point at a time,
resumable) and plots of kernel runs.

Needs root, MPTCP enabled and the emulator built (scripts/setup.sh); skipped otherwise.
Runs take real time: scenarios here are a few seconds long.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Autouse: the kernel environment is checked before every test, and nothing may be left behind
# after the module.
from kernel_testing import _kernel_environment, _nothing_left_behind  # noqa: F401
from kernel_testing import KERNEL_SCENARIOS, PAYLOAD, _emulators_of, _namespaces_of, _ours, one_path
from mptcplab.kernel.backend import run_linux, scratch_dirs_of


def _start_cli_run(tmp_path: Path) -> subprocess.Popen[str]:
    sc = one_path("10Mbit", "5ms")
    sc["duration"] = "30s"
    f = tmp_path / "long.json"
    f.write_text(json.dumps(sc))
    p = subprocess.Popen([sys.executable, "-m", "mptcplab.cli", "run", str(f), "--backend", "linux"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(_emulators_of(p.pid)) < 1:
        time.sleep(0.1)
    assert _emulators_of(p.pid), "the run did not start its emulator"
    time.sleep(1.0)  # traffic flowing
    return p


def test_sigterm_stops_a_run_and_removes_everything(tmp_path: Path) -> None:
    p = _start_cli_run(tmp_path)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=20)
    assert p.returncode == 130
    assert not _namespaces_of(p.pid)
    assert not _emulators_of(p.pid)


def test_leftovers_of_a_killed_run_are_removed_by_the_next_run(tmp_path: Path) -> None:
    p = _start_cli_run(tmp_path)
    emus = _emulators_of(p.pid)
    p.kill()
    p.wait()
    time.sleep(0.3)
    assert _namespaces_of(p.pid), "SIGKILL cannot clean up: the namespaces should still be there"
    assert not any(Path(f"/proc/{e}").exists() and b"linkemu" in Path(f"/proc/{e}/cmdline").read_bytes() for e in emus)
    assert scratch_dirs_of(p.pid), "SIGKILL cannot clean up: the scratch directory should still be there"
    run_linux(one_path("10Mbit", "5ms") | {"duration": "2s"})
    assert not _namespaces_of(p.pid)
    assert not scratch_dirs_of(p.pid)
    assert not _ours()


@pytest.mark.parametrize("name", ["kernel-equal-paths", "kernel-heterogeneous", "kernel-rcvbuf-limited"])
def test_compare_prints_both_backends(name: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "mptcplab.cli", "compare", str(KERNEL_SCENARIOS / f"{name}.toml"), "--runs", "1", "--set", "duration=5s",
                          "--set", "output.warmup=1.5s", "--out", str(tmp_path)], capture_output=True, text=True)
    print(out.stdout)
    assert out.returncode == 0, out.stderr
    assert "simulator" in out.stdout and "linux" in out.stdout and "mptcp: goodput" in out.stdout
    res = json.loads((tmp_path / "compare.json").read_text())
    row = next(r for r in res["rows"] if r["metric"] == "mptcp: goodput (Mbit/s)")
    assert row["sim"]["median"] > 1 and row["linux"]["median"] > 1
    if name == "kernel-rcvbuf-limited":
        # Both backends feed the 200 ms path one 64 KiB burst per round trip at most (2.7 Mbit/s),
        # while the 20 ms path takes the rest of the 256 KB window each cycle: the slow path's
        # share stays below 1/3 (measured: 0.20 simulator, 0.12-0.15 kernel).
        for backend in ("sim", "linux"):
            share = next(r for r in res["rows"] if r["metric"] == "mptcp/slow: share")[backend]["median"]
            assert share < 1 / 3, (backend, share)
    assert (tmp_path / "compare.png").stat().st_size > 0
    assert not _ours()


def test_compare_rcvbuf_limited_goodput_agrees_within_a_factor_1_5(tmp_path: Path) -> None:
    """Goodput within a factor 1.5: the margin covers a loaded 2-core machine slowing the
    emulated links and a 5 s run. (Measured on the other two comparison scenarios, 3 runs of
    10 s: equal paths 37.9 vs 37.7 Mbit/s; heterogeneous 48.6 (37.2-50.9) vs 54.3 (50.2-57.0).)
    Here the pair depends on the window scale bounding only the header
    (docs/validation-findings.md, "The window scale bounds the header, not the window"):
    without it the simulator settles in 64 KB bursts (8.7 Mbit/s) where the kernel slices
    (host 15-20, UML 7.3.4 18.65 Mbit/s)."""
    out = subprocess.run([sys.executable, "-m", "mptcplab.cli", "compare", str(KERNEL_SCENARIOS / "kernel-rcvbuf-limited.toml"),
                          "--runs", "1", "--set", "duration=5s", "--set", "output.warmup=1.5s", "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    res = json.loads((tmp_path / "compare.json").read_text())
    row = next(r for r in res["rows"] if r["metric"] == "mptcp: goodput (Mbit/s)")
    assert 1 / 1.5 <= row["linux"]["median"] / row["sim"]["median"] <= 1.5, row
    assert not _ours()


def test_kernel_and_simulator_captures_open_with_the_same_tshark_command(tmp_path: Path) -> None:
    """Both backends' captures of the same scenario: tshark recognises the MPTCP connection
    (a `mptcp.stream` on the subflow's packets) and reports no malformed packets or errors,
    with one command line for both."""
    import shutil

    tshark = shutil.which("tshark")
    assert tshark is not None, "tshark is installed by the test setup"
    scenario = str(KERNEL_SCENARIOS / "kernel-equal-paths.toml")
    cli = Path(sys.executable).with_name("mptcplab")
    caps = {}
    for backend in ("sim", "linux"):
        out = tmp_path / backend
        extra = ["--pcap-per", "interface"] if backend == "sim" else []
        r = subprocess.run([str(cli), "run", scenario, "--backend", backend, "--set", "duration=3s",
                            "--set", "output.warmup=0s", "--pcap", str(out), *extra, "--json"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        caps[backend] = sorted(out.glob("*.pcap"))
        assert caps[backend], backend
    for backend, files in caps.items():
        for f in files:
            # Both backends serve on port 5201; its payload is decoded as plain data so that no
            # heuristic dissector misreads the (truncated) payload as another protocol.
            cmd = [tshark, "-r", str(f), "-d", "tcp.port==5201,data", "-o", "mptcp.analyze_mappings:TRUE",
                   "-o", "mptcp.intersubflows_retransmission:TRUE"]
            bad = subprocess.run([*cmd, "-Y", "_ws.malformed || _ws.expert.severity >= error"],
                                 capture_output=True, text=True, timeout=120)
            assert bad.returncode == 0 and bad.stdout.strip() == "", (backend, f.name, bad.stdout[:500])
            streams = subprocess.run([*cmd, "-Y", "tcp.len > 0", "-T", "fields", "-e", "mptcp.stream"],
                                     capture_output=True, text=True, timeout=120).stdout.split()
            assert streams and set(streams) == {"0"}, (backend, f.name, set(streams))


def test_sweep_on_the_kernel_runs_one_point_at_a_time_resumes_and_plots(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("mptcplab")
    scenario = tmp_path / "one.json"
    scenario.write_text(json.dumps(one_path("10Mbit", "5ms", queue="40 packets")
                                   | {"duration": "3s", "output": {"warmup": "1s"}}))
    out = tmp_path / "sweep"
    cmd = [str(cli), "sweep", str(scenario), "--backend", "linux", "--vary", "paths.p.rate=5Mbit,10Mbit",
           "--jobs", "2", "--out", str(out)]
    started = time.monotonic()
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    assert "one point at a time" in first.stderr and "--jobs 2 is ignored" in first.stderr
    import pandas as pd

    df = pd.read_csv(out / "results.csv")
    print(df[["paths.p.rate", "conn.tcp.goodput_bps", "wall_s"]])
    assert sorted(df["paths.p.rate"]) == ["10Mbit", "5Mbit"]
    # Sequential: the sweep took at least both runs' wall-clock durations (3 s each).
    assert took >= 6.0 and all(df["wall_s"] >= 3.0)
    for rate, goodput in zip(df["paths.p.rate"], df["conn.tcp.goodput_bps"], strict=True):
        capacity = float(rate.removesuffix("Mbit")) * 1e6 * PAYLOAD
        assert abs(goodput / capacity - 1) <= 0.05, (rate, goodput)
    assert json.loads((out / "sweep.json").read_text())["backend"] == "linux"
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    stamps = [r.stat().st_mtime_ns for r in runs]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "resuming: 2 of 2 runs already finished" in again.stdout
    assert [r.stat().st_mtime_ns for r in sorted((out / "runs").iterdir())] == stamps
    plotted = subprocess.run([str(cli), "plot", str(out)], capture_output=True, text=True, timeout=120)
    assert plotted.returncode == 0, plotted.stderr
    png, svg = (out / "plots" / f"conn.tcp.goodput_bps_vs_paths.p.rate.{ext}" for ext in ("png", "svg"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "goodput (Mbit/s)" in svg.read_text()
    assert not _ours()


def test_plot_of_a_kernel_run_directory(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("mptcplab")
    out = tmp_path / "run"
    r = subprocess.run([str(cli), "run", str(KERNEL_SCENARIOS / "kernel-equal-paths.toml"), "--backend", "linux",
                        "--set", "duration=3s", "--set", "output.warmup=1s", "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["backend"] == "linux"
    plotted = subprocess.run([str(cli), "plot", str(out)], capture_output=True, text=True, timeout=120)
    assert plotted.returncode == 0, plotted.stderr
    png, svg = out / "plots" / "timeseries.png", out / "plots" / "timeseries.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = svg.read_text()
    for label in ("cwnd (KB)", "srtt (ms)", "time (s)", "mptcp/p1", "mptcp/p2"):
        assert label in text, label
