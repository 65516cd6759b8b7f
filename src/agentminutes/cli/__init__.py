"""The command line: the entry point, the fast path, the typer app and the command functions.

Entry point of the ``agentminutes`` command (and ``python -m agentminutes``).

Every failure ends here as one line on stderr and a non-zero exit status,
never a traceback. ``detect``, ``follow``, ``convert``, ``stats`` and
``--version`` take a fast path that does not import the CLI framework (typer
costs about 0.2 s per start); anything those paths do not take whole goes to
typer, which owns help and usage messages.
"""

from __future__ import annotations

import sys

__all__ = ("main",)


def _fail(message: str, code: int = 1) -> int:
    from agentminutes.errors import one_line

    print(f"Error: {one_line(message)}", file=sys.stderr)
    return code


def _fast_path(argv: list[str]) -> int | None:
    if argv in (["--version"], ["-v"]):
        from agentminutes._version import __version__

        print(f"agentminutes version {__version__}")
        return 0
    if len(argv) == 2 and argv[0] == "detect" and (argv[1] == "-" or not argv[1].startswith("-")):
        from agentminutes.cli.detect import detect_command

        detect_command(argv[1])
        return 0
    if argv and argv[0] == "follow":
        from agentminutes.live.runner import fast_path

        return fast_path(argv[1:])
    if argv and argv[0] in ("convert", "stats", "sessions"):
        from agentminutes.cli.fast import fast_path as fast_command

        return fast_command(argv)
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the command line with *argv* (default ``sys.argv[1:]``); return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["follow"]:
        from agentminutes.live.signals import catch_early_signals

        catch_early_signals()
    from agentminutes.errors import AgentminutesError
    from agentminutes.sinks.output import guard_stdout

    guard_stdout()
    try:
        code = _fast_path(args)
        if code is None:
            from agentminutes.cli.app import app

            result = app(args=args, prog_name="agentminutes", standalone_mode=False)
            code = result if isinstance(result, int) else 0
        sys.stdout.flush()  # a failing stdout fails here, as one line, not at exit
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


def _framework_exit(exc: Exception) -> int:
    """Map the CLI framework's exceptions (usage errors, exits) onto one line and a status."""
    import typer

    if isinstance(exc, typer.Exit):
        return int(exc.exit_code)
    if isinstance(exc, typer.Abort):
        return 130
    format_message = getattr(exc, "format_message", None)
    if callable(format_message):
        show = getattr(exc, "show", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and callable(show):
            show()
            return 0
        return _fail(str(format_message()), 1)
    return _fail(f"internal error: {type(exc).__name__}: {exc}", 70)
