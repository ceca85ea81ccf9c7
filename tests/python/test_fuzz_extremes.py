"""Property-based fuzzing of extreme inputs, beside :mod:`test_fuzz` and driven by the same
settings (``MPTCPLAB_FUZZ_EXAMPLES``, ``MPTCPLAB_FUZZ_CLI_EXAMPLES``,
``MPTCPLAB_FUZZ_REPORT``; outcome counts land in the same report):

1. **Names** holding console markup (``[/bold]``), mathtext (``$``), control characters and
   any Unicode, as the scenario's, a connection's and a path's name: the run succeeds or is
   refused in one keyed line; on the command line the tables show each name as written (its
   control characters escaped) and never a traceback.
2. **Nesting** of random shape (lists, tables, dotted keys) and depth, in a file (TOML or
   JSON), a dict or ``--set``: refused with "nested N levels deep" exactly when the depth N
   exceeds :data:`~mptcplab.scenario.MAX_DEPTH`, with N computed here from the shape drawn.
3. **Big numbers** around the 64-bit bounds and up to thousands of digits, at random keys of
   real scenarios: refused as not fitting 64 bits exactly when outside -2^63..2^64-1.
"""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import mptcplab
from conftest import TWO_PATH
from conftest import mptcplab as cli
from mptcplab.errors import one_line
from mptcplab.scenario import INT_RANGE, MAX_DEPTH
from test_fuzz import BASES, MAX_EVENTS, _count, _one_line, _paths, _report, _settings  # noqa: F401 (_report: autouse)

BASE = json.loads(json.dumps(__import__("tomllib").loads(TWO_PATH.read_text())))
SHORT = {"duration": "200ms"}


def _assert_cli_clean(r: Any, args: list[str]) -> None:
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, (args[:4], r.stderr[-2000:])
    if r.returncode != 0:
        assert r.returncode == 2, (args[:4], r.returncode, r.stderr[-2000:])
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args[:4], r.stderr[-2000:])


# ---------------------------------------------------------------------------------------
# 1. Names
# ---------------------------------------------------------------------------------------

MARKUP = ["[/bold]", "[/]", "[red]", "[/red]", "[bold red on white]", "[link=x]", "\\[", "[", "]", "$", "$x$",
          "$\\frac{x$", "{", "}", "%s", "{0}", "\\", "`", "'", '"', "#", ".", "*", "?"]
CONTROL = ["\n", "\r", "\t", "\x00", "\x1b[31m", "\x7f", "\u2028", "\u202e", "\ufeff", "\x08"]
UNICODE = ["é", "µ", "ß", "中文", "🙂", "\u0301", "א", "ﬁ", "Ⅻ", "\U0001d400"]


def a_name() -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(MARKUP + CONTROL + UNICODE), st.text(alphabet=string.ascii_letters, min_size=1,
                                                                           max_size=4))
    return st.lists(piece, min_size=1, max_size=3).map("".join)


@st.composite
def named(draw) -> dict[str, Any]:
    doc = json.loads(json.dumps(BASE))
    doc["name"] = draw(a_name())
    wifi, cell = draw(st.lists(a_name(), min_size=2, max_size=2, unique=True))
    doc["paths"][0]["name"], doc["paths"][1]["name"] = wifi, cell
    doc["connections"][0]["paths"] = [wifi, cell]
    doc["connections"][0]["name"] = draw(a_name())
    doc.update(SHORT)
    return doc


@_settings(ci_default=30)
@given(doc=named())
def test_any_name_runs_or_is_refused_in_one_line(doc):
    try:
        res = mptcplab.run(doc, max_events=MAX_EVENTS)
    except mptcplab.ConfigError as e:
        _one_line(mptcplab.errors.describe(e))
        _count("names", "refused")
        return
    except mptcplab._core.WorkBudgetExceeded:
        _count("names", "budget")
        return
    assert res.summary["connections"][0]["name"] == doc["connections"][0]["name"]
    _count("names", "ran")


@_settings(ci_default=6, cli=True)
@given(doc=named())
def test_any_name_prints_as_written_on_the_command_line(doc, tmp_path_factory):
    f = tmp_path_factory.mktemp("names") / "s.json"
    f.write_text(json.dumps(doc))
    args = ["run", str(f)]
    r = cli(*args, timeout=120)
    _assert_cli_clean(r, args)
    if r.returncode == 0:
        for name in (doc["connections"][0]["name"], doc["paths"][0]["name"]):
            assert one_line(name).strip() in r.stdout, (name, r.stdout)
        assert "\x1b" not in r.stdout
        _count("cli-names", "ok")
    else:
        _count("cli-names", "refused")


# ---------------------------------------------------------------------------------------
# 2. Nesting
# ---------------------------------------------------------------------------------------


@st.composite
def nested(draw) -> tuple[Any, int]:
    """A value and how many levels it nests below its key (a scalar: 0), of random shape."""
    levels = draw(st.one_of(st.integers(0, 8), st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3), st.integers(100, 400)))
    kinds = draw(st.lists(st.sampled_from(["list", "table"]), min_size=levels, max_size=levels))
    value: Any = draw(st.sampled_from([1, "x", True, [], {}]))
    for kind in kinds:
        value = [value] if kind == "list" else {"k": value}
    # Each wrapper adds one segment to the bottom value's key path (`x[0].k`); the bottom
    # value sits where a scalar would, whether it is one or an empty list or table.
    return value, levels


def _expect_depth(outcome: str, total: int) -> None:
    if total > MAX_DEPTH:
        assert f"nested {total} levels deep; the limit is {MAX_DEPTH}" in outcome or "cannot be read" in outcome, outcome
    else:
        assert "levels deep" not in outcome and "cannot be read" not in outcome, outcome


@_settings(ci_default=30)
@given(value=nested(), key_depth=st.integers(1, 3), how=st.sampled_from(["dict", "overrides"]))
def test_nesting_is_refused_exactly_beyond_the_limit(value, key_depth, how):
    inner, depth = value
    key = ".".join(["x"] * key_depth)
    total = key_depth + depth  # `x.x.x` is 3 levels; the value adds its own below it
    try:
        if how == "dict":
            doc = json.loads(json.dumps(BASE))
            node = doc
            for _ in range(key_depth - 1):
                node = node.setdefault("x", {})
            node["x"] = inner
            mptcplab.load_scenario(doc)
        else:
            mptcplab.load_scenario(BASE, {key: inner})
        outcome = "accepted"
    except mptcplab.ConfigError as e:
        outcome = mptcplab.errors.describe(e)
        _one_line(outcome)
    _expect_depth(outcome, total)
    _count("nesting", "refused deep" if total > MAX_DEPTH else "not deep")


def _toml_inline(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_inline(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_inline(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


@_settings(ci_default=8, cli=True)
@given(value=nested(), form=st.sampled_from(["toml", "json", "set"]))
def test_nesting_on_the_command_line_is_refused_exactly_beyond_the_limit(value, form, tmp_path_factory):
    inner, depth = value
    total = 1 + depth  # under the top-level key `x`
    tmp = tmp_path_factory.mktemp("nest")
    if form == "set":
        args = ["check", str(TWO_PATH), "--set", f"x={_toml_inline(inner)}"]
    elif form == "json":
        f = tmp / "s.json"
        f.write_text(json.dumps({**BASE, "x": inner}))
        args = ["check", str(f)]
    else:
        f = tmp / "s.toml"
        f.write_text(f"x = {_toml_inline(inner)}\n" + TWO_PATH.read_text())
        args = ["check", str(f)]
    r = cli(*args, timeout=60)
    _assert_cli_clean(r, args)
    _expect_depth(r.stderr, total)
    _count("cli-nesting", "refused deep" if total > MAX_DEPTH else "not deep")


# ---------------------------------------------------------------------------------------
# 3. Big numbers
# ---------------------------------------------------------------------------------------

LO, HI = INT_RANGE


def big_int() -> st.SearchStrategy[int]:
    near = st.sampled_from([LO - 1, LO, HI, HI + 1, 2**53 + 1, 2**63, -(2**64)])
    return st.one_of(near, st.integers(LO - 2**70, HI + 2**70), st.integers(1, 6000).map(lambda d: 10**d - 1))


@_settings(ci_default=40)
@given(data=st.data(), n=big_int())
def test_integers_are_refused_exactly_outside_64_bits(data, n):
    name, base = data.draw(st.sampled_from(BASES))
    doc = json.loads(json.dumps(base))
    where = data.draw(st.sampled_from(_paths(doc) or [("seed",)]))
    node = doc
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = n
    try:
        mptcplab.run(doc, max_events=MAX_EVENTS, overrides=SHORT)
        outcome = "ran"
    except mptcplab.ConfigError as e:
        outcome = mptcplab.errors.describe(e)
        _one_line(outcome)
    except mptcplab._core.WorkBudgetExceeded:
        outcome = "budget"
    refused_as_big = "integers must lie in -2^63..2^64-1" in outcome
    assert refused_as_big == (not LO <= n <= HI), (name, where, outcome[:300])
    _count("big-numbers", "refused big" if refused_as_big else "in range")


@_settings(ci_default=8, cli=True)
@given(n=big_int(), form=st.sampled_from(["toml", "json", "set"]))
def test_big_integers_on_the_command_line_are_refused_in_one_line(n, form, tmp_path_factory):
    # Written out as text: Python refuses to convert integers of more than 4300 digits, so the
    # text is built from the number's digits arithmetically for those.
    digits = str(n) if abs(n) < 10**4000 else "9" * len(str(n // 10**4000)) + "9" * 4000
    tmp = tmp_path_factory.mktemp("big")
    if form == "set":
        args = ["check", str(TWO_PATH), "--set", f"seed={digits}"]
    elif form == "json":
        f = tmp / "s.json"
        f.write_text(json.dumps(BASE).replace('"seed": 3', f'"seed": {digits}'))
        args = ["check", str(f)]
    else:
        f = tmp / "s.toml"
        f.write_text(TWO_PATH.read_text().replace("seed = 3", f"seed = {digits}"))
        args = ["check", str(f)]
    r = cli(*args, timeout=60)
    _assert_cli_clean(r, args)
    fits = LO <= int(digits) <= HI if len(digits) < 4000 else False
    if not fits:
        assert r.returncode == 2 and "integers must lie in -2^63..2^64-1" in r.stderr, r.stderr
    else:
        assert "integers must lie in" not in r.stderr, r.stderr
    _count("cli-big-numbers", "refused" if r.returncode else "ok")
