"""The command line, through a subprocess as a user runs it."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import CLI, mptcplab

NSDI = "scenarios/nsdi12-wifi-3g.toml"


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    from conftest import REPO

    monkeypatch.chdir(REPO)


def test_help_documents_every_command():
    r = mptcplab("--help")
    assert r.returncode == 0
    for cmd in ("run", "sweep", "plot", "check", "scenarios"):
        assert f"  {cmd} " in r.stdout
    for cmd, words in {
        "run": ["--set", "--seed", "--out", "--json", "paths.wifi.rate=10Mbit", "timeseries.parquet"],
        "sweep": ["--vary", "range(start,stop,n[,log])", "--repeat", "--jobs", "--out", "results.parquet", "resumes"],
        "plot": ["--x", "--y", "--hue", "PNG", "SVG", "95%"],
        "check": ["resolved"],
    }.items():
        out = mptcplab(cmd, "--help").stdout
        for w in words:
            assert w in out, f"`mptcplab {cmd} --help` does not mention {w}"


def test_run_json_reports_goodput_per_subflow_and_is_deterministic():
    args = ("run", NSDI, "--set", "duration=3s", "--set", "output.warmup=1s", "--json")
    a = mptcplab(*args, "--seed", "5")
    b = mptcplab(*args, "--seed", "5")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    s = json.loads(a.stdout)
    assert s["seed"] == 5
    goodput = {sf["path"]: sf["goodput_bps"] for sf in s["subflows"]}
    assert set(goodput) == {"wifi", "3g"}
    # Each subflow's goodput is positive and below its link's rate (8 and 2 Mbit/s).
    assert 0 < goodput["wifi"] < 8e6
    assert 0 < goodput["3g"] < 2e6


def test_run_prints_tables_and_writes_the_run_directory(tmp_path):
    out = tmp_path / "run"
    r = mptcplab(
        "run", NSDI, "--set", "duration=2s", "--set", "output.warmup=0s", "--set", "paths.wifi.rate=10Mbit", "--out", str(out)
    )
    assert r.returncode == 0, r.stderr
    for word in ("connections", "subflows", "links", "wifi", "3g", "goodput (Mbit/s)"):
        assert word in r.stdout
    assert {p.name for p in out.iterdir()} == {
        "run.json", "summary.json", "connections.csv", "subflows.csv", "links.csv", "timeseries.parquet", "scenario.json",
    }
    links = pd.read_csv(out / "links.csv").set_index("name")
    assert links.loc["wifi.down", "rate_bps"] == 10_000_000
    assert json.loads((out / "scenario.json").read_text())["paths"][0]["rate"] == "10Mbit"


def test_bundled_scenarios_run_by_name():
    r = mptcplab("run", "kato-sndbuf", "--set", "duration=500ms", "--json")
    assert r.returncode == 0, r.stderr
    assert [link["rate_bps"] for link in json.loads(r.stdout)["links"]] == [100_000_000] * 4


def test_check_prints_the_resolved_scenario():
    r = mptcplab("check", NSDI, "--set", "connections.mptcp.tcp.iw=4")
    assert r.returncode == 0, r.stderr
    resolved = json.loads(r.stdout)
    assert resolved["connections"][0]["tcp"]["iw"] == 4
    assert resolved["connections"][0]["tcp"]["mss"] == 1448


def test_scenarios_lists_the_bundled_files_with_descriptions():
    r = mptcplab("scenarios")
    assert r.returncode == 0
    lines = r.stdout.strip().splitlines()
    names = [line.split()[0] for line in lines]
    assert names == sorted(p.stem for p in Path("scenarios").glob("*.toml"))
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


SWEEP = (
    "sweep", "tests/python/data/two-path.toml", "--set", "duration=1s",
    "--vary", "paths.wifi.rate=range(2Mbit,8Mbit,3,log)", "--vary", "connections.mptcp.rcvbuf=64KB,256KB,1MB",
    "--repeat", "3", "--jobs", "2",
)


def test_a_3x3_sweep_with_3_repeats_gives_27_rows_and_reruns_nothing(tmp_path):
    out = tmp_path / "sw"
    r = mptcplab(*SWEEP, "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_parquet(out / "results.parquet")
    assert len(df) == 3 * 3 * 3
    assert len(pd.read_csv(out / "results.csv")) == 27
    assert sorted(df["paths.wifi.rate"].unique()) == ["2Mbit", "4Mbit", "8Mbit"]
    assert df.groupby(["paths.wifi.rate", "connections.mptcp.rcvbuf"]).size().tolist() == [3] * 9
    assert df["seed"].nunique() == 3
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    assert len(stamps) == 27

    again = mptcplab(*SWEEP, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "27 of 27 runs already finished" in again.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").iterdir()} == stamps
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), df)

    plots = mptcplab("plot", str(out), "--x", "paths.wifi.rate", "--y", "conn.mptcp.goodput_bps", "--hue", "connections.mptcp.rcvbuf")
    assert plots.returncode == 0, plots.stderr
    svg = out / "plots" / "conn.mptcp.goodput_bps_vs_paths.wifi.rate.svg"
    png = svg.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = svg.read_text()
    assert "(Mbit/s)" in text  # both axes are rates: the parameter and the goodput
    assert "95% CI" in text


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_sweep_keeps_finished_runs_and_completes_on_rerun(tmp_path, sig):
    out = tmp_path / "sw"
    args = [
        # Each run must take long enough to interrupt the sweep mid-way, on a busy machine too
        # (where this process may wait for a core): 600 s of a 500 Mbit/s path that the default
        # send buffer limits to about 60 Mbit/s is about 3 million packets, about half a second
        # of engine time per run on the project's 2-core machine, a second with its output.
        str(CLI), "sweep", "tests/python/data/two-path.toml", "--set", "duration=600s", "--set", "output.timeseries=1s",
        "--set", "paths.wifi.rate=500Mbit", "--set", "paths.wifi.loss=0", "--set", "paths.wifi.queue=2000 packets",
        "--vary", "seed=range(1,12,12)", "--jobs", "2", "--out", str(out),
    ]
    # The sweep answers SIGINT as in a terminal even when this runner was started with SIGINT
    # ignored (a background job of a shell, nohup), which its children would inherit.
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    runs = out / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (runs.exists() and any(runs.glob("*.json"))):
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    finished = len(list(runs.glob("*.json")))
    assert 1 <= finished < 12, "the sweep was not interrupted mid-way; make its runs longer"
    assert "Traceback" not in err
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert "run the same command again" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert not list(runs.glob(".*tmp*")) or sig == signal.SIGKILL

    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"resuming: {finished} of 12" in r.stdout
    assert len(pd.read_parquet(out / "results.parquet")) == 12


def test_plot_of_a_run_draws_per_subflow_series_with_units(tmp_path):
    out = tmp_path / "run"
    assert mptcplab("run", NSDI, "--set", "duration=3s", "--set", "output.warmup=0s", "--out", str(out)).returncode == 0
    r = mptcplab("plot", str(out))
    assert r.returncode == 0, r.stderr
    png, svg = out / "plots" / "timeseries.png", out / "plots" / "timeseries.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = svg.read_text()
    for label in ("cwnd (KB)", "srtt (ms)", "dsn_sent (MB)", "time (s)", "mptcp/wifi", "mptcp/3g"):
        assert label in text, label


def test_importing_the_package_loads_no_heavy_library():
    import sys

    code = "import sys, mptcplab; print(sorted(m for m in ('pandas', 'matplotlib', 'pyarrow', 'rich') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_presets_lists_and_prints_the_derivation() -> None:
    listed = mptcplab("presets")
    assert listed.returncode == 0, listed.stderr
    assert "att-lte" in listed.stdout and "home-wifi" in listed.stdout
    shown = mptcplab("presets", "home-wifi")
    assert shown.returncode == 0 and shown.stdout.startswith("#") and "0.9%" in shown.stdout
    bad = mptcplab("presets", "att-lt")
    assert bad.returncode != 0 and "did you mean `att-lte`" in bad.stderr


def test_a_set_pattern_changes_every_matching_connection() -> None:
    from mptcplab.scenario import load_scenario

    sc = load_scenario("olia-scenario-a", ["connections.type1-*.cc=olia"])
    ccs = {c["name"]: c["cc"] for c in sc.resolved["connections"]}
    assert all(cc == "olia" for n, cc in ccs.items() if n.startswith("type1-"))
    assert all(cc == "reno" for n, cc in ccs.items() if n.startswith("type2-"))
