"""The validation grid's scenarios (``scenarios/validation/``) and what is measured of one run:
the metric each scenario's application gives, and the subflow shares. Part of
:mod:`mptcplab.validation`.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab import _core
from mptcplab.errors import ConfigError, config_error, with_file
from mptcplab.scenario import Scenario, load_scenario, read_bounded

if TYPE_CHECKING:
    from mptcplab.results import RunResult

#: The grid, relative to the directory the command runs in (the repository's root).
GRID_DIR = Path("scenarios") / "validation"
KERNEL_CSV = "kernel.csv"

#: How the grid's trace scenarios name the data directory (relative to the repository root).
_SHARED_PREFIX = "../shared/"


def load_grid_scenario(f: Path) -> Scenario:
    """Loads grid scenario ``f``. Its capacity traces are written relative to the repository
    root (``../shared/traces/...``); run from elsewhere, such a path that does not exist is
    taken from the data directory found as the reproductions find it
    (:func:`mptcplab.experiments._data.shared_dir`: ``MPTCPLAB_SHARED``, then ``../shared``
    from the working directory, then beside the source tree)."""
    try:
        doc = tomllib.loads(read_bounded(Path(f), str(f)).decode("utf-8"))
    except (ValueError, RecursionError):  # unreadable, too deep, an over-long integer, ...
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
    """One run's numbers: goodput, download time, chunk time, subflow shares, completion, and
    what describes its operating point (:func:`mechanism`)."""
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
    } | mechanism(res)


#: The columns :func:`mechanism` fills (empty for a single-path connection or without a time series).
MECHANISM_COLUMNS = ["slow_path", "slow_cwnd_bytes", "slow_in_flight_bytes", "slow_srtt_s", "rwnd_limited_s"]


def mechanism(res: RunResult) -> dict[str, Any]:
    """What sets a multipath run's operating point, measured alike on every backend from the
    series both write (``cwnd_bytes``, ``in_flight_bytes``, ``srtt_s`` per subflow, sampled at
    ``output.timeseries``): the slow subflow (the largest median smoothed RTT after the
    warm-up), its median congestion window, bytes in flight and smoothed RTT after the
    warm-up, and the time the connection's subflows were limited by the peer's receive window
    (``rwnd_limited_time_s``: the kernel's ``tcpi_rwnd_limited`` summed over the sender's
    subflows, the simulator's counterpart). The kernel's counts a subflow's own TCP window
    only (``tcp_rwnd_limited`` in ``tcp_write_xmit``): an MPTCP subflow held back by the
    connection's window is not counted, so for multipath runs the two are not comparable."""
    out: dict[str, Any] = {k: None for k in MECHANISM_COLUMNS}
    c = res.summary["connections"][0]
    out["rwnd_limited_s"] = c.get("rwnd_limited_time_s")
    ts = res.timeseries
    if ts is None or not len(ts):
        return out
    warm = _secs(res.scenario.resolved["output"]["warmup"])
    sub = ts[(ts["entity_kind"] == "subflow") & (ts["time_s"] >= warm)]
    prefix = f"{c['name']}/"
    med: dict[str, dict[str, float]] = {}
    for (entity, metric), g in sub.groupby(["entity", "metric"], observed=True):
        if str(entity).startswith(prefix) and metric in ("cwnd_bytes", "in_flight_bytes", "srtt_s"):
            med.setdefault(str(entity)[len(prefix):], {})[str(metric)] = float(g["value"].median())
    paths = [p for p, m in med.items() if "srtt_s" in m]
    if len(paths) < 2:
        return out
    slow = max(paths, key=lambda p: med[p]["srtt_s"])
    out.update(slow_path=slow, slow_cwnd_bytes=med[slow].get("cwnd_bytes"),
               slow_in_flight_bytes=med[slow].get("in_flight_bytes"), slow_srtt_s=med[slow]["srtt_s"])
    return out


def _shares_text(shares: dict[str, float]) -> str:
    return ";".join(f"{p}={v:.4f}" for p, v in shares.items())


def _shares_parse(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, text.split(";")):
        p, _, v = part.partition("=")
        out[p] = float(v)
    return out



def _secs(text: str) -> float:
    return _core.parse_duration_ns(text) / 1e9
