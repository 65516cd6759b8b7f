"""The command line: the entry point, the command table, its parser, the typer app, the commands.

Entry point of the ``agentminutes`` command (and ``python -m agentminutes``).
Every command is declared once, in :mod:`agentminutes.cli.spec` (how to add
one is said there), parsed by :mod:`agentminutes.cli.parser` and run by the
function the table names, without importing the CLI framework (typer costs
about 0.2 s per start). Only shell completion goes to the typer application
(:mod:`agentminutes.cli.app`), which is built from the same table.

Every failure ends here as one line on stderr and a non-zero exit status,
never a traceback: exit status 2 for a wrong command line (what the parser
refuses, and the :class:`~agentminutes.errors.OptionError` a command raises for a
value only it can judge), then a usage hint; 1 for everything else the command
reports.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentminutes.cli.spec import Command

__all__ = ("guarded", "main", "run_command")

#: The variable the shell's completion script sets when it asks for completions.
COMPLETE_VAR = "_AGENTMINUTES_COMPLETE"
COMPLETION_OPTIONS = ("--install-completion", "--show-completion")


def _fail(message: str, code: int = 1) -> int:
    from agentminutes.errors import one_line

    print(f"Error: {one_line(message)}", file=sys.stderr)
    return code


def run_command(command: Command, values: dict[str, Any]) -> int:
    """Run *command* with its parsed *values*; return its exit status."""
    import importlib

    from agentminutes.cli.parser import CommandLineError
    from agentminutes.errors import DetectError, OptionError

    module, _, name = command.run.partition(":")
    function: Callable[..., int | None] = getattr(importlib.import_module(module), name)
    try:
        return function(**values) or 0
    except DetectError as exc:
        if "--harness" not in command.by_flag or "could not detect" not in str(exc):
            raise
        raise DetectError(f"{exc}; --harness NAME reads it as that harness") from None
    except OptionError as exc:
        # A value only the command could judge is a wrong command line all the same:
        # exit 2 and the command's usage hint, as the parser's own refusals.
        raise CommandLineError(str(exc), command) from None


def _dispatch(args: list[str]) -> int:
    from agentminutes.cli.parser import (
        HELP_FLAGS,
        check_version_only,
        find_command,
        parse,
        render_root_help,
        version_text,
    )

    if COMPLETE_VAR in os.environ or any(a.split("=")[0] in COMPLETION_OPTIONS for a in args[:2]):
        from importlib.util import find_spec

        if find_spec("typer") is None:
            from agentminutes.errors import UsageError

            raise UsageError(
                "shell completion comes from typer, which a base install leaves out: "
                "pip install 'agentminutes-py[completion]'"
            )
        from agentminutes.cli.app import main as typer_main

        return typer_main(args)
    if not args or args[0] in HELP_FLAGS:
        sys.stdout.write(render_root_help())
        return 0
    if args[0] in ("--version", "-v"):
        check_version_only(args)
        print(version_text())
        return 0
    command, rest = find_command(args)
    return run_command(command, parse(command, rest))


def guarded(run: Callable[[], int], args: list[str]) -> int:
    """Run *run*, turning every error into one line on stderr and an exit status."""
    from agentminutes.cli.parser import CommandLineError, HelpRequested
    from agentminutes.errors import AgentminutesError
    from agentminutes.sinks.output import guard_stdout

    guard_stdout()
    # Read values nested as deep as the reference reads (10,000 levels); the
    # decoders recurse per level. Deeper input is a parse error, not a crash.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 11_000))
    try:
        code = run()
        sys.stdout.flush()  # a failing stdout fails here, as one line, not at exit
        return code
    except HelpRequested as exc:
        sys.stdout.write(exc.text)
        return 0
    except CommandLineError as exc:
        code = _fail(str(exc), 2)
        print(exc.usage, file=sys.stderr)
        return code
    except AgentminutesError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing more to say.
        sys.stderr.close()
        return 141
    except MemoryError:
        return _fail("out of memory")
    except Exception as exc:
        return _framework_exit(exc)


def main(argv: list[str] | None = None) -> int:
    """Run the command line with *argv* (default ``sys.argv[1:]``); return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["statusline"]:
        # Run on every prompt of a Claude Code session: the kept line is printed without
        # loading the command table (see agentminutes.usage.statusline).
        from agentminutes.usage.statusline import run_statusline

        return run_statusline()
    if args[:1] == ["follow"]:
        from agentminutes.live.signals import catch_early_signals

        catch_early_signals()
    return guarded(lambda: _dispatch(args), args)


def _framework_exit(exc: Exception) -> int:
    """Map what the CLI framework raises (in completion and the typer path) onto a status."""
    if "typer" in sys.modules:
        import typer

        if isinstance(exc, typer.Exit):
            return int(exc.exit_code)
        if isinstance(exc, typer.Abort):
            return 130
        format_message = getattr(exc, "format_message", None)
        if callable(format_message):
            return _fail(str(format_message()), 2)
    return _fail(f"internal error: {type(exc).__name__}: {exc}", 70)
