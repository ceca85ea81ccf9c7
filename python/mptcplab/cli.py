"""The ``mptcplab`` command line: run, sweep, compare, validate, plot, check, scenarios, presets,
reproduce, cleanup.

Every user error is printed as one line ``error: <file>: <key path>: <message>`` with exit
code 2 and no traceback. Heavy libraries (pandas, matplotlib, rich) are imported inside
the commands that need them, so ``mptcplab --help`` starts fast.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

import click

from mptcplab.errors import ConfigError, describe, one_line

EXAMPLES = """
Scenarios are TOML files with human units (see docs/scenarios.md); a bundled
scenario can be named without its path (see `mptcplab scenarios`); link presets are
listed by `mptcplab presets`.

\b
Examples:
  mptcplab run scenarios/nsdi12-wifi-3g.toml --set duration=10s --out out/wifi-3g
  mptcplab run nsdi12-wifi-3g --set paths.wifi.rate=10Mbit --seed 7 --json
  mptcplab sweep nsdi12-wifi-3g --vary connections.mptcp.rcvbuf=100KB,300KB,1MB \\
      --vary "paths.3g.rate=range(1Mbit,4Mbit,4)" --repeat 3 --jobs 2 --out out/sweep
  mptcplab plot out/sweep --x connections.mptcp.rcvbuf --y conn.mptcp.goodput_bps
"""

SET_HELP = (
    "Override a scenario value: KEY.PATH=VALUE. Lists are addressed by element name or index, "
    "e.g. paths.wifi.rate=10Mbit, connections.mptcp.cc=lia, paths.0.delay=5ms. Repeatable."
)


@click.group(help="mptcplab: a packet-level Multipath TCP simulator.\n" + EXAMPLES, context_settings={"max_content_width": 100})
@click.version_option(package_name="mptcplab", prog_name="mptcplab")
def cli() -> None:
    pass


def _fmt(v: Any, scale: float = 1.0, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float | int):
        return f"{v * scale:.{digits}f}"
    return str(v)


def _print_tables(summary: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 100))

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
    console.print(f"[bold]{head}[/bold] {tail}")
    t = table("connections", ("name", "kind", "cc", "goodput (Mbit/s)", "delivered (MB)", "download time (s)", "reinjected (KB)"), 3)
    for c in summary["connections"]:
        t.add_row(
            c["name"], c["kind"], c["cc"], _fmt(c["goodput_bps"], 1e-6), _fmt(c["delivered_bytes"], 1e-6),
            _fmt(c["download_time_s"]), _fmt(c["reinjected_bytes"], 1e-3, 1),
        )
    console.print(t)
    cols = ("connection", "path", "goodput (Mbit/s)", "share", "srtt (ms)", "min RTT (ms)", "retransmits", "RTOs")
    t = table("subflows", cols, 2)
    for s in summary["subflows"]:
        t.add_row(
            s["connection"], s["path"] + (" (backup)" if s["backup"] else ""), _fmt(s["goodput_bps"], 1e-6),
            _fmt(s["share"]), _fmt(s["srtt_s"], 1e3, 1), _fmt(s["min_rtt_s"], 1e3, 1),
            str(s["retransmitted_segments"]), str(s["rtos"]),
        )
    console.print(t)
    t = table("links", ("link", "rate (Mbit/s)", "delay (ms)", "utilisation", "queue drops", "loss drops", "max queue (pkts)"), 1)
    for link in summary["links"]:
        t.add_row(
            link["name"], _fmt(link["rate_bps"], 1e-6), _fmt(link["delay_s"], 1e3, 2), _fmt(link["utilisation"]),
            str(link["queue_drops"]), str(link["loss_drops"]), str(link["max_queue_packets"]),
        )
    console.print(t)


@cli.command(epilog="Writes with --out: summary.json, connections.csv, subflows.csv, links.csv, timeseries.parquet, scenario.json (resolved), run.json.")
@click.argument("scenario")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), help="Seed replacing the scenario's (same seed, same result).")
@click.option("--out", type=click.Path(file_okay=False), help="Write the run directory here (replaced atomically).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON instead of tables.")
@click.option("--pcap", "pcap_dir", type=click.Path(file_okay=False),
              help="Write packet captures (pcap, real TCP/MPTCP headers) into this directory.")
@click.option("--pcap-per", type=click.Choice(["host", "interface", "link"]), default="host", show_default=True,
              help="One capture per host (all its interfaces), per host interface, or per link.")
@click.option("--snaplen", type=click.IntRange(54), help="Bytes kept per captured packet (headers always whole).")
@click.option("--backend", type=click.Choice(["sim", "linux"]), default="sim", show_default=True,
              help="sim: the simulator; linux: this machine's MPTCP stack in namespaces of its own, "
              "through emulated links, in real time (root).")
def run(
    scenario: str, overrides: tuple[str, ...], seed: int | None, out: str | None, as_json: bool,
    pcap_dir: str | None, pcap_per: str, snaplen: int | None, backend: str,
) -> None:
    """Run SCENARIO (a file or a bundled name) and print a summary per connection, subflow and link."""
    import shutil
    from pathlib import Path

    from mptcplab.runner import check_output_dir
    from mptcplab.runner import run as run_scenario

    # Everything written is checked before the run starts, so a bad path costs no run.
    if out:
        check_output_dir(out, "--out", marker="run.json")
    if pcap_dir:
        check_output_dir(pcap_dir, "--pcap", sibling=backend == "sim")
    # Captures inside the output directory (`--out D --pcap D/pcap`) are written to a staging
    # directory beside D and moved in once D holds the results, since D is replaced whole.
    staged = None
    if out and pcap_dir:
        out_abs, pcap_abs = Path(out).absolute(), Path(pcap_dir).absolute()
        if pcap_abs == out_abs:
            from mptcplab.errors import config_error

            raise config_error("--pcap", f"{pcap_dir} is the --out directory; give the captures a directory of their own, e.g. {Path(out) / 'pcap'}")
        if out_abs in pcap_abs.parents:
            staged = out_abs.parent / f".{out_abs.name}.pcap-{os.getpid()}"
            shutil.rmtree(staged, ignore_errors=True)
    final_pcap = pcap_dir
    if staged is not None:
        pcap_dir = str(staged)
    try:
        result = _run_backend(run_scenario, scenario, seed, overrides, pcap_dir, pcap_per, snaplen, backend)
        if out:
            result.to_dir(out)
        if staged is not None:
            target = Path(final_pcap)
            target.parent.mkdir(parents=True, exist_ok=True)
            staged.rename(target)
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
    run_scenario: Any, scenario: str, seed: int | None, overrides: tuple[str, ...], pcap_dir: str | None,
    pcap_per: str, snaplen: int | None, backend: str,
) -> Any:
    """Runs the scenario on ``backend``, the captures (if any) going to ``pcap_dir``."""
    import shutil
    from pathlib import Path

    if backend == "linux":
        from mptcplab.kernel.backend import run_linux

        return run_linux(scenario, seed=seed, overrides=list(overrides), pcap_dir=pcap_dir)
    sets = list(overrides)
    tmp = None
    if pcap_dir:
        target = Path(pcap_dir)
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            from mptcplab.errors import config_error

            raise config_error("--pcap", "exists and is not an empty directory; refusing to overwrite it", str(target))
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        sets += [f"output.pcap.dir={tmp}", f"output.pcap.per={pcap_per}"]
        if snaplen:
            sets.append(f"output.pcap.snaplen={snaplen}")
    try:
        result = run_scenario(scenario, seed=seed, overrides=sets)
        if tmp is not None:
            tmp.mkdir(parents=True, exist_ok=True)
            if target.exists():
                target.rmdir()
            tmp.rename(target)
    finally:
        if tmp is not None and tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@cli.command(
    epilog="Writes OUT/results.parquet and OUT/results.csv (one row per run: parameters, repeat, seed, "
    "metrics such as conn.<name>.goodput_bps and sf.<conn>.<path>.share) and OUT/runs/<key>.json per "
    "finished run. Re-running the same command resumes: finished runs are not redone."
)
@click.argument("scenario")
@click.option("--vary", "varies", multiple=True, required=True, metavar="KEY.PATH=VALUES",
              help="A parameter and its values: KEY=v1,v2,... or KEY=range(start,stop,n[,log]) "
              "(inclusive, units allowed: range(1Mbit,16Mbit,5,log)). Repeat for a grid.")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
@click.option("--repeat", type=click.IntRange(1), default=1, show_default=True, help="Runs per grid point, each with its own derived seed.")
@click.option("--jobs", type=click.IntRange(1), default=1, show_default=True,
              help="Parallel worker processes (with --engine dask and no --address: the local cluster's workers).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: worker processes on this machine; dask: a Dask cluster (pip install 'mptcplab[cluster]').")
@click.option("--address", metavar="tcp://HOST:PORT", help="An existing Dask scheduler (--engine dask); default: a local cluster.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Sweep directory (created, or resumed).")
@click.option("--backend", type=click.Choice(["sim", "linux"]), default="sim", show_default=True,
              help="linux: run every point on the kernel, one at a time.")
@click.option("--yes", is_flag=True, help="Run a sweep of more than 10 000 runs (grid points x --repeat) without refusing.")
def sweep(
    scenario: str, varies: tuple[str, ...], overrides: tuple[str, ...], repeat: int, jobs: int, engine: str,
    address: str | None, out: str, backend: str, yes: bool,
) -> None:
    """Run SCENARIO over a grid of parameter values, in parallel, resumably."""
    import math

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from mptcplab.errors import config_error
    from mptcplab.runner import check_output_dir
    from mptcplab.scenario import load_scenario
    from mptcplab.sweep import MAX_RUNS_UNCONFIRMED, RunFailed, SweepInterrupted, parse_vary, vary_size
    from mptcplab.sweep import sweep as run_sweep

    # The grid's size is computed before any value is expanded: a mistyped count must not
    # spend minutes and gigabytes before it is refused.
    points = math.prod(vary_size(v) for v in varies)
    if points * repeat > MAX_RUNS_UNCONFIRMED and not yes:
        raise config_error("--vary", f"the grid has {points} points x {repeat} repeats = {points * repeat} runs, more than "
                           f"{MAX_RUNS_UNCONFIRMED}; check the counts, or add --yes to run them all")
    grid: dict[str, list[Any]] = {}
    for v in varies:
        key, values = parse_vary(v)
        grid[key] = values
    base = load_scenario(scenario, list(overrides))
    check_output_dir(out, "--out", marker="sweep.json", sibling=False)
    if backend == "linux" and jobs > 1:
        click.echo(f"note: --backend linux runs one point at a time (runs share the machine's real time); "
                   f"--jobs {jobs} is ignored", err=True)
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    if address is not None and jobs > 1:
        click.echo(f"note: --jobs {jobs} is ignored with --address: the cluster's workers run the sweep", err=True)
    columns = (TextColumn("sweep" if engine == "local" else "sweep (dask)"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("runs", total=None)
        first: list[int] = []

        def progress(done: int, total: int) -> None:
            if not first:
                first.append(done)
                bar.update(task, total=total, completed=done)
                if done:
                    bar.console.print(f"resuming: {done} of {total} runs already finished")
            else:
                bar.update(task, completed=done)

        try:
            df = run_sweep(base, grid, repeat=repeat, jobs=jobs, out=out, progress=progress, backend=backend, engine=engine,
                           address=address)
        except SweepInterrupted as e:
            bar.stop()
            click.echo(f"interrupted: {e.done} of {e.total} runs finished and kept in {out}/; "
                       "run the same command again to finish", err=True)
            sys.exit(130)
        except RunFailed as e:
            bar.stop()
            click.echo(f"error: {e} (finished runs are kept in {out}/)", err=True)
            sys.exit(1)
    click.echo(f"{len(df)} runs: wrote {out}/results.parquet and {out}/results.csv")


@cli.command(epilog="Writes with --out: compare.json (both backends' summaries), compare.csv, compare.png.")
@click.argument("scenario")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
@click.option("--runs", type=click.IntRange(1), default=3, show_default=True, help="Runs per backend.")
@click.option("--out", type=click.Path(file_okay=False), help="Write the comparison here.")
def compare(scenario: str, overrides: tuple[str, ...], runs: int, out: str | None) -> None:
    """Run SCENARIO on the simulator and on the Linux kernel, RUNS times each, both with
    stack = "linux" (inserted where a connection does not write a stack), and print medians,
    ranges and relative differences."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from mptcplab.kernel.compare import compare as run_compare
    from mptcplab.runner import check_output_dir

    if out:
        check_output_dir(out, "--out", sibling=False)

    def progress(backend: str, k: int) -> None:
        click.echo(f"{backend}: run {k + 1} of {runs}", err=True)

    res = run_compare(scenario, runs=runs, overrides=list(overrides), out=out, progress=progress)
    t = Table(title=f"{res['scenario']}: simulator vs Linux, {runs} runs each (median \\[min, max])",
              title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("metric", "simulator", "linux", "difference"):
        t.add_column(col, justify="left" if col == "metric" else "right")

    def cell(s: dict[str, float] | None) -> str:
        return "-" if not s else f"{s['median']:.3f} \\[{s['min']:.3f}, {s['max']:.3f}]"

    for r in res["rows"]:
        diff = "-" if r["rel_diff"] is None else f"{100 * r['rel_diff']:+.1f}%"
        t.add_row(r["metric"], cell(r["sim"]), cell(r["linux"]), diff)
    Console(width=max(Console().width, 110)).print(t)
    if out:
        click.echo(f"wrote {out}/compare.csv, compare.json, compare.png")


@cli.command(epilog="Writes with --out: validate.csv and validate.json (the table, targets and summary); "
             "with --markdown: the table and summary as Markdown (VALIDATION.md). With --kernel: GRID/kernel.csv.")
@click.option("--grid", default="scenarios/validation", show_default=True, type=click.Path(),
              help="Directory of the grid's scenarios and their kernel.csv.")
@click.option("--only", metavar="PATTERN", help="Only scenarios whose name matches this shell-style pattern.")
@click.option("--repeat", type=int, default=5, show_default=True, help="Simulator runs (seeds) per scenario.")
@click.option("--jobs", type=int, default=2, show_default=True, help="Parallel simulator runs.")
@click.option("--kernel", is_flag=True, help="Re-measure the kernel side first (root): 5 runs per scenario into "
              "GRID/kernel.csv, resumable.")
@click.option("--remeasure-load-above", type=float, metavar="LOAD",
              help="With --kernel: measure again only the stored runs that started with a 1-min load average above LOAD.")
@click.option("--out", type=click.Path(file_okay=False), help="Write validate.csv and validate.json here.")
@click.option("--markdown", type=click.Path(dir_okay=False), help="Write the report as Markdown to this file.")
def validate(
    grid: str, only: str | None, repeat: int, jobs: int, kernel: bool, remeasure_load_above: float | None,
    out: str | None, markdown: str | None,
) -> None:
    """Compare the simulator with stored Linux kernel runs over the validation grid: per scenario
    the kernel's and the simulator's median (min-max), their difference, subflow shares and
    bimodality; then how many scenarios agree within 10 % and 25 % and whether the declared
    targets are met. A miss is reported, not an error (exit code 0)."""
    from mptcplab import validation as v
    from mptcplab.errors import config_error

    if kernel:
        v.check_root()
    if repeat < 1:
        raise config_error("--repeat", f"{repeat}: need at least 1 run per scenario")
    if jobs < 1:
        raise config_error("--jobs", f"{jobs}: need at least 1")
    if remeasure_load_above is not None and not kernel:
        raise config_error("--remeasure-load-above", "only with --kernel")
    from mptcplab.runner import check_output_dir

    if out:
        check_output_dir(out, "--out", sibling=False)
    if markdown:
        check_output_dir(os.path.dirname(markdown) or ".", "--markdown", sibling=False)
    v.grid_scenarios(grid, only)
    if kernel:

        def measuring(name: str, k: int, load: str) -> None:
            click.echo(f"kernel: {name} run {k + 1} of {v.KERNEL_RUNS} (load {load})", err=True)

        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
        path = v.measure_kernel(grid, only, progress=measuring, remeasure_load_above=remeasure_load_above)
        click.echo(f"wrote {path}", err=True)
    df = v.validate(grid, repeat=repeat, jobs=jobs, only=only)
    v.print_report(df)
    if out:
        for f in v.write_out(df, out):
            click.echo(f"wrote {f}")
    if markdown:
        import shlex
        from pathlib import Path

        args = ["mptcplab", "validate", *([f"--grid={grid}"] if grid != "scenarios/validation" else []),
                *([f"--only={only}"] if only else []), f"--repeat={repeat}", f"--markdown={markdown}"]
        target = Path(markdown)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(v.to_markdown(df, shlex.join(args)))
        tmp.replace(target)
        click.echo(f"wrote {markdown}")


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--x", "x", metavar="PARAM", help="Sweep: parameter on the x axis (default: the first --vary).")
@click.option("--y", "y", metavar="METRIC", help="Sweep: metric column (default: the first conn.<name>.goodput_bps).")
@click.option("--hue", metavar="PARAM", help="Sweep: one line per value of this parameter (default: the second --vary).")
@click.option("--out", type=click.Path(file_okay=False), help="Where to write the figures (default: DIRECTORY/plots).")
def plot(directory: str, x: str | None, y: str | None, hue: str | None, out: str | None) -> None:
    """Plot a run directory (per-subflow cwnd, srtt, ... over time) or a sweep directory
    (a metric against a parameter, mean and 95% CI per group), as PNG and SVG."""
    from pathlib import Path

    from mptcplab.plot import plot as make_plot
    from mptcplab.runner import check_output_dir

    if out is not None:
        check_output_dir(out, "--out", sibling=False)
    else:
        check_output_dir(Path(directory) / "plots", "DIRECTORY", sibling=False)
    for p in make_plot(directory, x=x, y=y, hue=hue, out=out):
        click.echo(f"wrote {p}")


@cli.command()
@click.argument("scenario")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
def check(scenario: str, overrides: tuple[str, ...]) -> None:
    """Validate SCENARIO and print it fully resolved (every default filled in) as JSON."""
    from mptcplab.scenario import load_scenario

    sc = load_scenario(scenario, list(overrides))
    click.echo(sc.resolved_json)


@cli.command()
def scenarios() -> None:
    """List the bundled scenarios with a one-line description."""
    from mptcplab.scenario import bundled_scenarios

    items = bundled_scenarios()
    width = max((len(n) for n, _, _ in items), default=0)
    for name, _, desc in items:
        click.echo(f"{name:<{width}}  {desc}")


@cli.command(epilog="Writes OUT/<name>/ (claims.csv, section.md, result.json, data and figures) and, for several, OUT/index.html.")
@click.argument("names", nargs=-1)
@click.option("--list", "list_", is_flag=True, help="List the reproductions and exit.")
@click.option("--quick", is_flag=True, help="Fewer repetitions (the whole set in minutes); the default uses the papers' counts.")
@click.option("--jobs", type=click.IntRange(1), default=2, show_default=True, help="Parallel worker processes.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the runs go: worker processes here, or a Dask cluster (as sweep --engine).")
@click.option("--address", metavar="tcp://HOST:PORT", help="An existing Dask scheduler (--engine dask).")
@click.option("--full", is_flag=True, help="The scheduler league's full size (every recording, more seeds): for a cluster.")
@click.option("--out", default="report", show_default=True, type=click.Path(file_okay=False), help="Report directory.")
@click.option("--data", type=click.Path(file_okay=False), metavar="DIR",
              help="Data directory holding traces/cellular/ (default: $MPTCPLAB_SHARED, else ../shared relative to "
              "the working directory, else to the source tree).")
def reproduce(names: tuple[str, ...], list_: bool, quick: bool, jobs: int, engine: str, address: str | None, full: bool,
              out: str, data: str | None) -> None:
    """Reproduce the seed papers' figures and tables (NAME ... or `all`), beside the papers' numbers."""
    from pathlib import Path

    from mptcplab import experiments

    known = experiments.names()
    if list_:
        width = max((len(n) for n in known), default=0)
        for n in known:
            mod = experiments.load(n)
            click.echo(f"{n:<{width}}  {mod.TITLE} ({mod.SOURCE})")
        return
    if not names:
        raise click.UsageError("give reproduction names, `all`, or --list")
    chosen = known if "all" in names else list(names)
    for n in chosen:
        if n not in known:
            from mptcplab.errors import config_error
            from mptcplab.scenario import _core_hint

            raise config_error("reproduce", f"no reproduction named `{n}`; known: {', '.join(known)}, all{_core_hint(n, known)}")
    from mptcplab.errors import config_error
    from mptcplab.runner import check_output_dir

    if address is not None and engine != "dask":
        raise config_error("--address", "needs --engine dask (a cluster's address)")
    if full and quick:
        raise config_error("--full", "the full size and --quick exclude each other")
    check_output_dir(out, "--out", sibling=False)
    # Data that is not shipped is found (or refused) before the first reproduction starts.
    data_dir = None
    if data is not None or any(getattr(experiments.load(n), "NEEDS_TRACES", False) for n in chosen):
        from mptcplab.experiments._data import shared_dir

        data_dir = shared_dir(data)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from mptcplab import __version__
    from mptcplab.experiments.report import run_reproductions, write_index

    root = Path(out)
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("ETA"), TimeRemainingColumn(), transient=False,
    ) as bar:
        overall = bar.add_task("reproductions", total=len(chosen))
        current = bar.add_task("", total=None)

        def on_start(name: str) -> None:
            bar.update(overall, completed=chosen.index(name))
            bar.update(current, description=name, completed=0, total=None)

        def progress(done: int, total: int) -> None:
            bar.update(current, completed=done, total=total)

        results = run_reproductions(chosen, root, quick, jobs, on_start, progress, data_dir, engine, address, full)
        bar.update(overall, completed=len(chosen))
    index = write_index(results, root, quick, __version__)
    for r in results:
        click.echo(f"{r.name}: {r.verdict} ({r.runtime_s:.1f} s) -> {root / r.name}/section.md")
    click.echo(f"report: {index}")


@cli.command()
@click.argument("name", required=False)
def presets(name: str | None) -> None:
    """List the link presets (`preset = "NAME"` on a path or link), or print NAME's file with
    its sources and derivation."""
    from mptcplab import _core

    items = _core.presets()
    if name is None:
        width = max((len(n) for n, _, _ in items), default=0)
        for n, desc, _ in items:
            click.echo(f"{n:<{width}}  {desc}")
        return
    for n, _, source in items:
        if n == name:
            click.echo(source, nl=False)
            return
    names = [n for n, _, _ in items]
    from mptcplab.errors import config_error
    from mptcplab.scenario import _core_hint

    raise config_error("presets", f"no preset named `{name}`{_core_hint(name, names)}; presets: {', '.join(names)}")


def _subject(e: click.UsageError) -> str:
    """The option (``--seed``) or argument (``SCENARIO``) a usage error is about, else the
    command (``reproduce``)."""
    if isinstance(e, click.NoSuchOption | click.BadOptionUsage):
        return e.option_name
    param = getattr(e, "param", None)
    if param is not None:
        if isinstance(param, click.Option):
            return max(param.opts, key=len)
        return param.human_readable_name
    hint = getattr(e, "param_hint", None)
    if isinstance(hint, str) and hint:
        return hint.strip("'\"")
    if e.ctx is not None and e.ctx.parent is not None:
        return e.ctx.command_path.partition(" ")[2] or "mptcplab"
    return "mptcplab"


def usage_error_line(e: click.UsageError) -> str:
    """One line ``error: <option or argument>: <message>`` for any click usage error, in place
    of click's multi-line ``Usage:`` block."""
    subject = _subject(e)
    if isinstance(e, click.NoSuchOption):
        message = "no such option"
        if e.possibilities:
            message += f" (did you mean {' or '.join(sorted(e.possibilities))}?)"
    elif isinstance(e, click.MissingParameter):
        kind = e.param_type or (e.param.param_type_name if e.param is not None else "parameter")
        message = f"missing {kind}" + (f": {e.message}" if e.message else "")
    else:
        message = e.message
        for prefix in (f"Option '{subject}' ", f"option '{subject}' "):
            message = message.removeprefix(prefix)
        message = message.rstrip(".")
        message = message[:1].lower() + message[1:] if message[:2] != message[:2].upper() else message
    return one_line(f"error: {subject}: {message}")


@cli.command(help="Remove what killed Linux-backend runs left behind: network namespaces, orphan "
                  "application processes and scratch directories of runs whose process is gone (root).")
def cleanup() -> None:
    from mptcplab.kernel.cleanup import cleanup_command

    cleanup_command(click.echo)


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the command line, turning user errors into one line and exit code 2."""
    try:
        code = cli.main(args=argv, prog_name="mptcplab", standalone_mode=False)
    except ConfigError as e:
        click.echo(describe(e), err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:  # bare `mptcplab`: the help
            click.echo(e.ctx.get_help())
            sys.exit(0)
        click.echo(usage_error_line(e), err=True)
        sys.exit(2)
    except click.ClickException as e:
        click.echo(one_line(f"error: {e.format_message()}"), err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
