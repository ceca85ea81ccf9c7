"""Packet captures of a simulator run, asked for by the caller alone (``mptcplab run --pcap``,
``mptcplab.run(pcap_dir=...)``): a scenario never chooses where files are written.

The engine writes the captures into a fresh directory beside the target, which is moved into
place only when the run succeeded; a run that fails, is interrupted or fills the disk leaves
nothing behind (neither the files nor the directories made for them).
"""

from __future__ import annotations

import contextlib
import operator
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mptcplab.errors import ConfigError, config_error
from mptcplab.outdir import follow, is_empty, new_temp_dir

__all__ = ["CAPTURE_POINTS", "CaptureRequest", "file_component"]

#: Where captures are taken: one file per host, per host interface, or per link.
CAPTURE_POINTS = ("host", "interface", "link")

#: Smallest snap length: Ethernet, IPv4 and TCP headers without options (14 + 20 + 20 B);
#: headers are kept whole whatever the snap length.
MIN_SNAPLEN = 54


def file_component(name: str) -> str:
    """A user-given name as part of one file name inside the capture folder, as the engine
    writes it (``trace::pcap::file_component``): ``%``, ``/`` and control characters, and a
    leading ``.``, percent-encoded per UTF-8 byte, so a name cannot leave the folder or hide."""
    return "".join(
        "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        if ch in "%/" or ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or (i == 0 and ch == ".")
        else ch
        for i, ch in enumerate(name)
    )


@dataclass(frozen=True)
class CaptureRequest:
    """Captures into ``dir`` (which must be new or an empty directory), ``per`` capture
    point, keeping ``snaplen`` bytes per packet (None: all). Errors name ``label`` (the
    option the user gave: ``pcap_dir`` in the API, ``--pcap`` on the command line) and show
    ``shown`` (default ``dir``) as the captures' place."""

    dir: Path
    per: str = "host"
    snaplen: int | None = None
    label: str = "pcap_dir"
    shown: Path | None = None

    def _option(self, name: str) -> str:
        """The name of the companion option ``name`` (``pcap_per``) as the user wrote it."""
        return "--" + name.replace("_", "-") if self.label.startswith("--") else name

    def check(self) -> None:
        """Refuses, before the run, a capture point or snap length that does not exist and
        a directory that is not new or empty or could not be written."""
        from mptcplab.runner import check_output_dir

        if self.per not in CAPTURE_POINTS:
            raise config_error(self._option("pcap_per"), f"{self.per!r} is not one of {', '.join(CAPTURE_POINTS)}")
        s = self.snaplen
        try:
            n = None if s is None or isinstance(s, bool) else operator.index(s)  # numpy's integers too
        except TypeError:
            n = None
        if s is not None and (n is None or not MIN_SNAPLEN <= n < 2**32):
            raise config_error(self._option("snaplen"), f"{s!r} is not a whole number of bytes from {MIN_SNAPLEN} to 2^32-1")
        target = follow(self.dir)
        try:
            taken = target.exists() and (not target.is_dir() or not is_empty(target))
        except OSError as e:
            raise config_error(self.label, f"cannot use {self.dir}: {e.strerror}") from None
        if taken:
            raise config_error(self.label, "exists and is not an empty directory; refusing to overwrite it", str(self.dir))
        check_output_dir(self.dir, self.label, sibling=True)

    @contextlib.contextmanager
    def staged(self) -> Iterator[Path]:
        """A fresh directory beside the target for the engine to write into, moved into place
        when the block ends normally; on any exception (KeyboardInterrupt included) it is
        removed with whatever it holds, and so are the parent directories made for it."""
        target = follow(self.dir)  # the folder a symbolic link names, as for --out
        made: list[Path] = []
        try:
            for d in reversed([p for p in [target.absolute().parent, *target.absolute().parent.parents] if not p.exists()]):
                d.mkdir()
                made.append(d)
            tmp = new_temp_dir(target)  # unique beside the target, as every output's is
        except OSError as e:
            _remove(None, made)
            raise config_error(self.label, f"cannot create {self.dir}: {e.strerror}") from None
        except ConfigError as e:
            _remove(None, made)
            raise config_error(self.label, f"cannot create {self.dir}: {e.message}") from None
        try:
            yield tmp
            try:
                # Onto a missing or empty directory (rename(2) replaces an empty one).
                os.rename(tmp, target)
            except OSError as e:
                raise config_error(self.label, f"cannot move the captures into {self.shown or target}: {e.strerror}") from None
        except BaseException:
            _remove(tmp, made)
            raise

    def write_error(self, err: OSError, tmp: Path) -> ConfigError:
        """The one-line error for a capture file the engine could not write (``err`` names
        the file in ``tmp``, shown at its final place)."""
        file = Path(err.filename) if err.filename else tmp
        shown = self.shown or self.dir
        with contextlib.suppress(ValueError):
            file = shown / file.relative_to(tmp)
        text = os.strerror(err.errno) if err.errno else (err.strerror or str(err))
        return config_error(self.label, text[:1].lower() + text[1:], str(file))


def _remove(tmp: Path | None, made: list[Path]) -> None:
    """Removes ``tmp`` with its contents, then the directories in ``made`` (innermost last
    made, removed first) if they are empty."""
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    for d in reversed(made):
        with contextlib.suppress(OSError):
            d.rmdir()
