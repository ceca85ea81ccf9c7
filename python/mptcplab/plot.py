"""Plots of a run directory (per-subflow time series) and of a sweep directory (a metric
against a parameter, mean and 95 % confidence interval per group), as PNG and SVG.

Axis units come from the metric names (``_bps``, ``_s``, ``_bytes``, ...), so every axis says
what it measures and in which unit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab._api_checks import check_arguments
from mptcplab.errors import config_error
from mptcplab.units import to_number

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["axis_label", "plot", "plot_run", "plot_sweep"]

# (suffix, display unit, factor applied to base-unit values)
_UNITS = (
    ("_bps", "Mbit/s", 1e-6),
    ("_s", "ms", 1e3),
    ("_bytes", "KB", 1e-3),
    ("_packets", "packets", 1.0),
    ("_segments", "segments", 1.0),
)
# Metrics whose natural scale differs from their suffix's default.
_SCALE_OVERRIDES = {"dsn_sent_bytes": ("MB", 1e-6), "delivered_bytes": ("MB", 1e-6), "data_acked_bytes": ("MB", 1e-6)}
# Base units of sweep parameters (from units.to_number) shown in a readable scale.
_PARAM_UNITS = {"bit/s": ("Mbit/s", 1e-6), "s": ("ms", 1e3), "B": ("KB", 1e-3), "packets": ("packets", 1.0)}

# Per-subflow series drawn by `plot_run`, in this order, when the run recorded them; a run
# with none of them gets every per-subflow series instead.
_TITLES = {
    "cwnd_bytes": "congestion window",
    "srtt_s": "smoothed RTT",
    "dsn_sent_bytes": "data sequence sent (MPTCP level)",
    "in_flight_bytes": "bytes in flight",
}


def axis_label(metric: str) -> tuple[str, float]:
    """A metric name → (axis label with its unit, factor from base units).

    ``conn.mptcp.goodput_bps`` → ``("conn.mptcp.goodput (Mbit/s)", 1e-6)``;
    ``srtt_s`` → ``("srtt (ms)", 1e3)``.
    """
    name = metric.rsplit(".", 1)[-1]
    prefix = metric[: len(metric) - len(name)]
    for suffix, unit, factor in _UNITS:
        if name.endswith(suffix):
            unit, factor = _SCALE_OVERRIDES.get(name, (unit, factor))
            return f"{prefix}{name[: -len(suffix)]} ({unit})", factor
    if name in ("share", "utilisation", "delayed_fraction"):
        return f"{metric} (fraction)", 1.0
    return f"{metric} (count)", 1.0


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{stem}.{ext}"
        fig.savefig(p, dpi=120, bbox_inches="tight")
        paths.append(p)
    _pyplot().close(fig)
    return paths


def plot_run(run_dir: str | Path, out: str | Path | None = None) -> list[Path]:
    """Per-subflow time series of a run directory (one panel per metric) → PNG and SVG."""
    import pandas as pd

    run_dir = Path(run_dir)
    ts = pd.read_parquet(run_dir / "timeseries.parquet")
    sub = ts[ts["entity_kind"].astype(str) == "subflow"]
    if sub.empty:
        raise config_error(
            "output.timeseries",
            "this run recorded no per-subflow time series; set a sampling interval, e.g. --set output.timeseries=100ms",
            str(run_dir),
        )
    present = set(sub["metric"].astype(str).unique())
    metrics = [m for m in _TITLES if m in present] or sorted(present)
    plt = _pyplot()
    fig, axes = plt.subplots(len(metrics), 1, figsize=(8, 2.6 * len(metrics)), sharex=True, squeeze=False)
    for ax, metric in zip(axes[:, 0], metrics, strict=True):
        label, factor = axis_label(metric)
        rows = sub[sub["metric"].astype(str) == metric]
        for entity, g in rows.groupby(rows["entity"].astype(str), sort=True):
            ax.plot(g["time_s"], g["value"] * factor, label=entity, linewidth=1.0, drawstyle="steps-post")
        ax.set_ylabel(label)
        ax.set_title(_TITLES.get(metric, metric.replace("_", " ")), fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("time (s)")
    summary = json.loads((run_dir / "summary.json").read_text())
    fig.suptitle(f"{summary.get('scenario') or run_dir.name} (seed {summary.get('seed')})", fontsize=11)
    return _save(fig, Path(out) if out else run_dir / "plots", "timeseries")


def _t95(n: int) -> float:
    """Two-sided 95 % Student t quantile for n samples (n - 1 degrees of freedom)."""
    table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
             2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045]
    df = n - 1
    if df < 1:
        return math.nan
    return table[df - 1] if df <= len(table) else 1.96 + 2.4 / df


def summarise(df: pd.DataFrame, x: str, y: str, hue: str | None) -> pd.DataFrame:
    """Mean, standard deviation, n and 95 % CI half-width of ``y`` per (hue, x) group."""
    import numpy as np

    keys = [k for k in (hue, x) if k]
    g = df.groupby(keys, sort=False, dropna=False)[y]
    s = g.agg(["mean", "std", "count"]).reset_index()
    s["ci95"] = [
        _t95(int(n)) * sd / math.sqrt(n) if n > 1 else np.nan for sd, n in zip(s["std"], s["count"], strict=True)
    ]
    return s


def _numeric_axis(values: pd.Series) -> tuple[list[float] | None, str]:
    nums = [to_number(v) for v in values]
    if all(nums) and len({u for _, u in nums}) == 1:  # type: ignore[misc]
        unit = nums[0][1]  # type: ignore[index]
        show, factor = _PARAM_UNITS.get(unit, (unit, 1.0))
        return [n * factor for n, _ in nums], show  # type: ignore[misc]
    return None, ""


def plot_sweep(
    sweep_dir: str | Path, x: str | None = None, y: str | None = None, hue: str | None = None, out: str | Path | None = None
) -> list[Path]:
    """``y`` against parameter ``x`` (mean ± 95 % CI over repeats), one line per ``hue`` value."""
    import pandas as pd

    sweep_dir = Path(sweep_dir)
    df = pd.read_parquet(sweep_dir / "results.parquet")
    spec = json.loads((sweep_dir / "sweep.json").read_text())
    params: list[str] = spec.get("parameters", [])
    x = x or (params[0] if params else "repeat")
    if y is None:
        goodputs = [c for c in df.columns if c.startswith("conn.") and c.endswith(".goodput_bps")]
        y = goodputs[0] if goodputs else None
    if hue is None and len(params) > 1:
        hue = next(p for p in params if p != x)
    for opt, col in (("--x", x), ("--y", y), ("--hue", hue)):
        if col is not None and col not in df.columns:
            choices = ", ".join(params) if opt != "--y" else "any metric column, e.g. conn.<name>.goodput_bps"
            raise config_error(opt, f"no column `{col}` in {sweep_dir / 'results.parquet'}; choose {choices}", str(sweep_dir))
    assert y is not None
    s = summarise(df, x, y, hue)
    xs_num, x_unit = _numeric_axis(s[x])
    if xs_num is not None:
        s["_x"] = xs_num
    else:
        order = {v: i for i, v in enumerate(dict.fromkeys(df[x]))}
        s["_x"] = [order[v] for v in s[x]]
    ylabel, factor = axis_label(y)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    groups = s.groupby(hue, sort=False) if hue else [(None, s)]
    for name, g in groups:
        g = g.sort_values("_x")
        label = f"{hue} = {name}" if hue else None
        ax.errorbar(g["_x"], g["mean"] * factor, yerr=(g["ci95"] * factor).fillna(0), marker="o", capsize=3, label=label)
    if xs_num is None:
        ax.set_xticks(sorted(set(s["_x"])), [str(v) for v in dict.fromkeys(df[x])])
    ax.set_xlabel(f"{x} ({x_unit})" if x_unit else x)
    ax.set_ylabel(ylabel)
    n = int(s["count"].max()) if len(s) else 0
    ax.set_title(f"mean and 95% CI over {n} repeat(s)", fontsize=10)
    ax.grid(alpha=0.3)
    if hue:
        ax.legend(fontsize=8)
    stem = f"{y}_vs_{x}".replace("/", "_")
    return _save(fig, Path(out) if out else sweep_dir / "plots", stem)


def plot(
    directory: str | Path, x: str | None = None, y: str | None = None, hue: str | None = None, out: str | Path | None = None
) -> list[Path]:
    """Plots a run or a sweep directory (whichever it is); returns the files written."""
    check_arguments("plot", locals())
    d = Path(directory)
    if (d / "sweep.json").exists() and (d / "results.parquet").exists():
        return plot_sweep(d, x, y, hue, out)
    if (d / "summary.json").exists() and (d / "timeseries.parquet").exists():
        return plot_run(d, out)
    raise config_error("", "is neither a run directory (from `mptcplab run --out`) nor a finished sweep directory", str(d))
