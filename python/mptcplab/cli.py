"""The ``mptcplab`` command line: run, sweep, compare, validate, plot, check, scenarios, presets,
reproduce, cleanup.

Every user error is printed as one line ``error: <file>: <key path>: <message>`` with exit
code 2 and no traceback. Heavy libraries (pandas, matplotlib, rich) are imported inside
the commands that need them, so ``mptcplab --help`` starts fast.

The commands are in :mod:`mptcplab.commands`, one module per group; here the command group
and the entry point that turns errors into one line.
"""

from __future__ import annotations

import sys

import click

from mptcplab.commands import SET_HELP  # noqa: F401
from mptcplab.commands.kernel import cleanup, compare, validate
from mptcplab.commands.plot import plot
from mptcplab.commands.reproduce import reproduce
from mptcplab.commands.run import run
from mptcplab.commands.scenarios import check, presets, scenarios
from mptcplab.commands.sweep import sweep
from mptcplab.errors import ConfigError, describe, one_line
from mptcplab.sweep import SweepInterrupted

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


@click.group(help="mptcplab: a packet-level Multipath TCP simulator.\n" + EXAMPLES, context_settings={"max_content_width": 100})
@click.version_option(package_name="mptcplab", prog_name="mptcplab")
def cli() -> None:
    pass


for _command in (run, sweep, compare, validate, plot, check, scenarios, reproduce, presets, cleanup):
    cli.add_command(_command)


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


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the command line, turning user errors into one line and exit code 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # make_context + invoke rather than cli.main: click's main turns Ctrl-C into an empty
        # line and Abort, where every command's interruption is the one line below.
        with cli.make_context("mptcplab", args) as ctx:
            code = cli.invoke(ctx)
    except click.exceptions.Exit as e:  # --help, --version
        sys.exit(e.exit_code)
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
    except SweepInterrupted as e:  # a reproduction's runs: those finished are kept, if it has a folder
        kept = f"; the finished runs are kept in {e.out}/: run the same command again to finish" if e.out else ""
        click.echo(one_line(f"{e}{kept}"), err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()