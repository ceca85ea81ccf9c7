"""The ``uml`` backend's program inside the User-Mode Linux instance (its ``init``):
``python -m mptcplab.kernel.uml.guest RUN_DIR``.

It runs as process 1 of a UML kernel in time-travel mode whose root file system is the host's,
read-only (``rootfstype=hostfs ro``). It mounts the file systems the Linux backend needs
(``/proc``, ``/sys``, ``/dev``, and a new, empty ``tmpfs`` at ``/run`` holding :data:`GUEST_TMP`,
the instance's ``TMPDIR``, so that namespace files and scratch folders stay inside the
instance; the host's ``/tmp`` stays visible, read-only, so that a run started in a folder
under it, or naming files there, finds them), mounts the host's run folder
``RUN_DIR`` writable at the same path (the only place it writes to), reads ``request.json``
there, runs the scenario exactly as ``run --backend linux`` does
(:func:`mptcplab.kernel.backend.run_linux`, with the link emulators in their virtual-time
mode), writes ``result.json`` (the result, or the error), and powers the instance off. Captures go
to ``RUN_DIR/pcap``, a kernel trace (``--trace-kernel``) to ``RUN_DIR/kernel-trace``.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

__all__ = ["GUEST_TMP", "main"]

#: The instance's temporary folder (``TMPDIR`` and ``HOME`` of its programs), in its /run tmpfs.
GUEST_TMP = "/run/tmp"

#: ``reboot(2)``'s command (glibc adds the magic numbers).
LINUX_REBOOT_CMD_POWER_OFF = 0x4321FEDC


def _mount(kind: str, target: str, options: str | None = None) -> None:
    Path(target).mkdir(parents=True, exist_ok=True)
    cmd = ["mount", "-t", kind, *(["-o", options] if options else []), "none", target]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 and "already mounted" not in p.stderr and "busy" not in p.stderr:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {p.stderr.strip()}")


def prepare(run_dir: str) -> None:
    """The guest's file systems (module docs)."""
    _mount("proc", "/proc")
    _mount("sysfs", "/sys")
    _mount("devtmpfs", "/dev")
    _mount("tmpfs", "/run", "mode=755")
    Path(GUEST_TMP).mkdir()
    os.chmod(GUEST_TMP, 0o1777)
    _mount("hostfs", run_dir, run_dir)


def run(run_dir: Path) -> dict[str, Any]:
    """Runs the request; returns what ``result.json`` holds."""
    from mptcplab.kernel.backend import run_linux
    from mptcplab.plot_trace import TRACE_DIR

    req = json.loads((run_dir / "request.json").read_text())
    os.chdir(req["cwd"])
    pcap = run_dir / "pcap" if req["pcap"] else None
    result = run_linux(req["scenario"], seed=req["seed"], pcap_dir=pcap, virtual_time=True,
                       trace_kernel=req.get("trace_kernel", False))
    if result.kernel_trace is not None:
        result.kernel_trace.write(run_dir / TRACE_DIR)
    t, i, v = result._columns
    return {
        "summary_json": result.summary_json,
        "series": result._series,
        "columns": [base64.b64encode(b).decode() for b in (t, i, v)],
        "kernel_release": os.uname().release,
    }


def main(run_dir: Path) -> None:
    out: dict[str, Any]
    try:
        prepare(str(run_dir))
        out = {"result": run(run_dir)}
    except BaseException as e:  # everything reaches the host as data, then the instance stops
        from mptcplab.errors import ConfigError

        if isinstance(e, ConfigError):
            # The Linux backend's checks name their backend; here they ran for the uml one.
            message = str(getattr(e, "message", str(e))).replace("(--backend linux)", "(--backend uml)")
            out = {"config_error": {"path": getattr(e, "path", ""), "message": message, "file": getattr(e, "file", None)}}
        else:
            out = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
    try:
        tmp = run_dir / "result.json.tmp"
        tmp.write_text(json.dumps(out))
        tmp.rename(run_dir / "result.json")
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.sync()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.reboot(LINUX_REBOOT_CMD_POWER_OFF)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
