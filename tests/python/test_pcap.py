"""Simulator packet captures read by tshark (Debian's package, installed by the test setup):
MPTCP connection and subflows recognised, no malformed packets or mapping errors, byte counts
and retransmissions equal to the simulator's own counters."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI

SCENARIO = """
duration = "20s"
seed = 4
[[paths]]
name = "wifi"
rate = "8Mbit"
delay = "10ms"
queue = "40 packets"
loss = "{loss}"
[[paths]]
name = "cell"
rate = "4Mbit"
delay = "40ms"
queue = "60 packets"
[[connections]]
name = "mp"
kind = "mptcp"
paths = ["wifi", "cell"]
cc = "lia"
app = {{ kind = "download", size = "3MB" }}
"""

PREFS = ["-o", "mptcp.analyze_mappings:TRUE", "-o", "mptcp.intersubflows_retransmission:TRUE",
         "-o", "tcp.analyze_sequence_numbers:TRUE", "-o", "tcp.relative_sequence_numbers:TRUE"]


def tshark(*args: str) -> str:
    exe = shutil.which("tshark")
    if exe is None:
        pytest.fail("tshark is not installed: the test setup (MPTCPLAB_SETUP_TEST_TOOLS=1 scripts/setup.sh) installs it")
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def capture(tmp_path: Path, loss: str, per: str = "host") -> tuple[dict, Path]:
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO.format(loss=loss))
    pcap = tmp_path / "pcap"
    r = subprocess.run([str(CLI), "run", str(f), "--json", "--pcap", str(pcap), "--pcap-per", per],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), pcap


def fields(pcap: Path, filt: str, *names: str) -> list[list[str]]:
    out = tshark("-r", str(pcap), *PREFS, "-Y", filt, "-T", "fields", *sum((["-e", n] for n in names), []))
    return [line.split("\t") for line in out.splitlines() if line.strip()]


def test_tshark_sees_one_mptcp_connection_with_both_subflows_and_no_errors(tmp_path: Path) -> None:
    summary, pcap = capture(tmp_path, "0%")
    client = pcap / "mp-client.pcap"
    rows = fields(client, "tcp", "mptcp.stream", "tcp.stream")
    streams = {(m, t) for m, t in rows if m}
    assert {t for _, t in streams} == {"0", "1"}, streams  # two subflows ...
    assert {m for m, _ in streams} == {"0"}  # ... of one MPTCP connection
    bad = tshark("-r", str(client), *PREFS, "-Y", "_ws.malformed || _ws.expert.severity >= error")
    assert bad.strip() == "", bad
    assert summary["connections"][0]["completed"]


def test_tshark_byte_counts_equal_the_simulators(tmp_path: Path) -> None:
    summary, pcap = capture(tmp_path, "0%")
    server = pcap / "mp-server.pcap"
    # Payload bytes each subflow sent (server side, retransmissions included).
    rows = fields(server, "tcp.srcport == 5201 && tcp.len > 0", "tcp.stream", "tcp.len")
    sent: dict[str, int] = {}
    for stream, length in rows:
        sent[stream] = sent.get(stream, 0) + int(length)
    ours = {s["path"]: s["bytes_sent"] for s in summary["subflows"]}
    assert sorted(sent.values()) == sorted(ours.values()), (sent, ours)
    # Data-level bytes: the highest DATA_ACK the client sent is the connection's delivered bytes.
    acks = fields(pcap / "mp-client.pcap", "mptcp.ack", "mptcp.ack")
    # tshark shows data ACKs relative to the initial data sequence number (data starts at 1).
    assert max(int(a[0]) for a in acks) - 1 == summary["connections"][0]["delivered_bytes"]


def test_tshark_retransmissions_match_the_simulators_counters(tmp_path: Path) -> None:
    summary, pcap = capture(tmp_path, "2%")
    server = pcap / "mp-server.pcap"
    ours = sum(s["retransmitted_segments"] for s in summary["subflows"])
    assert ours > 0
    # Every segment the simulator retransmitted is flagged by tshark: as a retransmission, or
    # as "out-of-order" when it follows the original by less than tshark's reordering
    # threshold (a go-back-N burst after an RTO). Nothing else is flagged.
    flagged = fields(server, "tcp.srcport == 5201 && (tcp.analysis.retransmission || tcp.analysis.out_of_order)",
                     "tcp.stream")
    rtx = fields(server, "tcp.srcport == 5201 && tcp.analysis.retransmission", "tcp.stream")
    assert len(flagged) == ours, (len(flagged), ours)
    assert 0 < len(rtx) <= ours
    # Per subflow too.
    for stream, path in ((0, "wifi"), (1, "cell")):
        ours_sf = next(s["retransmitted_segments"] for s in summary["subflows"] if s["path"] == path)
        assert sum(1 for (st,) in flagged if int(st) == stream) == ours_sf, path


def test_captures_are_written_per_interface_or_per_link(tmp_path: Path) -> None:
    _, pcap = capture(tmp_path, "0%", "link")
    assert sorted(p.name for p in pcap.iterdir()) == ["cell.down.pcap", "cell.up.pcap", "wifi.down.pcap", "wifi.up.pcap"]
    (tmp_path / "i").mkdir()
    _, pcap = capture(tmp_path / "i", "0%", "interface")
    assert len(list(pcap.iterdir())) == 4


M1_SCENARIO = """
duration = "10s"
[[paths]]
name = "wifi"
rate = "8Mbit"
delay = "10ms"
queue = "53 packets"
[[paths]]
name = "3g"
rate = "2Mbit"
delay = "75ms"
queue = "333 packets"
[[connections]]
name = "mp"
kind = "mptcp"
paths = ["wifi", "3g"]
cc = "lia"
rcvbuf = "100KB"
app = { kind = "bulk" }
[connections.sched_params.minrtt]
opportunistic_retransmission = true
"""


def test_opportunistic_retransmissions_appear_as_reinjections(tmp_path: Path) -> None:
    """NSDI'12 WiFi + 3G with a 100 KB receive buffer: minRTT's M1 copies the oldest
    unacknowledged segment from 3G to WiFi. In the sender's capture, each copy is a WiFi data
    packet whose data sequence number was first sent on 3G; their number equals the
    simulator's counter, and tshark's inter-subflow analysis flags them as reinjections."""
    f = tmp_path / "m1.toml"
    f.write_text(M1_SCENARIO)
    pcap = tmp_path / "pcap"
    r = subprocess.run([str(CLI), "run", str(f), "--json", "--pcap", str(pcap)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    conn = json.loads(r.stdout)["connections"][0]
    assert conn["opportunistic_retransmissions"] > 50 and conn["reinjected_bytes"] == 0
    rows = fields(pcap / "mp-server.pcap", "tcp.srcport == 5201 && tcp.len > 0",
                  "tcp.stream", "mptcp.dss.dsn", "mptcp.reinjection_of")
    seen: dict[int, set[int]] = {0: set(), 1: set()}
    copies = flagged = 0
    for stream, dsn, reinjection_of in rows:
        st, d = int(stream), int(dsn)
        if st == 0 and d in seen[1] and d not in seen[0]:
            copies += 1
            flagged += bool(reinjection_of)
        seen[st].add(d)
    assert copies == conn["opportunistic_retransmissions"], (copies, conn["opportunistic_retransmissions"])
    # tshark's heuristics skip a few (copies of partly mapped segments): at least 95 % flagged.
    assert flagged >= 0.95 * copies, (flagged, copies)


def test_captures_may_go_inside_the_output_directory(tmp_path: Path) -> None:
    # `--out D --pcap D/pcap`: D is replaced whole by the results, so the captures are staged
    # beside it and moved in afterwards; a second run replaces both. `--pcap D` itself is
    # refused before the run, with nothing written.
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO.format(loss="0%"))
    out = tmp_path / "D"
    for _ in range(2):
        r = subprocess.run([str(CLI), "run", str(f), "--out", str(out), "--pcap", str(out / "pcap")],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert (out / "run.json").is_file()
        assert sorted(p.name for p in (out / "pcap").iterdir()) == ["mp-client.pcap", "mp-server.pcap"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["D", "s.toml"]
    same = tmp_path / "E"
    r = subprocess.run([str(CLI), "run", str(f), "--out", str(same), "--pcap", str(same)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert r.stderr.strip() == f"error: --pcap: {same} is the --out directory; give the captures a directory of their own, e.g. {same / 'pcap'}"
    assert not same.exists()
