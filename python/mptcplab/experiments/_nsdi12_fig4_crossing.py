"""NSDI '12 Fig. 4 (seed 003), graph c: the receive buffer from which MPTCP + M1 + M2 overtakes
TCP over WiFi (read through :mod:`mptcplab.experiments.nsdi12_fig4`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mptcplab.experiments.base import Measured, Tolerance, fmt

#: The measured value when MPTCP + M1 + M2 is not above TCP over WiFi at the sweep's largest
#: buffer: a result (it never overtakes within the sweep), not a missing measurement.
NEVER = "never"


@dataclass(frozen=True)
class AtMostOrNever(Tolerance):
    """``at_most(hi)`` for a crossing buffer, where the measured value may also be the result
    "never, up to <largest buffer>" (a string starting with :data:`NEVER`): a crossing that
    does not happen within the sweep lies above every swept buffer, so above ``hi``."""

    def holds(self, paper: float | str | None, ours: float | str) -> bool:
        if isinstance(ours, str) and ours.startswith(NEVER):
            return False
        return super().holds(paper, ours)


def crossing(goodput: Mapping[int, tuple[float, float]]) -> int | None:
    """Smallest buffer (KB) from which MPTCP + M1 + M2 beats TCP over WiFi at every larger one;
    ``goodput`` maps each swept buffer to (MPTCP + M1 + M2, TCP over WiFi) in Mbit/s. None when
    it is not above TCP at the largest buffer."""
    kbs = sorted(goodput)
    above = [kb for kb in kbs if all(goodput[k][0] > goodput[k][1] for k in kbs if k >= kb)]
    return min(above) if above else None


def overtakes(goodput: Mapping[int, tuple[float, float]], alternative: int | None) -> Measured:
    """The ``overtakes-tcp`` measurement: the crossing in KB, or, when there is none, the
    measured result "never, up to <largest buffer> KB" (judged not reproduced, the value shown).
    ``alternative`` is the crossing with the buffers as time, for the note."""
    alt = f"with the buffers as time: {f'{alternative} KB' if alternative else NEVER}"
    cross = crossing(goodput)
    if cross is not None:
        m1m2, tcp = goodput[cross]
        return Measured(float(cross), note=f"{fmt(m1m2)} vs {fmt(tcp)} Mbit/s there; {alt}")
    last = max(goodput)
    m1m2, tcp = goodput[last]
    return Measured(f"{NEVER}, up to {last} KB",
                    note=f"MPTCP + M1 + M2 {fmt(m1m2)} vs TCP over WiFi {fmt(tcp)} Mbit/s at {last} KB; {alt}")
