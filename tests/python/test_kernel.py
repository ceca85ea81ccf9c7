"""The Linux backend on this machine's MPTCP stack: emulator accuracy (RTT, rate, loss,
Mahimahi trace), a 2-path MPTCP transfer checked with SHA-256, refusals, compare, and
cleanup after SIGTERM and after SIGKILL.

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
from pathlib import Path
from typing import Any

import pytest

from mptcplab.errors import ConfigError
from mptcplab.kernel import netns
from mptcplab.kernel.backend import emulated_network, linkemu_binary, run_linux
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

KERNEL_SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "kernel"
PAYLOAD = 1448 / 1500  # payload per 1500-byte IP packet (MSS 1448 with timestamps)


def one_path(rate: str, delay: str, queue: str = "200 packets", **extra: Any) -> dict[str, Any]:
    path = {"name": "p", "rate": rate, "delay": delay, "queue": queue, **extra}
    return {
        "name": "kernel-test", "duration": "5s", "paths": [path],
        "connections": [{"name": "tcp", "kind": "tcp", "paths": ["p"], "cc": "cubic", "app": {"kind": "bulk"}}],
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


def _connect_rtts(net: netns.Network, n: int = 30) -> list[float]:
    """Handshake times (s) of ``n`` TCP connections through path 0."""
    server = subprocess.Popen(
        ["ip", "netns", "exec", net.server, sys.executable, "-c",
         "import socket,time;s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);"
         f"s.bind(('{netns.SERVER_ADDR}',7000));s.listen(512);print('ok',flush=True);time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ok"
        probe = (
            "import socket,time,json\nout=[]\n"
            f"for _ in range({n}):\n"
            "    s=socket.socket();s.bind(('10.77.0.1',0));t=time.monotonic()\n"
            f"    s.connect(('{netns.SERVER_ADDR}',7000));out.append(time.monotonic()-t);s.close();time.sleep(0.02)\n"
            "print(json.dumps(out))"
        )
        out = subprocess.run(["ip", "netns", "exec", net.client, sys.executable, "-c", probe],
                             capture_output=True, text=True, check=True).stdout
        return list(json.loads(out))
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("rtt_ms", [10, 100])
def test_emulated_idle_rtt_is_within_half_a_millisecond(rtt_ms: int) -> None:
    sc = load_scenario(one_path("1Gbit", f"{rtt_ms / 2}ms"))
    with emulated_network(sc, 1) as net:
        rtts = sorted(_connect_rtts(net))
    median_ms = rtts[len(rtts) // 2] * 1e3
    print(f"configured RTT {rtt_ms} ms: measured median {median_ms:.3f} ms, min {rtts[0] * 1e3:.3f}, max {rtts[-1] * 1e3:.3f}")
    assert abs(median_ms - rtt_ms) <= 0.5


@pytest.mark.parametrize("mbit", [10, 50])
def test_saturated_tcp_goodput_is_within_3_percent_of_payload_capacity(mbit: int) -> None:
    bdp_pkts = math.ceil(mbit * 1e6 * 0.02 / 8 / 1500)
    res = run_linux(one_path(f"{mbit}Mbit", "5ms", queue=f"{2 * bdp_pkts + 10} packets"))
    c = res.summary["connections"][0]
    capacity = mbit * 1e6 * PAYLOAD
    err = c["goodput_bps"] / capacity - 1
    print(f"{mbit} Mbit/s: goodput {c['goodput_bps'] / 1e6:.3f} Mbit/s vs payload capacity {capacity / 1e6:.3f} ({100 * err:+.2f}%)")
    assert c["sha256_match"]
    assert abs(err) <= 0.03


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
    res = run_linux(sc)
    c = res.summary["connections"][0]
    capacity = 12e6 * PAYLOAD
    err = c["goodput_bps"] / capacity - 1
    print(f"trace of 12 Mbit/s: goodput {c['goodput_bps'] / 1e6:.3f} Mbit/s ({100 * err:+.2f}% of payload capacity)")
    assert abs(err) <= 0.03


def test_two_path_mptcp_transfer_arrives_intact_over_both_subflows() -> None:
    sc = {
        "name": "sha", "duration": "20s",
        "paths": [{"name": "a", "rate": "50Mbit", "delay": "5ms", "queue": "100 packets"},
                  {"name": "b", "rate": "20Mbit", "delay": "10ms", "queue": "100 packets"}],
        "connections": [{"name": "mptcp", "kind": "mptcp", "paths": ["a", "b"], "cc": "cubic",
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
])
def test_settings_the_kernel_cannot_honour_are_refused(key: str, value: str, words: str) -> None:
    with pytest.raises(ConfigError) as e:
        run_linux(KERNEL_SCENARIOS / "kernel-equal-paths.toml", overrides={key: value})
    assert key in str(e.value) and words in str(e.value)
    cli = subprocess.run([sys.executable, "-m", "mptcplab.cli", "run", str(KERNEL_SCENARIOS / "kernel-equal-paths.toml"), "--backend", "linux",
                          "--set", f"{key}={value}"], capture_output=True, text=True)
    assert cli.returncode == 2
    assert len(cli.stderr.strip().splitlines()) == 1 and key in cli.stderr


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
    run_linux(one_path("10Mbit", "5ms") | {"duration": "2s"})
    assert not _namespaces_of(p.pid)
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
        # share stays below 1/3 (measured: 0.13 simulator, 0.12-0.15 kernel). Goodput agrees
        # within a factor 1.5 (measured: 17.5 vs 17-19.6 Mbit/s over 10 s; the simulator once
        # gave 9.6, the kernel 1.8 times that); the margin covers a loaded 2-core machine
        # slowing the emulated links and a 5 s run.
        for backend in ("sim", "linux"):
            share = next(r for r in res["rows"] if r["metric"] == "mptcp/slow: share")[backend]["median"]
            assert share < 1 / 3, (backend, share)
        assert 1 / 1.5 <= row["linux"]["median"] / row["sim"]["median"] <= 1.5, row
    assert (tmp_path / "compare.png").stat().st_size > 0
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
