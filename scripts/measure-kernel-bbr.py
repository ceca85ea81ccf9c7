"""Measures the BBR comparison scenarios (scenarios/kernel/bbr-*.toml) on this machine's Linux
kernel and appends one CSV row per run to tests/python/data/kernel-bbr.csv (root needed).

Usage: .venv/bin/python scripts/measure-kernel-bbr.py [RUNS]   (default 5)

Run k of a scenario uses seed = scenario seed + k, as `mptcplab compare` does. Each row holds
the connection's goodput after warm-up, every subflow's share and mean RTT, the kernel release
(`uname -r`), the one-minute load average when the run started (the link emulator runs in
user space, so a loaded machine can distort it), the exact command and the date (UTC).
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios" / "kernel").glob("bbr-*.toml"))
OUT = ROOT / "tests" / "python" / "data" / "kernel-bbr.csv"
FIELDS = ["scenario", "run", "seed", "goodput_bps", "shares", "mean_rtt_ms", "kernel", "load_1min", "command", "date_utc"]


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    new_file = not OUT.exists()
    with OUT.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new_file:
            w.writeheader()
        for path in SCENARIOS:
            seed0 = tomllib.loads(path.read_text())["seed"]
            for k in range(runs):
                rel = path.relative_to(ROOT)
                cmd = ["mptcplab", "run", str(rel), "--backend", "linux", "--seed", str(seed0 + k), "--json"]
                load = os.getloadavg()[0]
                date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                exe = [str(ROOT / ".venv" / "bin" / "mptcplab"), *cmd[1:]]
                r = subprocess.run(exe, cwd=ROOT, capture_output=True, text=True, check=False)
                if r.returncode != 0:
                    print(f"error: {rel}: run {k}: {r.stderr.strip()}", file=sys.stderr)
                    return 1
                s = json.loads(r.stdout)
                conn = s["connections"][0]
                shares = ";".join(f"{sf['path']}={sf['share']:.4f}" for sf in s["subflows"])
                rtts = ";".join(f"{sf['path']}={sf['mean_rtt_s'] * 1e3:.3f}" for sf in s["subflows"])
                w.writerow({
                    "scenario": path.stem, "run": k, "seed": seed0 + k, "goodput_bps": round(conn["goodput_bps"]),
                    "shares": shares, "mean_rtt_ms": rtts, "kernel": platform.release(), "load_1min": f"{load:.2f}",
                    "command": " ".join(cmd), "date_utc": date,
                })
                f.flush()
                print(f"{path.stem} run {k}: {conn['goodput_bps'] / 1e6:.2f} Mbit/s ({shares}), load {load:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
