"""What a reproduction declares, receives and returns: claims with tolerances fixed before the
run, the measured values, and verdicts computed from the two.

A reproduction module declares its claims at import time (``CLAIMS``), before anything runs:
for each, the paper's value and where it is printed, the quantity, whether it is a **model**
claim (the paper's equations evaluated) or a **simulation** claim (the engine's runs), and a
numeric :class:`Tolerance` with the reason for its width. ``run`` then returns one
:class:`Measured` per claim. Nothing in a reproduction writes a verdict: :func:`claim_verdict`
compares each measured value with its declared tolerance, and :func:`section_verdict` counts.

The parts: claims, tolerances and verdicts (with the rules above) in :mod:`._verdicts`, the
numbers' formatting and confidence intervals in :mod:`._numbers`; here what a reproduction
receives and returns (:class:`Context`, :class:`Result`) and the helpers its runs and figures
share. A reproduction imports all of it from here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab.experiments._numbers import and_list, fmt, fmt_value, mean_ci95  # noqa: F401 (and_list, fmt_value: for the reproductions)
from mptcplab.experiments._verdicts import (
    ALTERNATIVE, CALIBRATION, CLAIM_VERDICTS, DEFAULT_TOLERANCE, INCONSISTENT, KINDS, NOT_REPRODUCED, NOT_TESTABLE,
    REPRODUCED, Claim, ClaimRow, Measured, SectionCount, Tolerance, claim_verdict, measured_mean, section_verdict,
    within_tolerance,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ALTERNATIVE",
    "CALIBRATION",
    "CLAIM_VERDICTS",
    "DEFAULT_TOLERANCE",
    "INCONSISTENT",
    "KINDS",
    "NOT_REPRODUCED",
    "NOT_TESTABLE",
    "ORIGINS",
    "REPRODUCED",
    "Claim",
    "ClaimRow",
    "Context",
    "Measured",
    "Result",
    "SectionCount",
    "Tolerance",
    "claim_verdict",
    "fmt",
    "mean_ci95",
    "measured_mean",
    "merge_into",
    "overlapping_tick_labels",
    "repeated",
    "save_figure",
    "section_verdict",
    "within_tolerance",
]


#: Whose claims a reproduction checks: a seed paper's, or the project's own (see :class:`Result`).
ORIGINS = ("seed", "project")


@dataclass
class Context:
    """How to run: where to write, how many repetitions, parallel jobs, progress reports."""

    out: Path
    quick: bool = False
    jobs: int = 1
    #: Called with (done, total) as the reproduction's runs finish.
    progress: Callable[[int, int], None] | None = None
    #: The data directory (``reproduce --data``); None looks it up (see ``_data.shared_dir``).
    data: Path | None = None
    #: The sweep engine of the reproductions' runs (``reproduce --engine``, ``--address``):
    #: worker processes here, or a Dask cluster (see :mod:`mptcplab.cluster`).
    engine: str = "local"
    address: str | None = None
    #: ``reproduce --full``: a reproduction with a size beyond the report's (the scheduler
    #: league) runs it.
    full: bool = False
    #: Tick labels that overlap in a saved figure (``figure: axis: "a" / "b"``), filled by
    #: :func:`save_figure`; the report lists them and the tests require none.
    tick_overlaps: list[str] = field(default_factory=list)

    def reps(self, full: int, quick: int) -> int:
        """Repetitions: the paper's count, or the quick one."""
        return quick if self.quick else full

    def path(self, name: str) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        return self.out / name


@dataclass
class Result:
    """A reproduction's outcome: the declared claims and what the runs gave for each, the
    discussion (prose written from the numbers), data files and figures.

    ``assumptions`` = (key, title, text) is a block of assumptions shared by several
    reproductions of one paper; the report prints it once and links to it.

    ``origin`` says whose claims these are: ``seed`` (a seed paper's figures, tables and text)
    or ``project`` (the project's own checks, such as the simulator against the Linux kernel);
    the report totals the two apart. A reproduction module declares ``ORIGIN = "project"`` for
    the latter, and the report sets the field from it.
    """

    name: str
    title: str
    source: str
    setup: str
    claims: Sequence[Claim]
    measured: dict[str, Measured]
    discussion: str
    tables: dict[str, Path] = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)
    runtime_s: float = 0.0
    assumptions: tuple[str, str, str] | None = None
    tick_overlaps: list[str] = field(default_factory=list)
    origin: str = "seed"

    def __post_init__(self) -> None:
        if self.origin not in ORIGINS:
            raise ValueError(f"{self.name}: origin {self.origin!r} is not one of {ORIGINS}")
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{self.name}: duplicate claim ids {sorted(i for i in ids if ids.count(i) > 1)}")
        unknown = set(self.measured) - set(ids)
        if unknown:
            raise ValueError(f"{self.name}: measured values for undeclared claims {sorted(unknown)}")
        for c in self.claims:
            if c.alternative_of is not None and c.alternative_of not in ids:
                raise ValueError(f"{self.name}: claim {c.id} is an alternative of unknown claim {c.alternative_of}")
            if c.id not in self.measured:
                if c.not_testable is None:
                    raise ValueError(f"{self.name}: claim {c.id} was declared but not measured")
                self.measured[c.id] = Measured(None, not_testable=c.not_testable)
        if sum(c.calibration for c in self.claims) > 1:
            raise ValueError(f"{self.name}: at most one calibration target per reproduction")

    def verdicts(self) -> dict[str, str]:
        return {c.id: claim_verdict(c, self.measured[c.id]) for c in self.claims}

    def counts(self) -> dict[str, SectionCount]:
        return section_verdict(self.claims, self.measured)

    @property
    def reproduced_by_simulation(self) -> bool:
        """Whether the section is reproduced by simulation: every headline simulation claim is
        reproduced (none of them not testable, at least one of them), as the README defines a
        reproduced section (model claims, the paper's equations, are counted on their own)."""
        c = self.counts()["simulation"]
        return c.testable > 0 and c.reproduced == c.testable and c.untestable == 0

    @property
    def verdict(self) -> str:
        """``model: …; simulation: …`` for the kinds the section has claims of."""
        counts = self.counts()
        kinds = [k for k in KINDS if any(c.kind == k for c in self.claims)]
        return "; ".join(f"{k}: {counts[k].verdict}" for k in kinds)

    def claim_frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for c in self.claims:
            m = self.measured[c.id]
            tol = c.tolerance
            rows.append({
                "id": c.id, "kind": c.kind, "quantity": c.quantity, "unit": c.unit, "paper": c.paper,
                "printed": c.printed, "source": c.source, "ours": m.value, "ci95": m.ci95, "n": m.n,
                "tolerance": tol.describe(c.unit) if tol else "", "tolerance_reason": tol.reason if tol else "",
                "headline": c.headline, "check": c.check, "calibration": c.calibration,
                "alternative_of": c.alternative_of or "", "verdict": claim_verdict(c, m),
                "within_tolerance": within_tolerance(c, m), "note": m.note,
                "not_testable": c.not_testable or m.not_testable or "",
            })
        return pd.DataFrame(rows)

    def rows(self) -> list[ClaimRow]:
        """Every claim as the report prints it, in declaration order."""
        return [ClaimRow.of(c, self.measured[c.id]) for c in self.claims]

    def claims_markdown(self) -> str:
        """The claims table: one row per claim, tolerance and verdict beside the numbers."""
        lines = ["| claim | kind | paper | ours (n) | tolerance | verdict | note |", "|---|---|---|---|---|---|---|"]
        for r in self.rows():
            c = r.claim
            tags = ([] if c.headline else ["supporting"]) + r.tags
            claim = f"{r.label} [{c.id}]" + (f" ({'; '.join(tags)})" if tags else "") + f"<br>*{c.source}*"
            tol = f"{r.tolerance}: {c.tolerance.reason}" if c.tolerance else "—"
            lines.append(f"| {claim} | {c.kind} | {r.paper} | {r.ours} | {tol} | **{r.verdict}** | {r.note} |")
        return "\n".join(lines)

    def markdown(self) -> str:
        """The section as a standalone file: setup with the shared assumptions, claims table,
        verdict with counts, discussion."""
        lines = [f"## {self.title}", "", f"*Source: {self.source}.*", "", self.setup.strip(), ""]
        if self.assumptions:
            lines += [f"**{self.assumptions[1]}**", "", self.assumptions[2].strip(), ""]
        lines += [self.claims_markdown(), ""]
        counts = self.counts()
        kinds = [k for k in KINDS if any(c.kind == k for c in self.claims)]
        summary = "; ".join(f"{k} {counts[k].sentence()}" for k in kinds)
        lines += [f"**Verdict: {self.verdict}.** Headline claims: {summary}.", ""]
        if self.discussion.strip():
            lines += [self.discussion.strip(), ""]
        if self.tick_overlaps:
            lines += ["Overlapping tick labels: " + "; ".join(self.tick_overlaps), ""]
        return "\n".join(lines)


def overlapping_tick_labels(fig: Any) -> list[str]:
    """Pairs of visible tick labels on one axis of ``fig`` whose drawn boxes overlap (from
    matplotlib's ``get_window_extent`` after a draw)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.get_axes():
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = [t for t in axis.get_ticklabels(minor=False) + axis.get_ticklabels(minor=True)
                      if t.get_visible() and t.get_text().strip()]
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    (ta, a), (tb, b) = boxes[i], boxes[j]
                    if a.overlaps(b) and a.width > 0 and b.width > 0 and (ta, a.bounds) != (tb, b.bounds):
                        title = ax.get_title() or ax.get_ylabel() or "axes"
                        found.append(f"{title}: {name}: {ta!r} / {tb!r}")
    return found


def save_figure(ctx: Context, fig: Any, stem: str) -> list[Path]:
    """Saves ``fig`` as PNG and SVG under the reproduction's directory, records overlapping
    tick labels in ``ctx.tick_overlaps``, and closes it. The report shows the PNG and links
    the SVG."""
    import matplotlib.pyplot as plt

    ctx.tick_overlaps.extend(f"{stem}: {o}" for o in overlapping_tick_labels(fig))
    out = []
    for ext in ("png", "svg"):
        p = ctx.path(f"{stem}.{ext}")
        fig.savefig(p)
        out.append(p)
    plt.close(fig)
    return out


def merge_into(target: dict[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    """Writes ``change`` into ``target`` (a scenario table, e.g. one connection), table by table:
    a nested table is merged key by key into a copy of it (tables the target shares with other
    objects, such as a section's constant variants, are never modified), any other value
    replaces the target's. Returns ``target``. The ablations switch one key deep inside a
    connection this way."""
    for k, v in change.items():
        if isinstance(v, Mapping) and isinstance(target.get(k), dict):
            target[k] = merge_into(dict(target[k]), v)
        else:
            target[k] = json.loads(json.dumps(v)) if isinstance(v, Mapping) else v
    return target


def repeated(
    ctx: Context,
    scenario: Any,
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    repeat: int,
    cache: str,
) -> pd.DataFrame:
    """Runs ``grid`` (or a list of points) × ``repeat`` through :func:`mptcplab.sweep`
    (resumable, parallel, on the context's engine), with runs cached under ``ctx.out/cache``
    so an interrupted reproduction resumes. The cache is a sweep folder: a stored run is
    reused only under the same run key (engine build, scenario, trace contents, seed) and
    only if it reads back whole; a cache left by another version of the reproduction (other
    points or repetitions) is replaced."""
    from mptcplab.sweep import sweep

    return sweep(scenario, grid, repeat=repeat, jobs=ctx.jobs, out=ctx.out / "cache" / cache, progress=ctx.progress,
                 engine=ctx.engine, address=ctx.address, replace=True)
