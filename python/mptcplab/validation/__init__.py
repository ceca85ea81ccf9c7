"""``mptcplab validate`` and :func:`mptcplab.validate`: the simulator against stored Linux
kernel measurements over a grid of two-host scenarios (``scenarios/validation/``, every
connection ``stack = "linux"``).

Each scenario has one connection and one metric, chosen by its application: goodput (bit/s)
for ``bulk``, download time (s) for ``download``, and for ``periodic`` the mean chunk time
(s): over the chunks, the time from a chunk's write (connection start + k × period) until
the receiver holds all of it, read from the connection's ``delivered_bytes`` time series.

The kernel side is measured by :func:`measure_kernel` (``validate --kernel``, root): every
scenario 10 times on the Linux backend (20 where the first 10 spread by more than 2 %), seeds
``seed``, ``seed + 1``, ..., one CSV row per run (``kernel.csv`` in the grid directory) with the
kernel release, the command that repeats the run, its date, the machine's load, the emulators'
scheduling and lateness and whether the run is reliable. Each run is stored as it ends, so a
measurement stopped at any point resumes where it stopped.

The simulator side runs the same scenarios ``repeat`` times with the same seeds. Declared
before any run (the issue's targets): the backends agree by distribution (below) on at least 90 %
of the scenarios, the simulator's median is within 25 % of the nearest kernel mode on all, and
each subflow's share of the bytes agrees within 0.05
on at least 90 % of the multipath scenarios. A miss is a finding, reported, not an error.

Earlier kernel sessions kept beside it (``kernel-<date>.csv``, same columns) are compared with
``kernel.csv`` by the same tolerances: how often the kernel's median of one session is within
10 % and 25 % of another's is the yardstick for what the simulator's counts can mean.

Operating modes (:mod:`.modes`): Linux can settle in more than one operating point on the same
scenario, so both backends' runs are split into modes by a rule declared before the runs and
compared mode by mode: a unimodal kernel agrees when the medians are within 10 %, a multi-modal
one when every kernel mode holding at least 20 % of the runs is matched within 10 % by a
simulator mode whose share of the seeds differs by at most 25 points (runs scattered so that
less than half sit in modes of at least 20 % are judged by the median).

The UML kernel in virtual time (``--kernel-backend uml``) is measured the same way into
``uml.csv`` (any user, runs in parallel) and compared with the simulator by the same rules,
and with the host's kernel by :mod:`.uml` (mode by mode where the host is multi-modal).

The parts: the grid and one run's metrics (:mod:`.grid`), the kernel side (:mod:`.kernel_runs`),
the comparison (:mod:`.compare`), UML against the host (:mod:`.uml`) and the tables and
reports (:mod:`.render`); every name is importable from here.
"""

from __future__ import annotations

# Beyond __all__, the names the command line and the reproductions use.
from mptcplab.validation.compare import (  # noqa: F401
    TARGETS, earlier_sessions, summary_lines, target_counts, validate,
)
from mptcplab.validation.grid import (  # noqa: F401
    GRID_DIR, KERNEL_CSV, chunk_time, grid_scenarios, load_grid_scenario, metric_of, run_metrics,
)
from mptcplab.validation.kernel_runs import (  # noqa: F401
    BACKEND_CSV, CSV_COLUMNS, KERNEL_RUNS, check_root, load_kernel_csv, measure_kernel,
)
from mptcplab.validation.modes import Modes, distribution_agreement, find_modes  # noqa: F401
from mptcplab.validation.uml import UML_TARGET, uml_lines, uml_vs_host  # noqa: F401
from mptcplab.validation.render import (  # noqa: F401
    UNITS, header_lines, print_report, table_rows, to_markdown, write_out,
)

__all__ = [
    "CSV_COLUMNS", "GRID_DIR", "KERNEL_RUNS", "TARGETS", "chunk_time", "grid_scenarios",
    "load_kernel_csv", "measure_kernel", "metric_of", "run_metrics", "summary_lines", "target_counts", "validate",
]
