"""A fast path for ``convert``, ``stats`` and ``sessions`` that does not start the CLI framework.

typer builds a pydantic adapter for every parameter of every command before
it runs one, about 0.2 s per invocation: more than converting a few megabytes.
These commands run once per transcript in archiving loops and shell pipelines,
so their common invocations are parsed here with :mod:`argparse` and handed to
the same functions the typer commands call (:mod:`agentminutes.cli.commands`).
Anything this parser does not take whole (help, an unknown or malformed
option) returns ``None`` and goes to typer, which owns every message. A test
keeps the option sets of both parsers equal.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from agentminutes.cli.commands import run_convert, run_stats

__all__ = ("PARSERS", "fast_path")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ValueError(message)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("transcript")
    p.add_argument("--output", "-o")
    p.add_argument("--harness", default="auto")
    p.add_argument("--harness-version", default="")
    p.add_argument("--permissive", action="store_true")
    p.add_argument("--promote", action="append")
    p.add_argument("--text-form", default="bare")
    p.add_argument("--conversation")


def _convert_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentminutes convert", add_help=False, allow_abbrev=False)
    _common(p)
    p.add_argument("--format", dest="fmt", default="json")
    p.add_argument("--keep-raw", action="store_true")
    p.add_argument("--max-payload-bytes", type=int, default=0)
    p.add_argument("--all", dest="every", action="store_true")
    return p


def _stats_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentminutes stats", add_help=False, allow_abbrev=False)
    _common(p)
    p.add_argument("--include-subagents", action="store_true")
    p.add_argument("--root")
    p.add_argument("--all-subagents", action="store_true")
    return p


def _sessions_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentminutes sessions", add_help=False, allow_abbrev=False)
    for option in ("--harness", "--root", "--cwd", "--session-id", "--since", "--until"):
        p.add_argument(option, default="")
    p.add_argument("--format", dest="fmt", default="paths")
    p.add_argument("--all-subagents", action="store_true")
    return p


def run_sessions(**values: Any) -> int:
    from agentminutes.discovery.sessions import sessions_command

    return sessions_command(**{**values, "root": values["root"] or None})


#: The fast parsers by command, and the function each one feeds (its exit status, or None for 0).
PARSERS: dict[str, tuple[Callable[[], argparse.ArgumentParser], Callable[..., int | None]]] = {
    "convert": (_convert_parser, run_convert),
    "stats": (_stats_parser, run_stats),
    "sessions": (_sessions_parser, run_sessions),
}


def fast_path(argv: list[str]) -> int | None:
    """Run ``argv`` (a command and its arguments) here, or return ``None`` for typer."""
    if not argv or argv[0] not in PARSERS:
        return None
    if any(a in ("-h", "--help") or a.startswith("--no-") for a in argv[1:]):
        return None
    build, run = PARSERS[argv[0]]
    try:
        ns, rest = build().parse_known_args(argv[1:])
    except (ValueError, SystemExit):
        return None
    if rest:
        return None
    values = vars(ns)
    if "transcript" in values:
        return run(values.pop("transcript"), **values) or 0
    return run(**values) or 0
