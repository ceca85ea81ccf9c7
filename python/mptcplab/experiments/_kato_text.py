"""The Kato section's texts that read the numbers (part of :mod:`~mptcplab.experiments.kato`):
the setup, every value with the seed's line or as an assumption with its ablation, and the
failing claims against what the seed states and what the ablation varies."""

from __future__ import annotations

from typing import Any

from mptcplab.experiments._kato_claims import QUEUE_SCAN, SERIES_STEP, SNDBUFS, K
from mptcplab.experiments.base import fmt


def abl_goodput(rows: list[dict[str, Any]], label: str) -> float:
    """The goodput (Mbit/s) of the ablation's variant whose label starts with ``label``."""
    return next(r["mptcp_goodput_bps"] for r in rows if r["variant"].startswith(label)) / 1e6


def setup_text(runs: int, abl_rows: list[dict[str, Any]]) -> str:
    """The section's setup: every value with the seed's line, then the assumptions with the
    ablation that shows their effect."""
    lo, hi = K["throughput_min"].value / 1e6, K["throughput_max"].value / 1e6
    lia = abl_goodput(abl_rows, "LIA instead of CUBIC")
    return "\n".join([
        "From the seed (§III.A):",
        "- paths: 'two 1Gbps Ethernet links ... the frame transmission speed is limited to 100 Mbps using Linux "
        "traffic control (tc) command' → 100 Mbit/s on both paths, the rate limit in the sending host (where TCP "
        "small queues act); 'a network emulator is inserted ... the delay ... is set to 40 msec for one direction, "
        "i.e., 80 msec in round-trip' → the slow path;",
        "- send buffer: 'set to 1,048,576 bytes ... for the minimum, default, and maximum sizes, using the sysctl -w "
        "net.ipv4.tcp_wmem command' → 1 MiB, no auto-tuning;",
        "- receive buffer: 'the default value, which is 4,096, 87380, and 6,291,456 bytes' → auto-tuned from "
        "those tcp_rmem values;",
        "- stack: 'Ubuntu 16.04 LTS', 'The scheduler is the default one, minRTT', the RP mechanism 'used in the "
        "current MPTCP implementation as a default' (§I) → the out-of-tree stack (linux-v0.9x: minRTT with "
        "opportunistic retransmission (M1) and penalisation (M2) as mptcp_rcv_buf_optimization has them, RFC 2861's "
        "decay of an application-limited window, TCP small queues of Linux 4.x);",
        f"- traffic: 'iperf ... bulk data transfer is executed for 10 seconds', 'five experiment runs' → {runs} "
        "runs of 10 s bulk transfer; run 4 ('we pick up the forth experiment run') read with a "
        f"{SERIES_STEP[:-2]} ms time series, as tcpprobe read the window 'at the timing of sender receiving ACK segments' "
        "(§III.B).",
        "",
        "Assumed where the seed is silent (each with the ablation or scan that shows its effect; none fitted): "
        "qdisc limits of 1000 packets on both paths (Linux's default txqueuelen; the queue scan and the 100-packet "
        "sweep), CUBIC congestion control (the seed names none: the v0.9x kernel's own default, "
        "`default DEFAULT_CUBIC` in its net/ipv4/Kconfig, as for every seed silent on it; LIA, the coupled "
        "controller: ablation), 50 µs one way on the fast path (no emulator on it; ablation: 0.5 ms), the "
        "hosts' timing noise (the processing jitter measured on this project's kernel backend, mean "
        "33 µs per packet, so that runs differ as the paper's did), iperf's writes of 128 KiB (the seed names "
        "iperf, not its version or options: Ubuntu 16.04's iperf is iperf 2, whose TCP default -l is 128 KiB, as "
        "iperf 3's is; each a blocking send(), run as Linux tcp_sendmsg_locked runs it; ablation: 8 KiB, the "
        "length older iperf 2 manual pages give, and a writer without send() calls), and the send buffer's skb "
        "charge: DSS checksums at the "
        "stack's default (on), so every skb holds one MSS (1420 B of payload), in a kernel built with a "
        "distribution configuration (MAX_TCP_HEADER 304 B: a 4096-byte buffer, truesize 4352 B, so 1 MiB holds 241 "
        "skbs, 342 KB of data).",
        "",
        "**Nothing is fitted, with one caveat: the throughput rests on that build assumption.** The seed names the "
        "distribution and a kernel the authors modified ('we modified the Linux kernel to generate the "
        "timestamps', §IV.B), not its configuration, and the ablation's other plausible charges give "
        f"{fmt(abl_goodput(abl_rows, 'a kernel build without wireless mesh'))} Mbit/s (a build without wireless and tunnel "
        "headers: 2304 B per skb) and "
        f"{fmt(abl_goodput(abl_rows, 'send buffer charged in payload bytes'))} Mbit/s (the buffer charged in payload "
        f"bytes), both outside the paper's {fmt(lo)}–{fmt(hi)}: the throughput claim is a prediction of the assumed "
        "build, not of the seed's stated setup alone. The controller (the seed names none) moves it less: LIA, "
        f"the coupled controller, gives {fmt(lia)} Mbit/s, {'inside' if lo <= lia <= hi else 'outside'} "
        "that range.",
        "",
        "Single-path TCP for the regimes is CUBIC over the fast path with the same send buffer; the regimes are "
        "classified against it (more than 2 % above: above one link; more than 2 % below with the slow subflow "
        "carrying at least 0.5 % of the data, or about equal with at least 5 %: both paths, below single-path TCP; "
        "otherwise fast path only). Sensitivity analyses, not counted: the send-buffer sweep "
        f"({', '.join(SNDBUFS)}, one run each with the scenario's seed) repeated with 100-packet queues, and the "
        f"queue size scanned over {', '.join(str(q) for q in QUEUE_SCAN)} packets at 1 MiB. Which subflow M2 "
        "penalised is read from the engine's per-subflow counts of window halvings.",
    ])


def failing_text(pen4: dict[str, float], starv4: float, slow_peak: float, cwnd_drops: dict[str, int],
                 slow_payload: list[float], fast_mean: dict[str, float], abl_rows: list[dict[str, Any]],
                 scan: Any, slow_pen_t: list[float]) -> str:
    """The claims that fail, against what the seed states and what the ablation varies: for each,
    the range over every ablation variant (and, for the counts the scan records, every queue
    size), read from the numbers."""
    pens = [r["slow_penalisations"] for r in abl_rows] + list(scan["slow_penalisations"])
    starv = [r["starvations"] for r in abl_rows] + list(scan["sndbuf_blocked_episodes"])
    peak = max(abl_rows, key=lambda r: r["slow_cwnd_peak"])
    slow_drops = max(r["slow_cwnd_drops"] for r in abl_rows)
    payload = next(r for r in abl_rows if r["variant"].startswith("send buffer charged in payload"))
    # The fast window's two claims together: no drops, and the decay lowering it.
    both = [r["variant"] for r in abl_rows if r["fast_cwnd_drops"] == 0 and r["fast_cwv"] == "lower"]
    lowered = fast_mean["on"] < 0.99 * fast_mean["off"]
    fast = (
        f"The fast window: {cwnd_drops['fast']} drops (paper none), time mean {fmt(fast_mean['on'])} packets with "
        f"RFC 2861's decay and {fmt(fast_mean['off'])} without. "
    )
    if lowered:
        fast += (
            "iperf's send() calls let the decay act: Linux's tcp_cwnd_application_limited skips it while the writer "
            "sleeps for space (SOCK_NOSPACE, on the connection's socket, which the out-of-tree stack's subflows share: "
            "sk_set_socket(sk, meta_sk->sk_socket) in mptcp_init4_subsockets), but the wake-up clears it and the "
            "pushes that follow run before the writer sleeps again (mptcp_data_ack wakes the writer before "
            "mptcp_push_pending_frames; the copy loop's tcp_push_one precedes wait_for_sndbuf), so the window is "
            "kept low as the paper says"
            + ("; but each decay moves cwnd halfway to what was used, a step the drop count reads like a halving"
               if cwnd_drops["fast"] else "") + ". ")
    else:
        fast += ("The decay does not act: RFC 2861's clock restarts at every ACK of new data (tcp_cong_avoid sets "
                 "snd_cwnd_stamp, in the 4.x kernels the seed ran as in today's), the fast subflow's data is "
                 "acknowledged within milliseconds, never an RTO apart, and tcp_cwnd_application_limited also skips "
                 "the decay while the writer waits for send-buffer space (SOCK_NOSPACE). The check toggles the decay "
                 "alone; Linux's one switch, tcp_slow_start_after_idle, also gates the idle restart "
                 "(tcp_cwnd_restart), which RFC 2861 [18] covers too. ")
    fast += (
        "Over the ablation (each variant also run without the decay), the variants whose fast window has no drops "
        "and is lowered by the decay are: " + (", ".join(both) if both else "none")
        + "; without send() calls the writer's own pushes see SOCK_NOSPACE set and the decay never acts. Which "
          "steps of its Fig. 6 the paper counts as drops the seed does not say.")
    return (
        "Failing claims against the seed. Every setup value the seed states is modelled (list in the setup), and "
        "the window is read at every millisecond as tcpprobe read it at every ACK. The counts are the paper's "
        "quantities: M2's window halvings in mptcp_rcv_buf_optimization (the paper timestamps each penalisation "
        "there, §IV.B: 28 sets of one to three reductions, so 28–84 halvings), the writer's entries into "
        "sk_stream_wait_memory (the paper's other timestamp), and the drops of the window series. M2 halves "
        f"the slow window {fmt(pen4['slow'])} times (paper 28 sets) and the window drops "
        f"{cwnd_drops['slow']} times (paper more than 20); over every ablation variant and queue size the most "
        f"halvings are {fmt(max(pens))} and the most drops {slow_drops}, so no defensible value of the open facts "
        "reproduces them, and no mechanism of the engine carries them (how often mptcp_rcv_buf_optimization could "
        "act is read with the ablation below). In run 4 the halvings fall at "
        + (", ".join(f"{fmt(t)}" for t in slow_pen_t) if slow_pen_t else "no time") + " s"
        + (": all in the first second, while the windows open; after it the slow window stays flat (figure), "
           "where the paper's keeps climbing to about 700 and dropping. " if slow_pen_t and max(slow_pen_t) < 1.0
           else ". ")
        + f"Starvations: {fmt(starv4)} (paper 278), {fmt(min(starv))}–{fmt(max(starv))} over the ablation and the "
        "scan; a writer that always has data copies the same bytes and sleeps as often whatever its send() size "
        "(iperf's 128 KiB, 8 KiB, or no send() calls: the ablation), so iperf's block does not move the count. "
        f"The slow window peaks at {fmt(slow_peak)} packets (paper about 700), at most {fmt(peak['slow_cwnd_peak'])} "
        f"over the ablation ({peak['variant']}): the send buffer's 241 skbs bound what the "
        "slow subflow can have in flight, and a window grows only while it is used; charged in payload bytes the "
        f"peak is {fmt(max(slow_payload))} packets but the goodput {fmt(payload['mptcp_goodput_bps'] / 1e6)} "
        "Mbit/s, outside the paper's range, so the peak and the throughput cannot both be met by the buffer's "
        "charge. " + fast)
