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


def test_cli_refuses_a_wrong_slow_start_bound_and_the_kernel_backend_refuses_the_3x_one(tmp_path: Path) -> None:
    """`tcp.slow_start_bound` takes `below` (Linux >= 4.3) or `at_or_below` (Linux <= 4.2, MPTCP
    v0.88); anything else is one line naming the key. The kernel backend's Linux has only `below`."""
    from mptcplab.errors import ConfigError
    from mptcplab.kernel.support import check_supported

    sc = _two("all")
    sc["connections"][0]["tcp"]["slow_start_bound"] = "sometimes"
    assert_user_error(cli("run", str(_write(tmp_path, sc))), "connections[0].tcp.slow_start_bound", "sometimes")
    sc["connections"] = [{**sc["connections"][0], "stack": "linux"}]
    sc["connections"][0]["tcp"]["slow_start_bound"] = "at_or_below"
    with pytest.raises(ConfigError, match="slow_start_bound"):
        check_supported(mptcplab.load_scenario(sc))
    sc["connections"][0]["tcp"]["slow_start_bound"] = "below"
    check_supported(mptcplab.load_scenario(sc))


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


def test_fig2_each_run_follows_the_downloads_before_it_in_a_drawn_measurement_round() -> None:
    """Seed 000 §III ("We randomize the order of each configuration (i.e., single/multi-path, file
    sizes, and cellular carriers)", "every hour") and footnote 1: a round is every configuration
    once (single-path WiFi, single-path over each of 3 carriers, MPTCP over WiFi and each carrier,
    at each of 7 sizes: 7 × 7 = 49 downloads) in a random order, and a measured MPTCP download of
    1-32 MB follows the downloads before it in its round, with the 3.11 kernel's cache on."""
    import collections
    import itertools

    from mptcplab.experiments import _chen_towsley_fig2_history as hist
    from mptcplab.experiments import _chen_towsley_links as links
    from mptcplab.experiments import chen_towsley_fig2 as f

    assert len(hist.CONFIGS) * len(hist.SIZES) == 49
    per_size = collections.Counter(hist.CONFIGS)
    assert per_size == {"tcp": 1, "tcp-cell": 3, "mptcp": 3}
    draws = {(s, d): hist.measured_draw(s, d) for s in range(1, 41) for d in ("30ms", "90ms")}
    assert draws[(1, "30ms")] == hist.measured_draw(1, "30ms")
    for (s, d), (size, before, prev) in draws.items():
        assert size in hist.MEASURED_SIZES and f.history(s, d) == before
        assert f.history(s, d, hist.CARRIED) == (*prev, *before)
        # The previous round is a whole round; this one's downloads before the measured one are a part
        # of a round without the measured configuration (one of the three carriers' MPTCP copies).
        assert collections.Counter((k, z) for k, z, _ in prev) == {(k, z): n for k, n in per_size.items()
                                                                   for z in hist.SIZES}
        # Every carrier once per cellular configuration and size; single-path WiFi has none.
        assert {(k, z, net) for k, z, net in prev} == {("tcp", z, "") for z in hist.SIZES} | {
            (k, z, net) for k in ("tcp-cell", "mptcp") for z in hist.SIZES for net in hist.CARRIERS}
        # The measured configuration (MPTCP at its size over its carrier) is not among those before it.
        assert ("mptcp", size, hist.measured_carrier(s, d)) not in before
    # The measured download's place is uniform over the round's 49 places: 0 to 48 downloads before it,
    # 24 on average; 80 draws give a mean within 24 ± 3 × 14.1 / √80 = 24 ± 4.7 (σ of a uniform 0..48).
    lengths = [len(b) for _, b, _ in draws.values()]
    assert min(lengths) >= 0 and max(lengths) <= 48 and abs(sum(lengths) / len(lengths) - 24) < 4.8
    _size, before, _ = draws[(1, "30ms")]
    carrier = hist.measured_carrier(1, "30ms")
    sc = f.scenario(before, _size, carrier=carrier)
    conns = mptcplab.load_scenario(sc).resolved["connections"]
    # Every earlier download is simulated, each on its own carrier's path: the cache is per
    # destination (the engine's key: host, peer, path), so the measured carrier's downloads use
    # the run's own cellular link and the others their carrier's (cell-att, cell-verizon, cell-sprint).
    assert hist.simulated(before) == before and {"tcp-cell"} <= {k for k, _, _ in before}
    assert [c["name"] for c in conns] == [f"earlier{i}" for i in range(1, len(before) + 1)] + [f.CONN]
    assert all(c["after"] == p["name"] for p, c in itertools.pairwise(conns))
    own = {net: "cell" if net == carrier else "cell-" + net.lower().replace("&", "") for net in hist.CARRIERS}
    for c, (kind, _z, net) in zip(conns, before):
        want = {"tcp": ("tcp", ["wifi"]), "tcp-cell": ("tcp", [own.get(net)]),
                "mptcp": ("mptcp", ["wifi", own.get(net)])}[kind]
        assert (c["kind"], c["paths"]) == want
    assert [c["paths"] for c in conns][-1] == ["wifi", "cell"]
    assert {c["tcp"]["metrics"] for c in conns} == {"all"}
    # Both buffers auto-tuned within Linux 3.11's triples on every connection (§V-C, §III's 8 GB hosts).
    raw = sc["connections"]
    assert all(c["rcvbuf"] == links.TCP_RMEM_311 and c["sndbuf"] == links.TCP_WMEM_311 for c in raw)
    without = f.scenario(before, _size, cell_downloads=False)["connections"]
    assert len(without) == len([x for x in before if x[0] != "tcp-cell"]) + 1
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
