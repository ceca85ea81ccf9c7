"""scripts/push-cycles.py: the slow subflow's bursts, the cycles between them, and what the
other subflows were handed just before each, read from a run's push table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "push-cycles.py"


def handoffs(folder: Path, rows: list[tuple[float, str, int]]) -> Path:
    """A simulator run's hand-off table from (time, path, bytes), contiguous in the stream."""
    seq, out = 0, []
    for t, path, n in rows:
        out.append((t, "mp", path, seq, n, False))
        seq += n
    d = folder / "sched-trace"
    d.mkdir(parents=True)
    cols = ["time_s", "connection", "path", "data_seq", "bytes", "retransmit"]
    pd.DataFrame(out, columns=cols).to_parquet(d / "handoffs.parquet")
    return folder


def test_cycles_are_the_gaps_between_the_slow_subflows_bursts(tmp_path: Path) -> None:
    # Openings at 3.0, 3.235, 3.47 and 3.78 s: WiFi is handed 200 000 B 20 ms before each
    # cellular burst of 65 456 B (the kernel's order in the short cycle), a 1424 B cellular
    # piece at 3.1 s is a window's tail (below --min-burst), and at 3.78 s a second burst
    # follows the first within the same millisecond (one opening, 130 912 B). Cycles: 235, 235
    # and 310 ms, two of three shorter than 270 ms; WiFi before each: 200 000 B.
    rows = []
    for t in (3.0, 3.235, 3.47, 3.78):
        rows += [(t - 0.020, "wifi", 200_000), (t, "cell", 65_456)]
    rows.insert(2, (3.1, "cell", 1424))
    rows.append((3.7805, "cell", 65_456))
    run = handoffs(tmp_path / "run", rows)
    r = subprocess.run([sys.executable, str(SCRIPT), "--list", str(run)], capture_output=True, text=True, check=True)
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 5, r.stdout
    assert "130912 B" in lines[3] and "310.0 ms" in lines[3]
    assert lines[-1].endswith(
        "3 cycles after 3 s, median 235 ms, 2 shorter than 270 ms (67%); other paths before: median 200000 B"
    ), lines[-1]
