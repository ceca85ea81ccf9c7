"""A scheduler league on real walks: every packet scheduler the engine has × the coupled
controllers (LIA, OLIA, BALIA) and uncoupled CUBIC, on the paired WiFi + cellular capacity
recordings of Aydin, Fund and Panwar (INFOCOM 2023 CNERT), for a bulk transfer, web-like
downloads (64 KB, 1 MB) and a 16 MB download.

No paper ranks schedulers on these recordings, so the league's numbers are results, not
claims. Its claims are the reality check: upstream Linux (the ``default`` scheduler with
CUBIC) on the kernel backend against the simulator, bulk on four recordings and the 16 MB
download on two, stored in ``scenarios/league-kernel/kernel.csv`` and judged by the
validation grid's 10 % target.

Sizes: ``--quick`` runs the first trial of each documented walk (5 recordings), one seed and
one download start; the report (``reproduce all``) the first two trials (10 recordings), one
seed and two download starts; ``--full`` every recording, three bulk seeds and five download
starts: the size the cluster engine is for (``reproduce league --full --engine dask``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab.experiments import _league_stats as st
from mptcplab.experiments.base import Claim, Context, Measured, Result, Tolerance, fmt, repeated, save_figure

if TYPE_CHECKING:
    import pandas as pd

NAME = "league"
TITLE = "Scheduler league on real WiFi + cellular walks"
SOURCE = ("Aydin, Fund, Panwar, INFOCOM 2023 CNERT: paired WiFi + cellular capacity recordings; "
          "kernel runs in scenarios/league-kernel/kernel.csv")
NEEDS_TRACES = True
#: The claims are the project's own (the simulator against the kernel on the league's walks), not
#: a seed paper's: the report counts them apart from the seeds' claims.
ORIGIN = "project"

#: The recordings, under the data directory.
TRACES = Path("traces") / "wifi-cellular-pairs"
#: Walks the data set documents (its README): path → where it goes.
DOCUMENTED = {7: "building side door to a bus stop (WiFi gets weaker)",
              8: "library reading room to outside (WiFi gets weaker)",
              11: "dining hall indoor walk (WiFi may vary)",
              12: "outdoor bench to inside the library (WiFi gets stronger)",
              13: "outdoors into a basement (cellular gets weaker)"}

#: Scheduler label → (scheduler, sched_params). minRTT three ways: plain, with the
#: out-of-tree stack's opportunistic retransmission (M1), and with penalisation too (M2).
SCHEDULERS: dict[str, tuple[str, dict[str, Any]]] = {
    "minRTT": ("minrtt", {}),
    "minRTT+OR": ("minrtt", {"minrtt": {"opportunistic_retransmission": True}}),
    "minRTT+OR+P": ("minrtt", {"minrtt": {"opportunistic_retransmission": True, "penalisation": True}}),
    "round-robin": ("roundrobin", {}),
    "redundant": ("redundant", {}),
    "BLEST": ("blest", {}),
    "ECF": ("ecf", {}),
    "DAPS": ("daps", {}),
    "OTIAS": ("otias", {}),
    "STMS": ("stms", {}),
    "default": ("default", {}),
}
CONTROLLERS = ("lia", "olia", "balia", "cubic")
#: Upstream Linux as it ships: the reference line of the per-walk figure.
UPSTREAM = "default / cubic"


@dataclass(frozen=True)
class Workload:
    name: str
    app: dict[str, Any]
    metric: str
    unit: str
    higher_is_better: bool


WORKLOADS = (
    Workload("bulk", {"kind": "bulk"}, "goodput", "Mbit/s", True),
    Workload("web 64 KB", {"kind": "download", "size": "64KB"}, "completion time", "s", False),
    Workload("web 1 MB", {"kind": "download", "size": "1MB"}, "completion time", "s", False),
    Workload("download 16 MB", {"kind": "download", "size": "16MB"}, "completion time", "s", False),
)


@dataclass(frozen=True)
class Size:
    name: str
    trials: int | None  # trials per documented path; None: every recording
    bulk_seeds: int
    starts: int  # download start times per walk


SIZES = {"quick": Size("quick", 1, 1, 1), "report": Size("report", 2, 1, 2), "full": Size("full", None, 3, 5)}

#: The reality check (scenarios/league-kernel/): grid scenario → (claim id, what it measures).
#: Bulk on four recordings, and the 16 MB download at the start of two of them.
KERNEL_CASES = {
    "walk-7_1": ("kernel_7_1", "walk 7_1, bulk: goodput against the kernel's"),
    "walk-8_5": ("kernel_8_5", "walk 8_5, bulk: goodput against the kernel's"),
    "walk-12_1": ("kernel_12_1", "walk 12_1, bulk: goodput against the kernel's"),
    "walk-13_2": ("kernel_13_2", "walk 13_2, bulk: goodput against the kernel's"),
    "walk-7_1-16mb": ("kernel_7_1_16mb", "walk 7_1, 16 MB: completion time against the kernel's"),
    "walk-8_5-16mb": ("kernel_8_5_16mb", "walk 8_5, 16 MB: completion time against the kernel's"),
}
KERNEL_GRID = Path("scenarios") / "league-kernel"
_KERNEL_TOL = Tolerance.absolute(10.0, "the validation grid's target: within 10 % of the kernel's median")
_SHARE_TOL = Tolerance.absolute(0.05, "the validation grid's target for subflow shares: within 0.05")
_KSRC = "scenarios/league-kernel/kernel.csv: upstream Linux (default scheduler, CUBIC) on the Linux backend"

#: Declared before any run: the simulator against the kernel on each case.
CLAIMS: tuple[Claim, ...] = tuple(
    c for cid, quantity in KERNEL_CASES.values() for c in (
        Claim(cid, "simulation", quantity, "%", 0.0, _KSRC, _KERNEL_TOL, printed="0 (the kernel's median)"),
        Claim(f"{cid}_share", "simulation", f"{quantity.split(':')[0]}: largest difference of the subflows' median "
              "shares", "fraction", 0.0, _KSRC, _SHARE_TOL, printed="0 (the kernel's shares)", headline=False),
    )
)


@dataclass(frozen=True)
class Walk:
    id: str
    path: int
    wifi: Path
    cellular: Path
    seconds: int  # the shorter recording's length: both cover it

    @property
    def documented(self) -> bool:
        return self.path in DOCUMENTED


def _seconds(f: Path) -> int:
    return sum(1 for line in f.read_text().splitlines() if line.strip() and not line.startswith("#"))


def walks(data: Path) -> list[Walk]:
    """Every paired recording in the data directory, by path then trial."""
    d = data / TRACES
    out = []
    for w in sorted(d.glob("*_wifi.csv")):
        wid = w.name.removesuffix("_wifi.csv")
        c = d / f"{wid}_cellular.csv"
        if not c.exists():
            continue
        path, trial = (int(x) for x in wid.split("_"))
        out.append(Walk(wid, path, w, c, min(_seconds(w), _seconds(c))))
    return sorted(out, key=lambda x: tuple(int(p) for p in x.id.split("_")))


def chosen(all_walks: Sequence[Walk], size: Size) -> list[Walk]:
    if size.trials is None:
        return list(all_walks)
    return [w for w in all_walks if w.documented and int(w.id.split("_")[1]) <= size.trials]


def _label(sched: str, cc: str) -> str:
    return f"{sched} / {cc}"


def points(ws: Sequence[Walk], size: Size) -> list[dict[str, Any]]:
    """Every run of the league: walk × workload × (seed or start time) × scheduler × controller.
    Bulk runs last the walk; download k of P starts at k/P of the walk and may run one walk's
    length (the recording repeats, as the data set's replay script loops it)."""
    pts = []
    for w in ws:
        for wl in WORKLOADS:
            if wl.app["kind"] == "bulk":
                runs = [(1 + s, 0.0, float(w.seconds)) for s in range(size.bulk_seeds)]
            else:
                runs = [(1 + k, k * w.seconds / size.starts, k * w.seconds / size.starts + w.seconds)
                        for k in range(size.starts)]
            for seed, start, end in runs:
                for sched, (s, params) in SCHEDULERS.items():
                    for cc in CONTROLLERS:
                        pts.append({
                            "name": w.id, "seed": seed, "duration": f"{fmt_s(end)}s",
                            "paths.wifi.down.rate_trace": str(w.wifi), "paths.cellular.down.rate_trace": str(w.cellular),
                            "connections.mptcp.start": f"{fmt_s(start)}s", "connections.mptcp.app": wl.app,
                            "connections.mptcp.scheduler": s, "connections.mptcp.sched_params": params,
                            "connections.mptcp.cc": cc, "description": _label(sched, cc),
                        })
    return pts


def fmt_s(x: float) -> str:
    """Seconds with millisecond resolution, no trailing zeros (a scenario duration)."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def run(ctx: Context) -> Result:
    from mptcplab.experiments._data import shared_dir

    size = SIZES["full" if ctx.full else "quick" if ctx.quick else "report"]
    data = ctx.data or shared_dir()
    all_walks = walks(data)
    ws = chosen(all_walks, size)
    base = _base(ws[0])
    pts = points(ws, size)
    df = repeated(ctx, base, pts, 1, f"league-{size.name}")
    table = _tidy(df, ws)
    out = ctx.path("")
    table.to_csv(out / "league_runs.csv", index=False)
    per_walk = {wl.name: _per_walk(table, wl) for wl in WORKLOADS}
    rankings = {wl.name: st.rank(per_walk[wl.name], wl.higher_is_better) for wl in WORKLOADS}
    comparisons = {wl.name: st.compare_top(per_walk[wl.name], rankings[wl.name], _contenders(rankings[wl.name]))
                   for wl in WORKLOADS}
    _ranking_frame(rankings).to_csv(out / "league_ranking.csv", index=False)
    kernel_df, measured = _kernel_check(ctx)
    tables = {"runs": out / "league_runs.csv", "ranking": out / "league_ranking.csv"}
    if kernel_df is not None:
        kernel_df.drop(columns=["kernel_shares", "sim_shares"]).to_csv(out / "kernel_check.csv", index=False)
        tables["kernel check"] = out / "kernel_check.csv"
    figures = save_figure(ctx, _per_walk_figure(per_walk, rankings, ws), "league_per_walk")
    # The heat map of every combination's mean is linked with the tables (the section shows
    # the per-walk figure).
    for p in save_figure(ctx, _heatmap(rankings), "league_means"):
        tables[f"means ({p.suffix[1:]})"] = p
    setup = _setup(size, ws, all_walks, len(pts))
    discussion = _discussion(table, rankings, comparisons, ws, kernel_df)
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion, tables, figures)


def _base_file() -> Path:
    from mptcplab.experiments._data import repo_root

    return repo_root(Path("scenarios") / "wifi-cellular-walk.toml") / "scenarios" / "wifi-cellular-walk.toml"


def _base(w: Walk) -> Any:
    """The league's base scenario, with its traces taken from the data directory in use (the
    file names them relative to the repository root, which need not hold them)."""
    import tomllib

    from mptcplab.scenario import load_scenario

    doc = tomllib.loads(_base_file().read_text())
    for p in doc["paths"]:
        p["down"]["rate_trace"] = str(w.wifi if p["name"] == "wifi" else w.cellular)
    return load_scenario(doc)


def _tidy(df: pd.DataFrame, ws: Sequence[Walk]) -> pd.DataFrame:
    """One row per run: walk, workload, combination, seed, start and the metric (a download
    that did not finish within one walk's length counts with that length: censored)."""
    import json

    import pandas as pd

    length = {w.id: w.seconds for w in ws}
    rows = []
    for r in df.to_dict("records"):
        app = json.loads(r["connections.mptcp.app"])
        wl = next(x for x in WORKLOADS if x.app == app)
        done = bool(r.get("conn.mptcp.completed", 1))
        if wl.app["kind"] == "bulk":
            value = r["conn.mptcp.goodput_bps"] / 1e6
        else:
            value = r["conn.mptcp.download_time_s"] if done else float(length[r["name"]])
        label = r["description"]
        rows.append({"walk": r["name"], "workload": wl.name, "combination": label,
                     "scheduler": label.split(" / ")[0], "controller": label.split(" / ")[1],
                     "seed": r["seed"], "start_s": float(str(r["connections.mptcp.start"]).rstrip("s")),
                     "value": value, "unit": wl.unit, "censored": wl.app["kind"] != "bulk" and not done,
                     "run_key": r["run_key"]})
    return pd.DataFrame(rows)


def _per_walk(table: pd.DataFrame, wl: Workload) -> dict[str, dict[str, float]]:
    sub = table[table["workload"] == wl.name]
    means = sub.groupby(["combination", "walk"])["value"].mean()
    out: dict[str, dict[str, float]] = {}
    for (combo, walk), v in means.items():
        out.setdefault(combo, {})[walk] = float(v)
    order = [_label(s, c) for s in SCHEDULERS for c in CONTROLLERS]
    return {k: out[k] for k in order if k in out}


def _contenders(ranking: Sequence[st.Ranked]) -> list[str]:
    """Rank 1 is compared with ranks 2–5 and with upstream Linux (if not among them)."""
    others = [r.label for r in ranking[1:5]]
    if ranking[0].label != UPSTREAM and UPSTREAM not in others:
        others.append(UPSTREAM)
    return others


def _ranking_frame(rankings: dict[str, list[st.Ranked]]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for wl in WORKLOADS:
        for k, r in enumerate(rankings[wl.name], 1):
            rows.append({"workload": wl.name, "rank": k, "combination": r.label, "mean": r.mean,
                         "ci95": r.ci95, "median": r.median, "walks": r.walks, "unit": wl.unit})
    return pd.DataFrame(rows)


def _kernel_check(ctx: Context) -> tuple[pd.DataFrame | None, dict[str, Measured]]:
    """The simulator against the stored kernel runs of scenarios/league-kernel/."""
    from mptcplab import validation as v
    from mptcplab.experiments._data import repo_root
    from mptcplab.errors import ConfigError

    try:
        with contextlib.chdir(repo_root(KERNEL_GRID)):
            df = v.validate(KERNEL_GRID, repeat=ctx.reps(5, 2), jobs=ctx.jobs)
    except ConfigError as e:
        why = f"no kernel runs: {getattr(e, 'message', str(e))}"
        return None, {c.id: Measured(None, n=0, not_testable=why) for c in CLAIMS}
    measured = {}
    for row in df.to_dict("records"):
        if row["scenario"] not in KERNEL_CASES:
            continue
        cid = KERNEL_CASES[row["scenario"]][0]
        if row["rel_diff"] is None or (isinstance(row["rel_diff"], float) and math.isnan(row["rel_diff"])):
            measured[cid] = Measured(None, n=0, not_testable=row["sim_error"] or "no simulator value")
        else:
            note = f"kernel {_metric(row, 'kernel_median')}, simulator {_metric(row, 'sim_median')}"
            measured[cid] = Measured(100 * row["rel_diff"], n=row["sim_runs"], note=note)
        if row["share_diff"] is not None:
            measured[f"{cid}_share"] = Measured(float(row["share_diff"]), n=row["sim_runs"],
                                                note=f"kernel {_shares(row['kernel_shares'])}, simulator "
                                                f"{_shares(row['sim_shares'])}")
    return df, measured


def _metric(row: dict[str, Any], key: str) -> str:
    """A validation row's median in its unit: Mbit/s of goodput or seconds of download."""
    v = row[key]
    return f"{fmt(v / 1e6)} Mbit/s" if row["metric"] == "goodput_bps" else f"{fmt(v)} s"


def _shares(s: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in s.items())


def _setup(size: Size, ws: Sequence[Walk], all_walks: Sequence[Walk], runs: int) -> str:
    undocumented = sorted({w.path for w in all_walks if not w.documented})
    lines = [
        "Every scheduler the engine has (minRTT, minRTT with opportunistic retransmission, minRTT with opportunistic "
        "retransmission and penalisation, round-robin, redundant, BLEST, ECF, DAPS, OTIAS, STMS, and upstream Linux's "
        "`default`) × LIA, OLIA, BALIA and uncoupled CUBIC, on paired WiFi + cellular recordings: each recording gives "
        "its path's capacity in the data direction, second by second (`scenarios/wifi-cellular-walk.toml` is one "
        "walk, with the assumptions below).",
        "",
        "Assumptions (the recordings carry capacities only):",
        "",
        "- base RTT 30 ms on both paths and 375 000 B drop-tail queues: the data set's reference experiment (netem "
        "30 ms on one direction of each path, `bfifo limit 375000` at each router); ACKs on an unshaped 100 Mbit/s "
        "direction; a second recorded as 0 B/s has no capacity (the reference replay sets 100 B/s there);",
        "- today's Linux stack (`stack = \"linux\"`: truesize buffer accounting, auto-tuned buffers, TSO deferral, "
        "host timing noise, MPTCP-level retransmission) under every scheduler, including the out-of-tree ones;",
        "- bulk: for the walk's length; downloads (a new connection, handshake included, until the last byte "
        "arrives): " + ("one start per walk, at its beginning" if size.starts == 1 else
                        f"{size.starts} starts per walk, at k/{size.starts} of its length (k = 0 … {size.starts - 1})")
        + "; a download not finished within one walk's length counts with that length (censored; the count is "
        "given below);",
        f"- {len(ws)} of the {len(all_walks)} recordings ({size.name} size: "
        + ("every recording" if size.trials is None else f"trial{'s' if size.trials > 1 else ''} 1"
           + (f"–{size.trials}" if size.trials > 1 else "") + " of each documented walk") + "), "
        + ("one bulk seed" if size.bulk_seeds == 1 else f"{size.bulk_seeds} bulk seeds") + f"; {runs} runs. "
        f"The data set holds {len(all_walks)} paired recordings, not 50; walks "
        f"{', '.join(str(p) for p in undocumented)} are not described by its README and are shorter (the shorter "
        "recording of each pair sets the walk's length: " + ", ".join(
            f"{w.id} {w.seconds} s" for w in all_walks if not w.documented) + ").",
        "",
        "Reality check (the claims): upstream Linux (default, CUBIC) on the kernel backend, bulk on four recordings "
        "and the 16 MB download at the start of two, 5 kernel runs each (`scenarios/league-kernel/kernel.csv`), "
        "against the simulator on the same files; each claim's value is simulator median / kernel median − 1 (%), "
        "judged by the validation grid's 10 % target.",
        "",
        "Statistics: a combination's value on a walk is the mean of its runs there; its league value the mean over "
        "walks with a 95 % Student-t interval over walks. Every combination runs the same walks, seeds and start "
        "times, so rank 1 is compared with ranks 2–5 and with upstream Linux by per-walk differences: a paired "
        "sign-flip permutation test (exact up to 16 walks), Holm-corrected over those comparisons. With n walks "
        f"the smallest two-sided p the test can give is 2/2^n: {st.fmt_p(2 / 2 ** len(ws))} for these {len(ws)} "
        "walks" + (", so no difference can be significant at 5 % in this size" if 2 / 2 ** len(ws) >= 0.05 else "")
        + ".",
    ]
    return "\n".join(lines)


def _ranking_md(wl: Workload, ranking: Sequence[st.Ranked], top: int = 8) -> list[str]:
    better = "higher" if wl.higher_is_better else "lower"
    lines = [f"**{wl.name}** ({wl.metric}, {wl.unit}, {better} is better):", "",
             f"| rank | scheduler / controller | mean ({wl.unit}) | 95 % CI | median over walks | walks |",
             "|---|---|---|---|---|---|"]
    shown = list(enumerate(ranking, 1))[:top]
    up = next((k, r) for k, r in enumerate(ranking, 1) if r.label == UPSTREAM)
    if up[0] > top:
        shown.append(up)
    for k, r in shown:
        ci = f"± {fmt(r.ci95)}" if r.ci95 is not None else "—"
        lines.append(f"| {k} | {r.label} | {fmt(r.mean)} | {ci} | {fmt(r.median)} | {r.walks} |")
    last = ranking[-1]
    lines.append(f"| {len(ranking)} (last) | {last.label} | {fmt(last.mean)} | "
                 f"{'± ' + fmt(last.ci95) if last.ci95 is not None else '—'} | {fmt(last.median)} | {last.walks} |")
    return lines


def _significance(wl: Workload, comps: Sequence[st.Comparison]) -> str:
    if not comps:
        return ""
    best = comps[0].best
    parts = []
    for c in comps:
        word = "significant" if c.significant else "not significant"
        ci = f" (95 % CI ± {fmt(c.ci95)})" if c.ci95 is not None else ""
        parts.append(f"{c.other}: {fmt(c.diff)} {wl.unit}{ci}, p = {st.fmt_p(c.p_holm)} Holm, {word}")
    tied = [c.other for c in comps if not c.significant]
    head = (f"{best} is ahead of every compared combination at the 5 % level" if not tied else
            f"{best} cannot be told apart at the 5 % level from {', '.join(tied)}")
    return f"{head} (rank 1 − other, per walk: " + "; ".join(parts) + ")."


def _discussion(table: pd.DataFrame, rankings: dict[str, list[st.Ranked]], comps: dict[str, list[st.Comparison]],
                ws: Sequence[Walk], kernel_df: pd.DataFrame | None) -> str:
    def place(wl: Workload) -> str:
        r = rankings[wl.name]
        up = next(k for k, x in enumerate(r, 1) if x.label == UPSTREAM)
        m = len(comps[wl.name])
        tied = sum(not c.significant for c in comps[wl.name])
        alone = (f"significantly ahead of all {m} compared" if not tied else
                 f"not significantly ahead of {tied} of the {m} compared")
        return (f"{wl.name}: {r[0].label} ({fmt(r[0].mean)} {wl.unit}; {alone}), upstream Linux {up} of {len(r)} "
                f"({fmt(next(x.mean for x in r if x.label == UPSTREAM))} {wl.unit})")

    lines = [f"Rank 1 per workload over {len(ws)} walks: " + "; ".join(place(wl) for wl in WORKLOADS)
             + ". The tables, the paired comparisons and the reality check follow.", ""]
    censored = int(table["censored"].sum())
    downloads = int((table["workload"] != "bulk").sum())
    for wl in WORKLOADS:
        lines += _ranking_md(wl, rankings[wl.name]) + ["", _significance(wl, comps[wl.name]), ""]
    lines.append(f"Downloads that did not finish within one walk's length (censored at it): {censored} of {downloads}.")
    if kernel_df is not None:
        lines += ["", "Reality check (upstream Linux on the kernel backend): " + "; ".join(
            f"{r['scenario']}: kernel {_metric(r, 'kernel_median')}, simulator {_metric(r, 'sim_median')} "
            f"({100 * r['rel_diff']:+.1f} %)" for r in kernel_df.to_dict("records") if r["sim_median"] is not None)
            + f" (kernel {', '.join(kernel_df.attrs.get('kernel', []))})."]
    return "\n".join(lines)


def _per_walk_figure(per_walk: dict[str, dict[str, dict[str, float]]], rankings: dict[str, list[st.Ranked]],
                     ws: Sequence[Walk]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 5.6), constrained_layout=True)
    ids = [w.id for w in ws]
    x = list(range(len(ids)))
    for ax, wl in zip(axes.flat, WORKLOADS, strict=True):
        pw = per_walk[wl.name]
        shown = [r.label for r in rankings[wl.name][:3]]
        if UPSTREAM not in shown:
            shown.append(UPSTREAM)
        for k, label in enumerate(shown):
            ys = [pw[label].get(w, math.nan) for w in ids]
            style = {"color": "black", "linestyle": "--", "marker": "x"} if label == UPSTREAM else {"marker": "o"}
            rank = next(i for i, r in enumerate(rankings[wl.name], 1) if r.label == label)
            ax.plot(x, ys, label=f"{rank}. {label}", markersize=4, linewidth=1, **style)
        ax.set_title(wl.name)
        ax.set_ylabel(f"{wl.metric} ({wl.unit})")
        if not wl.higher_is_better:
            ax.set_yscale("log")
        step = max(1, math.ceil(len(ids) / 15))
        ax.set_xticks(x[::step], ids[::step], rotation=60, fontsize=7)
        ax.set_xlabel("walk (path_trial)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle("Per walk: the top three and upstream Linux (default / cubic)")
    return fig


def _heatmap(rankings: dict[str, list[st.Ranked]]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 4.6), constrained_layout=True)
    scheds = list(SCHEDULERS)
    for ax, wl in zip(axes, WORKLOADS, strict=True):
        mean = {r.label: r.mean for r in rankings[wl.name]}
        grid = [[mean.get(_label(s, c), math.nan) for c in CONTROLLERS] for s in scheds]
        im = ax.imshow(grid, aspect="auto", cmap="viridis" if wl.higher_is_better else "viridis_r")
        for i, row in enumerate(grid):
            for j, val in enumerate(row):
                ax.text(j, i, fmt(val), ha="center", va="center", fontsize=6, color="white")
        ax.set_xticks(range(len(CONTROLLERS)), CONTROLLERS, fontsize=7)
        ax.set_yticks(range(len(scheds)), scheds if ax is axes[0] else [""] * len(scheds), fontsize=7)
        ax.set_title(f"{wl.name} ({wl.unit})", fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle("Mean over walks per scheduler and controller")
    return fig
