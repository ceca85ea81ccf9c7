"""The text of a tracefs instance (:mod:`mptcplab.kernel.trace`) as tables, one per event.

Every table has ``time_s`` (from the run's time origin ``t0``; the trace clock is ``mono``,
printed to the microsecond) and ``cpu``. The TCP events name their socket by addresses and
ports, which give the connection (server port ``5201 + k``), the path (the client address
``10.77.<i>.1`` is path ``i``), the host whose socket it is (``client`` or ``server``: the
local address) and ``entity`` (``<connection>/<path>``, as the run's own time series).

The scheduler's events carry no socket. In Linux 6.18 ``mptcp_subflow_get_send`` emits
``trace_mptcp_subflow_get_send`` once per subflow of the connection's ``conn_list``, in list
order, before it looks at the subflow; so one scheduling call is a run of consecutive such
events on one CPU (closed by any other event on that CPU, or when it holds as many events as
the connection has subflows), and an event's position in its call (``index``) is the
subflow's place in ``conn_list``: 0 is the initial subflow (the connection's first path),
then the joined subflows in the order they were added (for a connection over two paths,
index 1 is the other path; with more, the configured order of the joins is assumed).

Which subflow a call picked is not in the event; the DSS mappings written after it are
(``mptcp_sendmsg_frag``, in ``mptcp_sendmsg_frag()`` on the picked subflow). A mapping
starts at the subflow's ``rel_write_seq`` and the next starts where it ends, or extends the
previous one (same ``data_seq`` and ``subflow_seq``, a longer ``data_len``), so each
subflow's mappings form one chain of relative subflow sequence numbers: chain 0 is the
initial subflow (it carries the first data), the next chains the joined subflows in the
order they first carry data. ``bytes`` is what a mapping added (an extended mapping is
reported with its whole ``data_len`` again). A call's ``picked_path`` is the chain of the first mapping
written after it on the same CPU, before the next call there; a call after which no data
was written (no room, or nothing to send) picked none.

The event's ``pace`` is the subflow socket's ``sk_pacing_rate`` and ``ratio`` is
``sk_wmem_queued << 32 / sk_pacing_rate`` (``TP_fast_assign``), while the scheduler compares
``sk_wmem_queued << 32 / avg_pacing_rate`` (its per-subflow average, updated at each pick):
the trace shows the scheduler's inputs but not the linger times it compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["parse"]

SERVER_PORT = 5201
SERVER_ADDR = "10.77.255.1"
_CLIENT_RE = re.compile(r"^10\.77\.(\d+)\.1$")
_LINE_RE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+): (\w+): (.*)$")

#: Per event: the fields kept (as integers), in order.
_FIELDS = {
    "tcp_probe": ("data_len", "snd_nxt", "snd_una", "snd_cwnd", "ssthresh", "snd_wnd", "srtt", "rcv_wnd",
                  "sock_cookie"),
    "tcp_rcvbuf_grow": ("time", "rtt_us", "copied", "inq", "space", "ooo", "scaling_ratio", "rcvbuf", "rcv_ssthresh",
                        "window_clamp", "rcv_wnd", "sock_cookie"),
    "tcp_rcv_space_adjust": ("sock_cookie",),
    "mptcp_subflow_get_send": ("active", "free", "snd_wnd", "pace", "backup", "ratio"),
    "mptcp_sendmsg_frag": ("data_ack", "data_seq", "subflow_seq", "data_len", "data_fin"),
    "ack_update_msk": ("data_ack", "old_snd_una", "new_snd_una", "new_wnd_end", "msk_wnd_end"),
}
#: Renamed columns (the tables say their units).
_RENAME = {"srtt": "srtt_us", "ooo": "ooo_space", "time": "interval_us"}
#: Hexadecimal fields (``%#x``, ``%llx``).
_HEX = {"snd_nxt", "snd_una", "sock_cookie"}

#: The tables, by event.
TABLES = {
    "tcp_probe": "tcp_probe",
    "tcp_rcvbuf_grow": "rcvbuf_grow",
    "tcp_rcv_space_adjust": "rcv_space_adjust",
    "mptcp_subflow_get_send": "subflow_get_send",
    "mptcp_sendmsg_frag": "sendmsg_frag",
    "ack_update_msk": "ack_update_msk",
}


def _kv(text: str) -> dict[str, str]:
    out = {}
    for part in text.split():
        k, sep, v = part.partition("=")
        if sep:
            out[k] = v
    return out


def _int(name: str, v: str) -> int:
    if name in _HEX:
        return int(v, 16)
    return int(v)


class _Attribution:
    """Addresses and ports → connection, path, host."""

    def __init__(self, conns: list[dict[str, Any]], paths: list[str], sender_hosts: dict[int, str]) -> None:
        self.conns = conns
        self.paths = paths
        self.sender_hosts = sender_hosts

    def __call__(self, local: str, lport: int, remote: str, rport: int) -> dict[str, Any] | None:
        host = "server" if local == SERVER_ADDR else "client"
        client, sport = (remote, lport) if host == "server" else (local, rport)
        m = _CLIENT_RE.match(client)
        k = sport - SERVER_PORT
        if not m or not 0 <= k < len(self.conns) or int(m[1]) >= len(self.paths):
            return None
        conn, path = self.conns[k]["name"], self.paths[int(m[1])]
        return {
            "connection": conn, "path": path, "entity": f"{conn}/{path}", "host": host,
            "sender": self.sender_hosts.get(k) == host, "client_port": rport if host == "server" else lport,
        }


def _split_addr(a: str) -> tuple[str, int]:
    host, _, port = a.rpartition(":")
    return host, int(port)


class _Scheduler:
    """Groups ``mptcp_subflow_get_send`` events into calls and attributes mappings to subflows
    (the module's docstring gives the rules)."""

    def __init__(self, n_subflows: int, subflow_paths: list[str] | None) -> None:
        self.n = n_subflows
        self.paths = subflow_paths
        self.open: dict[int, list[dict[str, Any]]] = {}  # per CPU: the call being read
        self.last_call: dict[int, int] = {}  # per CPU: the call whose pick is still unknown
        self.calls: list[list[dict[str, Any]]] = []
        self.picked: dict[int, int] = {}  # call → chain
        self.chains: list[dict[str, int]] = []  # per chain: end, map_seq, map_data
        self.ambiguous = 0
        self.dropped: set[int] = set()

    @property
    def foreign_calls(self) -> int:
        return len(self.dropped)

    def close(self, cpu: int) -> None:
        call = self.open.pop(cpu, None)
        if call:
            self.last_call[cpu] = len(self.calls)
            for row in call:
                row["call"] = len(self.calls)
            self.calls.append(call)

    def get_send(self, cpu: int, row: dict[str, Any]) -> None:
        call = self.open.setdefault(cpu, [])
        row["index"] = len(call)
        call.append(row)
        if len(call) >= self.n:
            self.close(cpu)

    def other(self, cpu: int) -> None:
        self.close(cpu)

    def frag(self, cpu: int, row: dict[str, Any]) -> None:
        self.close(cpu)
        seq, data, end = row["subflow_seq"], row["data_seq"], row["subflow_seq"] + row["data_len"]
        found = [j for j, c in enumerate(self.chains)
                 if c["end"] == seq or (c["map_seq"] == seq and c["map_data"] == data)]
        if len(found) > 1:
            self.ambiguous += 1
        if not found:
            self.chains.append({})
            found = [len(self.chains) - 1]
        j = found[0]
        c = self.chains[j]
        # New bytes: an extended mapping reports its whole length again.
        extends = c.get("map_seq") == seq and c.get("map_data") == data
        row["bytes"] = row["data_len"] - (c["end"] - seq if extends else 0)
        c.update(end=end, map_seq=seq, map_data=data)
        row["chain"] = j
        call = self.last_call.pop(cpu, None)
        if call is not None:
            self.picked[call] = j

    def foreign(self, cpu: int) -> None:
        """Another connection's mapping: the call before it was that connection's."""
        self.close(cpu)
        call = self.last_call.pop(cpu, None)
        if call is not None:
            self.dropped.add(call)

    def path_of_chain(self, j: int) -> str | None:
        return self.paths[j] if self.paths is not None and 0 <= j < len(self.paths) else None

    def finish(self, frags: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        for cpu in list(self.open):
            self.close(cpu)
        rows, notes, mismatched = [], [], 0
        for k, call in enumerate(self.calls):
            if k in self.dropped:
                continue
            chain = self.picked.get(k)
            picked_path = self.path_of_chain(chain) if chain is not None else None
            for row in call:
                row["path"] = self.paths[row["index"]] if self.paths and row["index"] < len(self.paths) else None
                row["picked"] = picked_path is not None and row["path"] == picked_path
                row["picked_path"] = picked_path
                rows.append(row)
            if picked_path is not None and not any(r["picked"] and r["active"] and r["free"] for r in call):
                mismatched += 1
        for f in frags:
            f["path"] = self.path_of_chain(f.get("chain", -1))
        if self.paths is None:
            notes.append("scheduler events not attributed to paths: the run has more than one MPTCP connection")
        elif len(self.paths) > 2:
            notes.append("scheduler events of subflows beyond the second are attributed to paths by the configured "
                         "join order and the order they first carried data")
        if self.ambiguous:
            notes.append(f"{self.ambiguous} DSS mappings matched more than one subflow's sequence (taken as the first)")
        if mismatched:
            notes.append(f"{mismatched} of {len(self.calls)} scheduling calls were followed by data on a subflow that "
                         "was not active and free in that call (the grouping of events into calls failed there)")
        return rows, notes


@dataclass
class Own:
    """What names the run's own events: the client ports of its subflows, and per MPTCP
    connection the sender's final data sequence number (``MPTCP_INFO``'s ``write_seq``).

    A connection's data sequence numbers start at a random 64-bit value (the IDSN, RFC 8684
    section 3.3.1), so a mapping or DATA_ACK within ``DSN_SPAN`` (1 TiB) of the run's is the
    run's: another connection's lands there with probability 2^41 / 2^64, about 1e-7."""

    client_ports: set[int] = field(default_factory=set)
    dsn_refs: list[int] = field(default_factory=list)

    def has_dsn(self, dsn: int) -> bool:
        return any(abs(((dsn - ref + 2**63) % 2**64) - 2**63) < DSN_SPAN for ref in self.dsn_refs)


DSN_SPAN = 2**40


def parse(lines: Iterable[str], sc: Any, t0: float, sender_hosts: dict[int, str],
          own: Own | None = None) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    """The instance's ``trace`` text → (tables by name, event counts by event, notes). With
    ``own``, TCP events of other client ports and DSS mappings and DATA_ACKs of other data
    sequence spaces are left out (other traffic on the host), and so is a scheduling call
    followed by another connection's mapping; ``counts`` counts the events kept."""
    import pandas as pd

    res = sc.resolved
    paths = [p["name"] for p in res["paths"]]
    conns = res["connections"]
    attribute = _Attribution(conns, paths, sender_hosts)
    mptcp = [c for c in conns if c["kind"] == "mptcp"]
    sub_paths = list(mptcp[0]["paths"]) if len(mptcp) == 1 else None
    sched = _Scheduler(len(mptcp[0]["paths"]) if mptcp else 1, sub_paths)
    rows: dict[str, list[dict[str, Any]]] = {e: [] for e in _FIELDS}
    counts = dict.fromkeys(_FIELDS, 0)
    others = 0
    for line in lines:
        if line.startswith("#"):
            continue
        m = _LINE_RE.match(line)
        if not m or m[5] not in _FIELDS:
            continue
        cpu, event = int(m[3]), m[5]
        kv = _kv(m[6])
        row: dict[str, Any] = {"time_s": float(m[4]) - t0, "cpu": cpu}
        for name in _FIELDS[event]:
            if name in kv:
                row[_RENAME.get(name, name)] = _int(name, kv[name])
        if event.startswith("tcp_"):
            if event == "tcp_probe":
                (la, lp), (ra, rp) = _split_addr(kv.get("src", ":0")), _split_addr(kv.get("dest", ":0"))
            else:
                la, lp, ra, rp = kv.get("saddr", ""), int(kv.get("sport", 0)), kv.get("daddr", ""), int(kv.get("dport", 0))
            who = attribute(la, lp, ra, rp)
            if who is None or (own is not None and own.client_ports and who["client_port"] not in own.client_ports):
                others += 1
                continue
            row.update(who)
            sched.other(cpu)
        elif event == "mptcp_subflow_get_send":
            sched.get_send(cpu, row)
            continue
        elif event == "mptcp_sendmsg_frag":
            if own is not None and not own.has_dsn(row["data_seq"]):
                sched.foreign(cpu)
                others += 1
                continue
            sched.frag(cpu, row)
        else:
            if own is not None and not own.has_dsn(row["new_snd_una"]):
                others += 1
                continue
            sched.other(cpu)
        rows[event].append(row)
        counts[event] += 1
    get_send, notes = sched.finish(rows["mptcp_sendmsg_frag"])
    rows["mptcp_subflow_get_send"] = get_send
    counts["mptcp_subflow_get_send"] = len(get_send)
    if others:
        notes.append(f"{others} events of other sockets or connections on the host were left out")
    if sched.foreign_calls:
        notes.append(f"{sched.foreign_calls} scheduling calls followed by another connection's data were left out; "
                     "a call of another connection that wrote nothing cannot be told from the run's")
    tables = {TABLES[e]: pd.DataFrame(r) for e, r in rows.items()}
    return tables, counts, notes
