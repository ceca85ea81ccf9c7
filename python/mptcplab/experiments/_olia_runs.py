"""The runs of Khalili et al.'s scenarios (part of :mod:`~mptcplab.experiments.olia`): one
bulk download per user with staggered starts, the per-user throughput of each repetition, and
the simulation claims' values, directions paired per repetition.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mptcplab.experiments._olia_claims import (
    _A_SHORT, _USERS, A_CONFIGS, CASES, MBPS, MULTIPATH, PREFIX, QUICK_DURATION, SINGLE_PATH_A, STAGGER_S, USER_TYPES,
    _mb, _n1, _sim_id, model_measured, paper_cell,
)
from mptcplab.experiments.base import Context, Measured, fmt, mean_ci95, repeated


def staggered(conns: list[dict[str, Any]], repeat: int, spread_s: float = STAGGER_S) -> list[dict[str, Any]]:
    """The users with start times drawn uniformly from [0, spread_s) (whole ms), one draw per
    user from a stream seeded by the repetition: the only randomness of these runs."""
    import random

    rng = random.Random(f"olia-start:{repeat}")
    return [{**c, "start": f"{rng.randrange(round(spread_s * 1000))}ms"} for c in conns]


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
    measured["dir-A-lia"] = Measured(" / ".join(t2), n=n, note="LIA − TCP, Mbit/s: " + "; ".join(notes))
    measured["dir-A-lia-t1"] = Measured("no gain" if all(t1) else "gain", n=n,
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
