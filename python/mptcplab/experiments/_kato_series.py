"""Run 4's time series read as the paper reads its traces (part of
:mod:`~mptcplab.experiments.kato`): the fast window with and without RFC 2861's validation,
and the stop-and-go of the data sequence in the windows of the paper's Fig. 4."""

from __future__ import annotations

from collections.abc import Sequence

from mptcplab.experiments._kato_claims import CWV_LOWER, FIG4_WINDOWS, STOP_AND_GO

#: The stop-and-go claim reads the data sequence at this step (s): a stop is a whole interval
#: without new data, the shortest the paper's 2.5 s plots (Fig. 4) can show.
STOP_STEP_S = 0.010


def time_mean(times: Sequence[float], values: Sequence[float]) -> float:
    """The time-weighted mean of a sampled series (each sample holds until the next)."""
    if len(times) < 2:
        return float(values[0]) if values else float("nan")
    total = sum((b - a) * v for a, b, v in zip(times, times[1:], values))
    return total / (times[-1] - times[0])


def cwv_effect(with_cwv: float, without: float) -> str:
    """The fast-path validation's direction: the window's time mean with the decay against the
    same run without it (more than 1 % apart, else "no difference")."""
    if with_cwv < 0.99 * without:
        return CWV_LOWER
    if with_cwv > 1.01 * without:
        return "higher"
    return "no difference"


def resample(times: Sequence[float], values: Sequence[float], step: float) -> list[float]:
    """The last sample at or before each multiple of ``step`` (the series as a coarser probe
    would have read it)."""
    out: list[float] = []
    i = 0
    t = times[0] if times else 0.0
    while times and t <= times[-1] + 1e-12:
        while i + 1 < len(times) and times[i + 1] <= t + 1e-12:
            i += 1
        out.append(values[i])
        t += step
    return out


def stops(times: Sequence[float], values: Sequence[float], lo: float, hi: float, step: float = STOP_STEP_S) -> int:
    """Times the series stops rising inside [lo, hi]: an interval of ``step`` without a rise
    right after one with."""
    sel = [(t, v) for t, v in zip(times, values) if lo <= t <= hi]
    if len(sel) < 3:
        return 0
    vals = resample([t for t, _ in sel], [v for _, v in sel], step)
    rising = [b > a for a, b in zip(vals, vals[1:])]
    return sum(1 for a, b in zip(rising, rising[1:]) if a and not b)


def stop_and_go(series: dict[str, tuple[Sequence[float], Sequence[float]]]) -> tuple[str, dict[tuple[str, float], int]]:
    """The stop-and-go category of run 4 from each subflow's data-sequence series: intermittent
    when every subflow stops at least twice in each of Fig. 4's windows ("repeats sending and
    stopping"); and the counts."""
    counts = {(p, lo): stops(t, v, lo, hi) for p, (t, v) in series.items() for lo, hi in FIG4_WINDOWS}
    if all(n >= 2 for n in counts.values()):
        return STOP_AND_GO, counts
    if all(n == 0 for n in counts.values()):
        return "continuous", counts
    return "intermittent on some subflows or windows only", counts
