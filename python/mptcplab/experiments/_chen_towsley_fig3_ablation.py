"""The ablation of Chen & Towsley's Fig. 3 (seed 000 §V-A): the cellular link's open facts
changed one at a time, and the trace that stands for Sprint.

Every variant re-runs the section's MPTCP downloads (WiFi + one carrier, the same file sizes,
start times and seeds) with one assumption of the cellular link changed, every carrier alike,
through the sweep machinery; per carrier it reports the cellular subflow's average RTT range
over the sizes, the largest γ against the same connections' WiFi subflow, and the cellular
link's loss rate (drops over arrived packets, pooled over the sizes). The Sprint ablation runs
Sprint's link (its 160 ms base RTT and 1 Mbit/s uplink) with every downlink trace of the data
directory: no trace of Sprint's network is among them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab.experiments import _chen_towsley_links as links
from mptcplab.experiments.base import (
    DEFAULT_TOLERANCE,
    Context,
    and_list,
    fmt,
    merge_into,
    repeated,
)
from mptcplab.models import paper_values as pv
from mptcplab.units import parse_queue, parse_size

if TYPE_CHECKING:
    import pandas as pd

AS_RUN_QUEUE = parse_queue(links.CELL_QUEUE)[0]
#: Downlink queues of the scan (packets), besides the as-run one: a sensitivity, never adopted.
QUEUE_SCAN = (300, 100, 50)
#: Linux 3.11's ``tcp_rmem`` (the paper's kernel: 6 MB maximum, auto-tuning on, §V-C).
TCP_RMEM_311: dict[str, str] = {"min": "4096B", "default": "87380B", "max": "6291456B"}
RCVBUF_DEFAULT_B = parse_size(TCP_RMEM_311["default"])
#: The other traces of ``traces/cellular`` of each technology (Verizon LTE has none of its own).
OTHER_TRACES = {"AT&T": "ATT-LTE-driving.down", "Verizon": "TMobile-LTE-short.down",
                "Sprint": "TMobile-UMTS-driving.down"}
AS_RUN = f"no earlier download (trace, {AS_RUN_QUEUE} packets)"
MEAN_RATE = f"constant rate at the trace's mean, {AS_RUN_QUEUE} packets"
OTHER = f"another trace of the technology, {AS_RUN_QUEUE} packets"
FIXED_RCVBUF = f"receive buffer fixed at {fmt(RCVBUF_DEFAULT_B)} B (no auto-tuning)"
FIXED_MAX = "both buffers fixed at Linux 3.11's maxima: 6 MB receive, 4 MiB send (no auto-tuning)"
#: (label, capacity, downlink queue in packets, change to the connection). Capacity: "trace"
#: (as run), "mean" (a constant rate at the trace's mean: its delivery gaps removed, its mean
#: kept) or "other" (another recorded trace of the technology, OTHER_TRACES).
ABLATIONS: tuple[tuple[str, str, int, dict[str, Any]], ...] = (
    (AS_RUN, "trace", AS_RUN_QUEUE, {}),
    *((f"trace, {q} packets", "trace", q, {}) for q in QUEUE_SCAN),
    (MEAN_RATE, "mean", AS_RUN_QUEUE, {}),
    *((f"constant rate at the trace's mean, {q} packets", "mean", q, {}) for q in QUEUE_SCAN),
    (OTHER, "other", AS_RUN_QUEUE, {}),
    (FIXED_MAX, "trace", AS_RUN_QUEUE, {"rcvbuf": "6MB", "sndbuf": "4MiB"}),
    ("send buffer fixed at 4 MiB, receive buffer auto-tuned", "trace", AS_RUN_QUEUE, {"sndbuf": "4MiB"}),
    (FIXED_RCVBUF, "trace", AS_RUN_QUEUE, {"rcvbuf": TCP_RMEM_311["default"]}),
    ("slow start while cwnd < ssthresh (Linux >= 4.3)", "trace", AS_RUN_QUEUE, {"tcp": {"slow_start_bound": "below"}}),
)


#: WiFi's open facts (the seed gives only its ≈ 30 ms RTT and 0.9 % loss): the home router's
#: queue, as run 50 packets (assumed), and its rate, as run 20 Mbit/s (assumed). (label, change
#: to the WiFi path).
WIFI_ABLATIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (f"no earlier download ({links.WIFI['queue']}, {links.WIFI['rate']})", {}),
    ("WiFi queue 20 packets", {"queue": "20 packets"}),
    ("WiFi queue 100 packets", {"queue": "100 packets"}),
    ("WiFi rate 54Mbit (802.11g's nominal rate)", {"rate": "54Mbit"}),
    (CACHED := "after one earlier 1 MB single-path WiFi download (metrics cache on; the cellular entry stays empty)",
     {}),
)
#: The earlier download of the :data:`CACHED` row (kind, size), as Fig. 2's section builds it: the
#: measured download starts its point's start time after it closed.
EARLIER = (("tcp", "1MB", ""),)


def _after_earlier(sc: dict) -> dict:
    """``sc`` with :data:`EARLIER` before its MPTCP download, from the same server."""
    from mptcplab.experiments import _chen_towsley_fig2_history as hist

    earlier = hist.connections(EARLIER)[:-1]
    sc["connections"] = [*earlier, {**sc["connections"][0], "after": earlier[-1]["name"]}]
    return sc


def trace(name: str, data: str | Path | None):  # -> numpy array of delivery times (ms)
    import numpy as np

    return np.loadtxt(links.traces_dir(data) / name)


def trace_rate_bps(name: str, data: str | Path | None) -> float:
    """Mean rate of a Mahimahi trace: one 1500-byte delivery per line (bit/s)."""
    t = trace(name, data)
    return len(t) * 1500 * 8 / (t[-1] / 1e3)


def trace_gaps_s(name: str, data: str | Path | None) -> tuple[float, float, float]:
    """Median, 99th percentile and largest gap between a trace's delivery opportunities (s)."""
    import numpy as np

    g = np.diff(trace(name, data)) / 1e3
    return float(np.median(g)), float(np.percentile(g, 99)), float(g.max())


def downlink_traces(data: str | Path | None) -> list[str]:
    """Every downlink trace of the data directory's ``traces/cellular``, sorted."""
    return sorted(p.name for p in links.traces_dir(data).glob("*.down"))


def variant_scenario(base: dict, net: str, capacity: str, queue: int, change: dict[str, Any],
                     data: str | Path | None = None) -> dict:
    """``base`` (a carrier's MPTCP scenario) with one variant applied to the cellular downlink."""
    import copy

    sc = copy.deepcopy(base)
    p = next(x for x in sc["paths"] if x["name"] == "cell")
    if capacity == "mean":
        p["down"] = {"rate": f"{trace_rate_bps(links.CARRIERS[net][0], data):.0f}bit"}
    elif capacity == "other":
        p["down"] = {"trace": str(links.traces_dir(data) / OTHER_TRACES[net])}
    elif capacity.endswith(".down"):
        p["down"] = {"trace": str(links.traces_dir(data) / capacity)}
    p["down"] = {**p["down"], "queue": f"{queue} packets"}
    merge_into(sc["connections"][0], change)
    return sc


def _summary(label: str, net: str, df: pd.DataFrame, sizes: tuple[str, ...]) -> dict[str, Any]:
    """One variant at one carrier: the cellular subflow's average RTT range over the sizes, the
    largest γ (against the same connections' WiFi subflow) and the pooled cellular loss rate."""
    import math

    by = df.groupby("connections.mptcp.app.size")
    cell = by["sf.mptcp.cell.mean_rtt_s"].mean().reindex(list(sizes))
    wifi = by["sf.mptcp.wifi.mean_rtt_s"].mean().reindex(list(sizes))
    gamma = (cell / wifi).dropna()
    lost = float((df["link.cell.down.queue_drops"] + df["link.cell.down.loss_drops"]).sum())
    arrived = float(df["link.cell.down.arrived_packets"].sum())
    c = cell.dropna()
    return {"variant": label, "carrier": net,
            "rtt_min_ms": 1e3 * c.min() if len(c) else math.nan, "size_min": c.idxmin() if len(c) else "",
            "rtt_max_ms": 1e3 * c.max() if len(c) else math.nan, "size_max": c.idxmax() if len(c) else "",
            "gamma_max": float(gamma.max()) if len(gamma) else math.nan,
            "loss_pct": 100 * lost / arrived if arrived else math.nan,
            "runs": int(df["sf.mptcp.cell.mean_rtt_s"].notna().sum())}


def run_ablation(ctx: Context, scenario: Any, points: list[dict[str, Any]], sizes: tuple[str, ...],
                 carriers: tuple[tuple[str, str], ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every variant at every carrier, and Sprint's link with every downlink trace, at the
    claims' sizes, start times and seeds: (per variant and carrier, per Sprint trace)."""
    import pandas as pd

    rows = []
    for k, (label, capacity, queue, change) in enumerate(ABLATIONS):
        for _, net in carriers:
            sc = variant_scenario(scenario(net, ctx.data), net, capacity, queue, change, ctx.data)
            df = repeated(ctx, sc, points, 1, f"abl-{k}-{net.replace('&', '')}")
            rows.append({**_summary(label, net, df, sizes), "capacity": capacity, "queue_packets": queue})
    sprint = []
    for name in downlink_traces(ctx.data):
        sc = variant_scenario(scenario("Sprint", ctx.data), "Sprint", name, AS_RUN_QUEUE, {}, ctx.data)
        df = repeated(ctx, sc, points, 1, f"sprint-{name.removesuffix('.down')}")
        sprint.append({**_summary(name.removesuffix(".down"), "Sprint", df, sizes),
                       "trace_mean_mbps": trace_rate_bps(name, ctx.data) / 1e6,
                       "as_run": name == links.CARRIERS["Sprint"][0]})
    return pd.DataFrame(rows), pd.DataFrame(sprint)


def run_wifi_ablation(ctx: Context, scenario: Any, points: list[dict[str, Any]], sizes: tuple[str, ...],
                      carriers: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The WiFi subflow's average RTT per size (pooled over the carriers) under each WiFi variant."""
    import copy

    import pandas as pd

    rows = []
    for k, (label, change) in enumerate(WIFI_ABLATIONS):
        frames = []
        for _, net in carriers:
            sc = copy.deepcopy(scenario(net, ctx.data))
            next(p for p in sc["paths"] if p["name"] == "wifi").update(change)
            if label == CACHED:
                sc = _after_earlier(sc)
            frames.append(repeated(ctx, sc, points, 1, f"wifi-{k}-{net.replace('&', '')}"))
        df = pd.concat(frames, ignore_index=True)
        by = df.groupby("connections.mptcp.app.size")["sf.mptcp.wifi.mean_rtt_s"].mean().reindex(list(sizes))
        rows.append({"variant": label, "wifi_rtt_min_ms": 1e3 * by.min(), "wifi_rtt_max_ms": 1e3 * by.max(),
                     "size_max": by.idxmax(), "runs": int(df["sf.mptcp.wifi.mean_rtt_s"].notna().sum())})
    return pd.DataFrame(rows)


def wifi_text(wabl: pd.DataFrame) -> str:
    """What the WiFi ablation shows about the WiFi claim (30 ms at every size)."""
    want = pv.CT_FIG3["wifi_rtt"].value * 1e3
    ok = [r.variant for r in wabl.itertuples()
          if DEFAULT_TOLERANCE.holds(want, r.wifi_rtt_max_ms) and DEFAULT_TOLERANCE.holds(want, r.wifi_rtt_min_ms)]
    return ("**WiFi's open facts** (not counted; the seed gives WiFi's RTT and loss only): "
            + "; ".join(f"{r.variant}: WiFi subflow {_ms(r.wifi_rtt_min_ms)}–{_ms(r.wifi_rtt_max_ms)} (largest at "
                        f"{r.size_max.replace('KB', ' KB').replace('MB', ' MB')})" for r in wabl.itertuples())
            + f". Flat within {DEFAULT_TOLERANCE.describe()} of 30 ms at every size with: "
            + (and_list(ok) if ok else "none") + ". The WiFi subflow's excess over its 30 ms base RTT is its "
            "own queue at the home router, which a loss-free slow start can fill before WiFi's random loss stops it.")


def _ms(x_ms: float) -> str:
    return f"{fmt(x_ms)} ms" if x_ms < 1e3 else f"{fmt(x_ms / 1e3)} s"


def _paper_ms(key: str, end: str) -> float:
    return pv.CT_FIG3[f"{key}_rtt_{end}"].value * 1e3


def ablation_text(abl: pd.DataFrame, sprint: pd.DataFrame, carriers: tuple[tuple[str, str], ...],
                  data: str | Path | None, extra: str = "") -> str:
    """The ablation paragraphs: each variant's numbers, then what they show about the tops,
    the loss rate and the trace standing for Sprint, stated only where the rows support it."""
    tol, band = DEFAULT_TOLERANCE, DEFAULT_TOLERANCE.describe()
    nets = [net for _, net in carriers]
    keys = {net: key for key, net in carriers}
    a = abl.set_index(["variant", "carrier"])
    variants = list(dict.fromkeys(abl["variant"]))
    p_max = 100 * pv.CT_SETUP["p_cellular_max"].value

    def span(col: str, v: str) -> str:
        lo, hi = a.loc[v, col].min(), a.loc[v, col].max()
        return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"

    parts = [("**Ablation** (not counted; single downloads with no earlier one, every download the first to the "
              "server, the cellular link changed one assumption at a time, every carrier alike, at the claims' "
              "sizes; γ against the same connections' WiFi subflow): ")
             + "; ".join(f"{v}: " + ", ".join(f"{net} {_ms(a.loc[(v, net), 'rtt_min_ms'])}–"
                                             f"{_ms(a.loc[(v, net), 'rtt_max_ms'])}" for net in nets)
                         + f", γ up to {fmt(a.loc[v, 'gamma_max'].max())}, cellular loss {span('loss_pct', v)} %"
                         for v in variants) + "."]
    fits = {net: [v for v in variants if tol.holds(_paper_ms(keys[net], "max"), a.loc[(v, net), "rtt_max_ms"])]
            for net in nets}
    all_tops = [v for v in variants if all(v in fits[net] for net in nets)]
    lossy = [v for v in variants if a.loc[v, "loss_pct"].max() > p_max]
    shallow = [v for v in lossy if a.loc[v, "queue_packets"].max() < AS_RUN_QUEUE]
    deep = [v for v in lossy if v not in shallow]
    text = ("**What the ablation shows.** "
            + " ".join(f"{net}'s top ({pv.CT_FIG3[f'{keys[net]}_rtt_max'].printed}) is within {band} with "
                       + ("; ".join(fits[net]) if fits[net] else "none of the variants") + "." for net in nets)
            + (f" No variant puts all three tops within {band}." if not all_tops else
               f" All three tops are within {band} with {and_list(all_tops)}.")
            + (f" Loss above the seed's {pv.CT_SETUP['p_cellular_max'].printed} appears with the queues shallower "
               f"than the as-run {AS_RUN_QUEUE} packets ({and_list(shallow) or 'none'})"
               + (f" and, at {AS_RUN_QUEUE} packets, with {and_list(deep)} (at "
                  + and_list([f"{n} {fmt(a.loc[(v, n), 'loss_pct'])} %" for v in deep for n in nets
                              if a.loc[(v, n), "loss_pct"] > p_max]) + ")" if deep else "")
               + ": MPTCP's shared send buffer bounds the data in flight, and a buffer deeper than that bound does "
               "not overflow, the \"large buffers\" (§V-A) that keep the loss rates small." if lossy else
               f" No variant loses more than {pv.CT_SETUP['p_cellular_max'].printed} of the cellular packets."))
    lte = [a.loc[(v, "Verizon"), "rtt_max_ms"] / a.loc[(v, "AT&T"), "rtt_max_ms"] for v in variants]
    want = _paper_ms("verizon", "max") / _paper_ms("att", "max")
    if not min(lte) / (1 + tol.a) <= want <= max(lte) * (1 + tol.a):
        text += (f" Under every variant Verizon's top is {fmt(min(lte))}–{fmt(max(lte))}× AT&T's, where the paper's "
                 f"is {fmt(want)}×: the two LTE traces deliver "
                 + " and ".join(f"{fmt(trace_rate_bps(links.CARRIERS[n][0], data) / 1e6)} Mbit/s" for n in
                                ("AT&T", "Verizon"))
                 + " on average, so no buffer common to the carriers gives both LTE tops.")
    parts.append(text)
    s = sprint.set_index("variant")
    as_run = s[s["as_run"]].index[0]
    ok = [v for v in s.index if tol.holds(_paper_ms("sprint", "max"), s.loc[v, "rtt_max_ms"])]
    ok_min = [v for v in s.index if tol.holds(_paper_ms("sprint", "min"), s.loc[v, "rtt_min_ms"])]
    parts.append(
        "**Which trace stands for Sprint.** None of the recorded traces is Sprint's network (the data directory "
        f"holds {and_list(list(s.index))}); Sprint 3G EVDO is modelled with {as_run}, the only EVDO trace (the "
        "same technology, another carrier): an assumption. With each trace on Sprint's link: "
        + "; ".join(f"{v} (mean {fmt(r.trace_mean_mbps)} Mbit/s) {_ms(r.rtt_min_ms)}–{_ms(r.rtt_max_ms)}, "
                    f"loss {fmt(r.loss_pct)} %" for v, r in s.iterrows())
        + f". Within {band} of the paper's top ({pv.CT_FIG3['sprint_rtt_max'].printed}): "
        + (and_list(ok) if ok else "none") + f"; of its low end ({pv.CT_FIG3['sprint_rtt_min'].printed}): "
        + (and_list(ok_min) if ok_min else "none") + ".")
    if extra:
        parts.append(extra)
    parts.append(
        "**Unexplained.** " + (f"No variant puts all three tops within {band}" if not all_tops else
                               f"Only {and_list(all_tops)} put all three tops within {band}")
        + (f", and none with the seed's loss rates ({pv.CT_SETUP['p_cellular_max'].printed})"
           if not [v for v in all_tops if v not in lossy] else "")
        + ". The paper gives neither its carriers' buffers nor their rates; choosing them per carrier would be "
          "fitting, so the failed tops stay failed with this explanation.")
    return "\n\n".join(parts)
