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

Model: Eq. (3) (loss-free) and Eq. (9) (at most one loss, p = 0.9 %) at Δ = 2γ rounds of R_1
(Eq. (1)). The paper does not say how it rounds a non-integer 2γ; we evaluate ⌊2γ⌋, ⌈2γ⌉ and
the linear interpolation between them, and compare the one closest to the paper's number, so
that no verdict rests on our choice of rounding. The alternative reading (Δ = γ rounds and
the binomial probability of exactly one lost packet per round, see the claims table) is the
closest reading of the text we found to the paper's 67 / 88 / 130; it departs from Eq. (1)
and Eq. (5) as printed and is shown, never counted.

Simulation: the paper's three carrier points (67 / 88 / 130 packets at median γ 3.9 / 4.4 /
6.0) are compared with the simulated mean of the samples whose γ lies within ±10 % of each
median (the paper's samples are spread over γ; it gives neither the spread of its averages
nor how many samples each has). The paper's R² = 0.8758 describes how well Eq. (9) fits its
averages as a whole, not the uncertainty of one average, so it cannot set a tolerance; the
stated ±15 % default is used.
"""

from __future__ import annotations

import math

from mptcplab.experiments import _chen_towsley_links as links
from mptcplab.experiments.base import (
    DEFAULT_TOLERANCE,
    Claim,
    Context,
    Measured,
    Result,
    Tolerance,
    fmt,
    mean_ci95,
    measured_mean,
    repeated,
)
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
ROUNDINGS = ("floor", "ceil", "continuous")


def _key(carrier: str) -> str:
    return carrier.lower().replace("&", "")


_EQ1 = f"{pv.S000}, §IV, Eq. (1)"
_FIG2 = f"{pv.S000}, §IV, Fig. 2"

CLAIMS: tuple[Claim, ...] = (
    *(
        Claim(
            f"eq9-{_key(p.carrier)}", "model",
            f"Eq. (9) as printed at the {p.carrier} median γ = {p.gamma_median.value:g}, Δ = 2γ rounds (Eq. (1))",
            "packets", p.packets.value, p.packets.source, DEFAULT_TOLERANCE, printed=p.packets.printed,
            check="consistency",
        )
        for p in pv.CT_FIG2
    ),
    *(
        Claim(
            f"alt-{_key(p.carrier)}", "model",
            f"Δ = γ rounds and exactly one lost packet per round (Eq. (5) × d_ss(k)), γ = {p.gamma_median.value:g}",
            "packets", p.packets.value, p.packets.source, DEFAULT_TOLERANCE, printed=p.packets.printed,
            alternative_of=f"eq9-{_key(p.carrier)}",
        )
        for p in pv.CT_FIG2
    ),
    *(
        Claim(
            f"sim-{_key(p.carrier)}", "simulation",
            f"simulated WiFi packets before cellular data, γ within ±{WINDOW:.0%} of {p.gamma_median.value:g}",
            "packets", p.packets.value, p.packets.source, DEFAULT_TOLERANCE, printed=p.packets.printed,
        )
        for p in pv.CT_FIG2
    ),
    Claim(
        "delta", "simulation", "Δ/R₁ − 2γ: the second flow's delay in rounds, minus Eq. (1)'s 2γ", "rounds", 0.0,
        _EQ1, Tolerance.absolute(0.5, "Eq. (3)-(9) count whole rounds: within half a round, Δ rounds to the "
                                      "same number of rounds as Eq. (1)'s 2γ"),
        printed="Δ = 2·R₂ = 2γ·R₁",
    ),
    Claim(
        "rising", "simulation", "rank correlation (Spearman) of packets with γ over the runs", "", None, _FIG2,
        Tolerance.at_least(0.5, "a trend, not a number: the paper's averages and curve rise with γ; 0.5 is the "
                                "conventional threshold of a strong monotone association"),
        printed="rises with γ", headline=False,
    ),
    Claim(
        "below-eq3", "simulation", "fraction of runs at or below the loss-free Eq. (3) at their own γ", "fraction",
        None, _FIG2, Tolerance.at_least(0.5, "the paper's \u201cmajority\u201d: more than half"),
        printed="only a few samples match the dashed prediction line; the majority are not captured", headline=False,
    ),
)


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


def _eq9(gamma: float) -> dict[str, float]:
    return {rd: ct.expected_packets_before_second_flow(gamma, P_WIFI, IW, B, rd) for rd in ROUNDINGS}


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
        delta_rounds = (t4 - t2) / r1
        rows.append({
            "cell_base_rtt_ms": 2 * float(str(r["paths.cell.delay"]).removesuffix("ms")),
            "seed": int(r["seed"]), "t2_s": t2, "t4_s": t4, "delta_s": t4 - t2, "R1_s": r1, "R2_s": r2,
            "gamma": r2 / r1, "delta_rounds": delta_rounds, "packets": packets,
            "eq3_packets": ct.loss_free_packets(r2 / r1, IW, B),
            "eq9_packets": ct.expected_packets_before_second_flow(r2 / r1, P_WIFI, IW, B),
            # The printed Eq. (9) at the run's own measured Δ (Δ/2 plays γ's role in Eq. (1)).
            "eq9_at_measured_delta": ct.expected_packets_before_second_flow(delta_rounds / 2, P_WIFI, IW, B),
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
        "alternative_reading": [ct.fig2_alternative_reading(g, P_WIFI, IW, B) for g in gs],
    })
    model_csv = ctx.path("model_curves.csv")
    models.to_csv(model_csv, index=False)

    fig, ax = plt.subplots(figsize=(7, 4.6))
    ax.semilogy(models["gamma"], models["eq3_continuous"], "--", color="gray",
                label="Eq. (3), loss-free, Δ = 2γ")
    ax.semilogy(models["gamma"], models["eq9_continuous"], "-", color="k",
                label="Eq. (9) as printed, Δ = 2γ (interp.)")
    ax.semilogy(models["gamma"], models["eq9_floor"], ":", color="tab:blue", label="Eq. (9) as printed, Δ = ⌊2γ⌋")
    ax.semilogy(models["gamma"], models["eq9_ceil"], ":", color="tab:orange",
                label="Eq. (9) as printed, Δ = ⌈2γ⌉")
    ax.semilogy(models["gamma"], models["alternative_reading"], "-.", color="tab:purple",
                label="alternative reading: Δ = γ, one loss (binomial)")
    ax.semilogy(table["gamma"], table["packets"], ".", alpha=0.5, color="tab:green", label="simulated runs")
    ax.semilogy([p.gamma_median.value for p in pv.CT_FIG2], [p.packets.value for p in pv.CT_FIG2], "s",
                mfc="none", color="tab:red", ms=8, label="paper: 67 / 88 / 130 (§IV text)")
    ax.set_xlabel("RTT ratio γ = R₂/R₁ (dimensionless)")
    ax.set_ylabel("WiFi packets before cellular data (packets)")
    ax.set_xlim(1, 10)
    ax.set_ylim(5, 3e4)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left")
    fig.tight_layout()
    figs = links.save_figure(ctx, fig, "packets_vs_gamma")

    measured: dict[str, Measured] = {}
    sim_at: dict[str, Measured] = {}  # carrier key -> the simulated claim's measurement
    eq9_at: dict[str, dict[str, float]] = {}
    for p in pv.CT_FIG2:
        k, g = _key(p.carrier), p.gamma_median.value
        e9 = _eq9(g)
        eq9_at[k] = e9
        best = min(ROUNDINGS, key=lambda rd: abs(e9[rd] - p.packets.value))
        measured[f"eq9-{k}"] = Measured(
            e9[best], note=f"closest rounding ({best}); Eq. (9) ⌊2γ⌋ / ⌈2γ⌉ / interpolated "
                           f"{fmt(e9['floor'])} / {fmt(e9['ceil'])} / {fmt(e9['continuous'])}; "
                           f"loss-free Eq. (3) {fmt(ct.loss_free_packets(g, IW, B))}")
        measured[f"alt-{k}"] = Measured(ct.fig2_alternative_reading(g, P_WIFI, IW, B),
                                        note="departs from Eq. (1) (Δ = 2γ) and Eq. (5) as printed")
        near = table[(table["gamma"] - g).abs() <= WINDOW * g] if len(table) else table
        if len(near):
            rng = f"γ {fmt(near['gamma'].min())}–{fmt(near['gamma'].max())}"
            m = measured_mean(near["packets"], note=f"{len(near)} runs, {rng}; Eq. (9) at their own Δ: "
                                                    f"{fmt(near['eq9_at_measured_delta'].mean())}")
        else:
            m = Measured(None, n=0, not_testable=f"no simulated run has γ within ±{WINDOW:.0%} of {g:g}")
        measured[f"sim-{k}"] = sim_at[k] = m
    d_mean, d_ci, d_n = (mean_ci95(table["delta_rounds"] - 2 * table["gamma"]) if len(table)
                         else (math.nan, None, 0))
    measured["delta"] = (
        Measured(d_mean, d_ci, d_n, "v0.88's full-mesh path manager opens the join once the connection is "
                                    "established, when the first data packet arrives, two R₁ after the first "
                                    "SYN: Δ ≈ 2R₂")
        if d_n else Measured(None, n=0, not_testable="no run reached the cellular subflow's first data packet")
    )
    rho = float(table[["gamma", "packets"]].corr(method="spearman").iloc[0, 1]) if len(table) > 2 else math.nan
    measured["rising"] = (Measured(rho, n=len(table)) if math.isfinite(rho)
                          else Measured(None, n=len(table), not_testable="fewer than three runs"))
    below = float((table["packets"] <= table["eq3_packets"]).mean()) if len(table) else math.nan
    measured["below-eq3"] = (Measured(below, n=len(table)) if len(table)
                             else Measured(None, n=0, not_testable="no run"))

    def vals(prefix: str) -> str:
        out = (measured[f"{prefix}-{_key(p.carrier)}"].value for p in pv.CT_FIG2)
        return " / ".join("—" if v is None else fmt(v) for v in out)

    def near_mean(p: pv.ChenFig2Point, col: str) -> float:
        g = p.gamma_median.value
        sel = table[(table["gamma"] - g).abs() <= WINDOW * g] if len(table) else table
        return float(sel[col].mean()) if len(sel) else math.nan

    ratios = [m.value / p.packets.value for p in pv.CT_FIG2
              if isinstance(m := sim_at[_key(p.carrier)], Measured) and isinstance(m.value, float)]
    own_delta = " / ".join(fmt(x) if math.isfinite(x) else "—"
                           for x in (near_mean(p, "eq9_at_measured_delta") for p in pv.CT_FIG2))
    alt_close = all(DEFAULT_TOLERANCE.holds(p.packets.value, measured[f"alt-{_key(p.carrier)}"].value)
                    for p in pv.CT_FIG2)
    by_delta = {d: ct.expected_packets_at_rounds(d, P_WIFI, IW, B) for d in range(1, 21)}
    peak = next(d for d in by_delta if by_delta.get(d + 1, math.inf) < by_delta[d])
    dip = next(d for d in by_delta if d > peak and by_delta[d + 1] > by_delta[d])
    if not d_n:
        delta_text = "No run reached the cellular subflow's first data packet."
    elif d_mean < 0:
        delta_text = (f"Its second flow starts {fmt(-d_mean)} rounds of R₁ earlier than Eq. (1)'s Δ = 2γ: the "
                      "scenario keeps the engine's default join rule (at_once), which opens the join when "
                      "the first SYN/ACK arrives, one R₁ after the first SYN, so Δ ≈ 2R₂ − R₁; Eq. (1) "
                      "corresponds to a join opened when the first data packet arrives (the engine's "
                      "fully_established rule, as today's Linux in-kernel path manager does), which this "
                      "reproduction does not use. The WiFi flow thus has less time than the paper's model gives "
                      "it, not more.")
    else:
        delta_text = (f"Its second flow starts {fmt(d_mean)} rounds of R₁ later than Eq. (1)'s Δ = 2γ: v0.88's "
                      "full-mesh path manager (the profile's join rule, fully_established) opens the join when the "
                      "first data packet arrives, two R₁ after the first SYN, and the join's first data reach the "
                      "client 2R₂ later, as Eq. (1) assumes; what remains is queueing on the paths.")
    trend = (f"Across all {len(table)} runs the count "
             + ("rises" if rho >= 0.5 else "does not clearly rise") + f" with γ (Spearman ρ = {fmt(rho)}) and "
             f"{fmt(100 * below)} % of the runs lie at or below the loss-free Eq. (3) (Fig. 2: the majority)."
             if len(table) > 2 else "Too few runs for the trend.")
    discussion = (
        f"Eq. (9) as printed gives {vals('eq9')} packets at the carriers' median γ (the rounding of Δ = 2γ "
        f"closest to the paper's number; {' / '.join(fmt(eq9_at[_key(p.carrier)]['floor']) for p in pv.CT_FIG2)} at "
        "Δ = ⌊2γ⌋), against the paper's 67 / 88 / 130: the paper's own model does not give its numbers. It is "
        f"not even monotonic in Δ (it peaks at Δ = {peak} rounds with {fmt(by_delta[peak])} packets and falls to "
        f"{fmt(by_delta[dip])} at Δ = {dip}) because Eq. (5)'s S(k) is the probability of one given packet of "
        "round k being lost, which under-weights losses in the later, larger rounds. Reading Δ as γ rounds and "
        f"giving S(k) the binomial factor d_ss(k) yields {vals('alt')}"
        + (", within ±15 % of all three of the paper's numbers; that a model reading matches them suggests they "
           "are model values rather than measured averages (the paper does not say)" if alt_close else "")
        + ". That reading contradicts Eq. (1) (Δ = 2γ), so it is shown as an alternative and not counted.\n\n"
        f"The simulator gives {vals('sim')} packets in runs with γ near 3.9 / 4.4 / 6.0"
        + (f", {fmt(min(ratios))}–{fmt(max(ratios))}× the paper's numbers" if ratios else "")
        + f". {delta_text} The printed Eq. (9) evaluated at each run's own Δ gives {own_delta} for the same "
        f"runs. {trend} No parameter was fitted."
    )
    setup = (
        f"{__doc__.strip()}\n\nGrid: cellular base RTT {rtts[0]}-{rtts[-1]} ms in steps of {rtts[1] - rtts[0]} ms, "
        f"{reps} runs each."
    )
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion,
                  {"packets vs gamma": csv, "model curves": model_csv}, figs, assumptions=links.ASSUMPTIONS)
