"""Every TOML example in docs/scenarios.md passes `mptcplab check`, so the docs cannot rot.

An example with a `duration` is a whole scenario. The others are fragments, completed as the
document says: with two paths (`wifi`, `lte`) and one MPTCP connection `c`; `[[paths]]`
replace the base paths (and `c` uses the first), `[[connections]]` replace `c`, `[output]`
is added, and any other top-level key is a key of `c`.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mptcplab.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scenarios.md"
EXAMPLES = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def complete(fragment: dict[str, Any]) -> dict[str, Any]:
    if "duration" in fragment:
        return fragment
    sc: dict[str, Any] = {
        "duration": "10s",
        "paths": [{"name": "wifi", "rate": "10Mbit", "delay": "15ms"}, {"name": "lte", "preset": "att-lte"}],
        "connections": [{"name": "c", "kind": "mptcp", "paths": ["wifi", "lte"], "app": {"kind": "bulk"}}],
    }
    conn = sc["connections"][0]
    for key, value in fragment.items():
        if key == "paths":
            sc["paths"] = value
            conn["paths"] = [value[0]["name"]]
        elif key in ("connections", "output"):
            sc[key] = value
        else:
            conn[key] = value
    return sc


def test_the_document_has_examples() -> None:
    assert len(EXAMPLES) >= 30


@pytest.mark.parametrize("n", range(len(EXAMPLES)))
def test_every_example_passes_check(
    n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trace paths in the examples are relative to the repository root.
    monkeypatch.chdir(ROOT)
    text = EXAMPLES[n]
    fragment = tomllib.loads(text)
    file = tmp_path / "example.json"
    file.write_text(json.dumps(complete(fragment)), encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["check", str(file)])
    assert done.value.code == 0, f"example {n} fails `mptcplab check`:\n{text}\n{capsys.readouterr().err}"
