"""Measures how fast each backend runs a two-path MPTCP scenario: simulated (or emulated)
seconds per second of wall time, for a total capacity of 10 Mbit/s, 100 Mbit/s and 1 Gbit/s.
Appends one CSV row per run to BENCHMARKS-uml.csv in the current directory (or the file given).

Usage: .venv/bin/python scripts/uml-throughput.py [OUT.csv] [ROUNDS]   (default 2 rounds)

The scenario: two paths of half the capacity each, 10 ms and 20 ms one way, each queue one
bandwidth-delay product of its path (at least 20 packets), one MPTCP connection (cubic, the
default scheduler, stack = "linux") bulk for 4 s (1 s at 1 Gbit/s). Each round runs every capacity on the
simulator, the UML backend and (as root) the host's kernel backend, in turns, so that a change
of the machine's speed during the measurement touches all of them alike. A row holds the
backend, the capacity, the wall time of the whole run (the UML instance's boot and the
namespaces' set-up included), the goodput, the one-minute load at the start and the date.
"""

from __future__ import annotations

import csv
import datetime
import os
import sys
import time
from pathlib import Path

#: Seconds simulated per capacity (shorter at 1 Gbit/s, where each simulated second costs most).
DURATION_S = {10e6: 4.0, 100e6: 4.0, 1e9: 1.0}
FIELDS = ["backend", "capacity_bps", "duration_s", "wall_s", "sim_s_per_wall_s", "goodput_bps", "load_1min", "date_utc",
          "note"]


def scenario(capacity_bps: float) -> dict:
    duration = DURATION_S[capacity_bps]
    paths = []
    for name, delay_ms in (("a", 10), ("b", 20)):
        rate = capacity_bps / 2
        bdp_packets = max(20, round(rate * 2 * delay_ms / 1e3 / 8 / 1500))
        paths.append({"name": name, "rate": f"{rate / 1e6:g}Mbit", "delay": f"{delay_ms}ms", "queue": f"{bdp_packets} packets"})
    return {
        "name": f"throughput-{capacity_bps / 1e6:g}mbit", "duration": f"{duration:g}s", "paths": paths,
        "connections": [{"name": "mptcp", "kind": "mptcp", "stack": "linux", "paths": ["a", "b"], "cc": "cubic",
                         "app": {"kind": "bulk"}}],
        "output": {"warmup": f"{duration / 4:g}s"},
    }


def main() -> int:
    from mptcplab.kernel.uml.backend import run_uml
    from mptcplab.runner import run

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("BENCHMARKS-uml.csv")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    backends = {"sim": lambda sc: run(sc), "uml": lambda sc: run_uml(sc)}
    if os.geteuid() == 0:
        from mptcplab.kernel.backend import run_linux

        backends["linux"] = lambda sc: run_linux(sc)
    new_file = not out.exists()
    with out.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new_file:
            w.writeheader()
        for _ in range(rounds):
            for capacity in (10e6, 100e6, 1e9):
                for name, fn in backends.items():
                    load = os.getloadavg()[0]
                    t = time.monotonic()
                    res = fn(scenario(capacity))
                    wall = time.monotonic() - t
                    emu = res.summary.get("emulator") or {}
                    note = "" if emu.get("reliable", True) else f"emulator unreliable: {emu.get('reason')}"
                    w.writerow({
                        "backend": name, "capacity_bps": int(capacity), "duration_s": DURATION_S[capacity],
                        "wall_s": f"{wall:.2f}", "sim_s_per_wall_s": f"{DURATION_S[capacity] / wall:.3f}",
                        "goodput_bps": res.summary["connections"][0]["goodput_bps"], "load_1min": f"{load:.2f}",
                        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "note": note,
                    })
                    fh.flush()
                    print(f"{name} {capacity / 1e6:g} Mbit/s: {wall:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
