"""The Python API: run, results as DataFrames, run directories, sweeps."""

from __future__ import annotations

import json
import threading
import time

import pandas as pd
import pytest

import mptcplab
from mptcplab.sweep import expand_grid, parse_vary, repeat_seed


@pytest.fixture(scope="module")
def result(request):
    from conftest import TWO_PATH

    return mptcplab.run(TWO_PATH)


def test_the_summary_echoes_the_scenario(result):
    s = result.summary
    assert s["scenario"] == "two-path"
    assert s["seed"] == 3
    assert s["duration_s"] == 3.0
    links = {link["name"]: link for link in s["links"]}
    assert set(links) == {"wifi.up", "wifi.down", "cell.up", "cell.down"}
    assert links["wifi.down"]["rate_bps"] == 4_000_000
    assert links["cell.down"]["rate_bps"] == 1_000_000
    assert links["cell.up"]["delay_s"] == pytest.approx(0.040)


def test_tables_have_one_row_per_entity(result):
    sf = result.subflows
    assert isinstance(sf, pd.DataFrame)
    assert list(zip(sf["connection"], sf["path"], strict=True)) == [("mptcp", "wifi"), ("mptcp", "cell")]
    assert len(result.links) == 4
    conns = result.connections
    assert list(conns["name"]) == ["mptcp"]
    assert "ooo_delay.p99_s" in conns.columns


def test_goodput_is_positive_and_below_the_bottlenecks(result):
    conn = result.summary["connections"][0]
    # The two downlinks carry at most 4 + 1 Mbit/s of packets, payload is less.
    assert 0 < conn["goodput_bps"] < 5_000_000
    sf = result.subflows.set_index("path")
    assert sf.loc["wifi", "goodput_bps"] < 4_000_000
    assert sf.loc["cell", "goodput_bps"] < 1_000_000
    # Conservation: every delivered byte arrived through some subflow; what arrived and was
    # not delivered is still waiting out of order in the receive buffer.
    arrived = sf["data_bytes_received"].sum()
    assert conn["delivered_bytes"] <= arrived <= conn["delivered_bytes"] + conn["max_rcv_ooo_bytes"]


def test_the_timeseries_is_long_format_sampled_at_the_interval(result):
    ts = result.timeseries
    assert list(ts.columns) == ["time_s", "entity_kind", "entity", "metric", "value"]
    cwnd = ts[(ts["entity"] == "mptcp/wifi") & (ts["metric"] == "cwnd_bytes")]
    assert len(cwnd) > 0
    steps = cwnd["time_s"].diff().dropna().round(9).unique()
    assert list(steps) == [0.05]  # output.timeseries = "50ms"
    assert cwnd["time_s"].max() <= 3.0 + 1e-9


def test_the_same_seed_gives_the_same_result_and_another_seed_differs(two_path):
    a = mptcplab.run(two_path, seed=11)
    b = mptcplab.run(two_path, seed=11)
    c = mptcplab.run(two_path, seed=12)
    assert a.summary_json == b.summary_json
    assert a.timeseries.equals(b.timeseries)
    assert a.seed == 11 and c.seed == 12
    # 0.5 % random loss on the WiFi path: another seed loses other packets.
    assert a.summary["subflows"] != c.summary["subflows"]


def test_overrides_change_the_run(two_path):
    r = mptcplab.run(two_path, overrides={"paths.cell.rate": "2Mbit", "duration": "1s"})
    assert r.summary["duration_s"] == 1.0
    assert {link["name"]: link["rate_bps"] for link in r.summary["links"]}["cell.down"] == 2_000_000


def test_runs_release_the_interpreter_lock(two_path):
    # While a run is in the engine, another Python thread keeps running.
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        t0 = time.perf_counter()
        mptcplab.run(two_path, overrides={"duration": "20s", "output.timeseries": "1s"})
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if t0 < x < t1]
    if t1 - t0 > 0.05:  # only meaningful if the run took measurable time
        assert len(during) > 5


def test_to_dir_writes_every_file(result, tmp_path):
    out = result.to_dir(tmp_path / "run")
    assert sorted(p.name for p in out.iterdir()) == sorted(mptcplab.results.RUN_FILES)
    assert json.loads((out / "summary.json").read_text()) == result.summary
    ts = pd.read_parquet(out / "timeseries.parquet")
    assert len(ts) == len(result.timeseries)
    resolved = json.loads((out / "scenario.json").read_text())
    assert resolved["seed"] == result.seed
    assert mptcplab.load_scenario(resolved).resolved["paths"] == result.scenario.resolved["paths"]
    assert pd.read_csv(out / "subflows.csv")["path"].tolist() == ["wifi", "cell"]
    # Writing again replaces the directory without leaving temporary ones behind.
    result.to_dir(tmp_path / "run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_to_dir_refuses_to_overwrite_foreign_directories(result, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("precious")
    with pytest.raises(mptcplab.ConfigError, match="refusing"):
        result.to_dir(tmp_path / "mine")
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "precious"


def test_grids_expand_first_key_slowest():
    assert expand_grid({"a": [1, 2], "b": ["x", "y", "z"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"},
        {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, {"a": 2, "b": "z"},
    ]


@pytest.mark.parametrize(
    ("text", "key", "values"),
    [
        ("paths.wifi.rate=4Mbit,8Mbit", "paths.wifi.rate", ["4Mbit", "8Mbit"]),
        ("seed=1,2,3", "seed", [1, 2, 3]),
        ("paths.wifi.rate=range(2Mbit,8Mbit,4)", "paths.wifi.rate", ["2Mbit", "4Mbit", "6Mbit", "8Mbit"]),
        ("paths.wifi.rate=range(1Mbit,100Mbit,3,log)", "paths.wifi.rate", ["1Mbit", "10Mbit", "100Mbit"]),
        ("connections.mptcp.rcvbuf=range(100KB,300KB,3)", "connections.mptcp.rcvbuf", ["100KB", "200KB", "300KB"]),
        ("duration=range(1,3,3)", "duration", [1, 2, 3]),
        ("paths.wifi.loss=range(0,0.01,3)", "paths.wifi.loss", [0, 0.005, 0.01]),
        ('connections.mptcp.paths=["wifi"],["wifi","cell"]', "connections.mptcp.paths", [["wifi"], ["wifi", "cell"]]),
    ],
)
def test_vary_syntax(text, key, values):
    assert parse_vary(text) == (key, values)


def test_repeat_seeds_are_distinct_and_deterministic():
    seeds = [repeat_seed(1, r) for r in range(100)]
    assert len(set(seeds)) == 100
    assert seeds == [repeat_seed(1, r) for r in range(100)]
    assert repeat_seed(2, 0) != repeat_seed(1, 0)
    assert all(0 <= s < 2**63 for s in seeds)


def test_a_sweep_gives_one_tidy_row_per_run_and_resumes(two_path, tmp_path):
    grid = {"paths.cell.rate": ["1Mbit", "2Mbit"], "connections.mptcp.cc": ["reno", "lia"]}
    calls = []
    df = mptcplab.sweep(two_path, grid, repeat=2, jobs=2, out=tmp_path / "sw", progress=lambda d, t: calls.append((d, t)))
    assert len(df) == 2 * 2 * 2
    assert calls[0] == (0, 8) and calls[-1] == (8, 8)
    assert list(df.columns[:4]) == ["paths.cell.rate", "connections.mptcp.cc", "repeat", "seed"]
    assert sorted(df.groupby(["paths.cell.rate", "connections.mptcp.cc"]).size().tolist()) == [2, 2, 2, 2]
    # Repeat r uses the same derived seed at every grid point.
    assert set(df[df["repeat"] == 0]["seed"]) == {repeat_seed(3, 0)}
    assert set(df[df["repeat"] == 1]["seed"]) == {repeat_seed(3, 1)}
    # The varied rate shows up in the link metrics.
    assert (df["link.cell.down.rate_bps"] == df["paths.cell.rate"].map({"1Mbit": 1e6, "2Mbit": 2e6})).all()
    assert (df["conn.mptcp.goodput_bps"] > 0).all()
    assert len(list((tmp_path / "sw" / "runs").glob("*.json"))) == 8
    on_disk = pd.read_parquet(tmp_path / "sw" / "results.parquet")
    assert len(on_disk) == 8

    # Rerunning finds every run finished: progress starts complete.
    calls.clear()
    again = mptcplab.sweep(two_path, grid, repeat=2, jobs=2, out=tmp_path / "sw", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(8, 8)]
    pd.testing.assert_frame_equal(again, df)

    # A larger grid reuses the finished runs and adds only the new ones.
    calls.clear()
    grid3 = dict(grid, **{"paths.cell.rate": ["1Mbit", "2Mbit", "3Mbit"]})
    bigger = mptcplab.sweep(two_path, grid3, repeat=2, jobs=1, out=tmp_path / "sw", progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (8, 12) and len(bigger) == 12


def test_a_sweep_in_memory_matches_single_runs(two_path):
    df = mptcplab.sweep(two_path, {"duration": ["1s"]}, repeat=2)
    for _, row in df.iterrows():
        single = mptcplab.run(two_path, seed=int(row["seed"]), overrides={"duration": "1s"})
        assert row["conn.mptcp.goodput_bps"] == single.summary["connections"][0]["goodput_bps"]


def test_the_send_buffer_series_follow_linuxs_autotuning_rules():
    """The simulator's send-buffer series, named and ruled as the kernel backend's (see
    test_kernel_stack): `tcp_sndbuf_expand` gives a subflow 2 × max(10, cwnd) segments of
    `per_mss` = roundup_pow_of_two(1448 + 512) + 256 = 2304 B and never lowers it, so every
    value is a multiple of 4608 B and at least 46 080 B and no sample is below an earlier one;
    `__mptcp_sync_sndbuf` keeps the MPTCP socket's at `tcp_wmem[0]` (4096 B) + the sum of its
    subflows', here at every sample (the simulator samples both at one instant)."""
    from conftest import buffer_pair

    sc = buffer_pair()
    ts = mptcplab.run(sc).timeseries
    sub = ts[(ts["entity_kind"] == "subflow") & (ts["metric"] == "sndbuf_bytes")]
    per = sub.pivot_table(index="time_s", columns="entity", values="value", observed=True)
    assert list(per.columns) == ["mptcp/a", "mptcp/b"] and len(per.dropna()) >= 25
    for col in per:
        v = per[col].dropna()
        assert ((v % 4608) == 0).all() and (v >= 46_080).all() and v.is_monotonic_increasing
    conn = ts[(ts["entity_kind"] == "connection") & (ts["metric"] == "sndbuf_bytes")].set_index("time_s")["value"]
    both = per.dropna()
    assert (conn.loc[both.index] == 4096 + both.sum(axis=1)).all()
    queued = ts[(ts["entity_kind"] == "subflow") & (ts["metric"] == "wmem_queued_bytes")]
    assert len(queued) == len(sub) and (queued["value"] >= 0).all()
    # A TCP connection's buffer is its subflow's: the connection series is NaN.
    tcp = mptcplab.run(sc | {"connections": [{"name": "t", "kind": "tcp", "stack": "linux", "paths": ["a"],
                                              "app": {"kind": "bulk"}}]}).timeseries
    assert tcp[(tcp["entity_kind"] == "connection") & (tcp["metric"] == "sndbuf_bytes")]["value"].isna().all()
