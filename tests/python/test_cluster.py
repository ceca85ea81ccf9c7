"""The Dask sweep engine on real local clusters started by the tests (a scheduler and worker
processes on this machine): the same rows as the process pool, a worker killed mid-sweep,
resume after Ctrl-C, a cluster that dies, and the one-line errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO, TWO_PATH, mptcplab

distributed = pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not installed")

from mptcplab.errors import ConfigError  # noqa: E402
from mptcplab.sweep import SweepInterrupted, sweep  # noqa: E402

DASK = Path(sys.executable).with_name("dask")
# Runs of a few tenths of a second: long enough that a worker killed between two results is
# almost surely in the middle of its next run, short enough for CI.
SLOW = ["duration=1000s", "paths.wifi.rate=40Mbit", "paths.cell.rate=10Mbit", "output.timeseries=100s"]
GRID = {"connections.mptcp.scheduler": ["minrtt", "roundrobin", "blest"], "connections.mptcp.cc": ["lia", "olia"]}
REPEAT = 3  # 18 runs


def _scenario():
    from mptcplab.scenario import load_scenario

    return load_scenario(TWO_PATH, SLOW)


def _same_rows(a, b) -> bool:
    """Rows equal in every column but ``wall_s`` (each run's wall-clock time), in the same order."""
    cols = [c for c in a.columns if c != "wall_s"]
    return list(a.columns) == list(b.columns) and a[cols].reset_index(drop=True).equals(b[cols].reset_index(drop=True))


class LocalDask:
    """A scheduler and ``workers`` one-thread worker processes, started as a user would (``dask
    scheduler``, ``dask worker``), in their own process group so that teardown kills them all."""

    def __init__(self, tmp: Path, workers: int = 2) -> None:
        self.file = tmp / "scheduler.json"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.scheduler = self._start([str(DASK), "scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(self.file)])
        deadline = time.monotonic() + 60
        while not self.file.exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        import json

        self.address = json.loads(self.file.read_text())["address"]
        self._start([str(DASK), "worker", self.address, "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard"])
        with distributed.Client(self.address, timeout=30) as c:
            c.wait_for_workers(workers, timeout=60)
            #: Worker address → process id.
            self.workers = dict(sorted(c.run(os.getpid).items()))

    def _start(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        return p

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)

    def kill_workers(self) -> None:
        """Every worker and its nanny (which would start a new one)."""
        for p in self.procs[1:]:
            os.killpg(p.pid, signal.SIGKILL)

    def close(self) -> None:
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=30)


@pytest.fixture
def cluster(tmp_path: Path):
    c = LocalDask(tmp_path)
    yield c
    c.close()


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    """The process-pool engine's rows for the grid: the reference."""
    return sweep(_scenario(), GRID, repeat=REPEAT, jobs=2, out=tmp_path_factory.mktemp("local"))


def test_existing_cluster_gives_the_process_pool_rows(cluster, local_rows, tmp_path):
    df = sweep(_scenario(), GRID, repeat=REPEAT, out=tmp_path / "s", engine="dask", address=cluster.address)
    assert _same_rows(df, local_rows)
    assert len(list((tmp_path / "s" / "runs").iterdir())) == len(df) == 18


def test_local_cluster_gives_the_process_pool_rows(local_rows, tmp_path):
    df = sweep(_scenario(), GRID, repeat=REPEAT, jobs=2, out=tmp_path / "s", engine="dask")
    assert _same_rows(df, local_rows)


def test_worker_killed_mid_sweep_every_row_once(cluster, local_rows, tmp_path):
    addr, victim = next(iter(cluster.workers.items()))
    running: list[str] = []
    watcher = distributed.Client(cluster.address, timeout=30)

    def progress(done: int, total: int) -> None:
        # After the second result both workers are busy with their next runs: kill one, and
        # note the runs it held (the scheduler's view), which must be run again elsewhere.
        if done >= 2 and not running:
            running.extend(str(k) for k in watcher.processing(workers=[addr])[addr])
            os.kill(victim, signal.SIGKILL)

    try:
        df = sweep(_scenario(), GRID, repeat=REPEAT, out=tmp_path / "s", engine="dask", address=cluster.address,
                   progress=progress)
    finally:
        watcher.close()
    assert running, "the killed worker held no run"
    assert {k.removeprefix("mptcplab-run-") for k in running} <= set(df.run_key)
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)
    assert df.run_key.is_unique and len(df) == 18
    assert _same_rows(df, local_rows)
    assert len(list((tmp_path / "s" / "runs").iterdir())) == 18


def test_resume_after_ctrl_c_redoes_nothing_finished(cluster, local_rows, tmp_path):
    out = tmp_path / "s"
    stop_at = 5

    def interrupt(done: int, total: int) -> None:
        if done >= stop_at:
            raise KeyboardInterrupt

    with pytest.raises(SweepInterrupted) as e:
        sweep(_scenario(), GRID, repeat=REPEAT, out=out, engine="dask", address=cluster.address, progress=interrupt)
    assert e.value.done == stop_at
    kept = {p.name: p.read_text() for p in (out / "runs").iterdir()}
    assert len(kept) == stop_at
    calls: list[int] = []
    df = sweep(_scenario(), GRID, repeat=REPEAT, out=out, engine="dask", address=cluster.address,
               progress=lambda done, total: calls.append(done))
    # The resumed sweep starts from the kept runs and computes only the others.
    assert calls[0] == stop_at and calls[-1] == 18 and len(calls) == 1 + 18 - stop_at
    assert all((out / "runs" / name).read_text() == text for name, text in kept.items())
    assert _same_rows(df, local_rows)


def test_cluster_that_dies_keeps_finished_rows(cluster, tmp_path):
    out = tmp_path / "s"

    def progress(done: int, total: int) -> None:
        if done == 3:
            cluster.kill_scheduler()

    with pytest.raises(ConfigError) as e:
        sweep(_scenario(), GRID, repeat=REPEAT, out=out, engine="dask", address=cluster.address, progress=progress)
    assert e.value.path == "--address"
    assert "lost the cluster" in e.value.message and "run the same command again" in e.value.message
    import pandas as pd

    kept = len(list((out / "runs").iterdir()))
    assert 3 <= kept < 18
    assert len(pd.read_csv(out / "results.csv")) == kept


def test_cluster_left_without_workers_keeps_finished_rows(cluster, tmp_path, monkeypatch):
    import mptcplab.cluster

    monkeypatch.setattr(mptcplab.cluster, "NO_WORKERS_TIMEOUT_S", 2.0)
    out = tmp_path / "s"

    def progress(done: int, total: int) -> None:
        if done == 3:
            cluster.kill_workers()

    t0 = time.monotonic()
    with pytest.raises(ConfigError) as e:
        sweep(_scenario(), GRID, repeat=REPEAT, out=out, engine="dask", address=cluster.address, progress=progress)
    assert e.value.path == "--address" and "no workers for 2 s" in e.value.message
    assert time.monotonic() - t0 < 60
    kept = len(list((out / "runs").iterdir()))
    assert 3 <= kept < 18


def test_a_result_lost_with_its_workers_ends_the_sweep(monkeypatch):
    """A finished run's record stays on its worker until the client fetches it. If every worker
    dies in between, the scheduler must compute the run again and has nowhere to do so: the
    fetch must end in the "no workers" error, not wait forever (the race the test above meets
    only now and then, mostly on a busy machine). Driven with a future whose fetch never
    completes and a cluster that reports no workers."""
    import mptcplab.cluster
    from mptcplab.cluster import Cluster, ClusterLost

    monkeypatch.setattr(mptcplab.cluster, "NO_WORKERS_TIMEOUT_S", 0.3)
    monkeypatch.setattr(mptcplab.cluster, "WORKER_CHECK_S", 0.05)

    class Lost:
        status = "lost"

        def result(self, timeout=None):
            time.sleep(timeout)
            raise TimeoutError

    class NoWorkers:
        def nthreads(self):
            return {}

    c = Cluster.__new__(Cluster)
    c.distributed, c.client, c.address = distributed, NoWorkers(), "tcp://example:8786"
    t0 = time.monotonic()
    with pytest.raises(ClusterLost, match="no workers for 0.3 s"):
        c._result(Lost(), [None, None])
    assert time.monotonic() - t0 < 5


def _one_error_line(r: subprocess.CompletedProcess[str], starts: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(starts), r.stderr
    assert "Traceback" not in r.stderr


def test_cli_cluster_dies_one_line_exit_2(cluster, tmp_path):
    out = tmp_path / "s"

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            runs = out / "runs"
            if runs.is_dir() and len(list(runs.iterdir())) >= 2:
                cluster.kill_scheduler()
                return
            time.sleep(0.02)

    t = threading.Thread(target=killer)
    t.start()
    args = ["sweep", str(TWO_PATH), *(a for s in SLOW for a in ("--set", s)), "--vary",
            "connections.mptcp.scheduler=minrtt,roundrobin,blest", "--repeat", "6", "--engine", "dask",
            "--address", cluster.address, "--out", str(out)]
    r = mptcplab(*args)
    t.join()
    _one_error_line(r, "error: --address: lost the cluster at ")
    assert len(list((out / "runs").iterdir())) >= 2


def test_cli_unreachable_address_writes_nothing(tmp_path):
    out = tmp_path / "s"
    r = mptcplab("sweep", str(TWO_PATH), "--vary", "connections.mptcp.scheduler=minrtt,blest", "--engine", "dask",
                 "--address", "tcp://127.0.0.1:9", "--out", str(out))
    _one_error_line(r, "error: --address: cannot reach a Dask scheduler at tcp://127.0.0.1:9")
    assert not out.exists()


def test_cli_address_needs_dask_engine(tmp_path):
    r = mptcplab("sweep", str(TWO_PATH), "--vary", "connections.mptcp.scheduler=minrtt,blest", "--address",
                 "tcp://127.0.0.1:9", "--out", str(tmp_path / "s"))
    _one_error_line(r, "error: --address: needs --engine dask")


def test_cli_unknown_engine(tmp_path):
    r = mptcplab("sweep", str(TWO_PATH), "--vary", "connections.mptcp.scheduler=minrtt,blest", "--engine", "ray",
                 "--out", str(tmp_path / "s"))
    _one_error_line(r, "error: --engine: ")


def test_engine_not_installed_names_the_extra(tmp_path):
    """Without Dask (its import made to fail), the engine is refused with how to install it."""
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "from mptcplab.cli import main\n"
        f"main(['sweep', {str(TWO_PATH)!r}, '--vary', 'connections.mptcp.scheduler=minrtt,blest', '--engine', 'dask', "
        f"'--out', {str(tmp_path / 's')!r}])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    _one_error_line(r, "error: --engine: dask is not installed")
    assert "mptcplab[cluster]" in r.stderr
    assert not (tmp_path / "s").exists()


def test_a_worker_of_another_build_is_refused():
    """The task checks the worker's engine build against the client's before running: a run
    key names the build, so a row from another build would be filed under a key it does not
    belong to."""
    from mptcplab.cluster import run_task_checked
    from mptcplab.sweep import _engine_id, _plan

    task = _plan(_scenario(), [{}], 1)[0]
    with pytest.raises(ConfigError) as e:
        run_task_checked(task, "sim", "0" * 16)
    assert e.value.path == "--address" and "another mptcplab build" in e.value.message
    assert run_task_checked(task, "sim", _engine_id())["run_key"] == task.key


def test_import_stays_light():
    """``import mptcplab`` and its sweep module load no cluster code."""
    code = "import sys, mptcplab, mptcplab.sweep; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr
