"""Regression tests for the hardening issue's command-line items: each reproduces the input
that used to end in a traceback, a multi-line message, a vague one, or a run that should
never have started. The promise: one line `error: ...`, exit code 2, nothing left behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import mptcplab
from conftest import REPO
from conftest import mptcplab as cli
from test_errors import assert_user_error

# ---------------------------------------------------------------------------------------
# Item 3: outputs that cannot be written are refused before the simulation
# ---------------------------------------------------------------------------------------

# A run long enough that refusing after it would show in the elapsed time.
LONG = ("--set", "duration=600s")


def _unwritable(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """(output path, words of the message) for each way an output cannot be created."""
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    return {
        "below a regular file": (str(afile / "sub"), f"{afile} is not a directory"),
        "on a virtual file system": ("/proc/mptcplab-x", "cannot create /proc/mptcplab-x"),
        "an over-long name": (str(tmp_path / ("n" * 5000)), "File name too long"),
    }


@pytest.mark.parametrize("case", ["below a regular file", "on a virtual file system", "an over-long name"])
@pytest.mark.parametrize("option", ["--out", "--pcap"])
def test_run_refuses_an_output_it_cannot_create_before_running(case, option, two_path, tmp_path):
    target, words = _unwritable(tmp_path)[case]
    t0 = time.monotonic()
    r = cli("run", str(two_path), *LONG, option, target)
    assert_user_error(r, f"error: {option}: ", words)
    assert time.monotonic() - t0 < 30, "the simulation ran before the output was checked"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("case", ["below a regular file", "on a virtual file system", "an over-long name"])
def test_sweep_refuses_an_output_it_cannot_create_before_running(case, two_path, tmp_path):
    target, words = _unwritable(tmp_path)[case]
    r = cli("sweep", str(two_path), *LONG, "--vary", "seed=1,2", "--out", target)
    assert_user_error(r, "error: --out: ", words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize(
    "args",
    [["reproduce", "kato", "--quick"], ["validate", "--repeat", "1"], ["validate", "--markdown", "{t}/V.md"]],
)
def test_the_other_writing_commands_check_their_output_first(args, tmp_path):
    target, words = _unwritable(tmp_path)["below a regular file"]
    args = [a.replace("{t}", target) for a in args]
    option = "--markdown" if "--markdown" in args else "--out"
    if option == "--out":
        args += ["--out", target]
    t0 = time.monotonic()
    assert_user_error(cli(*args, cwd=REPO), f"error: {option}: ", "is not a directory")
    assert time.monotonic() - t0 < 30
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("case", ["below a regular file", "on a virtual file system", "an over-long name"])
def test_plot_refuses_an_output_it_cannot_create(case, two_path, tmp_path):
    run_dir = tmp_path / "run"
    r = cli("run", str(two_path), "--set", "duration=1s", "--set", "output.timeseries=100ms", "--out", str(run_dir))
    assert r.returncode == 0, r.stderr
    target, words = _unwritable(tmp_path)[case]
    assert_user_error(cli("plot", str(run_dir), "--out", target), "error: --out: ", words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "run"]
    assert not (run_dir / "plots").exists()


def test_an_output_check_leaves_nothing_behind(two_path, tmp_path):
    out = tmp_path / "a" / "b" / "run"
    r = cli("run", str(two_path), "--set", "paths.wifi.rate=fast", "--out", str(out))
    assert_user_error(r, "not a bit rate")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_parent_is_refused(two_path, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert_user_error(cli("run", str(two_path), *LONG, "--out", str(ro / "run")), "error: --out: ", "Permission denied")
    finally:
        ro.chmod(0o755)


def test_check_output_dir_probes_an_existing_directory_and_leaves_it_as_it_was(tmp_path):
    from mptcplab.runner import check_output_dir

    out = tmp_path / "out"
    out.mkdir()
    check_output_dir(out, "--out", marker="run.json")
    check_output_dir(out, "--out", marker="sweep.json", sibling=False)
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and list(out.iterdir()) == []


def test_a_non_finite_range_end_names_the_vary_option(two_path, tmp_path):
    out = tmp_path / "sw"
    r = cli("sweep", str(two_path), "--vary", "paths.p.rate=range(1e400bit,2bit,2)", "--out", str(out))
    assert_user_error(r, "error: --vary paths.p.rate=range(1e400bit,2bit,2): ", "finite")
    assert not out.exists()


@pytest.mark.parametrize("values", ["inf,1s", "nan"])
def test_non_finite_listed_values_name_the_vary_option(values, two_path, tmp_path):
    assert_user_error(cli("sweep", str(two_path), "--vary", f"duration={values}", "--out", str(tmp_path / "sw")),
                      "error: --vary duration=", "not a finite number")


def test_a_5000_character_scenario_path_is_one_line(tmp_path):
    name = "s" * 5000
    line = assert_user_error(cli("check", name), "File name too long")
    assert len(line) < 300  # the name is shortened, its length given
    assert "(5000 characters)" in line
    assert_user_error(cli("run", str(tmp_path / name)), "File name too long")


# ---------------------------------------------------------------------------------------
# Item 4: sizes stated and checked before the work
# ---------------------------------------------------------------------------------------


def test_a_huge_grid_needs_yes_and_is_refused_before_it_is_expanded(two_path, tmp_path):
    out = tmp_path / "sw"
    t0 = time.monotonic()
    r = cli("sweep", str(two_path), "--vary", "duration=range(1s,2s,5000000)", "--out", str(out))
    assert_user_error(r, "error: --vary: ", "5000000 runs", "more than 10000", "--yes")
    assert time.monotonic() - t0 < 20
    assert not out.exists()


def test_repeats_count_towards_the_grid_size(two_path, tmp_path):
    r = cli("sweep", str(two_path), "--vary", "duration=range(1s,2s,5001)", "--repeat", "2", "--out", str(tmp_path / "sw"))
    assert_user_error(r, "5001 points x 2 repeats = 10002 runs")


def test_vary_size_is_arithmetic():
    from mptcplab.sweep import vary_size

    assert vary_size("duration=range(1s,2s,5000000)") == 5_000_000
    assert vary_size("connections.0.paths=[\"a\",\"b\"],[\"a\"]") == 2


def test_yes_lets_a_large_grid_through_the_size_check(two_path, tmp_path):
    # Past the size check, the grid is still validated (a bad value here stops it early).
    r = cli("sweep", str(two_path), "--yes", "--vary", "paths.wifi.rate=range(1Mbit,2Mbit,10001)",
            "--vary", "paths.wifi.delay=-1ms", "--out", str(tmp_path / "sw"))
    line = assert_user_error(r, "paths[0].delay")
    assert "--yes" not in line


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null"])
def test_check_refuses_a_device(special):
    assert_user_error(cli("check", special, timeout=30), f"error: {special}: is not a regular file")


def test_check_refuses_a_fifo_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "s.toml"
    os.mkfifo(fifo)
    assert_user_error(cli("check", str(fifo), timeout=30), "is not a regular file")


def test_a_scenario_over_the_size_cap_is_refused(tmp_path):
    from mptcplab.scenario import MAX_SCENARIO_BYTES

    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_SCENARIO_BYTES + 1)
    assert_user_error(cli("check", str(big)), f"error: {big}: is {MAX_SCENARIO_BYTES + 1} bytes", "at most 16 MiB")


# ---------------------------------------------------------------------------------------
# Item 6: the format, for every kind of error
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "start", "words"),
    [
        (["run", "SCEN", "--sed", "3"], "error: --sed: ", ["no such option", "--seed"]),
        (["run"], "error: SCENARIO: ", ["missing argument"]),
        (["sweep", "SCEN", "--out", "x"], "error: --vary: ", ["missing option"]),
        (["run", "SCEN", "--pcap-per", "disk"], "error: --pcap-per: ", ["'disk' is not one of", "'host'"]),
        (["run", "SCEN", "--seed", "many"], "error: --seed: ", ["'many' is not a valid integer"]),
        (["run", "SCEN", "--seed", "-1"], "error: --seed: ", ["not in the range"]),
        (["run", "SCEN", "--out"], "error: --out: ", ["requires an argument"]),
        (["frobnicate"], "error: mptcplab: ", ["no such command 'frobnicate'"]),
        (["reproduce"], "error: reproduce: ", ["give reproduction names"]),
        (["presets", "nope"], "error: presets: ", ["no preset named `nope`", "home-wifi"]),
    ],
)
def test_usage_errors_are_one_line(args, start, words, two_path, tmp_path):
    args = [str(two_path) if a == "SCEN" else a for a in args]
    r = cli(*args, cwd=tmp_path)
    line = assert_user_error(r, *words)
    assert line.startswith(start), line
    assert "Usage:" not in r.stderr and r.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_help_still_works():
    for args in (["--help"], ["run", "--help"], []):
        r = cli(*args)
        assert r.returncode == 0 and r.stdout.startswith("Usage: mptcplab"), (args, r.stderr)


def test_a_newline_in_a_value_stays_on_one_line(two_path, tmp_path):
    assert_user_error(cli("check", str(two_path), "--set", "paths.wifi.rate=8Mbit\x1b[31m"), "paths[0].rate", "\\x1b[31m")
    assert_user_error(cli("check", str(two_path), "--set", "connections.0.cc=li\na"), "connections[0].cc", "li\\na")
    line = assert_user_error(cli("check", str(two_path), "--set", "dur\nation=1s"), "dur\\nation")
    line = assert_user_error(cli("sweep", str(two_path), "--vary", "paths.wifi.rate=range(1,\n2)", "--out", str(tmp_path / "x")), "\\n")
    assert list(tmp_path.iterdir()) == []


def test_one_line_escapes_only_what_is_not_printable():
    from mptcplab.errors import one_line

    assert one_line("10 Mbit/s … `rate`") == "10 Mbit/s … `rate`"
    assert one_line("a\nb\tc\x00\u2028") == "a\\nb\\tc\\x00\\u2028"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+nan"])
def test_a_non_finite_set_says_what_is_expected(value, two_path):
    assert_user_error(cli("check", str(two_path), "--set", f"duration={value}"),
                      "error: ", "--set duration: ", "not a finite number", "a duration such as `10s`")


def test_a_non_finite_value_in_a_file_names_its_key(scenario_file):
    f = scenario_file('delay = "10ms"', "delay = nan")
    assert_user_error(cli("check", str(f)), f"error: {f}: paths[0].delay: ", "not a finite number")


def test_an_empty_key_says_the_key_path_is_malformed(two_path, scenario_file):
    assert_user_error(cli("check", str(two_path), "--set", "connections.0.=x"),
                      "--set connections.0.=x: ", "key path is empty or has an empty segment")
    assert_user_error(cli("check", str(two_path), "--set", "connections.0. .cc=x"), "empty segment")
    f = scenario_file('kind = "mptcp"', 'kind = "mptcp"\n"" = "x"')
    assert_user_error(cli("check", str(f)), f"error: {f}: connections[0]: ", "a key name is empty")
    with pytest.raises(mptcplab.ConfigError) as e:
        mptcplab.load_scenario(two_path, {"connections.0.": "x"})
    assert "empty segment" in e.value.message


# ---------------------------------------------------------------------------------------
# Item 8: reproduction data found from an installed package
# ---------------------------------------------------------------------------------------


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """As if the package were installed in a virtual environment: the source tree's
    neighbourhood holds no data, and the working directory is elsewhere."""
    from mptcplab.experiments import _data

    venv_lib = tmp_path / "venv" / "lib"
    venv_lib.mkdir(parents=True)
    monkeypatch.setattr(_data, "_source_root", lambda: venv_lib)
    monkeypatch.delenv(_data.ENV, raising=False)
    work = tmp_path / "work" / "repo"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path


def _shared(at: Path) -> Path:
    (at / "traces" / "cellular").mkdir(parents=True)
    return at


def test_installed_without_data_is_one_line_naming_where_it_looked(installed, capsys):
    from mptcplab.cli import main

    with pytest.raises(SystemExit) as e:
        main(["reproduce", "chen-towsley-fig3", "--quick", "--out", str(installed / "report")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: reproduce: cellular traces not found"), err
    assert str(installed / "work" / "shared" / "traces" / "cellular") in err[0]
    assert str(installed / "venv" / "shared" / "traces" / "cellular") in err[0]
    assert "--data" in err[0] and "MPTCPLAB_SHARED" in err[0]
    assert not (installed / "report").exists()


def test_the_data_lookup_order(installed, monkeypatch):
    from mptcplab.experiments import _chen_towsley_links as links
    from mptcplab.experiments._data import shared_dir

    cwd_shared = _shared(installed / "work" / "shared")  # ../shared relative to the working directory
    assert shared_dir() == cwd_shared
    env = _shared(installed / "env-data")
    monkeypatch.setenv("MPTCPLAB_SHARED", str(env))
    assert shared_dir() == env
    opt = _shared(installed / "opt-data")
    assert shared_dir(opt) == opt
    assert links.cellular("AT&T", opt)["down"]["trace"].startswith(str(opt / "traces" / "cellular"))
    # A directory named by the option or the variable must hold the traces: no silent fallback.
    with pytest.raises(mptcplab.ConfigError) as e:
        shared_dir(installed / "typo")
    assert e.value.path == "--data" and str(installed / "typo") in e.value.message
    monkeypatch.setenv("MPTCPLAB_SHARED", str(installed / "typo"))
    with pytest.raises(mptcplab.ConfigError) as e:
        shared_dir()
    assert e.value.path == "MPTCPLAB_SHARED"


def test_the_source_tree_is_the_last_resort(monkeypatch, tmp_path):
    from mptcplab.experiments._data import shared_dir

    monkeypatch.delenv("MPTCPLAB_SHARED", raising=False)
    monkeypatch.chdir(tmp_path)
    if not (REPO.parent / "shared" / "traces" / "cellular").is_dir():
        pytest.skip("no ../shared beside this checkout")
    assert shared_dir() == (REPO.parent / "shared").resolve()


def test_reproduce_data_option_on_the_command_line(tmp_path):
    r = cli("reproduce", "chen-towsley-fig3", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert_user_error(r, "error: --data: ", "no traces/cellular/")
    assert not (tmp_path / "rep").exists()
    r = cli("reproduce", "chen-towsley-fig3", cwd=tmp_path, env={**os.environ, "MPTCPLAB_SHARED": str(tmp_path / "nope")})
    assert_user_error(r, "error: MPTCPLAB_SHARED: ")


def test_the_kernel_agreement_grid_is_found_from_the_working_directory(installed):
    from mptcplab.experiments._data import repo_root

    with pytest.raises(mptcplab.ConfigError) as e:
        repo_root("scenarios/validation")
    assert "scenarios/validation not found" in e.value.message
    (installed / "work" / "repo" / "scenarios" / "validation").mkdir(parents=True)
    assert repo_root("scenarios/validation") == installed / "work" / "repo"
