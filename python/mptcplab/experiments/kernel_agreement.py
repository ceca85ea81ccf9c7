"""Agreement with the Linux kernel: the simulator over the validation grid
(``scenarios/validation/``, every scenario ``stack = "linux"``) against the kernel runs stored
in ``scenarios/validation/kernel.csv`` (10 per scenario, 20 where the first 10 spread by more
than 2 %, measured with ``mptcplab validate --kernel`` on the Linux backend). The numbers and the
targets are ``mptcplab.validation``'s; this module states the targets as claims, draws the
figure and writes the report section.

The claims are the three targets declared in the validation targets before any run (at least
90 % of the scenarios agree by distribution: a unimodal kernel's median within 10 %, every
mode of a multi-modal kernel holding at least 20 % of the runs matched within 10 % by a
simulator mode with a share within 25 points; all within 25 % of the nearest kernel mode;
subflow shares within 0.05 on at least 90 % of the multipath scenarios); each is judged by its
own declared threshold. Quick mode runs the simulator with 4 seeds per scenario instead of 20
(the kernel side is stored, never re-run here).
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

from mptcplab.experiments.base import Claim, Context, Measured, Result, Tolerance, save_figure
from mptcplab.validation import TARGETS

if TYPE_CHECKING:
    import pandas as pd

NAME = "kernel-agreement"
TITLE = "Agreement with the Linux kernel"
SOURCE = "scenarios/validation/kernel.csv: the same scenarios on the Linux backend"
#: The claims are the project's own (the simulator against the kernel), not a seed paper's: the
#: report counts them apart from the seeds' claims.
ORIGIN = "project"

REGIME_COLOURS = {"rcvbuf": "tab:blue", "sndbuf": "tab:orange", "hetero": "tab:green", "loss": "tab:red",
                  "trace": "tab:purple", "tcp": "tab:brown", "periodic": "tab:pink", "download": "tab:gray",
                  "bbr": "tab:olive"}

_TARGETS_SOURCE = "validation targets (mptcplab.validation.TARGETS), stored kernel runs in scenarios/validation/kernel.csv"
_WHY = "declared in the validation targets before any run"


def _pct(x: float) -> str:
    return f"{100 * x:g} %"


def _claim(key: str, quantity: str, printed: str) -> Claim:
    _, need = TARGETS[key]
    return Claim(key, "simulation", quantity, "%", 100 * need, _TARGETS_SOURCE, Tolerance.at_least(100 * need, _WHY),
                 printed=printed)


#: The validation targets, declared before any run: the share of the scenarios (%) that must
#: meet each tolerance.
CLAIMS: tuple[Claim, ...] = (
    _claim("within_10", f"scenarios where the simulator agrees with the kernel by distribution (each kernel mode "
           f"holding ≥ 20 % of the runs matched within {_pct(TARGETS['within_10'][0])})",
           f"≥ {_pct(TARGETS['within_10'][1])} of the scenarios"),
    _claim("within_25", f"scenarios whose simulator median is within {_pct(TARGETS['within_25'][0])} of the nearest "
           "kernel mode", f"{_pct(TARGETS['within_25'][1])} of the scenarios"),
    _claim("shares", f"multipath scenarios whose subflow shares are within {TARGETS['shares'][0]:g} of the kernel's",
           f"≥ {_pct(TARGETS['shares'][1])} of the multipath scenarios"),
)


def run(ctx: Context) -> Result:
    from mptcplab import validation as v
    from mptcplab.experiments._data import repo_root

    # As many seeds as the kernel has runs where they spread (20), so that the simulator's modes
    # and their shares are estimated as well as the kernel's: with 10, the kernel's own runs in
    # the simulator's place meet the agreement target only about one time in three
    # (``kernel_self_agreement``; docs/validation-findings.md, "The rule's power").
    repeat = ctx.reps(20, 4)
    # Scenario files name their traces relative to the repository's root (the working
    # directory if it holds the grid, else the source tree); the outputs are written after
    # returning to the working directory.
    with contextlib.chdir(repo_root(v.GRID_DIR)):
        df = v.validate(v.GRID_DIR, repeat=repeat, jobs=ctx.jobs)
    out = ctx.path("")
    v.write_out(df, out)
    tables = {"validate.csv": out / "validate.csv", "validate.json": out / "validate.json"}
    figures = save_figure(ctx, _figure(df), "sim_vs_kernel")
    counts = v.target_counts(df)
    measured = {}
    for key, (n, total) in counts.items():
        if total == 0:
            measured[key] = Measured(None, n=0, not_testable="no scenario of the grid is counted by this target")
        else:
            measured[key] = Measured(100 * n / total, n=total, note=f"{n} of {total} scenarios")
    return Result(NAME, TITLE, SOURCE, _setup(df, repeat, ctx.quick), CLAIMS, measured, _discussion(df, counts),
                  tables, figures)


def _setup(df: pd.DataFrame, repeat: int, quick: bool) -> str:
    from mptcplab import validation as v

    lines = [
        f"The simulator over the validation grid ({len(df)} two-host scenarios in `scenarios/validation/`, each "
        "`stack = \"linux\"`: receive- and send-buffer limits, fixed and auto-tuned, heterogeneous paths with "
        "small and bloated queues, random loss, a cellular trace, single-path reno and cubic, periodic "
        "applications and downloads, bbr) against the Linux kernel running the same files on the Linux "
        "backend. Metric per scenario: goodput for bulk transfers, download time for downloads, mean chunk "
        "time for periodic applications. The runs of each backend are split into modes by a rule declared "
        "before the runs (`mptcplab.validation.modes`); a unimodal kernel agrees when the medians are within "
        "10 %, a multi-modal one when every kernel mode holding ≥ 20 % of the runs is matched within 10 % by a "
        "simulator mode whose share of the seeds differs by at most 25 points (runs scattered so that less "
        "than half sit in modes of ≥ 20 % are judged by the median); difference = simulator median / "
        "the nearest kernel mode − 1. Subflow shares: "
        "each subflow's median share of the bytes on both backends; a scenario agrees when no subflow's shares "
        "differ by more than 0.05. A scenario the simulator refuses counts as a miss.",
        "",
        f"Simulator: {repeat} seeds per scenario" + (" (quick mode; the full report uses 20)" if quick else "")
        + ". Kernel: the stored runs, not re-measured here.",
        "",
    ]
    lines += [f"- {line}" for line in v.header_lines(df)]
    return "\n".join(lines)


def _num(x: Any) -> float | None:
    if x is None:
        return None
    f = float(x)
    return None if math.isnan(f) else f


def _discussion(df: pd.DataFrame, counts: dict[str, tuple[int, int]]) -> str:
    from mptcplab import validation as v

    lines = ["Against the declared targets: " + "; ".join(v.summary_lines(df)[:3]) + "."]
    extra = v.summary_lines(df)[3:]
    if extra:
        lines += [""] + [f"- {line}" for line in extra]
    rows = v.table_rows(df)
    misses = []
    for rec, cells in zip(df.to_dict("records"), rows[1:], strict=True):
        share = _num(rec["share_diff"])
        far = rec["sim_error"] or not rec["agrees"]
        if far or (share is not None and share > TARGETS["shares"][0]):
            misses.append(cells)
    n10, total = counts["within_10"]
    lines += ["", f"The {len(misses)} scenarios that do not agree by distribution or whose subflow shares are off by "
              f"more than {TARGETS['shares'][0]:g} ({total - n10} not agreeing by distribution); every "
              "scenario's numbers are in validate.csv, the agreeing ones in the figure:"]
    if misses:
        lines += ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in misses]
    lines += ["", "Figure: median goodput of every scenario, simulator against kernel (log-log; bars: min–max of "
              "the runs; the line y = x and the ±10 % band; the scenarios that do not agree by distribution named); scenarios the "
              "simulator refuses are not drawn."]
    return "\n".join(lines)


def _figure(df: pd.DataFrame) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

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
        if not r["agrees"]:
            ax.annotate(r["scenario"], (x, y), fontsize=6, xytext=(4, -2), textcoords="offset points", color="0.2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    # Plain numbers on a 1-2-5 grid instead of powers of ten only.
    ticks = [m * 10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) for m in (1, 2, 5)]
    ticks = [t for t in ticks if lo <= t <= hi]
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
        axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda t, _: f"{t:g}"))
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("Linux kernel: median goodput (Mbit/s)")
    ax.set_ylabel("simulator: median goodput (Mbit/s)")
    ax.set_title("Simulator vs Linux kernel, one point per scenario", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", title="regime (scenario prefix)", title_fontsize=7)
    fig.tight_layout()
    return fig

