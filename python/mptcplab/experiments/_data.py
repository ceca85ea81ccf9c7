"""Where the reproductions find the data that is not shipped with the package.

The cellular traces (``traces/cellular/``) live in a data directory beside the repository,
``../shared``. It is looked up in this order, the first one given or found winning:

1. ``mptcplab reproduce --data DIR`` (``data`` below);
2. the environment variable ``MPTCPLAB_SHARED``;
3. ``../shared`` relative to the working directory (a checkout's root);
4. ``../shared`` beside the source tree this module was loaded from (a checkout used in
   place; an installed package has none).

A directory named by 1 or 2 that does not hold the traces is an error rather than a reason
to look further, so a mistyped path is never silently replaced by another copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from mptcplab.errors import config_error

__all__ = ["ENV", "repo_root", "shared_dir"]

#: The environment variable naming the data directory.
ENV = "MPTCPLAB_SHARED"

#: What a data directory must hold.
CELLULAR = Path("traces") / "cellular"


def _source_root() -> Path:
    """The repository root if this module runs from a checkout (``python/mptcplab/experiments``)."""
    return Path(__file__).resolve().parents[3]


def shared_dir(data: str | Path | None = None) -> Path:
    """The data directory (absolute), holding ``traces/cellular``; see the module doc for the
    order. Raises :class:`ConfigError` naming every place looked at."""
    for given, label in ((data, "--data"), (os.environ.get(ENV) or None, ENV)):
        if given is not None:
            d = Path(given).expanduser()
            if not (d / CELLULAR).is_dir():
                raise config_error(label, f"no {CELLULAR}/ in {d}; the data directory holds the cellular traces")
            return d.resolve()
    looked = [Path.cwd().parent / "shared", _source_root().parent / "shared"]
    for d in looked:
        if (d / CELLULAR).is_dir():
            return d.resolve()
    places = ", ".join(dict.fromkeys(str(d / CELLULAR) for d in looked))
    raise config_error(
        "reproduce", f"cellular traces not found; looked in {places} (../shared relative to the working directory, "
        f"then to the source tree); give the data directory with --data DIR or {ENV}=DIR"
    )


def repo_root(needed: str | Path) -> Path:
    """The repository root holding ``needed`` (e.g. ``scenarios/validation``): the working
    directory if it holds it, else the source tree. Raises :class:`ConfigError` otherwise."""
    looked = [Path.cwd(), _source_root()]
    for root in looked:
        if (root / needed).exists():
            return root.resolve()
    places = ", ".join(dict.fromkeys(str(r / needed) for r in looked))
    raise config_error("reproduce", f"{needed} not found; looked in {places}; run from the repository's root")
