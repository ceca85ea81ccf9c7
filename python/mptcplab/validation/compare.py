"""The comparison of the simulator with the stored kernel runs: per scenario medians, ranges,
subflow shares and the modes of both backends' runs, the counts against the targets declared before
any run, and the kernel's agreement with its earlier sessions (definitions in
:mod:`mptcplab.validation`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab._api_checks import check_arguments
from mptcplab.errors import ConfigError, config_error
from mptcplab.scenario import Scenario
from mptcplab.validation.grid import (
    GRID_DIR,
    KERNEL_CSV,
    MECHANISM_COLUMNS,
    grid_scenarios,
    load_grid_scenario,
    metric_of,
    run_metrics,
)
from mptcplab.validation.kernel_runs import load_kernel_csv
from mptcplab.validation.modes import (
    Modes,
    at_least,
    distribution_agreement,
    find_modes,
    kernel_self_agreement,
    nearest_mode_distance,
    runs_needed,
)

if TYPE_CHECKING:
    import pandas as pd

#: Targets declared before any run: (tolerance, required fraction of the scenarios).
#: ``within_10``: the simulator agrees with the kernel by distribution (a unimodal kernel: the
#: medians within 10 %; a multi-modal one: every kernel mode holding >= 20 % of the runs matched
#: within 10 % by a simulator mode whose share differs by <= 25 points;
#: :func:`mptcplab.validation.modes.distribution_agreement`). ``within_25``: the simulator's
#: median within 25 % of the nearest kernel mode. ``shares``: each subflow's median share within 0.05.
TARGETS = {"within_10": (0.10, 0.90), "within_25": (0.25, 1.00), "shares": (0.05, 0.90)}


def mode_mechanisms(runs: list[dict[str, Any]], metric: str, modes: Modes) -> list[dict[str, Any]]:
    """For each mode (lowest value first), the medians over its runs of what describes the
    operating point (:data:`~mptcplab.validation.grid.MECHANISM_COLUMNS`, and the slow
    subflow's share of the bytes)."""
    out = []
    for md in modes.by_value():
        mine = [r for r in runs if r[metric] is not None and md.low <= r[metric] <= md.high]
        entry: dict[str, Any] = {"value": md.value, "share_of_runs": md.share}
        slow = [r.get("slow_path") for r in mine if r.get("slow_path")]
        if slow:
            path = max(set(slow), key=slow.count)
            entry["slow_path"] = path
            entry["slow_share"] = statistics.median(r["shares"].get(path, 0.0) for r in mine)
        for col in MECHANISM_COLUMNS[1:]:
            vals = [float(r[col]) for r in mine if r.get(col) is not None]
            entry[col] = statistics.median(vals) if vals else None
        out.append(entry)
    return out


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
    kernel_csv: str | Path | None = None, progress: Callable[[str], None] | None = None, skip_missing: bool = False,
) -> pd.DataFrame:
    """Runs the simulator over the grid (``repeat`` seeds per scenario, ``jobs`` threads) and
    compares it with the stored kernel runs. Returns one row per scenario: the metric, kernel
    and simulator median/min/max, ``rel_diff`` (simulator median / kernel median − 1), median
    subflow shares of both (``kernel_shares``, ``sim_shares``) and their largest difference,
    both backends' modes (:mod:`mptcplab.validation.modes`) with the agreement by distribution
    (``agrees``, ``agreement``: the rule applied, in one line), the simulator median's distance
    to the nearest kernel mode, the kernel runs left out as unreliable, and ``sim_error`` when the
    simulator cannot run the scenario (e.g. bbr, which it has no model of). A scenario without
    kernel runs is refused, or with ``skip_missing`` left out (the UML kernel's, which does not
    run every scenario of the grid)."""
    check_arguments("validate", locals())
    import pandas as pd

    if repeat < 1:
        raise config_error("--repeat", f"{repeat}: need at least 1 run per scenario")
    if jobs < 1:
        raise config_error("--jobs", f"{jobs}: need at least 1")
    files = grid_scenarios(grid, only)
    csv_path = Path(kernel_csv) if kernel_csv is not None else Path(grid) / KERNEL_CSV
    kernel_rows = load_kernel_csv(csv_path)
    scenarios = []
    for f in files:
        sc = load_grid_scenario(f)
        if not any(r["scenario"] == sc.name for r in kernel_rows):
            if skip_missing:
                continue
            raise config_error("", f"scenario `{sc.name}` has no kernel runs in {KERNEL_CSV}; measure it with validate --kernel", str(f))
        scenarios.append((sc, metric_of(sc)))

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
        mine = [r for r in kernel_rows if r["scenario"] == sc.name]
        # Runs whose emulators did not hold the links' timing are out of every verdict (where no
        # run is reliable, the scenario is judged on them and the summary says so).
        kr = [r for r in mine if r["reliable"]] or mine
        unreliable = [r for r in mine if not r["reliable"]]
        kv = [r[metric] for r in kr if r[metric] is not None]
        sv = [r[metric] for r in sim if r[metric] is not None] if sim else []
        kmodes, smodes = find_modes(kv), find_modes(sv)
        agreement = distribution_agreement(kv, sv, 1e-6 if metric == "goodput_bps" else 1.0) if sv else None
        nearest = nearest_mode_distance(kv, sv) if sv else None
        itself = kernel_self_agreement(kv, repeat)
        k = _stats(kv)
        s = _stats([r[metric] for r in sim if r[metric] is not None]) if sim else None
        rel = (s["median"] / k["median"] - 1) if s and k and k["median"] else None
        kshares = _median_shares([r["shares"] for r in kr])
        sshares = _median_shares([r["shares"] for r in sim]) if sim else {}
        multipath = len(kshares) > 1
        share_diff = max(abs(kshares[p] - sshares.get(p, 0.0)) for p in kshares) if multipath and sim else None
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
            "kernel_modes": [vars(m) for m in kmodes.by_value()], "kernel_outliers": list(kmodes.outliers),
            "sim_modes": [vars(m) for m in smodes.by_value()],
            "kernel_mode_mechanisms": mode_mechanisms(kr, metric, kmodes),
            "sim_mode_mechanisms": mode_mechanisms(sim, metric, smodes) if sim else [],
            "agrees": agreement.agrees if agreement else False,
            "agreement": agreement.reason if agreement else (err or "no simulator runs"),
            "nearest_mode_diff": nearest,
            "kernel_self_resampled": itself.resampled, "kernel_self_halves": itself.halves,
            "kernel_runs_needed": runs_needed(kv),
            "kernel_unreliable": len(unreliable), "kernel_all_unreliable": bool(mine) and not any(r["reliable"] for r in mine),
            "kernel_unreliable_reasons": sorted({r["reason"] for r in unreliable if r["reason"]}),
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
    df.attrs["kernel_csv"] = csv_path.as_posix()
    return df


def earlier_sessions(grid: str | Path, df: pd.DataFrame) -> list[dict[str, Any]]:
    """The kernel's own reproducibility: for each earlier measurement session kept in the
    grid (``kernel-<date>.csv``, same columns as ``kernel.csv``), how many of the scenarios of
    ``df`` it has agree with the current kernel median within the same tolerances the
    simulator is held to (its median / the current median − 1), and how many agree by
    distribution (:func:`~mptcplab.validation.modes.distribution_agreement`, the earlier session
    in the simulator's place; its reliable runs against the current reliable runs)."""
    out = []
    current = load_kernel_csv(Path(grid) / KERNEL_CSV)
    for f in sorted(Path(grid).glob("kernel-*.csv")):
        rows = load_kernel_csv(f)
        n = w10 = w25 = agree = 0
        for name, metric, cur in zip(df["scenario"], df["metric"], df["kernel_median"], strict=True):
            vals = [r[metric] for r in rows if r["scenario"] == name and r[metric] is not None and r["reliable"]]
            now = [r[metric] for r in current if r["scenario"] == name and r[metric] is not None and r["reliable"]]
            if not vals or not cur:
                continue
            d = abs(statistics.median(vals) / cur - 1)
            n += 1
            w10 += d <= TARGETS["within_10"][0]
            w25 += d <= TARGETS["within_25"][0]
            agree += distribution_agreement(now, vals).agrees
        if n:
            out.append({"file": f.name, "scenarios": n, "within_10": w10, "within_25": w25, "agree": agree,
                        "runs": max(sum(1 for r in rows if r["scenario"] == s) for s in df["scenario"])})
    return out


def target_counts(df: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per target of :data:`TARGETS`: (scenarios that meet its tolerance, scenarios it counts
    over). The medians over every scenario (one the simulator refuses is a miss), the shares
    over the multipath scenarios."""
    near = [abs(r) if r is not None and not (isinstance(r, float) and math.isnan(r)) else None
            for r in df["nearest_mode_diff"]]
    multi = [d for d, ks in zip(df["share_diff"], df["kernel_shares"], strict=True) if len(ks) > 1]
    return {
        "within_10": (sum(1 for a, e in zip(df["agrees"], df["sim_error"], strict=True) if a and not e), len(df)),
        "within_25": (sum(1 for r in near if r is not None and r <= TARGETS["within_25"][0]), len(df)),
        "shares": (sum(1 for d in multi if d is not None and not (isinstance(d, float) and math.isnan(d))
                       and d <= TARGETS["shares"][0]), len(multi)),
    }


def self_agreement_lines(df: pd.DataFrame) -> list[str]:
    """What the agreement target can be expected to give: the kernel's runs in the simulator's
    place (:func:`~mptcplab.validation.modes.kernel_self_agreement`), summed over the scenarios,
    and the chance that such a simulator meets the target (scenarios taken as independent)."""
    if "kernel_self_resampled" not in df:
        return []
    resampled = [p for p in df["kernel_self_resampled"] if not math.isnan(p)]
    halves = [p for p in df["kernel_self_halves"] if not math.isnan(p)]
    if not resampled:
        return []
    n, need = len(df), TARGETS["within_10"][1]
    k = math.ceil(need * n - 1e-9)
    low = [s for s, p in zip(df["scenario"], df["kernel_self_resampled"], strict=True) if p < 0.5]
    return [f"a simulator that reproduced the kernel's runs exactly would agree by distribution on {sum(resampled):.1f}/{n} "
            f"scenarios in expectation ({df.attrs.get('repeat')} runs drawn from the kernel's own, with replacement; "
            f"optimistic) or {sum(halves):.1f}/{n} (the kernel's runs split in two halves; pessimistic); its chance of "
            f"meeting the >= {need:.0%} target ({k}/{n}) is {at_least(resampled, k):.0%} or {at_least(halves, k):.0%}",
            "scenarios where such a simulator agrees in fewer than half of the draws (the rule cannot confirm the kernel "
            f"against itself there): {', '.join(low) if low else 'none'}"]


def summary_lines(df: pd.DataFrame) -> list[str]:
    """``N/M within 10 %``, ``N/M within 25 %``, ``N/M subflow shares within 0.05``, each with
    its declared target and whether it is met."""
    counts = target_counts(df)

    def line(what: str, key: str) -> str:
        n, total = counts[key]
        need = TARGETS[key][1]
        met = total > 0 and n >= need * total - 1e-9
        return f"{n}/{total} {what} (target: >= {need:.0%}: {'met' if met else 'not met'})"

    out = [line("agree by distribution (kernel modes matched within 10 %)", "within_10"),
           line("within 25 % of the nearest kernel mode", "within_25"),
           line("subflow shares within 0.05", "shares")]
    refused = [s for s, e in zip(df["scenario"], df["sim_error"], strict=True) if e]
    if refused:
        out.append(f"{len(refused)} scenario(s) the simulator cannot run, counted as misses: {', '.join(refused)}")
    for k in df.attrs.get("kernel_sessions", []):
        out.append(f"kernel against itself: the earlier session {k['file']} ({k['runs']} runs per scenario) agrees with "
                   f"kernel.csv by distribution on {k['agree']}/{k['scenarios']}; its median is within 10 % on "
                   f"{k['within_10']}/{k['scenarios']}, within 25 % on {k['within_25']}/{k['scenarios']}")
    out.extend(self_agreement_lines(df))
    multi_modal = [s for s, m in zip(df["scenario"], df["kernel_modes"], strict=True) if len(m) > 1]
    if multi_modal:
        out.append(f"{len(multi_modal)} scenario(s) multi-modal on the kernel: {', '.join(multi_modal)}")
    short = [f"{s} ({n} of {need})" for s, n, need in zip(df["scenario"], df["kernel_runs"], df["kernel_runs_needed"], strict=True)
             if n < need]
    if short:
        out.append(f"{len(short)} scenario(s) with fewer reliable kernel runs than the measurement's rule needs "
                   f"(10, or 20 where the first 10 spread by more than 2 %): {', '.join(short)}")
    flagged = [f"{s} ({n}{', all: judged on them' if every else ''})"
               for s, n, every in zip(df["scenario"], df["kernel_unreliable"], df["kernel_all_unreliable"], strict=True) if n]
    if flagged:
        out.append(f"kernel runs left out as unreliable (their emulators fell behind): {', '.join(flagged)}")
    return out

