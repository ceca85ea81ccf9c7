"""The validation's results as the terminal table, ``VALIDATION.md`` and ``validate.csv`` /
``validate.json``. Part of :mod:`mptcplab.validation`.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab import _core
from mptcplab.validation.compare import BIMODAL_MIN_GAP, TARGETS, summary_lines
from mptcplab.validation.grid import _shares_text

if TYPE_CHECKING:
    import pandas as pd


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
    from rich.text import Text

    console = Console(file=file or sys.stdout, width=200)
    for line in header_lines(df):
        console.print(line, highlight=False, markup=False)
    rows = table_rows(df)
    t = Table(box=box.SIMPLE_HEAD)
    for k, col in enumerate(rows[0]):
        t.add_column(col, justify="left" if k in (0, 1, 5, 6) else "right", no_wrap=k == 0)
    for r in rows[1:]:
        t.add_row(*[Text(c) for c in r])  # plain text: a scenario's name is never console markup
    console.print(t)
    for line in summary_lines(df):
        console.print(line, highlight=False, markup=False)
