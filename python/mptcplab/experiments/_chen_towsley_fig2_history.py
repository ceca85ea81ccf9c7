"""The downloads before a measured one in the Chen & Towsley Fig. 2 reproduction
(:mod:`chen_towsley_fig2`): seed 000 §III randomizes the order of its configurations, and
footnote 1's cache carries what earlier downloads from the same server left."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments import _chen_towsley_links as links

NAME = "chen-towsley-fig2"

#: The seed's configurations (§III): single-path over WiFi or over the cellular link (``"tcp"``,
#: ``"tcp-cell"``: CUBIC, Linux 3.11's default for single-path TCP) or the measured download's own
#: MPTCP configuration (``"mptcp"``), each with one of the seed's file sizes (8 KB to 32 MB, the
#: sizes Fig. 3's section runs). The carrier is not drawn: the run's cellular link stands for all.
KINDS = ("tcp", "tcp-cell", "mptcp")
SIZES = ("8KB", "32KB", "128KB", "512KB", "2MB", "8MB", "32MB")
#: How many downloads from the same server precede a measured one (assumed; ablated).
K = 3
K_ABLATION = (1, 6)
#: The pause between one download's close and the next one's first SYN (assumed).
GAP = "1s"
#: The measured connection's name (the earlier ones are ``earlier1``, ``earlier2``, ...).
CONN = "mptcp"


def history(seed: int, k: int = K) -> tuple[tuple[str, str], ...]:
    """The ``k`` downloads (kind, size) before a measured one, drawn uniformly from the seed's
    configurations by a generator seeded with the run's seed, so the same seed gives the same
    history; the ``k`` that immediately precede (a longer history adds older downloads)."""
    import random

    rng = random.Random(f"{NAME} history {seed}")
    drawn = [(rng.choice(KINDS), rng.choice(SIZES)) for _ in range(max(K, *K_ABLATION))]
    return tuple(drawn[len(drawn) - k:]) if k else ()


def _earlier(kind: str, size: str) -> dict[str, Any]:
    app = {"kind": "download", "size": size}
    if kind == "mptcp":
        return links.mptcp(app)
    path = "cell" if kind == "tcp-cell" else "wifi"
    return {**links.mptcp(app, paths=(path,)), "kind": "tcp", "cc": "cubic"}


def _bytes(size: str) -> float:
    return float(size[:-2]) * (1e3 if size.endswith("KB") else 1e6)


def connections(earlier: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    """The ``earlier`` downloads (kind, size) from the same server, then the measured one, each
    started :data:`GAP` after the previous one closed."""
    conns = []
    for k, (kind, size) in enumerate(earlier):
        c = {**_earlier(kind, size), "name": f"earlier{k + 1}"}
        if k:
            c.update(after=f"earlier{k}", start=GAP)
        conns.append(c)
    measured = links.mptcp({"kind": "download", "size": "16MB"})
    if conns:
        measured.update(after=conns[-1]["name"], start=GAP)
    return [*conns, measured]


def duration(earlier: tuple[tuple[str, str], ...]) -> str:
    """Long enough for the earlier downloads at 1 Mbit/s (below any rate they reach here) and the
    measured one's start on every grid point."""
    return f"{10 + sum(2 + 8 * _bytes(size) / 1e6 for _, size in earlier):g}s"


def scenario(earlier: tuple[tuple[str, str], ...] = ()) -> dict:
    """The measured download after the ``earlier`` downloads (kind, size) from the same server."""
    return {
        "name": NAME,
        "duration": duration(earlier),
        "paths": [
            links.path("wifi", links.WIFI),
            {"name": "cell", "rate": "10Mbit", "delay": "30ms", "queue": "1000 packets"},
        ],
        "connections": connections(earlier),
    }
