"""The reproduction report: built by `mptcplab reproduce`, and rendered with every figure by a
real headless browser (Chromium from Debian's packages, installed by the test setup)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI


def test_a_reproduction_writes_its_section_data_figures_and_index(tmp_path: Path) -> None:
    out = tmp_path / "report"
    r = subprocess.run([str(CLI), "reproduce", "chen-towsley-fig5", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    sec = out / "chen-towsley-fig5"
    md = (sec / "section.md").read_text()
    assert "Verdict:" in md and "| quantity | paper |" in md
    header = (sec / "comparison.csv").read_text().splitlines()[0]
    assert header.split(",")[:4] == ["quantity", "unit", "paper", "ours"]
    assert (sec / "loss_vs_storage.png").stat().st_size > 10_000
    assert (sec / "loss_vs_storage.svg").read_text().count("<svg") == 1
    html = (out / "index.html").read_text()
    assert "chen-towsley-fig5/loss_vs_storage.png" in html
    assert re.search(r"class='verdict (reproduced|partly|not)'", html)


def test_unknown_reproductions_are_user_errors() -> None:
    r = subprocess.run([str(CLI), "reproduce", "chen-towsley-fig55"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "did you mean `chen-towsley-fig5`" in r.stderr


def test_the_report_renders_every_figure_in_a_headless_browser(tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("chromium is not installed: the test setup (MPTCPLAB_SETUP_TEST_TOOLS=1 scripts/setup.sh) installs it")
    out = tmp_path / "report"
    subprocess.run([str(CLI), "reproduce", "chen-towsley-fig5", "--quick", "--out", str(out)], check=True,
                   capture_output=True, timeout=600)
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000",
    ]
    url = (out / "index.html").as_uri()
    dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    total = re.search(r'data-images-total="(\d+)"', dom)
    loaded = re.search(r'data-images-loaded="(\d+)"', dom)
    assert total and loaded, dom[:500]
    assert int(total.group(1)) >= 1
    assert loaded.group(1) == total.group(1), f"{loaded.group(1)} of {total.group(1)} figures loaded"
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", "--window-size=1200,2000", url],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000
