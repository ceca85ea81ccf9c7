"""Khalili et al. (seed 004): scenarios A, B and C with LIA and OLIA, per-user throughput beside
the slides' measurements and the optimal allocations.

The bundled scenarios ``olia-scenario-a`` / ``-a-n30`` / ``-b`` / ``-c`` / ``-c-n30`` (their
header comments give the reconstructed topologies and the reasoning): one bulk download per
user, one connection each, downloads over ``[[links]]`` with explicit routes.

- A: N1 type-1 users download through a server bottleneck of N1·C1; their second path also
  crosses the access link of the N2 type-2 users (N2·C2), who are single-path TCP. C1 = C2 =
  1 Mbit/s, (N1, N2) = (10, 10), (30, 10); plus the baseline where type-1 users are
  single-path TCP over their own path.
- B: 15 blue MPTCP users with paths through X (27 Mbit/s) and through T (36 Mbit/s); 15 red
  users through T, single-path TCP ("red single-path") or MPTCP with a second path crossing
  X then T ("red multipath").
- C: N1 multipath users own a link of N1·C1 and share a link of N2·C2 with N2 single-path
  TCP users.

Assumptions (the scenarios', none on the slides): every route has a 100 ms base RTT;
bottleneck queues hold 100 ms at their rate (drop-tail); other links 1 Gbit/s; single-path
users run Reno, MPTCP users LIA or OLIA; 120 s runs with the first 20 s excluded (60 s in
quick mode). Ours: users start at random times within the first 2 s, the runs' only
randomness (simultaneous starts make every repetition identical). The "with probing cost"
optimum is ``mptcplab.models.khalili``'s for 1 MSS per base RTT on every path
(``probe_rate_bps(1448, 0.1)`` = 0.116 Mbit/s), our RTT, not a value fitted to the slides.
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
MSS = 1448
STAGGER_S = 2.0
QUICK_DURATION = "60s"

#: (scenario, configuration, bundled scenario, overrides making the single-path baseline).
CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("A", "N1=10,N2=10", "olia-scenario-a", {}),
    ("A", "N1=30,N2=10", "olia-scenario-a-n30", {}),
    ("B", "red single-path", "olia-scenario-b", {
        "connections.red-*.kind": "tcp", "connections.red-*.cc": "reno",
        "connections.red-*.routes": [{"name": "t", "up": ["red-s"], "down": ["s-tin", "T", "tout-red"]}]}),
    ("B", "red multipath", "olia-scenario-b", {}),
    ("C", "N1=10,N2=10", "olia-scenario-c", {}),
    ("C", "N1=30,N2=10", "olia-scenario-c-n30", {}),
]
#: User types per scenario (the slides' and the models' names).
USER_TYPES = {"A": ("type1", "type2"), "B": ("red", "blue"), "C": ("multipath", "single")}
#: Connection-name prefix of a user type in the bundled scenarios, where it differs.
PREFIX = {"multipath": "multi"}
#: Connections whose congestion control is LIA or OLIA (the multipath users).
MULTIPATH = {"A": ("type1",), "B": ("blue", "red"), "C": ("multi",)}
SINGLE_PATH_A = {
    "connections.type1-*.kind": "tcp", "connections.type1-*.cc": "reno",
    "connections.type1-*.routes": [{"name": "own", "up": ["t1-s1"], "down": ["s1-core", "core-t1"]}],
}


def staggered(conns: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """The users with start times drawn uniformly from [0, STAGGER_S) (whole ms), one draw per
    user from a stream seeded by the repetition: the only randomness of these runs."""
    import random

    rng = random.Random(f"olia-start:{repeat}")
    return [{**c, "start": f"{rng.randrange(int(STAGGER_S * 1000))}ms"} for c in conns]


def case_scenario(scen: str, base: str, overrides: dict[str, Any], cc: str | None, quick: bool) -> Any:
    """A bundled seed 004 scenario with the multipath users on ``cc`` (None: scenario A's
    single-path baseline)."""
    from mptcplab import load_scenario

    ov: dict[str, Any] = dict(overrides)
    if cc is None:
        ov.update(SINGLE_PATH_A)
    else:
        for prefix in MULTIPATH[scen]:
            if not any(k.startswith(f"connections.{prefix}-*.kind") for k in ov):
                ov[f"connections.{prefix}-*.cc"] = cc
    if quick:
        ov["duration"] = QUICK_DURATION
    return load_scenario(base, ov)


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
    rows = []
    duration = ""
    for scen, config, base, overrides in CASES:
        ccs: list[str | None] = ["lia", "olia"] + ([None] if scen == "A" else [])
        for cc in ccs:
            sc = case_scenario(scen, base, overrides, cc, ctx.quick)
            duration = sc.data["duration"]
            tag = f"{scen}-{config}-{cc or 'single'}".replace(",", "_").replace("=", "").replace(" ", "_")
            df = repeated(rctx, sc, {"connections": [staggered(sc.data["connections"], r) for r in range(reps)]}, 1, tag)
            for users in USER_TYPES[scen]:
                cols = [c for c in df.columns if c.startswith(f"conn.{PREFIX.get(users, users)}-") and c.endswith(".goodput_bps")]
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
