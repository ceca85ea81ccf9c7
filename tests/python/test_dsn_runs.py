"""scripts/dsn-runs.py on a kernel run's trace (``--trace-kernel --out DIR``): the pieces the
scheduler handed out become runs of the data sequence space, and ``--gap`` counts the
stretches a subflow carried nothing, from its segments' arrivals at the receiving socket."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "dsn-runs.py"
MSS = 1424


def test_runs_and_gaps_from_a_kernel_trace(tmp_path: Path) -> None:
    d = tmp_path / "kernel-trace"
    d.mkdir()
    # WiFi gets 45 segments, cellular a 64 KB burst of 46, WiFi 10 more: three runs. Each piece
    # is a mapping of its own (`data_len` equals `bytes`). WiFi: 55 segments, 78 320 B, 45 of them
    # (82 %) in the run of at least 32.
    pieces = [(0.10, "wifi", 0, 45 * MSS), (0.10, "cell", 45 * MSS, 46 * MSS), (0.10, "wifi", 91 * MSS, 10 * MSS)]
    pd.DataFrame({
        "time_s": [p[0] for p in pieces], "path": [p[1] for p in pieces],
        "data_seq": [p[2] for p in pieces], "data_len": [p[3] for p in pieces], "bytes": [p[3] for p in pieces],
    }).to_parquet(d / "sendmsg_frag.parquet")
    # Arrivals at the client: WiFi at 0.10 and 0.11 s, then nothing until 0.50 s (one 0.39 s
    # stretch); cellular at 0.20 and 0.21 s. The server's rows (ACKs) do not count.
    rx = [(0.10, "wifi"), (0.11, "wifi"), (0.50, "wifi"), (0.20, "cell"), (0.21, "cell")]
    pd.DataFrame({
        "time_s": [t for t, _ in rx] + [0.3], "path": [p for _, p in rx] + ["wifi"],
        "data_len": [MSS] * len(rx) + [0], "sender": [False] * len(rx) + [True],
    }).to_parquet(d / "tcp_probe.parquet")
    out = subprocess.run([sys.executable, str(SCRIPT), "--gap", "0.2", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "wifi: 2 runs, 0.08 MB, median run 27.5 segments, 82% of bytes in runs >= 32 segments" in out
    assert "cell: 1 runs, 0.07 MB, median run 46.0 segments, 100% of bytes in runs >= 32 segments" in out
    assert "wifi: 1 stretches over 0.2 s without data, 0.39 s of 0.40 s" in out
    assert "cell: 0 stretches over 0.2 s without data, 0.00 s of 0.01 s" in out
