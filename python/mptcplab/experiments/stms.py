"""STMS slides (seed 002): the RTT table, the in-network buffer table, the mechanism the slides
name for it (more packet loss on MPTCP's fast path than on single-path TCP's), STMS's gains
with a limited in-network and a limited host buffer, out-of-order latency, and changing paths,
for minRTT, ECF and both STMS variants.

The claims are declared in ``CLAIMS`` before any run. The host buffer of the "20% improvement
when receive/send buffer is limited." claim is not stated by the slides; the value shown is read
at a rule (:data:`HOST_LIMITED`), not fitted, the claim is not testable, and the whole
host-buffer sweep is reported beside it. The RTT table's in-network buffer is not stated either; both of its columns are judged by one
rule, :data:`RTT_COLUMN_RULE`, over every buffer the slides name.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mptcplab.experiments._stms_ablation import ABLATION_REPS, ABLATIONS, _ablation, _ablation_text
from mptcplab.experiments._stms_claims import (
    _T2,
    ADMIT_TOLERANCE,
    BUFFERS_KB,
    CLAIMS,
    COLOURS,
    DYNAMIC_DURATION,
    FREE_SAMPLE,
    HOST_BUFFERS,
    HOST_CLAIM_NET,
    HOST_GAIN_RULE,
    HOST_LIMITED,
    HOST_LIMITED_BYTES,
    RATE_BPS,
    READINGS,
    RTT_COLUMN_RULE,
    RTTS_S,
    SCHEDULERS,
    SLOW_BDP,
    SPTCP,
    STMS,
)
from mptcplab.experiments._stms_figures import _figures
from mptcplab.experiments._stms_runs import _base, _conn, _free_space, _kb, _label, _paired, _paths
from mptcplab.experiments._stms_text import _discussion, _setup
from mptcplab.experiments.base import (
    Context,
    Measured,
    Result,
    fmt,
    mean_ci95,
    measured_mean,
    repeated,
)

__all__ = ["ABLATIONS", "ABLATION_REPS", "BUFFERS_KB", "CLAIMS", "COLOURS", "HOST_BUFFERS", "HOST_CLAIM_NET", "HOST_LIMITED",
           "HOST_LIMITED_BYTES", "NAME", "RATE_BPS", "READINGS", "RTTS_S", "SCHEDULERS", "SLOW_BDP", "SOURCE", "SPTCP", "STMS",
           "TITLE", "run"]

NAME = "stms"
TITLE = "STMS vs minRTT and ECF under limited buffers (STMS slides)"
SOURCE = "seed 002, slides 'Host buffer is not the only bottleneck', 'Big in-network buffer requirement', Microbenchmarks, Macrobenchmarks"


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    import mptcplab
    from mptcplab.sweep import repeat_seed
    from mptcplab.units import parse_duration

    reps = ctx.reps(10, 4)
    base = _base()
    labels = [*SCHEDULERS, SPTCP]

    # Tables 1 and 2: every scheduler × every in-network buffer × both readings, and 20 vs 20 ms.
    conns = {lab: _conn(base, lab) for lab in labels}
    paths = {}
    for reading in READINGS:
        for b in BUFFERS_KB:
            paths[f"{reading}/{b}KB/200ms"] = _paths(base, b, reading)
        for b in BUFFERS_KB if reading == "both" else (30, 150):
            paths[f"{reading}/{b}KB/20ms"] = _paths(base, b, reading, slow_delay="10ms")
    df = repeated(ctx, base, {"connections": list(conns.values()), "paths": list(paths.values())}, reps, "tables")
    df["scheduler"] = _label(df, "connections", conns)
    df["case"] = _label(df, "paths", paths)
    df[["reading", "buffer", "rtt"]] = df["case"].str.split("/", expand=True)
    df["fast_loss_pct"] = 100 * (df["link.fast.down.queue_drops"] + df["link.fast.down.loss_drops"]) / df[
        "link.fast.down.arrived_packets"]
    df["aggregate_mbps"] = df["conn.mptcp.goodput_bps"] / 1e6
    df["fast_mbps"] = df["sf.mptcp.fast.goodput_bps"] / 1e6
    df["ooo_mean_ms"] = df["conn.mptcp.ooo_delay.mean_s"] * 1e3
    df["ooo_p99_ms"] = df["conn.mptcp.ooo_delay.p99_s"] * 1e3
    df["rwnd_limited_s"] = df["conn.mptcp.rwnd_limited_time_s"]
    df["sndbuf_limited_s"] = df["conn.mptcp.sndbuf_limited_time_s"]

    def runs(reading: str, buf: str, rtt: str, sched: str) -> Any:
        return df[(df["reading"] == reading) & (df["buffer"] == buf) & (df["rtt"] == rtt) & (df["scheduler"] == sched)]

    rows = []
    for (reading, buf, rtt, sched), g in df.groupby(["reading", "buffer", "rtt", "scheduler"], sort=False):
        r: dict[str, Any] = {"reading": reading, "in_network_buffer": buf, "slow_rtt": rtt, "scheduler": sched, "runs": len(g)}
        for col in ("aggregate_mbps", "fast_mbps", "fast_loss_pct", "ooo_mean_ms", "ooo_p99_ms", "rwnd_limited_s",
                    "sndbuf_limited_s"):
            m, ci, _ = mean_ci95(g[col].tolist())
            r[col], r[col + "_ci95"] = m, ci
        if sched != SPTCP:
            u = measured_mean(_paired(g, runs(reading, buf, rtt, SPTCP), "fast_mbps", lambda a, b: a / b))
            r["fast_utilisation"], r["fast_utilisation_ci95"] = u.value, u.ci95
        rows.append(r)
    table = pd.DataFrame(rows)
    table_csv = ctx.path("tables.csv")
    table.to_csv(table_csv, index=False)

    # Host-buffer sweep (fast reading, 30 and 150 KB of fast-path buffer).
    hconns = {f"{lab}|{h}": _conn(base, lab, h) for lab in SCHEDULERS for h in HOST_BUFFERS}
    hpaths = {f"{b}KB": _paths(base, b, "fast") for b in (30, 150)}
    hd = repeated(ctx, base, {"connections": list(hconns.values()), "paths": list(hpaths.values())}, reps, "host")
    hd[["scheduler", "host_buffer"]] = _label(hd, "connections", hconns).str.split("|", expand=True)
    hd["in_network_buffer"] = _label(hd, "paths", hpaths)
    hd["aggregate_mbps"] = hd["conn.mptcp.goodput_bps"] / 1e6

    def hruns(buf: str, host: str, sched: str) -> Any:
        return hd[(hd["in_network_buffer"] == buf) & (hd["host_buffer"] == host) & (hd["scheduler"] == sched)]

    hrows = []
    for (buf, host, sched), g in hd.groupby(["in_network_buffer", "host_buffer", "scheduler"], sort=False):
        m, ci, n = mean_ci95(g["aggregate_mbps"].tolist())
        rw, _, _ = mean_ci95(g["conn.mptcp.rwnd_limited_time_s"].tolist())
        sl, _, _ = mean_ci95(g["conn.mptcp.sndbuf_limited_time_s"].tolist())
        gain = measured_mean(_paired(g, hruns(buf, host, "minRTT"), "aggregate_mbps", lambda a, b: 100 * (a / b - 1)))
        hrows.append({"in_network_buffer": buf, "host_buffer": host, "host_buffer_kb": _kb(host), "scheduler": sched,
                      "aggregate_mbps": m, "aggregate_mbps_ci95": ci, "runs": n, "rwnd_limited_s": rw, "sndbuf_limited_s": sl,
                      "gain_over_minrtt_pct": gain.value, "gain_over_minrtt_pct_ci95": gain.ci95})
    host = pd.DataFrame(hrows)
    host_csv = ctx.path("host_buffer_sweep.csv")
    host.to_csv(host_csv, index=False)

    # Changing path conditions, with the host buffer of the host-buffer claim.
    dyn_paths = _paths(base, 30, "fast")
    for p in dyn_paths:
        if p["name"] == "slow":
            p["schedule"] = [{"at": "10s", "delay": "50ms"}, {"at": "20s", "delay": "150ms"}]
        else:
            p["schedule"] = [{"at": "15s", "rate": "15Mbit"}, {"at": "25s", "rate": "30Mbit"}]
    dconns = {lab: _conn(base, lab, HOST_LIMITED) for lab in SCHEDULERS}
    dyn_base = base.with_overrides({"paths": dyn_paths, "duration": DYNAMIC_DURATION})
    dd = repeated(ctx, dyn_base, {"connections": list(dconns.values())}, reps, "dynamic")
    dd["scheduler"] = _label(dd, "connections", dconns)
    dyn_rows, dyn_ts = [], []
    for lab in SCHEDULERS:
        m, ci, n = mean_ci95((dd[dd["scheduler"] == lab]["conn.mptcp.goodput_bps"] / 1e6).tolist())
        dyn_rows.append({"scheduler": lab, "aggregate_mbps": m, "aggregate_mbps_ci95": ci, "runs": n})
        res = mptcplab.run(dyn_base.with_overrides({"connections": dconns[lab], "output.timeseries": "500ms"}),
                           seed=repeat_seed(dyn_base.seed, 0))
        ts = res.timeseries
        sel = ts[(ts["entity"] == "mptcp") & (ts["metric"] == "delivered_bytes")]
        t, v = sel["time_s"].tolist(), sel["value"].tolist()
        for k in range(1, len(t)):
            dyn_ts.append({"scheduler": lab, "time_s": t[k], "goodput_mbps": (v[k] - v[k - 1]) * 8 / (t[k] - t[k - 1]) / 1e6})
    dyn = pd.DataFrame(dyn_rows)
    dyn_csv = ctx.path("dynamic.csv")
    pd.DataFrame(dyn_ts).to_csv(ctx.path("dynamic_timeseries.csv"), index=False)
    dyn.to_csv(dyn_csv, index=False)

    figs = _figures(ctx, table, host, pd.DataFrame(dyn_ts), plt)

    # Measured values of the declared claims.
    def cell(reading: str, buf: str, rtt: str, sched: str) -> Any:
        return table[(table["reading"] == reading) & (table["in_network_buffer"] == buf) & (table["slow_rtt"] == rtt)
                     & (table["scheduler"] == sched)].iloc[0]

    measured: dict[str, Measured] = {}
    for rtt in ("200ms", "20ms"):
        measured.update(_rtt_column(runs, rtt))
    util: dict[str, dict[int, float]] = {rd: {} for rd in READINGS}
    for reading in READINGS:
        for kb in BUFFERS_KB:
            b = f"{kb}KB"
            u = measured_mean(_paired(runs(reading, b, "200ms", "minRTT"), runs(reading, b, "200ms", SPTCP), "fast_mbps",
                                      lambda a, s: 100 * a / s))
            util[reading][kb] = float(u.value)
            sp = cell(reading, b, "200ms", SPTCP).aggregate_mbps
            fast = cell(reading, b, "200ms", "minRTT").fast_mbps
            note = f"fast path {fmt(fast)} Mbit/s (slides {fmt(_T2[BUFFERS_KB.index(kb)].mptcp_fast_path_bps.value / 1e6)}), " \
                   f"SPTCP {fmt(sp)} (slides {fmt(_T2[BUFFERS_KB.index(kb)].sptcp_fast_bps.value / 1e6)}); paired runs"
            if reading == "both":
                measured[f"util-{kb}KB"] = Measured(u.value, u.ci95, u.n, note)
                measured[f"overall-{kb}KB"] = measured_mean(
                    runs(reading, b, "200ms", "minRTT")["aggregate_mbps"].tolist(),
                    note=f"buffer on the fast path only: {fmt(cell('fast', b, '200ms', 'minRTT').aggregate_mbps)}")
            elif kb == 30:
                measured["util-30KB-fast-only"] = Measured(u.value, u.ci95, u.n, note)

    diff = measured_mean(_paired(runs("both", "30KB", "200ms", "minRTT"), runs("both", "30KB", "200ms", SPTCP),
                                 "fast_loss_pct", lambda a, b: a - b))
    lo, hi = diff.value - (diff.ci95 or 0), diff.value + (diff.ci95 or 0)
    who = "MPTCP" if lo > 0 else "SPTCP" if hi < 0 else "neither (within the 95 % CI)"
    loss_m, loss_s = cell("both", "30KB", "200ms", "minRTT").fast_loss_pct, cell("both", "30KB", "200ms", SPTCP).fast_loss_pct
    measured["loss-vs-sptcp"] = Measured(
        who, n=diff.n, note=f"loss {fmt(loss_m)} % (minRTT's fast subflow) vs {fmt(loss_s)} % (SPTCP); paired difference "
                            f"{fmt(diff.value)} ± {fmt(diff.ci95 or 0)} points")

    def gain(a: Any, b: Any) -> Measured:
        return measured_mean(_paired(a, b, "aggregate_mbps", lambda x, y: 100 * (x / y - 1)))

    net_gain = {(rd, s): gain(runs(rd, "30KB", "200ms", s), runs(rd, "30KB", "200ms", "minRTT"))
                for rd in READINGS for s in ("STMS calc", "STMS adj", "ECF")}
    for rd, cid in (("both", "gain-in-network"), ("fast", "gain-in-network-fast-only")):
        m = net_gain[(rd, STMS)]
        measured[cid] = Measured(m.value, m.ci95, m.n, f"gap calculation {fmt(net_gain[(rd, 'STMS calc')].value)} %, "
                                                        f"ECF {fmt(net_gain[(rd, 'ECF')].value)} %; paired runs")
    host_gain = {(buf, h, s): gain(hruns(buf, h, s), hruns(buf, h, "minRTT"))
                 for buf in ("30KB", "150KB") for h in HOST_BUFFERS for s in ("STMS calc", "STMS adj")}
    hg = host_gain[(HOST_CLAIM_NET, HOST_LIMITED, STMS)]
    span = [host_gain[(buf, h, STMS)].value for buf in ("30KB", "150KB") for h in HOST_BUFFERS]
    measured["gain-host"] = Measured(
        hg.value, hg.ci95, hg.n,
        f"at {HOST_LIMITED} (Σ BW × RTT_max); gap calculation "
        f"{fmt(host_gain[(HOST_CLAIM_NET, HOST_LIMITED, 'STMS calc')].value)} %; over the sweep {min(span):+.0f} % to "
        f"{max(span):+.0f} %; paired runs", not_testable=HOST_GAIN_RULE)
    best = host.groupby(["in_network_buffer", "host_buffer"])["aggregate_mbps"].transform("max")
    ratio = (host["aggregate_mbps"] / best)[host["scheduler"] == STMS]
    worst = host.loc[ratio.idxmin()]
    leader = host[(host["in_network_buffer"] == worst.in_network_buffer) & (host["host_buffer"] == worst.host_buffer)]
    leader = leader.loc[leader["aggregate_mbps"].idxmax()]
    measured["always-optimal"] = Measured(
        float(ratio.min()), n=int(ratio.size),
        note=f"lowest at {worst.host_buffer} host buffers, {worst.in_network_buffer} fast-path buffer: "
             f"{fmt(worst.aggregate_mbps)} vs {leader.scheduler}'s {fmt(leader.aggregate_mbps)} Mbit/s; "
             f"optimal (the best) in {int((ratio >= 1 - 1e-12).sum())} of {ratio.size} cells")
    free = _free_space(base)
    free_csv = ctx.path("free_space.csv")
    free.to_csv(free_csv, index=False)

    def fs(sched: str, rtt: str) -> Any:
        return free[(free["scheduler"] == sched) & (free["slow_rtt"] == rtt)]

    burst = measured_mean(_paired(fs("minRTT", "200ms"), fs("minRTT", "20ms"), "free_share", lambda a, b: a / b))
    measured["burst-free-space"] = Measured(
        burst.value, burst.ci95, burst.n,
        f"free share {fmt(fs('minRTT', '200ms')['free_share'].mean())} vs {fmt(fs('minRTT', '20ms')['free_share'].mean())}; "
        f"the connection is send-buffer-limited {fmt(fs('minRTT', '200ms')['sndbuf_limited_s'].mean())} s and "
        f"{fmt(fs('minRTT', '20ms')['sndbuf_limited_s'].mean())} s of {base.data['duration']}; paired runs, sampled every {FREE_SAMPLE}")
    less = measured_mean(_paired(fs(STMS, "200ms"), fs("minRTT", "200ms"), "free_share", lambda a, b: a / b))
    measured["stms-less-free-space"] = Measured(
        less.value, less.ci95, less.n, f"free share {fmt(fs(STMS, '200ms')['free_share'].mean())} vs "
                                       f"{fmt(fs('minRTT', '200ms')['free_share'].mean())}; paired runs")
    ooo = measured_mean(_paired(runs("both", "30KB", "200ms", STMS), runs("both", "30KB", "200ms", "minRTT"),
                                "ooo_mean_ms", lambda a, b: a / b))
    measured["ooo-delay"] = Measured(
        ooo.value, ooo.ci95, ooo.n,
        f"{fmt(cell('both', '30KB', '200ms', STMS).ooo_mean_ms)} vs {fmt(cell('both', '30KB', '200ms', 'minRTT').ooo_mean_ms)} ms; "
        f"gap calculation {fmt(cell('both', '30KB', '200ms', 'STMS calc').ooo_mean_ms)} ms")

    abl = _ablation(ctx, base)
    abl_csv = ctx.path("ablation.csv")
    abl.to_csv(abl_csv, index=False)
    discussion = _discussion(cell, util, net_gain, host_gain, host, dyn, measured, parse_duration(base.data["duration"]))
    discussion += "\n\n" + _ablation_text(abl)
    setup = _setup(reps)
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion,
                  {"tables": table_csv, "host-buffer sweep": host_csv, "changing paths": dyn_csv,
                   "ablation": abl_csv, "free window space": free_csv}, figs)



def _rtt_column(runs: Any, rtt: str) -> dict[str, Measured]:
    """One column of the RTT table (slow-path RTT ``rtt``) under :data:`RTT_COLUMN_RULE`: its loss
    claim at the buffer that loses least (not testable when a buffer is admitted: the loss chose
    it), its throughput claims at every admitted buffer (the one furthest from the slides shown),
    or not testable when no buffer is admitted."""
    by_id = {c.id: c for c in CLAIMS}
    col = {kb: runs("both", f"{kb}KB", rtt, "minRTT") for kb in BUFFERS_KB}
    loss = {kb: float(g["fast_loss_pct"].mean()) for kb, g in col.items()}
    qd = {kb: float((100 * g["link.fast.down.queue_drops"] / g["link.fast.down.arrived_packets"]).mean())
          for kb, g in col.items()}
    lc = by_id[f"rtt{rtt}-loss"]
    admitted = [kb for kb in BUFFERS_KB if ADMIT_TOLERANCE.holds(lc.paper, loss[kb])]
    table = "; ".join(f"{kb} K: {fmt(col[kb]['aggregate_mbps'].mean())} aggregate, {fmt(col[kb]['fast_mbps'].mean())} fast, "
                      f"{fmt(loss[kb])} % lost ({fmt(qd[kb])} % in the queue)" for kb in BUFFERS_KB)
    least = min(BUFFERS_KB, key=lambda kb: loss[kb])
    m = measured_mean(col[least]["fast_loss_pct"].tolist(),
                      note=f"lowest at {least} K; admitted: " + (", ".join(f"{kb} K" for kb in admitted) or "none")
                      + f"; {table}")
    if admitted:
        # The loss chose the buffer: at an admitted buffer it equals the slides' by construction,
        # so it is the rule's input (a calibration), not a test of the engine.
        m = dataclasses.replace(m, not_testable=(
            "the column's loss selected its buffer (" + ", ".join(f"{kb} K" for kb in admitted)
            + " admitted by the rule), so it cannot also test it"))
    out = {lc.id: m}
    for cid, key in ((f"rtt{rtt}-aggregate", "aggregate_mbps"), (f"rtt{rtt}-fast", "fast_mbps")):
        c = by_id[cid]
        if not admitted:
            out[cid] = Measured(None, note=table, not_testable=(
                f"buffer not given: {RTT_COLUMN_RULE}; no buffer is admitted for this column (the fast-path loss is "
                f"{' / '.join(fmt(loss[kb]) for kb in BUFFERS_KB)} % at {'/'.join(map(str, BUFFERS_KB))} K against "
                f"the slides' {fmt(lc.paper)} %)"))
            continue
        worst = max(admitted, key=lambda kb: abs(col[kb][key].mean() - c.paper))
        out[cid] = measured_mean(col[worst][key].tolist(), note=f"at {worst} K, of admitted "
                                 + ", ".join(f"{kb} K" for kb in admitted) + f"; {table}")
    return out
