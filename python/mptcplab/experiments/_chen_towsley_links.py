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
  LIA ("coupled"), minRTT scheduler, both hosts' buffers auto-tuned within Linux 3.11's
  defaults in the sections of measured downloads, Figs. 2-3 and 7-8 (§V-C: "We do not disable
  TCP auto-tuning", the receive buffer "set to the default maximum size of 6 MB";
  :func:`mptcp_autotuned`, the bloat block below; the 4 MiB ``tcp_wmem`` maximum is Linux's,
  the paper does not give it). Fig. 6 is not a measurement: its ramp is this project's setting
  for §V-B's thought experiment (β = 2 held), run with the buffers fixed at those maxima so
  that no buffer growth enters the ramp (a deviation from §V-C's auto-tuning, stated there).
  All on the stack the paper ran, MPTCP v0.88:
  ``stack = "linux-v0.9x"``, whose minRTT has opportunistic retransmission and penalisation on
  as that release did by default (Fig. 8 switches both), and whose meta socket charges one-MSS
  skbs of 4352 B truesize, so the 4 MiB hold about 1.37 MB of data; penalisation as v0.88
  tests it (``penalisation_rule = "v0.88"``: the holder of the oldest data is halved when its
  cwnd/SRTT is below the caller's, at most once per holder SRTT, whatever its state).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Linux 3.11's window growth (seed 000's kernel), on every subflow of every section: slow start
#: and congestion avoidance counting ACKs, I_w = 10, delayed ACKs every second segment, and
#: 3.11's and MPTCP v0.88's slow-start test, cwnd <= ssthresh (``tcp_reno_cong_avoid``,
#: ``bictcp_cong_avoid``, ``mptcp_ccc_cong_avoid``), with ``tcp_slow_start`` uncapped at
#: ssthresh (Linux >= 4.3 tests cwnd < ssthresh, the engine's default).
TCP_LINUX_311: dict[str, Any] = {"slow_start": "per_ack", "ca_counting": "per_ack", "iw": 10, "delack_segments": 2,
                                 "slow_start_bound": "at_or_below"}

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


# --- §V-C as the seed describes it (Figs. 7-8): congestion loss, a finite cellular buffer ---

BLOAT_DOC = """Links of Figs. 7-8 (seed 000 §V), built from what the seed states.

- WiFi loses packets by congestion at a shallow queue, not at random. Seed 000 §IV: "WiFi
  exhibits a higher loss rate (0.9 ± 0.2%) than cellular (< 0.03% for all carriers)"; §V-A:
  "WiFi exhibits a stable average connection RTT of approximately 30 ms" and "bufferbloat is
  less prominent in most wired/WiFi networks". The seed's own loss model (§V-A: "if we assume
  packets are dropped only due to the filled network buffer, then within one congestion
  avoidance cycle, the loss rate is 1/N", N ≈ 3b/8·(F+1)² + F, b = 2) gives the network
  storage F at which 1/N = 0.9 %: F ≈ 10.6 packets. The WiFi path holds that: a 2-packet
  drop-tail queue (assumed: "shallow", so the RTT stays near 30 ms) and the rest as its
  bandwidth-delay product over the 30 ms RTT: (F − 2) × 1500 B × 8 / 30 ms ≈ 3.4 Mbit/s. No
  random loss. (Ablation: 20 Mbit/s with 0.9 % random loss, and a deeper
  20 Mbit/s / 50-packet WiFi.)
- Cellular: periodic loss-driven RTT inflation (§V-A, Fig. 4: "When a packet loss is
  detected, TCP enters fast recovery, and the congestion window is then halved ... the
  maximum RTT is also reduced by half") needs a finite buffer that the cellular window fills.
  Base RTT 80 ms (§V-C: "the cellular RTT inflates quickly from 80 ms to 800 ms"); rate
  10 Mbit/s (assumed: the rate of the seed's own bufferbloat example, §V-A "Given a network
  bandwidth μ = 10 Mbps"; the seed does not give the carrier's). A full buffer of B packets
  adds B / μ to the RTT, so the buffer is fitted to the 800 ms the seed reports:
  B = (0.8 − 0.08) s × 10 Mbit/s / 1500 B = 600 packets (a calibration: that claim is then
  not counted). The seed's 3.5 s between 20 and 32 s ("the cellular RTTs inflate
  dramatically up to 3.5 seconds") cannot come from the same buffer at the same rate; the
  one cause consistent with Fig. 4's model is a lower capacity, so the rate drops between 20
  and 32 s to μ' with 0.08 s + B / μ' = 3.5 s: μ' ≈ 2.1 Mbit/s (a second calibration; the
  seed names no cause). Uplink (ACKs) 5 Mbit/s, assumed.
- Buffers auto-tuned as on the seed's hosts (§V-C: "We do not disable TCP auto-tuning";
  "the MPTCP's receive buffer is set to the default maximum size of 6 MB"): Linux 3.11's
  ``tcp_init`` sets ``tcp_rmem`` = {4096, 87380, max(87380, min(6 MiB, limit))} and
  ``tcp_wmem`` = {4096, 16384, max(64 KiB, min(4 MiB, limit))}, ``limit`` being 1/128 of
  free memory: 6 MiB and 4 MiB on the seed's 8 GB hosts (§III: "Both the server and the
  client have 8 GB of memory"). The receive buffer grows by the engine's dynamic
  right-sizing (Linux 6.x's rule; 3.11's differs in the per-segment overhead and has no
  slow-start term: a deviation), the send buffer as v0.9x's ``mptcp_update_sndbuf``.
- The writer is non-blocking, so v0.88 runs opportunistic retransmission and penalisation
  only when the receive window blocks. §III: "The UMass server is configured as an HTTP
  server running Apache2" and "kernel version 3.11.3 using the MPTCP kernel implementation
  [14] version v0.88". Apache gives every connection socket its timeout
  (``apr_socket_timeout_set``), which in APR makes the socket non-blocking, and waits for
  send-buffer space in ``poll()``. Linux 3.11's ``sk_stream_wait_memory`` raises
  ``sk_write_pending`` only for a writer that sleeps there, never for a non-blocking one, and
  v0.88's ``mptcp_next_segment`` (``mptcp_output.c``) calls ``mptcp_rcv_buf_optimization``
  for a full send buffer only while ``meta_sk->sk_write_pending``; its other caller,
  ``mptcp_write_xmit``, runs it when the peer's window blocks. Both mechanisms are on in that
  tree (no switch), so the model keeps them on and turns off only the send-buffer path
  (``sched_params.minrtt.send_buffer_path = false``). Which tree is v0.88 is read from the
  code, not from a tag: the ``mptcp_output.c`` of the Linux ≤ 3.12 tree (``ireq->loc_addr``,
  ``tp->srtt``, no path-manager ops) tests ``sk_write_pending``; the later ones (path-manager
  ops, then ``mptcp_sched.c`` from v0.89) test ``SOCK_NOSPACE``, which a non-blocking writer
  sets too. (Ablation: a blocking writer, with the send-buffer path on, which is also what the
  later test gives.) The seed's "the penalizing scheme helps ... by throttling the WiFi flow"
  says penalisation acted in its runs; with this writer it can act only when the receive
  window blocks, which Linux 3.11 does sooner than the model (it advertises at most half the
  buffer, ``tcp_adv_win_scale`` = 1, and charges out-of-order data its truesize; the model's
  receive buffer counts payload: a deviation, with an ablation at half the buffer).
- Idle restart: the engine's RFC 2861 rule is Linux 3.11's ``tcp_cwnd_restart`` (seed
  footnote 5): when a subflow sends with nothing in flight and more than its RTO since its
  last transmission, cwnd is halved once per RTO of idle time down to min(cwnd, I_w),
  ssthresh kept at least ¾ of the old cwnd. It can lower only a window above I_w = 10.
"""

#: Seed 000 §IV: WiFi's loss rate; §V-A: its RTT; delayed ACKs b = 2 (§IV).
WIFI_LOSS = 0.009
WIFI_RTT_S = 0.030
#: The shallow WiFi queue (packets), assumed.
WIFI_SHALLOW_QUEUE = 2
PACKET_BITS = 1500 * 8


def storage_for_loss(p: float, b: int = 2) -> float:
    """The network storage F (packets) at which seed 000's loss model gives loss rate ``p``:
    the root of 3b/8·(F+1)² + F = 1/p (§V-A, N packets per congestion-avoidance cycle)."""
    a = 3 * b / 8
    # a(F+1)² + (F+1) − 1 − 1/p = 0 in x = F + 1.
    c = -(1 + 1 / p)
    x = (-1 + (1 + 4 * a * -c) ** 0.5) / (2 * a)
    return x - 1


def wifi_shallow_rate_bps(p: float = WIFI_LOSS, queue: int = WIFI_SHALLOW_QUEUE, rtt_s: float = WIFI_RTT_S) -> float:
    """The WiFi rate whose bandwidth-delay product plus ``queue`` is the storage of loss ``p``."""
    return (storage_for_loss(p) - queue) * PACKET_BITS / rtt_s


#: Base RTT, the RTT with the buffer full, and the peak between 20 and 32 s (seed §V-C).
CELL_BASE_RTT_S = 0.080
CELL_FULL_RTT_S = 0.800
CELL_DIP_RTT_S = 3.5
CELL_RATE_BPS = 10e6
CELL_BUFFER_PACKETS = round((CELL_FULL_RTT_S - CELL_BASE_RTT_S) * CELL_RATE_BPS / PACKET_BITS)
CELL_DIP_RATE_BPS = CELL_BUFFER_PACKETS * PACKET_BITS / (CELL_DIP_RTT_S - CELL_BASE_RTT_S)

WIFI_SHALLOW: dict[str, Any] = {"rate": f"{round(wifi_shallow_rate_bps())}bit", "delay": "15ms",
                                "queue": f"{WIFI_SHALLOW_QUEUE} packets"}
BLOATED_FINITE: dict[str, Any] = {
    "delay": f"{CELL_BASE_RTT_S / 2 * 1e3:g}ms",
    "queue": f"{CELL_BUFFER_PACKETS} packets",
    "up": {"rate": "5Mbit"},
    "down": {
        "rate": f"{CELL_RATE_BPS:.0f}bit",
        "schedule": [{"at": f"{BLOAT_DIP[0]:g}s", "rate": f"{round(CELL_DIP_RATE_BPS)}bit"},
                     {"at": f"{BLOAT_DIP[1]:g}s", "rate": f"{CELL_RATE_BPS:.0f}bit"}],
    },
}
#: Linux 3.11 ``tcp_init`` on an 8 GB host: ``tcp_rmem`` and ``tcp_wmem``.
TCP_RMEM_311: dict[str, int] = {"min": 4096, "default": 87380, "max": 6 * 1024 * 1024}
TCP_WMEM_311: dict[str, int] = {"min": 4096, "default": 16384, "max": 4 * 1024 * 1024}


#: Ablation of the receive window: Linux 3.11 advertises at most half its receive buffer
#: (``tcp_adv_win_scale`` = 1 since 3.4), so at most 3 MiB of the 6 MiB ``tcp_rmem[2]``; as a
#: payload buffer auto-tuned from half of ``tcp_rmem[1]`` up to that.
RMEM_311_HALF_WINDOW: dict[str, int] = {"min": 4096, "default": 87380 // 2, "max": 3 * 1024 * 1024}

#: v0.88 with Apache2's non-blocking writer: no opportunistic retransmission or penalisation
#: for a full send buffer (``BLOAT_DOC``).
APACHE_WRITER: dict[str, Any] = {"send_buffer_path": False}


def mptcp_autotuned(app: dict[str, Any], tcp: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """:func:`mptcp` with both socket buffers auto-tuned within Linux 3.11's defaults and the
    stated server's writer (``APACHE_WRITER``); ``sched_params.minrtt`` keys in ``extra`` win."""
    minrtt = {**APACHE_WRITER, **extra.pop("sched_params", {}).get("minrtt", {})}
    return mptcp(app, tcp=tcp, **{"rcvbuf": dict(TCP_RMEM_311), "sndbuf": dict(TCP_WMEM_311),
                                  "sched_params": {"minrtt": minrtt}, **extra})


def bloat_paths() -> list[dict[str, Any]]:
    """The two paths of Figs. 7-8 (fresh copies)."""
    import copy

    return [path("wifi", copy.deepcopy(WIFI_SHALLOW)), path("cell", copy.deepcopy(BLOATED_FINITE))]


#: The assumptions block of Figs. 7-8 (their links differ from the other sections').
BLOAT_ASSUMPTIONS = ("chen-towsley-bloat", "Links and buffers of Chen & Towsley's Figs. 7-8", BLOAT_DOC)


def wifi_shallow(queue: int) -> dict[str, Any]:
    """The WiFi link with another shallow queue of ``queue`` packets and the same storage F (so the
    seed's loss model still gives 0.9 %): the queue assumption's ablation."""
    return {"rate": f"{round(wifi_shallow_rate_bps(queue=queue))}bit", "delay": "15ms", "queue": f"{queue} packets"}


def bloated_finite(rate_bps: float) -> dict[str, Any]:
    """The cellular link at another rate, its buffer and dip refitted to the seed's 800 ms and
    3.5 s (base RTT + B / μ): the rate assumption's ablation."""
    buf = round((CELL_FULL_RTT_S - CELL_BASE_RTT_S) * rate_bps / PACKET_BITS)
    dip = buf * PACKET_BITS / (CELL_DIP_RTT_S - CELL_BASE_RTT_S)
    return {
        "delay": BLOATED_FINITE["delay"],
        "queue": f"{buf} packets",
        "up": dict(BLOATED_FINITE["up"]),
        "down": {"rate": f"{rate_bps:.0f}bit",
                 "schedule": [{"at": f"{BLOAT_DIP[0]:g}s", "rate": f"{round(dip)}bit"},
                              {"at": f"{BLOAT_DIP[1]:g}s", "rate": f"{rate_bps:.0f}bit"}]},
    }
