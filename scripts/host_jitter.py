"""Derives the host-jitter table (crates/core/data/host-jitter-linux-<release>.csv) from
kernel-backend captures taken on the client's interfaces.

Each sample is the receiving host's turnaround: from a data segment's arrival to the
departure of the ACK that acknowledges exactly that segment, both timestamps from the same
capture (so the link emulator's timing is not in it). Usage:

    mptcplab run SCENARIO --backend linux --pcap DIR   # a scenario without link jitter
    python scripts/host_jitter.py OUT.csv "COMMAND" DIR/*.pcap
"""

from __future__ import annotations

import platform
import statistics
import subprocess
import sys


def turnarounds(pcap: str) -> list[float]:
    out = subprocess.run(
        ["tshark", "-r", pcap, "-d", "tcp.port==5201,data", "-T", "fields", "-e", "frame.time_epoch",
         "-e", "tcp.srcport", "-e", "tcp.seq", "-e", "tcp.len", "-e", "tcp.ack"],
        capture_output=True, text=True, check=True).stdout
    last: tuple[float, int] | None = None
    d = []
    for line in out.splitlines():
        t, sport, seq, length, ack = line.split("\t")
        if sport == "5201" and int(length) > 0:
            last = (float(t), int(seq) + int(length))
        elif sport != "5201" and int(length) == 0 and last and int(ack) == last[1]:
            d.append((float(t) - last[0]) * 1e6)
            last = None
    return d


def main() -> None:
    out, command, pcaps = sys.argv[1], sys.argv[2], sys.argv[3:]
    per_file = {p: turnarounds(p) for p in pcaps}
    d = sorted(x for v in per_file.values() for x in v)
    n = len(d)
    q = [d[min(n - 1, round(k / 1000 * (n - 1)))] for k in range(1001)]
    lines = [
        "# Host turnaround on the Linux kernel backend: data segment arrival -> departure of the ACK",
        "# acknowledging it, both seen by one capture on the client's interface (no link jitter).",
        f"# kernel: Linux {platform.release()}; command: {command}",
        f"# captures: {len(pcaps)}, samples: {n}; mean {statistics.mean(d):.1f} us, sd {statistics.pstdev(d):.1f} us,",
        f"# median {q[500]:.1f} us, p90 {q[900]:.1f} us, p99 {q[990]:.1f} us, max {q[1000]:.1f} us.",
        "# Per capture (mean us, samples): "
        + "; ".join(f"{statistics.mean(v):.1f}, {len(v)}" for v in per_file.values()),
        "quantile,delay_us",
    ] + [f"{k / 1000:.3f},{v:.1f}" for k, v in enumerate(q)]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
