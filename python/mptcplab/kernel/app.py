"""One end of a connection of the Linux backend, run inside a namespace:
``python -m mptcplab.kernel.app SPEC_JSON``.

The client connects (from its first path's address) and the server accepts; whichever end
is the sender writes a non-repeating byte stream (bulk until a stop time, a given number
of bytes, or a given number of bytes every period from the connection's start, as the
simulator's ``periodic`` application), the other reads it to the end. Both hash what they send or receive (SHA-256),
record the receiver's progress, and sample their socket (``TCP_INFO``, or ``MPTCP_INFO``
and every subflow's ``TCP_INFO``; the socket's ``SO_SNDBUF`` and ``SO_RCVBUF``; every
subflow's send and receive buffers and queued memory from the socket diagnostics) at a fixed
interval. At the end the process prints one
JSON object on stdout. Times are seconds since ``t0``, a ``time.monotonic()`` instant
shared by every process of the run (namespaces share the monotonic clock).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import socket
import struct
import sys
import threading
import time
from typing import Any

from mptcplab.kernel import lifetime, sockinfo

CHUNK = 64 * 1024
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33


class Sampler(threading.Thread):
    """Samples a socket's per-subflow state every ``interval`` seconds until stopped."""

    def __init__(self, sock: socket.socket, spec: dict[str, Any], t0: float) -> None:
        super().__init__(daemon=True)
        self.sock, self.spec, self.t0 = sock, spec, t0
        self.interval = float(spec["sample_s"])
        self.samples: list[list[Any]] = []
        self.last: dict[str, dict[str, Any]] = {}
        self.first_seen: dict[str, float] = {}
        self.mptcp: dict[str, int] = {}
        #: The client-side port of every subflow seen (names the run's sockets in a kernel trace).
        self.client_ports: set[int] = set()
        #: Each path's subflow congestion control, as the kernel reports it.
        self.cc: dict[str, str] = {}
        #: (t, the socket's ``sk_sndbuf``): for MPTCP the connection's buffer, which Linux
        #: keeps at ``tcp_wmem[0]`` plus the sum of its subflows' (``__mptcp_sync_sndbuf``).
        self.sndbuf: list[tuple[float, int]] = []
        #: (t, the socket's ``sk_rcvbuf``): for MPTCP the connection's receive buffer.
        self.rcvbuf: list[tuple[float, int]] = []
        self.stop_event = threading.Event()
        self.lock = threading.Lock()

    def path_of(self, local: Any, remote: Any) -> str | None:
        client = local if self.spec["role"] == "client" else remote
        return self.spec["path_of"].get(client[0]) if client else None

    def sample(self) -> None:
        t = time.monotonic() - self.t0
        try:
            if self.spec["kind"] == "mptcp":
                subs = sockinfo.subflows(self.sock)
                info = sockinfo.mptcp_info(self.sock)
            else:
                name = self.sock.getsockname() if self.spec["role"] == "client" else self.sock.getpeername()
                self.client_ports.add(int(name[1]))
                subs = [{"local": (self.spec["path_addr"], 0), "remote": None, "info": sockinfo.tcp_info(self.sock)}]
                info = {}
        except OSError:
            return
        mem = self.read_diag()
        try:
            sndbuf = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            rcvbuf = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        except OSError:
            sndbuf = rcvbuf = None
        with self.lock:
            if info:
                self.mptcp = info
            if sndbuf is not None and rcvbuf is not None:
                self.sndbuf.append((t, sndbuf))
                self.rcvbuf.append((t, rcvbuf))
            for s in subs:
                path = self.path_of(s["local"], s["remote"]) if self.spec["kind"] == "mptcp" else self.spec["path"]
                if path is None:
                    continue
                if self.spec["kind"] == "mptcp":
                    client = s["local"] if self.spec["role"] == "client" else s["remote"]
                    self.client_ports.add(int(client[1]))
                ti = s["info"]
                self.first_seen.setdefault(path, t)
                self.last[path] = dataclasses.asdict(ti)
                sndbuf_sf, wmem_queued, rcvbuf_sf = mem.get(path, (None, None, None))
                self.samples.append([t, path, ti.cwnd_bytes, ti.srtt_s, ti.bytes_sent, ti.bytes_acked, ti.bytes_received,
                                     ti.ssthresh_bytes, ti.in_flight_bytes, sndbuf_sf, wmem_queued, rcvbuf_sf,
                                     ti.rcv_ssthresh_bytes, ti.rcv_wnd_bytes])

    def read_diag(self) -> dict[str, tuple[int | None, int | None, int | None]]:
        """Each subflow's congestion control (kept in ``cc``: the MPTCP socket's own
        ``TCP_CONGESTION`` is the connection's setting, not necessarily its subflows') and its
        (``sk_sndbuf``, ``sk_wmem_queued``, ``sk_rcvbuf``) by path, from the socket
        diagnostics."""
        try:
            socks = sockinfo.diag_sockets(int(self.spec["port"]))
        except OSError:
            return {}
        mem = {}
        for s in socks:
            path = self.path_of(s["local"], s["remote"]) if self.spec["kind"] == "mptcp" else self.spec["path"]
            if path is not None and s["remote"][1] != 0:
                with self.lock:
                    self.cc[path] = s["cc"]
                mem[path] = (s["sndbuf"], s["wmem_queued"], s["rcvbuf"])
        return mem

    def run(self) -> None:
        while not self.stop_event.wait(self.interval):
            self.sample()

    def finish(self) -> None:
        self.stop_event.set()
        self.join()
        self.sample()


def _socket(spec: dict[str, Any]) -> socket.socket:
    proto = socket.IPPROTO_MPTCP if spec["kind"] == "mptcp" else socket.IPPROTO_TCP
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, spec["cc"].encode())
    if spec.get("sndbuf"):
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, int(spec["sndbuf"]))
    if spec.get("rcvbuf"):
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, int(spec["rcvbuf"]))
    return s


def _wanted(spec: dict[str, Any], t: float) -> tuple[float, float | None]:
    """Bytes the application has written by ``t`` (seconds since t0; infinite for bulk) and
    when it next writes more (None: never)."""
    periodic = spec.get("periodic")
    if periodic is None:
        size = spec.get("size")
        return (float("inf") if size is None else float(size)), None
    period, count = float(periodic["period_s"]), periodic.get("count")
    k = max(0, int((t - float(spec["start_s"])) // period) + 1)
    if count is not None:
        k = min(k, int(count))
    done = count is not None and k >= int(count)
    return float(k * int(periodic["size"])), None if done else float(spec["start_s"]) + k * period


def _stream(offset: int, n: int) -> bytes:
    """``n`` bytes of the bulk stream from ``offset``: ``CHUNK``-byte chunks of zeros, each
    beginning with its index (8 bytes, little-endian), as the whatever-fits writer sends a bulk
    stream: the bytes at an offset are the same whatever the writes' sizes."""
    out = bytearray(n)
    k, at = divmod(offset, CHUNK)
    pos = 0
    while pos < n:
        # The chunk's index occupies its first 8 bytes; the rest is zeros (already in ``out``).
        if at < 8:
            head = k.to_bytes(8, "little")[at:at + n - pos]
            out[pos:pos + len(head)] = head
        pos += CHUNK - at
        k, at = k + 1, 0
    return bytes(out)


def _send(sock: socket.socket, spec: dict[str, Any], t0: float, out: dict[str, Any]) -> None:
    if spec.get("write"):
        _send_blocks(sock, spec, t0, out)
    else:
        _send_what_fits(sock, spec, t0, out)
    sock.shutdown(socket.SHUT_WR)
    # Wait for the receiver to read everything and close: then every byte is acknowledged.
    sock.settimeout(max(1.0, t0 + float(spec["stop_s"]) + 30 - time.monotonic()))
    try:
        while sock.recv(4096):
            pass
    except (TimeoutError, OSError):
        pass


def _send_what_fits(sock: socket.socket, spec: dict[str, Any], t0: float, out: dict[str, Any]) -> None:
    """Whatever the socket accepts: each ``send()`` waits for space by Python's socket timeout
    (a poll, then a non-blocking send that copies what fits and returns), in chunks of up to
    ``CHUNK`` bytes, each beginning with its index. Serves bulk, download and periodic."""
    stop = t0 + float(spec["stop_s"])
    # Zeros plus a chunk counter, like the simulator's payload: random bytes would make packet
    # analysers' heuristic dissectors misread truncated payloads as other protocols.
    base = bytearray(CHUNK)
    h = hashlib.sha256()
    sent = writes = 0
    k = 0
    sock.settimeout(0.2)
    while time.monotonic() < stop:
        want, next_write = _wanted(spec, time.monotonic() - t0)
        if sent >= want:
            if next_write is None:
                break
            time.sleep(max(0.0, min(t0 + next_write, stop) - time.monotonic()))
            continue
        base[:8] = k.to_bytes(8, "little")
        k += 1
        n = int(min(CHUNK, want - sent))
        view = memoryview(base)[:n]
        while view:
            try:
                m = sock.send(view)
            except TimeoutError:
                if time.monotonic() >= stop:
                    break
                continue
            writes += 1
            h.update(view[:m])
            sent += m
            view = view[m:]
        if view:
            break
    out.update(bytes=sent, sha256=h.hexdigest(), send_done_t=time.monotonic() - t0, writes=writes, write_bytes=None)


def _send_blocks(sock: socket.socket, spec: dict[str, Any], t0: float, out: dict[str, Any]) -> None:
    """A loop of blocking ``send()`` calls of ``spec["write"]`` bytes each, as iperf's ``-l``:
    Linux returns from a call only once all its bytes are copied (``tcp_sendmsg_locked`` /
    ``mptcp_sendmsg`` sleep in ``sk_stream_wait_memory`` while the buffer is full). The stop
    time bounds each call through ``SO_SNDTIMEO`` set to the time left: a call still waiting
    then returns the bytes it copied (``EAGAIN`` when none), and no call starts after it."""
    stop = t0 + float(spec["stop_s"])
    size = int(spec["write"])
    h = hashlib.sha256()
    sent = writes = short = 0
    sock.settimeout(None)
    while True:
        left = stop - time.monotonic()
        if left <= 0:
            break
        # timeval: whole microseconds, at least one (zero would mean "no timeout").
        us = max(1, int(left * 1e6))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", us // 1_000_000, us % 1_000_000))
        block = _stream(sent, size)
        try:
            m = sock.send(block)
        except (BlockingIOError, TimeoutError):
            break
        writes += 1
        h.update(memoryview(block)[:m])
        sent += m
        if m < size:
            short += 1
            break
    out.update(bytes=sent, sha256=h.hexdigest(), send_done_t=time.monotonic() - t0, writes=writes, write_bytes=size,
               short_writes=short)


def _receive(sock: socket.socket, spec: dict[str, Any], t0: float, out: dict[str, Any]) -> None:
    h = hashlib.sha256()
    buf = bytearray(256 * 1024)
    got = 0
    progress: list[tuple[float, int]] = []
    first = last = None
    deadline = t0 + float(spec["deadline_s"])
    # Blocking reads bounded by the kernel's receive timeout (SO_RCVTIMEO, 1 s): one system
    # call and one clock reading per read, where a Python timeout adds a poll and clock
    # readings (in a User-Mode Linux instance system calls are what a run spends its wall
    # time on, and each clock reading advances the virtual clock by 256 ns).
    sock.settimeout(None)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 1, 0))
    while True:
        try:
            n = sock.recv_into(buf)
        except (BlockingIOError, TimeoutError):
            if time.monotonic() >= deadline:
                break
            continue
        if n == 0:
            break
        now_abs = time.monotonic()
        now = now_abs - t0
        if first is None:
            first = now
        # After an idle gap, the last read before it is recorded too (when a periodic
        # application's chunk was complete).
        if last is not None and now - last >= 0.01 and progress and progress[-1][0] < last:
            progress.append((last, got))
        last = now
        h.update(memoryview(buf)[:n])
        got += n
        if not progress or now - progress[-1][0] >= 0.01:
            progress.append((now, got))
        if now_abs >= deadline:
            break
    if last is not None:
        progress.append((last, got))
    out.update(bytes=got, sha256=h.hexdigest(), first_byte_t=first, last_byte_t=last, progress=progress,
               eof=time.monotonic() < deadline)


def main(spec: dict[str, Any]) -> dict[str, Any]:
    if spec.get("run_pid"):
        lifetime.guard(int(spec["run_pid"]))
    t0 = float(spec["t0"])
    out: dict[str, Any] = {"role": spec["role"]}
    if spec["role"] == "server":
        lst = _socket(spec)
        lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lst.bind((spec["server_addr"], spec["port"]))
        lst.listen(1)
        print("listening", flush=True)
        lst.settimeout(max(1.0, t0 + float(spec["deadline_s"]) - time.monotonic()))
        sock, _ = lst.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, spec["cc"].encode())
        out["accepted_t"] = time.monotonic() - t0
    else:
        sock = _socket(spec)
        sock.bind((spec["path_addr"], 0))
        delay = t0 + float(spec["start_s"]) - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        out["connect_t"] = time.monotonic() - t0
        sock.connect((spec["server_addr"], spec["port"]))
        out["established_t"] = time.monotonic() - t0
    out["cc"] = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    sampler = Sampler(sock, spec, t0)
    sampler.sample()
    sampler.start()
    if spec["sender"]:
        _send(sock, spec, t0, out)
    else:
        _receive(sock, spec, t0, out)
    sampler.finish()
    out.update(samples=sampler.samples, subflows=sampler.last, first_seen=sampler.first_seen, mptcp=sampler.mptcp,
               subflow_cc=sampler.cc, client_ports=sorted(sampler.client_ports), sndbuf=sampler.sndbuf,
               rcvbuf=sampler.rcvbuf)
    sock.close()
    return out


if __name__ == "__main__":
    result = main(json.loads(sys.argv[1]))
    print(json.dumps(result), flush=True)
