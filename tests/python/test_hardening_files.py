"""Results that can be trusted and output folders that are never half-written (issue 34):
run keys that cover every input, stored runs that are checked before they are reused,
metric names that cannot collide, output folders written atomically (also by concurrent
commands and threads), and a full disk reported in one line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from conftest import CLI, TWO_PATH, mptcplab

import mptcplab as api
from mptcplab.results import RUN_FILES, flat_metrics, metric_name
from mptcplab.sweep import run_key
from mptcplab.sweep_store import load_record

# One path whose data direction follows a capacity trace (`second,bytes_per_second`).
TRACE_SCENARIO = """
name = "traced"
duration = "5s"
[[paths]]
name = "a"
delay = "10ms"
queue = "100 packets"
down = {{ rate_trace = "{trace}" }}
up = {{ rate = "10Mbit" }}
[[connections]]
name = "x"
kind = "mptcp"
paths = ["a"]
app = {{ kind = "bulk" }}
"""


def _trace(path: Path, bytes_per_s: int) -> None:
    path.write_text("".join(f"{s},{bytes_per_s}\n" for s in range(1, 6)))


@pytest.fixture
def traced(tmp_path: Path) -> tuple[Path, Path]:
    trace = tmp_path / "rate.csv"
    _trace(trace, 250_000)
    f = tmp_path / "traced.toml"
    f.write_text(TRACE_SCENARIO.format(trace=trace))
    return f, trace


def _goodputs(out: Path) -> list[float]:
    return pd.read_csv(out / "results.csv")["conn.x.goodput_bps"].tolist()


def _hidden(root: Path) -> list[str]:
    """Temporary (dot-named) files and folders anywhere under ``root``."""
    return [str(p.relative_to(root)) for p in root.rglob(".*")]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------
# Item 2: run keys cover every input; stored runs are checked
# ---------------------------------------------------------------------------------------


def test_resuming_after_a_trace_is_rewritten_runs_again_with_the_new_trace(traced, tmp_path):
    """The issue's input: a rate trace rewritten from 250 000 to 2 500 000 B/s between a sweep
    and its resumption. At 250 000 B/s the path carries at most 2 Mbit/s, so the first
    goodput is below that; the resumed sweep must give exactly a fresh sweep's number (same
    scenario, same seed), which the old trace's capacity cannot reach."""
    scenario, trace = traced
    out = tmp_path / "sw"
    args = ("sweep", str(scenario), "--vary", "duration=5s", "--out", str(out))
    assert mptcplab(*args).returncode == 0
    (before,) = _goodputs(out)
    assert 0 < before <= 250_000 * 8
    _trace(trace, 2_500_000)
    r = mptcplab(*args)
    assert r.returncode == 0, r.stderr
    assert "resuming:" not in r.stdout  # the old run's key no longer matches
    fresh = tmp_path / "fresh"
    assert mptcplab("sweep", str(scenario), "--vary", "duration=5s", "--out", str(fresh)).returncode == 0
    assert _goodputs(out) == _goodputs(fresh)
    assert _goodputs(out)[0] > 250_000 * 8


def test_the_run_key_covers_trace_content_engine_build_and_backend(traced, monkeypatch):
    scenario, trace = traced
    resolved = api.load_scenario(scenario).resolved_json
    key = run_key(resolved, 1)
    assert run_key(resolved, 1) == key  # stable
    assert run_key(resolved, 2) != key
    assert run_key(resolved, 1, "linux") != key
    _trace(trace, 250_001)
    assert run_key(resolved, 1) != key  # same path, other content
    _trace(trace, 250_000)
    assert run_key(resolved, 1) == key
    import sys

    monkeypatch.setattr(sys.modules["mptcplab.sweep"], "_engine_id", lambda: "another-build")
    assert run_key(resolved, 1) != key


def _corruptions(good: bytes, other: bytes) -> dict[str, bytes]:
    rec = json.loads(good)
    return {
        "bad JSON": b"{",
        "truncated": good[: len(good) // 2],
        "non-UTF-8": b"\xff\xfe" + good,
        "a list": b"[]",
        "wrong type": json.dumps({**rec, "run_key": 5}).encode(),
        "missing metrics": json.dumps({k: v for k, v in rec.items() if k != "metrics"}).encode(),
        "text metric": json.dumps({**rec, "metrics": {**rec["metrics"], "end_s": "soon"}}).encode(),
        "another run's record": other,
    }


@pytest.mark.parametrize("kind", ["bad JSON", "truncated", "non-UTF-8", "a list", "wrong type", "missing metrics",
                                  "text metric", "another run's record"])
def test_a_corrupt_stored_run_is_run_again_with_a_one_line_note(tmp_path, kind):
    out = tmp_path / "sw"
    args = ("sweep", str(TWO_PATH), "--vary", "seed=1,2", "--out", str(out))
    assert mptcplab(*args).returncode == 0
    table = pd.read_csv(out / "results.csv")
    first, second = (out / "runs" / f"{k}.json" for k in table["run_key"])
    good = first.read_bytes()
    first.write_bytes(_corruptions(good, second.read_bytes())[kind])
    r = mptcplab(*args)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and re.fullmatch(rf"note: {re.escape(str(first))}: .+; running it again", notes[0]), r.stderr
    assert "resuming: 1 of 2" in r.stdout
    again = pd.read_csv(out / "results.csv")
    pd.testing.assert_frame_equal(again.drop(columns="wall_s"), table.drop(columns="wall_s"))
    assert load_record(first, table["run_key"][0], int(table["seed"][0])) is not None  # stored whole again


def test_a_reproductions_cache_is_checked_and_replaced_when_its_sweep_changed(tmp_path, capsys):
    """`reproduce --out OUT` caches runs under OUT/<name>/cache/<cache>/ as sweep folders."""
    from mptcplab.experiments.base import Context, repeated

    ctx = Context(out=tmp_path / "fig")
    df = repeated(ctx, TWO_PATH, {"seed": [1, 2]}, 1, "runs")
    runs = ctx.out / "cache" / "runs" / "runs"
    (runs / f"{df['run_key'][0]}.json").write_text('{"run_key": []}')
    capsys.readouterr()
    again = repeated(ctx, TWO_PATH, {"seed": [1, 2]}, 1, "runs")
    assert "running it again" in capsys.readouterr().err
    assert again["conn.mptcp.goodput_bps"].tolist() == df["conn.mptcp.goodput_bps"].tolist()
    # Another version of the reproduction (other points) under the same cache name: replaced.
    other = repeated(ctx, TWO_PATH, {"seed": [3]}, 1, "runs")
    assert sorted(p.stem for p in runs.iterdir()) == other["run_key"].tolist()


# ---------------------------------------------------------------------------------------
# Item 3: metric names cannot collide
# ---------------------------------------------------------------------------------------

# The input: a second subflow on path `p` (named `p#2` before) beside a path really
# named `p#2`, and connection `x` on path `y.z` beside connection `x.y` on path `z`: five
# subflows that came out as three metric groups.
COLLIDING = {
    "duration": "2s",
    "paths": [{"name": n, "rate": "4Mbit", "delay": "10ms"} for n in ("p", "p#2", "y.z", "z")],
    "connections": [
        {"name": "x", "kind": "mptcp", "paths": ["p", "p", "p#2", "y.z"], "app": {"kind": "bulk"}},
        {"name": "x.y", "kind": "mptcp", "paths": ["z"], "app": {"kind": "bulk"}},
    ],
}


def test_five_subflows_give_five_metric_groups():
    res = api.run(COLLIDING)
    metrics = flat_metrics(res.summary)
    groups = {k.rsplit(".", 1)[0] for k in metrics if k.startswith("sf.") and k.endswith(".goodput_bps")}
    assert groups == {"sf.x.p", "sf.x.p#2", "sf.x.p%232", "sf.x.y%2Ez", "sf.x%2Ey.z"}
    # Each group holds its own subflow's numbers (subflow order on a shared path).
    subflows = sorted(res.summary["subflows"], key=lambda s: (s["connection"], s["subflow"]))
    expected = ["sf.x.p", "sf.x.p#2", "sf.x.p%232", "sf.x.y%2Ez", "sf.x%2Ey.z"]
    assert [metrics[f"{g}.goodput_bps"] for g in expected] == [s["goodput_bps"] for s in subflows]
    # Every number of every subflow, connection and link is kept: no name was written twice.
    fields = sum(sum(v is None or isinstance(v, int | float) for k, v in s.items() if k != "subflow") for s in subflows)
    assert sum(k.startswith("sf.") for k in metrics) == fields
    links = {k.rsplit(".", 1)[0] for k in metrics if k.startswith("link.")}
    assert links == {f"link.{metric_name(p)}.{d}" for p in ("p", "p#2", "y.z", "z") for d in ("up", "down")}


def test_ordinary_names_keep_their_column_names(tmp_path):
    df = api.sweep(TWO_PATH, {"seed": [1]})
    for col in ("conn.mptcp.goodput_bps", "conn.mptcp.ooo_delay.p99_s", "sf.mptcp.wifi.share", "sf.mptcp.cell.goodput_bps",
                "link.wifi.up.utilisation", "link.cell.down.queue_drops", "end_s", "events", "data_packets"):
        assert col in df.columns, col
    assert metric_name("wifi-2_b") == "wifi-2_b"
    assert metric_name("a%2E.#") == "a%252E%2E%23"  # `%` escaped first: the escape is reversible


# ---------------------------------------------------------------------------------------
# Item 5: output folders
# ---------------------------------------------------------------------------------------


def _complete_run_dir(out: Path) -> None:
    assert sorted(p.name for p in out.iterdir()) == sorted(RUN_FILES)
    summary = json.loads((out / "summary.json").read_text())
    assert json.loads((out / "run.json").read_text())["seed"] == summary["seed"]


def test_concurrent_runs_creating_the_same_new_out_all_succeed(tmp_path):
    """The issue's input: concurrent commands creating the same new --out (and its missing
    parents). The documented outcome: each command writes a whole folder and the last one to
    finish is what --out holds; no error at all, no temporary folder left."""
    out = tmp_path / "new" / "deeper" / "out"
    procs = [subprocess.Popen([str(CLI), "run", str(TWO_PATH), "--seed", str(s), "--out", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in range(8)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    for p in procs:
        p.stdout.close()  # type: ignore[union-attr]
        p.stderr.close()  # type: ignore[union-attr]
    assert all(rc == 0 for rc, _ in results), results
    _complete_run_dir(out)
    assert _hidden(tmp_path) == []


def test_threads_writing_one_run_folder_all_succeed(tmp_path):
    res = api.run(TWO_PATH, seed=5)
    out = tmp_path / "out"
    with ThreadPoolExecutor(8) as pool:
        assert all(p == out for p in pool.map(lambda _: res.to_dir(out), range(16)))
    _complete_run_dir(out)
    assert _hidden(tmp_path) == []


def test_concurrent_sweeps_into_the_same_new_out(tmp_path):
    """Six commands of the same sweep share the folder (each resumes what the others wrote);
    three others of a different sweep start at the same time: each of these either wins the
    folder or is refused in one line saying another command wrote a different sweep there
    (or that the folder holds one). The folder ends up whole: one sweep.json, its runs only,
    tables of all its runs."""
    out = tmp_path / "sw"
    same = ["sweep", str(TWO_PATH), "--vary", "seed=1,2,3", "--out", str(out)]
    other = ["sweep", str(TWO_PATH), "--vary", "seed=7,8", "--out", str(out)]
    argvs = [same] * 6 + [other] * 3
    procs = [subprocess.Popen([str(CLI), *a], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for a in argvs]
    outcomes = []
    for a, p in zip(argvs, procs, strict=True):
        _, err = p.communicate(timeout=300)
        outcomes.append((a is same, p.returncode, err))
    allowed = re.compile(r"error: --out: (another command wrote a different sweep to \S+ at the same time|\S+ holds a "
                         r"different sweep) \(its grid differs\); .*--replace.*\n")
    for _, rc, err in outcomes:
        assert rc == 0 or (rc == 2 and allowed.fullmatch(err)), err
    spec = json.loads((out / "sweep.json").read_text())
    winner = 3 if spec["grid"]["seed"] == [1, 2, 3] else 2
    # Commands of the winning sweep all succeeded; of the other, all were refused.
    assert all((rc == 0) == ((winner == 3) == is_same) for is_same, rc, _ in outcomes)
    table = pd.read_csv(out / "results.csv")
    assert len(table) == winner
    assert sorted(p.stem for p in (out / "runs").iterdir()) == sorted(table["run_key"])
    assert _hidden(tmp_path) == []


def test_out_naming_a_symbolic_link_is_followed(tmp_path):
    """The issue's input: --out naming a symlink to an earlier run. The link is followed: the
    folder it points to is replaced, the link stays, nothing `.NAME.old-*` is left."""
    target, link = tmp_path / "run-1", tmp_path / "latest"
    assert mptcplab("run", str(TWO_PATH), "--seed", "1", "--out", str(target)).returncode == 0
    link.symlink_to(target.name)
    r = mptcplab("run", str(TWO_PATH), "--seed", "2", "--out", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    assert json.loads((target / "summary.json").read_text())["seed"] == 2
    _complete_run_dir(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "run-1"]


@pytest.mark.parametrize("change", [
    ("--vary", "seed=1,3"),
    ("--repeat", "1"),
    ("--set", "duration=2s"),
])
def test_a_different_sweep_in_out_is_refused_unless_replace(tmp_path, change):
    """The issue's input: another sweep (other grid, fewer repeats, other scenario) run into
    an existing sweep folder."""
    out = tmp_path / "sw"
    base = ["sweep", str(TWO_PATH), "--vary", "seed=1,2", "--repeat", "2", "--out", str(out)]
    assert mptcplab(*base).returncode == 0
    before = _tree(out)
    args = base[:2] + {"--vary": list(change) + base[4:], "--repeat": base[2:4] + list(change) + base[6:],
                       "--set": base[2:] + list(change)}[change[0]]
    r = mptcplab(*args)
    assert r.returncode == 2
    what = {"--vary": "grid", "--repeat": "repeat count", "--set": "scenario"}[change[0]]
    assert r.stderr == f"error: --out: {out} holds a different sweep (its {what} differs); choose another --out, " \
                       "or add --replace to replace it\n"
    assert _tree(out) == before
    r = mptcplab(*args, "--replace")
    assert r.returncode == 0, r.stderr
    table = pd.read_csv(out / "results.csv")
    assert sorted(p.stem for p in (out / "runs").iterdir()) == sorted(table["run_key"])
    assert _hidden(tmp_path) == []
    assert "resuming:" in mptcplab(*args).stdout  # the same sweep again: resumed, no flag needed


def test_the_same_sweep_extended_resumes_without_a_flag(tmp_path):
    """More points or repeats, every stored one kept, is the same sweep grown: 2 points x 2
    repeats are stored, 3 x 3 reuses those 4 of 9."""
    out = tmp_path / "sw"
    assert mptcplab("sweep", str(TWO_PATH), "--vary", "seed=1,2", "--repeat", "2", "--out", str(out)).returncode == 0
    r = mptcplab("sweep", str(TWO_PATH), "--vary", "seed=1,2,3", "--repeat", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "resuming: 4 of 9" in r.stdout
    spec = json.loads((out / "sweep.json").read_text())
    assert spec["grid"] == {"seed": [1, 2, 3]} and spec["repeat"] == 3
    assert len(pd.read_csv(out / "results.csv")) == 9


def test_a_sweep_folder_without_an_identity_is_refused_unless_replace(tmp_path):
    out = tmp_path / "sw"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps({"kind": "sweep", "backend": "sim", "grid": {"seed": [1]}, "repeat": 1}))
    r = mptcplab("sweep", str(TWO_PATH), "--vary", "seed=1", "--out", str(out))
    assert r.returncode == 2 and "earlier mptcplab" in r.stderr and "--replace" in r.stderr
    assert mptcplab("sweep", str(TWO_PATH), "--vary", "seed=1", "--out", str(out), "--replace").returncode == 0


# ---------------------------------------------------------------------------------------
# Item 9: a full disk
# ---------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path, request: pytest.FixtureRequest):
    """A real tmpfs of 64 KiB, or of the size a test gives as the fixture's parameter (root
    mounts it)."""
    size = getattr(request, "param", "64k")
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _fill(mnt: Path, leave: int) -> Path:
    """Fills the file system but ``leave`` bytes (tmpfs counts whole 4 KiB pages)."""
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def test_run_out_on_a_full_disk_is_one_line_and_keeps_the_earlier_output(small_disk):
    out = small_disk / "out"
    assert mptcplab("run", str(TWO_PATH), "--seed", "1", "--out", str(out), "--set", "output.timeseries=1s").returncode == 0
    before = _tree(out)
    _fill(small_disk, 8192)  # room for the first small files of the new run, not for all
    r = mptcplab("run", str(TWO_PATH), "--seed", "2", "--out", str(out), "--set", "output.timeseries=1s")
    assert r.returncode == 2
    assert re.fullmatch(rf"error: {re.escape(str(out))}/[a-z_.]+: no space left on device\n", r.stderr), r.stderr
    assert _tree(out) == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out"]


# A sweep's results.parquet alone is about 50 KB (pyarrow's metadata for 116 columns), so the
# finished sweep needs more than 64 KiB: 8 stored runs of one 4 KiB page each, sweep.json,
# results.csv and the parquet table with its temporary copy fit in 256 KiB.
@pytest.mark.parametrize("small_disk", ["256k"], indirect=True)
def test_a_sweep_on_a_full_disk_is_one_line_and_leaves_only_whole_files(small_disk):
    out = small_disk / "sw"
    filler = _fill(small_disk, 16384)  # sweep.json and three runs, then the disk is full
    args = ("sweep", str(TWO_PATH), "--vary", "seed=range(1,8,8)", "--out", str(out))
    r = mptcplab(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert re.fullmatch(rf"error: {re.escape(str(out))}/\S+: no space left on device\n", r.stderr), r.stderr
    assert _hidden(small_disk) == []
    for f in (out / "runs").iterdir():  # every stored run is whole
        rec = json.loads(f.read_text())
        assert load_record(f, rec["run_key"], rec["seed"]) is not None
    if (out / "results.csv").exists():  # tables are written whole: one row per stored run
        assert len(pd.read_csv(out / "results.csv")) == len(list((out / "runs").iterdir()))
    filler.unlink()
    r = mptcplab(*args)
    assert r.returncode == 0, r.stderr
    assert "resuming: " in r.stdout
    assert len(pd.read_csv(out / "results.csv")) == 8


def test_a_new_run_out_on_a_full_disk_leaves_nothing(small_disk):
    _fill(small_disk, 0)
    r = mptcplab("run", str(TWO_PATH), "--out", str(small_disk / "out"))
    assert r.returncode == 2 and "no space left on device" in r.stderr and "\n" not in r.stderr[:-1], r.stderr
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def test_threads_sweeping_into_one_folder_share_it(tmp_path):
    out = tmp_path / "sw"
    frames: list[pd.DataFrame] = []
    lock = threading.Lock()

    def one() -> None:
        df = api.sweep(TWO_PATH, {"seed": [1, 2]}, out=out)
        with lock:
            frames.append(df.drop(columns="wall_s"))

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(frames) == 4
    for df in frames[1:]:
        pd.testing.assert_frame_equal(df, frames[0])
    assert _hidden(tmp_path) == []
