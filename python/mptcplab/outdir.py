"""Writing outputs so that a reader never sees half of one: files and folders are filled under a
unique temporary name beside their target and renamed into place.

The rules followed:

- A temporary name is unique per call (``tempfile.mkstemp`` / ``mkdtemp`` beside the target),
  so concurrent commands and threads writing the same output never share one.
- A folder replaces an earlier one by one atomic rename: Linux's ``renameat2`` with
  ``RENAME_EXCHANGE`` swaps the two (the earlier one is then removed under the temporary
  name); elsewhere the earlier one is first renamed aside under a unique name. A new folder is
  renamed into place with ``RENAME_NOREPLACE``, so of two commands creating it at the same
  time one creates it and the other replaces it (the last one wins, both whole).
- A symbolic link naming the output is followed: the folder it points to is replaced and the
  link is left as it was.
- On any failure the temporary file or folder is removed; a write that fails (a full disk)
  becomes one :class:`~mptcplab.errors.ConfigError` naming the file, e.g.
  ``error: out/summary.json: no space left on device``.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from mptcplab.errors import ConfigError, config_error

__all__ = ["PROBE_PREFIX", "atomic_path", "follow", "install_dir", "is_empty", "new_temp_dir", "write_atomic", "write_error"]

#: How :func:`mptcplab.runner.check_output_dir` names the folder it creates and removes to
#: probe where an output goes; another command's probe does not make a folder non-empty.
PROBE_PREFIX = ".mptcplab-probe-"

#: How often installing a folder is retried when another command changes the target between
#: two steps (each retry needs such a change, so this bounds only a pathological race).
_ATTEMPTS = 50


@cache
def _umask() -> int:
    """The process's umask, read without changing it (``/proc/self/status``; 022 elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def write_error(e: OSError, file: str | Path) -> ConfigError:
    """The one-line error for a failed write of ``file``."""
    # pyarrow's write errors carry the code only in their text.
    if e.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left on device" in str(e):
        return config_error("", "no space left on device", str(file))
    return config_error("", f"cannot write: {e.strerror or e}", str(file))


def is_empty(folder: Path) -> bool:
    """True if ``folder`` holds nothing but other commands' probes."""
    return all(p.name.startswith(PROBE_PREFIX) for p in folder.iterdir())


def follow(path: str | Path) -> Path:
    """``path`` made absolute (``.`` and ``..`` resolved as written), or the path a symbolic
    link there points to (followed to the end)."""
    p = Path(path)
    return Path(os.path.realpath(p)) if os.path.islink(p) else Path(os.path.abspath(p))


def _unlink_quietly(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


@contextmanager
def atomic_path(path: Path, shown: str | Path | None = None) -> Iterator[Path]:
    """Yields a unique temporary path beside ``path`` to write; renamed to ``path`` when the
    block succeeds, removed when it fails. A failed write raises :func:`write_error` naming
    ``shown`` (default ``path``)."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise write_error(e, shown or path) from None
    os.close(fd)
    try:
        yield Path(name)
        os.chmod(name, 0o666 & ~_umask())
        os.replace(name, path)
    except OSError as e:
        _unlink_quietly(name)
        raise write_error(e, shown or path) from None
    except BaseException:
        _unlink_quietly(name)
        raise


def write_atomic(path: Path, text: str, shown: str | Path | None = None) -> None:
    """Writes ``text`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path, shown) as tmp:
        tmp.write_text(text)


def new_temp_dir(dest: Path) -> Path:
    """A new, empty, uniquely named folder beside ``dest`` (its parents created as needed),
    with the permissions a plain ``mkdir`` would give."""
    for _ in range(_ATTEMPTS):
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
        except FileNotFoundError:
            continue  # another command removed a parent it had created to probe it; again
        except OSError as e:
            raise write_error(e, dest) from None
        os.chmod(tmp, 0o777 & ~_umask())
        return tmp
    raise config_error("", "cannot create a folder beside it: its parent keeps disappearing", str(dest))


@cache
def _renameat2() -> Callable[..., int] | None:
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn  # type: ignore[no-any-return]


_AT_FDCWD, _RENAME_NOREPLACE, _RENAME_EXCHANGE = -100, 1, 2


def _rename2(src: Path, dst: Path, flags: int) -> bool:
    """``renameat2(src, dst, flags)``; False where the system or file system lacks it."""
    import ctypes

    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(dst))


def _create(tmp: Path, dest: Path) -> None:
    """Renames ``tmp`` to ``dest``; FileExistsError if ``dest`` exists (an empty folder too)."""
    if _rename2(tmp, dest, _RENAME_NOREPLACE):
        return
    if os.path.lexists(dest):
        raise FileExistsError(errno.EEXIST, "exists", str(dest))
    try:
        os.rename(tmp, dest)  # the small window here can only replace an empty folder
    except OSError as e:
        if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise FileExistsError(errno.EEXIST, "exists", str(dest)) from None
        raise


def _swap(tmp: Path, dest: Path) -> None:
    """Puts ``tmp`` at ``dest`` and the folder that was there at ``tmp``, in one step where
    the system allows; FileNotFoundError if ``dest`` is gone."""
    if _rename2(tmp, dest, _RENAME_EXCHANGE):
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
    os.rename(dest, aside)  # onto the empty folder just made: a unique name nobody else uses
    try:
        os.rename(tmp, dest)
    except OSError:
        os.rename(aside, dest)  # someone else took the place; put the earlier one back
        raise
    os.rename(aside, tmp)


def install_dir(tmp: Path, dest: Path, may_replace: Callable[[Path], bool]) -> None:
    """Moves the filled folder ``tmp`` to ``dest``: created if absent, else swapped with what
    is there when ``may_replace(dest)`` says so (the earlier folder is then removed); when it
    says no, ``dest`` is kept and ``tmp`` removed. On any failure ``tmp`` is removed; a
    refusal is the ConfigError ``may_replace`` raises."""
    try:
        for _ in range(_ATTEMPTS):
            try:
                _create(tmp, dest)
                return
            except FileExistsError:
                pass
            if not may_replace(dest):
                shutil.rmtree(tmp, ignore_errors=True)
                return
            try:
                _swap(tmp, dest)
            except FileNotFoundError:
                continue  # removed meanwhile: create it
            except OSError as e:
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    continue
                raise
            shutil.rmtree(tmp, ignore_errors=True)
            return
        raise config_error("", "other commands keep replacing it at the same time; try again", str(dest))
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise write_error(e, dest) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
