"""``--trace-kernel``: the kernel's tracepoints around a Linux-backend run, checked against
the kernel's own rules and against what the run's sockets report (``TCP_INFO``).

The runs need root, MPTCP and tracefs (CI has them: a missing piece fails, as in the other
kernel tests); the refusals of bad input need neither.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mptcplab.errors import ConfigError
from mptcplab.kernel import trace
from mptcplab.kernel.trace_tables import Own

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
MSS = 1448  # 1500-byte MTU less 20 (IP), 20 (TCP) and 12 (timestamps) bytes of headers


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "mptcplab.cli", *args], check=False, capture_output=True, text=True, env=env)


# --- bad input: one line naming the option, exit 2, nothing written -------------------------

def test_trace_kernel_is_refused_on_the_simulator(tmp_path: Path) -> None:
    out = tmp_path / "out"
    p = _cli("run", str(SCENARIOS / "validation" / "tcp-cubic.toml"), "--backend", "sim", "--trace-kernel",
             "--out", str(out))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --trace-kernel: "), p.stderr
    assert not out.exists()


def test_trace_kernel_without_root_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ConfigError) as e:
        trace.check_available("linux", "s.toml")
    assert e.value.path == "--trace-kernel" and "root" in e.value.message


def test_trace_kernel_without_tracefs_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # No tracefs at either place, and the mount point missing (so mounting it fails).
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(trace, "TRACEFS_PLACES", (tmp_path / "none", tmp_path / "neither"))
    with pytest.raises(ConfigError) as e:
        trace.check_available("linux", "s.toml")
    assert e.value.path == "--trace-kernel" and "tracefs" in e.value.message


def test_a_dsn_belongs_to_the_run_within_its_span_across_the_wrap() -> None:
    # 2^64 wraps: a reference just below it owns the numbers just above zero.
    own = Own(dsn_refs=[2**64 - 10])
    assert own.has_dsn(5) and own.has_dsn(2**64 - 2**39)
    assert not own.has_dsn(2**63)


# --- runs on the host kernel ------------------------------------------------------------------

kernel = pytest.mark.skipif(os.geteuid() != 0, reason="--trace-kernel runs need root (CI runs as root)")


def _instances_of(pid: int) -> list[str]:
    root = trace.tracefs_root(mount=False)
    if root is None:
        return []
    return [p.name for p in (root / "instances").iterdir() if p.name.startswith(f"{trace.INSTANCE_PREFIX}{pid}-")]


@pytest.fixture(scope="module")
def tcp_run():  # type: ignore[no-untyped-def]
    from mptcplab.kernel.backend import run_linux

    res = run_linux(SCENARIOS / "validation" / "tcp-cubic.toml", overrides={"duration": "3s", "output.warmup": "1s"},
                    trace_kernel=True)
    assert not _instances_of(os.getpid())  # removed at the end of the run
    return res


@kernel
def test_tcp_probe_shows_the_window_tcp_info_reported(tcp_run) -> None:  # type: ignore[no-untyped-def]
    """tcp_probe fires at the start of tcp_rcv_established, before the segment is processed,
    and in a bulk transfer (no idle restart, no RTO: checked) a sender's snd_cwnd changes
    only while it processes an incoming segment. So the window TCP_INFO reported at a
    sample instant t is the snd_cwnd the first tcp_probe after t records at the sender; an
    ACK being processed on the other CPU while the sample was read shows up one event later,
    so the first or second event after t must carry it. Times on both sides are
    CLOCK_MONOTONIC from the run's origin, so a misplaced origin (or a wrong clock) fails."""
    import numpy as np

    kt = tcp_run.kernel_trace
    assert kt.summary["complete"] and kt.summary["lost_events"] == 0
    assert tcp_run.summary["subflows"][0]["rtos"] == 0
    probe = kt.tables["tcp_probe"]
    snd = probe[probe["sender"]].sort_values("time_s")
    assert len(snd) > 1000  # 3 s at 20 Mbit/s: about 1 700 ACKs a second (every second segment)
    ts = tcp_run.timeseries
    cw = ts[(ts.entity_kind == "subflow") & (ts.metric == "cwnd_bytes")]
    times, cwnd = snd["time_s"].to_numpy(), snd["snd_cwnd"].to_numpy()
    # The samples taken after the last ACKs (the sender's final reading) have no event after them.
    cw = cw[cw["time_s"] < times[-2]]
    assert len(cw) >= 20
    k = np.searchsorted(times, cw["time_s"].to_numpy(), side="right")
    missed = [(t, want, cwnd[i:i + 2].tolist()) for t, i, want in zip(cw["time_s"], k, cw["value"] / MSS, strict=True)
              if want not in (cwnd[i], cwnd[i + 1])]
    assert not missed


@kernel
def test_rcvbuf_grow_fires_by_tcp_rcv_space_adjusts_rule(tcp_run) -> None:  # type: ignore[no-untyped-def]
    """tcp_rcv_space_adjust (Linux 6.18) records tcp_rcvbuf_grow only when at least one
    receive-RTT estimate (``rtt_us``) has passed since the last measure and the bytes read in
    it (``copied - inq``) exceed the last measure (``space``); each growth is preceded by the
    tcp_rcv_space_adjust event of the same read, on the receiver."""
    kt = tcp_run.kernel_trace
    grow, adjust = kt.tables["rcvbuf_grow"], kt.tables["rcv_space_adjust"]
    assert len(grow) >= 3  # a 3 s transfer out of slow start grows the buffer several times
    assert (grow["interval_us"] >= grow["rtt_us"]).all()
    assert (grow["copied"] - grow["inq"] > grow["space"]).all()
    assert (~grow["sender"]).all() and (grow["host"] == "client").all()
    assert len(adjust) >= len(grow)
    # The buffer only grows, and never past tcp_rmem's maximum (a new namespace takes the
    # host's triple; the scenario writes none).
    rmem_max = int(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()[2])
    assert grow["rcvbuf"].is_monotonic_increasing and grow["rcvbuf"].max() <= rmem_max


@kernel
def test_a_tcp_run_records_no_mptcp_events(tcp_run) -> None:  # type: ignore[no-untyped-def]
    ev = tcp_run.kernel_trace.summary["events"]
    assert ev["mptcp_subflow_get_send"] == ev["mptcp_sendmsg_frag"] == ev["ack_update_msk"] == 0


@kernel
def test_the_run_directory_has_the_trace(tcp_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import pandas as pd

    tcp_run.to_dir(tmp_path / "run")
    d = tmp_path / "run" / "kernel-trace"
    assert (d / "trace.json").is_file()
    df = pd.read_parquet(d / "tcp_probe.parquet")
    assert len(df) == tcp_run.kernel_trace.summary["events"]["tcp_probe"]


@kernel
def test_mptcp_mappings_add_up_to_what_each_subflow_sent() -> None:
    """Every byte a subflow sends for the first time was written by mptcp_sendmsg_frag(),
    which advances the subflow's rel_write_seq by what it adds (a zero-window probe aside:
    it is not traced, and a lossless run without a window closed to zero has none). With no
    loss (queues of 2 000 packets: no drops, checked) nothing is sent twice, so the bytes of
    each path's chain of mappings equal that subflow's TCP_INFO bytes_sent, exactly.

    Each scheduling call that picked a subflow is followed by its data, at most one burst
    (``MPTCP_SEND_BURST_SIZE``, under 64 KiB) plus the last mapping (at most one 64 KiB
    segment): so at least bytes / 128 KiB calls picked one."""
    from mptcplab.kernel.backend import run_linux

    res = run_linux(SCENARIOS / "kernel" / "kernel-rcvbuf-limited.toml",
                    overrides={"duration": "3s", "output.warmup": "1s", "paths.fast.queue": "2000 packets",
                               "paths.slow.queue": "2000 packets"}, trace_kernel=True)
    assert not _instances_of(os.getpid())
    s = res.summary
    assert all(link["queue_drops"] == 0 and link["loss_drops"] == 0 for link in s["links"])
    assert s["nstat"]["server"].get("TcpExtTCPWinProbe", 0) == 0
    kt = res.kernel_trace
    frags = kt.tables["sendmsg_frag"]
    sent = frags.groupby("path")["bytes"].sum().to_dict()
    for sf in s["subflows"]:
        assert sf["retransmitted_segments"] == 0
        assert sent.get(sf["path"], 0) == sf["bytes_sent"], (sf["path"], sent, sf["bytes_sent"])
    calls = kt.tables["subflow_get_send"].groupby("call").agg(
        picked=("picked_path", "first"), n=("index", "size"), first=("path", "first"))
    picked = calls["picked"].notna().sum()
    assert picked >= sum(sent.values()) / (128 * 1024)
    assert picked <= len(frags)
    # Index 0 of every call is the initial subflow, on the connection's first path.
    assert set(calls["first"]) == {"fast"}
    # The scheduler's events carry no call identifier: a call is the run of consecutive events
    # on one CPU, and data can follow a call that did not pick its subflow (a subflow pushing
    # its own pending data after a delegated push, `__mptcp_subflow_push_pending`). A broken
    # grouping mismatches most calls; the note counts the few such pushes do (1 of 3530 calls
    # in one run on a busy machine), and they must stay few: at most 1 % of the calls.
    failed = [n for n in kt.summary["notes"] if "grouping of events into calls failed" in n]
    for note in failed:
        bad, total = (int(x) for x in re.match(r"(\d+) of (\d+) scheduling calls", note).groups())
        assert bad <= 0.01 * total, note


@kernel
def test_a_stale_instance_is_removed_by_the_next_run() -> None:
    root = trace.check_available("linux")
    dead = subprocess.Popen(["true"])
    dead.wait()
    inst = root / "instances" / f"{trace.INSTANCE_PREFIX}{dead.pid}-1"
    inst.mkdir()
    try:
        assert inst.name in trace.cleanup_stale_instances()
        assert not inst.exists()
    finally:
        if inst.exists():
            inst.rmdir()


@kernel
def test_plot_draws_the_trace_and_read_kernel_trace_loads_it(tcp_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from mptcplab.plot import plot_run
    from mptcplab.plot_trace import read_kernel_trace

    tcp_run.to_dir(tmp_path / "run")
    summary, tables = read_kernel_trace(tmp_path / "run")
    assert summary["events"]["tcp_probe"] == len(tables["tcp_probe"])
    written = plot_run(tmp_path / "run", tmp_path / "plots")
    assert {p.name for p in written} >= {"kernel-trace.png", "kernel-trace.svg"}


def test_read_kernel_trace_names_a_damaged_summary(tmp_path: Path) -> None:
    from mptcplab.plot_trace import read_kernel_trace

    (tmp_path / "kernel-trace").mkdir()
    (tmp_path / "kernel-trace" / "trace.json").write_text("{")
    with pytest.raises(ConfigError) as e:
        read_kernel_trace(tmp_path)
    assert e.value.file.endswith("trace.json")


def test_run_linux_refuses_trace_kernel_without_root_before_anything_else(monkeypatch: pytest.MonkeyPatch) -> None:
    from mptcplab.kernel.backend import run_linux

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ConfigError) as e:
        run_linux(SCENARIOS / "validation" / "tcp-cubic.toml", trace_kernel=True)
    assert e.value.path == "--trace-kernel"


@kernel
def test_an_interrupted_run_removes_its_instance(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) in the middle of a traced run: the instance goes with the run, and
    nothing is written to --out."""
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    # A test runner started as a background job has SIGINT ignored, and the run would inherit
    # that (Python then never raises KeyboardInterrupt): it answers SIGINT as in a terminal.
    p = subprocess.Popen([sys.executable, "-m", "mptcplab.cli", "run", str(SCENARIOS / "validation" / "tcp-cubic.toml"),
                          "--backend", "linux", "--trace-kernel", "--out", str(tmp_path / "out")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 30
        while not _instances_of(p.pid) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert _instances_of(p.pid), "the run made no tracefs instance"
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode != 0, (out[-2000:], err[-2000:])
    assert not _instances_of(p.pid)
    assert not (tmp_path / "out").exists()
