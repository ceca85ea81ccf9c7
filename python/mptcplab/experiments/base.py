"""What a reproduction declares, receives and returns: claims with tolerances fixed before the
run, the measured values, and verdicts computed from the two.

A reproduction module declares its claims at import time (``CLAIMS``), before anything runs:
for each, the paper's value and where it is printed, the quantity, whether it is a **model**
claim (the paper's equations evaluated) or a **simulation** claim (the engine's runs), and a
numeric :class:`Tolerance` with the reason for its width. ``run`` then returns one
:class:`Measured` per claim. Nothing in a reproduction writes a verdict: :func:`claim_verdict`
compares each measured value with its declared tolerance, and :func:`section_verdict` counts.

Verdicts of a claim:

- ``reproduced`` / ``not reproduced``: the measured value lies inside / outside the tolerance;
- ``not testable``: the claim cannot be checked (declared so, with why, or no value came out of
  the run, with why);
- ``paper inconsistent``: a *consistency* claim (the paper's own equation or table evaluated
  against the number the paper prints from it) misses its tolerance: the paper disagrees with
  itself, and the simulation cannot be judged against that number;
- ``calibration target``: the one number a reproduction fits open link parameters to; shown
  with its residual, never counted (every other claim is then a prediction with those
  parameters unchanged);
- ``alternative reading``: a labelled reinterpretation of a paper-inconsistent number (for
  example a different rounding of the paper's equation), shown beside it and never counted.

A section counts its **headline** claims per kind (model, simulation) whose verdict is
reproduced or not reproduced: ``reproduced`` when all of them are, ``not reproduced`` when
none is, else ``partly reproduced (r of n claims)``. Supporting (non-headline) claims are
shown with their verdicts but do not move the count.

A simulated mean is judged by its point value against the tolerance; its 95 % confidence
interval is shown beside it, so a reader sees when a verdict rests on a noisy mean.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable"
INCONSISTENT = "paper inconsistent"
CALIBRATION = "calibration target"
ALTERNATIVE = "alternative reading"
#: Every verdict a claim can get.
CLAIM_VERDICTS = (REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE, INCONSISTENT, CALIBRATION, ALTERNATIVE)
#: The two kinds of claims, counted separately.
KINDS = ("model", "simulation")


@dataclass(frozen=True)
class Tolerance:
    """How far a measured value may lie from the paper's and still reproduce it, and why.

    One rule per tolerance (use the constructors):

    - ``relative(r)``: ``|ours − paper| ≤ r·|paper|``;
    - ``absolute(a)``: ``|ours − paper| ≤ a`` (in the claim's unit);
    - ``within(lo, hi)``: ``lo ≤ ours ≤ hi`` (the paper's own range, a band it states);
    - ``at_least(lo)`` / ``at_most(hi)``: a one-sided statement of the paper ("≥ 90 %");
    - ``same()``: equal, for categories (which subflow, which regime) and exact counts.
    """

    rule: str
    reason: str
    a: float = 0.0
    b: float = 0.0

    @staticmethod
    def relative(r: float, reason: str) -> Tolerance:
        return Tolerance("relative", reason, r)

    @staticmethod
    def absolute(a: float, reason: str) -> Tolerance:
        return Tolerance("absolute", reason, a)

    @staticmethod
    def within(lo: float, hi: float, reason: str) -> Tolerance:
        if lo > hi:
            raise ValueError(f"tolerance band {lo} > {hi}")
        return Tolerance("within", reason, lo, hi)

    @staticmethod
    def at_least(lo: float, reason: str) -> Tolerance:
        return Tolerance("at_least", reason, lo)

    @staticmethod
    def at_most(hi: float, reason: str) -> Tolerance:
        return Tolerance("at_most", reason, hi)

    @staticmethod
    def same(reason: str) -> Tolerance:
        return Tolerance("same", reason)

    def __post_init__(self) -> None:
        if self.rule not in ("relative", "absolute", "within", "at_least", "at_most", "same"):
            raise ValueError(f"unknown tolerance rule {self.rule!r}")
        if self.rule in ("relative", "absolute") and not self.a >= 0:
            raise ValueError(f"a {self.rule} tolerance must be >= 0, not {self.a}")
        if not self.reason.strip():
            raise ValueError("a tolerance needs its reason")

    def holds(self, paper: float | str | None, ours: float | str) -> bool:
        if self.rule == "same":
            if isinstance(paper, str) or isinstance(ours, str):
                return str(paper) == str(ours)
            return paper is not None and float(ours) == float(paper)
        x = float(ours)
        if not math.isfinite(x):
            return False
        if self.rule == "within":
            return self.a <= x <= self.b
        if self.rule == "at_least":
            return x >= self.a
        if self.rule == "at_most":
            return x <= self.a
        if paper is None or isinstance(paper, str):
            raise ValueError(f"a {self.rule} tolerance needs a numeric paper value, not {paper!r}")
        width = self.a * abs(float(paper)) if self.rule == "relative" else self.a
        # The bound itself counts as inside; a relative rounding error must not flip it.
        return abs(x - float(paper)) <= width * (1 + 1e-12) + 1e-12

    def describe(self, unit: str = "") -> str:
        u = f" {unit}" if unit and unit not in ("ratio", "fraction") else ""
        if self.rule == "relative":
            return f"±{fmt(100 * self.a)} %"
        if self.rule == "absolute":
            return f"±{fmt(self.a)}{u}"
        if self.rule == "within":
            return f"{fmt(self.a)}–{fmt(self.b)}{u}"
        if self.rule == "at_least":
            return f"≥ {fmt(self.a)}{u}"
        if self.rule == "at_most":
            return f"≤ {fmt(self.a)}{u}"
        return "equal"


#: The stated default for a number read from a paper's text or figure that gives no spread of
#: its own: ±15 %, wide enough for reading a value off a plotted curve or a rounded figure in
#: the text, narrow enough that a 2× miss or a wrong trend cannot pass.
DEFAULT_TOLERANCE = Tolerance.relative(0.15, "stated default for a number without a published spread")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper, declared before any run.

    ``paper`` is the paper's value in ``unit`` (a number, or a category such as a subflow's
    name for a mechanism claim) and ``printed`` its own spelling; ``source`` is seed, section
    and table or figure. ``kind`` is ``model`` (the paper's equations, evaluated) or
    ``simulation``. ``check`` is ``paper`` (ours against the paper's result) or
    ``consistency`` (the paper's own equation against the number the paper prints from it: a
    miss is a paper inconsistency, not ours). ``calibration`` marks the one target a
    reproduction fits open parameters to; ``alternative_of`` names the claim this row offers
    a labelled alternative reading of. ``not_testable`` says why a claim cannot be checked.
    """

    id: str
    kind: str
    quantity: str
    unit: str
    paper: float | str | None
    source: str
    tolerance: Tolerance | None
    printed: str = ""
    headline: bool = True
    check: str = "paper"
    calibration: bool = False
    alternative_of: str | None = None
    not_testable: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is not one of {KINDS}")
        if self.check not in ("paper", "consistency"):
            raise ValueError(f"claim {self.id}: check {self.check!r} is not 'paper' or 'consistency'")
        if self.tolerance is None and self.not_testable is None:
            raise ValueError(f"claim {self.id}: a testable claim needs a tolerance")
        if self.calibration and self.alternative_of:
            raise ValueError(f"claim {self.id}: a calibration target is not an alternative reading")
        if not self.source.strip():
            raise ValueError(f"claim {self.id}: the paper's source is missing")

    @property
    def counted(self) -> bool:
        """Whether the claim can move its section's count (headline, not a fit target, not an
        alternative reading)."""
        return self.headline and not self.calibration and self.alternative_of is None


@dataclass(frozen=True)
class Measured:
    """What a run gave for one claim: the value (a mean, with its 95 % CI half-width and n) or,
    when the run could not give one, why not."""

    value: float | str | None
    ci95: float | None = None
    n: int = 1
    note: str = ""
    not_testable: str | None = None

    def __post_init__(self) -> None:
        if self.value is None and not self.not_testable:
            raise ValueError("a measurement without a value must say why (not_testable)")


def claim_verdict(claim: Claim, m: Measured) -> str:
    """The claim's verdict, from its declared tolerance and the measured value alone."""
    if claim.not_testable or m.not_testable or m.value is None:
        return NOT_TESTABLE
    if isinstance(m.value, float) and not math.isfinite(m.value):
        return NOT_TESTABLE
    assert claim.tolerance is not None
    if claim.calibration:
        return CALIBRATION
    if claim.alternative_of is not None:
        return ALTERNATIVE
    ok = claim.tolerance.holds(claim.paper, m.value)
    if claim.check == "consistency":
        return REPRODUCED if ok else INCONSISTENT
    return REPRODUCED if ok else NOT_REPRODUCED


def within_tolerance(claim: Claim, m: Measured) -> bool | None:
    """Whether the value lies inside the tolerance (also for calibration targets and
    alternative readings, whose verdicts do not say it); None when not testable."""
    if claim_verdict(claim, m) == NOT_TESTABLE:
        return None
    assert claim.tolerance is not None and m.value is not None
    return claim.tolerance.holds(claim.paper, m.value)


@dataclass(frozen=True)
class SectionCount:
    """A section's headline claims of one kind: reproduced, testable, and paper inconsistencies."""

    kind: str
    reproduced: int
    testable: int
    inconsistent: int
    untestable: int

    @property
    def verdict(self) -> str:
        if self.testable == 0:
            return INCONSISTENT if self.inconsistent else NOT_TESTABLE
        if self.reproduced == self.testable:
            return REPRODUCED
        if self.reproduced == 0:
            return NOT_REPRODUCED
        return f"partly reproduced ({self.reproduced} of {self.testable} claims)"

    def short(self) -> str:
        """``r/n`` with the paper inconsistencies and untestable claims beside it."""
        s = f"{self.reproduced}/{self.testable}" if self.testable else "–"
        extra = []
        if self.inconsistent:
            extra.append(f"{self.inconsistent} paper inconsistent")
        if self.untestable:
            extra.append(f"{self.untestable} not testable")
        return s + (f" ({', '.join(extra)})" if extra else "")

    def sentence(self) -> str:
        """``r of n reproduced`` (or ``none testable``) with the uncounted ones beside it."""
        s = f"{self.reproduced} of {self.testable} reproduced" if self.testable else "none testable"
        extra = []
        if self.inconsistent:
            extra.append(f"{self.inconsistent} paper inconsistent")
        if self.untestable:
            extra.append(f"{self.untestable} not testable")
        return s + (f" ({', '.join(extra)})" if extra else "")


def section_verdict(claims: Sequence[Claim], measured: Mapping[str, Measured]) -> dict[str, SectionCount]:
    """Per kind: how many counted claims were reproduced, out of how many testable."""
    out = {}
    for kind in KINDS:
        verdicts = [claim_verdict(c, measured[c.id]) for c in claims if c.kind == kind and c.counted]
        out[kind] = SectionCount(
            kind,
            reproduced=sum(v == REPRODUCED for v in verdicts),
            testable=sum(v in (REPRODUCED, NOT_REPRODUCED) for v in verdicts),
            inconsistent=sum(v == INCONSISTENT for v in verdicts),
            untestable=sum(v == NOT_TESTABLE for v in verdicts),
        )
    return out


@dataclass(frozen=True)
class ClaimRow:
    """One claim as the report prints it, in plain text (each renderer escapes and marks up):
    the verdict (with "inside / outside tolerance" for the classes that are never counted),
    tags, the quantity with its unit, the paper's and our values, the tolerance and the note."""

    claim: Claim
    verdict: str
    tags: list[str]
    label: str
    paper: str
    ours: str
    tolerance: str
    note: str

    @staticmethod
    def of(c: Claim, m: Measured) -> ClaimRow:
        v = claim_verdict(c, m)
        inside = within_tolerance(c, m)
        if v in (CALIBRATION, ALTERNATIVE) and inside is not None:
            v += " (inside tolerance)" if inside else " (outside tolerance)"
        tags = []
        if c.check == "consistency":
            tags.append("paper's equation vs its own number")
        if c.alternative_of:
            tags.append(f"alternative reading of [{c.alternative_of}]")
        unit = f" ({c.unit})" if c.unit and c.unit not in ("ratio", "fraction") else ""
        return ClaimRow(
            claim=c,
            verdict=v,
            tags=tags,
            label=f"{c.quantity}{unit}",
            paper="—" if c.paper is None else (c.printed or fmt_value(c.paper, c.unit)),
            ours=_fmt_ours(m, c.unit),
            tolerance=c.tolerance.describe(c.unit) if c.tolerance else "—",
            note="; ".join(x for x in (c.not_testable or m.not_testable, m.note) if x),
        )


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

    def __post_init__(self) -> None:
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


def fmt(v: float) -> str:
    """Three significant figures, no trailing zeros, thousands separated: 67, 130, 0.652,
    12.1, 4 610, 2.4e-05."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    a = abs(v)
    if a >= 1000:
        return f"{round(v):,}".replace(",", " ")
    if a < 1e-3:
        return f"{v:.2e}".replace("e-0", "e-")
    digits = max(0, 2 - math.floor(math.log10(a)))
    s = f"{v:.{digits}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def and_list(xs: Sequence[str]) -> str:
    """Names in running text: "a", "a and b", "a, b and c"."""
    return " and ".join(xs) if len(xs) < 3 else ", ".join(xs[:-1]) + " and " + xs[-1]


def fmt_value(v: float | str, unit: str = "") -> str:
    """A value with its unit: percentages for fractions are the caller's business."""
    if isinstance(v, str):
        return v
    return f"{fmt(v)} {unit}".strip() if unit not in ("ratio", "fraction", "") else fmt(v)


def _decimals(x: float) -> int:
    """Decimals of :func:`fmt`'s rendering of x."""
    s = fmt(x)
    return len(s.split(".")[1]) if "." in s and "e" not in s else 0


def _fmt_ours(m: Measured, unit: str) -> str:
    if m.value is None:
        return "—"
    if isinstance(m.value, str):
        return m.value
    s = fmt(m.value)
    if m.ci95 is not None and m.n > 1:
        if m.ci95 == 0:
            return f"{s} ({m.n} identical runs)"
        # The value to the precision of its uncertainty: at least the CI's first significant
        # digit, so a small CI never prints as "± 0.000".
        ci_digits = max(0, -math.floor(math.log10(abs(m.ci95))))
        d = max(_decimals(m.value), min(ci_digits, 6))
        return f"{m.value:.{d}f} ± {m.ci95:.{d}f} (n = {m.n})"
    return s if m.n <= 1 else f"{s} (n = {m.n})"


# Student t quantiles (two-sided 95 %) for small samples.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        15: 2.131, 20: 2.086, 30: 2.042, 40: 2.021, 60: 2.000}


def mean_ci95(values: Sequence[float]) -> tuple[float, float | None, int]:
    """Mean, half-width of the 95 % confidence interval (Student t), and n."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return float("nan"), None, 0
    m = statistics.fmean(xs)
    if n == 1:
        return m, None, 1
    df = n - 1
    t = _T95.get(df) or _T95[max(k for k in _T95 if k <= df)]
    return m, t * statistics.stdev(xs) / math.sqrt(n), n


def measured_mean(values: Sequence[float], note: str = "", empty: str = "no run gave a value") -> Measured:
    """The mean of ``values`` with its 95 % CI as a :class:`Measured` (not testable if empty)."""
    m, ci, n = mean_ci95(values)
    if n == 0:
        return Measured(None, n=0, note=note, not_testable=empty)
    return Measured(m, ci, n, note)


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
    so an interrupted reproduction resumes."""
    from mptcplab.sweep import sweep

    return sweep(scenario, grid, repeat=repeat, jobs=ctx.jobs, out=ctx.out / "cache" / cache, progress=ctx.progress,
                 engine=ctx.engine, address=ctx.address)
