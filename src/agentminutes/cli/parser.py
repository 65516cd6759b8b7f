"""The one command-line parser: argument vectors to values, help and usage errors, from the table.

Every command is parsed here, whatever path started it (the entry point, or
the typer application's commands, which hand their arguments over), with the
commands declared in :mod:`agentminutes.cli.spec`. The conventions are the
usual ones: options and arguments in any order, ``--name VALUE`` and
``--name=VALUE``, ``-o VALUE``, ``-oVALUE`` and ``-o=VALUE`` (all give
``VALUE``), ``--`` ends the options, ``-`` alone is an argument (stdin), the
word after an option that takes a value is its value even if it starts with
``-``, and options are never abbreviated. A command line this parser refuses
raises :class:`CommandLineError`: one line saying what is wrong, then a usage
hint.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Final

from agentminutes._version import __version__
from agentminutes.cli.spec import COMMANDS, GROUPS, ROOT_SUMMARY, Command, Option
from agentminutes.errors import UsageError

__all__ = (
    "HELP_FLAGS",
    "CommandLineError",
    "HelpRequested",
    "check_version_only",
    "find_command",
    "parse",
    "render_group_help",
    "render_help",
    "render_root_help",
    "usage_line",
    "version_text",
)

HELP_FLAGS: Final = ("-h", "--help")
#: The top-level options (besides help): typer adds the completion ones.
ROOT_OPTIONS: Final = (
    ("-v, --version", "Print the version and exit."),
    ("--install-completion", "Install completion for the current shell (bash, zsh, fish)."),
    ("--show-completion", "Print the completion script for the current shell."),
)


class CommandLineError(UsageError):
    """A command line the parser refuses; :attr:`usage` is the hint printed after it."""

    def __init__(self, message: str, command: Command | None = None) -> None:
        super().__init__(message)
        self.command = command

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.command))

    @property
    def usage(self) -> str:
        """``Usage: …`` and where the whole help is, for the command (or the program)."""
        if self.command is None:
            return "Usage: agentminutes COMMAND [ARGS]...  (see agentminutes --help)"
        path = self.command.path
        return f"{usage_line(self.command)}  (see agentminutes {path} --help)"


class HelpRequested(Exception):
    """``--help`` was given: :attr:`text` is the help to print (exit status 0)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _quote(text: str) -> str:
    """*text* as a one-line double-quoted string (control and line-break characters escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable() and ch not in "\u2028\u2029\x85":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return '"' + "".join(out) + '"'


def find_command(argv: list[str]) -> tuple[Command, list[str]]:
    """The command *argv* names, and the arguments that follow its words.

    Raises:
        CommandLineError: the first word is not a command (or a group without its command).
        HelpRequested: a group's help was asked for (``agentminutes drift --help``).
    """
    if not argv:
        raise CommandLineError("missing COMMAND")
    first = argv[0]
    if first.startswith("-") and first != "-":
        raise CommandLineError(f"no such option {_quote(first)} (a command comes first)")
    if first in GROUPS:
        if len(argv) < 2 or argv[1] in HELP_FLAGS:
            raise HelpRequested(render_group_help(first))
        for cmd in COMMANDS:
            if cmd.words == (first, argv[1]):
                return cmd, argv[2:]
        known = ", ".join(c.words[1] for c in COMMANDS if c.words[0] == first)
        raise CommandLineError(f'no command "{first} {argv[1]}" (known: {known})')
    for cmd in COMMANDS:
        if cmd.words == (first,):
            return cmd, argv[1:]
    raise CommandLineError(f"no such command {_quote(first)}{_did_you_mean(first, _names())}")


def _names() -> list[str]:
    return [c.words[0] for c in COMMANDS]


def _did_you_mean(word: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def parse(command: Command, argv: list[str]) -> dict[str, Any]:
    """Parse *argv* (what follows the command's words) into the command's keyword arguments.

    Raises:
        CommandLineError: an unknown option, a missing or refused value, a
            missing or extra argument, an option given without the one it needs.
        HelpRequested: ``-h``/``--help`` came before ``--``.
    """
    values: dict[str, Any] = {opt.name: opt.default for opt in command.options}
    given: set[str] = set()
    positionals: list[str] = []
    i, n = 0, len(argv)
    while i < n:
        word = argv[i]
        i += 1
        if word == "--":
            positionals.extend(argv[i:])
            break
        if word == "-" or not word.startswith("-"):
            positionals.append(word)
            continue
        if word in HELP_FLAGS:
            raise HelpRequested(render_help(command))
        if word.startswith("--"):
            name, eq, attached = word.partition("=")
            has_value = bool(eq)
        else:  # -oVALUE and -o=VALUE
            name, attached = word[:2], word[2:]
            has_value = bool(attached)
            attached = attached.removeprefix("=")
        opt = command.by_flag.get(name)
        if opt is None:
            if any(h in argv[i:] for h in HELP_FLAGS):
                raise HelpRequested(render_help(command))
            known = [f for f in command.by_flag if f.startswith("--")]
            raise CommandLineError(
                f"no such option {_quote(name)}{_did_you_mean(name, known)}", command
            )
        given.add(opt.long)
        if opt.kind == "flag":
            if has_value:
                raise CommandLineError(f"{opt.long} takes no value", command)
            values[opt.name] = True
            continue
        if not has_value:
            if i >= n:
                raise CommandLineError(f"{opt.long} needs a value ({opt.shown_metavar})", command)
            attached = argv[i]
            i += 1
        converted = _convert(command, opt, attached)
        if opt.kind == "list":
            values[opt.name] = [*(values[opt.name] or ()), converted]
        else:
            values[opt.name] = converted
    _assign_arguments(command, positionals, values)
    for opt in command.options:
        if opt.required and opt.long not in given:
            raise CommandLineError(
                f"{command.path} needs {opt.long} {opt.shown_metavar}".rstrip(), command
            )
        if opt.requires and opt.long in given and opt.requires not in given:
            raise CommandLineError(f"{opt.long} needs {opt.requires}", command)
    return values


def _convert(command: Command, opt: Option, text: str) -> Any:
    if opt.choices and text not in opt.choices:
        want = ", ".join(opt.choices)
        reason = opt.hint or f"want one of {want}"
        raise CommandLineError(f"{opt.long} {_quote(text)}: {reason}", command)
    if opt.convert is None:
        return text
    try:
        return opt.convert(text)
    except ValueError as exc:
        raise CommandLineError(f"{opt.long} {_quote(text)}: want {exc}", command) from None


def _assign_arguments(command: Command, words: list[str], values: dict[str, Any]) -> None:
    rest = list(words)
    for arg in command.arguments:
        if arg.many:
            if arg.required and not rest:
                raise CommandLineError(f"missing {arg.metavar}", command)
            values[arg.name] = rest
            rest = []
        elif rest:
            values[arg.name] = rest.pop(0)
        elif arg.required:
            raise CommandLineError(f"missing {arg.metavar}", command)
        else:
            values[arg.name] = None
    if rest:
        raise CommandLineError(f"unexpected argument {_quote(rest[0])}", command)


# -- help --------------------------------------------------------------------------------


def usage_line(command: Command) -> str:
    """``Usage: agentminutes convert [OPTIONS] TRANSCRIPT``."""
    parts = ["Usage: agentminutes", command.path]
    required = [o for o in command.options if o.required]
    parts += [f"{o.long} {o.shown_metavar}" for o in required]
    if len(required) < len(command.options):
        parts.append("[OPTIONS]")
    for arg in command.arguments:
        shown = f"{arg.metavar}..." if arg.many else arg.metavar
        parts.append(shown if arg.required else f"[{shown}]")
    return " ".join(parts)


def _width() -> int:
    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = int(os.environ.get("COLUMNS", "0") or 0) or 80
    return max(40, min(columns, 100))


def _paragraph(text: str, indent: int, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(
        text, width, initial_indent=" " * indent, subsequent_indent=" " * indent
    ) or [""]


def _table(rows: list[tuple[str, str]], width: int) -> list[str]:
    import textwrap

    left = min(max((len(name) for name, _ in rows), default=0), 30) + 4
    out = []
    for name, text in rows:
        body = textwrap.wrap(text, max(20, width - left)) or [""]
        if len(name) + 4 > left:
            out.append(f"  {name}")
            out += [" " * left + line for line in body]
            continue
        out.append(f"  {name}".ljust(left) + body[0])
        out += [" " * left + line for line in body[1:]]
    return out


def _option_rows(command: Command) -> list[tuple[str, str]]:
    rows = []
    for opt in command.options:
        if opt.hidden:
            continue
        shorts = [f for f in opt.flags if not f.startswith("--")]
        name = ", ".join([*shorts, opt.long])
        if opt.kind != "flag":
            name += f" {opt.shown_metavar}"
        text = opt.help
        notes = []
        if opt.kind == "list":
            notes.append("repeatable")
        if opt.kind == "value" and opt.default not in (None, ""):
            notes.append(f"default: {opt.default}")
        if opt.required:
            notes.append("required")
        if opt.requires:
            notes.append(f"needs {opt.requires}")
        if notes:
            text += f"  [{'; '.join(notes)}]"
        rows.append((name, text))
    rows.append(("-h, --help", "Show this help and exit."))
    return rows


def render_help(command: Command) -> str:
    """The ``--help`` of *command*, wrapped to the terminal."""
    width = _width()
    lines = [usage_line(command), ""]
    lines += _paragraph(command.summary, 2, width)
    if command.description:
        lines += ["", *_paragraph(command.description, 2, width)]
    if command.arguments:
        lines += ["", "Arguments:"]
        lines += _table([(a.metavar, a.help) for a in command.arguments], width)
    lines += ["", "Options:", *_table(_option_rows(command), width)]
    return "\n".join(lines) + "\n"


def render_group_help(group: str) -> str:
    """The help of a command group (``agentminutes drift``)."""
    width = _width()
    lines = [f"Usage: agentminutes {group} COMMAND [ARGS]...", ""]
    lines += _paragraph(GROUPS[group], 2, width)
    rows = [(c.words[1], c.summary) for c in COMMANDS if c.words[0] == group]
    lines += ["", "Commands:", *_table(rows, width)]
    return "\n".join(lines) + "\n"


def render_root_help() -> str:
    """``agentminutes --help``: every command, one line each."""
    width = _width()
    lines = ["Usage: agentminutes [OPTIONS] COMMAND [ARGS]...", ""]
    lines += _paragraph(ROOT_SUMMARY, 2, width)
    rows: list[tuple[str, str]] = []
    for cmd in COMMANDS:
        if cmd.words[0] in GROUPS:
            if not any(name == cmd.words[0] for name, _ in rows):
                rows.append((cmd.words[0], GROUPS[cmd.words[0]]))
            continue
        rows.append((cmd.path, cmd.summary))
    lines += ["", "Commands:", *_table(rows, width)]
    lines += [
        "",
        "Options:",
        *_table([*ROOT_OPTIONS, ("-h, --help", "Show this help and exit.")], width),
    ]
    lines += ["", "agentminutes COMMAND --help shows a command's options."]
    return "\n".join(lines) + "\n"


def check_version_only(argv: list[str]) -> None:
    """Refuse ``--version`` followed by anything."""
    if len(argv) > 1:
        raise CommandLineError(f"{argv[0]} takes nothing after it (got {_quote(argv[1])})")


def version_text() -> str:
    """What ``--version`` prints."""
    return f"agentminutes version {__version__}"
