"""Regression tests for inputs the engine used to accept and then panic on, clamp, or run
without bound: each reproduces the original input through the command line and asserts
the one-line keyed error (exit 2) or, where the input is legitimate, the right result.
The bounds and their reasons are in docs/scenarios.md ("Bounds on scenario values")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import mptcplab as cli
from test_errors import assert_user_error

SINGLE = """
name = "single"
duration = "2s"
[[paths]]
name = "p"
rate = "10Mbit"
delay = "10ms"
queue = "100 packets"
[[connections]]
name = "c"
kind = "tcp"
paths = ["p"]
app = { kind = "bulk" }
"""


def scenario(tmp_path: Path, old: str = "", new: str = "", text: str = SINGLE) -> Path:
    if old:
        assert old in text, f"test bug: {old!r} not in the scenario"
        text = text.replace(old, new, 1)
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


BULK = 'app = { kind = "bulk" }'


@pytest.mark.parametrize(
    ("old", "new", "key", "words"),
    [
        # 2^32 writes of 2^32 B: size x count wrapped to 0 and the run ended in an invariant panic.
        (BULK, 'app = { kind = "periodic", size = "4294967296B", count = 4294967296, period = "1s" }',
         "connections[0].app.count", ["2^53"]),
        # ~7e8 events per simulated second.
        (BULK, 'app = { kind = "periodic", size = "1KB", period = "1ns" }', "connections[0].app.period", ["1us"]),
        # A timer of 1 ns under loss fired without bound.
        (BULK, BULK + '\ntcp = { rto_min = "1ns", rto_initial = "1ns", rto_max = "1ns" }',
         "connections[0].tcp.rto_min", ["1us"]),
        # Silently clamped to u64::MAX bit/s.
        ('rate = "10Mbit"', 'rate = "99999999999999999999999Gbit"', "paths[0].rate", ["1Tbit"]),
        ('queue = "100 packets"', "queue = 1e30", "paths[0].queue", ["2^53"]),
        # Ordinals start at 1; 0 matched no packet.
        ('queue = "100 packets"', "drop = [0]", "paths[0].drop[0]", ["start at 1"]),
        # 64 B holds no 1500-byte packet: every data packet was dropped.
        ('queue = "100 packets"', 'queue = "64B"', "paths[0].queue", ["1500-byte"]),
    ],
)
def test_values_the_engine_cannot_honour_are_refused_at_their_key(tmp_path, old, new, key, words):
    f = scenario(tmp_path, old, new)
    assert_user_error(cli("run", str(f)), f"{f}: {key}: ", *words)


def test_rate_trace_samples_beyond_the_fastest_link_are_refused(tmp_path):
    (tmp_path / "rt.csv").write_text("1,1e30\n")
    f = scenario(tmp_path, 'rate = "10Mbit"', f'rate_trace = "{tmp_path / "rt.csv"}"')
    assert_user_error(cli("run", str(f)), "paths[0].rate_trace: ", "line 1", "1Tbit")


def test_a_device_as_a_trace_file_is_refused_without_reading_it(tmp_path):
    f = scenario(tmp_path, 'rate = "10Mbit"', 'rate_trace = "/dev/zero"')
    assert_user_error(cli("check", str(f), timeout=30), "paths[0].rate_trace: ", "not a regular file")


def test_duplicate_route_names_within_a_connection_are_refused(tmp_path):
    text = """
name = "dup"
duration = "2s"
[[links]]
name = "a"
from = "client"
to = "server"
rate = "10Mbit"
[[links]]
name = "b"
from = "server"
to = "client"
rate = "10Mbit"
[[connections]]
name = "c"
kind = "mptcp"
routes = [{ name = "r", up = ["a"], down = ["b"] }, { name = "r", up = ["a"], down = ["b"] }]
app = { kind = "bulk" }
"""
    f = scenario(tmp_path, text=text)
    assert_user_error(cli("run", str(f)), "connections[0].routes[1].name: ", "unique")


def test_ndiffports_subflows_over_one_path_keep_their_own_sweep_columns(tmp_path):
    # The documented form paths = ["p", "p"] opens two subflows over one path; the sweep
    # table used to keep only the second (1.83 of 7.16 Mbit/s reported).
    f = scenario(tmp_path, 'kind = "tcp"\npaths = ["p"]', 'kind = "mptcp"\npaths = ["p", "p"]')
    out = tmp_path / "sw"
    r = cli("sweep", str(f), "--vary", "seed=1,2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    import pandas as pd

    df = pd.read_csv(out / "results.csv")
    first, second = df["sf.c.p.goodput_bps"], df["sf.c.p#2.goodput_bps"]
    total = df["conn.c.goodput_bps"]
    # Both subflows carry data over the 10 Mbit/s path, and together they are the connection.
    assert (first > 0).all() and (second > 0).all()
    assert ((first + second - total).abs() <= 1e-6 * total).all()


def test_an_unwritable_capture_directory_is_refused_before_the_run(tmp_path):
    (tmp_path / "afile").write_text("")
    f = scenario(tmp_path)
    assert_user_error(cli("run", str(f), "--pcap", str(tmp_path / "afile" / "caps")), "--pcap")


def test_a_whole_second_run_reports_an_exact_end():
    # 30 s used to come out as 30.000000000000004 (30e9 ns x 1e-9).
    from conftest import TWO_PATH

    r = cli("run", str(TWO_PATH), "--set", "duration=3s", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["end_s"] == 3.0
