"""``run --backend uml``: a scenario on the Linux MPTCP stack of a User-Mode Linux kernel in
virtual time.

One run is one UML instance (the kernel :mod:`mptcplab.kernel.uml.kernel` finds), started as
an ordinary process of the calling user with ``time-travel=inf-cpu``: its clock advances only
when every task inside is idle, so processing takes no time and the run is a function of its
inputs alone, whatever the host's load. Its root file system is the host's, read-only
(``hostfs``); its ``init`` (:mod:`mptcplab.kernel.uml.guest`) builds the namespaces, links,
emulators and applications exactly as the Linux backend does and writes the result into the
run's folder, the one host folder it may write to. The instance has no network device
reaching the host.

The run's folder (``<tmp>/mptcplab-uml-<pid>-...``) holds the request, the guest's result,
the captures, the kernel's console output and UML's own runtime files (``uml_dir``); it is
removed when the run ends, fails or is interrupted, and the instance (started in a session of
its own, with ``PR_SET_PDEATHSIG``) is killed with it. A folder whose process is gone is
removed by the next run.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mptcplab.capture import CaptureRequest
from mptcplab.errors import config_error
from mptcplab.kernel import lifetime, trace
from mptcplab.kernel.backend import _signals_interrupt, cleanup_stale_scratch
from mptcplab.kernel.support import check_supported
from mptcplab.kernel.trace import KernelTrace
from mptcplab.kernel.uml.guest import GUEST_TMP
from mptcplab.kernel.uml.kernel import SETUP_COMMAND, UmlKernel, find_kernel
from mptcplab.plot_trace import read_kernel_trace
from mptcplab.results import RunResult
from mptcplab.scenario import Overrides, Scenario, load_scenario

__all__ = ["TMP_PREFIX", "run_uml", "uml_command"]

TMP_PREFIX = "mptcplab-uml-"
#: The instance's memory (a sparse file of UML's: only what the kernel touches is used). Linux
#: sizes its TCP buffer defaults by memory (``tcp_init``: ``tcp_rmem[2]`` is at most 1/128 of
#: the free pages' bytes, 32 MB): with 6 GB the UML kernel has the defaults of a host with
#: ample memory, as the host's (4096 131072 33554432; with 1 GB it would be 8 MB).
MEMORY = "6G"
#: The kernel's console lines kept with an error.
CONSOLE_TAIL = 30


def crash_dir() -> Path:
    """Where the console of a failed instance is kept (the user's cache)."""
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "mptcplab" / "uml-crashes"


#: The instance's wall clock at boot (ns since the epoch: 2026-01-01T00:00:00Z), so that nothing
#: of the host's time reaches the kernel (its random generator mixes the clock in at boot).
BOOT_TIME_NS = 1_767_225_600_000_000_000


def uml_command(kernel: UmlKernel, run_dir: Path, seed: int) -> list[str]:
    """The instance's command line: time travel from a fixed wall-clock time, the host's root
    read-only, our init, no console input, the console's output on standard output, and the
    run's seed (the kernel mixes its command line into its random generator, which gets
    nothing from the host: the same seed gives the same random numbers)."""
    return [
        str(kernel.binary), f"mem={MEMORY}", "time-travel=inf-cpu", f"time-travel-start={BOOT_TIME_NS}",
        "rootfstype=hostfs", "rootflags=/", "ro", f"init={run_dir / 'init'}", f"uml_dir={run_dir}", "umid=uml",
        "con=null", "ssl=null", "con0=null,fd:1", "loglevel=4", "seccomp=auto", f"mptcplab.seed={seed}",
    ]


def _init_script(run_dir: Path) -> str:
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": GUEST_TMP, "TMPDIR": GUEST_TMP, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    for k in ("PYTHONPATH", "MPTCPLAB_LINKEMU"):
        if os.environ.get(k):
            env[k] = os.environ[k]
    lines = ["#!/bin/sh", *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
             f"exec {shlex.quote(sys.executable)} -m mptcplab.kernel.uml.guest {shlex.quote(str(run_dir))}"]
    return "\n".join(lines) + "\n"


def _timeout_s(sc: Scenario) -> float:
    """A wall-clock bound on one instance, only against a hang: the slowest run measured here,
    1 Gbit/s over two paths, took about 30 s of wall time per simulated second."""
    from mptcplab import _core

    return 300.0 + 60.0 * _core.parse_duration_ns(sc.resolved["duration"]) / 1e9


def _failed(run_dir: Path, sc: Scenario, what: str) -> Exception:
    """The one-line error of a failed instance; its console's last lines are kept in a file
    named in the message."""
    console = run_dir / "console.log"
    try:
        lines = console.read_text(errors="replace").splitlines()[-CONSOLE_TAIL:]
    except OSError:
        lines = []
    d = crash_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        kept = d / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{run_dir.name[-8:]}.log"
        kept.write_text("\n".join(lines) + "\n")
        where = f"; its console's last lines are in {kept}"
    except OSError:
        where = ""
    return config_error("--backend uml", f"{what}{where}", sc.source)


def run_uml(
    scenario: str | Path | dict[str, Any] | Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    pcap_dir: str | Path | None = None,
    pcap_label: str = "pcap_dir",
    trace_kernel: bool = False,
) -> RunResult:
    """Runs a two-host path scenario on the UML kernel's MPTCP stack in virtual time (any user;
    the kernel built by ``scripts/setup-uml.sh``), with captures of the client's interfaces in
    ``pcap_dir`` (new or empty). ``trace_kernel`` records the instance kernel's tracepoints
    into the result's ``kernel_trace``, as the Linux backend's (:mod:`mptcplab.kernel.trace`),
    with times in virtual time. Refuses with :class:`~mptcplab.ConfigError` what the Linux
    backend refuses, and a machine without the kernel."""
    sc = load_scenario(scenario, overrides)
    check_supported(sc, "uml")
    # Settings the kernel would round (check_exact) are checked inside the instance, against
    # the UML kernel's own tick rate and buffer rules.
    kernel = find_kernel()
    explicit = os.environ.get("MPTCPLAB_UML_KERNEL")
    if kernel is None and explicit:
        # The variable is the only place looked in: building the kernel would not help.
        raise config_error("--backend uml", f"MPTCPLAB_UML_KERNEL names {explicit}, which is not an executable file "
                           f"(unset it to use the kernel `{SETUP_COMMAND}` builds)", sc.source)
    if kernel is None:
        raise config_error("--backend uml", f"the UML kernel is not built on this machine; build it once with `{SETUP_COMMAND}`",
                           sc.source)
    if trace_kernel:
        trace.check_available("uml", sc.source)
    if pcap_dir is not None:
        CaptureRequest(Path(pcap_dir), label=pcap_label).check()
    cleanup_stale_scratch(TMP_PREFIX)
    with _signals_interrupt():
        result = _run(sc, kernel, seed if seed is not None else sc.seed, pcap_dir, pcap_label, trace_kernel)
    if result.kernel_trace is not None:
        trace.warn_incomplete(result.kernel_trace.summary, sc.source)
    return result


def _run(
    sc: Scenario, kernel: UmlKernel, seed: int, pcap_dir: str | Path | None, pcap_label: str, trace_kernel: bool,
) -> RunResult:
    run_dir = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-"))
    proc: subprocess.Popen[bytes] | None = None
    try:
        request = {"scenario": sc.data, "seed": seed, "pcap": pcap_dir is not None, "cwd": os.getcwd(),
                   "trace_kernel": trace_kernel}
        (run_dir / "request.json").write_text(json.dumps(request))
        init = run_dir / "init"
        init.write_text(_init_script(run_dir))
        init.chmod(0o755)
        with open(run_dir / "console.log", "wb") as console:
            proc = subprocess.Popen(uml_command(kernel, run_dir, seed), stdin=subprocess.DEVNULL, stdout=console,
                                    stderr=subprocess.STDOUT, cwd=run_dir, start_new_session=True,
                                    preexec_fn=lifetime.die_with_parent)
            try:
                proc.wait(timeout=_timeout_s(sc))
            except subprocess.TimeoutExpired:
                raise _failed(run_dir, sc, f"the UML instance did not finish within {_timeout_s(sc):.0f} s of wall time") from None
        out_file = run_dir / "result.json"
        if not out_file.is_file():
            raise _failed(run_dir, sc, f"the UML instance stopped (exit code {proc.returncode}) without a result")
        out = json.loads(out_file.read_text())
        if "config_error" in out:
            e = out["config_error"]
            raise config_error(e["path"], e["message"], e.get("file") or sc.source)
        if "error" in out:
            with open(run_dir / "console.log", "a") as console:
                console.write(out.get("traceback", ""))
            raise _failed(run_dir, sc, f"the run inside the UML instance failed: {out['error']}")
        res = out["result"]
        summary = json.loads(res["summary_json"])
        summary["backend"] = "uml"
        summary["kernel"] = res["kernel_release"]
        summary["uml"] = {"package": kernel.info.get("package"), "version": kernel.info.get("version"),
                          "config_sha256": kernel.info.get("config_sha256"), "time": "virtual (time-travel=inf-cpu)"}
        columns = [base64.b64decode(c) for c in res["columns"]]
        result = RunResult(sc, json.dumps(summary), [tuple(s) for s in res["series"]], *columns)
        if trace_kernel:
            result.attach_kernel_trace(KernelTrace(*read_kernel_trace(run_dir)))
        if pcap_dir is not None:
            with CaptureRequest(Path(pcap_dir), label=pcap_label).staged() as tmp:
                tmp.mkdir(parents=True, exist_ok=True)
                for f in sorted((run_dir / "pcap").iterdir()):
                    shutil.move(str(f), tmp / f.name)
        return result
    finally:
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        shutil.rmtree(run_dir, ignore_errors=True)
