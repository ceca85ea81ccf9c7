"""Seed 000 (Chen & Towsley) reproductions: each runs in quick mode (or smaller, through the
modules' REPS knobs), writes its tables and figures with the expected columns, returns a
verdict, and shows the qualitative behaviour the simulator must reproduce."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mptcplab.experiments import REGISTRY, load
from mptcplab.experiments.base import Context, Result

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces" / "cellular"


@pytest.fixture(autouse=True)
def _shared_traces() -> None:
    # The cellular links replay the shared capacity traces: they must be beside the repository.
    assert TRACES.is_dir(), f"needs the shared traces at {TRACES}"

SEED000 = ["chen-towsley-fig2", "chen-towsley-fig3", "chen-towsley-fig5", "chen-towsley-fig6",
           "chen-towsley-fig7", "chen-towsley-fig8"]


def _run(name: str, out: Path, monkeypatch: pytest.MonkeyPatch, reps: tuple[int, int] | None = None) -> Result:
    mod = load(name)
    if reps is not None:
        monkeypatch.setattr(mod, "REPS", reps)
    res = mod.run(Context(out=out / name, quick=True, jobs=1))
    assert res.claims is mod.CLAIMS and res.discussion.strip()
    # Figs. 7-8 have their own links (congestion loss, a finite cellular buffer): their own block.
    assert res.assumptions is not None and res.assumptions[0] in ("chen-towsley", "chen-towsley-bloat")
    for f in res.figures:
        assert f.exists() and f.stat().st_size > 0
    assert {f.suffix for f in res.figures} >= {".png", ".svg"}
    return res


def _table(res: Result, key: str) -> pd.DataFrame:
    return pd.read_csv(res.tables[key])


def test_registry_lists_seed000_in_order() -> None:
    names = list(REGISTRY)
    assert [n for n in names if n.startswith("chen-towsley")] == SEED000


def test_fig2_packets_grow_with_gamma_and_stay_below_the_loss_free_model(tmp_path, monkeypatch) -> None:
    from mptcplab.experiments.base import ALTERNATIVE, INCONSISTENT, REPRODUCED

    res = _run("chen-towsley-fig2", tmp_path, monkeypatch, (2, 2))
    t = _table(res, "packets vs gamma")
    assert {"gamma", "packets", "eq3_packets", "eq9_packets", "delta_rounds"} <= set(t.columns)
    v = res.verdicts()
    # Supporting trend claims, from the run's own numbers: ρ is the rank correlation of the table, the
    # verdict its ≥ 0.5 threshold; the share at or below Eq. (3) is the table's and a majority (the
    # 0.9 % loss holds a WiFi subflow below the loss-free growth).
    rho = float(t[["gamma", "packets"]].corr(method="spearman").iloc[0, 1])
    assert res.measured["rising"].value == pytest.approx(rho) and (v["rising"] == REPRODUCED) == (rho >= 0.5)
    below = (t["packets"] <= t["eq3_packets"]).mean()
    assert res.measured["below-eq3"].value == pytest.approx(below) and below > 0.5 and v["below-eq3"] == REPRODUCED
    # Each run follows the downloads before it in its drawn round, listed with it (n downloads: n − 1 arrows).
    assert (t["history"].fillna("").str.count("→") == (t["earlier"] - 1).clip(lower=0)).all()
    # Eq. (9) as printed gives 264 / 176 / 171 (the roundings closest to 67 / 88 / 130, see
    # test_fig2_eq9_as_printed_misses_the_papers_numbers): a paper inconsistency, never ours.
    for carrier in ("att", "verizon", "sprint"):
        assert v[f"eq9-{carrier}"] == INCONSISTENT
        assert v[f"alt-{carrier}"] == ALTERNATIVE
    # v0.88's full-mesh path manager (the profile's fully_established join) opens the join when
    # the first data packet arrives (t0 + 2 R1), and the join's first data reach the client
    # 2 R2 later, so Δ = 2 R2 at base RTTs and Δ/R1 − 2γ is Eq. (1)'s 0 up to queueing: the
    # join's handshake and first data see at most WiFi's and cellular's queueing during the
    # join (the WiFi queue holds at most 30 ms against its 30 ms base, one R1), so |Δ/R1 − 2γ|
    # stays below 1 round, and the claim's ±0.5-round tolerance decides the verdict.
    d = res.measured["delta"].value
    assert abs(d) < 1.0
    assert (v["delta"] == REPRODUCED) == (abs(d) <= 0.5)


def test_fig2_eq9_as_printed_misses_the_papers_numbers_and_the_alternative_reading_is_close() -> None:
    import math

    from mptcplab.experiments.chen_towsley_fig2 import CLAIMS, _eq9
    from mptcplab.models import chen_towsley as ct

    p, q = 0.009, 0.991
    # Δ = 1 round by hand: round 1 has d_ss(1) = I_w = 10 packets; C(1) = 1 (k = Δ). No loss:
    # weight q^10, d(0) = 10. One loss in round 1: d(1) = 10 − 1 = 9, weight p·q^9 as printed
    # (Eq. (5)), 10·p·q^9 with the binomial factor. Eq. (9) = Σ P(k) d(k):
    printed = (10 * q**10 + 9 * p * q**9) / (q**10 + p * q**9)  # = (10q + 9p)/(q + p) = 9.991
    binomial = (10 * q**10 + 9 * 10 * p * q**9) / (q**10 + 10 * p * q**9)  # = (10q + 90p)/(q + 10p) = 9.9167
    assert ct.expected_packets_at_rounds(1, p) == pytest.approx(printed, rel=1e-12)
    assert ct.expected_packets_exactly_one_loss(1, p) == pytest.approx(binomial, rel=1e-12)
    # At the carriers' median γ, no rounding of Δ = 2γ gets within ±15 % of 67 / 88 / 130: the
    # closest are 263.7 (γ = 3.9, Δ = ⌊7.8⌋ = 7), 175.6 (γ = 4.4, Δ = ⌈8.8⌉ = 9) and 171.3
    # (γ = 6, Δ = 12), the values of the model module's doc comment.
    paper = {c.id: c.paper for c in CLAIMS}
    for carrier, gamma, closest in (("att", 3.9, 263.7), ("verizon", 4.4, 175.6), ("sprint", 6.0, 171.3)):
        e9 = _eq9(gamma)
        assert min(e9.values(), key=lambda x: abs(x - paper[f"eq9-{carrier}"])) == pytest.approx(closest, abs=0.05)
        assert all(abs(x / paper[f"eq9-{carrier}"] - 1) > 0.15 for x in e9.values())
    # The alternative reading (Δ = γ rounds, binomial S(k)) at γ = 3.9 / 4.4 / 6.0 is what the
    # issue quotes as 66.9 / 82.7 / 138.6; ours 82.58 at γ = 4.4 (the 82.7 is rounded
    # differently), interpolating linearly between ⌊γ⌋ and ⌈γ⌉ rounds.
    alt = [ct.fig2_alternative_reading(g) for g in (3.9, 4.4, 6.0)]
    assert alt == pytest.approx([66.9, 82.7, 138.6], abs=0.15)
    e3, e4 = ct.expected_packets_exactly_one_loss(3, p), ct.expected_packets_exactly_one_loss(4, p)
    assert alt[0] == pytest.approx(e3 + 0.9 * (e4 - e3), rel=1e-12) and math.isfinite(alt[0])


def test_fig3_per_subflow_rtts_wifi_flat_cellular_growing_and_no_cellular_loss(tmp_path, monkeypatch) -> None:
    from mptcplab.experiments.base import NOT_TESTABLE

    res = _run("chen-towsley-fig3", tmp_path, monkeypatch, (2, 2))
    t, w = _table(res, "RTT vs file size"), _table(res, "WiFi subflow")
    assert {"carrier", "file_size", "wifi_rtt_s", "cell_rtt_s", "gamma", "cell_rtos"} <= set(t.columns)
    # One round per repetition and reading (§III's rounds): each holds every measured configuration
    # (MPTCP over each of 3 carriers at each of 7 sizes) once, 21 measured downloads per round.
    rounds = _table(res, "rounds")
    assert set(rounds["boundary"]) == {"empty", "carried"}
    assert (rounds.groupby(["boundary", "seed"]).size() == 21).all()
    assert (rounds.groupby(["boundary", "seed", "carrier", "connections.mptcp.app.size"]).size() == 1).all()
    # WiFi subflow: 30 ms base RTT; a loss-limited window (0.9 % loss) below its 50-packet BDP queues little.
    assert 0.025 < w["mean_rtt_s"].min() and w["mean_rtt_s"].max() < 0.045
    for net in ("AT&T", "Verizon", "Sprint"):
        r = t[t["carrier"] == net].set_index("file_size")["cell_rtt_s"].dropna()
        # The loss-free cellular window fills the deep queue as the download grows; on the EVDO
        # trace, whose delivery gaps reach 11.6 s, the gaps lift even the small downloads' RTTs.
        assert r["32MB"] > (2 if net != "Sprint" else 1) * r.iloc[0], net

    # An 8 KB download is 6 segments: the initial window of 10 sends it all on WiFi before the
    # cellular subflow joins (§IV: the second flow starts after the first is established), so only
    # a download that lost a WiFi segment (0.9 % random loss) can send on the cellular subflow.
    small = rounds[rounds["connections.mptcp.app.size"] == "8KB"]
    assert (small.loc[small["sf.mptcp.cell.mean_rtt_s"].notna(), "sf.mptcp.wifi.retransmitted_segments"] > 0).all()
    m, v = res.measured, res.verdicts()

    def same(key: str, x: float) -> bool:
        """The claims' runs' value, or not testable where the two readings of the round's start
        give different verdicts (the round rule)."""
        return (m[key].value == pytest.approx(x) if m[key].value is not None
                else "outlived the hour between measurement rounds" in m[key].not_testable)

    assert same("wifi", 1e3 * w["mean_rtt_s"].iloc[(w["mean_rtt_s"] * 1e3 - 30).abs().argmax()])
    for key, net in (("att", "AT&T"), ("verizon", "Verizon"), ("sprint", "Sprint")):
        r = t[t["carrier"] == net]["cell_rtt_s"].dropna() * 1e3
        assert same(f"{key}-min", r.min()) and same(f"{key}-max", r.max())
    assert same("gamma-high", t["gamma"].max())
    # The MPTCP connection's send buffer, auto-tuned as v0.9x's mptcp_update_sndbuf (the subflows'
    # sum, at most tcp_wmem's 4 MiB maximum), charges each one-MSS skb 4352 B (the v0.9x stack's
    # truesize): at most 963 unacknowledged segments over both subflows, below the 1000-packet
    # cellular queue. The round's single-path cellular downloads are not bounded by it.
    import mptcplab
    from mptcplab.units import parse_queue, parse_size

    conn = mptcplab.load_scenario(load("chen-towsley-fig3").scenario("AT&T")).resolved
    sndbuf = parse_size(conn["connections"][0]["sndbuf"]["max"])
    queue = parse_queue(next(p for p in conn["paths"] if p["name"] == "cell")["queue"])[0]
    assert sndbuf == 4 * 2**20 and sndbuf // 4352 < queue == 1000
    # The loss rate: each carrier's link, drops over arrived packets over the rounds' downloads on it.
    lk = _table(res, "cellular links")
    lk = lk[lk["boundary"] == "empty"]
    pooled = {n: 100 * (g["queue_drops"] + g["loss_drops"]).sum() / g["arrived_packets"].sum()
              for n, g in lk.groupby("carrier")}
    assert same("cell-loss", max(pooled.values()))
    assert not next(c for c in res.claims if c.id == "cell-loss").headline
    # The low ends set the base RTTs: shown, not counted; "up to 80" has no testable definition.
    assert not any(c.headline for c in res.claims if c.id.endswith("-min") or c.id == "gamma-low")
    assert v["gamma-extreme"] == NOT_TESTABLE


def test_fig5_model_gives_the_papers_loss_rates_at_its_storage_and_the_buffered_simulation_follows(tmp_path) -> None:
    from mptcplab.experiments.base import NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED

    mod = load("chen-towsley-fig5")
    # The paper's μτ is "roughly 12" packets: F = ⌈B + 12⌉ = 12, 24, 108 for B = 0, 12, 96,
    # where its points belong (the exact μτ = 12.5 would put them at 13, 25, 113).
    assert [f for f, _ in mod.PAPER_POINTS] == [12, 24, 108]
    res = mod.run(Context(out=tmp_path / "fig5", quick=True, jobs=1))
    assert res.claims is mod.CLAIMS and res.discussion.strip() and not res.tick_overlaps
    v, m = res.verdicts(), res.measured
    # N = ⌈3b/8·(F+1)² + F⌉, b = 2: F = 12 → ⌈126.75 + 12⌉ = 139 → 0.719 %; F = 24 →
    # ⌈468.75 + 24⌉ = 493 → 0.203 %; F = 108 → ⌈8910.75 + 108⌉ = 9019 → 0.0111 %.
    assert [m[f"model-b{b}"].value for b in (0, 1, 8)] == pytest.approx([100 / 139, 100 / 493, 100 / 9019])
    assert all(v[f"model-b{b}"] == REPRODUCED for b in (0, 1, 8))
    t = _table(res, "loss vs storage")
    # With a buffer of at least one BDP the model holds: one drop per cycle of N packets, i.e.
    # arrived/N drops, plus the first slow start's overshoot, at most one window of F drops (the
    # window at most doubles past F in the round that fills the buffer). Below: at least 90 % of
    # arrived/N (a discrete window grown per ACK pair may make a cycle slightly longer than
    # Eq. (10)'s fluid one; 10 % is our allowance, not a derived bound).
    big = t[t["buffer_bdp"] >= 1]
    cycles = big["arrived"] * big["model_loss"]
    assert (big["drops"] >= 0.9 * cycles).all() and (big["drops"] <= cycles + big["F_packets"]).all()
    # A one-packet queue drops ACK-clocked bursts long before the window reaches F: far above 1/N.
    # The paper's B = 0 point is its model, whose assumption a packet link without a buffer
    # cannot meet (and the engine's smallest queue is F = 14, not 12): not testable, with why.
    zero = t[t["buffer_bdp"] == 0].iloc[0]
    # The paper's B = 0 needs a link without waiting room, which the engine cannot build: not testable.
    # The one-packet run is judged against 1/N at its own F = 14 (sim-q1): not reproduced.
    assert zero["measured_loss"] > 5 * zero["model_loss"] and v["sim-b0"] == NOT_TESTABLE
    assert "no waiting room" in mod.CLAIMS[4].not_testable and mod.CLAIMS[4].id == "sim-b0"
    assert m["sim-q1"].value == pytest.approx(100 * zero["measured_loss"]) and v["sim-q1"] == NOT_REPRODUCED
    assert zero["F_packets"] == mod.F_QMIN == 14
    # The ablation isolates the burst. With delayed ACKs (b = 2) an ACK that grows the window
    # releases three back-to-back segments; one is in service, and a one-packet queue drops the
    # third at every growth, which congestion avoidance does at least every b·w ≤ 2F segments
    # acked: loss ≥ 1/(2F) = 3.6 % at F = 14, whatever 1/N says. A queue of two or more holds
    # the burst, and so does one packet when b = 1 (an ACK releases at most two): the drops then
    # come from the storage overflowing, once per cycle, and the rate is 1/N's order; a factor
    # of 2 either way is our allowance for the discrete cycle, not a derived bound (the burst
    # case sits 15× above).
    abl = _table(res, "ablation")
    burst = abl[(abl["buffer_packets"] == 1) & (abl["b"] == 2)].iloc[0]
    assert burst["measured_loss"] >= 1 / (2 * burst["F_packets"])
    held = abl[(abl["buffer_packets"] > 1) | (abl["b"] == 1)]
    assert len(held) == len(mod.ABLATIONS) - 1 and held["ratio"].between(0.5, 2).all()
    assert "**Ablation** (not counted" in res.discussion


def test_fig6_model_claims_and_the_papers_065(tmp_path, monkeypatch) -> None:
    from mptcplab.experiments.base import INCONSISTENT, REPRODUCED

    res = _run("chen-towsley-fig6", tmp_path, monkeypatch, (1, 1))
    v, m = res.verdicts(), res.measured
    # Eq. (12) at β = 2: γ = 2 gives 1/(1 + 1)² = 0.25 and γ = 8 gives 1/(1 + 0.25)² = 0.64
    # exactly; the paper prints 0.65 with two decimals (±0.005), which 0.64 misses: a paper
    # inconsistency. The printed 61 % follows from 0.64 (1 − 0.25/0.64 = 0.609375, inside ±0.005),
    # not from 0.65 (61.5 %).
    tol = res.claims[1].tolerance
    assert (tol.rule, tol.a) == ("absolute", 0.005) and tol.holds(0.65, 0.65) and not tol.holds(0.65, 0.64)
    assert (m["eq12-from"].value, m["eq12-to"].value) == pytest.approx((0.25, 0.64), abs=1e-12)
    assert m["eq12-under"].value == pytest.approx(0.609375, abs=1e-12)
    assert (v["eq12-from"], v["eq12-to"], v["eq12-under"]) == (REPRODUCED, INCONSISTENT, REPRODUCED)
    from mptcplab.experiments import chen_towsley_fig6 as fig6

    assert fig6._carried_band().describe() in m["eq12-to"].note


def test_fig6_the_srtt_lag_not_alphas_update_causes_the_underestimation(tmp_path, monkeypatch) -> None:
    from mptcplab.experiments.base import NOT_TESTABLE

    res = _run("chen-towsley-fig6", tmp_path, monkeypatch, (3, 3))
    s, r = _table(res, "ramp samples"), _table(res, "per run")
    assert {"policy", "seed", "gamma_true", "gamma_srtt", "beta", "eff_used", "eff_fresh", "eff_true"} <= set(s.columns)
    for (_p, _seed), g in s.groupby(["policy", "seed"]):
        # The ramp starts at the first sample with a cellular queue: the 60 ms base RTT plus at
        # most the cellular window's bytes (nothing else can be queued; a subflow RTO on WiFi
        # reinjects its data onto cellular as one burst, so the first step can be large); WiFi's
        # SRTT is at least its 30 ms base RTT. Within the ramp, slow start sends at most twice
        # the drain rate, so the queue grows by at most the drained amount: ≤ 10 ms of delay per
        # 10 ms step, plus one whole packet (a sample falls between arrivals of 1500 B, 6 ms at
        # 2 Mbit/s) …
        w0, pkt = g["w2_bytes"].iloc[0], 1500 * 8 / 2e6
        assert 0.060 < g["R2_true_s"].iloc[0] <= 0.060 + w0 * 8 / 2e6 and (g["R1_s"] >= 0.030).all()
        assert g["R2_true_s"].iloc[1:].diff().max() <= 0.010 + pkt + 1e-9
        # … and ends at the first sample with γ ≥ 8, by the same bound at most that past it.
        assert 8 <= g["gamma_true"].iloc[-1] <= 8 + (0.010 + pkt) / g["R1_s"].iloc[-1]
        # The SRTT averages RTT samples that each left one RTT ago, so on a growing queue it is
        # below the true RTT (base + queue now) all through the ramp, apart from its first samples.
        assert (g["R2_srtt_s"] < g["R2_true_s"]).iloc[len(g) // 4:].all()
    # The claim is the underestimation where the paper computes its 61 %: the ramp's last sample,
    # true γ ≥ 8 (rule (3) of the section), averaged over the Linux-policy runs.
    linux = r[r["policy"] == "per_rtt"]
    assert res.measured["under"].value == pytest.approx(linux["underestimation_at_end"].mean())
    last = s[s["policy"] == "per_rtt"].groupby("seed").tail(1)
    assert (1 - last["eff_used"] / last["eff_true"]).to_numpy() == pytest.approx(
        linux.sort_values("seed")["underestimation_at_end"].to_numpy())
    # The split is exact: (1 − total) = (1 − by SRTT lag)(1 − by α's update), Σ used/Σ true =
    # Σ used/Σ fresh · Σ fresh/Σ true.
    assert (1 - r["underestimation"]).to_numpy() == pytest.approx(
        ((1 - r["by_srtt_lag"]) * (1 - r["by_alpha_update"])).to_numpy(), rel=1e-9)
    # The cellular flow never loses a packet before the ramp ends: it is in slow start, where LIA
    # recomputes α on every ACK (Linux's mptcp_ccc_cong_avoid), so α per RTT is never older than
    # the SRTTs; what remains is 10 ms sampling of windows that move between ACKs (< 2 %).
    assert (r["cell_slow_start_fraction"] == 1).all()
    assert r["by_alpha_update"].abs().max() < 0.02
    by = r.pivot_table(index="seed", columns="policy", values="underestimation")
    assert (by["per_rtt"] - by["per_ack"]).abs().max() < 0.02
    # So "α updated once per RTT" cannot act: not testable (Linux's rule), not failed.
    assert res.verdicts()["cause-alpha"] == NOT_TESTABLE and "slow start" in res.measured["cause-alpha"].not_testable
    # The ablation changes the cellular rate or WiFi's random loss. The ramp is in the cellular subflow's first
    # slow start in every variant, so α's timing stays below the same 2 %; and the cellular
    # window grows per ACK there, uncoupled from WiFi, while random loss can only cut WiFi's:
    # β = w₂/w₁ is larger with the declared loss than without.
    from mptcplab.experiments import chen_towsley_fig6 as mod6
    from mptcplab.experiments.chen_towsley_fig6 import ABLATIONS

    abl = _table(res, "ablation").set_index("variant")
    assert list(abl.index) == [a[0] for a in ABLATIONS] and (abl["runs_reaching_gamma_8"] > 0).all()
    assert (abl["cell_slow_start_fraction"] == 1).all()
    # (At the as-run rate; on slower links a 10 ms sample spans fewer, larger window steps.)
    same_rate = abl[abl["cell_rate_mbps"] == mod6.CELL_RATE_MBPS]
    assert len(same_rate) == 3 and (same_rate["by_alpha_update"].abs() < 0.02).all()
    # The slower the cellular link, the smaller its window when its queue starts to fill: β's
    # median over the ramp falls with the rate (the rule that picks the as-run rate).
    rates = abl[abl.index.str.startswith(("as run", "cellular"))].sort_values("cell_rate_mbps")
    assert rates["beta_median"].is_monotonic_increasing
    # The rule: the as-run rate is the slowest of the grid whose ramp starts at the stated γ = 2
    # (within the ±15 % default); every slower one starts above it (its initial window queues).
    start_ok = rates["gamma_at_start"] <= 2 * 1.15
    assert start_ok[rates["cell_rate_mbps"] == mod6.CELL_RATE_MBPS].all()
    assert not start_ok[rates["cell_rate_mbps"] < mod6.CELL_RATE_MBPS].any()
    assert abl["beta_median"].iloc[0] > abl["beta_median"].iloc[-1]
    assert "**Ablation** (not counted" in res.discussion


def test_fig7_restart_events_are_read_from_idle_spans_longer_than_the_rto() -> None:
    import pandas as pd

    from mptcplab.experiments.chen_towsley_fig7 import SEGMENT_BYTES, restart_events

    # 10 ms samples: sending until 0.10 s, nothing in flight 0.11-0.49 s (a 0.39 s span; plus one
    # SRTT of 30 ms since the last transmission: 0.42 s > RTO 0.23 s, a restart, window 20 → 10
    # segments), sending again, idle 0.61-0.69 s (0.08 + 0.03 = 0.11 s < 0.23 s: no restart), and
    # idle from 0.81 s to the end (never resumed: no restart).
    t = [round(0.01 * k, 2) for k in range(1, 91)]
    busy = [x <= 0.10 or 0.50 <= x <= 0.60 or 0.70 <= x <= 0.80 for x in t]
    cwnd = [20 if x < 0.50 else 10 for x in t]
    w = pd.DataFrame({
        "mptcp/wifi:in_flight_bytes": [2 * SEGMENT_BYTES if b else 0 for b in busy],
        "mptcp/wifi:cwnd_bytes": [c * SEGMENT_BYTES for c in cwnd],
        "mptcp/wifi:srtt_s": 0.03, "mptcp/wifi:rto_s": 0.23}, index=pd.Index(t, name="time_s"))
    ev = restart_events(w)
    assert len(ev) == 1
    e = ev.iloc[0]
    assert (e["start_s"], e["idle_s"]) == pytest.approx((0.11, 0.39))
    assert (e["cwnd_before"], e["cwnd_after"], bool(e["lowered"])) == (20, 10, True)


def test_fig7_cellular_rtt_is_bounded_by_the_finite_buffer_and_the_writer_decides_idling(tmp_path, monkeypatch) -> None:
    """Seed 000 §V-C as the seed describes it: the cellular RTT is an outcome of a finite
    buffer. A full buffer of B = 600 packets of 1500 B adds B / μ to the 80 ms base RTT, so no
    RTT sample, and no SRTT (an average of samples), can exceed 80 ms + (B + 1) · 12000 bit / μ
    plus one delayed-ACK timeout (40 ms): 0.8 s at 10 Mbit/s, 3.5 s in the dip. With a blocking
    writer v0.88 re-sends the segment that blocks the full send buffer on WiFi whenever it has
    room, so WiFi never stays idle for its RTO; with the stated Apache2 (non-blocking) writer,
    as run, that path never runs, and neither does it with M1 and M2 off: WiFi idles past its
    RTO. A restart lowers only a window above I_w (``tcp_cwnd_restart``)."""
    from mptcplab.experiments import _chen_towsley_links as links
    from mptcplab.experiments.base import CALIBRATION, NOT_TESTABLE
    from mptcplab.experiments.chen_towsley_fig7 import IW

    res = _run("chen-towsley-fig7", tmp_path, monkeypatch, (1, 1))
    t, runs = _table(res, "time series"), _table(res, "per run")
    assert {"time_s", "wifi_cwnd_packets", "wifi_cwnd_packets_no_restart", "cell_srtt_s"} <= set(t.columns)
    bound = lambda rate: 0.080 + (links.CELL_BUFFER_PACKETS + 1) * 12000 / rate + 0.040  # noqa: E731
    assert (runs["rtt_early_peak_s"] <= bound(links.CELL_RATE_BPS)).all()
    assert (runs["rtt_dip_peak_s"] <= bound(links.CELL_DIP_RATE_BPS)).all()
    v = res.verdicts()
    assert v["rtt-start"] == NOT_TESTABLE and v["rtt-dip"] == NOT_TESTABLE and v["rtt-early"] == CALIBRATION
    assert (runs["restarts"] == runs["restarts_engine"]).all()
    abl = _table(res, "ablation").set_index("variant")
    blocking = "a blocking writer (M1/M2 also for a full send buffer)"
    assert abl.loc[blocking, "wifi_idle_restarts"] == 0 and abl.loc[blocking, "m1"] > 0
    assert abl.loc["as run", "wifi_idle_restarts"] > 0
    assert abl.loc["opportunistic retransmission and penalisation off", "wifi_idle_restarts"] > 0
    assert (abl["restarts_lowering"] <= abl["wifi_idle_restarts"]).all()
    ev = _table(res, "idle restarts")
    assert (ev.loc[ev["lowered"], "cwnd_before"] > IW).all()
    assert res.measured["starvation"].value == pytest.approx(float(runs["starved_dip"].mean()))
    assert 0 <= runs["starved_dip"].iloc[0] <= 1 and runs["starved_dip"].iloc[0] * 12 <= runs["starvation_s"].iloc[0]


def test_fig8_downloads_in_the_bloated_phase(tmp_path, monkeypatch) -> None:
    """Seed 000 Fig. 8 with downloads started inside the bloated phase (20-32 s). A 16 MB
    download cannot beat both links at their full rates (10 Mbit/s cellular + the WiFi rate);
    a setting that never acts changes nothing: where WiFi had no idle period longer than its
    RTO with idle restart on, switching it off gives the same download, run for run; the
    ablation's "as run" row is the figure's own runs (same starts with 4 repeats)."""
    from mptcplab.experiments import _chen_towsley_links as links
    from mptcplab.experiments.chen_towsley_fig8 import ABLATIONS

    res = _run("chen-towsley-fig8", tmp_path, monkeypatch, (4, 4))
    t = _table(res, "download times")
    assert {"config", "download_time_s", "wifi_idle_restarts", "penalisations_wifi", "penalisations_cell",
            "start_s"} <= set(t.columns)
    assert t["completed"].all() and ((t["start_s"] >= 20) & (t["start_s"] < 32)).all()
    assert (t["download_time_s"] > 16e6 * 8 / (links.CELL_RATE_BPS + links.wifi_shallow_rate_bps())).all()
    by = t.pivot_table(index="repeat", columns="config", values=["download_time_s", "wifi_idle_over_rto"])
    quiet = by[("wifi_idle_over_rto", "RST w/ penl.")] == 0
    assert (by.loc[quiet, ("download_time_s", "RST w/ penl.")]
            == by.loc[quiet, ("download_time_s", "no RST w/ penl.")]).all()
    abl = _table(res, "ablation").set_index("variant")
    assert list(abl.index) == [a[0] for a in ABLATIONS] and (abl["runs_per_config"] == 4).all()
    own = t.groupby("config")["download_time_s"].mean()
    assert abl.loc["as run", "rst_vanilla_s"] == pytest.approx(own["RST w/o penl."], rel=1e-12)
    assert abl.loc["as run", "no_rst_penl_s"] == pytest.approx(own["no RST w/ penl."], rel=1e-12)
    assert "**Ablation** (not counted" in res.discussion
