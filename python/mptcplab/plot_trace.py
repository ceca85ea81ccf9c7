"""A Linux-backend run's kernel trace (``run --trace-kernel``: the folder ``kernel-trace/``
of its run directory, :mod:`mptcplab.kernel.trace`): reading it, and its figure.

``read_kernel_trace(RUN_DIR)`` gives the trace's summary and one DataFrame per tracepoint::

    from mptcplab.plot_trace import read_kernel_trace
    summary, tables = read_kernel_trace("out/run")
    probe = tables["tcp_probe"]                      # time_s, entity, host, sender, snd_cwnd, srtt_us, ...
    probe[probe.sender].pivot_table(index="time_s", columns="entity", values="snd_cwnd")

The figure (``plot_run`` draws it beside the run's own time series) shows, per subflow, the
sender's congestion window and smoothed RTT and the receiver's offered window as tcp_probe
recorded them at every segment, the bytes the MPTCP scheduler handed each subflow, and the
receive buffer where it grew.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab.errors import config_error

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TRACE_DIR", "plot_kernel_trace", "read_kernel_trace"]

TRACE_DIR = "kernel-trace"
TABLES = ("tcp_probe", "rcvbuf_grow", "rcv_space_adjust", "subflow_get_send", "sendmsg_frag", "ack_update_msk")


def read_kernel_trace(run_dir: str | Path) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """The summary (``trace.json``) and the tables of a run directory's ``kernel-trace/``.
    A missing or damaged file is one :class:`~mptcplab.ConfigError` naming it."""
    import pandas as pd

    folder = Path(run_dir) / TRACE_DIR
    if not folder.is_dir():
        raise config_error("--trace-kernel", "this run directory has no kernel trace (run it with --backend linux "
                           "--trace-kernel)", str(run_dir))
    try:
        summary = json.loads((folder / "trace.json").read_text())
        if not isinstance(summary, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as e:
        raise config_error("", f"cannot be read as a kernel trace's summary ({e})", str(folder / "trace.json")) from None
    tables = {}
    for name in TABLES:
        f = folder / f"{name}.parquet"
        try:
            tables[name] = pd.read_parquet(f)
        except Exception as e:  # pyarrow raises several kinds for a damaged file
            raise config_error("", f"cannot be read as a table ({type(e).__name__})", str(f)) from None
    return summary, tables


def _steps(ax: Any, df: pd.DataFrame, column: str, factor: float = 1.0) -> None:
    from mptcplab.errors import one_line

    for entity, g in df.groupby(df["entity"].astype(str), sort=True):
        ax.plot(g["time_s"], g[column] * factor, label=one_line(entity), linewidth=0.8, drawstyle="steps-post")


def plot_kernel_trace(run_dir: str | Path, out: Path, pyplot: Any, save: Any) -> list[Path]:
    """The trace's figure (``kernel-trace.png`` / ``.svg`` in ``out``), drawn with ``pyplot``
    and written by ``save(fig, out, stem)`` (the run plot's helpers)."""
    from mptcplab.errors import one_line

    summary, t = read_kernel_trace(run_dir)
    probe = t["tcp_probe"]
    panels: list[tuple[str, str, Any]] = []
    if not probe.empty:
        snd, rcv = probe[probe["sender"]], probe[~probe["sender"]]
        panels.append(("sender's congestion window (tcp_probe)", "snd_cwnd (segments)",
                       lambda ax: _steps(ax, snd, "snd_cwnd")))
        panels.append(("sender's smoothed RTT (tcp_probe)", "srtt (ms)", lambda ax: _steps(ax, snd, "srtt_us", 1e-3)))
        panels.append(("receiver's offered window (tcp_probe rcv_wnd)", "rcv_wnd (KB)",
                       lambda ax: _steps(ax, rcv, "rcv_wnd", 1e-3)))
    frags = t["sendmsg_frag"]
    if not frags.empty and "path" in frags and frags["path"].notna().any():
        def scheduled(ax: Any) -> None:
            for path, g in frags.groupby(frags["path"].astype(str), sort=True):
                ax.plot(g["time_s"], g["bytes"].cumsum() * 1e-6, label=one_line(path), linewidth=0.8,
                        drawstyle="steps-post")
        panels.append(("data the MPTCP scheduler handed each subflow (mptcp_sendmsg_frag)", "bytes (MB)", scheduled))
    grow = t["rcvbuf_grow"]
    if not grow.empty:
        panels.append(("receive buffer before each growth (tcp_rcvbuf_grow)", "rcvbuf (KB)",
                       lambda ax: _steps(ax, grow, "rcvbuf", 1e-3)))
    if not panels:
        return []
    fig, axes = pyplot.subplots(len(panels), 1, figsize=(8, 2.6 * len(panels)), sharex=True, squeeze=False)
    for ax, (title, ylabel, draw) in zip(axes[:, 0], panels, strict=True):
        draw(ax)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("time (s)")
    lost = summary.get("lost_events", 0)
    note = "" if not lost else f"; {lost} events lost"
    fig.suptitle(one_line(f"kernel trace, clock {summary.get('clock', '?')}{note}"), fontsize=11)
    return list(save(fig, out, "kernel-trace"))
