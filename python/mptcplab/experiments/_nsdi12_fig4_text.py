"""The NSDI '12 Fig. 4 section's ablation readings as text (read through
:mod:`mptcplab.experiments.nsdi12_fig4`)."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments._nsdi12_fig4_claims import (
    CLAIMS,
    DIP_KB,
    FULL_USE_KB,
    JITTER_ROWS,
    TBF_ABLATION,
)
from mptcplab.experiments.base import fmt, measured_mean


def _jitter_text(jab: Any) -> str:
    """The jitter ablation's reading: per variant the mean ratio and goodputs, and the variants
    that meet the claim's tolerance."""
    claim = next(c for c in CLAIMS if c.id == "high-jitter")
    rows = []
    ok = []
    for label in JITTER_ROWS:
        g = jab[jab["variant"] == label]
        m = measured_mean(g["ratio"].tolist())
        rows.append(f"{label}: {fmt(m.value)}× (MPTCP + M1 + M2 {fmt(g['MPTCP + M1 + M2'].mean())}, TCP over WiFi "
                    f"{fmt(g['TCP over WiFi'].mean())} Mbit/s)")
        if claim.tolerance is not None and claim.tolerance.holds(claim.paper, m.value):
            ok.append(label)
    return ("- **Ablation of the jitter result** (not counted; high jitter, "
            f"{FULL_USE_KB} KB, {jab['repeat'].nunique()} paired runs per variant; table 'jitter ablation'): "
            + "; ".join(rows) + ". Within the claim's ≤ 0.85 with: " + ("; ".join(ok) if ok else "none of the variants")
            + ". A larger reordering tolerance lifts TCP and MPTCP alike: the reordering netem's jitter causes "
              "does not make MPTCP worse than TCP in the engine; seed 003's runs that 'fail to transfer any significant "
              "amount of data', which it suspects are iperf's, are not modelled.")


def _dip_text(dab: Any) -> str:
    """Graph a's and b's dip ratios per window reading and shaper, and which meet the claims."""
    claims = {c.id: c for c in CLAIMS}
    parts, ok = [], []
    for (w, sh), g in dab.groupby(["window", "shaper"], sort=False):
        tcp = g[g["config"] == "TCP over WiFi"].set_index("rcvbuf_kb")["goodput_mbps"]
        ratio = {cid: float((g[g["config"] == cfg].set_index("rcvbuf_kb")["goodput_mbps"] / tcp).mean())
                 for cid, cfg in (("no-dip-time-queues", "MPTCP regular"), ("no-dip-graph-b", "MPTCP + M1"))}
        parts.append(f"{w}, {sh}: graph a {fmt(ratio['no-dip-time-queues'])}×, graph b {fmt(ratio['no-dip-graph-b'])}×")
        ok += [f"{cid} ({w}, {sh})" for cid, r in ratio.items()
               if claims[cid].tolerance is not None and claims[cid].tolerance.holds(claims[cid].paper, r)]
    return ("- **Ablation of the dips** (not counted; TBF latency as run, one run per buffer; mean over 100–200 KB "
            "against TCP over WiFi; table 'dip ablation'): " + "; ".join(parts) + ". Within the claims' ≥ 0.85 with: "
            + ("; ".join(ok) if ok else "none of the combinations") + ".")


def _no_dip_readings(tbf_abl: Any, tcp_wifi_150: float) -> str:
    """Which TBF readings would meet graph a's no-dip tolerance (regular MPTCP over 100–200 KB
    against TCP over WiFi at 150 KB): the verdict's dependence on the layout seed 003 leaves open."""
    claim = next(c for c in CLAIMS if c.id == "no-dip-time-queues")
    ok = []
    for r in TBF_ABLATION:
        sel = tbf_abl[(tbf_abl["reading"] == r) & (tbf_abl["config"] == "MPTCP regular")
                      & tbf_abl["rcvbuf_kb"].isin(DIP_KB)]
        if claim.tolerance is not None and claim.tolerance.holds(claim.paper, float(sel["goodput_mbps"].mean()) / tcp_wifi_150):
            ok.append(r)
    return ("Graph a's no-dip tolerance is met under: " + "; ".join(ok) + " (readings not counted: which one seed 003 "
            "ran is not stated)." if ok else "No TBF reading meets graph a's no-dip tolerance.")


def _fill_ablation(abl: Any) -> str:
    """Per ablation variant, the key result's measure (the lowest share over the judged buffers),
    and the variants that meet its tolerance."""
    claim = next(c for c in CLAIMS if c.id == "fills-both-links")
    low = {lab: g.loc[g["share_of_links_pct"].idxmin()] for lab, g in abl.groupby("variant", sort=False)}
    ok = [lab for lab, r in low.items() if claim.tolerance is not None
          and claim.tolerance.holds(claim.paper, float(r.share_of_links_pct))]
    return ("; ".join(f"{lab}: {fmt(r.share_of_links_pct)} % at {r.rcvbuf_kb} KB ({fmt(r.penalisations)} M2 halvings)"
                      for lab, r in low.items())
            + ". ≥ 90 % at every judged buffer with: " + ("; ".join(ok) if ok else "none of the variants") + ".")


def _m2_cost(abl: Any) -> str:
    """What switching M2 off changes at the key-result buffer (seed 003 on graph c: 'perhaps the
    "penalizing slow subflows" algorithm is too aggressive for this particular topology')."""
    at = abl[abl["rcvbuf_kb"] == FULL_USE_KB].set_index("variant")["share_of_links_pct"]
    d = at["penalisation (M2) off"] - at["linux-v0.9x (as run)"]
    return (f"At {FULL_USE_KB} KB switching M2 off {'raises' if d > 0 else 'lowers'} the share by {fmt(abs(d))} points"
            + (" (seed 003 on graph c: 'perhaps the \u201cpenalizing slow subflows\u201d algorithm is too aggressive for "
               "this particular topology')." if d > 0 else "."))
