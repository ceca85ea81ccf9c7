"""The commands of the Linux kernel backend: ``mptcplab compare`` (one scenario on both
backends), ``mptcplab validate`` (the simulator against stored kernel runs over the validation
grid) and ``mptcplab cleanup`` (what killed runs left behind)."""

from __future__ import annotations

import os
import signal

import click

from mptcplab.commands import SET_HELP, _raise_keyboard_interrupt
from mptcplab.commands._emulator import emulator_options, parse_emulator_options


@click.command(epilog="Writes with --out: compare.json (both backends' summaries), compare.csv, compare.png.")
@click.argument("scenario")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
@click.option("--runs", type=click.IntRange(1), default=3, show_default=True, help="Runs per backend.")
@click.option("--out", type=click.Path(file_okay=False), help="Write the comparison here.")
@click.option("--backend", type=click.Choice(["linux", "uml"]), default="linux", show_default=True,
              help="The kernel side: linux, this machine's kernel (root, real time); uml, the UML kernel in virtual time.")
def compare(scenario: str, overrides: tuple[str, ...], runs: int, out: str | None, backend: str) -> None:
    """Run SCENARIO on the simulator and on the Linux kernel, RUNS times each, both with
    stack = "linux" (inserted where a connection does not write a stack), and print medians,
    ranges and relative differences, and whether each connection's goodput agrees by
    distribution (the validation's rule over both backends' modes)."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from mptcplab.kernel.compare import compare as run_compare
    from mptcplab.runner import check_output_dir

    if out:
        check_output_dir(out, "--out", sibling=False)

    def progress(backend: str, k: int) -> None:
        click.echo(f"{backend}: run {k + 1} of {runs}", err=True)

    res = run_compare(scenario, runs=runs, overrides=list(overrides), out=out, progress=progress, backend=backend)
    kernel = "Linux" if backend == "linux" else "Linux (UML, virtual time)"
    t = Table(title=f"{escape(str(res['scenario']))}: simulator vs {kernel}, {runs} runs each (median \\[min, max])",
              title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("metric", "simulator", backend, "difference"):
        t.add_column(col, justify="left" if col == "metric" else "right")

    def cell(s: dict[str, float] | None) -> str:
        return "-" if not s else f"{s['median']:.3f} \\[{s['min']:.3f}, {s['max']:.3f}]"

    for r in res["rows"]:
        diff = "-" if r["rel_diff"] is None else f"{100 * r['rel_diff']:+.1f}%"
        t.add_row(Text(r["metric"]), cell(r["sim"]), cell(r["linux"]), diff)
    Console(width=max(Console().width, 110)).print(t)
    for r in res["rows"]:
        if "agrees" in r:
            click.echo(f"{r['metric']}: {'agree' if r['agrees'] else 'do not agree'} by distribution ({r['agreement']})")
    if out:
        click.echo(f"wrote {out}/compare.csv, compare.json, compare.png")


@click.command(epilog="Writes with --out: validate.csv and validate.json (the table, targets and summary); "
             "with --markdown: the table and summary as Markdown (VALIDATION.md). With --kernel: GRID/kernel.csv.")
@click.option("--grid", default="scenarios/validation", show_default=True, type=click.Path(),
              help="Directory of the grid's scenarios and their kernel.csv.")
@click.option("--only", metavar="PATTERN", help="Only scenarios whose name matches this shell-style pattern.")
@click.option("--repeat", type=int, default=20, show_default=True,
              help="Simulator runs (seeds) per scenario (as many as the kernel's runs where they spread, so both "
              "backends' modes are estimated alike; with 10, even the kernel's own runs in the simulator's place "
              "would often miss the target: the report's 'kernel against itself' lines).")
@click.option("--jobs", type=int, default=2, show_default=True, help="Parallel simulator runs.")
@click.option("--kernel", is_flag=True, help="Measure the kernel side first, until every scenario has its runs "
              "(10, or 20 where the first 10 differ by more than 2 %; --runs fixes the count), into GRID/kernel.csv "
              "(root), or with --kernel-backend uml into GRID/uml.csv (any user, --jobs at a time); each run is stored "
              "as it ends, so a stopped measurement resumes.")
@click.option("--runs", type=int, help="With --kernel: this many reliable kernel runs per scenario instead of the "
              "10/20 rule.")
@click.option("--kernel-csv", metavar="NAME", help="The file in GRID holding the kernel runs, measured into with --kernel "
              "(default: kernel.csv, or uml.csv with --kernel-backend uml).")
@click.option("--kernel-backend", type=click.Choice(["linux", "uml"]), default="linux", show_default=True,
              help="The kernel side: linux, this machine's kernel (kernel.csv); uml, the UML kernel in virtual time "
              "(uml.csv), also compared with kernel.csv mode by mode.")
@click.option("--remeasure-load-above", type=float, metavar="LOAD",
              help="With --kernel: measure again only the stored runs that started with a 1-min load average above LOAD.")
@click.option("--out", type=click.Path(file_okay=False), help="Write validate.csv and validate.json here.")
@click.option("--markdown", type=click.Path(dir_okay=False), help="Write the report as Markdown to this file.")
@emulator_options
def validate(
    grid: str, only: str | None, repeat: int, jobs: int, kernel: bool, kernel_backend: str,
    remeasure_load_above: float | None, out: str | None, markdown: str | None, runs: int | None,
    kernel_csv: str | None, emulator_priority: str, max_lateness: str | None,
) -> None:
    """Compare the simulator with stored Linux kernel runs over the validation grid: per scenario
    the kernel's and the simulator's median (min-max) and modes, the simulator's distance to the
    nearest kernel mode, subflow shares; then how many scenarios agree by distribution, how many
    are within 25 % of the nearest kernel mode, and whether the declared targets are met. A miss
    is reported, not an error (exit code 0)."""
    from mptcplab import validation as v
    from mptcplab.errors import config_error

    if kernel and kernel_backend == "linux":
        v.check_root()
    if repeat < 1:
        raise config_error("--repeat", f"{repeat}: need at least 1 run per scenario")
    if jobs < 1:
        raise config_error("--jobs", f"{jobs}: need at least 1")
    if remeasure_load_above is not None and not kernel:
        raise config_error("--remeasure-load-above", "only with --kernel")
    if runs is not None and not kernel:
        raise config_error("--runs", "only with --kernel")
    if kernel_csv is not None and (os.path.basename(kernel_csv) != kernel_csv or not kernel_csv.endswith(".csv")):
        raise config_error("--kernel-csv", f"{kernel_csv}: the name of a .csv file in the grid's folder, without a folder")
    sched, bound = parse_emulator_options(emulator_priority, max_lateness, kernel_backend)
    from mptcplab.runner import check_output_dir

    if out:
        check_output_dir(out, "--out", sibling=False)
    if markdown and os.path.dirname(markdown):
        # A file named without a folder goes into the working directory, which is not replaced.
        check_output_dir(os.path.dirname(markdown), "--markdown", sibling=False)
    v.grid_scenarios(grid, only)
    if kernel:

        def measuring(name: str, k: int, load: str) -> None:
            click.echo(f"{kernel_backend}: {name} run {k + 1} (load {load})", err=True)

        signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
        path = v.measure_kernel(grid, only, runs=runs, progress=measuring, remeasure_load_above=remeasure_load_above,
                                backend=kernel_backend, jobs=jobs, csv_name=kernel_csv, sched=sched,
                                max_lateness_s=bound)
        click.echo(f"wrote {path}", err=True)
    from pathlib import Path

    csv_path = Path(grid) / (kernel_csv or v.BACKEND_CSV[kernel_backend])
    explicit = kernel_backend != "linux" or kernel_csv is not None
    df = v.validate(grid, repeat=repeat, jobs=jobs, only=only, kernel_csv=csv_path if explicit else None,
                    skip_missing=kernel_backend != "linux")
    v.print_report(df)
    uml = v.uml_lines(v.uml_vs_host(grid, only, kernel_csv)) if kernel_backend == "uml" else []
    for line in uml:
        click.echo(line)
    if out:
        for f in v.write_out(df, out):
            click.echo(f"wrote {f}")
    if markdown:
        import shlex

        args = ["mptcplab", "validate", *([f"--grid={grid}"] if grid != "scenarios/validation" else []),
                *([f"--only={only}"] if only else []), *([f"--kernel-backend={kernel_backend}"] if uml else []),
                *([f"--kernel-csv={kernel_csv}"] if kernel_csv else []),
                f"--repeat={repeat}", f"--markdown={markdown}"]
        target = Path(markdown)
        tmp = target.with_name(f".{target.name}.tmp")
        text = v.to_markdown(df, shlex.join(args))
        if uml:
            text += "\n## The UML kernel against the host's kernel\n\n```\n" + "\n".join(uml) + "\n```\n"
        tmp.write_text(text)
        tmp.replace(target)
        click.echo(f"wrote {markdown}")


@click.command(help="Remove what killed Linux-backend runs left behind: network namespaces, orphan "
                  "application processes and scratch directories of runs whose process is gone (root). "
                  "Prints one line per thing removed, and per leftover found but left alone with why (a "
                  "symbolic link or another user's entry named like a scratch directory: never followed).")
def cleanup() -> None:
    from mptcplab.kernel.cleanup import cleanup_command

    cleanup_command(click.echo)
