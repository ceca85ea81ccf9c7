from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# The Linux backend's shared test helpers: their assertions report values as a test's do.
pytest.register_assert_rewrite("kernel_testing")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TWO_PATH = HERE / "data" / "two-path.toml"
# The installed console script of the environment running the tests.
CLI = Path(sys.executable).with_name("mptcplab")


def buffer_pair() -> dict:
    """Two paths (20 Mbit/s 10 ms and 5 Mbit/s 40 ms RTT), a bulk MPTCP connection of the
    `linux` stack with auto-tuned buffers, 3 s sampled every 100 ms: the scenario whose
    buffer series the simulator's and the kernel's tests check against the same rules."""
    return {
        "name": "buffers", "duration": "3s", "output": {"timeseries": "100ms"},
        "paths": [{"name": "a", "rate": "20Mbit", "delay": "5ms", "queue": "50 packets"},
                  {"name": "b", "rate": "5Mbit", "delay": "20ms", "queue": "30 packets"}],
        "connections": [{"name": "mptcp", "kind": "mptcp", "stack": "linux", "paths": ["a", "b"],
                         "app": {"kind": "bulk"}}],
    }


def mptcplab(*args: str, timeout: float = 300, **kw) -> subprocess.CompletedProcess[str]:
    """Runs the command line as a user would; never raises on a non-zero exit."""
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture
def two_path() -> Path:
    return TWO_PATH


@pytest.fixture
def scenario_file(tmp_path: Path):
    """Writes a scenario file with one substitution applied to the two-path scenario."""

    def make(old: str = "", new: str = "", name: str = "bad.toml") -> Path:
        text = TWO_PATH.read_text()
        if old:
            assert old in text, f"test bug: {old!r} not in the base scenario"
            text = text.replace(old, new, 1)
        p = tmp_path / name
        p.write_text(text)
        return p

    return make
