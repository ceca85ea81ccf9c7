"""Issue 37: the application's write pattern on the kernel backends (``app.write``): a loop
of blocking ``send()`` calls of exactly ``write`` bytes (iperf's ``-l``), the stop time bounding
the last one through ``SO_SNDTIMEO``; without it, non-blocking sends of whatever fits.

Checked on the ``uml`` backend (deterministic, no root) on an MPTCP connection over two paths
(10 Mbit/s 10 ms and 2 Mbit/s 40 ms one way), bulk for 3 s:
- with ``write`` = w, Linux returns from a blocking call only once all w bytes are copied
  (``tcp_sendmsg_locked`` / ``mptcp_sendmsg`` sleep in ``sk_stream_wait_memory``), so every
  call but the one cut at the stop copies w bytes: the app's ``writes`` is ⌈bytes / w⌉;
- the byte stream is the same whatever the write size (64 KiB chunks of zeros, each starting
  with its index, built here independently of the application), so ``sha256_sent`` is that
  stream's hash over the bytes written, and the receiver's matches it;
- without ``write``, each non-blocking call copies at most 64 KiB: ``writes`` ≥ bytes / 64 KiB;
- the same scenario and seed give the same result (the key adds no randomness).
Needs the UML kernel (``bash scripts/setup-uml.sh``).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
from mptcplab.kernel.app import CHUNK, _stream
from mptcplab.kernel.uml.backend import run_uml


def _scenario(app: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "uml-write", "seed": 3, "duration": "3s",
        "paths": [{"name": "fast", "rate": "10Mbit", "delay": "10ms", "queue": "40 packets"},
                  {"name": "slow", "rate": "2Mbit", "delay": "40ms", "queue": "40 packets"}],
        "connections": [{"name": "mptcp", "kind": "mptcp", "stack": "linux", "paths": ["fast", "slow"],
                         "cc": "cubic", "app": app}],
        "output": {"warmup": "1s"},
    }


def _expected_stream_hash(n: int) -> str:
    """SHA-256 of the first ``n`` bytes of the stream: chunk k is k as 8 little-endian bytes,
    then CHUNK − 8 zeros."""
    h = hashlib.sha256()
    k = 0
    while n > 0:
        chunk = k.to_bytes(8, "little") + bytes(CHUNK - 8)
        h.update(chunk[:n])
        n -= CHUNK
        k += 1
    return h.hexdigest()


def test_the_stream_is_a_function_of_the_offset_alone() -> None:
    whole = _stream(0, 3 * CHUNK + 100)
    assert whole[:8] == (0).to_bytes(8, "little") and whole[CHUNK:CHUNK + 8] == (1).to_bytes(8, "little")
    assert hashlib.sha256(whole).hexdigest() == _expected_stream_hash(len(whole))
    # Cut anywhere, in pieces of any size (across a chunk's index too), the same bytes.
    for size in (1, 5, 8192, CHUNK - 3, CHUNK, 128 * 1024):
        parts = b"".join(_stream(o, min(size, len(whole) - o)) for o in range(0, len(whole), size))
        assert parts == whole, size


@pytest.mark.parametrize("write", [8192, 131072])
def test_blocking_writes_of_the_written_size(write: int) -> None:
    res = run_uml(_scenario({"kind": "bulk", "write": f"{write}B"}))
    c = res.summary["connections"][0]
    assert c["write_bytes"] == write
    assert c["written_bytes"] > 10 * write, c  # 3 s at up to 12 Mbit/s: megabytes
    assert c["writes"] == math.ceil(c["written_bytes"] / write), c
    assert c["sha256_sent"] == _expected_stream_hash(c["written_bytes"])
    assert c["sha256_match"], c
    again = run_uml(_scenario({"kind": "bulk", "write": f"{write}B"}))
    assert again.summary == res.summary


def test_without_write_the_app_sends_what_fits_in_calls_of_at_most_64_kib() -> None:
    c = run_uml(_scenario({"kind": "bulk"})).summary["connections"][0]
    assert c["write_bytes"] is None
    assert c["writes"] >= c["written_bytes"] / CHUNK, c
    assert c["sha256_sent"] == _expected_stream_hash(c["written_bytes"])
    assert c["sha256_match"], c
