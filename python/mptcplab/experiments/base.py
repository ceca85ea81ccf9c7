"""What a reproduction receives and returns, and the statistics every one of them uses."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Comparison", "Context", "Result", "VERDICTS", "mean_ci95", "repeated"]

#: The allowed verdicts, best first.
VERDICTS = ("reproduced", "partly reproduced", "not reproduced")


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

    def reps(self, full: int, quick: int) -> int:
        """Repetitions: the paper's count, or the quick one."""
        return quick if self.quick else full

    def path(self, name: str) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        return self.out / name


@dataclass
class Comparison:
    """One number of the paper beside ours."""

    quantity: str
    unit: str
    paper: float | str | None
    ours: float | None
    ci95: float | None = None
    n: int = 1
    note: str = ""


@dataclass
class Result:
    """A reproduction's outcome: numbers beside the paper's, files, and a verdict with reason."""

    name: str
    title: str
    source: str
    setup: str
    comparisons: list[Comparison]
    verdict: str
    reason: str
    tables: dict[str, Path] = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)
    runtime_s: float = 0.0

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    def comparison_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([c.__dict__ for c in self.comparisons])

    def markdown(self) -> str:
        """The report section: setup, paper vs ours, verdict."""
        lines = [f"## {self.title}", "", f"*Source: {self.source}.*", "", self.setup.strip(), ""]
        lines += ["| quantity | paper | ours (mean ± 95 % CI, n) | unit | note |", "|---|---|---|---|---|"]
        for c in self.comparisons:
            ours = "—" if c.ours is None else _fmt(c.ours)
            if c.ci95 is not None and c.ours is not None:
                ours += f" ± {_fmt(c.ci95)}"
            ours += f" (n={c.n})"
            paper = "—" if c.paper is None else (_fmt(c.paper) if isinstance(c.paper, float | int) else str(c.paper))
            lines.append(f"| {c.quantity} | {paper} | {ours} | {c.unit} | {c.note} |")
        lines += ["", f"**Verdict: {self.verdict}.** {self.reason.strip()}", ""]
        return "\n".join(lines)


def _fmt(v: float) -> str:
    if v == 0 or not math.isfinite(v):
        return str(v)
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.3g}" if a < 10 else f"{v:.1f}"
    return f"{v:.3g}"


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


def repeated(
    ctx: Context,
    scenario: Any,
    grid: Mapping[str, Sequence[Any]],
    repeat: int,
    cache: str,
) -> pd.DataFrame:
    """Runs ``grid`` × ``repeat`` through :func:`mptcplab.sweep` (resumable, parallel), with
    runs cached under ``ctx.out/cache`` so an interrupted reproduction resumes."""
    from mptcplab.sweep import sweep

    return sweep(scenario, grid, repeat=repeat, jobs=ctx.jobs, out=ctx.out / "cache" / cache, progress=ctx.progress)
