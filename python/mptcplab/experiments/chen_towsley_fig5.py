"""Chen & Towsley (seed 000) §V-A, Fig. 5: loss rate vs network storage F = ⌈B + μτ⌉.

Model: the loss rate of one congestion-avoidance cycle is 1/N with N = ⌈3b/8·(F+1)² + F⌉
(Eq. (10) integrated to w = F, plus one window). The paper evaluates it for μ = 10 Mbit/s,
τ = 15 ms and b = 2, taking the minimum BDP as "roughly 12 packets": B = 0, μτ and 8μτ then
give F = 12, 24 and 108 and 1/N = 0.72 %, 0.203 % and 0.0111 %, which it prints as 0.7 %,
0.2 % and 0.01 %. The exact μτ (12.5 packets of 1500 B) gives F = 13, 25 and 113 and
0.625 %, 0.188 % and 0.0101 %. The model claims use the paper's μτ = 12; the paper's points
in the figure are drawn at its F = 12 / 24 / 108.

Simulation: one Reno flow (delayed ACKs b = 2, I_w = 10, per-ACK window growth as the paper's
Linux 3.11) through a drop-tail bottleneck of μ = 10 Mbit/s and τ = 15 ms (7.5 ms each way),
with a buffer B of 0 (one packet in the simulator, which cannot have none), 1, 2, 4 and 8 × μτ
(μτ = 12.5 rounded to whole packets: 12, 25, 50, 100), no random loss. The buffer counts the
packets waiting for the transmitter. The loss rate is the bottleneck's drops over the packets
that arrived at it; the simulated points sit at their own storage F = ⌈B + 12.5⌉.

Tolerances: the paper prints its loss rates with one significant figure and no spread, so a
value agrees when it rounds to the printed digit (half a unit of the last digit either side).

Verdict rule at B = 0. The paper's B = 0 point (0.7 %, F = 12) needs a link with no waiting
room: only the packet in service. The engine cannot build one (its configuration rejects
`queue = "0 packets"`: "must hold at least one packet"; a queue holds at least one packet
besides the one in service), so the simulated B = 0 claim is not testable for that reason
alone. A zero-packet queue is a well-defined link (every packet that finds the transmitter busy
is dropped) that the engine could support; it does not today (a gap). What the engine can run,
its smallest queue (one packet, F = ⌈1 + 12.5⌉ = 14), is judged by a separate claim (`sim-q1`)
against the model 1/N evaluated at that same F, with the project's default ±15 % (there is no
printed digit to round to).

What kind of claim the 0.7 / 0.2 / 0.01 % are (the rule of Fig. 6's section, applied to every
seed number alike): a seed number is a simulation claim when the seed reports it as an outcome
of what it ran, or as a property of the mechanism it ran; it is a model claim when the seed
obtains it by evaluating its own equations at inputs it states as assumed. These are the second
kind: "Fig. 5 depicts the network loss rate, 1/N, as a function of network storage capacity F
… if we assume the minimum BDP does not change in each cycle, and packets are dropped only due
to the filled network buffer, increasing the buffer size reduces the loss rate dramatically"
(§V-A); the seed measures no loss rate at these buffers. They are the model claims
(`model-b*`, headline). The simulated loss rates (`sim-b0`, `sim-b1`, `sim-b8`, `sim-q1`) ask
whether a simulated Reno flow supplies what the model assumes; they are supporting checks,
not counted as tests of a seed measurement, so the section has no headline simulation claim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mptcplab.experiments.base import (
    DEFAULT_TOLERANCE,
    Claim,
    Context,
    Measured,
    Result,
    Tolerance,
    fmt,
    repeated,
    save_figure,
)
from mptcplab.models import chen_towsley as ct
from mptcplab.models import paper_values as pv

if TYPE_CHECKING:
    import pandas as pd

NAME = "chen-towsley-fig5"
TITLE = "Loss rate vs network storage (Chen & Towsley, Fig. 5)"
SOURCE = "seed 000 §V-A, Eq. (10), Fig. 5"

MU_BPS = pv.CT_FIG5_SETUP["mu"].value
TAU_S = pv.CT_FIG5_SETUP["tau"].value
B_ACK = pv.CT_FIG5_SETUP["b"].value
#: The paper's minimum BDP, "roughly 12 packets" (the exact μτ is 12.5).
PAPER_BDP = pv.CT_FIG5_SETUP["bdp"].value
MULTIPLES = (0, 1, 2, 4, 8)
DURATION_S = 3000.0
DURATION = f"{DURATION_S:g}s"


def _half_digit(printed_percent: float) -> float:
    """Half a unit of the last digit of a one-significant-figure percentage (0.7 → 0.05)."""
    from math import floor, log10

    return 0.5 * 10 ** floor(log10(printed_percent))


def _rounding(value_percent: float) -> Tolerance:
    return Tolerance.absolute(_half_digit(value_percent),
                              "the paper prints one significant figure: every value that rounds to it agrees")


#: The paper's three points (F, loss rate in %): F = ⌈B + μτ⌉ with its μτ = 12 and B = 0, μτ, 8μτ.
PAPER_POINTS: tuple[tuple[int, float], ...] = tuple(
    (ct.storage_capacity(m * PAPER_BDP, PAPER_BDP), c.value * 100) for m, c in pv.CT_FIG5_LOSS
)

_BUFFER = {0: "no buffer (B = 0)", 1: "B = μτ", 8: "B = 8μτ"}

#: Why the simulated B = 0 point is not judged (the module doc's verdict rule).
B0_NOT_TESTABLE = ("the engine cannot build a link with no waiting room (queue = 0 packets is rejected: a queue "
                   "holds at least one packet besides the one in service); its smallest queue, one packet, is "
                   "F = 14, judged against the model there by sim-q1")
#: The engine's smallest queue (packets) and its storage F = ⌈1 + μτ⌉ with the exact μτ = 12.5.
Q_MIN = 1
F_QMIN = ct.storage_capacity(Q_MIN, ct.bdp_packets(MU_BPS, TAU_S))

CLAIMS: tuple[Claim, ...] = (
    Claim("bdp", "model", "minimum BDP μτ for μ = 10 Mbit/s, τ = 15 ms, 1500-byte packets", "packets", PAPER_BDP,
          pv.CT_FIG5_SETUP["bdp"].source, DEFAULT_TOLERANCE, printed=pv.CT_FIG5_SETUP["bdp"].printed, headline=False),
    *(
        Claim(f"model-b{m}", "model",
              f"1/N at F = ⌈B + μτ⌉ = {ct.storage_capacity(m * PAPER_BDP, PAPER_BDP)}, {_BUFFER[m]}, "
              "the paper's μτ = 12",
              "%", cited.value * 100, cited.source, _rounding(cited.value * 100), printed=cited.printed)
        for m, cited in pv.CT_FIG5_LOSS
    ),
    *(
        Claim(f"sim-b{m}", "simulation",
              "simulated loss rate, " + _BUFFER[m],
              "%", cited.value * 100, cited.source, _rounding(cited.value * 100), printed=cited.printed,
              not_testable=B0_NOT_TESTABLE if m == 0 else None, headline=False)
        for m, cited in pv.CT_FIG5_LOSS
    ),
    Claim("sim-q1", "simulation",
          f"simulated loss rate at the engine's smallest queue ({Q_MIN} packet, F = {F_QMIN}) against the model "
          f"1/N at the same F", "%", ct.loss_rate_per_cycle(F_QMIN, B_ACK) * 100,
          f"{pv.S000}, §V-A, Eq. (10)", DEFAULT_TOLERANCE, printed=f"1/N at F = {F_QMIN} (the model, evaluated)",
          headline=False),
)


#: The ablation (not counted): the smallest queues, and delayed ACKs off (b = 1: an ACK releases
#: one segment, two when the window grows, instead of two or three). (label, queue packets, b).
ABLATIONS: tuple[tuple[str, int, int], ...] = (
    ("1-packet queue (as run for B = 0)", 1, 2),
    ("2-packet queue", 2, 2),
    ("3-packet queue", 3, 2),
    ("4-packet queue", 4, 2),
    ("1-packet queue, delayed ACKs off (b = 1)", 1, 1),
    ("B = μτ (12 packets), delayed ACKs off (b = 1)", 12, 1),
)


def _ablation(bdp: float) -> pd.DataFrame:
    """One deterministic run per variant (the claims' duration): the loss rate against the
    model's 1/N at the variant's own F and b, and the link's utilisation."""
    import pandas as pd

    import mptcplab

    rows = []
    for label, q, b in ABLATIONS:
        sc = scenario(DURATION)
        sc["paths"][0]["queue"] = f"{q} packets"
        sc["connections"][0]["tcp"]["delack_segments"] = b
        summary = mptcplab.run(sc, seed=1).summary
        down = next(x for x in summary["links"] if x["direction"] == "down")
        sf = summary["subflows"][0]
        f = ct.storage_capacity(q, bdp)
        loss, model = down["queue_drops"] / down["arrived_packets"], ct.loss_rate_per_cycle(f, b)
        rows.append({"variant": label, "buffer_packets": q, "b": b, "F_packets": f, "measured_loss": loss,
                     "model_loss": model, "ratio": loss / model, "utilisation": down["utilisation"],
                     "recoveries": sf["recovery_episodes"], "rtos": sf["rtos"],
                     "segments_per_recovery": sf["segments_sent"] / max(1, sf["recovery_episodes"])})
    return pd.DataFrame(rows)


def _ablation_reading(abl: pd.DataFrame) -> str:
    """What the ablation shows about the B = 0 miss, stated only where its rows support it."""
    one = abl.iloc[0]
    rest = abl[(abl["buffer_packets"] > 1) & (abl["b"] == 2)]
    deck = abl[(abl["buffer_packets"] == 1) & (abl["b"] == 1)]
    if one["ratio"] <= 2 or rest.empty or ((rest["ratio"] - 1).abs() > 0.25).any():
        return "The scan does not isolate the one-packet queue as the cause."
    text = (f"With {int(rest['buffer_packets'].min())}–{int(rest['buffer_packets'].max())} packets of queue the "
            f"simulated rate is within 25 % of 1/N ({fmt(rest['ratio'].min())}–{fmt(rest['ratio'].max())}×), "
            "against "
            f"{fmt(one['ratio'])}× with one packet, where a loss recovery every "
            f"{fmt(one['segments_per_recovery'])} segments ({int(one['rtos'])} "
            f"timeout{'' if one['rtos'] == 1 else 's'}) keeps the window at a few "
            f"segments, below μτ, and the link {fmt(100 * one['utilisation'])} % busy")
    if len(deck) and deck.iloc[0]["ratio"] <= 2:
        text += (f"; with delayed ACKs off the one-packet queue gives {fmt(deck.iloc[0]['ratio'])}× the b = 1 model: "
                 "the miss at B = 0 is the three-segment burst a delayed ACK releases when the window grows, "
                 "which a queue of one packet cannot hold, not the storage F the model reasons about")
    return text + "."


def scenario(duration: str) -> dict:
    return {
        "name": NAME,
        "duration": duration,
        "paths": [{"name": "p", "rate": "10Mbit", "delay": "7.5ms", "queue": "1 packets"}],
        "connections": [
            {
                "name": "tcp",
                "kind": "tcp",
                "paths": ["p"],
                "app": {"kind": "bulk"},
                "tcp": {"slow_start": "per_ack", "ca_counting": "per_ack"},
            }
        ],
    }


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    bdp = ct.bdp_packets(MU_BPS, TAU_S)  # 12.5 packets of 1500 B
    queues = [max(1, round(m * bdp)) for m in MULTIPLES]
    # The flow is loss-driven only by the buffer (no random loss), so runs are deterministic:
    # repetitions over seeds would repeat the same run. One run per buffer size, the same in
    # quick mode (about 2 s of engine time each).
    df = repeated(ctx, scenario(DURATION), {"paths.p.queue": [f"{q} packets" for q in queues]}, 1, "runs")
    rows = []
    for m, q in zip(MULTIPLES, queues, strict=True):
        r = df[df["paths.p.queue"] == f"{q} packets"].iloc[0]
        f = ct.storage_capacity(q, bdp)
        rows.append({"buffer_bdp": m, "buffer_packets": q, "F_packets": f,
                     "model_loss": ct.loss_rate_per_cycle(f, B_ACK),
                     "measured_loss": r["link.p.down.queue_drops"] / r["link.p.down.arrived_packets"],
                     "drops": int(r["link.p.down.queue_drops"]), "arrived": int(r["link.p.down.arrived_packets"]),
                     "mean_rtt_s": r["sf.tcp.p.mean_rtt_s"]})
    table = pd.DataFrame(rows)
    csv = ctx.path("loss_vs_storage.csv")
    table.to_csv(csv, index=False)
    abl = _ablation(bdp)
    abl_csv = ctx.path("ablation.csv")
    abl.to_csv(abl_csv, index=False)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    fs = list(range(5, 121))
    ax.semilogy(fs, [ct.loss_rate_per_cycle(f, B_ACK) * 100 for f in fs], color="k", lw=1,
                label="model 1/N, N = ⌈3b/8·(F+1)² + F⌉")
    ax.semilogy(table["F_packets"], table["measured_loss"] * 100, "o", color="tab:blue",
                label="simulated (μτ = 12.5, B = 1, 12, 25, 50, 100 packets)")
    ax.semilogy([f for f, _ in PAPER_POINTS], [v for _, v in PAPER_POINTS], "s", mfc="none", ms=9,
                color="tab:red",
                label="paper's text: " + " / ".join(c.printed.removesuffix(" %") for _, c in pv.CT_FIG5_LOSS)
                + " % at F = " + " / ".join(str(f) for f, _ in PAPER_POINTS))
    ax.set_xlabel("network storage F = ⌈B + μτ⌉ (packets)")
    ax.set_ylabel("loss rate (%)")
    ax.set_xlim(0, 120)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    figs = save_figure(ctx, fig, "loss_vs_storage")

    measured: dict[str, Measured] = {"bdp": Measured(bdp, note="μτ = 10 Mbit/s × 15 ms / (8 × 1500 B)")}
    for m, cited in pv.CT_FIG5_LOSS:
        f_paper = ct.storage_capacity(m * PAPER_BDP, PAPER_BDP)
        f_exact = ct.storage_capacity(m * bdp, bdp)
        measured[f"model-b{m}"] = Measured(
            ct.loss_rate_per_cycle(f_paper, B_ACK) * 100,
            note=f"N = {ct.packets_per_cycle(f_paper, B_ACK)}; with the exact μτ = {fmt(bdp)}: F = {f_exact}, "
                 f"{fmt(ct.loss_rate_per_cycle(f_exact, B_ACK) * 100)} %")
        row = table[table["buffer_bdp"] == m].iloc[0]
        measured[f"sim-b{m}"] = Measured(
            float(row["measured_loss"]) * 100,
            note=f"one deterministic run of {fmt(DURATION_S)} s ({fmt(int(row['drops']))} drops of "
                 f"{fmt(int(row['arrived']))} packets); a {int(row['buffer_packets'])}-packet queue, "
                 f"F = {int(row['F_packets'])}, model 1/N there "
                 f"{fmt(row['model_loss'] * 100)} %")

    q1 = table[table["buffer_packets"] == Q_MIN].iloc[0]
    measured["sim-q1"] = Measured(
        float(q1["measured_loss"]) * 100,
        note=f"the B = 0 run ({fmt(int(q1['drops']))} drops of {fmt(int(q1['arrived']))} packets): a delayed ACK "
             "releases two or three back-to-back segments, which a one-packet queue cannot hold, so drops come "
             "long before the window reaches F (the ablation's b = 1 row)")
    big = table[table["buffer_bdp"] >= 1]
    ratios = (big["measured_loss"] / big["model_loss"]).tolist()
    zero = table[table["buffer_bdp"] == 0].iloc[0]
    falls = bool((big["measured_loss"].diff().dropna() < 0).all())
    exact_f = [ct.storage_capacity(m * bdp, bdp) for m, _ in pv.CT_FIG5_LOSS]
    top = table.iloc[-1]
    excess = int(top["drops"]) - top["arrived"] * top["model_loss"]
    model_vals = " / ".join(fmt(measured[f"model-b{m}"].value) for m, _ in pv.CT_FIG5_LOSS)
    sim_vals = " / ".join(fmt(measured[f"sim-b{m}"].value) for m, _ in pv.CT_FIG5_LOSS)
    discussion = (
        f"With the paper's μτ = 12, 1/N gives {model_vals} % for B = 0, μτ and 8μτ, which round to the printed "
        "0.7 %, 0.2 % and 0.01 %; the paper's points therefore belong at F = "
        + " / ".join(str(f) for f, _ in PAPER_POINTS) + ". With the exact "
        f"μτ = {fmt(bdp)} they would be "
        + " / ".join(fmt(ct.loss_rate_per_cycle(f, B_ACK) * 100) for f in exact_f)
        + " % at F = " + " / ".join(str(f) for f in exact_f)
        + ".\n\n"
        f"The simulation gives {sim_vals} % at a one-packet queue, μτ and 8μτ. For B ≥ μτ its loss rate is "
        f"{fmt(min(ratios))}–{fmt(max(ratios))}× the model's 1/N at the simulated F and "
        f"{'falls with the buffer as the model says' if falls else 'does not fall monotonically with the buffer'}. "
        f"At B = {int(top['buffer_bdp'])}μτ the run holds only about {fmt(top['arrived'] * top['model_loss'])} cycles, "
        f"and its {fmt(int(top['drops']))} drops exceed one per cycle by {fmt(excess)}, about F/2 = "
        f"{fmt(top['F_packets'] / 2)}: the first slow start grows the window by ψ = 1.5 per round, overshoots F "
        "by up to F/2 and loses that once. "
        "The paper's B = 0 cannot be built (the engine has no link without waiting room); at its smallest queue "
        f"(one packet, F = {int(zero['F_packets'])}) the simulation contradicts the model: "
        f"{fmt(zero['measured_loss'] * 100)} % against 1/N = {fmt(zero['model_loss'] * 100)} % at the same F "
        "(sim-q1, supporting). The model assumes packets are dropped only when the window fills F; the sender's "
        "ACK-clocked bursts (a delayed ACK releases two or three back-to-back segments) overflow a one-packet "
        "queue long before the window reaches F."
        "\n\n**Ablation** (not counted; one run of the same length each): "
        + "; ".join(f"{r.variant}: F = {r.F_packets}, {fmt(100 * r.measured_loss)} % against the model's "
                    f"{fmt(100 * r.model_loss)} % for b = {r.b} ({fmt(r.ratio)}×), link {fmt(100 * r.utilisation)} % "
                    "busy" for r in abl.itertuples())
        + ". " + _ablation_reading(abl)
    )
    setup = (f"{__doc__.strip()}\n\nSimulated for {fmt(DURATION_S)} s per buffer size, the first slow start "
             "included.")
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion,
                  {"loss vs storage": csv, "ablation": abl_csv}, figs)
