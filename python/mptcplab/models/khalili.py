"""The "theory" columns of Khalili et al.'s scenarios A, B and C (seed 004: R. Khalili,
"Performance issues with MPTCP", IETF slides on draft-khalili-mptcp-performance-issues-00 and
"MPTCP is not Pareto-optimal", CoNEXT 2012 / IEEE/ACM ToN 2013).

The slides compare MPTCP (LIA) with two baselines:

1. "optimal algorithm without probing cost": the Kelly-Voice (2005) optimum, i.e. the
   proportionally fair allocation, max Σ_users log(y_u) over per-path rates x_r ≥ 0 subject
   to the link capacities, y_u = Σ_{r ∈ u} x_r;
2. "optimal algorithm with probing cost": the same with x_r ≥ x_min on every path, because a
   window-based algorithm sends at least 1 MSS per RTT on each path (x_min = 8·MSS/RTT bit/s).

``proportional_fair_allocation`` solves that problem for any small topology (a log-barrier
interior-point method in pure Python). The slides give no topology pictures in text form, so
the three scenarios below are our reconstruction, stated with each function; the closed forms
in their docstrings are what the solver returns for them.

Assumptions (not in the slides, which also give neither MSS nor RTT):

- A: type-1 users download from a server whose link carries N1·C1; their second path reaches
  the same server through the access link of the type-2 users (capacity N2·C2). Type-1
  throughput is capped by the server link, so probing on the shared link cannot help them.
- B: blue users have two paths, through X and through T; red users have one path through T,
  and, once upgraded, a second path that crosses both X and T.
- C: multipath users own a link of capacity N1·C1 and share a link of capacity N2·C2 with
  N2 single-path users.

What the reconstruction gives versus the slides' theory columns (x = probe rate in Mbit/s,
C1 = C2 = 1 Mbit/s; tests/python/test_models.py checks these):

- without probing cost: A 1 / 1, B 2.1 / 2.1 (63 Mbit/s over 30 users), C 1 / 1 — all match.
- A with probing cost: type 2 gets 1 - (N1/N2)·x. "0.94" (N1 = 10) needs x in [0.055, 0.065];
  "0.8" (N1 = 30) needs x in [0.05, 0.083] read as one decimal; x = 0.06 Mbit/s (1500-byte MSS
  per 200 ms) gives 0.94 and 0.82.
- B with probing cost, red users multipath: (63 - 15x)/30 for everyone; "2.04" needs
  x in [0.11, 0.13], about twice the x of scenario A (e.g. a 100 ms RTT instead of 200 ms).
- C with probing cost: multipath 1 + x, single-path 1 - (N1/N2)·x. "1.04" needs
  x in [0.035, 0.045] but "0.94" needs x in [0.055, 0.065]: no single probe rate reproduces
  both under this topology (the printed values lose 0.2 and 0.8 Mbit/s of capacity in total,
  which a proportionally fair allocation on this topology never does). We report the
  mismatch rather than tune the topology.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Allocation",
    "UserClass",
    "probe_rate_bps",
    "proportional_fair_allocation",
    "scenario_a",
    "scenario_b",
    "scenario_c",
]


@dataclass(frozen=True)
class UserClass:
    """``count`` identical users, each with the given paths; a path is the tuple of link names
    it crosses."""

    name: str
    count: int
    paths: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Allocation:
    """Per-user rate on each path of each class (bit/s), in the order of ``UserClass.paths``."""

    path_rates: Mapping[str, tuple[float, ...]]

    def throughput(self, name: str) -> float:
        """Total rate of one user of class ``name`` (bit/s)."""
        return sum(self.path_rates[name])


def probe_rate_bps(mss_bytes: float, rtt_s: float) -> float:
    """The minimal probing rate of a window-based algorithm: 1 MSS per RTT, in bit/s."""
    if rtt_s <= 0 or mss_bytes <= 0:
        raise ValueError("MSS and RTT must be > 0")
    return 8.0 * mss_bytes / rtt_s


def proportional_fair_allocation(
    capacities_bps: Mapping[str, float], classes: Sequence[UserClass], min_path_rate_bps: float = 0.0
) -> Allocation:
    """Kelly-Voice optimum: maximise Σ_classes count·log(y) subject to, for every link l,
    Σ count·x_r over the paths r crossing l ≤ capacity_l, and x_r ≥ ``min_path_rate_bps``
    (0: without probing cost; 8·MSS/RTT: with probing cost). Rates in bit/s.

    Raises ValueError if even the minimal rates do not fit. Accurate to about 1e-9 of the
    largest capacity.
    """
    links = list(capacities_bps)
    scale = max(capacities_bps.values())
    if scale <= 0:
        raise ValueError("capacities must be > 0")
    cap = [capacities_bps[name] / scale for name in links]
    floor = min_path_rate_bps / scale
    if floor < 0:
        raise ValueError("the minimum path rate must be >= 0")

    # One variable per (class, path): the per-user rate.
    owner: list[int] = []
    use: list[list[float]] = [[] for _ in links]  # use[l][v] = users of v's class whose path v crosses l
    for ci, cls in enumerate(classes):
        if cls.count <= 0 or not cls.paths:
            raise ValueError(f"class {cls.name!r} needs a positive count and at least one path")
        for path in cls.paths:
            unknown = set(path) - set(links)
            if unknown:
                raise ValueError(f"class {cls.name!r} crosses unknown links {sorted(unknown)}")
            owner.append(ci)
            for li, name in enumerate(links):
                use[li].append(float(cls.count * path.count(name)))
    n = len(owner)

    def load(x: Sequence[float], li: int) -> float:
        return sum(u * xv for u, xv in zip(use[li], x, strict=True))

    slack0 = [cap[li] - load([floor] * n, li) for li in range(len(links))]
    if min(slack0) <= 0:
        raise ValueError("the minimum path rates alone exceed a link capacity")
    step0 = min(s / sum(use[li]) for li, s in enumerate(slack0) if sum(use[li]) > 0)
    x = [floor + 0.5 * step0] * n

    weights = [float(cls.count) for cls in classes]
    n_constraints = len(links) + n
    t = 1.0
    while n_constraints / t > 1e-11:
        x = _newton(x, t, weights, owner, use, cap, floor, load)
        t *= 10.0

    rates: dict[str, list[float]] = {cls.name: [] for cls in classes}
    for v, ci in enumerate(owner):
        rates[classes[ci].name].append(x[v] * scale)
    return Allocation({name: tuple(r) for name, r in rates.items()})


def _newton(
    x: list[float],
    t: float,
    weights: list[float],
    owner: list[int],
    use: list[list[float]],
    cap: list[float],
    floor: float,
    load: Callable[[Sequence[float], int], float],
) -> list[float]:
    """Maximises t·Σ w log(y) + Σ log(slack_l) + Σ log(x_v - floor) from a feasible x."""
    n = len(x)
    n_cls = len(weights)

    def phi(z: list[float]) -> float:
        ys = [0.0] * n_cls
        for v, ci in enumerate(owner):
            ys[ci] += z[v]
        slacks = [c - load(z, li) for li, c in enumerate(cap)]
        gaps = [zv - floor for zv in z]
        if min(slacks) <= 0 or min(gaps) <= 0:
            return -math.inf
        return (
            t * sum(w * math.log(y) for w, y in zip(weights, ys, strict=True))
            + sum(math.log(s) for s in slacks)
            + sum(math.log(g) for g in gaps)
        )

    for _ in range(200):
        ys = [0.0] * n_cls
        for v, ci in enumerate(owner):
            ys[ci] += x[v]
        slacks = [c - load(x, li) for li, c in enumerate(cap)]
        grad = [0.0] * n
        hess = [[0.0] * n for _ in range(n)]
        for v in range(n):
            grad[v] = t * weights[owner[v]] / ys[owner[v]] + 1.0 / (x[v] - floor)
            hess[v][v] -= 1.0 / (x[v] - floor) ** 2
            for u in range(n):
                if owner[u] == owner[v]:
                    hess[v][u] -= t * weights[owner[v]] / ys[owner[v]] ** 2
        for li, s in enumerate(slacks):
            row = use[li]
            for v in range(n):
                if row[v]:
                    grad[v] -= row[v] / s
                    for u in range(n):
                        if row[u]:
                            hess[v][u] -= row[v] * row[u] / s**2
        step = _solve([[-h for h in r] for r in hess], grad)  # (-H)·Δ = g, ascent direction
        decrement = sum(g * d for g, d in zip(grad, step, strict=True))
        if decrement < 1e-14:
            break
        base = phi(x)
        s = 1.0
        while True:
            trial = [xv + s * d for xv, d in zip(x, step, strict=True)]
            if phi(trial) >= base + 0.25 * s * decrement:
                break
            s *= 0.5
            if s < 1e-20:
                return x
        x = trial
    return x


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting for the small Newton systems."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    out = [0.0] * n
    for r in range(n - 1, -1, -1):
        out[r] = (m[r][n] - sum(m[r][c] * out[c] for c in range(r + 1, n))) / m[r][r]
    return out


def scenario_a(n1: int, n2: int, c1_bps: float, c2_bps: float, probe_bps: float = 0.0) -> dict[str, float]:
    """Scenario A ("MPTCP can penalize TCP users"): per-user throughput (bit/s) of type 1
    (multipath) and type 2 (single-path) under the optimal allocation.

    Links: ``server1`` (N1·C1), ``ap2`` (N2·C2). Type 1 paths: [server1], [ap2, server1];
    type 2 path: [ap2]. Closed form: type 1 = C1, type 2 = C2 - (N1/N2)·probe.
    """
    alloc = proportional_fair_allocation(
        {"server1": n1 * c1_bps, "ap2": n2 * c2_bps},
        [UserClass("type1", n1, (("server1",), ("ap2", "server1"))), UserClass("type2", n2, (("ap2",),))],
        probe_bps,
    )
    return {"type1": alloc.throughput("type1"), "type2": alloc.throughput("type2")}


def scenario_b(
    n_blue: int = 15,
    n_red: int = 15,
    cx_bps: float = 27e6,
    ct_bps: float = 36e6,
    red_multipath: bool = True,
    probe_bps: float = 0.0,
) -> dict[str, float]:
    """Scenario B ("MPTCP can penalize other MPTCP users"): per-user throughput (bit/s) of blue
    and red users under the optimal allocation; defaults are the slides' 15 + 15 users,
    C_X = 27 and C_T = 36 Mbit/s.

    Blue paths: [X], [T]. Red path: [T], plus [X, T] when ``red_multipath``. Closed form when
    every user can get the same share: (C_X + C_T - N_red·probe·[red_multipath])/(N_blue + N_red).
    """
    red_paths: tuple[tuple[str, ...], ...] = (("T",), ("X", "T")) if red_multipath else (("T",),)
    alloc = proportional_fair_allocation(
        {"X": cx_bps, "T": ct_bps},
        [UserClass("blue", n_blue, (("X",), ("T",))), UserClass("red", n_red, red_paths)],
        probe_bps,
    )
    return {"blue": alloc.throughput("blue"), "red": alloc.throughput("red")}


def scenario_c(n1: int, n2: int, c1_bps: float, c2_bps: float, probe_bps: float = 0.0) -> dict[str, float]:
    """Scenario C ("MPTCP is excessively aggressive toward TCP users"): per-user throughput
    (bit/s) of multipath and single-path users under the optimal allocation.

    Links: ``own`` (N1·C1), ``shared`` (N2·C2). Multipath paths: [own], [shared]; single-path:
    [shared]. Closed form with C1 = C2: multipath = C1 + probe, single = C2 - (N1/N2)·probe.
    """
    alloc = proportional_fair_allocation(
        {"own": n1 * c1_bps, "shared": n2 * c2_bps},
        [UserClass("multipath", n1, (("own",), ("shared",))), UserClass("single", n2, (("shared",),))],
        probe_bps,
    )
    return {"multipath": alloc.throughput("multipath"), "single": alloc.throughput("single")}
