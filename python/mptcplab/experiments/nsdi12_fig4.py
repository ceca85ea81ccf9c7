"""NSDI '12 Fig. 4 as replicated by seed 003: goodput vs receive buffer over WiFi + 3G.

Claims (declared in ``CLAIMS`` before any run): seed 003's key result (MPTCP + M1 + M2 with
600 KB or more of receive buffer fills both links, judged at every swept buffer from 600 KB on),
the receive buffer from which MPTCP + M1 + M2 stays above TCP, the mechanism it names for M2
(the higher-latency subflow's window is halved), its jitter result (high jitter makes MPTCP
worse than TCP), what its graphs a, b and a-htb show at 100–200 KB (no dip with TBF as it ran
it, a dip closer to the original Fig. 4(a) with HTB/netem packet limits), and two supporting
comparisons of the three MPTCP variants.
"""

from __future__ import annotations

import json
from typing import Any

from mptcplab.experiments._nsdi12_fig4_crossing import crossing, overtakes
from mptcplab.experiments._nsdi12_fig4_figure import (  # COLOURS, GRAPH: re-exported for readers
    COLOURS,
    GRAPH,
    figure,
)
from mptcplab.experiments.base import (
    Context,
    Measured,
    Result,
    fmt,
    mean_ci95,
    measured_mean,
    merge_into,
    repeated,
)
from mptcplab.models import buffers
from mptcplab.models import paper_values as pv

__all__ = ["ADV_WIN_SCALE", "CLAIMS", "COLOURS", "CONFIGS", "DIP_KB", "DIP_SHAPERS", "DIP_WINDOWS", "FULL_USE_KB", "GRAPH",
           "JITTER", "JITTER_CONFIGS", "JITTER_DUPTHRESH", "JITTER_IN_ORDER", "JITTER_ROWS", "JUDGED_KB", "LINKS_BPS", "NAME",
           "PAYLOAD_SHARE", "QUEUES", "RCVBUFS_KB", "SOURCE", "TBF_ABLATION", "TBF_ABLATION_CONFIGS", "TBF_ABLATION_KB",
           "TBF_BURST", "TBF_DEVICE", "TBF_READINGS", "TITLE", "WHOLE_BUFFER", "rcvbuf", "run", "window_bytes"]

NAME = "nsdi12-fig4"
TITLE = "Goodput vs receive buffer over WiFi + 3G (NSDI '12 Fig. 4, seed 003)"
SOURCE = "seed 003 (replication of Raiciu et al., NSDI 2012, Fig. 4; graphs a–e, a-htb)"

from mptcplab.experiments._nsdi12_fig4_claims import (
    ADV_WIN_SCALE,
    CLAIMS,
    CONFIGS,
    DIP_KB,
    DIP_SHAPERS,
    DIP_WINDOWS,
    FULL_USE_KB,
    JITTER,
    JITTER_CONFIGS,
    JITTER_DUPTHRESH,
    JITTER_IN_ORDER,
    JITTER_ROWS,
    JUDGED_KB,
    LINKS_BPS,
    PAYLOAD_SHARE,
    QUEUES,
    RCVBUFS_KB,
    TBF_ABLATION,
    TBF_ABLATION_CONFIGS,
    TBF_ABLATION_KB,
    TBF_BURST,
    TBF_DEVICE,
    TBF_READINGS,
    _kb_of,
    _tbf,
    rcvbuf,
    window_bytes,
)
from mptcplab.experiments._nsdi12_fig4_text import (
    _dip_text,
    _fill_ablation,
    _jitter_text,
    _m2_cost,
    _no_dip_readings,
)


def _base() -> Any:
    from mptcplab import load_scenario

    return load_scenario("nsdi12-wifi-3g", {"duration": "25s", "output.warmup": "5s"})


def _conn(base: Any, label: str) -> list[dict[str, Any]]:
    c = json.loads(json.dumps(base.data["connections"][0]))
    c.update(CONFIGS[label])
    return [c]


def _paths(base: Any, queues: tuple[Any, Any], jitter: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """The two links with their queues: a limit (str), or path keys such as a TBF (dict)."""
    paths = json.loads(json.dumps(base.data["paths"]))
    for p, q, j in zip(paths, queues, jitter or (None, None)):
        if isinstance(q, dict):
            p.update(json.loads(json.dumps(q)))
        else:
            p["queue"] = q
        if j:
            p["jitter"] = {"amount": j, "distribution": "pareto", "reorder": True}
    return paths


def _label(df: Any, key: str, variants: dict[str, Any]) -> Any:
    back = {json.dumps(v): k for k, v in variants.items()}
    return df[key].map(back)


def _penalisations(base: Any) -> tuple[Any, dict[str, int], dict[str, float | None]]:
    """One run of MPTCP + M1 + M2 at the key-result buffer with TBF as seed 003 ran it: the
    per-subflow penalisation series (cumulative), the count per subflow, and the first time."""
    import mptcplab
    from mptcplab.sweep import repeat_seed

    sc = base.with_overrides({"paths": _paths(base, QUEUES["TBF"]), "connections": _conn(base, "MPTCP + M1 + M2"),
                              "connections.mptcp.rcvbuf": rcvbuf(FULL_USE_KB), "output.timeseries": "100ms"})
    ts = mptcplab.run(sc, seed=repeat_seed(base.seed, 0)).timeseries
    sel = ts[ts["entity"].astype(str).str.startswith("mptcp/") & ts["metric"].isin(["penalisations", "cwnd_bytes"])]
    wide = sel.assign(subflow=sel["entity"].astype(str).str.removeprefix("mptcp/"), metric=sel["metric"].astype(str))
    wide = wide.pivot_table(index=["time_s", "subflow"], columns="metric", values="value", observed=True).reset_index()
    counts, first = {}, {}
    for sf, g in wide.groupby("subflow"):
        p = g["penalisations"]
        counts[str(sf)] = int(p.max()) if len(p) else 0
        first[str(sf)] = float(g.loc[p > 0, "time_s"].min()) if (p > 0).any() else None
    return wide, counts, first


#: The ablation (MPTCP + M1 + M2, TBF as seed 003 ran it, one run per buffer): the stack's mechanisms
#: off one at a time, as connection keys.
ABLATIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("linux-v0.9x (as run)", {}),
    ("penalisation (M2) off", {"sched_params": {"minrtt": {"opportunistic_retransmission": True, "penalisation": False}}}),
    ("M1 and M2 off", {"sched_params": {"minrtt": {"opportunistic_retransmission": False, "penalisation": False}}}),
    ("M2 by v0.89's test (penalisation_rule v0.9x)", {"sched_params": {"minrtt": {"penalisation_rule": "v0.9x"}}}),
    ("send buffer charged in payload bytes", {"buffer_accounting": "payload"}),
    ("RFC 2861 decay off", {"tcp": {"cwv": False}}),
    ("PRR off", {"tcp": {"prr": False}}),
    ("quick-ACK mode off", {"tcp": {"quickack": False}}),
)
#: The open facts outside the stack, one at a time: the window a buffer offers (the whole
#: `tcp_rmem`, as a `tcp_adv_win_scale` of 0 would give, against 3.2's three quarters), and TBF's
#: `latency` read as the paper's buffers.
WHOLE_BUFFER = "window = the whole tcp_rmem (tcp_adv_win_scale 0)"
PAPER_LATENCY = "TBF latency = the paper's buffers (80 ms, 2 s)"
NO_BURST = "TBF without the bucket's burst (the link's transmitter as shaper)"
SLOW_DEVICE = "a 100 Mbit/s device beneath TBF"
#: Receive buffers of the ablation: every judged buffer of the key result (600 KB to the largest).
ABLATION_KB = tuple(kb for kb in RCVBUFS_KB if kb >= FULL_USE_KB)


def _ablation(base: Any) -> Any:
    import pandas as pd

    import mptcplab

    queues = {PAPER_LATENCY: tuple(_tbf(lat) for lat in TBF_READINGS["latency = the paper's buffers"]),
              NO_BURST: tuple(_tbf(lat, device=None) for lat in TBF_READINGS["latency = the links' delays (as run)"]),
              SLOW_DEVICE: tuple(_tbf(lat, device="100Mbit") for lat in TBF_READINGS["latency = the links' delays (as run)"])}
    variants = [*ABLATIONS, *((label, {}) for label in (WHOLE_BUFFER, PAPER_LATENCY, NO_BURST, SLOW_DEVICE))]
    rows = []
    for label, change in variants:
        c = merge_into(_conn(base, "MPTCP + M1 + M2")[0], change)
        for kb in ABLATION_KB:
            sc = base.with_overrides({"paths": _paths(base, queues.get(label, QUEUES["TBF"])), "connections": [c],
                                      "connections.mptcp.rcvbuf": rcvbuf(kb, 0 if label == WHOLE_BUFFER else ADV_WIN_SCALE)})
            d = mptcplab.run(sc).metrics()
            rows.append({"variant": label, "rcvbuf_kb": kb,
                         "share_of_links_pct": 100 * d["conn.mptcp.goodput_bps"] / LINKS_BPS,
                         "wifi_goodput_mbps": d["sf.mptcp.wifi.goodput_bps"] / 1e6,
                         "g3_goodput_mbps": d["sf.mptcp.3g.goodput_bps"] / 1e6,
                         "mean_rtt_3g_s": d["sf.mptcp.3g.mean_rtt_s"],
                         "rwnd_limited_s": d["conn.mptcp.rwnd_limited_time_s"],
                         "penalisations": d["conn.mptcp.penalisations"],
                         "m1": d["conn.mptcp.opportunistic_retransmissions"]})
    return pd.DataFrame(rows)


def _tbf_ablation(ctx: Context, base: Any) -> Any:
    """Goodput and the 3G subflow's mean RTT (the loaded RTT seed 003 compared) per TBF reading."""
    conns = {lab: _conn(base, lab) for lab in TBF_ABLATION_CONFIGS}
    paths = {r: _paths(base, q) for r, q in TBF_ABLATION.items()}
    grid = {"connections": list(conns.values()), "paths": list(paths.values()),
            "connections.mptcp.rcvbuf": [rcvbuf(kb) for kb in TBF_ABLATION_KB]}
    d = repeated(ctx, base, grid, 1, "tbf-ablation")
    out = d.assign(reading=_label(d, "paths", paths), config=_label(d, "connections", conns),
                   rcvbuf_kb=_kb_of(d["connections.mptcp.rcvbuf"]))
    out["goodput_mbps"] = out["conn.mptcp.goodput_bps"] / 1e6
    out["mean_rtt_3g_ms"] = 1e3 * out["sf.mptcp.3g.mean_rtt_s"]
    return out[["reading", "config", "rcvbuf_kb", "goodput_mbps", "mean_rtt_3g_ms"]]


def _jitter_ablation(ctx: Context, base: Any) -> Any:
    """MPTCP + M1 + M2 / TCP over WiFi with high jitter at the key-result buffer, per variant and
    repetition (the seeds of the jitter runs; the dupthresh-3 row is the claim's own pairs)."""
    from concurrent.futures import ThreadPoolExecutor

    import pandas as pd

    import mptcplab
    from mptcplab.sweep import repeat_seed

    reps = ctx.reps(5, 3)
    todo = []
    for label, (dt, reorder) in JITTER_ROWS.items():
        paths = _paths(base, QUEUES["TBF"], JITTER["high"])
        for p in paths:
            p["jitter"]["reorder"] = reorder
        for config in ("MPTCP + M1 + M2", "TCP over WiFi"):
            c = merge_into(_conn(base, config)[0], {"tcp": {"dupthresh": dt}})
            sc = base.with_overrides({"paths": paths, "connections": [c],
                                      "connections.mptcp.rcvbuf": rcvbuf(FULL_USE_KB)})
            todo += [(label, config, r, sc) for r in range(reps)]
    with ThreadPoolExecutor(max(1, ctx.jobs)) as pool:
        goodput = list(pool.map(lambda t: mptcplab.run(t[3], seed=repeat_seed(base.seed, t[2])).metrics()
                                ["conn.mptcp.goodput_bps"] / 1e6, todo))
    runs = pd.DataFrame([{"variant": t[0], "config": t[1], "repeat": t[2], "goodput_mbps": g}
                         for t, g in zip(todo, goodput, strict=True)])
    wide = runs.pivot_table(index=["variant", "repeat"], columns="config", values="goodput_mbps").reset_index()
    wide["ratio"] = wide["MPTCP + M1 + M2"] / wide["TCP over WiFi"]
    return wide


def _dip_ablation(ctx: Context, base: Any) -> Any:
    """Regular MPTCP and MPTCP + M1 against TCP over WiFi over 100–200 KB, per window reading
    and shaper (one run each: no random component)."""
    from concurrent.futures import ThreadPoolExecutor

    import pandas as pd

    import mptcplab

    todo = [(w, sh, config, kb) for w in DIP_WINDOWS for sh in DIP_SHAPERS
            for config in ("TCP over WiFi", "MPTCP regular", "MPTCP + M1") for kb in DIP_KB]

    def one(t: tuple[str, str, str, int]) -> float:
        w, sh, config, kb = t
        q = tuple(_tbf(lat, device=DIP_SHAPERS[sh]) for lat in TBF_READINGS["latency = the links' delays (as run)"])
        sc = base.with_overrides({"paths": _paths(base, q), "connections": _conn(base, config),
                                  "connections.mptcp.rcvbuf": rcvbuf(kb, DIP_WINDOWS[w])})
        return mptcplab.run(sc).metrics()["conn.mptcp.goodput_bps"] / 1e6

    with ThreadPoolExecutor(max(1, ctx.jobs)) as pool:
        goodput = list(pool.map(one, todo))
    return pd.DataFrame([{"window": w, "shaper": sh, "config": c, "rcvbuf_kb": kb, "goodput_mbps": g}
                         for (w, sh, c, kb), g in zip(todo, goodput, strict=True)])


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.ticker import FuncFormatter

    base = _base()
    bufs = [rcvbuf(b) for b in RCVBUFS_KB]
    reps = ctx.reps(5, 3)

    conns = {lab: _conn(base, lab) for lab in CONFIGS}
    qpaths = {f"queue as {k}": _paths(base, q) for k, q in QUEUES.items()}
    grid = {"connections": list(conns.values()), "paths": list(qpaths.values()), "connections.mptcp.rcvbuf": bufs}
    d0 = repeated(ctx, base, grid, 1, "no-jitter")
    jconns = {lab: conns[lab] for lab in JITTER_CONFIGS}
    jpaths = {f"{k} jitter": _paths(base, QUEUES["TBF"], j) for k, j in JITTER.items()}
    grid = {"connections": list(jconns.values()), "paths": list(jpaths.values()), "connections.mptcp.rcvbuf": bufs}
    d1 = repeated(ctx, base, grid, reps, "jitter")
    for d, cv, pvv in ((d0, conns, qpaths), (d1, jconns, jpaths)):
        d["config"] = _label(d, "connections", cv)
        d["variant"] = _label(d, "paths", pvv)
    runs = pd.concat([d0, d1], ignore_index=True)
    runs["rcvbuf_kb"] = _kb_of(runs["connections.mptcp.rcvbuf"])

    def col(g: Any, name: str) -> float:
        return float(g[name].mean()) if name in g and g[name].notna().any() else float("nan")

    rows = []
    for (variant, config, kb), g in runs.groupby(["variant", "config", "rcvbuf_kb"], sort=False):
        m, ci, n = mean_ci95((g["conn.mptcp.goodput_bps"] / 1e6).tolist())
        rows.append({
            "variant": variant, "config": config, "rcvbuf_kb": kb, "goodput_mbps": m, "goodput_mbps_ci95": ci, "runs": n,
            "wifi_goodput_mbps": col(g, "sf.mptcp.wifi.goodput_bps") / 1e6,
            "g3_goodput_mbps": col(g, "sf.mptcp.3g.goodput_bps") / 1e6,
            "mean_rtt_3g_s": col(g, "sf.mptcp.3g.mean_rtt_s"),
            "penalisations": col(g, "conn.mptcp.penalisations"),
            "opportunistic_retransmissions": col(g, "conn.mptcp.opportunistic_retransmissions"),
            "duplicate_bytes": col(g, "conn.mptcp.duplicate_bytes"),
            "rwnd_limited_s": col(g, "conn.mptcp.rwnd_limited_time_s"),
        })
    table = pd.DataFrame(rows)
    csv = ctx.path("goodput_vs_rcvbuf.csv")
    table.to_csv(csv, index=False)

    def row(variant: str, config: str, kb: int) -> Any:
        return table[(table["variant"] == variant) & (table["config"] == config) & (table["rcvbuf_kb"] == kb)].iloc[0]

    def g(variant: str, config: str, kb: int) -> float:
        return float(row(variant, config, kb)["goodput_mbps"])

    def per_run(variant: str, config: str, kb: int) -> list[float]:
        sel = runs[(runs["variant"] == variant) & (runs["config"] == config) & (runs["rcvbuf_kb"] == kb)]
        return (sel.sort_values("repeat")["conn.mptcp.goodput_bps"] / 1e6).tolist()

    abl = _ablation(base)
    abl_csv = ctx.path("ablation.csv")
    abl.to_csv(abl_csv, index=False)

    tbf_abl = _tbf_ablation(ctx, base)
    tbf_csv = ctx.path("tbf_readings.csv")
    tbf_abl.to_csv(tbf_csv, index=False)

    dab = _dip_ablation(ctx, base)
    dab_csv = ctx.path("dip_ablation.csv")
    dab.to_csv(dab_csv, index=False)
    jab = _jitter_ablation(ctx, base)
    jab_csv = ctx.path("jitter_ablation.csv")
    jab.to_csv(jab_csv, index=False)

    tq, tp, tt = "queue as time", "queue as packets", "queue as TBF"
    wide, pen_counts, pen_first = _penalisations(base)
    pen_csv = ctx.path(f"penalisations_{FULL_USE_KB}kb.csv")
    wide.to_csv(pen_csv, index=False)
    figs = figure(ctx, table, [*qpaths, *jpaths], plt, FuncFormatter, LINKS_BPS, FULL_USE_KB)

    # Claims.
    measured: dict[str, Measured] = {}
    big = [kb for kb in JUDGED_KB if kb >= FULL_USE_KB]
    share = {kb: 100 * g(tq, "MPTCP + M1 + M2", kb) * 1e6 / LINKS_BPS for kb in RCVBUFS_KB}
    tbf_share = {kb: 100 * g(tt, "MPTCP + M1 + M2", kb) * 1e6 / LINKS_BPS for kb in RCVBUFS_KB}

    def fill_note(sh: dict[int, float]) -> tuple[int, str]:
        low = min(big, key=lambda kb: sh[kb])
        filled = [kb for kb in JUDGED_KB if all(sh[k] >= 90 for k in JUDGED_KB if k >= kb)]
        return low, (f"lowest at {low} KB; " + ", ".join(f"{fmt(sh[kb])} % at {kb} KB" for kb in big) + "; "
                     + (f"≥ 90 % from {min(filled)} KB on" if filled else "no buffer reaches 90 % with every larger one")
                     + "; one run per buffer (no random component)")

    low_tbf, note_tbf = fill_note(tbf_share)
    low_kb, note_time = fill_note(share)
    best_kb = max(RCVBUFS_KB, key=lambda kb: share[kb])
    measured["fills-both-links"] = Measured(
        tbf_share[low_tbf], note=note_tbf + f"; WiFi {fmt(row(tt, 'MPTCP + M1 + M2', FULL_USE_KB)['wifi_goodput_mbps'])} "
                                            f"and 3G {fmt(row(tt, 'MPTCP + M1 + M2', FULL_USE_KB)['g3_goodput_mbps'])} "
                                            f"Mbit/s at {FULL_USE_KB} KB")
    measured["fills-both-links-time-queues"] = Measured(share[low_kb], note=note_time)
    name = {"wifi": "WiFi", "3g": "3G"}
    hit = [name.get(s, s) for s, c in sorted(pen_counts.items()) if c > 0]
    who = hit[0] if len(hit) == 1 else ("none" if not hit else "both")
    measured["penalised-subflow"] = Measured(
        who, note=", ".join(f"{name.get(s, s)}: {c} halvings" + (f", first at {fmt(pen_first[s])} s" if pen_first[s] else "")
                            for s, c in sorted(pen_counts.items())))
    jit_ratio = {}
    for level in JITTER:
        v = f"{level} jitter"
        rs = [a / b for a, b in zip(per_run(v, "MPTCP + M1 + M2", FULL_USE_KB), per_run(v, "TCP over WiFi", FULL_USE_KB))]
        jit_ratio[level] = measured_mean(rs)
    hj = jit_ratio["high"]
    measured["high-jitter"] = Measured(
        hj.value, hj.ci95, hj.n,
        note=f"paired runs; MPTCP + M1 + M2 {fmt(g('high jitter', 'MPTCP + M1 + M2', FULL_USE_KB))}, TCP over WiFi "
             f"{fmt(g('high jitter', 'TCP over WiFi', FULL_USE_KB))} Mbit/s; low jitter {fmt(jit_ratio['low'].value)}")

    def dip_ratio(variant: str, num: str, den: str) -> float:
        return sum(g(variant, num, kb) / g(variant, den, kb) for kb in DIP_KB) / len(DIP_KB)

    def per_kb(variant: str, num: str, den: str) -> str:
        return ", ".join(f"{kb} KB {fmt(g(variant, num, kb))} vs {fmt(g(variant, den, kb))}" for kb in DIP_KB) + " Mbit/s"

    measured["dip-packet-queues"] = Measured(dip_ratio(tp, "MPTCP regular", "TCP over WiFi"),
                                             note=per_kb(tp, "MPTCP regular", "TCP over WiFi"))
    measured["no-dip-time-queues"] = Measured(
        dip_ratio(tt, "MPTCP regular", "TCP over WiFi"),
        note=per_kb(tt, "MPTCP regular", "TCP over WiFi") + f"; with the buffers as time {fmt(dip_ratio(tq, 'MPTCP regular', 'TCP over WiFi'))}")
    measured["no-dip-graph-b"] = Measured(
        dip_ratio(tt, "MPTCP + M1", "TCP over WiFi"),
        note=per_kb(tt, "MPTCP + M1", "TCP over WiFi") + f"; with the buffers as time {fmt(dip_ratio(tq, 'MPTCP + M1', 'TCP over WiFi'))}")

    def pairs(variant: str) -> dict[int, tuple[float, float]]:
        return {kb: (g(variant, "MPTCP + M1 + M2", kb), g(variant, "TCP over WiFi", kb)) for kb in JUDGED_KB}

    measured["overtakes-tcp"] = overtakes(pairs(tt), crossing(pairs(tq)))
    measured["m2-vs-m1"] = Measured(dip_ratio(tt, "MPTCP + M1 + M2", "MPTCP + M1"),
                                    note=per_kb(tt, "MPTCP + M1 + M2", "MPTCP + M1")
                                    + f"; with the buffers as time {fmt(dip_ratio(tq, 'MPTCP + M1 + M2', 'MPTCP + M1'))}")
    measured["m1m2-vs-regular"] = Measured(dip_ratio(tt, "MPTCP + M1 + M2", "MPTCP regular"),
                                           note=per_kb(tt, "MPTCP + M1 + M2", "MPTCP regular")
                                           + f"; with the buffers as time {fmt(dip_ratio(tq, 'MPTCP + M1 + M2', 'MPTCP regular'))}")

    # Discussion, from the numbers.
    r600 = row(tt, "MPTCP + M1 + M2", FULL_USE_KB)
    tcp_w, tcp_3g = g(tt, "TCP over WiFi", FULL_USE_KB), g(tt, "TCP over 3G", FULL_USE_KB)
    dup_mbps = r600["duplicate_bytes"] * 8 / 25 / 1e6
    rtt_full = 2 * pv.NSDI12_SETUP["g3_delay"].value + pv.NSDI12_SETUP["g3_buffer"].value
    rates = [pv.NSDI12_SETUP["wifi_rate"].value, pv.NSDI12_SETUP["g3_rate"].value]
    base_rtts = [2 * pv.NSDI12_SETUP["wifi_delay"].value, 2 * pv.NSDI12_SETUP["g3_delay"].value]
    rule_base = buffers.receive_buffer_bytes(rates, base_rtts, factor=1.0) / 1e3
    rule_meas = buffers.receive_buffer_bytes(rates, [base_rtts[0], float(r600["mean_rtt_3g_s"])], factor=1.0) / 1e3
    rule_full = buffers.receive_buffer_bytes(rates, [base_rtts[0], rtt_full], factor=1.0) / 1e3
    r4, r4q = row(tt, "MPTCP + M1 + M2", RCVBUFS_KB[-1]), row(tq, "MPTCP + M1 + M2", RCVBUFS_KB[-1])
    best_tbf = max(RCVBUFS_KB, key=lambda kb: tbf_share[kb])
    qdiff = max(abs(g(tq, c, kb) - g(tp, c, kb)) for c in CONFIGS for kb in RCVBUFS_KB)
    dip_t = dip_ratio(tq, "MPTCP regular", "TCP over WiFi")
    dip_tbf = measured["no-dip-time-queues"].value

    def tbf_cell(reading: str, config: str, kb: int, col: str) -> float:
        sel = tbf_abl[(tbf_abl["reading"] == reading) & (tbf_abl["config"] == config) & (tbf_abl["rcvbuf_kb"] == kb)]
        return float(sel[col].iloc[0])
    stalled = int((runs["conn.mptcp.goodput_bps"] < 0.1e6).sum())
    discussion = "\n".join([
        f"- **Both links filled?** With TBF as seed 003 ran it, at {FULL_USE_KB} KB MPTCP + M1 + M2 delivers "
        f"{fmt(r600['goodput_mbps'])} Mbit/s, {fmt(tbf_share[FULL_USE_KB])} % of the {fmt(LINKS_BPS / 1e6)} Mbit/s sum of the links, while TCP alone gets "
        f"{fmt(tcp_w)} Mbit/s over WiFi and {fmt(tcp_3g)} over 3G. Against those, the larger shortfall is on "
        f"{'3G' if tcp_3g - r600['g3_goodput_mbps'] > tcp_w - r600['wifi_goodput_mbps'] else 'WiFi'}: WiFi carries "
        f"{fmt(r600['wifi_goodput_mbps'])} Mbit/s of 8, 3G {fmt(r600['g3_goodput_mbps'])} of 2. The connection "
        f"is receive-window-limited for {fmt(r600['rwnd_limited_s'])} s of the 25 s run; M1 resends "
        f"{fmt(r600['opportunistic_retransmissions'])} segments over WiFi (data received twice: "
        f"{fmt(dup_mbps)} Mbit/s) and M2 halves the 3G window {fmt(r600['penalisations'])} times. The 3G subflow's "
        f"mean RTT is {fmt(1e3 * r600['mean_rtt_3g_s'])} ms, so NSDI '12's Σ BW × RTT_max is {fmt(rule_meas)} KB "
        f"with it ({fmt(rule_base)} KB at the base RTTs, {fmt(rule_full)} KB with the 2 s 3G queue full): {FULL_USE_KB} KB "
        f"({fmt(window_bytes(FULL_USE_KB) / 1e3)} KB of window) "
        f"{'exceeds' if window_bytes(FULL_USE_KB) / 1e3 > rule_meas else 'falls short of'} the rule. The best share is {fmt(tbf_share[best_tbf])} % at {best_tbf} KB. "
        f"**Finding, at 2 and 4 MB** (buffers seed 003 does not report): "
        + ", ".join(f"{fmt(tbf_share[kb])} % at {kb // 1000} MB" for kb in RCVBUFS_KB if kb >= 2000)
        + f" with TBF as run (3G mean RTT {fmt(1e3 * r4['mean_rtt_3g_s'])} ms, {fmt(r4['penalisations'])} penalisations, "
        f"receive-window-limited {fmt(r4['rwnd_limited_s'])} s at {RCVBUFS_KB[-1] // 1000} MB), and "
        + ", ".join(f"{fmt(share[kb])} % at {kb // 1000} MB" for kb in RCVBUFS_KB if kb >= 2000)
        + f" with the buffers as time (best {fmt(share[best_kb])} % at {best_kb} KB; 3G mean RTT "
        f"{fmt(1e3 * r4q['mean_rtt_3g_s'])} ms, {fmt(r4q['penalisations'])} penalisations at "
        f"{RCVBUFS_KB[-1] // 1000} MB)"
        + (": with the paper's 2 s of 3G buffer a larger window lets more data wait in the 3G queue and its RTT "
           "grow, and the in-order window holds WiFi back; TBF's 33 750 B 3G queue caps that RTT."
           if share[RCVBUFS_KB[-1]] < 90 <= tbf_share[RCVBUFS_KB[-1]] else "."),
        f"- **M2's target.** In the {FULL_USE_KB} KB run the penalisation series counts "
        + ", ".join(f"{pen_counts[s]} halvings on {name.get(s, s)}" for s in sorted(pen_counts))
        + f": M2 acted on {'the higher-latency 3G subflow, as seed 003 describes' if who == '3G' else who}.",
        f"- **The dip at 100–200 KB.** Regular MPTCP reaches {fmt(dip_t)}× TCP over WiFi with time-limited queues "
        f"and {fmt(measured['dip-packet-queues'].value)}× with packet limits; the two queue kinds differ by at most "
        f"{fmt(qdiff)} Mbit/s anywhere in the sweep. At a constant link rate 80 ms and 53 packets (2 s and 333 packets) "
        "bound the same backlog, so the engine shows one behaviour for both, the one seed 003 saw with HTB/netem limits "
        "(where it measured a loaded 3G RTT near 2 s). With TBF as seed 003 ran it (tc-tbf's limit rate · latency + burst, "
        "the links' delays as `latency`) regular MPTCP reaches "
        f"{fmt(dip_tbf)}× TCP over WiFi ({per_kb(tt, 'MPTCP regular', 'TCP over WiFi')}), and the loaded 3G RTT (TCP over "
        f"3G at {FULL_USE_KB} KB) is {fmt(tbf_cell(next(iter(TBF_READINGS)), 'TCP over 3G', FULL_USE_KB, 'mean_rtt_3g_ms'))} ms "
        f"against {fmt(tbf_cell('latency = the paper' + chr(39) + 's buffers', 'TCP over 3G', FULL_USE_KB, 'mean_rtt_3g_ms'))} "
        "ms with the paper's buffers as `latency`: only the delays reading gives the 'much lower' loaded RTT seed 003 "
        "measured under TBF. M1 + M2 lifts regular MPTCP by "
        f"{fmt(measured['m1m2-vs-regular'].value)}× over 100–200 KB and M1 alone by "
        f"{fmt(sum(g(tq, 'MPTCP + M1', kb) / g(tq, 'MPTCP regular', kb) for kb in DIP_KB) / len(DIP_KB))}×.",
        f"- **Jitter.** With high jitter MPTCP + M1 + M2 gets {fmt(hj.value)}× TCP over WiFi at {FULL_USE_KB} KB "
        f"(low jitter {fmt(jit_ratio['low'].value)}×). The reference moves too (TBF as run, with and without high "
        f"jitter): TCP over WiFi gets {fmt(g('high jitter', 'TCP over WiFi', FULL_USE_KB))} and "
        f"{fmt(g(tt, 'TCP over WiFi', FULL_USE_KB))} Mbit/s, TCP over 3G "
        f"{fmt(g('high jitter', 'TCP over 3G', FULL_USE_KB))} and {fmt(g(tt, 'TCP over 3G', FULL_USE_KB))}, MPTCP + M1 + "
        f"M2 {fmt(g('high jitter', 'MPTCP + M1 + M2', FULL_USE_KB))} and {fmt(g(tt, 'MPTCP + M1 + M2', FULL_USE_KB))}. "
        + (f"{stalled} of {len(runs)} runs deliver under 0.1 Mbit/s" if stalled else
           f"None of the {len(runs)} runs drops to zero")
        + " (seed 003 saw some, and suspects iperf).",
        "- **Ablation of the key result** (not counted; MPTCP + M1 + M2, TBF as run, one change at a time, one run "
        f"per buffer; lowest share of the {fmt(LINKS_BPS / 1e6)} Mbit/s over the judged {FULL_USE_KB} KB–"
        f"{RCVBUFS_KB[-1] // 1000} MB, table 'ablation'): " + _fill_ablation(abl) + " " + _m2_cost(abl),
        "- **TBF readings** (not counted; one run each; regular MPTCP / TCP over WiFi over 100–200 KB, MPTCP + M1 + M2 "
        f"at {FULL_USE_KB} KB and 1 MB, loaded 3G RTT of TCP over 3G at {FULL_USE_KB} KB): " + "; ".join(
            f"{r}: " + ", ".join(
                [f"{fmt(sum(tbf_cell(r, 'MPTCP regular', kb, 'goodput_mbps') for kb in DIP_KB) / len(DIP_KB) / g(tq, 'TCP over WiFi', 150))}× "
                 "(TCP over WiFi at 150 KB as reference)",
                 f"M1 + M2 {fmt(tbf_cell(r, 'MPTCP + M1 + M2', FULL_USE_KB, 'goodput_mbps'))} and "
                 f"{fmt(tbf_cell(r, 'MPTCP + M1 + M2', 1000, 'goodput_mbps'))} Mbit/s",
                 f"3G RTT {fmt(tbf_cell(r, 'TCP over 3G', FULL_USE_KB, 'mean_rtt_3g_ms'))} ms"])
            for r in TBF_ABLATION) + ". " + _no_dip_readings(tbf_abl, g(tq, "TCP over WiFi", 150)),
        _dip_text(dab),
        _jitter_text(jab),
    ])

    setup = (
        "The bundled scenario `nsdi12-wifi-3g`: WiFi 8 Mbit/s, 10 ms one way, 80 ms of buffer; 3G 2 Mbit/s, 75 ms "
        "one way, 2 s of buffer; LIA; bulk transfer; the out-of-tree stack the replication ran (Linux 3.2 with the "
        "MPTCP kernel of its time, M1 and M2 switchable by the maintainer's patch: `stack = \"linux-v0.9x\"`, whose "
        "minRTT, full-mesh joins, PRR (Linux ≥ 3.2), quick-ACK mode, RFC 2861's decay and one-MSS skbs charged to "
        "the meta socket's send buffer that kernel had; its TCP small queues, from Linux 3.6, never act with the "
        "queues in the links). That kernel predates v0.89's scheduler rewrite, so M2 applies the older test "
        "(`penalisation_rule = \"v0.88\"`: the holder of the oldest data is halved when its cwnd/SRTT is below the "
        "caller's, at most once per holder SRTT). Measured as seed 003 did (27 s runs, the first 5 and last 2 s "
        "ignored): 25 s runs, goodput over [5 s, 25 s]. The receive buffer (`tcp_rmem` min = default = max in the "
        "replication: 'sysctl -w net.ipv4.tcp_rmem=10240 10240 10240') applies to every connection, and offers the "
        "window Linux 3.2 turns it into ('We use a modified Linux 3.2.0 kernel'): `tcp_win_from_space` with that "
        "kernel's `tcp_adv_win_scale` = 2 (1 from Linux 3.4 on) gives `space − space/4`, so 600 KB of buffer offers "
        "450 000 B of window; the x-axis is the `tcp_rmem` value. Deviation: received data held out of order is charged "
        "its payload bytes (the profile's payload accounting), where 3.2 charges the skb's truesize. Lines: single-path TCP (Reno) over WiFi and over 3G, MPTCP with "
        "plain minRTT (regular), + opportunistic retransmission (M1), + M1 and penalisation (M2).\n\n"
        "Both queue semantics of seed 003: the buffers as time (80 ms, 2 s: the TBF `latency` the original authors "
        "used) and as packet limits (80 ms × 8 Mbit/s ≈ 53 and 2 s × 2 Mbit/s ≈ 333 packets of 1500 B: the "
        "HTB/netem `limit` the replication first used). The jitter variants add netem-like Pareto delay variation "
        "(WiFi 0.5 / 2.5 ms, 3G 7.5 / 37.5 ms, low / high) to both directions with TBF as run (below), letting "
        "packets overtake each other as netem's jitter did; only TCP and MPTCP + M1 + M2 run with jitter, as in "
        "seed 003.\n\n"
        "TBF as seed 003 ran it (graphs a–e: 'All other measurements were taken using the TBF queuing discipline'): "
        "'the authors used TBF (specifically through the \"latency\" argument to the tbf qdisc)' and 'we needed to make a "
        "small change to [Mininet] in order to set the delay using the \"latency\" argument to the TBF qdisc'. tc-tbf turns "
        "`latency` into the byte limit rate · latency + burst; with the paper's 2 s that is the 2 s of 3G queue the "
        "replication measured with HTB, while under TBF it found 'the RTT under load was much lower' and 'the maximum "
        "queueing delay described in the paper and measured under TBF are different'. So `latency` is the links' delays "
        f"(10 ms, 75 ms), the bucket Mininet's `burst 15000`: limits 25 000 B and 33 750 B, behind netem's default 1000 "
        "packets. This departs from the layout stock Mininet builds: its `TCIntf` adds `tbf rate … burst 15000 latency …` "
        "as root qdisc (handle 5:) and the delay's netem as its child (`parent 5:1`), and a child grafted under TBF "
        "replaces TBF's own byte fifo, so the limit tc derives from `latency` never applies and netem's `limit` (1000 "
        "packets by default: 6 s at 2 Mbit/s) is the queue. That layout cannot give the 'much lower' loaded RTT seed 003 "
        "measured under TBF, and seed 003 changed Mininet to pass the delay as `latency` without saying how the qdiscs "
        "were then stacked; the reading here is the one that gives the lower RTT it reports, and a layout Linux builds: "
        "netem as root with TBF as its child (tc-netem(8)'s rate-control example), where TBF's limit does apply. TBF is "
        "the shaper: Mininet shapes with `tbf rate <bw>Mbit` (the link's rate, no `peakrate`) on a veth interface, "
        "which has no rate of its own, so a packet leaves when the bucket holds its length (`tbf_dequeue`) and a full "
        "bucket lets 15 000 B leave back to back (`aqm.device = \"10Gbit\"` stands for the veth; at most burst + "
        "rate · τ bytes leave in any τ). Mininet's layout and the "
        "reading with the delay carried by `latency` alone (no netem delay) are rows of the TBF ablation. Every graph a, "
        "b and c claim (the key result, the crossing, the mechanism claims and the dips) is judged on this variant, "
        "because seed 003 ran graphs a–e on TBF; the key result with the paper's buffers as time (NSDI '12's stated "
        "setup) is shown beside it as an alternative reading (not counted), and the other claims' notes give their "
        "values with the buffers as time. The jitter runs (graphs d and e) use TBF as run.\n\n"
        f"How the claims are measured: 'fully utilize both links' ('600KB or more', no upper end stated, so every "
        f"swept buffer from {FULL_USE_KB} KB to {RCVBUFS_KB[-1] // 1000} MB is judged) is the lowest goodput of MPTCP + "
        f"M1 + M2 over those buffers, as a share of the {fmt(LINKS_BPS / 1e6)} Mbit/s sum of the link "
        "rates; the dip is the mean ratio of regular MPTCP to TCP over WiFi at 100, 150 and 200 KB (where seed 003 "
        f"looked for it); jitter is the ratio of paired runs at {FULL_USE_KB} KB. The subflow M2 penalised is read "
        f"from the per-subflow penalisation series of one {FULL_USE_KB} KB run.\n\n"
        "Assumptions left open: the 100 Mbit/s, 0.1 ms server link is not a bottleneck and is left out; single-path "
        "TCP is Reno; the window is 3.2's three quarters of the buffer (the whole buffer is an ablation row); the device "
        "beneath TBF is 10 Gbit/s for the veth's absent rate (a 100 Mbit/s device and the link's transmitter as shaper "
        "are ablation rows); the sweep's buffers (10 KB to 4 MB; seed 003 gives its x-axis only as a figure) are this "
        "project's choice. Runs without "
        f"jitter have no random component (one run per point); jitter runs are repeated ({reps} per point; error bars "
        "in the figure: 95 % confidence intervals)."
    )
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion,
                  {"goodput vs receive buffer": csv, f"penalisation series ({FULL_USE_KB} KB)": pen_csv,
                   "ablation": abl_csv, "TBF readings (ablation)": tbf_csv, "dip ablation": dab_csv, "jitter ablation": jab_csv}, figs)


