"""Smoke tier of the seed 001–004 reproductions (kato, stms, nsdi12-fig4, olia): each runs in
quick mode (together well under a minute on two cores), writes its tables and figures with the
expected columns and a verdict, and the papers' qualitative claims are checked on its tables.
A claim the simulator does not show is a strict xfail naming the finding, so it fails loudly
once the engine starts to show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mptcplab.experiments import names
from mptcplab.experiments import load
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
    assert res.claims is load(name).CLAIMS and res.discussion.strip()
    assert res.tick_overlaps == [], res.tick_overlaps
    assert {p.suffix for p in res.figures} == {".png", ".svg"}
    assert all(p.exists() and p.stat().st_size > 0 for p in [*res.figures, *res.tables.values()])
    assert (out / "section.md").read_text().count("**Verdict:") == 1
    assert res.runtime_s < 90, f"{name} took {res.runtime_s:.0f} s in quick mode (budget about 60 s)"


EXPECTED_COLUMNS = {
    ("kato", "send-buffer sweep"): {"queue", "sndbuf", "mptcp_goodput_bps", "slow_share", "tcp_fast_goodput_bps", "regime",
                                    "sndbuf_blocked_episodes", "penalisations", "fast_penalisations",
                                    "slow_penalisations"},
    ("kato", "runs at 1 MiB"): {"conn.mptcp.goodput_bps", "conn.mptcp.sndbuf_blocked_episodes",
                                "conn.mptcp.penalisations", "sf.mptcp.fast.penalisations", "sf.mptcp.slow.penalisations"},
    ("kato", "run 4 time series"): {"subflow", "metric", "time_s", "value"},
    ("kato", "queue scan at 1 MiB"): {"queue_packets", "mptcp_goodput_bps", "fast_penalisations", "slow_penalisations"},
    ("stms", "tables"): {"reading", "in_network_buffer", "slow_rtt", "scheduler", "aggregate_mbps", "fast_mbps",
                         "fast_loss_pct", "ooo_p99_ms", "fast_utilisation"},
    ("stms", "host-buffer sweep"): {"in_network_buffer", "host_buffer", "scheduler", "aggregate_mbps"},
    ("stms", "ablation"): {"variant", "in_network_buffer_kb", "minrtt_aggregate_mbps", "minrtt_fast_mbps",
                           "minrtt_fast_loss_pct", "minrtt_fast_utilisation_pct", "sptcp_fast_mbps", "stms_gain_pct"},
    ("stms", "free window space"): {"scheduler", "slow_rtt", "repeat", "free_share", "sndbuf_limited_s"},
    ("nsdi12-fig4", "TBF readings (ablation)"): {"reading", "config", "rcvbuf_kb", "goodput_mbps", "mean_rtt_3g_ms"},
    ("nsdi12-fig4", "ablation"): {"variant", "rcvbuf_kb", "share_of_links_pct", "mean_rtt_3g_s", "penalisations"},
    ("nsdi12-fig4", "goodput vs receive buffer"): {"variant", "config", "rcvbuf_kb", "goodput_mbps", "goodput_mbps_ci95"},
    ("olia", "per-user throughput"): {"scenario", "config", "cc", "users", "per_user_mbps", "paper_lia_mbps",
                                      "theory_with_probe_mbps"},
    ("olia", "ablation (scenario B)"): {"variant", "runs", "red_sp_mbps", "blue_sp_mbps", "red_mp_mbps", "blue_mp_mbps",
                                        "red_change_mbps", "red_change_ci95", "blue_change_mbps", "blue_change_ci95",
                                        "direction", "blue_x_sp_mbps", "blue_t_sp_mbps", "blue_x_mp_mbps",
                                        "blue_t_mp_mbps", "red_t_mp_mbps", "red_xt_mbps", "red_xt_rtos",
                                        "red_xt_rtt_ms", "red_t_rtt_ms"},
    ("olia", "ablation (scenario A)"): {"variant", "config", "runs", "type1_mbps", "type2_mbps", "type1_shared_mbps",
                                        "type1_shared_rtos", "type1_shared_rtt_ms", "type1_own_rtt_ms"},
}


@pytest.mark.parametrize(("name", "table"), list(EXPECTED_COLUMNS))
def test_tables_have_the_expected_columns(results: dict, name: str, table: str) -> None:
    df = pd.read_csv(results[name][0].tables[table])
    assert EXPECTED_COLUMNS[(name, table)] <= set(df.columns)
    assert len(df) > 0


@pytest.fixture(scope="module")
def kato(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The Kato section alone (quick mode), so its tests do not depend on the other sections."""
    return run_one("kato", tmp_path_factory.mktemp("kato"), quick=True, jobs=2, progress=None)


def test_kato_per_subflow_penalisations_sum_to_the_connection_count(kato: Any) -> None:
    """Every M2 halving is counted once on the connection and once on the subflow it halved,
    so the subflows' counts sum to the connection's in every run and at every sweep point."""
    runs = pd.read_csv(kato.tables["runs at 1 MiB"])
    assert (runs["sf.mptcp.fast.penalisations"] + runs["sf.mptcp.slow.penalisations"]
            == runs["conn.mptcp.penalisations"]).all()
    sweep = pd.read_csv(kato.tables["send-buffer sweep"])
    assert (sweep["fast_penalisations"] + sweep["slow_penalisations"] == sweep["penalisations"]).all()


def _halved_without_loss(ts: pd.DataFrame, subflow: str) -> pd.Series:
    """Sampling intervals in which the subflow's window fell below 0.6 × the previous sample while
    it retransmitted nothing: a halving (0.5, plus at most a few segments of growth within
    one 1 ms sample) that no loss response explains, hence M2's (the engine's only other reductions are
    loss responses and idle restarts, and a bulk sender with a full buffer never idles)."""
    w = ts[ts["subflow"] == subflow].pivot(index="time_s", columns="metric", values="value")
    return (w["cwnd_bytes"] < 0.6 * w["cwnd_bytes"].shift(1)) & (w["retransmitted_segments"].diff() == 0)


def test_kato_section_names_the_subflow_that_was_actually_penalised(kato: Any) -> None:
    """The mechanism claim (paper: the slow subflow is penalised) must carry the subflow whose
    window M2 actually halved in run 4, read here independently of the engine's counters from
    the window and retransmission series of timeseries_run4.csv; the discussion must name the
    same subflow, and the verdict is reproduced exactly when that subflow is the slow one."""
    ts = pd.read_csv(kato.tables["run 4 time series"])
    halved = {p: _halved_without_loss(ts, p) for p in ("fast", "slow")}
    hit = [p for p in ("fast", "slow") if halved[p].any()]
    expected = hit[0] if len(hit) == 1 else "both" if hit else "neither"
    claim = next(c for c in kato.claims if c.id == "penalised-subflow")
    assert claim.paper == "slow"
    assert kato.measured["penalised-subflow"].value == expected
    assert (kato.verdicts()["penalised-subflow"] == "reproduced") == (expected == "slow")
    if expected in ("fast", "slow"):
        other = "slow" if expected == "fast" else "fast"
        assert f"M2 halves the {expected} subflow" in kato.discussion
        assert f"M2 halves the {other} subflow" not in kato.discussion
    # The engine's cumulative per-subflow count rises in exactly those intervals.
    for p in ("fast", "slow"):
        w = ts[ts["subflow"] == p].pivot(index="time_s", columns="metric", values="value")
        rose = w["penalisations"].diff() > 0
        assert rose.equals(halved[p]), p


def _nsdi(results: dict, variant: str = "queue as time") -> pd.DataFrame:
    df = pd.read_csv(results["nsdi12-fig4"][0].tables["goodput vs receive buffer"])
    return df[df["variant"] == variant].pivot(index="rcvbuf_kb", columns="config", values="goodput_mbps")


@pytest.mark.parametrize("kb", [150, 200])
def test_nsdi12_m1_m2_beats_regular_mptcp_at_100_to_200_kb(results: dict, kb: int) -> None:
    """NSDI '12 Fig. 4(c) vs 4(a): M1 + M2 removes regular MPTCP's dip. With Linux 3.2's window
    (¾ of the buffer: 112.5 and 150 KB) regular MPTCP is window-bound behind 3G's queue (the
    engine gives about 3 Mbit/s, under half of TCP over WiFi's 7.7); M1 + M2 gets 7.8–8.4. At
    100 KB (75 KB of window) regular MPTCP is not held back (its window fills with WiFi), so
    there is no dip to remove. The bound 1.2× leaves margin for engine changes that do not undo
    the mechanism; runs without jitter are deterministic."""
    g = _nsdi(results)
    assert g.loc[kb, "MPTCP + M1 + M2"] > 1.2 * g.loc[kb, "MPTCP regular"]


def test_nsdi12_m2_penalises_the_3g_subflow_and_the_counts_agree(results: dict) -> None:
    """Seed 003: M2 halves the higher-latency subflow's window. The mechanism claim is read from
    the per-subflow penalisation series of the 600 KB run; that run is the sweep's 600 KB
    MPTCP + M1 + M2 run (same scenario and seed), so its per-subflow counts must sum to the
    connection's count in the table, and the discussion must name the same subflow."""
    res = results["nsdi12-fig4"][0]
    ts = pd.read_csv(res.tables["penalisation series (600 KB)"])
    final = ts.groupby("subflow")["penalisations"].max()
    row = pd.read_csv(res.tables["goodput vs receive buffer"]).query(
        "variant == 'queue as TBF' and config == 'MPTCP + M1 + M2' and rcvbuf_kb == 600").iloc[0]
    assert final.sum() == row["penalisations"]
    assert final["3g"] > 0 and final["wifi"] == 0
    assert res.measured["penalised-subflow"].value == "3G"
    assert res.verdicts()["penalised-subflow"] == "reproduced"
    assert "M2 acted on the higher-latency 3G subflow" in res.discussion


def test_nsdi12_ablation_starts_from_the_run_the_claims_read(results: dict) -> None:
    """The ablation's unmodified variant is the sweep's MPTCP + M1 + M2 run with TBF as run
    (same scenario, same seed, no random component): the same goodput at each of its buffers.
    Switching M1 and M2 off leaves no penalisation and no opportunistic retransmission, while the
    run as is has both at 600 KB (the 3G window halved, WiFi resending)."""
    res = results["nsdi12-fig4"][0]
    abl = pd.read_csv(res.tables["ablation"])
    g = _nsdi(results, "queue as TBF")
    full = abl[abl["variant"] == "linux-v0.9x (as run)"].set_index("rcvbuf_kb")["share_of_links_pct"]
    for kb, share in full.items():
        assert share == pytest.approx(100 * g.loc[kb, "MPTCP + M1 + M2"] * 1e6 / 10e6, rel=1e-9)
    off = abl[(abl["variant"] == "M1 and M2 off") & (abl["rcvbuf_kb"] == 600)].iloc[0]
    on = abl[(abl["variant"] == "linux-v0.9x (as run)") & (abl["rcvbuf_kb"] == 600)].iloc[0]
    assert off["penalisations"] == 0 and off["m1"] == 0
    assert on["penalisations"] > 0 and on["m1"] > 0


def test_nsdi12_packet_and_time_queues_bound_the_same_backlog(results: dict) -> None:
    """At a constant link rate a queue of 80 ms holds 8 Mbit/s × 80 ms = 80 kB ≈ 53 packets of
    1500 B, and 2 s at 2 Mbit/s = 500 kB ≈ 333 packets, so graphs a and a-htb differ only by
    that rounding (500 B of queue): the engine cannot show seed 003's TBF/HTB difference, and
    graph a's claim is read on TBF as seed 003 ran it instead. The rounding can move a single
    drop, after which a deterministic run follows another trajectory, so single points may
    differ; the dip quantity, regular MPTCP over TCP on WiFi averaged over 100–200 KB, must
    agree to 1 %, and most points to 1 %."""
    res = results["nsdi12-fig4"][0]
    df = pd.read_csv(res.tables["goodput vs receive buffer"])
    w = df.pivot_table(index=["config", "rcvbuf_kb"], columns="variant", values="goodput_mbps")
    rel = ((w["queue as time"] - w["queue as packets"]).abs() / w["queue as packets"])
    assert (rel < 0.01).mean() > 0.9
    g = _nsdi(results)
    dip_time = sum(g.loc[kb, "MPTCP regular"] / g.loc[kb, "TCP over WiFi"] for kb in (100, 150, 200)) / 3
    assert dip_time == pytest.approx(res.measured["dip-packet-queues"].value, rel=0.01)
    assert res.verdicts()["dip-packet-queues"] == "reproduced"


NSDI_NOT_SHOWN = {
    "fills-both-links": "with TBF as seed 003 ran it (Mininet's bucket on a veth) and Linux 3.2's window (¾ of the "
                        "buffer) MPTCP + M1 + M2 fills 88.6 % of the 10 Mbit/s at 600 KB (92.2 % at 800 KB, 92.6 % at "
                        "1 MB, 94.6 % at 2 and 4 MB): WiFi carries 7.48 of 8 Mbit/s, 3G 1.42 of 2; M2 off or the whole "
                        "buffer as window would reach ≥ 90 % everywhere",
    "high-jitter": "with high jitter (TBF as run) MPTCP + M1 + M2 gets 1.03× TCP over WiFi at 600 KB: jitter slows TCP as "
                   "much, and a larger reordering tolerance lifts both",
    "no-dip-time-queues": "with TBF as seed 003 ran it (25 000 / 33 750 B limits) regular MPTCP reaches 0.67× TCP over "
                          "WiFi at 100–200 KB (0.46× at 100 KB), up from 0.59× with the buffers as time",
    "no-dip-graph-b": "with TBF as run MPTCP + M1 reaches 0.71× TCP over WiFi at 100–200 KB (0.56× at 100 KB)",
}


@pytest.mark.parametrize("claim", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=f"finding (seed 003 not reproduced; full-mode numbers): {why}; strict, "
                                                                "so it fails loudly once the engine shows the claim"))
    for c, why in NSDI_NOT_SHOWN.items()])
def test_nsdi12_headline_claim_is_reproduced(results: dict, claim: str) -> None:
    assert results["nsdi12-fig4"][0].verdicts()[claim] == "reproduced"


def test_stms_host_buffer_claim_is_read_at_the_rule_not_at_a_sweep_point() -> None:
    """The slides do not state the host buffer of "20 % when the host buffer is limited"; the
    value shown is read at NSDI '12's Σ BW_i × RTT_max with the slides' rates and RTTs: (30 + 30)
    Mbit/s × 200 ms / 8 = 1 500 000 B, not at 1 MB, the sweep point that happened to agree
    before. The claim itself is declared not testable (its deciding setup value is missing)."""
    stms = load("stms")
    assert stms.HOST_LIMITED_BYTES == 1_500_000 and stms.HOST_LIMITED == "1500KB"
    assert stms.HOST_LIMITED in stms.HOST_BUFFERS
    claim = next(c for c in stms.CLAIMS if c.id == "gain-host")
    assert "1.5 MB" in claim.quantity and claim.paper == 20.0 and not claim.calibration and claim.not_testable
    assert sum(c.calibration for c in stms.CLAIMS) == 0


def test_stms_beats_minrtt_far_below_the_buffer_rule(results: dict) -> None:
    """At a 500 KB host buffer the v0.9x meta socket holds ceil(500000 / 4352) = 115 skbs of
    1420 B, 163 KB of data: a ninth of Σ BW × RTT_max (1.5 MB), so minRTT strands window space
    on slow-path data for a 200 ms RTT each and is send-buffer-limited much of the run, while
    STMS can keep the fast path alone busy (its 75 KB bandwidth-delay product fits, with a
    30 KB queue on top too). The quick run measures 8.8 and 15.0 Mbit/s for minRTT against
    21.8–28.1 for both STMS variants (1.8–2.9×); 1.3× leaves margin."""
    h = pd.read_csv(results["stms"][0].tables["host-buffer sweep"])
    for buf in ("30KB", "150KB"):
        t = h[(h["in_network_buffer"] == buf) & (h["host_buffer"] == "500KB")].set_index("scheduler")["aggregate_mbps"]
        assert min(t["STMS calc"], t["STMS adj"]) > 1.3 * t["minRTT"], buf


def test_stms_reduces_out_of_order_delay(results: dict) -> None:
    """Slides, Microbenchmarks: STMS reduces the time from arrival to in-order delivery. With 30 KB
    on both paths the engine gives 16 ms for gap adjustment against 62 ms for minRTT (full mode),
    so the supporting claim holds with a wide margin."""
    res = results["stms"][0]
    assert res.verdicts()["ooo-delay"] == "reproduced" and res.measured["ooo-delay"].value < 0.5


STMS_NOT_SHOWN = {
    "overall-30KB": "15.1 Mbit/s (slides 31): in iPerf's 10 s the slow path carries 2.4 Mbit/s behind its own 30 KB "
                    "queue (60 s: about 28 Mbit/s in all)",
    "gain-in-network": "STMS with gap adjustment gains +52 % at 30 KB (slides +25 %): minRTT's slow path carries "
                       "little",
}


@pytest.mark.parametrize("claim", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=f"finding (seed 002 not reproduced; full-mode numbers): {why}; strict, "
                                                                "so it fails loudly once the engine shows the claim"))
    for c, why in STMS_NOT_SHOWN.items()])
def test_stms_headline_claim_is_reproduced(results: dict, claim: str) -> None:
    assert results["stms"][0].verdicts()[claim] == "reproduced"


@pytest.mark.xfail(strict=True, reason=(
    "finding (seed 002 not reproduced; full-mode numbers): with the buffer on the fast path only, STMS with gap adjustment changes the "
    "aggregate by about +7 % at 30 KB (slides +25 %); strict, so it fails loudly once the engine shows the gain"))
def test_stms_gain_with_the_buffer_on_the_fast_path_only_lies_within_tolerance(results: dict) -> None:
    res = results["stms"][0]
    claim = next(c for c in res.claims if c.id == "gain-in-network-fast-only")
    assert claim.tolerance is not None and claim.tolerance.holds(claim.paper, res.measured[claim.id].value)


@pytest.mark.parametrize("config", ["N1=10,N2=10", "N1=30,N2=10"])
def test_olia_leaves_more_to_single_path_users_than_lia_in_scenario_a(results: dict, config: str) -> None:
    df = pd.read_csv(results["olia"][0].tables["per-user throughput"])
    t2 = df[(df["scenario"] == "A") & (df["config"] == config) & (df["users"] == "type2")].set_index("cc")["per_user_mbps"]
    assert t2["olia"] > t2["lia"]
    assert t2["lia"] < t2["single-path"]


def test_olia_the_probe_rate_is_fitted_on_one_cell_of_scenario_b() -> None:
    from mptcplab.experiments import olia

    # Scenario B, red users multipath: 30 users · 2.04 = C_X + C_T − 15·x = 63 − 15·x Mbit/s, so
    # x = (63 − 61.2)/15 = 0.12 Mbit/s = 8 · 1500 B / 0.1 s: the simulated routes' 100 ms RTT.
    assert olia.X_FIT_BPS == pytest.approx(120_000)
    assert [c.id for c in olia.CLAIMS if c.calibration] == ["th-B-mp"]


def test_olia_model_claims_get_the_verdicts_of_the_closed_forms() -> None:
    from mptcplab.experiments import olia
    from mptcplab.experiments.base import claim_verdict

    by_id = {c.id: c for c in olia.CLAIMS}
    got = {k: claim_verdict(by_id[k], m) for k, m in olia.model_measured().items()}
    # Closed forms at x = 0.12 Mbit/s (C1 = C2 = 1, N2 = 10): type 2 of A gets 1 − (N1/10)·x =
    # 0.88 (N1 = 10: the printed 0.94 ± 0.005 misses) and 0.64 (N1 = 30: 0.8 ± 0.05 misses);
    # type 1 of A gets 1; B with red users on TCP 63/30 = 2.1 for everyone (blue users use T
    # beyond the probe); without probing cost 1 (A, C) and 2.1 (B) everywhere.
    # C checked against itself: the multipath cell 1.04 = 1 + x gives x = 0.04, at which a
    # single-path user gets 1 − (N1/10)·0.04 = 0.96 (not 0.94 ± 0.005) and 0.88 (not 0.8 ± 0.05);
    # the check needs C's topology, which the slides do not give: not testable. The overhead
    # reading's cells are alternative readings (never counted).
    assert {k: v for k, v in got.items() if not k.endswith("-overhead")} == {
        "th-A-t1": "reproduced", "th-A10-t2": "not reproduced", "th-A30-t2": "not reproduced",
        "th-B-sp": "reproduced", "th-B-mp": "calibration target", "th-C10-consistency": "not testable",
        "th-C30-consistency": "not testable", "th-no-probe": "reproduced",
    }
    assert {v for k, v in got.items() if k.endswith("-overhead")} == {"alternative reading"}
    m = olia.model_measured()
    assert (m["th-A10-t2"].value, m["th-A30-t2"].value) == (pytest.approx(0.88), pytest.approx(0.64))
    assert (m["th-C10-consistency"].value, m["th-C30-consistency"].value) == (pytest.approx(0.96), pytest.approx(0.88))


def test_olia_figure_has_a_legend_in_every_panel_and_each_slides_marker_on_its_bar() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer

    from mptcplab.experiments import olia

    # Fake runs (every user 0.5 Mbit/s): the figure's layout needs no simulation.
    runs = {(s, c, cc, u): [0.5, 0.5] for s, c, _, _ in olia.CASES
            for cc in (olia.CCS if s == "A" else ("lia", "olia")) for u in olia.USER_TYPES[s]}
    table = olia.per_user_table(runs)
    fig = olia.figure(table)
    for ax, scen in zip(fig.axes, "ABC", strict=True):
        legend = ax.get_legend()
        assert legend is not None, f"scenario {scen} has no legend"
        bars = {c.get_label(): c for c in ax.containers if isinstance(c, BarContainer)}
        labels = {t.get_text() for t in legend.get_texts()}
        assert set(bars) | {"slides: measured (on its algorithm's bar)", "slides: optimum with probing cost"} <= labels
        t = table[table["scenario"] == scen]
        keys = [(c, u) for c in dict.fromkeys(t["config"]) for u in olia.USER_TYPES[scen]]
        # Each slides value sits on the bar of the algorithm its column names, and nowhere else.
        expected = set()
        for label, cont in bars.items():
            cc = next(k for k, name in olia.CC_NAMES.items() if label.endswith(f" on {name}"))
            for patch, (c, u) in zip(cont.patches, keys, strict=True):
                cell = olia.paper_cell(scen, c, cc, u)
                if cell is not None:
                    expected.add((round(patch.get_x() + patch.get_width() / 2, 9), round(cell.value / 1e6, 9)))
        got = {(round(float(x), 9), round(float(y), 9)) for line in ax.get_lines() if line.get_marker() == "D"
               for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)}
        assert got == expected and expected
    plt.close(fig)


def test_olia_ablation_starts_from_the_runs_the_claims_read(results: dict) -> None:
    """The ablation's as-run and OLIA rows are the section's own runs (same runs, no random
    component), so they give the claims' values exactly; every other row changes one thing."""
    from mptcplab.experiments import olia

    res = results["olia"][0]
    m = res.measured
    b = pd.read_csv(res.tables["ablation (scenario B)"]).set_index("variant")
    a = pd.read_csv(res.tables["ablation (scenario A)"]).set_index(["variant", "config"])
    assert list(b.index) == [v[0] for v in olia.ABLATIONS]
    for cid, col in olia.B_CELLS.items():
        assert b.loc[olia.AS_RUN, col] == pytest.approx(m[cid].value, rel=1e-12)
    assert b.loc[olia.AS_RUN, "direction"] == m["dir-B"].value
    for config, short in (("N1=10,N2=10", "A10"), ("N1=30,N2=10", "A30")):
        for label, cc in ((olia.AS_RUN, "lia"), (olia.OLIA_ROW, "olia")):
            assert a.loc[(label, config), "type2_mbps"] == pytest.approx(m[f"sim-{short}-{cc}-t2"].value, rel=1e-12)
    assert "**Ablation** (not counted" in res.discussion


def test_olia_ablation_obeys_link_capacities_and_rfc6356s_cap(results: dict) -> None:
    """The ablation's physics, in every variant.

    Capacity: goodput counts payload, and every packet also carries at least 52 B of headers
    per 1500 B (3.5 %), so the subflows crossing a link carry less than its rate; in steady
    state the data a receiver holds out of order when the measurement window opens (delivered
    inside it) is on average what it holds when the window closes (not delivered), so the
    window's edges take nothing on average. Scenario B, 15 users of each colour: X (27 Mbit/s)
    carries blue's x subflows and, with red users multipath, red's second path, which crosses
    X and then T; T (36 Mbit/s) carries blue's t subflows, red's T path and that second path
    again. Scenario A: s1-core (N1 Mbit/s) carries both of type-1's paths; shared (10 Mbit/s)
    carries type-1's second path and the 10 type-2 users. A variant that moved a route off a
    link, or counted a subflow's bytes on one link only, breaks these.

    RFC 6356 under RED: RED drops each arriving packet with one probability, set by the average
    queue, whoever sent it; an LIA subflow grows by min(α/w_total, 1/w_i) per acknowledged
    segment, at most Reno's 1/w_i, and halves on a loss as Reno does. Blue's subflow on T and a
    red user's TCP flow cross the same links with the same 100 ms base RTT, so with red users
    on TCP blue's T subflow cannot average more than a red user, delayed ACKs on or off. (Under
    drop-tail, packet timing decides instead: without delayed ACKs the two are about equal.)
    """
    from mptcplab.experiments import olia

    res = results["olia"][0]
    b = pd.read_csv(res.tables["ablation (scenario B)"]).set_index("variant")
    a = pd.read_csv(res.tables["ablation (scenario A)"])
    for v, r in b.iterrows():
        assert 15 * r["blue_x_sp_mbps"] < 27 and 15 * (r["blue_t_sp_mbps"] + r["red_sp_mbps"]) < 36, v
        assert 15 * (r["blue_x_mp_mbps"] + r["red_xt_mbps"]) < 27, v
        assert 15 * (r["blue_t_mp_mbps"] + r["red_t_mp_mbps"] + r["red_xt_mbps"]) < 36, v
    for _, r in a.iterrows():
        n1 = int(r["config"].split(",")[0].split("=")[1])
        assert r["type1_mbps"] < 1 and n1 * r["type1_shared_mbps"] + 10 * r["type2_mbps"] < 10, (r["variant"], n1)
    for v in (olia.RED_LOW, olia.RED_HIGH, olia.RED_DELACK):
        assert b.loc[v, "blue_t_sp_mbps"] < b.loc[v, "red_sp_mbps"], v


def test_quick_outputs_land_in_their_own_directories(results: dict) -> None:
    dirs = {Path(out).name for _, out in results.values()}
    assert dirs == set(OURS)


def test_kato_ablation_shows_the_sender_side_queue_with_tsq_carrying_the_slow_subflow(kato: Any) -> None:
    """The ablation's physics. With TCP small queues (Linux 4.x: at most 262 144 B per subflow
    in the sender's qdisc), the fast path's queueing delay stays below 262 144 B × 8 / 100 Mbit/s
    = 21 ms over its 0.1 ms base RTT, far under the slow path's 80 ms, and the slow subflow
    carries data. Without TSQ a queue in the sender is, for TCP, the same as a queue in a router:
    the two variants give identical runs, and in both the fast subflow's queue holds all the data
    the send buffer has (241 skbs, 342 220 B: at most 27.4 ms at 100 Mbit/s, so its RTT stays
    under the slow path's 80 ms); its window never fills, minRTT never turns to the slow
    subflow, and the fast one carries almost everything."""
    import pandas as pd

    abl = pd.read_csv(kato.tables["ablation at 1 MiB"]).set_index("variant")
    full = abl.iloc[0]
    assert full["fast_mean_rtt_s"] < 0.0001 + 262_144 * 8 / 100e6
    assert full["slow_goodput_bps"] > 0.1 * full["mptcp_goodput_bps"]
    off, router = abl.loc["TCP small queues off"], abl.loc["queues in a router"]
    assert off.equals(router.rename(off.name))
    assert off["slow_goodput_bps"] < 0.01 * off["mptcp_goodput_bps"]
    # Base RTT + the send buffer's data queued + one 1500-byte packet in service.
    assert full["fast_mean_rtt_s"] < off["fast_mean_rtt_s"] < 0.0001 + (342_220 + 1500) * 8 / 100e6
    # The meta socket's skb charge: a full 1 MiB buffer holds ceil(1048576 / 4352) = 241 skbs of
    # 1420 B, 342 220 B of data, where charged in payload bytes it holds 1 048 576 B. Data
    # sent after a segment on the 80 ms path waits for its DATA_ACK, so a buffer holding three
    # times as much data cannot move less; and in both runs the writer still starves.
    payload = abl.loc["send buffer charged in payload bytes"]
    assert payload["mptcp_goodput_bps"] > full["mptcp_goodput_bps"]
    assert full["starvations"] > 0 and payload["starvations"] > 0
    # A build whose one-MSS skbs fit kmalloc-2048 (2304 B) holds ceil(1048576 / 2304) = 456 of
    # them, 647 520 B: between the two, by the same argument.
    small = abl.loc["a kernel build without wireless mesh (2304 B per skb)"]
    assert full["mptcp_goodput_bps"] < small["mptcp_goodput_bps"] < payload["mptcp_goodput_bps"]
    # Upstream Linux with the same sysctls charges its MPTCP socket the payload plus a few bytes
    # per fragment and sizes it tcp_wmem[0] (1 MiB) plus its subflows' buffers: more than 1 MiB
    # of data against the v0.9x meta socket's 342 220 B, so it cannot move less either.
    upstream = abl.loc["upstream Linux stack instead (same sysctls)"]
    assert upstream["mptcp_goodput_bps"] > full["mptcp_goodput_bps"]
    # M2 without a blocking window acts only in calls that find the send buffer full.
    assert full["rbuf_calls_full"] <= full["rbuf_calls"]
    assert full["slow_penalisations"] + full["fast_penalisations"] <= full["rbuf_calls"]
