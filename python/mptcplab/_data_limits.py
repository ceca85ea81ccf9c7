"""Limits on scenario data that no schema states: how deeply tables and lists nest, how large
an integer is, what a key is. Checked without recursion, so data of any depth is refused with
its key path named before any code that recurses (a parser, ``json.dumps``, the engine's JSON
reader) meets it; used for scenario files, dicts given to the API, ``--set`` and ``--vary``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from mptcplab.errors import ConfigError, config_error

__all__ = ["INT_RANGE", "MAX_DEPTH", "LongInt", "check_tree", "json_int", "key_path", "long_int_error", "too_deep_to_read"]


#: How many levels tables and lists may nest (key-path segments: ``connections[0].app.kind``
#: is 3 levels deep). The deepest bundled scenario nests 6 levels (``connections[0].routes[0].up[0]``,
#: a route's list of links); 64 is ten times that, and half the 128 levels the
#: engine's JSON reader follows, so a scenario within the limit always reaches the engine,
#: while a deeper one is refused naming its key before any code recurses into it (Python's
#: recursion limit is about 1000 frames).
MAX_DEPTH = 64

#: Integers the engine represents exactly: the union of i64 and u64 (its JSON reader turns
#: any other integer into a float, and Python's own int-to-text conversion stops at 4300
#: digits).
INT_RANGE = (-(2**63), 2**64 - 1)
_INT_HELP = "integers must lie in -2^63..2^64-1 (64 bits)"
#: Integers longer than this are not converted by the readers (Python refuses above 4300
#: digits, and the conversion's cost grows with the square of the length).
_MAX_INT_DIGITS = 4000
#: Marks a too-long integer of a TOML file (replaced by a string before the file is read
#: again to find its key path).
_LONG_INT = "\x00mptcplab-long-integer:"


class LongInt:
    """A JSON or TOML integer too long to convert; ``digits`` counts its decimal digits."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def json_int(text: str) -> int | LongInt:
    return int(text) if len(text) <= _MAX_INT_DIGITS else LongInt(len(text.lstrip("+-")))


def _digits(n: int) -> int:
    """Decimal digits of ``n``, without converting it to text (which Python refuses above 4300
    digits): the bit length gives the count to within one."""
    k = int((abs(n).bit_length() - 1) * 0.30102999566398120) + 1 if n else 1
    return k + 1 if abs(n) >= 10**k else k


def _int_complaint(value: int | LongInt) -> str:
    if isinstance(value, LongInt):
        return f"an integer with {value.digits} digits; {_INT_HELP}"
    shown = f"`{value}`" if _digits(value) <= 40 else f"an integer with {_digits(value)} digits"
    return f"{shown} does not fit in 64 bits; {_INT_HELP}"


def key_path(segs: Iterable[str | int]) -> str:
    """``("connections", 0, "app")`` → ``connections[0].app``; a path of more than 8 segments
    is shortened to its first 8 (the error says how deep it goes)."""
    segs = list(segs)
    out = ""
    for seg in segs[:8]:
        out += f"[{seg}]" if isinstance(seg, int) else f".{seg}" if out else str(seg)
    return out + ("…" if len(segs) > 8 else "")


def _children(value: Any) -> Iterator[tuple[Any, Any]] | None:
    if isinstance(value, Mapping):
        return iter(value.items())
    if isinstance(value, list | tuple):
        return iter(enumerate(value))
    return None


def check_tree(data: Any, prefix: tuple[str | int, ...] = (), *, file: str | None = None, label: str = "") -> None:
    """Refuses (:class:`ConfigError` naming the key path, after ``label`` such as ``--set``)
    nesting deeper than :data:`MAX_DEPTH`, a table or list that contains itself, a key that is
    not a string, and an integer outside :data:`INT_RANGE`. Iterative, so it is safe on data
    of any depth; ``prefix`` is the key path ``data`` sits at."""

    def fail(segs: tuple[str | int, ...], message: str) -> ConfigError:
        where = key_path(segs)
        return config_error(f"{label} {where}".strip() if label else where, message, file)

    lo, hi = INT_RANGE

    def scalar(v: Any, segs: tuple[str | int, ...]) -> None:
        if isinstance(v, LongInt) or (isinstance(v, int) and not isinstance(v, bool) and not lo <= v <= hi):
            raise fail(segs, _int_complaint(v))
        if isinstance(v, str) and v.startswith(_LONG_INT):
            raise fail(segs, _int_complaint(LongInt(int(v[len(_LONG_INT):]))))

    if len(prefix) > MAX_DEPTH:
        raise fail(prefix, f"nested {len(prefix)} levels deep; the limit is {MAX_DEPTH}")
    root = _children(data)
    if root is None:
        scalar(data, prefix)
        return
    too_deep: tuple[str | int, ...] | None = None
    deepest = len(prefix)
    stack = [(root, prefix, id(data), isinstance(data, Mapping))]
    ancestors = {id(data)}
    while stack:
        items, segs, ident, is_table = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            ancestors.discard(ident)
            continue
        k, v = item
        if is_table and not isinstance(k, str):
            raise fail(segs, f"the key {k!r} is a {type(k).__name__}; keys must be strings")
        here = (*segs, k)
        if len(here) > deepest:
            deepest = len(here)
            if too_deep is None and deepest > MAX_DEPTH:
                too_deep = here
        kids = _children(v)
        if kids is None:
            scalar(v, here)
        elif id(v) in ancestors:
            raise fail(here, "contains itself (a table or list holding one of its enclosing ones)")
        else:
            stack.append((kids, here, id(v), isinstance(v, Mapping)))
            ancestors.add(id(v))
    if too_deep is not None:
        raise fail(too_deep, f"nested {deepest} levels deep; the limit is {MAX_DEPTH}")


def too_deep_to_read(file: str | None, what: str) -> ConfigError:
    """The error for a file (or value) whose reader ran out of stack."""
    return config_error("", f"{what} nested so deeply that it cannot be read; the limit is {MAX_DEPTH} levels", file)


def long_int_error(text: str, file: str | None, reread: Callable[[str], Any]) -> ConfigError:
    """The error for TOML ``text`` holding an integer too long to convert: the same text with
    each such integer replaced by a marker string is read again (``reread``) to name its key
    path; failing that, its line and column."""
    runs = list(re.finditer(r"(?<![\w.\"'])[+-]?\d[\d_]{%d,}" % (_MAX_INT_DIGITS - 1), text))
    if not runs:
        return config_error("", f"holds an integer too long to read; {_INT_HELP}", file)
    marked = text
    for m in reversed(runs):
        digits = sum(ch.isdigit() for ch in m[0])
        marked = marked[: m.start()] + f'"\\u0000mptcplab-long-integer:{digits}"' + marked[m.end():]
    try:
        check_tree(reread(marked), file=file)
    except ConfigError as e:
        return e
    except (ValueError, RecursionError):
        pass
    m = runs[0]
    line = text.count("\n", 0, m.start()) + 1
    column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    digits = sum(ch.isdigit() for ch in m[0])
    return config_error(f"line {line}, column {column}", _int_complaint(LongInt(digits)), file)
