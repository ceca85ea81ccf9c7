"""Claims as data: a fake reproduction with known numbers gets the per-claim and section
verdicts its declared tolerances imply, and the report cannot be given claims chosen after
the run."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from mptcplab.experiments import REGISTRY
from mptcplab.experiments.base import (
    ALTERNATIVE,
    CALIBRATION,
    INCONSISTENT,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    Context,
    Measured,
    Result,
    Tolerance,
    claim_verdict,
    fmt,
    overlapping_tick_labels,
)
from mptcplab.experiments.report import run_one, write_index

SRC = "fake seed §1, Table 1"
TEN = Tolerance.relative(0.10, "the paper's spread: ±10 % over its runs")

#: One claim of every verdict class. The paper values and measured values below are chosen so
#: that each lands in a known class: 100 vs 95 is 5 % off (inside ±10 %), 100 vs 80 is 20 %
#: off (outside), the consistency claim's 264 vs the printed 67 is a paper inconsistency, the
#: calibration target and the alternative reading are never counted.
CLAIMS = (
    Claim("inside", "simulation", "goodput", "Mbit/s", 100.0, SRC, TEN),
    Claim("outside", "simulation", "share", "Mbit/s", 100.0, SRC, TEN),
    Claim("untestable", "simulation", "starvations", "events", 278.0, SRC, None,
          not_testable="the engine has no writer process to starve"),
    Claim("eq9", "model", "Eq. (9) at γ = 3.9", "packets", 67.0, SRC, Tolerance.absolute(0.5, "rounding to a packet"),
          check="consistency"),
    Claim("eq9-alt", "model", "Eq. (9), Δ = γ rounds", "packets", 67.0, SRC, Tolerance.absolute(0.5, "rounding"),
          alternative_of="eq9"),
    Claim("eq3", "model", "Eq. (3)", "packets", 40.0, SRC, Tolerance.absolute(0.5, "rounding")),
    Claim("fit", "simulation", "calibrated rate", "Mbit/s", 10.0, SRC, TEN, calibration=True),
    Claim("who", "simulation", "penalised subflow", "", "slow", SRC, Tolerance.same("a mechanism")),
    Claim("trend", "simulation", "rank correlation", "", None, SRC, Tolerance.at_least(0.5, "a trend"),
          headline=False),
)
MEASURED = {
    "inside": Measured(95.0, 2.0, 5), "outside": Measured(80.0, 1.0, 5), "eq9": Measured(264.0),
    "eq9-alt": Measured(66.9), "eq3": Measured(40.2), "fit": Measured(10.9), "who": Measured("fast"),
    "trend": Measured(0.9),
}


def fake_run(ctx: Context) -> Result:
    return Result("fake", "A fake reproduction", SRC, "setup", CLAIMS, dict(MEASURED), "discussion",
                  assumptions=("fake", "Fake assumptions", "shared text"))


def test_each_claim_gets_the_verdict_its_tolerance_implies() -> None:
    res = fake_run(Context(out=Path(".")))
    assert res.verdicts() == {
        "inside": REPRODUCED, "outside": NOT_REPRODUCED, "untestable": NOT_TESTABLE, "eq9": INCONSISTENT,
        "eq9-alt": ALTERNATIVE, "eq3": REPRODUCED, "fit": CALIBRATION, "who": NOT_REPRODUCED, "trend": REPRODUCED,
    }


def test_the_section_counts_headline_claims_per_kind() -> None:
    res = fake_run(Context(out=Path(".")))
    c = res.counts()
    # Simulation: inside (yes), outside (no), who (no) are counted; the calibration target, the
    # untestable claim and the supporting trend are not.
    assert (c["simulation"].reproduced, c["simulation"].testable, c["simulation"].untestable) == (1, 3, 1)
    # Model: eq3 (yes); eq9 is a paper inconsistency, eq9-alt an alternative reading.
    assert (c["model"].reproduced, c["model"].testable, c["model"].inconsistent) == (1, 1, 1)
    assert res.verdict == "model: reproduced; simulation: partly reproduced (1 of 3 claims)"


def test_a_section_is_reproduced_only_when_every_headline_claim_is() -> None:
    claims = CLAIMS[:2]
    both = Result("f", "t", SRC, "", claims, {"inside": Measured(95.0), "outside": Measured(105.0)}, "")
    none = Result("f", "t", SRC, "", claims, {"inside": Measured(50.0), "outside": Measured(150.0)}, "")
    assert both.verdict == "simulation: reproduced"
    assert none.verdict == "simulation: not reproduced"
    assert both.reproduced_by_simulation and not none.reproduced_by_simulation
    # A headline claim that cannot be tested is not reproduced: the section falls short of
    # "reproduced", however its testable claims fare, and says how.
    short = Result("f", "t", SRC, "", (CLAIMS[0], CLAIMS[2]), {"inside": Measured(95.0)}, "")
    assert short.verdict == "simulation: every testable claim reproduced (1 of 1; 1 not testable)"
    assert not short.reproduced_by_simulation


def test_a_kind_whose_claims_are_all_paper_inconsistencies_says_so() -> None:
    res = Result("f", "t", SRC, "", (CLAIMS[3],), {"eq9": Measured(264.0)}, "")
    assert res.verdict == "model: paper inconsistent"


def test_tolerance_bounds() -> None:
    assert Tolerance.relative(0.15, "r").holds(100.0, 115.0) and not Tolerance.relative(0.15, "r").holds(100.0, 115.1)
    assert Tolerance.absolute(0.05, "a").holds(0.5, 0.45) and not Tolerance.absolute(0.05, "a").holds(0.5, 0.449)
    assert Tolerance.within(42.4, 49.8, "w").holds(None, 42.4) and not Tolerance.within(42.4, 49.8, "w").holds(None, 50)
    assert Tolerance.at_most(1.0, "m").holds(None, 1.0) and not Tolerance.at_most(1.0, "m").holds(None, 1.01)
    assert not Tolerance.relative(0.1, "r").holds(1.0, float("nan"))
    with pytest.raises(ValueError):
        Tolerance.relative(0.1, "  ")


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match="needs a tolerance"):
        Claim("x", "simulation", "q", "", 1.0, SRC, None)
    with pytest.raises(ValueError, match="kind"):
        Claim("x", "measurement", "q", "", 1.0, SRC, TEN)
    with pytest.raises(ValueError, match="declared but not measured"):
        Result("f", "t", SRC, "", CLAIMS[:1], {}, "")
    with pytest.raises(ValueError, match="undeclared"):
        Result("f", "t", SRC, "", CLAIMS[:1], {"inside": Measured(1.0), "extra": Measured(1.0)}, "")
    with pytest.raises(ValueError, match="say why"):
        Measured(None)


def test_numbers_have_three_significant_figures() -> None:
    assert [fmt(x) for x in (67.0, 130.0, 66.94, 0.6523, 12.14, 4610.0, 0.0)] == ["67", "130", "66.9", "0.652", "12.1",
                                                                                "4 610", "0"]
    res = fake_run(Context(out=Path(".")))
    md = res.claims_markdown()
    assert "95 ± 2 (n = 5)" in md and "**paper inconsistent**" in md and "alternative reading (inside tolerance)" in md


def test_claims_chosen_after_the_run_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = types.ModuleType("mptcplab.experiments._fake")
    mod.CLAIMS = CLAIMS
    mod.run = fake_run
    monkeypatch.setitem(sys.modules, "mptcplab.experiments._fake", mod)
    monkeypatch.setitem(REGISTRY, "fake", "_fake")
    res = run_one("fake", tmp_path, quick=True, jobs=1, progress=None)
    assert (tmp_path / "fake" / "claims.csv").read_text().splitlines()[0].startswith("id,kind,quantity,unit,paper")
    write_index([res, res], tmp_path, True, "test")
    page = (tmp_path / "index.html").read_text()
    assert page.count("shared text") == 1 and page.count("href='#assumptions-fake'") == 2
    assert "1/1 (1 paper inconsistent)" in page and "1/3 (1 not testable)" in page

    def late_run(ctx: Context) -> Result:
        redeclared = tuple(Claim(c.id, c.kind, c.quantity, c.unit, c.paper, c.source, c.tolerance, c.printed,
                                 c.headline, c.check, c.calibration, c.alternative_of, c.not_testable) for c in CLAIMS)
        return Result("fake", "t", SRC, "", redeclared, dict(MEASURED), "")

    mod.run = late_run
    with pytest.raises(RuntimeError, match="declared CLAIMS"):
        run_one("fake", tmp_path, quick=True, jobs=1, progress=None)


def test_overlapping_tick_labels_are_found() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(20), [f"label {i}" for i in range(20)])
    assert overlapping_tick_labels(fig)
    ax.set_xticks([0, 19], ["a", "b"])
    assert overlapping_tick_labels(fig) == []
    plt.close(fig)


def test_every_reproduction_declares_its_claims_at_import() -> None:
    from mptcplab.experiments import load, names

    for name in names():
        mod = load(name)
        claims = getattr(mod, "CLAIMS", None)
        assert claims and isinstance(claims, tuple), f"{name} declares no CLAIMS tuple"
        assert all(isinstance(c, Claim) for c in claims)
        assert any(c.counted for c in claims), f"{name} has no headline claim"
        assert claim_verdict  # the verdicts are computed in base, never by a reproduction
        src = Path(mod.__file__).read_text()
        assert "verdict =" not in src and "verdict=" not in src, f"{name} writes a verdict by hand"
