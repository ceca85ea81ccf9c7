"""The UML kernel in virtual time against the host's kernel: per grid scenario, the host's
runs (``kernel.csv``) and their operating modes, the UML runs (``uml.csv``), and where each UML
run lands. Part of :mod:`mptcplab.validation`.

Rules, declared before any run (issue 36):

* A scenario is **multi-modal** on the host when its runs have more than one mode by
  :func:`~mptcplab.validation.modes.find_modes` (the validation's own rule), else **unimodal**.
* On a unimodal scenario, UML **agrees** when its median is within 10 % of the host's median
  (UML median / host median − 1); the target is agreement on at least 90 % of them.
* On a multi-modal one there is no single value to agree with: each UML run is placed in the
  host's mode whose range [min, max] holds it, or, when none does, reported as between or
  outside the modes with its distance to the nearest one.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from mptcplab.validation.grid import (
    GRID_DIR,
    KERNEL_CSV,
    grid_scenarios,
    load_grid_scenario,
    metric_of,
)
from mptcplab.validation.kernel_runs import BACKEND_CSV, load_kernel_csv
from mptcplab.validation.modes import Mode, find_modes

__all__ = ["UML_TARGET", "uml_lines", "uml_vs_host"]

#: Declared before any run: (tolerance on the median, fraction of the unimodal scenarios).
UML_TARGET = (0.10, 0.90)


def _mode_of(v: float, modes: list[Mode]) -> str:
    """Which of the host's modes (lowest first) holds ``v``, or how far it is from the nearest."""
    names = [f"mode {k + 1} of {len(modes)}" for k in range(len(modes))]
    for name, md in zip(names, modes, strict=True):
        if md.low <= v <= md.high:
            return name
    dist = [min(abs(v - md.low), abs(v - md.high)) / md.value for md in modes]
    near = names[dist.index(min(dist))]
    where = "between the modes" if modes[0].high < v < modes[-1].low else "outside the modes"
    return f"{where}, nearest {near} ({100 * min(dist):.1f} % away)"


def uml_vs_host(grid: str | Path = GRID_DIR, only: str | None = None, uml_csv: str | None = None) -> list[dict[str, Any]]:
    """One record per grid scenario with runs on both kernels: the metric, the host's and
    UML's runs (by seed), medians, the host's modes (or None), UML's relative difference from
    the host's median, and on a multi-modal scenario the mode of each UML run; and one per
    scenario with host runs only, ``refused`` saying why UML did not run it. ``uml_csv`` names
    the grid's file of UML runs (default: the uml backend's)."""
    host = load_kernel_csv(Path(grid) / KERNEL_CSV)
    uml = load_kernel_csv(Path(grid) / (uml_csv or BACKEND_CSV["uml"]))
    out = []
    for f in grid_scenarios(grid, only):
        sc = load_grid_scenario(f)
        metric = metric_of(sc)
        hv = [r[metric] for r in host if r["scenario"] == sc.name and r[metric] is not None]
        uruns = sorted((r["seed"], r[metric]) for r in uml if r["scenario"] == sc.name and r[metric] is not None)
        if hv and not uruns:
            out.append({"scenario": sc.name, "metric": metric, "refused": _refusal(sc)})
        if not hv or not uruns:
            continue
        uv = [v for _, v in uruns]
        hm, um = statistics.median(hv), statistics.median(uv)
        found = find_modes(hv)
        modes = None if found.unimodal else found.by_value()
        out.append({
            "scenario": sc.name, "metric": metric, "refused": None, "host": sorted(hv), "host_median": hm,
            "uml": uruns, "uml_median": um, "uml_identical": len(set(uv)) == 1,
            "rel_diff": um / hm - 1 if hm else None, "modes": modes,
            "uml_modes": [(seed, v, _mode_of(v, modes)) for seed, v in uruns] if modes else None,
            "host_kernel": sorted({r["kernel"] for r in host if r["scenario"] == sc.name}),
            "uml_kernel": sorted({r["kernel"] for r in uml if r["scenario"] == sc.name}),
        })
    return out


def _refusal(sc: Any) -> str:
    """Why the UML backend does not run ``sc`` (its one-line refusal), or that it was not measured."""
    from mptcplab.errors import ConfigError
    from mptcplab.kernel.support import check_supported

    try:
        check_supported(sc, "uml")
    except ConfigError as e:
        return f"{getattr(e, 'path', '')}: {getattr(e, 'message', e)}"
    return "not measured"


def _fmt(metric: str, v: float) -> str:
    return f"{v / 1e6:.3f} Mbit/s" if metric == "goodput_bps" else f"{v:.3f} s"


def uml_lines(records: list[dict[str, Any]]) -> list[str]:
    """The comparison as report lines: the count against :data:`UML_TARGET` on the unimodal
    scenarios, each miss, and each multi-modal scenario's modes with where UML's runs land."""
    refused = [r for r in records if r["refused"]]
    records = [r for r in records if not r["refused"]]
    uni = [r for r in records if r["modes"] is None]
    tol, need = UML_TARGET
    ok = [r for r in uni if r["rel_diff"] is not None and abs(r["rel_diff"]) <= tol]
    met = bool(uni) and len(ok) >= need * len(uni) - 1e-9
    lines = [f"UML against the host kernel: {len(ok)}/{len(uni)} unimodal scenarios within {tol:.0%} of the host's "
             f"median (target: >= {need:.0%}: {'met' if met else 'not met'})"]
    for r in uni:
        if r not in ok:
            lines.append(f"  miss: {r['scenario']}: UML {_fmt(r['metric'], r['uml_median'])} vs host "
                         f"{_fmt(r['metric'], r['host_median'])} ({100 * r['rel_diff']:+.1f} %)")
    for r in records:
        if r["modes"] is None:
            continue
        m = r["metric"]
        lines.append(f"  multi-modal on the host: {r['scenario']}: modes "
                     + " and ".join(f"{_fmt(m, md.low)}-{_fmt(m, md.high)} ({md.n} runs)" for md in r["modes"]))
        for seed, v, mode in r["uml_modes"]:
            lines.append(f"    UML seed {seed}: {_fmt(m, v)}: {mode}")
    for r in refused:
        lines.append(f"  not run on UML: {r['scenario']}: {r['refused']}")
    same = sum(1 for r in records if r["uml_identical"])
    lines.append(f"UML runs identical across seeds in {same}/{len(records)} scenarios (a seed drives the emulated "
                 "links' random processes, loss and jitter, and the UML kernel's random numbers)")
    return lines
