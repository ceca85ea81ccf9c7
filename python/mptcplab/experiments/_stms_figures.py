"""The STMS section's figures."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments._stms_claims import (
    _T2,
    BUFFERS_KB,
    COLOURS,
    HOST_BUFFERS,
    HOST_CLAIM_NET,
    HOST_LIMITED_BYTES,
    READINGS,
    SPTCP,
)
from mptcplab.experiments._stms_runs import _kb
from mptcplab.experiments.base import Context, save_figure

def _mb_ticks(ax: Any) -> None:
    """Host-buffer axis: log scale, one labelled tick per swept size, in MB."""
    from matplotlib.ticker import FixedLocator, NullLocator

    xs = [_kb(h) for h in HOST_BUFFERS]
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{x / 1e3:g}" for x in xs])


def _figures(ctx: Context, table: Any, host: Any, dyn_ts: Any, plt: Any) -> list:
    figs: list = []
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, reading in zip(axes, READINGS):
        t = table[(table["reading"] == reading) & (table["slow_rtt"] == "200ms")]
        for sched, g in t.groupby("scheduler", sort=False):
            x = [int(b.removesuffix("KB")) for b in g["in_network_buffer"]]
            ax.errorbar(x, g["aggregate_mbps"], yerr=g["aggregate_mbps_ci95"], marker="o", capsize=3,
                        color=COLOURS[str(sched)], label=f"{sched}: aggregate" if sched != SPTCP else SPTCP)
            if sched == "minRTT":
                ax.errorbar(x, g["fast_mbps"], yerr=g["fast_mbps_ci95"], marker="s", ls="--", capsize=3,
                            color=COLOURS["minRTT"], label="minRTT: fast path")
        xs = [r.in_network_buffer.value for r in _T2]
        ax.plot(xs, [r.mptcp_overall_bps.value / 1e6 for r in _T2], "kD", mfc="none", label="slides: MPTCP overall")
        ax.plot(xs, [r.mptcp_fast_path_bps.value / 1e6 for r in _T2], "kv", mfc="none", label="slides: MPTCP fast path")
        ax.set_xticks(BUFFERS_KB)
        ax.set_xlabel("in-network buffer (KB)")
        ax.set_ylim(0, 62)
        ax.set_title("buffer on both paths (the claims' reading)" if reading == "both"
                     else "buffer on the fast path only (slow: 750 KB)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="upper left")
    axes[0].set_ylabel("throughput (Mbit/s)")
    fig.suptitle("20 vs 200 ms RTT, 30 Mbit/s per path, 6 MB host buffers", fontsize=10)
    fig.tight_layout()
    figs += save_figure(ctx, fig, "in_network_buffer")

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, buf in zip(axes, ("30KB", "150KB")):
        h = host[host["in_network_buffer"] == buf]
        for sched, g in h.groupby("scheduler", sort=False):
            g = g.sort_values("host_buffer_kb")
            ax.errorbar(g["host_buffer_kb"], g["aggregate_mbps"], yerr=g["aggregate_mbps_ci95"], marker="o", capsize=3,
                        color=COLOURS[str(sched)], label=str(sched))
        ax.axvline(HOST_LIMITED_BYTES / 1e3, color="k", ls=":", lw=1,
                   label=f"Σ BW × RTT_max = {HOST_LIMITED_BYTES / 1e6:g} MB" + (" (20 % claim)" if buf == HOST_CLAIM_NET else ""))
        _mb_ticks(ax)
        ax.set_xlabel("host buffer, send = receive (MB)")
        ax.set_ylim(0, 52)
        ax.set_title(f"fast-path buffer {buf.removesuffix('KB')} KB, slow path 750 KB", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_ylabel("aggregate throughput (Mbit/s)")
    fig.tight_layout()
    figs += save_figure(ctx, fig, "host_buffer")

    fig, ax = plt.subplots(figsize=(10, 4))
    for sched, g in dyn_ts.groupby("scheduler", sort=False):
        ax.plot(g["time_s"], g["goodput_mbps"], label=str(sched), lw=1, color=COLOURS[str(sched)])
    for t in (10, 15, 20, 25):
        ax.axvline(t, color="grey", ls=":", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput per 0.5 s (Mbit/s)")
    ax.set_title("changing paths: slow delay 100→50→150 ms at 10/20 s, fast rate 30→15→30 Mbit/s at 15/25 s "
                 f"({HOST_LIMITED_BYTES / 1e6:g} MB host buffers)", fontsize=9)
    ax.legend(fontsize=8, loc="lower left", ncol=4)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    figs += save_figure(ctx, fig, "changing_paths")
    return figs
