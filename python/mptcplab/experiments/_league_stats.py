"""The league's statistics: per-walk means, a ranking with confidence intervals over walks,
and paired comparisons of the top ranks.

Every combination (scheduler, controller) runs on the same walks with the same seeds and
start times, so the natural unit is the walk: a combination's value on a walk is the mean of
its runs there, its league value the mean over walks with a 95 % Student-t interval over
walks. Two combinations are compared by their per-walk differences (a paired design: walk
and seed held fixed), with a two-sided sign-flip permutation test of the mean difference
(Fisher's randomisation test: under the null hypothesis of no difference each walk's
difference is as likely positive as negative; exact over all 2^n sign patterns up to
:data:`EXACT_UP_TO` walks, else :data:`MONTE_CARLO_FLIPS` random patterns from a fixed seed,
p = (b + 1) / (M + 1)). Several comparisons of rank 1 against the ranks below it are
corrected with Holm's step-down procedure (Holm 1979), which controls the family-wise error
rate without assuming independence.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mptcplab.experiments.base import mean_ci95

__all__ = ["EXACT_UP_TO", "MONTE_CARLO_FLIPS", "Comparison", "Ranked", "compare_top", "holm", "rank", "sign_flip_p"]

EXACT_UP_TO = 16
MONTE_CARLO_FLIPS = 20_000
#: Seed of the Monte Carlo sign patterns (a p-value must not change between runs).
FLIP_SEED = 20230101


def sign_flip_p(diffs: Sequence[float]) -> float:
    """Two-sided p-value of the paired sign-flip test for a mean difference of zero."""
    d = [float(x) for x in diffs]
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(sum(d))
    # A pattern counts when its |sum| reaches the observed one (a relative tolerance keeps
    # the observed pattern itself from missing by rounding).
    tol = 1e-12 * max(1.0, sum(abs(x) for x in d))
    if n <= EXACT_UP_TO:
        hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - tol
                   for signs in itertools.product((1, -1), repeat=n))
        return hits / 2 ** n
    rng = random.Random(FLIP_SEED)
    hits = sum(abs(sum(x if rng.random() < 0.5 else -x for x in d)) >= observed - tol for _ in range(MONTE_CARLO_FLIPS))
    return (hits + 1) / (MONTE_CARLO_FLIPS + 1)


def holm(ps: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (same order as ``ps``): the k-th smallest is multiplied by
    m − k + 1, made monotone, capped at 1."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * ps[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Ranked:
    """One combination's league value: mean over walks, 95 % CI half-width, walks counted,
    and the median over walks (a reader's check on means that a few walks with outages
    dominate)."""

    label: str
    mean: float
    ci95: float | None
    walks: int
    median: float


def rank(per_walk: Mapping[str, Mapping[str, float]], higher_is_better: bool) -> list[Ranked]:
    """Ranks combinations (``per_walk[label][walk]`` = the combination's mean on the walk)
    by their mean over walks, best first; ties keep the labels' order."""
    rows = []
    for label, walks in per_walk.items():
        values = list(walks.values())
        m, ci, n = mean_ci95(values)
        rows.append(Ranked(label, m, ci, n, statistics.median(values) if values else math.nan))
    return sorted(rows, key=lambda r: -r.mean if higher_is_better else r.mean)


@dataclass(frozen=True)
class Comparison:
    """Rank 1 against another combination, over the walks both ran: the mean per-walk
    difference (rank 1 − other, in the metric's unit) with its 95 % CI, the raw and the
    Holm-adjusted sign-flip p-values."""

    best: str
    other: str
    diff: float
    ci95: float | None
    walks: int
    p: float
    p_holm: float

    @property
    def significant(self) -> bool:
        return self.p_holm < 0.05


def compare_top(per_walk: Mapping[str, Mapping[str, float]], ranking: Sequence[Ranked], others: Sequence[str]) -> list[Comparison]:
    """Rank 1 against each of ``others`` (labels), paired by walk, Holm-corrected together."""
    best = ranking[0].label
    raw = []
    for o in others:
        walks = sorted(set(per_walk[best]) & set(per_walk[o]))
        diffs = [per_walk[best][w] - per_walk[o][w] for w in walks]
        m, ci, n = mean_ci95(diffs)
        raw.append((o, m, ci, n, sign_flip_p(diffs)))
    adjusted = holm([r[4] for r in raw])
    return [Comparison(best, o, m, ci, n, p, pa) for (o, m, ci, n, p), pa in zip(raw, adjusted, strict=True)]


def fmt_p(p: float) -> str:
    """A p-value as a reader wants it: two significant figures, or an upper bound."""
    if p < 1e-4:
        return "< 0.0001"
    return f"{p:.2g}" if p < 0.1 else f"{p:.2f}"

