"""The typer application, built from the command table: shell completion, and for embedding.

Every command of :data:`agentminutes.cli.spec.COMMANDS` becomes a typer
command whose parameters mirror the table's arguments and options (that is
what shell completion reads: option names, choices, files), but whose
arguments are parsed by :func:`agentminutes.cli.parser.parse` and whose help
is :func:`agentminutes.cli.parser.render_help`: running a command through this
application gives the same values, output and messages as the entry point,
which does not load typer at all. The entry point comes here only for
``--install-completion``, ``--show-completion`` and the shell's completion
requests. ``python -m agentminutes.cli.app ARGS`` runs the whole command line
this way.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from agentminutes.cli.parser import (
    HELP_FLAGS,
    HelpRequested,
    check_version_only,
    find_command,
    parse,
    render_group_help,
    render_help,
    render_root_help,
    version_text,
)
from agentminutes.cli.spec import COMMANDS, GROUPS, Argument, Command, Complete, Option

__all__ = ("app", "build_app", "main")

#: Where a command's parsed values wait for its callback (``ctx.meta`` is shared per run).
_VALUES = "agentminutes.values"


def _completer(kind: Complete, choices: tuple[str, ...]) -> Callable[[str], list[str]] | None:
    if choices:
        return lambda incomplete: [c for c in choices if c.startswith(incomplete)]
    if kind == "harness":

        def harnesses(incomplete: str) -> list[str]:
            from agentminutes.harness import harness_names

            return [n for n in ["auto", *harness_names()] if n.startswith(incomplete)]

        return harnesses
    return None


def _option_parameter(opt: Option) -> inspect.Parameter:
    info: Any
    if opt.kind == "flag":
        annotation: Any = bool
        info = typer.Option(*opt.flags, help=opt.help, hidden=opt.hidden)
    else:
        annotation = list[str] if opt.kind == "list" else str
        completer = _completer(opt.complete, opt.choices)
        info = typer.Option(
            *opt.flags,
            help=opt.help,
            metavar=opt.shown_metavar,
            hidden=opt.hidden,
            show_default=False,
            autocompletion=completer,
        )
    if opt.kind == "flag":
        return inspect.Parameter(
            opt.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[bool, info],
        )
    return inspect.Parameter(
        opt.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[annotation | None, info],
    )


def _argument_parameter(arg: Argument) -> inspect.Parameter:
    annotation: Any = list[str] if arg.many else str
    info = typer.Argument(help=arg.help, metavar=arg.metavar, show_default=False)
    return inspect.Parameter(
        arg.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[annotation | None, info],
    )


def _callback(command: Command) -> Callable[..., Any]:
    """A function typer reads the command's parameters from; it runs what the parser gave."""

    def callback(ctx: typer.Context, **_: Any) -> None:
        from agentminutes.cli import run_command

        code = run_command(command, ctx.meta.pop(_VALUES))
        if code:
            raise typer.Exit(code)

    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        *(_argument_parameter(a) for a in command.arguments),
        *(_option_parameter(o) for o in command.options),
    ]
    callback.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in parameters}
    callback.__name__ = "_".join(command.words)
    callback.__doc__ = command.summary
    return callback


def _command_class(command: Command) -> type[TyperCommand]:
    class SpecCommand(TyperCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            if ctx.resilient_parsing:  # a completion request: the framework reads the words
                return list(super().parse_args(ctx, args))
            try:
                ctx.meta[_VALUES] = parse(command, args)
            except HelpRequested as exc:
                sys.stdout.write(exc.text)
                ctx.exit(0)
            return []

        def get_help(self, ctx: Any) -> str:
            return render_help(command).rstrip("\n")

    return SpecCommand


def _group_class(group: str | None) -> type[TyperGroup]:
    class SpecGroup(TyperGroup):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            if group is None and args and not ctx.resilient_parsing:
                from agentminutes.cli import COMPLETION_OPTIONS

                if args[0] in HELP_FLAGS:
                    raise HelpRequested(render_root_help())
                if args[0] in ("--version", "-v"):
                    check_version_only(args)
                elif args[0].split("=")[0] not in COMPLETION_OPTIONS:
                    find_command(args)  # raises our message for an unknown option or command
            return list(super().parse_args(ctx, args))

        def resolve_command(self, ctx: Any, args: list[str]) -> Any:
            if not ctx.resilient_parsing:
                words = [group, *args] if group else args
                find_command(words)  # raises our message for an unknown command
            return super().resolve_command(ctx, args)

        def get_help(self, ctx: Any) -> str:
            text = render_group_help(group) if group else render_root_help()
            return text.rstrip("\n")

    return SpecGroup


def _group_main(group: str) -> Callable[[typer.Context], None]:
    def show_help(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
            sys.stdout.write(render_group_help(group))

    return show_help


def _version(value: bool) -> None:
    if value:
        print(version_text())
        raise typer.Exit()


def build_app() -> typer.Typer:
    """The typer application of every command in the table."""
    root = typer.Typer(
        name="agentminutes",
        cls=_group_class(None),
        add_completion=True,
        invoke_without_command=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @root.callback()
    def _main(
        ctx: typer.Context,
        version: Annotated[
            bool,
            typer.Option(
                "--version", "-v", callback=_version, is_eager=True, help="Print the version."
            ),
        ] = False,
    ) -> None:
        if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
            sys.stdout.write(render_root_help())

    groups: dict[str, typer.Typer] = {}
    for group, summary in GROUPS.items():
        groups[group] = typer.Typer(
            name=group,
            help=summary,
            cls=_group_class(group),
            no_args_is_help=False,
            invoke_without_command=True,
            rich_markup_mode=None,
            context_settings={"help_option_names": ["-h", "--help"]},
        )

        groups[group].callback()(_group_main(group))
        root.add_typer(groups[group])
    for command in COMMANDS:
        owner = groups[command.words[0]] if len(command.words) > 1 else root
        owner.command(
            command.words[-1],
            cls=_command_class(command),
            help=command.summary,
            context_settings={"help_option_names": []},
        )(_callback(command))
    return root


app = build_app()


def main(argv: list[str] | None = None) -> int:
    """Run the command line through the typer application; return the exit status."""
    from agentminutes.cli import guarded

    args = sys.argv[1:] if argv is None else argv

    def run() -> int:
        result = app(args=args, prog_name="agentminutes", standalone_mode=False)
        return result if isinstance(result, int) else 0

    return guarded(run, args)


if __name__ == "__main__":
    sys.exit(main())
