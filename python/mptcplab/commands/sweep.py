"""``mptcplab sweep``: a grid of runs in parallel, resumably, with a progress bar."""

from __future__ import annotations

import signal
import sys
from typing import Any

import click

from mptcplab.commands import SET_HELP, _raise_keyboard_interrupt


@click.command(
    epilog="Writes OUT/results.parquet and OUT/results.csv (one row per run: parameters, repeat, seed, "
    "metrics such as conn.<name>.goodput_bps and sf.<conn>.<path>.share) and OUT/runs/<key>.json per "
    "finished run. Re-running the same command resumes: finished runs are not redone (a stored run that "
    "cannot be trusted, or whose engine build or trace files changed, is run again). OUT holding a different "
    "sweep (scenario, grid, --repeat or --backend) is refused unless --replace is given."
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
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Sweep directory (created, or resumed; a symbolic link is followed).")
@click.option("--replace", is_flag=True, help="Replace a different sweep found in --out (its runs are deleted).")
@click.option("--backend", type=click.Choice(["sim", "linux", "uml"]), default="sim", show_default=True,
              help="linux: run every point on this machine's kernel, one at a time; uml: on the UML kernel "
              "in virtual time, in parallel (--jobs, --engine dask).")
@click.option("--yes", is_flag=True, help="Run a sweep of more than 10 000 runs (grid points x --repeat) without refusing.")
def sweep(
    scenario: str, varies: tuple[str, ...], overrides: tuple[str, ...], repeat: int, jobs: int, engine: str,
    address: str | None, out: str, replace: bool, backend: str, yes: bool,
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
    # The bar starts with the first report, after the stored runs were read: a note about
    # one (on stderr) is not drawn over.
    bar = Progress(*columns, transient=False)

    def stop() -> None:
        if first:  # a bar never started would still print an empty line when stopped
            bar.stop()

    first: list[int] = []
    try:
        task = bar.add_task("runs", total=None)

        def progress(done: int, total: int) -> None:
            if not first:
                first.append(done)
                bar.start()
                bar.update(task, total=total, completed=done)
                if done:
                    bar.console.print(f"resuming: {done} of {total} runs already finished")
            else:
                bar.update(task, completed=done)

        try:
            df = run_sweep(base, grid, repeat=repeat, jobs=jobs, out=out, progress=progress, backend=backend, engine=engine,
                           address=address, replace=replace)
        except SweepInterrupted as e:
            stop()
            click.echo(f"interrupted: {e.done} of {e.total} runs finished and kept in {out}/; "
                       "run the same command again to finish", err=True)
            sys.exit(130)
        except RunFailed as e:
            stop()
            click.echo(f"error: {e} (finished runs are kept in {out}/)", err=True)
            sys.exit(1)
    finally:
        stop()
    click.echo(f"{len(df)} runs: wrote {out}/results.parquet and {out}/results.csv")
