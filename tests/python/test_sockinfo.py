"""The socket diagnostics reader (`mptcplab.kernel.sockinfo.diag_sockets`) against real
sockets of this machine: a loopback TCP connection, its two ends read back as `ss -tmi` reads
them (`NETLINK_SOCK_DIAG`, no privileges needed)."""

from __future__ import annotations

import socket

from mptcplab.kernel import sockinfo


def test_each_end_of_a_connection_is_read_with_its_own_buffers_and_congestion_control() -> None:
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    port = lst.getsockname()[1]
    cli = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A fixed buffer: the kernel doubles what SO_SNDBUF asks (sock_setsockopt), and the
    # diagnostics must report the socket's own value, not a default.
    cli.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 50_000)
    cli.connect(("127.0.0.1", port))
    srv, _ = lst.accept()
    try:
        cli.sendall(b"x" * 1000)
        srv.recv(1000)
        socks = sockinfo.diag_sockets(port)
        ends = {s["local"][1]: s for s in socks if s["remote"][1] != 0}
        assert set(ends) == {port, cli.getsockname()[1]}
        for sock in (cli, srv):
            got = ends[sock.getsockname()[1]]
            assert got["sndbuf"] == sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            assert got["rcvbuf"] == sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
            cc = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
            assert got["cc"] == cc
            assert got["wmem_queued"] is not None and got["wmem_queued"] >= 0
        assert ends[cli.getsockname()[1]]["sndbuf"] == 100_000
    finally:
        for s in (cli, srv, lst):
            s.close()
