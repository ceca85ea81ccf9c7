"""The one user-facing error type and its one-line rendering.

Every user mistake (a bad key, unit, value, file or command-line assignment) is raised as
:class:`ConfigError`, defined by the extension module, carrying ``file``, ``path`` (the key
path, e.g. ``connections[0].paths[0]`` or ``--set paths.wifi.rate``) and ``message``.
"""

from __future__ import annotations

from mptcplab._core import ConfigError

__all__ = ["ConfigError", "config_error", "describe", "with_file"]


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


def describe(err: ConfigError) -> str:
    """``error: <file>: <key path>: <message>``, leaving out the parts that are unknown."""
    parts = [p for p in (getattr(err, "file", None), getattr(err, "path", "")) if p]
    message = getattr(err, "message", None) or str(err)
    return "error: " + "".join(f"{p}: " for p in parts) + message
