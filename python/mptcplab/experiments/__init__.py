"""Reproductions of the seed papers' figures and tables, and the report that gathers them.

Each reproduction is one module here exposing ``NAME``, ``TITLE``, ``SOURCE`` and
``run(ctx: Context) -> Result``; :data:`REGISTRY` maps names to modules, imported lazily so
listing them stays cheap. ``mptcplab reproduce NAME`` runs one, ``reproduce all`` runs every
one and builds ``report/index.html``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["REGISTRY", "load", "names"]

#: Reproduction name → module (under ``mptcplab.experiments``), in report order.
REGISTRY: dict[str, str] = {
    "chen-towsley-fig2": "chen_towsley_fig2",
    "chen-towsley-fig3": "chen_towsley_fig3",
    "chen-towsley-fig5": "chen_towsley_fig5",
    "chen-towsley-fig6": "chen_towsley_fig6",
    "chen-towsley-fig7": "chen_towsley_fig7",
    "chen-towsley-fig8": "chen_towsley_fig8",
    "kato": "kato",
    "stms": "stms",
    "nsdi12-fig4": "nsdi12_fig4",
    "olia": "olia",
    "kernel-agreement": "kernel_agreement",
    "league": "league",
}


def names() -> list[str]:
    return list(REGISTRY)


def load(name: str) -> ModuleType:
    """The module of reproduction ``name`` (a :class:`KeyError` lists the known ones)."""
    if name not in REGISTRY:
        raise KeyError(name)
    return importlib.import_module(f"mptcplab.experiments.{REGISTRY[name]}")
