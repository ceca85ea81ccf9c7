"""Statistics of the Chen & Towsley Fig. 2 reproduction (:mod:`chen_towsley_fig2`): the R² of
the paper's fit and what the earlier download left in the TCP metrics cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mptcplab.experiments import _chen_towsley_links as links
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


def cached_text(first: pd.DataFrame) -> str:
    """What the earlier download left in the cache for WiFi, by `tcp_update_metrics`' rule: with
    nothing cached, an ssthresh only from congestion avoidance (cwnd > ssthresh, in segments):
    max(cwnd/2, ssthresh)."""
    col = "sf.earlier1.wifi.final_{}_bytes"
    if col.format("cwnd") not in first:
        return ""
    mss = links.TCP_LINUX_311.get("mss", 1448)
    cwnd = (first[col.format("cwnd")] // mss).astype(int)
    ss = (first[col.format("ssthresh")].fillna(float("inf")) // mss)
    ca = cwnd > ss
    cached = [max(c // 2, int(t)) for c, t in zip(cwnd[ca], ss[ca], strict=True)]
    return (f"The earlier download's WiFi subflow closed with cwnd {fmt(cwnd.mean())} and ssthresh "
            f"{fmt(ss[ss < float('inf')].mean())} segments on average; in {int(ca.sum())} of {len(first)} runs it was "
            "in congestion avoidance, so the cache held an ssthresh of "
            + (f"{fmt(min(cached))}–{fmt(max(cached))} segments (mean {fmt(sum(cached) / len(cached))}) "
               if cached else "none ")
            + f"for the measured download's WiFi subflow (I_w = {IW})"
            + ("." if ca.all() else "; in the other runs it held none (cwnd = ssthresh at the close)."))
