"""Measures the `uml` backend's determinism: grid scenarios run several times on the UML kernel
in virtual time, idle and beside CPU-heavy processes, each run's summary hashed (SHA-256 of the
summary JSON, which holds every number the run reports). Appends one CSV row per run to
scenarios/validation/uml-determinism.csv.

Usage: .venv/bin/python scripts/uml-determinism.py [N_SCENARIOS]   (default 10)

The scenarios are the first N of the grid that the backend runs, in name order, covering its
regimes: one per regime prefix first (bbr, download, hetero, loss, periodic, rcvbuf, sndbuf,
tcp, trace), then the rest in order. Each scenario runs three times with its own seed: twice with the machine as
it is, once while one busy-looping process per core runs (started just before the run,
killed after it). A row holds the summary's hash, the goodput, the one-minute load average at
the start, whether the hog ran, the UML kernel (release, source version, configuration hash),
the command and the date (UTC).
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRID = ROOT / "scenarios" / "validation"
OUT = GRID / "uml-determinism.csv"
FIELDS = ["scenario", "run", "seed", "hog", "summary_sha256", "goodput_bps", "kernel", "load_1min", "wall_s", "command",
          "date_utc"]


def pick(n: int) -> list[Path]:
    from mptcplab.errors import ConfigError
    from mptcplab.kernel.support import check_supported
    from mptcplab.validation.grid import load_grid_scenario

    files = []
    for f in sorted(GRID.glob("*.toml")):
        try:
            check_supported(load_grid_scenario(f), "uml")
        except ConfigError:  # a scenario the backend refuses is not picked
            continue
        files.append(f)
    first: dict[str, Path] = {}
    for f in files:
        first.setdefault(f.stem.split("-")[0], f)
    chosen = list(first.values())
    chosen += [f for f in files if f not in chosen]
    return sorted(chosen[:n])


def main() -> int:
    from mptcplab.errors import ConfigError
    from mptcplab.kernel.support import check_supported
    from mptcplab.kernel.uml.backend import run_uml
    from mptcplab.kernel.uml.kernel import find_kernel
    from mptcplab.validation.grid import load_grid_scenario

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    kernel = find_kernel()
    if kernel is None:
        print("error: the UML kernel is not built (bash scripts/setup-uml.sh)", file=sys.stderr)
        return 2
    label = kernel.label
    new_file = not OUT.exists()
    # Resumable: a scenario with rows already is not run again.
    done = set() if new_file else {r["scenario"] for r in csv.DictReader(OUT.open())}
    with OUT.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new_file:
            w.writeheader()
        for f in pick(n):
            sc = load_grid_scenario(f)
            if sc.name in done:
                continue
            try:
                check_supported(sc, "uml")
            except ConfigError as e:
                print(f"{sc.name}: not run ({e})", file=sys.stderr)
                continue
            for run, hog in ((0, False), (1, False), (2, True)):
                hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)] \
                    if hog else []
                load = os.getloadavg()[0]
                t = time.monotonic()
                try:
                    res = run_uml(sc, seed=sc.seed)
                finally:
                    for p in hogs:
                        p.kill()
                        p.wait()
                wall = time.monotonic() - t
                w.writerow({
                    "scenario": sc.name, "run": run, "seed": sc.seed, "hog": "yes" if hog else "no",
                    "summary_sha256": hashlib.sha256(res.summary_json.encode()).hexdigest(),
                    "goodput_bps": res.summary["connections"][0]["goodput_bps"], "kernel": label,
                    "load_1min": f"{load:.2f}", "wall_s": f"{wall:.1f}",
                    "command": f"mptcplab run {f.relative_to(ROOT)} --backend uml --seed {sc.seed} --json",
                    "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                })
                fh.flush()
                print(f"{sc.name} run {run} hog={hog}: {wall:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
