"""Running one scenario through the engine."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mptcplab import _core
from mptcplab.errors import ConfigError, with_file
from mptcplab.results import RunResult
from mptcplab.scenario import Overrides, Scenario, load_scenario

__all__ = ["run"]


def run(
    scenario: str | Path | Mapping[str, Any] | Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
) -> RunResult:
    """Runs a scenario (file, bundled name, dict or :class:`Scenario`) to completion.

    ``seed`` replaces the scenario's seed (the same seed always gives the same result);
    ``overrides`` are key-path assignments as in :func:`load_scenario`. The simulation runs
    without holding the interpreter lock.
    """
    sc = load_scenario(scenario, overrides)
    if seed is not None and not 0 <= seed < 2**64:
        from mptcplab.errors import config_error

        raise config_error("seed", f"{seed} is outside 0..2^64-1", sc.source)
    try:
        out = _core.run(sc.to_json(), seed)
    except ConfigError as e:
        raise with_file(e, sc.source) from None
    return RunResult(sc, *out)
