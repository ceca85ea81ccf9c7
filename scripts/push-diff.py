"""Lines up two runs' pushes, the data an MPTCP sender handed each subflow, and prints where
they first differ: a kernel run recorded with ``--trace-kernel --out DIR`` (its
``mptcp:mptcp_sendmsg_frag`` events, ``kernel-trace/sendmsg_frag.parquet``) against a
simulator run recorded with ``--trace-sched --out DIR`` (``sched-trace/handoffs.parquet``),
or any two of either kind.

A *push* is what one decision handed one subflow: consecutive pieces for the same subflow at
the same instant (within 0.1 ms) that continue each other in the data sequence space. Data
sequence numbers are counted from each run's first byte (the kernel's are its 64-bit ones,
from a random initial value), and the kernel's retransmitted pieces (data below what it had
handed out before) are marked ``rtx`` as the simulator's are. The first pair of pushes whose
subflow or byte range differ, or whose times differ by more than ``--time-tol`` (default 5 ms),
is the first divergence: it shows ``--context`` pushes (default 8) on either side. On two
deterministic runs (the ``uml`` backend in virtual time; the simulator with
``host_jitter = "0s"``) that is the first scheduling decision in which the models differ, the
place to read the kernel's rule.

Usage:

    python scripts/push-diff.py [--from S] [--to S] [--time-tol S] [--context N] RUN_A RUN_B
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

#: Pieces closer in time than this belong to one push.
SAME_INSTANT_S = 1e-4


@dataclass
class Push:
    time_s: float
    path: str
    start: int
    end: int
    rtx: bool

    def show(self) -> str:
        mark = " rtx" if self.rtx else ""
        return f"{self.time_s:9.4f} {self.path:>6} {self.start:>10}..{self.end:<10} {self.end - self.start:>7}{mark}"


def read_pieces(run_dir: str) -> list[tuple[float, str, int, int, bool]]:
    """The run's pieces: (time, path, first byte, bytes, retransmitted), data sequence from 0."""
    import pandas as pd

    kernel = os.path.join(run_dir, "kernel-trace", "sendmsg_frag.parquet")
    sim = os.path.join(run_dir, "sched-trace", "handoffs.parquet")
    if os.path.exists(kernel):
        f = pd.read_parquet(kernel)
        # `data_seq` names the mapping's first byte and `data_len` its length after this piece.
        start = f.data_seq.astype("uint64") + (f.data_len - f.bytes).astype("uint64")
        base = int(start.min()) if len(f) else 0
        pieces, sent = [], 0
        for t, p, s0, n in zip(f.time_s, f.path, start, f.bytes):
            s = int(s0) - base
            pieces.append((float(t), str(p), s, int(n), s < sent))
            sent = max(sent, s + int(n))
        return pieces
    if os.path.exists(sim):
        f = pd.read_parquet(sim)
        return [(float(t), str(p), int(s), int(n), bool(r))
                for t, p, s, n, r in zip(f.time_s, f.path, f.data_seq, f.bytes, f.retransmit)]
    sys.exit(f"error: {run_dir}: neither kernel-trace/sendmsg_frag.parquet (--trace-kernel) nor "
             "sched-trace/handoffs.parquet (--trace-sched) is there")


def pushes(pieces: list[tuple[float, str, int, int, bool]]) -> list[Push]:
    out: list[Push] = []
    for t, p, s, n, r in pieces:
        last = out[-1] if out else None
        if last and last.path == p and last.rtx == r and abs(t - last.time_s) < SAME_INSTANT_S and last.end == s:
            last.end += n
        else:
            out.append(Push(t, p, s, s + n, r))
    return out


def first_divergence(a: list[Push], b: list[Push], time_tol: float) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if (x.path, x.start, x.end, x.rtx) != (y.path, y.start, y.end, y.rtx) or abs(x.time_s - y.time_s) > time_tol:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    ap.add_argument("--from", dest="t0", type=float, default=0.0, help="first time (s) to compare")
    ap.add_argument("--to", dest="t1", type=float, default=float("inf"), help="last time (s) to compare")
    ap.add_argument("--time-tol", type=float, default=0.005, help="pushes this far apart in time (s) differ")
    ap.add_argument("--context", type=int, default=8, help="pushes shown on either side of the divergence")
    args = ap.parse_args()
    runs = []
    for d in (args.run_a, args.run_b):
        ps = [p for p in pushes(read_pieces(d)) if args.t0 <= p.time_s <= args.t1]
        runs.append(ps)
        per_path: dict[str, int] = {}
        for p in ps:
            per_path[p.path] = per_path.get(p.path, 0) + p.end - p.start
        shares = ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(per_path.items()))
        print(f"{d}: {len(ps)} pushes ({shares})")
    a, b = runs
    i = first_divergence(a, b, args.time_tol)
    if i is None:
        print(f"the pushes agree: {len(a)} of them (times within {args.time_tol * 1e3:g} ms)")
        return
    print(f"first divergence at push {i} ({min(a[i].time_s if i < len(a) else 1e9, b[i].time_s if i < len(b) else 1e9):.4f} s):")
    for k in range(max(0, i - args.context), min(max(len(a), len(b)), i + args.context + 1)):
        left = a[k].show() if k < len(a) else ""
        right = b[k].show() if k < len(b) else ""
        print(f"{'>' if k == i else ' '} {k:5d} {left:<48} | {right}")


if __name__ == "__main__":
    main()
