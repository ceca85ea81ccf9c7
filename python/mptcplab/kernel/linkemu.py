"""``python -m mptcplab.kernel.linkemu ARGS``: the Linux backend's real-time link emulator.

The emulator (``crates/linkemu``) is compiled into the package's extension module
(:func:`mptcplab._core.linkemu_main`), so every installation that can import
:mod:`mptcplab._core` has it, whether installed from a wheel, with ``pip install .`` or
editable; the backend starts it with the running interpreter (``sys.executable``). It takes
the arguments of the ``mptcplab-linkemu`` program (``crates/linkemu/src/lib.rs``), runs until
SIGTERM or SIGINT without the interpreter lock, and exits with its exit code.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str]) -> int:
    from mptcplab import _core

    return int(_core.linkemu_main(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
