"""Smoke tier of the seed 001–004 reproductions (kato, stms, nsdi12-fig4, olia): each runs in
quick mode (together well under a minute on two cores), writes its tables and figures with the
expected columns and a verdict, and the papers' qualitative claims are checked on its tables.
A claim the simulator does not show is a strict xfail naming the finding, so it fails loudly
once the engine starts to show it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mptcplab.experiments import names
from mptcplab.experiments.base import VERDICTS
from mptcplab.experiments.report import run_one

OURS = ("kato", "stms", "nsdi12-fig4", "olia")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("repro")
    return {name: (run_one(name, out, quick=True, jobs=2, progress=None), out / name) for name in OURS}


def test_every_reproduction_is_registered_after_the_existing_ones() -> None:
    known = names()
    assert all(n in known for n in OURS)
    assert known.index("chen-towsley-fig5") < known.index("kato")


@pytest.mark.parametrize("name", OURS)
def test_outputs_have_tables_figures_and_a_verdict(results: dict, name: str) -> None:
    res, out = results[name]
    assert res.verdict in VERDICTS and res.reason.strip()
    assert res.comparisons and all(c.quantity for c in res.comparisons)
    assert {p.suffix for p in res.figures} == {".png", ".svg"}
    assert all(p.exists() and p.stat().st_size > 0 for p in [*res.figures, *res.tables.values()])
    assert (out / "section.md").read_text().count("**Verdict:") == 1
    assert res.runtime_s < 90, f"{name} took {res.runtime_s:.0f} s in quick mode (budget about 60 s)"


EXPECTED_COLUMNS = {
    ("kato", "send-buffer sweep"): {"queue", "sndbuf", "mptcp_goodput_bps", "slow_share", "tcp_fast_goodput_bps", "regime",
                                    "sndbuf_blocked_episodes", "penalisations"},
    ("kato", "runs at 1 MiB"): {"conn.mptcp.goodput_bps", "conn.mptcp.sndbuf_blocked_episodes", "conn.mptcp.penalisations"},
    ("stms", "tables"): {"reading", "in_network_buffer", "slow_rtt", "scheduler", "aggregate_mbps", "fast_mbps",
                         "fast_loss_pct", "ooo_p99_ms", "fast_utilisation"},
    ("stms", "host-buffer sweep"): {"in_network_buffer", "host_buffer", "scheduler", "aggregate_mbps"},
    ("nsdi12-fig4", "goodput vs receive buffer"): {"variant", "config", "rcvbuf_kb", "goodput_mbps", "goodput_mbps_ci95"},
    ("olia", "per-user throughput"): {"scenario", "config", "cc", "users", "per_user_mbps", "paper_lia_mbps",
                                      "theory_with_probe_mbps"},
}


@pytest.mark.parametrize(("name", "table"), list(EXPECTED_COLUMNS))
def test_tables_have_the_expected_columns(results: dict, name: str, table: str) -> None:
    df = pd.read_csv(results[name][0].tables[table])
    assert EXPECTED_COLUMNS[(name, table)] <= set(df.columns)
    assert len(df) > 0


def test_kato_send_buffer_starvations_outnumber_penalisations(results: dict) -> None:
    df = pd.read_csv(results["kato"][0].tables["runs at 1 MiB"])
    assert (df["conn.mptcp.sndbuf_blocked_episodes"] > df["conn.mptcp.penalisations"]).all()


def _nsdi(results: dict) -> pd.DataFrame:
    df = pd.read_csv(results["nsdi12-fig4"][0].tables["goodput vs receive buffer"])
    return df[df["variant"] == "queue as time"].pivot(index="rcvbuf_kb", columns="config", values="goodput_mbps")


@pytest.mark.parametrize("kb", [100, 150, 200])
def test_nsdi12_m1_m2_beats_regular_mptcp_at_100_to_200_kb(results: dict, kb: int) -> None:
    g = _nsdi(results)
    assert g.loc[kb, "MPTCP + M1 + M2"] > 1.2 * g.loc[kb, "MPTCP regular"]


def _stms(results: dict) -> pd.DataFrame:
    return pd.read_csv(results["stms"][0].tables["tables"])


@pytest.mark.xfail(strict=True, reason=(
    "finding (seed 002 not reproduced): with the slides' 6 MB host buffers and a 30 KB in-network buffer, "
    "neither STMS variant beats minRTT by 5 % in the engine (both readings of where the buffer sits); "
    "strict, so the test fails loudly if the engine starts to show the slides' gain"))
@pytest.mark.parametrize("reading", ["both", "fast"])
def test_stms_beats_minrtt_with_a_30_kb_in_network_buffer(results: dict, reading: str) -> None:
    t = _stms(results)
    t = t[(t["reading"] == reading) & (t["in_network_buffer"] == "30KB") & (t["slow_rtt"] == "200ms")].set_index("scheduler")
    best = max(t.loc["STMS calc", "aggregate_mbps"], t.loc["STMS adj", "aggregate_mbps"])
    assert best >= 1.05 * t.loc["minRTT", "aggregate_mbps"]


def test_stms_gap_calculation_beats_minrtt_when_the_host_buffer_also_limits(results: dict) -> None:
    h = pd.read_csv(results["stms"][0].tables["host-buffer sweep"])
    h = h[(h["in_network_buffer"] == "30KB") & (h["host_buffer"] == "1MB")].set_index("scheduler")
    assert h.loc["STMS calc", "aggregate_mbps"] > 1.05 * h.loc["minRTT", "aggregate_mbps"]


@pytest.mark.parametrize("config", ["N1=10,N2=10", "N1=30,N2=10"])
def test_olia_leaves_more_to_single_path_users_than_lia_in_scenario_a(results: dict, config: str) -> None:
    df = pd.read_csv(results["olia"][0].tables["per-user throughput"])
    t2 = df[(df["scenario"] == "A") & (df["config"] == config) & (df["users"] == "type2")].set_index("cc")["per_user_mbps"]
    assert t2["olia"] > t2["lia"]
    assert t2["lia"] < t2["single-path"]


def test_quick_outputs_land_in_their_own_directories(results: dict) -> None:
    dirs = {Path(out).name for _, out in results.values()}
    assert dirs == set(OURS)
