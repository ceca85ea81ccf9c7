"""The markdown summary of ``scripts/kernel-mode-selectors.py``'s runs (its docstring declares
the rule): per scenario the modes of all its runs pooled, per level the modes found on the
level alone and the pooled modes' frequencies with 95 % Wilson intervals, the change against
the baseline with Newcombe's hybrid score interval, and per pooled mode its mechanism in
numbers (medians over the mode's runs)."""

from __future__ import annotations

import csv
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mptcplab.validation.modes import Mode, find_modes

Z = 1.959964  # two-sided 95 %


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's score interval for k successes in n trials (Wilson 1927)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / den
    half = Z / den * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float, float]:
    """p1 − p2 and its 95 % interval by Newcombe's hybrid score method (1998, method 10)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    d = p1 - p2
    return d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def _f(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _member(v: float, modes: list[Mode]) -> int | None:
    for i, m in enumerate(modes):
        if m.low <= v <= m.high:
            return i
    return None


def _med(rows: list[dict[str, str]], k: str) -> str:
    v = [_f(r[k]) for r in rows if not math.isnan(_f(r[k]))]
    return f"{statistics.median(v):.4g}" if v else "-"


MECH = [("share_1", "share of path 1"), ("slow_cwnd_mean_b", "slow cwnd mean (B)"),
        ("slow_cwnd_p90_b", "slow cwnd p90 (B)"), ("slow_srtt_mean_ms", "slow srtt (ms)"),
        ("fast_cwnd_mean_b", "fast cwnd mean (B)"), ("fast_srtt_mean_ms", "fast srtt (ms)"),
        ("rwnd_limited_s", "rwnd-limited (s)"), ("sndbuf_limited_s", "sndbuf-limited (s)"),
        ("slow_first_data_s", "slow path first data (s)")]


def _reference(levels: dict[tuple[str, str], list[dict[str, str]]], factor: str, level: str) -> list[dict[str, str]]:
    """The runs a level is compared with: the baseline, or for a factor changed at a host
    jitter (``"write @33us"``) the level of that jitter alone; none for the baseline itself."""
    if (factor, level) == ("baseline", "-"):
        return []
    if " @" in factor:
        return levels.get(("host_jitter", factor.split(" @")[1]), [])
    return levels.get(("baseline", "-"), [])


def _pairwise(levels: dict[tuple[str, str], list[dict[str, str]]]) -> list[str]:
    """Each level against its reference by the modes of the two levels' runs together (added
    after the first 60 runs, when the pooled modes of every level proved one continuous
    spread): per mode of the pair, its frequency in the level and in the reference, and the
    difference with Newcombe's interval."""
    out = ["", ("Each level against its reference, by the modes of the two levels' runs together "
           "(value: share in the level / share in the reference, Δ [95 % CI]):"), ""]
    for (factor, level), lr in levels.items():
        ref = _reference(levels, factor, level)
        if not ref:
            continue
        v, rv = [_f(r["goodput_mbps"]) for r in lr], [_f(r["goodput_mbps"]) for r in ref]
        pm = find_modes(v + rv).by_value()
        parts = []
        for m in pm:
            k = sum(1 for x in v if m.low <= x <= m.high)
            kr = sum(1 for x in rv if m.low <= x <= m.high)
            d, dl, dh = newcombe(k, len(v), kr, len(rv))
            parts.append(f"{m.value:.4g} ({m.low:.4g}-{m.high:.4g}): {k}/{len(v)} vs {kr}/{len(rv)}, "
                         f"{d:+.2f} [{dl:+.2f}, {dh:+.2f}]")
        out.append(f"- {factor} = {level}: " + "; ".join(parts))
    return out


def write_summary(csv_path: Path, out: Path, host: bool = False) -> None:
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    by_sc: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_sc[r["scenario"]].append(r)
    where = "this machine's kernel" if host else "the UML kernel"
    kernels = sorted({r["kernel"] + ("" if host else " " + r["uml_config_sha256"][:12]) for r in rows})
    cmd = "--backend linux --summary" if host else "--summary"
    lines = [f"# Linux's operating modes on {where}, and what selects them", "",
             (f"Written by `scripts/kernel-mode-selectors.py {cmd}` from `{csv_path.name}` ({len(rows)} runs; kernel "
             f"{', '.join(kernels)}). Goodput in "
             "Mbit/s over the scenario's measured window. The rule (declared in the script before the runs): "
             "modes by `find_modes`; frequencies of the modes of each scenario's pooled runs, with 95 % Wilson "
             "intervals; changes against the reference (the baseline; for a factor written `@33us`, "
             "host_jitter = 33us alone) with Newcombe's hybrid score interval, level minus reference."), ""]
    for sc, srows in by_sc.items():
        pooled = find_modes([_f(r["goodput_mbps"]) for r in srows])
        pm = pooled.by_value()
        lines += [f"## {sc}", "", f"Pooled over {len(srows)} runs: " + "; ".join(
            f"mode {chr(65 + i)} = {m.describe()}" for i, m in enumerate(pm))
            + (f"; outliers {', '.join(f'{o:.3g}' for o in pooled.outliers)}" if pooled.outliers else ""), ""]
        levels: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
        for r in srows:
            levels[(r["factor"], r["level"])].append(r)
        head = "| factor | level | n | median | range | modes of the level | " + " | ".join(
            f"mode {chr(65 + i)} share [95 % CI] | Δ vs reference [95 % CI]" for i in range(len(pm))) + " |"
        lines += [head, "|" + "---|" * (6 + 2 * len(pm))]
        for (factor, level), lr in levels.items():
            v = [_f(r["goodput_mbps"]) for r in lr]
            lm = find_modes(v)
            cells = [factor, level, str(len(v)), f"{statistics.median(v):.4g}", f"{min(v):.4g}-{max(v):.4g}",
                     "; ".join(m.describe() for m in lm.by_value())
                     + (f"; outliers {', '.join(f'{o:.3g}' for o in lm.outliers)}" if lm.outliers else "")]
            for i in range(len(pm)):
                k = sum(1 for x in v if _member(x, pm) == i)
                lo, hi = wilson(k, len(v))
                cells.append(f"{k}/{len(v)} [{lo:.2f}, {hi:.2f}]")
                ref = _reference(levels, factor, level)
                if ref:
                    kb = sum(1 for r in ref if _member(_f(r["goodput_mbps"]), pm) == i)
                    d, dl, dh = newcombe(k, len(v), kb, len(ref))
                    cells.append(f"{d:+.2f} [{dl:+.2f}, {dh:+.2f}]")
                else:
                    cells.append("-")
            lines.append("| " + " | ".join(cells) + " |")
        lines += _pairwise(levels)
        lines += ["", "Mechanism per level and mode of the level (medians over the mode's runs):", "",
                  "| factor | level | mode | runs | " + " | ".join(t for _, t in MECH) + " |",
                  "|" + "---|" * (4 + len(MECH))]
        for (factor, level), lr in levels.items():
            lm = find_modes([_f(r["goodput_mbps"]) for r in lr])
            groups = [(f"{m.value:.4g}", [r for r in lr if m.low <= _f(r["goodput_mbps"]) <= m.high]) for m in lm.by_value()]
            groups += [(f"outlier {o:.4g}", [r for r in lr if _f(r["goodput_mbps"]) == o]) for o in lm.outliers]
            for label, mr in groups:
                lines.append(f"| {factor} | {level} | {label} | {len(mr)} | " + " | ".join(_med(mr, k) for k, _ in MECH) + " |")
        lines.append("")
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    write_summary(Path(sys.argv[1]), Path(sys.argv[2]))
