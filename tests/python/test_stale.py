"""Stale subflows (upstream Linux's `mptcp_pm_subflow_chk_stale`): a path whose capacity drops
to nothing while it holds data is set aside after `stale_loss_cnt` (4) MPTCP retransmission
periods without an ACK, the connection's unacknowledged data goes out again on the other path,
and that path then carries the connection alone."""

from __future__ import annotations

from pathlib import Path

import pytest

import mptcplab

# Two 10 Mbit/s paths; path a's data direction has capacity for 5 s, then none (a capacity
# trace with 0 B/s seconds), as a phone walking out of WiFi range.
SCENARIO = """
name = "stale"
duration = "30s"
seed = 1
[[paths]]
name = "a"
delay = "10ms"
queue = "100 packets"
down = {{ rate_trace = "{trace}" }}
up = {{ rate = "10Mbit" }}
[[paths]]
name = "b"
rate = "10Mbit"
delay = "20ms"
queue = "100 packets"
[[connections]]
name = "c"
kind = "mptcp"
paths = ["a", "b"]
stack = "linux"
cc = "cubic"
app = {{ kind = "bulk" }}
[output]
timeseries = "1s"
"""
# Path b alone: 10 Mbit/s of 1500-byte packets carrying 1424 payload bytes each (Linux's
# option sizes, `stack = "linux"`).
B_GOODPUT_BPS = 10e6 * 1424 / 1500
# The most b's receiver can hold behind a hole in b's own sequence space: what arrived since
# the hole, within the round trip and queueing delay it takes to repair it, at most the path's
# bandwidth-delay product (10 Mbit/s x 40 ms = 50 000 B) plus its 100-packet queue
# (150 000 B).
B_HELD_BYTES = 10e6 * 0.040 / 8 + 100 * 1500


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    trace = tmp_path / "a.csv"
    trace.write_text("".join(f"{s},{1_250_000 if s <= 5 else 0}\n" for s in range(1, 31)))
    f = tmp_path / "stale.toml"
    f.write_text(SCENARIO.format(trace=trace))
    return f


def _goodput_between(res: mptcplab.RunResult, t0: float, t1: float) -> float:
    ts = res.timeseries
    d = ts[ts["metric"] == "delivered_bytes"].set_index("time_s")["value"]
    return (float(d.loc[t1]) - float(d.loc[t0])) * 8 / (t1 - t0)


def test_a_dead_path_is_set_aside_and_the_other_carries_the_connection(scenario: Path) -> None:
    """From the rule: after the outage at 5 s, the MPTCP timer fires at the dead subflow's
    pending RTO, which doubles from at least `rto_min` (200 ms); the fifth period without an
    ACK marks it stale (count 5 > 4), at most 0.2 · (1 + 2 + 4 + 8 + 16) s ≈ 6.2 s plus the
    first RTO's own wait after the outage, well before 15 s. From then on path b carries
    everything: between 15 s and 30 s the goodput is b's alone, at least 90 % of it (the
    rest: cubic's probing losses on b), and above it by no more than what b's receiver held
    behind a hole at 15 s and delivered after it (`B_HELD_BYTES` over the 15 s: +1.1 %)."""
    res = mptcplab.run(scenario, seed=1)
    marks = {s["path"]: s["stale_marks"] for s in res.summary["subflows"]}
    assert marks == {"a": 1, "b": 0}
    g = _goodput_between(res, 15.0, 30.0)
    assert 0.9 * B_GOODPUT_BPS <= g <= B_GOODPUT_BPS + B_HELD_BYTES * 8 / 15.0, g


def test_without_the_mptcp_timer_the_connection_stalls(scenario: Path) -> None:
    """The ablation: without the MPTCP-level retransmission timer (the classic profile's
    reinjection on each subflow RTO instead), data stuck behind the dead path holds the
    connection's windows; b delivers in bursts, far below its capacity."""
    res = mptcplab.run(scenario, seed=1, overrides={"connections.c.mptcp_retransmit": False})
    assert all(s["stale_marks"] == 0 for s in res.summary["subflows"])
    assert _goodput_between(res, 15.0, 30.0) < 0.5 * B_GOODPUT_BPS
