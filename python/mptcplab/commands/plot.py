"""``mptcplab plot``: figures of a run's or a sweep's directory."""

from __future__ import annotations

import click


@click.command()
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
