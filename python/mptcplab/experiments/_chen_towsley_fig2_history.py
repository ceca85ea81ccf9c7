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

Each earlier download runs on its own carrier's path. Linux's metrics cache is per destination
(3.11's ``tcp_metrics.c`` keys an entry by the peer's address; the engine keys it per host, peer
and path): the client's WiFi address and each carrier's cellular address are distinct
destinations for the server, so a download over another carrier writes that carrier's cellular
entry, never the measured carrier's. The scenario therefore has one cellular path per carrier:
the measured carrier's is the run's own cellular link (``cell``), the other two carriers' are the
shared links' definitions (``_chen_towsley_links.cellular``; ``cell-att``, ``cell-verizon``,
``cell-sprint``). Every earlier download is simulated, on its own paths: single-path WiFi on
``wifi``, single-path cellular on its carrier's path, MPTCP on ``wifi`` and its carrier's path. A
single-path cellular download writes only its carrier's cellular entry; on the measured carrier
that is the entry the measured download's cellular subflow reads, and on any carrier it is the
entry a later MPTCP download over that carrier reads, whose coupled WiFi subflow then writes the
WiFi entry the measured download reads: by the cache's rule either can move the count, so none
is left out (the ablation also runs the history without them).
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

#: An earlier download: (kind, size, carrier); the carrier is "" for single-path WiFi.
Download = tuple[str, str, str]


def path_of(carrier: str) -> str:
    """The path name of ``carrier``'s cellular link when it is not the measured carrier's."""
    return "cell-" + carrier.lower().replace("&", "")


def round_order(rng: Any) -> list[tuple[str, str, int]]:
    """One round: every (configuration, size) once, in the order ``rng`` shuffles them; the
    third field is the carrier's index among :data:`CARRIERS` (0 for single-path WiFi)."""
    out = [(kind, size, CONFIGS[:i].count(kind)) for i, kind in enumerate(CONFIGS) for size in SIZES]
    rng.shuffle(out)
    return out


def downloads(order: list[tuple[str, str, int]]) -> tuple[Download, ...]:
    """A drawn order as downloads (kind, size, carrier)."""
    return tuple((k, z, "" if k == "tcp" else CARRIERS[c]) for k, z, c in order)


def measured_draw(seed: int, point: str) -> tuple[str, tuple[Download, ...], tuple[Download, ...]]:
    """The measured download's size, the downloads before it in its round, and the previous
    round, drawn by a generator seeded with the run's seed and its grid point (so the same
    point and seed give the same history): the measured configuration is one of the round's MPTCP
    downloads at one of :data:`MEASURED_SIZES`, over the carrier :func:`measured_carrier` gives."""
    return _draw(seed, point)[:3]


def measured_carrier(seed: int, point: str) -> str:
    """The carrier of the measured download at ``seed`` and ``point`` (drawn with its round)."""
    return _draw(seed, point)[3]


def _draw(seed: int, point: str) -> tuple[str, tuple[Download, ...], tuple[Download, ...], str]:
    import random

    rng = random.Random(f"{NAME} round {seed} {point}")
    size = rng.choice(MEASURED_SIZES)
    return size, *_before(rng, size)


def _before(rng: Any, size: str, carrier: int | None = None) -> tuple[tuple[Download, ...], tuple[Download, ...], str]:
    """The downloads before one of the round's MPTCP downloads of ``size`` over ``carrier`` (an
    index of :data:`CARRIERS`; drawn when None), the previous round, and the carrier."""
    if carrier is None:
        carrier = rng.randrange(len(CARRIERS))
    this = round_order(rng)
    prev = round_order(rng)
    at = this.index(("mptcp", size, carrier))
    return downloads(this[:at]), downloads(prev), CARRIERS[carrier]


def history(seed: int, point: str, boundary: str = EMPTY) -> tuple[Download, ...]:
    """The downloads (kind, size, carrier) before the measured one at ``seed`` and grid ``point``:
    its round's earlier ones, after the previous round's when the cache is ``CARRIED`` over."""
    _size, before, prev = measured_draw(seed, point)
    return (*prev, *before) if boundary == CARRIED else before


def measured_size(seed: int, point: str) -> str:
    return measured_draw(seed, point)[0]


def _paths(carrier: str, measured: str) -> str:
    return "cell" if carrier == measured else path_of(carrier)


def _earlier(kind: str, size: str, carrier: str, measured: str) -> dict[str, Any]:
    app = {"kind": "download", "size": size}
    if kind == "mptcp":
        return links.mptcp_autotuned(app, paths=("wifi", _paths(carrier, measured)))
    path = _paths(carrier, measured) if kind == "tcp-cell" else "wifi"
    return {**links.mptcp_autotuned(app, paths=(path,)), "kind": "tcp", "cc": "cubic"}


def _bytes(size: str) -> float:
    return float(size[:-2]) * (1e3 if size.endswith("KB") else 1e6)


def simulated(earlier: tuple[Download, ...], cell_downloads: bool = True) -> tuple[Download, ...]:
    """The downloads of a history that are simulated: all (module doc), or without
    ``cell_downloads`` all but the single-path cellular ones (an ablation)."""
    return earlier if cell_downloads else tuple(x for x in earlier if x[0] != "tcp-cell")


def connections(earlier: tuple[Download, ...], size: str = "16MB", cell_downloads: bool = True,
                carrier: str = CARRIERS[0]) -> list[dict[str, Any]]:
    """The ``earlier`` downloads (kind, size, carrier) from the same server (:func:`simulated`),
    each on its carrier's path (``cell`` for the measured ``carrier``), then the measured one of
    ``size``, each started :data:`GAP` after the previous one closed."""
    conns = []
    for k, (kind, z, net) in enumerate(simulated(earlier, cell_downloads)):
        c = {**_earlier(kind, z, net, carrier), "name": f"earlier{k + 1}"}
        if k:
            c.update(after=f"earlier{k}", start=GAP)
        conns.append(c)
    measured = links.mptcp_autotuned({"kind": "download", "size": size})
    if conns:
        measured.update(after=conns[-1]["name"], start=GAP)
    return [*conns, measured]


#: The rate (bit/s) below any a download reaches on its paths, for the run's duration: 1 Mbit/s,
#: and for a single-path download over the 3G carrier a tenth of its trace's mean (0.52 Mbit/s,
#: delivery gaps up to 11.6 s: the shared links). A run ends when its last download has, so a
#: generous duration costs nothing.
SLOW_BPS = {"": 1e6, "Sprint": 0.05e6}


def duration(earlier: tuple[Download, ...], cell_downloads: bool = True) -> str:
    """Long enough for the simulated earlier downloads (at :data:`SLOW_BPS`, and 30 s each for
    handshakes and timeouts) and the measured one's start on every grid point."""
    slow = [SLOW_BPS[net if k == "tcp-cell" and net in SLOW_BPS else ""] for k, _z, net in simulated(earlier, cell_downloads)]
    return f"{10 + sum(30 + 8 * _bytes(z) / r for (_k, z, _n), r in zip(simulated(earlier, cell_downloads), slow, strict=True)):g}s"


def paths(data: Any = None) -> list[dict[str, Any]]:
    """WiFi, the measured carrier's cellular link (``cell``, the grid's) and every carrier's own
    (:func:`path_of`; the measured carrier's stays unused)."""
    return [
        links.path("wifi", links.WIFI),
        {"name": "cell", "rate": "10Mbit", "delay": "30ms", "queue": "1000 packets"},
        *(links.path(path_of(net), links.cellular(net, data)) for net in CARRIERS),
    ]


def scenario(earlier: tuple[Download, ...] = (), size: str = "16MB", cell_downloads: bool = True,
             carrier: str = CARRIERS[0], data: Any = None) -> dict:
    """The measured download of ``size`` over WiFi and ``carrier`` after the ``earlier`` downloads
    (kind, size, carrier) from the same server (:func:`simulated`)."""
    return {
        "name": NAME,
        "duration": duration(earlier, cell_downloads),
        "paths": paths(data),
        "connections": connections(earlier, size, cell_downloads, carrier),
    }
