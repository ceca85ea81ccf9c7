"""What a sweep folder holds and how far it is trusted: the input files a run key covers, the
checked reading of a stored run, and the sweep's identity in ``sweep.json``.

Rules followed:

- A run's result depends on the engine build, the resolved scenario, the seed, the backend and
  the *content* of every file the scenario names (``trace`` and ``rate_trace`` at any depth:
  a path, either direction of it, a ``[[links]]`` link). The resolved scenario holds a file's
  name only, so :func:`inputs_digest` adds each file's SHA-256: a rewritten trace gives new
  run keys, and a resumed sweep runs again instead of returning the old numbers.
- A stored run is trusted only if it is a UTF-8 JSON object of the record's shape whose key
  and seed are the run's; anything else is run again, with one line on stderr
  (``note: <file>: <reason>; running it again``), never a crash.
- A sweep folder records its sweep's identity (the resolved scenario, the points, the
  repeat count and the backend). Resuming the same sweep is the default, and so is extending
  it (more points or repeats, every stored one kept); a folder holding another sweep is
  refused unless it is to be replaced.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mptcplab.errors import config_error, one_line
from mptcplab.outdir import follow, install_dir, is_empty, new_temp_dir, write_atomic, write_error

__all__ = ["FILE_KEYS", "inputs_digest", "load_record", "open_sweep_dir", "refuse_other_sweep", "sweep_spec"]

#: Scenario keys whose value names a file the engine reads (docs/scenarios.md, "Paths":
#: a Mahimahi ``trace``, a capacity ``rate_trace``). A new file key in the schema belongs here.
FILE_KEYS = ("trace", "rate_trace")

#: (device, inode, size, mtime, ctime) → SHA-256 of a file already read by this process.
_digests: dict[tuple[str, int, int, int, int, int], str] = {}


def _files(node: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(key path, file name) of every file key in a resolved scenario."""
    if isinstance(node, dict):
        for k, v in node.items():
            at = f"{where}.{k}" if where else str(k)
            if k in FILE_KEYS and isinstance(v, str):
                yield at, v
            else:
                yield from _files(v, at)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _files(v, f"{where}[{i}]")


def _file_sha256(name: str, where: str) -> str:
    try:
        st = os.stat(name)
        stamp = (os.path.realpath(name), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if stamp not in _digests:
            h = hashlib.sha256()
            with open(name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            _digests[stamp] = h.hexdigest()
        return _digests[stamp]
    except OSError as e:
        raise config_error(where, f"cannot read `{name}`: {e.strerror}") from None


def inputs_digest(resolved_json: str) -> str:
    """One line per file the scenario names: ``<key path>=<SHA-256 of its content>`` (empty
    when it names none)."""
    resolved = json.loads(resolved_json)
    return "\n".join(f"{at}={_file_sha256(name, at)}" for at, name in _files(resolved))


# ---------------------------------------------------------------------------------------
# Stored runs
# ---------------------------------------------------------------------------------------


def note(file: Path, reason: str) -> None:
    """The one line telling that a stored run is not trusted."""
    print(one_line(f"note: {file}: {reason}; running it again"), file=sys.stderr, flush=True)


def _number(v: Any) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool))


def _record_problem(rec: Any, key: str, seed: int) -> str | None:
    """Why ``rec`` is not the stored run ``key`` (seed ``seed``), or None."""
    if not isinstance(rec, dict):
        return "not a run record (a JSON object)"
    shape = {"run_key": str, "params": dict, "repeat": int, "seed": int, "metrics": dict}
    for field, kind in shape.items():
        if field not in rec:
            return f"the record has no `{field}`"
        if not isinstance(rec[field], kind) or isinstance(rec[field], bool):
            return f"the record's `{field}` is not a {kind.__name__}"
    if not _number(rec.get("wall_s")) or rec.get("wall_s") is None:
        return "the record's `wall_s` is not a number"
    if rec["run_key"] != key:
        return f"it holds run {rec['run_key'][:40]!r}, not {key}"
    if rec["seed"] != seed:
        return f"it holds seed {rec['seed']}, not {seed}"
    bad = next((k for k, v in rec["metrics"].items() if not _number(v) or (isinstance(v, float) and math.isinf(v))), None)
    if bad is not None:
        return f"the metric `{bad[:80]}` is not a number"
    return None


def load_record(file: Path, key: str, seed: int) -> dict[str, Any] | None:
    """The stored run ``key`` in ``file``, or None (absent, or not trusted: noted on stderr)."""
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        note(file, f"cannot be read ({e.strerror})")
        return None
    try:
        rec = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        note(file, f"not UTF-8 text (byte {e.start})")
        return None
    except json.JSONDecodeError as e:
        note(file, f"not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})")
        return None
    except RecursionError:
        note(file, "not valid JSON (nested too deeply)")
        return None
    problem = _record_problem(rec, key, seed)
    if problem is not None:
        note(file, problem)
        return None
    return rec  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------
# The sweep folder
# ---------------------------------------------------------------------------------------


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def sweep_spec(resolved_json: str, source: str | None, keys: list[str], points: list[dict[str, Any]],
               shape: Any, repeat: int, backend: str) -> dict[str, Any]:
    """``sweep.json``: what the sweep is, and its identity: the hash of the resolved scenario,
    one hash per point, the repeat count and the backend (see :func:`_difference`)."""
    return {"kind": "sweep", "backend": backend, "source": source, "grid": shape, "repeat": repeat,
            "parameters": keys, "scenario_sha256": _sha(json.loads(resolved_json)),
            "points_sha256": [_sha(p)[:16] for p in points]}


#: The fields of ``sweep.json`` that must be equal for a folder to hold the same sweep, and
#: how a difference is named.
_EQUAL = {"scenario_sha256": "scenario", "backend": "backend", "parameters": "parameters"}


def _difference(stored: dict[str, Any], spec: dict[str, Any]) -> str | None:
    """What makes ``spec`` another sweep than ``stored``, or None. The same sweep may be
    extended: more points (every stored one kept) or more repeats, whose stored runs all
    belong to it; fewer is another sweep (its tables would not hold the stored runs)."""
    differ = [name for k, name in _EQUAL.items() if stored.get(k) != spec[k]]
    points = stored.get("points_sha256")
    if not isinstance(points, list) or not set(points) <= set(spec["points_sha256"]):
        differ.append("grid")
    if not isinstance(stored.get("repeat"), int) or stored["repeat"] > spec["repeat"]:
        differ.append("repeat count")
    if not differ:
        return None
    return f"its {', '.join(differ)} differ" if len(differ) > 1 else f"its {differ[0]} differs"


def _stored_difference(dest: Path, spec: dict[str, Any]) -> str | None:
    """None if ``dest`` holds this sweep; else what differs ("" for an empty folder)."""
    try:
        if is_empty(dest):
            return ""
        raw = (dest / "sweep.json").read_bytes()
    except FileNotFoundError:
        if not dest.is_dir():
            raise  # removed meanwhile by another command
        return "it is not an mptcplab sweep folder (no sweep.json)"
    except OSError as e:
        raise write_error(e, dest) from None
    try:
        stored = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return "its sweep.json cannot be read"
    if not isinstance(stored, dict) or stored.get("kind") != "sweep":
        return "its sweep.json does not describe a sweep"
    if "scenario_sha256" not in stored:
        return "it was written by an earlier mptcplab, which did not record the sweep's identity"
    return _difference(stored, spec)


def refuse_other_sweep(out: str | Path, spec: dict[str, Any], replace: bool, *, concurrent: bool = False) -> bool:
    """True if ``out`` holds this very sweep (to be resumed), False if it is absent or empty
    or, with ``replace``, holds something to replace; otherwise a ConfigError for ``--out``."""
    dest = follow(out)
    try:
        if not stat.S_ISDIR(os.stat(dest).st_mode):
            raise config_error("--out", f"{out} exists and is not a directory")
        why = _stored_difference(dest, spec)
    except FileNotFoundError:
        return False  # absent (or removed meanwhile by another command's check)
    if why is None:
        return True
    if why == "" or replace:
        return False
    if concurrent:
        raise config_error("--out", f"another command wrote a different sweep to {out} at the same time ({why}); "
                           "run this one with another --out, or again with --replace to replace it")
    raise config_error("--out", f"{out} holds a different sweep ({why}); choose another --out, "
                       "or add --replace to replace it")


def open_sweep_dir(out: str | Path, spec: dict[str, Any], replace: bool) -> Path:
    """Makes ``out`` hold this sweep and returns the folder to write runs into.

    The same sweep is resumed (its ``sweep.json`` rewritten when this one extends it).
    Otherwise a new folder (``sweep.json``, empty
    ``runs/``) is filled beside it and renamed into place (replacing an empty folder, or with
    ``replace`` any earlier one). When another command creates the folder at the same time,
    the same sweep is shared (both resume it; each run is written whole, and the results
    tables last written hold every run), and a different one is refused.
    """
    dest = follow(out)
    shown = Path(out)
    if refuse_other_sweep(out, spec, replace):
        try:
            (dest / "runs").mkdir(exist_ok=True)
        except OSError as e:
            raise write_error(e, shown / "runs") from None
        text = json.dumps(spec, indent=2, default=str) + "\n"
        try:
            unchanged = (dest / "sweep.json").read_text() == text
        except (OSError, UnicodeDecodeError):
            unchanged = False
        if not unchanged:
            write_atomic(dest / "sweep.json", text, shown / "sweep.json")
        return dest
    tmp = new_temp_dir(dest)
    try:
        write_atomic(tmp / "sweep.json", json.dumps(spec, indent=2, default=str) + "\n", shown / "sweep.json")
        (tmp / "runs").mkdir()
    except BaseException as e:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise write_error(e, shown / "runs") from None
        raise
    # Replacing is for what this command found; a different sweep another command wrote
    # meanwhile is refused.
    found = [replace and os.path.lexists(dest)]

    def may_replace(d: Path) -> bool:
        allowed, found[0] = found[0], False
        return not refuse_other_sweep(out, spec, allowed, concurrent=not allowed)

    install_dir(tmp, dest, may_replace)
    return dest
