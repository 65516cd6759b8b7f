"""agentminutes: coding-agent session transcripts as one normalized, versioned event stream.

The public surface, re-exported here (imported lazily, so ``import agentminutes``
stays cheap):

* parsing: :func:`events` / :func:`parse` (async), :func:`iter_events` / :func:`load` (sync),
  :func:`detect`; multi-conversation sources (data exports, ``turns.db``):
  :func:`sessions` (async) / :func:`iter_sessions` (sync) for every conversation,
  :func:`conversations` to list them;
* live: :func:`follow` (one transcript's events as it is written) and :func:`follow_many`
  (:class:`Envelope` s of several transcripts or folders);
* the schema: :class:`Session`, :class:`Event` and its payload types, :class:`Stats`;
* the pipeline parts: :class:`Batch`, :data:`Stage`, :func:`per_event`, the adapters'
  :class:`~agentminutes.harness.Adapter` protocol and registry (``agentminutes.harness``);
* errors: :class:`ParseError`, :class:`DetectError`, :class:`SourceError`, :class:`UsageError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentminutes._version import __version__

__all__ = (
    "AgentminutesError",
    "Batch",
    "DetectError",
    "Envelope",
    "Event",
    "ParseError",
    "Session",
    "SourceError",
    "Stage",
    "Stats",
    "UsageError",
    "__version__",
    "conversations",
    "detect",
    "events",
    "follow",
    "follow_many",
    "iter_events",
    "iter_sessions",
    "load",
    "parse",
    "per_event",
    "sessions",
)

_LAZY = {
    "AgentminutesError": "agentminutes._errors",
    "DetectError": "agentminutes._errors",
    "ParseError": "agentminutes._errors",
    "SourceError": "agentminutes._errors",
    "UsageError": "agentminutes._errors",
    "Event": "agentminutes.schema",
    "Session": "agentminutes.schema",
    "Stats": "agentminutes.schema",
    "Batch": "agentminutes._pipeline",
    "Stage": "agentminutes._pipeline",
    "per_event": "agentminutes._pipeline",
    "events": "agentminutes._api",
    "follow": "agentminutes._api",
    "follow_many": "agentminutes._api",
    "Envelope": "agentminutes._follow",
    "parse": "agentminutes._api",
    "iter_events": "agentminutes._api",
    "load": "agentminutes._api",
    "sessions": "agentminutes._api",
    "iter_sessions": "agentminutes._api",
    "conversations": "agentminutes._api",
    "detect": "agentminutes._detect",
}

if TYPE_CHECKING:
    from agentminutes._api import (
        conversations,
        events,
        follow,
        follow_many,
        iter_events,
        iter_sessions,
        load,
        parse,
        sessions,
    )
    from agentminutes._detect import detect
    from agentminutes._errors import (
        AgentminutesError,
        DetectError,
        ParseError,
        SourceError,
        UsageError,
    )
    from agentminutes._follow import Envelope
    from agentminutes._pipeline import Batch, Stage, per_event
    from agentminutes.schema import Event, Session, Stats


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentminutes' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
