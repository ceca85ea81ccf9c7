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
    merge_into,
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


#: The sweep rows (one per repetition, in order) of each (scenario, configuration, algorithm).
Frames = dict[tuple[str, str, str], Any]


def _tag(*parts: str) -> str:
    """A cache directory name."""
    return "-".join(parts).replace(",", "_").replace("=", "").replace(" ", "_")


def _repeated(ctx: Context, sc: Any, reps: int, tag: str) -> Any:
    """The ``reps`` repetitions of one case (staggered starts), one sweep row each, in order."""
    # A handful of sub-second runs per case: in quick mode a worker pool per case costs more
    # than it saves.
    rctx = dataclasses.replace(ctx, jobs=1) if ctx.quick else ctx
    df = repeated(rctx, sc, {"connections": [staggered(sc.data["connections"], r) for r in range(reps)]}, 1, tag)
    assert len(df) == reps  # one row per repetition, in grid (= repetition) order
    return df


def per_user(df: Any, prefix: str, metric: str = "goodput_bps", path: str | None = None) -> list[float]:
    """Per repetition, the mean over the users whose connections start with ``prefix`` of a
    connection metric, or with ``path`` of their subflow on that route."""
    tail = f".{path}.{metric}" if path else f".{metric}"
    head = "sf." if path else "conn."
    cols = [c for c in df.columns if c.startswith(f"{head}{prefix}-") and c.endswith(tail)]
    assert cols, f"no column {head}{prefix}-*{tail}"
    return df[cols].mean(axis=1).tolist()


def _simulate(ctx: Context, reps: int) -> tuple[Runs, str, Frames]:
    """Per (scenario, configuration, algorithm, user type): the per-user mean throughput
    (Mbit/s) of each repetition, in repetition order; and the runs' sweep rows."""
    runs: Runs = {}
    frames: Frames = {}
    duration = ""
    for scen, config, base, overrides in CASES:
        ccs: list[str | None] = ["lia", "olia"] + ([None] if scen == "A" else [])
        for cc in ccs:
            sc = case_scenario(scen, base, overrides, cc, ctx.quick)
            duration = sc.data["duration"]
            df = _repeated(ctx, sc, reps, _tag(scen, config, cc or "single"))
            frames[(scen, config, cc or "single-path")] = df
            for users in USER_TYPES[scen]:
                mean = per_user(df, PREFIX.get(users, users))
                runs[(scen, config, cc or "single-path", users)] = [v / MBPS for v in mean]
    return runs, duration, frames


def _direction(runs: Runs, a: tuple[str, str, str, str], b: tuple[str, str, str, str]) -> tuple[str, float, float | None]:
    """Whether ``b`` is lower or higher than ``a``, paired per repetition: (word, mean
    difference b − a, 95 % CI half-width)."""
    return paired(runs[a], runs[b])


def paired(a: list[float], b: list[float]) -> tuple[str, float, float | None]:
    """:func:`_direction` of two series of values, paired per repetition (``a`` may hold more
    repetitions than ``b``: its first ones are paired)."""
    diff = [y - x for x, y in zip(a[:len(b)], b, strict=True)]
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


# --- the ablation -------------------------------------------------------------------------

def _red(lo: str, hi: str) -> dict[str, Any]:
    """RED (Floyd & Jacobson 1993) with their max_p = 10 % and w_q = 0.002 (the engine's
    default), gentle above ``hi`` (Floyd 2000); thresholds are times at the link rate, and the
    100 ms drop-tail limit stays."""
    return {"aqm": {"kind": "red", "min": lo, "max": hi, "max_p": "10%", "gentle": True}}


AS_RUN, SHORT, RED_LOW, RED_HIGH = "as run (drop-tail 100 ms)", "drop-tail 25 ms", "RED 20–60 ms", "RED 50–90 ms"
DELACK, RED_DELACK, RENO, OLIA_ROW, V09X = (
    "delayed ACKs off", "RED 20–60 ms + delayed ACKs off", "uncoupled Reno", "OLIA", "linux-v0.9x stack")
_NO_DELACK = {"tcp": {"delack_segments": 1}}
#: One change at a time, the rest as run: (label, merged into every bottleneck link (the links
#: with a queue limit), merged into every connection, the multipath users' algorithm). A row
#: that changes nothing but the algorithm, LIA or OLIA, is the section's own runs.
ABLATIONS: tuple[tuple[str, dict[str, Any], dict[str, Any], str], ...] = (
    (AS_RUN, {}, {}, "lia"),
    (SHORT, {"queue": "25ms"}, {}, "lia"),
    (RED_LOW, _red("20ms", "60ms"), {}, "lia"),
    (RED_HIGH, _red("50ms", "90ms"), {}, "lia"),
    (DELACK, {}, _NO_DELACK, "lia"),
    (RED_DELACK, _red("20ms", "60ms"), _NO_DELACK, "lia"),
    (RENO, {}, {}, "reno"),
    (OLIA_ROW, {}, {}, "olia"),
    (V09X, {}, {"stack": "linux-v0.9x"}, "lia"),
)
#: The configurations the ablation varies: those of the failing claims' scenarios, A and B.
ABLATION_CASES = [(s, c) for s, c, _, _ in CASES if s in ("A", "B")]
#: Scenario B's cells and the ablation table's columns holding them.
B_CELLS = {"sim-B-sp-red": "red_sp_mbps", "sim-B-sp-blue": "blue_sp_mbps", "sim-B-mp-red": "red_mp_mbps",
           "sim-B-mp-blue": "blue_mp_mbps"}


def _ablation_runs(ctx: Context, reps: int, frames: Frames) -> dict[str, dict[tuple[str, str], Any]]:
    """Per variant and configuration of A and B, one row of metrics per repetition (the section's
    first start times). Sub-second runs: in ``ctx.jobs`` threads (the engine runs without the
    interpreter lock), not through a sweep, whose cache costs more than they do."""
    from concurrent.futures import ThreadPoolExecutor

    import pandas as pd

    import mptcplab

    todo: dict[tuple[str, str, str], list[Any]] = {}
    for label, link, conn, cc in ABLATIONS:
        if not link and not conn and cc in ("lia", "olia"):
            continue
        for scen, config in ABLATION_CASES:
            _, _, base, overrides = next(c for c in CASES if c[:2] == (scen, config))
            sc = case_scenario(scen, base, overrides, cc, ctx.quick)
            sc = sc.with_overrides({"links": [merge_into(dict(lk), link) if "queue" in lk else lk
                                              for lk in sc.data["links"]]})
            conns = [merge_into(dict(c), conn) for c in sc.data["connections"]]
            todo[(label, scen, config)] = [sc.with_overrides({"connections": staggered(conns, r)})
                                           for r in range(reps)]
    with ThreadPoolExecutor(max(1, ctx.jobs)) as pool:
        done = {k: pool.map(lambda sc: mptcplab.run(sc).metrics(), v) for k, v in todo.items()}
        rows = {k: pd.DataFrame(list(v)) for k, v in done.items()}
    return {label: {(s, c): rows[(label, s, c)] if (label, s, c) in rows else frames[(s, c, cc)]
                    for s, c in ABLATION_CASES} for label, _, _, cc in ABLATIONS}


Series = dict[tuple[str, str], list[float]]


def ablation_tables(abl: dict[str, dict[tuple[str, str], Any]]) -> tuple[Any, Any, Series]:
    """Scenario B (one row per variant: the four cells, the paired changes when red users become
    multipath, each kind of subflow, red's X-then-T subflow's timeouts and RTT) and scenario A
    (one row per variant and N1: type-1's subflow over both bottlenecks against its own path),
    and the per-repetition series of B."""
    import pandas as pd

    def mbps(df: Any, prefix: str, path: str | None = None) -> list[float]:
        return [v / MBPS for v in per_user(df, prefix, path=path)]

    def mean(xs: list[float]) -> float:
        return mean_ci95(xs)[0]

    series: Series = {}
    rows_b, rows_a = [], []
    for label, *_ in ABLATIONS:
        sp, mp = abl[label][("B", "red single-path")], abl[label][("B", "red multipath")]
        s = {"red_sp": mbps(sp, "red"), "blue_sp": mbps(sp, "blue"), "red_mp": mbps(mp, "red"),
             "blue_mp": mbps(mp, "blue"), "red_t_mp": mbps(mp, "red", "t"), "red_xt": mbps(mp, "red", "xt")}
        s.update({f"blue_{route}_{c}": mbps(df, "blue", route)
                  for route in ("x", "t") for c, df in (("sp", sp), ("mp", mp))})
        series.update({(label, k): v for k, v in s.items()})
        dr, db = paired(s["red_sp"], s["red_mp"]), paired(s["blue_sp"], s["blue_mp"])
        rows_b.append({
            "variant": label, "runs": len(s["red_sp"]),
            **{f"{k}_mbps": mean(s[k]) for k in ("red_sp", "blue_sp", "red_mp", "blue_mp")},
            "red_change_mbps": dr[1], "red_change_ci95": dr[2], "blue_change_mbps": db[1], "blue_change_ci95": db[2],
            "direction": f"red {dr[0]}, blue {db[0]}",
            **{f"{k}_mbps": mean(s[k])
               for k in ("blue_x_sp", "blue_t_sp", "blue_x_mp", "blue_t_mp", "red_t_mp", "red_xt")},
            "red_xt_rtos": mean(per_user(mp, "red", "rtos", "xt")),
            "red_xt_rtt_ms": 1000 * mean(per_user(mp, "red", "mean_rtt_s", "xt")),
            "red_t_rtt_ms": 1000 * mean(per_user(mp, "red", "mean_rtt_s", "t"))})
        for config in A_CONFIGS:
            df = abl[label][("A", config)]
            rows_a.append({
                "variant": label, "config": config, "runs": len(df), "type1_mbps": mean(mbps(df, "type1")),
                "type2_mbps": mean(mbps(df, "type2")), "type1_shared_mbps": mean(mbps(df, "type1", "shared")),
                "type1_shared_rtos": mean(per_user(df, "type1", "rtos", "shared")),
                "type1_shared_rtt_ms": 1000 * mean(per_user(df, "type1", "mean_rtt_s", "shared")),
                "type1_own_rtt_ms": 1000 * mean(per_user(df, "type1", "mean_rtt_s", "own"))})
    return pd.DataFrame(rows_b), pd.DataFrame(rows_a), series


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
    abl_reps = ctx.reps(5, 3)
    runs, duration, frames = _simulate(ctx, reps)
    measured = _measure(runs)
    table = per_user_table(runs)
    tables = {"per-user throughput": ctx.path("per_user_throughput.csv"),
              "ablation (scenario B)": ctx.path("ablation_b.csv"), "ablation (scenario A)": ctx.path("ablation_a.csv")}
    table.to_csv(tables["per-user throughput"], index=False)
    abl_b, abl_a, series = ablation_tables(_ablation_runs(ctx, abl_reps, frames))
    abl_b.to_csv(tables["ablation (scenario B)"], index=False)
    abl_a.to_csv(tables["ablation (scenario A)"], index=False)
    figs = save_figure(ctx, figure(table), "per_user_throughput")
    setup = (f"{__doc__.strip()}\n\nRuns: {reps} repetitions per case, {duration} each. Ablation (not counted): "
             f"scenarios A and B with one change at a time, {abl_reps} repetitions per variant (the first start "
             "times of the section's runs; its unchanged rows are the section's runs).")
    discussion = _discussion(runs, measured) + "\n\n" + _ablation_text(abl_b, abl_a, series)
    return Result(NAME, TITLE, SOURCE, setup, CLAIMS, measured, discussion, tables, figs)


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
            f"than ours ({v('sim-A30-lia-t2')}); the ablation below varies the assumptions that could carry it.")
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


def _ablation_text(tb: Any, ta: Any, series: Series) -> str:
    """The ablation's reading, from its tables: per failing claim, the variants that carry it
    within tolerance and the mechanism their numbers show."""
    by_id = {c.id: c for c in CLAIMS}

    def holds(cid: str, x: float) -> bool:
        c = by_id[cid]
        return c.tolerance is not None and c.tolerance.holds(c.paper, x)

    def names(xs: list[str]) -> str:
        return "; ".join(xs) if xs else "none of the variants"

    def signed(m: float, ci: float | None) -> str:
        return _diff_text(m, None if ci != ci else ci)

    labels = [v[0] for v in ABLATIONS]
    b = tb.set_index("variant")
    a30, a10 = (ta[ta["config"] == c].set_index("variant") for c in (A_CONFIGS[1], A_CONFIGS[0]))

    def bv(v: str, col: str) -> str:
        return fmt(float(b.loc[v, col]))

    def av(v: str, col: str, t: Any = a30) -> str:
        return fmt(float(t.loc[v, col]))

    def chg(v: str, users: str) -> str:
        return signed(float(b.loc[v, f"{users}_change_mbps"]), b.loc[v, f"{users}_change_ci95"])

    out = [
        f"**Ablation** (not counted; one change at a time, the rest as run, {int(b.loc[SHORT, 'runs'])} runs per "
        "variant with the section's first start times; the as-run and OLIA rows are the section's runs; tables "
        "'ablation (scenario A)' and 'ablation (scenario B)'; Mbit/s per user)."]

    # Scenario A, N1 = 30: type-2 users under LIA.
    ok = [v for v in labels if holds("sim-A30-lia-t2", float(a30.loc[v, "type2_mbps"]))]
    text = (
        f"*A, N1 = 30, type-2 users, type-1 users on LIA* (slides {by_id['sim-A30-lia-t2'].printed}): "
        f"{av(AS_RUN, 'type2_mbps')} as run, {av(SHORT, 'type2_mbps')} with 25 ms drop-tail buffers, "
        f"{av(RED_LOW, 'type2_mbps')} with RED 20–60 ms, {av(RED_HIGH, 'type2_mbps')} with RED 50–90 ms, "
        f"{av(RENO, 'type2_mbps')} with uncoupled Reno; within ±15 % with: {names(ok)}. Type-1's second path "
        f"crosses both bottlenecks: as run its mean RTT is {av(AS_RUN, 'type1_shared_rtt_ms')} ms against "
        f"{av(AS_RUN, 'type1_own_rtt_ms')} ms on the first path and it carries {av(AS_RUN, 'type1_shared_mbps')}; "
        f"with 25 ms buffers {av(SHORT, 'type1_shared_rtt_ms')} against {av(SHORT, 'type1_own_rtt_ms')} ms and "
        f"{av(SHORT, 'type1_shared_mbps')}; with RED 20–60 ms, which queues about as long "
        f"({av(RED_LOW, 'type1_shared_rtt_ms')} against {av(RED_LOW, 'type1_own_rtt_ms')} ms), "
        f"{av(RED_LOW, 'type1_shared_mbps')}.")
    if SHORT in ok and RED_LOW in ok and AS_RUN not in ok:
        a10_ok = holds("sim-A10-lia-t2", float(a10.loc[SHORT, "type2_mbps"]))
        text += (
            " The cell follows the bottlenecks' queueing delay, whichever the drop discipline: of the changes that "
            "keep LIA, what stops it is the buffer the scenarios assume (100 ms, one base-RTT bandwidth-delay "
            "product, at each bottleneck; the slides state none). With a quarter of it the cell is reproduced, and "
            "N1 = 10's type-2 cell is "
            f"{av(SHORT, 'type2_mbps', a10)} ({'still' if a10_ok else 'then not'} within ±15 % of "
            f"{by_id['sim-A10-lia-t2'].printed}).")
    elif AS_RUN not in ok:
        text += " No pair of variants isolates what stops the cell: unexplained."
    if RENO in ok:
        text += (f" Uncoupled Reno reaches it with 100 ms buffers too (its type-1 users' second path carries "
                 f"{av(RENO, 'type1_shared_mbps')} against LIA's {av(AS_RUN, 'type1_shared_mbps')}), but the slides' "
                 "cell is LIA's.")
    out.append(text)

    # Scenario B: the direction and the cells with red users multipath.
    paper_blue = by_id["sim-B-mp-blue"].paper - by_id["sim-B-sp-blue"].paper  # type: ignore[operator]
    paper_red = by_id["sim-B-mp-red"].paper - by_id["sim-B-sp-red"].paper  # type: ignore[operator]
    ok_dir = [v for v in labels if b.loc[v, "direction"] == by_id["dir-B"].paper]

    def xt(v: str) -> float:
        return float(b.loc[v, "red_xt_mbps"])

    def flight(v: str) -> float:
        """Packets in flight on red's second path: its rate × its RTT (Little's law) in 1448-byte segments."""
        return xt(v) * MBPS * float(b.loc[v, "red_xt_rtt_ms"]) / 1000 / (8 * 1448)

    ok_all = [v for v in labels if all(holds(cid, float(b.loc[v, col])) for cid, col in B_CELLS.items())]
    # A loss is repaired without a timeout only if dupthresh (3) segments follow it in flight.
    few = ", too few for three duplicate ACKs after a loss" if flight(AS_RUN) < 3 + 1 else ""
    out.append(
        f"*B, red users become multipath (LIA)*: blue users' change (paired per start-time draw; slides "
        f"{fmt(paper_blue)}) is {chg(AS_RUN, 'blue')} as run, {chg(SHORT, 'blue')} with 25 ms drop-tail buffers, "
        f"{chg(RED_LOW, 'blue')} with RED 20–60 ms and {chg(RED_HIGH, 'blue')} with RED 50–90 ms; red users' "
        f"{chg(AS_RUN, 'red')}, {chg(SHORT, 'red')}, {chg(RED_LOW, 'red')} and {chg(RED_HIGH, 'red')} (slides "
        f"{fmt(paper_red)}). Blue users lose X to red's second path (X then T), which carries "
        f"{bv(AS_RUN, 'red_xt_mbps')}, {bv(SHORT, 'red_xt_mbps')}, {bv(RED_LOW, 'red_xt_mbps')} and "
        f"{bv(RED_HIGH, 'red_xt_mbps')} in the same variants. As run that path waits in both 100 ms queues (mean "
        f"RTT {bv(AS_RUN, 'red_xt_rtt_ms')} ms against {bv(AS_RUN, 'red_t_rtt_ms')} ms on red's T path) with about "
        f"{fmt(flight(AS_RUN))} packets in flight{few}, and times out "
        f"{bv(AS_RUN, 'red_xt_rtos')} times per subflow and run (RED 20–60 ms: {bv(RED_LOW, 'red_xt_rtos')}, with "
        f"{fmt(flight(RED_LOW))} packets in flight). Drop-tail 25 ms and RED "
        f"20–60 ms queue alike (red's T path {bv(SHORT, 'red_t_rtt_ms')} and {bv(RED_LOW, 'red_t_rtt_ms')} ms): "
        f"there the drop process alone moves that path from {bv(SHORT, 'red_xt_mbps')} to "
        f"{bv(RED_LOW, 'red_xt_mbps')} and blue's change from {chg(SHORT, 'blue')} to {chg(RED_LOW, 'blue')}. "
        f"The slides' direction ({by_id['dir-B'].paper}) holds with: {names(ok_dir)}; all four B cells lie within "
        f"±15 % with: {names(ok_all)}."
        + (f" In every variant with the slides' direction red's second path carries at least "
           f"{fmt(min(xt(v) for v in ok_dir))} (as run {bv(AS_RUN, 'red_xt_mbps')}): what stops the direction and "
           "blue's cell is that path's starvation under the assumed 100 ms drop-tail buffers."
           if ok_dir and AS_RUN not in ok_dir and all(xt(v) > xt(AS_RUN) for v in ok_dir) else ""))

    # Scenario B, red users on TCP: who gets T.
    ok_sp = [v for v in labels if holds("sim-B-sp-red", float(b.loc[v, "red_sp_mbps"]))]
    d_dt = paired(series[(AS_RUN, "red_sp")], series[(DELACK, "red_sp")])
    d_red = paired(series[(RED_LOW, "red_sp")], series[(RED_DELACK, "red_sp")])
    text = (
        f"*B, red users on TCP* (slides {by_id['sim-B-sp-red'].printed}): red users get {bv(AS_RUN, 'red_sp_mbps')} "
        f"as run against {bv(AS_RUN, 'blue_t_sp_mbps')} for blue's LIA subflow on T; with delayed ACKs off (every "
        f"segment acknowledged) {bv(DELACK, 'red_sp_mbps')} against {bv(DELACK, 'blue_t_sp_mbps')} (red "
        f"{_diff_text(d_dt[1], d_dt[2])}, {d_dt[0]}); with RED 20–60 ms {bv(RED_LOW, 'red_sp_mbps')} against "
        f"{bv(RED_LOW, 'blue_t_sp_mbps')}, and delayed ACKs off as well {bv(RED_DELACK, 'red_sp_mbps')} against "
        f"{bv(RED_DELACK, 'blue_t_sp_mbps')} (red {_diff_text(d_red[1], d_red[2])}, {d_red[0]}). Within ±15 % "
        f"with: {names(ok_sp)}.")
    if d_dt[0] != "no difference" and d_red[0] == "no difference" and RED_LOW in ok_sp and AS_RUN not in ok_sp:
        text += (
            " Under drop-tail the split of T between a TCP flow and an LIA subflow follows packet timing (drop-tail's "
            "phase effects, Floyd & Jacobson 1992), under RED it does not: what stops the cell is how the assumed "
            "100 ms drop-tail buffers drop packets"
            + (" (with 25 ms ones it is within ±15 % too)" if SHORT in ok_sp else "") + ", not LIA's increase rule.")
    out.append(text)

    # Coupling, OLIA, the stack profile.
    cells_b = list(B_CELLS.values())
    shift = max(max(abs(float(b.loc[V09X, c]) - float(b.loc[AS_RUN, c])) for c in cells_b),
                max(abs(float(t.loc[V09X, c]) - float(t.loc[AS_RUN, c])) for t in (a10, a30)
                    for c in ("type1_mbps", "type2_mbps")))
    worst = min(labels, key=lambda v: float(b.loc[v, "blue_change_mbps"]))
    out.append(
        f"Uncoupled Reno in place of LIA: red users {bv(RENO, 'red_sp_mbps')} / {bv(RENO, 'red_mp_mbps')}, blue "
        f"{bv(RENO, 'blue_sp_mbps')} / {bv(RENO, 'blue_mp_mbps')} ({b.loc[RENO, 'direction']}); OLIA: red "
        f"{bv(OLIA_ROW, 'red_sp_mbps')} / {bv(OLIA_ROW, 'red_mp_mbps')}, blue {bv(OLIA_ROW, 'blue_sp_mbps')} / "
        f"{bv(OLIA_ROW, 'blue_mp_mbps')} ({b.loc[OLIA_ROW, 'direction']}; red's second path "
        f"{bv(OLIA_ROW, 'red_xt_mbps')}). The linux-v0.9x stack moves no cell of A or B by more than {fmt(shift)} "
        "from the run as is. Not settled: the slides give neither the testbed's buffers nor its queue discipline, so "
        "the ablation names the mechanisms (the buffers' queueing delay in A; in B the drop process and the buffer, "
        "through the load on red's two-bottleneck path), not the testbed's configuration; the claims keep the runs "
        f"as declared. The largest blue loss of any variant, {chg(worst, 'blue')} ({worst}), is "
        f"{'smaller than' if float(b.loc[worst, 'blue_change_mbps']) > paper_blue else 'as large as'} the slides' "
        f"{fmt(abs(paper_blue))}.")
    return "\n\n".join(out)
