"""agentminutes: coding-agent session transcripts as one normalized, versioned event stream.

The public surface, re-exported here (imported lazily, so ``import agentminutes``
stays cheap):

* parsing: :func:`events` / :func:`parse` (async), :func:`iter_events` / :func:`load` (sync),
  :func:`detect`; multi-conversation sources (data exports, ``turns.db``):
  :func:`sessions` (async) / :func:`iter_sessions` (sync) for every conversation,
  :func:`conversations` to list them;
* live: :func:`follow` (one transcript's events as it is written) and :func:`follow_many`
  (:class:`Envelope` s of several transcripts or folders);
* discovery: :func:`scan` (the sessions in the harnesses' own folders, as :class:`SessionRef` s;
  ``async for`` or ``for``), :func:`locate` / :func:`locate_sync` (one session by id);
  task-scope summaries: :func:`task_stats` / :func:`task_stats_sync`;
* capture: :func:`archive` / :func:`archive_sync` (copy sessions with their subagents and
  sidecars, and their normalized JSON, into a folder);
* the schema: :class:`Session`, :class:`Event` and its payload types, :class:`Stats`;
* the pipeline parts: :class:`Batch`, :data:`Stage`, :func:`per_event`, the adapters'
  :class:`~agentminutes.harness.Adapter` protocol and registry (``agentminutes.harness``);
* errors: :class:`ParseError`, :class:`DetectError`, :class:`SourceError` (and its
  :class:`ScanError`), :class:`UsageError`.
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
    "ScanError",
    "Session",
    "SessionRef",
    "SourceError",
    "Stage",
    "Stats",
    "TaskStats",
    "UsageError",
    "__version__",
    "archive",
    "archive_sync",
    "conversations",
    "detect",
    "events",
    "follow",
    "follow_many",
    "iter_events",
    "iter_sessions",
    "load",
    "locate",
    "locate_sync",
    "parse",
    "per_event",
    "scan",
    "sessions",
    "task_stats",
    "task_stats_sync",
)

_LAZY = {
    "AgentminutesError": "agentminutes._errors",
    "DetectError": "agentminutes._errors",
    "ParseError": "agentminutes._errors",
    "ScanError": "agentminutes._errors",
    "SourceError": "agentminutes._errors",
    "UsageError": "agentminutes._errors",
    "Event": "agentminutes.schema",
    "Session": "agentminutes.schema",
    "Stats": "agentminutes.schema",
    "TaskStats": "agentminutes.schema",
    "SessionRef": "agentminutes._layouts",
    "scan": "agentminutes._sessions",
    "locate": "agentminutes._sessions",
    "locate_sync": "agentminutes._sessions",
    "task_stats": "agentminutes._task",
    "task_stats_sync": "agentminutes._task",
    "archive": "agentminutes._archive",
    "archive_sync": "agentminutes._archive",
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
    from agentminutes._archive import archive, archive_sync
    from agentminutes._detect import detect
    from agentminutes._errors import (
        AgentminutesError,
        DetectError,
        ParseError,
        ScanError,
        SourceError,
        UsageError,
    )
    from agentminutes._follow import Envelope
    from agentminutes._layouts import SessionRef
    from agentminutes._pipeline import Batch, Stage, per_event
    from agentminutes._sessions import locate, locate_sync, scan
    from agentminutes._task import task_stats, task_stats_sync
    from agentminutes.schema import Event, Session, Stats, TaskStats


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
