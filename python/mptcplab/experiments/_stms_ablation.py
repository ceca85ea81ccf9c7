"""The STMS section's ablation: the facts the slides leave open and the stack's mechanisms."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments._stms_claims import BUFFERS_KB, STMS
from mptcplab.experiments._stms_runs import _conn, _label, _paired, _paths
from mptcplab.experiments.base import Context, merge_into, repeated

#: The ablation: the facts the slides leave open and the stack's mechanisms, one at a time, on
#: minRTT, single-path TCP ("SPTCP fast") and STMS: (label, connection keys, scenario keys). A
#: congestion control single-path TCP cannot run is Reno there (Linux's `mptcp_coupled` and
#: `mptcp_olia` fall back to Reno on a socket without MPTCP).
ABLATIONS: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    ("as run: CUBIC, per_mss of the v0.92 build, iPerf's 10 s, host buffers auto-tuned up to 6M", {}, {}),
    ("LIA (single-path TCP: Reno)", {"cc": "lia"}, {}),
    ("OLIA (single-path TCP: Reno)", {"cc": "olia"}, {}),
    ("subflow send buffers at 2304 B per MSS (per_mss = host)", {"per_mss": "host"}, {}),
    ("a writer without send() calls (whatever the send buffer takes)", {"app": {"kind": "bulk"}}, {}),
    ("run length 30 s", {}, {"duration": "30s"}),
    ("run length 60 s", {}, {"duration": "60s"}),
    ("fixed 6 MB buffers", {"sndbuf": "6MB", "rcvbuf": "6MB"}, {}),
    ("tcp_wmem max 4 MiB (Linux's default)", {"sndbuf": {"max": "4194304B"}}, {}),
    ("send buffer charged in payload bytes", {"buffer_accounting": "payload", "per_mss": "host"}, {}),
    ("minRTT's penalisation (M2) off", {"sched_params": {"minrtt": {"penalisation": False}}}, {}),
    ("RFC 2861 decay off", {"tcp": {"cwv": False}}, {}),
    ("PRR off", {"tcp": {"prr": False}}, {}),
    ("quick-ACK mode off", {"tcp": {"quickack": False}}, {}),
)
#: Runs per ablation cell (common random numbers, as the claims').
ABLATION_REPS = 3
#: Congestion controls single-path TCP cannot run, and what Linux runs on such a socket instead.
_SINGLE_PATH_CC = {"lia": "reno", "olia": "reno", "balia": "reno", "wvegas": "reno"}


def _variant_conn(base: Any, sched: str, change: dict[str, Any]) -> list[dict[str, Any]]:
    c = merge_into(_conn(base, sched)[0], {k: v for k, v in change.items() if k != "app"})
    if "app" in change:  # an application is replaced whole, not merged key by key
        c["app"] = dict(change["app"])
    if c.get("kind") == "tcp":
        c["cc"] = _SINGLE_PATH_CC.get(c["cc"], c["cc"])
        c.pop("sched_params", None)
    return [c]


def _ablation(ctx: Context, base: Any) -> Any:
    """Per variant and in-network buffer (30/60/90/150 KB on both paths, 20 vs 200 ms, the
    buffer table's cells): minRTT's aggregate, fast-path goodput and fast-path loss, its fast
    path's utilisation against single-path TCP, and (at 30 KB) STMS's gain over minRTT; means
    over ``ABLATION_REPS`` paired runs."""
    import pandas as pd

    from mptcplab.experiments._stms_claims import SPTCP

    paths = {f"{kb}KB": _paths(base, kb, "both") for kb in BUFFERS_KB}
    frames = []
    for k, (label, change, sc_change) in enumerate(ABLATIONS):
        conns = {s: _variant_conn(base, s, change) for s in ("minRTT", STMS, SPTCP)}
        sc = base.with_overrides(sc_change) if sc_change else base
        d = repeated(ctx, sc, {"connections": list(conns.values()), "paths": list(paths.values())}, ABLATION_REPS,
                     f"ablation-{k}")
        d["variant"] = label
        d["scheduler"] = _label(d, "connections", conns)
        d["buffer"] = _label(d, "paths", paths)
        frames.append(d)
    d = pd.concat(frames, ignore_index=True)
    d["loss"] = 100 * (d["link.fast.down.queue_drops"] + d["link.fast.down.loss_drops"]) / d["link.fast.down.arrived_packets"]
    rows = []
    for label, _, _ in ABLATIONS:
        for kb in BUFFERS_KB:
            cell = d[(d["variant"] == label) & (d["buffer"] == f"{kb}KB")]
            mr, st, sp = (cell[cell["scheduler"] == s] for s in ("minRTT", STMS, SPTCP))
            util = _paired(mr, sp, "sf.mptcp.fast.goodput_bps", lambda a, b: 100 * a / b)
            gains = _paired(st, mr, "conn.mptcp.goodput_bps", lambda a, b: 100 * (a / b - 1))
            rows.append({
                "variant": label,
                "in_network_buffer_kb": kb,
                "minrtt_aggregate_mbps": mr["conn.mptcp.goodput_bps"].mean() / 1e6,
                "minrtt_fast_mbps": mr["sf.mptcp.fast.goodput_bps"].mean() / 1e6,
                "minrtt_slow_mbps": mr["sf.mptcp.slow.goodput_bps"].mean() / 1e6,
                "minrtt_fast_loss_pct": mr["loss"].mean(),
                "minrtt_sndbuf_limited_s": mr["conn.mptcp.sndbuf_limited_time_s"].mean(),
                "sptcp_fast_mbps": sp["conn.mptcp.goodput_bps"].mean() / 1e6,
                "minrtt_fast_utilisation_pct": sum(util) / len(util),
                "stms_gain_pct": sum(gains) / len(gains),
            })
    return pd.DataFrame(rows)


def _ablation_text(abl: Any) -> str:
    """The ablation for the discussion: per variant, minRTT's aggregate and fast-path
    utilisation at each buffer, STMS's gain at 30 KB, and which of the buffer table's claims
    (and the in-network gain) hold there under their declared tolerances."""
    from mptcplab.experiments._stms_claims import CLAIMS
    from mptcplab.experiments.base import fmt

    by_id = {c.id: c for c in CLAIMS}
    parts = []
    for label, _, _ in ABLATIONS:
        v = abl[abl["variant"] == label].set_index("in_network_buffer_kb")
        held = [f"{kind}-{kb}KB" for kb in BUFFERS_KB
                for kind, col in (("overall", "minrtt_aggregate_mbps"), ("util", "minrtt_fast_utilisation_pct"))
                if by_id[f"{kind}-{kb}KB"].tolerance.holds(by_id[f"{kind}-{kb}KB"].paper, v.loc[kb, col])]
        gain = by_id["gain-in-network"]
        if gain.tolerance.holds(gain.paper, v.loc[30, "stms_gain_pct"]):
            held.append("gain-in-network")
        parts.append(
            f"{label}: minRTT aggregate " + " / ".join(fmt(v.loc[kb, "minrtt_aggregate_mbps"]) for kb in BUFFERS_KB)
            + " Mbit/s (slow path " + " / ".join(fmt(v.loc[kb, "minrtt_slow_mbps"]) for kb in BUFFERS_KB)
            + "), fast-path utilisation " + " / ".join(fmt(v.loc[kb, "minrtt_fast_utilisation_pct"]) for kb in BUFFERS_KB)
            + f" %, single-path TCP {fmt(v['sptcp_fast_mbps'].mean())} Mbit/s, fast-path loss at 150 KB "
            f"{fmt(v.loc[150, 'minrtt_fast_loss_pct'])} %, {STMS} {v.loc[30, 'stms_gain_pct']:+.0f} % over minRTT at 30 KB; "
            + (f"within tolerance: {', '.join(held)}" if held else "no buffer-table claim within tolerance"))
    return (f"**Ablation** (not counted; {ABLATION_REPS} paired runs per cell; 20 vs 200 ms, "
            f"{'/'.join(map(str, BUFFERS_KB))} KB on both paths; slides: aggregate 31 / 36 / 40.2 / 46.3 Mbit/s, "
            "utilisation 42.61 / 77.46 / 87.68 / 99.65 %, +25 % at the limited buffer): "
            + "; ".join(parts) + ".")
