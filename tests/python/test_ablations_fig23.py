"""Chen & Towsley (seed 000) Figs. 2 and 3: the ablations that explain the failing simulation
claims run beside the claims (never in a verdict), reuse the claims' seeds, and obey bounds
derived from the links, not fitted to the output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mptcplab.experiments import load
from mptcplab.experiments.base import Context, Result
from mptcplab.units import parse_duration, parse_rate

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces" / "cellular"
PACKET_BITS = 1500 * 8  # a full-sized frame: the MTU every path here carries


@pytest.fixture(autouse=True)
def _shared_traces() -> None:
    assert TRACES.is_dir(), f"needs the shared traces at {TRACES}"


def _run(name: str, out: Path, monkeypatch: pytest.MonkeyPatch, reps: tuple[int, int],
         marker: str) -> tuple[object, Result]:
    mod = load(name)
    monkeypatch.setattr(mod, "REPS", reps)
    res = mod.run(Context(out=out / name, quick=True, jobs=1))
    assert res.claims is mod.CLAIMS
    # The ablation is its own marked paragraph (never counted), and the section says what it concludes.
    assert "**Ablation** (not counted" in res.discussion and marker in res.discussion
    return mod, res


def test_fig3_ablation_table_and_bounds_from_the_queue(tmp_path, monkeypatch) -> None:
    import mptcplab
    from mptcplab.experiments import _chen_towsley_fig3_ablation as ablation
    from mptcplab.experiments import _chen_towsley_links as links

    mod, res = _run("chen-towsley-fig3", tmp_path, monkeypatch, (2, 2), "**Unexplained.**")
    abl = pd.read_csv(res.tables["ablation"])
    sprint = pd.read_csv(res.tables["Sprint traces"])
    assert {"variant", "carrier", "capacity", "queue_packets", "rtt_min_ms", "rtt_max_ms", "size_max", "gamma_max",
            "loss_pct", "runs"} <= set(abl.columns)
    nets = [net for _, net in mod.CARRIERS]
    assert list(abl["variant"]) == [v[0] for v in ablation.ABLATIONS for _ in nets]
    # The ablation's base is single downloads with no earlier one; its first row is that base for
    # every carrier.
    assert ablation.ABLATIONS[0][0] == ablation.AS_RUN and "no earlier download" in ablation.AS_RUN
    # Sprint: one row per downlink trace of the data directory, the as-run one the only EVDO trace.
    assert list(sprint["variant"]) == [n.removesuffix(".down") for n in sorted(p.name for p in TRACES.glob("*.down"))]
    assert list(sprint.loc[sprint["as_run"], "variant"]) == ["Verizon-EVDO-driving"]
    as_run = abl[abl["variant"] == ablation.AS_RUN].set_index("carrier")
    assert sprint.loc[sprint["as_run"], "rtt_max_ms"].iloc[0] == pytest.approx(as_run.loc["Sprint", "rtt_max_ms"])
    assert not any("sprint" in p.name.lower() for p in TRACES.iterdir())
    # WiFi's open facts, from single downloads with no earlier one; every WiFi RTT contains the
    # 2 × 15 ms propagation delay.
    wabl = pd.read_csv(res.tables["WiFi ablation"])
    wifi = pd.read_csv(res.tables["WiFi subflow"])
    assert list(wabl["variant"]) == [v[0] for v in ablation.WIFI_ABLATIONS]
    assert len(wifi) == len(mod.SIZES)
    assert (wabl["wifi_rtt_min_ms"] >= 30).all()

    for net in nets:
        one_way = parse_duration(links.CARRIERS[net][1])
        rows = abl[abl["carrier"] == net]
        # Lower bound, every variant: an RTT sample contains the propagation delay both ways.
        assert (rows["rtt_min_ms"] / 1e3 >= 2 * one_way).all(), net
        # Upper bound, constant-rate variants (rate C = the trace's mean, a queue of Q packets on the
        # downlink): a data packet waits behind at most Q packets and is itself serialised, (Q + 1)·1500·8/C;
        # its ACK leaves at the latest when the delayed-ACK timer fires; a pure ACK (40 B of headers + at
        # most 40 B of options) takes ≤ 80·8/C_up on the uplink and never waits behind another ACK, since
        # ACKs are spaced by at least one downlink packet time (asserted below). Every sample is below
        # base + all of that, hence so is every mean and the largest of them.
        t = np.loadtxt(TRACES / links.CARRIERS[net][0])
        rate = len(t) * PACKET_BITS / (t[-1] / 1e3)
        sc = ablation.variant_scenario(mod.scenario(net), net, "mean", 50, {})
        conn = mptcplab.load_scenario(sc).resolved["connections"][0]
        delack = parse_duration(conn["tcp"]["delack_timeout"])
        up = parse_rate(links.CARRIERS[net][2])
        assert 80 * 8 / up < PACKET_BITS / rate
        const = rows[rows["capacity"] == "mean"]
        assert set(const["queue_packets"]) == {ablation.AS_RUN_QUEUE, *ablation.QUEUE_SCAN}
        bound = 2 * one_way + (const["queue_packets"] + 1) * PACKET_BITS / rate + delack + 80 * 8 / up
        assert (const["rtt_max_ms"] / 1e3 <= bound).all(), (net, (const["rtt_max_ms"] / 1e3 / bound).max())
        # A receive buffer fixed at 87 380 B caps the connection's flight at ⌈87 380 / 1448⌉ = 61
        # segments; even every one of them sent twice (a timeout's go-back-N) fits the 1000-packet queue.
        fixed = rows[rows["variant"] == ablation.FIXED_RCVBUF]
        assert 2 * -(-ablation.RCVBUF_DEFAULT_B // 1448) < ablation.AS_RUN_QUEUE
        assert (fixed["loss_pct"] == 0).all()


def test_fig2_ablation_table_and_bounds_from_the_links(tmp_path, monkeypatch) -> None:
    from mptcplab.experiments import _chen_towsley_links as links

    mod, res = _run("chen-towsley-fig2", tmp_path, monkeypatch, (2, 2), "**Verdict rule for the three counts**")
    abl = pd.read_csv(res.tables["ablation"])
    runs = pd.read_csv(res.tables["ablation runs"])
    keys = ("att", "verizon", "sprint")
    assert {"variant", "runs", "window_minus_2gamma", "spearman_rho", "below_eq3", "R1_ms"} | {
        f"{c}_{k}" for c in ("packets", "n", "eq9") for k in keys} <= set(abl.columns)
    assert {"variant", "cell_base_rtt_ms", "seed", "t2_s", "t4_s", "window_s", "gamma", "packets",
            "wifi_rate_bps"} <= set(runs.columns)
    labels = [v[0] for v in mod.ABLATIONS]
    assert list(abl["variant"]) == [labels[0], mod.HALF, *labels[1:]]
    # The as-run variant re-runs the claims' runs (same delays, same seeds): it gives their numbers.
    sim = pd.read_csv(res.tables["packets vs gamma"])
    a = abl.set_index("variant")
    assert a.loc[mod.AS_RUN, "runs"] == len(sim)
    # A count's verdict stands only when both readings of the round's start give the same one (the
    # module's rule); then its value is the claims' runs', else it is not testable and names both.
    verdicts = mod.history_verdicts(abl)
    for p in mod.pv.CT_FIG2:
        k = mod._key(p.carrier)
        m = res.measured[f"sim-{k}"]
        xs = [a.loc[v, f"packets_{k}"] for v in mod.HISTORIES if a.loc[v, f"n_{k}"] > 0]
        within = {mod.DEFAULT_TOLERANCE.holds(p.packets.value, x) for x in xs}
        assert (verdicts[k][0] is None) == (len(within) != 1)
        if a.loc[mod.AS_RUN, f"n_{k}"] == 0:
            assert m.value is None
        elif len(within) == 1:
            assert m.value == pytest.approx(a.loc[mod.AS_RUN, f"packets_{k}"])
        else:
            assert m.value is None and "outlived the hour between measurement rounds" in m.not_testable
    assert a.loc[mod.AS_RUN, "spearman_rho"] == pytest.approx(res.measured["rising"].value)

    # Capacity: WiFi serialises 1500-byte frames at its rate C and the first data packet arrives at t₂, so
    # by t₂ + w at most 1 + w·C/(1500·8) packets have arrived, in every variant and counting window.
    assert (runs["packets"] <= 1 + runs["window_s"] * runs["wifi_rate_bps"] / PACKET_BITS).all()
    # The half-window count is the same run cut earlier (same scenario, same seed): data received is
    # non-decreasing in time, so it can never exceed the full window's count.
    full = runs[runs["variant"] == mod.AS_RUN].set_index(["cell_base_rtt_ms", "seed"])
    half = runs[runs["variant"] == mod.HALF].set_index(["cell_base_rtt_ms", "seed"])
    assert (half["packets"] <= full["packets"].reindex(half.index)).all()
    # Join timing: the at_once rule opens the join at the first SYN/ACK (t₁), v0.88's fully_established
    # at the first data packet (t₂); t₂ − t₁ is one WiFi round trip after the handshake: 2·15 ms of
    # propagation plus the serialisation of the request and of the first data packet (each ≤ 1500 B at
    # the WiFi rate), with the WiFi queue empty. The cellular path is empty and loss-free, so the join's
    # first data arrive that much earlier after the measured download's own t₂: its window t₄ − t₂ is
    # shorter by t₂ − t₁ (the earlier downloads also follow the rule, so the measured one starts at
    # another time: only its own window is compared). Median over the pairs, so that a handshake
    # packet lost to the 0.9 % loss (an RTO) in a few runs cannot decide it.
    join = next(v for v in labels if "join = at_once" in v)
    at_once = runs[runs["variant"] == join].set_index(["cell_base_rtt_ms", "seed"])
    wifi_rtt = 2 * parse_duration(links.WIFI["delay"])
    ser = PACKET_BITS / parse_rate(links.WIFI["rate"])
    d = (full["window_s"] - at_once["window_s"].reindex(full.index)).median()
    assert wifi_rtt <= d <= wifi_rtt + 2 * ser
