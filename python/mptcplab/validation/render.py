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
from mptcplab.validation.compare import TARGETS, summary_lines
from mptcplab.validation.grid import _shares_text
from mptcplab.validation.modes import MODE_MIN_GAP

if TYPE_CHECKING:
    import pandas as pd


def _fmt_value(metric: str, v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v / 1e6:.2f}" if metric == "goodput_bps" else f"{v:.3f}"


UNITS = {"goodput_bps": "goodput (Mbit/s)", "download_time_s": "download time (s)", "chunk_time_s": "mean chunk time (s)"}


def table_rows(df: pd.DataFrame) -> list[list[str]]:
    """The per-scenario table as text cells (header first)."""
    head = ["scenario", "metric", "kernel median (min-max), n", "kernel modes (share)", "simulator median (min-max)",
            "simulator modes (share)", "difference to the nearest kernel mode", "agrees", "kernel against itself", "shares kernel / simulator"]
    rows = [head]
    for r in df.to_dict("records"):
        m = r["metric"]
        k = (f"{_fmt_value(m, r['kernel_median'])} ({_fmt_value(m, r['kernel_min'])}-{_fmt_value(m, r['kernel_max'])}), "
             f"{r['kernel_runs']}" + (f" of {r['kernel_runs_needed']}" if r["kernel_runs"] < r["kernel_runs_needed"] else ""))
        km = _fmt_modes(m, r["kernel_modes"], r.get("kernel_outliers") or [])
        if r["sim_error"]:
            s, sm, diff = "refused (" + r["sim_error"].split(" (")[0].split(";")[0] + ")", "-", "-"
        else:
            s = f"{_fmt_value(m, r['sim_median'])} ({_fmt_value(m, r['sim_min'])}-{_fmt_value(m, r['sim_max'])})"
            sm = _fmt_modes(m, r["sim_modes"], [])
            near = r["nearest_mode_diff"]
            diff = "-" if near is None or math.isnan(near) else f"{100 * near:+.1f} %"
        if len(r["kernel_shares"]) > 1:
            sim_share = r["sim_shares"] or {}
            sh = " ".join(f"{p} {r['kernel_shares'][p]:.2f}/" + (f"{sim_share[p]:.2f}" if p in sim_share else "-")
                          for p in r["kernel_shares"])
        else:
            sh = "single path"
        itself = r.get("kernel_self_resampled")
        own = "-" if itself is None or math.isnan(itself) else f"{itself:.2f}"
        rows.append([r["scenario"], UNITS[m], k, km, s, sm, diff, "yes" if r["agrees"] else "no", own, sh])
    return rows


def _fmt_mechanism(md: dict[str, Any], rwnd: bool = True) -> str:
    """A mode's operating point in one phrase (medians over its runs); ``rwnd``: with the
    receive-window-limited time."""
    if not md.get("slow_path"):
        return "single path"
    parts = [f"slow subflow {md['slow_path']} carries {md['slow_share']:.2f} of the bytes"]
    for key, label, scale, unit in (("slow_cwnd_bytes", "cwnd", 1e-3, " kB"), ("slow_in_flight_bytes", "in flight", 1e-3, " kB"),
                                    ("slow_srtt_s", "srtt", 1e3, " ms"), ("rwnd_limited_s", "receive-window-limited", 1, " s")):
        if key == "rwnd_limited_s" and not rwnd:
            continue
        if md.get(key) is not None:
            parts.append(f"{label} {md[key] * scale:.1f}{unit}")
    return ", ".join(parts)


def _fmt_modes(metric: str, modes: list[dict[str, Any]], outliers: list[float]) -> str:
    """One mode: "one"; several: each mode's value and share, lowest first; outliers after."""
    text = "one" if len(modes) == 1 else " / ".join(f"{_fmt_value(metric, md['value'])} ({md['share']:.0%})" for md in modes)
    if outliers:
        text += "; outlier " + ", ".join(_fmt_value(metric, v) for v in outliers)
    return text


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
    csv = df.attrs.get("kernel_csv", "scenarios/validation/kernel.csv")
    out.write(f"- kernel data: `{csv}`, measured with `mptcplab validate --kernel`; each row holds the kernel and "
              "the command that repeats the run\n")
    out.write("- metric per scenario: goodput for bulk transfers, download time for downloads, mean chunk time for "
              "periodic applications; difference = simulator median / the nearest kernel mode's value - 1\n")
    out.write(f"- modes, by a rule declared before the runs: sorted, the runs split at every gap above "
              f"{MODE_MIN_GAP:.0%} of the median that also exceeds the spread of the group on each side (cuts "
              "failing that are dropped, smallest gap first); a group of two or more runs is a mode, a group of one "
              "an outlier (`mptcplab.validation.modes`); the simulator's seeds are split by the same rule\n")
    out.write("- kernel runs: 10 per scenario, 20 where the first 10 spread by more than 2 % of their median; only "
              "runs whose link emulators held the links' timing count (the others are listed)\n")
    out.write("- targets, declared before any run: >= 90 % of scenarios agree by distribution (a unimodal kernel: "
              "medians within 10 %; a multi-modal kernel: every mode holding >= 20 % of the runs matched within 10 % by "
              "a simulator mode whose share of the seeds differs by at most 25 points; runs scattered into modes that hold "
              "less than half of them in modes of >= 20 %: medians within 10 %), 100 % within 25 % of the "
              "nearest kernel mode, subflow shares within 0.05 on >= 90 % of the multipath scenarios (a scenario the "
              "simulator cannot run counts as a miss)\n")
    out.write("- kernel against itself: the fraction of 400 draws in which the simulator's number of runs, drawn "
              "with replacement from the kernel's own, agree with the kernel's runs by the same rule (what a simulator "
              "reproducing the kernel's distribution exactly would score; `kernel_self_agreement`)\n")
    out.write("- shares: each subflow's median share of the bytes on both backends; a scenario agrees when no "
              "subflow's shares differ by more than 0.05\n")
    out.write("- the machine is shared: each kernel run's 1-min load average at its start, the CPU's busy fraction "
              "over it, its emulators' scheduling and lateness (median, 99th percentile, maximum) are in the kernel "
              "CSV; runs are interleaved (one run of every scenario that needs one per round)\n\n")
    out.write("## Summary\n\n")
    for line in summary_lines(df):
        out.write(f"- {line}\n")
    out.write("\n## Per scenario\n\n")
    out.write("| " + " | ".join(rows[0]) + " |\n")
    out.write("|" + "---|" * len(rows[0]) + "\n")
    for r in rows[1:]:
        out.write("| " + " | ".join(c.replace("|", "/") for c in r) + " |\n")
    multi = [r for r in df.to_dict("records") if len(r["kernel_modes"]) > 1]
    if multi:
        out.write("\n## Multi-modal scenarios\n\n")
        for r in multi:
            out.write(f"- `{r['scenario']}`: {r['agreement']}\n")
            for who, mechs in (("kernel", r["kernel_mode_mechanisms"]), ("simulator", r["sim_mode_mechanisms"])):
                for md in mechs:
                    out.write(f"  - {who} mode {_fmt_value(r['metric'], md['value'])} ({md['share_of_runs']:.0%} of "
                              f"the runs): {_fmt_mechanism(md, rwnd=who == 'simulator')}\n")
        out.write("\nPer mode: medians over its runs after the warm-up; the slow subflow is the one with the largest "
                  "smoothed RTT. Receive-window-limited time is shown for the simulator only: the kernel's TCP_INFO "
                  "counts a subflow's own TCP window, not the MPTCP connection's, so it reads 0 on these runs.\n")
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
    for col in ("kernel_modes", "sim_modes"):
        flat[col] = [" / ".join(f"{md['value']:.6g}:{md['share']:.3f}" for md in v) for v in flat[col]]
    flat = flat.drop(columns=["kernel_mode_mechanisms", "sim_mode_mechanisms"])
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
        t.add_column(col, justify="left" if k in (0, 1, 3, 5, 7, 9) else "right", no_wrap=k == 0)
    for r in rows[1:]:
        t.add_row(*[Text(c) for c in r])  # plain text: a scenario's name is never console markup
    console.print(t)
    for line in summary_lines(df):
        console.print(line, highlight=False, markup=False)
