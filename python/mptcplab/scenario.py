"""Scenario files (TOML or JSON), key-path overrides and the bundled scenarios.

The schema itself lives in the engine (one schema for every front end): this module reads a
file into plain data, applies overrides such as ``paths.wifi.rate=10Mbit`` and asks the
engine to validate and resolve the result.

Key paths are dot-separated. Inside a list, a segment selects an element by its ``name``
(``paths.wifi``, ``connections.mptcp``), by its index (``paths.0``), or every element whose
name matches a shell-style pattern (``connections.type1-*``).
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mptcplab import _core
from mptcplab._api_checks import check_arguments
from mptcplab._data_limits import (
    INT_RANGE, MAX_DEPTH, check_tree, json_int, long_int_error, too_deep_to_read,
)
from mptcplab.errors import ConfigError, config_error, with_file

__all__ = [
    "INT_RANGE",
    "MAX_DEPTH",
    "Scenario",
    "apply_overrides",
    "check_tree",
    "bundled_scenarios",
    "load_scenario",
    "parse_assignment",
    "parse_value",
    "read_bounded",
    "resolve_scenario_path",
]

Overrides = Mapping[str, Any] | Iterable[str] | None

BUNDLED_DIR = Path(__file__).resolve().parent / "scenarios"


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: the data as written (human units kept) and where it came from."""

    data: dict[str, Any]
    source: str | None = None
    resolved_json: str = field(default="", repr=False)

    @property
    def resolved(self) -> dict[str, Any]:
        """Every default filled in and every unit normalised, as the engine sees it."""
        return json.loads(self.resolved_json)

    @property
    def name(self) -> str:
        return str(self.data.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.data.get("description", ""))

    @property
    def seed(self) -> int:
        return int(self.resolved["seed"])

    def to_json(self) -> str:
        """The data as written, as JSON (what the engine is given)."""
        return json.dumps(self.data)

    def with_overrides(self, overrides: Overrides, *, label: str = "--set") -> Scenario:
        """A new, validated scenario with ``overrides`` applied (see :func:`apply_overrides`)."""
        check_arguments("Scenario.with_overrides", locals())
        if not overrides:
            return self
        data = apply_overrides(self.data, overrides, file=self.source, label=label)
        return _validated(data, self.source)


def _suspect(data: Any, where: str = "") -> tuple[str, str] | None:
    """The key path (``paths[0].rate``) and complaint for the first value the engine would only
    answer with a parser's message: a NaN or infinity, or an empty key name."""
    if isinstance(data, float) and not math.isfinite(data):
        return where, (
            f"`{data}` is not a finite number; expected a finite value, with its unit where the key has one "
            "(a duration such as `10s`, a rate such as `8Mbit`, a size such as `64KB`)"
        )
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        if isinstance(k, str) and not k.strip():
            return where, f"a key name is empty ({json.dumps(k)}); a key path is names joined by dots, e.g. connections.0.cc"
        found = _suspect(v, f"{where}[{k}]" if isinstance(k, int) else f"{where}.{k}" if where else str(k))
        if found:
            return found
    return None


def _validated(data: dict[str, Any], source: str | None) -> Scenario:
    check_tree(data, file=source)
    bad = _suspect(data)
    if bad:
        raise config_error(*bad, source)
    try:
        text = json.dumps(data)
    except (TypeError, ValueError) as e:
        raise config_error("", f"cannot be represented as a scenario: {e}", source) from None
    try:
        resolved = _core.check(text)
    except ConfigError as e:
        raise with_file(e, source) from None
    return Scenario(data=data, source=source, resolved_json=resolved)


#: The largest scenario file read (bytes). The biggest bundled scenario is about 15 KB and
#: capacity traces live in files of their own that the engine reads, so 16 MiB is a thousand
#: times any real scenario while a mistaken argument (a device, a log, a disk image) is
#: refused before it fills memory.
MAX_SCENARIO_BYTES = 16 * 1024 * 1024


def read_bounded(path: Path, file: str, *, what: str = "scenario", hint: str = "a scenario is a TOML or JSON file",
                 limit: int = MAX_SCENARIO_BYTES) -> bytes:
    """The file's bytes, refusing anything but a regular file of at most ``limit`` bytes
    (``ConfigError`` naming ``file``; ``what`` names the kind of file, ``hint`` what is expected).

    The file is opened without blocking (a FIFO would otherwise wait for a writer) and checked
    through its descriptor, so what is checked is what is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise config_error("", "no such file", file) from None
    except IsADirectoryError:
        raise config_error("", f"is a directory, not a {what} file", file) from None
    except OSError as e:
        raise config_error("", f"cannot be read: {e.strerror}", file) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise config_error("", f"is a directory, not a {what} file", file)
        if not stat.S_ISREG(st.st_mode):
            raise config_error("", f"is not a regular file (a device, pipe or socket); {hint}", file)
        if st.st_size > limit:
            raise config_error("", f"is {st.st_size} bytes; a {what} file is at most {limit // 2**20} MiB", file)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise config_error("", f"grew beyond {limit // 2**20} MiB while being read", file)
        return b"".join(chunks)
    except OSError as e:
        raise config_error("", f"cannot be read: {e.strerror}", file) from None
    finally:
        os.close(fd)


def _read_file(path: Path) -> dict[str, Any]:
    file = str(path)
    try:
        text = read_bounded(path, file).decode("utf-8")
    except UnicodeDecodeError as e:
        raise config_error("", f"not a UTF-8 text file ({e.reason} at byte {e.start})", file) from None
    is_json = path.suffix.lower() == ".json"
    try:
        data = _parse_json(text, file) if is_json else _parse_toml(text, file)
    except RecursionError:
        raise too_deep_to_read(file, "is") from None
    if not isinstance(data, dict):
        raise config_error("", "a scenario must be a table of keys", file)
    check_tree(data, file=file)
    return data


def _parse_json(text: str, file: str) -> Any:
    try:
        return json.loads(text, parse_int=json_int)
    except json.JSONDecodeError as e:
        raise config_error(f"line {e.lineno}, column {e.colno}", f"malformed JSON: {e.msg}", file) from None


def _parse_toml(text: str, file: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        where = re.search(r"\(at line (\d+), column (\d+)\)$", msg)
        if where:
            msg = msg[: where.start()].strip()
            raise config_error(f"line {where[1]}, column {where[2]}", f"malformed TOML: {msg}", file) from None
        raise config_error("", f"malformed TOML: {msg}", file) from None
    except ValueError as e:  # an integer longer than Python converts (tomllib has no hook for it)
        if "integer string conversion" not in str(e):
            raise
        raise long_int_error(text, file, tomllib.loads) from None


def resolve_scenario_path(arg: str | Path) -> Path:
    """A file path as given, or the bundled scenario of that name (``nsdi12-wifi-3g``)."""
    if not str(arg).strip():
        raise config_error("", "no scenario given (an empty name); give a scenario file or a bundled scenario's name")
    if "\x00" in str(arg):
        raise config_error("", "a file name cannot contain a NUL character", repr(str(arg)))
    path = Path(arg)
    try:
        if path.exists() or path.suffix:
            return path
    except OSError as e:  # e.g. a name longer than the file system allows
        raise config_error("", f"cannot be read: {e.strerror}", str(arg)) from None
    bundled = BUNDLED_DIR / f"{arg}.toml"
    return bundled if bundled.exists() else path


def load_scenario(source: str | Path | Mapping[str, Any] | Scenario, overrides: Overrides = None) -> Scenario:
    """Reads and validates a scenario.

    ``source`` is a TOML or JSON file path, the name of a bundled scenario, a dict with the
    same structure, or a :class:`Scenario`. ``overrides`` maps key paths to values
    (``{"paths.wifi.rate": "10Mbit"}``) or is a list of ``"key=value"`` strings.
    Raises :class:`ConfigError` naming the file, the key path and what is allowed.
    """
    check_arguments("load_scenario", locals())
    if isinstance(source, Scenario):
        return source.with_overrides(overrides)
    if isinstance(source, Mapping):
        check_tree(source)
        sc = _validated(json.loads(json.dumps(dict(source), default=str)), None)
    else:
        path = resolve_scenario_path(source)
        sc = _validated(_read_file(path), str(source))
    return sc.with_overrides(overrides)


# ---------------------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------------------


def parse_value(text: str, *, label: str = "") -> Any:
    """A command-line value: a TOML literal (``5``, ``true``, ``["a", "b"]``) or else a string.

    A value nested too deeply to read, or holding an integer too long to convert, is refused
    (:class:`ConfigError` at ``label``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()
    except RecursionError:
        raise config_error(label, f"the value is nested so deeply that it cannot be read; the limit is {MAX_DEPTH} "
                           "levels") from None
    except ValueError as e:  # an integer longer than Python converts
        if "integer string conversion" not in str(e):
            raise
        err = long_int_error(f"v = {text}", None, tomllib.loads)
        inside = err.path[1:] if err.path.startswith("v") else ""  # the value's own key path, e.g. `[1]`
        raise config_error(f"{label}{inside}", err.message) from None


def parse_assignment(text: str, *, label: str = "--set") -> tuple[str, Any]:
    """``"paths.wifi.rate=10Mbit"`` → ``("paths.wifi.rate", "10Mbit")``."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _well_formed(key):
        what = "" if not sep else "the key path is empty or has an empty segment; "
        raise config_error(
            f"{label} {text}", what + "expected KEY.PATH=VALUE, e.g. paths.wifi.rate=10Mbit or connections.0.cc=lia"
        )
    parsed = parse_value(value, label=f"{label} {key}")
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise config_error(
            f"{label} {key}", f"`{value.strip()}` is not a finite number; expected a finite value, with its unit "
            "where the key has one (a duration such as `10s`, a rate such as `8Mbit`, a size such as `64KB`)"
        )
    return key, parsed


def _well_formed(key: str) -> bool:
    """A key path is non-empty names (or indices) joined by dots: no empty segment."""
    return bool(key) and all(seg.strip() for seg in key.split("."))


def _element(items: list[Any], seg: str, where: str) -> int:
    if re.fullmatch(r"-?\d+", seg):
        i = int(seg)
        if not -len(items) <= i < len(items):
            raise ValueError(f"index {i} is out of range at `{where}` ({len(items)} elements)")
        return i % len(items)
    names = [it.get("name") for it in items if isinstance(it, dict)]
    for i, it in enumerate(items):
        if isinstance(it, dict) and it.get("name") == seg:
            return i
    hint = _core_hint(seg, [n for n in names if isinstance(n, str)])
    listed = ", ".join(str(n) for n in names if n is not None) or "none"
    raise ValueError(f"no element named `{seg}` in `{where}` (names: {listed}; or use an index){hint}")


def _core_hint(given: str, allowed: list[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(given, allowed, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    _set_in(data, key.split("."), value, "")


def _set_in(data: Any, segs: list[str], value: Any, where: str) -> None:
    cur: Any = data
    for n, seg in enumerate(segs):
        last = n == len(segs) - 1
        here = f"{where}.{seg}" if where else seg
        if isinstance(cur, dict):
            if last:
                cur[seg] = value
            else:
                if seg not in cur:
                    cur[seg] = {}
                cur = cur[seg]
        elif isinstance(cur, list) and any(ch in seg for ch in "*?["):
            matches = [i for i, it in enumerate(cur) if isinstance(it, dict) and fnmatch.fnmatchcase(str(it.get("name")), seg)]
            if not matches:
                names = ", ".join(str(it.get("name")) for it in cur if isinstance(it, dict))
                raise ValueError(f"no element of `{where}` matches `{seg}` (names: {names or 'none'})")
            for i in matches:
                if last:
                    cur[i] = json.loads(json.dumps(value))
                else:
                    _set_in(cur[i], segs[n + 1 :], value, here)
            return
        elif isinstance(cur, list):
            i = _element(cur, seg, where)
            if last:
                cur[i] = value
            else:
                cur = cur[i]
        else:
            raise ValueError(f"`{where}` is a value ({cur!r}), not a table or list; cannot set `{here}`")
        where = here


def _assignment(item: Any, i: int, label: str) -> tuple[str, Any]:
    """One item of a list of overrides: a ``"KEY.PATH=VALUE"`` string or a ``(key path,
    value)`` pair."""
    if isinstance(item, str):
        return parse_assignment(item, label=label)
    if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], str) and _well_formed(item[0]):
        return item[0], item[1]
    shown = repr(item) if len(repr(item)) <= 60 else repr(item)[:57] + "..."
    raise config_error(f"overrides[{i}]", f"must be a 'KEY.PATH=VALUE' string or a (key path, value) pair, got "
                       f"{type(item).__name__} {shown}")


def apply_overrides(
    data: Mapping[str, Any], overrides: Overrides, *, file: str | None = None, label: str = "--set"
) -> dict[str, Any]:
    """A deep copy of ``data`` with each ``key.path = value`` set (see the module doc).

    A key path and its value together may nest at most :data:`MAX_DEPTH` levels, and numbers
    must fit the engine (:func:`check_tree`): both are checked before anything recurses."""
    check_tree(data, file=file)
    out: dict[str, Any] = json.loads(json.dumps(dict(data)))
    if overrides is None:
        return out
    items: Iterable[tuple[str, Any]]
    if isinstance(overrides, Mapping):
        items = overrides.items()
        for key in overrides:
            if not isinstance(key, str) or not _well_formed(key):
                raise config_error(
                    f"{label} {key}", "the key path is empty or has an empty segment; expected names joined by dots, "
                    "e.g. paths.wifi.rate or connections.0.cc", file
                )
    else:
        try:
            items = [_assignment(a, i, label) for i, a in enumerate(overrides)]
        except ConfigError as e:
            raise with_file(e, file) from None
    for key, value in items:
        check_tree(value, tuple(key.split(".")), file=file, label=label)
        try:
            _set(out, key, value)
        except ValueError as e:
            raise config_error(f"{label} {key}", str(e), file) from None
    return out


# ---------------------------------------------------------------------------------------
# Bundled scenarios
# ---------------------------------------------------------------------------------------


def bundled_scenarios() -> list[tuple[str, Path, str]]:
    """``(name, path, description)`` of every bundled scenario, sorted by name."""
    out = []
    for path in sorted(BUNDLED_DIR.glob("*.toml"), key=lambda p: p.stem):
        try:
            desc = str(tomllib.loads(path.read_text(encoding="utf-8")).get("description", ""))
        except (OSError, tomllib.TOMLDecodeError):
            desc = "(unreadable)"
        out.append((path.stem, path, desc))
    return out
