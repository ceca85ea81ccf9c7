"""The network of a Linux-backend run: three namespaces of its own (client, server, and a
"link" namespace where the emulators forward frames), one pair of veth links per path, and
the cleanup of everything it created.

Every name starts with ``mplab-<pid>-<run>-``: the namespaces are ``...c`` (client), ``...s``
(server) and ``...l`` (link); interfaces live only inside them (``c<i>``/``a<i>`` for the
client side of path ``i``, ``s<i>``/``b<i>`` for the server side), so the host's own
interfaces are never touched. Leftovers of a run whose process is gone (killed with
SIGKILL) are found by that prefix and removed before a new run.

Addresses: path ``i`` is the subnet 10.77.<i>.0/24 (client .1, server .2); the server's
service address is 10.77.255.1 on its loopback, reached from each client address by source
routing (table 100 + i), so every path is a separate route to one server address, as a
multi-homed client reaching a single-homed server.

TCP metrics cache: the namespaces' ``tcp_no_metrics_save`` and ``tcp_no_ssthresh_metrics_save``
follow the scenario's ``tcp.metrics`` (:func:`metrics_sysctls`). The cache is per network
namespace (``tcp_get_metrics`` matches an entry's namespace with the socket's, and a
namespace's entries are flushed when it is deleted), and every run builds namespaces of its
own: what one connection saves reaches only later connections of the same run, never
another run.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Network", "PREFIX_RE", "SERVER_ADDR", "check_environment", "cleanup_stale", "client_addr", "metrics_sysctls",
]

SERVER_ADDR = "10.77.255.1"
PREFIX_RE = re.compile(r"^mplab-(\d+)-(\d+)-[csl]$")
NETNS_DIR = Path("/run/netns")
_runs = itertools.count(1)

#: Tools the backend runs, and the Debian package each comes from.
TOOLS = {"ip": "iproute2", "ethtool": "ethtool", "nstat": "iproute2"}


class EnvironmentRefused(Exception):
    """The machine cannot run the Linux backend; the message is one sentence why."""


def metrics_sysctls(tcp: dict) -> dict[str, str]:
    """The sysctls of the scenario's ``tcp.metrics`` (the engine's ``MetricsSave``): ``off`` is
    ``tcp_no_metrics_save = 1``; ``no_ssthresh`` saves RTTs only (Linux >= 5.6's defaults);
    ``all`` saves ssthresh too (the defaults before 5.6)."""
    mode = tcp.get("metrics", "off")
    return {
        "net.ipv4.tcp_no_metrics_save": "1" if mode == "off" else "0",
        "net.ipv4.tcp_no_ssthresh_metrics_save": "0" if mode == "all" else "1",
    }


def client_addr(i: int) -> str:
    return f"10.77.{i}.1"


def server_side_addr(i: int) -> str:
    return f"10.77.{i}.2"


def check_environment(pcap: bool = False) -> None:
    """Raises :class:`EnvironmentRefused` unless the backend can run here."""
    if os.geteuid() != 0:
        raise EnvironmentRefused("the linux backend creates network namespaces and must run as root")
    try:
        enabled = Path("/proc/sys/net/mptcp/enabled").read_text().strip()
    except OSError:
        raise EnvironmentRefused("this kernel has no MPTCP support (/proc/sys/net/mptcp/enabled is missing)") from None
    if enabled != "1":
        raise EnvironmentRefused("MPTCP is disabled on this host (sysctl net.mptcp.enabled = 0)")
    tools = dict(TOOLS)
    if pcap:
        tools["tcpdump"] = "tcpdump"
    for tool, pkg in tools.items():
        if shutil.which(tool) is None:
            raise EnvironmentRefused(f"the tool `{tool}` is missing (Debian package {pkg}; scripts/setup.sh installs it)")
    if not Path("/dev/net/tun").exists() and not Path("/proc/net/packet").exists():
        raise EnvironmentRefused("this kernel has no AF_PACKET support")


def run(cmd: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs a command, raising with its stderr on failure."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p


def _kill_pids_in(ns: str) -> None:
    p = run(["ip", "netns", "pids", ns], check=False)
    for pid in p.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def delete_namespace(ns: str) -> None:
    """Kills every process inside ``ns`` and deletes it (with the interfaces it holds)."""
    _kill_pids_in(ns)
    run(["ip", "netns", "del", ns], check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def our_namespaces() -> list[str]:
    """Every namespace of the ``mplab-`` family on this host."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(n for n in os.listdir(NETNS_DIR) if PREFIX_RE.match(n))


def cleanup_stale() -> list[str]:
    """Deletes the namespaces of runs whose process no longer exists; returns their names."""
    removed = []
    for ns in our_namespaces():
        m = PREFIX_RE.match(ns)
        assert m is not None
        if int(m[1]) != os.getpid() and not _alive(int(m[1])):
            delete_namespace(ns)
            removed.append(ns)
    return removed


@dataclass(eq=False)
class Network:
    """The namespaces and links of one run (created by :meth:`create`, removed by
    :meth:`destroy`, which is safe to call more than once and after a partial create)."""

    n_paths: int
    prefix: str = field(default_factory=lambda: f"mplab-{os.getpid()}-{next(_runs)}-")
    created: list[str] = field(default_factory=list)
    #: Processes of the run (the emulators), and their final counters once stopped.
    procs: list[subprocess.Popen[str]] = field(default_factory=list)
    link_stats: list[dict[str, object]] = field(default_factory=list)
    #: Each emulator's scheduling as it reported it (``crates/linkemu/src/sched.rs``).
    sched: list[dict[str, object] | None] = field(default_factory=list)

    @property
    def client(self) -> str:
        return self.prefix + "c"

    @property
    def server(self) -> str:
        return self.prefix + "s"

    @property
    def link(self) -> str:
        return self.prefix + "l"

    def sh(self, ns: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(["ip", "netns", "exec", ns, *cmd], check=check)

    def sysctl(self, ns: str, values: dict[str, str]) -> None:
        for k, v in values.items():
            self.sh(ns, "sysctl", "-qw", f"{k}={v}")

    def create(self, sysctls: dict[str, str], route_opts: list[list[str]], mtu: int = 1500) -> None:
        """Builds the network. ``sysctls`` apply to the client and server namespaces;
        ``route_opts[i]`` are extra route attributes of path ``i`` (e.g. ``initcwnd 10``)."""
        for ns in (self.client, self.server, self.link):
            run(["ip", "netns", "add", ns])
            self.created.append(ns)
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            self.sysctl(ns, {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"})
        # The metrics cache is off unless ``sysctls`` (metrics_sysctls) says otherwise.
        base = {
            "net.mptcp.enabled": "1",
            "net.ipv4.conf.all.rp_filter": "0",
            "net.ipv4.conf.default.rp_filter": "0",
            **metrics_sysctls({}),
        }
        for ns in (self.client, self.server):
            self.sysctl(ns, {**base, **sysctls})
        run(["ip", "-n", self.server, "addr", "add", f"{SERVER_ADDR}/32", "dev", "lo"])
        for i in range(self.n_paths):
            run(["ip", "-n", self.client, "link", "add", f"c{i}", "type", "veth", "peer", "name", f"a{i}", "netns", self.link])
            run(["ip", "-n", self.server, "link", "add", f"s{i}", "type", "veth", "peer", "name", f"b{i}", "netns", self.link])
            for ns, dev in ((self.client, f"c{i}"), (self.link, f"a{i}"), (self.server, f"s{i}"), (self.link, f"b{i}")):
                # Real MTU-sized frames with their checksums filled in, for the emulator.
                self.sh(ns, "ethtool", "-K", dev, "tx", "off", "rx", "off", "gso", "off", "tso", "off", "gro", "off")
                run(["ip", "-n", ns, "link", "set", dev, "mtu", str(mtu), "up"])
            for dev in (f"a{i}", f"b{i}"):
                run(["ip", "-n", self.link, "link", "set", dev, "promisc", "on"])
            run(["ip", "-n", self.client, "addr", "add", f"{client_addr(i)}/24", "dev", f"c{i}"])
            run(["ip", "-n", self.server, "addr", "add", f"{server_side_addr(i)}/24", "dev", f"s{i}"])
        for i in range(self.n_paths):
            cmac = self.mac(self.client, f"c{i}")
            smac = self.mac(self.server, f"s{i}")
            # Static neighbours: no ARP exchange through the emulated links.
            run(["ip", "-n", self.client, "neigh", "replace", server_side_addr(i), "lladdr", smac, "dev", f"c{i}", "nud", "permanent"])
            run(["ip", "-n", self.server, "neigh", "replace", client_addr(i), "lladdr", cmac, "dev", f"s{i}", "nud", "permanent"])
            opts = route_opts[i]
            run(["ip", "-n", self.client, "rule", "add", "from", client_addr(i), "table", str(100 + i)])
            run(["ip", "-n", self.client, "route", "add", SERVER_ADDR, "via", server_side_addr(i), "dev", f"c{i}", "table", str(100 + i), *opts])
            run(["ip", "-n", self.server, "route", "replace", f"10.77.{i}.0/24", "dev", f"s{i}", "src", SERVER_ADDR, *opts])
        run(["ip", "-n", self.client, "route", "add", SERVER_ADDR, "via", server_side_addr(0), "dev", "c0", *route_opts[0]])

    def mac(self, ns: str, dev: str) -> str:
        import json

        return str(json.loads(run(["ip", "-n", ns, "-j", "link", "show", "dev", dev]).stdout)[0]["address"])

    def mptcp(self, subflow_paths: list[int], backup: set[int]) -> None:
        """Path manager: the client opens one extra subflow from each of ``subflow_paths``."""
        n = str(len(subflow_paths))
        for ns in (self.client, self.server):
            run(["ip", "-n", ns, "mptcp", "limits", "set", "subflows", n, "add_addr_accepted", "0"])
        for i in subflow_paths:
            flags = ["subflow", *(["backup"] if i in backup else [])]
            run(["ip", "-n", self.client, "mptcp", "endpoint", "add", client_addr(i), "dev", f"c{i}", *flags])

    def destroy(self) -> None:
        for ns in reversed(self.created):
            delete_namespace(ns)
        self.created.clear()
