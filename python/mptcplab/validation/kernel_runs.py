"""The kernel side of the validation: the stored kernel runs (``kernel.csv`` from the host's
kernel, ``uml.csv`` from the UML kernel in virtual time) and :func:`measure_kernel`
(``validate --kernel``: root for the host's kernel, any user for UML), which takes them
resumably. Part of :mod:`mptcplab.validation`.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mptcplab.errors import ConfigError, config_error
from mptcplab.validation.grid import (
    GRID_DIR, KERNEL_CSV, _shares_parse, _shares_text, grid_scenarios, load_grid_scenario, metric_of, run_metrics,
)

KERNEL_RUNS = 5
#: The stored runs of each kernel backend, in the grid's folder.
BACKEND_CSV = {"linux": KERNEL_CSV, "uml": "uml.csv"}
CSV_COLUMNS = ["scenario", "run", "seed", "metric", "goodput_bps", "download_time_s", "chunk_time_s", "shares",
               "completed", "kernel", "command", "date", "loadavg", "wall_s"]


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
    backend: str = "linux", jobs: int = 1,
) -> Path:
    """Runs every selected grid scenario ``runs`` times on a kernel backend and stores the runs
    in the grid's CSV of that backend (:data:`BACKEND_CSV`; rows of other scenarios are kept).
    Resumable: finished runs wait in ``<csv>.partial`` until all are done. Every scenario is
    checked (schema, kernel support) before the first run. With ``remeasure_load_above``, only
    the stored runs that started with a 1-min load average above it are measured again
    (whatever their result), the others are kept. ``backend="linux"`` (root) runs one at a
    time, since runs share the machine's real time; ``backend="uml"`` runs ``jobs`` at a time,
    since a virtual-time run does not depend on the host's load. Returns the CSV's path."""
    from mptcplab.kernel.support import check_supported

    if backend not in BACKEND_CSV:
        raise config_error("--kernel-backend", f"`{backend}`: one of {', '.join(BACKEND_CSV)}")
    if backend == "linux":
        check_root()
    files = grid_scenarios(grid, only)
    scenarios = []
    for f in files:
        sc = load_grid_scenario(f)
        metric_of(sc)
        try:
            check_supported(sc, backend)
        except ConfigError:
            # The host's kernel must run the whole grid; the UML kernel skips what it cannot run
            # (its comparison with the host lists each such scenario with the reason).
            if backend == "linux":
                raise
            continue
        scenarios.append((f, sc))
    out = Path(grid) / BACKEND_CSV[backend]
    partial = Path(grid) / (BACKEND_CSV[backend] + ".partial")
    if partial.exists():
        done = {(r["scenario"], r["run"]): r for r in load_kernel_csv(partial)}
    elif remeasure_load_above is not None:
        names = {sc.name for _, sc in scenarios}
        done = {(r["scenario"], r["run"]): r for r in (load_kernel_csv(out) if out.exists() else [])
                if r["scenario"] in names and r["loadavg"] and float(r["loadavg"].split()[0]) <= remeasure_load_above}
    else:
        done = {}
    # Run k of every scenario before run k + 1 of any: a spell of load on the shared machine
    # then spreads over scenarios instead of biasing one.
    todo = [(f, sc, k) for k in range(runs) for f, sc in scenarios if (sc.name, k) not in done]

    def finish(row: dict[str, Any]) -> None:
        done[(row["scenario"], row["run"])] = row
        _write_rows(partial, sorted(done.values(), key=lambda r: (r["scenario"], r["run"])))

    if backend == "uml" and jobs > 1 and len(todo) > 1:
        _measure_parallel(todo, jobs, progress, finish)
    else:
        for f, sc, k in todo:
            if progress:
                progress(sc.name, k, _loadavg())
            finish(_measure_one(str(f), sc, k, backend))
    names = {sc.name for _, sc in scenarios}
    kept = [r for r in (load_kernel_csv(out) if out.exists() else []) if r["scenario"] not in names]
    new = [r for r in done.values() if r["scenario"] in names and r["run"] < runs]
    _write_rows(out, sorted(kept + new, key=lambda r: (r["scenario"], r["run"])))
    partial.unlink()
    return out


def _kernel_label(backend: str) -> str:
    """The ``kernel`` column: the host's release, or the UML kernel's with its source package
    version and configuration hash."""
    if backend == "linux":
        return os.uname().release
    from mptcplab.kernel.uml.kernel import find_kernel

    k = find_kernel()
    return k.label if k is not None else "none"


def _measure_one(f: str, sc: Any, k: int, backend: str) -> dict[str, Any]:
    """One stored run: run ``k`` (seed ``seed + k``) of grid scenario ``sc`` (file ``f``)."""
    import time

    seed = sc.seed + k
    row = {"scenario": sc.name, "run": k, "seed": seed, "metric": metric_of(sc), "kernel": _kernel_label(backend),
           "command": f"mptcplab run {_rel(Path(f))} --backend {backend} --seed {seed}",
           "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "loadavg": _loadavg()}
    t = time.monotonic()
    if backend == "uml":
        from mptcplab.kernel.uml.backend import run_uml

        res = run_uml(sc, seed=seed)
    else:
        from mptcplab.kernel.backend import run_linux

        res = run_linux(sc, seed=seed)
    return row | run_metrics(res) | {"wall_s": round(time.monotonic() - t, 1)}


def _measure_task(task: tuple[str, int]) -> dict[str, Any]:
    f, k = task
    return _measure_one(f, load_grid_scenario(Path(f)), k, "uml")


def _measure_parallel(
    todo: list[tuple[Path, Any, int]], jobs: int, progress: Callable[[str, int, str], None] | None,
    finish: Callable[[dict[str, Any]], None],
) -> None:
    """The UML runs of ``todo`` in ``jobs`` worker processes, each stored as it finishes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
        futures = {}
        for f, sc, k in todo:
            futures[ex.submit(_measure_task, (str(f), k))] = (sc.name, k)
        for fut in as_completed(futures):
            name, k = futures[fut]
            if progress:
                progress(name, k, _loadavg())
            finish(fut.result())


def _rel(f: Path) -> str:
    try:
        return str(f.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(f)
