"""How an MPTCP sender spread the data sequence space over its subflows, from captures of
either backend (``mptcplab run ... --pcap DIR``, with or without ``--backend linux``).

A *run* is a stretch of consecutive data sequence numbers sent (first transmissions only)
on one subflow without another subflow's data in between: the size of the pieces the
scheduler handed to each subflow. Linux's default scheduler hands a subflow at most
``MPTCP_SEND_BURST_SIZE`` (64 KB) per pick, so runs range from one segment to about 46
full-sized segments. Per half-second bin and subflow the script prints the number of runs
and their median length in segments, and per subflow the share of its bytes sent in runs of
at least 32 segments (``--long``), i.e. in near-whole 64 KB bursts.

Each packet's data sequence number is its DSS mapping's plus its offset in the mapping
(subflow sequence relative to the subflow's initial sequence number, RFC 8684 §3.3.1);
retransmissions (a data sequence number seen before) are skipped. A kernel run recorded with
``--trace-kernel --out DIR`` can be read instead of captures: each ``mptcp:mptcp_sendmsg_frag``
event is a piece of the data sequence space handed to a subflow (times from the run's origin
there, from the first packet with captures), and the segment size is the largest payload the
``tcp:tcp_probe`` table shows. ``--gap S`` also prints, per subflow, the stretches longer than S
seconds without data on it (how long the fast path idles behind the slow one): between
segments sent, with captures; between segments reaching the receiving socket, with a trace.
Usage:

    python scripts/dsn-runs.py [--from S] [--to S] [--long N] [--gap S] DIR/*.pcap
    python scripts/dsn-runs.py [--from S] [--to S] [--long N] [--gap S] RUN_DIR
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess

FIELDS = ["frame.time_epoch", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.flags.syn",
          "tcp.seq_raw", "tcp.len", "tcp.options.mptcp.rawdataseqno", "tcp.options.mptcp.subflowseqno"]


def packets(pcap: str) -> list[tuple[float, str, int, int]]:
    """(time, subflow, data sequence number, length) of every data segment in ``pcap``."""
    cmd = ["tshark", "-r", pcap, "-Y", "tcp", "-T", "fields"] + [a for f in FIELDS for a in ("-e", f)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    isn: dict[str, int] = {}
    maps: dict[str, tuple[int, int]] = {}
    res = []
    for line in out.splitlines():
        t, src, sport, dst, dport, syn, seq, length, dsn, ssn = (line.split("\t") + [""] * 10)[:10]
        flow = f"{src}:{sport}>{dst}:{dport}"
        if syn == "1":
            isn[flow] = int(seq)
            continue
        if dsn and ssn:
            # Linux sends the mapping on every segment; a mapping names its first byte.
            maps[flow] = (int(dsn) & 0xFFFFFFFFFFFFFFFF, int(ssn))
        if int(length or 0) == 0 or flow not in isn or flow not in maps:
            continue
        rel = (int(seq) - isn[flow]) & 0xFFFFFFFF
        map_dsn, map_ssn = maps[flow]
        res.append((float(t), flow, map_dsn + rel - map_ssn, int(length)))
    return res


def trace_pieces(run_dir: str) -> tuple[list[tuple[float, str, int, int]], int, dict[str, list[float]]]:
    """(time, subflow, data sequence number, length) of every piece a kernel run's scheduler
    handed out (``mptcp_sendmsg_frag``), the largest segment payload seen, and per subflow the
    times data segments reached the receiving socket (``tcp_probe``)."""
    import pandas as pd

    d = os.path.join(run_dir, "kernel-trace")
    frags = pd.read_parquet(os.path.join(d, "sendmsg_frag.parquet"))
    probe = pd.read_parquet(os.path.join(d, "tcp_probe.parquet"))
    # `data_seq` names the mapping's first byte and `data_len` its length after this piece.
    start = frags.data_seq.astype("uint64") + (frags.data_len - frags.bytes).astype("uint64")
    res = [(float(t), str(p), int(d0), int(n)) for t, p, d0, n in zip(frags.time_s, frags.path, start, frags.bytes)]
    rx = probe[(~probe.sender) & (probe.data_len > 0)]
    arrivals = {str(p): sorted(g.time_s.astype(float)) for p, g in rx.groupby("path", observed=True)}
    return res, int(probe.data_len.max()), arrivals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcaps", nargs="+")
    ap.add_argument("--from", dest="t_from", type=float, default=0.0, help="seconds after the first packet")
    ap.add_argument("--to", dest="t_to", type=float, default=float("inf"))
    ap.add_argument("--long", type=int, default=32, help="segments from which a run counts as a burst")
    ap.add_argument("--gap", type=float, default=None, help="report a subflow's stretches without data longer than this (s)")
    a = ap.parse_args()
    arrivals = None
    if len(a.pcaps) == 1 and os.path.isdir(a.pcaps[0]):
        pk, mss, arrivals = trace_pieces(a.pcaps[0])
        pk.sort()
        t0 = 0.0
    else:
        pk = sorted(p for f in a.pcaps for p in packets(f))
        t0 = pk[0][0] if pk else 0.0
        mss = max((length for *_, length in pk), default=0)
    if not pk:
        raise SystemExit("error: no MPTCP data in the input")
    seen: set[int] = set()
    runs: dict[str, list[tuple[float, int]]] = collections.defaultdict(list)
    open_run: dict[str, list[float | int]] = {}
    for t, flow, dsn, length in pk:
        if dsn in seen:
            continue
        seen.add(dsn)
        cur = open_run.get(flow)
        if cur is not None and cur[1] == dsn:
            cur[1], cur[2] = dsn + length, cur[2] + length
            continue
        if cur is not None:
            runs[flow].append((cur[0] - t0, cur[2]))
        open_run[flow] = [t, dsn + length, length]
    for flow, cur in open_run.items():
        runs[flow].append((cur[0] - t0, cur[2]))
    flows = sorted(runs, key=lambda f: -sum(n for _, n in runs[f]))
    bins: dict[float, dict[str, list[int]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in flows:
        for t, n in runs[f]:
            if a.t_from <= t < a.t_to:
                bins[int(t * 2) / 2][f].append(n)
    print("bin (s)  " + "  ".join(f"{f:>44}" for f in flows))
    for b in sorted(bins):
        cells = []
        for f in flows:
            v = bins[b].get(f, [])
            cells.append(f"{len(v):3d} runs, median {statistics.median(v) / mss:5.1f} seg" if v else "-")
        print(f"{b:6.1f}   " + "  ".join(f"{c:>44}" for c in cells))
    for f in flows:
        v = [n for t, n in runs[f] if a.t_from <= t < a.t_to]
        if not v:
            print(f"{f}: no data in the interval")
            continue
        total = sum(v)
        long_bytes = sum(n for n in v if n >= a.long * mss)
        print(f"{f}: {len(v)} runs, {total / 1e6:.2f} MB, median run {statistics.median(v) / mss:.1f} segments, "
              f"{long_bytes / max(total, 1):.0%} of bytes in runs >= {a.long} segments")
    if a.gap is not None:
        # Captures: first transmissions. A trace hands data over in pieces of up to 64 KB that
        # the subflow sends later, so its segments' arrivals at the receiver are used instead.
        sent: dict[str, list[float]] = collections.defaultdict(list)
        if arrivals is not None:
            for f, ts in arrivals.items():
                sent[f] = [t for t in ts if a.t_from <= t < a.t_to]
        else:
            for t, flow, dsn, _ in pk:
                if a.t_from <= t - t0 < a.t_to:
                    sent[flow].append(t - t0)
        for f in flows:
            ts = sent.get(f, [])
            gaps = [b - x for x, b in zip(ts, ts[1:]) if b - x > a.gap]
            span = ts[-1] - ts[0] if len(ts) > 1 else 0.0
            print(f"{f}: {len(gaps)} stretches over {a.gap} s without data, {sum(gaps):.2f} s of {span:.2f} s")


if __name__ == "__main__":
    main()
