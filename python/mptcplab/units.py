"""Human units, parsed by the engine's own grammar (one grammar for every front end).

Durations are returned in seconds (exact to the nanosecond), rates in bit/s, sizes in bytes,
probabilities as fractions. ``format_*`` gives the canonical spelling, so
``parse_rate(format_rate(x)) == x`` for every whole ``x``.
"""

from __future__ import annotations

from mptcplab import _core

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


def parse_duration(text: str) -> float:
    """``"10ms"`` → 0.01 (seconds). Raises ValueError naming the allowed units."""
    return _core.parse_duration_ns(text) / 1e9


def format_duration(seconds: float) -> str:
    """0.01 → ``"10ms"`` (rounded to the nanosecond)."""
    if seconds < 0:
        raise ValueError(f"{seconds} is negative; durations must be >= 0")
    return _core.format_duration_ns(round(seconds * 1e9))


def parse_rate(text: str) -> int:
    """``"8Mbit"`` → 8_000_000 (bit/s). Zero and negative rates are rejected."""
    return _core.parse_rate_bps(text)


def format_rate(bps: int) -> str:
    """8_000_000 → ``"8Mbit"``."""
    if bps <= 0:
        raise ValueError(f"{bps} must be a positive rate in bit/s")
    return _core.format_rate_bps(int(bps))


def parse_size(text: str) -> int:
    """``"600KB"`` → 600_000, ``"1MiB"`` → 1_048_576 (bytes)."""
    return _core.parse_size_bytes(text)


def parse_queue(text: str) -> tuple[int, str]:
    """``"64 packets"`` → (64, "packets"); ``"64KB"`` → (64000, "bytes")."""
    return _core.parse_queue(text)


def parse_probability(text: str) -> float:
    """``"0.9%"`` → 0.009; must lie in [0, 1]."""
    return _core.parse_probability(text)


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
