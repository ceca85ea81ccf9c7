"""Property-based fuzzing of everything a user can hand the project.

Three properties, each over generated inputs (Hypothesis):

1. **Mutated scenarios fail cleanly.** Every bundled scenario and test scenario, with keys
   deleted, values swapped for other types, extreme or non-finite numbers, malformed units,
   unknown keys and garbage trace files, either runs or is refused with a ``ConfigError``
   whose message is one line naming a key path. Never another exception, a Rust panic, or
   unbounded work: every run has a budget of ``MAX_EVENTS`` engine events and a run that
   needs more counts as the ``budget`` outcome (bounded by construction), not a hang.
2. **Random valid scenarios are physical and deterministic.** Scenarios drawn across every
   feature (all congestion controls and schedulers, AQM, jitter, schedules, capacity traces,
   general topologies, tiny and huge buffers, both stack profiles, TCP + MPTCP mixes) run
   within the budget or hit it, and their summaries hold: every number finite and >= 0, each
   connection's goodput at most the summed capacity of the paths it uses, subflow shares
   summing to 1, and the same seed giving the identical summary.
3. **The command line never shows a traceback.** Mutated scenario files and random option
   values through ``mptcplab check`` / ``run``: exit 0, or exit 2 with exactly one line
   ``error: ...``.

CI runs a bounded, fixed set of cases (the defaults below, about 10 s); ``scripts/fuzz.sh N
[M]`` runs N random cases of properties 1 and 2 and M (default N / 10) command-line calls
and prints the count of each outcome class (``MPTCPLAB_FUZZ_EXAMPLES``,
``MPTCPLAB_FUZZ_CLI_EXAMPLES``, ``MPTCPLAB_FUZZ_REPORT``).
"""

from __future__ import annotations

import json
import math
import os
import string
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mptcplab
from mptcplab import _core
from conftest import REPO
from conftest import mptcplab as cli

#: Engine events one generated run may use: about a second of CPU on this project's
#: reference machine, ten times what a 2 s two-path run at 20 Mbit/s needs.
MAX_EVENTS = 400_000
EXAMPLES = int(os.environ.get("MPTCPLAB_FUZZ_EXAMPLES", "0"))
CLI_EXAMPLES = int(os.environ.get("MPTCPLAB_FUZZ_CLI_EXAMPLES", "0"))
OUTCOMES: dict[str, Counter[str]] = {}


def _settings(ci_default: int, cli: bool = False):
    n = (CLI_EXAMPLES if cli else EXAMPLES) or ci_default
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=EXAMPLES == 0,  # CI: the same cases every time
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
        database=None,
    )


def _count(prop: str, outcome: str) -> None:
    OUTCOMES.setdefault(prop, Counter())[outcome] += 1


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    out = os.environ.get("MPTCPLAB_FUZZ_REPORT")
    if out:
        Path(out).write_text(json.dumps({k: dict(v) for k, v in OUTCOMES.items()}, indent=2) + "\n")


# ---------------------------------------------------------------------------------------
# 1. Mutated scenarios
# ---------------------------------------------------------------------------------------


def _bases() -> list[tuple[str, dict[str, Any]]]:
    files = sorted((REPO / "scenarios").rglob("*.toml")) + sorted((REPO / "tests" / "python" / "data").glob("*.toml"))
    out = []
    for f in files:
        try:
            out.append((str(f.relative_to(REPO)), tomllib.loads(f.read_text())))
        except tomllib.TOMLDecodeError:
            continue
    assert len(out) >= 30, "test bug: too few base scenarios"
    return out


BASES = _bases()

UNITISH = [
    "", " ", "10", "10 parsecs", "-5ms", "1e3Mbit", "nan", "inf", "-inf", "0", "0s", "0Mbit", "0B",
    "99999999999999999999999Gbit", "1Tbit", "1ns", "1000000000000000000000min", "64B", "1 packets",
    "0.5 packets", "100%", "150%", "-1%", "\n", "\x00", "\u2028", "10ms\n20ms", "ms", "Mbit", "1.2.3s",
    "++1s", "--1s", "1,5s", "0x10", "１０ms",
]
NUMBERS = [0, -1, 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**64, -(2**63), 1e308, -1e308, 1e-320, 0.5, math.nan, math.inf]


def _values() -> st.SearchStrategy[Any]:
    scalar = st.one_of(
        st.sampled_from(UNITISH),
        st.sampled_from(NUMBERS),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.text(alphabet=string.printable + "µé\u2028", max_size=30),
    )
    return st.one_of(
        scalar,
        st.lists(scalar, max_size=3),
        st.dictionaries(st.sampled_from(["kind", "x", "rate", "name", "size", "amount", ""]), scalar, max_size=3),
    )


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in a nested dict/list (lists addressed by index)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _parent(doc: Any, path: tuple) -> tuple[Any, Any]:
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    return cur, path[-1]


@st.composite
def mutated(draw, tmp: Path) -> tuple[str, dict[str, Any]]:
    name, base = draw(st.sampled_from(BASES))
    doc = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        op = draw(st.sampled_from(["delete", "replace", "replace", "unit", "add", "trace"]))
        if op == "trace":
            # A garbage capacity trace on some path.
            text = draw(st.one_of(
                st.text(alphabet="0123456789,.-e \n#xyz", max_size=200),
                st.sampled_from(["", "\n", "1,0\n", "2,100\n", "1,1e30\n", "1,-5\n", "0\n", "5\n3\n", "1,nan\n"]),
            ))
            f = tmp / f"trace-{draw(st.integers(0, 10**9))}.txt"
            f.write_text(text)
            paths_list = doc.get("paths") if isinstance(doc.get("paths"), list) else None
            if paths_list and isinstance(paths_list[0], dict):
                key = draw(st.sampled_from(["trace", "rate_trace"]))
                target = draw(st.sampled_from(paths_list))
                if isinstance(target, dict):
                    target.pop("rate", None)
                    target[key] = str(f)
            continue
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(doc, path)
        if op == "delete":
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent.pop(key)
        elif op == "replace":
            parent[key] = draw(_values())
        elif op == "unit":
            parent[key] = draw(st.sampled_from(UNITISH))
        elif op == "add":
            target = parent if isinstance(parent, dict) else doc
            target[draw(st.sampled_from(["rat", "qeue", "extra", "", "kind", "name"]))] = draw(_values())
    return name, doc


def _one_line(e: BaseException) -> None:
    text = str(e)
    assert "\n" not in text and "\r" not in text, f"multi-line error: {text!r}"
    assert text.strip(), "empty error"


@_settings(ci_default=150)
@given(data=st.data())
def test_mutated_scenarios_run_or_are_refused_in_one_keyed_line(data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mut")
    name, doc = data.draw(mutated(tmp))
    try:
        res = mptcplab.run(doc, max_events=MAX_EVENTS)
    except mptcplab.ConfigError as e:
        _one_line(e)
        assert getattr(e, "message", ""), f"{name}: a ConfigError without a message: {e}"
        _count("mutated", "refused")
        return
    except _core.WorkBudgetExceeded:
        _count("mutated", "budget")
        return
    assert res.summary is not None
    _count("mutated", "ran")


# ---------------------------------------------------------------------------------------
# 2. Random valid scenarios
# ---------------------------------------------------------------------------------------

CCS_MULTI = ["reno", "lia", "cubic", "olia", "balia", "wvegas", "bbr"]
CCS_SINGLE = ["reno", "cubic", "bbr"]
SCHEDULERS = ["minrtt", "roundrobin", "redundant", "blest", "ecf", "daps", "otias", "stms", "default"]
CELLULAR = REPO.parent / "shared" / "traces" / "cellular"


def _mbit(draw, lo: float, hi: float) -> str:
    return f"{draw(st.floats(lo, hi)):.3f}Mbit"


@st.composite
def a_path(draw, i: int, tmp: Path) -> tuple[dict[str, Any], float]:
    """A path and an upper bound on its capacity (bit/s, either direction, any time)."""
    p: dict[str, Any] = {"name": f"p{i}", "delay": f"{draw(st.integers(0, 150))}ms"}
    cap_kind = draw(st.sampled_from(["rate", "rate", "rate", "rate_trace", "trace"]))
    if cap_kind == "trace" and CELLULAR.is_dir():
        traces = sorted(f for f in CELLULAR.iterdir() if f.suffix in (".up", ".down"))
        p["trace"] = str(draw(st.sampled_from(traces)))
        cap = math.inf  # a Mahimahi trace's peak millisecond is not a useful bound
    elif cap_kind == "rate_trace":
        rates = draw(st.lists(st.integers(0, 3_000_000), min_size=1, max_size=5))
        if not any(rates):
            rates[0] = 100_000
        f = tmp / f"rt-{i}-{draw(st.integers(0, 10**9))}.csv"
        f.write_text("".join(f"{k + 1},{r}\n" for k, r in enumerate(rates)))
        p["rate_trace"] = str(f)
        cap = max(rates) * 8.0
    else:
        mbit = draw(st.floats(0.1, 50))
        p["rate"] = f"{mbit:.4f}Mbit"
        cap = mbit * 1e6
    p["queue"] = draw(st.sampled_from(["5 packets", "50 packets", "300 packets", "30000B", "1500B", "20ms", "500ms"]))
    if draw(st.booleans()):
        p["loss"] = f"{draw(st.floats(0, 3)):.3f}%"
        if draw(st.booleans()):
            p["loss_burst"] = draw(st.floats(1, 5))
    aqm = draw(st.sampled_from([None, "codel", "red"]))
    if aqm == "codel":
        p["aqm"] = {"kind": "codel"}
    elif aqm == "red":
        p["queue"] = "300 packets"
        p["aqm"] = {"kind": "red", "min": "10 packets", "max": "40 packets", "gentle": draw(st.booleans())}
    if draw(st.booleans()):
        dist = draw(st.sampled_from(["uniform", "normal", "pareto", "paretonormal"]))
        p["jitter"] = {"amount": f"{draw(st.integers(1, 20))}ms", "distribution": dist, "reorder": draw(st.booleans())}
    if "rate" in p and draw(st.booleans()):
        steps = []
        for k in range(draw(st.integers(1, 3))):
            step: dict[str, Any] = {"at": f"{(k + 1) * 400}ms"}
            mbit = draw(st.floats(0.1, 50))
            step["rate"] = f"{mbit:.4f}Mbit"
            cap = max(cap, mbit * 1e6)
            if draw(st.booleans()):
                step["delay"] = f"{draw(st.integers(0, 100))}ms"
            steps.append(step)
        p["schedule"] = steps
    if "rate" in p and draw(st.booleans()):
        mbit = draw(st.floats(0.1, 50))
        p["up"] = {"rate": f"{mbit:.4f}Mbit"}
        cap = max(cap, mbit * 1e6)
    return p, cap


def a_buffer(draw) -> Any:
    return draw(st.sampled_from([
        None, "3KB", "16KB", "64KB", "256KB", "4MiB", "64MiB",
        {"min": "4KB", "default": "16KB", "max": "4MiB"}, {"min": "4096B", "default": "131072B", "max": "33554432B"},
    ]))


@st.composite
def a_connection(draw, i: int, names: list[str]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["tcp", "mptcp", "mptcp"]))
    c: dict[str, Any] = {"name": f"c{i}", "kind": kind}
    if kind == "tcp":
        c["paths"] = [draw(st.sampled_from(names))]
        c["cc"] = draw(st.sampled_from(CCS_SINGLE))
    else:
        c["paths"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
        c["cc"] = draw(st.sampled_from(CCS_MULTI))
        c["scheduler"] = draw(st.sampled_from(SCHEDULERS))
        if draw(st.booleans()):
            c["stack"] = "linux"
    app = draw(st.sampled_from(["bulk", "download", "periodic"]))
    if app == "bulk":
        c["app"] = {"kind": "bulk"}
        if draw(st.booleans()):
            # iperf-like send() calls, from one byte to beyond any drawn send buffer.
            c["app"]["write"] = f"{draw(st.integers(1, 8_000_000))}B"
    elif app == "download":
        c["app"] = {"kind": "download", "size": f"{draw(st.integers(1, 3_000_000))}B"}
    else:
        c["app"] = {"kind": "periodic", "size": f"{draw(st.integers(1, 200_000))}B",
                    "period": f"{draw(st.integers(50, 1000))}ms", "count": draw(st.integers(1, 20))}
    c["direction"] = draw(st.sampled_from(["download", "upload"]))
    if draw(st.booleans()):
        c["start"] = f"{draw(st.integers(0, 400))}ms"
    for key in ("sndbuf", "rcvbuf"):
        b = a_buffer(draw)
        if b is not None:
            c[key] = b
    if draw(st.booleans()):
        c["tcp"] = {"recovery": draw(st.sampled_from(["rack_tlp", "rfc6675"])), "prr": draw(st.booleans())}
    return c


@st.composite
def valid_scenario(draw, tmp: Path) -> tuple[dict[str, Any], dict[str, float]]:
    n = draw(st.integers(1, 3))
    paths, caps = [], {}
    for i in range(n):
        p, cap = draw(a_path(i, tmp))
        paths.append(p)
        caps[p["name"]] = cap
    names = [p["name"] for p in paths]
    conns = [draw(a_connection(i, names)) for i in range(draw(st.integers(1, 3)))]
    doc = {"name": "fuzz", "duration": f"{draw(st.integers(500, 2500))}ms", "seed": draw(st.integers(0, 2**32)),
           "paths": paths, "connections": conns}
    return doc, caps


def _numbers(node: Any, where: str = "") -> list[tuple[str, float]]:
    if isinstance(node, dict):
        return [x for k, v in node.items() for x in _numbers(v, f"{where}.{k}")]
    if isinstance(node, list):
        return [x for i, v in enumerate(node) for x in _numbers(v, f"{where}[{i}]")]
    if isinstance(node, bool) or node is None or isinstance(node, str):
        return []
    return [(where, float(node))]


def _check_physics(doc: dict[str, Any], caps: dict[str, float], summary: dict[str, Any]) -> None:
    for where, v in _numbers(summary):
        assert math.isfinite(v) and v >= 0, f"{where} = {v}"
    for c, conn in zip(doc["connections"], summary["connections"], strict=True):
        cap = sum(caps[p] for p in set(c["paths"]))
        # Goodput counts payload, which is less than the bits on the wire.
        assert conn["goodput_bps"] <= cap * (1 + 1e-9), (c["name"], conn["goodput_bps"], cap)
    for c in doc["connections"]:
        shares = [s["share"] for s in summary["subflows"] if s["connection"] == c["name"]]
        if shares and sum(shares) > 0:
            assert abs(sum(shares) - 1) < 1e-9, (c["name"], shares)


@_settings(ci_default=40)
@given(data=st.data())
def test_random_valid_scenarios_are_physical_and_deterministic(data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("valid")
    doc, caps = data.draw(valid_scenario(tmp))
    try:
        first = mptcplab.run(doc, max_events=MAX_EVENTS)
    except _core.WorkBudgetExceeded:
        _count("valid", "budget")
        return
    except mptcplab.ConfigError as e:
        # The generator only draws valid values; a refusal is a generator or validation bug.
        raise AssertionError(f"valid scenario refused: {e}\n{json.dumps(doc)}") from None
    summary = first.summary
    _check_physics(doc, caps, summary)
    again = mptcplab.run(doc, max_events=MAX_EVENTS)
    assert json.dumps(again.summary, sort_keys=True) == json.dumps(summary, sort_keys=True), "not deterministic"
    _count("valid", "ran")


# ---------------------------------------------------------------------------------------
# 3. The command line
# ---------------------------------------------------------------------------------------

OPTION_VALUES = st.one_of(st.sampled_from(UNITISH + ["connections.0.cc=olai", "paths.0.rate=", "=", ".=x", "a.b.c=1",
                                                     "duration=1s", "connections.99.cc=lia", "paths.x.rate=1Mbit",
                                                     "seed=-1", "output.timeseries=1ns"]),
                          st.text(alphabet=string.printable, max_size=40))


@_settings(ci_default=25, cli=True)
@given(data=st.data())
def test_the_command_line_never_shows_a_traceback(data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    form = data.draw(st.sampled_from(["file", "set", "seed", "vary"]))
    two_path = REPO / "tests" / "python" / "data" / "two-path.toml"
    if form == "file":
        _, doc = data.draw(mutated(tmp))
        f = tmp / "s.json"
        f.write_text(json.dumps(doc))
        args = ["check", str(f)]
    elif form == "set":
        args = ["check", str(two_path), "--set", data.draw(OPTION_VALUES)]
    elif form == "seed":
        args = ["run", str(two_path), "--set", "duration=200ms", "--seed", data.draw(st.sampled_from(
            ["-1", "18446744073709551616", "1e3", "", "0x10", "nan", "3"]))]
    else:
        args = ["sweep", str(two_path), "--vary", data.draw(OPTION_VALUES), "--out", str(tmp / "sw"), "--set",
                "duration=200ms"]
    args = [a.replace("\x00", "") for a in args]  # an argv cannot hold NUL (nor can a shell pass it)
    r = cli(*args, timeout=120)
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, (args, r.stderr)
    if r.returncode == 0:
        _count("cli", "ok")
        return
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, r.stderr)
    _count("cli", "refused")
