"""What a run returns: the summary (a dict), tables as pandas DataFrames, the time series in
long format, flat metrics for sweeps, and writing a run directory atomically.

pandas and pyarrow are imported only when a table is asked for, so ``import mptcplab`` and
the command line stay fast.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab._api_checks import check_arguments

if TYPE_CHECKING:
    import pandas as pd

    from mptcplab.scenario import Scenario

__all__ = ["RunResult", "atomic_dir", "flat_metrics", "RUN_FILES"]

#: Files of a run directory.
RUN_FILES = (
    "run.json",
    "summary.json",
    "connections.csv",
    "subflows.csv",
    "links.csv",
    "timeseries.parquet",
    "scenario.json",
)


def _flatten(prefix: str, record: dict[str, Any], out: dict[str, Any], skip: tuple[str, ...]) -> None:
    for k, v in record.items():
        if k in skip:
            continue
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            _flatten(key, v, out, ())
        elif isinstance(v, bool):
            out[key] = int(v)
        elif isinstance(v, int | float) or v is None:
            out[key] = v


def flat_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """Every number of a summary under one flat name.

    ``conn.<connection>.<field>`` (e.g. ``conn.mptcp.goodput_bps``,
    ``conn.mptcp.ooo_delay.p99_s``), ``sf.<connection>.<path>.<field>`` (e.g.
    ``sf.mptcp.wifi.share``), ``link.<path>.<up|down>.<field>``, and the run's own
    ``end_s``, ``events`` and ``data_packets``. Booleans become 0/1; text is left out.
    Where a connection opens several subflows over one path (``paths = ["p", "p"]``, as
    ndiffports), the second and later are ``sf.<connection>.<path>#2``, ``#3``, ... in
    subflow order, so no subflow's numbers overwrite another's.
    """
    check_arguments("flat_metrics", locals())
    out: dict[str, Any] = {}
    for k in ("end_s", "events", "data_packets"):
        if k in summary:
            out[k] = summary[k]
    for c in summary.get("connections", []):
        _flatten(f"conn.{c['name']}", c, out, ("name",))
    seen: dict[tuple[str, str], int] = {}
    for s in sorted(summary.get("subflows", []), key=lambda s: (s["connection"], s.get("subflow", 0))):
        n = seen[(s["connection"], s["path"])] = seen.get((s["connection"], s["path"]), 0) + 1
        label = s["path"] if n == 1 else f"{s['path']}#{n}"
        _flatten(f"sf.{s['connection']}.{label}", s, out, ("connection", "path", "subflow"))
    for link in summary.get("links", []):
        _flatten(f"link.{link['name']}", link, out, ("name", "path", "direction"))
    return out


def _records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.json_normalize(records, sep=".") if records else pd.DataFrame()


class RunResult:
    """One finished run.

    Attributes: ``scenario`` (the :class:`~mptcplab.Scenario` that ran), ``seed`` (the seed
    used), ``summary`` (dict: per connection, subflow and link; units in the field names).
    Properties ``connections``, ``subflows``, ``links`` and ``timeseries`` are DataFrames.
    """

    def __init__(
        self,
        scenario: Scenario,
        summary_json: str,
        series: list[tuple[str, str, str]],
        time_s: bytes,
        series_index: bytes,
        value: bytes,
    ) -> None:
        self.scenario = scenario
        self.summary_json = summary_json
        self.summary: dict[str, Any] = json.loads(summary_json)
        self.seed: int = int(self.summary["seed"])
        self._series = series
        self._columns = (time_s, series_index, value)
        self._timeseries: pd.DataFrame | None = None

    def __repr__(self) -> str:
        conns = ", ".join(f"{c['name']}: {c['goodput_bps'] / 1e6:.3f} Mbit/s" for c in self.summary["connections"])
        return f"<RunResult {self.summary.get('scenario') or 'scenario'} seed={self.seed} {conns}>"

    @property
    def connections(self) -> pd.DataFrame:
        """One row per connection (nested delay statistics flattened as ``ooo_delay.p99_s``)."""
        return _records_frame(self.summary["connections"])

    @property
    def subflows(self) -> pd.DataFrame:
        """One row per subflow: connection, path, goodput_bps, share, rtos, srtt_s, ..."""
        return _records_frame(self.summary["subflows"])

    @property
    def links(self) -> pd.DataFrame:
        """One row per unidirectional link (``<path>.up`` / ``<path>.down``)."""
        return _records_frame(self.summary["links"])

    @property
    def timeseries(self) -> pd.DataFrame:
        """Long format: ``time_s``, ``entity_kind``, ``entity``, ``metric``, ``value``.

        Empty unless the scenario sets ``output.timeseries`` (the sampling interval).
        """
        if self._timeseries is None:
            import numpy as np
            import pandas as pd

            t, i, v = self._columns
            idx = np.frombuffer(i, dtype="<u4").astype(np.int64)
            cats = []
            for k in range(3):
                names = sorted({s[k] for s in self._series})
                codes = np.array([names.index(s[k]) for s in self._series], dtype=np.int64)
                cats.append(pd.Categorical.from_codes(codes[idx] if len(idx) else idx, categories=names))
            self._timeseries = pd.DataFrame(
                {
                    "time_s": np.frombuffer(t, dtype="<f8"),
                    "entity_kind": cats[0],
                    "entity": cats[1],
                    "metric": cats[2],
                    "value": np.frombuffer(v, dtype="<f8"),
                }
            )
        return self._timeseries

    def metrics(self) -> dict[str, Any]:
        """The summary as flat ``name → number`` pairs (see :func:`flat_metrics`)."""
        return flat_metrics(self.summary)

    def to_dir(self, path: str | Path) -> Path:
        """Writes the run directory (see ``RUN_FILES``), atomically: the directory appears
        complete or not at all. An existing run directory at ``path`` is replaced."""
        from mptcplab import __version__

        resolved = self.scenario.resolved
        resolved["seed"] = self.seed
        meta = {
            "kind": "run",
            "source": self.scenario.source,
            "seed": self.seed,
            "mptcplab": __version__,
        }
        with atomic_dir(path, marker="run.json") as tmp:
            (tmp / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
            (tmp / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
            self.connections.to_csv(tmp / "connections.csv", index=False)
            self.subflows.to_csv(tmp / "subflows.csv", index=False)
            self.links.to_csv(tmp / "links.csv", index=False)
            self.timeseries.to_parquet(tmp / "timeseries.parquet", index=False)
            (tmp / "scenario.json").write_text(json.dumps(resolved, indent=2) + "\n")
        return Path(path)


@contextmanager
def atomic_dir(path: str | Path, *, marker: str) -> Iterator[Path]:
    """Yields a temporary sibling directory that replaces ``path`` when the block succeeds.

    ``path`` may be absent, empty, or a previous output (holding ``marker``); anything else is
    refused rather than overwritten. On failure the temporary directory is removed, so no
    half-written output is ever left behind.
    """
    from mptcplab.errors import config_error

    dest = Path(path)
    if dest.exists() and not (dest.is_dir() and (not any(dest.iterdir()) or (dest / marker).exists())):
        raise config_error("", "exists and is not an mptcplab output directory; refusing to overwrite it", str(dest))
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
        if dest.exists():
            old = dest.parent / f".{dest.name}.old-{os.getpid()}"
            os.replace(dest, old)
            os.replace(tmp, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
