"""Sweeps on a Dask cluster (``mptcplab sweep --engine dask``, ``sweep(..., engine="dask")``).

The runs of a sweep are independent, deterministic tasks of a second to a minute; the cluster
only has to place them, survive losing a worker and hand the results back as they finish.
Dask's distributed scheduler does that (see the README's dependency table for why Dask and not
Ray). With ``address`` the sweep uses an existing cluster (``dask scheduler`` and ``dask
worker ADDRESS`` on each machine, or any Dask deployment); without it, a local cluster of
``jobs`` worker processes (one thread each) is started for the sweep and stopped after it.

What the engine guarantees, and how:

- **Same rows as the process pool.** A worker runs the same function on the same task
  (scenario JSON and seed); every worker checks that it runs the client's engine build, since a
  run's key names the build (:func:`mptcplab.sweep.run_key`): a worker with another build is
  refused with the ``--address`` error, never mixed in.
- **No lost, no duplicated rows.** Each run is one task keyed by its run key. A worker that
  dies takes its running tasks with it; the scheduler runs them again on another worker
  (Dask's ``allowed-failures``: a task whose workers died more than that many times fails).
  The client stores each result once, under its run key, as it arrives.
- **Results stream to disk** through the sweep's ``finish`` callback (``runs/<key>.json``,
  written atomically), so a lost client or cluster loses no finished run; the same command
  resumes.
- **Bounded submission.** At most :data:`IN_FLIGHT_PER_THREAD` tasks per worker thread are
  queued on the cluster at a time (and never fewer than :data:`MIN_IN_FLIGHT`), so a sweep of
  100 000 runs neither ships every scenario up front nor leaves workers idle.

Workers need this build of mptcplab installed and the scenario's trace files at the same
paths (relative paths are resolved in the directory each worker was started in): a local
cluster inherits both from the client.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from mptcplab.errors import config_error

__all__ = [
    "CONNECT_TIMEOUT_S", "ENGINES", "IN_FLIGHT_PER_THREAD", "MIN_IN_FLIGHT", "NO_WORKERS_TIMEOUT_S", "SCHEMES", "Cluster",
    "ClusterLost", "check_address", "run_task_checked",
]

#: The sweep engines: worker processes on this machine, or a Dask cluster.
ENGINES = ("local", "dask")
#: Tasks queued on the cluster per worker thread: enough that a worker always has its next
#: run at hand (a run's result travels back while the next one starts), few enough that the
#: client never ships a whole grid's scenarios at once.
IN_FLIGHT_PER_THREAD = 4
MIN_IN_FLIGHT = 16
#: How long the client waits to reach an existing scheduler before giving up.
CONNECT_TIMEOUT_S = 10
#: How long a cluster may have no worker at all before the sweep gives up on it: a local
#: cluster restarts a lost worker within seconds, an adaptive deployment may take a minute or
#: two to bring one up.
NO_WORKERS_TIMEOUT_S = 120.0
#: How often the client looks for finished runs while none has arrived, and how often it then
#: asks the scheduler whether any worker is left.
POLL_S = 0.02
WORKER_CHECK_S = 1.0


class ClusterLost(Exception):
    """The cluster went away during the sweep (its scheduler stopped or became unreachable)."""


#: Address schemes a sweep connects with: plain TCP (an address without a scheme is TCP too).
#: Dask knows others, each needing what a sweep does not configure: ``tls``/``wss``
#: certificates (a ``Security`` object), ``ucx`` its own libraries and network, ``ws`` the
#: scheduler started with it; ``inproc`` reaches only a scheduler inside this process.
SCHEMES = ("tcp",)


def check_address(address: str) -> None:
    """Refuses (``ConfigError`` for ``--address``) an address that is not ``[tcp://]HOST:PORT``
    before any connection is tried: Dask's own errors for the other schemes are tracebacks."""
    if not address.strip() or any(c.isspace() or not c.isprintable() for c in address):
        raise config_error("--address", f"`{address}` is not a scheduler address (expected tcp://HOST:PORT)")
    scheme, sep, _ = address.rpartition("://")
    if sep and scheme not in SCHEMES:
        raise config_error("--address", f"`{scheme}://` addresses are not supported; supported: "
                           f"{', '.join(s + '://HOST:PORT' for s in SCHEMES)} (or HOST:PORT)")


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise config_error("--engine", "dask is not installed; install the cluster extra (pip install "
                           "'mptcplab[cluster]') or use --engine local") from None
    return distributed


def run_task_checked(task: Any, backend: str, engine_id: str) -> dict[str, Any]:
    """The cluster task: one run, after checking that this worker runs the client's build."""
    from mptcplab.sweep import _engine_id, _run_task

    here = _engine_id()
    if here != engine_id:
        raise config_error("--address", f"a worker runs another mptcplab build (engine {here}, this client {engine_id}); "
                           "install the same build on every worker")
    return _run_task(task, backend)


def _quiet(distributed: Any) -> None:
    """Silences the cluster's own logging (worker restarts, lost connections, its tracebacks):
    what matters reaches the user as the sweep's one-line error."""
    for name in list(logging.root.manager.loggerDict):
        if name.split(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__).rstrip(".")


class Cluster:
    """A connection to a Dask cluster: the one at ``address``, or a local one of ``workers``
    worker processes started here (and stopped by :meth:`close`). Raises ``ConfigError`` if
    Dask is not installed or the address cannot be reached."""

    def __init__(self, address: str | None, workers: int) -> None:
        self.distributed = _import_distributed()
        _quiet(self.distributed)
        self.address = address
        #: The option a cluster failure is reported against, and how to name the cluster.
        self.option = "--address" if address else "--engine"
        self.where = f"the cluster at {address}" if address else "the local cluster"
        self.local = None
        if address is None:
            self.local = self.distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                       dashboard_address=None, silence_logs=logging.CRITICAL + 1)
            self.client = self.distributed.Client(self.local)
        else:
            check_address(address)
            try:
                self.client = self.distributed.Client(address, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError, TypeError) as e:
                raise config_error("--address", f"cannot reach a Dask scheduler at {address} ({_first_line(e)}); start "
                                   "one (`dask scheduler`, then `dask worker ADDRESS` on each machine) or leave out "
                                   "--address for a local cluster") from None
        _quiet(self.distributed)

    def threads(self) -> int:
        """Worker threads the cluster has now."""
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # a cluster that just went away: the run loop reports it
            return 1

    def run(self, tasks: Iterable[Any], finish: Callable[[dict[str, Any]], None], *, backend: str,
            engine_id: str) -> None:
        """Runs ``tasks``, calling ``finish(record)`` once per task as results arrive. Raises
        :class:`ClusterLost` if the cluster goes away, :class:`~mptcplab.sweep.RunFailed` for a
        run the engine failed, ``ConfigError`` for a worker of another build, and
        ``KeyboardInterrupt`` as it came (the queued tasks are cancelled first)."""
        d = self.distributed
        client = self.client
        pending = iter(tasks)
        window = max(MIN_IN_FLIGHT, IN_FLIGHT_PER_THREAD * self.threads())

        def submit(t: Any) -> Any:
            # The run key is the task's name on the cluster: one task per run, whatever retries.
            return client.submit(run_task_checked, t, backend, engine_id, key=f"mptcplab-run-{t.key}", pure=False)

        try:
            queue = d.as_completed([submit(t) for _, t in zip(range(window), pending, strict=False)])
            health: list[float | None] = [None, None]
            while not queue.is_empty():
                batch = queue.next_batch(block=False)
                if not batch:
                    # Nothing finished: a cluster left without workers would wait forever.
                    self._check_workers(health)
                    time.sleep(POLL_S)
                    continue
                for fut in batch:
                    finish(self._result(fut, health))
                    fut.release()
                    nxt = next(pending, None)
                    if nxt is not None:
                        queue.add(submit(nxt))
        except KeyboardInterrupt:
            self._cancel()
            raise

    def _result(self, fut: Any, health: list[float | None]) -> dict[str, Any]:
        """A finished task's record. The record lives on the worker that computed it until the
        client fetches it: if that worker died in between, the scheduler computes the task again,
        so the fetch waits, in steps of :data:`WORKER_CHECK_S`, checking between them that the
        cluster still has a worker (else it would wait forever)."""
        d = self.distributed
        while True:
            try:
                return fut.result(timeout=WORKER_CHECK_S)
            except d.client.FutureCancelledError as e:
                raise ClusterLost(_first_line(e)) from None
            except d.KilledWorker as e:
                raise ClusterLost(f"{type(e).__name__}: {_first_line(e)}") from None
            except TimeoutError as e:
                if fut.status == "error":  # the task itself raised it: not the fetch's time limit
                    raise ClusterLost(f"{type(e).__name__}: {_first_line(e)}") from None
                self._check_workers(health)
            except OSError as e:
                raise ClusterLost(f"{type(e).__name__}: {_first_line(e)}") from None

    def _check_workers(self, state: list[float | None]) -> None:
        """While results wait, at most every :data:`WORKER_CHECK_S`: asks the scheduler for its
        workers. ``state`` = [last check, first time seen without workers]; raises
        :class:`ClusterLost` once the cluster has had none for :data:`NO_WORKERS_TIMEOUT_S`."""
        now = time.monotonic()
        last, since = state
        if last is not None and now - last < WORKER_CHECK_S:
            return
        state[0] = now
        try:
            workers = len(self.client.nthreads())
        except Exception as e:  # the scheduler went away: the futures say so, or this does
            raise ClusterLost(f"{type(e).__name__}: {_first_line(e)}") from None
        if workers:
            state[1] = None
        elif since is None:
            state[1] = now
        elif now - since >= NO_WORKERS_TIMEOUT_S:
            raise ClusterLost(f"no workers for {NO_WORKERS_TIMEOUT_S:g} s; start workers with `dask worker "
                              f"{self.address or 'ADDRESS'}`")

    def _cancel(self) -> None:
        try:
            futures = list(self.client.futures.values())
            if futures:
                self.client.cancel(futures, force=True)
        except Exception:  # the cluster may be gone already; nothing left to cancel then
            pass

    def close(self) -> None:
        """Disconnects, and stops the local cluster if this started one (best effort: a
        cluster that died cannot be closed cleanly)."""
        try:
            self.client.close(timeout=5)
        except Exception:
            pass
        if self.local is not None:
            try:
                self.local.close()
            except Exception:
                pass
