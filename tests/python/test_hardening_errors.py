"""Regression tests for the hardening issue's "one-line error everywhere" items: each replays
the input that used to end in a traceback (or, for markup in names, in text silently shown
wrong) and checks the promise: one line `error: <file>: <key path>: <message>`, exit code 2,
nothing written; or the correct output where the input is legitimate."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

import mptcplab
from conftest import TWO_PATH
from conftest import mptcplab as cli
from mptcplab import units
from mptcplab.scenario import MAX_DEPTH
from test_errors import assert_user_error

SHORT = ("--set", "duration=300ms")


def _scenario(tmp_path: Path, old: str, new: str, name: str = "s.toml") -> Path:
    text = TWO_PATH.read_text()
    assert old in text, f"test bug: {old!r} not in the base scenario"
    p = tmp_path / name
    p.write_text(text.replace(old, new))
    return p


def _two_path_dict() -> dict:
    return tomllib.loads(TWO_PATH.read_text())


# ---------------------------------------------------------------------------------------
# Item 6: names holding console markup, control characters or mathtext
# ---------------------------------------------------------------------------------------

# (substitutions in the two-path scenario, text the printed tables must hold verbatim)
MARKUP = {
    "scenario name `[/bold]x`": ([('name = "two-path"', 'name = "[/bold]x"')], "[/bold]x: seed 3"),
    "connection `[/]`": ([('name = "mptcp"', 'name = "[/]"')], "  [/]  "),
    "path `[red]w[/red]`": ([('name = "wifi"', 'name = "[red]w[/red]"'), ('paths = ["wifi"', 'paths = ["[red]w[/red]"')],
                            "[red]w[/red].up"),
}


@pytest.mark.parametrize("case", sorted(MARKUP))
def test_names_with_console_markup_print_as_written(case, tmp_path):
    subs, shown = MARKUP[case]
    text = TWO_PATH.read_text()
    for old, new in subs:
        text = text.replace(old, new)
    f = tmp_path / "s.toml"
    f.write_text(text)
    r = cli("run", str(f), *SHORT)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert shown in r.stdout, r.stdout


def test_control_characters_in_a_name_are_shown_escaped_on_one_line(tmp_path):
    # An escape sequence and a newline in the scenario's name: printed as \x1b and \n, so the
    # terminal is not recoloured and the header stays one line.
    f = _scenario(tmp_path, 'name = "two-path"', 'name = "a\\u001b[31mred\\nx"')
    r = cli("run", str(f), *SHORT)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout
    assert r.stdout.splitlines()[0].startswith("a\\x1b[31mred\\nx: seed 3"), r.stdout


def test_plot_draws_mathtext_like_names_as_plain_text(tmp_path):
    # `$\frac{x$` is malformed mathtext: matplotlib used to raise while drawing the title.
    f = _scenario(tmp_path, 'name = "two-path"', 'name = "$\\\\frac{x$"')
    run_dir = tmp_path / "run"
    assert cli("run", str(f), *SHORT, "--out", str(run_dir)).returncode == 0
    r = cli("plot", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert (run_dir / "plots" / "timeseries.png").stat().st_size > 0
    sweep_dir = tmp_path / "sweep"
    r = cli("sweep", str(TWO_PATH), *SHORT, "--vary", "name=$\\frac{a$,b", "--vary", "paths.wifi.delay=1ms,2ms",
            "--out", str(sweep_dir))
    assert r.returncode == 0, r.stderr
    for x in ("name", "paths.wifi.delay"):  # the malformed value on the axis, then in the legend
        r = cli("plot", str(sweep_dir), "--x", x)
        assert r.returncode == 0, (x, r.stderr)


# ---------------------------------------------------------------------------------------
# Item 7: deep nesting
# ---------------------------------------------------------------------------------------


def _deep_key(n: int) -> str:
    return ".".join(["a"] * n)


@pytest.mark.parametrize("n", [300, 1000])
def test_set_with_a_deep_key_names_the_depth_and_the_limit(n):
    # 1000 segments used to overflow Python's stack; 300 reached the engine, whose JSON reader
    # stops at 128 levels, and came back as "malformed JSON" for a TOML file.
    line = assert_user_error(cli("check", str(TWO_PATH), "--set", f"{_deep_key(n)}=1"),
                             "--set a.a.a.a.a.a.a.a…", f"nested {n} levels deep; the limit is {MAX_DEPTH}")
    assert "JSON" not in line


def test_the_nesting_limit_is_exactly_64_levels():
    # 64 segments reach the schema (which refuses the unknown key `a`); 65 are refused as too deep.
    assert_user_error(cli("check", str(TWO_PATH), "--set", f"{_deep_key(64)}=1"), "a: unknown field `a`")
    assert_user_error(cli("check", str(TWO_PATH), "--set", f"{_deep_key(65)}=1"), "nested 65 levels deep")


def test_set_with_a_deep_value_is_refused():
    assert_user_error(cli("check", str(TWO_PATH), "--set", "x=" + "[" * 300 + "]" * 300),
                      "--set x[0][0][0][0][0][0][0]…: nested 300 levels deep")
    # Too deep for the value's own reader: refused before it recurses further.
    assert_user_error(cli("check", str(TWO_PATH), "--set", "x=" + "[" * 1000 + "]" * 1000),
                      "--set x: the value is nested so deeply that it cannot be read; the limit is 64 levels")


# (file name, text before the two-path scenario, words of the error after the file name). A
# level is a key-path segment: 300 brackets after `x` put the innermost list at `x` and 299
# indices (300 levels); `x` and 300 dotted (or inline-table) keys are 301.
DEEP_FILES = {
    "arrays.toml": ("x = " + "[" * 300 + "]" * 300, "x[0][0][0][0][0][0][0]…: nested 300 levels deep"),
    "dotted.toml": ("x." + _deep_key(300) + " = 1", "x.a.a.a.a.a.a.a…: nested 301 levels deep"),
    "inline.toml": ("x = " + "{a=" * 300 + "1" + "}" * 300, "x.a.a.a.a.a.a.a…: nested 301 levels deep"),
    "parser.toml": ("x = " + "[" * 5000 + "]" * 5000, "is nested so deeply that it cannot be read; the limit is 64"),
}


@pytest.mark.parametrize("name", sorted(DEEP_FILES))
def test_deeply_nested_toml_files_are_refused_naming_the_key(name, tmp_path):
    head, words = DEEP_FILES[name]
    f = tmp_path / name
    f.write_text(head + "\n" + TWO_PATH.read_text())
    assert_user_error(cli("check", str(f)), f"error: {f}: {words}")


# `x` holding 300 nested lists: the innermost sits at `x` and 299 indices, 300 levels.
@pytest.mark.parametrize("depth, words", [(300, "x[0][0][0][0][0][0][0]…: nested 300 levels deep"),
                                          (100_000, "is nested so deeply that it cannot be read")])
def test_deeply_nested_json_files_are_refused(depth, words, tmp_path):
    f = tmp_path / "deep.json"
    f.write_text(json.dumps(_two_path_dict())[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}")
    assert_user_error(cli("check", str(f)), f"error: {f}: {words}")


def test_vary_with_a_deep_key_or_value_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "sw"
    assert_user_error(cli("sweep", str(TWO_PATH), "--vary", f"{_deep_key(1000)}=1,2", "--out", str(out)),
                      "a.a.a.a.a.a.a.a…: nested 1000 levels deep")
    assert_user_error(cli("sweep", str(TWO_PATH), "--vary", "x=" + "[" * 300 + "]" * 300 + ",1", "--out", str(out)),
                      "--vary x[0][0][0][0][0][0][0]…: nested 300 levels deep")
    assert not out.exists()


def test_deep_and_self_containing_dicts_are_refused_by_the_api():
    doc = _two_path_dict()
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    # 1001 lists: the innermost sits at `x` and 1000 indices, 1001 levels.
    with pytest.raises(mptcplab.ConfigError, match=r"nested 1001 levels deep; the limit is 64") as e:
        mptcplab.load_scenario({**doc, "x": deep})
    assert e.value.path.startswith("x[0][0]")
    loop = dict(doc)
    loop["x"] = {"y": loop}
    with pytest.raises(mptcplab.ConfigError, match="contains itself") as e:
        mptcplab.run(loop)
    assert e.value.path == "x.y"
    with pytest.raises(mptcplab.ConfigError, match="nested 1001 levels deep") as e:
        mptcplab.run(doc, overrides={"x": deep})
    assert e.value.path.startswith("--set x[0]")


# ---------------------------------------------------------------------------------------
# Item 8: integers beyond 64 bits (and beyond Python's 4300-digit conversion limit)
# ---------------------------------------------------------------------------------------

HUGE = "1" * 5000


def test_a_5000_digit_integer_in_a_toml_or_json_file_names_its_key(tmp_path):
    toml = _scenario(tmp_path, 'app = { kind = "bulk" }', f'app = {{ kind = "bulk", size = {HUGE} }}')
    assert_user_error(cli("check", str(toml)), f"error: {toml}: connections[0].app.size: an integer with 5000 digits",
                      "-2^63..2^64-1")
    doc = _two_path_dict()
    f = tmp_path / "s.json"
    f.write_text(json.dumps(doc).replace('"kind": "bulk"', f'"kind": "bulk", "size": {HUGE}'))
    assert_user_error(cli("check", str(f)), f"error: {f}: connections[0].app.size: an integer with 5000 digits")


def test_a_5000_digit_integer_on_the_command_line_is_refused(tmp_path):
    assert_user_error(cli("check", str(TWO_PATH), "--set", f"seed={HUGE}"), "--set seed: an integer with 5000 digits")
    assert_user_error(cli("check", str(TWO_PATH), "--set", f"x=[1, {HUGE}]"), "--set x[1]: an integer with 5000 digits")
    out = tmp_path / "sw"
    assert_user_error(cli("sweep", str(TWO_PATH), "--vary", f"seed={HUGE},1", "--out", str(out)),
                      "an integer with 5000 digits")
    assert not out.exists()


@pytest.mark.parametrize("value, fits", [
    ("18446744073709551615", True),    # 2^64 - 1, the largest u64
    ("18446744073709551616", False),   # 2^64
    ("-9223372036854775809", False),   # -2^63 - 1, below the smallest i64
])
def test_integers_are_bounded_by_the_engines_64_bits(value, fits):
    r = cli("check", str(TWO_PATH), "--set", f"seed={value}")
    if fits:
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["seed"] == int(value)
    else:
        # The engine's JSON reader turned such a number into a float: "invalid type: floating point".
        assert_user_error(r, f"--set seed: `{value}` does not fit in 64 bits")


def test_hex_integers_are_bounded_by_value_not_spelling(tmp_path):
    # 0xffffffffffffffff = 2^64 - 1 fits; 0x10000000000000000 = 16^16 = 2^64 does not.
    ok = _scenario(tmp_path, "seed = 3", "seed = 0xffffffffffffffff", "ok.toml")
    assert cli("check", str(ok)).returncode == 0
    bad = _scenario(tmp_path, "seed = 3", "seed = 0x10000000000000000", "bad.toml")
    assert_user_error(cli("check", str(bad)), "seed: `18446744073709551616` does not fit in 64 bits")


def test_huge_integers_from_the_api_are_counted_without_conversion():
    # 10^5000 has 5001 digits; converting it to text would raise Python's ValueError.
    with pytest.raises(mptcplab.ConfigError, match="an integer with 5001 digits") as e:
        mptcplab.load_scenario({**_two_path_dict(), "seed": 10**5000})
    assert e.value.path == "seed"


# ---------------------------------------------------------------------------------------
# Item 10: Dask addresses and the API's argument types
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["ucx", "tls"])
def test_unsupported_dask_schemes_are_refused_with_the_supported_list(scheme, tmp_path):
    out = tmp_path / "o"
    address = f"{scheme}://127.0.0.1:8786"
    words = (f"error: --address: `{scheme}://` addresses are not supported; supported: tcp://HOST:PORT",)
    assert_user_error(cli("sweep", str(TWO_PATH), "--vary", "seed=1,2", "--engine", "dask", "--address", address,
                          "--out", str(out)), *words)
    assert_user_error(cli("reproduce", "kato", "--quick", "--engine", "dask", "--address", address, "--out", str(out)),
                      *words)
    assert not out.exists()
    with pytest.raises(mptcplab.ConfigError, match=f"`{scheme}://` addresses are not supported"):
        mptcplab.sweep(TWO_PATH, {"seed": [1]}, engine="dask", address=address)


def _sc():
    return mptcplab.load_scenario(TWO_PATH, {"duration": "200ms"})


# (call, key path, words of the message); each used to raise TypeError, ValueError,
# OverflowError or AttributeError, or (seed=True, jobs=True, backend="bogus") to be accepted.
API_PROBES = {
    "run seed='1'": (lambda: mptcplab.run(_sc(), seed="1"), "seed", "must be an integer in 0..2^64-1 or None, got str '1'"),
    "run seed=1.5": (lambda: mptcplab.run(_sc(), seed=1.5), "seed", "got float 1.5"),
    "run seed=True": (lambda: mptcplab.run(_sc(), seed=True), "seed", "got bool True"),
    "run overrides=str": (lambda: mptcplab.run(_sc(), overrides="duration=1s"), "overrides", "(a list: ['duration=1s'])"),
    "run overrides=5": (lambda: mptcplab.run(_sc(), overrides=5), "overrides", "got int 5"),
    "run overrides=[5]": (lambda: mptcplab.run(_sc(), overrides=[5]), "overrides[0]", "a (key path, value) pair, got int 5"),
    "run overrides={5: 1}": (lambda: mptcplab.run(_sc(), overrides={5: 1}), "overrides", "keys must be key paths"),
    "run max_events=-1": (lambda: mptcplab.run(_sc(), max_events=-1), "max_events", "got -1"),
    "run max_events='5'": (lambda: mptcplab.run(_sc(), max_events="5"), "max_events", "got str '5'"),
    "run max_events=2**64": (lambda: mptcplab.run(_sc(), max_events=2**64), "max_events", "got 18446744073709551616"),
    "run scenario=5": (lambda: mptcplab.run(5), "scenario", "a bundled scenario's name, a dict or a Scenario, got int 5"),
    "run scenario=None": (lambda: mptcplab.run(None), "scenario", "got NoneType None"),
    "load source=b''": (lambda: mptcplab.load_scenario(b"x.toml"), "source", "got bytes b'x.toml'"),
    "load tuple key": (lambda: mptcplab.load_scenario({(1, 2): 3}), "", "the key (1, 2) is a tuple; keys must be strings"),
    "load source=''": (lambda: mptcplab.load_scenario(""), "", "no scenario given (an empty name)"),
    "load source NUL": (lambda: mptcplab.load_scenario("a\0b.toml"), "", "cannot contain a NUL character"),
    "with_overrides 5": (lambda: _sc().with_overrides(5), "overrides", "got int 5"),
    "sweep grid=5": (lambda: mptcplab.sweep(_sc(), 5), "grid", "got int 5"),
    "sweep grid={k: 5}": (lambda: mptcplab.sweep(_sc(), {"seed": 5}), "grid['seed']", "must be a list of values"),
    "sweep grid={k: '1s'}": (lambda: mptcplab.sweep(_sc(), {"duration": "1s"}), "grid['duration']", "got str '1s'"),
    "sweep grid=[5]": (lambda: mptcplab.sweep(_sc(), [5]), "grid[0]", "a point must be a dict"),
    "sweep jobs='2'": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, jobs="2"), "jobs", "got str '2'"),
    "sweep jobs=True": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, jobs=True), "jobs", "got bool True"),
    "sweep repeat=1.5": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, repeat=1.5), "repeat", "got float 1.5"),
    "sweep out=5": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, out=5), "out", "got int 5"),
    "sweep backend='bogus'": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, backend="bogus"), "backend",
                              "must be one of sim, linux, uml, got str 'bogus'"),
    "sweep backend=None": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, backend=None), "backend", "got NoneType None"),
    "sweep progress=5": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, progress=5), "progress", "must be a function"),
    "sweep address=5": (lambda: mptcplab.sweep(_sc(), {"seed": [1]}, engine="dask", address=5), "address", "got int 5"),
    "plot directory=5": (lambda: mptcplab.plot(5), "directory", "got int 5"),
    "plot x=5": (lambda: mptcplab.plot(".", x=5), "x", "must be a string or None, got int 5"),
    "validate repeat='2'": (lambda: mptcplab.validate(repeat="2"), "repeat", "got str '2'"),
    "validate jobs=None": (lambda: mptcplab.validate(jobs=None), "jobs", "got NoneType None"),
    "flat_metrics(5)": (lambda: mptcplab.flat_metrics(5), "summary", "must be a mapping"),
    "parse_duration(5)": (lambda: units.parse_duration(5), "text", "must be a string"),
    "format_duration(nan)": (lambda: units.format_duration(float("nan")), "seconds", "nan is not a finite number"),
    "format_rate(inf)": (lambda: units.format_rate(float("inf")), "bps", "inf is not a finite number"),
    "format_rate(2**70)": (lambda: units.format_rate(2**70), "bps", "more than 2^64-1 bit/s"),
}


@pytest.mark.parametrize("probe", list(API_PROBES))
def test_wrong_api_arguments_raise_config_error_naming_the_argument(probe, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, and nothing is, wherever it would go
    call, path, words = API_PROBES[probe]
    with pytest.raises(mptcplab.ConfigError) as e:
        call()
    assert e.value.path == path, (e.value.path, str(e.value))
    assert words in e.value.message, e.value.message
    assert list(tmp_path.iterdir()) == []


def test_the_api_still_takes_what_it_documents(tmp_path):
    # The checks refuse wrong types only: paths, pairs, None and numpy-free sequences pass.
    res = mptcplab.run(str(TWO_PATH), seed=2**64 - 1, overrides=[("duration", "200ms")], max_events=10**7)
    assert res.seed == 2**64 - 1
    df = mptcplab.sweep(_sc(), {"connections.mptcp.cc": ("lia", "olia")}, out=tmp_path / "sw", progress=None)
    assert sorted(df["connections.mptcp.cc"]) == ["lia", "olia"]  # two grid points x one repeat


# ---------------------------------------------------------------------------------------
# Item 11: plot on a damaged run or sweep directory
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("outputs")
    assert cli("run", str(TWO_PATH), *SHORT, "--out", str(d / "run")).returncode == 0
    assert cli("sweep", str(TWO_PATH), *SHORT, "--vary", "paths.wifi.rate=2Mbit,4Mbit", "--out", str(d / "sweep")).returncode == 0
    return d


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[:50])


def _into_dir(p: Path) -> None:
    p.unlink()
    p.mkdir()


# (directory kind, file, damage, words of the error after `error: <dir>/<file>: `)
DAMAGE = {
    "summary truncated": ("run", "summary.json", _truncate, "is not valid JSON"),
    "summary a list": ("run", "summary.json", lambda p: p.write_text("[1, 2]"), "holds a JSON list, not an object"),
    "summary a string": ("run", "summary.json", lambda p: p.write_text('"x"'), "holds a JSON str, not an object"),
    "summary not UTF-8": ("run", "summary.json", lambda p: p.write_bytes(b"\xff\xfe"), "not a UTF-8 text file"),
    "summary empty": ("run", "summary.json", lambda p: p.write_text(""), "is empty"),
    "summary a directory": ("run", "summary.json", _into_dir, "is a directory, not a JSON file"),
    "summary a FIFO": ("run", "summary.json", lambda p: (p.unlink(), os.mkfifo(p)), "is not a regular file"),
    "summary wrong seed": ("run", "summary.json", lambda p: p.write_text('{"seed": [1]}'), "seed: has the wrong type"),
    "timeseries truncated": ("run", "timeseries.parquet", _truncate, "is not a readable Parquet table"),
    "timeseries empty": ("run", "timeseries.parquet", lambda p: p.write_bytes(b""), "is not a readable Parquet table"),
    "timeseries a directory": ("run", "timeseries.parquet", _into_dir, "is not a regular file"),
    "results truncated": ("sweep", "results.parquet", _truncate, "is not a readable Parquet table"),
    "results a directory": ("sweep", "results.parquet", _into_dir, "is not a regular file"),
    "sweep.json a list": ("sweep", "sweep.json", lambda p: p.write_text("[1]"), "holds a JSON list"),
    "sweep.json bad parameters": ("sweep", "sweep.json", lambda p: p.write_text('{"parameters": 5}'),
                                  "parameters: must be a list of key paths"),
    "sweep.json not UTF-8": ("sweep", "sweep.json", lambda p: p.write_bytes(b"\xff"), "not a UTF-8 text file"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_plot_refuses_a_damaged_directory_naming_the_file(case, outputs, tmp_path):
    import shutil

    kind, name, damage, words = DAMAGE[case]
    d = tmp_path / kind
    shutil.copytree(outputs / kind, d)
    damage(d / name)
    assert_user_error(cli("plot", str(d), timeout=60), f"error: {d / name}: ", words)
    assert not (d / "plots").exists()


def test_plot_refuses_a_non_numeric_metric(outputs):
    assert_user_error(cli("plot", str(outputs / "sweep"), "--y", "run_key"), "--y: column `run_key` holds", "not numbers")


# ---------------------------------------------------------------------------------------
# Other user files that reached a reader unchecked
# ---------------------------------------------------------------------------------------


def test_validation_grid_files_are_read_bounded_and_checked(tmp_path):
    # A grid scenario was read whole with read_text (a FIFO waited forever for a writer) and
    # parsed without the limits (a 5000-digit integer raised Python's ValueError).
    from mptcplab.validation import load_grid_scenario

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(mptcplab.ConfigError, match="is not a regular file"):
        load_grid_scenario(fifo)
    big = _scenario(tmp_path, "seed = 3", f"seed = {HUGE}", "big.toml")
    with pytest.raises(mptcplab.ConfigError, match="an integer with 5000 digits") as e:
        load_grid_scenario(big)
    assert (e.value.file, e.value.path) == (str(big), "seed")


def test_an_empty_scenario_name_is_refused_on_the_command_line():
    # `mptcplab check ""` used to answer "error: .: is a directory, not a scenario file".
    assert_user_error(cli("check", ""), "error: no scenario given (an empty name)")


def test_numpy_integers_are_integers_but_numpy_booleans_are_not():
    import numpy as np

    assert mptcplab.run(_sc(), seed=np.int64(5)).seed == 5
    with pytest.raises(mptcplab.ConfigError, match=r"must be an integer in 0..2\^64-1 or None, got bool"):
        mptcplab.run(_sc(), seed=np.True_)
