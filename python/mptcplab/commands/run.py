"""``mptcplab run``: one run on the simulator or the Linux kernel, printed as tables or JSON,
with its captures and its run directory."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from mptcplab.commands import SET_HELP
from mptcplab.commands._emulator import emulator_options, parse_emulator_options


def _fmt(v: Any, scale: float = 1.0, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float | int):
        return f"{v * scale:.{digits}f}"
    return str(v)


def _print_tables(summary: dict[str, Any]) -> None:
    """The summary as tables. Every cell is a ``Text`` (plain text, never console markup), so
    names such as ``[/bold]x`` or ``[red]w[/red]`` print as written; control characters in
    them are shown escaped (``\\n``), keeping each row on one line."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from mptcplab.errors import one_line

    def plain(value: Any) -> Text:
        return Text(one_line(str(value)))

    console = Console(width=max(Console().width, 100), highlight=False)

    def table(title: str, cols: tuple[str, ...], text_cols: int) -> Table:
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for k, col in enumerate(cols):
            t.add_column(col, justify="left" if k < text_cols else "right", no_wrap=k < text_cols)
        return t

    head = f"{summary.get('scenario') or 'scenario'}: seed {summary['seed']}, simulated {summary['end_s']:.3f} s"
    tail = f"({summary['events']} events, {summary['data_packets']} data packets)"
    if summary.get("backend") == "linux":
        head = f"{summary.get('scenario') or 'scenario'}: Linux {summary['kernel']}, ran {summary['end_s']:.3f} s"
        tail = f"({summary['data_packets']} data packets)"
    elif summary.get("backend") == "uml":
        head = (f"{summary.get('scenario') or 'scenario'}: Linux {summary['kernel']} (UML, virtual time), seed "
                f"{summary['seed']}, ran {summary['end_s']:.3f} s")
        tail = f"({summary['data_packets']} data packets)"
    console.print(Text.assemble((one_line(head), "bold"), " ", tail))
    t = table("connections", ("name", "kind", "cc", "goodput (Mbit/s)", "delivered (MB)", "download time (s)", "reinjected (KB)"), 3)
    for c in summary["connections"]:
        t.add_row(
            plain(c["name"]), plain(c["kind"]), plain(c["cc"]), _fmt(c["goodput_bps"], 1e-6), _fmt(c["delivered_bytes"], 1e-6),
            _fmt(c["download_time_s"]), _fmt(c["reinjected_bytes"], 1e-3, 1),
        )
    console.print(t)
    cols = ("connection", "path", "goodput (Mbit/s)", "share", "srtt (ms)", "min RTT (ms)", "retransmits", "RTOs")
    t = table("subflows", cols, 2)
    for s in summary["subflows"]:
        t.add_row(
            plain(s["connection"]), plain(s["path"] + (" (backup)" if s["backup"] else "")), _fmt(s["goodput_bps"], 1e-6),
            _fmt(s["share"]), _fmt(s["srtt_s"], 1e3, 1), _fmt(s["min_rtt_s"], 1e3, 1),
            str(s["retransmitted_segments"]), str(s["rtos"]),
        )
    console.print(t)
    t = table("links", ("link", "rate (Mbit/s)", "delay (ms)", "utilisation", "queue drops", "loss drops", "max queue (pkts)"), 1)
    for link in summary["links"]:
        t.add_row(
            plain(link["name"]), _fmt(link["rate_bps"], 1e-6), _fmt(link["delay_s"], 1e3, 2), _fmt(link["utilisation"]),
            str(link["queue_drops"]), str(link["loss_drops"]), str(link["max_queue_packets"]),
        )
    console.print(t)


@click.command(epilog="Writes with --out: summary.json, connections.csv, subflows.csv, links.csv, timeseries.parquet, scenario.json (resolved), run.json; with --trace-kernel also kernel-trace/.")
@click.argument("scenario")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), help="Seed replacing the scenario's (same seed, same result).")
@click.option("--out", type=click.Path(file_okay=False), help="Write the run directory here (replaced atomically; a symbolic link is followed).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON instead of tables.")
@click.option("--pcap", "pcap_dir", type=click.Path(file_okay=False),
              help="Write packet captures (pcap, real TCP/MPTCP headers) into this directory, new or empty; "
              "they appear there when the run succeeded (a failed or interrupted run leaves nothing). "
              "The only way to ask for captures: a scenario cannot.")
@click.option("--pcap-per", type=click.Choice(["host", "interface", "link"]), default="host", show_default=True,
              help="One capture per host (all its interfaces), per host interface, or per link.")
@click.option("--snaplen", type=click.IntRange(54), help="Bytes kept per captured packet (headers always whole).")
@click.option("--backend", type=click.Choice(["sim", "linux", "uml"]), default="sim", show_default=True,
              help="sim: the simulator; linux: this machine's MPTCP stack in namespaces of its own, "
              "through emulated links, in real time (root); a run whose link emulator fell behind is marked "
              "(emulator.reliable = false in its summary) and says so in a warning line; uml: the same on the "
              "Linux stack of a User-Mode Linux kernel in virtual time (any user; build the kernel once with "
              "bash scripts/setup-uml.sh).")
@click.option("--trace-kernel", is_flag=True,
              help="linux backend (root) or uml backend (any user; virtual time): record the kernel's "
              "tracepoints (tcp_probe, tcp_rcvbuf_grow, "
              "tcp_rcv_space_adjust, the MPTCP scheduler's mptcp_subflow_get_send, mptcp_sendmsg_frag, "
              "ack_update_msk) in a tracefs instance of the run's own, as tables timed from the run's origin: "
              "kernel-trace/*.parquet with --out, the summary's kernel_trace (events, lost events).")
@click.option("--trace-sched", is_flag=True,
              help="sim backend: record every hand-off of data to a subflow (the scheduler's decisions, as the "
              "kernel's mptcp_sendmsg_frag lists them): sched-trace/handoffs.parquet with --out. "
              "scripts/push-diff.py lines it up with a kernel run's kernel-trace/.")
@emulator_options
def run(
    scenario: str, overrides: tuple[str, ...], seed: int | None, out: str | None, as_json: bool,
    pcap_dir: str | None, pcap_per: str, snaplen: int | None, backend: str, trace_kernel: bool,
    trace_sched: bool, emulator_priority: str, max_lateness: str | None,
) -> None:
    """Run SCENARIO (a file or a bundled name) and print a summary per connection, subflow and link."""
    import shutil
    import tempfile
    from pathlib import Path

    from mptcplab.runner import check_output_dir

    sched, bound = parse_emulator_options(emulator_priority, max_lateness, backend)
    if trace_sched and backend != "sim":
        from mptcplab.errors import config_error

        raise config_error("--trace-sched", f"the {backend} backend's hand-offs are the kernel's: use --trace-kernel "
                           "(its sendmsg_frag table)")
    # Everything written is checked before the run starts, so a bad path costs no run.
    if out:
        check_output_dir(out, "--out", marker="run.json")
    if pcap_dir:
        check_output_dir(pcap_dir, "--pcap")
    if backend in ("linux", "uml") and (pcap_per != "host" or snaplen is not None):
        from mptcplab.errors import config_error

        option = "--pcap-per" if pcap_per != "host" else "--snaplen"
        raise config_error(option, f"the {backend} backend captures each client interface whole (tcpdump, 160 B per "
                           "packet); this option is the simulator's")
    # Captures inside the output directory (`--out D --pcap D/pcap`) are written to a staging
    # directory beside D and moved in once D holds the results, since D is replaced whole.
    # Both places are compared as the file system resolves them (either may be a link).
    staged, final_pcap = None, pcap_dir
    if out and pcap_dir:
        from mptcplab.errors import config_error
        from mptcplab.results import RUN_FILES

        out_real, pcap_real = Path(os.path.realpath(out)), Path(os.path.realpath(pcap_dir))
        if pcap_real == out_real:
            raise config_error("--pcap", f"{pcap_dir} is the --out directory; give the captures a directory of their own, e.g. {Path(out) / 'pcap'}")
        if out_real in pcap_real.parents:
            inside = pcap_real.relative_to(out_real)
            if inside.parts[0] in RUN_FILES:
                raise config_error("--pcap", f"{pcap_dir} is inside the run's own file {Path(out) / inside.parts[0]}; "
                                   f"give the captures a directory of their own, e.g. {Path(out) / 'pcap'}")
            staged = Path(tempfile.mkdtemp(prefix=f".{out_real.name}.pcap-", dir=out_real.parent))
            pcap_dir = str(staged)
    try:
        result = _run_backend(scenario, seed, overrides, pcap_dir, pcap_per, snaplen, backend, final_pcap, trace_kernel,
                              linux={"sched": sched, "max_lateness_s": bound}, trace_sched=trace_sched)
        if out:
            result.to_dir(out)
        if staged is not None:
            target = Path(os.path.realpath(out)) / inside
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(staged, target)
            except OSError as e:
                raise config_error("--pcap", f"cannot move the captures into {final_pcap}: {e.strerror}") from None
    finally:
        if staged is not None and staged.exists():
            shutil.rmtree(staged, ignore_errors=True)
    if as_json:
        click.echo(json.dumps(result.summary, indent=2))
    else:
        _print_tables(result.summary)
        if out:
            click.echo(f"wrote {out}/")


def _run_backend(
    scenario: str, seed: int | None, overrides: tuple[str, ...], pcap_dir: str | None,
    pcap_per: str, snaplen: int | None, backend: str, shown: str | None = None, trace_kernel: bool = False,
    linux: dict[str, Any] | None = None, trace_sched: bool = False,
) -> Any:
    """Runs the scenario on ``backend``, the captures (if any) going to ``pcap_dir``, shown
    in messages as ``shown``. The simulator's captures are a run option of their own (never
    a scenario key): written beside ``pcap_dir`` and moved into place once the run succeeded.
    ``linux`` holds the Linux backend's measurement options (``run_linux``'s ``sched`` and
    ``max_lateness_s``)."""
    from pathlib import Path

    if backend == "linux":
        from mptcplab.kernel.backend import run_linux

        return run_linux(scenario, seed=seed, overrides=list(overrides), pcap_dir=pcap_dir, pcap_label="--pcap",
                         trace_kernel=trace_kernel, **(linux or {}))
    if backend == "uml":
        from mptcplab.kernel.uml.backend import run_uml

        return run_uml(scenario, seed=seed, overrides=list(overrides), pcap_dir=pcap_dir, pcap_label="--pcap",
                       trace_kernel=trace_kernel)
    if trace_kernel:  # the simulator has no tracepoints to record
        from mptcplab.kernel.trace import check_available

        check_available(backend)
    from mptcplab.capture import CaptureRequest
    from mptcplab.runner import run_capturing

    capture = None
    if pcap_dir:
        capture = CaptureRequest(Path(pcap_dir), pcap_per, snaplen, label="--pcap", shown=Path(shown or pcap_dir))
    # Ctrl-C stops the simulation at once and its captures are gone; the entry point says so
    # in one line.
    return run_capturing(scenario, seed, list(overrides), capture=capture, sched_log=trace_sched)
