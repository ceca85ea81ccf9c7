"""The Linux backend on this machine's MPTCP stack: emulator accuracy (RTT, rate, loss,
Mahimahi trace, jitter, a time-limited queue, a rate schedule, CoDel), a 2-path MPTCP
transfer checked with SHA-256, per-subflow congestion control (reno, cubic, bbr), refusals,
compare, sweep and plot, and cleanup after SIGTERM and after SIGKILL.

Needs root, MPTCP enabled and the emulator built (scripts/setup.sh); skipped otherwise.
Runs take real time: scenarios here are a few seconds long.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mptcplab.errors import ConfigError
from mptcplab.kernel import backend, netns
from mptcplab.kernel.backend import emulated_network, linkemu_binary, run_linux, scratch_dirs_of
from mptcplab.kernel.summary import build_result
from mptcplab.results import RunResult
from mptcplab.scenario import load_scenario


def _available() -> str | None:
    try:
        netns.check_environment()
    except netns.EnvironmentRefused as e:
        return str(e)
    if not linkemu_binary().is_file():
        return "the link emulator is not built"
    return None


@pytest.fixture(autouse=True)
def _kernel_environment() -> None:
    # CI runs as root on a kernel with MPTCP and builds the emulator in the setup: a missing
    # piece is a failure, not a reason to skip.
    problem = _available()
    assert problem is None, problem


@pytest.fixture(autouse=True, scope="module")
def _nothing_left_behind() -> Iterator[None]:
    """After every test of this file: no namespace (hence no veth), emulator or scratch
    directory of this process remains (a killed run's are the next run's to remove, which
    the SIGKILL test checks)."""
    yield
    assert not _namespaces_of(os.getpid()), _namespaces_of(os.getpid())
    assert not _emulators_of(os.getpid())
    assert not scratch_dirs_of(os.getpid())


KERNEL_SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "kernel"
PAYLOAD = 1448 / 1500  # payload per 1500-byte IP packet (MSS 1448 with timestamps)


def one_path(rate: str, delay: str, queue: str = "200 packets", **extra: Any) -> dict[str, Any]:
    path = {"name": "p", "rate": rate, "delay": delay, "queue": queue, **extra}
    return {
        "name": "kernel-test", "duration": "5s", "paths": [path],
        "connections": [{"name": "tcp", "kind": "tcp", "stack": "linux", "paths": ["p"], "cc": "cubic", "app": {"kind": "bulk"}}],
        "output": {"warmup": "1.5s"},
    }


def _ours() -> list[str]:
    """Namespaces of the mplab- family left by this process or by dead processes."""
    left = []
    for ns in netns.our_namespaces():
        m = netns.PREFIX_RE.match(ns)
        assert m is not None
        pid = int(m[1])
        if pid == os.getpid() or not Path(f"/proc/{pid}").exists():
            left.append(ns)
    return left


def _emulators_of(pid: int) -> list[int]:
    """Emulator processes whose parent is ``pid``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"mptcplab-linkemu" in cmd and ppid == pid:
            found.append(int(d.name))
    return found


# The emulator's promise on a delay: a frame is handed over at the first check at or after its
# deadline; the loop stops sleeping 200 µs before a deadline and polls without sleeping, an
# iteration taking a few microseconds (crates/linkemu/src/main.rs). 10 µs per direction.
EMU_LATE_MS = 0.010


def _quantile_ci(xs: list[float], q: float, z: float = 4.0) -> tuple[float, float]:
    """A distribution-free confidence interval of the ``q`` quantile of ``xs``: the order
    statistics at ranks ``q n -/+ z sqrt(n q (1 - q))`` (the rank of the true quantile in the
    sample is binomial)."""
    s, n = sorted(xs), len(xs)
    half = z * math.sqrt(n * q * (1 - q))
    return s[max(0, math.floor(q * n - half))], s[min(n - 1, math.ceil(q * n + half))]


@pytest.mark.parametrize("rtt_ms", [10, 100])
def test_emulated_idle_rtt_matches_the_configured_rtt(rtt_ms: int) -> None:
    """An idle 1 Gbit/s path with one-way delay RTT/2, probed by ICMP echo every 5 ms (3 s) at the
    same time as a reference path without delay (1 Gbit/s, 0 ms) of the same network. The
    prober's own scheduling does not count (the reply's time is the kernel's receive stamp).

    A probe's round trip is RTT + h + e + s: h what the host adds to any trip through the
    emulated network (four veth hops, the emulator's receive wake-ups, the kernel's echo
    reply), e the emulator's lateness (0 <= e <= 2 x EMU_LATE_MS, its promise) and s >= 0 a
    stall: on a loaded machine an emulator descheduled while it waits for a deadline hands
    the frame over late (on 2 cores beside other builds: with one CPU hog 1-22 % of the probes
    were held up by more than 0.5 ms; with three hogs up to 88 %, the median excess up to 5 ms
    on the 10 ms path; quiet, the median excess is 0.05 ms). Stalls only add delay and hit each
    emulator on its own, so no reference cancels them; a low quantile Q does, as long as
    enough probes pass undisturbed: at least 2Q are required, else the measurement is repeated
    once, the reason printed.
    The reference's same quantile is h0: the host's cost without a delay. The delayed path's
    emulator is already polling at the deadline, skipping the wake-up the reference pays, so
    its h lies in [0, h0]. Hence, with the quantiles' distribution-free 4-sigma intervals:
    q(path) - q(ref) - RTT lies within [-h0 - width, 2 x EMU_LATE_MS + width]."""
    n, q = 600, 0.05
    sc = one_path("1Gbit", f"{rtt_ms / 2}ms")
    sc["paths"].append({"name": "ref", "rate": "1Gbit", "delay": "0ms"})
    for attempt in (1, 2):
        with emulated_network(load_scenario(sc), 1) as net:
            probers = [_prober(net, 0, 0.005, n), _prober(net, 1, 0.005, n)]
            path, ref = ([r * 1e3 for _, r in _probe_results(p) if r is not None] for p in probers)
        assert len(path) >= 0.99 * n and len(ref) >= 0.99 * n
        # Held up: later than the configured RTT plus the reference's Q quantile by more than
        # 0.5 ms (not its median: a stall can hold up most reference probes too).
        stalled = sum(1 for r in path if r - rtt_ms - _quantile(ref, q) > 0.5) / len(path)
        if stalled < 1 - 2 * q:
            break
        # The load this measurement needs: at least 2Q of the probes through undisturbed.
        print(f"attempt {attempt}: {100 * stalled:.0f} % of the probes held up by the host (load average "
              f"{os.getloadavg()[0]:.2f}), more than {100 * (1 - 2 * q):.0f} %: the p{100 * q:g} may be disturbed too"
              + ("; measuring again" if attempt == 1 else ""))
    (p_lo, p_hi), (r_lo, r_hi) = _quantile_ci(path, q), _quantile_ci(ref, q)
    h0 = _quantile(ref, q)
    err = _quantile(path, q) - h0 - rtt_ms
    width = math.hypot(p_hi - p_lo, r_hi - r_lo) / 2
    print(f"configured RTT {rtt_ms} ms: path p{100 * q:g} {_quantile(path, q):.3f} ms, median "
          f"{_quantile(path, 0.5):.3f} (min {min(path):.3f}, p90 {_quantile(path, 0.9):.3f}, max {max(path):.3f}); "
          f"reference p{100 * q:g} {h0:.3f} ms, median {_quantile(ref, 0.5):.3f}; error {err:+.3f} ms within "
          f"[{-h0 - width:.3f}, {2 * EMU_LATE_MS + width:.3f}]; {100 * stalled:.0f} % of the probes held up by more "
          f"than 0.5 ms; load average {os.getloadavg()[0]:.2f}")
    assert stalled < 1 - 2 * q, "the machine is overloaded: fewer than 2Q of the probes passed an undisturbed host"
    assert -h0 - width <= err <= 2 * EMU_LATE_MS + width


def _host_cpu_seconds() -> tuple[float, float, float]:
    """(wall, CPU pressure, steal) in seconds: the time at least one runnable task of this
    machine waited for a CPU (PSI `some`, /proc/pressure/cpu) and the time the hypervisor
    took the CPUs away (/proc/stat, averaged over the CPUs)."""
    with open("/proc/pressure/cpu") as f:
        some = float(f.readline().split("total=")[1]) / 1e6
    with open("/proc/stat") as f:
        steal = float(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK") / (os.cpu_count() or 1)
    return time.monotonic(), some, steal


def _goodput_error_with_one_retry(measure: Callable[[], float], tolerance: float) -> float:
    """The relative goodput error ``measure()`` returns. A real-time emulator kept off the CPU
    for a fraction f of a run can lower its goodput by up to f, so when the error exceeds
    ``tolerance`` while the host disturbed the run for more than ``tolerance`` of its wall time
    (CPU pressure plus steal), the run says nothing about the emulator: it is measured once
    more, the reason printed. The second result stands, disturbed or not."""
    t0 = _host_cpu_seconds()
    err = measure()
    t1 = _host_cpu_seconds()
    wall = t1[0] - t0[0]
    disturbed = ((t1[1] - t0[1]) + (t1[2] - t0[2])) / wall
    print(f"host: CPU pressure + steal {100 * disturbed:.1f} % of the run")
    if abs(err) > tolerance and disturbed > tolerance:
        print(f"host disturbed the run {100 * disturbed:.1f} % of its {wall:.1f} s (CPU pressure + steal): measuring again")
        err = measure()
    return err


@pytest.mark.parametrize("mbit", [10, 50])
def test_saturated_tcp_goodput_is_within_3_percent_of_payload_capacity(mbit: int) -> None:
    bdp_pkts = math.ceil(mbit * 1e6 * 0.02 / 8 / 1500)
    capacity = mbit * 1e6 * PAYLOAD

    def measure() -> float:
        res = run_linux(one_path(f"{mbit}Mbit", "5ms", queue=f"{2 * bdp_pkts + 10} packets"))
        c = res.summary["connections"][0]
        err = c["goodput_bps"] / capacity - 1
        print(f"{mbit} Mbit/s: goodput {c['goodput_bps'] / 1e6:.3f} Mbit/s vs payload capacity {capacity / 1e6:.3f} "
              f"({100 * err:+.2f}%)")
        assert c["sha256_match"]
        return err

    assert abs(_goodput_error_with_one_retry(measure, 0.03)) <= 0.03


def test_configured_loss_rate_is_met_within_statistical_bounds() -> None:
    p = 0.02
    res = run_linux(one_path("20Mbit", "5ms", loss="2%"))
    for link in res.summary["links"]:
        n, k = link["arrived_packets"], link["loss_drops"]
        sigma = math.sqrt(n * p * (1 - p))
        print(f"{link['name']}: {k} lost of {n} ({100 * k / n:.2f}%, expected {n * p:.0f} +- {4 * sigma:.0f})")
        assert n > 1000
        assert abs(k - n * p) <= 4 * sigma
    assert res.summary["connections"][0]["sha256_match"]


def test_constant_rate_mahimahi_trace_delivers_its_capacity(tmp_path: Path) -> None:
    trace = tmp_path / "12mbit.trace"
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 101)))  # one 1500-byte opportunity per ms
    sc = one_path("1Mbit", "5ms", queue="100 packets")
    del sc["paths"][0]["rate"]
    sc["paths"][0]["trace"] = str(trace)
    capacity = 12e6 * PAYLOAD

    def measure() -> float:
        c = run_linux(sc).summary["connections"][0]
        err = c["goodput_bps"] / capacity - 1
        print(f"trace of 12 Mbit/s: goodput {c['goodput_bps'] / 1e6:.3f} Mbit/s ({100 * err:+.2f}% of payload capacity)")
        return err

    assert abs(_goodput_error_with_one_retry(measure, 0.03)) <= 0.03


def test_two_path_mptcp_transfer_arrives_intact_over_both_subflows() -> None:
    sc = {
        "name": "sha", "duration": "20s",
        "paths": [{"name": "a", "rate": "50Mbit", "delay": "5ms", "queue": "100 packets"},
                  {"name": "b", "rate": "20Mbit", "delay": "10ms", "queue": "100 packets"}],
        "connections": [{"name": "mptcp", "kind": "mptcp", "stack": "linux", "paths": ["a", "b"],
                         "app": {"kind": "download", "size": "24MB"}}],
    }
    res = run_linux(sc)
    c = res.summary["connections"][0]
    print(f"24 MB in {c['download_time_s']:.3f} s; sha256 {c['sha256_received']}; "
          + ", ".join(f"{s['path']}: {s['data_bytes_received']} B" for s in res.summary["subflows"]))
    assert c["completed"] and c["delivered_bytes"] == 24_000_000
    assert c["sha256_match"] and c["sha256_sent"] == c["sha256_received"]
    assert not c["mptcp_fallback"]
    for s in res.summary["subflows"]:
        assert s["data_bytes_received"] > 1_000_000, s
    assert res.summary["nstat"]["client"].get("MPTcpExtMPJoinSynAckRx", 0) >= 1
    assert not _ours()


@pytest.mark.parametrize(("key", "value", "words"), [
    ("connections.mptcp.scheduler", "blest", "scheduler"),
    ("connections.mptcp.cc", "lia", "no `lia`"),
    ("connections.mptcp.tcp.recovery", "rfc6675", "RACK-TLP and PRR"),
    ("connections.mptcp.tcp.prr", False, "RACK-TLP and PRR"),
    ("connections.mptcp.tcp.cwnd_limited", "rounds", "tcp_cwnd_validate"),
    ("connections.mptcp.tcp.tso_defer", False, "tcp_tso_should_defer"),
    ("connections.mptcp.tcp.quickack", False, "quick-ACK"),
    ("connections.mptcp.tcp.cwv", False, "tcp_cwnd_application_limited"),
    ("connections.mptcp.join", "add_addr", "fully_established"),
    ("connections.mptcp.option_sizes", "classic", "need `linux`"),
    ("connections.mptcp.host_jitter", "33us", "own timing"),
    ("connections.mptcp.buffer_accounting", "payload", "truesize"),
    ("connections.mptcp.buffer_accounting", "skb", "truesize"),
    ("connections.mptcp.window_update", "receiving_subflow", "every subflow"),
    ("connections.mptcp.mptcp_retransmit", False, "retransmission timer"),
    ("connections.mptcp.rcvbuf_window", "full", "free space"),
    ("connections.mptcp.window_tail", "whole_segments", "mptcp_check_allowed_size"),
    ("connections.mptcp.drs_rtt", "largest", "smallest RTT of the subflows"),
])
def test_settings_the_kernel_cannot_honour_are_refused(key: str, value: str | bool, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        run_linux(KERNEL_SCENARIOS / "kernel-equal-paths.toml", overrides={key: value})
    assert key in str(e.value) and words in str(e.value)
    cli = subprocess.run([sys.executable, "-m", "mptcplab.cli", "run", str(KERNEL_SCENARIOS / "kernel-equal-paths.toml"), "--backend", "linux",
                          "--set", f"{key}={json.dumps(value) if isinstance(value, bool) else value}"],
                         capture_output=True, text=True)
    assert cli.returncode == 2
    assert len(cli.stderr.strip().splitlines()) == 1 and key in cli.stderr


@pytest.mark.parametrize(("key", "value", "shown", "words"), [
    ("paths.p0.queue_at", "host", "paths[0].queue_at", "not emulated"),
    ("connections.mptcp.stack", "linux-v0.9x", "connections.mptcp.stack", "not this kernel's"),
])
def test_stacks_and_host_queues_the_kernel_cannot_run_are_refused(key: str, value: str, shown: str, words: str) -> None:
    """The kernel backend's link emulator is a router, and its stack is upstream Linux: a queue
    in the sending host and the out-of-tree v0.9x profile are refused, never replaced."""
    from mptcplab.kernel.support import check_supported

    sc = load_scenario(KERNEL_SCENARIOS / "kernel-equal-paths.toml")
    path = sc.resolved["paths"][0]["name"]
    with pytest.raises(ConfigError) as e:
        check_supported(load_scenario(KERNEL_SCENARIOS / "kernel-equal-paths.toml",
                                      {key.replace("p0", path): value}))
    assert shown in str(e.value) and words in str(e.value)


def test_linux_loss_recovery_written_explicitly_is_accepted() -> None:
    """Writing what the kernel does (RACK-TLP and PRR) is honoured, not refused."""
    from mptcplab.kernel.support import check_supported

    check_supported(load_scenario(KERNEL_SCENARIOS / "kernel-equal-paths.toml",
                                  {"connections.mptcp.tcp.recovery": "rack_tlp", "connections.mptcp.tcp.prr": True}))


def test_linux_sender_rules_written_explicitly_are_accepted() -> None:
    """The `linux` profile's TCP keys written with the kernel's values are honoured."""
    from mptcplab.kernel.support import check_supported

    check_supported(load_scenario(KERNEL_SCENARIOS / "kernel-equal-paths.toml",
                                  {"connections.mptcp.tcp.cwnd_limited": "linux", "connections.mptcp.tcp.tso_defer": True,
                                   "connections.mptcp.tcp.quickack": True}))


def test_the_hosts_behaviour_written_as_the_kernel_has_it_is_accepted() -> None:
    """`join` and `option_sizes` as the backend's hosts behave (the `linux` profile's values)."""
    from mptcplab.kernel.compare import linux_stack
    from mptcplab.kernel.support import check_supported

    sc = load_scenario(KERNEL_SCENARIOS / "kernel-equal-paths.toml",
                       {"connections.mptcp.join": "fully_established", "connections.mptcp.option_sizes": "linux"})
    check_supported(sc)
    twin = linux_stack(sc).resolved["connections"][0]
    assert (twin["join"], twin["option_sizes"], twin["host_jitter"]) == ("fully_established", "linux", "33us")


def _skmem_during_run(sc_data: dict[str, Any]) -> tuple[dict[str, dict[str, str]], dict[str, list[dict[str, int]]]]:
    """Runs ``sc_data`` as ``run_linux`` does and, while data flows, reads the client's and
    the server's ``net.ipv4.tcp_rmem``/``tcp_wmem`` and the socket memory (``rb`` =
    sk_rcvbuf, ``tb`` = sk_sndbuf) of their established connection sockets: the TCP socket
    (``ss -t``) of a TCP connection, the MPTCP socket (``ss -M``) of an MPTCP one."""
    import re
    import threading

    sc = load_scenario(sc_data)
    res = sc.resolved
    duration = float(res["duration"].removesuffix("s"))
    which = "-M" if res["connections"][0]["kind"] == "mptcp" else "-t"
    sysctls: dict[str, dict[str, str]] = {}
    skmem: dict[str, list[dict[str, int]]] = {"client": [], "server": []}
    procs: list[subprocess.Popen[str]] = []
    with emulated_network(sc, sc.seed, clock=False) as net:
        for side, ns in (("client", net.client), ("server", net.server)):
            out = net.sh(ns, "sysctl", "-n", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem").stdout.split("\n")
            sysctls[side] = {"tcp_rmem": " ".join(out[0].split()), "tcp_wmem": " ".join(out[1].split())}
        stop = threading.Event()

        def poll() -> None:
            time.sleep(1.5)
            while not stop.is_set():
                for side, ns in (("client", net.client), ("server", net.server)):
                    text = net.sh(ns, "ss", which, "-mnH", "state", "established", check=False).stdout
                    for m in re.finditer(r"rb(\d+),t\d+,tb(\d+)", text):
                        skmem[side].append({"rb": int(m[1]), "tb": int(m[2])})
                time.sleep(0.3)

        poller = threading.Thread(target=poll)
        poller.start()
        try:
            backend._traffic(sc, net, [p["name"] for p in res["paths"]], res["connections"], duration, None, procs)
        finally:
            stop.set()
            poller.join()
    return sysctls, skmem


def _buffer_scenario(kind: str, **bufs: Any) -> dict[str, Any]:
    sc = one_path("20Mbit", "10ms", queue="100 packets") | {"duration": "4s"}
    if kind == "mptcp":
        sc["paths"].append({"name": "q", "rate": "10Mbit", "delay": "20ms", "queue": "100 packets"})
        sc["connections"][0] |= {"name": "mptcp", "kind": "mptcp", "paths": ["p", "q"]}
    sc["connections"][0] |= bufs
    return sc


@pytest.mark.parametrize("kind", ["tcp", "mptcp"])
def test_a_fixed_buffer_reaches_the_socket_doubled_and_a_triple_the_namespaces_sysctls(kind: str) -> None:
    """A fixed size is SO_SNDBUFFORCE / SO_RCVBUFFORCE on the data's sender and receiver
    (the kernel stores twice the value and keeps it); a triple is the sysctl of both hosts and
    the socket is left to auto-tune within it."""
    sysctls, skmem = _skmem_during_run(_buffer_scenario(kind, sndbuf="150000B", rcvbuf="100000B"))
    print(f"{kind} fixed:", sysctls, skmem["client"][:2], skmem["server"][:2])
    assert skmem["client"] and skmem["server"]
    assert {m["rb"] for m in skmem["client"]} == {200_000}  # the receiver (download: client)
    assert {m["tb"] for m in skmem["server"]} == {300_000}  # the sender
    # No triple: the namespaces keep the kernel's own sysctls.
    for side in ("client", "server"):
        assert sysctls[side]["tcp_rmem"] == " ".join(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split())

    sysctls, skmem = _skmem_during_run(_buffer_scenario(
        kind, sndbuf={"min": "4096B", "default": "32768B", "max": "300000B"},
        rcvbuf={"min": "4096B", "default": "65536B", "max": "250000B"}))
    print(f"{kind} triple:", sysctls, skmem["client"][-2:], skmem["server"][-2:])
    for side in ("client", "server"):
        assert sysctls[side] == {"tcp_rmem": "4096 65536 250000", "tcp_wmem": "4096 32768 300000"}
    rb = [m["rb"] for m in skmem["client"]]
    tb = [m["tb"] for m in skmem["server"]]
    assert rb and tb
    # Auto-tuned: grown beyond default, within the triple (never a doubled fixed value). An
    # MPTCP socket's send buffer is tcp_wmem's min plus the sum of its subflows' send buffers,
    # each auto-tuned up to tcp_wmem's max (net/mptcp `__mptcp_sync_sndbuf`; measured on 6.18:
    # 604096 B = 4096 + 2 x 300000 with two subflows).
    assert max(rb) <= 250_000 and max(rb) > 65536, rb
    top = 4096 + 2 * 300_000 if kind == "mptcp" else 300_000
    assert max(tb) <= top and max(tb) > 32768, tb


def _start_cli_run(tmp_path: Path) -> subprocess.Popen[str]:
    sc = one_path("10Mbit", "5ms")
    sc["duration"] = "30s"
    f = tmp_path / "long.json"
    f.write_text(json.dumps(sc))
    p = subprocess.Popen([sys.executable, "-m", "mptcplab.cli", "run", str(f), "--backend", "linux"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(_emulators_of(p.pid)) < 1:
        time.sleep(0.1)
    assert _emulators_of(p.pid), "the run did not start its emulator"
    time.sleep(1.0)  # traffic flowing
    return p


def _namespaces_of(pid: int) -> list[str]:
    return [ns for ns in netns.our_namespaces() if ns.startswith(f"mplab-{pid}-")]


def test_sigterm_stops_a_run_and_removes_everything(tmp_path: Path) -> None:
    p = _start_cli_run(tmp_path)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=20)
    assert p.returncode == 130
    assert not _namespaces_of(p.pid)
    assert not _emulators_of(p.pid)


def test_leftovers_of_a_killed_run_are_removed_by_the_next_run(tmp_path: Path) -> None:
    p = _start_cli_run(tmp_path)
    emus = _emulators_of(p.pid)
    p.kill()
    p.wait()
    time.sleep(0.3)
    assert _namespaces_of(p.pid), "SIGKILL cannot clean up: the namespaces should still be there"
    assert not any(Path(f"/proc/{e}").exists() and b"linkemu" in Path(f"/proc/{e}/cmdline").read_bytes() for e in emus)
    assert scratch_dirs_of(p.pid), "SIGKILL cannot clean up: the scratch directory should still be there"
    run_linux(one_path("10Mbit", "5ms") | {"duration": "2s"})
    assert not _namespaces_of(p.pid)
    assert not scratch_dirs_of(p.pid)
    assert not _ours()


@pytest.mark.parametrize("name", ["kernel-equal-paths", "kernel-heterogeneous", "kernel-rcvbuf-limited"])
def test_compare_prints_both_backends(name: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "mptcplab.cli", "compare", str(KERNEL_SCENARIOS / f"{name}.toml"), "--runs", "1", "--set", "duration=5s",
                          "--set", "output.warmup=1.5s", "--out", str(tmp_path)], capture_output=True, text=True)
    print(out.stdout)
    assert out.returncode == 0, out.stderr
    assert "simulator" in out.stdout and "linux" in out.stdout and "mptcp: goodput" in out.stdout
    res = json.loads((tmp_path / "compare.json").read_text())
    row = next(r for r in res["rows"] if r["metric"] == "mptcp: goodput (Mbit/s)")
    assert row["sim"]["median"] > 1 and row["linux"]["median"] > 1
    if name == "kernel-rcvbuf-limited":
        # Both backends feed the 200 ms path one 64 KiB burst per round trip at most (2.7 Mbit/s),
        # while the 20 ms path takes the rest of the 256 KB window each cycle: the slow path's
        # share stays below 1/3 (measured: 0.20 simulator, 0.12-0.15 kernel).
        for backend in ("sim", "linux"):
            share = next(r for r in res["rows"] if r["metric"] == "mptcp/slow: share")[backend]["median"]
            assert share < 1 / 3, (backend, share)
    assert (tmp_path / "compare.png").stat().st_size > 0
    assert not _ours()


@pytest.mark.xfail(strict=True, reason="finding (docs/validation-findings.md): with a fixed 256 KB receive buffer "
                   "on the 20 ms + 200 ms pair the kernel reaches twice the simulator's goodput or more (18.3-21.0 vs "
                   "8.8-9.0 Mbit/s over two sessions of 3 runs): both have two regimes, 2-segment slices to the slow subflow and 64 KB "
                   "bursts it stalls behind; the kernel spends more of the run in slices; strict, so it fails loudly "
                   "once they agree")
def test_compare_rcvbuf_limited_goodput_agrees_within_a_factor_1_5(tmp_path: Path) -> None:
    """Goodput within a factor 1.5: the margin covers a loaded 2-core machine slowing the
    emulated links and a 5 s run. (Measured on the other two comparison scenarios, 3 runs of
    10 s: equal paths 37.9 vs 37.7 Mbit/s; heterogeneous 48.6 (37.2-50.9) vs 54.3 (50.2-57.0).)"""
    out = subprocess.run([sys.executable, "-m", "mptcplab.cli", "compare", str(KERNEL_SCENARIOS / "kernel-rcvbuf-limited.toml"),
                          "--runs", "1", "--set", "duration=5s", "--set", "output.warmup=1.5s", "--out", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    res = json.loads((tmp_path / "compare.json").read_text())
    row = next(r for r in res["rows"] if r["metric"] == "mptcp: goodput (Mbit/s)")
    assert 1 / 1.5 <= row["linux"]["median"] / row["sim"]["median"] <= 1.5, row
    assert not _ours()


def test_kernel_and_simulator_captures_open_with_the_same_tshark_command(tmp_path: Path) -> None:
    """Both backends' captures of the same scenario: tshark recognises the MPTCP connection
    (a `mptcp.stream` on the subflow's packets) and reports no malformed packets or errors,
    with one command line for both."""
    import shutil

    tshark = shutil.which("tshark")
    assert tshark is not None, "tshark is installed by the test setup"
    scenario = str(KERNEL_SCENARIOS / "kernel-equal-paths.toml")
    cli = Path(sys.executable).with_name("mptcplab")
    caps = {}
    for backend in ("sim", "linux"):
        out = tmp_path / backend
        extra = ["--pcap-per", "interface"] if backend == "sim" else []
        r = subprocess.run([str(cli), "run", scenario, "--backend", backend, "--set", "duration=3s",
                            "--set", "output.warmup=0s", "--pcap", str(out), *extra, "--json"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        caps[backend] = sorted(out.glob("*.pcap"))
        assert caps[backend], backend
    for backend, files in caps.items():
        for f in files:
            # Both backends serve on port 5201; its payload is decoded as plain data so that no
            # heuristic dissector misreads the (truncated) payload as another protocol.
            cmd = [tshark, "-r", str(f), "-d", "tcp.port==5201,data", "-o", "mptcp.analyze_mappings:TRUE",
                   "-o", "mptcp.intersubflows_retransmission:TRUE"]
            bad = subprocess.run([*cmd, "-Y", "_ws.malformed || _ws.expert.severity >= error"],
                                 capture_output=True, text=True, timeout=120)
            assert bad.returncode == 0 and bad.stdout.strip() == "", (backend, f.name, bad.stdout[:500])
            streams = subprocess.run([*cmd, "-Y", "tcp.len > 0", "-T", "fields", "-e", "mptcp.stream"],
                                     capture_output=True, text=True, timeout=120).stdout.split()
            assert streams and set(streams) == {"0"}, (backend, f.name, set(streams))


# ---------------------------------------------------------------------------------------
# Congestion control per subflow, sweep and plot
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("cc", ["bbr", "cubic"])
def test_every_subflow_runs_the_configured_congestion_control(cc: str) -> None:
    """The kernel's per-subflow congestion control (socket diagnostics) is the scenario's on
    both subflows, including the one the path manager adds; the host's default (often bbr)
    must not leak in, hence cubic too. The transfer fills both paths."""
    sc = load_scenario(KERNEL_SCENARIOS / "kernel-equal-paths.toml",
                       {"connections.mptcp.cc": cc, "duration": "4s", "output.warmup": "1.5s"})
    res = run_linux(sc)
    c = res.summary["connections"][0]
    subs = res.summary["subflows"]
    capacity = 2 * 20e6 * PAYLOAD
    print(f"{cc}: goodput {c['goodput_bps'] / 1e6:.3f} Mbit/s of {capacity / 1e6:.3f}; "
          + ", ".join(f"{s['path']}: {s['cc']} {s['goodput_bps'] / 1e6:.3f}" for s in subs))
    assert c["cc"] == cc
    assert [s["cc"] for s in subs] == [cc, cc]
    assert c["sha256_match"] and not c["mptcp_fallback"]
    # Both paths carry data, and together far more than one path could (0.5 of the total):
    # BBR paces at its bottleneck-bandwidth estimate, CUBIC fills a one-BDP queue. 80 %
    # leaves room for BBR's probing (a 0.75 pacing-gain phase every 8 RTTs), startup
    # transients after the warm-up, and the real-time emulator sharing 2 cores with both
    # hosts (a quiet run gives 97 %; a loaded one gave 89.5 %).
    assert c["goodput_bps"] >= 0.8 * capacity
    for s in subs:
        assert s["goodput_bps"] >= 0.3 * capacity, s
    # Subflow goodputs count the same window as the connection's (bytes that arrived by the
    # end of the run), so they add up to it, up to two sampling errors and MPTCP-level
    # duplicates. The subflow counters (TCP_INFO bytes_received) are sampled every 100 ms (the
    # default time-series step) and interpolated linearly at the window's two ends; for a
    # counter whose slope lies between 0 and the path's capacity C, the chord is off by at most
    # C * 100 ms / 2 per end, so C_total * 100 ms over both paths and ends. The reader's
    # progress is a step function sampled every 10 ms: C_total * 10 ms more. Reinjected bytes
    # (the sender's MPTCP_INFO bytes_retrans) may arrive twice on the subflows. Measured
    # differences on a quiet machine: -0.5 % to +1.8 % (tolerance 4.4 % here).
    window = 4.0 - 1.5
    total = sum(s["goodput_bps"] for s in subs)
    slack = capacity * (0.1 + 0.01) / window + c["reinjected_bytes"] * 8 / window
    assert -capacity * (0.1 + 0.01) / window <= total - c["goodput_bps"] <= slack, (total, slack)


def test_sweep_on_the_kernel_runs_one_point_at_a_time_resumes_and_plots(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("mptcplab")
    scenario = tmp_path / "one.json"
    scenario.write_text(json.dumps(one_path("10Mbit", "5ms", queue="40 packets")
                                   | {"duration": "3s", "output": {"warmup": "1s"}}))
    out = tmp_path / "sweep"
    cmd = [str(cli), "sweep", str(scenario), "--backend", "linux", "--vary", "paths.p.rate=5Mbit,10Mbit",
           "--jobs", "2", "--out", str(out)]
    started = time.monotonic()
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    assert "one point at a time" in first.stderr and "--jobs 2 is ignored" in first.stderr
    import pandas as pd

    df = pd.read_csv(out / "results.csv")
    print(df[["paths.p.rate", "conn.tcp.goodput_bps", "wall_s"]])
    assert sorted(df["paths.p.rate"]) == ["10Mbit", "5Mbit"]
    # Sequential: the sweep took at least both runs' wall-clock durations (3 s each).
    assert took >= 6.0 and all(df["wall_s"] >= 3.0)
    for rate, goodput in zip(df["paths.p.rate"], df["conn.tcp.goodput_bps"], strict=True):
        capacity = float(rate.removesuffix("Mbit")) * 1e6 * PAYLOAD
        assert abs(goodput / capacity - 1) <= 0.05, (rate, goodput)
    assert json.loads((out / "sweep.json").read_text())["backend"] == "linux"
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    stamps = [r.stat().st_mtime_ns for r in runs]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "resuming: 2 of 2 runs already finished" in again.stdout
    assert [r.stat().st_mtime_ns for r in sorted((out / "runs").iterdir())] == stamps
    plotted = subprocess.run([str(cli), "plot", str(out)], capture_output=True, text=True, timeout=120)
    assert plotted.returncode == 0, plotted.stderr
    png, svg = (out / "plots" / f"conn.tcp.goodput_bps_vs_paths.p.rate.{ext}" for ext in ("png", "svg"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "goodput (Mbit/s)" in svg.read_text()
    assert not _ours()


def test_plot_of_a_kernel_run_directory(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("mptcplab")
    out = tmp_path / "run"
    r = subprocess.run([str(cli), "run", str(KERNEL_SCENARIOS / "kernel-equal-paths.toml"), "--backend", "linux",
                        "--set", "duration=3s", "--set", "output.warmup=1s", "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["backend"] == "linux"
    plotted = subprocess.run([str(cli), "plot", str(out)], capture_output=True, text=True, timeout=120)
    assert plotted.returncode == 0, plotted.stderr
    png, svg = out / "plots" / "timeseries.png", out / "plots" / "timeseries.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = svg.read_text()
    for label in ("cwnd (KB)", "srtt (ms)", "time (s)", "mptcp/p1", "mptcp/p2"):
        assert label in text, label


# ---------------------------------------------------------------------------------------
# Emulator accuracy: jitter, time-limited queue, rate schedule, CoDel
# ---------------------------------------------------------------------------------------

PROBE = Path(__file__).resolve().with_name("icmp_probe.py")
MTU_TX_10MBIT_MS = 1500 * 8 / 10e6 * 1e3  # one full packet's transmission at 10 Mbit/s
# Host overhead allowed on a measured delay beyond what the reference path shows: veth
# hops, the emulator's wake-up, the kernel's echo reply, on a busy 2-core machine.
HOST_MS = 0.5
# A probe held up by the host (a stall of an emulator or of the prober delays a few
# consecutive probes by up to tens of milliseconds on a loaded machine) is an outlier; at
# most this fraction of them is tolerated, and they are left out of the statistics.
STALLED = 0.03


def _prober(net: netns.Network, path: int, interval: float, count: int) -> subprocess.Popen[str]:
    """ICMP echo probes through path ``path``, answered by the server namespace's kernel."""
    return subprocess.Popen(["ip", "netns", "exec", net.client, sys.executable, str(PROBE), netns.client_addr(path),
                             netns.SERVER_ADDR, str(interval), str(count)], stdout=subprocess.PIPE, text=True)


def _probe_results(p: subprocess.Popen[str]) -> list[tuple[float, float | None]]:
    try:
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0
    return [(t, r) for t, r in json.loads(out)]


def _with_reference(sc_data: dict[str, Any]) -> dict[str, Any]:
    """``sc_data`` plus an idle path ``ref`` with the first path's delay and no queueing
    (1 Gbit/s), which no connection uses: probes through it measure what the host adds to
    an emulated delay at the same moment, under the same load."""
    first = sc_data["paths"][0]
    return sc_data | {"paths": [*sc_data["paths"], {"name": "ref", "rate": "1Gbit", "delay": first["delay"]}]}


def _host_offset_ms(ref: list[tuple[float, float | None]], rtt_ms: float) -> float:
    """The median excess of the reference path's probes over its configured RTT."""
    got = [r * 1e3 for _, r in ref if r is not None]
    assert len(got) >= 0.9 * len(ref)
    return _quantile(got, 0.5) - rtt_ms


T = TypeVar("T")


def _with_quiet_reference(measure: Callable[[], T], ref_of: Callable[[T], list[tuple[float, float | None]]],
                          rtt_ms: float) -> tuple[T, float]:
    """Runs ``measure`` and returns its result with the host offset of its reference path.

    Subtracting the reference's median holds while host delay is common to both paths: the
    load these tests need is a reference whose median round trip exceeds its configured RTT by
    at most HOST_MS. An overloaded machine stalls each emulator on its own (no reference
    cancels that), which shows as a larger offset: then the measurement is repeated once, the
    reason printed, and a second overloaded measurement fails with the offset named."""
    for attempt in (1, 2):
        result = measure()
        offset = _host_offset_ms(ref_of(result), rtt_ms)
        if offset <= HOST_MS:
            return result, offset
        print(f"attempt {attempt}: the reference path's median RTT exceeds its configured {rtt_ms:g} ms by "
              f"{offset:.3f} ms (> HOST_MS = {HOST_MS} ms; load average {os.getloadavg()[0]:.2f}): the host is "
              "stalling the emulators" + ("; measuring again" if attempt == 1 else ""))
    raise AssertionError(f"overloaded: the reference path's host offset is {offset:.3f} ms twice, above {HOST_MS} ms")


def _run_with_probes(
    sc_data: dict[str, Any], interval: float,
) -> tuple[RunResult, list[tuple[float, float | None]], list[tuple[float, float | None]]]:
    """Runs ``sc_data`` on the kernel as ``run_linux`` does, with an idle reference path
    added (:func:`_with_reference`) and ICMP probes every ``interval`` through the first path
    and through the reference for the whole run. Probe times are seconds since the run's
    origin (probes sent before it wait for the links' clock to start: callers skip them)."""
    sc = load_scenario(_with_reference(sc_data))
    res = sc.resolved
    duration = float(res["duration"].removesuffix("s"))
    procs: list[subprocess.Popen[str]] = []
    count = int((duration + 1.5) / interval)
    with emulated_network(sc, sc.seed, clock=False) as net:
        probers = [_prober(net, 0, interval, count), _prober(net, len(res["paths"]) - 1, interval, count)]
        try:
            outputs, nstat, t0 = backend._traffic(sc, net, [p["name"] for p in res["paths"]], res["connections"],
                                                  duration, None, procs)
        finally:
            probes, ref = (_probe_results(p) for p in probers)
    result = build_result(sc, sc.seed, outputs, net.link_stats, nstat, 1.0, duration, t0)
    return result, [(t - t0, r) for t, r in probes], [(t - t0, r) for t, r in ref]


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def test_jitter_gives_the_configured_rtt_distribution() -> None:
    """Uniform jitter J on both directions of a path with one-way delay D: the RTT is
    2D + J(U1 + U2), U uniform on [-1, 1]: mean 2D, standard deviation J·sqrt(2/3), support
    [2D - 2J, 2D + 2J] (triangular). Probes 12.5 ms apart never catch up with each other
    (each direction's delay spans 2J = 10 ms), so order-keeping does not bias them. The
    host's own delay, measured at the same time on a jitter-free reference path, is
    subtracted."""
    d_ms, j_ms, n = 20.0, 5.0, 400
    sc = load_scenario(_with_reference(one_path("1Gbit", f"{d_ms}ms", jitter={"amount": f"{j_ms}ms"})))

    def measure() -> tuple[list[tuple[float, float | None]], list[tuple[float, float | None]]]:
        with emulated_network(sc, 1) as net:
            probers = [_prober(net, 0, 0.0125, n), _prober(net, 1, 0.0125, n)]
            probes, ref = (_probe_results(p) for p in probers)
        return probes, ref

    (probes, ref), offset = _with_quiet_reference(measure, lambda m: m[1], 2 * d_ms)
    measured = [r * 1e3 - offset for _, r in probes if r is not None]
    lo, hi = 2 * d_ms - 2 * j_ms, 2 * d_ms + 2 * j_ms
    rtts = [r for r in measured if r <= hi + 1.0]
    mean = sum(rtts) / len(rtts)
    sd = math.sqrt(sum((r - mean) ** 2 for r in rtts) / (len(rtts) - 1))
    want_sd = j_ms * math.sqrt(2 / 3)
    # Standard errors: of the mean sd/sqrt(n); of the sd, sd·sqrt((kurtosis - 1)/(4n)) with
    # the triangular distribution's kurtosis 2.4.
    se_mean = want_sd / math.sqrt(len(rtts))
    se_sd = want_sd * math.sqrt(1.4 / (4 * len(rtts)))
    print(f"jitter {j_ms} ms, delay {d_ms} ms: host offset {offset:.3f} ms (reference path); {len(measured)} RTTs "
          f"less that: mean {mean:.3f} ms (want {2 * d_ms}), sd {sd:.3f} ms (want {want_sd:.3f}), "
          f"min {min(measured):.3f}, max {max(measured):.3f} (support [{lo}, {hi}]), "
          f"{len(measured) - len(rtts)} held up by the host")
    assert len(measured) >= 0.99 * n
    assert len(rtts) >= (1 - STALLED) * len(measured)
    assert abs(mean - 2 * d_ms) <= 4 * se_mean + 0.2
    assert abs(sd - want_sd) <= 4 * se_sd + 0.3
    # The emulator never delivers early.
    assert min(measured) >= lo - HOST_MS


def test_time_limited_queue_caps_the_queueing_delay() -> None:
    """`queue = "50ms"` on a saturated 10 Mbit/s downlink: a packet whose wait would exceed
    50 ms is dropped, so the probes' queueing delay (RTT - 2 x delay - the host's offset on
    the reference path) tops out at 50 ms; Reno's sawtooth fills the queue to that limit
    once per cycle, so some probes see it within one full packet's transmission (1.2 ms).
    The uplink is fast so that ACKs queue for no measurable time."""
    limit_ms, delay_ms = 50.0, 5.0
    sc = one_path("10Mbit", f"{delay_ms}ms", queue=f"{limit_ms:g}ms", up={"rate": "100Mbit"})
    sc["connections"][0]["cc"] = "reno"
    sc["output"] = {"warmup": "1s"}
    (res, probes, ref), offset = _with_quiet_reference(lambda: _run_with_probes(sc, 0.01), lambda m: m[2], 2 * delay_ms)
    qd = [r * 1e3 - 2 * delay_ms - offset for t, r in probes if r is not None and 1.0 <= t <= 4.8]
    down = next(link for link in res.summary["links"] if link["name"] == "p.down")
    over = sum(1 for q in qd if q > limit_ms + HOST_MS) / len(qd)
    at_limit = sum(1 for q in qd if q >= limit_ms - MTU_TX_10MBIT_MS - HOST_MS) / len(qd)
    print(f"queue {limit_ms} ms: host offset {offset:.3f} ms; {len(qd)} probes, queueing delay median "
          f"{_quantile(qd, 0.5):.2f} ms, p90 {_quantile(qd, 0.9):.2f}, p99 {_quantile(qd, 0.99):.2f}, max {max(qd):.2f}; "
          f"{100 * at_limit:.1f} % at the limit, {100 * over:.1f} % beyond it; "
          f"link: {down['queue_drops']} queue drops, max {down['max_queue_bytes']} B queued")
    assert len(qd) >= 300
    assert down["queue_drops"] > 0
    assert over <= STALLED
    assert at_limit >= 0.02
    assert res.summary["connections"][0]["goodput_bps"] >= 0.95 * 10e6 * PAYLOAD


def test_rate_schedule_changes_the_goodput_at_the_scripted_time() -> None:
    """20 Mbit/s, then 5 Mbit/s from t = 3 s (the run's time origin, as in the simulator):
    the receiver's goodput is each rate's payload capacity on either side of the step. A
    clock origin off by more than a few tens of milliseconds puts slow seconds into the
    window just before the step, or fast ones just after it."""
    sc = one_path("20Mbit", "5ms", queue="60 packets", schedule=[{"at": "3s", "rate": "5Mbit"}])
    sc |= {"duration": "6s", "output": {"warmup": "1s", "timeseries": "100ms"}}
    res = run_linux(sc)
    ts = res.timeseries
    d = ts[ts["metric"] == "delivered_bytes"]
    t, v = list(d["time_s"]), list(d["value"])

    def rate(a: float, b: float) -> float:
        import numpy as np

        got = np.interp([a, b], t, v)
        return float(got[1] - got[0]) * 8 / (b - a)

    # The first packet served at 5 Mbit/s arrives one delay plus its transmission after 3 s.
    windows = {"before": (1.5, 2.995, 20e6), "just before": (2.5, 2.995, 20e6),
               "just after": (3.02, 3.5, 5e6), "after": (3.02, 6.0, 5e6)}
    for name, (a, b, bps) in windows.items():
        got = rate(a, b)
        print(f"{name} [{a}, {b}] s: {got / 1e6:.3f} Mbit/s vs payload capacity {bps * PAYLOAD / 1e6:.3f}")
        # 3 % as the saturated tests, plus one 10 ms progress sample's worth of bytes at
        # each end of the window.
        assert abs(got / (bps * PAYLOAD) - 1) <= 0.03 + 2 * 0.01 / (b - a), name


def test_window_series_follow_the_kernels_slow_start_and_window_rules() -> None:
    """The sender's `TCP_INFO` series (`cwnd_bytes`, `ssthresh_bytes`, `in_flight_bytes`),
    one cubic flow on 20 Mbit/s, 20 ms RTT, a queue of one BDP (34 packets), 4 s:
    - ssthresh is Linux's `TCP_INFINITE_SSTHRESH` (NaN in the series, as the simulator's)
      until slow start ends, then finite; with a 1-BDP queue slow start ends (by HyStart or by
      the queue's first drop) within the first second, and ssthresh stays finite after it;
    - a bulk sender with data and send buffer to spare transmits until `tcp_packets_in_flight`
      reaches cwnd (`tcp_cwnd_test`), so a sample taken between ACKs sees at most the segments
      the last ACK freed below cwnd: one delayed ACK covers 2 segments and one stretch ACK of
      the receiver's GRO a few more, so the median over the samples after 1 s is within
      4 segments of cwnd. Loss recovery (PRR sets cwnd below what is in flight) moves single
      samples either way, not the median."""
    sc = one_path("20Mbit", "10ms", queue="34 packets")
    sc |= {"duration": "4s", "output": {"warmup": "1s", "timeseries": "100ms"}}
    res = run_linux(sc)
    ts = res.timeseries
    sub = ts[ts["entity_kind"] == "subflow"]
    cwnd = sub[sub["metric"] == "cwnd_bytes"].set_index("time_s")["value"]
    ssthresh = sub[sub["metric"] == "ssthresh_bytes"].set_index("time_s")["value"]
    flight = sub[sub["metric"] == "in_flight_bytes"].set_index("time_s")["value"]
    assert len(cwnd) == len(ssthresh) == len(flight) >= 30
    # From 10 segments, slow start needs one round (20 ms) to pass HyStart's 16-segment low
    # window and part of another to detect anything: no exit before 40 ms. A sample taken
    # earlier must show the infinite threshold (a busy host may take its first one later).
    if ssthresh.index[0] < 0.04:
        assert math.isnan(ssthresh.iloc[0]), ssthresh.head()
    first_finite = next(t for t, v in ssthresh.items() if not math.isnan(v))
    print(f"slow start ended by {first_finite:.2f} s at cwnd {cwnd.loc[first_finite] / 1448:.0f} segments")
    assert first_finite <= 1.0
    assert not ssthresh[ssthresh.index >= first_finite].isna().any()
    late = cwnd.index >= 1.0
    gap = (cwnd[late] - flight[late]) / 1448
    print(f"cwnd - in flight after 1 s: median {gap.median():.1f} segments, min {gap.min():.0f}, max {gap.max():.0f}")
    assert 0 <= gap.median() <= 4


def test_codel_keeps_the_standing_queue_near_its_target() -> None:
    """CoDel (target 5 ms, interval 100 ms) in front of a saturated 10 Mbit/s link with a
    1000-packet hard limit (1.2 s of drop-tail queue). RFC 8289 drops once the minimum
    sojourn time over an interval stays above the target, so the per-interval minimum of
    the probes' queueing delay sits at or below the target (median over intervals); between
    drops Reno adds one packet per RTT (>= 10 ms), at most 100/10 packets (12 ms) per
    interval, which bounds the peaks. The link stays busy: CoDel leaves enough queue for
    full goodput."""
    target_ms, interval_ms, delay_ms = 5.0, 100.0, 5.0
    sc = one_path("10Mbit", f"{delay_ms}ms", queue="1000 packets", up={"rate": "100Mbit"},
                  aqm={"kind": "codel", "target": f"{target_ms:g}ms", "interval": f"{interval_ms:g}ms"})
    sc["connections"][0]["cc"] = "reno"
    sc["output"] = {"warmup": "1s"}
    (res, probes, ref), offset = _with_quiet_reference(lambda: _run_with_probes(sc, 0.01), lambda m: m[2], 2 * delay_ms)
    qd = [(t, r * 1e3 - 2 * delay_ms - offset) for t, r in probes if r is not None and 1.0 <= t <= 4.8]
    by_interval: dict[int, list[float]] = {}
    for t, q in qd:
        by_interval.setdefault(int(t * 1e3 // interval_ms), []).append(q)
    minima = [min(v) for v in by_interval.values()]
    values = [q for _, q in qd]
    down = next(link for link in res.summary["links"] if link["name"] == "p.down")
    c = res.summary["connections"][0]
    print(f"codel: host offset {offset:.3f} ms; {len(values)} probes, queueing delay median {_quantile(values, 0.5):.2f} ms, "
          f"p90 {_quantile(values, 0.9):.2f}, p99 {_quantile(values, 0.99):.2f}; per-interval minimum median "
          f"{_quantile(minima, 0.5):.2f} ms; {down['aqm_drops']} CoDel drops, {down['queue_drops']} tail drops; "
          f"goodput {c['goodput_bps'] / 1e6:.3f} Mbit/s")
    assert len(values) >= 300
    assert down["aqm_drops"] > 0 and down["queue_drops"] == 0
    assert _quantile(minima, 0.5) <= target_ms + MTU_TX_10MBIT_MS + HOST_MS
    growth_ms = interval_ms / (2 * delay_ms) * MTU_TX_10MBIT_MS
    assert _quantile(values, 0.9) <= target_ms + growth_ms + MTU_TX_10MBIT_MS + HOST_MS
    assert c["goodput_bps"] >= 0.95 * 10e6 * PAYLOAD
