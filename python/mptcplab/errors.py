"""The one user-facing error type and its one-line rendering.

Every user mistake (a bad key, unit, value, file or command-line assignment) is raised as
:class:`ConfigError`, defined by the extension module, carrying ``file``, ``path`` (the key
path, e.g. ``connections[0].paths[0]`` or ``--set paths.wifi.rate``) and ``message``.
"""

from __future__ import annotations

from mptcplab._core import ConfigError

__all__ = ["ConfigError", "config_error", "describe", "one_line", "with_file"]

#: A file name longer than this is shortened in error lines (its length is still given).
_LONG_NAME = 200


def config_error(path: str, message: str, file: str | None = None) -> ConfigError:
    """A :class:`ConfigError` for ``path`` (may be empty) in ``file``."""
    err = ConfigError(f"{path}: {message}" if path else message)
    err.path = path
    err.message = message
    err.file = file
    return err


def with_file(err: ConfigError, file: str | None) -> ConfigError:
    """Sets the error's file if it has none yet, and returns it."""
    if getattr(err, "file", None) is None:
        err.file = file
    return err


def one_line(text: str) -> str:
    """``text`` with newlines and other control characters escaped as in a Python literal
    (``\\n``, ``\\x1b``), so that a value echoed in an error keeps the error on one line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _short(name: str) -> str:
    if len(name) <= _LONG_NAME:
        return name
    return f"{name[:60]}…({len(name)} characters)"


def describe(err: ConfigError) -> str:
    """``error: <file>: <key path>: <message>``, leaving out the parts that are unknown, on
    one line whatever the parts contain."""
    file = getattr(err, "file", None)
    parts = [_short(p) for p in (file, getattr(err, "path", "")) if p]
    message = getattr(err, "message", None) or str(err)
    return one_line("error: " + "".join(f"{p}: " for p in parts) + message)
