"""Every command of the command line, its arguments and options: the one table both paths read.

:data:`COMMANDS` is the single source of truth. :mod:`agentminutes.cli.parser`
parses every command line with it (and renders ``--help`` and the usage
errors from it), without importing the CLI framework: typer costs about
0.2 s per start, more than converting a few megabytes, and these commands run
once per transcript in shell loops. :mod:`agentminutes.cli.app` builds the
typer application from the same table, for shell completion and for
embedding; its commands hand their arguments to the same parser, so the two
paths cannot disagree on an option, a value or a message.

Adding an option to a command is one line in its ``options`` (reuse the
shared ones below, e.g. ``OUTPUT``)::

    value("--since", "T", "Only sessions active at or after T (RFC 3339 or YYYY-MM-DD)."),

Adding a command is one :class:`Command` in :data:`COMMANDS` and the function
it runs, named ``"module:function"`` (imported only when the command runs)::

    Command(
        "usage",
        "Token usage per model, normalized across harnesses.",
        run="agentminutes.usage.command:run_usage",
        arguments=(TRANSCRIPT,),
        options=(*SOURCE, OUTPUT, choice("--by", ("model", "turn"), "model", "How to group.")),
    ),

The function is called with one keyword argument per argument and option (its
``dest``: the long flag without dashes, ``-`` as ``_``, unless given) and
returns the exit status (``None`` for 0). Option values are checked here
(``choices``, ``convert``, ``requires``); what only the command can judge it
raises as :class:`~agentminutes.errors.UsageError`. ``tests/cli/test_parser.py``
runs every command of this table through both paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

from agentminutes.formats import offered

__all__ = (
    "COMMANDS",
    "GROUPS",
    "OUTPUT",
    "ROOT_SUMMARY",
    "SOURCE",
    "TRANSCRIPT",
    "Argument",
    "Command",
    "Option",
    "choice",
    "flag",
    "many",
    "value",
)

#: What a value completes to in the shell: a file, a folder, a harness name, or nothing special.
Complete = Literal["", "file", "dir", "harness"]


# Plain classes with slots, neither dataclasses nor Structs: every command reads this
# table at start-up. The dataclass decorator writes and compiles each class's methods
# there (95% of the time the table took to build), and msgspec would be loaded for
# --help and --version, which read no transcript.


class Option:
    """One option: its flags, what it holds, how its text becomes a value, and its help."""

    __slots__ = (
        "choices",
        "complete",
        "convert",
        "default",
        "dest",
        "flags",
        "help",
        "hidden",
        "hint",
        "kind",
        "metavar",
        "required",
        "requires",
    )

    def __init__(
        self,
        flags: tuple[str, ...],
        help: str,
        kind: Literal["flag", "value", "list"] = "value",
        metavar: str = "",
        default: Any = None,
        choices: tuple[str, ...] = (),
        convert: Callable[[str], Any] | None = None,
        dest: str = "",
        requires: str = "",
        hint: str = "",
        required: bool = False,
        hidden: bool = False,
        complete: Complete = "",
    ) -> None:
        self.flags = flags
        self.help = help
        #: ``flag`` (present or not), ``value`` (one, the last given wins) or ``list``
        #: (repeatable).
        self.kind = kind
        #: The name shown for the value in help and messages (``FILE``); empty for flags.
        self.metavar = metavar
        self.default = default
        #: The values allowed, if only some are; shown in help and completed in the shell.
        self.choices = choices
        #: Turns the text into the value; raises ValueError with the reason it is refused.
        self.convert = convert
        #: The keyword the command's function takes it as (default: from the long flag).
        self.dest = dest
        #: The long flag of another option this one needs (``--root`` needs
        #: ``--include-subagents``).
        self.requires = requires
        #: Said after a refused value (which command to use instead, …).
        self.hint = hint
        self.required = required
        self.hidden = hidden
        self.complete: Complete = complete

    def __repr__(self) -> str:
        return f"Option({self.long})"

    @property
    def name(self) -> str:
        """The keyword argument this option is passed as."""
        if self.dest:
            return self.dest
        long = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return long.lstrip("-").replace("-", "_")

    @property
    def long(self) -> str:
        """The option's long flag, as messages name it."""
        return next((f for f in self.flags if f.startswith("--")), self.flags[0])

    @property
    def shown_metavar(self) -> str:
        """The value's name in help: the choices (``json|jsonl``) or the metavar."""
        return "|".join(self.choices) if self.choices else self.metavar


class Argument:
    """A positional argument: one (``many=False``) or any number of them."""

    __slots__ = ("complete", "help", "many", "metavar", "name", "required")

    def __init__(
        self,
        name: str,
        metavar: str,
        help: str,
        many: bool = False,
        required: bool = True,
        complete: Complete = "file",
    ) -> None:
        self.name = name
        self.metavar = metavar
        self.help = help
        self.many = many
        self.required = required
        self.complete: Complete = complete

    def __repr__(self) -> str:
        return f"Argument({self.name})"


class Command:
    """A command: its words (``("drift", "scan")``), help, function, arguments and options."""

    __slots__ = ("arguments", "by_flag", "description", "options", "run", "summary", "words")

    def __init__(
        self,
        words: tuple[str, ...],
        summary: str,
        *,
        run: str,
        arguments: tuple[Argument, ...] = (),
        options: tuple[Option, ...] = (),
        description: str = "",
    ) -> None:
        self.words = words
        self.summary = summary
        #: ``"module:function"``, imported when the command runs.
        self.run = run
        self.arguments = arguments
        self.options = options
        #: Paragraphs of ``--help`` after the summary.
        self.description = description
        #: Options are looked up by flag; built once.
        self.by_flag: dict[str, Option] = {}
        for opt in options:
            for f in opt.flags:
                assert f not in self.by_flag, f"{self.path}: {f} declared twice"
                self.by_flag[f] = opt
        for opt in options:
            assert not opt.requires or opt.requires in self.by_flag, (self.path, opt.requires)

    def __repr__(self) -> str:
        return f"Command({self.path})"

    @property
    def path(self) -> str:
        """The command as typed after ``agentminutes`` (``drift scan``)."""
        return " ".join(self.words)


def flag(
    *flags: str, help: str, dest: str = "", requires: str = "", hidden: bool = False
) -> Option:
    """An option that is on when given (``--permissive``)."""
    return Option(flags, help, "flag", default=False, dest=dest, requires=requires, hidden=hidden)


def value(
    flags: str | tuple[str, ...],
    metavar: str,
    help: str,
    default: Any = None,
    *,
    convert: Callable[[str], Any] | None = None,
    dest: str = "",
    requires: str = "",
    required: bool = False,
    complete: Complete = "",
) -> Option:
    """An option that takes one value (``--harness NAME``); given twice, the last one wins."""
    names = (flags,) if isinstance(flags, str) else flags
    return Option(
        names,
        help,
        "value",
        metavar,
        default,
        convert=convert,
        dest=dest,
        requires=requires,
        required=required,
        complete=complete,
    )


def choice(
    flags: str,
    choices: tuple[str, ...],
    default: str | None,
    help: str,
    *,
    dest: str = "",
    hint: str = "",
    hidden: bool = False,
) -> Option:
    """An option that takes one of *choices* (``--format json|jsonl``)."""
    return Option(
        (flags,),
        help,
        "value",
        default=default,
        choices=choices,
        dest=dest,
        hint=hint,
        hidden=hidden,
    )


def many(flags: str, metavar: str, help: str, *, dest: str = "") -> Option:
    """A repeatable option (``--promote NAME --promote NAME``); its value is a list."""
    return Option((flags,), help, "list", metavar, default=None, dest=dest)


def _byte_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise ValueError("a whole number of bytes") from None
    if n < 0:
        raise ValueError("0 (keep whole) or a positive number of bytes")
    return n


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("a whole number") from None


def _workers(text: str) -> int:
    n = _whole_number(text)
    if n < 1:
        raise ValueError("a number of worker processes, at least 1")
    return n


def _seconds(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        raise ValueError("a number of seconds") from None
    if not n > 0 or n == float("inf"):
        raise ValueError("a positive number of seconds")
    return n


def _known_harness(text: str, *, auto: str | None) -> str:
    """*text* if it names a harness; ``"auto"`` becomes *auto* (refused when ``None``)."""
    # Imported only when --harness is given: every command that takes it reads transcripts.
    from agentminutes.harness import harness_names
    from agentminutes.harness.registry import described

    if described(text) is not None:
        return text  # a registered name, told without loading every harness's folder
    names = harness_names()
    if text == "auto" and auto is not None:
        return auto
    choices = [*names, "auto"] if auto is not None else names
    close = [c for c in choices if text and c.startswith(text)]
    if not close:
        import difflib  # only for a name that is refused

        close = difflib.get_close_matches(text, choices, n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise ValueError(f"a harness: {', '.join(choices)}{hint}")


def _harness_or_auto(text: str) -> str:
    """A harness name, or ``auto`` (detect it)."""
    return _known_harness(text, auto="auto")


def _harness_or_every(text: str) -> str:
    """A harness name; ``auto`` means every harness, as leaving the option out does."""
    return _known_harness(text, auto="")


def _harness_name(text: str) -> str:
    """A harness name (a command that needs one harness's folders)."""
    return _known_harness(text, auto=None)


def _when(text: str) -> str:
    """A ``--since``/``--until`` value, checked here and parsed by the command."""
    from agentminutes.timestamps import parse_when

    try:
        parse_when(text)
    except ValueError:
        raise ValueError("a time: RFC 3339 (2026-01-31T09:00:00Z) or a day (YYYY-MM-DD)") from None
    return text


def _time_zone(text: str) -> str:
    """A ``--tz`` value: UTC or an IANA zone name (Europe/Paris)."""
    if text.upper() == "UTC":
        return text
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(text)
    except (KeyError, ValueError, OSError):
        raise ValueError("a time zone: UTC or an IANA name such as Europe/Paris") from None
    return text


# -- shared arguments and options ----------------------------------------------------------

TRANSCRIPT: Final = Argument("transcript", "TRANSCRIPT", 'Transcript file, or "-" for stdin.')
#: ``convert`` and ``stats``: several transcripts in one process (one start-up for a whole list).
TRANSCRIPTS: Final = Argument(
    "transcripts",
    "TRANSCRIPT",
    'Transcript files, or "-" alone for stdin. Several: one result per line, or one file '
    "each with --to-dir.",
    many=True,
    required=False,
)
PATHS_FROM: Final = value(
    "--paths-from",
    "FILE",
    'Also read transcript paths from FILE, one per line ("-": stdin, e.g. from sessions); '
    "output is then one result per line even for one path.",
    complete="file",
)
TO_DIR: Final = value(
    "--to-dir",
    "DIR",
    "Write one file per transcript into DIR (created if missing), named STEM.HASH.EXT (HASH "
    "from the transcript's path, so names never collide); prints TRANSCRIPT<TAB>FILE per file.",
    complete="dir",
)
#: Worker processes for a command that reads many transcripts (``stats``, ``sessions``, ``archive``).
JOBS: Final = value(
    ("-j", "--jobs"),
    "N",
    "Worker processes reading the transcripts (default: the CPUs available; used when there "
    "are enough bytes to read); the output and its order are those of one process.",
    convert=_workers,
)
OUTPUT: Final = value(
    ("-o", "--output"), "FILE", "Write to FILE instead of stdout.", complete="file"
)
HARNESS: Final = value(
    "--harness",
    "NAME",
    'The harness that wrote the transcript, or "auto" to detect it from its first records.',
    "auto",
    convert=_harness_or_auto,
    complete="harness",
)
HARNESS_VERSION: Final = value(
    "--harness-version",
    "V",
    "Harness version for formats that record none (metadata only; never changes parsing).",
    "",
)
PERMISSIVE: Final = flag(
    "--permissive", help="Keep records no rule classifies as unknown events instead of failing."
)
PROMOTE: Final = many(
    "--promote",
    "NAME",
    'Apply an opt-in telemetry promotion (e.g. "codex:web-search").',
)
TEXT_FORM: Final = choice(
    "--text-form",
    ("bare", "delivered"),
    "bare",
    "System event text: bare (as recorded) or delivered (as the harness delivered it).",
)
KEEP_RAW: Final = flag("--keep-raw", help="Keep the verbatim source records in provenance.")
MAX_PAYLOAD: Final = value(
    "--max-payload-bytes",
    "N",
    "Replace tool-result payloads larger than N bytes by their size and sha256 (0 keeps them whole).",
    0,
    convert=_byte_count,
)
CONVERSATION: Final = value(
    "--conversation",
    "ID",
    "In a multi-conversation source (ChatGPT or claude.ai export, turns.db): the conversation "
    "to read, by id or unique id prefix.",
)


def _redaction(default: str) -> tuple[Option, ...]:
    """``--redact``, ``--no-redact``, ``--redact-pattern``, ``--redact-config``: *default* says
    where redaction is on."""
    return (
        flag(
            "--redact",
            help="Replace secrets (API keys, tokens, private keys, passwords …) by "
            f"[REDACTED:<detector>:<hash>] markers; {default}. The count by detector goes to "
            "stderr; $AGENTMINUTES_REDACT_KEY keys the hashes (default: a key per run).",
        ),
        flag("--no-redact", help="Do not redact (where it is on by default; a warning says so)."),
        many(
            "--redact-pattern",
            "REGEX",
            "Also redact what REGEX matches (its group 'secret', if it has one). Turns "
            "redaction on.",
        ),
        value(
            "--redact-config",
            "FILE",
            "A TOML file of named patterns ([[redact.pattern]] name, regex) and built-in "
            "detectors to disable ([redact] disable = [...]). Turns redaction on.",
            complete="file",
        ),
    )


#: How a transcript is read: every command that parses one takes these.
SOURCE: Final = (HARNESS, HARNESS_VERSION, PERMISSIVE, PROMOTE, TEXT_FORM)

ROOT_SUMMARY: Final = (
    "Turn coding-agent session transcripts into one normalized, versioned event stream."
)

#: Command groups (the first word of a two-word command) and their one-line help.
GROUPS: Final = {
    "drift": "Check transcripts for format drift against the baselines shipped in the package.",
}

COMMANDS: Final[tuple[Command, ...]] = (
    Command(
        ("convert",),
        "Convert a transcript to the normalized session (json), its event stream (jsonl), "
        "ACP updates (acp), OpenTelemetry GenAI spans (otlp-json) or an ATIF trajectory (atif).",
        run="agentminutes.cli.commands:run_convert",
        arguments=(TRANSCRIPTS,),
        options=(
            choice(
                "--format",
                offered("convert"),
                "json",
                "json (the whole session), jsonl (one event per line, streamed), acp (Agent "
                "Client Protocol session/update notifications, one JSON-RPC message per line), "
                "otlp-json (OpenTelemetry GenAI spans as OTLP/JSON, one export request per line, "
                "as the collector's otlpjsonfile receiver reads them), or atif (an ATIF v1.8 "
                "trajectory document); what acp, otlp-json and atif cannot carry is counted on "
                "stderr.",
                dest="fmt",
            ),
            OUTPUT,
            *SOURCE,
            KEEP_RAW,
            MAX_PAYLOAD,
            CONVERSATION,
            flag(
                "--all",
                help="Convert every conversation of the source: one whole session JSON per line.",
                dest="every",
            ),
            PATHS_FROM,
            TO_DIR,
            *_redaction(
                "off by default (the output contract), on with --otel-content (spans travel)"
            ),
            flag(
                "--otel-content",
                help="With --format otlp-json: also write prompts, responses, tool arguments "
                "and results into the spans (left out by default, as the GenAI conventions ask).",
            ),
        ),
        description="Several transcripts (or --paths-from) write one whole session JSON per "
        "line, as --all does; --format jsonl and acp need --to-dir then. A transcript that "
        "fails gets its error line on stderr (naming it), the others are still written, and "
        "the exit status is 1.",
    ),
    Command(
        ("stats",),
        "Summarize a session: tool mix, bytes retrieved, latency, tokens, models, final answer.",
        run="agentminutes.cli.commands:run_stats",
        arguments=(TRANSCRIPTS,),
        options=(
            choice(
                "--format",
                ("json", "table"),
                None,
                "json (the reference CLI's document, what scripts read) or table (laid out "
                "for reading); default: table on a terminal, json anywhere else.",
                dest="fmt",
            ),
            OUTPUT,
            *SOURCE,
            CONVERSATION,
            flag(
                "--include-subagents",
                help="Summarize the whole task: the session and its subagent transcripts, each "
                "on its own, added up, with a per-agent split.",
            ),
            value(
                "--root",
                "DIR",
                "Where to look for Codex and Antigravity subagents (default: the harness's "
                "folders).",
                requires="--include-subagents",
                complete="dir",
            ),
            flag(
                "--all-subagents",
                help="Claude Code: also the workflow agents nested below subagents/ (the "
                "reference CLI leaves them out).",
                requires="--include-subagents",
            ),
            flag(
                "--usage",
                help="Add a usage block: the API requests' tokens as the harness recorded them, "
                "in OpenTelemetry GenAI terms (otel: input counting the cache), cost (null and "
                "unpriced where no price is known), per model. Off by default: the document "
                "stays the reference CLI's.",
            ),
            value(
                "--prices",
                "FILE",
                "With --usage: a TOML or JSON price file that adds models or overrides the "
                "catalog.",
                requires="--usage",
                complete="file",
            ),
            flag("--no-cost", help="With --usage: tokens only, no prices.", requires="--usage"),
            PATHS_FROM,
            TO_DIR,
            JOBS,
        ),
        description="Several transcripts (or --paths-from) write one stats object per line. "
        "A transcript that fails gets its error line on stderr (naming it), the others are "
        "still written, and the exit status is 1.",
    ),
    Command(
        ("detect",),
        "Print the harness that wrote a transcript and how sure detection is.",
        run="agentminutes.cli.detect:detect_command",
        arguments=(TRANSCRIPT,),
        description="Prints HARNESS<TAB>certain or HARNESS<TAB>possible.",
    ),
    Command(
        ("follow",),
        "Follow transcripts as they are written: events within milliseconds of each line.",
        run="agentminutes.view.live:follow_command",
        arguments=(
            Argument(
                "targets",
                "TARGET",
                "Transcript files (they may not exist yet) or folders of transcripts; "
                "default: the --harness's transcript folders, or every harness's that exist "
                "here (as sessions and usage scan them).",
                many=True,
                required=False,
            ),
        ),
        options=(
            HARNESS,
            choice(
                "--format",
                offered("follow"),
                None,
                "Output format: follow writes jsonl (on a terminal, without --format, --to or "
                "--state: the events laid out to read, as view shows them).",
                dest="fmt",
                hint="follow writes one event per line as it arrives; convert writes the "
                "whole session as json",
                hidden=True,
            ),
            value(
                "--to",
                "SINK",
                "Where events go: - (stdout), file:PATH (append), tcp://HOST:PORT or unix:PATH "
                "(a collector; ?buffer=BYTES sets the buffer, default 4 MiB), or "
                "otlp+http://HOST:PORT[/PATH] (OpenTelemetry GenAI spans to an OTLP/HTTP "
                "collector, default path /v1/traces; needs the [otel] extra).",
                "-",
            ),
            value(
                "--state",
                "FILE",
                "Save progress in FILE and resume from it: each event written once.",
                complete="file",
            ),
            flag("--from-end", help="Skip what the transcripts already hold (without --state)."),
            value(
                "--idle-exit",
                "SECONDS",
                "Stop, writing held events, after SECONDS without new lines.",
                convert=_seconds,
            ),
            value(
                "--cwd",
                "DIR",
                "Only sessions whose recorded working directory is DIR (as in sessions and "
                "usage; ~ and relative paths are resolved).",
                complete="dir",
            ),
            value("--session-id", "ID", "Only this session (and its subagents)."),
            flag("--poll", help="Poll file sizes instead of file-change notification."),
            flag(
                "--full",
                help="On a terminal: show long tool results and thinking whole (default: cut).",
            ),
            HARNESS_VERSION,
            PERMISSIVE,
            KEEP_RAW,
            MAX_PAYLOAD,
            PROMOTE,
            TEXT_FORM,
            *_redaction(
                "on by default for tcp://, unix: and otlp+http:// (events leave the machine)"
            ),
            flag(
                "--otel-content",
                help="With --to otlp+http: also write prompts, responses, tool arguments and "
                "results into the spans (left out by default, as the GenAI conventions ask).",
            ),
        ),
        description="One transcript prints what convert --format jsonl prints for it, event by "
        "event. Several (or a folder) print one envelope per line: "
        '{"transcript": PATH, "harness": NAME, "event": EVENT}. SIGINT, SIGTERM and '
        "--idle-exit stop it (exit 0) after writing held events; with --state, SIGTERM keeps "
        "them in the state for the next run instead.",
    ),
    Command(
        ("run",),
        "Run a headless agent command and capture the sessions it writes, from their first line.",
        run="agentminutes.capture:run_main",
        arguments=(
            Argument(
                "command",
                "COMMAND",
                "The agent's command line, after -- (e.g. -- claude -p 'fix the test').",
                many=True,
                complete="",
            ),
        ),
        options=(
            value(
                "--harness",
                "NAME",
                "The harness the command runs; default: every harness's transcript folders.",
                "auto",
                convert=_harness_or_auto,
                complete="harness",
            ),
            value(
                "--to",
                "SINK",
                "Where events go, as for follow: - (stdout; the command's own output then goes "
                "to stderr), file:PATH, tcp://HOST:PORT or unix:PATH.",
                "-",
            ),
            value(
                "--archive",
                "DIR",
                "Archive each session, with its subagents and sidecars, into DIR as it ends.",
                complete="dir",
            ),
        ),
        description="The sessions the command creates (transcripts that appear while it runs, or "
        "whose session id it prints) are followed from their first line and written as "
        "follow writes envelopes; when it exits they are ended, read to their end and "
        "archived. Exits with the command's exit status.",
    ),
    Command(
        ("sessions",),
        "List session transcripts in the harnesses' own folders, filtered by identity or time.",
        run="agentminutes.view.command:run_sessions",
        options=(
            value(
                "--harness",
                "NAME",
                'One harness; default (or "auto"): the default folders of every harness.',
                "",
                convert=_harness_or_every,
                complete="harness",
            ),
            value(
                "--root",
                "DIR",
                "Search DIR instead of the default folders; for a data-export harness, an "
                "export file or a folder of them.",
                requires="--harness",
                complete="dir",
            ),
            value(
                "--cwd",
                "DIR",
                "Keep sessions whose recorded working directory is DIR (not a folder below "
                "it; ~ and relative paths are resolved).",
                "",
                complete="dir",
            ),
            value(
                "--session-id",
                "ID",
                "Keep the session (or subagent) with this id; with --harness, looked up directly.",
                "",
            ),
            value(
                "--since",
                "T",
                "Keep sessions active at or after T (RFC 3339, or YYYY-MM-DD: local time).",
                "",
                convert=_when,
            ),
            value(
                "--until",
                "T",
                "Keep sessions active at or before T (RFC 3339, or YYYY-MM-DD: that whole day).",
                "",
                convert=_when,
            ),
            choice(
                "--format",
                ("paths", "json", "jsonl", "table"),
                None,
                "paths (transcript paths, subagents included), json (one array), jsonl, or "
                "table (started, harness, project, title, model, messages, tool calls, tokens, "
                "cost, path; each shown session is read); default: table on a terminal, paths "
                "anywhere else.",
                dest="fmt",
            ),
            flag(
                "--all-subagents",
                help="Claude Code: also subagents nested below subagents/ (workflow agents).",
            ),
            value(
                "--limit",
                "N",
                "The table: show the first N sessions (default 30; 0: all).",
                convert=_whole_number,
            ),
            choice(
                "--sort",
                ("activity", "started", "size", "tokens", "cost", "tools", "messages"),
                None,
                "The table's order, largest or newest first (default: activity, the last "
                "write); tokens, cost, tools and messages read every session found.",
            ),
            JOBS,
        ),
        description="Per-file errors go to stderr and set exit status 1 without stopping the "
        "scan; a summary of what was matched, filtered, skipped and unreadable follows. "
        "Sessions that record no working directory never match --cwd.",
    ),
    Command(
        ("archive",),
        "Copy sessions with their subagent transcripts and sidecars into a folder, and "
        "normalize them.",
        run="agentminutes.cli.commands:run_archive",
        options=(
            value(
                "--to",
                "DIR",
                "The archive folder (created if missing).",
                required=True,
                complete="dir",
            ),
            value(
                "--harness",
                "NAME",
                "The sessions' harness.",
                required=True,
                convert=_harness_name,
                complete="harness",
            ),
            value("--session-id", "ID", "Archive this session (and its subagents)."),
            value(
                "--cwd",
                "DIR",
                "Archive every session whose working directory is DIR.",
                complete="dir",
            ),
            value(
                "--since",
                "T",
                "With --cwd: only sessions active since T (RFC 3339 or YYYY-MM-DD).",
                requires="--cwd",
                convert=_when,
            ),
            value(
                "--root",
                "DIR",
                "Look for sessions in DIR instead of the harness's folders.",
                complete="dir",
            ),
            PERMISSIVE,
            *_redaction("in the normalized sessions, off by default (the copies are the sources)"),
            JOBS,
        ),
        description="Files keep their path relative to the harness's folder; each transcript "
        "gets its normalized session beside it (FILE.agentminutes.json) and MANIFEST.json "
        "records every file's size, sha256, source and copy time. Run it again to add what "
        "changed: transcripts that grew are extended with their new complete lines; a source "
        "changed any other way is reported (exit 1) and its copy kept. Sources are only read; "
        "a session still being written is copied up to its last complete line.",
    ),
    Command(
        ("export",),
        "Export transcripts to a Hive-partitioned Parquet dataset DuckDB reads with no code, "
        "or to ATIF trajectories (--format atif).",
        run="agentminutes.export.command:export_command",
        arguments=(
            Argument(
                "targets",
                "TARGET",
                "Transcripts, data exports and folders of them (walked); default: the sessions "
                "in the harnesses' own folders, as sessions finds them.",
                many=True,
                required=False,
            ),
        ),
        options=(
            value(
                "--to",
                "DIR",
                "The dataset folder (created if missing).",
                required=True,
                complete="dir",
            ),
            choice(
                "--format",
                ("parquet", *offered("export")),
                "parquet",
                "parquet (the dataset's tables) or atif (an ATIF v1.8 trajectory document per "
                "session, in DIR/atif/harness=<h>/date=<yyyy-mm-dd>/<session-id>.json, its "
                "failures in DIR/atif/failures.jsonl; needs no pyarrow).",
                dest="fmt",
            ),
            HARNESS,
            value(
                "--root",
                "DIR",
                "Without TARGETs: search DIR (needs --harness).",
                complete="dir",
            ),
            value(
                "--cwd",
                "DIR",
                "Without TARGETs: sessions whose working directory is DIR.",
                complete="dir",
            ),
            value("--session-id", "ID", "Without TARGETs: this session (and its subagents)."),
            value("--since", "T", "Without TARGETs: sessions active at or after T.", convert=_when),
            value(
                "--until", "T", "Without TARGETs: sessions active at or before T.", convert=_when
            ),
            flag(
                "--all-subagents",
                help="Without TARGETs, Claude Code: also the workflow agents nested below "
                "subagents/.",
            ),
            value(
                ("-j", "--jobs"),
                "N",
                "Worker processes (default: the CPUs available).",
                convert=_whole_number,
            ),
            HARNESS_VERSION,
            PERMISSIVE,
            MAX_PAYLOAD,
            PROMOTE,
            TEXT_FORM,
            *_redaction("on by default (a dataset travels)"),
        ),
        description="Tables events, sessions, tool_calls, requests and failures, in "
        "DIR/<table>/harness=<h>/date=<yyyy-mm-dd>/part-*.parquet. Run it again to add what is "
        "new or changed: each changed transcript's rows are replaced whole. A transcript that "
        "cannot be exported gets a failures row and an error line; the run goes on and exits 1. "
        "Parquet needs pyarrow: pip install 'agentminutes-py[parquet]'.",
    ),
    Command(
        ("usage",),
        "Token usage and cost across every harness, by day, week, month, session, project or model.",
        run="agentminutes.usage.command:run_usage",
        arguments=(
            Argument(
                "transcripts",
                "TRANSCRIPT",
                "Transcripts, databases, exports or folders of them (walked as export walks "
                "them), to report on instead of the harnesses' folders.",
                many=True,
                required=False,
            ),
        ),
        options=(
            value(
                "--harness",
                "NAME",
                'One harness; default (or "auto"): every harness\'s default folders.',
                "",
                convert=_harness_or_every,
                complete="harness",
            ),
            value(
                "--root",
                "DIR",
                "Read DIR instead of the default folders.",
                "",
                requires="--harness",
                complete="dir",
            ),
            value(
                "--cwd",
                "DIR",
                "Sessions whose recorded working directory is DIR (not a folder below it; "
                "~ and relative paths are resolved).",
                "",
                complete="dir",
            ),
            value("--session-id", "ID", "The session (with its subagents) with this id.", ""),
            value(
                "--since",
                "T",
                "Requests at or after T (RFC 3339, or YYYY-MM-DD: local).",
                "",
                convert=_when,
            ),
            value(
                "--until",
                "T",
                "Requests at or before T (RFC 3339, or YYYY-MM-DD: that whole day).",
                "",
                convert=_when,
            ),
            value(
                "--by",
                "KEYS",
                "Group by day, week, month, session, project, model, harness, transcript or "
                "block (5-hour billing windows: burn rate and projection for the active one); "
                "combine with commas (day,model).",
                "day",
            ),
            choice(
                "--format", ("table", "json", "csv"), "table", "table, json or csv.", dest="fmt"
            ),
            value(
                "--prices",
                "FILE",
                "A TOML or JSON price file that adds models or overrides the catalog.",
                "",
                complete="file",
            ),
            flag("--no-cost", help="Tokens only: do not price the requests."),
            value(
                "--tz",
                "ZONE",
                "Time zone of day, week and month (default: local).",
                "",
                convert=_time_zone,
            ),
            value(
                "--cache-dir",
                "DIR",
                "Folder of the summary cache (default: $XDG_CACHE_HOME/agentminutes).",
                "",
                complete="dir",
            ),
            flag("--no-cache", help="Read every transcript; neither use nor write the cache."),
            flag(
                "--full",
                help="Read every record as convert does, reporting each one no rule classified "
                "(a usage read passes over records no request depends on); implies --no-cache.",
            ),
            flag("--follow", help="Keep the report current as agents write."),
            value(
                "--idle-exit",
                "SECONDS",
                "With --follow: stop after SECONDS without a new line.",
                convert=_seconds,
                requires="--follow",
            ),
            flag("--poll", help="With --follow: stat files instead of file notifications."),
            value(
                ("-j", "--jobs"),
                "N",
                "Worker processes reading the transcripts not in the cache (default: the CPUs "
                "available; used when there are enough bytes to read).",
                convert=_workers,
            ),
        ),
        description="Each API request is counted once: streamed messages by their final "
        "usage, subagent transcripts included, copies in resumed or forked sessions and "
        "Codex's re-emitted counters not again. Costs come from the genai-prices catalog "
        "(pip install 'agentminutes-py[cost]') and --prices; a model neither prices is shown as "
        "unpriced, never as $0. A second run over unchanged transcripts reads only their sizes "
        "and times (the summary cache).",
    ),
    Command(
        ("view",),
        "Show a session to read: turns, tool calls with results, subagents, tokens and cost "
        "(terminal, text, Markdown or one HTML page).",
        run="agentminutes.view.command:run_view",
        arguments=(
            Argument(
                "session",
                "SESSION",
                "A transcript file, or a session id (looked up as sessions --session-id does).",
            ),
        ),
        options=(
            choice(
                "--format",
                ("terminal", "text", "markdown"),
                None,
                "terminal (rich, through a pager), text or markdown; default: terminal on a "
                "terminal, text anywhere else.",
                dest="fmt",
            ),
            value(
                "--html",
                "FILE",
                "Write one self-contained HTML page (no network: inline CSS, JS and charts); "
                "redacted unless --no-redact.",
                complete="file",
            ),
            OUTPUT,
            flag("--full", help="Show long tool results and thinking whole (default: cut)."),
            flag("--no-pager", help="Print to the terminal without a pager."),
            flag(
                "--follow",
                help="Keep showing the session as it is written (from its start; ^C stops).",
            ),
            flag("--no-subagents", help="Leave out subagent transcripts."),
            value(
                "--harness",
                "NAME",
                'The harness that wrote the transcript, or "auto".',
                "auto",
                complete="harness",
            ),
            CONVERSATION,
            *_redaction("on by default for --html (pages get shared), off otherwise"),
        ),
        description="Long tool results and thinking are cut to a few lines unless --full; "
        "errors are marked; subagents are nested under the tool call that started them. "
        "Per turn: the models, tokens, cost (genai-prices, or the harness's own figure) and time.",
    ),
    Command(
        ("compare",),
        "Set runs side by side: tool mix, errors, tokens and cost by model, wall time, turns, "
        "result bytes, and the first turn whose tool choice differs.",
        run="agentminutes.view.command:run_compare",
        arguments=(
            Argument(
                "runs",
                "RUN",
                "Transcripts (or session ids) to compare; each is one run.",
                many=True,
                required=False,
            ),
        ),
        options=(
            choice(
                "--format",
                ("table", "json"),
                None,
                "table or json (each run's stats and stats --usage documents whole, and the "
                "divergence); default: table on a terminal, json anywhere else.",
                dest="fmt",
            ),
            value(
                "--html",
                "FILE",
                "Write the comparison as one self-contained HTML page with charts.",
                complete="file",
            ),
            OUTPUT,
            value(
                "--harness",
                "NAME",
                'The transcripts\' harness, or "auto"; with --cwd/--since: only this harness.',
                "auto",
                complete="harness",
            ),
            value(
                "--cwd",
                "DIR",
                "Also compare the sessions whose working directory is DIR, one run per harness.",
                "",
                complete="dir",
            ),
            value("--since", "T", "Also compare sessions active since T, one run per harness.", ""),
            value("--until", "T", "With --cwd or --since: sessions active until T.", ""),
            value(
                "--root",
                "DIR",
                "Select sessions in DIR instead of the harnesses' folders (needs --harness).",
                complete="dir",
            ),
        ),
        description="Every figure is what stats (and stats --usage) prints for the run; a group "
        "of sessions is summed as stats --include-subagents sums a task.",
    ),
    Command(
        ("statusline",),
        "One line for Claude Code's status bar: model, this session's cost, today's cost, "
        "the active 5-hour block.",
        run="agentminutes.usage.statusline:statusline_command",
        options=(
            value(
                "--cache-dir",
                "DIR",
                "Folder of the summary cache and the kept line (default: "
                "$XDG_CACHE_HOME/agentminutes).",
                complete="dir",
            ),
            flag(
                "--refresh",
                help="Compute the line and keep it, printing nothing (what a stale line starts "
                "in the background).",
            ),
        ),
        description="Reads the JSON Claude Code passes a statusline command on stdin "
        '(settings.json: "statusLine": {"type": "command", "command": "agentminutes '
        "statusline\"}). Today's cost and the block count every harness's transcripts. The "
        "line is kept with the size and time of every transcript it was computed from: "
        "while none changes it is printed without reading anything; when one does, the kept "
        "line is printed and the new one computed in the background for the next prompt.",
    ),
    Command(
        ("drift", "scan"),
        "Compare each transcript's vocabulary with its harness's baseline.",
        run="agentminutes.drift:scan_command",
        arguments=(
            Argument("paths", "TRANSCRIPT", "Transcript files, scanned in order.", many=True),
        ),
        description="For each file: the harness, a strict parse with every line accounted for, "
        "then each new record type, new key, missing key and new discriminator value (content "
        "block types, tool names, subtypes). Exit status: 0 clean, 1 drift, 3 a file could not "
        "be checked (no harness detected, no baseline).",
    ),
)
