"""ICMP echo probes for the Linux backend's emulator tests, run inside a namespace:
``python icmp_probe.py SRC DST INTERVAL_S COUNT``.

Sends COUNT echo requests from address SRC to DST, one every INTERVAL_S seconds (on an
absolute schedule, so a late wake-up does not shift later probes), and prints one JSON line:
``[[send_time, rtt_s or null], ...]``, send times in ``time.monotonic()`` seconds. The echo
reply is the kernel's own (no application on the far end); the round-trip time runs from
just before ``sendto`` to the reply's kernel receive timestamp (``SO_TIMESTAMPNS``), so the
prober's own scheduling delays do not count.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import threading
import time

SO_TIMESTAMPNS = 35
ECHO_REQUEST, ECHO_REPLY = 8, 0
PAYLOAD = bytes(56)  # as ping: 84-byte IP packets


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def main(src: str, dst: str, interval: float, count: int) -> list[list[float | None]]:
    ident = os.getpid() & 0xFFFF
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.bind((src, 0))
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sent_real: list[int | None] = [None] * count
    sent_mono: list[float] = [0.0] * count
    rtt: list[float | None] = [None] * count

    def receive() -> None:
        sock.settimeout(0.2)
        deadline = None
        while deadline is None or time.monotonic() < deadline:
            if deadline is None and sent_real[-1] is not None:
                deadline = time.monotonic() + 2.0
            try:
                data, anc, _, _ = sock.recvmsg(2048, socket.CMSG_SPACE(16))
            except TimeoutError:
                continue
            stamp = next((struct.unpack("@qq", d[:16]) for lvl, typ, d in anc
                          if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS), None)
            ihl = (data[0] & 0x0F) * 4
            kind, _, _, rid, seq = struct.unpack_from("!BBHHH", data, ihl)
            if kind != ECHO_REPLY or rid != ident or seq >= count or stamp is None or sent_real[seq] is None:
                continue
            rtt[seq] = (stamp[0] * 1_000_000_000 + stamp[1] - sent_real[seq]) / 1e9

    rx = threading.Thread(target=receive)
    rx.start()
    start = time.monotonic()
    for k in range(count):
        delay = start + k * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        head = struct.pack("!BBHHH", ECHO_REQUEST, 0, 0, ident, k)
        packet = struct.pack("!BBHHH", ECHO_REQUEST, 0, checksum(head + PAYLOAD), ident, k) + PAYLOAD
        sent_mono[k] = time.monotonic()
        sent_real[k] = time.time_ns()
        sock.sendto(packet, (dst, 0))
    rx.join()
    return [[sent_mono[k], rtt[k]] for k in range(count)]


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))), flush=True)
