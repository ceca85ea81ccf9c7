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
retransmissions (a data sequence number seen before) are skipped. Usage:

    python scripts/dsn-runs.py [--from S] [--to S] [--long N] DIR/*.pcap
"""

from __future__ import annotations

import argparse
import collections
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcaps", nargs="+")
    ap.add_argument("--from", dest="t_from", type=float, default=0.0, help="seconds after the first packet")
    ap.add_argument("--to", dest="t_to", type=float, default=float("inf"))
    ap.add_argument("--long", type=int, default=32, help="segments from which a run counts as a burst")
    a = ap.parse_args()
    pk = sorted(p for f in a.pcaps for p in packets(f))
    if not pk:
        raise SystemExit("error: no MPTCP data segments in the captures")
    t0 = pk[0][0]
    mss = max(length for *_, length in pk)
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


if __name__ == "__main__":
    main()
