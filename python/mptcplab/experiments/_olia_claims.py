"""Khalili et al.'s scenarios as the slides give them (part of :mod:`~mptcplab.experiments.olia`):
the cases and user types, the slides' cells, the fitted probe rate, the optimal allocations
of ``mptcplab.models.khalili`` at that rate, and the claims declared from them before any run.
"""

from __future__ import annotations

import math
from typing import Any

from mptcplab.experiments._olia_readings import capacity_bound, fit_overhead_probe, overhead_optimum
from mptcplab.experiments.base import DEFAULT_TOLERANCE, Claim, Measured, Tolerance, fmt
from mptcplab.models import khalili
from mptcplab.models import paper_values as pv

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


#: What a capacity-bound cell's quantity says (see ``_olia_readings``: such a cell is supporting).
_BOUND = " (capacity-bound: every path ends at the {link} link no other user type crosses)"


def _sim_claims() -> list[Claim]:
    out = []
    for scen, config, _, _ in CASES:
        for cc in (("lia", "olia") if scen == "A" else ("lia",)):
            for users in USER_TYPES[scen]:
                cell = _cell(paper_cell(scen, config, cc, users))
                name = {"lia": "LIA", "olia": "OLIA"}[cc]
                bound = capacity_bound(scen, config, users)
                out.append(Claim(
                    _sim_id(scen, config, cc, users), "simulation",
                    f"{_cfg_text(scen, config)}: {_USERS[users]} users' throughput, multipath users on {name}"
                    + (_BOUND.format(link=bound) if bound else ""),
                    "Mbit/s", _mb(cell), cell.source, DEFAULT_TOLERANCE,
                    printed=_SPELLING.get((scen, config, cc, users), _printed(cell)), headline=bound is None))
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
        Claim("dir-A-lia", "simulation", "A: type-1 users switch from TCP to LIA; type-2 throughput (N1 = 10 / 30)",
              "", "lower / lower", f"{pv.S004}, scenario A table", _DIRECTION,
              printed="Throughput of type 2 users reduced (type 2, TCP → LIA: "
                      + ", ".join(f"{x} → {y}" for x, y, _ in a.values()) + ")"),
        Claim("dir-A-lia-t1", "simulation",
              "A: type-1 users switch from TCP to LIA; type-1 gain (N1 = 10 / 30)"
              + _BOUND.format(link=capacity_bound("A", A_CONFIGS[0], "type1")),
              "", "no gain", f"{pv.S004}, scenario A table", _DIRECTION,
              printed="without any benefit for type 1 users", headline=False),
        Claim("dir-A-olia", "simulation", "A: type-2 throughput with OLIA against LIA (N1 = 10 / 30)", "",
              "higher / higher", _cell(paper_cell("A", A_CONFIGS[0], "olia", "type2")).source, _DIRECTION,
              printed="OLIA performs close to optimal (type 2, LIA → OLIA: "
                      + ", ".join(f"{y} → {z}" for _, y, z in a.values()) + ")"),
        Claim("dir-B", "simulation", "B: red users switch from TCP to MPTCP (LIA); red and blue throughput", "",
              "red lower, blue lower", f"{pv.S004}, scenario B table", _DIRECTION,
              printed="By upgrading red users to MPTCP, the throughput of everybody decreases ("
                      + ", ".join(f"{u} {x} → {y}" for u, (x, y) in b.items()) + ")"),
    ]


#: Why scenario C's theory column cannot be checked against itself (the rule: "paper
#: inconsistent" needs the paper's own equation or table; this check needs a topology).
_C_TOPOLOGY = (
    "the check needs C's topology, which the slides draw and their text does not give: on the project's "
    "reconstruction (multipath users own a link of N1·C1 and share one of N2·C2) the multipath cell is 1 + x "
    "and the single-path cell 1 − (N1/N2)·x, and no one x gives both printed cells (values beside); another "
    "topology could, so the slides are not shown inconsistent")


def _model_claims() -> list[Claim]:
    xf = fmt(X_FIT_BPS / MBPS)
    out = []
    t1 = [_cell(_row(pv.KHALILI_A, c, "type1").optimal_with_probing) for c in A_CONFIGS]
    assert t1[0] == t1[1]
    bound = capacity_bound("A", A_CONFIGS[0], "type1")
    out.append(Claim("th-A-t1", "model", f"A: type-1 optimum with probing cost at x = {xf} Mbit/s (both N1)"
                     + (_BOUND.format(link=bound) if bound else ""), "Mbit/s",
                     _mb(t1[0]), t1[0].source, resolution(_printed(t1[0])), printed=_printed(t1[0]),
                     headline=bound is None))
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
            printed=_printed(single), check="consistency", not_testable=_C_TOPOLOGY))
    out.append(Claim(
        "th-no-probe", "model", "optimum without probing cost: largest deviation from the slides over the 12 cells "
        "of A, B and C",
        "Mbit/s", 0.0, f"{pv.S004}, scenario A, B and C tables",
        Tolerance.absolute(0.05, "the slides' resolution: '1' and '2.1' carry one decimal"),
        printed="1 (A, C), 2.1 (B) in every cell", headline=False))
    return out


#: The probe rate (bit/s) of the overhead reading, fitted on the same cell as ``X_FIT_BPS`` (B,
#: red users multipath, "2.04"): there 2.04 = 2.1 − x, x = 0.06 Mbit/s, one 1 500-byte packet
#: per 200 ms.
X_OVERHEAD_BPS = round(fit_overhead_probe(_B_FIT.value), 3)
_OVERHEAD_TOL_WHY = "probe traffic as overhead, x fitted on B's '2.04' like the counted reading's"


def _overhead_claims() -> list[Claim]:
    """The theory cells in the overhead reading, each an alternative reading of the claim it
    re-reads: shown, never counted (``_olia_readings``)."""
    xo = fmt(X_OVERHEAD_BPS / MBPS)
    out = []
    t1 = _cell(_row(pv.KHALILI_A, A_CONFIGS[0], "type1").optimal_with_probing)
    out.append(Claim("th-A-t1-overhead", "model", f"A: type-1 optimum, probe traffic as overhead, x = {xo} Mbit/s",
                     "Mbit/s", _mb(t1), t1.source, resolution(_printed(t1)), printed=_printed(t1),
                     alternative_of="th-A-t1", headline=False))
    for config in A_CONFIGS:
        cell = _cell(_row(pv.KHALILI_A, config, "type2").optimal_with_probing)
        out.append(Claim(f"th-{_A_SHORT[config]}-t2-overhead", "model",
                         f"A, N1 = {_n1(config)}: type-2 optimum, probe traffic as overhead, x = {xo} Mbit/s",
                         "Mbit/s", _mb(cell), cell.source, resolution(_printed(cell)), printed=_printed(cell),
                         alternative_of=f"th-{_A_SHORT[config]}-t2", headline=False))
    cell = _cell(_row(pv.KHALILI_B, "red single-path", "red").optimal_with_probing)
    out.append(Claim("th-B-sp-overhead", "model", f"B, red single-path users: every user's optimum, probe traffic as "
                     f"overhead, x = {xo} Mbit/s", "Mbit/s", _mb(cell), cell.source, resolution(_printed(cell)),
                     printed=_printed(cell), alternative_of="th-B-sp", headline=False))
    for config in A_CONFIGS:
        for users in USER_TYPES["C"]:
            cell = _cell(_row(pv.KHALILI_C, config, users).optimal_with_probing)
            out.append(Claim(f"th-{_C_SHORT[config]}-{_U_SHORT[users]}-overhead", "model",
                             f"C, N1 = {_n1(config)}: {_USERS[users]} users' optimum, probe traffic as overhead, "
                             f"x = {xo} Mbit/s", "Mbit/s", _mb(cell), cell.source, resolution(_printed(cell)),
                             printed=_printed(cell), alternative_of=f"th-{_C_SHORT[config]}-consistency",
                             headline=False))
    return out


#: The slides' backup slide "An illustrative example of OLIA's behavior": four plots (absent from
#: the text) and one sentence. Declared, and not testable: nothing to compare with.
ILLUSTRATIVE = Claim(
    "olia-example", "simulation", "illustrative example: with paths of similar quality OLIA uses both (non-flappy)",
    "", "both paths", f"{pv.S004}, backup slide 'An illustrative example of OLIA's behavior'", None,
    printed="paths have similar quality, OLIA uses both (non-flappy)", headline=False,
    not_testable="the slide's four plots are absent from the seed's text and its one sentence gives neither the "
                 "paths (capacities, delays, competing traffic) nor a number or an observable: any simulation of it "
                 "would test a topology of ours, not the slide (a backup slide, so supporting)")


#: Declared before any run. Simulation: the slides' measured cells (±15 %, the slides give no
#: spread) and the three directions their titles state; model: the theory cells at the one
#: fitted probe rate (the slides' printed resolution), with scenario C's column checked against
#: itself.
CLAIMS: tuple[Claim, ...] = (*_sim_claims(), *_direction_claims(), *_model_claims(), *_overhead_claims(),
                             ILLUSTRATIVE)


# --- the model's values -------------------------------------------------------------------

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
    out.update(_overhead_measured())
    dev = 0.0
    for scen, config, _, _ in CASES:
        table = {"A": pv.KHALILI_A, "B": pv.KHALILI_B, "C": pv.KHALILI_C}[scen]
        ours = _model(scen, config, 0.0)
        for users in USER_TYPES[scen]:
            dev = max(dev, abs(ours[users] / MBPS - _mb(_row(table, config, users).optimal_without_probing)))
    # The solver is accurate to about 1e-9 of the largest capacity: report to 1e-4 Mbit/s.
    out["th-no-probe"] = Measured(round(dev, 4), note="every cell of the model: 1 (A, C) and 2.1 (B)")
    return out


def _overhead_measured() -> dict[str, Measured]:
    """The overhead reading's cells at its fitted probe rate (``_olia_readings``)."""
    xo = X_OVERHEAD_BPS
    out: dict[str, Measured] = {}
    a = {c: overhead_optimum("A", c, xo) for c in A_CONFIGS}
    t1 = [a[c]["type1"] / MBPS for c in A_CONFIGS]
    out["th-A-t1-overhead"] = Measured(max(t1, key=lambda v: abs(v - 1)),
                                       note=f"N1 = 10: {fmt(t1[0])}; N1 = 30: {fmt(t1[1])} (1 − x: the probe path "
                                            "also ends at the server link)")
    for config in A_CONFIGS:
        out[f"th-{_A_SHORT[config]}-t2-overhead"] = Measured(a[config]["type2"] / MBPS, note="1 − (N1/N2)·x")
    b = overhead_optimum("B", "red single-path", xo)
    out["th-B-sp-overhead"] = Measured(max((b[u] / MBPS for u in ("red", "blue")), key=lambda v: abs(v - 2.1)),
                                       note="no path at the floor: the counted reading's value")
    for config in A_CONFIGS:
        c = overhead_optimum("C", config, xo)
        for users in USER_TYPES["C"]:
            out[f"th-{_C_SHORT[config]}-{_U_SHORT[users]}-overhead"] = Measured(
                c[users] / MBPS, note="C1 (the probe on the shared link counts for nothing)" if users == "multipath"
                else "1 − (N1/N2)·x")
    return out
