"""How one harness's usage fields read: :class:`UsageRule`, which each harness declares.

A module of its own so that the harness descriptions, read by every command,
can declare their rule without importing the usage arithmetic of
:mod:`agentminutes.schema.usage` (which re-exports it).

The rules are declared in the harness folders, a layer above this one; the
schema's arithmetic reads them through :class:`RuleView` s over a source the
harness registry installs here when it is imported (:func:`declared_by`):
the dependency points down, from the registry to the schema, and everything
that makes events has imported the registry (every adapter is found there).
Events folded with no harness imported (a saved stream decoded by a library
user) load the registry by name on the first lookup.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, Protocol

__all__ = ("Declared", "RuleView", "UsageRule", "declared_by")


class UsageRule(NamedTuple):
    """How one harness's :class:`~agentminutes.schema.TokenUsage` fields are to be read.

    The rule describes the fields as the harness's adapter fills them, which is
    not always the native format: Gemini CLI and Qwen Code report a
    ``promptTokenCount`` that includes the cached tokens, and their adapters
    already subtract them (so ``input_tokens`` is fresh input there).
    """

    #: ``input_tokens`` already counts the cache reads and writes (OpenAI-shaped usage).
    input_includes_cache: bool
    #: The key of ``usage.extra`` holding the reasoning part of ``output_tokens``
    #: (``""``: the harness does not report it apart).
    reasoning_key: str = ""
    #: The key of ``usage.extra`` holding Anthropic's cache-write split
    #: (``{"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"}``).
    cache_split_key: str = ""
    #: The key of ``usage.extra`` holding the cost the harness computed itself,
    #: an object whose ``total`` is in USD (pi), or a number.
    cost_key: str = ""
    #: How the harness's requests are told apart across transcripts (a resumed or
    #: forked session copies earlier messages): ``message`` the API message id alone
    #: (globally unique ids), ``message+time`` the id with the timestamp (short ids),
    #: ``""`` none (each request counts).
    key_rule: str = "message+time"


class Declared(Protocol):
    """What the schema reads of a harness description: its name and its two rules."""

    @property
    def name(self) -> str: ...

    @property
    def usage(self) -> UsageRule | None: ...

    @property
    def prompt(self) -> str: ...


_lookup: Callable[[str], Declared | None] | None = None
_every: Callable[[], Iterable[Declared]] | None = None


def declared_by(
    lookup: Callable[[str], Declared | None], every: Callable[[], Iterable[Declared]]
) -> None:
    """Read the harnesses' rules from *lookup* (one by name) and *every* (all of them).

    The harness registry calls it when it is imported
    (:mod:`agentminutes.harness.registry`).
    """
    global _lookup, _every
    _lookup, _every = lookup, every


def _source() -> tuple[Callable[[str], Declared | None], Callable[[], Iterable[Declared]]]:
    if _lookup is None or _every is None:
        # A library user may fold events they decoded themselves (a saved JSONL) with
        # no harness imported yet: the registry installs the rules when it is imported.
        # Named here, not imported by this module, so the schema layer loads without it.
        importlib.import_module("agentminutes.harness.registry")
    if _lookup is None or _every is None:
        raise RuntimeError("the harness registry did not declare the harnesses' rules")
    return _lookup, _every


class RuleView(Mapping[str, Any]):
    """A read-only mapping, by harness name, of one rule field of the harness descriptions.

    Harnesses whose field is empty are not in the view.
    """

    def __init__(self, field: str) -> None:
        self._field = field

    def _table(self) -> dict[str, Any]:
        every = _source()[1]
        return {h.name: getattr(h, self._field) for h in every() if getattr(h, self._field)}

    def __getitem__(self, harness: str) -> Any:
        found = _source()[0](harness)
        value = getattr(found, self._field) if found is not None else None
        if not value:
            raise KeyError(harness)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._table()!r})"
