"""Type checks of the public API's arguments, so that a wrong type is refused with the
project's one error (:class:`~mptcplab.errors.ConfigError`, the argument's name as key path,
e.g. ``seed: must be an integer in 0..2^64-1, got str '1'``) instead of whatever exception
the first operation on it happens to raise, or, worse, being accepted (``seed=True`` is not
seed 1, ``overrides="a=b"`` is not three one-letter assignments).

Each public function calls :func:`check_arguments` with its name and ``locals()`` as its
first line; the table :data:`API` says what each argument must be. Value checks that the
command line shares (``--repeat``, ``--jobs``, ``--engine``) stay where they were, with the
option's name; here only what a Python caller alone can get wrong.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mptcplab.errors import config_error

__all__ = ["API", "check_arguments"]

Check = Callable[[str, Any], None]

#: The largest unsigned 64-bit integer (the engine's seeds and event budgets).
U64_MAX = 2**64 - 1


def _got(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"got {type(value).__name__} {text}"


def integer(lo: int | None = None, hi: int | None = None, *, optional: bool = False, shown: str = "") -> Check:
    """An integer (an ``int`` or a type that converts losslessly, such as numpy's, but never a
    ``bool``, which Python counts as one) in ``lo..hi``; None allowed if ``optional``."""
    bounds = shown or (f"in {lo}..{hi}" if lo is not None and hi is not None else f">= {lo}" if lo is not None else "")
    want = f"an integer {bounds}".strip() + (" or None" if optional else "")

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        try:
            number = None if isinstance(value, bool) else operator.index(value)
        except TypeError:
            number = None
        if number is None:
            raise config_error(name, f"must be {want}, {_got(value)}")
        if (lo is not None and number < lo) or (hi is not None and number > hi):
            raise config_error(name, f"must be {want}, got {number}")

    return check


def flag(name: str, value: Any) -> None:
    """A ``bool``."""
    if not isinstance(value, bool):
        raise config_error(name, f"must be True or False, {_got(value)}")


def text(*, optional: bool = False) -> Check:
    """A ``str``; None allowed if ``optional``."""

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        if not isinstance(value, str):
            raise config_error(name, f"must be a string{' or None' if optional else ''}, {_got(value)}")

    return check


def path(*, optional: bool = False) -> Check:
    """A file name: a ``str`` or ``os.PathLike`` naming a text path, without NUL characters."""

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        try:
            name_text = os.fspath(value)
        except TypeError:
            name_text = None
        if not isinstance(name_text, str):
            raise config_error(name, f"must be a path (str or os.PathLike){' or None' if optional else ''}, {_got(value)}")
        if "\x00" in name_text:
            raise config_error(name, "a path cannot contain a NUL character")

    return check


def choice(options: tuple[str, ...]) -> Check:
    """One of ``options``."""

    def check(name: str, value: Any) -> None:
        if not isinstance(value, str) or value not in options:
            raise config_error(name, f"must be one of {', '.join(options)}, {_got(value)}")

    return check


def function(name: str, value: Any) -> None:
    """A callable or None."""
    if value is not None and not callable(value):
        raise config_error(name, f"must be a function or None, {_got(value)}")


def table(name: str, value: Any) -> None:
    """A mapping (a dict)."""
    if not isinstance(value, Mapping):
        raise config_error(name, f"must be a mapping (a dict), {_got(value)}")


def scenario(name: str, value: Any) -> None:
    """A scenario: a file path or bundled name, a mapping, or a :class:`~mptcplab.Scenario`."""
    from mptcplab.scenario import Scenario

    if isinstance(value, Scenario | Mapping):
        return
    try:
        name_text = os.fspath(value)
    except TypeError:
        name_text = None
    if not isinstance(name_text, str):
        raise config_error(name, "must be a scenario file's path, a bundled scenario's name, a dict or a Scenario, "
                           + _got(value))


def _many(value: Any) -> bool:
    """An iterable of items, not a string or a mapping (which iterate over characters or keys)."""
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | bytearray | Mapping)


def overrides(name: str, value: Any) -> None:
    """None, a mapping of key paths (strings) to values, or a list of ``"KEY.PATH=VALUE"``
    strings or ``(key path, value)`` pairs (each item is checked as it is applied)."""
    if value is None:
        return
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise config_error(name, f"keys must be key paths (strings such as 'paths.wifi.rate'), {_got(key)}")
        return
    if not _many(value):
        hint = f" (a list: [{value!r}])" if isinstance(value, str) else ""
        raise config_error(name, "must be a dict of key paths to values or a list of 'KEY.PATH=VALUE' strings"
                           f"{hint}, {_got(value)}")


def grid(name: str, value: Any) -> None:
    """A mapping of key paths to lists of values, or a list of points (mappings)."""
    if isinstance(value, Mapping):
        for key, values in value.items():
            if not isinstance(key, str):
                raise config_error(name, f"keys must be key paths (strings such as 'paths.wifi.rate'), {_got(key)}")
            if not _many(values):
                raise config_error(f"{name}[{key!r}]", f"must be a list of values, {_got(values)}")
        return
    if not _many(value):
        raise config_error(name, f"must be a dict of key paths to lists of values, or a list of points (dicts), {_got(value)}")
    if isinstance(value, list | tuple):
        for i, point in enumerate(value):
            if not isinstance(point, Mapping):
                raise config_error(f"{name}[{i}]", f"a point must be a dict of key paths to values, {_got(point)}")


def address(name: str, value: Any) -> None:
    """None or a Dask scheduler address of a scheme the sweep can use."""
    if value is None:
        return
    text()(name, value)
    from mptcplab.cluster import check_address

    check_address(value)


#: Per public function, what each argument must be.
API: dict[str, dict[str, Check]] = {
    "load_scenario": {"source": scenario, "overrides": overrides},
    "Scenario.with_overrides": {"overrides": overrides, "label": text()},
    "run": {
        "scenario": scenario, "seed": integer(0, U64_MAX, optional=True, shown="in 0..2^64-1"), "overrides": overrides,
        "max_events": integer(0, U64_MAX, optional=True, shown="in 0..2^64-1"),
        "pcap_dir": path(optional=True), "pcap_per": choice(("host", "interface", "link")),
        "snaplen": integer(54, 2**32 - 1, optional=True), "sched_log": flag,
    },
    "sweep": {
        "scenario": scenario, "grid": grid, "repeat": integer(), "jobs": integer(), "out": path(optional=True),
        "progress": function, "backend": choice(("sim", "linux", "uml")), "engine": text(), "address": address,
    },
    "plot": {"directory": path(), "x": text(optional=True), "y": text(optional=True), "hue": text(optional=True),
             "out": path(optional=True)},
    "validate": {"grid": path(), "repeat": integer(), "jobs": integer(), "only": text(optional=True),
                 "kernel_csv": path(optional=True), "progress": function},
    "flat_metrics": {"summary": table},
}


def check_arguments(api: str, args: Mapping[str, Any]) -> None:
    """Checks the arguments ``args`` (a function's ``locals()`` on entry) of the public
    function ``api`` against :data:`API`; raises ``ConfigError`` for the first wrong one."""
    for name, check in API[api].items():
        check(name, args[name])
