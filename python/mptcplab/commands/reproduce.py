"""``mptcplab reproduce``: the seed papers' figures and tables, and the report."""

from __future__ import annotations

import click


@click.command(epilog="Writes OUT/<name>/ (claims.csv, section.md, result.json, data and figures) and, for several, OUT/index.html and OUT/totals.json (seed and project claims counted apart).")
@click.argument("names", nargs=-1)
@click.option("--list", "list_", is_flag=True, help="List the reproductions and exit.")
@click.option("--quick", is_flag=True, help="Fewer repetitions (the whole set in minutes); the default uses the papers' counts.")
@click.option("--jobs", type=click.IntRange(1), default=2, show_default=True, help="Parallel worker processes.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the runs go: worker processes here, or a Dask cluster (as sweep --engine).")
@click.option("--address", metavar="tcp://HOST:PORT", help="An existing Dask scheduler (--engine dask; plain TCP).")
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
    if address is not None:
        from mptcplab.cluster import check_address

        check_address(address)
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
