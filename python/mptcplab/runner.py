"""Running one scenario through the engine."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mptcplab import _core
from mptcplab.capture import CaptureRequest
from mptcplab.errors import ConfigError, config_error, with_file
from mptcplab.results import RunResult
from mptcplab.scenario import Overrides, Scenario, load_scenario

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
    """
    capture = None if pcap_dir is None else CaptureRequest(Path(pcap_dir), pcap_per, snaplen)
    return run_capturing(scenario, seed, overrides, max_events, capture)


def run_capturing(
    scenario: str | Path | Mapping[str, Any] | Scenario,
    seed: int | None = None,
    overrides: Overrides = None,
    max_events: int | None = None,
    capture: CaptureRequest | None = None,
) -> RunResult:
    """:func:`run`, with the captures as a :class:`CaptureRequest` (whose label the errors
    name: the command line passes ``--pcap``)."""
    sc = load_scenario(scenario, overrides)
    if seed is not None and not 0 <= seed < 2**64:
        raise config_error("seed", f"{seed} is outside 0..2^64-1", sc.source)
    if capture is None:
        return RunResult(sc, *_run_core(sc, seed, max_events))
    capture.check()
    with capture.staged() as tmp:
        try:
            out = _run_core(sc, seed, max_events, str(tmp), capture.per, capture.snaplen)
        except OSError as e:
            raise capture.write_error(e, tmp) from None
    return RunResult(sc, *out)


def _run_core(sc: Scenario, seed: int | None, max_events: int | None, *capture: Any) -> tuple[Any, ...]:
    try:
        return _core.run(sc.to_json(), seed, max_events, *capture)
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
    (``sibling``), else ``path`` itself.
    """
    target = Path(path)
    shown = str(path)
    try:
        exists = os.path.lexists(target) and target.exists()
        if exists and not target.is_dir():
            raise config_error(label, f"{shown} exists and is not a directory")
        if exists and marker is not None and any(target.iterdir()) and not (target / marker).exists():
            verb = "overwrite it" if sibling else "write into it"
            raise config_error(label, f"{shown} exists and is not an mptcplab output directory; refusing to {verb}")
    except OSError as e:
        raise config_error(label, f"cannot use {shown}: {e.strerror}") from None
    if exists:
        where = target.absolute().parent if sibling else target
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".mptcplab-probe-", dir=where))
        except OSError as e:
            raise config_error(label, f"cannot write in {where}: {e.strerror}") from None
        return
    missing = [target.absolute()]
    while not os.path.lexists(missing[-1].parent) and missing[-1].parent != missing[-1]:
        missing.append(missing[-1].parent)
    created: list[Path] = []
    try:
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
    except FileExistsError:
        raise config_error(label, f"cannot create {shown}: {d} is in the way (a file or a broken link)") from None
    except NotADirectoryError:
        raise config_error(label, f"cannot create {shown}: {_file_in_the_way(d)} is not a directory") from None
    except OSError as e:
        raise config_error(label, f"cannot create {shown}: {e.strerror}") from None
    finally:
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass


def _file_in_the_way(path: Path) -> Path:
    """The nearest ancestor of ``path`` that exists (a file, when creating ``path`` failed with
    "not a directory")."""
    for p in path.parents:
        if os.path.lexists(p):
            return p
    return path
