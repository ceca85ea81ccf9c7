"""Chen & Towsley (seed 000) §IV, Fig. 2: packets received on WiFi before the delayed
cellular subflow's first data packet, as a function of the RTT ratio γ = R_2/R_1.

A 2-flow MPTCP download (WiFi first, then cellular; LIA, minRTT, I_w = 10, b = 2, per-ACK
slow start as Linux 3.11) of a 16 MB file, large enough that the cut-off below always comes
first. WiFi: 30 ms base RTT, 0.9 % Bernoulli loss. The cellular link's base RTT is varied
over a grid (60-300 ms) to spread γ; at start-up its queue is empty, so only its base RTT
matters (10 Mbit/s, 1000-packet queue, no loss, all assumed). Each sample is measured in two
runs with the same seed: the first finds t_4, the arrival of the cellular subflow's first
data packet; the second stops the simulation at t_4 and counts the connection-level bytes
that reached the client through WiFi (first copies), divided by the WiFi payload per
segment. As the paper's footnote 2: R_2 = the cellular RTT of the first data packet (the
subflow's minimum RTT, the queue being empty), R_1 = the mean WiFi RTT up to t_4 (under load).

Model: Eq. (3) (loss-free) and Eq. (9) (at most one loss, p = 0.9 %) at Δ = 2γ rounds, with
the three roundings of :mod:`mptcplab.models.chen_towsley`. The paper's three carrier points
(67 / 88 / 130 packets at median γ 3.9 / 4.4 / 6.0) are compared with the simulated mean of
the samples whose γ lies within ±10 % of each median.
"""

from __future__ import annotations

import math

from mptcplab.experiments import _chen_towsley_links as links
from mptcplab.experiments.base import Comparison, Context, Result, mean_ci95, repeated
from mptcplab.models import chen_towsley as ct
from mptcplab.models import paper_values as pv

NAME = "chen-towsley-fig2"
TITLE = "Packets received on WiFi before the cellular flow starts (Chen & Towsley, Fig. 2)"
SOURCE = "seed 000 §IV, Eq. (3) and (9), Fig. 2"

P_WIFI = pv.CT_SETUP["p_wifi"].value
IW = int(pv.CT_SETUP["iw"].value)
B = pv.CT_SETUP["b"].value
#: Cellular base RTTs (ms) of the grid: full and quick.
RTTS_MS_FULL = tuple(range(60, 301, 15))
RTTS_MS_QUICK = tuple(range(60, 301, 30))
#: Samples per grid point (full, quick). Module-level so tests can shrink them.
REPS = (10, 4)
WINDOW = 0.10  # ±10 % around each carrier's median γ


def scenario() -> dict:
    return {
        "name": NAME,
        "duration": "10s",
        "paths": [
            links.path("wifi", links.WIFI),
            {"name": "cell", "rate": "10Mbit", "delay": "30ms", "queue": "1000 packets"},
        ],
        "connections": [links.mptcp({"kind": "download", "size": "16MB"})],
    }


def _packets_before_t4(sc: dict, seed: int, t4: float) -> tuple[float, float]:
    """(WiFi packets received by t4, mean WiFi RTT up to t4) from a run cut at t4."""
    import mptcplab

    cut = mptcplab.run(sc, seed=seed, overrides={"duration": f"{t4:.9f}s"})
    wifi = next(s for s in cut.summary["subflows"] if s["path"] == "wifi")
    payload = wifi["bytes_sent"] / max(1, wifi["segments_sent"])
    return wifi["data_bytes_received"] / payload, wifi["mean_rtt_s"]


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    rtts = RTTS_MS_QUICK if ctx.quick else RTTS_MS_FULL
    reps = ctx.reps(*REPS)
    sc = scenario()
    grid = {"paths.cell.delay": [f"{r / 2:g}ms" for r in rtts]}
    first = repeated(ctx, sc, grid, reps, "first-data")
    rows = []
    for _, r in first.iterrows():
        t2, t4 = r["sf.mptcp.wifi.first_data_s"], r["sf.mptcp.cell.first_data_s"]
        if t4 is None or not math.isfinite(t4):
            continue
        point = {**sc, "paths": [sc["paths"][0], {**sc["paths"][1], "delay": r["paths.cell.delay"]}]}
        packets, r1 = _packets_before_t4(point, int(r["seed"]), t4)
        r2 = r["sf.mptcp.cell.min_rtt_s"]
        rows.append({
            "cell_base_rtt_ms": 2 * float(str(r["paths.cell.delay"]).removesuffix("ms")),
            "seed": int(r["seed"]), "t2_s": t2, "t4_s": t4, "delta_s": t4 - t2, "R1_s": r1, "R2_s": r2,
            "gamma": r2 / r1, "delta_rounds": (t4 - t2) / r1, "packets": packets,
            "eq3_packets": ct.loss_free_packets(r2 / r1, IW, B),
            "eq9_packets": ct.expected_packets_before_second_flow(r2 / r1, P_WIFI, IW, B),
        })
    table = pd.DataFrame(rows)
    csv = ctx.path("packets_vs_gamma.csv")
    table.to_csv(csv, index=False)

    gs = [1 + k * 0.05 for k in range(181)]
    models = pd.DataFrame({
        "gamma": gs,
        "eq3_continuous": [ct.loss_free_packets(g, IW, B) for g in gs],
        "eq9_floor": [ct.expected_packets_before_second_flow(g, P_WIFI, IW, B, "floor") for g in gs],
        "eq9_ceil": [ct.expected_packets_before_second_flow(g, P_WIFI, IW, B, "ceil") for g in gs],
        "eq9_continuous": [ct.expected_packets_before_second_flow(g, P_WIFI, IW, B) for g in gs],
    })
    model_csv = ctx.path("model_curves.csv")
    models.to_csv(model_csv, index=False)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.semilogy(models["gamma"], models["eq3_continuous"], "--", color="gray", label="Eq. (3), loss-free")
    ax.semilogy(models["gamma"], models["eq9_continuous"], "-", color="k", label="Eq. (9), continuous Δ")
    ax.semilogy(models["gamma"], models["eq9_floor"], ":", color="tab:blue", label="Eq. (9), ⌊2γ⌋")
    ax.semilogy(models["gamma"], models["eq9_ceil"], ":", color="tab:orange", label="Eq. (9), ⌈2γ⌉")
    ax.semilogy(table["gamma"], table["packets"], ".", alpha=0.5, color="tab:green", label="simulated runs")
    ax.semilogy([p.gamma_median.value for p in pv.CT_FIG2], [p.packets.value for p in pv.CT_FIG2], "s",
                mfc="none", color="tab:red", ms=8, label="paper (text, per carrier)")
    ax.set_xlabel("RTT ratio γ = R₂/R₁ (dimensionless)")
    ax.set_ylabel("WiFi packets before cellular data (packets)")
    ax.set_xlim(1, 10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    figs = links.save_figure(ctx, fig, "packets_vs_gamma")

    comps = []
    sim_at = {}
    for p in pv.CT_FIG2:
        g = p.gamma_median.value
        near = table[(table["gamma"] - g).abs() <= WINDOW * g]
        mean, ci, n = mean_ci95(near["packets"])
        sim_at[p.carrier] = mean
        e9 = {rd: ct.expected_packets_before_second_flow(g, P_WIFI, IW, B, rd) for rd in ("floor", "ceil", "continuous")}
        comps.append(Comparison(
            f"{p.carrier}: packets before cellular data at γ = {g:g}", "packets", p.packets.value,
            mean if n else None, ci, n,
            f"Eq. (9) floor/ceil/cont. {e9['floor']:.0f}/{e9['ceil']:.0f}/{e9['continuous']:.0f}; "
            f"Eq. (3) {ct.loss_free_packets(g, IW, B):.0f}; sim. samples with γ within ±{WINDOW:.0%}",
        ))
    ratio, ci, n = mean_ci95(table["delta_rounds"] / (2 * table["gamma"]))
    comps.append(Comparison("Δ measured / Eq. (1)'s 2γ·R₁", "ratio", 1.0, ratio, ci, n,
                            "our MP_JOIN starts one R₁ after the first SYN: Δ ≈ 2R₂ − R₁"))
    below = float((table["packets"] <= table["eq3_packets"] * 1.05).mean()) if len(table) else float("nan")
    comps.append(Comparison("runs at or below the loss-free Eq. (3)", "fraction", "most (Fig. 2)", below, None,
                            len(table)))
    rising = len(table) > 2 and table[["gamma", "packets"]].corr(method="spearman").iloc[0, 1] > 0.5
    ok = [sim_at[p.carrier] for p in pv.CT_FIG2 if sim_at[p.carrier] == sim_at[p.carrier]]
    within = [abs(sim_at[p.carrier] / p.packets.value - 1) <= 0.5 for p in pv.CT_FIG2 if sim_at[p.carrier] == sim_at[p.carrier]]
    verdict = "partly reproduced" if rising else "not reproduced"
    reason = (
        f"The simulated count grows with γ as Fig. 2's does and {below:.0%} of the runs lie at or below the loss-free "
        "Eq. (3), as most of the paper's samples do. "
        f"At the carriers' median γ the simulator gives {', '.join(f'{v:.0f}' for v in ok)} packets against the "
        f"paper's 67 / 88 / 130 ({sum(within)} of {len(within)} within ±50 %). Eq. (9) as printed does not give the "
        "paper's numbers either (it gives 264 / 270 / 171 at Δ = ⌊2γ⌋ and is not monotonic in Δ), so the paper's "
        "figures cannot be checked against its own model; we report both and tune nothing. The simulator's Δ is "
        f"{ratio:.2f}× Eq. (1)'s 2γ rounds, because the join handshake starts one WiFi RTT after the first SYN."
    )
    setup = f"{__doc__.strip()}\n\n{links.__doc__.strip()}\n\nGrid: cellular base RTT {rtts[0]}-{rtts[-1]} ms, {reps} runs each."
    return Result(NAME, TITLE, SOURCE, setup, comps, verdict, reason,
                  {"packets vs gamma": csv, "model curves": model_csv}, figs)
