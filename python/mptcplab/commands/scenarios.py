"""The scenarios and link presets: ``mptcplab check`` (one scenario resolved), ``mptcplab
scenarios`` (the bundled ones) and ``mptcplab presets``."""

from __future__ import annotations

import click

from mptcplab.commands import SET_HELP


@click.command()
@click.argument("scenario")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=SET_HELP)
def check(scenario: str, overrides: tuple[str, ...]) -> None:
    """Validate SCENARIO and print it fully resolved (every default filled in) as JSON."""
    from mptcplab.scenario import load_scenario

    sc = load_scenario(scenario, list(overrides))
    click.echo(sc.resolved_json)


@click.command()
def scenarios() -> None:
    """List the bundled scenarios with a one-line description."""
    from mptcplab.scenario import bundled_scenarios

    items = bundled_scenarios()
    width = max((len(n) for n, _, _ in items), default=0)
    for name, _, desc in items:
        click.echo(f"{name:<{width}}  {desc}")


@click.command()
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
