"""Issue 34, where outputs go when names and paths are adversarial: a connection's name cannot
take a capture outside the folder the caller chose; symbolic links and ``.`` as ``--out`` or
``--pcap`` are followed or refused before the run, never found out after it; a varied key
never hides a run's own column; a refused sweep prints nothing on stdout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

import mptcplab
from mptcplab.sweep import repeat_seed
from conftest import TWO_PATH
from conftest import mptcplab as cli

SHORT = ("--set", "duration=300ms")


def _one_line_error(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def _everything(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_connection_name_cannot_take_captures_out_of_their_folder(tmp_path: Path) -> None:
    # The names of the kind: an absolute path, a climb out, a hidden file. Each file
    # is one name inside the folder (`/` and a leading `.` percent-encoded, as RFC 3986 does).
    for name, stem in [("/tmp/ABS", "%2Ftmp%2FABS"), ("../../escaped", "%2E.%2F..%2Fescaped"), (".hidden", "%2Ehidden")]:
        root = tmp_path / stem
        root.mkdir()
        sc = root / "s.toml"
        sc.write_text(TWO_PATH.read_text().replace('name = "mptcp"', f'name = "{name}"', 1))
        r = cli("run", str(sc), *SHORT, "--pcap", str(root / "a" / "caps"))
        assert r.returncode == 0, r.stderr
        assert sorted(p.name for p in (root / "a" / "caps").iterdir()) == [f"{stem}-client.pcap", f"{stem}-server.pcap"]
        assert _everything(root) == ["a", "a/caps", f"a/caps/{stem}-client.pcap", f"a/caps/{stem}-server.pcap", "s.toml"]
    assert not Path("/tmp/ABS-client.pcap").exists()


def test_captures_inside_a_symlinked_out_are_kept(tmp_path: Path) -> None:
    real, link = tmp_path / "real", tmp_path / "lnk"
    assert cli("run", str(TWO_PATH), *SHORT, "--out", str(real)).returncode == 0
    link.symlink_to("real")
    r = cli("run", str(TWO_PATH), *SHORT, "--out", str(link), "--pcap", str(real / "pcap"))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and sorted(p.name for p in (real / "pcap").iterdir()) == ["mptcp-client.pcap", "mptcp-server.pcap"]
    json.loads((real / "run.json").read_text())
    r = cli("run", str(TWO_PATH), *SHORT, "--out", str(real), "--pcap", str(link / "pcap2"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (real / "pcap2").iterdir()) == ["mptcp-client.pcap", "mptcp-server.pcap"]


def test_captures_cannot_take_the_place_of_a_run_file(tmp_path: Path) -> None:
    out = tmp_path / "D"
    assert cli("run", str(TWO_PATH), *SHORT, "--out", str(out)).returncode == 0
    before = (out / "summary.json").read_bytes()
    line = _one_line_error(cli("run", str(TWO_PATH), *SHORT, "--out", str(out), "--pcap", str(out / "summary.json")))
    assert "--pcap" in line and "summary.json" in line, line
    assert (out / "summary.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["D"]


def test_a_symlinked_pcap_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "lnk").symlink_to("real")
    r = cli("run", str(TWO_PATH), *SHORT, "--pcap", str(tmp_path / "lnk"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "lnk").is_symlink()
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["mptcp-client.pcap", "mptcp-server.pcap"]


def test_the_current_directory_as_output_is_refused_before_the_run(tmp_path: Path) -> None:
    for option in ("--out", "--pcap"):
        line = _one_line_error(cli("run", str(TWO_PATH), *SHORT, option, ".", cwd=tmp_path))
        assert option in line and "current directory" in line, line
    line = _one_line_error(cli("sweep", str(TWO_PATH), *SHORT, "--vary", "seed=1", "--out", ".", cwd=tmp_path))
    assert "current directory" in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_varied_seed_and_the_runs_seed_are_both_in_the_table(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    r = cli("sweep", str(TWO_PATH), *SHORT, "--vary", "seed=1,2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out / "results.csv").sort_values("grid.seed")
    assert list(df["grid.seed"]) == [1, 2]
    # Each run's seed is derived from its point's seed and the repeat (sweep.repeat_seed).
    assert list(df["seed"]) == [repeat_seed(1, 0), repeat_seed(2, 0)]


def test_a_refused_sweep_prints_nothing_on_stdout(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    assert cli("sweep", str(TWO_PATH), *SHORT, "--vary", "seed=1", "--out", str(out)).returncode == 0
    r = cli("sweep", str(TWO_PATH), *SHORT, "--vary", "seed=7,8,9", "--out", str(out))
    _one_line_error(r)
    assert r.stdout == ""


def test_the_api_takes_numpy_integers_as_snap_lengths(tmp_path: Path) -> None:
    res = mptcplab.run(TWO_PATH, overrides=["duration=300ms"], pcap_dir=tmp_path / "c", snaplen=np.int32(100))
    assert res.summary["data_packets"] > 0
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["mptcp-client.pcap", "mptcp-server.pcap"]


def test_capture_options_of_the_simulator_alone_are_refused_for_the_kernel(tmp_path: Path) -> None:
    for extra in (("--pcap-per", "link"), ("--snaplen", "100")):
        line = _one_line_error(cli("run", str(TWO_PATH), "--backend", "linux", "--pcap", str(tmp_path / "c"), *extra))
        assert extra[0] in line, line
    assert list(tmp_path.iterdir()) == []


def test_a_kernel_run_refuses_a_capture_folder_in_use_before_it_starts(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        import pytest

        pytest.skip("the Linux backend needs root")
    from mptcplab.errors import ConfigError
    from mptcplab.kernel.backend import run_linux

    caps = tmp_path / "caps"
    caps.mkdir()
    (caps / "keep.txt").write_text("the user's data")
    sc = {"name": "k", "duration": "60s", "paths": [{"name": "p", "rate": "10Mbit", "delay": "10ms"}],
          "connections": [{"name": "tcp", "kind": "tcp", "stack": "linux", "paths": ["p"], "cc": "cubic",
                           "app": {"kind": "bulk"}}]}
    import time

    t0 = time.monotonic()
    try:
        run_linux(sc, pcap_dir=caps)
    except ConfigError as e:
        assert e.path == "pcap_dir" and "not an empty directory" in e.message, e
    else:
        raise AssertionError("a capture folder holding a file was accepted")
    # Refused before the 60 s of real time the scenario would take.
    assert time.monotonic() - t0 < 30
    assert [p.name for p in caps.iterdir()] == ["keep.txt"]
