"""The ``gatecal`` command line: parse, call the library, print. No maths here.

One module per command; each is registered below with one line. Options shared by several
commands live in ``_options``, their parsers in ``_values``; option groups (the noise
model, the suite, how runs are read, the run history) are declared once in ``_inputs`` and
``_store`` and handed to a command as one object each (``_groups``); the commands' outputs
are in ``_outputs``, the one error type in ``_errors``, and the headline command's fast
start in ``_fast``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

import gatecal
from gatecal.cli._errors import CliError
from gatecal.cli._fast import fast_arguments, fast_call
from gatecal.cli._help import GLOSSARY

__all__ = ["CliError", "app", "main"]

#: The command line (``app``): its commands register on first use, see `_registered`.
app: typer.Typer

_app = typer.Typer(
    name="gatecal",
    help="Calibrate the CI gates of LLM-judge test suites.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    epilog=GLOSSARY,
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gatecal {gatecal.__version__}\n")
        raise typer.Exit()


@_app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Calibrate the CI gates of LLM-judge test suites.

    Every gate rule reduces to "at least k_min of n cases pass"; gatecal tells how
    often it fails a healthy build (false alarm) and how often it fails a regressed
    one (detection), exactly and by seeded simulation, side by side.
    """


def _registered() -> typer.Typer:
    """The command line with every command registered, one line each. The command modules
    load here, when typer first builds the command line, not on ``import gatecal.cli``: the
    headline's direct call (`fast_call`) loads its own command's module and no other."""
    if _app.registered_commands:
        return _app
    from gatecal.cli import (
        calibrate,
        check,
        compare,
        golden,
        history,
        plan,
        policies,
        recommend,
        record,
        report,
        runs,
        simulate,
    )
    from gatecal.cli._help import HelpCommand
    from gatecal.cli._spread import spread_command

    app = _app
    app.command("simulate", cls=HelpCommand)(simulate.simulate)
    app.command("golden", cls=HelpCommand)(golden.golden)
    app.command("plan", cls=HelpCommand)(plan.plan)
    app.command("policies", cls=HelpCommand)(policies.policies)
    app.command("recommend", cls=HelpCommand)(recommend.recommend)
    app.command("report", cls=HelpCommand)(report.report)
    app.command("runs", cls=HelpCommand)(runs.runs)
    app.command("calibrate", cls=HelpCommand)(calibrate.calibrate)
    app.command("check", cls=spread_command(check.PATH_LISTS))(check.check)
    app.command("compare", cls=spread_command(compare.PATH_LISTS))(compare.compare)
    app.command("record", cls=HelpCommand)(record.record)
    app.command("history", cls=HelpCommand)(history.history)
    return app


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        return _registered()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Options renamed because one word meant two things; the old spelling still works.
RENAMED = {
    ("golden", "--threshold"): "--pass-rate",
    **{(c, "--threshold"): "--score-threshold" for c in ("recommend", "report", "runs", "check")},
    # --partial is inspect_ai's 'P' score in recommend and check; in compare it meant this
    ("compare", "--partial"): "--allow-missing",
}


def _renamed(args: Sequence[str]) -> list[str]:
    """A deprecation note for each old spelling in `args`."""
    command = args[0] if args else ""
    notes = []
    for arg in dict.fromkeys(a.split("=", 1)[0] for a in args[1:] if a.startswith("--")):
        new = RENAMED.get((command, arg))
        if new:
            notes.append(f"gatecal: note: {command} {arg} is now {new} (the old spelling works)\n")
    return notes


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code. Errors are one line on stderr."""
    from gatecal._common.output import terminate_cleanly

    args = list(sys.argv[1:] if argv is None else argv)
    with terminate_cleanly():  # SIGTERM removes temporaries as Ctrl-C does, then ends us
        code = _run(args)
    if code != 2:  # an error stays one line
        sys.stderr.writelines(_renamed(args))
    return code


def _run(args: list[str]) -> int:
    try:
        direct = fast_arguments(args)
        if direct is not None:
            result = fast_call(args[0], direct)
        else:
            result = typer.main.get_command(_registered()).main(
                args=args, prog_name="gatecal", standalone_mode=False
            )
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        sys.stderr.write("gatecal: aborted\n")
        return 1
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # plain `gatecal`: the help, not an error
            sys.stdout.write(exc.format_message().rstrip() + "\n")
            return 0
        from gatecal._common.tables import safe_terminal

        message = safe_terminal(" ".join(exc.format_message().split()))
        sys.stderr.write(f"gatecal: error: {message}\n")
        return getattr(exc, "exit_code", 2)
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0
