"""The downloads before a measured one in the Chen & Towsley Fig. 2 reproduction
(:mod:`chen_towsley_fig2`): seed 000 §III randomizes the order of its configurations and
measures every hour, and footnote 1's cache carries what earlier downloads from the same server
left.

The measurement round. Seed 000 §III: "The client uses *wget* to retrieve Web objects of
different sizes (8 KB to 32 MB) via all available paths. We randomize the order of each
configuration (i.e., single/multi-path, file sizes, and cellular carriers) when performing
measurements. The measurements were conducted every hour over multiple days", with "three
carriers (i.e., AT&T 4G LTE, Verizon 4G LTE, and Sprint 3G EVDO)" and "no more than two
wireless interfaces (including the WiFi interface) are used simultaneously". One round is then
every configuration once, in a random order: single-path over WiFi, single-path over each of the
three carriers, and MPTCP over WiFi and each carrier, each at every file size (7 × 7 = 49
downloads). A measured download of Fig. 2 is one of the round's MPTCP configurations with a file
of 1 MB to 32 MB (Fig. 2's caption: "Samples are MPTCP measurements for different carriers of
file sizes 1MB to 32MB"), and the downloads before it in its round are its history.

The round's boundary. Linux 3.11's cache entry lives ``TCP_METRICS_TIMEOUT`` (one hour) from its
last update (``tcp_update_metrics`` stamps it at every close; ``tcpm_check_stamp`` resets an
older one). Whether an hour passed between the previous round's last download to a destination
and this round's first is not given (the seed gives the rounds' period, not their length), so the
claims' runs take the cache as empty at the round's start (assumed), and the verdict rule of
:mod:`chen_towsley_fig2` also runs the other end: the previous round's 49 downloads before this
one's, the cache carried over.

The carrier of an earlier download is not simulated: every earlier download uses the run's
cellular link (assumed). A single-path cellular download writes only its carrier's entry (the
cache is per destination: the client's cellular address), which the measured download reads
only when its cellular subflow is established; on the loss-free cellular link neither a cached
ssthresh nor a cached RTT delays that subflow's first data packet (t_4), and the WiFi subflow
never reads that entry, so it cannot move the count directly. It could only through a later
MPTCP download's coupled WiFi subflow; the simulated history leaves the single-path cellular
downloads out (they are two fifths of the round's bytes), and the ablation runs them too.
"""

from __future__ import annotations

from typing import Any

from mptcplab.experiments import _chen_towsley_links as links

NAME = "chen-towsley-fig2"

#: The seed's configurations (§III), one per carrier where a carrier is used: single-path over
#: WiFi (``"tcp"``), single-path over a carrier (``"tcp-cell"``; both CUBIC, Linux 3.11's default
#: for single-path TCP) and MPTCP over WiFi and a carrier (``"mptcp"``, the measured download's
#: own configuration).
CARRIERS = ("AT&T", "Verizon", "Sprint")
KINDS = ("tcp", "tcp-cell", "mptcp")
CONFIGS: tuple[str, ...] = ("tcp", *("tcp-cell",) * len(CARRIERS), *("mptcp",) * len(CARRIERS))
#: The seed's file sizes (8 KB to 32 MB, the sizes Fig. 3's section runs).
SIZES = ("8KB", "32KB", "128KB", "512KB", "2MB", "8MB", "32MB")
#: The measured download's sizes: the round's sizes within Fig. 2's 1 MB to 32 MB.
MEASURED_SIZES = ("2MB", "8MB", "32MB")
#: The round boundary (module doc): the cache empty at the round's start (the claims' runs), or
#: carried over from the previous round.
EMPTY, CARRIED = "empty", "carried"
#: How many downloads before the measured one the short-history ablation keeps.
SHORT = 3
#: The pause between one download's close and the next one's first SYN (assumed).
GAP = "1s"
#: The measured connection's name (the earlier ones are ``earlier1``, ``earlier2``, ...).
CONN = "mptcp"

Download = tuple[str, str]


def round_order(rng: Any) -> list[tuple[str, str, int]]:
    """One round: every (configuration, size) once, in the order ``rng`` shuffles them; the
    third field tells the three carriers' copies of a configuration apart."""
    out = [(kind, size, CONFIGS[:i].count(kind)) for i, kind in enumerate(CONFIGS) for size in SIZES]
    rng.shuffle(out)
    return out


def measured_draw(seed: int, point: str) -> tuple[str, tuple[Download, ...], tuple[Download, ...]]:
    """The measured download's size, the downloads before it in its round, and the previous
    round, drawn by a generator seeded with the run's seed and its grid point (so the same
    point and seed give the same history): the measured configuration is one of the round's MPTCP
    downloads at one of :data:`MEASURED_SIZES` (which carrier's copy is drawn too; the copies
    are simulated alike, on the run's cellular link)."""
    import random

    rng = random.Random(f"{NAME} round {seed} {point}")
    size = rng.choice(MEASURED_SIZES)
    return size, *_before(rng, size)


def _before(rng: Any, size: str) -> tuple[tuple[Download, ...], tuple[Download, ...]]:
    """The downloads before one of the round's MPTCP downloads of ``size`` (which carrier's copy,
    drawn), and the previous round."""
    carrier = rng.randrange(len(CARRIERS))
    this = round_order(rng)
    prev = round_order(rng)
    at = this.index(("mptcp", size, carrier))
    return tuple((k, z) for k, z, _ in this[:at]), tuple((k, z) for k, z, _ in prev)


def history_of_size(seed: int, point: str, size: str) -> tuple[Download, ...]:
    """The downloads before a measured MPTCP download of a given ``size`` (any of the round's
    sizes, as Fig. 3 measures them) in its round, the cache empty at the round's start."""
    import random

    return _before(random.Random(f"{NAME} round {seed} {point}"), size)[0]


def history(seed: int, point: str, boundary: str = EMPTY) -> tuple[Download, ...]:
    """The downloads (kind, size) before the measured one at ``seed`` and grid ``point``: its
    round's earlier ones, after the previous round's when the cache is ``CARRIED`` over."""
    _size, before, prev = measured_draw(seed, point)
    return (*prev, *before) if boundary == CARRIED else before


def measured_size(seed: int, point: str) -> str:
    return measured_draw(seed, point)[0]


def _earlier(kind: str, size: str) -> dict[str, Any]:
    app = {"kind": "download", "size": size}
    if kind == "mptcp":
        return links.mptcp_autotuned(app)
    path = "cell" if kind == "tcp-cell" else "wifi"
    return {**links.mptcp_autotuned(app, paths=(path,)), "kind": "tcp", "cc": "cubic"}


def _bytes(size: str) -> float:
    return float(size[:-2]) * (1e3 if size.endswith("KB") else 1e6)


def simulated(earlier: tuple[Download, ...], cell_downloads: bool = False) -> tuple[Download, ...]:
    """The downloads of a history that are simulated: all with ``cell_downloads``, else all but
    the single-path cellular ones (module doc)."""
    return earlier if cell_downloads else tuple(x for x in earlier if x[0] != "tcp-cell")


def connections(earlier: tuple[Download, ...], size: str = "16MB", cell_downloads: bool = False) -> list[dict[str, Any]]:
    """The ``earlier`` downloads (kind, size) from the same server (:func:`simulated`), then the
    measured one of ``size``, each started :data:`GAP` after the previous one closed."""
    conns = []
    for k, (kind, z) in enumerate(simulated(earlier, cell_downloads)):
        c = {**_earlier(kind, z), "name": f"earlier{k + 1}"}
        if k:
            c.update(after=f"earlier{k}", start=GAP)
        conns.append(c)
    measured = links.mptcp_autotuned({"kind": "download", "size": size})
    if conns:
        measured.update(after=conns[-1]["name"], start=GAP)
    return [*conns, measured]


def duration(earlier: tuple[Download, ...], cell_downloads: bool = False) -> str:
    """Long enough for the simulated earlier downloads at 1 Mbit/s (below any rate they reach
    here) and the measured one's start on every grid point."""
    return f"{10 + sum(2 + 8 * _bytes(size) / 1e6 for _, size in simulated(earlier, cell_downloads)):g}s"


def scenario(earlier: tuple[Download, ...] = (), size: str = "16MB", cell_downloads: bool = False) -> dict:
    """The measured download of ``size`` after the ``earlier`` downloads (kind, size) from the
    same server (:func:`simulated`)."""
    return {
        "name": NAME,
        "duration": duration(earlier, cell_downloads),
        "paths": [
            links.path("wifi", links.WIFI),
            {"name": "cell", "rate": "10Mbit", "delay": "30ms", "queue": "1000 packets"},
        ],
        "connections": connections(earlier, size, cell_downloads),
    }
