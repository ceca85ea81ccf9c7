"""``mptcplab validate`` and :func:`mptcplab.validate`: the simulator against stored Linux
kernel measurements over a grid of two-host scenarios (``scenarios/validation/``, every
connection ``stack = "linux"``).

Each scenario has one connection and one metric, chosen by its application: goodput (bit/s)
for ``bulk``, download time (s) for ``download``, and for ``periodic`` the mean chunk time
(s): over the chunks, the time from a chunk's write (connection start + k × period) until
the receiver holds all of it, read from the connection's ``delivered_bytes`` time series.

The kernel side is measured by :func:`measure_kernel` (``validate --kernel``, root): every
scenario ``KERNEL_RUNS`` times on the Linux backend, seeds ``seed``, ``seed + 1``, ..., one
CSV row per run (``kernel.csv`` in the grid directory) with the kernel release, the command
that repeats the run, its date and the machine's load at its start. Runs go to
``kernel.csv.partial`` first, so an interrupted measurement resumes where it stopped; the CSV
is replaced only when every selected run is done.

The simulator side runs the same scenarios ``repeat`` times with the same seeds. Declared
before any run (the issue's targets): the medians agree within 10 % on at least 90 % of the
scenarios and within 25 % on all, and each subflow's share of the bytes agrees within 0.05
on at least 90 % of the multipath scenarios. A miss is a finding, reported, not an error.

Earlier kernel sessions kept beside it (``kernel-<date>.csv``, same columns) are compared with
``kernel.csv`` by the same tolerances: how often the kernel's median of one session is within
10 % and 25 % of another's is the yardstick for what the simulator's counts can mean.

Bimodality of the kernel's runs: sorted, the runs split into two groups of at least two
runs each whose gap (lowest of the upper group − highest of the lower) exceeds both groups'
spreads (max − min) and 5 % of the median of all runs. The report then says whether the
simulator's range [min, max] overlaps both groups' ranges.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import json
import math
import os
import statistics
import sys
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab import _core
from mptcplab.errors import ConfigError, config_error, with_file
from mptcplab.scenario import Scenario, load_scenario

if TYPE_CHECKING:
    import pandas as pd

    from mptcplab.results import RunResult

__all__ = [
    "CSV_COLUMNS", "GRID_DIR", "KERNEL_RUNS", "TARGETS", "bimodal_split", "chunk_time", "grid_scenarios",
    "load_kernel_csv", "measure_kernel", "metric_of", "run_metrics", "summary_lines", "target_counts", "validate",
]

#: The grid, relative to the directory the command runs in (the repository's root).
GRID_DIR = Path("scenarios") / "validation"
KERNEL_CSV = "kernel.csv"
KERNEL_RUNS = 5
CSV_COLUMNS = ["scenario", "run", "seed", "metric", "goodput_bps", "download_time_s", "chunk_time_s", "shares",
               "completed", "kernel", "command", "date", "loadavg", "wall_s"]
#: Targets declared before any run: (label, tolerance, required fraction of the scenarios).
TARGETS = {"within_10": (0.10, 0.90), "within_25": (0.25, 1.00), "shares": (0.05, 0.90)}
#: A bimodal kernel's gap must also exceed this fraction of the median (see the module doc).
BIMODAL_MIN_GAP = 0.05


#: How the grid's trace scenarios name the data directory (relative to the repository root).
_SHARED_PREFIX = "../shared/"


def load_grid_scenario(f: Path) -> Scenario:
    """Loads grid scenario ``f``. Its capacity traces are written relative to the repository
    root (``../shared/traces/...``); run from elsewhere, such a path that does not exist is
    taken from the data directory found as the reproductions find it
    (:func:`mptcplab.experiments._data.shared_dir`: ``MPTCPLAB_SHARED``, then ``../shared``
    from the working directory, then beside the source tree)."""
    try:
        doc = tomllib.loads(Path(f).read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return load_scenario(f)  # its own one-line error
    rewritten = False
    for p in doc.get("paths", []):
        if not isinstance(p, dict):
            continue
        for table in (p, p.get("up"), p.get("down")):
            if not isinstance(table, dict):
                continue
            for key in ("trace", "rate_trace"):
                v = table.get(key)
                if isinstance(v, str) and v.startswith(_SHARED_PREFIX) and not Path(v).exists():
                    from mptcplab.experiments._data import shared_dir

                    table[key] = str(shared_dir() / v[len(_SHARED_PREFIX):])
                    rewritten = True
    if not rewritten:
        return load_scenario(f)
    try:
        return dataclasses.replace(load_scenario(doc), source=str(f))
    except ConfigError as e:
        raise with_file(e, str(f)) from None


def grid_scenarios(grid: str | Path = GRID_DIR, only: str | None = None) -> list[Path]:
    """The grid's scenario files (sorted), those whose name matches the shell-style pattern
    ``only`` if given; refuses a missing directory, an empty grid or a pattern matching nothing."""
    import fnmatch

    d = Path(grid)
    if not d.is_dir():
        raise config_error("--grid", "no such directory", str(d))
    files = sorted(d.glob("*.toml"))
    if not files:
        raise config_error("--grid", "holds no scenario (*.toml)", str(d))
    if only is not None:
        files = [f for f in files if fnmatch.fnmatchcase(f.stem, only)]
        if not files:
            raise config_error("--only", f"`{only}` matches no scenario of the grid", str(d))
    return files


def metric_of(sc: Scenario) -> str:
    """The scenario's metric: ``goodput_bps``, ``download_time_s`` or ``chunk_time_s``;
    refuses a scenario that is not one connection with ``stack = "linux"``."""
    conns = sc.data.get("connections", [])
    if len(conns) != 1:
        raise config_error("connections", "a validation scenario has exactly one connection", sc.source)
    if conns[0].get("stack") != "linux":
        raise config_error(f"connections.{conns[0].get('name', '?')}.stack",
                           "a validation scenario models upstream Linux: write stack = \"linux\"", sc.source)
    kind = sc.resolved["connections"][0]["app"]["kind"]
    if kind == "periodic" and sc.resolved["connections"][0]["app"].get("count") is None:
        raise config_error(f"connections.{conns[0]['name']}.app.count", "a periodic validation app needs a count", sc.source)
    return {"bulk": "goodput_bps", "download": "download_time_s", "periodic": "chunk_time_s"}[kind]


def chunk_time(res: RunResult) -> float | None:
    """Mean time (s) from each periodic chunk's write until all of it was delivered, from the
    connection's ``delivered_bytes`` series; None if a chunk never completed."""
    c = res.scenario.resolved["connections"][0]
    app = c["app"]
    size = int(_core.parse_size_bytes(app["size"]))
    period = _core.parse_duration_ns(app["period"]) / 1e9
    start = _core.parse_duration_ns(c["start"]) / 1e9
    ts = res.timeseries
    s = ts[(ts["entity_kind"] == "connection") & (ts["entity"] == c["name"]) & (ts["metric"] == "delivered_bytes")]
    s = s.sort_values("time_s")
    times, values = list(s["time_s"]), list(s["value"])
    # The series is sampled; the last chunk ends when the transfer completes, which may fall
    # after the last sample.
    done = res.summary["connections"][0].get("download_time_s")
    if done is not None:
        times.append(start + float(done))
        values.append(float(size * int(app["count"])))
    out = []
    for k in range(int(app["count"])):
        reached = next((t for t, v in zip(times, values, strict=True) if v >= (k + 1) * size), None)
        if reached is None:
            return None
        out.append(float(reached) - (start + k * period))
    return sum(out) / len(out)


def run_metrics(res: RunResult) -> dict[str, Any]:
    """One run's numbers: goodput, download time, chunk time, subflow shares, completion."""
    summ = res.summary
    c = summ["connections"][0]
    kind = res.scenario.resolved["connections"][0]["app"]["kind"]
    shares = {s["path"]: float(s["share"]) for s in summ["subflows"] if s["connection"] == c["name"]}
    return {
        "goodput_bps": float(c["goodput_bps"]),
        "download_time_s": c.get("download_time_s"),
        "chunk_time_s": chunk_time(res) if kind == "periodic" else None,
        "shares": shares,
        "completed": bool(c.get("completed", False)) if kind != "bulk" else True,
    }


def _shares_text(shares: dict[str, float]) -> str:
    return ";".join(f"{p}={v:.4f}" for p, v in shares.items())


def _shares_parse(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, text.split(";")):
        p, _, v = part.partition("=")
        out[p] = float(v)
    return out


# ---------------------------------------------------------------------------------------
# The kernel side
# ---------------------------------------------------------------------------------------


def load_kernel_csv(path: str | Path) -> list[dict[str, Any]]:
    """The stored kernel runs; refuses a file with missing columns or unreadable values."""
    p = Path(path)
    if not p.is_file():
        raise config_error("--grid", f"no kernel measurements ({p.name}); measure them with validate --kernel (root)", str(p))
    rows = []
    with open(p, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise config_error("", f"missing columns: {', '.join(missing)}", str(p))
        for i, r in enumerate(reader, start=2):
            try:
                rows.append({
                    **r, "run": int(r["run"]), "seed": int(r["seed"]), "goodput_bps": float(r["goodput_bps"]),
                    "download_time_s": float(r["download_time_s"]) if r["download_time_s"] else None,
                    "chunk_time_s": float(r["chunk_time_s"]) if r["chunk_time_s"] else None,
                    "shares": _shares_parse(r["shares"]), "completed": r["completed"] == "true",
                })
            except ValueError as e:
                raise config_error(f"line {i}", f"unreadable value ({e})", str(p)) from None
    return rows


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r[k]) for k in CSV_COLUMNS})
    tmp.replace(path)


def _csv_value(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return _shares_text(v)
    return v


def check_root(what: str = "--kernel") -> None:
    if os.geteuid() != 0:
        raise config_error(f"validate: {what}", "needs root (the kernel backend creates network namespaces)")


def measure_kernel(
    grid: str | Path = GRID_DIR, only: str | None = None, runs: int = KERNEL_RUNS,
    progress: Callable[[str, int, str], None] | None = None, remeasure_load_above: float | None = None,
) -> Path:
    """Runs every selected grid scenario ``runs`` times on the Linux backend and stores the
    runs in the grid's ``kernel.csv`` (rows of other scenarios are kept). Resumable: finished
    runs wait in ``kernel.csv.partial`` until all are done. Every scenario is checked (schema,
    kernel support) before the first run. With ``remeasure_load_above``, only the stored runs
    that started with a 1-min load average above it are measured again (whatever their
    result), the others are kept. Returns the CSV's path."""
    import time

    from mptcplab.kernel.backend import run_linux
    from mptcplab.kernel.support import check_supported

    check_root()
    files = grid_scenarios(grid, only)
    scenarios = []
    for f in files:
        sc = load_grid_scenario(f)
        metric_of(sc)
        check_supported(sc)
        scenarios.append((f, sc))
    out = Path(grid) / KERNEL_CSV
    partial = Path(grid) / (KERNEL_CSV + ".partial")
    if partial.exists():
        done = {(r["scenario"], r["run"]): r for r in load_kernel_csv(partial)}
    elif remeasure_load_above is not None:
        names = {sc.name for _, sc in scenarios}
        done = {(r["scenario"], r["run"]): r for r in (load_kernel_csv(out) if out.exists() else [])
                if r["scenario"] in names and r["loadavg"] and float(r["loadavg"].split()[0]) <= remeasure_load_above}
    else:
        done = {}
    release = os.uname().release
    # Run k of every scenario before run k + 1 of any: a spell of load on the shared machine
    # then spreads over scenarios instead of biasing one.
    for k in range(runs):
        for f, sc in scenarios:
            if (sc.name, k) in done:
                continue
            seed = sc.seed + k
            if progress:
                progress(sc.name, k, _loadavg())
            row = {"scenario": sc.name, "run": k, "seed": seed, "metric": metric_of(sc), "kernel": release,
                   "command": f"mptcplab run {_rel(f)} --backend linux --seed {seed}",
                   "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "loadavg": _loadavg()}
            t = time.monotonic()
            res = run_linux(sc, seed=seed)
            row |= run_metrics(res) | {"wall_s": round(time.monotonic() - t, 1)}
            done[(sc.name, k)] = row
            _write_rows(partial, sorted(done.values(), key=lambda r: (r["scenario"], r["run"])))
    names = {sc.name for _, sc in scenarios}
    kept = [r for r in (load_kernel_csv(out) if out.exists() else []) if r["scenario"] not in names]
    new = [r for r in done.values() if r["scenario"] in names and r["run"] < runs]
    _write_rows(out, sorted(kept + new, key=lambda r: (r["scenario"], r["run"])))
    partial.unlink()
    return out


def _rel(f: Path) -> str:
    try:
        return str(f.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(f)


# ---------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------


def bimodal_split(values: Sequence[float]) -> tuple[list[float], list[float]] | None:
    """The two groups if ``values`` are bimodal (see the module documentation), else None.
    Of several qualifying splits, the one with the widest gap."""
    v = sorted(values)
    med = statistics.median(v) if v else 0.0
    best = None
    for i in range(2, len(v) - 1):
        lo, hi = v[:i], v[i:]
        gap = hi[0] - lo[-1]
        if gap > max(lo[-1] - lo[0], hi[-1] - hi[0]) and gap > BIMODAL_MIN_GAP * abs(med):
            if best is None or gap > best[0]:
                best = (gap, lo, hi)
    return (best[1], best[2]) if best else None


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def _median_shares(runs: list[dict[str, float]]) -> dict[str, float]:
    paths = list(dict.fromkeys(p for r in runs for p in r))
    return {p: statistics.median([r.get(p, 0.0) for r in runs]) for p in paths}


def _sim_runs(sc: Scenario, repeat: int) -> list[dict[str, Any]]:
    from mptcplab.runner import run

    return [run_metrics(run(sc, seed=sc.seed + k)) for k in range(repeat)]


def validate(
    grid: str | Path = GRID_DIR, repeat: int = 5, jobs: int = 1, only: str | None = None,
    kernel_csv: str | Path | None = None, progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Runs the simulator over the grid (``repeat`` seeds per scenario, ``jobs`` threads) and
    compares it with the stored kernel runs. Returns one row per scenario: the metric, kernel
    and simulator median/min/max, ``rel_diff`` (simulator median / kernel median − 1), median
    subflow shares of both (``kernel_shares``, ``sim_shares``) and their largest difference,
    the bimodality flag and the simulator's overlap of both modes, and ``sim_error`` when the
    simulator cannot run the scenario (e.g. bbr, which it has no model of)."""
    import pandas as pd

    if repeat < 1:
        raise config_error("--repeat", f"{repeat}: need at least 1 run per scenario")
    if jobs < 1:
        raise config_error("--jobs", f"{jobs}: need at least 1")
    files = grid_scenarios(grid, only)
    kernel_rows = load_kernel_csv(kernel_csv if kernel_csv is not None else Path(grid) / KERNEL_CSV)
    scenarios = []
    for f in files:
        sc = load_grid_scenario(f)
        scenarios.append((sc, metric_of(sc)))
        if not any(r["scenario"] == sc.name for r in kernel_rows):
            raise config_error("", f"scenario `{sc.name}` has no kernel runs in {KERNEL_CSV}; measure it with validate --kernel", str(f))

    def one(item: tuple[Scenario, str]) -> tuple[list[dict[str, Any]] | None, str | None]:
        sc, _ = item
        try:
            out = _sim_runs(sc, repeat)
        except ConfigError as e:
            return None, getattr(e, "message", str(e))
        if progress:
            progress(sc.name)
        return out, None

    with ThreadPoolExecutor(max_workers=jobs) as ex:
        sims = list(ex.map(one, scenarios))
    records = []
    for (sc, metric), (sim, err) in zip(scenarios, sims, strict=True):
        kr = [r for r in kernel_rows if r["scenario"] == sc.name]
        kv = [r[metric] for r in kr if r[metric] is not None]
        k = _stats(kv)
        s = _stats([r[metric] for r in sim if r[metric] is not None]) if sim else None
        rel = (s["median"] / k["median"] - 1) if s and k and k["median"] else None
        kshares = _median_shares([r["shares"] for r in kr])
        sshares = _median_shares([r["shares"] for r in sim]) if sim else {}
        multipath = len(kshares) > 1
        share_diff = max(abs(kshares[p] - sshares.get(p, 0.0)) for p in kshares) if multipath and sim else None
        split = bimodal_split(kv)
        overlap = None
        if split and s:
            overlap = all(s["min"] <= g[-1] and s["max"] >= g[0] for g in split)
        records.append({
            "scenario": sc.name, "regime": sc.name.split("-")[0], "description": sc.description, "metric": metric,
            "kernel_median": k["median"] if k else None, "kernel_min": k["min"] if k else None,
            "kernel_max": k["max"] if k else None, "kernel_runs": len(kv),
            "sim_median": s["median"] if s else None, "sim_min": s["min"] if s else None, "sim_max": s["max"] if s else None,
            "sim_runs": len(sim) if sim else 0, "rel_diff": rel,
            "kernel_goodput_bps": statistics.median([r["goodput_bps"] for r in kr]),
            "kernel_goodput_min": min(r["goodput_bps"] for r in kr), "kernel_goodput_max": max(r["goodput_bps"] for r in kr),
            "sim_goodput_bps": statistics.median([r["goodput_bps"] for r in sim]) if sim else None,
            "sim_goodput_min": min(r["goodput_bps"] for r in sim) if sim else None,
            "sim_goodput_max": max(r["goodput_bps"] for r in sim) if sim else None,
            "kernel_shares": kshares, "sim_shares": sshares, "share_diff": share_diff,
            "bimodal": split is not None, "sim_overlaps_both_modes": overlap,
            "kernel_incomplete": sum(1 for r in kr if not r["completed"]),
            "sim_incomplete": sum(1 for r in sim if not r["completed"]) if sim else 0,
            "sim_error": err or "",
        })
    df = pd.DataFrame.from_records(records)
    df.attrs["kernel"] = sorted({r["kernel"] for r in kernel_rows if r["scenario"] in set(df["scenario"])})
    dates = sorted(r["date"] for r in kernel_rows if r["scenario"] in set(df["scenario"]))
    df.attrs["kernel_dates"] = (dates[0], dates[-1]) if dates else ("", "")
    df.attrs["repeat"] = repeat
    loads = [float(r["loadavg"].split()[0]) for r in kernel_rows if r["scenario"] in set(df["scenario"]) and r["loadavg"]]
    df.attrs["kernel_load"] = (min(loads), statistics.median(loads), max(loads)) if loads else None
    df.attrs["kernel_sessions"] = [] if kernel_csv is not None else earlier_sessions(grid, df)
    return df


def earlier_sessions(grid: str | Path, df: pd.DataFrame) -> list[dict[str, Any]]:
    """The kernel's own reproducibility: for each earlier measurement session kept in the
    grid (``kernel-<date>.csv``, same columns as ``kernel.csv``), how many of the scenarios of
    ``df`` it has agree with the current kernel median within the same tolerances the
    simulator is held to (its median / the current median − 1)."""
    out = []
    for f in sorted(Path(grid).glob("kernel-*.csv")):
        rows = load_kernel_csv(f)
        n = w10 = w25 = 0
        for name, metric, cur in zip(df["scenario"], df["metric"], df["kernel_median"], strict=True):
            vals = [r[metric] for r in rows if r["scenario"] == name and r[metric] is not None]
            if not vals or not cur:
                continue
            d = abs(statistics.median(vals) / cur - 1)
            n += 1
            w10 += d <= TARGETS["within_10"][0]
            w25 += d <= TARGETS["within_25"][0]
        if n:
            out.append({"file": f.name, "scenarios": n, "within_10": w10, "within_25": w25})
    return out


def target_counts(df: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per target of :data:`TARGETS`: (scenarios that meet its tolerance, scenarios it counts
    over). The medians over every scenario (one the simulator refuses is a miss), the shares
    over the multipath scenarios."""
    rel = [abs(r) if r is not None and not (isinstance(r, float) and math.isnan(r)) else None for r in df["rel_diff"]]
    multi = [d for d, ks in zip(df["share_diff"], df["kernel_shares"], strict=True) if len(ks) > 1]
    return {
        "within_10": (sum(1 for r in rel if r is not None and r <= TARGETS["within_10"][0]), len(df)),
        "within_25": (sum(1 for r in rel if r is not None and r <= TARGETS["within_25"][0]), len(df)),
        "shares": (sum(1 for d in multi if d is not None and not (isinstance(d, float) and math.isnan(d))
                       and d <= TARGETS["shares"][0]), len(multi)),
    }


def summary_lines(df: pd.DataFrame) -> list[str]:
    """``N/M within 10 %``, ``N/M within 25 %``, ``N/M subflow shares within 0.05``, each with
    its declared target and whether it is met."""
    counts = target_counts(df)

    def line(what: str, key: str) -> str:
        n, total = counts[key]
        need = TARGETS[key][1]
        met = total > 0 and n >= need * total - 1e-9
        return f"{n}/{total} {what} (target: >= {need:.0%}: {'met' if met else 'not met'})"

    out = [line("within 10 %", "within_10"), line("within 25 %", "within_25"),
           line("subflow shares within 0.05", "shares")]
    refused = [s for s, e in zip(df["scenario"], df["sim_error"], strict=True) if e]
    if refused:
        out.append(f"{len(refused)} scenario(s) the simulator cannot run, counted as misses: {', '.join(refused)}")
    for k in df.attrs.get("kernel_sessions", []):
        out.append(f"kernel against itself: the earlier session {k['file']} is within 10 % of kernel.csv on "
                   f"{k['within_10']}/{k['scenarios']}, within 25 % on {k['within_25']}/{k['scenarios']}")
    bim = df[df["bimodal"]]
    if len(bim):
        both = sum(1 for v in bim["sim_overlaps_both_modes"] if v is True)
        out.append(f"{len(bim)} scenario(s) bimodal on the kernel ({', '.join(bim['scenario'])}); "
                   f"the simulator's range overlaps both modes in {both}")
    return out


# ---------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------


def _fmt_value(metric: str, v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v / 1e6:.2f}" if metric == "goodput_bps" else f"{v:.3f}"


UNITS = {"goodput_bps": "goodput (Mbit/s)", "download_time_s": "download time (s)", "chunk_time_s": "mean chunk time (s)"}


def table_rows(df: pd.DataFrame) -> list[list[str]]:
    """The per-scenario table as text cells (header first)."""
    head = ["scenario", "metric", "kernel median (min-max)", "simulator median (min-max)", "difference",
            "shares kernel / simulator", "kernel bimodal"]
    rows = [head]
    for r in df.to_dict("records"):
        m = r["metric"]
        k = f"{_fmt_value(m, r['kernel_median'])} ({_fmt_value(m, r['kernel_min'])}-{_fmt_value(m, r['kernel_max'])})"
        if r["sim_error"]:
            s, diff = "refused (" + r["sim_error"].split(" (")[0].split(";")[0] + ")", "-"
        else:
            s = f"{_fmt_value(m, r['sim_median'])} ({_fmt_value(m, r['sim_min'])}-{_fmt_value(m, r['sim_max'])})"
            diff = "-" if r["rel_diff"] is None or math.isnan(r["rel_diff"]) else f"{100 * r['rel_diff']:+.1f} %"
        if len(r["kernel_shares"]) > 1:
            sim_share = r["sim_shares"] or {}
            sh = " ".join(f"{p} {r['kernel_shares'][p]:.2f}/" + (f"{sim_share[p]:.2f}" if p in sim_share else "-")
                          for p in r["kernel_shares"])
        else:
            sh = "single path"
        bim = "-"
        if r["bimodal"]:
            bim = "yes, sim overlaps both" if r["sim_overlaps_both_modes"] is True else "yes, sim does not overlap both"
        rows.append([r["scenario"], UNITS[m], k, s, diff, sh, bim])
    return rows


def header_lines(df: pd.DataFrame) -> list[str]:
    kernel = ", ".join(df.attrs.get("kernel", [])) or "unknown"
    first, last = df.attrs.get("kernel_dates", ("", ""))
    load = df.attrs.get("kernel_load")
    loadtxt = f"; 1-min load average at run starts {load[0]:.2f}-{load[2]:.2f} (median {load[1]:.2f})" if load else ""
    return [f"kernel: Linux {kernel}, measured {first[:10]}" + (f" to {last[:10]}" if last[:10] != first[:10] else "") + loadtxt,
            f"simulator: mptcplab {_core.__version__}, {df.attrs.get('repeat')} seeds per scenario"]


def to_markdown(df: pd.DataFrame, command: str) -> str:
    """VALIDATION.md: date, kernel release, commands, the table and the summary."""
    rows = table_rows(df)
    out = io.StringIO()
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out.write("# Agreement with the Linux kernel\n\n")
    out.write(f"Generated {now} by `{command}` (regenerate with the same command).\n\n")
    for line in header_lines(df):
        out.write(f"- {line}\n")
    out.write("- kernel data: `scenarios/validation/kernel.csv`, measured with `mptcplab validate --kernel` (root); "
              "each row holds the command that repeats the run\n")
    out.write("- metric per scenario: goodput for bulk transfers, download time for downloads, mean chunk time for "
              "periodic applications; difference = simulator median / kernel median - 1\n")
    out.write("- targets, declared before any run: >= 90 % of scenarios within 10 %, 100 % within 25 %, "
              "subflow shares within 0.05 on >= 90 % of the multipath scenarios (a scenario the simulator cannot "
              "run counts as a miss)\n")
    out.write("- shares: each subflow's median share of the bytes on both backends; a scenario agrees when no "
              "subflow's shares differ by more than 0.05\n")
    out.write(f"- bimodal: sorted, the kernel's runs split into two groups of at least two runs whose gap (lowest "
              f"of the upper group - highest of the lower) exceeds both groups' spreads and {BIMODAL_MIN_GAP:.0%} of "
              "the median; the table then says whether the simulator's range overlaps both groups\n")
    out.write("- the machine is shared: each kernel run's 1-min load average at its start is in kernel.csv; "
              "runs are interleaved (run k of every scenario before run k + 1 of any)\n\n")
    out.write("## Summary\n\n")
    for line in summary_lines(df):
        out.write(f"- {line}\n")
    out.write("\n## Per scenario\n\n")
    out.write("| " + " | ".join(rows[0]) + " |\n")
    out.write("|" + "---|" * len(rows[0]) + "\n")
    for r in rows[1:]:
        out.write("| " + " | ".join(c.replace("|", "/") for c in r) + " |\n")
    out.write("\n## Scenarios\n\n")
    for r in df.to_dict("records"):
        out.write(f"- `{r['scenario']}`: {r['description']}\n")
    return out.getvalue()


def write_out(df: pd.DataFrame, out: str | Path) -> list[Path]:
    """``validate.csv`` and ``validate.json`` in ``out`` (created)."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    flat = df.copy()
    for col in ("kernel_shares", "sim_shares"):
        flat[col] = [_shares_text(v) for v in flat[col]]
    flat.to_csv(d / "validate.csv", index=False)
    doc = {"kernel": df.attrs.get("kernel"), "kernel_dates": df.attrs.get("kernel_dates"),
           "kernel_load": df.attrs.get("kernel_load"), "repeat": df.attrs.get("repeat"),
           "targets": {k: {"tolerance": t, "fraction": f} for k, (t, f) in TARGETS.items()},
           "summary": summary_lines(df), "scenarios": json.loads(df.to_json(orient="records"))}
    (d / "validate.json").write_text(json.dumps(doc, indent=2) + "\n")
    return [d / "validate.csv", d / "validate.json"]


def print_report(df: pd.DataFrame, file: Any = None) -> None:
    """The table and the summary lines, for the terminal."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file or sys.stdout, width=200)
    for line in header_lines(df):
        console.print(line, highlight=False)
    rows = table_rows(df)
    t = Table(box=box.SIMPLE_HEAD)
    for k, col in enumerate(rows[0]):
        t.add_column(col, justify="left" if k in (0, 1, 5, 6) else "right", no_wrap=k == 0)
    for r in rows[1:]:
        t.add_row(*[c.replace("[", "\\[") for c in r])
    console.print(t)
    for line in summary_lines(df):
        console.print(line, highlight=False)
