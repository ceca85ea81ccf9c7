"""mptcplab: a packet-level Multipath TCP simulator with a pure-Rust engine.

Public API::

    sc = mptcplab.load_scenario("scenarios/nsdi12-wifi-3g.toml")
    res = mptcplab.run(sc, seed=7, overrides={"duration": "10s"})
    res.summary, res.subflows, res.links, res.timeseries
    df = mptcplab.sweep(sc, {"paths.wifi.rate": ["4Mbit", "8Mbit"]}, repeat=3, jobs=2)
    df = mptcplab.validate(repeat=5, jobs=2)   # the simulator vs the stored kernel runs of the grid

Importing this package is cheap: pandas, pyarrow and matplotlib load on first use.
"""

from mptcplab._core import __version__
from mptcplab.errors import ConfigError
from mptcplab.plot import plot
from mptcplab.results import RunResult, flat_metrics
from mptcplab.runner import run
from mptcplab.scenario import Scenario, bundled_scenarios, load_scenario
from mptcplab.sweep import SweepInterrupted, sweep
from mptcplab.validation import validate

__all__ = [
    "ConfigError",
    "RunResult",
    "Scenario",
    "SweepInterrupted",
    "__version__",
    "bundled_scenarios",
    "flat_metrics",
    "load_scenario",
    "plot",
    "run",
    "sweep",
    "validate",
]
