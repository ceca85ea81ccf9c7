"""Khalili et al. (seed 004): scenarios A, B and C with LIA and OLIA, per-user throughput beside
the slides' measurements and their optimal allocations.

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

Stack: the measurements ran the MPTCP release for Linux 3.0.0, older than the kernels the
``linux-v0.9x`` profile describes (no PRR before 3.2, no TCP small queues before 3.6), so the
scenarios keep the ``classic`` model (RFC 6675 recovery, where 3.0 had rate halving;
payload-byte buffers). Each user moves a few Mbit/s at most over paths of about 100 ms, far
below what its 4 MiB send and 6 MiB receive buffers hold, so the profile's buffer-bound
mechanisms (M1, M2, the meta socket's skb charge) would have nothing to act on.

Assumptions (the scenarios', none on the slides): bottleneck queues hold 100 ms at their rate
(drop-tail); other links 1 Gbit/s; single-path users run Reno, MPTCP users LIA or OLIA; 120 s
runs with the first 20 s excluded (60 s in quick mode). Users start at random times within
the first 2 s, the runs' only randomness (simultaneous starts make every repetition
identical); repetition r draws the same start times in every variant of a scenario, so
variants are compared pairwise per repetition.

Calibration (the one open parameter): the slides' "optimal algorithm with probing cost"
sends at least 1 MSS per RTT on every path and gives neither MSS nor RTT. The probe rate x is
fitted on one cell, scenario B's red-multipath optimum "2.04" (every user): with equal shares
30 · 2.04 = 63 − 15·x, so x = 0.12 Mbit/s, one 1 500-byte packet per 100 ms. That RTT, 100 ms,
is every simulated route's base RTT, and every model cell is evaluated at this x: no other
parameter is fitted, none per claim.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from mptcplab.experiments.base import (
    DEFAULT_TOLERANCE,
    Claim,
    Context,
    Measured,
    Result,
    Tolerance,
    fmt,
    mean_ci95,
    repeated,
    save_figure,
)
from mptcplab.models import khalili
from mptcplab.models import paper_values as pv

NAME = "olia"
TITLE = "LIA vs OLIA in Khalili's scenarios A, B and C (seed 004)"
SOURCE = "seed 004, scenario A/B/C tables and 'Scenario A: OLIA performs close to optimal'"

MBPS = 1e6
C_BPS = 1e6
STAGGER_S = 2.0
QUICK_DURATION = "60s"
#: Scenario B's users and capacities (the slides: "15 blue and 15 red users, C_X = 27 and
#: C_T = 36 Mbps").
N_BLUE, N_RED, CX_BPS, CT_BPS = 15, 15, 27e6, 36e6
#: Wire size of one probe packet (the engine's 1448-byte segments with their headers).
PROBE_PACKET_BYTES = 1500
#: Every simulated route's base RTT (s): the scenario files' 100 ms, the RTT the fit below gives.
RTT_S = 0.100

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
A_CONFIGS = ("N1=10,N2=10", "N1=30,N2=10")
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
#: The algorithm of each bar: "single-path" is scenario A's baseline (type-1 users on TCP).
CCS = ("single-path", "lia", "olia")


def _row(table: tuple[pv.KhaliliRow, ...], config: str, users: str) -> pv.KhaliliRow:
    return next(r for r in table if r.config == config and r.users == users)


def paper_cell(scen: str, config: str, cc: str, users: str) -> pv.Cited | None:
    """The slides' measured cell for one algorithm and user type (None: no such cell)."""
    if cc == "olia":
        return _row(pv.KHALILI_OLIA_A, config, users).mptcp_measured if scen == "A" else None
    row = _row({"A": pv.KHALILI_A, "B": pv.KHALILI_B, "C": pv.KHALILI_C}[scen], config, users)
    return row.single_path_measured if cc == "single-path" else row.mptcp_measured


def _n1(config: str) -> int:
    return int(config.split(",")[0].split("=")[1])


# --- the fit ------------------------------------------------------------------------------

_B_FIT = _row(pv.KHALILI_B, "red multipath", "red").optimal_with_probing
assert _B_FIT is not None
#: The fitted probe rate (bit/s): 30 users · 2.04 = C_X + C_T − 15·x (scenario B's closed
#: form, ``khalili.scenario_b``: the red users' second path occupies X and T at once).
X_FIT_BPS = (CX_BPS + CT_BPS - (N_BLUE + N_RED) * _B_FIT.value) / N_RED
assert math.isclose(khalili.probe_rate_bps(PROBE_PACKET_BYTES, RTT_S), X_FIT_BPS, rel_tol=1e-9)


def _model(scen: str, config: str, probe_bps: float) -> dict[str, float]:
    """The optimal allocation (bit/s per user) of one configuration at probe rate ``probe_bps``."""
    if scen == "A":
        return khalili.scenario_a(_n1(config), 10, C_BPS, C_BPS, probe_bps)
    if scen == "B":
        return khalili.scenario_b(N_BLUE, N_RED, CX_BPS, CT_BPS, config == "red multipath", probe_bps)
    return khalili.scenario_c(_n1(config), 10, C_BPS, C_BPS, probe_bps)


# --- the claims ---------------------------------------------------------------------------

def resolution(printed: str) -> Tolerance:
    """Half a unit of the printed cell's last digit ("0.94" ±0.005, "0.8" ±0.05); a printed
    integer ("1") is read to one decimal, the coarsest precision of the other theory cells."""
    decimals = len(printed.split(".")[1]) if "." in printed else 1
    half = 0.5 * 10.0 ** -decimals
    why = (f"the slides' resolution: '{printed}' read as {float(printed):.1f}, ±half a unit of that digit"
           if "." not in printed else f"the slides' resolution: '{printed}' is rounded to ±{half:g}")
    return Tolerance.absolute(half, why)


def _cell(c: pv.Cited | None) -> pv.Cited:
    """A cell the slides print (refuses an empty one)."""
    if c is None:
        raise ValueError("the slides leave this cell empty")
    return c


def _mb(c: pv.Cited | None) -> float:
    return _cell(c).value / MBPS


def _printed(c: pv.Cited | None) -> str:
    return _cell(c).printed.replace(" Mbit/s", "")


_A_SHORT = {"N1=10,N2=10": "A10", "N1=30,N2=10": "A30"}
_C_SHORT = {"N1=10,N2=10": "C10", "N1=30,N2=10": "C30"}
_U_SHORT = {"type1": "t1", "type2": "t2", "red": "red", "blue": "blue", "multipath": "multi", "single": "single"}
_B_SHORT = {"red single-path": "B-sp", "red multipath": "B-mp"}
_DIRECTION = Tolerance.same(
    "a direction, not a number: 'lower' / 'higher' when the 95 % CI of the per-repetition paired difference "
    "excludes 0, else 'no difference'")


def _cfg_text(scen: str, config: str) -> str:
    if scen == "B":
        return f"B, {config} users"
    return f"{scen}, N1 = {_n1(config)}"


def _sim_id(scen: str, config: str, cc: str, users: str) -> str:
    cfg = {"A": _A_SHORT, "C": _C_SHORT, "B": _B_SHORT}[scen][config]
    return f"sim-{cfg}-{cc}-{_U_SHORT[users]}" if scen == "A" else f"sim-{cfg}-{_U_SHORT[users]}"


#: The slides' spelling where the stored value lost a trailing zero.
_SPELLING = {("A", "N1=10,N2=10", "lia", "type2"): "0.70", ("B", "red multipath", "lia", "blue"): "2.0"}
_USERS = {"type1": "type-1", "type2": "type-2", "red": "red", "blue": "blue", "multipath": "multipath",
          "single": "single-path"}


def _sim_claims() -> list[Claim]:
    out = []
    for scen, config, _, _ in CASES:
        for cc in (("lia", "olia") if scen == "A" else ("lia",)):
            for users in USER_TYPES[scen]:
                cell = _cell(paper_cell(scen, config, cc, users))
                name = {"lia": "LIA", "olia": "OLIA"}[cc]
                out.append(Claim(
                    _sim_id(scen, config, cc, users), "simulation",
                    f"{_cfg_text(scen, config)}: {_USERS[users]} users' throughput, multipath users on {name}",
                    "Mbit/s", _mb(cell), cell.source, DEFAULT_TOLERANCE,
                    printed=_SPELLING.get((scen, config, cc, users), _printed(cell))))
    for config in A_CONFIGS:
        cell = _cell(paper_cell("A", config, "single-path", "type2"))
        assert cell.value == _mb(paper_cell("A", config, "single-path", "type1")) * MBPS
        out.append(Claim(
            f"sim-{_A_SHORT[config]}-sp", "simulation",
            f"A, N1 = {_n1(config)}: throughput with type-1 users on single-path TCP (of the two types, the one "
            "farther from the slides)",
            "Mbit/s", _mb(cell), cell.source, DEFAULT_TOLERANCE, printed=f"{_printed(cell)} (both types)",
            headline=False))
    return out


def _direction_claims() -> list[Claim]:
    def sp(scen: str, config: str, cc: str, users: str) -> str:
        return _SPELLING.get((scen, config, cc, users), _printed(paper_cell(scen, config, cc, users)))

    a = {c: (sp("A", c, "single-path", "type2"), sp("A", c, "lia", "type2"), sp("A", c, "olia", "type2"))
         for c in A_CONFIGS}
    b = {u: (sp("B", "red single-path", "lia", u), sp("B", "red multipath", "lia", u)) for u in ("red", "blue")}
    return [
        Claim("dir-A-lia", "simulation",
              "A: type-1 users switch from TCP to LIA; type-2 throughput (N1 = 10 / 30) and type-1 gain",
              "", "type 2 lower / lower, type 1 no gain", f"{pv.S004}, scenario A table", _DIRECTION,
              printed="Throughput of type 2 users reduced without any benefit for type 1 users (type 2, TCP → LIA: "
                      + ", ".join(f"{x} → {y}" for x, y, _ in a.values()) + ")"),
        Claim("dir-A-olia", "simulation", "A: type-2 throughput with OLIA against LIA (N1 = 10 / 30)", "",
              "higher / higher", _cell(paper_cell("A", A_CONFIGS[0], "olia", "type2")).source, _DIRECTION,
              printed="OLIA performs close to optimal (type 2, LIA → OLIA: "
                      + ", ".join(f"{y} → {z}" for _, y, z in a.values()) + ")"),
        Claim("dir-B", "simulation", "B: red users switch from TCP to MPTCP (LIA); red and blue throughput", "",
              "red lower, blue lower", f"{pv.S004}, scenario B table", _DIRECTION,
              printed="By upgrading red users to MPTCP, the throughput of everybody decreases ("
                      + ", ".join(f"{u} {x} → {y}" for u, (x, y) in b.items()) + ")"),
    ]


def _model_claims() -> list[Claim]:
    xf = fmt(X_FIT_BPS / MBPS)
    out = []
    t1 = [_cell(_row(pv.KHALILI_A, c, "type1").optimal_with_probing) for c in A_CONFIGS]
    assert t1[0] == t1[1]
    out.append(Claim("th-A-t1", "model", f"A: type-1 optimum with probing cost at x = {xf} Mbit/s (both N1)", "Mbit/s",
                     _mb(t1[0]), t1[0].source, resolution(_printed(t1[0])), printed=_printed(t1[0])))
    for config in A_CONFIGS:
        cell = _cell(_row(pv.KHALILI_A, config, "type2").optimal_with_probing)
        out.append(Claim(f"th-{_A_SHORT[config]}-t2", "model",
                         f"A, N1 = {_n1(config)}: type-2 optimum with probing cost at x = {xf} Mbit/s", "Mbit/s",
                         _mb(cell), cell.source, resolution(_printed(cell)), printed=_printed(cell)))
    for config, fit in (("red single-path", False), ("red multipath", True)):
        cell = _cell(_row(pv.KHALILI_B, config, "red").optimal_with_probing)
        assert cell == _row(pv.KHALILI_B, config, "blue").optimal_with_probing
        out.append(Claim(f"th-{_B_SHORT[config]}", "model",
                         f"B, {config} users: every user's optimum with probing cost"
                         + (" (the fit of x)" if fit else f" at x = {xf} Mbit/s"),
                         "Mbit/s", _mb(cell), cell.source, resolution(_printed(cell)),
                         printed=_printed(cell), calibration=fit))
    for config in A_CONFIGS:
        multi = _row(pv.KHALILI_C, config, "multipath").optimal_with_probing
        single = _cell(_row(pv.KHALILI_C, config, "single").optimal_with_probing)
        x_c = _mb(multi) - C_BPS / MBPS
        out.append(Claim(
            f"th-{_C_SHORT[config]}-consistency", "model",
            f"C, N1 = {_n1(config)}: single-path users' optimum with probing cost at the probe rate the slides' "
            f"multipath cell gives ({_printed(multi)} = 1 + x, x = {fmt(x_c)} Mbit/s)",
            "Mbit/s", _mb(single), single.source, resolution(_printed(single)),
            printed=_printed(single), check="consistency"))
    out.append(Claim(
        "th-no-probe", "model", "optimum without probing cost: largest deviation from the slides over the 12 cells "
        "of A, B and C",
        "Mbit/s", 0.0, f"{pv.S004}, scenario A, B and C tables",
        Tolerance.absolute(0.05, "the slides' resolution: '1' and '2.1' carry one decimal"),
        printed="1 (A, C), 2.1 (B) in every cell", headline=False))
    return out


#: Declared before any run. Simulation: the slides' measured cells (±15 %, the slides give no
#: spread) and the three directions their titles state; model: the theory cells at the one
#: fitted probe rate (the slides' printed resolution), with scenario C's column checked against
#: itself.
CLAIMS: tuple[Claim, ...] = (*_sim_claims(), *_direction_claims(), *_model_claims())


# --- the runs -----------------------------------------------------------------------------

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


Runs = dict[tuple[str, str, str, str], list[float]]


def _simulate(ctx: Context, reps: int) -> tuple[Runs, str]:
    """Per (scenario, configuration, algorithm, user type): the per-user mean throughput
    (Mbit/s) of each repetition, in repetition order."""
    # A handful of sub-second runs per case: in quick mode a worker pool per case costs more
    # than it saves.
    rctx = dataclasses.replace(ctx, jobs=1) if ctx.quick else ctx
    runs: Runs = {}
    duration = ""
    for scen, config, base, overrides in CASES:
        ccs: list[str | None] = ["lia", "olia"] + ([None] if scen == "A" else [])
        for cc in ccs:
            sc = case_scenario(scen, base, overrides, cc, ctx.quick)
            duration = sc.data["duration"]
            tag = f"{scen}-{config}-{cc or 'single'}".replace(",", "_").replace("=", "").replace(" ", "_")
            df = repeated(rctx, sc, {"connections": [staggered(sc.data["connections"], r) for r in range(reps)]}, 1, tag)
            assert len(df) == reps  # one row per repetition, in grid (= repetition) order
            for users in USER_TYPES[scen]:
                cols = [c for c in df.columns
                        if c.startswith(f"conn.{PREFIX.get(users, users)}-") and c.endswith(".goodput_bps")]
                runs[(scen, config, cc or "single-path", users)] = (df[cols].mean(axis=1) / MBPS).tolist()
    return runs, duration


def _direction(runs: Runs, a: tuple[str, str, str, str], b: tuple[str, str, str, str]) -> tuple[str, float, float | None]:
    """Whether ``b`` is lower or higher than ``a``, paired per repetition: (word, mean
    difference b − a, 95 % CI half-width)."""
    diff = [y - x for x, y in zip(runs[a], runs[b], strict=True)]
    m, ci, _ = mean_ci95(diff)
    if ci is not None and m + ci < 0:
        return "lower", m, ci
    if ci is not None and m - ci > 0:
        return "higher", m, ci
    return "no difference", m, ci


def _diff_text(m: float, ci: float | None) -> str:
    """``+0.076 ± 0.056``: three decimals, four when the half-width would print as 0.000."""
    d = 3 if ci is None or ci >= 0.0005 else 4
    return f"{m:+.{d}f}" + (f" ± {ci:.{d}f}" if ci is not None else "")


def _measure(runs: Runs) -> dict[str, Measured]:
    measured: dict[str, Measured] = {}
    for scen, config, _, _ in CASES:
        for cc in (("lia", "olia") if scen == "A" else ("lia",)):
            for users in USER_TYPES[scen]:
                m, ci, n = mean_ci95(runs[(scen, config, cc, users)])
                measured[_sim_id(scen, config, cc, users)] = Measured(m, ci, n)
    for config in A_CONFIGS:
        cell = _mb(paper_cell("A", config, "single-path", "type1"))
        vals = {u: mean_ci95(runs[("A", config, "single-path", u)]) for u in ("type1", "type2")}
        far = max(vals, key=lambda u: abs(vals[u][0] - cell))
        m, ci, n = vals[far]
        measured[f"sim-{_A_SHORT[config]}-sp"] = Measured(
            m, ci, n, note="; ".join(f"{_USERS[u]} {fmt(v[0])}" for u, v in vals.items()))
    # Directions, paired per repetition.
    t2, t1, notes = [], [], []
    for config in A_CONFIGS:
        d2 = _direction(runs, ("A", config, "single-path", "type2"), ("A", config, "lia", "type2"))
        d1 = _direction(runs, ("A", config, "single-path", "type1"), ("A", config, "lia", "type1"))
        t2.append(d2[0])
        t1.append(d1[0] != "higher")
        notes.append(f"N1 = {_n1(config)}: type 2 {_diff_text(d2[1], d2[2])}, type 1 {_diff_text(d1[1], d1[2])}")
    n = len(runs[("A", A_CONFIGS[0], "lia", "type2")])
    measured["dir-A-lia"] = Measured(
        f"type 2 {' / '.join(t2)}, type 1 {'no gain' if all(t1) else 'gain'}", n=n,
        note="LIA − TCP, Mbit/s: " + "; ".join(notes))
    dirs = [_direction(runs, ("A", c, "lia", "type2"), ("A", c, "olia", "type2")) for c in A_CONFIGS]
    measured["dir-A-olia"] = Measured(
        " / ".join(d[0] for d in dirs), n=n,
        note="OLIA − LIA, Mbit/s: " + "; ".join(f"N1 = {_n1(c)} {_diff_text(d[1], d[2])}" for c, d in zip(A_CONFIGS, dirs)))
    db = {u: _direction(runs, ("B", "red single-path", "lia", u), ("B", "red multipath", "lia", u)) for u in ("red", "blue")}
    measured["dir-B"] = Measured(
        ", ".join(f"{u} {d[0]}" for u, d in db.items()), n=n,
        note="MPTCP − TCP red users, Mbit/s: " + "; ".join(f"{u} {_diff_text(d[1], d[2])}" for u, d in db.items()))
    measured.update(model_measured())
    return measured


def needed_x(scen: str, config: str, users: str) -> str:
    """The probe rates (Mbit/s, "lo–hi") for which the closed form of the optimum gives the
    slides' printed cell to its resolution: a multipath user of C gets 1 + x, a type-2 user of
    A and a single-path user of C get 1 − (N1/N2)·x (``khalili.scenario_a`` / ``scenario_c``)."""
    table = {"A": pv.KHALILI_A, "C": pv.KHALILI_C}[scen]
    cell = _row(table, config, users).optimal_with_probing
    y, t = _mb(cell), resolution(_printed(cell)).a
    if users == "multipath":
        lo, hi = y - t - 1, y + t - 1
    else:
        k = _n1(config) / 10
        lo, hi = (1 - y - t) / k, (1 - y + t) / k
    return f"{fmt(lo)}–{fmt(hi)}"


def model_measured() -> dict[str, Measured]:
    """The model claims: the slides' optimal allocations evaluated by ``khalili`` (no run)."""
    out: dict[str, Measured] = {}
    at = {(s, c): _model(s, c, X_FIT_BPS) for s, c, _, _ in CASES}
    t1 = [at[("A", c)]["type1"] / MBPS for c in A_CONFIGS]
    out["th-A-t1"] = Measured(max(t1, key=lambda v: abs(v - 1)), note=f"N1 = 10: {fmt(t1[0])}; N1 = 30: {fmt(t1[1])}")
    for config in A_CONFIGS:
        out[f"th-{_A_SHORT[config]}-t2"] = Measured(
            at[("A", config)]["type2"] / MBPS, note=f"the printed cell needs x = {needed_x('A', config, 'type2')} Mbit/s")
    for config in ("red single-path", "red multipath"):
        cell = _mb(_row(pv.KHALILI_B, config, "red").optimal_with_probing)
        vals = {u: at[("B", config)][u] / MBPS for u in ("red", "blue")}
        far = max(vals.values(), key=lambda v: abs(v - cell))
        note = "; ".join(f"{u} {fmt(v)}" for u, v in vals.items())
        if config == "red multipath":
            note += f"; fitted x = {fmt(X_FIT_BPS / MBPS)} Mbit/s (1 500 B per {fmt(1000 * RTT_S)} ms)"
        out[f"th-{_B_SHORT[config]}"] = Measured(far, note=note)
    for config in A_CONFIGS:
        multi = _row(pv.KHALILI_C, config, "multipath").optimal_with_probing
        got = _model("C", config, (_mb(multi) - C_BPS / MBPS) * MBPS)
        at_fit = at[("C", config)]
        out[f"th-{_C_SHORT[config]}-consistency"] = Measured(
            got["single"] / MBPS,
            note=(f"multipath {fmt(got['multipath'] / MBPS)} at that x; the multipath cell needs x = "
                  f"{needed_x('C', config, 'multipath')}, the single-path cell x = {needed_x('C', config, 'single')} "
                  f"Mbit/s; at the fitted x: {fmt(at_fit['multipath'] / MBPS)} / {fmt(at_fit['single'] / MBPS)}"))
    dev = 0.0
    for scen, config, _, _ in CASES:
        table = {"A": pv.KHALILI_A, "B": pv.KHALILI_B, "C": pv.KHALILI_C}[scen]
        ours = _model(scen, config, 0.0)
        for users in USER_TYPES[scen]:
            dev = max(dev, abs(ours[users] / MBPS - _mb(_row(table, config, users).optimal_without_probing)))
    # The solver is accurate to about 1e-9 of the largest capacity: report to 1e-4 Mbit/s.
    out["th-no-probe"] = Measured(round(dev, 4), note="every cell of the model: 1 (A, C) and 2.1 (B)")
    return out


# --- outputs ------------------------------------------------------------------------------

def per_user_table(runs: Runs) -> Any:
    import pandas as pd

    rows = []
    for (scen, config, cc, users), vals in runs.items():
        m, ci, n = mean_ci95(vals)
        cell = paper_cell(scen, config, cc, users)
        th = ({"A": pv.KHALILI_A, "B": pv.KHALILI_B, "C": pv.KHALILI_C}[scen])
        row = _row(th, config, users)
        rows.append({
            "scenario": scen, "config": config, "cc": cc, "users": users, "per_user_mbps": m,
            "per_user_mbps_ci95": ci, "runs": n,
            "paper_measured_mbps": None if cell is None else cell.value / MBPS,
            "paper_lia_mbps": _mb(row.mptcp_measured),
            "paper_olia_mbps": _mb(_row(pv.KHALILI_OLIA_A, config, users).mptcp_measured) if scen == "A" else None,
            "theory_with_probe_mbps": _model(scen, config, X_FIT_BPS)[users] / MBPS,
            "theory_without_probe_mbps": _model(scen, config, 0.0)[users] / MBPS,
            "paper_theory_with_probe_mbps": _mb(row.optimal_with_probing),
            "paper_theory_without_probe_mbps": _mb(row.optimal_without_probing),
        })
    return pd.DataFrame(rows)


COLOURS = {"single-path": "tab:gray", "lia": "tab:orange", "olia": "tab:blue"}
CC_NAMES = {"single-path": "TCP", "lia": "LIA", "olia": "OLIA"}
#: Who runs the bar's algorithm, per scenario.
RUNNERS = {"A": "type-1 users", "B": "MPTCP users", "C": "multipath users"}


def _tick(scen: str, config: str, users: str) -> str:
    cfg = {"red single-path": "red on TCP", "red multipath": "red on MPTCP"}.get(config) or f"N1 = {_n1(config)}"
    return f"{cfg}\n{_USERS[users]} users"


def figure(table: Any) -> Any:
    """Per-user throughput, one panel per scenario: a bar per algorithm, the slides' measured
    value on the bar of the algorithm it belongs to, the optimum with probing cost (the
    slides' and ours at the fitted x) across each group; a legend in every panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.4), layout="constrained")
    for ax, scen in zip(axes, "ABC", strict=True):
        t = table[table["scenario"] == scen]
        keys = [(c, u) for c in dict.fromkeys(t["config"]) for u in USER_TYPES[scen]]
        ccs = [c for c in CCS if c in set(t["cc"])]
        width = 0.8 / len(ccs)

        def x_of(i: int, k: int, ccs: list[str] = ccs, width: float = width) -> float:
            return i - 0.4 + (k + 0.5) * width

        slides_x, slides_y = [], []
        for k, cc in enumerate(ccs):
            rows = [t[(t["config"] == c) & (t["cc"] == cc) & (t["users"] == u)].iloc[0] for c, u in keys]
            xs = [x_of(i, k) for i in range(len(keys))]
            ax.bar(xs, [r.per_user_mbps for r in rows], width * 0.95, color=COLOURS[cc],
                   yerr=[0 if r.per_user_mbps_ci95 != r.per_user_mbps_ci95 else r.per_user_mbps_ci95 for r in rows],
                   capsize=2, label=f"ours: {RUNNERS[scen]} on {CC_NAMES[cc]}")
            for x, r in zip(xs, rows, strict=True):
                if r.paper_measured_mbps == r.paper_measured_mbps and r.paper_measured_mbps is not None:
                    slides_x.append(x)
                    slides_y.append(r.paper_measured_mbps)
        ax.plot(slides_x, slides_y, "kD", mfc="white", ms=6, zorder=5, label="slides: measured (on its algorithm's bar)")
        first = t.drop_duplicates(["config", "users"]).set_index(["config", "users"])
        for i, key in enumerate(keys):
            r = first.loc[key]
            ax.hlines(r.paper_theory_with_probe_mbps, i - 0.45, i + 0.45, colors="black", linestyles="--", lw=1.2,
                      zorder=4, label="slides: optimum with probing cost" if i == 0 else None)
            ax.hlines(r.theory_with_probe_mbps, i - 0.45, i + 0.45, colors="tab:red", lw=1.6, zorder=3,
                      label=f"model at x = {fmt(X_FIT_BPS / MBPS)} Mbit/s" if i == 0 else None)
        ax.set_xticks(range(len(keys)), [_tick(scen, c, u) for c, u in keys], fontsize=8)
        ax.set_ylabel("throughput per user (Mbit/s)" + (", C = 1 Mbit/s" if scen != "B" else ""))
        ax.set_title(f"scenario {scen}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(0, 1.45 * max(t["per_user_mbps"].max(), t["paper_theory_with_probe_mbps"].max(),
                                  t["paper_lia_mbps"].max()))
        ax.legend(fontsize=6.5, loc="upper left", ncol=2)
    return fig


def run(ctx: Context) -> Result:
    reps = ctx.reps(10, 3)
    runs, duration = _simulate(ctx, reps)
    measured = _measure(runs)
    table = per_user_table(runs)
    csv = ctx.path("per_user_throughput.csv")
    table.to_csv(csv, index=False)
    figs = save_figure(ctx, figure(table), "per_user_throughput")
    setup = f"{__doc__.strip()}\n\nRuns: {reps} repetitions per case, {duration} each."
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, _discussion(runs, measured),
                  {"per-user throughput": csv}, figs)


def _discussion(runs: Runs, measured: dict[str, Measured]) -> str:
    by_id = {c.id: c for c in CLAIMS}

    def inside(cid: str) -> bool:
        c, m = by_id[cid], measured[cid]
        return c.tolerance is not None and m.value is not None and c.tolerance.holds(c.paper, m.value)

    def v(cid: str) -> str:
        x = measured[cid].value
        return fmt(x) if isinstance(x, float) else str(x)

    def pct(cid: str) -> str:
        x, p = measured[cid].value, by_id[cid].paper
        d = 100 * (float(x) / float(p) - 1)  # type: ignore[arg-type]
        return f"{'+' if d >= 0 else '−'}{fmt(abs(d))} %"

    def mean(*key: str) -> str:
        return fmt(mean_ci95(runs[key])[0])  # type: ignore[index]

    xf = fmt(X_FIT_BPS / MBPS)
    t1 = [mean_ci95(runs[("A", c, cc, "type1")])[0] for c in A_CONFIGS for cc in CCS]
    a_ok = [inside(f"th-{_A_SHORT[c]}-t2") for c in A_CONFIGS]
    model = [
        "**Model.** The optimum without probing cost gives every cell of the slides (largest deviation "
        f"{v('th-no-probe')} Mbit/s). At the fitted x = {xf} Mbit/s the type-1 cells of A come out at {v('th-A-t1')} "
        f"and every user of B with red users on TCP at {v('th-B-sp')}; A's type-2 cells at {v('th-A10-t2')} "
        f"(N1 = 10) and {v('th-A30-t2')} (N1 = 30) against the printed 0.94 and 0.8, which need x = "
        f"{needed_x('A', A_CONFIGS[0], 'type2')} and {needed_x('A', A_CONFIGS[1], 'type2')} Mbit/s."]
    if not all(a_ok):
        model.append(
            f"That is about half of B's {xf} (for example the same packet per 200 ms instead of 100 ms). The slides "
            "state no RTT, so A and B may have used different ones; with the one probe rate this reproduction "
            "allows, A's type-2 column is counted as a miss of ours, not as an inconsistency of the slides.")
    c10, c30 = (f"th-{_C_SHORT[c]}-consistency" for c in A_CONFIGS)
    lines = [
        " ".join(model),
        "",
        "Scenario C's theory column is checked against itself: its multipath cell 1.04 = 1 + x gives x = "
        f"0.04 Mbit/s, at which the single-path users get {v(c10)} (N1 = 10) and {v(c30)} (N1 = 30) against the "
        f"printed 0.94 and 0.8. The multipath cell needs x = {needed_x('C', A_CONFIGS[0], 'multipath')} Mbit/s, the "
        f"single-path cells x = {needed_x('C', A_CONFIGS[0], 'single')} and {needed_x('C', A_CONFIGS[1], 'single')}: "
        "no single probe rate gives the column. Without the model: the printed cells total 10 × 1.04 + 10 × 0.94 = "
        "19.8 of 20 Mbit/s and 30 × 1.04 + 10 × 0.8 = 39.2 of 40 Mbit/s, while a proportionally fair allocation on "
        "this topology fills both links at any probe rate. We found no natural reading of the slides that gives "
        "both cells, so none is offered.",
        "",
    ]
    sim_ids = [c.id for c in CLAIMS if c.kind == "simulation" and c.headline and not c.id.startswith("dir-")]
    missed = [i for i in sim_ids if not inside(i)]
    lines.append(
        f"**Simulation.** {len(sim_ids) - len(missed)} of the {len(sim_ids)} measured cells lie within ±15 % of the "
        "slides" + ("; outside: " + "; ".join(f"{by_id[i].quantity}, {v(i)} against {by_id[i].printed} ({pct(i)})"
                                               for i in missed) if missed else "") + ".")
    lines += [
        "",
        f"Scenario A: with type-1 users on LIA, type-2 users get {v('sim-A10-lia-t2')} (N1 = 10) and "
        f"{v('sim-A30-lia-t2')} (N1 = 30) against {mean('A', A_CONFIGS[0], 'single-path', 'type2')} and "
        f"{mean('A', A_CONFIGS[1], 'single-path', 'type2')} when type-1 users run TCP "
        f"({measured['dir-A-lia'].note}); with OLIA {v('sim-A10-olia-t2')} and {v('sim-A30-olia-t2')} "
        f"({measured['dir-A-olia'].note}). Type-1 users get {fmt(min(t1))}–{fmt(max(t1))} whatever their "
        "algorithm.",
    ]
    if not inside("sim-A30-lia-t2"):
        lines.append(
            f"The slides' LIA penalty at N1 = 30 (0.98 → 0.44) is {'deeper' if float(measured['sim-A30-lia-t2'].value) > 0.44 else 'shallower'} "  # type: ignore[arg-type]
            f"than ours ({v('sim-A30-lia-t2')}); the slides give neither the topology, the RTTs nor the queues of "
            "their testbed, so we cannot say which of our assumptions makes the difference.")
    blue = measured["dir-B"].value
    lines += [
        "",
        f"Scenario B (LIA): red users get {v('sim-B-sp-red')} on TCP and {v('sim-B-mp-red')} on MPTCP, blue users "
        f"{v('sim-B-sp-blue')} and {v('sim-B-mp-blue')} ({measured['dir-B'].note}); the slides' blue users fall "
        f"from 2.5 to 2.0, ours: {str(blue).split('blue ')[1]}. Scenario C (LIA): multipath users get "
        f"{v('sim-C10-multi')} (N1 = 10) and {v('sim-C30-multi')} (N1 = 30), single-path users {v('sim-C10-single')} "
        f"and {v('sim-C30-single')} (slides 1.3 / 1.19 and 0.68 / 0.38). OLIA's runs in B and C are in the table "
        "and the figure; the slides give no OLIA numbers there.",
    ]
    return "\n".join(lines)
