"""What the project knows about one harness, in one object: :class:`Harness`.

Each harness folder (``agentminutes/harness/<name>/``) declares one
``DESCRIPTION = Harness(...)`` in its ``__init__``, and the registry
(:mod:`agentminutes.harness.registry`) lists the folder. Every field is
required, so a description that leaves one out fails at import (and the
registry test names it); ``None`` or ``()`` says "this harness has none".

Code is named by a ``"module:attr"`` string (the adapter, the layout in
``harness/<name>/layout.py``, the drift vocabulary) and imported only when the
command that needs it asks (:func:`resolve`): reading every description
imports no parser and no layout. (Naming the layout classes directly would
import all of them at every start, ``convert``'s too: about 6 ms more,
measured with the 15 layout modules of the time and their bytecode cached.)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.schema.usage_rule import UsageRule

__all__ = (
    "EXPORT_ONLY",
    "Harness",
    "RootsOf",
    "env_path",
    "home",
    "path",
    "resolve",
)

#: The folders a harness writes under, from the environment (called each time: env can change).
RootsOf = Callable[[Mapping[str, str]], "list[Path]"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Harness:
    """One harness, declared once: how it is read, where it writes, and its rules.

    Every field is required (write ``None`` or ``()`` for "none").
    """

    #: The harness name in events and on the command line (``claude-code``).
    name: str
    #: How people write its name (``Claude Code``).
    display_name: str
    #: The model provider, as OpenTelemetry's ``gen_ai.provider.name`` says it
    #: (``anthropic``, ``openai``, ``gcp.gemini``), for a harness that talks to one
    #: provider only; ``""`` when its users choose.
    provider: str
    #: ``"lines"``: a line transcript read by an :class:`~agentminutes.harness.Adapter`;
    #: ``"documents"``: whole documents (exports, databases, task folders) read by a
    #: :class:`~agentminutes.harness.DocumentAdapter`.
    reads: Literal["lines", "documents"]
    #: ``"module:Class"`` of its adapter.
    adapter: str
    #: The folders it writes sessions under by default, from the environment; ``None``
    #: for a source with no home folder (a data export): a root must be given.
    roots: RootsOf | None
    #: The environment variables that move those folders (``CLAUDE_CONFIG_DIR``).
    env: tuple[str, ...]
    #: ``fnmatch`` patterns of transcript file names (not paths) under its roots.
    patterns: tuple[str, ...]
    #: Folders of finished sessions: searched by discovery, never watched by ``follow``.
    archives: RootsOf | None
    #: ``"module:Class"`` of its :class:`~agentminutes.harness.layout.Locator` (how
    #: sessions, subagents and sidecars lie under a root: ``harness/<name>/layout.py``,
    #: or :class:`~agentminutes.harness.files_layout.FilesLocator`); ``None``: the
    #: generic whole-document locator (every file under an explicit root).
    layout: str | None
    #: Whether ``follow`` reads it through its adapter's tail (a database or a
    #: folder of documents rewritten whole: the adapter is a
    #: :class:`~agentminutes.harness.base.Tailing`); line transcripts are followed
    #: line by line and say ``False``.
    tail: bool
    #: ``"module:NAME"`` of its drift :class:`~agentminutes.drift.Vocabulary`, or ``None``.
    vocabulary: str | None
    #: ``"package:file"`` of its drift baseline (JSON), or ``None`` (then no vocabulary).
    baseline: str | None
    #: How its usage fields read (whether input counts the cache …), or ``None`` when
    #: its adapter records no usage whose meaning is known.
    usage: UsageRule | None
    #: How its ``total_prompt_tokens`` is computed: ``"all"`` (input plus cache reads and
    #: writes), ``"input"`` (input alone: it counts the cache), ``""`` (none reported).
    prompt: Literal["all", "input", ""]

    def adapter_class(self) -> Any:
        """Its adapter class (the module imported on first use)."""
        return resolve(self.adapter)


class _Unhomed(TypedDict):
    """The fields a source read only from a path it is given declares alike."""

    roots: RootsOf | None
    env: tuple[str, ...]
    patterns: tuple[str, ...]
    archives: RootsOf | None
    layout: str | None
    tail: bool
    vocabulary: str | None
    baseline: str | None
    usage: UsageRule | None
    prompt: Literal["all", "input", ""]


#: A data export's declarations beside its name, provider and adapter
#: (``Harness(..., **EXPORT_ONLY)``): no home folder (a root is given), the generic
#: whole-document locator, no follow, no drift vocabulary, no usage recorded. The
#: fields stay required: this names the values once for the harnesses they all fit.
EXPORT_ONLY: Final[_Unhomed] = {
    "roots": None,
    "env": (),
    "patterns": (),
    "archives": None,
    "layout": None,
    "tail": False,
    "vocabulary": None,
    "baseline": None,
    "usage": None,
    "prompt": "",
}


_resolved: dict[str, Any] = {}


def resolve(ref: str) -> Any:
    """The object a ``"module:attr"`` reference names, its module imported once."""
    found = _resolved.get(ref)
    if found is None:
        module, _, attr = ref.partition(":")
        found = _resolved[ref] = getattr(importlib.import_module(module), attr)
    return found


# -- helpers for roots ------------------------------------------------------------------------


def path(text: str) -> Path:
    """``Path(text)``; pathlib is imported only once a default root is asked for."""
    # (with urllib.parse and ipaddress): a follow of a named transcript writes its first
    # events without it.
    from pathlib import Path

    return Path(text)


def home(env: Mapping[str, str]) -> Path:
    """The home folder *env* names (``HOME``), or the user's."""
    return path(env.get("HOME") or os.path.expanduser("~"))


def env_path(env: Mapping[str, str], name: str) -> Path | None:
    """The folder environment variable *name* holds (``~`` expanded), or ``None`` when unset."""
    value = env.get(name, "").strip()
    return path(value).expanduser() if value else None
