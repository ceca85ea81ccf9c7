"""The reproduction report: built by `mptcplab reproduce all`, and rendered by a real headless
browser (Chromium from Debian's packages, installed by the test setup): every figure loads,
the page stays readable in one pass (under 12 000 px tall at 1 400 px width), every section
has its claims table with tolerances and computed verdicts, and no figure has overlapping
tick labels."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI
from mptcplab.experiments import names

#: The page-height budget of the issue: one pass of reading at 1 400 px width.
MAX_HEIGHT_PX = 12_000


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report"
    r = subprocess.run([str(CLI), "reproduce", "all", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def test_every_section_has_claims_tolerances_and_computed_verdicts(report: Path) -> None:
    html = (report / "index.html").read_text()
    for name in names():
        sec = report / name
        md = (sec / "section.md").read_text()
        assert md.count("**Verdict:") == 1
        assert "| claim | kind | paper | ours (n) | tolerance | verdict | note |" in md
        header = (sec / "claims.csv").read_text().splitlines()[0].split(",")
        assert {"paper", "ours", "tolerance", "tolerance_reason", "verdict"} <= set(header)
        res = json.loads((sec / "result.json").read_text())
        # "partly" never without its count.
        assert all("partly" not in v or re.search(r"\(\d+ of \d+ claims\)", v) for v in res["verdict"].split("; "))
        assert res["tick_overlaps"] == [], f"{name}: overlapping tick labels {res['tick_overlaps']}"
        assert f"id='{name}'" in html
    # The summary shows model and simulation counts; no Sphinx markup leaks into the page.
    assert "model claims reproduced / testable" in html and "simulation claims reproduced / testable" in html
    assert ":mod:" not in html and ":func:" not in html
    # The summary's ablation column links every section's ablation tables.
    summary = html.split("</table>", 1)[0]
    assert "<th>ablation</th>" in summary
    for name in names():
        tables = json.loads((report / name / "result.json").read_text())["tables"]
        for key, file in tables.items():
            if "ablation" in key:
                assert f"href='{name}/{file}'>{key}</a>" in summary


def test_one_image_per_figure(report: Path) -> None:
    html = (report / "index.html").read_text()
    shown = re.findall(r"<img src='([^']+)'", html)
    assert shown and all(s.endswith(".png") for s in shown)
    assert len(shown) == len(set(shown))
    # Both files stay on disk; the SVG is linked, not shown.
    for s in shown:
        assert (report / s).with_suffix(".svg").exists()


def test_unknown_reproductions_are_user_errors() -> None:
    r = subprocess.run([str(CLI), "reproduce", "chen-towsley-fig55"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "did you mean `chen-towsley-fig5`" in r.stderr


def test_the_report_renders_every_figure_in_a_headless_browser(report: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("chromium is not installed: the test setup (MPTCPLAB_SETUP_TEST_TOOLS=1 scripts/setup.sh) installs it")
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=20000", "--window-size=1400,1000",
    ]
    url = (report / "index.html").as_uri()
    dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=180).stdout
    total = re.search(r'data-images-total="(\d+)"', dom)
    loaded = re.search(r'data-images-loaded="(\d+)"', dom)
    height = re.search(r'data-page-height="(\d+)"', dom)
    assert total and loaded and height, dom[:500]
    assert int(total.group(1)) >= len(names())
    assert loaded.group(1) == total.group(1), f"{loaded.group(1)} of {total.group(1)} figures loaded"
    assert int(height.group(1)) < MAX_HEIGHT_PX, f"page is {height.group(1)} px tall at 1400 px width"
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", url], capture_output=True, timeout=180)
    assert shot.stat().st_size > 20_000


def test_seed_and_project_totals_are_apart(report: Path) -> None:
    """The summary counts the seed papers' claims and the project's own (league, kernel
    agreement) in two rows; totals.json holds the same totals, summed from the sections'
    result.json, and the seed sections reproduced by simulation out of the ten."""
    html = (report / "index.html").read_text()
    summary = json.loads((report / "totals.json").read_text())
    per = {n: json.loads((report / n / "result.json").read_text()) for n in names()}
    assert sorted(n for n, r in per.items() if r["origin"] == "project") == ["kernel-agreement", "league"]
    for origin in ("seed", "project"):
        for kind in ("model", "simulation"):
            for key in ("reproduced", "testable"):
                assert summary[origin][kind][key] == sum(
                    r["counts"][kind][key] for r in per.values() if r["origin"] == origin)
        secs = summary[origin]["sections"]
        assert secs["total"] == sum(r["origin"] == origin for r in per.values())
        assert secs["reproduced_by_simulation"] == sum(
            r["reproduced_by_simulation"] for r in per.values() if r["origin"] == origin)
    assert summary["seed"]["sections"]["total"] == 10
    s = summary["seed"]
    assert (f"<th>seed papers' claims</th><th>{s['model']['reproduced']}/{s['model']['testable']}</th>"
            f"<th>{s['simulation']['reproduced']}/{s['simulation']['testable']}</th>") in html
    assert f"sections reproduced by simulation: {s['sections']['reproduced_by_simulation']} of 10" in html
    assert "<th>project's own claims</th>" in html
