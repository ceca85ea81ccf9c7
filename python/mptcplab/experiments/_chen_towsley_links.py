"""Links and TCP settings shared by the Chen & Towsley (seed 000) reproductions.

Until the project has named link presets, the WiFi and cellular links are defined here from
the seed's §III–V measurements. Every value is an assumption stated next to it; none was
adjusted to move a reproduced number towards the paper's.

- WiFi (home 802.11g router, §III): base RTT 30 ms ("stable average connection RTT of
  approximately 30 ms", §V-A), Bernoulli loss 0.9 % (§IV), 20 Mbit/s (assumed: the practical
  TCP rate of 802.11g; with 0.9 % loss the flow is loss-limited far below it, so the rate
  hardly matters), a 50-packet queue (assumed, ≈ 30 ms at 20 Mbit/s: WiFi shows little
  bufferbloat, §V-A).
- Cellular: no random loss (< 0.03 % measured, §IV). Capacity from the Mahimahi traces of
  real U.S. networks in ``traces/cellular/`` of the data directory (``../shared``; see ``_data``):
  AT&T LTE → ``ATT-LTE-driving-2016`` (mean 4.6 Mbit/s), Verizon LTE → ``Verizon-LTE-short``
  (5.0 Mbit/s), Sprint 3G EVDO → ``Verizon-EVDO-driving`` (0.52 Mbit/s, the only EVDO trace).
  Base RTT: the smallest per-carrier average of Fig. 3 (60 ms LTE, 160 ms 3G). Queue: 1000
  packets, the Linux default ``txqueuelen`` (the classic bufferbloat default), for every
  carrier alike. Uplink (ACKs): a constant 5 Mbit/s (LTE) or 1 Mbit/s (3G), assumed.
- Bufferbloated cellular (§V-C, Figs. 7-8): the paper only describes the RTTs it saw
  (80 ms → 800 ms, up to 3.5 s between 20 and 32 s, 400 ms after 35 s). We script a cause,
  not the RTT: base RTT 80 ms, a deep 3000-packet queue (4.5 MB, more than the 4 MiB send
  buffer holds, so the loss-free cellular window can grow until the shared send buffer is full of
  cellular data, the flow-starvation condition of §V-C), and a downlink capacity of
  10 Mbit/s that drops to 4 Mbit/s between 20 and 32 s (a scripted capacity dip; all values
  assumed).
- TCP: Linux 3.11 as measured by the paper: I_w = 10, delayed ACKs b = 2, slow start +1 MSS
  per ACK and congestion avoidance counting ACKs (``tcp.slow_start = ca_counting = per_ack``),
  LIA ("coupled"), minRTT scheduler, 6 MB receive buffer (§V-C), 4 MiB send buffer (Linux's
  ``tcp_wmem`` maximum; the paper does not give it), on the stack the paper ran, MPTCP v0.88:
  ``stack = "linux-v0.9x"``, whose minRTT has opportunistic retransmission and penalisation on
  as that release did by default (Fig. 8 switches both), and whose meta socket charges one-MSS
  skbs of 4352 B truesize, so the 4 MiB hold about 1.37 MB of data; penalisation as v0.88
  tests it (``penalisation_rule = "v0.88"``: the holder of the oldest data is halved when its
  cwnd/SRTT is below the caller's, at most once per holder SRTT, whatever its state).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Linux 3.11's window growth (seed 000's kernel), on every subflow.
TCP_LINUX_311: dict[str, Any] = {"slow_start": "per_ack", "ca_counting": "per_ack", "iw": 10, "delack_segments": 2}

WIFI: dict[str, Any] = {"rate": "20Mbit", "delay": "15ms", "queue": "50 packets", "loss": "0.9%"}

#: carrier → (Mahimahi downlink trace, one-way delay, uplink rate).
CARRIERS: dict[str, tuple[str, str, str]] = {
    "AT&T": ("ATT-LTE-driving-2016.down", "30ms", "5Mbit"),
    "Verizon": ("Verizon-LTE-short.down", "30ms", "5Mbit"),
    "Sprint": ("Verizon-EVDO-driving.down", "80ms", "1Mbit"),
}
CELL_QUEUE = "1000 packets"

#: Scripted severe bufferbloat (Figs. 7-8): base RTT 80 ms, deep queue, capacity dip 20-32 s.
BLOAT_BASE_RTT_S = 0.080
BLOAT_RATE_BPS = 10e6
BLOAT_DIP_RATE_BPS = 4e6
BLOAT_DIP = (20.0, 32.0)
BLOATED: dict[str, Any] = {
    "delay": "40ms",
    "queue": "3000 packets",
    "up": {"rate": "5Mbit"},
    "down": {
        "rate": "10Mbit",
        "schedule": [{"at": "20s", "rate": "4Mbit"}, {"at": "32s", "rate": "10Mbit"}],
    },
}


def traces_dir(data: str | Path | None = None) -> Path:
    """The cellular traces (data, not shipped): ``traces/cellular`` in the data directory that
    ``data`` (``reproduce --data``) names or :func:`~mptcplab.experiments._data.shared_dir`
    finds; absolute, so that worker processes find it too."""
    from mptcplab.experiments._data import CELLULAR, shared_dir

    return shared_dir(data) / CELLULAR


def cellular(carrier: str, data: str | Path | None = None) -> dict[str, Any]:
    """The path parameters (without ``name``) of ``carrier``'s cellular link."""
    trace, delay, up = CARRIERS[carrier]
    return {
        "delay": delay,
        "queue": CELL_QUEUE,
        "up": {"rate": up},
        "down": {"trace": str(traces_dir(data) / trace)},
    }


def path(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, **spec}


def mptcp(
    app: dict[str, Any],
    paths: tuple[str, ...] = ("wifi", "cell"),
    tcp: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A 2-flow MPTCP download connection named ``mptcp`` (WiFi first, as in the paper), with
    v0.88's penalisation test; ``sched_params.minrtt`` keys given in ``extra`` are added to it."""
    minrtt = {"penalisation_rule": "v0.88", **extra.pop("sched_params", {}).get("minrtt", {})}
    return {
        "name": "mptcp",
        "kind": "mptcp",
        "stack": "linux-v0.9x",
        "paths": list(paths),
        "cc": "lia",
        "scheduler": "minrtt",
        "rcvbuf": "6MB",
        "app": app,
        "tcp": {**TCP_LINUX_311, **(tcp or {})},
        "sched_params": {"minrtt": minrtt},
        **extra,
    }


def save_figure(ctx: Any, fig: Any, stem: str) -> list[Path]:
    """Saves ``fig`` as PNG and SVG (see :func:`mptcplab.experiments.base.save_figure`)."""
    from mptcplab.experiments.base import save_figure as save

    return save(ctx, fig, stem)


#: The block every Chen & Towsley section shares: the report prints it once and links to it.
ASSUMPTIONS = ("chen-towsley", "Links and TCP settings of the Chen & Towsley sections", __doc__ or "")
