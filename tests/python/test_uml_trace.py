"""``--trace-kernel`` on the ``uml`` backend: the instance kernel's tracepoints, in virtual time.

What is checked: tracing does not move the run (the traced run's results are the untraced
run's, bytes and time series) and records the scheduler's and TCP's events completely, in the
run's own clock (1); a UML kernel built without event tracing is refused in one line (2).

Needs the UML kernel (``bash scripts/setup-uml.sh``; a missing kernel is a failure), no root.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import mptcplab
from mptcplab.kernel.trace import UML_CLOCK
from mptcplab.kernel.uml.backend import run_uml
from mptcplab.kernel.uml.kernel import find_kernel

PACKAGE_ROOT = Path(mptcplab.__file__).resolve().parents[1]
SEED = 37

#: Two paths, 10 ms and 20 ms one way: the shortest round trip is 2 x 10 ms = 20 ms, and a
#: segment's 1500 bytes take 1.2 ms on path a's 10 Mbit/s.
DELAY_A_S, SERIALISATION_A_S = 0.010, 1500 * 8 / 10e6
SCENARIO = {
    "name": "uml-trace", "duration": "1s",
    "paths": [{"name": "a", "rate": "10Mbit", "delay": "10ms", "queue": "25KB"},
              {"name": "b", "rate": "5Mbit", "delay": "20ms", "queue": "25KB"}],
    "connections": [{"name": "c", "kind": "mptcp", "stack": "linux", "paths": ["a", "b"], "cc": "cubic",
                     "app": {"kind": "bulk"}}],
    "output": {"warmup": "0.3s"},
}


def test_a_traced_run_is_the_untraced_run_and_its_trace_is_complete() -> None:
    """Reading UML's clock source in process context costs 256 ns of virtual time
    (``timer_read``); with the ``mono`` trace clock every scheduler event (fired on the
    sender's ``sendmsg``) would cost that and move the run. The kernel's ``um-mono-free``
    clock reads ``mono`` with interrupts off, where the reading is free: the traced run must be
    the untraced one, to the byte."""
    plain = run_uml(SCENARIO, seed=SEED)
    traced = run_uml(SCENARIO, seed=SEED, trace_kernel=True)
    a, b = json.loads(plain.summary_json), json.loads(traced.summary_json)
    kt = b.pop("kernel_trace")
    assert a == b
    assert plain.timeseries.equals(traced.timeseries)

    assert kt["clock"] == UML_CLOCK and kt["complete"] and kt["lost_events"] == 0
    tables = traced.kernel_trace.tables
    for name in ("tcp_probe", "subflow_get_send", "sendmsg_frag", "ack_update_msk"):
        assert len(tables[name]) > 0, name
    # The run's clock: every event after the run's origin, in order (one CPU, one clock), and
    # no data acknowledged at the data level before a round trip of the shortest path and one
    # segment's serialisation after the first mapping was written.
    for name in ("tcp_probe", "sendmsg_frag", "ack_update_msk"):
        t = tables[name]["time_s"]
        assert t.min() >= 0 and t.is_monotonic_increasing, name
    first_map = tables["sendmsg_frag"]["time_s"].min()
    acks = tables["ack_update_msk"]
    first_progress = acks[acks["new_snd_una"] > acks["new_snd_una"].min()]["time_s"].min()
    assert first_progress >= first_map + 2 * DELAY_A_S + SERIALISATION_A_S


def test_a_uml_kernel_without_event_tracing_is_refused_in_one_line(tmp_path: Path) -> None:
    kernel = find_kernel()
    assert kernel is not None, "the UML kernel is not built: run `bash scripts/setup-uml.sh` once"
    fake = tmp_path / "k"
    fake.mkdir()
    binary = fake / "linux"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    config = (kernel.binary.parent / "config").read_text()
    (fake / "config").write_text(config.replace("CONFIG_EVENT_TRACING=y", "# CONFIG_EVENT_TRACING is not set"))
    sc = tmp_path / "sc.json"
    sc.write_text(json.dumps(SCENARIO))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT), MPTCPLAB_UML_KERNEL=str(binary))
    p = subprocess.run([sys.executable, "-m", "mptcplab.cli", "run", str(sc), "--backend", "uml", "--trace-kernel",
                        "--out", str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 2, p.stderr
    assert p.stderr == (f"error: {sc}: --trace-kernel: the UML kernel {binary} is built without event tracing "
                        "(CONFIG_EVENT_TRACING); build one with `bash scripts/setup-uml.sh`\n")
    assert not out.exists()

