"""The simulator's hand-off log (``run --trace-sched``) and scripts/push-diff.py, which lines
it up with a kernel run's ``mptcp_sendmsg_frag`` table: every byte of a download is handed
out once as new data, a run compared with itself agrees push for push, and two runs that hand
the same bytes to different subflows diverge at that push."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "push-diff.py"
SCENARIO = """
name = "handoffs"
duration = "5s"
[[paths]]
name = "wifi"
rate = "20Mbit"
delay = "10ms"
[[paths]]
name = "cell"
rate = "5Mbit"
delay = "50ms"
[[connections]]
name = "mp"
kind = "mptcp"
stack = "linux"
paths = ["wifi", "cell"]
app = { kind = "download", size = "2000000B" }
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mptcplab.cli", *args], capture_output=True, text=True)


def test_the_hand_off_log_hands_out_every_byte_once_and_agrees_with_itself(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "run"
    r = cli("run", str(sc), "--trace-sched", "--out", str(out))
    assert r.returncode == 0, r.stderr
    t = pd.read_parquet(out / "sched-trace" / "handoffs.parquet")
    assert list(t.columns) == ["time_s", "connection", "path", "data_seq", "bytes", "retransmit"]
    new = t[~t.retransmit].sort_values("data_seq")
    # Contiguous from 0: each piece starts where the previous one ended, 2 000 000 B in all.
    assert (new.data_seq.to_numpy()[1:] == (new.data_seq + new.bytes).to_numpy()[:-1]).all()
    assert int(new.data_seq.iloc[0]) == 0 and int(new.bytes.sum()) == 2_000_000
    assert set(t.path) == {"wifi", "cell"}
    same = subprocess.run([sys.executable, str(SCRIPT), str(out), str(out)], capture_output=True, text=True, check=True)
    assert "the pushes agree" in same.stdout


def test_the_hand_off_log_is_the_simulators_own(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    r = cli("run", str(sc), "--trace-sched", "--backend", "linux")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--trace-sched" in lines[0], r.stderr


def test_pushes_that_hand_the_same_bytes_to_another_subflow_diverge_there(tmp_path: Path) -> None:
    # The kernel's table: a mapping grows piece by piece (`data_len` is its length after the
    # piece), from a 64-bit initial data sequence number. Two fragments to WiFi at 10 ms form
    # one push of 65 456 B; 4544 B go to the cellular subflow at 50 ms.
    k = tmp_path / "kernel" / "kernel-trace"
    k.mkdir(parents=True)
    base = 10**15
    pd.DataFrame({
        "time_s": [0.010, 0.010, 0.050], "path": ["wifi", "wifi", "cell"],
        "data_seq": [base, base, base + 65_456], "data_len": [32_728, 65_456, 4_544], "bytes": [32_728, 32_728, 4_544],
    }).to_parquet(k / "sendmsg_frag.parquet")
    # The simulator's: the same bytes, the last piece to WiFi.
    s = tmp_path / "sim" / "sched-trace"
    s.mkdir(parents=True)
    pd.DataFrame({
        "time_s": [0.010, 0.010, 0.051], "connection": ["mp"] * 3, "path": ["wifi", "wifi", "wifi"],
        "data_seq": [0, 32_728, 65_456], "bytes": [32_728, 32_728, 4_544], "retransmit": [False] * 3,
    }).to_parquet(s / "handoffs.parquet")
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "kernel"), str(tmp_path / "sim")],
                       capture_output=True, text=True, check=True)
    assert "2 pushes (cell 0.00 MB, wifi 0.07 MB)" in r.stdout
    assert "first divergence at push 1 (0.0500 s)" in r.stdout
    diverging = [ln for ln in r.stdout.splitlines() if ln.startswith(">")]
    assert len(diverging) == 1 and "cell" in diverging[0] and "65456..70000" in diverging[0]


def test_the_api_records_the_hand_offs_when_asked_and_checks_the_flag(tmp_path: Path) -> None:
    import pytest

    import mptcplab
    from mptcplab.errors import ConfigError

    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    assert mptcplab.run(sc).sched_trace is None
    t = mptcplab.run(sc, sched_log=True).sched_trace
    assert t is not None and int(t[~t.retransmit].bytes.sum()) == 2_000_000
    with pytest.raises(ConfigError, match="sched_log: must be True or False"):
        mptcplab.run(sc, sched_log=1)  # type: ignore[arg-type]
