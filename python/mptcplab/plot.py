"""Plots of a run directory (per-subflow time series) and of a sweep directory (a metric
against a parameter, mean and 95 % confidence interval per group), as PNG and SVG.

Axis units come from the metric names (``_bps``, ``_s``, ``_bytes``, ...), so every axis says
what it measures and in which unit.

The directory's files are read as untrusted input: a damaged, empty, truncated or misshapen
file, or something else in its place (a directory, a device), is refused in one line naming
the file. Every text drawn is plain text: names are never read as matplotlib's mathtext
(``$...$``) or handed to LaTeX, whatever the user's matplotlib settings.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab._api_checks import check_arguments
from mptcplab.errors import config_error, one_line
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


@contextmanager
def _plain_text() -> Iterator[None]:
    """Text drawn as written: no mathtext (a name with ``$`` would otherwise be parsed, and a
    malformed one raise at drawing time), no LaTeX, no warnings for glyphs the font lacks."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        yield


def _plain(func: Callable[..., list[Path]]) -> Callable[..., list[Path]]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> list[Path]:
        with _plain_text():
            return func(*args, **kwargs)

    return wrapper


def _label(value: Any) -> str:
    """A name as drawn: on one line, control characters shown escaped."""
    return one_line(str(value))


def _stem(name: str) -> str:
    """A file name stem from column names: ``/``, NUL and control characters replaced by
    ``_``, and a name over 120 bytes shortened, with a hash of the whole keeping it unique."""
    clean = "".join("_" if ch == "/" or not ch.isprintable() else ch for ch in name)
    if len(clean.encode()) <= 120:
        return clean
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return clean.encode()[:100].decode("utf-8", "ignore") + "-" + digest


def _save(fig: Any, out: Path, stem: str) -> list[Path]:
    paths = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for ext in ("png", "svg"):
            p = out / f"{stem}.{ext}"
            fig.savefig(p, dpi=120, bbox_inches="tight")
            paths.append(p)
    except OSError as e:
        raise config_error("--out", f"cannot write the figures in {out}: {e.strerror}") from None
    finally:
        _pyplot().close(fig)
    return paths


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path`` (at most 16 MiB); anything else is refused naming the file."""
    from mptcplab.scenario import read_bounded

    file = str(path)
    raw = read_bounded(path, file, what="JSON", hint="expected a JSON file")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as e:
        raise config_error("", f"not a UTF-8 text file ({e.reason} at byte {e.start})", file) from None
    except json.JSONDecodeError as e:
        what = "is empty" if not text.strip() else f"is not valid JSON ({e.msg}: line {e.lineno}, column {e.colno})"
        raise config_error("", f"{what}; the directory's output is damaged, write it again", file) from None
    except (RecursionError, ValueError) as e:
        raise config_error("", f"is not valid JSON ({type(e).__name__}); the directory's output is damaged", file) from None
    if not isinstance(data, dict):
        raise config_error("", f"holds a JSON {type(data).__name__}, not an object; the directory's output is damaged", file)
    return data


def _read_parquet(path: Path, columns: dict[str, bool]) -> pd.DataFrame:
    """The table in ``path``, which must hold ``columns`` (name → must be numeric); anything
    else is refused naming the file."""
    import pandas as pd

    file = str(path)
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise config_error("", "is not a regular file; expected a Parquet table", file)
    try:
        df = pd.read_parquet(path)
    except Exception as e:  # pyarrow's errors for a damaged file are of many types
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise config_error("", f"is not a readable Parquet table ({one_line(first[:200])})", file) from None
    for col, numeric in columns.items():
        if col not in df.columns:
            raise config_error(col, "no such column; the directory's output is damaged, write it again", file)
        if numeric and not pd.api.types.is_numeric_dtype(df[col]):
            raise config_error(col, f"holds {df[col].dtype} values, not numbers; the directory's output is damaged", file)
    return df


@_plain
def plot_run(run_dir: str | Path, out: str | Path | None = None) -> list[Path]:
    """Per-subflow time series of a run directory (one panel per metric) → PNG and SVG; with
    a kernel trace (``kernel-trace/``), its figure too (:mod:`mptcplab.plot_trace`)."""
    run_dir = Path(run_dir)
    summary = _read_json(run_dir / "summary.json")
    name, seed = summary.get("scenario"), summary.get("seed")
    if not (name is None or isinstance(name, str)) or not (seed is None or isinstance(seed, int)):
        raise config_error("scenario" if not (name is None or isinstance(name, str)) else "seed",
                           "has the wrong type; the directory's output is damaged", str(run_dir / "summary.json"))
    columns = {"time_s": True, "entity_kind": False, "entity": False, "metric": False, "value": True}
    ts = _read_parquet(run_dir / "timeseries.parquet", columns)
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
            ax.plot(g["time_s"], g["value"] * factor, label=_label(entity), linewidth=1.0, drawstyle="steps-post")
        ax.set_ylabel(_label(label))
        ax.set_title(_label(_TITLES.get(metric, metric.replace("_", " "))), fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(_label(f"{name or run_dir.name} (seed {seed})"), fontsize=11)
    written = _save(fig, Path(out) if out else run_dir / "plots", "timeseries")
    if (run_dir / "kernel-trace").is_dir():  # a Linux-backend run with --trace-kernel
        from mptcplab.plot_trace import plot_kernel_trace

        written += plot_kernel_trace(run_dir, Path(out) if out else run_dir / "plots", plt, _save)
    return written


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


@_plain
def plot_sweep(
    sweep_dir: str | Path, x: str | None = None, y: str | None = None, hue: str | None = None, out: str | Path | None = None
) -> list[Path]:
    """``y`` against parameter ``x`` (mean ± 95 % CI over repeats), one line per ``hue`` value."""
    sweep_dir = Path(sweep_dir)
    spec = _read_json(sweep_dir / "sweep.json")
    params = spec.get("parameters", [])
    if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
        raise config_error("parameters", "must be a list of key paths; the directory's output is damaged",
                           str(sweep_dir / "sweep.json"))
    df = _read_parquet(sweep_dir / "results.parquet", {})
    if df.empty:
        raise config_error("", "holds no runs", str(sweep_dir / "results.parquet"))
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
    if y is None:
        raise config_error("--y", f"{sweep_dir / 'results.parquet'} has no conn.<name>.goodput_bps column; name a metric "
                           "column", str(sweep_dir))
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(df[y]):
        raise config_error("--y", f"column `{y}` holds {df[y].dtype} values, not numbers; choose a metric column",
                           str(sweep_dir))
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
        label = _label(f"{hue} = {name}") if hue else None
        ax.errorbar(g["_x"], g["mean"] * factor, yerr=(g["ci95"] * factor).fillna(0), marker="o", capsize=3, label=label)
    if xs_num is None:
        ax.set_xticks(sorted(set(s["_x"])), [_label(v) for v in dict.fromkeys(df[x])])
    ax.set_xlabel(_label(f"{x} ({x_unit})" if x_unit else x))
    ax.set_ylabel(_label(ylabel))
    n = int(s["count"].max()) if len(s) else 0
    ax.set_title(f"mean and 95% CI over {n} repeat(s)", fontsize=10)
    ax.grid(alpha=0.3)
    if hue:
        ax.legend(fontsize=8)
    stem = _stem(f"{y}_vs_{x}")
    return _save(fig, Path(out) if out else sweep_dir / "plots", stem)


def plot(
    directory: str | Path, x: str | None = None, y: str | None = None, hue: str | None = None, out: str | Path | None = None
) -> list[Path]:
    """Plots a run or a sweep directory (whichever it is); returns the files written."""
    check_arguments("plot", locals())
    d = Path(directory)
    try:
        is_sweep = (d / "sweep.json").exists() and (d / "results.parquet").exists()
        is_run = (d / "summary.json").exists() and (d / "timeseries.parquet").exists()
    except OSError as e:
        raise config_error("", f"cannot be read: {e.strerror}", str(d)) from None
    if is_sweep:
        return plot_sweep(d, x, y, hue, out)
    if is_run:
        return plot_run(d, out)
    raise config_error("", "is neither a run directory (from `mptcplab run --out`) nor a finished sweep directory", str(d))
