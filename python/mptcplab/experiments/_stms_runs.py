"""The STMS section's scenarios: the bundled scenario with its paths' buffers and delays and a
connection per scheduler (read through :mod:`mptcplab.experiments.stms`)."""

from __future__ import annotations

import json
from typing import Any

from mptcplab.experiments._stms_claims import FREE_REPS, FREE_SAMPLE, RMEM, SCHEDULERS, SLOW_BDP, SPTCP, STMS, WMEM


def _base() -> Any:
    from mptcplab import load_scenario

    base = load_scenario("stms-20ms-200ms")
    c = json.loads(json.dumps(base.data["connections"][0]))
    c.update(sndbuf=WMEM, rcvbuf=RMEM)
    return base.with_overrides({"connections": [c]})


def _paths(base: Any, buf_kb: int, reading: str, slow_delay: str = "100ms") -> list[dict[str, Any]]:
    paths = json.loads(json.dumps(base.data["paths"]))
    for p in paths:
        if p["name"] == "fast":
            p["queue"] = f"{buf_kb}KB"
        else:
            p["delay"] = slow_delay
            p["queue"] = f"{buf_kb}KB" if reading == "both" else SLOW_BDP
    return paths


def _conn(base: Any, label: str, host: str | None = None) -> list[dict[str, Any]]:
    c = json.loads(json.dumps(base.data["connections"][0]))
    if label == SPTCP:
        c.update(kind="tcp", paths=["fast"])
    else:
        c.update(SCHEDULERS[label])
    if host:
        c.update(sndbuf=host, rcvbuf=host)
    return [c]


def _label(df: Any, key: str, variants: dict[str, Any]) -> Any:
    """Maps a whole-object grid column back to its label."""
    back = {json.dumps(v): k for k, v in variants.items()}
    return df[key].map(back)


def _kb(size: str) -> float:
    from mptcplab.units import parse_size

    return parse_size(size) / 1e3


def _paired(a: Any, b: Any, col: str, f: Any) -> list[float]:
    """f(a, b) per repeat, for two groups run with the same seeds (common random numbers)."""
    x = a.set_index("repeat")[col]
    y = b.set_index("repeat")[col]
    return [f(x[r], y[r]) for r in sorted(set(x.index) & set(y.index))]



def _free_space(base: Any) -> Any:
    """The fast subflow's free congestion-window share, mean over samples every FREE_SAMPLE of
    max(0, cwnd − in flight) / cwnd (the room a slow-path ACK's window slide lets it fill at
    once), for minRTT with 20 vs 200 and 20 vs 20 ms and STMS with 20 vs 200 ms, 30 KB on both
    paths, FREE_REPS runs each (repeat r uses the claims' seed of repeat r)."""
    import pandas as pd

    import mptcplab
    from mptcplab.sweep import repeat_seed

    rows = []
    for sched, rtt in (("minRTT", "200ms"), ("minRTT", "20ms"), (STMS, "200ms")):
        sc = base.with_overrides({"paths": _paths(base, 30, "both", "100ms" if rtt == "200ms" else "10ms"),
                                  "connections": _conn(base, sched), "output.timeseries": FREE_SAMPLE})
        for r in range(FREE_REPS):
            res = mptcplab.run(sc, seed=repeat_seed(base.seed, r))
            ts = res.timeseries
            f = ts[ts["entity"].astype(str) == "mptcp/fast"].pivot_table(index="time_s", columns="metric",
                                                                        values="value", observed=True)
            f = f[f["cwnd_bytes"] > 0]
            share = ((f["cwnd_bytes"] - f["in_flight_bytes"]).clip(lower=0) / f["cwnd_bytes"]).mean()
            rows.append({"scheduler": sched, "slow_rtt": rtt, "repeat": r, "free_share": float(share),
                         "sndbuf_limited_s": res.metrics()["conn.mptcp.sndbuf_limited_time_s"]})
    return pd.DataFrame(rows)
