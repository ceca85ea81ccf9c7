"""Issue 36: the ``uml`` backend's counterpart of the simulator's ``host_jitter``: a kernel in
virtual time takes no time to process a packet, so a written ``host_jitter`` makes the link
emulators hold every frame a host sends for the simulator's draw (``sim::host``) before it
enters the link (``crates/linkemu``, ``--host-jitter``).

The scenario: one path, 10 Mbit/s, 10 ms each way, a 10 KB chunk every 200 ms (a periodic
application far below the link's rate: no queue builds, so the RTT is 20 ms plus serialisation
plus what the hosts add). A frame's hold is its own draw d (mean m) or, when the frame before
it leaves later, that frame's time (FIFO): at least d. Each RTT sample crosses two holds (the
data segment's at the client's side of the path, or the server's, and its ACK's at the
other), so the mean RTT grows by at least 2·m − the samples' spread; with m = 1 ms over some
hundred samples, by more than 1 ms. Without ``host_jitter`` the RTT is the link's alone.
Needs the UML kernel (``bash scripts/setup-uml.sh``).
"""

from __future__ import annotations

from typing import Any

import pytest

from mptcplab.errors import ConfigError
from mptcplab.kernel.uml.backend import run_uml

MEAN_S = 0.001


def _scenario(**conn: Any) -> dict[str, Any]:
    return {
        "name": "uml-host-jitter", "seed": 5, "duration": "6s",
        "paths": [{"name": "p", "rate": "10Mbit", "delay": "10ms", "queue": "100 packets"}],
        "connections": [{"name": "tcp", "kind": "tcp", "stack": "linux", "paths": ["p"], "cc": "cubic",
                         "app": {"kind": "periodic", "size": "10KB", "period": "200ms"}, **conn}],
        "output": {"warmup": "1s"},
    }


def test_a_written_host_jitter_delays_every_frame_and_none_leaves_the_link_alone() -> None:
    plain = run_uml(_scenario()).summary["subflows"][0]
    held = run_uml(_scenario(host_jitter=f"{MEAN_S * 1e3:g}ms")).summary["subflows"][0]
    # The link alone: 20 ms of propagation plus one 1500 B packet's serialisation (1.2 ms) at
    # most, per sample.
    assert 0.020 <= plain["min_rtt_s"] <= 0.0215, plain
    assert held["mean_rtt_s"] - plain["mean_rtt_s"] > 1.0 * MEAN_S, (plain, held)
    # Same scenario and seed, same draws.
    again = run_uml(_scenario(host_jitter=f"{MEAN_S * 1e3:g}ms")).summary["subflows"][0]
    assert again == held


def test_host_jitter_must_be_the_same_on_every_connection() -> None:
    sc = _scenario(host_jitter="1ms")
    sc["connections"].append(dict(sc["connections"][0], name="tcp2"))
    del sc["connections"][1]["host_jitter"]
    with pytest.raises(ConfigError) as e:
        run_uml(sc)
    assert e.value.path == "connections.tcp2.host_jitter", e.value
