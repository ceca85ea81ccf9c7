"""The NSDI '12 Fig. 4 section's figure (read through :mod:`mptcplab.experiments.nsdi12_fig4`)."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments.base import Context, save_figure

#: Seed 003's graph names for the panels.
GRAPH = {"queue as time": "graphs a–c, buffers as time", "queue as packets": "graph a-htb", "queue as TBF": "graphs a–c, TBF as run",
         "low jitter": "graph d", "high jitter": "graph e"}
#: Fixed colours, so a configuration has the same colour in every panel.
COLOURS = {"TCP over WiFi": "C0", "TCP over 3G": "C1", "MPTCP regular": "C2", "MPTCP + M1": "C3", "MPTCP + M1 + M2": "C4"}


def figure(ctx: Context, table: Any, panels: list[str], plt: Any, formatter: Any, links_bps: float, full_use_kb: int) -> list:
    """Five panels: seed 003's graphs a–c (buffers as time; TBF as run), a-htb (packets), d and e (jitter)."""
    fig, axes = plt.subplots(2, 3, figsize=(17, 8), sharex=True, sharey=True)
    axes.flat[-1].set_visible(False)
    for ax, variant in zip(axes.flat, panels):
        t = table[table["variant"] == variant]
        for config, c in t.groupby("config", sort=False):
            ax.errorbar(c["rcvbuf_kb"], c["goodput_mbps"], yerr=c["goodput_mbps_ci95"].fillna(0), marker="o", ms=3,
                        capsize=2, color=COLOURS[str(config)], label=str(config))
        ax.axhline(0.9 * links_bps / 1e6, color="k", ls="--", lw=0.8, label="90 % of WiFi + 3G rates")
        ax.axvline(full_use_kb, color="grey", ls=":", lw=1, label=f"{full_use_kb} KB (seed 003's key result)")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(formatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(formatter(lambda x, _: ""))
        extra = {"queue as packets": " (53 / 333 packets)", "queue as TBF": " (25 000 / 33 750 B)"}.get(variant, " (80 ms / 2 s)")
        ax.set_title(f"{GRAPH[variant]}: {variant}{extra}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylim(0, 13)
        ax.legend(fontsize=7, loc="upper center", ncol=3)
    for ax in axes[1]:
        ax.set_xlabel("receive buffer (KB)")
    axes[0, 2].tick_params(labelbottom=True)
    axes[0, 2].set_xlabel("receive buffer (KB)")
    for ax in axes[:, 0]:
        ax.set_ylabel("goodput over 5–25 s (Mbit/s)")
    fig.tight_layout()
    return save_figure(ctx, fig, "goodput_vs_rcvbuf")
