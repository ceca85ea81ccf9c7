"""Regression tests for the engine side of issue 34: a scenario cannot write files (captures
are the caller's option), trace timestamps are bounded like every duration, a full disk is
a one-line error with nothing left behind, and Ctrl-C stops a run at once. Each replays the
issue's input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import mptcplab
from conftest import CLI
from conftest import mptcplab as cli
from test_errors import assert_user_error

SCENARIO = """
name = "bulk"
duration = "DURATION"
[[paths]]
name = "wifi"
rate = "RATE"
delay = "10ms"
[[connections]]
name = "mptcp"
kind = "mptcp"
paths = ["wifi"]
app = { kind = "bulk" }
"""

REFUSAL = "captures are not a scenario setting"


def scenario(tmp_path: Path, duration: str = "2s", rate: str = "8Mbit", extra: str = "") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.replace("DURATION", duration).replace("RATE", rate) + extra)
    return p


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


# ---------------------------------------------------------------------------------------
# Item 1: output locations come only from the command line or the API call.
# ---------------------------------------------------------------------------------------


def test_a_scenario_file_cannot_write_captures_anywhere(tmp_path):
    # The input: `[output.pcap] dir = ...` naming a folder that holds a file of the
    # same name as a capture. `check` used to pass it and `run` overwrote the file.
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "mptcp-client.pcap").write_text("the user's data")
    far = tmp_path / "not" / "yet"
    for target in (victim, far):
        f = scenario(tmp_path, extra=f'\n[output.pcap]\ndir = "{target}"\n')
        for command in ("check", "run"):
            line = assert_user_error(cli(command, str(f)), f"error: {f}: output.pcap: {REFUSAL}")
            assert "--pcap DIR" in line and "pcap_dir=DIR" in line
    assert (victim / "mptcp-client.pcap").read_text() == "the user's data"
    assert leftovers(victim) == ["mptcp-client.pcap"]
    assert not (tmp_path / "not").exists()


def test_no_other_route_lets_a_scenario_ask_for_captures(tmp_path):
    f = scenario(tmp_path)
    # --set on run and on sweep (every run of a sweep wrote the same files, the last won).
    assert_user_error(cli("run", str(f), "--set", f"output.pcap.dir={tmp_path / 'x'}"), "output.pcap: ", REFUSAL)
    r = cli("sweep", str(f), "--set", f"output.pcap.dir={tmp_path / 'x'}", "--vary", "seed=1,2", "--out", str(tmp_path / "sw"))
    assert_user_error(r, "output.pcap: ", REFUSAL)
    # A dict through the API, and an override through the API.
    data = json.loads(mptcplab.load_scenario(f).to_json())
    with pytest.raises(mptcplab.ConfigError) as e:
        mptcplab.run({**data, "output": {"pcap": {"dir": str(tmp_path / "x")}}})
    assert (e.value.path, e.value.message.split(" (")[0]) == ("output.pcap", REFUSAL)
    with pytest.raises(mptcplab.ConfigError) as e:
        mptcplab.run(f, overrides={"output.pcap.dir": str(tmp_path / "x")})
    assert e.value.path == "output.pcap"
    assert leftovers(tmp_path) == ["s.toml"]


def test_the_api_writes_captures_with_the_checks_of_pcap(tmp_path):
    f = scenario(tmp_path)
    caps = tmp_path / "caps"
    plain = mptcplab.run(f)
    captured = mptcplab.run(f, pcap_dir=caps)
    # Capturing observes the run and changes nothing in it.
    assert captured.summary == plain.summary
    assert leftovers(caps) == ["mptcp-client.pcap", "mptcp-server.pcap"]
    assert leftovers(tmp_path) == ["caps", "s.toml"], "no staging directory left beside it"
    before = {p.name: p.read_bytes() for p in caps.iterdir()}
    # A directory that is not new or empty is refused before the run and kept as it was.
    with pytest.raises(mptcplab.ConfigError) as e:
        mptcplab.run(f, pcap_dir=caps)
    assert (e.value.path, e.value.file) == ("pcap_dir", str(caps))
    assert "refusing to overwrite" in e.value.message
    assert {p.name: p.read_bytes() for p in caps.iterdir()} == before
    (tmp_path / "afile").write_text("x")
    for bad, key in (
        ({"pcap_dir": tmp_path / "afile"}, "pcap_dir"),
        ({"pcap_dir": tmp_path / "afile" / "caps"}, "pcap_dir"),
        ({"pcap_dir": tmp_path / "n1", "pcap_per": "disk"}, "pcap_per"),
        ({"pcap_dir": tmp_path / "n2", "snaplen": 10}, "snaplen"),
    ):
        with pytest.raises(mptcplab.ConfigError) as e:
            mptcplab.run(f, **bad)
        assert e.value.path == key, (bad, e.value)
    # Per link, with a snap length: headers only, every record cut at 96 bytes.
    links = tmp_path / "deep" / "links"
    mptcplab.run(f, pcap_dir=links, pcap_per="link", snaplen=96)
    assert leftovers(links) == ["wifi.down.pcap", "wifi.up.pcap"]
    assert leftovers(tmp_path) == ["afile", "caps", "deep", "s.toml"]


# ---------------------------------------------------------------------------------------
# Item 4: trace timestamps are bounded by 2^53 ns like every duration.
# ---------------------------------------------------------------------------------------


def test_a_mahimahi_timestamp_that_wrapped_the_clock_is_refused(tmp_path):
    # The trace: 18446744073710 ms x 10^6 wrapped 64 bits to 1.45 ms, so the link
    # reported 0 Mbit/s and carried 1.58 Mbit/s. 2^53 ns is 9007199254 whole ms.
    trace = tmp_path / "wrap.trace"
    trace.write_text("0\n18446744073710\n")
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO.replace("DURATION", "2s").replace('rate = "RATE"', f'trace = "{trace}"'))
    for command in ("check", "run"):
        assert_user_error(cli(command, str(f)), f"{f}: paths[0].trace: ", "line 2", "18446744073710 ms", "2^53 ns")
    trace.write_text("0\n9007199254\n")
    assert cli("check", str(f)).returncode == 0


# ---------------------------------------------------------------------------------------
# Item 9: a full disk is one line, exit 2, and no partial capture.
# ---------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs: a capture's 64 KiB write buffer fills it at its first write-out."""
    d = tmp_path / "small"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"mounting a small tmpfs is not permitted here: {r.stderr.strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)


def test_a_full_disk_is_one_line_and_leaves_no_partial_capture(tmp_path, small_disk):
    f = scenario(tmp_path)
    r = cli("run", str(f), "--pcap", str(small_disk / "caps"))
    line = assert_user_error(r)
    assert re.fullmatch(rf"error: {re.escape(str(small_disk))}/caps/mptcp-(client|server)\.pcap: --pcap: "
                        "no space left on device", line), line
    assert leftovers(small_disk) == []
    with pytest.raises(mptcplab.ConfigError) as e:
        mptcplab.run(f, pcap_dir=small_disk / "api")
    assert (e.value.path, e.value.message) == ("pcap_dir", "no space left on device")
    assert e.value.file.startswith(str(small_disk / "api") + "/mptcp-")
    assert leftovers(small_disk) == []


# ---------------------------------------------------------------------------------------
# Item 16: Ctrl-C stops a run at once and leaves nothing half-written.
# ---------------------------------------------------------------------------------------

# The target is 0.5 s from SIGINT to exit. The engine looks at its cancellation flag
# every 4096 events (a few ms; with full-payload captures about 10 ms) and the calling
# thread at the signals every 25 ms; the rest is removing the captures and the interpreter's
# exit. On the project's 2-core machine shared by other jobs this process may wait for a
# core, so the bound allows four times the target; the measured median is about 0.05 s.
EXIT_BOUND_S = 2.0

# 100 000 s at 200 Mbit/s is hours of engine time: the run is always interrupted mid-way.
LONG = {"duration": "100000s", "rate": "200Mbit"}


def simulating(pid: int) -> bool:
    """Whether process ``pid`` is simulating: its run thread (named by the binding) exists."""
    try:
        return any((t / "comm").read_text().strip() == "mptcplab-run" for t in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False


def interrupt(proc: subprocess.Popen[str]) -> tuple[float, str, str]:
    """Waits until ``proc`` simulates, sends SIGINT; returns the seconds to its exit and its output."""
    deadline = time.monotonic() + 120
    while not simulating(proc.pid):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    time.sleep(0.3)  # well into the run, with its captures being written
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return time.monotonic() - t0, out, err


def test_ctrl_c_stops_a_run_at_once_and_leaves_nothing(tmp_path):
    f = scenario(tmp_path, **LONG)
    out, caps = tmp_path / "out", tmp_path / "caps"
    for extra in ([], ["--out", str(out), "--pcap", str(caps)], ["--out", str(out), "--pcap", str(out / "pcap")]):
        proc = subprocess.Popen([str(CLI), "run", str(f), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        took, _, err = interrupt(proc)
        assert (proc.returncode, err) == (130, "interrupted\n"), extra
        assert took < EXIT_BOUND_S, (extra, took)
        assert leftovers(tmp_path) == ["s.toml"], extra


def test_ctrl_c_interrupts_the_api_and_removes_its_captures(tmp_path):
    f = scenario(tmp_path, **LONG)
    code = f"""
import sys, time, mptcplab
try:
    mptcplab.run({str(f)!r}, pcap_dir={str(tmp_path / 'caps')!r})
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    took, out, err = interrupt(proc)
    assert (proc.returncode, out, err) == (0, "KeyboardInterrupt\n", "")
    assert took < EXIT_BOUND_S, took
    assert leftovers(tmp_path) == ["s.toml"]


def test_a_run_in_another_thread_completes_with_the_same_result(tmp_path):
    # Only the main thread runs signal handlers: a run in another thread waits in slices all
    # the same and returns its result; the same run gives the same summary either way.
    from concurrent.futures import ThreadPoolExecutor

    f = scenario(tmp_path, duration="20s")
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda s: mptcplab.run(f, seed=s).summary, (1, 1))
    assert a == b == mptcplab.run(f, seed=1).summary
    assert os.listdir(tmp_path) == ["s.toml"]
