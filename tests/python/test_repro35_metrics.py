"""Issue 35: Linux's TCP metrics cache (``tcp.metrics``), connections one after another
(``after``), the kernel backend's sysctls for the cache, and Chen & Towsley's Fig. 2 with the
cache its footnote 1 describes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mptcplab
from conftest import mptcplab as cli
from mptcplab.kernel.netns import metrics_sysctls
from test_errors import assert_user_error

MSS = 1448


def _download(name: str, size: str, metrics: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": "tcp", "paths": ["p"], "cc": "reno", "app": {"kind": "download", "size": size},
            "tcp": {"metrics": metrics}, **extra}


def _two(metrics: str, first: str = "2MB", second: str = "5000B") -> dict[str, Any]:
    """A download over a 10 Mbit/s, 40 ms path whose 20-packet queue overflows in slow start
    (losses without randomness), then, 1 s after it closed, a download of 4 segments."""
    return {
        "duration": "60s",
        "paths": [{"name": "p", "rate": "10Mbit", "delay": "20ms", "queue": "20 packets"}],
        "connections": [_download("first", first, metrics),
                        _download("second", second, metrics, after="first", start="1s")],
    }


def _subflow(res: Any, conn: str) -> dict[str, Any]:
    return next(s for s in res.summary["subflows"] if s["connection"] == conn)


def test_the_cache_hands_the_closed_connections_ssthresh_to_the_next_one() -> None:
    """tcp_update_metrics in congestion avoidance (cwnd > ssthresh, Open: every byte acked ends
    recovery) saves max(cwnd/2, ssthresh) segments; tcp_init_metrics makes it the next
    connection's ssthresh. The second download (4 segments, less than the initial window of
    10, on an empty queue) neither loses nor changes it, so it ends with that ssthresh."""
    res = mptcplab.run(_two("all"), seed=1)
    first, second = _subflow(res, "first"), _subflow(res, "second")
    assert first["retransmitted_segments"] > 0 and second["retransmitted_segments"] == 0
    cwnd, ss = first["final_cwnd_bytes"] // MSS, first["final_ssthresh_bytes"] // MSS
    assert cwnd > ss, "the first download ends in congestion avoidance"
    assert second["final_ssthresh_bytes"] == max(cwnd // 2, ss) * MSS


@pytest.mark.parametrize("metrics", ["off", "no_ssthresh"])
def test_without_ssthresh_saving_the_next_connection_starts_with_an_infinite_ssthresh(metrics: str) -> None:
    res = mptcplab.run(_two(metrics), seed=1)
    assert _subflow(res, "first")["retransmitted_segments"] > 0
    assert _subflow(res, "second")["final_ssthresh_bytes"] is None


def test_a_connection_still_in_its_initial_slow_start_caches_no_ssthresh() -> None:
    """20 KB are 14 segments (the initial window of 10, then 4): they never fill the 20-packet
    queue, so ssthresh stays infinite; with nothing cached, tcp_update_metrics saves none and
    the next connection starts with an infinite one."""
    res = mptcplab.run(_two("all", first="20KB"), seed=1)
    assert _subflow(res, "first")["retransmitted_segments"] == 0
    assert _subflow(res, "first")["final_ssthresh_bytes"] is None
    assert _subflow(res, "second")["final_ssthresh_bytes"] is None


def test_after_starts_the_connection_its_start_after_the_other_closed() -> None:
    res = mptcplab.run(_two("off"), seed=1)
    conns = {c["name"]: c for c in res.summary["connections"]}
    first, second = conns["first"], conns["second"]
    assert first["completed"] and second["completed"]
    # The first closes when its last ACK reaches the server, after the client got the last
    # byte; the second's SYN leaves 1 s after that close.
    assert second["start_s"] >= first["start_s"] + first["download_time_s"] + 1.0


def test_a_path_without_an_earlier_connection_runs_as_before() -> None:
    """One connection: the cache has nothing to hand on, and a scenario's results are the same
    whatever the switch."""
    one = {"duration": "20s", "paths": [{"name": "p", "rate": "10Mbit", "delay": "20ms", "queue": "20 packets"}]}
    runs = [mptcplab.run({**one, "connections": [_download("c", "1MB", m)]}, seed=3).summary["connections"][0]
            for m in ("off", "no_ssthresh", "all")]
    assert len({(r["download_time_s"], r["delivered_bytes"]) for r in runs}) == 1


@pytest.mark.parametrize(("profile", "value"), [("classic", "off"), ("linux", "no_ssthresh"), ("linux-v0.9x", "all")])
def test_profile_defaults(profile: str, value: str) -> None:
    sc = mptcplab.load_scenario({"duration": "1s", "paths": [{"name": "p", "rate": "10Mbit", "delay": "5ms"}],
                                 "connections": [{"name": "c", "kind": "tcp", "paths": ["p"], "stack": profile,
                                                  "app": {"kind": "bulk"}}]})
    assert sc.resolved["connections"][0]["tcp"]["metrics"] == value


def test_kernel_backend_sysctls_follow_the_switch() -> None:
    """ip-sysctl: tcp_no_metrics_save = 1 saves nothing; tcp_no_ssthresh_metrics_save = 1 (the
    default since Linux 5.6) keeps ssthresh out of the cache."""
    keys = ("net.ipv4.tcp_no_metrics_save", "net.ipv4.tcp_no_ssthresh_metrics_save")
    assert [metrics_sysctls({"metrics": m})[k] for m in ("off", "no_ssthresh", "all") for k in keys] == [
        "1", "1", "0", "1", "0", "0"]
    assert metrics_sysctls({}) == metrics_sysctls({"metrics": "off"})


def _write(tmp_path: Path, sc: dict[str, Any]) -> Path:
    f = tmp_path / "sc.json"
    f.write_text(json.dumps(sc), encoding="utf-8")
    return f


def test_cli_refuses_a_wrong_switch_value(tmp_path: Path) -> None:
    sc = _two("sometimes")
    assert_user_error(cli("run", str(_write(tmp_path, sc))), "connections[0].tcp.metrics", "sometimes")


@pytest.mark.parametrize(("change", "words"), [
    ({"after": "third"}, ["no connection named `third`"]),
    ({"after": "second"}, ["must be listed before"]),
])
def test_cli_refuses_an_after_naming_no_earlier_connection(tmp_path: Path, change: dict, words: list[str]) -> None:
    sc = _two("off")
    sc["connections"][1].update(change)
    assert_user_error(cli("run", str(_write(tmp_path, sc))), "connections[1].after", *words)


def test_cli_refuses_an_after_on_a_connection_that_never_closes(tmp_path: Path) -> None:
    """A bulk connection has no end: a connection after it would overlap it for ever."""
    sc = _two("off")
    sc["connections"][0]["app"] = {"kind": "bulk"}
    assert_user_error(cli("run", str(_write(tmp_path, sc))), "connections[1].after", "never closes")


def test_fig2_each_run_follows_a_history_drawn_from_the_seeds_configurations() -> None:
    """Seed 000 footnote 1 and §III ("We randomize the order of each configuration"): each
    measured MPTCP download follows k earlier downloads from the same server, drawn from the
    seed's configurations by the run's seed, with the 3.11 kernel's cache (ssthresh included) on."""
    import itertools

    from mptcplab.experiments import chen_towsley_fig2 as f

    drawn = {s: f.history(s) for s in range(1, 41)}
    assert all(len(h) == f.K for h in drawn.values()) and drawn[1] == f.history(1)
    # The k immediately preceding downloads: a shorter history is the tail of a longer one.
    assert all(f.history(s, 1) == h[-1:] for s, h in drawn.items())
    pairs = {x for h in drawn.values() for x in h}
    assert pairs <= {(k, z) for k in f.KINDS for z in f.SIZES} and {k for k, _ in pairs} == set(f.KINDS)
    assert len(set(drawn.values())) > 30  # 21³ histories: forty seeds rarely repeat one
    conns = mptcplab.load_scenario(f.scenario(drawn[1])).resolved["connections"]
    assert [c["name"] for c in conns] == [f"earlier{i}" for i in range(1, f.K + 1)] + [f.CONN]
    assert all(c["after"] == p["name"] for p, c in itertools.pairwise(conns))
    for c, (kind, _size) in zip(conns, drawn[1]):
        assert (c["kind"], c["paths"]) == {"tcp": ("tcp", ["wifi"]), "tcp-cell": ("tcp", ["cell"]),
                                           "mptcp": ("mptcp", ["wifi", "cell"])}[kind]
    assert {c["tcp"]["metrics"] for c in conns} == {"all"}
    claims = {c.id: c for c in f.CLAIMS}
    assert claims["r2"].paper == 0.8758 and not claims["r2"].headline


def test_fig2_the_cached_ssthresh_slows_the_wifi_flow_before_the_cellular_one_starts(tmp_path, monkeypatch) -> None:
    """A WiFi subflow that starts with a cached ssthresh near I_w grows by about half a segment
    per round (congestion avoidance, b = 2) instead of by ψ = 1.5 per round. At the smallest γ
    of the grid (cellular base RTT 60 ms, Δ = 2γ ≈ 3.6 rounds of R₁) the uncached flow is still
    in slow start, so the cache lowers the count there; over the whole grid the uncached flow
    often loses in slow start and is then held far lower by the coupled increase, so only the
    grid's total is compared: lower with the cache. Every run stays below the loss-free Eq. (3)."""
    import pandas as pd

    from mptcplab.experiments import chen_towsley_fig2 as f
    from mptcplab.experiments.base import Context

    monkeypatch.setattr(f, "REPS", (1, 1))
    res = f.run(Context(out=tmp_path / "fig2", quick=True, jobs=1))
    runs = pd.read_csv(res.tables["ablation runs"])
    by = runs.groupby(["variant", "cell_base_rtt_ms"])["packets"].mean().unstack(0)
    smallest = by.index.min()
    assert by.loc[smallest, f.ONE_TCP] < by.loc[smallest, f.NO_CACHE]
    assert by[f.ONE_TCP].sum() < by[f.NO_CACHE].sum()
    t = pd.read_csv(res.tables["packets vs gamma"])
    assert (t["packets"] <= t["eq3_packets"]).all()
