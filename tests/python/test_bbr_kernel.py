"""The simulator's BBR against the Linux kernel's, from stored kernel measurements (no kernel
needed, so this runs everywhere).

`tests/python/data/kernel-bbr.csv` holds 5 runs per scenario of `scenarios/kernel/bbr-*.toml`
on Linux's `tcp_bbr` (taken with `scripts/measure-kernel-bbr.py`; each row names the kernel
release, the machine load, the command and the date). The simulator runs each scenario as
`mptcplab compare` does (`simulator_twin`: the upstream `default` scheduler, RACK-TLP + PRR,
the full receive window), with the same 5 seeds, and its median goodput must lie within
10 % of the kernel's median.

Why 10 %: the kernel backend forwards through a user-space link emulator on a shared 2-core
machine, so its goodput carries the emulator's timing error (its own tests allow 3 % on a
saturated link) on top of run-to-run spread; and the simulator is the same algorithm, not
the same code (see `cc::bbr`'s deviations: no TSO bursts, exact pacing timer, nanosecond
clocks). A larger difference would point at a modelling error, not at noise.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

import mptcplab
from conftest import mptcplab as cli
from mptcplab.kernel.compare import simulator_twin
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


@pytest.mark.parametrize("name", sorted(KERNEL))
def test_simulated_bbr_goodput_is_within_10_percent_of_the_kernel_median(name: str) -> None:
    sc = load_scenario(ROOT / "scenarios" / "kernel" / f"{name}.toml")
    twin = simulator_twin(sc)
    rows = KERNEL[name]
    kernel = statistics.median(float(r["goodput_bps"]) for r in rows)
    sims = [mptcplab.run(twin, seed=int(r["seed"])).summary["connections"][0]["goodput_bps"] for r in rows]
    sim = statistics.median(sims)
    assert abs(sim / kernel - 1) <= TOLERANCE, f"{name}: simulator {sim / 1e6:.2f} vs kernel {kernel / 1e6:.2f} Mbit/s"


def test_the_command_line_runs_bbr_on_the_simulator(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "kernel" / "bbr-equal-paths.toml"
    r = cli("run", str(scenario), "--set", "duration=3s", "--set", "output.warmup=1s", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["connections"][0]["goodput_bps"] > 0
    assert {sf["path"] for sf in s["subflows"]} == {"p1", "p2"}
