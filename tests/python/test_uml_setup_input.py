"""``scripts/setup-uml.sh`` with a kernel source tree (``MPTCPLAB_UML_TREE``): bad input is one
line naming the variable, exit code 2, and nothing created (not even the cache folder)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _setup(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ROOT / "scripts" / "setup-uml.sh")], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize("tree", ["missing", "empty"])
def test_a_folder_that_is_no_kernel_tree_is_refused_before_anything_is_created(tmp_path: Path, tree: str) -> None:
    folder = tmp_path / tree
    if tree == "empty":
        folder.mkdir()
    cache = tmp_path / "cache"
    p = _setup({"MPTCPLAB_UML_TREE": str(folder), "MPTCPLAB_UML_CACHE": str(cache)})
    assert p.returncode == 2, p.stderr
    assert p.stderr == (f"error: setup-uml: MPTCPLAB_UML_TREE={folder} is not a kernel source tree "
                        "(no Makefile or arch/um)\n")
    assert not cache.exists()


def test_a_tree_without_a_cache_folder_of_its_own_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "arch" / "um").mkdir(parents=True)
    (tree / "Makefile").write_text("")
    env = {"MPTCPLAB_UML_TREE": str(tree), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    p = subprocess.run(["bash", "-c", 'unset MPTCPLAB_UML_CACHE; exec bash "$0"', str(ROOT / "scripts" / "setup-uml.sh")],
                       capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr == "error: setup-uml: MPTCPLAB_UML_TREE needs MPTCPLAB_UML_CACHE (a cache folder of its own)\n"
    assert not (tmp_path / "xdg").exists()
