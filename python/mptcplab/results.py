"""What a run returns: the summary (a dict), tables as pandas DataFrames, the time series in
long format, flat metrics for sweeps, and writing a run directory atomically.

pandas and pyarrow are imported only when a table is asked for, so ``import mptcplab`` and
the command line stay fast.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab._api_checks import check_arguments
from mptcplab.errors import config_error

if TYPE_CHECKING:
    import pandas as pd

    from mptcplab.scenario import Scenario

__all__ = ["RUN_FILES", "RunResult", "atomic_dir", "flat_metrics", "metric_name"]

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


#: The characters a name is escaped for in metric names (``%`` first: it starts an escape).
_ESCAPED = ("%", ".", "#")


def metric_name(name: str) -> str:
    """A connection, path or link name as one segment of a metric name: ``%``, ``.`` and
    ``#`` written ``%25``, ``%2E``, ``%23`` (as in a URL), every other character as it is.

    So ``.`` in a metric name only ever separates segments and ``#`` only ever numbers a
    subflow: no two entities share a column (connection ``x`` on path ``y.z`` is
    ``sf.x.y%2Ez``, connection ``x.y`` on path ``z`` is ``sf.x%2Ey.z``), and an ordinary
    name (letters, digits, ``_``, ``-``) is unchanged.
    """
    for ch in _ESCAPED:
        name = name.replace(ch, f"%{ord(ch):02X}")
    return name


def flat_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """Every number of a summary under one flat name.

    ``conn.<connection>.<field>`` (e.g. ``conn.mptcp.goodput_bps``,
    ``conn.mptcp.ooo_delay.p99_s``), ``sf.<connection>.<path>.<field>`` (e.g.
    ``sf.mptcp.wifi.share``), ``link.<path>.<up|down>.<field>`` for a path's links and
    ``link.<link>.<field>`` for a ``[[links]]`` link, the run's own ``end_s``, ``events``
    and ``data_packets``, and for a Linux-backend run ``emulator.<field>`` (``emulator.reliable``
    0 when the link emulator fell behind). Booleans become 0/1; text is left out. Where a connection opens
    several subflows over one path (``paths = ["p", "p"]``, as ndiffports), the second and
    later are ``sf.<connection>.<path>#2``, ``#3``, ... in subflow order. Names are written
    with :func:`metric_name` (``%``, ``.`` and ``#`` escaped), so no two numbers ever share
    a name.
    """
    check_arguments("flat_metrics", locals())
    out: dict[str, Any] = {}
    for k in ("end_s", "events", "data_packets"):
        if k in summary:
            out[k] = summary[k]
    for c in summary.get("connections", []):
        _flatten(f"conn.{metric_name(c['name'])}", c, out, ("name",))
    seen: dict[tuple[str, str], int] = {}
    for s in sorted(summary.get("subflows", []), key=lambda s: (s["connection"], s.get("subflow", 0))):
        n = seen[(s["connection"], s["path"])] = seen.get((s["connection"], s["path"]), 0) + 1
        label = metric_name(s["path"]) + ("" if n == 1 else f"#{n}")
        _flatten(f"sf.{metric_name(s['connection'])}.{label}", s, out, ("connection", "path", "subflow"))
    for link in summary.get("links", []):
        if link.get("path") and link.get("direction") in ("up", "down"):
            name = f"{metric_name(link['path'])}.{link['direction']}"
        else:
            name = metric_name(link["name"])
        _flatten(f"link.{name}", link, out, ("name", "path", "direction"))
    if isinstance(summary.get("emulator"), dict):  # Linux backend: whether the link emulator kept up
        _flatten("emulator", summary["emulator"], out, ("reason",))
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
        handoffs: list[tuple[str, str, float, int, int, bool]] | None = None,
    ) -> None:
        self.scenario = scenario
        self.summary_json = summary_json
        self.summary: dict[str, Any] = json.loads(summary_json)
        self.seed: int = int(self.summary["seed"])
        self._series = series
        self._columns = (time_s, series_index, value)
        self._timeseries: pd.DataFrame | None = None
        #: A simulator run with ``--trace-sched``: every hand-off of data to a subflow (columns
        #: ``time_s``, ``connection``, ``path``, ``data_seq``, ``bytes``, ``retransmit``), the
        #: simulator's side of the kernel's ``sendmsg_frag`` table; written as
        #: ``sched-trace/handoffs.parquet`` by :meth:`to_dir`. None when not recorded, or when
        #: nothing was handed out.
        self.sched_trace: pd.DataFrame | None = None
        if handoffs:
            import pandas as pd

            frame = pd.DataFrame(handoffs, columns=["connection", "path", "time_s", "data_seq", "bytes", "retransmit"])
            self.sched_trace = frame[["time_s", "connection", "path", "data_seq", "bytes", "retransmit"]]
        #: A Linux-backend run with ``--trace-kernel``: its :class:`~mptcplab.kernel.trace.KernelTrace`
        #: (``tables``: DataFrames per tracepoint), written as ``kernel-trace/`` by :meth:`to_dir`.
        self.kernel_trace: Any = None

    def attach_kernel_trace(self, trace: Any) -> None:
        """Adds a kernel trace (:mod:`mptcplab.kernel.trace`): ``kernel_trace``, and its
        summary as the summary's ``kernel_trace``."""
        self.kernel_trace = trace
        self.summary["kernel_trace"] = trace.summary
        self.summary_json = json.dumps(self.summary)

    def _write_sched_trace(self, folder: Path) -> None:
        folder.mkdir()
        assert self.sched_trace is not None
        self.sched_trace.to_parquet(folder / "handoffs.parquet", index=False)

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
        writers: list[tuple[str, Callable[[Path], Any]]] = [
            ("run.json", lambda f: f.write_text(json.dumps(meta, indent=2) + "\n")),
            ("summary.json", lambda f: f.write_text(json.dumps(self.summary, indent=2) + "\n")),
            ("connections.csv", lambda f: self.connections.to_csv(f, index=False)),
            ("subflows.csv", lambda f: self.subflows.to_csv(f, index=False)),
            ("links.csv", lambda f: self.links.to_csv(f, index=False)),
            ("timeseries.parquet", lambda f: self.timeseries.to_parquet(f, index=False)),
            ("scenario.json", lambda f: f.write_text(json.dumps(resolved, indent=2) + "\n")),
        ]
        if self.kernel_trace is not None:
            writers.append(("kernel-trace", self.kernel_trace.write))
        if self.sched_trace is not None:
            writers.append(("sched-trace", self._write_sched_trace))
        with atomic_dir(path, marker="run.json") as tmp:
            for name, write in writers:
                try:
                    write(tmp / name)
                except OSError as e:
                    # pandas and pyarrow do not always name the file; the error must.
                    e.filename = str(tmp / name)
                    raise
        return Path(path)


@contextmanager
def atomic_dir(path: str | Path, *, marker: str) -> Iterator[Path]:
    """Yields a new, uniquely named temporary folder beside ``path`` that replaces ``path``
    when the block succeeds (see :mod:`mptcplab.outdir`).

    ``path`` may be absent, empty, or a previous output (holding ``marker``); anything else is
    refused rather than overwritten. A symbolic link at ``path`` is followed: the folder it
    points to is replaced, the link kept. Concurrent writers of one ``path`` each write their
    own folder and each replaces the other whole: the last to finish is what ``path`` holds.
    On failure the temporary folder is removed, so no half-written output is ever left
    behind (and an earlier output stays as it was); a failed write (a full disk) raises one
    :class:`~mptcplab.errors.ConfigError` naming the file.
    """
    from mptcplab.outdir import follow, install_dir, is_empty, new_temp_dir, write_error

    shown = Path(path)
    dest = follow(shown)

    def may_replace(d: Path) -> bool:
        try:
            ours = d.is_dir() and (is_empty(d) or (d / marker).exists())
        except FileNotFoundError:
            return True  # removed meanwhile by another command: taken as absent
        except OSError as e:
            raise write_error(e, shown) from None
        if not ours:
            raise config_error("", "exists and is not an mptcplab output directory; refusing to overwrite it", str(shown))
        return True

    if os.path.lexists(dest):
        may_replace(dest)
    tmp = new_temp_dir(dest)
    try:
        yield tmp
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        name = Path(e.filename).name if isinstance(e.filename, str) else ""
        raise write_error(e, shown / name if name else shown) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    install_dir(tmp, dest, may_replace)
