"""Property-based fuzzing of what a command does to the file system (a companion of
``test_fuzz.py``; the same environment variables size a campaign).

Three properties, each over generated cases (Hypothesis):

4. **Output folders under any condition.** ``run --out``, ``run --pcap`` and ``sweep --out``
   aimed at a new folder, a nested new folder, an empty folder, an earlier output, a file, a
   symlink to an earlier output, a dangling symlink, a read-only parent or a tiny full file
   system (a tmpfs of a few kilobytes) either succeed, leaving a complete output, or are
   refused with one line ``error: ...`` and exit 2, leaving everything that was there
   byte-for-byte as it was. Never a traceback or a panic, and never a temporary file or
   folder left behind.
5. **Concurrent commands on one output.** Two to six commands (``run --out`` or ``sweep
   --out`` with the same arguments) started together on the same new folder each succeed or
   are refused in one line; afterwards the folder is one complete output and nothing
   temporary is left beside it.
7. **A name cannot take a capture elsewhere.** Connections and paths named with ``/``,
   ``..``, leading dots, ``%`` and control characters, captured through the API, either run
   with every file inside the capture folder (one file name each) or are refused in one
   line; nothing appears anywhere else.
6. **A cache is never older than its inputs.** A sweep over a rate trace, resumed after the
   trace was rewritten with other rates, gives the rows of a fresh sweep; a cached run file
   replaced by garbage (random bytes, truncated JSON, JSON of another shape) is run again
   with a note, giving the same rows as a fresh sweep.

The tiny file systems need root (``mount -t tmpfs``); where mounting is refused those cases
count as ``skipped`` in the outcome report, and the other conditions still run.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st

from conftest import REPO
from conftest import mptcplab as cli
from test_fuzz import OUTCOMES, _settings

TWO_PATH = REPO / "tests" / "python" / "data" / "two-path.toml"
#: A run of a fraction of a second: the properties are about files, not about the physics.
SHORT = ("--set", "duration=300ms")


def _costly(ci_default: int):
    """``test_fuzz``'s settings without shrinking: each case runs whole commands (seconds), and
    the failing case as drawn already names what failed."""
    return settings(_settings(ci_default, cli=True), phases=[Phase.explicit, Phase.reuse, Phase.generate])


def _count(prop: str, outcome: str) -> None:
    OUTCOMES.setdefault(prop, Counter())[outcome] += 1


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (not following links) with a digest of what it holds."""
    out: dict[str, str] = {}
    if not os.path.lexists(root):
        return out
    if root.is_symlink():
        return {".": "link:" + os.readlink(root)}
    if root.is_file():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def _assert_clean_exit(args: list[str], r: subprocess.CompletedProcess[str]) -> bool:
    """True for success; asserts that a failure is the one-line refusal."""
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, (args, r.stderr)
    if r.returncode == 0:
        return True
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    errors = [line for line in r.stderr.strip().splitlines() if not line.startswith("note: ")]
    assert len(errors) == 1 and errors[0].startswith("error: "), (args, r.stderr)
    return False


def _complete_output(kind: str, where: Path) -> None:
    """What a finished command leaves: the files its ``--help`` promises, each readable."""
    assert where.is_dir(), where
    if kind == "run":
        for name in ("run.json", "summary.json", "scenario.json"):
            json.loads((where / name).read_text())
    elif kind == "sweep":
        json.loads((where / "sweep.json").read_text())
        assert (where / "results.csv").read_text().count("\n") >= 2
        for f in (where / "runs").iterdir():
            json.loads(f.read_text())
    else:  # captures
        caps = sorted(where.glob("*.pcap"))
        assert caps and all(c.stat().st_size > 24 for c in caps), caps


def _command(kind: str, target: Path) -> list[str]:
    if kind == "run":
        return ["run", str(TWO_PATH), *SHORT, "--out", str(target)]
    if kind == "pcap":
        return ["run", str(TWO_PATH), *SHORT, "--pcap", str(target)]
    return ["sweep", str(TWO_PATH), *SHORT, "--vary", "paths.cell.rate=1Mbit,2Mbit", "--out", str(target)]


class _Tmpfs:
    """A tmpfs of ``size`` bytes mounted on ``where`` for the duration of a ``with``."""

    def __init__(self, where: Path, size: int, read_only: bool = False) -> None:
        self.where, self.size, self.mounted = where, size, False
        self.options = f"size={size}" + (",ro" if read_only else "")

    def __enter__(self) -> bool:
        self.where.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", self.options, "tmpfs", str(self.where)],
                           capture_output=True, text=True)
        self.mounted = r.returncode == 0
        return self.mounted

    def __exit__(self, *exc: object) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.where)], capture_output=True)


CONDITIONS = ["new", "nested", "empty", "earlier", "file", "link-earlier", "link-dangling", "read-only", "full"]


def _prepare(condition: str, kind: str, root: Path) -> Path:
    """Makes ``condition`` true of a target under ``root`` and returns the target."""
    target = root / "out"
    if condition == "nested":
        return root / "a" / "b" / "out"
    if condition == "empty":
        target.mkdir()
    elif condition == "earlier" or condition == "link-earlier":
        earlier = target if condition == "earlier" else root / "earlier"
        r = cli(*_command(kind, earlier), timeout=120)
        assert r.returncode == 0, r.stderr
        if condition == "link-earlier":
            target.symlink_to(earlier.name)
    elif condition == "file":
        target.write_text("a file holding other data\n")
    elif condition == "link-dangling":
        target.symlink_to("nowhere")
    return target


@_costly(ci_default=12)
@given(kind=st.sampled_from(["run", "pcap", "sweep"]), condition=st.sampled_from(CONDITIONS),
       size_kb=st.integers(4, 96))
def test_output_folders_are_complete_or_untouched(kind, condition, size_kb, tmp_path_factory):
    root = tmp_path_factory.mktemp("fs")
    if condition in ("full", "read-only"):
        # Root writes through permission bits, so a read-only place is a read-only mount.
        mount = _Tmpfs(root / "small", size_kb * 1024, read_only=condition == "read-only")
        with mount as mounted:
            if not mounted:
                _count("files", "skipped")
                return
            _check_one(kind, mount.where / "out", mount.where, condition)
        return
    _check_one(kind, _prepare(condition, kind, root), root, condition)


def _check_one(kind: str, target: Path, root: Path, condition: str) -> None:
    before = _tree(root)
    args = _command(kind, target)
    r = cli(*args, timeout=120)
    ok = _assert_clean_exit(args, r)
    after = _tree(root)
    if ok:
        _complete_output("pcap" if kind == "pcap" else kind, target)
        if condition == "link-earlier":
            # Followed or refused, never half-replaced: the link still names the earlier folder.
            assert target.is_symlink() and os.readlink(target) == "earlier", os.readlink(target)
        new = {k for k in after if k not in before and not k.startswith(os.path.relpath(target.resolve(), root.resolve()))}
        assert not {k for k in new if Path(k).name.startswith(".")}, f"temporary entries left: {sorted(new)}"
        _count("files", f"{condition}: ok")
    elif kind == "sweep" and condition in ("new", "nested", "empty", "full"):
        # A sweep keeps the runs it finished, to be resumed: what it leaves is whole files in
        # its own folder, nothing beside it and nothing temporary.
        changed = {k for k in set(after) ^ set(before)}
        inside = os.path.relpath(target, root)
        assert all(k == inside or k.startswith(inside + os.sep) for k in changed), sorted(changed)
        for k in changed:
            assert not Path(k).name.startswith("."), f"temporary entry left: {k}"
            if k.endswith(".json"):
                json.loads((root / k).read_text())
        _count("files", f"{condition}: refused, resumable")
    else:
        assert after == before, f"{args}: refused but changed {sorted(set(after) ^ set(before))}"
        _count("files", f"{condition}: refused")


@_costly(ci_default=4)
@given(kind=st.sampled_from(["run", "sweep"]), n=st.integers(2, 6))
def test_concurrent_commands_leave_one_complete_output(kind, n, tmp_path_factory):
    root = tmp_path_factory.mktemp("race")
    target = root / "deep" / "out"
    args = _command(kind, target)
    results: list[subprocess.CompletedProcess[str]] = [None] * n  # type: ignore[list-item]
    start = threading.Barrier(n)

    def one(i: int) -> None:
        start.wait()
        results[i] = cli(*args, timeout=240)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    oks = [_assert_clean_exit(args, r) for r in results]
    assert any(oks), [r.stderr for r in results]
    _complete_output(kind, target)
    leftovers = [p.name for p in target.parent.iterdir() if p.name != "out"]
    assert not leftovers, leftovers
    _count("race", f"{kind}: {sum(oks)} of {n} succeeded")


def _rows(out: Path) -> list[dict]:
    import pandas as pd

    df = pd.read_csv(out / "results.csv")
    metric = [c for c in df.columns if c.startswith("conn.")]
    return df.sort_values(list(df.columns[:2])).loc[:, metric].round(9).fillna(-1).to_dict("records")


@_costly(ci_default=3)
@given(rates=st.lists(st.integers(50_000, 3_000_000), min_size=2, max_size=4),
       damage=st.sampled_from(["trace", "bytes", "truncated", "shape", "empty"]),
       junk=st.binary(min_size=1, max_size=64))
def test_a_resumed_sweep_is_never_older_than_its_inputs(rates, damage, junk, tmp_path_factory):
    root = tmp_path_factory.mktemp("cache")
    trace = root / "rates.csv"
    trace.write_text("1,250000\n")
    # A rate trace replaces the path's rate, so the scenario file names it in the rate's place.
    doc = TWO_PATH.read_text().replace('rate = "4Mbit"', f'rate_trace = "{trace}"', 1)
    scenario = root / "s.toml"
    scenario.write_text(doc)
    args = ["sweep", str(scenario), *SHORT, "--vary", "paths.cell.rate=1Mbit,2Mbit", "--out", str(root / "sw")]
    assert cli(*args, timeout=240).returncode == 0
    if damage == "trace":
        new = "".join(f"{k + 1},{r}\n" for k, r in enumerate(rates))
        assume(new != trace.read_text())
        trace.write_text(new)
    else:
        victim = sorted((root / "sw" / "runs").iterdir())[0]
        text = victim.read_bytes()
        victim.write_bytes({"bytes": junk, "truncated": text[: len(text) // 2], "shape": b'{"summary": 5}',
                            "empty": b""}[damage])
    r = cli(*args, timeout=240)
    assert _assert_clean_exit(args, r), r.stderr
    fresh = [*args[:-1], str(root / "fresh")]
    assert cli(*fresh, timeout=240).returncode == 0
    assert _rows(root / "sw") == _rows(root / "fresh")
    if damage != "trace":
        assert "note: " in r.stderr, r.stderr
    _count("cache", f"{damage}: recomputed")


NAME_CHARS = st.sampled_from(list("/.%-_ab\x01\n\x7f\u0085é~"))


@_settings(ci_default=30)
@given(conn=st.text(NAME_CHARS, min_size=1, max_size=12), path=st.text(NAME_CHARS, min_size=1, max_size=12),
       per=st.sampled_from(["host", "interface", "link"]))
def test_a_name_cannot_take_a_capture_elsewhere(conn, path, per, tmp_path_factory):
    import tomllib

    import mptcplab

    root = tmp_path_factory.mktemp("names")
    doc = tomllib.loads(TWO_PATH.read_text())
    doc["duration"] = "200ms"
    doc["connections"][0]["name"] = conn
    doc["paths"][0]["name"] = path
    doc["connections"][0]["paths"][0] = path
    caps = root / "in" / "caps"
    try:
        mptcplab.run(doc, pcap_dir=caps, pcap_per=per)
    except mptcplab.ConfigError as e:
        assert "\n" not in str(e)
        assert _tree(root) == {}, _tree(root)
        _count("capture-names", f"{per}: refused")
        return
    files = _tree(root)
    outside = [k for k in files if not k.startswith("in/caps/") and k not in ("in", "in/caps")]
    assert not outside, outside
    assert all("/" not in k[len("in/caps/"):] and not Path(k).name.startswith(".") for k in files if k.startswith("in/caps/"))
    _count("capture-names", f"{per}: inside")


@pytest.fixture(scope="module", autouse=True)
def _report_files():
    yield
    out = os.environ.get("MPTCPLAB_FUZZ_REPORT_FILES")
    if out:
        Path(out).write_text(json.dumps({k: dict(v) for k, v in OUTCOMES.items() if k in ("files", "race", "cache", "capture-names")},
                                        indent=2) + "\n")
