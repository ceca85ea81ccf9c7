#!/usr/bin/env python3
"""Derives the capacity schedules of the cellular link presets from the shared Mahimahi traces.

Prints, for each cellular preset, the representative 60-second window of its trace (the
window whose mean and coefficient of variation of the per-second capacity are closest to the
whole trace's) as `schedule` lines for crates/core/presets/<name>.toml. The presets keep the
printed numbers, so they do not need the traces at run time; rerun this (from the repository
root, with the traces at ../shared/traces/cellular/) to check or regenerate them.

A trace second without any delivery opportunity (an outage) becomes FLOOR_KBIT, because a
schedule step's rate must be > 0. Windows with an outage (capacity below a tenth of the trace
mean) longer than MAX_OUTAGE_S seconds are skipped: repeated every minute, a long outage would
dominate the preset (the seed's RTTs top out at seconds, not tens of seconds).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

TRACES = Path("../shared/traces/cellular")
WINDOW_S = 60
FLOOR_KBIT = 8  # one 1500-byte packet per 1.5 s: an outage, as close to 0 as a rate can get
MAX_OUTAGE_S = 3
PRESETS = {
    "att-lte": "ATT-LTE-driving.down",
    "verizon-lte": "Verizon-LTE-short.down",
    "sprint-3g": "Verizon-EVDO-driving.down",
}


def per_second_kbit(path: Path) -> list[int]:
    """Capacity of each trace second (kbit/s): 1500 bytes per delivery opportunity."""
    ms = [int(line) for line in path.read_text().split()]
    counts = [0] * (ms[-1] // 1000 + 1)
    for t in ms:
        counts[t // 1000] += 1
    return [round(c * 1500 * 8 / 1000) for c in counts]


def cv(xs: list[int]) -> float:
    m = statistics.fmean(xs)
    return statistics.pstdev(xs) / m if m else 0.0


def longest_outage(w: list[int], threshold: float) -> int:
    run = best = 0
    for x in w:
        run = run + 1 if x < threshold else 0
        best = max(best, run)
    return best


def representative(kbit: list[int]) -> int:
    """Start of the window whose mean and CV are closest (relative) to the whole trace's."""
    m, c = statistics.fmean(kbit), cv(kbit)
    best, start = float("inf"), 0
    for s in range(0, len(kbit) - WINDOW_S + 1):
        w = kbit[s : s + WINDOW_S]
        if longest_outage(w, m / 10) > MAX_OUTAGE_S:
            continue
        d = abs(statistics.fmean(w) / m - 1) + abs(cv(w) / c - 1)
        if d < best:
            best, start = d, s
    return start


def main() -> int:
    if not TRACES.is_dir():
        print(f"error: {TRACES} not found: run from the repository root with the shared traces beside it", file=sys.stderr)
        return 1
    for preset, name in PRESETS.items():
        kbit = per_second_kbit(TRACES / name)
        s = representative(kbit)
        w = kbit[s : s + WINDOW_S]
        print(f"# {preset}: {name}, seconds {s}..{s + WINDOW_S} of {len(kbit)}")
        print(
            f"#   trace mean {statistics.fmean(kbit):.0f} kbit/s, CV {cv(kbit):.2f}; "
            f"window mean {statistics.fmean(w):.0f} kbit/s, CV {cv(w):.2f}, min {min(w)}, max {max(w)}, "
            f"outages {sum(1 for x in w if x == 0)}"
        )
        print(f'rate = "{round(statistics.fmean(w))}kbit"   # the window\'s mean, the nominal rate')
        steps = [f'{{ at = "{i}s", rate = "{max(x, FLOOR_KBIT)}kbit" }}' for i, x in enumerate(w)]
        print("schedule = [")
        for i in range(0, len(steps), 3):
            print("    " + ", ".join(steps[i : i + 3]) + ",")
        print("]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
