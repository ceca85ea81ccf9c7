"""Parameter sweeps: a grid of overrides × repeats, run in parallel processes, one tidy row per
run, resumable.

Each run is identified by a key hashing everything its result depends on: the engine build,
the resolved scenario, the content of every file it names (traces), the seed and the backend;
a finished run is stored as ``runs/<key>.json`` (written to a temporary file, then renamed),
so re-running a sweep skips finished runs and an interrupted sweep loses nothing finished. A
stored run that cannot be trusted is run again (see :mod:`mptcplab.sweep_store`), and a
folder holding another sweep is refused unless it is to be replaced.

Repeat ``r`` of every grid point uses the seed :func:`repeat_seed` ``(scenario seed, r)``:
distinct per repeat, and the same across grid points (common random numbers make
comparisons between parameter values sharper).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab import _core
from mptcplab._api_checks import check_arguments
from mptcplab.errors import ConfigError, config_error
from mptcplab.results import flat_metrics
from mptcplab.runner import check_output_dir
from mptcplab.scenario import Scenario, load_scenario, parse_value

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MAX_RUNS_UNCONFIRMED",
    "RunFailed",
    "SweepInterrupted",
    "expand_grid",
    "parse_vary",
    "repeat_seed",
    "run_key",
    "sweep",
    "vary_size",
]

Grid = Mapping[str, Sequence[Any]]
ProgressFn = Callable[[int, int], None]


class SweepInterrupted(Exception):
    """The sweep was interrupted; ``done`` of ``total`` runs are finished and kept."""

    def __init__(self, done: int, total: int, out: Path | None) -> None:
        super().__init__(f"interrupted after {done} of {total} runs")
        self.done, self.total, self.out = done, total, out


# ---------------------------------------------------------------------------------------
# Grid syntax
# ---------------------------------------------------------------------------------------

_NUM_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]*)\s*$")


def _split_top(text: str) -> list[str]:
    """Splits at commas that are not inside brackets, braces or quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _positional(v: float) -> str:
    """A number with at most 6 significant digits and no exponent (the unit grammar has none)."""
    if v == 0:
        return "0"
    rounded = round(v, 5 - int(math.floor(math.log10(abs(v)))))
    text = format(Decimal(repr(rounded)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


#: A sweep of more runs than this (grid points × repeats) needs confirmation (``--yes``). The
#: bundled scenarios cost from about a second to a minute of CPU per run; at a typical 15 s,
#: 10 000 runs keep two cores busy for about a day, so a larger grid is far more often a
#: mistyped count (``range(1s,2s,5000000)``) than a plan.
MAX_RUNS_UNCONFIRMED = 10_000


def _range_spec(args: str, label: str) -> tuple[float, float, str, int, bool]:
    """The checked ``start, stop, unit, n, log`` of ``range(...)`` arguments; nothing is expanded."""
    parts = [p.strip() for p in args.split(",")]
    log = len(parts) == 4 and parts[3] == "log"
    if len(parts) not in (3, 4) or (len(parts) == 4 and not log):
        raise config_error(label, "expected range(start, stop, n) or range(start, stop, n, log)")
    ends = [_NUM_UNIT.match(p) for p in parts[:2]]
    if not all(ends):
        raise config_error(label, f"range ends must be numbers with an optional unit, got `{parts[0]}`, `{parts[1]}`")
    (a, ua), (b, ub) = ((float(m[1]), m[2]) for m in ends)  # type: ignore[index]
    if not (math.isfinite(a) and math.isfinite(b)):
        raise config_error(label, f"range ends must be finite numbers, got `{parts[0]}`, `{parts[1]}`")
    if ua != ub:
        raise config_error(label, f"both range ends need the same unit (`{ua}` vs `{ub}`)")
    if not re.fullmatch(r"\d+", parts[2]) or int(parts[2]) < 1:
        raise config_error(label, f"the number of values must be a whole number >= 1, got `{parts[2]}`")
    if log and (a <= 0 or b <= 0):
        raise config_error(label, "a log range needs positive ends")
    return a, b, ua, int(parts[2]), log


def _range(args: str, label: str) -> list[Any]:
    a, b, unit, n, log = _range_spec(args, label)
    if n == 1:
        xs = [a]
    elif log:
        xs = [a * (b / a) ** (k / (n - 1)) for k in range(n)]
    else:
        xs = [a + (b - a) * k / (n - 1) for k in range(n)]
    if not all(math.isfinite(x) for x in xs):
        raise config_error(label, "the range's values overflow; choose ends closer together")
    if unit:
        return [f"{_positional(x)}{unit}" for x in xs]
    return [int(x) if float(_positional(x)).is_integer() else float(_positional(x)) for x in xs]


def _split_vary(text: str) -> tuple[str, str, str, re.Match[str] | None]:
    key, sep, rhs = text.partition("=")
    key, rhs = key.strip(), rhs.strip()
    label = f"--vary {text}"
    if not sep or not key or not rhs or any(not s.strip() for s in key.split(".")):
        what = "the key path is empty or has an empty segment; " if sep and rhs else ""
        raise config_error(label, what + "expected KEY.PATH=V1,V2,... or KEY.PATH=range(START,STOP,N[,log])")
    return key, rhs, label, re.fullmatch(r"range\((.*)\)", rhs)


def vary_size(text: str) -> int:
    """How many values ``--vary text`` has, computed without expanding a range."""
    _, rhs, label, m = _split_vary(text)
    return _range_spec(m[1], label)[3] if m else len(_split_top(rhs))


def parse_vary(text: str) -> tuple[str, list[Any]]:
    """``"paths.wifi.rate=4Mbit,8Mbit"`` or ``"key=range(1Mbit,16Mbit,5,log)"`` → (key, values)."""
    key, rhs, label, m = _split_vary(text)
    values = _range(m[1], label) if m else [parse_value(v, label=f"--vary {key}") for v in _split_top(rhs)]
    if any(v == "" for v in values):
        raise config_error(label, "empty value in the list")
    for v in values:
        if isinstance(v, float) and not math.isfinite(v):
            raise config_error(label, f"`{v}` is not a finite number; expected finite values (with their unit, e.g. `10s`)")
    return key, values


def expand_grid(grid: Grid) -> list[dict[str, Any]]:
    """Every combination of the grid's values, first key slowest."""
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def repeat_seed(base_seed: int, repeat: int) -> int:
    """The seed of repeat ``repeat`` of a scenario whose seed is ``base_seed`` (63 bits)."""
    digest = hashlib.sha256(f"mptcplab-repeat:{base_seed}:{repeat}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@cache
def _engine_id() -> str:
    """Identifies the engine build, so results of another build are never reused."""
    path = getattr(_core, "__file__", None)
    h = hashlib.sha256(_core.__version__.encode())
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


#: The stored record's layout (its metric names, :func:`~mptcplab.results.flat_metrics`):
#: a run stored in another layout is never reused.
RECORD_FORMAT = 2


@cache
def _uml_id() -> str:
    """The UML kernel's source version and configuration hash (the folder it was built into),
    and a separately built emulator as for :func:`_linux_id`."""
    from mptcplab.kernel.uml.kernel import find_kernel

    kernel = find_kernel()
    return f"{kernel.label if kernel is not None else 'none'}-{_linux_id()}"


def _linux_id() -> str:
    """The kernel release and the link emulator's build, for runs on the Linux backend. The
    emulator is compiled into the extension module, whose bytes :func:`_engine_id` already
    hashes; a separately built one (``$MPTCPLAB_LINKEMU``) is hashed here."""
    from mptcplab.kernel.backend import linkemu_command

    h = hashlib.sha256(os.uname().release.encode())
    program = linkemu_command()[0]
    if program != sys.executable:
        try:
            with open(program, "rb") as f:
                h.update(f.read())
        except OSError:
            pass  # no emulator: the run itself says so
    return h.hexdigest()[:16]


def run_key(resolved_json: str, seed: int, backend: str = "sim") -> str:
    """The identity of one run: everything its result depends on. The engine build, the
    record's layout, the resolved scenario, the SHA-256 of every file it names
    (:func:`~mptcplab.sweep_store.inputs_digest`: a rewritten trace is a new run), the seed
    and the backend, with for the Linux backend the kernel release and the emulator's build
    (a kernel run never stands in for a simulator run, nor a run on another kernel)."""
    from mptcplab.sweep_store import inputs_digest

    text = (f"{_engine_id()}\nformat={RECORD_FORMAT}\n{resolved_json}\nfiles:\n{inputs_digest(resolved_json)}\n"
            f"seed={seed}\nbackend={backend}")
    if backend == "linux":
        text += f"\nlinux={_linux_id()}"
    elif backend == "uml":
        text += f"\numl={_uml_id()}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    key: str
    params: dict[str, Any]
    repeat: int
    seed: int
    scenario_json: str


class RunFailed(RuntimeError):
    """The engine failed on one run (a bug, not a user error)."""


def _run_task(task: _Task, backend: str = "sim") -> dict[str, Any]:
    """Runs one grid point in a worker (or, for the Linux backend, in this process);
    returns the stored record."""
    t0 = time.perf_counter()
    try:
        if backend == "linux":
            from mptcplab.kernel.backend import run_linux

            summary_json = run_linux(json.loads(task.scenario_json), seed=task.seed).summary_json
        elif backend == "uml":
            from mptcplab.kernel.uml.backend import run_uml

            summary_json = run_uml(json.loads(task.scenario_json), seed=task.seed).summary_json
        else:
            summary_json, *_ = _core.run(task.scenario_json, task.seed)
    except (KeyboardInterrupt, SystemExit, ConfigError):
        raise
    except BaseException as e:  # an engine panic arrives as a BaseException; keep it picklable
        raise RunFailed(f"run {task.key} ({task.params}, seed {task.seed}) failed: {e}") from None
    summary = json.loads(summary_json)
    return {
        "run_key": task.key,
        "params": task.params,
        "repeat": task.repeat,
        "seed": task.seed,
        "wall_s": round(time.perf_counter() - t0, 6),
        "metrics": flat_metrics(summary),
    }


def _worker_init() -> None:
    # The parent handles Ctrl-C and terminates the pool; workers must not print tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # If the sweep is killed outright, its workers go with it (Linux: PR_SET_PDEATHSIG).
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    # A worker whose sweep was killed must not spray tracebacks over the user's terminal;
    # run failures reach the parent as RunFailed exceptions carrying the engine's message.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _points(grid: Grid | Sequence[Mapping[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The parameter names and the points of a grid (every combination) or of an explicit
    list of points (each the same keys)."""
    if isinstance(grid, Mapping):
        return list(grid), expand_grid(grid)
    points = [dict(p) for p in grid]
    keys = list(points[0]) if points else []
    for p in points:
        if list(p) != keys:
            raise config_error("points", f"every point needs the same keys in the same order: {keys} vs {list(p)}")
    return keys, points


def _plan(scenario: Scenario, points: list[dict[str, Any]], repeat: int, backend: str = "sim") -> list[_Task]:
    """Every run of the sweep; refuses (ConfigError) a point the backend cannot run."""
    tasks = []
    for params in points:
        point = scenario.with_overrides(params, label="--vary")
        if backend in ("linux", "uml"):
            from mptcplab.kernel.support import check_supported

            check_supported(point, backend)
        for r in range(repeat):
            seed = repeat_seed(point.seed, r)
            tasks.append(_Task(run_key(point.resolved_json, seed, backend), params, r, seed, point.to_json()))
    return tasks


#: A run's own columns beside its parameters and metrics.
RUN_COLUMNS = ("repeat", "seed", "run_key", "wall_s")


def param_column(key: str) -> str:
    """The table column of grid key ``key``: the key itself, or ``grid.<key>`` for a key that
    names one of the run's own columns (``--vary seed=1,2``: ``grid.seed`` is the point's seed,
    ``seed`` the seed its run used, derived from it and the repeat), so neither hides the other.
    (Metric names start with ``conn.``, ``sf.``, ``link.`` or ``emulator.``, which no scenario
    key does, or are ``end_s``, ``events`` and ``data_packets``, which no scenario key is.)"""
    return f"grid.{key}" if key in RUN_COLUMNS else key


def _table(records: Iterable[dict[str, Any]], keys: list[str]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for rec in records:
        row: dict[str, Any] = {param_column(k): rec["params"][k] for k in keys}
        row.update(repeat=rec["repeat"], seed=rec["seed"], run_key=rec["run_key"], wall_s=rec["wall_s"])
        row.update(rec["metrics"])
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in map(param_column, keys):
        if k in df and not all(isinstance(v, int | float) and not isinstance(v, bool) for v in df[k]):
            df[k] = df[k].map(lambda v: v if isinstance(v, str) else json.dumps(v))
    return df


def _write_tables(df: pd.DataFrame, out: Path, shown: Path) -> None:
    """Writes both tables, each whole or not at all (an earlier one kept on failure)."""
    from mptcplab.outdir import atomic_path

    with atomic_path(out / "results.parquet", shown / "results.parquet") as tmp:
        df.to_parquet(tmp, index=False)
    with atomic_path(out / "results.csv", shown / "results.csv") as tmp:
        df.to_csv(tmp, index=False)


def sweep(
    scenario: str | Path | Mapping[str, Any] | Scenario,
    grid: Grid | Sequence[Mapping[str, Any]],
    repeat: int = 1,
    jobs: int = 1,
    out: str | Path | None = None,
    progress: ProgressFn | None = None,
    backend: str = "sim",
    engine: str = "local",
    address: str | None = None,
    replace: bool = False,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` (key path → list of values) ``repeat`` times; or,
    given a list of points (each a mapping key path → value, all with the same keys), each of
    them ``repeat`` times.

    Returns one tidy row per run: the varied parameters (columns named by key path),
    ``repeat``, ``seed``, ``run_key``, ``wall_s`` and the flat metrics of
    :func:`~mptcplab.results.flat_metrics`. With ``out``, finished runs are stored under
    ``out/runs/`` and reused on the next call (a stored run that cannot be trusted is run
    again, noted on stderr), and ``results.parquet`` / ``results.csv`` are written there.
    ``out`` holding a different sweep (another scenario, grid, repeat count or backend) is
    refused unless ``replace``; the same sweep is always resumed. A symbolic link at ``out``
    is followed. ``jobs`` worker processes run in parallel. ``progress(done, total)``
    is called as runs finish. Raises :class:`SweepInterrupted` on Ctrl-C (finished runs
    kept) and :class:`ConfigError` for a bad grid, before anything is written.
    ``backend="linux"`` runs each point on the kernel (see :mod:`mptcplab.kernel`), one at a
    time whatever ``jobs`` says, since runs share the machine's real time. ``backend="uml"``
    runs each point on the UML kernel in virtual time (:mod:`mptcplab.kernel.uml`), in
    parallel like the simulator, since no run needs the real clock.

    ``engine="dask"`` runs the grid on a Dask cluster (:mod:`mptcplab.cluster`): the one at
    ``address``, or a local one of ``jobs`` worker processes; the rows are the same as the
    local engine's (``wall_s``, each run's wall-clock time, aside). A cluster lost during the
    sweep raises :class:`ConfigError` for ``--address`` after the finished runs are stored.
    """
    check_arguments("sweep", locals())
    from mptcplab.outdir import follow
    from mptcplab.sweep_store import load_record, open_sweep_dir, refuse_other_sweep, sweep_spec

    from mptcplab.cluster import ENGINES

    if engine not in ENGINES:
        raise config_error("--engine", f"`{engine}` is not an engine; engines: {', '.join(ENGINES)}")
    if address is not None and engine != "dask":
        raise config_error("--address", "needs --engine dask (a cluster's address)")
    if engine == "dask" and backend == "linux":
        raise config_error("--engine", "the Linux backend runs on this machine's kernel, one run at a time; use --engine local")
    if repeat < 1:
        raise config_error("--repeat", f"{repeat} must be >= 1")
    if jobs < 1:
        raise config_error("--jobs", f"{jobs} must be >= 1")
    base = load_scenario(scenario)
    keys, points = _points(grid)
    shown = Path(out) if out is not None else None
    if shown is not None:
        check_output_dir(shown, "--out", marker="sweep.json", sibling=False)
    tasks = _plan(base, points, repeat, backend)
    shape = dict(grid) if isinstance(grid, Mapping) else {"points": len(points)}
    spec = sweep_spec(base.resolved_json, base.source, keys, points, shape, repeat, backend)
    done: dict[str, dict[str, Any]] = {}
    if shown is not None and refuse_other_sweep(shown, spec, replace):
        for t in tasks:
            rec = load_record(follow(shown) / "runs" / f"{t.key}.json", t.key, t.seed)
            if rec is not None:
                done[t.key] = rec
    todo = list({t.key: t for t in tasks if t.key not in done}.values())
    total = len({t.key for t in tasks})
    # A cluster that cannot be reached is refused before anything is written.
    cluster = None
    if engine == "dask" and todo:
        from mptcplab.cluster import Cluster

        cluster = Cluster(address, jobs)
    try:
        out_dir = open_sweep_dir(shown, spec, replace) if shown is not None else None
        return _execute(tasks, todo, done, total, keys, jobs, out_dir, shown, progress, backend, cluster)
    finally:
        if cluster is not None:
            cluster.close()


def _execute(
    tasks: list[_Task],
    todo: list[_Task],
    done: dict[str, dict[str, Any]],
    total: int,
    keys: list[str],
    jobs: int,
    out_dir: Path | None,
    shown: Path | None,
    progress: ProgressFn | None,
    backend: str,
    cluster: Any,
) -> pd.DataFrame:
    """Runs ``todo`` (on ``cluster`` if given, else in local processes), storing each run as it
    finishes; returns the table of every finished run of ``tasks``."""
    if progress:
        progress(len(done), total)

    from mptcplab.outdir import write_atomic

    def finish(rec: dict[str, Any]) -> None:
        done[rec["run_key"]] = rec
        if out_dir is not None:
            name = f"{rec['run_key']}.json"
            write_atomic(out_dir / "runs" / name, json.dumps(rec) + "\n", shown / "runs" / name)  # type: ignore[operator]
        if progress:
            progress(len(done), total)

    def table() -> pd.DataFrame:
        by_key = {t.key: t for t in tasks}
        recs = []
        for t in tasks:
            if t.key in done:
                rec = dict(done[t.key])
                rec.update(params=t.params, repeat=t.repeat, seed=by_key[t.key].seed)
                recs.append(rec)
        return _table(recs, keys)

    def keep_finished() -> None:
        if out_dir is not None and done:
            _write_tables(table(), out_dir, shown)  # type: ignore[arg-type]

    try:
        if cluster is not None:
            from mptcplab.cluster import ClusterLost

            try:
                cluster.run(todo, finish, backend=backend, engine_id=_engine_id())
            except ClusterLost as e:
                keep_finished()
                kept = f"; the {len(done)} finished runs are kept in {shown}/" if out_dir is not None else ""
                raise config_error(cluster.option, f"lost {cluster.where} after {len(done)} of {total} runs ({e}){kept}; "
                                   "restart the cluster and run the same command again to finish") from None
        elif jobs == 1 or len(todo) <= 1 or backend == "linux":
            for t in todo:
                finish(_run_task(t, backend))
        else:
            import multiprocessing

            pool = multiprocessing.get_context("forkserver").Pool(min(jobs, len(todo)), initializer=_worker_init)
            try:
                # The backend goes with every task: a worker given only the task runs the simulator.
                for rec in pool.imap_unordered(partial(_run_task, backend=backend), todo):
                    finish(rec)
                pool.close()
            finally:
                pool.terminate()
                pool.join()
    except KeyboardInterrupt:
        keep_finished()
        raise SweepInterrupted(len(done), total, shown) from None
    df = table()
    if out_dir is not None:
        _write_tables(df, out_dir, shown)  # type: ignore[arg-type]
    return df
