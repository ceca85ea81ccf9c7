"""Statistics of the Chen & Towsley Fig. 2 reproduction (:mod:`chen_towsley_fig2`): the R² of
the paper's fit and what the earlier download left in the TCP metrics cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mptcplab.experiments.base import Measured, fmt
from mptcplab.models import chen_towsley as ct
from mptcplab.models import paper_values as pv

if TYPE_CHECKING:
    import pandas as pd

P_WIFI = pv.CT_SETUP["p_wifi"].value
IW = int(pv.CT_SETUP["iw"].value)
B = pv.CT_SETUP["b"].value


def r2(table: pd.DataFrame) -> Measured:
    """The paper's "fitting the empirical averages of different γ to the expected values derived
    from our model" read as a least-squares line of the averages on Eq. (9): R² is the squared
    correlation. (Read as 1 − SS_res/SS_tot of the averages against Eq. (9) itself, the paper's own
    67 / 88 / 130 against Eq. (9)'s values near 265 could not give 0.88.) The averages are taken per
    grid point (cellular base RTT), Eq. (9) at each point's mean γ."""
    if len(table) == 0:
        return Measured(None, n=0, not_testable="no run")
    g = table.groupby("cell_base_rtt_ms")[["gamma", "packets"]].mean()
    if len(g) < 3:
        return Measured(None, n=len(g), not_testable="fewer than three grid points")
    model = g["gamma"].map(lambda x: ct.expected_packets_before_second_flow(x, P_WIFI, IW, B))
    r = float(g["packets"].corr(model))
    return Measured(r * r, n=len(g), note=f"{len(g)} grid-point averages; correlation r = {fmt(r)}")


def history_text(table: pd.DataFrame) -> str:
    """What the drawn histories held: by `tcp_update_metrics`' rule a single-path WiFi download
    (``tcp``) that ended in congestion avoidance leaves WiFi an ssthresh, an MPTCP download's
    coupled WiFi subflow may (:mod:`chen_towsley_fig2`), a single-path cellular one never
    writes WiFi's entry."""
    if len(table) == 0 or "history" not in table:
        return ""
    wifi = table["history"].fillna("").str.split(" → ").map(lambda h: any(x.startswith("tcp ") for x in h))
    by = table.groupby(wifi)["packets"].mean()
    text = (f"Of the {len(table)} runs, {int(wifi.sum())} had a single-path WiFi download among the downloads "
            f"before them in their round ({fmt(table['earlier'].mean())} on average)")
    if len(by) == 2:
        text += (f"; those count {fmt(by[True])} packets on average, the others {fmt(by[False])} (all γ pooled)")
    return text + "."
