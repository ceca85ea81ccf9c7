"""Claims with tolerances fixed before the run, the measured values, and verdicts computed
from the two. Imported through :mod:`mptcplab.experiments.base`.

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mptcplab.experiments._numbers import _decimals, fmt, fmt_value, mean_ci95

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
            # Reproduced means every counted claim is; untestable ones leave the section short
            # of that, however its testable ones fare.
            if self.untestable:
                return (f"every testable claim reproduced ({self.reproduced} of {self.testable}; "
                        f"{self.untestable} not testable)")
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


def measured_mean(values: Sequence[float], note: str = "", empty: str = "no run gave a value") -> Measured:
    """The mean of ``values`` with its 95 % CI as a :class:`Measured` (not testable if empty)."""
    m, ci, n = mean_ci95(values)
    if n == 0:
        return Measured(None, n=0, note=note, not_testable=empty)
    return Measured(m, ci, n, note)
