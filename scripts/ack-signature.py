"""How an MPTCP data receiver acknowledged, from its captures on either backend (``mptcplab
run ... --pcap DIR``, with or without ``--backend linux``): the receiver's side of a mode.

Per subflow (the client's pure ACKs towards the server's port, data going the other way):
- the data segments it received and the ACKs it sent (their ratio, 0.5 for an ACK every
  second full-sized segment);
- how many full segments each ACK acknowledged (its cumulative ACK's advance / the largest
  segment; 0 for a window update or a duplicate), as shares;
- how long after that subflow's latest data segment each ACK left (median, 99th percentile),
  and the share of ACKs that left more than 1 ms after it (held by a timer or a read).

Per connection, at every *hole fill* (an ACK whose DATA_ACK moved by more than three full
segments: a segment completed data that other subflows had delivered out of order):
- how many there were per second;
- the window that ACK offered relative to the largest window the receiver offered in the run
  (10th percentile and median), i.e. whether the right edge moved with the DATA_ACK;
- the share of hole fills followed within 2 ms by an ACK on another subflow (a window update
  after the application's read, ``mptcp_cleanup_rbuf``).

Windows are the scaled values tshark computes (the capture must hold the handshake). The
DATA_ACK is read from the MPTCP option; a capture that lost packets (the kernel backend's may,
see its run summary) biases the counts but not the windows. Give the captures taken at the
client only, each packet once: the kernel backend's files (one per client interface), the
simulator's ``<connection>-client.pcap``. Usage:

    python scripts/ack-signature.py [--from S] [--to S] [--port 5201] CLIENT.pcap...
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess

FIELDS = ["frame.time_epoch", "tcp.srcport", "tcp.dstport", "tcp.len", "tcp.ack_raw", "tcp.window_size",
          "tcp.options.mptcp.rawdataack"]


def packets(pcaps: list[str]) -> list[tuple[float, int, int, int, int, int, int | None]]:
    """(time, source port, destination port, payload, cumulative ACK, window, DATA_ACK) of every
    TCP packet in ``pcaps``, in time order."""
    res = []
    for pcap in pcaps:
        cmd = ["tshark", "-r", pcap, "-Y", "tcp", "-T", "fields"] + [a for f in FIELDS for a in ("-e", f)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            t, sp, dp, ln, ack, win, dack = (line.split("\t") + [""] * 7)[:7]
            res.append((float(t), int(sp), int(dp), int(ln or 0), int(ack or 0), int(win or 0),
                        int(dack.split(",")[0]) if dack else None))
    res.sort()
    return res


def q(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(int(p * len(xs)), len(xs) - 1)] if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcaps", nargs="+")
    ap.add_argument("--from", dest="t_from", type=float, default=0.0, help="seconds after the first packet")
    ap.add_argument("--to", dest="t_to", type=float, default=float("inf"))
    ap.add_argument("--port", type=int, default=5201, help="the server's port (the data sender's)")
    a = ap.parse_args()
    pk = packets(a.pcaps)
    if not pk:
        raise SystemExit("error: no TCP packets in the captures")
    t0 = pk[0][0]
    mss = max((p[3] for p in pk if p[1] == a.port), default=0)
    if mss == 0:
        raise SystemExit(f"error: no data from port {a.port} in the captures")
    wmax = max(p[5] for p in pk if p[1] != a.port)
    segs: collections.Counter[int] = collections.Counter()
    covered: dict[int, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    delay: dict[int, list[float]] = collections.defaultdict(list)
    last_data: dict[int, float] = {}
    last_ack: dict[int, int] = {}
    acks = []  # (time, subflow, window, DATA_ACK) of the receiver's pure ACKs in the interval
    for t, sp, dp, ln, ack, win, dack in pk:
        rel = t - t0
        if sp == a.port:
            if ln > 0:
                last_data[dp] = t
                if a.t_from <= rel <= a.t_to:
                    segs[dp] += 1
            continue
        if ln > 0 or dp != a.port:
            continue
        if sp in last_ack and a.t_from <= rel <= a.t_to:
            covered[sp][min(round(max(ack - last_ack[sp], 0) / mss), 6)] += 1
            if sp in last_data:
                delay[sp].append(t - last_data[sp])
            if dack is not None:
                acks.append((t, sp, win, dack))
        last_ack[sp] = max(ack, last_ack.get(sp, 0))
    span = min(a.t_to, pk[-1][0] - t0) - a.t_from
    for sf in sorted(covered):
        n = sum(covered[sf].values())
        shares = " ".join(f"{k}{'+' if k == 6 else ''}:{v / n:.3f}" for k, v in sorted(covered[sf].items()))
        d = delay[sf]
        print(f"subflow port {sf}: {segs[sf]} data segments, {n} ACKs ({n / max(segs[sf], 1):.3f} per segment); "
              f"segments per ACK {shares}; delay after the data p50 {q(d, 0.5) * 1e3:.3f} ms, "
              f"p99 {q(d, 0.99) * 1e3:.2f} ms, over 1 ms {sum(x > 1e-3 for x in d) / max(len(d), 1):.3f}")
    fills, followed, ratios = 0, 0, []
    top = None
    for i, (t, sf, win, dack) in enumerate(acks):
        if top is not None and dack - top > 3 * mss:
            fills += 1
            ratios.append(win / wmax)
            if any(t2 - t < 0.002 and sf2 != sf for t2, sf2, _, _ in acks[i + 1:i + 6]):
                followed += 1
        top = dack if top is None else max(top, dack)
    if fills:
        print(f"hole fills: {fills} ({fills / max(span, 1e-9):.1f}/s); window offered / largest window "
              f"p10 {q(ratios, 0.1):.2f} p50 {statistics.median(ratios):.2f}; followed by an ACK on another "
              f"subflow within 2 ms: {followed / fills:.2f}")
    else:
        print("hole fills: none")


if __name__ == "__main__":
    main()
