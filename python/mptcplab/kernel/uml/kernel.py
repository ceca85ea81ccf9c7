"""Where the ``uml`` backend finds its kernel: built by ``scripts/setup-uml.sh`` from a Debian
kernel source package (or a kernel source tree, ``MPTCPLAB_UML_TREE``) with :data:`CONFIG`
(this folder's ``kernel.config``) and cached
outside the clone as ``<cache>/<package version>-<config hash>/`` (``linux``, ``config``,
``build.json``), after the source patches of this folder (``*.patch``) are applied.

The cache folders looked in, in order: ``$MPTCPLAB_UML_CACHE``; the user's
``${XDG_CACHE_HOME:-~/.cache}/mptcplab/uml``; the machine's ``/var/cache/mptcplab/uml``
(where a root build goes, so that every user of the machine finds it). ``$MPTCPLAB_UML_KERNEL``
names a kernel binary directly (its ``build.json`` beside it, if any, is read). Only a
kernel built with this package's configuration is taken (its hash is in the folder's name):
a changed ``kernel.config`` asks for a new build instead of running an old kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CONFIG", "SETUP_COMMAND", "UmlKernel", "cache_dirs", "config_hash", "find_kernel", "patches"]

CONFIG = Path(__file__).with_name("kernel.config")
SETUP_COMMAND = "bash scripts/setup-uml.sh"


@dataclass(frozen=True)
class UmlKernel:
    """A built UML kernel: its binary and what ``build.json`` records of it."""

    binary: Path
    info: dict[str, Any]

    @property
    def label(self) -> str:
        """The kernel's release, source package version and configuration hash, as stored runs
        name their kernel: ``7.3.4 (uml 7.3.4-1~bpo13+1 config 627fe4c6574e)``."""
        return f"{self.info.get('kernel_release', '?')} (uml {self.info.get('version', '?')} config {config_hash()})"

    def has_option(self, option: str) -> bool:
        """Whether the kernel's configuration (``config`` beside the binary, the build's
        ``.config``) sets ``option`` (``y``); False when the file is missing."""
        try:
            text = (self.binary.parent / "config").read_text()
        except OSError:
            return False
        return f"\n{option}=y\n" in f"\n{text}"


def patches() -> list[Path]:
    """The source patches applied before the build, in the order applied (name order)."""
    return sorted(CONFIG.parent.glob("*.patch"))


def config_hash() -> str:
    """The first 12 hex digits of the SHA-256 of the configuration followed by the patches
    (the cache key's second half, as scripts/setup-uml.sh computes it)."""
    h = hashlib.sha256(CONFIG.read_bytes())
    for p in patches():
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def cache_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("MPTCPLAB_UML_CACHE"):
        dirs.append(Path(os.environ["MPTCPLAB_UML_CACHE"]))
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    dirs += [Path(xdg) / "mptcplab" / "uml", Path("/var/cache/mptcplab/uml")]
    return dirs


def _read_info(folder: Path) -> dict[str, Any]:
    try:
        info = json.loads((folder / "build.json").read_text())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def find_kernel() -> UmlKernel | None:
    """The kernel to run, or None when none is built with this configuration."""
    explicit = os.environ.get("MPTCPLAB_UML_KERNEL")
    if explicit:
        p = Path(explicit)
        return UmlKernel(p, _read_info(p.parent)) if p.is_file() and os.access(p, os.X_OK) else None
    suffix = "-" + config_hash()
    for d in cache_dirs():
        try:
            found = sorted((f for f in d.iterdir() if f.name.endswith(suffix)), key=lambda f: f.stat().st_mtime)
        except OSError:
            continue
        for folder in reversed(found):
            binary = folder / "linux"
            if binary.is_file() and os.access(binary, os.X_OK) and (folder / "build.json").is_file():
                return UmlKernel(binary, _read_info(folder))
    return None
