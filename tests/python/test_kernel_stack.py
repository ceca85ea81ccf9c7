"""What the Linux backend runs on this machine's MPTCP stack: a 2-path MPTCP transfer checked
with SHA-256, the settings the kernel cannot honour (refused) and those written as it has them
(accepted), socket buffers, per-subflow congestion control (cubic, bbr), and the sender's
window series.

Needs root, MPTCP enabled and the emulator built (scripts/setup.sh); skipped otherwise.
Runs take real time: scenarios here are a few seconds long.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

# Autouse: the kernel environment is checked before every test, and nothing may be left behind
# after the module.
from kernel_testing import _kernel_environment, _nothing_left_behind  # noqa: F401
from conftest import buffer_pair
from kernel_testing import KERNEL_SCENARIOS, PAYLOAD, _ours, one_path
from mptcplab.errors import ConfigError
from mptcplab.kernel import backend
from mptcplab.kernel.backend import emulated_network, run_linux
from mptcplab.scenario import load_scenario


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
    ("connections.mptcp.tcp.cwnd_unit", "bytes", "tcp_snd_cwnd"),
    ("connections.mptcp.tcp.tso_defer", False, "tcp_tso_should_defer"),
    ("connections.mptcp.tcp.sndbuf_check", "acked", "tcp_check_space"),
    ("connections.mptcp.tcp.pacing_mss", "payload", "tcp_update_pacing_rate"),
    ("connections.mptcp.tcp.rtt_sample", "last", "first_ackt"),
    ("connections.mptcp.tcp.quickack", False, "quick-ACK"),
    ("connections.mptcp.tcp.delack_count", "segments", "__tcp_ack_snd_check"),
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
    ("connections.mptcp.data_frags", "segments", "__subflow_push_pending"),
    ("connections.mptcp.window_rounding", "exact", "__tcp_select_window"),
    ("connections.mptcp.drs_rtt", "largest", "smallest RTT of the subflows"),
    ("connections.mptcp.writer", "sleep", "polls for space"),
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
                                   "connections.mptcp.tcp.quickack": True, "connections.mptcp.tcp.delack_count": "bytes"}))


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


def test_buffer_series_follow_the_kernels_autotuning_rules() -> None:
    """The buffers as the socket diagnostics report them (`ss -m`'s `tb` and `rb`), the
    subflows' (`sndbuf_bytes`, `rcvbuf_bytes`) and the MPTCP socket's (`SO_SNDBUF`,
    `SO_RCVBUF`, the connection's series), two paths, 3 s, auto-tuned buffers (`tcp_wmem` =
    4096 16384 4194304, `tcp_rmem` = 4096 131072 33554432):
    - `tcp_sndbuf_expand` sizes a subflow's buffer for 2 × max(10, cwnd) segments of `per_mss`
      = roundup_pow_of_two(MSS 1448 + 512) + 256 = 2304 B, never lowering it: every value is a
      multiple of 4608 B, at least 46 080 B, and no sample is below an earlier one;
    - `__mptcp_sync_sndbuf` keeps the MPTCP socket's buffer at `tcp_wmem[0]` + the sum of its
      subflows' (read at the end, when both are stable; samples are taken at different
      instants)."""
    res = run_linux(buffer_pair())
    ts = res.timeseries
    sub = ts[(ts["entity_kind"] == "subflow") & (ts["metric"] == "sndbuf_bytes")]
    last = {}
    for entity, g in sub.groupby("entity", observed=True):
        v = g.sort_values("time_s")["value"]
        print(f"{entity}: {int(v.iloc[0])} .. {int(v.iloc[-1])} B over {len(v)} samples")
        assert len(v) >= 20
        assert ((v % 4608) == 0).all() and (v >= 46_080).all(), v.unique()
        assert v.is_monotonic_increasing
        last[entity] = int(v.iloc[-1])
    assert set(last) == {"mptcp/a", "mptcp/b"}
    conn = ts[(ts["entity_kind"] == "connection") & (ts["metric"] == "sndbuf_bytes")].sort_values("time_s")["value"]
    print(f"connection: {int(conn.iloc[-1])} B; subflows {last}")
    assert int(conn.iloc[-1]) == 4096 + sum(last.values())
    queued = ts[(ts["entity_kind"] == "subflow") & (ts["metric"] == "wmem_queued_bytes")]
    assert len(queued) >= 40 and (queued["value"] >= 0).all()
    # The receiving end's buffers (`ss -m`'s `rb`, `SO_RCVBUF`): every socket is created with
    # `tcp_rmem[1]` = 131 072 B and auto-tuning only grows it (`tcp_rcvbuf_grow`,
    # `mptcp_rcv_space_adjust`), on the MPTCP socket and on each subflow.
    for kind, metric in (("connection", "rcvbuf_bytes"), ("subflow", "rcvbuf_bytes")):
        rb = ts[(ts["entity_kind"] == kind) & (ts["metric"] == metric)]
        assert len(rb) >= 20, (kind, metric)
        for entity, g in rb.groupby("entity", observed=True):
            v = g.sort_values("time_s")["value"]
            print(f"{kind} {entity} {metric}: {int(v.iloc[0])} .. {int(v.iloc[-1])} B")
            assert v.iloc[0] >= 131_072 and v.is_monotonic_increasing, (entity, v.unique())
    # `rcv_ssthresh` and the window offered (`TCP_INFO`): positive, and no more than a header
    # can carry at RFC 7323's largest window scale, 65535 << 14.
    for metric in ("rcv_ssthresh_bytes", "rcv_wnd_bytes"):
        v = ts[(ts["entity_kind"] == "subflow") & (ts["metric"] == metric)]["value"]
        assert len(v) >= 20 and (v > 0).all() and (v <= 65535 << 14).all(), metric
