"""Chen & Towsley (seed 000) §V-B, Fig. 6: WiFi's increment efficiency under LIA vs γ.

Model: Eq. (12), 1/(1 + β/γ)², for β = 1, 2, 4, 8 (flow 1 = WiFi being the "better" flow).

Simulation: a 2-flow MPTCP bulk transfer (LIA, minRTT, Linux 3.11 window growth) over WiFi
(30 ms, 0.9 % loss) and the bufferbloated cellular link of Figs. 7-8 (80 ms base RTT,
10 Mbit/s, 3000-packet queue), for the first 15 s, during which the loss-free cellular window
fills the deep queue and its RTT inflates. Every 10 ms we read the windows w_1, w_2, the
smoothed RTTs and the α LIA is actually using, and the cellular queue. We compare

- the efficiency LIA applies: min(1, α_used·w_1/w), α_used being LIA's current α
  (``per_rtt``: recomputed about once per RTT, as Linux; ``per_ack``: on every ACK, still
  from the lagging SRTTs), with
- the efficiency with the true RTTs: α from Eq. (11) with R_2 = base RTT + queueing delay
  of the cellular queue at that instant, R_1 = WiFi's SRTT (stable),

over the samples in which the true γ lies in [2, 8] (the paper's inflation range). The
underestimation is 1 − used/true (paper: 61 % for β = 2, γ 2 → 8).
"""

from __future__ import annotations

from mptcplab.experiments import _chen_towsley_links as links
from mptcplab.experiments.base import Comparison, Context, Result, mean_ci95
from mptcplab.models import chen_towsley as ct
from mptcplab.models import paper_values as pv

NAME = "chen-towsley-fig6"
TITLE = "Increment efficiency vs RTT ratio under LIA (Chen & Towsley, Fig. 6)"
SOURCE = "seed 000 §V-B, Eq. (11)-(12), Fig. 6"

BETAS = (1, 2, 4, 8)
POLICIES = ("per_rtt", "per_ack")
#: Runs (seeds) per α policy: full, quick. Module-level so tests can shrink them.
REPS = (5, 2)
DURATION_S = 15.0
SAMPLE = "10ms"


def scenario(policy: str) -> dict:
    return {
        "name": NAME,
        "duration": f"{DURATION_S:g}s",
        "paths": [links.path("wifi", links.WIFI), links.path("cell", links.BLOATED)],
        "connections": [links.mptcp({"kind": "bulk"}, cc_params={"lia": {"alpha_update": policy}})],
        "output": {"timeseries": SAMPLE},
    }


def _samples(policy: str, seed: int):  # -> pd.DataFrame
    import mptcplab

    res = mptcplab.run(scenario(policy), seed=seed)
    ts = res.timeseries
    wide = ts.assign(key=ts["entity"].astype(str) + ":" + ts["metric"].astype(str)).pivot_table(
        index="time_s", columns="key", values="value", observed=True)
    need = ["mptcp/wifi:cwnd_bytes", "mptcp/cell:cwnd_bytes", "mptcp/wifi:srtt_s", "mptcp/cell:srtt_s",
            "mptcp:alpha", "cell.down:queue_bytes"]
    wide = wide[need].dropna()
    w1, w2 = wide["mptcp/wifi:cwnd_bytes"], wide["mptcp/cell:cwnd_bytes"]
    r1 = wide["mptcp/wifi:srtt_s"]
    t = wide.index.to_series()
    lo, hi = links.BLOAT_DIP
    rate = t.map(lambda x: links.BLOAT_DIP_RATE_BPS if lo <= x < hi else links.BLOAT_RATE_BPS)
    r2_true = links.BLOAT_BASE_RTT_S + wide["cell.down:queue_bytes"] * 8 / rate
    alpha_true = [ct.lia_alpha([a, b], [x, y]) for a, b, x, y in zip(w1, w2, r1, r2_true, strict=True)]
    out = wide.assign(
        policy=policy, seed=seed, w1_bytes=w1, w2_bytes=w2, R1_s=r1, R2_srtt_s=wide["mptcp/cell:srtt_s"],
        R2_true_s=r2_true, alpha_used=wide["mptcp:alpha"], alpha_true=alpha_true,
    )
    out["beta"] = out["w2_bytes"] / out["w1_bytes"]
    out["gamma_true"] = out["R2_true_s"] / out["R1_s"]
    out["gamma_srtt"] = out["R2_srtt_s"] / out["R1_s"]
    w = out["w1_bytes"] + out["w2_bytes"]
    out["eff_used"] = (out["alpha_used"] * out["w1_bytes"] / w).clip(upper=1.0)
    out["eff_true"] = (out["alpha_true"] * out["w1_bytes"] / w).clip(upper=1.0)
    cols = ["policy", "seed", "w1_bytes", "w2_bytes", "beta", "R1_s", "R2_srtt_s", "R2_true_s", "gamma_srtt",
            "gamma_true", "alpha_used", "alpha_true", "eff_used", "eff_true"]
    return out.reset_index()[["time_s", *cols]]


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    reps = ctx.reps(*REPS)
    frames = []
    total = len(POLICIES) * reps
    for k, (policy, seed) in enumerate((p, s) for p in POLICIES for s in range(1, reps + 1)):
        frames.append(_samples(policy, seed))
        if ctx.progress:
            ctx.progress(k + 1, total)
    samples = pd.concat(frames, ignore_index=True)
    csv = ctx.path("efficiency_samples.csv")
    samples.to_csv(csv, index=False)
    gs = [1 + k * 0.05 for k in range(181)]
    model = pd.DataFrame({"gamma": gs, **{f"beta_{b}": [ct.increment_efficiency(b, g) if b <= g * g else float("nan")
                                                         for g in gs] for b in BETAS}})
    model_csv = ctx.path("model_curves.csv")
    model.to_csv(model_csv, index=False)

    window = samples[(samples["gamma_true"] >= 2) & (samples["gamma_true"] <= 8) & (samples["time_s"] > 0.5)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for b in BETAS:
        axes[0].plot(model["gamma"], model[f"beta_{b}"], label=f"Eq. (12), β = {b}")
    axes[0].set_title("model")
    for policy, color in zip(POLICIES, ("tab:red", "tab:purple")):
        sel = window[window["policy"] == policy]
        axes[1].plot(sel["gamma_true"], sel["eff_used"], ".", ms=3, alpha=0.4, color=color,
                     label=f"applied by LIA, α {policy}")
    sel = window[window["policy"] == "per_rtt"]
    axes[1].plot(sel["gamma_true"], sel["eff_true"], ".", ms=3, alpha=0.4, color="k", label="with true RTTs")
    axes[1].set_title("simulated (samples with true γ in [2, 8])")
    for ax in axes:
        ax.set_xlabel("RTT ratio γ = R₂/R₁ (dimensionless)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("WiFi increment efficiency (fraction of TCP's 1/w₁)")
    fig.tight_layout()
    figs = links.save_figure(ctx, fig, "efficiency_vs_gamma")

    c6 = pv.CT_FIG6
    beta = c6["beta"].value
    e_from = ct.increment_efficiency(beta, c6["gamma_from"].value)
    e_to = ct.increment_efficiency(beta, c6["gamma_to"].value)
    comps = [
        Comparison("Eq. (12) at β = 2, γ = 2", "fraction", c6["efficiency_from"].value, e_from, None, 1, "model"),
        Comparison("Eq. (12) at β = 2, γ = 8", "fraction", c6["efficiency_to"].value, e_to, None, 1, "model"),
        Comparison("underestimation if α keeps γ = 2 (model)", "fraction", c6["underestimation"].value,
                   ct.increment_underestimation(beta, c6["gamma_from"].value, c6["gamma_to"].value), None, 1, "model"),
    ]
    under = {}
    inflating = samples[(samples["gamma_true"] >= 2) & (samples["time_s"] > 0.5)]
    for label, sel in (("true γ in [2, 8]", window), ("whole run, true γ ≥ 2", inflating)):
        for policy in POLICIES:
            per_run = [float((1 - g["eff_used"] / g["eff_true"]).mean())
                       for _seed, g in sel[sel["policy"] == policy].groupby("seed")]
            m, ci, n = mean_ci95(per_run)
            under[(label, policy)] = m
            comps.append(Comparison(f"simulated underestimation, α {policy}, {label}", "fraction",
                                    c6["underestimation"].value, m, ci, n, "mean of 1 − used/true per run"))
    mb, cib, nb = mean_ci95(window.groupby(["policy", "seed"])["beta"].median())
    comps.append(Comparison("window ratio β = w₂/w₁ while γ in [2, 8] (median)", "ratio", beta, mb, cib, nb,
                            "paper assumes β fixed at 2"))
    whole = "whole run, true γ ≥ 2"
    ok = under[(whole, "per_rtt")] > 0.05
    verdict = "partly reproduced" if ok else "not reproduced"
    reason = (
        f"Eq. (12) gives {e_from:.2f} → {e_to:.2f} (paper 0.25 → 0.65) and 61 % underestimation, as printed. "
        f"Inside the simulator's LIA the WiFi flow's applied efficiency lags the one the true RTTs would give by "
        f"{under[(whole, 'per_rtt')]:.0%} on average over the run with α updated once per RTT and "
        f"{under[(whole, 'per_ack')]:.0%} with α updated on every ACK (in the paper's γ range 2-8, crossed within "
        f"half a second of slow start: {under[('true γ in [2, 8]', 'per_rtt')]:.0%} / "
        f"{under[('true γ in [2, 8]', 'per_ack')]:.0%}). Updating α per ACK barely helps: the lag comes from the "
        "cellular SRTT trailing the queue's real delay, the second cause the paper names, more than from α's "
        f"update policy. The true γ does not stop at 8 here but reaches far higher (the deep queue). The window ratio is not the paper's fixed 2 (median {mb:.1f}: WiFi's window is held small by its "
        "0.9 % loss), so the simulated magnitudes are not the 61 % of the β = 2 example."
    )
    setup = f"{__doc__.strip()}\n\n{links.__doc__.strip()}\n\n{reps} runs per α policy."
    return Result(NAME, TITLE, SOURCE, setup, comps, verdict, reason,
                  {"efficiency samples": csv, "model curves": model_csv}, figs)
