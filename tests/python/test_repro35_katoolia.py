"""Issue 35 (Kato, OLIA, the report's totals): the seed papers' claims and the project's own
claims are totalled apart; seed sections are counted reproduced by simulation only when every
testable headline simulation claim is; the declarations of the Kato and OLIA sections follow
the seeds' stated setup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mptcplab.experiments import load, names
from mptcplab.experiments.base import Claim, Measured, Result, Tolerance
from mptcplab.experiments.report import totals, write_index

SRC = "fake seed §2"
TOL = Tolerance.relative(0.10, "the fake paper's ±10 %")


def _result(name: str, ok: int, bad: int, origin: str = "seed", model_ok: int = 0) -> Result:
    """A section with ``ok`` reproduced and ``bad`` failing headline simulation claims (100 vs
    95 lies inside ±10 %, 100 vs 50 outside), ``model_ok`` reproduced model claims and one
    supporting simulation claim that fails (never counted)."""
    claims = [Claim(f"s{i}", "simulation", "q", "Mbit/s", 100.0, SRC, TOL) for i in range(ok + bad)]
    claims += [Claim(f"m{i}", "model", "q", "Mbit/s", 100.0, SRC, TOL) for i in range(model_ok)]
    claims.append(Claim("support", "simulation", "q", "Mbit/s", 100.0, SRC, TOL, headline=False))
    measured = {f"s{i}": Measured(95.0 if i < ok else 50.0) for i in range(ok + bad)}
    measured.update({f"m{i}": Measured(100.0) for i in range(model_ok)})
    measured["support"] = Measured(10.0)
    return Result(name, name, SRC, "", claims, measured, "", origin=origin)


def test_origin_is_checked() -> None:
    with pytest.raises(ValueError, match="origin"):
        _result("x", 1, 0, origin="elsewhere")


def test_seed_and_project_claims_are_totalled_apart(tmp_path: Path) -> None:
    rs = [_result("a", 2, 0), _result("b", 1, 2, model_ok=3), _result("c", 0, 0, model_ok=1),
          _result("k", 5, 4, origin="project")]
    t = totals(rs)
    # Seed: simulation 2 + 1 + 0 of 2 + 3 + 0; model 3 + 1 of 4; a is the only section whose every
    # testable headline simulation claim is reproduced (c has none testable, so it is not).
    assert t["seed"]["simulation"] == {"reproduced": 3, "testable": 5, "paper_inconsistent": 0, "not_testable": 0}
    assert t["seed"]["model"]["reproduced"] == 4 and t["seed"]["model"]["testable"] == 4
    assert t["seed"]["sections"] == {"reproduced_by_simulation": 1, "total": 3, "names": ["a", "b", "c"]}
    assert t["project"]["simulation"]["reproduced"] == 5 and t["project"]["simulation"]["testable"] == 9
    assert t["project"]["sections"]["total"] == 1
    write_index(rs, tmp_path, True, "test")
    page = (tmp_path / "index.html").read_text()
    assert "<th>seed papers' claims</th><th>4/4</th><th>3/5</th>" in page
    assert "<th>project's own claims</th><th>0/0</th><th>5/9</th>" in page
    assert "sections reproduced by simulation: 1 of 3" in page
    assert page.count("(project's own claims)") == 1
    summary = json.loads((tmp_path / "totals.json").read_text())
    assert summary["seed"]["simulation"]["testable"] == 5 and summary["project"]["simulation"]["testable"] == 9


def test_run_one_takes_the_origin_from_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module declaring ``ORIGIN = "project"`` gets a project result, in result.json too; one
    without the attribute is a seed section; a wrong value is refused."""
    import sys
    import types

    from mptcplab.experiments import REGISTRY
    from mptcplab.experiments.report import run_one

    res = _result("fake", 1, 1)
    mod = types.ModuleType("mptcplab.experiments._fake35")
    mod.CLAIMS = tuple(res.claims)
    mod.run = lambda ctx: Result("fake", "fake", SRC, "", mod.CLAIMS, dict(res.measured), "")
    monkeypatch.setitem(sys.modules, "mptcplab.experiments._fake35", mod)
    monkeypatch.setitem(REGISTRY, "fake35", "_fake35")
    r = run_one("fake35", tmp_path, True, 1, None)
    got = json.loads((tmp_path / "fake35" / "result.json").read_text())
    assert r.origin == got["origin"] == "seed" and got["reproduced_by_simulation"] is False
    mod.ORIGIN = "project"
    assert run_one("fake35", tmp_path, True, 1, None).origin == "project"
    assert json.loads((tmp_path / "fake35" / "result.json").read_text())["origin"] == "project"
    mod.ORIGIN = "elsewhere"
    with pytest.raises(ValueError, match="origin"):
        run_one("fake35", tmp_path, True, 1, None)


def test_the_project_checks_are_marked_and_the_seed_sections_are_ten() -> None:
    origins = {n: getattr(load(n), "ORIGIN", "seed") for n in names()}
    assert sorted(n for n, o in origins.items() if o == "project") == ["kernel-agreement", "league"]
    assert sum(o == "seed" for o in origins.values()) == 10


# --- OLIA (seed 004) ---------------------------------------------------------------------

A10, A30 = "N1=10,N2=10", "N1=30,N2=10"
CONFIGS = [("A", A10), ("A", A30), ("B", "red single-path"), ("B", "red multipath"), ("C", A10), ("C", A30)]


def test_olia_topologies_are_the_models() -> None:
    """The readings' bottlenecks are those of ``khalili.scenario_a/b/c``: the solver on them
    gives the same optimum at x = 0, 0.06 and 0.12 Mbit/s."""
    from mptcplab.experiments import _olia_readings as rd
    from mptcplab.models import khalili

    for x in (0.0, 60e3, 120e3):
        for scen, config in CONFIGS:
            caps, classes = rd.topology(scen, config)
            alloc = khalili.proportional_fair_allocation(caps, classes, x)
            n1 = int(config.split(",")[0].split("=")[1]) if scen != "B" else 0
            want = (khalili.scenario_a(n1, 10, 1e6, 1e6, x) if scen == "A" else
                    khalili.scenario_b(15, 15, 27e6, 36e6, config == "red multipath", x) if scen == "B" else
                    khalili.scenario_c(n1, 10, 1e6, 1e6, x))
            for users, v in want.items():
                assert alloc.throughput(users) == pytest.approx(v, rel=1e-6)


def test_olia_capacity_bound_cells_are_scenario_a_type1_and_supporting() -> None:
    """Rule: a type whose every path crosses a bottleneck no other type crosses. In A both
    type-1 paths end at server1 (N1·C1), which type 2 never crosses; in B every link carries both
    colours; in C the multipath users' own link is on one of their paths only."""
    from mptcplab.experiments import olia
    from mptcplab.experiments._olia_readings import capacity_bound

    bound = {(s, c, u) for s, c in CONFIGS for u in olia.USER_TYPES[s] if capacity_bound(s, c, u)}
    assert bound == {("A", A10, "type1"), ("A", A30, "type1")}
    sims = {c.id: c for c in olia.CLAIMS if c.id.startswith("sim-") and not c.id.endswith("-sp")}
    supporting = sorted(i for i, c in sims.items() if not c.headline)
    assert supporting == ["sim-A10-lia-t1", "sim-A10-olia-t1", "sim-A30-lia-t1", "sim-A30-olia-t1"]
    assert len(sims) - len(supporting) == 12
    assert not next(c for c in olia.CLAIMS if c.id == "th-A-t1").headline
    # The same rule splits the slides' "reduced without any benefit for type 1 users": the type-2
    # direction is a headline claim, the type-1 "no gain" (capacity-bound) a supporting one.
    by_id = {c.id: c for c in olia.CLAIMS}
    assert by_id["dir-A-lia"].headline and by_id["dir-A-lia"].paper == "lower / lower"
    assert not by_id["dir-A-lia-t1"].headline and by_id["dir-A-lia-t1"].paper == "no gain"
    assert "capacity-bound" in by_id["dir-A-lia-t1"].quantity


def test_olia_overhead_reading_closed_forms() -> None:
    """Probe traffic as overhead. B (red multipath): the red users' second path (X and T) sits at
    the floor x and carries nothing counted, so X leaves 27 − 15x and T 36 − 15x for 30 users'
    counted throughput: 2.1 − x each, and "2.04" gives x = 0.06 Mbit/s. A: type 1's probe path
    also ends at server1, so type 1 gets 1 − x and type 2 1 − (N1/10)·x; C: multipath users get
    their own link, 1, single-path users 1 − (N1/10)·x; B with red users on TCP has no floor
    path: 2.1."""
    from mptcplab.experiments import olia
    from mptcplab.experiments._olia_readings import overhead_optimum

    x = 0.06
    assert olia.X_OVERHEAD_BPS == pytest.approx(x * 1e6)
    got = {(s, c): {u: v / 1e6 for u, v in overhead_optimum(s, c, x * 1e6).items()} for s, c in CONFIGS}
    assert got[("B", "red multipath")] == pytest.approx({"red": 2.1 - x, "blue": 2.1 - x}, abs=1e-6)
    assert got[("B", "red single-path")] == pytest.approx({"red": 2.1, "blue": 2.1}, abs=1e-6)
    for c, n1 in ((A10, 10), (A30, 30)):
        assert got[("A", c)] == pytest.approx({"type1": 1 - x, "type2": 1 - n1 / 10 * x}, abs=1e-6)
        assert got[("C", c)] == pytest.approx({"multipath": 1.0, "single": 1 - n1 / 10 * x}, abs=1e-6)
    m = olia.model_measured()
    by_id = {c.id: c for c in olia.CLAIMS}
    alts = [i for i, c in by_id.items() if c.alternative_of]
    assert all(by_id[i].kind == "model" and not by_id[i].counted for i in alts)
    # A's type-2 column fits the printed 0.94 (±0.005) and 0.8 (±0.05) in this reading; C's
    # multipath cell (1 against 1.04 ± 0.005) does not.
    from mptcplab.experiments.base import within_tolerance

    assert within_tolerance(by_id["th-A10-t2-overhead"], m["th-A10-t2-overhead"])
    assert within_tolerance(by_id["th-A30-t2-overhead"], m["th-A30-t2-overhead"])
    assert not within_tolerance(by_id["th-C10-multi-overhead"], m["th-C10-multi-overhead"])


def test_olia_ablation_varies_run_length_and_start_spread() -> None:
    """The runs' open facts as ablation rows: half and twice the section's 120 s (60 s, 240 s),
    start times within 0.2 s and within 20 s (whole ms, so below 200 and 20 000 ms); the other
    rows keep 120 s and the section's 2 s spread, with the section's draws (same stream)."""
    from mptcplab.experiments import _olia_ablation as ab
    rows = {v[0]: v for v in ab.ABLATIONS}
    scen, config = "B", "red multipath"

    def starts(label: str) -> list[list[int]]:
        scs = ab.variant_scenarios(rows[label], scen, config, 3, quick=False)
        return [[int(c["start"].removesuffix("ms")) for c in sc.data["connections"]] for sc in scs]

    def duration(label: str) -> str:
        return ab.variant_scenarios(rows[label], scen, config, 1, quick=False)[0].data["duration"]

    assert (duration(ab.HALF), duration(ab.DOUBLE), duration(ab.SHORT)) == ("60s", "240s", "120s")
    assert max(max(r) for r in starts(ab.SPREAD_LOW)) < 200
    wide = starts(ab.SPREAD_HIGH)
    assert max(max(r) for r in wide) < 20_000 and max(max(r) for r in wide) >= 2_000
    assert max(max(r) for r in starts(ab.SHORT)) < 2_000
    assert len(starts(ab.SHORT)[0]) == 30  # 15 blue + 15 red users


def test_olia_c_check_and_illustrative_example_are_declared_not_testable() -> None:
    from mptcplab.experiments import olia

    by_id = {c.id: c for c in olia.CLAIMS}
    for i in ("th-C10-consistency", "th-C30-consistency"):
        assert by_id[i].not_testable and "topology" in by_id[i].not_testable
    ex = by_id["olia-example"]
    assert ex.not_testable and not ex.headline and ex.source.endswith("illustrative example of OLIA's behavior'")


# --- Kato (seed 001) ---------------------------------------------------------------------

def test_kato_series_helpers() -> None:
    """A series that rises for 30 ms and then stays flat for 20 ms, 50 times over 2.5 s, read every
    10 ms: rise, rise, rise, flat, flat in each period, so one stop per period, 50 (the last
    period's stop is seen at 2.48 → 2.49 s); a flat series never stops (it never rose); one that
    rises in every interval never stops."""
    from mptcplab.experiments._kato_series import cwv_effect, stops, time_mean

    t = [i / 1000 for i in range(2501)]
    saw = [min(i % 50, 30) + 30 * (i // 50) for i in range(2501)]
    assert stops(t, saw, 0.0, 2.5) == 50
    assert stops(t, [5.0] * len(t), 0.0, 2.5) == 0
    assert stops(t, [float(i) for i in range(len(t))], 0.0, 2.5) == 0
    # 1 for 1 s then 3 for 1 s: a time mean of 2 whatever the sample density.
    assert time_mean([0.0, 1.0, 2.0], [1.0, 3.0, 3.0]) == pytest.approx(2.0)
    assert (cwv_effect(90, 100), cwv_effect(99.5, 100), cwv_effect(110, 100)) == ("lower", "no difference", "higher")


@pytest.fixture(scope="module")
def kato(tmp_path_factory: pytest.TempPathFactory) -> Result:
    from mptcplab.experiments.report import run_one

    return run_one("kato", tmp_path_factory.mktemp("kato35"), quick=True, jobs=1, progress=None)


def test_kato_setup_quotes_the_seed_and_states_the_build_caveat(kato: Result) -> None:
    """Every stated value is quoted; the caveat's numbers are the ablation's, and they lie outside
    the paper's 42.4–49.8 Mbit/s (else it would be no caveat)."""
    import pandas as pd

    for quote in ("limited to 100 Mbps using Linux traffic control (tc) command", "set to 40 msec for one direction",
                  "1,048,576 bytes", "4,096, 87380, and 6,291,456 bytes", "The scheduler is the default one, minRTT",
                  "executed for 10 seconds", "five experiment runs", "at the timing of sender receiving ACK segments"):
        assert quote in kato.setup, quote
    abl = pd.read_csv(kato.tables["ablation at 1 MiB"]).set_index("variant")["mptcp_goodput_bps"] / 1e6
    from mptcplab.experiments.base import fmt

    for label in ("a kernel build without wireless mesh (2304 B per skb)", "send buffer charged in payload bytes"):
        assert f"{fmt(abl[label])} Mbit/s" in kato.setup
        assert not 42.4 <= abl[label] <= 49.8
    assert "Nothing is fitted, with one caveat" in kato.setup


def test_kato_new_claims_follow_the_time_series(kato: Result) -> None:
    """Stop-and-go, re-read from the 1 ms series in the CSV: each subflow's highest data sequence
    sent, sampled every 10 ms, stops at least twice in 0–2.5 s and 7.5–10 s exactly when the
    claim says "intermittent on both subflows in both windows". The fast window's drops are those
    of its 1 ms samples. The validation claim says "no difference" exactly when the ablation's
    run without RFC 2861's decay is the full run (the decay never acted)."""
    import pandas as pd

    from mptcplab.experiments._kato_claims import STOP_AND_GO
    from mptcplab.experiments._kato_series import stops

    ts = pd.read_csv(kato.tables["run 4 time series"])
    ok = True
    for p in ("fast", "slow"):
        d = ts[(ts["subflow"] == p) & (ts["metric"] == "dsn_sent_bytes")]
        for lo, hi in ((0.0, 2.5), (7.5, 10.0)):
            ok &= stops(d["time_s"].tolist(), d["value"].tolist(), lo, hi) >= 2
    assert (kato.measured["stop-and-go"].value == STOP_AND_GO) == ok
    w = ts[(ts["subflow"] == "fast") & (ts["metric"] == "cwnd_bytes")]["value"].tolist()
    drops = sum(b < 0.7 * a for a, b in zip(w, w[1:]))
    assert kato.measured["fast-cwnd-drops"].value == drops
    abl = pd.read_csv(kato.tables["ablation at 1 MiB"]).set_index("variant")
    same = abl.iloc[0].drop("variant", errors="ignore").equals(abl.loc["RFC 2861 decay off"])
    if same:
        assert kato.measured["fast-cwv"].value == "no difference"
    v = kato.verdicts()
    # The paper's "experienced no drops" is at_most(0): reproduced exactly when the series shows none.
    assert v["regime-sequence"] == "not testable"
    assert v["fast-cwnd-drops"] == ("reproduced" if drops == 0 else "not reproduced")
    assert {c.id for c in kato.claims if c.headline} >= {"fast-cwnd-drops", "fast-cwv", "stop-and-go"}


def test_kato_writer_rows_follow_tcp_sendmsg(kato: Result) -> None:
    """iperf's writes as Linux runs them (tcp_sendmsg_locked). A call copies while the send buffer
    has room and the next begins at once, so a writer that always has data copies the same bytes
    at the same times whatever its send() size: 8 KiB calls give the run of 128 KiB ones, column
    for column. Without send() calls the writer fills the buffer and sleeps in the same instant,
    so every check of RFC 2861's decay (tcp_cwnd_application_limited) finds SOCK_NOSPACE set: the
    run is the one without the decay. With them, the copy loop's own pushes see it clear, so the
    decay can act: the fast-cwv claim reads "lower" exactly when run 4's fast window differs from
    the same run's without the decay, and the fast subflow's sampled drops are those the claim
    counts."""
    import pandas as pd

    abl = pd.read_csv(kato.tables["ablation at 1 MiB"]).set_index("variant")
    full, small = abl.iloc[0], abl.loc["iperf writes of 8 KiB instead of 128 KiB"]
    assert full.equals(small.rename(full.name))
    nocalls, off = abl.loc["a writer without send() calls (whatever fits)"], abl.loc["RFC 2861 decay off"]
    assert nocalls.equals(off.rename(nocalls.name))
    assert nocalls["fast_cwv"] == "no difference"
    assert (full["fast_cwv"] == "lower") == (full["fast_cwnd_mean"] < 0.99 * off["fast_cwnd_mean"])
