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
from mptcplab.kernel.emulator import EmulatorSched, loadavg
from mptcplab.validation.grid import (
    GRID_DIR,
    KERNEL_CSV,
    MECHANISM_COLUMNS,
    _shares_parse,
    _shares_text,
    grid_scenarios,
    load_grid_scenario,
    metric_of,
    run_metrics,
)

#: Runs per scenario: None follows the declared rule (:func:`mptcplab.validation.modes.runs_needed`:
#: 10, or 20 where the first 10 do not agree within 2 %).
KERNEL_RUNS: int | None = None
#: A scenario whose emulators were unreliable this many times is not measured further (the
#: machine cannot hold its links; the report lists the reasons).
MAX_UNRELIABLE = 5
#: The stored runs of each kernel backend, in the grid's folder.
BACKEND_CSV = {"linux": KERNEL_CSV, "uml": "uml.csv"}
CSV_COLUMNS = ["scenario", "run", "seed", "metric", "goodput_bps", "download_time_s", "chunk_time_s", "shares",
               "completed", "kernel", "command", "date", "loadavg", "wall_s"]
#: Columns of the trusted measurement (issue of the operating modes): how the emulators were
#: scheduled, how late they handed frames over, the host's load over the run, and whether the
#: run is fit for verdicts. Files measured before them read as an emulator "unrecorded" and
#: every run reliable.
MEASUREMENT_COLUMNS = ["emulator", "cpu_busy", "lateness_p50_s", "lateness_p99_s", "lateness_max_s", "late_frames",
                       "reliable", "reason"]
#: And what describes each run's operating point (:func:`mptcplab.validation.grid.mechanism`).
ALL_COLUMNS = CSV_COLUMNS + MEASUREMENT_COLUMNS + MECHANISM_COLUMNS


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
                    **{c: "" for c in MEASUREMENT_COLUMNS + MECHANISM_COLUMNS}, "emulator": "unrecorded",
                    **{k: v for k, v in r.items() if v != "" or k not in MEASUREMENT_COLUMNS},
                    "reliable": r.get("reliable", "true") != "false",
                    "run": int(r["run"]), "seed": int(r["seed"]), "goodput_bps": float(r["goodput_bps"]),
                    "download_time_s": float(r["download_time_s"]) if r["download_time_s"] else None,
                    "chunk_time_s": float(r["chunk_time_s"]) if r["chunk_time_s"] else None,
                    "shares": _shares_parse(r["shares"]), "completed": r["completed"] == "true",
                    **{c: float(r[c]) if r.get(c) else None for c in MECHANISM_COLUMNS if c != "slow_path"},
                    "slow_path": r.get("slow_path") or None,
                })
            except ValueError as e:
                raise config_error(f"line {i}", f"unreadable value ({e})", str(p)) from None
    return rows


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=ALL_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r.get(k)) for k in ALL_COLUMNS})
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
    grid: str | Path = GRID_DIR, only: str | None = None, runs: int | None = KERNEL_RUNS,
    progress: Callable[[str, int, str], None] | None = None, remeasure_load_above: float | None = None,
    backend: str = "linux", jobs: int = 1, csv_name: str | None = None, sched: EmulatorSched | None = None,
    max_lateness_s: float | None = None,
) -> Path:
    """Measures every selected grid scenario on a kernel backend until it has the runs it
    needs, into the grid's CSV of that backend (:data:`BACKEND_CSV`, or ``csv_name``; rows of
    other scenarios are kept). ``runs`` fixes the count; None follows the declared rule
    (:func:`mptcplab.validation.modes.runs_needed`: 10, or 20 where the first 10 do not agree
    within 2 %). Only reliable runs count (``reliable``: the emulators held the links' timing,
    :func:`mptcplab.kernel.summary.emulator_health`); a scenario with :data:`MAX_UNRELIABLE`
    unreliable runs is not measured further. Each run is written to the CSV as it finishes, so
    a measurement stopped at any point resumes where it stopped (in a later session too: the
    rows say when and how each run was measured). Every scenario is checked (schema, kernel
    support) before the first run. With ``remeasure_load_above``, the stored runs of the
    selected scenarios that started with a 1-min load average above it are dropped and
    measured again. ``backend="linux"`` (root) runs one at a time, since runs share the
    machine's real time, with the emulators scheduled by ``sched`` (default: SCHED_FIFO,
    pinned) and judged by ``max_lateness_s``; ``backend="uml"`` runs ``jobs`` at a time, since a
    virtual-time run does not depend on the host's load. Returns the CSV's path."""
    from mptcplab.kernel.emulator import check_max_lateness
    from mptcplab.kernel.support import check_supported

    if backend not in BACKEND_CSV:
        raise config_error("--kernel-backend", f"`{backend}`: one of {', '.join(BACKEND_CSV)}")
    if runs is not None and runs < 1:
        raise config_error("--runs", f"{runs}: need at least 1 run per scenario")
    check_max_lateness(max_lateness_s)
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
    out = Path(grid) / (csv_name or BACKEND_CSV[backend])
    rows = load_kernel_csv(out) if out.exists() else []
    names = {sc.name for _, sc in scenarios}
    # Runs a measurement of the earlier, all-at-the-end kind left waiting.
    partial = out.with_name(out.name + ".partial")
    if partial.exists():
        have = {(r["scenario"], r["run"]) for r in rows}
        rows += [r for r in load_kernel_csv(partial) if (r["scenario"], r["run"]) not in have]
    if remeasure_load_above is not None:
        rows = [r for r in rows if r["scenario"] not in names or not r["loadavg"]
                or float(r["loadavg"].split()[0]) <= remeasure_load_above]

    def finish(row: dict[str, Any]) -> None:
        rows.append(row)
        _write_rows(out, sorted(rows, key=lambda r: (r["scenario"], r["run"])))

    sched_args = {"sched": sched, "max_lateness_s": max_lateness_s}
    # One run of every scenario that needs one per round: a spell of load on the shared machine
    # then spreads over scenarios instead of biasing one.
    while todo := _next_runs(rows, scenarios, runs):
        if backend == "uml" and jobs > 1 and len(todo) > 1:
            _measure_parallel(todo, jobs, progress, finish)
            continue
        for f, sc, k in todo:
            if progress:
                progress(sc.name, k, loadavg())
            finish(_measure_one(str(f), sc, k, backend, **sched_args))
    _write_rows(out, sorted(rows, key=lambda r: (r["scenario"], r["run"])))
    partial.unlink(missing_ok=True)
    return out


def _next_runs(rows: list[dict[str, Any]], scenarios: list[tuple[Path, Any]], runs: int | None) -> list[tuple[Path, Any, int]]:
    """One run for each scenario that has fewer reliable runs than it needs (and fewer than
    :data:`MAX_UNRELIABLE` unreliable ones): its next run number."""
    from mptcplab.validation.modes import runs_needed

    todo = []
    for f, sc in scenarios:
        mine = sorted((r for r in rows if r["scenario"] == sc.name), key=lambda r: r["run"])
        metric = metric_of(sc)
        good = [r[metric] for r in mine if r["reliable"] and r[metric] is not None]
        need = runs if runs is not None else runs_needed(good)
        if len(good) < need and sum(1 for r in mine if not r["reliable"]) < MAX_UNRELIABLE:
            todo.append((f, sc, mine[-1]["run"] + 1 if mine else 0))
    return todo


def _kernel_label(backend: str) -> str:
    """The ``kernel`` column: the host's release, or the UML kernel's with its source package
    version and configuration hash."""
    if backend == "linux":
        return os.uname().release
    from mptcplab.kernel.uml.kernel import find_kernel

    k = find_kernel()
    return k.label if k is not None else "none"


def _measure_one(
    f: str, sc: Any, k: int, backend: str, sched: EmulatorSched | None = None, max_lateness_s: float | None = None,
) -> dict[str, Any]:
    """One stored run: run ``k`` (seed ``seed + k``) of grid scenario ``sc`` (file ``f``)."""
    import time

    seed = sc.seed + k
    how = sched if sched is not None else EmulatorSched()
    extra = "" if backend == "uml" or how == EmulatorSched() else " --emulator-priority normal"
    extra += f" --max-lateness {max_lateness_s}s" if max_lateness_s is not None and backend == "linux" else ""
    row = {"scenario": sc.name, "run": k, "seed": seed, "metric": metric_of(sc), "kernel": _kernel_label(backend),
           "command": f"mptcplab run {_rel(Path(f))} --backend {backend} --seed {seed}{extra}",
           "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "loadavg": loadavg()}
    t = time.monotonic()
    if backend == "uml":
        from mptcplab.kernel.uml.backend import run_uml

        res = run_uml(sc, seed=seed)
    else:
        from mptcplab.kernel.backend import run_linux

        res = run_linux(sc, seed=seed, sched=how, max_lateness_s=max_lateness_s)
    return row | run_metrics(res) | measurement_of(res, backend) | {"wall_s": round(time.monotonic() - t, 1)}


def measurement_of(res: Any, backend: str) -> dict[str, Any]:
    """The :data:`MEASUREMENT_COLUMNS` of one run's result."""
    e = res.summary.get("emulator") or {}
    if backend == "uml":
        return {"emulator": "virtual time", "reliable": True, "reason": ""}
    sched = [x for x in e.get("sched") or [] if x]
    label = "; ".join(sorted({f"{x['policy']} {x['priority']} cpu {x['cpu']}" + (f" (refused: {x['refused']})" if x.get("refused") else "")
                              for x in sched})) or "unrecorded"
    host = e.get("host") or {}
    return {
        "emulator": label, "cpu_busy": host.get("cpu_busy"), "lateness_p50_s": e.get("p50_lateness_s"),
        "lateness_p99_s": e.get("p99_lateness_s"), "lateness_max_s": e.get("max_lateness_s"),
        "late_frames": e.get("late_frames"), "reliable": bool(e.get("reliable", True)), "reason": e.get("reason") or "",
    }


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
                progress(name, k, loadavg())
            finish(fut.result())


def _rel(f: Path) -> str:
    try:
        return str(f.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(f)
