"""``run --backend linux``: a scenario on the host's own MPTCP stack.

The run builds its namespaces (:mod:`mptcplab.kernel.netns`), starts one link emulator per
path in the link namespace (:mod:`mptcplab.kernel.linkemu`: the engine's link model in real
time, compiled into the extension module), starts both ends of every connection
(:mod:`mptcplab.kernel.app`) over ``IPPROTO_MPTCP`` or TCP sockets, reads ``nstat`` before and after, and turns what the
processes report into the simulator's result schema (:mod:`mptcplab.kernel.summary`).
Everything it created is removed on success, error, Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mptcplab import _core
from mptcplab.capture import CaptureRequest, file_component
from mptcplab.errors import config_error
from mptcplab.kernel import lifetime, netns, trace
from mptcplab.kernel.exact import check_exact, rto_min_route_ms
from mptcplab.kernel.emulator import EmulatorSched, HostLoad, check_max_lateness
from mptcplab.kernel.summary import build_result
from mptcplab.kernel.support import buffer_triples, check_kernel_cc, check_supported, host_jitter_ns
from mptcplab.results import RunResult
from mptcplab.scenario import Overrides, Scenario, load_scenario

__all__ = ["emulated_network", "is_linkemu", "linkemu_command", "linkemu_missing", "run_linux", "start_clock"]

# The simulator's captures use server port 5201 too; ports 5000-5003 would be decoded as other
# protocols (GSM IPA) by packet analysers.
SERVER_PORT = 5201

#: Each run's scratch directory (the scenario handed to the emulators) is named
#: ``<tmp>/mptcplab-kernel-<pid>-...``, so that the leftovers of a killed run can be found.
TMP_PREFIX = "mptcplab-kernel-"

_live: set[netns.Network] = set()
_procs: list[subprocess.Popen[str]] = []


def _cleanup_all() -> None:
    for p in list(_procs):
        if p.poll() is None:
            p.kill()
    for net in list(_live):
        net.destroy()
        _live.discard(net)


atexit.register(_cleanup_all)


#: The module that runs the emulator (``python -m``), and the name of its stand-alone program.
LINKEMU_MODULE = "mptcplab.kernel.linkemu"
LINKEMU_PROGRAM = "mptcplab-linkemu"


def linkemu_command() -> list[str]:
    """How the emulator is started: the installed package's own (``sys.executable -m
    mptcplab.kernel.linkemu``, the emulator compiled into the extension module), or the
    program ``$MPTCPLAB_LINKEMU`` names (a separately built ``mptcplab-linkemu``, e.g.
    ``cargo build --release -p mptcplab-linkemu`` while working on the emulator). No path of
    a source tree is ever looked at."""
    env = os.environ.get("MPTCPLAB_LINKEMU")
    if env:
        return [env]
    return [sys.executable, "-m", LINKEMU_MODULE]


def linkemu_missing() -> str | None:
    """Why the emulator cannot be started (one sentence), or None."""
    env = os.environ.get("MPTCPLAB_LINKEMU")
    if env:
        return None if os.access(env, os.X_OK) and Path(env).is_file() else \
            f"MPTCPLAB_LINKEMU names {env}, which is not an executable file"
    if not hasattr(_core, "linkemu_main"):
        return "the installed extension module has no link emulator (an older build): reinstall mptcplab"
    return None


def is_linkemu(cmdline: bytes) -> bool:
    """Whether a process's ``/proc/PID/cmdline`` is an emulator's (either way of starting it)."""
    argv = cmdline.split(b"\0")
    return LINKEMU_MODULE.encode() in argv or Path(argv[0].decode(errors="replace")).name == LINKEMU_PROGRAM


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def scratch_dirs_of(pid: int) -> list[Path]:
    """The scratch directories of runs of process ``pid``."""
    return sorted(Path(tempfile.gettempdir()).glob(f"{TMP_PREFIX}{pid}-*"))


def cleanup_stale_scratch(prefix: str = TMP_PREFIX) -> list[tuple[Path, str | None]]:
    """Removes the scratch directories named ``<prefix><pid>-...`` (this backend's, or the
    ``uml`` backend's run folders) of runs whose process no longer exists; returns each one
    found with None when it was removed, or why it was left (:func:`_remove_scratch`)."""
    found = []
    for d in sorted(Path(tempfile.gettempdir()).glob(f"{prefix}*-*")):
        pid = d.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            found.append((d, _remove_scratch(d)))
    return found


def _remove_scratch(d: Path) -> str | None:
    """Removes ``d`` if it is what a run creates (a directory of this user, made by
    ``tempfile.mkdtemp``); returns None, or why it was left. A symbolic link is never followed
    (nor removed: no run makes one), and inside the directory ``shutil.rmtree`` removes links,
    never what they point to."""
    try:
        st = d.lstat()
    except FileNotFoundError:
        return "it was gone already"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link, not a run's directory (not followed)"
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (a run's scratch directory is its user's)"
    errors: list[str] = []

    def failed(func: Any, path: str, exc: Any) -> None:
        e = exc[1] if isinstance(exc, tuple) else exc
        errors.append(f"{path}: {getattr(e, 'strerror', None) or e}")

    if sys.version_info >= (3, 12):
        shutil.rmtree(d, onexc=failed)
    else:
        shutil.rmtree(d, onerror=failed)
    return f"could not remove all of it ({errors[0]})" if errors else None


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM (and SIGHUP) raise KeyboardInterrupt while the run is live, so that cleanup runs."""
    if threading_main():
        old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    else:
        old = {}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _ns_cmd(ns: str, *cmd: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *cmd]


def _popen(cmd: list[str], stdin: int | None = None) -> subprocess.Popen[str]:
    """Starts a process of the run that dies with this one, even after a SIGKILL
    (:mod:`mptcplab.kernel.lifetime`)."""
    p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lifetime.die_with_parent)
    _procs.append(p)
    return p


def _expect_line(p: subprocess.Popen[str], want: str, what: str) -> None:
    assert p.stdout is not None
    line = p.stdout.readline().strip()
    if line != want:
        err = p.stderr.read() if p.stderr and p.poll() is not None else ""
        raise RuntimeError(f"{what} did not start: {(err or line).strip()}")


def _nstat(ns: str) -> dict[str, int]:
    out = netns.run(_ns_cmd(ns, "nstat", "-a", "-z", "-s", "--json")).stdout
    counters = json.loads(out).get("kernel", {})
    return {k: int(v) for k, v in counters.items() if k.startswith(("MPTcpExt", "TcpExt", "Tcp"))}


def _secs(text: str) -> float:
    return _core.parse_duration_ns(text) / 1e9


def _size(text: str) -> int:
    return int(_core.parse_size_bytes(text))


def _net_settings(sc: Scenario) -> tuple[dict[str, str], list[list[str]], dict[str, int]]:
    """Namespace sysctls, per-path route attributes and the buffer limits."""
    conns = sc.resolved["connections"]
    tcp = conns[0]["tcp"] if conns else {}
    written = [c.get("tcp") or {} for c in sc.data.get("connections", [])]
    sysctls = {
        "net.ipv4.tcp_slow_start_after_idle": "1" if tcp.get("idle_restart", True) else "0",
        "net.ipv4.tcp_timestamps": "1" if tcp.get("timestamps", True) else "0",
        **netns.metrics_sysctls(tcp),
    }
    # An auto-tuned buffer is the namespaces' sysctl triple, written on both hosts alike (the
    # sender's socket reads tcp_wmem, the receiver's tcp_rmem; the other end's buffers carry
    # only ACKs). A fixed buffer is set on the socket instead (see _traffic); a direction
    # without a triple keeps the kernel's own sysctl.
    triples = buffer_triples(sc.resolved)
    for key, sysctl in (("sndbuf", "net.ipv4.tcp_wmem"), ("rcvbuf", "net.ipv4.tcp_rmem")):
        if key in triples:
            t = triples[key]
            sysctls[sysctl] = " ".join(str(_size(t[k])) for k in ("min", "default", "max"))
    opts: list[str] = []
    if any("iw" in w for w in written):
        opts += ["initcwnd", str(tcp["iw"])]
    # Both are the same for every connection, and rto_min is a whole number of ticks
    # (mptcplab.kernel.exact.check_exact).
    if any("rto_min" in w for w in written):
        opts += ["rto_min", f"{rto_min_route_ms(tcp['rto_min'], 'tcp.rto_min', sc.source)}ms"]
    mtu = int(tcp.get("mtu", 1500))
    return sysctls, [list(opts) for _ in sc.resolved["paths"]], {"mtu": mtu}


def run_linux(
    scenario: str | Path | dict[str, Any] | Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    pcap_dir: str | Path | None = None,
    pcap_label: str = "pcap_dir",
    virtual_time: bool = False,
    trace_kernel: bool = False,
    sched: EmulatorSched | None = None,
    max_lateness_s: float | None = None,
) -> RunResult:
    """Runs a two-host path scenario on the Linux kernel (root, MPTCP enabled), with captures
    of the client's interfaces in ``pcap_dir`` (new or empty; errors name ``pcap_label``).
    ``trace_kernel`` records the kernel's tracepoints (:mod:`mptcplab.kernel.trace`) into the
    result's ``kernel_trace``.

    Refuses with :class:`~mptcplab.ConfigError` (exit code 2 on the command line) a scenario
    setting the kernel cannot honour, or a machine that cannot run it. Takes the scenario's
    duration in wall-clock time (less for downloads that finish early). ``virtual_time`` is
    for a kernel whose clock advances only when every task sleeps (the ``uml`` backend's
    guest, :mod:`mptcplab.kernel.uml`): the link emulators sleep until each deadline. ``sched`` is
    how the emulators are scheduled (default: SCHED_FIFO on the last CPU; ignored in virtual time,
    where the host's scheduling takes no virtual time) and ``max_lateness_s`` a bound on their 99th
    percentile of lateness beyond which the run is flagged unreliable (:mod:`mptcplab.kernel.emulator`).
    """
    check_max_lateness(max_lateness_s)
    sc = load_scenario(scenario, overrides)
    check_supported(sc, "uml" if virtual_time else "linux")
    # Inside a UML instance (virtual_time) the run traces its own kernel as the host's would.
    tracefs = trace.check_available("linux", sc.source) if trace_kernel else None
    try:
        netns.check_environment(pcap=pcap_dir is not None)
    except netns.EnvironmentRefused as e:
        raise config_error("--backend linux", str(e), sc.source) from None
    check_kernel_cc(sc)
    check_exact(sc)
    missing = linkemu_missing()
    if missing is not None:
        raise config_error("--backend linux", missing, sc.source)
    if pcap_dir is not None:  # refused before anything is built, not after a real-time run
        CaptureRequest(Path(pcap_dir), label=pcap_label).check()
    netns.cleanup_stale()
    cleanup_stale_scratch()
    how = None if virtual_time else (sched if sched is not None else EmulatorSched())
    seed = seed if seed is not None else sc.seed
    with _signals_interrupt():
        if pcap_dir is None:
            result = _run(sc, seed, None, virtual_time, tracefs, how, max_lateness_s)
        else:
            # As the simulator's: written beside the target and moved into place only when the
            # run succeeded, so a failed or interrupted run leaves no partial capture.
            with CaptureRequest(Path(pcap_dir), label=pcap_label).staged() as tmp:
                result = _run(sc, seed, tmp, virtual_time, tracefs, how, max_lateness_s)
    warn_unreliable(result.summary.get("emulator") or {}, sc.source)
    if result.kernel_trace is not None:
        trace.warn_incomplete(result.kernel_trace.summary, sc.source)
    return result


def warn_unreliable(emulator: dict[str, Any], source: str | None) -> None:
    """One line on stderr when the emulators could not hold the scenario's links
    (:func:`mptcplab.kernel.summary.emulator_health`), and one when the kernel refused their
    scheduling (:mod:`mptcplab.kernel.emulator`: they ran at the normal priority)."""
    where = f"{source}: " if source else ""
    refused = sorted({s["refused"] for s in emulator.get("sched") or [] if s and s.get("refused")})
    if refused:
        print(f"warning: {where}emulator: scheduling refused ({'; '.join(refused)}); the emulators ran as the kernel "
              "allowed (summary: emulator.sched)", file=sys.stderr, flush=True)
    if emulator.get("reliable", True):
        return
    print(f"warning: {where}emulator: the link emulator fell behind ({emulator['reason']}); this run's results "
          "are unreliable (summary: emulator.reliable = false)", file=sys.stderr, flush=True)


def start_clock(net: netns.Network, t0: float) -> None:
    """Sets the emulators' time zero (where schedules and capacity traces start) to the
    ``time.monotonic()`` instant ``t0`` (the run's time origin)."""
    for p in net.procs:
        assert p.stdin is not None
        p.stdin.write(f"{round(t0 * 1e9)}\n")
        p.stdin.flush()


@contextmanager
def emulated_network(
    sc: Scenario, seed: int, clock: bool = True, virtual_time: bool = False, sched: EmulatorSched | None = None,
) -> Iterator[netns.Network]:
    """The namespaces, links and path manager of ``sc`` with one running emulator per path;
    removed (emulators stopped, namespaces deleted) when the block ends. The emulators'
    final counters are left in ``net.link_stats``. The links' time starts now, or with
    ``clock=False`` where the caller's :func:`start_clock` says (standing at zero until then);
    ``virtual_time`` starts the emulators in their virtual-time mode (``--virtual-time``), with
    the scenario's written ``host_jitter`` as their host processing delay (``--host-jitter``);
    ``sched`` is how the emulators are scheduled (their reports are left in ``net.sched``)."""
    res = sc.resolved
    paths = [p["name"] for p in res["paths"]]
    sysctls, route_opts, extra = _net_settings(sc)
    net = netns.Network(len(paths))
    _live.add(net)
    procs: list[subprocess.Popen[str]] = []
    tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-"))
    try:
        net.create(sysctls, route_opts, mtu=extra["mtu"])
        mptcp = [c for c in res["connections"] if c["kind"] == "mptcp"]
        if mptcp:
            idx = [paths.index(p) for p in mptcp[0]["paths"]]
            backup = {paths.index(p) for p in mptcp[0]["backup"]}
            net.mptcp(idx[1:], backup)
        scen_file = tmp / "scenario.json"
        scen_file.write_text(sc.to_json())
        jitter = host_jitter_ns(sc.data, res) if virtual_time else None
        for i, name in enumerate(paths):
            p = _popen(_ns_cmd(net.link, *linkemu_command(), "--scenario", str(scen_file), "--path", name,
                               "--client-if", f"a{i}", "--server-if", f"b{i}", "--seed", str(seed), "--epoch-stdin",
                               *(["--virtual-time"] if virtual_time else []),
                               *(["--host-jitter", str(jitter)] if jitter else []),
                               *(sched.args() if sched is not None else [])),
                       stdin=subprocess.PIPE)
            procs.append(p)
            _expect_line(p, "ready", f"the link emulator of path {name}")
        net.procs = procs
        if clock:
            start_clock(net, time.monotonic())
        yield net
        net.link_stats, net.sched = [], []
        for p in procs:
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=10)
            if p.returncode != 0:
                raise RuntimeError(f"the link emulator failed: {err.strip()}")
            final = json.loads(out.strip().splitlines()[-1])
            net.link_stats += final["links"]
            net.sched.append(final.get("sched"))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p in _procs:
                _procs.remove(p)
        net.destroy()
        _live.discard(net)
        shutil.rmtree(tmp, ignore_errors=True)


def _run(
    sc: Scenario, seed: int, pcap_dir: Path | None, virtual_time: bool = False, tracefs: Path | None = None,
    sched: EmulatorSched | None = None, max_lateness_s: float | None = None,
) -> RunResult:
    res = sc.resolved
    paths = [p["name"] for p in res["paths"]]
    conns = res["connections"]
    duration = _secs(res["duration"])
    procs: list[subprocess.Popen[str]] = []
    try:
        load = HostLoad()
        # The trace is read once the emulators have stopped, so that a traced run's links are
        # the untraced run's (reading it takes time, and the links' counters run until they stop).
        with trace.recording_if(tracefs, sc, SERVER_PORT, duration) as rec:
            with emulated_network(sc, seed, clock=False, virtual_time=virtual_time, sched=sched) as net:
                outputs, nstat, t0 = _traffic(sc, net, paths, conns, duration, pcap_dir, procs, virtual_time)
            ktrace = rec.collect(sc, t0, outputs) if rec is not None else None
        warmup = _secs(res["output"]["warmup"])
        host = None if virtual_time else load.summary()
        result = build_result(sc, seed, outputs, net.link_stats, nstat, warmup, duration, t0,
                              sched=net.sched, host=host, max_lateness_s=max_lateness_s)
        if ktrace is not None:
            result.attach_kernel_trace(ktrace)
        return result
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p in _procs:
                _procs.remove(p)


def _traffic(
    sc: Scenario, net: netns.Network, paths: list[str], conns: list[dict[str, Any]], duration: float,
    pcap_dir: Path | None, procs: list[subprocess.Popen[str]], virtual_time: bool = False,
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], dict[str, dict[str, int]], float]:
    """Runs every connection's two ends; returns their reports (server, client), the nstat
    differences and the run's time origin."""
    res = sc.resolved
    captures = []
    if pcap_dir is not None:
        pcap_dir.mkdir(parents=True, exist_ok=True)
        for i, name in enumerate(paths):
            # Immediate mode: every frame reaches tcpdump as it is captured. Otherwise the
            # kernel hands frames over in blocks, each when full or after a timeout, and the
            # SIGTERM at the end loses the block still filling: the last frames of each path
            # (in virtual time, where the timeout never passes before the SIGTERM, up to
            # 5 % of a 1 s run's).
            # The file is this process's, tcpdump writes to its standard output: given a file
            # name, tcpdump (as root) hands the file to its own user (chown), which fails on
            # a file system the run's user owns (the uml backend's hostfs, run by a normal
            # user), leaving an empty capture.
            with open(pcap_dir / f"{file_component(name)}.pcap", "wb") as f:
                cap = subprocess.Popen(
                    _ns_cmd(net.client, "tcpdump", "-i", f"c{i}", "-s", "160", "-U", "--immediate-mode", "-w", "-"),
                    stdout=f, stderr=subprocess.PIPE, text=True, preexec_fn=lifetime.die_with_parent)
            _procs.append(cap)
            procs.append(cap)
            captures.append((name, cap))
        time.sleep(0.5)
    before = {"client": _nstat(net.client), "server": _nstat(net.server)}
    t0 = time.monotonic() + 0.3
    if virtual_time:
        # On the next whole second of the instance's clock. Its reading here depends on how
        # much work the setup did (each clock reading costs the virtual clock 256 ns), which
        # varies with the host's file names (the run folder's, the user's): a run as another
        # user differed from root's in the last digits of every time measured from t0. On a
        # whole second the scenario starts at the same instant (and phase of the 10 ms ticks).
        t0 = float(math.ceil(t0))
    start_clock(net, t0)
    specs, apps = [], []
    sample_s = _secs(res["output"]["timeseries"]) if res["output"].get("timeseries") else 0.1
    for k, c in enumerate(conns):
        first = paths.index(c["paths"][0])
        app = c["app"]
        stop = duration
        if app["kind"] == "bulk" and app.get("stop"):
            stop = min(stop, _secs(app["stop"]))
        common = {
            "kind": c["kind"], "t0": t0, "port": SERVER_PORT + k, "server_addr": netns.SERVER_ADDR,
            "path_addr": netns.client_addr(first), "path": paths[first], "start_s": _secs(c["start"]),
            "size": _size(app["size"]) if app["kind"] == "download" else None, "stop_s": stop,
            "write": _size(app["write"]) if app["kind"] == "bulk" and app.get("write") else None,
            "periodic": {"size": _size(app["size"]), "period_s": _secs(app["period"]), "count": app.get("count")}
            if app["kind"] == "periodic" else None,
            "deadline_s": duration + 5, "cc": c["cc"], "sample_s": sample_s, "run_pid": os.getpid(),
            "path_of": {netns.client_addr(i): n for i, n in enumerate(paths)},
        }
        download = c["direction"] == "download"
        server = dict(common, role="server", sender=download)
        client = dict(common, role="client", sender=not download)
        # A fixed buffer is set on the socket (SO_SNDBUFFORCE / SO_RCVBUFFORCE: the kernel
        # stores twice the value and stops auto-tuning it); a triple is the namespaces'
        # sysctl (_net_settings) and the socket is left alone.
        for spec in (server, client):
            if spec["sender"] and not isinstance(c["sndbuf"], dict):
                spec["sndbuf"] = _size(c["sndbuf"])
            if not spec["sender"] and not isinstance(c["rcvbuf"], dict):
                spec["rcvbuf"] = _size(c["rcvbuf"])
        specs.append((server, client))
    py = sys.executable
    for server, _ in specs:
        p = _popen(_ns_cmd(net.server, py, "-m", "mptcplab.kernel.app", json.dumps(server)))
        procs.append(p)
        apps.append(p)
        _expect_line(p, "listening", "the server application")
    for _, client in specs:
        p = _popen(_ns_cmd(net.client, py, "-m", "mptcplab.kernel.app", json.dumps(client)))
        procs.append(p)
        apps.append(p)
    outputs = []
    for p in apps:
        try:
            out, err = p.communicate(timeout=max(10.0, t0 + duration + 60 - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise RuntimeError("a connection's application did not finish in time") from None
        if p.returncode != 0:
            last = err.strip().splitlines()[-1] if err.strip() else f"exit code {p.returncode}"
            raise RuntimeError(f"a connection's application failed: {last}")
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    after = {"client": _nstat(net.client), "server": _nstat(net.server)}
    for name, cap in captures:
        cap.send_signal(signal.SIGTERM)
        _, err = cap.communicate(timeout=10)
        if cap.returncode != 0:
            raise RuntimeError(f"the capture of path {name} failed: {err.strip().splitlines()[-1] if err.strip() else cap.returncode}")
    n = len(conns)
    nstat = {side: {k: after[side].get(k, 0) - before[side].get(k, 0) for k in after[side]} for side in after}
    return [(outputs[k], outputs[n + k]) for k in range(n)], nstat, t0
