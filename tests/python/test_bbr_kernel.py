"""The simulator's BBR against the Linux kernel's, from stored kernel measurements (no kernel
needed, so this runs everywhere).

`tests/python/data/kernel-bbr.csv` holds runs of `scenarios/kernel/bbr-*.toml` on Linux's
`tcp_bbr` (taken with `scripts/measure-kernel-bbr.py`; each row names the kernel release, the
machine load, the command and the date): two sessions of 5 runs per scenario, the first on a
quiet machine (load ≤ 1.8), the second, which also recorded mean RTTs, while other builds ran
(load 3–5). The simulator runs each scenario as `mptcplab compare` does (`simulator_twin`: the
upstream `default` scheduler, RACK-TLP + PRR, the full receive window) with the runs' seeds,
and its median goodput must lie within 10 % of the kernel's median.

Why 10 %: the kernel backend forwards through a user-space link emulator on a shared 2-core
machine, so its goodput carries the emulator's timing error (its own tests allow 3 % on a
saturated link) on top of run-to-run spread; and the simulator is the same algorithm, not
the same code (see `cc::bbr`'s deviations: no TSO bursts, exact pacing timer, nanosecond
clocks). A larger difference would point at a modelling error, not at noise.

The queue is another matter. Without host timing noise the kernel's mean RTT was 18–55 %
above the simulator's (24.8 ms on the 20 ms paths). With the hosts' measured processing jitter
(`host_jitter`, 33 µs mean, which `simulator_twin` sets as the `linux` profile does) one path
agrees (29.3 ms kernel, 28.7 ms simulator); with two subflows the kernel still keeps a larger
queue (38 vs 31 ms on each equal path; 146 vs 96 ms on the heterogeneous pair's slow path),
a strict xfail for those two scenarios. Ablation: 0.5 ms of Pareto
jitter on the ACK direction of the simulated paths (ACKs bunched, order kept) raises the
simulator's mean RTT from 24.8 to 35.2–35.9 ms on the 20 ms paths (kernel: 26–38 ms) and
from 94.2 to 116.1 ms on the 80 ms path (kernel: 142–153 ms), goodput unchanged: BBR answers
ACK aggregation with a larger window (`bbr_update_ack_aggregation`) and bandwidth samples above
the bottleneck rate, so it keeps a standing queue. The emulated kernel network bunches ACKs
(user-space forwarding, a loaded host); the simulator's constant-rate links do not.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import mptcplab
from conftest import mptcplab as cli
from mptcplab.kernel.compare import linux_stack
from mptcplab.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "python" / "data" / "kernel-bbr.csv"
TOLERANCE = 0.10


def kernel_runs() -> dict[str, list[dict[str, str]]]:
    rows: dict[str, list[dict[str, str]]] = defaultdict(list)
    with DATA.open(newline="") as f:
        for row in csv.DictReader(f):
            rows[row["scenario"]].append(row)
    return rows


KERNEL = kernel_runs()


def test_the_kernel_data_covers_every_bbr_scenario_with_5_runs() -> None:
    scenarios = sorted(p.stem for p in (ROOT / "scenarios" / "kernel").glob("bbr-*.toml"))
    assert sorted(KERNEL) == scenarios
    for name, rows in KERNEL.items():
        assert len(rows) >= 5, name
        assert all(r["kernel"] and r["command"].startswith("mptcplab run") and "--backend linux" in r["command"]
                   for r in rows), name


def simulate(name: str) -> list[dict[str, Any]]:
    """The simulator's summaries of scenario `name`, one per seed of the kernel runs."""
    twin = linux_stack(load_scenario(ROOT / "scenarios" / "kernel" / f"{name}.toml"))
    return [mptcplab.run(twin, seed=seed).summary for seed in sorted({int(r["seed"]) for r in KERNEL[name]})]


@pytest.mark.parametrize("name", sorted(KERNEL))
def test_simulated_bbr_goodput_is_within_10_percent_of_the_kernel_median(name: str) -> None:
    kernel = statistics.median(float(r["goodput_bps"]) for r in KERNEL[name])
    sim = statistics.median(s["connections"][0]["goodput_bps"] for s in simulate(name))
    assert abs(sim / kernel - 1) <= TOLERANCE, f"{name}: simulator {sim / 1e6:.2f} vs kernel {kernel / 1e6:.2f} Mbit/s"


RTT_FINDING = pytest.mark.xfail(
    strict=True,
    reason="finding: with two subflows the kernel runs BBR with a standing queue the simulator does not build "
    "(mean RTT 38 vs 31 ms on each equal path, 146 vs 96 ms on the heterogeneous pair's slow path, with the "
    "hosts' measured jitter); on one path they agree (29.3 vs 28.7 ms) (module docstring)",
)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=RTT_FINDING) if n != "bbr-single-path" else n for n in sorted(KERNEL)]
)
def test_simulated_bbr_mean_rtt_matches_the_kernel(name: str) -> None:
    rows = [r for r in KERNEL[name] if r["mean_rtt_ms"]]
    assert len(rows) >= 5
    kernel: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for item in r["mean_rtt_ms"].split(";"):
            path, ms = item.split("=")
            kernel[path].append(float(ms))
    sims = simulate(name)
    for path, values in kernel.items():
        sim = statistics.median(sf["mean_rtt_s"] * 1e3 for s in sims for sf in s["subflows"] if sf["path"] == path)
        k = statistics.median(values)
        assert abs(sim / k - 1) <= TOLERANCE, f"{name}/{path}: simulator {sim:.1f} ms vs kernel {k:.1f} ms"


def test_the_command_line_runs_bbr_on_the_simulator(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "kernel" / "bbr-equal-paths.toml"
    r = cli("run", str(scenario), "--set", "duration=3s", "--set", "output.warmup=1s", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["connections"][0]["goodput_bps"] > 0
    assert {sf["path"] for sf in s["subflows"]} == {"p1", "p2"}
