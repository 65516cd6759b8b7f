"""Output formats in one room: what a session's events become, and the table every command reads.

Each format is one module with the same surface, a ``writer(options)`` whose
:class:`~agentminutes.formats.write.Writer` takes events and gives bytes
(``add``), gives the rest once the session ends (``finish``) and says what the
format could not carry (``loss``, ``None`` for a lossless one):

=============  ====================================  =======================================
name           module                                the session as
=============  ====================================  =======================================
``json``       :mod:`~agentminutes.formats.json`     the whole-session document (the contract's)
``jsonl``      :mod:`~agentminutes.formats.jsonl`    one event per line, streamed
``stats``      :mod:`~agentminutes.formats.stats`    the behavioural summary
``acp``        :mod:`~agentminutes.formats.acp`      ACP ``session/update`` notifications
``otlp-json``  :mod:`~agentminutes.formats.otlp_json`  OpenTelemetry GenAI spans as OTLP/JSON
``atif``       :mod:`~agentminutes.formats.atif`     an ATIF v1.8 trajectory document
=============  ====================================  =======================================

:data:`FORMATS` is the one table: ``convert --format`` and ``--to-dir`` (its file
endings), ``stats``, ``export --format`` and ``follow --format``/``--to`` offer what it
lists for them (:func:`offered`), and :func:`~agentminutes.formats.write.write_feed`
drives any of them over a session. The loss reports share their wording
(:mod:`~agentminutes.formats.losses`). The modules are imported when a format is
used: this table costs nothing at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from agentminutes.formats.write import Writer

__all__ = ("DEFAULT", "FORMATS", "Format", "Options", "format_named", "offered")


class Options(NamedTuple):
    """How a writer writes: *indent* for the JSON documents (0: one line), *content* for spans."""

    indent: int = 2
    content: bool = False


#: The options a writer takes unless told.
DEFAULT: Final = Options()


class Format(NamedTuple):
    """One output format: its name, its module, and how commands write it."""

    name: str
    #: Its module below :mod:`agentminutes.formats`, which defines ``writer(options)``.
    module: str
    #: The ending of the file ``--to-dir`` writes a transcript's output to.
    extension: str
    #: Written as it comes (not atomically), and flushed batch by batch to stdout.
    streams: bool
    #: The output holds the skipped records' counts itself, so no stderr line repeats them.
    counts_skips: bool
    #: The commands that offer it.
    commands: frozenset[str]

    def writer(self, options: Options = DEFAULT) -> Writer:
        """A new writer of this format for one session."""
        module = importlib.import_module(f"{__name__}.{self.module}")
        return module.writer(options)  # type: ignore[no-any-return]


_CONVERT, _STATS, _EXPORT, _FOLLOW = "convert", "stats", "export", "follow"

#: Every output format, by name: one row each.
FORMATS: Final[dict[str, Format]] = {
    f.name: f
    for f in (
        #      name         module       --to-dir ending  streams  counts_skips  commands
        Format("json",      "json",      ".json",         False,   True,         frozenset({_CONVERT})),
        Format("jsonl",     "jsonl",     ".jsonl",        True,    False,        frozenset({_CONVERT, _FOLLOW})),
        Format("acp",       "acp",       ".acp.jsonl",    True,    False,        frozenset({_CONVERT})),
        Format("otlp-json", "otlp_json", ".otlp.jsonl",   True,    False,        frozenset({_CONVERT})),
        Format("atif",      "atif",      ".atif.json",    False,   False,        frozenset({_CONVERT, _EXPORT})),
        Format("stats",     "stats",     ".stats.json",   False,   True,         frozenset({_STATS})),
    )
}  # fmt: skip


def offered(command: str) -> tuple[str, ...]:
    """The names of the formats *command* offers, in the table's order."""
    return tuple(name for name, f in FORMATS.items() if command in f.commands)


def format_named(name: str, command: str) -> Format:
    """The format *name* as *command* offers it.

    Raises:
        UsageError: *command* offers no format of that name.
    """
    found = FORMATS.get(name)
    if found is None or command not in found.commands:
        from agentminutes.errors import UsageError

        raise UsageError(f'unknown format "{name}" (want {", ".join(offered(command))})')
    return found
