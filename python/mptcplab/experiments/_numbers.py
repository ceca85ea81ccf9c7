"""Numbers as the reproductions print them (three significant figures, values with units,
names in running text) and the mean with its 95 % confidence interval (Student t) that every
simulated claim reports. Imported through :mod:`mptcplab.experiments.base`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


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
