"""Chen & Towsley (seed 000) §V-B, Fig. 6: WiFi's increment efficiency under LIA vs γ.

Model: Eq. (12), 1/(1 + β/γ)², for β = 1, 2, 4, 8 (flow 1 = WiFi being the "better" flow).

Simulation: a 2-flow MPTCP bulk transfer (LIA, minRTT, Linux 3.11 window growth) over WiFi
(30 ms, 0.9 % loss: "a stable average connection RTT of approximately 30 ms", §V-A; "WiFi
exhibits a higher loss rate (0.9 ± 0.2%)", §IV) and a loss-free, deep-buffered cellular link,
for 15 s, sampled every 10 ms: the windows w₁ (WiFi), w₂ (cellular), the smoothed RTTs, the α
LIA is using, and the cellular queue. The cellular link follows the setup the seed states for
Fig. 6 (§V-B): "with β = 2, when the cellular RTT inflates, γ can ramp up quickly from 2 to 8
as more packets are in-flight", and "cellular networks exhibit loss rates typically lower than
0.03%": a base RTT of 2 × 30 = 60 ms (γ = 2 with an empty queue; also Fig. 3's LTE low end,
"from 60 ms"), no random loss, and a 3000-packet queue, deep enough that γ reaches 8 without a
drop (assumed; bufferbloat, §V-A). Its rate is the one value the seed leaves open, and it sets
β: the slower the link, the smaller the cellular window when its queue starts to fill, the
nearer β to 2. Rule: the slowest rate of the grid in ``RATE_GRID`` whose ramp still starts
from an empty queue at γ = 2 (below it the initial window alone queues, and the ramp starts
above the stated 2): 2 Mbit/s (assumed by this rule; the ablation shows every rate of the
grid). The socket buffers are fixed at Linux 3.11's maxima (6 MB receive, 4 MiB send) so that
no buffer growth enters the ramp: a deviation from the auto-tuning §V-C states for its
downloads (this ramp is the project's setting for §V-B's thought experiment, not a measured
download); with auto-tuned buffers a buffer's growth releases its held-back window at once
mid-ramp and β no longer falls with the rate, which the rate rule above needs.
WiFi's increment efficiency is LIA's increase α/w relative to TCP's 1/w₁,
min(1, α·w₁/w), evaluated with

- the α LIA applies (``per_rtt``: Linux's policy, recomputed on every slow-start ACK and on
  every congestion-avoidance window increment; ``per_ack``: before every increase);
- α recomputed from Eq. (11) with the current windows and SRTTs ("fresh α");
- α from Eq. (11) with the true RTTs: R₂ = base RTT + the cellular queue's delay at that
  instant, R₁ = WiFi's SRTT (WiFi's RTT is stable).

The ramp of the paper ("γ can ramp up quickly from 2 to 8") is, in each run, the samples
from the last one with an empty cellular queue to the first one with true γ ≥ 8. A ramp of γ
by 4× "as more packets are in-flight" is a fourfold cellular window: it happens in the cellular
subflow's first slow start (in congestion avoidance a drop-tail cycle only halves the window,
so the queued RTT moves by at most a factor of 2, never from 2 to 8 times WiFi's), so β cannot
"remain fixed" over it; the ``beta`` claim reports its median over the ramp, as a
calibration target (the cellular rate's rule aims at it), never counted. WiFi's increase is
underestimated by 1 − applied / true efficiency at the ramp's last sample (the claim, rule (3)
below; the paper: 61 %) and by 1 − Σ applied / Σ true over the ramp, which the two causes the
paper names split exactly: the SRTT lag, 1 − Σ fresh / Σ true, and α's update timing,
1 − Σ applied / Σ fresh. A cause "reduces" WiFi's increase when the 95 %
confidence interval of its mean over the runs lies above zero.

Verdict rules. (1) α's update timing: Linux's coupled controller (``mptcp_ccc_cong_avoid``,
MPTCP v0.88) recomputes α on every ACK of a subflow in slow start, on every window increment in
congestion avoidance and on a loss; the engine's ``per_rtt`` policy does the same. When the
cellular subflow is in slow start over most of the ramp, α is recomputed on its every ACK by
construction, so "α updated once per RTT" cannot act there: the claim is then not testable
(with the measured split shown), not failed. (2) The printed 0.65: Eq. (12) at β = 2, γ = 8 is
1/1.25² = 0.64, and the printed 61 % follows from 0.64 (1 − 0.25/0.64 = 60.9 %), not from 0.65
(61.5 %, which rounds to 62 %): the 61 %, printed as a whole percent, holds for
1 − 0.25/x ∈ [60.5 %, 61.5 %), i.e. x ∈ [0.633, 0.649], which 0.64 meets and 0.65 misses. The
printed 0.65 thus contradicts both its own equation and the paper's next printed number; it is
judged as printed (two decimals, ±0.005): a paper inconsistency, with the 61 % band in the note.
(3) Where the 61 % is measured: it is 1 − Eq. (12)(2, 2)/Eq. (12)(2, 8), the efficiency α
gives with γ = 2 against the one the true γ = 8 gives, i.e. the underestimation at the moment
the true γ reaches 8. The claim is measured there, at each run's first sample with true γ ≥ 8.
An average over the whole ramp (1 − Σ applied / Σ true) cannot be the paper's number: in the
paper's own model (α frozen at γ = 2, β = 2, γ uniform over 2–8) it gives 49 %, not 61 %; it
is reported beside the claim, and the split by cause uses it.
(4) What kind of claim the 61 % is. A seed number is a simulation claim when the seed reports
it as an outcome of what it ran, or as a property of the mechanism it ran (how its stack
behaves); it is a model claim when the seed obtains it by evaluating its own equations at
inputs it states as assumed. The 61 % is the second: "if we assume the window ratio β remains
fixed at 2 … the WiFi flow's increment efficiency should increase from 0.25 to 0.65. However
… the WiFi flow's increment efficiency remains at 0.25 for at least one RTT. Thus, the WiFi
flow's increase rate is underestimated by 61%" (§V-B) is 1 − Eq. (12)(2, 2)/Eq. (12)(2, 8)
at the assumed β = 2 and an efficiency held at its γ = 2 value; the seed measures no α and no
increment efficiency anywhere. It is judged as a model claim (``eq12-under``). The simulated
underestimation at γ = 8 (``under``) asks whether a simulated ramp supplies the inputs the
paper assumes (β = 2, α held at γ = 2); it is reported as a supporting check, not counted
as a test of the seed's number. The two causes the seed names (the slow responsiveness of α,
the lagged SRTT) are properties of the stack it ran, so they stay simulation claims.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
)
from mptcplab.models import chen_towsley as ct
from mptcplab.models import paper_values as pv

if TYPE_CHECKING:
    import pandas as pd

NAME = "chen-towsley-fig6"
TITLE = "Increment efficiency vs RTT ratio under LIA (Chen & Towsley, Fig. 6)"
SOURCE = "seed 000 §V-B, Eq. (11)-(12), Fig. 6"

BETAS = (1, 2, 4, 8)
POLICIES = ("per_rtt", "per_ack")
#: Runs (seeds) per α policy: full, quick. Module-level so tests can shrink them.
REPS = (20, 4)
DURATION_S = 15.0
SAMPLE = "10ms"

REDUCES, RAISES, NO_EFFECT = "reduces it", "raises it", "no measurable effect"

_C6 = pv.CT_FIG6
_FIG = _C6["efficiency_from"].source
_TEXT = _C6["underestimation"].source
_TWO_DECIMALS = Tolerance.absolute(0.005, "the paper prints two decimals")


def _carried_band() -> Tolerance:
    """The values x of Eq. (12) at γ = 8 with which the printed 61 % (a whole percent) follows
    from the printed 0.25: 1 − 0.25/x ∈ [60.5 %, 61.5 %) (the module doc's rule (2))."""
    e0, u = _C6["efficiency_from"].value, _C6["underestimation"].value
    lo, hi = e0 / (1 - (u - 0.005)), e0 / (1 - (u + 0.005))
    return Tolerance.within(round(lo, 4), round(hi, 4),
                            "read off Fig. 6 and carried into the printed 61 %: the values from which 1 − 0.25/x "
                            "rounds to 61 %")


#: The cellular subflow's share of the ramp in slow start above which α's update timing cannot
#: act (rule (1) of the module doc): most of the ramp.
SLOW_START_MAJORITY = 0.5
_CAUSE = Tolerance.same("a mechanism: the sign of the cause's effect, from the runs' 95 % CI")
CLAIMS: tuple[Claim, ...] = (
    Claim("eq12-from", "model", "Eq. (12) at β = 2, γ = 2", "fraction", _C6["efficiency_from"].value, _FIG,
          _TWO_DECIMALS, printed="0.25", check="consistency"),
    Claim("eq12-to", "model", "Eq. (12) at β = 2, γ = 8", "fraction", _C6["efficiency_to"].value, _FIG,
          _TWO_DECIMALS, printed="0.65", check="consistency"),
    Claim("eq12-under", "model",
          "underestimation if α keeps γ = 2 while γ is 8: 1 − Eq. (12)(2, 2)/Eq. (12)(2, 8)", "fraction",
          _C6["underestimation"].value, _TEXT,
          Tolerance.absolute(0.005, "the paper prints a whole percent"), printed="underestimated by 61%",
          check="consistency"),
    # Supporting by rule (4) of the module doc: the 61 % is a model number (``eq12-under``).
    Claim("under", "simulation", "WiFi's increase underestimated by LIA (α per RTT, as Linux) when the true γ "
          "has ramped from 2 to 8 (the ramp's last sample)", "fraction", _C6["underestimation"].value, _TEXT, DEFAULT_TOLERANCE,
          printed="underestimated by 61% during this cellular RTT inflation period", headline=False),
    Claim("cause-srtt", "simulation", "cause 1, the cellular SRTT lagging the true RTT: effect on WiFi's increase",
          "", REDUCES, _TEXT, _CAUSE, printed="the cellular flow's lagged RTT estimates"),
    Claim("cause-alpha", "simulation", "cause 2, α updated once per RTT: effect on WiFi's increase", "", REDUCES,
          _TEXT, _CAUSE, printed="the slow responsiveness of α"),
    Claim("beta", "simulation", "window ratio β = w₂/w₁ during the ramp (median)", "ratio", _C6["beta"].value,
          _FIG, DEFAULT_TOLERANCE, printed="if we assume the window ratio β remains fixed at 2", headline=False,
          calibration=True),
    Claim("better-flow", "simulation", "the better flow (the max term of Eq. (11)) during the ramp", "", "WiFi",
          _FIG, Tolerance.same("a category: the flow in the majority of the ramp's samples"),
          printed="flow 1 is currently the better flow", headline=False),
)


#: Fig. 6's cellular link (module doc): base RTT 2 × WiFi's 30 ms, loss-free, deep queue.
CELL_BASE_RTT_S = 2 * pv.CT_FIG3["wifi_rtt"].value
CELL_QUEUE = "3000 packets"
#: Cellular rates of the rule and the ablation (Mbit/s); the rule's pick is CELL_RATE_MBPS.
RATE_GRID = (1.25, 1.5, 2.0, 3.0, 10.0)
CELL_RATE_MBPS = 2.0


def cellular(rate_mbps: float = CELL_RATE_MBPS) -> dict[str, Any]:
    return {"delay": f"{CELL_BASE_RTT_S * 500:g}ms", "queue": CELL_QUEUE, "up": {"rate": "5Mbit"},
            "down": {"rate": f"{rate_mbps:g}Mbit"}}


def scenario(policy: str, rate_mbps: float = CELL_RATE_MBPS) -> dict[str, Any]:
    return {
        "name": NAME,
        "duration": f"{DURATION_S:g}s",
        "paths": [links.path("wifi", links.WIFI), links.path("cell", cellular(rate_mbps))],
        "connections": [links.mptcp({"kind": "bulk"}, cc_params={"lia": {"alpha_update": policy}},
                                    sched_params={"minrtt": dict(links.APACHE_WRITER)})],
        "output": {"timeseries": SAMPLE},
    }


def _ramp_mean() -> float:
    """1 − Σ 0.25 / Σ Eq. (12)(2, γ) over γ uniform on 2–8: the ramp average in the paper's own
    model (α frozen at γ = 2, β = 2), rule (3) of the module doc."""
    beta, g0, g1 = _C6["beta"].value, _C6["gamma_from"].value, _C6["gamma_to"].value
    gs = [g0 + (g1 - g0) * k / 600 for k in range(601)]
    e0 = ct.increment_efficiency(beta, g0)
    return 1 - e0 * len(gs) / sum(ct.increment_efficiency(beta, g) for g in gs)


def _efficiency(alpha: Any, w1: Any, w2: Any) -> Any:
    return (alpha * w1 / (w1 + w2)).clip(upper=1.0)


#: The ablation (not counted; α per RTT as Linux): the cellular rate (the open value that sets
#: β) over RATE_GRID, and WiFi's random loss, one value at a time. (label, change to the WiFi
#: path, cellular rate in Mbit/s).
ABLATIONS: tuple[tuple[str, dict[str, Any], float], ...] = (
    (f"as run (0.9 % WiFi loss, cellular {CELL_RATE_MBPS:g} Mbit/s)", {}, CELL_RATE_MBPS),
    *((f"cellular {r:g} Mbit/s", {}, r) for r in RATE_GRID if r != CELL_RATE_MBPS),
    ("WiFi loss 0.1 %", {"loss": "0.1%"}, CELL_RATE_MBPS),
    ("WiFi without random loss", {"loss": "0%"}, CELL_RATE_MBPS),
)
#: Seeds per ablation variant (the first of the claims' runs).
ABLATION_SEEDS = 6


def ramp(policy: str, seed: int, wifi: dict[str, Any] | None = None,
         rate_mbps: float = CELL_RATE_MBPS) -> pd.DataFrame:
    """One run's samples over the ramp (see the module doc), with γ, β and the three
    efficiencies; empty if the true γ never reaches 8. ``wifi`` changes the WiFi path."""
    import mptcplab
    import numpy as np

    sc = scenario(policy, rate_mbps)
    sc["paths"][0].update(wifi or {})
    res = mptcplab.run(sc, seed=seed)
    ts = res.timeseries
    wide = ts.assign(key=ts["entity"].astype(str) + ":" + ts["metric"].astype(str)).pivot_table(
        index="time_s", columns="key", values="value", observed=True)
    need = ["mptcp/wifi:cwnd_bytes", "mptcp/cell:cwnd_bytes", "mptcp/wifi:srtt_s", "mptcp/cell:srtt_s",
            "mptcp:alpha", "cell.down:queue_bytes"]
    # The cellular ssthresh has no sample until its first loss (it is unbounded in slow start).
    ss = wide["mptcp/cell:ssthresh_bytes"] if "mptcp/cell:ssthresh_bytes" in wide else None
    wide = wide[need].dropna()
    t = wide.index.to_numpy()
    cell_ss = np.ones(len(t), dtype=bool) if ss is None else ~(
        ss.reindex(wide.index).to_numpy() <= wide["mptcp/cell:cwnd_bytes"].to_numpy())
    rate = rate_mbps * 1e6
    queue = wide["cell.down:queue_bytes"].to_numpy()
    w1, w2 = wide["mptcp/wifi:cwnd_bytes"].to_numpy(), wide["mptcp/cell:cwnd_bytes"].to_numpy()
    r1, r2s = wide["mptcp/wifi:srtt_s"].to_numpy(), wide["mptcp/cell:srtt_s"].to_numpy()
    r2t = CELL_BASE_RTT_S + queue * 8 / rate
    gamma = r2t / r1
    hit = np.flatnonzero(gamma >= 8)
    if not len(hit):
        return wide.iloc[0:0]
    empty = np.flatnonzero((queue[: hit[0]] == 0))
    i0 = int(empty[-1]) + 1 if len(empty) else 0
    sel = slice(i0, int(hit[0]) + 1)
    w1, w2, r1, r2s, r2t = w1[sel], w2[sel], r1[sel], r2s[sel], r2t[sel]
    alpha_true = np.array([ct.lia_alpha([a, b], [x, y]) for a, b, x, y in zip(w1, w2, r1, r2t, strict=True)])
    alpha_fresh = np.array([ct.lia_alpha([a, b], [x, y]) for a, b, x, y in zip(w1, w2, r1, r2s, strict=True)])
    alpha_used = wide["mptcp:alpha"].to_numpy()[sel]
    import pandas as pd

    out = pd.DataFrame({
        "policy": policy, "seed": seed, "time_s": t[sel], "time_in_ramp_s": t[sel] - t[i0],
        "w1_bytes": w1, "w2_bytes": w2, "beta": w2 / w1, "R1_s": r1, "R2_srtt_s": r2s, "R2_true_s": r2t,
        "gamma_srtt": r2s / r1, "gamma_true": r2t / r1, "alpha_used": alpha_used, "alpha_fresh": alpha_fresh,
        "alpha_true": alpha_true,
        "wifi_better": w1 / r1**2 >= w2 / r2t**2, "cell_slow_start": cell_ss[sel],
    })
    for k in ("used", "fresh", "true"):
        out[f"eff_{k}"] = _efficiency(out[f"alpha_{k}"], out["w1_bytes"], out["w2_bytes"])
    return out


def per_run(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per (policy, seed): the underestimation over the ramp and its split by cause."""
    import pandas as pd

    rows = []
    for (policy, seed), g in samples.groupby(["policy", "seed"]):
        u, f, t = g["eff_used"].sum(), g["eff_fresh"].sum(), g["eff_true"].sum()
        rows.append({"policy": policy, "seed": seed, "ramp_start_s": g["time_s"].iloc[0],
                     "ramp_length_s": g["time_in_ramp_s"].iloc[-1], "samples": len(g),
                     "underestimation": 1 - u / t, "by_srtt_lag": 1 - f / t, "by_alpha_update": 1 - u / f,
                     "underestimation_at_end": 1 - g["eff_used"].iloc[-1] / g["eff_true"].iloc[-1],
                     "srtt_over_true_R2": float((g["R2_srtt_s"] / g["R2_true_s"]).mean()),
                     "gamma_at_start": float(g["gamma_true"].iloc[0]),
                     "cell_slow_start_fraction": float(g["cell_slow_start"].mean()),
                     "beta_median": float(g["beta"].median()),
                     "wifi_better_fraction": float(g["wifi_better"].mean())})
    return pd.DataFrame(rows)


def _ablation(seeds: int) -> pd.DataFrame:
    """Each variant's per-run means (α per RTT, seeds 1..``seeds``): the underestimation and
    its split, β, the SRTT's view of the true cellular RTT, and what Eq. (12) gives at the
    variant's own β and SRTT lag (the paper's reasoning with the simulated inputs)."""
    import pandas as pd

    rows = []
    for label, wifi, rate in ABLATIONS:
        frames = [f for f in (ramp("per_rtt", s, wifi, rate) for s in range(1, seeds + 1)) if len(f)]
        r = per_run(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame()
        row: dict[str, Any] = {"variant": label, "cell_rate_mbps": rate, "runs_reaching_gamma_8": len(r)}
        for col in ("underestimation_at_end", "underestimation", "by_srtt_lag", "by_alpha_update", "beta_median",
                    "srtt_over_true_R2", "cell_slow_start_fraction", "ramp_length_s", "gamma_at_start"):
            row[col] = float(r[col].mean()) if len(r) else float("nan")
        g1, beta, lag = _C6["gamma_to"].value, row["beta_median"], row["srtt_over_true_R2"]
        row["eq12_at_these"] = (1 - ct.increment_efficiency(beta, lag * g1) / ct.increment_efficiency(beta, g1)
                                if len(r) and beta <= (lag * g1) ** 2 else float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)


def _ablation_text(abl: pd.DataFrame) -> str:
    """The ablation paragraph: each variant's numbers, then what they say about β and the 61 %."""
    text = "**Ablation** (not counted; α per RTT): " + "; ".join(
        f"{r.variant}: underestimation at γ = 8 {fmt(100 * r.underestimation_at_end)} %, over the ramp "
        f"{fmt(100 * r.underestimation)} % (SRTT lag {fmt(100 * r.by_srtt_lag)} %, "
        f"α's timing {fmt(100 * r.by_alpha_update)} %), β {fmt(r.beta_median)}, cellular SRTT at "
        f"{fmt(r.srtt_over_true_R2)} of the true RTT, γ at the ramp's start {fmt(r.gamma_at_start)}, cellular slow "
        f"start in {fmt(100 * r.cell_slow_start_fraction)} % of the ramp, Eq. (12) at this β and lag "
        f"{fmt(100 * r.eq12_at_these)} % ({r.runs_reaching_gamma_8} runs)" for r in abl.itertuples()) + "."
    rates = abl[abl["variant"].str.startswith(("as run", "cellular"))].sort_values("cell_rate_mbps")
    if len(rates) > 1:
        u = rates["underestimation_at_end"]
        text += (f" Over cellular rates of {fmt(rates['cell_rate_mbps'].min())}–{fmt(rates['cell_rate_mbps'].max())} "
                 f"Mbit/s β's median over the ramp runs from {fmt(rates['beta_median'].min())} to "
                 f"{fmt(rates['beta_median'].max())} and the underestimation at γ = 8 from {fmt(100 * u.min())} to "
                 f"{fmt(100 * u.max())} %" + (": no rate of the grid gives the paper's 61 % within "
                                              f"{DEFAULT_TOLERANCE.describe()}." if not any(
                                                  DEFAULT_TOLERANCE.holds(_C6['underestimation'].value, x)
                                                  for x in u) else "."))
    lossless = abl.iloc[-1]
    if abs(lossless["beta_median"] - _C6["beta"].value) <= 0.5 * _C6["beta"].value:
        text += (f" Without WiFi's random loss β is {fmt(lossless['beta_median'])}, near the paper's assumed 2, so "
                 "the declared 0.9 % loss is what makes β large; the underestimation is then "
                 f"{fmt(100 * lossless['underestimation'])} %, still below 61 %, because the SRTT sees "
                 f"{fmt(lossless['srtt_over_true_R2'])} of the true cellular RTT, where the paper's 61 % takes α "
                 "frozen at a γ of 0.25 of the true one.")
    if (abl["cell_slow_start_fraction"] > SLOW_START_MAJORITY).all() and (abl["by_alpha_update"].abs() < 0.02).all():
        text += (" In every variant the ramp falls in the cellular subflow's first slow start, where α is "
                 "recomputed on every ACK, so α's update timing cannot act; this scenario has no ramp in "
                 "congestion avoidance to test the paper's second cause on.")
    return text


def _cause(values: pd.Series, slow_start: float | None = None) -> Measured:
    """The sign of a cause's effect from its runs' 95 % CI; with ``slow_start`` (the mean share
    of the ramp the cellular subflow spends in slow start) above SLOW_START_MAJORITY, α's
    update timing is not testable (rule (1) of the module doc)."""
    m, ci, n = mean_ci95(values)
    if n == 0:
        return Measured(None, n=0, not_testable="no run reached γ = 8")
    note = f"its share of the underestimation: {fmt(m)} ± {fmt(ci or 0)}"
    if slow_start is not None and slow_start > SLOW_START_MAJORITY:
        return Measured(None, n=n, note=note, not_testable=(
            f"the cellular subflow is in slow start in {fmt(100 * slow_start)} % of the ramp, where Linux's "
            "mptcp_ccc_cong_avoid (and the engine, policy per_rtt) recomputes α on every ACK: a once-per-RTT "
            "update cannot act there by construction"))
    cat = REDUCES if ci is not None and m - ci > 0 else RAISES if ci is not None and m + ci < 0 else NO_EFFECT
    return Measured(cat, n=n, note=note)


def _figure(ctx: Context, samples: pd.DataFrame) -> list:
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.4))
    a, b, c = axes
    gs = np.linspace(1, 10, 181)
    for beta in BETAS:
        ok = gs * gs >= beta
        a.plot(gs[ok], [ct.increment_efficiency(beta, g) for g in gs[ok]], label=f"Eq. (12), β = {beta}")
    a.plot([_C6["gamma_from"].value, _C6["gamma_to"].value],
           [_C6["efficiency_from"].value, _C6["efficiency_to"].value], "kx", ms=8, mew=2,
           label="paper's values (§V-B, β = 2)")
    a.set_xlabel("RTT ratio γ = R₂/R₁")
    a.set_ylabel("WiFi increment efficiency (× TCP's 1/w₁)")
    a.set_title("A: model, Eq. (12)")
    a.legend(fontsize=8, loc="lower right")
    sel = samples[samples["policy"] == "per_rtt"]
    step = sel.assign(k=(sel["time_in_ramp_s"] / 0.01).round().astype(int)).groupby("k")
    med = step[["time_in_ramp_s", "gamma_true", "gamma_srtt"]].median()
    b.plot(med["time_in_ramp_s"], med["gamma_true"], color="k", label="true γ (queueing delay included)")
    b.plot(med["time_in_ramp_s"], med["gamma_srtt"], color="tab:orange", label="γ from the SRTTs (what LIA uses)")
    for y in (2, 8):
        b.axhline(y, color="gray", ls=":", lw=1)
    b.set_xlabel("time since the ramp began (s)")
    b.set_ylabel("RTT ratio γ = R₂/R₁")
    b.set_title("B: simulated γ (median of the runs)")
    b.legend(fontsize=8, loc="upper left")
    bins = sel.assign(g=(sel["gamma_true"] * 2).round() / 2).groupby("g")
    eff = bins[["eff_used", "eff_fresh", "eff_true"]].median()
    c.plot(eff.index, eff["eff_true"], "o-", color="k", ms=3, label="α from the true RTTs")
    c.plot(eff.index, eff["eff_fresh"], "s--", color="tab:green", ms=3, label="α recomputed from the SRTTs")
    c.plot(eff.index, eff["eff_used"], "^-", color="tab:red", ms=3, lw=0.8, label="α applied by LIA (per RTT)")
    c.set_ylim(0, 1.45 * float(eff.to_numpy().max()))
    c.set_xlabel("true RTT ratio γ (bins of 0.5)")
    c.set_ylabel("WiFi increment efficiency (× TCP's 1/w₁)")
    c.set_title("C: simulated efficiency (median of the runs)")
    c.legend(fontsize=8, loc="upper right")
    for ax in axes:
        ax.grid(True, alpha=0.3, which="both")
    fig.tight_layout()
    return links.save_figure(ctx, fig, "efficiency_vs_gamma")


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    reps = ctx.reps(*REPS)
    frames = []
    total = len(POLICIES) * reps
    for k, (policy, seed) in enumerate((p, s) for p in POLICIES for s in range(1, reps + 1)):
        frames.append(ramp(policy, seed))
        if ctx.progress:
            ctx.progress(k + 1, total)
    samples = pd.concat(frames, ignore_index=True)
    runs = per_run(samples)
    tables = {"ramp samples": ctx.path("ramp_samples.csv"), "per run": ctx.path("runs.csv"),
              "ablation": ctx.path("ablation.csv")}
    samples.to_csv(tables["ramp samples"], index=False)
    runs.to_csv(tables["per run"], index=False)
    abl = _ablation(min(reps, ABLATION_SEEDS))
    abl.to_csv(tables["ablation"], index=False)
    figs = _figure(ctx, samples)

    beta = _C6["beta"].value
    g0, g1 = _C6["gamma_from"].value, _C6["gamma_to"].value
    e0, e1 = ct.increment_efficiency(beta, g0), ct.increment_efficiency(beta, g1)
    linux = runs[runs["policy"] == "per_rtt"]
    every = runs[runs["policy"] == "per_ack"]
    pooled = samples[samples["policy"] == "per_rtt"]
    better = float(pooled["wifi_better"].mean()) if len(pooled) else float("nan")
    measured = {
        "eq12-from": Measured(e0),
        "eq12-to": Measured(e1, note=f"the printed 61 % holds for x {_carried_band().describe()} (1 − 0.25/x "
                                     f"rounds to 61 %): {fmt(e1)} is in that band, the printed 0.65 is not "
                                     f"(1 − 0.25/0.65 = {fmt(100 * (1 - e0 / 0.65))} %)"),
        "eq12-under": Measured(ct.increment_underestimation(beta, g0, g1)),
        "under": measured_mean(linux["underestimation_at_end"], "per run: 1 − applied / true efficiency at the "
                               "first sample with true γ ≥ 8 (rule (3))", empty="no run reached γ = 8"),
        "cause-srtt": _cause(linux["by_srtt_lag"]),
        "cause-alpha": _cause(linux["by_alpha_update"], float(linux["cell_slow_start_fraction"].mean())
                              if len(linux) else None),
        "beta": measured_mean(linux["beta_median"], "mean over the runs of each run's median"),
        "better-flow": (Measured("WiFi" if better > 0.5 else "cellular", n=len(pooled),
                                 note=f"WiFi is the better flow in {fmt(100 * better)} % of the samples")
                        if len(pooled) else Measured(None, n=0, not_testable="no run reached γ = 8")),
    }

    def m(df: pd.DataFrame, col: str) -> tuple[float, float]:
        x, ci, _n = mean_ci95(df[col])
        return x, ci or 0.0

    u, uci = m(linux, "underestimation")
    ua, uaci = m(every, "underestimation")
    lag, _ = m(linux, "srtt_over_true_R2")
    srtt, srtt_ci = m(linux, "by_srtt_lag")
    alpha, alpha_ci = m(linux, "by_alpha_update")
    b_med, _ = m(linux, "beta_median")
    length, _ = m(linux, "ramp_length_s")
    g_start, _ = m(linux, "gamma_at_start")
    slow, _ = m(linux, "cell_slow_start_fraction")
    lo_u, hi_u = float(linux["underestimation"].min()), float(linux["underestimation"].max())
    end_u, end_ci = m(linux, "underestimation_at_end")
    bins = pooled.assign(g=(pooled["gamma_true"] * 2).round() / 2).groupby("g")[["eff_used", "eff_true"]].median()
    above = int((bins["eff_true"] > bins["eff_used"]).sum())
    # What Eq. (12) gives at the paper's β = 2 when α sees γ shrunk by the simulated SRTT lag.
    lagged = 1 - ct.increment_efficiency(beta, lag * g1) / e1 if beta <= (lag * g1) ** 2 else float("nan")
    srtt_cat, alpha_cat = measured["cause-srtt"].value, measured["cause-alpha"].value
    direction = "underestimates" if u > 0 else "overestimates"
    band = _carried_band()
    eq_to = (f"the printed 0.65 is not what the equation gives (a paper inconsistency), and the printed 61 % holds "
             f"only for values {band.describe()} (rule (2) of the setup), which {fmt(e1)} meets and 0.65 misses"
             if round(e1, 2) != _C6["efficiency_to"].value else "as printed")
    parts = [
        f"**Model.** Eq. (12) gives {fmt(e0)} at γ = 2 and {fmt(e1)} = 1/1.25² at γ = 8 (β = 2): {eq_to}. "
        f"The underestimation 1 − {fmt(e0)}/{fmt(e1)} = {fmt(100 * measured['eq12-under'].value)} % matches the "
        f"printed 61 %, which thus follows from {fmt(e1)}; 0.65 would give {fmt(100 * (1 - e0 / 0.65))} %.",
        f"**Simulation.** The true γ ramps from the base ratio ({fmt(g_start)}) to 8 in {fmt(length)} s; the "
        f"cellular subflow is in slow start in {fmt(100 * slow)} % of the ramp's samples. When the true γ "
        f"reaches 8 (the claim, rule (3)) LIA underestimates WiFi's increase by {fmt(100 * end_u)} ± "
        f"{fmt(100 * end_ci)} % (n = {len(linux)} runs, 95 % CI), against the paper's 61 %. Averaged over the "
        f"ramp it {direction} it by {fmt(100 * abs(u))} ± {fmt(100 * uci)} % (single runs from {fmt(100 * lo_u)} "
        f"to {fmt(100 * hi_u)} %, negative = overestimation; the paper's own model gives {fmt(100 * _ramp_mean())} "
        f"% for that average). With α recomputed on every ACK it is {fmt(100 * ua)} ± {fmt(100 * uaci)} %. "
        f"In panel C the efficiency with the true RTTs (black) lies above the applied one (red) in {above} of "
        f"{len(bins)} γ bins.",
        f"**Which cause acts.** The SRTT lag — {srtt_cat}: it accounts for {fmt(100 * srtt)} ± "
        f"{fmt(100 * srtt_ci)} % of WiFi's increase; the cellular SRTT is on average {fmt(lag)} of the true RTT "
        f"during the ramp (panel B). α's update timing — {alpha_cat or 'not testable'}: {fmt(100 * alpha)} ± "
        f"{fmt(100 * alpha_ci)} %. "
        + ("In slow start Linux's coupled controller (and the engine) recomputes α on every ACK, so α is never "
           "older than the SRTTs it is computed from: the applied and the freshly recomputed efficiencies "
           "coincide in panel C." if alpha_cat != REDUCES else
           "α's update lags the SRTTs it is computed from, as the paper says."),
        "**Why not 61 %.** The 61 % is counted where the seed gets it, as a model claim (`eq12-under`, rule (4) "
        "of the setup); the simulated value is a supporting check of the inputs the paper assumes. "
        f"The paper's number assumes α frozen at γ = 2 while the true γ is 8 (a γ seen at 0.25 "
        f"of its value) and β fixed at 2. Here α follows the SRTT, seen at {fmt(lag)} of the true RTT; at the "
        f"paper's β = 2 such a lag gives 1 − Eq. (12)(2, {fmt(lag * g1)})/Eq. (12)(2, 8) = {fmt(100 * lagged)} %. "
        f"And β is not 2 over the ramp: the ramp is the cellular window growing fourfold in slow start while "
        f"WiFi's 0.9 % loss keeps its window small, so β is {fmt(b_med)} (mean of the runs' medians); WiFi is still the better flow in {fmt(100 * better)} % "
        "of the samples. Where the cellular flow is the better one (β > γ²), a lagging SRTT raises α instead, "
        "which is why single runs can overestimate.",
    ]
    parts.append(_ablation_text(abl))
    discussion = "\n\n".join(parts)
    setup = (f"{(__doc__ or '').strip()}\n\n{reps} runs (seeds 1–{reps}) per α policy; an ablation changes "
             f"the cellular rate over the grid and WiFi's random loss (α per RTT, seeds "
             f"1–{min(reps, ABLATION_SEEDS)}).")
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion, tables, figs,
                  assumptions=links.ASSUMPTIONS)
