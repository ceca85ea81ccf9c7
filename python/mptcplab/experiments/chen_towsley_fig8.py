"""Chen & Towsley (seed 000) §V-C, Fig. 8: 16 MB MPTCP download times with TCP idle restart
(RST) and penalisation (penl.) on or off, under cellular bufferbloat.

2-flow MPTCP downloads of 16 MB (LIA, minRTT, Linux 3.11 window growth, 6 MB receive buffer
as the paper, 4 MiB send buffer) over WiFi (30 ms, 0.9 % loss) and the scripted
bufferbloated cellular link of Fig. 7 (80 ms base RTT, 3000-packet queue, 10 Mbit/s; the
download ends before the scripted dip at 20 s). Four configurations: idle restart on/off
(``tcp.idle_restart``) × penalisation on/off. "Penalisation" switches on both mechanisms of
NSDI'12 §4.2 that Linux MPTCP v0.88 applied together, opportunistic retransmission and
penalising the slow subflow (``sched_params.minrtt``). Runs differ by the WiFi loss seed;
repeat r uses the same seed in every configuration (common random numbers). The paper ran
40 rounds per configuration.

The paper's 30 % is the improvement of "no RST w/ penl.". Our primary baseline is
"RST w/ penl." (only the idle-restart setting changes); the improvement over vanilla
MPTCP ("RST w/o penl.", Linux's defaults) is reported too.
"""

from __future__ import annotations

from mptcplab.experiments import _chen_towsley_links as links
from mptcplab.experiments.base import Comparison, Context, Result, mean_ci95, repeated
from mptcplab.models import paper_values as pv

NAME = "chen-towsley-fig8"
TITLE = "16 MB download times with idle restart and penalisation on/off (Chen & Towsley, Fig. 8)"
SOURCE = "seed 000 §V-C, Fig. 8"

#: Runs per configuration: full (the paper's 40), quick. Module-level so tests can shrink it.
REPS = (int(pv.CT_FIG8["rounds"].value), 8)
CONFIGS = (("RST w/o penl.", True, False), ("RST w/ penl.", True, True),
           ("no RST w/o penl.", False, False), ("no RST w/ penl.", False, True))


def scenario() -> dict:
    size = int(pv.CT_FIG8["file_size"].value)
    return {
        "name": NAME,
        "duration": "300s",
        "paths": [links.path("wifi", links.WIFI), links.path("cell", links.BLOATED)],
        "connections": [links.mptcp({"kind": "download", "size": f"{size}B"},
                                    rcvbuf=f"{int(pv.CT_FIG8['receive_buffer'].value)}B")],
    }


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    reps = ctx.reps(*REPS)
    grid = {"connections.mptcp.tcp.idle_restart": [True, False],
            "connections.mptcp.sched_params.minrtt": [
                {"opportunistic_retransmission": False, "penalisation": False},
                {"opportunistic_retransmission": True, "penalisation": True}]}
    df = repeated(ctx, scenario(), grid, reps, "runs")
    pen = df["connections.mptcp.sched_params.minrtt"].astype(str).str.contains('"penalisation": true')
    rst = df["connections.mptcp.tcp.idle_restart"].astype(str).isin(["True", "true", "1"])
    df = df.assign(restart=rst, penalisation=pen)
    df["config"] = [f"{'RST' if r else 'no RST'} {'w/' if p else 'w/o'} penl." for r, p in zip(rst, pen)]
    keep = ["config", "restart", "penalisation", "repeat", "seed", "conn.mptcp.download_time_s",
            "conn.mptcp.completed", "sf.mptcp.wifi.idle_restarts", "conn.mptcp.penalisations",
            "conn.mptcp.sndbuf_limited_time_s", "sf.mptcp.wifi.share"]
    table = df[keep].rename(columns={"conn.mptcp.download_time_s": "download_time_s",
                                     "sf.mptcp.wifi.idle_restarts": "wifi_idle_restarts",
                                     "conn.mptcp.sndbuf_limited_time_s": "starvation_s",
                                     "sf.mptcp.wifi.share": "wifi_share"})
    csv = ctx.path("download_times.csv")
    table.to_csv(csv, index=False)

    names = [c[0] for c in CONFIGS]
    data = [table[table["config"] == n]["download_time_s"].astype(float).dropna() for n in names]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.boxplot(data, tick_labels=names, showmeans=True)
    ax.set_ylabel("16 MB download time (s)")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    figs = links.save_figure(ctx, fig, "download_times")

    stats = {n: mean_ci95(d) for n, d in zip(names, data)}
    comps = [Comparison(f"mean download time, {n}", "s", None, *stats[n]) for n in names]
    by_seed = table.pivot_table(index="repeat", columns="config", values="download_time_s")
    improve = {}
    for base in ("RST w/ penl.", "RST w/o penl."):
        gains = (1 - by_seed["no RST w/ penl."] / by_seed[base]).dropna()
        improve[base] = mean_ci95(gains)
        comps.append(Comparison(f"improvement of no RST w/ penl. over {base}", "fraction",
                                pv.CT_FIG8["improvement"].value, *improve[base], "paired by seed"))
    gains = (1 - by_seed["no RST w/o penl."] / by_seed["RST w/o penl."]).dropna()
    comps.append(Comparison("improvement of disabling idle restart, w/o penl.", "fraction", None, *mean_ci95(gains),
                            "paired by seed"))
    restarts = mean_ci95(table[table["restart"]]["wifi_idle_restarts"])
    comps.append(Comparison("WiFi idle restarts per run, RST configurations", "restarts", None, *restarts))
    primary = improve["RST w/ penl."][0]
    lower = stats["no RST w/ penl."][0] < stats["RST w/ penl."][0] and stats["no RST w/o penl."][0] < stats["RST w/o penl."][0]
    if lower and abs(primary - pv.CT_FIG8["improvement"].value) <= 0.1:
        verdict = "reproduced"
    elif lower:
        verdict = "partly reproduced"
    else:
        verdict = "not reproduced"
    reason = (
        f"Disabling idle restart changes the mean 16 MB download time by {primary:+.1%} with penalisation and "
        f"{comps[-2].ours:+.1%} without (positive = faster), against the paper's 30 %. The WiFi flow does restart "
        f"after idle periods ({restarts[0]:.1f} per run with RST on), but in the simulator the WiFi flow carries a "
        "small share: LIA's increase α/w with the huge cellular window w, plus 0.9 % loss, keeps its window at "
        "2-3 packets, below I_w = 10, and a restart to min(I_w, cwnd) then changes nothing, so the runs with and "
        "without restart coincide. The download is paced by the cellular flow and the shared send buffer. Penalisation shortens downloads by throttling the bloated cellular flow, as the paper "
        "describes. The paper's gain thus needs a WiFi share and restart cost our assumed links do not produce; we "
        "did not change them to obtain it."
    )
    setup = f"{__doc__.strip()}\n\n{links.__doc__.strip()}\n\n{reps} runs per configuration."
    return Result(NAME, TITLE, SOURCE, setup, comps, verdict, reason, {"download times": csv}, figs)
