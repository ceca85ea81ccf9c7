"""Human units, parsed by the engine's own grammar (one grammar for every front end).

Durations are returned in seconds (exact to the nanosecond), rates in bit/s, sizes in bytes,
probabilities as fractions. ``format_*`` gives the canonical spelling, so
``parse_rate(format_rate(x)) == x`` for every whole ``x``.

Every function raises ``ValueError`` for a value it cannot take (a
:class:`~mptcplab.errors.ConfigError`, naming the argument, for a wrong type or a number
outside what the engine represents).
"""

from __future__ import annotations

import math

from mptcplab import _core
from mptcplab.errors import config_error

__all__ = [
    "format_duration",
    "format_rate",
    "parse_duration",
    "parse_probability",
    "parse_queue",
    "parse_rate",
    "parse_size",
    "to_number",
]


#: The engine's unsigned 64-bit integers (nanoseconds, bit/s).
_U64_MAX = 2**64 - 1


def _text(text: object) -> str:
    if not isinstance(text, str):
        raise config_error("text", f"must be a string such as \"10ms\", got {type(text).__name__} {text!r:.60}")
    return text


def _number(name: str, value: object, scale: float, unit: str) -> int:
    """``value`` × ``scale`` rounded to a whole number of ``unit``, which must be finite and
    fit the engine's 64 bits."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise config_error(name, f"must be a number, got {type(value).__name__} {value!r:.60}")
    if not math.isfinite(value):
        raise config_error(name, f"{value} is not a finite number")
    whole = round(value * scale) if isinstance(value, float) or scale != 1 else value
    if whole > _U64_MAX:
        raise config_error(name, f"is more than 2^64-1 {unit}, the engine's largest")
    return whole


def parse_duration(text: str) -> float:
    """``"10ms"`` → 0.01 (seconds). Raises ValueError naming the allowed units."""
    return _core.parse_duration_ns(_text(text)) / 1e9


def format_duration(seconds: float) -> str:
    """0.01 → ``"10ms"`` (rounded to the nanosecond)."""
    ns = _number("seconds", seconds, 1e9, "ns")
    if ns < 0:
        raise config_error("seconds", f"{seconds} is negative; durations must be >= 0")
    return _core.format_duration_ns(ns)


def parse_rate(text: str) -> int:
    """``"8Mbit"`` → 8_000_000 (bit/s). Zero and negative rates are rejected."""
    return _core.parse_rate_bps(_text(text))


def format_rate(bps: int) -> str:
    """8_000_000 → ``"8Mbit"``."""
    whole = _number("bps", bps, 1, "bit/s")
    if bps <= 0:
        raise config_error("bps", f"{bps} must be a positive rate in bit/s")
    return _core.format_rate_bps(int(bps) if isinstance(bps, float) else whole)


def parse_size(text: str) -> int:
    """``"600KB"`` → 600_000, ``"1MiB"`` → 1_048_576 (bytes)."""
    return _core.parse_size_bytes(_text(text))


def parse_queue(text: str) -> tuple[int, str]:
    """``"64 packets"`` → (64, "packets"); ``"64KB"`` → (64000, "bytes")."""
    return _core.parse_queue(_text(text))


def parse_probability(text: str) -> float:
    """``"0.9%"`` → 0.009; must lie in [0, 1]."""
    return _core.parse_probability(_text(text))


def to_number(value: object) -> tuple[float, str] | None:
    """A parameter value as ``(number in base units, unit name)``, or None if it is not numeric.

    Used to put sweep parameters on a numeric axis: plain numbers stay as they are (unit
    ``""``); strings are tried as a rate (bit/s), a duration (s), a size (B), a queue
    (packets) and a percentage, in that order.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value), ""
    if not isinstance(value, str):
        return None
    try:
        return float(value), ""
    except ValueError:
        pass
    attempts = (
        (parse_rate, "bit/s"),
        (parse_duration, "s"),
        (parse_size, "B"),
    )
    for parse, unit in attempts:
        try:
            return float(parse(value)), unit
        except ValueError:
            continue
    try:
        count, kind = parse_queue(value)
        return float(count), kind
    except ValueError:
        pass
    if value.strip().endswith("%"):
        try:
            return parse_probability(value), ""
        except ValueError:
            return None
    return None
