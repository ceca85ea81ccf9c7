"""Running one scenario through the engine."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mptcplab import _core
from mptcplab._api_checks import check_arguments
from mptcplab.errors import ConfigError, config_error, with_file
from mptcplab.results import RunResult
from mptcplab.scenario import Overrides, Scenario, load_scenario

if TYPE_CHECKING:  # imported when captures are asked for: `import mptcplab` stays as fast
    from mptcplab.capture import CaptureRequest

__all__ = ["check_output_dir", "run", "run_capturing"]


def run(
    scenario: str | Path | Mapping[str, Any] | Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    max_events: int | None = None,
    *,
    pcap_dir: str | Path | None = None,
    pcap_per: str = "host",
    snaplen: int | None = None,
    sched_log: bool = False,
) -> RunResult:
    """Runs a scenario (file, bundled name, dict or :class:`Scenario`) to completion.

    ``seed`` replaces the scenario's seed (the same seed always gives the same result);
    ``overrides`` are key-path assignments as in :func:`load_scenario`. With
    ``max_events``, a run that needs more events (the engine's unit of work) raises
    ``mptcplab._core.WorkBudgetExceeded`` instead of running on. The simulation runs
    without holding the interpreter lock, and Ctrl-C stops it at once (KeyboardInterrupt).

    With ``pcap_dir``, packet captures (pcap, real TCP/MPTCP headers) are written into that
    directory, which must be new or empty: ``pcap_per`` ``"host"`` (one file per host),
    ``"interface"`` or ``"link"``, ``snaplen`` bytes kept per packet (headers always whole).
    They appear there whole when the run succeeded, and nothing is left when it fails (a
    full disk is a :class:`ConfigError` naming the file). A scenario cannot ask for captures.

    With ``sched_log``, every hand-off of data to a subflow is recorded
    (:attr:`RunResult.sched_trace`, as ``run --trace-sched``).
    """
    check_arguments("run", locals())
    capture = None
    if pcap_dir is not None:
        from mptcplab.capture import CaptureRequest

        capture = CaptureRequest(Path(pcap_dir), pcap_per, snaplen)
    return run_capturing(scenario, seed, overrides, max_events, capture, sched_log=sched_log)


def run_capturing(
    scenario: str | Path | Mapping[str, Any] | Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    max_events: int | None = None,
    capture: CaptureRequest | None = None,
    sched_log: bool = False,
) -> RunResult:
    """:func:`run`, with the captures as a :class:`CaptureRequest` (whose label the errors
    name: the command line passes ``--pcap``); ``sched_log`` records every hand-off of data
    to a subflow (:attr:`RunResult.sched_trace`)."""
    sc = load_scenario(scenario, overrides)
    if seed is not None and not 0 <= seed < 2**64:
        raise config_error("seed", f"{seed} is outside 0..2^64-1", sc.source)
    if capture is None:
        return RunResult(sc, *_run_core(sc, seed, max_events, sched_log=sched_log))
    capture.check()
    with capture.staged() as tmp:
        try:
            out = _run_core(sc, seed, max_events, str(tmp), capture.per, capture.snaplen, sched_log=sched_log)
        except OSError as e:
            raise capture.write_error(e, tmp) from None
    return RunResult(sc, *out)


def _run_core(sc: Scenario, seed: int | None, max_events: int | None, *capture: Any,
              sched_log: bool = False) -> tuple[Any, ...]:
    try:
        return _core.run(sc.to_json(), seed, max_events, *capture, sched_log=sched_log)
    except ConfigError as e:
        raise with_file(e, sc.source) from None


def check_output_dir(path: str | Path, label: str, *, marker: str | None = None, sibling: bool = True) -> None:
    """Refuses, with a :class:`ConfigError` naming ``label`` (``--out``), an output directory
    that could not be written, before any work is done; leaves nothing behind.

    A missing ``path`` is created with its missing parents and removed again (so a file in
    the way, a read-only or virtual file system, or an over-long name is found now). An
    existing ``path`` must be a directory, empty or holding ``marker`` (a previous output)
    when ``marker`` is given. Where the output is written is probed by creating and removing
    a directory: the parent of ``path`` when it is replaced through a temporary sibling
    (``sibling``), else ``path`` itself. A symbolic link at ``path`` is followed (the outputs
    write into the directory it points to); a broken one is refused.

    Safe when other commands check or write the same path at the same time: a directory
    another command creates meanwhile is taken as found (and left to it), and a parent that
    another command's check removes meanwhile is checked again.
    """
    from mptcplab.outdir import follow

    shown = str(path)
    if os.path.islink(path) and not os.path.exists(path):
        raise config_error(label, f"{shown} is a broken symbolic link")
    target = follow(Path(path))
    if os.path.realpath(target) == os.path.realpath(os.getcwd()):
        raise config_error(label, f"{shown} is the current directory, which an output cannot replace or share; "
                           "name a folder for it, e.g. out")
    if sibling and os.path.ismount(target):
        raise config_error(label, f"{shown} is a mount point, which cannot be replaced; name a folder inside it")
    for _ in range(50):
        try:
            _check_once(target, shown, label, marker, sibling)
            return
        except FileNotFoundError:
            continue  # another command's check removed a parent it had created; look again
    raise config_error(label, f"cannot create {shown}: its parent directories keep disappearing")


def _check_once(target: Path, shown: str, label: str, marker: str | None, sibling: bool) -> None:
    from mptcplab.outdir import PROBE_PREFIX, is_empty

    try:
        try:
            exists, is_dir = True, stat.S_ISDIR(os.stat(target).st_mode)  # one look: another command may change it
        except (FileNotFoundError, NotADirectoryError):
            exists = is_dir = False  # missing (below a file: creating it says so)
        if exists and not is_dir:
            raise config_error(label, f"{shown} exists and is not a directory")
        if exists and marker is not None and not is_empty(target) and not (target / marker).exists():
            verb = "overwrite it" if sibling else "write into it"
            raise config_error(label, f"{shown} exists and is not an mptcplab output directory; refusing to {verb}")
    except FileNotFoundError:
        raise
    except OSError as e:
        raise config_error(label, f"cannot use {shown}: {e.strerror}") from None
    if exists:
        where = target.absolute().parent if sibling else target
        try:
            os.rmdir(tempfile.mkdtemp(prefix=PROBE_PREFIX, dir=where))
        except FileNotFoundError:
            raise
        except OSError as e:
            raise config_error(label, f"cannot write in {where}: {e.strerror}") from None
        return
    missing = [target.absolute()]
    while not os.path.lexists(missing[-1].parent) and missing[-1].parent != missing[-1]:
        missing.append(missing[-1].parent)
    created: list[Path] = []
    try:
        for d in reversed(missing):
            try:
                d.mkdir()
                created.append(d)
            except FileExistsError:
                # One look at what is there (another command may be making and removing it):
                # gone again means look again; a directory (or a link to one) is another
                # command's; anything else is in the way.
                try:
                    mode = os.lstat(d).st_mode
                except FileNotFoundError:
                    raise FileNotFoundError(d) from None
                if not (stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and d.is_dir())):
                    raise
    except FileExistsError:
        raise config_error(label, f"cannot create {shown}: {d} is in the way (a file or a broken link)") from None
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise config_error(label, f"cannot create {shown}: {_file_in_the_way(d)} is not a directory") from None
    except OSError as e:
        raise config_error(label, f"cannot create {shown}: {e.strerror}") from None
    finally:
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass  # another command is writing in it now


def _file_in_the_way(path: Path) -> Path:
    """The nearest ancestor of ``path`` that exists (a file, when creating ``path`` failed with
    "not a directory")."""
    for p in path.parents:
        if os.path.lexists(p):
            return p
    return path
