"""Agreement with the Linux kernel: the simulator over the validation grid
(``scenarios/validation/``, every scenario ``stack = "linux"``) against the kernel runs stored
in ``scenarios/validation/kernel.csv`` (five per scenario, measured with ``mptcplab validate
--kernel`` on the Linux backend). The numbers and the targets are :mod:`mptcplab.validation`'s;
this module draws them and writes the report section.

Quick mode runs the simulator with 2 seeds per scenario instead of 5 (the kernel side is
stored, never re-run here). The verdict follows the targets declared before any run:
``reproduced`` when all three are met, ``partly reproduced`` when one or two are, ``not
reproduced`` otherwise.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mptcplab.experiments.base import Comparison, Context, Result

if TYPE_CHECKING:
    import pandas as pd

NAME = "kernel-agreement"
TITLE = "Agreement with the Linux kernel"
SOURCE = "scenarios/validation/kernel.csv: the same scenarios on the Linux backend"

REGIME_COLOURS = {"rcvbuf": "tab:blue", "sndbuf": "tab:orange", "hetero": "tab:green", "loss": "tab:red",
                  "trace": "tab:purple", "tcp": "tab:brown", "periodic": "tab:pink", "download": "tab:gray",
                  "bbr": "tab:olive"}


@dataclass
class AgreementResult(Result):
    """A result whose section is the validation table, not a paper comparison."""

    section: str = ""

    def markdown(self) -> str:
        return self.section


def run(ctx: Context) -> Result:
    from mptcplab import validation as v

    repeat = ctx.reps(5, 2)
    from mptcplab.experiments._data import repo_root

    # Scenario files name their traces relative to the repository's root (the working
    # directory if it holds the grid, else the source tree); the outputs are written after
    # returning to the working directory.
    with contextlib.chdir(repo_root(v.GRID_DIR)):
        df = v.validate(v.GRID_DIR, repeat=repeat, jobs=ctx.jobs)
    out = ctx.path("")
    tables = {"validate.csv": out / "validate.csv", "validate.json": out / "validate.json"}
    v.write_out(df, out)
    figures = _figure(df, out)
    summary = v.summary_lines(df)
    met = sum(1 for line in summary[:3] if line.endswith(": met)"))
    verdict = "reproduced" if met == 3 else ("partly reproduced" if met else "not reproduced")
    reason = f"{met} of the 3 targets declared before any run are met: " + "; ".join(summary[:3]) + "."
    comparisons = [
        Comparison(quantity=r["scenario"], unit=v.UNITS[r["metric"]], paper=_num(r["kernel_median"]),
                   ours=_num(r["sim_median"]), n=int(r["sim_runs"]),
                   note="simulator refuses: " + r["sim_error"] if r["sim_error"] else
                   (f"{100 * r['rel_diff']:+.1f} %" if _num(r["rel_diff"]) is not None else ""))
        for r in df.to_dict("records")
    ]
    section = _section(df, repeat, ctx.quick, summary, verdict, reason, figures)
    return AgreementResult(name=NAME, title=TITLE, source=SOURCE, setup="", comparisons=comparisons, verdict=verdict,
                           reason=reason, tables=tables, figures=figures, section=section)


def _num(x: object) -> float | None:
    if x is None:
        return None
    f = float(x)  # type: ignore[arg-type]
    return None if math.isnan(f) else f


def _section(df: pd.DataFrame, repeat: int, quick: bool, summary: list[str], verdict: str, reason: str,
             figures: list[Path]) -> str:
    from mptcplab import validation as v

    rows = v.table_rows(df)
    lines = [f"## {TITLE}", "", f"*Source: {SOURCE}.*", ""]
    lines += [
        f"The simulator over the validation grid ({len(df)} two-host scenarios in `scenarios/validation/`, each "
        "`stack = \"linux\"`: receive- and send-buffer limits, fixed and auto-tuned, heterogeneous paths with "
        "small and bloated queues, random loss, a cellular trace, single-path reno and cubic, periodic "
        "applications and downloads, bbr) against the Linux kernel running the same files on the Linux "
        "backend. Metric per scenario: goodput for bulk transfers, download time for downloads, mean chunk "
        "time for periodic applications; difference = simulator median / kernel median − 1.",
        "",
        f"Simulator: {repeat} seeds per scenario" + (" (quick mode; `mptcplab validate` uses 5)" if quick else "") + ". "
        "Kernel: the stored runs, not re-measured here.",
        "",
    ]
    lines += [f"- {line}" for line in v.header_lines(df)]
    lines += ["", "Targets declared before any run: ≥ 90 % of the scenarios within 10 %, all within 25 %, "
              "subflow shares within 0.05 on ≥ 90 % of the multipath scenarios.", ""]
    lines += [f"- {line}" for line in summary]
    lines += ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in rows[1:]]
    if figures:
        lines += ["", "Figure: median goodput of every scenario, simulator against kernel (log-log; bars: min–max "
                  "of the runs; the line y = x and the ±10 % band); scenarios the simulator refuses are not drawn."]
    lines += ["", f"**Verdict: {verdict}.** {reason}", ""]
    return "\n".join(lines)


def _figure(df: pd.DataFrame, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = df[df["sim_goodput_bps"].notna()]
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    if len(d):
        lo = 0.7 * min(d["kernel_goodput_bps"].min(), d["sim_goodput_bps"].min()) / 1e6
        hi = 1.4 * max(d["kernel_goodput_bps"].max(), d["sim_goodput_bps"].max()) / 1e6
    else:
        lo, hi = 0.1, 100.0
    xs = [lo, hi]
    ax.fill_between(xs, [x * 0.9 for x in xs], [x * 1.1 for x in xs], color="0.85", label="±10 %")
    ax.plot(xs, xs, color="0.3", lw=1, label="y = x")
    seen = set()
    for r in d.to_dict("records"):
        key = r["scenario"].split("-")[0]
        colour = REGIME_COLOURS.get(key, "black")
        x, y = r["kernel_goodput_bps"] / 1e6, r["sim_goodput_bps"] / 1e6
        ax.errorbar(x, y, xerr=[[x - r["kernel_goodput_min"] / 1e6], [r["kernel_goodput_max"] / 1e6 - x]],
                    yerr=[[y - r["sim_goodput_min"] / 1e6], [r["sim_goodput_max"] / 1e6 - y]], fmt="none",
                    ecolor=colour, elinewidth=0.7, alpha=0.6, zorder=2)
        ax.scatter(x, y, color=colour, s=28, zorder=3, label=key if key not in seen else None)
        seen.add(key)
        ax.annotate(r["scenario"], (r["kernel_goodput_bps"] / 1e6, r["sim_goodput_bps"] / 1e6), fontsize=5.5,
                    xytext=(3, 2), textcoords="offset points", color="0.25")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("Linux kernel: median goodput (Mbit/s)")
    ax.set_ylabel("simulator: median goodput (Mbit/s)")
    ax.set_title("Simulator vs Linux kernel, one point per scenario", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    paths = []
    for ext in ("png", "svg"):
        p = out / f"sim_vs_kernel.{ext}"
        fig.savefig(p, dpi=130)
        paths.append(p)
    plt.close(fig)
    return paths
