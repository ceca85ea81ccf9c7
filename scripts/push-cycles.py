"""The slow subflow's bursts and the cycles between them, per run: where a connection-level
window is shared by a fast and a slow path, the sender hands the slow subflow a burst each
time the window opens, and how long a cycle lasts says where that burst sits in the window.

For each run directory (a kernel run recorded with ``--trace-kernel``, a simulator run with
``--trace-sched``; see scripts/push-diff.py, whose pushes this reads) it lists the pushes to
``--slow`` (default ``cell``) of at least ``--min-burst`` bytes (default 32 768: the
scheduler's bursts are 64 KB, window tails and retransmissions smaller; bursts within 1 ms of
each other belong to one opening and count as one), the time since the previous one, and the
bytes the other subflows were handed in the ``--before`` seconds before it (default 50 ms,
less than any cycle): how much of the opened window went to the fast path first. Then per
run: the number of cycles after ``--from`` (default 3 s: past slow start), their median
length, and the fraction shorter than ``--split`` seconds.

The split between a short and a long cycle is a physical bound the caller gives: a cycle in
which the DATA_ACK that reopens the window returns on the slow path lasts at least the slow
path's round trip plus the burst's transmission time plus the fast path's one-way delay,
one in which it returns on the fast path lasts the slow path's round trip plus what the
fast path needs; on `rcvbuf-fixed-256kb-ratio20` (200 ms and 10 ms round trips, a 65 456 B
burst at 5 Mbit/s: 105 ms) the first is 310 ms and the second about 235 ms, and
``--split 0.27`` (the default) lies between them.

Usage:

    python scripts/push-cycles.py [--slow PATH] [--min-burst B] [--before S] [--from S] [--split S] [--list] RUN...
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys

#: Bursts to the slow subflow closer than this belong to one opening of the window.
SAME_OPENING_S = 1e-3


def load_push_diff():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("push_diff", os.path.join(here, "push-diff.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["push_diff"] = mod
    spec.loader.exec_module(mod)
    return mod


def cycles(pushes, slow: str, min_burst: int, before: float):
    """(time, bytes, seconds since the previous burst or None, bytes to other paths first)."""
    out = []
    prev = None
    for k, p in enumerate(pushes):
        size = p.end - p.start
        if p.path != slow or p.rtx or size < min_burst:
            continue
        if out and p.time_s - out[-1][0] < SAME_OPENING_S:
            # Another burst of the same opening (the scheduler came back to the slow subflow).
            t, n, gap, first = out[-1]
            out[-1] = (t, n + size, gap, first)
            continue
        first = 0
        j = k - 1
        while j >= 0 and p.time_s - pushes[j].time_s <= before:
            if pushes[j].path != slow:
                first += pushes[j].end - pushes[j].start
            j -= 1
        out.append((p.time_s, size, None if prev is None else p.time_s - prev, first))
        prev = p.time_s
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--slow", default="cell", help="the slow subflow's path name")
    ap.add_argument("--min-burst", type=int, default=32768, help="smallest push counted as a burst (bytes)")
    ap.add_argument("--before", type=float, default=0.05, help="other paths' pushes this long before a burst count (s)")
    ap.add_argument("--from", dest="t0", type=float, default=3.0, help="first cycle counted (s)")
    ap.add_argument("--split", type=float, default=0.27, help="a cycle shorter than this is short (s)")
    ap.add_argument("--list", action="store_true", help="list every burst")
    args = ap.parse_args()
    pd = load_push_diff()
    for run in args.runs:
        rows = cycles(pd.pushes(pd.read_pieces(run)), args.slow, args.min_burst, args.before)
        if args.list:
            for t, n, gap, first in rows:
                g = "" if gap is None else f"{gap * 1e3:7.1f} ms"
                print(f"{run}: {t:8.4f} s {n:7d} B {g:>10}  {first:7d} B to the other paths before")
        gaps = [gap for t, _, gap, _ in rows if gap is not None and t >= args.t0]
        firsts = [first for t, _, gap, first in rows if gap is not None and t >= args.t0]
        if not gaps:
            print(f"{run}: no {args.slow} bursts after {args.t0:g} s")
            continue
        short = sum(g < args.split for g in gaps)
        print(f"{run}: {len(gaps)} cycles after {args.t0:g} s, median {statistics.median(gaps) * 1e3:.0f} ms, "
              f"{short} shorter than {args.split * 1e3:.0f} ms ({short / len(gaps):.0%}); "
              f"other paths before: median {statistics.median(firsts):.0f} B")


if __name__ == "__main__":
    main()
