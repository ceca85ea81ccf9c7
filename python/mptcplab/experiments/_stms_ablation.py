"""The STMS section's ablation: the facts the slides leave open and the stack's mechanisms."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments._stms_claims import STMS
from mptcplab.experiments._stms_runs import _conn, _label, _paired, _paths
from mptcplab.experiments.base import Context, merge_into, repeated

#: The ablation: the facts the slides leave open and the stack's mechanisms, one at a time
#: (connection keys), on minRTT and STMS.
ABLATIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("linux-v0.9x, host buffers auto-tuned up to 6M (as run)", {}),
    ("fixed 6 MB buffers", {"sndbuf": "6MB", "rcvbuf": "6MB"}),
    ("tcp_wmem max 4 MiB (Linux's default)", {"sndbuf": {"max": "4194304B"}}),
    ("CUBIC (v0.92's kernel default)", {"cc": "cubic"}),
    ("OLIA", {"cc": "olia"}),
    ("send buffer charged in payload bytes", {"buffer_accounting": "payload"}),
    ("RFC 2861 decay off", {"tcp": {"cwv": False}}),
    ("PRR off", {"tcp": {"prr": False}}),
    ("quick-ACK mode off", {"tcp": {"quickack": False}}),
)
#: Runs per ablation cell (common random numbers, as the claims').
ABLATION_REPS = 3


def _ablation(ctx: Context, base: Any) -> Any:
    """Per variant, 20 vs 200 ms with 30 KB on both paths (the RTT table's and the in-network
    gain's cell): minRTT's aggregate, fast-path goodput and fast-path loss, and STMS's gain over
    minRTT; means over ``ABLATION_REPS`` paired runs (one sweep, run in parallel)."""
    import pandas as pd

    conns = {f"{label}|{sched}": _conn(base, sched) for label, _ in ABLATIONS for sched in ("minRTT", STMS)}
    for label, change in ABLATIONS:
        for sched in ("minRTT", STMS):
            conns[f"{label}|{sched}"] = [merge_into(conns[f"{label}|{sched}"][0], change)]
    sc = base.with_overrides({"paths": _paths(base, 30, "both")})
    d = repeated(ctx, sc, {"connections": list(conns.values())}, ABLATION_REPS, "ablation")
    d[["variant", "scheduler"]] = _label(d, "connections", conns).str.split("|", expand=True)
    d["loss"] = 100 * (d["link.fast.down.queue_drops"] + d["link.fast.down.loss_drops"]) / d["link.fast.down.arrived_packets"]
    rows = []
    for label, _ in ABLATIONS:
        mr = d[(d["variant"] == label) & (d["scheduler"] == "minRTT")]
        st = d[(d["variant"] == label) & (d["scheduler"] == STMS)]
        gains = _paired(st, mr, "conn.mptcp.goodput_bps", lambda a, b: 100 * (a / b - 1))
        rows.append({
            "variant": label,
            "minrtt_aggregate_30kb_mbps": mr["conn.mptcp.goodput_bps"].mean() / 1e6,
            "minrtt_fast_30kb_mbps": mr["sf.mptcp.fast.goodput_bps"].mean() / 1e6,
            "minrtt_fast_loss_30kb_pct": mr["loss"].mean(),
            "minrtt_sndbuf_limited_s": mr["conn.mptcp.sndbuf_limited_time_s"].mean(),
            "stms_gain_30kb_pct": sum(gains) / len(gains),
        })
    return pd.DataFrame(rows)
