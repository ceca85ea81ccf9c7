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
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["seed"]["simulation"]["testable"] == 5 and summary["project"]["simulation"]["testable"] == 9


def test_the_project_checks_are_marked_and_the_seed_sections_are_ten() -> None:
    origins = {n: getattr(load(n), "ORIGIN", "seed") for n in names()}
    assert sorted(n for n, o in origins.items() if o == "project") == ["kernel-agreement", "league"]
    assert sum(o == "seed" for o in origins.values()) == 10
