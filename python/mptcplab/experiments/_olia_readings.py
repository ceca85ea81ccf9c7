"""Two readings of Khalili et al.'s theory columns that need the scenarios' bottlenecks (part of
:mod:`~mptcplab.experiments.olia`): which cells capacity alone fixes, and the optimum when the
probing traffic is pure overhead.

The bottlenecks are those of ``mptcplab.models.khalili`` (``scenario_a`` / ``_b`` / ``_c``,
the project's reconstruction: the slides draw the topologies and their text does not give
them); :func:`topology` writes them out so both readings use the very links the model
claims use (the tests check that the solver on them gives ``khalili``'s numbers).

**Capacity-bound cells.** Rule: a user type whose every path crosses one bottleneck that no
other user type crosses gets at most that link's capacity over its users, whatever its
congestion control, and the slides' cells for it say no more than that the link was full. Such
a cell is fixed by capacity, not by the controller, so it is a supporting claim, never a
headline one; the rule is applied to every cell of A, B and C alike (it picks scenario A's
type-1 users: both their paths end at the server link of N1·C1).

**Probe traffic as overhead.** The slides' "optimal algorithm with probing cost" sends "a min
probing traffic of 1 MSS/RTT ... over each path" (seed 004) and do not say whether that
traffic counts as throughput. The model claims count it (every byte delivered is throughput);
the other reading counts a path that only probes as overhead: it loads its links with the
floor rate but carries none of the user's throughput. Which paths only probe is the counted
optimum's choice (the paths it holds at the floor); the reading keeps that choice, removes
those paths' probes from their links' capacities, and re-optimises Σ log of the users'
throughput over the paths that carry data (still at least the floor each). It is a reading of
the slides' words, not a second optimisation problem: counted as overhead everywhere, a probe
path would be worth lifting just above the floor, and the optimum would be ill-defined.
"""

from __future__ import annotations

from mptcplab.models import khalili

#: Scenario B's users and capacities (the slides: "15 blue and 15 red users, C_X = 27 and C_T
#: = 36 Mbps").
N_BLUE, N_RED, CX_BPS, CT_BPS = 15, 15, 27e6, 36e6
C_BPS = 1e6
N2 = 10


def _n1(config: str) -> int:
    return int(config.split(",")[0].split("=")[1])


def topology(scen: str, config: str) -> tuple[dict[str, float], list[khalili.UserClass]]:
    """The bottleneck links (bit/s) and the user classes with their paths, as ``khalili``'s
    ``scenario_a`` / ``scenario_b`` / ``scenario_c`` build them."""
    UC = khalili.UserClass
    if scen == "A":
        n1 = _n1(config)
        return ({"server1": n1 * C_BPS, "ap2": N2 * C_BPS},
                [UC("type1", n1, (("server1",), ("ap2", "server1"))), UC("type2", N2, (("ap2",),))])
    if scen == "B":
        red = (("T",), ("X", "T")) if config == "red multipath" else (("T",),)
        return ({"X": CX_BPS, "T": CT_BPS}, [UC("blue", N_BLUE, (("X",), ("T",))), UC("red", N_RED, red)])
    n1 = _n1(config)
    return ({"own": n1 * C_BPS, "shared": N2 * C_BPS},
            [UC("multipath", n1, (("own",), ("shared",))), UC("single", N2, (("shared",),))])


def capacity_bound(scen: str, config: str, users: str) -> str | None:
    """The bottleneck that fixes a user type's throughput whatever its controller (crossed by
    every path of the type and by no other type), or None."""
    _, classes = topology(scen, config)
    mine = next(c for c in classes if c.name == users)
    others = {link for c in classes if c is not mine for p in c.paths for link in p}
    common = set.intersection(*(set(p) for p in mine.paths))
    private = sorted(common - others)
    return private[0] if private else None


def overhead_optimum(scen: str, config: str, probe_bps: float) -> dict[str, float]:
    """Per-user throughput (bit/s) of the optimum with probing cost when a path held at the
    probing floor is overhead (see the module's text)."""
    caps, classes = topology(scen, config)
    counted = khalili.proportional_fair_allocation(caps, classes, probe_bps)
    scale = max(caps.values())
    at_floor = {(c.name, i) for c in classes for i, r in enumerate(counted.path_rates[c.name])
                if probe_bps > 0 and r - probe_bps < 1e-6 * scale}
    left = dict(caps)
    kept = []
    for c in classes:
        paths = tuple(p for i, p in enumerate(c.paths) if (c.name, i) not in at_floor)
        for i, p in enumerate(c.paths):
            if (c.name, i) in at_floor:
                for link in p:
                    left[link] -= c.count * probe_bps
        kept.append(khalili.UserClass(c.name, c.count, paths))
    alloc = khalili.proportional_fair_allocation(left, kept, probe_bps)
    return {c.name: alloc.throughput(c.name) for c in kept}


def fit_overhead_probe(target_bps: float) -> float:
    """The probe rate (bit/s) at which scenario B's red-multipath optimum gives every user
    ``target_bps`` in the overhead reading: secant steps from 0 and 0.1 Mbit/s (the optimum is
    linear in the probe rate there, 2.1 − x Mbit/s, so the first step lands; the loop checks)."""
    def f(x: float) -> float:
        return overhead_optimum("B", "red multipath", x)["red"] - target_bps

    x0, x1 = 0.0, 1e5
    f0, f1 = f(x0), f(x1)
    for _ in range(20):
        if abs(f1) <= 1e-6 * target_bps or f1 == f0:
            break
        x0, x1, f0 = x1, x1 - f1 * (x1 - x0) / (f1 - f0), f1
        f1 = f(x1)
    if abs(f1) > 1e-6 * target_bps:
        raise ValueError(f"no probe rate gives {target_bps} bit/s in the overhead reading")
    return x1
