"""Khalili et al. (seed 004): scenarios A, B and C with LIA and OLIA, per-user throughput beside
the slides' measurements and the optimal allocations.

The slides give capacities and user counts but no topology pictures in text, no RTTs, queue
sizes or run lengths. The topologies are ``mptcplab.models.khalili``'s reconstruction, built
here with ``[[links]]`` and per-subflow routes (one connection per user, downloads):

- A: N1 type-1 users download through a server link of N1·C1; their second path crosses the
  access link of the N2 type-2 users (N2·C2) and then the same server link. Type-2 users are
  single-path TCP over their access link. C1 = C2 = 1 Mbit/s, (N1, N2) = (10, 10), (30, 10);
  plus the baseline where type-1 users are single-path TCP over the server link.
- B: 15 blue MPTCP users with paths through X (27 Mbit/s) and through T (36 Mbit/s); 15 red
  users through T, single-path TCP ("red single-path") or MPTCP with a second path crossing
  X then T ("red multipath").
- C: N1 multipath users own a link of N1·C1 and share a link of N2·C2 with N2 single-path
  TCP users.

Assumptions (ours, not the slides'): every route has a 100 ms base RTT (50 ms each way; the
delay sits on the first and last hop, the bottlenecks add none); bottleneck queues hold
100 ms at their rate (drop-tail); the other links are 1 Gbit/s; single-path users run Reno;
MSS 1448 B; 60 s runs with the first 20 s excluded (the slides do not say how long they
measured); users start at random times within the first 2 s (the runs' only randomness:
simultaneous starts make every repetition identical). The "with probing cost" optimum uses 1 MSS per base RTT on every path
(``khalili.probe_rate_bps(1448, 0.1)`` = 0.116 Mbit/s), i.e. our RTT, not a value fitted to
the slides' theory column.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mptcplab.experiments.base import Comparison, Context, Result, mean_ci95, repeated
from mptcplab.models import khalili
from mptcplab.models import paper_values as pv

NAME = "olia"
TITLE = "LIA vs OLIA in Khalili's scenarios A, B and C (seed 004)"
SOURCE = "seed 004, scenario A/B/C tables and 'Scenario A: OLIA performs close to optimal'"

C_BPS = 1e6
RTT_S = 0.100
FAT = "1Gbit"
MSS = 1448


def _link(name: str, a: str, b: str, rate: str, delay: str, bottleneck: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "from": a, "to": b, "rate": rate, "delay": delay}
    if bottleneck:
        d["queue"] = "100ms"
    return d


def _mbit(x: float) -> str:
    return f"{x / 1e6:g}Mbit"


def _user(name: str, client: str, routes: list[tuple[str, list[str]]], up: str, cc: str | None) -> dict[str, Any]:
    multipath = cc is not None and len(routes) > 1
    c: dict[str, Any] = {
        "name": name, "kind": "mptcp" if multipath else "tcp", "client": client, "server": "srv",
        "routes": [{"name": rn, "up": [up], "down": down} for rn, down in (routes if multipath else routes[:1])],
        "app": {"kind": "bulk"}, "cc": cc if multipath else "reno",
    }
    return c


def scenario_a(n1: int, n2: int, cc: str | None, duration: str) -> dict[str, Any]:
    """``cc`` = None: type-1 users single-path (the slides' first column)."""
    links = [
        _link("server1", "srv", "h1", _mbit(n1 * C_BPS), "45ms", True),
        _link("h1_t1", "h1", "t1", FAT, "5ms"),
        _link("h1_h2", "h1", "h2", FAT, "0ms"),
        _link("srv_h2", "srv", "h2", FAT, "45ms"),
        _link("ap2", "h2", "h3", _mbit(n2 * C_BPS), "0ms", True),
        _link("h3_t1", "h3", "t1", FAT, "5ms"),
        _link("h3_t2", "h3", "t2", FAT, "5ms"),
        _link("t1_up", "t1", "srv", FAT, "50ms"),
        _link("t2_up", "t2", "srv", FAT, "50ms"),
    ]
    conns = [_user(f"type1_{i:02d}", "t1", [("server1", ["server1", "h1_t1"]), ("via_ap2", ["server1", "h1_h2", "ap2", "h3_t1"])],
                   "t1_up", cc) for i in range(n1)]
    conns += [_user(f"type2_{i:02d}", "t2", [("ap2", ["srv_h2", "ap2", "h3_t2"])], "t2_up", None) for i in range(n2)]
    return _scenario(f"olia-A-{n1}-{n2}", links, conns, duration)


def scenario_b(red_multipath: bool, cc: str, duration: str, n_blue: int = 15, n_red: int = 15) -> dict[str, Any]:
    links = [
        _link("X", "srv", "hx", "27Mbit", "45ms", True),
        _link("hx_b", "hx", "b", FAT, "5ms"),
        _link("hx_ht", "hx", "ht", FAT, "0ms"),
        _link("srv_ht", "srv", "ht", FAT, "45ms"),
        _link("T", "ht", "hto", "36Mbit", "0ms", True),
        _link("hto_b", "hto", "b", FAT, "5ms"),
        _link("hto_r", "hto", "r", FAT, "5ms"),
        _link("b_up", "b", "srv", FAT, "50ms"),
        _link("r_up", "r", "srv", FAT, "50ms"),
    ]
    conns = [_user(f"blue_{i:02d}", "b", [("X", ["X", "hx_b"]), ("T", ["srv_ht", "T", "hto_b"])], "b_up", cc)
             for i in range(n_blue)]
    red_routes = [("T", ["srv_ht", "T", "hto_r"]), ("XT", ["X", "hx_ht", "T", "hto_r"])]
    conns += [_user(f"red_{i:02d}", "r", red_routes, "r_up", cc if red_multipath else None) for i in range(n_red)]
    return _scenario(f"olia-B-{'mp' if red_multipath else 'sp'}", links, conns, duration)


def scenario_c(n1: int, n2: int, cc: str, duration: str) -> dict[str, Any]:
    links = [
        _link("own", "srv", "hm", _mbit(n1 * C_BPS), "45ms", True),
        _link("hm_m", "hm", "m", FAT, "5ms"),
        _link("srv_hs", "srv", "hs", FAT, "45ms"),
        _link("shared", "hs", "hso", _mbit(n2 * C_BPS), "0ms", True),
        _link("hso_m", "hso", "m", FAT, "5ms"),
        _link("hso_s", "hso", "s", FAT, "5ms"),
        _link("m_up", "m", "srv", FAT, "50ms"),
        _link("s_up", "s", "srv", FAT, "50ms"),
    ]
    conns = [_user(f"multipath_{i:02d}", "m", [("own", ["own", "hm_m"]), ("shared", ["srv_hs", "shared", "hso_m"])], "m_up", cc)
             for i in range(n1)]
    conns += [_user(f"single_{i:02d}", "s", [("shared", ["srv_hs", "shared", "hso_s"])], "s_up", None) for i in range(n2)]
    return _scenario(f"olia-C-{n1}-{n2}", links, conns, duration)


def _scenario(name: str, links: list, conns: list, duration: str) -> dict[str, Any]:
    return {"name": name, "duration": duration, "links": links, "connections": conns,
            "output": {"warmup": WARMUP}}


DURATION, WARMUP = "60s", "20s"
STAGGER_S = 2.0


def staggered(conns: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """The users with start times drawn uniformly from [0, STAGGER_S) (whole ms), one draw per
    user from a stream seeded by the repetition: the only randomness of these runs."""
    import random

    rng = random.Random(f"olia-start:{repeat}")
    return [{**c, "start": f"{rng.randrange(int(STAGGER_S * 1000))}ms"} for c in conns]
#: (scenario, configuration, builder(cc, duration)); cc None = the single-path baseline.
CASES: list[tuple[str, str, Any]] = [
    ("A", "N1=10,N2=10", lambda cc, d: scenario_a(10, 10, cc, d)),
    ("A", "N1=30,N2=10", lambda cc, d: scenario_a(30, 10, cc, d)),
    ("B", "red single-path", lambda cc, d: scenario_b(False, cc, d)),
    ("B", "red multipath", lambda cc, d: scenario_b(True, cc, d)),
    ("C", "N1=10,N2=10", lambda cc, d: scenario_c(10, 10, cc, d)),
    ("C", "N1=30,N2=10", lambda cc, d: scenario_c(30, 10, cc, d)),
]
USER_TYPES = {"A": ("type1", "type2"), "B": ("red", "blue"), "C": ("multipath", "single")}


def _theory(scen: str, config: str, probe: float) -> dict[str, float]:
    if scen == "A":
        n1 = int(config.split(",")[0].split("=")[1])
        return khalili.scenario_a(n1, 10, C_BPS, C_BPS, probe)
    if scen == "B":
        return khalili.scenario_b(red_multipath=config == "red multipath", probe_bps=probe)
    n1 = int(config.split(",")[0].split("=")[1])
    return khalili.scenario_c(n1, 10, C_BPS, C_BPS, probe)


def _paper(scen: str, config: str, users: str) -> tuple[Any, Any]:
    """(LIA row, OLIA row) of the slides for one user type (OLIA only in scenario A)."""
    table = {"A": pv.KHALILI_A, "B": pv.KHALILI_B, "C": pv.KHALILI_C}[scen]
    lia = next((r for r in table if r.config == config and r.users == users), None)
    olia = next((r for r in pv.KHALILI_OLIA_A if r.config == config and r.users == users), None) if scen == "A" else None
    return lia, olia


def run(ctx: Context) -> Result:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    reps = ctx.reps(10, 3)
    # A handful of sub-second runs per case: in quick mode a worker pool per case costs more
    # than it saves.
    rctx = dataclasses.replace(ctx, jobs=1) if ctx.quick else ctx
    duration = DURATION
    rows = []
    for scen, config, build in CASES:
        ccs: list[str | None] = ["lia", "olia"] + ([None] if scen == "A" else [])
        for cc in ccs:
            sc = build(cc, duration)
            tag = f"{scen}-{config}-{cc or 'single'}".replace(",", "_").replace("=", "").replace(" ", "_")
            df = repeated(rctx, sc, {"connections": [staggered(sc["connections"], r) for r in range(reps)]}, 1, tag)
            for users in USER_TYPES[scen]:
                cols = [c for c in df.columns if c.startswith(f"conn.{users}_") and c.endswith(".goodput_bps")]
                per_run = (df[cols].mean(axis=1) / 1e6).tolist()
                m, ci, n = mean_ci95(per_run)
                rows.append({"scenario": scen, "config": config, "cc": cc or "single-path", "users": users,
                             "per_user_mbps": m, "per_user_mbps_ci95": ci, "runs": n, "users_n": len(cols)})
    table = pd.DataFrame(rows)
    probe = khalili.probe_rate_bps(MSS, RTT_S)
    table["theory_with_probe_mbps"] = [_theory(r.scenario, r.config, probe)[r.users] / 1e6 for r in table.itertuples()]
    table["theory_without_probe_mbps"] = [_theory(r.scenario, r.config, 0.0)[r.users] / 1e6 for r in table.itertuples()]
    paper_cols = {"paper_lia_mbps": [], "paper_olia_mbps": [], "paper_single_path_mbps": [], "paper_theory_with_probe_mbps": [],
                  "paper_theory_without_probe_mbps": []}
    for r in table.itertuples():
        lia, olia = _paper(r.scenario, r.config, r.users)
        val = lambda c: None if c is None else c.value / 1e6  # noqa: E731
        paper_cols["paper_lia_mbps"].append(val(lia.mptcp_measured) if lia else None)
        paper_cols["paper_olia_mbps"].append(val(olia.mptcp_measured) if olia else None)
        paper_cols["paper_single_path_mbps"].append(val(lia.single_path_measured) if lia else None)
        paper_cols["paper_theory_with_probe_mbps"].append(val(lia.optimal_with_probing) if lia else None)
        paper_cols["paper_theory_without_probe_mbps"].append(val(lia.optimal_without_probing) if lia else None)
    for k, v in paper_cols.items():
        table[k] = v
    csv = ctx.path("per_user_throughput.csv")
    table.to_csv(csv, index=False)

    def ours(scen: str, config: str, cc: str, users: str) -> Any:
        return table[(table["scenario"] == scen) & (table["config"] == config) & (table["cc"] == cc) & (table["users"] == users)].iloc[0]

    # Figure: one panel per scenario, bars per (configuration, user type).
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, scen in zip(axes, "ABC"):
        t = table[table["scenario"] == scen]
        keys = [(c, u) for c in dict.fromkeys(t["config"]) for u in USER_TYPES[scen]]
        ccs = [c for c in ("single-path", "lia", "olia") if c in set(t["cc"])]
        width = 0.8 / (len(ccs) + 1)
        for k, cc in enumerate(ccs):
            vals = [ours(scen, c, cc, u) for c, u in keys]
            ax.bar([i + k * width for i in range(len(keys))], [v.per_user_mbps for v in vals], width,
                   yerr=[v.per_user_mbps_ci95 or 0 for v in vals], capsize=2, label=f"ours: {cc}")
        pl = [ours(scen, c, "lia", u).paper_lia_mbps for c, u in keys]
        ax.plot([i + width for i in range(len(keys))], pl, "kD", mfc="none", label="slides: MPTCP (LIA)")
        if scen == "A":
            po = [ours(scen, c, "olia", u).paper_olia_mbps for c, u in keys]
            ax.plot([i + 2 * width for i in range(len(keys))], po, "k*", label="slides: OLIA")
        th = [ours(scen, c, "lia", u).theory_with_probe_mbps for c, u in keys]
        ax.plot([i + width for i in range(len(keys))], th, "r_", ms=20, mew=2, label="optimum with probing (our RTT)")
        ax.set_xticks([i + width for i in range(len(keys))])
        ax.set_xticklabels([f"{c}\n{u}" for c, u in keys], fontsize=7)
        ax.set_ylabel("throughput per user (Mbit/s)" + (" = normalised by C" if scen != "B" else ""))
        ax.set_title(f"scenario {scen}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    figs = []
    for ext in ("png", "svg"):
        fig.savefig(ctx.path(f"per_user_throughput.{ext}"))
        figs.append(ctx.path(f"per_user_throughput.{ext}"))
    plt.close(fig)

    comps = []
    for r in table.itertuples():
        if r.cc == "single-path":
            paper = r.paper_single_path_mbps
        else:
            paper = r.paper_lia_mbps if r.cc == "lia" else r.paper_olia_mbps
        note = (f"optimum with probing: slides {r.paper_theory_with_probe_mbps:g}, ours {r.theory_with_probe_mbps:.2f}; "
                f"without: slides {r.paper_theory_without_probe_mbps:g}, ours {r.theory_without_probe_mbps:.2f}")
        paper = None if paper is None or pd.isna(paper) else float(paper)
        comps.append(Comparison(f"{r.scenario} {r.config}, {r.users} users, {r.cc}", "Mbit/s per user", paper,
                                r.per_user_mbps, r.per_user_mbps_ci95, r.runs, note))

    # Claims.
    a_cfgs = ("N1=10,N2=10", "N1=30,N2=10")
    olia_more = {c: ours("A", c, "olia", "type2").per_user_mbps - ours("A", c, "lia", "type2").per_user_mbps for c in a_cfgs}
    lia_hurts = {c: ours("A", c, "single-path", "type2").per_user_mbps - ours("A", c, "lia", "type2").per_user_mbps for c in a_cfgs}
    b_down = (ours("B", "red single-path", "lia", "blue").per_user_mbps
              - ours("B", "red multipath", "lia", "blue").per_user_mbps) > 0.02
    c_aggr = {c: ours("C", c, "lia", "single").per_user_mbps for c in a_cfgs}
    claims = {
        "OLIA leaves type-2 users more than LIA (A)": all(v > 0.02 for v in olia_more.values()),
        "LIA lowers type-2 throughput (A)": all(v > 0.05 for v in lia_hurts.values()),
        "upgrading red users lowers blue throughput (B, LIA)": b_down,
        "single-path users get < C (C, LIA)": all(v < 0.9 for v in c_aggr.values()),
    }
    n_ok = sum(claims.values())
    verdict = "reproduced" if n_ok == len(claims) else ("partly reproduced" if n_ok else "not reproduced")
    reason = (
        "; ".join(f"{k}: {'yes' if v else 'no'}" for k, v in claims.items()) + ". "
        + "Type-2 per-user throughput, LIA → OLIA: "
        + ", ".join(f"{c}: {ours('A', c, 'lia', 'type2').per_user_mbps:.2f} → {ours('A', c, 'olia', 'type2').per_user_mbps:.2f}"
                    f" (slides {ours('A', c, 'lia', 'type2').paper_lia_mbps} → {ours('A', c, 'olia', 'type2').paper_olia_mbps}; "
                    f"type 1 single-path: {ours('A', c, 'single-path', 'type2').per_user_mbps:.2f})" for c in a_cfgs)
        + " Mbit/s. The topologies, RTTs and queues are our reconstruction (the slides give none), so agreement "
        "is judged on the direction of each effect, not on the printed values; the optimal-with-probing column is "
        f"computed for our 100 ms RTT (probe {probe / 1e6:.3f} Mbit/s), which differs from the slides' unstated one."
    )
    setup = f"{__doc__.strip()}\n\nRuns: {reps} per case, {duration} each."
    return Result(NAME, TITLE, SOURCE, setup, comps, verdict, reason, {"per-user throughput": csv}, figs)
